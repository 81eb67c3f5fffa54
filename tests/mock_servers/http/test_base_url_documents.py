"""The HTTP mock's own URL in what it serves (`$base_url`) and documents beside its endpoint
(`http.documents`): a tool schema that points at the server's own origin, served by a mock
that records whoever fetches it (the official `json-schema-ref-no-deref` scenario's need).
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from _machine import within

from mock_servers import ScriptError, Transcript, parse_script
from mock_servers.http import Dispatcher, HttpMockServer
from mock_servers.http._asgi_transport import StreamingASGITransport

MODERN = "2026-07-28"
WAIT = within(10.0)
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/list",
}
LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def tool(ref: Any) -> dict[str, Any]:
    return {
        "name": "lookup",
        "inputSchema": {"type": "object", "properties": {"profile": {"$ref": ref}}},
    }


def script(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format_version": 1,
        "name": "base-url",
        "revisions": [MODERN],
        "transports": ["http"],
        "server": {"capabilities": {"tools": {}}},
        "http": {"documents": {"/schemas/profile.json": SCHEMA}},
        "steps": [
            {
                "expect": {"method": "tools/list"},
                "reply": {"result": {"tools": [tool({"$base_url": "/schemas/profile.json"})]}},
                "repeat": True,
            }
        ],
    }
    data.update(changes)
    return data


def problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ScriptError) as info:
        parse_script(data, source="s.json")
    return [(p.pointer, p.reason) for p in info.value.problems]


def test_the_mock_fills_its_own_url_and_records_every_request_beside_the_endpoint() -> None:
    with HttpMockServer(parse_script(script()), revision=MODERN, host="localhost") as server:
        listed = httpx.post(server.url, headers=HEADERS, json=LIST, timeout=WAIT)
        ref = listed.json()["result"]["tools"][0]["inputSchema"]["properties"]["profile"]["$ref"]
        assert ref == f"http://localhost:{server.port}/schemas/profile.json"
        assert server.base_url == f"http://localhost:{server.port}"
        fetched = httpx.get(ref, timeout=WAIT)
        posted = httpx.post(ref, timeout=WAIT)
        elsewhere = httpx.get(f"{server.base_url}/schemas/other.json", timeout=WAIT)
    assert (fetched.status_code, fetched.json()) == (200, SCHEMA)
    assert (posted.status_code, posted.headers["allow"]) == (405, "GET")
    assert elsewhere.status_code == 404
    requests = [
        (e["method"], e["path"]) for e in server.transcript.entries if e["kind"] == "http_request"
    ]
    assert requests == [
        ("POST", "/mcp"),
        ("GET", "/schemas/profile.json"),
        ("POST", "/schemas/profile.json"),
        ("GET", "/schemas/other.json"),
    ]
    # Each request for the document says so (the checks of the MCP endpoint leave it out);
    # the GET of an unknown path was meant for the mock, so it has none.
    documents = [
        (e["request"], e["method"], e["path"])
        for e in server.transcript.entries
        if e["kind"] == "document"
    ]
    assert documents == [(2, "GET", "/schemas/profile.json"), (3, "POST", "/schemas/profile.json")]
    # The document's own answer is no refusal; the POST's 405 is the script's choice.
    refusals = [
        (e["rule"], e["scripted"]) for e in server.transcript.entries if e["kind"] == "refusal"
    ]
    assert refusals == [("method-not-allowed", True), ("wrong-path", False)]


def test_a_base_url_in_a_before_message_and_with_request_templates_is_filled() -> None:
    data = script(
        revisions=["2025-11-25"],
        http={"sessions": False},
        steps=[
            {
                "expect": {"method": "tools/call"},
                "reply": {
                    "before": [
                        {
                            "method": "notifications/message",
                            "params": {"level": "info", "data": {"$base_url": "/log"}},
                        }
                    ],
                    "result": {
                        "content": [{"type": "text", "text": {"$base_url": ""}}],
                        "structuredContent": {"asked": {"$request": "/params/name"}},
                    },
                },
            }
        ],
    )
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t"}}
    headers = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
    with HttpMockServer(parse_script(data), host="127.0.0.1") as server:
        answer = httpx.post(server.url, headers=headers, json=call, timeout=WAIT)
    sent = [
        e["message"]
        for e in server.transcript.entries
        if e["kind"] == "message" and e.get("direction") == "server"
    ]
    assert answer.status_code == 200, answer.text
    log, result = sent[-2], sent[-1]["result"]
    assert log["params"]["data"] == f"{server.base_url}/log"
    assert result["content"][0]["text"] == server.base_url
    assert result["structuredContent"] == {"asked": "t"}


@pytest.mark.anyio
async def test_the_development_server_gives_each_session_its_url() -> None:
    dispatcher = Dispatcher(
        parse_script(script()), revision=MODERN, transcript=Transcript(script="base-url")
    )
    dispatcher.base_url = "http://127.0.0.1:8765"  # what serve_dev sets once it listens
    transport = StreamingASGITransport(dispatcher)
    with anyio.fail_after(WAIT):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            listed = await client.post("/mcp", headers=HEADERS, json=LIST)
    schema = listed.json()["result"]["tools"][0]["inputSchema"]
    assert schema["properties"]["profile"]["$ref"] == "http://127.0.0.1:8765/schemas/profile.json"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_validate_refuses_a_base_url_where_it_cannot_be_filled() -> None:
    send = {"send": {"method": "notifications/message", "params": {"data": {"$base_url": "/x"}}}}
    found = problems(
        script(
            revisions=["2025-11-25"],
            transports=["stdio", "http"],
            http={},
            steps=[
                {
                    "expect": {"method": "tools/list"},
                    "reply": {"result": {"tools": [tool({"$base_url": "schemas/x.json"})]}},
                },
                {**send, "violation": "a log message nobody asked for"},
            ],
        )
    )
    where = "/steps/0/reply/result/tools/0/inputSchema/properties/profile/$ref"
    assert [(pointer, reason.split(",")[0]) for pointer, reason in found] == [
        (where, "$base_url is the HTTP mock's own URL"),
        (where, "$base_url takes a path (what follows http://localhost:PORT)"),
        ("/steps/1/send/params/data", "$base_url is filled in a reply's result"),
    ]


def test_validate_holds_the_filled_url_to_the_schema() -> None:
    # A URL where the schema wants a boolean: the send gate would refuse it at the first answer.
    data = script(
        steps=[
            {
                "expect": {"method": "tools/call"},
                "reply": {"result": {"content": [], "isError": {"$base_url": "/x"}}},
            }
        ]
    )
    ((pointer, reason),) = problems(data)
    assert pointer == "/steps/0/reply/result/isError"
    assert "not a valid 2026-07-28 server message" in reason


def test_validate_refuses_a_document_at_the_endpoint() -> None:
    ((pointer, reason),) = problems(script(http={"documents": {"no-slash": SCHEMA}}))
    assert (pointer, "'no-slash' does not match '^/'" in reason) == ("/http/documents", True)
    ((pointer, reason),) = problems(script(http={"documents": {"/mcp": SCHEMA}}))
    assert (pointer, reason.split(" (")[0]) == ("/http/documents/~1mcp", "/mcp is the MCP endpoint")
