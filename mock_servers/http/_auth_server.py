"""The mock authorization server and protected resource (OAuth 2.1 for MCP).

One `AuthMock` per HTTP mock run whose script has an `auth` section. It answers:

- on the MCP server's origin: the protected resource metadata (RFC 9728) at the
  locations the script names, and the bearer check of the MCP endpoint (401 with a
  `WWW-Authenticate` challenge, 403 `insufficient_scope` for a step-up: per tool or per
  method, the methods a resource lets through unchecked recorded as "open"); with
  `legacy_2025_03_26`, the authorization server too (the 2025-03-26 arrangement);
- on an origin of its own (a second loopback port): the authorization server, with its
  metadata (RFC 8414, OpenID Connect Discovery; a tenant path inserted or appended),
  dynamic client registration (RFC 7591), client ID metadata documents, pre-registered
  clients, an authorization endpoint that approves at once with a 302 to the redirect
  URI, PKCE that accepts S256 only (RFC 7636), client authentication by
  client_secret_basic / client_secret_post / none, the `resource` parameter (RFC 8707),
  the `iss` authorization response parameter (RFC 9207) and refresh tokens.

Every request either origin sees is recorded as an `auth` transcript entry (besides its
`http_request` / `http_response`): `request`, `server` ("resource" or "authorization"),
`endpoint`, `outcome` ("ok" or an OAuth error code), and what a check needs to judge the
client: the query and form parameters, whether a bearer token came in a header, in the
query or in a form, and whether it was a token this mock issued (a token sent to the
authorization server, or one issued for another resource, is judged from this).
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import httpx

from mock_servers.engine import AuthSettings, PreRegisteredClient, Transcript
from mock_servers.http._wire import Exchange

__all__ = ["MISMATCHED_RESOURCE", "PRM_WELL_KNOWN", "AuthMock", "Challenge", "pkce_s256"]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
# The resource a mismatching metadata document names: not the MCP endpoint, so a client
# that validates it (RFC 9728 §3.3) stops there.
MISMATCHED_RESOURCE = "https://other-resource.invalid/mcp"
WRONG_ISSUER = "https://wrong-issuer.invalid"
# 2025-03-26 with metadata: the endpoints it names, elsewhere than the default ones, so a
# check tells a client that read the metadata from one that went to the defaults.
LEGACY_ENDPOINT_PREFIX = "/oauth"
LEGACY_DEFAULT_PATHS = ("/authorize", "/token", "/register")
# The second authorization server (`migrate_after`): the first's issuer with this path.
MIGRATED_TENANT = "/as2"
TOKEN_LIFETIME = 3600
CIMD_TIMEOUT = 5.0
_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")


def pkce_s256(verifier: str) -> str:
    """The S256 code challenge of `verifier` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Challenge:
    """The bearer check's refusal of an MCP request: status, the refusal rule
    ("unauthorized" 401, "insufficient-scope" 403, "gave-up" 410 after `give_up_after`
    step-up refusals), the OAuth outcome, why, headers."""

    status: int
    outcome: str
    reason: str
    headers: Mapping[str, str]
    scope: str | None = None
    """The challenge's `scope` parameter, when it has one."""
    needed: str | None = None
    """A 403's: the scope the request needs (the challenge may name more)."""

    @property
    def rule(self) -> str:
        return {401: "unauthorized", 410: "gave-up"}.get(self.status, "insufficient-scope")


@dataclass
class _Client:
    client_id: str
    secret: str | None
    method: str
    redirect_uris: tuple[str, ...]
    source: str  # "registered", "pre-registered", "metadata-document"
    server: int | None = None
    """The authorization server it registered with (None: known to every one)."""


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    resource: str | None
    scope: str
    used: bool = False


@dataclass
class _Token:
    client_id: str
    scope: frozenset[str]
    resource: str | None
    server: int = 0
    """The authorization server that issued it (0; 1 after a migration)."""
    uses: int = 0
    grant: int = 0
    """The token answer that issued it (1, 2, ...), recorded wherever the client uses it:
    a client that used it had that answer."""


@dataclass
class _Answer:
    status: int
    body: Any = None  # JSON value, or str (text/plain), or None
    headers: dict[str, str] = field(default_factory=dict)


