"""The stdio mock server: the replay engine behind a process's stdin and stdout.

A client spawns `python -m mock_servers.stdio SCRIPT ...` (see `stdio_command`) and talks
newline-delimited JSON-RPC over the pipes. Every setting is on the command line: the SDK
clients pass a spawned server only a whitelist of environment variables.

Framing (ST-1, ST-2):
- stdin is read as bytes and split on "\\n" only. Each line that is not exactly one
  JSON-RPC message is recorded as `invalid` and, unless it is blank, answered with the
  codec's JSON-RPC error. Lines longer than `max_line_bytes` (16 MiB) are dropped while
  they are read (memory stays bounded), recorded as `invalid` with their size, and
  answered with -32600 (id null).
- A line ending in "\\r\\n" is accepted: the "\\r" is JSON whitespace. It is recorded once
  per run as a note, since ST-1 speaks of newlines, so checks can flag it.
- A last line without its newline before end of input is still handled (with a note).
- Batches (JSON arrays) only at 2025-03-26: every member is handled, and the responses
  go back as one JSON array line once all of them are ready.
- stdout carries nothing but MCP messages (and the bytes of `garbage`/`oversized_line`
  faults): in the process, file descriptor 1 is re-pointed at stderr, so a stray print
  from any library cannot corrupt the stream; the protocol writes to a duplicate.

Timing: messages go to the engine in arrival order; each reply is then carried out in a
task of its own (a `hang` or a delay never blocks others), so undelayed answers leave in
arrival order. Writes are serialised, and recorded in the transcript just before they
are made. After end of input (`on_eof: exit`) the server finishes what is under way,
without waiting for answers that can no longer come, and exits 0. Send and fault steps
that became due run on one timeline, in script order, each batch after the reply of the
message that made it due.

Faults: a reply's `fault` replaces the answer (`hang`: never answered; `delay`: wait,
then no answer); a fault step runs on the timeline (`hang`: the server answers nothing
from then on, though it still reads and records what the client sends). `close_stream`
and `expire_session` are HTTP faults: recorded as a note here.

Subscriptions (2026-07-28): a `subscriptions/listen` request opens a subscription once its
`before` messages (the acknowledgement) are written, and its response (or the client's
`notifications/cancelled`) ends it. A sent change notification is written once per open
subscription that opted in to it (only to the one a send step's `listen` names), marked
with that subscription's id, and held until one does (mock_servers/engine/_subscriptions.py);
other sends share the one channel unmarked.
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import signal
import stat
import sys
import threading
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import Any, NoReturn

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup, TaskStatus
from anyio.from_thread import BlockingPortal

from harness.protocol import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Batch,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    ProtocolError,
    Request,
    RequestId,
    Response,
    batches_allowed,
    is_request_id,
    parse,
)
from mock_servers.engine import (
    MOCK_ERROR_EXIT,
    Action,
    Delivery,
    Engine,
    Outcome,
    Script,
    ScriptError,
    Transcript,
    listenable,
    load_script,
    subscribed,
    with_subscription_id,
)

__all__ = [
    "DEFAULT_ANSWER_TIMEOUT",
    "DEFAULT_OVERSIZED_BYTES",
    "MAX_LINE_BYTES",
    "main",
    "oversized_line",
    "prepare_script",
    "serve_stdio",
    "stdio_command",
]

MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_ANSWER_TIMEOUT = 30.0
# Bigger than the 64 KiB line buffers some clients start with (Go's bufio.Scanner).
DEFAULT_OVERSIZED_BYTES = 1024 * 1024
DEFAULT_GARBAGE = "this line is not JSON-RPC {"
DEFAULT_STDERR_TEXT = "mcp-testbench: scripted stderr noise"

_CHUNK = 64 * 1024
_PREVIEW = 256  # characters of an over-long line kept in the transcript
_LOG_PREFIX = "mcp-testbench stdio: "
# A queue of chunks between the stdin thread and the event loop: bounded, so a client
# that floods stdin is held back by the pipe instead of filling memory.
_READ_BUFFER_CHUNKS = 64
_CLOSE_WAIT = 2.0  # seconds granted to pending writes when stdout is closed on purpose


def stdio_command(
    script_path: str | os.PathLike[str],
    *,
    revision: str | None = None,
    transcript: str | os.PathLike[str] | None = None,
    append_transcript: bool = False,
    answer_timeout: float | None = None,
    max_line_bytes: int | None = None,
) -> list[str]:
    """The argv that starts a stdio mock server for `script_path` (for a client to spawn).

    `append_transcript`: every process started with this argv adds to the one transcript
    (a client that restarts the server runs the argv again), instead of starting it anew.
    """
    argv = [sys.executable, "-m", "mock_servers.stdio", os.fspath(script_path)]
    if revision is not None:
        argv += ["--revision", revision]
    if transcript is not None:
        argv += ["--transcript", os.fspath(transcript)]
        if append_transcript:
            argv.append("--append-transcript")
    if answer_timeout is not None:
        argv += ["--answer-timeout", repr(float(answer_timeout))]
    if max_line_bytes is not None:
        argv += ["--max-line-bytes", str(max_line_bytes)]
    return argv


def prepare_script(
    script: Script | str | os.PathLike[str], revision: str | None = None
) -> tuple[Script, str]:
    """Load `script` if it is a path, check it runs over stdio, pick the revision.

    Every problem is a ScriptError (one line).
    """
    loaded = script if isinstance(script, Script) else load_script(Path(script))
    served = loaded.pick_revision(revision)
    if "stdio" not in loaded.transports:
        raise ScriptError(
            loaded.source,
            "/transports",
            f"the script runs over {', '.join(loaded.transports)}, not stdio",
            'add "stdio" to transports, or serve it over HTTP',
        )
    return loaded, served


def oversized_line(size: int) -> bytes:
    """`size` bytes that are one valid JSON-RPC notification, padded with a long string.

    A valid message tells a client that dropped it for its size apart from one that
    failed to parse it. Below the size of the envelope, the line is plain padding.
    """
    head = (
        b'{"jsonrpc":"2.0","method":"notifications/message",'
        b'"params":{"level":"debug","logger":"mcp-testbench","data":"'
    )
    tail = b'"}}'
    pad = size - len(head) - len(tail)
    if pad < 0:
        return b"x" * size
    return head + b"x" * pad + tail


async def serve_stdio(
    script: Script | str | os.PathLike[str],
    *,
    revision: str | None = None,
    transcript_path: str | os.PathLike[str] | None = None,
    transcript: Transcript | None = None,
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
    max_line_bytes: int = MAX_LINE_BYTES,
    stdin: ByteReceiveStream | None = None,
    stdout: ByteSendStream | None = None,
    stderr: ByteSendStream | None = None,
    handle_signals: bool | None = None,
) -> int:
    """Serve `script` over a pair of byte streams until the end; return the exit code.

    `stdin`/`stdout`/`stderr` default to this process's own (read and written in daemon
    threads; file descriptor 1 is then re-pointed at stderr, see the module docstring).
    Pass a `transcript` to record into it, or a `transcript_path` for a JSON Lines file;
    either way it is closed at the end. `handle_signals` (SIGTERM, SIGINT) defaults to
    True when serving this process's own stdio from the main thread.

    The exit code is 0, or a `crash` fault's `exit_code`.
    """
    loaded, served = prepare_script(script, revision)
    if transcript is None:
        transcript = Transcript(  # only its file (if any) can show it: none kept in memory
            script=loaded.name,
            revision=served,
            transport="stdio",
            path=None if transcript_path is None else Path(transcript_path),
            keep=False,
        )
    if handle_signals is None:
        handle_signals = stdin is None and threading.current_thread() is threading.main_thread()
    try:
        async with _process_streams(stdin, stdout, stderr) as streams:
            server = _StdioServer(
                engine=Engine(loaded, served, "stdio", transcript),
                stdin=streams.stdin,
                stdout=streams.stdout,
                stderr=streams.stderr,
                answer_timeout=answer_timeout,
                max_line_bytes=max_line_bytes,
                handle_signals=handle_signals,
                transcript_path=transcript_path,
            )
            return await server.run()
    finally:
        transcript.close()


# -- the process's own stdio, through daemon threads ---------------------------------------
#
# anyio's worker threads are not daemons: one blocked in a read of stdin would keep the
# process alive after SIGTERM until the client closed the pipe. Daemon threads do not, and
# they also read regular files and terminals, which event-loop readers (add_reader) do not.


class _ThreadReader(ByteReceiveStream):
    def __init__(self, fd: int, portal: BlockingPortal) -> None:
        self._fd = fd
        self._portal = portal
        self._tx, self._rx = anyio.create_memory_object_stream[bytes](_READ_BUFFER_CHUNKS)
        threading.Thread(target=self._run, name="mcp-testbench stdin", daemon=True).start()

    def _run(self) -> None:
        try:
            while True:
                try:
                    data = os.read(self._fd, _CHUNK)
                except OSError:
                    data = b""
                if not data:
                    break
                self._portal.call(self._tx.send, data)
        except Exception:  # the portal stopped: the server is exiting
            return
        finally:
            with suppress(Exception):
                self._portal.call(self._tx.close)

    async def receive(self, max_bytes: int = _CHUNK) -> bytes:
        # Chunks are at most _CHUNK bytes; max_bytes is not honoured beyond that.
        return await self._rx.receive()

    async def aclose(self) -> None:
        self._rx.close()


@dataclass
class _Chunk:
    data: bytes | None  # None: close the descriptor
    done: anyio.Event
    cancelled: bool = False
    failed: bool = False


class _ThreadWriter(ByteSendStream):
    def __init__(self, fd: int, portal: BlockingPortal, *, owns_fd: bool) -> None:
        self._fd = fd
        self._portal = portal
        self._owns_fd = owns_fd
        self._queue: queue.SimpleQueue[_Chunk] = queue.SimpleQueue()
        self._broken = False
        self._closed = False
        threading.Thread(target=self._run, name=f"mcp-testbench fd {fd}", daemon=True).start()

    def _run(self) -> None:
        while True:
            chunk = self._queue.get()
            if chunk.data is None:
                if self._owns_fd:
                    with suppress(OSError):
                        os.close(self._fd)
            elif chunk.cancelled or self._broken:
                chunk.failed = self._broken
            else:
                try:
                    view = memoryview(chunk.data)
                    while view:
                        view = view[os.write(self._fd, view) :]
                except OSError:  # EPIPE: the client closed its end
                    self._broken = chunk.failed = True
            try:
                self._portal.call(chunk.done.set)
            except Exception:
                return  # the portal stopped: the server is exiting
            if chunk.data is None:
                return

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._broken:
            raise anyio.BrokenResourceError
        chunk = _Chunk(bytes(item), anyio.Event())
        self._queue.put(chunk)
        try:
            await chunk.done.wait()
        except BaseException:
            chunk.cancelled = True  # not written yet: do not write it late
            raise
        if chunk.failed:
            raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        chunk = _Chunk(None, anyio.Event())
        self._queue.put(chunk)
        with anyio.move_on_after(_CLOSE_WAIT, shield=True):
            await chunk.done.wait()


# -- pipes and sockets, through the event loop ----------------------------------------------
#
# The common case (a client spawned the mock with pipes) needs no thread: a non-blocking
# descriptor the loop polls answers a message with no hand-over between threads, which
# the threads above pay four times per round trip. Only pipes and sockets: O_NONBLOCK is
# a property of the open file that every process sharing it sees, so a terminal or a file
# (which the loop cannot poll anyway) keeps the threads.


def _pollable(fd: int) -> bool:
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _LoopReader(ByteReceiveStream):
    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._was_blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        self._closed = False
        self._drained = True
        self._ahead: bytes | None = None  # read by `more_is_here`, for the next receive

    def more_is_here(self) -> bool:
        """Whether more input (or its end) is already here: read now, kept for `receive`."""
        if self._ahead is None and not self._closed:
            self._ahead = self._read_now(_CHUNK)
        return self._ahead is not None

    async def receive(self, max_bytes: int = _CHUNK) -> bytes:
        size = min(max_bytes, _CHUNK)
        data, self._ahead = self._ahead, None
        while data is None:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._drained:
                # The last read emptied the pipe. A client mostly waits for the answer before
                # it writes again, so a read now would only fail: wait first.
                await anyio.wait_readable(self._fd)
            data = self._read_now(size)
        if len(data) > size:  # read ahead in a larger piece
            data, self._ahead = data[:size], data[size:]
        if not data:
            raise anyio.EndOfStream
        return data

    async def pump(self, feed: Callable[[bytes], None]) -> bool:
        """Feed every chunk of input to `feed` as it comes, until its end; False: not on
        asyncio (use `receive`).

        The chunks are read and fed in a reader callback that stays registered with the
        loop. A task woken per chunk (`receive`) costs a registration, its removal and a
        turn of the loop for each message: on a pipe with one request in flight, more than
        the rest of the answer. `feed` runs synchronously, as a loop of `receive` calls
        would run it; what it reads ahead (`more_is_here`) is fed next, in order.
        """
        import asyncio  # imported by anyio's asyncio backend anyway

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # trio
            return False
        finished: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            # A cancelled pump reads no more: cancelling the task cancels `finished` at
            # once, before the task runs again (as it cancels a `wait_readable`).
            if finished.done():
                return
            try:
                data, self._ahead = self._ahead, None
                if data is None:
                    data = self._read_now(_CHUNK)
                while data:
                    feed(data)
                    data, self._ahead = self._ahead, None
                    if data is None and not self._drained:
                        # The read filled its buffer: what is already in the pipe is read
                        # and recorded before any reply started above gets to run.
                        data = self._read_now(_CHUNK)
            except BaseException as exc:  # raised in the task, as `receive`'s loop would
                loop.remove_reader(self._fd)
                finished.set_exception(exc)
                return
            if data == b"" or self._closed:  # the end of input
                loop.remove_reader(self._fd)
                finished.set_result(None)

        loop.add_reader(self._fd, readable)
        try:
            await finished
        finally:
            loop.remove_reader(self._fd)
        return True

    def _read_now(self, size: int) -> bytes | None:
        """What the pipe holds (b"": its end), or None when nothing is there yet."""
        try:
            data = os.read(self._fd, size)
        except BlockingIOError:
            self._drained = True
            return None
        except OSError:
            return b""
        self._drained = len(data) < size
        return data

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            with suppress(OSError):
                os.set_blocking(self._fd, self._was_blocking)


class _LoopWriter(ByteSendStream):
    def __init__(self, fd: int, *, owns_fd: bool) -> None:
        self._fd = fd
        self._owns_fd = owns_fd
        self._was_blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        self._closed = False
        self._broken = False

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._broken:
            raise anyio.BrokenResourceError
        view = memoryview(item)
        try:
            while view:
                view = view[self._write_some(view) :]
                if view:
                    await anyio.wait_writable(self._fd)
        except anyio.get_cancelled_exc_class():
            if len(view) < len(item):
                # Part of the message is out: finish it (bounded), so that the client
                # never reads a line cut by the mock's own cancellation.
                with anyio.move_on_after(_CLOSE_WAIT, shield=True):
                    while view:
                        view = view[self._write_some(view) :]
                        if view:
                            await anyio.wait_writable(self._fd)
            raise

    def write_now(self, data: bytes) -> int:
        """Write what the pipe takes without waiting; the number of bytes written."""
        if self._closed:
            raise anyio.ClosedResourceError
        if self._broken:
            raise anyio.BrokenResourceError
        view = memoryview(data)
        written = 0
        while written < len(data):
            step = self._write_some(view[written:])
            if not step:
                break
            written += step
        return written

    def _write_some(self, view: memoryview) -> int:
        try:
            return os.write(self._fd, view)
        except BlockingIOError:
            return 0
        except OSError:  # EPIPE: the client closed its end
            self._broken = True
            raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with suppress(OSError):
            os.set_blocking(self._fd, self._was_blocking)
            if self._owns_fd:
                os.close(self._fd)


@dataclass
class _Streams:
    stdin: ByteReceiveStream
    stdout: ByteSendStream
    stderr: ByteSendStream


@asynccontextmanager
async def _process_streams(
    stdin: ByteReceiveStream | None,
    stdout: ByteSendStream | None,
    stderr: ByteSendStream | None,
) -> AsyncIterator[_Streams]:
    """The streams given, and this process's own for those that are not."""
    async with BlockingPortal() as portal:
        if stdout is None:
            out_fd = os.dup(1)
            os.dup2(2, 1)
            stdout = (
                _LoopWriter(out_fd, owns_fd=True)
                if _pollable(out_fd)
                else _ThreadWriter(out_fd, portal, owns_fd=True)
            )
        if stdin is None:
            stdin = _LoopReader(0) if _pollable(0) else _ThreadReader(0, portal)
        # stderr stays with a thread: often a terminal, and shared with the client.
        streams = _Streams(stdin, stdout, stderr or _ThreadWriter(2, portal, owns_fd=False))
        try:
            yield streams
        finally:
            for own in (streams.stdin, streams.stdout):
                if isinstance(own, (_LoopReader, _LoopWriter)):
                    await own.aclose()
            # Threads still blocked in portal calls (a full read buffer) get cancelled.
            await portal.stop(cancel_remaining=True)


