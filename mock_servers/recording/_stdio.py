"""The stdio recording proxy: the command a client starts, with the real server as its child.

Bytes go through unchanged and at once, in both directions (each chunk as it comes, its
complete lines recorded just before it is relayed); the server's stderr is the proxy's own. The session ends when either
side does: the client closing its end (the server then gets its stdin closed, a moment to
exit, then SIGTERM), the server ending (the client then sees its output end), or a signal to
the proxy. In every case the script is written, partial when the session ended half way.

The file descriptors are read and written with os.read and os.write: a buffered stdin read
by a daemon thread can make the interpreter abort at exit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Literal

from mock_servers.recording._capture import Capture, Seen, decode
from mock_servers.recording._output import check_out, start_error, write_recording
from mock_servers.recording._redact import Redactor

__all__ = ["record_stdio"]

_CHUNK = 65536
_EXIT_GRACE = 1.0  # after the client closed: the server's time to exit on its own (seconds)
_KILL_GRACE = 0.5  # after SIGTERM, before SIGKILL


class _Lines:
    """Splits a byte stream into lines for the record (the relay never waits for them)."""

    def __init__(self, sender: Literal["client", "server"], capture: Capture) -> None:
        self.sender = sender
        self.capture = capture
        self.pending = b""

    def feed(self, chunk: bytes) -> None:
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        for line in lines:
            self._add(line)

    def close(self) -> None:
        if self.pending.strip():
            self._add(self.pending)
        self.pending = b""

    def _add(self, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        if not text.strip():
            return
        self.capture.add(Seen(self.sender, decode(text), text))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _pump(source: int, target: int, lines: _Lines, done: Callable[[str], None]) -> None:
    """Relay `source` to `target` until either ends; then say which ended."""
    while True:
        try:
            chunk = os.read(source, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            lines.close()
            done("read")
            return
        # Recorded before it is relayed: an answer cannot then be recorded before the
        # message it answers, whichever thread gets the lock first.
        lines.feed(chunk)
        try:
            _write_all(target, chunk)
        except OSError:  # the other side is gone
            lines.close()
            done("write")
            return


def record_stdio(
    command: Sequence[str],
    out: Path,
    *,
    exact: bool = False,
    redact: Sequence[str] = (),
    name: str | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    say: Callable[[str], None] = lambda line: None,
) -> int:
    """Relay a client on `stdin_fd`/`stdout_fd` to the server `command` starts, and write
    the script of the session to `out`. Returns the exit status (0: a whole session written).

    Raises RecordError before anything starts: a command that cannot start, an `out` that
    cannot be written.
    """
    check_out(out)
    redactor = Redactor(redact, environ=os.environ)
    try:
        server = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
    except OSError as exc:
        raise start_error(command, exc) from None
    assert server.stdin is not None
    assert server.stdout is not None
    capture = Capture("stdio")
    ended = threading.Event()
    why: list[str] = []

    def finished(what: str) -> Callable[[str], None]:
        def done(how: str) -> None:
            why.append(f"{what}:{how}")
            ended.set()

        return done

    server_in, server_out = server.stdin.fileno(), server.stdout.fileno()
    to_server = threading.Thread(
        target=_pump,
        args=(stdin_fd, server_in, _Lines("client", capture), finished("client")),
        daemon=True,
    )
    to_client = threading.Thread(
        target=_pump,
        args=(server_out, stdout_fd, _Lines("server", capture), finished("server")),
        daemon=True,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        why.append(f"signal:{signal.Signals(signum).name}")
        ended.set()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        to_server.start()
        to_client.start()
        ended.wait()
        first = why[0]
        if first.startswith("client"):
            # The client closed its end: so does the server's stdin, and the server may
            # still answer what it was asked before it exits (relayed meanwhile).
            _close(server.stdin)
        elif first.startswith("signal"):
            capture.ended_by = f"the recorder was stopped ({first.partition(':')[2]})"
        status = _stop(server)
        to_client.join(_KILL_GRACE)
        if status and not any(s.sender == "server" for s in capture.snapshot()):
            say(
                f"the server command did not start: it exited with status {status} "
                f"before it answered anything ({' '.join(command)}); no script written"
            )
            return 2
        if first.startswith("server"):
            capture.ended_by = (
                f"the server ended the session (it exited with status {status})"
                if status is not None
                else "the server closed its output"
            )
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _close(server.stdin)
    with contextlib.suppress(OSError):
        os.close(stdout_fd)  # the client sees the end of our output, whatever it does next
    return write_recording(capture, out, exact=exact, redactor=redactor, name=name, say=say)


def _close(stream: object) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        with contextlib.suppress(OSError):
            close()


def _stop(server: subprocess.Popen[bytes]) -> int | None:
    """The server's exit status, ending it if it does not end on its own."""
    for ask, grace in ((None, _EXIT_GRACE), (server.terminate, _KILL_GRACE), (server.kill, 5.0)):
        if ask is not None:
            with contextlib.suppress(OSError):
                ask()
        try:
            return server.wait(grace)
        except subprocess.TimeoutExpired:
            continue
    return None
