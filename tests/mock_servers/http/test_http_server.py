"""Tests for the HTTP mock server (mock_servers.http): its effect on the wire.

Most tests run the app in-process through StreamingASGITransport (no sockets); the
real-client tests and the runner tests use uvicorn on 127.0.0.1. Synchronisation is by
reading the wire (each response is read to the point the test needs); every wait is
bounded by anyio.fail_after(WAIT), which a passing run never gets near.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

import anyio
import httpx
import pytest
from _machine import within
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from harness.protocol import SSEEvent, SSEParser, encode
from harness.strategies import json_values, jsonrpc_messages
from mock_servers import fixtures_root
from mock_servers.engine._script import Script, load_script, parse_script
from mock_servers.http import (
    AsyncHttpMockServer,
    HttpMock,
    HttpMockServer,
    create_app,
    decode_header_value,
    mock_of,
    serve_http,
)
from mock_servers.http._asgi_transport import StreamingASGITransport
from mock_servers.http._wire import Exchange

pytestmark = pytest.mark.anyio

WAIT = within(10.0)
ACCEPT = {"accept": "application/json, text/event-stream"}
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
LISTEN = {"notifications": {"toolsListChanged": True}}
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LOG = {"method": "notifications/message", "params": {"level": "info", "data": "x"}}
TOOLS = {
    "tools": [
        {
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            },
        }
    ]
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@cache
def fixture(path: str) -> Script:
    return load_script(fixtures_root() / path)


def inline(steps: list[dict[str, Any]], **extra: Any) -> Script:
    data = {
        "format_version": 1,
        "name": "inline",
        "revisions": ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"],
        "server": {"capabilities": {"tools": {}, "logging": {}}},
        "steps": steps,
        **extra,
    }
    return parse_script(data)


def request(method: str, request_id: int | str = 1, params: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def initialize_request(version: str = "2025-11-25", request_id: int = 0) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    return request("initialize", request_id, params)


def call_add(request_id: int = 5, a: int = 1) -> dict[str, Any]:
    return request("tools/call", request_id, {"name": "add", "arguments": {"a": a, "b": 2}})


def entries(mock: HttpMock, *kinds: str) -> list[dict[str, Any]]:
    return list(mock.transcript.of_kind(*kinds))


def notes(mock: HttpMock) -> list[str]:
    return [e["text"] for e in entries(mock, "note")]


@asynccontextmanager
async def in_process(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = StreamingASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", timeout=WAIT
    ) as client:
        yield client


async def initialize(client: httpx.AsyncClient, version: str = "2025-11-25") -> dict[str, str]:
    """Initialize; the headers every later request of the session carries."""
    response = await client.post("/mcp", json=initialize_request(version), headers=ACCEPT)
    assert response.status_code == 200, response.text
    headers = {**ACCEPT, "mcp-protocol-version": version}
    if "mcp-session-id" in response.headers:
        headers["mcp-session-id"] = response.headers["mcp-session-id"]
    notified = await client.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert notified.status_code == 202
    return headers


class Events:
    """Reads SSE events off a streamed response, one at a time, keeping the raw chunks."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.chunks: list[bytes] = []
        self._parser = SSEParser()
        self._ready: list[SSEEvent] = []
        self._raw = response.aiter_raw()

    async def next(self) -> SSEEvent:
        with anyio.fail_after(WAIT):
            while not self._ready:
                chunk = await self._raw.__anext__()
                self.chunks.append(chunk)
                self._ready += self._parser.feed(chunk)
        return self._ready.pop(0)

    async def rest(self) -> list[SSEEvent]:
        """Every event up to the end of the stream."""
        with anyio.fail_after(WAIT):
            async for chunk in self._raw:
                self.chunks.append(chunk)
                self._ready += self._parser.feed(chunk)
        out, self._ready = self._ready, []
        return out


def message_of(event: SSEEvent) -> Any:
    assert event.data is not None
    return json.loads(event.data)


