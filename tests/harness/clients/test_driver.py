"""The driver binding (`DriverClient`) against real driver processes.

- the Python example driver (examples/drivers/python) end to end, over stdio and HTTP,
  with cancellation and time-outs checked on the wire (notifications/cancelled);
- bad drivers, written as tiny scripts: one that dies, one that never says hello, one
  that prints garbage, one with an unknown error kind, one that hangs, one that talks on
  stderr, and a command that does not exist;
- cancellation: cancelling the awaiting task sends `cancel` with the right target;
- the TypeScript SDK driver, the same way (`e2e`: needs node and its node_modules).

Every wait is bounded, nothing sleeps to synchronise, and every driver process is gone
(checked by pid) when its test ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from _machine import within
from _served import NODE, TS_SDK_DRIVER, ts_sdk_driver_missing

from harness.clients import (
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    HttpTarget,
    StdioTarget,
)
from harness.clients._contract import Target
from harness.clients._driver import DriverClient, DriverPool
from harness.running._scenario import TranscriptWatch
from mock_servers._fixtures import fixtures_root
from mock_servers.engine._script import load_script, parse_script
from mock_servers.engine._transcript import read_transcript
from mock_servers.http import HttpMockServer
from mock_servers.stdio._server import stdio_command

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[3]
PYTHON_DRIVER = REPO / "examples" / "drivers" / "python" / "driver.py"
TOOLS_SCRIPT = fixtures_root() / "tools" / "list-and-call.json"
FAULTS_SCRIPT = fixtures_root() / "stdio" / "faults.json"
REVISION = "2025-11-25"
BOUND = within(60.0)  # seconds: the bound of a whole exchange with a driver
TOOL_NAMES = {"add", "divide", "flaky", "stale", "gone"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the binding runs on asyncio, as the harness does


# -- helpers ---------------------------------------------------------------------------------


async def assert_gone(client: DriverClient) -> None:
    """The driver process has ended and been reaped: its pid names no process any more."""
    process = client._process
    if process is None:
        return
    with anyio.fail_after(10):
        await process.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)


@asynccontextmanager
async def driven(argv: list[str], **kwargs: Any) -> AsyncIterator[DriverClient]:
    client = DriverClient(argv, **kwargs)
    try:
        yield client
    finally:
        with anyio.move_on_after(30):
            await client.close()
        await assert_gone(client)


@contextmanager
def mock_target(transport: str, tmp_path: Path, script: Path = TOOLS_SCRIPT) -> Iterator[Target]:
    """A stdio or HTTP mock of `script` at REVISION, recording into tmp_path/transcript.jsonl."""
    transcript = tmp_path / "transcript.jsonl"
    if transport == "stdio":
        yield StdioTarget(tuple(stdio_command(script, revision=REVISION, transcript=transcript)))
    else:
        with HttpMockServer(
            load_script(script), revision=REVISION, transcript_path=transcript
        ) as server:
            yield HttpTarget(server.url)


def what_happened(client: DriverClient, tmp_path: Path) -> str:
    """For a failed assertion: the transcript's last entries and the driver's stderr."""
    entries = read_transcript(tmp_path / "transcript.jsonl")["entries"]
    lines = [json.dumps(e, sort_keys=True)[:300] for e in entries[-12:]]
    return "\n".join(["transcript (last entries):", *lines, "driver stderr:", client.diagnostics])


def _client_sent(method: str) -> Callable[[list[dict[str, Any]]], bool]:
    """Whether transcript entries show a client message of `method`."""

    def seen(entries: list[dict[str, Any]]) -> bool:
        return any(
            e["kind"] == "message"
            and e["direction"] == "client"
            and e["message"].get("method") == method
            for e in entries
        )

    return seen


def client_messages(tmp_path: Path) -> list[dict[str, Any]]:
    transcript = read_transcript(tmp_path / "transcript.jsonl")
    entries = transcript["entries"]
    if transcript["transport"] == "stdio":
        # The client stopped the server it spawned: no grandchild outlives the test either.
        assert any(e["kind"] == "exit" for e in entries), entries[-3:]
    return [e["message"] for e in entries if e["kind"] == "message" and e["direction"] == "client"]


async def exercise_tools(client: DriverClient, target: Target) -> None:
    """connect, list_tools, and call_tool: ok, isError, and JSON-RPC errors."""
    with anyio.fail_after(BOUND):
        await client.prepare()
        assert {"tools", target.type} <= client.supports
        connected = await client.connect(
            target, ConnectOptions(protocol_version=REVISION, timeout=within(10))
        )
        assert connected["protocolVersion"] == REVISION
        assert connected["serverInfo"] == {"name": "tools-mock", "version": "1.0.0"}
        listed = await client.list_tools()
        assert {tool["name"] for tool in listed["tools"]} == TOOL_NAMES
        added = await client.call_tool("add", {"a": 1, "b": 2})
        assert added["content"] == [{"type": "text", "text": "3"}]
        assert added.get("isError") is False
        # A tool's own failure is a result (isError), not an error.
        divided = await client.call_tool("divide", {"a": 1, "b": 0})
        assert divided["isError"] is True
        assert divided["content"] == [{"type": "text", "text": "division by zero"}]
        # JSON-RPC errors surface as kind "protocol" with the server's code.
        for name, code in (("stale", -32602), ("gone", -32601), ("flaky", -32603)):
            with pytest.raises(ClientError) as caught:
                await client.call_tool(name, {})
            assert (caught.value.kind, caught.value.code) == ("protocol", code), caught.value


def assert_wire(tmp_path: Path) -> list[dict[str, Any]]:
    messages = client_messages(tmp_path)
    methods = [m.get("method") for m in messages]
    assert methods[:2] == ["initialize", "notifications/initialized"], methods
    assert messages[0]["params"]["protocolVersion"] == REVISION
    assert methods.count("tools/call") == 5, methods
    return messages


# -- the Python example driver -----------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_python_driver_end_to_end(transport: str, tmp_path: Path) -> None:
    async with driven([sys.executable, str(PYTHON_DRIVER)]) as client:
        with mock_target(transport, tmp_path) as target:
            await exercise_tools(client, target)
            with anyio.fail_after(BOUND):
                assert await client.ping() == {}
                await client.close()
        assert client.name == "mcp-testbench-reference"
    assert_wire(tmp_path)
    assert "a reply for no pending command" not in client.diagnostics


def _auth_script(auth: dict[str, Any]) -> Any:
    script = json.loads((fixtures_root() / "auth" / "code-flow.json").read_text("utf-8"))
    return parse_script({**script, "auth": auth})


@pytest.mark.parametrize("pre_registered", [False, True], ids=["registers", "pre-registered"])
async def test_python_driver_authorizes_headless(pre_registered: bool) -> None:
    """The connect command's `authorization` reaches the client: it registers under the
    name and redirect URI given, or uses the pre-registered credentials given."""
    redirect = "http://127.0.0.1:45999/driver-callback"
    auth: dict[str, Any] = {}
    given = Authorization(client_name="driver under test", redirect_uri=redirect)
    if pre_registered:
        auth = {
            "authorization_server": {"registration": False},
            "clients": [{"client_id": "pre-1", "client_secret": "s3", "redirect_uris": [redirect]}],
        }
        given = Authorization("driver under test", redirect, "pre-1", "s3")
    async with driven([sys.executable, str(PYTHON_DRIVER)]) as client:
        with HttpMockServer(_auth_script(auth), revision=REVISION) as server:
            with anyio.fail_after(BOUND):
                options = ConnectOptions(protocol_version=REVISION, timeout=10, authorization=given)
                await client.connect(HttpTarget(server.url), options)
                assert "auth" in client.supports
                result = await client.call_tool("write", {})
                await client.close()
            entries = list(server.transcript.of_kind("auth"))
    assert result["content"][0]["text"] == "written"
    registrations = [e for e in entries if e["endpoint"] == "register"]
    authorize = next(e for e in entries if e["endpoint"] == "authorize")
    token = next(e for e in entries if e["endpoint"] == "token")
    assert authorize["params"]["redirect_uri"] == redirect
    if pre_registered:
        assert registrations == []
        assert authorize["params"]["client_id"] == "pre-1"
        assert token["client_auth"] == token["registered_auth"] == "client_secret_basic"
    else:
        [registration] = registrations
        assert registration["metadata"]["client_name"] == "driver under test"
        assert registration["metadata"]["redirect_uris"] == [redirect]


@contextmanager
def hanging_mock(tmp_path: Path) -> Iterator[tuple[Target, TranscriptWatch]]:
    """The stdio faults mock (its `hang` tool never answers), with a watch on its transcript."""
    watch = TranscriptWatch(tmp_path / "transcript.jsonl")
    with closing(watch), mock_target("stdio", tmp_path, FAULTS_SCRIPT) as target:
        yield target, watch


async def until_cancelled(watch: TranscriptWatch) -> None:
    """Wait until the client's notifications/cancelled is recorded, before the test goes on
    and closes: a client may write it from another thread after the caller saw the call
    end, as the suite's drives allow, and a late write to a closed pipe is lost. Not seen
    within the bound, the test's assertion says what was recorded instead."""
    await watch.until(_client_sent("notifications/cancelled"), BOUND / 2)


