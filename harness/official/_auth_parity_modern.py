"""The official runner's verdicts on its 2026-07-28-only authorization client scenarios.

Eleven scenarios of the runner (0.2.0-alpha.12, dist/index.js: `Eo`, `es`, `ts`, `ns` and
`os` to `fs`) run the shared servers (`J`, `X`, whose checks `_auth_parity` works out)
with one departure each, and add a check of their own: that the client refused a resource
metadata document naming another resource, asked for offline_access only when it is
supported (SEP-2207), registered anew with an authorization server the resource moved to
and never showed it the former one's client id (SEP-2352), compared the RFC 9207 `iss`
parameter as a string with the issuer it recorded, and refused metadata whose issuer is
not the one it looked up (SEP-2468). Most are worked out when the run ends, from what
happened at all: here from the mock's `auth` transcript entries.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from harness.official._auth_parity import MODERN_ONLY_AUTH, auth_verdicts
from harness.official._parity import OfficialVerdict

__all__ = ["AUTH_RULES_MODERN"]

Entry = Mapping[str, Any]
Rule = Callable[[str, Sequence[Entry]], Iterator[OfficialVerdict]]


def _auth(entries: Sequence[Entry], server: str, endpoint: str, method: str) -> list[Entry]:
    return [
        e
        for e in entries
        if e.get("kind") == "auth"
        and e.get("server") == server
        and e.get("endpoint") == endpoint
        and e.get("method") == method
    ]


def _registrations(entries: Sequence[Entry]) -> list[Entry]:
    # `J` takes a POST to /register whether or not its metadata names the endpoint.
    return [
        e
        for e in entries
        if e.get("kind") == "auth"
        and e.get("server") == "authorization"
        and e.get("method") == "POST"
        and str(e.get("path", "")).endswith("/register")
    ]


def _evidence(entries: Sequence[Entry]) -> tuple[int, ...]:
    return tuple(int(e.get("seq", -1)) for e in entries)


def _request(entries: Sequence[Entry], entry: Entry) -> Entry | None:
    number = entry.get("request")
    return next(
        (e for e in entries if e.get("kind") == "http_request" and e.get("request") == number),
        None,
    )


def _form(request: Entry | None) -> dict[str, str]:
    if request is None:
        return {}
    return dict(parse_qsl(str(request.get("body", "")), keep_blank_values=True))


def _basic_client_id(request: Entry | None) -> str | None:
    """`ns.basicAuthClientId`: the part before the first colon of a `Basic ` header,
    decoded as Node's Buffer decodes (characters outside base64 skipped)."""
    header = (request.get("headers") or {}).get("authorization") if request is not None else None
    if not (isinstance(header, str) and header.startswith("Basic ")):
        return None
    encoded = re.sub(r"[^A-Za-z0-9+/\-_]", "", header[6:]).replace("-", "+").replace("_", "/")
    decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8", "replace")
    return decoded.split(":")[0]


def _scope(entry: Entry) -> list[str]:
    scope = (entry.get("query") or {}).get("scope") or ""
    return scope.split(" ") if scope else []


# -- the scenarios' own checks ---------------------------------------------------------------


