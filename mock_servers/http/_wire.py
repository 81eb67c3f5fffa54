"""The bytes side of the HTTP mock: one exchange on the wire, and scripted SSE items.

`Exchange` wraps one ASGI request: it reads the body, records the request and the
response in the transcript, writes the response (whole, or streamed in chunks of a chosen
size) and can abort it half-way so that the client sees a broken connection. `SseItem`
is one scripted piece of an event stream and `render_item` turns it into bytes.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from harness.protocol import SSEEvent, encode, encode_event
from mock_servers.engine import Transcript, split_mark

__all__ = [
    "MAX_BODY",
    "Exchange",
    "Receive",
    "Scope",
    "Send",
    "SseItem",
    "install_drop_log_filter",
    "items_from_script",
    "render_item",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_BODY = 4 * 1024 * 1024  # a request body beyond this is refused with 413

# Set in the handler's own task when it aborts a response on purpose: uvicorn then logs
# "returned without completing response" from that task, and the filter below drops it.
_DELIBERATE_DROP: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mcp_testbench_deliberate_drop", default=False
)
_UVICORN_INCOMPLETE = "ASGI callable returned without completing response"


class _DropLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (_DELIBERATE_DROP.get() and record.getMessage().startswith(_UVICORN_INCOMPLETE))


_filter_installed = False


def install_drop_log_filter() -> None:
    """Keep uvicorn quiet about the connections the mock drops on purpose (idempotent)."""
    global _filter_installed
    if not _filter_installed:
        logging.getLogger("uvicorn.error").addFilter(_DropLogFilter())
        _filter_installed = True


_UNSENDABLE_IN_NAME = re.compile('[\r\n\0:() ,;"\t]')
_UNSENDABLE_IN_VALUE = re.compile("[\r\n\0]")


def _header_bytes(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]] | None:
    """ASGI header pairs, or None if a name or value could not be sent as given."""
    out = []
    for name, value in headers.items():
        if not name or _UNSENDABLE_IN_NAME.search(name) or not name.isascii():
            return None
        if _UNSENDABLE_IN_VALUE.search(value):
            return None
        try:
            out.append((name.lower().encode("ascii"), value.encode("latin-1")))
        except UnicodeEncodeError:
            return None
    return out


class Exchange:
    """One HTTP request and its response, recorded as `http_request` / `http_response`.

    Writes never raise when the client has gone: uvicorn drops them, the in-process
    transport (ASGI 2.4) raises OSError, and both set `disconnected`.
    """

    def __init__(
        self, transcript: Transcript, number: int, scope: Scope, receive: Receive, send: Send
    ) -> None:
        self.transcript = transcript
        self.number = number
        self.method = str(scope.get("method", "")).upper()
        self.path = str(scope.get("path", ""))
        raw_query = scope.get("query_string", b"")
        self.query = bytes(raw_query).decode("latin-1") if raw_query else ""
        headers: dict[str, str] = {}
        for name, value in scope.get("headers", []):
            key = bytes(name).decode("latin-1").lower()
            text = bytes(value).decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self.headers = headers
        self.body = b""
        self.receive = receive
        self._send = send
        self.chunk_size: int | None = None
        self.started = False
        self.complete = False
        self.aborted = False
        self.disconnected = False
        self._buffer = bytearray()
        self._write_lock: anyio.Lock | None = None  # made on the first streamed write

    @property
    def _lock(self) -> anyio.Lock:
        # Most exchanges answer with one whole body and never lock; making an anyio lock
        # costs a backend look-up, on every request of a benchmark's hot path.
        if self._write_lock is None:
            self._write_lock = anyio.Lock()
        return self._write_lock

    @property
    def channel(self) -> str:
        return f"http:{self.number}"

    async def read_body(self) -> bool:
        """Read the whole request body; False if it is too large or the client left."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message.get("type") == "http.disconnect":
                self.disconnected = True
                break
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > MAX_BODY:
                self.body = b"".join(chunks)
                return False
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        self.body = b"".join(chunks)
        return not self.disconnected

    def record_request(self) -> None:
        try:
            text = self.body.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            text = self.body.decode("utf-8", errors="replace")
            valid = False
        entry: dict[str, Any] = {
            "request": self.number,
            "method": self.method,
            "path": self.path,
            "headers": dict(self.headers),
            "body": text,
        }
        if self.query:
            entry["query"] = self.query
        if not valid:
            entry["body_utf8"] = False
        self.transcript.record("http_request", **entry)

    # -- writing -------------------------------------------------------------------------

    async def _raw_send(self, message: Message) -> None:
        if self.disconnected:
            return
        try:
            await self._send(message)
        except OSError:
            self.disconnected = True
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            # The server refused the message (e.g. more bytes than a scripted
            # content-length): nothing more can go out on this response.
            self.disconnected = True
            self.transcript.record(
                "note",
                text=f"request {self.number}: the response broke: {type(exc).__name__}: {exc}",
            )

    async def _start(self, status: int, headers: Mapping[str, str], *, body: str | None) -> None:
        # One value per name, whatever case a script wrote it in (the last one wins).
        headers = {name.lower(): value for name, value in headers.items()}
        pairs = _header_bytes(headers)
        if pairs is None:
            self.transcript.record(
                "note",
                text=f"request {self.number}: scripted headers that HTTP cannot carry were "
                f"dropped: {sorted(headers)}",
            )
            safe = {k: v for k, v in headers.items() if _header_bytes({k: v}) is not None}
            headers, pairs = safe, _header_bytes(safe) or []
        self.started = True
        self.transcript.record(
            "http_response",
            request=self.number,
            status=status,
            headers={k.lower(): v for k, v in headers.items()},
            body=body,
        )
        await self._raw_send({"type": "http.response.start", "status": status, "headers": pairs})

    async def respond(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        """A whole (non-streamed) response; `content-length` is added."""
        if status < 200 or status > 599:
            self.transcript.record(
                "note",
                text=f"request {self.number}: status {status} cannot end a response; sent 500",
            )
            status = 500
        no_body = status in (204, 304)
        all_headers = {name.lower(): value for name, value in headers.items()}
        if not no_body:
            all_headers["content-length"] = str(len(body))
        await self._start(status, all_headers, body=body.decode("utf-8", errors="replace"))
        if no_body:
            body = b""
        if self.chunk_size is None:  # the body and its end in one message
            await self._raw_send({"type": "http.response.body", "body": body, "more_body": False})
        else:
            await self._write_chunked(body)
            await self._raw_send({"type": "http.response.body", "body": b"", "more_body": False})
        self.complete = True

    async def respond_json(
        self, status: int, value: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        body = encode(value).encode("utf-8")
        await self.respond(status, {"content-type": "application/json", **(headers or {})}, body)

    async def respond_text(self, status: int, text: str = "") -> None:
        headers = {"content-type": "text/plain; charset=utf-8"} if text else {}
        await self.respond(status, headers, text.encode("utf-8"))

    async def start_stream(self, status: int, headers: Mapping[str, str]) -> None:
        await self._start(status, headers, body=None)

    async def write(self, data: bytes) -> None:
        """Append to a streamed body; with `chunk_size`, only whole chunks go out now."""
        async with self._lock:
            if self.chunk_size is None:
                await self._raw_send(
                    {"type": "http.response.body", "body": data, "more_body": True}
                )
                return
            self._buffer += data
            while len(self._buffer) >= self.chunk_size:
                piece = bytes(self._buffer[: self.chunk_size])
                del self._buffer[: self.chunk_size]
                await self._raw_send(
                    {"type": "http.response.body", "body": piece, "more_body": True}
                )

    async def flush(self) -> None:
        """Send what `write` held back (before any wait: a partial chunk must not stall)."""
        async with self._lock:
            if self._buffer:
                piece = bytes(self._buffer)
                self._buffer.clear()
                await self._raw_send(
                    {"type": "http.response.body", "body": piece, "more_body": True}
                )

    async def _write_chunked(self, body: bytes) -> None:
        size = self.chunk_size or max(len(body), 1)
        for start in range(0, len(body), size):
            piece = body[start : start + size]
            await self._raw_send({"type": "http.response.body", "body": piece, "more_body": True})

    async def end(self) -> None:
        await self.flush()
        await self._raw_send({"type": "http.response.body", "body": b"", "more_body": False})
        self.complete = True

    async def abort(self, partial: bytes = b"") -> None:
        """Break the response: send `partial`, then never finish it.

        The handler must return right after this, from its own task (not a child task),
        so that the context variable set here reaches uvicorn's log call.
        """
        await self.flush()
        if partial:
            await self._raw_send({"type": "http.response.body", "body": partial, "more_body": True})
        self.aborted = True
        _DELIBERATE_DROP.set(True)

    async def wait_disconnect(self) -> None:
        """Return when the client goes away (the request body has been read by then)."""
        while not self.disconnected:
            message = await self.receive()
            if message.get("type") == "http.disconnect":
                self.disconnected = True


# -- SSE items ----------------------------------------------------------------------------

ItemKind = Literal["comment", "prime", "message", "response", "raw", "data", "fields"]


@dataclass
class SseItem:
    """One scripted piece of an event stream (docs/scripts.md, `reply.sse.events`)."""

    kind: ItemKind
    text: str | None = None  # comment, raw, data (an event whose data is this text)
    message: dict[str, Any] | None = None  # message (response: filled in when written)
    id: str | None = None
    event: str | None = None
    retry: int | None = None
    multiline: bool = False
    close: bool = False
    # For the send gate: the script's mark, the method a response answers, and whence.
    violation: str | None = None
    request_method: str | None = None
    origin: str = ""


def items_from_script(
    events: list[Mapping[str, Any]] | None,
    before: list[dict[str, Any]],
    retry: int | None,
    before_marks: list[str | None] | None = None,
) -> list[SseItem]:
    """The items of one SSE reply: the scripted ones, `before` just ahead of the response.

    Without scripted items the stream is the before-messages and then the response. A
    stream-level `retry` rides on the first structured item (or opens the stream alone).
    """
    marks = before_marks or [None] * len(before)
    befores = [
        SseItem("message", message=m, violation=mark, origin=f"before message {i}")
        for i, (m, mark) in enumerate(zip(before, marks, strict=True))
    ]
    items: list[SseItem] = []
    placed = False
    for index, raw in enumerate(events or []):
        item = _item(raw)
        item.origin = f"SSE item {index}"
        if item.kind == "response":
            items += befores
            placed = True
        items.append(item)
    if not placed:
        items += [*befores, SseItem("response")]
    if retry is not None:
        for item in items:
            if item.kind != "raw":
                if item.retry is None:
                    item.retry = retry
                break
        else:
            items.insert(0, SseItem("fields", retry=retry))
    return items


def _item(raw: Mapping[str, Any]) -> SseItem:
    options: dict[str, Any] = {
        "id": raw.get("id"),
        "event": raw.get("event"),
        "retry": raw.get("retry"),
        "multiline": bool(raw.get("multiline", False)),
        "close": bool(raw.get("close", False)),
        "violation": raw.get("violation"),
    }
    if "comment" in raw:
        return SseItem("comment", text=str(raw["comment"]), **options)
    if raw.get("prime"):
        return SseItem("prime", **options)
    if "message" in raw:
        message, mark = split_mark(raw["message"])
        options["violation"] = options["violation"] or mark
        return SseItem("message", message={"jsonrpc": "2.0", **message}, **options)
    if raw.get("response"):
        return SseItem("response", **options)
    if "raw" in raw:
        return SseItem("raw", text=str(raw["raw"]), **options)
    return SseItem("fields", **options)


def render_item(item: SseItem, event_id: str | None) -> tuple[bytes, dict[str, Any]] | None:
    """The bytes of `item` and its transcript form; None when it has nothing to write.

    Raises ValueError for values SSE cannot carry (an id with a line break...).
    """
    if item.kind == "raw":
        text = item.text or ""
        return text.encode("utf-8"), {"raw": text}
    data: str | None = None
    comments: tuple[str, ...] = ()
    if item.kind == "comment":
        comments = tuple((item.text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    elif item.kind == "prime":
        data = ""
    elif item.kind == "data":
        # SSE cannot carry a CR inside data; a line feed becomes a second data line.
        data = (item.text or "").replace("\r\n", "\n").replace("\r", "\n")
    elif item.kind in ("message", "response") and item.message is not None:
        if item.multiline:
            # Indented JSON spreads over lines; strings keep their escapes, so the only
            # line breaks are between tokens, where JSON allows whitespace.
            data = json.dumps(item.message, indent=2, ensure_ascii=False, allow_nan=False)
        else:
            data = encode(item.message)
    event = SSEEvent(data=data, event=item.event, id=event_id, retry=item.retry, comments=comments)
    if (data, item.event, event_id, item.retry) == (None, None, None, None) and not comments:
        return None
    recorded: dict[str, Any] = {
        k: v
        for k, v in (("id", event_id), ("event", item.event), ("data", data), ("retry", item.retry))
        if v is not None
    }
    if comments:
        recorded["comments"] = list(comments)
    return encode_event(event), recorded