async def cancel_hanging_call(client: DriverClient, tmp_path: Path) -> None:
    """Cancel a call the server never answers; the client must send notifications/cancelled."""
    with hanging_mock(tmp_path) as (target, watch), anyio.fail_after(BOUND):
        await client.connect(target, ConnectOptions(protocol_version=REVISION, timeout=within(10)))
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "hang", {})
            # Cancelled once the server has the call: a call cancelled before the client
            # wrote it must not be cancelled on the wire at all.
            assert await watch.until(_client_sent("tools/call"), BOUND / 2), what_happened(
                client, tmp_path
            )
            group.cancel_scope.cancel()
        # The driver answers `cancel` at once (docs/driver-protocol.md), so the client may
        # write its notifications/cancelled later.
        await until_cancelled(watch)
        # Still usable: the faults script lists the tools its steps call.
        listed = await client.list_tools()
        assert "hang" in {tool["name"] for tool in listed["tools"]}
        await client.close()
    messages = client_messages(tmp_path)
    call = next(m for m in messages if m.get("method") == "tools/call")
    cancelled = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [call["id"]], what_happened(
        client, tmp_path
    )


async def time_out_hanging_call(client: DriverClient, tmp_path: Path) -> None:
    """call_tool's own timeout: kind "timeout", and the client cancels on the wire."""
    with hanging_mock(tmp_path) as (target, watch), anyio.fail_after(BOUND):
        await client.connect(target, ConnectOptions(protocol_version=REVISION, timeout=within(10)))
        with pytest.raises(ClientError) as caught:
            await client.call_tool("hang", {}, timeout=0.5)
        assert caught.value.kind == "timeout", caught.value
        # A client may raise its time-out before its notifications/cancelled is written.
        await until_cancelled(watch)
        await client.close()
    messages = client_messages(tmp_path)
    call = next(m for m in messages if m.get("method") == "tools/call")
    cancelled = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [call["id"]], what_happened(
        client, tmp_path
    )


async def test_python_driver_cancels_a_running_call(tmp_path: Path) -> None:
    async with driven([sys.executable, str(PYTHON_DRIVER)]) as client:
        await cancel_hanging_call(client, tmp_path)


async def test_python_driver_times_out(tmp_path: Path) -> None:
    async with driven([sys.executable, str(PYTHON_DRIVER)]) as client:
        await time_out_hanging_call(client, tmp_path)


