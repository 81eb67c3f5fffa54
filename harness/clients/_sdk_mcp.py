"""The official Python SDK client (`mcp` 2.x) under the McpClient contract.

    pytest --mcp-client=harness.clients._sdk_mcp:McpSdkClient      # mode="auto", the default
    pytest --mcp-client=harness.clients._sdk_mcp:legacy_client     # mode="legacy"
    pytest --mcp-client=harness.clients._sdk_mcp:modern_client     # mode="2026-07-28"

The adapter is there to judge the SDK, so it surfaces exactly what the SDK surfaces: it
calls the high-level `mcp.Client` API an application calls, with the SDK's defaults, and
only translates results to plain JSON and exceptions to ClientError. It never corrects,
retries or validates anything on the SDK's behalf.

Why a task of its own: `async with Client(...)` opens anyio task groups, and the harness
calls connect() inside an `anyio.fail_after` scope (harness/running/_scenario.py) and close() outside
it. Entering the context in connect() and leaving it in close() would break anyio's rule
that cancel scopes nest. `SdkHolder` therefore keeps the `async with` open in an asyncio
task that owns it from start to end; the operations themselves run in the caller's task,
as an application's would, so that cancelling the caller cancels the request the SDK's
way (it sends notifications/cancelled).

Authorization (`auth`): for a server behind OAuth 2.1 the adapter configures the SDK as
an application does: an `OAuthClientProvider` (the SDK's whole flow: discovery,
registration, PKCE, the token requests, step-up) on the HTTP client the SDK's Streamable HTTP
transport uses, with an in-memory `TokenStorage` and the redirect and callback handlers of
`HeadlessBrowser`, which only stand in for the user's browser (docs/driver-protocol.md,
"Headless authorization").

The SDK is imported when a client is made (`require`), never by importing `harness`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import re
import ssl
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from importlib import metadata
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, get_args
from urllib.parse import parse_qs, urlsplit

import anyio

from harness.clients._contract import (
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    Handlers,
    HttpTarget,
    SseLegacyTarget,
    StdioTarget,
    Target,
)
from harness.protocol import REVISIONS

if TYPE_CHECKING:
    import httpx2
    import mcp
    import mcp_types
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.session import ClientRequestContext, IncomingMessage
    from mcp.client.stdio import StdioServerParameters
    from mcp.shared._stream_protocols import ReadStream, WriteStream
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken
    from mcp.shared.message import SessionMessage

__all__ = [
    "SESSION_FEATURES",
    "HeadlessBrowser",
    "McpSdkClient",
    "Mode",
    "SdkHolder",
    "Subscriptions",
    "checked_mode",
    "deprecated_quietly",
    "distribution_version",
    "emit",
    "era_features",
    "legacy_client",
    "memory_token_storage",
    "modern_client",
    "require",
    "sampling_result",
    "sdk_revisions",
    "to_client_error",
    "to_json",
]

Mode = Literal["auto", "legacy", "2026-07-28"]
T = TypeVar("T")

_NAME = "mcp (python sdk)"
_MAX_PAGES = 1000  # a server that never stops paging costs an error, not a hang
# Leaving the SDK's context: its stdio shutdown alone may take 6 s (close stdin, wait 2 s,
# SIGTERM the tree, SIGKILL after 2 s, reap). Both bounds together stay under the 10 s the
# harness gives close() by default.
_STOP_BOUND = 7.0
_CANCEL_BOUND = 2.0
# What the SDK's dispatcher raises itself (mcp/shared/jsonrpc_dispatcher.py), as opposed
# to errors a server sent: a request that timed out, and a connection that is gone.
_REQUEST_TIMEOUT = -32001
_CONNECTION_CLOSED = -32000
_TIMED_OUT = re.compile(r"Request .* timed out")
# The dispatcher's "Connection closed", and the stand-ins the Streamable HTTP transport
# makes when a response stream fails or ends before the response (streamable_http.py).
_CLOSED = re.compile(r"Connection closed|SSE stream (failed|ended).*")


def require(distribution: str, extra: str, *modules: str) -> None:
    """Import `distribution` and `modules` now, or an ImportError naming the extra.

    Called when a client is made, not in connect(): the harness bounds connect() in time,
    and importing an SDK (seconds on a busy machine; fastmcp loads some 800 modules on its
    first connection) is an application's start-up cost, not the client's behaviour.
    """
    if importlib.util.find_spec(distribution) is None:
        raise ImportError(
            f"this adapter needs the {distribution!r} package: pip install 'mcp-testbench[{extra}]'"
        )
    for module in (distribution, *modules):
        importlib.import_module(module)


@functools.cache  # a lookup walks the installed distributions' metadata: once per process
def distribution_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def sdk_revisions(*, handshake: bool, modern: bool) -> frozenset[str]:
    """The revisions the installed SDK negotiates that the harness knows (from its code)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    spoken = (HANDSHAKE_PROTOCOL_VERSIONS if handshake else ()) + (
        MODERN_PROTOCOL_VERSIONS if modern else ()
    )
    return frozenset(spoken) & frozenset(REVISIONS)


