"""`mcp-testbench record --check` when the check cannot run: one line on stderr naming the
problem and the fix, exit status 2, within the request timeout, and no process left."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from _machine import within

RECORD = [sys.executable, "-m", "harness.cli", "record"]
BOUND = within(60.0)
SCRIPT = {
    "format_version": 1,
    "name": "recorded",
    "revisions": ["2025-11-25"],
    "server": {"info": {"name": "s", "version": "1"}, "capabilities": {"tools": {}}},
    "steps": [
        {"expect": {"method": "tools/list"}, "reply": {"result": {"tools": []}}, "repeat": True}
    ],
}


def _script(folder: Path) -> Path:
    path = folder / "recorded.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return path


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RECORD, *args], capture_output=True, text=True, timeout=BOUND, check=False
    )


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_server_command_that_does_not_exist(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-server")
    line = _one_line(_check("--check", str(_script(tmp_path)), "--stdio", "--", missing))
    assert line == (
        f"mcp-testbench record: the server command did not start: {missing}: "
        "No such file or directory; check the command after --"
    )


def test_a_server_that_exits_before_the_handshake_says_why(tmp_path: Path) -> None:
    quits = [sys.executable, "-c", "raise SystemExit('WEATHER_KEY is not set')"]
    line = _one_line(_check("--check", str(_script(tmp_path)), "--stdio", "--", *quits))
    assert line.startswith(
        "mcp-testbench record: the server command did not start: it exited with status 1 "
        "(its last words: WEATHER_KEY is not set) before it answered the handshake"
    )
    assert line.endswith("check the command after --")


def test_a_url_that_does_not_answer(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on once it is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    line = _one_line(_check("--check", str(_script(tmp_path)), "--http", url))
    assert line.startswith(f"mcp-testbench record: the server at {url} does not answer")
    assert line.endswith("start it first, or check the URL")


@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "no such file"), ("{}", "format_version")],
)
def test_a_bad_script(tmp_path: Path, content: str | None, says: str) -> None:
    path = tmp_path / "recorded.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    line = _one_line(_check("--check", str(path), "--stdio", "--", sys.executable, "-c", ""))
    assert line.startswith(f"mcp-testbench record: --check {path}: ")
    assert says in line


def test_a_server_that_never_answers_is_bounded_by_the_timeout_and_ended(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    silent = [
        sys.executable,
        "-c",
        # It reads the initialize, then waits, even after its stdin closes: ended by signal.
        f"import os, sys, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        "sys.stdin.readline(); time.sleep(600)",
    ]
    timeout = f"{within(3.0):.1f}"  # time enough to start and write its pid
    done = _check("--check", str(_script(tmp_path)), "--timeout", timeout, "--stdio", "--", *silent)
    line = _one_line(done)
    assert line.startswith(
        "mcp-testbench record: the server did not answer initialize (no answer within "
    )
    pid = int(pid_file.read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):  # the check ended its server before it exited
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--exact"], "--exact goes with --out (recording), not --check"),
        (["--listen", "127.0.0.1:0"], "--listen goes with --out (recording), not --check"),
    ],
)
def test_recording_options_with_check(tmp_path: Path, extra: list[str], says: str) -> None:
    script = str(_script(tmp_path))
    line = _one_line(_check("--check", script, *extra, "--stdio", "--", sys.executable))
    assert line == f"mcp-testbench record: {says}"


def test_check_options_with_out(tmp_path: Path) -> None:
    out = str(tmp_path / "s.json")
    line = _one_line(_check("--out", out, "--timeout", "5", "--stdio", "--", sys.executable))
    assert line == "mcp-testbench record: --timeout goes with --check, not --out"


def test_out_and_check_together_are_refused(tmp_path: Path) -> None:
    script = str(_script(tmp_path))
    done = _check("--out", script, "--check", script, "--stdio", "--", sys.executable)
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
