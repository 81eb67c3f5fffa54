"""The stdio mock server, as a real subprocess: framing, faults, signals, real clients, fuzzing.

Every test talks to `python -m mock_servers.stdio` over real pipes. Reads go through
threads into queues so that every wait has a timeout; no test sleeps to synchronise: it
waits for a line on stdout or stderr, or for the process to exit.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from _machine import within
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from harness.protocol import ErrorResponse, Response, classify
from harness.strategies import json_values, jsonrpc_messages
from mock_servers._fixtures import fixtures_root
from mock_servers.engine._script import Script, parse_script
from mock_servers.engine._transcript import Transcript, read_transcript
from mock_servers.stdio import serve_stdio, stdio_command
from mock_servers.stdio._server import MAX_LINE_BYTES, _LoopReader, _LoopWriter, oversized_line

FIXTURES = fixtures_root() / "stdio"
TIMEOUT = within(15.0)  # seconds: the bound of every single wait in this file
FUZZ_EXAMPLES = max(500, settings().max_examples)


class MockProcess:
    """A stdio mock server subprocess, with bounded reads of its stdout and stderr."""

    def __init__(self, argv: list[str], transcript: Path) -> None:
        self.transcript_path = transcript
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self._chunks: queue.Queue[bytes] = queue.Queue()
        self._stderr: queue.Queue[str] = queue.Queue()
        self.stderr_lines: list[str] = []
        self._buffer = b""
        self._eof = False
        self._threads = [
            threading.Thread(target=self._pump_stdout, daemon=True),
            threading.Thread(target=self._pump_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        while True:
            data = os.read(self.proc.stdout.fileno(), 1 << 16)
            self._chunks.put(data)
            if not data:
                return

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.put(line.decode("utf-8", "replace").rstrip("\n"))

    # -- stdin ------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, value: Any) -> None:
        self.write(json.dumps(value).encode() + b"\n")

    def request(self, request_id: int | str, method: str, params: Any = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.receive()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    # -- stdout and stderr ----------------------------------------------------------------------

    def _more(self, deadline: float) -> bool:
        """Wait for the next chunk of stdout; False at end of output."""
        if self._eof:
            return False
        remaining = deadline - time.monotonic()
        try:
            chunk = self._chunks.get(timeout=max(remaining, 0.001))
        except queue.Empty:
            raise AssertionError(f"no output from the server within {TIMEOUT} s") from None
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def read_line(self) -> bytes:
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self._buffer:
            if not self._more(deadline):
                raise EOFError(f"stdout closed; unterminated rest: {self._buffer[:200]!r}")
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def receive(self) -> Any:
        return json.loads(self.read_line())

    def read_to_end(self) -> bytes:
        """Everything the server writes until it closes stdout."""
        deadline = time.monotonic() + TIMEOUT
        while self._more(deadline):
            pass
        rest, self._buffer = self._buffer, b""
        return rest

    def stderr_line(self, containing: str) -> str:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = self._stderr.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                raise AssertionError(f"no stderr line with {containing!r}") from None
            self.stderr_lines.append(line)
            if containing in line:
                return line

    # -- the process ------------------------------------------------------------------------------

    def wait(self) -> int:
        return self.proc.wait(timeout=TIMEOUT)

    def transcript(self) -> dict[str, Any]:
        return read_transcript(self.transcript_path)

    def stop(self) -> None:
        """Kill the server if it still runs, and release the pipes (teardown)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        for thread in self._threads:
            thread.join(timeout=TIMEOUT)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None and not pipe.closed:
                with contextlib.suppress(BrokenPipeError):  # unflushed stdin, dead server
                    pipe.close()


Spawn = Callable[..., MockProcess]


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    started: list[MockProcess] = []

    def start(script: str, *, revision: str | None = None, **options: Any) -> MockProcess:
        transcript = tmp_path / f"transcript-{len(started)}.jsonl"
        argv = stdio_command(
            FIXTURES / f"{script}.json", revision=revision, transcript=transcript, **options
        )
        process = MockProcess(argv, transcript)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
        assert process.proc.returncode is not None


def _initialize(server: MockProcess, capabilities: dict[str, Any] | None = None) -> None:
    reply = server.request(
        0,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities or {},
            "clientInfo": {"name": "hand-written", "version": "1"},
        },
    )
    assert reply["result"]["serverInfo"]["name"] == "stdio-mock"
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _kinds(transcript: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in transcript["entries"] if e["kind"] == kind]


def _notes(transcript: dict[str, Any]) -> list[str]:
    return [e["text"] for e in _kinds(transcript, "note")]


def _exit(transcript: dict[str, Any]) -> dict[str, Any]:
    exits = _kinds(transcript, "exit")
    assert len(exits) == 1
    return exits[0]


def _call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": arguments or {}}


# -- a hand-written exchange -------------------------------------------------------------------


