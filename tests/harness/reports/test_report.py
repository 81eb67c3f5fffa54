"""The reports made from results: the HTML page, the terminal summary, the root causes.

The results here are made up, in the shape the plugin records (tests/harness/test_plugin.py runs
the plugin itself and checks what it writes), so that every verdict, every revision and
every transport of the real catalogue can appear at once; one test judges a real run, to
hold the reasons judging writes to the way the root causes read them.
"""

from __future__ import annotations

import html
import itertools
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from _mutation import run_case
from _planted import NoSessionEcho

from harness.judging import _preconditions as preconditions
from harness.judging._catalogue import CATALOGUE
from harness.judging._judge import judge
from harness.reports._report import (
    WIDTH,
    RootCauseLine,
    root_cause_lines,
    root_causes,
    terminal_summary,
    write_reports,
)
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


def _blocked(revision: str, reason: str, root: str = "client.connect") -> dict[str, Any]:
    item = _item("tools-call", revision, "stdio", "tools.call-result", "BLOCKED")
    item.update(reason=reason, root=root)
    return item


def test_a_root_cause_line_gives_the_causes_own_reason() -> None:
    # Items blocked on the way to their trigger name the trigger first; the root cause's
    # line must still say why the cause failed (a hang reads "hung"), whichever comes first.
    waiting = _blocked(
        "2025-11-25",
        "not judged: this never happened: a tools/call of add; the cause: connect hung: no "
        "answer within 10.0 s",
    )
    direct = _blocked(
        "2025-06-18", "blocked by client.connect: connect hung: no answer within 10.0 s"
    )
    for results in ([waiting, direct], [direct, waiting]):
        assert root_cause_lines(results) == [
            "client.connect FAIL blocks 2 items: connect hung: no answer within 10.0 s"
        ]


def test_a_root_cause_line_is_the_same_whatever_order_the_results_come_in() -> None:
    """The issue: the terminal (results as they came) and the HTML (sorted) gave one root
    two reasons. The words most items give win; on a tie, the first item's by id."""
    root = "http.session-id-echoed"
    said = {
        "2024-11-05": "the mock refused 3 requests of the client: 400 Bad Request",
        "2025-03-26": "the mock refused 2 requests of the client: 400 Bad Request",
        "2025-06-18": "the mock refused 2 requests of the client: 400 Bad Request",
    }
    results = [_blocked(rev, f"blocked by {root}: {why}", root) for rev, why in said.items()]
    expected = [RootCauseLine(root, "not judged", 3, said["2025-06-18"], (root,))]
    for order in itertools.permutations(results):
        assert root_causes(list(order)) == expected
    tie = results[:2]
    for order in itertools.permutations(tie):
        assert root_causes(list(order))[0].reason == said["2024-11-05"]  # the first id's


def _unanswered(check: str, scenario: str, root: str, method: str, then: str) -> dict[str, Any]:
    """An item BLOCKED by `root`, whose cause is a request of `method` left unanswered."""
    item = _item(scenario, "2025-11-25", "http", check, "BLOCKED")
    why = f"the client never answered the server's {method}, so {then}"
    item.update(
        reason=f"blocked by {root}: {why}",
        root=root,
        defect={
            "kind": "unanswered-server-requests",
            "says": "the client never answered the server's requests",
            "about": method,
            "then": then,
        },
    )
    return item


def test_one_defect_that_is_several_checks_roots_is_one_line(tmp_path: Path) -> None:
    """The issue: a client that answers no server request got a root-cause line per
    requirement it broke (ping, elicitation, sampling, ...): it is one defect, one line,
    which names each request, what it made fail, and every check it fails."""
    hung = "connect failed: initialize: no response within 10.0 s"
    call = "call_tool failed: tools/call: no response within 10.0 s"
    ping, elicit = "features.ping-before-initialized", "features.elicitation-answer"
    results = [
        _unanswered("tools.call-result", "tools-call", ping, "ping", hung),
        _unanswered("jsonrpc.answers-well-formed", "tools-call", ping, "ping", hung),
        _unanswered(
            "tools.call-result", "features-elicitation", elicit, "elicitation/create", call
        ),
        # Another root, with no defect named: its own line.
        _blocked("2025-11-25", "blocked by client.connect: connect raised: boom"),
        _item("features-server-requests", "2025-11-25", "http", ping, "FAIL"),
        _item("features-elicitation", "2025-11-25", "http", elicit, "FAIL"),
    ]
    for order in itertools.permutations(results):
        assert root_causes(list(order)) == [
            RootCauseLine(
                ping,
                "FAIL",
                3,
                "the client never answered the server's requests (ping, elicitation/create), "
                f"so {hung}; {call}; the same defect fails {elicit}",
                (ping, elicit),
            ),
            RootCauseLine("client.connect", "FAIL", 1, "connect raised: boom", ("client.connect",)),
        ]
    # A root with an item whose cause names no defect is not grouped: which defect it is,
    # the items do not all say.
    mixed = [*results[:3], _blocked("2025-11-25", f"blocked by {elicit}: it hung", elicit)]
    assert [root.checks for root in root_causes(mixed)] == [(elicit,), (ping,)]  # 2 each
    # The HTML: the one line, each check it names linked to its row, every item folded.
    page = _page(tmp_path, results)
    start = page.index(f'<li id="root-{ping}">')
    entry = page[start : page.index("</li>", start)]
    line, folded = entry.split("<details>", 1)
    assert re.findall(r'<a href="#check-([^"]+)">', line) == [ping, elicit]
    assert (
        html.unescape(re.sub(r"<[^>]+>", "", line)) == f"root cause {root_causes(results)[0].line}"
    )
    assert len(re.findall(r'data-verdict="BLOCKED"', folded)) == 3


