"""The verdict rules every check obeys, on hand-built runs: no client, no mock, no time.

A PASS needs evidence from the run, and its trigger among it; SKIP comes only from what
the client declared; a failed precondition BLOCKS the checks that depend on it, naming the
root cause; a trigger that never arose is N/A, or BLOCKED by what stopped the client; a
check that crashes or passes without its trigger is the harness's fault, never a verdict.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.judging._catalogue import TRANSPORTS, Check, Ground, clause, silent
from harness.judging._judge import judge
from harness.judging._triggers import Trigger, asked, client_sent
from harness.judging._verdicts import (
    Status,
    Verdict,
    blocked,
    fail,
    not_applicable,
    passed,
    skip,
    violated,
    warn,
)
from harness.protocol import REVISIONS, same_json
from harness.running._scenario import Operation, Scenario, ScenarioRun

REVISION = "2025-11-25"  # a revision with the initialize handshake
ENTRY = {"seq": 1, "t": 0.0, "kind": "message", "direction": "client", "message": {}}


# -- Verdict -------------------------------------------------------------------------------------


def test_a_pass_needs_evidence_from_the_run() -> None:
    with pytest.raises(ValueError, match="PASS needs evidence"):
        passed("looked fine", [])
    with pytest.raises(ValueError, match="PASS needs evidence"):
        passed("looked fine", [{"note": "not a transcript entry, not an operation"}])
    assert passed("seen", [ENTRY]).status is Status.PASS
    assert passed("seen", [Operation("ping", {}).to_json()]).kind == "seen"


def test_a_blocked_verdict_and_only_that_names_its_root() -> None:
    with pytest.raises(ValueError, match="names its root cause"):
        Verdict(Status.BLOCKED, "no root")
    with pytest.raises(ValueError, match="names its root cause"):
        Verdict(Status.FAIL, "with a root", root="client.connect")
    verdict = blocked("client.connect", "connect failed")
    assert (verdict.status, verdict.kind, verdict.root) == (
        Status.BLOCKED,
        "blocked",
        "client.connect",
    )
    assert verdict.to_json()["root"] == "client.connect"
    assert "root" not in fail("broken").to_json()


def test_a_verdict_kind_belongs_to_its_status() -> None:
    with pytest.raises(ValueError, match="cannot be of kind"):
        Verdict(Status.FAIL, "x", kind="seen")
    assert warn("should").kind == "violation"
    assert skip("not declared").kind == "declared"
    assert not_applicable("never arose").kind == "not-applicable"
    assert Status.BLOCKED.failing
    assert Status.FAIL.failing
    assert not any(
        s.failing for s in (Status.PASS, Status.WARN, Status.SKIP, Status.NOT_APPLICABLE)
    )


# -- typed JSON comparison -----------------------------------------------------------------------

SCALARS = [5, 5.0, "5", True, 1, None, 0, False]


@pytest.mark.parametrize("a", SCALARS, ids=repr)
@pytest.mark.parametrize("b", SCALARS, ids=repr)
def test_same_json_tells_types_apart(a: Any, b: Any) -> None:
    assert same_json(a, b) is (type(a) is type(b) and a == b)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ({"id": 5}, {"id": 5}, True),
        ({"id": 5}, {"id": 5.0}, False),
        ({"id": 1}, {"id": True}, False),
        ([1, [2, {"x": "3"}]], [1, [2, {"x": "3"}]], True),
        ([1, [2, {"x": "3"}]], [1, [2, {"x": 3}]], False),
        ([1, 2], [1, 2, 3], False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        ([], {}, False),
        (2**53 + 1, 2**53 + 1, True),
        (2**53 + 1, 2**53, False),
        (2**53 + 1, float(2**53 + 1), False),
    ],
)
def test_same_json_nested_and_exact(a: Any, b: Any, same: bool) -> None:
    assert same_json(a, b) is same
    assert same_json(b, a) is same


# -- judging on hand-built runs ------------------------------------------------------------------


def _message(seq: int, direction: str, message: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "t": seq / 100, "kind": "message", "direction": direction,
            "message": dict(message), **extra}  # fmt: skip


def _handshake() -> list[dict[str, Any]]:
    """A complete handshake: initialize, its answer, notifications/initialized."""
    return [
        _message(1, "client", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        _message(2, "server", {"jsonrpc": "2.0", "id": 1, "result": {}}),
        _message(3, "client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]


def _connected() -> Operation:
    return Operation("connect", {"transport": "stdio"}, value={"protocolVersion": REVISION})


def _run(
    entries: Iterable[Mapping[str, Any]] | None = None,
    operations: Iterable[Operation] | None = None,
    *,
    revision: str = REVISION,
    transport: str = "stdio",
    supports: Iterable[str] = (),
    **scenario: Any,
) -> ScenarioRun:
    """A run as the harness would record it; by default a clean, completed handshake."""
    return ScenarioRun(
        Scenario("fake", "fake.json", checks=(), **scenario),
        revision,
        transport,
        supports=frozenset(supports),
        transcript={"entries": list(_handshake() if entries is None else entries)},
        operations=list([_connected()] if operations is None else operations),
    )


def _check(
    rule: Callable[[ScenarioRun], Verdict],
    *,
    check_id: str = "fake.check",
    trigger: Trigger | None = None,
    feature: str | None = None,
    independent_of: Iterable[str] = (),
    grounds: Iterable[Ground] = (),
) -> Check:
    return Check(
        id=check_id,
        requirements=("X-1",),
        grounds=tuple(grounds) or (MUST,),
        revisions=REVISIONS,
        transports=TRANSPORTS,
        spec="basic",
        description="a check made up for the test",
        judge=rule,
        feature=feature,
        trigger=trigger,
        independent_of=tuple(independent_of),
    )


def _grounded(ground: Ground) -> Ground:
    return dataclasses.replace(ground, revisions=ground.revisions or REVISIONS)


MUST = _grounded(clause("basic/lifecycle", "the client MUST send an initialized notification"))


def _initialize(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return list(run.requests("initialize"))


def _passes_on_initialize(run: ScenarioRun) -> Verdict:
    return passed("initialize was right", _initialize(run))


def _fails(run: ScenarioRun) -> Verdict:
    return fail("the rule was violated", run.entries[:1])


PASSING = _check(_passes_on_initialize, trigger=client_sent("initialize"))


def test_clean_run_lets_the_rule_decide() -> None:
    verdict = judge(PASSING, _run())
    assert verdict.status is Status.PASS
    assert verdict.evidence == tuple(_initialize(_run()))


# Levels: the spec's word for the branch at the run's revision, never the check's own choice

EARLY, LATE = REVISIONS[:2], REVISIONS[2:]
SPLIT = [
    _grounded(clause("basic/lifecycle", "Both parties SHOULD", *EARLY)),
    _grounded(clause("basic/lifecycle", "Both parties MUST", *LATE)),
    _grounded(clause("server/utilities/pagination", "Clients MUST treat cursors", branch="cursor")),
    _grounded(silent("nothing binds the client to surface the page", branch="surfaced")),
    _grounded(clause("basic/lifecycle", "Implementations MAY choose to reset", branch="optional")),
]


def _violates(branch: str) -> Callable[[ScenarioRun], Verdict]:
    return lambda run: violated(f"broke {branch or 'the rule'}", _initialize(run), clause=branch)


@pytest.mark.parametrize(
    ("branch", "revision", "status", "level"),
    [
        ("", EARLY[0], Status.WARN, "SHOULD"),  # the same branch, SHOULD at one revision
        ("", LATE[-1], Status.FAIL, "MUST"),  # and MUST at another
        ("cursor", EARLY[0], Status.FAIL, "MUST"),  # a branch with its own clause
        ("surfaced", LATE[0], Status.NOTE, "none"),  # no sentence binds the client
        ("optional", LATE[0], Status.NOTE, "MAY"),  # a MAY never fails
    ],
)
def test_a_violation_takes_the_level_of_its_branch_at_the_revision(
    branch: str, revision: str, status: Status, level: str
) -> None:
    check = _check(_violates(branch), grounds=SPLIT)
    verdict = judge(check, _run(revision=revision))
    assert (verdict.status, verdict.kind, verdict.clause) == (status, "violation", branch)
    assert check.level_at(revision, branch) == level
    assert not verdict.status.failing or status is Status.FAIL


def test_a_note_says_which_words_leave_it_open() -> None:
    optional = judge(_check(_violates("optional"), grounds=SPLIT), _run())
    assert optional.reason.startswith("broke optional (noted, not failed: at 2025-11-25")
    assert "MAY (basic/lifecycle: 'Implementations MAY choose to reset')" in optional.reason
    surfaced = judge(_check(_violates("surfaced"), grounds=SPLIT), _run())
    assert "no sentence of the spec binds the client" in surfaced.reason
    assert "nothing binds the client to surface the page" in surfaced.reason


def test_a_warn_or_fail_from_the_check_is_leveled_by_its_clause_too() -> None:
    """What a check's code calls its violation does not decide the level."""
    says_fail = _check(lambda run: fail("x", _initialize(run)), grounds=SPLIT)
    says_warn = _check(lambda run: warn("x", _initialize(run)), grounds=SPLIT)
    assert judge(says_fail, _run(revision=EARLY[0])).status is Status.WARN
    assert judge(says_warn, _run(revision=LATE[0])).status is Status.FAIL


