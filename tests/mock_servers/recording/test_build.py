"""A capture becomes a script: order, patterns without ids, volatile values, violations,
partial sessions (mock_servers/recording/_build.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mock_servers import ScriptError, parse_script
from mock_servers.engine import matches
from mock_servers.recording import Capture, Redactor, Seen, build_script

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "c", "version": "1"},
    },
}
INIT_OK = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": "real", "version": "2.0"},
        "instructions": "Be kind.",
    },
}


def _capture(*messages: tuple[str, Any], transport: str = "stdio") -> Capture:
    capture = Capture("stdio" if transport == "stdio" else "http")
    for sender, message in messages:
        capture.add(Seen(sender, message, json.dumps(message)))  # type: ignore[arg-type]
    return capture


def _request(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _result(id_: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def test_the_handshake_makes_the_server_section_and_no_step() -> None:
    recording = build_script(
        _capture(
            ("client", INIT),
            ("server", INIT_OK),
            ("client", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ("client", _request(1, "ping")),
            ("server", _result(1, {})),
        )
    )
    script = recording.script
    assert script["revisions"] == ["2025-11-25"]
    assert script["server"] == {
        "info": {"name": "real", "version": "2.0"},
        "capabilities": {"tools": {}, "logging": {}},
        "instructions": "Be kind.",
    }
    assert script["steps"] == []
    assert recording.partial == []
    parse_script(script)


def test_requests_become_steps_in_order_with_server_messages_where_they_came() -> None:
    call = _request(
        7, "tools/call", {"name": "add", "arguments": {"a": 1}, "_meta": {"progressToken": "p-1"}}
    )
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p-1", "progress": 1},
    }
    ask = _request(
        "s1",
        "sampling/createMessage",
        {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
    )
    answer = _result(
        "s1", {"role": "assistant", "model": "m", "content": {"type": "text", "text": "hello"}}
    )
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    script = build_script(
        _capture(
            ("client", INIT),
            ("server", INIT_OK),
            ("client", call),
            ("server", progress),
            ("server", ask),
            ("client", answer),
            ("server", _result(7, {"content": [{"type": "text", "text": "2"}]})),
            ("server", changed),
            ("client", _request(8, "tools/call", {"name": "gone"})),
            (
                "server",
                {
                    "jsonrpc": "2.0",
                    "id": 8,
                    "error": {"code": -32602, "message": "Unknown tool: gone"},
                },
            ),
            ("client", _request(9, "tools/call", {"name": "add", "arguments": {"a": 0}})),
            ("server", _result(9, {"content": [{"type": "text", "text": "no"}], "isError": True})),
        )
    ).script
    steps = script["steps"]
    assert steps[0] == {
        "expect": {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1}}},
        "reply": {
            "before": [
                {
                    "method": "notifications/progress",
                    "params": {
                        "progressToken": {"$request": "/params/_meta/progressToken"},
                        "progress": 1,
                    },
                },
                {k: v for k, v in ask.items() if k != "jsonrpc"},
            ],
            "result": {"content": [{"type": "text", "text": "2"}]},
        },
    }
    assert "repeat" not in steps[0]  # its answer waits for a server request: asked once
    assert steps[1] == {"expect": {"id": "s1", "result": {"$present": True}}}
    assert steps[2] == {"send": {"method": "notifications/tools/list_changed"}}
    assert steps[3]["reply"] == {"error": {"code": -32602, "message": "Unknown tool: gone"}}
    assert steps[3]["repeat"] is True  # asked again, answered again
    assert steps[4]["reply"]["result"]["isError"] is True
    assert len(steps) == 5
    # No pattern names a request id: the mock re-stamps each reply with the request's.
    assert all("id" not in s["expect"] for s in steps if "method" in s.get("expect", {}))
    parse_script(script)


def test_volatile_values_become_patterns_unless_exact() -> None:
    params = {
        "cursor": "c-42",
        "when": "2026-01-02T03:04:05Z",
        "ref": "123e4567-e89b-12d3-a456-426614174000",
        "name": "fixed",
    }
    capture = _capture(
        ("client", INIT),
        ("server", INIT_OK),
        ("client", _request(1, "tools/list", params)),
        ("server", _result(1, {"tools": []})),
    )
    loose = build_script(capture).script["steps"][0]["expect"]["params"]
    assert loose["cursor"] == {"$type": "string"}
    assert loose["when"]["$regex"].startswith("^\\d{4}")
    assert loose["ref"]["$regex"].startswith("^[0-9a-fA-F]{8}")
    assert loose["name"] == "fixed"
    exact = build_script(capture, exact=True).script["steps"][0]["expect"]["params"]
    assert exact == params


def test_a_message_the_schema_rejects_is_recorded_with_its_mark_never_mended() -> None:
    broken = {"content": [{"type": "text"}]}  # a text item without its text
    capture = _capture(
        ("client", INIT),
        ("server", INIT_OK),
        ("client", _request(1, "tools/call", {"name": "add"})),
        ("server", _result(1, broken)),
    )
    recording = build_script(capture)
    reply = recording.script["steps"][0]["reply"]
    assert reply["result"] == broken
    assert reply["violation"].startswith("recorded as the server sent it: /result/content/0")
    assert recording.violations == 1
    assert "marked as violations" in recording.script["description"]
    parse_script(recording.script)
    # Without the mark, the same script is refused: the mark is what lets it replay.
    del reply["violation"]
    with pytest.raises(ScriptError, match="not a valid 2025-11-25 server message"):
        parse_script(recording.script)


def test_a_request_left_unanswered_is_a_hang_and_the_script_says_partial() -> None:
    recording = build_script(
        _capture(
            ("client", INIT),
            ("server", INIT_OK),
            ("client", _request(1, "tools/call", {"name": "slow"})),
        )
    )
    assert recording.script["steps"][0]["reply"] == {"fault": {"kind": "hang"}}
    assert recording.partial == ["the server never answered the client's tools/call"]
    assert "PARTIAL: the server never answered" in recording.script["description"]
    parse_script(recording.script)


def test_a_session_without_a_handshake_is_partial_and_still_a_script() -> None:
    recording = build_script(_capture(("client", INIT)))
    assert recording.partial
    assert "before the server answered the handshake" in recording.partial[0]
    parse_script(recording.script)


def test_a_secret_in_a_request_is_matched_by_a_pattern_never_written() -> None:
    secret = "hunter2-very-secret"
    capture = _capture(
        ("client", INIT),
        ("server", INIT_OK),
        (
            "client",
            _request(
                1,
                "tools/call",
                {
                    "name": "login",
                    "arguments": {
                        "password": secret,
                        "url": f"https://x.example/cb?access_token={secret}&a=1",
                    },
                },
            ),
        ),
        ("server", _result(1, {"content": [{"type": "text", "text": f"Bearer {secret}9"}]})),
    )
    recording = build_script(capture, redactor=Redactor())
    text = json.dumps(recording.script)
    assert secret not in text
    arguments = recording.script["steps"][0]["expect"]["params"]["arguments"]
    assert arguments["password"] == {"$regex": "^.+$"}
    assert arguments["url"] == {"$regex": "^https://x\\.example/cb\\?access_token=.+\\&a=1$"}
    assert "<redacted:bearer>" in text
    parse_script(recording.script)


def test_a_log_message_without_the_opt_in_at_2026_07_28_is_a_marked_violation() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    discover_ok = _result(
        0,
        {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "new", "version": "1"}},
        },
    )
    log = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "hi"},
    }
    recording = build_script(
        _capture(
            ("client", _request(0, "server/discover", {"_meta": meta})),
            ("server", discover_ok),
            ("client", _request(1, "tools/call", {"name": "a", "_meta": meta})),
            ("server", log),
            ("server", _result(1, {"content": [], "resultType": "complete"})),
        ),
    )
    script = recording.script
    assert script["revisions"] == ["2026-07-28"]
    assert script["server"]["supported_versions"] == ["2026-07-28"]
    assert script["server"]["info"] == {"name": "new", "version": "1"}
    before = script["steps"][0]["reply"]["before"][0]
    assert "did not opt in" in before["violation"]
    parse_script(script)


def test_an_sse_answer_keeps_its_stream_and_the_get_stream_gives_send_steps() -> None:
    capture = Capture("http")
    capture.http.sessions = True
    capture.http.get = "stream"
    call = _request(3, "tools/call", {"name": "long"})
    log = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "half way"},
    }
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    done = _result(3, {"content": [{"type": "text", "text": "done"}]})
    for seen in (
        Seen("client", INIT, "", "post", 1),
        Seen("server", INIT_OK, "", "post", 1, status=200),
        Seen("client", call, "", "post", 2),
        Seen("server", None, "", "post", 2, sse=True, event_id="e0", retry=500, prime=True),
        Seen("server", log, "", "post", 2, sse=True, event_id="e1"),
        Seen("server", changed, "", "get", sse=True, event_id="g1"),
        Seen("server", done, "", "post", 2, sse=True, event_id="e2"),
    ):
        capture.add(seen)
    script = build_script(capture).script
    assert script["transports"] == ["http"]
    assert "http" not in script  # sessions, a GET stream: the defaults
    step, send = script["steps"]
    assert step["reply"] == {
        "as": "sse",
        "result": {"content": [{"type": "text", "text": "done"}]},
        "sse": {
            "retry": 500,
            "events": [
                {"prime": True, "id": "e0"},
                {
                    "message": {
                        "method": "notifications/message",
                        "params": {"level": "info", "data": "half way"},
                    },
                    "id": "e1",
                },
                {"response": True, "id": "e2"},
            ],
        },
    }
    assert send == {"send": {"method": "notifications/tools/list_changed"}}
    parse_script(script)


def test_pages_are_asked_in_their_order_and_a_first_page_never_takes_the_next() -> None:
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("a", "b", "c")]
    capture = _capture(
        ("client", INIT),
        ("server", INIT_OK),
        ("client", _request(1, "tools/list")),
        ("server", _result(1, {"tools": tools[:1], "nextCursor": "p2"})),
        ("client", _request(2, "tools/list", {"cursor": "p2"})),
        ("server", _result(2, {"tools": tools[1:2], "nextCursor": "p3"})),
        ("client", _request(3, "tools/list", {"cursor": "p3"})),
        ("server", _result(3, {"tools": tools[2:]})),
    )
    first, second, third = build_script(capture).script["steps"]
    assert first["expect"] == {
        "method": "tools/list",
        "params": {"$any": [{"$absent": True}, {"cursor": {"$absent": True}}]},
    }
    assert not matches(first["expect"], _request(9, "tools/list", {"cursor": "p2"}))
    assert matches(first["expect"], _request(9, "tools/list"))
    assert (
        second["expect"]
        == third["expect"]
        == {
            "method": "tools/list",
            "params": {"cursor": {"$type": "string"}},
        }
    )
    # The same pattern twice: the pages are answered in their order, the last one repeats.
    assert "repeat" not in second
    assert third["repeat"] is True
    assert first["repeat"] is True
