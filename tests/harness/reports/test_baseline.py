"""The baseline as a workflow: baselined items in every report, stale entries under
pytest-xdist, the official runner's expected-failures YAML, `baseline write|update`.

The plugin tests run real pytest sessions (pytester) with made-up checks on one real
scenario, run by the reference client (as in test_plugin.py), so each status is certain.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.official._expected_failures import OfficialBaselineError, load_official, parse_official
from harness.reports._baseline import Baseline, BaselineError

pytest_plugins = ["pytester"]

NARROW = ["--mcp-revision=2025-11-25", "--mcp-transport=stdio", "-p", "no:cacheprovider"]
REFERENCE = "--mcp-client=harness.clients:ReferenceClient"

FAKE = """
import harness.suite
from harness.judging._catalogue import check, clause
from harness.running._scenario import Scenario
from harness.judging._triggers import client_sent
from harness.judging._verdicts import blocked, fail, passed

INITIALIZE = client_sent("initialize")
COMMON = {"spec": "basic/lifecycle", "description": "made up for the test"}
MUST = clause("basic/lifecycle", "the client MUST send an initialized notification")
SHOULD = clause("basic/lifecycle", "SHOULD be the latest version supported by the client")
MAY = clause("basic/lifecycle", "the client MAY")

@check("fake.pass", requirements=("F-1",), clauses=[MUST], trigger=INITIALIZE, **COMMON)
def _pass(run):
    return passed("initialize was seen", run.requests("initialize"))

@check("fake.fail", requirements=("F-3",), clauses=[MUST], trigger=INITIALIZE, **COMMON)
def _fail(run):
    return fail("the root defect", run.requests("initialize"))

@check("fake.blocked", requirements=("F-4",), clauses=[MUST], trigger=INITIALIZE, **COMMON)
def _blocked(run):
    return blocked("fake.fail", "blocked by fake.fail: the root defect")

