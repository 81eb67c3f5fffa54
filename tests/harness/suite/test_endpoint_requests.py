"""The HTTP transport's rules bind requests to the MCP endpoint, and only those.

A client that looks up authorization metadata, registers, asks for a token or fetches a
document a schema refers to makes HTTP requests that are not MCP messages: a check of
the transport never judges them (each case below once failed or noted a client for
one), and the same check still fires on the MCP endpoint (the violation branch).
Hand-built runs: no client, no mock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

import harness.suite  # noqa: F401  (registers the checks)
from harness.judging import CATALOGUE, Status, judge
from harness.running import Operation, Scenario, ScenarioRun

CLIENT_INFO = {"name": "c", "version": "1"}


def _request(
    seq: int, number: int, method: str, path: str, body: Any = None, **headers: str
) -> dict[str, Any]:
    return {"seq": seq, "t": seq / 100, "kind": "http_request", "request": number,
            "method": method, "path": path, "headers": headers,
            "body": "" if body is None else json.dumps(body)}  # fmt: skip


def _message(seq: int, direction: str, number: int, message: Mapping[str, Any]) -> dict[str, Any]:
    return {"seq": seq, "t": seq / 100, "kind": "message", "direction": direction,
            "message": dict(message), "channel": f"http:{number}"}  # fmt: skip


def _elsewhere(seq: int, number: int, where: str) -> list[dict[str, Any]]:
    """A GET the mock served as no MCP request, and what it records beside it."""
    path = ELSEWHERE[where]
    beside = (
        {"kind": "document", "method": "GET"}
        if where == "document"
        else {"kind": "auth", "server": "resource", "endpoint": "resource-metadata"}
    )
    return [
        _request(seq, number, "GET", path, accept="application/json"),
        {"seq": seq + 1, "t": (seq + 1) / 100, "request": number, "path": path, **beside},
    ]


ELSEWHERE = {
    "document": "/schemas/profile.json",
    "authorization metadata": "/.well-known/oauth-protected-resource/mcp",
}


def _run(revision: str, entries: list[dict[str, Any]]) -> ScenarioRun:
    connected = Operation("connect", {"transport": "http"}, value={"protocolVersion": revision})
    return ScenarioRun(
        Scenario("fake", "fake.json", checks=()),
        revision,
        "http",
        supports=frozenset({"http"}),
        transcript={"entries": entries},
        operations=[connected],
    )


def _judge(check_id: str, run: ScenarioRun) -> Any:
    return judge(CATALOGUE[check_id], run)


def _post(seq: int, number: int, message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A POST to the MCP endpoint and the message the mock read from it."""
    accept = "application/json, text/event-stream"
    return [_request(seq, number, "POST", "/mcp", message, accept=accept),
            _message(seq + 1, "client", number, message)]  # fmt: skip


def _initialize(seq: int, number: int, revision: str) -> list[dict[str, Any]]:
    params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return _post(seq, number, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})


@pytest.mark.parametrize("where", list(ELSEWHERE))
def test_a_get_elsewhere_before_initialize_is_no_first_interaction(where: str) -> None:
    revision = "2025-11-25"
    elsewhere = _elsewhere(1, 1, where)
    verdict = _judge(
        "lifecycle.initialize-first", _run(revision, [*elsewhere, *_initialize(3, 2, revision)])
    )
    assert verdict.status is Status.PASS, verdict.reason
    # The same GET to the MCP endpoint is the client's first interaction: the violation.
    endpoint = [_request(1, 1, "GET", "/mcp", accept="text/event-stream")]
    verdict = _judge(
        "lifecycle.initialize-first", _run(revision, [*endpoint, *_initialize(3, 2, revision)])
    )
    assert verdict.status is Status.FAIL, verdict.reason
    assert "first interaction was an HTTP GET" in verdict.reason


@pytest.mark.parametrize("where", list(ELSEWHERE))
def test_a_get_elsewhere_is_no_event_stream_get(where: str) -> None:
    revision = "2025-11-25"
    handshake = _initialize(1, 1, revision)
    elsewhere = _elsewhere(3, 2, where)
    stream = [_request(5, 3, "GET", "/mcp", accept="text/event-stream")]
    verdict = _judge("http.get-stream-accept", _run(revision, [*handshake, *elsewhere, *stream]))
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 1 GETs" in verdict.reason
    # Nothing but the GET elsewhere: the trigger (a GET of the stream) never arose.
    verdict = _judge("http.get-stream-accept", _run(revision, [*handshake, *elsewhere]))
    assert verdict.status is Status.NOT_APPLICABLE, verdict.reason
    # A GET of the stream without text/event-stream in Accept: the violation.
    bare = [_request(5, 3, "GET", "/mcp", accept="application/json")]
    verdict = _judge("http.get-stream-accept", _run(revision, [*handshake, *bare]))
    assert verdict.status is Status.FAIL, verdict.reason


def test_a_token_request_is_no_post_of_json_rpc() -> None:
    revision = "2025-11-25"
    handshake = _initialize(1, 1, revision)
    answered = {"kind": "auth", "request": 2, "server": "authorization", "endpoint": "token"}
    token = [
        _request(3, 2, "POST", "/token", accept="application/json"),
        {"seq": 4, "t": 0.04, **answered, "path": "/token"},
    ]
    verdict = _judge("http.accept-header", _run(revision, [*handshake, *token]))
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 1 POSTs" in verdict.reason
    # The same Accept on a POST to the MCP endpoint: the violation.
    post = _initialize(1, 1, revision)
    post[0]["headers"] = {"accept": "application/json"}
    verdict = _judge("http.accept-header", _run(revision, post))
    assert verdict.status is Status.FAIL, verdict.reason


def _modern_call(seq: int, number: int) -> list[dict[str, Any]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return _post(seq, number, {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                               "params": {"_meta": meta}})  # fmt: skip


@pytest.mark.parametrize("where", list(ELSEWHERE))
def test_a_get_elsewhere_is_no_request_to_the_stateless_endpoint(where: str) -> None:
    revision = "2026-07-28"
    elsewhere = _elsewhere(3, 2, where)
    verdict = _judge("stateless.http-post-only", _run(revision, [*_modern_call(1, 1), *elsewhere]))
    assert verdict.status is Status.PASS, verdict.reason
    assert "all 1 requests are POSTs" in verdict.reason
    # The same GET to the MCP endpoint is judged: no sentence binds a GET without a
    # message (a NOTE, never a PASS) ...
    endpoint = [_request(3, 2, "GET", "/mcp", accept="application/json")]
    verdict = _judge("stateless.http-post-only", _run(revision, [*_modern_call(1, 1), *endpoint]))
    assert verdict.status is Status.NOTE, verdict.reason
    # ... and a JSON-RPC message sent by another method than POST is the violation.
    call = _modern_call(1, 1)
    call[0]["method"] = "PUT"
    verdict = _judge("stateless.http-post-only", _run(revision, call))
    assert verdict.status is Status.FAIL, verdict.reason
    assert "the client sent a PUT" in verdict.reason
