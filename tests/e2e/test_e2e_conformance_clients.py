"""End to end: a conformance client judged by the official runner and by mcp-testbench agree.

examples/conformance-clients/python_sdk_client.py (on the official Python SDK) and its
variants with one defect each are run through the pinned official runner
(`@modelcontextprotocol/conformance`, tests/e2e-node, on the pinned Node 22) as an SDK's
CI job runs it, one `client --requirements REVISION -o DIR` per scored set (each
scenario's checks.json read back), and through
`mcp-testbench run --conformance-client` (its conformance.json read back). For every
scenario both serve, the runner's `--requirements` line (no FAILURE, no WARNING: the same
rule as its checks.json) and its summary line's counts must be the same on both sides, and
so must the tier figure's pass or fail. The ids and the scored sets mcp-testbench keeps
must be the pinned runner's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _machine import within
from _served import NODE, RUNNER, node_tools_missing

from harness.official import SCORED_CLIENT, SERVED

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "examples" / "conformance-clients" / "python_sdk_client.py"
RUN_BOUND = within(300)
FEW_AT_ONCE = Path(__file__).resolve().with_name("few_at_once.py")
PACKAGE = RUNNER.parent.parent

# The client, and its variants: each defect is caught by the scenario named beside it.
VARIANTS = {
    "python-sdk": None,
    "string-arguments": "tools_call",
    "decline-elicitation": "elicitation-sep1034-client-defaults",
    "no-reconnect": "sse-retry",
    "early-reconnect": "sse-retry",
    "no-client-version": "initialize",
    "no-version-header": None,  # the runner sees nothing wrong: the suite's checks do
    # 2026-07-28
    "altered-request-state": "sep-2322-client-request-state",
    "no-retry": "request-metadata",
    "call-invalid-tool": "http-invalid-tool-headers",
    "deref-schema": "json-schema-ref-no-deref",
}
# What the suite's own checks find on the same traffic that the runner's cannot.
OURS_ONLY = {"no-version-header": ("sse-retry", "http.protocol-version-header")}


@pytest.fixture(autouse=True)
def _tools() -> None:
    # Missing tools fail, never skip: a skipped e2e test looks like a green build.
    missing = node_tools_missing()
    if missing:
        pytest.fail(missing)


def _command(variant: str) -> str:
    defect = "" if variant == "python-sdk" else f" --defect {variant}"
    return f"{sys.executable} {CLIENT}{defect}"


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE), str(RUNNER), "client", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
        check=False,
    )


def _checks(folder: Path, scenario: str) -> list[dict[str, Any]]:
    """The checks.json the runner wrote for `scenario` under `folder` (`-o`)."""
    found = [
        p
        for p in folder.rglob("checks.json")
        if re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", str(p.parent.relative_to(folder))) == scenario
    ]
    assert len(found) == 1, f"{scenario}: {found}"
    checks: list[dict[str, Any]] = json.loads(found[0].read_text("utf-8"))
    return checks


def _line(scenario: str, checks: list[dict[str, Any]]) -> str:
    """The runner's summary line for a scenario, from its checks (its own code's rule)."""
    counts = {
        s: sum(1 for c in checks if c["status"] == s) for s in ("SUCCESS", "FAILURE", "WARNING")
    }
    mark = "✓" if counts["FAILURE"] == 0 and counts["WARNING"] == 0 else "✗"
    warnings = f", {counts['WARNING']} warnings" if counts["WARNING"] else ""
    return f"{mark} {scenario}: {counts['SUCCESS']} passed, {counts['FAILURE']} failed{warnings}"


def _tier(checks: list[dict[str, Any]]) -> bool:
    statuses = [c["status"] for c in checks]
    return "FAILURE" not in statuses and "SUCCESS" in statuses


def _ours(command: str, folder: Path) -> dict[tuple[str, str], dict[str, Any]]:
    script = Path(sys.executable).with_name("mcp-testbench")
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "harness.cli"]
    done = subprocess.run(
        [*launcher, "run", "--conformance-client", command, "--report-dir", str(folder)],
        cwd=folder.parent,
        capture_output=True,
        text=True,
        timeout=RUN_BOUND,
        check=False,
    )
    report = folder / "conformance.json"
    assert report.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    payload = json.loads(report.read_text("utf-8"))
    return {(s["scenario"], s["revision"]): s for s in payload["scenarios"]}


def _runner_sets(command: str, tmp_path: Path) -> tuple[dict[tuple[str, str], Any], dict[str, str]]:
    """The runner's checks for every scenario of both scored sets, by (scenario, revision):
    one `--requirements` run per set, as an SDK's CI job runs it (every scenario of a
    set at once), and what the runs printed."""
    found: dict[tuple[str, str], Any] = {}
    said = {}
    # The runner starts every scenario of a set at once: a few of the clients run at a
    # time (few_at_once.py), the others wait for a slot, so that the machine stays usable
    # for the rest of the test run; the runner's per-scenario bound, a harness setting,
    # covers the wait and grows with the load as ours do.
    slots = tmp_path / "slots"
    queued = f"{sys.executable} {FEW_AT_ONCE} {slots} 4 {command}"
    for revision, scored in SCORED_CLIENT.items():
        out = tmp_path / f"runner-{revision}"
        bound = str(int(within(120) * 1000))
        run = _runner(
            "--command", queued, "--requirements", revision, "--timeout", bound,
            "-o", str(out), cwd=tmp_path,
        )  # fmt: skip
        for name in scored:
            found[(name, revision)] = _checks(out, name)
        said[revision] = f"runner at {revision}:\n{run.stdout}{run.stderr[-600:]}"
    return found, said


def _tails(said: dict[str, str]) -> str:
    return "\n".join(text[-1500:] for text in said.values())


# Each command's two judgements, (ours, the runner's checks, what the runner printed, our
# report folder), kept for the other tests of the same command in this process: the tier
# figure reads the same runs as the client's own scenario-by-scenario test.
_JUDGED: dict[
    str, tuple[dict[tuple[str, str], Any], dict[tuple[str, str], Any], dict[str, str], Path]
] = {}


def judged(
    command: str, tmp_path: Path
) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], Any], dict[str, str], Path]:
    if command not in _JUDGED:
        ours = _ours(command, tmp_path / "ours")
        runner, said = _runner_sets(command, tmp_path)
        _JUDGED[command] = (ours, runner, said, tmp_path / "ours")
    return _JUDGED[command]


def agree_scenario_by_scenario(
    command: str,
    caught: str | None,
    tmp_path: Path,
    *,
    implemented: dict[str, tuple[str, ...]] | None = None,
    ours_only: tuple[str, str] | None = None,
) -> None:
    """Every served scenario through the runner and through mcp-testbench: the same
    summary line and tier pass on both sides; the runner's line fails on the scenario
    `caught` names and passes on every other the client implements (all, without
    `implemented`), and one it does not implement never counts for the tier figure;
    `ours_only`, (scenario, check): a check of ours that FAILs where the runner cannot see."""
    ours, runner, said, folder = judged(command, tmp_path)
    differences = []
    for scenario in SERVED:
        for revision in scenario.revisions:
            checks = runner[(scenario.name, revision)]
            theirs = _line(scenario.name, checks)
            mine = ours[(scenario.name, revision)]
            if theirs != mine["line"] or _tier(checks) != mine["tier"]:
                differences.append(
                    f"{scenario.name} at {revision}: runner {theirs!r} (tier {_tier(checks)}), "
                    f"mcp-testbench {mine['line']!r} (tier {mine['tier']})"
                )
            if implemented is None or scenario.name in implemented[revision]:
                assert mine["runner_line"] is (caught != scenario.name), (
                    f"{command}: {scenario.name} at {revision}: {mine['outcome']}"
                )
            else:
                assert not mine["tier"], f"{scenario.name} at {revision}: {mine['outcome']}"
    assert differences == [], _tails(said)
    if ours_only is not None:
        scenario_name, check = ours_only
        results = json.loads((folder / "results.json").read_text("utf-8"))["results"]
        (found,) = [
            r
            for r in results
            if r["check"] == check and r["scenario"] == f"conformance:{scenario_name}"
        ]
        assert found["status"] == "FAIL", found


def tier_figure_is_the_runners(command: str, tmp_path: Path) -> None:
    """The runner's `--requirements` count for both scored sets is the tier figure here."""
    ours, runner, said, _ = judged(command, tmp_path)
    for revision, scored in SCORED_CLIENT.items():
        theirs = {name for name in scored if _tier(runner[(name, revision)])}
        served = {s.name for s in SERVED if revision in s.revisions}
        mine = {name for name in served if ours[(name, revision)]["tier"]}
        # The client implements only the served scenarios: the runner passes no other.
        assert theirs == mine, _tails(said)
        for name in served:
            assert ours[(name, revision)]["line"] in said[revision]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_runner_and_mcp_testbench_agree_scenario_by_scenario(
    variant: str, tmp_path: Path
) -> None:
    agree_scenario_by_scenario(
        _command(variant), VARIANTS[variant], tmp_path, ours_only=OURS_ONLY.get(variant)
    )


