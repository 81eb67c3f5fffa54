"""`mcp-testbench run`: the conformance suite through pytest, then the matrix on stdout.

pytest runs in its own process (`python -m pytest`), in a scratch directory with an empty
configuration, so that the settings of whatever project the command is run from (its
conftest, its warning filters) cannot change the verdicts, and so that only the plugin
imports pytest (a layer contract in .importlinter).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from harness._report import matrix, summary_line

__all__ = ["REFERENCE_CLIENT", "run_suite"]

REFERENCE_CLIENT = "harness.clients:ReferenceClient"


def run_suite(
    *,
    client: str | None = None,
    driver: str | None = None,
    reports: Sequence[Path] = (),
    revisions: Sequence[str] = (),
    transports: Sequence[str] = (),
    baseline: Path | None = None,
    timeout: float = 10.0,
    extra: Sequence[str] = (),
) -> int:
    """Run the suite; print the matrix; return pytest's exit code."""
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-run-") as scratch:
        folder = Path(scratch)
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        results_file = folder / "results.json"
        args = [
            "-c",
            str(folder / "pytest.ini"),
            "--rootdir",
            str(folder),
            "-p",
            "no:cacheprovider",
            "-q",
            f"--mcp-timeout={timeout}",
            "--mcp-report",
            str(results_file),
        ]
        if driver:
            args.append(f"--mcp-driver={driver}")
        else:
            args.append(f"--mcp-client={client or REFERENCE_CLIENT}")
        args += [f"--mcp-revision={r}" for r in revisions]
        args += [f"--mcp-transport={t}" for t in transports]
        if baseline is not None:
            args.append(f"--mcp-baseline={baseline.resolve()}")
        for report in reports:
            args += ["--mcp-report", str(report.resolve())]
        # The scratch folder as the only path: nothing is collected from the working
        # directory, only the suite the plugin adds.
        args += [*extra, str(folder)]
        code = subprocess.run([sys.executable, "-m", "pytest", *args], check=False).returncode
        if results_file.exists():
            results = json.loads(results_file.read_text(encoding="utf-8"))["results"]
            print_matrix(results)
    return code


def print_matrix(results: Sequence[dict[str, object]]) -> None:
    columns, rows = matrix(results)
    if not rows:
        print("mcp-testbench: no check ran")
        return
    width = max(len(check) for check, _, _ in rows)
    short = [c.replace("sse-legacy", "sse") for c in columns]
    out = sys.stdout
    out.write("\n" + " " * (width + 2) + "  ".join(f"{c:>15}" for c in short) + "\n")
    for check, _level, row in rows:
        cells = "  ".join(f"{(row.get(c) or '-'):>15}" for c in columns)
        out.write(f"{check:<{width}}  {cells}\n")
    out.write(summary_line(results) + "\n")
