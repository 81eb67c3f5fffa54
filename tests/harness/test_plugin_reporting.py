"""How a run is told, run through pytester with a client that has one planted defect
(tests/_planted.py): each defect gets one root-cause line that names the check it breaks,
in the same words in the terminal, markdown, HTML, JSON and JUnit; the terminal output fits
100 columns, never cuts a root cause, and gives a BLOCKED item no more than one line (its
full report with -rB or -v). What is never broken to fit: an item's id on pytest's own
lines (some ids are longer than 100 columns), a link, and this machine's paths.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from _mutation import OP_TIMEOUT

from harness.judging._catalogue import CATALOGUE

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parents[1]  # where _planted.py is, for subprocess runs
WIDTH = 100
ROOTS_HEAD = "mcp-testbench: root causes (fix these first):"
# The mutation tests' bound, grown with the machine's load, but under the 30 s the mock
# waits for the answer to a request of its own: past that the mock gives up first, and a
# client that never answers shows no hang at all (its items are judged, none blocked).
TIMEOUT = min(OP_TIMEOUT, 10.0)


@dataclass(frozen=True)
class Planted:
    client: str
    transport: str
    roots: frozenset[str] | None
    """The checks the defect's one root-cause line must name, exactly; None: the checks
    it fails, named once in that one line (a client that answers no server request
    breaks one requirement per kind of request: ping, roots/list, sampling, elicitation)."""


PLANTED = {
    "no session id echo": Planted(
        "_planted:NoSessionEcho", "http", frozenset({"http.session-id-echoed"})
    ),
    "garbage on stdio": Planted(
        "_planted:GarbageOnStdio", "stdio", frozenset({"stdio.only-mcp-messages"})
    ),
    "never answers server requests": Planted("_planted:NeverAnswersServerRequests", "http", None),
}


@dataclass
class Run:
    stdout: list[str]
    document: dict[str, Any]
    markdown: str
    page: str
    junit: ET.Element


def _run(pytester: pytest.Pytester, planted: Planted, *extra: str) -> Run:
    paths = {ext: Path(f"report.{ext}") for ext in ("json", "md", "html")}  # in pytester.path
    result = pytester.runpytest_subprocess(
        f"--mcp-client={planted.client}",
        "--mcp-revision=2025-11-25",
        f"--mcp-transport={planted.transport}",
        f"--mcp-timeout={TIMEOUT:.1f}",
        *(f"--mcp-report={path}" for path in paths.values()),
        "--junitxml=junit.xml",
        "-p",
        "no:cacheprovider",
        *extra,
        timeout=300,
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    return Run(
        result.stdout.lines,
        json.loads((pytester.path / paths["json"]).read_text(encoding="utf-8")),
        (pytester.path / paths["md"]).read_text(encoding="utf-8"),
        (pytester.path / paths["html"]).read_text(encoding="utf-8"),
        ET.parse(pytester.path / "junit.xml").getroot(),
    )


@pytest.fixture
def terminal_of_100(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person's terminal 100 columns wide, and the planted clients importable by the
    subprocess. Not a CI job's: under CI (or BUILD_NUMBER) pytest prints its short summary
    lines whole, whatever the width, so that a CI log keeps every message entire."""
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(TESTS))


def _terminal_roots(lines: list[str]) -> list[str]:
    """The root-cause lines of the terminal summary, each put back on one line (a long one
    goes on under a hanging indent)."""
    start = lines.index(ROOTS_HEAD) + 1
    roots: list[str] = []
    for line in lines[start:]:
        if line.startswith("      "):
            roots[-1] += " " + line.strip()
        elif line.startswith("  ") and not line.startswith("   "):
            roots.append(line.strip())
        else:
            break
    return roots


_VOID = {"br", "col", "hr", "img", "input", "meta", "wbr"}  # elements with no end tag


