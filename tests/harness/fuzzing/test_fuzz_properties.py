"""Each property on a hand-made run: its violation branch fires on the defect it names, and
stays quiet on the run a conformant client makes."""

from __future__ import annotations

from typing import Any

from harness.fuzzing import PROPERTIES, CallTool, ListTools, Page, Plan, harness_fault, judge
from harness.running import Operation, Scenario, ScenarioRun

_TOOL = {"name": "t", "inputSchema": {"type": "object"}}
_LIST = ListTools((Page((_TOOL,), ""), Page(({**_TOOL, "name": "u"},), None)))
_RESULT = {"content": [{"type": "text", "text": "5"}], "structuredContent": {"n": 5}}
_TOOL_ERROR = {"content": [{"type": "image", "data": "", "mimeType": "image/png"}], "isError": True}
_PLAN = Plan(
    "2025-11-25",
    (
        _LIST,
        CallTool("t", {}, {"result": _RESULT}),
        CallTool("t", {}, {"result": _TOOL_ERROR}),
        CallTool("t", {}, {"error": {"code": 42, "message": "no"}}),
    ),
)


def _request(request_id: Any, method: str) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "t", "arguments": {}} if method == "tools/call" else {}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _run(
    *surfaced: Operation, entries: list[dict[str, Any]] | None = None, **fields: Any
) -> ScenarioRun:
    if entries is None:
        entries = [
            {"kind": "message", "direction": "client", "message": _request(n, m)}
            for n, m in enumerate(["tools/list", "tools/list", "tools/call", "tools/call"], 1)
        ]
    return ScenarioRun(
        Scenario("fuzz", "fuzz.json", ()),
        "2025-11-25",
        "stdio",
        transcript={"entries": entries},
        operations=[Operation("connect", {}, value={}), *surfaced],
        **fields,
    )


def _conformant() -> list[Operation]:
    return [
        Operation("list_tools", {}, value=_LIST.expected),
        Operation("call_tool", {}, value=dict(_RESULT)),
        Operation("call_tool", {}, value=dict(_TOOL_ERROR)),
        Operation("call_tool", {}, error={"kind": "protocol", "code": 42, "message": "no"}),
    ]


def _failed(run: ScenarioRun) -> dict[str, list[str]]:
    return {name: lines for name, lines in judge(_PLAN, run).items() if lines}


def test_a_conformant_run_keeps_every_property() -> None:
    assert _failed(_run(*_conformant())) == {}
    assert [p.name for p in PROPERTIES] == list(judge(_PLAN, _run(*_conformant())))


def test_a_hang_a_crash_and_a_missing_operation_break_operations_end() -> None:
    ops = _conformant()
    ops[1] = Operation("call_tool", {}, error={"kind": "hang", "code": None, "message": "x"})
    ops[2] = Operation("call_tool", {}, error={"kind": "crash", "code": None, "message": "Boom"})
    found = _failed(_run(*ops[:3]))["operations-end"]
    assert any("never returned" in line for line in found)
    assert any("Boom" in line for line in found)
    assert any("only 3 of 4" in line for line in found)


def test_an_invalid_line_and_a_message_the_schema_refuses_break_messages_valid() -> None:
    entries = [
        {"kind": "invalid", "direction": "client", "line": 3, "reason": "not JSON"},
        {"kind": "message", "direction": "client", "message": _request(None, "tools/list")},
    ]
    found = _failed(_run(*_conformant(), entries=entries))["messages-valid"]
    assert any("line 3" in line for line in found)
    assert any("/id" in line for line in found)


def test_an_id_used_twice_breaks_ids_unique_but_1_and_the_string_1_differ() -> None:
    twice = [
        {"kind": "message", "direction": "client", "message": _request(1, "tools/list")},
        {"kind": "message", "direction": "client", "message": _request(1, "tools/call")},
    ]
    assert _failed(_run(*_conformant(), entries=twice))["ids-unique"]
    twice[1]["message"] = _request("1", "tools/call")
    assert "ids-unique" not in _failed(_run(*_conformant(), entries=twice))


def test_a_retyped_number_and_a_lost_page_break_surfaced_as_sent() -> None:
    ops = _conformant()
    ops[1] = Operation("call_tool", {}, value={**_RESULT, "structuredContent": {"n": 5.0}})
    found = _failed(_run(*ops))["surfaced-as-sent"]
    assert len(found) == 1
    assert "structuredContent" in found[0]
    ops = _conformant()
    ops[0] = Operation("list_tools", {}, value={"tools": [_TOOL]})
    assert "operation 1 (list_tools)" in _failed(_run(*ops))["surfaced-as-sent"][0]


def test_a_tool_failure_as_success_and_a_protocol_error_as_a_tool_error_are_told_apart() -> None:
    ops = _conformant()
    ops[2] = Operation("call_tool", {}, value={"content": _TOOL_ERROR["content"]})
    ops[3] = Operation("call_tool", {}, error={"kind": "tool", "code": None, "message": "no"})
    found = _failed(_run(*ops))["errors-told-apart"]
    assert len(found) == 2
    assert "surfaced as a success" in found[0]
    assert "not as a protocol error" in found[1]
    # A ClientError of kind `tool` is a tool failure too (docs/clients.md).
    ops = _conformant()
    ops[2] = Operation("call_tool", {}, error={"kind": "tool", "code": None, "message": ""})
    assert "errors-told-apart" not in _failed(_run(*ops))


def test_a_mock_error_is_the_harnesss_fault_not_the_clients() -> None:
    entries = [{"kind": "mock_error", "pointer": "/result", "reason": "refused"}]
    assert "refused" in (harness_fault(_run(*_conformant(), entries=entries)) or "")
    assert harness_fault(_run(*_conformant())) is None
