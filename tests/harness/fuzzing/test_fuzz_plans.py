"""The generated plans: every one is an ordinary script that passes the project's checks
(`validate`'s format, meaning and send-gate conformance), reads back as the same plan, and
so do the smaller plans the structural shrink pass tries."""

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
    ListTools,
    Plan,
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
    assert len(PROPERTIES) == 5
    for prop in PROPERTIES:
        assert prop.requirements, prop.name
        for requirement in prop.requirements:
            assert requirement in REQUIREMENTS, (prop.name, requirement)
            assert set(FUZZ_REVISIONS) <= set(REQUIREMENTS[requirement].revisions)


def _calls(plan: Plan) -> list[CallTool]:
    return [op for op in plan.operations if isinstance(op, CallTool)]


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
        if isinstance(op, ListTools)
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
        "outputSchema" in tool for page in plan.operations[0].pages for tool in page.tools
    ),
}


def test_60_plans_of_a_seed_reach_every_kind_of_behaviour() -> None:
    reached: set[str] = set()

    @settings(max_examples=60, database=None, deadline=None, phases=[Phase.generate])
    @seed(37)
    @given(plans("2025-11-25"))
    def collect(plan: Plan) -> None:
        reached.update(what for what, seen in _REACHED.items() if seen(plan))

    collect()
    assert sorted(set(_REACHED) - reached) == []
