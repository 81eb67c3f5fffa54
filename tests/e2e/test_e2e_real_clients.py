"""End to end: the whole conformance suite against real MCP clients written by others.

Each test runs the suite through the real plugin in a pytest subprocess (pytester), like a
client author would (`pytest --mcp-client=...` / `--mcp-driver=...`), reads every verdict
from the JSON report, and compares them with the verdicts pinned below: any change in a
real client's verdicts (a new failure, a failure that is gone, a judged verdict that became
N/A or BLOCKED) fails the test. Every pinned verdict that is not a PASS is explained in
docs/findings.md; update both together.

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
from dataclasses import dataclass
from pathlib import Path

import pytest
from _served import NODE, TS_SDK_DRIVER, ts_sdk_driver_missing

from harness.cli._run_command import LEAN_PYTEST
from harness.clients._contract import OPERATIONS
from harness.judging._catalogue import CATALOGUE
from harness.protocol import HANDSHAKE_REVISIONS
from harness.reports._report import format_evidence
from harness.suite import SCENARIOS
from harness.suite.auth import SCENARIOS as AUTH_SCENARIOS

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TS_DRIVER_V1 = ROOT / "tests" / "fixtures-drivers" / "typescript-sdk-v1" / "driver.mjs"
# Seconds for one client's whole suite: a bound, not an estimate (a run takes 1 to 3
# minutes with -n 2 on 2 idle CPUs, several times that on a loaded machine).
SUITE_BOUND = 1200

Key = tuple[str, str, str, str]  # (check id, scenario, revision, transport)

HANDSHAKE = HANDSHAKE_REVISIONS
STREAMABLE = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN = ("2026-07-28",)
ALL_TRANSPORTS = ("stdio", "http", "sse-legacy")
ANY = "*"


@dataclass(frozen=True)
class Pin:
    """The items of `check` (ANY: every check) at these revisions and transports, in
    `scenario` (ANY: every scenario that has the check), have `status`: the verdict's
    kind, not only its status ("FAIL", "WARN", "N/A", "SKIP", or "BLOCKED:<root cause>"),
    so that a slide from a judged verdict into a vacuous one moves a pin."""

    status: str
    check: str
    revisions: tuple[str, ...]
    transports: tuple[str, ...] = ALL_TRANSPORTS
    scenario: str = ANY

    def covers(self, key: Key) -> bool:
        check, scenario, revision, transport = key
        return (
            self.check in (ANY, check)
            and self.scenario in (ANY, scenario)
            and revision in self.revisions
            and transport in self.transports
        )


# -- verdicts that are not PASS, by cause: docs/findings.md explains each one ----------------

# F1 (HT-9, MUST): after an HTTP 404 to a request that carries the session id, the client
# surfaces an error and never sends a new initialize.
F1 = (Pin("FAIL", "http.new-session-after-404", STREAMABLE, ("http",)),)

# F2 (LC-7): the client sends tools/list to a server that declared no tools capability
# (MUST from 2025-06-18; SHOULD before, hence WARN).
F2 = (
    Pin("FAIL", "lifecycle.negotiated-capabilities-only", ("2025-06-18", "2025-11-25")),
    Pin("WARN", "lifecycle.negotiated-capabilities-only-early", ("2024-11-05", "2025-03-26")),
)

# F3 (ST-5, MUST NOT): in a 2026-07-28 stdio session the client answers a server request
# (with a -32601 error response) instead of writing no response at all.
F3 = (
    Pin(
        "FAIL",
        "stateless.no-responses",
        MODERN,
        ("stdio",),
        scenario="stateless-server-request-and-cancel",
    ),
)

# F4 (RPC-6b, MUST): at 2025-03-26 a JSON-RPC batch from the server is rejected as a
# malformed message; the ping in it is never answered.
F4 = (Pin("FAIL", "features.batch-accepted", ("2025-03-26",)),)

# F5 (HM-5, MUST): 2026-07-28 HTTP: a request whose response stream broke is not re-issued.
F5 = (Pin("FAIL", "stateless.reissue-after-broken-stream", MODERN, ("http",)),)

# F6 (RPC-9, MUST): a result with an unknown resultType is surfaced as a valid result.
F6 = (Pin("FAIL", "stateless.unknown-result-type", MODERN),)

# F7 (TL-9, MUST; tasks are experimental in 2025-11-25): a tool whose taskSupport is
# "required" is called without task augmentation.
F7 = (Pin("FAIL", "tools.task-augmentation", ("2025-11-25",)),)

# F8 (HT-12, a lowercase "should"): given the URL of an HTTP+SSE server, the client does
# not fall back to the old transport after its POST is refused with 405.
F8 = (Pin("WARN", "http.legacy-fallback", ("2024-11-05",), ("sse-legacy",)),)

# F9 (RPC-9, MUST): a 2026-07-28 result without resultType (a legacy server's) is rejected
# by validation instead of being read as complete.
F9 = (Pin("FAIL", "stateless.absent-result-type-complete", MODERN),)

# F10 (ST-5, SHOULD): after the 2026-07-28 stdio server exits, the client does not start it
# again; every later request fails.
F10 = (Pin("WARN", "stdio.restart-after-exit", MODERN, ("stdio",)),)

# F11 (SHOULD): one POST whose connection breaks mid-response ends the whole session in the
# client: every later call fails with "Connection closed".
F11 = (Pin("WARN", "http.session-survives-dropped-connection", STREAMABLE, ("http",)),)

# F12 (RPC-1/RPC-4, MUST): a server request whose id is an integer beyond 2^53 is never
# answered (the id does not survive parsing as a double).
F12 = (Pin("FAIL", "jsonrpc.answer-ids-exact", HANDSHAKE),)

# F13 (LC-9, SHOULD): a response stream cut inside the response event is only noticed when
# the request times out.
F13 = (Pin("WARN", "http.dropped-connection-surfaced", STREAMABLE, ("http",)),)

# F14 (LC-7, LOG): asked to set a log level, the client sends logging/setLevel to a server
# that did not declare logging (the SDKs check no server capability before a request).
F14 = (
    Pin(
        "FAIL",
        "features.set-level-only-if-declared",
        HANDSHAKE,
        scenario="features-set-level-undeclared",
    ),
)

# F15 (LC-7, RES): asked to subscribe, the client sends resources/subscribe to a server whose
# resources capability does not declare subscribe.
F15 = (Pin("FAIL", "features.subscribe-only-if-declared", HANDSHAKE),)

# F16 (LC-7, COMPLETION): asked to complete an argument, the client sends
# completion/complete to a server that did not declare completions.
F16 = (Pin("FAIL", "features.complete-only-if-declared", STREAMABLE),)

# F17 (LISTEN, SHOULD): when the server ends a subscriptions/listen stream with its result,
# the client does not listen again (the mcp SDK leaves that to its application).
F17 = (
    Pin("WARN", "stateless.relisten-after-end", MODERN, ("http",), scenario="http-listen-relisten"),
)

# The scenarios that need a driver protocol 1.1 operation (features-set-level*, subscribe,
# completion, roots change, tasks, listen): a SKIP for a client that does not name it.
OPERATION_SCENARIOS = tuple(s.id for s in SCENARIOS if s.requires & OPERATIONS)


def _skipped(*scenarios: str) -> tuple[Pin, ...]:
    return tuple(Pin("SKIP", ANY, (*HANDSHAKE, *MODERN), scenario=s) for s in scenarios)


# The checks' own SKIP: both Python SDKs declare URL-mode elicitation whenever an
# elicitation callback is set, so the undeclared-mode check has nothing to judge.
URL_MODE_DECLARED = (Pin("SKIP", "features.elicitation-undeclared-mode", ("2025-11-25",)),)

# No client declares sampling.tools, so the tool-history check (for clients that offer tool
# use in sampling) has nothing to judge.
NO_SAMPLING_TOOLS = (Pin("SKIP", "features.sampling-tool-history-checked", ("2025-11-25",)),)


# A1: a driver that does not implement the contract's authorization option (the frozen v1
# copy of the TypeScript driver) declares no "auth": every item of the authorization
# scenarios is a SKIP (docs/findings.md, "Authorization").
NO_AUTH_DECLARED = tuple(
    Pin(
        "SKIP",
        ANY,
        ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"),
        ("http",),
        scenario=s.id,
    )
    for s in AUTH_SCENARIOS
)

# A2 (AUTH-PKCE, MUST from 2025-11-25): authorization server metadata without
# code_challenge_methods_supported, and the client authorizes there all the same.
A2 = (Pin("FAIL", "auth.pkce-unadvertised-refused", ("2025-11-25",), ("http",)),)


def _registration_refused(*methods: str) -> tuple[Pin, ...]:
    """A3: the client registers for a token endpoint authentication method the
    authorization server's metadata does not list; the registration is refused, so the
    connection fails and the method the client would use is never seen."""
    return tuple(
        Pin(
            "BLOCKED:client.connect",
            "auth.token-endpoint-auth-method",
            ("2025-06-18", "2025-11-25"),
            ("http",),
            scenario=f"auth-token-auth-{method}",
        )
        for method in methods
    )


# A4: the Python SDK (and fastmcp on it) answers a 401 invalid_token with a new
# authorization, never with its refresh token, so the refresh checks have nothing to judge.
NO_REFRESH_ON_401 = (
    Pin(
        "N/A",
        "auth.refresh-token-rotated",
        ("2025-06-18", "2025-11-25", "2026-07-28"),
        ("http",),
        scenario="auth-refresh",
    ),
    Pin("N/A", "auth.refresh-grant-registered", MODERN, ("http",), scenario="auth-refresh"),
)

# A5 (AUTH-step-up, SHOULD): on 403 insufficient_scope the TypeScript SDK refreshes its token
# (without the scope) and retries once with a token that still lacks it; it never asks for
# the scope the challenge names.
A5 = (Pin("WARN", "auth.step-up", ("2025-11-25",), ("http",), scenario="auth-step-up"),)


# -- verdicts that are not judged (docs/findings.md, "Verdicts re-derived after the verdict
# rules of issue 9"): each was a vacuous PASS before --------------------------------------------

# N1: the client contract has no operation that asks a client to set a log level, and no
# client sends logging/setLevel on its own: "only if the server declared logging" has
# nothing to judge.
# Only features-set-level-undeclared asks for a level (driver protocol 1.1).
NO_SET_LEVEL = tuple(
    Pin("N/A", "features.set-level-only-if-declared", HANDSHAKE, scenario=s)
    for s in ("features-server-requests", "features-progress", "features-progress-2024")
)

# N4: the mcp SDK does not opt in to log messages at 2026-07-28 (no `log_level`: no
# `_meta` logLevel), so a conformant server sends it none: log tolerance has nothing to
# judge there. fastmcp opts in and is judged.
NO_LOG_OPT_IN = (
    Pin("N/A", "features.log-messages-accepted", MODERN, scenario="features-logging-2026"),
)

# N3: a client without 2026-07-28 (the TypeScript SDK) sends no server/discover probe, so no
# handshake-era server ever refuses one: the fallback after a refused probe has nothing to
# judge (its companion stateless.era-probe is a SKIP for such a client, R3).
NO_ERA_PROBE = (Pin("N/A", "stateless.era-fallback", ("2025-11-25",)),)

# N5: the change notification of http-listen-relisten goes out on the second listen stream;
# a client that does not listen again (F17) is sent none, so whether it surfaces one has
# nothing to judge.
NO_SECOND_LISTEN = (
    Pin(
        "N/A",
        "stateless.listen-notifications-surfaced",
        MODERN,
        ("http",),
        scenario="http-listen-relisten",
    ),
)

# N6: re-listening is owed to a server the client started again; mcp does not start it
# again (F10), so after the exit there is no new process to listen on.
NO_RESTART_TO_RELISTEN_ON = (
    Pin(
        "N/A",
        "stateless.relisten-after-restart",
        MODERN,
        ("stdio",),
        scenario="stdio-listen-restart",
    ),
)


# docs/findings.md, "Verdicts under review" (questions about the checks; all resolved):
# R1: a dual-era client's server/discover probe before initialize is what the 2026-07-28
# revision asks of it (LC-M3), no breach of LC-1.
# R2: re-listing after list_changed is not normative; the check now asks only that the list
# the application gets after the notification is fetched anew (all three clients do).
# R3: stateless.era-probe applies to dual-era clients only; a client without 2026-07-28
# gets a SKIP.
R3 = (Pin("SKIP", "stateless.era-probe", ("2025-11-25",), ("stdio",)),)
# R4: a client that refuses (locally, sending nothing) to call a task-required tool outside
# a task does not breach TL-9; the TypeScript SDK does so and passes.

# The mcp SDK adapter has every 1.1 operation but tasks (the SDK has no task requests).
_PYTHON_SDK = (
    *F1,
    *F2,
    *F3,
    *F4,
    *F5,
    *F6,
    *F7,
    *F8,
    *F9,
    *F10,
    *F11,
    *URL_MODE_DECLARED,
    *NO_SAMPLING_TOOLS,
    *NO_SET_LEVEL,
    *A2,
    *NO_REFRESH_ON_401,
)
MCP_AUTO = (
    *_PYTHON_SDK,
    *_registration_refused("post"),
    *F14,
    *F15,
    *F16,
    *F17,
    *NO_SECOND_LISTEN,
    *NO_RESTART_TO_RELISTEN_ON,
    *_skipped("tools-tasks-polling"),
)

# fastmcp (built on the mcp SDK) gets the same verdicts; on its SSE transport it treats
# "auto" as "legacy" and sends no probe, which changes no verdict. fastmcp.Client has no
# resource subscription, no listen and no 2025-11-25 tasks (docs/findings.md, "Driver
# protocol 1.1"). It opts in to log messages at 2026-07-28, so it has no N4. Its OAuth
# helper registers as a public client ("none") where mcp names no method (so
# client_secret_basic): each is refused where the server does not have that method (A3).
FASTMCP = (
    *_PYTHON_SDK,
    *_registration_refused("basic", "post"),
    *F14,
    *F16,
    *_skipped(
        "features-subscribe",
        "features-subscribe-undeclared",
        "tools-tasks-polling",
        "http-listen-relisten",
        "listen-two-subscriptions",
        "stdio-listen-restart",
    ),
)
MCP_AUTO = (*MCP_AUTO, *NO_LOG_OPT_IN)

# The TypeScript SDK 1.32 has no 2026-07-28 revision, and its driver says so: every item
# at 2026-07-28 is a SKIP.
_TYPESCRIPT_SDK = (
    *F1,
    *F2,
    *F4,
    *F8,
    *F12,
    *F13,
    *NO_SAMPLING_TOOLS,
    *NO_SET_LEVEL,
    *NO_ERA_PROBE,
    *R3,
    Pin("SKIP", ANY, MODERN),
)
# Its 1.1 driver has every operation but listen (2026-07-28 only); tasks through the SDK's
# experimental task API.
TYPESCRIPT_SDK = (
    *_TYPESCRIPT_SDK,
    *F14,
    *F15,
    *F16,
    *A2,
    *_registration_refused("post"),
    *A5,
)
# The v1 driver: what it passed before, and SKIP wherever a 1.1 operation is needed.
TYPESCRIPT_SDK_V1 = (*_TYPESCRIPT_SDK, *NO_AUTH_DECLARED, *_skipped(*OPERATION_SCENARIOS))


def _expected(pins: tuple[Pin, ...], items: set[Key]) -> tuple[dict[Key, str], list[Pin]]:
    """The pinned status of every item that is not a PASS, and the pins that cover no item
    of the suite (stale: the suite changed under them)."""
    expected: dict[Key, str] = {}
    stale = []
    for pin in pins:
        covered = {key for key in items if pin.covers(key)}
        if not covered:
            stale.append(pin)
        for key in covered:
            assert expected.setdefault(key, pin.status) == pin.status, f"two pins for {key}"
    return expected, stale


# -- running the suite -------------------------------------------------------------------------


def _suite_items() -> set[Key]:
    """Every item the plugin collects for a full run (no filter)."""
    return {
        (check_id, scenario.id, revision, transport)
        for scenario in SCENARIOS
        for revision, transport in scenario.matrix()
        for check_id in scenario.checks
        if CATALOGUE[check_id].applies(revision, transport)
    }


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
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *client: str
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
        return _run_in(pytester, scratch, *client)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_in(
    pytester: pytest.Pytester, scratch: Path, *client: str
) -> tuple[pytest.RunResult, dict[Key, dict[str, object]]]:
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        *client,
        f"--mcp-report={report}",
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
    items = _suite_items()
    expected, stale = _expected(pins, items)
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
        pytester, monkeypatch, "--mcp-client=harness.clients._sdk_mcp:McpSdkClient"
    )
    _assert_pinned(result, verdicts, MCP_AUTO, "mcp (python sdk)")


def test_fastmcp(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _require("fastmcp", "fastmcp")
    result, verdicts = _run_suite(
        pytester, monkeypatch, "--mcp-client=harness.clients._sdk_fastmcp:FastMcpClient"
    )
    _assert_pinned(result, verdicts, FASTMCP, "fastmcp")


def test_official_typescript_sdk(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = ts_sdk_driver_missing()
    if missing is not None:
        pytest.fail(missing)
    driver = shlex.join([str(NODE), str(TS_SDK_DRIVER / "driver.mjs")])
    result, verdicts = _run_suite(pytester, monkeypatch, f"--mcp-driver={driver}")
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
    result, verdicts = _run_suite(pytester, monkeypatch, f"--mcp-driver={driver}")
    _assert_pinned(result, verdicts, TYPESCRIPT_SDK_V1, "@modelcontextprotocol/sdk")