def test_a_violation_of_an_undeclared_branch_is_the_harness_fault() -> None:
    verdict = judge(_check(_violates("no-such-branch"), grounds=SPLIT), _run())
    assert (verdict.status, verdict.kind, verdict.root) == (Status.BLOCKED, "harness", "harness")
    assert "names no branch 'no-such-branch'" in verdict.reason


# SKIP: only what the client declared


@pytest.mark.parametrize(
    ("supports", "feature", "lacking"),
    [
        ({"http", REVISION}, None, "stdio"),
        ({"stdio", "2025-06-18"}, None, REVISION),
        ({"stdio", REVISION}, "sampling", "sampling"),
    ],
)
def test_skip_comes_from_declarations(
    supports: set[str], feature: str | None, lacking: str
) -> None:
    check = _check(_passes_on_initialize, trigger=client_sent("initialize"), feature=feature)
    verdict = judge(check, _run(supports=supports))
    assert verdict.status is Status.SKIP
    assert lacking in verdict.reason


def test_what_the_client_did_never_makes_a_skip() -> None:
    """A client that declares what the run needs, then hangs, is BLOCKED, not skipped."""
    hung = Operation("connect", {}, error={"kind": "hang", "code": None, "message": "no answer"})
    check = _check(_passes_on_initialize, trigger=client_sent("initialize"), feature="sampling")
    verdict = judge(check, _run([], [hung], supports={"stdio", REVISION, "sampling"}))
    assert verdict.status is Status.BLOCKED
    assert verdict.root == "client.connect"


