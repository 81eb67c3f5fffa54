"""The runner's rules for its authorization client scenarios, on made-up transcripts.

Each rule is the one of @modelcontextprotocol/conformance 0.2.0-alpha.12 (dist/index.js:
`J` the authorization server, `X` the protected resource, `Y` its token verifier, `to` the
metadata variants, `_o` the token endpoint ones, `Qa` the RFC 8707 checks); each test names
the case it pins. The transcripts are what the HTTP mock records for a flow: an `auth`
entry per request (server, endpoint, method, path, what it served) beside its
`http_request`.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import json
from typing import Any
from urllib.parse import urlencode

import pytest

from harness.official import official_verdicts, scenario_verdict, served_scenario

Entry = dict[str, Any]
RESOURCE = "http://localhost:4000/mcp"
VERIFIER = "v" * 43
CHALLENGE = (
    base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
)


class Flow:
    """Builds the entries of an authorization flow as the mock records them."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.requests = 0

    def _request(
        self,
        server: str,
        endpoint: str,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: str = "",
        **auth: Any,
    ) -> None:
        self.requests += 1
        self.entries.append(
            {"seq": len(self.entries), "kind": "http_request", "request": self.requests,
             "method": method, "path": path, "headers": headers or {}, "body": body}
        )  # fmt: skip
        self.entries.append(
            {"seq": len(self.entries), "kind": "auth", "request": self.requests,
             "server": server, "endpoint": endpoint, "method": method, "path": path, **auth}
        )  # fmt: skip

    def prm(self, path: str = "/.well-known/oauth-protected-resource/mcp") -> Flow:
        self._request("resource", "resource-metadata", "GET", path, resource=RESOURCE)
        return self

    def well_known(self, server: str, path: str) -> Flow:
        self._request(server, "well-known", "GET", path, status=404)
        return self

    def metadata(self, path: str = "/.well-known/oauth-authorization-server") -> Flow:
        self._request("authorization", "server-metadata", "GET", path)
        return self

    def register(self) -> Flow:
        self._request("authorization", "register", "POST", "/register", body="{}")
        return self

    def authorize(self, **query: str) -> Flow:
        sent = {"code_challenge": CHALLENGE, "code_challenge_method": "S256",
                "resource": RESOURCE, **query}  # fmt: skip
        sent = {k: v for k, v in sent.items() if v != "-"}
        self._request("authorization", "authorize", "GET", "/authorize", query=sent)
        return self

    def token(self, *, headers: dict[str, str] | None = None, **form: str) -> Flow:
        sent = {"grant_type": "authorization_code", "code_verifier": VERIFIER,
                "resource": RESOURCE, **form}  # fmt: skip
        sent = {k: v for k, v in sent.items() if v != "-"}
        kind = {"content-type": "application/x-www-form-urlencoded", **(headers or {})}
        self._request("authorization", "token", "POST", "/token", headers=kind,
                      body=urlencode(sent))  # fmt: skip
        return self

    def mcp(self, authorization: str | None = "Bearer t", *, issued: bool = True) -> Flow:
        headers = {} if authorization is None else {"authorization": authorization}
        self._request("resource", "mcp", "POST", "/mcp", headers=headers, body="{}",
                      issued_token=issued)  # fmt: skip
        return self

    def whole(self) -> Flow:
        return self.mcp(None).prm().metadata().register().authorize().token().mcp().mcp()


def _verdicts(scenario: str, flow: Flow) -> list[str]:
    return [f"{v.id} {v.status}" for v in official_verdicts(scenario, "2025-11-25", flow.entries)]


def _counts(scenario: str, flow: Flow) -> dict[str, int]:
    return dict(collections.Counter(s.split()[1] for s in _verdicts(scenario, flow)))


