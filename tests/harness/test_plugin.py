"""The pytest plugin, run through pytester: options, errors, collection, reports, baseline.

These run real pytest sessions in a scratch directory with the bundled reference client
(or deliberately bad clients), real mock servers and real subprocesses.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest_plugins = ["pytester"]

# Narrow runs keep these tests quick: one revision, one transport, one scenario.
NARROW = ["--mcp-revision=2025-11-25", "--mcp-transport=stdio", "-p", "no:cacheprovider"]
REFERENCE = "--mcp-client=harness.clients:ReferenceClient"


def _results(path: Path) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"]
    return results


INACTIVE = (
    "mcp-testbench: conformance suite not collected; "
    "pass --mcp-client=MODULE:ATTR or --mcp-driver=CMD to run it"
)


def test_inert_without_options(pytester: pytest.Pytester) -> None:
    """Plain pytest with the plugin installed: the project's own tests run as ever, no
    item of the suite is collected, and one header line says which flags would run it."""
    pytester.makepyfile("def test_nothing():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "mcp-testbench::" not in out
    assert [line for line in result.stdout.lines if line.startswith("mcp-testbench")] == [INACTIVE]


def test_inert_run_under_xdist_says_so_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one():\n    assert True\n\ndef test_two():\n    pass\n")
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert [line for line in result.stdout.lines if line.startswith("mcp-testbench")] == [INACTIVE]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            "--mcp-revision=2030-01-01",
            "--mcp-revision '2030-01-01' is not a revision; use one of 2024-11-05, 2025-03-26",
        ),
        (
            "--mcp-transport=sse",
            "--mcp-transport 'sse' is not a transport; use one of stdio, http, sse-legacy",
        ),
    ],
)
def test_bad_filter_without_a_client_is_a_usage_error(
    pytester: pytest.Pytester, option: str, message: str
) -> None:
    pytester.makepyfile("def test_nothing():\n    assert True\n")
    result = pytester.runpytest(option, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


RUN_ID = "mcp-testbench::tools-call-2025-11-25-stdio"


def test_one_check_reruns_by_its_node_id(pytester: pytest.Pytester) -> None:
    """The id pytest prints for an item runs that item alone, and only its scenario."""
    report = pytester.path / "r.json"
    result = pytester.runpytest(
        REFERENCE, f"{RUN_ID}::tools.call-result", f"--mcp-report={report}", "-v"
    )
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"{RUN_ID}::tools.call-result PASSED*"])
    assert [(r["id"], r["status"]) for r in _results(report)] == [
        (f"{RUN_ID}::tools.call-result", "PASS")
    ]


def test_node_ids_of_a_run_and_of_items_under_xdist(pytester: pytest.Pytester) -> None:
    """A run id selects every check of that run; the workers of xdist get the same
    selection (they collect from the same arguments)."""
    from harness.judging._catalogue import CATALOGUE
    from harness.suite import scenario

    checks = [
        c for c in scenario("tools-call").checks if CATALOGUE[c].applies("2025-11-25", "stdio")
    ]
    other = "mcp-testbench::tools-pagination-2025-11-25-http::tools.pagination"
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        REFERENCE, RUN_ID, other, "-n", "2", f"--mcp-report={report}", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, result.stdout.str()
    ids = sorted(r["id"] for r in _results(report))
    assert ids == sorted([*(f"{RUN_ID}::{c}" for c in checks), other])


def test_a_node_id_that_names_nothing_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(REFERENCE, f"{RUN_ID}::no.such-check", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"'{RUN_ID}::no.such-check' names no item of the suite" in result.stderr.str()


@pytest.mark.parametrize(
    "outcome",
    [{"hello": "mcp-testbench-driver/1.1"}, pytest.UsageError("broken"), RuntimeError("a bug")],
    ids=["hello", "usage error", "other error"],
)
def test_the_driver_check_beside_the_workers_gives_what_the_check_gave(
    monkeypatch: pytest.MonkeyPatch, outcome: object
) -> None:
    """Under xdist the check runs in a thread: its result, or whatever it raised, comes
    back unchanged in the session's thread (a bug is not passed off as a broken driver)."""
    import harness.pytest_plugin as plugin

    def check_driver(driver: str, timeout: float) -> object:
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(plugin, "check_driver", check_driver)
    check = plugin._DriverCheck("python driver.py", 1.0)
    if isinstance(outcome, BaseException):
        with pytest.raises(type(outcome)) as caught:
            check.result()
        assert caught.value is outcome
    else:
        assert check.result() == outcome


