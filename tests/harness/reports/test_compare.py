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
from harness.reports._compare import slug


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
        "| tools.call-result | MUST X-1 | [PASS](../in/a.html#check-tools.call-result)"
        f" | [FAIL 1/2](../in/b.html#{fail}) |"
    ) in text
    assert "- **beta 2.0**: 1 FAIL, 1 WARN, 1 PASS" in text
    # The evidence pages were missing: written from the JSON, with the anchors linked to.
    evidence = (reports[1].with_suffix(".html")).read_text(encoding="utf-8")
    assert f'<tr id="{fail}" ' in evidence
    assert 'id="check-tools.call-result"' in evidence
    assert f"wrote {reports[1].with_suffix('.html')}" in capsys.readouterr().out


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
        '<a href="in/b.html#mcp-testbench::s-2025-11-25-http::tools.call-result">FAIL 1/2</a>'
        in text
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
