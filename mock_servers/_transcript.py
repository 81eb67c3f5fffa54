"""The transcript: everything a mock server saw and did, in a stable JSON form.

In memory it is a list of entries; on disk it is JSON Lines, one entry a line, written
and flushed as it happens, so a crash or a SIGKILL of the server loses nothing before
that moment. The first line is a header naming the script, revision and transport.

Every entry has `seq` (0, 1, ...), `t` (seconds since the server started, rounded to
microseconds) and `kind`; the other members depend on the kind (docs/transcripts.md):

    message        direction client|server, message (the JSON-RPC value), channel
    invalid        direction client, raw (text), code, reason: bytes that are no message
    unmatched      message, closest (step label or null), diff (list of strings)
    step           step (index), label: a scripted step was consumed (or fired)
    http_request   request (number), method, path, headers, body
    http_response  request, status, headers, body (for non-streamed bodies)
    sse_event      request, event (id, event, data, retry, comments)
    stdin_eof, signal (name), exit (code, reason), fault (fault), note (text)
    unconsumed     steps (labels of expected steps never consumed)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["TRANSCRIPT_FORMAT", "Transcript", "read_transcript"]

TRANSCRIPT_FORMAT = 1


class Transcript:
    def __init__(
        self,
        *,
        script: str = "",
        revision: str = "",
        transport: str = "",
        path: str | Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.header: dict[str, Any] = {
            "transcript": TRANSCRIPT_FORMAT,
            "script": script,
            "revision": revision,
            "transport": transport,
        }
        self.entries: list[dict[str, Any]] = []
        self._clock = clock
        self._start = clock()
        self._file: IO[str] | None = None
        if path is not None:
            self._file = Path(path).open("w", encoding="utf-8")  # noqa: SIM115 (closed in close())
            self._write(self.header)

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        entry = {"seq": len(self.entries), "t": round(self._clock() - self._start, 6), "kind": kind}
        entry.update(fields)
        self.entries.append(entry)
        if self._file is not None:
            self._write(entry)
        return entry

    def _write(self, value: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def of_kind(self, *kinds: str) -> Iterator[dict[str, Any]]:
        return (e for e in self.entries if e["kind"] in kinds)

    def client_messages(self) -> list[dict[str, Any]]:
        """Every well-formed JSON-RPC message the client sent, in order."""
        return [
            e["message"]
            for e in self.entries
            if e["kind"] == "message" and e["direction"] == "client"
        ]

    def to_json(self) -> dict[str, Any]:
        return {**self.header, "entries": list(self.entries)}


def read_transcript(path: str | Path) -> dict[str, Any]:
    """A transcript file (JSON Lines) as one JSON object: the header plus `entries`.

    A last line cut short (the server was killed while writing it) is left out.
    """
    # split("\n"), not splitlines(): entries may hold U+2028 and friends unescaped.
    lines = [ln for ln in Path(path).read_text(encoding="utf-8").split("\n") if ln]
    if not lines:
        raise ValueError(f"{path}: empty transcript (the server wrote nothing)")
    header = json.loads(lines[0])
    entries = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            if number != len(lines):
                raise ValueError(f"{path}:{number}: not a transcript entry") from None
    return {**header, "entries": entries}
