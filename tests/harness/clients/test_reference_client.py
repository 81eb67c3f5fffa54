"""The reference client against real servers: the official Python SDK's server (stdio, over
Streamable HTTP and the legacy HTTP+SSE with uvicorn on 127.0.0.1), and a few raw stdio
scripts for what the SDK never does (garbage lines, a version nobody speaks)."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from _machine import within
from starlette.applications import Starlette

from harness.clients import (
    ClientError,
    ClientEvent,
    ConnectOptions,
    Handlers,
    HttpTarget,
    McpClient,
    ReferenceClient,
    SseLegacyTarget,
    StdioTarget,
)
from harness.clients.reference._http import header_value, modern_headers, param_headers
from harness.clients.reference._stdio import StdioTransport
from harness.protocol import RequestId

HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN = "2026-07-28"
RETRY_MS = 300  # the `retry` the HTTP server asks for (from 2025-11-25)
TIMEOUT = within(
    30
)  # seconds per request: an SDK server takes 2 to 10 s to start on a busy machine
WAIT = within(60)  # seconds: bound of every test body

# The SDK's low-level Server, because it lets a test decide pages, errors and results.
SDK_SERVER = """
import os
import sys
import threading

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import EventMessage, EventStore
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

STATE = "opaque \\u2713 {state}"
CANCELLED = threading.Event()
SUM = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
OBJECT = {"type": "object"}
REGION = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
BAD_HEADER = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
TOOLS = [
    types.Tool(name="add", input_schema=OBJECT, output_schema=SUM),
    types.Tool(name="fail", input_schema=OBJECT),
    types.Tool(name="bad_output", input_schema=OBJECT, output_schema=SUM),
    types.Tool(name="slow", input_schema=OBJECT),
    types.Tool(name="progress", input_schema=OBJECT),
    types.Tool(name="roots", input_schema=OBJECT),
    types.Tool(name="ask", input_schema=OBJECT),
    types.Tool(name="region", input_schema=REGION),
    types.Tool(name="bad_header", input_schema=BAD_HEADER),
    types.Tool(name="crash", input_schema=OBJECT),
    types.Tool(name="poll", input_schema=OBJECT),
]
PAGE = 4
CURSORS = ["page 2 \\u2713", "=?base64?not-really?="]  # opaque: must come back verbatim


def text(value):
    return [types.TextContent(type="text", text=value)]


async def list_tools(ctx, params):
    cursor = params.cursor if params is not None else None
    if cursor is not None and cursor not in CURSORS:
        raise MCPError(-32602, f"unknown cursor {cursor!r}")
    page = 0 if cursor is None else CURSORS.index(cursor) + 1
    next_cursor = CURSORS[page] if page < len(CURSORS) else None
    tools = TOOLS[page * PAGE : (page + 1) * PAGE]
    return types.ListToolsResult(tools=tools, next_cursor=next_cursor)


async def call_tool(ctx, params):
    args = params.arguments or {}
    name = params.name
    if name == "add":
        total = args["a"] + args["b"]
        return types.CallToolResult(content=text(str(total)), structured_content={"total": total})
    if name == "fail":
        return types.CallToolResult(content=text("it failed"), is_error=True)
    if name == "bad_output":
        return types.CallToolResult(content=text("?"), structured_content={"total": "three"})
    if name == "slow":
        try:
            await anyio.sleep_forever()
        finally:
            CANCELLED.set()
    if name == "progress":
        token = ctx.meta.get("progress_token") if ctx.meta else None
        await ctx.session.send_progress_notification(
            token, 0.5, 1.0, related_request_id=ctx.request_id
        )
        return types.CallToolResult(content=text(f"token {token}"))
    if name == "roots":
        related = ServerMessageMetadata(related_request_id=ctx.request_id)  # on this stream
        try:
            result = await ctx.session.send_request(
                types.ListRootsRequest(), types.ListRootsResult, metadata=related
            )
        except MCPError as exc:
            return types.CallToolResult(content=text(f"error {exc.code}"))
        return types.CallToolResult(content=text(",".join(str(root.uri) for root in result.roots)))
    if name == "ask":
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        if ctx.protocol_version != "2026-07-28":
            answer = await ctx.session.elicit("Who?", schema, related_request_id=ctx.request_id)
            return types.CallToolResult(content=text(f"{answer.action} {answer.content}"))
        if params.input_responses is None:
            question = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message="Who?", requested_schema=schema)
            )
            return types.InputRequiredResult(input_requests={"who": question}, request_state=STATE)
        answer = params.input_responses["who"]
        echoed = params.request_state == STATE
        return types.CallToolResult(content=text(f"{answer.action} {answer.content} {echoed}"))
    if name == "region":
        return types.CallToolResult(content=text(args.get("region", "")))
    if name == "crash":
        os._exit(3)
    if name == "poll":  # 2025-11-25: close the stream; the client must come back (HT-7)
        await ctx.close_sse_stream()
        return types.CallToolResult(content=text("polled"))
    raise MCPError(-32602, f"Unknown tool: {name}")


