"""Tests for mock_servers.http._asgi_transport.StreamingASGITransport.

Synchronisation between the test and the app is by anyio events and memory streams only,
never sleeps; every wait is bounded by anyio.fail_after(WAIT), which a passing run never
gets near.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import httpx
import pytest
from _machine import within
from anyio.lowlevel import checkpoint
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from mock_servers.http._asgi_transport import ClientDisconnectedError, StreamingASGITransport

pytestmark = pytest.mark.anyio

WAIT = within(5.0)
BASE_URL = "http://testserver"

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SSEControl:
    """Handshake between a test and the /sse endpoint."""

    def __init__(self) -> None:
        self.first_sent = anyio.Event()  # the app is blocked before its second event
        self.release = anyio.Event()  # the test lets the second event through
        self.finished = anyio.Event()  # the generator's finally ran
        self.cancelled = False


def make_app(sse: SSEControl | None = None) -> Starlette:
    sse = sse or SSEControl()

    async def echo(request: Request) -> Response:
        body = await request.body()
        return JSONResponse(
            {
                "json": json.loads(body),
                "x-test": request.headers.get("x-test"),
                "content-type": request.headers.get("content-type"),
            },
            headers={"X-Server": "mock"},
        )

    async def notify(request: Request) -> Response:
        return Response(status_code=202)

    async def sse_events() -> AsyncIterator[str]:
        try:
            yield "data: one\n\n"
            sse.first_sent.set()
            with anyio.fail_after(WAIT):
                await sse.release.wait()
            yield "data: two\n\n"
        except anyio.get_cancelled_exc_class():
            sse.cancelled = True
            raise
        finally:
            sse.finished.set()

    async def sse_endpoint(request: Request) -> Response:
        return StreamingResponse(sse_events(), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/echo", echo, methods=["POST"]),
            Route("/notify", notify, methods=["POST"]),
            Route("/sse", sse_endpoint),
        ]
    )


@asynccontextmanager
async def body_chunks(response: httpx.Response) -> AsyncIterator[AsyncIterator[bytes]]:
    """The response's raw chunks, with the iterator closed on exit (trio warns otherwise)."""
    chunks = response.aiter_raw()
    try:
        yield chunks
    finally:
        await cast("AsyncGenerator[bytes, None]", chunks).aclose()


async def first_chunk(response: httpx.Response) -> bytes:
    async with body_chunks(response) as chunks:
        return await anext(chunks)


def other_tasks() -> set[asyncio.Task[Any]]:
    return asyncio.all_tasks() - {asyncio.current_task()}


# -- plain request/response ----------------------------------------------------------------


async def test_json_round_trip_with_headers_both_ways() -> None:
    transport = StreamingASGITransport(make_app())
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            response = await client.post("/echo", json={"a": 1}, headers={"X-Test": "yes"})
    assert response.status_code == 200
    assert response.headers["x-server"] == "mock"
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "json": {"a": 1},
        "x-test": "yes",
        "content-type": "application/json",
    }


@pytest.mark.parametrize(
    ("method", "path", "status", "content"),
    [
        ("POST", "/notify", 202, b""),
        ("GET", "/missing", 404, b"Not Found"),
        ("GET", "/echo", 405, b"Method Not Allowed"),
    ],
)
async def test_status_codes(method: str, path: str, status: int, content: bytes) -> None:
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(make_app()), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT):
            response = await client.request(method, path)
    assert response.status_code == status
    assert response.content == content


async def test_scope() -> None:
    scopes: list[MutableMapping[str, Any]] = []

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        scopes.append(scope)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    transport = StreamingASGITransport(app, root_path="/root", client=("10.1.2.3", 4567))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            await client.get("/root/p%20q/r?x=1&y=%20z", headers={"X-Mixed-Case": "Value"})
    (scope,) = scopes
    assert scope["type"] == "http"
    assert scope["asgi"] == {"version": "3.0", "spec_version": "2.3"}
    assert scope["http_version"] == "1.1"
    assert scope["method"] == "GET"
    assert scope["scheme"] == "http"
    assert scope["path"] == "/root/p q/r"
    assert scope["raw_path"] == b"/root/p%20q/r"
    assert scope["query_string"] == b"x=1&y=%20z"
    assert scope["root_path"] == "/root"
    assert scope["client"] == ("10.1.2.3", 4567)
    assert scope["server"] == ("testserver", 80)
    assert (b"x-mixed-case", b"Value") in scope["headers"]
    assert (b"host", b"testserver") in scope["headers"]
    assert all(name == name.lower() for name, _ in scope["headers"])


