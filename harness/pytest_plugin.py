"""The mcp-testbench pytest plugin (entry point `pytest11: mcp_testbench`).

    pytest --mcp-client=mypkg.testing:make_client      # a Python client (a factory)
    pytest --mcp-driver="java -cp build MyDriver"       # any language, driver protocol 1.1 (or v1)

collects the conformance suite: one item per check per (scenario, revision, transport),
named `mcp-testbench::<scenario>-<revision>-<transport>::<check>`, so that `-k`, `-x`,
`--junitxml` and pytest-xdist work as usual (the items of one scenario run go to one
worker without any `--dist` flag, so each scenario runs once).
A conftest may instead override the `mcp_client_factory` fixture and pass `--mcp-suite`.

`@pytest.mark.mcp_recording("recordings/weather.json", transport="http")` serves a recorded
script (or any script) for one test, the `mcp_recording` fixture says where (`url`, or a
stdio `command`), and the test fails in its teardown when the client sent what the
recording never saw or left a recorded step unused (`_served_recording` does the work).

The plugin is loaded by every pytest run in an environment where mcp-testbench is
installed, so it stays inert, and imports nothing heavy, until one of its options is given.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import re
import shlex
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness._served_recording import (
    SERVED_TRANSPORTS,
    RecordingError,
    ServedRecording,
    resolve_script,
)

if TYPE_CHECKING:
    from harness.clients import DriverPool, McpClient
    from harness.judging import Check, Verdict
    from harness.official import (
        ClientBaseline,
        ClientScenario,
        ConformanceResult,
        OfficialClientCheck,
    )
    from harness.reports import Baseline
    from harness.running import RunWindow, Scenario, ScenarioRun

__all__ = ["McpCheckFailed", "McpRecording", "mcp_client_factory", "mcp_recording"]

McpRecording = ServedRecording
"""What the `mcp_recording` fixture gives a test: `url` (HTTP) or `command` (stdio), the
served `script` and `served_revision`, `transcript_path` and `entries()`."""

_RESULT_PROPERTY = "mcp_result"
_SUITE = "mcp-testbench"
_CONCURRENT_RUNS = 2
"""Scenario runs at once per process when the client allows it: most of a run is waiting
(on the client, on the mock's scripted delays), so a second run fills that time."""
_STASH_RUNS: pytest.StashKey[dict[tuple[str, str, str], ScenarioRun]] = pytest.StashKey()
_STASH_BASELINE: pytest.StashKey[Baseline | None] = pytest.StashKey()
_STASH_CLIENT_BASELINE: pytest.StashKey[ClientBaseline] = pytest.StashKey()
_STASH_SELECT: pytest.StashKey[list[str]] = pytest.StashKey()
_STASH_FACTORY: pytest.StashKey[Callable[[], McpClient]] = pytest.StashKey()
_STASH_GROUPS: pytest.StashKey[dict[str, list[McpRun]]] = pytest.StashKey()
_STASH_WINDOW: pytest.StashKey[RunWindow[ScenarioRun]] = pytest.StashKey()
_STASH_RESTORE_ENV: pytest.StashKey[Callable[[], None]] = pytest.StashKey()
_STASH_POOL: pytest.StashKey[DriverPool] = pytest.StashKey()
_STASH_HELLO: pytest.StashKey[dict[str, Any]] = pytest.StashKey()
_STASH_CHECK: pytest.StashKey[_DriverCheck] = pytest.StashKey()
_UNIT_RUNS = 16
"""Scenario runs in one unit of pytest-xdist's work, the units being dealt out to the
workers in turn: neighbouring runs (a scenario's revisions and transports) stay together,
and each worker still gets a mix of the suite's scenarios."""
_UNIT_INPUT = "mcp_testbench_unit_runs"
_SHARE_INPUT = "mcp_testbench_share"
_GROUP_SCOPE = f"{_SUITE}::group "
_STASH_POSITIONS: pytest.StashKey[list[str]] = pytest.StashKey()
_STALE_RUN = 2.0
"""Seconds after which a run stops holding a place in the window: a run that has not ended
by then is waiting (a behaving client's slowest operation took 0.42 s in a loaded run)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp", "mcp-testbench: MCP client conformance")
    group.addoption(
        "--mcp-client",
        metavar="MODULE:ATTR",
        help="test a Python client: ATTR in MODULE is a factory returning the client (see docs)",
    )
    group.addoption(
        "--mcp-driver",
        metavar="CMD",
        help='test a client in any language through its driver, e.g. "node driver.mjs" (see docs)',
    )
    group.addoption(
        "--mcp-suite",
        action="store_true",
        help="collect the suite with the client from the mcp_client_factory fixture (a conftest)",
    )
    group.addoption(
        "--mcp-revision",
        action="append",
        metavar="REVISION",
        help="only these revisions (repeatable or comma-separated), e.g. 2025-11-25",
    )
    group.addoption(
        "--mcp-transport",
        action="append",
        metavar="TRANSPORT",
        help="only these transports (repeatable or comma-separated): stdio, http, sse-legacy",
    )
    group.addoption(
        "--mcp-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time a client may take for each operation (default 10); longer is a hang, never a pass",
    )
    group.addoption(
        "--mcp-concurrency",
        type=int,
        default=None,
        metavar="N",
        help="scenario runs working at once in each pytest process (default: a conformance "
        f"client's, one per core, at least {_CONCURRENT_RUNS}; "
        f"{_CONCURRENT_RUNS} for a driver, whose runs each have a driver process or "
        "session, and for a "
        "client whose factory declares `concurrent_instances = True`; otherwise 1); above 1, "
        "runs waiting out a bound let others start, up to twice N",
    )
    group.addoption(
        "--mcp-baseline",
        metavar="FILE",
        help="expected failures (JSON, or the official runner's .yml): listed failures are "
        "xfail, listed checks that pass or entries that match nothing fail the run",
    )
    group.addoption(
        "--mcp-report",
        action="append",
        metavar="FILE",
        help="write the results: .json (per check), .md or .html (matrix); repeatable",
    )
    _conformance_options(group)
    # How the command that started this pytest spells its options (`mcp-testbench run`'s
    # --client for --mcp-client), as JSON: errors and hints name an option as it was typed.
    group.addoption("--mcp-as-typed", default=None, help=argparse.SUPPRESS)


def _typed(config: pytest.Config, option: str) -> str:
    """`option` (`--mcp-timeout`) as the user typed it (`--timeout`, for `mcp-testbench run`)."""
    spelled = json.loads(config.getoption("mcp_as_typed", None) or "{}")
    return str(spelled.get(option, option))


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Any:
    """A usage error names the plugin's options as the user typed them."""
    try:
        return (yield)
    except pytest.UsageError as exc:
        if not config.getoption("mcp_as_typed", None):
            raise
        respelled = [
            re.sub(r"--mcp-[a-z]+(?:-[a-z]+)*", lambda m: _typed(config, m.group(0)), str(arg))
            for arg in exc.args
        ]
        raise pytest.UsageError(*respelled) from None


def _active(config: pytest.Config) -> bool:
    return bool(
        config.getoption("mcp_client", None)
        or config.getoption("mcp_driver", None)
        or config.getoption("mcp_suite", False)
        or config.getoption("mcp_conformance_client", None)
    )


class _SnapshotLoggerDict(dict[str, Any]):
    """logging's table of loggers, whose `values()` is a copy taken in one step."""

    def values(self) -> Any:
        return list(dict.values(self))


def _snapshot_logger_iteration() -> None:
    """Scenario runs go on in threads of their own while pytest sets items up and tears
    them down, and a client library they run may create a logger at any time (a lazy
    import, a logger per session). pytest's log capture walks logging's table of loggers
    as each phase begins without the lock that logging itself takes, so one new logger
    ended a teardown with "dictionary changed size during iteration" and lost the next
    item's verdict. A copy made in one step (the GIL holds through it) cannot change
    under the walk."""
    manager = logging.root.manager
    if isinstance(manager.loggerDict, _SnapshotLoggerDict):
        return
    lock = getattr(logging, "_lock", None)  # logging's own, where this Python has it
    with lock if lock is not None else contextlib.nullcontext():
        manager.loggerDict = _SnapshotLoggerDict(manager.loggerDict)


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


_INACTIVE = (
    "mcp-testbench: conformance suite not collected; "
    "pass --mcp-client=MODULE:ATTR or --mcp-driver=CMD to run it"
)


def _check_filters(config: pytest.Config) -> None:
    """A bad --mcp-revision or --mcp-transport is a usage error even without a client:
    it is a typo that would otherwise only show on the run that has one."""
    revisions, transports = config.getoption("mcp_revision"), config.getoption("mcp_transport")
    if not revisions and not transports:
        return  # import nothing: the plugin stays light in every other pytest run
    from harness.judging import TRANSPORTS
    from harness.protocol import REVISIONS

    for revision in _split(revisions):
        if revision not in REVISIONS:
            raise pytest.UsageError(
                f"--mcp-revision {revision!r} is not a revision; use one of {', '.join(REVISIONS)}"
            )
    for transport in _split(transports):
        if transport not in TRANSPORTS:
            raise pytest.UsageError(
                f"--mcp-transport {transport!r} is not a transport; use one of {', '.join(TRANSPORTS)}"
            )


def _take_node_ids(config: pytest.Config) -> None:
    """`mcp-testbench::<run>[::<check>]` arguments name items of the suite, not files:
    take them out of the paths pytest collects (it would say "file not found") and keep
    them as a selection. pytest-xdist workers get the same arguments and do the same."""
    picked = [a for a in config.args if a == _SUITE or a.startswith(_SUITE + "::")]
    config.args[:] = [a for a in config.args if a not in picked]
    config.stash[_STASH_SELECT] = picked
    if picked and not _active(config):
        raise pytest.UsageError(
            f"{picked[0]!r} is an item of the conformance suite: "
            "add --mcp-client=MODULE:ATTR or --mcp-driver=CMD to run it"
        )


def pytest_report_header(config: pytest.Config) -> str | None:
    return None if _active(config) else _INACTIVE


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _RECORDING_MARKER_HELP)
    _check_filters(config)
    _take_node_ids(config)
    _configure_conformance(config)
    if not _active(config):
        return
    if config.getoption("mcp_client") and config.getoption("mcp_driver"):
        raise pytest.UsageError("give --mcp-client or --mcp-driver, not both")
    if config.getoption("mcp_timeout") <= 0:
        raise pytest.UsageError("--mcp-timeout must be a positive number of seconds")
    concurrency = config.getoption("mcp_concurrency")
    if concurrency is not None and concurrency < 1:
        raise pytest.UsageError("--mcp-concurrency must be 1 or more scenario runs at once")
    baseline_path = config.getoption("mcp_baseline")
    baseline = None
    # A conformance client's baseline is the runner's, on its check ids (_configure_conformance).
    if baseline_path and not config.getoption("mcp_conformance_client", None):
        from harness.reports import Baseline, BaselineError

        try:
            baseline = Baseline.load(Path(baseline_path))
        except BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None
    spec = config.getoption("mcp_client")
    if spec:
        config.stash[_STASH_FACTORY] = load_factory(spec)  # a bad MODULE:ATTR is a usage error now
    for report in config.getoption("mcp_report") or []:
        if Path(report).suffix not in (".json", ".md", ".html"):
            raise pytest.UsageError(
                f"--mcp-report {report!r}: the file name must end in .json, .md or .html"
            )
    driver = config.getoption("mcp_driver")
    if driver and not hasattr(config, "workerinput"):  # once, in the controller
        timeout = config.getoption("mcp_timeout")
        if _spawns_workers(config):
            # Beside the workers' start, which it held up before (a driver's start is
            # mostly its client library's imports): each worker reads the hello of its own
            # first process (`DriverPool.warm`), and the check ends before any scenario is
            # handed out (`pytest_collection`).
            config.stash[_STASH_CHECK] = _DriverCheck(driver, timeout)
        else:
            config.stash[_STASH_HELLO] = check_driver(driver, timeout)
    config.stash[_STASH_RUNS] = {}
    _snapshot_logger_iteration()
    if not hasattr(config, "workerinput"):
        # The controller (or a run without xdist) keeps the verdicts and writes the
        # reports. A pytest-xdist worker's verdicts reach the controller in its reports;
        # a worker that also wrote every report of its half and a summary nobody sees
        # spent seconds of the run's end on them.
        config.pluginmanager.register(_Recorder(config), "mcp-testbench-recorder")
    config.stash[_STASH_BASELINE] = baseline


