"""The HTTP mock server: one replay Engine behind a Starlette app.

One `HttpMock` serves one run of one script: the whole script is one timeline across
HTTP requests and sessions (a client that re-initializes after its session expired
continues the script). Three shapes of transport, by revision and `transport`:

- Streamable HTTP, 2025-03-26 .. 2025-11-25 (`transport="http"`): POST, GET and DELETE
  on `script.http.path`, `Mcp-Session-Id`, the GET stream, resumption with
  `Last-Event-ID`.
- Streamable HTTP, 2026-07-28 (`transport="http"`): POST only, no sessions, request
  headers checked against the body, `subscriptions/listen` streams.
- HTTP+SSE, 2024-11-05 (`transport="sse-legacy"`): GET opens the stream whose first
  event names the POST endpoint; answers travel on the stream.

Every exchange is recorded (docs: mock_servers/engine/_transcript.py) and every handler catches
and records its own failures, so any bytes on any method get a well-formed answer.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any
from urllib.parse import parse_qs

import anyio
from starlette.applications import Starlette
from starlette.routing import Route

from harness.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    STATELESS_REVISIONS,
    Batch,
    ErrorObject,
    ErrorResponse,
    Message,
    ProtocolError,
    Request,
    RequestId,
    Response,
    batches_allowed,
    parse,
)
from mock_servers.engine import (
    UNSUPPORTED_PROTOCOL_VERSION,
    Action,
    Delivery,
    Engine,
    HttpInfo,
    Outcome,
    Script,
    Transcript,
    complete_stateless_result,
    jsonrpc_in_text,
    minimal_result,
    with_subscription_id,
)
from mock_servers.http._auth_server import AuthMock
from mock_servers.http._headers import (
    HEADER_MISMATCH,
    LOOPBACK_HOSTS,
    ParamHeaders,
    accepts,
    declared_param_headers,
    header_mismatch,
    host_allowed,
    loopback_origin,
)
from mock_servers.http._streams import Plan, Push, SseStream, StreamHub
from mock_servers.http._wire import (
    Exchange,
    Receive,
    Scope,
    Send,
    SseItem,
    items_from_script,
)

__all__ = [
    "DEFAULT_ANSWER_TIMEOUT",
    "SESSION_NOT_FOUND",
    "TRANSPORTS",
    "HttpMock",
    "create_app",
    "mock_of",
    "record_refusal",
]

TRANSPORTS = ("http", "sse-legacy")
SESSION_NOT_FOUND = -32001
SERVER_ERROR = -32000
DEFAULT_ANSWER_TIMEOUT = 30.0
DEFAULT_GARBAGE = "this is not JSON-RPC"

_SSE_HEADERS = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}


def _fault_ms(kind: str | None, fault: dict[str, Any]) -> int:
    return int(fault.get("ms", 0)) if kind == "delay" else 0


def _cancel_of(message: Message, delivery: Delivery) -> RequestId | None:
    """The request whose cancellation the reply waits for (`after_cancel`), or None."""
    return message.id if delivery.after_cancel and isinstance(message, Request) else None


# The rule of a 2026-07-28 engine answer that goes out with a 4xx status, by error code.
_ENGINE_RULES = {
    METHOD_NOT_FOUND: "unknown-method-2026",
    INVALID_PARAMS: "meta-missing-2026",
    UNSUPPORTED_PROTOCOL_VERSION: "unsupported-version-2026",
}


class _Unparsable:
    """A POST body that is no JSON-RPC message: `error` is the answer, `reason` why."""

    def __init__(self, error: ErrorResponse, reason: str) -> None:
        self.error = error
        self.reason = reason


def _error(request_id: RequestId | None, code: int, text: str) -> ErrorResponse:
    return ErrorResponse(request_id, ErrorObject(code, text))


class HttpMock:
    """The state of one mock run and its ASGI entry point (`create_app` wraps it).

    `engine` and `transcript` are public; `sessions` maps every issued session id to
    "active", "terminated" (DELETE), "expired" (fault) or "closed" (legacy stream ended).
    Use it from the event loop that serves it; `close()` ends every long-lived response
    (call it before stopping the server) and `finish()` records unconsumed steps.
    """

    def __init__(
        self,
        script: Script,
        *,
        revision: str | None = None,
        transport: str = "http",
        transcript: Transcript | None = None,
        answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
        allowed_hosts: frozenset[str] | None = LOOPBACK_HOSTS,
    ) -> None:
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
        if revision is None and transport == "sse-legacy" and "2024-11-05" in script.revisions:
            revision = "2024-11-05"
        served = script.pick_revision(revision)
        if (transport == "sse-legacy") != (served == "2024-11-05"):
            raise ValueError(
                f"{script.source}: revision {served} is not served over {transport!r}: "
                "2024-11-05 uses sse-legacy (HTTP+SSE), later revisions use http"
            )
        self.script = script
        self.revision = served
        self.transport = transport
        self.settings = script.http
        #: The `Host` names it answers besides loopback addresses; None: any (a server bound
        #: beyond loopback with --allow-remote). Anything else gets 421.
        self.allowed_hosts = allowed_hosts
        self.answer_timeout = answer_timeout
        self.transcript = transcript or Transcript(
            script=script.name, revision=served, transport=transport
        )
        self.engine = Engine(script, served, transport, self.transcript)
        # The authorization server and protected resource, when the script has `auth`.
        self.auth = (
            None
            if script.auth is None
            else AuthMock(script.auth, self.transcript, script.http.path)
        )
        self.sessions: dict[str, str] = {}
        self.messages_path = script.http.path.rstrip("/") + "/messages"
        # Only Streamable HTTP before 2026-07-28 resumes streams, so only it numbers events.
        self.hub = StreamHub(
            self.transcript,
            self.engine,
            self.sessions,
            auto_ids=transport == "http" and not self.engine.stateless,
            answer_timeout=answer_timeout,
        )
        self._requests = 0
        # 2026-07-28: the Mcp-Param-* headers of each tool, from the tool definitions the
        # script lists (a real server knows its tools before any tools/list), then from
        # the newest tools/list answer the mock sent.
        self._param_headers: dict[str, ParamHeaders] = {}
        for step in script.steps:
            reply = step.raw.get("reply") if step.kind == "expect" else None
            if step.raw.get("expect", {}).get("method") == "tools/list" and reply:
                self._learn_tools(reply.get("result"))
        # The initialization window: the versions clients offered in `initialize`, and the
        # ids of the server requests sent before its response (a client answers those
        # before it knows the negotiated version, so with the offered one).
        self._offered_versions: set[str] = set()
        self._initialization_requests: set[RequestId] = set()
        self._initial: list[Action] | None = self.engine.start()
        self._finished = False

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """End every long-lived response and refuse to wait any longer (server shutdown)."""
        self.hub.close()

    def finish(self) -> None:
        """Record the expected steps that never happened (once)."""
        if not self._finished:
            self._finished = True
            self.engine.finish()

    def _note(self, text: str) -> None:
        self.transcript.record("note", text=text)

    # -- refusals --------------------------------------------------------------------------

    async def _refuse(
        self,
        ex: Exchange,
        status: int,
        rule: str,
        reason: str,
        *,
        scripted: bool = False,
        error: ErrorResponse | None = None,
        text: str = "",
        headers: Mapping[str, str] | None = None,
        reached_engine: bool = False,
        header: str | None = None,
    ) -> None:
        """Record a 4xx refusal of request `ex`, then answer it (`error` as JSON, or `text`).

        The JSON-RPC messages of a refused POST body are recorded as client `message`
        entries with a `refused` member, unless the engine already recorded them.
        `header` names the request header at fault, when one is.
        """
        record_refusal(
            self.transcript,
            ex,
            status,
            rule,
            reason,
            scripted=scripted,
            reached_engine=reached_engine,
            header=header,
        )
        if error is not None:
            if not self.engine.gate.admit(
                error, where=f"request {ex.number}: the {status} refusal"
            ):
                await self._mock_error(ex)
                return
            self.hub.record_sent(error.to_json(), ex.channel)
            await ex.respond_json(status, error, headers)
            return
        plain = {"content-type": "text/plain; charset=utf-8"} if text else {}
        await ex.respond(status, {**plain, **(headers or {})}, text.encode("utf-8"))

    # -- ASGI ----------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            return
        self._requests += 1
        ex = Exchange(self.transcript, self._requests, scope, receive, send)
        try:
            await self._handle(ex)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:  # the mock must answer, whatever happened
            self._note(f"request {ex.number}: mock failure {type(exc).__name__}: {exc}")
            if not ex.started:
                await ex.respond_json(
                    500, _error(None, INTERNAL_ERROR, "Internal error in the mock server")
                )
            elif not ex.complete and not ex.aborted:
                await ex.abort()

    async def _mock_error(self, ex: Exchange) -> None:
        """Answer after the send gate refused a message: 500 and why, no JSON-RPC."""
        text = self.engine.gate.describe()
        self._note(text)
        await ex.respond(500, {"content-type": "text/plain; charset=utf-8"}, text.encode("utf-8"))

    async def _handle(self, ex: Exchange) -> None:
        complete = await ex.read_body()
        ex.record_request()
        if self.engine.gate.failed:
            # After a mock error nothing the mock says can be trusted: the run is over.
            await self._mock_error(ex)
            return
        if not complete:
            if not ex.disconnected:
                text = "Request body too large for the mock"
                error = _error(None, INVALID_REQUEST, text)
                await self._refuse(ex, 413, "too-large", text, error=error)
            return
        if self._initial is not None:
            initial, self._initial = self._initial, None
            later = self._apply_actions(initial)
            if later:
                self._note("delay steps before the first expect step are ignored over HTTP")
        if not host_allowed(ex.headers.get("host"), self.allowed_hosts):
            await self._misdirected(ex)
            return
        if not self._origin_ok(ex):
            text = f"Forbidden: Origin {ex.headers.get('origin', '')!r} is not allowed"
            await self._refuse(ex, 403, "origin", text, error=_error(None, SERVER_ERROR, text))
            return
        if ex.path in self.settings.documents:
            await self._document(ex)
            return
        if self.auth is not None and await self._auth_gate(ex):
            return
        if self.transport == "sse-legacy":
            await self._route_legacy(ex)
            return
        if ex.path != self.settings.path:
            await self._wrong_path(ex)
        elif ex.method == "POST":
            await self._post(ex)
        elif ex.method == "GET":
            await self._get(ex)
        elif ex.method == "DELETE":
            await self._delete(ex)
        else:
            await self._not_allowed(ex)

    async def _auth_gate(self, ex: Exchange) -> bool:
        """Authorization first: its metadata and endpoints, then the bearer check of the
        MCP endpoint. True when `ex` was answered here."""
        assert self.auth is not None
        if await self.auth.serve(ex):
            return True
        if ex.path != self.settings.path:
            return False
        if ex.method == "GET" and self.settings.get == "405":
            # No GET stream at all: 405 whoever asks, before any token is looked at, so
            # that a client's GET neither spends a token's uses nor starts an
            # authorization of its own beside the application's requests.
            return False
        called = [
            str(m.params.get("name"))
            for m in _body_messages(ex.body)
            if isinstance(m, Request) and m.method == "tools/call" and isinstance(m.params, dict)
        ]
        challenge = self.auth.check(ex, called)
        if challenge is None:
            return False
        await self._refuse(
            ex,
            challenge.status,
            challenge.rule,
            challenge.reason,
            scripted=True,
            text=challenge.reason,
            headers=challenge.headers,
        )
        return True

    async def _misdirected(self, ex: Exchange) -> None:
        names = ", ".join(sorted(self.allowed_hosts or ()))
        text = (
            f"Misdirected Request: Host {ex.headers.get('host', '')!r} is not this server "
            f"(it answers {names} and loopback addresses only, so that a web page cannot reach "
            "it through DNS rebinding); serve another name with `mcp-testbench serve "
            "--allow-host NAME`, or any with --allow-remote"
        )
        # Not the client's doing (it used the URL it was given): scripted, blocks nothing.
        await self._refuse(
            ex, 421, "host", text, scripted=True, error=_error(None, SERVER_ERROR, text)
        )

    def _origin_ok(self, ex: Exchange) -> bool:
        origin = ex.headers.get("origin")
        return not self.settings.check_origin or origin is None or loopback_origin(origin)

    def _allowed_methods(self) -> list[str]:
        if self.transport == "sse-legacy":
            return ["GET"]
        allowed = ["POST"]
        if not self.engine.stateless and self.settings.get == "stream":
            allowed.append("GET")
        if (
            not self.engine.stateless
            and self.settings.delete == "accept"
            and self.settings.sessions
        ):
            allowed.append("DELETE")
        return allowed

    async def _not_allowed(
        self, ex: Exchange, allowed: Iterable[str] | None = None, *, scripted: bool = False
    ) -> None:
        methods = ", ".join(allowed if allowed is not None else self._allowed_methods())
        reason = f"{ex.method} is not allowed on {ex.path} (Allow: {methods})"
        await self._refuse(
            ex, 405, "method-not-allowed", reason, scripted=scripted, headers={"allow": methods}
        )

    async def _document(self, ex: Exchange) -> None:
        """A document of `http.documents`: a GET gets it, any other method 405; either way
        the request is in the transcript, for whoever asks who fetched it, and a `document`
        entry says it was one (not a request to the MCP endpoint)."""
        self.transcript.record("document", request=ex.number, path=ex.path, method=ex.method)
        if ex.method != "GET":
            await self._not_allowed(ex, ["GET"], scripted=True)
            return
        await ex.respond_json(200, self.settings.documents[ex.path])

    async def _wrong_path(self, ex: Exchange) -> None:
        reason = f"{ex.path} is not an endpoint of the mock"
        await self._refuse(ex, 404, "wrong-path", reason, text="Not Found")

    # -- sessions and request headers (2025-03-26 .. 2025-11-25) --------------------------

    async def _session_ok(
        self, ex: Exchange, request_id: RequestId | None, *, optional: bool = False
    ) -> bool:
        """Whether the request's session is one the mock serves (404 or 400 if not).

        `optional`: an initialization answer may come without the session id, which
        arrives on the same response as the initialize result.
        """
        if not self.settings.sessions:
            return True
        sid = ex.headers.get("mcp-session-id")
        if sid is None:
            # Before any session exists a POST is let through, so that a dual-era
            # client's `server/discover` probe reaches the engine (and gets -32601).
            if optional or (ex.method == "POST" and not self.sessions):
                return True
            text = "Bad Request: Mcp-Session-Id required"
            error = _error(request_id, INVALID_REQUEST, text)
            await self._refuse(ex, 400, "session-required", text, error=error)
            return False
        state = self.sessions.get(sid)
        if state != "active":
            await self._session_not_found(ex, sid, state, request_id)
            return False
        return True

    async def _session_not_found(
        self, ex: Exchange, sid: str, state: str | None, request_id: RequestId | None
    ) -> None:
        """404: a session id never issued, or one that ended ("expired" is the script's)."""
        why = f" ({state})" if state else ""
        error = _error(request_id, SESSION_NOT_FOUND, f"Session not found{why}")
        rule = "session-ended" if state else "session-unknown"
        reason = f"session {sid!r} {state or 'was never issued'}"
        await self._refuse(ex, 404, rule, reason, scripted=state == "expired", error=error)

    def _accepted_versions(self) -> set[str]:
        versions = {self.revision, *self.engine.supported_versions}
        if self.engine.negotiated_version is not None:
            versions.add(self.engine.negotiated_version)
        return versions

    async def _version_ok(
        self, ex: Exchange, request_id: RequestId | None, *, initialization_answer: bool = False
    ) -> bool:
        """From 2025-06-18: an MCP-Protocol-Version header must name a version the mock
        serves, session or not (initialize, which negotiates one, is not checked).

        Absent, it is taken as 2025-03-26. Two exceptions: a client's answer to a server
        request sent during initialization may carry the version it offered, and before
        initialization a dual-era client's modern request (its era probe) goes to the
        script, which says how this legacy server answers it.
        """
        if self.revision < "2025-06-18":
            return True
        initialized = (
            "mcp-session-id" in ex.headers
            if self.settings.sessions
            else self.engine.negotiated_version is not None
        )
        version = ex.headers.get("mcp-protocol-version")
        if version is None:
            if initialized:
                self._note(
                    f"request {ex.number}: no MCP-Protocol-Version header (taken as 2025-03-26)"
                )
            return True
        if version in self._accepted_versions():
            return True
        if initialization_answer and version in self._offered_versions:
            self._note(
                f"request {ex.number}: answers a server request sent during initialization, "
                f"with the offered version {version!r}"
            )
            return True
        if not initialized and version in STATELESS_REVISIONS:
            return True
        text = f"Bad Request: unsupported MCP-Protocol-Version {version!r}"
        error = _error(request_id, INVALID_REQUEST, text)
        await self._refuse(ex, 400, "protocol-version", text, error=error)
        return False

    def _open_initialization(self, request: Request, delivery: Delivery | None) -> None:
        """Remember what an initialize opens: the version the client offered, and the
        server requests that go out before its response (`before`)."""
        params = request.params if isinstance(request.params, dict) else {}
        offered = params.get("protocolVersion")
        if isinstance(offered, str):
            self._offered_versions.add(offered)
        if delivery is not None:
            self._initialization_requests.update(delivery.awaits)

    def _initialization_answer(self, messages: list[Message]) -> bool:
        """Whether a POST holds only answers to server requests sent during initialization."""
        return bool(messages) and all(
            isinstance(m, (Response, ErrorResponse))
            and m.id is not None
            and m.id in self._initialization_requests
            for m in messages
        )

    def _mint_session(self, message: Message, response: Message | None) -> dict[str, str]:
        """The session header for a successful initialize response (when sessions are on)."""
        if (
            self.engine.stateless
            or not self.settings.sessions
            or not isinstance(message, Request)
            or message.method != "initialize"
            or not isinstance(response, Response)
        ):
            return {}
        sid = secrets.token_urlsafe(18)  # visible ASCII only: [A-Za-z0-9_-]
        self.sessions[sid] = "active"
        self._note(f"session {sid} issued")
        return {"mcp-session-id": sid}

    def _end_session(self, sid: str, state: str) -> None:
        self.sessions[sid] = state
        self._note(f"session {sid} {state}")
        self.hub.control("close", session=sid)

    # -- actions: sends and standalone faults --------------------------------------------

    def _apply_actions(self, actions: list[Action]) -> list[Action]:
        """Carry out the due actions up to the first delay; return the rest."""
        for index, action in enumerate(actions):
            if action.kind == "fault" and action.payload.get("kind") == "delay":
                return actions[index:]
            self._apply_action(action)
        return []

    async def _run_later(self, actions: list[Action]) -> None:
        for action in actions:
            if action.kind == "fault" and action.payload.get("kind") == "delay":
                self.transcript.record("fault", fault=dict(action.payload))
                await self.hub.sleep(int(action.payload.get("ms", 0)))
            else:
                self._apply_action(action)

    def _apply_action(self, action: Action) -> None:
        if action.kind == "send":
            push = Push(
                message=dict(action.payload),
                violation=action.violation,
                origin=action.step.label,
                listen_step=self.engine.script.listen_step(action.step),
            )
            self.hub.push(push)
            return
        fault = dict(action.payload)
        kind = fault.get("kind")
        self.transcript.record("fault", fault=fault)
        if kind == "expire_session":
            for sid, state in list(self.sessions.items()):
                if state == "active":
                    self._end_session(sid, "expired")
        elif kind in ("close_stream", "drop_connection", "crash"):
            if kind == "crash":
                self._note("crash is a stdio fault; over HTTP it drops the open streams")
            if not self.hub.control("close" if kind == "close_stream" else "drop"):
                self._note(f"{kind}: no stream is open")
        elif kind == "garbage":
            self.hub.push(Push(raw=str(fault.get("text", DEFAULT_GARBAGE))))
        else:
            self._note(f"fault {kind} has no effect as a step over HTTP")

    # -- POST (Streamable HTTP) -----------------------------------------------------------

    def _parse(self, ex: Exchange, *, allow_batch: bool) -> Message | Batch | _Unparsable:
        """The body's message(s), or _Unparsable with the error to answer (HTTP 400).

        A client's own JSON-RPC error response (its answer to a server request) is a
        message like any other, not a parse failure.
        """
        try:
            return parse(ex.body, allow_batch=allow_batch)
        except ProtocolError as exc:
            self.transcript.record(
                "invalid",
                direction="client",
                raw=ex.body.decode("utf-8", errors="replace"),
                code=exc.code,
                reason=str(exc),
                channel=ex.channel,
            )
            return _Unparsable(exc.to_error_response(), str(exc))

    def _http_info(self, ex: Exchange) -> HttpInfo:
        return HttpInfo(ex.method, ex.path, ex.headers)  # read only: matched, never kept

    async def _post(self, ex: Exchange) -> None:
        accept = ex.headers.get("accept", "")
        if not (accepts(accept, "application/json") and accepts(accept, "text/event-stream")):
            # HT-2 / HM-1: the client MUST accept both; a server may answer either way.
            text = "Not Acceptable: Accept must list application/json and text/event-stream"
            await self._refuse(
                ex, 406, "not-acceptable", text, error=_error(None, INVALID_REQUEST, text)
            )
            return
        parsed = self._parse(ex, allow_batch=batches_allowed(self.revision))
        if isinstance(parsed, _Unparsable):
            await self._refuse(ex, 400, "unparsable", parsed.reason, error=parsed.error)
            return
        messages = list(parsed.messages) if isinstance(parsed, Batch) else [parsed]
        request_id = parsed.id if isinstance(parsed, Request) else None
        if self.engine.stateless:
            if isinstance(parsed, Request):
                found = header_mismatch(ex.headers, parsed, self._called_tool_headers(parsed))
                if found is not None:
                    text = f"Header mismatch: {found.reason}"
                    error = _error(request_id, HEADER_MISMATCH, text)
                    await self._refuse(
                        ex, 400, "header-mismatch", found.reason, error=error, header=found.header
                    )
                    return
        elif not any(isinstance(m, Request) and m.method == "initialize" for m in messages):
            answer = self._initialization_answer(messages)
            if not await self._session_ok(ex, request_id, optional=answer):
                return
            if not await self._version_ok(ex, request_id, initialization_answer=answer):
                return
        if isinstance(parsed, Batch):
            await self._post_batch(ex, parsed)
            return
        outcome = self.engine.handle(parsed, http=self._http_info(ex), channel=ex.channel)
        self._record_engine_refusal(ex, outcome)
        delivery = outcome.delivery
        if isinstance(parsed, Request) and parsed.method == "initialize":
            self._open_initialization(parsed, delivery)
        if (
            self.engine.stateless  # only 2026-07-28 has Mcp-Param-* headers
            and isinstance(parsed, Request)
            and parsed.method == "tools/list"
            and delivery is not None
            and isinstance(delivery.response, Response)
        ):
            self._learn_tools(delivery.response.result)
        listen = self._opens_subscription(parsed) and delivery is not None
        if listen:
            self.hub.listen_opening(ex.number)
        try:
            later = self._apply_actions(outcome.actions)
            if not later:
                await self._deliver(ex, parsed, outcome.delivery)
                return
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._run_later, later)
                await self._deliver(ex, parsed, outcome.delivery)
        finally:
            if listen:  # a listen answered at once, refused or broken opens no stream
                self.hub.listen_open(ex.number)

    async def _post_batch(self, ex: Exchange, batch: Batch) -> None:
        responses: list[Message] = []
        headers: dict[str, str] = {"content-type": "application/json"}
        later: list[Action] = []
        for message in batch.messages:
            outcome = self.engine.handle(message, http=self._http_info(ex), channel=ex.channel)
            later += self._apply_actions(outcome.actions)
            delivery = outcome.delivery
            if delivery is not None and delivery.response is not None:
                if delivery.fault or delivery.before or delivery.delay_ms or delivery.after_cancel:
                    self._note(f"request {ex.number}: in a batch only the response is sent")
                admitted = self.engine.gate.admit(
                    delivery.response,
                    where=f"request {ex.number}: {delivery.origin}: a batch response",
                    request_method=message.method if isinstance(message, Request) else None,
                    violation=delivery.violation,
                )
                if not admitted:
                    await self._mock_error(ex)
                    return
                responses.append(delivery.response)
                headers.update(self._mint_session(message, delivery.response))
        async with anyio.create_task_group() as tg:
            if later:
                tg.start_soon(self._run_later, later)
            if not responses:
                await ex.respond(202, {}, b"")
                return
            value = [r.to_json() for r in responses]
            self.hub.record_sent(value, ex.channel)
            await ex.respond_json(200, value, headers)

    def _learn_tools(self, result: Any) -> None:
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self._param_headers[tool["name"]] = declared_param_headers(tool.get("inputSchema"))

    def _called_tool_headers(self, request: Request) -> ParamHeaders:
        """The arguments a `tools/call` must mirror as Mcp-Param-* (none for other methods
        and for tools the mock does not serve)."""
        if request.method != "tools/call" or not isinstance(request.params, dict):
            return ()
        name = request.params.get("name")
        return self._param_headers.get(name, ()) if isinstance(name, str) else ()

    def _record_engine_refusal(self, ex: Exchange, outcome: Outcome) -> None:
        """A refusal entry for the engine's own 4xx answers (2026-07-28), not scripted ones."""
        delivery = outcome.delivery
        if outcome.matched is not None or delivery is None:
            return
        response = delivery.response
        if not isinstance(response, ErrorResponse) or self._status(delivery, response) < 400:
            return
        code = response.error.code
        record_refusal(
            self.transcript,
            ex,
            self._status(delivery, response),
            _ENGINE_RULES.get(code, "engine-error"),
            response.error.message,
            scripted=False,
            reached_engine=True,
        )

    def _fallback(self, message: Message) -> Message | None:
        """The answer for a fault step that needs one but scripts none (the smallest valid
        result for the method)."""
        if not isinstance(message, Request):
            return None
        result = minimal_result(message.method)
        if self.engine.stateless:
            result = complete_stateless_result(message.method, result)
        return Response(message.id, result)

    def _as_sse(self, delivery: Delivery) -> bool:
        if delivery.as_sse is not None:
            return delivery.as_sse
        if delivery.status is not None and delivery.status >= 400:
            return False  # clients read error bodies as JSON
        if delivery.before or delivery.sse.get("events"):
            return True
        return self.settings.reply_as == "sse"

    def _status(self, delivery: Delivery, response: Message | None) -> int:
        if delivery.status is not None:
            return delivery.status
        # 2026-07-28: an unknown method is 404 with the -32601 body.
        if (
            self.engine.stateless
            and isinstance(response, ErrorResponse)
            and response.error.code == METHOD_NOT_FOUND
        ):
            return 404
        return 200

    async def _deliver(self, ex: Exchange, message: Message, delivery: Delivery | None) -> None:
        if delivery is None:
            await ex.respond(202, {}, b"")
            return
        fault = dict(delivery.fault or {})
        kind = fault.get("kind")
        if kind is not None:
            self.transcript.record("fault", fault=fault, request=ex.number)
        if kind == "crash":
            self._note("crash is a stdio fault; over HTTP it drops the connection")
            kind = "drop_connection"
        elif kind in ("oversized_line", "stderr", "hang") and not isinstance(message, Request):
            kind = None
        elif kind in ("oversized_line", "stderr"):
            self._note(f"{kind} is a stdio fault; over HTTP the request gets an empty result")
            kind = None
        if kind == "expire_session":
            sid = ex.headers.get("mcp-session-id")
            for s, state in list(self.sessions.items()):
                if state == "active" and (sid is None or s == sid):
                    self._end_session(s, "expired")
            request_id = message.id if isinstance(message, Request) else None
            error = _error(request_id, SESSION_NOT_FOUND, "Session not found")
            reason = "the script's expire_session fault ended the session"
            await self._refuse(
                ex, 404, "session-ended", reason, scripted=True, error=error, reached_engine=True
            )
            return
        as_sse = self._as_sse(delivery)
        if delivery.body is not None and not self._body_admitted(ex, delivery, delivery.body):
            await self._mock_error(ex)
            return
        if delivery.body is not None or kind == "garbage":
            text = delivery.body if delivery.body is not None else fault.get("text")
            content_type = "text/event-stream" if as_sse else "application/json"
            headers = {"content-type": content_type, **delivery.headers}
            body = (DEFAULT_GARBAGE if text is None else str(text)).encode("utf-8")
            await ex.respond(delivery.status or 200, headers, body)
            return
        response = delivery.response or (self._fallback(message) if kind else None)
        if response is None:
            # A notification or response whose step scripts a status or headers.
            await ex.respond(delivery.status or 202, delivery.headers, b"")
            return
        if self._opens_subscription(message) and isinstance(response, Response):
            # The result that ends a subscription names it, as its notifications do.
            marked = with_subscription_id(response.to_json(), response.id)
            response = Response(response.id, marked["result"])
        if as_sse and isinstance(message, Request):
            await self._deliver_sse(ex, message, delivery, response, kind, fault)
        else:
            await self._deliver_json(ex, message, delivery, response, kind, fault)

    def _body_admitted(self, ex: Exchange, delivery: Delivery, body: str) -> bool:
        """The send gate for a raw body: the JSON-RPC it carries, if it carries any."""
        if delivery.violation is not None:
            return True
        carried = jsonrpc_in_text(body)
        members = carried if isinstance(carried, list) else [carried]
        where = f"request {ex.number}: {delivery.origin}: the raw body"
        return all(self.engine.gate.admit(m, where=where) for m in members if m is not None)

    async def _deliver_json(
        self,
        ex: Exchange,
        message: Message,
        delivery: Delivery,
        response: Message,
        kind: str | None,
        fault: dict[str, Any],
    ) -> None:
        if delivery.before:
            self._note(
                f"request {ex.number}: a JSON reply sends its before-messages on the GET stream"
            )
            marks = delivery.before_marks or [None] * len(delivery.before)
            for index, (before, mark) in enumerate(zip(delivery.before, marks, strict=True)):
                origin = f"{delivery.origin}: before message {index}"
                self.hub.push(Push(message=before, violation=mark, origin=origin))
        await self.hub.await_client(delivery.awaits, _cancel_of(message, delivery))
        await self.hub.sleep(delivery.delay_ms + _fault_ms(kind, fault))
        if kind == "hang":
            await self._hang(ex, message)
            return
        status = self._status(delivery, response)
        as_json = response.to_json()  # once, for the gate, the transcript and the body
        body = self.engine.encode(as_json).encode("utf-8")
        headers = {"content-type": "application/json", **delivery.headers}
        ex.chunk_size = delivery.sse.get("chunk_size")
        if kind in ("drop_connection", "close_stream"):
            if kind == "close_stream":
                self._note(f"request {ex.number}: close_stream on a JSON reply drops it")
            await ex.start_stream(status, {**headers, "content-length": str(len(body))})
            self.transcript.record("http_end", request=ex.number, how="dropped")  # see run()
            await ex.abort(body[: len(body) // 2])
            return
        admitted = self.engine.gate.admit(
            as_json,
            where=f"request {ex.number}: {delivery.origin}: the response",
            request_method=message.method if isinstance(message, Request) else None,
            violation=delivery.violation,
        )
        if not admitted:
            await self._mock_error(ex)
            return
        headers.update(self._mint_session(message, response))
        self.hub.record_sent(as_json, ex.channel)
        await ex.respond(status, headers, body)

    async def _hang(self, ex: Exchange, message: Message) -> None:
        """Never answer: wait for the client to give up (or the server to stop)."""
        await self.hub.until_closing(ex.wait_disconnect, float("inf"))
        if ex.disconnected:
            self._record_cancel(ex, message.id if isinstance(message, Request) else None)
        else:
            request_id = message.id if isinstance(message, Request) else None
            await ex.respond_json(
                503, _error(request_id, SERVER_ERROR, "The mock server is shutting down")
            )

    def _record_cancel(self, ex: Exchange, request_id: RequestId | None) -> None:
        self.transcript.record("http_end", request=ex.number, how="client_closed")
        self._note(
            f"request {ex.number}: the client closed the response before it was complete "
            f"(JSON-RPC id {request_id!r}): a cancellation"
        )

    # -- SSE responses ---------------------------------------------------------------------

    def _opens_subscription(self, message: object) -> bool:
        """A 2026-07-28 subscriptions/listen request: its stream is a subscription."""
        return (
            self.engine.stateless
            and isinstance(message, Request)
            and message.method == "subscriptions/listen"
        )

    async def _deliver_sse(
        self,
        ex: Exchange,
        message: Request,
        delivery: Delivery,
        response: Message,
        kind: str | None,
        fault: dict[str, Any],
    ) -> None:
        listen = self._opens_subscription(message)
        session = None if self.engine.stateless else ex.headers.get("mcp-session-id")
        stream = self.hub.new_stream(ex.number, "listen" if listen else "post", session, message.id)
        params = message.params if isinstance(message.params, dict) else {}
        if listen:
            stream.listen_step = delivery.step
            if isinstance(params.get("notifications"), dict):
                stream.notifications = params["notifications"]
        stream.plan = Plan(
            items_from_script(
                delivery.sse.get("events"),
                delivery.before,
                delivery.sse.get("retry"),
                delivery.before_marks,
            ),
            response.to_json(),
            awaits=list(delivery.awaits),
            cancel_of=_cancel_of(message, delivery),
            delay_ms=delivery.delay_ms + _fault_ms(kind, fault),
            fault=kind if kind in ("hang", "drop_connection", "close_stream") else None,
            request_method=message.method,
            violation=delivery.violation,
            origin=delivery.origin,
            keep_open=delivery.sse.get("keep_open") is True,
        )
        for item in stream.plan.items:
            if item.kind != "response" and item.origin:
                item.origin = f"{delivery.origin}: {item.origin}"
        stream.chunk_size = delivery.sse.get("chunk_size")
        headers = {**_SSE_HEADERS, **delivery.headers}
        if kind not in ("hang", "drop_connection"):
            headers.update(self._mint_session(message, response))
        await ex.start_stream(self._status(delivery, response), headers)
        await self.hub.run(ex, stream)

    # -- GET and DELETE (Streamable HTTP) -------------------------------------------------

    async def _get(self, ex: Exchange) -> None:
        if self.engine.stateless or self.settings.get == "405":
            await self._not_allowed(ex, scripted=not self.engine.stateless)
            return
        if not accepts(ex.headers.get("accept", ""), "text/event-stream"):
            text = "Not Acceptable: Accept must list text/event-stream"
            error = _error(None, INVALID_REQUEST, text)
            await self._refuse(ex, 406, "not-acceptable", text, error=error)
            return
        if not await self._session_ok(ex, None) or not await self._version_ok(ex, None):
            return
        last = ex.headers.get("last-event-id")
        if last is not None:
            found = self.hub.find_event(last)
            if found is not None:
                stream, position = found
                await ex.start_stream(200, _SSE_HEADERS)
                if stream.exchange is None:
                    self._note(f"request {ex.number}: resumes stream {stream.id} after {last!r}")
                    await self.hub.run(ex, stream, replay_after=position)
                else:
                    # Its first response has not ended (as far as the server knows): one
                    # writer per stream, so this one only gets the replay.
                    self._note(
                        f"request {ex.number}: stream {stream.id} is still open; replay only"
                    )
                    await self.hub.replay(ex, stream, position)
                    await ex.end()
                return
            self._note(f"request {ex.number}: unknown Last-Event-ID {last!r}; a new GET stream")
        stream = self.hub.new_stream(ex.number, "get", ex.headers.get("mcp-session-id"), None)
        await ex.start_stream(200, _SSE_HEADERS)
        await self.hub.run(ex, stream)

    async def _delete(self, ex: Exchange) -> None:
        if self.engine.stateless or self.settings.delete == "405" or not self.settings.sessions:
            await self._not_allowed(ex, scripted=not self.engine.stateless)
            return
        if ex.headers.get("mcp-session-id") is None:
            text = "Bad Request: Mcp-Session-Id required"
            error = _error(None, INVALID_REQUEST, text)
            await self._refuse(ex, 400, "session-required", text, error=error)
            return
        if not await self._session_ok(ex, None) or not await self._version_ok(ex, None):
            return
        self._end_session(ex.headers["mcp-session-id"], "terminated")
        await ex.respond(200, {}, b"")

    # -- HTTP+SSE (2024-11-05) -------------------------------------------------------------

    async def _route_legacy(self, ex: Exchange) -> None:
        if ex.path == self.settings.path:
            if ex.method == "GET":
                await self._legacy_get(ex)
            elif ex.method == "POST":
                await self._refuse_legacy_post(ex)
            else:
                await self._not_allowed(ex, ["GET"])
        elif ex.path == self.messages_path:
            if ex.method == "POST":
                await self._legacy_post(ex)
            else:
                await self._not_allowed(ex, ["POST"])
        else:
            await self._wrong_path(ex)

    async def _refuse_legacy_post(self, ex: Exchange) -> None:
        """A Streamable HTTP POST to an HTTP+SSE server: refused as the script says."""
        status = int(self.settings.legacy_post)
        reason = f"an HTTP+SSE server refuses POST on {ex.path} (http.legacy_post {status})"
        text = {404: "Not Found", 400: "Bad Request"}.get(status, "")
        headers = {"allow": "GET"} if status == 405 else None
        await self._refuse(
            ex, status, "legacy-post", reason, scripted=True, text=text, headers=headers
        )

    async def _legacy_get(self, ex: Exchange) -> None:
        sid = secrets.token_urlsafe(18)
        self.sessions[sid] = "active"
        self._note(f"session {sid} issued (HTTP+SSE)")
        stream = self.hub.new_stream(ex.number, "legacy", sid, None)
        endpoint = f"{self.messages_path}?session_id={sid}"
        stream.plan = Plan([SseItem("data", text=endpoint, event="endpoint")], None)
        await ex.start_stream(200, _SSE_HEADERS)
        await self.hub.run(ex, stream)

    async def _legacy_post(self, ex: Exchange) -> None:
        sid = parse_qs(ex.query).get("session_id", [None])[0]
        if sid is None:
            text = "Bad Request: session_id required"
            error = _error(None, INVALID_REQUEST, text)
            await self._refuse(ex, 400, "session-required", text, error=error)
            return
        # Found by session, not among the streams already waiting: a POST may race the
        # stream's handler between the endpoint event and its wait; jobs queue up.
        stream = next(
            (s for s in self.hub.streams.values() if s.kind == "legacy" and s.session == sid),
            None,
        )
        state = self.sessions.get(sid)
        if state != "active" or stream is None or stream.exchange is None:
            await self._session_not_found(ex, sid, state if state != "active" else "closed", None)
            return
        parsed = self._parse(ex, allow_batch=False)
        if isinstance(parsed, _Unparsable):
            await self._refuse(ex, 400, "unparsable", parsed.reason, error=parsed.error)
            return
        assert not isinstance(parsed, Batch)
        outcome = self.engine.handle(parsed, http=self._http_info(ex), channel=ex.channel)
        later = self._apply_actions(outcome.actions)
        await ex.respond(202, {"content-type": "text/plain; charset=utf-8"}, b"Accepted")
        # The answer travels on the stream: its handler runs the job, so this POST is done.
        if outcome.delivery is not None:
            stream.enqueue(Push(job=partial(self._legacy_job, stream, parsed, outcome.delivery)))
        if later:
            stream.enqueue(Push(job=partial(self._run_later, later)))

    async def _legacy_job(self, stream: SseStream, message: Message, delivery: Delivery) -> None:
        ex = stream.exchange
        if ex is None:
            return
        fault = dict(delivery.fault or {})
        kind = fault.get("kind")
        if kind is not None:
            self.transcript.record("fault", fault=fault, request=ex.number)
        if not isinstance(message, Request):
            return  # a notification or response: nothing goes back
        marks = delivery.before_marks or [None] * len(delivery.before)
        for index, (before, mark) in enumerate(zip(delivery.before, marks, strict=True)):
            origin = f"{delivery.origin}: before message {index}"
            item = SseItem("message", message=before, violation=mark, origin=origin)
            if not await self.hub.write_item(ex, stream, item):
                stream.enqueue(Push(control="drop"))  # a mock error ends the run
                return
        await ex.flush()
        await self.hub.await_client(delivery.awaits, _cancel_of(message, delivery))
        await self.hub.sleep(delivery.delay_ms + _fault_ms(kind, fault))
        if kind == "hang":
            return
        if kind == "expire_session":
            self._end_session(stream.session or "", "expired")
        elif kind in ("drop_connection", "crash", "close_stream"):
            stream.enqueue(Push(control="close" if kind == "close_stream" else "drop"))
        elif kind == "garbage" or delivery.body is not None:
            text = delivery.body if delivery.body is not None else fault.get("text")
            mark = delivery.violation if delivery.body is not None else "garbage fault"
            item = SseItem(
                "data",
                text=DEFAULT_GARBAGE if text is None else str(text),
                violation=mark,
                origin=f"{delivery.origin}: the raw body",
            )
            if not await self.hub.write_item(ex, stream, item):
                stream.enqueue(Push(control="drop"))
        else:
            response = delivery.response or self._fallback(message)
            if response is not None:
                item = SseItem(
                    "message",
                    message=response.to_json(),
                    violation=delivery.violation,
                    request_method=message.method,
                    origin=f"{delivery.origin}: the response",
                )
                if not await self.hub.write_item(ex, stream, item):
                    stream.enqueue(Push(control="drop"))


def record_refusal(
    transcript: Transcript,
    ex: Exchange,
    status: int,
    rule: str,
    reason: str,
    *,
    scripted: bool,
    reached_engine: bool = False,
    header: str | None = None,
) -> None:
    """Record that request `ex` was refused with `status` for breaking `rule`: its JSON-RPC
    messages (unless the engine recorded them already) marked `refused`, then the refusal."""
    refused = {"status": status, "rule": rule, "scripted": scripted}
    if ex.method == "POST" and not reached_engine:
        for message in _body_messages(ex.body):
            transcript.record(
                "message",
                direction="client",
                message=message.to_json(),
                channel=ex.channel,
                refused=refused,
            )
    at_fault = {} if header is None else {"header": header}
    transcript.record("refusal", request=ex.number, reason=reason, **refused, **at_fault)


def _body_messages(body: bytes) -> list[Message]:
    """The JSON-RPC messages in a POST body (a batch's too, at any revision); [] if none."""
    try:
        parsed = parse(body, allow_batch=True)
    except ProtocolError:
        return []
    return list(parsed.messages) if isinstance(parsed, Batch) else [parsed]


def create_app(
    script: Script,
    *,
    revision: str | None = None,
    transport: str = "http",
    transcript: Transcript | None = None,
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
    allowed_hosts: frozenset[str] | None = LOOPBACK_HOSTS,
) -> Starlette:
    """A Starlette app serving `script`; its `HttpMock` is `app.state.mock` (`mock_of`)."""
    mock = HttpMock(
        script,
        revision=revision,
        transport=transport,
        transcript=transcript,
        answer_timeout=answer_timeout,
        allowed_hosts=allowed_hosts,
    )
    # An ASGI instance as endpoint: Starlette routes every method to it unchanged.
    app = Starlette(routes=[Route("/{path:path}", endpoint=mock)])
    app.state.mock = mock
    return app


def mock_of(app: Starlette) -> HttpMock:
    """The `HttpMock` behind an app made by `create_app`."""
    mock = app.state.mock
    assert isinstance(mock, HttpMock)
    return mock
