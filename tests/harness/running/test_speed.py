"""Speed work that must not change behaviour: the stdio mock pool, the provoked time-outs,
the run window, and the verdicts of a whole run (pinned), judged on behaviour, never on
times."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _machine import within

from harness.clients import ConnectOptions, ReferenceClient, StdioTarget
from harness.running._scenario import (
    PROVOKED_VARIABLE,
    Scenario,
    Session,
    provoked_timeout,
    stdio_pool,
    stop_stdio_pool,
)
from harness.running._window import RunWindow
from mock_servers import ScriptError, fixtures_root, read_transcript
from mock_servers.stdio import StdioPool, stdio_command

ROOT = Path(__file__).resolve().parents[3]
PINNED = Path(__file__).with_name("reference_verdicts.json")
WAIT = within(10.0)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


@pytest.fixture(scope="module")
def pool() -> Any:
    with StdioPool() as started:
        yield started


def _spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _initialize(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    answer: dict[str, Any] = json.loads(process.stdout.readline())
    return answer


def _mock(script: str, transcript: Path | None = None) -> list[str]:
    return stdio_command(fixtures_root() / script, revision="2025-11-25", transcript=transcript)


def test_a_pooled_mock_answers_on_the_clients_own_pipes(pool: StdioPool, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    argv = pool.command(_mock("tools/list-and-call.json", transcript))
    assert argv[argv.index("--") + 1 :] == _mock("tools/list-and-call.json", transcript)
    with _spawn(argv) as process:
        answer = _initialize(process)
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        assert process.stdin is not None
        process.stdin.close()  # end of file: the mock exits 0, and so does the launcher
        assert process.wait(WAIT) == 0
        assert process.stdout is not None
        assert process.stdout.read() == b""
        assert process.stderr is not None
        assert b"serving tools-list-and-call" in process.stderr.read()
    entries = read_transcript(transcript)["entries"]
    start = next(e for e in entries if e["kind"] == "start")
    assert start["pid"] != process.pid  # the forked mock wrote it, not the launcher


def _crash(argv: list[str]) -> int:
    with _spawn(argv) as process:
        _initialize(process)
        assert process.stdin is not None
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        process.stdin.write(
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{}}}\n'
        )
        process.stdin.flush()
        return process.wait(WAIT)


def test_a_pooled_mock_gets_the_launchers_folder_and_arguments_as_they_are(
    pool: StdioPool, tmp_path: Path
) -> None:
    folder = tmp_path / "dossier é, with spaces"
    folder.mkdir()
    relative = Path("transcript ü.jsonl")  # resolved against the launcher's folder
    argv = pool.command(_mock("tools/list-and-call.json", relative))
    process = subprocess.Popen(
        argv, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    with process:
        assert _initialize(process)["result"]["protocolVersion"] == "2025-11-25"
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(WAIT) == 0
    assert read_transcript(folder / relative)["entries"][0]["kind"] == "start"


def test_a_crash_fault_exit_code_reaches_the_client(pool: StdioPool) -> None:
    plain = _mock("stdio/faults.json")
    assert _crash(pool.command(plain)) == _crash(plain) == 3  # the script's exit_code


def test_signals_reach_the_mock_and_sigkill_ends_it(pool: StdioPool, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    with _spawn(pool.command(_mock("tools/list-and-call.json", transcript))) as process:
        _initialize(process)
        process.send_signal(signal.SIGTERM)  # forwarded: the mock records it and exits
        assert process.wait(WAIT) == 0
    assert any(e["kind"] == "signal" for e in read_transcript(transcript)["entries"])
    killed_transcript = tmp_path / "killed.jsonl"
    with _spawn(pool.command(_mock("tools/list-and-call.json", killed_transcript))) as killed:
        _initialize(killed)
        assert len(_pool_children(pool)) == 1
        killed.kill()  # the launcher cannot forward SIGKILL: the mock sees it gone and ends
        assert killed.stdin is not None
        killed.stdin.close()  # what a client does next; a killed mock never sees it
        assert killed.wait(WAIT) == -signal.SIGKILL
        deadline = time.monotonic() + WAIT
        while _pool_children(pool) and time.monotonic() < deadline:
            time.sleep(0.02)  # the pool reaps it: polled, bounded
        assert _pool_children(pool) == []
    # Killed like a plain process: no end of stdin read, no exit recorded (ST-4 judges it).
    assert not [e for e in read_transcript(killed_transcript)["entries"] if e["kind"] == "exit"]


def _pool_children(pool: StdioPool) -> list[int]:
    from _leaks import children

    assert pool._process is not None
    return [pid for pid, _ in children(pool._process.pid)]


def test_without_a_pool_the_launcher_starts_the_mock_itself(tmp_path: Path) -> None:
    with StdioPool() as short_lived:
        argv = short_lived.command(_mock("tools/list-and-call.json"))
    assert short_lived.command(["x"]) == ["x"]  # stopped: the plain command
    with _spawn(argv) as process:  # the launcher of a pool that is gone
        assert _initialize(process)["result"]["protocolVersion"] == "2025-11-25"
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(WAIT) == 0
        assert process.stderr is not None
        assert b"starting the mock directly" in process.stderr.read()


def test_the_harness_pool_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    stop_stdio_pool()
    monkeypatch.setenv("MCP_TESTBENCH_STDIO_POOL", "0")
    assert stdio_pool() is None
    monkeypatch.delenv("MCP_TESTBENCH_STDIO_POOL")
    started = stdio_pool()
    assert started is not None
    assert started.running
    stop_stdio_pool()
    assert not started.running


def test_the_provoked_timeout_is_short_and_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    target = StdioTarget(("true",))
    monkeypatch.delenv(PROVOKED_VARIABLE, raising=False)
    session = Session(ReferenceClient(), target, ConnectOptions(timeout=10.0))
    assert session.provoked_timeout == provoked_timeout() == 0.25
    monkeypatch.setenv(PROVOKED_VARIABLE, "0.5")
    assert Session(ReferenceClient(), target, ConnectOptions(timeout=10.0)).provoked_timeout == 0.5
    # Never more than a tenth of the run's time-out (a client still gets to answer).
    assert Session(ReferenceClient(), target, ConnectOptions(timeout=2.0)).provoked_timeout == 0.2
    monkeypatch.setenv(PROVOKED_VARIABLE, "soon")
    with pytest.raises(ValueError, match="not a number of seconds"):
        provoked_timeout()


def test_a_scenario_script_is_checked_once_and_read_again_when_it_changes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "script.json"
    source = json.loads((fixtures_root() / "tools" / "list-and-call.json").read_text("utf-8"))
    path.write_text(json.dumps(source), encoding="utf-8")
    scenario = Scenario("edited", str(path), checks=())  # an absolute path stays as is
    first = scenario.load()
    assert scenario.load() is first  # unchanged: checked once
    source["name"] = "edited-script"
    path.write_text(json.dumps(source, indent=1), encoding="utf-8")  # another size too
    assert scenario.load().name == "edited-script"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ScriptError, match="not valid JSON"):
        scenario.load()


def test_a_fork_server_checks_each_script_once_before_it_forks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stdio pool loads the script a mock will serve before forking it (`preload`), so
    every mock of that script finds it checked; argv it cannot read is left for the mock to
    report, with nothing printed by the pool and nothing raised."""
    from mock_servers.engine._script import _checked_script
    from mock_servers.stdio._server import preload

    script = fixtures_root() / "tools" / "list-and-call.json"
    folder = str(tmp_path)
    before = _checked_script.cache_info()
    preload([str(script), "--revision", "2025-11-25", "--append-transcript"], folder)
    loaded = _checked_script.cache_info()
    assert (loaded.hits, loaded.misses) != (before.hits, before.misses)  # looked up here
    preload(["--revision", "2025-11-25", str(script)], folder)
    assert _checked_script.cache_info().hits == loaded.hits + 1  # the second time: no check
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    for argv in (["broken.json"], ["missing.json"], ["--help"], ["--no-such-option"], []):
        preload(argv, folder)
    assert capsys.readouterr() == ("", "")


