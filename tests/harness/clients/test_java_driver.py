"""The Java driver kit (examples/drivers/java): its JSON reader and writer, its driver loop,
the small client behind it through the driver binding, and its README's commands.

Needs a JDK: skipped without `javac` on PATH, failed without it under CI (tests/_java.py).
The whole suite through the kit, with every verdict pinned, is tests/e2e/test_e2e_java_driver.py.
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import subprocess
import threading
from pathlib import Path

import anyio
import pytest
from _java import KIT, build_kit, driver_argv, require_java
from _machine import within
from test_driver import (
    BOUND,
    REVISION,
    TOOL_NAMES,
    TOOLS_SCRIPT,
    assert_wire,
    cancel_hanging_call,
    driven,
    exercise_tools,
    mock_target,
    time_out_hanging_call,
)

from mock_servers.engine._transcript import read_transcript
from mock_servers.stdio._server import stdio_command

WAIT = within(30)  # seconds: the bound of one short Java process


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_kit(tmp_path_factory.mktemp("java-kit"))


def run_java(classes: Path, main: str, stdin: str) -> subprocess.CompletedProcess[str]:
    _, java = require_java()
    return subprocess.run(
        [java, "-cp", str(classes), main],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=WAIT,
        check=False,
    )


# -- the JSON reader and writer ----------------------------------------------------------------

JSON_CASES = [
    # integers and doubles stay apart; big integers stay exact
    ("[1, -7, 1.0, 2.5, 1e2, -0.5E-3]", "ok [1,-7,1.0,2.5,100.0,-5.0E-4]"),
    ("9007199254740993", "ok 9007199254740993"),
    ("123456789012345678901234567890", "ok 123456789012345678901234567890"),
    ("-9223372036854775809", "ok -9223372036854775809"),
    # escapes: BMP, a surrogate pair, control characters written back escaped
    (r'"caf\u00e9 \ud83d\ude00 \n\t\"\\\/"', 'ok "café 😀 \\n\\t\\"\\\\/"'),
    ('"😀"', 'ok "😀"'),
    (r'"\u0001"', r'ok "\u0001"'),
    ('{"b": [true, false, null], "a": {}}', 'ok {"b":[true,false,null],"a":{}}'),
    # garbage is refused
    (r'"\ud83d"', "error"),
    (r'"\ude00"', "error"),
    (r'"\ud83dx"', "error"),
    ("01", "error"),
    ("1.", "error"),
    (".5", "error"),
    ("+1", "error"),
    ("-", "error"),
    ("1e", "error"),
    ("NaN", "error"),
    ("[1,]", "error"),
    ('{"a":1,}', "error"),
    ('{"a" 1}', "error"),
    ('{"a":1,"a":2}', "error"),
    ('{"a":1} x', "error"),
    ("nul", "error"),
    ("'a'", "error"),
    ('"tab\there"', "error"),
    (r'"\x41"', "error"),
    ('"open', "error"),
    ("1e999", "error"),
]


def test_json_reader_and_writer(classes: Path) -> None:
    done = run_java(classes, "mcpdriver.JsonCheck", "".join(f"{c}\n" for c, _ in JSON_CASES))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(JSON_CASES), done.stdout
    wrong = [
        (case, expected, seen)
        for (case, expected), seen in zip(JSON_CASES, lines, strict=True)
        if (seen.split(" ", 1)[0] if expected == "error" else seen) != expected
    ]
    assert not wrong, wrong


# -- the driver loop -----------------------------------------------------------------------------


def test_driver_loop_says_hello_skips_garbage_and_closes(classes: Path) -> None:
    commands = [
        "this is not JSON",
        '[{"id": 9}]',
        json.dumps({"id": 1, "op": "frobnicate"}),
        json.dumps({"id": 2, "op": "list_tools"}),
        json.dumps({"id": 3, "op": "cancel", "target": 99}),
        json.dumps({"id": 6, "op": "reset"}),  # 1.1: the process stays for another scenario
        json.dumps({"id": 7, "op": "get_task", "taskId": "t-1"}),  # 1.1, not in supports
        json.dumps({"id": 4, "op": "close"}),
        json.dumps({"id": 5, "op": "ping"}),  # after close: never read
    ]
    done = run_java(classes, "smallclient.SmallClientDriver", "".join(f"{c}\n" for c in commands))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    hello = lines[0]
    assert hello["hello"] == "mcp-testbench-driver/1.1"
    assert hello["reuse"] is True
    assert hello["client"] == {"name": "small-java-mcp-client", "version": "0.1.0"}
    assert {"stdio", "http", "tools", "cancel", "2025-11-25"} <= set(hello["supports"])
    assert {"set_log_level", "subscribe_resource", "complete", "set_roots"} <= set(
        hello["supports"]
    )
    assert not {"2026-07-28", "tasks", "listen"} & set(hello["supports"])
    replies = {line["id"]: line for line in lines[1:]}
    assert set(replies) == {1, 2, 3, 4, 6, 7}, lines
    assert replies[6] == {"id": 6, "ok": True, "value": {}}
    assert replies[7]["error"]["kind"] == "unsupported"
    assert replies[1]["error"]["kind"] == "unsupported"
    assert replies[2]["error"] == {
        "kind": "other",
        "code": None,
        "message": "tools/list before connect",
    }
    assert replies[3] == {"id": 3, "ok": True, "value": {}}
    assert lines[-1] == {"id": 4, "ok": True, "value": {}}  # close replies last
    assert done.stderr.count("ignored a line that is not a command") == 2, done.stderr


def test_reset_keeps_the_process_and_the_next_connect_starts_afresh(
    classes: Path, tmp_path: Path
) -> None:
    """1.1 `reset`: the client is closed (its server process stopped) and a new one connects."""
    argv = stdio_command(
        TOOLS_SCRIPT, revision=REVISION, transcript=tmp_path / "t.jsonl", append_transcript=True
    )
    process = subprocess.Popen(
        driver_argv(classes),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in process.stdout or ()])
    reader.start()

    def ask(command: dict[str, object]) -> dict[str, object]:
        assert process.stdin is not None
        process.stdin.write(json.dumps(command) + "\n")
        process.stdin.flush()
        while True:  # events may come first
            line = json.loads(lines.get(timeout=WAIT))
            if line.get("id") == command["id"]:
                return dict(line)

    try:
        assert json.loads(lines.get(timeout=WAIT))["reuse"] is True
        connect = {"op": "connect", "transport": {"type": "stdio", "command": argv, "env": {}}}
        for first in (1, 4):  # two scenarios in one process
            assert ask({"id": first, **connect, "protocolVersion": REVISION})["ok"] is True
            listed = ask({"id": first + 1, "op": "list_tools"})
            assert {t["name"] for t in listed["value"]["tools"]} == TOOL_NAMES  # type: ignore[index]
            op = "reset" if first == 1 else "close"
            assert ask({"id": first + 2, "op": op}) == {"id": first + 2, "ok": True, "value": {}}
        assert process.wait(timeout=WAIT) == 0
    finally:
        process.kill()
        process.wait(timeout=WAIT)
        reader.join(timeout=WAIT)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()
    # Both server processes wrote to one transcript: each was initialized, and each stopped.
    entries = read_transcript(tmp_path / "t.jsonl")["entries"]
    sent = [e["message"].get("method") for e in entries if e.get("direction") == "client"]
    assert sent.count("initialize") == 2, sent
    assert [e["kind"] for e in entries].count("exit") == 2, entries[-3:]


# -- the small client through the driver binding -------------------------------------------------

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_small_client_end_to_end(classes: Path, transport: str, tmp_path: Path) -> None:
    async with driven(driver_argv(classes)) as client:
        with mock_target(transport, tmp_path) as target:
            await exercise_tools(client, target)
            with anyio.fail_after(BOUND):
                assert await client.ping() == {}
                await client.close()
        assert client.name == "small-java-mcp-client"
    messages = assert_wire(tmp_path)
    assert messages[0]["id"] == 1  # the small client numbers its requests from 1


async def test_small_client_cancels_a_running_call(classes: Path, tmp_path: Path) -> None:
    async with driven(driver_argv(classes)) as client:
        await cancel_hanging_call(client, tmp_path)


async def test_small_client_times_out(classes: Path, tmp_path: Path) -> None:
    async with driven(driver_argv(classes)) as client:
        await time_out_hanging_call(client, tmp_path)


# -- the README's commands -----------------------------------------------------------------------


def readme_quick_start() -> list[str]:
    """The commands of the README's first sh block (the quick start)."""
    text = (KIT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert block is not None, "the kit's README has no sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_quick_start_runs_on_a_fresh_checkout(tmp_path: Path) -> None:
    require_java()
    # A fresh checkout of the kit alone: the sources, no build folder.
    shutil.copytree(KIT / "src", tmp_path / "examples" / "drivers" / "java" / "src")
    build, json_check, driver = readme_quick_start()
    assert build.startswith("javac "), build
    outputs = []
    for command in (build, json_check, driver):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=WAIT * 4,
            check=False,
        )
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        outputs.append(done.stdout)
    # What the README says they print.
    assert outputs[1] == 'ok [1,2.5,12345678901234567890,"😀"]\n'
    hello, reply = (json.loads(line) for line in outputs[2].splitlines())
    assert hello["hello"] == "mcp-testbench-driver/1.1"
    assert reply == {
        "id": 1,
        "ok": False,
        "error": {"kind": "other", "code": None, "message": "ping before connect"},
    }
