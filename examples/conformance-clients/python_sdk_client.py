"""A conformance client in the official runner's convention, on the official Python SDK (`mcp`).

The official runner (`@modelcontextprotocol/conformance`) and `mcp-testbench run
--conformance-client` start it the same way, once per client scenario:

    /bin/sh -c "python examples/conformance-clients/python_sdk_client.py <server URL>"

with the scenario's name in MCP_CONFORMANCE_SCENARIO and the revision in
MCP_CONFORMANCE_PROTOCOL_VERSION; it does what that scenario's server expects and exits 0.

`--defect NAME` (before the URL) makes a variant with one defect, to show that the runner
and mcp-testbench fail the same scenario for it:

    string-arguments     tools_call: calls add_numbers with "5" and "3" (strings, not numbers)
    decline-elicitation  elicitation-sep1034-client-defaults: declines instead of accepting
    no-reconnect         sse-retry: never reconnects after the server closes the call's
                         stream (plain HTTP, no SDK: the SDK always reconnects)
    early-reconnect      sse-retry: reconnects at once, ignoring the 500 ms `retry` field
                         (plain HTTP, no SDK)
    no-client-version    initialize: clientInfo without a version
    no-version-header    sse-retry: does it all right (plain HTTP), but never sends the
                         MCP-Protocol-Version header: the runner's checks pass, the suite's
                         http.protocol-version-header fails (a finding only the wire shows)
    altered-request-state  sep-2322-client-request-state: retries test_mrtr_echo_state by
                         hand with the requestState it was given, plus one character
    no-retry             request-metadata: pins 2026-07-28 instead of probing, and gives
                         up when its one request is refused with -32022 (no retry)
    call-invalid-tool    http-invalid-tool-headers: also calls invalid_number_header, a
                         tool the SDK left out of its listing for its invalid x-mcp-header
    deref-schema         json-schema-ref-no-deref: fetches each network `$ref` of the listed
                         tools' input schemas (what a client must not do on its own)
    root-prm-first       auth/*: asks the root resource metadata location first (on a
                         server whose metadata is path-based)
    no-resource-parameter  auth/*: leaves the RFC 8707 `resource` parameter out of the
                         authorization and token requests
    secret-in-body       auth/*: sends its client secret in the token request's form
                         (client_secret_post) even when registered for client_secret_basic
    no-scope             auth/*: leaves the scope the SDK chose (from the 401 or the
                         resource metadata) out of the authorization request
    ignore-iss           auth/iss-*: hands the SDK the issuer it expects as the RFC 9207
                         `iss`, whatever the authorization response carried, or did not
    reuse-client         auth/authorization-server-migration: keeps the client the first
                         authorization server registered for the one the resource moved to
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import time
from collections.abc import Awaitable
from typing import Any

SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    # 2026-07-28 (`with_sdk_2026`)
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
)
MODERN_SCENARIOS = SCENARIOS[4:]
DEFECTS = (
    "string-arguments",
    "decline-elicitation",
    "no-reconnect",
    "early-reconnect",
    "no-client-version",
    "no-version-header",
    "altered-request-state",
    "no-retry",
    "call-invalid-tool",
    "deref-schema",
)


def log(text: str) -> None:
    # stdout and stderr are kept by the runner (stdout.txt, stderr.txt) and by mcp-testbench.
    print(f"python-sdk-client: {text}", file=sys.stderr, flush=True)


def mode_for(revision: str) -> str:
    """The SDK's connect mode for the revision the scenario runs at."""
    return "2026-07-28" if revision >= "2026-07-28" else "legacy"


def defaults_of(schema: dict[str, Any]) -> dict[str, Any]:
    """Every property's default: what a form left untouched returns (SEP-1034)."""
    properties = schema.get("properties") or {}
    return {name: p["default"] for name, p in properties.items() if "default" in p}