def test_hand_written_exchange_and_its_transcript(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-11-25")
    _initialize(server)
    script = json.loads((FIXTURES / "list-and-call.json").read_text(encoding="utf-8"))
    tools = server.request(1, "tools/list")
    assert tools == {"jsonrpc": "2.0", "id": 1, "result": script["steps"][0]["reply"]["result"]}
    called = server.request("call-1", "tools/call", _call("add", {"a": 1, "b": 2}))
    assert called["id"] == "call-1"
    assert called["result"] == {"content": [{"type": "text", "text": "3"}], "isError": False}
    server.close_stdin()
    assert server.read_to_end() == b""
    assert server.wait() == 0

    transcript = server.transcript()
    assert transcript["transport"] == "stdio"
    assert transcript["revision"] == "2025-11-25"
    assert transcript["script"] == "stdio-list-and-call"
    client = [
        e["message"]["method"] for e in _kinds(transcript, "message") if e["direction"] == "client"
    ]
    assert client == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    server_ids = [
        e["message"]["id"] for e in _kinds(transcript, "message") if e["direction"] == "server"
    ]
    assert server_ids == [0, 1, "call-1"]
    assert [e["label"] for e in _kinds(transcript, "step")] == [
        "step 0 (list)",
        "step 1 (call add)",
    ]
    assert len(_kinds(transcript, "stdin_eof")) == 1
    assert _kinds(transcript, "unconsumed") == []
    assert _exit(transcript)["code"] == 0
    assert transcript["entries"][-1]["kind"] == "exit"


def test_unconsumed_steps_are_recorded(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-06-18")
    server.close_stdin()
    assert server.wait() == 0
    unconsumed = _kinds(server.transcript(), "unconsumed")
    assert [u["steps"] for u in unconsumed] == [["step 0 (list)", "step 1 (call add)"]]


# -- framing and invalid input -----------------------------------------------------------------


def test_invalid_lines_are_recorded_and_answered(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-11-25")
    server.write(b"\xff\xfe{}\n")  # invalid UTF-8
    server.write(b"not json at all\n")
    server.write(b"\n")  # empty: recorded, not answered
    server.write(b'{"jsonrpc":"2.0","id":5}\n')  # JSON, not JSON-RPC
    server.write(b'{"jsonrpc":"2.0","id":6,"method":"ping"}\r\n')
    server.write(b'{"jsonrpc":"2.0","id":7,"method":"ping"}\r\n')

    utf8 = server.receive()
    assert utf8["id"] is None
    assert utf8["error"]["code"] == -32700
    assert "UTF-8" in utf8["error"]["data"]["reason"]
    not_json = server.receive()
    assert not_json["error"]["code"] == -32700
    not_rpc = server.receive()
    assert not_rpc["id"] == 5
    assert not_rpc["error"]["code"] == -32600
    # CR LF lines are accepted (the CR is JSON whitespace) and noted once.
    assert server.receive() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    assert server.receive() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    server.close_stdin()
    assert server.read_to_end() == b""
    assert server.wait() == 0

    transcript = server.transcript()
    invalid = _kinds(transcript, "invalid")
    assert [(e["raw"], e["code"]) for e in invalid] == [
        ("\\xff\\xfe{}", -32700),
        ("not json at all", -32700),
        ("", -32700),
        ('{"jsonrpc":"2.0","id":5}', -32600),
    ]
    assert all(e["direction"] == "client" and e["reason"] for e in invalid)
    assert "empty line" in invalid[2]["reason"]
    assert len([n for n in _notes(transcript) if "CR LF" in n]) == 1


def test_last_line_without_newline_is_still_handled(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-11-25")
    server.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    server.close_stdin()
    assert server.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert server.wait() == 0
    assert any("no newline" in n for n in _notes(server.transcript()))


def test_a_line_beyond_the_bound_is_dropped_and_answered(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-11-25")
    head, tail = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"', b'"}}'
    size = len(head) + MAX_LINE_BYTES + len(tail)
    server.write(head + b"x" * MAX_LINE_BYTES)
    server.write(tail + b"\n")
    error = server.receive()
    assert error["id"] is None
    assert error["error"]["code"] == -32600
    assert "exceeds the limit" in error["error"]["data"]["reason"]
    assert server.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    server.close_stdin()
    assert server.wait() == 0
    (invalid,) = _kinds(server.transcript(), "invalid")
    assert invalid["bytes"] == size
    assert invalid["raw"].startswith('{"jsonrpc":"2.0","id":1')
    assert len(invalid["raw"]) < 300


def test_a_smaller_bound_from_the_command_line(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-11-25", max_line_bytes=100)
    server.write(b"y" * 101 + b"\n" + b"z" * 100 + b"\n")
    assert "exceeds the limit of 100 bytes" in server.receive()["error"]["data"]["reason"]
    assert server.receive()["error"]["code"] == -32700  # 100 bytes: kept, and not JSON
    server.close_stdin()
    assert server.wait() == 0


def test_a_batch_is_refused_at_2025_06_18(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-06-18")
    server.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    error = server.receive()
    assert error["id"] is None
    assert error["error"]["code"] == -32600
    assert "batch" in error["error"]["data"]["reason"]
    server.close_stdin()
    assert server.wait() == 0


def test_a_batch_is_answered_with_one_array_at_2025_03_26(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-03-26")
    server.send(
        [
            {"jsonrpc": "2.0", "id": "a", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
            {"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": _call("nope")},
        ]
    )
    answers = server.receive()
    assert isinstance(answers, list)
    assert [a["id"] for a in answers] == ["a", "b", "c"]
    assert answers[0]["result"] == {}
    assert answers[1]["result"]["tools"][0]["name"] == "add"
    assert answers[2]["error"]["code"] == -32602
    server.close_stdin()
    assert server.wait() == 0
    client = [e for e in _kinds(server.transcript(), "message") if e["direction"] == "client"]
    assert len(client) == 4


def test_a_request_no_step_matches_gets_the_closest_step_and_the_diff(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-11-25")
    wrong = server.request(3, "tools/call", _call("add", {"a": 1, "b": 5}))
    assert wrong["id"] == 3
    assert wrong["error"]["code"] == -32602
    data = wrong["error"]["data"]
    assert data["closest_step"] == "step 1 (call add)"
    assert any("/params/arguments/b" in line for line in data["diff"])
    unknown = server.request(4, "resources/list")
    assert unknown["error"]["code"] == -32601
    server.close_stdin()
    assert server.wait() == 0
    unmatched = _kinds(server.transcript(), "unmatched")
    assert [u["message"]["id"] for u in unmatched] == [3, 4]
    assert unmatched[0]["closest"] == "step 1 (call add)"
    assert unmatched[0]["diff"] == data["diff"]


# -- faults ------------------------------------------------------------------------------------


def test_crash_exits_with_the_code_and_without_answering(spawn: Spawn) -> None:
    server = spawn("faults")
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": _call("crash")})
    assert server.wait() == 3
    assert server.read_to_end() == b""
    transcript = server.transcript()
    (fault,) = _kinds(transcript, "fault")
    assert fault["fault"] == {"kind": "crash", "exit_code": 3}
    assert fault["request"] == 9
    assert _exit(transcript) | {"code": 3, "reason": "crash"} == _exit(transcript)


def test_hang_never_answers_while_other_requests_are_answered(spawn: Spawn) -> None:
    server = spawn("faults")
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("hang")})
    assert server.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    server.close_stdin()
    assert server.read_to_end() == b""  # never an answer to request 1
    assert server.wait() == 0
    (fault,) = _kinds(server.transcript(), "fault")
    assert fault["fault"] == {"kind": "hang"}
    assert fault["request"] == 1


def test_garbage_is_written_as_a_raw_line(spawn: Spawn) -> None:
    server = spawn("faults")
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("garbage")})
    assert server.read_line() == b"garbage, not JSON"
    assert server.request(2, "ping")["result"] == {}
    server.close_stdin()
    assert server.wait() == 0


def test_oversized_unterminated_line(spawn: Spawn) -> None:
    server = spawn("faults")
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("oversized")})
    server.close_stdin()
    rest = server.read_to_end()
    assert server.wait() == 0
    assert len(rest) == 200_000
    assert not rest.endswith(b"\n")
    assert rest == oversized_line(200_000)
    notification = json.loads(rest)
    assert notification["method"] == "notifications/message"


def test_stderr_flood_does_not_stop_the_server(spawn: Spawn) -> None:
    server = spawn("faults")
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("stderr")})
    assert server.request(2, "ping")["result"] == {}
    server.close_stdin()
    assert server.wait() == 0
    for _ in range(2000):
        server.stderr_line("stderr noise from the mock")
    assert sum("stderr noise from the mock" in line for line in server.stderr_lines) == 2000


