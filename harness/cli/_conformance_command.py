"""`mcp-testbench run --conformance-client CMD`: a client's conformance command, run as the
official runner runs it, through pytest like the suite (`_run_command` says why pytest runs
in a process of its own, in a scratch folder).

The plugin does the work (`--mcp-conformance-client`); this puts the reports in the report
folder: the suite's (report.html, results.json, junit.xml: our checks on the same traffic)
and conformance.json (the runner's verdicts per scenario and the tier figures).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from harness.cli._run_command import (
    _PYTEST_CHILD,
    LEAN_PYTEST,
    REPORT_FILES,
    _exit_status,
    _run_pytest,
)

__all__ = ["CONFORMANCE_REPORT", "run_conformance"]

CONFORMANCE_REPORT = "conformance.json"

#: The command's options by the plugin's spelling, for the plugin's usage errors.
_TYPED_AS = {
    "--mcp-conformance-client": "--conformance-client",
    "--mcp-conformance-timeout": "--conformance-timeout",
    "--mcp-revision": "--revision",
    "--mcp-concurrency": "--concurrency",
    "--mcp-report": "--report",
    "--mcp-baseline": "--baseline",
}


def run_conformance(
    command: str,
    *,
    timeout_ms: int | None = None,
    report_dir: Path | None,
    reports: Sequence[Path] = (),
    revisions: Sequence[str] = (),
    concurrency: int | None = None,
    baseline: Path | None = None,
    extra: Sequence[str] = (),
) -> int:
    """Run the served official client scenarios for `command`; write the reports into
    `report_dir` (None: none); return pytest's exit code."""
    args = [*LEAN_PYTEST, "-q", f"--mcp-conformance-client={command}"]
    if timeout_ms is not None:
        args.append(f"--mcp-conformance-timeout={timeout_ms}")
    if concurrency is not None:
        args.append(f"--mcp-concurrency={concurrency}")
    args += [f"--mcp-revision={r}" for r in revisions]
    if baseline is not None:  # the runner's expected-failures file, judged by its rule
        args.append(f"--mcp-baseline={baseline.resolve()}")
    folder = None if report_dir is None else report_dir.resolve()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        for name in (*REPORT_FILES, CONFORMANCE_REPORT):  # never the last run's
            (folder / name).unlink(missing_ok=True)
        args += [
            f"--mcp-report={folder / 'report.html'}",
            f"--mcp-report={folder / 'results.json'}",
            f"--junitxml={folder / 'junit.xml'}",
            f"--mcp-conformance-report={folder / CONFORMANCE_REPORT}",
        ]
    args += [f"--mcp-report={report.resolve()}" for report in reports]
    given = {arg.split("=", 1)[0] for arg in extra}
    typed = {option: spelled for option, spelled in _TYPED_AS.items() if option not in given}
    args.append(f"--mcp-as-typed={json.dumps(typed)}")
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-run-") as scratch:
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        argv = ["-c", str(ini), "--rootdir", str(Path.cwd()), *args, *extra, scratch]
        print(f"mcp-testbench: running the official client scenarios for {command}", flush=True)
        code, interrupted = _run_pytest([sys.executable, "-c", _PYTEST_CHILD, *argv])
    if folder is not None:
        written = [n for n in (*REPORT_FILES, CONFORMANCE_REPORT) if (folder / n).exists()]
        shown = report_dir if report_dir is not None and not report_dir.is_absolute() else folder
        if written:
            print(f"mcp-testbench: reports in {shown}/: {', '.join(written)}")
        else:
            print(f"mcp-testbench: no report written to {folder}: the run ended before any check")
    return _exit_status(code, interrupted)