class MemoryEventStore(EventStore):
    def __init__(self):
        self.events = []  # (event id, stream id, message)

    async def store_event(self, stream_id, message):
        self.events.append((str(len(self.events) + 1), stream_id, message))
        return self.events[-1][0]

    async def replay_events_after(self, last_event_id, send_callback):
        ids = [event[0] for event in self.events]
        if last_event_id not in ids:
            return None
        stream = self.events[ids.index(last_event_id)][1]
        for event_id, stream_id, message in self.events[ids.index(last_event_id) + 1 :]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


server = Server("sdk-lowlevel", version="1.2.3", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
"""

# A stdio server in a few lines of plain Python, for what no SDK server does: it records
# every line it reads, and answers initialize after garbage, or with an unknown version.
RAW_SERVER = """
import json, sys
record, mode = sys.argv[1], sys.argv[2]
out = sys.stdout.buffer
with open(record, "w") as log:
    for line in sys.stdin.buffer:
        log.write(line.decode()); log.flush()
        message = json.loads(line)
        if message.get("method") != "initialize":
            continue
        version = "1999-01-01" if mode == "bad-version" else message["params"]["protocolVersion"]
        info = {"name": "raw", "version": "0"}
        answer = {"protocolVersion": version, "capabilities": {}, "serverInfo": info}
        if mode == "garbage":
            out.write(b"this is not JSON\\n")
            out.write(b"x" * (17 * 1024 * 1024) + b"\\n")
            other_type = {"jsonrpc": "2.0", "id": str(message["id"]), "result": {}}
            out.write(json.dumps(other_type).encode() + b"\\n")
            out.write(b'{"jsonrpc":"2.0","method":"notifications/cancelled",')
            out.write(b'"params":{"requestId":99}}\\n')
            out.write(b'{"jsonrpc":"2.0","method":"notifications/message",')
            out.write(b'"params":{"level":"info","data":1}}\\n')
            answer["unknownField"] = True
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
        if mode == "batch":  # 2025-03-26: a ping and the answer in one batch
            reply = [{"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}, reply]
        out.write(json.dumps(reply).encode() + b"\\n")
        out.flush()
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def sdk_script(tmp_path: Path) -> Path:
    path = tmp_path / "sdk_server.py"
    path.write_text(SDK_SERVER, encoding="utf-8")
    return path


@pytest.fixture
def sdk_module(sdk_script: Path) -> ModuleType:
    """The same server, imported in this process (for uvicorn), with its own state."""
    spec = importlib.util.spec_from_file_location(f"sdk_server_{id(sdk_script)}", sdk_script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def _serve(app: Starlette) -> Iterator[str]:
    """Run `app` with uvicorn in a thread on a port bound before the thread starts."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2, lifespan="on")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


@pytest.fixture
def http_url(sdk_module: ModuleType) -> Iterator[str]:
    app = sdk_module.server.streamable_http_app(
        event_store=sdk_module.MemoryEventStore(), retry_interval=RETRY_MS
    )
    with _serve(app) as base:
        yield base + "/mcp"


@pytest.fixture
def sse_url(sdk_module: ModuleType) -> Iterator[str]:
    from mcp.server.sse import SseServerTransport
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    sse = SseServerTransport("/messages/")
    lowlevel = sdk_module.server

    async def handle(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
        return Response()

    app = Starlette(
        routes=[
            Route("/sse", endpoint=handle, methods=["GET"]),
            Mount("/messages/", app=sse.handle_post_message),
        ]
    )
    with _serve(app) as base:
        yield base + "/sse"


class Wire:
    """Every HTTP request the client sends, seen through an httpx event hook."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []

    def factory(self) -> httpx.AsyncClient:
        async def record(request: httpx.Request) -> None:
            self.requests.append(request)
            self.times.append(anyio.current_time())

        return httpx.AsyncClient(event_hooks={"request": [record]})

    def posts(self) -> list[tuple[httpx.Request, dict[str, Any]]]:
        return [(r, json.loads(r.content)) for r in self.requests if r.method == "POST"]


@pytest.fixture
async def client() -> AsyncIterator[ReferenceClient]:
    client = ReferenceClient()
    yield client
    with anyio.fail_after(15):
        await client.close()


def _options(version: str | None, **kwargs: Any) -> ConnectOptions:
    return ConnectOptions(protocol_version=version, timeout=TIMEOUT, **kwargs)


async def _exercise(client: McpClient) -> None:
    """list_tools (every page), call_tool ok / isError / unknown tool."""
    tools = (await client.list_tools())["tools"]
    assert [tool["name"] for tool in tools][:3] == ["add", "fail", "bad_output"]
    assert len(tools) >= 10  # three pages; the server checks that cursors come back verbatim
    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"total": 5}
    assert result.get("isError") is not True
    failed = await client.call_tool("fail", {})
    assert failed["isError"] is True  # TL-4: a result, not an exception
    assert failed["content"][0]["text"] == "it failed"
    with pytest.raises(ClientError) as caught:
        await client.call_tool("no_such_tool", {})
    assert (caught.value.kind, caught.value.code) == ("protocol", -32602)


# Every revision, over each transport ---------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, *HANDSHAKE, MODERN])
async def test_stdio_every_revision(
    sdk_script: Path, client: ReferenceClient, version: str | None
) -> None:
    with anyio.fail_after(WAIT):
        info = await client.connect(
            StdioTarget((sys.executable, str(sdk_script))), _options(version)
        )
        # Without a forced revision the dual-era client probes server/discover (LC-M3).
        assert info["protocolVersion"] == (version or MODERN)
        assert info["serverInfo"]["name"] == "sdk-lowlevel"
        await _exercise(client)
        tools = (await client.list_tools())["tools"]
        assert "bad_header" in [t["name"] for t in tools]  # stdio may ignore x-mcp-header
        if version != MODERN and version is not None:
            assert await client.ping() == {}


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, *HANDSHAKE, MODERN])
async def test_http_every_revision(http_url: str, version: str | None) -> None:
    wire = Wire()
    client = ReferenceClient(http_client_factory=wire.factory)
    try:
        with anyio.fail_after(WAIT):
            info = await client.connect(HttpTarget(http_url), _options(version))
            assert info["protocolVersion"] == (version or MODERN)
            await _exercise(client)
    finally:
        with anyio.fail_after(15):
            await client.close()
    posts = wire.posts()
    for request, _ in posts:  # HT-1, HT-2
        accept = request.headers["accept"]
        assert "application/json" in accept
        assert "text/event-stream" in accept
    if (version or MODERN) == MODERN:
        assert {r.method for r in wire.requests} == {"POST"}  # HM-5: no GET, no DELETE
        for request, body in posts:
            meta = body["params"]["_meta"]  # LC-M1
            assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
            assert "io.modelcontextprotocol/clientCapabilities" in meta
            assert request.headers["mcp-protocol-version"] == MODERN  # HM-2
            assert request.headers["mcp-method"] == body["method"]  # HM-3
            assert "mcp-session-id" not in request.headers
            if body["method"] == "tools/call":
                assert request.headers["mcp-name"] == body["params"]["name"]
        return
    first, initialize = posts[0]
    assert initialize["method"] == "initialize"  # LC-1
    assert "mcp-session-id" not in first.headers
    assert posts[1][1]["method"] == "notifications/initialized"  # LC-4
    session = next(r.headers["mcp-session-id"] for r in wire.requests if r is not first)
    for request in wire.requests[1:]:  # HT-8 (GET and DELETE too)
        assert request.headers["mcp-session-id"] == session
        if version in ("2025-06-18", "2025-11-25"):
            assert request.headers["mcp-protocol-version"] == version  # HT-11
    assert wire.requests[-1].method == "DELETE"  # HT-10
    ids = [body["id"] for _, body in posts if "id" in body]
    assert len(ids) == len(set(ids))  # RPC-2
    assert all(isinstance(i, int) for i in ids)  # RPC-1


@pytest.mark.anyio
async def test_legacy_sse(sse_url: str, client: ReferenceClient) -> None:
    with anyio.fail_after(WAIT):
        info = await client.connect(SseLegacyTarget(sse_url), _options("2024-11-05"))
        assert info["protocolVersion"] == "2024-11-05"
        await _exercise(client)
        assert await client.ping() == {}


@pytest.mark.anyio
async def test_http_falls_back_to_legacy_sse(sse_url: str, client: ReferenceClient) -> None:
    # HT-12: POSTs to the SSE URL get 405, so the client GETs it for the endpoint event.
    events: list[ClientEvent] = []
    with anyio.fail_after(WAIT):
        info = await client.connect(HttpTarget(sse_url), _options(None, on_event=events.append))
        assert info["protocolVersion"] == HANDSHAKE[-1]
        await _exercise(client)
    assert any("HT-12" in event.text for event in events)


# Requests the server sends, MRTR, progress, validation ---------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", MODERN])
async def test_elicitation_in_each_era(
    http_url: str, client: ReferenceClient, version: str
) -> None:
    # Handshake revisions: elicitation/create arrives on the POST's SSE stream and is
    # answered by POST (HT-3). 2026: an InputRequiredResult, answered by a retry (MRTR).
    handlers = Handlers(elicitation={"action": "accept", "content": {"name": "Ada"}})
    with anyio.fail_after(WAIT):
        await client.connect(HttpTarget(http_url), _options(version, handlers=handlers))
        result = await client.call_tool("ask", {})
    expected = "accept {'name': 'Ada'}" + (" True" if version == MODERN else "")
    assert result["content"][0]["text"] == expected


@pytest.mark.anyio
async def test_mrtr_over_stdio(sdk_script: Path, client: ReferenceClient) -> None:
    handlers = Handlers(elicitation={"action": "decline"})
    with anyio.fail_after(WAIT):
        target = StdioTarget((sys.executable, str(sdk_script)))
        await client.connect(target, _options(MODERN, handlers=handlers))
        result = await client.call_tool("ask", {})
    assert result["content"][0]["text"] == "decline None True"  # requestState echoed


@pytest.mark.anyio
@pytest.mark.parametrize("roots", [None, ({"uri": "file:///work", "name": "work"},)])
async def test_roots_answered_or_refused(
    http_url: str, client: ReferenceClient, roots: tuple[dict[str, str], ...] | None
) -> None:
    with anyio.fail_after(WAIT):
        await client.connect(
            HttpTarget(http_url), _options("2025-11-25", handlers=Handlers(roots=roots))
        )
        result = await client.call_tool("roots", {})
    # LC-6 / ROOTS: undeclared roots get -32601, never silence.
    assert result["content"][0]["text"] == ("error -32601" if roots is None else "file:///work")


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-03-26", MODERN])
async def test_progress_events(http_url: str, client: ReferenceClient, version: str) -> None:
    events: list[ClientEvent] = []
    with anyio.fail_after(WAIT):
        await client.connect(HttpTarget(http_url), _options(version, on_event=events.append))
        result = await client.call_tool("progress", {}, progress=True)
    token = result["content"][0]["text"].removeprefix("token ")
    progress = [e for e in events if e.method == "notifications/progress"]
    assert [str(e.params["progressToken"]) for e in progress] == [token]


@pytest.mark.anyio
async def test_output_schema_mismatch_is_reported(http_url: str, client: ReferenceClient) -> None:
    with anyio.fail_after(WAIT):
        await client.connect(HttpTarget(http_url), _options("2025-06-18"))
        await client.list_tools()  # the client learns the outputSchema (TL-3)
        with pytest.raises(ClientError) as caught:
            await client.call_tool("bad_output", {})
    assert caught.value.kind == "other"


@pytest.mark.anyio
async def test_x_mcp_header(http_url: str, client: ReferenceClient) -> None:
    events: list[ClientEvent] = []
    with anyio.fail_after(WAIT):
        await client.connect(HttpTarget(http_url), _options(MODERN, on_event=events.append))
        names = [tool["name"] for tool in (await client.list_tools())["tools"]]
        # HM-4: the SDK server checks Mcp-Param-Region against the body (base64 here).
        result = await client.call_tool("region", {"region": " 日本 "})
    assert "bad_header" not in names
    assert "region" in names
    assert any("bad_header" in event.text for event in events)  # the warning
    assert result["content"][0]["text"] == " 日本 "


# Timeouts, cancellation, sessions, process lifetime ------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_timeout_cancels_the_request(
    http_url: str, sdk_module: ModuleType, client: ReferenceClient, version: str
) -> None:
    with anyio.fail_after(WAIT):
        await client.connect(HttpTarget(http_url), _options(version))
        with pytest.raises(ClientError) as caught:
            await client.call_tool("slow", {}, timeout=0.5)
        assert caught.value.kind == "timeout"
        # LC-9: notifications/cancelled (2025-11-25), a closed stream (2026, HM-5).
        assert await anyio.to_thread.run_sync(sdk_module.CANCELLED.wait, 10)
        assert (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"]["total"] == 2


@pytest.mark.anyio
async def test_cancelling_the_caller_cancels_the_request(
    http_url: str, sdk_module: ModuleType, client: ReferenceClient
) -> None:
    with anyio.fail_after(WAIT):
        await client.connect(HttpTarget(http_url), _options("2025-06-18"))
        with anyio.move_on_after(0.5):  # the harness's `cancel` command
            await client.call_tool("slow", {})
        # CANCEL, HT-5: an explicit notifications/cancelled reached the server.
        assert await anyio.to_thread.run_sync(sdk_module.CANCELLED.wait, 10)
        assert (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"]["total"] == 2


@pytest.mark.anyio
async def test_resumption_honours_retry(http_url: str) -> None:
    wire = Wire()
    client = ReferenceClient(http_client_factory=wire.factory)
    try:
        with anyio.fail_after(WAIT):
            await client.connect(HttpTarget(http_url), _options("2025-11-25"))
            assert (await client.call_tool("poll", {}))["content"][0]["text"] == "polled"
    finally:
        with anyio.fail_after(15):
            await client.close()
    # HT-7: the stream closed after its priming event; the client waited `retry`, then
    # resumed with GET and Last-Event-ID.
    call = next(i for i, r in enumerate(wire.requests) if b'"tools/call"' in r.content)
    resumed = next(i for i, r in enumerate(wire.requests) if "last-event-id" in r.headers)
    assert wire.requests[resumed].method == "GET"
    assert wire.times[resumed] - wire.times[call] >= RETRY_MS / 1000


@pytest.mark.anyio
async def test_session_expiry_starts_a_new_session(http_url: str) -> None:
    wire = Wire()
    client = ReferenceClient(http_client_factory=wire.factory)
    try:
        with anyio.fail_after(WAIT):
            await client.connect(HttpTarget(http_url), _options("2025-11-25"))
            session = wire.requests[-1].headers["mcp-session-id"]
            async with httpx.AsyncClient() as other:  # the session ends behind its back
                await other.delete(http_url, headers={"Mcp-Session-Id": session})
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"]
    finally:
        with anyio.fail_after(15):
            await client.close()
    # HT-9: a 404, then initialize without the old id, then the same call again.
    bodies = [
        (r, body) for r, body in wire.posts() if body.get("method") != "notifications/initialized"
    ]
    methods = [body.get("method") for _, body in bodies]
    assert methods[-3:] == ["tools/call", "initialize", "tools/call"]
    assert "mcp-session-id" not in bodies[-2][0].headers
    assert bodies[-1][0].headers["mcp-session-id"] != session


@pytest.mark.anyio
async def test_server_exit_mid_call(sdk_script: Path, client: ReferenceClient) -> None:
    with anyio.fail_after(WAIT):
        await client.connect(StdioTarget((sys.executable, str(sdk_script))), _options("2025-11-25"))
        with anyio.fail_after(5), pytest.raises(ClientError) as caught:
            await client.call_tool("crash", {})
        assert caught.value.kind == "transport"
        assert "code 3" in caught.value.message
        with pytest.raises(ClientError):
            await client.list_tools()


@pytest.mark.anyio
async def test_raw_server_garbage_and_undeclared_tools(
    tmp_path: Path, client: ReferenceClient
) -> None:
    script, record = tmp_path / "raw.py", tmp_path / "received.jsonl"
    script.write_text(RAW_SERVER, encoding="utf-8")
    events: list[ClientEvent] = []
    target = StdioTarget((sys.executable, str(script), str(record), "garbage"))
    with anyio.fail_after(WAIT):
        info = await client.connect(target, _options("2025-11-25", on_event=events.append))
        assert info["serverInfo"] == {"name": "raw", "version": "0"}
        with pytest.raises(ClientError) as caught:
            await client.list_tools()  # LC-7: no tools capability, nothing sent
        assert caught.value.kind == "unsupported"
        await client.close()  # ST-4: stdin closed, the server's loop ends
    received = [json.loads(line) for line in record.read_text().splitlines()]  # ST-1
    assert [m.get("method") for m in received] == ["initialize", "notifications/initialized"]
    assert received[0]["params"]["capabilities"] == {}  # LC-6: no handlers, nothing declared
    logs = " ".join(event.text for event in events)
    assert "longer than" in logs  # the oversized line
    assert "unknown request id '1'" in logs  # "1" is not 1
    assert [e.method for e in events if e.event == "notification"] == [
        "notifications/cancelled",
        "notifications/message",
    ]


@pytest.mark.anyio
async def test_raw_server_batch(tmp_path: Path, client: ReferenceClient) -> None:
    script, record = tmp_path / "raw.py", tmp_path / "received.jsonl"
    script.write_text(RAW_SERVER, encoding="utf-8")
    target = StdioTarget((sys.executable, str(script), str(record), "batch"))
    with anyio.fail_after(WAIT):
        await client.connect(target, _options("2025-03-26"))  # RPC-6: batches accepted
        await client.close()
    received = [json.loads(line) for line in record.read_text().splitlines()]
    assert {"jsonrpc": "2.0", "id": "srv-ping", "result": {}} in received  # PING, unbatched


@pytest.mark.anyio
async def test_unsupported_server_version_disconnects(tmp_path: Path) -> None:
    script, record = tmp_path / "raw.py", tmp_path / "received.jsonl"
    script.write_text(RAW_SERVER, encoding="utf-8")
    client = ReferenceClient()
    target = StdioTarget((sys.executable, str(script), str(record), "bad-version"))
    with anyio.fail_after(WAIT), pytest.raises(ClientError) as caught:
        await client.connect(target, _options("2025-06-18"))
    assert caught.value.kind == "protocol"  # LC-3
    received = [json.loads(line)["method"] for line in record.read_text().splitlines()]
    assert received == ["initialize"]  # no initialized after a version it cannot speak
    with pytest.raises(ClientError) as after:
        await client.list_tools()
    assert after.value.kind == "other"
    await client.close()  # idempotent


@pytest.mark.anyio
async def test_unstartable_command(client: ReferenceClient, tmp_path: Path) -> None:
    target = StdioTarget((str(tmp_path / "no-such-server"),))
    with anyio.fail_after(WAIT), pytest.raises(ClientError) as caught:
        await client.connect(target, _options(None))
    assert caught.value.kind == "transport"


# The 2026-07-28 header rules, as functions -----------------------------------------------


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_header_value_encoding(value: str, sent: str) -> None:
    assert header_value(value) == sent  # HM-3


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "has space"}}},
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "object", "x-mcp-header": "A"}}},
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "integer", "x-mcp-header": "a"},
            }
        },
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
        {"properties": {"a": {"oneOf": [{"type": "string", "x-mcp-header": "A"}]}}},
        {
            "$defs": {"a": {"type": "string", "x-mcp-header": "A"}},
            "properties": {"a": {"$ref": "#/$defs/a"}},
        },
    ],
)
def test_invalid_x_mcp_header(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="x-mcp-header"):
        param_headers(schema)  # HM-4


