"""The figures the project publishes about real clients come from one source: the pins of
tests/_pins.py, which the end-to-end tests hold every client's run to. docs/compare.md is
made from those very runs (tools/compare.sh keeps the e2e runs' reports), and this test
fails when a cell or a total there says other than the pins, or when docs/findings.md
does not explain a pinned verdict.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from _pins import FASTMCP, MCP_AUTO, TYPESCRIPT_SDK, Pin, expected_statuses, suite_items

from harness.judging._catalogue import CATALOGUE, Clause

ROOT = Path(__file__).resolve().parents[2]
COMPARE = ROOT / "docs" / "compare.md"
FINDINGS = ROOT / "docs" / "findings.md"
ORDER = ("FAIL", "BLOCKED", "WARN", "NOTE", "PASS", "N/A", "SKIP")
PINNED = {
    "mcp (python sdk)": MCP_AUTO,
    "fastmcp": FASTMCP,
    "@modelcontextprotocol/sdk": TYPESCRIPT_SDK,
}
REFERENCE = "mcp-testbench-reference"


def _pinned(pins: tuple[Pin, ...]) -> dict[str, list[str]]:
    """Each check's item statuses, as the pins have them (BLOCKED without its root)."""
    items = suite_items()
    expected, stale = expected_statuses(pins, items)
    assert not stale, f"pins that cover no item: {stale}"
    by_check: dict[str, list[str]] = {}
    for key in items:
        status = expected.get(key, "PASS").partition(":")[0]
        by_check.setdefault(key[0], []).append(status)
    return by_check


def _cell(statuses: list[str]) -> str:
    """The cell docs/compare.md shows for these items (harness/reports/_compare.py)."""
    worst = min(statuses, key=ORDER.index)
    count = statuses.count(worst)
    return worst if count == len(statuses) else f"{worst} {count}/{len(statuses)}"


def _page() -> tuple[list[str], dict[str, dict[str, str]], dict[str, str], dict[str, str]]:
    """docs/compare.md read back: its columns, the cell of each check per column, each
    check's level column, and each column's totals line."""
    text = COMPARE.read_text(encoding="utf-8")
    totals = dict(re.findall(r"^- \*\*(.+?)\*\*: (.+)$", text, re.M))
    columns: list[str] = []
    cells: dict[str, dict[str, str]] = {}
    levels: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("| check |"):
            columns = [c.strip() for c in line.strip("|").split("|")][2:]
        elif line.startswith("| ") and not line.startswith("|---"):
            parts = [c.strip() for c in line.strip("|").split("|")]
            check, level, row = parts[0], parts[1], parts[2:]
            levels[check] = level
            cells[check] = {
                column: re.sub(r"^\[(.*?)\]\(.*\)$", r"\1", cell)
                for column, cell in zip(columns, row, strict=True)
            }
    return columns, cells, levels, totals


def _label(columns: list[str], name: str) -> str:
    found = [c for c in columns if c.startswith(name)]
    assert len(found) == 1, f"docs/compare.md has no one column for {name}: {columns}"
    return found[0]


@pytest.mark.parametrize("client", sorted(PINNED))
def test_every_cell_and_total_of_compare_is_the_pins(client: str) -> None:
    columns, cells, _, totals = _page()
    label = _label(columns, client)
    pinned = _pinned(PINNED[client])
    assert set(cells) == set(pinned), "docs/compare.md has other checks than the suite"
    wrong = {
        check: (cells[check][label], _cell(statuses))
        for check, statuses in pinned.items()
        if cells[check][label] != _cell(statuses)
    }
    assert not wrong, f"{client}: cells that are not the pins' (page, pins): {wrong}"
    counts = Counter(s for statuses in pinned.values() for s in statuses)
    assert totals[label] == ", ".join(f"{counts[s]} {s}" for s in ORDER if counts[s])


def test_the_reference_client_is_judged_and_never_fails() -> None:
    columns, cells, _, _ = _page()
    label = _label(columns, REFERENCE)
    seen = {row[label].split()[0] for row in cells.values()}
    assert seen <= {"PASS", "N/A"}, seen


def test_each_level_shown_is_one_the_spec_gives_the_check() -> None:
    _, _, levels, _ = _page()
    for check_id, shown in levels.items():
        check = CATALOGUE[check_id]
        possible = {check.level_at(r, b) for r in check.revisions for b in check.branches}
        said = set(shown.split(" ", 1)[0].split("/"))
        assert said <= possible, f"{check_id}: {shown!r}, the spec gives {possible}"


def test_every_verdict_pinned_beyond_pass_is_explained_in_the_findings() -> None:
    findings = FINDINGS.read_text(encoding="utf-8")
    for pins in PINNED.values():
        for pin in pins:
            if pin.status in ("FAIL", "WARN", "NOTE") and pin.check != "*":
                assert f"`{pin.check}`" in findings, f"docs/findings.md never names {pin.check}"


def clause_line(check_id: str) -> str:
    """The `**Clause**` line of a finding about `check_id`: every ground of the check, as the
    catalogue declares it (a page and a few words of its sentence, or none)."""
    check = CATALOGUE[check_id]
    parts = []
    for ground in check.grounds:
        branch = f"branch `{ground.branch}`: " if ground.branch else ""
        where = ", ".join(ground.revisions)
        if isinstance(ground, Clause):
            parts.append(f'{branch}{ground.page}: "{ground.phrase}" ({ground.keyword}, {where})')
        else:
            parts.append(f"{branch}no sentence binds the client ({where})")
    return f"- **Clause** (`{check_id}`): " + "; ".join(parts)


def _findings_sections() -> dict[str, str]:
    text = FINDINGS.read_text(encoding="utf-8")
    heads = list(re.finditer(r"^#{2,3} ([FJA]\d+)\b.*$", text, re.M))
    return {
        head.group(1): text[head.end() : (heads[i + 1].start() if i + 1 < len(heads) else None)]
        for i, head in enumerate(heads)
    }


def test_every_finding_names_its_clause_as_the_catalogue_has_it() -> None:
    sections = _findings_sections()
    findings = [name for name in sections if name.startswith("F")]
    assert findings, "docs/findings.md has no findings"
    for name, body in sections.items():
        lines = re.findall(r"^- \*\*Clause\*\* \(`([^`]+)`\).*$", body, re.M)
        if name.startswith("F"):
            assert lines, f"{name} names no clause"
        for check_id in lines:
            expected = clause_line(check_id)
            assert expected in body.splitlines(), f"{name}: the clause line should be\n{expected}"