def checked_mode(mode: str) -> Mode:
    """`mode` as both SDKs' clients take it, or a ValueError naming the choices."""
    for known in get_args(Mode):
        if mode == known:
            return known  # type: ignore[no-any-return]
    raise ValueError(f"mode must be 'auto', 'legacy' or '2026-07-28', not {mode!r}")


#: What both adapters declare from the SDK session they run on (fastmcp's Client is built
#: on mcp's): its stdio and Streamable HTTP transports; its sampling, elicitation and roots
#: callbacks; log and progress handlers; a cancelled caller cancels the SDK request; and its
#: OAuth client, driven by the headless browser's handlers (`auth`).
SESSION_FEATURES = frozenset(
    {
        "stdio",
        "http",
        "tools",
        "resources",
        "prompts",
        "sampling",
        "elicitation",
        "roots",
        "logging",
        "progress",
        "cancel",
        "auth",
    }
)


def era_features(mode: Mode) -> frozenset[str]:
    """What `mode` adds: ping and HTTP+SSE belong to the handshake era only, and the
    revisions the SDK negotiates under it."""
    handshake = mode != "2026-07-28"
    legacy = {"sse-legacy", "ping"} if handshake else set()
    return frozenset(legacy) | sdk_revisions(handshake=handshake, modern=mode != "legacy")


def to_json(model: Any) -> dict[str, Any]:
    """A pydantic model of the SDK as the spec's JSON (camelCase keys, no nulls)."""
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert isinstance(dumped, dict)
    return dumped


def emit(options: ConnectOptions, event: ClientEvent) -> None:
    if options.on_event is not None:
        with suppress(Exception):  # the harness's bug must not break the SDK's session
            options.on_event(event)


def _leaf(exc: BaseException) -> BaseException:
    """The exception inside anyio's exception groups (the first that is no cancellation)."""
    while True:
        inner = getattr(exc, "exceptions", None)
        if not isinstance(inner, tuple) or not inner:
            return exc
        cancelled = anyio.get_cancelled_exc_class()
        exc = next((e for e in inner if not isinstance(e, cancelled)), inner[0])


def _kind(exc: BaseException) -> Literal["transport", "timeout"] | None:
    import httpx2

    if isinstance(exc, TimeoutError):
        return "timeout"
    transport = (
        OSError,  # spawning the server, connection refused, broken pipes
        httpx2.HTTPError,
        anyio.BrokenResourceError,
        anyio.ClosedResourceError,
        anyio.EndOfStream,
    )
    return "transport" if isinstance(exc, transport) else None