def test_drop_connection_closes_stdout_and_exits(spawn: Spawn) -> None:
    server = spawn("faults")
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("drop")})
    assert server.read_to_end() == b""
    assert server.wait() == 0
    assert _exit(server.transcript())["reason"] == "drop_connection"


def test_a_server_request_before_the_reply_waits_for_the_answer(spawn: Spawn) -> None:
    server = spawn("faults")
    _initialize(server, {"roots": {}})
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("ask")})
    asked = server.receive()
    assert asked == {"jsonrpc": "2.0", "id": "srv-roots-1", "method": "roots/list"}
    server.send({"jsonrpc": "2.0", "id": "srv-roots-1", "result": {"roots": []}})
    reply = server.receive()
    assert reply["id"] == 1
    assert reply["result"]["content"][0]["text"] == "asked"
    server.close_stdin()
    assert server.wait() == 0
    messages = _kinds(server.transcript(), "message")
    answer = next(
        e
        for e in messages
        if e["message"].get("id") == "srv-roots-1" and e["direction"] == "client"
    )
    response = next(
        e for e in messages if e["message"].get("id") == 1 and e["direction"] == "server"
    )
    assert answer["seq"] < response["seq"]


def test_an_unanswered_server_request_times_out_and_the_reply_still_comes(spawn: Spawn) -> None:
    server = spawn("faults", answer_timeout=0.2)
    _initialize(server, {"roots": {}})
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("ask")})
    assert server.receive()["method"] == "roots/list"
    reply = server.receive()
    assert reply["id"] == 1
    assert "result" in reply
    server.close_stdin()
    assert server.wait() == 0
    assert any(
        "no answer to server request 'srv-roots-1'" in n for n in _notes(server.transcript())
    )


def _held_until_cancelled(tmp_path: Path) -> str:
    """A script whose tools/call answer waits for the client's cancellation: its path,
    without the .json that `spawn` adds."""
    script = {
        "format_version": 1,
        "name": "held-until-cancelled",
        "revisions": ["2025-11-25"],
        "server": {"capabilities": {"tools": {}}, "info": {"name": "stdio-mock", "version": "1"}},
        "steps": [
            {
                "expect": {"method": "tools/call"},
                "reply": {"after_cancel": True, "result": {"content": []}},
            }
        ],
    }
    (tmp_path / "held.json").write_text(json.dumps(script), encoding="utf-8")
    return str(tmp_path / "held")