def pytest_unconfigure(config: pytest.Config) -> None:
    if _STASH_RUNS in config.stash:  # the plugin was active: end the stdio mock pool
        from harness.running import stop_stdio_pool

        window = config.stash.get(_STASH_WINDOW, None)
        if window is not None:  # runs started ahead of an `-x` stop end before the pool
            window.close()
        config.stash.get(_STASH_RESTORE_ENV, lambda: None)()
        stop_stdio_pool()
        # Every run's transcript and operations, no longer needed: pytest's clean-up after
        # this hook collects garbage several times over, and each pass walks all of them.
        config.stash[_STASH_RUNS].clear()


# -- the client factory ----------------------------------------------------------------------------


def load_factory(spec: str) -> Callable[[], McpClient]:
    """`module:attr` to the factory it names, or a UsageError that says what failed and the fix.

    The module is imported as `python -m` (and so `mcp-testbench run`) imports: the
    working directory first on sys.path, so a client module beside the tests is found
    without installing it, whichever way pytest was started.
    """
    option = f"--mcp-client {spec!r}"
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise pytest.UsageError(f"{option}: write MODULE:ATTR, e.g. mypkg.testing:make_client")
    where = _working_directory_first()
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        import sys

        missing = exc.name or module_name
        parent, _, last = missing.rpartition(".")
        if not f"{module_name}.".startswith(f"{missing}."):  # a module that it imports
            raise pytest.UsageError(
                f"{option}: importing {module_name!r} failed: it imports {missing!r}, which is "
                f"not installed (ModuleNotFoundError at {_raised_at(exc)}); fix: install "
                f"{missing!r} into this environment ({sys.executable})"
            ) from None
        if parent in sys.modules:  # the package is there, the module in it is not
            found_in = getattr(sys.modules[parent], "__path__", None) or [parent]
            raise pytest.UsageError(
                f"{option}: cannot import {module_name!r}: ModuleNotFoundError: the package "
                f"{parent!r} ({', '.join(found_in)}) has no module {last!r}; "
                "fix: check the module's name"
            ) from None
        top = module_name.split(".")[0]
        raise pytest.UsageError(
            f"{option}: cannot import {module_name!r}: ModuleNotFoundError: no module "
            f"{missing!r} in the working directory ({where}) nor among the packages of "
            f"{sys.executable}; fix: run from the folder that holds {top}/ or {top}.py, "
            "or install the package that provides it into this environment"
        ) from None
    except Exception as exc:  # an error inside the module (SyntaxError, ImportError, ...)
        raise pytest.UsageError(
            f"{option}: importing {module_name!r} raised {type(exc).__name__} at "
            f"{_raised_at(exc)}: {exc}; fix: correct the module (python -c 'import "
            f"{module_name}' shows the whole traceback)"
        ) from None
    factory = module
    for part in attr.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            import difflib

            names = sorted(
                n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))
            )
            near = difflib.get_close_matches(attr, names, n=1)
            example = f", e.g. {module_name}:{near[0]}" if near else ""
            raise pytest.UsageError(
                f"{option}: {module_name!r} has no attribute {attr!r} (AttributeError; "
                f"{module_name!r} is {getattr(module, '__file__', None) or 'a namespace package'}"
                f", its callables: {', '.join(names) or 'none'}); fix: name a factory it "
                f"defines{example}"
            ) from None
    if not callable(factory):
        raise pytest.UsageError(f"{option}: {attr!r} is not callable; name a factory or class")
    return factory


def _working_directory_first() -> str:
    """Put the working directory first on sys.path, as `python -m` does, unless it is on
    it already (as '' or its path); returns it."""
    import sys

    here = os.getcwd()
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):
        sys.path.insert(0, here)
    return here


