"""The check catalogue: every check, the requirements it covers, and where it applies.

A check judges one scenario run (harness/running/_scenario.py) and returns a Verdict. Checks are
declared with `@check(...)` in the modules of harness/suite/, each next to the
scenarios that exercise it, and collected here by id.

A check's level is not declared: it is the spec's own word. Each check names, for every
revision it is judged at, the clause it rests on (`Clause`: a page of that revision and a few
words locating the sentence, keyword included), or says that the spec is silent there
(`Silence`, with why). A check whose violations rest on different sentences names each
branch, and its verdict names the branch it took (`violated(..., clause="branch")`). The
keyword of the branch's clause at the run's revision sets the status: MUST, MUST NOT,
REQUIRED, SHALL give FAIL; SHOULD, SHOULD NOT, RECOMMENDED give WARN; a MAY, or silence,
gives NOTE, which is reported and counted apart and never fails a run
(tests/harness/suite/test_clauses.py reads the pages and holds every clause to them).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from harness.protocol import REVISIONS

if TYPE_CHECKING:
    from harness.judging._triggers import Trigger
    from harness.judging._verdicts import Verdict
    from harness.running import ScenarioRun

__all__ = [
    "CATALOGUE",
    "SPEC_SITE",
    "TRANSPORTS",
    "Check",
    "Clause",
    "Level",
    "Silence",
    "check",
    "clause",
    "keyword_of",
    "silent",
]

Level = Literal["MUST", "SHOULD", "MAY", "none"]
"""What the spec says at the branch of a check: MUST gives FAIL, SHOULD gives WARN, and
MAY or "none" (no sentence binds the client there) give NOTE."""
TRANSPORTS: tuple[str, ...] = ("stdio", "http", "sse-legacy")
SPEC_SITE = "https://modelcontextprotocol.io/specification"

Judge = Callable[["ScenarioRun"], "Verdict"]

# RFC 2119 and RFC 8174 keywords, the two-word ones first so that "MUST NOT" is not read
# as "MUST"; each with the level it gives.
_KEYWORDS: tuple[tuple[str, Level], ...] = (
    ("MUST NOT", "MUST"), ("SHALL NOT", "MUST"), ("SHOULD NOT", "SHOULD"),
    ("NOT RECOMMENDED", "SHOULD"), ("MUST", "MUST"), ("REQUIRED", "MUST"), ("SHALL", "MUST"),
    ("SHOULD", "SHOULD"), ("RECOMMENDED", "SHOULD"), ("MAY", "MAY"), ("OPTIONAL", "MAY"),
)  # fmt: skip
_STRENGTH: dict[Level, int] = {"none": 0, "MAY": 1, "SHOULD": 2, "MUST": 3}


def keyword_of(phrase: str) -> str:
    """The one BCP-14 keyword in `phrase` (upper case only: a lowercase "should" is no
    keyword); a phrase with none, or with keywords of two levels, is a declaration error."""
    found: list[str] = []
    rest = phrase
    for word, _ in _KEYWORDS:
        pattern = rf"\b{word}\b"
        if re.search(pattern, rest):
            found.append(word)
            rest = re.sub(pattern, " ", rest)
    levels = {dict(_KEYWORDS)[word] for word in found}
    if len(levels) != 1:
        raise ValueError(
            f"a clause's phrase carries one BCP-14 keyword, not {found or 'none'}: {phrase!r}"
        )
    return found[0]


@dataclass(frozen=True)
class Clause:
    """The sentence a check (or one branch of it) rests on at some revisions: its page,
    relative to the revision (`basic/lifecycle`), and a few words locating it on that page,
    its keyword among them. The words are found on the page as it is written, less
    markdown (bold, code spans, link targets) and with white space folded."""

    page: str
    phrase: str
    revisions: tuple[str, ...]
    branch: str = ""

    @property
    def keyword(self) -> str:
        return keyword_of(self.phrase)

    @property
    def level(self) -> Level:
        return dict(_KEYWORDS)[self.keyword]


@dataclass(frozen=True)
class Silence:
    """No sentence at these revisions binds the client to what the branch judges (the
    nearest ones bind the server, or are only in a changelog, or there are none): what
    the check sees there is a NOTE, never a FAIL or WARN."""

    why: str
    revisions: tuple[str, ...]
    branch: str = ""

    level: ClassVar[Level] = "none"


Ground = Clause | Silence


def clause(page: str, phrase: str, *revisions: str, branch: str = "") -> Clause:
    """A clause at `revisions` (none named: at every revision its check is judged at)."""
    return Clause(page, phrase, tuple(revisions), branch)


def silent(why: str, *revisions: str, branch: str = "") -> Silence:
    """The spec says nothing that binds the client here, at `revisions` (none named: at
    every revision its check is judged at)."""
    return Silence(why, tuple(revisions), branch)


@dataclass(frozen=True)
class Check:
    id: str
    requirements: tuple[str, ...]
    grounds: tuple[Ground, ...]
    """The clause (or silence) of each branch at each revision: see the module docstring."""
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

    @property
    def branches(self) -> tuple[str, ...]:
        """The branches the check names ("" is the check's own, for an unnamed violation)."""
        return tuple(dict.fromkeys(["", *(g.branch for g in self.grounds)]))

    def grounds_at(self, revision: str, branch: str = "") -> tuple[Ground, ...]:
        """What the branch rests on at the revision; a branch with nothing of its own there
        rests on the check's own clauses."""
        if branch not in self.branches:
            raise KeyError(f"{self.id} names no branch {branch!r} (it has {self.branches[1:]})")
        own = tuple(g for g in self.grounds if g.branch == branch and revision in g.revisions)
        if own or not branch:
            return own
        return self.grounds_at(revision)

    def level_at(self, revision: str, branch: str = "") -> Level:
        """The spec's word for the branch at the revision: the strongest of its clauses."""
        return max(
            (g.level for g in self.grounds_at(revision, branch)),
            key=_STRENGTH.__getitem__,
            default="none",
        )

    def headline_level(self, revision: str) -> Level:
        """The strongest word among the check's branches at the revision, for its row."""
        return max((self.level_at(revision, b) for b in self.branches), key=_STRENGTH.__getitem__)

    def applies(self, revision: str, transport: str) -> bool:
        return revision in self.revisions and transport in self.transports


CATALOGUE: dict[str, Check] = {}


def check(
    check_id: str,
    *,
    requirements: Iterable[str],
    clauses: Iterable[Ground],
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
        judged = tuple(r for r in REVISIONS if r in set(revisions))
        found = list(clauses)
        if not found:
            raise ValueError(f"{check_id} names no clause: its level is the spec's word")
        # A ground that names no revision holds wherever the check is judged.
        grounds = tuple(dataclasses.replace(g, revisions=g.revisions or judged) for g in found)
        for ground in grounds:
            if isinstance(ground, Clause):
                keyword_of(ground.phrase)  # one keyword, or the declaration is wrong
            stray = set(ground.revisions) - set(judged)
            if stray:
                raise ValueError(
                    f"{check_id}: a clause at {sorted(stray)}, where the check is not judged"
                )
        CATALOGUE[check_id] = Check(
            id=check_id,
            requirements=tuple(requirements),
            grounds=grounds,
            revisions=judged,
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
