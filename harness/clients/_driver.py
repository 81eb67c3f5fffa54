"""The driver binding: the client contract over a subprocess speaking driver protocol 1.1
(or v1: a v1 driver names no 1.1 operation in `supports`, so none is ever sent to it).

A driver wraps a client written in any language (docs/driver-protocol.md). It prints a
hello line, then answers one JSON command per line with a reply carrying the same id, and
may print event lines at any time; a 1.1 driver may offer reuse (a process kept across
scenarios) and sessions (several scenarios' client instances in one process, each command
and event naming its session). Everything it writes to stderr is kept (the last lines)
for failure reports and never parsed. Every wait is bounded: a driver that hangs, dies or
prints garbage fails the check in question, never the suite.

The binding runs on asyncio (the harness drives every scenario on asyncio).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import signal
import threading
from collections import deque
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from harness.clients._contract import (
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    HttpTarget,
    SseLegacyTarget,
    StdioTarget,
    Target,
)

__all__ = ["DRIVER_PROTOCOL", "DRIVER_PROTOCOLS", "DriverClient", "DriverPool", "PooledDriver"]

_UNGREETED_GRACE = 0.5
"""Seconds a driver that never said hello gets to exit after its stdin closes."""
_HELLO_TIMEOUT = 20.0
"""Seconds a scenario's driver process has for its hello (docs/driver-protocol.md)."""

T = TypeVar("T")

DRIVER_PROTOCOL = "mcp-testbench-driver/1.1"
DRIVER_PROTOCOLS = frozenset({"mcp-testbench-driver/1", DRIVER_PROTOCOL})
_KINDS: frozenset[str] = frozenset(
    {"protocol", "transport", "timeout", "unsupported", "tool", "other"}
)
_LINE_LIMIT = 16 * 1024 * 1024