def _cancel(request_id: int | str) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "the caller gave up"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def test_a_reply_after_cancel_waits_for_the_clients_cancellation(
    spawn: Spawn, tmp_path: Path
) -> None:
    server = spawn(_held_until_cancelled(tmp_path))
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("slow")})
    server.send(_cancel("1"))  # typed JSON: not a cancellation of 1
    assert server.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
    server.send(_cancel(1))
    assert server.receive() == {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    server.close_stdin()
    assert server.wait() == 0
    messages = _kinds(server.transcript(), "message")
    cancel = next(
        e["seq"] for e in messages if e["message"].get("params", {}).get("requestId") == 1
    )
    response = next(
        e["seq"] for e in messages if e["direction"] == "server" and e["message"].get("id") == 1
    )
    assert cancel < response
    assert not any("no notifications/cancelled" in n for n in _notes(server.transcript()))


def test_a_reply_after_cancel_goes_out_at_the_answer_timeout_without_one(
    spawn: Spawn, tmp_path: Path
) -> None:
    server = spawn(_held_until_cancelled(tmp_path), answer_timeout=0.2)
    _initialize(server)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": _call("slow")})
    assert server.receive()["id"] == 1
    server.close_stdin()
    assert server.wait() == 0
    notes = _notes(server.transcript())
    assert any("no notifications/cancelled for request 1 (0.2 s passed)" in n for n in notes)


def test_send_and_fault_steps_on_the_timeline(spawn: Spawn) -> None:
    server = spawn("timeline")
    hello = server.receive()  # a send step at the top: due at startup
    assert hello["method"] == "notifications/message"
    assert hello["params"]["data"] == "hello from the start"
    for _ in range(3):
        server.stderr_line("startup noise")
    _initialize(server)
    assert server.read_line() == b"garbage after initialize"  # after the reply and a delay
    assert server.receive() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert server.request(1, "tools/list")["result"]["tools"][0]["name"] == "add"
    # Then the hang step: nothing is answered any more, though everything is recorded.
    server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    server.close_stdin()
    assert server.read_to_end() == b""
    assert server.wait() == 0
    transcript = server.transcript()
    notes = _notes(transcript)
    assert any("close_stream is an HTTP fault" in n for n in notes)
    assert any("expire_session is an HTTP fault" in n for n in notes)
    assert any("answers nothing from now on" in n for n in notes)
    kinds = [e["fault"]["kind"] for e in _kinds(transcript, "fault")]
    assert kinds == ["stderr", "delay", "garbage", "close_stream", "expire_session", "hang"]
    client = [e["message"] for e in _kinds(transcript, "message") if e["direction"] == "client"]
    assert client[-1] == {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert _kinds(transcript, "unconsumed") == []


def _script_file(tmp_path: Path, steps: list[dict[str, Any]], **server: Any) -> Path:
    path = tmp_path / "script.json"
    script = {
        "format_version": 1,
        "name": "order",
        "revisions": ["2025-11-25"],
        "server": {
            "capabilities": {"tools": {"listChanged": True}},
            "info": {"name": "stdio-mock", "version": "1"},  # what _initialize expects
            **server,
        },
        "steps": steps,
    }
    path.write_text(json.dumps(script), encoding="utf-8")
    return path


def test_a_reply_never_overtakes_one_under_way_before_it(tmp_path: Path) -> None:
    # Two requests in one write. The first one's reply goes out from a task (a send step is
    # due after it) and is under way when the second is read: the second's plain reply,
    # which could go out at once from the reader, waits its turn behind it.
    steps = [
        {"expect": {"method": "tools/list"}, "reply": {"result": {"tools": []}}},
        {"send": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}},
        {"expect": {"method": "tools/call"}, "reply": {"result": {"content": []}}},
    ]
    argv = stdio_command(_script_file(tmp_path, steps), transcript=tmp_path / "t.jsonl")
    server = MockProcess(argv, tmp_path / "t.jsonl")
    try:
        _initialize(server)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": _call("a")}
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        server.write(json.dumps(listing).encode() + b"\n" + json.dumps(call).encode() + b"\n")
        got = [server.receive() for _ in range(3)]
        order = [m.get("id", m.get("method")) for m in got]
        assert order[0] == 1, order  # the notification is due after it; 2 came later
        assert sorted(map(str, order)) == ["1", "2", "notifications/tools/list_changed"]
    finally:
        server.stop()


# -- end of input and signals ------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_is_recorded_and_ends_the_server(spawn: Spawn, signum: signal.Signals) -> None:
    server = spawn("list-and-call", revision="2025-11-25")
    assert server.request(1, "ping")["result"] == {}  # the handlers are installed by now
    server.proc.send_signal(signum)
    assert server.wait() == 0
    transcript = server.transcript()
    assert [e["name"] for e in _kinds(transcript, "signal")] == [signum.name]
    assert _exit(transcript)["reason"] == signum.name
    assert _kinds(transcript, "stdin_eof") == []


def test_stdin_and_stdout_may_be_regular_files(tmp_path: Path) -> None:
    # Pipes are polled by the event loop; a file cannot be, and goes through the threads.
    requests = tmp_path / "in.jsonl"
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        + "\n",
        encoding="utf-8",
    )
    answers = tmp_path / "out.jsonl"
    argv = stdio_command(FIXTURES / "list-and-call.json", revision="2025-11-25")
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT, check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    replies = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"] == {}
    assert "tools" in replies[1]["result"]


def test_a_client_that_stops_reading_cannot_keep_the_mock_from_exiting(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    argv = stdio_command(FIXTURES / "faults.json", revision="2025-11-25", transcript=transcript)
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            # Five 200 kB lines, far more than a pipe holds: the mock's write must wait.
            for request_id in range(1, 6):
                message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
                message["params"] = _call("oversized")
                proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            assert proc.stdout.read(100)  # the writing has begun, and is now stuck
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=TIMEOUT) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=TIMEOUT)
    assert _exit(read_transcript(transcript))["reason"] == "SIGTERM"


def test_on_eof_ignore_keeps_running_until_sigterm(spawn: Spawn) -> None:
    server = spawn("ignore-eof")
    assert server.request(1, "ping")["result"] == {}
    server.close_stdin()
    server.stderr_line("on_eof is ignore: still running")
    assert server.proc.poll() is None
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait() == 0
    kinds = [e["kind"] for e in server.transcript()["entries"]]
    assert kinds[-3:] == ["stdin_eof", "signal", "exit"]


def test_on_sigterm_ignore_records_it_and_keeps_answering(spawn: Spawn) -> None:
    server = spawn("ignore-sigterm")
    assert server.request(1, "ping")["result"] == {}
    server.proc.send_signal(signal.SIGTERM)
    server.stderr_line("on_sigterm is ignore: still running")
    assert server.request(2, "ping")["result"] == {}
    server.close_stdin()
    assert server.wait() == 0
    transcript = server.transcript()
    assert [e["name"] for e in _kinds(transcript, "signal")] == ["SIGTERM"]
    assert _exit(transcript)["reason"] == "stdin closed"


# -- the command line --------------------------------------------------------------------------


