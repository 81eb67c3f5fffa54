"""The mcp-testbench pytest plugin (entry point `pytest11: mcp_testbench`).

    pytest --mcp-client=mypkg.testing:make_client      # a Python client (a factory)
    pytest --mcp-driver="java -cp build MyDriver"       # any language, driver protocol 1.1 (or v1)

collects the conformance suite: one item per check per (scenario, revision, transport),
named `mcp-testbench::<scenario>-<revision>-<transport>::<check>`, so that `-k`, `-x`,
`--junitxml` and pytest-xdist work as usual (the items of one scenario run go to one
worker without any `--dist` flag, so each scenario runs once).
A conftest may instead override the `mcp_client_factory` fixture and pass `--mcp-suite`.

The plugin is loaded by every pytest run in an environment where mcp-testbench is
installed, so it stays inert, and imports nothing heavy, until one of its options is given.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import shlex
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.clients import DriverPool, McpClient
    from harness.judging import Check, Verdict
    from harness.reports import Baseline
    from harness.running import RunWindow, Scenario, ScenarioRun

__all__ = ["McpCheckFailed", "mcp_client_factory"]

_RESULT_PROPERTY = "mcp_result"
_SUITE = "mcp-testbench"
_CONCURRENT_RUNS = 2
"""Scenario runs at once per process when the client allows it: most of a run is waiting
(on the client, on the mock's scripted delays), so a second run fills that time."""
_STASH_RUNS: pytest.StashKey[dict[tuple[str, str, str], ScenarioRun]] = pytest.StashKey()
_STASH_BASELINE: pytest.StashKey[Baseline | None] = pytest.StashKey()
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
        help="scenario runs working at once in each pytest process (default: "
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


def _active(config: pytest.Config) -> bool:
    return bool(
        config.getoption("mcp_client", None)
        or config.getoption("mcp_driver", None)
        or config.getoption("mcp_suite", False)
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
    _check_filters(config)
    _take_node_ids(config)
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
    if baseline_path:
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
    """`module:attr` to the factory it names, or a UsageError that says what to fix."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise pytest.UsageError(
            f"--mcp-client {spec!r}: write MODULE:ATTR, e.g. mypkg.testing:make_client"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise pytest.UsageError(
            f"--mcp-client {spec!r}: cannot import {module_name!r} ({exc}); "
            "check the name and that the package is installed in this environment"
        ) from None
    except Exception as exc:
        raise pytest.UsageError(
            f"--mcp-client {spec!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    factory = module
    for part in attr.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            names = ", ".join(n for n in dir(module) if not n.startswith("_"))
            raise pytest.UsageError(
                f"--mcp-client {spec!r}: {module_name!r} has no attribute {attr!r} (it has: {names})"
            ) from None
    if not callable(factory):
        raise pytest.UsageError(
            f"--mcp-client {spec!r}: {attr!r} is not callable; name a factory or class"
        )
    return factory


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


class McpCheckItem(pytest.Function):
    mcp_check: Check
    mcp_verdict: Verdict | None = None
    mcp_baselined: str | None = None
    """The baseline's reason, for an item the baseline lists."""

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
    else _CONCURRENT_RUNS for a driver (each run has a driver process, or a session in
    one, of its own) and for a factory that declares `concurrent_instances = True` (the
    reference client), else 1: an unknown client may keep state that two sessions in one
    process would share."""
    asked = config.getoption("mcp_concurrency", None)
    if asked is not None:
        return int(asked)
    if config.getoption("mcp_driver", None):
        return _CONCURRENT_RUNS
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
    from harness.judging import Status, judge
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
    result = _result(item, run, verdict)
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


def _explain(item: McpCheckItem, run: ScenarioRun, verdict: Verdict) -> str:
    from harness.reports import format_evidence

    check = item.mcp_check
    lines = [
        f"{verdict.status.value} {check.id} ({_level(check, run, verdict)} "
        f"{', '.join(check.requirements)}) "
        f"in {run.scenario.id} at {run.revision} over {run.transport}"
        # The first line is JUnit's failure message: a BLOCKED one names its root there.
        + (f", blocked by {verdict.root}" if verdict.root is not None else ""),
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
    return "\n".join(lines)


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
        return _CATEGORIES.get(_reported_status(report) or "")
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
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
        self.interrupted = False
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
        self._baseline_summary(terminalreporter)

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

    def _blocked_details(self, terminalreporter: Any) -> None:
        """What pytest's failures section shows for a FAIL, for the BLOCKED items: pytest
        lists only its own "failed" category there."""
        reports = terminalreporter.getreports("blocked")
        if not reports or self.config.getoption("tbstyle", "auto") == "no":
            return
        terminalreporter.write_sep("=", "BLOCKED (not judged: a precondition failed)")
        for report in reports:
            terminalreporter.write_sep("_", report.head_line or report.nodeid, red=True)
            terminalreporter.write_line(report.longreprtext)
