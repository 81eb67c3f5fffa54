"""What the reference client's transports share: the session they report to, errors, tasks.

A transport moves JSON-RPC messages; the session (harness/clients/reference/_client.py) gives them
meaning. Transports hand every received message, undecoded, to `Sink.deliver`, and report
lost requests (`Sink.fail`) and diagnostics (`Sink.log`).
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from harness.clients._contract import ClientError
from harness.protocol import ErrorObject, ErrorResponse, ProtocolError, RequestId, parse

__all__ = [
    "MODERN_ERRORS",
    "BackgroundTasks",
    "HttpStatusError",
    "ServerError",
    "SessionExpiredError",
    "Sink",
    "StreamBrokenError",
    "Transport",
    "http_error",
]

#: JSON-RPC errors that only a 2026-07-28 ("modern") server sends: HeaderMismatch,
#: MissingRequiredClientCapability, UnsupportedProtocolVersion (LC-M4, HM-7).
MODERN_ERRORS = frozenset({-32020, -32021, -32022})


class ServerError(ClientError):
    """The server answered with a JSON-RPC error (`http_status`: the HTTP status it came with)."""

    def __init__(self, error: ErrorObject, http_status: int | None = None) -> None:
        super().__init__("protocol", error.message, error.code)
        self.data: Any = error.data if error.has_data else None
        self.http_status = http_status


class HttpStatusError(ClientError):
    """An HTTP error status without a JSON-RPC error in the body."""

    def __init__(self, status: int, what: str) -> None:
        super().__init__("transport", f"{what}: HTTP {status}")
        self.http_status = status


class SessionExpiredError(ClientError):
    """HT-9: a request carrying a session id got 404."""

    def __init__(self) -> None:
        super().__init__("transport", "the server ended the session (HTTP 404)")


class StreamBrokenError(ClientError):
    """A response stream ended before the response and could not be resumed."""

    def __init__(self, detail: str) -> None:
        super().__init__("transport", f"the response stream broke: {detail}")


def http_error(status: int, body: bytes, what: str) -> ClientError:
    """The error for a non-2xx answer: the JSON-RPC error in the body if there is one."""
    try:
        message = parse(body)
    except ProtocolError:
        message = None
    if isinstance(message, ErrorResponse):
        return ServerError(message.error, status)
    return HttpStatusError(status, what)


@dataclass(frozen=True)
class Sink:
    """The session, as its transports see it."""

    deliver: Callable[[bytes | str], None]
    """Take one received JSON text (a message, or a batch)."""
    pending: Callable[[RequestId], bool]
    """Whether a request still waits for its response."""
    fail: Callable[[RequestId | None, ClientError], None]
    """The request (None: every request, the connection is gone) will get no response."""
    log: Callable[[str], None]


class Transport(Protocol):
    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        """Send one message; `headers` are extra HTTP headers (ignored off HTTP).

        `written` is called once the message is committed: from then on it goes out even
        if the caller is cancelled. Before it, a cancelled send sent nothing (stdio: it
        waited for its turn to write), and the request must not be cancelled on the wire:
        a cancellation may name only a request that was sent."""

    def release(self, request_id: RequestId) -> None:
        """The session stopped waiting for this request: drop what is kept for it."""

    async def close(self) -> None: ...


# asyncio keeps only weak references to tasks.
_RUNNERS: set[asyncio.Task[None]] = set()


class BackgroundTasks:
    """A task group for the reader tasks, owned by a task of its own.

    A task group entered in `connect()` and left in `close()` would wrap everything the
    caller does in between, and a caller that opened a cancel scope around `connect()` alone
    (`with anyio.fail_after(5): await client.connect(...)`) would break anyio's nesting. So
    the group lives in a detached runner task, and every child is guarded: an error in a
    reader is logged, never propagated into the group.
    """

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self._group: TaskGroup | None = None
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()

    async def start(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio, so trio (anyio's other backend)
            trio: Any = importlib.import_module("trio")
            trio.lowlevel.spawn_system_task(self._run, context=contextvars.copy_context())
        else:
            task = loop.create_task(self._run())
            _RUNNERS.add(task)
            task.add_done_callback(_RUNNERS.discard)
        await self._ready.wait()

    async def _run(self) -> None:
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                self._ready.set()
                await self._stop.wait()
                group.cancel_scope.cancel()
        finally:
            self._group = None
            self._done.set()

    def start_soon(self, fn: Callable[..., Awaitable[object]], *args: object) -> bool:
        """Start `fn(*args)`; False once the tasks are closing (then nothing was started)."""
        if self._group is None or self._stop.is_set():
            return False
        self._group.start_soon(self._guarded, fn, *args)
        return True

    async def _guarded(self, fn: Callable[..., Awaitable[object]], *args: object) -> None:
        try:
            await fn(*args)
        except Exception as exc:
            self._log(f"background task {getattr(fn, '__name__', fn)} failed: {exc!r}")

    async def aclose(self, grace: float) -> None:
        self._stop.set()
        if not self._ready.is_set():
            return  # never started
        with anyio.move_on_after(grace):
            await self._done.wait()
