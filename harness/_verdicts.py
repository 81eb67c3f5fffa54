"""Verdicts: what a check concludes, with the evidence it concluded it from."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Status", "Verdict", "fail", "passed", "skip", "warn"]


class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"  # a MUST was violated, or the exchange the check needs never happened
    WARN = "WARN"  # a SHOULD was violated
    SKIP = "SKIP"  # the client declared that it does not support the feature


@dataclass(frozen=True)
class Verdict:
    status: Status
    reason: str
    evidence: tuple[Mapping[str, Any], ...] = field(default=())

    def __post_init__(self) -> None:
        # The rule the whole suite rests on: a check without evidence is never a pass.
        if self.status is Status.PASS and not self.evidence:
            raise ValueError(f"a PASS needs evidence: {self.reason}")

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status.value, "reason": self.reason, "evidence": list(self.evidence)}


def passed(reason: str, evidence: Sequence[Mapping[str, Any]]) -> Verdict:
    return Verdict(Status.PASS, reason, tuple(evidence))


def fail(reason: str, evidence: Sequence[Mapping[str, Any]] = ()) -> Verdict:
    return Verdict(Status.FAIL, reason, tuple(evidence))


def warn(reason: str, evidence: Sequence[Mapping[str, Any]] = ()) -> Verdict:
    return Verdict(Status.WARN, reason, tuple(evidence))


def skip(reason: str) -> Verdict:
    return Verdict(Status.SKIP, reason)