class _RootItems(HTMLParser):
    """Each root cause of the HTML report: its line as text, where its root links to, and
    the verdicts of the items folded under it."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[dict[str, Any]] = []
        self._depth = 0  # inside <ul class="roots">: how many elements deep
        self._folded = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "ul" and a.get("class") == "roots":
            self._depth = 1
            return
        if not self._depth or tag in _VOID:
            return
        self._depth += 1
        if tag == "li" and self._depth == 2:
            self.roots.append({"text": "", "links": [], "folded": []})
            self._folded = False
        elif tag == "details":
            self._folded = True
        elif tag == "a" and not self._folded:
            self.roots[-1]["links"].append(a.get("href"))
        elif tag == "tr" and self._folded and a.get("data-verdict"):
            self.roots[-1]["folded"].append(a.get("data-verdict"))

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth >= 2 and not self._folded and self.roots:
            self.roots[-1]["text"] += data


def _html_roots(page: str) -> list[dict[str, Any]]:
    parser = _RootItems()
    parser.feed(page)
    return parser.roots


@pytest.mark.usefixtures("terminal_of_100")
@pytest.mark.parametrize("defect", sorted(PLANTED))
def test_one_planted_defect_one_root_cause_line_the_same_in_every_report(
    pytester: pytest.Pytester, defect: str
) -> None:
    planted = PLANTED[defect]
    run = _run(pytester, planted)
    results = run.document["results"]
    blocked = [r for r in results if r["status"] == "BLOCKED"]
    assert blocked, "the defect blocks nothing: it tells nothing of the root causes"

    # JSON: one entry per root cause, each a check of the suite, FAILed on this very run,
    # and together they hold every BLOCKED item.
    roots = run.document["root_causes"]
    assert len(roots) == 1, "one defect, one root-cause line"
    (root,) = roots
    names = root["checks"]
    assert names[0] == root["root"]
    assert len(names) == len(set(names)), names
    assert {r["root"] for r in blocked} == set(names)
    assert root["items"] == len(blocked)
    assert root["verdict"] == "FAIL"
    for name in names:
        assert name in CATALOGUE, f"{name} is no check (client.connect?)"
        assert any(r["check"] == name and r["status"] == "FAIL" for r in results)
    assert not root["reason"].startswith(("blocked by", "not judged"))
    if planted.roots is not None:
        assert set(names) == planted.roots
        # The cause's own words, as one of its items gives them, without the wrapping.
        assert any(root["reason"] in r["reason"] for r in blocked)
    else:
        # Named as the defect it is, each request it left unanswered, and every check it
        # fails; the hang charged to the check that explains it, never client.connect.
        assert names[0] == "features.ping-before-initialized", names
        assert root["reason"].startswith("the client never answered the server's requests (")
        for method in ("ping", "elicitation/create", "sampling/createMessage", "roots/list"):
            assert method in root["reason"].split(")", 1)[0], root["reason"]
        assert root["reason"].endswith(f"the same defect fails {', '.join(names[1:])}")
        for r in blocked:
            assert r["defect"]["kind"] == "unanswered-server-requests", r
    lines = [
        f"{root['root']} {root['verdict']} blocks {root['items']} "
        f"item{'s' if root['items'] != 1 else ''}: {root['reason']}"
        for root in roots
    ]

    # The same lines, in the same order, in the terminal (wrapped, never cut) ...
    assert _terminal_roots(run.stdout) == lines
    assert not any(line.endswith("...") for line in _terminal_roots(run.stdout))
    # ... the markdown ...
    section = run.markdown.split("## Root causes (fix these first)\n\n", 1)[1]
    assert section.split("\n\n", 1)[0].splitlines() == [f"- {line}" for line in lines]
    # ... the HTML, where each root links to its check's row and folds its items ...
    shown = _html_roots(run.page)
    assert [html.unescape(root["text"]).strip() for root in shown] == [
        f"root cause {line}" for line in lines
    ]
    for root, entry in zip(roots, shown, strict=True):
        assert entry["links"] == [f"#check-{name}" for name in root["checks"]]
        for name in root["checks"]:
            assert f'<tr id="check-{name}"' in run.page
        assert entry["folded"] == ["BLOCKED"] * root["items"]
    # ... and JUnit: a BLOCKED item's failure message names its root, in those words.
    by_root = {name: lines[0] for name in names}
    messages = []
    for case in run.junit.iter("testcase"):
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        if properties.get("mcp_status") == "BLOCKED":
            failure = case.find("failure")
            assert failure is not None
            messages.append(failure.get("message", ""))
            head, said = failure.get("message", "").splitlines()
            assert head.endswith(f", blocked by {properties['mcp_root']}")
            assert said == f"root cause: {by_root[str(properties['mcp_root'])]}"
    assert len(messages) == len(blocked)

    # The terminal: 100 columns; a BLOCKED item has no report of its own by default, the
    # items are counted under their root.
    ids = {r["id"] for r in results}
    too_wide = [
        line
        for line in run.stdout
        if len(line) > WIDTH
        and not _an_item_id_line(line, ids)
        and not _machine_line(line)
        and not re.fullmatch(r" *https://\S+", line)  # a link, whole on its own line
    ]
    assert not too_wide, "\n".join(too_wide)
    out = "\n".join(run.stdout)
    assert not [r["id"] for r in blocked if r["id"] in out]
    folded = [line for line in run.stdout if " BLOCKED by " in line]
    assert folded == [
        f"{root['items']} item{'s' if root['items'] != 1 else ''} BLOCKED by {root['root']}: "
        "see the root causes"
        for root in roots
    ]
    assert len(folded) <= len(blocked)


def _an_item_id_line(line: str, ids: set[str]) -> bool:
    """pytest's own line of an item whose id alone leaves no room: the rule over its
    failure report (`_ ID _`) or its line in the short summary (`FAILED ID`, the message
    left out). An id is what re-runs the item, never broken; some are over 100 columns."""
    found = re.fullmatch(r"_+ (\S+) +_+", line) or re.fullmatch(r"FAILED (\S+)", line)
    return found is not None and found.group(1) in ids and len(found.group(1)) > WIDTH - 8


def _machine_line(line: str) -> bool:
    """pytest's lines that name this machine: its plugins, its paths (the scratch folder
    of a pytester run is deep)."""
    machine = ("platform ", "rootdir: ", "plugins: ", "cachedir: ")
    return line.startswith(machine) or bool(re.fullmatch(r"-+ generated xml file: \S+ -+", line))


@pytest.mark.usefixtures("terminal_of_100")
@pytest.mark.parametrize("asked", ["-rB", "-v"])
def test_rb_or_verbose_gives_each_blocked_item_its_full_report(
    pytester: pytest.Pytester, asked: str
) -> None:
    run = _run(pytester, PLANTED["garbage on stdio"], asked)
    blocked = [r for r in run.document["results"] if r["status"] == "BLOCKED"]
    assert blocked
    out = "\n".join(run.stdout)
    assert "BLOCKED (not judged: a precondition failed)" in out
    for r in blocked:
        assert re.search(rf"_ {re.escape(r['id'])} +_", out), r["id"]
    assert out.count("  root cause: stdio.only-mcp-messages (fix that first") == len(blocked)
    assert not [line for line in run.stdout if " BLOCKED by " in line and "see the root" in line]


@pytest.mark.usefixtures("terminal_of_100")
def test_under_xdist_junit_names_the_root_cause_in_the_same_words(
    pytester: pytest.Pytester,
) -> None:
    """The controller writes JUnit from the workers' reports: each BLOCKED item's message
    still ends in the root-cause line that the whole run's results give."""
    run = _run(pytester, PLANTED["no session id echo"], "-n", "2", "-k", "tools")
    [root] = run.document["root_causes"]
    line = f"{root['root']} FAIL blocks {root['items']} items: {root['reason']}"
    assert _terminal_roots(run.stdout) == [line]
    said = []
    for case in run.junit.iter("testcase"):
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        failure = case.find("failure")
        if properties.get("mcp_status") == "BLOCKED" and failure is not None:
            said.append(failure.get("message", "").splitlines()[-1])
    assert said == [f"root cause: {line}"] * root["items"]
