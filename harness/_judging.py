"""Judging one check on one run, with the rules that hold for every check."""

from __future__ import annotations

from harness._catalogue import Check
from harness._revisions import REVISIONS
from harness._run import ScenarioRun
from harness._verdicts import Verdict, fail, skip

__all__ = ["judge"]


def judge(check: Check, run: ScenarioRun) -> Verdict:
    """The check's verdict on the run; the suite-wide rules first.

    SKIP only when the client declared that it lacks what the check needs; a client that
    declared nothing at all (a factory that failed) is judged, and fails for want of
    evidence. A check that crashes is a FAIL naming the bug, never a pass.
    """
    declared = run.supports
    if declared:
        needs = [run.transport, *run.scenario.requires, *([check.feature] if check.feature else [])]
        lacking = [n for n in needs if n not in declared]
        if lacking:
            return skip(f"the client does not declare support for {', '.join(lacking)}")
        revisions = [r for r in REVISIONS if r in declared]
        if revisions and run.revision not in revisions:
            return skip(f"the client does not declare revision {run.revision}")
    try:
        return check.judge(run)
    except Exception as exc:  # a bug in a check must never turn into a verdict for the client
        return fail(f"the check itself failed ({type(exc).__name__}: {exc}); please report it")
