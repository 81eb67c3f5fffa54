"""The Streamable HTTP recording proxy: an endpoint on loopback in front of the real server.

Every request is forwarded as it came (headers included: the proxy passes credentials on,
only the file never holds them) and every answer comes back as it went: a JSON body whole,
an event stream chunk by chunk as it arrives, read for the record on the way (event ids,
`retry`, primes). POST bodies are recorded before they are forwarded, so an answer is never
recorded before its request. The session ends when the client ends it (a DELETE the server
accepts) or on SIGINT or SIGTERM; the script is written then.

A legacy HTTP+SSE server (the 2024-11-05 transport) is told apart by what it does: its
answer to the client's GET of the URL is an event stream whose first event is `endpoint`,
the URL to POST messages to. That stream is then relayed event by event, the endpoint
rewritten to the same path on the recorder (so that the client's POSTs come through it),
its messages recorded; the POSTs are forwarded to the server's origin. The recording ends
when that stream ends (the client closing it), as the transport has no DELETE.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import signal
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from harness.protocol import SSEEvent, SSEParser, encode_event
from mock_servers.recording._build import RecordError
from mock_servers.recording._capture import Capture, Seen, decode
from mock_servers.recording._output import check_out, write_recording
from mock_servers.recording._redact import Redactor, is_secret_name

__all__ = ["record_http"]

_PROBE_TIMEOUT = 5.0
_GRACEFUL = 2.0
# Hop-by-hop and framing headers: each side of the proxy has its own connection.
_NOT_FORWARDED = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "upgrade",
        "accept-encoding",
        "te",
        "trailer",
        "proxy-connection",
    }
)
_NOT_RETURNED = frozenset(
    {"content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding"}
)


def _probe(url: str) -> None:
    """RecordError unless something accepts connections at `url`'s host and port.

    A connection, not a request: a request has effects (an HTTP+SSE server answers a HEAD
    of its SSE URL with a session whose stream never ends, so the request never does)."""
    try:
        parsed = httpx.URL(url)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except (httpx.InvalidURL, ValueError) as exc:
        raise RecordError(f"--http {url}: not a URL ({exc})") from None
    try:
        socket.create_connection((parsed.host, port), timeout=_PROBE_TIMEOUT).close()
    except OSError as exc:
        raise RecordError(
            f"the server at {url} does not answer ({type(exc).__name__}: "
            f"{exc.strerror or exc or 'no answer'}); start it first, or check the URL"
        ) from None


def _listen(host: str, port: int) -> socket.socket:
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise RecordError(
            f"--listen {host}: the recorder listens on loopback only (127.0.0.1, ::1)"
        )
    name = "127.0.0.1" if host == "localhost" else host
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((name, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise RecordError(f"--listen {host}:{port}: {exc.strerror or exc}") from None
    return sock


class _Proxy:
    def __init__(self, upstream: str, capture: Capture, redactor: Redactor) -> None:
        self.upstream = upstream
        self.capture = capture
        self.redactor = redactor
        # A jar that keeps nothing: the client's own Cookie header goes through as it came,
        # and the server's Set-Cookie goes back to the client, not into the proxy.
        nothing = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=None), cookies=nothing, follow_redirects=False
        )
        self.posts = 0
        self.on_end: Callable[[], None] = lambda: None
        # HTTP+SSE: the origin of the message endpoint the server announced (None until then).
        self.message_origin: str | None = None

    async def handle(self, request: Request) -> Response:
        for name, value in request.headers.items():
            self.redactor.add_header(name, value)
        for name, value in parse_qsl(request.url.query):
            if is_secret_name(name):
                self.redactor.add_known(value, f"query {name}")
        url = self._upstream_url(request)
        if url is None:
            return Response("Not Found", 404)
        body = await request.body()
        exchange = None
        channel: Any = "get"
        if request.method == "POST":
            self.posts += 1
            exchange, channel = self.posts, "post"
            text = body.decode("utf-8", errors="replace")
            self.capture.add(Seen("client", decode(text), text, "post", exchange))
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED]
        try:
            upstream = await self.client.send(
                self.client.build_request(request.method, url, headers=headers, content=body),
                stream=True,
            )
        except httpx.TransportError as exc:
            return Response(f"the recorded server did not answer: {exc}", 502)
        for name, value in upstream.headers.items():
            self.redactor.add_header(name, value)
        self._facts(request.method, upstream)
        returned = {k: v for k, v in upstream.headers.items() if k.lower() not in _NOT_RETURNED}
        content_type = upstream.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            return StreamingResponse(
                self._relay(upstream, channel, exchange),
                status_code=upstream.status_code,
                headers=returned,
            )
        data = await upstream.aread()
        await upstream.aclose()
        if request.method == "POST" and data.strip() and "json" in content_type:
            text = data.decode("utf-8", errors="replace")
            seen = Seen("server", decode(text), text, "post", exchange, status=upstream.status_code)
            self.capture.add(seen)
        if request.method == "DELETE" and upstream.status_code < 300:
            self.on_end()
        return Response(data, upstream.status_code, headers=returned)

    def _upstream_url(self, request: Request) -> str | None:
        """Where a request goes: the server's URL, or (HTTP+SSE) its message endpoint's
        origin with the same path; None for any other path."""
        query = f"?{request.url.query}" if request.url.query else ""
        if request.url.path == self.capture.http.path:
            return self.upstream + query
        if self.message_origin is not None and request.method == "POST":
            return self.message_origin + request.url.path + query
        return None

    def _endpoint(self, event: SSEEvent) -> SSEEvent:
        """The announced message endpoint, as a path on the recorder (the client resolves it
        against the recorder's URL), its origin kept for the POSTs."""
        target = urlsplit(urljoin(self.upstream, event.data or ""))
        self.message_origin = f"{target.scheme}://{target.netloc}"
        path = (target.path or "/") + (f"?{target.query}" if target.query else "")
        return SSEEvent(
            data=path, event=event.event, id=event.id, retry=event.retry, comments=event.comments
        )

    def _facts(self, method: str, upstream: httpx.Response) -> None:
        facts = self.capture.http
        if upstream.headers.get("mcp-session-id"):
            facts.sessions = True
        status = upstream.status_code
        if method == "GET":
            facts.get = "405" if status == 405 else "stream" if status < 300 else facts.get
        elif method == "DELETE":
            facts.delete = "405" if status == 405 else "accept" if status < 300 else facts.delete

    async def _relay(
        self, upstream: httpx.Response, channel: Any, exchange: int | None
    ) -> AsyncIterator[bytes]:
        parser = SSEParser()
        # A GET stream is held back until its first event says which transport it is:
        # HTTP+SSE's streams are relayed event by event (the endpoint rewritten), others as
        # they came, chunk by chunk.
        legacy: bool | None = None if channel == "get" else False
        held: list[bytes] = []
        try:
            async for chunk in upstream.aiter_raw():
                events = parser.feed(chunk)
                if legacy is None and events:
                    legacy = events[0].event == "endpoint"
                    if legacy:
                        self.capture.transport = "sse-legacy"
                        events[0] = self._endpoint(events[0])
                        held.clear()  # its bytes are in the events, written anew
                if legacy:
                    for event in events:
                        self._event(event, channel, exchange)
                        yield encode_event(event)
                    continue
                for event in events:
                    self._event(event, channel, exchange)
                held.append(chunk)
                if legacy is False:
                    yield b"".join(held)
                    held.clear()
            if held:
                yield b"".join(held)
        finally:
            await upstream.aclose()
            if legacy:  # the HTTP+SSE session is its stream: it has ended
                self.on_end()

    def _event(self, event: Any, channel: Any, exchange: int | None) -> None:
        if event.data is None and event.retry is None:
            return  # a comment or a bare id
        if event.event == "endpoint":
            return  # HTTP+SSE's message endpoint: the transport's, not a message
        if not event.data:
            self.capture.add(
                Seen(
                    "server",
                    None,
                    "",
                    channel,
                    exchange,
                    sse=True,
                    event_id=event.id,
                    retry=event.retry,
                    prime=True,
                )
            )
            return
        self.capture.add(
            Seen(
                "server",
                decode(event.data),
                event.data,
                channel,
                exchange,
                sse=True,
                event_id=event.id or None,
                retry=event.retry,
            )
        )


class _Server(uvicorn.Server):
    """uvicorn that says when it listens, and stops when the client ends its session."""

    def __init__(self, app: Starlette, on_started: Callable[[], None]) -> None:
        super().__init__(
            uvicorn.Config(
                app,
                log_config=None,
                log_level="warning",
                access_log=False,
                lifespan="off",
                timeout_graceful_shutdown=int(_GRACEFUL),
            )
        )
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._on_started()

    def stop(self) -> None:
        self.should_exit = True


def record_http(
    url: str,
    out: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    exact: bool = False,
    redact: Sequence[str] = (),
    name: str | None = None,
    ready: Callable[[str], None] = lambda url: None,
    say: Callable[[str], None] = lambda line: None,
) -> int:
    """Serve a recording proxy for the Streamable HTTP (or HTTP+SSE) server at `url` on
    `host:port` until the client ends its session (or SIGINT/SIGTERM), then write the
    script to `out`.

    Raises RecordError before anything is served: an `out` that cannot be written, a URL
    that does not answer, an address that cannot be listened on.
    """
    check_out(out)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RecordError(f"--http {url}: not an http(s) URL of an MCP endpoint")
    _probe(url)
    redactor = Redactor(redact, environ=os.environ)
    for key, value in parse_qsl(parts.query):
        if is_secret_name(key):
            redactor.add_known(value, f"query {key}")
    if parts.password:
        redactor.add_known(parts.password, "url password")
    capture = Capture("http")
    capture.http.path = parts.path or "/"
    sock = _listen(host, port)
    upstream = url.split("?", 1)[0]
    proxy = _Proxy(upstream, capture, redactor)
    methods = ["GET", "POST", "DELETE"]
    app = Starlette(
        routes=[
            Route(capture.http.path, proxy.handle, methods=methods),
            # HTTP+SSE: the message endpoint the server announces, whatever its path.
            Route("/{path:path}", proxy.handle, methods=methods),
        ]
    )
    server = _Server(app, lambda: ready(listen_url))
    proxy.on_end = server.stop
    bound = sock.getsockname()
    where = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    listen_url = f"http://{where}:{bound[1]}{capture.http.path}"

    async def serve() -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            await proxy.client.aclose()

    # uvicorn turns SIGINT and SIGTERM into a graceful stop, then raises the signal again
    # to the handler it found: these ones, so that the script is still written.
    stopped: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda number, frame: stopped.append(number))
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        asyncio.run(serve())
    finally:
        sock.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if not any(s.sender == "client" for s in capture.snapshot()):
        say("no client connected: no script written")
        return 2
    return write_recording(capture, out, exact=exact, redactor=redactor, name=name, say=say)