async def with_sdk(scenario: str, url: str, revision: str, defect: str | None) -> None:
    import mcp_types
    from mcp import Client

    async def elicitation(context: Any, params: Any) -> mcp_types.ElicitResult:
        if defect == "decline-elicitation":
            return mcp_types.ElicitResult(action="decline")
        schema = params.requested_schema if hasattr(params, "requested_schema") else {}
        content = defaults_of(schema if isinstance(schema, dict) else {})
        log(f"elicitation: accepting with the defaults {json.dumps(content)}")
        return mcp_types.ElicitResult(action="accept", content=content)

    version = "" if defect == "no-client-version" else "1.0.0"
    info = mcp_types.Implementation(name="python-sdk-conformance-client", version=version)
    async with Client(
        url,
        mode=mode_for(revision),  # type: ignore[arg-type]
        elicitation_callback=elicitation,
        client_info=info,
    ) as client:
        if scenario == "initialize":
            log(f"initialized: {client.protocol_version}")
        elif scenario == "tools_call":
            tools = await client.list_tools()
            log(f"tools: {[tool.name for tool in tools.tools]}")
            arguments: dict[str, Any] = {"a": 5, "b": 3}
            if defect == "string-arguments":
                arguments = {"a": "5", "b": "3"}
            result = await client.call_tool("add_numbers", arguments)
            log(f"add_numbers: {result.model_dump(mode='json', exclude_none=True)}")
        elif scenario == "elicitation-sep1034-client-defaults":
            result = await client.call_tool("test_client_elicitation_defaults", {})
            log(f"elicitation tool: {result.model_dump(mode='json', exclude_none=True)}")
        elif scenario == "sse-retry":
            result = await client.call_tool("test_reconnection", {})
            log(f"test_reconnection: {result.model_dump(mode='json', exclude_none=True)}")


# -- the 2026-07-28 scenarios ------------------------------------------------------------------


async def with_sdk_2026(scenario: str, url: str, defect: str | None) -> bool:
    """The scenarios of the stateless revision, on the SDK's 2026-07-28 client; False when
    a call failed (each call is made whatever became of the one before: the server judges
    every one of them)."""
    import mcp_types
    from mcp import Client

    async def elicitation(context: Any, params: Any) -> mcp_types.ElicitResult:
        # An MRTR inputRequest (sep-2322): confirm.
        log("elicitation: accepting")
        return mcp_types.ElicitResult(action="accept", content={"confirmed": True})

    async def sampling(context: Any, params: Any) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text=""), model="none"
        )

    async def roots(context: Any) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(roots=[])

    info = mcp_types.Implementation(name="python-sdk-conformance-client", version="1.0.0")
    if scenario == "request-metadata" and defect == "no-retry":
        async with Client(url, mode="2026-07-28", client_info=info) as client:
            return await logged("tools/list", client.list_tools())
    if scenario == "request-metadata":
        # `auto` probes server/discover: refused with -32022 once, retried at the version
        # the server names; every request carries the capabilities of the callbacks.
        async with Client(
            url,
            mode="auto",
            client_info=info,
            elicitation_callback=elicitation,
            sampling_callback=sampling,
            list_roots_callback=roots,
        ) as client:
            log(f"negotiated {client.protocol_version}")
            tools = await client.list_tools()
            log(f"tools: {[tool.name for tool in tools.tools]}")
        return True
    failed = False
    async with Client(
        url, mode="2026-07-28", client_info=info, elicitation_callback=elicitation
    ) as client:
        if scenario == "sep-2322-client-request-state":
            if defect == "altered-request-state":
                failed |= not await altered_request_state(client)
            for name in (
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ):
                if defect == "altered-request-state" and name == "test_mrtr_echo_state":
                    continue
                try:
                    result = await client.call_tool(name, {})
                except Exception as error:  # the SDK's refusal is logged; the rest goes on
                    log(f"{name}: the SDK failed: {type(error).__name__}: {error}")
                    failed = True
                    continue
                log(f"{name}: {result.model_dump(mode='json', exclude_none=True)}")
        elif scenario == "http-standard-headers":
            # One request of each kind, so the server sees each method's headers.
            failed |= not await logged("tools/list", client.list_tools())
            for tool_name in ("test_headers", "my-hyphenated-tool"):
                failed |= not await logged(tool_name, client.call_tool(tool_name, {}))
            failed |= not await logged("prompts/list", client.list_prompts())
            failed |= not await logged("prompts/get", client.get_prompt("test_prompt"))
            listed = await client.list_resources()
            for resource in listed.resources:
                uri = str(resource.uri)
                failed |= not await logged(uri, client.read_resource(uri))
        elif scenario == "http-custom-headers":
            # The SDK mirrors the x-mcp-header arguments of a tool it has listed.
            await client.list_tools()
            for call in json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))["toolCalls"]:
                name, arguments = call["name"], call["arguments"]
                failed |= not await logged(name, client.call_tool(name, arguments))
        elif scenario == "http-invalid-tool-headers":
            # The SDK leaves out a listed tool whose x-mcp-header is invalid: call what is left.
            tools = await client.list_tools()
            log(f"tools kept: {[tool.name for tool in tools.tools]}")
            for tool in tools.tools:
                arguments = {p: "us-west1" for p in tool.input_schema.get("required", [])}
                failed |= not await logged(tool.name, client.call_tool(tool.name, arguments))
            if defect == "call-invalid-tool":
                call = client.call_tool("invalid_number_header", {"score": 1.5})
                failed |= not await logged("invalid_number_header", call)
        elif scenario == "json-schema-ref-no-deref":
            # List the tools and leave their schemas' `$ref`s alone: the SDK resolves none.
            tools = await client.list_tools()
            log(f"tools: {[tool.name for tool in tools.tools]}")
            if defect == "deref-schema":
                failed |= not await fetch_network_refs([t.input_schema for t in tools.tools])
    return not failed


