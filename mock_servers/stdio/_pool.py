"""A fork server for stdio mocks: the mock's imports paid once, not once per scenario.

    with StdioPool() as pool:
        argv = pool.command(stdio_command(script, ...))   # what the client spawns

`StdioPool` starts one process (`python -c ... SOCKET`, this module's `_serve`) that imports
the stdio mock and everything it needs, then waits on a Unix socket. A client spawns the
launcher (mock_servers/stdio/_launch.py, a bare interpreter); the launcher sends its
stdout and stderr, the pool forks, and the child runs the mock writing the client's own
pipes; the launcher relays its stdin (see there why not the descriptor itself). The pool
reaps each child and tells its launcher how it ended, and the launcher ends the same way.
The pool ends when its owner closes its stdin (or dies), killing what it forked.

The pool is single-threaded (forking a process with threads is unsafe); it is an
optimisation only: `command()` gives the plain argv when the pool is not running, and
the launcher falls back to it when the pool cannot be reached.
"""

from __future__ import annotations

import array
import contextlib
import errno
import gc
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["StdioPool"]

_LAUNCHER = Path(__file__).with_name("_launch.py")
_STATUS = struct.Struct("!ii")
_READY = b"ready\n"
START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0


class StdioPool:
    """The pool process, owned by the caller (start/stop, or a context manager)."""

    def __init__(self, timeout: float = START_TIMEOUT) -> None:
        self.timeout = timeout
        self._folder: str | None = None
        self.address = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> StdioPool:
        """Start the pool and wait (bounded) for it to listen; RuntimeError if it does not."""
        with self._lock:
            if self._process is not None:
                return self
            short = "/tmp" if os.path.isdir("/tmp") else None  # a socket path is short
            self._folder = tempfile.mkdtemp(prefix="mcptb-pool-", dir=short)
            self.address = os.path.join(self._folder, "pool.sock")
            process = self._process = subprocess.Popen(
                # Not `-m mock_servers.stdio._pool`: the package imports this module first,
                # and runpy then warns on stderr that it runs a module already imported.
                [sys.executable, "-c", _POOL_MAIN, self.address],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert process.stdout is not None
        ready = threading.Event()
        line: list[bytes] = []

        def read() -> None:
            assert process.stdout is not None
            line.append(process.stdout.readline())
            ready.set()

        threading.Thread(target=read, name="mcp-testbench pool start", daemon=True).start()
        if not ready.wait(self.timeout) or line != [_READY]:
            self.stop()
            raise RuntimeError(f"the stdio mock pool did not start within {self.timeout:g} s")
        return self

    def command(self, argv: Sequence[str]) -> list[str]:
        """The launcher's argv for the plain mock argv `argv` (from `stdio_command`);
        `argv` itself when the pool is not running."""
        if not self.running:
            return list(argv)
        return [sys.executable, "-I", "-S", str(_LAUNCHER), self.address, "--", *argv]

    def stop(self) -> None:
        """End the pool (its stdin closed, then SIGKILL if it lingers); idempotent."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT)
            if process.stdout is not None:
                process.stdout.close()
        if self._folder is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.address)
            with contextlib.suppress(OSError):
                os.rmdir(self._folder)
            self._folder = None

    def __enter__(self) -> StdioPool:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


# -- the pool process ---------------------------------------------------------------------


def _receive(conn: socket.socket) -> tuple[str, list[str], list[int]] | None:
    """The launcher's request (its working folder and the mock's arguments) and its stdout
    and stderr, or None for a broken one."""
    fds = array.array("i")
    try:
        header, ancillary, _flags, _addr = conn.recvmsg(4, socket.CMSG_SPACE(2 * fds.itemsize))
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
        if len(header) != 4:
            raise ValueError("short header")
        (size,) = struct.unpack("!I", header)
        body = b""
        while len(body) < size:
            part = conn.recv(size - len(body))
            if not part:
                raise ValueError("short request")
            body += part
        if len(fds) != 2 or not body.endswith(b"\0"):
            raise ValueError("bad request")
        cwd, *argv = (os.fsdecode(part) for part in body[:-1].split(b"\0"))
        return cwd, argv, list(fds)
    except (OSError, ValueError):
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        return None


def _child(conn: socket.socket, cwd: str, argv: list[str], fds: list[int]) -> None:
    """In the forked child: become the mock on the launcher's descriptors; never returns."""
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        for target, fd in zip((1, 2), fds, strict=True):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        stdin_r, stdin_w = os.pipe()
        os.dup2(stdin_r, 0)
        os.close(stdin_r)
        with contextlib.suppress(OSError):
            os.chdir(cwd or ".")
        threading.Thread(
            target=_stdin_from_launcher,
            args=(conn, stdin_w),
            name="mcp-testbench stdin relay",
            daemon=True,
        ).start()
        from mock_servers.stdio._server import main

        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _stdin_from_launcher(conn: socket.socket, pipe: int) -> None:
    """In the child: the launcher's stdin frames into the mock's stdin pipe. An end-of-file
    frame closes the pipe; the socket ending without one means the launcher was killed,
    and a mock whose process the client killed dies with it, at once."""
    writing = True
    while True:
        header = _exact(conn, 4)
        if header is None:
            os.kill(os.getpid(), signal.SIGKILL)
            return
        (size,) = struct.unpack("!I", header)
        data = _exact(conn, size) if size else b""
        if data is None:
            os.kill(os.getpid(), signal.SIGKILL)
            return
        if not writing:
            continue
        if not data:
            os.close(pipe)
            writing = False
            continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(pipe, view) :]
        except OSError:  # the mock closed its stdin: later input goes nowhere
            os.close(pipe)
            writing = False