def test_param_headers_follow_properties() -> None:
    schema = {
        "type": "object",
        "properties": {
            "outer": {
                "type": "object",
                "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}},
            },
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
            "note": {
                "type": ["string", "null"],
                "x-mcp-header": "Note",
                "default": {"x-mcp-header": 1},
            },
        },
    }
    declared = param_headers(schema)
    assert declared == [(("outer", "id"), "Id"), (("flag",), "Flag"), (("note",), "Note")]
    params = {"name": "t ✓", "arguments": {"outer": {"id": -7}, "flag": False, "note": None}}
    headers = modern_headers(MODERN, "tools/call", params, declared)
    assert headers == {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "=?base64?dCDinJM=?=",
        "Mcp-Param-Id": "-7",
        "Mcp-Param-Flag": "false",
    }


# Against the project's scripted mock servers ---------------------------------------------


def _mock_client(script: str | dict[str, Any], revision: str) -> tuple[ReferenceClient, Any]:
    """A client for an in-process HTTP mock of a fixture (or an inline script): no sockets."""
    from mock_servers import fixtures_root
    from mock_servers.engine._script import load_script, parse_script
    from mock_servers.http import create_app, mock_of
    from mock_servers.http._asgi_transport import StreamingASGITransport

    loaded = load_script(fixtures_root() / script) if isinstance(script, str) else None
    app = create_app(loaded or parse_script(script), revision=revision)

    def factory() -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=StreamingASGITransport(app))

    return ReferenceClient(http_client_factory=factory), mock_of(app)


