"""The requirement table, the check catalogue and docs/coverage.md agree with each other
and with the requirements digest (spec-client-requirements.md of the spec data, tests/_spec_data.py)."""

from __future__ import annotations

import re
from pathlib import Path

from _spec_data import spec_data

from harness.judging._catalogue import CATALOGUE
from harness.official._auth_checks import OFFICIAL_AUTH_CHECKS, RUNNER_VERSIONS
from harness.reports._coverage import render, uncovered
from harness.suite import SCENARIOS
from harness.suite._requirements import REQUIREMENTS

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "coverage.md"
_ID = re.compile(
    r"\b(?:RPC|LC|ST|HT|HM|TL)-(?:M)?\d+b?\b|\b(?:PING|CANCEL|PROG|LOG|RES|PROMPTS|ROOTS|SAMPLING|ELICIT|MRTR|ICONS|LISTEN)\b"
)


def test_every_requirement_of_the_digest_is_in_the_table() -> None:
    digest = spec_data("spec-client-requirements.md")
    ids = set(_ID.findall(digest.read_text(encoding="utf-8")))
    assert ids, "no requirement id found in the digest"
    assert sorted(ids - set(REQUIREMENTS)) == []


def test_every_check_names_known_requirements() -> None:
    for check in CATALOGUE.values():
        unknown = [r for r in check.requirements if r not in REQUIREMENTS]
        assert not unknown, f"{check.id} names unknown requirements {unknown}"


def test_every_check_is_judged_on_some_scenario() -> None:
    used = {check_id for scenario in SCENARIOS for check_id in scenario.checks}
    assert sorted(set(CATALOGUE) - used) == []


def test_coverage_document_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/coverage.md is stale: run python -m harness.reports._coverage --write"
    )


def test_every_requirement_has_a_check_or_a_reason() -> None:
    assert uncovered() == []


def test_the_official_auth_table_names_only_checks_that_are_judged() -> None:
    used = {check_id for scenario in SCENARIOS for check_id in scenario.checks}
    named = {c for row in OFFICIAL_AUTH_CHECKS for c in row.ours}
    assert sorted(named - set(CATALOGUE)) == []
    assert sorted(named - used) == []


def test_the_official_auth_table_lists_each_id_once_with_a_reason_when_unmapped() -> None:
    ids = [row.id for row in OFFICIAL_AUTH_CHECKS]
    assert sorted({i for i in ids if ids.count(i) > 1}) == []
    assert [row.id for row in OFFICIAL_AUTH_CHECKS if not row.ours and not row.note] == []
    assert all(set(row.versions) <= set(RUNNER_VERSIONS) for row in OFFICIAL_AUTH_CHECKS)


def test_the_readme_status_gives_the_suite_s_own_counts() -> None:
    # The README's status line went stale once already: it now has to follow the catalogue.
    items = sum(
        1
        for scenario in SCENARIOS
        for revision, transport in scenario.matrix()
        for check_id in scenario.checks
        if CATALOGUE[check_id].applies(revision, transport)
    )
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"the suite: (\d+) checks, judged as (\d+) items", readme)
    assert found, "the README's status table has no line 'the suite: N checks, judged as M items'"
    assert (int(found[1]), int(found[2])) == (len(CATALOGUE), items)
