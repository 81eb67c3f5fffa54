"""A script served for one test, and what its replay found: the `mcp_recording` fixture's
work, without pytest (the plugin, `harness.pytest_plugin`, turns the findings into a
teardown error).

Over HTTP the script is served by the harness's own runner, uvicorn on a free port of
127.0.0.1, as one run for the whole test (every session of the client goes on where the
last one stopped). Over stdio the test gets the command that starts the stdio mock, for
its client to spawn; each process is a fresh run of the script, and every process writes
to the one transcript. At the end, `ServedRecording.finish()` stops what is left and reads
the transcript: the messages no recorded step matched (with the closest step and the
difference, the `data` of the error the mock answered), the requests the HTTP mock refused
for a transport rule the client broke, the recorded steps never used, and what kept the
replay from being the recording (a scripted message the mock could not send, a stdio mock
the client left running).

The heavy imports (the mocks, uvicorn) wait for the first use: the plugin imports this
module in every pytest run.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.running import TranscriptWatch
    from mock_servers import Script
    from mock_servers.http import HttpMockServer

__all__ = [
    "SERVED_TRANSPORTS",
    "RecordingError",
    "ReplayFindings",
    "ServedRecording",
    "resolve_script",
]

SERVED_TRANSPORTS = ("stdio", "http", "sse-legacy")
END_BOUND = 5.0
"""Seconds a stdio mock gets to end once the test is over: a client that closed it has
closed its stdin, and the mock ends at once; one still running after this was left open."""
_SHOWN = 160
"""Characters of a message or pattern shown in a finding (the transcript has it whole)."""
# The HTTP mock's refusals that are the engine's own answer to a message it also records
# as `unmatched` (or judges elsewhere): not reported twice.
_ENGINE_REFUSALS = frozenset(
    {
        "unknown-method-2026",
        "meta-missing-2026",
        "unsupported-version-2026",
        "engine-error",
        "unauthorized",
        "insufficient-scope",
    }
)

Entries = list[dict[str, Any]]


class RecordingError(Exception):
    """The script cannot be served as asked (one line: what, where, and the fix)."""


def resolve_script(given: str | os.PathLike[str], folder: Path) -> Path:
    """`given` as a path, a relative one read from `folder` (the test file's)."""
    path = Path(given).expanduser()
    if not path.is_absolute():
        path = folder / path
    if path.is_dir():
        raise RecordingError(f"{given}: is a folder ({path}); name one script in it")
    if not path.is_file():
        raise RecordingError(
            f"{given}: no such script ({path}; a relative path is read from the test file's folder)"
        )
    return path


@dataclass(frozen=True)
class ReplayFindings:
    """What the replay found, each finding a line (or a few) to show."""

    unrecorded: tuple[str, ...] = ()
    """Messages the recording never saw, and requests refused for a transport rule."""
    unused: tuple[str, ...] = ()
    """Recorded steps no client message used (steps marked `optional` never count)."""
    trouble: tuple[str, ...] = ()
    """What kept the replay from being the recording; never relaxed."""

    def problems(self, *, allow_unused: bool, allow_unrecorded: bool) -> list[str]:
        """The lines of a failure, or none: the findings that are not allowed."""
        lines: list[str] = []
        if self.unrecorded and not allow_unrecorded:
            n = len(self.unrecorded)
            lines.append(f"the client sent {n} message{'s' * (n != 1)} the recording never saw:")
            lines += [f"  {line}" for finding in self.unrecorded for line in finding.split("\n")]
        if self.unused and not allow_unused:
            n = len(self.unused)
            lines.append(f"{n} recorded step{' was' if n == 1 else 's were'} never used:")
            lines += [f"  {step}" for step in self.unused]
        lines += self.trouble
        return lines


@dataclass
class ServedRecording:
    """`path` served over `transport` for one test: `url` (HTTP) or `command` (stdio).

        served = ServedRecording(path, "http", transcript_path=folder / "t.jsonl").start()
        ... a client talks to served.url ...
        findings = served.finish()

    `transport` "" serves the script's first (stdio, for a recording made over stdio);
    `revision` pins the revision served (default: the script's newest, a recording's only
    one). `entries()` is the transcript so far; the file is `transcript_path`.
    """

    path: Path
    transport: str
    transcript_path: Path
    revision: str | None = None
    url: str = ""
    command: list[str] = field(default_factory=list)
    script: Script = field(init=False)
    served_revision: str = field(init=False, default="")
    _server: HttpMockServer | None = field(init=False, default=None, repr=False)
    _watch: TranscriptWatch | None = field(init=False, default=None, repr=False)
    _finished: ReplayFindings | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        from mock_servers import ScriptError, load_script

        if self.transport and self.transport not in SERVED_TRANSPORTS:
            raise RecordingError(
                f"transport={self.transport!r}: use one of {', '.join(map(repr, SERVED_TRANSPORTS))}"
            )
        try:
            self.script = load_script(self.path)
        except ScriptError as exc:
            raise RecordingError(str(exc)) from None
        # "" (none given): the script's first, for a recording the one it was made over.
        self.transport = self.transport or self.script.transports[0]
        if self.transport not in self.script.transports:
            raise RecordingError(
                f"{self.path}: the script runs over {', '.join(self.script.transports)}, "
                f"not {self.transport}: serve it over one of those (transport=...)"
            )

    def start(self) -> ServedRecording:
        from mock_servers import ScriptError

        try:
            if self.transport == "stdio":
                self._start_stdio()
            else:
                self._start_http()
        except (ScriptError, ValueError) as exc:
            raise RecordingError(str(exc)) from None
        return self

    def _start_http(self) -> None:
        from mock_servers.http import HttpMockServer

        server = HttpMockServer(
            self.script,
            revision=self.revision,
            transport=self.transport,
            transcript_path=self.transcript_path,
        )
        self.served_revision = server.mock.revision
        server.start()
        self._server, self.url = server, server.url

    def _start_stdio(self) -> None:
        from harness.running import TranscriptWatch
        from mock_servers.stdio import prepare_script, stdio_command

        _, self.served_revision = prepare_script(self.script, self.revision)
        # The watch is in place before any process starts: each entry it writes wakes it.
        self._watch = TranscriptWatch(self.transcript_path)
        self.command = stdio_command(
            self.path,
            revision=self.revision,
            transcript=self.transcript_path,
            append_transcript=True,  # a client that starts it again adds to the record
        )

    def entries(self) -> Entries:
        """The transcript's entries so far (every stdio process's, in order)."""
        if self._server is not None:
            return list(self._server.transcript.entries)
        if self._watch is not None:
            return self._watch.entries()
        return []

    def finish(self) -> ReplayFindings:
        """Stop the HTTP mock (or wait for the stdio mocks to end, stopping any the client
        left running) and say what the replay found; once (later calls repeat it)."""
        if self._finished is not None:
            return self._finished
        trouble: list[str] = []
        if self._server is not None:
            self._server.stop()  # records the steps never used
            entries = list(self._server.transcript.entries)
            unused = _unconsumed_labels(entries)
        else:
            entries, trouble = self._end_stdio()
            unused = self._unused_by_every_process(entries)
        steps = {step.label: step for step in self.script.steps}
        trouble += [
            f"the mock could not send what the script says ({e.get('where')}: "
            f"{e.get('reason')}): the replay is not the recording; `mcp-testbench validate` "
            "the script"
            for e in entries
            if e["kind"] == "mock_error"
        ]
        self._finished = ReplayFindings(
            unrecorded=tuple(_unrecorded(entries, steps)),
            unused=tuple(_show_step(steps[label]) if label in steps else label for label in unused),
            trouble=tuple(trouble),
        )
        return self._finished

    def _end_stdio(self) -> tuple[Entries, list[str]]:
        watch = self._watch
        if watch is None:
            return [], []
        trouble: list[str] = []
        try:
            if not _wait(watch, _all_ended, END_BOUND):
                left = _running(watch.entries())
                for pid in left:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGTERM)  # its transcript says which steps it used
                if left:
                    trouble.append(
                        f"the client left the stdio mock running (pid {', '.join(map(str, left))}) "
                        f"{END_BOUND:g} s after the test; it was stopped: close the client "
                        "(it closes the server's stdin) before the test ends"
                    )
                    _wait(watch, _all_ended, END_BOUND)
            return watch.entries(), trouble
        finally:
            watch.close()

    def _unused_by_every_process(self, entries: Entries) -> list[str]:
        """The steps no stdio process used: each process is a fresh run of the script, so
        a step is used when one of them used it. No process at all: every step."""
        runs = _processes(entries)
        if not runs:
            return [
                s.label
                for s in self.script.steps
                if s.kind == "expect" and not s.raw.get("optional")
            ]
        unused: set[str] | None = None
        for run in runs:
            left = set(_unconsumed_labels(run))
            unused = left if unused is None else unused & left
        order = [s.label for s in self.script.steps]
        return sorted(unused or (), key=order.index)


