"""The stdio side of `mcp-testbench serve`: pick the revision from the client's first line.

A stdio server is one process per client, so every run starts the script afresh. With
no revision given, the server reads the first line before it builds its engine and picks
the revision that line speaks (`_negotiation.choose_revision`); the line, and whatever
followed it, is then replayed to the server as if it had just arrived. A dual-era client's
`server/discover` probe, when the script allows no 2026-era revision, is answered here
(-32601, as a handshake-era server does) and the next line decides.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream

from harness.protocol import METHOD_NOT_FOUND, ErrorObject, ErrorResponse, encode
from mock_servers.engine import (
    Choice,
    Script,
    ScriptError,
    SessionTranscript,
    choose_revision,
    first_message,
    served_revisions,
)
from mock_servers.stdio._server import (
    DEFAULT_ANSWER_TIMEOUT,
    MAX_LINE_BYTES,
    _process_streams,
    prepare_script,
    serve_stdio,
)

__all__ = ["serve_stdio_dev"]

Log = Callable[[str], None]


class _Replay(ByteReceiveStream):
    """`inner`, after the bytes already read from it."""

    def __init__(self, inner: ByteReceiveStream) -> None:
        self.inner = inner
        self.head = b""
        self.eof = False

    async def first_line(self, limit: int) -> bytes:
        """Read until the buffer holds a whole line (or EOF, or `limit`); take it out."""
        while b"\n" not in self.head and not self.eof and len(self.head) <= limit:
            try:
                self.head += await self.inner.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self.eof = True
        line, sep, rest = self.head.partition(b"\n")
        self.head = rest if sep else b""
        return line + sep

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            return out
        if self.eof:
            raise anyio.EndOfStream
        return await self.inner.receive(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _first_line(stdin: _Replay, limit: int, on_sigterm: str, announce: Log) -> bytes | None:
    """The client's next line, or None if SIGINT or SIGTERM stopped the wait.

    The server's own signal handling starts with the server; until then a signal ends
    the process as it would end a waiting server (exit 0), unless the script ignores
    SIGTERM.
    """
    got: list[bytes] = []
    async with anyio.create_task_group() as tg:

        async def read() -> None:
            got.append(await stdin.first_line(limit))
            tg.cancel_scope.cancel()

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                announce("stdio: waiting for the client's first message to pick the revision")
                async for signum in signals:
                    if signum == signal.SIGTERM and on_sigterm == "ignore":
                        continue
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(read)
        if sys.platform != "win32" and threading.current_thread() is threading.main_thread():
            tg.start_soon(watch)
    return got[0] if got else None


async def _serve(
    script: Script,
    revision: str | None,
    transcript_path: str | Path | None,
    answer_timeout: float,
    max_line_bytes: int,
    announce: Log,
    log: Log | None,
) -> int:
    allowed = served_revisions(script, "stdio")
    async with _process_streams(None, None, None) as streams:
        stdin = _Replay(streams.stdin)
        probes: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if revision is not None:
            choice = Choice(revision, "given with --revision")
        else:
            first = True
            unread = b""  # lines that name no revision, for the server to read as they came
            while True:
                line = await _first_line(
                    stdin, max_line_bytes, script.stdio.on_sigterm, announce if first else _quiet
                )
                first = False
                if line is None:
                    return 0  # stopped by a signal before the client said anything
                message = first_message(line) if line.strip() else None
                if message is None and not stdin.eof:
                    # A blank or unparsable line says nothing of the client's revision: the
                    # first line that parses chooses it.
                    unread += line
                    continue
                choice = choose_revision(allowed, message)
                if not (choice.probe and message is not None and "id" in message):
                    stdin.head = unread + line + stdin.head  # the server reads them as they came
                    break
                answer = ErrorResponse(
                    message["id"],
                    ErrorObject(METHOD_NOT_FOUND, "Method not found: server/discover"),
                )
                await streams.stdout.send((encode(answer) + "\n").encode("utf-8"))
                probes.append((message, answer.to_json()))
        announce(f"stdio: {choice.revision} ({choice.why})")
        transcript = SessionTranscript(
            None,
            "stdio",
            script=script.name,
            revision=choice.revision,
            transport="stdio",
            log=log,
            path=transcript_path,
        )
        for request, answer_json in probes:
            transcript.record("message", direction="client", message=request, channel="stdio")
            transcript.record("message", direction="server", message=answer_json, channel="stdio")
            transcript.record("note", text="a probe answered before the revision was chosen")
        return await serve_stdio(
            script,
            revision=choice.revision,
            transcript=transcript,
            transcript_path=transcript_path,
            answer_timeout=answer_timeout,
            max_line_bytes=max_line_bytes,
            stdin=stdin,
            stdout=streams.stdout,
            stderr=streams.stderr,
            handle_signals=threading.current_thread() is threading.main_thread(),
        )


def _quiet(text: str) -> None:
    return None


def _stderr(text: str) -> None:
    print(f"mcp-testbench: {text}", file=sys.stderr, flush=True)


def serve_stdio_dev(
    script: Script | str | Path,
    *,
    revision: str | None = None,
    transcript_path: str | Path | None = None,
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT,
    max_line_bytes: int = MAX_LINE_BYTES,
    quiet: bool = False,
) -> int:
    """Serve `script` on this process's stdin/stdout until the end; the exit code.

    With no `revision`, the client's first line picks it. One line on stderr says which
    revision is served and why; unless `quiet`, one line per message follows. Exit code 2
    (and one line on stderr) for a script that cannot run over stdio.
    """
    try:
        loaded, _ = prepare_script(script, revision)
        served_revisions(loaded, "stdio")
    except ScriptError as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        return anyio.run(
            partial(
                _serve,
                loaded,
                revision,
                transcript_path,
                answer_timeout,
                max_line_bytes,
                _stderr,
                None if quiet else _stderr,
            )
        )
    except KeyboardInterrupt:  # before the server's own signal handling was in place
        return 0
    except OSError as exc:
        print(f"{transcript_path}: cannot write the transcript: {exc.strerror}", file=sys.stderr)
        return 2
