"""Server-sent events (`text/event-stream`): an incremental parser and a writer.

The parser follows the WHATWG HTML Living Standard, "Server-sent events", section
"Interpreting an event stream", to the letter, because the bundled clients and the
transcript recorder must see exactly what a browser-grade client would see. It reports
more than a browser does: every block that set a field (or held comments), not just the
blocks a browser dispatches, so that id-only and retry-only blocks and comment
keep-alives are visible to the harness. `SSEEvent.dispatched` tells the two apart.

The writer is used by the mock servers. It produces only bytes that parse back to the
very events it was given: `parse_all(encode_events(events)) == events` for every list
it accepts, and it rejects (ValueError) every event it could not write faithfully.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "SSEEvent",
    "SSEParser",
    "encode_event",
    "encode_events",
    "parse_all",
]

_BOM = "\ufeff"
_LINE_END = re.compile(r"\r\n?|\n")
_LINE_ENDINGS = ("\n", "\r\n", "\r")


@dataclass(frozen=True)
class SSEEvent:
    """One block of an event stream: the fields it set and the comments it held.

    `data` is None when the block had no `data` field ("" for a `data` field with an empty
    value); `event`, `id` and `retry` are None when the block did not set them (consumers
    treat a missing `event` as "message"). `id` is "" for an explicit empty id, which resets
    the last event ID. `comments` are the block's comment lines, without the leading ':'
    and without one following space.
    """

    data: str | None = None
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comments: tuple[str, ...] = ()

    @property
    def dispatched(self) -> bool:
        """Whether a WHATWG browser would fire a MessageEvent for this block."""
        return self.data is not None


class SSEParser:
    """Incremental `text/event-stream` parser: bytes in arbitrary chunks, SSEEvents out.

    A block is reported when its terminating blank line arrives, if it set any of `data`,
    `event`, `id` or `retry`, or held a comment. Fields that WHATWG ignores (unknown names,
    an `id` containing NUL, a `retry` that is not all ASCII digits) do not count as set.

    `last_event_id` is the event source's last event ID string: it takes the value of the
    persistent last event ID buffer whenever a block ends, so an `id` in a block that never
    completes does not reach it. `retry` is the reconnection time in milliseconds and,
    as in WHATWG, takes effect as soon as its line is read.
    """

    def __init__(self, *, last_event_id: str = "") -> None:
        self.last_event_id: str = last_event_id
        self.retry: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True  # no character decoded yet: a BOM may still come
        self._after_cr = False  # the last line ended in CR: an LF next belongs to it
        self._partial: list[str] = []  # fragments of the unterminated line, joined once
        self._closed = False
        self._id_buffer = last_event_id
        # The block being read.
        self._lines: list[str] = []
        self._data: list[str] | None = None
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._comments: list[str] = []

    @property
    def pending(self) -> bool:
        """Whether input was received that is not part of a completed block.

        After `close()` this says whether the stream ended in the middle of a block (or
        a line, or a UTF-8 sequence), which WHATWG discards.
        """
        return bool(self._lines or self._partial or self._decoder.getstate()[0])

    @property
    def pending_text(self) -> str:
        """The decoded text of the unfinished block, line ends normalised to LF.

        Bytes of an incomplete UTF-8 sequence are not included until `close()` decodes them
        (as U+FFFD).
        """
        return "".join(line + "\n" for line in self._lines) + "".join(self._partial)

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse the next chunk of the stream; return the blocks it completed."""
        if self._closed:
            raise ValueError("feed() on a closed SSEParser")
        return self._consume(self._decoder.decode(chunk))

    def close(self) -> list[SSEEvent]:
        """End of stream. Always returns []: WHATWG discards an incomplete trailing block.

        The list return keeps `feed`/`close` symmetric for callers. Check `pending` (and
        `pending_text`) afterwards to learn whether, and what, input was discarded.
        Further calls do nothing; `feed()` after `close()` raises ValueError.
        """
        if self._closed:
            return []
        # Flushing can only yield U+FFFD for a truncated sequence, never a line end.
        events = self._consume(self._decoder.decode(b"", final=True))
        self._closed = True
        return events

    def _consume(self, text: str) -> list[SSEEvent]:
        if not text:
            return []
        if self._at_start:
            self._at_start = False
            if text[0] == _BOM:
                text = text[1:]
        if self._after_cr:
            self._after_cr = False
            if text[:1] == "\n":
                text = text[1:]
        if not text:
            return []
        # A CR at the end may be the first half of a CRLF split across chunks. The line is
        # complete either way, so it is processed now rather than held back.
        self._after_cr = text[-1] == "\r"
        parts = _LINE_END.split(text) if "\r" in text else text.split("\n")
        if len(parts) == 1:
            self._partial.append(text)
            return []
        events: list[SSEEvent] = []
        first = parts[0]
        if self._partial:
            self._partial.append(first)
            first = "".join(self._partial)
            self._partial.clear()
        self._line(first, events)
        for index in range(1, len(parts) - 1):
            self._line(parts[index], events)
        if parts[-1]:
            self._partial.append(parts[-1])
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._end_block(events)
            return
        self._lines.append(line)
        if line[0] == ":":
            self._comments.append(line[2:] if line[1:2] == " " else line[1:])
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            if self._data is None:
                self._data = [value]
            else:
                self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = self._id_buffer = value
        elif name == "retry" and value.isascii() and value.isdigit():
            try:
                retry = int(value.lstrip("0") or "0")
            except ValueError:
                # Beyond Python's int-from-str digit limit: no meaningful delay either.
                return
            self._retry = self.retry = retry

    def _end_block(self, events: list[SSEEvent]) -> None:
        self.last_event_id = self._id_buffer
        if (
            self._data is not None
            or self._event is not None
            or self._id is not None
            or self._retry is not None
            or self._comments
        ):
            events.append(
                SSEEvent(
                    data=None if self._data is None else "\n".join(self._data),
                    event=self._event,
                    id=self._id,
                    retry=self._retry,
                    comments=tuple(self._comments),
                )
            )
        self._lines = []
        self._data = None
        self._event = self._id = None
        self._retry = None
        self._comments = []


