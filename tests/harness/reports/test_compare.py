"""`mcp-testbench compare`: clients as columns, checks as rows by area, cells that link to
the evidence, revision and transport filters in a self-contained HTML page."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.reports._compare import slug, told_apart


def _result(
    client: str, check: str, status: str, revision: str = "2025-11-25", transport: str = "stdio"
) -> dict[str, Any]:
    item = f"mcp-testbench::s-{revision}-{transport}::{check}"
    return {"id": item, "check": check, "status": status, "client": client, "level": "MUST",
            "requirements": ["X-1"], "revision": revision, "transport": transport,
            "reason": f"{status} because", "spec": "https://example.invalid/spec",
            "root": None, "kind": "seen", "evidence": []}  # fmt: skip


def _write(path: Path, results: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"format_version": 1, "results": results}), encoding="utf-8")
    return path


@pytest.fixture
def reports(tmp_path: Path) -> list[Path]:
    a = [
        _result("alpha 1.0", "tools.call-result", "PASS"),
        _result("alpha 1.0", "tools.call-result", "PASS", transport="http"),
        _result("alpha 1.0", "lifecycle.initialize-first", "PASS"),
    ]
    b = [
        _result("beta 2.0", "tools.call-result", "PASS"),
        _result("beta 2.0", "tools.call-result", "FAIL", transport="http"),
        _result("beta 2.0", "lifecycle.initialize-first", "WARN", revision="2024-11-05"),
    ]
    (tmp_path / "in").mkdir()
    return [_write(tmp_path / "in" / "a.json", a), _write(tmp_path / "in" / "b.json", b)]


def test_markdown_has_clients_as_columns_and_checks_by_area(
    reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = tmp_path / "out" / "compare.md"
    assert main(["compare", *map(str, reports), "--markdown", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    # lifecycle comes before tools, whatever the order of the reports.
    assert text.index("## lifecycle") < text.index("## tools")
    assert "| check | requirement | alpha 1.0 | beta 2.0 |" in text
    fail = "mcp-testbench::s-2025-11-25-http::tools.call-result"
    assert (
        "| tools.call-result | MUST X-1 | [PASS](compare-alpha-1.0.html#check-tools.call-result)"
        f" | [FAIL 1/2](compare-beta-2.0.html#{fail}) |"
    ) in text
    assert "- **beta 2.0**: 1 FAIL, 1 WARN, 1 PASS" in text
    # The evidence pages were missing: written from the JSON beside the page asked for
    # (not beside the JSON reports), with the anchors linked to.
    evidence = (md.parent / "compare-beta-2.0.html").read_text(encoding="utf-8")
    assert f'<tr id="{fail}" ' in evidence
    assert 'id="check-tools.call-result"' in evidence
    assert f"wrote {md.parent / 'compare-beta-2.0.html'}" in capsys.readouterr().out
    assert sorted(p.name for p in reports[0].parent.iterdir()) == ["a.json", "b.json"]


def test_html_is_self_contained_with_filters(reports: list[Path], tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    assert main(["compare", *map(str, reports), "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", text)
    assert '<select id="revision"><option value="">all</option>' in text
    assert '<option value="2024-11-05">2024-11-05</option>' in text
    assert '<select id="transport">' in text
    assert '<option value="http">http</option>' in text
    assert '<tr class="area" data-area="lifecycle">' in text
    assert (
        '<a href="compare-beta-2.0.html#mcp-testbench::s-2025-11-25-http::tools.call-result">'
        "FAIL 1/2</a>" in text
    )


def test_a_report_that_is_not_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"results": 3}', encoding="utf-8")
    assert main(["compare", str(bad), "--markdown", str(tmp_path / "c.md")]) == 2
    assert "not a JSON report of mcp-testbench" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare"])
    assert "compare needs JSON reports" in capsys.readouterr().err


def test_the_same_client_twice_gets_told_apart(reports: list[Path], tmp_path: Path) -> None:
    again = _write(tmp_path / "in" / "a-http.json", json.loads(reports[0].read_text())["results"])
    md = tmp_path / "c.md"
    assert main(["compare", str(reports[0]), str(again), "--markdown", str(md)]) == 0
    assert "| alpha 1.0 (a) | alpha 1.0 (a-http) |" in md.read_text(encoding="utf-8")


def _run_folder(folder: Path, results: list[dict[str, Any]]) -> Path:
    """What `mcp-testbench run` leaves: results.json beside report.html (and junit.xml)."""
    folder.mkdir(parents=True)
    (folder / "report.html").write_text("<html>the run's own report</html>", encoding="utf-8")
    return _write(folder / "results.json", results)


def test_two_runs_of_one_client_are_told_apart_and_their_own_reports_are_the_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue: two run folders of one client were both "tiny 0.0.1 (results)", and
    compare wrote results.html beside the report.html each folder already had."""
    before = _run_folder(tmp_path / "before" / "mcp-testbench-report",
                         [_result("tiny 0.0.1", "tools.call-result", "FAIL")])  # fmt: skip
    after = _run_folder(tmp_path / "after" / "mcp-testbench-report",
                        [_result("tiny 0.0.1", "tools.call-result", "PASS")])  # fmt: skip
    page = tmp_path / "out" / "compare.html"
    md = tmp_path / "out" / "compare.md"
    argv = ["compare", str(before), str(after), "--html", str(page), "--markdown", str(md)]
    assert main(argv) == 0
    text = md.read_text(encoding="utf-8")
    assert "| check | requirement | tiny 0.0.1 (before) | tiny 0.0.1 (after) |" in text
    item = "mcp-testbench::s-2025-11-25-stdio::tools.call-result"
    assert f"[FAIL](../before/mcp-testbench-report/report.html#{item})" in text
    assert "[PASS](../after/mcp-testbench-report/report.html#check-tools.call-result)" in text
    assert "<th>tiny 0.0.1 (before)</th><th>tiny 0.0.1 (after)</th>" in page.read_text("utf-8")
    # Outputs only where asked: the two pages, and nothing beside the runs' reports.
    assert sorted(p.name for p in page.parent.iterdir()) == ["compare.html", "compare.md"]
    for run in (before, after):
        assert sorted(p.name for p in run.parent.iterdir()) == ["report.html", "results.json"]
    assert capsys.readouterr().out.splitlines() == [
        f"mcp-testbench compare: wrote {page}",
        f"mcp-testbench compare: wrote {md}",
    ]