# -- the server ----------------------------------------------------------------------------


@dataclass
class _Due:
    actions: list[Action]
    after: anyio.Event | None  # the reply these actions follow


@dataclass
class _Exit:
    code: int
    reason: str


@dataclass
class _StdioServer:
    engine: Engine
    stdin: ByteReceiveStream
    stdout: ByteSendStream
    stderr: ByteSendStream
    answer_timeout: float
    max_line_bytes: int
    handle_signals: bool
    transcript_path: str | os.PathLike[str] | None = None
    _exit: _Exit | None = None
    _scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    _write_lock: anyio.Lock = field(default_factory=anyio.Lock)
    _eof: anyio.Event = field(default_factory=anyio.Event)
    _hung: bool = False
    _stdout_gone: bool = False
    _noted: set[str] = field(default_factory=set)
    _lines: int = 0
    # 2026-07-28: the open subscriptions (listen request id -> its filter, and the step
    # that answered it), and the change notifications that no subscription takes yet.
    _subscriptions: dict[RequestId, tuple[Mapping[str, Any], int | None]] = field(
        default_factory=dict
    )
    _held: list[tuple[dict[str, Any], str, str | None, int | None]] = field(default_factory=list)
    # Replies and due actions taken but not yet written out: while there is one, a reply
    # may not go out at once from the reader (it could overtake it).
    _under_way: int = 0
    # Input not yet a whole line, and an over-long line being skipped (its size so far,
    # > 0, and its first bytes).
    _pending: bytearray = field(default_factory=bytearray)
    _dropped: int = 0
    _head: bytes = b""

    def __post_init__(self) -> None:
        self.transcript = self.engine.transcript
        self.settings = self.engine.script.stdio
        self._due_tx, self._due_rx = anyio.create_memory_object_stream[_Due](math.inf)

    # -- lifetime ---------------------------------------------------------------------------

    async def run(self) -> int:
        script = self.engine.script
        where = self.transcript_path if self.transcript_path is not None else "in memory"
        await self._log(
            f"serving {script.name} ({script.source}) at {self.engine.revision}; "
            f"transcript: {os.fspath(where)}"
        )
        # A client that restarts the server appends a second process to the transcript.
        self.transcript.record("start", pid=os.getpid())
        with self._scope:
            async with anyio.create_task_group() as outer:
                if self.handle_signals:
                    await outer.start(self._watch_signals)
                outer.start_soon(self._serve)
        self.engine.finish()
        exit_ = self._exit or _Exit(0, "stopped")
        self.transcript.record("exit", code=exit_.code, reason=exit_.reason)
        return exit_.code

    def _stop(self, code: int, reason: str) -> None:
        if self._exit is None:
            self._exit = _Exit(code, reason)
        self._scope.cancel()

    async def _serve(self) -> None:
        async with anyio.create_task_group() as work:
            self._work: TaskGroup = work
            work.start_soon(self._run_timeline)
            self._schedule(self.engine.start(), None)
            await self._read_lines()
            self.transcript.record("stdin_eof")
            self._eof.set()
            if self.settings.on_eof == "ignore":
                await self._log("stdin closed; on_eof is ignore: still running")
                await anyio.sleep_forever()
            # Finish what is under way (delayed replies, due actions), then exit.
            self._due_tx.close()
        self._stop(0, "stdin closed")

    async def _watch_signals(self, *, task_status: TaskStatus[None]) -> None:
        if sys.platform == "win32":  # asyncio has no signal handlers there
            task_status.started()
            return
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            task_status.started()
            async for signum in signals:
                name = signal.Signals(signum).name
                self.transcript.record("signal", name=name)
                if signum == signal.SIGTERM and self.settings.on_sigterm == "ignore":
                    await self._log(f"{name} received; on_sigterm is ignore: still running")
                    continue
                await self._log(f"{name} received: exiting")
                self._stop(0, name)

    # -- input --------------------------------------------------------------------------------

    async def _read_lines(self) -> None:
        stdin = self.stdin
        if not (isinstance(stdin, _LoopReader) and await stdin.pump(self._feed)):
            while True:
                try:
                    chunk = await stdin.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                self._feed(chunk)
        if self._dropped:
            self._too_long(self._head, self._dropped, terminated=False)
        elif self._pending:
            self._note("the last line had no newline before end of input; handled anyway")
            self._on_line(bytes(self._pending))

    def _feed(self, chunk: bytes) -> None:
        """Split a chunk of input into lines, each handled as it is found."""
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if self._dropped:
                self._dropped += len(piece)
            elif len(self._pending) + len(piece) > self.max_line_bytes:
                self._head = (bytes(self._pending[:_PREVIEW]) + piece[:_PREVIEW])[:_PREVIEW]
                self._dropped = len(self._pending) + len(piece)
                self._pending = bytearray()
            else:
                self._pending += piece
            if end < 0:
                return
            start = end + 1
            if self._dropped:
                self._too_long(self._head, self._dropped, terminated=True)
                self._dropped = 0
            else:
                line = bytes(self._pending)
                self._pending.clear()
                self._on_line(line, last=start == len(chunk))

    def _too_long(self, head: bytes, size: int, *, terminated: bool) -> None:
        self._lines += 1
        reason = f"a line of {size} bytes exceeds the limit of {self.max_line_bytes} bytes"
        if not terminated:
            reason += " (and ends without a newline)"
        self.transcript.record(
            "invalid",
            direction="client",
            raw=_show(head) + "...",
            bytes=size,
            code=INVALID_REQUEST,
            reason=reason,
            line=self._lines,
        )
        error = ErrorObject(INVALID_REQUEST, "Invalid Request", {"reason": reason})
        self._start_reply(self._write, ErrorResponse(None, error))

    def _on_line(self, line: bytes, *, last: bool = False) -> None:
        """One line; `last`: nothing came after it in its chunk."""
        self._lines += 1
        if line.endswith(b"\r") and "crlf" not in self._noted:
            self._noted.add("crlf")
            self.transcript.record(
                "note",
                text=f"line {self._lines} ends in CR LF; accepted (the CR is JSON whitespace), "
                "but ST-1 delimits messages by newlines; noted once per run",
            )
        if not line.strip(b" \t\r"):
            self.transcript.record(
                "invalid",
                direction="client",
                raw=_show(line),
                code=PARSE_ERROR,
                reason="an empty line (not answered)",
                line=self._lines,
            )
            return
        try:
            parsed = parse(line, allow_batch=batches_allowed(self.engine.revision))
        except ProtocolError as exc:
            self.transcript.record(
                "invalid",
                direction="client",
                raw=_show(line),
                code=exc.code,
                reason=str(exc),
                line=self._lines,
            )
            # A task, like replies: answers leave in arrival order unless delayed.
            self._start_reply(self._write, exc.to_error_response())
            return
        if isinstance(parsed, Batch):
            self._on_batch(parsed)
        else:
            self._on_message(parsed, last=last)

    def _handle(self, message: Message) -> Outcome:
        try:
            return self.engine.handle(message, channel="stdio")
        except Exception as exc:  # an engine bug must not take the mock down mid-test
            traceback.print_exc()
            self.transcript.record("note", text=f"internal error on a client message: {exc!r}")
            if isinstance(message, Request):
                error = ErrorObject(INTERNAL_ERROR, "Internal error", {"reason": repr(exc)})
                return Outcome(Delivery(ErrorResponse(message.id, error)))
            return Outcome(None)

    def _on_message(self, message: Message, *, last: bool = False) -> None:
        # Handled here, in arrival order, so that matching follows the wire; only the
        # delivery (delays, awaited answers) runs in a task of its own.
        outcome = self._handle(message)
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            params = message.params if isinstance(message.params, dict) else {}
            request_id = params.get("requestId")
            if is_request_id(request_id):  # typed JSON: true is not the id 1
                self._subscriptions.pop(request_id, None)
        if isinstance(message, Request) and outcome.delivery is not None:
            if last and not outcome.actions and self._reply_at_once(message, outcome.delivery):
                return
            done = anyio.Event()
            self._schedule(outcome.actions, done)
            # A hang due right after this reply takes hold as the reply is written, not when
            # the timeline gets to it: a quick client's next request must find it in force.
            first = outcome.actions[0] if outcome.actions else None
            hang = (
                first.payload
                if first is not None
                and first.kind == "fault"
                and first.payload.get("kind") == "hang"
                else None
            )
            self._start_reply(self._reply, message, outcome.delivery, done, hang)
        else:
            self._schedule(outcome.actions, None)

    def _on_batch(self, batch: Batch) -> None:
        self.transcript.record(
            "note", text=f"line {self._lines} is a batch of {len(batch.messages)}"
        )
        done = anyio.Event()
        requests: list[tuple[Request, Delivery]] = []
        for message in batch.messages:
            outcome = self._handle(message)
            if isinstance(message, Request) and outcome.delivery is not None:
                requests.append((message, outcome.delivery))
            self._schedule(outcome.actions, done)
        self._start_reply(self._reply_batch, requests, done)

    # -- output -------------------------------------------------------------------------------

    def _start_reply(self, write: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Write a reply in a task of its own (a delay or an awaited answer holds only it)."""

        async def under_way() -> None:
            try:
                await write(*args)
            finally:
                self._under_way -= 1

        self._under_way += 1
        self._work.start_soon(under_way)

    def _reply_at_once(self, request: Request, delivery: Delivery) -> bool:
        """Write a plain reply from the reader itself; False: it goes the usual way.

        Plain: no delay, no message before it, no awaited answer, no fault, not a listen.
        At once only on pipes polled by the loop (`_LoopReader`, `_LoopWriter`), when
        nothing is under way that it could overtake, and when its request is the last input
        here (the caller's `last`, and nothing more in the pipe). Input already here is
        read and recorded before any answer goes out, as the usual way does: a client that
        sends its next message without waiting for this answer must show in the transcript
        as one (a request sent before the initialize result, for one).

        A task, an event and a lock per reply cost more than the rest of the answer. A pipe
        that takes only part of it gets the rest from a task (the reader must go on reading:
        a client may write all its requests before it reads), and nothing can cut into the
        line (`_send_rest`).
        """
        response = delivery.response
        stdout = self.stdout
        if (
            response is None
            or self._under_way
            or delivery.delay_ms
            or delivery.before
            or delivery.awaits
            or delivery.after_cancel
            or delivery.fault is not None
            or delivery.body is not None
            or not isinstance(stdout, _LoopWriter)
            or self._write_lock.locked()
            or self._hung
            or self._stdout_gone
            or self._listen_filter(request) is not None
            or not isinstance(self.stdin, _LoopReader)
            or self.stdin.more_is_here()
        ):
            return False
        as_json = response.to_json()
        text = self._admitted_text(
            as_json,
            where=f"{delivery.origin}: the response to request {request.id!r}",
            request_method=request.method,
            violation=delivery.violation,
        )
        if text is None:
            self._start_reply(self._mock_error)
            return True
        data = text.encode("utf-8") + b"\n"
        # Recorded before the write, as in `_write`.
        self.transcript.record("message", direction="server", message=as_json, channel="stdio")
        try:
            written = stdout.write_now(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._stdout_gone = True
            self.transcript.record("note", text="stdout is closed: the client stopped reading")
            return True
        if written < len(data):
            self._start_reply(self._send_rest, data[written:])
        return True

    async def _send_rest(self, data: bytes) -> None:
        # The first task to want the lock: nothing was under way or writing when the line
        # began, and tasks start in the order they were made, so no other write can get in
        # before the rest of the line. Until it is out, replies go the usual way (under way).
        async with self._write_lock:
            await self._send_bytes(data)

    async def _reply(
        self,
        request: Request,
        delivery: Delivery,
        done: anyio.Event,
        then_hang: Mapping[str, Any] | None = None,
    ) -> None:
        listen = self._listen_filter(request)
        response: Message | None = None
        try:
            if listen is not None:
                delivery = _as_subscription(request.id, delivery)
            response = await self._carry_out(request.id, delivery, subscribe=listen)
            if response is not None:
                await self._write(
                    response,
                    then_hang=then_hang,
                    where=f"{delivery.origin}: the response to request {request.id!r}",
                    request_method=request.method,
                    violation=delivery.violation,
                )
        finally:
            if listen is not None and response is not None:
                self._subscriptions.pop(request.id, None)  # its response ends it
            done.set()

    async def _reply_batch(
        self, requests: list[tuple[Request, Delivery]], done: anyio.Event
    ) -> None:
        try:
            responses: list[Message | None] = [None] * len(requests)

            async def one(index: int, request: Request, delivery: Delivery) -> None:
                responses[index] = await self._carry_out(request.id, delivery)

            async with anyio.create_task_group() as tg:
                for index, (request, delivery) in enumerate(requests):
                    tg.start_soon(one, index, request, delivery)
            gate = self.engine.gate
            answers = [
                r.to_json()
                for r, (request, delivery) in zip(responses, requests, strict=True)
                if r is not None
                and gate.admit(
                    r,
                    where=f"{delivery.origin}: the batch response to request {request.id!r}",
                    request_method=request.method,
                    violation=delivery.violation,
                )
            ]
            if gate.failed:
                await self._mock_error()
            elif answers:
                await self._write(answers, checked=True)
        finally:
            done.set()

    async def _carry_out(
        self,
        request_id: RequestId,
        delivery: Delivery,
        *,
        subscribe: Mapping[str, Any] | None = None,
    ) -> Message | None:
        """Delay, `before` messages, the client's answers, then the response (or a fault).

        `subscribe`: the filter of a listen request, whose subscription opens once the
        `before` messages (its acknowledgement) are written.
        """
        if delivery.after_cancel and not await self._await_client(
            partial(self.engine.wait_for_cancel, request_id)
        ):
            self._no_answer(f"no notifications/cancelled for request {request_id!r}", request_id)
        if delivery.delay_ms:
            await anyio.sleep(delivery.delay_ms / 1000)
        marks = delivery.before_marks or [None] * len(delivery.before)
        for index, (message, mark) in enumerate(zip(delivery.before, marks, strict=True)):
            where = f"{delivery.origin}: before message {index} (request {request_id!r})"
            await self._write(message, where=where, violation=mark)
        if subscribe is not None:
            self._subscriptions[request_id] = (subscribe, delivery.step)
            held, self._held = self._held, []
            for message, where, mark, on in held:
                await self._send(message, where=where, violation=mark, on=on)
        for server_request in delivery.awaits:
            if not await self._await_client(
                partial(self.engine.wait_for_client_response, server_request)
            ):
                self._no_answer(f"no answer to server request {server_request!r}", request_id)
        if delivery.fault is not None:
            await self._fault(delivery.fault, reply_to=request_id)
            return None
        if delivery.body is not None:
            self._note("a reply body is HTTP-only: ignored on stdio")
        return delivery.response

    def _no_answer(self, what: str, request_id: RequestId) -> None:
        why = "stdin closed" if self._eof.is_set() else f"{self.answer_timeout:g} s passed"
        self.transcript.record(
            "note", text=f"{what} ({why}); answering request {request_id!r} anyway"
        )

    async def _await_client(self, event: Callable[[], Awaitable[None]]) -> bool:
        """Whether the client did what `event` waits for, within the answer timeout."""
        answered = False
        with anyio.move_on_after(self.answer_timeout):
            async with anyio.create_task_group() as race:

                async def answer() -> None:
                    nonlocal answered
                    await event()
                    answered = True
                    race.cancel_scope.cancel()

                async def eof() -> None:
                    # After end of input no answer can come: do not wait for nothing.
                    await self._eof.wait()
                    race.cancel_scope.cancel()

                race.start_soon(answer)
                race.start_soon(eof)
        return answered

    async def _write(
        self,
        value: Message | Mapping[str, Any] | list[Any],
        *,
        then_hang: Mapping[str, Any] | None = None,
        where: str = "a message of the stdio transport",
        request_method: str | None = None,
        violation: str | None = None,
        checked: bool = False,
    ) -> None:
        """Write one message (or a batch whose members were `checked`) after the send gate."""
        as_json = value.to_json() if not isinstance(value, (Mapping, list)) else value
        text = self._admitted_text(
            as_json,
            where=where,
            request_method=request_method,
            violation=violation,
            checked=checked,
        )
        if text is None:
            await self._mock_error()
            return
        async with self._write_lock:
            if self._hung:
                self._note("the server hangs: nothing more is written")
                return
            if self._stdout_gone:
                return
            # Recorded before the write: a quick client's answer must not precede it.
            self.transcript.record("message", direction="server", message=as_json, channel="stdio")
            await self._send_bytes(text.encode("utf-8") + b"\n")
            if then_hang is not None:
                # Still under the lock: nothing else is written before the hang holds (the
                # timeline, which would have carried it out, finds it done).
                self.transcript.record("fault", fault=dict(then_hang))
                self.transcript.record(
                    "note", text="the server hangs: it answers nothing from now on"
                )
                self._hung = True

    def _admitted_text(
        self,
        as_json: Mapping[str, Any] | list[Any],
        *,
        where: str,
        request_method: str | None,
        violation: str | None,
        checked: bool = False,
    ) -> str | None:
        """The line to write, once the send gate admitted it (a batch's members were
        `checked` one by one); None: refused, and recorded as a `mock_error`."""
        if not checked and not isinstance(as_json, list):
            admitted = self.engine.gate.admit(
                as_json, where=where, request_method=request_method, violation=violation
            )
            if not admitted:
                return None
        return self.engine.encode(as_json)

    async def _mock_error(self) -> None:
        """End the run after the gate refused a message: the harness's fault, not the client's."""
        await self._log(self.engine.gate.describe())
        self._stop(MOCK_ERROR_EXIT, "mock_error")
        await anyio.lowlevel.checkpoint()  # the stop cancels this task here

    def _listen_filter(self, request: Request) -> Mapping[str, Any] | None:
        """The filter of a 2026-07-28 `subscriptions/listen` request (None: not one)."""
        if not self.engine.stateless or request.method != "subscriptions/listen":
            return None
        params = request.params if isinstance(request.params, dict) else {}
        notifications = params.get("notifications")
        return notifications if isinstance(notifications, dict) else {}

    async def _send(
        self,
        message: dict[str, Any],
        *,
        where: str,
        violation: str | None = None,
        on: int | None = None,
    ) -> None:
        """A send step: at 2026-07-28 a change notification goes to each subscription that
        opted in to it (only the one that step `on` answered, if given), held until one
        does; anything else goes out as it is."""
        if not self.engine.stateless or not listenable(message):
            await self._write(message, where=where, violation=violation)
            return
        targets = [
            sid
            for sid, (wanted, step) in self._subscriptions.items()
            if subscribed(wanted, message) and on in (None, step)
        ]
        if not targets:
            self._held.append((message, where, violation, on))
            self._note(f"{message.get('method')} held: no subscription opted in to it yet")
        for sid in targets:
            await self._write(with_subscription_id(message, sid), where=where, violation=violation)

    async def _write_raw(self, data: bytes) -> None:
        async with self._write_lock:
            if self._hung or self._stdout_gone:
                return
            await self._send_bytes(data)

    async def _send_bytes(self, data: bytes) -> None:
        try:
            await self.stdout.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._stdout_gone = True
            self.transcript.record("note", text="stdout is closed: the client stopped reading")

    async def _log(self, text: str) -> None:
        # Nobody reading stderr is fine.
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self.stderr.send((_LOG_PREFIX + text + "\n").encode("utf-8", "replace"))

    def _note(self, text: str) -> None:
        if text not in self._noted:
            self._noted.add(text)
            self.transcript.record("note", text=text)

    # -- the timeline and faults -------------------------------------------------------------

    def _schedule(self, actions: list[Action], after: anyio.Event | None) -> None:
        if actions:
            self._under_way += 1
            self._due_tx.send_nowait(_Due(actions, after))

    async def _run_timeline(self) -> None:
        async with self._due_rx:
            async for due in self._due_rx:
                try:
                    await self._carry_out_due(due)
                finally:
                    self._under_way -= 1

    async def _carry_out_due(self, due: _Due) -> None:
        if due.after is not None:
            await due.after.wait()
        for action in due.actions:
            if self._hung:
                break
            if action.kind == "send":
                await self._send(
                    dict(action.payload),
                    where=action.step.label,
                    violation=action.violation,
                    on=self.engine.script.listen_step(action.step),
                )
            else:
                await self._fault(action.payload, reply_to=None)

    async def _fault(self, fault: Mapping[str, Any], *, reply_to: RequestId | None) -> None:
        kind = fault["kind"]
        if reply_to is None:
            self.transcript.record("fault", fault=dict(fault))
        else:
            self.transcript.record("fault", fault=dict(fault), request=reply_to)
        if kind == "hang":
            if reply_to is None:
                self.transcript.record(
                    "note", text="the server hangs: it answers nothing from now on"
                )
                self._hung = True
        elif kind == "crash":
            await self._log(f"crash fault: exiting with {int(fault.get('exit_code', 1))}")
            self._stop(int(fault.get("exit_code", 1)), "crash")
            await anyio.lowlevel.checkpoint()  # the stop cancels this task here
        elif kind == "drop_connection":
            async with self._write_lock:
                self._stdout_gone = True
                await self.stdout.aclose()
            self._stop(0, "drop_connection")
            await anyio.lowlevel.checkpoint()
        elif kind == "garbage":
            await self._write_raw(str(fault.get("text", DEFAULT_GARBAGE)).encode() + b"\n")
        elif kind == "oversized_line":
            line = oversized_line(int(fault.get("bytes", DEFAULT_OVERSIZED_BYTES)))
            await self._write_raw(line + b"\n" if fault.get("terminated", True) else line)
        elif kind == "stderr":
            text = str(fault.get("text", DEFAULT_STDERR_TEXT))
            lines = int(fault.get("lines", 1))
            try:
                await self.stderr.send(((text + "\n") * lines).encode("utf-8", "replace"))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                self._note("stderr is closed")
        elif kind == "delay":
            await anyio.sleep(int(fault.get("ms", 0)) / 1000)
        else:  # close_stream, expire_session
            self.transcript.record("note", text=f"{kind} is an HTTP fault: nothing to do on stdio")


def _as_subscription(subscription: RequestId, delivery: Delivery) -> Delivery:
    """A listen request's answer with the subscription id on its messages."""
    response = delivery.response
    if isinstance(response, Response):
        marked = with_subscription_id(response.to_json(), subscription)
        response = Response(response.id, marked["result"])
    before = [with_subscription_id(m, subscription) for m in delivery.before]
    return replace(delivery, response=response, before=before)


def _show(raw: bytes) -> str:
    """Bytes of a client line as text for the transcript (invalid UTF-8 as \\xNN)."""
    return raw.decode("utf-8", "backslashreplace")


# -- command line ----------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and help on stderr (stdout is the protocol's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see --help)\n")

    def print_help(self, file: Any = None) -> None:
        super().print_help(file if file is not None else sys.stderr)

    def print_usage(self, file: Any = None) -> None:
        super().print_usage(file if file is not None else sys.stderr)


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, not {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {text}")
    return value


def build_parser(kind: type[_Parser] = _Parser) -> argparse.ArgumentParser:
    parser = kind(
        prog="python -m mock_servers.stdio",
        description="Serve an mcp-testbench script over stdin/stdout (newline-delimited "
        "JSON-RPC). stdout carries MCP messages only; logs go to stderr.",
    )
    parser.add_argument("script", help="the script (JSON, format version 1)")
    parser.add_argument("--revision", help="the MCP revision to serve (default: the newest)")
    parser.add_argument("--transcript", help="write the transcript here (JSON Lines)")
    parser.add_argument(
        "--append-transcript",
        action="store_true",
        help="add to the transcript if it exists (a restarted server continues the record "
        "of the one before) instead of starting it anew",
    )
    parser.add_argument(
        "--answer-timeout",
        type=_non_negative_float,
        default=DEFAULT_ANSWER_TIMEOUT,
        metavar="SECONDS",
        help="how long a reply waits for the client's answers to server requests "
        f"(default {DEFAULT_ANSWER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=_positive_int,
        default=MAX_LINE_BYTES,
        metavar="N",
        help=f"longest client line kept (default {MAX_LINE_BYTES})",
    )
    return parser


class _QuietParser(_Parser):
    """Prints nothing and never exits: a ValueError instead."""

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise ValueError(message or f"exit {status}")

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)

    def print_help(self, file: Any = None) -> None:
        pass


@cache
def _quiet_parser() -> argparse.ArgumentParser:
    return build_parser(_QuietParser)  # made once: 0.5 ms, twenty times a parse


def preload(argv: Sequence[str], cwd: str) -> None:
    """Load the script `main(argv)` would serve from `cwd`, so that it is checked once in
    this process (`load_script`): a fork server calls this before each fork, and its
    children, the mocks, find the script checked instead of each checking it again
    (about 30 ms a mock). Never raises: what is wrong is for the mock to say."""
    try:
        args, _ = _quiet_parser().parse_known_args(argv)
        load_script(os.path.join(cwd, args.script))
    except (ScriptError, ValueError, OSError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        script, revision = prepare_script(Path(args.script), args.revision)
        transcript = Transcript(
            script=script.name,
            revision=revision,
            transport="stdio",
            path=args.transcript,
            append=args.append_transcript,
            keep=False,  # read from its file: entries in memory would only grow
        )
    except ScriptError as exc:
        print(exc, file=sys.stderr)
        return 2
    except ValueError as exc:  # --append-transcript to another run's transcript
        print(exc, file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{args.transcript}: cannot write the transcript: {exc.strerror}", file=sys.stderr)
        return 2
    return anyio.run(
        partial(
            serve_stdio,
            script,
            revision=revision,
            transcript=transcript,
            transcript_path=args.transcript,
            answer_timeout=args.answer_timeout,
            max_line_bytes=args.max_line_bytes,
        )
    )