def test_a_whole_flow_passes_with_a_success_per_request() -> None:
    verdicts = _verdicts("auth/metadata-default", Flow().whole())
    assert verdicts == [
        "prm-pathbased-requested SUCCESS",
        "authorization-server-metadata SUCCESS",
        "client-registration SUCCESS",
        "authorization-request SUCCESS",
        "pkce-code-challenge-sent SUCCESS",
        "pkce-s256-method-used SUCCESS",
        "token-request SUCCESS",
        "pkce-code-verifier-sent SUCCESS",
        "pkce-verifier-matches-challenge SUCCESS",
        "valid-bearer-token SUCCESS",  # one per POST with a bearer token, not the first 401
        "valid-bearer-token SUCCESS",
        "resource-parameter-in-authorization SUCCESS",
        "resource-parameter-in-token SUCCESS",
        "resource-parameter-valid-uri SUCCESS",
        "resource-parameter-consistency SUCCESS",
        "resource-parameter-matches-prm SUCCESS",
    ]
    scenario = served_scenario("auth/metadata-default")
    assert scenario is not None
    verdict = scenario_verdict(scenario, "2025-11-25", Flow().whole().entries)
    assert verdict.passes
    assert verdict.tier
    assert not verdict.missing


def test_nothing_done_backfills_each_step_and_the_path_based_metadata_where_expected() -> None:
    default = _verdicts("auth/metadata-default", Flow().mcp(None))
    assert default[:5] == [
        f"{i} FAILURE"
        for i in (
            "prm-pathbased-requested",
            "authorization-server-metadata",
            "client-registration",
            "authorization-request",
            "token-request",
        )
    ]
    assert default[5:] == [
        "resource-parameter-in-authorization FAILURE",
        "resource-parameter-in-token FAILURE",
    ]
    # var2's resource metadata is at the root: never asked is no FAILURE of its own.
    assert "prm-pathbased-requested FAILURE" not in _verdicts("auth/metadata-var2", Flow())


def test_the_root_resource_metadata_fails_only_where_the_server_traps_it() -> None:
    flow = Flow().well_known("resource", "/.well-known/oauth-protected-resource").whole()
    assert "prm-priority-order FAILURE" in _verdicts("auth/metadata-default", flow)
    assert not [v for v in _verdicts("auth/metadata-var1", flow) if "FAILURE" in v]


def test_the_root_server_metadata_of_an_issuer_with_a_path_fails() -> None:
    flow = Flow().well_known("authorization", "/.well-known/oauth-authorization-server")
    flow.whole()
    assert "authorization-server-metadata-wrong-path FAILURE" in _verdicts(
        "auth/metadata-var3", flow
    )
    assert "authorization-server-metadata-wrong-path FAILURE" not in _verdicts(
        "auth/metadata-var1", flow
    )


def test_pkce_plain_method_and_a_wrong_verifier_fail() -> None:
    flow = Flow().mcp(None).prm().metadata().register()
    flow.authorize(code_challenge_method="plain").token(code_verifier="w" * 43).mcp()
    verdicts = _verdicts("auth/metadata-var1", flow)
    assert "pkce-s256-method-used FAILURE" in verdicts
    assert "pkce-verifier-matches-challenge FAILURE" in verdicts
    assert "pkce-code-challenge-sent SUCCESS" in verdicts


def test_a_refresh_grant_is_a_token_request_without_pkce_checks() -> None:
    flow = Flow().whole().token(grant_type="refresh_token", code_verifier="-")
    verdicts = _verdicts("auth/metadata-default", flow)
    assert verdicts.count("token-request SUCCESS") == 2
    assert verdicts.count("pkce-code-verifier-sent SUCCESS") == 1


def test_without_resource_both_fail_and_the_comparisons_are_not_made() -> None:
    flow = Flow().mcp(None).prm().metadata().register()
    flow.authorize(resource="-").token(resource="-").mcp()
    verdicts = _verdicts("auth/metadata-default", flow)
    assert "resource-parameter-in-authorization FAILURE" in verdicts
    assert "resource-parameter-in-token FAILURE" in verdicts
    assert not [v for v in verdicts if v.split()[0] in (
        "resource-parameter-valid-uri",
        "resource-parameter-consistency",
        "resource-parameter-matches-prm",
    )]  # fmt: skip


def test_the_last_requests_resource_is_compared_with_the_metadata_and_each_other() -> None:
    flow = Flow().mcp(None).prm().metadata().register()
    flow.authorize(resource="http://localhost:4000/").token().mcp()
    verdicts = _verdicts("auth/metadata-default", flow)
    assert "resource-parameter-consistency FAILURE" in verdicts
    assert "resource-parameter-matches-prm FAILURE" in verdicts
    fragment = Flow().mcp(None).prm().metadata().register()
    fragment.authorize(resource=f"{RESOURCE}#x").token(resource=f"{RESOURCE}#x").mcp()
    assert "resource-parameter-valid-uri FAILURE" in _verdicts("auth/metadata-var1", fragment)


