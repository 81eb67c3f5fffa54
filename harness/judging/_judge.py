"""Judging one check on one run, with the rules that hold for every check.

In order:
1. SKIP, only when the client declared that it lacks what the check needs (a driver
   protocol 1.1 operation it did not name counts as lacking).
2. The check's rule, as if nothing had failed: its trigger must be among the run's
   records (absent: N/A, or BLOCKED by what stopped the client getting there), and a
   PASS must cite it; a check that crashes, or passes without its trigger, is the
   harness's fault and says so.
3. Root causes (harness/judging/_preconditions.py), causally: a check that judges one of
   the run's root causes is judged whatever else failed. Any other check is BLOCKED by
   the earliest root cause it does not declare itself independent of, unless the fault
   lay off its path: its verdict cites nothing the fault touched, or its evidence was
   complete before the fault (the run as it stood then gives the same verdict).
4. A root cause is a non-PASS verdict of a check in the same run; a client failure that
   a check of the run explains (a violation inside the failed operation) is charged to
   that check; a refusal that no check finds wrong is the harness's fault.
"""

from __future__ import annotations

import dataclasses
import math
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.clients import OPERATIONS
from harness.judging._catalogue import CATALOGUE, Check, Clause, Silence
from harness.judging._preconditions import RootCause, causes_of_failure
from harness.judging._verdicts import (
    Defect,
    Status,
    Verdict,
    blocked,
    leveled,
    not_applicable,
    skip,
)
from harness.protocol import REVISIONS, same_json
from harness.running import ScenarioRun

__all__ = ["judge", "not_judged"]

_JUDGED = (Status.PASS, Status.FAIL, Status.WARN)


def judge(check: Check, run: ScenarioRun) -> Verdict:
    """The check's verdict on the run; the suite-wide rules first. Never raises: a fault
    of the harness (a trigger, a check, the root causes) is a verdict of its own."""
    try:
        return _judge(check, run)
    except Exception as exc:
        return harness_fault(f"judging {check.id} failed", exc)


def _judge(check: Check, run: ScenarioRun) -> Verdict:
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
    causes, _ = _causes(run)
    whole = _rule(check, run, not_judged)
    # A check that judges one of the run's root causes is judged whatever else failed:
    # that is where the FAIL the others are blocked by comes from.
    if any(cause.id == check.id for cause in causes):
        return whole
    for cause in causes:
        if cause.id in check.independent_of or cause.symptom in check.independent_of:
            continue
        if not _blocks(check, run, cause, whole):
            continue
        return blocked(
            cause.id, f"blocked by {cause.id}: {cause.reason}", cause.evidence, cause.defect
        )
    return whole


def _blocks(check: Check, run: ScenarioRun, cause: RootCause, whole: Verdict) -> bool:
    """Whether the fault kept this check's trigger or evidence from being seen."""
    if cause.moment == -math.inf:
        return True
    if whole.status in _JUDGED:
        path = [*whole.evidence, *(check.trigger.find(run) if check.trigger else ())]
        if not cause.touches(run, path):
            return False
    elif whole.status is Status.NOT_APPLICABLE and cause.contained:
        # The fault stayed in its own exchange and every operation went through: the
        # condition the check is about never arose, fault or no fault.
        return False
    # What the check would have said of the run as it stood when the fault happened:
    # the same judged verdict means its evidence was complete by then.
    before = run.before(cause.seq, cause.moment)
    early = _rule(check, before, _absent)
    return not (early.status in _JUDGED and early.status is whole.status)


def _absent(run: ScenarioRun, what: str) -> Verdict:
    return not_applicable(f"{what}: not yet")


def _rule(
    check: Check, run: ScenarioRun, missing: Callable[[ScenarioRun, str], Verdict]
) -> Verdict:
    """The check's trigger and rule, as if no precondition had failed."""
    found: list[Mapping[str, Any]] = []
    if check.trigger is not None:
        found = check.trigger.find(run)
        if not found:
            return missing(run, check.trigger.description)
    try:
        verdict = _at_its_level(check, run.revision, check.judge(run))
    except Exception as exc:  # a bug in a check must never turn into a verdict for the client
        return harness_fault(f"the check {check.id} itself failed", exc)
    cited = any(item in found for item in verdict.evidence)
    if verdict.status is Status.PASS and check.trigger is not None and not cited:
        return _harness_verdict(
            f"the check passed without citing its trigger ({check.trigger.description})"
        )
    return verdict


def _at_its_level(check: Check, revision: str, verdict: Verdict) -> Verdict:
    """A violation as FAIL, WARN or NOTE by the spec's word for its branch at the revision."""
    if verdict.kind != "violation":
        return verdict
    grounds = check.grounds_at(revision, verdict.clause)
    level = check.level_at(revision, verdict.clause)
    if level in ("MUST", "SHOULD"):
        return leveled(verdict, level, "")
    said = [f"{g.keyword} ({g.page}: '{g.phrase}')" for g in grounds if isinstance(g, Clause)]
    why = (
        f"noted, not failed: at {revision} the spec's word for this is {said[0]}"
        if said
        else f"noted, not failed: at {revision} no sentence of the spec binds the client to "
        f"this ({next((g.why for g in grounds if isinstance(g, Silence)), 'none found')})"
    )
    return leveled(verdict, level, why)


def not_judged(run: ScenarioRun, what: str) -> Verdict:
    """Why `what` (a trigger, an exchange a check needs) never happened: BLOCKED by the
    operation that failed or hung (or the check of the run that explains why it did), or
    N/A when nothing failed."""
    _, cause = _causes(run)
    if cause is not None:
        # "this never happened: " reads right before a clause ("the client sent
        # tools/call") and a thing ("a tools/call of add") alike: triggers are either.
        return blocked(
            cause.id,
            f"not judged: this never happened: {what}; the cause: {cause.reason}",
            cause.evidence,
            cause.defect,
        )
    return not_applicable(f"{what}: this never happened in the run")


