"""End to end: real servers recorded with `mcp-testbench record`, replayed with `serve`, and
the same real client gets the same results from the replay as from the live server.

Servers: `@modelcontextprotocol/server-everything` (stdio, Streamable HTTP and HTTP+SSE)
and `@modelcontextprotocol/server-filesystem` (stdio, on a folder of the test's), both
pinned in tests/e2e-node/package-lock.json, and the Python SDK's own server (stdio,
Streamable HTTP, HTTP+SSE). Clients: the Python SDK (`mcp`, mode="auto"), fastmcp and the
TypeScript SDK, each running one fixed session (tests/e2e/record_replay/) that prints what
it surfaced to the application as typed JSON. Each case: the session through the recorder
(the real CLI, as a subprocess) against the live server; `validate` on the script; the
same session against `serve` of the script, whose transcript must show no refusal of the
send gate (`mock_error`) and no request the script did not expect; the two outputs equal.
Nothing is normalised: every value the clients see in a reply is replayed as recorded (the
recorder turns only request values into patterns), and no session here carries a secret.

An HTTP+SSE session at a later revision than 2024-11-05 (what these clients and servers
negotiate) is replayed over Streamable HTTP: the mock speaks HTTP+SSE at 2024-11-05 only,
and the recorder says so (tests/mock_servers/recording/test_record_legacy_sse.py records
and replays a 2024-11-05 one over HTTP+SSE).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from _machine import within
from _served import NODE, NODE_TOOLS, serving, started, ts_sdk_driver_missing

from harness.cli import main

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent / "record_replay"
PYTHON_SESSION = HERE / "python_session.py"
TYPESCRIPT_SESSION = HERE / "typescript_session.mjs"
LOOPBACK = HERE / "loopback.mjs"
SERVERS = NODE_TOOLS / "node_modules" / "@modelcontextprotocol"
EVERYTHING = SERVERS / "server-everything" / "dist" / "index.js"
FILESYSTEM = SERVERS / "server-filesystem" / "dist" / "index.js"
RECORD = [sys.executable, "-m", "harness.cli", "record"]
# Bounds, not estimates: a session takes a second or two on an idle machine.
BOUND = within(60.0)
STOP_BOUND = within(10.0)

# The Python SDK's own server: a tool with structured output, a tool error, a resource and
# a prompt, over stdio, Streamable HTTP (SSE answers) or HTTP+SSE.
SDK_SERVER = """
import socket, sys
import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("recorded-sdk")

@server.tool()
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

@server.tool()
def fail() -> str:
    \"\"\"Always fails.\"\"\"
    raise ValueError("broken tool")

@server.resource("demo://greeting")
def greeting() -> str:
    return "hello"

@server.prompt()
def ask(topic: str) -> str:
    return f"Tell me about {topic}"

if sys.argv[1] == "stdio":
    server.run("stdio")
else:
    app = server.sse_app() if sys.argv[1] == "sse" else server.streamable_http_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"loopback listening at http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""

# What each client asks of each server: every kind of result a client surfaces.
PLANS: dict[str, list[dict[str, Any]]] = {
    "everything": [
        {"op": "list_tools"},
        {"op": "call_tool", "name": "echo", "arguments": {"message": "recorded"}},
        {"op": "call_tool", "name": "get-sum", "arguments": {"a": 2, "b": 3}},
        {"op": "call_tool", "name": "get-structured-content", "arguments": {"location": "Chicago"}},
        {"op": "list_resources"},
        {"op": "read_resource", "uri": "demo://resource/static/document/architecture.md"},
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "args-prompt", "arguments": {"city": "Paris"}},
    ],
    "filesystem": [
        {"op": "list_tools"},
        {"op": "call_tool", "name": "list_allowed_directories", "arguments": {}},
        {"op": "call_tool", "name": "read_text_file", "arguments": {"path": "{root}/notes.txt"}},
        {"op": "call_tool", "name": "list_directory", "arguments": {"path": "{root}"}},
        {"op": "call_tool", "name": "read_text_file", "arguments": {"path": "{root}/none.txt"}},
    ],
    "python-sdk": [
        {"op": "list_tools"},
        {"op": "call_tool", "name": "add", "arguments": {"a": 2, "b": 3}},
        {"op": "call_tool", "name": "fail", "arguments": {}},
        {"op": "read_resource", "uri": "demo://greeting"},
        {"op": "get_prompt", "name": "ask", "arguments": {"topic": "recording"}},
    ],
}

# server, transport, client: each server, each transport and each client at least once.
# (The Python SDK's client against its own server: tests/mock_servers/recording.)
CASES = [
    ("everything", "stdio", "mcp"),
    ("everything", "http", "typescript"),
    ("everything", "sse", "fastmcp"),
    ("filesystem", "stdio", "typescript"),
    ("python-sdk", "stdio", "fastmcp"),
    ("python-sdk", "http", "typescript"),
    ("python-sdk", "sse", "mcp"),
]