async def test_python_driver_rejects_unknown_ops_and_skips_bad_lines(tmp_path: Path) -> None:
    """Unknown ops get `unsupported`; a non-command line is logged to stderr, never answered."""
    async with driven([sys.executable, str(PYTHON_DRIVER)]) as client:
        with anyio.fail_after(BOUND):
            await client.prepare()
            assert client._process is not None
            assert client._process.stdin is not None
            client._process.stdin.write(b"not a command\n")
            with pytest.raises(ClientError) as caught:
                await client._command("no_such_op", {}, 10)
            assert caught.value.kind == "unsupported"
            await client.close()
    assert "ignored a line that is not a command" in client.diagnostics


@pytest.mark.parametrize("stdin", ["a file of commands", "/dev/null"])
def test_python_driver_run_by_hand_reads_a_file_or_dev_null(stdin: str, tmp_path: Path) -> None:
    """A driver run by hand on a file (or /dev/null), which the event loop cannot poll,
    answers its commands and exits at the end: it waited forever (asyncio's pipe reader
    fails on those in a callback, and nothing ever ended the wait)."""
    if stdin == "/dev/null":
        source, replies = Path(os.devnull), []
    else:
        source = tmp_path / "commands.jsonl"
        source.write_text('{"id": 1, "op": "no_such_op"}\n{"id": 2, "op": "close"}\n')
        replies = [(1, False), (2, True)]
    with source.open("rb") as commands:
        done = subprocess.run(
            [sys.executable, str(PYTHON_DRIVER)],
            stdin=commands,
            capture_output=True,
            timeout=BOUND,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    hello, *rest = [json.loads(line) for line in done.stdout.splitlines()]
    assert hello["hello"] == "mcp-testbench-driver/1.1"
    assert [(reply["id"], reply["ok"]) for reply in rest] == replies


# -- bad drivers --------------------------------------------------------------------------------

# One fake driver for every misbehaviour: `python fake.py MODE [RECORD_FILE]`.
FAKE_DRIVER = textwrap.dedent(
    """
    import json, sys, time

    mode = sys.argv[1]
    record = open(sys.argv[2], "a") if len(sys.argv) > 2 else None

    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()

    if mode == "garbage":
        sys.stdout.write("garbage before the hello\\n[1, 2]\\n")
    if mode == "stderr":
        print("fake-driver: starting up", file=sys.stderr, flush=True)
    send({"hello": "mcp-testbench-driver/1", "client": {"name": "fake", "version": "9"},
          "supports": ["stdio", "tools", "cancel"]})
    for line in sys.stdin:
        command = json.loads(line)
        if record:
            record.write(line)
            record.flush()
        op, cid = command["op"], command["id"]
        if mode == "stderr":
            print("fake-driver: got " + op, file=sys.stderr, flush=True)
        if op == "close":
            send({"id": cid, "ok": True, "value": {}})
            break
        if op == "connect" and mode == "retyped-ids":  # the id's value, not its JSON type
            for wrong in (cid == 1, float(cid), str(cid)):
                send({"id": wrong, "ok": True, "value": {"serverInfo": {"name": "x"}}})
        elif op == "connect":
            send({"id": cid, "ok": True,
                  "value": {"protocolVersion": "2025-11-25", "serverInfo": {"name": "x"}}})
        elif mode == "hang" and op == "list_tools":
            time.sleep(3600)
        elif mode == "unknown-kind" and op == "list_tools":
            send({"id": cid, "ok": False,
                  "error": {"kind": "weird", "code": 7, "message": "strange failure"}})
        elif mode == "cancel" and op == "call_tool":
            send({"event": "log", "text": "call_tool running"})  # the reply waits for cancel
        elif mode == "cancel" and op == "cancel":
            send({"id": command["target"], "ok": False,
                  "error": {"kind": "other", "code": None, "message": "cancelled"}})
            send({"id": cid, "ok": True, "value": {}})
            send({"event": "log", "text": "cancel handled"})
        else:
            send({"id": cid, "ok": True, "value": {"tools": []}})
    """
)


@pytest.fixture
def fake_driver(tmp_path: Path) -> Callable[..., list[str]]:
    path = tmp_path / "fake_driver.py"
    path.write_text(FAKE_DRIVER, encoding="utf-8")

    def argv(mode: str, *extra: str) -> list[str]:
        return [sys.executable, str(path), mode, *extra]

    return argv


def write_script(tmp_path: Path, name: str, source: str) -> list[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return [sys.executable, str(path)]


NO_TARGET = HttpTarget("http://127.0.0.1:9/mcp")  # the fake drivers never connect anywhere


async def test_driver_that_exits_at_once(tmp_path: Path) -> None:
    source = "import sys\nsys.stderr.write('fatal: no client to drive\\n')\nsys.exit(3)\n"
    argv = write_script(tmp_path, "dies.py", source)
    started = time.monotonic()
    async with driven(argv, hello_timeout=20) as client:
        with anyio.fail_after(BOUND), pytest.raises(ClientError) as caught:
            await client.prepare()
        assert caught.value.kind == "crash"  # the harness's finding, never a report of the client
        assert "code 3" in caught.value.message
        assert time.monotonic() - started < within(15)  # the exit is noticed, not waited out
    assert "fatal: no client to drive" in client.diagnostics
    assert "exited with code 3" in client.diagnostics


async def test_driver_that_never_says_hello(tmp_path: Path) -> None:
    # It reads its stdin to the end, like a driver stuck before its hello.
    argv = write_script(tmp_path, "mute.py", "import sys\nsys.stdin.read()\n")
    async with driven(argv, hello_timeout=0.5) as client:
        started = time.monotonic()
        with anyio.fail_after(BOUND), pytest.raises(ClientError) as caught:
            await client.prepare()
        assert caught.value.kind == "hang"
        assert time.monotonic() - started < within(5)


async def test_garbage_before_the_hello_is_recorded(
    fake_driver: Callable[..., list[str]],
) -> None:
    async with driven(fake_driver("garbage")) as client:
        with anyio.fail_after(BOUND):
            await client.prepare()
            assert client.name == "fake"
            assert client.version == "9"
            assert client.supports == {"stdio", "tools", "cancel"}
            connected = await client.connect(NO_TARGET, ConnectOptions(timeout=5))
            assert connected["serverInfo"] == {"name": "x"}
            assert await client.list_tools() == {"tools": []}
    assert "garbage before the hello" in client.diagnostics
    assert "not a JSON object" in client.diagnostics  # the [1, 2] line


async def test_unknown_error_kind_becomes_other(fake_driver: Callable[..., list[str]]) -> None:
    async with driven(fake_driver("unknown-kind")) as client:
        with anyio.fail_after(BOUND):
            await client.connect(NO_TARGET, ConnectOptions(timeout=5))
            with pytest.raises(ClientError) as caught:
                await client.list_tools()
    assert caught.value.kind == "other"
    assert caught.value.message == "strange failure"
    assert caught.value.code == 7


async def test_hanging_driver_times_out_and_is_killed(
    fake_driver: Callable[..., list[str]],
) -> None:
    client = DriverClient(fake_driver("hang"))
    with anyio.fail_after(BOUND):
        await client.connect(NO_TARGET, ConnectOptions(timeout=0.5))
        started = time.monotonic()
        with pytest.raises(ClientError) as caught:
            await client.list_tools()
        assert (
            caught.value.kind == "hang"
        )  # the driver never replied: a hang, not the client's time-out
        assert time.monotonic() - started < within(15)
    # The harness bounds close() in time; even cut short, it leaves no process behind.
    with anyio.move_on_after(1):
        await client.close()
    await assert_gone(client)


async def test_a_reply_is_matched_by_its_id_as_typed_json(
    fake_driver: Callable[..., list[str]],
) -> None:
    # Command 1 answered as true, 1.0 and "1": none of them is the reply to 1.
    async with driven(fake_driver("retyped-ids")) as client:
        with anyio.fail_after(BOUND), pytest.raises(ClientError) as caught:
            await client.connect(NO_TARGET, ConnectOptions(timeout=0.5))
    assert caught.value.kind == "hang"
    assert client.diagnostics.count("a reply for no pending command") == 3
    assert '{"id": true,' in client.diagnostics  # connect was command 1: `true` was sent


async def test_stderr_lands_in_diagnostics(fake_driver: Callable[..., list[str]]) -> None:
    async with driven(fake_driver("stderr")) as client:
        with anyio.fail_after(BOUND):
            await client.connect(NO_TARGET, ConnectOptions(timeout=5))
            await client.close()
    assert "fake-driver: starting up" in client.diagnostics
    assert "fake-driver: got connect" in client.diagnostics
    assert "fake-driver: got close" in client.diagnostics


async def test_driver_command_that_does_not_exist(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-driver")
    async with driven([missing, "--flag"]) as client:
        with anyio.fail_after(BOUND), pytest.raises(ClientError) as caught:
            await client.prepare()
    assert caught.value.kind == "crash"
    assert missing in caught.value.message


# -- cancellation --------------------------------------------------------------------------------


async def test_cancelling_the_caller_sends_cancel_with_its_target(
    fake_driver: Callable[..., list[str]], tmp_path: Path
) -> None:
    record = tmp_path / "received.jsonl"
    running, handled = anyio.Event(), anyio.Event()

    def on_event(event: ClientEvent) -> None:
        if event.text == "call_tool running":
            running.set()
        elif event.text == "cancel handled":
            handled.set()

    async with driven(fake_driver("cancel", str(record))) as client:
        with anyio.fail_after(BOUND):
            await client.connect(NO_TARGET, ConnectOptions(timeout=5, on_event=on_event))
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "slow", {})
                await running.wait()
                group.cancel_scope.cancel()
            await handled.wait()
            await client.close()
    received = [json.loads(line) for line in record.read_text().splitlines()]
    assert [c["op"] for c in received] == ["connect", "call_tool", "cancel", "close"]
    call, cancel = received[1], received[2]
    assert cancel["target"] == call["id"]
    assert cancel["id"] not in {c["id"] for c in received if c is not cancel}
    # The late replies (the cancelled call's and the cancel's) were expected, not faults.
    assert "a reply for no pending command" not in client.diagnostics


# -- the TypeScript SDK driver (e2e) ------------------------------------------------------------


@pytest.fixture
def ts_driver() -> list[str]:
    missing = ts_sdk_driver_missing()
    if missing is not None:
        pytest.fail(missing)
    return [str(NODE), str(TS_SDK_DRIVER / "driver.mjs")]


@pytest.mark.e2e
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_typescript_sdk_driver_end_to_end(
    ts_driver: list[str], transport: str, tmp_path: Path
) -> None:
    async with driven(ts_driver) as client:
        with mock_target(transport, tmp_path) as target:
            await exercise_tools(client, target)
            with anyio.fail_after(BOUND):
                assert await client.ping() == {}
                await client.close()
        assert client.name == "@modelcontextprotocol/sdk"
        assert client.version.startswith("1.32.")
        assert "2026-07-28" not in client.supports
        # 1.1: tasks through the SDK's experimental task API; listen is a 2026-07-28 request.
        assert "tasks" in client.supports
        assert "listen" not in client.supports
    messages = assert_wire(tmp_path)
    assert messages[0]["id"] == 0  # the SDK numbers its requests from 0


@pytest.mark.e2e
async def test_typescript_sdk_driver_cancels_a_running_call(
    ts_driver: list[str], tmp_path: Path
) -> None:
    async with driven(ts_driver) as client:
        await cancel_hanging_call(client, tmp_path)


@pytest.mark.e2e
async def test_typescript_sdk_driver_times_out(ts_driver: list[str], tmp_path: Path) -> None:
    async with driven(ts_driver) as client:
        await time_out_hanging_call(client, tmp_path)


# -- driver protocol 1.1 ---------------------------------------------------------------------

ECHO_DRIVER = """
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

send({"hello": "mcp-testbench-driver/1.1", "client": {"name": "echo", "version": "1"},
      "supports": ["http", "tools", "set_log_level", "listen", "tasks"], "reuse": True})
for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "listen":
        send({"event": "subscription", "state": "acknowledged",
              "notifications": command["notifications"]})
    send({"id": command["id"], "ok": True, "value": command})  # the command, as received
    if command["op"] == "close":
        break
"""


async def test_operations_of_protocol_1_1_are_sent_as_documented(tmp_path: Path) -> None:
    argv = write_script(tmp_path, "echo_driver.py", ECHO_DRIVER)
    events: list[ClientEvent] = []
    async with driven(argv) as client:
        with anyio.fail_after(BOUND):
            await client.connect(NO_TARGET, ConnectOptions(timeout=5, on_event=events.append))
            assert client.reusable
            assert {"set_log_level", "listen", "tasks"} <= client.supports
            sent = [
                await client.set_log_level("warning"),
                await client.subscribe_resource("file:///a"),
                await client.unsubscribe_resource("file:///a"),
                await client.listen({"toolsListChanged": True}),
                await client.complete(
                    {"type": "ref/prompt", "name": "p"}, {"name": "a", "value": "b"}
                ),
                await client.list_resource_templates(),
                await client.set_roots([{"uri": "file:///r"}]),
                await client.call_tool_as_task("slow", {"x": 1}, task={"ttl": 5}),
                await client.get_task("t"),
                await client.task_result("t"),
                await client.cancel_task("t"),
            ]
            await client.close()
    fields = [{k: v for k, v in command.items() if k != "id"} for command in sent]
    assert fields == [
        {"op": "set_log_level", "level": "warning"},
        {"op": "subscribe_resource", "uri": "file:///a"},
        {"op": "unsubscribe_resource", "uri": "file:///a"},
        {"op": "listen", "notifications": {"toolsListChanged": True}},
        {
            "op": "complete",
            "ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "a", "value": "b"},
        },
        {"op": "list_resource_templates"},
        {"op": "set_roots", "roots": [{"uri": "file:///r"}]},
        {"op": "call_tool", "name": "slow", "arguments": {"x": 1}, "task": {"ttl": 5}},
        {"op": "get_task", "taskId": "t"},
        {"op": "task_result", "taskId": "t"},
        {"op": "cancel_task", "taskId": "t"},
    ]
    subscription = [e for e in events if e.event == "subscription"]
    assert [dict(e.params) for e in subscription] == [
        {"state": "acknowledged", "notifications": {"toolsListChanged": True}}
    ]


ROUTING_DRIVER = """
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

send({"hello": "mcp-testbench-driver/1.1", "client": {"name": "routing", "version": "1"},
      "supports": ["http", "tools", "listen", "listen_routing", "2026-07-28"]})
for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "listen":
        changed = {"event": "notification", "method": "notifications/tools/list_changed",
                   "params": {}}
        send({"event": "subscription", "state": "acknowledged", "notifications": {},
              "listen": command["id"]})
        send({**changed, "listen": command["id"]})
        send({**changed, "listen": 999})
        send(changed)
    send({"id": command["id"], "ok": True, "value": {}})
    if command["op"] == "close":
        break
"""


async def test_events_name_the_listen_they_were_surfaced_under(tmp_path: Path) -> None:
    # 1.1 `listen_routing`: a `listen` field names the listen command; the binding hands
    # the check the key the harness gave that listen, and keeps a name of no listen as is.
    argv = write_script(tmp_path, "routing_driver.py", ROUTING_DRIVER)
    events: list[ClientEvent] = []
    async with driven(argv) as client:
        with anyio.fail_after(BOUND):
            await client.connect(NO_TARGET, ConnectOptions(timeout=5, on_event=events.append))
            await client.listen({"toolsListChanged": True}, subscription=7)
            await client.close()
    assert [(e.event, dict(e.params), e.subscription) for e in events] == [
        ("subscription", {"state": "acknowledged", "notifications": {}}, 7),
        ("notification", {}, 7),
        ("notification", {}, "999 (no listen command has that id)"),
        ("notification", {}, None),
    ]


async def test_authorization_goes_only_to_a_driver_that_declares_auth(tmp_path: Path) -> None:
    argv = write_script(tmp_path, "echo_driver.py", ECHO_DRIVER)
    given = Authorization("someone", "http://127.0.0.1:1/cb")
    async with driven(argv) as client:
        with anyio.fail_after(BOUND):
            connect = await client.connect(
                NO_TARGET, ConnectOptions(timeout=5, authorization=given)
            )
            await client.close()
    assert "auth" not in client.supports
    assert "authorization" not in connect


async def test_a_v1_hello_offers_no_reuse(fake_driver: Callable[..., list[str]]) -> None:
    async with driven(fake_driver("plain")) as client:
        with anyio.fail_after(BOUND):
            await client.prepare()
            assert not client.reusable  # "reuse" means something only in a 1.1 hello
            await client.close()


async def test_python_driver_reset_keeps_the_process_for_a_new_client(tmp_path: Path) -> None:
    async with driven([sys.executable, str(PYTHON_DRIVER)]) as client:
        with mock_target("stdio", tmp_path) as target, anyio.fail_after(BOUND):
            await client.connect(target, ConnectOptions(timeout=5))
            assert client.reusable
            process = client._process
            await client.reset()
            # A new client in the same process: a second connect works, as on a fresh driver.
            await client.connect(target, ConnectOptions(timeout=5))
            assert {t["name"] for t in (await client.list_tools())["tools"]} == TOOL_NAMES
            assert client._process is process
            assert process is not None
            assert process.returncode is None
            await client.close()


def test_a_reusable_driver_keeps_its_process_across_scenarios(tmp_path: Path) -> None:
    """Each scenario runs on an event loop of its own (harness/running/_scenario.py); the pool keeps a
    reusable driver's process on a loop of its own, and each scenario gets a new client
    in it; closing the pool ends the process."""
    from harness.clients._driver import PooledDriver

    pool = DriverPool([sys.executable, str(PYTHON_DRIVER)])
    seen: list[tuple[int, frozenset[str]]] = []

    async def scenario() -> None:
        events: list[ClientEvent] = []
        client = pool.client()
        assert isinstance(client, PooledDriver)
        with mock_target("stdio", tmp_path) as target, anyio.fail_after(BOUND):
            await client.prepare()
            await client.connect(target, ConnectOptions(timeout=5, on_event=events.append))
            names = {t["name"] for t in (await client.list_tools())["tools"]}
            await client.close()
        process = pool._kept[0].process
        assert process is not None
        seen.append((process.pid, frozenset(names)))

    try:
        for _ in range(2):
            anyio.run(scenario)  # a loop per scenario, as the harness runs them
        assert seen[0][0] == seen[1][0], "the second scenario got a new process"
        assert seen[0][1] == seen[1][1] == TOOL_NAMES
        assert pool.reuse is True
    finally:
        process = pool._kept[0].process if pool._kept else None
        pool.close()
    assert process is not None
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)  # ended and reaped by close()


def test_scenario_runs_give_the_kept_driver_back_to_the_pool() -> None:
    """Through `execute()`, which reads the client's diagnostics after closing it: that
    read must not take the process kept for the next scenario (it stranded it, alive,
    and started a process per scenario)."""
    from harness.running._scenario import execute
    from harness.suite import SCENARIOS

    scenario = next(s for s in SCENARIOS if s.id == "lifecycle-handshake")
    pool = DriverPool([sys.executable, str(PYTHON_DRIVER)])
    kept: list[Any] = []  # the pool's processes
    try:
        for _ in range(2):
            run = execute(scenario, REVISION, "stdio", pool.client, op_timeout=5)
            assert run.harness_error is None
            assert all(o.ok for o in run.operations), run.operations
            kept.append(pool._kept[0])
            assert len(pool._kept) == 1
        assert kept[0] is kept[1], "the second scenario started a driver of its own"
    finally:
        pool.close()
    process = kept[0].process
    assert process is not None
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)  # the one process, ended and reaped by close()


