"""`mcp-testbench record --check` against the Python SDK's own server, recorded while the
SDK's client drove it: the same server replayed again has no drift, in both eras (initialize
at 2025-11-25; server/discover and per-request `_meta` at 2026-07-28), over stdio and over
Streamable HTTP (SSE answers with a session; JSON answers without one). Then the server with
one tool's schema changed: the check names the tool and the JSON pointer, and the result
that changed with it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from _sessions import BOUND, RECORD, STOP_BOUND, run_client, started, write_sdk_files

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        importlib.util.find_spec("mcp") is None, reason="the Python SDK (mcp) is not installed"
    ),
]


def _check(script: Path, *target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RECORD, "--check", str(script), "--timeout", str(BOUND), *target],
        capture_output=True,
        text=True,
        timeout=BOUND * 3,
    )


def _changed(server: Path) -> Path:
    """The same server, `add`'s first argument a number instead of an integer."""
    changed = server.with_name("sdk_server_changed.py")
    text = server.read_text(encoding="utf-8")
    assert "def add(a: int, b: int) -> int:" in text
    changed.write_text(text.replace("def add(a: int, b: int)", "def add(a: float, b: int)"))
    return changed


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_stdio(tmp_path: Path, mode: str) -> None:
    server, client = write_sdk_files(tmp_path)
    script = tmp_path / "recorded.json"
    serve = [sys.executable, str(server), "stdio"]
    run_client(client, mode, *RECORD, "--out", str(script), "--stdio", "--", *serve)
    _no_drift(_check(script, "--stdio", "--", *serve))
    changed = [sys.executable, str(_changed(server)), "stdio"]
    _schema_drift(_check(script, "--stdio", "--", *changed))


@pytest.mark.parametrize(("mode", "answers"), [("legacy", "sse"), ("auto", "json")])
def test_streamable_http(tmp_path: Path, mode: str, answers: str) -> None:
    server, client = write_sdk_files(tmp_path)
    script = tmp_path / "recorded.json"
    with started([sys.executable, str(server), answers], "listening at") as (_, url):
        record = [*RECORD, "--out", str(script), "--http", url, "--listen", "127.0.0.1:0"]
        with started(record, "recording") as (recorder, listen):
            run_client(client, mode, listen)
            if mode != "legacy":  # 2026-07-28 has no session to end: the recorder is stopped
                recorder.terminate()
            assert recorder.wait(STOP_BOUND) == 0
        _no_drift(_check(script, "--http", url))
    with started([sys.executable, str(_changed(server)), answers], "listening at") as (_, url):
        _schema_drift(_check(script, "--http", url))


def _no_drift(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("no drift: the handshake and 6 recorded requests")


def _schema_drift(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    *lines, summary = done.stdout.splitlines()
    assert lines == [
        'step 0 tools/list: tool "add" inputSchema changed: /properties/a/type: '
        '"integer" -> "number"',
        # 2 + 3 is now added as a float: what the server says of it changed too.
        'step 1 tools/call: result changed: /content/0/text: "5" -> "5.0"',
    ]
    assert summary.startswith(
        "DRIFT: 2 differences in 2 of 7 exchanges (step 0 tools/list, step 1 tools/call)"
    )