def test_a_token_not_issued_fails_and_a_malformed_header_is_not_verified() -> None:
    flow = Flow().whole().mcp("Bearer forged", issued=False).mcp("Bearer").mcp("Basic x")
    verdicts = _verdicts("auth/metadata-default", flow)
    assert verdicts.count("invalid-bearer-token FAILURE") == 1
    assert verdicts.count("valid-bearer-token SUCCESS") == 2


def _basic(user: str, secret: str | None) -> dict[str, str]:
    value = user if secret is None else f"{user}:{secret}"
    return {"authorization": "Basic " + base64.b64encode(value.encode()).decode()}


@pytest.mark.parametrize(
    ("scenario", "headers", "form", "status"),
    [
        ("auth/token-endpoint-auth-basic", _basic("id", "secret"), {}, "SUCCESS"),
        ("auth/token-endpoint-auth-basic", _basic("id", None), {}, "FAILURE"),  # no colon
        ("auth/token-endpoint-auth-basic", {}, {"client_secret": "s"}, "FAILURE"),
        ("auth/token-endpoint-auth-post", {}, {"client_secret": "s"}, "SUCCESS"),
        ("auth/token-endpoint-auth-post", _basic("id", "s"), {"client_secret": "s"}, "FAILURE"),
        ("auth/token-endpoint-auth-none", {}, {"client_id": "id"}, "SUCCESS"),
        ("auth/token-endpoint-auth-none", {}, {"client_secret": "s"}, "FAILURE"),
    ],
)
def test_each_token_request_is_judged_on_how_it_authenticated(
    scenario: str, headers: dict[str, str], form: dict[str, str], status: str
) -> None:
    flow = Flow().mcp(None).prm().metadata().register().authorize()
    flow.token(headers=headers, **form).mcp()
    verdicts = _verdicts(scenario, flow)
    assert verdicts.count(f"token-endpoint-auth-method {status}") == 1
    assert "token-endpoint-auth-method" not in " ".join(
        v for v in _verdicts("auth/metadata-default", flow)
    )


def test_the_token_endpoint_scenarios_backfill_only_their_own_check() -> None:
    verdicts = _verdicts("auth/token-endpoint-auth-post", Flow().mcp(None))
    assert verdicts == [
        "token-endpoint-auth-method FAILURE",
        "resource-parameter-in-authorization FAILURE",
        "resource-parameter-in-token FAILURE",
    ]
    assert _counts("auth/token-endpoint-auth-none", Flow().whole()) == {"SUCCESS": 17}


def test_every_id_a_rule_emits_is_declared_for_its_scenario() -> None:
    flows = [
        Flow().whole(),
        Flow().well_known("resource", "/.well-known/oauth-protected-resource").whole(),
        Flow().well_known("authorization", "/.well-known/oauth-authorization-server").whole(),
        Flow().whole().mcp("Bearer forged", issued=False),
    ]
    for name in (
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
    ):
        scenario = served_scenario(name)
        assert scenario is not None, name
        declared = {c.id for c in scenario.checks}
        for flow in flows:
            emitted = {v.split()[0] for v in _verdicts(name, flow)}
            assert emitted <= declared, (name, emitted - declared)


def test_the_expected_ids_are_the_steps_and_what_a_whole_flow_emits() -> None:
    default = served_scenario("auth/metadata-default")
    var2 = served_scenario("auth/metadata-var2")
    basic = served_scenario("auth/token-endpoint-auth-basic")
    assert default is not None
    assert var2 is not None
    assert basic is not None
    # Failure-only ids (the traps, an invalid token) and the log lines are never expected.
    for scenario in (default, var2, basic):
        expected = scenario.expected("2025-11-25")
        assert "invalid-bearer-token" not in expected
        assert "incoming-auth-request" not in expected
        assert "valid-bearer-token" in expected
    assert "prm-priority-order" not in default.expected("2025-11-25")
    assert "authorization-server-metadata-wrong-path" not in var2.expected("2025-11-25")
    assert "token-endpoint-auth-method" in basic.expected("2025-11-25")
    # A flow that stops before the token: the bearer ids were never judged, so not passed.
    stopped = Flow().mcp(None).prm().metadata().register().authorize().token()
    verdict = scenario_verdict(default, "2025-11-25", stopped.entries)
    assert verdict.runner_line
    assert not verdict.passes
    assert verdict.missing == ("valid-bearer-token",)


