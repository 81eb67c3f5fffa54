"""The reference client's stdio transport: a subprocess, one JSON-RPC message per line."""

from __future__ import annotations

import os
import subprocess
from collections import deque
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

import anyio
from anyio.abc import Process

from harness.clients._contract import ClientError, StdioTarget
from harness.clients.reference._base import BackgroundTasks, Sink
from harness.protocol import RequestId, encode

__all__ = ["StdioTransport"]

# The server inherits only these variables (plus the target's own env): enough to start
# an interpreter on any OS, without leaking the caller's secrets into the server.
_INHERITED_ENV = (
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TEMP",
    "TERM",
    "TMP",
    "TMPDIR",
    "USER",
    # Windows
    "APPDATA",
    "COMSPEC",
    "LOCALAPPDATA",
    "PATHEXT",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "USERPROFILE",
)
_MAX_LINE = 16 * 1024 * 1024  # a longer line is dropped, not buffered without end
_STDERR_LINES = 20
_GRACE = 2.0  # seconds for each ST-4 shutdown step


class StdioTransport:
    def __init__(self, process: Process, sink: Sink) -> None:
        self._process = process
        self._sink = sink
        self._write_lock = anyio.Lock()
        self._closing = False
        self.exited_unexpectedly = False
        """The server ended its stdout (it exited, or is about to) without close() asking."""
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_LINES)

    @classmethod
    async def open(cls, target: StdioTarget, sink: Sink, tasks: BackgroundTasks) -> StdioTransport:
        env = {name: os.environ[name] for name in _INHERITED_ENV if name in os.environ}
        env.update(target.env)
        try:
            process = await anyio.open_process(
                list(target.command),
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise ClientError("transport", f"cannot start {target.command[0]!r}: {exc}") from exc
        transport = cls(process, sink)
        tasks.start_soon(transport._read_stdout)
        tasks.start_soon(transport._read_stderr)
        return transport

    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        # ST-1/ST-2: the codec never emits a raw newline, so one message is one line.
        line = (encode(message) + "\n").encode("utf-8")
        assert self._process.stdin is not None
        try:
            async with self._write_lock:
                if written is not None:
                    written()  # the stream's send writes the line before it first waits
                await self._process.stdin.send(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ClientError("transport", f"cannot write to the server: {exc!r}") from exc

    def release(self, request_id: RequestId) -> None:
        pass

    async def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        buffer = bytearray()
        dropping = False  # inside a line that outgrew _MAX_LINE
        try:
            async for chunk in self._process.stdout:
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    if not dropping:
                        buffer += chunk[start:end]
                        self._line(bytes(buffer))
                    buffer.clear()
                    dropping = False
                    start = end + 1
                if not dropping:
                    buffer += chunk[start:]
                    if len(buffer) > _MAX_LINE:
                        self._sink.log(f"dropped a stdout line longer than {_MAX_LINE} bytes")
                        buffer.clear()
                        dropping = True
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            self._sink.log(f"stdout read failed: {exc!r}")
        if buffer and not dropping:
            self._line(bytes(buffer))
        if self._closing:
            return
        # A server that exits mid-call fails its requests now, not at their timeout.
        with anyio.move_on_after(0.5):
            await self._process.wait()
        code = self._process.returncode
        self.exited_unexpectedly = True
        tail = " | ".join(self.stderr_tail)
        detail = f"the server process exited (code {code})" if code is not None else ""
        self._sink.fail(
            None,
            ClientError(
                "transport",
                (detail or "the server closed its stdout") + (f"; stderr: {tail}" if tail else ""),
            ),
        )

    def _line(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if line.strip():
            self._sink.deliver(line)

    async def _read_stderr(self) -> None:
        # ST-3: stderr is the server's log, never a sign of failure; keep its tail for the
        # error message of a server that dies.
        assert self._process.stderr is not None
        partial = b""
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            async for chunk in self._process.stderr:
                *lines, partial = (partial + chunk).split(b"\n")
                partial = partial[-4096:]
                for line in lines:
                    self.stderr_tail.append(line[:500].decode("utf-8", "replace").rstrip())

    async def close(self) -> None:
        """ST-4: close stdin, wait; SIGTERM, wait; SIGKILL."""
        self._closing = True
        process = self._process
        assert process.stdin is not None
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await process.stdin.aclose()
        for step in (process.terminate, process.kill, None):
            with anyio.move_on_after(_GRACE):
                await process.wait()
            if process.returncode is not None or step is None:
                break
            with suppress(ProcessLookupError):
                step()
        with anyio.move_on_after(_GRACE):
            await process.aclose()