async def test_head_response_has_no_body() -> None:
    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ignored for HEAD"})

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT):
            response = await client.head("/")
    assert response.status_code == 200
    assert response.content == b""


# -- request body --------------------------------------------------------------------------


def recording_app(
    messages: list[Message], got_first: anyio.Event
) -> Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]:
    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            messages.append(message)
            got_first.set()
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    return app


async def test_request_body_is_streamed_to_the_app() -> None:
    messages: list[Message] = []
    got_first = anyio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield b"first"
        # Only continue once the app has the first chunk: a transport that buffered the
        # request body before calling the app would deadlock here.
        with anyio.fail_after(WAIT):
            await got_first.wait()
        yield b"second"

    transport = StreamingASGITransport(recording_app(messages, got_first))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            response = await client.post("/", content=body())
    assert response.content == b"ok"
    assert [(m["type"], m["body"], m["more_body"]) for m in messages] == [
        ("http.request", b"first", True),
        ("http.request", b"second", True),
        ("http.request", b"", False),
    ]


async def test_in_memory_request_body_is_one_message() -> None:
    messages: list[Message] = []
    transport = StreamingASGITransport(recording_app(messages, anyio.Event()))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            await client.post("/", content=b"whole body")
    assert messages == [{"type": "http.request", "body": b"whole body", "more_body": False}]


# -- streaming responses -------------------------------------------------------------------


async def test_sse_first_event_arrives_while_the_app_is_still_blocked() -> None:
    sse = SSEControl()
    transport = StreamingASGITransport(make_app(sse))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/sse") as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                async with body_chunks(response) as chunks:
                    assert await anext(chunks) == b"data: one\n\n"
                    # The app cannot produce the second event until we release it.
                    assert not sse.release.is_set()
                    sse.release.set()
                    assert [chunk async for chunk in chunks] == [b"data: two\n\n"]
    assert sse.finished.is_set()
    assert not sse.cancelled


async def test_httpx_asgi_transport_buffers_the_same_sse_response() -> None:
    """The contrast: httpx.ASGITransport returns nothing until the app has finished."""
    sse = SSEControl()
    responses: list[httpx.Response] = []
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(make_app(sse)), base_url=BASE_URL
    ) as client:

        async def get() -> None:
            responses.append(await client.get("/sse"))

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(get)
                await sse.first_sent.wait()
                # The first event is sent and the app is blocked before the second: a
                # streaming transport would have returned the response by now. This one
                # cannot, since it awaits the whole app before returning anything.
                assert responses == []
                sse.release.set()
    (response,) = responses
    assert response.content == b"data: one\n\ndata: two\n\n"


async def test_concurrent_sse_stream_and_posts() -> None:
    """An open GET event stream plus POSTs on the same client, as MCP Streamable HTTP does."""
    # POST /publish feeds the open GET /events stream.
    publish_send, publish_recv = anyio.create_memory_object_stream[str](10)

    async def events_stream() -> AsyncIterator[str]:
        yield "event: ready\n\n"
        async for item in publish_recv:
            yield f"data: {item}\n\n"

    async def events_endpoint(request: Request) -> Response:
        return StreamingResponse(events_stream(), media_type="text/event-stream")

    async def publish(request: Request) -> Response:
        await publish_send.send((await request.json())["text"])
        return Response(status_code=202)

    app = Starlette(
        routes=[Route("/events", events_endpoint), Route("/publish", publish, methods=["POST"])]
    )
    async with (
        publish_send,
        publish_recv,
        httpx.AsyncClient(transport=StreamingASGITransport(app), base_url=BASE_URL) as client,
    ):
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/events") as events, body_chunks(events) as chunks:
                assert await anext(chunks) == b"event: ready\n\n"
                for text in ("hello", "world"):
                    posted = await client.post("/publish", json={"text": text})
                    assert posted.status_code == 202
                    assert await anext(chunks) == f"data: {text}\n\n".encode()


async def test_many_concurrent_requests() -> None:
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(make_app()), base_url=BASE_URL
    ) as client:
        results: dict[int, Any] = {}

        async def post(i: int) -> None:
            results[i] = (await client.post("/echo", json={"i": i})).json()["json"]

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(post, i)
    assert results == {i: {"i": i} for i in range(20)}


