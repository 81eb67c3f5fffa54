"""Authorization (MCP basic/authorization): the OAuth 2.1 flow of a client.

The mock protects its MCP endpoint and runs an authorization server (script section
`auth`, docs/scripts.md); every request either handles is an `auth` transcript entry.
Each check is triggered by the step it judges having happened (the client sent an
authorization request, the client obtained a token): a client that never got there is
N/A or BLOCKED by what stopped it, never a pass. The checks judge what the client sent
before a failure of its own connect, so they are independent of `client.connect`: a
client refused for leaving out PKCE fails the PKCE check, not "connect".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from harness.clients import Authorization
from harness.judging import Verdict, check, clause, passed, silent, trigger, violated
from harness.running import HEADLESS_AUTHORIZATION, Scenario, ScenarioRun, Session
from harness.suite._evidence import hung_or_crashed, missing

__all__ = ["SCENARIOS"]

_FROM_2025_03 = ("2025-03-26", "2025-06-18", "2025-11-25")
_FROM_2025_06 = ("2025-06-18", "2025-11-25")
_FROM_2025_11 = ("2025-11-25",)
_MODERN = "2026-07-28"
_SPEC = "basic/authorization"
_PRM = "/.well-known/oauth-protected-resource"


def _auth(run: ScenarioRun, **match: Any) -> list[dict[str, Any]]:
    return [e for e in run.of_kind("auth") if all(e.get(k) == v for k, v in match.items())]


def _authorization_requests(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return list(_auth(run, endpoint="authorize"))


def _token_requests(run: ScenarioRun) -> list[dict[str, Any]]:
    return _auth(run, endpoint="token")


def _issued(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The token requests the mock answered with an access token."""
    return [e for e in _token_requests(run) if e.get("issued")]