def _raised_at(exc: BaseException) -> str:
    """FILE:LINE of the line that raised `exc` (a SyntaxError's own place), or "its import"."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    import traceback

    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith("<frozen ")  # importlib's own machinery
    ]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "its import"


def driver_argv(driver: str) -> list[str]:
    """The driver command as argv, or a UsageError that says what to fix."""
    try:
        argv = shlex.split(driver)
    except ValueError as exc:
        raise pytest.UsageError(f"--mcp-driver {driver!r}: {exc}") from None
    if not argv:
        raise pytest.UsageError("--mcp-driver is empty: give the command that starts the driver")
    return argv


def _hello_bound(timeout: float) -> float:
    """Seconds a driver has for its hello before any scenario (the check's, and a
    worker's first process's): the operation time-out, but never under 5 s, as a
    driver's start is mostly its client library's imports, and that floor times how
    loaded the machine is (the one-minute load average per core, at least 1): a JVM or a
    Node driver starting on a busy CI runner is slow, not broken. A driver that never says
    hello is still one clear error, only later."""
    from harness.running import load_factor

    return max(timeout, 5.0 * load_factor())


def check_driver(driver: str, timeout: float) -> dict[str, Any]:
    """Start the driver once, before any scenario, and read its hello: a driver that
    cannot start, exits, prints garbage or never says hello is one clear error in
    seconds, not a BLOCKED item per scenario after a wait each. Returns the hello."""
    import anyio

    from harness.clients import ClientError, DriverClient

    client = DriverClient(driver_argv(driver), hello_timeout=_hello_bound(timeout))

    async def start() -> None:
        try:
            await client.prepare()
        finally:
            # close() ends the process itself (stdin, SIGTERM, SIGKILL), each step bounded.
            with anyio.move_on_after(30, shield=True):
                await client.close()

    try:
        anyio.run(start)
    except ClientError as exc:
        stderr = "\n".join(f"    {line}" for line in client.diagnostics.splitlines()[-15:])
        raise pytest.UsageError(
            f"--mcp-driver {driver!r} does not work: {exc.message}.\n"
            + (f"  its stderr (last lines):\n{stderr}\n" if stderr else "")
            + "  A driver prints its hello line first (docs/driver-protocol.md); run the "
            "command by hand to see what it does."
        ) from None
    return client.hello


def _spawns_workers(config: pytest.Config) -> bool:
    """Whether pytest-xdist starts workers for this session (its own condition)."""
    return config.getoption("dist", "no") != "no" and not config.option.collectonly


class _DriverCheck:
    """`check_driver` in a thread of its own, started at once; `result()` ends it."""

    def __init__(self, driver: str, timeout: float) -> None:
        self._hello: dict[str, Any] | None = None
        self._error: BaseException | None = None
        # check_driver's own bounds: the hello's wait, then a close of at most 30 s.
        self._bound = _hello_bound(timeout) + 30.0 + 10.0
        self._thread = threading.Thread(
            target=self._run, args=(driver, timeout), name="mcp-testbench driver check"
        )
        self._thread.start()

    def _run(self, driver: str, timeout: float) -> None:
        try:
            self._hello = check_driver(driver, timeout)
        except BaseException as exc:  # raised again by `result`, in the session's thread
            self._error = exc

    def result(self) -> dict[str, Any]:
        """The driver's hello, or what the check raised (a UsageError that says what is
        wrong with the driver, or any other error as it was)."""
        self._thread.join(self._bound)
        if self._thread.is_alive():
            raise pytest.UsageError(
                f"--mcp-driver: the check of the driver did not end within {self._bound:g} s"
            )
        if self._error is not None:
            raise self._error
        assert self._hello is not None
        return self._hello


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """The controller of an xdist run: the driver check that ran beside the workers' start
    ends here, before any scenario is handed out, so that a broken driver still ends the
    run with its one clear error (the workers, shut down, end what they started)."""
    check = session.config.stash.get(_STASH_CHECK, None)
    if check is not None:
        session.config.stash[_STASH_HELLO] = check.result()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Warm the driver processes this process will need first (`DriverPool.warm`): as
    many as its window keeps working at once, fewer for a smaller share of runs."""
    config = session.config
    if not _active(config) or config.option.collectonly or not config.getoption("mcp_driver"):
        return
    runs = {item.parent for item in session.items if isinstance(item, McpCheckItem)}
    worker_input = getattr(config, "workerinput", None)
    workers = int(worker_input["workercount"]) if worker_input is not None else 1
    share = -(-len(runs) // workers)
    hello_bound = _hello_bound(config.getoption("mcp_timeout"))
    _driver_pool(config).warm(min(_concurrent_runs(config), share), hello_bound=hello_bound)


def _driver_pool(config: pytest.Config) -> DriverPool:
    """This process's driver pool, made on first use; it ends what it kept with the session."""
    from harness.clients import DriverPool

    pool = config.stash.get(_STASH_POOL, None)
    if pool is None:
        # A driver that offers reuse (1.1) keeps its process across scenarios, and one
        # that offers sessions runs several at once in it; any other gets a process per
        # scenario. Without xdist the check saw the hello; an xdist worker learns it from
        # its first process (`DriverPool.warm`). Either way, it knows how many
        # scenarios a process holds before it starts a second process.
        argv = driver_argv(config.getoption("mcp_driver"))
        pool = config.stash[_STASH_POOL] = DriverPool(
            argv, hello=config.stash.get(_STASH_HELLO, None)
        )
        config.add_cleanup(pool.close)
    return pool


@pytest.fixture(scope="session")
def mcp_client_factory(pytestconfig: pytest.Config) -> Callable[[], McpClient]:
    """What creates the client under test: one fresh client per scenario run.

    Override it in a conftest.py (and run `pytest --mcp-suite`) to build the client in
    Python; otherwise it comes from --mcp-client or --mcp-driver.
    """
    if _STASH_FACTORY in pytestconfig.stash:
        return pytestconfig.stash[_STASH_FACTORY]
    if pytestconfig.getoption("mcp_driver"):
        return _driver_pool(pytestconfig).client
    raise pytest.UsageError(
        "no client to test: pass --mcp-client=MODULE:ATTR or --mcp-driver=CMD, "
        "or override the mcp_client_factory fixture in a conftest.py"
    )


# -- collection ------------------------------------------------------------------------------


class McpSuite(pytest.Collector):
    """The whole conformance suite, under the session."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        if self.config.getoption("mcp_conformance_client", None):
            yield from _conformance_runs(self)  # the official client scenarios instead
            return
        for scenario, revision, transport, error in _planned_runs(self.config):
            if error is not None:
                # One broken script costs its own scenario, not the whole suite.
                yield McpBrokenScenario.from_parent(self, name=scenario.id, error=error)
                continue
            yield McpRun.from_parent(
                self,
                name=f"{scenario.id}-{revision}-{transport}",
                scenario=scenario,
                revision=revision,
                transport=transport,
            )


def _planned_runs(config: pytest.Config) -> Iterator[tuple[Scenario, str, str, str | None]]:
    """The (scenario, revision, transport) runs the options select, and a broken
    script's error: what collection makes nodes of, and what the controller of an xdist
    run (which collects nothing itself) matches the baseline against."""
    from harness.suite import SCENARIOS
    from mock_servers import ScriptError

    revisions = set(_split(config.getoption("mcp_revision")))
    transports = set(_split(config.getoption("mcp_transport")))
    for scenario in SCENARIOS:
        try:
            matrix = list(scenario.matrix())
        except ScriptError as exc:
            yield scenario, "", "", str(exc)
            continue
        for revision, transport in matrix:
            if (revisions and revision not in revisions) or (
                transports and transport not in transports
            ):
                continue
            yield scenario, revision, transport, None


def _planned_items(config: pytest.Config) -> Iterator[tuple[str, str]]:
    """(node id, check id) of every item collection makes, without collecting."""
    from harness.judging import CATALOGUE

    for scenario, revision, transport, error in _planned_runs(config):
        if error is not None:
            continue
        for check_id in scenario.checks:
            if CATALOGUE[check_id].applies(revision, transport):
                yield f"mcp-testbench::{scenario.id}-{revision}-{transport}::{check_id}", check_id


class McpBrokenScenario(pytest.Item):
    """A scenario whose script cannot be loaded: a failure naming the script's problem."""

    def __init__(self, *, error: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise McpCheckFailed(
            f"the scenario's script is broken (a bug in mcp-testbench): {self.error}"
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return ("mcp-testbench", None, self.nodeid)


class McpRun(pytest.Collector):
    """One scenario at one revision over one transport: its checks are the items."""

    def __init__(self, *, scenario: Scenario, revision: str, transport: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.revision = revision
        self.transport = transport
        self.key = (scenario.id, revision, transport)

    def collect(self) -> Iterator[pytest.Item]:
        from harness.judging import CATALOGUE

        for check_id in self.scenario.checks:
            check = CATALOGUE[check_id]
            if check.applies(self.revision, self.transport):
                item = McpCheckItem.from_parent(self, name=check_id, callobj=_run_check)
                item.mcp_check = check
                yield item


class McpCheckFailed(Exception):
    """A check's FAIL verdict (or a stale baseline entry), reported without a traceback."""


class _McpItem(pytest.Function):
    """An item of the suite: its failure is the verdict's explanation, its headline its id."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, McpCheckFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        # The domain is the headline of a failure. pytest's verbose line turns each "." of
        # a domain that ends the node id into "::" (for Class.method), which would print
        # `...::tools::call-result`, an id that selects nothing; a trailing space keeps
        # the printed id the one that re-runs the item.
        return ("mcp-testbench", None, f"{self.nodeid} ")


class McpCheckItem(_McpItem):
    mcp_check: Check
    mcp_verdict: Verdict | None = None
    mcp_baselined: str | None = None
    """The baseline's reason, for an item the baseline lists."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not _active(config):
        return
    suite = McpSuite.from_parent(session, name=_SUITE, nodeid=_SUITE)
    added = _selected(config, list(session.genitems(suite)))
    baseline = config.stash[_STASH_BASELINE]
    if baseline is not None:
        _mark_baselined(baseline, added)
    items.extend(added)


def _selected(config: pytest.Config, items: list[pytest.Item]) -> list[pytest.Item]:
    """The items that `mcp-testbench::...` arguments name (all without any): an item id
    selects that check, a run id (`mcp-testbench::<scenario>-<revision>-<transport>`) its
    checks. Only the runs of selected items are executed, so one check costs one scenario."""
    picked = config.stash.get(_STASH_SELECT, [])
    if not picked:
        return items
    chosen = [
        item
        for item in items
        if any(p == _SUITE or item.nodeid == p or item.nodeid.startswith(p + "::") for p in picked)
    ]
    for p in picked:
        if p != _SUITE and not any(i.nodeid == p or i.nodeid.startswith(p + "::") for i in chosen):
            raise pytest.UsageError(
                f"{p!r} names no item of the suite with these options; "
                "list the items with --collect-only -q"
            )
    return chosen


def _mark_baselined(baseline: Baseline, items: list[pytest.Item]) -> None:
    """Listed items become xfails, their reasons kept for the reports. The entries that
    match nothing are judged by the controller at the end (`_Recorder`)."""
    for item in items:
        key = baseline.key_for(item.nodeid, item.name)
        if key is None or not isinstance(item, McpCheckItem):
            continue
        item.mcp_baselined = baseline.entries[key]
        item.add_marker(
            pytest.mark.xfail(
                reason=f"baseline: {item.mcp_baselined}",
                strict=baseline.strict(key),
                raises=Exception,
            )
        )


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under pytest-xdist, the items of one scenario run go to one worker (as with
    `--dist loadscope`), without any flag: a run is one mock server and one client
    session, and its items are judged from it, so spreading them over workers would run
    the scenario once per worker. When a process carries out several runs at once
    (`_concurrent_runs`), the unit is up to `_UNIT_RUNS` consecutive runs (`_run_groups`),
    and each of the first workers gets its whole share of units up front (`_share_of`), so
    that its window can go on with later runs while an item waits for a run that waits out
    a bound. Only xdist's default distribution is replaced; an explicit other `--dist` mode
    is left as asked (and then each process carries out one run at a time)."""
    if not _active(config) or config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class RunGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """LoadScope whose scope is a run's group (the same groups as the workers make),
        and whose first workers each get their whole share at once. What no live worker
        owns (other tests, the work of a worker that crashed) goes out unit by unit."""

        groups: dict[str, int] | None = None

        def _split_scope(self, nodeid: str) -> str:
            scope = str(super()._split_scope(nodeid))
            if self.groups is None:
                collection: list[str] = next(iter(self.registered_collections.values()), [])
                run_ids = list(dict.fromkeys(_run_ids(collection)))
                workers = len(self.registered_collections)
                self.groups = _run_groups(run_ids, _unit_size(len(run_ids), workers))
            group = self.groups.get(scope)
            return scope if group is None else f"{_GROUP_SCOPE}{group}"

        def _owner(self, scope: str, workers: int) -> int | None:
            if not scope.startswith(_GROUP_SCOPE):
                return None
            return _share_of(int(scope.removeprefix(_GROUP_SCOPE)), workers)

        def _assign_work_unit(self, node: Any) -> None:
            workers = int(node.workerinput["workercount"])
            position = node.workerinput.get(_SHARE_INPUT)
            live = {n.workerinput.get(_SHARE_INPUT) for n in self.nodes} - {None}
            owners = {scope: self._owner(scope, workers) for scope in self.workqueue}
            mine = [s for s, owner in owners.items() if position is not None and owner == position]
            if not mine:  # one unit that no live worker owns
                mine = [scope for scope, owner in owners.items() if owner not in live][:1]
            if not mine:
                return
            collection = self.registered_collections[node]
            indexes = []
            for scope in mine:
                work_unit = self.workqueue.pop(scope)
                self.assigned_work.setdefault(node, {})[scope] = work_unit
                indexes += [collection.index(i) for i, done in work_unit.items() if not done]
            node.send_runtest_some(indexes)

    return (
        RunGroupScheduling(config, log)
        if _units_in_use(config)
        else LoadScopeScheduling(config, log)
    )


def _concurrent_runs(config: pytest.Config) -> int:
    """How many scenario runs one pytest process keeps working at once: --mcp-concurrency,
    else for a conformance client the machine's cores (shared among xdist's workers), at
    least _CONCURRENT_RUNS; _CONCURRENT_RUNS for a driver (each run has a driver process,
    or a session in one, of its own) and for a factory that declares
    `concurrent_instances = True` (the reference client), else 1: an unknown client may
    keep state that two sessions in one process would share."""
    asked = config.getoption("mcp_concurrency", None)
    if asked is not None:
        return int(asked)
    if config.getoption("mcp_conformance_client", None):
        # Each run is a client process that spends most of its time starting (a Python
        # SDK client: about 0.7 s of CPU importing the SDK): one per core keeps the machine
        # busy without the contention of starting them all at once. xdist's workers share.
        from harness.running import usable_cores

        worker_input = getattr(config, "workerinput", None)
        workers = int(worker_input["workercount"]) if worker_input is not None else 1
        return max(_CONCURRENT_RUNS, usable_cores() // workers)
    if config.getoption("mcp_driver", None):
        return _CONCURRENT_RUNS  # each run has a process of its own
    factory = config.stash.get(_STASH_FACTORY, None)
    return _CONCURRENT_RUNS if getattr(factory, "concurrent_instances", False) is True else 1


def _units_in_use(config: pytest.Config) -> bool:
    """Whether the plugin's xdist scheduler hands out units of several runs: under xdist's
    default distribution, for a client whose runs may overlap."""
    return config.getvalue("dist") == "load" and _concurrent_runs(config) > 1


def _unit_size(runs: int, workers: int) -> int:
    """Runs per unit of xdist work: `_UNIT_RUNS`, fewer when a selection is small, so that
    each worker still gets about two units (ten runs on two workers: units of three)."""
    return max(1, min(_UNIT_RUNS, -(-runs // (2 * max(1, workers)))))


def _run_groups(run_ids: Iterable[str], size: int) -> dict[str, int]:
    """Each run's group: consecutive runs in collection order, `size` to a group (runs of
    one scenario are neighbours: when a client makes one wait out a bound, it often makes
    its neighbours do the same, and their waits overlap in the window)."""
    groups: dict[str, int] = {}
    for run_id in run_ids:
        groups.setdefault(run_id, len(groups) // size)
    return groups


def _share_of(group: int, workers: int) -> int:
    """The position of the worker that carries out a group of runs: the groups are dealt
    out in turn, so that each worker gets a mix of the suite (a scenario's runs cost about
    the same, and scenarios differ)."""
    return group % workers


def _run_ids(nodeids: Iterable[str]) -> Iterator[str]:
    """The run ids (`mcp-testbench::<run>`) of the suite's check items, in order."""
    for nodeid in nodeids:
        if nodeid.startswith(_SUITE + "::") and nodeid.count("::") == 2:
            yield nodeid.rsplit("::", 1)[0]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Tells each pytest-xdist worker whether the plugin's scheduler hands out units of
    several runs (`_unit_size`, which both sides work out from the same collection and
    worker count; if not, a unit is one run) and, to each of the first `workercount`
    workers, its position: the share of units it gets up front (`_share_of`). A worker
    started later, in place of one that crashed, has no share. A worker cannot see the
    controller's `--dist`: xdist sets the worker's own to "no"."""
    if not _active(node.config):
        return
    units = _units_in_use(node.config)
    node.workerinput[_UNIT_INPUT] = units
    positions = node.config.stash.setdefault(_STASH_POSITIONS, [])
    if units and len(positions) < int(node.workerinput["workercount"]):
        node.workerinput[_SHARE_INPUT] = len(positions)
        positions.append(node.workerinput["workerid"])


def _group_of(run_node: McpRun) -> list[McpRun]:
    """The runs handed to the window together with `run_node` (itself included): under
    pytest-xdist, the worker's whole share if the run is in it (`pytest_configure_node`),
    else its unit of work; every run of the session without xdist. Worker and scheduler
    make the same units: both number the collected runs. The window starts them in this
    order: `_start_rank`."""
    config = run_node.config
    worker_input = getattr(config, "workerinput", None)
    if _concurrent_runs(config) == 1:
        return [run_node]
    by_run = config.stash.get(_STASH_GROUPS, None)
    if by_run is None:
        nodes: dict[str, McpRun] = {}
        for item in run_node.session.items:
            if isinstance(item, McpCheckItem) and isinstance(item.parent, McpRun):
                nodes.setdefault(item.parent.nodeid, item.parent)
        position, workers = None, 1
        if worker_input is None:
            size = len(nodes)  # no xdist: one window for the whole session
        elif worker_input.get(_UNIT_INPUT):
            workers = int(worker_input["workercount"])
            size = _unit_size(len(nodes), workers)
            position = worker_input.get(_SHARE_INPUT)
        else:
            size = 1
        numbers = _run_groups(nodes, size)
        # A run of the worker's share goes with the whole share, any other with its unit.
        group: dict[str, int | str] = {
            n: "share" if position is not None and _share_of(g, workers) == position else g
            for n, g in numbers.items()
        }
        members: dict[int | str, list[McpRun]] = {}
        for nodeid, node in sorted(nodes.items(), key=_start_rank(nodes.values())):
            members.setdefault(group[nodeid], []).append(node)
        by_run = config.stash[_STASH_GROUPS] = {n: members[group[n]] for n in nodes}
    return by_run.get(run_node.nodeid, [run_node])


def _start_rank(runs: Iterable[McpRun]) -> Callable[[tuple[str, McpRun]], tuple[bool, int]]:
    """The order in which a group's runs start. Runs of scenarios that may wait on the
    client up to the time-out go first, so their waits overlap the rest; among them, each
    scenario's first run, then each one's second, and so on: a client that never does what
    a scenario waits for keeps every run of it waiting, and in collection order the waits
    of the scenarios collected last would start only after all the runs of the first."""
    rank: dict[str, int] = {}
    seen: dict[str, int] = {}
    for run in runs:
        if run.scenario.waits_on_the_client:
            rank[run.nodeid] = seen.get(run.scenario.id, 0)
            seen[run.scenario.id] = rank[run.nodeid] + 1
    return lambda item: (item[0] not in rank, rank.get(item[0], 0))


def _window(config: pytest.Config) -> RunWindow[ScenarioRun]:
    """This process's run window, made on first use; `pytest_unconfigure` closes it."""
    from harness.running import RunWindow

    window = config.stash.get(_STASH_WINDOW, None)
    if window is None:
        width = _concurrent_runs(config)
        # One client at a time stays one at a time: no run starts beside a stale one.
        cap, stale = (width, float("inf")) if width == 1 else (2 * width, _STALE_RUN)
        window = config.stash[_STASH_WINDOW] = RunWindow(width, cap=cap, stale=stale)
        if width > 1:
            config.stash[_STASH_RESTORE_ENV] = _keep_current_test_variable()
    return window


_CURRENT_TEST = "PYTEST_CURRENT_TEST"


def _keep_current_test_variable() -> Callable[[], None]:
    """Stop pytest from deleting PYTEST_CURRENT_TEST after each item while runs go on in
    other threads; returns what undoes it (then the variable is deleted, as pytest does).

    Why: a client reading its environment (httpx looks for proxies in every variable on
    each client it makes) lists the names first, then reads each; a name deleted between
    the two raises KeyError in the client, and its run was blocked by a failed connect
    that was the harness's doing (seen: 2 of 299 SDK runs in one of ten runs). Setting the
    variable is harmless (the name stays); only its deletion races. pytest has no switch
    for this, so its module function is wrapped; if pytest renames it, nothing is wrapped
    and the race is back, which a test guards."""

    from _pytest import runner

    original = getattr(runner, "_update_current_test_var", None)
    if original is None:
        return lambda: None

    def update(item: pytest.Item, when: Any) -> None:
        if when:
            original(item, when)  # between items the last stage's value stays

    runner._update_current_test_var = update

    def restore() -> None:
        runner._update_current_test_var = original
        os.environ.pop(_CURRENT_TEST, None)

    return restore


# -- running one check ------------------------------------------------------------------------


def _run_check(mcp_client_factory: Callable[[], McpClient], request: pytest.FixtureRequest) -> None:
    from harness.judging import judge
    from harness.running import execute

    item = request.node
    assert isinstance(item, McpCheckItem)
    run_node = item.parent
    assert isinstance(run_node, McpRun)
    config = item.config
    runs = config.stash[_STASH_RUNS]
    key = run_node.key
    if key not in runs:
        timeout = config.getoption("mcp_timeout")
        window = _window(config)

        def carry_out(node: McpRun) -> Callable[[], ScenarioRun]:
            return lambda: execute(
                node.scenario,
                node.revision,
                node.transport,
                mcp_client_factory,
                op_timeout=timeout,
                waiting=lambda waiting: window.waiting(node.key, waiting),
            )

        # Each run is bounded in time on its own (execute never raises, never hangs), in a
        # thread of its own, on an event loop of its own.
        futures = {
            node.key: window.submit(node.key, carry_out(node)) for node in _group_of(run_node)
        }
        runs[key] = futures[key].result()
    run = runs[key]
    verdict = judge(item.mcp_check, run)
    item.mcp_verdict = verdict
    _conclude(item, run, verdict, _result(item, run, verdict))


def _conclude(
    item: McpCheckItem, run: ScenarioRun, verdict: Verdict, result: dict[str, Any]
) -> None:
    """The item's outcome: its result recorded, then a pass, a failure or a skip."""
    from harness.judging import Status

    # The result travels as JSON text (xdist workers send it to the controller; JUnit
    # shows it as is), and its parts as JUnit properties of their own for CI tools.
    item.user_properties.append((_RESULT_PROPERTY, json.dumps(result, ensure_ascii=False)))
    item.user_properties += [
        ("mcp_status", verdict.status.value),
        ("mcp_kind", verdict.kind),
        ("mcp_reason", verdict.reason),
        ("mcp_requirements", ", ".join(item.mcp_check.requirements)),
        ("mcp_spec", result["spec"]),
    ]
    if verdict.root is not None:
        item.user_properties.append(("mcp_root", verdict.root))
    if item.mcp_baselined is not None:
        item.user_properties.append(("mcp_baselined", item.mcp_baselined))
    if verdict.status.failing:
        raise McpCheckFailed(_explain(item, run, verdict))
    if verdict.status is Status.SKIP:
        pytest.skip(verdict.reason)
    if verdict.status is Status.NOT_APPLICABLE:
        pytest.skip(f"N/A: {verdict.reason}")


def _result(item: McpCheckItem, run: ScenarioRun, verdict: Verdict) -> dict[str, Any]:
    check = item.mcp_check
    result = {
        "id": item.nodeid,
        "check": check.id,
        "requirements": list(check.requirements),
        "level": _level(check, run, verdict),
        "clauses": _clauses(check, run, verdict),
        "description": check.description,
        "spec": check.spec_url(run.revision),
        "scenario": run.scenario.id,
        "revision": run.revision,
        "transport": run.transport,
        "client": run.client_name,
        **verdict.to_json(),
    }
    if item.mcp_baselined is not None:
        result["baselined"] = item.mcp_baselined
    # Plain JSON only: it travels from pytest-xdist workers and into the JSON report.
    return json.loads(json.dumps(result, default=repr))  # type: ignore[no-any-return]


def _level(check: Check, run: ScenarioRun, verdict: Verdict) -> str:
    """The spec's word for what the verdict is about: its branch's, for a violation."""
    if verdict.kind == "violation":
        return check.level_at(run.revision, verdict.clause)
    return check.headline_level(run.revision)


def _clauses(check: Check, run: ScenarioRun, verdict: Verdict) -> list[dict[str, str]]:
    """Where the spec says it, at the run's revision: the violated branch's clauses, or
    every branch's."""
    from harness.judging import Clause

    branches = [verdict.clause] if verdict.kind == "violation" else check.branches
    grounds = dict.fromkeys(g for b in branches for g in check.grounds_at(run.revision, b))
    return [
        {"page": g.page, "phrase": g.phrase, "keyword": g.keyword}
        if isinstance(g, Clause)
        else {"silent": g.why}
        for g in grounds
    ]


def _headline(result: dict[str, Any]) -> str:
    """An item's verdict, where, and a BLOCKED one's root: the first line of its report."""
    return (
        f"{result['status']} {result['check']} ({result['level']} "
        f"{', '.join(result['requirements'])}) "
        f"in {result['scenario']} at {result['revision']} over {result['transport']}"
        + (f", blocked by {result['root']}" if result.get("root") else "")
    )


def _explain(item: McpCheckItem, run: ScenarioRun, verdict: Verdict) -> str:
    """The item's report in pytest's failures section and JUnit, at most 100 columns wide
    (a long line goes on under a hanging indent, never cut; a longer link stays whole)."""
    from harness.reports import format_evidence, wrap

    check = item.mcp_check
    lines = [
        _headline(_result(item, run, verdict)),
        f"  requirement: {check.description}",
        f"  spec: {check.spec_url(run.revision)}",
        f"  why: {verdict.reason}",
    ]
    if verdict.kind == "violation":
        lines += [
            f"  spec's word: {c['keyword']} ({c['page']}: '{c['phrase']}')"
            for c in _clauses(check, run, verdict)
            if "keyword" in c
        ]
    if verdict.root is not None:
        lines.append(f"  root cause: {verdict.root} (fix that first; this check was not judged)")
    if verdict.evidence:
        lines.append("  evidence:")
        lines += [f"    {line}" for line in format_evidence(verdict.evidence)]
    if run.harness_error:
        lines.append(f"  run: {run.harness_error}")
    if run.diagnostics:
        lines.append("  client stderr (last lines):")
        lines += [f"    {line}" for line in run.diagnostics.splitlines()[-20:]]
    return "\n".join(part for line in lines for part in wrap(line, break_long_words=False))


def _reported_result(report: pytest.TestReport) -> dict[str, Any] | None:
    for name, value in report.user_properties:
        if name == _RESULT_PROPERTY and isinstance(value, str):
            result: dict[str, Any] = json.loads(value)
            return result
    return None


def _reported_status(report: pytest.TestReport) -> str | None:
    result = _reported_result(report)
    return None if result is None else str(result.get("status"))


# Statuses that pytest has no word for get their own category, letter and word: they
# show in the progress line and in the closing counts ("3 blocked, 12 not applicable").
_CATEGORIES = {
    "WARN": ("warned", "W", ("WARN", {"yellow": True})),
    "NOTE": ("noted", "i", ("NOTE", {"cyan": True})),
    "BLOCKED": ("blocked", "B", ("BLOCKED", {"red": True})),
    "N/A": ("not applicable", "n", ("N/A", {"yellow": True})),
}


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, Any] | None:
    if report.when == "call" and not hasattr(report, "wasxfail"):  # a baselined item is xfail
        return _CATEGORIES.get(_reported_status(report) or _official_status(report) or "")
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call":
        item.stash[_STASH_CALL_FAILED] = report.failed
    verdict = item.mcp_verdict if isinstance(item, McpCheckItem) else None
    if verdict is not None and call.when == "call" and verdict.status.value in ("WARN", "NOTE"):
        report.sections.append((f"mcp-testbench {verdict.status.value}", verdict.reason))
    return report


def _junit_verdict_line(config: pytest.Config, report: pytest.TestReport, result: Any) -> None:
    """A `system-out` line with the verdict and its reason in the item's JUnit testcase,
    which CI systems display next to it: WARN, BLOCKED, N/A and SKIP are otherwise a
    pass, a failure or a skip there without their meaning. Uses pytest's junitxml object
    (no public API adds an element); without --junitxml it does nothing."""
    if result.get("status") == "PASS":
        return
    from xml.etree import ElementTree

    from _pytest.junitxml import xml_key

    log_xml = config.stash.get(xml_key, None)
    if log_xml is None:
        return

    line = f"mcp-testbench {result['status']}: {result['reason']}"
    if result.get("root"):
        line += f" (root cause: {result['root']})"
    element = ElementTree.Element("system-out")
    element.text = f"{line}\nrequirement: {', '.join(result['requirements'])} {result['spec']}\n"
    log_xml.node_reporter(report).append(element)


class _Recorder:
    """Collects every verdict (also from pytest-xdist workers) and writes the reports."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.results: list[dict[str, Any]] = []
        self.unmatched: list[str] = []
        self.stale: list[str] = []
        self.now_passing: list[tuple[str, int, int]] = []
        self.interrupted = False
        self.started = time.monotonic()
        self.waited: dict[str, Any] = {}  # pytest-xdist workers' `_waited_out`, added up
        # Note a SIGINT before pytest sees it (as KeyboardInterrupt), so that the reports
        # say the run was interrupted even where pytest ends with another status. Only the
        # main thread may, and only over Python's own handler (an ignored SIGINT stays so).
        self._previous_sigint: Any = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):
                self._previous_sigint = previous
                signal.signal(signal.SIGINT, self._note_interrupt)

    def _note_interrupt(self, signum: int, frame: Any) -> Any:
        self.interrupted = True
        return self._previous_sigint(signum, frame)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # An in-process session (pytester) must not leave its handler behind.
        if (
            self._previous_sigint is not None
            and signal.getsignal(signal.SIGINT) == self._note_interrupt
        ):
            signal.signal(signal.SIGINT, self._previous_sigint)

    @pytest.hookimpl(trylast=True)  # after junitxml has opened the item's testcase
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Results travel in user_properties so that the controller of an xdist run,
        # which executes no item itself, still sees every verdict.
        if report.when != "call":
            return
        result = _reported_result(report)
        if result is not None:
            self.results.append(result)
            _junit_verdict_line(self.config, report, result)

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        from harness.reports import INTERRUPTED_NOTE, terminal_summary, write_reports

        if exitstatus == pytest.ExitCode.USAGE_ERROR:
            return  # no run took place (a broken driver, say): the error says what to fix
        interrupted = self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED
        self._blocked_details(terminalreporter)
        for path in self.config.getoption("mcp_report") or []:
            write_reports(self.results, Path(path), interrupted=interrupted)
            terminalreporter.write_line(f"mcp-testbench: wrote {path}")
        lines = terminal_summary(self.results)
        roots = "mcp-testbench: root causes (fix these first):"
        terminalreporter.write_sep("-", "mcp-testbench summary")
        for line in lines:
            terminalreporter.write_line(line, red=line == roots)
        if interrupted:
            terminalreporter.write_line(f"mcp-testbench: {INTERRUPTED_NOTE}", red=True)
        for line in self._slow_run_lines():
            terminalreporter.write_line(line, yellow=True)
        self._baseline_summary(terminalreporter)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        self.started = time.monotonic()  # the session's time, for the slow-run lines

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A pytest-xdist worker is done: add up what its runs spent waiting out bounds."""
        output = getattr(node, "workeroutput", None) or {}
        self.waited = _add_waited(self.waited, output.get(_WAITED_OUTPUT) or {})

    def _slow_run_lines(self) -> list[str]:
        """Why a run was slow, when the client made it so: at most two lines, each saying
        how long, why, and the setting that helps (wrapped at 100 columns)."""
        config = self.config
        runs = config.stash.get(_STASH_RUNS, {})
        waited = _add_waited(self.waited, _waited_out(runs.values()) if runs else {})
        took = time.monotonic() - self.started
        lines = []
        width = _concurrent_runs(config)
        asked = config.getoption("mcp_concurrency", None)
        concurrency = _typed(config, "--mcp-concurrency")
        seconds = float(waited.get("seconds", 0.0))
        # Much of the runs' own time (the session's also holds pytest's, and xdist's start).
        if seconds >= 1.0 and seconds >= waited.get("took", 0.0) / 3:
            if waited["unanswering"]:
                methods = sorted(waited["unanswered"], key=lambda m: (-waited["unanswered"][m], m))
                shown = ", ".join(methods[:3]) + (", ..." if len(methods) > 3 else "")
                some = waited["unanswering"] < waited["waiting"]
                why = f"the client left the server's requests unanswered ({shown})" + (
                    f" in {waited['unanswering']} of them" if some else ""
                )
            else:
                label, (_, times) = max(waited["why"].items(), key=lambda kv: kv[1][0])
                why = f"mostly for {label} ({times} times), which never came"
            overlap = (
                f"; {concurrency} above 1 lets such runs overlap"
                if width == 1 and asked is not None
                else ""
            )
            lines.append(
                f"mcp-testbench: slow run: {_duration(seconds)} of waiting out bounds "
                f"({_typed(config, '--mcp-timeout')} {config.getoption('mcp_timeout'):g} s) in "
                f"{waited['waiting']} of {waited['runs']} runs, of a {_duration(took)} session: "
                f"{why}{overlap}"
            )
        if width == 1 and asked is None and waited.get("runs", 0) > 1:
            factory = config.getoption("mcp_client", None)
            lines.append(
                f"mcp-testbench: one run at a time: {factory} does not declare "
                f"`concurrent_instances = True`; declare it (or pass {concurrency}=2) if its "
                "clients can work side by side in one process"
                if factory
                else "mcp-testbench: one run at a time, as for any client of the "
                f"mcp_client_factory fixture: pass {concurrency}=2 if its clients can work "
                "side by side in one process"
            )
        return [line for text in lines for line in _wrap(text)]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The controller judges the baseline's entries as a whole: under pytest-xdist it
        collects nothing, so this runs on the planned items and the recorded results. A
        stale entry fails the run, and the terminal summary (which comes after) says why."""
        baseline = self.config.stash[_STASH_BASELINE]
        if baseline is None or hasattr(self.config, "workerinput"):
            return
        _, self.unmatched = baseline.match(_planned_items(self.config))
        self.stale = baseline.stale_entries(self.results)
        self.now_passing = baseline.now_passing(self.results)
        if (self.unmatched or self.stale) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _baseline_summary(self, terminalreporter: Any) -> None:
        baseline = self.config.stash[_STASH_BASELINE]
        if baseline is None:
            return
        from harness.reports import baselined_groups

        groups = baselined_groups(self.results)
        if groups:
            terminalreporter.write_line(
                "mcp-testbench: baselined (expected failures, they do not fail the run):",
                yellow=True,
            )
            for reason, statuses in groups:
                terminalreporter.write_line(f"  {statuses}: {reason}")
        for note in baseline.notes:
            terminalreporter.write_line(f"mcp-testbench: baseline {baseline.path}: {note}")
        for entry in self.unmatched:
            terminalreporter.write_line(
                f"mcp-testbench: baseline entry {entry!r} matches no check of this run; "
                "correct or delete it (a stale entry fails the run)",
                red=True,
            )
        for entry in self.stale:
            terminalreporter.write_line(
                f"mcp-testbench: baseline entry {entry!r} is stale: none of its checks "
                "failed in this run; delete it",
                red=True,
            )
        for line in _now_passing_lines(self.config, baseline, self.now_passing, self.results):
            terminalreporter.write_line(line, red=True)

    def _blocked_details(self, terminalreporter: Any) -> None:
        """The BLOCKED items, which pytest's failures section leaves out (it lists its own
        "failed" category only): by default one line per root cause, as the root causes
        explain them all; with -v or -rB each item's report, as a FAIL's."""
        reports = terminalreporter.getreports("blocked")
        if not reports or self.config.getoption("tbstyle", "auto") == "no":
            return
        if self.config.get_verbosity() > 0 or "B" in terminalreporter.reportchars:
            terminalreporter.write_sep("=", "BLOCKED (not judged: a precondition failed)")
            for report in reports:
                terminalreporter.write_sep("_", report.head_line or report.nodeid, red=True)
                terminalreporter.write_line(report.longreprtext)
            return
        from harness.reports import root_causes

        # Counted by root cause line: one defect that is several checks' root is one.
        line_of = {name: root.root for root in root_causes(self.results) for name in root.checks}
        roots: dict[str, int] = {}
        for report in reports:
            root = str((_reported_result(report) or {}).get("root"))
            root = line_of.get(root, root)
            roots[root] = roots.get(root, 0) + 1
        terminalreporter.write_sep("=", "BLOCKED (not judged; -rB or -v shows each)")
        for root, count in sorted(roots.items(), key=lambda kv: (-kv[1], kv[0])):
            items = f"{count} item{'s' if count != 1 else ''}"
            terminalreporter.write_line(f"{items} BLOCKED by {root}: see the root causes")

    @pytest.hookimpl(specname="pytest_sessionfinish", tryfirst=True)
    def pytest_sessionfinish_junit(self, session: pytest.Session) -> None:
        """Before junitxml writes its file (in its own pytest_sessionfinish)."""
        _junit_root_causes(self.config, self.results)


def _junit_root_causes(config: pytest.Config, results: list[dict[str, Any]]) -> None:
    """A BLOCKED testcase's failure message: its first line, then its root cause in the
    words of every other report, which only the whole run's results give. Uses pytest's
    junitxml objects (no public API changes an element), each testcase's whole by now."""
    from _pytest.junitxml import bin_xml_escape, xml_key

    from harness.reports import root_causes

    log_xml = config.stash.get(xml_key, None)
    if log_xml is None or not results:
        return
    lines = {name: root.line for root in root_causes(results) for name in root.checks}
    for reporter in log_xml.node_reporters_ordered:
        testcase = reporter.to_xml()
        failure = testcase.find("failure")
        properties = {p.get("name"): p.get("value") for p in testcase.iter("property")}
        if failure is None or properties.get(_RESULT_PROPERTY) is None:
            continue
        item = json.loads(str(properties[_RESULT_PROPERTY]))
        if item.get("status") == "BLOCKED" and item.get("root") in lines:
            message = f"{_headline(item)}\nroot cause: {lines[item['root']]}"
            failure.set("message", bin_xml_escape(message))


