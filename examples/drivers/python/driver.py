"""An mcp-testbench driver (driver protocol 1.1) around the bundled ReferenceClient.

It is also the template for a driver in any language: read one JSON line from stdin,
carry out the command it names in a task of its own, write one JSON reply line to
stdout. See docs/driver-protocol.md.

    pytest --mcp-driver="python examples/drivers/python/driver.py"
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from harness.clients import (
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    Handlers,
    HttpTarget,
    ReferenceClient,
    SseLegacyTarget,
    StdioTarget,
)

PROTOCOL = "mcp-testbench-driver/1.1"
LINE_LIMIT = 16 * 1024 * 1024  # the harness accepts lines up to 16 MiB


def log(text: str) -> None:
    # stderr is free-form: the harness keeps its tail for failure reports.
    print(f"python-driver: {text}", file=sys.stderr, flush=True)


def target_of(spec: dict[str, Any]) -> StdioTarget | HttpTarget | SseLegacyTarget:
    kind = spec.get("type")
    if kind == "stdio":
        return StdioTarget(tuple(spec["command"]), dict(spec.get("env") or {}))
    if kind == "http":
        return HttpTarget(spec["url"], dict(spec.get("headers") or {}))
    if kind == "sse-legacy":
        return SseLegacyTarget(spec["url"], dict(spec.get("headers") or {}))
    raise ClientError("unsupported", f"unknown transport type {kind!r}")


def failure(kind: str, message: str) -> dict[str, Any]:
    return {"kind": kind, "code": None, "message": message}


def handlers_of(spec: dict[str, Any]) -> Handlers:
    # An absent key means "no canned answer": the client must not declare that capability.
    roots = spec.get("roots")
    return Handlers(spec.get("sampling"), spec.get("elicitation"), tuple(roots) if roots else None)


def authorization_of(spec: dict[str, Any] | None) -> Authorization | None:
    # Sent only to a driver whose `supports` names "auth". The browser step needs nothing
    # from the driver here: the reference client fetches the authorization URL itself
    # without following its redirect and reads the code from the Location.
    if not spec:
        return None
    return Authorization(
        client_name=spec["clientName"],
        redirect_uri=spec["redirectUri"],
        client_id=spec.get("clientId"),
        client_secret=spec.get("clientSecret"),
    )


SESSIONS = 8  # client instances one process holds at once, if the client allows several


class Driver:
    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        # 1.1 sessions: each command names the client instance it is for (None: a harness
        # that sends no session, or a hello that offers none).
        self.clients: dict[Any, ReferenceClient] = {}
        self.running: dict[Any, tuple[Any, asyncio.Task[None]]] = {}  # id -> (session, task)

    def write(self, message: dict[str, Any]) -> None:
        # One JSON object per line, flushed at once: the harness is waiting for it.
        self.out.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
        self.out.flush()

    def client_of(self, session: Any) -> ReferenceClient:
        # A session's first command (its `connect`) makes its client instance.
        if session not in self.clients:
            self.clients[session] = ReferenceClient()
        return self.clients[session]

    def events_of(self, client: ReferenceClient, session: Any) -> Any:
        # Every event names the session of the client that surfaced it.
        tag = {} if session is None else {"session": session}

        def on_event(event: ClientEvent) -> None:
            # Whatever the client surfaces becomes an event line (no id); nothing from a
            # client that a `reset` has thrown away.
            if self.clients.get(session) is not client:
                return
            # 1.1 `listen_routing`: an event surfaced under a subscription names the
            # `listen` command that opened it (the client was given that id as its key).
            routed = {} if event.subscription is None else {"listen": event.subscription}
            if event.event == "notification":
                self.write(
                    {
                        "event": "notification",
                        "method": event.method,
                        "params": event.params,
                        **routed,
                        **tag,
                    }
                )
            elif event.event == "subscription":
                self.write({"event": "subscription", **event.params, **routed, **tag})
            else:
                self.write({"event": "log", "text": event.text, **tag})

        return on_event

    async def reset(self, session: Any) -> dict[str, Any]:
        """1.1 `reset`: close this session's client as `close` would, keep the process; the
        session's next command starts a new client."""
        old = self.clients.pop(session, None)
        if old is not None:
            await old.close()  # its pending requests fail now, so their tasks reply and end
        others = [
            task
            for owner, task in self.running.values()
            if owner == session and task is not asyncio.current_task()
        ]
        if others:
            await asyncio.wait(others, timeout=5)
        return {}

    async def perform(self, command: dict[str, Any]) -> Any:
        """The value of one command; a failure the client surfaced raises ClientError."""
        op, session = command.get("op"), command.get("session")
        if op == "reset":
            return await self.reset(session)
        if op == "cancel":
            # Cancelling the task makes the client cancel its request (notifications/
            # cancelled); the target still replies, from run(). Unknown or finished: no-op.
            _owner, task = self.running.get(command.get("target"), (None, None))
            if task is not None:
                task.cancel()
            return {}
        client = self.client_of(session)
        if op == "connect":
            options = ConnectOptions(
                protocol_version=command.get("protocolVersion"),
                handlers=handlers_of(command.get("handlers") or {}),
                timeout=command.get("timeoutMs", 10_000) / 1000,
                on_event=self.events_of(client, session),
                authorization=authorization_of(command.get("authorization")),
            )
            return await client.connect(target_of(command["transport"]), options)
        if op == "list_tools":
            return await client.list_tools()
        if op == "call_tool" and "task" in command:  # 1.1: a task-augmented call
            timeout_ms = command.get("timeoutMs")
            return await client.call_tool_as_task(
                command["name"],
                command.get("arguments") or {},
                task=command.get("task") or {},
                timeout=None if timeout_ms is None else timeout_ms / 1000,
            )
        if op == "call_tool":
            timeout_ms = command.get("timeoutMs")
            return await client.call_tool(
                command["name"],
                command.get("arguments") or {},
                timeout=None if timeout_ms is None else timeout_ms / 1000,
                progress=bool(command.get("progress")),  # progress arrives as events
            )
        if op == "list_resources":
            return await client.list_resources()
        if op == "read_resource":
            return await client.read_resource(command["uri"])
        if op == "list_prompts":
            return await client.list_prompts()
        if op == "get_prompt":
            return await client.get_prompt(command["name"], command.get("arguments") or {})
        if op == "ping":
            return await client.ping()
        # Driver protocol 1.1: the client decides what it may send (it refuses locally,
        # `unsupported`, what the server did not declare); the driver only passes it on.
        if op == "set_log_level":
            return await client.set_log_level(command["level"])
        if op == "subscribe_resource":
            return await client.subscribe_resource(command["uri"])
        if op == "unsubscribe_resource":
            return await client.unsubscribe_resource(command["uri"])
        if op == "listen":
            return await client.listen(
                command.get("notifications") or {}, subscription=command["id"]
            )
        if op == "complete":
            return await client.complete(
                command["ref"], command["argument"], command.get("context")
            )
        if op == "list_resource_templates":
            return await client.list_resource_templates()
        if op == "set_roots":
            return await client.set_roots(command.get("roots") or [])
        if op == "get_task":
            return await client.get_task(command["taskId"])
        if op == "task_result":
            return await client.task_result(command["taskId"])
        if op == "cancel_task":
            return await client.cancel_task(command["taskId"])
        raise ClientError("unsupported", f"this driver has no op {op!r}")

    async def run(self, command: dict[str, Any]) -> None:
        """Carry out one command and write exactly one reply for it, whatever happens."""
        reply: dict[str, Any] = {"id": command["id"], "ok": False}
        try:
            reply = {"id": command["id"], "ok": True, "value": await self.perform(command)}
        except ClientError as exc:
            reply["error"] = exc.to_json()
        except asyncio.CancelledError:
            # Only a `cancel` command cancels this task. Documented choice: kind "other".
            reply["error"] = failure("other", "cancelled by the harness")
        except Exception as exc:  # a bad command (missing field) or a bug: still a reply
            reply["error"] = failure("other", f"{type(exc).__name__}: {exc}")
        finally:
            self.running.pop(command["id"], None)
        self.write(reply)