def test_the_tier_figure_is_the_runners_count(tmp_path: Path) -> None:
    tier_figure_is_the_runners(_command("python-sdk"), tmp_path)


def test_the_ids_kept_here_are_the_pinned_runners() -> None:
    code = (PACKAGE / "dist" / "index.js").read_text("utf-8")
    version = json.loads((PACKAGE / "package.json").read_text("utf-8"))["version"]
    from harness.official import CLIENT_RUNNER_VERSION

    assert version == CLIENT_RUNNER_VERSION
    missing = [
        f"{s.name}: {c.id}"
        for s in SERVED
        for c in s.checks
        if f"`{c.id}`" not in code and f'"{c.id}"' not in code
    ]
    assert missing == []


def test_the_scored_sets_are_the_pinned_runners() -> None:
    for revision, scored in SCORED_CLIENT.items():
        text = (PACKAGE / "requirements" / f"{revision}.yaml").read_text("utf-8")
        block = text.split("\nclient:\n", 1)[1].split("\n\n", 1)[0]
        listed = tuple(
            line.strip()[2:] for line in block.splitlines() if line.strip().startswith("- ")
        )
        assert listed == scored, revision


# -- authorization ---------------------------------------------------------------------------

# The authorization scenarios served, and the variants with an authorization defect: each
# is caught by the scenarios named beside it (and passes the others).
AUTH_SCENARIOS = tuple(s for s in SERVED if s.name.startswith("auth/"))
AUTH_VARIANTS = {
    "python-sdk": (),
    "root-prm-first": ("auth/metadata-default",),
    # Those that make the RFC 8707 checks.
    "no-resource-parameter": tuple(
        s.name
        for s in AUTH_SCENARIOS
        if any(c.id == "resource-parameter-in-token" for c in s.checks)
    ),
    "secret-in-body": ("auth/token-endpoint-auth-basic", "auth/pre-registration"),
    "no-scope": (
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-step-up",
    ),
    # 2026-07-28: takes any iss (or none) for the one it expects (RFC 9207).
    "ignore-iss": (
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
    ),
    "reuse-client": ("auth/authorization-server-migration",),
}
# Where the counts differ though the verdict is the same, and why (docs/conformance-clients.md).
AUTH_COUNTS_DIFFER = {
    ("reuse-client", "auth/authorization-server-migration"): (
        "the runner's second authorization server takes the first's client id and issues a "
        "token; the mock's refuses it at the authorization endpoint (no redirect), so the "
        "token request and the last bearer token never come"
    ),
    ("secret-in-body", "auth/token-endpoint-auth-basic"): (
        "the runner's token endpoint answers whatever the client authentication; the "
        "mock's refuses one that is not the registered method, so the client never gets "
        "a token and no bearer token is judged"
    ),
}


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
def test_the_runner_and_mcp_testbench_agree_on_authorization(variant: str, tmp_path: Path) -> None:
    command = _command(variant)
    ours, runner, said, _ = judged(command, tmp_path)
    differences = []
    for scenario in AUTH_SCENARIOS:
        for revision in scenario.revisions:
            checks = runner[(scenario.name, revision)]
            theirs = _line(scenario.name, checks)
            mine = ours[(scenario.name, revision)]
            if (variant, scenario.name) in AUTH_COUNTS_DIFFER:
                # The same verdict (the line's mark, the tier), not the same counts.
                theirs, mine_line = theirs[:1], mine["line"][:1]
            else:
                mine_line = mine["line"]
            if theirs != mine_line or _tier(checks) != mine["tier"]:
                differences.append(
                    f"{scenario.name} at {revision}: runner {theirs!r} (tier {_tier(checks)}), "
                    f"mcp-testbench {mine['line']!r} (tier {mine['tier']})"
                )
            caught = scenario.name in AUTH_VARIANTS[variant]
            where = f"{variant}: {scenario.name} at {revision}: {mine['outcome']}"
            assert mine["runner_line"] is not caught, where
            assert mine["passes"] is not caught, where
    assert differences == [], _tails(said)
