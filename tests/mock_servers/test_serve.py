"""Tests for `mcp-testbench serve` as a developer uses it (mock_servers.http._dispatch, _stdio_dev).

With no `--revision` the server answers the revision each client speaks, each new HTTP
session (or stdio process) starts the script afresh, and stderr gets one line per
message. The dispatcher runs in-process through StreamingASGITransport; the command
itself runs as a subprocess (uvicorn on 127.0.0.1, a port of its choosing), stopped by
its pid. Every wait is bounded.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _machine import within
from _serving import serve

from harness.cli import main
from mock_servers import fixtures_root, parse_script
from mock_servers.engine._script import Script
from mock_servers.http import Dispatcher
from mock_servers.http._asgi_transport import StreamingASGITransport

pytestmark = pytest.mark.anyio

WAIT = within(10.0)
ACCEPT = {"accept": "application/json, text/event-stream"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ADD = {"name": "add", "inputSchema": {"type": "object"}}
CALL = {
    "expect": {"method": "tools/call", "params": {"name": "add"}},
    "reply": {"result": {"content": [{"type": "text", "text": "3"}]}},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def script(revisions: list[str], steps: list[dict[str, Any]] | None = None) -> Script:
    return parse_script(
        {
            "format_version": 1,
            "name": "dev",
            "revisions": revisions,
            "server": {"capabilities": {"tools": {}}},
            "steps": steps if steps is not None else [CALL],
        }
    )


def rpc(method: str, request_id: int = 1, params: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def initialize(version: str) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t"}}
    return rpc("initialize", 0, params)


def call_add(request_id: int = 2, meta: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "add", "arguments": {}}
    if meta:
        params["_meta"] = META
    return rpc("tools/call", request_id, params)


@asynccontextmanager
async def in_process(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url="http://127.0.0.1", timeout=WAIT
    ) as client:
        yield client


async def handshake(
    client: httpx.AsyncClient, version: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """initialize + initialized; the initialize result and the session's headers."""
    response = await client.post("/mcp", json=initialize(version), headers=ACCEPT)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    headers = {
        **ACCEPT,
        "mcp-protocol-version": result["protocolVersion"],
        "mcp-session-id": response.headers["mcp-session-id"],
    }
    done = await client.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202
    return result, headers


def meta_headers(method: str, name: str | None = None) -> dict[str, str]:
    out = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name is not None:
        out["mcp-name"] = name
    return out


# -- the revision each client speaks -------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "served"),
    [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2025-03-26", "2025-11-25")],
)
async def test_an_initialize_era_client_gets_the_revision_it_asks_for_if_allowed(
    asked: str, served: str
) -> None:
    said: list[str] = []
    app = Dispatcher(script(["2025-06-18", "2025-11-25"]), announce=said.append)
    async with in_process(app) as client:
        result, headers = await handshake(client, asked)
        assert result["protocolVersion"] == served
        called = await client.post("/mcp", json=call_add(), headers=headers)
        assert called.json()["result"]["content"][0]["text"] == "3"
    assert said[0].startswith(f"session 1: {served} (the client asked for ")


async def test_a_2026_client_gets_2026_and_its_requests_reach_the_same_mock() -> None:
    said: list[str] = []
    app = Dispatcher(script(["2025-11-25", "2026-07-28"]), announce=said.append)
    async with in_process(app) as client:
        discover = rpc("server/discover", 1, {"_meta": META})
        found = await client.post("/mcp", json=discover, headers=meta_headers("server/discover"))
        assert found.status_code == 200, found.text
        assert "2026-07-28" in found.json()["result"]["supportedVersions"]
        called = await client.post(
            "/mcp", json=call_add(meta=True), headers=meta_headers("tools/call", "add")
        )
        assert called.status_code == 200, called.text
        assert called.json()["result"]["resultType"] == "complete"
    assert said == ["session 1: 2026-07-28 (the client speaks 2026-07-28 (server/discover))"]
    assert len(app.sessions) == 1


async def test_a_discover_probe_then_initialize_works_when_the_script_has_no_2026() -> None:
    # mcp 2.3 with mode="auto": server/discover first, initialize after its -32601.
    said: list[str] = []
    app = Dispatcher(script(["2025-06-18", "2025-11-25"]), announce=said.append)
    async with in_process(app) as client:
        discover = rpc("server/discover", 1, {"_meta": META})
        probe = await client.post("/mcp", json=discover, headers=meta_headers("server/discover"))
        assert probe.json()["error"]["code"] == -32601
        result, headers = await handshake(client, "2025-06-18")
        assert result["protocolVersion"] == "2025-06-18"
        called = await client.post("/mcp", json=call_add(), headers=headers)
        assert "result" in called.json()
    assert said[0].startswith("probe 1: 2025-11-25 (a server/discover probe")
    assert said[1] == "session 2: 2025-06-18 (the client asked for 2025-06-18)"
    assert [s.tag for s in app.sessions] == ["session 2"]


