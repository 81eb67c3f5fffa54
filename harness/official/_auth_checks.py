"""The official conformance runner's scored client authorization checks, mapped to ours.

The runner (`@modelcontextprotocol/conformance`) scores a client's OAuth flow with check
ids of its own; this table says, for every scored id of its client `auth/*` scenarios in
0.1.16 and in 0.2.0-alpha.12, which of our checks judge the same rule, or why none does.
Ids the runner only logs (status INFO: the request/response trace, the attempt counter
of its retry-limit scenario) are not scored and not listed. `python -m
harness.reports._coverage --write` renders the table into docs/coverage.md; a test checks
that every check id named here is in the catalogue and judged on some scenario.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OFFICIAL_AUTH_CHECKS", "RUNNER_VERSIONS", "OfficialCheck"]

RUNNER_VERSIONS = ("0.1.16", "0.2.0-alpha.12")
_BOTH = RUNNER_VERSIONS
_ALPHA = RUNNER_VERSIONS[1:]


@dataclass(frozen=True)
class OfficialCheck:
    id: str
    """The runner's check id."""
    versions: tuple[str, ...]
    """The runner versions that score it."""
    ours: tuple[str, ...]
    """Our check ids that judge the same rule (empty: none does)."""
    note: str
    """How ours differs, or why there is none."""


_STEP = (
    "a step, not a rule: the runner scores a success whenever the step happened (and a "
    "failure when it never did); here the step is the trigger of the checks that judge "
    "it, and a client that never gets there makes them N/A or BLOCKED"
)
_EXTENSION = (
    "an authorization extension (not the core specification the suite judges): "
    "machine-to-machine grants without a user or a browser step"
)

