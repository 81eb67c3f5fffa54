"""End to end: the whole conformance suite against real MCP clients written by others.

Each test runs the suite through the real plugin in a pytest subprocess (pytester), like a
client author would (`pytest --mcp-client=...` / `--mcp-driver=...`), reads every verdict
from the JSON report, and compares them with the verdicts pinned in tests/_pins.py: any
change in a real client's verdicts (a new failure, a failure that is gone, a judged verdict
that became N/A or BLOCKED) fails the test. Every pinned verdict that is not a PASS is
explained in docs/findings.md; update both together. With MCP_TESTBENCH_E2E_REPORTS set to
a folder, each client's JSON and HTML reports are kept there: `sh tools/compare.sh` makes
docs/compare.md from the very runs that held the pins.

Clients: the official Python SDK (`mcp`, mode="auto", what its users run), fastmcp, and
the official TypeScript SDK through its example driver (driver protocol 1.1; needs
`npm ci --prefix examples/drivers/typescript-sdk`, which CI runs) and through the frozen
v1 copy of that driver (tests/fixtures-drivers/typescript-sdk-v1), which shows that a v1
driver keeps every verdict it had.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest
from _pins import (
    FASTMCP,
    MCP_AUTO,
    TYPESCRIPT_SDK,
    TYPESCRIPT_SDK_V1,
    Key,
    Pin,
    expected_statuses,
    suite_items,
)
from _served import NODE, TS_SDK_DRIVER, ts_sdk_driver_missing

from harness.cli._run_command import LEAN_PYTEST
from harness.reports._report import format_evidence

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TS_DRIVER_V1 = ROOT / "tests" / "fixtures-drivers" / "typescript-sdk-v1" / "driver.mjs"
# Seconds for one client's whole suite: a bound, not an estimate (a run takes 1 to 3
# minutes with -n 2 on 2 idle CPUs, several times that on a loaded machine).
SUITE_BOUND = 1200
# Where each run's reports are kept, if anywhere: resolved now, before pytester moves into a
# folder of its own.
KEPT = (
    Path(os.environ["MCP_TESTBENCH_E2E_REPORTS"]).resolve()
    if os.environ.get("MCP_TESTBENCH_E2E_REPORTS")
    else None
)

# -- running the suite -------------------------------------------------------------------------


def _leftovers(folder: Path) -> list[tuple[int, str]]:
    """Processes other than this one that work in `folder` or name it on their command line
    (Linux /proc; elsewhere none). Everything a suite run starts (the pytest subprocess, its
    drivers and mock servers) inherits the run's working directory or gets a transcript path
    under it, and has ended when the run has: the leak check of a whole process tree, which
    tests/conftest.py (direct children only) cannot see once the subprocess is gone."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        if proc.name == str(os.getpid()):
            continue
        try:
            argv = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if cwd == str(folder) or cwd.startswith(f"{folder}/") or str(folder) in argv:
            found.append((int(proc.name), argv.strip()))
    return found


def _run_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, *client: str
) -> tuple[pytest.RunResult, dict[Key, dict[str, object]]]:
    """The full suite for one client, in a subprocess; its verdicts by item."""
    # The run's temporary files (mock transcripts) stay under a folder of its own, with a
    # short path: each run binds a Unix socket next to its transcript, and a socket path
    # has room for about 100 bytes (pytester's folder, named after the test, is too long).
    scratch = Path(tempfile.mkdtemp(prefix="mcp-e2e-"))
    monkeypatch.setenv("TMPDIR", str(scratch))
    # Node's compile cache (Node 22): a driver that starts once per scenario run (protocol
    # v1) compiles the SDK's modules once, not 200 times; the cache goes with the folder.
    monkeypatch.setenv("NODE_COMPILE_CACHE", str(scratch / "node-compile-cache"))
    try:
        return _run_in(pytester, scratch, name, *client)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_in(
    pytester: pytest.Pytester, scratch: Path, name: str, *client: str
) -> tuple[pytest.RunResult, dict[Key, dict[str, object]]]:
    report = pytester.path / "report.json"
    # Kept for docs/compare.md (tools/compare.sh): the figures published are this run's.
    keep = [f"--mcp-report={KEPT / name}.html"] if KEPT else []
    result = pytester.runpytest_subprocess(
        *client,
        f"--mcp-report={report}",
        *keep,
        # Half the default: the bound is waited out only where a pinned client misbehaves
        # (an answer that never comes, a notification never surfaced), and then it is most
        # of the run's time. When a client behaves, its slowest operation takes well under a
        # second even on a loaded CI machine, so the bound still changes no verdict.
        "--mcp-timeout=5",
        "-n",
        "2",
        *LEAN_PYTEST,  # as `mcp-testbench run` runs the suite (the plugin's own scheduling)
        timeout=SUITE_BOUND,
    )
    deadline = time.monotonic() + 5.0
    while (leaked := _leftovers(pytester.path) + _leftovers(scratch)) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    for pid, _ in leaked:  # ours (the run's children): end them, then say so
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not leaked, f"processes outlived the suite run: {leaked}"
    assert report.exists(), f"no report was written:\n{result.stdout.str()[-3000:]}"
    if KEPT:
        shutil.copy(report, KEPT / f"{name}.json")
    results = json.loads(report.read_text(encoding="utf-8"))["results"]
    verdicts = {(r["check"], r["scenario"], r["revision"], r["transport"]): r for r in results}
    assert len(verdicts) == len(results), "two results for one item"
    return result, verdicts