def _run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "mock_servers.stdio", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["{list}", "--bogus"], "unrecognized arguments: --bogus"),
        ([], "the following arguments are required: script"),
        (["--answer-timeout", "-1"], "must be a finite number >= 0"),
        (["missing.json"], "missing.json: /: no such file; fix: check the path"),
        (["{list}", "--revision", "2099-01-01"], "does not declare revision 2099-01-01"),
    ],
)
def test_command_line_errors_are_one_line_and_exit_2(args: list[str], expected: str) -> None:
    args = [a.replace("{list}", str(FIXTURES / "list-and-call.json")) for a in args]
    done = _run_cli(*args)
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1
    assert expected in lines[0]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"steps": [{"expect": {}, "oops": 1}]}, "/steps/0: unknown member 'oops'"),
        ({"transports": ["http"]}, "/transports: the script runs over http, not stdio"),
    ],
)
def test_a_bad_script_is_one_line_and_exit_2(
    tmp_path: Path, extra: dict[str, Any], expected: str
) -> None:
    bad = tmp_path / "bad.json"
    script = {"format_version": 1, "name": "x", "revisions": ["2025-11-25"], "steps": []}
    bad.write_text(json.dumps(script | extra), encoding="utf-8")
    done = _run_cli(str(bad))
    assert done.returncode == 2
    assert done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith(f"{bad}: {expected}")


def test_help_goes_to_stderr() -> None:
    done = _run_cli("--help")
    assert done.returncode == 0
    assert done.stdout == b""
    assert b"--answer-timeout" in done.stderr


# -- in process --------------------------------------------------------------------------------


class _MemoryIn(ByteReceiveStream):
    def __init__(self, rx: MemoryObjectReceiveStream[bytes]) -> None:
        self._rx = rx

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._rx.receive()

    async def aclose(self) -> None:
        self._rx.close()


class _MemoryOut(ByteSendStream):
    def __init__(self, tx: MemoryObjectSendStream[bytes]) -> None:
        self._tx = tx

    async def send(self, item: bytes) -> None:
        await self._tx.send(item)

    async def aclose(self) -> None:
        self._tx.close()


def test_serve_stdio_in_process_over_any_byte_streams() -> None:
    transcript = Transcript(script="in-process", revision="2025-11-25", transport="stdio")
    codes: list[int] = []

    async def main() -> None:
        in_tx, in_rx = anyio.create_memory_object_stream[bytes](8)
        out_tx, out_rx = anyio.create_memory_object_stream[bytes](8)
        err_tx, err_rx = anyio.create_memory_object_stream[bytes](8)

        async def serve() -> None:
            code = await serve_stdio(
                FIXTURES / "list-and-call.json",
                revision="2025-11-25",
                transcript=transcript,
                stdin=_MemoryIn(in_rx),
                stdout=_MemoryOut(out_tx),
                stderr=_MemoryOut(err_tx),
            )
            codes.append(code)

        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg, in_tx, out_rx, err_rx:
                tg.start_soon(serve)
                assert b"serving stdio-list-and-call" in await err_rx.receive()
                await in_tx.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":')
                await in_tx.send(b'"2.0","id":2,"method":"tools/list"}\n')
                assert await out_rx.receive() == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
                assert json.loads(await out_rx.receive())["id"] == 2
                in_tx.close()
        for stream in (in_rx, out_tx, err_tx):
            stream.close()

    anyio.run(main)
    assert codes == [0]
    kinds = [e["kind"] for e in transcript.entries]
    assert kinds[-3:] == ["stdin_eof", "unconsumed", "exit"]


def test_input_already_here_is_recorded_before_any_answer_goes_out(spawn: Spawn) -> None:
    # A client that writes its next request without waiting for the initialize result:
    # the transcript must show the request ahead of that result, as the mock saw it, for
    # the check that judges it. (Answering from the reader at once would hide it.)
    server = spawn("list-and-call")
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": _call("c")},
    }
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    server.write(json.dumps(initialize).encode() + b"\n" + json.dumps(listing).encode() + b"\n")
    assert [server.receive()["id"] for _ in range(2)] == [0, 1]
    server.close_stdin()
    assert server.wait() == 0
    assert _message_order(server.transcript()["entries"]) == [
        ("client", "initialize"),
        ("client", "tools/list"),
        ("server", "result"),
        ("server", "result"),
    ]


