"""The HTTP side of `mcp-testbench serve`: a fresh mock per client session.

`HttpMock` serves one run of a script at one revision. A developer's client connects
again and again, speaking whatever revision it speaks; the `Dispatcher` is the ASGI app in
front that gives each new session a fresh `HttpMock` (the script from its start) at the
revision its first message asks for (`_negotiation.choose_revision`), and routes every
later request by its session id to the mock that issued it.

- Streamable HTTP before 2026-07-28: an `initialize` starts a session. A re-initialize
  after the script's `expire_session` fault ended a session goes on with that mock (the
  script continues, as in a single run); any other `initialize` starts afresh.
- 2026-07-28 has no sessions: a `server/discover` starts afresh, and the requests after it
  go to that mock (a run of a 2026 client begins with discovery), unless one matches no
  step left in that run but would match in a fresh one: a fresh run begins with it.
- A `server/discover` probe when the script allows no 2026-era revision is answered
  (-32601) by a throwaway mock, so the client's `initialize` that follows starts clean.
- HTTP+SSE (2024-11-05): each GET of the SSE endpoint is a session.
- Requests that name no session and no revision (a script with `http.sessions` off)
  go to the newest session.

`shared=True` keeps one mock for the whole run (the script's state carries over between
sessions, as in the harness), its revision picked from the first message.

A day of `serve` stays small: requests find their session through an index (constant time,
however many there are); a session its client ended (DELETE) is dropped at once, a 2026 run
when the next discovery begins another, and any session idle for `idle_timeout` seconds
(with no request or stream under way) when a new one needs room. Past `max_sessions` live
sessions a new one gets 503, with a message naming both settings.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from harness.protocol import ErrorObject, ErrorResponse, is_stateless
from mock_servers.engine import (
    Choice,
    Script,
    ScriptError,
    SessionTranscript,
    Transcript,
    choose_revision,
    first_message,
    matches,
    served_revisions,
)
from mock_servers.http._app import (
    DEFAULT_ANSWER_TIMEOUT,
    SERVER_ERROR,
    HttpMock,
    record_refusal,
)
from mock_servers.http._headers import LOOPBACK_HOSTS
from mock_servers.http._wire import MAX_BODY, Exchange, Receive, Scope, Send

__all__ = ["DEFAULT_MAX_SESSIONS", "DEFAULT_SESSION_IDLE", "Dispatcher"]

Announce = Callable[[str], None]

#: The most live sessions `serve` keeps (each is a run of the script: some 15 KB).
DEFAULT_MAX_SESSIONS = 1000
#: Seconds with no request and no open stream after which a session may be dropped.
DEFAULT_SESSION_IDLE = 600.0


class _Full(Exception):
    """No room for another session (every live one is in use or recently used)."""


@dataclass
class _Session:
    tag: str
    mock: HttpMock
    # Session ids ended by an expire_session fault whose re-initialize went on with this mock.
    resumed: set[str] = field(default_factory=set)
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0  # requests of it under way, open streams included

    def ended(self) -> bool:
        """Every session of this mock was ended by its client (DELETE)."""
        states = set(self.mock.sessions.values())
        return bool(states) and states <= {"terminated"}

    def expired_waiting(self) -> set[str]:
        states = self.mock.sessions
        if "active" in states.values():
            return set()
        return {sid for sid, state in states.items() if state == "expired"} - self.resumed


async def _peek(receive: Receive) -> tuple[bytes, Receive]:
    """The request body (up to the mock's limit), and a `receive` that replays it."""
    chunks: list[bytes] = []
    size = 0
    more = True
    disconnect: dict[str, Any] | None = None
    while more and size <= MAX_BODY:
        message = await receive()
        if message.get("type") == "http.disconnect":
            disconnect = dict(message)
            break
        chunk = bytes(message.get("body", b""))
        chunks.append(chunk)
        size += len(chunk)
        more = bool(message.get("more_body", False))
    body = b"".join(chunks)
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if not replayed:
            replayed = True
            if disconnect is not None and not body:
                return disconnect
            return {"type": "http.request", "body": body, "more_body": more}
        if disconnect is not None:
            return disconnect
        return dict(await receive())

    return body, replay


class Dispatcher:
    """An ASGI app: one `HttpMock` per client session, each at the revision its client
    speaks (or `revision`, when given). `announce` gets one line per new session (its
    revision and why); `log` one line per message (None: quiet). Every session's
    entries also go to `transcript`, tagged with `session`."""

    def __init__(
        self,
        script: Script,
        *,
        revision: str | None = None,
        transport: str = "http",
        transcript: Transcript | None = None,
        answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
        shared: bool = False,
        announce: Announce | None = None,
        log: Announce | None = None,
        allowed_hosts: frozenset[str] | None = LOOPBACK_HOSTS,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float = DEFAULT_SESSION_IDLE,
    ) -> None:
        allowed = served_revisions(script, transport)
        if revision is not None:
            script.pick_revision(revision)
            if revision not in allowed:
                raise ScriptError(
                    script.source,
                    "/revisions",
                    f"revision {revision} does not run over {transport}",
                    "2024-11-05 is served with --sse-legacy, later revisions without it",
                )
            allowed = (revision,)
        self.script = script
        self.allowed = allowed
        self.fixed = revision is not None
        self.transport = transport
        self.transcript = transcript
        self.answer_timeout = answer_timeout
        self.shared = shared
        self.allowed_hosts = allowed_hosts
        self.path = script.http.path
        #: The URL it listens at without the endpoint path (set once it listens), which
        #: each session's mock fills `$base_url` templates with.
        self.base_url = ""
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.sessions: list[_Session] = []  # the live ones, oldest first
        self.probes: deque[_Session] = deque(maxlen=16)  # answered at once, kept for close()
        self._by_id: dict[str, _Session] = {}
        self._lru: OrderedDict[str, _Session] = OrderedDict()  # by tag, least recently used first
        self._announce = announce
        self._log = log
        self._count = 0
        self._stateless: _Session | None = None

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """End every mock's long-lived responses (before the server stops)."""
        for session in [*self.sessions, *self.probes]:
            session.mock.close()

    def finish(self) -> None:
        """Record each session's unconsumed steps (probes have none worth telling)."""
        for session in self.sessions:
            session.mock.finish()

    # -- routing -------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            return
        headers = {
            bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
            for k, v in scope.get("headers", [])
        }
        target = self._by_session(scope, headers)
        if target is None:
            body = b""
            if scope.get("method") == "POST":
                body, receive = await _peek(receive)
            try:
                target = self._pick(scope, body, headers.get("mcp-protocol-version"))
            except _Full:
                await self._unavailable(scope, receive, send)
                return
        target.busy += 1
        try:
            await target.mock(scope, receive, send)
        finally:
            target.busy -= 1
            target.last_used = time.monotonic()
            # The ids its mock issued (one or two): found in one lookup from now on.
            self._by_id.update(dict.fromkeys(target.mock.sessions, target))
            if target.tag in self._lru:
                self._lru.move_to_end(target.tag)
        if scope.get("method") == "DELETE" and target.ended():
            if self.shared:
                target.mock.finish()  # one run for every session: it goes on
            else:
                self._drop(target)  # the client ended it: nothing will reach it again

    # -- how many sessions live ------------------------------------------------------------

    def _drop(self, session: _Session) -> None:
        """End a session's mock (its unconsumed steps recorded) and forget it."""
        session.mock.finish()
        session.mock.close()
        for sid in session.mock.sessions:
            if self._by_id.get(sid) is session:
                del self._by_id[sid]
        self._lru.pop(session.tag, None)
        if session in self.sessions:
            self.sessions.remove(session)
        if self._stateless is session:
            self._stateless = None

    def _make_room(self) -> None:
        """Drop the sessions idle past the bound (least recently used first, so the scan
        stops at the first that is not); _Full if no room is left even then."""
        now = time.monotonic()
        stale = []
        for session in () if self.shared else self._lru.values():
            if now - session.last_used < self.idle_timeout:
                break
            if session.busy == 0:  # an open stream is use, whatever the clock says
                stale.append(session)
        for session in stale:
            self._say(f"{session.tag}: idle for {now - session.last_used:.0f} s: dropped")
            self._drop(session)
        if len(self.sessions) >= self.max_sessions:
            raise _Full

    async def _unavailable(self, scope: Scope, receive: Receive, send: Send) -> None:
        """503 for a session there is no room for: recorded as any refusal is (the request,
        the refusal, the answer), under the tag "refused", since no mock took it."""
        text = (
            f"Service Unavailable: {len(self.sessions)} sessions are open, the most this "
            f"server keeps (--max-sessions {self.max_sessions}); end one with DELETE, or wait "
            f"until one has been idle for {self.idle_timeout:g} s (--session-idle)"
        )
        self._say(f"refused a new session: {text}")
        transcript = SessionTranscript(
            self.transcript,
            "refused",
            script=self.script.name,
            revision="",
            transport=self.transport,
            log=self._log,
        )
        ex = Exchange(transcript, 0, scope, receive, send)
        await ex.read_body()
        ex.record_request()
        record_refusal(transcript, ex, 503, "too-many-sessions", text, scripted=True)
        answer = ErrorResponse(None, ErrorObject(SERVER_ERROR, text))
        transcript.record(
            "message", direction="server", message=answer.to_json(), channel=ex.channel
        )
        retry = str(max(1, round(self.idle_timeout)))
        await ex.respond_json(503, answer, {"retry-after": retry})

    def _session_id(self, scope: Scope, headers: Mapping[str, str]) -> str | None:
        if self.transport == "sse-legacy":
            query = bytes(scope.get("query_string", b"")).decode("latin-1")
            return parse_qs(query).get("session_id", [None])[0]
        return headers.get("mcp-session-id")

    def _by_session(self, scope: Scope, headers: Mapping[str, str]) -> _Session | None:
        if self.shared and self.sessions:
            return self.sessions[0]
        sid = self._session_id(scope, headers)
        if sid is None:
            return None
        found = self._by_id.get(sid)
        if found is not None:
            return found
        # A session id no live mock issued: the newest mock answers it (404, session unknown).
        return self.sessions[-1] if self.sessions else None

    def _pick(self, scope: Scope, body: bytes, version_header: str | None) -> _Session:
        message = first_message(body) if body else None
        method = (message or {}).get("method")
        choice = choose_revision(self.allowed, message, version_header=version_header)
        if self.shared:
            return self._new(choice)
        if self.transport == "sse-legacy":
            if scope.get("method") == "GET" or not self.sessions:
                return self._new(Choice(self.allowed[-1], "HTTP+SSE, the 2024-11-05 transport"))
            return self.sessions[-1]
        if method == "initialize" and not choice.probe:
            for session in reversed(self.sessions):
                waiting = session.expired_waiting()
                if waiting:
                    session.resumed |= waiting
                    self._say(
                        f"{session.tag}: a new initialize after its session expired: "
                        "the script goes on"
                    )
                    return session
            return self._new(choice)
        if choice.probe:
            return self._new(choice, probe=True)
        if is_stateless(choice.revision):
            current = self._stateless
            if current is not None and method != "server/discover":
                if not self._ran_out(current, message):
                    return current
                self._say(f"{current.tag}: no step left for {method}: a fresh run begins")
            if current is not None and current.busy == 0 and not self.shared:
                self._drop(current)  # a 2026 run ends when the next begins
            current = self._stateless = self._new(choice)
            return current
        if self.sessions:
            return self.sessions[-1]
        return self._new(choice)

    def _ran_out(self, session: _Session, message: Mapping[str, Any] | None) -> bool:
        """A request the session's run can no longer match, though a fresh run would.

        A 2026-07-28 client that does not discover again before its next run (there is
        no session to end) would otherwise find every step consumed.
        """
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return False
        steps = [
            step
            for step in self.script.steps
            if step.kind == "expect" and matches(step.raw["expect"], message)
        ]
        left = {step.index for step in session.mock.engine.unconsumed()}
        return bool(steps) and not any(
            step.index in left or step.raw.get("repeat") or step.raw.get("optional")
            for step in steps
        )

    def _new(self, choice: Choice, *, probe: bool = False) -> _Session:
        if not probe:
            self._make_room()
        self._count += 1
        tag = f"{'probe' if probe else 'session'} {self._count}"
        why = "given with --revision" if self.fixed else choice.why
        transcript = SessionTranscript(
            self.transcript,
            tag,
            script=self.script.name,
            revision=choice.revision,
            transport=self.transport,
            log=self._log,
        )
        mock = HttpMock(
            self.script,
            revision=choice.revision,
            transport=self.transport,
            transcript=transcript,
            answer_timeout=self.answer_timeout,
            allowed_hosts=self.allowed_hosts,
        )
        mock.engine.base_url = self.base_url
        session = _Session(tag, mock)
        if probe:
            self.probes.append(session)
        else:
            self.sessions.append(session)
            self._lru[tag] = session
        self._say(f"{tag}: {choice.revision} ({why})")
        return session

    def _say(self, text: str) -> None:
        if self._announce is not None:
            self._announce(text)
