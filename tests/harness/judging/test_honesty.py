"""Honesty: clients that raise, hang, block, do nothing, or never start get no PASS.

"A check with no evidence is never a pass", in bounded time, anywhere: the bad clients
run the WHOLE suite (every scenario, revision and transport) through the real plugin
(pytester, pytest-xdist) with a short time-out; the run fails, no item passes, a hang is
told as a hang, and the report leads with the root causes. The bounded-time cases run
one scenario.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from _leaks import processes_naming
from _machine import within

# harness.suite is imported here, before any in-process pytest session of these tests imports
# it: a session's own imports are dropped when it ends, and importing the suite again would
# declare every check into the catalogue a second time.
import harness.suite  # noqa: F401
from harness.cli._run_command import LEAN_PYTEST

pytest_plugins = ["pytester"]

BAD_CLIENTS = '''
import time
import anyio

class _Base:
    name = "bad"
    version = "0"
    supports = frozenset()

class Raising(_Base):
    """Every method of the contract raises (prepare() is optional: it has none)."""
    def __getattr__(self, name):
        if name == "prepare":
            raise AttributeError(name)
        async def fail(*args, **kwargs):
            raise RuntimeError(f"{name} always raises")
        return fail
    async def close(self):
        raise RuntimeError("close raises too")

class Hanging(_Base):
    """Every method of the contract hangs (prepare() is optional: it has none)."""
    def __getattr__(self, name):
        if name == "prepare":
            raise AttributeError(name)
        async def hang(*args, **kwargs):
            await anyio.sleep_forever()
        return hang

class Idle(_Base):
    """Connects to nothing and answers everything with plausible empty values."""
    async def connect(self, target, options):
        return {"protocolVersion": options.protocol_version, "serverInfo": {"name": "x", "version": "1"}}
    async def list_tools(self):
        return {"tools": []}
    async def call_tool(self, name, arguments=None, **kwargs):
        return {"content": [{"type": "text", "text": "3"}], "isError": False}
    async def close(self):
        pass

class HangingAtStart(_Base):
    async def prepare(self):
        await anyio.sleep_forever()
    async def close(self):
        pass

class Blocking(_Base):
    """Blocks its event loop in synchronous code: even cancellation cannot reach it. For
    longer than any bound of the harness: the run's bound grows with the machine's load, and
    at a load of 18 on two cores it outlasted a minute's block, so connect 'succeeded'."""
    async def connect(self, target, options):
        time.sleep(3600)
    async def close(self):
        pass

def broken_factory():
    raise ImportError("the client's dependencies are missing")