# BLOCKED: each root cause of harness/judging/_preconditions.py


def _refusal(rule: str, method: str, *, scripted: bool) -> list[dict[str, Any]]:
    return [
        {"seq": 10, "t": 0.1, "kind": "http_request", "request": 7, "method": method,
         "path": "/mcp", "headers": {}, "body": None},
        {"seq": 11, "t": 0.1, "kind": "refusal", "request": 7, "rule": rule,
         "scripted": scripted, "status": 400, "reason": f"refused: {rule}"},
        {"seq": 12, "t": 0.1, "kind": "http_response", "request": 7, "status": 400,
         "headers": {}, "body": None},
    ]  # fmt: skip


def _session_issued() -> list[dict[str, Any]]:
    """A handshake over HTTP whose initialize answer carried a session id."""
    return [*_handshake(), {"seq": 5, "t": 0.05, "kind": "http_response", "request": 1,
            "status": 200, "headers": {"mcp-session-id": "s1"}, "body": None}]  # fmt: skip


def _error(kind: str) -> dict[str, Any]:
    return {"kind": kind, "code": None, "message": f"an error of kind {kind}"}


ROOT_CASES: dict[str, tuple[ScenarioRun, str]] = {
    "start failed": (
        ScenarioRun(
            Scenario("fake", "fake.json", checks=()),
            REVISION,
            "stdio",
            start_error="the client factory failed: ImportError: x",
        ),
        "client.start",
    ),
    "connect reported a failure": (_run([], [Operation("connect", {}, error=_error("transport"))]), "client.connect"),
    "connect hung": (_run([], [Operation("connect", {}, error=_error("hang"))]), "client.connect"),
    "connect crashed": (_run([], [Operation("connect", {}, error=_error("crash"))]), "client.connect"),
    "not JSON-RPC": (
        _run([*_handshake(), {"seq": 4, "t": 0.1, "kind": "invalid", "reason": "not an object"}]),
        "jsonrpc.messages-valid",
    ),
    "no initialize": (_run([]), "lifecycle.initialize-first"),
    "no notifications/initialized": (_run(_handshake()[:2]), "lifecycle.initialized-notification"),
    "list_tools answered without tools/list": (
        _run(None, [_connected(), Operation("list_tools", {}, value={"tools": []})]),
        "client.list_tools",
    ),
    "call_tool answered without tools/call": (
        _run(None, [_connected(), Operation("call_tool", {"args": ["echo"]}, value={})]),
        "client.call_tool",
    ),
}  # fmt: skip

REFUSAL_ROOTS = [
    ("session-required", "POST", "http.session-id-echoed"),
    ("session-unknown", "POST", "http.session-id-echoed"),
    ("protocol-version", "POST", "http.protocol-version-header"),
    ("not-acceptable", "POST", "http.accept-header"),
    ("not-acceptable", "GET", "http.get-stream-accept"),
    ("header-mismatch", "POST", "stateless.standard-headers"),
    ("unparsable", "POST", "jsonrpc.messages-valid"),
]
for _rule, _method, _root in REFUSAL_ROOTS:
    ROOT_CASES[f"unscripted refusal {_rule} of {_method}"] = (
        _run([*_session_issued(), *_refusal(_rule, _method, scripted=False)]),
        _root,
    )
# Before any session id was issued, a request that needs one came before initialize.
ROOT_CASES["unscripted refusal session-required before a session"] = (
    _run([*_refusal("session-required", "GET", scripted=False), *_handshake()]),
    "lifecycle.initialize-first",
)


