"""The official runner's verdicts on its authorization client scenarios, from the transcript.

The runner's auth scenarios (0.2.0-alpha.12, dist/index.js) share two servers: `J`, the
authorization server, which records a check per request it gets (metadata, registration,
authorization, token; PKCE judged on the way), and `X`, the protected MCP endpoint, whose
token verifier `Y` records one check per bearer token it is shown. The metadata variants
(`eo`, served by `to`) backfill a FAILURE for each step that never happened; the token
endpoint ones (`_o`) judge how each token request authenticated, and backfill that check
only. Both then add the RFC 8707 checks (`Qa`) from the last authorization request, the
last token request and the last resource metadata served. The step-up scenarios (`fo`,
`po`) have a resource of their own that lets the lifecycle through unchecked and judge the
authorization requests' scopes, or count them. At 2026-07-28 the registration route also
judges the application type (SEP-837).

Here the same rules read the mock's transcript: its `auth` entries (which server, which
endpoint, the method and path, the resource the metadata named, whether a bearer token was
one it issued) and the `http_request` entries they belong to (the token request's form,
the Authorization header). The mock's endpoints are at the runner's paths, so an entry for
an endpoint is a request the runner's route would have taken; a request the mock refused is
counted as the runner's lenient server counted it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from harness.official._client_checks import SCORED_CLIENT
from harness.official._parity import OfficialVerdict

__all__ = ["AUTH_RULES", "AUTH_SCENARIO_RULES", "MODERN_ONLY_AUTH", "AuthRules", "auth_verdicts"]

Entry = Mapping[str, Any]

_PRM_ROOT = "/.well-known/oauth-protected-resource"
_AS_ROOT = "/.well-known/oauth-authorization-server"
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


_STEPS: tuple[str, ...] = (
    "authorization-server-metadata",
    "client-registration",
    "authorization-request",
    "token-request",
)


@dataclass(frozen=True)
class AuthRules:
    """What tells one of the runner's auth scenarios from another, for its rules."""

    backfilled: tuple[str, ...]
    """The ids recorded as a FAILURE ('Expected Check Missing') when never emitted."""
    trap_root_prm: bool = False
    """A root resource metadata request is a FAILURE (prm-priority-order)."""
    trap_root_as: bool = False
    """The issuer has a path: a root authorization server metadata request is a FAILURE
    (authorization-server-metadata-wrong-path)."""
    token_auth_method: str | None = None
    """`_o`: the one method the token endpoint takes; each token request is judged on how
    it authenticated (token-endpoint-auth-method)."""
    scope_check: str | None = None
    """`co`, `lo`, `uo`: the id that judges each authorization request's scope (a SUCCESS,
    else a WARNING: a SHOULD), by `_SCOPE_RULES`."""
    resource_checks: bool = True
    """Whether `Qa`'s RFC 8707 checks are added (the scope scenarios add none)."""
    client_id: str | None = None
    """`ao`: the client ID each authorization request should carry (cimd-client-id-used,
    a SUCCESS, else a WARNING: a SHOULD)."""
    pre_registered: tuple[str, str] | None = None
    """`ko`: the client id and secret each token request must carry in HTTP Basic
    (pre-registration-auth)."""
    step_up: tuple[str, str] | None = None
    """`fo`: the scope the first authorization request should ask for (the 401's) and the
    one the second should add (the 403's): scope-step-up-initial, -escalation, and from
    2026-07-28 sep-2350-scope-union-on-reauth (the first kept in the second)."""
    retry_limit: int | None = None
    """`po`: at most this many authorization requests (scope-retry-limit)."""
    bearer: str = "sdk"
    """Which bearer tokens the resource verifies: "sdk" (requireBearerAuth), "prefix"
    (`fo`'s own middleware: an Authorization starting `Bearer `), "none" (`po`'s, which
    verifies none)."""


