"""Hostile input at every entry point: deep nesting, junk, lost sessions (issue 33's probes).

Each parse path (an HTTP body, with and without `--revision`; a stdio line, in the server and
in `serve --stdio`; a script file) answers what it cannot read with the JSON-RPC error the
spec gives (-32700 over stdio; 400 with -32700 over HTTP), never a 500, a traceback or a dead
process; and the dev server picks its revision from what the client really speaks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _machine import within
from _serving import serve
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.protocol import MAX_DEPTH, PARSE_ERROR, ProtocolError, decode_json
from mock_servers import fixtures_root, load_script
from mock_servers.http import Dispatcher, create_app
from mock_servers.http._asgi_transport import StreamingASGITransport

WAIT = within(30.0)
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
FIXTURE = fixtures_root() / "tools" / "list-and-call.json"


def nested(depth: int, inner: str = "") -> str:
    return "[" * depth + inner + "]" * depth


def request_nested(depth: int) -> str:
    # An initialize whose params carry a value nested `depth` levels (the first request of
    # a client, with no session: what the probe sent).
    return (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
        '"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"},"x":'
        + nested(depth)
        + "}}"
    )


# -- the codec ----------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900, 100_000])
def test_json_nested_past_the_limit_is_a_parse_error(depth: int) -> None:
    with pytest.raises(ProtocolError) as raised:
        decode_json(nested(depth))
    assert raised.value.code == PARSE_ERROR
    assert f"nested more than {MAX_DEPTH} levels" in str(raised.value)


def test_json_nested_to_the_limit_and_brackets_in_strings_are_fine() -> None:
    assert decode_json(nested(MAX_DEPTH - 1, "1")) is not None
    # Brackets inside a string are text, however many.
    assert decode_json(json.dumps({"text": "[" * 10_000})) == {"text": "[" * 10_000}
    assert decode_json(json.dumps("{" * 10_000)) == "{" * 10_000


# -- HTTP: the mock, and `serve` with and without --revision -----------------------------------


async def _post(app: Any, body: str, headers: dict[str, str] | None = None) -> httpx.Response:
    transport = StreamingASGITransport(app)
    with anyio.fail_after(WAIT):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return await c.post("/mcp", content=body, headers={**HEADERS, **(headers or {})})


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 100_000])
@pytest.mark.parametrize("server", ["mock", "serve", "serve --revision"])
def test_a_deeply_nested_first_request_gets_400_and_the_server_lives(
    server: str, depth: int
) -> None:
    script = load_script(FIXTURE)
    app: Any = {
        "mock": lambda: create_app(script, revision="2025-11-25"),
        "serve": lambda: Dispatcher(script),
        "serve --revision": lambda: Dispatcher(script, revision="2025-11-25"),
    }[server]()

    async def go() -> tuple[httpx.Response, httpx.Response]:
        deep = await _post(app, request_nested(depth))
        after = await _post(app, request_nested(1))
        return deep, after

    deep, after = anyio.run(go)
    assert deep.status_code == 400, deep.text
    assert deep.json()["error"]["code"] == PARSE_ERROR
    assert "nested more than" in deep.json()["error"]["data"]["reason"]
    assert after.status_code == 200, after.text  # and it still serves


# -- stdio: the server, and `serve --stdio` -----------------------------------------------------


def _stdio(argv: list[str], lines: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        [
            "mock_servers.stdio",
            str(fixtures_root() / "stdio/list-and-call.json"),
            "--revision",
            "2025-11-25",
        ],
        ["harness.cli", "serve", str(fixtures_root() / "stdio/list-and-call.json"), "--stdio"],
    ],
    ids=["server", "serve --stdio"],
)
def test_a_deeply_nested_stdio_line_gets_a_parse_error_and_the_process_lives(
    argv: list[str],
) -> None:
    ping = json.dumps({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    done = _stdio(argv, [request_nested(100_000), request_nested(1), ping])
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["error"]["code"] == PARSE_ERROR
    assert answers[0]["id"] is None
    assert answers[1]["result"]["protocolVersion"] == "2025-11-25"
    assert answers[-1] == {"jsonrpc": "2.0", "id": "after", "result": {}}


@pytest.mark.parametrize("junk", ["", "   ", "garbage", "{", nested(100_000)])
def test_serve_stdio_picks_the_revision_from_the_first_line_that_parses(junk: str) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t"},
        },
    }
    fixture = str(fixtures_root() / "stdio/list-and-call.json")
    done = _stdio(["harness.cli", "serve", fixture, "--stdio"], [junk, json.dumps(init)])
    assert "mcp-testbench: stdio: 2025-06-18 (the client asked for 2025-06-18)" in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    # The junk is still answered, in its place (a blank line is not answered at all).
    assert answers[-1]["result"]["protocolVersion"] == "2025-06-18", done.stdout
    assert len(answers) == (1 if not junk.strip() else 2)


# -- scripts --------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [500, 100_000])
def test_a_deeply_nested_script_is_one_clear_error(
    tmp_path: Path, depth: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"format_version": 1, "steps": ' + nested(depth) + "}", encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert f"deep.json: /: nested more than {MAX_DEPTH + 16} levels deep" in out.out + out.err


# -- `serve` with no --revision: a lost session gets the handshake era's answers -------------------


def test_serve_answers_a_request_that_lost_its_session_as_the_handshake_era() -> None:
    """Issue 33 item 6: with no --revision, a request with no session id, or an unknown one,
    that is not a 2026-07-28 request got the 2026 era's "Mcp-Method header is missing"."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t"},
        },
    }
    tools_list = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    version = {"mcp-protocol-version": "2025-11-25"}

    async def go() -> list[httpx.Response]:
        app = Dispatcher(load_script(FIXTURE))
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            opened = await c.post("/mcp", json=initialize, headers=HEADERS)
            assert opened.headers.get("mcp-session-id"), opened.text
            return [
                await c.post("/mcp", content=tools_list, headers={**HEADERS, **version}),
                await c.post("/mcp", content=tools_list, headers=HEADERS),
                await c.post(
                    "/mcp",
                    content=tools_list,
                    headers={**HEADERS, **version, "mcp-session-id": "no-such-session"},
                ),
            ]

    no_id, no_id_no_header, unknown = anyio.run(go)
    assert (no_id.status_code, no_id.json()["error"]["message"]) == (
        400,
        "Bad Request: Mcp-Session-Id required",
    )
    assert no_id_no_header.status_code == 400
    assert "Mcp-Session-Id required" in no_id_no_header.text
    assert (unknown.status_code, unknown.json()["error"]["message"]) == (404, "Session not found")


