"""ST-5 (2026-07-28 stdio): a server that exits is started again, and one transcript says so.

The mock side: every process of one stdio command (`append_transcript`) adds to the same
transcript, with a start entry each and `seq` and `t` in order. The client side: the
reference client starts the server again for the next request, does not re-issue the
request the exit took with it, never restarts after close(), and close() stops the
restarted process too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from _machine import within

from harness.clients import ClientError, ConnectOptions, ReferenceClient, StdioTarget
from harness.clients.reference._stdio import StdioTransport
from mock_servers import fixtures_root
from mock_servers.engine._transcript import Transcript, read_transcript
from mock_servers.stdio._server import stdio_command

MODERN = "2026-07-28"
WAIT = within(60)  # seconds: bound of every process run and test body
SCRIPT = fixtures_root() / "stdio/restart.json"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _request(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": META},
    }
    return (json.dumps(message) + "\n").encode()


def _kind(entries: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in entries if e["kind"] == kind]


def _client_requests(entries: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [
        e
        for e in _kind(entries, "message")
        if e["direction"] == "client" and e["message"].get("method") == method
    ]


# -- the transcript ----------------------------------------------------------------------------


def test_an_appending_transcript_continues_the_record(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    first = Transcript(script="s", revision=MODERN, transport="stdio", path=path)
    first.record("start", pid=1)
    first.record("exit", code=3, reason="crash")
    first.close()
    with path.open("a", encoding="utf-8") as file:
        file.write('{"seq": 2, "kind": "no')  # that process was killed mid-write
    second = Transcript(script="s", revision=MODERN, transport="stdio", path=path, append=True)
    second.record("start", pid=2)
    second.close()

    entries = read_transcript(path)["entries"]
    assert [(e["seq"], e["kind"]) for e in entries] == [(0, "start"), (1, "exit"), (2, "start")]
    assert [e["t"] for e in entries] == sorted(e["t"] for e in entries)
    assert path.read_text(encoding="utf-8").count('"transcript": 1') == 1  # one header


def test_a_transcript_that_keeps_nothing_in_memory_writes_the_same_file(
    tmp_path: Path,
) -> None:
    def write(path: Path, *, keep: bool) -> Transcript:
        clock = iter(range(10))
        transcript = Transcript(
            script="s", revision=MODERN, path=path, keep=keep, clock=lambda: float(next(clock))
        )
        transcript.record("start", pid=1)
        transcript.record("message", direction="client", message={"jsonrpc": "2.0"})
        transcript.close()
        return transcript

    kept, lean = (
        write(tmp_path / "kept.jsonl", keep=True),
        write(tmp_path / "lean.jsonl", keep=False),
    )
    assert [e["seq"] for e in kept.entries] == [0, 1]
    assert lean.entries == []  # the stdio mock's process: only its file shows it
    assert (tmp_path / "lean.jsonl").read_text() == (tmp_path / "kept.jsonl").read_text()


def test_an_appending_transcript_refuses_another_runs_file(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    Transcript(script="other", revision=MODERN, transport="stdio", path=path).close()
    with pytest.raises(ValueError, match="cannot append"):
        Transcript(script="s", revision=MODERN, transport="stdio", path=path, append=True)


def test_a_second_mock_process_appends_to_the_transcript(tmp_path: Path) -> None:
    record = tmp_path / "transcript.jsonl"
    argv = stdio_command(SCRIPT, revision=MODERN, transcript=record, append_transcript=True)
    crash = _request(2, "tools/call", {"name": "crash", "arguments": {}})
    first = subprocess.run(
        argv, input=_request(1, "tools/list") + crash, capture_output=True, timeout=WAIT
    )
    assert first.returncode == 3, first.stderr
    second = subprocess.run(
        argv, input=_request(1, "tools/list"), capture_output=True, timeout=WAIT
    )
    assert second.returncode == 0, second.stderr

    entries = read_transcript(record)["entries"]
    assert [e["seq"] for e in entries] == list(range(len(entries)))
    assert [e["t"] for e in entries] == sorted(e["t"] for e in entries)
    starts = _kind(entries, "start")
    assert len(starts) == 2
    assert starts[0]["pid"] != starts[1]["pid"]
    listed = _client_requests(entries, "tools/list")
    assert len(listed) == 2
    assert listed[1]["seq"] > starts[1]["seq"]
    assert _kind(entries, "unconsumed") == []  # the crash step is optional


# -- the reference client ----------------------------------------------------------------------


async def _connect(client: ReferenceClient, record: Path) -> None:
    argv = stdio_command(SCRIPT, revision=MODERN, transcript=record, append_transcript=True)
    options = ConnectOptions(protocol_version=MODERN, timeout=within(10))  # a server start
    await client.connect(StdioTarget(tuple(argv)), options)


@pytest.mark.anyio
async def test_the_reference_client_restarts_a_server_that_exited(tmp_path: Path) -> None:
    record = tmp_path / "transcript.jsonl"
    client = ReferenceClient()
    try:
        with anyio.fail_after(WAIT):
            await _connect(client, record)
            first = client._transport
            with pytest.raises(ClientError):  # the call the exit took with it
                await client.call_tool("crash", {})
            tools = await client.list_tools()
            restarted = client._transport
    finally:
        with anyio.fail_after(WAIT):
            await client.close()

    assert [tool["name"] for tool in tools["tools"]] == ["add", "crash"]
    assert isinstance(first, StdioTransport)
    assert isinstance(restarted, StdioTransport)
    assert restarted is not first
    assert restarted._process.returncode is not None  # close() stopped the new process
    entries = read_transcript(record)["entries"]
    assert len(_kind(entries, "start")) == 2
    assert len(_client_requests(entries, "tools/call")) == 1  # not re-issued
    # Stateless: the new process is asked server/discover, as at connect, never initialize.
    assert len(_client_requests(entries, "server/discover")) == 2
    assert _client_requests(entries, "initialize") == []


@pytest.mark.anyio
async def test_the_reference_client_does_not_restart_after_close(tmp_path: Path) -> None:
    record = tmp_path / "transcript.jsonl"
    client = ReferenceClient()
    try:
        with anyio.fail_after(WAIT):
            await _connect(client, record)
            with pytest.raises(ClientError):
                await client.call_tool("crash", {})
    finally:
        with anyio.fail_after(WAIT):
            await client.close()
    with pytest.raises(ClientError, match="closed"):
        await client.list_tools()
    assert len(_kind(read_transcript(record)["entries"], "start")) == 1
