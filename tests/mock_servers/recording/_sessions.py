"""The pieces the recording tests share: the Python SDK's server and client as files in a
test's folder, a process started and stopped by pid, and its announced URL, bounded."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from _machine import within
from _served import started

__all__ = [
    "CLIENT",
    "RECORD",
    "SERVER",
    "run_client",
    "started",
    "stop",
    "write_sdk_files",
]

BOUND = within(60.0)
STOP_BOUND = within(10.0)
RECORD = [sys.executable, "-m", "harness.cli", "record"]

# A tool, a resource and a prompt; a tool that reports progress and logs; a tool error.
SERVER = '''
import os, socket, sys
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("recorded")

@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress, then log."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps)
    await ctx.info("finished")
    return "done with " + os.environ.get("RECORDED_API_TOKEN", "no token")

@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("broken tool")

@server.resource("demo://greeting")
def greeting() -> str:
    return "hello"

@server.prompt()
def ask(topic: str) -> str:
    return f"Tell me about {topic}"

if __name__ == "__main__":
    if sys.argv[1:] == ["stdio"]:
        server.run("stdio")
    else:
        import uvicorn
        app = server.streamable_http_app(json_response=sys.argv[1] == "json")
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        print(f"listening at http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
'''

# Everything an application asks, as plain JSON (results whole, the progress it saw).
CLIENT = """
import json, sys
import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

async def main() -> None:
    mode, target = sys.argv[1], sys.argv[2:]
    progress = []

    async def on_progress(value, total, message):
        progress.append([value, total])

    if target[0].startswith("http"):
        server = target[0]
    else:
        server = StdioServerParameters(
            command=target[0], args=target[1:], env={"RECORDED_API_TOKEN": "tok-0123456789abcdef"}
        )
    def plain(value):
        return value.model_dump(mode="json", exclude_none=True)
    async with Client(server, mode=mode) as client:
        seen = {"version": client.protocol_version}
        seen["tools"] = plain(await client.list_tools())
        seen["add"] = plain(await client.call_tool("add", {"a": 2, "b": 3}))
        seen["slow"] = plain(await client.call_tool("slow", {"steps": 2}, progress_callback=on_progress))
        seen["fail"] = plain(await client.call_tool("fail", {}))
        seen["read"] = plain(await client.read_resource("demo://greeting"))
        seen["prompt"] = plain(await client.get_prompt("ask", {"topic": "recording"}))
        seen["progress"] = progress
    print(json.dumps(seen, sort_keys=True))

anyio.run(main)
"""


def write_sdk_files(folder: Path) -> tuple[Path, Path]:
    server, client = folder / "sdk_server.py", folder / "sdk_client.py"
    server.write_text(SERVER, encoding="utf-8")
    client.write_text(CLIENT, encoding="utf-8")
    return server, client


def run_client(client: Path, mode: str, *target: str) -> dict[str, Any]:
    """What the SDK client saw through `target` (a URL, or a command it starts)."""
    done = subprocess.run(
        [sys.executable, str(client), mode, *target],
        capture_output=True,
        text=True,
        timeout=BOUND,
        cwd=client.parent,
    )
    assert done.returncode == 0, f"the client failed ({done.returncode}):\n{done.stderr[-4000:]}"
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def stop(process: subprocess.Popen[str]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(STOP_BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait(STOP_BOUND)