def test_a_whole_run_gives_the_pinned_verdicts(tmp_path: Path) -> None:
    """The reference client through the whole suite under xdist, as `mcp-testbench run`
    does: every item's status is the pinned one (speed work changes no verdict)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    report = tmp_path / "results.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(tmp_path / "pytest.ini"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            "-q",
            "-n",
            "2",
            "--mcp-client=harness.clients:ReferenceClient",
            "--mcp-report",
            str(report),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    got = {
        r["id"].removeprefix("mcp-testbench::"): r["status"]
        for r in json.loads(report.read_text(encoding="utf-8"))["results"]
    }
    if os.environ.get("UPDATE_PINNED_VERDICTS") == "1":
        pinned = json.loads(PINNED.read_text(encoding="utf-8"))
        pinned["verdicts"] = dict(sorted(got.items()))
        PINNED.write_text(json.dumps(pinned, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(PINNED.read_text(encoding="utf-8"))["verdicts"]
    changed = {k: (expected.get(k), got.get(k)) for k in expected.keys() | got.keys()}
    changed = {k: v for k, v in changed.items() if v[0] != v[1]}
    assert not changed, (
        f"{len(changed)} verdicts differ from {PINNED.name} (pinned, now): "
        + ", ".join(f"{k}: {a} -> {b}" for k, (a, b) in sorted(changed.items())[:20])
        + "; if the suite changed on purpose, regenerate it with UPDATE_PINNED_VERDICTS=1"
    )
    assert done.returncode == 0, done.stdout[-3000:]


# -- the run window: runs keep the cores busy, never more than asked --------------------------


class _Jobs:
    """Jobs that each block until released, and a record of how many ran at once."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.running: set[int] = set()
        self.started: list[int] = []
        self.most = 0
        self.release: dict[int, threading.Event] = {}

    def job(self, number: int) -> Callable[[], int]:
        self.release[number] = threading.Event()

        def body() -> int:
            with self.changed:
                self.running.add(number)
                self.started.append(number)
                self.most = max(self.most, len(self.running))
                self.changed.notify_all()
            # Longer than any wait of the tests: a job that ended by itself could otherwise
            # let the next one in just as a test's wait for that runs out.
            assert self.release[number].wait(3 * WAIT), f"job {number} was never released"
            with self.changed:
                self.running.discard(number)
            return number

        return body

    def until(self, what: Callable[[], bool], bound: float = WAIT) -> bool:
        with self.changed:
            return self.changed.wait_for(what, bound)


