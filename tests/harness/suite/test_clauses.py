"""Every check's level is the spec's own word: each branch of each check names, at every
revision it is judged at, the sentence it rests on (or says that none binds the client),
and that sentence is on that revision's page with the keyword that gives the level.

Reads the specification's pages (`mcp-spec/<revision>/`, test data: tests/_spec_data.py).
"""

from __future__ import annotations

import functools
import inspect
import re

import pytest
from _spec_data import spec_data
from find_clause import normalise

from harness.judging import CATALOGUE, Check, Clause, Silence, keyword_of
from harness.suite import SCENARIOS  # noqa: F401  (declares the checks)

CHECKS = sorted(CATALOGUE)


@functools.cache
def page(revision: str, name: str) -> str | None:
    path = spec_data("mcp-spec") / revision / f"{name}.mdx"
    return normalise(path.read_text(encoding="utf-8")) if path.exists() else None


@pytest.mark.parametrize("check_id", CHECKS)
def test_every_branch_has_its_ground_at_every_revision(check_id: str) -> None:
    check = CATALOGUE[check_id]
    for revision in check.revisions:
        own = check.grounds_at(revision)
        assert own, f"{check_id} names no clause (nor silence) at {revision}"
        for branch in check.branches[1:]:
            grounds = [g for g in check.grounds if g.branch == branch]
            assert grounds, f"{check_id}: branch {branch!r} has no clause of its own"


@pytest.mark.parametrize("check_id", CHECKS)
def test_every_clause_is_on_its_page(check_id: str) -> None:
    check = CATALOGUE[check_id]
    for ground in check.grounds:
        if isinstance(ground, Silence):
            assert len(ground.why) > 20, f"{check_id}: say why the spec is silent there"
            continue
        for revision in ground.revisions:
            text = page(revision, ground.page)
            assert text is not None, f"{check_id}: no page {ground.page} at {revision}"
            assert normalise(ground.phrase) in text, (
                f"{check_id}: {ground.phrase!r} is not on {ground.page} at {revision}"
            )


@pytest.mark.parametrize("check_id", CHECKS)
def test_a_clause_is_a_few_words_not_a_copied_sentence(check_id: str) -> None:
    for ground in CATALOGUE[check_id].grounds:
        if isinstance(ground, Clause):
            assert len(ground.phrase.split()) <= 12, f"{check_id}: {ground.phrase!r}"


@pytest.mark.parametrize("check_id", CHECKS)
def test_the_branches_a_check_names_are_the_ones_its_rule_takes(check_id: str) -> None:
    """Each named branch is one the check's function reports a violation under, and it
    reports none under a branch it does not name (that would be a harness fault)."""
    check = CATALOGUE[check_id]
    source = _source(check)
    taken = set(re.findall(r"clause=\"([^\"]+)\"", source))
    assert taken <= set(check.branches), f"{check_id} reports undeclared branches"
    assert set(check.branches[1:]) <= taken, f"{check_id} declares branches it never takes"


def _source(check: Check) -> str:
    """The check's function and the module-level helpers it calls by name."""
    module = inspect.getmodule(check.judge)
    text = inspect.getsource(check.judge)
    seen = {check.judge.__name__}
    for name in re.findall(r"\b(_[a-z_0-9]+)\(", text):
        helper = getattr(module, name, None)
        if name not in seen and inspect.isfunction(helper):
            seen.add(name)
            text += inspect.getsource(helper)
    return text


def test_keywords_give_the_levels() -> None:
    assert keyword_of("the client MUST NOT send") == "MUST NOT"
    assert keyword_of("REQUIRED for compliance") == "REQUIRED"
    assert keyword_of("Clients SHOULD: - Treat") == "SHOULD"
    assert keyword_of("Clients MAY provide") == "MAY"
    with pytest.raises(ValueError, match="one BCP-14 keyword"):
        keyword_of("clients should retry")  # lowercase: no keyword
    with pytest.raises(ValueError, match="one BCP-14 keyword"):
        keyword_of("MUST send and SHOULD retry")