def _exact(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        try:
            part = conn.recv(size - len(data))
        except InterruptedError:
            continue
        except OSError:
            return None
        if not part:
            return None
        data += part
    return data


def _serve(address: str) -> int:
    # Everything a mock imports, imported once here, and every revision's schema loaded
    # (the send gate checks each message a mock writes): the children inherit it all.
    from harness.protocol import REVISIONS, validate
    from mock_servers.engine import package_version
    from mock_servers.stdio._server import preload

    for revision in REVISIONS:
        for direction in ("client", "server"):
            validate({"jsonrpc": "2.0", "id": 0, "result": {}}, revision, direction)
    # What a mock pays on its first lines otherwise (about 50 ms a start): anyio imports
    # its asyncio backend (and asyncio itself) only when `anyio.run` is first called, and
    # its signal receiver when the mock opens one; the version in the transcript's start
    # entry reads the package metadata. Imports only: no event loop runs here, so no
    # thread exists when the pool forks.
    import anyio._backends._asyncio
    import anyio._core._signals  # noqa: F401

    package_version()
    # What is loaded now is never garbage: the children's collector skips it (and so
    # does not touch, and copy, the pages they share with the pool).
    gc.collect()
    gc.freeze()

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, _exit_on_signal)  # the finally below kills the children
    # Ctrl-C reaches the whole process group: the run this pool serves winds down and ends
    # it (its stdin closes); a KeyboardInterrupt here would only print a traceback. Forked
    # mocks get the default back (_child).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    children: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "reap")
    selector.register(0, selectors.EVENT_READ, "owner")
    sys.stdout.buffer.write(_READY)
    sys.stdout.flush()
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "owner":
                    if not os.read(0, 4096):
                        return 0
                elif key.data == "reap":
                    with contextlib.suppress(OSError):
                        os.read(wake_r, 4096)
                    _reap(children)
                else:
                    conn, _ = listener.accept()
                    received = _receive(conn)
                    if received is None:
                        conn.close()
                        continue
                    cwd, argv, fds = received
                    preload(argv, cwd)  # once per script: every later child inherits it
                    sys.stdout.flush()
                    pid = os.fork()
                    if pid == 0:
                        selector.close()
                        listener.close()
                        for other in children.values():
                            other.close()
                        os.close(wake_r)
                        os.close(wake_w)
                        _child(conn, cwd, argv, fds)
                    for fd in fds:
                        os.close(fd)
                    children[pid] = conn
                    try:
                        conn.sendall(_STATUS.pack(pid, 0))
                    except OSError:  # the launcher is gone already
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
            _reap(children)
    finally:
        for pid, conn in children.items():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            conn.close()
        listener.close()


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _reap(children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            raise
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        if os.WIFSIGNALED(status):
            message = _STATUS.pack(1, os.WTERMSIG(status))
        else:
            message = _STATUS.pack(0, os.waitstatus_to_exitcode(status))
        with contextlib.suppress(OSError):
            conn.sendall(message)
        conn.close()


_POOL_MAIN = (
    "import sys; from mock_servers.stdio._pool import _serve; sys.exit(_serve(sys.argv[1]))"
)

if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
