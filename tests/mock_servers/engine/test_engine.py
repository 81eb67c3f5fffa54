"""The replay engine, without any transport: matching, defaults, due actions, transcript."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from harness.protocol import (
    Batch,
    ErrorResponse,
    Message,
    Notification,
    Request,
    Response,
    classify,
)
from mock_servers.engine._engine import META_CAPABILITIES, META_PROTOCOL_VERSION, Engine, HttpInfo
from mock_servers.engine._script import parse_script
from mock_servers.engine._transcript import Transcript

TOOLS = {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]}


def _engine(steps: list[dict[str, Any]], revision: str = "2025-11-25", **extra: Any) -> Engine:
    script = parse_script(
        {
            "format_version": 1,
            "name": "t",
            "revisions": [revision],
            "server": {"capabilities": {"tools": {}}, "info": {"name": "m", "version": "1"}},
            "steps": steps,
            **extra,
        }
    )
    return Engine(script, revision, "stdio", Transcript(script=script.name, revision=revision))


def _reply(engine: Engine, message: dict[str, Any]) -> Message | None:
    parsed = classify({"jsonrpc": "2.0", **message})
    assert not isinstance(parsed, Batch)
    outcome = engine.handle(parsed)
    return outcome.delivery.response if outcome.delivery else None


def _meta(version: str = "2026-07-28") -> dict[str, Any]:
    return {"_meta": {META_PROTOCOL_VERSION: version, META_CAPABILITIES: {}}}


def test_default_initialize_answers_with_the_served_revision() -> None:
    engine = _engine([])
    reply = _reply(
        engine,
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        },
    )
    assert isinstance(reply, Response)
    assert reply.id == 1
    assert reply.result["protocolVersion"] == "2025-11-25"
    assert reply.result["capabilities"] == {"tools": {}}
    assert reply.result["serverInfo"] == {"name": "m", "version": "1"}


def test_protocol_version_override() -> None:
    engine = _engine([], server={"protocol_version": "1999-01-01", "capabilities": {}})
    reply = _reply(engine, {"id": "a", "method": "initialize", "params": {}})
    assert isinstance(reply, Response)
    assert reply.result["protocolVersion"] == "1999-01-01"


def test_discover_is_unknown_before_2026_and_answered_in_2026() -> None:
    legacy = _reply(_engine([]), {"id": 1, "method": "server/discover", "params": {}})
    assert isinstance(legacy, ErrorResponse)
    assert legacy.error.code == -32601
    modern = _reply(
        _engine([], "2026-07-28"), {"id": 1, "method": "server/discover", "params": _meta()}
    )
    assert isinstance(modern, Response)
    assert modern.result["supportedVersions"] == ["2026-07-28"]
    assert modern.result["resultType"] == "complete"


def test_ping_removed_in_2026() -> None:
    assert _reply(_engine([]), {"id": 1, "method": "ping"}) == Response(1, {})
    gone = _reply(_engine([], "2026-07-28"), {"id": 1, "method": "ping", "params": _meta()})
    assert isinstance(gone, ErrorResponse)
    assert gone.error.code == -32601


def test_scripted_reply_restamps_the_id() -> None:
    engine = _engine([{"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}}])
    assert _reply(engine, {"id": "x-9", "method": "tools/list"}) == Response("x-9", TOOLS)


def test_steps_are_consumed_once_unless_repeat() -> None:
    engine = _engine(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {
                "expect": {"method": "tools/call"},
                "reply": {"result": {"content": []}},
                "repeat": True,
            },
        ]
    )
    assert isinstance(_reply(engine, {"id": 1, "method": "tools/list"}), Response)
    second = _reply(engine, {"id": 2, "method": "tools/list"})
    assert isinstance(second, ErrorResponse)
    for request_id in (3, 4):
        assert isinstance(
            _reply(engine, {"id": request_id, "method": "tools/call", "params": {"name": "a"}}),
            Response,
        )


def test_out_of_order_messages_match_the_earliest_pending_step() -> None:
    engine = _engine(
        [
            {"label": "first", "expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {
                "label": "second",
                "expect": {"method": "tools/call"},
                "reply": {"result": {"content": []}},
            },
        ]
    )
    assert isinstance(
        _reply(engine, {"id": 1, "method": "tools/call", "params": {"name": "a"}}), Response
    )
    assert [s.label for s in engine.unconsumed()] == ["step 0 (first)"]


def test_pending_steps_match_in_script_order_then_the_repeating_ones() -> None:
    # Steps whose method is a pattern (not a literal) compete with literal ones in script
    # order; a consumed step that repeats comes only after every pending one.
    def listing(label: str) -> dict[str, Any]:
        return {"tools": [{"name": label, "inputSchema": {"type": "object"}}]}

    engine = _engine(
        [
            {
                "expect": {"method": {"$regex": "^tools/"}},
                "reply": {"result": listing("by-pattern")},
                "repeat": True,
            },
            {"expect": {"method": "tools/list"}, "reply": {"result": listing("literal")}},
            {"expect": {"method": {"$any": ["ping"]}}, "reply": {"result": {}}},
        ]
    )

    def answered_by(request_id: int) -> str:
        reply = _reply(engine, {"id": request_id, "method": "tools/list"})
        assert isinstance(reply, Response)
        return str(reply.result["tools"][0]["name"])

    assert [answered_by(i) for i in (1, 2, 3)] == ["by-pattern", "literal", "by-pattern"]
    assert isinstance(_reply(engine, {"id": 4, "method": "ping"}), Response)
    assert [s.index for s in engine.unconsumed()] == []


def test_after_and_until_open_and_retire_a_step() -> None:
    # A poll answered "working" until the cancel, "cancelled" from then on, whoever polls.
    def answer(name: str, status: str, **gate: str) -> dict[str, Any]:
        step = {
            "label": status if gate else name,
            "expect": {"method": "tools/call", "params": {"name": name}},
            "reply": {"result": {"content": [{"type": "text", "text": status}]}},
        }
        return {**step, "repeat": True, "optional": True, **gate} if gate else step

    engine = _engine(
        [
            answer("poll", "working", until="cancel"),
            answer("cancel", "cancelled"),
            answer("poll", "cancelled", after="cancel"),
        ]
    )

    def call(request_id: int, name: str) -> str:
        reply = _reply(engine, {"id": request_id, "method": "tools/call", "params": {"name": name}})
        assert isinstance(reply, Response), reply
        return str(reply.result["content"][0]["text"])

    # Ungated, the second poll would take the pending "cancelled" step (pending steps come
    # before repeating ones), and the first poll after the cancel would answer "working".
    assert [call(1, "poll"), call(2, "poll")] == ["working", "working"]
    assert call(3, "cancel") == "cancelled"
    assert [call(4, "poll"), call(5, "poll")] == ["cancelled", "cancelled"]


def test_a_step_gated_by_a_step_never_consumed_never_matches() -> None:
    engine = _engine(
        [
            {"label": "list", "expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {
                "expect": {"method": "tools/call"},
                "reply": {"result": {"content": []}},
                "after": "list",
            },
        ]
    )
    call = {"method": "tools/call", "params": {"name": "add"}}
    refused = _reply(engine, {"id": 1, **call})
    assert isinstance(refused, ErrorResponse), refused
    assert isinstance(_reply(engine, {"id": 2, "method": "tools/list"}), Response)
    assert isinstance(_reply(engine, {"id": 3, **call}), Response)


def test_unmatched_request_names_the_closest_step_and_the_difference() -> None:
    engine = _engine(
        [
            {
                "expect": {"method": "tools/call", "params": {"name": "add"}},
                "reply": {"result": {"content": []}},
            },
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
        ]
    )
    reply = _reply(engine, {"id": 5, "method": "tools/call", "params": {"name": "ad"}})
    assert isinstance(reply, ErrorResponse)
    assert reply.error.code == -32602
    assert reply.error.data["closest_step"] == "step 0 (expect tools/call)"
    assert reply.error.data["diff"] == ['/params/name: expected "add", got "ad"']
    unknown = _reply(engine, {"id": 6, "method": "resources/list"})
    assert isinstance(unknown, ErrorResponse)
    assert unknown.error.code == -32601
    kinds = [e["kind"] for e in engine.transcript.entries]
    assert kinds.count("unmatched") == 2


def test_send_steps_fire_when_every_earlier_step_happened() -> None:
    engine = _engine(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {"send": {"method": "notifications/tools/list_changed"}},
            {"fault": {"kind": "delay", "ms": 5}},
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
        ]
    )
    assert engine.start() == []
    outcome = engine.handle(Request(1, "tools/list"))
    assert [(a.kind, a.payload.get("method", a.payload.get("kind"))) for a in outcome.actions] == [
        ("send", "notifications/tools/list_changed"),
        ("fault", "delay"),
    ]
    assert engine.handle(Request(2, "tools/list")).actions == []


def test_sends_at_the_top_are_due_at_start() -> None:
    engine = _engine([{"send": {"method": "notifications/tools/list_changed"}}])
    assert [a.payload["method"] for a in engine.start()] == ["notifications/tools/list_changed"]


def test_result_template_reads_the_request() -> None:
    engine = _engine(
        [
            {
                "expect": {"method": "tools/call"},
                "reply": {
                    "result": {"content": [{"type": "text", "text": {"$request": "/params/name"}}]}
                },
            }
        ]
    )
    reply = _reply(engine, {"id": 1, "method": "tools/call", "params": {"name": "echo"}})
    assert reply == Response(1, {"content": [{"type": "text", "text": "echo"}]})


def test_2026_request_without_meta_is_refused_with_400() -> None:
    engine = _engine(
        [{"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}}], "2026-07-28"
    )
    outcome = engine.handle(Request(1, "tools/list", {}))
    assert outcome.delivery is not None
    assert outcome.delivery.status == 400
    assert isinstance(outcome.delivery.response, ErrorResponse)
    assert outcome.delivery.response.error.code == -32602
    assert "io.modelcontextprotocol/protocolVersion" in outcome.delivery.response.error.message


def test_2026_unsupported_version_gets_32022_with_the_supported_list() -> None:
    engine = _engine([], "2026-07-28")
    reply = _reply(engine, {"id": 1, "method": "tools/list", "params": _meta("2030-01-01")})
    assert isinstance(reply, ErrorResponse)
    assert reply.error.code == -32022
    assert reply.error.data == {"supported": ["2026-07-28"], "requested": "2030-01-01"}


def test_2026_results_get_result_type() -> None:
    engine = _engine(
        [{"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}}], "2026-07-28"
    )
    reply = _reply(engine, {"id": 1, "method": "tools/list", "params": _meta()})
    assert isinstance(reply, Response)
    assert reply.result["resultType"] == "complete"


def test_http_conditions_select_the_step() -> None:
    engine = _engine(
        [
            {
                "expect": {"method": "tools/list"},
                "http": {"headers": {"Mcp-Session-Id": {"$present": True}}},
                "reply": {"result": TOOLS},
            }
        ]
    )
    without = engine.handle(Request(1, "tools/list"), http=HttpInfo("POST", "/mcp", {}))
    assert without.matched is None
    with_header = engine.handle(
        Request(2, "tools/list"), http=HttpInfo("POST", "/mcp", {"mcp-session-id": "s"})
    )
    assert with_header.matched is not None


@pytest.mark.parametrize(("request_id", "decoy_id"), [(7, "7"), ("7", 7), ("call-7", -1), (0, "0")])
def test_request_values_can_change_json_type(request_id: Any, decoy_id: Any) -> None:
    engine = _engine(
        [
            {
                "expect": {"method": "tools/call"},
                "reply": {
                    "before": [{"id": {"$request": "/id", "as": "other_type"}, "result": {}}],
                    "result": {"content": []},
                },
            }
        ]
    )
    outcome = engine.handle(Request(request_id, "tools/call", {"name": "a"}))
    assert outcome.delivery is not None
    (decoy,) = outcome.delivery.before
    assert decoy["id"] == decoy_id
    assert type(decoy["id"]) is type(decoy_id)


def test_answers_to_the_mocks_own_requests_are_not_unmatched() -> None:
    engine = _engine(
        [
            {
                "expect": {"method": "tools/call"},
                "reply": {"before": [{"id": 0, "method": "ping"}], "result": {"content": []}},
            }
        ]
    )
    engine.handle(Request(1, "tools/call", {"name": "a"}))
    engine.handle(Response(0, {}))  # the answer to the mock's ping
    engine.handle(Response("0", {}))  # another type: answers nothing the mock sent
    assert [e["message"]["id"] for e in engine.transcript.of_kind("unmatched")] == ["0"]


def test_routine_notifications_are_not_unmatched() -> None:
    engine = _engine([])
    for method in ("notifications/initialized", "notifications/cancelled"):
        assert engine.handle(Notification(method, {})).delivery is None
    engine.handle(Notification("notifications/whatever"))
    assert [e["message"]["method"] for e in engine.transcript.of_kind("unmatched")] == [
        "notifications/whatever"
    ]


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_a_declared_list_no_step_scripts_names_what_the_steps_use(revision: str) -> None:
    # A client that lists before it calls (or checks the name) finds the scripted tools.
    capabilities = {"tools": {}, "prompts": {}, "resources": {}}
    engine = _engine(
        [
            {"expect": {"method": "tools/call", "params": {"name": "add"}}, "reply": {}},
            {"expect": {"method": "tools/call", "params": {"name": "add"}}, "reply": {}},
            {"expect": {"method": "prompts/get", "params": {"name": "greet"}}, "reply": {}},
            {"expect": {"method": "resources/read", "params": {"uri": "file:///a"}}, "reply": {}},
        ],
        revision,
        server={"capabilities": capabilities, "info": {"name": "m", "version": "1"}},
    )
    meta = _meta(revision) if revision == "2026-07-28" else {}
    expected = {
        "tools/list": {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]},
        "prompts/list": {"prompts": [{"name": "greet"}]},
        "resources/list": {"resources": [{"uri": "file:///a", "name": "file:///a"}]},
        "resources/templates/list": {"resourceTemplates": []},
    }
    for request_id, (method, result) in enumerate(expected.items()):
        reply = _reply(engine, {"id": request_id, "method": method, "params": meta})
        assert isinstance(reply, Response), reply
        assert {k: v for k, v in reply.result.items() if k in result} == result
    # A list a step scripts is never answered by default, even once that step is used.
    scripted = _engine([{"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}}])
    assert isinstance(_reply(scripted, {"id": 1, "method": "tools/list"}), Response)
    assert isinstance(_reply(scripted, {"id": 2, "method": "tools/list"}), ErrorResponse)


def test_finish_records_unconsumed_steps_but_not_optional_ones() -> None:
    engine = _engine(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {"expect": {"method": "tools/call"}, "optional": True},
        ]
    )
    engine.finish()
    (entry,) = engine.transcript.of_kind("unconsumed")
    assert entry["steps"] == ["step 0 (expect tools/list)"]


@pytest.mark.anyio
async def test_before_requests_are_awaited_until_the_client_answers() -> None:
    engine = _engine(
        [
            {
                "expect": {"method": "tools/call"},
                "reply": {
                    "before": [{"id": "srv-1", "method": "ping"}],
                    "result": {"content": []},
                },
            },
            {"expect": {"id": "srv-1", "result": {}}},
        ]
    )
    outcome = engine.handle(Request(1, "tools/call", {"name": "a"}))
    assert outcome.delivery is not None
    assert outcome.delivery.awaits == ["srv-1"]
    answered = anyio.Event()

    async def wait() -> None:
        await engine.wait_for_client_response("srv-1")
        answered.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(wait)
            engine.handle(Response("srv-1", {}))
    assert answered.is_set()
    assert engine.unconsumed() == []


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- scripted replies: one copy per engine, read-only ---------------------------------------


def _listing_twice(engine: Engine) -> tuple[Response, Response]:
    first = _reply(engine, {"id": 1, "method": "tools/list"})
    second = _reply(engine, {"id": "2", "method": "tools/list"})
    assert isinstance(first, Response)
    assert isinstance(second, Response)
    return first, second


_LISTING = [{"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}, "repeat": True}]


def test_a_fixed_reply_is_one_copy_per_engine_never_the_script_s_own() -> None:
    engine = _engine(_LISTING)
    first, second = _listing_twice(engine)
    assert first.result is second.result  # shared within the run: no copy per answer
    assert first.result == TOOLS
    assert first.result is not engine.script.steps[0].raw["reply"]["result"]
    other, _ = _listing_twice(Engine(engine.script, "2025-11-25", "stdio", Transcript()))
    assert other.result is not first.result  # another run has its own copy
    engine.finish()
    assert not list(engine.transcript.of_kind("mock_error"))


def test_a_reply_changed_after_it_went_out_is_a_mock_error_at_the_end() -> None:
    engine = _engine(_LISTING)
    first, _ = _listing_twice(engine)
    first.result["tools"][0]["name"] = "changed"  # what no part of the mock may do
    engine.finish()
    [error] = engine.transcript.of_kind("mock_error")
    assert error["where"] == f"{engine.script.steps[0].label}: the reply"
    assert "changed after it was sent" in error["reason"]


def test_a_reply_that_quotes_the_request_is_filled_afresh_for_each_answer() -> None:
    steps = [
        {
            "expect": {"method": "tools/call"},
            "reply": {"result": {"content": [], "echo": {"$request": "/params/arguments"}}},
            "repeat": True,
        }
    ]
    engine = _engine(steps)
    one = _reply(engine, {"id": 1, "method": "tools/call", "params": {"arguments": {"a": 1}}})
    two = _reply(engine, {"id": 2, "method": "tools/call", "params": {"arguments": {"a": 2}}})
    assert isinstance(one, Response)
    assert isinstance(two, Response)
    assert (one.result["echo"], two.result["echo"]) == ({"a": 1}, {"a": 2})
    assert one.result is not two.result


@pytest.mark.parametrize("ident", [7, -1, True, 2.5, 'a"\\\x01/', "x\u2028y", "\ud800"])
def test_a_shared_reply_is_encoded_as_the_codec_encodes_it(ident: Any) -> None:
    from harness.protocol import encode

    engine = _engine(_LISTING)
    reply = _reply(engine, {"id": 1, "method": "tools/list"})
    assert isinstance(reply, Response)
    for message in (
        {"jsonrpc": "2.0", "id": ident, "result": reply.result},  # the shared copy: spliced
        {"jsonrpc": "2.0", "id": ident, "result": dict(reply.result)},  # another object
        {"jsonrpc": "2.0", "result": reply.result, "id": ident},  # another member order
    ):
        assert engine.encode(message) == encode(message)