async def one_scenario(pool: DriverPool) -> None:
    """What a scenario asks of its pooled driver client here: start it (or take a kept
    process), connect, and close it whatever happened, each step bounded."""
    client = pool.client()
    try:
        with anyio.fail_after(BOUND):
            await client.prepare()
            await client.connect(NO_TARGET, ConnectOptions(timeout=5))
    finally:
        with anyio.fail_after(BOUND):
            await client.close()


def test_a_driver_without_reuse_gets_a_process_per_scenario(
    fake_driver: Callable[..., list[str]],
) -> None:
    pool = DriverPool(fake_driver("plain"))
    try:
        anyio.run(one_scenario, pool)
        assert pool.reuse is False
        assert not pool._kept
        assert isinstance(pool.client(), DriverClient)  # the plain binding from now on
    finally:
        pool.close()


# A v1 driver that notes each start in the file it is given, and prints the hello of its
# second argument ("same": always the same; "counting": its version counts the starts).
COUNTING_DRIVER = """
import json, sys

starts_file, hello_kind = sys.argv[1], sys.argv[2]
with open(starts_file, "a") as starts:
    starts.write("started\\n")
with open(starts_file) as starts:
    count = len(starts.readlines())
version = str(count) if hello_kind == "counting" else "1"
print(json.dumps({"hello": "mcp-testbench-driver/1", "client": {"name": "counted",
      "version": version}, "supports": ["stdio", "tools"]}), flush=True)
for line in sys.stdin:
    command = json.loads(line)
    print(json.dumps({"id": command["id"], "ok": True, "value": {}}), flush=True)
    if command["op"] == "close":
        break
"""