@asynccontextmanager
async def _with_mock(
    script: str | dict[str, Any], revision: str, events: list[ClientEvent] | None = None
) -> AsyncIterator[tuple[ReferenceClient, Any]]:
    """A connected client on an HTTP mock; afterwards, checks that every step ran."""
    client, mock = _mock_client(script, revision)
    on_event = None if events is None else events.append
    try:
        with anyio.fail_after(WAIT):
            await client.connect(
                HttpTarget("http://127.0.0.1" + mock.settings.path),
                _options(revision, on_event=on_event),
            )
            yield client, mock
    finally:
        with anyio.fail_after(15):
            await client.close()
    mock.finish()
    assert list(mock.transcript.of_kind("unconsumed")) == []


@pytest.mark.anyio
@pytest.mark.parametrize("revision", ["2025-03-26", "2025-11-25", MODERN])
async def test_mock_pagination(revision: str) -> None:
    async with _with_mock("tools/pagination.json", revision) as (client, _):
        names = [tool["name"] for tool in (await client.list_tools())["tools"]]
        assert names == ["alpha", "beta", "gamma", "delta"]  # TL-1: cursors verbatim


@pytest.mark.anyio
async def test_mock_session_expiry() -> None:
    async with _with_mock("http/session-expiry.json", "2025-11-25") as (client, mock):
        await client.list_tools()
        for _ in range(2):  # HT-9: the second call meets a 404 and a new session
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"
        methods = [m.get("method") for m in mock.transcript.client_messages()]
        assert methods.count("initialize") == 2