def _canonical(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path.rstrip("/") if parts.path != "/" else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


@check(
    "auth.pkce-s256",
    requirements=["AUTH-PKCE"],
    clauses=[
        clause(_SPEC, "PKCE is REQUIRED for all clients", "2025-03-26"),
        clause(_SPEC, "MCP clients MUST implement PKCE according to", *_FROM_2025_06),
        clause(
            _SPEC,
            "MCP clients MUST use the S256 code challenge method",
            *_FROM_2025_11,
            branch="s256",
        ),
        silent(
            "the page requires PKCE but names no code challenge method; S256 is OAuth 2.1 "
            "§4.1.1's, which the page does not point to (2025-06-18 cites §7.5.2 only)",
            "2025-03-26",
            "2025-06-18",
            branch="s256",
        ),
    ],
    spec=f"{_SPEC}#authorization-code-protection",
    description="Every authorization request carries a PKCE code_challenge with the S256 "
    "method, and the code is redeemed with its code_verifier",
    revisions=_FROM_2025_03,
    transports=["http"],
    trigger=trigger("the client sent an authorization request", _authorization_requests),
    independent_of=["client.connect"],
)
def pkce_s256(run: ScenarioRun) -> Verdict:
    requests = _authorization_requests(run)
    for request in requests:
        params: Mapping[str, Any] = request.get("params") or {}
        method = params.get("code_challenge_method")
        if not params.get("code_challenge"):
            return violated("an authorization request carries no code_challenge (PKCE)", [request])
        if method != "S256":
            shown = "no code_challenge_method (plain)" if method is None else repr(method)
            return violated(
                f"an authorization request uses {shown}, not S256", [request], clause="s256"
            )
    redeemed = [
        e
        for e in _token_requests(run)
        if (e.get("params") or {}).get("grant_type") == "authorization_code"
    ]
    refused = [e for e in redeemed if e.get("outcome") == "invalid_grant"]
    if refused:
        return violated(
            "the token endpoint refused the code: the code_verifier did not match", refused
        )
    return passed(f"{len(requests)} authorization request(s) with an S256 code_challenge", requests)


@check(
    "auth.resource-parameter",
    requirements=["AUTH-resource"],
    clauses=[
        clause(_SPEC, "MUST be included in both authorization requests"),
        clause(_SPEC, "MUST use the canonical URI of the MCP server"),
    ],
    spec=f"{_SPEC}#resource-parameter-implementation",
    description="Authorization and token requests carry `resource` (RFC 8707): the MCP "
    "server's canonical URI, as its protected resource metadata names it",
    revisions=_FROM_2025_06,
    transports=["http"],
    trigger=trigger("the client sent an authorization request", _authorization_requests),
    independent_of=["client.connect"],
)
def resource_parameter(run: ScenarioRun) -> Verdict:
    metadata = _auth(run, endpoint="resource-metadata", outcome="ok")
    if not metadata:
        return missing(run, "the client fetching the protected resource metadata")
    wanted = _canonical(str(metadata[0].get("resource", "")))
    requests = [*_authorization_requests(run), *_token_requests(run)]
    for request in requests:
        resource = (request.get("params") or {}).get("resource")
        what = f"the {request['endpoint']} request"
        if resource is None:
            return violated(f"{what} carries no resource parameter", [metadata[0], request])
        if _canonical(str(resource)) != wanted:
            return violated(
                f"{what} names resource {resource!r}, not {wanted!r}", [metadata[0], request]
            )
    return passed(f"every authorization and token request names {wanted}", [*metadata, *requests])


@check(
    "auth.bearer-header-only",
    requirements=["AUTH-bearer"],
    clauses=[
        clause(_SPEC, "MCP client MUST use the Authorization request header field"),
        clause(_SPEC, "authorization MUST be included in every HTTP request"),
        clause(_SPEC, "Access tokens MUST NOT be included in the URI", branch="in-query"),
        silent(
            "no sentence forbids the client to send its access token to the authorization "
            "server; the token-audience sentences bind servers or concern the MCP server",
            branch="to-authorization-server",
        ),
    ],
    spec=f"{_SPEC}#token-requirements",
    description="Once it has a token, the client sends it in the Authorization header of "
    "every request to the MCP server, never in the query string, and never to the "
    "authorization server",
    revisions=_FROM_2025_03,
    transports=["http"],
    trigger=trigger("the client obtained an access token", _issued),
    independent_of=["client.connect"],
)
def bearer_header_only(run: ScenarioRun) -> Verdict:
    first = _issued(run)[0]
    after = [e for e in run.of_kind("auth") if e["seq"] > first["seq"]]
    in_query = [e for e in run.of_kind("auth") if e.get("token_in_query")]
    if in_query:
        return violated(
            "the client sent an access token in the query string",
            [first, *in_query],
            clause="in-query",
        )
    leaked = [e for e in after if e.get("server") == "authorization" and e.get("issued_token")]
    if leaked:
        return violated(
            "the client sent its access token to the authorization server",
            leaked,
            clause="to-authorization-server",
        )
    mcp = [e for e in after if e.get("endpoint") == "mcp"]
    bare = [e for e in mcp if not e.get("bearer_header")]
    if bare:
        return violated(
            f"{len(bare)} request(s) to the MCP server after the token was issued carry no "
            "Authorization header",
            [first, *bare],
        )
    used = [e for e in mcp if e.get("issued_token")]
    if not used:
        return missing(run, "a request to the MCP server with the issued token")
    return passed(
        f"{len(mcp)} request(s) to the MCP server, each with the token in the Authorization header",
        [first, *mcp],
    )


def _prm_fetches(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The client's GETs for protected resource metadata (found or not)."""
    return [
        e
        for e in run.of_kind("auth")
        if e.get("server") == "resource"
        and e.get("method") == "GET"
        and (e.get("endpoint") == "resource-metadata" or str(e.get("path")).startswith(_PRM))
    ]


def _ordered(fetched: list[Mapping[str, Any]], expected: list[str]) -> Mapping[str, Any] | None:
    """The first fetch out of the `expected` order (each path in turn, none skipped, up
    to the first one found), or None when the fetches follow it."""
    for position, entry in enumerate(fetched):
        if position >= len(expected) or entry.get("path") != expected[position]:
            return entry
        if entry.get("status") == 200:
            return None
    return None


@check(
    "auth.prm-discovery-order",
    requirements=["AUTH-401"],
    clauses=[
        clause(_SPEC, "MUST be able to parse WWW-Authenticate headers", "2025-06-18"),
        clause(_SPEC, "MUST use OAuth 2.0 Protected Resource Metadata for", "2025-06-18"),
        clause(_SPEC, "MUST support both discovery mechanisms and use", *_FROM_2025_11),
        clause(
            _SPEC,
            "MUST fall back to constructing and requesting",
            *_FROM_2025_11,
            branch="well-known-order",
        ),
        silent(
            "2025-06-18 gives the client no well-known order: its servers MUST name the "
            "metadata in WWW-Authenticate; the path-then-root order arrives in 2025-11-25",
            "2025-06-18",
            branch="well-known-order",
        ),
    ],
    spec=f"{_SPEC}#protected-resource-metadata-discovery-requirements",
    description="After a 401 the client fetches the protected resource metadata the "
    "challenge names (resource_metadata); when it names none, the path-based well-known "
    "URL first, then the root one",
    revisions=_FROM_2025_06,
    transports=["http"],
    trigger=trigger("the client looked for protected resource metadata", _prm_fetches),
    independent_of=["client.connect"],
)
def prm_discovery_order(run: ScenarioRun) -> Verdict:
    fetches = _prm_fetches(run)
    challenges = [e for e in _auth(run, endpoint="mcp", status=401) if e["seq"] < fetches[0]["seq"]]
    if not challenges:
        return missing(run, "a 401 from the MCP server before the metadata was looked for")
    challenge = challenges[0]
    named = challenge.get("resource_metadata")
    if isinstance(named, str):
        wanted = urlsplit(named).path
        if fetches[0].get("path") != wanted:
            return violated(
                f"the 401 named the metadata at {named}, and the client fetched "
                f"{fetches[0].get('path')} first",
                [challenge, fetches[0]],
            )
        return passed(
            f"the client fetched the metadata the 401 named ({named})", [challenge, fetches[0]]
        )
    path = urlsplit(str(_mcp_url(run) or "")).path.rstrip("/")
    expected = ([f"{_PRM}{path}"] if path else []) + [_PRM]
    wrong = _ordered(fetches, expected)
    if wrong is not None:
        return violated(
            f"with no resource_metadata in the 401 the order is {' then '.join(expected)}; "
            f"the client fetched {wrong.get('path')} out of that order",
            [challenge, *fetches],
            clause="well-known-order",
        )
    return passed(
        f"the client looked in the order {' then '.join(expected)}", [challenge, *fetches]
    )


def _mcp_url(run: ScenarioRun) -> str | None:
    """The MCP endpoint's URL, as the mock recorded it with its resource metadata (or
    from the first MCP request's Host header)."""
    for entry in _auth(run, endpoint="resource-metadata"):
        if entry.get("mcp_url"):
            return str(entry["mcp_url"])
    for entry in run.of_kind("http_request"):
        host = (entry.get("headers") or {}).get("host")
        if host and any(
            a.get("request") == entry.get("request") for a in _auth(run, endpoint="mcp")
        ):
            return f"http://{host}{entry.get('path')}"
    return None


def _as_fetches(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The client's GETs for authorization server metadata on its own origin."""
    return [
        e
        for e in run.of_kind("auth")
        if e.get("server") == "authorization"
        and e.get("method") == "GET"
        and "/.well-known/" in str(e.get("path"))
    ]


def _issuer_paths(issuer: str) -> list[str]:
    """Where MCP says to look for an issuer's metadata, in order (RFC 8414 §3.1 inserts
    the well-known segment; OpenID Connect also appends it)."""
    path = urlsplit(issuer).path.rstrip("/")
    if not path:
        return ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
    return [
        f"/.well-known/oauth-authorization-server{path}",
        f"/.well-known/openid-configuration{path}",
        f"{path}/.well-known/openid-configuration",
    ]


@check(
    "auth.as-metadata-order",
    requirements=["AUTH-AS"],
    clauses=[
        clause(_SPEC, "MUST try endpoints in the following priority order"),
        clause(_SPEC, "clients MUST try: 1. OAuth 2.0"),
    ],
    spec=f"{_SPEC}#authorization-server-metadata-discovery",
    description="The client looks for the authorization server's metadata in the order "
    "MCP gives: for an issuer with a path, OAuth with the path inserted, OpenID Connect "
    "inserted, then appended; without a path, OAuth then OpenID Connect",
    revisions=_FROM_2025_11,
    transports=["http"],
    trigger=trigger("the client looked for authorization server metadata", _as_fetches),
    independent_of=["client.connect"],
)
def as_metadata_order(run: ScenarioRun) -> Verdict:
    named = [e for e in _auth(run, endpoint="resource-metadata") if e.get("issuer")]
    if not named:
        return missing(run, "the resource metadata that names the authorization server")
    issuer = str(named[0]["issuer"])
    expected = _issuer_paths(issuer)
    fetches = _as_fetches(run)
    wrong = _ordered(fetches, expected)
    if wrong is not None:
        return violated(
            f"for the issuer {issuer} the order is {' then '.join(expected)}; the client "
            f"fetched {wrong.get('path')} out of that order",
            [named[0], *fetches],
        )
    return passed(f"the client looked in the order {' then '.join(expected)}", [named[0], *fetches])


def _unadvertised(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """Metadata answers without S256 in code_challenge_methods_supported."""
    return [
        e
        for e in _auth(run, endpoint="server-metadata", status=200)
        if "S256" not in (e.get("code_challenge_methods_supported") or [])
    ]


@check(
    "auth.pkce-unadvertised-refused",
    requirements=["AUTH-PKCE"],
    clauses=[
        clause(_SPEC, "support PKCE and MCP clients MUST refuse to proceed"),
        clause(_SPEC, "MUST verify PKCE support before proceeding"),
        silent(
            "the refusal is for metadata with no code_challenge_methods_supported; one that "
            "lists other methods only still advertises PKCE, and no sentence bids stop there",
            branch="s256-not-listed",
        ),
    ],
    spec=f"{_SPEC}#authorization-code-protection",
    description="A client that finds no S256 in the authorization server's "
    "code_challenge_methods_supported (or no such member) refuses to go on: no "
    "authorization request",
    revisions=_FROM_2025_11,
    transports=["http"],
    trigger=trigger("the client read metadata that does not advertise PKCE S256", _unadvertised),
)
def pkce_unadvertised_refused(run: ScenarioRun) -> Verdict:
    seen = _unadvertised(run)[0]
    went_on = [e for e in _authorization_requests(run) if e["seq"] > seen["seq"]]
    if went_on:
        methods = seen.get("code_challenge_methods_supported")
        if methods:  # PKCE advertised, with other methods only
            return violated(
                f"the client sent an authorization request to a server that lists "
                f"{methods} as its code challenge methods, not S256",
                [seen, *went_on],
                clause="s256-not-listed",
            )
        return violated(
            "the client sent an authorization request to a server that does not advertise "
            "PKCE S256",
            [seen, *went_on],
        )
    unreported = hung_or_crashed(run.operation("connect"))
    if unreported is not None:
        return unreported
    return passed("the client stopped after the metadata: no authorization request", [seen])


def _step_ups(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The MCP server's 403 insufficient_scope answers."""
    return list(_auth(run, endpoint="mcp", outcome="insufficient_scope"))


@check(
    "auth.step-up",
    requirements=["AUTH-step-up"],
    clauses=[
        clause(_SPEC, "Clients SHOULD respond to these errors by requesting", "2025-11-25"),
        clause(_SPEC, "acting on behalf of a user SHOULD attempt", "2025-11-25"),
        clause(f"{_SPEC}/index", "Clients SHOULD respond to these errors by requesting", _MODERN),
        clause(f"{_SPEC}/index", "acting on behalf of a user SHOULD attempt", _MODERN),
    ],
    spec=f"{_SPEC}#step-up-authorization-flow",
    description="After a 403 insufficient_scope the client authorizes again with the "
    "scope the challenge names and retries the request with the new token",
    revisions=(*_FROM_2025_11, _MODERN),
    transports=["http"],
    trigger=trigger("the MCP server answered 403 insufficient_scope", _step_ups),
    independent_of=["client.connect"],
)
def step_up(run: ScenarioRun) -> Verdict:
    refused = _step_ups(run)[0]
    needed = set(str(refused.get("required_scope", "")).split())
    again = [e for e in _authorization_requests(run) if e["seq"] > refused["seq"]]
    if not again:
        return violated("after the 403 the client did not authorize again", [refused])
    scope = set(str((again[0].get("params") or {}).get("scope", "")).split())
    if not needed <= scope:
        return violated(
            f"the new authorization request asks for {sorted(scope)}, not the scope the 403 "
            f"named ({' '.join(sorted(needed))})",
            [refused, again[0]],
        )
    retried = [
        e
        for e in _auth(run, endpoint="mcp", outcome="ok")
        if e["seq"] > again[0]["seq"] and e.get("method") == "POST"
    ]
    if not retried:
        return violated(
            "the client did not send the request again with the new token", [refused, *again]
        )
    return passed(
        "the client authorized again with the scope the 403 named and retried",
        [refused, again[0], retried[0]],
    )


_RETRY_LIMIT = 3


@check(
    "auth.step-up-bounded",
    requirements=["AUTH-step-up"],
    clauses=[
        clause(_SPEC, "Clients SHOULD implement retry limits", "2025-11-25"),
        clause(f"{_SPEC}/index", "Clients SHOULD implement retry limits", _MODERN),
    ],
    spec=f"{_SPEC}#step-up-authorization-flow",
    description=f"A server that keeps answering 403 insufficient_scope gets at most "
    f"{_RETRY_LIMIT} step-up attempts, not an endless loop",
    revisions=(*_FROM_2025_11, _MODERN),
    transports=["http"],
    trigger=trigger("the MCP server answered 403 insufficient_scope", _step_ups),
    independent_of=["client.connect"],
)
def step_up_bounded(run: ScenarioRun) -> Verdict:
    refused = _step_ups(run)
    # A server that ends the loop itself (410 after `give_up_after` refusals, as the
    # official runner's does) still saw the client come back: each return is an attempt.
    cut = _auth(run, endpoint="mcp", outcome="test_complete")
    if len(refused) + len(cut) > _RETRY_LIMIT:
        more = f" and came back {len(cut)} more time(s), until the server gave up" if cut else ""
        return violated(
            f"the client met {len(refused)} 403 insufficient_scope answers without giving up{more}",
            sorted([*refused, *cut], key=lambda e: e["seq"])[: _RETRY_LIMIT + 1],
        )
    unreported = hung_or_crashed(run.operation("call_tool"))
    if unreported is not None:
        return unreported
    return passed(f"the client gave up after {len(refused)} 403 answer(s)", refused)


def _foreign_metadata(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """Resource metadata answers that name another resource than the MCP endpoint."""
    return [
        e
        for e in _auth(run, endpoint="resource-metadata", status=200)
        if e.get("mcp_url") and _canonical(str(e.get("resource"))) != _canonical(str(e["mcp_url"]))
    ]


@check(
    "auth.resource-mismatch-refused",
    requirements=["AUTH-401"],
    # RFC 9728 §3.3 (metadata naming another resource MUST NOT be used), which the page
    # makes the client's by naming that very mechanism: no MCP sentence restates it.
    clauses=[clause(_SPEC, "MUST use OAuth 2.0 Protected Resource Metadata for")],
    spec=f"{_SPEC}#protected-resource-metadata-discovery-requirements",
    description="Protected resource metadata whose resource is not the MCP server's URL "
    "(RFC 9728 §3.3) is refused: no authorization request follows",
    revisions=_FROM_2025_06,
    transports=["http"],
    trigger=trigger("the client read metadata naming another resource", _foreign_metadata),
)
def resource_mismatch_refused(run: ScenarioRun) -> Verdict:
    seen = _foreign_metadata(run)[0]
    went_on = [e for e in _authorization_requests(run) if e["seq"] > seen["seq"]]
    if went_on:
        return violated(
            f"the client went on with metadata for {seen.get('resource')!r} to an "
            "authorization request",
            [seen, *went_on],
        )
    unreported = hung_or_crashed(run.operation("connect"))
    if unreported is not None:
        return unreported
    return passed("the client stopped at the metadata of another resource", [seen])


def _invalid_iss(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """Authorization responses with a code that RFC 9207 §2.4 says to reject: an iss that
    is not the authorization server's issuer (advertised or not), or none where the
    metadata advertises one."""
    return [
        e
        for e in _authorization_requests(run)
        if e.get("code") and (e.get("iss_mismatch") or ("iss" not in e and e.get("iss_advertised")))
    ]


def _normalized_equal(iss: str, issuers: set[str]) -> bool:
    """Whether `iss` names one of `issuers` once normalised (RFC 3986 §6.2.2-6.2.3: case,
    a trailing slash), which the comparison must not do."""
    return iss.rstrip("/").lower() in {i.rstrip("/").lower() for i in issuers}


@check(
    "auth.iss-validated",
    requirements=["AUTH-iss"],
    clauses=[
        clause(f"{_SPEC}/index", "MUST apply the validation in RFC9207 Section 2.4"),
        clause(
            f"{_SPEC}/index",
            "MUST NOT apply scheme or host case folding",
            branch="normalized",
        ),
    ],
    spec=f"{_SPEC}#authorization-code-protection",
    description="An authorization response that fails RFC 9207 validation (an iss that "
    "is not the authorization server's issuer, equal only once normalised, or none where "
    "the metadata advertises it) is refused: its code is never redeemed",
    revisions=("2026-07-28",),
    transports=["http"],
    trigger=trigger("the authorization response failed RFC 9207 validation", _invalid_iss),
)
def iss_validated(run: ScenarioRun) -> Verdict:
    invalid = _invalid_iss(run)
    codes = {e["code"] for e in invalid}
    redeemed = [e for e in _token_requests(run) if (e.get("params") or {}).get("code") in codes]
    if redeemed:
        code = (redeemed[0].get("params") or {}).get("code")
        response = next(e for e in invalid if e["code"] == code)
        evidence = [response, *redeemed]
        if "iss" not in response:
            return violated(
                "the client redeemed a code whose authorization response carried no iss, "
                "though the metadata advertises authorization_response_iss_parameter_supported",
                evidence,
            )
        issuers = {str(e.get("issuer")) for e in _auth(run, endpoint="server-metadata")}
        iss = str(response.get("iss"))
        if _normalized_equal(iss, issuers - {iss}):
            return violated(
                f"the client redeemed a code whose authorization response named issuer "
                f"{iss!r}, equal to the issuer only once normalised",
                evidence,
                clause="normalized",
            )
        return violated(
            f"the client redeemed a code whose authorization response named issuer {iss!r}",
            evidence,
        )
    connect = run.operation("connect")
    unreported = hung_or_crashed(connect)
    if unreported is not None:
        return unreported
    ended = [connect.to_json()] if connect is not None else []
    return passed(
        "the client refused the authorization response: it ended without redeeming its code",
        [*invalid, *ended],
    )


def _mismatched_metadata(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """Authorization server metadata whose issuer is not the one its URL was formed from."""
    return list(_auth(run, endpoint="server-metadata", status=200, issuer_mismatch=True))


@check(
    "auth.metadata-issuer-validated",
    requirements=["AUTH-AS", "AUTH-iss"],
    clauses=[
        clause(
            f"{_SPEC}/authorization-server-discovery",
            "If they differ, the client MUST NOT use the metadata",
        )
    ],
    spec=f"{_SPEC}/authorization-server-discovery#authorization-server-metadata-discovery",
    description="Authorization server metadata whose issuer is not the issuer identifier "
    "its well-known URL was formed from (RFC 8414 §3.3) is not used: no registration, "
    "authorization or token request follows",
    revisions=("2026-07-28",),
    transports=["http"],
    trigger=trigger("the client read metadata naming another issuer", _mismatched_metadata),
)
def metadata_issuer_validated(run: ScenarioRun) -> Verdict:
    seen = _mismatched_metadata(run)[0]
    used = [
        e
        for e in run.of_kind("auth")
        if e["seq"] > seen["seq"]
        and e.get("server") == "authorization"
        and e.get("endpoint") in ("register", "authorize", "token")
    ]
    if used:
        return violated(
            f"the client used the metadata naming issuer {seen.get('issuer')!r}: "
            f"a {used[0].get('endpoint')} request followed",
            [seen, *used[:2]],
        )
    connect = run.operation("connect")
    unreported = hung_or_crashed(connect)
    if unreported is not None:
        return unreported
    ended = [connect.to_json()] if connect is not None else []
    return passed(
        "the client refused the mismatched metadata: it ended without using any of its endpoints",
        [seen, *ended],
    )


def _registered_client_tokens(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """Token requests naming a client the authorization server knows (so the method it
    was registered with is known)."""
    return [e for e in _token_requests(run) if e.get("registered_auth")]


@check(
    "auth.token-endpoint-auth-method",
    requirements=["AUTH-client-auth"],
    clauses=[
        silent(
            "no sentence binds the client to authenticate at the token endpoint as it "
            "registered: only 'MUST implement OAuth 2.1' (of implementations, later of "
            "authorization servers), naming no client authentication method",
        ),
    ],
    spec=f"{_SPEC}#dynamic-client-registration",
    description="At the token endpoint the client authenticates the way its registration "
    "says (RFC 7591 token_endpoint_auth_method): client_secret_basic in the Authorization "
    "header, client_secret_post in the form, none with its client_id alone",
    revisions=_FROM_2025_03,
    transports=["http"],
    trigger=trigger(
        "the client sent a token request as a registered client", _registered_client_tokens
    ),
    independent_of=["client.connect"],
)
def token_endpoint_auth_method(run: ScenarioRun) -> Verdict:
    requests = _registered_client_tokens(run)
    registrations = _auth(run, endpoint="register", status=201)
    for request in requests:
        registered, used = request["registered_auth"], request.get("client_auth")
        if used != registered:
            return violated(
                f"the client was registered for {registered} and authenticated with {used} "
                "at the token endpoint",
                [*registrations, request],
            )
    return passed(
        f"{len(requests)} token request(s), each authenticated with "
        f"{requests[0]['registered_auth']} as registered",
        [*registrations, *requests],
    )


def _refreshes(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return [
        e
        for e in _token_requests(run)
        if (e.get("params") or {}).get("grant_type") == "refresh_token"
    ]


def _grants_seen(run: ScenarioRun, before: int) -> set[int]:
    """The token answers (grants) the client had shown it held before entry `before`: it
    used an access token or presented a refresh token that answer issued."""
    return {
        grant
        for e in run.of_kind("auth")
        if e["seq"] < before
        for grant in (e.get("token_grant"), e.get("refresh_grant"))
        if isinstance(grant, int)
    }


def _rotations(run: ScenarioRun) -> set[int]:
    """The grants of the refresh answers that brought a new refresh token."""
    issued = [e.get("issued") or {} for e in _refreshes(run)]
    return {i["grant"] for i in issued if i.get("refresh") and isinstance(i.get("grant"), int)}


def _refreshes_after_rotation(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The refreshes the client sent once it had a rotation's answer: it had used a token
    that answer issued, or presents its refresh token. A refresh recorded after a rotation
    without that is not one of them: it may have been sent beside the refresh that rotated
    (two 401s at once), before the client could know the new token (each request has a
    connection of its own)."""
    rotations = _rotations(run)
    return [
        e
        for e in _refreshes(run)
        if rotations & (_grants_seen(run, e["seq"]) | {e.get("refresh_grant")})
    ]


def _crossed_rotation(run: ScenarioRun, refresh: Mapping[str, Any]) -> bool:
    """Whether a refresh presenting a rotated-out token came before the client had shown
    it held the answer that replaced that token."""
    return refresh.get("replaced_by") not in _grants_seen(run, refresh["seq"])


@check(
    "auth.refresh-token-rotated",
    requirements=["AUTH-refresh"],
    clauses=[
        silent(
            "only authorization servers are bound ('MUST rotate refresh tokens'); that the "
            "client discards the old refresh token is OAuth 2.1's and RFC 6749 §6's word",
        ),
    ],
    spec=f"{_SPEC}#token-theft",
    description="When a refresh answer brings a new refresh token (MCP makes authorization "
    "servers rotate them for public clients), the client discards the old one: later "
    "refreshes present the new token (RFC 6749 §6)",
    revisions=(*_FROM_2025_06, "2026-07-28"),
    transports=["http"],
    trigger=trigger(
        "the client refreshed again once it had the answer that rotated its refresh token",
        _refreshes_after_rotation,
    ),
    independent_of=["client.connect"],
)
def refresh_token_rotated(run: ScenarioRun) -> Verdict:
    later = _refreshes_after_rotation(run)
    rotated = [e for e in _refreshes(run) if e.get("refresh_token") == "rotated"]
    stale = [e for e in rotated if not _crossed_rotation(run, e)]
    if stale:
        return violated(
            f"{len(stale)} refresh request(s) presented a refresh token the server had "
            "already replaced, after the client had used a token of the answer that "
            "replaced it",
            stale,
        )
    # No refresh is stale: every rotated-out token presented crossed its replacement.
    return passed(
        f"{len(later)} refresh request(s) after the client had a rotation's answer, each "
        "with the newest refresh token it held"
        + (
            f"; {len(rotated)} presented a rotated-out one before the client had used a "
            "token of its replacement (sent beside the refresh that rotated it)"
            if rotated
            else ""
        ),
        [*later, *rotated],
    )


def _registered_then_refreshed(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The dynamic registrations of a client that went on to refresh a token (one that
    evidently wants refresh tokens)."""
    if not _refreshes(run):
        return []
    return list(_auth(run, endpoint="register", status=201))


@check(
    "auth.refresh-grant-registered",
    requirements=["AUTH-refresh"],
    clauses=[clause(f"{_SPEC}/index", "SHOULD include refresh_token in their grant_types")],
    spec=f"{_SPEC}#refresh-tokens",
    description="A client that uses refresh tokens names refresh_token in the grant_types "
    "of its dynamic registration (RFC 7591 §2)",
    revisions=("2026-07-28",),
    transports=["http"],
    trigger=trigger(
        "a client that registered went on to refresh a token", _registered_then_refreshed
    ),
    independent_of=["client.connect"],
)
def refresh_grant_registered(run: ScenarioRun) -> Verdict:
    registrations = _registered_then_refreshed(run)
    for registration in registrations:
        grants = (registration.get("metadata") or {}).get("grant_types")
        if not isinstance(grants, list) or "refresh_token" not in grants:
            shown = "no grant_types (authorization_code only)" if grants is None else grants
            return violated(
                f"the client registered with {shown} and then refreshed a token",
                [registration, _refreshes(run)[0]],
            )
    return passed(
        "the client registered with refresh_token among its grant_types",
        [*registrations, _refreshes(run)[0]],
    )


_AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
_ENDPOINTS = ("register", "authorize", "token", "default-endpoint")


def _root_metadata_lookups(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return [
        e
        for e in _auth(run, endpoint="server-metadata", method="GET")
        if e.get("path") == _AS_WELL_KNOWN
    ]


def _endpoint_uses(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """Requests to the authorization server's endpoints (or to the default paths of a
    server whose metadata names others)."""
    return [
        e
        for e in run.of_kind("auth")
        if e.get("server") == "authorization" and e.get("endpoint") in _ENDPOINTS
    ]


def _legacy_steps(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return [*_root_metadata_lookups(run), *_endpoint_uses(run)]


@check(
    "auth.legacy-metadata-then-defaults",
    requirements=["AUTH-legacy"],
    clauses=[
        clause(_SPEC, "Clients MUST first attempt to discover endpoints"),
        clause(_SPEC, "authorization base URL MUST be determined"),
        clause(_SPEC, "MCP clients MUST follow the OAuth 2.0"),
        clause(_SPEC, "clients MUST use the following default endpoint paths"),
    ],
    spec=f"{_SPEC}#server-metadata-discovery",
    description="With a 2025-03-26 server (no resource metadata), the client asks for "
    "the authorization server metadata at the root of the MCP server's origin before "
    "anything else, uses the endpoints it names, and only when there is none falls "
    "back to /authorize, /token and /register there",
    revisions=("2025-03-26",),
    transports=["http"],
    trigger=trigger(
        "the client looked for the metadata or used an authorization endpoint", _legacy_steps
    ),
    # A request to a path the mock does not serve is this check's evidence (endpoints
    # looked for in the wrong place), not a precondition that failed.
    independent_of=["client.connect", "http.one-message-per-post"],
)
def legacy_metadata_then_defaults(run: ScenarioRun) -> Verdict:
    lookups, uses = _root_metadata_lookups(run), _endpoint_uses(run)
    if not uses:
        unreported = hung_or_crashed(run.operation("connect"))
        if unreported is not None:
            return unreported
        if lookups[-1].get("status") == 200:
            return missing(run, "a request to an endpoint the metadata names")
        return violated(
            f"there is no metadata at {_AS_WELL_KNOWN}, and the client never used the "
            "default endpoints /authorize, /token, /register",
            lookups,
        )
    first = uses[0]
    before = [e for e in lookups if e["seq"] < first["seq"]]
    if not before:
        return violated(
            f"the client went to {first.get('path')} without asking for the metadata at "
            f"{_AS_WELL_KNOWN} first",
            [first],
        )
    if any(e.get("status") == 200 for e in before):
        defaults = [e for e in uses if e.get("endpoint") == "default-endpoint"]
        if defaults:
            return violated(
                f"the metadata names the endpoints, and the client used the default "
                f"{defaults[0].get('path')} instead",
                [*before, *defaults],
            )
        return passed("the metadata first, then the endpoints it names", [*before, *uses])
    return passed("the metadata first (none there), then the default endpoints", [*before, *uses])


def _migrations(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The resource moving to another authorization server (the mock's `migrate_after`)."""
    return list(_auth(run, endpoint="migration"))


@check(
    "auth.tokens-stay-with-their-server",
    requirements=["AUTH-token-origin"],
    clauses=[
        clause(_SPEC, "MCP clients MUST NOT send tokens to the", *_FROM_2025_06),
        clause(f"{_SPEC}/index", "MCP clients MUST NOT send tokens to the", "2026-07-28"),
        clause(
            f"{_SPEC}/authorization-server-discovery",
            "Clients MUST maintain separate registration state",
            "2026-07-28",
            branch="crossed",
        ),
        silent(
            "before 2026-07-28 only servers are bound to accept just their own tokens; "
            "keeping tokens per authorization server is first the client's in 2026-07-28",
            *_FROM_2025_06,
            branch="crossed",
        ),
    ],
    spec=f"{_SPEC}#token-handling",
    description="Once the resource metadata names another authorization server, the client "
    "sends the MCP server only tokens of that one, never the former server's again; and "
    "it never presents a token or refresh token of one authorization server to another",
    revisions=(*_FROM_2025_06, "2026-07-28"),
    transports=["http"],
    trigger=trigger("the MCP server moved to another authorization server", _migrations),
    independent_of=["client.connect"],
)
def tokens_stay_with_their_server(run: ScenarioRun) -> Verdict:
    moved = _migrations(run)[0]
    former, new = moved["former_issuer"], moved["issuer"]
    crossed = [
        e
        for e in run.of_kind("auth")
        if e.get("server") == "authorization"
        and (
            e.get("refresh_token_issuer") not in (None, e.get("issuer"))
            or e.get("token_issuer") not in (None, e.get("issuer"))
        )
    ]
    if crossed:
        return violated(
            f"the client presented a token of {crossed[0].get('refresh_token_issuer') or crossed[0].get('token_issuer')} "
            f"to the authorization server {crossed[0].get('issuer')}",
            [moved, *crossed],
            clause="crossed",
        )
    learned = [
        e
        for e in _auth(run, endpoint="resource-metadata", status=200, issuer=new)
        if e["seq"] > moved["seq"]
    ]
    if not learned:
        return missing(run, f"the client reading the resource metadata that names {new}")
    mcp = [e for e in _auth(run, endpoint="mcp") if e["seq"] > learned[0]["seq"]]
    stale = [e for e in mcp if e.get("token_issuer") == former]
    if stale:
        return violated(
            f"after reading that the MCP server's authorization server is {new}, the client "
            f"sent it {len(stale)} request(s) with a token of {former}",
            [moved, learned[0], *stale],
        )
    used = [e for e in mcp if e.get("token_issuer") == new and e.get("outcome") == "ok"]
    if not used:
        return missing(run, f"a request to the MCP server with a token of {new}")
    return passed(
        f"after the move to {new} the client sent the MCP server only its tokens",
        [moved, learned[0], *used],
    )


def _first_authorization(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return _authorization_requests(run)[:1]


@check(
    "auth.scope-selection",
    requirements=["AUTH-scope"],
    clauses=[
        clause(_SPEC, "SHOULD follow this priority order for scope selection", *_FROM_2025_11),
        clause(
            f"{_SPEC}/index", "SHOULD follow this priority order for scope selection", "2026-07-28"
        ),
    ],
    spec=f"{_SPEC}#scope-selection-strategy",
    description="The first authorization request asks for the scope the 401 named; "
    "without one, for every scope of the resource metadata's scopes_supported; without "
    "those, for no scope at all",
    revisions=(*_FROM_2025_11, "2026-07-28"),
    transports=["http"],
    trigger=trigger("the client sent an authorization request", _first_authorization),
    independent_of=["client.connect"],
)
def scope_selection(run: ScenarioRun) -> Verdict:
    first = _first_authorization(run)[0]
    asked = set(str((first.get("params") or {}).get("scope", "")).split())
    if run.revision == "2026-07-28":
        # 2026-07-28 lets a client that wants refresh tokens add offline_access.
        asked.discard("offline_access")
    challenges = [e for e in _auth(run, endpoint="mcp", status=401) if e["seq"] < first["seq"]]
    metadata = [
        e for e in _auth(run, endpoint="resource-metadata", status=200) if e["seq"] < first["seq"]
    ]
    if not challenges:
        return missing(run, "a 401 from the MCP server before the authorization request")
    named = challenges[-1].get("challenge_scope")
    supported = metadata[-1].get("scopes_supported") if metadata else None
    if named is not None:
        wanted, source = set(str(named).split()), "the scope the 401 named"
    elif supported is not None:
        wanted, source = {str(s) for s in supported}, "the resource's scopes_supported"
    else:
        wanted, source = set(), "neither the 401 nor the resource metadata names a scope"
    evidence = [challenges[-1], *metadata[-1:], first]
    shown = " ".join(sorted(asked)) or "no scope"
    if asked != wanted:
        return violated(
            f"the client asked for {shown}, not {' '.join(sorted(wanted)) or 'no scope'} "
            f"({source})",
            evidence,
        )
    return passed(f"the client asked for {shown} ({source})", evidence)


@check(
    "auth.pre-registered-first",
    requirements=["AUTH-registration"],
    clauses=[
        clause(_SPEC, "Clients supporting all options SHOULD follow", *_FROM_2025_11),
        clause(
            f"{_SPEC}/client-registration",
            "Clients supporting all options SHOULD use",
            "2026-07-28",
        ),
    ],
    spec=f"{_SPEC}#client-registration-approaches",
    description="A client given pre-registered credentials for the server uses them, "
    "although the authorization server also offers dynamic registration: its "
    "authorization request names the pre-registered client_id, with no registration "
    "before it",
    revisions=(*_FROM_2025_11, "2026-07-28"),
    transports=["http"],
    trigger=trigger("the client sent an authorization request", _authorization_requests),
    independent_of=["client.connect"],
)
def pre_registered_first(run: ScenarioRun) -> Verdict:
    first = _authorization_requests(run)[0]
    registered = [e for e in _auth(run, endpoint="register") if e["seq"] < first["seq"]]
    if registered:
        return violated(
            "the client registered dynamically although it was given pre-registered credentials",
            [*registered, first],
        )
    if first.get("client_source") != "pre":
        client_id = (first.get("params") or {}).get("client_id")
        return violated(
            f"the authorization request names client_id {client_id!r}, not the "
            "pre-registered one the client was given",
            [first],
        )
    return passed("the client used the pre-registered client_id it was given", [first])


# Credentials the mock's pre-registration scenario knows (fixtures/auth/pre-registered.json).
PRE_REGISTERED = Authorization(
    client_name=HEADLESS_AUTHORIZATION.client_name,
    redirect_uri=HEADLESS_AUTHORIZATION.redirect_uri,
    client_id="mcp-testbench-pre-registered",
    client_secret="pre-registered-secret",
)


async def connect_and_call(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("call_tool", "write", {})


async def connect_and_call_thrice(session: Session) -> None:
    if (await session.connect()).ok:
        for _ in range(3):
            if not (await session.call("call_tool", "write", {})).ok:
                return


SCENARIOS = [
    Scenario(
        "auth-code-flow",
        "auth/code-flow.json",
        checks=(
            "auth.pkce-s256",
            "auth.resource-parameter",
            "auth.bearer-header-only",
            "auth.prm-discovery-order",
        ),
        drive=connect_and_call,
        description="the MCP endpoint behind OAuth 2.1 (resource metadata at a custom "
        "location named in the 401, dynamic registration, an authorization endpoint that "
        "approves at once); one call",
        requires=frozenset({"auth"}),
    ),
    Scenario(
        "auth-discovery",
        "auth/discovery.json",
        checks=("auth.prm-discovery-order", "auth.as-metadata-order"),
        drive=connect_and_call,
        description="a 401 that names no metadata, metadata at the root only; an issuer "
        "with a path whose metadata is only at the OpenID appended location",
        requires=frozenset({"auth"}),
    ),
    Scenario(
        "auth-pkce-unadvertised",
        "auth/pkce-unadvertised.json",
        checks=("auth.pkce-unadvertised-refused",),
        drive=connect_and_call,
        description="an authorization server whose metadata has no "
        "code_challenge_methods_supported: a client must not start a flow",
        requires=frozenset({"auth"}),
        connect_may_fail=True,
    ),
    Scenario(
        "auth-resource-mismatch",
        "auth/resource-mismatch.json",
        checks=("auth.resource-mismatch-refused",),
        drive=connect_and_call,
        description="the protected resource metadata names another resource: a client "
        "must not use it",
        requires=frozenset({"auth"}),
        connect_may_fail=True,
    ),
    Scenario(
        "auth-iss-wrong",
        "auth/iss-wrong.json",
        checks=("auth.iss-validated",),
        drive=connect_and_call,
        description="the authorization response names another issuer in iss (RFC 9207): "
        "a client must not redeem its code",
        requires=frozenset({"auth"}),
        connect_may_fail=True,
    ),
    *(
        Scenario(
            f"auth-{name}",
            f"auth/{name}.json",
            checks=(check_id,),
            drive=connect_and_call,
            description=description,
            requires=frozenset({"auth"}),
            connect_may_fail=True,
        )
        for name, check_id, description in (
            (
                "iss-normalized",
                "auth.iss-validated",
                "the authorization response's iss is the issuer with a trailing slash, "
                "equal only once normalised (RFC 9207 compares strings): a client must not "
                "redeem its code",
            ),
            (
                "iss-unexpected",
                "auth.iss-validated",
                "the metadata does not advertise iss, yet the authorization response names "
                "another issuer in it: a client must compare it all the same",
            ),
            (
                "iss-missing",
                "auth.iss-validated",
                "the metadata advertises iss and the authorization response carries none "
                "(RFC 9207): a client must reject it",
            ),
            (
                "metadata-issuer-mismatch",
                "auth.metadata-issuer-validated",
                "the authorization server's metadata names another issuer than the one its "
                "URL was formed from (RFC 8414 §3.3): a client must not use it",
            ),
        )
    ),
    *(
        Scenario(
            f"auth-token-auth-{method}",
            f"auth/token-auth-{method}.json",
            checks=("auth.token-endpoint-auth-method",),
            drive=connect_and_call,
            description=f"an authorization server that supports client_secret_{method} "
            "only: the client registers for it and must authenticate that way at the "
            "token endpoint",
            requires=frozenset({"auth"}),
        )
        for method in ("basic", "post")
    ),
    Scenario(
        "auth-refresh",
        "auth/refresh.json",
        checks=("auth.refresh-token-rotated", "auth.refresh-grant-registered"),
        drive=connect_and_call_thrice,
        description="access tokens good for one MCP request each, refresh tokens rotated "
        "at every refresh; three calls",
        requires=frozenset({"auth"}),
    ),
    Scenario(
        "auth-legacy-metadata",
        "auth/legacy-metadata.json",
        checks=("auth.legacy-metadata-then-defaults",),
        drive=connect_and_call,
        description="2025-03-26: no resource metadata; the MCP server's origin serves "
        "authorization server metadata naming endpoints other than the default ones",
        requires=frozenset({"auth"}),
    ),
    Scenario(
        "auth-legacy-defaults",
        "auth/legacy-defaults.json",
        checks=("auth.legacy-metadata-then-defaults",),
        drive=connect_and_call,
        description="2025-03-26: no metadata of any kind; the authorization server is at "
        "the default endpoints of the MCP server's origin",
        requires=frozenset({"auth"}),
    ),
    Scenario(
        "auth-migration",
        "auth/migration.json",
        checks=("auth.tokens-stay-with-their-server",),
        drive=connect_and_call_thrice,
        description="after two tool calls the resource trusts a second authorization "
        "server only (its metadata names it, the first's tokens get 401); three calls",
        requires=frozenset({"auth"}),
    ),
    *(
        Scenario(
            f"auth-scope-{variant}",
            f"auth/scope-{variant}.json",
            checks=("auth.scope-selection",),
            drive=connect_and_call,
            description=description,
            requires=frozenset({"auth"}),
        )
        for variant, description in (
            (
                "challenge",
                "the 401 names a scope, and the resource metadata lists more: the client "
                "should ask for the 401's",
            ),
            ("supported", "no scope in the 401; the resource metadata lists two"),
            ("none", "no scope in the 401 nor in the resource metadata"),
        )
    ),
    Scenario(
        "auth-pre-registered",
        "auth/pre-registered.json",
        checks=("auth.pre-registered-first", "auth.token-endpoint-auth-method"),
        drive=connect_and_call,
        description="the client is given pre-registered credentials (a client id and "
        "secret the authorization server knows), which it should use although the server "
        "also offers dynamic registration",
        requires=frozenset({"auth"}),
        authorization=PRE_REGISTERED,
    ),
    Scenario(
        "auth-step-up",
        "auth/step-up.json",
        checks=("auth.step-up",),
        drive=connect_and_call,
        description="a token without the scope the write tool needs: 403 insufficient_scope "
        "naming it, then the call succeeds with a token that has it",
        requires=frozenset({"auth"}),
    ),
    Scenario(
        "auth-step-up-endless",
        "auth/step-up-endless.json",
        checks=("auth.step-up-bounded",),
        drive=connect_and_call,
        description="every call of the write tool gets 403 insufficient_scope, whatever "
        "the token: the client must stop retrying",
        requires=frozenset({"auth"}),
    ),
]
