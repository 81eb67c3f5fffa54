"""A long day of `serve --http`: sessions are dropped when ended or idle, capped with 503, and
found in constant time (issue 33, item 1). In process, through StreamingASGITransport; the
clock is the dispatcher's own (a session's `last_used`), set back by the test instead of
waited out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from _machine import within

from mock_servers import Transcript, fixtures_root, load_script
from mock_servers.http import Dispatcher
from mock_servers.http._asgi_transport import StreamingASGITransport

WAIT = within(10.0)
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
FIXTURE = fixtures_root() / "tools" / "list-and-call.json"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def initialize(request_id: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t"},
        },
    }


@asynccontextmanager
async def client_of(app: Dispatcher) -> AsyncIterator[httpx.AsyncClient]:
    transport = StreamingASGITransport(app)
    with anyio.fail_after(WAIT):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            yield c


async def open_session(client: httpx.AsyncClient) -> dict[str, str]:
    opened = await client.post("/mcp", json=initialize(), headers=ACCEPT)
    assert opened.status_code == 200, opened.text
    headers = {
        **ACCEPT,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    done = await client.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202
    return headers


async def ping(client: httpx.AsyncClient, headers: dict[str, str]) -> httpx.Response:
    return await client.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=headers
    )


@pytest.mark.anyio
async def test_a_deleted_session_is_dropped_and_its_id_is_unknown_after() -> None:
    app = Dispatcher(load_script(FIXTURE))
    async with client_of(app) as client:
        kept = await open_session(client)
        ended = await open_session(client)
        assert len(app.sessions) == 2
        assert (await client.delete("/mcp", headers=ended)).status_code == 200
        assert len(app.sessions) == 1
        assert (await ping(client, ended)).status_code == 404
        assert (await ping(client, kept)).status_code == 200


@pytest.mark.anyio
async def test_sessions_idle_past_the_bound_make_room_for_new_ones() -> None:
    said: list[str] = []
    app = Dispatcher(load_script(FIXTURE), idle_timeout=60.0, announce=said.append)
    async with client_of(app) as client:
        old = await open_session(client)
        recent = await open_session(client)
        app.sessions[0].last_used -= 61  # an hour of the day, without the wait
        await open_session(client)
        assert [s.tag for s in app.sessions] == ["session 2", "session 3"]
        assert "session 1: idle for 61 s: dropped" in said
        assert (await ping(client, old)).status_code == 404
        assert (await ping(client, recent)).status_code == 200


@pytest.mark.anyio
async def test_past_the_cap_a_new_session_gets_503_naming_both_settings() -> None:
    record = Transcript(script="dev", revision="", transport="http")
    app = Dispatcher(load_script(FIXTURE), max_sessions=2, idle_timeout=60.0, transcript=record)
    async with client_of(app) as client:
        first = await open_session(client)
        await open_session(client)
        refused = await client.post("/mcp", json=initialize(), headers=ACCEPT)
        assert refused.status_code == 503
        message = refused.json()["error"]["message"]
        assert "2 sessions are open" in message
        assert "--max-sessions 2" in message
        assert "--session-idle" in message
        assert refused.headers["retry-after"] == "60"
        # Recorded as any refusal is: the client's initialize, the refusal, the answer.
        refusal = [e for e in record.of_kind("refusal") if e.get("session") == "refused"]
        assert [(e["status"], e["rule"]) for e in refusal] == [(503, "too-many-sessions")]
        sent = [e for e in record.of_kind("message") if e.get("session") == "refused"]
        assert [e["direction"] for e in sent] == ["client", "server"]
        assert sent[0]["message"]["method"] == "initialize"
        assert sent[0]["refused"]["status"] == 503
        # The live sessions still work, and an ended one makes room at once.
        assert (await ping(client, first)).status_code == 200
        assert (await client.delete("/mcp", headers=first)).status_code == 200
        assert (await client.post("/mcp", json=initialize(), headers=ACCEPT)).status_code == 200


@pytest.mark.anyio
async def test_a_session_with_an_open_stream_is_never_dropped_as_idle() -> None:
    app = Dispatcher(load_script(FIXTURE), max_sessions=1, idle_timeout=1.0)
    async with client_of(app) as client:
        headers = await open_session(client)
        stream_headers = {**headers, "accept": "text/event-stream"}
        async with client.stream("GET", "/mcp", headers=stream_headers) as stream:
            assert stream.status_code == 200
            app.sessions[0].last_used -= 10
            refused = await client.post("/mcp", json=initialize(), headers=ACCEPT)
            assert refused.status_code == 503  # in use: not idle, whatever its clock says
            assert (await ping(client, headers)).status_code == 200


@pytest.mark.anyio
async def test_finding_a_session_does_not_scan_the_others() -> None:
    # Constant-time lookup: the index, not a scan of every session's mock.
    app = Dispatcher(load_script(FIXTURE))
    async with client_of(app) as client:
        first = await open_session(client)
        for _ in range(30):
            await open_session(client)

        class Untouchable(dict[str, str]):
            def __contains__(self, key: object) -> bool:
                raise AssertionError("a lookup scanned another session")

        for session in app.sessions[1:]:
            session.mock.sessions = Untouchable(session.mock.sessions)
        assert (await ping(client, first)).status_code == 200


@pytest.mark.anyio
async def test_a_2026_run_is_dropped_when_the_next_discovery_begins() -> None:
    app = Dispatcher(load_script(FIXTURE))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
    async with client_of(app) as client:
        for _ in range(5):
            found = await client.post("/mcp", json=discover, headers=headers)
            assert found.status_code == 200, found.text
    assert [s.tag for s in app.sessions] == ["session 5"]


def test_serve_help_states_the_defaults_the_server_uses(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main
    from mock_servers.http import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"503 (default {DEFAULT_MAX_SESSIONS})" in shown
    assert f"to make room (default {DEFAULT_SESSION_IDLE:g})" in shown