@pytest.mark.anyio
@pytest.mark.parametrize("fixture", ["http/sse-features.json", "http/resumable-stream.json"])
async def test_mock_sse_streams(fixture: str) -> None:
    # Priming events, comments, multi-line data, 7-byte chunks; a stream closed after
    # its priming event and resumed with GET + Last-Event-ID after `retry` (HT-7).
    events: list[ClientEvent] = []
    async with _with_mock(fixture, "2025-11-25", events) as (client, _):
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"
    assert any(e.method == "notifications/message" for e in events)


@pytest.mark.anyio
async def test_mock_server_requests() -> None:
    # A ping on the GET stream and one inside a tools/call stream, both answered (PING).
    async with _with_mock("http/server-requests.json", "2025-11-25") as (client, _):
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"


@pytest.mark.anyio
async def test_mock_version_retry() -> None:
    async with _with_mock("stateless/version-retry.json", MODERN) as (client, mock):
        assert [t["name"] for t in (await client.list_tools())["tools"]] == ["add"]
        lists = [m for m in mock.transcript.client_messages() if m.get("method") == "tools/list"]
        assert len(lists) == 2  # LC-M2: one retry...
        assert lists[0]["id"] != lists[1]["id"]  # ...under a new id


@pytest.mark.anyio
async def test_mock_dropped_connections() -> None:
    async with _with_mock("http/drop-connection.json", "2025-11-25") as (client, _):
        await client.list_tools()
        for a in (1, 2):  # a JSON body cut short, then an SSE stream with no event id
            with pytest.raises(ClientError) as caught:
                await client.call_tool("add", {"a": a, "b": 2})
            assert caught.value.kind == "transport"


