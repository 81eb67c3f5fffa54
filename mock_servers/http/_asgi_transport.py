"""A streaming, in-process ASGI transport for ``httpx.AsyncClient``.

``httpx.ASGITransport`` awaits the whole ASGI app before it returns a response, so a
Server-Sent-Events response that stays open never returns: the client waits for the body
while the server waits for the client's next request. ``StreamingASGITransport`` returns
the response as soon as the app sends ``http.response.start`` and streams each body chunk
as the app sends it, which lets an MCP client talk to a Starlette mock server without
sockets.

Lifetime of the app tasks
-------------------------
Every request runs the app in its own detached task (``loop.create_task`` on asyncio,
a trio system task on trio), because the app must outlive ``handle_async_request`` while
the body streams and httpx gives a transport no task group that spans a request. Each
task is owned by its response:

* Closing the response (``Response.aclose()``, leaving ``client.stream(...)``, or reading a
  non-streamed response to the end) sends ``http.disconnect`` to the app if it is still
  running, waits up to ``app_exit_timeout`` seconds for it to return by itself (finally
  blocks, background tasks), then cancels it and waits for the cancellation to finish.
* ``aclose()`` on the transport (which ``AsyncClient.aclose()`` and leaving
  ``async with AsyncClient(...)`` call) does the same for every app task still alive:
  responses that were never closed and requests still waiting for their response start.

So the transport needs no ``__aenter__``: an ``AsyncClient`` that is never entered works
as long as its responses are closed (httpx does so for non-streamed requests) or the client
is closed at the end. The transport stays usable after ``aclose()``, so several clients may
share one. Tasks that nobody closes are cancelled when the event loop shuts down.

Not handled: the ``lifespan`` protocol (run the app's lifespan yourself, e.g. with
``app.router.lifespan_context(app)``), websockets, and the ASGI extensions (pathsend,
trailers...), which are therefore not advertised in the scope.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, MutableMapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import anyio
import httpx

__all__ = ["ASGIApp", "ClientDisconnectedError", "StreamingASGITransport"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_logger = logging.getLogger(__name__)
_DEFAULT_PORTS = {"http": 80, "https": 443}
# After cancelling an app task, how long to wait for it to unwind. Only an app that
# swallows cancellation gets near this; the task is then abandoned, not waited on forever.
_CANCEL_WAIT = 5.0
# asyncio keeps only weak references to tasks: hold the app tasks so an abandoned client
# cannot get a running app garbage-collected mid-await.
_RUNNING_TASKS: set[asyncio.Task[None]] = set()


class ClientDisconnectedError(OSError):
    """Raised by ``send`` after the client went away, when ``spec_version`` is ``"2.4"``.

    ASGI HTTP 2.4 asks servers to raise an ``OSError`` there (Starlette turns it into
    ``ClientDisconnect``); earlier versions silently drop the message, as uvicorn does.
    """


@dataclass(frozen=True)
class _Start:
    status: int
    headers: list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class _Body:
    data: bytes
    more: bool


def _spawn(fn: Callable[[], Coroutine[Any, Any, None]], name: str) -> None:
    """Start ``fn()`` as a task that no task group owns (see the module docstring)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        task = loop.create_task(fn(), name=name)
        _RUNNING_TASKS.add(task)
        task.add_done_callback(_RUNNING_TASKS.discard)
        return
    # Not asyncio, so trio (anyio's only other backend). Imported lazily: trio is optional.
    trio: Any = importlib.import_module("trio")
    # A system task runs in the system context, not the caller's; give it the caller's
    # context the way asyncio.create_task does. It must never raise (that would crash the
    # run): _Exchange.run catches the app's exceptions.
    trio.lowlevel.spawn_system_task(fn, name=name, context=contextvars.copy_context())


