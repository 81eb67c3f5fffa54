"""Serving the HTTP mock with uvicorn on a loopback port.

Three ways to run it, all binding the socket before uvicorn starts (so port 0 becomes a
real port at once) and all bounded in time at start and stop:

- `HttpMockServer`: a context manager running uvicorn in a background thread with its
  own event loop (for tests and harness code that is not async, or clients that block);
- `AsyncHttpMockServer`: an async context manager running uvicorn in the caller's loop;
- `serve_http`: blocking, for the command line (Ctrl-C stops it).

uvicorn logs nothing below warning (to stderr, through the `uvicorn.error` logger), and
nothing at all about the connections the mock drops on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType, TracebackType

import anyio
import uvicorn
from starlette.applications import Starlette

from mock_servers.engine import Script, Transcript
from mock_servers.http._app import DEFAULT_ANSWER_TIMEOUT, HttpMock, create_app, mock_of
from mock_servers.http._dispatch import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, Dispatcher
from mock_servers.http._headers import LOOPBACK_HOSTS
from mock_servers.http._wire import install_drop_log_filter

__all__ = [
    "AsyncHttpMockServer",
    "HttpMockServer",
    "check_loopback",
    "serve_dev",
    "serve_http",
]

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
# uvicorn waits this long for open responses at shutdown before cancelling them; the
# mock ends its own long-lived responses first, so this is only a backstop.
_GRACEFUL = 3
_SHUTDOWN_POLL = 0.005
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def check_loopback(host: str, *, allow_remote: bool = False) -> None:
    """Refuse to bind anything but a loopback address unless explicitly allowed."""
    if allow_remote or host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(
            f"refusing to serve the mock on {host!r}: it answers anyone who can reach it, "
            "so it binds loopback addresses only (127.0.0.1, ::1, localhost); "
            "to bind another address anyway, pass --allow-remote on the command line "
            "(allow_remote=True from Python)"
        )


def _bind(host: str, port: int) -> socket.socket:
    name = "127.0.0.1" if host == "localhost" else host.strip("[]")
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket says it is TCP; without it every small response waits for the
    # client's delayed ACK (about 40 ms a request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((name, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                exc.errno,
                f"port {port} on {host} is already in use (another server listens there): "
                f"pick another port, or {host}:0 for a free one",
            ) from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise OSError(
                exc.errno, f"{host} is not an address of this machine: use 127.0.0.1"
            ) from None
        raise
    except BaseException:
        sock.close()
        raise
    return sock


_LOCALHOST_TRIES = 5


def _bind_localhost(port: int) -> list[socket.socket]:
    """`localhost` on both of its loopback addresses, on one port: a name resolves to
    127.0.0.1 on some machines and to ::1 first on others, and a client given a
    `localhost` URL (the official conformance runner's convention) must reach the mock
    either way. ::1 is left out where the machine has no IPv6 loopback; with port 0, a
    port free on 127.0.0.1 but taken on ::1 is given up for another."""
    for _ in range(_LOCALHOST_TRIES):
        first = _bind("127.0.0.1", port)
        chosen = first.getsockname()[1]
        try:
            second = socket.socket(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        except OSError:  # no IPv6 in this kernel
            return [first]
        try:
            second.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            second.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            second.bind(("::1", chosen))
            second.listen(128)
            second.setblocking(False)
        except OSError as exc:
            second.close()
            if exc.errno == errno.EADDRINUSE and port == 0:
                first.close()
                continue
            if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT, errno.EADDRINUSE):
                return [first]  # no ::1 here (or the fixed port is another's there)
            first.close()
            raise
        return [first, second]
    raise OSError(errno.EADDRINUSE, "no port free on both 127.0.0.1 and ::1 for localhost")


def _bind_auth(mock: HttpMock, host: str, url: str) -> socket.socket | None:
    """The authorization server's own socket (a free port on the same host), when the
    script has one; tells the mock both URLs either way."""
    if mock.auth is None:
        return None
    sock = _bind(host, 0) if mock.auth.settings.own_origin else None
    origin = "" if sock is None else _url(sock, "")
    mock.auth.bind(url, origin)
    return sock


def _url(sock: socket.socket, path: str, name: str | None = None) -> str:
    host, port = sock.getsockname()[:2]
    shown = name or (f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}{path}"


class _Uvicorn(uvicorn.Server):
    """uvicorn that reports its start, and ends the mock's open streams before stopping."""

    def __init__(
        self,
        app: Starlette | Dispatcher,
        on_started: Callable[[], None],
        on_shutdown: Callable[[], None] | None = None,
    ) -> None:
        install_drop_log_filter()
        # uvicorn gets the mock itself, not the Starlette app around it: the middleware and
        # the catch-all route cost about 5% of each request and do nothing the mock does not
        # (it answers its own errors); in process, the app stays whole (create_app).
        asgi = mock_of(app) if isinstance(app, Starlette) else app
        config = uvicorn.Config(
            asgi,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",
            http="h11",
            interface="asgi3",
            timeout_graceful_shutdown=_GRACEFUL,
            server_header=False,
        )
        super().__init__(config)
        if on_shutdown is None:
            assert isinstance(app, Starlette)
            on_shutdown = mock_of(app).close
        self._on_shutdown = on_shutdown
        self._on_started = on_started
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        await super().startup(sockets=sockets)
        self._on_started()

    def request_exit(self) -> None:
        """Stop now, from any thread: uvicorn alone notices `should_exit` only at its
        next 0.1 s tick, which made every scenario's stop cost 0.1 to 0.2 s."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(wake.set)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.request_exit()

    async def main_loop(self) -> None:
        # uvicorn's own loop, with its fixed 0.1 s sleep made a wait that request_exit()
        # ends at once; on_tick still runs at least every 0.1 s (the Date header).
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            if self._wake is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), 0.1)
            else:
                await asyncio.sleep(0.1)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn's own shutdown, without its fixed 0.1 s sleeps: the connections are
        # asked to close, then watched every few milliseconds (bounded by _GRACEFUL).
        self._on_shutdown()
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        state = self.server_state
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _GRACEFUL
        while (state.connections or state.tasks) and not self.force_exit:
            if loop.time() >= deadline:
                for task in state.tasks:
                    task.cancel(msg="the HTTP mock is stopping")
                break
            await asyncio.sleep(_SHUTDOWN_POLL)
        for server in self.servers:
            await server.wait_closed()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises the signal that stopped it once it is down, which turns
        # Ctrl-C into a KeyboardInterrupt traceback; for the mock, SIGINT and SIGTERM
        # are the normal way to stop, so they only stop it (main thread only).
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in _STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _prepare(
    script: Script,
    revision: str | None,
    transport: str,
    transcript: Transcript | None,
    transcript_path: str | Path | None,
    answer_timeout: float,
    allow_remote: bool,
) -> tuple[Starlette, bool]:
    """The app, and whether its transcript was opened here (and must be closed here)."""
    owned = transcript is None and transcript_path is not None
    if owned:
        served = script.pick_revision(
            "2024-11-05" if revision is None and transport == "sse-legacy" else revision
        )
        transcript = Transcript(
            script=script.name, revision=served, transport=transport, path=transcript_path
        )
    try:
        app = create_app(
            script,
            revision=revision,
            transport=transport,
            transcript=transcript,
            answer_timeout=answer_timeout,
            # Bound beyond loopback, it is reached by other names: any Host is its own.
            allowed_hosts=None if allow_remote else LOOPBACK_HOSTS,
        )
    except BaseException:
        if owned and transcript is not None:
            transcript.close()
        raise
    return app, owned


class _Runner:
    """What both runners share: the app, the loopback socket and the end of the run."""

    def __init__(
        self,
        script: Script,
        *,
        revision: str | None = None,
        transport: str = "http",
        transcript: Transcript | None = None,
        transcript_path: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
        answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
        timeout: float = START_TIMEOUT,
    ) -> None:
        check_loopback(host, allow_remote=allow_remote)
        self.app, self._owns_transcript = _prepare(
            script, revision, transport, transcript, transcript_path, answer_timeout, allow_remote
        )
        self.mock: HttpMock = mock_of(self.app)
        self.transcript = self.mock.transcript
        self.engine = self.mock.engine
        self.host = host
        self.port = port
        self.timeout = timeout
        self.url = ""
        self._sock: socket.socket | None = None
        self._auth_sock: socket.socket | None = None
        self._more_socks: list[socket.socket] = []  # localhost's ::1, beside 127.0.0.1
        self._server: _Uvicorn | None = None

    @property
    def base_url(self) -> str:
        """The URL without the endpoint path."""
        return self.url[: len(self.url) - len(self.mock.settings.path)]

    @property
    def auth_url(self) -> str:
        """The issuer of the authorization server the resource names now ("" when the
        script has no `auth`; the second one's after a `migrate_after` move)."""
        return "" if self.mock.auth is None else self.mock.auth.issuer

    def _listen(self, on_started: Callable[[], None]) -> tuple[_Uvicorn, list[socket.socket]]:
        if self._server is not None:
            raise RuntimeError(f"this {type(self).__name__} was already started")
        if self.host == "localhost":
            sock, *self._more_socks = _bind_localhost(self.port)
        else:
            sock = _bind(self.host, self.port)
        self._sock = sock
        self.port = sock.getsockname()[1]
        named = "localhost" if self.host == "localhost" else None
        self.url = _url(sock, self.mock.settings.path, named)
        self.mock.engine.base_url = self.base_url  # for `$base_url` templates
        # One uvicorn, one loop, both ports: the authorization server shares the run's
        # state and transcript without locks.
        self._auth_sock = _bind_auth(self.mock, self.host, self.url)
        self._server = _Uvicorn(self.app, on_started)
        listening = [sock, *self._more_socks, self._auth_sock]
        return self._server, [s for s in listening if s is not None]

    def _release(self) -> None:
        """After uvicorn stopped: close the socket, record unconsumed steps, close the file."""
        for sock in (self._sock, *self._more_socks, self._auth_sock):
            if sock is not None:
                sock.close()
        self._sock = self._auth_sock = None
        self._more_socks = []
        self.mock.finish()
        if self._owns_transcript:
            self.transcript.close()


class HttpMockServer(_Runner):
    """The mock on uvicorn at 127.0.0.1 (port 0: a free port), in a background thread.

        with HttpMockServer(script, revision="2025-11-25") as server:
            ... server.url ...   # e.g. http://127.0.0.1:54321/mcp
        server.transcript.entries

    `host="localhost"` listens on 127.0.0.1 and ::1 (where there is one) on the same port,
    and its URL says `localhost`. The thread has its own event loop, so the caller may block or run any loop. On exit
    the open streams end, uvicorn stops, the thread is joined and the socket is closed;
    unconsumed steps are recorded and a transcript file opened here is closed. Start and
    stop raise RuntimeError after `timeout` seconds (stop: twice that, then forcing).
    """

    _thread: threading.Thread | None = None
    _error: BaseException | None = None

    def start(self) -> HttpMockServer:
        ready = threading.Event()
        server, socks = self._listen(ready.set)

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=socks))
            except BaseException as exc:  # reported by start()
                self._error = exc
            finally:
                ready.set()

        self._thread = threading.Thread(
            target=run, name=f"mcp-testbench-http-{self.port}", daemon=True
        )
        self._thread.start()
        if not ready.wait(self.timeout) or self._error is not None:
            error = self._error
            self.stop()
            raise RuntimeError(f"the HTTP mock did not start within {self.timeout:g} s") from error
        return self

    def stop(self) -> None:
        """Stop uvicorn and join its thread (bounded); idempotent."""
        thread, server = self._thread, self._server
        if thread is not None and server is not None:
            server.request_exit()  # its shutdown closes our streams
            thread.join(self.timeout)
            if thread.is_alive():
                server.force_exit = True
                thread.join(self.timeout)
        self._release()
        if thread is not None and thread.is_alive():
            raise RuntimeError(f"the HTTP mock did not stop within {2 * self.timeout:g} s")

    def __enter__(self) -> HttpMockServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class AsyncHttpMockServer(_Runner):
    """The mock on uvicorn as a task of the running asyncio loop: `async with ... as s`.

    No thread: the client under test must not block the loop. Same options and the same
    end of run as `HttpMockServer`.
    """

    _task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> AsyncHttpMockServer:
        started = asyncio.Event()
        server, socks = self._listen(started.set)
        task = self._task = asyncio.get_running_loop().create_task(server.serve(sockets=socks))
        try:
            with anyio.fail_after(self.timeout):
                waiter = asyncio.ensure_future(started.wait())
                done, _ = await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
            if task in done:
                raise RuntimeError("the HTTP mock stopped while starting") from task.exception()
        except BaseException:
            await self._stop()
            raise
        return self

    async def _stop(self) -> None:
        task, server = self._task, self._server
        if task is not None and server is not None:
            server.request_exit()
            with anyio.move_on_after(self.timeout):
                await asyncio.wait({task})
            if not task.done():
                task.cancel()
                with anyio.move_on_after(self.timeout):
                    await asyncio.wait({task})
        self._release()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stop()