@pytest.mark.anyio
async def test_mock_http_era_detection_falls_back() -> None:
    # HM-7: a legacy server answers the server/discover probe with an error (-32601 here,
    # in a 200); the client falls back to initialize on the same URL.
    client, mock = _mock_client("tools/list-and-call.json", "2025-11-25")
    try:
        with anyio.fail_after(WAIT):
            url = "http://127.0.0.1" + mock.settings.path
            info = await client.connect(HttpTarget(url), _options(None))
            assert info["protocolVersion"] == "2025-11-25"
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["isError"] is False
            with pytest.raises(ClientError) as caught:
                await client.call_tool("flaky", {})
            assert (caught.value.kind, caught.value.code) == ("protocol", -32603)
    finally:
        with anyio.fail_after(15):
            await client.close()
    methods = [m.get("method") for m in mock.transcript.client_messages()]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


@pytest.mark.anyio
async def test_mock_stdio_era_detection_falls_back(tmp_path: Path, client: ReferenceClient) -> None:
    from mock_servers import fixtures_root
    from mock_servers.engine._transcript import read_transcript
    from mock_servers.stdio._server import stdio_command

    record = tmp_path / "transcript.jsonl"
    script = fixtures_root() / "stdio/list-and-call.json"
    argv = stdio_command(script, revision="2025-06-18", transcript=record)
    with anyio.fail_after(WAIT):
        info = await client.connect(StdioTarget(tuple(argv)), _options(None))
        assert info["protocolVersion"] == "2025-06-18"  # LC-M4: the probe failed: legacy
        await client.list_tools()
        await client.close()
    entries = read_transcript(record)["entries"]
    sent = [e["message"].get("method") for e in entries if e["kind"] == "message"]
    assert sent[:2] == ["server/discover", None]  # the probe and the server's error
    assert "initialize" in sent
    assert any(e["kind"] == "stdin_eof" for e in entries)  # ST-4: stdin closed first