# -- why a run was slow -----------------------------------------------------------------------

_WAITED_OUTPUT = "mcp_testbench_waited"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands the controller what its runs spent waiting out bounds
    (xdist sends `workeroutput` after this hook), for the summary's slow-run lines."""
    output = getattr(session.config, "workeroutput", None)
    runs = session.config.stash.get(_STASH_RUNS, None)
    if output is not None and runs:
        output[_WAITED_OUTPUT] = _waited_out(runs.values())


def _waited_out(runs: Iterable[ScenarioRun]) -> dict[str, Any]:
    """What scenario runs spent waiting out a bound for what the client never did: a
    drive's wait that never saw what it waited for, an operation the client never returned
    from, one it ended at its own time-out (not one the drive timed out on purpose). As
    {"runs": n, "took": the runs' seconds, "waiting": runs with such a wait, "seconds": all
    of it, "why": {what it waited for: [seconds, times]}, "unanswering": waiting runs in
    which the client left a server request unanswered, "unanswered": {that request's
    method: runs}}."""
    why: dict[str, list[float]] = {}
    unanswered: dict[str, int] = {}
    runs_seen = waiting = unanswering = 0
    took = 0.0
    for run in runs:
        runs_seen += 1
        took += run.seconds
        spent = [(str(w["wait"]), float(w["seconds"])) for w in run.waits if not w["seen"]]
        for operation in run.operations:
            kind = (operation.error or {}).get("kind")
            if kind == "hang":
                spent.append((f"{operation.op} to return", operation.seconds))
            elif kind == "timeout" and not operation.deliberate:
                spent.append((f"an answer to {operation.op}", operation.seconds))
        if not spent:
            continue
        waiting += 1
        for label, seconds in spent:
            total = why.setdefault(label, [0.0, 0])
            total[0] += seconds
            total[1] += 1
        methods = _unanswered_requests(run)
        unanswering += bool(methods)
        for method in methods:
            unanswered[method] = unanswered.get(method, 0) + 1
    return {
        "runs": runs_seen,
        "took": took,
        "waiting": waiting,
        "seconds": sum(total for total, _ in why.values()),
        "why": why,
        "unanswering": unanswering,
        "unanswered": unanswered,
    }


