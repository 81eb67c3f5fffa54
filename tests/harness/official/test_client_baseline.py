"""The official runner's expected-failures rule on a conformance client's runs
(harness/official/_client_baseline.py): each branch of the rule on made-up verdicts, and
the file refused as the runner refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.official import (
    BaselineOutcome,
    OfficialBaselineError,
    check_client_baseline,
    load_client_baseline,
)

REV = "2025-11-25"


def _baseline(tmp_path: Path, *entries: str) -> Path:
    path = tmp_path / "expected-failures.yml"
    lines = ["server:", "  - tools-list", "client:", *(f"  - {e}" for e in entries)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _check(
    tmp_path: Path, entries: list[str], *runs: tuple[str, list[tuple[str, str]]]
) -> BaselineOutcome:
    baseline = load_client_baseline(_baseline(tmp_path, *entries))
    return check_client_baseline(baseline, [(name, REV, checks) for name, checks in runs])


def test_a_whole_scenario_is_expected_when_a_check_fails_and_stale_when_none_does(
    tmp_path: Path,
) -> None:
    failing = ("sse-retry", [("client-sse-retry-timing", "FAILURE"), ("b", "SUCCESS")])
    passing = ("initialize", [("mcp-client-initialization", "SUCCESS")])
    outcome = _check(tmp_path, ["sse-retry", "initialize"], failing, passing)
    assert outcome == BaselineOutcome(("sse-retry",), ("initialize",), ())
    assert not outcome.passes
    assert outcome.lines() == [
        "Expected failures (in baseline):",
        "  ~ sse-retry",
        "Stale baseline entries (now passing - remove from baseline):",
        "  ✓ initialize",
        "Baseline is stale: update your expected-failures file to remove passing entries.",
    ]


def test_a_listed_check_is_expected_the_others_unexpected_and_a_success_stale(
    tmp_path: Path,
) -> None:
    run = (
        "request-metadata",
        [("a", "FAILURE"), ("b", "WARNING"), ("c", "SUCCESS"), ("d", "INFO")],
    )
    outcome = _check(
        tmp_path, ["request-metadata:a", "request-metadata:c", "request-metadata:e"], run
    )
    # b: a WARNING fails the baseline check too; c passes: stale; e was never emitted:
    # nothing is said of it; d is INFO: never counted.
    assert outcome == BaselineOutcome(
        ("request-metadata:a",), ("request-metadata:c",), ("request-metadata:b",)
    )


def test_an_unlisted_scenario_is_one_unexpected_failure_and_a_passing_one_nothing(
    tmp_path: Path,
) -> None:
    outcome = _check(
        tmp_path,
        [],
        ("tools_call", [("tool-call", "FAILURE"), ("other", "FAILURE")]),
        ("initialize", [("mcp-client-initialization", "SUCCESS"), ("x", "INFO")]),
    )
    assert outcome == BaselineOutcome((), (), ("tools_call",))
    assert outcome.lines()[-1].startswith("Unexpected failures detected")


def test_only_the_worst_status_of_an_id_counts(tmp_path: Path) -> None:
    run = ("sse-retry", [("t", "SUCCESS"), ("t", "FAILURE"), ("t", "SUCCESS")])
    assert _check(tmp_path, ["sse-retry:t"], run) == BaselineOutcome(("sse-retry:t",), (), ())
    clean = ("sse-retry", [("t", "SUCCESS"), ("t", "INFO")])
    assert _check(tmp_path, ["sse-retry:t"], clean) == BaselineOutcome((), ("sse-retry:t",), ())


def test_all_expected_passes(tmp_path: Path) -> None:
    outcome = _check(tmp_path, ["tools_call"], ("tools_call", [("tool-call", "FAILURE")]))
    assert outcome.passes
    assert outcome.lines()[-1] == "Baseline check passed: all failures are expected."


def test_a_hang_is_never_expected_and_revisions_are_told_apart(tmp_path: Path) -> None:
    baseline = load_client_baseline(_baseline(tmp_path, "tools_call"))
    outcome = check_client_baseline(
        baseline,
        [
            ("tools_call", "2025-11-25", [("tool-call", "FAILURE")]),
            ("tools_call", "2026-07-28", []),
        ],
        hung=frozenset({("tools_call", "2026-07-28")}),
    )
    assert outcome == BaselineOutcome(
        ("tools_call [2025-11-25]",), (), ("tools_call (hung) [2026-07-28]",)
    )


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            ["sse-retry", "sse-retry:t"],
            "'sse-retry' expects the whole scenario to fail, so "
            "'sse-retry:t' is redundant; remove one or the other",
        ),
        (["sse-retry: t"], "is not '<scenario>' or '<scenario>:<check-id>'"),
        (["{a: b}"], "is YAML this reader does not take"),
    ],
)
def test_a_file_the_runner_refuses_is_refused(
    tmp_path: Path, entries: list[str], message: str
) -> None:
    with pytest.raises(OfficialBaselineError, match=r"expected-failures\.yml") as caught:
        load_client_baseline(_baseline(tmp_path, *entries))
    assert message in str(caught.value)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(OfficialBaselineError, match="no such file"):
        load_client_baseline(tmp_path / "nope.yml")
