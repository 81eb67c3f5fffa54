"""Shared test configuration: hypothesis profiles, and the session-wide leak check.

The "ci" profile (chosen when CI is set, or with HYPOTHESIS_PROFILE=ci) runs every
property test with 200 examples; the fuzz tests of the servers ask for 500 with
`settings(max_examples=max(500, settings().max_examples))`, and the 220 schema
cross-checks for half the profile's (tests/protocol/test_schemas.py says why). "dev" is quicker
locally; "deep" (HYPOTHESIS_PROFILE=deep, 1,000) is for after a change to a schema or codec.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _leaks import children, listening_sockets
from hypothesis import HealthCheck, settings

# tools/ (maintenance scripts, not in the wheel), last on the path: its variant clients
# (tools/variant_clients.py) are the tests' too. The harness stays the installed one.
sys.path.append(str(Path(__file__).resolve().parent.parent / "tools"))

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
# Deeper, by hand (HYPOTHESIS_PROFILE=deep): after a change to a schema or a codec.
settings.register_profile(
    "deep",
    parent=settings.get_profile("ci"),
    max_examples=1000,
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


# -- how many pytest-xdist workers `-n auto` starts ----------------------------------------------
#
# xdist's `auto` is one worker per core. The quick loop (`-m "not e2e"`: tox's py env) waits
# more than it computes (mock servers, subprocesses, bounded waits for what a broken client
# never sends): with one worker per core it kept two cores about half busy, so it starts two
# per core. The end-to-end tests keep one per core (.ci/run: the verdicts of real clients
# must not depend on how loaded the cores are), and so does any other selection; an
# explicit `-n N`, or PYTEST_XDIST_AUTO_NUM_WORKERS, is taken as it is.


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.option.markexpr != "not e2e":
        return None  # xdist's own count
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * (cores or 1)


# -- the pytest sessions the tests run (pytester) -----------------------------------------------
#
# Hypothesis's pytest plugin imports all of Hypothesis (most of a second) to print its terminal
# summary, in every pytest process; the sessions the tests start (test_plugin.py,
# test_baseline.py, test_honesty.py...) collect no Hypothesis test, so they leave the plugin
# out, as `mcp-testbench run` does (harness/cli/_run_command.py). A session with the plugin in is
# still run: the whole suite under pytest-xdist in tests/harness/running/test_speed.py.


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # pytester has cleared PYTEST_ADDOPTS; in-process and subprocess runs both read it.
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    return pytester


# -- nothing outlives the tests ------------------------------------------------------------------
#
# Every test stops what it starts, by pid. This check, run when each test process ends its
# session, proves it: no child process of the test process is left, and no listening
# socket of the test process is left open. Linux only (it reads /proc).


@pytest.fixture(scope="session", autouse=True)
def _nothing_outlives_the_tests() -> Iterator[None]:
    before = {pid for pid, _ in children(os.getpid())}
    yield
    # The stdio mock pool (harness/running/_scenario.py) is shared by the scenario runs of the session
    # on purpose; it ends here, and must leave nothing behind either.
    from harness.running._scenario import stop_stdio_pool

    stop_stdio_pool()
    if not Path("/proc").is_dir():
        return
    leaked = [(pid, cmd) for pid, cmd in children(os.getpid()) if pid not in before]
    ports = listening_sockets(os.getpid())
    assert not leaked, f"processes outlived the tests: {leaked}"
    assert not ports, f"listening sockets outlived the tests: {ports}"