# -- client going away ---------------------------------------------------------------------


async def test_app_sees_http_disconnect_when_the_client_closes_early() -> None:
    received: list[Message] = []
    app_done = anyio.Event()

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"first", "more_body": True})
            while True:
                message = await receive()
                received.append(message)
                if message["type"] == "http.disconnect":
                    return
        finally:
            app_done.set()

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/") as response:
                assert await first_chunk(response) == b"first"
            # Closing the response waited for the app to return.
            assert app_done.is_set()
    assert received == [
        {"type": "http.request", "body": b"", "more_body": False},
        {"type": "http.disconnect"},
    ]


async def test_starlette_stream_is_stopped_when_the_client_closes_early() -> None:
    sse = SSEControl()
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(make_app(sse)), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/sse") as response:
                assert await first_chunk(response) == b"data: one\n\n"
                await sse.first_sent.wait()
            # Starlette (spec 2.3) listens for http.disconnect and cancels the generator.
            assert sse.finished.is_set()
    assert sse.cancelled
    assert not sse.release.is_set()


async def test_app_ignoring_disconnect_is_cancelled_after_app_exit_timeout() -> None:
    # With spec 2.4 Starlette stops listening for http.disconnect (it relies on send()
    # raising), so a generator idling between events never notices the client left.
    sse = SSEControl()
    transport = StreamingASGITransport(make_app(sse), spec_version="2.4", app_exit_timeout=0)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/sse") as response:
                assert await first_chunk(response) == b"data: one\n\n"
                await sse.first_sent.wait()
            assert sse.finished.is_set()
    assert sse.cancelled


@pytest.mark.parametrize("spec_version", ["2.3", "2.4"])
async def test_client_that_stops_reading_does_not_deadlock_the_app(spec_version: str) -> None:
    sent: list[int] = []
    errors: list[BaseException] = []

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        try:
            for i in range(1000):
                await send({"type": "http.response.body", "body": b"x", "more_body": True})
                sent.append(i)
            await send({"type": "http.response.body", "body": b""})
        except OSError as exc:
            errors.append(exc)

    transport = StreamingASGITransport(
        app,
        spec_version=spec_version,  # type: ignore[arg-type]
        buffer_size=1,
    )
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/") as response:
                assert await first_chunk(response) == b"x"
                # The app is now blocked on the full channel.
                assert len(sent) < 10
    if spec_version == "2.3":
        # Messages after the disconnect are dropped silently, as uvicorn does.
        assert len(sent) == 1000
        assert errors == []
    else:
        assert len(sent) < 10
        assert len(errors) == 1
        assert isinstance(errors[0], ClientDisconnectedError)


async def test_cancelling_the_request_before_the_response_starts_disconnects() -> None:
    waiting = anyio.Event()
    received: list[Message] = []

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        received.append(await receive())
        waiting.set()
        received.append(await receive())  # blocks until the client goes away

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.get, "/")
                await waiting.wait()
                tg.cancel_scope.cancel()
    assert received[-1] == {"type": "http.disconnect"}


async def test_read_timeout_while_waiting_for_a_chunk() -> None:
    received: list[Message] = []

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        while (message := await receive())["type"] != "http.disconnect":
            pass
        received.append(message)

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url=BASE_URL, timeout=0.05
    ) as client:
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/") as response:
                assert response.status_code == 200
                with pytest.raises(httpx.ReadTimeout):
                    await response.aread()
    assert received == [{"type": "http.disconnect"}]


# -- app errors ----------------------------------------------------------------------------


async def failing_before_start(
    scope: MutableMapping[str, Any], receive: Receive, send: Send
) -> None:
    raise ValueError("boom before start")


async def returning_without_response(
    scope: MutableMapping[str, Any], receive: Receive, send: Send
) -> None:
    return None


async def test_app_exception_before_start_is_reraised_by_default() -> None:
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(failing_before_start), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT), pytest.raises(ValueError, match="boom before start"):
            await client.get("/")


async def test_app_returning_without_response_raises_by_default() -> None:
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(returning_without_response), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT), pytest.raises(RuntimeError, match="without starting"):
            await client.get("/")


@pytest.mark.parametrize("app", [failing_before_start, returning_without_response])
async def test_app_failure_before_start_is_a_500_when_not_raising(
    app: Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]],
) -> None:
    transport = StreamingASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            response = await client.get("/")
    assert response.status_code == 500
    assert response.text == "Internal Server Error"