def modern(
    method: str, request_id: int = 1, params: dict[str, Any] | None = None, **headers: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request with its _meta and the matching headers (overridable)."""
    body_params = dict(params or {})
    body_params["_meta"] = {META_VERSION: "2026-07-28", META_CAPS: {}}
    wire = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if "name" in body_params:
        wire["mcp-name"] = body_params["name"]
    wire.update({k.replace("_", "-"): v for k, v in headers.items()})
    return request(method, request_id, body_params), wire


# -- sessions --------------------------------------------------------------------------------


async def test_initialize_issues_a_visible_ascii_session_id_required_afterwards() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        sid = headers["mcp-session-id"]
        assert sid
        assert all(0x21 <= ord(c) <= 0x7E for c in sid)
        listed = await client.post("/mcp", json=request("tools/list"), headers=headers)
        assert listed.status_code == 200
        assert "tools" in listed.json()["result"]

        missing = {k: v for k, v in headers.items() if k != "mcp-session-id"}
        response = await client.post("/mcp", json=request("tools/list", 2), headers=missing)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32600
        assert response.json()["id"] == 2

        unknown = {**headers, "mcp-session-id": "no-such-session"}
        response = await client.post("/mcp", json=request("tools/list", 3), headers=unknown)
        assert response.status_code == 404
        assert response.json()["error"]["message"].startswith("Session not found")
    mock = mock_of(app)
    assert mock.sessions == {sid: "active"}
    assert [e["status"] for e in entries(mock, "http_response")] == [200, 202, 200, 400, 404]


async def test_a_post_before_any_session_reaches_the_engine() -> None:
    # A dual-era client probes with server/discover before initialize: -32601, not 400.
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        response = await client.post("/mcp", json=request("server/discover"), headers=ACCEPT)
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32601


async def test_an_expired_session_gets_404_and_a_new_session_continues_the_script() -> None:
    app = create_app(fixture("http/expire-on-request.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        expired = await client.post("/mcp", json=request("tools/list", 1), headers=headers)
        assert expired.status_code == 404
        assert expired.json()["error"]["code"] == -32001
        again = await client.post("/mcp", json=request("tools/list", 2), headers=headers)
        assert again.status_code == 404
        fresh = await initialize(client)
        assert fresh["mcp-session-id"] != headers["mcp-session-id"]
        listed = await client.post("/mcp", json=request("tools/list", 3), headers=fresh)
        assert listed.json()["result"] == TOOLS | {"tools": listed.json()["result"]["tools"]}
    mock = mock_of(app)
    assert [e["label"] for e in entries(mock, "step")] == [
        "step 0 (expire)",
        "step 1 (list again)",
    ]
    assert mock.sessions[headers["mcp-session-id"]] == "expired"


async def test_a_standalone_expire_step_answers_the_request_then_forgets_the_session() -> None:
    script = inline(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {"fault": {"kind": "expire_session"}},
        ]
    )
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        first = await client.post("/mcp", json=request("tools/list", 1), headers=headers)
        second = await client.post("/mcp", json=request("tools/list", 2), headers=headers)
    assert (first.status_code, second.status_code) == (200, 404)


async def test_delete_terminates_the_session_and_ends_its_get_stream() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("GET", "/mcp", headers=headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"] == "text/event-stream"
            deleted = await client.delete("/mcp", headers=headers)
            assert deleted.status_code == 200
            assert await Events(stream).rest() == []  # ended cleanly
        after = await client.post("/mcp", json=request("tools/list"), headers=headers)
        assert after.status_code == 404
        assert "terminated" in after.json()["error"]["message"]
    ends = entries(mock_of(app), "http_end")
    assert [e["how"] for e in ends] == ["closed"]


async def test_get_and_delete_answer_405_when_the_script_says_so() -> None:
    app = create_app(fixture("http/no-get-no-delete.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        get = await client.get("/mcp", headers=headers)
        delete = await client.delete("/mcp", headers=headers)
    assert (get.status_code, delete.status_code) == (405, 405)
    assert get.headers["allow"] == "POST"


async def test_get_needs_an_accept_of_event_stream() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        response = await client.get("/mcp", headers={**headers, "accept": "application/json"})
    assert response.status_code == 406
    assert response.json()["error"]["code"] == -32600


async def test_the_protocol_version_header_is_checked_after_initialize() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        bad = await client.post(
            "/mcp",
            json=request("tools/list", 1),
            headers={**headers, "mcp-protocol-version": "1999-01-01"},
        )
        assert bad.status_code == 400
        assert "1999-01-01" in bad.json()["error"]["message"]
        absent = {k: v for k, v in headers.items() if k != "mcp-protocol-version"}
        ok = await client.post("/mcp", json=request("tools/list", 2), headers=absent)
        assert ok.status_code == 200
    assert any("no MCP-Protocol-Version header" in text for text in notes(mock_of(app)))


@pytest.mark.parametrize("sessions", [True, False])
@pytest.mark.parametrize("version", ["1999-01-01", "not a version", "2025-03-26"])
async def test_a_fresh_server_refuses_a_version_header_it_does_not_serve(
    version: str, sessions: bool
) -> None:
    steps = [{"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}}]
    app = create_app(inline(steps, http={"sessions": sessions}), revision="2025-11-25")
    headers = {**ACCEPT, "mcp-protocol-version": version}
    async with in_process(app) as client:
        response = await client.post("/mcp", json=request("tools/list"), headers=headers)
    assert response.status_code == 400, response.text
    assert version in response.json()["error"]["message"]
    [refusal] = entries(mock_of(app), "refusal")
    assert (refusal["rule"], refusal["scripted"]) == ("protocol-version", False)
    assert entries(mock_of(app), "step") == []


async def test_before_a_session_initialize_and_a_dual_era_probe_are_not_refused() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        # A modern request (an era probe) is the script's to answer: -32601 here.
        probe = await client.post(
            "/mcp",
            json=request("server/discover"),
            headers={**ACCEPT, "mcp-protocol-version": "2026-07-28"},
        )
        # initialize negotiates the version: a header on it is not checked.
        offered = {**ACCEPT, "mcp-protocol-version": "2099-01-01"}
        init = await client.post("/mcp", json=initialize_request("2099-01-01"), headers=offered)
    assert (probe.status_code, probe.json()["error"]["code"]) == (200, -32601)
    assert init.status_code == 200
    assert entries(mock_of(app), "refusal") == []


def _early_ping_script() -> Script:
    """A 2025-06-18 server that pings the client before it answers initialize."""
    initialize_step = {
        "expect": {"method": "initialize"},
        "reply": {"before": [{"id": "early", "method": "ping"}]},
    }
    tools_step = {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}}
    return inline([initialize_step, tools_step], revisions=["2025-06-18"])


@pytest.mark.parametrize("with_session", [True, False])
async def test_an_answer_to_a_request_sent_during_initialization_is_accepted(
    with_session: bool,
) -> None:
    # The client offers 2025-11-25 and learns that the server speaks 2025-06-18 only from
    # the initialize result, which comes after the ping: its answer carries the offer.
    app = create_app(_early_ping_script())
    async with in_process(app) as client:
        body = initialize_request("2025-11-25")
        async with client.stream("POST", "/mcp", json=body, headers=ACCEPT) as init:
            events = Events(init)
            ping = message_of(await events.next())
            assert (ping["id"], ping["method"]) == ("early", "ping")
            headers = {**ACCEPT, "mcp-protocol-version": "2025-11-25"}
            if with_session:
                headers["mcp-session-id"] = init.headers["mcp-session-id"]
            answer = {"jsonrpc": "2.0", "id": "early", "result": {}}
            answered = await client.post("/mcp", json=answer, headers=headers)
            assert answered.status_code == 202, answered.text
            result = message_of(await events.next())
        assert result["result"]["protocolVersion"] == "2025-06-18"
        # After initialization the offered version is no longer good.
        later = {
            **ACCEPT,
            "mcp-protocol-version": "2025-11-25",
            "mcp-session-id": init.headers["mcp-session-id"],
        }
        listed = await client.post("/mcp", json=request("tools/list"), headers=later)
        assert listed.status_code == 400
    mock = mock_of(app)
    assert answer in mock.transcript.client_messages()
    assert [r["rule"] for r in entries(mock, "refusal")] == ["protocol-version"]
    assert any("answers a server request sent during initialization" in n for n in notes(mock))


async def test_2025_03_26_has_no_protocol_version_header_to_check() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-03-26")
    async with in_process(app) as client:
        headers = await initialize(client, "2025-03-26")
        headers["mcp-protocol-version"] = "whatever"
        response = await client.post("/mcp", json=request("tools/list"), headers=headers)
    assert response.status_code == 200


# -- POST bodies -----------------------------------------------------------------------------


async def test_notifications_and_responses_get_202_with_no_body() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        response = await client.post(
            "/mcp", json={"jsonrpc": "2.0", "id": "x", "result": {}}, headers=headers
        )
    assert (response.status_code, response.content) == (202, b"")


async def test_bytes_that_are_not_json_rpc_get_400_with_the_json_rpc_error() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        parse_error = await client.post("/mcp", content=b"{not json", headers=ACCEPT)
        invalid = await client.post("/mcp", json={"jsonrpc": "1.0", "id": 4}, headers=ACCEPT)
        batch = await client.post("/mcp", json=[request("ping")], headers=ACCEPT)
    assert parse_error.status_code == 400
    assert parse_error.json()["error"]["code"] == -32700
    assert (invalid.status_code, invalid.json()["error"]["code"]) == (400, -32600)
    assert invalid.json()["id"] == 4
    assert (batch.status_code, batch.json()["error"]["code"]) == (400, -32600)
    recorded = entries(mock_of(app), "invalid")
    assert [e["code"] for e in recorded] == [-32700, -32600, -32600]
    assert recorded[0]["raw"] == "{not json"


async def test_a_batch_is_answered_at_2025_03_26() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-03-26")
    async with in_process(app) as client:
        headers = await initialize(client, "2025-03-26")
        batch = [request("tools/list", 1), {"jsonrpc": "2.0", "method": "notifications/x"}]
        response = await client.post("/mcp", json=batch, headers=headers)
    assert response.status_code == 200
    [answer] = response.json()
    assert answer["id"] == 1
    assert "tools" in answer["result"]


async def test_scripted_status_headers_body_and_garbage_go_out_as_written() -> None:
    script = inline(
        [
            {
                "expect": {"method": "tools/call", "params": {"name": "status"}},
                "reply": {"status": 503, "headers": {"retry-after": "1"}, "body": "busy"},
            },
            {
                "expect": {"method": "tools/call", "params": {"name": "garbage"}},
                "reply": {"fault": {"kind": "garbage", "text": "<html>oops"}},
            },
            {
                "expect": {"method": "tools/call", "params": {"name": "sse-garbage"}},
                "reply": {"as": "sse", "fault": {"kind": "garbage", "text": "data: {\n\n"}},
            },
        ]
    )
    app = create_app(script, revision="2025-06-18")
    async with in_process(app) as client:
        headers = await initialize(client, "2025-06-18")

        async def call(name: str) -> httpx.Response:
            body = request("tools/call", name, {"name": name})
            return await client.post("/mcp", json=body, headers=headers)

        status, garbage, sse_garbage = (
            await call("status"),
            await call("garbage"),
            await call("sse-garbage"),
        )
    assert (status.status_code, status.headers["retry-after"], status.text) == (503, "1", "busy")
    assert garbage.headers["content-type"] == "application/json"
    assert garbage.text == "<html>oops"
    assert sse_garbage.headers["content-type"] == "text/event-stream"
    assert sse_garbage.text == "data: {\n\n"


# -- SSE replies -----------------------------------------------------------------------------


async def test_an_sse_reply_uses_priming_comments_multiline_data_and_small_chunks() -> None:
    app = create_app(fixture("http/sse-features.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as response:
            assert response.headers["content-type"] == "text/event-stream"
            events = Events(response)
            prime, comment, log, answer = await events.rest()
    assert all(len(chunk) <= 7 for chunk in events.chunks)
    assert len(events.chunks) > 20
    stream = b"".join(events.chunks)
    assert (prime.data, prime.retry) == ("", 1000)
    assert prime.id
    assert comment.comments == ("the mock is thinking",)
    assert comment.data is None
    assert message_of(log)["params"]["data"] == "adding 1 and 2"
    assert message_of(answer) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"content": [{"type": "text", "text": "3"}]},
    }
    assert stream.count(b"\ndata: ") > 5  # the response spreads over several data: lines
    assert len({prime.id, log.id, answer.id}) == 3
    mock = mock_of(app)
    sse = [e for e in entries(mock, "sse_event") if e["request"] == 3]
    assert [sorted(e["event"]) for e in sse] == [
        ["data", "id", "retry"],
        ["comments"],
        ["data", "id"],
        ["data", "id"],
    ]
    assert entries(mock, "http_end")[-1]["how"] == "complete"


async def test_scripted_ids_event_names_and_raw_text_go_out_as_written() -> None:
    script = inline(
        [
            {
                "expect": {"method": "tools/call"},
                "reply": {
                    "result": {"content": []},
                    "sse": {
                        "events": [
                            {"raw": ": raw comment\r\n\r\n"},
                            {"message": LOG, "id": "mine", "event": "message"},
                            {"response": True, "event": "odd-name"},
                            {"comment": "after\nthe response"},
                        ]
                    },
                },
            }
        ],
        revisions=["2025-11-25"],  # a log message without the 2026 logLevel opt-in
    )
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as response:
            events = Events(response)
            raw, log, answer, trailer = await events.rest()
    assert b"".join(events.chunks).startswith(b": raw comment\r\n\r\nevent: message\nid: mine\n")
    assert raw.comments == ("raw comment",)
    assert (log.id, log.event) == ("mine", "message")
    assert answer.event == "odd-name"
    assert answer.id == "s3-1"  # automatic: "<stream>-<n>"
    assert trailer.comments == ("after", "the response")
    recorded = [e["event"] for e in entries(mock_of(app), "sse_event")]
    assert recorded[0] == {"raw": ": raw comment\r\n\r\n"}


async def test_delays_hold_back_the_reply_and_what_follows_a_delay_step() -> None:
    script = inline(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {"fault": {"kind": "delay", "ms": 80}},
            {"send": {"method": "notifications/tools/list_changed"}},
            {
                "expect": {"method": "tools/call", "params": {"name": "slow"}},
                "reply": {"result": {"content": []}, "delay_ms": 50},
            },
            {"expect": {"method": "tools/call"}, "reply": {"fault": {"kind": "delay", "ms": 50}}},
        ]
    )
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("GET", "/mcp", headers=headers) as get:
            started = anyio.current_time()
            listed = await client.post("/mcp", json=request("tools/list"), headers=headers)
            assert listed.json()["result"] == TOOLS
            changed = await Events(get).next()
            assert anyio.current_time() - started >= 0.08
            assert message_of(changed)["method"] == "notifications/tools/list_changed"
        for name in ("slow", "add"):
            started = anyio.current_time()
            body = request("tools/call", name, {"name": name})
            called = await client.post("/mcp", json=body, headers=headers)
            assert anyio.current_time() - started >= 0.05
            assert "result" in called.json()
    # A fault-only reply gets the smallest valid result for the method.
    assert called.json() == {"jsonrpc": "2.0", "id": "add", "result": {"content": []}}


async def test_standalone_garbage_and_close_stream_steps_act_on_the_get_stream() -> None:
    script = inline(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {"fault": {"kind": "garbage", "text": "{not json"}},
            {"fault": {"kind": "close_stream"}},
        ]
    )
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("GET", "/mcp", headers=headers) as get:
            events = Events(get)
            assert get.status_code == 200
            await client.post("/mcp", json=request("tools/list"), headers=headers)
            [garbage] = await events.rest()  # then the stream ends
    assert garbage.data == "{not json"
    assert [e["how"] for e in entries(mock_of(app), "http_end")] == ["closed"]


async def test_resumption_with_last_event_id_replays_exactly_the_missing_events() -> None:
    app = create_app(fixture("http/resumable-stream.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as response:
            prime, one = await Events(response).rest()  # the stream closes after "one"
        assert (prime.retry, message_of(one)["params"]["data"]) == (50, "one")
        assert prime.id is not None
        assert one.id is not None

        resume = {**headers, "last-event-id": prime.id}  # the client missed "one"
        async with client.stream("GET", "/mcp", headers=resume) as response:
            replayed = await Events(response).rest()
        assert replayed[0].id == one.id
        assert message_of(replayed[0]) == message_of(one)
        assert message_of(replayed[1])["params"]["data"] == "two"
        assert message_of(replayed[2])["result"]["content"][0]["text"] == "3"
        assert len(replayed) == 3

        again = {**headers, "last-event-id": replayed[1].id or ""}
        async with client.stream("GET", "/mcp", headers=again) as response:
            assert await Events(response).rest() == replayed[2:]
    mock = mock_of(app)
    assert [e["how"] for e in entries(mock, "http_end")] == ["closed", "complete", "complete"]
    replays = [e["event"]["id"] for e in entries(mock, "sse_event") if e.get("replay")]
    assert replays == [one.id, replayed[2].id]


async def test_a_server_request_on_the_get_stream_and_one_that_the_response_awaits() -> None:
    app = create_app(fixture("http/server-requests.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("GET", "/mcp", headers=headers) as get:
            listed = await client.post("/mcp", json=request("tools/list"), headers=headers)
            assert listed.status_code == 200
            ping = message_of(await Events(get).next())
            assert ping == {"jsonrpc": "2.0", "id": "srv-get", "method": "ping"}
            answer = {"jsonrpc": "2.0", "id": "srv-get", "result": {}}
            assert (await client.post("/mcp", json=answer, headers=headers)).status_code == 202

            async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as call:
                events = Events(call)
                assert message_of(await events.next())["id"] == "srv-call"
                answer = {"jsonrpc": "2.0", "id": "srv-call", "result": {}}
                await client.post("/mcp", json=answer, headers=headers)
                [result] = await events.rest()
            assert message_of(result)["result"]["content"][0]["text"] == "3"
    mock = mock_of(app)
    assert mock.engine.unconsumed() == []


async def test_an_unanswered_server_request_is_waited_for_only_until_the_answer_timeout() -> None:
    app = create_app(fixture("http/server-requests.json"), revision="2025-11-25", answer_timeout=0)
    async with in_process(app) as client:
        headers = await initialize(client)
        await client.post("/mcp", json=request("tools/list"), headers=headers)
        async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as call:
            ping, result = await Events(call).rest()
    assert message_of(ping)["method"] == "ping"
    assert message_of(result)["id"] == 5
    assert any("no answer to server request(s) ['srv-call']" in n for n in notes(mock_of(app)))


def _held_until_cancelled(answer_as: str) -> Script:
    slow = {"expect": {"method": "tools/call", "params": {"name": "slow"}}}
    content = [{"type": "text", "text": "late"}]
    reply = {"after_cancel": True, "as": answer_as, "result": {"content": content}}
    return inline([{**slow, "reply": reply}])


def _slow_call(request_id: int) -> dict[str, Any]:
    return request("tools/call", request_id, {"name": "slow", "arguments": {}})


def _cancel(request_id: int | str) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "the caller gave up"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def _sent_after_the_cancel(mock: HttpMock, request_id: int) -> bool:
    """The response to `request_id` was recorded after the client's cancellation of it."""
    cancel = next(
        e["seq"]
        for e in entries(mock, "message")
        if e["message"].get("method") == "notifications/cancelled"
        and e["message"]["params"]["requestId"] == request_id
        and type(e["message"]["params"]["requestId"]) is type(request_id)
    )
    response = next(
        e["seq"]
        for e in entries(mock, "message")
        if e["direction"] == "server" and e["message"].get("id") == request_id
    )
    return cancel < response


async def test_a_reply_after_cancel_waits_for_the_clients_cancellation_on_its_sse_stream() -> None:
    app = create_app(_held_until_cancelled("sse"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("POST", "/mcp", json=_slow_call(7), headers=headers) as call:
            assert call.status_code == 200  # the stream is open; its response is held
            # Typed JSON: a cancellation of "7" is not one of 7.
            for request_id in ("7", 7):
                cancelled = await client.post("/mcp", json=_cancel(request_id), headers=headers)
                assert cancelled.status_code == 202
            [late] = await Events(call).rest()
    assert message_of(late)["result"]["content"][0]["text"] == "late"
    mock = mock_of(app)
    assert _sent_after_the_cancel(mock, 7)
    assert not any("no notifications/cancelled" in n for n in notes(mock))


async def test_a_reply_after_cancel_over_legacy_sse_waits_for_the_cancellation() -> None:
    app = create_app(fixture("features/cancellation.json"), transport="sse-legacy")
    legacy_get = {"accept": "text/event-stream"}
    async with in_process(app) as client, client.stream("GET", "/mcp", headers=legacy_get) as sse:
        events = Events(sse)
        endpoint = (await events.next()).data
        assert endpoint is not None
        await client.post(endpoint, json=initialize_request("2024-11-05"))
        await events.next()  # the initialize result
        for message in (_slow_call(3), request("ping", 4), _cancel(3)):
            assert (await client.post(endpoint, json=message)).status_code == 202
        pong, late = await events.next(), await events.next()
    assert message_of(pong) == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert message_of(late)["result"]["content"][0]["text"] == "too late"
    assert _sent_after_the_cancel(mock_of(app), 3)


async def test_in_a_batch_a_reply_after_cancel_goes_at_once_and_says_so() -> None:
    app = create_app(_held_until_cancelled("json"), revision="2025-03-26")
    async with in_process(app) as client:
        headers = await initialize(client, "2025-03-26")
        response = await client.post("/mcp", json=[_slow_call(6)], headers=headers)
    [answer] = response.json()
    assert answer["result"]["content"][0]["text"] == "late"
    assert any("in a batch only the response is sent" in n for n in notes(mock_of(app)))


async def test_a_reply_after_cancel_at_2026_ends_with_the_stream_the_client_closes() -> None:
    # 2026-07-28: closing the response stream is the cancellation; no notification comes.
    app = create_app(_held_until_cancelled("sse"), revision="2026-07-28")
    body, headers = modern("tools/call", 9, {"name": "slow", "arguments": {}})
    async with (
        in_process(app) as client,
        client.stream("POST", "/mcp", json=body, headers=headers) as call,
    ):
        assert call.status_code == 200  # the stream is open; its response is held
    mock = mock_of(app)
    assert [e["how"] for e in entries(mock, "http_end")] == ["client_closed"]
    assert not [e for e in entries(mock, "message") if e["direction"] == "server"]
    assert any("(JSON-RPC id 9): a cancellation" in n for n in notes(mock))


async def test_a_reply_after_cancel_goes_out_at_the_answer_timeout_without_one() -> None:
    script = _held_until_cancelled("json")
    app = create_app(script, revision="2025-11-25", answer_timeout=0)
    async with in_process(app) as client:
        headers = await initialize(client)
        answered = await client.post("/mcp", json=_slow_call(8), headers=headers)
    assert answered.json()["result"]["content"][0]["text"] == "late"
    assert any("no notifications/cancelled for request 8" in n for n in notes(mock_of(app)))


async def test_a_hanging_request_is_recorded_as_cancelled_when_the_client_gives_up() -> None:
    script = inline(
        [{"expect": {"method": "tools/call"}, "reply": {"fault": {"kind": "hang"}}}],
    )
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        with pytest.raises(httpx.ReadTimeout):
            await client.post(
                "/mcp", json=call_add(), headers=headers, timeout=httpx.Timeout(WAIT, read=0.2)
            )
    mock = mock_of(app)
    assert entries(mock, "http_end")[-1] == entries(mock, "http_end")[-1] | {
        "how": "client_closed",
        "request": 3,
    }
    assert any("a cancellation" in n for n in notes(mock))


# -- faults ------------------------------------------------------------------------------------


async def test_drop_connection_is_a_broken_read_for_httpx_and_uvicorn_stays_quiet(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with HttpMockServer(fixture("http/drop-connection.json"), revision="2025-11-25") as server:
        async with httpx.AsyncClient(timeout=WAIT) as client:
            response = await client.post(server.url, json=initialize_request(), headers=ACCEPT)
            headers = {
                **ACCEPT,
                "mcp-session-id": response.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            with pytest.raises(httpx.RemoteProtocolError):
                await client.post(server.url, json=call_add(a=1), headers=headers)
            async with client.stream(
                "POST", server.url, json=call_add(6, a=2), headers=headers
            ) as stream:
                events = Events(stream)
                first = await events.next()
                assert message_of(first)["params"]["data"] == "about to break"
                with pytest.raises(httpx.RemoteProtocolError):
                    await events.rest()
    assert b"data: " in b"".join(events.chunks)[-40:]  # cut inside the response event
    assert [e["how"] for e in entries(server.mock, "http_end")] == ["dropped", "dropped"]
    assert not [r for r in caplog.records if r.name.startswith("uvicorn")]


async def test_crash_over_http_is_a_dropped_connection_with_a_note() -> None:
    script = inline([{"expect": {"method": "tools/call"}, "reply": {"fault": {"kind": "crash"}}}])
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        with pytest.raises(httpx.RemoteProtocolError):
            await client.post("/mcp", json=call_add(), headers=headers)
    assert any("crash is a stdio fault" in n for n in notes(mock_of(app)))


async def test_close_stream_ends_the_stream_before_the_response_and_keeps_it() -> None:
    script = inline(
        [
            {
                "expect": {"method": "tools/call"},
                "reply": {
                    "as": "sse",
                    "fault": {"kind": "close_stream"},
                    "before": [LOG],
                },
            }
        ],
        revisions=["2025-11-25"],  # a log message without the 2026 logLevel opt-in
    )
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as stream:
            [log] = await Events(stream).rest()
        resume = {**headers, "last-event-id": log.id or ""}
        async with client.stream("GET", "/mcp", headers=resume) as stream:
            [answer] = await Events(stream).rest()
    assert message_of(answer) == {"jsonrpc": "2.0", "id": 5, "result": {"content": []}}


@pytest.mark.parametrize(
    ("kind", "body"),
    [("close_stream", "sse"), ("drop_connection", "sse"), ("drop_connection", "json")],
)
async def test_a_stream_s_end_is_recorded_before_it_goes_out(
    kind: str, body: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The http_end entry's time is never later than the moment the client could see the
    end: a client's wait measured from it (http.retry-honoured) is never cut short by a
    mock that was slow to note what it had already sent."""
    order: list[str] = []
    for name in ("end", "abort"):
        original = getattr(Exchange, name)

        async def sent(self: Exchange, *args: Any, _original: Any = original) -> None:
            order.append("the end goes out")
            await _original(self, *args)

        monkeypatch.setattr(Exchange, name, sent)
    step = {"expect": {"method": "tools/call"}, "reply": {"as": body, "fault": {"kind": kind}}}
    app = create_app(inline([step], revisions=["2025-11-25"]), revision="2025-11-25")
    record = mock_of(app).transcript.record

    def noted(entry_kind: str, **fields: Any) -> None:
        if entry_kind == "http_end" and fields.get("how") != "client_closed":
            order.append("http_end recorded")
        record(entry_kind, **fields)

    monkeypatch.setattr(mock_of(app).transcript, "record", noted)
    async with in_process(app) as client:
        headers = await initialize(client)
        with contextlib.suppress(httpx.HTTPError):
            async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as stream:
                await Events(stream).rest()
    ended = [i for i, what in enumerate(order) if what == "the end goes out"]
    assert ended, order
    assert "http_end recorded" in order[: ended[-1]], order


# -- 2026-07-28 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"mcp_protocol_version": ""}, "MCP-Protocol-Version header"),
        ({"mcp_protocol_version": "2025-11-25"}, "does not match _meta"),
        ({"mcp_method": "tools/list"}, "Mcp-Method header 'tools/list'"),
        ({"mcp_name": "sub"}, "Mcp-Name header value 'sub'"),
        ({"mcp_name": "=?base64?!!!?="}, "not a valid header value"),
        ({"mcp_name": "=?base64?c3Vi?="}, "Mcp-Name header value 'sub'"),
    ],
)
async def test_2026_header_mismatch_is_400_with_32020(headers: dict[str, str], reason: str) -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2026-07-28")
    body, wire = modern("tools/call", 7, {"name": "add", "arguments": {"a": 1, "b": 2}}, **headers)
    wire = {k: v for k, v in wire.items() if v}
    async with in_process(app) as client:
        response = await client.post("/mcp", json=body, headers=wire)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (response.json()["id"], error["code"]) == (7, -32020)
    assert reason in error["message"]
    # Refused before the engine: recorded all the same, with the rule it broke.
    refused = {"status": 400, "rule": "header-mismatch", "scripted": False}
    client, server = entries(mock_of(app), "message")
    assert (client["message"], client["refused"]) == (body, refused)
    assert (server["direction"], server["message"]) == ("server", response.json())
    assert entries(mock_of(app), "step") == []


ROUTE_ARGS = {"region": "日本", "query": "q"}
ROUTE_HEADER = "=?base64?5pel5pys?="  # 日本


@pytest.mark.parametrize(
    ("arguments", "param", "reason"),
    [
        (ROUTE_ARGS, None, "the Mcp-Param-Region header is missing (arguments.region is '日本')"),
        (ROUTE_ARGS, "=?base64?!!!?=", "Mcp-Param-Region header '=?base64?!!!?=' is not a valid"),
        (ROUTE_ARGS, "=?base64?5pel5p?=", "is not a valid header value"),  # not canonical
        (ROUTE_ARGS, "us-west1", "'us-west1' does not match arguments.region '日本'"),
        ({"query": "q"}, "us-west1", "header is 'us-west1' but arguments.region has no value"),
    ],
)
async def test_2026_mcp_param_headers_are_checked_against_the_arguments(
    arguments: dict[str, Any], param: str | None, reason: str
) -> None:
    app = create_app(fixture("stateless/param-headers.json"))
    body, wire = modern("tools/call", 7, {"name": "route", "arguments": arguments})
    if param is not None:
        wire["mcp-param-region"] = param
    async with in_process(app) as client:
        response = await client.post("/mcp", json=body, headers=wire)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (response.json()["id"], error["code"]) == (7, -32020)
    assert reason in error["message"]
    [refusal] = entries(mock_of(app), "refusal")
    assert (refusal["status"], refusal["rule"], refusal["scripted"]) == (
        400,
        "header-mismatch",
        False,
    )
    assert (refusal["header"], reason in refusal["reason"]) == ("Mcp-Param-Region", True)
    assert entries(mock_of(app), "step") == []  # the call never reached the script


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        (ROUTE_ARGS, {"MCP-PARAM-REGION": ROUTE_HEADER}),  # names are case-insensitive
        ({"region": "us-west1", "query": "q"}, {"mcp-param-region": "us-west1"}),
        ({"region": None, "query": "q"}, {}),  # null: no header is due
    ],
)
async def test_2026_mirrored_arguments_pass_once_decoded(
    arguments: dict[str, Any], headers: dict[str, str]
) -> None:
    app = create_app(fixture("stateless/param-headers.json"))
    body, wire = modern("tools/call", 7, {"name": "route", "arguments": arguments})
    async with in_process(app) as client:
        response = await client.post("/mcp", json=body, headers={**wire, **headers})
    assert response.status_code == 200, response.text
    assert entries(mock_of(app), "refusal") == []


@pytest.mark.parametrize(
    ("value", "header", "status"),
    [
        (42, "42", 200),
        (42, "42.0", 200),
        (42, "43", 400),
        (42, "4_2", 400),
        (True, "true", 200),
        (True, "True", 400),
        (False, "false", 200),
    ],
)
async def test_2026_integer_and_boolean_arguments_are_compared_as_values(
    value: Any, header: str, status: int
) -> None:
    kind = "boolean" if isinstance(value, bool) else "integer"
    tool = {
        "name": "count",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": kind, "x-mcp-header": "N"}},
        },
    }
    script = inline(
        [
            {"expect": {"method": "tools/list"}, "reply": {"result": {"tools": [tool]}}},
            {
                "expect": {"method": "tools/call"},
                "repeat": True,
                "reply": {"result": {"content": []}},
            },
        ],
        revisions=["2026-07-28"],
    )
    app = create_app(script)
    body, wire = modern("tools/call", 3, {"name": "count", "arguments": {"n": value}})
    async with in_process(app) as client:
        response = await client.post("/mcp", json=body, headers={**wire, "mcp-param-n": header})
    assert response.status_code == status, response.text


async def test_2026_the_mirrored_arguments_follow_the_newest_tools_list_answer() -> None:
    def listing(header: str) -> dict[str, Any]:
        schema = {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": header}}}
        return {"result": {"tools": [{"name": "t", "inputSchema": schema}]}}

    script = inline(
        [
            {"expect": {"method": "tools/list"}, "reply": listing("Old")},
            {"expect": {"method": "tools/list"}, "reply": listing("New")},
            {
                "expect": {"method": "tools/call"},
                "repeat": True,
                "reply": {"result": {"content": []}},
            },
        ],
        revisions=["2026-07-28"],
    )
    app = create_app(script)
    call, wire = modern("tools/call", 3, {"name": "t", "arguments": {"a": "x"}})
    async with in_process(app) as client:
        for request_id in (1, 2):
            body, list_wire = modern("tools/list", request_id)
            assert (await client.post("/mcp", json=body, headers=list_wire)).status_code == 200
        old = await client.post("/mcp", json=call, headers={**wire, "mcp-param-old": "x"})
        new = await client.post("/mcp", json=call, headers={**wire, "mcp-param-new": "x"})
    assert "the Mcp-Param-New header is missing" in old.json()["error"]["message"]
    assert new.status_code == 200


async def test_2026_decodes_the_base64_mcp_name_and_has_no_sessions_get_or_delete() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2026-07-28")
    body, wire = modern("tools/call", 7, {"name": "add", "arguments": {"a": 1, "b": 2}})
    async with in_process(app) as client:
        ok = await client.post("/mcp", json=body, headers={**wire, "mcp-name": "=?base64?YWRk?="})
        get = await client.get("/mcp", headers=wire)
        delete = await client.delete("/mcp", headers=wire)
    assert ok.status_code == 200
    assert ok.json()["result"]["resultType"] == "complete"
    assert "mcp-session-id" not in ok.headers
    assert (get.status_code, delete.status_code) == (405, 405)
    assert decode_header_value("=?base64?w7E=?=") == "ñ"
    assert decode_header_value("=?base64?w7E?=") is None  # not canonical base64


async def test_2026_engine_refusals_keep_their_http_status() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2026-07-28")
    async with in_process(app) as client:
        body, wire = modern("tools/list", 1)
        body["params"]["_meta"][META_VERSION] = "2099-01-01"
        unsupported = await client.post(
            "/mcp", json=body, headers={**wire, "mcp-protocol-version": "2099-01-01"}
        )
        body, wire = modern("tools/list", 2)
        del body["params"]["_meta"][META_CAPS]
        no_meta = await client.post("/mcp", json=body, headers=wire)
        body, wire = modern("no/such", 3)
        unknown = await client.post("/mcp", json=body, headers=wire)
    assert (unsupported.status_code, unsupported.json()["error"]["code"]) == (400, -32022)
    assert unsupported.json()["error"]["data"]["supported"] == ["2026-07-28"]
    assert (no_meta.status_code, no_meta.json()["error"]["code"]) == (400, -32602)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, -32601)


async def test_2026_sends_go_to_the_listen_stream_and_closing_it_is_a_cancellation() -> None:
    app = create_app(fixture("http/listen.json"), revision="2026-07-28")
    async with in_process(app) as client:
        body, wire = modern("subscriptions/listen", 1, LISTEN)
        async with client.stream("POST", "/mcp", json=body, headers=wire) as listen:
            events = Events(listen)
            ack = message_of(await events.next())
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: 1}
            body, wire = modern("tools/list", 2)
            listed = await client.post("/mcp", json=body, headers=wire)
            assert listed.status_code == 200
            changed = message_of(await events.next())
            assert changed == {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {SUBSCRIPTION_ID: 1}},
            }
    mock = mock_of(app)
    end = entries(mock, "http_end")[-1]
    assert (end["request"], end["how"]) == (1, "client_closed")
    assert any("request 1: the client closed stream s1" in n for n in notes(mock))


def _listen_step(**reply: Any) -> dict[str, Any]:
    ack = {
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"toolsListChanged": True}},
    }
    return {
        "expect": {"method": "subscriptions/listen"},
        "repeat": True,
        "reply": reply or {"before": [ack], "fault": {"kind": "hang"}},
    }


async def test_2026_a_notification_goes_only_to_the_listen_streams_that_opted_in() -> None:
    def send(method: str, **params: Any) -> dict[str, Any]:
        return {"send": {"method": method, **({"params": params} if params else {})}}

    script = inline(
        [
            _listen_step(),
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {
                **send("notifications/message", level="info", data="request-scoped"),
                # Tied to no request: a 2026 server sends no such log message (the mark lets
                # the script try, to show that no listen stream carries it either).
                "violation": "a 2026-07-28 log message tied to no request",
            },
            send("notifications/prompts/list_changed"),
            send("notifications/tools/list_changed"),
            send("notifications/resources/updated", uri="file:///a/b"),
            send("notifications/resources/updated", uri="file:///ab"),
        ],
        revisions=["2026-07-28"],
    )
    app = create_app(script)
    tools_only = {"notifications": {"toolsListChanged": True}}
    prompts_and_a = {
        "notifications": {"promptsListChanged": True, "resourceSubscriptions": ["file:///a"]}
    }
    async with in_process(app) as client:
        body_a, wire_a = modern("subscriptions/listen", "a", tools_only)
        body_b, wire_b = modern("subscriptions/listen", "b", prompts_and_a)
        async with (
            client.stream("POST", "/mcp", json=body_a, headers=wire_a) as stream_a,
            client.stream("POST", "/mcp", json=body_b, headers=wire_b) as stream_b,
        ):
            events_a, events_b = Events(stream_a), Events(stream_b)
            acks = [message_of(await events_a.next()), message_of(await events_b.next())]
            body, wire = modern("tools/list", 2)
            assert (await client.post("/mcp", json=body, headers=wire)).status_code == 200
            got_a = [message_of(await events_a.next())]
            got_b = [message_of(await events_b.next()) for _ in range(2)]
    assert [a["params"]["_meta"][SUBSCRIPTION_ID] for a in acks] == ["a", "b"]
    assert [(m["method"], m["params"]["_meta"][SUBSCRIPTION_ID]) for m in got_a] == [
        ("notifications/tools/list_changed", "a")
    ]
    assert [(m["method"], m["params"]["_meta"][SUBSCRIPTION_ID]) for m in got_b] == [
        ("notifications/prompts/list_changed", "b"),
        ("notifications/resources/updated", "b"),
    ]
    assert got_b[1]["params"]["uri"] == "file:///a/b"  # a sub-resource; file:///ab is not
    sent = [m for m in entries(mock_of(app), "message") if m["direction"] == "server"]
    assert "notifications/message" not in [m["message"].get("method") for m in sent]
    assert any("'notifications/message' not sent" in n for n in notes(mock_of(app)))


def _listens_taken_once(*labels: str) -> list[dict[str, Any]]:
    """A listen step per label, each answering one subscriptions/listen."""
    steps = []
    for label in labels:
        step = {**_listen_step(), "label": label, "expect": {"method": "subscriptions/listen"}}
        step.pop("repeat")
        steps.append(step)
    return steps


@asynccontextmanager
async def _listens_a_then_b(client: httpx.AsyncClient) -> AsyncIterator[tuple[Events, Events]]:
    """Listens "a" and "b", both for tools changes, "a" acknowledged before "b" is asked
    for: their events, "b"'s from its first."""
    wanted = {"notifications": {"toolsListChanged": True}}
    body_a, wire_a = modern("subscriptions/listen", "a", wanted)
    body_b, wire_b = modern("subscriptions/listen", "b", wanted)
    async with client.stream("POST", "/mcp", json=body_a, headers=wire_a) as stream_a:
        events_a = Events(stream_a)
        await events_a.next()  # acknowledged
        async with client.stream("POST", "/mcp", json=body_b, headers=wire_b) as stream_b:
            yield events_a, Events(stream_b)


async def test_2026_a_send_that_names_a_listen_goes_on_that_stream_only() -> None:
    # Both streams opted in to tools changes; the step's `listen` picks the first.
    first, second = _listens_taken_once("first", "second")
    changed = {"method": "notifications/tools/list_changed"}
    script = inline(
        [
            first,
            second,
            {"expect": {"method": "tools/list"}, "reply": {"result": TOOLS}},
            {"send": changed, "listen": "first"},
            {"send": changed},
        ],
        revisions=["2026-07-28"],
    )
    app = create_app(script)
    async with in_process(app) as client, _listens_a_then_b(client) as (events_a, events_b):
        await events_b.next()  # acknowledged
        body, wire = modern("tools/list", 2)
        assert (await client.post("/mcp", json=body, headers=wire)).status_code == 200
        got_a = [message_of(await events_a.next()) for _ in range(2)]
        got_b = [message_of(await events_b.next())]
    assert [m["params"]["_meta"][SUBSCRIPTION_ID] for m in got_a] == ["a", "a"]
    assert [m["params"]["_meta"][SUBSCRIPTION_ID] for m in got_b] == ["b"]
    sent = [
        m["message"]
        for m in entries(mock_of(app), "message")
        if m["direction"] == "server" and m["message"].get("method") == changed["method"]
    ]
    # Each stream is written by a task of its own: the two streams' order is not defined.
    assert sorted(m["params"]["_meta"][SUBSCRIPTION_ID] for m in sent) == ["a", "a", "b"]


async def test_2026_a_send_due_right_after_a_listen_reaches_that_listen_too() -> None:
    """The send step fires when the engine takes the second listen request, before its
    stream is open: it waits for that stream (after its acknowledgement, as on stdio)
    instead of reaching only the stream already open."""
    first, second = _listens_taken_once("first", "second")
    changed = {"method": "notifications/tools/list_changed"}
    script = inline([first, second, {"send": changed}], revisions=["2026-07-28"])
    app = create_app(script)
    async with in_process(app) as client, _listens_a_then_b(client) as (events_a, events_b):
        got_b = [message_of(await events_b.next()) for _ in range(2)]
        got_a = [message_of(await events_a.next())]
    assert [m["method"] for m in got_b] == [
        "notifications/subscriptions/acknowledged",
        changed["method"],
    ]
    assert [(m["method"], m["params"]["_meta"][SUBSCRIPTION_ID]) for m in got_a] == [
        (changed["method"], "a")
    ]
    assert got_b[1]["params"]["_meta"][SUBSCRIPTION_ID] == "b"


async def test_2026_the_result_that_ends_a_listen_stream_names_the_subscription() -> None:
    script = inline([_listen_step(result={})], revisions=["2026-07-28"])
    app = create_app(script)
    body, wire = modern("subscriptions/listen", 4, LISTEN)
    async with in_process(app) as client:
        response = await client.post("/mcp", json=body, headers=wire)
    result = response.json()["result"]
    assert (result["resultType"], result["_meta"]) == ("complete", {SUBSCRIPTION_ID: 4})


async def test_2026_a_send_due_before_any_listen_stream_waits_for_one() -> None:
    script = inline(
        [
            {"send": {"method": "notifications/tools/list_changed"}},
            {
                "expect": {"method": "subscriptions/listen"},
                "reply": {
                    "before": [
                        {
                            "method": "notifications/subscriptions/acknowledged",
                            "params": {"notifications": {"toolsListChanged": True}},
                        }
                    ],
                    "fault": {"kind": "hang"},
                },
            },
        ],
        revisions=["2026-07-28"],
    )
    app = create_app(script)
    async with in_process(app) as client:
        body, wire = modern("subscriptions/listen", 1, LISTEN)
        async with client.stream("POST", "/mcp", json=body, headers=wire) as listen:
            events = Events(listen)
            first, second = await events.next(), await events.next()
    assert message_of(first)["method"] == "notifications/subscriptions/acknowledged"
    assert message_of(second)["method"] == "notifications/tools/list_changed"


# -- Origin, methods, paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://evil.example", 403),
        ("null", 403),
        ("http://localhost:6274", 200),
        ("http://127.0.0.1", 200),
        ("http://[::1]:8080", 200),
    ],
)
async def test_origin_must_be_loopback(origin: str, status: int) -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        response = await client.post(
            "/mcp", json=initialize_request(), headers={**ACCEPT, "origin": origin}
        )
    assert response.status_code == status
    if status == 403:
        assert response.json()["error"]["code"] == -32000
        assert response.json()["id"] is None


async def test_origin_is_not_checked_when_the_script_turns_it_off() -> None:
    script = inline([], http={"check_origin": False})
    app = create_app(script, revision="2025-11-25")
    async with in_process(app) as client:
        response = await client.post(
            "/mcp", json=initialize_request(), headers={**ACCEPT, "origin": "http://evil.example"}
        )
    assert response.status_code == 200


async def test_other_methods_and_paths_get_405_and_404() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        put = await client.put("/mcp", content=b"x")
        head = await client.head("/mcp")
        elsewhere = await client.post("/other", json=request("ping"))
    assert (put.status_code, put.headers["allow"]) == (405, "POST, GET, DELETE")
    assert head.status_code == 405
    assert elsewhere.status_code == 404
    recorded = entries(mock_of(app), "http_request")
    assert [(e["method"], e["path"]) for e in recorded] == [
        ("PUT", "/mcp"),
        ("HEAD", "/mcp"),
        ("POST", "/other"),
    ]


async def test_every_exchange_is_recorded_with_its_request_number() -> None:
    app = create_app(fixture("http/sse-features.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        await client.post("/mcp", json=request("tools/list"), headers={**headers, "X-Test": "1"})
        async with client.stream("POST", "/mcp", json=call_add(), headers=headers) as response:
            await Events(response).rest()
        await client.post("/mcp", content=b"\xff\xfe", headers=headers)
    mock = mock_of(app)
    requests = entries(mock, "http_request")
    assert [e["request"] for e in requests] == [1, 2, 3, 4, 5]
    assert [e["request"] for e in entries(mock, "http_response")] == [1, 2, 3, 4, 5]
    assert requests[2]["headers"]["x-test"] == "1"
    assert requests[1]["body"] == '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert requests[4]["body_utf8"] is False
    assert {e["request"] for e in entries(mock, "sse_event")} == {4}
    responses = entries(mock, "http_response")
    assert responses[3]["body"] is None  # streamed: its events are the sse_event entries
    assert json.loads(responses[2]["body"])["result"]["tools"]


# -- HTTP+SSE (2024-11-05) ------------------------------------------------------------------


async def test_legacy_sse_announces_the_endpoint_and_answers_on_the_stream() -> None:
    app = create_app(fixture("tools/list-and-call.json"), transport="sse-legacy")
    legacy_get = {"accept": "text/event-stream"}
    async with in_process(app) as client, client.stream("GET", "/mcp", headers=legacy_get) as sse:
        events = Events(sse)
        endpoint = await events.next()
        assert endpoint.event == "endpoint"
        assert endpoint.data is not None
        assert endpoint.data.startswith("/mcp/messages?session_id=")
        posted = await client.post(endpoint.data, json=initialize_request("2024-11-05"))
        assert (posted.status_code, posted.text) == (202, "Accepted")
        answer = await events.next()
        assert answer.event is None
        assert message_of(answer)["result"]["protocolVersion"] == "2024-11-05"
        streamable = await client.post("/mcp", json=request("tools/list"))
        unknown = await client.post("/mcp/messages?session_id=nope", json=request("ping"))
        missing = await client.post("/mcp/messages", json=request("ping"))
    assert (streamable.status_code, unknown.status_code, missing.status_code) == (405, 404, 400)


@pytest.mark.parametrize(("name", "status"), [("legacy-404", 404), ("legacy-400", 400)])
async def test_legacy_server_refuses_post_with_the_scripted_status(name: str, status: int) -> None:
    app = create_app(fixture(f"http/{name}.json"), transport="sse-legacy")
    async with in_process(app) as client:
        refused = await client.post("/mcp", json=initialize_request("2024-11-05"))
        get = {"accept": "text/event-stream"}
        async with client.stream("GET", "/mcp", headers=get) as sse:
            endpoint = await Events(sse).next()
    assert refused.status_code == status
    assert endpoint.event == "endpoint"


# -- refusals: nothing the client sends vanishes ------------------------------------------------


def refusal_of(
    mock: HttpMock,
    number: int,
    status: int,
    rule: str,
    sent: list[Any],
    *,
    scripted: bool = False,
) -> dict[str, Any]:
    """Assert request `number` was refused as said, with `sent` recorded as refused messages
    (in order: messages, refusal, response); its server `message` entries are returned."""
    [entry] = [e for e in entries(mock, "refusal") if e["request"] == number]
    assert (entry["status"], entry["rule"], entry["scripted"]) == (status, rule, scripted)
    assert isinstance(entry["reason"], str)
    assert entry["reason"]
    on_channel = [e for e in entries(mock, "message") if e["channel"] == f"http:{number}"]
    client = [e for e in on_channel if e["direction"] == "client"]
    assert [e["message"] for e in client] == sent
    refused = {"status": status, "rule": rule, "scripted": scripted}
    assert all(e["refused"] == refused for e in client)
    [response] = [e for e in entries(mock, "http_response") if e["request"] == number]
    assert response["status"] == status
    assert all(e["seq"] < entry["seq"] for e in client)
    assert entry["seq"] < response["seq"]
    server = [e for e in on_channel if e["direction"] == "server"]
    assert all(entry["seq"] < e["seq"] < response["seq"] for e in server)
    return {"server": [e["message"] for e in server], "refusal": entry}


async def test_refused_without_a_session_id() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        missing = {k: v for k, v in headers.items() if k != "mcp-session-id"}
        response = await client.post("/mcp", json=request("tools/list", 2), headers=missing)
        deleted = await client.delete("/mcp", headers=missing)
    assert (response.status_code, deleted.status_code) == (400, 400)
    mock = mock_of(app)
    found = refusal_of(mock, 3, 400, "session-required", [request("tools/list", 2)])
    assert found["server"] == [response.json()]
    refusal_of(mock, 4, 400, "session-required", [])
    assert entries(mock, "step") == []  # the engine never saw it


async def test_refused_for_a_session_id_never_issued() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        unknown = {**headers, "mcp-session-id": "no-such-session"}
        response = await client.post("/mcp", json=request("tools/list", 3), headers=unknown)
    assert response.status_code == 404
    found = refusal_of(mock_of(app), 3, 404, "session-unknown", [request("tools/list", 3)])
    assert found["server"] == [response.json()]


async def test_refused_for_a_deleted_session_and_for_one_the_script_expired() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        await client.delete("/mcp", headers=headers)
        after = await client.post("/mcp", json=request("tools/list", 4), headers=headers)
    assert after.status_code == 404
    refusal_of(mock_of(app), 4, 404, "session-ended", [request("tools/list", 4)])

    app = create_app(fixture("http/expire-on-request.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        expiring = await client.post("/mcp", json=request("tools/list", 1), headers=headers)
        again = await client.post("/mcp", json=request("tools/list", 2), headers=headers)
    mock = mock_of(app)
    # The request whose step expires the session reached the engine: no `refused` member,
    # but its 404 is a (scripted) refusal whose error body is recorded.
    on_three = [e for e in entries(mock, "message") if e["channel"] == "http:3"]
    assert [(e["direction"], "refused" in e) for e in on_three] == [
        ("client", False),
        ("server", False),
    ]
    [fault_refusal] = [e for e in entries(mock, "refusal") if e["request"] == 3]
    assert (fault_refusal["rule"], fault_refusal["scripted"]) == ("session-ended", True)
    assert expiring.json() in [e["message"] for e in entries(mock, "message")]
    found = refusal_of(mock, 4, 404, "session-ended", [request("tools/list", 2)], scripted=True)
    assert found["server"] == [again.json()]


async def test_refused_for_an_unsupported_protocol_version_header() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        bad = {**headers, "mcp-protocol-version": "1999-01-01"}
        response = await client.post("/mcp", json=request("tools/list", 1), headers=bad)
    assert response.status_code == 400
    found = refusal_of(mock_of(app), 3, 400, "protocol-version", [request("tools/list", 1)])
    assert found["server"] == [response.json()]


async def test_refused_for_a_foreign_origin_even_an_initialize() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        response = await client.post(
            "/mcp", json=initialize_request(), headers={**ACCEPT, "origin": "http://evil.example"}
        )
    assert response.status_code == 403
    mock = mock_of(app)
    found = refusal_of(mock, 1, 403, "origin", [initialize_request()])
    assert found["server"] == [response.json()]
    assert "evil.example" in found["refusal"]["reason"]
    assert mock.sessions == {}


async def test_refused_on_a_wrong_path_with_a_plain_text_body() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        batch = [request("ping", 1), {"jsonrpc": "2.0", "method": "notifications/x"}]
        response = await client.post("/other", json=batch, headers=ACCEPT)
        got = await client.get("/other", headers=ACCEPT)
    assert (response.status_code, response.text, got.status_code) == (404, "Not Found", 404)
    mock = mock_of(app)
    assert refusal_of(mock, 1, 404, "wrong-path", batch)["server"] == []
    refusal_of(mock, 2, 404, "wrong-path", [])


async def test_refused_methods_are_scripted_only_when_the_script_says_405() -> None:
    app = create_app(fixture("http/no-get-no-delete.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        get = await client.get("/mcp", headers=headers)
        put = await client.put("/mcp", json=request("ping"), headers=headers)
    assert (get.status_code, put.status_code) == (405, 405)
    mock = mock_of(app)
    refusal_of(mock, 3, 405, "method-not-allowed", [], scripted=True)
    refusal_of(mock, 4, 405, "method-not-allowed", [])  # only a POST body holds messages


async def test_refused_a_get_that_does_not_accept_an_event_stream() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        headers = await initialize(client)
        response = await client.get("/mcp", headers={**headers, "accept": "application/json"})
    assert response.status_code == 406
    found = refusal_of(mock_of(app), 3, 406, "not-acceptable", [])
    assert found["server"] == [response.json()]


async def test_refused_at_2026_for_a_header_mismatch_and_an_unknown_method() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2026-07-28")
    async with in_process(app) as client:
        body, wire = modern("tools/list", 1, mcp_method="tools/call")
        mismatch = await client.post("/mcp", json=body, headers=wire)
        unknown_body, wire = modern("no/such", 2)
        unknown = await client.post("/mcp", json=unknown_body, headers=wire)
    assert (mismatch.status_code, unknown.status_code) == (400, 404)
    mock = mock_of(app)
    found = refusal_of(mock, 1, 400, "header-mismatch", [body])
    assert found["server"] == [mismatch.json()]
    # The unknown method went through the engine: a refusal, but no `refused` member.
    [refusal] = [e for e in entries(mock, "refusal") if e["request"] == 2]
    assert (refusal["status"], refusal["rule"], refusal["scripted"]) == (
        404,
        "unknown-method-2026",
        False,
    )
    client_side = [e for e in entries(mock, "message") if e["channel"] == "http:2"]
    assert [(e["direction"], "refused" in e) for e in client_side] == [
        ("client", False),
        ("server", False),
    ]


async def test_refused_bodies_that_are_not_json_rpc_keep_their_invalid_entry() -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision="2025-11-25")
    async with in_process(app) as client:
        garbage = await client.post("/mcp", content=b"{not json", headers=ACCEPT)
        batch = [request("tools/list", 1), request("ping", 2)]
        refused_batch = await client.post("/mcp", json=batch, headers=ACCEPT)
        big = await client.post("/mcp", content=b" " * (4 * 1024 * 1024 + 1), headers=ACCEPT)
    assert (garbage.status_code, refused_batch.status_code, big.status_code) == (400, 400, 413)
    mock = mock_of(app)
    assert refusal_of(mock, 1, 400, "unparsable", [])["server"] == [garbage.json()]
    # A batch is no message at 2025-11-25, but the messages in it are recorded all the same.
    found = refusal_of(mock, 2, 400, "unparsable", batch)
    assert found["server"] == [refused_batch.json()]
    assert [e["code"] for e in entries(mock, "invalid")] == [-32700, -32600]
    refusal_of(mock, 3, 413, "too-large", [])


async def test_refused_by_the_legacy_http_sse_transport() -> None:
    app = create_app(fixture("http/legacy-404.json"), transport="sse-legacy")
    async with in_process(app) as client:
        probe = await client.post("/mcp", json=initialize_request("2024-11-05"))
        missing = await client.post("/mcp/messages", json=request("ping", 1))
        unknown = await client.post("/mcp/messages?session_id=nope", json=request("ping", 2))
        garbage = await client.post("/mcp/messages?session_id=nope", content=b"[")
        elsewhere = await client.post("/elsewhere", json=request("ping", 3))
    statuses = [r.status_code for r in (probe, missing, unknown, garbage, elsewhere)]
    assert statuses == [404, 400, 404, 404, 404]
    mock = mock_of(app)
    found = refusal_of(
        mock, 1, 404, "legacy-post", [initialize_request("2024-11-05")], scripted=True
    )
    assert found["server"] == []
    assert refusal_of(mock, 2, 400, "session-required", [request("ping", 1)])["server"] == [
        missing.json()
    ]
    refusal_of(mock, 3, 404, "session-unknown", [request("ping", 2)])
    refusal_of(mock, 4, 404, "session-unknown", [])
    refusal_of(mock, 5, 404, "wrong-path", [request("ping", 3)])


async def test_the_default_legacy_post_refusal_is_a_scripted_405() -> None:
    app = create_app(fixture("tools/list-and-call.json"), transport="sse-legacy")
    async with in_process(app) as client:
        probe = await client.post("/mcp", json=initialize_request("2024-11-05"))
        put = await client.put("/mcp/messages", content=b"x")
    assert (probe.status_code, probe.headers["allow"], put.status_code) == (405, "GET", 405)
    mock = mock_of(app)
    refusal_of(mock, 1, 405, "legacy-post", [initialize_request("2024-11-05")], scripted=True)
    refusal_of(mock, 2, 405, "method-not-allowed", [])


# -- real clients on uvicorn -------------------------------------------------------------------


async def _list_and_call(url: str, mode: str) -> tuple[str, list[str], Any]:
    from mcp import Client

    with anyio.fail_after(WAIT):
        async with Client(url, mode=mode, read_timeout_seconds=WAIT) as client:
            tools = await client.list_tools()
            result = await client.call_tool("add", {"a": 1, "b": 2})
            return client.protocol_version, [t.name for t in tools.tools], result


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("revision", "mode"),
    [
        ("2025-11-25", "legacy"),
        ("2025-06-18", "auto"),
        ("2026-07-28", "2026-07-28"),
        ("2026-07-28", "auto"),
    ],
)
async def test_python_sdk_lists_and_calls(revision: str, mode: str) -> None:
    with HttpMockServer(fixture("tools/list-and-call.json"), revision=revision) as server:
        version, names, result = await _list_and_call(server.url, mode)
    assert version == revision
    assert "add" in names
    assert not result.is_error
    assert result.content[0].text == "3"
    mock = server.mock
    methods = [e["method"] for e in entries(mock, "http_request")]
    if revision == "2026-07-28":
        assert set(methods) == {"POST"}
        posts = entries(mock, "http_request")
        assert all(p["headers"]["mcp-protocol-version"] == "2026-07-28" for p in posts)
        call = next(p for p in posts if '"tools/call"' in p["body"])
        assert (call["headers"]["mcp-method"], call["headers"]["mcp-name"]) == ("tools/call", "add")
    else:
        assert methods.count("GET") == 1  # the standalone stream
        assert methods[-1] == "DELETE"
        assert list(mock.sessions.values()) == ["terminated"]
    if mode == "auto":
        first = mock.transcript.client_messages()[0]
        assert first["method"] == "server/discover"


@pytest.mark.e2e
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_fastmcp_lists_and_calls(revision: str) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    with HttpMockServer(fixture("tools/list-and-call.json"), revision=revision) as server:
        with anyio.fail_after(WAIT):
            async with Client(StreamableHttpTransport(server.url), timeout=WAIT) as client:
                tools = await client.list_tools()
                result = await client.call_tool("add", {"a": 1, "b": 2})
    assert "add" in [t.name for t in tools]
    assert result.content[0].text == "3"
    assert entries(server.mock, "unmatched") == []


@pytest.mark.e2e
async def test_python_sdk_sse_client_speaks_legacy_http_sse() -> None:
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    with HttpMockServer(fixture("tools/list-and-call.json"), transport="sse-legacy") as server:
        with anyio.fail_after(WAIT):
            async with (
                sse_client(server.url, timeout=WAIT, sse_read_timeout=WAIT) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                tools = await session.list_tools()
                result = await session.call_tool("add", {"a": 1, "b": 2})
    assert init.protocol_version == "2024-11-05"
    assert "add" in [t.name for t in tools.tools]
    assert result.content[0].text == "3"  # type: ignore[union-attr]
    requests = entries(server.mock, "http_request")
    assert requests[0]["method"] == "GET"
    assert {(e["method"], e["path"]) for e in requests[1:]} == {("POST", "/mcp/messages")}


@pytest.mark.e2e
async def test_an_sse_reply_with_every_feature_reaches_the_python_sdk_intact() -> None:
    from mcp import Client

    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with HttpMockServer(fixture("http/sse-features.json"), revision="2025-11-25") as server:
        with anyio.fail_after(WAIT):
            async with Client(
                server.url, mode="legacy", read_timeout_seconds=WAIT, logging_callback=on_log
            ) as client:
                result = await client.call_tool("add", {"a": 1, "b": 2})
    assert result.content[0].text == "3"  # type: ignore[union-attr]
    assert logs == ["adding 1 and 2"]


@pytest.mark.e2e
async def test_the_python_sdk_resumes_a_closed_stream_with_last_event_id() -> None:
    with HttpMockServer(fixture("http/resumable-stream.json"), revision="2025-11-25") as server:
        _version, _names, result = await _list_and_call(server.url, "legacy")
    assert result.content[0].text == "3"
    gets = [e for e in entries(server.mock, "http_request") if "last-event-id" in e["headers"]]
    assert [g["method"] for g in gets] == ["GET"]
    assert any("resumes stream" in n for n in notes(server.mock))


# -- runners -----------------------------------------------------------------------------------


def test_no_listening_port_and_no_thread_outlive_the_server() -> None:
    before = set(threading.enumerate())
    with HttpMockServer(fixture("tools/list-and-call.json"), revision="2025-11-25") as server:
        port = server.port
        assert server.url == f"http://127.0.0.1:{port}/mcp"
        assert set(threading.enumerate()) - before  # the server thread
        response = httpx.post(server.url, json=initialize_request(), headers=ACCEPT, timeout=WAIT)
        assert response.status_code == 200
        # An open GET stream must not keep the server from stopping.
        headers = {**ACCEPT, "mcp-session-id": response.headers["mcp-session-id"]}
        held = httpx.Client(timeout=WAIT)
        stream = held.send(held.build_request("GET", server.url, headers=headers), stream=True)
        assert stream.status_code == 200
    assert set(threading.enumerate()) <= before
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()
    stream.close()
    held.close()


def test_accepted_connections_have_tcp_nodelay() -> None:
    # Without TCP_NODELAY every small response waits for the client's delayed ACK (about
    # 40 ms a request); asyncio sets it only when the listening socket says it is TCP.
    script = fixture("tools/list-and-call.json")
    with HttpMockServer(script, revision="2025-11-25") as server, httpx.Client(timeout=WAIT) as c:
        response = c.post(server.url, json=initialize_request(), headers=ACCEPT)
        assert response.status_code == 200
        uvicorn_server = server._server
        assert uvicorn_server is not None
        connections = list(uvicorn_server.server_state.connections)
        assert len(connections) == 1  # the client's kept-alive connection
        accepted = connections[0].transport.get_extra_info("socket")
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_the_transcript_file_is_written_and_closed(tmp_path: Any) -> None:
    from mock_servers.engine._transcript import read_transcript

    path = tmp_path / "run.jsonl"
    script = fixture("tools/list-and-call.json")
    with HttpMockServer(script, revision="2025-11-25", transcript_path=path) as server:
        httpx.post(server.url, json=initialize_request(), headers=ACCEPT, timeout=WAIT)
    written = read_transcript(path)
    assert (written["revision"], written["transport"]) == ("2025-11-25", "http")
    kinds = [e["kind"] for e in written["entries"]]
    assert kinds[0] == "http_request"
    assert kinds[-1] == "unconsumed"


async def test_the_async_server_runs_in_the_current_loop() -> None:
    script = fixture("tools/list-and-call.json")
    async with AsyncHttpMockServer(script, revision="2025-11-25") as server:
        _version, names, _result = await _list_and_call(server.url, "legacy")
    assert "add" in names
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=WAIT).close()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.com"])
def test_non_loopback_hosts_are_refused_without_the_explicit_flag(host: str) -> None:
    script = fixture("tools/list-and-call.json")
    with pytest.raises(ValueError, match="allow_remote"):
        serve_http(script, host, 0)
    with pytest.raises(ValueError, match="loopback"):
        HttpMockServer(script, host=host)


async def test_serve_http_announces_its_url_and_stops_on_ctrl_c() -> None:
    code = (
        "import sys\n"
        "from mock_servers.engine._script import load_script\n"
        "from mock_servers.http import serve_http\n"
        "serve_http(load_script(sys.argv[1]), '127.0.0.1', 0, revision='2025-11-25',"
        " ready=lambda url: print(url, flush=True))\n"
    )
    path = str(fixtures_root() / "tools" / "list-and-call.json")
    with anyio.fail_after(WAIT * 2):
        async with await anyio.open_process([sys.executable, "-c", code, path]) as process:
            assert process.stdout is not None
            assert process.stderr is not None
            line = b""
            while not line.endswith(b"\n"):
                line += await process.stdout.receive()
            url = line.decode().strip()
            async with httpx.AsyncClient(timeout=WAIT) as client:
                response = await client.post(url, json=initialize_request(), headers=ACCEPT)
            assert response.status_code == 200
            process.send_signal(signal.SIGINT)
            status = await process.wait()
            rest = b"".join([chunk async for chunk in process.stdout])
            errors = b"".join([chunk async for chunk in process.stderr])
    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/mcp")
    assert (rest, errors) == (b"", b"")
    assert status == 0


def test_create_app_refuses_a_transport_the_revision_does_not_have() -> None:
    script = fixture("tools/list-and-call.json")
    with pytest.raises(ValueError, match="sse-legacy"):
        create_app(script, revision="2024-11-05")
    with pytest.raises(ValueError, match="sse-legacy"):
        create_app(script, revision="2025-11-25", transport="sse-legacy")
    with pytest.raises(ValueError, match="transport"):
        create_app(script, transport="websocket")


# -- robustness (hypothesis) ---------------------------------------------------------------------

_FUZZ_REVISIONS = ["2025-03-26", "2025-11-25", "2026-07-28"]
_HEADER_NAMES = [
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "origin",
    "accept",
    "content-type",
    "last-event-id",
    "content-length",
]
_header_names = st.sampled_from(_HEADER_NAMES) | st.text(
    "abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12
).map(lambda name: "x" + name)
_header_values = st.binary(max_size=40).filter(lambda b: not any(c in b for c in b"\r\n\0"))
_bodies = st.one_of(
    st.binary(max_size=200),
    json_values().map(lambda v: json.dumps(v).encode()),
    jsonrpc_messages().map(lambda m: encode(m).encode()),
    st.sampled_from(
        [
            b"",
            b"[]",
            b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}',
            "\ufeff{}".encode(),
            json.dumps(initialize_request()).encode(),
            json.dumps(call_add()).encode(),
            json.dumps(request("tools/list")).encode(),
            json.dumps([request("tools/list")]).encode(),
        ]
    ),
)


def _is_jsonrpc_answer(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_jsonrpc_answer(v) for v in value)
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0" or "id" not in value:
        return False
    if ("result" in value) == ("error" in value):
        return False
    error = value.get("error", {"code": 0, "message": ""})
    return isinstance(error.get("code"), int) and isinstance(error.get("message"), str)


async def _fuzz_once(
    revision: str, method: str, path: str, headers: Mapping[str, bytes], body: bytes
) -> None:
    app = create_app(fixture("tools/list-and-call.json"), revision=revision)
    transport = StreamingASGITransport(app)
    with anyio.fail_after(WAIT):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            raw_headers = [(k.encode(), v) for k, v in headers.items()]
            async with client.stream(method, path, content=body, headers=raw_headers) as response:
                content = (
                    b""
                    if response.headers.get("content-type") == "text/event-stream"
                    else (await response.aread())
                )
    assert 200 <= response.status_code <= 599
    assert response.status_code != 500
    if content and response.headers.get("content-type") == "application/json":
        assert _is_jsonrpc_answer(json.loads(content)), content


@settings(
    max_examples=max(500, settings().max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    revision=st.sampled_from(_FUZZ_REVISIONS),
    method=st.sampled_from(["POST", "POST", "POST", "GET", "DELETE", "PUT", "OPTIONS", "PATCH"]),
    path=st.sampled_from(["/mcp", "/mcp", "/", "/mcp/messages", "/x%00y"]),
    headers=st.dictionaries(_header_names, _header_values, max_size=6),
    body=_bodies,
)
def test_any_request_gets_a_well_formed_answer(
    revision: str, method: str, path: str, headers: dict[str, bytes], body: bytes
) -> None:
    note(f"{method} {path} at {revision}")
    note(f"headers: {headers!r}")
    note(f"body: {body!r}")
    anyio.run(_fuzz_once, revision, method, path, headers, body)
