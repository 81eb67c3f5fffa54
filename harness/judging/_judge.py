"""Judging one check on one run, with the rules that hold for every check.

In order:
1. SKIP, only when the client declared that it lacks what the check needs (a driver
   protocol 1.1 operation it did not name counts as lacking).
2. BLOCKED, when a precondition of the run failed (harness/judging/_preconditions.py): the item
   names the first root cause, unless the check judges one of the run's root causes
   itself or declared itself independent of it.
3. N/A or BLOCKED, when the check's trigger never arose: BLOCKED by the operation that
   raised or hung (the client never got there), N/A when nothing failed (the condition
   the check is about just did not happen).
4. The check's own rule. A PASS must cite its trigger among its evidence; a check that
   crashes, or passes without its trigger, is the harness's fault and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.clients import OPERATIONS
from harness.judging._catalogue import Check
from harness.judging._preconditions import failed_operation, root_causes
from harness.judging._verdicts import Status, Verdict, blocked, not_applicable, skip
from harness.protocol import REVISIONS
from harness.running import ScenarioRun

__all__ = ["judge", "not_judged"]


def judge(check: Check, run: ScenarioRun) -> Verdict:
    """The check's verdict on the run; the suite-wide rules first."""
    declared = run.supports
    # A driver protocol 1.1 operation is never assumed, not even from an empty `supports`.
    unnamed = sorted(run.scenario.requires & OPERATIONS - declared)
    if unnamed and run.start_error is None:
        return skip(f"the client does not declare the operation {', '.join(unnamed)}")
    if declared:
        needs = [run.transport, *run.scenario.requires, *([check.feature] if check.feature else [])]
        lacking = [n for n in needs if n not in declared]
        if lacking:
            return skip(f"the client does not declare support for {', '.join(lacking)}")
        revisions = [r for r in REVISIONS if r in declared]
        if revisions and run.revision not in revisions:
            return skip(f"the client does not declare revision {run.revision}")
    causes = root_causes(run)
    # A check that judges one of the run's root causes is judged whatever else failed:
    # that is where the FAIL the others are blocked by comes from.
    if all(cause.id != check.id for cause in causes):
        for cause in causes:
            if cause.id not in check.independent_of:
                return blocked(cause.id, f"blocked by {cause.id}: {cause.reason}", cause.evidence)
    found: list[Mapping[str, Any]] = []
    if check.trigger is not None:
        found = check.trigger.find(run)
        if not found:
            return not_judged(run, check.trigger.description)
    try:
        verdict = check.judge(run)
    except Exception as exc:  # a bug in a check must never turn into a verdict for the client
        return _harness_fault(f"the check itself failed ({type(exc).__name__}: {exc})")
    cited = any(item in found for item in verdict.evidence)
    if verdict.status is Status.PASS and check.trigger is not None and not cited:
        return _harness_fault(
            f"the check passed without citing its trigger ({check.trigger.description})"
        )
    return verdict


def not_judged(run: ScenarioRun, what: str) -> Verdict:
    """Why `what` (a trigger, an exchange a check needs) never happened: BLOCKED by the
    operation that failed or hung, or N/A when nothing failed."""
    cause = failed_operation(run)
    if cause is not None:
        return blocked(
            cause.id, f"not judged: {what} did not happen; {cause.reason}", cause.evidence
        )
    return not_applicable(f"{what}: this never happened in the run")


def _harness_fault(reason: str) -> Verdict:
    return Verdict(Status.BLOCKED, f"{reason}; please report it", kind="harness", root="harness")