_TOKEN_AUTH = "token-endpoint-auth-method"
_STEP_UP_INITIAL = "scope-step-up-initial"
_STEP_UP_ESCALATION = "scope-step-up-escalation"
_SCOPE_UNION = "sep-2350-scope-union-on-reauth"
_RETRY_LIMIT = "scope-retry-limit"
_APPLICATION_TYPE = "sep-837-application-type-present"
#: The revisions the runner serves with its 2025-11-25 wire (`At`): there its registration
#: route records no SEP-837 check.
_HANDSHAKE_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_PRE_REGISTRATION = "pre-registration-auth"
_CIMD = "cimd-client-id-used"


def _scope_includes(*wanted: str) -> Callable[[list[str]], bool]:
    return lambda asked: all(w in asked for w in wanted)


#: The rule of each scope check on the scopes an authorization request asked for.
_SCOPE_RULES: Mapping[str, Callable[[list[str]], bool]] = {
    "scope-from-www-authenticate": _scope_includes("mcp:basic"),
    "scope-from-scopes-supported": _scope_includes("mcp:basic", "mcp:read", "mcp:write"),
    "scope-omitted-when-undefined": lambda asked: not asked,
}

#: The authorization scenarios the runner has at 2026-07-28 alone (scored there only).
MODERN_ONLY_AUTH = tuple(
    name
    for name in SCORED_CLIENT["2026-07-28"]
    if name.startswith("auth/") and name not in SCORED_CLIENT["2025-11-25"]
)

AUTH_SCENARIO_RULES: Mapping[str, AuthRules] = {
    # `to`, one per entry of `eo`: the path-based resource metadata is expected.
    "auth/metadata-default": AuthRules(("prm-pathbased-requested", *_STEPS), trap_root_prm=True),
    "auth/metadata-var1": AuthRules(("prm-pathbased-requested", *_STEPS)),
    "auth/metadata-var2": AuthRules(_STEPS, trap_root_as=True),
    "auth/metadata-var3": AuthRules(_STEPS, trap_root_as=True),
    # `_o`: the token endpoint's method.
    **{
        f"auth/token-endpoint-auth-{short}": AuthRules((_TOKEN_AUTH,), token_auth_method=method)
        for short, method in (
            ("basic", "client_secret_basic"),
            ("post", "client_secret_post"),
            ("none", "none"),
        )
    },
    # `ao`: the client ID metadata document URL as the client ID, backfilled.
    "auth/basic-cimd": AuthRules(
        (_CIMD,),
        resource_checks=False,
        client_id="https://conformance-test.local/client-metadata.json",
    ),
    # `ko`: the pre-registered credentials, backfilled; no RFC 8707 checks.
    "auth/pre-registration": AuthRules(
        (_PRE_REGISTRATION,),
        resource_checks=False,
        pre_registered=("pre-registered-client", "pre-registered-secret"),
    ),
    # `co`, `lo`, `uo`: the scope asked for, backfilled; no RFC 8707 checks.
    **{
        f"auth/{check}": AuthRules((check,), scope_check=check, resource_checks=False)
        for check in _SCOPE_RULES
    },
    # `fo`: the 401 names mcp:basic, a tools/call needs mcp:write (a 403 naming it alone).
    "auth/scope-step-up": AuthRules(
        (_STEP_UP_INITIAL, _STEP_UP_ESCALATION),
        resource_checks=False,
        step_up=("mcp:basic", "mcp:write"),
        bearer="prefix",
    ),
    # `po`: every request with a token refused with 403; the authorizations counted.
    "auth/scope-retry-limit": AuthRules((), resource_checks=False, retry_limit=3, bearer="none"),
    # 2026-07-28 only: the shared servers' checks, none backfilled, no RFC 8707 checks;
    # each scenario's own check is `_auth_parity_modern`'s.
    **dict.fromkeys(MODERN_ONLY_AUTH, AuthRules((), resource_checks=False)),
}


def _basic(request: Entry | None) -> str | None:
    """The decoded credentials of an Authorization that starts `Basic ` (None without one),
    decoded as Node's Buffer does: what is no base64 character skipped, never a failure."""
    header = (request.get("headers") or {}).get("authorization") if request is not None else None
    if not (isinstance(header, str) and header.startswith("Basic ")):
        return None
    encoded = re.sub(r"[^A-Za-z0-9+/\-_]", "", header[6:]).replace("-", "+").replace("_", "/")
    return base64.b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8", "replace")