class _Channel:
    """One driver process: its start and hello, the lines both ways, its stderr and its
    end. Each client instance in it is a `DriverClient`; a process whose hello offers
    sessions (1.1 `"sessions": N`) holds up to N of them at once, each command and event
    naming its instance's session."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        hello_timeout: float = _HELLO_TIMEOUT,
        stderr_lines: int = 200,
        known_hello: Mapping[str, Any] | None = None,
    ) -> None:
        self.argv = list(argv)
        self._env = dict(env) if env is not None else None
        self._hello_timeout = hello_timeout
        self.stderr: deque[str] = deque(maxlen=stderr_lines)
        self.process: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 1
        self._known_hello = dict(known_hello) if known_hello is not None else None
        self.hello: dict[str, Any] = dict(known_hello or {})
        self._hello_seen: asyncio.Future[dict[str, Any]] | None = None
        self._starting: asyncio.Task[None] | None = None
        self.exit_note = ""
        # Ids whose replies nobody awaits any more (a cancelled command, a `cancel`): their
        # late replies are expected, not a driver fault worth a diagnostics line.
        self._abandoned: set[int] = set()
        # Who gets the events of each session (None: a driver without sessions).
        self.clients: dict[int | None, DriverClient] = {}
        self._next_session = 1
        self.reserved = 0
        """Client instances a pool has placed in this process and not yet given back."""
        self.retired = False
        """Set when a session's `reset` failed: no new instance goes to this process."""

    @property
    def reusable(self) -> bool:
        """Whether the hello offers the process for reuse (1.1 `"reuse": true`)."""
        return _offers_reuse(self.hello)

    @property
    def capacity(self) -> int:
        return _capacity(self.hello)

    @property
    def has_room(self) -> bool:
        """Whether a pool may place one more client instance here."""
        return not self.retired and self.reserved < self.capacity

    @property
    def alive(self) -> bool:
        process = self.process
        return not self.exit_note and process is not None and process.returncode is None

    @property
    def failed(self) -> bool:
        """Whether the process is gone, or its start failed."""
        starting = self._starting
        started_badly = (
            starting is not None
            and starting.done()
            and (starting.cancelled() or starting.exception() is not None)
        )
        return bool(self.exit_note) or started_badly

    def new_session(self, client: DriverClient) -> int | None:
        """A session for `client` once the hello is known: a fresh number (never reused in
        this process, so a late event of an ended instance reaches no newer one) when the
        driver offers sessions, else None."""
        session = None
        if self.capacity > 1:
            session, self._next_session = self._next_session, self._next_session + 1
        self.clients[session] = client
        return session

    def greeted(self) -> bool:
        """Whether this process printed its hello (and so speaks the protocol)."""
        seen = self._hello_seen
        return seen is not None and seen.done() and not seen.cancelled() and not seen.exception()

    async def prepare(self) -> None:
        """Start the driver and read its hello, once: a second call, or one made while the
        start is under way (a pool warms processes before scenarios take them), waits for
        the same start and sees how it went."""
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self._start())
        await asyncio.shield(self._starting)

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self._hello_seen = loop.create_future()
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            raise ClientError(
                "crash", f"cannot start the driver {self.argv[0]!r}: {exc.strerror or exc}"
            ) from None
        self._tasks = [
            loop.create_task(self._read_stdout()),
            loop.create_task(self._read_stderr()),
        ]
        try:
            self.hello = await asyncio.wait_for(
                asyncio.shield(self._hello_seen), self._hello_timeout
            )
        except asyncio.TimeoutError:
            self._hello_seen.cancel()  # a later exit must not leave an unretrieved exception
            raise ClientError(
                "hang", f"the driver printed no hello line within {self._hello_timeout:g} s"
            ) from None
        if self._known_hello is not None and self.hello != self._known_hello:
            raise ClientError(
                "other",
                f"the driver's hello changed between processes of the same command: first "
                f"{json.dumps(self._known_hello, sort_keys=True)}, now "
                f"{json.dumps(self.hello, sort_keys=True)}",
            )

    async def _read_stdout(self) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        stream = self.process.stdout
        while True:
            try:
                line = await stream.readline()
            except (ValueError, asyncio.LimitOverrunError):
                self.stderr.append("[mcp-testbench] the driver wrote a line over 16 MiB; ignored")
                continue
            if not line:
                break
            self._dispatch(line)
        code = await self.process.wait()
        self.exit_note = f"[mcp-testbench] the driver exited with code {code}"
        failure = ClientError("crash", f"the driver exited (code {code}) before replying")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(failure)
        if self._hello_seen is not None and not self._hello_seen.done():
            self._hello_seen.set_exception(
                ClientError("crash", f"the driver exited (code {code}) without a hello line")
            )

    async def _read_stderr(self) -> None:
        assert self.process is not None
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    def _dispatch(self, line: bytes) -> None:
        try:
            value = json.loads(line)
        except ValueError:
            self.stderr.append(
                f"[mcp-testbench] not a JSON line on the driver's stdout: {line[:200]!r}"
            )
            return
        if not isinstance(value, dict):
            self.stderr.append(
                f"[mcp-testbench] not a JSON object on the driver's stdout: {line[:200]!r}"
            )
            return
        if "hello" in value and self._hello_seen is not None and not self._hello_seen.done():
            if value.get("hello") not in DRIVER_PROTOCOLS:
                self._hello_seen.set_exception(
                    ClientError(
                        "other",
                        f"the driver speaks {value.get('hello')!r}, not "
                        f"{' or '.join(sorted(DRIVER_PROTOCOLS))}",
                    )
                )
            else:
                self._hello_seen.set_result(value)
            return
        if "event" in value and "id" not in value:
            self._route(value, line)
            return
        reply_id = value.get("id")
        if type(reply_id) is not int:  # typed JSON: true, 1.0 and "1" are not the id 1
            reply_id = None
        if reply_id is not None and reply_id in self._abandoned:
            self._abandoned.discard(reply_id)
            return
        future = self._pending.get(reply_id) if reply_id is not None else None
        if future is None or future.done():
            self.stderr.append(f"[mcp-testbench] a reply for no pending command: {line[:200]!r}")
            return
        future.set_result(value)

    def _route(self, value: Mapping[str, Any], line: bytes) -> None:
        """An event to the client instance of its session."""
        session = value.get("session") if self.capacity > 1 else None
        known = session is None or (isinstance(session, int) and not isinstance(session, bool))
        client = self.clients.get(session) if known else None
        if client is None:
            if self.capacity > 1:  # a driver without sessions may surface events any time
                self.stderr.append(f"[mcp-testbench] an event for no session: {line[:200]!r}")
            return
        client._event(value)

    async def command(self, op: str, fields: Mapping[str, Any], timeout: float) -> Any:
        """Send one command and wait for its reply; cancelling the caller cancels the
        command (a `cancel` for it, in the same session)."""
        await self.prepare()
        process = self.process
        assert process is not None
        assert process.stdin is not None
        if self.exit_note:  # the driver is gone: no reply can come
            raise ClientError("crash", f"the driver has exited; cannot send {op}")
        command_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = future
        line = json.dumps({"id": command_id, "op": op, **fields}, ensure_ascii=False) + "\n"
        try:
            process.stdin.write(line.encode("utf-8"))
            await process.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            self._pending.pop(command_id, None)
            raise ClientError("crash", f"cannot write to the driver: {exc}") from None
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            raise ClientError(
                "hang", f"the driver did not reply to {op} within {timeout:g} s"
            ) from None
        except asyncio.CancelledError:
            # Cancelling the caller is how the harness asks for a cancellation.
            if op not in ("cancel", "close") and process.returncode is None:
                cancel: dict[str, Any] = {"id": self._next_id, "op": "cancel", "target": command_id}
                if "session" in fields:
                    cancel["session"] = fields["session"]
                self._abandoned.update((command_id, self._next_id))
                self._next_id += 1
                with contextlib.suppress(Exception):
                    process.stdin.write((json.dumps(cancel) + "\n").encode())
            raise
        finally:
            self._pending.pop(command_id, None)

    def next_id(self) -> int:
        """The id the next command will carry (a `listen` registers it before sending)."""
        return self._next_id

    async def close(self) -> None:
        """Ask the driver to close, then make sure it is gone: stdin closed, SIGTERM, SIGKILL."""
        starting = self._starting
        if starting is not None and not starting.done():
            # A start nobody waits for any more (a warmed process at the run's end): it
            # stops where it is; a process it made is ended below like any other.
            starting.cancel()
            await asyncio.wait([starting])
            if self._hello_seen is not None and not self._hello_seen.done():
                self._hello_seen.cancel()  # nobody will read what the exit would set
        if starting is not None and not starting.cancelled():
            starting.exception()  # seen here: its waiter, if any, reported it
        process = self.process
        if process is None:
            return
        try:
            # Only a driver that said hello speaks the protocol and can answer `close`, and
            # has work of its own to finish once its stdin closes; one that never did gets
            # a moment, not seconds, before SIGTERM.
            greeted = self.greeted()
            if process.returncode is None and not self.exit_note and greeted:
                with contextlib.suppress(ClientError):
                    await self.command("close", {}, 10.0)
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None and process.returncode is None:
                    process.send_signal(sig)
                try:
                    bound = 5.0 if greeted or sig is not None else _UNGREETED_GRACE
                    await asyncio.wait_for(process.wait(), bound)
                    break
                except asyncio.TimeoutError:
                    continue
            # Let the readers reach the end of both pipes: the last stderr lines (say, a
            # crash's traceback) are the ones a failure report needs.
            await asyncio.wait(self._tasks, timeout=2.0)
        except ProcessLookupError:
            pass
        finally:
            # Also when close() itself is cancelled (the harness bounds it in time): no
            # driver may outlive its client.
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)


