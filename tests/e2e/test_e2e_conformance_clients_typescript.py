"""End to end: a TypeScript SDK conformance client judged by the official runner and by
mcp-testbench agree.

examples/conformance-clients/typescript_sdk_client.mjs (on the official TypeScript SDK the
example driver pins, run on the pinned Node 22) and its variants with one defect each go
through the pinned official runner (one `--requirements` run per scored set) and through
`mcp-testbench run --conformance-client`, read back and compared as for the Python SDK client
(test_e2e_conformance_clients.py, whose helpers these are): per served scenario and
revision, the runner's summary line (its counts included) and its tier pass must be the
same on both sides, and each variant must fail exactly the scenario its defect is about.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from _served import NODE, ts_sdk_driver_missing
from test_e2e_conformance_clients import (
    RUN_BOUND,
    agree_scenario_by_scenario,
    tier_figure_is_the_runners,
)

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
AUTH_IMPLEMENTED = (
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
    "auth/scope-step-up",
    "auth/scope-retry-limit",
)
# 2026-07-28 only. The client does the other five too (auth/iss-supported-missing,
# iss-wrong-issuer, iss-unexpected, iss-normalized, metadata-issuer-mismatch), where the SDK
# neither compares the RFC 9207 iss nor the metadata's issuer (docs/findings.md): both sides
# fail them alike, and they are held to the rule of a scenario it does not pass.
AUTH_MODERN_PASSED = (
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
)
IMPLEMENTED = {
    "2025-11-25": (
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        *AUTH_IMPLEMENTED,
    ),
    "2026-07-28": (
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        *AUTH_IMPLEMENTED,
        *AUTH_MODERN_PASSED,
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
    agree_scenario_by_scenario(
        _command(variant),
        VARIANTS[variant],
        tmp_path,
        implemented=IMPLEMENTED,
        ours_only=OURS_ONLY.get(variant),
    )


def test_the_tier_figure_is_the_runners_count(tmp_path: Path) -> None:
    tier_figure_is_the_runners(_command("typescript-sdk"), tmp_path)


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
