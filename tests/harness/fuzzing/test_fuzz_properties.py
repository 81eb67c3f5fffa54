"""Each property on a hand-made run: its violation branch fires on the defect it names, and
stays quiet on the run a conformant client makes."""

from __future__ import annotations

from typing import Any

from harness.fuzzing import (
    PROPERTIES,
    CallTool,
    Complete,
    GetPrompt,
    ListResources,
    ListTools,
    Page,
    Plan,
    ReadResource,
    harness_fault,
    judge,
)
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


def _server(message: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "message", "direction": "server", "message": {"jsonrpc": "2.0", **message}}


def _client(message: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "message", "direction": "client", "message": {"jsonrpc": "2.0", **message}}


_BIG_ID = 2**63
_ASKING = Plan(
    "2025-11-25",
    (
        ListTools((Page((_TOOL,), None),), before=({"id": _BIG_ID, "method": "ping"},)),
        CallTool("t", {}, {"result": _RESULT}, after=({"id": "1", "method": "roots/list"},)),
    ),
)
_INITIALIZE = _client(
    {
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
)


def _asking_run(*answers: dict[str, Any]) -> ScenarioRun:
    entries = [
        _INITIALIZE,
        _server({"id": _BIG_ID, "method": "ping"}),
        _server({"id": "1", "method": "roots/list"}),
        *answers,
    ]
    surfaced = [
        Operation("list_tools", {}, value={"tools": [_TOOL]}),
        Operation("call_tool", {}, value=dict(_RESULT)),
    ]
    return _run(*surfaced, entries=entries)


def _asking_failed(run: ScenarioRun) -> dict[str, list[str]]:
    return {name: lines for name, lines in judge(_ASKING, run).items() if lines}


def test_answers_under_the_exact_ids_keep_server_requests_answered() -> None:
    run = _asking_run(
        _client({"id": _BIG_ID, "result": {}}), _client({"id": "1", "result": {"roots": []}})
    )
    assert _asking_failed(run) == {}
    assert harness_fault(run) is None


def test_a_rounded_or_retyped_id_a_missing_answer_and_a_second_answer_are_found() -> None:
    # The ping's id as a double holds it, the roots request's as a number: neither is an
    # id the server sent; and the ping, sent before an answer, is then never answered.
    run = _asking_run(
        _client({"id": float(_BIG_ID), "result": {}}), _client({"id": 1, "result": {"roots": []}})
    )
    found = _asking_failed(run)["server-requests-answered"]
    assert sum("answers no request the server sent" in line for line in found) == 2
    assert any("ping" in line and "never answered" in line for line in found)
    twice = _asking_run(
        _client({"id": _BIG_ID, "result": {}}),
        _client({"id": _BIG_ID, "result": {}}),
    )
    assert any(
        "answered twice" in line for line in _asking_failed(twice)["server-requests-answered"]
    )
    not_empty = _asking_run(_client({"id": _BIG_ID, "result": {"pong": True}}))
    assert any("ping" in line for line in _asking_failed(not_empty)["server-requests-answered"])


def test_a_request_for_a_capability_the_client_did_not_declare_is_the_harnesss_fault() -> None:
    entries = [
        _client({"id": 1, "method": "initialize", "params": {"capabilities": {}}}),
        _server({"id": "1", "method": "roots/list"}),
    ]
    fault = harness_fault(_run(*_conformant(), entries=entries)) or ""
    assert "roots/list" in fault
    assert "declared no roots" in fault
    entries[0] = _INITIALIZE  # declared: no fault
    assert harness_fault(_run(*_conformant(), entries=entries)) is None


_GARBAGE = {"fault": {"kind": "garbage", "text": "{"}}
_FAULTED = Plan(
    "2025-11-25",
    (
        ListTools((Page((_TOOL,), None),), after=(_GARBAGE,)),
        CallTool("t", {}, {"result": _RESULT}),
        CallTool("t", {}, {"error": {"code": 42, "message": "no"}}),
    ),
)


def _faulted_run(*surfaced: Operation) -> dict[str, list[str]]:
    ops = [Operation("list_tools", {}, value={"tools": [_TOOL]}), *surfaced]
    return {name: lines for name, lines in judge(_FAULTED, _run(*ops)).items() if lines}


def test_after_a_survivable_fault_a_lost_operation_is_a_warning_never_a_failure() -> None:
    conformant = _faulted_run(
        Operation("call_tool", {}, value=dict(_RESULT)),
        Operation("call_tool", {}, error={"kind": "protocol", "code": 42, "message": "no"}),
    )
    assert conformant == {}
    lost = {"kind": "transport", "code": None, "message": "the stream is broken"}
    found = _faulted_run(
        Operation("call_tool", {}, error=lost), Operation("call_tool", {}, error=lost)
    )
    # Only the WARN-level property speaks, and only of the operation right after the fault.
    assert list(found) == ["survives-faults"]
    (line,) = found["survives-faults"]
    assert "after the server's deliberate fault (garbage)" in line
    assert "operation 2" in line
    (survives,) = [p for p in PROPERTIES if p.name == "survives-faults"]
    assert survives.level == "WARN"
    assert {p.level for p in PROPERTIES if p is not survives} == {"FAIL"}


def test_a_result_for_a_request_the_server_never_answered_breaks_operations_end() -> None:
    dropped = Plan(
        "2025-11-25",
        (
            ListTools((Page((_TOOL,), None),)),
            CallTool("t", {}, {"fault": {"kind": "drop_connection"}}),
        ),
    )
    listed = Operation("list_tools", {}, value={"tools": [_TOOL]})
    invented = judge(dropped, _run(listed, Operation("call_tool", {}, value=dict(_RESULT))))
    assert any("never answered" in line for line in invented["operations-end"])
    lost = {"kind": "transport", "code": None, "message": "the server exited"}
    reported = judge(dropped, _run(listed, Operation("call_tool", {}, error=lost)))
    assert not any(reported.values())


def test_resources_prompts_and_completions_are_surfaced_as_sent() -> None:
    contents = [{"uri": "file:///a", "blob": "AA=="}]
    plan = Plan(
        "2025-11-25",
        (
            ListResources((Page(({"uri": "file:///a", "name": "a"},), "0"), Page((), None))),
            ReadResource("file:///a", {"result": {"contents": contents}}),
            GetPrompt("p", {}, {"result": {"messages": [], "description": "d"}}),
            Complete({"type": "ref/prompt", "name": "p"}, {"name": "a", "value": ""},
                     {"result": {"completion": {"values": ["x"], "total": 2**53 + 1}}}),
        ),
    )  # fmt: skip
    good = [
        Operation("list_resources", {}, value={"resources": [{"uri": "file:///a", "name": "a"}]}),
        Operation("read_resource", {}, value={"contents": contents}),
        Operation("get_prompt", {}, value={"messages": [], "description": "d"}),
        Operation("complete", {}, value={"completion": {"values": ["x"], "total": 2**53 + 1}}),
    ]
    assert not any(judge(plan, _run(*good)).values())
    bad = [
        Operation("list_resources", {}, value={"resources": []}),
        Operation("read_resource", {}, value={"contents": [{"uri": "file:///a", "text": ""}]}),
        Operation("get_prompt", {}, value={"messages": []}),
        Operation("complete", {}, value={"completion": {"values": ["x"], "total": 2.0**53}}),
    ]
    found = judge(plan, _run(*bad))["surfaced-as-sent"]
    assert [line.split(":")[0] for line in found] == [
        "operation 1 (list_resources)",
        "operation 2 (read_resource)",
        "operation 3 (get_prompt 'p')",
        "operation 4 (complete)",
    ]


def test_a_dual_era_clients_discover_probe_is_judged_at_2026_07_28_not_as_a_breach() -> None:
    probe = _client(
        {
            "id": 0,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                }
            },
        }
    )
    entries = [probe, _INITIALIZE]
    dual = _run(*_conformant(), entries=entries, supports=frozenset({"2025-11-25", "2026-07-28"}))
    assert "messages-valid" not in _failed(dual)
    # A client that does not speak 2026-07-28 has no business sending it at 2025-11-25.
    single = _run(*_conformant(), entries=entries, supports=frozenset({"2025-11-25"}))
    assert any("server/discover" in line for line in _failed(single)["messages-valid"])