def _assert_pinned(
    result: pytest.RunResult,
    verdicts: dict[Key, dict[str, object]],
    pins: tuple[Pin, ...],
    client_name: str,
) -> None:
    items = suite_items()
    expected, stale = expected_statuses(pins, items)
    assert set(verdicts) == items, (
        f"items without a verdict: {sorted(items - set(verdicts))[:10]}; "
        f"verdicts for no item: {sorted(set(verdicts) - items)[:10]}"
    )
    clients = {str(r["client"]) for r in verdicts.values()}
    assert all(c.startswith(client_name) for c in clients), clients
    changed = []
    for key, r in sorted(verdicts.items()):
        seen = _outcome(r)
        if seen != expected.get(key, "PASS"):
            changed.append(
                f"{'/'.join(key)}: pinned {expected.get(key, 'PASS')}, now {seen}: {r['reason']}"
            )
            evidence = r.get("evidence")
            if isinstance(evidence, list):
                changed += [f"    {line}" for line in format_evidence(evidence[:4])]
    changed += [f"a pin covers no item of the suite any more: {pin}" for pin in stale]
    assert not changed, (
        f"{client_name} ({', '.join(sorted(clients))}) changed verdicts; check the evidence, "
        "then update the pins here and docs/findings.md together:\n  " + "\n  ".join(changed)
    )
    failing = any(status.partition(":")[0] in ("FAIL", "BLOCKED") for status in expected.values())
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if failing else pytest.ExitCode.OK)


def _outcome(result: dict[str, object]) -> str:
    """A reported verdict as a pin states it (tests/_mutation.py `outcome`)."""
    if result["status"] == "BLOCKED":
        return f"BLOCKED:{result['root']}"
    return str(result["status"])


def _require(module: str, extra: str) -> None:
    # A missing client fails, never skips: a skipped e2e test looks like a green build.
    if importlib.util.find_spec(module) is None:
        pytest.fail(f"{module} is not installed: pip install 'mcp-testbench[{extra}]'")


def test_official_python_sdk_auto_mode(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _require("mcp", "mcp")
    result, verdicts = _run_suite(
        pytester, monkeypatch, "mcp", "--mcp-client=harness.clients._sdk_mcp:McpSdkClient"
    )
    _assert_pinned(result, verdicts, MCP_AUTO, "mcp (python sdk)")


def test_fastmcp(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _require("fastmcp", "fastmcp")
    result, verdicts = _run_suite(
        pytester, monkeypatch, "fastmcp", "--mcp-client=harness.clients._sdk_fastmcp:FastMcpClient"
    )
    _assert_pinned(result, verdicts, FASTMCP, "fastmcp")


def test_official_typescript_sdk(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = ts_sdk_driver_missing()
    if missing is not None:
        pytest.fail(missing)
    driver = shlex.join([str(NODE), str(TS_SDK_DRIVER / "driver.mjs")])
    result, verdicts = _run_suite(pytester, monkeypatch, "typescript-sdk", f"--mcp-driver={driver}")
    _assert_pinned(result, verdicts, TYPESCRIPT_SDK, "@modelcontextprotocol/sdk")


def test_typescript_sdk_through_a_v1_driver(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Backward compatibility of driver protocol 1.1: the v1 driver passes what it did."""
    missing = ts_sdk_driver_missing()
    if missing is not None:
        pytest.fail(missing)
    # The frozen copy beside the example's node_modules, so that Node resolves the SDK.
    (tmp_path / "node_modules").symlink_to(TS_SDK_DRIVER / "node_modules", target_is_directory=True)
    shutil.copy(TS_DRIVER_V1, tmp_path / "driver.mjs")
    driver = shlex.join([str(NODE), str(tmp_path / "driver.mjs")])
    result, verdicts = _run_suite(
        pytester, monkeypatch, "typescript-sdk-v1", f"--mcp-driver={driver}"
    )
    _assert_pinned(result, verdicts, TYPESCRIPT_SDK_V1, "@modelcontextprotocol/sdk")
