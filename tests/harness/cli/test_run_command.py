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


# -- errors and hints name the options as the user typed them (issue 34, item 7) -----------------


def test_errors_name_the_options_as_typed(tmp_path: Path) -> None:
    """The issue: `run --client` and `--baseline` errors named --mcp-client, --mcp-baseline."""
    done = _run(tmp_path, "--client", "no_such_module:make", "--no-report")
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage error
    assert "ERROR: --client 'no_such_module:make': cannot import 'no_such_module'" in done.stderr
    assert "--mcp-" not in done.stderr
    assert "the summary is above" not in done.stdout  # there is none

    done = _run(tmp_path, "--driver", "no-such-driver-binary --flag", "--no-report")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "ERROR: --driver 'no-such-driver-binary --flag' does not work" in done.stderr
    assert "--mcp-" not in done.stderr

    # A plugin option given as such after `--` is named as it was given.
    done = _run(tmp_path, "--no-report", "--", "--mcp-concurrency=0")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "ERROR: --mcp-concurrency must be 1 or more" in done.stderr


def test_a_bad_baseline_or_option_is_refused_before_pytest_starts(tmp_path: Path) -> None:
    done = _run(tmp_path, "--baseline", "missing.json")
    assert done.returncode == 2
    assert done.stderr.strip() == "mcp-testbench run: --baseline missing.json: no such file"
    assert done.stdout == ""  # no pytest was started, no report folder made
    assert list(tmp_path.iterdir()) == []

    (tmp_path / "b.json").write_text('{"expected_failures": {}}', encoding="utf-8")
    done = _run(tmp_path, "--baseline", "b.json")
    assert done.returncode == 2
    assert done.stderr.startswith(
        'mcp-testbench run: --baseline b.json: expected {"format_version"'
    )

    done = _run(tmp_path, "--timeout", "0")
    assert done.returncode == 2
    assert "argument --timeout: must be a number above 0, not 0" in done.stderr
    done = _run(tmp_path, "--report", "results.txt")
    assert done.returncode == 2
    assert "argument --report: 'results.txt': the file name must end in .json, .md or .html" in (
        done.stderr
    )


DEAF = """
from harness.clients import ReferenceClient
from harness.protocol import Request

class Deaf(ReferenceClient):
    '''Never answers a request of the server.'''
    def _dispatch(self, message):
        if not isinstance(message, Request):
            super()._dispatch(message)

def make():
    return Deaf()
"""


def test_the_slow_run_lines_name_runs_own_options(tmp_path: Path) -> None:
    """The settings that help are named as `run` takes them: --timeout, --concurrency."""
    (tmp_path / "deaf.py").write_text(DEAF, encoding="utf-8")
    done = _run(
        tmp_path, "--client", "deaf:make", "--timeout", "1", "--revision", "2025-11-25",
        "--transport", "stdio", "--transport", "http", "--no-report",
        "--", "-k", "features-server-requests",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout.replace("\n  ", " ")
    assert " of waiting out bounds (--timeout 1 s) in 2 of 2 runs" in out
    assert "declare it (or pass --concurrency=2) if its clients can work side by side" in out
    assert "--mcp-" not in done.stdout

    # --concurrency is the setting: with it the runs overlap, and nothing more is said.
    done = _run(
        tmp_path, "--client", "deaf:make", "--timeout", "1", "--revision", "2025-11-25",
        "--transport", "stdio", "--concurrency", "2", "--no-report",
        "--", "-k", "features-server-requests",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "one run at a time" not in done.stdout


def test_a_stale_baseline_entry_names_the_command_with_the_runs_report(tmp_path: Path) -> None:
    """The issue: a stale entry showed only as "XPASS(strict)" and "1 failed"."""
    entry = "tools-call-2025-11-25-stdio::tools.call-result"
    baseline = tmp_path / "mcp-baseline.json"
    baseline.write_text(
        json.dumps({"format_version": 1, "expected_failures": {entry: "was broken"}}),
        encoding="utf-8",
    )
    done = _run(tmp_path, *NARROW, "--baseline", "mcp-baseline.json", *ONE_RUN)
    assert done.returncode == 1, done.stdout + done.stderr
    fix = (
        f"mcp-testbench: baseline entry '{entry}' now passes: remove it, or run "
        "`mcp-testbench baseline update mcp-baseline.json --from mcp-testbench-report/results.json`"
    )
    assert fix in done.stdout.replace("\n  ", " "), done.stdout
    command = fix.split("`")[1].split()
    fixed = subprocess.run(
        [sys.executable, "-m", "harness.cli", *command[1:]],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    assert f"removed {entry}: it passes now" in fixed.stdout
    done = _run(tmp_path, *NARROW, "--baseline", "mcp-baseline.json", *ONE_RUN)
    assert done.returncode == 0, done.stdout + done.stderr
