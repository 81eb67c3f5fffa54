"""What `ServedRecording` finds beyond the plugin's tests (tests/harness/test_plugin_recording.py):
a stdio mock the client started twice, one it never started, one it left running, and an
HTTP request the mock refused for a transport rule."""

from __future__ import annotations

import select
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _machine import within
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import harness._served_recording as served_recording
from harness._served_recording import ReplayFindings, ServedRecording

RECORDING = Path(__file__).resolve().parent / "recordings" / "calculator.json"
BOUND = within(30.0)
INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    b'"2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}\n'
)


def _served(tmp_path: Path, transport: str) -> ServedRecording:
    return ServedRecording(RECORDING, transport, transcript_path=tmp_path / "t.jsonl").start()


async def _session(served: ServedRecording, name: str, arguments: dict[str, Any]) -> None:
    server = StdioServerParameters(command=served.command[0], args=served.command[1:])
    with anyio.fail_after(BOUND):
        async with Client(server, mode="legacy") as client:
            await client.list_tools()
            await client.call_tool(name, arguments)


def test_a_step_used_by_one_of_the_stdio_processes_is_used(tmp_path: Path) -> None:
    # A client that starts the server again: each process is a fresh run of the script,
    # and each left a step unused that the other used.
    served = _served(tmp_path, "stdio")
    anyio.run(_session, served, "add", {"a": 2, "b": 3})
    anyio.run(_session, served, "negate", {"n": 7})
    findings = served.finish()
    assert findings == ReplayFindings()
    entries = served.entries()
    assert [e["kind"] for e in entries if e["kind"] in ("start", "exit")] == [
        "start",
        "exit",
        "start",
        "exit",
    ]
    assert [e["steps"] for e in entries if e["kind"] == "unconsumed"] == [
        ["step 2 (expect tools/call)"],
        ["step 1 (expect tools/call)"],
    ]


def test_a_stdio_mock_never_started_used_no_step(tmp_path: Path) -> None:
    findings = _served(tmp_path, "stdio").finish()
    assert [line.split(":")[0] for line in findings.unused] == [
        "step 0 (expect tools/list)",
        "step 1 (expect tools/call)",
        "step 2 (expect tools/call)",
    ]
    assert findings.unrecorded == ()
    assert findings.trouble == ()


def test_a_stdio_mock_left_running_is_stopped_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(served_recording, "END_BOUND", 1.0)
    served = _served(tmp_path, "stdio")
    # A client that starts the server, initializes, and never closes its stdin.
    process = subprocess.Popen(
        served.command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        readable, _, _ = select.select([process.stdout], [], [], BOUND)
        assert readable, "the stdio mock did not answer initialize"
        assert b'"protocolVersion":"2025-11-25"' in process.stdout.readline()
        findings = served.finish()
        process.wait(BOUND)
        assert len(findings.trouble) == 1
        assert (
            f"the client left the stdio mock running (pid {process.pid}) 1 s after"
            in (findings.trouble[0])
        )
        # The finish stopped it: the mock recorded the signal.
        assert [e.get("name") for e in served.entries() if e["kind"] == "signal"] == ["SIGTERM"]
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(BOUND)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


def test_an_http_request_refused_for_a_transport_rule_is_unrecorded(tmp_path: Path) -> None:
    served = _served(tmp_path, "http")
    try:
        answer = httpx.post(
            served.url.replace("/mcp", "/elsewhere"),
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            timeout=BOUND,
        )
    finally:
        findings = served.finish()
    assert answer.status_code == 404
    assert findings.unrecorded == (
        "an HTTP request the mock refused with 404 (wrong-path): " + _reason(served),
    )


def _reason(served: ServedRecording) -> str:
    (refusal,) = [e for e in served.entries() if e["kind"] == "refusal"]
    return str(refusal["reason"])