def test_a_run_skipped_by_the_declaration_starts_no_driver_process(tmp_path: Path) -> None:
    """A driver without reuse: the pool knows its hello from the first process, so a run
    the hello does not declare (HTTP, here) is a SKIP without a process of its own."""
    from harness.running._scenario import execute
    from harness.suite import SCENARIOS

    starts = tmp_path / "starts"
    argv = write_script(tmp_path, "counting_driver.py", COUNTING_DRIVER)
    pool = DriverPool([*argv, str(starts), "same"])
    scenario = next(s for s in SCENARIOS if s.id == "lifecycle-handshake")
    try:
        first = execute(scenario, REVISION, "stdio", pool.client, op_timeout=5)
        assert first.supports == {"stdio", "tools"}
        skipped = [execute(scenario, REVISION, "http", pool.client, op_timeout=5) for _ in "ab"]
        assert all(run.supports == {"stdio", "tools"} for run in skipped)
        assert all(not run.operations for run in skipped)  # nothing was asked of the client
        assert starts.read_text().count("started") == 1, "a skipped run started the driver"
        again = execute(scenario, REVISION, "stdio", pool.client, op_timeout=5)
        assert [o.op for o in again.operations][:1] == ["connect"]
        assert again.operations[0].ok, again.operations[0].error
        assert starts.read_text().count("started") == 2  # a run that needs it starts one
    finally:
        pool.close()