OFFICIAL_AUTH_CHECKS: tuple[OfficialCheck, ...] = (
    # Discovery.
    OfficialCheck(
        "prm-pathbased-requested",
        _BOTH,
        ("auth.prm-discovery-order",),
        "theirs scores that the path-based location was asked at all; ours judges the "
        "whole order (the URL the 401 names, else path-based, then root)",
    ),
    OfficialCheck(
        "prm-priority-order",
        _BOTH,
        ("auth.prm-discovery-order",),
        "theirs fails a root fetch; ours fails any fetch out of the order",
    ),
    OfficialCheck(
        "authorization-server-metadata",
        _BOTH,
        ("auth.as-metadata-order", "auth.legacy-metadata-then-defaults"),
        "theirs is a success on any metadata fetch; ours judges where the client looked "
        "and in which order (for a 2025-03-26 server: at the root of the MCP origin, "
        "before any endpoint)",
    ),
    OfficialCheck(
        "authorization-server-metadata-wrong-path",
        _BOTH,
        ("auth.as-metadata-order",),
        "an issuer with a path looked up at the root: out of order in ours",
    ),
    # The flow's steps.
    *(
        OfficialCheck(
            check_id,
            _BOTH,
            ("auth.legacy-metadata-then-defaults",),
            "in their two 2025-03-26 scenarios reaching the endpoint is the rule (the one "
            "the metadata names, or the default one): ours judges that; elsewhere " + _STEP,
        )
        for check_id in ("client-registration", "authorization-request", "token-request")
    ),
    # PKCE.
    OfficialCheck(
        "pkce-code-challenge-sent",
        _BOTH,
        ("auth.pkce-s256",),
        "one check of ours judges the challenge, its method and the verifier together",
    ),
    OfficialCheck("pkce-s256-method-used", _BOTH, ("auth.pkce-s256",), ""),
    OfficialCheck("pkce-code-verifier-sent", _BOTH, ("auth.pkce-s256",), ""),
    OfficialCheck("pkce-verifier-matches-challenge", _BOTH, ("auth.pkce-s256",), ""),
    # The token's use.
    OfficialCheck(
        "valid-bearer-token",
        _BOTH,
        ("auth.bearer-header-only",),
        "ours also fails a token in the query string or sent to the authorization server",
    ),
    OfficialCheck("invalid-bearer-token", _BOTH, ("auth.bearer-header-only",), ""),
    # RFC 8707.
    OfficialCheck(
        "resource-parameter-in-authorization",
        _BOTH,
        ("auth.resource-parameter",),
        "one check of ours judges both requests and their value",
    ),
    OfficialCheck("resource-parameter-in-token", _BOTH, ("auth.resource-parameter",), ""),
    OfficialCheck(
        "resource-parameter-consistency",
        _BOTH,
        ("auth.resource-parameter",),
        "ours compares each request with the metadata's resource, so two requests that "
        "differ cannot both pass",
    ),
    OfficialCheck(
        "resource-parameter-valid-uri",
        _BOTH,
        ("auth.resource-parameter",),
        "a value with a fragment or one that is not a URI is not the metadata's resource",
    ),
    OfficialCheck(
        "resource-parameter-matches-prm",
        _ALPHA,
        ("auth.resource-parameter",),
        "theirs wants the metadata's string byte for byte; ours compares canonical forms "
        "(scheme and host case, a trailing slash), as MCP defines the canonical server URI",
    ),
    OfficialCheck(
        "resource-mismatch-rejected",
        _BOTH,
        ("auth.resource-mismatch-refused",),
        "theirs passes a client that never reached the authorization step; ours is N/A "
        "or BLOCKED then",
    ),
    # Scopes.
    OfficialCheck(
        "scope-from-www-authenticate",
        _BOTH,
        ("auth.scope-selection",),
        "theirs wants the challenge's scope among those asked for; ours wants exactly it "
        "(the priority is also least privilege: every scope listed is more than the 401 "
        "named)",
    ),
    OfficialCheck(
        "scope-from-scopes-supported",
        _BOTH,
        ("auth.scope-selection",),
        "ours wants exactly the listed scopes",
    ),
    OfficialCheck("scope-omitted-when-undefined", _BOTH, ("auth.scope-selection",), ""),
    OfficialCheck(
        "scope-step-up-initial",
        _BOTH,
        ("auth.scope-selection",),
        "the first authorization of their step-up scenario; ours judges the first "
        "authorization in three scope scenarios of its own",
    ),
    OfficialCheck(
        "scope-step-up-escalation",
        _BOTH,
        ("auth.step-up",),
        "ours also wants the request retried with the new token",
    ),
    OfficialCheck(
        "scope-retry-limit",
        _BOTH,
        ("auth.step-up-bounded",),
        "both allow three attempts; ours counts the 403 answers the client met",
    ),
    OfficialCheck(
        "sep-2350-scope-union-on-reauth",
        _ALPHA,
        (),
        "not observed: our mock's 403 names the union of the granted and the needed "
        "scopes, so a client asking for the challenged scope asks for both; whether it "
        "would compute the union itself is not seen",
    ),
    # Client identity.
    OfficialCheck(
        "token-endpoint-auth-method",
        _BOTH,
        ("auth.token-endpoint-auth-method",),
        "theirs compares with the one method the server supports; ours with the method "
        "the registration answered with (the server may register another than asked)",
    ),
    OfficialCheck(
        "pre-registration-auth",
        _BOTH,
        ("auth.pre-registered-first", "auth.token-endpoint-auth-method"),
        "theirs offers no dynamic registration, so a client has no other way; ours offers "
        "it too, so that the priority MCP gives (pre-registered first, a SHOULD from "
        "2025-11-25) is what is judged, and the authentication as registered",
    ),
    OfficialCheck(
        "cimd-client-id-used",
        _BOTH,
        (),
        "not judged yet: the client contract gives no URL a client could serve its "
        "metadata document at; the mock fetches such documents",
    ),
    OfficialCheck(
        "sep-837-application-type-present",
        _ALPHA,
        (),
        "not judged yet: application_type in the registration request (2026-07-28)",
    ),
    OfficialCheck(
        "sep-2352-reregister-on-as-change",
        _ALPHA,
        (),
        "not judged on its own: in our `auth-migration` scenario a client that does not "
        "register with the new server gets no token of it, so "
        "`auth.tokens-stay-with-their-server` is N/A or BLOCKED for it, never a PASS",
    ),
    OfficialCheck(
        "sep-2352-no-reuse-on-as-change",
        _ALPHA,
        (),
        "not judged yet: the former server's client id at the new one (a credential, not a "
        "token) is refused by our mock and recorded (`client_of_issuer`), with no check "
        "of its own yet (2026-07-28)",
    ),
    OfficialCheck(
        "sep-2352-no-cross-as-credential-reuse",
        _ALPHA,
        ("auth.tokens-stay-with-their-server",),
        "the tokens part: ours fails a token or refresh token of one authorization server "
        "presented to another, and the former server's token sent to the MCP server once "
        "the client has read that it moved (MCP 2025-06-18 on); the client id part is not "
        "judged yet",
    ),
    # Refresh tokens (SEP-2207).
    OfficialCheck(
        "sep-2207-client-metadata-grant-types",
        _BOTH,
        ("auth.refresh-grant-registered",),
        "the rule binds clients that want refresh tokens: theirs judges any registration "
        "in its scenario, ours the registration of a client that then refreshed",
    ),
    OfficialCheck(
        "sep-2207-offline-access-requested",
        _BOTH,
        (),
        "a MAY: no verdict can follow from a client choosing not to ask for offline_access "
        "(theirs fails it only when the flow was never reached)",
    ),
    OfficialCheck(
        "sep-2207-offline-access-not-requested",
        _BOTH,
        (),
        "no rule to judge: the specification allows offline_access when the server lists "
        "it and forbids nothing in words when it does not (theirs fails it as a MUST NOT); "
        "a server may refuse an unknown scope with invalid_scope",
    ),
    # RFC 9207 and metadata issuers (2026-07-28).
    OfficialCheck(
        "sep-2468-client-compare-iss-supported",
        _ALPHA,
        ("auth.iss-validated",),
        "theirs scores both sides (a correct iss goes on, a wrong one is refused); ours "
        "judges the refusal; a client that refuses a correct iss never connects, which "
        "BLOCKS the flow's checks",
    ),
    OfficialCheck(
        "sep-2468-client-compare-iss-unadvertised",
        _ALPHA,
        ("auth.iss-validated",),
        "the same: ours judges the refusal of a wrong iss the metadata does not advertise "
        "(scenario auth-iss-unexpected)",
    ),
    OfficialCheck(
        "sep-2468-client-reject-missing-iss",
        _ALPHA,
        ("auth.iss-validated",),
        "the same: an advertised iss left out of the response (auth-iss-missing)",
    ),
    OfficialCheck(
        "sep-2468-client-no-normalization",
        _ALPHA,
        ("auth.iss-validated",),
        "the same, on its own sentence (MUST NOT normalise): an iss equal to the issuer "
        "only with its trailing slash dropped (auth-iss-normalized)",
    ),
    OfficialCheck(
        "sep-2468-client-proceed-no-iss",
        _ALPHA,
        (),
        "no check of ours: going on when iss is neither advertised nor sent is the flow "
        "itself, with no refusal to judge; the runner's verdict is given here for a "
        "conformance client (auth/iss-not-advertised)",
    ),
    OfficialCheck(
        "sep-2468-client-validate-metadata-issuer",
        _ALPHA,
        ("auth.metadata-issuer-validated",),
        "the same: no registration, authorization or token request after reading "
        "metadata whose issuer is not the one the client looked up (RFC 8414 §3.3)",
    ),
    # Extensions.
    *(
        OfficialCheck(check_id, _BOTH, (), _EXTENSION)
        for check_id in (
            "client-credentials-grant-type",
            "client-credentials-assertion-type",
            "client-credentials-jwt-iss",
            "client-credentials-jwt-sub",
            "client-credentials-jwt-verified",
            "client-credentials-basic-auth",
            "complete-flow-token-exchange",
            "complete-flow-jwt-bearer",
        )
    ),
    *(
        OfficialCheck(check_id, _ALPHA, (), _EXTENSION)
        for check_id in (
            "wif-grant-type",
            "wif-assertion-missing",
            "wif-assertion-malformed",
            "wif-assertion-audience",
            "wif-assertion-expired",
            "wif-assertion-verified",
            "wif-grant-fallback",
            "wif-no-retry",
        )
    ),
    *(
        OfficialCheck(
            check_id,
            _ALPHA,
            (),
            "the DPoP extension (RFC 9449 proof-of-possession), not the core specification",
        )
        for check_id in (
            "sep-1932-client-token-request-proof",
            "sep-1932-client-dpop-auth-scheme",
            "sep-1932-client-fresh-proof",
            "sep-1932-client-as-nonce",
            "sep-1932-client-rs-nonce",
        )
    ),
    # Not listed: `scenario-timeout`, which 0.2.0-alpha.12 emits only when it runs its server
    # scenarios against a server under test (never for a client).
)
