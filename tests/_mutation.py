"""Shared by the mutation tests: a broken client, the run that exposes it, the verdicts.

Each tests/test_mutations*.py module defines `CASES: dict[str, Case]`; tests/
test_falsifiable.py checks that together they make every check of the catalogue fail.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from harness._catalogue import CATALOGUE
from harness._judging import judge
from harness._run import execute
from harness.clients._contract import McpClient
from harness.suite import scenario

__all__ = ["Case", "assert_mutant_fails_exactly", "assert_reference_passes", "verdicts"]


@dataclass(frozen=True)
class Case:
    mutant: Callable[[], McpClient]
    run: tuple[str, str, str]
    """(scenario, revision, transport) that exercises the broken rule."""
    expected: Mapping[str, str]
    """check id -> status for every check that must not PASS; all others PASS."""


def verdicts(factory: Callable[[], McpClient], run: tuple[str, str, str]) -> dict[str, str]:
    scenario_id, revision, transport = run
    chosen = scenario(scenario_id)
    result = execute(chosen, revision, transport, factory, op_timeout=5.0)
    return {
        check_id: judge(CATALOGUE[check_id], result).status.value
        for check_id in chosen.checks
        if CATALOGUE[check_id].applies(revision, transport)
    }


def assert_mutant_fails_exactly(name: str, case: Case) -> None:
    """The mutant gets the expected verdicts on its run, and every other check passes."""
    seen = verdicts(case.mutant, case.run)
    unexpected = {
        check: status
        for check, status in seen.items()
        if status != case.expected.get(check, "PASS")
    }
    assert set(case.expected) <= set(seen), "a check named in the expectation did not run"
    assert not unexpected, f"{name}: verdicts differ from the expectation: {unexpected}"


def assert_reference_passes(case: Case) -> None:
    """The other half of the proof: the same run, unbroken, passes every check."""
    from harness.clients import ReferenceClient

    seen = verdicts(ReferenceClient, case.run)
    assert set(seen.values()) == {"PASS"}, seen