harness.suite.SCENARIOS = (
    Scenario("fake", "tools/pagination.json", checks=("fake.pass", "fake.fail", "fake.blocked")),
)
"""
FAIL_ITEM = "fake-2025-11-25-stdio::fake.fail"


def _fake(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    pytester.makeconftest(FAKE)
    return pytester.runpytest_subprocess(REFERENCE, *NARROW, *extra, timeout=300)


def _baseline(pytester: pytest.Pytester, entries: dict[str, str]) -> str:
    path = pytester.path / "baseline.json"
    path.write_text(
        json.dumps({"format_version": 1, "expected_failures": entries}), encoding="utf-8"
    )
    return f"--mcp-baseline={path}"


def _results(path: Path) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"]
    return results


# -- baselined items are reported as such, with their reason ------------------------------------


def test_a_baselined_failure_shows_its_reason_in_the_terminal_and_every_report(
    pytester: pytest.Pytester,
) -> None:
    reports = {ext: pytester.path / f"r.{ext}" for ext in ("json", "md", "html")}
    base = _baseline(
        pytester, {"fake.fail": "upstream bug 41", "fake.blocked": "follows from bug 41"}
    )
    result = _fake(
        pytester, base, "--junitxml=junit.xml", *[f"--mcp-report={p}" for p in reports.values()]
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "mcp-testbench: 3 items of 3 checks for *",
            "  1 FAIL, 1 BLOCKED, 1 PASS (2 of them baselined)",
            "mcp-testbench: baselined (expected failures, they do not fail the run):",
            "  1 BLOCKED in fake.blocked: follows from bug 41",
            "  1 FAIL in fake.fail: upstream bug 41",
        ]
    )

    by_check = {r["check"]: r for r in _results(reports["json"])}
    assert by_check["fake.fail"]["status"] == "FAIL"  # the verdict stays what it is
    assert by_check["fake.fail"]["baselined"] == "upstream bug 41"
    assert by_check["fake.blocked"]["baselined"] == "follows from bug 41"
    assert "baselined" not in by_check["fake.pass"]

    markdown = reports["md"].read_text(encoding="utf-8")
    assert "| fake.fail | MUST F-3 | FAIL* |" in markdown
    assert "| fake.pass | MUST F-1 | PASS |" in markdown
    assert f"- **FAIL** `mcp-testbench::{FAIL_ITEM}`: baseline: upstream bug 41" in markdown
    page = reports["html"].read_text(encoding="utf-8")
    assert "<h2>Baselined (expected failures)</h2>" in page
    assert f"<code>mcp-testbench::{FAIL_ITEM}</code>: baseline: upstream bug 41" in page
    assert ">FAIL*</td>" in page

    cases = {
        c.get("name"): c for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    }
    props = {p.get("name"): p.get("value") for p in cases["fake.fail"].iter("property")}
    assert props["mcp_baselined"] == "upstream bug 41"
    assert props["mcp_status"] == "FAIL"
    skipped = cases["fake.fail"].find("skipped")
    assert skipped is not None
    assert "baseline: upstream bug 41" in skipped.get("message", "")


def test_a_failure_not_in_the_baseline_is_not_marked_baselined(pytester: pytest.Pytester) -> None:
    report = pytester.path / "r.md"
    result = _fake(pytester, _baseline(pytester, {"fake.blocked": "x"}), f"--mcp-report={report}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    markdown = report.read_text(encoding="utf-8")
    assert "| fake.fail | MUST F-3 | FAIL |" in markdown
    assert "| fake.blocked | MUST F-4 | blkd* |" in markdown


# -- stale entries fail the run, serially and under pytest-xdist ------------------------------------


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_entry_matching_no_check_fails_the_run(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    base = _baseline(pytester, {"fake.fail": "known", "fake.blocked": "known", "fake.typo": "x"})
    result = _fake(pytester, base, *workers)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    lines = [line for line in result.stdout.lines if "baseline entry 'fake.typo'" in line]
    assert lines == [
        "mcp-testbench: baseline entry 'fake.typo' matches no check of this run; "
        "correct or delete it (a stale entry fails the run)"
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_listed_failure_that_now_passes_fails_the_run_and_the_summary_gives_the_fix(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    """The issue: pytest's "XPASS(strict)" and "1 failed" were all a stale entry showed.
    The summary names the entry and the command that fixes the file, and that command,
    run as printed, makes the next run pass."""
    base = _baseline(
        pytester, {"fake.fail": "known", "fake.blocked": "known", "fake.pass": "was broken"}
    )
    result = _fake(pytester, base, "--mcp-report=results.json", *workers)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "XPASS(strict)" in result.stdout.str()
    fix = (
        "mcp-testbench: baseline entry 'fake.pass' now passes: remove it, or run "
        "`mcp-testbench baseline update baseline.json --from results.json`"
    )
    assert _joined(result).count(fix) == 1, result.stdout.str()
    assert all(len(line) <= 100 for line in result.stdout.lines if "fake.pass" in line)

    command = fix.split("`")[1].split()
    assert command[0] == "mcp-testbench"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(pytester.path)  # the paths in the command are relative to where pytest ran
        assert main(command[1:]) == 0
    assert _entries(pytester.path / "baseline.json") == {
        "fake.fail": "known",
        "fake.blocked": "known",
    }
    again = _fake(pytester, base, *workers)
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()


def _joined(result: pytest.RunResult) -> str:
    """The output with the summary's wrapped lines (indented by two) joined again."""
    return re.sub(r"\n  (?=\S)", " ", result.stdout.str())


def test_a_stale_entry_without_a_json_report_says_how_to_get_one(
    pytester: pytest.Pytester,
) -> None:
    base = _baseline(pytester, {"fake.fail": "known", "fake.blocked": "known",
                                "fake-2025-11-25-stdio::fake.pass": "was broken"})  # fmt: skip
    result = _fake(pytester, base)
    assert (
        "mcp-testbench: baseline entry 'fake-2025-11-25-stdio::fake.pass' now passes: remove it,"
        " or write this run's JSON report (--mcp-report=results.json) and run "
        "`mcp-testbench baseline update baseline.json --from results.json`"
    ) in _joined(result)


