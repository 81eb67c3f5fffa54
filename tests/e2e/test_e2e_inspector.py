"""End to end: the MCP Inspector CLI and the Python SDK client against one `mcp-testbench serve`.

A developer starts `mcp-testbench serve fixtures/tools/list-and-call.json --http ...` with
no `--revision` and points real clients at it, again and again: the Inspector CLI (pinned
in tests/e2e-node; TypeScript SDK, initialize handshake, a new session per call) and the
official Python SDK (`mcp`, mode="auto": `server/discover` first, so 2026-07-28). Each one
lists the tools and calls `add`, twice in a row, against the same server process: every
session starts the script afresh and gets the revision its client speaks.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from _machine import within
from _served import INSPECTOR, NODE, NODE_TOOLS, node_tools_missing, serving

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "tools" / "list-and-call.json"
# Seconds for one client run (under 2 s on an idle machine): a bound, not an estimate.
CLIENT_BOUND = within(60)
# One Inspector run (tools/list, then tools/call): two sessions.
HANDSHAKE_PAIR = ("2025-11-25", "2025-11-25")


def _inspector(url: str, home: Path, *method: str) -> Any:
    """One Inspector CLI call (`--cli URL --method ...`): its JSON output."""
    done = subprocess.run(
        [str(NODE), str(INSPECTOR), "--cli", url, *method],
        cwd=NODE_TOOLS,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLIENT_BOUND,
        # Its catalog goes to the test's folder, not the user's home.
        env={**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json")},
        check=False,
    )
    assert done.returncode == 0, (
        f"inspector {' '.join(method)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    )
    return json.loads(done.stdout)


def _inspector_run(url: str, home: Path) -> None:
    listed = _inspector(url, home, "--method", "tools/list")
    assert "add" in [tool["name"] for tool in listed["tools"]], listed
    called = _inspector(
        url, home, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=1", "b=2"
    )
    assert called.get("isError") is not True, called
    assert called["content"] == [{"type": "text", "text": "3"}], called


async def _sdk_run(url: str) -> str:
    from mcp import Client

    with anyio.fail_after(CLIENT_BOUND):
        async with Client(url, mode="auto", read_timeout_seconds=CLIENT_BOUND) as client:
            tools = await client.list_tools()
            assert "add" in [tool.name for tool in tools.tools]
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert not result.is_error, result
            assert [(c.type, getattr(c, "text", None)) for c in result.content] == [("text", "3")]
            return str(client.protocol_version)


def test_inspector_and_python_sdk_twice_against_one_serve(tmp_path: Path) -> None:
    # Missing clients fail, never skip: a skipped e2e test looks like a green build.
    missing = node_tools_missing()
    if missing:
        pytest.fail(missing)
    if importlib.util.find_spec("mcp") is None:
        pytest.fail("mcp is not installed: pip install 'mcp-testbench[mcp]'")
    with serving(FIXTURE) as served:
        _inspector_run(served.url, tmp_path)
        first_sdk = anyio.run(_sdk_run, served.url)
        _inspector_run(served.url, tmp_path)
        second_sdk = anyio.run(_sdk_run, served.url)
    log = "\n".join(served.output)
    assert (first_sdk, second_sdk) == ("2026-07-28", "2026-07-28"), log
    # The Inspector speaks the 2025-11-25 handshake, a new session per call; the SDK's
    # discovery opens a 2026-07-28 session. Each one started the script afresh.
    assert served.sessions() == [*HANDSHAKE_PAIR, "2026-07-28", *HANDSHAKE_PAIR, "2026-07-28"], log