# -- each session starts the script afresh ----------------------------------------------------


async def test_every_new_session_starts_the_script_afresh() -> None:
    app = Dispatcher(script(["2025-11-25"]))
    async with in_process(app) as client:
        for _ in range(2):
            _, headers = await handshake(client, "2025-11-25")
            called = await client.post("/mcp", json=call_add(), headers=headers)
            assert called.json()["result"]["content"][0]["text"] == "3", called.text
    assert len(app.sessions) == 2


async def test_a_2026_client_starts_afresh_at_each_discovery() -> None:
    app = Dispatcher(script(["2026-07-28"]))
    async with in_process(app) as client:
        for _ in range(2):
            discover = rpc("server/discover", 1, {"_meta": META})
            await client.post("/mcp", json=discover, headers=meta_headers("server/discover"))
            called = await client.post(
                "/mcp", json=call_add(meta=True), headers=meta_headers("tools/call", "add")
            )
            assert called.json()["result"]["content"][0]["text"] == "3", called.text


async def test_shared_script_keeps_one_run_across_sessions() -> None:
    app = Dispatcher(script(["2025-11-25"]), shared=True)
    async with in_process(app) as client:
        _, headers = await handshake(client, "2025-11-25")
        first = await client.post("/mcp", json=call_add(), headers=headers)
        assert "result" in first.json()
        _, headers = await handshake(client, "2025-11-25")
        second = await client.post("/mcp", json=call_add(), headers=headers)
        # The step was consumed by the first session: the second call matches nothing.
        assert "error" in second.json(), second.text
    assert len(app.sessions) == 1
    assert len(list(app.sessions[0].mock.transcript.of_kind("unmatched"))) == 1


async def test_a_reinitialize_after_expiry_goes_on_with_the_script() -> None:
    steps = [
        {"expect": {"method": "tools/list"}, "reply": {"fault": {"kind": "expire_session"}}},
        {"expect": {"method": "tools/list"}, "reply": {"result": {"tools": [ADD]}}},
    ]
    said: list[str] = []
    app = Dispatcher(script(["2025-11-25"], steps), announce=said.append)
    async with in_process(app) as client:
        _, headers = await handshake(client, "2025-11-25")
        expired = await client.post("/mcp", json=rpc("tools/list"), headers=headers)
        assert expired.status_code == 404
        _, headers = await handshake(client, "2025-11-25")
        listed = await client.post("/mcp", json=rpc("tools/list", 3), headers=headers)
        assert listed.json()["result"]["tools"] == [ADD], listed.text
    assert len(app.sessions) == 1
    assert "the script goes on" in said[-1]


async def test_message_lines_name_direction_method_id_and_status() -> None:
    lines: list[str] = []
    app = Dispatcher(script(["2025-11-25"]), log=lines.append)
    async with in_process(app) as client:
        _, headers = await handshake(client, "2025-11-25")
        await client.post("/mcp", json=call_add(), headers=headers)
        await client.post("/mcp", json=rpc("tools/call", 3, {"name": "nope"}), headers=headers)
        await client.post("/mcp", json=call_add(4), headers={**ACCEPT, "mcp-session-id": "x"})
    assert lines[:3] == [
        "[session 1] -> initialize id=0",
        "[session 1] <- result id=0",
        "[session 1] -> notifications/initialized",
    ]
    assert "[session 1] -> tools/call id=2" in lines
    assert any(line.startswith("[session 1] ?? no scripted step matches") for line in lines)
    assert any(
        line.startswith("[session 1] <- error -3260") and " id=3: " in line for line in lines
    )
    assert any("!! HTTP 404 session-unknown" in line for line in lines)


# -- the command -------------------------------------------------------------------------------


