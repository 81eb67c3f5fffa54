"""End to end: a TypeScript SDK conformance client judged by the official runner and by
mcp-testbench agree.

examples/conformance-clients/typescript_sdk_client.mjs (on the official TypeScript SDK the
example driver pins, run on the pinned Node 22) and its variants with one defect each go
through the pinned official runner scenario by scenario and through `mcp-testbench run
--conformance-client`, read back and compared as for the Python SDK client
(test_e2e_conformance_clients.py, whose helpers these are): per served scenario and
revision, the runner's summary line (its counts included) and its tier pass must be the
same on both sides, and each variant must fail exactly the scenario its defect is about.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from _served import NODE, ts_sdk_driver_missing
from test_e2e_conformance_clients import RUN_BOUND, _checks, _line, _ours, _runner, _tier

from harness.official import SCORED_CLIENT, SERVED

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "conformance-clients" / "typescript_sdk_client.mjs"

# The client, and its variants: each defect is caught by the scenario named beside it.
VARIANTS = {
    "typescript-sdk": None,
    "no-tool-call": "tools_call",
    "no-defaults": "elicitation-sep1034-client-defaults",
    "early-reconnect": "sse-retry",
    "old-protocol-version": "initialize",
    "no-initialized": None,  # the runner sees nothing wrong: the suite's checks do
    "drop-request-state": "sep-2322-client-request-state",
}
# The scenarios the client implements. A served scenario outside them (an authorization
# scenario with a context, as they come) ends it with code 1: both sides must still agree,
# and it never counts for the tier figure.
IMPLEMENTED = {
    "2025-11-25": (
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
    ),
    "2026-07-28": (
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
    ),
}
# What the suite's own checks find on the same traffic that the runner's cannot.
OURS_ONLY = {"no-initialized": ("initialize", "lifecycle.initialized-notification")}


@pytest.fixture(autouse=True)
def _tools() -> None:
    # Missing tools fail, never skip: a skipped e2e test looks like a green build.
    missing = ts_sdk_driver_missing()
    if missing:
        pytest.fail(missing)


def _command(variant: str) -> str:
    defect = "" if variant == "typescript-sdk" else f" --defect {variant}"
    return f"{NODE} {CLIENT}{defect}"


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_runner_and_mcp_testbench_agree_scenario_by_scenario(
    variant: str, tmp_path: Path
) -> None:
    command = _command(variant)
    ours = _ours(command, tmp_path / "ours")
    differences = []
    for scenario in SERVED:
        for revision in scenario.revisions:
            out = tmp_path / f"runner-{scenario.name}-{revision}"
            run = _runner(
                "--command", command, "--scenario", scenario.name,
                "--spec-version", revision, "-o", str(out), cwd=tmp_path,
            )  # fmt: skip
            checks = _checks(out, scenario.name)
            theirs = _line(scenario.name, checks)
            mine = ours[(scenario.name, revision)]
            if theirs != mine["line"] or _tier(checks) != mine["tier"]:
                differences.append(
                    f"{scenario.name} at {revision}: runner {theirs!r} (tier {_tier(checks)}), "
                    f"mcp-testbench {mine['line']!r} (tier {mine['tier']})\n"
                    f"  runner stderr: {run.stderr[-600:]}"
                )
            if scenario.name in IMPLEMENTED[revision]:
                caught = VARIANTS[variant]
                assert mine["runner_line"] is (caught != scenario.name), (
                    f"{variant}: {scenario.name} at {revision}: {mine['outcome']}"
                )
            else:
                assert not mine["tier"], f"{scenario.name} at {revision}: {mine['outcome']}"
    assert differences == []
    if variant in OURS_ONLY:
        scenario_name, check = OURS_ONLY[variant]
        results = json.loads((tmp_path / "ours" / "results.json").read_text("utf-8"))["results"]
        (found,) = [
            r
            for r in results
            if r["check"] == check and r["scenario"] == f"conformance:{scenario_name}"
        ]
        assert found["status"] == "FAIL", found


def test_the_tier_figure_is_the_runners_count(tmp_path: Path) -> None:
    command = _command("typescript-sdk")
    ours = _ours(command, tmp_path / "ours")
    for revision, scored in SCORED_CLIENT.items():
        out = tmp_path / f"runner-{revision}"
        run = _runner(
            "--command", command, "--requirements", revision, "-o", str(out), cwd=tmp_path
        )
        theirs = {name for name in scored if _tier(_checks(out, name))}
        served = {s.name for s in SERVED if revision in s.revisions}
        mine = {name for name in served if ours[(name, revision)]["tier"]}
        # The client implements only the served scenarios: the runner passes no other.
        assert theirs == mine, run.stdout[-2000:]
        for name in served:
            assert ours[(name, revision)]["line"] in run.stdout


@pytest.mark.parametrize(
    ("argument", "scenario", "said"),
    [
        ("", "no-such-scenario", 'does not implement the scenario "no-such-scenario"'),
        ("--defect no-such-defect", "initialize", 'unknown defect "no-such-defect"'),
    ],
)
def test_what_the_client_cannot_do_ends_it_with_a_reason(
    argument: str, scenario: str, said: str
) -> None:
    # Nothing listens on the URL: the client must refuse before it connects anywhere.
    done = subprocess.run(
        [str(NODE), str(CLIENT), *argument.split(), "http://127.0.0.1:9/mcp"],
        env={**os.environ, "MCP_CONFORMANCE_SCENARIO": scenario},
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert said in done.stderr