# -- hostile bytes, generated -------------------------------------------------------------------------

_HOSTILE = st.one_of(
    st.integers(min_value=MAX_DEPTH - 2, max_value=5_000).map(nested),
    st.integers(min_value=MAX_DEPTH - 2, max_value=5_000).map(lambda d: "{" + '"a":{' * d),
    st.integers(min_value=1, max_value=20_000).map(lambda n: "1" * n),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999999", '"\\ud800"', "\ufeff{}", ""]),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
)


@settings(
    max_examples=max(200, settings().max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(body=_HOSTILE, fixed=st.booleans())
def test_any_hostile_body_gets_a_well_formed_answer_and_a_live_server(
    body: str, fixed: bool
) -> None:
    note(f"body ({len(body)} chars): {body[:120]!r}")
    note(f"serve {'--revision 2025-11-25' if fixed else 'with no revision'}")
    app = Dispatcher(load_script(FIXTURE), revision="2025-11-25" if fixed else None)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        hostile = await _post(app, body)
        return hostile, await _post(app, request_nested(1))

    hostile, after = anyio.run(go)
    assert hostile.status_code in (400, 404, 406, 415, 413), hostile.text
    if hostile.headers.get("content-type", "").startswith("application/json"):
        answer = hostile.json()
        assert answer["jsonrpc"] == "2.0", answer
        assert "error" in answer, answer
    assert after.status_code == 200, after.text


# -- Host: DNS rebinding ---------------------------------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
}


async def _with_host(app: Any, method: str, host: str) -> httpx.Response:
    transport = StreamingASGITransport(app)
    with anyio.fail_after(WAIT):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            headers = {**HEADERS, "host": host}
            if method == "GET":
                async with c.stream("GET", "/mcp", headers=headers) as response:
                    return response
            return await c.post("/mcp", json=INITIALIZE, headers=headers)


@pytest.mark.parametrize("method", ["POST", "GET"])
@pytest.mark.parametrize("server", ["mock", "serve"])
def test_a_host_that_is_not_loopback_gets_421_naming_the_way_out(server: str, method: str) -> None:
    script = load_script(FIXTURE)
    app = create_app(script, revision="2025-11-25") if server == "mock" else Dispatcher(script)
    refused = anyio.run(_with_host, app, method, "evil.example")
    assert refused.status_code == 421
    if method == "POST":
        message = refused.json()["error"]["message"]
        assert "Host 'evil.example' is not this server" in message
        assert "--allow-host NAME" in message
        assert "--allow-remote" in message


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:8765", "localhost:1", "LOCALHOST", "[::1]:9", "127.0.0.7:80"]
)
def test_loopback_hosts_are_served(host: str) -> None:
    app = create_app(load_script(FIXTURE), revision="2025-11-25")
    assert anyio.run(_with_host, app, "POST", host).status_code == 200


def test_an_allowed_host_is_served_and_any_host_with_allow_remote() -> None:
    script = load_script(FIXTURE)
    named = Dispatcher(script, allowed_hosts=frozenset({"localhost", "proxy.internal"}))
    assert anyio.run(_with_host, named, "POST", "proxy.internal:8080").status_code == 200
    assert anyio.run(_with_host, named, "POST", "other.internal").status_code == 421
    anyone = Dispatcher(script, allowed_hosts=None)
    assert anyio.run(_with_host, anyone, "POST", "evil.example").status_code == 200


def test_serve_refuses_a_rebound_host_and_allow_host_lets_one_in() -> None:
    served = serve(FIXTURE, "--allow-host", "dev.internal")
    with served as (url, _, _lines), httpx.Client(timeout=WAIT) as client:
        evil = client.post(url, json=INITIALIZE, headers={**HEADERS, "host": "evil.example"})
        named = client.post(url, json=INITIALIZE, headers={**HEADERS, "host": "dev.internal"})
        own = client.post(url, json=INITIALIZE, headers=HEADERS)
    assert evil.status_code == 421
    assert named.status_code == 200
    assert own.status_code == 200