# A 1.1 driver that offers reuse and notes in the file it is given when each process
# starts, when it is asked to close, and when it exits (a while after the close: the
# interpreter's tear-down). Before its hello it writes its pid to the FIFO it may be given.
NOTING_DRIVER = """
import json, os, sys, time

notes_file = sys.argv[1]
def note(what):
    with open(notes_file, "a") as notes:
        notes.write(f"{what} {os.getpid()}\\n")
note("started")
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as fifo:
        fifo.write(str(os.getpid()))
    time.sleep(60)
print(json.dumps({"hello": "mcp-testbench-driver/1.1", "client": {"name": "noting",
      "version": "1"}, "supports": ["stdio", "tools"], "reuse": True}), flush=True)
for line in sys.stdin:
    command = json.loads(line)
    if command["op"] == "close":
        note("closing")
    print(json.dumps({"id": command["id"], "ok": True, "value": {}}), flush=True)
    if command["op"] == "close":
        break
time.sleep(0.5)
note("exited")
"""


def test_warmed_driver_processes_serve_the_first_scenarios(tmp_path: Path) -> None:
    """`warm` starts the processes ahead of the scenarios, which take them instead of
    starting their own; closing the pool closes its processes all at once (each asked to
    close before any has exited), not one after the other."""
    notes = tmp_path / "notes"
    pool = DriverPool([*write_script(tmp_path, "noting_driver.py", NOTING_DRIVER), str(notes)])

    async def two_scenarios_at_once() -> None:
        clients = [pool.client(), pool.client()]
        with anyio.fail_after(BOUND):
            for client in clients:
                await client.prepare()
                await client.connect(NO_TARGET, ConnectOptions(timeout=5))
            for client in clients:
                await client.close()

    try:
        pool.warm(0)  # a worker whose share is empty: nothing starts
        assert pool._host is None
        pool.warm(2)
        anyio.run(two_scenarios_at_once)
        assert len(pool._kept) == 2
    finally:
        pool.close()
    lines = notes.read_text().split("\n")
    assert sum(line.startswith("started") for line in lines) == 2, lines  # the warmed two
    closing = [n for n, line in enumerate(lines) if line.startswith("closing")]
    exited = [n for n, line in enumerate(lines) if line.startswith("exited")]
    assert len(closing) == len(exited) == 2, lines
    assert max(closing) < min(exited), f"closed one after the other: {lines}"


