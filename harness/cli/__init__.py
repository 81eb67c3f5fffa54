"""The `mcp-testbench` command: `run`, `serve`, `validate`, `baseline`, `compare`.

`_main` parses the command line and dispatches; `_run_command` runs the suite through pytest in
a process of its own and leaves the reports; `_baseline_command` writes and updates baselines.
"""

from __future__ import annotations

from harness.cli._main import main

__all__ = ["main"]
