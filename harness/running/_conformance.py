"""A conformance client started as the official runner starts it, against a mock.

The official conformance runner (`@modelcontextprotocol/conformance` 0.2.0-alpha.12) runs a
client's conformance command once per client scenario: it starts that scenario's server,
then spawns `/bin/sh -c "<command> <server URL>"` (Node's `spawn(..., {shell: true})` of the
command split on spaces and joined again, the URL last), with the scenario's name in
MCP_CONFORMANCE_SCENARIO, the revision in MCP_CONFORMANCE_PROTOCOL_VERSION and, for a few
scenarios only, MCP_CONFORMANCE_CONTEXT (compact JSON, `name` first), every other variable
inherited, stdin a pipe never written, and waits for the process to exit and its output to
end. After its time-out (default 30000 ms) it sends SIGTERM to the shell alone and goes on
waiting; a process ended by a signal counts as exit code 0.

`run_conformance_client` does the same against a script's mock (mock_servers), and adds
what the runner lacks: the client is in a process group of its own, and when neither the
time-out's SIGTERM nor the client itself ends it within `grace` seconds, the harness kills
the group (SIGKILL). That is a hang, reported as one (`ConformanceRun.hung`), never a
verdict for the client. Nothing the command started outlives the run: what is left of its
group when the shell has exited is killed too, and said.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from harness.running._scenario import Scenario, ScenarioRun
from mock_servers import fixtures_root, load_script, read_transcript

__all__ = [
    "AUTHORIZATION_SERVER",
    "CONTEXT_VARIABLE",
    "DEFAULT_GRACE",
    "RUNNER_TIMEOUT_MS",
    "SCENARIO_VARIABLE",
    "VERSION_VARIABLE",
    "ConformanceRun",
    "ConformanceTarget",
    "run_conformance_client",
    "runner_command_line",
    "stop_conformance_clients",
]

SCENARIO_VARIABLE = "MCP_CONFORMANCE_SCENARIO"
VERSION_VARIABLE = "MCP_CONFORMANCE_PROTOCOL_VERSION"
CONTEXT_VARIABLE = "MCP_CONFORMANCE_CONTEXT"
AUTHORIZATION_SERVER = "{authorization server}"
"""A context value that stands for the mock's authorization server's URL (its issuer):
the runner's pre-registration scenario hands its own to the client."""
RUNNER_TIMEOUT_MS = 30000
"""The runner's per-scenario time-out (`--timeout`, and its GitHub action's), in ms."""
DEFAULT_GRACE = 10.0
"""Seconds a client gets to end after the time-out's SIGTERM before the harness kills its
process group: the runner never does, and waits for ever."""
_OUTPUT_LIMIT = 4 * 1024 * 1024  # of each of stdout and stderr kept (the runner keeps all)
_REAP_BOUND = 5.0  # after SIGKILL, the kernel's part

# The process groups of the commands running now: a session that ends early (Ctrl-C) ends
# them too, as their groups are not the session's (they would outlive it otherwise).
_LIVE: set[int] = set()
_LIVE_LOCK = threading.Lock()


def stop_conformance_clients() -> None:
    """Kill every conformance command still running in this process's runs (their whole
    process groups); their runs then end at once. Also called when the process exits."""
    with _LIVE_LOCK:
        groups = list(_LIVE)
    for group in groups:
        _kill_group(group)


atexit.register(stop_conformance_clients)


@dataclass(frozen=True)
class ConformanceTarget:
    """One official client scenario at one revision, and the script that serves it."""

    scenario: str
    """The runner's name for it (MCP_CONFORMANCE_SCENARIO), e.g. `tools_call`."""
    revision: str
    """MCP_CONFORMANCE_PROTOCOL_VERSION, and the revision the mock serves."""
    script: str
    """The script's path under fixtures/."""
    url_path: str = ""
    """What follows `http://localhost:PORT` in the URL: "" (the runner's raw servers,
    which serve every path) or "/mcp"."""
    context: Mapping[str, Any] | None = None
    """MCP_CONFORMANCE_CONTEXT's members after `name` (None: the variable is not set)."""