def test_a_warmed_start_that_fails_is_the_error_of_the_scenario_that_takes_it(
    tmp_path: Path,
) -> None:
    pool = DriverPool(write_script(tmp_path, "exits.py", "import sys\nsys.exit(3)\n"))
    try:
        pool.warm(1)
        with pytest.raises(ClientError) as caught:
            anyio.run(one_scenario, pool)
    finally:
        pool.close()
    assert caught.value.kind == "crash"
    assert "exited (code 3)" in caught.value.message


def test_closing_the_pool_while_a_warmed_driver_starts_ends_its_process(tmp_path: Path) -> None:
    """A warmed process that has not said hello yet when the run ends (no scenario took
    it) does not outlive the pool."""
    import select

    fifo = tmp_path / "pid"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    argv = write_script(tmp_path, "noting_driver.py", NOTING_DRIVER)
    pool = DriverPool([*argv, str(tmp_path / "notes"), str(fifo)])
    try:
        pool.warm(1)
        ready, _, _ = select.select([reader], [], [], BOUND)
        assert ready, "the warmed driver did not start"
        pid = int(os.read(reader, 64))
    finally:
        os.close(reader)
        pool.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # ended and reaped by close()


def test_a_hello_that_changes_between_processes_is_a_clear_error(tmp_path: Path) -> None:
    argv = write_script(tmp_path, "counting_driver.py", COUNTING_DRIVER)
    pool = DriverPool([*argv, str(tmp_path / "starts"), "counting"])
    try:
        anyio.run(one_scenario, pool)  # the first process: its hello is the one the pool keeps
        with pytest.raises(ClientError) as caught:
            anyio.run(one_scenario, pool)
    finally:
        pool.close()
    assert caught.value.kind == "other"
    assert "hello changed between processes" in caught.value.message
    assert '"version": "1"' in caught.value.message
    assert '"version": "2"' in caught.value.message


SESSIONS_HELLO = {
    "hello": "mcp-testbench-driver/1.1",
    "client": {"name": "sessions", "version": "1"},
    "supports": ["stdio", "tools"],
    "reuse": True,
    "sessions": 2,
}
# A 1.1 driver that prints the hello it is given (SESSIONS_HELLO) and notes each start in
# the file it is given. `connect` answers with its pid and the session, after a log event
# that names the session (with "stray": a session no command named). With "fail-reset",
# the reset of session 1 fails.
SESSIONS_DRIVER = """
import json, os, sys

notes_file, mode, hello = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with open(notes_file, "a") as notes:
    notes.write(f"started {os.getpid()}\\n")
def write(message):
    print(json.dumps(message), flush=True)
write(hello)
for line in sys.stdin:
    command = json.loads(line)
    op, session = command["op"], command.get("session")
    value = {}
    if op == "connect":
        write({"event": "log", "text": f"connected {session}",
               "session": 99 if mode == "stray" else session})
        value = {"pid": os.getpid(), "session": session}
    if op == "reset" and session == 1 and mode == "fail-reset":
        write({"id": command["id"], "ok": False, "error": {"kind": "other", "message": "no"}})
        continue
    write({"id": command["id"], "ok": True, "value": value})
    if op == "close":
        break
"""


def sessions_pool(tmp_path: Path, mode: str = "plain") -> tuple[DriverPool, Path]:
    notes = tmp_path / "notes"
    argv = write_script(tmp_path, "sessions_driver.py", SESSIONS_DRIVER)
    hello = json.dumps(SESSIONS_HELLO)
    return DriverPool([*argv, str(notes), mode, hello], hello=SESSIONS_HELLO), notes