def _client_auth(request: Entry | None, form: Mapping[str, str]) -> tuple[str, str]:
    """`mo` and `ho`: the method a token request authenticated with (an Authorization
    starting `Basic `, else a client_secret in the body, else none), and what is wrong
    with a Basic header ("" when its decoded value has the colon)."""
    decoded = _basic(request)
    if decoded is not None:
        return "client_secret_basic", "" if ":" in decoded else "missing colon separator"
    return ("client_secret_post" if form.get("client_secret") else "none"), ""


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _form(request: Entry | None) -> dict[str, str]:
    """The request body as express's json() and urlencoded() parsers give it."""
    if request is None:
        return {}
    body = str(request.get("body", ""))
    kind = str((request.get("headers") or {}).get("content-type", "")).lower()
    if "json" in kind:
        try:
            value = json.loads(body)
        except ValueError:
            return {}
        return (
            {k: v for k, v in value.items() if isinstance(v, str)}
            if isinstance(value, dict)
            else {}
        )
    if "x-www-form-urlencoded" in kind:
        return dict(parse_qsl(body, keep_blank_values=True))
    return {}


def _seq(entry: Entry) -> int:
    return int(entry.get("seq", -1))


def _bearer_shown(request: Entry, kind: str = "sdk") -> str | None:
    """The token requireBearerAuth hands its verifier: `Authorization` split on single
    spaces, the first part `bearer` (any case) and the second non-empty; else None (a
    401 without a verification). `prefix`: what follows `Bearer ` (even nothing)."""
    value = (request.get("headers") or {}).get("authorization")
    if kind == "prefix":
        return value[7:] if isinstance(value, str) and value.startswith("Bearer ") else None
    if not isinstance(value, str) or not value:
        return None
    parts = value.split(" ")
    if parts[0].lower() != "bearer" or len(parts) < 2 or not parts[1]:
        return None
    return parts[1]


def _valid_uri(value: str) -> str:
    """Why `new URL(value)` fails or has a fragment ("" when a valid resource)."""
    if not _URI_SCHEME.match(value):
        return "invalid URI format"
    if "#" in value and value.split("#", 1)[1]:
        return "contains fragment (not allowed per RFC 8707)"
    return ""