def _resource_mismatch(entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    """`Eo`: the resource metadata was asked and no authorization request followed."""
    prm = _auth(entries, "resource", "resource-metadata", "GET")
    authorized = _auth(entries, "authorization", "authorize", "GET")
    if not prm:
        reason = "Not testable: the resource metadata was never asked"
        yield OfficialVerdict("resource-mismatch-rejected", "FAILURE", reason)
        return
    yield OfficialVerdict(
        "resource-mismatch-rejected",
        "FAILURE" if authorized else "SUCCESS",
        "went on to the authorization endpoint though the metadata named another resource"
        if authorized
        else "read the resource metadata and did not authorize",
        _evidence(prm[:1] + authorized[:1]),
    )


def _offline_access_scope(entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    """`es`: per registration, the refresh_token grant (a SHOULD); per authorization
    request, offline_access (a MAY: INFO when left out); the latter backfilled."""
    registrations = _registrations(entries)
    for entry in registrations:
        grants = _grant_types(_request(entries, entry))
        yield OfficialVerdict(
            "sep-2207-client-metadata-grant-types",
            "SUCCESS" if "refresh_token" in grants else "WARNING",
            f"grant_types {' '.join(grants) or 'none'}",
            _evidence([entry]),
        )
    authorized = _auth(entries, "authorization", "authorize", "GET")
    document = any(
        str((e.get("query") or {}).get("client_id", "")).startswith("http") for e in authorized
    )
    if not registrations:
        # The runner fetches a client ID metadata document URL when the run ends; here it
        # is never fetched, as there when the fetch fails.
        yield OfficialVerdict(
            "sep-2207-client-metadata-grant-types",
            "INFO",
            "a client ID metadata document, not fetched"
            if document
            else "no registration and no client ID metadata document",
        )
    for entry in authorized:
        asked = "offline_access" in _scope(entry)
        yield OfficialVerdict(
            "sep-2207-offline-access-requested",
            "SUCCESS" if asked else "INFO",
            "offline_access asked for" if asked else "offline_access not asked for (a MAY)",
            _evidence([entry]),
        )
    if not authorized:
        yield OfficialVerdict(
            "sep-2207-offline-access-requested", "FAILURE", "no authorization request came"
        )


def _grant_types(request: Entry | None) -> list[str]:
    """The registration's grant_types (its body is JSON)."""
    try:
        body = json.loads(str(request.get("body", ""))) if request is not None else None
    except ValueError:
        body = None
    grants = body.get("grant_types") if isinstance(body, dict) else None
    return [str(g) for g in grants] if isinstance(grants, list) else []


def _offline_access_not_supported(entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    """`ts`: per authorization request, no offline_access (a MUST NOT); backfilled."""
    authorized = _auth(entries, "authorization", "authorize", "GET")
    for entry in authorized:
        asked = "offline_access" in _scope(entry)
        yield OfficialVerdict(
            "sep-2207-offline-access-not-requested",
            "FAILURE" if asked else "SUCCESS",
            "asked for offline_access, which the server does not list"
            if asked
            else "did not ask for offline_access",
            _evidence([entry]),
        )
    if not authorized:
        yield OfficialVerdict(
            "sep-2207-offline-access-not-requested", "FAILURE", "no authorization request came"
        )


def _migration(entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    """`ns`: a registration at the new server; the former server's client id never seen
    at the new one's authorization or token endpoint. Which server handled a request is
    the entry's `issuer`; the move is the `migration` entry."""
    moves = [e for e in entries if e.get("kind") == "auth" and e.get("endpoint") == "migration"]
    former = str(moves[0].get("former_issuer")) if moves else None
    new = str(moves[0].get("issuer")) if moves else None
    registrations = _registrations(entries)
    former_ids = {str(e.get("client_id")) for e in registrations if e.get("issuer") == former} - {
        "None"
    }
    at_new = [e for e in registrations if new is not None and e.get("issuer") == new]
    reused: list[Entry] = []
    for entry in _auth(entries, "authorization", "authorize", "GET"):
        if entry.get("issuer") == new and (entry.get("query") or {}).get("client_id") in former_ids:
            reused.append(entry)
    for entry in _auth(entries, "authorization", "token", "POST"):
        request = _request(entries, entry)
        presented = _form(request).get("client_id")
        if presented is None:
            presented = _basic_client_id(request)
        if entry.get("issuer") == new and presented in former_ids:
            reused.append(entry)
    yield OfficialVerdict(
        "sep-2352-reregister-on-as-change",
        "SUCCESS" if at_new else "FAILURE",
        "registered with the new authorization server"
        if at_new
        else "no registration at the new authorization server",
        _evidence(at_new[:1]),
    )
    for check in ("sep-2352-no-reuse-on-as-change", "sep-2352-no-cross-as-credential-reuse"):
        yield OfficialVerdict(
            check,
            "FAILURE" if reused else "SUCCESS",
            "the former server's client id was shown to the new one"
            if reused
            else "the former server's client id was never shown to the new one",
            _evidence(reused[:1]),
        )


def _token_requested(entries: Sequence[Entry]) -> list[Entry]:
    return _auth(entries, "authorization", "token", "POST")


def _proceeded(check: str) -> Callable[[Sequence[Entry]], Iterator[OfficialVerdict]]:
    """`os`, `ss`: the client went on to the token endpoint (any token request)."""

    def rule(entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
        tokens = _token_requested(entries)
        yield OfficialVerdict(
            check,
            "SUCCESS" if tokens else "FAILURE",
            "went on to the token endpoint" if tokens else "never went on to the token endpoint",
            _evidence(tokens[:1]),
        )

    return rule


def _declined(check: str) -> Callable[[Sequence[Entry]], Iterator[OfficialVerdict]]:
    """`as`: once the metadata was read and the authorization endpoint reached, the
    client must not redeem the code (no token request); a FAILURE ('not testable') when
    it never got that far."""

    def rule(entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
        metadata = _auth(entries, "authorization", "server-metadata", "GET")
        authorized = _auth(entries, "authorization", "authorize", "GET")
        tokens = _token_requested(entries)
        if not (metadata and authorized):
            where = "authorization endpoint" if metadata else "authorization server metadata"
            yield OfficialVerdict(check, "FAILURE", f"Not testable: the {where} never reached")
            return
        yield OfficialVerdict(
            check,
            "FAILURE" if tokens else "SUCCESS",
            "redeemed the code at the token endpoint"
            if tokens
            else "declined the authorization response before any token request",
            _evidence(authorized[:1] + tokens[:1]),
        )

    return rule


def _metadata_issuer(entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    """`fs`: with the metadata read, none of its endpoints used (registration,
    authorization or token); a FAILURE ('not testable') when it was never read."""
    check = "sep-2468-client-validate-metadata-issuer"
    metadata = _auth(entries, "authorization", "server-metadata", "GET")
    if not metadata:
        yield OfficialVerdict(check, "FAILURE", "Not testable: the metadata was never read")
        return
    used = [
        *_registrations(entries),
        *_auth(entries, "authorization", "authorize", "GET"),
        *_token_requested(entries),
    ]
    yield OfficialVerdict(
        check,
        "FAILURE" if used else "SUCCESS",
        "used an endpoint of the metadata whose issuer does not match"
        if used
        else "used none of the endpoints of the mismatched metadata",
        _evidence(metadata[:1] + used[:1]),
    )


_OWN: Mapping[str, Callable[[Sequence[Entry]], Iterator[OfficialVerdict]]] = {
    "auth/resource-mismatch": _resource_mismatch,
    "auth/offline-access-scope": _offline_access_scope,
    "auth/offline-access-not-supported": _offline_access_not_supported,
    "auth/authorization-server-migration": _migration,
    "auth/iss-supported": _proceeded("sep-2468-client-compare-iss-supported"),
    "auth/iss-not-advertised": _proceeded("sep-2468-client-proceed-no-iss"),
    "auth/iss-supported-missing": _declined("sep-2468-client-reject-missing-iss"),
    "auth/iss-wrong-issuer": _declined("sep-2468-client-compare-iss-supported"),
    "auth/iss-unexpected": _declined("sep-2468-client-compare-iss-unadvertised"),
    "auth/iss-normalized": _declined("sep-2468-client-no-normalization"),
    "auth/metadata-issuer-mismatch": _metadata_issuer,
}


def _rule(scenario: str) -> Rule:
    def rule(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
        yield from auth_verdicts(scenario, entries, revision)
        yield from _OWN[scenario](entries)

    return rule


#: The rules by scenario, as `_parity.official_verdicts` takes them: (revision, entries).
AUTH_RULES_MODERN: Mapping[str, Rule] = {name: _rule(name) for name in MODERN_ONLY_AUTH}