def _causes(run: ScenarioRun) -> tuple[list[RootCause], RootCause | None]:
    """The run's root causes, confirmed, and its failed operation, explained."""
    if "judged_causes" not in run.cache:
        run.cache["judged_causes"] = ([], None)  # while they are worked out, nothing blocks
        causes, failed = causes_of_failure(run, lambda cause: _explained(run, cause))
        run.cache["judged_causes"] = ([_confirmed(run, c) for c in causes], failed)
    causes, failed = run.cache["judged_causes"]
    return list(causes), failed


def _own_verdict(run: ScenarioRun, check_id: str) -> Verdict | None:
    """A check's verdict on the run as if nothing had failed, when it applies to it: once
    per run, however many causes and failed calls ask (each failed call asks every check)."""
    own: dict[str, Verdict | None] = run.cache.setdefault("own_verdicts", {})
    if check_id not in own:
        check = CATALOGUE.get(check_id)
        applies = check is not None and check.applies(run.revision, run.transport)
        own[check_id] = _rule(check, run, _absent) if check is not None and applies else None
    return own[check_id]


def _confirmed(run: ScenarioRun, cause: RootCause) -> RootCause:
    """A root cause that names a check stands only where that check finds the violation
    in this run: a refusal no check finds wrong is the mock's fault, never a PASS that
    blocks the rest."""
    if cause.id not in CATALOGUE:
        return cause
    verdict = _own_verdict(run, cause.id)
    if verdict is not None and verdict.status in (Status.FAIL, Status.WARN):
        return cause
    said = (
        "it does not apply here" if verdict is None else f"{verdict.status.value}: {verdict.reason}"
    )
    if verdict is not None and verdict.status is Status.NOTE:
        # The mock refused what the spec leaves to the client: its script is too strict.
        return dataclasses.replace(
            cause,
            id="harness",
            reason=f"{cause.reason}, which {cause.id} notes but no MUST or SHOULD binds the "
            f"client to ({said}): the mock refused what the spec leaves open, the harness's "
            "own fault, not the client's; please report it",
        )
    return dataclasses.replace(
        cause,
        id="harness",
        reason=f"{cause.reason}, which is {cause.id}'s rule, but {cause.id} finds no violation "
        f"in this run ({said}): the harness's own fault, not the client's; please report it",
    )


def _explained(run: ScenarioRun, failure: RootCause) -> RootCause:
    """A failed operation whose window holds a violation that a check of the run judges
    (the ping sent during initialize that the client never answered, a server request
    left unanswered during a call) is charged to that check: the hang is its symptom."""
    started, ended = failure.moment, failure.until
    best: tuple[float, str, Verdict] | None = None
    for check_id in run.scenario.checks:
        if check_id == failure.id:
            continue
        verdict = _own_verdict(run, check_id)
        if verdict is None or verdict.status not in (Status.FAIL, Status.WARN):
            continue
        moments = [run.moment(e) for e in verdict.evidence if "seq" in e]
        inside = [m for m in moments if started <= m <= ended]
        if inside and (best is None or min(inside) < best[0]):
            best = (min(inside), check_id, verdict)
    if best is None:
        return failure
    moment, check_id, verdict = best
    return RootCause(
        check_id,
        # "..., so connect hung: no answer within 10.0 s": the violation, then its symptom.
        f"{verdict.reason}, so {failure.reason}",
        verdict.evidence,
        moment=moment,
        touched_ops=failure.touched_ops,
        touches_after=failure.touches_after,
        until=failure.until,
        symptom=failure.id,
        defect=_left_unanswered(run, verdict.evidence, failure.reason),
    )


UNANSWERED = "unanswered-server-requests"


def _left_unanswered(
    run: ScenarioRun, evidence: Sequence[Mapping[str, Any]], then: str
) -> Defect | None:
    """The defect "answers no request of the server", when the violation cites a request
    of the server the client never answered, under its id or any other (an answer under
    a mangled id is the id rule's defect, jsonrpc.answer-ids-exact's, not this one)."""
    asked = [
        e
        for e in run.entries
        if e["kind"] == "message"
        and e["direction"] == "server"
        and {"method", "id"} <= e["message"].keys()
    ]
    answers = [e for e in run.client_messages() if "method" not in e["message"]]
    for entry in evidence:
        if entry not in asked:
            continue
        request_id = entry["message"].get("id")
        later = [a for a in answers if a["seq"] > entry["seq"]]
        if any(same_json(a["message"].get("id"), request_id) for a in answers):
            continue
        if any(
            not any(same_json(a["message"].get("id"), e["message"].get("id")) for e in asked)
            for a in later
        ):
            continue  # an answer under an id the server never used: most likely this one's
        return Defect(
            UNANSWERED,
            "the client never answered the server's requests",
            str(entry["message"].get("method")),
            then,
        )
    return None


def harness_fault(what: str, exc: BaseException) -> Verdict:
    """The harness's own failure, with its traceback: never the client's."""
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return _harness_verdict(f"{what} ({type(exc).__name__}: {exc})", ({"traceback": trace},))


def _harness_verdict(what: str, evidence: tuple[Mapping[str, Any], ...] = ()) -> Verdict:
    return Verdict(
        Status.BLOCKED,
        f"{what}: the harness's own fault, not the client's; please report it",
        evidence,
        kind="harness",
        root="harness",
    )
