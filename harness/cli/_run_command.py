"""`mcp-testbench run`: the conformance suite through pytest, and the reports it leaves.

pytest runs in its own process (`python -m pytest`), in a scratch directory with an empty
configuration, so that the settings of whatever project the command is run from (its
conftest, its warning filters) cannot change the verdicts, and so that only the plugin
imports pytest (a layer contract in pyproject.toml). The reports go to a folder that
stays (by default ./mcp-testbench-report/ in the working directory), never to the scratch
directory, which is gone when the command exits. The plugin prints the summary.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DEFAULT_REPORT_DIR", "LEAN_PYTEST", "REFERENCE_CLIENT", "REPORT_FILES", "run_suite"]

REFERENCE_CLIENT = "harness.clients:ReferenceClient"
DEFAULT_REPORT_DIR = Path("mcp-testbench-report")
REPORT_FILES = ("report.html", "results.json", "junit.xml")
# This run collects nothing but the suite, whose items judge with verdicts, not with
# `assert`, and have no Hypothesis test. So, in every pytest-xdist worker and the
# controller: no cache; no Hypothesis plugin (it imports all of Hypothesis, about a second,
# to print its summary); no assertion rewriting (pytest rewrites every module of a plugin's
# distribution as it is imported, parsing each, unless bytecode caching saved them); no
# hunt for unraisable exceptions (it collects garbage five times at the end).
LEAN_PYTEST = (
    *("-p", "no:cacheprovider", "-p", "no:hypothesispytest"),
    *("--assert=plain", "-p", "no:unraisableexception"),
)


def run_suite(
    *,
    client: str | None = None,
    driver: str | None = None,
    report_dir: Path | None = DEFAULT_REPORT_DIR,
    reports: Sequence[Path] = (),
    revisions: Sequence[str] = (),
    transports: Sequence[str] = (),
    baseline: Path | None = None,
    timeout: float = 10.0,
    extra: Sequence[str] = (),
) -> int:
    """Run the suite; write the reports into `report_dir` (None: no report folder);
    return pytest's exit code (non-zero when an item FAILs or is BLOCKED)."""
    args = [*LEAN_PYTEST, "-q"]
    args.append(f"--mcp-timeout={timeout}")
    if driver:
        args.append(f"--mcp-driver={driver}")
    else:
        args.append(f"--mcp-client={client or REFERENCE_CLIENT}")
    args += [f"--mcp-revision={r}" for r in revisions]
    args += [f"--mcp-transport={t}" for t in transports]
    if baseline is not None:
        args.append(f"--mcp-baseline={baseline.resolve()}")
    folder = None if report_dir is None else report_dir.resolve()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        for name in REPORT_FILES:  # a failed run must not leave the last run's reports
            (folder / name).unlink(missing_ok=True)
        args += [
            f"--mcp-report={folder / 'report.html'}",
            f"--mcp-report={folder / 'results.json'}",
            f"--junitxml={folder / 'junit.xml'}",
        ]
    args += [f"--mcp-report={report.resolve()}" for report in reports]
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-run-") as scratch:
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        # The scratch folder as the only path: nothing is collected from the working
        # directory, only the suite the plugin adds, and no conftest.py of the working
        # directory is read (the ini file's folder bounds the search). The working directory
        # as rootdir: the ids pytest prints are then the ones that re-run an item.
        argv = ["-c", str(ini), "--rootdir", str(Path.cwd()), *args, *extra, scratch]
        code = subprocess.run([sys.executable, "-m", "pytest", *argv], check=False).returncode
    _say_where(folder, report_dir)
    return code


def _say_where(folder: Path | None, asked: Path | None) -> None:
    if folder is None:
        print("mcp-testbench: no report folder written (--no-report); the summary is above")
        return
    written = [name for name in REPORT_FILES if (folder / name).exists()]
    if not written:
        print(f"mcp-testbench: no report written to {folder}: the run ended before any check")
        return
    shown = asked if asked is not None and not asked.is_absolute() else folder
    print(f"mcp-testbench: reports in {shown}/: {', '.join(written)}")
