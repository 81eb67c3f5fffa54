"""The session-wide leak check (tests/conftest.py) sees what it must see."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from _leaks import children, listening_sockets


def test_a_child_process_is_seen_until_it_is_stopped() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert child.pid in {pid for pid, _ in children(os.getpid())}
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)
    assert child.pid not in {pid for pid, _ in children(os.getpid())}


def test_a_listening_socket_is_seen_until_it_is_closed() -> None:
    before = set(listening_sockets(os.getpid()))
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert set(listening_sockets(os.getpid())) - before
    finally:
        server.close()
    assert set(listening_sockets(os.getpid())) == before