def to_client_error(exc: BaseException) -> ClientError:
    """What the SDK raised, as the contract's error kinds.

    A JSON-RPC error (MCPError) keeps its code and message: that is what the SDK hands
    its caller, including the stand-ins it makes for bare HTTP statuses (documented as
    MCPError). The two MCPErrors its dispatcher raises itself, a request timeout and a
    closed connection, are `timeout` and `transport`. An exception whose cause is a
    transport failure or a timeout (fastmcp wraps those in RuntimeError) takes the
    cause's kind and keeps its own message.
    """
    from mcp.shared.exceptions import MCPError

    leaf = _leaf(exc)
    if isinstance(leaf, ClientError):
        return leaf
    if isinstance(leaf, MCPError):
        if leaf.code == _REQUEST_TIMEOUT and _TIMED_OUT.fullmatch(leaf.message):
            return ClientError("timeout", leaf.message)
        if leaf.code == _CONNECTION_CLOSED and _CLOSED.fullmatch(leaf.message):
            return ClientError("transport", leaf.message)
        return ClientError("protocol", leaf.message, leaf.code)
    message = f"{type(leaf).__name__}: {leaf}"
    cause: BaseException | None = leaf
    seen = 0
    while cause is not None and seen < 8:
        kind = _kind(_leaf(cause))
        if kind is not None:
            return ClientError(kind, message)
        cause, seen = cause.__cause__, seen + 1
    return ClientError("other", message)


class SdkHolder:
    """Keeps an SDK client's `async with` open in an asyncio task that owns it.

    `open()` starts the task and returns once the context is entered (the SDK has
    connected and negotiated), or raises what entering raised. `close()` asks the task to
    leave the context and waits, bounded; a task that does not leave is cancelled.
    (asyncio, because anyio has no task that outlives the scope that starts it; the
    harness runs every scenario on asyncio.)
    """

    def __init__(self, label: str) -> None:
        self._label = label
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self.failure: BaseException | None = None
        """Why the context ended on its own (the connection failed), if it did."""

    @property
    def ended(self) -> bool:
        return self._task is not None and self._task.done()

    async def open(self, client: AbstractAsyncContextManager[Any]) -> None:
        loop = asyncio.get_running_loop()
        entered: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._task = loop.create_task(self._hold(client, entered, self._stop), name=self._label)
        try:
            await asyncio.shield(entered)
        except BaseException:
            await self.close()  # a connect that failed or was cancelled leaves nothing open
            raise

    async def _hold(
        self,
        client: AbstractAsyncContextManager[Any],
        entered: asyncio.Future[None],
        stop: asyncio.Event,
    ) -> None:
        try:
            async with client:
                entered.set_result(None)
                await stop.wait()
        except Exception as exc:  # reported by open() or by the next operation
            self.failure = exc
        finally:
            if not entered.done():
                failure = self.failure or ClientError("other", "the client stopped connecting")
                entered.set_exception(failure)

    async def close(self) -> None:
        task, stop = self._task, self._stop
        if task is None or stop is None:
            return
        stop.set()
        with anyio.CancelScope(shield=True):
            done, _ = await asyncio.wait({task}, timeout=_STOP_BOUND)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=_CANCEL_BOUND)

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        """Run one operation of the open client; SDK exceptions become ClientError."""
        if self._task is None:
            raise ClientError("other", "the client is not connected")
        if self.ended:
            why = f": {to_client_error(self.failure).message}" if self.failure else ""
            raise ClientError("transport", f"the connection has ended{why}")
        try:
            return await operation()
        except ClientError:
            raise
        except Exception as exc:
            raise to_client_error(exc) from exc