@pytest.fixture(autouse=True)
def _roots_unconfirmed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The made-up runs name real checks as roots; judging confirms a root by that check's
    own verdict on the run (test_a_root_is_never_a_pass), which these tests leave out."""
    monkeypatch.setattr("harness.judging._judge.CATALOGUE", {})


def _after_the_fault(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """What a fault touches in the made-up runs: the refused answer, the bad line, an
    operation after connect."""
    later = [o.to_json() for o in run.operations if o.op != "connect"]
    refused = [e for e in run.of_kind("http_response") if e["status"] >= 400]
    return [*run.of_kind("refusal", "invalid"), *refused, *later]


AFTER = _check(
    lambda run: passed("what followed was right", _after_the_fault(run)),
    trigger=Trigger("what followed the fault", _after_the_fault),
)


@pytest.mark.parametrize("case", ROOT_CASES)
def test_a_failed_precondition_blocks_dependent_checks(case: str) -> None:
    run, root = ROOT_CASES[case]
    verdict = judge(AFTER, run)
    assert verdict.status is Status.BLOCKED, verdict
    assert verdict.kind == "blocked"
    assert verdict.root == root
    assert root in verdict.reason


# The fault came after the initialize these checks judge, or lay off their path. (The
# made-up operations carry no times, so the cases of an operation are not among them.)
EVIDENCE_BEFORE_THE_FAULT = [
    case
    for case in ROOT_CASES
    if case.startswith(("unscripted refusal", "not JSON-RPC", "no notifications/initialized"))
    and "before a session" not in case
]


@pytest.mark.parametrize("case", EVIDENCE_BEFORE_THE_FAULT)
def test_a_check_whose_evidence_came_before_the_fault_is_judged(case: str) -> None:
    run, _ = ROOT_CASES[case]
    assert judge(PASSING, run).status is Status.PASS
    assert judge(_check(_fails, trigger=client_sent("initialize")), run).status is Status.FAIL


def test_a_root_is_never_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal whose check finds no violation in the run is the harness's fault."""
    run = _run([*_handshake(), *_refusal("protocol-version", "POST", scripted=False)])
    for rule, status in ((_fails, Status.FAIL), (_passes_on_initialize, Status.PASS)):
        root = _check(rule, check_id="http.protocol-version-header")
        monkeypatch.setattr("harness.judging._judge.CATALOGUE", {root.id: root})
        verdict = judge(AFTER, _run(run.entries))
        assert verdict.status is Status.BLOCKED
        expected = "http.protocol-version-header" if status is Status.FAIL else "harness"
        assert verdict.root == expected, verdict
        if expected == "harness":
            assert "finds no violation" in verdict.reason


@pytest.mark.parametrize("case", ROOT_CASES)
def test_a_root_cause_does_not_block_its_own_check(case: str) -> None:
    run, root = ROOT_CASES[case]
    own = judge(_check(_fails, check_id=root), run)
    assert own.status is Status.FAIL, own


@pytest.mark.parametrize("case", ROOT_CASES)
def test_a_check_independent_of_a_root_is_judged(case: str) -> None:
    run, root = ROOT_CASES[case]
    verdict = judge(_check(_fails, independent_of=[root]), run)
    assert verdict.status is Status.FAIL, verdict


def test_a_hung_connect_is_told_as_a_hang() -> None:
    run, _ = ROOT_CASES["connect hung"]
    assert "hung" in judge(PASSING, run).reason


@pytest.mark.parametrize(("rule", "method", "root"), REFUSAL_ROOTS)
def test_a_scripted_refusal_blocks_nothing(rule: str, method: str, root: str) -> None:
    """The script asked the mock to refuse: that is the scenario, not a client defect."""
    run = _run([*_handshake(), *_refusal(rule, method, scripted=True)])
    assert judge(PASSING, run).status is Status.PASS


def test_a_refusal_of_a_rule_no_check_owns_blocks_nothing() -> None:
    run = _run([*_handshake(), *_refusal("method-not-allowed", "GET", scripted=False)])
    assert judge(PASSING, run).status is Status.PASS


def test_a_client_may_answer_locally_where_the_scenario_allows() -> None:
    operations = [_connected(), Operation("list_tools", {}, value={"tools": []})]
    run = _run(None, operations, local_answers=frozenset({"list_tools"}))
    assert judge(PASSING, run).status is Status.PASS


def test_a_revision_without_a_handshake_needs_no_initialize() -> None:
    run = _run([], revision="2026-07-28")
    check = _check(_fails, trigger=asked("connect"))
    assert judge(check, run).status is Status.FAIL


def test_an_initialize_answer_must_match_its_id_as_typed_json() -> None:
    """An answer to id "1" is not the answer to initialize id 1: the handshake never
    completed, so nothing says notifications/initialized was owed (no root cause)."""
    entries = _handshake()[:2]
    entries[1]["message"]["id"] = "1"
    assert judge(PASSING, _run(entries)).status is Status.PASS