class _Exchange:
    """One request: the app task, its ASGI ``receive``/``send``, and the body channel."""

    def __init__(
        self,
        transport: StreamingASGITransport,
        request: httpx.Request,
        scope: Scope,
    ) -> None:
        stream = request.stream
        if not isinstance(stream, httpx.AsyncByteStream):
            raise TypeError("StreamingASGITransport needs an httpx.AsyncClient request")
        self._transport = transport
        self.request = request
        self.scope = scope
        self.is_head = request.method == "HEAD"
        timeout = request.extensions.get("timeout")
        self._read_timeout: float | None = (
            timeout.get("read") if isinstance(timeout, dict) else None
        )
        # Bounded, so an app producing faster than the client reads blocks in send()
        # (backpressure) instead of buffering without limit.
        self._send_ch, self._recv_ch = anyio.create_memory_object_stream[_Start | _Body](
            transport.buffer_size
        )
        # Once set, receive() answers http.disconnect: the client closed the response, the
        # transport shut down, or the response is complete (as uvicorn does).
        self._gone = anyio.Event()
        self.client_closed = False
        self.transport_closed = False
        self.done = anyio.Event()
        self.cancel_scope = anyio.CancelScope()
        self.error: BaseException | None = None
        self._started = False
        self._completed = False
        self._request_stream = stream
        self._request_chunks: AsyncIterator[bytes] | None = None
        self._request_complete = False

    # -- app side ---------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            with self.cancel_scope:
                await self._transport.app(self.scope, self._receive, self._send)
        except (anyio.get_cancelled_exc_class(), KeyboardInterrupt, SystemExit):
            raise  # a cancellation from outside (event loop shutdown) is not an app error
        except BaseException as exc:
            # Captured, never left to the event loop: the client side reports it.
            self.error = exc
            if self.client_closed:  # often the app's reaction to the disconnect itself
                _logger.debug("Exception in ASGI application after disconnect", exc_info=exc)
            elif self._started or not self._transport.raise_app_exceptions:
                # Not re-raised as is to the caller: log it, as a real server would.
                _logger.error("Exception in ASGI application", exc_info=exc)
        finally:
            self._send_ch.close()  # EndOfStream for the reader, after self.error is set
            self.done.set()
            self._transport._live.discard(self)

    async def _receive(self) -> Message:
        if not self._request_complete and not self._gone.is_set():
            return await self._next_request_message()
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def _next_request_message(self) -> Message:
        stream = self._request_stream
        if isinstance(stream, httpx.ByteStream):
            # An in-memory body (content=/json=/data=): one message, like a real server
            # that read it in one go.
            self._request_complete = True
            body = b"".join([chunk async for chunk in stream])
            return {"type": "http.request", "body": body, "more_body": False}
        if self._request_chunks is None:
            self._request_chunks = stream.__aiter__()
        # No look-ahead: each chunk goes to the app as soon as the client produced it, so a
        # client that waits for the app before producing the next chunk does not deadlock.
        # The end is therefore signalled by an extra empty message.
        try:
            chunk = await self._request_chunks.__anext__()
        except StopAsyncIteration:
            self._request_complete = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": bytes(chunk), "more_body": True}

    async def _send(self, message: Message) -> None:
        kind = message.get("type")
        item: _Start | _Body
        if kind == "http.response.start":
            if self._started:
                raise RuntimeError("ASGI app sent 'http.response.start' twice")
            self._started = True
            headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", [])]
            item = _Start(int(message["status"]), headers)
        elif kind == "http.response.body":
            if not self._started:
                raise RuntimeError("ASGI app sent 'http.response.body' before the start")
            if self._completed:
                raise RuntimeError("ASGI app sent 'http.response.body' after the last one")
            item = _Body(bytes(message.get("body", b"")), bool(message.get("more_body", False)))
            self._completed = not item.more
        else:
            raise RuntimeError(f"ASGI app sent an unexpected message type {kind!r}")

        if self.client_closed:
            self._client_gone()
            return
        try:
            await self._send_ch.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            # The client closed the response while we were blocked on a full channel.
            self._client_gone()
            return
        if self._completed:
            self._gone.set()

    def _client_gone(self) -> None:
        if self._transport.raise_on_disconnected_send:
            raise ClientDisconnectedError("the client closed the response")

    # -- client side ------------------------------------------------------------------------

    async def next_item(self) -> _Start | _Body | None:
        """The app's next message, or None once the app task has ended (or we closed)."""
        try:
            with anyio.fail_after(self._read_timeout):
                return await self._recv_ch.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None
        except TimeoutError as exc:
            raise httpx.ReadTimeout(
                "timed out waiting for the ASGI app", request=self.request
            ) from exc

    def broken_stream_error(self) -> httpx.TransportError:
        """What the client sees when the body ends before the app's last chunk."""
        if self.transport_closed:
            return httpx.ReadError("the transport was closed", request=self.request)
        if self.error is not None:
            # Like a server whose handler crashed and dropped the connection.
            err = httpx.ReadError(
                f"ASGI app raised {type(self.error).__name__} after starting the response",
                request=self.request,
            )
            err.__cause__ = self.error
            return err
        return httpx.RemoteProtocolError(
            "ASGI app returned without completing the response body", request=self.request
        )

    def discard(self) -> None:
        """Release the channel of an exchange whose app task never started."""
        self._send_ch.close()
        self._recv_ch.close()

    async def close(self, *, by_transport: bool = False) -> None:
        """Disconnect, let the app return within the grace period, else cancel it."""
        if by_transport:
            self.transport_closed = True
        self.client_closed = True
        self._gone.set()
        self._recv_ch.close()  # unblocks an app stuck in send() on a full channel
        # Shielded (this runs in finally blocks and under cancellation) but bounded.
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(self._transport.app_exit_timeout):
                await self.done.wait()
            if not self.done.is_set():
                self.cancel_scope.cancel()
                with anyio.move_on_after(_CANCEL_WAIT):
                    await self.done.wait()