def session_run(url: str, version: str) -> str:
    """One client run over real HTTP: initialize, list, call add; the served version."""
    with httpx.Client(timeout=WAIT) as client:
        response = client.post(url, json=initialize(version), headers=ACCEPT)
        served = str(response.json()["result"]["protocolVersion"])
        headers = {
            **ACCEPT,
            "mcp-session-id": response.headers["mcp-session-id"],
            "mcp-protocol-version": served,
        }
        client.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        listed = client.post(url, json=rpc("tools/list", 1), headers=headers)
        assert "add" in {t["name"] for t in listed.json()["result"]["tools"]}
        called = client.post(
            url,
            json=rpc("tools/call", 2, {"name": "add", "arguments": {"a": 1, "b": 2}}),
            headers=headers,
        )
        assert called.json()["result"]["isError"] is False, called.text
        return served


def test_serve_answers_each_client_at_its_revision_twice_in_a_row() -> None:
    fixture = str(fixtures_root() / "tools/list-and-call.json")
    with serve(fixture) as (url, _, errors):
        assert session_run(url, "2025-06-18") == "2025-06-18"
        assert session_run(url, "2025-06-18") == "2025-06-18"
        assert session_run(url, "2025-11-25") == "2025-11-25"
    said = [line for line in errors if ": session " in line]
    assert said[:3] == [
        "mcp-testbench: session 1: 2025-06-18 (the client asked for 2025-06-18)",
        "mcp-testbench: session 2: 2025-06-18 (the client asked for 2025-06-18)",
        "mcp-testbench: session 3: 2025-11-25 (the client asked for 2025-11-25)",
    ]
    assert "mcp-testbench: [session 2] -> tools/call id=2" in errors


def test_serve_quiet_prints_no_message_lines() -> None:
    fixture = str(fixtures_root() / "tools/list-and-call.json")
    with serve(fixture, "--quiet") as (url, _, errors):
        session_run(url, "2025-11-25")
    assert not [line for line in errors if "] -> " in line or "] <- " in line]
    assert any("session 1: 2025-11-25" in line for line in errors)


def test_serve_stdio_picks_the_revision_from_the_first_line(tmp_path: Path) -> None:
    fixture = str(fixtures_root() / "stdio/list-and-call.json")
    lines = [
        initialize("2025-06-18"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        rpc("tools/list", 1),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "serve", fixture, "--stdio"],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18", done.stderr
    assert "tools" in answers[1]["result"]
    assert "mcp-testbench: stdio: 2025-06-18 (the client asked for 2025-06-18)" in done.stderr
    assert "mcp-testbench: [stdio] -> tools/list id=1" in done.stderr


def test_serve_stdio_answers_a_discover_probe_then_the_initialize(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(script(["2025-11-25"]).raw))
    record = tmp_path / "t.jsonl"
    lines = [rpc("server/discover", 1, {"_meta": META}), initialize("2025-11-25")]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "serve",
            str(path),
            "--stdio",
            "--quiet",
            "--transcript",
            str(record),
        ],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0] == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Method not found: server/discover"},
    }
    assert answers[1]["result"]["protocolVersion"] == "2025-11-25", done.stderr
    methods = [
        json.loads(line).get("message", {}).get("method")
        for line in record.read_text().splitlines()[1:]
    ]
    assert methods[:2] == ["server/discover", None]
    assert "initialize" in methods


# -- clear errors ------------------------------------------------------------------------------


