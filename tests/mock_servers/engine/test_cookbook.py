"""Tests for docs/scripts.md: every JSON example in it is a valid script or step.

A block marked `json script` is parsed as a whole script; one marked `json step` as a step
of a small script around it. A plain `json` block is refused (it would go unchecked). Two
cookbook scripts also run through `mcp-testbench serve` for real.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from _machine import within
from _serving import serve

from mock_servers import parse_script

DOC = Path(__file__).resolve().parents[3] / "docs" / "scripts.md"
BLOCK = re.compile(r"^```(json[^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
WAIT = within(10.0)
ACCEPT = {"accept": "application/json, text/event-stream"}


def blocks(kind: str) -> list[str]:
    return [body for info, body in BLOCK.findall(DOC.read_text("utf-8")) if info == f"json {kind}"]


def scripts() -> dict[str, dict[str, Any]]:
    out = {}
    for body in blocks("script"):
        data = json.loads(body)
        out[data["name"]] = data
    return out


def test_every_json_block_is_marked_as_a_script_or_a_step() -> None:
    infos = [info for info, _ in BLOCK.findall(DOC.read_text("utf-8"))]
    assert set(infos) <= {"json script", "json step"}, infos
    assert len(blocks("script")) >= 7


@pytest.mark.parametrize("body", blocks("script"))
def test_every_script_example_is_valid(body: str) -> None:
    script = parse_script(json.loads(body), source="docs/scripts.md")
    assert script.steps


@pytest.mark.parametrize("body", blocks("step"))
def test_every_step_example_is_valid(body: str) -> None:
    data = {
        "format_version": 1,
        "name": "doc-step",
        "revisions": ["2025-06-18", "2025-11-25", "2026-07-28"],
        "server": {"capabilities": {"tools": {}}},
        "steps": [json.loads(body)],
    }
    assert len(parse_script(data, source="docs/scripts.md").steps) == 1


def test_the_cookbook_covers_what_it_promises() -> None:
    names = set(scripts())
    assert {
        "cookbook-faults",
        "cookbook-pagination",
        "cookbook-session-expiry",
        "cookbook-iserror",
        "cookbook-sse",
        "cookbook-server-requests",
    } <= names


def _write(tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(scripts()[name]), encoding="utf-8")
    return str(path)


def _initialize(client: httpx.Client, url: str) -> dict[str, str]:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    response = client.post(url, json=message, headers=ACCEPT)
    headers = {
        **ACCEPT,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": response.json()["result"]["protocolVersion"],
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(url, json=initialized, headers=headers).status_code == 202
    return headers


def _list(client: httpx.Client, url: str, headers: dict[str, str], **params: Any) -> Any:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}
    return client.post(url, json=message, headers=headers)


def test_the_pagination_example_serves_two_pages_to_each_session(tmp_path: Path) -> None:
    with (
        serve(_write(tmp_path, "cookbook-pagination"), "--quiet") as (url, _, _),
        httpx.Client(timeout=WAIT) as client,
    ):
        for _ in range(2):  # a fresh run per session
            headers = _initialize(client, url)
            first = _list(client, url, headers).json()["result"]
            second = _list(client, url, headers, cursor=first["nextCursor"]).json()["result"]
            assert [t["name"] for t in first["tools"] + second["tools"]] == ["first", "second"]
            assert "nextCursor" not in second


def test_the_session_expiry_example_goes_on_after_a_new_initialize(tmp_path: Path) -> None:
    with (
        serve(_write(tmp_path, "cookbook-session-expiry")) as (url, _, errors),
        httpx.Client(timeout=WAIT) as client,
    ):
        headers = _initialize(client, url)
        assert _list(client, url, headers).json()["result"]["tools"] == []
        assert _list(client, url, headers).status_code == 404
        assert _list(client, url, headers).status_code == 404  # the session stays gone
        headers = _initialize(client, url)
        back = _list(client, url, headers).json()["result"]["tools"]
    assert [t["name"] for t in back] == ["back"]
    assert any(
        "a new initialize after its session expired: the script goes on" in e for e in errors
    )
