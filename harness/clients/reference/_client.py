"""The bundled reference client: what the MCP specification asks of a client, in code.

It speaks every revision (2024-11-05 ... 2026-07-28) over every transport (stdio,
Streamable HTTP, the legacy HTTP+SSE, the stateless 2026-07-28 HTTP). It is the suite's
default client and passes every check; comments name the requirement each rule comes
from (ids of shared/spec-client-requirements.md).

Layout: this module is the session (ids, pending requests, the handshake or the
per-request `_meta`, server requests, paging, validation); the transports live in
`_ref_stdio`, `_ref_http` and `_ref_sse_legacy` and only move messages.
"""

from __future__ import annotations

import functools
import itertools
import math
import ssl
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, ClassVar, Literal

import anyio
import httpx

from harness.clients._contract import (
    FEATURES,
    OPERATIONS,
    ClientError,
    ClientEvent,
    ConnectOptions,
    HttpTarget,
    SseLegacyTarget,
    StdioTarget,
    Target,
)
from harness.clients.reference._base import (
    MODERN_ERRORS,
    BackgroundTasks,
    HttpStatusError,
    ServerError,
    SessionExpiredError,
    Sink,
    StreamBrokenError,
    Transport,
)
from harness.clients.reference._http import (
    HttpTransport,
    ParamHeaders,
    modern_headers,
    param_headers,
)
from harness.clients.reference._sse_legacy import SseLegacyTransport
from harness.clients.reference._stdio import StdioTransport
from harness.protocol import (
    HANDSHAKE_REVISIONS,
    INVALID_PARAMS,
    META_SUBSCRIPTION_ID,
    METHOD_NOT_FOUND,
    REVISIONS,
    STATELESS_REVISIONS,
    Batch,
    ErrorObject,
    ErrorResponse,
    Notification,
    ProtocolError,
    Request,
    RequestId,
    Response,
    batches_allowed,
    classify,
    decode_json,
    is_request_id,
    is_stateless,
)

__all__ = ["ReferenceClient"]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022

_NAME = "mcp-testbench-reference"
_MRTR_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})
_INPUT_METHODS = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})
_MAX_INPUT_ROUNDS = 8  # MRTR retries of one request before giving up
_MAX_REISSUES = 2  # HM-5 re-issues of one request after broken streams
_MAX_PAGES = 1000
_CLOSE_BOUND = 10.0
_MAX_RELISTENS = 5  # LISTEN: subscriptions/listen opened again at most this often


@functools.cache  # reading the package metadata costs milliseconds; it names every run
def _package_version() -> str:
    try:
        return metadata.version("mcp-testbench")
    except metadata.PackageNotFoundError:  # a source tree that is not installed
        return "0+unknown"


def _at_least(revision: str, oldest: str) -> bool:
    return REVISIONS.index(revision) >= REVISIONS.index(oldest)


def _object(result: Any, method: str) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise ClientError("protocol", f"the result of {method} is not an object")
    return result


@dataclass(eq=False)
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: ClientError | None = None

    def settle(self, result: Any = None, error: ClientError | None = None) -> None:
        if not self.done.is_set():
            self.result, self.error = result, error
            self.done.set()


@dataclass
class _Subscription:
    """One `listen` of the application (LISTEN): the key its events carry, and what the
    server acknowledged. Every subscriptions/listen request made for it (a re-listen, a
    re-issue) routes here by its id while it is open."""

    key: int | None
    acknowledged: anyio.Event = field(default_factory=anyio.Event)
    notifications: dict[str, Any] = field(default_factory=dict)


def _tool_history_problem(messages: Any) -> str | None:
    """What breaks the tool-use rules of client/sampling (2025-11-25) in a message list.

    A user message holding tool results holds nothing else, and every assistant message
    with tool uses is followed by such a message answering each use by its id.
    """
    if not isinstance(messages, list):
        return None
    blocks = [_content_blocks(m) for m in messages]
    for index, content in enumerate(blocks):
        types = {block.get("type") for block in content}
        if "tool_result" in types and types != {"tool_result"}:
            return f"message {index} mixes tool results with other content"
        uses = {b.get("id") for b in content if b.get("type") == "tool_use"}
        if not uses:
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else []
        answered = {b.get("toolUseId") for b in following if b.get("type") == "tool_result"}
        if uses - answered:
            return f"tool use {sorted(map(str, uses - answered))} of message {index} has no result"
    return None


def _content_blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    items = content if isinstance(content, list) else [content]
    return [item for item in items if isinstance(item, dict)]


