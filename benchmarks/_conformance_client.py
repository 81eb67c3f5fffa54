"""A client for the official conformance runner: the Python SDK through its adapter.

    conformance client --command "python benchmarks/_conformance_client.py" --suite all

The runner appends the server's URL and names the scenario in MCP_CONFORMANCE_SCENARIO.
Whatever the scenario, this connects (Streamable HTTP), lists the tools, calls each with
no arguments, lists resources and prompts when offered, and closes: the SDK's own
behaviour, with the same canned answers to server requests as our suite's SDK runs.
Failures are the runner's to judge; this only needs to be the same client as ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.clients import ClientError, ConnectOptions, Handlers, HttpTarget  # noqa: E402
from harness.clients._sdk_mcp import McpSdkClient  # noqa: E402

HANDLERS = Handlers(
    {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "bench"},
    {"action": "accept", "content": {}},
    ({"uri": "file:///tmp", "name": "tmp"},),
)


async def run(url: str) -> int:
    client = McpSdkClient()
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    options = ConnectOptions(protocol_version=version, handlers=HANDLERS, timeout=10.0)
    try:
        await asyncio.wait_for(client.connect(HttpTarget(url), options), 20)
        tools = await asyncio.wait_for(client.list_tools(), 20)
        for tool in tools.get("tools", []):
            with contextlib.suppress(ClientError, TimeoutError):
                await asyncio.wait_for(client.call_tool(tool["name"], {}), 20)
    except (ClientError, TimeoutError) as exc:
        print(f"conformance client: {exc}", file=sys.stderr)
        return 1
    finally:
        with contextlib.suppress(ClientError, TimeoutError):
            await asyncio.wait_for(client.close(), 10)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(run(sys.argv[-1])))