def _is_loopback_host(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _canonical(url: str) -> str:
    """Scheme and host lower-cased, no fragment (RFC 8707 / MCP canonical server URI)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def _same_redirect(registered: str, given: str) -> bool:
    """Exact match, except that a loopback redirect URI may use any port (RFC 8252 §7.3)."""
    if registered == given:
        return True
    a, b = urlsplit(registered), urlsplit(given)
    return (
        a.scheme == b.scheme == "http"
        and _is_loopback_host(a.hostname)
        and a.hostname == b.hostname
        and a.path == b.path
        and a.query == b.query
    )


def _with_query(url: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def _request_methods(body: bytes) -> list[str]:
    """The methods of the JSON-RPC messages in a POST body ([] when it has none)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return []
    messages = parsed if isinstance(parsed, list) else [parsed]
    return [
        m["method"] for m in messages if isinstance(m, dict) and isinstance(m.get("method"), str)
    ]


def _bearer(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class AuthMock:
    """The authorization state of one mock run (see the module's docstring).

    `bind(resource_url, server_origin)` must be called once the ports are known (the
    runner does): `resource_url` is the MCP endpoint's URL, `server_origin` the origin
    of the authorization server (ignored in the 2025-03-26 arrangement, where it is the
    MCP server's origin).
    """

    def __init__(self, settings: AuthSettings, transcript: Transcript, mcp_path: str) -> None:
        self.settings = settings
        self.transcript = transcript
        self.mcp_path = mcp_path
        self.resource_url = ""
        self.resource_origin = ""
        self.server_origin = ""
        self.clients: dict[str, _Client] = {
            c.client_id: self._pre_registered(c) for c in settings.clients
        }
        self.codes: dict[str, _Code] = {}
        self.tokens: dict[str, _Token] = {}
        self.refresh_tokens: dict[str, _Token] = {}
        # Refresh tokens already redeemed: each is replaced by the one its answer issued
        # (rotation, OAuth 2.1 §4.3.1), so presenting one again is recorded as such.
        # The grant of the answer that replaced each (None: that refresh was refused).
        self.rotated_refresh_tokens: dict[str, int | None] = {}
        self.grants = 0  # token answers issued so far
        # The authorization server the resource metadata names: 0, then 1 once the
        # resource has migrated (`migrate_after`), whose issuer is the first's + "/as2".
        self.current_server = 0
        self.served_mcp_requests = 0
        self.served_tool_calls = 0
        self.step_up_refusals = 0  # 403 insufficient_scope answers so far (`give_up_after`)

    @staticmethod
    def _pre_registered(c: PreRegisteredClient) -> _Client:
        return _Client(
            c.client_id, c.client_secret, c.token_endpoint_auth_method, c.redirect_uris, "pre"
        )

    def bind(self, resource_url: str, server_origin: str) -> None:
        self.resource_url = resource_url
        parts = urlsplit(resource_url)
        self.resource_origin = f"{parts.scheme}://{parts.netloc}"
        self.server_origin = self.resource_origin if self.settings.legacy else server_origin

    # -- URLs ----------------------------------------------------------------------------

    @property
    def issuer(self) -> str:
        """The issuer of the authorization server the resource metadata names now."""
        return self.issuer_of(self.current_server)

    def issuer_of(self, server: int) -> str:
        if self.settings.legacy:
            return self.resource_origin
        return self.server_origin + self._tenant(server)

    def _tenant(self, server: int) -> str:
        return self.settings.tenant + (MIGRATED_TENANT if server else "")

    def _servers(self) -> range:
        moves = (self.settings.migrate_after, self.settings.migrate_after_calls)
        return range(1 if moves == (None, None) else 2)

    @property
    def resource(self) -> str:
        """The `resource` the metadata names (and the only audience tokens are issued for)."""
        return MISMATCHED_RESOURCE if self.settings.resource == "mismatch" else self.resource_url

    def prm_paths(self) -> list[str]:
        paths = {
            "path": PRM_WELL_KNOWN + self.mcp_path.rstrip("/"),
            "root": PRM_WELL_KNOWN,
            "custom": self.settings.prm_custom_path,
        }
        return [paths[where] for where in self.settings.prm_locations]

    def prm_url(self) -> str:
        """The metadata URL the 401 challenge names: the first location served."""
        return self.resource_origin + self.prm_paths()[0]

    def _metadata_paths(self, server: int = 0) -> dict[str, str]:
        """Metadata path -> document kind ("oauth" or "oidc"), on the server's origin."""
        if self.settings.legacy:
            return {OAUTH_WELL_KNOWN: "oauth"} if self.settings.legacy_metadata else {}
        tenant = self._tenant(server)
        where = {
            "oauth": (OAUTH_WELL_KNOWN + tenant, "oauth"),
            "oidc-inserted": (OIDC_WELL_KNOWN + tenant, "oidc"),
            "oidc-appended": (tenant + OIDC_WELL_KNOWN, "oidc"),
        }
        return dict(where[kind] for kind in self.settings.metadata)

    def _endpoint_paths(self, server: int = 0) -> dict[str, str]:
        s = self.settings
        legacy_base = LEGACY_ENDPOINT_PREFIX if s.legacy_metadata else ""
        base = legacy_base if s.legacy else self._tenant(server)
        paths = {"authorize": f"{base}/authorize", "token": f"{base}/token"}
        if self.settings.registration:
            paths["register"] = f"{base}/register"
        if not self.settings.legacy and any(m.startswith("oidc") for m in self.settings.metadata):
            paths["jwks"] = f"{base}/jwks"
        return paths

    def _iss_advertised(self) -> bool:
        """Whether the metadata says authorization responses carry iss (RFC 9207 §3)."""
        s = self.settings
        return s.iss != "absent" if s.iss_advertised is None else s.iss_advertised

    def server_metadata(self, kind: str = "oauth", server: int = 0) -> dict[str, Any]:
        """The authorization server's metadata document (RFC 8414 §2; OIDC adds three)."""
        s = self.settings
        paths = self._endpoint_paths(server)
        endpoints = {name: self.server_origin + p for name, p in paths.items()}
        doc: dict[str, Any] = {
            # A mismatching issuer is the script's deliberate fault (`metadata_issuer`).
            "issuer": WRONG_ISSUER if s.metadata_issuer == "mismatch" else self.issuer_of(server),
            "authorization_endpoint": endpoints["authorize"],
            "token_endpoint": endpoints["token"],
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code"]
            + ([] if s.refresh_tokens == "never" else ["refresh_token"]),
            "token_endpoint_auth_methods_supported": list(s.token_endpoint_auth_methods),
        }
        if "register" in endpoints:
            doc["registration_endpoint"] = endpoints["register"]
        if s.scopes_supported is not None:
            doc["scopes_supported"] = list(s.scopes_supported)
        if s.code_challenge_methods is not None:
            doc["code_challenge_methods_supported"] = list(s.code_challenge_methods)
        if self._iss_advertised():
            doc["authorization_response_iss_parameter_supported"] = True
        if s.client_id_metadata_documents:
            doc["client_id_metadata_document_supported"] = True
        if kind == "oidc":
            doc["jwks_uri"] = endpoints["jwks"]
            doc["subject_types_supported"] = ["public"]
            doc["id_token_signing_alg_values_supported"] = ["RS256"]
        return doc

    def resource_metadata(self) -> dict[str, Any]:
        """The protected resource metadata document (RFC 9728 §2)."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        }
        if self.settings.prm_scopes_supported is not None:
            doc["scopes_supported"] = list(self.settings.prm_scopes_supported)
        return doc

    # -- routing -------------------------------------------------------------------------

    def on_server_origin(self, ex: Exchange) -> bool:
        """Whether `ex` came to the authorization server's own port."""
        if self.settings.legacy or not self.server_origin:
            return False
        return ex.headers.get("host", "").lower() == urlsplit(self.server_origin).netloc.lower()

    async def serve(self, ex: Exchange) -> bool:
        """Answer `ex` if it is an authorization request (metadata, AS endpoints); True if
        it was answered. Requests to the MCP endpoint are the caller's (see `check`)."""
        if self.on_server_origin(ex):
            await self._answer(ex, "authorization", *await self._server_route(ex))
            return True
        if ex.path in self.prm_paths() and not self.settings.legacy:
            if ex.method != "GET":
                answer = _Answer(405, "Use GET", {"allow": "GET"})
                await self._answer(ex, "resource", "resource-metadata", answer, {})
                return True
            answer = _Answer(200, self.resource_metadata())
            # The resource it names: what a client must send as `resource` (RFC 8707).
            details: dict[str, Any] = {
                "resource": self.resource,
                "mcp_url": self.resource_url,
                "issuer": self.issuer,
            }
            if self.settings.prm_scopes_supported is not None:
                details["scopes_supported"] = list(self.settings.prm_scopes_supported)
            await self._answer(ex, "resource", "resource-metadata", answer, details)
            return True
        if ex.path.startswith("/.well-known/"):
            if self.settings.legacy and ex.path in self._metadata_paths():
                doc = self.server_metadata()
                details = self._metadata_details(doc)
                await self._answer(
                    ex, "authorization", "server-metadata", _Answer(200, doc), details
                )
            elif self.settings.legacy and ex.path == OAUTH_WELL_KNOWN:
                # The MCP origin is the authorization server, which has no metadata.
                answer = _Answer(404, "Not found")
                await self._answer(ex, "authorization", "server-metadata", answer, {})
            else:
                # Recorded, so a check can see the order a client probed in.
                await self._answer(ex, "resource", "well-known", _Answer(404, "Not found"), {})
            return True
        if self.settings.legacy and ex.path in self._endpoint_paths().values():
            await self._answer(ex, "authorization", *await self._server_route(ex))
            return True
        if self.settings.legacy and ex.path in LEGACY_DEFAULT_PATHS:
            # The metadata names other endpoints: recorded, so a check sees a client
            # that went to the defaults although the metadata was there.
            answer = _Answer(404, "Not found: this server's metadata names its endpoints")
            await self._answer(ex, "authorization", "default-endpoint", answer, {})
            return True
        return False

    def _route_server(self, path: str) -> int:
        """Which authorization server a path of the server's origin belongs to."""
        for server in self._servers():
            if (
                path in self._metadata_paths(server)
                or path in self._endpoint_paths(server).values()
            ):
                return server
        return 0

    async def _server_route(self, ex: Exchange) -> tuple[str, _Answer, dict[str, Any]]:
        server = self._route_server(ex.path)
        routed, answer, details = await self._server_endpoint(ex, server)
        if len(self._servers()) > 1:
            details["issuer"] = details.get("issuer", self.issuer_of(server))
        return routed, answer, details

    async def _server_endpoint(
        self, ex: Exchange, server: int
    ) -> tuple[str, _Answer, dict[str, Any]]:
        kinds = self._metadata_paths(server)
        if ex.path in kinds:
            if ex.method != "GET":
                return "server-metadata", _Answer(405, "Use GET", {"allow": "GET"}), {}
            doc = self.server_metadata(kinds[ex.path], server)
            return "server-metadata", _Answer(200, doc), self._metadata_details(doc)
        endpoint = {p: name for name, p in self._endpoint_paths(server).items()}.get(ex.path)
        if endpoint == "authorize" and ex.method in ("GET", "POST"):
            return ("authorize", *await self._authorize(ex, server))
        if endpoint == "token" and ex.method == "POST":
            return ("token", *self._token(ex, server))
        if endpoint == "register" and ex.method == "POST":
            return ("register", *self._register(ex, server))
        if endpoint == "jwks" and ex.method == "GET":
            return "jwks", _Answer(200, {"keys": []}), {}
        if endpoint is not None:
            return endpoint, _Answer(405, f"{ex.method} not allowed here"), {}
        name = "well-known" if ex.path.startswith("/.well-known/") else "unknown"
        return name, _Answer(404, "Not found"), {}

    def _metadata_details(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """What a check needs of a metadata document: its issuer (and whether it is not the
        one the well-known URL was formed from: the script's deliberate fault) and PKCE
        methods."""
        details = {
            "issuer": doc["issuer"],
            "code_challenge_methods_supported": doc.get("code_challenge_methods_supported"),
        }
        if self.settings.metadata_issuer == "mismatch":
            details["issuer_mismatch"] = True
        return details

    async def _answer(
        self,
        ex: Exchange,
        server: str,
        endpoint: str,
        answer: _Answer,
        details: dict[str, Any],
    ) -> None:
        query = dict(parse_qsl(ex.query, keep_blank_values=True))
        bearer = _bearer(ex.headers)
        entry: dict[str, Any] = {
            "request": ex.number,
            "server": server,
            "endpoint": endpoint,
            "method": ex.method,
            "path": ex.path,
            "status": answer.status,
            "outcome": details.pop("outcome", "ok" if answer.status < 400 else "error"),
        }
        if query:
            entry["query"] = query
        if bearer is not None:
            entry["bearer_header"] = True
            entry["issued_token"] = bearer in self.tokens
            if bearer in self.tokens and len(self._servers()) > 1:
                entry["token_issuer"] = self.issuer_of(self.tokens[bearer].server)
        entry.update(details)
        self.transcript.record("auth", **entry)
        if isinstance(answer.body, str):
            headers = {"content-type": "text/plain; charset=utf-8", **answer.headers}
            await ex.respond(answer.status, headers, answer.body.encode("utf-8"))
        elif answer.body is None:
            await ex.respond(answer.status, answer.headers, b"")
        else:
            body = json.dumps(answer.body).encode("utf-8")
            headers = {"content-type": "application/json", **answer.headers}
            await ex.respond(answer.status, headers, body)

    # -- the protected resource ----------------------------------------------------------

    def check(self, ex: Exchange, tool_names: list[str]) -> Challenge | None:
        """The bearer check of an MCP request (None: let it through). `tool_names`: the
        tools the request's body calls (for a step-up)."""
        s = self.settings
        methods = _request_methods(ex.body)
        if s.step_up is not None and methods and all(s.step_up.is_open(m) for m in methods):
            # Served unchecked (the step-up's open methods): no token is looked at.
            self.transcript.record(
                "auth",
                request=ex.number,
                server="resource",
                endpoint="mcp",
                method=ex.method,
                path=ex.path,
                open=True,
                status=200,
                outcome="open",
            )
            return None
        query = dict(parse_qsl(ex.query, keep_blank_values=True))
        in_query = "access_token" in query
        token = _bearer(ex.headers)
        record: dict[str, Any] = {
            "request": ex.number,
            "server": "resource",
            "endpoint": "mcp",
            "method": ex.method,
            "path": ex.path,
            "bearer_header": token is not None,
        }
        if query:
            record["query"] = query
        if in_query:
            # A token in the URL ends up in logs (OAuth 2.1 §5.2 / MCP: MUST NOT).
            record["token_in_query"] = True
            record["issued_token_in_query"] = query["access_token"] in self.tokens
        granted = self.tokens.get(token) if token is not None else None
        if token is not None:
            record["issued_token"] = granted is not None
        if granted is not None:
            record["token_grant"] = granted.grant
        if granted is not None and len(self._servers()) > 1:
            record["token_issuer"] = self.issuer_of(granted.server)
        challenge: Challenge | None
        if token is None:
            challenge = self._challenge(401, "no-token", "no bearer token in Authorization")
        elif granted is None:
            challenge = self._challenge(
                401, "invalid_token", "a bearer token this server never issued", error=True
            )
        elif granted.resource is not None and _canonical(granted.resource) not in self._audiences():
            challenge = self._challenge(
                401, "invalid_token", f"a token issued for {granted.resource}", error=True
            )
        elif granted.server != self.current_server:
            # The resource now trusts another authorization server only.
            challenge = self._challenge(
                401,
                "invalid_token",
                f"a token of {self.issuer_of(granted.server)}, no longer this resource's "
                "authorization server",
                error=True,
            )
        elif s.token_uses is not None and granted.uses >= s.token_uses:
            challenge = self._challenge(401, "invalid_token", "the token expired", error=True)
        else:
            challenge = self._step_up(granted, tool_names, methods)
            if challenge is None:
                granted.uses += 1
        record["status"] = 200 if challenge is None else challenge.status
        record["outcome"] = "ok" if challenge is None else challenge.outcome
        if challenge is not None:
            record["reason"] = challenge.reason
            if challenge.outcome == "insufficient_scope" and s.step_up is not None:
                record["required_scope"] = challenge.needed or s.step_up.scope
            if challenge.scope is not None:
                record["challenge_scope"] = challenge.scope
            if self.settings.prm_in_www_authenticate and not s.legacy:
                record["resource_metadata"] = self.prm_url()
        self.transcript.record("auth", **record)
        if challenge is None:
            self._count_served(tool_calls=len(tool_names))
        return challenge

    def _count_served(self, tool_calls: int) -> None:
        """After `migrate_after` requests (or `migrate_after_calls` tool calls) served, the
        resource moves to the second authorization server (its metadata names it; the
        first's tokens are refused)."""
        self.served_mcp_requests += 1
        calls_before = self.served_tool_calls
        self.served_tool_calls += tool_calls
        after_calls = self.settings.migrate_after_calls
        if self.settings.migrate_after == self.served_mcp_requests or (
            after_calls is not None and calls_before < after_calls <= self.served_tool_calls
        ):
            self.current_server = 1
            self.transcript.record(
                "auth",
                server="resource",
                endpoint="migration",
                former_issuer=self.issuer_of(0),
                issuer=self.issuer_of(1),
            )

    def _step_up(
        self, granted: _Token, tool_names: list[str], methods: list[str]
    ) -> Challenge | None:
        step = self.settings.step_up
        if step is None:
            return None
        wanted = [step.scope] if set(tool_names) & set(step.tools) else []
        wanted += [n for n in map(step.needed, methods) if n is not None]
        needed = {scope for w in wanted for scope in w.split()}
        if not needed or (not step.always and needed <= granted.scope):
            return None
        if step.give_up_after is not None and self.step_up_refusals >= step.give_up_after:
            # The official retry-limit server's end of the test: no challenge, no 403 more.
            return Challenge(
                410,
                "test_complete",
                f"the client came back after {self.step_up_refusals} 403 insufficient_scope "
                "answers: the mock gives up (as the official runner's server does)",
                {},
            )
        self.step_up_refusals += 1
        named = " ".join(sorted(granted.scope | needed if step.union else needed))
        what = " ".join(sorted(needed))
        challenge = self._challenge(
            403,
            "insufficient_scope",
            f"the request needs the scope {what!r}",
            error=True,
            scope=named,
        )
        return replace(challenge, needed=what)

    def _challenge(
        self,
        status: int,
        outcome: str,
        reason: str,
        *,
        error: bool = False,
        scope: str | None = None,
    ) -> Challenge:
        params: list[str] = []
        if error:
            params.append(f'error="{outcome}"')
            params.append(f'error_description="{reason}"')
        scope = scope if scope is not None else self.settings.challenge_scope
        if scope:
            params.append(f'scope="{scope}"')
        if self.settings.prm_in_www_authenticate and not self.settings.legacy:
            params.append(f'resource_metadata="{self.prm_url()}"')
        value = "Bearer" + (" " + ", ".join(params) if params else "")
        return Challenge(status, outcome, reason, {"www-authenticate": value}, scope or None)

    # -- the authorization server --------------------------------------------------------

    def _foreign_issuer(self, client: _Client | None, server: int) -> str | None:
        """The issuer of the other authorization server `client` registered with, if it
        did (a client id is one server's: RFC 7591 issues it for that server alone)."""
        if client is None or client.server is None or client.server == server:
            return None
        return self.issuer_of(client.server)

    async def _client(
        self, client_id: str, server: int = 0
    ) -> tuple[_Client | None, dict[str, Any]]:
        known = self.clients.get(client_id)
        foreign = self._foreign_issuer(known, server)
        if foreign is not None:
            return None, {"client_of_issuer": foreign}
        if known is not None or not self.settings.client_id_metadata_documents:
            return known, {}
        parts = urlsplit(client_id)
        if parts.scheme not in ("https", "http") or parts.path in ("", "/"):
            return None, {}  # not a document URL: an unknown client
        copy = self.settings.metadata_document_copies.get(client_id)
        if copy is not None:
            # A document the script holds a copy of: read from it, never fetched.
            details = {"metadata_document": client_id, "metadata_document_copy": True}
            return self._client_from_document(client_id, copy, details)
        if not _is_loopback_host(parts.hostname):
            # The mock reaches loopback only: a test serves the document there.
            error = "not fetched: the mock fetches metadata documents from loopback URLs only"
            return None, {"metadata_document": client_id, "metadata_document_error": error}
        return await self._fetch_metadata_document(client_id)

    async def _fetch_metadata_document(self, url: str) -> tuple[_Client | None, dict[str, Any]]:
        """Fetch a client ID metadata document (bounded in time, loopback or https)."""
        details: dict[str, Any] = {"metadata_document": url}
        try:
            async with httpx.AsyncClient(timeout=CIMD_TIMEOUT, follow_redirects=False) as http:
                response = await http.get(url, headers={"accept": "application/json"})
            doc = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            details["metadata_document_error"] = f"{type(exc).__name__}: {exc}"
            return None, details
        if response.status_code != 200 or not isinstance(doc, dict):
            details["metadata_document_error"] = f"status {response.status_code}, not a JSON object"
            return None, details
        return self._client_from_document(url, doc, details)

    def _client_from_document(
        self, url: str, doc: Mapping[str, Any], details: dict[str, Any]
    ) -> tuple[_Client | None, dict[str, Any]]:
        """The client a metadata document describes, once checked (None: refused)."""
        if doc.get("client_id") != url:
            details["metadata_document_error"] = "its client_id is not the document's URL"
            return None, details
        uris = doc.get("redirect_uris")
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            details["metadata_document_error"] = "redirect_uris is not a list of strings"
            return None, details
        method = doc.get("token_endpoint_auth_method", "none")
        client = _Client(url, None, str(method), tuple(uris), "metadata-document")
        self.clients[url] = client
        return client, details

    async def _authorize(self, ex: Exchange, server: int = 0) -> tuple[_Answer, dict[str, Any]]:
        params = dict(parse_qsl(ex.query, keep_blank_values=True))
        if ex.method == "POST":
            params.update(parse_qsl(ex.body.decode("utf-8", "replace"), keep_blank_values=True))
        details: dict[str, Any] = {"params": params}
        client, found = await self._client(params.get("client_id", ""), server)
        details.update(found)
        if client is None:
            # Never redirect to an unverified URI (RFC 6749 §4.1.2.1): answer here.
            details["outcome"] = "invalid_client"
            return _Answer(
                400,
                {
                    "error": "invalid_request",
                    "error_description": (
                        f"unknown client_id {params.get('client_id')!r}: register first"
                    ),
                },
            ), details
        redirect = params.get("redirect_uri")
        if redirect is None and len(client.redirect_uris) == 1:
            redirect = client.redirect_uris[0]
        if redirect is None or not any(_same_redirect(r, redirect) for r in client.redirect_uris):
            details["outcome"] = "invalid_redirect_uri"
            return _Answer(
                400,
                {
                    "error": "invalid_request",
                    "error_description": (
                        f"redirect_uri {redirect!r} is not registered for this client"
                    ),
                },
            ), details
        error = self._authorize_error(params)
        back: dict[str, str] = {}
        if error is not None:
            details["outcome"] = error[0]
            back = {"error": error[0], "error_description": error[1]}
        else:
            code = secrets.token_urlsafe(24)
            self.codes[code] = _Code(
                client.client_id,
                params.get("redirect_uri", ""),
                params["code_challenge"],
                params.get("resource"),
                params.get("scope", ""),
            )
            back["code"] = code
            details["code"] = code
        # How the client came by its client_id: "pre" (pre-registered), "registered"
        # (RFC 7591), "metadata-document".
        details["client_source"] = client.source
        if "state" in params:
            back["state"] = params["state"]
        if self.settings.iss == "correct":
            back["iss"] = self.issuer_of(server)
        elif self.settings.iss == "wrong":
            back["iss"] = WRONG_ISSUER
        elif self.settings.iss == "normalized":
            # Equal to the issuer only once normalised: RFC 9207 §2.4 compares strings.
            back["iss"] = self.issuer_of(server) + "/"
        if "iss" in back:
            details["iss"] = back["iss"]
            details["iss_mismatch"] = back["iss"] != self.issuer_of(server)
        details["iss_advertised"] = self._iss_advertised()
        return _Answer(302, None, {"location": _with_query(redirect, back)}), details

    def _authorize_error(self, params: Mapping[str, str]) -> tuple[str, str] | None:
        if params.get("response_type") != "code":
            return "unsupported_response_type", "response_type must be code"
        if not params.get("code_challenge"):
            return "invalid_request", "PKCE is required: send code_challenge (S256)"
        method = params.get("code_challenge_method", "plain")
        if method != "S256":
            return "invalid_request", f"code_challenge_method {method!r}: only S256 is accepted"
        problem = self._resource_problem(params.get("resource"))
        if problem is not None:
            return "invalid_target", problem
        unknown = self._unknown_scopes(params.get("scope", ""))
        if unknown:
            return "invalid_scope", f"unknown scope {' '.join(unknown)}"
        return None

    def _resource_problem(self, resource: str | None) -> str | None:
        if resource is None:
            return None  # RFC 8707 lets it be absent; the checks judge its absence
        if _canonical(resource) not in self._audiences():
            return f"resource {resource!r} is not {self.resource!r}"
        return None

    def _audiences(self) -> set[str]:
        """What a token may be issued for: the metadata's resource, and the MCP endpoint
        (with a mismatching metadata, a client that wrongly went on still gets a token,
        so that a check sees it use one)."""
        return {_canonical(self.resource), _canonical(self.resource_url)}

    def _unknown_scopes(self, scope: str) -> list[str]:
        supported = self.settings.scopes_supported
        if supported is None:
            return []
        return [s for s in scope.split() if s not in supported]

    def _authenticate(
        self, ex: Exchange, form: Mapping[str, str], details: dict[str, Any], server: int
    ) -> tuple[_Client | None, str, str | None]:
        """The client of a token request: (client, method used, error text)."""
        header = ex.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
            except ValueError:
                return None, "client_secret_basic", "the Basic credentials are not base64"
            raw_id, _, raw_secret = decoded.partition(":")
            client_id, secret, method = unquote(raw_id), unquote(raw_secret), "client_secret_basic"
        elif "client_secret" in form:
            client_id, secret, method = (
                form.get("client_id", ""),
                form["client_secret"],
                ("client_secret_post"),
            )
        else:
            client_id, secret, method = form.get("client_id", ""), None, "none"
        client = self.clients.get(client_id)
        foreign = self._foreign_issuer(client, server)
        if foreign is not None:
            details["client_of_issuer"] = foreign
            return None, method, f"client_id {client_id!r} is {foreign}'s"
        if client is None:
            return None, method, f"unknown client_id {client_id!r}"
        # What the client registered with, for a check to compare with what it used.
        details["registered_auth"] = client.method
        if method != client.method:
            return (
                None,
                method,
                (f"the client authenticated with {method}, registered with {client.method}"),
            )
        if client.secret is not None and not secrets.compare_digest(secret or "", client.secret):
            return None, method, "wrong client secret"
        return client, method, None

    def _token(self, ex: Exchange, server: int = 0) -> tuple[_Answer, dict[str, Any]]:
        form = dict(parse_qsl(ex.body.decode("utf-8", "replace"), keep_blank_values=True))
        shown = {k: v for k, v in form.items() if k != "client_secret"}
        details: dict[str, Any] = {"params": shown}
        if not ex.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            return self._token_error(
                details, "invalid_request", "the body must be application/x-www-form-urlencoded"
            )
        held = self.refresh_tokens.get(form.get("refresh_token", ""))
        if held is not None and held.server != server:
            # Recorded whatever comes of the request: one server's token sent to another.
            details["refresh_token_issuer"] = self.issuer_of(held.server)
        client, method, problem = self._authenticate(ex, form, details, server)
        details["client_auth"] = method
        if client is None:
            answer, details = self._token_error(details, "invalid_client", problem or "", 401)
            if method == "client_secret_basic":
                answer.headers["www-authenticate"] = 'Basic realm="token"'
            return answer, details
        grant = form.get("grant_type")
        if grant == "authorization_code":
            return self._redeem(client, form, details, server)
        if grant == "refresh_token" and self.settings.refresh_tokens != "never":
            return self._refresh(client, form, details, server)
        return self._token_error(details, "unsupported_grant_type", f"grant_type {grant!r}")

    @staticmethod
    def _token_error(
        details: dict[str, Any], error: str, text: str, status: int = 400
    ) -> tuple[_Answer, dict[str, Any]]:
        details["outcome"] = error
        body = {"error": error, "error_description": text}
        return _Answer(status, body, {"cache-control": "no-store"}), details

    def _redeem(
        self, client: _Client, form: Mapping[str, str], details: dict[str, Any], server: int
    ) -> tuple[_Answer, dict[str, Any]]:
        code = self.codes.get(form.get("code", ""))
        if code is None or code.used or code.client_id != client.client_id:
            return self._token_error(details, "invalid_grant", "unknown, used or foreign code")
        code.used = True  # one use, even when this request fails (RFC 6749 §4.1.2)
        if code.redirect_uri and form.get("redirect_uri") != code.redirect_uri:
            return self._token_error(details, "invalid_grant", "redirect_uri differs")
        verifier = form.get("code_verifier", "")
        if not _VERIFIER.match(verifier) or pkce_s256(verifier) != code.challenge:
            return self._token_error(details, "invalid_grant", "PKCE verification failed")
        resource = form.get("resource", code.resource)
        problem = self._resource_problem(resource)
        if (
            problem is None
            and code.resource is not None
            and resource is not None
            and _canonical(resource) != _canonical(code.resource)
        ):
            problem = "resource differs from the authorization request's"
        if problem is not None:
            return self._token_error(details, "invalid_target", problem)
        return self._issue(client, code.scope, resource, details, server)

    def _refresh(
        self, client: _Client, form: Mapping[str, str], details: dict[str, Any], server: int
    ) -> tuple[_Answer, dict[str, Any]]:
        presented = form.get("refresh_token", "")
        held = self.refresh_tokens.get(presented)
        if held is not None and held.server != server:
            # Another authorization server's refresh token: refused, and left valid there.
            return self._token_error(details, "invalid_grant", "another server's refresh token")
        old = self.refresh_tokens.pop(presented, None)
        if old is not None:
            self.rotated_refresh_tokens[presented] = None
            details["refresh_token"] = "current"
            details["refresh_grant"] = old.grant
        elif presented in self.rotated_refresh_tokens:
            details["refresh_token"] = "rotated"
            details["replaced_by"] = self.rotated_refresh_tokens[presented]
        else:
            details["refresh_token"] = "unknown"
        if old is None or old.client_id != client.client_id:
            return self._token_error(details, "invalid_grant", "unknown or rotated refresh token")
        scope = form.get("scope")
        if scope is not None and not set(scope.split()) <= old.scope:
            return self._token_error(details, "invalid_scope", "more scope than first granted")
        resource = form.get("resource", old.resource)
        problem = self._resource_problem(resource)
        if problem is not None:
            return self._token_error(details, "invalid_target", problem)
        granted = scope if scope is not None else " ".join(sorted(old.scope))
        issued = self._issue(client, granted, resource, details, server)
        self.rotated_refresh_tokens[presented] = details["issued"]["grant"]
        return issued

    def _issue(
        self,
        client: _Client,
        scope: str,
        resource: str | None,
        details: dict[str, Any],
        server: int,
    ) -> tuple[_Answer, dict[str, Any]]:
        scopes = frozenset(scope.split())
        token = secrets.token_urlsafe(32)
        self.grants += 1
        grant = self.grants
        self.tokens[token] = _Token(client.client_id, scopes, resource, server, grant=grant)
        body: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": TOKEN_LIFETIME,
        }
        if scope:
            body["scope"] = scope
        mode = self.settings.refresh_tokens
        if mode == "always" or (mode == "offline_access" and "offline_access" in scopes):
            refresh = secrets.token_urlsafe(32)
            self.refresh_tokens[refresh] = _Token(
                client.client_id, scopes, resource, server, grant=grant
            )
            body["refresh_token"] = refresh
        details["issued"] = {
            "scope": scope,
            "resource": resource,
            "refresh": "refresh_token" in body,
            "grant": grant,
        }
        return _Answer(200, body, {"cache-control": "no-store", "pragma": "no-cache"}), details

    def _register(self, ex: Exchange, server: int = 0) -> tuple[_Answer, dict[str, Any]]:
        details: dict[str, Any] = {}
        try:
            meta = json.loads(ex.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            meta = None
        if not isinstance(meta, dict):
            return self._registration_error(details, "invalid_client_metadata", "not a JSON object")
        details["metadata"] = meta
        uris = meta.get("redirect_uris")
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            return self._registration_error(
                details, "invalid_redirect_uri", "redirect_uris must be a non-empty list of URLs"
            )
        for uri in uris:
            parts = urlsplit(uri)
            if (
                not parts.scheme
                or parts.fragment
                or (parts.scheme == "http" and not _is_loopback_host(parts.hostname))
            ):
                return self._registration_error(
                    details,
                    "invalid_redirect_uri",
                    f"{uri!r}: https, loopback http or a private scheme, without a fragment",
                )
        # RFC 7591 §2: an absent method means client_secret_basic.
        method = meta.get("token_endpoint_auth_method", "client_secret_basic")
        supported = self.settings.token_endpoint_auth_methods
        if method not in supported and self.settings.registration_assigns_method:
            details["assigned_method"] = supported[0]  # said in the answer (RFC 7591 §3.2.1)
            method = supported[0]
        if method not in supported:
            return self._registration_error(
                details,
                "invalid_client_metadata",
                f"token_endpoint_auth_method {method!r} is not supported",
            )
        grants = meta.get("grant_types", ["authorization_code"])
        if not isinstance(grants, list) or "authorization_code" not in grants:
            return self._registration_error(
                details, "invalid_client_metadata", "grant_types must include authorization_code"
            )
        client_id = f"client-{secrets.token_hex(8)}"
        secret = None if method == "none" else secrets.token_urlsafe(24)
        self.clients[client_id] = _Client(
            client_id, secret, str(method), tuple(uris), "registered", server
        )
        body: dict[str, Any] = {
            **meta,
            "client_id": client_id,
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": method,
            "grant_types": grants,
            "response_types": meta.get("response_types", ["code"]),
        }
        if secret is not None:
            body["client_secret"] = secret
            body["client_secret_expires_at"] = 0
        details["client_id"] = client_id
        return _Answer(201, body, {"cache-control": "no-store"}), details

    @staticmethod
    def _registration_error(
        details: dict[str, Any], error: str, text: str
    ) -> tuple[_Answer, dict[str, Any]]:
        details["outcome"] = error
        return _Answer(400, {"error": error, "error_description": text}), details