'''

# Four scenario runs at once in each worker (the plugin's --mcp-concurrency): these
# clients keep no state, so their sessions cannot interfere, and the runs' waits (a hung
# operation's bound, an idle client's waits for messages it never sends) overlap instead
# of adding up. Every run is still bounded and judged on its own (four at a time, a run
# of the Hanging client takes under a second on two loaded cores; its bound is 2.5 s).
WHOLE_SUITE = [
    "--mcp-timeout=0.3",
    "--mcp-concurrency=4",
    *LEAN_PYTEST,  # as `mcp-testbench run` runs the suite
    "-p",
    "xdist",
    "-n",
    "2",
]
ONE_SCENARIO = [
    "--mcp-revision=2025-11-25",
    "--mcp-transport=stdio",
    "-k",
    "tools-call",
    "--mcp-timeout=0.3",
    "-p",
    "no:cacheprovider",
]


def _run(
    pytester: pytest.Pytester, client: str, *options: str
) -> tuple[pytest.RunResult, list[dict[str, object]], float]:
    pytester.makepyfile(bad_clients=BAD_CLIENTS)
    pytester.syspathinsert()
    report = pytester.path / "report.json"
    start = time.monotonic()
    result = pytester.runpytest_subprocess(
        client, *options, f"--mcp-report={report}", "--tb=no", timeout=900
    )
    elapsed = time.monotonic() - start
    results = (
        json.loads(Path(report).read_text(encoding="utf-8"))["results"] if report.exists() else []
    )
    return result, results, elapsed


def _statuses(results: list[dict[str, object]]) -> dict[str, int]:
    return dict(Counter(str(r["status"]) for r in results))


@pytest.mark.parametrize(
    ("client", "first_root"),
    [
        ("Raising", "client.connect"),
        ("Hanging", "client.connect"),
        ("Idle", "lifecycle.initialize-first"),  # "connected" without a word to the server
    ],
)
def test_bad_client_passes_nothing_in_the_whole_suite(
    pytester: pytest.Pytester, client: str, first_root: str
) -> None:
    from harness.judging._catalogue import CATALOGUE
    from harness.suite import SCENARIOS

    items = sum(
        1
        for scenario in SCENARIOS
        for revision, transport in scenario.matrix()
        for check_id in scenario.checks
        if CATALOGUE[check_id].applies(revision, transport)
    )
    options = WHOLE_SUITE
    if client == "Hanging":
        # Every operation hangs, whatever its bound: with a shorter one the 300-odd scenario
        # runs cost a third of the time, and the verdicts cannot differ.
        options = [o if o != "--mcp-timeout=0.3" else "--mcp-timeout=0.1" for o in options]
    result, results, _ = _run(pytester, f"--mcp-client=bad_clients:{client}", *options)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert len(results) == items, "every item of the suite has a verdict"
    passing = [r["id"] for r in results if r["status"] == "PASS"]
    assert not passing, f"{len(passing)} items passed: {passing[:20]}"
    # The client declares nothing: nothing is a SKIP but the items of scenarios that need
    # a driver protocol 1.1 operation, which an empty declaration never implies.
    skipped = [r for r in results if r["status"] == "SKIP"]
    assert all("does not declare the operation" in str(r["reason"]) for r in skipped), skipped[:3]
    # The report leads with what to fix first: the root causes, then the summary.
    lines = result.stdout.lines
    heading = lines.index("mcp-testbench: root causes (fix these first):")
    summary = next(
        i for i, line in enumerate(lines) if line.startswith(f"mcp-testbench: {items} items")
    )
    block = list(itertools.takewhile(lambda line: line.startswith("  "), lines[heading + 1 :]))
    assert heading + len(block) < summary
    roots: list[str] = []  # one per root cause: a long one goes on under a hanging indent
    for line in block:
        if line.startswith("      "):
            roots[-1] += " " + line.strip()
        else:
            roots.append(line)
    assert roots
    assert all(" blocks " in line for line in roots)
    assert roots[0].startswith(f"  {first_root} ")
    if client == "Hanging":
        blocked = [r for r in results if r["status"] == "BLOCKED"]
        assert blocked
        assert all("hung" in str(r["reason"]) for r in blocked), {
            str(r["reason"]) for r in blocked if "hung" not in str(r["reason"])
        }
        assert "hung" in roots[0]


def test_client_that_cannot_be_created_is_blocked_by_client_start(
    pytester: pytest.Pytester,
) -> None:
    result, results, elapsed = _run(
        pytester, "--mcp-client=bad_clients:broken_factory", *ONE_SCENARIO
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert results
    assert {(r["status"], r.get("root")) for r in results} == {("BLOCKED", "client.start")}
    assert all("dependencies are missing" in str(r["reason"]) for r in results)
    assert elapsed < within(60)


def test_client_that_hangs_while_starting_is_blocked_by_client_start(
    pytester: pytest.Pytester,
) -> None:
    result, results, elapsed = _run(
        pytester, "--mcp-client=bad_clients:HangingAtStart", *ONE_SCENARIO
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert results
    assert {(r["status"], r.get("root")) for r in results} == {("BLOCKED", "client.start")}
    assert all("hung" in str(r["reason"]) for r in results)
    assert elapsed < within(60)


def test_blocking_client_is_blocked_in_bounded_time(pytester: pytest.Pytester) -> None:
    result, results, elapsed = _run(
        pytester, "--mcp-client=bad_clients:Blocking", *ONE_SCENARIO, "--mcp-timeout=0.2"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert results
    assert {(r["status"], r.get("root")) for r in results} == {("BLOCKED", "client.connect")}
    assert all("hung" in str(r["reason"]) for r in results)
    assert elapsed < within(55)


BROKEN_DRIVERS = {
    "exits at once": ("import sys\nsys.exit(3)\n", "exited (code 3)"),
    "prints garbage": (
        "import sys, time\nprint('Welcome to my driver!', flush=True)\ntime.sleep(60)\n",
        "not a JSON line on the driver's stdout",
    ),
    "never says hello": ("import sys\nsys.stdin.read()\n", "no hello line"),
}


@pytest.mark.parametrize(
    ("name", "workers"),
    [
        *(pytest.param(name, [], id=f"{name}-serial") for name in sorted(BROKEN_DRIVERS)),
        # Under xdist, what differs is whether the workers' own first process fails at
        # once or waits out its bound (garbage waits as silence does).
        pytest.param("exits at once", ["-n", "2"], id="exits at once-xdist"),
        pytest.param("never says hello", ["-n", "2"], id="never says hello-xdist"),
    ],
)
def test_a_broken_driver_is_one_clear_error_in_seconds(
    pytester: pytest.Pytester, name: str, workers: list[str]
) -> None:
    """The driver is checked once before any scenario: a broken one ends the run with one
    usage error naming the problem, not a BLOCKED item (and a wait) per scenario. Under
    xdist the check runs beside the workers' start, which have started the driver too:
    they end every process they started."""
    source, says = BROKEN_DRIVERS[name]
    driver = pytester.path / "driver.py"
    driver.write_text(source, encoding="utf-8")
    start = time.monotonic()
    result, results, _ = _run(
        pytester, f"--mcp-driver={sys.executable} {driver}", "--mcp-timeout=1", *workers
    )
    elapsed = time.monotonic() - start
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert not results
    errors = result.stderr.str()
    assert "does not work" in errors
    assert says in errors
    assert "mcp-testbench summary" not in result.stdout.str()  # no run took place
    assert elapsed < within(30)
    assert not processes_naming(str(driver))
