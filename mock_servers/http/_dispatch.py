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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from harness.protocol import is_stateless
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
from mock_servers.http._app import DEFAULT_ANSWER_TIMEOUT, HttpMock
from mock_servers.http._headers import LOOPBACK_HOSTS
from mock_servers.http._wire import MAX_BODY, Receive, Scope, Send

__all__ = ["Dispatcher"]

Announce = Callable[[str], None]


@dataclass
class _Session:
    tag: str
    mock: HttpMock
    # Session ids ended by an expire_session fault whose re-initialize went on with this mock.
    resumed: set[str] = field(default_factory=set)

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
        self.sessions: list[_Session] = []
        self.probes: list[_Session] = []
        self._announce = announce
        self._log = log
        self._count = 0
        self._stateless: _Session | None = None

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """End every mock's long-lived responses (before the server stops)."""
        for session in self.sessions + self.probes:
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
            target = self._pick(scope, body, headers.get("mcp-protocol-version"))
        await target.mock(scope, receive, send)
        if scope.get("method") == "DELETE" and target.ended():
            target.mock.finish()  # the client ended it: tell the steps it never reached

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
        for session in reversed(self.sessions):
            if sid in session.mock.sessions:
                return session
        # A session id no mock issued: the newest mock answers it (404, session unknown).
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
        )
        mock.allowed_hosts = self.allowed_hosts
        session = _Session(tag, mock)
        (self.probes if probe else self.sessions).append(session)
        self._say(f"{tag}: {choice.revision} ({why})")
        return session

    def _say(self, text: str) -> None:
        if self._announce is not None:
            self._announce(text)
