"""The stdio mock's launcher: a real child process for the client, the mock pre-forked.

    python -I -S _launch.py POOL_SOCKET -- python -m mock_servers.stdio SCRIPT ...

A client spawns this (the argv comes from `StdioPool.command`). It hands its stdout and
stderr to the pool over a Unix socket (SCM_RIGHTS), so the forked mock writes the
client's pipes itself; it relays its stdin over the socket (framed, its end of file an
explicit frame), forwards the signals it gets to the mock, and exits as the mock exits
(the same code, or killed by the same signal). Killed itself (SIGKILL), it can send
nothing more: the mock sees the socket end without an end-of-file frame and kills itself
at once, never reading an end of file the client did not send to a live process (a
client that kills its server must not look like one that closed its stdin). When the pool
cannot be reached, it execs the command after `--`: a plain mock, paying its own start.

Standard library only, and run as a file under `-I -S`: its start is a bare interpreter's
(about 10 ms of CPU), not the mock's imports (about 0.3 s). It imports only the built-in
modules under `socket`, `signal`, `selectors` and `os` (`_socket`, `_signal`, `select`,
`posix`): their Python wrappers (enum, collections, functools) doubled the launcher's CPU,
and a suite run starts a launcher for every stdio run of a client that spawns its server.
"""

from __future__ import annotations

import _socket
import _struct
import posix
import select
import sys

TYPE_CHECKING = False  # mypy reads it as true; `typing` itself is a 5 ms import
if TYPE_CHECKING:
    import signal as _signal  # the stubs know `_signal` by the name of its wrapper
else:
    import _signal

__all__ = ["FORWARDED", "main"]

# The signals a client may send its server; each reaches the mock.
FORWARDED = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT, _signal.SIGUSR1)
_STATUS = _struct.Struct("!ii")  # (pid, 0) first; then (0 exited | 1 signalled, value)
_FRAME = _struct.Struct("!I")  # stdin bytes that follow; 0: end of file
_CHUNK = 65536


def _fallback(command: list[str], why: str) -> int:
    posix.write(2, f"mcp-testbench stdio launcher: {why}; starting the mock directly\n".encode())
    try:
        posix.execv(command[0], command)
    except OSError as exc:
        posix.write(2, f"mcp-testbench stdio launcher: cannot start {command[0]}: {exc}\n".encode())
    return 127


def _read_exact(conn: _socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        try:
            part = conn.recv(size - len(data))
        except InterruptedError:
            continue
        if not part:
            return None
        data += part
    return data


def _relay(conn: _socket.socket) -> bytes | None:
    """Relay stdin to the mock until the pool sends the mock's exit status; return it."""
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    poller.register(0, select.POLLIN)
    while True:
        for fd, _ in poller.poll():  # a signal forwarded meanwhile: poll resumes (PEP 475)
            if fd != 0:
                return _read_exact(conn, _STATUS.size)
            try:
                data = posix.read(0, _CHUNK)
            except OSError:
                data = b""
            try:  # noqa: SIM105 (contextlib is an import of collections and functools)
                conn.sendall(_FRAME.pack(len(data)) + data)
            except OSError:  # the mock is gone: its status follows
                pass
            if not data:
                poller.unregister(0)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        posix.write(2, b"usage: _launch.py POOL_SOCKET -- COMMAND...\n")
        return 2
    address, command = argv[0], argv[2:]
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.connect(address)
    except OSError as exc:
        conn.close()
        return _fallback(command, f"no pool at {address} ({exc.strerror})")
    # The working folder, then the mock's arguments, each ended by a NUL (which no path or
    # argument can hold): no json import, about 5 ms of this launcher's start.
    encoding = sys.getfilesystemencoding()
    arguments = [part.encode(encoding, "surrogateescape") for part in command[3:]]
    request = b"".join(part + b"\0" for part in [posix.getcwdb(), *arguments])
    fds = _struct.pack("2i", 1, 2)  # SCM_RIGHTS takes the descriptors as native ints
    try:
        conn.sendmsg(
            [_FRAME.pack(len(request)), request],
            [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)],
        )
        first = _read_exact(conn, _STATUS.size)
    except OSError:
        first = None
    if first is None:
        conn.close()
        return _fallback(command, "the pool did not fork the mock")
    pid = _STATUS.unpack(first)[0]
    # The mock owns the output pipes now: this process must not keep the client's stdout
    # open (the client would see no end of file when the mock closes it).
    null = posix.open("/dev/null", posix.O_RDWR)
    for fd in (1, 2):
        posix.dup2(null, fd)
    posix.close(null)

    def forward(signum: int, _frame: object) -> None:
        try:  # noqa: SIM105 (as above)
            posix.kill(pid, signum)
        except OSError:
            pass

    for signum in FORWARDED:
        _signal.signal(signum, forward)
    status = _relay(conn)
    if status is None:  # the pool went away with the mock
        return 1
    how, value = (int(v) for v in _STATUS.unpack(status))
    if how == 1:  # die of the same signal, so the client sees what the mock did
        _signal.signal(value, _signal.SIG_DFL)
        posix.kill(posix.getpid(), value)
        return 128 + value
    return value


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
