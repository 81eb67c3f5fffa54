"""Record the Python SDK's own server driven by the Python SDK's client through
`mcp-testbench record`, validate the script, replay it with `serve`, and drive the same
client against the replay: it must see what it saw live.

Both eras: `legacy` (initialize, 2025-11-25) and `auto` (server/discover, 2026-07-28); over
stdio (the recorder is the command the client starts) and Streamable HTTP (SSE answers and
JSON answers).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _served import serving
from _sessions import RECORD, STOP_BOUND, run_client, started, write_sdk_files

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        importlib.util.find_spec("mcp") is None, reason="the Python SDK (mcp) is not installed"
    ),
]

SECRET = "tok-0123456789abcdef"  # the server's environment: it echoes it in a tool result


def _validate(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "validate", str(script)],
        capture_output=True,
        text=True,
        timeout=STOP_BOUND * 6,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _as_replayed(live: dict[str, Any]) -> dict[str, Any]:
    """What the replay must give: the live session, the server's secret as its placeholder."""
    return json.loads(json.dumps(live).replace(SECRET, "<redacted:recorded_api_token>"))


@pytest.mark.parametrize(("mode", "revision"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_a_stdio_session_replays_as_it_was_recorded(
    tmp_path: Path, mode: str, revision: str
) -> None:
    server, client = write_sdk_files(tmp_path)
    script = tmp_path / "recorded.json"
    live = run_client(
        client,
        mode,
        *RECORD,
        "--out",
        str(script),
        "--stdio",
        "--",
        sys.executable,
        str(server),
        "stdio",
    )
    assert live["version"] == revision
    assert live["add"]["structured_content"] == {"result": 5}
    assert live["fail"]["is_error"] is True
    assert live["slow"]["content"][0]["text"] == f"done with {SECRET}"

    text = script.read_text(encoding="utf-8")
    assert SECRET not in text
    recorded = json.loads(text)
    assert recorded["revisions"] == [revision]
    assert "PARTIAL" not in recorded["description"]
    calls = [s for s in recorded["steps"] if s.get("expect", {}).get("method") == "tools/call"]
    assert [c["expect"]["params"]["name"] for c in calls] == ["add", "slow", "fail"]
    assert all("id" not in c["expect"] for c in calls)
    slow = calls[1]["reply"]
    # The progress went out before the answer, each echoing the request's token.
    assert [m["method"] for m in slow["before"]][:2] == ["notifications/progress"] * 2
    assert slow["before"][0]["params"]["progressToken"] == {
        "$request": "/params/_meta/progressToken"
    }
    _validate(script)

    replayed = run_client(
        client,
        mode,
        sys.executable,
        "-m",
        "harness.cli",
        "serve",
        str(script),
        "--stdio",
        "--quiet",
    )
    assert replayed == _as_replayed(live)


@pytest.mark.parametrize(
    ("mode", "answers", "revision"),
    [("legacy", "sse", "2025-11-25"), ("auto", "json", "2026-07-28")],
)
def test_a_streamable_http_session_replays_as_it_was_recorded(
    tmp_path: Path, mode: str, answers: str, revision: str
) -> None:
    server, client = write_sdk_files(tmp_path)
    script = tmp_path / "recorded.json"
    with started([sys.executable, str(server), answers], "listening at") as (_, url):
        record = [*RECORD, "--out", str(script), "--http", url, "--listen", "127.0.0.1:0"]
        with started(record, "recording") as (recorder, listen):
            live = run_client(client, mode, listen)
            if mode == "legacy":  # the client's DELETE ends the recording by itself
                assert recorder.wait(STOP_BOUND) == 0
            else:  # 2026-07-28 has no session to end: the recorder is stopped
                recorder.terminate()
                assert recorder.wait(STOP_BOUND) == 0
    assert live["version"] == revision
    recorded = json.loads(script.read_text(encoding="utf-8"))
    assert recorded["revisions"] == [revision]
    assert recorded["transports"] == ["http"]
    replies = [s["reply"] for s in recorded["steps"] if "reply" in s]
    if answers == "sse":
        assert all(r.get("as") == "sse" for r in replies)
    else:
        assert not any("as" in r for r in replies)
    _validate(script)

    with serving(script, "--quiet") as served:
        replayed = run_client(client, mode, served.url)
    assert replayed == live
