"""Verdicts: what a check concludes, with the evidence it concluded it from.

Seven statuses, and a `kind` that says which branch of a check produced the verdict (the
mutation tests compare kinds, so a FAIL for want of evidence never passes for a FAIL
that found the violation):

    PASS     kind "seen"            the behaviour the check names was seen, and it was right
    FAIL     kind "violation"       a MUST was violated (the evidence shows how)
    WARN     kind "violation"       a SHOULD was violated
    NOTE     kind "violation"       the check saw what it looks for go otherwise, where the
                                    spec's word is a MAY or no sentence binds the client:
                                    reported and counted apart, never failing a run
    SKIP     kind "declared"        the client *declared* it does not support what the check
                                    needs; never from what the client did
    N/A      kind "not-applicable"  the condition the check is about never arose (why)
    BLOCKED  kind "blocked"         a precondition failed, so the check could not be judged;
                                    `root` names the root cause (a check id such as
                                    "http.session-id-echoed", or "client.connect", ...)

A check reports a violation with `violated(reason, evidence, clause=branch)`; which of
FAIL, WARN and NOTE it is comes from the clause of that branch at the run's revision
(harness.judging.judge levels it: harness/judging/_catalogue.py), never from the check.

Neither N/A nor BLOCKED is ever a pass. A BLOCKED item fails the run like a FAIL: what
blocked it is a defect to fix first (the reports lead with root causes).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "Defect",
    "Status",
    "Verdict",
    "blocked",
    "fail",
    "leveled",
    "not_applicable",
    "passed",
    "skip",
    "violated",
    "warn",
]


class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    NOTE = "NOTE"
    SKIP = "SKIP"
    NOT_APPLICABLE = "N/A"
    BLOCKED = "BLOCKED"

    @property
    def failing(self) -> bool:
        """Whether an item with this status fails the run."""
        return self in (Status.FAIL, Status.BLOCKED)


_KINDS = {
    Status.PASS: ("seen",),
    Status.FAIL: ("violation",),
    Status.WARN: ("violation",),
    Status.NOTE: ("violation",),
    Status.SKIP: ("declared",),
    Status.NOT_APPLICABLE: ("not-applicable",),
    Status.BLOCKED: ("blocked", "harness"),
}


@dataclass(frozen=True)
class Defect:
    """What the client did wrong, where several root causes are that one thing: a client
    that answers no request of the server breaks one requirement per kind of request
    (ping, sampling, elicitation, ...), and the reports tell it as one defect, not one
    per check (harness.reports.root_causes groups roots by `kind`)."""

    kind: str
    """Same kind, same defect: the reports' grouping key."""
    says: str
    """The defect as a person says it, for any of its instances."""
    about: str
    """This instance: the request left unanswered, ..."""
    then: str
    """What it made the client fail: "connect failed: ...: no response within 10.0 s"."""

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "says": self.says, "about": self.about, "then": self.then}


@dataclass(frozen=True)
class Verdict:
    status: Status
    reason: str
    evidence: tuple[Mapping[str, Any], ...] = field(default=())
    kind: str = ""
    """Which branch decided: see the module docstring. Defaults from the status."""
    root: str | None = None
    """BLOCKED only: the root cause's id (a check id, or "client.<operation>", ...)."""
    clause: str = ""
    """A violation's branch of its check: whose clause sets its level ("" the check's own)."""
    defect: Defect | None = None
    """BLOCKED only, optional: the defect its root cause is one instance of."""

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", _KINDS[self.status][0])
        if self.kind not in _KINDS[self.status]:
            raise ValueError(f"a {self.status.value} cannot be of kind {self.kind!r}")
        # The rule the whole suite rests on: a check without evidence is never a pass.
        if self.status is Status.PASS and not any(_is_record(e) for e in self.evidence):
            raise ValueError(f"a PASS needs evidence from the run: {self.reason}")
        if (self.status is Status.BLOCKED) != (self.root is not None):
            raise ValueError("a BLOCKED verdict, and only that, names its root cause")
        if self.defect is not None and self.status is not Status.BLOCKED:
            raise ValueError("only a BLOCKED verdict names the defect of its root cause")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status.value,
            "kind": self.kind,
            "reason": self.reason,
            "evidence": list(self.evidence),
        }
        if self.root is not None:
            out["root"] = self.root
        if self.clause:
            out["clause"] = self.clause
        if self.defect is not None:
            out["defect"] = self.defect.to_json()
        return out


def _is_record(item: Mapping[str, Any]) -> bool:
    """A transcript entry (it has a sequence number) or an operation the harness asked."""
    return "seq" in item or "op" in item


def passed(reason: str, evidence: Sequence[Mapping[str, Any]]) -> Verdict:
    return Verdict(Status.PASS, reason, tuple(evidence))


def fail(reason: str, evidence: Sequence[Mapping[str, Any]] = ()) -> Verdict:
    return Verdict(Status.FAIL, reason, tuple(evidence))


def warn(reason: str, evidence: Sequence[Mapping[str, Any]] = ()) -> Verdict:
    return Verdict(Status.WARN, reason, tuple(evidence))


def violated(
    reason: str, evidence: Sequence[Mapping[str, Any]] = (), *, clause: str = ""
) -> Verdict:
    """What a check says when the client did otherwise than its clause asks: a FAIL until
    `leveled` by the clause of `clause` (the branch) at the run's revision."""
    return Verdict(Status.FAIL, reason, tuple(evidence), clause=clause)


_STATUS_OF_LEVEL = {"MUST": Status.FAIL, "SHOULD": Status.WARN, "MAY": Status.NOTE}


def leveled(verdict: Verdict, level: str, why: str) -> Verdict:
    """A violation at the spec's level for it: FAIL for a MUST, WARN for a SHOULD, and a
    NOTE, with `why`, where the word is a MAY or nothing binds the client."""
    if verdict.kind != "violation":
        return verdict
    status = _STATUS_OF_LEVEL.get(level, Status.NOTE)
    if status is verdict.status:
        return verdict
    reason = verdict.reason if status is not Status.NOTE else f"{verdict.reason} ({why})"
    return replace(verdict, status=status, reason=reason)


def skip(reason: str) -> Verdict:
    return Verdict(Status.SKIP, reason)


def not_applicable(reason: str, evidence: Sequence[Mapping[str, Any]] = ()) -> Verdict:
    return Verdict(Status.NOT_APPLICABLE, reason, tuple(evidence))


def blocked(
    root: str,
    reason: str,
    evidence: Sequence[Mapping[str, Any]] = (),
    defect: Defect | None = None,
) -> Verdict:
    return Verdict(Status.BLOCKED, reason, tuple(evidence), root=root, defect=defect)
