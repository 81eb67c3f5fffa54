"""Every check can fail: some mutant of the reference client reaches its violation branch."""

from __future__ import annotations

import importlib
from pathlib import Path

from _mutation import Case

from harness.judging._catalogue import CATALOGUE

VIOLATION = ("FAIL", "WARN", "NOTE")


def _cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for path in sorted(Path(__file__).parent.glob("test_mutations*.py")):
        module = importlib.import_module(path.stem)
        for name, case in module.CASES.items():
            assert name not in cases, f"mutant {name!r} is defined twice"
            cases[name] = case
    return cases


def test_mutants_name_only_known_checks() -> None:
    for name, case in _cases().items():
        unknown = set(case.expected) - set(CATALOGUE)
        assert not unknown, f"{name} expects unknown checks {unknown}"
        # Beside a FAIL, WARN or NOTE (the violation branch, at the level the spec's word
        # gives it at the run's revision): SKIP for a mutant that drops a
        # declaration, BLOCKED by a root cause for the checks its defect keeps from being
        # judged, N/A for a condition the defect keeps from arising.
        for check, outcome in case.expected.items():
            status, _, root = outcome.partition(":")
            assert status in (*VIOLATION, "SKIP", "N/A", "BLOCKED"), (name, check, outcome)
            assert (status == "BLOCKED") == bool(root), (name, check, outcome)
        assert set(VIOLATION) & set(case.expected.values()), name


def test_every_check_has_a_mutant_that_breaks_it() -> None:
    broken = {
        check
        for case in _cases().values()
        for check, status in case.expected.items()
        if status in VIOLATION
    }
    assert sorted(set(CATALOGUE) - broken) == []
