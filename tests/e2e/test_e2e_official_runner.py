"""End to end: the official MCP conformance runner's server scenarios against our mock.

`mcp-testbench serve fixtures/conformance/server-<revision>.json` (a real subprocess, no
`--revision`; the scripts are written by tools/conformance_scripts.py) is tested by
`@modelcontextprotocol/conformance` (pinned in tests/e2e-node, run on the pinned Node 22)
with every generic server scenario of each revision: `--suite all` at `--spec-version
<revision>`, which is every scenario the runner lists for that revision except the
optional extensions. Each scenario is one item; it passes when none of its
checks is a FAILURE or a WARNING (the runner's `wire-schema-valid` check, in every
scenario, validates each message the mock sent against the official schema).

A scenario that is itself wrong is listed in EXPECTED_FAILURES with the spec sentence
that shows it, as a strict expected failure: it must really fail.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _machine import within
from _served import NODE, NODE_TOOLS, RUNNER, node_tools_missing, serving

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "fixtures" / "conformance"
# Seconds for one revision's whole run (about 2 s on an idle machine): a bound.
RUN_BOUND = within(300)
# Per scenario, passed to the runner (its default is 30 s).
SCENARIO_TIMEOUT_MS = 60_000

COMMON = (
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
)
HANDSHAKE = (
    "server-initialize",
    "server-session-lifecycle",
    "logging-set-level",
    "ping",
    "tools-call-with-logging",
    "tools-call-sampling",
    "tools-call-elicitation",
    "resources-subscribe",
    "resources-unsubscribe",
)
# The generic server scenarios of the pinned runner, by revision (`list --server
# --spec-version R`, less the extensions); test_the_pins_are_the_runners_list keeps them so.
SCENARIOS: dict[str, tuple[str, ...]] = {
    "2025-06-18": (*HANDSHAKE, *COMMON),
    "2025-11-25": (
        *HANDSHAKE,
        *COMMON,
        "json-schema-2020-12",
        "elicitation-sep1034-defaults",
        "server-sse-polling",
        "server-sse-multiple-streams",
        "elicitation-sep1330-enums",
        "dns-rebinding-protection",
    ),
    "2026-07-28": (
        *COMMON,
        "server-stateless",
        "json-schema-2020-12",
        "server-sse-multiple-streams",
        "sep-2164-resource-not-found",
        "dns-rebinding-protection",
        "caching",
        "http-header-validation",
        "http-custom-header-server-validation",
        "input-required-result-basic-elicitation",
        "input-required-result-basic-sampling",
        "input-required-result-basic-list-roots",
        "input-required-result-request-state",
        "input-required-result-multiple-input-requests",
        "input-required-result-multi-round",
        "input-required-result-missing-input-response",
        "input-required-result-non-tool-request",
        "input-required-result-result-type",
        "input-required-result-unsupported-methods",
        "input-required-result-tampered-state",
        "input-required-result-capability-check",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
    ),
}

# (revision, scenario) -> why the scenario itself is wrong: the spec sentence it breaks.
EXPECTED_FAILURES: dict[tuple[str, str], str] = {}

Checks = list[dict[str, Any]]
_TIMESTAMPED = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def _require_node_tools() -> None:
    # Missing tools fail, never skip: a skipped e2e test looks like a green build.
    missing = node_tools_missing()
    if missing:
        pytest.fail(missing)


def _node(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE), str(RUNNER), *args],
        cwd=NODE_TOOLS,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _run_revision(revision: str, out: Path) -> dict[str, Checks]:
    """Every generic scenario of `revision` against a fresh `serve`: checks by scenario."""
    script = SCRIPTS / f"server-{revision}.json"
    # No --revision: the session gets the revision the runner speaks, as a developer's would.
    with serving(script, "--quiet") as served:
        run = _node(
            "server",
            "--url",
            served.url,
            "--suite",
            "all",
            "--spec-version",
            revision,
            "--timeout",
            str(SCENARIO_TIMEOUT_MS),
            "-o",
            str(out),
            timeout=RUN_BOUND,
        )
    results: dict[str, Checks] = {}
    for folder in sorted(out.iterdir()):
        found = _TIMESTAMPED.match(folder.name)
        if found and (folder / "checks.json").is_file():
            results[found["scenario"]] = json.loads((folder / "checks.json").read_text())
    assert results, (
        f"the runner wrote no results (exit {run.returncode}):\n{run.stdout}{run.stderr}"
    )
    return results


@pytest.fixture(scope="module")
def runner_results(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Checks]]:
    """One runner run per revision and test process, shared by that revision's items."""
    done: dict[str, dict[str, Checks]] = {}

    def results(revision: str) -> dict[str, Checks]:
        if revision not in done:
            _require_node_tools()
            done[revision] = _run_revision(revision, tmp_path_factory.mktemp(f"runner-{revision}"))
        return done[revision]

    return results


def _describe(check: dict[str, Any]) -> str:
    message = check.get("errorMessage") or json.dumps(check.get("details"))[:400]
    return f"{check['id']} {check['status']}: {message}"


def _params() -> list[Any]:
    params = []
    for revision, scenarios in SCENARIOS.items():
        for scenario in scenarios:
            marks = []
            reason = EXPECTED_FAILURES.get((revision, scenario))
            if reason is not None:
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            params.append(
                pytest.param(revision, scenario, id=f"{revision}-{scenario}", marks=marks)
            )
    return params


@pytest.mark.parametrize(("revision", "scenario"), _params())
def test_scenario_passes(
    runner_results: Callable[[str], dict[str, Checks]], revision: str, scenario: str
) -> None:
    results = runner_results(revision)
    assert scenario in results, (
        f"the runner ran no {scenario} at {revision}; it ran: {', '.join(sorted(results))}"
    )
    checks = results[scenario]
    assert checks, f"{scenario} at {revision} reported no checks"
    bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, f"{scenario} at {revision}:\n" + "\n".join(map(_describe, bad))


@pytest.mark.parametrize("revision", sorted(SCENARIOS))
def test_the_pins_are_the_runners_list(revision: str) -> None:
    """The pinned scenarios are exactly the runner's generic ones at that revision, so a
    new runner version cannot add or drop a scenario unnoticed."""
    _require_node_tools()
    listed = _node("list", "--server", "--spec-version", revision, timeout=60)
    assert listed.returncode == 0, listed.stderr
    generic = [
        line.split()[1]
        for line in listed.stdout.splitlines()
        if line.startswith("  - ") and "[extension]" not in line
    ]
    assert sorted(generic) == sorted(SCENARIOS[revision])


def test_the_shipped_scripts_are_what_their_tool_writes() -> None:
    """The three scripts are written by tools/conformance_scripts.py (they share most
    steps); an edit to one file alone would let them drift apart."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "conformance_scripts.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