@pytest.mark.anyio
async def test_mock_broken_stream_is_reissued() -> None:
    script = {
        "format_version": 1,
        "name": "stateless-broken-stream",
        "revisions": [MODERN],
        "server": {"capabilities": {"tools": {}}},
        "steps": [
            {
                "expect": {"method": "tools/call"},
                "reply": {"as": "sse", "fault": {"kind": "drop_connection"}},
            },
            {"expect": {"method": "tools/call"}, "reply": {"result": {"content": []}}},
        ],
    }
    async with _with_mock(script, MODERN) as (client, mock):
        assert (await client.call_tool("add", {"a": 1}))["content"] == []
        calls = [m for m in mock.transcript.client_messages() if m.get("method") == "tools/call"]
        assert len(calls) == 2  # HM-5: the same request again...
        assert calls[0]["id"] != calls[1]["id"]  # ...under a new id


@pytest.mark.anyio
async def test_mock_initialize_is_never_cancelled() -> None:
    client, mock = _mock_client("lifecycle/slow-initialize.json", "2025-11-25")
    url = "http://127.0.0.1" + mock.settings.path
    options = ConnectOptions(protocol_version="2025-11-25", timeout=0.1)
    with anyio.fail_after(WAIT), pytest.raises(ClientError) as caught:
        await client.connect(HttpTarget(url), options)
    assert caught.value.kind == "timeout"
    methods = [m.get("method") for m in mock.transcript.client_messages()]
    assert methods == ["initialize"]  # LC-8: no notifications/cancelled for it