def test_a_connect_that_may_fail_blocks_nothing() -> None:
    refused = Operation("connect", {}, error=_error("protocol"))
    run = _run([], [refused], connect_may_fail=True, revision="2026-07-28")
    check = _check(_fails, trigger=asked("connect"))
    assert judge(check, run).status is Status.FAIL


# trigger absent: N/A, or BLOCKED by what stopped the client

CALL = client_sent("tools/call", name="echo")


def test_trigger_absent_and_nothing_failed_is_not_applicable() -> None:
    verdict = judge(_check(_fails, trigger=CALL), _run())
    assert verdict.status is Status.NOT_APPLICABLE
    assert "tools/call" in verdict.reason


@pytest.mark.parametrize("kind", ["hang", "crash", "transport"])
def test_trigger_absent_after_a_failed_operation_is_blocked_by_it(kind: str) -> None:
    operations = [_connected(), Operation("call_tool", {"args": ["echo"]}, error=_error(kind))]
    verdict = judge(_check(_fails, trigger=CALL), _run(None, operations))
    assert verdict.status is Status.BLOCKED
    assert verdict.root == "client.call_tool"
    if kind == "hang":
        assert "hung" in verdict.reason


@pytest.mark.parametrize("kind", ["protocol", "tool", "abandoned"])
def test_trigger_absent_after_an_answered_or_deliberate_failure_is_not_applicable(
    kind: str,
) -> None:
    """An error the server answered (surfaced as such) is a completed exchange, and a call
    the drive abandoned is what it meant to do: neither kept the trigger from arising."""
    operations = [_connected(), Operation("call_tool", {"args": ["echo"]}, error=_error(kind))]
    verdict = judge(_check(_fails, trigger=CALL), _run(None, operations))
    assert verdict.status is Status.NOT_APPLICABLE


def test_trigger_absent_after_an_unfinished_run_is_blocked() -> None:
    run = _run()
    run.harness_error = "the scenario did not finish in time"
    verdict = judge(_check(_fails, trigger=CALL), run)
    assert verdict.status is Status.BLOCKED
    assert verdict.root == "client.run"


def test_trigger_with_the_wrong_typed_param_is_absent() -> None:
    entries = [
        *_handshake(),
        _message(4, "client", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"n": 5.0}}}),
    ]  # fmt: skip
    exact = client_sent("tools/call", arguments={"n": 5})
    assert judge(_check(_fails, trigger=exact), _run(entries)).status is Status.NOT_APPLICABLE
    assert judge(_check(_fails, trigger=CALL), _run(entries)).status is Status.FAIL


