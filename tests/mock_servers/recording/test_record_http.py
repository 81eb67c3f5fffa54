"""`mcp-testbench record --http` as a real subprocess in front of a plain Streamable HTTP
server: credentials passed on to the server but never written, the server's HTTP behaviour
recorded, and one clear error for a URL that does not answer."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path

import httpx
from _sessions import RECORD, STOP_BOUND, started

from mock_servers import load_script

# Answers initialize with a session and a cookie; a tools/call with every credential it got.
PLAIN_SERVER = """
import json, socket, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

async def mcp(request):
    if request.method == "DELETE":
        return Response(status_code=200)
    if request.method == "GET":
        return Response(status_code=405)
    message = json.loads(await request.body())
    if "id" not in message:
        return Response(status_code=202)
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "plain", "version": "1"}}
        headers = {"mcp-session-id": "session-1", "set-cookie": "srv=srv-cookie-445566; Path=/"}
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result},
                            headers=headers)
    seen = (f"auth {request.headers.get('authorization')} cookie {request.headers.get('cookie')}"
            f" query {request.query_params.get('access_token')}")
    result = {"content": [{"type": "text", "text": seen}]}
    return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})

app = Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST", "DELETE"])])
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(16)
print(f"listening at http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""

TOKEN = "opaque-token-1a2b3c4d5e"
QUERY = "query-secret-99887766"
COOKIE = "cookie-778899aabb"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "whoami", "arguments": {}},
}


def test_credentials_reach_the_server_and_never_the_file(tmp_path: Path) -> None:
    server = tmp_path / "plain_server.py"
    server.write_text(PLAIN_SERVER, encoding="utf-8")
    out = tmp_path / "session.json"
    with (
        started([sys.executable, str(server)], "listening at") as (_, url),
        started([*RECORD, "--out", str(out), "--http", url], "recording") as (recorder, at),
    ):
        headers = {
            "authorization": f"Bearer {TOKEN}",
            "cookie": f"sid={COOKIE}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        }
        # A jar that keeps nothing: the Cookie header is the one above, every time.
        jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        with httpx.Client(timeout=STOP_BOUND, cookies=jar) as client:
            first = client.post(at, json=INIT, headers=headers)
            assert first.headers["set-cookie"] == "srv=srv-cookie-445566; Path=/"
            session = {"mcp-session-id": first.headers["mcp-session-id"], **headers}
            answer = client.post(f"{at}?access_token={QUERY}", json=CALL, headers=session)
            assert client.get(at, headers=session).status_code == 405
            assert client.delete(at, headers=session).status_code == 200
        assert recorder.wait(STOP_BOUND) == 0  # the DELETE ended the recording
    # The server got every credential, through the proxy, and said so to the client.
    text = answer.json()["result"]["content"][0]["text"]
    assert text == f"auth Bearer {TOKEN} cookie sid={COOKIE} query {QUERY}"
    written = out.read_text(encoding="utf-8")
    for secret in (TOKEN, QUERY, COOKIE, "srv-cookie-445566"):
        assert secret not in written
    script = json.loads(written)
    assert script["steps"][0]["reply"]["result"]["content"][0]["text"] == (
        "auth <redacted:authorization> cookie sid=<redacted:cookie sid> "
        "query <redacted:query access_token>"
    )
    assert script["transports"] == ["http"]
    assert script["http"] == {"get": "405"}  # sessions and DELETE as the defaults say
    load_script(out)


def test_a_url_that_does_not_answer_is_one_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on once it is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = subprocess.run(
        [*RECORD, "--out", str(tmp_path / "s.json"), "--http", f"http://127.0.0.1:{port}/mcp"],
        capture_output=True,
        text=True,
        timeout=STOP_BOUND * 3,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        f"mcp-testbench record: the server at http://127.0.0.1:{port}/mcp does not answer"
    )
    assert not (tmp_path / "s.json").exists()