class _Reject(Exception):
    """A server request the client declines, with the JSON-RPC error to answer (RPC-4)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """What httpx verifies HTTPS servers with by default (its root certificates, or
    SSL_CERT_FILE / SSL_CERT_DIR as set when first needed), made once per process:
    making it parses every root certificate, about 30 ms that each connect paid."""
    return httpx.create_ssl_context()


class ReferenceClient:
    """An `McpClient` that follows the specification to the letter.

    `http_client_factory` returns the `httpx.AsyncClient` for the HTTP transports (the
    harness passes one on an in-process ASGI transport); the client closes it on `close()`.
    """

    #: Instances keep all their state to themselves (each on its own thread and event
    #: loop), so the harness may run several scenarios with it at once in one process
    #: (`--mcp-concurrency`).
    concurrent_instances: ClassVar[bool] = True

    #: The transport classes (tests substitute broken ones: tests/test_mutations*.py).
    _stdio_transport: type[StdioTransport] = StdioTransport
    _http_transport: type[HttpTransport] = HttpTransport
    _sse_legacy_transport: type[SseLegacyTransport] = SseLegacyTransport

    def __init__(
        self, *, http_client_factory: Callable[[], httpx.AsyncClient] | None = None
    ) -> None:
        self._http_client_factory = http_client_factory
        self._state: Literal["new", "open", "closed"] = "new"
        self._options = ConnectOptions()
        self._sink = Sink(self._deliver, self._is_pending, self._fail, self._log)
        self._tasks = BackgroundTasks(self._log)
        self._http: httpx.AsyncClient | None = None
        self._transport: Transport | None = None
        self._ids = itertools.count(1)  # RPC-1, RPC-2: integers, never reused
        self._pending: dict[RequestId, _Pending] = {}
        self._broken: ClientError | None = None
        self._initialize_answered = False
        self._revision: str = HANDSHAKE_REVISIONS[-1]
        self._modern = False
        self._server_capabilities: dict[str, Any] | None = None  # None: not known
        self._server_info: dict[str, Any] = {}
        self._tools: dict[str, dict[str, Any]] = {}
        self._param_headers: dict[str, ParamHeaders] = {}
        self._session_lock = anyio.Lock()
        self._session_generation = 0
        self._stdio_target: StdioTarget | None = None  # to start the server again (ST-5)
        self._restart_lock = anyio.Lock()
        self._replies = 0  # answers to server requests not yet sent
        self._replied = anyio.Event()
        self._roots: tuple[Mapping[str, Any], ...] | None = None  # set_roots: the new roots
        # LISTEN: the open subscriptions/listen requests (their ids) -> their subscription.
        self._subscriptions: dict[RequestId, _Subscription] = {}

    @property
    def name(self) -> str:
        return _NAME

    @property
    def version(self) -> str:
        return _package_version()

    @property
    def supports(self) -> frozenset[str]:
        # "auth": OAuth 2.1 over HTTP (_ref_auth.py), headless.
        return FEATURES | OPERATIONS | frozenset(REVISIONS)

    # Connecting ---------------------------------------------------------------------

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        if self._state != "new":
            raise ClientError("other", "connect() can be called once per client")
        self._state = "open"
        self._options = options
        try:
            await self._connect(target, options.protocol_version)
        except BaseException:
            await self.close()  # LC-3 among others: a failed connect leaves nothing open
            raise
        return {"protocolVersion": self._revision, "serverInfo": self._server_info}

    async def _connect(self, target: Target, forced: str | None) -> None:
        if forced is not None and forced not in REVISIONS:
            raise ClientError("unsupported", f"unknown protocol revision {forced!r}")
        await self._tasks.start()
        if isinstance(target, StdioTarget):
            self._stdio_target = target
            self._transport = await self._stdio_transport.open(target, self._sink, self._tasks)
        else:
            factory = self._http_client_factory or self._default_http_client
            self._http = factory()
            if isinstance(target, SseLegacyTarget):
                if forced is not None and is_stateless(forced):
                    raise ClientError("unsupported", "2026-07-28 has no HTTP+SSE binding")
                await self._open_sse_legacy(target)
            else:
                self._transport = self._http_transport(
                    self._http,
                    target.url,
                    target.headers,
                    self._sink,
                    self._tasks,
                    authorization=self._options.authorization,
                )
        if forced is not None and is_stateless(forced):
            await self._discover(probing=False)
        elif forced is None and not isinstance(target, SseLegacyTarget):
            # LC-M3, HM-7: a dual-era client asks first whether the server is modern.
            if not await self._discover(probing=True):
                await self._handshake(target, self._revision)
        else:
            await self._handshake(target, forced or HANDSHAKE_REVISIONS[-1])

    def _default_http_client(self) -> httpx.AsyncClient:
        # No read timeout: streams may idle; every request has its own deadline.
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self._options.timeout, read=None), verify=_tls_context()
        )

    async def _open_sse_legacy(self, target: HttpTarget | SseLegacyTarget) -> None:
        assert self._http is not None
        transport = self._sse_legacy_transport(self._http, target.url, target.headers, self._sink)
        self._transport = transport
        with anyio.move_on_after(self._options.timeout):
            await transport.start(self._tasks)
            return
        raise ClientError("timeout", f"no endpoint event from {target.url}")

    async def _discover(self, *, probing: bool) -> bool:
        """Go stateless (2026-07-28) with `server/discover`; False: the server is legacy.

        LC-M4: only a DiscoverResult or a modern error (-32020..-32022) shows a modern
        server; any other error, a timeout or a bare HTTP 4xx (HM-7) means fall back.
        """
        self._set_modern(True)
        self._revision = STATELESS_REVISIONS[-1]
        try:
            result = await self._request("server/discover", cancellable=not probing)
        except ClientError as exc:
            if exc.code in MODERN_ERRORS:
                raise
            legacy = isinstance(exc, ServerError) or exc.kind == "timeout"
            legacy |= isinstance(exc, HttpStatusError) and 400 <= exc.http_status < 500
            if probing and legacy:
                self._set_modern(False)
                self._revision = HANDSHAKE_REVISIONS[-1]
                return False
            if isinstance(exc, ServerError):  # discover is optional for a 2026 client
                self._log(f"server/discover failed ({exc}); server capabilities unknown")
                return True
            raise
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or self._revision not in versions:
            offered = [
                v for v in HANDSHAKE_REVISIONS if isinstance(versions, list) and v in versions
            ]
            if probing and (offered or not isinstance(versions, list)):
                self._set_modern(False)
                self._revision = offered[-1] if offered else HANDSHAKE_REVISIONS[-1]
                return False
            raise ClientError("protocol", f"the server supports none of {STATELESS_REVISIONS}")
        capabilities = result.get("capabilities")
        self._server_capabilities = dict(capabilities) if isinstance(capabilities, dict) else {}
        meta = result.get("_meta")
        self._server_info = self._info(
            meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        )
        return True

    def _set_modern(self, modern: bool) -> None:
        self._modern = modern
        if isinstance(self._transport, HttpTransport):
            self._transport.modern = modern

    async def _handshake(self, target: Target, revision: str) -> None:
        self._initialize_answered = False
        try:
            await self._initialize(revision)
        except ClientError as exc:
            # HT-12: an initialize POST refused with 400/404/405, and no modern JSON-RPC
            # error in the body, means a 2024-11-05 HTTP+SSE server: GET the same URL.
            # Not when initialize was answered: then the server speaks Streamable HTTP.
            status = getattr(exc, "http_status", None)
            if (
                not isinstance(target, HttpTarget)
                or status not in (400, 404, 405)
                or self._initialize_answered
            ):
                raise
            if exc.code in MODERN_ERRORS:
                raise
            self._log(f"initialize got HTTP {status}: trying the HTTP+SSE transport (HT-12)")
            await self._open_sse_legacy(target)
            await self._initialize(revision)

    async def _initialize(self, revision: str) -> None:
        # LC-1, LC-2: initialize comes first, offering the latest (or the forced) revision.
        self._revision = revision
        params = {
            "protocolVersion": revision,
            "capabilities": self._capabilities(revision),
            "clientInfo": self._client_info(),
        }
        # LC-5: connect() sends nothing else until this answer arrives. LC-8: initialize
        # is never cancelled, not even on timeout.
        result = await self._request("initialize", params, cancellable=False)
        self._initialize_answered = True
        negotiated = result.get("protocolVersion")
        if negotiated not in HANDSHAKE_REVISIONS:
            # LC-3: a revision this client does not speak: disconnect (connect() closes).
            raise ClientError("protocol", f"the server chose protocolVersion {negotiated!r}")
        assert isinstance(negotiated, str)
        self._revision = negotiated
        capabilities = result.get("capabilities")
        self._server_capabilities = dict(capabilities) if isinstance(capabilities, dict) else {}
        self._server_info = self._info(result.get("serverInfo"))
        transport = self._transport
        if isinstance(transport, HttpTransport) and _at_least(negotiated, "2025-06-18"):
            transport.protocol_version = negotiated  # HT-11
        await self._send(Notification("notifications/initialized").to_json())  # LC-4
        if isinstance(transport, HttpTransport):
            transport.listen()  # HT-6

    def _server_exited(self) -> bool:
        """Whether the 2026 stdio server process ended without close() asking (ST-5)."""
        transport = self._transport
        return (
            self._modern
            and self._state == "open"
            and isinstance(transport, StdioTransport)
            and transport.exited_unexpectedly
        )

    async def _restart_server(self) -> None:
        """ST-5 (2026-07-28): start the server command again, as connect() did.

        Only for a request made after the exit: the request that the exit took with it
        has failed already and is not re-issued (it may be what crashed the server).
        """
        async with self._restart_lock:
            old, target = self._transport, self._stdio_target
            if not self._server_exited() or target is None:
                return  # another caller restarted it meanwhile
            assert old is not None
            self._log("the server process exited: starting it again (ST-5)")
            # Shielded: once started, a process must end up where close() will stop it.
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(_CLOSE_BOUND):
                    await old.close()  # reaps the exited process and its pipes
                new = await self._stdio_transport.open(target, self._sink, self._tasks)
                if self._state != "open":  # close() came while it started
                    with anyio.move_on_after(_CLOSE_BOUND):
                        await new.close()
                    raise ClientError("other", "the client was closed")
                self._transport = new
                self._broken = None
            # Stateless: no initialize; server/discover, as at connect, refreshes what the
            # new process declares.
            await self._discover(probing=False)

    async def _renew_session(self, generation: int) -> None:
        """HT-9: the session is gone: initialize again (without its id), once for all callers."""
        async with self._session_lock:
            if generation == self._session_generation:
                self._log("the server ended the session (HTTP 404): initializing again (HT-9)")
                await self._initialize(self._revision)
                self._session_generation += 1

    def _capabilities(self, revision: str) -> dict[str, Any]:
        # LC-6: declare roots, sampling and elicitation exactly when there is an answer.
        handlers = self._options.handlers
        capabilities: dict[str, Any] = {}
        if handlers.roots is not None:
            # ROOTS: set_roots changes them, and says so (LC-6: declaring listChanged obliges
            # the client to notify); 2026-07-28 removed roots/list_changed (LC-M5).
            capabilities["roots"] = {} if is_stateless(revision) else {"listChanged": True}
        if handlers.sampling is not None:
            # SAMPLING: from 2025-11-25 tool use must be declared; the canned answer is what
            # the model says, with the offered tools in view (it may leave them unused).
            capabilities["sampling"] = {"tools": {}} if _at_least(revision, "2025-11-25") else {}
        if handlers.elicitation is not None and _at_least(revision, "2025-06-18"):
            # ELICIT: form mode only; 2025-11-25 spells it out.
            capabilities["elicitation"] = {"form": {}} if _at_least(revision, "2025-11-25") else {}
        return capabilities

    def _client_info(self) -> dict[str, str]:
        return {"name": _NAME, "version": _package_version()}

    @staticmethod
    def _info(value: Any) -> dict[str, Any]:
        return dict(value) if isinstance(value, dict) else {}

    # Requests -----------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        limit: float | None = None,
        progress: bool = False,
        cancellable: bool = True,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> dict[str, Any]:
        """One request as the API sees it, with the retries each era prescribes.

        `on_id` is told every id the request goes out under (a retry gets a new one)
        before it is sent, so that what the server sends for it can be routed."""
        params = dict(params or {})
        if not self._modern:
            generation = self._session_generation
            try:
                result = await self._exchange(method, params, limit, progress, cancellable)
            except SessionExpiredError:
                await self._renew_session(generation)  # HT-9, then the same request again
                result = await self._exchange(method, params, limit, progress, cancellable)
            return _object(result, method)
        if method != "server/discover" and self._server_exited():
            await self._restart_server()  # discover is part of the restart itself
        retried_version = refreshed_tools = False
        reissues = rounds = 0
        while True:
            # LC-M1: every request carries the revision, capabilities and client info.
            meta = {
                **params.get("_meta", {}),
                META_VERSION: self._revision,
                META_CAPABILITIES: self._capabilities(self._revision),
                META_CLIENT_INFO: self._client_info(),
            }
            if "logging" in (self._server_capabilities or {}):
                # LOG: without a level a 2026-07-28 server sends no log messages; this
                # client accepts them all, so it asks for the lowest level.
                meta[META_LOG_LEVEL] = "debug"
            body = {**params, "_meta": meta}
            headers: dict[str, str] = {}
            if isinstance(self._transport, HttpTransport):
                tool = params.get("name") if method == "tools/call" else None
                declared = self._param_headers.get(tool, ()) if isinstance(tool, str) else ()
                headers = modern_headers(self._revision, method, body, declared)
            try:
                result = _object(
                    await self._exchange(
                        method, body, limit, progress, cancellable, headers, on_id
                    ),
                    method,
                )
            except StreamBrokenError:
                reissues += 1  # HM-5: a broken stream loses the request: re-issue, new id
                if reissues > _MAX_REISSUES:
                    raise
                continue
            except ServerError as exc:
                choice = self._modern_choice(exc.data)
                if exc.code == UNSUPPORTED_VERSION and choice and not retried_version:
                    retried_version = True  # LC-M2: once, with a version from `supported`
                    self._revision = choice
                    continue
                mismatch = exc.code == HEADER_MISMATCH and method == "tools/call"
                if mismatch and self._has("tools") and not refreshed_tools:
                    refreshed_tools = True  # HM-4: the tool's schema may have changed
                    await self.list_tools()
                    continue
                raise
            kind = result.get("resultType", "complete")  # RPC-9: absent means complete
            if kind == "complete":
                return result
            if kind != "input_required" or method not in _MRTR_METHODS:
                raise ClientError("protocol", f"{method} returned the resultType {kind!r}")
            rounds += 1
            if rounds > _MAX_INPUT_ROUNDS:
                raise ClientError("protocol", f"{method} still wants input after {rounds} rounds")
            # MRTR: answer every input request and echo requestState byte for byte (never
            # parsed, never invented); the retry gets a new id from _exchange.
            params = {
                k: v for k, v in params.items() if k not in ("inputResponses", "requestState")
            }
            if "inputRequests" in result:
                params["inputResponses"] = self._input_responses(result["inputRequests"])
            if "requestState" in result:
                params["requestState"] = result["requestState"]

    @staticmethod
    def _modern_choice(data: Any) -> str | None:
        supported = data.get("supported") if isinstance(data, dict) else None
        if isinstance(supported, list):
            for revision in reversed(STATELESS_REVISIONS):
                if revision in supported:
                    return revision
        return None

    async def _exchange(
        self,
        method: str,
        params: dict[str, Any],
        limit: float | None,
        progress: bool,
        cancellable: bool,
        headers: Mapping[str, str] | None = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> Any:
        """Send one request under a fresh id and wait (bounded) for its response."""
        if self._broken is not None:
            raise ClientError(self._broken.kind, self._broken.message, self._broken.code)
        assert self._transport is not None
        transport = self._transport
        request_id = next(self._ids)
        if on_id is not None:
            on_id(request_id)
        if progress:  # PROG: the request id is unique among active requests
            params = {**params, "_meta": {**params.get("_meta", {}), "progressToken": request_id}}
        pending = self._pending[request_id] = _Pending()
        message = Request(request_id, method, params or None).to_json()
        limit = limit if limit is not None else self._options.timeout
        sent = False

        def written() -> None:
            nonlocal sent
            sent = True

        try:
            with anyio.move_on_after(limit):
                await transport.send(message, headers or {}, written)
                await pending.done.wait()
            if not pending.done.is_set():
                if sent and cancellable:  # never sent: nothing to cancel
                    await self._cancel(request_id, "timed out")  # LC-9
                raise ClientError("timeout", f"{method}: no response within {limit} s")
        except anyio.get_cancelled_exc_class():
            if sent and cancellable and not pending.done.is_set():  # CANCEL: tell the server
                with anyio.CancelScope(shield=True):
                    await self._cancel(request_id, "cancelled by the caller")
            raise
        finally:
            del self._pending[request_id]
            transport.release(request_id)
        if pending.error is not None:
            raise pending.error
        return pending.result

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        if self._modern and isinstance(self._transport, HttpTransport):
            return  # HM-5: over 2026 HTTP, closing the stream (release) is the cancellation
        # LC-9, HT-5 (a dropped connection is no cancellation), ST-5 (stdio in 2026).
        cancelled = Notification(
            "notifications/cancelled", {"requestId": request_id, "reason": reason}
        )
        try:
            await self._send(cancelled.to_json(), limit=1.0)
        except ClientError as exc:
            self._log(f"could not cancel request {request_id}: {exc}")

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        assert self._transport is not None
        with anyio.move_on_after(self._options.timeout if limit is None else limit):
            await self._transport.send(message, {})
            return
        raise ClientError("timeout", "could not send a message in time")

    # What the server sends ----------------------------------------------------------

    def _deliver(self, data: bytes | str) -> None:
        value: Any = None
        try:
            value = decode_json(data)
            message = classify(value, allow_batch=batches_allowed(self._revision))  # RPC-6
        except ProtocolError as exc:
            self._log(f"ignored an invalid message from the server: {exc}")
            self._invalid(exc, value)
            return
        for item in message.messages if isinstance(message, Batch) else (message,):
            self._dispatch(item)

    def _invalid(self, error: ProtocolError, value: Any) -> None:
        if error.request_id is None or not isinstance(value, dict):
            return
        if "method" in value:  # an invalid request: say so (never in 2026, ST-5)
            if not self._modern:
                self._answer_soon(error.to_error_response())
        elif (pending := self._pending.get(error.request_id)) is not None:
            pending.settle(error=ClientError("protocol", f"invalid response: {error}"))

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, (Response, ErrorResponse)):
            # An id of the other JSON type ("1" for 1) is another id: never matched.
            pending = None if message.id is None else self._pending.get(message.id)
            if pending is None:  # CANCEL: a late answer to an abandoned request
                self._log(f"ignored a response to unknown request id {message.id!r}")
            elif isinstance(message, Response):
                pending.settle(result=message.result)
            else:
                pending.settle(error=ServerError(message.error))
        elif isinstance(message, Request):
            if self._modern:  # ST-5: 2026-07-28 has no server requests and no responses
                self._log(f"ignored the server request {message.method!r} (2026-07-28)")
                return
            try:
                reply: Response | ErrorResponse = Response(
                    message.id, self._result_for(message.method, message.params)
                )
            except _Reject as exc:
                reply = ErrorResponse(message.id, ErrorObject(exc.code, exc.message))
            self._answer_soon(reply)
        else:
            params = message.params if isinstance(message.params, dict) else {}
            meta = params.get("_meta")
            tag = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
            subscription = None
            if tag is not None:
                # LISTEN: correlated by the id of the listen request it names, never by
                # its kind or by which subscription is newest (ST-5: one channel on stdio).
                subscription = self._subscriptions.get(tag) if is_request_id(tag) else None
                if subscription is None:
                    self._log(f"ignored {message.method}: no open subscription has id {tag!r}")
                    return
            self._emit(
                ClientEvent(
                    "notification",
                    method=message.method,
                    params=params,
                    subscription=None if subscription is None else subscription.key,
                )
            )
            if message.method == "notifications/subscriptions/acknowledged" and subscription:
                self._subscription_acknowledged(subscription, params)
            if message.method == "notifications/tools/list_changed" and self._has("tools"):
                self._tasks.start_soon(self.list_tools)  # TL-5: refetch

    def _answer_soon(self, reply: Response | ErrorResponse) -> None:
        # In a task of its own: a blocked write must not stop the reading. close() waits
        # (briefly) for these, so that an answer already decided still goes out.
        if not self._replies:
            self._replied = anyio.Event()
        self._replies += 1
        if not self._tasks.start_soon(self._reply, reply):
            self._replied_one()

    async def _reply(self, reply: Response | ErrorResponse) -> None:
        try:
            await self._send(reply.to_json())
        except ClientError as exc:
            self._log(f"could not answer the server: {exc}")
        finally:
            self._replied_one()

    def _replied_one(self) -> None:
        self._replies -= 1
        if not self._replies:
            self._replied.set()

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        """The result for a server request (or an MRTR input request), or _Reject."""
        handlers = self._options.handlers
        params = params if isinstance(params, dict) else {}
        if method == "ping":
            return {}  # PING: at any time, before initialized too
        if method == "roots/list" and handlers.roots is not None:
            roots = handlers.roots if self._roots is None else self._roots
            return {"roots": [dict(root) for root in roots]}
        if method == "sampling/createMessage" and handlers.sampling is not None:
            problem = _tool_history_problem(params.get("messages"))
            if problem is not None:  # SAMPLING: -32602 for a broken tool history
                raise _Reject(INVALID_PARAMS, problem)
            return dict(handlers.sampling)
        if method == "elicitation/create" and "elicitation" in self._capabilities(self._revision):
            mode = params.get("mode", "form")  # ELICIT: no mode means form
            if _at_least(self._revision, "2025-11-25") and mode != "form":
                raise _Reject(INVALID_PARAMS, f"elicitation mode {mode!r} was not declared")
            assert handlers.elicitation is not None
            return dict(handlers.elicitation)
        # An undeclared feature gets an error, never silence (ROOTS, SAMPLING).
        raise _Reject(METHOD_NOT_FOUND, f"method not found: {method}")

    def _input_responses(self, requests: Any) -> dict[str, Any]:
        """MRTR: one answer per key of `inputRequests`."""
        if not isinstance(requests, dict):
            raise ClientError("protocol", "inputRequests is not an object")
        responses: dict[str, Any] = {}
        for key, request in requests.items():
            method = request.get("method") if isinstance(request, dict) else None
            try:
                if method not in _INPUT_METHODS:
                    raise _Reject(METHOD_NOT_FOUND, f"{method!r} is no input request")
                responses[key] = self._result_for(str(method), request.get("params"))
            except _Reject as exc:
                raise ClientError("other", f"cannot answer input {key!r}: {exc.message}") from None
        return responses

    def _is_pending(self, request_id: RequestId) -> bool:
        pending = self._pending.get(request_id)
        return pending is not None and not pending.done.is_set()

    def _fail(self, request_id: RequestId | None, error: ClientError) -> None:
        if request_id is not None:
            if (pending := self._pending.get(request_id)) is not None:
                pending.settle(error=error)
            return
        self._broken = self._broken or error
        for pending in self._pending.values():
            pending.settle(error=ClientError(error.kind, error.message, error.code))

    def _emit(self, event: ClientEvent) -> None:
        if self._options.on_event is not None:
            with suppress(Exception):  # the application's bug must not break the session
                self._options.on_event(event)

    def _log(self, text: str) -> None:
        self._emit(ClientEvent("log", text=text))

    # The API ------------------------------------------------------------------------

    def _require(self, capability: str) -> None:
        if self._state != "open":
            raise ClientError("other", f"the client is {self._state}, not connected")
        if not self._has(capability):
            # LC-7: never use what the server did not declare; nothing is sent.
            raise ClientError("unsupported", f"the server did not declare {capability!r}")

    def _has(self, capability: str) -> bool:
        return self._server_capabilities is None or capability in self._server_capabilities

    async def _list_all(self, method: str, key: str) -> list[Any]:
        """TL-1: follow nextCursor, sent back verbatim, until a page has none."""
        items: list[Any] = []
        cursor: Any = None
        for _ in range(_MAX_PAGES):
            page = await self._request(method, None if cursor is None else {"cursor": cursor})
            batch = page.get(key, [])
            if not isinstance(batch, list):
                raise ClientError("protocol", f"{method}: {key} is not a list")
            items.extend(batch)
            cursor = page.get("nextCursor")
            if cursor is None:
                return items
        raise ClientError("protocol", f"{method}: still a nextCursor after {_MAX_PAGES} pages")

    async def list_tools(self) -> dict[str, Any]:
        self._require("tools")
        tools = []
        headers: dict[str, ParamHeaders] = {}
        for tool in await self._list_all("tools/list", "tools"):
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                self._log(f"ignored a tool without a name: {tool!r}")
                continue
            if self._modern and isinstance(self._transport, HttpTransport):
                try:
                    headers[name] = param_headers(tool.get("inputSchema"))
                except ValueError as exc:  # HM-4: reject the tool, say why
                    self._log(f"warning: tool {name!r} rejected: {exc}")
                    continue
            tools.append(tool)
        self._tools = {tool["name"]: tool for tool in tools}
        self._param_headers = headers
        return {"tools": tools}

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the McpClient contract)
        progress: bool = False,
    ) -> dict[str, Any]:
        self._require("tools")
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        # TL-4: a tool error is a result (isError kept); a JSON-RPC error raises ServerError.
        if self._task_required(name):
            result = await self._call_as_task(params, limit=timeout, progress=progress)
        else:
            result = await self._request("tools/call", params, limit=timeout, progress=progress)
        self._check_structured(name, result)
        return result

    def _task_required(self, name: str) -> bool:
        """TL-9 (2025-11-25): a task only when the tool requires it and the server allows it."""
        if self._modern or self._revision != "2025-11-25":
            return False
        execution = self._tools.get(name, {}).get("execution")
        tasks = (self._server_capabilities or {}).get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return (
            isinstance(execution, dict)
            and execution.get("taskSupport") == "required"
            and isinstance(tools, dict)
            and isinstance(tools.get("call"), dict)
        )

    async def _call_as_task(
        self, params: dict[str, Any], *, limit: float | None, progress: bool
    ) -> dict[str, Any]:
        created = await self._request(
            "tools/call", {**params, "task": {}}, limit=limit, progress=progress
        )
        task = created.get("task")
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if not isinstance(task_id, str):
            raise ClientError("protocol", "the task-augmented tools/call returned no task")
        # tasks/result waits for the task to end and returns the tool's result.
        return await self._request("tasks/result", {"taskId": task_id}, limit=limit)

    def _check_structured(self, name: str, result: dict[str, Any]) -> None:
        """TL-3: structuredContent must match the tool's outputSchema, when known."""
        schema = self._tools.get(name, {}).get("outputSchema")
        if not isinstance(schema, dict) or result.get("isError") is True:
            return
        if "structuredContent" not in result:
            raise ClientError(
                "other", f"tool {name!r} has an outputSchema but no structuredContent"
            )
        # Imported here: a driver process that never meets an outputSchema starts without it.
        from jsonschema import Draft202012Validator, SchemaError, ValidationError, validators
        from referencing.exceptions import Unresolvable

        # 2025-11-25+: a schema without $schema is JSON Schema 2020-12. $ref to the
        # network is never fetched (the default registry retrieves nothing).
        validator = validators.validator_for(schema, default=Draft202012Validator)
        try:
            validator.check_schema(schema)
            validator(schema).validate(result["structuredContent"])
        except ValidationError as exc:
            raise ClientError("other", f"{name!r}: structuredContent: {exc.message}") from None
        except (SchemaError, Unresolvable) as exc:
            self._log(f"could not validate the result of {name!r}: {exc}")

    async def list_resources(self) -> dict[str, Any]:
        self._require("resources")
        return {"resources": await self._list_all("resources/list", "resources")}

    async def read_resource(self, uri: str) -> dict[str, Any]:
        self._require("resources")
        return await self._request("resources/read", {"uri": uri})

    async def list_prompts(self) -> dict[str, Any]:
        self._require("prompts")
        return {"prompts": await self._list_all("prompts/list", "prompts")}

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        self._require("prompts")
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self._request("prompts/get", params)

    async def ping(self) -> dict[str, Any]:
        if self._state != "open":
            raise ClientError("other", f"the client is {self._state}, not connected")
        if self._modern:
            raise ClientError("unsupported", "2026-07-28 removed ping (LC-M5)")
        return await self._request("ping")

    # Driver protocol 1.1 operations --------------------------------------------------

    def _declared(self, capability: str, member: str | None = None) -> bool:
        """Whether the server declared `capability` (with `member` true): unlike _has, an
        unknown set of capabilities (a 2026 server/discover that failed) declares nothing."""
        declared = (self._server_capabilities or {}).get(capability)
        if member is None:
            return isinstance(declared, dict)
        return isinstance(declared, dict) and declared.get(member) is True

    def _require_declared(self, capability: str, member: str | None = None) -> None:
        if self._state != "open":
            raise ClientError("other", f"the client is {self._state}, not connected")
        if not self._declared(capability, member):
            # LC-7: only negotiated capabilities; nothing is sent.
            what = f"{capability}.{member}" if member else capability
            raise ClientError("unsupported", f"the server did not declare {what!r}")

    async def set_log_level(self, level: str) -> dict[str, Any]:
        if self._modern:
            raise ClientError("unsupported", "2026-07-28 removed logging/setLevel (LC-M5)")
        self._require_declared("logging")  # LOG: setLevel only if declared
        await self._request("logging/setLevel", {"level": level})
        return {}

    async def subscribe_resource(self, uri: str) -> dict[str, Any]:
        if self._modern:
            raise ClientError("unsupported", "2026-07-28 subscribes with subscriptions/listen")
        self._require_declared("resources", "subscribe")  # RES, LC-7
        await self._request("resources/subscribe", {"uri": uri})
        return {}

    async def unsubscribe_resource(self, uri: str) -> dict[str, Any]:
        if self._modern:
            raise ClientError("unsupported", "2026-07-28 subscribes with subscriptions/listen")
        self._require_declared("resources", "subscribe")
        await self._request("resources/unsubscribe", {"uri": uri})
        return {}

    async def listen(
        self, notifications: Mapping[str, Any], *, subscription: int | None = None
    ) -> dict[str, Any]:
        """LISTEN (2026-07-28): keep a subscriptions/listen open, and open it again when the
        server ends it (ST-5: also after a restart); returns once acknowledged. Several
        may be open at once: each event names the `subscription` it belongs to."""
        if self._state != "open":
            raise ClientError("other", f"the client is {self._state}, not connected")
        if not self._modern:
            raise ClientError("unsupported", "subscriptions/listen is a 2026-07-28 request")
        opened = _Subscription(subscription)
        self._tasks.start_soon(self._listen_loop, dict(notifications), opened)
        with anyio.move_on_after(self._options.timeout):
            await opened.acknowledged.wait()
            return {"notifications": opened.notifications}
        raise ClientError("timeout", "subscriptions/listen was not acknowledged in time")

    def _closing(self) -> bool:
        return self._state != "open"  # a method: mypy must not narrow it across awaits

    def _subscription_acknowledged(
        self, subscription: _Subscription, params: Mapping[str, Any]
    ) -> None:
        acknowledged = params.get("notifications")
        subscription.notifications = dict(acknowledged) if isinstance(acknowledged, dict) else {}
        state = {"state": "acknowledged", "notifications": subscription.notifications}
        self._emit(ClientEvent("subscription", params=state, subscription=subscription.key))
        subscription.acknowledged.set()

    def _route_listen(
        self, subscription: _Subscription, ids: list[RequestId], request_id: RequestId
    ) -> None:
        """A subscriptions/listen request goes out under `request_id`: what the server
        sends naming it belongs to `subscription`."""
        ids.append(request_id)
        self._subscriptions[request_id] = subscription

    async def _listen_loop(
        self, notifications: dict[str, Any], subscription: _Subscription
    ) -> None:
        failures = 0
        while self._state == "open" and failures < _MAX_RELISTENS:
            ids: list[RequestId] = []
            try:
                await self._request(
                    "subscriptions/listen",
                    {"notifications": notifications},
                    limit=math.inf,
                    on_id=functools.partial(self._route_listen, subscription, ids),
                )
                state = {"state": "ended", "reason": "result"}
                failures += 1
            except ServerError as exc:
                state = {"state": "error", "message": str(exc)}
                self._emit(ClientEvent("subscription", params=state, subscription=subscription.key))
                return  # the server refused the filter: listening again would not help
            except ClientError as exc:
                if self._closing():
                    return
                state = {"state": "ended", "reason": "closed", "message": exc.message}
                failures += 1
            finally:
                for request_id in ids:  # an ended subscription is no route any more
                    self._subscriptions.pop(request_id, None)
            self._emit(ClientEvent("subscription", params=state, subscription=subscription.key))
            await anyio.sleep(0.05 * failures)  # a server that ends every stream at once

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        self._require_declared("completions")  # completion only if declared (LC-7)
        params: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context is not None:
            params["context"] = dict(context)
        return await self._request("completion/complete", params)

    async def list_resource_templates(self) -> dict[str, Any]:
        self._require("resources")
        templates = await self._list_all("resources/templates/list", "resourceTemplates")
        return {"resourceTemplates": templates}

    async def set_roots(self, roots: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        if self._state != "open":
            raise ClientError("other", f"the client is {self._state}, not connected")
        if self._options.handlers.roots is None:
            raise ClientError("unsupported", "this client was given no roots to change")
        self._roots = tuple(dict(root) for root in roots)
        capabilities = self._capabilities(self._revision)
        if (capabilities.get("roots") or {}).get("listChanged") is True:
            # ROOTS: a client that declared listChanged MUST say the roots changed.
            await self._send(Notification("notifications/roots/list_changed").to_json())
        return {}

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: Mapping[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (the McpClient contract)
    ) -> dict[str, Any]:
        self._require("tools")
        if not self._task_allowed(name):
            # TL-9: no task augmentation unless the server and the tool allow it.
            raise ClientError("unsupported", f"tool {name!r} cannot be called as a task here")
        params: dict[str, Any] = {"name": name, "task": dict(task or {})}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        created = await self._request("tools/call", params, limit=timeout)
        if not isinstance(created.get("task"), dict):
            raise ClientError("protocol", "the task-augmented tools/call returned no task")
        return created

    def _task_allowed(self, name: str) -> bool:
        if self._modern or self._revision != "2025-11-25":
            return False
        execution = self._tools.get(name, {}).get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        tasks = (self._server_capabilities or {}).get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return (
            support in ("optional", "required")
            and isinstance(tools, dict)
            and isinstance(tools.get("call"), dict)
        )

    async def get_task(self, task_id: str) -> dict[str, Any]:
        self._require_declared("tasks")
        return await self._request("tasks/get", {"taskId": task_id})

    async def task_result(self, task_id: str) -> dict[str, Any]:
        self._require_declared("tasks")
        return await self._request("tasks/result", {"taskId": task_id})

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        # TL-9: tasks/cancel (never notifications/cancelled), only if the server has it.
        self._require_declared("tasks", None)
        if not isinstance((self._server_capabilities or {}).get("tasks", {}).get("cancel"), dict):
            raise ClientError("unsupported", "the server did not declare 'tasks.cancel'")
        return await self._request("tasks/cancel", {"taskId": task_id})

    async def close(self) -> None:
        """Release everything, bounded in time, whatever state the client is in."""
        if self._state == "closed":
            return
        self._state = "closed"
        self._fail(None, ClientError("other", "the client was closed"))
        with anyio.CancelScope(shield=True):
            if self._replies:
                with anyio.move_on_after(1.0):
                    await self._replied.wait()
            # A restart under way ends first: it stops the process it started when it
            # finds the client closed, so no server outlives close().
            with anyio.move_on_after(_CLOSE_BOUND):
                async with self._restart_lock:
                    pass
            if self._transport is not None:
                with anyio.move_on_after(_CLOSE_BOUND):
                    try:
                        await self._transport.close()  # ST-4, HT-10
                    except Exception as exc:
                        self._log(f"closing the transport failed: {exc!r}")
            await self._tasks.aclose(2.0)
            if self._http is not None:
                with anyio.move_on_after(2.0):
                    await self._http.aclose()
