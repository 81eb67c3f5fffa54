"""The conformance-client adapter: a command started as the official runner starts it.

Tiny clients (a shell line, or a Python script written here) stand for a conformance
client: what they were given (argv, environment, stdin) is what they print, and how they
end is what the adapter must report, as the runner counts it (its time-out's SIGTERM to
the shell, a signal counting as exit 0) plus the harness's own SIGKILL of a hung group.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _machine import within

from harness.running import (
    ConformanceTarget,
    run_conformance_client,
    runner_command_line,
)

INITIALIZE = ConformanceTarget(
    "initialize", "2025-11-25", "conformance-clients/2025-11-25/initialize.json"
)
TOOLS_CALL = ConformanceTarget(
    "tools_call", "2025-11-25", "conformance-clients/2025-11-25/tools_call.json", "/mcp"
)

# A client that prints what it was given, then does what its first argument says.
CLIENT = textwrap.dedent(
    """
    import json, os, select, signal, sys, time, urllib.request
    mode, url = sys.argv[1], sys.argv[-1]
    ready, _, _ = select.select([sys.stdin], [], [], 0.2)
    stdin = "open" if not ready else ("eof" if not sys.stdin.read(1) else "data")
    print(json.dumps({
        "argv": sys.argv[1:],
        "env": {k: v for k, v in os.environ.items() if k.startswith(("MCP_CONFORMANCE", "CT_"))},
        "stdin": stdin,
        "pid": os.getpid(),
    }), flush=True)
    if mode == "initialize":
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "tiny", "version": "1"}}}
        request = urllib.request.Request(url, json.dumps(body).encode(), {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream"})
        print(urllib.request.urlopen(request, timeout=5).read().decode(), flush=True)
    elif mode == "sleep":
        time.sleep(float(sys.argv[2]))
    elif mode == "stubborn":  # ignores SIGTERM, and sleeps long
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(60)
    elif mode == "exit":
        sys.exit(int(sys.argv[2]))
    """
)


@pytest.fixture
def client(tmp_path: Path) -> str:
    path = tmp_path / "client.py"
    path.write_text(CLIENT, encoding="utf-8")
    return f"{sys.executable} {path}"


def _given(stdout: str) -> dict[str, object]:
    first = stdout.splitlines()[0]
    given: dict[str, object] = json.loads(first)
    return given


def test_the_command_line_is_the_command_and_the_url_last() -> None:
    # Node splits on single spaces and joins again: runs of spaces survive.
    assert runner_command_line("a  'b c'", "http://x") == "a  'b c' http://x"


def test_the_client_gets_the_url_last_the_variables_and_an_open_stdin(
    client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CT_INHERITED", "yes")
    run = run_conformance_client(f"{client} initialize 'two words'", INITIALIZE)
    assert run.exit_code == 0, run.stderr
    given = _given(run.stdout)
    assert given["argv"] == ["initialize", "two words", run.url]
    assert run.url.startswith("http://localhost:")
    assert not run.url.endswith("/")
    assert given["env"] == {
        "MCP_CONFORMANCE_SCENARIO": "initialize",
        "MCP_CONFORMANCE_PROTOCOL_VERSION": "2025-11-25",
        "CT_INHERITED": "yes",
    }
    assert given["stdin"] == "open"
    # It reached the scenario's mock at `localhost`: the transcript has its initialize.
    methods = [e["message"].get("method") for e in run.entries if e["kind"] == "message"]
    assert "initialize" in methods
    assert '"serverInfo":{"name":"test-server"' in run.stdout


def test_a_context_is_compact_json_with_the_name_first(client: str) -> None:
    target = ConformanceTarget(
        "initialize",
        "2025-11-25",
        INITIALIZE.script,
        context={"client_id": "pre-registered-client", "note": "é"},
    )
    run = run_conformance_client(f"{client} exit 0", target)
    env = _given(run.stdout)["env"]
    assert isinstance(env, dict)
    assert env["MCP_CONFORMANCE_CONTEXT"] == (
        '{"name":"initialize","client_id":"pre-registered-client","note":"é"}'
    )


def test_the_path_of_the_scenario_follows_the_port(client: str) -> None:
    run = run_conformance_client(f"{client} exit 0", TOOLS_CALL)
    assert run.url.endswith("/mcp")


@pytest.mark.parametrize(("command", "code"), [("exit 3", 3), ("exit 0", 0)])
def test_the_exit_code_is_the_clients(client: str, command: str, code: int) -> None:
    run = run_conformance_client(f"{client} {command}", INITIALIZE)
    assert (run.exit_code, run.timed_out, run.hung) == (code, False, False)


def test_a_missing_command_is_the_shells_127() -> None:
    run = run_conformance_client("/nonexistent/conformance-client", INITIALIZE)
    assert run.exit_code == 127
    assert "not found" in run.stderr


def test_a_client_ended_by_a_signal_counts_as_exit_0() -> None:
    # `kill -TERM $$` ends the shell itself with SIGTERM: Node's `code || 0` is 0.
    run = run_conformance_client("kill -TERM $$; echo", INITIALIZE)
    assert run.returncode == -15
    assert run.exit_code == 0


def test_after_the_time_out_the_shell_gets_sigterm_and_the_client_may_finish(
    client: str,
) -> None:
    # The shell (dash forks, it does not exec) dies of the SIGTERM; its child goes on, and
    # the run ends when it exits and its output ends, as the runner waits for 'close'.
    started = time.monotonic()
    run = run_conformance_client(f"{client} sleep 1.5", INITIALIZE, timeout_ms=300, grace=20)
    took = time.monotonic() - started
    assert run.timed_out
    assert not run.hung
    assert run.exit_code == 0  # the shell was ended by the signal
    assert 1.4 <= took < within(15)
    assert "time-out" in run.shown_status


def test_a_client_that_outlives_the_grace_is_killed_and_is_a_hang(client: str) -> None:
    started = time.monotonic()
    run = run_conformance_client(f"{client} stubborn", INITIALIZE, timeout_ms=300, grace=1.0)
    assert run.timed_out
    assert run.hung
    assert run.exit_code is None  # no exit code: no verdict on how it ended
    assert "hung" in run.shown_status
    assert time.monotonic() - started < within(15)
    pid = _given(run.stdout)["pid"]
    assert isinstance(pid, int)
    _gone(pid)


def test_what_the_command_left_running_is_killed_and_said(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    # A background process with its output elsewhere: the shell exits at once.
    command = f"(sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {marker}); true"
    run = run_conformance_client(command, INITIALIZE)
    assert run.exit_code == 0
    assert not run.hung
    assert run.left_behind
    _gone(int(marker.read_text().strip()))


def test_a_script_that_cannot_be_served_is_the_harnesss_fault(client: str) -> None:
    broken = ConformanceTarget("initialize", "2025-11-25", "conformance-clients/none.json")
    run = run_conformance_client(f"{client} exit 0", broken)
    assert run.harness_error is not None
    assert "mock did not start" in run.harness_error
    assert run.exit_code is None
    assert run.stdout == ""


def _gone(pid: int) -> None:
    deadline = time.monotonic() + within(5)
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # A zombie waiting for its parent (init) is gone for this test's purpose.
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} is still running")


def test_stopping_the_clients_ends_a_run_at_once(client: str) -> None:
    """A session that ends early kills the commands still running (their groups are not
    the session's); their runs then end without waiting out the time-out."""
    import threading

    from harness.running import stop_conformance_clients

    runs = []
    worker = threading.Thread(
        target=lambda: runs.append(run_conformance_client(f"{client} stubborn", INITIALIZE)),
        daemon=True,
    )
    started = time.monotonic()
    worker.start()
    deadline = time.monotonic() + within(20)
    while worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.5)  # until the command has started (the mock starts first)
        stop_conformance_clients()
    worker.join(within(5))
    assert not worker.is_alive()
    assert time.monotonic() - started < within(15)
    (run,) = runs
    assert not run.timed_out
    assert run.exit_code == 0  # killed by a signal: as the runner would count it
