"""Plans as they are served: at each revision, over each transport, every script passes
`validate` (format, meaning, and every message the mock would send against the revision's
schema: the send gate), reads back as the same served plan, and so do its smaller
candidates; what a revision or transport cannot carry is left out, and over HTTP the
framing reaches every knob it is for."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, seed, settings
from hypothesis import strategies as st

from harness.clients import ReferenceClient
from harness.fuzzing import (
    FUZZ_REVISIONS,
    FUZZ_TRANSPORTS,
    CallTool,
    ListTools,
    Page,
    Plan,
    ServedPlan,
    harness_fault,
    judge,
    run_plan,
    served_of_script,
    served_plans,
    smaller_served,
)
from mock_servers import parse_script

_FEW = settings(
    max_examples=25, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
_EVERY = [(r, t) for r in FUZZ_REVISIONS for t in FUZZ_TRANSPORTS]


def _answers(script: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in script["steps"] if "reply" in s and "method" in s.get("expect", {})]


def _check_served(served: ServedPlan, revision: str, transport: str) -> None:
    script = served.to_script()
    note(json.dumps(script, indent=1))
    parsed = parse_script(script)  # ScriptError on any problem, conformance included
    assert list(parsed.revisions) == [revision]
    assert list(parsed.transports) == [transport]
    assert served_of_script(script) == served
    for op in served.plan.operations:
        if revision == "2026-07-28":  # nothing goes with an answer unasked
            assert (op.before, op.after) == ((), ())
        if transport == "http":  # nothing relies on a GET stream, no stdio fault
            assert all("fault" not in m and "id" not in m for m in op.after)
    for step in _answers(script):
        fault = step["reply"].get("fault", {}).get("kind")
        if transport == "http":
            assert fault != "crash"
            if step["reply"].get("before"):
                assert step["reply"].get("as") == "sse"  # on the request's own stream
        else:
            assert not {"as", "sse"} & set(step["reply"])


@pytest.mark.parametrize(("revision", "transport"), _EVERY)
def test_every_served_script_passes_validate_and_reads_back(revision: str, transport: str) -> None:
    @_FEW
    @given(served_plans(revision, transport))
    def check(served: ServedPlan) -> None:
        _check_served(served, revision, transport)

    check()


@pytest.mark.parametrize(
    ("revision", "transport"), [("2025-11-25", "http"), ("2026-07-28", "http")]
)
def test_every_smaller_candidate_is_served_the_same_way_and_valid(
    revision: str, transport: str
) -> None:
    @settings(max_examples=10, database=None, deadline=None)
    @given(served_plans(revision, transport))
    def check(served: ServedPlan) -> None:
        candidates = smaller_served(served)
        if served.framing:
            assert candidates[0] == ServedPlan(served.plan, transport) or any(
                step["reply"].get("before") for step in _answers(served.to_script())
            )
        for smaller in candidates:
            assert smaller.transport == transport
            _check_served(smaller, revision, transport)

    check()


def _framing_seen(revision: str) -> Counter[str]:
    seen: Counter[str] = Counter()

    @settings(max_examples=30, database=None, deadline=None)
    @seed(37)
    @given(served_plans(revision, "http"))
    def collect(served: ServedPlan) -> None:
        for step in _answers(served.to_script()):
            reply = step["reply"]
            seen[reply.get("as", "json")] += 1
            sse = reply.get("sse", {})
            seen.update(k for k in ("chunk_size", "retry") if k in sse)
            for event in sse.get("events", []):
                seen.update(
                    k
                    for k in ("comment", "prime", "id", "retry", "multiline", "event")
                    if k in event
                )
            if 0 < sse.get("chunk_size", 99) <= 8:
                seen["small chunks"] += 1

    collect()
    return seen


def test_over_http_the_framing_reaches_every_knob_at_2025_11_25() -> None:
    seen = _framing_seen("2025-11-25")
    for knob in (
        "json",
        "sse",
        "comment",
        "prime",
        "id",
        "retry",
        "multiline",
        "event",
        "chunk_size",
        "small chunks",
    ):
        assert seen[knob] > 0, (knob, seen)


def test_at_2026_07_28_no_stream_is_resumable_so_no_id_priming_or_retry() -> None:
    seen = _framing_seen("2026-07-28")
    for knob in ("json", "sse", "comment", "multiline", "chunk_size"):
        assert seen[knob] > 0, (knob, seen)
    assert seen["prime"] == seen["id"] == seen["retry"] == 0, seen


@given(st.sampled_from(["sse-legacy", "websocket"]))
def test_an_unknown_revision_or_transport_is_refused(transport: str) -> None:
    with pytest.raises(ValueError, match="served over"):
        served_plans("2025-11-25", transport)
    with pytest.raises(ValueError, match="served at"):
        served_plans("2025-06-18", "stdio")


def test_at_2026_07_28_over_http_a_dropped_answer_stays_unanswered_when_re_issued(
    tmp_path: Path,
) -> None:
    # HM-5: a broken stream's request is re-issued with a new id. The server the plan
    # describes never answers it: each re-issue breaks too (the step repeats), so the
    # client ends with a failure, as the properties expect, and not with whatever a
    # server would have answered to a request no step is for.
    dropped = CallTool("t", {}, {"fault": {"kind": "drop_connection"}})
    plan = Plan("2026-07-28", (ListTools((Page((), None),)), dropped))
    served = ServedPlan(plan, "http", ({"as": "json"}, {"as": "sse", "sse": {"events": []}}))
    script = served.to_script()
    assert [s.get("repeat") for s in script["steps"]] == [None, True]
    assert served_of_script(script) == served
    run = run_plan(served, ReferenceClient, tmp_path / "dropped.json")
    asked = [e["message"]["id"] for e in run.requests("tools/call")]
    assert len(asked) > 1  # re-issued,
    assert len(set(asked)) == len(asked)  # each time with a new id
    assert run.operations[-1].error is not None
    assert harness_fault(run) is None
    assert {name: lines for name, lines in judge(plan, run).items() if lines} == {}
    # Over stdio, or at 2025-11-25, a drop is the end of the connection: no repeat.
    for elsewhere in (
        ServedPlan(plan),
        ServedPlan(dataclasses.replace(plan, revision="2025-11-25"), "http"),
    ):
        assert all("repeat" not in s for s in elsewhere.to_script()["steps"])
