"""The `auth` section of a script: how the mock protects its MCP endpoint with OAuth 2.1.

The section is checked by the script schema (`schemas/script-v1.schema.json`, `$defs/auth`)
before it gets here, so this module only turns it into typed settings with the defaults
of docs/scripts.md ("Authorization"). Every default is the conformant choice; each
member that departs from it makes one variant a client must cope with (or refuse).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "AUTH_METHODS",
    "METADATA_DOCUMENTS",
    "PRM_LOCATIONS",
    "AuthSettings",
    "PreRegisteredClient",
    "StepUp",
    "auth_settings",
]

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
# Where the authorization server's metadata is served, for an issuer with a path (a
# tenant) "/t": RFC 8414 §3.1 inserts the well-known segment before the path; OpenID
# Connect Discovery appends it (and MCP clients also try it inserted).
METADATA_DOCUMENTS = ("oauth", "oidc-inserted", "oidc-appended")
PRM_LOCATIONS = ("path", "root", "custom")

IssMode = Literal["correct", "absent", "wrong", "normalized"]
RefreshMode = Literal["always", "offline_access", "never"]


@dataclass(frozen=True)
class PreRegisteredClient:
    client_id: str
    client_secret: str | None
    token_endpoint_auth_method: str
    redirect_uris: tuple[str, ...]


@dataclass(frozen=True)
class StepUp:
    """A tools/call of one of `tools` needs `scope`, and a request of a method in `methods`
    the scope named there: without it, 403 insufficient_scope. `always`: every such
    request is refused, whatever the token (a client must stop retrying)."""

    tools: tuple[str, ...] = ()
    scope: str = ""
    always: bool = False
    methods: Mapping[str, str] = field(default_factory=dict)
    """The scope each JSON-RPC method needs; "*": every method not named (nor open)."""
    open_methods: tuple[str, ...] = ()
    """Methods served without a bearer check (a name ending in "/*": every method under
    it), as a resource that lets the lifecycle through may."""
    union: bool = True
    """The 403 names the scopes the token has with the one needed; False: the needed one
    alone (the client must then keep what it was granted: the union is its work)."""
    give_up_after: int | None = None
    """After this many 403 step-up refusals, a request that would get another is answered
    410 `test_complete` instead, as the official runner's retry-limit server ends a client's
    loop (None: 403 for ever)."""

    def needed(self, method: str) -> str | None:
        """The scope a request of `method` needs by `methods` (None: none)."""
        return self.methods.get(method, self.methods.get("*"))

    def is_open(self, method: str) -> bool:
        return any(
            method == m or (m.endswith("/*") and method.startswith(m[:-1]))
            for m in self.open_methods
        )


@dataclass(frozen=True)
class AuthSettings:
    # The protected resource (the MCP endpoint) and its metadata (RFC 9728).
    prm_locations: tuple[str, ...] = ("path", "root")
    prm_custom_path: str = "/custom/oauth-protected-resource.json"
    prm_in_www_authenticate: bool = True
    prm_scopes_supported: tuple[str, ...] | None = None
    resource: Literal["match", "mismatch"] = "match"
    challenge_scope: str | None = None
    step_up: StepUp | None = None
    token_uses: int | None = None
    # After this many MCP requests served, the resource trusts a second authorization
    # server only (its metadata names it; the first's tokens get 401 invalid_token).
    migrate_after: int | None = None
    # The same move after this many tools/call requests served: the application's own
    # requests, one after another, where the MCP requests a client makes on its own (a
    # standalone GET stream opened while the first call goes out) would make the moment
    # of the move a race between two of its requests.
    migrate_after_calls: int | None = None
    # The authorization server.
    tenant: str = ""
    metadata: tuple[str, ...] = ("oauth",)
    scopes_supported: tuple[str, ...] | None = None
    code_challenge_methods: tuple[str, ...] | None = ("S256",)
    token_endpoint_auth_methods: tuple[str, ...] = AUTH_METHODS
    registration: bool = True
    # A registration asking for an unsupported method gets the first supported one.
    registration_assigns_method: bool = False
    client_id_metadata_documents: bool = False
    # Client ID metadata documents by URL, read from here instead of fetched (a document
    # on a host the mock cannot reach).
    metadata_document_copies: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    iss: IssMode = "correct"
    # Whether the metadata advertises the iss parameter (RFC 9207 §3); None: unless absent.
    # Set apart from `iss`, it makes the two deliberate mismatches a client must refuse: an
    # advertised iss left out, and an unadvertised iss that names another issuer.
    iss_advertised: bool | None = None
    # "mismatch": the metadata's issuer is not the one its well-known URL is formed from,
    # a deliberate fault a client must refuse (RFC 8414 §3.3).
    metadata_issuer: Literal["match", "mismatch"] = "match"
    refresh_tokens: RefreshMode = "always"
    clients: tuple[PreRegisteredClient, ...] = field(default_factory=tuple)
    # 2025-03-26: no resource metadata; the MCP server's origin is the authorization
    # server, with its metadata at the root (legacy_metadata) or the default endpoints.
    legacy: bool = False
    legacy_metadata: bool = True

    @property
    def own_origin(self) -> bool:
        """Whether the authorization server listens on a port of its own."""
        return not self.legacy


def _strings(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


def auth_settings(raw: Mapping[str, Any]) -> AuthSettings:
    """The settings of a schema-valid `auth` section."""
    prm: Mapping[str, Any] = raw.get("protected_resource", {})
    server: Mapping[str, Any] = raw.get("authorization_server", {})
    legacy: Mapping[str, Any] | None = raw.get("legacy_2025_03_26")
    step: Mapping[str, Any] | None = raw.get("step_up")
    clients: Sequence[Mapping[str, Any]] = raw.get("clients", [])
    defaults = AuthSettings()
    return AuthSettings(
        prm_locations=tuple(prm.get("locations", defaults.prm_locations)),
        prm_custom_path=str(prm.get("custom_path", defaults.prm_custom_path)),
        prm_in_www_authenticate=bool(
            prm.get("in_www_authenticate", defaults.prm_in_www_authenticate)
        ),
        prm_scopes_supported=_strings(prm.get("scopes_supported")),
        resource=prm.get("resource", defaults.resource),
        challenge_scope=raw.get("challenge_scope"),
        step_up=None
        if step is None
        else StepUp(
            tuple(step.get("tools", ())),
            str(step.get("scope", "")),
            bool(step.get("always", False)),
            methods={str(k): str(v) for k, v in step.get("methods", {}).items()},
            open_methods=tuple(step.get("open_methods", ())),
            union=bool(step.get("union", True)),
            give_up_after=step.get("give_up_after"),
        ),
        token_uses=raw.get("token_uses"),
        migrate_after=raw.get("migrate_after"),
        migrate_after_calls=raw.get("migrate_after_calls"),
        tenant=str(server.get("tenant", "")).rstrip("/"),
        metadata=tuple(server.get("metadata", defaults.metadata)),
        scopes_supported=_strings(server.get("scopes_supported")),
        code_challenge_methods=_strings(
            server.get("code_challenge_methods", list(defaults.code_challenge_methods or ()))
        ),
        token_endpoint_auth_methods=tuple(
            server.get("token_endpoint_auth_methods", defaults.token_endpoint_auth_methods)
        ),
        registration=bool(server.get("registration", defaults.registration)),
        registration_assigns_method=bool(server.get("registration_assigns_method", False)),
        client_id_metadata_documents=bool(server.get("client_id_metadata_documents", False)),
        metadata_document_copies=dict(server.get("metadata_document_copies", {})),
        iss=server.get("iss", defaults.iss),
        iss_advertised=server.get("iss_advertised"),
        metadata_issuer=server.get("metadata_issuer", defaults.metadata_issuer),
        refresh_tokens=server.get("refresh_tokens", defaults.refresh_tokens),
        clients=tuple(
            PreRegisteredClient(
                client_id=str(c["client_id"]),
                client_secret=c.get("client_secret"),
                token_endpoint_auth_method=str(
                    c.get(
                        "token_endpoint_auth_method",
                        "client_secret_basic" if c.get("client_secret") else "none",
                    )
                ),
                redirect_uris=tuple(c.get("redirect_uris", ())),
            )
            for c in clients
        ),
        legacy=legacy is not None,
        legacy_metadata=bool((legacy or {}).get("metadata", True)),
    )