def auth_verdicts(
    scenario: str, entries: Sequence[Entry], revision: str = "2025-11-25"
) -> Iterator[OfficialVerdict]:
    """The runner's checks for one of its auth scenarios run at `revision`, in the order
    it records them."""
    rules = AUTH_SCENARIO_RULES[scenario]
    requests = {e.get("request"): e for e in entries if e.get("kind") == "http_request"}
    found: set[str] = set()
    challenge: str | None = None
    auth_resource: str | None = None
    token_resource: str | None = None
    prm_resource: str | None = None
    authorizations = 0

    def verdict(check: str, ok: bool, reason: str, entry: Entry) -> OfficialVerdict:
        found.add(check)
        return OfficialVerdict(check, "SUCCESS" if ok else "FAILURE", reason, (_seq(entry),))

    for entry in entries:
        if entry.get("kind") != "auth":
            continue
        server, endpoint = entry.get("server"), entry.get("endpoint")
        method, path = entry.get("method"), entry.get("path")
        request = requests.get(entry.get("request"))
        if server == "resource" and endpoint == "resource-metadata" and method == "GET":
            prm_resource = entry.get("resource")
            yield verdict("prm-pathbased-requested", True, f"GET {path}", entry)
        elif server == "resource" and path == _PRM_ROOT and rules.trap_root_prm:
            yield verdict(
                "prm-priority-order",
                False,
                "the root resource metadata location was asked, on a server whose "
                "metadata is path-based",
                entry,
            )
        elif server == "resource" and endpoint == "mcp" and method == "POST":
            if entry.get("open") or rules.bearer == "none":
                continue  # let through, or refused, without a verification
            token = _bearer_shown(request, rules.bearer) if request is not None else None
            if token is None:
                continue
            issued = bool(entry.get("issued_token"))
            yield verdict(
                "valid-bearer-token" if issued else "invalid-bearer-token",
                issued,
                "a bearer token the authorization server issued"
                if issued
                else "a bearer token the authorization server never issued",
                entry,
            )
        elif server != "authorization":
            continue
        elif endpoint == "server-metadata" and method == "GET":
            yield verdict("authorization-server-metadata", True, f"GET {path}", entry)
        elif path == _AS_ROOT and rules.trap_root_as and method == "GET":
            yield verdict(
                "authorization-server-metadata-wrong-path",
                False,
                "the metadata was asked at the root of an issuer with a path",
                entry,
            )
        elif endpoint == "authorize" and method == "GET":
            query = entry.get("query") or {}
            challenge = query.get("code_challenge") or None
            code_method = query.get("code_challenge_method")
            auth_resource = query.get("resource")
            authorizations += 1
            yield verdict("authorization-request", True, f"GET {path}", entry)
            yield verdict(
                "pkce-code-challenge-sent",
                challenge is not None,
                "code_challenge sent" if challenge else "no code_challenge",
                entry,
            )
            yield verdict(
                "pkce-s256-method-used",
                code_method == "S256",
                f"code_challenge_method {code_method or 'not specified'}",
                entry,
            )
            if rules.client_id is not None:
                client_id = query.get("client_id")
                found.add(_CIMD)
                yield OfficialVerdict(
                    _CIMD,
                    "SUCCESS" if client_id == rules.client_id else "WARNING",
                    f"client_id {client_id!r}",
                    (_seq(entry),),
                )
            if rules.scope_check is not None:
                scope = query.get("scope") or ""
                asked = scope.split(" ") if scope else []
                if rules.scope_check == "scope-omitted-when-undefined":
                    asked = [a for a in asked if a.strip()]  # a blank scope counts as omitted
                found.add(rules.scope_check)
                yield OfficialVerdict(
                    rules.scope_check,
                    "SUCCESS" if _SCOPE_RULES[rules.scope_check](asked) else "WARNING",
                    f"scope {scope!r}" if scope else "no scope parameter",
                    (_seq(entry),),
                )
            if rules.step_up is not None and authorizations <= 2:
                yield from _step_up(rules.step_up, authorizations, query, revision, entry, found)
        elif endpoint == "token" and method == "POST":
            form = _form(request)
            token_resource = form.get("resource")
            yield verdict("token-request", True, f"grant_type {form.get('grant_type')}", entry)
            if form.get("grant_type") == "authorization_code":
                verifier = form.get("code_verifier") or None
                yield verdict(
                    "pkce-code-verifier-sent",
                    verifier is not None,
                    "code_verifier sent" if verifier else "no code_verifier",
                    entry,
                )
                matches = verifier is not None and challenge is not None
                matches = matches and _s256(verifier or "") == challenge
                yield verdict(
                    "pkce-verifier-matches-challenge",
                    matches,
                    "code_verifier matches code_challenge (S256)"
                    if matches
                    else "no challenge, no verifier, or a verifier that does not match",
                    entry,
                )
            if rules.pre_registered is not None:
                decoded = _basic(request)
                # `split(":")`, the first two parts compared.
                parts = [*decoded.split(":"), ""][:2] if decoded is not None else None
                yield verdict(
                    _PRE_REGISTRATION,
                    parts == list(rules.pre_registered),
                    "no Basic authentication"
                    if parts is None
                    else f"client_id {parts[0]!r}"
                    + (
                        ""
                        if parts == list(rules.pre_registered)
                        else ", not the pre-registered one"
                    ),
                    entry,
                )
            if rules.token_auth_method is not None:
                used, problem = _client_auth(request, form)
                expected = rules.token_auth_method
                yield verdict(
                    _TOKEN_AUTH,
                    used == expected and not problem,
                    f"Basic auth header but {problem}"
                    if problem
                    else f"{used}, the method the server supports ({expected})",
                    entry,
                )
        elif method == "POST" and str(path).endswith("/register"):
            # The route is there even when the metadata names no registration endpoint.
            yield verdict("client-registration", True, f"POST {path}", entry)
            if revision not in _HANDSHAKE_REVISIONS:
                # SEP-837 (2026-07-28): the registration names its application type.
                kind = _form(request).get("application_type")
                yield verdict(
                    _APPLICATION_TYPE,
                    kind in ("native", "web"),
                    f"application_type {kind!r}" if kind is not None else "no application_type",
                    entry,
                )
    for check in rules.backfilled:
        if check not in found:
            yield OfficialVerdict(check, "FAILURE", f"Expected Check Missing: {check}")
    modern = revision not in _HANDSHAKE_REVISIONS
    if rules.step_up is not None and _STEP_UP_ESCALATION not in found and modern:
        yield OfficialVerdict(_SCOPE_UNION, "FAILURE", "no second authorization request")
    if rules.retry_limit is not None:
        limit = rules.retry_limit
        yield OfficialVerdict(
            _RETRY_LIMIT,
            "SUCCESS" if 0 < authorizations <= limit else "FAILURE",
            f"{authorizations} authorization requests (at most {limit})",
        )
    if rules.resource_checks:
        yield from _resource_checks(auth_resource, token_resource, prm_resource)


