"""`mcp-testbench serve` as a subprocess, for the tests that run it for real."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

WAIT = 10.0


@contextmanager
def serve(*args: str) -> Iterator[tuple[str, subprocess.Popen[str], list[str]]]:
    """`mcp-testbench serve ARGS --http 127.0.0.1:0`: its URL, process, stderr lines."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness._cli", "serve", *args, "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    errors: list[str] = []
    url: list[str] = []
    ready = threading.Event()

    def read(stream: IO[str], into: list[str], find_url: bool) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))
            found = re.search(r" at (http://\S+)$", line)
            if find_url and found:
                url.append(found.group(1))
                ready.set()
        ready.set()

    out: list[str] = []
    readers = [
        threading.Thread(target=read, args=(proc.stdout, out, True), daemon=True),
        threading.Thread(target=read, args=(proc.stderr, errors, False), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        assert ready.wait(WAIT), f"serve did not start: {out} {errors}"
        assert url, f"serve printed no URL: {out} {errors}"
        yield url[0], proc, errors
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(WAIT)
        for reader in readers:
            reader.join(WAIT)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