class DriverClient:
    """A client under test behind a driver process (`argv`, run without a shell): one
    client instance, in a process of its own or (`_on`) in one it shares with others."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        hello_timeout: float = _HELLO_TIMEOUT,
        stderr_lines: int = 200,
        known_hello: Mapping[str, Any] | None = None,
    ) -> None:
        """`known_hello`: the hello an earlier process of the same command printed. The
        client then says who it is and what it supports before it starts, so the harness
        can SKIP a run the declaration excludes without starting a process for it. The new
        process must print the same hello."""
        if not argv:
            raise ValueError("the driver command is empty")
        self._attach(
            _Channel(
                argv,
                env=env,
                hello_timeout=hello_timeout,
                stderr_lines=stderr_lines,
                known_hello=known_hello,
            )
        )

    def _attach(self, channel: _Channel) -> None:
        self._channel = channel
        self._session: int | None = None
        self._has_session = False
        self._options = ConnectOptions()
        # `listen` command ids -> the harness's subscription key (`listen_routing`): a
        # driver names the command on the events it surfaces under that subscription.
        self._listens: dict[int, int | None] = {}
        self._in_flight = 0  # this instance's commands awaiting their replies

    @classmethod
    def _on(cls, channel: _Channel) -> DriverClient:
        """A new client instance in a process that another may share (a pool's)."""
        client = cls.__new__(cls)
        client._attach(channel)
        return client

    # -- identity ---------------------------------------------------------------------------

    @property
    def argv(self) -> list[str]:
        return self._channel.argv

    @property
    def name(self) -> str:
        client = self._channel.hello.get("client") or {}
        return str(client.get("name") or os.path.basename(self.argv[0]))

    @property
    def version(self) -> str:
        return str((self._channel.hello.get("client") or {}).get("version") or "?")

    @property
    def supports(self) -> frozenset[str]:
        return frozenset(str(s) for s in self._channel.hello.get("supports") or [])

    @property
    def reusable(self) -> bool:
        """Whether the hello offers the process for reuse (1.1 `"reuse": true`)."""
        return self._channel.reusable

    @property
    def diagnostics(self) -> str:
        """The driver's last stderr lines, and how it ended, for failure reports (a
        process with sessions: every instance's lines)."""
        channel = self._channel
        return "\n".join([*channel.stderr, *([channel.exit_note] if channel.exit_note else [])])

    # -- process ------------------------------------------------------------------------------

    @property
    def hello(self) -> dict[str, Any]:
        """The hello line as the driver printed it (or the known one, before the start)."""
        return dict(self._channel.hello)

    @property
    def _process(self) -> asyncio.subprocess.Process | None:
        return self._channel.process

    async def prepare(self) -> None:
        """Start the driver and read its hello (the harness calls this before anything)."""
        await self._channel.prepare()

    def _event(self, value: Mapping[str, Any]) -> None:
        if self._options.on_event is None:
            return
        subscription = self._subscription_of(value.get("listen"))
        if value.get("event") == "notification":
            params = value.get("params")
            method = str(value.get("method", ""))
            event = ClientEvent(
                "notification",
                method,
                params if isinstance(params, dict) else {},
                subscription=subscription,
            )
        elif value.get("event") == "subscription":
            fields = {k: v for k, v in value.items() if k not in ("event", "listen", "session")}
            event = ClientEvent("subscription", params=fields, subscription=subscription)
        else:
            event = ClientEvent("log", text=str(value.get("text", value)))
        # A failing callback must not end the reader task (every later reply would be lost).
        with contextlib.suppress(Exception):
            self._options.on_event(event)

    def _subscription_of(self, listen: Any) -> int | str | None:
        """The harness's key for the `listen` command an event names (1.1, `listen_routing`);
        a name that is no listen command is kept as what it is, so a check can say so."""
        if listen is None:
            return None
        if isinstance(listen, int) and not isinstance(listen, bool) and listen in self._listens:
            return self._listens[listen]
        return f"{json.dumps(listen)} (no listen command has that id)"

    # -- commands ---------------------------------------------------------------------------------

    async def _command(
        self,
        op: str,
        fields: Mapping[str, Any],
        timeout: float,
        *,
        listen_key: int | None = None,
    ) -> Any:
        channel = self._channel
        await channel.prepare()
        if not self._has_session:  # the hello says whether commands name a session
            self._session, self._has_session = channel.new_session(self), True
        if self._session is not None:
            fields = {**fields, "session": self._session}
        if op == "listen":  # before the line goes out: its events may come before its reply
            self._listens[channel.next_id()] = listen_key
        self._in_flight += 1
        try:
            reply = await channel.command(op, fields, timeout)
        finally:
            self._in_flight -= 1
        if reply.get("ok") is True:
            return reply.get("value")
        raw_error = reply.get("error")
        error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
        kind = error.get("kind")
        code = error.get("code")
        raise ClientError(
            kind if kind in _KINDS else "other",
            str(
                error.get("message") or f"the driver reported a failure without a message: {reply}"
            ),
            code if isinstance(code, int) and not isinstance(code, bool) else None,
        )

    def _timeout(self, extra: float | None = None) -> float:
        return (extra or self._options.timeout) * 2 + 5

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        self._options = options
        fields: dict[str, Any] = {
            "transport": _transport(target),
            "timeoutMs": int(options.timeout * 1000),
        }
        if options.protocol_version:
            fields["protocolVersion"] = options.protocol_version
        handlers = {
            key: value
            for key, value in (
                ("sampling", options.handlers.sampling),
                ("elicitation", options.handlers.elicitation),
                (
                    "roots",
                    list(options.handlers.roots) if options.handlers.roots is not None else None,
                ),
            )
            if value is not None
        }
        if handlers:
            fields["handlers"] = handlers
        if options.authorization is not None:
            await self.prepare()  # the hello says whether the driver takes `authorization`
            if "auth" in self.supports:
                fields["authorization"] = _authorization(options.authorization)
        return _object(await self._command("connect", fields, self._timeout()))

    async def list_tools(self) -> dict[str, Any]:
        return _object(await self._command("list_tools", {}, self._timeout()))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        if timeout is not None:
            fields["timeoutMs"] = int(timeout * 1000)
        if progress:
            fields["progress"] = True
        return _object(await self._command("call_tool", fields, self._timeout(timeout)))

    async def list_resources(self) -> dict[str, Any]:
        return _object(await self._command("list_resources", {}, self._timeout()))

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return _object(await self._command("read_resource", {"uri": uri}, self._timeout()))

    async def list_prompts(self) -> dict[str, Any]:
        return _object(await self._command("list_prompts", {}, self._timeout()))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        fields = {"name": name, "arguments": dict(arguments or {})}
        return _object(await self._command("get_prompt", fields, self._timeout()))

    async def ping(self) -> dict[str, Any]:
        return _object(await self._command("ping", {}, self._timeout()))

    # -- driver protocol 1.1 (sent only when `supports` names the operation) ---------------

    async def set_log_level(self, level: str) -> dict[str, Any]:
        return _object(await self._command("set_log_level", {"level": level}, self._timeout()))

    async def subscribe_resource(self, uri: str) -> dict[str, Any]:
        return _object(await self._command("subscribe_resource", {"uri": uri}, self._timeout()))

    async def unsubscribe_resource(self, uri: str) -> dict[str, Any]:
        fields = {"uri": uri}
        return _object(await self._command("unsubscribe_resource", fields, self._timeout()))

    async def listen(
        self, notifications: Mapping[str, Any], *, subscription: int | None = None
    ) -> dict[str, Any]:
        fields = {"notifications": dict(notifications)}
        command = self._command("listen", fields, self._timeout(), listen_key=subscription)
        return _object(await command)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context is not None:
            fields["context"] = dict(context)
        return _object(await self._command("complete", fields, self._timeout()))

    async def list_resource_templates(self) -> dict[str, Any]:
        return _object(await self._command("list_resource_templates", {}, self._timeout()))

    async def set_roots(self, roots: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        fields = {"roots": [dict(root) for root in roots]}
        return _object(await self._command("set_roots", fields, self._timeout()))

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "name": name,
            "arguments": dict(arguments or {}),
            "task": dict(task or {}),
        }
        if timeout is not None:
            fields["timeoutMs"] = int(timeout * 1000)
        return _object(await self._command("call_tool", fields, self._timeout(timeout)))

    async def get_task(self, task_id: str) -> dict[str, Any]:
        return _object(await self._command("get_task", {"taskId": task_id}, self._timeout()))

    async def task_result(self, task_id: str) -> dict[str, Any]:
        return _object(await self._command("task_result", {"taskId": task_id}, self._timeout()))

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        return _object(await self._command("cancel_task", {"taskId": task_id}, self._timeout()))

    async def reset(self) -> None:
        """1.1, only for a `reusable` driver: end this client, keep the process; the next
        `connect` makes a new client instance in it."""
        if not self.reusable:
            raise ClientError("unsupported", "the driver's hello offers no reuse")
        await self._command("reset", {}, 10.0)
        self._options = ConnectOptions()  # the old client's events reach nobody
        self._listens.clear()
        if self._session is not None:  # a later event naming it is the driver's fault
            self._channel.clients.pop(self._session, None)

    async def close(self) -> None:
        """End the driver process (with any other instance in it): `close`, then stdin
        closed, SIGTERM, SIGKILL, each step bounded."""
        await self._channel.close()


def _authorization(authorization: Authorization) -> dict[str, Any]:
    """The connect command's `authorization` (docs/driver-protocol.md, "Headless
    authorization"): camelCase, absent members left out."""
    fields = {
        "clientName": authorization.client_name,
        "redirectUri": authorization.redirect_uri,
        "clientId": authorization.client_id,
        "clientSecret": authorization.client_secret,
    }
    return {key: value for key, value in fields.items() if value is not None}


def _transport(target: Target) -> dict[str, Any]:
    if isinstance(target, StdioTarget):
        return {"type": "stdio", "command": list(target.command), "env": dict(target.env)}
    if isinstance(target, HttpTarget):
        return {"type": "http", "url": target.url, "headers": dict(target.headers)}
    assert isinstance(target, SseLegacyTarget)
    return {"type": "sse-legacy", "url": target.url}


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ClientError("crash", f"the driver's value is not a JSON object: {value!r}")
    return value


class _Host:
    """A thread with an event loop of its own, where kept driver processes live: each
    scenario runs on a loop of its own (harness/running/_scenario.py), and an asyncio subprocess
    belongs to the loop that started it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="mcp-testbench drivers", daemon=True
        )
        self._thread.start()

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the host loop; cancelling the caller cancels it there."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return await asyncio.wrap_future(future)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10.0)
        if not self._thread.is_alive():
            self.loop.close()


class DriverPool:
    """Driver processes kept across scenarios, for a driver whose hello offers reuse
    (1.1 `"reuse": true`): each scenario gets a new client instance (`reset` at its end)
    in a process that stays, and a process whose hello offers sessions (`"sessions": N`)
    holds up to N scenarios' instances at once. A driver that offers no reuse gets a
    process per scenario; that client knows the hello of the command's first process, so
    a run the hello does not declare (a SKIP) needs no process. `close()` ends every kept
    process.

    `hello`: the one the command printed before (the controller's up-front check), so
    the pool knows from the start how many instances a process holds."""

    def __init__(
        self, argv: Sequence[str], *, hello: Mapping[str, Any] | None = None, **options: Any
    ) -> None:
        self.argv = list(argv)
        self._options = options
        self._lock = threading.Lock()
        self._kept: list[_Channel] = []
        self._host: _Host | None = None
        self.hello: dict[str, Any] | None = dict(hello) if hello is not None else None
        # None: no hello seen yet
        self.reuse: bool | None = None if hello is None else _offers_reuse(hello)

    def client(self) -> DriverClient | PooledDriver:
        """The client for one scenario."""
        with self._lock:
            room = any(channel.has_room for channel in self._kept)  # a warmed process, say
        if self.reuse is False and not room:
            return DriverClient(self.argv, known_hello=self.hello, **self._options)
        return PooledDriver(self)

    def warm(self, count: int, *, hello_bound: float = _HELLO_TIMEOUT) -> None:
        """Start the processes for `count` scenarios now (one per scenario, or one per
        `sessions` of them). A driver's start is mostly its client library's imports (a
        second of CPU for the Python SDK): started as soon as pytest has collected, it is
        not paid inside the first runs, each of them holding a place in the run window
        meanwhile. A start that fails is reported by the scenario that takes the process,
        as if it had started it itself.

        With no hello known yet and more than one scenario to warm for, the first
        process's hello says how many scenarios a process holds: this waits for it (at
        most `hello_bound` seconds), then starts the rest. Without it, a driver that offers
        sessions got a process per scenario."""
        if count < 1:  # nothing to start: no host thread either
            return
        host = self._host_loop()
        if self.hello is None and count > 1:
            first = self._kept_channel()
            started = asyncio.run_coroutine_threadsafe(_warm(first), host.loop)
            with contextlib.suppress(concurrent.futures.TimeoutError):
                started.result(hello_bound)
            if not first.greeted():  # the scenario that takes it reports how it went
                return
            with self._lock:
                self.hello, self.reuse = dict(first.hello), first.reusable
            count -= first.capacity
        for _ in range(-(-count // _capacity(self.hello or {}))):
            asyncio.run_coroutine_threadsafe(_warm(self._kept_channel()), host.loop)

    def _kept_channel(self) -> _Channel:
        channel = self._new_channel()
        with self._lock:
            self._kept.append(channel)
        return channel

    def _new_channel(self) -> _Channel:
        return _Channel(self.argv, known_hello=self.hello, **self._options)

    def _learn(self, driver: DriverClient) -> None:
        self.reuse = driver.reusable
        self.hello = driver.hello

    def _host_loop(self) -> _Host:
        with self._lock:
            if self._host is None:
                self._host = _Host()
            return self._host

    def _take(self) -> DriverClient:
        """A new client instance for one scenario: in a kept process with room for it
        (the fullest, so that a process fills up before another starts), else in a new
        process, which other scenarios may share if its hello offers sessions."""
        with self._lock:
            room = [channel for channel in self._kept if channel.has_room]
            if room:
                channel = max(room, key=lambda c: c.reserved)
            else:
                channel = self._new_channel()
                self._kept.append(channel)
            channel.reserved += 1
        return DriverClient._on(channel)

    def _give_back(self, channel: _Channel, *, reset: bool) -> bool:
        """A scenario's instance is done (`reset`: it was reset, so the process can take
        another); whether the process is to be ended now: one that failed a reset takes no
        new instance, and ends when its last one is done."""
        with self._lock:
            channel.reserved -= 1
            if not reset:
                channel.retired = True
            if not channel.retired or channel.reserved > 0:
                return False
            if channel in self._kept:
                self._kept.remove(channel)
            return True

    def close(self) -> None:
        """End every kept process, all at once: each close waits for its process to exit
        (a driver's interpreter takes a while to tear down), so one after the other added
        those waits to the end of every run."""
        with self._lock:
            kept, self._kept = self._kept, []
            host, self._host = self._host, None
        if host is None:
            return

        async def close_all() -> None:
            await asyncio.gather(*(channel.close() for channel in kept), return_exceptions=True)

        future = asyncio.run_coroutine_threadsafe(close_all(), host.loop)
        with contextlib.suppress(Exception):
            future.result(45.0)  # each close is bounded (about 30 s at worst)
        host.stop()


class PooledDriver:
    """One scenario's client: a client instance in a kept driver process (or a new one)
    on the pool's host loop, reset at the end of the scenario when the driver offers
    reuse, else ended with its process."""

    def __init__(self, pool: DriverPool) -> None:
        self._pool = pool
        self._host = pool._host_loop()
        self._driver: DriverClient | None = None
        self._released: DriverClient | None = None
        """The driver this scenario used, once close() gave it back or ended it: what the
        harness reads after close (the diagnostics) comes from it, so reading never takes
        (and strands) a kept driver meant for the next scenario."""

    def _the_driver(self) -> DriverClient:
        if self._driver is None:
            if self._released is not None:
                raise ClientError("other", "this scenario's driver client is closed")
            self._driver = self._pool._take()
        return self._driver

    def _identity(self) -> DriverClient:
        if self._driver is None and self._released is not None:
            return self._released
        return self._the_driver()

    @property
    def name(self) -> str:
        return self._identity().name

    @property
    def version(self) -> str:
        return self._identity().version

    @property
    def supports(self) -> frozenset[str]:
        return self._identity().supports

    @property
    def diagnostics(self) -> str:
        return self._identity().diagnostics

    async def prepare(self) -> None:
        driver = self._the_driver()
        await self._host.run(driver.prepare())
        self._pool._learn(driver)

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        # Events reach the scenario on its own loop, never after it ended.
        loop = asyncio.get_running_loop()
        deliver = options.on_event

        def on_event(event: ClientEvent) -> None:
            if deliver is not None and not loop.is_closed():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(deliver, event)

        shown = dataclasses.replace(options, on_event=on_event)
        return await self._host.run(self._the_driver().connect(target, shown))

    def __getattr__(self, op: str) -> Any:
        # Every other operation of the contract (list_tools, call_tool, the 1.1 ones):
        # the driver's own, run on the host loop.
        if op.startswith("_"):
            raise AttributeError(op)
        method = getattr(self._the_driver(), op)

        async def run(*args: Any, **kwargs: Any) -> Any:
            return await self._host.run(method(*args, **kwargs))

        return run

    async def close(self) -> None:
        driver = self._driver
        if driver is None:
            return
        self._driver, self._released = None, driver
        channel = driver._channel
        if not driver._has_session:  # it sent nothing (a SKIP, a failed start): no reset
            reset = not channel.failed
        else:
            reset = channel.reusable and await self._host.run(_reset(driver))
        if self._pool._give_back(channel, reset=reset):
            await self._host.run(channel.close())


def _offers_reuse(hello: Mapping[str, Any]) -> bool:
    return hello.get("hello") == DRIVER_PROTOCOL and hello.get("reuse") is True


def _capacity(hello: Mapping[str, Any]) -> int:
    """How many client instances one process holds at once: the hello's `sessions` (1.1,
    with reuse), else one."""
    sessions = hello.get("sessions")
    if not _offers_reuse(hello) or not isinstance(sessions, int) or isinstance(sessions, bool):
        return 1
    return max(1, sessions)


async def _warm(channel: _Channel) -> None:
    with contextlib.suppress(ClientError):  # the scenario that takes it will see it again
        await channel.prepare()


async def _reset(driver: DriverClient) -> bool:
    """Whether the driver took a `reset` of this instance and can serve the next one."""
    if not driver._channel.alive:
        return False
    try:
        await driver.reset()
    except ClientError:
        return False
    return not driver._in_flight
