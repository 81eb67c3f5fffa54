"""`mcp-testbench run`: the conformance suite through pytest, and the reports it leaves.

pytest runs in its own process (`python -m pytest`), in a scratch directory with an empty
configuration, so that the settings of whatever project the command is run from (its
conftest, its warning filters) cannot change the verdicts, and so that only the plugin
imports pytest (a layer contract in pyproject.toml). The reports go to a folder that
stays (by default ./mcp-testbench-report/ in the working directory), never to the scratch
directory, which is gone when the command exits. The plugin prints the summary.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType

__all__ = [
    "DEFAULT_REPORT_DIR",
    "INTERRUPTED_EXIT",
    "LEAN_PYTEST",
    "REFERENCE_CLIENT",
    "REPORT_FILES",
    "run_suite",
]

REFERENCE_CLIENT = "harness.clients:ReferenceClient"
DEFAULT_REPORT_DIR = Path("mcp-testbench-report")
REPORT_FILES = ("report.html", "results.json", "junit.xml")
# This run collects nothing but the suite, whose items judge with verdicts, not with
# `assert`, and have no Hypothesis test. So, in every pytest-xdist worker and the
# controller: no cache; no Hypothesis plugin (it imports all of Hypothesis, about a second,
# to print its summary); no assertion rewriting (pytest rewrites every module of a plugin's
# distribution as it is imported, parsing each, unless bytecode caching saved them); no
# hunt for unraisable exceptions (it collects garbage five times at the end).
#: The exit code of a run stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
INTERRUPTED_EXIT = 130
#: How long an interrupted pytest gets to print its summary and write its reports (the
#: runs under way end at their own bounds) before what is left of it is killed.
_WIND_DOWN = 30.0

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
    concurrency: int | None = None,
    extra: Sequence[str] = (),
) -> int:
    """Run the suite; write the reports into `report_dir` (None: no report folder);
    return pytest's exit code (non-zero when an item FAILs or is BLOCKED)."""
    args = [*LEAN_PYTEST, "-q"]
    args.append(f"--mcp-timeout={timeout}")
    if concurrency is not None:
        args.append(f"--mcp-concurrency={concurrency}")
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
    args.append(f"--mcp-as-typed={json.dumps(_as_typed(extra))}")
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-run-") as scratch:
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        # The scratch folder as the only path: nothing is collected from the working
        # directory, only the suite the plugin adds, and no conftest.py of the working
        # directory is read (the ini file's folder bounds the search). The working directory
        # as rootdir: the ids pytest prints are then the ones that re-run an item.
        argv = ["-c", str(ini), "--rootdir", str(Path.cwd()), *args, *extra, scratch]
        print(
            f"mcp-testbench: running the suite for {driver or client or REFERENCE_CLIENT}",
            flush=True,
        )
        code, interrupted = _run_pytest([sys.executable, "-c", _PYTEST_CHILD, *argv])
    if folder is not None:  # a caller that named its reports, or wanted none, says so
        _say_where(folder, report_dir)
    return _exit_status(code, interrupted)


def _exit_status(code: int, interrupted: str | None) -> int:
    """The command's status: pytest's, or INTERRUPTED_EXIT with one line saying so."""
    if interrupted:
        print(
            f"mcp-testbench: interrupted by {interrupted}: the summary and reports above hold "
            "the items judged before it (marked interrupted)",
            flush=True,
        )
        return INTERRUPTED_EXIT
    return code


#: The command's options (`run`, `baseline`, `compare`) by the plugin's spelling of each.
_TYPED_AS = {
    "--mcp-client": "--client",
    "--mcp-driver": "--driver",
    "--mcp-revision": "--revision",
    "--mcp-transport": "--transport",
    "--mcp-timeout": "--timeout",
    "--mcp-concurrency": "--concurrency",
    "--mcp-baseline": "--baseline",
    "--mcp-report": "--report",
}


def _as_typed(extra: Sequence[str]) -> dict[str, str]:
    """How the user spelled each plugin option: as this command does, unless the pytest
    arguments after `--` give it themselves (then an error about it names it as given)."""
    given = {arg.split("=", 1)[0] for arg in extra}
    return {option: typed for option, typed in _TYPED_AS.items() if option not in given}