def test_a_node_id_without_a_client_says_what_to_add(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(f"{RUN_ID}::tools.call-result", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "add --mcp-client=MODULE:ATTR or --mcp-driver=CMD" in result.stderr.str()


def test_options_are_in_their_own_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    out = result.stdout.str()
    assert "mcp-testbench: MCP client conformance" in out
    for option in (
        "--mcp-client",
        "--mcp-driver",
        "--mcp-suite",
        "--mcp-revision",
        "--mcp-transport",
        "--mcp-timeout",
        "--mcp-baseline",
        "--mcp-report",
    ):
        assert option in out


def test_client_alone_collects_the_whole_suite_in_an_empty_directory(
    pytester: pytest.Pytester,
) -> None:
    from harness.judging._catalogue import CATALOGUE
    from harness.suite import SCENARIOS

    expected = sum(
        1
        for scenario in SCENARIOS
        for revision, transport in scenario.matrix()
        for check_id in scenario.checks
        if CATALOGUE[check_id].applies(revision, transport)
    )
    result = pytester.runpytest(REFERENCE, "--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0
    ids = [line for line in result.stdout.lines if line.startswith("mcp-testbench::")]
    assert len(ids) == expected
    assert "mcp-testbench::tools-call-2025-11-25-http::tools.call-result" in ids


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--mcp-client=nosuchmodule:factory", "cannot import 'nosuchmodule'"),
        ("--mcp-client=json:nofactory", "'json' has no attribute 'nofactory'"),
        ("--mcp-client=json", "write MODULE:ATTR"),
        ("--mcp-client=json:__doc__", "is not callable"),
        ("--mcp-revision=2030-01-01", "is not a revision"),
        ("--mcp-transport=carrier-pigeon", "is not a transport"),
        ("--mcp-report=out.txt", "must end in .json, .md or .html"),
        ("--mcp-baseline=missing.json", "no such file"),
        ("--mcp-timeout=0", "positive number of seconds"),
    ],
)
def test_bad_options_get_a_clear_error(
    pytester: pytest.Pytester, option: str, message: str
) -> None:
    extra = [REFERENCE] if not option.startswith("--mcp-client") else []
    result = pytester.runpytest(option, *extra, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_client_and_driver_together_are_refused(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        REFERENCE, "--mcp-driver=python driver.py", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "not both" in result.stderr.str()


def test_missing_driver_is_a_usage_error_before_any_scenario(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--mcp-driver=no-such-driver-binary --flag", *NARROW)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "cannot start the driver 'no-such-driver-binary'" in result.stderr.str()


def test_reference_client_passes_narrow_run_with_reports(pytester: pytest.Pytester) -> None:
    json_report, md_report, html_report = (
        pytester.path / f"r.{ext}" for ext in ("json", "md", "html")
    )
    result = pytester.runpytest(
        REFERENCE,
        *NARROW,
        f"--mcp-report={json_report}",
        f"--mcp-report={md_report}",
        f"--mcp-report={html_report}",
        "--junitxml=junit.xml",
    )
    assert result.ret == 0, result.stdout.str()
    results = _results(json_report)
    assert results
    assert {r["status"] for r in results} <= {"PASS", "SKIP", "N/A"}
    assert any(r["status"] == "PASS" for r in results)
    assert "| tools.call-result |" in md_report.read_text(encoding="utf-8")
    assert "<table>" in html_report.read_text(encoding="utf-8")
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert 'classname="mcp-testbench.tools-call-2025-11-25-stdio" name="tools.call-result"' in junit
    summaries = [
        line
        for line in result.stdout.lines
        if line.startswith(f"mcp-testbench: {len(results)} items")
    ]
    assert len(summaries) == 1


def test_keyword_selection_and_exitfirst(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(REFERENCE, *NARROW, "-k", "pagination", "-x")
    result.assert_outcomes(passed=1)


def test_xdist_runs_the_suite_and_reports_from_workers(pytester: pytest.Pytester) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest(
        REFERENCE,
        *NARROW,
        "-n",
        "2",
        "--dist",
        "loadscope",
        "-k",
        "tools",
        f"--mcp-report={report}",
    )
    assert result.ret == 0, result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) > 0
    assert len(_results(report)) == outcomes.get("passed", 0) + outcomes.get("skipped", 0)


@pytest.mark.parametrize("dist", [[], ["--dist", "loadscope"]], ids=["no flag", "loadscope"])
def test_xdist_runs_each_scenario_once(pytester: pytest.Pytester, dist: list[str]) -> None:
    """Plain `-n 2`: the items of one scenario run stay together on one worker, so the
    client is created once per run, not once per worker that got one of its items. Under
    an explicit `--dist`, where xdist schedules, a worker carries out only its own runs
    (xdist tells a worker its `--dist` is "no": the plugin must not guess units from it).
    Several runs at once in a worker change neither."""
    created = pytester.path / "created.txt"
    pytester.makepyfile(
        counting=f"""
from pathlib import Path
from harness.clients import ReferenceClient

def make_client():
    with Path({str(created)!r}).open("a") as log:
        log.write("client\\n")
    return ReferenceClient()
"""
    )
    pytester.syspathinsert()
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        "--mcp-client=counting:make_client",
        *NARROW,
        "-n",
        "2",
        *dist,
        "--mcp-concurrency=2",  # units of several runs, carried out in a window
        "-k",
        "tools or features",
        f"--mcp-report={report}",
    )
    assert result.ret == 0, result.stdout.str()
    runs = {(r["scenario"], r["revision"], r["transport"]) for r in _results(report)}
    assert len(runs) > 2
    assert created.read_text().count("client") == len(runs)


def test_concurrent_runs_overlap_in_a_worker_and_each_scenario_still_runs_once(
    pytester: pytest.Pytester,
) -> None:
    """--mcp-concurrency 2 under xdist: the scheduler hands a worker its share of runs and
    the worker's window keeps two of them working; both sides make the same units, so each
    run is carried out once. A run whose drive waits for the late response holds no place
    meanwhile, so a third may start beside two, but never more than twice two at once (the
    window's own tests show that no more than two work at once)."""
    log = pytester.path / "clients.txt"
    pytester.makepyfile(
        counting=f"""
import itertools
import os
import time
from harness.clients import ReferenceClient

MADE = itertools.count()

class Logged(ReferenceClient):
    def __init__(self):
        super().__init__()
        self.number = next(MADE)
        self.opened = time.monotonic()

    async def close(self):
        await super().close()
        with open({str(log)!r}, "a") as out:
            out.write(f"{{os.getpid()}} {{self.number}} {{self.opened}} {{time.monotonic()}}\\n")

def make_client():
    return Logged()
"""
    )
    pytester.syspathinsert()
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        "--mcp-client=counting:make_client",
        "--mcp-transport=stdio",
        "-p",
        "no:cacheprovider",
        "-k",
        "cancellation",  # runs that wait half a second for a late response: they overlap
        "--mcp-concurrency=2",
        "-n",
        "2",
        f"--mcp-report={report}",
        timeout=300,
    )
    assert result.ret == 0, result.stdout.str()
    runs = {(r["scenario"], r["revision"], r["transport"]) for r in _results(report)}
    assert len(runs) == 5
    spans: dict[str, dict[str, tuple[float, float]]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        pid, client, opened, closed = line.split()
        spans.setdefault(pid, {})[client] = (float(opened), float(closed))
    assert sum(len(clients) for clients in spans.values()) == len(runs)  # once each

    def most_at_once(intervals: list[tuple[float, float]]) -> int:
        return max(sum(1 for o, c in intervals if o <= start < c) for start, _ in intervals)

    at_once = [most_at_once(list(clients.values())) for clients in spans.values()]
    assert 2 <= max(at_once) <= 4, spans


def test_items_ending_beside_running_clients_never_take_the_environment_from_under_them(
    pytester: pytest.Pytester,
) -> None:
    """pytest deletes PYTEST_CURRENT_TEST after each item; a client that copies its
    environment meanwhile (httpx does, for proxies) lists the names, then reads each, and a
    name deleted between the two was a KeyError in the client's connect: a BLOCKED run
    that was the harness's doing. With runs going on beside the items, the variable is
    never deleted under them (shown failing with the plugin's wrapper taken out)."""
    pytester.makepyfile(
        reading="""
import os
import time
from harness.clients import ReferenceClient

class ReadsItsEnvironment(ReferenceClient):
    async def connect(self, target, options):
        until = time.monotonic() + 0.3
        while time.monotonic() < until:
            dict(os.environ)
        return await super().connect(target, options)

def make_client():
    return ReadsItsEnvironment()
"""
    )
    pytester.syspathinsert()
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        "--mcp-client=reading:make_client",
        *NARROW,
        "-k",
        "tools",
        "--mcp-concurrency=2",
        f"--mcp-report={report}",
        timeout=300,
    )
    blocked = [r["reason"] for r in _results(report) if r["status"] == "BLOCKED"]
    assert blocked == [], blocked
    assert result.ret == 0, result.stdout.str()


def test_concurrency_must_be_one_or_more(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(REFERENCE, *NARROW, "--mcp-concurrency=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mcp-concurrency must be 1 or more*"])


def test_fixture_override_in_conftest(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest
from harness.clients import ReferenceClient

CREATED = []

@pytest.fixture(scope="session")
def mcp_client_factory():
    def make():
        CREATED.append(1)
        return ReferenceClient()
    return make

def pytest_sessionfinish(session):
    print(f"factory used {len(CREATED)} times")
"""
    )
    result = pytester.runpytest("--mcp-suite", *NARROW, "-k", "pagination", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*factory used 1 times*"])


def test_suite_flag_without_a_client_explains_what_to_do(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--mcp-suite", *NARROW, "-k", "pagination")
    assert "no client to test" in result.stdout.str() + result.stderr.str()
    assert result.ret != 0


# -- the baseline --------------------------------------------------------------------------------

BROKEN = """
import urllib.parse

from harness.clients import ReferenceClient

class NoCursor(ReferenceClient):
    '''Percent-encodes the cursor it sends back: fails tools.pagination (a MUST).'''
    async def _request(self, method, params=None, **kw):
        cursor = (params or {}).get("cursor")
        if isinstance(cursor, str):
            params = {**params, "cursor": urllib.parse.quote(cursor, safe="")}
        return await super()._request(method, params, **kw)
"""


def _baseline(pytester: pytest.Pytester, entries: dict[str, str]) -> str:
    path = pytester.path / "baseline.json"
    path.write_text(
        json.dumps({"format_version": 1, "expected_failures": entries}), encoding="utf-8"
    )
    return f"--mcp-baseline={path}"


def test_baseline_expected_failure_is_xfail(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(broken=BROKEN)
    pytester.syspathinsert()
    base = _baseline(pytester, {"tools.pagination": "we do not page yet"})
    result = pytester.runpytest("--mcp-client=broken:NoCursor", *NARROW, "-k", "pagination", base)
    result.assert_outcomes(xfailed=1)
    assert result.ret == 0


def test_baseline_new_failure_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(broken=BROKEN)
    pytester.syspathinsert()
    base = _baseline(pytester, {"tools.call-result": "unrelated"})
    result = pytester.runpytest("--mcp-client=broken:NoCursor", *NARROW, "-k", "pagination", base)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*FAIL tools.pagination (MUST TL-1)*", "*spec: https://*pagination*"]
    )


def test_baseline_stale_entry_fails(pytester: pytest.Pytester) -> None:
    base = _baseline(
        pytester, {"tools-pagination-2025-11-25-stdio::tools.pagination": "was broken"}
    )
    result = pytester.runpytest(REFERENCE, *NARROW, "-k", "pagination", base)
    result.assert_outcomes(failed=1)
    assert "XPASS(strict)" in result.stdout.str()


def test_baseline_entry_matching_nothing_is_reported(pytester: pytest.Pytester) -> None:
    base = _baseline(pytester, {"tools.no-such-check": "typo"})
    result = pytester.runpytest(REFERENCE, *NARROW, "-k", "pagination", base)
    assert "baseline entry 'tools.no-such-check' matches no check" in result.stdout.str()


def test_baseline_malformed_is_a_usage_error(pytester: pytest.Pytester) -> None:
    path = pytester.path / "baseline.json"
    path.write_text('{"expected_failures": []}', encoding="utf-8")
    result = pytester.runpytest(REFERENCE, f"--mcp-baseline={path}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "format_version" in result.stderr.str()


def test_a_broken_script_fails_its_scenario_not_the_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.suite
    from harness.running._scenario import Scenario

    broken = Scenario("broken", "no/such/script.json", checks=("tools.pagination",))
    monkeypatch.setattr(harness.suite, "SCENARIOS", (*harness.suite.SCENARIOS, broken))
    result = pytester.runpytest(REFERENCE, *NARROW, "-k", "pagination or broken")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*the scenario's script is broken*no/such/script.json*no such file*"]
    )


# -- every status, through pytest and every report -----------------------------------------------
#
# A conftest registers made-up checks, one per status, on one scenario of its own (a real
# script, run by the reference client): what pytest, the summary, the reports and JUnit
# make of each status, without depending on any real check's verdict.

EVERY_STATUS = """
import harness.suite
from harness.judging._catalogue import check, clause
from harness.running._scenario import Scenario
from harness.judging._triggers import client_sent
from harness.judging._verdicts import blocked, fail, passed, violated, warn

INITIALIZE = client_sent("initialize")
COMMON = {"spec": "basic/lifecycle", "description": "made up for the test"}
MUST = clause("basic/lifecycle", "the client MUST send an initialized notification")
SHOULD = clause("basic/lifecycle", "SHOULD be the latest version supported by the client")
MAY = clause("basic/lifecycle", "Implementations MAY choose to reset the timeout clock")

def _initialize(run):
    return run.requests("initialize")

@check("fake.pass", requirements=("F-1",), clauses=[MUST], trigger=INITIALIZE, **COMMON)
def _pass(run):
    return passed("initialize was seen", _initialize(run))

@check("fake.warn", requirements=("F-2",), clauses=[SHOULD], trigger=INITIALIZE, **COMMON)
def _warn(run):
    return warn("a SHOULD was not met", _initialize(run))

@check("fake.fail", requirements=("F-3",), clauses=[MUST], trigger=INITIALIZE, **COMMON)
def _fail(run):
    return fail("the root defect", _initialize(run))

@check("fake.blocked", requirements=("F-4",), clauses=[MUST], trigger=INITIALIZE, **COMMON)
def _blocked(run):
    return blocked("fake.fail", "blocked by fake.fail: the root defect")

@check("fake.note", requirements=("F-7",), clauses=[MAY], trigger=INITIALIZE, **COMMON)
def _noted(run):
    return violated("what the spec leaves open went otherwise", _initialize(run))

@check("fake.na", requirements=("F-5",), clauses=[MUST], trigger=client_sent("no/such/method"), **COMMON)
def _not_applicable(run):
    return fail("never judged: the trigger never arose")

@check("fake.skip", requirements=("F-6",), clauses=[MUST], trigger=INITIALIZE, feature="no-such-feature", **COMMON)
def _skipped(run):
    return fail("never judged: the client does not declare the feature")

harness.suite.SCENARIOS = (
    Scenario(
        "fake",
        "tools/pagination.json",
        checks=(
            "fake.pass", "fake.warn", "fake.fail", "fake.blocked", "fake.note", "fake.na",
            "fake.skip",
        ),
    ),
)
"""

STATUSES = {
    "fake.pass": ("PASS", "seen", None),
    "fake.warn": ("WARN", "violation", None),
    "fake.fail": ("FAIL", "violation", None),
    "fake.blocked": ("BLOCKED", "blocked", "fake.fail"),
    "fake.na": ("N/A", "not-applicable", None),
    "fake.skip": ("SKIP", "declared", None),
    "fake.note": ("NOTE", "violation", None),
}
# Longer than 100 columns on one line: the terminal puts the counts on a line of their own.
SUMMARY = (
    "mcp-testbench: 7 items of 7 checks for *:",
    "  1 FAIL, 1 BLOCKED, 1 WARN, 1 NOTE, 1 PASS, 1 N/A, 1 SKIP",
)
ROOT_LINE = "fake.fail FAIL blocks 1 item: the root defect"


def _every_status(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    pytester.makeconftest(EVERY_STATUS)
    return pytester.runpytest_subprocess(REFERENCE, *NARROW, *extra, timeout=300)


def test_every_status_in_pytest_and_the_reports(pytester: pytest.Pytester) -> None:
    json_report, md_report, html_report = (
        pytester.path / f"r.{ext}" for ext in ("json", "md", "html")
    )
    result = _every_status(
        pytester,
        f"--mcp-report={json_report}",
        f"--mcp-report={md_report}",
        f"--mcp-report={html_report}",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["* 1 failed, 1 passed, 1 skipped, 1 warned, 1 blocked, 1 noted, 1 not applicable in *"]
    )
    out = result.stdout.str()
    # A BLOCKED item has no failure block of its own (-rB or -v gives it): its root's line
    # says why (tests/harness/test_plugin_reporting.py).
    assert "root cause: fake.fail (fix that first; this check was not judged)" not in out
    result.stdout.fnmatch_lines(
        [
            "1 item BLOCKED by fake.fail: see the root causes",
            "mcp-testbench: root causes (fix these first):",
            f"  {ROOT_LINE}",
            *SUMMARY,
        ]
    )
    assert (
        len([line for line in result.stdout.lines if line.startswith("mcp-testbench: 7 items")])
        == 1
    )

    by_check = {r["check"]: r for r in _results(json_report)}
    assert {c: (r["status"], r["kind"], r.get("root")) for c, r in by_check.items()} == STATUSES
    assert by_check["fake.na"]["reason"].endswith("this never happened in the run")

    markdown = md_report.read_text(encoding="utf-8")
    assert "## Root causes (fix these first)" in markdown
    assert f"- {ROOT_LINE}" in markdown
    assert "1 FAIL, 1 BLOCKED, 1 WARN, 1 NOTE, 1 PASS, 1 N/A, 1 SKIP" in markdown
    assert markdown.index("## Root causes") < markdown.index("| check |")
    cells = {line.split(" | ")[0].strip("| "): line.split(" | ")[-1].strip(" |") for line in markdown.splitlines() if line.startswith("| fake.")}  # fmt: skip
    assert cells == {
        "fake.pass": "PASS",
        "fake.warn": "WARN",
        "fake.fail": "FAIL",
        "fake.blocked": "blkd",
        "fake.note": "note",
        "fake.na": "n/a",
        "fake.skip": "skip",
    }

    page = html_report.read_text(encoding="utf-8")
    linked = ROOT_LINE.replace("fake.fail", '<a href="#check-fake.fail">fake.fail</a>', 1)
    assert f"<b>root cause</b> {linked}" in page
    assert page.index("root cause") < page.index("<table>")
    assert "1 FAIL, 1 BLOCKED, 1 WARN, 1 NOTE, 1 PASS, 1 N/A, 1 SKIP" in page
    # A NOTE names the words it rests on, and why they fail nothing.
    assert by_check["fake.note"]["level"] == "MAY"
    assert (
        "noted, not failed: at 2025-11-25 the spec's word for this is MAY"
        in (by_check["fake.note"]["reason"])
    )
    assert "MAY: &ldquo;Implementations MAY choose to reset the timeout clock&rdquo;" in page


def test_every_status_in_junit(pytester: pytest.Pytester) -> None:
    import xml.etree.ElementTree as ET

    result = _every_status(pytester, "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cases = {
        case.get("name"): case
        for case in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    }
    assert set(cases) == set(STATUSES)

    def properties(name: str) -> dict[str, str]:
        return {p.get("name", ""): p.get("value", "") for p in cases[name].iter("property")}

    for name, (status, kind, root) in STATUSES.items():
        props = properties(name)
        assert props["mcp_status"] == status
        assert props["mcp_kind"] == kind
        assert props.get("mcp_root") == root
        assert props["mcp_requirements"] == f"F-{list(STATUSES).index(name) + 1}"
        assert props["mcp_spec"].endswith("/2025-11-25/basic/lifecycle")
        result = json.loads(props["mcp_result"])  # JSON, not a Python repr
        assert (result["status"], result["reason"]) == (status, props["mcp_reason"])

    # What CI systems display next to a testcase: the verdict and why, for every item
    # whose pytest outcome alone would hide it (a WARN passes, N/A is a skip, ...).
    def system_out(name: str) -> str:
        return "".join(e.text or "" for e in cases[name].iter("system-out"))

    assert system_out("fake.pass") == ""
    assert system_out("fake.warn").startswith("mcp-testbench WARN: a SHOULD was not met\n")
    assert system_out("fake.blocked").startswith(
        "mcp-testbench BLOCKED: blocked by fake.fail: the root defect (root cause: fake.fail)"
    )
    assert system_out("fake.na").startswith("mcp-testbench N/A: ")
    assert system_out("fake.note").startswith("mcp-testbench NOTE: what the spec leaves open")
    assert "requirement: F-3 https://" in system_out("fake.fail")

    blocked = cases["fake.blocked"].find("failure")
    assert blocked is not None
    assert blocked.get("message", "").startswith("BLOCKED fake.blocked")
    assert blocked.get("message", "").splitlines() == [
        "BLOCKED fake.blocked (MUST F-4) in fake at 2025-11-25 over stdio, blocked by fake.fail",
        f"root cause: {ROOT_LINE}",
    ]
    failed = cases["fake.fail"].find("failure")
    assert failed is not None
    assert failed.get("message", "").startswith("FAIL fake.fail")
    not_applicable = cases["fake.na"].find("skipped")
    assert not_applicable is not None
    assert not_applicable.get("message", "").startswith("N/A:")
    skipped = cases["fake.skip"].find("skipped")
    assert skipped is not None
    assert "does not declare support for no-such-feature" in skipped.get("message", "")
    for name in ("fake.pass", "fake.warn", "fake.note"):
        assert not list(cases[name].iter("failure"))
        assert not list(cases[name].iter("skipped"))


def test_a_blocked_item_alone_fails_the_run(pytester: pytest.Pytester) -> None:
    result = _every_status(pytester, "-k", "blocked")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes() == {"blocked": 1, "deselected": 6}
    result.stdout.fnmatch_lines(
        [
            "1 item BLOCKED by fake.fail: see the root causes",
            f"  {ROOT_LINE.replace('FAIL', 'not judged')}",
        ]
    )


def test_not_applicable_and_skip_alone_pass_the_run(pytester: pytest.Pytester) -> None:
    result = _every_status(pytester, "-k", "na or skip")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["* 1 skipped, 5 deselected, 1 not applicable in *"])
    result.stdout.fnmatch_lines(["mcp-testbench: 2 items of 2 checks for * 1 N/A, 1 SKIP"])


def test_a_note_alone_passes_the_run_and_is_counted_apart(pytester: pytest.Pytester) -> None:
    result = _every_status(pytester, "-k", "note")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["* 6 deselected, 1 noted in *"])
    result.stdout.fnmatch_lines(
        [
            "noted, never failing (a MAY, or no sentence binds the client): fake.note",
            "mcp-testbench: 1 items of 1 checks for * 1 NOTE",
        ]
    )


def test_the_summary_is_printed_once_with_xdist(pytester: pytest.Pytester) -> None:
    report = pytester.path / "r.json"
    result = _every_status(pytester, "-n", "2", f"--mcp-report={report}", "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summaries = [line for line in result.stdout.lines if line.startswith("mcp-testbench: 7 items")]
    assert len(summaries) == 1, result.stdout.str()
    assert len([line for line in result.stdout.lines if line.strip() == ROOT_LINE]) == 1
    assert len(_results(report)) == 7
    # The JUnit verdict lines are written by the controller, from the workers' reports.
    junit = (pytester.path / "j.xml").read_text(encoding="utf-8")
    assert junit.count("<system-out>mcp-testbench ") == 6


def test_under_xdist_only_the_controller_writes_the_reports(pytester: pytest.Pytester) -> None:
    """A worker's verdicts travel to the controller, which writes every report once; the
    workers write none (each wrote its half's reports at its end, and the run waited)."""
    writers = pytester.path / "writers.txt"
    pytester.makeconftest(
        f"""
import harness.reports

_write_reports = harness.reports.write_reports
ROLE = []

def pytest_configure(config):
    ROLE.append("worker" if hasattr(config, "workerinput") else "controller")

def _noted(results, path, **options):
    with open({str(writers)!r}, "a", encoding="utf-8") as log:
        log.write(ROLE[0] + "\\n")
    return _write_reports(results, path, **options)

harness.reports.write_reports = _noted
"""
    )
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        REFERENCE, *NARROW, "-n", "2", "-k", "tools", f"--mcp-report={report}", timeout=300
    )
    assert result.ret == 0, result.stdout.str()
    assert writers.read_text(encoding="utf-8").split() == ["controller"]
    outcomes = result.parseoutcomes()
    assert len(_results(report)) == outcomes.get("passed", 0) + outcomes.get("skipped", 0) > 0


def test_baseline_expects_a_blocked_item_like_a_failure(pytester: pytest.Pytester) -> None:
    base = _baseline(pytester, {"fake.blocked": "blocked until fake.fail is fixed"})
    result = _every_status(pytester, "-k", "blocked", base)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert result.parseoutcomes() == {"xfailed": 1, "deselected": 6}


def test_baseline_entry_for_a_passing_fake_check_is_stale(pytester: pytest.Pytester) -> None:
    base = _baseline(pytester, {"fake-2025-11-25-stdio::fake.pass": "was broken"})
    result = _every_status(pytester, "-k", "pass", base)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "XPASS(strict)" in result.stdout.str()


def test_a_small_selection_still_gives_each_worker_about_two_units() -> None:
    from harness.pytest_plugin import _unit_size

    assert _unit_size(299, 2) == 16  # the whole suite: full units
    assert _unit_size(10, 2) == 3  # ten runs on two workers: four units
    assert _unit_size(1, 4) == 1
    assert _unit_size(0, 2) == 1


def test_a_conformance_client_keeps_one_run_per_core_working(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import harness.running
    from harness.pytest_plugin import _concurrent_runs

    def config(workers: int | None = None, **options: Any) -> Any:
        made = SimpleNamespace(getoption=lambda name, default=None: options.get(name, default))
        if workers is not None:
            made.workerinput = {"workerid": "gw0", "workercount": workers}
        return made

    client = {"mcp_conformance_client": "python client.py"}
    monkeypatch.setattr(harness.running, "usable_cores", lambda: 8)
    assert _concurrent_runs(config(**client)) == 8
    assert _concurrent_runs(config(workers=2, **client)) == 4  # xdist's workers share
    assert _concurrent_runs(config(workers=8, **client)) == 2  # never below two
    assert _concurrent_runs(config(mcp_concurrency=3, **client)) == 3  # as asked
    assert _concurrent_runs(config(mcp_driver="java -jar d.jar")) == 2  # a driver: as before
    monkeypatch.setattr(harness.running, "usable_cores", lambda: 1)
    assert _concurrent_runs(config(**client)) == 2


class _Worker:
    """What the plugin's xdist scheduler uses of a worker: its input and its sends."""

    def __init__(self, number: int, count: int, share: int | None) -> None:
        self.workerinput: dict[str, Any] = {"workerid": f"gw{number}", "workercount": count}
        self.gateway = SimpleNamespace(id=f"gw{number}")
        if share is not None:
            self.workerinput["mcp_testbench_share"] = share
        self.sent: list[list[int]] = []
        self.shutting_down = False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def _scheduler(pytester: pytest.Pytester, workers: list[_Worker], collection: list[str]) -> Any:
    from harness.pytest_plugin import pytest_xdist_make_scheduler

    config = pytester.parseconfigure(
        REFERENCE, "--tx=2*popen", "--dist=load", "--mcp-concurrency=2"
    )
    scheduler = pytest_xdist_make_scheduler(config, None)
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    return scheduler


def _suite_collection(runs: int) -> list[str]:
    return [
        f"mcp-testbench::run{r:02d}-2025-11-25-stdio::check.{c}"
        for r in range(runs)
        for c in ("a", "b")
    ]


def _carry_out(scheduler: Any, worker: _Worker) -> None:
    """The worker reports every item it has been sent, as it is sent more."""
    done = 0
    while done < sum(len(batch) for batch in worker.sent):
        index = [i for batch in worker.sent for i in batch][done]
        scheduler.mark_test_complete(worker, index)
        done += 1


def _runs_in(collection: list[str], indexes: list[int]) -> list[int]:
    return sorted(
        {int(collection[i].split("::")[1][3:5]) for i in indexes if "run" in collection[i]}
    )


def test_each_worker_gets_its_whole_share_of_units_at_once(pytester: pytest.Pytester) -> None:
    """Under the plugin's scheduler each of the first workers gets every unit of its share
    (units dealt out in turn) in its first batch, so that its window can go on with later
    runs while an item waits; a test outside the suite still goes out as xdist would."""
    collection = [*_suite_collection(10), "test_mine.py::test_one"]
    first, second = _Worker(0, 2, share=0), _Worker(1, 2, share=1)
    scheduler = _scheduler(pytester, [first, second], collection)
    # Ten runs on two workers: units of three, dealt out in turn; both checks of each run.
    assert _runs_in(collection, first.sent[0]) == [0, 1, 2, 6, 7, 8]
    assert len(first.sent[0]) == 12
    assert _runs_in(collection, second.sent[0]) == [3, 4, 5, 9]
    assert len(second.sent[0]) == 8
    _carry_out(scheduler, first)
    _carry_out(scheduler, second)
    sent = [i for w in (first, second) for batch in w.sent for i in batch]
    assert sorted(sent) == list(range(len(collection)))  # each item once, the test included
    assert first.shutting_down
    assert second.shutting_down


def test_what_a_crashed_worker_had_goes_out_unit_by_unit(pytester: pytest.Pytester) -> None:
    """A worker that dies leaves its share's pending items to the workers still up and to
    the one started in its place (which has no share): a unit at a time, each once."""
    collection = _suite_collection(10)
    first, second = _Worker(0, 2, share=0), _Worker(1, 2, share=1)
    scheduler = _scheduler(pytester, [first, second], collection)
    left = scheduler.remove_node(second)  # it crashed on its first item
    assert left == collection[second.sent[0][0]]
    replacement = _Worker(2, 2, share=None)
    scheduler.add_node(replacement)
    scheduler.add_node_collection(replacement, collection)
    scheduler.schedule()  # what xdist does once the new worker has collected
    assert _runs_in(collection, replacement.sent[0]) == [3, 4, 5]  # one unit
    _carry_out(scheduler, first)
    _carry_out(scheduler, replacement)
    again = [i for w in (first, replacement) for batch in w.sent for i in batch]
    assert sorted(again) == sorted([*first.sent[0], *second.sent[0]])


def test_a_worker_never_gets_a_unit_of_another_live_workers_share(
    pytester: pytest.Pytester,
) -> None:
    """That worker would carry out the unit too (its window starts its whole share), so
    the run would happen twice: a worker whose share is empty takes other work or none."""
    collection = [*_suite_collection(1), "test_mine.py::test_one"]
    first, second = _Worker(0, 2, share=0), _Worker(1, 2, share=1)  # one run: one unit
    scheduler = _scheduler(pytester, [second, first], collection)  # the second one first
    _carry_out(scheduler, first)
    _carry_out(scheduler, second)
    assert _runs_in(collection, [i for batch in first.sent for i in batch]) == [0]
    assert [collection[i] for batch in second.sent for i in batch] == ["test_mine.py::test_one"]


def test_runs_that_wait_on_the_client_start_first(pytester: pytest.Pytester) -> None:
    """A run whose drive waits for the client to act on its own (features-batch waits for
    the answer to a server's ping) starts before runs collected ahead of it, so that a
    client that never acts makes it wait beside the other runs, not after them."""
    log = pytester.path / "scripts.txt"
    pytester.makepyfile(
        logging_client=f"""
from harness.clients import ReferenceClient

class Logged(ReferenceClient):
    async def connect(self, target, options):
        script = next(a for a in target.command if a.endswith(".json"))
        with open({str(log)!r}, "a") as out:
            out.write(script.rsplit("/", 1)[-1] + "\\n")
        return await super().connect(target, options)
"""
    )
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess(
        "--mcp-client=logging_client:Logged",
        "--mcp-revision=2025-03-26,2025-06-18",
        "--mcp-transport=stdio",
        "-p",
        "no:cacheprovider",
        "-k",
        "tools-call or features-batch",  # tools-call twice, then features-batch once
        "--mcp-concurrency=2",  # two at once: the third run starts when one has ended
    )
    assert result.ret == 0, result.stdout.str()
    started = log.read_text().split()
    assert sorted(started) == ["batch.json", "list-and-call.json", "list-and-call.json"]
    assert started[-1] == "list-and-call.json"


def test_the_waiting_scenarios_runs_start_one_of_each_at_a_time() -> None:
    """Among the runs that may wait on the client, each scenario's first run starts before
    any scenario's second: a client that never does what two scenarios wait for keeps all
    their runs waiting, and the second scenario's waits must not queue behind the first's
    whole set. The rest keep collection order, after them."""
    from harness.pytest_plugin import _start_rank

    def run(nodeid: str, scenario: str, waits: bool) -> Any:
        return SimpleNamespace(
            nodeid=nodeid, scenario=SimpleNamespace(id=scenario, waits_on_the_client=waits)
        )

    runs = [
        run("plain-1", "plain", False),
        run("batch-1", "batch", True),
        run("batch-2", "batch", True),
        run("batch-3", "batch", True),
        run("plain-2", "plain", False),
        run("relisten-1", "relisten", True),
        run("relisten-2", "relisten", True),
    ]
    order = sorted(((r.nodeid, r) for r in runs), key=_start_rank(runs))
    assert [nodeid for nodeid, _ in order] == [
        "batch-1",
        "relisten-1",
        "batch-2",
        "relisten-2",
        "batch-3",
        "plain-1",
        "plain-2",
    ]


def test_a_worker_goes_on_with_its_share_while_an_item_waits(pytester: pytest.Pytester) -> None:
    """Under xdist a worker's window has the worker's whole share from its first item: while
    the first run a worker started is held up (its client takes 4 s to connect), runs of
    its share beyond that run's unit start, not only the other runs of the unit."""
    log = pytester.path / "clients.txt"
    pytester.makepyfile(
        slow_first=f"""
import itertools
import os
import time
from harness.clients import ReferenceClient

MADE = itertools.count()

class SlowFirst(ReferenceClient):
    def __init__(self):
        super().__init__()
        self.first = next(MADE) == 0
        with open({str(log)!r}, "a") as out:
            out.write(f"{{os.getpid()}} made {{time.monotonic()}}\\n")

    async def connect(self, target, options):
        if self.first:
            time.sleep(4)  # holds up this run's thread, not the others
            with open({str(log)!r}, "a") as out:
                out.write(f"{{os.getpid()}} released {{time.monotonic()}}\\n")
        return await super().connect(target, options)
"""
    )
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess(
        "--mcp-client=slow_first:SlowFirst",
        *NARROW,
        "-n",
        "2",
        "--mcp-concurrency=2",
        "-k",
        "tools or features",  # about two units of runs per worker
    )
    assert result.ret == 0, result.stdout.str()
    events: dict[str, list[tuple[str, float]]] = {}
    for line in log.read_text().splitlines():
        pid, what, when = line.split()
        events.setdefault(pid, []).append((what, float(when)))
    from harness.pytest_plugin import _unit_size

    assert len(events) == 2
    unit = _unit_size(sum(what == "made" for seen in events.values() for what, _ in seen), 2)
    for pid, seen in events.items():
        released = next(when for what, when in seen if what == "released")
        made = [when for what, when in seen if what == "made"]
        assert len(made) > unit, seen  # more than one unit of this worker's runs
        early = sum(when < released for when in made)
        assert early > unit, f"worker {pid}: {early} runs started before the release"


def test_loggers_created_by_a_scenario_thread_cannot_break_an_items_log_capture() -> None:
    """pytest walks logging's table of loggers as each phase of an item begins, without
    logging's lock, while scenario threads go on; a logger created in between ended a
    teardown with "dictionary changed size during iteration" and lost the next verdict."""
    import itertools
    import logging

    from _pytest.logging import LogCaptureHandler, catching_logs

    from harness.pytest_plugin import _snapshot_logger_iteration

    manager = logging.root.manager
    original = manager.loggerDict
    names = (f"mcp-testbench-test.logger-{n}" for n in itertools.count())
    try:
        # The race, made deterministic: a logger is created while the walk is under way.
        plain = dict(original)
        manager.loggerDict = plain

        def walk_and_create(table: dict[str, Any]) -> int:
            walked = 0
            for _ in table.values():
                logging.getLogger(next(names))
                walked += 1
            return walked

        with pytest.raises(RuntimeError, match="changed size"):
            walk_and_create(plain)
        plain = dict(original)  # as logging makes it (an earlier run may have guarded it)
        manager.loggerDict = plain

        _snapshot_logger_iteration()
        _snapshot_logger_iteration()  # once is enough: a second call keeps the same table
        guarded = manager.loggerDict
        assert guarded is not plain
        assert dict(guarded) == plain
        before = len(guarded)
        # The walk sees the loggers there when it began, and the new ones are kept.
        assert walk_and_create(guarded) == before
        assert len(guarded) == 2 * before + 1  # one PlaceHolder for their common parent
        with catching_logs(LogCaptureHandler(), level=logging.INFO):
            logging.getLogger(next(names)).info("captured")
    finally:
        manager.loggerDict = original
        for name in [n for n in original if n.startswith("mcp-testbench-test")]:
            del original[name]


def test_a_harness_fault_is_reported_as_its_own_and_drops_no_item(
    pytester: pytest.Pytester,
) -> None:
    """An exception in a trigger (injected through a conftest, as a harness bug would
    raise one) is the harness's fault: the item is in the report, BLOCKED with the root
    `harness` and the traceback, never a client verdict and never missing."""
    pytester.makeconftest(
        """
        import dataclasses
        from harness.judging._catalogue import CATALOGUE
        import harness.suite  # noqa: F401  (fills the catalogue)

        def broken(run):
            raise AttributeError("'NoneType' object has no attribute 'get'")

        check = CATALOGUE["tools.call-result"]
        CATALOGUE["tools.call-result"] = dataclasses.replace(
            check, trigger=dataclasses.replace(check.trigger, find=broken)
        )
        """
    )
    import harness.suite  # noqa: F401  (fills the catalogue)
    from harness.judging._catalogue import CATALOGUE

    json_report = pytester.path / "r.json"
    real = CATALOGUE["tools.call-result"]
    try:
        result = pytester.runpytest(
            REFERENCE, *NARROW, "-k", "tools-call", f"--mcp-report={json_report}"
        )
    finally:
        # The conftest ran in this very process: the tests after this one judge the real check.
        CATALOGUE["tools.call-result"] = real
    results = _results(json_report)
    items = [r for r in results if r["check"] == "tools.call-result"]
    assert len(items) == 1, result.stdout.str()
    [item] = items
    assert (item["status"], item["kind"], item["root"]) == ("BLOCKED", "harness", "harness")
    assert "the harness's own fault, not the client's" in item["reason"]
    assert "AttributeError" in item["evidence"][0]["traceback"]
    # The other checks of the run are judged as usual.
    others = {r["check"]: r["status"] for r in results if r["check"] != "tools.call-result"}
    assert others, result.stdout.str()
    assert set(others.values()) <= {"PASS", "N/A"}, others