def _step_up(
    scopes: tuple[str, str],
    attempt: int,
    query: Mapping[str, str],
    revision: str,
    entry: Entry,
    found: set[str],
) -> Iterator[OfficialVerdict]:
    """`fo`'s verdicts on its first and second authorization requests: each a SUCCESS when
    it asked for the scope wanted, else a WARNING (a SHOULD)."""
    scope = query.get("scope") or ""
    asked = scope.split(" ") if scope else []
    initial, escalated = scopes
    said = f"scope {scope!r}" if scope else "no scope parameter"
    judged = (
        [(_STEP_UP_INITIAL, initial)]
        if attempt == 1
        else [(_STEP_UP_ESCALATION, escalated)]
        + ([(_SCOPE_UNION, initial)] if revision not in _HANDSHAKE_REVISIONS else [])
    )
    for check, wanted in judged:
        found.add(check)
        yield OfficialVerdict(
            check,
            "SUCCESS" if wanted in asked else "WARNING",
            f"{said} (wanted: {wanted})",
            (_seq(entry),),
        )


def _resource_checks(
    authorization: str | None, token: str | None, prm: str | None
) -> Iterator[OfficialVerdict]:
    """`Qa`: RFC 8707 from the last authorization request, the last token request and
    the resource the last metadata served named (None: absent)."""
    for check, value, where in (
        ("resource-parameter-in-authorization", authorization, "authorization"),
        ("resource-parameter-in-token", token, "token"),
    ):
        yield OfficialVerdict(
            check,
            "SUCCESS" if value else "FAILURE",
            f"resource {value!r}" if value else f"no resource parameter in the {where} request",
        )
    given = authorization or token
    if given:
        problem = _valid_uri(given)
        yield OfficialVerdict(
            "resource-parameter-valid-uri",
            "FAILURE" if problem else "SUCCESS",
            problem or f"{given!r} has a scheme and no fragment",
        )
    if authorization and token:
        same = authorization == token
        yield OfficialVerdict(
            "resource-parameter-consistency",
            "SUCCESS" if same else "FAILURE",
            "the same in both requests" if same else f"{authorization!r} then {token!r}",
        )
    sent = [
        (w, v) for w, v in (("authorization", authorization), ("token", token)) if v is not None
    ]
    if prm is not None and sent:
        differ = [w for w, v in sent if v != prm]
        yield OfficialVerdict(
            "resource-parameter-matches-prm",
            "FAILURE" if differ else "SUCCESS",
            f"the {' and '.join(differ)} request sent another value than {prm!r}"
            if differ
            else f"exactly {prm!r}, as the resource metadata published it",
        )


def _rule(scenario: str) -> Callable[[str, Sequence[Entry]], Iterator[OfficialVerdict]]:
    def rule(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
        return auth_verdicts(scenario, entries, revision)

    return rule


#: The rules by scenario, as `_parity.official_verdicts` takes them: (revision, entries).
AUTH_RULES: Mapping[str, Callable[[str, Sequence[Entry]], Iterator[OfficialVerdict]]] = {
    name: _rule(name) for name in AUTH_SCENARIO_RULES
}
