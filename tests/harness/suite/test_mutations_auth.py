"""Mutants of the reference client's OAuth flow: each breaks one authorization rule and
must fail exactly the checks of that rule (harness/suite/auth.py); the unbroken
reference client passes the same runs. A mutant the server refuses (no PKCE, a token in
the query) never gets connected: the checks of the steps it never reached are BLOCKED by
its failed connect, never passed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from _mutation import Case, assert_mutant_fails_exactly, assert_reference_passes, run_case

from harness.clients import Authorization, ClientError, ReferenceClient
from harness.clients.reference._auth import OAuthSession
from harness.clients.reference._http import HttpTransport

RUN = ("auth-code-flow", "2025-11-25", "http")
RUN_06 = ("auth-code-flow", "2025-06-18", "http")
DISCOVERY = ("auth-discovery", "2025-11-25", "http")
DISCOVERY_06 = ("auth-discovery", "2025-06-18", "http")
UNADVERTISED = ("auth-pkce-unadvertised", "2025-11-25", "http")
STEP_UP = ("auth-step-up", "2025-11-25", "http")
STEP_UP_26 = ("auth-step-up", "2026-07-28", "http")
ENDLESS = ("auth-step-up-endless", "2025-11-25", "http")
ENDLESS_26 = ("auth-step-up-endless", "2026-07-28", "http")
ISS = ("auth-iss-wrong", "2026-07-28", "http")
ISS_NORMALIZED = ("auth-iss-normalized", "2026-07-28", "http")
ISS_UNEXPECTED = ("auth-iss-unexpected", "2026-07-28", "http")
ISS_MISSING = ("auth-iss-missing", "2026-07-28", "http")
METADATA_ISSUER = ("auth-metadata-issuer-mismatch", "2026-07-28", "http")
MISMATCH = ("auth-resource-mismatch", "2025-11-25", "http")
MISMATCH_06 = ("auth-resource-mismatch", "2025-06-18", "http")
TOKEN_BASIC = ("auth-token-auth-basic", "2025-11-25", "http")
TOKEN_POST = ("auth-token-auth-post", "2025-06-18", "http")
REFRESH = ("auth-refresh", "2025-11-25", "http")
REFRESH_26 = ("auth-refresh", "2026-07-28", "http")
LEGACY_METADATA = ("auth-legacy-metadata", "2025-03-26", "http")
LEGACY_DEFAULTS = ("auth-legacy-defaults", "2025-03-26", "http")
MIGRATION = ("auth-migration", "2025-11-25", "http")
MIGRATION_06 = ("auth-migration", "2025-06-18", "http")
MIGRATION_26 = ("auth-migration", "2026-07-28", "http")
PRE_REGISTERED = ("auth-pre-registered", "2025-11-25", "http")
PRE_REGISTERED_26 = ("auth-pre-registered", "2026-07-28", "http")
SCOPE_RUNS = tuple(
    (f"auth-scope-{variant}", revision, "http")
    for variant in ("challenge", "supported", "none")
    for revision in ("2025-11-25", "2026-07-28")
)


class _NoPkceSession(OAuthSession):
    async def _browser_step(self, query: Mapping[str, str], state: str) -> str:
        kept = {k: v for k, v in query.items() if not k.startswith("code_challenge")}
        return await super()._browser_step(kept, state)


class _PlainPkceSession(OAuthSession):
    async def _browser_step(self, query: Mapping[str, str], state: str) -> str:
        return await super()._browser_step({**query, "code_challenge_method": "plain"}, state)


class _NoResourceSession(OAuthSession):
    async def _discover(self, params: Mapping[str, str]) -> None:
        await super()._discover(params)
        self._resource = None


class _RootMetadataFirstSession(OAuthSession):
    def resource_metadata_urls(self, params: Mapping[str, str]) -> list[str]:
        return list(reversed(super().resource_metadata_urls({})))


class _IgnoresChallengeSession(OAuthSession):
    def resource_metadata_urls(self, params: Mapping[str, str]) -> list[str]:
        return super().resource_metadata_urls({})


class _OpenIdFirstSession(OAuthSession):
    def server_metadata_urls(self, issuer: str) -> list[str]:
        return sorted(super().server_metadata_urls(issuer), key=lambda u: "openid" not in u)


class _IgnoresPkceAdvertisementSession(OAuthSession):
    def pkce_advertised(self) -> bool:
        return True


class _NoPkceTransport(HttpTransport):
    auth_session = _NoPkceSession


class _PlainPkceTransport(HttpTransport):
    auth_session = _PlainPkceSession


class _NoResourceTransport(HttpTransport):
    auth_session = _NoResourceSession


class _TokenInQueryTransport(HttpTransport):
    def post_url(self) -> str:
        token = self.auth.access_token
        return self._url if token is None else f"{self._url}?access_token={quote(token)}"

    def _request_headers(
        self, accept: str, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        headers = super()._request_headers(accept, extra)
        headers.pop("Authorization", None)
        return headers


class _NoStepUpSession(OAuthSession):
    async def on_challenge(self, status: int, header: str) -> None:
        if status == 403:
            raise ClientError("other", "403: not authorized (this client never steps up)")
        await super().on_challenge(status, header)


class _StepUpForeverSession(OAuthSession):
    async def on_challenge(self, status: int, header: str) -> None:
        self._stepped_up.clear()  # forgets it already tried: no limit of its own
        await super().on_challenge(status, header)


class _StepUpForeverTransport(HttpTransport):
    auth_session = _StepUpForeverSession
    max_challenges = 20


class _IgnoresIssSession(OAuthSession):
    def iss_ok(self, back: Mapping[str, str]) -> bool:
        return True


class _NormalizesIssSession(OAuthSession):
    """Compares iss with the issuer once both lose a trailing slash and their case."""

    def iss_ok(self, back: Mapping[str, str]) -> bool:
        advertised = self._meta.get("authorization_response_iss_parameter_supported")
        if not ("iss" in back or advertised):
            return True
        issuer = str(self._meta.get("issuer", ""))
        return back.get("iss", "").rstrip("/").lower() == issuer.rstrip("/").lower()


class _IssOnlyWhenAdvertisedSession(OAuthSession):
    """Looks at iss only when the metadata advertises it."""

    def iss_ok(self, back: Mapping[str, str]) -> bool:
        if not self._meta.get("authorization_response_iss_parameter_supported"):
            return True
        return super().iss_ok(back)


class _MissingIssAcceptedSession(OAuthSession):
    """Compares an iss that came, and goes on without one, advertised or not."""

    def iss_ok(self, back: Mapping[str, str]) -> bool:
        return "iss" not in back or back["iss"] == self._meta.get("issuer")


class _AnyMetadataIssuerSession(OAuthSession):
    """Uses the first metadata document it finds, whatever issuer it names."""

    async def _server_metadata(self, issuer: str) -> dict[str, Any] | None:
        for url in self.server_metadata_urls(issuer):
            doc = await self._get_json(url)
            if doc is not None:
                return doc
        return None


class _SecretInFormSession(OAuthSession):
    """Registers as the server asks, then always puts the secret in the form."""

    async def _register(self) -> None:
        await super()._register()
        self._auth_method = "client_secret_post"


class _KeepsFirstRefreshTokenSession(OAuthSession):
    """Holds on to the first refresh token it got, whatever the refreshes answer."""

    _first_refresh_token: str | None = None

    async def _refresh(self) -> bool:
        if self._first_refresh_token is None:
            self._first_refresh_token = self._refresh_token
        self._refresh_token = self._first_refresh_token
        return await super()._refresh()


class _NoRefreshGrantSession(OAuthSession):
    def registration_metadata(self) -> dict[str, Any]:
        return {**super().registration_metadata(), "grant_types": ["authorization_code"]}


class _LegacySkipsMetadataSession(OAuthSession):
    """2025-03-26: straight to the default endpoints, never asking for metadata."""

    def server_metadata_urls(self, issuer: str) -> list[str]:
        return []


class _LegacyDefaultsUnderPathSession(OAuthSession):
    """2025-03-26: the default endpoints under the MCP URL's path, not at its origin."""

    def default_endpoints(self) -> dict[str, Any]:
        base = self.server_url.rstrip("/")
        return {
            **super().default_endpoints(),
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/token",
            "registration_endpoint": base + "/register",
        }


