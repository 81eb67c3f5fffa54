"""Shared by the mutation tests: a broken client, the run that exposes it, the verdicts.

Each tests/test_mutations*.py module defines `CASES: dict[str, Case]`; tests/
test_falsifiable.py checks that together they make every check of the catalogue reach
its violation branch.

Verdicts are compared by kind, not only by status: "FAIL" and "WARN" are the violation
branch of a check, "BLOCKED:<root>" is an item blocked by that root cause, "N/A" a
condition that never arose, "SKIP" a declaration. So a FAIL that comes from "it never
happened" can never pass for the violation the mutant was written to show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from _machine import within

from harness.clients._contract import McpClient
from harness.judging._catalogue import CATALOGUE
from harness.judging._judge import judge
from harness.judging._verdicts import Status, Verdict
from harness.running._scenario import ScenarioRun, execute
from harness.suite import scenario

__all__ = [
    "OP_TIMEOUT",
    "Case",
    "all_blocked_by",
    "assert_mutant_fails_exactly",
    "assert_reference_passes",
    "outcome",
    "outcomes",
    "run_case",
    "verdicts",
]


@dataclass(frozen=True)
class Case:
    mutant: Callable[[], McpClient]
    run: tuple[str, str, str]
    """(scenario, revision, transport) that exercises the broken rule."""
    expected: Mapping[str, str]
    """check id -> outcome (see `outcome`) for every check that must not PASS; all
    others PASS."""
    crashes: bool = False
    """The mutant's defect is to crash (raise something that is not a ClientError)."""


def all_blocked_by(
    root: str, run: tuple[str, str, str], *, judged: Iterable[str] = (), **outcomes: str
) -> dict[str, str]:
    """A precondition mutant's expectation: `outcomes` (the root's own FAIL, and any other
    check the same defect breaks), PASS for the checks that declare themselves independent
    of `root` and for those `judged` (their evidence was complete before the fault, or off
    its path), and BLOCKED by `root` for every other check of the run."""
    scenario_id, revision, transport = run
    expected = {}
    for check_id in scenario(scenario_id).checks:
        if not CATALOGUE[check_id].applies(revision, transport) or check_id in judged:
            continue
        if check_id in outcomes:
            expected[check_id] = outcomes[check_id]
        elif root not in CATALOGUE[check_id].independent_of:
            expected[check_id] = f"BLOCKED:{root}"
    return expected  # the checks left out must PASS


def outcome(verdict: Verdict) -> str:
    """The verdict's status with what decided it: "FAIL", "BLOCKED:client.connect", ..."""
    if verdict.status is Status.BLOCKED:
        return f"BLOCKED:{verdict.root}"
    return verdict.status.value


# The per-operation time-out of a mutation run. Many mutants are caught by the harness
# waiting out its bound (a wait for what never comes lasts one bound, a hang two), so the
# bound is what such a test costs; it cannot change a verdict while what does come arrives
# well inside it. Here that is the in-process reference client on loopback: milliseconds,
# at most about a second where a script or the client waits on purpose (the scripts'
# delays of up to 500 ms; resuming a dropped stream, 250 ms between tries). 2.5 s keeps a
# wide margin on a loaded machine, and keeps the time-out a drive provokes on purpose (a
# tenth of the bound, at most 0.25 s: harness/running/_scenario.py) what it is at the default bound.
# Times the machine's load (tests/_machine.py): at a load of 16 on two cores a mutant that
# cancels its initialize took longer than 2.5 s to connect, and its connect was BLOCKED.
OP_TIMEOUT = within(2.5)


def run_case(factory: Callable[[], McpClient], run: tuple[str, str, str]) -> ScenarioRun:
    scenario_id, revision, transport = run
    return execute(scenario(scenario_id), revision, transport, factory, op_timeout=OP_TIMEOUT)


def verdicts(factory: Callable[[], McpClient], run: tuple[str, str, str]) -> dict[str, str]:
    result = run_case(factory, run)
    return outcomes(result)


def outcomes(result: ScenarioRun) -> dict[str, str]:
    return {
        check_id: outcome(judge(CATALOGUE[check_id], result))
        for check_id in result.scenario.checks
        if CATALOGUE[check_id].applies(result.revision, result.transport)
    }


def assert_mutant_fails_exactly(name: str, case: Case) -> None:
    """The mutant gets the expected outcomes on its run, every other check passes, and
    the mutant did not crash unless crashing is its defect."""
    result = run_case(case.mutant, case.run)
    seen = outcomes(result)
    unexpected = {
        check: status
        for check, status in seen.items()
        if status != case.expected.get(check, "PASS")
    }
    assert set(case.expected) <= set(seen), "a check named in the expectation did not run"
    assert not unexpected, f"{name}: verdicts differ from the expectation: {unexpected}"
    crashed = [o.to_json() for o in result.operations if (o.error or {}).get("kind") == "crash"]
    assert case.crashes or not crashed, f"{name} crashed, not by its defect: {crashed}"


def assert_reference_passes(case: Case) -> None:
    """The other half of the proof: the same run, unbroken, passes every check."""
    from harness.clients import ReferenceClient

    seen = verdicts(ReferenceClient, case.run)
    assert set(seen.values()) == {"PASS"}, seen