@pytest.mark.parametrize(
    ("scenario", "scope", "status"),
    [
        ("auth/scope-from-www-authenticate", "mcp:basic", "SUCCESS"),
        ("auth/scope-from-www-authenticate", "mcp:basic mcp:write", "SUCCESS"),
        ("auth/scope-from-www-authenticate", "mcp:read", "WARNING"),
        ("auth/scope-from-www-authenticate", "-", "WARNING"),
        ("auth/scope-from-scopes-supported", "mcp:write mcp:read mcp:basic", "SUCCESS"),
        ("auth/scope-from-scopes-supported", "mcp:basic mcp:read", "WARNING"),
        ("auth/scope-omitted-when-undefined", "-", "SUCCESS"),
        ("auth/scope-omitted-when-undefined", "  ", "SUCCESS"),  # blank: trim() is empty
        ("auth/scope-omitted-when-undefined", "mcp:basic", "WARNING"),
    ],
)
def test_each_authorization_request_is_judged_on_its_scope(
    scenario: str, scope: str, status: str
) -> None:
    flow = Flow().mcp(None).prm().metadata().register().authorize(scope=scope).token().mcp()
    verdicts = _verdicts(scenario, flow)
    check = scenario.removeprefix("auth/")
    assert [v for v in verdicts if v.startswith(check)] == [f"{check} {status}"]
    # No RFC 8707 checks in these scenarios, and the steps are not backfilled.
    assert not [v for v in verdicts if v.startswith("resource-parameter")]


def test_a_scope_scenario_without_an_authorization_backfills_its_check_only() -> None:
    verdicts = _verdicts("auth/scope-from-scopes-supported", Flow().mcp(None))
    assert verdicts == ["scope-from-scopes-supported FAILURE"]
    twice = Flow().whole().authorize(scope="mcp:basic")
    assert (
        _verdicts("auth/scope-from-www-authenticate", twice).count(
            "scope-from-www-authenticate WARNING"
        )
        == 1
    )  # the first asked no scope; each request is judged


@pytest.mark.parametrize(
    ("credentials", "status"),
    [
        ("pre-registered-client:pre-registered-secret", "SUCCESS"),
        ("pre-registered-client:pre-registered-secret:more", "SUCCESS"),  # split, first two
        ("pre-registered-client:wrong", "FAILURE"),
        ("pre-registered-client", "FAILURE"),
        (None, "FAILURE"),  # no Basic authentication at all
    ],
)
def test_pre_registration_wants_the_contexts_credentials_in_basic(
    credentials: str | None, status: str
) -> None:
    headers = (
        {}
        if credentials is None
        else {"authorization": "Basic " + base64.b64encode(credentials.encode()).decode()}
    )
    flow = Flow().mcp(None).prm().metadata().authorize().token(headers=headers).mcp()
    verdicts = _verdicts("auth/pre-registration", flow)
    assert [v for v in verdicts if v.startswith("pre-registration-auth")] == [
        f"pre-registration-auth {status}"
    ]
    assert not [v for v in verdicts if v.startswith("resource-parameter")]
    assert _verdicts("auth/pre-registration", Flow().mcp(None)) == ["pre-registration-auth FAILURE"]


def test_a_pre_registered_client_is_not_expected_to_register() -> None:
    scenario = served_scenario("auth/pre-registration")
    assert scenario is not None
    assert "client-registration" in {c.id for c in scenario.checks}
    assert "client-registration" not in scenario.expected("2025-11-25")
    flow = Flow().mcp(None).prm().metadata().authorize()
    basic = "Basic " + base64.b64encode(b"pre-registered-client:pre-registered-secret").decode()
    flow.token(headers={"authorization": basic}).mcp()
    verdict = scenario_verdict(scenario, "2025-11-25", flow.entries)
    assert verdict.passes, verdict.outcome