@dataclass
class ConformanceRun:
    """What one start of the command left: the mock's transcript and how the process ended."""

    target: ConformanceTarget
    command: str
    url: str = ""
    variables: dict[str, str] = field(default_factory=dict)
    """The MCP_CONFORMANCE_* variables it was given (on top of the inherited environment)."""
    transcript: Mapping[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    """As the runner counts it: the process's code, 0 when a signal ended it, -1 when it
    could not be spawned; None when it never exited (the harness killed it)."""
    returncode: int | None = None
    """The shell's own status (negative: the signal that ended it)."""
    timed_out: bool = False
    """The runner's time-out expired (then the shell got SIGTERM, as the runner sends it)."""
    hung: bool = False
    """The client did not end within the grace after the time-out: the harness killed its
    process group. The runner would have waited for it for ever."""
    left_behind: bool = False
    """Processes the command started were still running when it ended: killed."""
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    started: float = 0.0
    ended: float = 0.0
    harness_error: str | None = None
    """The harness's own failure (the mock did not start, the transcript is unreadable)."""

    @property
    def entries(self) -> list[dict[str, Any]]:
        return list(self.transcript.get("entries", []))

    @property
    def shown_status(self) -> str:
        """How the process ended, in words."""
        if self.harness_error is not None:
            return f"not run: {self.harness_error}"
        if self.hung:
            return "hung: it did not exit after the time-out's SIGTERM; killed by the harness"
        if self.exit_code == -1:
            return "could not be spawned"
        timed = " after the time-out (SIGTERM)" if self.timed_out else ""
        return f"exited with code {self.exit_code}{timed}"

    def scenario_run(self, scenario: Scenario) -> ScenarioRun:
        """The run as the suite's checks read one: the transcript, no operations (a
        conformance client surfaces nothing to the harness)."""
        return ScenarioRun(
            scenario,
            self.target.revision,
            "http",
            client_name=self.command,
            transcript=self.transcript,
            harness_error=self.harness_error,
            diagnostics=self.stderr[-4000:],
            seconds=self.seconds,
        )


def runner_command_line(command: str, url: str) -> str:
    """What Node runs for `spawn(parts[0], [...parts.slice(1), url], {shell: true})` with
    `parts = command.split(" ")`: the parts joined by single spaces again, and the URL."""
    return " ".join([*command.split(" "), url])


def _variables(target: ConformanceTarget, issuer: str = "") -> dict[str, str]:
    """The MCP_CONFORMANCE_* variables; a context value that is `AUTHORIZATION_SERVER` is
    the mock's authorization server (`issuer`, known once the mock listens)."""
    variables = {SCENARIO_VARIABLE: target.scenario, VERSION_VARIABLE: target.revision}
    if target.context is not None:
        # JSON.stringify({name, ...context}): compact, `name` first, non-ASCII as is.
        filled = {k: issuer if v == AUTHORIZATION_SERVER else v for k, v in target.context.items()}
        context = {"name": target.scenario, **filled}
        variables[CONTEXT_VARIABLE] = json.dumps(context, separators=(",", ":"), ensure_ascii=False)
    return variables


def run_conformance_client(
    command: str,
    target: ConformanceTarget,
    *,
    timeout_ms: int = RUNNER_TIMEOUT_MS,
    grace: float = DEFAULT_GRACE,
) -> ConformanceRun:
    """Serve `target`'s script, run `command` against it as the runner does, and return
    what happened; never raises, never hangs (bounded by the time-out plus `grace`)."""
    from mock_servers.http import HttpMockServer

    run = ConformanceRun(target, command, variables=_variables(target))
    begun = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-conformance-") as folder:
        transcript_path = Path(folder) / "transcript.jsonl"
        try:
            script = load_script(fixtures_root() / target.script)
            server = HttpMockServer(
                script,
                revision=target.revision,
                transport="http",
                transcript_path=transcript_path,
                host="localhost",
            )
            server.start()
        except Exception as exc:  # the harness's own failure, never the client's
            run.harness_error = f"the mock did not start: {type(exc).__name__}: {exc}"
            run.seconds = time.monotonic() - begun
            return run
        try:
            run.url = f"http://localhost:{server.port}{target.url_path}"
            run.variables = _variables(target, server.auth_url)
            _spawn_and_wait(run, timeout_ms / 1000, grace)
        finally:
            server.stop()
        try:
            run.transcript = read_transcript(transcript_path)
        except (OSError, ValueError) as exc:
            run.harness_error = f"unreadable transcript: {exc}"
    run.seconds = time.monotonic() - begun
    return run


def _spawn_and_wait(run: ConformanceRun, timeout: float, grace: float) -> None:
    line = runner_command_line(run.command, run.url)
    run.started = time.monotonic()
    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", line],
            stdin=subprocess.PIPE,  # open and never written, as the runner's
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **run.variables},
            start_new_session=True,  # a group of its own, for the harness's SIGKILL
        )
    except OSError as exc:  # Node's 'error' event: the runner counts -1
        run.exit_code = -1
        run.stderr = f"mcp-testbench: could not spawn /bin/sh: {exc}"
        run.ended = time.monotonic()
        return
    outputs: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    readers = [
        threading.Thread(target=_drain, args=(stream, outputs[name]), daemon=True)
        for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
    ]
    for reader in readers:
        reader.start()
    group = process.pid
    with _LIVE_LOCK:
        _LIVE.add(group)
    try:
        # The runner's 'close': the process exited and both pipes reached their end.
        if not _closed(process, readers, run.started + timeout):
            run.timed_out = True
            if process.poll() is None:  # an exited shell (its output held open) is not signalled
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)  # the shell alone, as Node's kill()
            if not _closed(process, readers, time.monotonic() + grace):
                run.hung = True
                _kill_group(group)
                _closed(process, readers, time.monotonic() + _REAP_BOUND)
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(group)
        if _group_alive(group):
            run.left_behind = not run.hung
            _kill_group(group)
        if process.poll() is None:  # only if even SIGKILL could not end it
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(_REAP_BOUND)
        for reader in readers:
            reader.join(_REAP_BOUND)
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
    run.ended = time.monotonic()
    run.returncode = process.returncode
    if not run.hung and process.returncode is not None:
        run.exit_code = max(process.returncode, 0)  # Node: `code || 0`, a signal is 0
    run.stdout = outputs["stdout"].decode("utf-8", errors="replace")
    run.stderr = outputs["stderr"].decode("utf-8", errors="replace")


def _drain(stream: IO[bytes] | None, into: bytearray) -> None:
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            if len(into) < _OUTPUT_LIMIT:
                into += chunk[: _OUTPUT_LIMIT - len(into)]


def _closed(process: subprocess.Popen[bytes], readers: list[threading.Thread], by: float) -> bool:
    """Whether the process exited and its output ended before the moment `by`."""
    try:
        process.wait(max(0.0, by - time.monotonic()))
    except subprocess.TimeoutExpired:
        return False
    for reader in readers:
        reader.join(max(0.0, by - time.monotonic()))
    return not any(reader.is_alive() for reader in readers)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