def test_a_long_root_cause_is_wrapped_never_cut() -> None:
    """The issue: "... the mock refused 1 request(s) of the client: 400 B...", cut at 100
    columns just before the words that matter."""
    why = "the mock refused 1 request of the client: 400 Bad Request: " + " ".join(
        f"word{n}" for n in range(40)
    )
    blocked = _blocked("2025-11-25", f"blocked by client.connect: {why}")
    lines = terminal_summary([blocked])
    start = lines.index("mcp-testbench: root causes (fix these first):") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("area "))
    assert end - start > 1
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[start].startswith("  client.connect FAIL blocks 1 item: ")
    assert all(line.startswith("      ") for line in lines[start + 1 : end])
    assert " ".join(line.strip() for line in lines[start:end]) == root_cause_lines([blocked])[0]
    assert not any(line.endswith("...") for line in lines)


def test_the_json_report_names_the_root_causes(tmp_path: Path) -> None:
    results = _every_item()
    path = tmp_path / "results.json"
    write_reports(results, path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["root_causes"] == [
        {
            "root": r.root,
            "checks": [r.root],
            "verdict": r.verdict,
            "items": r.items,
            "reason": r.reason,
        }
        for r in root_causes(results)
    ]
    [root] = document["root_causes"]
    assert root["items"] == sum(1 for r in results if r["status"] == "BLOCKED")
    assert len(document["results"]) == len(results)


def test_the_html_folds_blocked_items_under_their_root_and_counts_skips(tmp_path: Path) -> None:
    """The issue: "not passed: 612 items" had 467 SKIPs in it, the root causes did not link
    to their rows, and "BLOCKED" wrapped as "BLOCK / ED"."""
    results = _every_item()
    root = "http.session-id-echoed"
    for r in results:
        if r["status"] == "BLOCKED" and r["transport"] != "stdio":
            r["root"] = root
    page = _page(tmp_path, results)
    roots = root_causes(results)
    assert {r.root for r in roots} == {root, "client.connect"}
    for cause in roots:
        start = page.index(f'<li id="root-{cause.root}">')
        entry = page[start : page.index("</li>", start)]
        line, folded = entry.split("<details>", 1)
        # The line of every report; a root that is a check links to its row in the matrix.
        linked = f'<a href="#check-{cause.root}">{cause.root}</a>'
        assert (linked in line) == (cause.root in CATALOGUE)
        assert html.unescape(re.sub(r"<[^>]+>", "", line)) == f"root cause {cause.line}"
        ids = re.findall(r'<tr id="([^"]+)" class="v-blocked" data-verdict="BLOCKED"', folded)
        assert sorted(ids) == sorted(
            r["id"] for r in results if r["status"] == "BLOCKED" and r["root"] == cause.root
        )
    assert f'<tr id="check-{root}"' in page
    # BLOCKED rows only under their roots; SKIP rows in the list, counted, hidden until asked.
    listed = page[page.index("<h2>Not passed") :]
    assert 'data-verdict="BLOCKED"' not in listed.split("<h2>Matrix", 1)[0]
    skips = sum(1 for r in results if r["status"] == "SKIP")
    not_passed = sum(1 for r in results if r["status"] != "PASS")
    assert f"<h2>Not passed: {not_passed} items, worst first</h2>" in page
    assert f'<input type="checkbox" id="f-skips"> list the {skips} SKIP items' in page
    assert f"{skips} SKIP listed only when asked for" in page
    assert len(re.findall(r'<tr id="[^"]+" class="v-skip" data-verdict="SKIP"', listed)) == skips
    # The verdict cell never breaks (tests/harness/reports/test_report_browser.py measures it).
    assert page.count('<td class="verdict">') == not_passed
    assert ".items td.verdict{white-space:nowrap" in page


def test_judging_words_a_blocked_reason_as_the_root_causes_read_it() -> None:
    """harness/judging/_judge.py writes the reasons, this module reads the cause back out
    of them: both of its forms ("blocked by ROOT: WHY"; "not judged: this never happened:
    WHAT; the cause: WHY") on a real run, whose one root cause is told in its own words."""
    run = run_case(NoSessionEcho, ("tools-call", "2025-11-25", "http"))
    results = []
    for check_id in run.scenario.checks:
        check = CATALOGUE[check_id]
        if check.applies(run.revision, run.transport):
            verdict = judge(check, run)
            assert verdict.root != "harness", [e.get("traceback") for e in verdict.evidence]
            results.append(
                {"id": check_id, "check": check_id, **verdict.to_json()}  # as the plugin's
            )
    blocked = [r["reason"] for r in results if r["status"] == "BLOCKED"]
    assert any(reason.startswith("blocked by http.session-id-echoed: ") for reason in blocked)
    assert any(reason.startswith("not judged: this never happened: ") for reason in blocked)
    [cause] = [c for c in preconditions.root_causes(run) if c.id == "http.session-id-echoed"]
    assert root_causes(results) == [
        RootCauseLine(
            "http.session-id-echoed",
            "FAIL",
            len(blocked),
            cause.reason,
            ("http.session-id-echoed",),
        )
    ]
