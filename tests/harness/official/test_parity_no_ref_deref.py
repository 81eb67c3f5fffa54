"""The runner's rule for `json-schema-ref-no-deref` (`Hs` in @modelcontextprotocol/conformance
0.2.0-alpha.12), on made-up transcripts: its one check, `sep-2106-no-network-ref-deref`,
passes a client that listed the tools and never asked for the canary schema, and fails
one that asked for it (any method) or that never got the tools listed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.official import official_verdicts, scenario_verdict, served_scenario

Entry = dict[str, Any]
MODERN = "2026-07-28"
SCENARIO = "json-schema-ref-no-deref"
CHECK = "sep-2106-no-network-ref-deref"
CANARY = "/canary/profile-schema.json"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
# What a 2026-07-28 client sends with each POST (the runner's SDK transport needs the first two).
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
}


def _request(
    entries: list[Entry], method: str, path: str, headers: dict[str, str], body: str
) -> None:
    entries.append(
        {
            "seq": len(entries),
            "t": 0.0,
            "kind": "http_request",
            "request": len(entries) + 1,
            "method": method,
            "path": path,
            "headers": headers,
            "body": body,
        }
    )


def _list_tools(
    entries: list[Entry], *, path: str = "/mcp", body: Any = None, **headers: str
) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    sent = {**HEADERS, **headers}
    _request(
        entries, "POST", path, {k: v for k, v in sent.items() if v}, json.dumps(body or message)
    )


def _fetch(entries: list[Entry], method: str = "GET", path: str = CANARY, **headers: str) -> None:
    _request(entries, method, path, {"user-agent": "resolver", **headers}, "")


def _verdict(entries: list[Entry]) -> tuple[str, str]:
    (verdict,) = official_verdicts(SCENARIO, MODERN, entries)
    assert verdict.id == CHECK
    return verdict.status, verdict.reason


def test_a_client_that_lists_and_never_fetches_passes() -> None:
    entries: list[Entry] = []
    _list_tools(entries)
    _fetch(entries, path="/elsewhere.json")  # another path is no canary
    assert _verdict(entries)[0] == "SUCCESS"
    scenario = served_scenario(SCENARIO)
    assert scenario is not None
    result = scenario_verdict(scenario, MODERN, entries, timed_out=False, exit_code=0)
    assert result.passes
    assert result.line == f"✓ {SCENARIO}: 1 passed, 0 failed"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", CANARY),
        ("POST", CANARY),  # app.all: any method counts
        ("GET", "/Canary/Profile-Schema.json/"),  # express ignores case and a trailing slash
    ],
)
def test_any_request_for_the_canary_fails(method: str, path: str) -> None:
    entries: list[Entry] = []
    _list_tools(entries)
    _fetch(entries, method, path)
    status, reason = _verdict(entries)
    assert status == "FAILURE"
    assert "fetched 1 time(s)" in reason


def test_a_fetch_before_the_listing_counts_too() -> None:
    entries: list[Entry] = []
    _fetch(entries)
    _list_tools(entries)
    _fetch(entries)
    status, reason = _verdict(entries)
    assert (status, "fetched 2 time(s)" in reason) == ("FAILURE", True)


def test_a_canary_request_express_json_refuses_is_not_counted() -> None:
    entries: list[Entry] = []
    _list_tools(entries)
    _request(entries, "POST", CANARY, {"content-type": "application/json"}, "{not json")
    _request(entries, "POST", CANARY, {"content-type": "application/json"}, '"a string"')
    assert _verdict(entries)[0] == "SUCCESS"


def test_no_listing_fails_whatever_else_happened() -> None:
    entries: list[Entry] = []
    assert _verdict(entries) == (
        "FAILURE",
        "Client did not call tools/list against a server advertising a tool with a network $ref",
    )
    _fetch(entries)
    assert _verdict(entries)[0] == "FAILURE"


@pytest.mark.parametrize(
    ("case", "changes"),
    [
        ("no SSE in Accept", {"accept": "application/json"}),
        ("not JSON", {"content-type": "text/plain"}),
        ("a version its SDK does not know", {"mcp-protocol-version": "2099-01-01"}),
        ("another route", {"path": "/"}),
        ("server/discover, answered before the SDK", {"method": "server/discover"}),
        ("a notification", {"id": None}),
        ("a numeric cursor", {"cursor": 2}),
    ],
)
def test_a_listing_its_server_refuses_or_never_sees_lists_nothing(
    case: str, changes: dict[str, Any]
) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    if "method" in changes:
        message["method"] = changes["method"]
    if "id" in changes:
        del message["id"]
    if "cursor" in changes:
        message["params"]["cursor"] = changes["cursor"]
    headers = {
        k: changes[k] for k in ("accept", "content-type", "mcp-protocol-version") if k in changes
    }
    entries: list[Entry] = []
    _list_tools(entries, path=changes.get("path", "/mcp"), body=message, **headers)
    assert _verdict(entries)[0] == "FAILURE", case


@pytest.mark.parametrize(
    "changes",
    [
        {"mcp-protocol-version": ""},  # no header: the SDK takes it
        {"mcp-protocol-version": "2025-06-18"},
        {"content-type": "application/json; charset=utf-8"},
    ],
)
def test_a_listing_its_sdk_takes(changes: dict[str, str]) -> None:
    entries: list[Entry] = []
    _list_tools(entries, **changes)
    assert _verdict(entries)[0] == "SUCCESS"


def test_a_batch_lists_when_every_member_parses() -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    entries: list[Entry] = []
    _list_tools(entries, body=[listing, {"jsonrpc": "1.0", "method": "x"}])
    assert _verdict(entries)[0] == "FAILURE"
    _list_tools(entries, body=[listing, {"jsonrpc": "2.0", "method": "notifications/x"}])
    assert _verdict(entries)[0] == "SUCCESS"
