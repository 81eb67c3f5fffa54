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

from harness._catalogue import check
from harness._run import Scenario, ScenarioRun, Session
from harness._triggers import trigger
from harness._verdicts import Verdict, fail, passed
from harness.suite._evidence import missing

__all__ = ["SCENARIOS"]

_FROM_2025_03 = ("2025-03-26", "2025-06-18", "2025-11-25")
_FROM_2025_06 = ("2025-06-18", "2025-11-25")
_SPEC = "basic/authorization"


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
    level="MUST",
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
            return fail("an authorization request carries no code_challenge (PKCE)", [request])
        if method != "S256":
            shown = "no code_challenge_method (plain)" if method is None else repr(method)
            return fail(f"an authorization request uses {shown}, not S256", [request])
    redeemed = [
        e
        for e in _token_requests(run)
        if (e.get("params") or {}).get("grant_type") == "authorization_code"
    ]
    refused = [e for e in redeemed if e.get("outcome") == "invalid_grant"]
    if refused:
        return fail("the token endpoint refused the code: the code_verifier did not match", refused)
    return passed(f"{len(requests)} authorization request(s) with an S256 code_challenge", requests)


@check(
    "auth.resource-parameter",
    requirements=["AUTH-resource"],
    level="MUST",
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
            return fail(f"{what} carries no resource parameter", [metadata[0], request])
        if _canonical(str(resource)) != wanted:
            return fail(
                f"{what} names resource {resource!r}, not {wanted!r}", [metadata[0], request]
            )
    return passed(f"every authorization and token request names {wanted}", [*metadata, *requests])


@check(
    "auth.bearer-header-only",
    requirements=["AUTH-bearer"],
    level="MUST",
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
        return fail("the client sent an access token in the query string", [first, *in_query])
    leaked = [e for e in after if e.get("server") == "authorization" and e.get("issued_token")]
    if leaked:
        return fail("the client sent its access token to the authorization server", leaked)
    mcp = [e for e in after if e.get("endpoint") == "mcp"]
    bare = [e for e in mcp if not e.get("bearer_header")]
    if bare:
        return fail(
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


async def connect_and_call(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("call_tool", "write", {})


SCENARIOS = [
    Scenario(
        "auth-code-flow",
        "auth/code-flow.json",
        checks=("auth.pkce-s256", "auth.resource-parameter", "auth.bearer-header-only"),
        drive=connect_and_call,
        description="the MCP endpoint behind OAuth 2.1 (resource metadata named in the 401, "
        "dynamic registration, an authorization endpoint that approves at once); one call",
        requires=frozenset({"auth"}),
    ),
]
