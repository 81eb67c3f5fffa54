"""The check catalogue: every check, the requirements it covers, and where it applies.

A check judges one scenario run (harness/running/_scenario.py) and returns a Verdict. Checks are
declared with `@check(...)` in the modules of harness/suite/, each next to the
scenarios that exercise it, and collected here by id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from harness.protocol import REVISIONS

if TYPE_CHECKING:
    from harness.judging._triggers import Trigger
    from harness.judging._verdicts import Verdict
    from harness.running import ScenarioRun

__all__ = ["CATALOGUE", "SPEC_SITE", "TRANSPORTS", "Check", "Level", "check"]

Level = Literal["MUST", "SHOULD"]
TRANSPORTS: tuple[str, ...] = ("stdio", "http", "sse-legacy")
SPEC_SITE = "https://modelcontextprotocol.io/specification"

Judge = Callable[["ScenarioRun"], "Verdict"]


@dataclass(frozen=True)
class Check:
    id: str
    requirements: tuple[str, ...]
    level: Level
    revisions: tuple[str, ...]
    transports: tuple[str, ...]
    spec: str
    """Page of the specification, relative to a revision: e.g. "basic/lifecycle"."""
    description: str
    judge: Judge
    feature: str | None = None
    """A feature the client must declare for the check to apply (otherwise SKIP)."""
    trigger: Trigger | None = None
    """The exchange the check is about: absent, the item is N/A or BLOCKED, and a PASS
    must cite it (harness/judging/_judge.py)."""
    independent_of: tuple[str, ...] = ()
    """Root causes (harness/judging/_preconditions.py) that do not block this check: it judges
    what the client sent before, or regardless of, that failure."""

    def spec_url(self, revision: str) -> str:
        return f"{SPEC_SITE}/{revision}/{self.spec}"

    def applies(self, revision: str, transport: str) -> bool:
        return revision in self.revisions and transport in self.transports


CATALOGUE: dict[str, Check] = {}


def check(
    check_id: str,
    *,
    requirements: Iterable[str],
    level: Level,
    spec: str,
    description: str,
    revisions: Iterable[str] = REVISIONS,
    transports: Iterable[str] = TRANSPORTS,
    feature: str | None = None,
    trigger: Trigger | None = None,
    independent_of: Iterable[str] = (),
) -> Callable[[Judge], Judge]:
    """Register the decorated judge as check `check_id`."""

    def register(judge: Judge) -> Judge:
        if check_id in CATALOGUE:
            raise ValueError(f"check id {check_id!r} is declared twice")
        CATALOGUE[check_id] = Check(
            id=check_id,
            requirements=tuple(requirements),
            level=level,
            revisions=tuple(r for r in REVISIONS if r in set(revisions)),
            transports=tuple(t for t in TRANSPORTS if t in set(transports)),
            spec=spec,
            description=description,
            judge=judge,
            feature=feature,
            trigger=trigger,
            independent_of=tuple(independent_of),
        )
        return judge

    return register
