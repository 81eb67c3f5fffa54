"""The mcp-testbench pytest plugin (entry point `pytest11: mcp_testbench`).

Registered for every pytest run in an environment where mcp-testbench is installed, so it
must stay cheap and inert until one of its options is given. The options
(`--mcp-client`, `--mcp-driver`, ...) and the collection of the conformance suite arrive
with the harness; until then the plugin registers nothing.
"""

from __future__ import annotations

__all__: list[str] = []
