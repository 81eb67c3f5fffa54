"""The stdio mock's launcher: a real child process for the client, the mock pre-forked.

    python -I -S _stdio_launch.py POOL_SOCKET -- python -m mock_servers.stdio SCRIPT ...

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
(about 20 ms), not the mock's imports (about 0.3 s).
"""

from __future__ import annotations

import array
import contextlib
import os
import selectors
import signal
import socket
import struct
import sys

__all__ = ["FORWARDED", "main"]

# The signals a client may send its server; each reaches the mock.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
_STATUS = struct.Struct("!ii")  # (pid, 0) first; then (0 exited | 1 signalled, value)
_FRAME = struct.Struct("!I")  # stdin bytes that follow; 0: end of file
_CHUNK = 65536


def _fallback(command: list[str], why: str) -> int:
    os.write(2, f"mcp-testbench stdio launcher: {why}; starting the mock directly\n".encode())
    try:
        os.execv(command[0], command)
    except OSError as exc:
        os.write(2, f"mcp-testbench stdio launcher: cannot start {command[0]}: {exc}\n".encode())
    return 127


def _read_exact(conn: socket.socket, size: int) -> bytes | None:
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


def _relay(conn: socket.socket) -> bytes | None:
    """Relay stdin to the mock until the pool sends the mock's exit status; return it."""
    selector = selectors.DefaultSelector()
    selector.register(conn, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is conn:
                    return _read_exact(conn, _STATUS.size)
                try:
                    data = os.read(0, _CHUNK)
                except OSError:
                    data = b""
                with contextlib.suppress(OSError):  # the mock is gone: its status follows
                    conn.sendall(_FRAME.pack(len(data)) + data)
                if not data:
                    selector.unregister(0)
    finally:
        selector.close()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        os.write(2, b"usage: _stdio_launch.py POOL_SOCKET -- COMMAND...\n")
        return 2
    address, command = argv[0], argv[2:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(address)
    except OSError as exc:
        conn.close()
        return _fallback(command, f"no pool at {address} ({exc.strerror})")
    # The working folder, then the mock's arguments, each ended by a NUL (which no path or
    # argument can hold): no json import, about 5 ms of this launcher's start.
    request = b"".join(os.fsencode(part) + b"\0" for part in [os.getcwd(), *command[3:]])
    fds = array.array("i", [1, 2])
    try:
        conn.sendmsg(
            [struct.pack("!I", len(request)), request],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())],
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
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    status = _relay(conn)
    if status is None:  # the pool went away with the mock
        return 1
    how, value = (int(v) for v in _STATUS.unpack(status))
    if how == 1:  # die of the same signal, so the client sees what the mock did
        signal.signal(value, signal.SIG_DFL)
        os.kill(os.getpid(), value)
        return 128 + value
    return value


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