class _ResponseStream(httpx.AsyncByteStream):
    """Yields body chunks as the app sends them; closing it ends the app's request."""

    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange
        self._ended = False

    # An iterator object rather than an async generator: no generator left suspended at a
    # yield for the garbage collector to finalise in some other task.
    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        while not self._ended:
            item = await self._exchange.next_item()
            if item is None:
                self._ended = True
                raise self._exchange.broken_stream_error()
            if isinstance(item, _Start):  # pragma: no cover - _send rejects a second start
                raise RuntimeError("unexpected second response start")
            self._ended = not item.more
            if item.data and not self._exchange.is_head:
                return item.data
        raise StopAsyncIteration

    async def aclose(self) -> None:
        await self._exchange.close()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """Runs an ASGI 3 app in-process and streams its responses to an ``httpx.AsyncClient``.

    Arguments:
        app: the ASGI application.
        client: ``scope["client"]``.
        root_path: ``scope["root_path"]``; ``path`` is the full request path, as ASGI says.
        raise_app_exceptions: if the app raises (or returns) before starting its response,
            re-raise its exception from the request (True, like ``httpx.ASGITransport``) or
            answer 500 (False). Once the response has started, the body stream always ends
            with ``httpx.ReadError`` (its ``__cause__`` is the app's exception), the way a
            dropped connection looks to a real client.
        spec_version: ``scope["asgi"]["spec_version"]``. "2.3" (uvicorn's) silently drops
            messages sent after the client went away; "2.4" raises
            ``ClientDisconnectedError`` from ``send`` then. Both send ``http.disconnect``.
        buffer_size: body messages buffered between the app and the client before the
            app's ``send`` blocks.
        app_exit_timeout: seconds that closing a response, or the transport, waits for the
            app to return by itself before cancelling it.

    The client's read timeout (``httpx.Timeout.read``) bounds each wait for the response
    start and for each body chunk, raising ``httpx.ReadTimeout``. See the module docstring
    for who owns the app tasks.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        client: tuple[str, int] = ("127.0.0.1", 50000),
        root_path: str = "",
        raise_app_exceptions: bool = True,
        spec_version: Literal["2.3", "2.4"] = "2.3",
        buffer_size: int = 4,
        app_exit_timeout: float = 5.0,
    ) -> None:
        if spec_version not in ("2.3", "2.4"):
            raise ValueError(f"spec_version must be '2.3' or '2.4', not {spec_version!r}")
        if buffer_size < 0:
            raise ValueError("buffer_size must be >= 0")
        self.app = app
        self.client = client
        self.root_path = root_path
        self.raise_app_exceptions = raise_app_exceptions
        self.spec_version = spec_version
        self.raise_on_disconnected_send = spec_version == "2.4"
        self.buffer_size = buffer_size
        self.app_exit_timeout = app_exit_timeout
        self._live: set[_Exchange] = set()

    def _scope(self, request: httpx.Request) -> Scope:
        url = request.url
        port = url.port if url.port is not None else _DEFAULT_PORTS.get(url.scheme, 80)
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": self.spec_version},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,  # percent-decoded by httpx
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "query_string": url.query,
            "root_path": self.root_path,
            "headers": [(name.lower(), value) for name, value in request.headers.raw],
            "client": self.client,
            "server": (url.host, port),
        }

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        exchange = _Exchange(self, request, self._scope(request))
        try:
            _spawn(exchange.run, name=f"asgi-app {request.method} {request.url.path}")
        except BaseException:
            exchange.discard()
            raise
        self._live.add(exchange)
        try:
            first = await exchange.next_item()
        except BaseException:
            # Cancelled or timed out before the response started: the client went away.
            await exchange.close()
            raise
        if isinstance(first, _Start):
            return httpx.Response(
                first.status, headers=first.headers, stream=_ResponseStream(exchange)
            )

        # The app task ended (or was shut down) without starting a response. The channel
        # carries no body before a start, so first is None here.
        await exchange.close()
        if exchange.transport_closed:
            raise httpx.ReadError("the transport was closed", request=request)
        error = exchange.error or RuntimeError("ASGI app returned without starting a response")
        if self.raise_app_exceptions:
            raise error
        body = b"Internal Server Error"
        return httpx.Response(
            500,
            headers=[
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
            content=body,
        )

    async def aclose(self) -> None:
        """Disconnect and end every app task still running for this transport."""
        live = list(self._live)
        if not live:
            return
        with anyio.CancelScope(shield=True):  # bounded: each close() is
            async with anyio.create_task_group() as tg:
                for exchange in live:
                    tg.start_soon(partial(exchange.close, by_transport=True))
