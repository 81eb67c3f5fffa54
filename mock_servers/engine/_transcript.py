"""The transcript: everything a mock server saw and did, in a stable JSON form.

In memory it is a list of entries; on disk it is JSON Lines, one entry a line, written
and flushed as it happens, so a crash or a SIGKILL of the server loses nothing before
that moment. The first line is a header naming the script, revision and transport. A
process whose transcript only its file can show (a stdio mock) keeps no entries in memory
(`keep=False`): a long run then holds nothing that grows, for the garbage collector to
walk again and again.

A transcript opened with `append=True` continues the file it finds (a client that
restarts a crashed stdio server spawns the same command again, and its checks need both
processes in one record): no second header, `seq` goes on from the last entry, and `t`
from the file's last write (its modification time), so both stay in order. One process
at a time: the restarted one starts after the first has exited.

The header's `origin` is the moment `t` counts from, on the machine's monotonic clock
(CLOCK_MONOTONIC, one for every process): the harness places what its client did (an
operation's start and end, on the same clock) among the server's entries with it, to tell
what a client had done before a fault from what came after.

Every entry has `seq` (0, 1, ...), `t` (seconds since the server started, rounded to
microseconds) and `kind`; the other members depend on the kind (docs/transcripts.md):

    message        direction client|server, message (the JSON-RPC value), channel;
                   a client message in a refused HTTP body also has refused (below)
    invalid        direction client, raw (text), code, reason: bytes that are no message
    unmatched      message, closest (step label or null), diff (list of strings)
    step           step (index), label: a scripted step was consumed (or fired)
    http_request   request (number), method, path, headers, body
    http_response  request, status, headers, body (for non-streamed bodies)
    document       request, path, method: that request was for a document of
                   `http.documents` (served to a GET), not for the MCP endpoint
    sse_event      request, event (id, event, data, retry, comments)
    start          pid: a stdio server process began (one per process in the file)
    stdin_eof, signal (name), exit (code, reason), fault (fault), note (text)
    unconsumed     steps (labels of expected steps never consumed)
    withheld       rule, step, label, message, reason, fix: a message the script would
                   have sent that the spec forbids for this client; it was not sent,
                   and the run goes on (a conformant server would not send it either).
                   rule: undeclared-capability (a server request for a capability the
                   client did not declare), log-opt-in (2026: a log message on a request
                   without logLevel, or below it), log-without-request (2026: a log
                   message tied to no request)
    refusal        request, status, rule, reason (text), scripted: the HTTP mock refused
                   that request with a 4xx (recorded before the response); header:
                   the request header at fault, on a header-mismatch refusal
    mock_error     where, revision, pointer, reason, message: the send gate refused a
                   message the mock was about to send (invalid for its revision, and not
                   marked as a deliberate violation); nothing was sent, and the run ends.
                   Also, at the end of a run, a scripted reply whose one copy (sent in
                   every answer) was changed after it went out (message {}).
    auth           request, server (resource|authorization), endpoint (mcp,
                   resource-metadata, server-metadata, authorize, token, register, jwks,
                   well-known, unknown), method, path, status, outcome ("ok" or the OAuth
                   error), query, params (authorize and token parameters, never a client
                   secret), bearer_header, issued_token, token_in_query,
                   issued_token_in_query, client_auth, issued, metadata,
                   metadata_document(_error), reason, resource_metadata (the URL a
                   401 or 403 named), required_scope (the scope a 403 asks for), code,
                   iss, iss_mismatch and iss_advertised (an authorization response: the
                   iss it carried, and whether the metadata advertised one), resource,
                   mcp_url, issuer (a resource-metadata answer: the resource it names, the
                   endpoint's URL, the authorization server), issuer,
                   code_challenge_methods_supported and issuer_mismatch (a
                   server-metadata answer; issuer_mismatch: its issuer is deliberately not
                   the one its URL was formed from): one per request a script's `auth` section handled
                   (mock_servers/http/_auth_server.py)

A refusal is recorded for every HTTP request the mock refuses with a 4xx of its own, on
any method or path; a scripted reply with a 4xx status is an answer, not a refusal.
When the engine never saw the body of a refused POST, each JSON-RPC message in it (a
batch's too) is still recorded as a client `message` entry carrying
`refused: {status, rule, scripted}`, after any `invalid` entry and before the `refusal`
entry; a JSON-RPC error body of the refusal is recorded as a server `message` entry.
`scripted` is true when the script set the refusal up (an http setting, a fault step),
false when the client broke a transport rule. The rules:

    too-many-sessions  503: `serve` keeps no more sessions (--max-sessions); scripted
    host               421: a Host that names neither loopback nor an allowed name (DNS
                       rebinding); marked scripted: the server's setting, no client rule
    origin             403: an Origin that is not loopback (http.check_origin)
    wrong-path         404: not the MCP path (nor, over HTTP+SSE, the messages path)
    method-not-allowed 405: a method the endpoint does not serve; scripted when the
                       script's http.get / http.delete is "405" or http.sessions is off
    not-acceptable     406: a GET whose Accept does not list text/event-stream
    session-required   400: no Mcp-Session-Id (HTTP+SSE: no session_id in the query)
    session-unknown    404: a session id the mock never issued
    session-ended      404: a session that was deleted, or whose HTTP+SSE stream ended;
                       scripted when an expire_session fault ended it (the request whose
                       step carries that fault is answered 404 too: its message reached
                       the engine, so it has no `refused` member)
    protocol-version   400: an MCP-Protocol-Version header (2025-06-18 .. 2025-11-25)
                       naming no version the mock serves, before a session exists too;
                       never on initialize, nor on an answer to a server request sent
                       during initialization that carries the offered version, nor on
                       a modern (2026-07-28) request before initialization (an era probe)
    header-mismatch    400 (-32020, 2026-07-28): request headers disagree with the body:
                       a standard header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) or
                       an Mcp-Param-* header that the called tool's x-mcp-header asks
                       for is missing, not a valid header value (bad base64 included),
                       or not the body's value
    unparsable         400: a body that is no JSON-RPC message (also an `invalid` entry)
    too-large          413: a body over the mock's limit
    legacy-post        the script's http.legacy_post status (405, 404 or 400): an
                       HTTP+SSE server refusing a POST on its SSE path; always scripted
    unknown-method-2026       404 (-32601): an unknown method at 2026-07-28
    meta-missing-2026         400 (-32602): a 2026-07-28 request without its _meta
    unsupported-version-2026  400 (-32022): a 2026-07-28 _meta protocol version the
                              script does not serve
    engine-error       any other 4xx answer of the engine's own (none today)
    unauthorized       401 (always scripted): the script's `auth` wants a bearer token the
                       request lacks, or one that is unknown, expired or for another
                       resource; the `auth` entry of the request says which
    insufficient-scope 403 (always scripted): a step-up (`auth.step_up`)
    gave-up            410 (always scripted): a request that would have been refused by
                       the step-up once more, after `auth.step_up.give_up_after` refusals

The last four are the engine's own answers: the message went through the engine (no
`refused` member) and its answer is recorded as usual.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["NOTIFY_SUFFIX", "TRANSCRIPT_FORMAT", "Transcript", "read_transcript"]

TRANSCRIPT_FORMAT = 1
NOTIFY_SUFFIX = ".notify"


class Transcript:
    def __init__(
        self,
        *,
        script: str = "",
        revision: str = "",
        transport: str = "",
        path: str | Path | None = None,
        append: bool = False,
        keep: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.header: dict[str, Any] = {
            "transcript": TRANSCRIPT_FORMAT,
            "script": script,
            "revision": revision,
            "transport": transport,
        }
        self.entries: list[dict[str, Any]] = []  # this process's entries only (if `keep`)
        self._keep = keep
        self._recorded = 0
        self._clock = clock
        self._start = clock()
        self.header["origin"] = round(self._start, 6)
        self._first_seq = 0  # entries written by earlier processes (append)
        self._file: IO[str] | None = None
        self._notify: _Notifier | None = None
        if path is None:
            return
        self._notify = _Notifier.for_transcript(Path(path))
        if append and _has_content(Path(path)):
            self._continue(Path(path))
        else:
            self._file = Path(path).open("w", encoding="utf-8")  # noqa: SIM115 (closed in close())
            self._write(self.header)

    def _continue(self, path: Path) -> None:
        """Go on after the entries already in `path` (ValueError if it is another run's)."""
        last_write = path.stat().st_mtime
        with path.open("r+b") as raw:
            data = raw.read()
            # A line cut short (that process was killed mid-write) would merge with ours.
            whole = data[: data.rfind(b"\n") + 1]
            if len(whole) != len(data):
                raw.truncate(len(whole))
        lines = [ln for ln in whole.decode("utf-8").split("\n") if ln]
        if not lines:
            raise ValueError(f"{path}: cannot append: no header line")
        found = json.loads(lines[0])
        ours = {k: v for k, v in self.header.items() if k != "origin"}
        theirs = {k: found.get(k) for k in ours}
        if theirs != ours:
            raise ValueError(f"{path}: cannot append: the file is the transcript of {theirs}")
        last = json.loads(lines[-1]) if len(lines) > 1 else {}
        self._first_seq = int(last.get("seq", -1)) + 1
        # t goes on from the last entry's, plus the time since it was written: in order.
        self._start -= float(last.get("t", 0.0)) + max(0.0, time.time() - last_write)
        self.header["origin"] = found.get("origin", self.header["origin"])
        self._file = path.open("a", encoding="utf-8")  # closed in close()

    def record(self, kind: str, **fields: Any) -> None:
        seq = self._first_seq + self._recorded
        self._recorded += 1
        if not self._keep and self._file is None:
            return  # nothing would keep it (a mock started by hand, without a transcript)
        entry = {"seq": seq, "t": round(self._clock() - self._start, 6), "kind": kind, **fields}
        if self._keep:
            self.entries.append(entry)
        if self._file is not None:
            self._write(entry)

    def _write(self, value: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr) + "\n")
        self._file.flush()
        if self._notify is not None:
            self._notify.ping()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._notify is not None:
            self._notify.sock.close()
            self._notify = None

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


class _Notifier:
    """Tells a watcher that the transcript grew: one datagram per entry to a Unix socket,
    when a watcher announced one before the server started, in the file
    `<transcript>.notify` (which holds the socket's path: a socket path has a short length
    limit, a transcript path does not). The harness does, so that its waits wake on the
    entry they wait for, not on a timer. Best effort: a full or gone socket drops the ping;
    the transcript file is the record."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setblocking(False)

    @classmethod
    def for_transcript(cls, path: Path) -> _Notifier | None:
        if not hasattr(socket, "AF_UNIX"):
            return None
        try:
            address = Path(f"{path}{NOTIFY_SUFFIX}").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return cls(address) if address else None

    def ping(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendto(b".", self.address)


def _has_content(path: Path) -> bool:
    try:
        return os.path.getsize(path) > 0
    except OSError:  # not there yet: the first process creates it
        return False


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