def test_basic_cimd_wants_the_document_url_as_the_client_id() -> None:
    url = "https://conformance-test.local/client-metadata.json"
    used = Flow().mcp(None).prm().metadata().authorize(client_id=url).token().mcp()
    assert _verdicts("auth/basic-cimd", used).count("cimd-client-id-used SUCCESS") == 1
    registered = Flow().whole()  # registered, and authorized without the document URL
    verdicts = _verdicts("auth/basic-cimd", registered)
    assert "cimd-client-id-used WARNING" in verdicts
    assert "client-registration SUCCESS" in verdicts  # counted, though never expected
    assert not [v for v in verdicts if v.startswith("resource-parameter")]
    assert _verdicts("auth/basic-cimd", Flow().mcp(None)) == ["cimd-client-id-used FAILURE"]
    scenario = served_scenario("auth/basic-cimd")
    assert scenario is not None
    assert scenario_verdict(scenario, "2025-11-25", used.entries).passes


# -- 2026-07-28: SEP-837 at registration; `fo` (scope-step-up) and `po` (scope-retry-limit) --


def _modern(scenario: str, flow: Flow, revision: str = "2026-07-28") -> list[str]:
    return [f"{v.id} {v.status}" for v in official_verdicts(scenario, revision, flow.entries)]


def _registering(body: str, kind: str = "application/json") -> Flow:
    flow = Flow().mcp(None).prm().metadata()
    flow._request(
        "authorization", "register", "POST", "/register", headers={"content-type": kind}, body=body
    )
    return flow.authorize().token().mcp()


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ('{"application_type": "native"}', "SUCCESS"),
        ('{"application_type": "web"}', "SUCCESS"),
        ("{}", "FAILURE"),
        ('{"application_type": "browser"}', "FAILURE"),
        ('{"application_type": 1}', "FAILURE"),
    ],
)
def test_a_registration_names_its_application_type_at_2026_07_28(body: str, status: str) -> None:
    for name in ("auth/metadata-default", "auth/token-endpoint-auth-none", "auth/scope-step-up"):
        verdicts = _modern(name, _registering(body))
        assert f"sep-837-application-type-present {status}" in verdicts, name
        # At 2025-11-25 the runner's registration judges no application type.
        legacy = _modern(name, _registering(body), "2025-11-25")
        assert not any(v.startswith("sep-837") for v in legacy), name


def test_the_application_type_is_expected_where_a_client_registers_at_2026_07_28_only() -> None:
    for name in ("auth/metadata-var1", "auth/scope-from-scopes-supported", "auth/scope-step-up"):
        scenario = served_scenario(name)
        assert scenario is not None
        assert "sep-837-application-type-present" in scenario.expected("2026-07-28"), name
        assert "sep-837-application-type-present" not in scenario.expected("2025-11-25"), name
    for name in ("auth/pre-registration", "auth/basic-cimd"):
        scenario = served_scenario(name)
        assert scenario is not None
        assert "sep-837-application-type-present" not in scenario.expected("2026-07-28"), name


def _step_up_flow(*scopes: str) -> Flow:
    flow = Flow().mcp(None).prm().metadata().register()
    for scope in scopes:
        flow.authorize(scope=scope).token().mcp()
    return flow


def _step_up_ids(verdicts: list[str]) -> list[str]:
    return [v for v in verdicts if v.split()[0].startswith(("scope-step-up", "sep-2350"))]


@pytest.mark.parametrize(
    ("revision", "scopes", "judged"),
    [
        (
            "2025-11-25",
            ("mcp:basic", "mcp:write"),
            ["scope-step-up-initial SUCCESS", "scope-step-up-escalation SUCCESS"],
        ),
        (
            "2026-07-28",
            ("mcp:basic", "mcp:basic mcp:write"),
            [
                "scope-step-up-initial SUCCESS",
                "scope-step-up-escalation SUCCESS",
                "sep-2350-scope-union-on-reauth SUCCESS",
            ],
        ),
        # SEP-2350: the challenged scope alone drops what was granted.
        (
            "2026-07-28",
            ("mcp:basic", "mcp:write"),
            [
                "scope-step-up-initial SUCCESS",
                "scope-step-up-escalation SUCCESS",
                "sep-2350-scope-union-on-reauth WARNING",
            ],
        ),
        (
            "2025-11-25",
            ("mcp:read", "mcp:read"),
            ["scope-step-up-initial WARNING", "scope-step-up-escalation WARNING"],
        ),
        # A third authorization is judged by nothing.
        (
            "2025-11-25",
            ("mcp:basic", "mcp:basic mcp:write", "-"),
            ["scope-step-up-initial SUCCESS", "scope-step-up-escalation SUCCESS"],
        ),
        # Never escalated, never authorized: backfilled.
        (
            "2026-07-28",
            ("mcp:basic",),
            [
                "scope-step-up-initial SUCCESS",
                "scope-step-up-escalation FAILURE",
                "sep-2350-scope-union-on-reauth FAILURE",
            ],
        ),
        ("2025-11-25", (), ["scope-step-up-initial FAILURE", "scope-step-up-escalation FAILURE"]),
    ],
)
def test_step_up_judges_the_first_two_authorizations(
    revision: str, scopes: tuple[str, ...], judged: list[str]
) -> None:
    verdicts = _modern("auth/scope-step-up", _step_up_flow(*scopes), revision)
    assert _step_up_ids(verdicts) == judged
    assert not any(v.startswith("resource-parameter") for v in verdicts)