def test_a_narrowed_run_does_not_offer_an_update_that_would_drop_other_entries(
    pytester: pytest.Pytester,
) -> None:
    """`baseline update` from a run that -k narrowed drops the entries it did not run."""
    base = _baseline(pytester, {"fake.fail": "known", "fake.pass": "was broken"})
    result = _fake(pytester, base, "-k", "pass", "--mcp-report=results.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    joined = _joined(result)
    assert (
        "mcp-testbench: baseline entry 'fake.pass' now passes: remove it by hand: `baseline "
        "update` from this run would also drop 1 other entry, whose items it left out"
    ) in joined
    assert "--from" not in joined


def test_now_passing_counts_the_items_of_each_strict_entry(tmp_path: Path) -> None:
    def item(run: str, check: str, status: str) -> dict[str, str]:
        return {"id": f"mcp-testbench::{run}::{check}", "check": check, "status": status}

    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format_version": 1, "expected_failures": {
        "tools.pagination": "some still fail", "x-2025-11-25-stdio::tools.call-result": "fixed",
        "http.gone": "not in this run", "stdio.framing": "still fails"}}), encoding="utf-8")  # fmt: skip
    results = [
        item("p-2025-11-25-stdio", "tools.pagination", "PASS"),
        item("p-2025-11-25-http", "tools.pagination", "WARN"),
        item("p-2024-11-05-http", "tools.pagination", "FAIL"),
        item("p-2024-11-05-stdio", "tools.pagination", "N/A"),  # neither passes nor fails
        item("x-2025-11-25-stdio", "tools.call-result", "NOTE"),
        item("x-2025-11-25-stdio", "stdio.framing", "BLOCKED"),
    ]
    baseline = Baseline.load(path)
    assert baseline.now_passing(results) == [
        ("tools.pagination", 2, 3),
        ("x-2025-11-25-stdio::tools.call-result", 1, 1),
    ]
    assert baseline.left_out(results) == ["http.gone"]


def test_an_entry_deselected_by_k_is_not_stale(pytester: pytest.Pytester) -> None:
    # -k chooses what to run, not what the suite is: the entry still names a real item.
    result = _fake(pytester, _baseline(pytester, {"fake.fail": "known"}), "-k", "pass")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "matches no check" not in result.stdout.str()


# -- the official runner's expected-failures YAML ------------------------------------------------------

OFFICIAL = """\
# conformance-baseline.yml
server:
  - tools-call-with-progress
client:
  - tools_call            # our adapter rewrites results
  - "auth/basic-cimd"
  - elicitation-sep1034-client-defaults
  - sse-retry:client-sse-retry-timing
"""


def test_the_official_format_is_parsed_by_hand() -> None:
    assert parse_official(OFFICIAL) == {
        "server": ["tools-call-with-progress"],
        "client": [
            "tools_call",
            "auth/basic-cimd",
            "elicitation-sep1034-client-defaults",
            "sse-retry:client-sse-retry-timing",
        ],
    }
    assert parse_official("client: []\n") == {"client": []}
    assert parse_official("") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clients:\n  - x\n", "line 1: expected 'server:' or 'client:'"),
        ("client:\n  - sse-retry: client-sse-retry-timing\n", "no space after the colon"),
        ("client:\n  - {a: b}\n", "YAML this reader does not take"),
        ("client: [a, b]\n", "takes a list, one '- entry' per line"),
        ("client:\n  - 'open\n", "unbalanced quotes"),
        ("  - x\n", "a list entry before 'server:' or 'client:'"),
        ("client:\n  -\n", "an empty entry"),
    ],
)
def test_what_the_hand_parser_refuses_names_the_line(text: str, message: str) -> None:
    with pytest.raises(OfficialBaselineError, match=message):
        parse_official(text, "b.yml")


def test_every_official_id_maps_to_checks_that_exist() -> None:
    from harness.judging._catalogue import CATALOGUE
    from harness.official import _expected_failures as official
    from harness.suite import SCENARIOS  # registers the checks

    assert SCENARIOS

    mapped = {
        c for checks in (*official._SCENARIOS.values(), *official._CHECKS.values()) for c in checks
    }
    assert mapped <= set(CATALOGUE)
    # A per-check entry belongs to a scenario that is mapped as a whole too.
    assert {key.partition(":")[0] for key in official._CHECKS} <= set(official._SCENARIOS)