@pytest.mark.parametrize("raise_app_exceptions", [True, False])
async def test_app_exception_after_start_breaks_the_stream(raise_app_exceptions: bool) -> None:
    proceed = anyio.Event()

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        with anyio.fail_after(WAIT):
            await proceed.wait()
        raise ValueError("boom mid-response")

    transport = StreamingASGITransport(app, raise_app_exceptions=raise_app_exceptions)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        with anyio.fail_after(WAIT):
            async with client.stream("GET", "/") as response:
                assert response.status_code == 200
                async with body_chunks(response) as chunks:
                    assert await anext(chunks) == b"partial"
                    proceed.set()
                    with pytest.raises(httpx.ReadError) as excinfo:
                        await anext(chunks)
    assert isinstance(excinfo.value.__cause__, ValueError)
    assert str(excinfo.value.__cause__) == "boom mid-response"


async def test_app_exception_after_start_fails_a_buffered_request() -> None:
    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        raise ValueError("boom mid-response")

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT), pytest.raises(httpx.ReadError):
            await client.get("/")


async def test_app_returning_mid_body_is_a_protocol_error() -> None:
    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT), pytest.raises(httpx.RemoteProtocolError):
            await client.get("/")


# -- lifetimes -----------------------------------------------------------------------------


async def test_closing_the_client_ends_open_streams_and_leaks_no_task() -> None:
    sse = SSEControl()
    before = other_tasks()
    client = httpx.AsyncClient(transport=StreamingASGITransport(make_app(sse)), base_url=BASE_URL)
    try:
        with anyio.fail_after(WAIT):
            response = await client.send(client.build_request("GET", "/sse"), stream=True)
            async with body_chunks(response) as chunks:
                assert await anext(chunks) == b"data: one\n\n"
                await sse.first_sent.wait()
                assert (await client.post("/echo", json=[])).status_code == 200
                assert len(other_tasks() - before) >= 1  # the SSE app task is running
                # The response is still open: closing the client must end its app task.
                await client.aclose()
                assert sse.finished.is_set()
                assert other_tasks() - before == set()
                with pytest.raises(httpx.ReadError, match="transport was closed"):
                    await anext(chunks)
            await response.aclose()
    finally:
        await client.aclose()


async def test_request_waiting_for_its_start_fails_when_the_transport_closes() -> None:
    waiting = anyio.Event()
    errors: list[BaseException] = []

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        waiting.set()
        await anyio.Event().wait()  # never answers, ignores http.disconnect

    transport = StreamingASGITransport(app, app_exit_timeout=0)
    client = httpx.AsyncClient(transport=transport, base_url=BASE_URL)

    async def get() -> None:
        try:
            await client.get("/")
        except httpx.ReadError as exc:
            errors.append(exc)

    before = other_tasks()
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(get)
            await waiting.wait()
            await client.aclose()
    assert len(errors) == 1
    assert other_tasks() - before == set()


async def test_unentered_client_and_transport_work() -> None:
    """Clients that never enter the transport: tasks end when responses close."""
    sse = SSEControl()
    before = other_tasks()
    client = httpx.AsyncClient(transport=StreamingASGITransport(make_app(sse)), base_url=BASE_URL)
    try:
        with anyio.fail_after(WAIT):
            assert (await client.post("/echo", json={"x": 1})).json()["json"] == {"x": 1}
            async with client.stream("GET", "/sse") as response:
                assert await first_chunk(response) == b"data: one\n\n"
            assert sse.finished.is_set()
            assert other_tasks() - before == set()
    finally:
        await client.aclose()


async def test_transport_is_reusable_after_a_client_closed_it() -> None:
    transport = StreamingASGITransport(make_app())
    for i in range(2):
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            with anyio.fail_after(WAIT):
                assert (await client.post("/echo", json=i)).json()["json"] == i


async def test_background_work_after_the_response_finishes_before_close_returns() -> None:
    finished = anyio.Event()

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})
        # Like a Starlette BackgroundTask: runs after the response is complete.
        await checkpoint()
        finished.set()

    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url=BASE_URL
    ) as client:
        with anyio.fail_after(WAIT):
            assert (await client.get("/")).content == b"done"
        assert finished.is_set()


def test_rejects_unknown_spec_version() -> None:
    with pytest.raises(ValueError, match="spec_version"):
        StreamingASGITransport(make_app(), spec_version="3.0")  # type: ignore[arg-type]
