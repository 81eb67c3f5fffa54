"""`mcp-testbench run --conformance-client CMD`: the official client scenarios through the
command, its reports (conformance.json beside the suite's), and its usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_client_that_does_nothing_fails_and_the_reports_say_why(tmp_path: Path) -> None:
    done = _run(tmp_path, "--conformance-client", "true", "--revision", "2026-07-28")
    assert done.returncode == 1, done.stdout + done.stderr
    folder = tmp_path / "mcp-testbench-report"
    assert sorted(p.name for p in folder.iterdir()) == [
        "conformance.json",
        "junit.xml",
        "report.html",
        "results.json",
    ]
    assert done.stdout.splitlines()[-1] == (
        "mcp-testbench: reports in mcp-testbench-report/: report.html, results.json, "
        "junit.xml, conformance.json"
    )
    payload = json.loads((folder / "conformance.json").read_text("utf-8"))
    lines = {s["scenario"]: s["line"] for s in payload["scenarios"]}
    assert lines["tools_call"] == "✗ tools_call: 0 passed, 1 failed"
    assert lines["request-metadata"] == "✗ request-metadata: 0 passed, 8 failed"
    assert payload["tier"][0]["line"].startswith("0 of 32 scored client scenarios at 2026-07-28")
    assert "mcp-testbench: tier figure: 0 of 32" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--conformance-client", "true", "--client", "m:f"],
            "--conformance-client runs the official client scenarios (over HTTP): drop "
            "--client, an option of the suite's runs",
        ),
        (["--conformance-timeout", "500"], "--conformance-timeout goes with --conformance-client"),
        (
            ["--conformance-client", "true", "--baseline", "b.json"],
            "mcp-testbench run: --baseline b.json: with --conformance-client the baseline is "
            "the official runner's expected-failures file",
        ),
        (["--conformance-client", "true", "--conformance-timeout", "0"], "must be 1 or more"),
    ],
)
def test_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    done = _run(tmp_path, *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "mcp-testbench-report").exists()