def serve_http(
    script: Script,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    revision: str | None = None,
    transport: str = "http",
    transcript_path: str | Path | None = None,
    ready: Callable[[str], None] | None = None,
    allow_remote: bool = False,
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
) -> HttpMock:
    """Serve until interrupted (SIGINT/SIGTERM); `ready(url)` is called once listening.

    Returns the mock (its transcript holds the run). Binds loopback only unless
    `allow_remote`; raises ValueError for another host, OSError if the port is taken.
    """
    check_loopback(host, allow_remote=allow_remote)
    app, owned = _prepare(
        script, revision, transport, None, transcript_path, answer_timeout, allow_remote
    )
    mock = mock_of(app)
    socks: list[socket.socket] = []
    try:
        socks.append(_bind(host, port))
        url = _url(socks[0], mock.settings.path)
        mock.engine.base_url = _url(socks[0], "")  # for `$base_url` templates
        auth_sock = _bind_auth(mock, host, url)
        if auth_sock is not None:
            socks.append(auth_sock)
    except BaseException:
        for sock in socks:
            sock.close()
        if owned:
            mock.transcript.close()
        raise

    def started() -> None:
        if ready is not None:
            ready(url)

    try:
        asyncio.run(_Uvicorn(app, started).serve(sockets=socks))
    finally:
        for sock in socks:
            sock.close()
        mock.finish()
        if owned:
            mock.transcript.close()
    return mock