def test_step_up_verifies_a_bearer_prefix_and_never_an_open_request() -> None:
    flow = _step_up_flow("mcp:basic")
    bearers = [v for v in _modern("auth/scope-step-up", flow) if "bearer-token" in v]
    assert bearers == ["valid-bearer-token SUCCESS"]
    # initialize and notifications go through unchecked: no verification.
    flow._request("resource", "mcp", "POST", "/mcp", headers={"authorization": "Bearer t"},
                  body="{}", open=True)  # fmt: skip
    # Its middleware wants `Bearer ` exactly: another case is a 401 without a verification,
    # and an empty token is verified (and invalid).
    flow.mcp("bearer t").mcp("Bearer ", issued=False)
    bearers = [v for v in _modern("auth/scope-step-up", flow) if "bearer-token" in v]
    assert bearers == ["valid-bearer-token SUCCESS", "invalid-bearer-token FAILURE"]


@pytest.mark.parametrize(
    ("attempts", "status"), [(0, "FAILURE"), (1, "SUCCESS"), (3, "SUCCESS"), (4, "FAILURE")]
)
def test_retry_limit_counts_the_authorization_requests(attempts: int, status: str) -> None:
    flow = Flow().mcp(None).prm().metadata().register()
    for _ in range(attempts):
        flow.authorize(scope="mcp:admin").token().mcp()
    for revision in ("2025-11-25", "2026-07-28"):
        verdicts = _modern("auth/scope-retry-limit", flow, revision)
        assert [v for v in verdicts if v.startswith("scope-retry")] == [
            f"scope-retry-limit {status}"
        ]
        # Its resource verifies no token, and it makes no RFC 8707 checks.
        assert not any("bearer-token" in v or "resource-parameter" in v for v in verdicts)
    scenario = served_scenario("auth/scope-retry-limit")
    assert scenario is not None
    assert scenario.allow_client_error
    assert "valid-bearer-token" not in scenario.expected("2026-07-28")


def test_every_id_the_step_up_rules_emit_is_declared() -> None:
    flows = [
        _step_up_flow("mcp:basic", "mcp:write", "x").mcp("Bearer forged", issued=False),
        _registering("{}"),
    ]
    for name in ("auth/scope-step-up", "auth/scope-retry-limit", "auth/metadata-var3"):
        scenario = served_scenario(name)
        assert scenario is not None, name
        declared = {c.id for c in scenario.checks}
        for flow in flows:
            for revision in scenario.revisions:
                emitted = {v.split()[0] for v in _modern(name, flow, revision)}
                assert emitted <= declared, (name, emitted - declared)


# -- 2026-07-28 only: `Eo`, `es`, `ts`, `ns`, `os` to `fs` (harness/official/_auth_parity_modern) --

AS1, AS2 = "http://127.0.0.1:5000", "http://127.0.0.1:5000/as2"


def _own(scenario: str, flow: Flow) -> list[str]:
    """The scenario's own verdicts: those the shared servers' rules never emit."""
    shared = {
        c.id
        for c in (served_scenario("auth/iss-supported") or pytest.fail("not served")).checks
        if not c.id.startswith("sep-2468")
    }
    return [v for v in _modern(scenario, flow) if v.split()[0] not in shared]


def _declining() -> Flow:
    """Up to the authorization endpoint, the registration as a 2026-07-28 client makes it."""
    return _registered(None).authorize()