@pytest.mark.anyio
async def test_mock_stdio_faults(tmp_path: Path, client: ReferenceClient) -> None:
    from mock_servers import fixtures_root
    from mock_servers.engine._transcript import read_transcript
    from mock_servers.stdio._server import stdio_command

    record = tmp_path / "transcript.jsonl"
    argv = stdio_command(fixtures_root() / "stdio/faults.json", transcript=record)
    roots = Handlers(roots=({"uri": "file:///work"},))
    with anyio.fail_after(WAIT):
        await client.connect(StdioTarget(tuple(argv)), _options(None, handlers=roots))
        for name in ("stderr", "hang", "garbage"):  # each fault replaces the answer
            with pytest.raises(ClientError) as caught:
                await client.call_tool(name, {}, timeout=0.5)
            assert caught.value.kind == "timeout"
        # ST-3: a stderr flood is no error; a roots/list in between is answered.
        assert (await client.call_tool("ask", {}))["content"][0]["text"] == "asked"
        with pytest.raises(ClientError) as caught:
            await client.call_tool("crash", {})
        assert caught.value.kind == "transport"
        await client.close()
    messages = [e["message"] for e in read_transcript(record)["entries"] if e["kind"] == "message"]
    sent = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert len(sent) == 3  # LC-9: every timed-out call was cancelled


class _HoldsTheCall:
    """A stdio transport whose tools/call never gets its turn to write."""

    def __init__(self, inner: StdioTransport) -> None:
        self.inner = inner

    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        if message.get("method") == "tools/call":
            await anyio.sleep_forever()  # waits for the pipe, as behind a long write
        await self.inner.send(message, headers, written)

    def release(self, request_id: RequestId) -> None:
        self.inner.release(request_id)

    async def close(self) -> None:
        await self.inner.close()


@pytest.mark.anyio
@pytest.mark.parametrize("ends", ["cancelled", "timed out"])
async def test_a_call_ended_before_it_was_written_is_not_cancelled_on_the_wire(
    tmp_path: Path, client: ReferenceClient, ends: str
) -> None:
    # CANCEL: a notifications/cancelled names only a request that was sent. A call still
    # waiting for its turn to write sends nothing when its caller gives up or it times out.
    from mock_servers import fixtures_root
    from mock_servers.engine._transcript import read_transcript
    from mock_servers.stdio._server import stdio_command

    record = tmp_path / "transcript.jsonl"
    argv = stdio_command(fixtures_root() / "stdio/faults.json", transcript=record)
    with anyio.fail_after(WAIT):
        await client.connect(StdioTarget(tuple(argv)), _options(None))
        assert isinstance(client._transport, StdioTransport)
        client._transport = _HoldsTheCall(client._transport)
        if ends == "cancelled":
            with anyio.move_on_after(0.2):
                await client.call_tool("hang", {})
        else:
            with pytest.raises(ClientError) as caught:
                await client.call_tool("hang", {}, timeout=0.2)
            assert caught.value.kind == "timeout"
        await client.list_tools()  # answered: what came before it was read
        await client.close()
    messages = [e["message"] for e in read_transcript(record)["entries"] if e["kind"] == "message"]
    methods = [m.get("method") for m in messages if "method" in m]
    assert methods[-3:] == ["initialize", "notifications/initialized", "tools/list"], methods
    assert not {"tools/call", "notifications/cancelled"} & set(methods), methods