def _wait(watch: TranscriptWatch, seen: Callable[[Entries], bool], bound: float) -> bool:
    """Whether `seen(entries)` became true within `bound` seconds, woken by the mock's
    transcript pings (a synchronous `TranscriptWatch.until`: a test's teardown has no
    event loop of its own)."""
    deadline = time.monotonic() + bound
    while not seen(watch.entries()):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        readable, _, _ = select.select([watch.sock], [], [], left)
        if readable:
            with contextlib.suppress(OSError):
                while watch.sock.recv(4096):
                    pass
    return True


def _processes(entries: Entries) -> list[Entries]:
    """The entries of each stdio process, in the order they ran."""
    runs: list[Entries] = []
    for entry in entries:
        if entry["kind"] == "start":
            runs.append([])
        if runs:
            runs[-1].append(entry)
    return runs


def _running(entries: Entries) -> list[int]:
    """The pids of the processes that started and never recorded their exit."""
    return [
        int(run[0]["pid"])
        for run in _processes(entries)
        if not any(e["kind"] == "exit" for e in run) and isinstance(run[0].get("pid"), int)
    ]


def _all_ended(entries: Entries) -> bool:
    return not _running(entries)


def _unconsumed_labels(entries: Iterable[Mapping[str, Any]]) -> list[str]:
    return [label for e in entries if e["kind"] == "unconsumed" for label in e["steps"]]