def _check(value: str, what: str, forbidden: str) -> None:
    for char in forbidden:
        if char in value:
            raise ValueError(f"SSE {what} must not contain {char!r}: {value!r}")


def encode_event(event: SSEEvent, *, line_ending: str = "\n") -> bytes:
    """The bytes of one block: comments, then `event`, `id`, `retry`, `data`, a blank line.

    `line_ending` ("\\n", "\\r\\n" or "\\r") lets a mock server exercise a client's handling
    of each line end WHATWG allows. Raises ValueError for an event that would not parse
    back identically:

    - `data` is split on "\\n" into several `data:` lines, but must not contain "\\r". The
      format has no escaping and a parser turns CR and CRLF into "\\n", so such data cannot
      be sent as given. Rejecting it, rather than silently normalising, keeps the writer
      exact (what a fixture asked for is what goes on the wire) and makes the round trip
      hold for every accepted event with no exceptions.
    - `event` and `comments` must not contain line breaks; `id` must not contain line
      breaks or NUL (a parser ignores such an id); `retry` must be a non-negative int.
      A comment with a line break is rejected rather than split, for the same reason.
    - An event with no field and no comment has no encoding (a lone blank line is not a
      block), so it is rejected too.
    """
    if line_ending not in _LINE_ENDINGS:
        raise ValueError(f"line_ending must be one of {_LINE_ENDINGS!r}, not {line_ending!r}")
    lines: list[str] = []
    for comment in event.comments:
        _check(comment, "comment", "\r\n")
        lines.append(": " + comment)
    if event.event is not None:
        _check(event.event, "event name", "\r\n")
        lines.append("event: " + event.event)
    if event.id is not None:
        _check(event.id, "id", "\r\n\0")
        lines.append("id: " + event.id)
    if event.retry is not None:
        if isinstance(event.retry, bool) or not isinstance(event.retry, int) or event.retry < 0:
            raise ValueError(f"SSE retry must be a non-negative int: {event.retry!r}")
        lines.append(f"retry: {event.retry}")
    if event.data is not None:
        _check(event.data, "data", "\r")
        lines.extend("data: " + part for part in event.data.split("\n"))
    if not lines:
        raise ValueError("an SSEEvent with no field and no comment cannot be written")
    lines.append("")
    try:
        return (line_ending.join(lines) + line_ending).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"SSE event is not encodable as UTF-8: {exc}") from None


def encode_events(events: Iterable[SSEEvent], *, line_ending: str = "\n") -> bytes:
    """The bytes of several blocks, one after another."""
    return b"".join(encode_event(event, line_ending=line_ending) for event in events)


def parse_all(data: bytes) -> list[SSEEvent]:
    """Parse a complete stream; an incomplete trailing block is discarded."""
    parser = SSEParser()
    return parser.feed(data) + parser.close()