def _missing() -> str | None:
    for module in ("mcp", "fastmcp"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    for path in (EVERYTHING, FILESYSTEM):
        if not path.is_file():
            return f"{path.name} of {path.parents[1].name} is missing: run `npm ci --prefix tests/e2e-node`"
    return ts_sdk_driver_missing()


@contextlib.contextmanager
def _listening(command: Sequence[str], env: dict[str, str]) -> Iterator[str]:
    """`command` running until the block ends (stopped by pid), and the URL of its line
    `loopback listening at URL` or `recording ... at URL`."""
    with started(command, r"(?:loopback listening|recording \S+) at", env) as (_, url):
        yield url


def _run_client(client: str, plan: list[dict[str, Any]], transport: str, *target: str) -> Any:
    """What `client` surfaced in the session `plan` over `transport` to `target`."""
    if client == "typescript":
        command = [str(NODE), str(TYPESCRIPT_SESSION), json.dumps(plan), transport, *target]
    else:
        command = [
            sys.executable,
            str(PYTHON_SESSION),
            client,
            json.dumps(plan),
            transport,
            *target,
        ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=BOUND)
    assert done.returncode == 0, f"{client} failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def _server_command(server: str, transport: str, folder: Path) -> list[str]:
    if server == "python-sdk":
        source = folder / "sdk_server.py"
        source.write_text(SDK_SERVER, encoding="utf-8")
        return [sys.executable, str(source), transport]
    if server == "filesystem":
        return [str(NODE), str(FILESYSTEM), str(folder / "root")]
    mode = {"stdio": "stdio", "http": "streamableHttp", "sse": "sse"}[transport]
    return [str(NODE), f"--import={LOOPBACK.as_uri()}", str(EVERYTHING), mode]


def _validate(script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mcp-testbench validate SCRIPT` (in this process: the command's own entry point)."""
    status = main(["validate", str(script)])
    said = capsys.readouterr()
    assert status == 0, said.out + said.err


def _gate_passed(transcript: Path) -> None:
    """The replay's transcript: nothing the send gate refused, no unexpected request."""
    entries = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    refused = [e for e in entries if e.get("kind") in ("mock_error", "unmatched")]
    assert refused == [], refused
    assert any(e.get("kind") == "step" for e in entries), "the replay consumed no step"


@pytest.mark.parametrize(
    ("server", "transport", "client"), [pytest.param(*c, id="-".join(c)) for c in CASES]
)
def test_the_replay_gives_the_client_what_the_live_server_gave(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], server: str, transport: str, client: str
) -> None:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    if server == "filesystem":
        (tmp_path / "root").mkdir()
        (tmp_path / "root" / "notes.txt").write_text("recorded notes\n", encoding="utf-8")
    plan = json.loads(json.dumps(PLANS[server]).replace("{root}", str(tmp_path / "root")))
    script = tmp_path / "recorded.json"
    command = _server_command(server, transport, tmp_path)
    record = [*RECORD, "--out", str(script)]
    if transport == "stdio":
        live = _run_client(client, plan, "stdio", *record, "--stdio", "--", *command)
    else:
        path = "/sse" if transport == "sse" else "/mcp"
        # The recording ends with the session (the client's DELETE, or its closing the
        # HTTP+SSE stream) or, bounded, on SIGTERM on the way out.
        with (
            _listening(command, {"PORT": "0"}) as base,
            _listening([*record, "--http", base + path], {}) as at,
        ):
            live = _run_client(client, plan, transport, at)
    assert len(live["results"]) == len(plan)
    assert script.is_file(), "the recorder wrote no script"
    recorded = json.loads(script.read_text(encoding="utf-8"))
    assert "PARTIAL" not in recorded["description"], recorded["description"]
    _validate(script, capsys)

    transcript = tmp_path / "replay.jsonl"
    if transport == "stdio":
        serve = [sys.executable, "-m", "harness.cli", "serve", str(script), "--stdio"]
        replayed = _run_client(
            client, plan, "stdio", *serve, "--quiet", "--transcript", str(transcript)
        )
    else:
        # HTTP+SSE at a revision after 2024-11-05 replays over Streamable HTTP (the note).
        if transport == "sse":
            assert recorded["revisions"] != ["2024-11-05"]
            assert "replay this script over Streamable HTTP" in recorded["description"]
        with serving(script, "--quiet", "--transcript", str(transcript)) as served:
            replayed = _run_client(client, plan, "http", served.url)
    _gate_passed(transcript)
    assert replayed == live