class _KeepsFormerTokenSession(OAuthSession):
    """Moves to the new authorization server, and still presents the former one's token."""

    _former_token: str | None = None

    def _forget_server(self) -> None:
        self._former_token = self.access_token
        super()._forget_server()

    def headers(self) -> dict[str, str]:
        if self._former_token is not None:
            return {"Authorization": f"Bearer {self._former_token}"}
        return super().headers()


class _CarriesRefreshTokenSession(OAuthSession):
    """Moves to the new authorization server, and tries the former one's refresh token
    there before authorizing."""

    _carried: str | None = None

    def _forget_server(self) -> None:
        self._carried = self._refresh_token
        super()._forget_server()

    async def _register(self) -> None:
        await super()._register()
        if self._carried is not None:
            self._refresh_token, self._carried = self._carried, None
            await self._refresh()


class _IgnoresPreRegistrationSession(OAuthSession):
    """Drops the pre-registered credentials it is given, and registers instead."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        server_url: str,
        authorization: Authorization | None = None,
    ) -> None:
        if authorization is not None:
            authorization = replace(authorization, client_id=None, client_secret=None)
        super().__init__(client, server_url, authorization)


class _AllSupportedScopesSession(OAuthSession):
    """Asks for every scope the resource lists, whatever the 401 named."""

    async def _authorize(self, params: Mapping[str, str], *, scope: str | None) -> None:
        if not self._meta:
            await self._discover(params)
        await super()._authorize(params, scope=" ".join(self._scopes_supported) or scope)


class _AcceptsAnyResourceSession(OAuthSession):
    def resource_ok(self, resource: str) -> bool:
        return True


def _with_session(session: type[OAuthSession]) -> type[HttpTransport]:
    return type(f"_{session.__name__}Transport", (HttpTransport,), {"auth_session": session})


class RootMetadataFirst(ReferenceClient):
    _http_transport = _with_session(_RootMetadataFirstSession)


class IgnoresChallengeMetadata(ReferenceClient):
    _http_transport = _with_session(_IgnoresChallengeSession)


class OpenIdFirst(ReferenceClient):
    _http_transport = _with_session(_OpenIdFirstSession)


class IgnoresPkceAdvertisement(ReferenceClient):
    _http_transport = _with_session(_IgnoresPkceAdvertisementSession)


class NoStepUp(ReferenceClient):
    _http_transport = _with_session(_NoStepUpSession)


class StepUpForever(ReferenceClient):
    _http_transport = _StepUpForeverTransport


class IgnoresIss(ReferenceClient):
    _http_transport = _with_session(_IgnoresIssSession)


class NormalizesIss(ReferenceClient):
    _http_transport = _with_session(_NormalizesIssSession)


class IssOnlyWhenAdvertised(ReferenceClient):
    _http_transport = _with_session(_IssOnlyWhenAdvertisedSession)


class MissingIssAccepted(ReferenceClient):
    _http_transport = _with_session(_MissingIssAcceptedSession)


class AnyMetadataIssuer(ReferenceClient):
    _http_transport = _with_session(_AnyMetadataIssuerSession)


class AcceptsAnyResource(ReferenceClient):
    _http_transport = _with_session(_AcceptsAnyResourceSession)


class SecretInForm(ReferenceClient):
    _http_transport = _with_session(_SecretInFormSession)


class KeepsFirstRefreshToken(ReferenceClient):
    _http_transport = _with_session(_KeepsFirstRefreshTokenSession)


class NoRefreshGrant(ReferenceClient):
    _http_transport = _with_session(_NoRefreshGrantSession)


class LegacySkipsMetadata(ReferenceClient):
    _http_transport = _with_session(_LegacySkipsMetadataSession)


class LegacyDefaultsUnderPath(ReferenceClient):
    _http_transport = _with_session(_LegacyDefaultsUnderPathSession)


class KeepsFormerToken(ReferenceClient):
    _http_transport = _with_session(_KeepsFormerTokenSession)


class CarriesRefreshToken(ReferenceClient):
    _http_transport = _with_session(_CarriesRefreshTokenSession)


class IgnoresPreRegistration(ReferenceClient):
    _http_transport = _with_session(_IgnoresPreRegistrationSession)


class AllSupportedScopes(ReferenceClient):
    _http_transport = _with_session(_AllSupportedScopesSession)


class NoPkce(ReferenceClient):
    _http_transport = _NoPkceTransport


class PlainPkce(ReferenceClient):
    _http_transport = _PlainPkceTransport


class NoResource(ReferenceClient):
    _http_transport = _NoResourceTransport


class TokenInQuery(ReferenceClient):
    _http_transport = _TokenInQueryTransport


# The server refuses the authorization request, so no token is ever issued: connect
# fails, and the check that explains why (PKCE, inside the connect) is the root.
_NO_TOKEN = {"auth.bearer-header-only": "BLOCKED:auth.pkce-s256"}

CASES = {
    "auth-no-pkce": Case(NoPkce, RUN, {"auth.pkce-s256": "FAIL", **_NO_TOKEN}),
    "auth-plain-pkce": Case(PlainPkce, RUN, {"auth.pkce-s256": "FAIL", **_NO_TOKEN}),
    # Before 2025-11-25 the page names no code challenge method: plain is a NOTE there (the
    # mock still refuses it, so the connect fails).
    "auth-plain-pkce-2025-06": Case(
        PlainPkce,
        RUN_06,
        {"auth.pkce-s256": "NOTE", "auth.bearer-header-only": "BLOCKED:client.connect"},
    ),
    "auth-no-resource": Case(NoResource, RUN_06, {"auth.resource-parameter": "FAIL"}),
    "auth-token-in-query": Case(TokenInQuery, RUN, {"auth.bearer-header-only": "FAIL"}),
    "auth-root-metadata-first": Case(
        RootMetadataFirst, DISCOVERY, {"auth.prm-discovery-order": "FAIL"}
    ),
    "auth-ignores-challenge-metadata": Case(
        IgnoresChallengeMetadata, RUN, {"auth.prm-discovery-order": "FAIL"}
    ),
    "auth-openid-first": Case(OpenIdFirst, DISCOVERY, {"auth.as-metadata-order": "FAIL"}),
    "auth-accepts-any-resource": Case(
        AcceptsAnyResource, MISMATCH, {"auth.resource-mismatch-refused": "FAIL"}
    ),
    "auth-ignores-iss": Case(IgnoresIss, ISS, {"auth.iss-validated": "FAIL"}),
    "auth-normalizes-iss": Case(NormalizesIss, ISS_NORMALIZED, {"auth.iss-validated": "FAIL"}),
    "auth-iss-only-when-advertised": Case(
        IssOnlyWhenAdvertised, ISS_UNEXPECTED, {"auth.iss-validated": "FAIL"}
    ),
    "auth-missing-iss-accepted": Case(
        MissingIssAccepted, ISS_MISSING, {"auth.iss-validated": "FAIL"}
    ),
    "auth-any-metadata-issuer": Case(
        AnyMetadataIssuer, METADATA_ISSUER, {"auth.metadata-issuer-validated": "FAIL"}
    ),
    "auth-no-step-up": Case(NoStepUp, STEP_UP, {"auth.step-up": "WARN"}),
    "auth-step-up-forever": Case(StepUpForever, ENDLESS, {"auth.step-up-bounded": "WARN"}),
    "auth-no-step-up-2026": Case(NoStepUp, STEP_UP_26, {"auth.step-up": "WARN"}),
    "auth-step-up-forever-2026": Case(StepUpForever, ENDLESS_26, {"auth.step-up-bounded": "WARN"}),
    "auth-secret-in-form": Case(
        SecretInForm, TOKEN_BASIC, {"auth.token-endpoint-auth-method": "NOTE"}
    ),
    "auth-keeps-first-refresh-token": Case(
        KeepsFirstRefreshToken, REFRESH, {"auth.refresh-token-rotated": "NOTE"}
    ),
    "auth-no-refresh-grant": Case(
        NoRefreshGrant, REFRESH_26, {"auth.refresh-grant-registered": "WARN"}
    ),
    "auth-legacy-skips-metadata": Case(
        LegacySkipsMetadata, LEGACY_METADATA, {"auth.legacy-metadata-then-defaults": "FAIL"}
    ),
    "auth-legacy-defaults-under-path": Case(
        LegacyDefaultsUnderPath,
        LEGACY_DEFAULTS,
        {"auth.legacy-metadata-then-defaults": "FAIL"},
    ),
    "auth-keeps-former-token": Case(
        KeepsFormerToken, MIGRATION, {"auth.tokens-stay-with-their-server": "FAIL"}
    ),
    # No sentence binds the client before 2026-07-28 (NOTE), a MUST from then on (FAIL).
    "auth-carries-refresh-token": Case(
        CarriesRefreshToken, MIGRATION_06, {"auth.tokens-stay-with-their-server": "NOTE"}
    ),
    "auth-carries-refresh-token-2026": Case(
        CarriesRefreshToken, MIGRATION_26, {"auth.tokens-stay-with-their-server": "FAIL"}
    ),
    "auth-ignores-pre-registration": Case(
        IgnoresPreRegistration, PRE_REGISTERED, {"auth.pre-registered-first": "WARN"}
    ),
    "auth-all-supported-scopes": Case(
        AllSupportedScopes, SCOPE_RUNS[0], {"auth.scope-selection": "WARN"}
    ),
    "auth-ignores-pkce-advertisement": Case(
        IgnoresPkceAdvertisement, UNADVERTISED, {"auth.pkce-unadvertised-refused": "FAIL"}
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    assert_mutant_fails_exactly(name, CASES[name])


@pytest.mark.parametrize(
    "run",
    [
        RUN,
        RUN_06,
        DISCOVERY,
        DISCOVERY_06,
        UNADVERTISED,
        STEP_UP,
        STEP_UP_26,
        ENDLESS,
        ENDLESS_26,
        ISS,
        ISS_NORMALIZED,
        ISS_UNEXPECTED,
        ISS_MISSING,
        METADATA_ISSUER,
        MISMATCH,
        MISMATCH_06,
        TOKEN_BASIC,
        TOKEN_POST,
        REFRESH,
        REFRESH_26,
        LEGACY_METADATA,
        LEGACY_DEFAULTS,
        MIGRATION,
        MIGRATION_06,
        MIGRATION_26,
        PRE_REGISTERED,
        PRE_REGISTERED_26,
        *SCOPE_RUNS,
    ],
    ids=lambda r: f"{r[0]}-{r[1]}",
)
def test_reference_client_passes_the_auth_runs(run: tuple[str, str, str]) -> None:
    assert_reference_passes(Case(ReferenceClient, run, {}))


@pytest.mark.parametrize(
    ("mutant", "run", "branch", "words"),
    [
        (NormalizesIss, ISS_NORMALIZED, "normalized", "equal to the issuer only once normalised"),
        (IssOnlyWhenAdvertised, ISS_UNEXPECTED, "", "named issuer"),
        (MissingIssAccepted, ISS_MISSING, "", "carried no iss"),
    ],
)
def test_each_rfc_9207_violation_names_its_sentence(
    mutant: type[ReferenceClient], run: tuple[str, str, str], branch: str, words: str
) -> None:
    from harness.judging import CATALOGUE, judge

    verdict = judge(CATALOGUE["auth.iss-validated"], run_case(mutant, run))
    assert (verdict.kind, verdict.clause) == ("violation", branch), verdict.reason
    assert words in verdict.reason