def test_a_number_typed_protocol_member_is_compared_by_value_application_data_by_type() -> None:
    # Annotations.priority, Resource.size and the completion's total are schema `number`s:
    # 0 surfaced as 0.0 is the same number (a client's model may hold floats). The same
    # re-typing in structuredContent, or a value that changed, is still found.
    block = {"type": "text", "text": "", "annotations": {"priority": 0}}
    sent = {"content": [block], "structuredContent": {"priority": 0}}
    plan = Plan(
        "2025-11-25",
        (
            ListResources((Page(({"uri": "file:///a", "name": "a", "size": 2},), None),)),
            CallTool("t", {}, {"result": sent}),
            Complete({"type": "ref/prompt", "name": "p"}, {"name": "a", "value": ""},
                     {"result": {"completion": {"values": [], "total": 4}}}),
        ),
    )  # fmt: skip
    floated = {"type": "text", "text": "", "annotations": {"priority": 0.0}}

    def found(size: float, structured: float, total: float) -> list[str]:
        ops = [
            Operation("list_resources", {}, value={"resources": [{"uri": "file:///a", "name": "a", "size": size}]}),
            Operation("call_tool", {}, value={"content": [floated], "structuredContent": {"priority": structured}}),
            Operation("complete", {}, value={"completion": {"values": [], "total": total}}),
        ]  # fmt: skip
        return judge(plan, _run(*ops))["surfaced-as-sent"]

    assert found(2.0, 0, 4.0) == []
    (retyped,) = found(2.0, 0.0, 4.0)
    assert "structuredContent" in retyped
    assert len(found(2.5, 0, 5.0)) == 2
