"""The generated plans: every one is an ordinary script that passes the project's checks
(`validate`'s format, meaning and send-gate conformance), reads back as the same plan, and
so do the smaller plans the structural shrink pass tries. The ids of the server's requests
are unique in a plan, a fatal fault only ends one, and a seed's plans reach every kind of
behaviour the plans are for."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, note, seed, settings

from harness.fuzzing import (
    FUZZ_REVISIONS,
    PROPERTIES,
    CallTool,
    Complete,
    GetPrompt,
    Listing,
    ListPrompts,
    ListResources,
    ListTools,
    Plan,
    ReadResource,
    plan_of_script,
    plans,
    smaller_plans,
)
from harness.suite import REQUIREMENTS
from mock_servers import ScriptError, parse_script

_FEW = settings(
    max_examples=60, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_FEW
@given(plans("2025-11-25"))
def test_every_generated_script_passes_validate_and_the_send_gate(plan: Plan) -> None:
    script = plan.to_script()
    note(json.dumps(script, indent=1))
    parsed = parse_script(script)  # ScriptError on any problem, conformance included
    assert list(parsed.revisions) == ["2025-11-25"]
    assert list(parsed.transports) == ["stdio"]
    assert plan_of_script(script) == plan


def _server_requests(plan: Plan) -> list[dict[str, Any]]:
    return [
        dict(m)
        for op in plan.operations
        for m in (*op.before, *op.after)
        if "method" in m and "id" in m
    ]


@_FEW
@given(plans("2025-11-25"))
def test_server_request_ids_are_unique_and_a_fatal_fault_is_the_last_answer(plan: Plan) -> None:
    note(plan.to_json_text())
    ids = [json.dumps([type(m["id"]).__name__, m["id"]]) for m in _server_requests(plan)]
    assert len(ids) == len(set(ids))
    fatal = [
        i for i, op in enumerate(plan.operations) if not isinstance(op, Listing) and op.is_fault
    ]
    assert fatal in ([], [len(plan.operations) - 1])
    for op in plan.operations:
        assert op.delay_ms <= 100
        if not isinstance(op, Listing) and op.is_fault:
            assert op.after == ()  # nothing is sent on a connection that is gone


@settings(max_examples=30, database=None, deadline=None)
@given(plans("2025-11-25"))
def test_every_smaller_plan_is_a_valid_script_too(plan: Plan) -> None:
    for smaller in smaller_plans(plan):
        note(smaller.to_json_text())
        parse_script(smaller.to_script())
        assert plan_of_script(smaller.to_script()) == smaller
        assert len(smaller.to_json_text()) < len(plan.to_json_text())


def test_the_send_gate_check_fires_on_a_plan_the_schema_refuses() -> None:
    # The gate the property above relies on: a result without `content` is refused.
    script = json.loads(json.dumps(_one_call({"result": {"isError": True}}).to_script()))
    with pytest.raises(ScriptError, match="content"):
        parse_script(script)


def _one_call(reply: dict[str, object]) -> Plan:
    return Plan("2025-11-25", (CallTool("t", {}, reply),))


def test_a_script_not_written_by_the_fuzzer_is_refused_on_reading_back() -> None:
    script = _one_call({"result": {"content": []}}).to_script()
    script["steps"][0]["label"] = "my step"
    with pytest.raises(ValueError, match="my step"):
        plan_of_script(script)


def test_every_property_names_requirements_of_the_table_at_the_revision() -> None:
    assert len(PROPERTIES) == 7
    assert [p.name for p in PROPERTIES if p.level == "WARN"] == ["survives-faults"]
    for prop in PROPERTIES:
        assert prop.requirements, prop.name
        for requirement in prop.requirements:
            assert requirement in REQUIREMENTS, (prop.name, requirement)
            # Plans are drawn at 2025-11-25 (and adapted to the other revisions).
            assert "2025-11-25" in REQUIREMENTS[requirement].revisions, (prop.name, requirement)
            assert set(FUZZ_REVISIONS) & set(REQUIREMENTS[requirement].revisions)


def _calls(plan: Plan) -> list[CallTool]:
    return [op for op in plan.operations if isinstance(op, CallTool)]


def _of(plan: Plan, kind: type) -> list[Any]:
    return [op for op in plan.operations if isinstance(op, kind)]


def _requested(plan: Plan, method: str) -> bool:
    return any(m["method"] == method for m in _server_requests(plan))


def _faulted(plan: Plan, kind: str) -> bool:
    return any(
        item.get("fault", {}).get("kind") == kind
        for op in plan.operations
        for item in (*op.after, op.reply)
    )


def _blocks(plan: Plan) -> list[dict[str, Any]]:
    return [b for c in _calls(plan) for b in c.reply.get("result", {}).get("content", [])]


def _big(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_big(v) for v in value.values())
    if isinstance(value, list):
        return any(_big(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53


def _empty_cursor_before_a_page(plan: Plan) -> bool:
    return any(
        page.next_cursor == ""
        for op in plan.operations
        if isinstance(op, Listing)
        for page in op.pages
    )


_REACHED: dict[str, Callable[[Plan], bool]] = {
    **{
        f"a {kind} block": functools.partial(
            lambda kind, plan: any(b["type"] == kind for b in _blocks(plan)), kind
        )
        for kind in ("text", "image", "audio", "resource_link", "resource")
    },
    "an empty cursor before a page": _empty_cursor_before_a_page,
    "an integer beyond 2**53 in structuredContent": lambda plan: any(
        _big(c.reply.get("result", {}).get("structuredContent")) for c in _calls(plan)
    ),
    "an isError result": lambda plan: any(c.is_error_result for c in _calls(plan)),
    "a JSON-RPC error": lambda plan: any(c.is_protocol_error for c in _calls(plan)),
    "a notification before a reply and a send step": lambda plan: (
        any(op.before for op in plan.operations) and any(op.after for op in plan.operations)
    ),
    "an outputSchema": lambda plan: any(
        "outputSchema" in tool for page in plan.operations[0].pages for tool in page.items
    ),
    **{
        f"a {kind.__name__}": functools.partial(lambda kind, plan: bool(_of(plan, kind)), kind)
        for kind in (ListTools, ListResources, ListPrompts, ReadResource, GetPrompt, Complete)
    },
    "a blob read": lambda plan: any(
        "blob" in item
        for op in _of(plan, ReadResource)
        for item in op.reply.get("result", {}).get("contents", [])
    ),
    **{
        f"a server request {method}": functools.partial(
            lambda method, plan: _requested(plan, method), method
        )
        for method in ("ping", "sampling/createMessage", "elicitation/create", "roots/list")
    },
    "a server request before an answer": lambda plan: any(
        "id" in m for op in plan.operations for m in op.before
    ),
    "a server request id beyond 2**53": lambda plan: any(
        _big(m["id"]) for m in _server_requests(plan)
    ),
    "a string server request id": lambda plan: any(
        isinstance(m["id"], str) for m in _server_requests(plan)
    ),
    "a delay": lambda plan: any(op.delay_ms for op in plan.operations),
    **{
        f"a {kind} fault": functools.partial(lambda kind, plan: _faulted(plan, kind), kind)
        for kind in ("garbage", "oversized_line", "stderr", "drop_connection", "crash")
    },
}


def test_300_plans_of_a_seed_reach_every_kind_of_behaviour() -> None:
    reached: set[str] = set()

    @settings(max_examples=300, database=None, deadline=None, phases=[Phase.generate])
    @seed(1)
    @given(plans("2025-11-25"))
    def collect(plan: Plan) -> None:
        reached.update(what for what, seen in _REACHED.items() if seen(plan))

    collect()
    assert sorted(set(_REACHED) - reached) == []
