"""The client contract: what the harness asks of a client under test.

Users import it from `harness.clients`; docs/clients.md documents it for them (the methods,
what each returns, the errors, the optional operations, concurrency, an example), and
must say what these docstrings say.

It mirrors driver protocol 1.1 (docs/driver-protocol.md) operation for operation, so a
Python factory and a driver in another language are judged by the same checks. A factory
(`--mcp-client=module:attr`) returns an object with these methods; a driver binding
implements them over a subprocess. The 1.1 operations (`McpClientExtras`) are optional: the
harness calls one only when `supports` names it (OPERATIONS), so a v1 client needs none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "FEATURES",
    "OPERATIONS",
    "Authorization",
    "ClientError",
    "ClientEvent",
    "ConnectOptions",
    "ErrorKind",
    "Handlers",
    "HttpTarget",
    "McpClient",
    "McpClientExtras",
    "SseLegacyTarget",
    "StdioTarget",
    "Target",
]

#: Feature names a client may declare in `supports` (driver protocol v1), besides the
#: revisions it speaks ("2024-11-05" ... "2026-07-28"). `auth`: it completes an OAuth 2.1
#: authorization headless with `ConnectOptions.authorization` (driver protocol 1.1).
FEATURES = frozenset(
    {
        "stdio",
        "http",
        "sse-legacy",
        "tools",
        "resources",
        "prompts",
        "sampling",
        "elicitation",
        "roots",
        "ping",
        "cancel",
        "progress",
        "logging",
        "auth",
    }
)

#: Driver protocol 1.1 operations a client may name in `supports`; never assumed (an empty
#: `supports` does not imply them). `tasks` covers task-augmented call_tool and the
#: get_task / task_result / cancel_task operations; `subscribe_resource` covers unsubscribing.
#: `listen_routing` is a promise about `listen`: the client holds several listens at once
#: and names, on each event, the listen it surfaced it under (`ClientEvent.subscription`).
OPERATIONS = frozenset(
    {
        "set_log_level",
        "subscribe_resource",
        "listen",
        "listen_routing",
        "complete",
        "list_resource_templates",
        "set_roots",
        "tasks",
    }
)

ErrorKind = Literal[
    "protocol", "transport", "timeout", "unsupported", "tool", "other", "hang", "crash"
]


class ClientError(Exception):
    """A failure the client surfaced to its caller.

    `kind` says what failed: `protocol` (the server answered with a JSON-RPC error; `code`
    is its code), `transport` (connection, HTTP status, process exit), `timeout`,
    `unsupported`, `tool` (the client turned an `isError` tool result into an exception;
    `message` carries the content), or `other`. Two kinds are the harness's own, never a
    client's report: `hang` (no answer within the harness's bound) and `crash` (the client
    or its driver died, or broke the contract); checks never read them as the client
    having reported a problem.
    """

    def __init__(self, kind: ErrorKind, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.code = code

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "code": self.code, "message": self.message}


@dataclass(frozen=True)
class StdioTarget:
    """Spawn `command` (argv, no shell) and speak MCP on its stdin/stdout."""

    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    type: Literal["stdio"] = "stdio"


@dataclass(frozen=True)
class HttpTarget:
    """Streamable HTTP (or the stateless 2026-07-28 HTTP) at `url`."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    type: Literal["http"] = "http"