def test_resource_mismatch_wants_the_metadata_read_and_no_authorization() -> None:
    name = "auth/resource-mismatch"
    assert _own(name, Flow().mcp(None).prm()) == ["resource-mismatch-rejected SUCCESS"]
    went_on = Flow().mcp(None).prm().metadata().register().authorize()
    assert _own(name, went_on) == ["resource-mismatch-rejected FAILURE"]
    assert _own(name, Flow().mcp(None)) == ["resource-mismatch-rejected FAILURE"]
    scenario = served_scenario(name)
    assert scenario is not None
    assert scenario.expected("2026-07-28") == (
        "prm-pathbased-requested",
        "resource-mismatch-rejected",
    )
    assert scenario_verdict(scenario, "2026-07-28", Flow().mcp(None).prm().entries).passes


def _registered(grants: list[str] | None) -> Flow:
    metadata: dict[str, Any] = {"application_type": "native"}
    if grants is not None:
        metadata["grant_types"] = grants
    body = json.dumps(metadata)
    flow = Flow().mcp(None).prm().metadata()
    flow._request(
        "authorization", "register", "POST", "/register",
        headers={"content-type": "application/json"}, body=body,
    )  # fmt: skip
    return flow


@pytest.mark.parametrize(
    ("grants", "scope", "expected"),
    [
        (
            ["authorization_code", "refresh_token"],
            "mcp:basic offline_access",
            ("SUCCESS", "SUCCESS"),
        ),
        (["authorization_code"], "mcp:basic offline_access", ("WARNING", "SUCCESS")),
        (None, "mcp:basic", ("WARNING", "INFO")),  # offline_access is a MAY: never a failure
    ],
)
def test_offline_access_scope_judges_the_grant_types_and_the_scope(
    grants: list[str] | None, scope: str, expected: tuple[str, str]
) -> None:
    flow = _registered(grants).authorize(scope=scope).token().mcp()
    assert _own("auth/offline-access-scope", flow) == [
        f"sep-2207-client-metadata-grant-types {expected[0]}",
        f"sep-2207-offline-access-requested {expected[1]}",
    ]


def test_offline_access_scope_without_registration_or_authorization() -> None:
    # No registration: INFO (a document URL is never fetched here); no authorization: FAILURE.
    assert _own("auth/offline-access-scope", Flow().mcp(None).prm().metadata()) == [
        "sep-2207-client-metadata-grant-types INFO",
        "sep-2207-offline-access-requested FAILURE",
    ]


def test_offline_access_not_supported_fails_a_request_for_it() -> None:
    name = "auth/offline-access-not-supported"
    asked = _registered(None).authorize(scope="mcp:basic offline_access")
    assert _own(name, asked) == ["sep-2207-offline-access-not-requested FAILURE"]
    assert _own(name, _registered(None).authorize(scope="mcp:basic mcp:read")) == [
        "sep-2207-offline-access-not-requested SUCCESS"
    ]
    assert _own(name, _registered(None)) == ["sep-2207-offline-access-not-requested FAILURE"]


def _migrating(*, again: bool, shown: str, at: str) -> Flow:
    """Registered at the first server (client c1), moved; maybe registered at the second
    (c2); then `shown` as the client id at the second's authorization (`at` authorize) or
    token endpoint (`at` basic: in HTTP Basic; `at` form: in the form)."""
    flow = Flow().mcp(None).prm().metadata()
    flow._request("authorization", "register", "POST", "/register", issuer=AS1, client_id="c1")
    flow.authorize().token().mcp()
    flow.entries.append(
        {"seq": len(flow.entries), "kind": "auth", "server": "resource", "endpoint": "migration",
         "former_issuer": AS1, "issuer": AS2}
    )  # fmt: skip
    flow.mcp().prm()
    if again:
        flow._request(
            "authorization", "register", "POST", "/as2/register", issuer=AS2, client_id="c2"
        )
    if at == "authorize":
        flow._request(
            "authorization", "authorize", "GET", "/as2/authorize", issuer=AS2,
            query={"client_id": shown},
        )  # fmt: skip
    else:
        headers = {"content-type": "application/x-www-form-urlencoded"}
        form = {"grant_type": "authorization_code"}
        if at == "basic":
            headers["authorization"] = "Basic " + base64.b64encode(f"{shown}:s".encode()).decode()
        else:
            form["client_id"] = shown
        flow._request(
            "authorization", "token", "POST", "/as2/token", issuer=AS2, headers=headers,
            body=urlencode(form),
        )  # fmt: skip
    return flow