def network_refs(schema: Any) -> list[str]:
    """The `$ref` values anywhere in a JSON schema that are http(s) URLs."""
    if isinstance(schema, list):
        return [ref for item in schema for ref in network_refs(item)]
    if not isinstance(schema, dict):
        return []
    found = [v for k, v in schema.items() if k == "$ref" and str(v).startswith(("http:", "https:"))]
    return found + [ref for value in schema.values() for ref in network_refs(value)]


async def fetch_network_refs(schemas: list[Any]) -> bool:
    """The deref-schema defect: GET every network `$ref`, as a resolver would."""
    import httpx

    async with httpx.AsyncClient(timeout=10) as http:
        for ref in network_refs(schemas):
            try:
                response = await http.get(ref)
            except httpx.HTTPError as error:
                log(f"fetching {ref}: failed: {type(error).__name__}: {error}")
                return False
            log(f"fetched {ref}: {response.status_code} {response.text[:200]}")
    return True


async def altered_request_state(client: Any) -> bool:
    """test_mrtr_echo_state's round trip by hand, the state changed on the way back."""
    import mcp_types

    first = await client.session.call_tool("test_mrtr_echo_state", {}, allow_input_required=True)
    if not isinstance(first, mcp_types.InputRequiredResult):
        log(f"test_mrtr_echo_state: no input_required: {first}")
        return False
    confirmed = mcp_types.ElicitResult(action="accept", content={"confirmed": True})
    responses = {key: confirmed for key in first.input_requests or {}}
    retry = client.session.call_tool(
        "test_mrtr_echo_state",
        {},
        input_responses=responses,
        request_state=f"{first.request_state}x",
        allow_input_required=True,
    )
    return await logged("test_mrtr_echo_state (altered state)", retry)


async def logged(label: str, call: Awaitable[Any]) -> bool:
    """Await one call, log its result or its failure; False when it failed."""
    try:
        result = await call
    except Exception as error:  # logged: the next call is still made
        log(f"{label}: failed: {type(error).__name__}: {error}")
        return False
    log(f"{label}: {result.model_dump(mode='json', exclude_none=True)}")
    return True


