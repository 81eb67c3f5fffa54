"""The reports made from results: the HTML page, the terminal summary.

The results here are made up, in the shape the plugin records (tests/harness/test_plugin.py runs
the plugin itself and checks what it writes), so that every verdict, every revision and
every transport of the real catalogue can appear at once.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.judging._catalogue import CATALOGUE
from harness.reports._report import WIDTH, root_cause_lines, terminal_summary, write_reports
from harness.suite import SCENARIOS
from mock_servers import package_version

STATUSES = ("PASS", "FAIL", "WARN", "BLOCKED", "N/A", "SKIP")
CLIENT = "acme-mcp-client 3.1.4"
EVIDENCE = [
    {"seq": 7, "t": 0.25, "kind": "message", "direction": "client", "message": {"id": 2}},
    {"op": "call_tool", "args": ["add"], "error": {"kind": "protocol", "message": "nope"}},
]


def _item(scenario: str, revision: str, transport: str, check: str, status: str) -> dict[str, Any]:
    spec = CATALOGUE[check].spec_url(revision)
    item: dict[str, Any] = {
        "id": f"mcp-testbench::{scenario}-{revision}-{transport}::{check}",
        "check": check,
        "requirements": list(CATALOGUE[check].requirements),
        "level": CATALOGUE[check].headline_level(revision),
        "description": CATALOGUE[check].description,
        "spec": spec,
        "scenario": scenario,
        "revision": revision,
        "transport": transport,
        "client": CLIENT,
        "status": status,
        "kind": "made-up",
        "reason": f"the reason for {status} of {check} <at> {revision} {transport}",
        "evidence": EVIDENCE if status in ("FAIL", "WARN") else [],
    }
    if status == "BLOCKED":
        item["root"] = "client.connect"
    return item


def _every_item() -> list[dict[str, Any]]:
    """Every item of the suite, with every verdict spread over them."""
    items = []
    for scenario in SCENARIOS:
        for revision, transport in scenario.matrix():
            for check in scenario.checks:
                if CATALOGUE[check].applies(revision, transport):
                    status = STATUSES[len(items) % len(STATUSES)]
                    items.append(_item(scenario.id, revision, transport, check, status))
    return items


def test_the_terminal_summary_of_a_whole_suite_fits_100_columns() -> None:
    """The issue: a 222-column matrix, no legend, `sse` where the flags say `sse-legacy`."""
    results = _every_item()
    lines = terminal_summary(results)
    too_wide = [line for line in lines if len(line) > WIDTH]
    assert WIDTH == 100
    assert not too_wide, "\n".join(too_wide)
    assert lines[0] == "mcp-testbench: root causes (fix these first):"
    assert any(line.startswith("legend: FAIL a MUST violated") for line in lines)
    assert any(" 2024-11-05 sse-legacy" in line for line in lines)
    assert not any(re.search(r"\d sse\b(?!-legacy)", line) for line in lines)
    areas = {check.split(".")[0] for check in CATALOGUE}
    table = [line.split()[0] for line in lines if line.split()[0] in areas | {"all"}]
    assert table == [*sorted(areas), "all"]
    total = next(line for line in lines if line.startswith("all "))
    assert sum(int(n) for n in total.split()[2:] if n != "-") == len(results)
    # Each failing check is listed once, with where it failed; the counts end the summary.
    failing = {r["check"] for r in results if r["status"] == "FAIL"}
    listed = [line for line in lines if line.startswith("  FAIL ")]
    assert {line.split()[1] for line in listed} == failing
    assert re.fullmatch(
        r"  \d+ FAIL, \d+ BLOCKED, \d+ WARN, \d+ PASS, \d+ N/A, \d+ SKIP", lines[-1]
    )


def _page(tmp_path: Path, results: list[dict[str, Any]]) -> str:
    path = tmp_path / "report.html"
    write_reports(results, path, generated=datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc))
    return path.read_text(encoding="utf-8")


def test_the_html_report_explains_every_item_that_did_not_pass(tmp_path: Path) -> None:
    """The issue: no evidence, no skip reasons, no date, no versions, no filters."""
    results = _every_item()
    page = _page(tmp_path, results)
    assert f"<td>{CLIENT}</td>" in page
    assert f"<td>mcp-testbench {package_version()}</td>" in page
    assert "<td>2026-03-04 05:06:07 UTC</td>" in page
    # The root causes come first, then what did not pass, then the matrix.
    assert page.index("Root causes") < page.index("Not passed") < page.index("<h2>Matrix")
    assert "<b>root cause</b> client.connect FAIL blocks" in page
    for r in results:
        if r["status"] == "PASS":
            assert f"<code>{r['id']}</code>" not in page
            continue
        row = page[page.index(f"<code>{r['id']}</code>") :].split("</tr>", 1)[0]
        assert "the reason for " + r["status"] + " of " + r["check"] + " &lt;at&gt;" in row
        assert f'<a href="{r["spec"]}">spec</a>' in row
        assert ", ".join(r["requirements"]) in row
        if r["status"] in ("FAIL", "WARN"):
            assert "#7 t=0.25s message client: {&quot;id&quot;: 2}" in row
            assert "client.call_tool([&quot;add&quot;]) error" in row
        if r["status"] == "BLOCKED":
            assert "<b>blocked by client.connect</b>" in row


def test_the_html_report_is_one_file_that_asks_no_network(tmp_path: Path) -> None:
    page = _page(tmp_path, _every_item())
    assert "<style>" in page
    assert "<script>" in page
    assert not re.search(r"<(script|link|img|iframe)[^>]*\b(src|href)=", page)
    assert "@import" not in page
    assert "url(" not in page
    # Every link is to the specification, for a reader to follow.
    hrefs = set(re.findall(r'href="([^"]+)"', page))
    assert hrefs
    assert all(h.startswith("https://modelcontextprotocol.io/specification/") for h in hrefs)


def test_the_html_filters_offer_what_the_run_has(tmp_path: Path) -> None:
    results = _every_item()
    page = _page(tmp_path, results)

    def options(name: str) -> list[str]:
        select = page.split(f'<select id="f-{name}">', 1)[1].split("</select>", 1)[0]
        return re.findall(r'<option value="([^"]*)">', select)

    assert options("verdict") == ["", "FAIL", "BLOCKED", "WARN", "PASS", "N/A", "SKIP"]
    assert options("revision") == ["", *sorted({r["revision"] for r in results})]
    assert options("transport") == ["", "http", "sse-legacy", "stdio"]
    assert options("area") == ["", *sorted({c.split(".")[0] for c in CATALOGUE})]
    # What the filters act on carries the same data (tests/harness/reports/test_report_browser.py drives
    # the filters in a real browser).
    item_rows = re.findall(r'<tr id="[^"]+" class="v-\w+" data-verdict="([^"]+)"', page)
    assert len(item_rows) == sum(1 for r in results if r["status"] != "PASS")
    assert page.count('data-area="') == len(item_rows) + len({r["check"] for r in results})


def test_an_all_pass_report_says_so(tmp_path: Path) -> None:
    results = [_item("tools-call", "2025-11-25", "stdio", "tools.call-result", "PASS")]
    page = _page(tmp_path, results)
    assert "<h2>Every item passed</h2>" in page
    assert "Root causes" not in page


def test_the_markdown_report_lists_every_item_that_did_not_pass(tmp_path: Path) -> None:
    results = _every_item()
    path = tmp_path / "report.md"
    write_reports(results, path)
    text = path.read_text(encoding="utf-8")
    listed = text.split("## Not passed, worst first\n\n", 1)[1].splitlines()
    assert len(listed) == sum(1 for r in results if r["status"] != "PASS")
    order = ["FAIL", "BLOCKED", "WARN", "N/A", "SKIP"]
    statuses = [line.split("**")[1] for line in listed]
    assert statuses == sorted(statuses, key=order.index)
    blocked = next(line for line in listed if line.startswith("- **BLOCKED**"))
    assert "(blocked by `client.connect`): the reason for BLOCKED" in blocked
    assert "[spec](https://modelcontextprotocol.io/specification/" in blocked
    # The matrix names its columns as the flags do.
    assert "| 2024-11-05 sse-legacy |" in text


def test_a_root_cause_line_gives_the_causes_own_reason() -> None:
    # Items blocked on the way to their trigger name the trigger first; the root cause's
    # line must still say why the cause failed (a hang reads "hung"), whichever comes first.
    waiting = _item("tools-call", "2025-11-25", "stdio", "tools.call-result", "BLOCKED")
    waiting["reason"] = "not judged: a tools/call did not happen; hung: connect did not return"
    direct = _item("tools-call", "2025-06-18", "stdio", "tools.call-result", "BLOCKED")
    direct["reason"] = "blocked by client.connect: hung: connect did not return"
    for results in ([waiting, direct], [direct, waiting]):
        assert root_cause_lines(results) == [
            "client.connect FAIL blocks 2 items: hung: connect did not return"
        ]