async def stdin_lines() -> AsyncIterator[bytes]:
    """stdin's lines, to its end. The harness gives a pipe, which the event loop reads; a
    file or /dev/null (a driver run by hand), which it cannot poll, is read by a thread.
    (asyncio's pipe reader fails on those in a callback and then waits forever.)"""
    loop = asyncio.get_running_loop()
    mode = os.fstat(0).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            yield line
        return
    lines: asyncio.Queue[bytes] = asyncio.Queue()

    def read() -> None:  # a daemon: a terminal's pending read never holds up the exit
        while True:
            line = sys.stdin.buffer.readline(LINE_LIMIT)
            loop.call_soon_threadsafe(lines.put_nowait, line)
            if not line:
                return

    threading.Thread(target=read, name="stdin", daemon=True).start()
    while line := await lines.get():
        yield line


async def main() -> int:
    # stdout carries protocol lines only: keep a private copy of it, and point fd 1 at
    # stderr so that a stray print() from any library cannot corrupt the stream.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    driver = Driver(out)
    client = ReferenceClient()  # asked who it is; each session makes its own
    # The hello comes first, unprompted. `supports` decides which checks run (others SKIP).
    who = {"name": client.name, "version": client.version}
    hello: dict[str, Any] = {"hello": PROTOCOL, "client": who, "supports": sorted(client.supports)}
    # `reuse`: the harness may send `reset` between scenarios and keep this process.
    hello["reuse"] = True
    # `sessions`: several scenarios' clients at once in this process, each command and
    # event naming its own; offered only for a client whose instances share no state.
    if getattr(client, "concurrent_instances", False) is True:
        hello["sessions"] = SESSIONS
    driver.write(hello)
    close_id: Any = None
    async for line in stdin_lines():
        try:
            command = json.loads(line)
            command_id = command["id"]
        except (ValueError, TypeError, KeyError):
            log(f"ignored a line that is not a command: {line[:200]!r}")
            continue
        if command.get("op") == "close":
            close_id = command_id
            break
        # Each command runs in a task of its own: a slow call_tool never blocks a ping,
        # and a `cancel` can reach it while it runs.
        task = asyncio.create_task(driver.run(command))
        driver.running[command_id] = (command.get("session"), task)
    # `close`, or the end of stdin (the harness is gone): release everything, then exit 0.
    for each in list(driver.clients.values()):
        await each.close()  # pending requests fail now, so their tasks reply and end
    if driver.running:
        await asyncio.wait([task for _session, task in driver.running.values()], timeout=5)
    if close_id is not None:
        driver.write({"id": close_id, "ok": True, "value": {}})
    return 0


def run() -> None:
    """Run the driver, then end the process without tearing the interpreter down: once
    the client is closed and the last reply is written, nothing is left to release, and
    freeing every module of a client library took a sixth of the process's CPU (the
    harness waits for a driver's exit at the end of each run)."""
    code = asyncio.run(main())
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