def sampling_result(
    handlers: Handlers,
) -> mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | None:
    """The harness's canned sampling answer as the SDK's model (None: no answer)."""
    import mcp_types
    from pydantic import ValidationError

    if handlers.sampling is None:
        return None
    try:
        return mcp_types.CreateMessageResult.model_validate(dict(handlers.sampling))
    except ValidationError:
        return mcp_types.CreateMessageResultWithTools.model_validate(dict(handlers.sampling))


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx2's default TLS context (its root certificates, or SSL_CERT_FILE / SSL_CERT_DIR
    as set when first needed), made once per process, as an application that opens many
    sessions would: making one parses every root certificate, about 30 ms of CPU per
    session (18% of the SDK suite's CPU when every session made its own)."""
    import httpx2

    return httpx2.create_ssl_context()


def _sdk_http_client_sharing_tls(
    headers: dict[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
) -> httpx2.AsyncClient:
    """The HTTP client the SDK's `create_mcp_http_client` makes (its time-outs, headers
    and auth; redirects left off), with the process's one TLS context: on the wire the
    same client. The SDK documents passing a client of the application's making as the
    way to configure one; the mocks speak plain HTTP, so the context is never used."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    if timeout is None:
        timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout, verify=_tls_context())


@asynccontextmanager
async def _http_client_of_our_own(
    url: str, headers: Mapping[str, str], auth: OAuthClientProvider | None
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    # The SDK's way to send extra headers or to authorize, and to share a TLS context: an
    # HTTP client of the application's making, passed in (and then closed by the caller).
    from mcp.client.streamable_http import streamable_http_client

    async with (
        _sdk_http_client_sharing_tls(dict(headers) or None, auth=auth) as http_client,
        streamable_http_client(url, http_client=http_client) as streams,
    ):
        yield streams


class HeadlessBrowser:
    """The user's browser in an authorization, headless: what the SDKs' redirect handler
    and callback handler stand for (docs/driver-protocol.md, "Headless authorization").

    `redirect_handler` gets the authorization URL the client built and fetches it without
    following the redirect (the harness's authorization endpoint approves at once with a
    302); `callback_handler` then hands the client the query of that redirect, as its
    callback server would have received it: the code, the state and the iss, unchecked.
    Everything else (what the URL holds, whether state and iss match, the token requests)
    is the client's own doing.
    """

    def __init__(self) -> None:
        self._redirect: str | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        import httpx2

        async with httpx2.AsyncClient(follow_redirects=False, verify=_tls_context()) as http:
            response = await http.get(authorization_url)
        location = response.headers.get("location")
        if location is None:
            body = response.text[:300]
            raise ClientError(
                "other",
                f"the authorization endpoint answered {response.status_code} without a "
                f"redirect: {body}",
            )
        self._redirect = location

    def redirected_to(self) -> dict[str, str]:
        """The query of the last redirect (each parameter's first value), once."""
        location, self._redirect = self._redirect, None
        if location is None:
            raise ClientError("other", "the callback was awaited before any redirect")
        query = parse_qs(urlsplit(location).query, keep_blank_values=True)
        return {name: values[0] for name, values in query.items()}

    async def callback_handler(self) -> AuthorizationCodeResult:
        from mcp.shared.auth import AuthorizationCodeResult

        query = self.redirected_to()
        if "code" not in query:
            # What a callback page shows when the server refused (RFC 6749 §4.1.2.1).
            raise ClientError(
                "other",
                f"the authorization server refused: {query.get('error')}: "
                f"{query.get('error_description', '')}",
            )
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )


class _MemoryTokenStorage:
    """The SDK's TokenStorage protocol, kept in memory for one connection."""

    def __init__(self, client_info: OAuthClientInformationFull | None) -> None:
        self._tokens: OAuthToken | None = None
        self._client_info = client_info

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client_info = client_info


def memory_token_storage(authorization: Authorization) -> _MemoryTokenStorage:
    """In-memory token storage; holding the pre-registered client when there is one.

    The SDK takes pre-registered credentials as stored client information. It has no
    default token endpoint authentication method for them (it sends no secret without
    one), so they are stored with the method a pre-registered client with a secret uses
    by default: client_secret_basic (RFC 7591 §2's default, and the method RFC 6749 §2.3.1
    makes every authorization server support); `none` for a public client.
    """
    from mcp.shared.auth import OAuthClientInformationFull

    if authorization.client_id is None:
        return _MemoryTokenStorage(None)
    secret = authorization.client_secret
    info = OAuthClientInformationFull(
        client_id=authorization.client_id,
        client_secret=secret,
        client_name=authorization.client_name,
        redirect_uris=[authorization.redirect_uri],  # type: ignore[list-item]
        token_endpoint_auth_method="none" if secret is None else "client_secret_basic",
    )
    return _MemoryTokenStorage(info)


def oauth_provider(server_url: str, authorization: Authorization) -> OAuthClientProvider:
    """The SDK's OAuthClientProvider as an application configures it: its client name and
    redirect URI (the rest of the client metadata the SDK's defaults), token storage, and
    the headless browser's handlers."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    browser = HeadlessBrowser()
    metadata = OAuthClientMetadata(
        client_name=authorization.client_name,
        redirect_uris=[authorization.redirect_uri],  # type: ignore[list-item]
    )
    return OAuthClientProvider(
        server_url=server_url,
        client_metadata=metadata,
        storage=memory_token_storage(authorization),
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )


class McpSdkClient:
    """An `McpClient` backed by `mcp.Client` (the official Python SDK).

    `mode` is passed to `mcp.Client`: "auto" (the SDK's default: probe `server/discover`,
    fall back to `initialize`), "legacy" (initialize only) or "2026-07-28" (stateless).
    """

    #: Each instance keeps its SDK client, session and callbacks to itself, and the SDK
    #: keeps no session state in module globals (only caches of its own types), so the
    #: harness may run several scenarios with it at once, each on its own thread and
    #: event loop (`--mcp-concurrency`).
    concurrent_instances: ClassVar[bool] = True

    def __init__(self, *, mode: Mode = "auto") -> None:
        require("mcp", "mcp", "mcp.client.sse", "mcp.client.stdio", "mcp.client.streamable_http")
        self._mode: Mode = checked_mode(mode)
        self._holder = SdkHolder(f"mcp.Client ({mode})")
        self._client: mcp.Client | None = None
        self._options = ConnectOptions()
        self._state: Literal["new", "open", "closed"] = "new"
        self._roots: list[dict[str, Any]] | None = None  # set_roots changes them
        self._subscriptions = Subscriptions()

    @property
    def name(self) -> str:
        return _NAME

    @property
    def version(self) -> str:
        return distribution_version("mcp")

    @property
    def supports(self) -> frozenset[str]:
        # From the SDK's code: stdio_client, streamable_http_client and sse_client (a
        # Transport mcp.Client accepts); sampling, elicitation and list-roots callbacks;
        # notifications/message reaches message_handler; call_tool takes a
        # progress_callback; a cancelled caller makes the dispatcher send
        # notifications/cancelled; OAuthClientProvider on the Streamable HTTP client, with
        # the headless browser's handlers (`oauth_provider`).
        features = set(SESSION_FEATURES)
        # Driver protocol 1.1: mcp.Client has set_logging_level, subscribe_resource and
        # unsubscribe_resource, complete, list_resource_templates and send_roots_list_changed
        # (its list-roots callback declares roots.listChanged). No "tasks": mcp_types has
        # the 2025-11-25 task models, but ClientRequest leaves the task requests out
        # ("types-only") and neither Client nor ClientSession can send one.
        features |= {"set_log_level", "subscribe_resource", "complete", "list_resource_templates"}
        features |= {"set_roots"}
        if self._mode != "legacy":
            # Client.listen(), a 2026-07-28 request; each subscription is an iterator of
            # its own, fed by the SDK's demultiplexing by subscriptionId: what it yields is
            # reported under that listen (`listen_routing`).
            features |= {"listen", "listen_routing"}
        return frozenset(features) | era_features(self._mode)

    # Connecting ---------------------------------------------------------------------

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        if self._state != "new":
            raise ClientError("other", "connect() can be called once per client")
        self._state = "open"
        self._options = options
        from mcp import Client

        # options.protocol_version (the revision the mock serves) is not forced: the SDK
        # picks its own version (auto: discover, then initialize offering its latest);
        # `mode` is the only say an application has, and it comes from the factory.
        try:
            client = Client(
                self._server(target, options.authorization),
                mode=self._mode,
                read_timeout_seconds=options.timeout,
                message_handler=self._on_message,
                **self._callbacks(options.handlers),
            )
            await self._holder.open(client)
        except Exception as exc:
            raise to_client_error(exc) from exc
        self._client = client
        info = client.server_info
        return {
            "protocolVersion": client.protocol_version,
            "serverInfo": to_json(info) if info is not None else {},
        }

    def _server(
        self, target: Target, authorization: Authorization | None
    ) -> str | StdioServerParameters | AbstractAsyncContextManager[Any]:
        from mcp.client.sse import sse_client
        from mcp.client.stdio import StdioServerParameters

        if isinstance(target, StdioTarget):
            command, *args = target.command
            # The SDK passes the server only a whitelist of the environment, plus `env`.
            return StdioServerParameters(command=command, args=args, env=dict(target.env) or None)
        if isinstance(target, SseLegacyTarget):
            return sse_client(
                target.url,
                headers=dict(target.headers) or None,
                httpx_client_factory=_sdk_http_client_sharing_tls,
            )
        assert isinstance(target, HttpTarget)
        auth = None if authorization is None else oauth_provider(target.url, authorization)
        return _http_client_of_our_own(target.url, target.headers, auth)

    def _callbacks(self, handlers: Handlers) -> dict[str, Any]:
        """Callbacks only for what the harness gave answers for: the SDK declares a
        capability exactly when its callback is set."""
        import mcp_types

        callbacks: dict[str, Any] = {}
        sampled = sampling_result(handlers)
        if sampled is not None:

            async def sampling(
                context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
            ) -> mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools:
                return sampled

            callbacks["sampling_callback"] = sampling
        if handlers.elicitation is not None:
            elicited = mcp_types.ElicitResult.model_validate(dict(handlers.elicitation))

            async def elicitation(
                context: ClientRequestContext, params: mcp_types.ElicitRequestParams
            ) -> mcp_types.ElicitResult:
                return elicited

            callbacks["elicitation_callback"] = elicitation
        if handlers.roots is not None:
            self._roots = [dict(root) for root in handlers.roots]

            async def list_roots(context: ClientRequestContext) -> mcp_types.ListRootsResult:
                return mcp_types.ListRootsResult.model_validate({"roots": self._roots})

            callbacks["list_roots_callback"] = list_roots
        return callbacks

    async def _on_message(self, message: IncomingMessage) -> None:
        # Every notification the SDK surfaces (logging ones too), and the transport
        # faults it reports to the application.
        if isinstance(message, Exception):
            text = f"the SDK reported: {type(message).__name__}: {message}"
            emit(self._options, ClientEvent("log", text=text))
            return
        dumped = to_json(message)
        params = dumped.get("params")
        event = ClientEvent(
            "notification",
            method=str(dumped.get("method", "")),
            params=params if isinstance(params, dict) else {},
        )
        emit(self._options, event)

    # The API ------------------------------------------------------------------------

    def _open(self) -> mcp.Client:
        if self._state != "open" or self._client is None:
            raise ClientError("other", f"the client is {self._state}, not connected")
        return self._client

    async def _all_pages(
        self, key: str, page: Callable[[str | None], Awaitable[Any]]
    ) -> dict[str, Any]:
        """`mcp.Client.list_*` return one page: follow nextCursor as an application does."""
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            result = to_json(await self._holder.call(functools.partial(page, cursor)))
            items.extend(result.get(key, []))
            cursor = result.get("nextCursor")
            if cursor is None:
                return {key: items}
        raise ClientError("other", f"still a nextCursor after {_MAX_PAGES} pages")

    async def list_tools(self) -> dict[str, Any]:
        client = self._open()
        return await self._all_pages("tools", lambda cursor: client.list_tools(cursor=cursor))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the McpClient contract)
        progress: bool = False,
    ) -> dict[str, Any]:
        client = self._open()
        options = self._options

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            params: dict[str, Any] = {"progress": progress}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            emit(options, ClientEvent("notification", "notifications/progress", params))

        result = await self._holder.call(
            lambda: client.call_tool(
                name,
                dict(arguments) if arguments is not None else None,
                read_timeout_seconds=timeout,
                progress_callback=on_progress if progress else None,
            )
        )
        return to_json(result)  # isError results are results in the SDK: kept as they are

    async def list_resources(self) -> dict[str, Any]:
        client = self._open()
        return await self._all_pages(
            "resources", lambda cursor: client.list_resources(cursor=cursor)
        )

    async def read_resource(self, uri: str) -> dict[str, Any]:
        client = self._open()
        return to_json(await self._holder.call(lambda: client.read_resource(uri)))

    async def list_prompts(self) -> dict[str, Any]:
        client = self._open()
        return await self._all_pages("prompts", lambda cursor: client.list_prompts(cursor=cursor))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        client = self._open()
        chosen = dict(arguments) if arguments is not None else None
        return to_json(await self._holder.call(lambda: client.get_prompt(name, chosen)))

    async def ping(self) -> dict[str, Any]:
        client = self._open()
        # Client.send_ping only adds a deprecation warning before calling this; on a
        # 2026-07-28 connection the SDK sends the ping anyway, and the server refuses it.
        await self._holder.call(lambda: client.session.send_ping())
        return {}

    # Driver protocol 1.1 ------------------------------------------------------------

    async def set_log_level(self, level: str) -> dict[str, Any]:
        client = self._open()
        with deprecated_quietly():
            await self._holder.call(lambda: client.set_logging_level(level))  # type: ignore[arg-type]
        return {}

    async def subscribe_resource(self, uri: str) -> dict[str, Any]:
        client = self._open()
        with deprecated_quietly():
            await self._holder.call(lambda: client.subscribe_resource(uri))
        return {}

    async def unsubscribe_resource(self, uri: str) -> dict[str, Any]:
        client = self._open()
        with deprecated_quietly():
            await self._holder.call(lambda: client.unsubscribe_resource(uri))
        return {}

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        import mcp_types

        client = self._open()
        reference: mcp_types.PromptReference | mcp_types.ResourceTemplateReference
        if ref.get("type") == "ref/prompt":
            reference = mcp_types.PromptReference.model_validate(dict(ref))
        else:
            reference = mcp_types.ResourceTemplateReference.model_validate(dict(ref))
        chosen = {str(k): str(v) for k, v in argument.items()}
        arguments = (context or {}).get("arguments")
        result = await self._holder.call(
            lambda: client.complete(
                reference, chosen, dict(arguments) if isinstance(arguments, dict) else None
            )
        )
        return to_json(result)

    async def list_resource_templates(self) -> dict[str, Any]:
        client = self._open()
        return await self._all_pages(
            "resourceTemplates", lambda cursor: client.list_resource_templates(cursor=cursor)
        )

    async def set_roots(self, roots: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        client = self._open()
        if self._roots is None:
            raise ClientError("unsupported", "connect gave the client no roots")
        self._roots = [dict(root) for root in roots]
        with deprecated_quietly():
            await self._holder.call(client.send_roots_list_changed)
        return {}

    async def listen(
        self, notifications: Mapping[str, Any], *, subscription: int | None = None
    ) -> dict[str, Any]:
        client = self._open()
        return await self._holder.call(
            lambda: self._subscriptions.open(client, notifications, self._options, subscription)
        )

    async def close(self) -> None:
        if self._state == "closed":
            return
        self._state = "closed"
        # The subscriptions first: an application leaves its `async with client.listen()`
        # before it leaves the client's, and no event is reported after close().
        await self._subscriptions.close()
        await self._holder.close()  # leaves `async with`: stdin closed, DELETE sent, ...


class Subscriptions:
    """The 2026-07-28 subscriptions of one `mcp.Client`, each kept open as its application
    keeps one: `async with client.listen(...) as subscription`, iterated until it ends.

    As for SdkHolder, each `async with` lives in an asyncio task of its own, which enters
    and leaves it. The SDK tees every notification of a subscription to message_handler, so
    they are surfaced there; the events reported here are the subscription's own states.
    When a subscription ends, nothing listens again: the SDK leaves that to its application
    ("There is no replay and no automatic re-listen"), and so the adapter leaves it to the
    client, as driver protocol 1.1 asks.

    What a subscription's iterator yields (the SDK routed it there by its subscriptionId)
    is reported as a notification under that subscription's key (`listen_routing`); the
    same notification reaches message_handler too, reported there under no subscription.
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    async def open(
        self,
        client: mcp.Client,
        notifications: Mapping[str, Any],
        options: ConnectOptions,
        key: int | None = None,
    ) -> dict[str, Any]:
        """Listen with this SubscriptionFilter; `{"notifications": <acknowledged>}` once the
        SDK has entered the subscription, or what entering raised. Events name `key`."""
        loop = asyncio.get_running_loop()
        acknowledged: asyncio.Future[dict[str, Any]] = loop.create_future()
        task = loop.create_task(
            self._keep(client, dict(notifications), options, acknowledged, key),
            name="mcp listen",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            honored = await asyncio.shield(acknowledged)
        except BaseException:
            task.cancel()  # a listen that failed, or whose command was cancelled, ends here
            raise
        return {"notifications": honored}

    @staticmethod
    async def _keep(
        client: mcp.Client,
        notifications: dict[str, Any],
        options: ConnectOptions,
        acknowledged: asyncio.Future[dict[str, Any]],
        key: int | None,
    ) -> None:
        from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
        from mcp.shared.subscriptions import event_to_notification

        uris = notifications.get("resourceSubscriptions")
        try:
            async with client.listen(
                tools_list_changed=notifications.get("toolsListChanged") is True,
                prompts_list_changed=notifications.get("promptsListChanged") is True,
                resources_list_changed=notifications.get("resourcesListChanged") is True,
                resource_subscriptions=[str(u) for u in uris] if isinstance(uris, list) else (),
            ) as subscription:
                honored = to_json(subscription.honored)
                state = {"state": "acknowledged", "notifications": honored}
                emit(options, ClientEvent("subscription", params=state, subscription=key))
                acknowledged.set_result(honored)
                async for event in subscription:
                    # The SDK's own wire form of the typed event, without a _meta of ours.
                    notification = event_to_notification(event, {})
                    params = to_json(notification.params) if notification.params else {}
                    params.pop("_meta", None)
                    emit(
                        options,
                        ClientEvent("notification", notification.method, params, subscription=key),
                    )
            ended = {"state": "ended", "reason": "result"}  # the server's graceful close
        except ListenNotSupportedError as exc:  # refused locally: nothing was sent
            if not acknowledged.done():
                acknowledged.set_exception(ClientError("unsupported", str(exc)))
            return
        except Exception as exc:
            if not acknowledged.done():
                error = to_client_error(exc)
                emit(
                    options,
                    ClientEvent(
                        "subscription", params={"state": "error", "message": error.message}
                    ),
                )
                acknowledged.set_exception(error)
                return
            message = (
                str(exc) if isinstance(exc, SubscriptionLost) else to_client_error(exc).message
            )
            ended = {"state": "ended", "reason": "closed", "message": message}
        emit(options, ClientEvent("subscription", params=ended, subscription=key))

    async def close(self) -> None:
        """End every subscription (bounded): leaving `async with` ends its stream."""
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            with anyio.CancelScope(shield=True):
                await asyncio.wait(tasks, timeout=_CANCEL_BOUND)


@contextlib.contextmanager
def deprecated_quietly() -> Iterator[None]:
    """The SDK warns that these 2025-era calls are deprecated in 2026-07-28; an application
    on a 2025 server calls them all the same, and a warning must not become a failure."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


def legacy_client() -> McpSdkClient:
    """`--mcp-client=harness.clients._sdk_mcp:legacy_client`: mode="legacy"."""
    return McpSdkClient(mode="legacy")


def modern_client() -> McpSdkClient:
    """`--mcp-client=harness.clients._sdk_mcp:modern_client`: mode="2026-07-28"."""
    return McpSdkClient(mode="2026-07-28")
