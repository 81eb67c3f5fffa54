"""`mcp-testbench record --check`: a session recorded from a real server (a plain one, a
subprocess) replayed against it again, unchanged and changed in one way each, over stdio
and over Streamable HTTP on 127.0.0.1: nothing reported for the unchanged server, one line
per change for a changed one, with the exit code a CI job gates on."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from _sessions import BOUND, RECORD, STOP_BOUND, started

# A server over stdio (`stdio VARIANT`) or Streamable HTTP (`http VARIANT`), changed in one
# way by VARIANT. Its next page's cursor is its own (CURSOR_SEED): a check that replayed the
# recorded cursor would get an error. `echo` answers with a fresh UUID and time, which must
# not read as drift; `ask` asks the client for its roots and answers with what it got.
DRIFT_SERVER = r"""
import asyncio, datetime, json, os, sys, uuid

mode, variant = sys.argv[1], sys.argv[2]
cursor = "page2-" + os.environ.get("CURSOR_SEED", "a")
city = {"type": "integer" if variant == "schema" else "string"}
weather = {"name": "get_forecast" if variant == "renamed" else "get_weather",
           "description": "Weather for a city",
           "inputSchema": {"type": "object", "properties": {"city": city}, "required": ["city"]}}
tools = [weather, {"name": "echo", "inputSchema": {"type": "object"}},
         {"name": "ask", "inputSchema": {"type": "object"}}]

async def answer(message, ask):
    method, params = message["method"], message.get("params") or {}
    if method == "initialize":
        capabilities = {"tools": {}, **({"prompts": {}} if variant == "info" else {})}
        info = {"name": "drifty", "version": "2" if variant == "info" else "1"}
        return {"result": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                           "serverInfo": info}}
    if method == "tools/list" and "cursor" not in params:
        if variant == "one-page":
            return {"result": {"tools": tools[:1]}}
        return {"result": {"tools": tools[:1], "nextCursor": cursor}}
    if method == "tools/list" and params["cursor"] == cursor:
        return {"result": {"tools": tools[1:]}}
    if method == "tools/call" and params["name"] == "echo":
        if variant == "exits":
            sys.exit("echo: out of memory")
        if variant == "error":
            return {"error": {"code": -32602, "message": "echo is gone"}}
        text = params["arguments"]["text"] + ("!" if variant == "result" else "")
        result = {"content": [{"type": "text", "text": text}], "count": 1.0 if variant == "typed" else 1,
                  "stamp": str(uuid.uuid4()), "at": datetime.datetime.now().isoformat()}
        if variant == "iserror":
            result["isError"] = True
        return {"result": result}
    if method == "tools/call" and params["name"] == "ask":
        got = await ask({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
        text = json.dumps(got.get("result", got.get("error")), sort_keys=True)
        return {"result": {"content": [{"type": "text", "text": text}]}}
    return {"error": {"code": -32602, "message": f"unknown: {method} {params}"}}

def stdio():
    def say(message):
        print(json.dumps(message), flush=True)
    async def ask(request):
        say(request)
        return json.loads(sys.stdin.readline())
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message and "method" in message:
            say({"jsonrpc": "2.0", "id": message["id"], **asyncio.run(answer(message, ask))})

def http():
    import socket, uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route
    waiting, running = {}, set()

    async def mcp(request):
        if request.method == "DELETE":
            return Response(status_code=200)
        if request.method != "POST":
            return Response(status_code=405)
        message = json.loads(await request.body())
        if "method" not in message:
            if message.get("id") in waiting:
                waiting.pop(message["id"]).set_result(message)
            return Response(status_code=202)
        if "id" not in message:
            return Response(status_code=202)
        if message["method"] != "tools/call":  # JSON; tools/call as an event stream
            headers = {"mcp-session-id": "session-1"} if message["method"] == "initialize" else {}
            body = {"jsonrpc": "2.0", "id": message["id"], **await answer(message, None)}
            return JSONResponse(body, headers=headers)
        out = asyncio.Queue()

        async def ask(request):
            waiting[request["id"]] = asyncio.get_running_loop().create_future()
            await out.put(request)
            return await waiting[request["id"]]

        async def run():
            await out.put({"jsonrpc": "2.0", "id": message["id"], **await answer(message, ask)})

        running.add(asyncio.create_task(run()))

        async def events():
            while True:
                item = await out.get()
                yield f"event: message\ndata: {json.dumps(item)}\n\n"
                if "method" not in item:
                    return

        return StreamingResponse(events(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST", "DELETE"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"listening at http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])

stdio() if mode == "stdio" else http()
"""

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}


def _request(id_: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, **({"params": params} if params else {})}


SESSION = [
    _request(2, "tools/list"),
    _request(3, "tools/list", cursor="page2-a"),
    _request(4, "tools/call", name="echo", arguments={"text": "hi"}),
]
ASKING = [_request(2, "tools/call", name="ask", arguments={})]


def _serving(server: Path, variant: str) -> list[str]:
    return [sys.executable, str(server), "stdio", variant]


def _record(folder: Path, requests: list[dict[str, Any]], *extra: str) -> Path:
    """A session with the server (CURSOR_SEED a) recorded through `record --stdio`, the
    client a line at a time, as a real one: each request answered before the next, the
    server's roots/list answered with ROOTS."""
    server = folder / "drift_server.py"
    server.write_text(DRIFT_SERVER, encoding="utf-8")
    out = folder / "recorded.json"
    recorder = subprocess.Popen(
        [*RECORD, "--out", str(out), *extra, "--stdio", "--", *_serving(server, "same")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CURSOR_SEED": "a"},
    )
    assert recorder.stdin is not None
    assert recorder.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in recorder.stdout or []])
    reader.start()

    def send(message: dict[str, Any]) -> None:
        assert recorder.stdin is not None
        recorder.stdin.write(json.dumps(message) + "\n")
        recorder.stdin.flush()

    try:
        for message in [INIT, INITIALIZED, *requests]:
            send(message)
            while "id" in message:
                got = json.loads(lines.get(timeout=BOUND))
                if got.get("method") == "roots/list":
                    send({"jsonrpc": "2.0", "id": got["id"], "result": ROOTS})
                    continue
                assert got["id"] == message["id"], got
                break
        recorder.stdin.close()
        assert recorder.wait(STOP_BOUND * 3) == 0, recorder.stderr.read() if recorder.stderr else ""
    finally:
        if recorder.poll() is None:
            recorder.kill()
            recorder.wait(STOP_BOUND)
        reader.join(STOP_BOUND)
        for stream in (recorder.stdout, recorder.stderr):
            if stream is not None:
                stream.close()
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _record(tmp_path_factory.mktemp("drift"), SESSION)


def _check(
    script: Path, *target: str, report: Path | None = None
) -> subprocess.CompletedProcess[str]:
    server = script.parent / "drift_server.py"
    command = [*RECORD, "--check", str(script), "--timeout", str(BOUND)]
    if report is not None:
        command += ["--json", str(report)]
    if target[0] == "stdio":
        command += ["--stdio", "--", sys.executable, str(server), *target]
    else:
        command += ["--http", target[0]]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=BOUND * 3,
        env={**os.environ, "CURSOR_SEED": "b"},
    )


