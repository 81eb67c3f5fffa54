"""`mcp-testbench record --stdio` as the real subprocess a client starts, with a plain server:
the bytes relayed unchanged, secrets kept out of the file, a session cut short still
written (and marked), and one clear error for each kind of bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _sessions import RECORD, STOP_BOUND

from mock_servers import load_script

# A server that echoes secrets back: its own environment's token, and the caller's key in
# a URL and an Authorization-like text; it never answers a call asking it to hang.
RAW_SERVER = """
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "1"}}
    else:
        arguments = message["params"]["arguments"]
        if arguments.get("hang"):
            continue
        key = arguments["api_key"]
        result = {"content": [{"type": "text", "text":
            f"env {os.environ['RAW_SERVICE_TOKEN']} url https://api.example/v1?key={key}"
            f" header Authorization: Bearer {key}"}], "cookie": "sid=" + key}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""

ENV_SECRET = "env-secret-5f1e2d3c4b"
KEY = "k3y-a1b2c3d4e5f6"
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


def _call(id_: int, **arguments: object) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": arguments},
    }


def _record(
    tmp_path: Path, lines: list[dict[str, object]], *extra: str, command: list[str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    server = tmp_path / "raw_server.py"
    server.write_text(RAW_SERVER, encoding="utf-8")
    out = tmp_path / "session.json"
    sent = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    done = subprocess.run(
        [
            *RECORD,
            "--out",
            str(out),
            *extra,
            "--stdio",
            "--",
            *(command or [sys.executable, str(server)]),
        ],
        input=sent,
        capture_output=True,
        text=True,
        timeout=STOP_BOUND * 3,
        env={**os.environ, "RAW_SERVICE_TOKEN": ENV_SECRET},
    )
    return done, out


def test_every_byte_is_relayed_and_no_secret_reaches_the_file(tmp_path: Path) -> None:
    done, out = _record(tmp_path, [INIT, _call(2, api_key=KEY)])
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    # The client got the server's answer unchanged, secrets and all.
    assert ENV_SECRET in done.stdout
    assert KEY in done.stdout
    text = out.read_text(encoding="utf-8")
    for secret in (ENV_SECRET, KEY):
        assert secret not in text
    script = json.loads(text)
    step = script["steps"][0]
    assert step["expect"] == {
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"api_key": {"$regex": "^.+$"}}},
    }
    result = step["reply"]["result"]
    assert result["cookie"] == "<redacted:cookie>"
    assert result["content"][0]["text"] == (
        "env <redacted:raw_service_token> url https://api.example/v1?key=<redacted:key>"
        " header Authorization: Bearer <redacted:bearer>"
    )
    assert script["server"]["info"] == {"name": "raw", "version": "1"}
    assert "Secrets redacted:" in script["description"]
    assert "wrote" in done.stderr
    load_script(out)  # what validate reads


def test_the_callers_pattern_redacts_too(tmp_path: Path) -> None:
    done, out = _record(tmp_path, [INIT, _call(2, api_key="x")], "--redact", "raw")
    assert done.returncode == 0, done.stderr
    script = json.loads(out.read_text(encoding="utf-8"))
    assert script["server"]["info"]["name"] == "<redacted:custom>"


def test_a_client_that_ends_half_way_leaves_a_partial_script(tmp_path: Path) -> None:
    done, out = _record(tmp_path, [INIT, _call(2, api_key=KEY), _call(3, hang=True)])
    assert done.returncode == 1
    script = load_script(out)
    assert "PARTIAL: the server never answered the client's tools/call" in script.description
    assert script.steps[-1].raw["reply"] == {"fault": {"kind": "hang"}}
    assert "PARTIAL" in done.stderr


def test_a_command_that_does_not_exist_is_one_clear_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-server")
    done, out = _record(tmp_path, [INIT], command=[missing])
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"mcp-testbench record: the server command did not start: {missing}: "
        "No such file or directory; check the command after --"
    )
    assert not out.exists()


def test_a_command_that_exits_at_once_is_one_clear_error(tmp_path: Path) -> None:
    done, out = _record(tmp_path, [INIT], command=[sys.executable, "-c", "raise SystemExit(3)"])
    assert done.returncode == 2
    assert "the server command did not start: it exited with status 3" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("where", "says"),
    [("missing/session.json", "does not exist"), (".", "is a folder")],
)
def test_an_out_that_cannot_be_written_is_one_clear_error(
    tmp_path: Path, where: str, says: str
) -> None:
    done = subprocess.run(
        [*RECORD, "--out", str(tmp_path / where), "--stdio", "--", sys.executable, "-c", ""],
        capture_output=True,
        text=True,
        timeout=STOP_BOUND * 3,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("mcp-testbench record: --out ")
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_no_command_after_the_separator_is_one_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [*RECORD, "--out", str(tmp_path / "s.json"), "--stdio"],
        capture_output=True,
        text=True,
        timeout=STOP_BOUND * 3,
    )
    assert done.returncode == 2
    assert "--stdio needs the server's command after --" in done.stderr


def test_a_server_that_ends_half_way_ends_the_session_and_the_script_says_so(
    tmp_path: Path,
) -> None:
    server = tmp_path / "raw_server.py"
    server.write_text(
        RAW_SERVER.replace("continue\n        key", "raise SystemExit(5)\n        key")
    )
    out = tmp_path / "session.json"
    recorder = subprocess.Popen(
        [*RECORD, "--out", str(out), "--stdio", "--", sys.executable, str(server)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RAW_SERVICE_TOKEN": ENV_SECRET},
    )
    try:
        assert recorder.stdin is not None
        assert recorder.stdout is not None
        for line in (INIT, _call(2, hang=True)):
            recorder.stdin.write(json.dumps(line) + "\n")
        recorder.stdin.flush()
        # The client's end stays open: the server's exit alone ends the session.
        assert recorder.wait(STOP_BOUND * 3) == 1
        assert [json.loads(line)["id"] for line in recorder.stdout] == [1]  # then the end
    finally:
        if recorder.poll() is None:
            recorder.kill()
            recorder.wait(STOP_BOUND)
        for stream in (recorder.stdin, recorder.stdout, recorder.stderr):
            if stream is not None:
                stream.close()
    description = load_script(out).description
    assert description.endswith(
        "PARTIAL: the server ended the session (it exited with status 5); "
        "the server never answered the client's tools/call."
    )