def raw_sse_retry(url: str, revision: str, defect: str) -> None:
    """sse-retry by hand (the SDK always reconnects, and waits `retry`): initialize, call
    the tool, read its stream to the server's close, then reconnect at once, never, or
    after the retry (without the version header)."""
    import httpx

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with httpx.Client(timeout=10) as http:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": {"name": "raw-conformance-client", "version": "1.0.0"},
            },
        }
        answer = http.post(url, json=initialize, headers=headers)
        session = answer.headers.get("mcp-session-id")
        if session:
            headers["mcp-session-id"] = session
        if defect != "no-version-header":
            headers["mcp-protocol-version"] = revision
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, json=initialized, headers=headers)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "test_reconnection", "arguments": {}},
        }
        last_id = None
        with http.stream("POST", url, json=call, headers=headers) as stream:
            for line in stream.iter_lines():
                if line.startswith("id:"):
                    last_id = line[3:].strip()
        log(f"the call's stream ended (last event id {last_id!r})")
        if defect == "no-reconnect":
            return
        if defect == "no-version-header":
            time.sleep(0.6)  # the retry field said 500 ms
        get_headers = {**headers, "accept": "text/event-stream"}
        if last_id is not None:
            get_headers["last-event-id"] = last_id
        with http.stream("GET", url, headers=get_headers) as stream:
            deadline = time.monotonic() + 5
            for line in stream.iter_lines():
                if '"result"' in line or time.monotonic() > deadline:
                    log(f"reconnected: {line}")
                    break


# -- the authorization scenarios ---------------------------------------------------------------

