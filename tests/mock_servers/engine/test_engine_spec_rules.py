"""The engine's spec rules: what the client declared, the 2026 logLevel opt-in, and the
defaults of declared capabilities (docs/scripts.md, "Defaults")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.protocol import ErrorResponse, Message, Request, Response
from mock_servers.engine._engine import (
    META_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    Engine,
    Outcome,
    send_problem,
)
from mock_servers.engine._script import ScriptError, load_script, parse_script
from mock_servers.engine._transcript import Transcript

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
MODERN = "2026-07-28"
SAMPLE = {
    "id": "srv-s",
    "method": "sampling/createMessage",
    "params": {
        "maxTokens": 5,
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    },
}
LOG = {"method": "notifications/message", "params": {"level": "info", "data": "x"}}


def _script(
    steps: list[dict[str, Any]],
    revision: str = "2025-11-25",
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "format_version": 1,
        "name": "t",
        "revisions": [revision],
        "server": {"capabilities": {"tools": {}} if capabilities is None else capabilities},
        "steps": steps,
    }


def _engine(
    steps: list[dict[str, Any]],
    revision: str = "2025-11-25",
    capabilities: dict[str, Any] | None = None,
) -> Engine:
    script = parse_script(_script(steps, revision, capabilities))
    return Engine(script, revision, "stdio", Transcript(script="t", revision=revision))


def _initialize(engine: Engine, capabilities: dict[str, Any]) -> None:
    params = {
        "protocolVersion": engine.revision,
        "capabilities": capabilities,
        "clientInfo": {"name": "c", "version": "1"},
    }
    engine.handle(Request(0, "initialize", params))


def _meta(**extra: Any) -> dict[str, Any]:
    return {META_PROTOCOL_VERSION: MODERN, META_CAPABILITIES: {}, **extra}


def _answer(outcome: Outcome) -> Message | None:
    assert outcome.delivery is not None
    return outcome.delivery.response


def _withheld(engine: Engine) -> list[dict[str, Any]]:
    return [e for e in engine.transcript.entries if e["kind"] == "withheld"]


# An operator on `_meta` leaves the logLevel rule to the engine at run time (validate
# cannot know it): what the run-time tests need.
RUN_TIME = {"method": "tools/call", "params": {"_meta": {"$type": "object"}}}


def _asking(*before: dict[str, Any], revision: str = "2025-11-25") -> Engine:
    return _engine(
        [
            {
                "expect": RUN_TIME if revision == MODERN else {"method": "tools/call"},
                "repeat": True,
                "reply": {"before": list(before), "result": {"content": []}},
            }
        ],
        revision,
    )


# -- what the client declared -----------------------------------------------------------------


def test_a_server_request_for_an_undeclared_capability_is_withheld() -> None:
    engine = _asking({"id": "srv-r", "method": "roots/list"}, SAMPLE)
    _initialize(engine, {"roots": {}})
    outcome = engine.handle(Request(1, "tools/call", {"name": "a"}))
    assert outcome.delivery is not None
    assert [m["id"] for m in outcome.delivery.before] == ["srv-r"]  # sampling left out
    assert outcome.delivery.awaits == ["srv-r"]  # and not waited for
    (error,) = _withheld(engine)
    assert error["message"]["method"] == "sampling/createMessage"
    assert error["rule"] == "undeclared-capability"
    assert "did not declare sampling" in error["reason"]
    assert "violation" in error["fix"]


def test_a_marked_message_is_sent_without_its_mark() -> None:
    marked = {**SAMPLE, "violation": "LC-6: the client must refuse it"}
    engine = _asking(marked)
    _initialize(engine, {})
    outcome = engine.handle(Request(1, "tools/call", {"name": "a"}))
    assert outcome.delivery is not None
    (sent,) = outcome.delivery.before
    assert "violation" not in sent
    assert sent["method"] == "sampling/createMessage"
    assert _withheld(engine) == []


def test_a_send_step_needs_the_declared_capability_too() -> None:
    engine = _engine(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": {"tools": []}}},
            {"send": {"id": "srv-r", "method": "roots/list"}},
        ]
    )
    _initialize(engine, {"sampling": {}})
    assert engine.handle(Request(1, "tools/list")).actions == []
    assert "roots" in _withheld(engine)[0]["reason"]


@pytest.mark.parametrize(
    ("params", "declared", "allowed"),
    [
        ({"message": "m", "requestedSchema": {"type": "object", "properties": {}}}, {}, True),
        ({"mode": "form", "message": "m", "requestedSchema": {}}, {"form": {}}, True),
        ({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}, {}, False),
        ({"mode": "url", "message": "m", "url": "https://x"}, {"form": {}}, False),
        ({"mode": "url", "message": "m", "url": "https://x"}, {"url": {}}, True),
        ({"mode": "form", "message": "m", "requestedSchema": {}}, {"url": {}}, False),
    ],
)
def test_elicitation_modes_follow_the_declaration(
    params: dict[str, Any], declared: dict[str, Any], allowed: bool
) -> None:
    message = {"id": 1, "method": "elicitation/create", "params": params}
    problem = send_problem(
        message, revision="2025-11-25", client_capabilities={"elicitation": declared}
    )
    assert (problem is None) is allowed, problem


def test_tool_use_in_sampling_needs_sampling_tools() -> None:
    with_tools = {**SAMPLE, "params": {**SAMPLE["params"], "tools": []}}
    declared = {"sampling": {}}
    assert send_problem(SAMPLE, revision="2025-11-25", client_capabilities=declared) is None
    problem = send_problem(with_tools, revision="2025-11-25", client_capabilities=declared)
    assert problem is not None
    assert "sampling.tools" in problem.reason
    assert problem.rule == "undeclared-capability"
    assert (
        send_problem(
            with_tools, revision="2025-11-25", client_capabilities={"sampling": {"tools": {}}}
        )
        is None
    )


def test_2026_input_requests_use_the_capabilities_of_their_request() -> None:
    engine = _engine(
        [
            {
                "expect": {"method": "tools/call"},
                "repeat": True,
                "reply": {
                    "result": {
                        "resultType": "input_required",
                        "inputRequests": {"r": {"method": "roots/list"}},
                    }
                },
            }
        ],
        MODERN,
    )
    declared = {"_meta": {**_meta(), META_CAPABILITIES: {"roots": {}}}}
    asked = _answer(engine.handle(Request(1, "tools/call", {"name": "a", **declared})))
    assert isinstance(asked, Response)
    assert asked.result["inputRequests"] == {"r": {"method": "roots/list"}}
    # Never inferred from an earlier request: this one declares nothing.
    outcome = engine.handle(Request(2, "tools/call", {"name": "a", "_meta": _meta()}))
    refused = _answer(outcome)
    assert isinstance(refused, ErrorResponse)
    assert refused.error.code == -32021
    assert refused.error.data == {"requiredCapabilities": {"roots": {}}}
    assert outcome.delivery is not None
    assert outcome.delivery.status == 400
    assert len(_withheld(engine)) == 1


# -- the 2026-07-28 logLevel opt-in --------------------------------------------------------------


def test_2026_log_messages_only_on_requests_that_opted_in_at_or_below_their_level() -> None:
    debug = {"method": "notifications/message", "params": {"level": "debug", "data": "d"}}
    error = {"method": "notifications/message", "params": {"level": "error", "data": "e"}}
    engine = _asking(debug, error, revision=MODERN)

    def levels(meta: dict[str, Any]) -> list[str]:
        outcome = engine.handle(Request(1, "tools/call", {"name": "a", "_meta": meta}))
        assert outcome.delivery is not None
        return [m["params"]["level"] for m in outcome.delivery.before]

    assert levels(_meta(**{META_LOG_LEVEL: "debug"})) == ["debug", "error"]
    assert levels(_meta(**{META_LOG_LEVEL: "warning"})) == ["error"]
    assert levels(_meta()) == []
    assert {e["rule"] for e in _withheld(engine)} == {"log-opt-in"}
    reasons = [e["reason"] for e in _withheld(engine)]
    assert "asked for warning" in reasons[0]
    assert all("did not opt in" in r for r in reasons[1:])
    assert len(reasons) == 3


def test_before_2026_log_messages_need_no_opt_in() -> None:
    engine = _asking(LOG)
    outcome = engine.handle(Request(1, "tools/call", {"name": "a"}))
    assert outcome.delivery is not None
    assert len(outcome.delivery.before) == 1


def test_a_log_message_in_the_sse_items_is_replaced_by_a_comment() -> None:
    engine = _engine(
        [
            {
                "expect": RUN_TIME,
                "reply": {
                    "result": {"content": []},
                    "sse": {"events": [{"message": LOG, "id": "7"}, {"response": True}]},
                },
            }
        ],
        MODERN,
    )
    outcome = engine.handle(Request(1, "tools/call", {"name": "a", "_meta": _meta()}))
    assert outcome.delivery is not None
    first = outcome.delivery.sse["events"][0]
    assert "message" not in first
    assert first["id"] == "7"
    assert "comment" in first
    assert len(_withheld(engine)) == 1


def test_validate_notices_a_2026_log_message_without_the_opt_in() -> None:
    step = {
        "expect": {"method": "tools/call"},
        "reply": {"before": [LOG], "result": {"content": []}},
    }
    with pytest.raises(ScriptError) as caught:
        parse_script(_script([step], MODERN))
    assert caught.value.pointer == "/steps/0/reply/before/0"
    assert "without _meta io.modelcontextprotocol/logLevel" in caught.value.reason
    assert META_LOG_LEVEL in caught.value.fix


def test_validate_notices_a_pattern_that_admits_a_higher_level() -> None:
    step = {
        "expect": {
            "method": "tools/call",
            "params": {"_meta": {META_LOG_LEVEL: {"$present": True}}},
        },
        "reply": {"before": [LOG], "result": {"content": []}},
    }
    with pytest.raises(ScriptError) as caught:
        parse_script(_script([step], MODERN))
    assert "asking for notice and above" in caught.value.reason
    right = {"$any": ["debug", "info"]}
    step["expect"] = {"method": "tools/call", "params": {"_meta": {META_LOG_LEVEL: right}}}
    parse_script(_script([step], MODERN))  # info for debug and info: right
    parse_script(_script([{**step, "expect": {"method": "tools/call"}}], "2025-11-25"))


def test_a_2026_log_message_tied_to_no_request_is_refused() -> None:
    problem = send_problem(LOG, revision=MODERN, client_capabilities={})
    assert problem is not None
    assert problem.rule == "log-without-request"
    assert send_problem(LOG, revision="2025-11-25", client_capabilities={}) is None
    steps = [{"send": LOG}]
    with pytest.raises(ScriptError) as caught:
        parse_script(_script(steps, MODERN))
    assert caught.value.pointer == "/steps/0/send"
    parse_script(_script([{"send": LOG, "violation": "a client must survive it"}], MODERN))


@pytest.mark.parametrize("name", ["features/logging-2026.json", "http/json-and-sse.json"])
def test_fixtures_send_2026_log_messages_only_to_requests_that_opted_in(name: str) -> None:
    script = load_script(FIXTURES / name)

    def sent(meta: dict[str, Any]) -> list[str]:
        engine = Engine(script, MODERN, "http", Transcript(script="t", revision=MODERN))
        levels = []
        for request_id, (method, params) in enumerate(
            [("tools/list", {}), ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})]
        ):
            outcome = engine.handle(Request(request_id, method, {**params, "_meta": meta}))
            assert isinstance(_answer(outcome), Response), (method, meta)
            assert outcome.delivery is not None
            levels += [m["params"]["level"] for m in outcome.delivery.before]
        assert _withheld(engine) == []
        return levels

    assert sent(_meta()) == []
    assert sent(_meta(**{META_LOG_LEVEL: "emergency"})) == []
    assert sent(_meta(**{META_LOG_LEVEL: "debug"}))  # the opted-in client gets them


# -- defaults of declared capabilities -------------------------------------------------------------


def test_set_level_is_answered_when_logging_is_declared() -> None:
    engine = _engine([], capabilities={"logging": {}})
    assert _answer(engine.handle(Request(1, "logging/setLevel", {"level": "info"}))) == Response(
        1, {}
    )
    assert engine.log_level == "info"
    undeclared = _answer(_engine([]).handle(Request(1, "logging/setLevel", {"level": "info"})))
    assert isinstance(undeclared, ErrorResponse)
    assert undeclared.error.code == -32601


def test_set_level_is_unknown_at_2026_where_it_was_removed() -> None:
    engine = _engine([], MODERN, {"logging": {}})
    answer = _answer(engine.handle(Request(1, "logging/setLevel", {"_meta": _meta()})))
    assert isinstance(answer, ErrorResponse)
    assert answer.error.code == -32601


@pytest.mark.parametrize("revision", ["2025-06-18", MODERN])
def test_completion_defaults_to_no_values(revision: str) -> None:
    engine = _engine([], revision, {"completions": {}, "prompts": {}})
    params = {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "a", "value": "x"},
        "_meta": _meta(),
    }
    answer = _answer(engine.handle(Request(1, "completion/complete", params)))
    assert isinstance(answer, Response)
    assert answer.result["completion"] == {"values": [], "total": 0, "hasMore": False}
    assert answer.result.get("resultType") == ("complete" if revision == MODERN else None)


def test_subscribe_is_answered_only_when_subscribe_is_declared() -> None:
    params = {"uri": "file:///a"}
    engine = _engine([], capabilities={"resources": {"subscribe": True}})
    for method in ("resources/subscribe", "resources/unsubscribe"):
        assert _answer(engine.handle(Request(1, method, params))) == Response(1, {})
    engine = _engine([], capabilities={"resources": {}})
    answer = _answer(engine.handle(Request(1, "resources/subscribe", params)))
    assert isinstance(answer, ErrorResponse)
    assert answer.error.code == -32601


def test_an_unscripted_tool_is_an_unknown_tool_not_an_unknown_method() -> None:
    engine = _engine([{"expect": {"method": "tools/list"}, "reply": {"result": {"tools": []}}}])
    answer = _answer(engine.handle(Request(1, "tools/call", {"name": "nope"})))
    assert isinstance(answer, ErrorResponse)
    assert (answer.error.code, answer.error.message) == (-32602, "Unknown tool: nope")
    assert answer.error.data["mcp-testbench"] == "unscripted message"


def test_a_declared_capability_method_no_step_scripts_is_never_method_not_found() -> None:
    engine = _engine([], capabilities={"resources": {}, "prompts": {}})
    for method in ("resources/read", "prompts/get"):
        answer = _answer(engine.handle(Request(1, method, {"uri": "x", "name": "x"})))
        assert isinstance(answer, ErrorResponse), method
        assert answer.error.code == -32602, method
    outside = _answer(engine.handle(Request(2, "tools/list")))
    assert isinstance(outside, ErrorResponse)
    assert outside.error.code == -32601


def test_the_listed_tool_gone_is_a_marked_violation() -> None:
    data = json.loads((FIXTURES / "tools/list-and-call.json").read_text(encoding="utf-8"))
    (gone,) = [s for s in data["steps"] if s["expect"].get("params", {}).get("name") == "gone"]
    assert gone["reply"]["error"]["code"] == -32601
    assert "tools/call exists" in gone["reply"]["violation"]


def test_version_retry_refusal_is_a_marked_violation() -> None:
    data = json.loads((FIXTURES / "stateless/version-retry.json").read_text(encoding="utf-8"))
    refusal = data["steps"][0]["reply"]
    assert refusal["error"]["code"] == -32022
    assert MODERN in refusal["error"]["data"]["supported"]
    assert "supports" in refusal["violation"]


def test_every_fixture_declaring_logging_answers_set_level() -> None:
    answered = 0
    for path in sorted(FIXTURES.rglob("*.json")):
        script = load_script(path)
        if "logging" not in script.server.get("capabilities", {}):
            continue
        for revision in script.revisions:
            if revision == MODERN:
                continue
            engine = Engine(script, revision, "stdio", Transcript(script="t", revision=revision))
            answer = _answer(engine.handle(Request(9, "logging/setLevel", {"level": "error"})))
            assert isinstance(answer, Response), (path.name, revision, answer)
            answered += 1
    assert answered >= 8


# -- over a transport ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_over_http_the_undeclared_request_never_reaches_the_wire() -> None:
    from test_http_server import Events, call_add, in_process, initialize, message_of

    from mock_servers.http import create_app, mock_of

    roots = {"id": "srv-r", "method": "roots/list"}
    script = parse_script(
        _script(
            [
                {
                    "expect": {"method": "tools/call"},
                    "reply": {"before": [roots, LOG], "result": {"content": []}},
                }
            ]
        )
    )
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)  # declares no capabilities
        async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as response:
            sent = [message_of(e) for e in await Events(response).rest()]
    assert [m.get("method") for m in sent] == ["notifications/message", None]
    assert sent[-1]["id"] == 5  # answered at once: nothing waits for the dropped request
    transcript = mock_of(app).transcript
    server = [e["message"] for e in transcript.of_kind("message") if e["direction"] == "server"]
    assert all(m.get("method") != "roots/list" for m in server)
    (error,) = transcript.of_kind("withheld")
    assert error["rule"] == "undeclared-capability"
    assert error["message"] == {"jsonrpc": "2.0", **roots}