@pytest.mark.parametrize(
    ("again", "shown", "at", "statuses"),
    [
        (True, "c2", "authorize", ("SUCCESS", "SUCCESS")),
        (True, "c2", "basic", ("SUCCESS", "SUCCESS")),
        (False, "c1", "authorize", ("FAILURE", "FAILURE")),
        (True, "c1", "basic", ("SUCCESS", "FAILURE")),
        (True, "c1", "form", ("SUCCESS", "FAILURE")),
    ],
)
def test_migration_wants_a_new_registration_and_never_the_former_client_id(
    again: bool, shown: str, at: str, statuses: tuple[str, str]
) -> None:
    registered, reuse = statuses
    flow = _migrating(again=again, shown=shown, at=at)
    assert _own("auth/authorization-server-migration", flow) == [
        f"sep-2352-reregister-on-as-change {registered}",
        f"sep-2352-no-reuse-on-as-change {reuse}",
        f"sep-2352-no-cross-as-credential-reuse {reuse}",
    ]


@pytest.mark.parametrize(
    ("scenario", "check"),
    [
        ("auth/iss-supported", "sep-2468-client-compare-iss-supported"),
        ("auth/iss-not-advertised", "sep-2468-client-proceed-no-iss"),
    ],
)
def test_the_iss_scenarios_that_must_go_on_want_a_token_request(scenario: str, check: str) -> None:
    assert _own(scenario, _declining().token().mcp()) == [f"{check} SUCCESS"]
    assert _own(scenario, _declining()) == [f"{check} FAILURE"]


@pytest.mark.parametrize(
    ("scenario", "check"),
    [
        ("auth/iss-supported-missing", "sep-2468-client-reject-missing-iss"),
        ("auth/iss-wrong-issuer", "sep-2468-client-compare-iss-supported"),
        ("auth/iss-unexpected", "sep-2468-client-compare-iss-unadvertised"),
        ("auth/iss-normalized", "sep-2468-client-no-normalization"),
    ],
)
def test_the_iss_scenarios_that_must_stop_fail_a_token_request(scenario: str, check: str) -> None:
    assert _own(scenario, _declining()) == [f"{check} SUCCESS"]
    assert _own(scenario, _declining().token()) == [f"{check} FAILURE"]
    # Never reaching the authorization endpoint (or the metadata): not testable, a FAILURE.
    assert _own(scenario, Flow().mcp(None).prm().metadata()) == [f"{check} FAILURE"]
    assert _own(scenario, Flow().mcp(None).prm()) == [f"{check} FAILURE"]
    served = served_scenario(scenario)
    assert served is not None
    assert served.allow_client_error
    assert "token-request" not in served.expected("2026-07-28")
    assert scenario_verdict(served, "2026-07-28", _declining().entries).passes


def test_metadata_issuer_mismatch_fails_any_endpoint_of_the_metadata_used() -> None:
    name = "auth/metadata-issuer-mismatch"
    check = "sep-2468-client-validate-metadata-issuer"
    read = Flow().mcp(None).prm().metadata()
    assert _own(name, read) == [f"{check} SUCCESS"]
    assert _own(name, Flow().mcp(None).prm().metadata().register()) == [f"{check} FAILURE"]
    assert _own(name, Flow().mcp(None).prm().metadata().authorize()) == [f"{check} FAILURE"]
    assert _own(name, Flow().mcp(None).prm()) == [f"{check} FAILURE"]
    scenario = served_scenario(name)
    assert scenario is not None
    assert scenario.expected("2026-07-28") == (
        "prm-pathbased-requested",
        "authorization-server-metadata",
        check,
    )
    assert scenario_verdict(scenario, "2026-07-28", read.entries).passes


def test_every_id_the_modern_only_rules_emit_is_declared() -> None:
    from harness.official._auth_parity import MODERN_ONLY_AUTH

    flows = [
        Flow().whole(),
        Flow().whole().mcp("Bearer forged", issued=False),
        _registered(["refresh_token"]).authorize(scope="offline_access").token().mcp(),
        _migrating(again=True, shown="c1", at="basic"),
        Flow(),
    ]
    for name in MODERN_ONLY_AUTH:
        scenario = served_scenario(name)
        assert scenario is not None, name
        assert scenario.revisions == ("2026-07-28",)
        declared = {c.id for c in scenario.checks}
        for flow in flows:
            emitted = {v.split()[0] for v in _modern(name, flow)}
            assert emitted <= declared, (name, emitted - declared)