def test_a_refused_request_is_still_a_trigger() -> None:
    entries = [
        *_handshake(),
        _message(4, "client", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": "echo"}}, refused={"status": 400}),
    ]  # fmt: skip
    assert judge(_check(_fails, trigger=CALL), _run(entries)).status is Status.FAIL


# the harness's own faults


def test_a_pass_that_does_not_cite_its_trigger_is_the_harness_fault() -> None:
    def passes_on_something_else(run: ScenarioRun) -> Verdict:
        return passed("looked fine", [run.operations[0].to_json()])

    verdict = judge(_check(passes_on_something_else, trigger=client_sent("initialize")), _run())
    assert verdict.status is Status.BLOCKED
    assert (verdict.root, verdict.kind) == ("harness", "harness")
    assert "without citing its trigger" in verdict.reason


def test_a_crashing_check_is_the_harness_fault() -> None:
    def crashes(run: ScenarioRun) -> Verdict:
        raise KeyError("params")

    verdict = judge(_check(crashes, trigger=client_sent("initialize")), _run())
    assert verdict.status is Status.BLOCKED
    assert (verdict.root, verdict.kind) == ("harness", "harness")
    assert "KeyError" in verdict.reason


def test_a_failing_rule_need_not_cite_its_trigger() -> None:
    verdict = judge(_check(_fails, trigger=client_sent("initialize")), _run())
    assert verdict.status is Status.FAIL


# -- the catalogue ---------------------------------------------------------------------------------


def test_every_check_declares_its_trigger() -> None:
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    missing = sorted(c.id for c in CATALOGUE.values() if c.trigger is None)
    assert not missing, f"{len(missing)} checks declare no trigger: {', '.join(missing)}"


def test_no_drive_waits_on_a_timer() -> None:
    """Drives wait for transcript entries (Session.until), never for a fixed time: under
    load a timer fires too early and turns a slow server into a "never happened"."""
    import re

    import harness.suite

    folder = Path(harness.suite.__file__).parent
    timers = re.compile(r"\b(anyio|asyncio|time)\.sleep\(|move_on_after\(\s*[0-9.]+\s*\)")
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(folder.glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if timers.search(line)
    ]
    assert not found, found


# -- cancellations judged by the request they name --------------------------------------------


def _call(seq: int, request_id: int, tool: str) -> dict[str, Any]:
    params = {"name": tool, "arguments": {}}
    return _message(seq, "client", {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                    "params": params})  # fmt: skip


def _cancelled(seq: int, request_id: int) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "given up"}
    return _message(seq, "client", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": params})  # fmt: skip


@pytest.mark.parametrize(
    ("cancels", "status", "why"),
    [
        # The time-out's cancellation of hang (2) may still be on its way when slow (3)
        # goes out: the abandoned call is cancelled all the same.
        ((2, 3), Status.PASS, "naming its id"),
        ((3, 2), Status.PASS, "naming its id"),
        # Not cancelled: a NOTE here, on stdio before 2026-07-28, where the spec leaves
        # cancelling to the client ("Either side can send"); over HTTP it is a SHOULD.
        ((2, 1003), Status.NOTE, "no notifications/cancelled names the abandoned request 3"),
        ((2,), Status.NOTE, "those after it name 2"),
    ],
)
def test_an_abandoned_call_is_cancelled_by_any_later_cancellation_naming_it(
    cancels: tuple[int, ...], status: Status, why: str
) -> None:
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    entries = [*_handshake(), _call(4, 2, "hang"), _call(5, 3, "slow")]
    entries += [_cancelled(6 + index, named) for index, named in enumerate(cancels)]
    run = _run(entries, supports={"cancel", "stdio", "tools"})
    verdict = judge(CATALOGUE["features.cancel-notifies"], run)
    assert verdict.status is status, verdict.reason
    assert why in verdict.reason


@pytest.mark.parametrize(
    ("transport", "in_flight", "notifies"),
    [("http", Status.PASS, Status.PASS), ("stdio", Status.FAIL, Status.NOTE)],
)
def test_a_cancellation_that_overtook_its_request_counts_only_over_http(
    transport: str, in_flight: Status, notifies: Status
) -> None:
    # Over HTTP each POST has a connection of its own: a busy mock may read the
    # cancellation of slow (3) before the call itself. A pipe keeps the client's order.
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    entries = [*_handshake(), _call(4, 2, "hang"), _cancelled(5, 3), _call(6, 3, "slow")]
    run = _run(entries, None, transport=transport, supports={"cancel", transport, "tools"})
    verdict = judge(CATALOGUE["features.cancel-only-in-flight"], run)
    assert verdict.status is in_flight, verdict.reason
    verdict = judge(CATALOGUE["features.cancel-notifies"], run)
    assert verdict.status is notifies, verdict.reason


@pytest.mark.parametrize(
    ("transport", "order", "status"),
    [
        # Over HTTP, a request unanswered when the notification arrived may have been sent
        # after it, on another connection; one answered before it was surely sent first.
        ("http", ("list", "initialized", "answer"), Status.PASS),
        ("http", ("list", "answer", "initialized"), Status.NOTE),
        ("stdio", ("list", "initialized", "answer"), Status.NOTE),
        ("stdio", ("initialized", "list", "answer"), Status.PASS),
    ],
)
def test_a_request_before_initialized_counts_when_the_order_is_the_client_s(
    transport: str, order: tuple[str, ...], status: Status
) -> None:
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    sent = {
        "list": ("client", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        "answer": ("server", {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}),
        "initialized": ("client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    }
    entries = _handshake()[:2] + [
        _message(3 + index, *sent[name]) for index, name in enumerate(order)
    ]
    run = _run(entries, None, transport=transport, supports={transport})
    verdict = judge(CATALOGUE["lifecycle.initialized-notification"], run)
    assert verdict.status is status, verdict.reason
    if status is Status.NOTE:
        assert "tools/list was sent before notifications/initialized" in verdict.reason


# -- a new session after a 404, judged by the requests that follow ----------------------------


def _post(seq: int, number: int, message: Mapping[str, Any], session: str | None) -> dict[str, Any]:
    headers = {} if session is None else {"mcp-session-id": session}
    return {"seq": seq, "t": seq / 100, "kind": "http_request", "request": number,
            "method": "POST", "path": "/mcp", "headers": headers, "body": json.dumps(message)}  # fmt: skip


@pytest.mark.parametrize(
    ("after", "status", "why"),
    [
        # A notification already on its way when the 404 came, then the new session.
        (("notification", "initialize"), Status.PASS, "re-initialized"),
        (("initialize",), Status.PASS, "re-initialized"),
        (("notification",), Status.FAIL, "the client sent no request after the 404"),
        ((), Status.FAIL, "the client sent nothing after the 404"),
        (("call", "initialize"), Status.FAIL, "not a new initialize"),
    ],
)
def test_a_new_session_after_a_404_is_judged_by_the_requests_that_follow(
    after: tuple[str, ...], status: Status, why: str
) -> None:
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    sent = {
        "notification": ({"jsonrpc": "2.0", "method": "notifications/progress"}, "s-1"),
        "call": ({"jsonrpc": "2.0", "id": 7, "method": "tools/call"}, "s-1"),
        "initialize": ({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {}}, None),
    }
    entries = [
        *_handshake(),
        _post(10, 1, {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}, "s-1"),
        {"seq": 11, "t": 0.11, "kind": "http_response", "request": 1, "status": 404},
    ]
    entries += [_post(12 + index, 2 + index, *sent[name]) for index, name in enumerate(after)]
    run = _run(entries, None, transport="http", supports={"http"})
    verdict = judge(CATALOGUE["http.new-session-after-404"], run)
    assert verdict.status is status, verdict.reason
    assert why in verdict.reason


def test_a_404_to_the_stream_s_get_may_cross_a_post_already_sent() -> None:
    # The GET of the stream gets the first 404; the call on its way with the same id gets
    # one too, and the client then starts a new session: it answered the 404 it awaited.
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    get = {"seq": 10, "t": 0.1, "kind": "http_request", "request": 1, "method": "GET",
           "path": "/mcp", "headers": {"mcp-session-id": "s-1"}, "body": ""}  # fmt: skip

    def judged(after_the_call: Mapping[str, Any]) -> Verdict:
        entries = [
            *_handshake(),
            get,
            {"seq": 11, "t": 0.11, "kind": "http_response", "request": 1, "status": 404},
            _post(12, 2, {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}, "s-1"),
            {"seq": 13, "t": 0.13, "kind": "http_response", "request": 2, "status": 404},
            _post(14, 3, after_the_call, None),
        ]
        run = _run(entries, None, transport="http", supports={"http"})
        return judge(CATALOGUE["http.new-session-after-404"], run)

    initialize = {"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {}}
    assert judged(initialize).status is Status.PASS
    again = judged({"jsonrpc": "2.0", "id": 9, "method": "tools/call"})
    assert again.status is Status.FAIL
    assert "not a new initialize" in again.reason


# -- 2026 HTTP: cancelled by closing the stream, judged up to the call after the abandoned one ---


def _end(seq: int, number: int) -> dict[str, Any]:
    return {"seq": seq, "t": seq / 100, "kind": "http_end", "request": number,
            "how": "client_closed"}  # fmt: skip


@pytest.mark.parametrize(
    ("order", "status", "why"),
    [
        # hang's close and the POST of slow came on two connections: either may come first.
        (("hang", "close hang", "slow", "close slow", "add"), Status.PASS, "were cancelled"),
        (("hang", "slow", "close hang", "close slow", "add"), Status.PASS, "were cancelled"),
        (("hang", "slow", "close slow", "add", "close hang"), Status.WARN, "hang timed out"),
        (("hang", "close hang", "slow", "add", "close slow"), Status.WARN, "slow was abandoned"),
    ],
)
def test_a_stream_closed_by_the_client_cancels_its_request(
    order: tuple[str, ...], status: Status, why: str
) -> None:
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    number = {"hang": 1, "slow": 2, "add": 3}
    entries: list[dict[str, Any]] = []
    for seq, event in enumerate(order, start=10):
        if event.startswith("close "):
            entries.append(_end(seq, number[event.removeprefix("close ")]))
        else:
            call = {"jsonrpc": "2.0", "id": number[event], "method": "tools/call",
                    "params": {"name": event}}  # fmt: skip
            entries.append(_post(seq, number[event], call, None))
    run = _run(entries, None, revision="2026-07-28", transport="http", supports={"http", "tools"})
    verdict = judge(CATALOGUE["stateless.http-cancel-closes-stream"], run)
    assert verdict.status is status, verdict.reason
    assert why in verdict.reason


# -- a result on a stream left open: slow beside the same call on a stream that ended ----------


@pytest.mark.parametrize(
    ("first", "second", "status", "why"),
    [
        (0.2, 0.1, Status.PASS, "surfaced in 0.20 s"),
        # A loaded machine: every call is slow, the one on the open stream no slower.
        (2.5, 1.0, Status.PASS, "surfaced in 2.50 s"),
        (2.5, 0.1, Status.FAIL, "took 2.5 s to surface, against 0.10 s"),
    ],
)
def test_a_result_on_a_stream_left_open_is_timed_beside_the_usual_call(
    first: float, second: float, status: Status, why: str
) -> None:
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add"}}
    three = [{"type": "text", "text": "3"}]
    entries = [
        *_handshake(),
        _message(4, "client", call),
        _message(5, "server", {"jsonrpc": "2.0", "id": 2, "result": {"content": three}}),
    ]
    add = {"args": ["add", {"a": 1, "b": 2}]}
    operations = [
        _connected(),
        Operation("call_tool", add, value={"content": three}, seconds=first),
        Operation("call_tool", add, value={"content": three}, seconds=second),
    ]
    run = _run(entries, operations, transport="http", supports={"http", "tools"})
    verdict = judge(CATALOGUE["http.stream-left-open-not-blocking"], run)
    assert verdict.status is status, verdict.reason
    assert why in verdict.reason


# -- a rotated refresh token, judged by what the client had seen -------------------------------


def _auth(seq: int, endpoint: str, **details: Any) -> dict[str, Any]:
    return {"seq": seq, "t": seq / 100, "kind": "auth", "server": "resource" if endpoint == "mcp"
            else "authorization", "endpoint": endpoint, **details}  # fmt: skip


def _refresh(seq: int, presented: str, grant: int, issued: int | None = None) -> dict[str, Any]:
    """A refresh presenting `grant`'s refresh token, current or rotated out."""
    details: dict[str, Any] = {
        "params": {"grant_type": "refresh_token"},
        "refresh_token": presented,
    }
    if presented == "current":
        details["refresh_grant"] = grant
    else:
        details["replaced_by"] = grant
    if issued is not None:
        details["issued"] = {"refresh": True, "grant": issued}
    return _auth(seq, "token", **details)


@pytest.mark.parametrize(
    ("after_rotation", "status", "why"),
    [
        # Two 401s at once: both refreshes present grant 1's token; the second arrives
        # after the first rotated it, before the client had used grant 2's tokens.
        ([_refresh(12, "rotated", 2), _auth(13, "mcp", token_grant=2),
          _refresh(14, "current", 2, issued=3)], Status.PASS, "1 presented a rotated-out one"),
        # The client used grant 2's access token, then presented grant 1's refresh token:
        # the violation, a NOTE at 2025-11-25, where only the server is bound by a sentence.
        ([_auth(12, "mcp", token_grant=2), _refresh(13, "rotated", 2)], Status.NOTE,
         "after the client had used a token of the answer that replaced it"),
        ([_auth(12, "mcp", token_grant=2), _refresh(13, "current", 2, issued=3)], Status.PASS,
         "each with the newest refresh token it held"),
        # Nothing after the rotation shows the client had its answer: nothing to judge.
        ([_refresh(12, "rotated", 2)], Status.NOT_APPLICABLE, "never happened"),
    ],
)  # fmt: skip
def test_a_rotated_refresh_token_counts_once_the_client_had_its_replacement(
    after_rotation: list[dict[str, Any]], status: Status, why: str
) -> None:
    import harness.suite  # noqa: F401  (registers the checks)
    from harness.judging._catalogue import CATALOGUE

    entries = [
        *_handshake(),
        _auth(10, "mcp", token_grant=1),
        _refresh(11, "current", 1, issued=2),
        *after_rotation,
    ]
    run = _run(entries, None, revision="2025-11-25", transport="http", supports={"http"})
    verdict = judge(CATALOGUE["auth.refresh-token-rotated"], run)
    assert verdict.status is status, verdict.reason
    assert why in verdict.reason


def test_a_fault_in_a_trigger_or_in_the_root_causes_is_the_harness_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever part of judging raises, the item gets a verdict of its own: the harness's
    fault, with the traceback, never the client's and never missing."""

    def raises(run: ScenarioRun) -> list[Mapping[str, Any]]:
        raise AttributeError("'NoneType' object has no attribute 'get'")

    for check, patch in (
        (_check(_passes_on_initialize, trigger=Trigger("broken", raises)), None),
        (PASSING, "harness.judging._preconditions._find_root_causes"),
    ):
        if patch is not None:
            monkeypatch.setattr(patch, lambda run: raises(run))
        verdict = judge(check, _run())
        assert (verdict.status, verdict.kind, verdict.root) == (
            Status.BLOCKED,
            "harness",
            "harness",
        )
        assert "the harness's own fault" in verdict.reason
        assert "AttributeError" in verdict.evidence[0]["traceback"]


def test_each_unreadable_stdin_line_has_one_owner() -> None:
    """A message written over several lines is stdio.framing's, every line of it; a line
    that is no JSON at all beside it is stdio.only-mcp-messages'; JSON that is no JSON-RPC
    message is jsonrpc.messages-valid's; a batch is stdio.no-batches'."""
    from harness.judging import invalid_line_owner

    def line(seq: int, raw: str, code: int = -32700) -> dict[str, Any]:
        return {"seq": seq, "t": seq / 100, "kind": "invalid", "raw": raw, "code": code}

    pretty = ["{", '  "jsonrpc": "2.0",', '  "method": "notifications/initialized"', "}"]
    entries = [
        *_handshake()[:2],
        *(line(10 + n, raw) for n, raw in enumerate(pretty)),
        line(20, "this is not JSON-RPC"),
        line(21, '{"jsonrpc": "2.0", "id": null, "method": "ping"}', code=-32600),
        line(22, '[{"jsonrpc": "2.0", "method": "notifications/initialized"}]'),
    ]
    run = _run(entries)
    owners = {e["seq"]: invalid_line_owner(run, e) for e in run.of_kind("invalid")}
    assert owners == {
        **dict.fromkeys(range(10, 14), "stdio.framing"),
        20: "stdio.only-mcp-messages",
        21: "jsonrpc.messages-valid",
        22: "stdio.no-batches",
    }