def test_the_window_keeps_width_runs_going_in_the_order_given() -> None:
    jobs = _Jobs()
    window: RunWindow[int] = RunWindow(2, cap=4, stale=float("inf"))
    try:
        futures = [window.submit(n, jobs.job(n)) for n in range(6)]
        assert jobs.until(lambda: len(jobs.running) == 2), jobs.started
        # Two working: a third must not start (a bounded look for it).
        assert not jobs.until(lambda: len(jobs.running) > 2, 0.3), jobs.started
        for n in range(6):
            # Each end lets exactly the next one in.
            assert jobs.until(lambda n=n: jobs.running == {n, n + 1} - {6}), jobs.started
            jobs.release[n].set()
            assert futures[n].result(WAIT) == n
        assert jobs.started == list(range(6))
        assert jobs.most == 2
    finally:
        window.close()


def test_a_run_still_going_after_stale_seconds_lets_the_next_start_up_to_the_cap() -> None:
    """A run that has not ended is waiting, not working: the next starts beside it, but
    never more than `cap` at once, however long they all wait."""
    jobs = _Jobs()
    window: RunWindow[int] = RunWindow(1, cap=2, stale=0.05)
    try:
        futures = [window.submit(n, jobs.job(n)) for n in range(3)]
        assert jobs.until(lambda: jobs.running == {0, 1}), jobs.started  # 1 beside stale 0
        # Both stale, the cap reached: the third must not start (a bounded look for it).
        assert not jobs.until(lambda: 2 in jobs.running, 0.5), jobs.started
        jobs.release[1].set()
        assert jobs.until(lambda: 2 in jobs.running), jobs.started
        for n in (0, 2):
            jobs.release[n].set()
        assert [f.result(WAIT) for f in futures] == [0, 1, 2]
        assert jobs.most == 2
    finally:
        window.close()


def test_a_run_waiting_on_the_client_holds_no_place_until_its_wait_ends() -> None:
    """A run that says it waits on the client lets the next start at once (not after
    `stale`); when its wait ends it works again, and no other starts until one ends."""
    jobs = _Jobs()
    window: RunWindow[int] = RunWindow(1, cap=3, stale=float("inf"))
    try:
        futures = [window.submit(n, jobs.job(n)) for n in range(3)]
        assert jobs.until(lambda: jobs.running == {0}), jobs.started
        assert not jobs.until(lambda: 1 in jobs.running, 0.3), jobs.started  # 0 works
        window.waiting(0, True)
        assert jobs.until(lambda: jobs.running == {0, 1}), jobs.started
        window.waiting(0, False)  # 0 and 1 both work now: 2 waits for one of them to end
        assert not jobs.until(lambda: 2 in jobs.running, 0.3), jobs.started
        jobs.release[1].set()
        assert not jobs.until(lambda: 2 in jobs.running, 0.3), jobs.started  # 0 still works
        jobs.release[0].set()
        assert jobs.until(lambda: 2 in jobs.running), jobs.started
        jobs.release[2].set()
        assert [f.result(WAIT) for f in futures] == [0, 1, 2]
    finally:
        window.close()


def test_the_window_carries_out_a_key_once_and_hands_on_what_a_job_raised() -> None:
    calls: list[str] = []

    def fails() -> int:
        calls.append("fails")
        raise RuntimeError("the harness's own fault")

    window: RunWindow[int] = RunWindow(2, cap=2, stale=1.0)
    try:
        first = window.submit("a", fails)
        assert window.submit("a", fails) is first
        with pytest.raises(RuntimeError, match="the harness's own fault"):
            first.result(WAIT)
        assert calls == ["fails"]
    finally:
        window.close()


def test_closing_the_window_drops_what_has_not_started_and_waits_for_what_has() -> None:
    jobs = _Jobs()
    window: RunWindow[int] = RunWindow(1, cap=1, stale=float("inf"))
    futures = [window.submit(n, jobs.job(n)) for n in range(3)]
    assert jobs.until(lambda: jobs.running == {0})
    closing = threading.Thread(target=window.close)
    closing.start()
    dropped = [threading.Event() for _ in futures[1:]]
    for future, event in zip(futures[1:], dropped, strict=True):
        future.add_done_callback(lambda _, event=event: event.set())
    assert all(event.wait(WAIT) for event in dropped)
    assert all(future.cancelled() for future in futures[1:])
    assert closing.is_alive()  # still waiting for the run under way
    jobs.release[0].set()
    closing.join(WAIT)
    assert not closing.is_alive()
    assert futures[0].result(0) == 0
    assert jobs.started == [0]
    with pytest.raises(RuntimeError, match="closed"):
        window.submit(9, jobs.job(9))