def test_official_ids_that_do_not_map_are_noted(tmp_path: Path) -> None:
    path = tmp_path / "conformance-baseline.yml"
    path.write_text(OFFICIAL, encoding="utf-8")
    loaded = load_official(path)
    assert loaded.entries == {
        "tools_call": ("tools.call-result",),
        "sse-retry:client-sse-retry-timing": ("http.retry-honoured",),
    }
    assert loaded.notes == (
        "1 'server:' entries ignored: they are about servers, and mcp-testbench tests clients",
        "'auth/basic-cimd' has no counterpart here (authorization is not judged by "
        "mcp-testbench yet); ignored",
        "'elicitation-sep1034-client-defaults' has no counterpart here (no check of "
        "mcp-testbench judges it); ignored",
    )
    baseline = Baseline.load(path)
    assert baseline.reason_for("x", "tools.call-result") == "official baseline: tools_call"
    assert not baseline.strict("tools.call-result")


def test_a_bad_official_file_is_a_baseline_error(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text("client:\n  - a: b\n", encoding="utf-8")
    with pytest.raises(BaselineError, match=r"b\.yaml line 2"):
        Baseline.load(path)


BAD_CALL = """
from harness.clients import ReferenceClient

class BadCall(ReferenceClient):
    '''Sends a progress token that is a fraction on tools/call: fails jsonrpc.messages-valid.'''
    async def _request(self, method, params=None, **kw):
        if method == "tools/call":
            params = {**(params or {}), "_meta": {"progressToken": 0.5}}
        return await super()._request(method, params, **kw)
"""
CALL_RESULT = ["-k", "tools-call-2025 and messages-valid"]


NO_INITIALIZED = """
from harness.clients import ReferenceClient

class NoInitialized(ReferenceClient):
    '''Never sends notifications/initialized: fails lifecycle.initialized-notification.'''
    async def _send(self, message, limit=None):
        if message.get("method") != "notifications/initialized":
            await super()._send(message, limit)
"""
OFFICIAL_INITIALIZE = """\
client:
  - initialize            # our adapter forgets notifications/initialized
  - "auth/basic-cimd"
  - sse-retry:client-sse-retry-timing
"""


def test_an_official_yaml_expects_the_failures_its_ids_map_to(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(broken=NO_INITIALIZED)
    pytester.syspathinsert()
    (pytester.path / "b.yml").write_text(OFFICIAL_INITIALIZE, encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--mcp-client=broken:NoInitialized",
        *NARROW,
        "-k",
        "lifecycle-handshake-2025 and initialized-notification",
        "--mcp-baseline=b.yml",
    )
    # sse-retry's timing maps to an HTTP check, outside --mcp-transport=stdio: stale.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(xfailed=1)  # and nothing else ran: no pass, no failure
    out = result.stdout.str()
    assert "  1 FAIL in lifecycle.initialized-notification: official baseline: initialize" in out
    assert "'auth/basic-cimd' has no counterpart here" in out
    assert "baseline entry 'sse-retry:client-sse-retry-timing' matches no check of this run" in out


def test_an_official_entry_whose_checks_all_pass_is_stale(pytester: pytest.Pytester) -> None:
    (pytester.path / "b.yml").write_text("client:\n  - tools_call\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        REFERENCE,
        *NARROW,
        "-k",
        "tools-call-2025 and call-result",
        "--mcp-baseline=b.yml",
        "-n",
        "2",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(xpassed=1)
    assert (
        "mcp-testbench: baseline entry 'tools_call' is stale: none of its checks failed "
        "in this run; delete it"
    ) in result.stdout.lines


# -- mcp-testbench baseline write|update ------------------------------------------------------------


def _report(path: Path, *items: tuple[str, str]) -> Path:
    results = [
        {"id": f"mcp-testbench::{item}", "check": item.split("::")[1], "status": status,
         "reason": f"why {item}"}
        for item, status in items
    ]  # fmt: skip
    path.write_text(json.dumps({"format_version": 1, "results": results}), encoding="utf-8")
    return path


def _entries(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format_version"] == 1
    entries: dict[str, str] = data["expected_failures"]
    return entries


A = "tools-call-2025-11-25-stdio::jsonrpc.messages-valid"
B = "tools-call-2025-11-25-http::jsonrpc.messages-valid"
C = "tools-pagination-2025-11-25-stdio::tools.pagination"


def test_baseline_write_from_a_report_lists_each_failing_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(tmp_path / "r.json", (A, "FAIL"), (B, "PASS"), (C, "BLOCKED"))
    out = tmp_path / "baseline.json"
    assert main(["baseline", "write", str(out), "--from", str(report)]) == 0
    assert _entries(out) == {A: f"FAIL: why {A}", C: f"BLOCKED: why {C}"}
    assert f"wrote {out}: 2 expected failures" in capsys.readouterr().out
    assert Baseline.load(out).entries == _entries(out)  # what write writes, the plugin reads


def test_baseline_write_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(tmp_path / "r.json", (A, "FAIL"))
    out = tmp_path / "baseline.json"
    out.write_text("{}", encoding="utf-8")
    assert main(["baseline", "write", str(out), "--from", str(report)]) == 2
    assert f"{out} already exists; use `mcp-testbench baseline update {out}`" in (
        capsys.readouterr().err
    )


def test_baseline_update_keeps_reasons_drops_stale_adds_new(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "baseline.json"
    out.write_text(
        json.dumps(
            {
                "format_version": 1,
                "expected_failures": {
                    "jsonrpc.messages-valid": "adapter bug 7",  # now fails over stdio only
                    C: "paging, bug 9",  # now passes
                    "tools.gone": "typo",  # matches nothing
                },
            }
        ),
        encoding="utf-8",
    )
    report = _report(tmp_path / "r.json", (A, "FAIL"), (B, "PASS"), (C, "PASS"),
                     ("x-2025-11-25-stdio::stdio.framing", "FAIL"))  # fmt: skip
    assert main(["baseline", "update", str(out), "--from", str(report)]) == 0
    assert _entries(out) == {
        A: "adapter bug 7",
        "x-2025-11-25-stdio::stdio.framing": "FAIL: why x-2025-11-25-stdio::stdio.framing",
    }
    printed = capsys.readouterr().out
    assert f"narrowed jsonrpc.messages-valid to 1 failing item ({A})" in printed
    assert f"removed {C}: it passes now" in printed
    assert "removed tools.gone: it matches no item of this run" in printed
    assert "added x-2025-11-25-stdio::stdio.framing" in printed


def test_baseline_update_needs_an_existing_json_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(tmp_path / "r.json", (A, "FAIL"))
    assert main(["baseline", "update", str(tmp_path / "no.json"), "--from", str(report)]) == 2
    err = capsys.readouterr().err
    assert "no.json: no such file; create it with `mcp-testbench baseline write " in err
    yml = tmp_path / "b.yml"
    yml.write_text("client: []\n", encoding="utf-8")
    assert main(["baseline", "update", str(yml), "--from", str(report)]) == 2
    assert "rewrites mcp-testbench's JSON baseline" in capsys.readouterr().err


def test_baseline_from_a_file_that_is_not_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "r.json"
    bad.write_text("[]", encoding="utf-8")
    assert main(["baseline", "write", str(tmp_path / "b.json"), "--from", str(bad)]) == 2
    assert "not a JSON report of mcp-testbench" in capsys.readouterr().err


def test_baseline_write_from_a_run_then_the_run_passes_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # capfd: the run's summary comes from its pytest subprocess, on file descriptor 1.
    (tmp_path / "broken.py").write_text(BAD_CALL, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{__import__('os').environ.get('PYTHONPATH', '')}")
    out = tmp_path / "baseline.json"
    options = ["--client", "broken:BadCall", "--revision", "2025-11-25", "--transport", "stdio"]
    assert main(["baseline", "write", str(out), *options, "--", *CALL_RESULT]) == 0
    assert list(_entries(out)) == [A]
    assert _entries(out)[A].startswith("FAIL: ")
    written = capfd.readouterr().out
    assert f"mcp-testbench baseline: wrote {out}: 1 expected failures" in written
    # The issue: it said "no report folder written (--no-report)", an option nobody gave.
    assert "--no-report" not in written
    from harness.cli._run_command import run_suite

    code = run_suite(
        client="broken:BadCall",
        revisions=["2025-11-25"],
        transports=["stdio"],
        baseline=out,
        extra=CALL_RESULT,
    )
    assert code == 0
    assert "1 FAIL (1 of them baselined)" in capfd.readouterr().out