def serve_dev(
    script: Script,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    revision: str | None = None,
    transport: str = "http",
    transcript_path: str | Path | None = None,
    shared: bool = False,
    ready: Callable[[str], None] | None = None,
    announce: Callable[[str], None] | None = None,
    log: Callable[[str], None] | None = None,
    allow_remote: bool = False,
    allow_hosts: Sequence[str] = (),
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout: float = DEFAULT_SESSION_IDLE,
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
) -> Dispatcher:
    """`serve_http` for development: a fresh mock per client session (see `_dispatch`).

    With no `revision`, each session is served the revision its client speaks. `announce`
    gets one line per session, `log` one per message. Requests whose `Host` names neither
    loopback nor one of `allow_hosts` get 421 (any Host, with `allow_remote`). Returns the dispatcher (its
    `sessions` hold each session's mock). Errors as `serve_http`, and ScriptError when no
    revision of the script runs over `transport`.
    """
    check_loopback(host, allow_remote=allow_remote)
    if script.auth is not None:
        # A fresh run per session would forget the clients and tokens the flow needs.
        raise ValueError(
            f"{script.source}: `serve` does not run a script with an `auth` section yet "
            "(it starts every session afresh, and authorization spans sessions); from "
            "Python, serve it with mock_servers.http.HttpMockServer or serve_http"
        )
    transcript = (
        None
        if transcript_path is None
        else Transcript(
            script=script.name, revision=revision or "", transport=transport, path=transcript_path
        )
    )
    try:
        dispatcher = Dispatcher(
            script,
            revision=revision,
            transport=transport,
            transcript=transcript,
            answer_timeout=answer_timeout,
            shared=shared,
            announce=announce,
            log=log,
            allowed_hosts=None
            if allow_remote
            else LOOPBACK_HOSTS | {h.lower() for h in allow_hosts},
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
        )
        sock = _bind(host, port)
    except BaseException:
        if transcript is not None:
            transcript.close()
        raise
    url = _url(sock, dispatcher.path)
    dispatcher.base_url = _url(sock, "")  # each session's mock fills `$base_url` with it

    def started() -> None:
        if ready is not None:
            ready(url)

    try:
        asyncio.run(_Uvicorn(dispatcher, started, dispatcher.close).serve(sockets=[sock]))
    finally:
        sock.close()
        dispatcher.finish()
        if transcript is not None:
            transcript.close()
    return dispatcher
