"""End to end: the runner's expected-failures file judged by the pinned runner and by
mcp-testbench gives the same three lists and the same pass or fail.

examples/conformance-clients/python_sdk_client.py and its `no-client-version` variant
(mcp-client-initialization FAILs) run the `initialize` scenario under the official runner
(`client --scenario initialize --expected-failures FILE`: its baseline summary and its exit
code) and under `mcp-testbench run --conformance-client ... --baseline FILE`: an expected
failure, an unexpected one, and a stale entry.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from _machine import within
from _served import NODE, RUNNER, node_tools_missing

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "conformance-clients" / "python_sdk_client.py"
RUN_BOUND = within(300)
MARKS = ("~", "✓", "✗")

CASES = {
    # (variant, entries): the runner's and our exit are both 0 only for the first
    "expected": ("no-client-version", ["initialize:mcp-client-initialization"]),
    "unexpected": ("no-client-version", ["tools_call"]),
    "stale": (None, ["initialize:mcp-client-initialization"]),
    "whole scenario": ("no-client-version", ["initialize"]),
}


@pytest.fixture(autouse=True)
def _tools() -> None:
    missing = node_tools_missing()
    if missing:
        pytest.fail(missing)  # never a skip: a skipped e2e test looks like a green build


def _listed(text: str) -> list[str]:
    """The baseline summary's lists, as `<mark> <entry>`, without the colours."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return [
        line.strip() for line in plain.splitlines() if line.strip()[:1] in MARKS and "  " in line
    ]


@pytest.mark.parametrize("case", list(CASES))
def test_the_runner_and_mcp_testbench_judge_the_file_alike(case: str, tmp_path: Path) -> None:
    variant, entries = CASES[case]
    command = f"{sys.executable} {CLIENT}" + (f" --defect {variant}" if variant else "")
    baseline = tmp_path / "expected-failures.yml"
    baseline.write_text("client:\n" + "".join(f"  - {e}\n" for e in entries), encoding="utf-8")
    runner = subprocess.run(
        [
            str(NODE), str(RUNNER), "client", "--command", command, "--scenario", "initialize",
            "--spec-version", "2025-11-25", "--expected-failures", str(baseline),
            "-o", str(tmp_path / "runner"),
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=RUN_BOUND, check=False,
    )  # fmt: skip
    script = Path(sys.executable).with_name("mcp-testbench")
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "harness.cli"]
    ours = subprocess.run(
        [
            *launcher, "run", "--conformance-client", command, "--baseline", str(baseline),
            "--revision", "2025-11-25", "--no-report", "--", "-k", "conformance-initialize",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=RUN_BOUND, check=False,
    )  # fmt: skip
    theirs = _listed(runner.stdout)
    assert theirs, runner.stdout[-2000:] + runner.stderr[-2000:]
    summary = ours.stdout.split("the runner's baseline check", 1)
    assert len(summary) == 2, ours.stdout[-3000:] + ours.stderr[-2000:]
    # Its block only: under CI pytest's short summary repeats a failure's message whole.
    block = summary[1].split("\nmcp-testbench: ", 1)[0]
    assert _listed(block) == theirs, ours.stdout[-3000:]
    assert (runner.returncode == 0) is (case in ("expected", "whole scenario")), runner.stdout
    assert (ours.returncode == 0) is (runner.returncode == 0), ours.stdout[-3000:]
