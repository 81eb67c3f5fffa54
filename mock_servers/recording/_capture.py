"""What a recording proxy saw on the wire, in the order it passed, whatever the transport.

The proxies (`_stdio`, `_http`) only relay and append here; `_build` turns the capture into a
script. Entries are appended from several threads (stdio) or tasks (HTTP), hence the lock.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["UNPARSED", "Capture", "HttpFacts", "Seen", "decode"]

UNPARSED: Any = object()
"""The message of a line or event whose text is not JSON."""


def decode(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return UNPARSED


@dataclass(frozen=True)
class Seen:
    """One message (or unparsable line) that passed, and how it travelled."""

    sender: Literal["client", "server"]
    message: Any
    text: str
    channel: Literal["stdio", "post", "get"] = "stdio"
    exchange: int | None = None
    """HTTP: the number of the POST this message came in, or came in answer to."""
    sse: bool = False
    """Carried in an event stream (HTTP)."""
    event_id: str | None = None
    retry: int | None = None
    prime: bool = False
    """An event with an id and empty data (no message)."""
    status: int | None = None
    """HTTP: the status of the answer that carried this message."""


@dataclass
class HttpFacts:
    """How the Streamable HTTP server behaved, beyond its messages."""

    path: str = "/mcp"
    sessions: bool = False
    get: Literal["stream", "405"] | None = None
    delete: Literal["accept", "405"] | None = None


@dataclass
class Capture:
    transport: Literal["stdio", "http", "sse-legacy"]
    """`http` until an HTTP server shows it is HTTP+SSE (`sse-legacy`)."""
    seen: list[Seen] = field(default_factory=list)
    http: HttpFacts = field(default_factory=HttpFacts)
    ended_by: str | None = None
    """Who ended the session and how, when it ended otherwise than the client closing."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def snapshot(self) -> list[Seen]:
        with self._lock:
            return list(self.seen)