def test_a_taken_port_is_named_with_the_way_out(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = str(fixtures_root() / "tools/list-and-call.json")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code = main(["serve", fixture, "--http", f"127.0.0.1:{port}"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == (
        f"mcp-testbench serve: port {port} on 127.0.0.1 is already in use (another server "
        "listens there): pick another port, or 127.0.0.1:0 for a free one"
    )
    assert "Errno" not in err


def test_a_remote_host_refusal_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = str(fixtures_root() / "tools/list-and-call.json")
    assert main(["serve", fixture, "--http", "0.0.0.0:0"]) == 2
    err = capsys.readouterr().err
    assert "--allow-remote" in err
    assert "allow_remote=True (" not in err.split("--allow-remote")[0]
    assert len(err.strip().splitlines()) == 1


def test_http_help_says_2024_needs_sse_legacy(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "2024-11-05 uses HTTP+SSE instead: add --sse-legacy" in text


def test_a_2024_only_script_over_streamable_http_points_to_sse_legacy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixture = str(fixtures_root() / "tools/content-2024.json")
    assert main(["serve", fixture, "--http", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert "--sse-legacy" in err
    assert len(err.strip().splitlines()) == 1


def test_http_flags_with_stdio_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = str(fixtures_root() / "stdio/list-and-call.json")
    with pytest.raises(SystemExit) as exit_:
        main(["serve", fixture, "--stdio", "--shared-script"])
    assert exit_.value.code == 2
    assert "--shared-script go with --http, not --stdio" in capsys.readouterr().err


# -- a real client, twice in a row ------------------------------------------------------------


async def _sdk_run(url: str, mode: str) -> str:
    from mcp import Client

    with anyio.fail_after(WAIT):
        async with Client(url, mode=mode, read_timeout_seconds=WAIT) as client:
            tools = await client.list_tools()
            assert "add" in [t.name for t in tools.tools]
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert not result.is_error
            assert result.content[0].text == "3"
            return str(client.protocol_version)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("revisions", "mode", "expected"),
    [
        (None, "auto", "2026-07-28"),
        (None, "legacy", "2025-11-25"),
        (["2025-06-18", "2025-11-25"], "auto", "2025-11-25"),
    ],
)
async def test_the_python_sdk_client_runs_twice_against_one_serve(
    tmp_path: Path, revisions: list[str] | None, mode: str, expected: str
) -> None:
    fixture = fixtures_root() / "tools/list-and-call.json"
    if revisions is not None:
        data = json.loads(fixture.read_text())
        data["revisions"] = revisions
        fixture = tmp_path / "list-and-call.json"
        fixture.write_text(json.dumps(data))
    with serve(str(fixture), "--quiet") as (url, _, errors):
        first = await _sdk_run(url, mode)
        second = await _sdk_run(url, mode)
    assert (first, second) == (expected, expected), errors


async def test_a_2026_client_that_does_not_discover_again_gets_a_fresh_run() -> None:
    said: list[str] = []
    app = Dispatcher(script(["2026-07-28"]), announce=said.append)
    async with in_process(app) as client:
        for _ in range(2):
            called = await client.post(
                "/mcp", json=call_add(meta=True), headers=meta_headers("tools/call", "add")
            )
            assert called.json()["result"]["content"][0]["text"] == "3", called.text
    assert said[1] == "session 1: no step left for tools/call: a fresh run begins"
    assert said[2].startswith("session 2: 2026-07-28")
    # The first run is over: dropped as the second begins (a day of serve stays small).
    assert [s.tag for s in app.sessions] == ["session 2"]


async def test_a_deleted_session_reports_the_steps_it_never_reached() -> None:
    lines: list[str] = []
    steps = [CALL, {"label": "never", "expect": {"method": "tools/list"}}]
    app = Dispatcher(script(["2025-11-25"], steps), log=lines.append)
    async with in_process(app) as client:
        _, headers = await handshake(client, "2025-11-25")
        assert (await client.delete("/mcp", headers=headers)).status_code == 200
    assert (
        lines[-1]
        == "[session 1] .. steps never reached: step 0 (expect tools/call), step 1 (never)"
    )


def test_sse_legacy_for_a_script_without_2024_says_to_drop_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixture = str(fixtures_root() / "tools/content.json")
    assert main(["serve", fixture, "--http", "127.0.0.1:0", "--sse-legacy"]) == 2
    err = capsys.readouterr().err
    assert "fix: drop --sse-legacy" in err


@pytest.mark.e2e
async def test_the_python_sdk_sse_client_runs_twice_against_one_sse_legacy_serve() -> None:
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    fixture = str(fixtures_root() / "tools/list-and-call.json")
    with serve(fixture, "--sse-legacy") as (url, _, errors):
        for _ in range(2):
            with anyio.fail_after(WAIT):
                async with (
                    sse_client(url, timeout=WAIT, sse_read_timeout=WAIT) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    init = await session.initialize()
                    result = await session.call_tool("add", {"a": 1, "b": 2})
            assert init.protocol_version == "2024-11-05"
            assert result.content[0].text == "3"  # type: ignore[union-attr]
    said = [line for line in errors if ": session " in line]
    assert [line.split(" (")[0] for line in said] == [
        "mcp-testbench: session 1: 2024-11-05",
        "mcp-testbench: session 2: 2024-11-05",
    ]


def test_serve_stdio_stopped_before_the_client_speaks_exits_0() -> None:
    fixture = str(fixtures_root() / "stdio/list-and-call.json")
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve", fixture, "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    waiting: list[bytes] = []
    reader = threading.Thread(
        target=lambda: waiting.append(proc.stderr.readline() if proc.stderr else b""),
        daemon=True,
    )
    try:
        reader.start()
        reader.join(WAIT)  # the line comes once the signal handler is in place
        assert waiting == [
            b"mcp-testbench: stdio: waiting for the client's first message to pick the revision\n"
        ]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
    assert proc.returncode == 0, err
