"""`mcp-testbench record --http` in front of a legacy HTTP+SSE server (the 2024-11-05
transport: a GET stream whose first event names the URL to POST to, answers on the stream).

The recorder tells the transport from the stream itself, hands the client the message
endpoint as a path on the recorder (even when the server announced an absolute URL), ends
the recording when the client closes the stream, and writes a script that `serve
--sse-legacy` replays to the same client.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from _served import serving
from _sessions import RECORD, STOP_BOUND, started

from harness.protocol import SSEEvent, SSEParser
from mock_servers import load_script, parse_script
from mock_servers.recording import Capture, Seen, build_script

# Announces its message endpoint as an absolute URL on another path than the stream's;
# answers initialize (2024-11-05) and one tool, on the stream.
LEGACY_SERVER = """
import asyncio, json, socket, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

queues = {}

async def stream(request):
    queue = asyncio.Queue()
    queues["abc"] = queue
    origin = f"http://127.0.0.1:{request.url.port}"
    async def events():
        yield f"event: endpoint\\ndata: {origin}/messages/?session_id=abc\\n\\n".encode()
        while True:
            message = await queue.get()
            yield f"event: message\\ndata: {json.dumps(message)}\\n\\n".encode()
    return StreamingResponse(events(), media_type="text/event-stream")

async def post(request):
    message = json.loads(await request.body())
    queue = queues[request.query_params["session_id"]]
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "legacy-plain", "version": "1"}}
        await queue.put({"jsonrpc": "2.0", "id": message["id"], "result": result})
    elif message.get("method") == "tools/call":
        text = "hello " + message["params"]["arguments"]["who"]
        result = {"content": [{"type": "text", "text": text}]}
        await queue.put({"jsonrpc": "2.0", "id": message["id"], "result": result})
    return Response("Accepted", status_code=202)

app = Starlette(routes=[Route("/sse", stream), Route("/messages/", post, methods=["POST"])])
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(16)
print(f"listening at http://127.0.0.1:{sock.getsockname()[1]}/sse", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "greet", "arguments": {"who": "world"}},
}


async def _events(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    parser = SSEParser()
    async for chunk in response.aiter_bytes():
        for event in parser.feed(chunk):
            yield event


async def _legacy_session(url: str) -> dict[str, Any]:
    """A 2024-11-05 HTTP+SSE client's session: the endpoint it was given, and the answers."""
    timeout = httpx.Timeout(STOP_BOUND)
    async with (
        httpx.AsyncClient(timeout=timeout) as client,
        client.stream("GET", url, headers={"accept": "text/event-stream"}) as stream,
    ):
        events = _events(stream)

        async def next_event() -> SSEEvent:
            return await asyncio.wait_for(anext(events), STOP_BOUND)

        endpoint = await next_event()
        assert endpoint.event == "endpoint"
        assert endpoint.data is not None
        post_to = httpx.URL(url).join(endpoint.data)
        seen: dict[str, Any] = {"endpoint": endpoint.data}
        for message in (INIT, INITIALIZED, CALL):
            answer = await client.post(post_to, json=message)
            assert answer.status_code == 202, answer.text
            if "id" in message:
                event = await next_event()
                assert event.data is not None
                seen[str(message["method"])] = json.loads(event.data)
    return seen


def test_a_legacy_sse_session_is_recorded_and_replays_with_sse_legacy(tmp_path: Path) -> None:
    server = tmp_path / "legacy_server.py"
    server.write_text(LEGACY_SERVER, encoding="utf-8")
    out = tmp_path / "legacy.json"
    with started([sys.executable, str(server)], "listening at") as (_, url):
        record = [*RECORD, "--out", str(out), "--http", url]
        with started(record, "recording") as (recorder, at):
            live = asyncio.run(_legacy_session(at))
            # The client closed the stream: that ended the session, and the recording.
            assert recorder.wait(STOP_BOUND) == 0
    # The absolute URL the server announced came to the client as a path on the recorder,
    # and the client's POSTs to it reached the server (they were answered).
    assert live["endpoint"] == "/messages/?session_id=abc"
    assert live["tools/call"]["result"]["content"][0]["text"] == "hello world"

    script = json.loads(out.read_text(encoding="utf-8"))
    assert script["revisions"] == ["2024-11-05"]
    assert script["transports"] == ["sse-legacy"]
    assert script["http"] == {"path": "/sse"}
    assert "over HTTP+SSE" in script["description"]
    assert [s["expect"]["method"] for s in script["steps"]] == ["tools/call"]
    load_script(out)

    with serving(out, "--quiet", "--sse-legacy") as served:
        replayed = asyncio.run(_legacy_session(served.url))
    assert replayed["tools/call"] == live["tools/call"]
    assert replayed["initialize"]["result"]["serverInfo"] == {
        "name": "legacy-plain",
        "version": "1",
    }


def test_a_server_that_never_finishes_an_answer_is_still_recorded(tmp_path: Path) -> None:
    # What an HTTP+SSE server does with a HEAD of its SSE URL (server-everything's `sse`
    # mode): the answer never ends. The recorder checks that the server is there with a
    # connection, never a request, so it starts at once: the listening socket below never
    # answers anything (the kernel completes the connection, nobody reads the request).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/sse"
        out = tmp_path / "never.json"
        with started([*RECORD, "--out", str(out), "--http", url], "recording") as (recorder, _):
            recorder.terminate()
            assert recorder.wait(STOP_BOUND) == 2  # stopped before any client: no script
    assert not out.exists()


def _legacy_capture(revision: str) -> Capture:
    """An HTTP+SSE session as the proxy captures it: POSTs, and one stream for answers."""
    capture = Capture("sse-legacy")
    capture.http.path = "/sse"
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": revision}}
    result = {
        "protocolVersion": revision,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "legacy-plain", "version": "1"},
    }
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 7, "progress": 1},
    }
    call = {**CALL, "params": {**CALL["params"], "_meta": {"progressToken": 7}}}
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}}
    for sender, message, channel, exchange in (
        ("client", init, "post", 1),
        ("server", {"jsonrpc": "2.0", "id": 1, "result": result}, "get", None),
        ("client", INITIALIZED, "post", 2),
        ("client", call, "post", 3),
        ("server", progress, "get", None),
        ("server", answer, "get", None),
    ):
        text = json.dumps(message)
        capture.add(Seen(sender, message, text, channel, exchange, sse=channel == "get"))  # type: ignore[arg-type]
    return capture


def test_a_legacy_capture_keeps_the_stream_s_messages_with_their_request() -> None:
    # One stream carries every answer: a progress notification goes with the request its
    # token names (as over stdio), not as a send step of a GET stream's own.
    recording = build_script(_legacy_capture("2024-11-05"))
    script = recording.script
    assert script["transports"] == ["sse-legacy"]
    assert script["http"] == {"path": "/sse"}
    (step,) = script["steps"]
    assert [m["method"] for m in step["reply"]["before"]] == ["notifications/progress"]
    assert "as" not in step["reply"]
    assert recording.notes == []
    parse_script(script)


def test_a_later_revision_over_legacy_sse_is_replayed_over_streamable_http() -> None:
    recording = build_script(_legacy_capture("2025-11-25"))
    script = recording.script
    assert "transports" not in script  # the defaults: stdio and Streamable HTTP
    assert "http" not in script
    (note,) = recording.notes
    assert note == (
        "the server spoke 2025-11-25 over HTTP+SSE, which serve replays at 2024-11-05 only: "
        "replay this script over Streamable HTTP or stdio"
    )
    assert note in script["description"]
    parse_script(script)
