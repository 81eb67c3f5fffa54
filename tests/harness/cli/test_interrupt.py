"""An interrupted `mcp-testbench run` (issue 33, item 5): Ctrl-C (SIGINT) or SIGTERM prints
the summary of what finished, writes its reports marked interrupted, exits 130, and leaves no
process, socket or scratch folder behind.

Each run is the real command in a process of its own, with a TMPDIR of its own (every scratch
folder, socket and transcript of the run goes there, so an empty TMPDIR after it is the proof)
and a marker in its environment that every process it starts inherits (no process carrying it
may remain). The signal is sent at a point the output shows, never after a sleep: as the
command starts pytest (its first line), and after the first verdict.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from _machine import within

WAIT = within(120.0)
STARTED = b"mcp-testbench: running the suite"


def _processes_marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(int(entry.name))
    return found


def _read_until(proc: subprocess.Popen[bytes], wanted: bytes, seen: bytearray) -> None:
    """Read the command's output until `wanted` appears (bounded; an empty `wanted`: at once)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + WAIT
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while wanted not in seen:
            left = deadline - time.monotonic()
            assert left > 0, f"never printed {wanted!r}: {bytes(seen)!r}"
            if selector.select(left):
                chunk = os.read(proc.stdout.fileno(), 65536)
                assert chunk, f"the output ended before {wanted!r}: {bytes(seen)!r}"
                seen += chunk


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find what is left")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("when", ["as it starts", "after the first verdict"])
@pytest.mark.parametrize("started", ["in the foreground", "as a background job"])
def test_an_interrupted_run_keeps_what_finished_and_leaves_nothing(
    tmp_path: Path, signum: int, when: str, started: str
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    marker = f"MCPTB_INTERRUPT_TEST={uuid.uuid4().hex}"
    env = {**os.environ, "TMPDIR": str(scratch), marker.split("=")[0]: marker.split("=")[1]}
    env.pop("PYTEST_ADDOPTS", None)
    reports = tmp_path / "reports"
    # After the first verdict, one scenario run at a time: the items are then reported as
    # their runs end, and most of the suite is still to come when the signal arrives.
    one_at_a_time = ["--", "--mcp-concurrency", "1"] if when == "after the first verdict" else []
    command = [sys.executable, "-m", "harness.cli", "run", "--report-dir", str(reports)]
    # A background job of a script starts with SIGINT ignored, and so does all it starts:
    # a SIGINT sent to it on purpose must still stop the run (it was lost, and the run
    # went on to its end, when the command and its pytest kept the ignored disposition).
    background = (
        ["sh", "-c", 'trap "" INT; exec "$@"', "sh"] if started != "in the foreground" else []
    )
    proc = subprocess.Popen(
        [*background, *command, *one_at_a_time],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    seen = bytearray()
    try:
        # -q prints one character per item, as the item's report goes out: after the second
        # "." the first item's verdict is surely recorded.
        _read_until(proc, STARTED if when == "as it starts" else b"..", seen)
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = (bytes(seen) + out).decode("utf-8", "replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text, text
    assert _processes_marked(marker) == [], text
    assert sorted(p.name for p in scratch.iterdir()) == [], text
    if when == "after the first verdict":
        assert "mcp-testbench summary" in text, text
        assert "mcp-testbench: interrupted: the run was stopped" in text
        assert f"interrupted by {signal.Signals(signum).name}" in text
        document = json.loads((reports / "results.json").read_text(encoding="utf-8"))
        assert document["interrupted"] is True
        assert document["results"], "what finished before the signal is kept"
        html = (reports / "report.html").read_text(encoding="utf-8")
        assert "interrupted: the run was stopped" in html
    else:
        assert "interrupted" in text, text


def test_a_sigint_while_pytest_is_imported_ends_it_without_a_traceback(tmp_path: Path) -> None:
    """The command's pytest child, interrupted before pytest has started (seen on a busy
    machine: the signal came during its imports), exits with pytest's status for an
    interrupted run and prints no traceback. A stand-in pytest that is interrupted as it is
    imported makes the moment certain."""
    from harness.cli._run_command import _PYTEST_CHILD, _READY_FD

    (tmp_path / "pytest").mkdir()
    (tmp_path / "pytest" / "__init__.py").write_text("raise KeyboardInterrupt\n")
    (tmp_path / "pytest" / "__main__.py").write_text("")
    ready, ready_w = os.pipe()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PYTEST_CHILD],
            env={**os.environ, "PYTHONPATH": str(tmp_path), _READY_FD: str(ready_w)},
            pass_fds=(ready_w,),
            capture_output=True,
            timeout=WAIT,
            check=False,
        )
    finally:
        os.close(ready_w)
        os.close(ready)
    assert done.returncode == 2, done
    assert b"Traceback" not in done.stderr + done.stdout, done


# Stands for the command's pytest child before it has put its SIGINT handler in place: it
# never closes the ready pipe. A SIGINT would raise KeyboardInterrupt in it wherever it is.
_NOT_YET_READY = """\
import sys
from harness.cli._run_command import _run_pytest
child = "import os, time; print('child', os.getpid(), flush=True); time.sleep(60)"
code, interrupted = _run_pytest([sys.executable, "-c", child])
print("ended", code, interrupted, flush=True)
"""


def test_a_signal_before_the_child_is_ready_kills_it_without_a_traceback() -> None:
    """Seen on a busy machine: the command's SIGTERM came while its pytest child was still
    importing `signal`, and the SIGINT forwarded to it printed a KeyboardInterrupt
    traceback. A child that has not yet said it is ready (nothing started) is killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _NOT_YET_READY],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    seen = bytearray()
    try:
        _read_until(proc, b"\n", seen)
        child = int(bytes(seen).split()[1])
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = (bytes(seen) + out).decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert f"ended {-signal.SIGKILL} SIGTERM" in text, text
    assert not Path(f"/proc/{child}").exists(), text