def _unrecorded(entries: Entries, steps: Mapping[str, Any]) -> list[str]:
    found = []
    for entry in entries:
        if entry["kind"] == "unmatched":
            message = entry.get("message")
            closest, diff = entry.get("closest"), entry.get("diff") or []
            if closest is None:
                why = "no recorded step expects anything like it"
            else:
                why = f"closest recorded step: {closest}: {'; '.join(diff) or 'no difference'}"
            found.append(f"{_show_message(message)}\n  {why}")
        elif (
            entry["kind"] == "refusal"
            and not entry.get("scripted")
            and entry.get("rule") not in _ENGINE_REFUSALS
        ):
            found.append(
                f"an HTTP request the mock refused with {entry.get('status')} "
                f"({entry.get('rule')}): {entry.get('reason')}"
            )
    return found


def _show_step(step: Any) -> str:
    if step.kind == "expect":
        return f"{step.label}: {_short(step.raw['expect'])}"
    return str(step.label)


def _show_message(message: Any) -> str:
    if not isinstance(message, dict):
        return _short(message)
    if "method" in message:
        shown = str(message["method"])
        params = message.get("params")
        if isinstance(params, dict):  # the `_meta` a client fills in is no step's business
            params = {k: v for k, v in params.items() if k != "_meta"}
        if params:
            shown += f" {_short(params)}"
        return shown
    return f"a response {_short(message)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
