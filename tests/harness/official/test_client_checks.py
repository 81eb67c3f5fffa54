"""The table of official client scenarios served here: scripts, expected ids, our checks.

The ids and scored sets are held to the pinned runner's package by
tests/e2e/test_e2e_conformance_clients.py (it needs the Node tools); these need nothing.
"""

from __future__ import annotations

import json

import pytest

import harness.suite  # noqa: F401  (declares the catalogue's checks)
from harness.judging import CATALOGUE
from harness.official import SCORED_CLIENT, SERVED, ClientScenario, our_checks, served_scenario
from harness.protocol import validate
from mock_servers import fixtures_root, load_script

RUNS = [(s, r) for s in SERVED for r in s.revisions]


def _id(value: object) -> str:
    return value.name if isinstance(value, ClientScenario) else str(value)


@pytest.mark.parametrize(("scenario", "revision"), RUNS, ids=_id)
def test_each_run_has_its_script_and_is_scored(scenario: ClientScenario, revision: str) -> None:
    script = load_script(fixtures_root() / scenario.script(revision))
    assert script.revisions == (revision,) or list(script.revisions) == [revision]
    assert list(script.transports) == ["http"]
    expected_path = "/" if scenario.url_path == "" else scenario.url_path
    assert script.http.path == expected_path
    assert scenario.name in SCORED_CLIENT[revision]


@pytest.mark.parametrize(("scenario", "revision"), RUNS, ids=_id)
def test_our_checks_exist_and_apply(scenario: ClientScenario, revision: str) -> None:
    for check_id in (*scenario.ours, *scenario.surfaced):
        assert check_id in CATALOGUE, check_id
    applying = [c.id for c in our_checks(scenario, revision)]
    assert applying
    assert set(applying) <= {*scenario.ours, *scenario.surfaced}
    for official in scenario.checks:
        assert set(official.ours) <= set(CATALOGUE), official.id


def test_expected_ids_leave_out_logs_faults_and_failure_only_ids() -> None:
    elicitation = served_scenario("elicitation-sep1034-client-defaults")
    assert elicitation is not None
    expected = elicitation.expected("2025-11-25")
    assert len(expected) == 5
    assert "client-elicitation-sep1034-general" not in expected
    tools_call = served_scenario("tools_call")
    assert tools_call is not None
    assert tools_call.expected("2026-07-28") == ("tool-add-numbers", "wire-schema-valid")
    retry_limit = served_scenario("auth/scope-retry-limit")
    assert retry_limit is not None
    # Its resource verifies no token: the bearer ids are never expected of it.
    assert "valid-bearer-token" not in retry_limit.expected("2025-11-25")


def test_the_marked_elicitation_breaks_only_the_capability_rule() -> None:
    """It is sent whether the client declared elicitation or not (as the runner's server
    does), so it carries a violation mark; the message itself is a valid request."""
    path = (
        fixtures_root() / "conformance-clients/2025-11-25/elicitation-sep1034-client-defaults.json"
    )
    steps = json.loads(path.read_text("utf-8"))["steps"]
    (request,) = [m for s in steps for m in s.get("reply", {}).get("before", [])]
    assert "declared the elicitation capability" in request.pop("violation")
    assert validate({"jsonrpc": "2.0", **request}, "2025-11-25", "server") == []


def test_the_2026_scenarios_expect_neither_skippable_nor_failure_only_ids() -> None:
    """request-metadata's capability checks are SKIPPED for a client that declares none,
    and the tools/list gate of http-invalid-tool-headers is emitted only as a failure:
    neither is expected of a client."""
    metadata = served_scenario("request-metadata")
    assert metadata is not None
    expected = metadata.expected("2026-07-28")
    assert len(expected) == 5
    assert not [i for i in expected if i.startswith("sep-2575-client-declares-")]
    invalid = served_scenario("http-invalid-tool-headers")
    assert invalid is not None
    assert invalid.allow_client_error
    assert "sep-2243-invalid-tool-tools-list-gate" not in invalid.expected("2026-07-28")
    custom = served_scenario("http-custom-headers")
    assert custom is not None
    assert custom.context is not None
    assert [c["name"] for c in custom.context["toolCalls"]] == [
        "test_custom_headers",
        "test_custom_headers_null",
    ]