@pytest.mark.parametrize(
    ("paths", "apart"),
    [
        (["in/a.json", "in/a-http.json"], ["a", "a-http"]),
        (["before/results.json", "after/results.json"], ["before", "after"]),
        (["x/run/r.json", "y/run/r.json"], ["x", "y"]),
        (["results.json", "old/results.json"], ["results", "old/results"]),
    ],
)
def test_what_tells_reports_apart_is_the_part_of_their_paths_that_differs(
    tmp_path: Path, paths: list[str], apart: list[str]
) -> None:
    assert told_apart([tmp_path / p for p in paths]) == apart


def test_a_report_given_twice_is_refused(
    reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = tmp_path / "c.md"
    assert main(["compare", str(reports[0]), str(reports[0]), "--markdown", str(md)]) == 2
    assert f"{reports[0]} is given twice; give each report once" in capsys.readouterr().err
    assert not md.exists()


def test_slugs() -> None:
    assert slug("harness.clients._sdk_mcp:McpSdkClient") == "McpSdkClient"
    assert slug("node examples/drivers/typescript-sdk/driver.mjs") == "typescript-sdk-driver"
    assert slug("java -cp build MyDriver") == "MyDriver"


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium package")
def test_the_filters_recompute_the_cells_in_a_browser(reports: list[Path], tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    assert main(["compare", *map(str, reports), "--html", str(page)]) == 0

    def dom(query: str) -> str:
        done = subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
             f"{page.as_uri()}{query}"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return done.stdout

    def cell(text: str, row: str, column: int) -> str:
        match = re.search(rf'<td id="row-{re.escape(row)}/{column}"[^>]*>(.*?)</td>', text)
        assert match, text
        return re.sub(r"<[^>]+>", "", match.group(1))

    everything = dom("")
    assert cell(everything, "tools.call-result", 1) == "FAIL 1/2"
    stdio = dom("?transport=stdio")
    assert cell(stdio, "tools.call-result", 1) == "PASS"
    assert cell(stdio, "lifecycle.initialize-first", 1) == "WARN"
    modern = dom("?revision=2025-11-25&transport=stdio")
    assert cell(modern, "lifecycle.initialize-first", 1) == ""  # no item of beta there
    assert cell(modern, "lifecycle.initialize-first", 0) == "PASS"


def test_compare_runs_clients_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # the working directory gets nothing: compare writes where told
    md = tmp_path / "c.md"
    options = ["--revision", "2024-11-05", "--transport", "stdio", "--out-dir", str(tmp_path)]
    argv = [
        "compare",
        "--client",
        "harness.clients:ReferenceClient",
        *options,
        "--markdown",
        str(md),
    ]
    assert main(argv) == 0
    assert (tmp_path / "ReferenceClient.json").exists()
    assert (tmp_path / "ReferenceClient.html").exists()
    text = md.read_text(encoding="utf-8")
    assert "| check | requirement | mcp-testbench-reference" in text
    assert "](ReferenceClient.html#check-" in text
    assert sorted(work.iterdir()) == []  # no ./mcp-testbench-report/ (issue 33, item 9)