AUTH_SCENARIOS = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/pre-registration",
    "auth/basic-cimd",
    # The SDK steps up on a 403 insufficient_scope (the union of the scopes, SEP-2350), once
    # per request: a scope that never suffices ends the request with the 403.
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    # 2026-07-28 only
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
)
AUTH_DEFECTS = (
    "root-prm-first",
    "no-resource-parameter",
    "secret-in-body",
    "no-scope",
    "ignore-iss",
    "reuse-client",
)
#: Where the user's browser would be sent back: nothing listens there, the client never
#: follows the redirect (it reads the code from the Location header).
REDIRECT_URI = "http://localhost:3030/callback"
#: The client ID metadata document URL auth/basic-cimd wants as the client ID.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def without(url: str, parameter: str) -> str:
    """`url` with that query parameter left out."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != parameter]
    return urlunsplit(parts._replace(query=urlencode(kept)))


async def with_sdk_auth(scenario: str, url: str, revision: str, defect: str | None) -> None:
    """An authorization scenario on the SDK's OAuthClientProvider (discovery, registration,
    PKCE, the resource parameter, the token), headless: the authorization endpoint's
    redirect is read, not followed, and its query handed back as the callback's. At
    2026-07-28 the SDK's client speaks the stateless revision behind the same provider."""
    from urllib.parse import parse_qs, urlsplit

    import httpx2
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
        OAuthToken,
    )

    class MemoryStorage:
        def __init__(self) -> None:
            self.tokens: OAuthToken | None = None
            self.client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            if defect == "reuse-client":
                # The SDK's binding of the credentials to their issuer (SEP-2352) undone:
                # it then shows them to any authorization server.
                client_info.issuer = None
            self.client = client_info

    redirected: list[str] = []

    async def open_authorization_url(authorization_url: str) -> None:
        if defect == "no-resource-parameter":
            authorization_url = without(authorization_url, "resource")
        if defect == "no-scope":
            authorization_url = without(authorization_url, "scope")
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            answer = await http.get(authorization_url)
        location = answer.headers.get("location")
        if location is None:
            raise RuntimeError(f"the authorization endpoint answered {answer.status_code}")
        log(f"authorization: redirected to {location}")
        redirected.append(location)

    async def callback() -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(redirected.pop()).query).items()}
        if "code" not in query:
            raise RuntimeError(f"the authorization was refused: {query}")
        iss = query.get("iss")
        metadata = provider.context.oauth_metadata
        if defect == "ignore-iss" and metadata is not None:
            # Whatever came (or did not), the SDK is shown the issuer it expects.
            iss = str(metadata.issuer)
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=iss)

    class DefectiveTokenRequests(httpx2.AsyncBaseTransport):
        """The token request's defect: `no-resource-parameter` leaves the form's
        `resource` out (the SDK always sends it); `secret-in-body` moves HTTP Basic
        credentials into the form (client_secret_post, whatever was registered)."""

        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            from urllib.parse import parse_qsl, unquote, urlencode

            body = request.content.decode("utf-8", errors="replace")
            if request.method != "POST" or "grant_type=" not in body:
                return await self.inner.handle_async_request(request)
            form = parse_qsl(body, keep_blank_values=True)
            headers = {k: v for k, v in request.headers.items() if k != "content-length"}
            if defect == "no-resource-parameter":
                form = [(k, v) for k, v in form if k != "resource"]
            basic = headers.get("authorization", "")
            if defect == "secret-in-body" and basic.startswith("Basic "):
                del headers["authorization"]
                decoded = base64.b64decode(basic[6:]).decode("utf-8")
                client_id, _, secret = decoded.partition(":")
                form = [(k, v) for k, v in form if k not in ("client_id", "client_secret")]
                form += [("client_id", unquote(client_id)), ("client_secret", unquote(secret))]
            content = urlencode(form).encode()
            changed = httpx2.Request(request.method, request.url, headers=headers, content=content)
            return await self.inner.handle_async_request(changed)

    if defect == "root-prm-first":
        # Before anything else, the root location of the resource metadata: on a server
        # with a path-based one, a client must ask that first.
        root = urlsplit(url)._replace(path="/.well-known/oauth-protected-resource", query="")
        async with httpx2.AsyncClient() as http:
            answer = await http.get(root.geturl())
        log(f"root resource metadata first: {answer.status_code}")

    storage = MemoryStorage()
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
    if "client_id" in context:
        # Pre-registered credentials (auth/pre-registration): stored as the client's own,
        # for HTTP Basic, the method a client with a secret uses unless told otherwise.
        storage.client = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic",
            issuer=context.get("issuer"),
        )
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk-conformance-client",
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        ),
        storage=storage,
        redirect_handler=open_authorization_url,
        callback_handler=callback,
        # Used as the client ID where the server supports such documents (the SDK's rule).
        client_metadata_url=CLIENT_METADATA_URL if scenario == "auth/basic-cimd" else None,
    )
    defective = defect in ("no-resource-parameter", "secret-in-body")
    transport = DefectiveTokenRequests() if defective else None
    async with (
        httpx2.AsyncClient(auth=provider, transport=transport, timeout=30) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode_for(revision),  # type: ignore[arg-type]
        ) as client,
    ):
        tools = await client.list_tools()
        log(f"tools: {[tool.name for tool in tools.tools]}")
        result = await client.call_tool("test-tool", {})
        log(f"test-tool: {result.model_dump(mode='json', exclude_none=True)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--defect", choices=DEFECTS + AUTH_DEFECTS, help="the one defect of this variant"
    )
    parser.add_argument("url", help="the scenario's server URL (the runner's last argument)")
    args = parser.parse_args(argv)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    log(f"scenario {scenario!r} at {revision}, server {args.url}, defect {args.defect}")
    if scenario in AUTH_SCENARIOS:
        asyncio.run(with_sdk_auth(scenario, args.url, revision, args.defect))
        return 0
    if scenario not in SCENARIOS:
        # The runner runs every scenario of a set (those this client does not do too):
        # say so, and fail it.
        log(f"this client does not implement the scenario {scenario!r}")
        return 1
    if scenario == "sse-retry" and args.defect in (
        "no-reconnect",
        "early-reconnect",
        "no-version-header",
    ):
        raw_sse_retry(args.url, revision, args.defect)
    elif scenario in MODERN_SCENARIOS:
        return 0 if asyncio.run(with_sdk_2026(scenario, args.url, args.defect)) else 1
    else:
        asyncio.run(with_sdk(scenario, args.url, revision, args.defect))
    return 0


if __name__ == "__main__":
    sys.exit(main())