def _message_order(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Who sent each message, and its method ("result" for an answer), in recorded order."""
    messages = [e for e in entries if e["kind"] == "message"]
    return [(m["direction"], m["message"].get("method", "result")) for m in messages]


class _ShortReads(_LoopReader):
    """A real pipe read `size` bytes at a time, as when the next message lands after a read."""

    size = 41

    def _read_now(self, size: int) -> bytes | None:
        return super()._read_now(min(size, self.size))


class _ShortReadsByTask(_ShortReads):
    """The same, read by `receive` in a task (the way off asyncio) instead of the pump."""

    async def pump(self, feed: Callable[[bytes], None]) -> bool:
        return False


@pytest.mark.parametrize("stdin_kind", [_ShortReads, _ShortReadsByTask], ids=["pump", "task"])
@pytest.mark.parametrize("read_size", [41, 60], ids=["read-ends-at-a-newline", "read-fills-up"])
def test_input_already_in_the_pipe_is_recorded_before_the_answer(
    stdin_kind: type[_ShortReads], read_size: int
) -> None:
    # The listing is in the pipe when the ping's answer could go out; that answer must not
    # be recorded (and written) ahead of it. 41: the first read ends at the ping's newline
    # (the reader reads ahead before it answers at once). 60: the first read ends inside
    # the listing, its buffer full; the ping's answer, started in a task, must not run
    # before the rest is read.
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert len(ping) == 41
    listing = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
    transcript = Transcript(script="short-reads", revision="2025-11-25", transport="stdio")

    def reader_of(fd: int) -> _ShortReads:
        reader = stdin_kind(fd)
        reader.size = read_size
        return reader

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(in_write, ping + listing)
    os.close(in_write)
    output = bytearray()
    reader = threading.Thread(target=lambda: output.extend(_read_all(out_read)), daemon=True)
    reader.start()

    async def main() -> None:
        err_tx, err_rx = anyio.create_memory_object_stream[bytes](64)
        with anyio.fail_after(TIMEOUT), err_rx:
            await serve_stdio(
                FIXTURES / "list-and-call.json",
                revision="2025-11-25",
                transcript=transcript,
                stdin=reader_of(in_read),
                stdout=_LoopWriter(out_write, owns_fd=True),
                stderr=_MemoryOut(err_tx),
            )
        err_tx.close()

    try:
        anyio.run(main)
        reader.join(TIMEOUT)
    finally:
        os.close(in_read)
        os.close(out_read)
    assert [json.loads(line)["id"] for line in bytes(output).splitlines()] == [1, 2]
    assert _message_order(transcript.entries) == [
        ("client", "ping"),
        ("client", "tools/list"),
        ("server", "result"),
        ("server", "result"),
    ]


class _FullPipe(_LoopWriter):
    """A real pipe that takes at most 100 bytes on every other write, as a pipe whose
    reader lags does: a reply goes out in many parts, the loop running between them."""

    _turn = 0

    def _write_some(self, view: memoryview) -> int:
        self._turn += 1
        return 0 if self._turn % 2 == 0 else super()._write_some(view[:100])


def test_replies_written_in_parts_arrive_whole_and_in_order() -> None:
    # Each reply goes out at once from the reader but does not fit: its rest goes out from a
    # task. The client sends its next request as soon as the first part is in, so that
    # request's reply, the usual way, waits for the rest: no line cuts into another.
    tools = [{"name": f"tool{i}", "inputSchema": {"type": "object"}} for i in range(40)]
    script = parse_script(
        {
            "format_version": 1,
            "name": "full-pipe",
            "revisions": ["2025-11-25"],
            "server": {"capabilities": {"tools": {}}},
            "steps": [
                {
                    "expect": {"method": "tools/list"},
                    "reply": {"result": {"tools": tools}},
                    "repeat": True,
                }
            ],
        }
    )
    count = 20
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.set_blocking(out_read, False)
    lines: list[bytes] = []

    def request(ident: int) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}).encode() + b"\n"

    async def client() -> None:
        pending, sent = b"", 1
        os.write(in_write, request(1))
        while len(lines) < count:
            await anyio.wait_readable(out_read)
            pending += os.read(out_read, 65536)
            *whole, pending = pending.split(b"\n")
            lines.extend(whole)
            # The next request as soon as the last one's answer is on its way (mid-line), or
            # once it is in.
            if sent < count and (sent == len(lines) + 1 if pending else sent == len(lines)):
                sent += 1
                os.write(in_write, request(sent))
        os.close(in_write)

    async def main() -> None:
        err_tx, err_rx = anyio.create_memory_object_stream[bytes](64)
        with anyio.fail_after(TIMEOUT), err_rx:
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    partial(
                        serve_stdio,
                        script,
                        stdin=_LoopReader(in_read),
                        stdout=_FullPipe(out_write, owns_fd=True),
                        stderr=_MemoryOut(err_tx),
                    )
                )
                tg.start_soon(client)
        err_tx.close()

    try:
        anyio.run(main)
    finally:
        os.close(in_read)
        os.close(out_read)
    replies = [json.loads(line) for line in lines]
    assert [r["id"] for r in replies] == list(range(1, count + 1))
    assert all(r["result"]["tools"] == tools for r in replies)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


# -- 2026-07-28 subscriptions over stdio, in process ------------------------------------------

_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_ACK = {"method": _ACKNOWLEDGED, "params": {"notifications": {}}}
_META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _script_2026(name: str, capabilities: dict[str, Any], steps: list[dict[str, Any]]) -> Script:
    return parse_script(
        {
            "format_version": 1,
            "name": name,
            "revisions": ["2026-07-28"],
            "server": {"capabilities": capabilities},
            "steps": steps,
            "transports": ["stdio"],
        }
    )


class _Served:
    """A stdio mock served in this process: what the test sends, and what it reads back."""

    def __init__(
        self, tx: MemoryObjectSendStream[bytes], rx: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._tx, self._rx = tx, rx

    async def request(self, request_id: Any, method: str, **params: Any) -> None:
        await self.send(
            {"id": request_id, "method": method, "params": {**params, "_meta": _META_2026}}
        )

    async def send(self, message: dict[str, Any]) -> None:
        await self._tx.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def receive(self) -> tuple[Any, Any]:
        """The next message's method (or id) and the subscription id it is marked with."""
        message = json.loads(await self._rx.receive())
        params = message.get("params", message.get("result", {}))
        sid = params.get("_meta", {}).get("io.modelcontextprotocol/subscriptionId")
        return message.get("method", message.get("id")), sid


@contextlib.asynccontextmanager
async def _served(script: Script) -> AsyncIterator[_Served]:
    in_tx, in_rx = anyio.create_memory_object_stream[bytes](8)
    out_tx, out_rx = anyio.create_memory_object_stream[bytes](8)
    err_tx, err_rx = anyio.create_memory_object_stream[bytes](64)

    async def serve() -> None:
        await serve_stdio(
            script, stdin=_MemoryIn(in_rx), stdout=_MemoryOut(out_tx), stderr=_MemoryOut(err_tx)
        )

    try:
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg, in_tx, out_rx, err_rx:
                tg.start_soon(serve)
                yield _Served(in_tx, out_rx)
                in_tx.close()
    finally:
        for stream in (in_rx, out_tx, err_tx):
            stream.close()


def test_2026_stdio_subscriptions_get_what_they_opted_in_to_marked_with_their_id() -> None:
    tools = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    script = _script_2026(
        "stdio-listen",
        {"tools": {"listChanged": True}},
        [
            {"send": {"method": "notifications/tools/list_changed"}},  # before any listen
            {
                "expect": {"method": "subscriptions/listen"},
                "repeat": True,
                "reply": {"before": [_ACK], "fault": {"kind": "hang"}},
            },
            {"expect": {"method": "tools/list"}, "reply": {"result": tools}},
            {"send": {"method": "notifications/prompts/list_changed"}},
            {"send": {"method": "notifications/resources/updated", "params": {"uri": "u:/a/b"}}},
            {
                "send": {"method": "notifications/message", "params": {"level": "info", "data": 1}},
                "violation": "a 2026-07-28 log message tied to no request",
            },
        ],
    )
    seen: list[tuple[Any, ...]] = []

    async def main() -> None:
        async with _served(script) as mock:
            await mock.request(
                "a", "subscriptions/listen", notifications={"toolsListChanged": True}
            )
            seen.append(await mock.receive())  # a's acknowledgement
            seen.append(await mock.receive())  # then the list_changed sent before any subscription
            opted = {"promptsListChanged": True, "resourceSubscriptions": ["u:/a"]}
            await mock.request("b", "subscriptions/listen", notifications=opted)
            seen.append(await mock.receive())
            await mock.request("c", "tools/list")
            for _ in range(4):  # the result, then two notifications for b, then the log
                seen.append(await mock.receive())

    anyio.run(main)
    assert seen == [
        (_ACKNOWLEDGED, "a"),
        ("notifications/tools/list_changed", "a"),
        (_ACKNOWLEDGED, "b"),
        ("c", None),
        ("notifications/prompts/list_changed", "b"),
        ("notifications/resources/updated", "b"),
        ("notifications/message", None),  # not a change notification: unmarked, as it is
    ]


def test_2026_stdio_a_send_that_names_a_listen_goes_to_that_subscription_only() -> None:
    listen = {"reply": {"before": [_ACK], "fault": {"kind": "hang"}}}
    changed = {"method": "notifications/tools/list_changed"}
    script = _script_2026(
        "stdio-listen-named",
        {"tools": {"listChanged": True}},
        [
            {"label": "first", "expect": {"method": "subscriptions/listen"}, **listen},
            {"label": "second", "expect": {"method": "subscriptions/listen"}, **listen},
            {"send": changed, "listen": "first"},  # both opted in: the first alone
            {"send": changed},  # every subscription that opted in
        ],
    )
    seen: list[tuple[Any, ...]] = []

    async def main() -> None:
        async with _served(script) as mock:
            for request_id in ("a", "b"):
                opted = {"toolsListChanged": True}
                await mock.request(request_id, "subscriptions/listen", notifications=opted)
            for _ in range(5):  # two acknowledgements, then the three notifications
                seen.append(await mock.receive())

    anyio.run(main)
    assert seen == [
        (_ACKNOWLEDGED, "a"),
        (_ACKNOWLEDGED, "b"),
        (changed["method"], "a"),
        (changed["method"], "a"),
        (changed["method"], "b"),
    ]


@pytest.mark.parametrize("other", [True, 1.0, "1"], ids=["true", "1.0", "string"])
def test_2026_stdio_a_cancellation_of_another_typed_id_leaves_the_listen_open(other: Any) -> None:
    # The listen has the id 1; a notifications/cancelled for true, 1.0 or "1" names another
    # request (ids compare as typed JSON), so the change after it still goes to the listen.
    script = _script_2026(
        "stdio-listen-cancelled-other",
        {"tools": {"listChanged": True}},
        [
            {
                "expect": {"method": "subscriptions/listen"},
                "reply": {"before": [_ACK], "fault": {"kind": "hang"}},
            },
            {"expect": {"method": "notifications/cancelled"}},
            {"send": {"method": "notifications/tools/list_changed"}},
        ],
    )
    seen: list[tuple[Any, ...]] = []

    async def main() -> None:
        async with _served(script) as mock:
            await mock.request(1, "subscriptions/listen", notifications={"toolsListChanged": True})
            seen.append(await mock.receive())  # the listen is open: now the cancellation
            cancelled = {"requestId": other, "_meta": _META_2026}
            await mock.send({"method": "notifications/cancelled", "params": cancelled})
            seen.append(await mock.receive())

    anyio.run(main)
    assert seen == [(_ACKNOWLEDGED, 1), ("notifications/tools/list_changed", 1)]


# -- real clients ------------------------------------------------------------------------------


def _live_servers(transcript: Path) -> list[int]:
    """Processes still running with `transcript` on their command line (Linux /proc)."""
    needle = os.fsencode(transcript)
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if needle in argv:
                found.append(int(entry.name))
    return found


def _run_real_client(transcript: Path, client: Callable[[], Any]) -> None:
    """Run an async client session; afterwards no server process may be left."""

    async def bounded() -> None:
        with anyio.fail_after(TIMEOUT * 2):
            await client()

    try:
        anyio.run(bounded)
    finally:
        leftovers = _live_servers(transcript) if sys.platform == "linux" else []
        for pid in leftovers:
            os.kill(pid, signal.SIGKILL)
        assert leftovers == [], "the client left the server running"


def _check_client_transcript(transcript: Path, revision: str) -> list[str]:
    """The methods the client sent; the exchange is complete and ended cleanly."""
    data = read_transcript(transcript)
    assert data["revision"] == revision
    methods = [
        e["message"].get("method", "(response)")
        for e in _kinds(data, "message")
        if e["direction"] == "client"
    ]
    assert _kinds(data, "unconsumed") == []
    assert _kinds(data, "invalid") == []
    assert len(_kinds(data, "stdin_eof")) == 1
    assert _exit(data)["code"] == 0
    return methods


@pytest.mark.parametrize(
    ("mode", "revision"),
    [
        ("legacy", "2025-11-25"),
        ("legacy", "2024-11-05"),
        ("auto", "2025-11-25"),
        ("auto", "2026-07-28"),
        ("2026-07-28", "2026-07-28"),
    ],
)
def test_the_official_python_sdk_client(tmp_path: Path, mode: str, revision: str) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    transcript = tmp_path / "transcript.jsonl"
    command, *args = stdio_command(
        FIXTURES / "list-and-call.json", revision=revision, transcript=transcript
    )

    async def session() -> None:
        params = StdioServerParameters(command=command, args=args)
        async with Client(params, mode=mode, read_timeout_seconds=TIMEOUT) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["add"]
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert not result.is_error
            assert result.content[0].text == "3"  # type: ignore[union-attr]

    _run_real_client(transcript, session)
    methods = _check_client_transcript(transcript, revision)
    if revision == "2026-07-28":
        assert "initialize" not in methods
    else:
        assert "initialize" in methods
        assert "notifications/initialized" in methods
    if mode == "auto":
        assert methods[0] == "server/discover"  # answered -32601: it falls back
    assert "tools/list" in methods
    assert "tools/call" in methods


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_the_fastmcp_client(tmp_path: Path, revision: str) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    transcript = tmp_path / "transcript.jsonl"
    command, *args = stdio_command(
        FIXTURES / "list-and-call.json", revision=revision, transcript=transcript
    )

    async def session() -> None:
        transport = StdioTransport(command=command, args=args, keep_alive=False)
        async with Client(transport, timeout=TIMEOUT, init_timeout=TIMEOUT) as client:
            tools = await client.list_tools()
            assert [t.name for t in tools] == ["add"]
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert result.content[0].text == "3"

    _run_real_client(transcript, session)
    methods = _check_client_transcript(transcript, revision)
    assert "tools/call" in methods


# -- fuzzing -----------------------------------------------------------------------------------


def _check_output_until_pong(server: MockProcess, ping_id: str) -> None:
    """Send a ping; every line before its answer must be a JSON-RPC response or error."""
    server.send({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})
    while True:
        line = server.read_line()
        value = json.loads(line)
        for item in value if isinstance(value, list) else [value]:
            message = classify(item)
            assert isinstance(message, (Response, ErrorResponse)), line
            if isinstance(message, ErrorResponse):
                assert message.error.code != -32603, line  # an internal error: an engine bug
        if isinstance(value, dict) and value.get("id") == ping_id:
            assert value == {"jsonrpc": "2.0", "id": ping_id, "result": {}}
            return


_JUNK = st.lists(
    st.sampled_from(
        [
            b"{",
            b"}",
            b"[",
            b"]",
            b'"',
            b"\\",
            b"\n",
            b"\r",
            b"\xff",
            b"\xc3",
            b"\x00",
            b'"jsonrpc"',
            b'"2.0"',
            b'"id"',
            b'"method"',
            b":",
            b",",
            b"1",
            b"null",
            b"\xef\xbb\xbf",
        ]
    ),
    max_size=30,
).map(b"".join)


def test_fuzz_arbitrary_bytes(spawn: Spawn) -> None:
    server = spawn("list-and-call", revision="2025-11-25")
    ping_ids = (f"pong-check-{n}" for n in itertools.count())

    @settings(
        max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(st.one_of(st.binary(max_size=400), _JUNK))
    def check(data: bytes) -> None:
        note(f"sent: {data!r}")
        server.write(data + b"\n")
        _check_output_until_pong(server, next(ping_ids))

    check()
    assert server.proc.poll() is None
    server.close_stdin()
    assert server.wait() == 0


def _json_line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


# Cheap ways to break a valid message (harness.strategies.malformed_jsonrpc covers more,
# at some 50 ms an example: too slow for 500 examples here).
_BREAKAGES: list[Callable[[dict[str, Any]], Any]] = [
    lambda m: {k: v for k, v in m.items() if k != "jsonrpc"},
    lambda m: {**m, "jsonrpc": "1.0"},
    lambda m: {**m, "id": None},
    lambda m: {**m, "id": 1.5},
    lambda m: {**m, "id": [1]},
    lambda m: {**m, "id": True},
    lambda m: {**m, "result": {}, "error": {"code": 1, "message": "both"}},
    lambda m: {**m, "method": 7},
    lambda m: {**m, "params": "text"},
    lambda m: {**m, "error": {"code": "1", "message": 2}},
    lambda m: {**m, "id": 1, "method": "notifications/initialized"},
    lambda m: [],
    lambda m: [m, 1],
]

_JSON_LINES = st.one_of(
    jsonrpc_messages().map(lambda m: _json_line(m.to_json())),
    st.lists(jsonrpc_messages(), min_size=1, max_size=3).map(
        lambda ms: _json_line([m.to_json() for m in ms])
    ),
    st.tuples(jsonrpc_messages(), st.sampled_from(_BREAKAGES)).map(
        lambda pair: _json_line(pair[1](pair[0].to_json()))
    ),
    json_values().map(_json_line),
)


def test_fuzz_arbitrary_json_lines(spawn: Spawn) -> None:
    # 2025-03-26: arrays are batches there, so they reach the engine member by member.
    server = spawn("list-and-call", revision="2025-03-26")
    ping_ids = (f"pong-check-{n}" for n in itertools.count())

    @settings(
        max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(_JSON_LINES)
    def check(line: bytes) -> None:
        note(f"sent: {line!r}")
        server.write(line + b"\n")
        _check_output_until_pong(server, next(ping_ids))

    check()
    assert server.proc.poll() is None
    server.close_stdin()
    assert server.wait() == 0