def _checked(
    script: Path, transport: str, variant: str, report: Path | None = None
) -> subprocess.CompletedProcess[str]:
    if transport == "stdio":
        return _check(script, "stdio", variant, report=report)
    server = script.parent / "drift_server.py"
    with started([sys.executable, str(server), "http", variant], "listening at") as (_, url):
        return _check(script, url, report=report)


def test_the_recording_holds_what_the_check_replays(recorded: Path) -> None:
    script = json.loads(recorded.read_text(encoding="utf-8"))
    expects = [s["expect"] for s in script["steps"]]
    assert expects[1] == {"method": "tools/list", "params": {"cursor": {"$type": "string"}}}
    assert script["steps"][2]["reply"]["result"]["count"] == 1


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_unchanged_server_has_no_drift(recorded: Path, transport: str, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = _checked(recorded, transport, "same", report)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("no drift: the handshake and 3 recorded requests answered")
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["drifted"] is False
    assert written["differences"] == []
    assert written["requests"] == 3


CHANGES = {
    "renamed": [
        'step 0 tools/list: tool "get_weather" removed; tool "get_forecast" added (renamed?)'
    ],
    "schema": [
        'step 0 tools/list: tool "get_weather" inputSchema changed: /properties/city/type: '
        '"string" -> "integer"'
    ],
    "result": ['step 2 tools/call: result changed: /content/0/text: "hi" -> "hi!"'],
    "typed": ["step 2 tools/call: result changed: /count: 1 -> 1.0"],
    "error": ['step 2 tools/call: new error: -32602 "echo is gone"'],
    "iserror": ["step 2 tools/call: isError flipped: false -> true"],
    "one-page": [
        'step 0 tools/list: result changed: /nextCursor: removed (was "page2-a")',
        "step 1 tools/list: not replayed: the live server gave no nextCursor for this next page",
    ],
    "exits": [
        "step 2 tools/call: no answer: the server exited with status 1 "
        "(its last words: echo: out of memory)"
    ],
    "info": [
        'handshake initialize: serverInfo changed: /version: "1" -> "2"',
        "handshake initialize: capabilities changed: /prompts: added ({})",
    ],
}


@pytest.mark.parametrize(
    ("transport", "variant"),
    [("stdio", variant) for variant in CHANGES]
    + [("http", variant) for variant in ("renamed", "schema", "error")],
)
def test_each_change_is_one_line_and_exit_1(
    recorded: Path, transport: str, variant: str, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    done = _checked(recorded, transport, variant, report)
    assert done.returncode == 1, done.stdout + done.stderr
    *lines, summary = done.stdout.splitlines()
    assert lines == CHANGES[variant]
    steps = len({line.split(":")[0] for line in lines})
    counted = f"{len(lines)} difference{'' if len(lines) == 1 else 's'}"
    assert summary.startswith(f"DRIFT: {counted} in {steps} of 4 exchanges (")
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["drifted"] is True
    assert [f"{d['step']}: {d['text']}" for d in written["differences"]] == lines


def test_the_kinds_and_paths_in_the_json_report(recorded: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    assert _checked(recorded, "stdio", "schema", report).returncode == 1
    (difference,) = json.loads(report.read_text(encoding="utf-8"))["differences"]
    assert difference["kind"] == "schema-changed"
    assert difference["path"] == "/properties/city/type"
    assert difference["step"] == "step 0 tools/list"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_servers_request_gets_the_clients_recorded_answer(
    tmp_path: Path, transport: str
) -> None:
    script = _record(tmp_path, ASKING, "--exact")  # --exact keeps the client's answer
    done = _checked(script, transport, "same")
    assert done.returncode == 0, done.stdout + done.stderr


def test_without_the_clients_answer_the_server_gets_an_error_and_the_note_says_why(
    tmp_path: Path,
) -> None:
    script = _record(tmp_path, ASKING)
    done = _checked(script, "stdio", "same")
    assert done.returncode == 1
    (line, _) = done.stdout.splitlines()
    assert line.startswith("step 0 tools/call: result changed: /content/0/text: ")
    assert "no recorded answer to roots/list" in line
    assert "record with --exact to keep it" in done.stderr