@dataclass(frozen=True)
class SseLegacyTarget:
    """The 2024-11-05 HTTP+SSE transport: GET `url` for the event stream."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    type: Literal["sse-legacy"] = "sse-legacy"


Target = StdioTarget | HttpTarget | SseLegacyTarget


@dataclass(frozen=True)
class Handlers:
    """Canned answers for requests the server sends to the client.

    `sampling` is a CreateMessageResult, `elicitation` an ElicitResult, `roots` a list
    of Root objects. None means the harness gives no answer for that feature: a client
    that declares it anyway answers as it sees fit.
    """

    sampling: Mapping[str, Any] | None = None
    elicitation: Mapping[str, Any] | None = None
    roots: tuple[Mapping[str, Any], ...] | None = None


@dataclass(frozen=True)
class ClientEvent:
    """Something the client surfaced to its application: a notification, a log line, or
    (2026-07-28 `listen`) a change of a subscription's state: `params` holds `state`
    (`acknowledged`, `ended`, `error`) and `notifications`, `reason` or `message`.

    `subscription` (`listen_routing`): the `subscription` key of the `listen` call whose
    subscription the client surfaced this notification or state under; None when the
    client surfaced it outside any subscription (or does not say). A driver reports a
    key the harness never gave as a string that says so."""

    event: Literal["notification", "log", "subscription"]
    method: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""
    subscription: int | str | None = None


@dataclass(frozen=True)
class Authorization:
    """What a client needs to authorize with an MCP server's authorization server
    without a user (docs/driver-protocol.md, "Headless authorization").

    The browser step is done headless: the authorization endpoint of the harness's mock
    approves at once with a redirect to `redirect_uri`, so the client (or its driver)
    fetches the authorization URL without following the redirect and reads the code,
    state and iss from its `Location`. Nothing needs to listen at `redirect_uri`.
    """

    client_name: str
    """The client_name to register with (RFC 7591)."""
    redirect_uri: str
    """The redirect URI to register and to send in the authorization request."""
    client_id: str | None = None
    """Pre-registered credentials: use these instead of registering (None: register)."""
    client_secret: str | None = None
    """The pre-registered client's secret, for client_secret_basic (RFC 7591 §2's default
    method; None: a public client, method none)."""


@dataclass(frozen=True)
class ConnectOptions:
    protocol_version: str | None = None
    """The revision the client should prefer (None: its own choice)."""
    handlers: Handlers = field(default_factory=Handlers)
    timeout: float = 10.0
    """Seconds the client may take for connecting and for each request."""
    on_event: Callable[[ClientEvent], None] | None = None
    authorization: Authorization | None = None
    """Given to a client that declares `auth` when the server is behind OAuth 2.1."""


@runtime_checkable
class McpClient(Protocol):
    """A client under test. Every method may raise ClientError; results are plain JSON."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def supports(self) -> frozenset[str]:
        """Features (FEATURES) and revisions the client implements."""
        ...

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        """Connect (and initialize, where the revision has a handshake).

        Returns `{"protocolVersion": ..., "serverInfo": {...}}` as the client saw them.
        """
        ...

    async def list_tools(self) -> dict[str, Any]:
        """`{"tools": [...]}`: every tool the client surfaces, all pages followed."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        """The CallToolResult as surfaced: content, structuredContent, isError.

        Cancelling the task that awaits this call is how the harness asks the client to
        cancel the request (driver protocol: the `cancel` command).
        """
        ...

    async def list_resources(self) -> dict[str, Any]: ...

    async def read_resource(self, uri: str) -> dict[str, Any]: ...

    async def list_prompts(self) -> dict[str, Any]: ...

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> dict[str, Any]: ...

    async def ping(self) -> dict[str, Any]: ...

    async def close(self) -> None:
        """End the session and release everything (processes, connections)."""
        ...


@runtime_checkable
class McpClientExtras(Protocol):
    """The driver protocol 1.1 operations. A client implements those it names in
    `supports` (OPERATIONS); each may raise ClientError, `unsupported` when the client
    refuses locally (say, the server did not declare the capability)."""

    async def set_log_level(self, level: str) -> dict[str, Any]:
        """logging/setLevel; `{}`."""
        ...

    async def subscribe_resource(self, uri: str) -> dict[str, Any]:
        """resources/subscribe; `{}`. Updates then arrive as notification events."""
        ...

    async def unsubscribe_resource(self, uri: str) -> dict[str, Any]: ...

    async def listen(
        self, notifications: Mapping[str, Any], *, subscription: int | None = None
    ) -> dict[str, Any]:
        """2026-07-28 subscriptions/listen with this filter; returns once acknowledged:
        `{"notifications": {...}}`. The subscription lives until close().

        `subscription` is given only to a client that names `listen_routing`: a key of
        the harness's, which every event the client surfaces under this subscription
        carries as `ClientEvent.subscription` (several listens may be open at once)."""
        ...

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """completion/complete; the CompleteResult."""
        ...

    async def list_resource_templates(self) -> dict[str, Any]:
        """`{"resourceTemplates": [...]}`, all pages."""
        ...

    async def set_roots(self, roots: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The client's roots change to `roots` (and it says so, if it declared listChanged)."""
        ...

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """A task-augmented tools/call (driver protocol: `call_tool` with `task`): the
        CreateTaskResult, or the final CallToolResult if the client waits itself."""
        ...

    async def get_task(self, task_id: str) -> dict[str, Any]: ...

    async def task_result(self, task_id: str) -> dict[str, Any]: ...

    async def cancel_task(self, task_id: str) -> dict[str, Any]: ...
