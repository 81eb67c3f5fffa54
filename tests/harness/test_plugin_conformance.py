"""The plugin's --mcp-conformance-client, run through pytester: a conformance command run as
the official runner runs it, once per served client scenario, its items, its summary lines
and tier figure, its usage errors, and a hang reported as one."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

QUIET = ["-p", "no:cacheprovider"]
# The runner's scored client sets (tests/e2e pins harness.official.SCORED_CLIENT to its
# requirements files; importing harness here would import the suite twice under pytester).
AUTH_BOTH = (
    "metadata-default", "metadata-var1", "metadata-var2", "metadata-var3", "basic-cimd",
    "scope-from-www-authenticate", "scope-from-scopes-supported",
    "scope-omitted-when-undefined", "scope-step-up", "scope-retry-limit",
    "token-endpoint-auth-basic", "token-endpoint-auth-post", "token-endpoint-auth-none",
    "pre-registration",
)  # fmt: skip
AUTH_MODERN = (
    "resource-mismatch", "offline-access-scope", "offline-access-not-supported",
    "authorization-server-migration", "iss-supported", "iss-not-advertised",
    "iss-supported-missing", "iss-wrong-issuer", "iss-unexpected", "iss-normalized",
    "metadata-issuer-mismatch",
)  # fmt: skip
SCORED = {
    "2025-11-25": (
        "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
        *(f"auth/{name}" for name in AUTH_BOTH),
    ),
    "2026-07-28": (
        "tools_call", "request-metadata", "sep-2322-client-request-state",
        "http-standard-headers", "http-custom-headers", "http-invalid-tool-headers",
        "json-schema-ref-no-deref", *(f"auth/{name}" for name in AUTH_BOTH + AUTH_MODERN),
    ),
}  # fmt: skip
INITIALIZE_ONLY = ["--mcp-revision=2025-11-25", "-k", "conformance-initialize", *QUIET]

# A conformance client without an SDK: the handshake, over plain HTTP, for `initialize`.
RAW_CLIENT = textwrap.dedent(
    """
    import json, os, sys, urllib.request
    url = sys.argv[-1]
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    def post(body):
        request = urllib.request.Request(url, json.dumps(body).encode(), headers)
        return urllib.request.urlopen(request, timeout=5).read()
    if os.environ["MCP_CONFORMANCE_SCENARIO"] == "initialize":
        post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1.0.0"}}})
        headers["mcp-protocol-version"] = "2025-11-25"
        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    """
)


def _client(pytester: pytest.Pytester, source: str = RAW_CLIENT) -> str:
    path = pytester.path / "conformance_client.py"
    path.write_text(source, encoding="utf-8")
    return f"--mcp-conformance-client={sys.executable} {path}"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--mcp-conformance-client=true", "--mcp-client=harness.clients:ReferenceClient"],
            "--mcp-conformance-client runs the official client scenarios; --mcp-client runs "
            "the suite's: give one of them, not both",
        ),
        (
            ["--mcp-conformance-client=true", "--mcp-driver=node d.mjs"],
            "--mcp-driver runs the suite's",
        ),
        (["--mcp-conformance-timeout=100"], "--mcp-conformance-timeout goes with"),
        (
            ["--mcp-conformance-client=true", "--mcp-conformance-timeout=0"],
            "--mcp-conformance-timeout must be a positive number of milliseconds, not 0",
        ),
        (["--mcp-conformance-client=  "], "--mcp-conformance-client is empty"),
        (
            ["--mcp-conformance-client=true", "--mcp-transport=stdio"],
            "the official client scenarios run over HTTP only",
        ),
        (
            ["--mcp-conformance-client=true", "--mcp-revision=2024-11-05"],
            "no official client scenario is served here at 2024-11-05; they are served at "
            "2025-11-25, 2026-07-28",
        ),
        (
            ["--mcp-conformance-client=true", "--mcp-baseline=b.json"],
            "--mcp-baseline b.json: with --mcp-conformance-client the baseline is the official "
            "runner's expected-failures file",
        ),
        (
            ["--mcp-conformance-client=true", "--mcp-baseline=missing.yml"],
            "--mcp-baseline missing.yml: no such file",
        ),
        (
            ["--mcp-conformance-client=true", "--mcp-conformance-report=r.txt"],
            "the file name must end in .json",
        ),
    ],
)
def test_usage_errors_name_the_problem(
    pytester: pytest.Pytester, options: list[str], message: str
) -> None:
    result = pytester.runpytest(*options, *QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_client_that_does_nothing_passes_nothing(pytester: pytest.Pytester) -> None:
    """The runner's line passes `initialize` with no traffic at all; here the scenario
    fails: its expected id was never judged."""
    report = pytester.path / "conformance.json"
    result = pytester.runpytest(
        "--mcp-conformance-client=true", f"--mcp-conformance-report={report}", *INITIALIZE_ONLY
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "FAILED mcp-testbench::conformance-initialize-2025-11-25::scenario" in out
    assert "✓ initialize: 0 passed, 0 failed [2025-11-25]; here: not passed: 0 of 1" in out
    assert (
        "mcp-testbench: tier figure: 0 of 18 scored client scenarios at 2025-11-25; 17 served "
        "but not run (not counted as passed)" in out
    )
    payload = json.loads(report.read_text("utf-8"))
    (scenario,) = payload["scenarios"]
    assert scenario["runner_line"] is True
    assert scenario["passes"] is False
    assert scenario["judged"] == []


def test_a_raw_client_passes_initialize_with_its_items(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(_client(pytester), "-rA", *INITIALIZE_ONLY)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, out
    node = "mcp-testbench::conformance-initialize-2025-11-25"
    for item in ("official:mcp-client-initialization", "jsonrpc.messages-valid", "scenario"):
        assert f"PASSED {node}::{item}" in out
    assert "✓ initialize: 1 passed, 0 failed [2025-11-25]; here: passed: 1 of 1" in out
    assert "tier figure: 1 of 18 scored client scenarios at 2025-11-25" in out


def test_a_client_that_outlives_the_time_out_is_a_hang(pytester: pytest.Pytester) -> None:
    stubborn = (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"
    )
    result = pytester.runpytest(
        _client(pytester, stubborn), "--mcp-conformance-timeout=200", *INITIALIZE_ONLY
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # Its official id and the scenario are hung, ours not judged: no verdict for the client.
    assert "2 hung, 7 blocked" in out
    assert "7 items BLOCKED by hang" in out
    assert (
        "  ! initialize [2025-11-25]: hung: the client did not exit after the time-out's "
        "SIGTERM (killed)" in out
    )
    assert "1 hung or not judged" in out
    verbose = pytester.runpytest(
        _client(pytester, stubborn), "--mcp-conformance-timeout=200", "-v", *INITIALIZE_ONLY
    )
    assert "conformance-initialize-2025-11-25::scenario HUNG" in verbose.stdout.str()


def test_the_run_lists_every_served_scenario(pytester: pytest.Pytester) -> None:
    """Every scenario of both scored sets is served, each at the revision of its set."""
    result = pytester.runpytest("--mcp-conformance-client=true", "--collect-only", "-q", *QUIET)
    runs = {line.split("::")[1] for line in result.stdout.lines if line.count("::") == 2}
    assert runs == {
        f"conformance-{name}-{revision}" for revision, names in SCORED.items() for name in names
    }
    assert len(runs) == 18 + 32
    assert (
        "mcp-testbench::conformance-tools_call-2026-07-28::official:tool-add-numbers"
        in result.stdout.lines
    )


def test_the_items_of_one_revision(pytester: pytest.Pytester, tmp_path: Path) -> None:
    result = pytester.runpytest(
        "--mcp-conformance-client=true", "--mcp-revision=2026-07-28", "--collect-only", "-q", *QUIET
    )
    runs = {line.split("::")[1] for line in result.stdout.lines if line.count("::") == 2}
    assert runs == {f"conformance-{name}-2026-07-28" for name in SCORED["2026-07-28"]}


# -- the runner's expected-failures file as the baseline ------------------------------------------

# The raw client offering 2025-03-26, a revision the runner's initialize does not take:
# mcp-client-initialization FAILs, while no check of ours finds anything wrong with it.
OLD_VERSION_CLIENT = RAW_CLIENT.replace(
    '"protocolVersion": "2025-11-25"', '"protocolVersion": "2025-03-26"'
)


def _expecting(pytester: pytest.Pytester, *entries: str) -> str:
    path = pytester.path / "expected-failures.yml"
    path.write_text("client:\n" + "".join(f"  - {e}\n" for e in entries), encoding="utf-8")
    return f"--mcp-baseline={path}"


def test_a_listed_failure_is_expected_and_the_run_passes(pytester: pytest.Pytester) -> None:
    assert OLD_VERSION_CLIENT != RAW_CLIENT
    result = pytester.runpytest(
        _client(pytester, OLD_VERSION_CLIENT),
        _expecting(pytester, "initialize:mcp-client-initialization"),
        "-rx",
        *INITIALIZE_ONLY,
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, out
    node = "mcp-testbench::conformance-initialize-2025-11-25"
    assert f"XFAIL {node}::official:mcp-client-initialization" in out
    assert f"XFAIL {node}::scenario" in out
    assert "✗ initialize: 0 passed, 1 failed [2025-11-25]" in out
    assert "  Expected failures (in baseline):\n    ~ initialize:mcp-client-initialization" in out
    assert "  Baseline check passed: all failures are expected." in out


def test_an_unlisted_failure_fails_as_the_runner_says(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        _client(pytester, OLD_VERSION_CLIENT), _expecting(pytester, "tools_call"), *INITIALIZE_ONLY
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "FAILED mcp-testbench::conformance-initialize-2025-11-25::scenario" in out
    assert "  Unexpected failures (not in baseline):\n    ✗ initialize" in out
    assert "Version mismatch: expected 2025-11-25, got '2025-03-26'" in out


def test_a_listed_check_that_passes_is_a_stale_entry(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        _client(pytester),
        _expecting(pytester, "initialize:mcp-client-initialization"),
        *INITIALIZE_ONLY,
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    node = "mcp-testbench::conformance-initialize-2025-11-25"
    assert f"FAILED {node}::official:mcp-client-initialization" in out
    assert "stale baseline entry 'initialize:mcp-client-initialization'" in out
    assert "it now passes; remove it" in out
    assert (
        "  Stale baseline entries (now passing - remove from baseline):\n"
        "    ✓ initialize:mcp-client-initialization" in out
    )


def test_a_redundant_entry_is_refused_as_the_runner_refuses_it(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--mcp-conformance-client=true",
        _expecting(pytester, "initialize", "initialize:mcp-client-initialization"),
        *QUIET,
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "'initialize' expects the whole scenario to fail, so" in result.stderr.str()
