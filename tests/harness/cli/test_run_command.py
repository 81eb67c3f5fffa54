"""`mcp-testbench run`: the reports it leaves behind, what it prints, its exit code.

Each test runs the real command in a process of its own, from a scratch working directory,
on a narrow selection (pytest arguments after `--`) so that it takes seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

NARROW = ["--revision", "2025-11-25", "--transport", "stdio"]
ONE_RUN = ["--", "-k", "tools-call-2025"]


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_reports_stay_in_the_working_directory_and_the_path_is_printed(tmp_path: Path) -> None:
    """The issue: `run` said `wrote <a temporary folder>/results.json`, gone on exit."""
    done = _run(tmp_path, *NARROW, *ONE_RUN)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = tmp_path / "mcp-testbench-report"
    assert sorted(p.name for p in folder.iterdir()) == ["junit.xml", "report.html", "results.json"]
    assert done.stdout.splitlines()[-1] == (
        "mcp-testbench: reports in mcp-testbench-report/: report.html, results.json, junit.xml"
    )
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))["results"]
    assert results
    assert {r["status"] for r in results} <= {"PASS", "N/A"}
    cases = list(ET.parse(folder / "junit.xml").getroot().iter("testcase"))
    assert len(cases) == len(results)
    assert "<h1>MCP client conformance</h1>" in (folder / "report.html").read_text("utf-8")
    wrote = [line for line in done.stdout.splitlines() if line.startswith("mcp-testbench: wrote")]
    assert wrote == [
        f"mcp-testbench: wrote {folder / name}" for name in ("report.html", "results.json")
    ]


def test_the_summary_is_printed_once_and_fits_100_columns(tmp_path: Path) -> None:
    """The issue: a 222-column matrix without a legend, `sse` for `sse-legacy`, and the
    summary line twice."""
    done = _run(tmp_path, "--revision", "2024-11-05", "--no-report", "--", "-k", "tools-call")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    summary = [
        line for line in lines if line.startswith("mcp-testbench: ") and " items of " in line
    ]
    assert len(summary) == 1, done.stdout
    start = lines.index(next(line for line in lines if "mcp-testbench summary" in line))
    block = lines[start + 1 : lines.index(summary[0]) + 1]
    assert block[0].split() == [
        "area",
        "checks",
        "FAIL",
        "BLOCKED",
        "WARN",
        "NOTE",
        "PASS",
        "N/A",
        "SKIP",
    ]
    assert any(line.startswith("legend: FAIL a MUST violated") for line in block)
    assert all(len(line) <= 100 for line in block), "\n".join(block)
    assert " sse " not in done.stdout


def test_the_printed_ids_rerun_an_item_and_no_conftest_of_the_directory_is_read(
    tmp_path: Path,
) -> None:
    (tmp_path / "conftest.py").write_text(
        "import pytest\n@pytest.fixture(autouse=True)\ndef boom():\n    raise RuntimeError('read')\n",
        encoding="utf-8",
    )
    done = _run(tmp_path, *NARROW, "--no-report", "--", "-k", "tools-call-2025", "-vv")
    assert done.returncode == 0, done.stdout + done.stderr
    item = "mcp-testbench::tools-call-2025-11-25-stdio::tools.call-result"
    assert any(line.startswith(f"{item} PASSED") for line in done.stdout.splitlines())


def test_report_dir_and_no_report(tmp_path: Path) -> None:
    done = _run(tmp_path, *NARROW, "--report-dir", "out/conformance", *ONE_RUN)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "out/conformance/report.html").is_file()
    assert "reports in out/conformance/: report.html" in done.stdout

    (tmp_path / "empty").mkdir()
    done = _run(tmp_path / "empty", *NARROW, "--no-report", *ONE_RUN)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list((tmp_path / "empty").iterdir()) == []
    assert done.stdout.splitlines()[-1] == (
        "mcp-testbench: no report folder written (--no-report); the summary is above"
    )


def test_a_failing_client_fails_the_command_and_replaces_the_old_reports(tmp_path: Path) -> None:
    (tmp_path / "broken_client.py").write_text(
        "from harness.clients import ReferenceClient\n"
        "class Broken(ReferenceClient):\n"
        "    async def connect(self, *args, **kwargs):\n"
        "        raise RuntimeError('this client cannot connect')\n",
        encoding="utf-8",
    )
    stale = tmp_path / "mcp-testbench-report" / "results.json"
    stale.parent.mkdir()
    stale.write_text('{"format_version": 1, "results": []}\n', encoding="utf-8")
    done = _run(tmp_path, "--client", "broken_client:Broken", *NARROW, *ONE_RUN)
    assert done.returncode == 1, done.stdout + done.stderr
    results = json.loads(stale.read_text(encoding="utf-8"))["results"]
    assert results
    assert {r["status"] for r in results} <= {"FAIL", "BLOCKED"}
    assert "mcp-testbench: root causes (fix these first):" in done.stdout