# pytest, with SIGINT as Python sets it up in a fresh process (KeyboardInterrupt): a child
# inherits an ignored SIGINT (a background job of a script ignores it), and pytest would
# then never see the one SIGINT that asks it to stop and keep its reports. Once that
# handler is in place it closes the ready pipe: a signal before then (on a busy machine
# the first import can take seconds) is no SIGINT to it but a SIGKILL, as it has started
# nothing yet, which would otherwise print a KeyboardInterrupt traceback from the middle
# of an import. A SIGINT that comes while pytest is still being imported ends it with
# pytest's own status for an interrupted run, not a traceback.
_READY_FD = "MCP_TESTBENCH_READY_FD"
_PYTEST_CHILD = f"""\
import os, signal
signal.signal(signal.SIGINT, signal.default_int_handler)
os.close(int(os.environ.pop("{_READY_FD}")))
import runpy, sys
try:
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)
except KeyboardInterrupt:
    sys.exit(2)
"""


def _run_pytest(argv: list[str]) -> tuple[int, str | None]:
    """pytest's exit code, and the signal that interrupted the run (None if none did).

    pytest runs in a process group of its own, so that Ctrl-C reaches it once, from here: a
    SIGINT or SIGTERM to this process becomes one SIGINT to pytest, which stops, prints
    its summary and writes the reports of what it judged (a second signal, or the wind-down
    bound, kills it). Whatever pytest started that outlives it in its group (a mock, a
    client's server) is ended before this returns, so nothing outlives the command.
    """
    # Unbuffered: each item's progress letter reaches a pipe (a CI log, a wrapper that
    # watches it) as the item ends, not in blocks of several kilobytes at the end.
    ready, ready_w = os.pipe()
    try:
        child = subprocess.Popen(
            argv,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", _READY_FD: str(ready_w)},
            pass_fds=(ready_w,),
        )
    finally:
        os.close(ready_w)
    signals: list[int] = []

    def forward(signum: int, frame: FrameType | None) -> None:
        signals.append(signum)
        # EOF on the pipe: the child's SIGINT handler is in place (or the child is gone).
        started = bool(select.select([ready], [], [], 0)[0])
        first = len(signals) == 1 and started
        _signal_group(child.pid, signal.SIGINT if first else signal.SIGKILL)

    try:
        with _handling((signal.SIGINT, signal.SIGTERM), forward):
            while True:
                try:
                    code = child.wait(timeout=_WIND_DOWN if signals else None)
                    break
                except subprocess.TimeoutExpired:
                    _signal_group(child.pid, signal.SIGKILL)
    finally:
        os.close(ready)
    _end_group(child.pid)
    return code, signal.Signals(signals[0]).name if signals else None


@contextlib.contextmanager
def _handling(
    signums: Sequence[int], handler: Callable[[int, FrameType | None], None]
) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals; the caller's own then apply
        return
    before = {s: signal.signal(s, handler) for s in signums}
    try:
        yield
    finally:
        for signum, old in before.items():
            signal.signal(signum, old)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _end_group(pgid: int, grace: float = 2.0) -> None:
    """End what is left of pytest's process group: SIGTERM, then SIGKILL for whatever has
    not exited `grace` seconds later (woken by each exit, through pidfds, on Linux)."""
    _signal_group(pgid, signal.SIGTERM)
    if not hasattr(os, "pidfd_open"):
        return  # the SIGTERM is all this platform lets us do for processes not our children
    fds = []
    for pid in _group_members(pgid):
        with contextlib.suppress(OSError):
            fds.append(os.pidfd_open(pid))
    try:
        deadline = time.monotonic() + grace
        pending = list(fds)
        while pending and (left := deadline - time.monotonic()) > 0:
            exited, _, _ = select.select(pending, [], [], left)
            pending = [fd for fd in pending if fd not in exited]
        if pending:
            _signal_group(pgid, signal.SIGKILL)
    finally:
        for fd in fds:
            os.close(fd)


def _group_members(pgid: int) -> list[int]:
    """The processes of group `pgid` (Linux: from /proc; elsewhere none are known)."""
    members = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text(encoding="ascii", errors="replace")
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()  # state, ppid, pgrp, ...
            if len(fields) > 2 and fields[2] == str(pgid):
                members.append(int(entry.name))
    return members


def _say_where(folder: Path, asked: Path | None) -> None:
    written = [name for name in REPORT_FILES if (folder / name).exists()]
    if not written:
        print(f"mcp-testbench: no report written to {folder}: the run ended before any check")
        return
    shown = asked if asked is not None and not asked.is_absolute() else folder
    print(f"mcp-testbench: reports in {shown}/: {', '.join(written)}")