async def connected(pool: DriverPool, count: int) -> list[tuple[Any, dict[str, Any], list[str]]]:
    """`count` scenarios' clients of the pool, connected at once: each with its connect
    value and the log events it was given."""
    clients = [pool.client() for _ in range(count)]
    logs: list[list[str]] = [[] for _ in clients]
    with anyio.fail_after(BOUND):
        for client in clients:
            await client.prepare()
        values = []
        for client, seen in zip(clients, logs, strict=True):

            def note(event: ClientEvent, seen: list[str] = seen) -> None:
                seen.append(event.text)

            options = ConnectOptions(timeout=5, on_event=note)
            values.append(await client.connect(NO_TARGET, options))  # its events came first
    return list(zip(clients, values, logs, strict=True))


def test_a_driver_with_sessions_holds_several_scenarios_in_one_process(tmp_path: Path) -> None:
    """Scenarios at once share a process up to its hello's `sessions`, each its own
    session with its own events; one more starts a second process. Warming counts
    sessions, not scenarios."""
    pool, notes = sessions_pool(tmp_path)

    async def three_at_once() -> list[tuple[Any, dict[str, Any], list[str]]]:
        scenarios = await connected(pool, 3)
        with anyio.fail_after(BOUND):
            for client, _value, _logs in scenarios:
                await client.close()
        return scenarios

    try:
        pool.warm(2)  # two scenarios: one process
        scenarios = anyio.run(three_at_once)
        assert len(pool._kept) == 2
        assert all(channel.reserved == 0 for channel in pool._kept)
    finally:
        pool.close()
    pids = [value["pid"] for _client, value, _logs in scenarios]
    assert pids[0] == pids[1] != pids[2], pids
    assert [value["session"] for _client, value, _logs in scenarios] == [1, 2, 1]
    for _client, value, logs in scenarios:
        assert logs == [f"connected {value['session']}"]  # its own event, no other's
    assert notes.read_text().count("started") == 2


def test_a_pool_without_a_hello_warms_by_the_first_processs_hello(tmp_path: Path) -> None:
    """A worker of an xdist run knows no hello when it warms (the controller checks the
    driver beside its start): the first process's hello says how many scenarios one
    holds. Five scenarios, two sessions a process: three processes, not five."""
    argv = write_script(tmp_path, "sessions_driver.py", SESSIONS_DRIVER)
    pool = DriverPool([*argv, str(tmp_path / "notes"), "plain", json.dumps(SESSIONS_HELLO)])
    try:
        pool.warm(5)
        assert pool.hello == SESSIONS_HELLO
        assert len(pool._kept) == 3  # the first, then two more
    finally:
        pool.close()


def test_warming_without_a_hello_waits_for_the_first_at_most_its_bound(tmp_path: Path) -> None:
    """A first process that never says hello holds the warm-up for its bound only, and
    no more start: the scenario that takes it reports the driver's failure."""
    pool = DriverPool(write_script(tmp_path, "mute.py", "import sys\nsys.stdin.read()\n"))
    try:
        start = time.monotonic()
        pool.warm(3, hello_bound=0.5)
        # At least the bound (less a hair: a timed wait may end just before it).
        assert 0.45 <= time.monotonic() - start < within(0.5 + BOUND / 4)
        assert pool.hello is None
        assert len(pool._kept) == 1
    finally:
        pool.close()


def test_an_event_for_no_session_reaches_nobody_and_is_noted(tmp_path: Path) -> None:
    pool, _notes = sessions_pool(tmp_path, "stray")

    async def scenario() -> tuple[list[str], str]:
        [(client, _value, logs)] = await connected(pool, 1)
        diagnostics = client.diagnostics
        with anyio.fail_after(BOUND):
            await client.close()
        return logs, diagnostics

    try:
        logs, diagnostics = anyio.run(scenario)
    finally:
        pool.close()
    assert logs == []
    assert "an event for no session" in diagnostics
    assert '"session": 99' in diagnostics


def test_a_failed_reset_retires_a_shared_process_once_its_last_scenario_ends(
    tmp_path: Path,
) -> None:
    """Session 1's reset fails while session 2 still runs: the process takes no new
    scenario (the next one starts a process), and ends when session 2 is done."""
    pool, notes = sessions_pool(tmp_path, "fail-reset")

    async def scenarios() -> tuple[int, int, Any]:
        (first, one, _), (second, two, _) = await connected(pool, 2)
        with anyio.fail_after(BOUND):
            await first.close()  # its reset fails
            [(third, three, _)] = await connected(pool, 1)
            shared = pool._kept[0]
            assert shared.retired
            assert shared.alive
            await second.close()  # the last scenario of the retired process
            assert not shared.alive
            await third.close()
        assert one["pid"] == two["pid"]
        return one["pid"], three["pid"], shared

    try:
        first_pid, third_pid, shared = anyio.run(scenarios)
        assert shared not in pool._kept
    finally:
        pool.close()
    assert first_pid != third_pid
    assert notes.read_text().count("started") == 2
    with pytest.raises(ProcessLookupError):
        os.kill(first_pid, 0)  # ended and reaped


def test_a_scenario_that_sent_nothing_leaves_its_process_as_it_was(tmp_path: Path) -> None:
    """A run its declaration excludes (a SKIP) takes a client only to read the hello: it
    spends no reset and no session, and its warmed process goes to the next scenario."""
    pool, notes = sessions_pool(tmp_path)

    async def skipped_then_used() -> dict[str, Any]:
        skipped = pool.client()
        assert "tools" in skipped.supports  # the known hello: nothing asked of the driver
        with anyio.fail_after(BOUND):
            await skipped.close()
        [(client, value, _logs)] = await connected(pool, 1)
        with anyio.fail_after(BOUND):
            await client.close()
        return value

    try:
        pool.warm(1)
        value = anyio.run(skipped_then_used)
        [channel] = pool._kept
        assert not channel.retired
        assert channel.reserved == 0
    finally:
        pool.close()
    assert value["session"] == 1
    assert notes.read_text().count("started") == 1