def _unanswered_requests(run: ScenarioRun) -> set[str]:
    """The methods of the server requests in `run` that the client never answered."""
    asked: dict[str, str] = {}  # the id as JSON text (1 is not "1") -> the method
    answered: set[str] = set()
    for entry in run.entries:
        message = entry.get("message")
        if entry.get("kind") != "message" or not isinstance(message, dict) or "id" not in message:
            continue
        key = json.dumps(message["id"])
        if entry.get("direction") == "server" and "method" in message:
            asked[key] = str(message["method"])
        elif entry.get("direction") == "client" and "method" not in message:
            answered.add(key)
    return {method for key, method in asked.items() if key not in answered}


def _add_waited(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    why = {label: list(total) for label, total in a.get("why", {}).items()}
    for label, (seconds, times) in b.get("why", {}).items():
        total = why.setdefault(label, [0.0, 0])
        total[0] += seconds
        total[1] += times
    unanswered = dict(a.get("unanswered", {}))
    for method, runs in b.get("unanswered", {}).items():
        unanswered[method] = unanswered.get(method, 0) + runs
    counts = ("runs", "took", "waiting", "seconds", "unanswering")
    added = {key: a.get(key, 0) + b.get(key, 0) for key in counts}
    return {**added, "why": why, "unanswered": unanswered}


def _wrap(text: str) -> list[str]:
    """`text` in lines of at most 100 columns, the lines after the first indented 2."""
    from harness.reports import wrap

    return wrap(text, hang=2, break_long_words=False)


def _duration(seconds: float) -> str:
    """6 min 45 s, 44 s, 0.8 s."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _now_passing_lines(
    config: pytest.Config,
    baseline: Baseline,
    now_passing: list[tuple[str, int, int]],
    results: list[dict[str, Any]],
) -> list[str]:
    """The baseline entries whose items now pass (pytest itself says only "XPASS(strict)"
    and "1 failed"), and the command that brings the file up to date: `baseline update`
    from this run's JSON report, unless the run left out other entries' items (it would
    drop those entries too)."""
    lines = [
        f"mcp-testbench: baseline entry {entry!r} now passes: remove it"
        if passed == judged
        else f"mcp-testbench: baseline entry {entry!r} now passes in {passed} of its "
        f"{judged} items: narrow it to the others"
        for entry, passed, judged in now_passing
    ]
    if not lines:
        return []
    reports = [Path(r) for r in config.getoption("mcp_report") or [] if r.endswith(".json")]
    left_out = baseline.left_out(results)
    if left_out:
        others = f"{len(left_out)} other entr{'ies' if len(left_out) > 1 else 'y'}"
        why = f"`baseline update` from this run would also drop {others}, whose items it left out"
        single, several = f" by hand: {why}", f"mcp-testbench: edit them by hand: {why}"
    else:
        if reports:  # the last one: `mcp-testbench run --report` comes after its folder's
            how = f"run `{baseline.update_command(reports[-1])}`"
        else:
            how = (
                f"write this run's JSON report ({_typed(config, '--mcp-report')}=results.json) "
                f"and run `{baseline.update_command(Path('results.json'))}`"
            )
        single, several = f", or {how}", f"mcp-testbench: or, for all of them at once, {how}"
    texts = [f"{lines[0]}{single}"] if len(lines) == 1 else [*lines, several]
    return [line for text in texts for line in _wrap(text)]


# -- the official runner's conformance clients ---------------------------------------------------
#
# `--mcp-conformance-client CMD` runs a client's conformance command as the official runner
# (`@modelcontextprotocol/conformance`) runs it, once per client scenario served here
# (harness.official.SERVED), through the run window like any scenario run. Each run is one
# node with one item per official check id (`official:<id>`), one per check of ours judged
# on the same transcript, and `scenario`: the scenario's verdict in the runner's terms, which
# fails when its expected ids were not all judged. docs/conformance-clients.md.

_STASH_CONFORMANCE: pytest.StashKey[dict[tuple[str, str], ConformanceResult]] = pytest.StashKey()
_OFFICIAL_PROPERTY = "mcp_official"
_SCENARIO_PROPERTY = "mcp_official_scenario"
# An official id's status as this plugin's categories name it (a hang is no BLOCKED: no
# check of ours is its root; it is the client's process that did not end).
_OFFICIAL_CATEGORIES = {
    "WARNING": "WARN",
    "HUNG": "HUNG",
}
_CATEGORIES["HUNG"] = ("hung", "H", ("HUNG", {"red": True}))


def _conformance_options(group: Any) -> None:
    group.addoption(
        "--mcp-conformance-client",
        metavar="CMD",
        help="run a conformance client as the official runner does (/bin/sh -c 'CMD URL', "
        "MCP_CONFORMANCE_SCENARIO, ...), once per official client scenario served here; "
        "not with --mcp-client or --mcp-driver (see docs/conformance-clients.md)",
    )
    group.addoption(
        "--mcp-conformance-timeout",
        type=int,
        default=None,
        metavar="MS",
        help="with --mcp-conformance-client: the runner's per-scenario time-out, after which "
        "the shell gets SIGTERM (default 30000, as the runner's)",
    )
    group.addoption(
        "--mcp-conformance-report",
        metavar="FILE.json",
        help="with --mcp-conformance-client: write the runner's verdicts per scenario and "
        "the tier figures as JSON",
    )


def _configure_conformance(config: pytest.Config) -> None:
    """The usage rules of --mcp-conformance-client, and its summary's recorder."""
    command = config.getoption("mcp_conformance_client", None)
    timeout = config.getoption("mcp_conformance_timeout", None)
    report = config.getoption("mcp_conformance_report", None)
    if command is None:
        for given, option in ((timeout, "timeout"), (report, "report")):
            if given is not None:
                raise pytest.UsageError(
                    f"--mcp-conformance-{option} goes with --mcp-conformance-client CMD; "
                    "add that, or drop it"
                )
        return
    if not command.strip():
        raise pytest.UsageError(
            "--mcp-conformance-client is empty: give the command the official runner's "
            '--command takes, e.g. "python conformance_client.py"'
        )
    others = [
        option
        for option, name in (
            ("--mcp-client", "mcp_client"),
            ("--mcp-driver", "mcp_driver"),
            ("--mcp-suite", "mcp_suite"),
        )
        if config.getoption(name, None)
    ]
    if others:
        raise pytest.UsageError(
            f"--mcp-conformance-client runs the official client scenarios; {others[0]} runs "
            "the suite's: give one of them, not both"
        )
    if timeout is not None and timeout <= 0:
        raise pytest.UsageError(
            f"--mcp-conformance-timeout must be a positive number of milliseconds, not {timeout}"
        )
    if report is not None and Path(report).suffix != ".json":
        raise pytest.UsageError(
            f"--mcp-conformance-report {report!r}: the file name must end in .json"
        )
    baseline = config.getoption("mcp_baseline", None)
    if baseline:
        from harness.official import OfficialBaselineError, load_client_baseline

        if Path(baseline).suffix not in (".yml", ".yaml"):
            raise pytest.UsageError(
                f"--mcp-baseline {baseline}: with --mcp-conformance-client the baseline is "
                "the official runner's expected-failures file (.yml or .yaml, 'client:' "
                "entries), judged by its rule; a JSON baseline is the suite's"
            )
        try:
            config.stash[_STASH_CLIENT_BASELINE] = load_client_baseline(Path(baseline))
        except OfficialBaselineError as exc:
            raise pytest.UsageError(f"--mcp-baseline {exc}") from None
    transports = _split(config.getoption("mcp_transport"))
    if transports and "http" not in transports:
        raise pytest.UsageError(
            "the official client scenarios run over HTTP only: drop --mcp-transport or give http"
        )
    from harness.official import SERVED

    served = sorted({r for s in SERVED for r in s.revisions})
    revisions = _split(config.getoption("mcp_revision"))
    if revisions and not set(revisions) & set(served):
        raise pytest.UsageError(
            f"no official client scenario is served here at {', '.join(revisions)}; "
            f"they are served at {', '.join(served)}"
        )
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_ConformanceSummary(config), "mcp-testbench-conformance")


