"""The fastmcp 4.x client (`fastmcp.Client`) under the McpClient contract.

    pytest --mcp-client=harness.clients._sdk_fastmcp:FastMcpClient

Like the `mcp` adapter (harness/clients/_sdk_mcp.py, whose holder task and error
mapping it shares), it calls the API a fastmcp user calls, with fastmcp's defaults, and
only translates: it never corrects what fastmcp does.

Choices, and why:
- `call_tool`, not `call_tool_mcp`: it is the API fastmcp documents first and users
  call. It raises `ToolError` for an `isError: true` result (`raise_on_error=True` by
  default); the adapter reports that as a ClientError of kind "tool" with the error text,
  as driver protocol v1 provides for clients that surface isError as an exception, and the
  checks judge whether the failure still reached the caller with its content.
- `list_tools`, `list_resources`, `list_prompts` page by themselves in fastmcp (they
  follow nextCursor), so the adapter calls each once; `read_resource` returns the
  contents list, surfaced as `{"contents": [...]}`.
- `StdioTransport(..., keep_alive=False)`: fastmcp keeps the server process alive after
  the client closes by default, which would leak one process per scenario.
- fastmcp's default handlers stay: its log handler, and its default progress handler,
  which makes it ask for progress (`_meta.progressToken`) on every tools/call.
- Authorization (`auth`): fastmcp's OAuth helper (`fastmcp.client.auth.OAuth`) on its
  Streamable HTTP transport, given the client name, the redirect URI as its callback host
  and port, and pre-registered credentials when there are any. Its `redirect_handler`
  opens a browser and its `callback_handler` runs a callback server on the redirect URI's
  port; a subclass replaces just these two with the headless browser's
  (harness/clients/_sdk_mcp.py, `HeadlessBrowser`), so that fastmcp's configuration of the
  SDK's OAuthClientProvider, and the SDK's flow beneath it, are what is judged.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal
from urllib.parse import urlsplit

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
from harness.clients._sdk_mcp import (
    SESSION_FEATURES,
    HeadlessBrowser,
    Mode,
    SdkHolder,
    checked_mode,
    deprecated_quietly,
    distribution_version,
    emit,
    era_features,
    require,
    sampling_result,
    to_client_error,
    to_json,
)

if TYPE_CHECKING:
    import fastmcp
    import mcp_types
    from fastmcp.client.auth import OAuth
    from fastmcp.client.transports import ClientTransport
    from mcp.client.session import IncomingMessage

__all__ = ["FastMcpClient"]

_NAME = "fastmcp"


class FastMcpClient:
    """An `McpClient` backed by `fastmcp.Client`.

    `mode` is passed to `fastmcp.Client` ("auto" is its default). fastmcp itself treats
    "auto" as "legacy" on its SSE transport, which cannot serve the 2026 era.
    """

    #: Each instance keeps its SDK client, session and callbacks to itself, and the SDK
    #: keeps no session state in module globals (only caches of its own types), so the
    #: harness may run several scenarios with it at once, each on its own thread and
    #: event loop (`--mcp-concurrency`).
    concurrent_instances: ClassVar[bool] = True

    def __init__(self, *, mode: Mode = "auto") -> None:
        require("fastmcp", "fastmcp", "fastmcp.client", "fastmcp.client.transports")
        self._mode: Mode = checked_mode(mode)
        self._holder = SdkHolder(f"fastmcp.Client ({mode})")
        self._client: fastmcp.Client[Any] | None = None
        self._options = ConnectOptions()
        self._state: Literal["new", "open", "closed"] = "new"
        self._roots: list[mcp_types.Root] | None = None  # set_roots changes them

    @property
    def name(self) -> str:
        return _NAME

    @property
    def version(self) -> str:
        return distribution_version("fastmcp")

    @property
    def supports(self) -> frozenset[str]:
        # fastmcp runs on the mcp SDK's session, so it speaks what mcp speaks. From its
        # code: StdioTransport, StreamableHttpTransport, SSETransport; sampling,
        # elicitation and roots handlers; log and progress handlers; a cancelled caller
        # cancels the SDK request. ping and HTTP+SSE exist in the handshake era only.
        features = set(SESSION_FEATURES)  # "auth": its OAuth helper (`_oauth`)
        # Driver protocol 1.1: fastmcp.Client has set_logging_level, complete,
        # list_resource_templates, set_roots and send_roots_list_changed. It has no
        # resources/subscribe, no listen and no 2025-11-25 task call of its own (only the
        # SDK session beneath it, which would judge mcp, not fastmcp); its optional
        # fastmcp-tasks package speaks the 2026 tasks extension, another protocol.
        features |= {"set_log_level", "complete", "list_resource_templates", "set_roots"}
        return frozenset(features) | era_features(self._mode)

    # Connecting ---------------------------------------------------------------------

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        if self._state != "new":
            raise ClientError("other", "connect() can be called once per client")
        self._state = "open"
        self._options = options
        from fastmcp import Client

        # As for mcp: options.protocol_version is not forced; fastmcp negotiates as the
        # SDK does under `mode`, the only say its users have.
        try:
            client: fastmcp.Client[Any] = Client(
                self._transport(target, options.authorization),
                mode=self._mode,
                timeout=options.timeout,
                init_timeout=options.timeout,
                message_handler=self._on_message,
                **self._handlers(options.handlers),
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

    @staticmethod
    def _transport(target: Target, authorization: Authorization | None) -> ClientTransport:
        from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport

        if isinstance(target, StdioTarget):
            command, *args = target.command
            return StdioTransport(
                command=command, args=args, env=dict(target.env) or None, keep_alive=False
            )
        if isinstance(target, SseLegacyTarget):
            return SSETransport(target.url, headers=dict(target.headers) or None)
        assert isinstance(target, HttpTarget)
        headers = dict(target.headers) or None
        if authorization is None:
            return StreamableHttpTransport(target.url, headers=headers)
        with warnings.catch_warnings():
            # Its in-memory token store (the default) warns that tokens do not outlive
            # the process: so it is meant here, one connection per client.
            warnings.filterwarnings("ignore", "Using in-memory token storage", UserWarning)
            return StreamableHttpTransport(target.url, headers=headers, auth=_oauth(authorization))

    def _handlers(self, handlers: Handlers) -> dict[str, Any]:
        """Handlers only for what the harness gave answers for: fastmcp declares a
        capability exactly when its handler is set."""
        import mcp_types

        chosen: dict[str, Any] = {}
        sampled = sampling_result(handlers)
        if sampled is not None:

            async def sampling(
                messages: list[mcp_types.SamplingMessage],
                params: mcp_types.CreateMessageRequestParams,
                context: Any,
            ) -> mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools:
                return sampled

            chosen["sampling_handler"] = sampling
        if handlers.elicitation is not None:
            elicited = mcp_types.ElicitResult.model_validate(dict(handlers.elicitation))

            async def elicitation(
                message: str, response_type: Any, params: Any, context: Any
            ) -> mcp_types.ElicitResult:
                return elicited

            chosen["elicitation_handler"] = elicitation
        if handlers.roots is not None:
            # A handler, not a list: fastmcp's set_roots() only reaches a session started
            # later, so an application whose roots change answers from its own state.
            self._roots = [mcp_types.Root.model_validate(dict(root)) for root in handlers.roots]

            def roots(context: Any) -> list[mcp_types.Root]:
                return list(self._roots or [])

            chosen["roots"] = roots
        return chosen

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            text = f"fastmcp reported: {type(message).__name__}: {message}"
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

    def _open(self) -> fastmcp.Client[Any]:
        if self._state != "open" or self._client is None:
            raise ClientError("other", f"the client is {self._state}, not connected")
        return self._client

    async def list_tools(self) -> dict[str, Any]:
        client = self._open()
        tools = await self._holder.call(client.list_tools)
        return {"tools": [to_json(tool) for tool in tools]}

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        from fastmcp.exceptions import ToolError

        client = self._open()
        options = self._options

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            params: dict[str, Any] = {"progress": progress}
            if total is not None:
                params["total"] = total
            if message is not None:
                params["message"] = message
            emit(options, ClientEvent("notification", "notifications/progress", params))

        async def call() -> fastmcp.client.client.CallToolResult:
            try:
                return await client.call_tool(
                    name,
                    dict(arguments) if arguments is not None else None,
                    timeout=timeout,
                    progress_handler=on_progress if progress else None,
                )
            except ToolError as exc:  # fastmcp's way of surfacing `isError: true`
                raise ClientError("tool", str(exc)) from exc

        result = await self._holder.call(call)
        surfaced: dict[str, Any] = {
            "content": [to_json(block) for block in result.content],
            "isError": result.is_error,
        }
        if result.structured_content is not None:
            surfaced["structuredContent"] = result.structured_content
        if result.meta is not None:
            surfaced["_meta"] = result.meta
        return surfaced

    async def list_resources(self) -> dict[str, Any]:
        client = self._open()
        resources = await self._holder.call(client.list_resources)
        return {"resources": [to_json(resource) for resource in resources]}

    async def read_resource(self, uri: str) -> dict[str, Any]:
        client = self._open()
        contents = await self._holder.call(lambda: client.read_resource(uri))
        return {"contents": [to_json(content) for content in contents]}

    async def list_prompts(self) -> dict[str, Any]:
        client = self._open()
        prompts = await self._holder.call(client.list_prompts)
        return {"prompts": [to_json(prompt) for prompt in prompts]}

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        client = self._open()
        chosen = dict(arguments) if arguments is not None else None
        result: mcp_types.GetPromptResult = await self._holder.call(
            lambda: client.get_prompt(name, chosen)
        )
        return to_json(result)

    async def ping(self) -> dict[str, Any]:
        client = self._open()
        await self._holder.call(client.ping)
        return {}

    # Driver protocol 1.1 ------------------------------------------------------------

    async def set_log_level(self, level: str) -> dict[str, Any]:
        client = self._open()
        with deprecated_quietly():
            await self._holder.call(lambda: client.set_logging_level(level))  # type: ignore[arg-type]
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
        completion = await self._holder.call(
            lambda: client.complete(
                reference, chosen, dict(arguments) if isinstance(arguments, dict) else None
            )
        )
        return {"completion": to_json(completion)}

    async def list_resource_templates(self) -> dict[str, Any]:
        client = self._open()
        templates = await self._holder.call(client.list_resource_templates)
        return {"resourceTemplates": [to_json(template) for template in templates]}

    async def set_roots(self, roots: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        import mcp_types

        client = self._open()
        if self._roots is None:
            raise ClientError("unsupported", "connect gave the client no roots")
        self._roots = [mcp_types.Root.model_validate(dict(root)) for root in roots]
        with deprecated_quietly():
            await self._holder.call(client.send_roots_list_changed)
        return {}

    async def close(self) -> None:
        if self._state == "closed":
            return
        self._state = "closed"
        await self._holder.close()


def _oauth(authorization: Authorization) -> OAuth:
    """fastmcp's OAuth helper as an application configures it, its browser headless.

    The helper registers `http://<callback_host>:<callback_port>/callback`, so the redirect
    URI is given as its host and port. A pre-registered client with a secret is declared
    for client_secret_basic (RFC 7591 §2's default): the helper's own default for one is
    client_secret_post, where the application must say what its registration is.
    """
    from fastmcp.client.auth import OAuth
    from mcp.shared.auth import AuthorizationCodeResult

    redirect = urlsplit(authorization.redirect_uri)
    if redirect.scheme != "http" or redirect.path != "/callback" or redirect.port is None:
        raise ClientError(
            "unsupported",
            f"fastmcp's OAuth helper registers http://host:port/callback only, not "
            f"{authorization.redirect_uri!r}",
        )
    browser = HeadlessBrowser()

    class HeadlessOAuth(OAuth):
        async def redirect_handler(self, authorization_url: str) -> None:
            await browser.redirect_handler(authorization_url)

        async def callback_handler(self) -> AuthorizationCodeResult:
            return await browser.callback_handler()

    method = (
        {"token_endpoint_auth_method": "client_secret_basic"}
        if authorization.client_secret is not None
        else None
    )
    return HeadlessOAuth(
        client_name=authorization.client_name,
        callback_host=redirect.hostname or "",
        callback_port=redirect.port,
        additional_client_metadata=method,
        client_id=authorization.client_id,
        client_secret=authorization.client_secret,
    )