def _conformance_runs(suite: McpSuite) -> Iterator[pytest.Collector]:
    from harness.official import SERVED

    revisions = set(_split(suite.config.getoption("mcp_revision")))
    for scenario in SERVED:
        for revision in scenario.revisions:
            if not revisions or revision in revisions:
                yield McpConformanceRun.from_parent(
                    suite,
                    name=f"conformance-{scenario.name}-{revision}",
                    scenario=scenario,
                    revision=revision,
                )


class McpConformanceRun(pytest.Collector):
    """One official client scenario at one revision: its official ids, ours, its verdict."""

    def __init__(self, *, scenario: ClientScenario, revision: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.revision = revision
        self.key = (scenario.name, revision)

    def collect(self) -> Iterator[pytest.Item]:
        from harness.official import our_checks

        for official in self.scenario.checks:
            if official.emitted in ("always", "on event", "on failure"):
                item = McpOfficialItem.from_parent(
                    self, name=f"official:{official.id}", callobj=_run_official_check
                )
                item.mcp_official = official
                yield item
        for check in our_checks(self.scenario, self.revision):
            ours = McpConformanceCheckItem.from_parent(
                self, name=check.id, callobj=_run_conformance_check
            )
            ours.mcp_check = check
            yield ours
        yield McpOfficialItem.from_parent(self, name="scenario", callobj=_run_conformance_scenario)


class McpOfficialItem(_McpItem):
    """An official check id's verdict, or (`scenario`) the scenario's in the runner's terms."""

    mcp_official: OfficialClientCheck | None = None


class McpConformanceCheckItem(McpCheckItem):
    """A check of ours, judged on the transcript of an official client scenario."""


def _conformance_result(item: pytest.Item) -> ConformanceResult:
    """The run of the item's scenario, carried out once (in the run window)."""
    from harness.official import conformance_target, judge_conformance_run
    from harness.running import RUNNER_TIMEOUT_MS, run_conformance_client

    run_node = item.parent
    assert isinstance(run_node, McpConformanceRun)
    config = item.config
    results = config.stash.setdefault(_STASH_CONFORMANCE, {})
    if run_node.key not in results:
        command = config.getoption("mcp_conformance_client")
        timeout = config.getoption("mcp_conformance_timeout") or RUNNER_TIMEOUT_MS
        window = _conformance_window(config)

        def carry_out(node: McpConformanceRun) -> Callable[[], ConformanceResult]:
            target = conformance_target(node.scenario, node.revision)
            return lambda: judge_conformance_run(
                node.scenario, run_conformance_client(command, target, timeout_ms=timeout)
            )

        # Without xdist the window gets every run at once (it keeps `width` working); a
        # worker gets its own runs only (the scheduler hands each worker whole runs).
        nodes = [run_node]
        if not hasattr(config, "workerinput"):
            parents = [
                i.parent for i in item.session.items if isinstance(i.parent, McpConformanceRun)
            ]
            nodes = list(dict.fromkeys(n for n in parents if isinstance(n, McpConformanceRun)))
        futures = {
            node.key: window.submit(("conformance", *node.key), carry_out(node)) for node in nodes
        }
        results[run_node.key] = futures[run_node.key].result()
    return results[run_node.key]


_STASH_CONFORMANCE_WINDOW: pytest.StashKey[RunWindow[ConformanceResult]] = pytest.StashKey()


def _conformance_window(config: pytest.Config) -> RunWindow[ConformanceResult]:
    """The run window of the conformance client's runs (the suite's, for their type): as
    many working at once as --mcp-concurrency says (default one per core, at least 2: each
    run is a process of its own), a run still going after 2 s holding no place; closed
    with the session."""
    from harness.running import RunWindow, stop_conformance_clients

    window = config.stash.get(_STASH_CONFORMANCE_WINDOW, None)
    if window is None:
        width = _concurrent_runs(config)
        cap, stale = (width, float("inf")) if width == 1 else (2 * width, _STALE_RUN)
        window = config.stash[_STASH_CONFORMANCE_WINDOW] = RunWindow(width, cap=cap, stale=stale)
        config.add_cleanup(window.close)
        # Cleanups run last first: a session ended early (Ctrl-C, -x) kills the commands
        # still running, then waits for their runs, which end at once.
        config.add_cleanup(stop_conformance_clients)
    return window


def _run_official_check(request: pytest.FixtureRequest) -> None:
    item = request.node
    assert isinstance(item, McpOfficialItem)
    assert item.mcp_official is not None
    official = item.mcp_official
    scenario = _conformance_result(item).official
    found = [v for v in scenario.verdicts if v.id == official.id]
    statuses = [v.status for v in found]
    if scenario.hung or scenario.harness_fault is not None:
        status, reason = "HUNG", scenario.outcome
    elif "FAILURE" in statuses:
        status = "FAILURE"
        reason = "; ".join(v.reason for v in found if v.status == "FAILURE")
    elif "WARNING" in statuses:
        status = "WARNING"
        reason = "; ".join(v.reason for v in found if v.status == "WARNING")
    elif "SUCCESS" in statuses:
        status, reason = "SUCCESS", "; ".join(v.reason for v in found)
    elif found:  # INFO or SKIPPED: the rule did not judge
        status, reason = found[0].status, found[0].reason
    elif official.emitted == "on failure":
        status, reason = "SILENT", "the runner emits it only as a FAILURE, and had none to emit"
    else:
        status, reason = (
            "NOT EMITTED",
            "the runner's rule emitted nothing: what it is about never happened",
        )
    shown = {
        "id": official.id,
        "scenario": scenario.name,
        "revision": scenario.revision,
        "status": status,
        "statuses": statuses,
        "reason": reason,
        "rule": official.rule,
        "evidence": [seq for v in found for seq in v.evidence],
    }
    item.user_properties.append((_OFFICIAL_PROPERTY, json.dumps(shown, ensure_ascii=False)))
    headline = f"{status} {official.id} (official) in {scenario.name} at {scenario.revision}"
    text = f"{headline}\n  why: {reason}\n  the runner's rule: {official.rule}"
    if official.ours:
        text += f"\n  ours on the same traffic: {', '.join(official.ours)}"
    baseline = item.config.stash.get(_STASH_CLIENT_BASELINE, None)
    if baseline is not None and status != "HUNG":
        _against_baseline(baseline, scenario.name, official.id, status, text)
    if status in ("FAILURE", "HUNG"):
        raise McpCheckFailed(text)
    if status == "WARNING":
        item.add_report_section("call", "mcp-testbench WARN", text)
    elif status in ("INFO", "SKIPPED", "NOT EMITTED"):
        pytest.skip(f"N/A: {status.lower()}: {reason}")


def _against_baseline(
    baseline: ClientBaseline, scenario: str, check_id: str, status: str, text: str
) -> None:
    """The runner's expected-failures rule for one check id: a listed failure is
    expected (xfail), a listed SUCCESS is a stale entry, and an unlisted WARNING fails the
    baseline check as a FAILURE does."""
    entry = baseline.entry_for(scenario, check_id)
    if status in ("FAILURE", "WARNING") and entry is not None:
        pytest.xfail(f"expected failure, in the baseline as '{entry}': {text}")
    if status == "WARNING":
        raise McpCheckFailed(
            f"{text}\n  not in the baseline ({baseline.source}): the runner's baseline "
            "check fails on a WARNING as on a FAILURE"
        )
    if status == "SUCCESS" and entry == f"{scenario}:{check_id}":
        raise McpCheckFailed(
            f"{text}\n  stale baseline entry '{entry}' ({baseline.source}): it now passes; "
            "remove it"
        )


def _official_status(report: pytest.TestReport) -> str | None:
    """The category of an official item's status (WARN, HUNG), if it has one."""
    for name, value in report.user_properties:
        if name == _OFFICIAL_PROPERTY and isinstance(value, str):
            return _OFFICIAL_CATEGORIES.get(str(json.loads(value).get("status")))
        if name == _SCENARIO_PROPERTY and isinstance(value, str):
            return "HUNG" if json.loads(value).get("hung") else None
    return None


def _run_conformance_check(request: pytest.FixtureRequest) -> None:
    from harness.official import conformance_scenario

    item = request.node
    assert isinstance(item, McpConformanceCheckItem)
    run_node = item.parent
    assert isinstance(run_node, McpConformanceRun)
    result = _conformance_result(item)
    verdict = next(v for c, v in result.ours if c.id == item.mcp_check.id)
    run = result.run.scenario_run(conformance_scenario(run_node.scenario, run_node.revision))
    item.mcp_verdict = verdict
    shown = _result(item, run, verdict)
    shown["ours"] = True  # beside the runner's ids of the same scenario
    _conclude(item, run, verdict, shown)


def _run_conformance_scenario(request: pytest.FixtureRequest) -> None:
    item = request.node
    result = _conformance_result(item)
    scenario, run = result.official, result.run
    shown = {
        **scenario.to_json(),
        "line": scenario.line,
        "command": run.command,
        "url": run.url,
        "process": run.shown_status,
        "left_behind": run.left_behind,
        "seconds": round(run.seconds, 3),
    }
    item.user_properties.append((_SCENARIO_PROPERTY, json.dumps(shown, ensure_ascii=False)))
    baseline = item.config.stash.get(_STASH_CLIENT_BASELINE, None)
    said: list[str] = []
    if baseline is not None and not scenario.hung and scenario.harness_fault is None:
        from harness.official import check_client_baseline

        verdicts = [(v.id, v.status) for v in scenario.verdicts]
        outcome = check_client_baseline(baseline, [(scenario.name, scenario.revision, verdicts)])
        # Expected failures, and nothing else wrong: every expected id was judged.
        if outcome.passes and outcome.expected and not scenario.missing:
            pytest.xfail(
                f"every failure of {scenario.name} is in the baseline "
                f"({', '.join(outcome.expected)}): {scenario.outcome}"
            )
        said = [] if outcome.passes else [f"  {line}" for line in outcome.lines()]
    if scenario.passes and not said:
        return
    lines = [
        f"{scenario.name} at {scenario.revision}: {scenario.outcome}",
        *said,
        f"  the runner's line: {scenario.line}",
        f"  the client: {run.shown_status} ({run.seconds:.1f} s)",
    ]
    lines += [
        f"  {v.status} {v.id}: {v.reason}" for v in scenario.verdicts if v.status != "SUCCESS"
    ]
    if run.left_behind:
        lines.append("  the command left processes running: the harness killed them")
    if run.stderr.strip():
        lines.append("  client stderr (last lines):")
        lines += [f"    {line}" for line in run.stderr.splitlines()[-15:]]
    raise McpCheckFailed("\n".join(lines))


class _ConformanceSummary:
    """The runner's summary lines and the tier figures, at the end of the session (also
    from pytest-xdist workers' reports); `--mcp-conformance-report` as JSON."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.scenarios: list[dict[str, Any]] = []

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == _SCENARIO_PROPERTY and isinstance(value, str):
                self.scenarios.append(json.loads(value))

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        from harness.official import CLIENT_RUNNER_VERSION, tier_figure

        if exitstatus == pytest.ExitCode.USAGE_ERROR:
            return
        terminalreporter.write_sep(
            "-",
            f"official client scenarios (@modelcontextprotocol/conformance {CLIENT_RUNNER_VERSION})",
        )
        ordered = sorted(self.scenarios, key=lambda s: (s["revision"], s["scenario"]))
        for scenario in ordered:
            if _tier_outcome(scenario) == "hung":  # the runner would still be waiting
                shown = (
                    f"  ! {scenario['scenario']} [{scenario['revision']}]: {scenario['outcome']}"
                )
            else:
                shown = (
                    f"  {scenario['line']} [{scenario['revision']}]; here: "
                    f"{scenario['outcome']}; the client {scenario['process']}"
                )
            terminalreporter.write_line(shown, red=not scenario["passes"])
        baseline = self.config.stash.get(_STASH_CLIENT_BASELINE, None)
        if baseline is not None and ordered:
            from harness.official import check_client_baseline

            outcome = check_client_baseline(
                baseline,
                [
                    (s["scenario"], s["revision"], [(v["id"], v["status"]) for v in s["verdicts"]])
                    for s in ordered
                ],
                hung=frozenset(
                    (s["scenario"], s["revision"]) for s in ordered if _tier_outcome(s) == "hung"
                ),
            )
            terminalreporter.write_line(
                f"mcp-testbench: the runner's baseline check ({baseline.source}):"
            )
            for line in outcome.lines():
                terminalreporter.write_line(f"  {line}", red=not outcome.passes)
        figures = []
        for revision in sorted({s["revision"] for s in ordered}):
            outcomes = {
                s["scenario"]: _tier_outcome(s) for s in ordered if s["revision"] == revision
            }
            figure = tier_figure(revision, outcomes)
            figures.append(figure)
            terminalreporter.write_line(f"mcp-testbench: tier figure: {figure.line}")
        report = self.config.getoption("mcp_conformance_report", None)
        if report:
            payload = {
                "runner": CLIENT_RUNNER_VERSION,
                "command": self.config.getoption("mcp_conformance_client"),
                "scenarios": ordered,
                "tier": [
                    {
                        "revision": f.revision,
                        "line": f.line,
                        "passed": list(f.passed),
                        "failed": list(f.failed),
                        "hung": list(f.hung),
                        "not_served": list(f.not_served),
                        "not_run": list(f.not_run),
                        "scored": f.scored,
                    }
                    for f in figures
                ],
            }
            Path(report).write_text(json.dumps(payload, indent=2, ensure_ascii=False), "utf-8")
            terminalreporter.write_line(f"mcp-testbench: wrote {report}")


def _tier_outcome(scenario: dict[str, Any]) -> str:
    if scenario.get("hung") or str(scenario.get("outcome", "")).startswith("not judged"):
        return "hung"
    return "passed" if scenario.get("tier") else "failed"


# -- a recorded script served for a test ----------------------------------------------------------

_RECORDING_MARKER = "mcp_recording"
_RECORDING_MARKER_HELP = (
    "mcp_recording(script, transport=None, revision=None, allow_unused=False, "
    "allow_unrecorded=False): serve a recorded script for the test (the mcp_recording "
    "fixture holds its URL or stdio command); the test fails when the client sent what the "
    "recording never saw or left a recorded step unused"
)
_RECORDING_OPTIONS = ("transport", "revision", "allow_unused", "allow_unrecorded")
_STASH_CALL_FAILED: pytest.StashKey[bool] = pytest.StashKey()


@pytest.fixture
def mcp_recording(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[McpRecording]:
    """The script `@pytest.mark.mcp_recording(...)` names, served for this test.

    Over HTTP (`transport="http"`, or `"sse-legacy"`) `url` is a mock on a free port of
    127.0.0.1; over stdio `command` is the argv that starts the mock, for the client to
    spawn. At teardown the test errors when the client sent a message no recorded step
    matched (`allow_unrecorded=True` lets it pass), or, when the test passed, when a
    recorded step was never used (`allow_unused=True`).
    """
    mark = request.node.get_closest_marker(_RECORDING_MARKER)
    if mark is None:
        pytest.fail(
            f"{_RECORDING_MARKER}: the fixture serves the script that the test's "
            f'@pytest.mark.{_RECORDING_MARKER}("path/to/script.json") names, and this test '
            "has no such mark",
            pytrace=False,
        )
    given, options = _recording_mark(mark)
    try:
        served = McpRecording(
            resolve_script(given, request.path.parent),
            options["transport"] or "",
            transcript_path=tmp_path / "mcp-recording.jsonl",
            revision=options["revision"],
        ).start()
    except RecordingError as exc:
        refused = str(exc)  # failed outside the handler: one line, with no exception chain
    else:
        refused = ""
    if refused:
        pytest.fail(f"{_RECORDING_MARKER}: {refused}", pytrace=False)
    yield served
    findings = served.finish()
    # A test that failed has said what went wrong; the steps after it were cut short.
    passed = not request.node.stash.get(_STASH_CALL_FAILED, False)
    allow_unused = options["allow_unused"] or not passed
    lines = findings.problems(
        allow_unused=allow_unused, allow_unrecorded=options["allow_unrecorded"]
    )
    if not lines:
        return
    relaxing = []
    if findings.unrecorded and not options["allow_unrecorded"]:
        relaxing.append("allow_unrecorded=True in the mark lets the client send them")
    if findings.unused and not allow_unused:
        relaxing.append(
            'allow_unused=True lets steps go unused (a step marked "optional": true may)'
        )
    pytest.fail(
        "\n".join(
            [
                f"{_RECORDING_MARKER}: the replay of {given} ({served.transport}, "
                f"{served.served_revision}) did not go as recorded:",
                *lines,
                "; ".join([*relaxing, f"the transcript: {served.transcript_path}"]),
            ]
        ),
        pytrace=False,
    )


@pytest.fixture(autouse=True)
def _mcp_recording_mark(request: pytest.FixtureRequest) -> None:
    """A test with the mark gets the script served even when it does not ask for the
    fixture by name (it may reach it through a fixture of its own)."""
    if request.node.get_closest_marker(_RECORDING_MARKER) is not None:
        request.getfixturevalue(_RECORDING_MARKER)


def _recording_mark(mark: pytest.Mark) -> tuple[str, dict[str, Any]]:
    """The mark's script and options, or a setup error that says what is wrong."""
    usage = f'@pytest.mark.{_RECORDING_MARKER}("path/to/script.json", transport="http")'
    if len(mark.args) != 1 or not isinstance(mark.args[0], (str, os.PathLike)):
        pytest.fail(
            f"{_RECORDING_MARKER}: give one script path, as {usage} (got {mark.args!r})",
            pytrace=False,
        )
    unknown = sorted(set(mark.kwargs) - set(_RECORDING_OPTIONS))
    if unknown:
        pytest.fail(
            f"{_RECORDING_MARKER}: unknown option {', '.join(unknown)}; "
            f"the options are {', '.join(_RECORDING_OPTIONS)}",
            pytrace=False,
        )
    options: dict[str, Any] = {name: mark.kwargs.get(name) for name in _RECORDING_OPTIONS}
    if options["transport"] is not None and options["transport"] not in SERVED_TRANSPORTS:
        pytest.fail(
            f"{_RECORDING_MARKER}: transport={options['transport']!r}: use one of "
            f"{', '.join(map(repr, SERVED_TRANSPORTS))}",
            pytrace=False,
        )
    for name in ("allow_unused", "allow_unrecorded"):
        options[name] = bool(options[name])
    return os.fspath(mark.args[0]), options
