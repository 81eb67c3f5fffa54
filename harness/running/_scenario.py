"""Scenarios and their runs: drive a client against a mock, keep everything as evidence.

A Scenario names a script (fixtures/), the operations to ask of the client, and the checks
judged from the result. `execute()` runs one (scenario, revision, transport): it starts
the mock server, lets the client connect and perform the operations, each bounded in time,
then stops everything and returns a ScenarioRun: the transcript (what the client sent on
the wire) and the operations (what the client surfaced to its caller).

The run happens in a thread of its own with its own event loop, so that a client that
blocks (even in synchronous code) costs the suite one time-out, never a hang.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from harness.clients import (
    OPERATIONS,
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    Handlers,
    HttpTarget,
    McpClient,
    SseLegacyTarget,
    StdioTarget,
    Target,
)
from harness.protocol import REVISIONS, STATELESS_REVISIONS, transports_for
from harness.running._machine import load_factor
from mock_servers import NOTIFY_SUFFIX, Script, fixtures_root, load_script, read_transcript

if TYPE_CHECKING:
    from mock_servers.stdio import StdioPool

__all__ = [
    "HEADLESS_AUTHORIZATION",
    "MAY_HAPPEN_BOUND",
    "Operation",
    "Scenario",
    "ScenarioRun",
    "Session",
    "execute",
    "provoked_timeout",
    "stdio_pool",
    "stop_stdio_pool",
]

ClientFactory = Callable[[], McpClient]

# Safety nets, in units of the per-operation time-out: every operation is bounded on its
# own (twice the time-out); a scenario has a handful, plus connect, close and the mock
# server's start and stop. The thread bound catches a client that blocks its event loop.
_DRIVE_BOUND = 20
_JOIN_BOUND = 25


# How long a drive waits for something the client MAY do (open a GET stream, say): the
# judge of what it waited for treats "never seen" as not applicable, never as a pass.
MAY_HAPPEN_BOUND = 2.0

PROVOKED_VARIABLE = "MCP_TESTBENCH_PROVOKED_TIMEOUT"
DEFAULT_PROVOKED_TIMEOUT = 0.25


def provoked_timeout() -> float:
    """Seconds of the time-outs a scenario provokes on purpose (MCP_TESTBENCH_PROVOKED_TIMEOUT,
    default 0.25): raise it for a client that needs longer to send a request."""
    value = os.environ.get(PROVOKED_VARIABLE, "")
    try:
        seconds = float(value) if value else DEFAULT_PROVOKED_TIMEOUT
    except ValueError:
        raise ValueError(
            f"{PROVOKED_VARIABLE}={value!r} is not a number of seconds; unset it or give e.g. 0.5"
        ) from None
    if seconds <= 0:
        raise ValueError(f"{PROVOKED_VARIABLE} must be a positive number of seconds, not {value}")
    return seconds


# What a client under test is given for a server behind OAuth 2.1: a name, and a loopback
# redirect URI where nothing listens (the mock's authorization endpoint approves at once,
# and the client reads the code from the redirect without following it).
HEADLESS_AUTHORIZATION = Authorization(
    client_name="mcp-testbench client under test",
    redirect_uri="http://127.0.0.1:33418/callback",
)

# Error kinds that are the harness's own finding, never the client reporting a problem.
_NOT_REPORTS = ("hang", "crash", "abandoned")


@dataclass
class Operation:
    """One thing the harness asked of the client, and what the client surfaced."""

    op: str
    args: dict[str, Any]
    value: Any = None
    error: dict[str, Any] | None = None  # ClientError.to_json(), or a harness-made error
    seconds: float = 0.0
    finished: bool = field(default=True, repr=False, compare=False)
    """False while the client is in it: one the client never returned from (it blocked
    its event loop) is a hang, not a success with no value."""
    started: float = field(default=0.0, repr=False, compare=False)
    ended: float | None = field(default=None, repr=False, compare=False)
    """When the harness asked, and when the client returned (None: it never did), on the
    monotonic clock the transcript's `origin` is on: judging places the operation among
    the mock's entries with them (what the client had done before a fault)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def first_arg(self) -> Any:
        """The first positional argument the harness gave (a tool name, a URI), or None."""
        return (self.args.get("args") or [None])[0]

    @property
    def hung(self) -> bool:
        """No answer within the harness's bound: a hang, never a refusal."""
        return self.error is not None and self.error.get("kind") == "hang"

    @property
    def reported(self) -> bool:
        """The client reported a failure to its caller, in time: not a hang, and not a
        crash (an unexpected exception, a driver that died)."""
        return self.error is not None and self.error.get("kind") not in _NOT_REPORTS

    @property
    def deliberate(self) -> bool:
        """The failure is what the drive asked for: the harness abandoned the call, or
        the client's own time-out expired when the drive gave it one (`timeout=`)."""
        kind = (self.error or {}).get("kind")
        return kind == "abandoned" or (kind == "timeout" and "timeout" in self.args)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "args": self.args, "seconds": round(self.seconds, 3)}
        if self.error is None:
            out["value"] = self.value
        else:
            out["error"] = self.error
        return out


Entries = list[dict[str, Any]]


# A Unix socket's path must fit in about 100 bytes (108 on Linux, 104 on macOS).
_SOCKET_PATH_LIMIT = 100


class TranscriptWatch:
    """Wakes a waiting drive when the mock records an entry, instead of a timer.

    The watch binds a Unix datagram socket before the mock starts and writes its path to
    `<transcript>.notify`; the mock's transcript pings it for every entry it writes
    (mock_servers/engine/_transcript.py), and the watch re-reads the file on each ping until what
    it waits for is there. The socket sits beside the transcript, or, when that path is
    too long for a socket, in a folder of its own under the system's temporary folder.
    """

    def __init__(self, transcript_path: Path) -> None:
        self.path = transcript_path
        self._own_folder: str | None = None
        address = f"{transcript_path}.sock"
        if len(os.fsencode(address)) > _SOCKET_PATH_LIMIT:
            self._own_folder = tempfile.mkdtemp(prefix="mcptb-", dir=_short_temp_folder())
            address = os.path.join(self._own_folder, "watch.sock")
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.sock.setblocking(False)
        Path(f"{transcript_path}{NOTIFY_SUFFIX}").write_text(address, encoding="utf-8")

    def entries(self) -> Entries:
        try:
            return list(read_transcript(self.path).get("entries", []))
        except (OSError, ValueError):  # not written yet
            return []

    async def until(self, seen: Callable[[Entries], bool], bound: float) -> bool:
        """Whether `seen(entries)` became true within `bound` seconds."""
        with anyio.move_on_after(bound):
            while not seen(self.entries()):
                await anyio.wait_readable(self.sock)
                with contextlib.suppress(OSError):
                    while self.sock.recv(4096):
                        pass
            return True
        return False

    def close(self) -> None:
        self.sock.close()
        for path in (self.address, f"{self.path}{NOTIFY_SUFFIX}"):
            with contextlib.suppress(OSError):
                os.unlink(path)
        if self._own_folder is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self._own_folder)


def _get_stream_opened(entries: Entries) -> bool:
    return any(e["kind"] == "http_request" and e.get("method") == "GET" for e in entries)


def _short_temp_folder() -> str:
    """/tmp when it is there (short, whatever TMPDIR says), else the temporary folder."""
    return "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()


class Session:
    """What a scenario's `drive` function uses: the client, with every call recorded."""

    def __init__(
        self,
        client: McpClient,
        target: Target,
        options: ConnectOptions,
        watch: TranscriptWatch | None = None,
        provoked: float | None = None,
        revision: str | None = None,
        waiting: Callable[[bool], None] | None = None,
    ) -> None:
        self.client = client
        self._waiting = waiting or (lambda _: None)
        self.revision = revision
        self.target = target
        self.options = options
        self.provoked_timeout = min(
            options.timeout / 10, provoked_timeout() if provoked is None else provoked
        )
        """The time-out a drive gives a call it wants to time out (a client's own
        `timeout=`): short, so provoking it costs little; at most a tenth of the run's."""
        self.operations: list[Operation] = []
        self.events: list[ClientEvent] = []
        self.event_times: list[float] = []
        self._surfaced = anyio.Event()
        self.watch = watch
        self.waits: list[dict[str, Any]] = []

    async def until(
        self,
        what: str,
        seen: Callable[[Entries], bool],
        bound: float | None = None,
        *,
        standalone: bool = False,
    ) -> bool:
        """Wait, bounded (default: the run's per-operation time-out), until the transcript
        shows what `seen` looks for; never raises. Every wait is kept in the run's record
        (`ScenarioRun.waits`), so a judge can tell "it never came" from "we did not wait".

        `standalone`: what is awaited follows a message the server sends outside any
        request (see `_reachable`)."""
        limit = self.options.timeout if bound is None else bound
        start = time.monotonic()
        ok = False
        with self._on_the_client():
            if self.watch is not None and await self._reachable(standalone, limit):
                ok = await self.watch.until(seen, limit - (time.monotonic() - start))
        self._waited(what, ok, start, limit)
        return ok

    @contextlib.contextmanager
    def _on_the_client(self) -> Iterator[None]:
        """While the drive waits for the client, the run is not working: say so."""
        self._waiting(True)
        try:
            yield
        finally:
            self._waiting(False)

    def _waited(self, what: str, seen: bool, start: float, bound: float) -> None:
        seconds = round(time.monotonic() - start, 3)
        self.waits.append({"wait": what, "seen": seen, "seconds": seconds, "bound": bound})

    async def _reachable(self, standalone: bool, limit: float) -> bool:
        """Whether a message the server sends outside any request can reach the client.
        Over Streamable HTTP before 2026-07-28 it travels only on a GET stream, which the
        client MAY open: without one open within MAY_HAPPEN_BOUND, nothing is waited for
        (a client without GET streams must not pay the whole time-out per such wait)."""
        if not standalone or self.target.type != "http" or self.revision in STATELESS_REVISIONS:
            return True
        if self.watch is None:
            return False
        return await self.watch.until(_get_stream_opened, min(MAY_HAPPEN_BOUND, limit))

    def surfaced(self, event: ClientEvent) -> None:
        """The client's `on_event` (called on the run's event loop): keep the event and
        wake the drive's `until_surfaced` waits."""
        self.events.append(event)
        self.event_times.append(time.monotonic())
        self._surfaced.set()
        self._surfaced = anyio.Event()

    async def until_surfaced(
        self,
        what: str,
        seen: Callable[[list[ClientEvent]], bool],
        bound: float | None = None,
        *,
        standalone: bool = False,
    ) -> bool:
        """Like `until`, for what the client surfaced (its events) instead of the wire."""
        limit = self.options.timeout if bound is None else bound
        start = time.monotonic()
        ok = False
        with self._on_the_client():
            reachable = seen(self.events) or await self._reachable(standalone, limit)
            remaining = limit - (time.monotonic() - start) if reachable else 0.0  # 0: look once
            with anyio.move_on_after(max(0.0, remaining)):
                while not (ok := seen(self.events)):
                    await self._surfaced.wait()
        self._waited(what, ok, start, limit)
        return ok

    async def call(self, op: str, /, *args: Any, **kwargs: Any) -> Operation:
        """Run `client.<op>(*args, **kwargs)` bounded in time; never raises.

        The bound is twice the run's time-out: a client's own `timeout=` (call_tool) is
        passed through untouched and judged by the checks.
        """
        shown = {"args": list(args), **kwargs} if args else dict(kwargs)
        return await self._call(op, args, kwargs, shown)

    async def _call(
        self,
        op: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        shown: dict[str, Any],
    ) -> Operation:
        start = time.monotonic()
        record = Operation(op, shown, finished=False, started=start)
        self.operations.append(record)
        method: Callable[..., Awaitable[Any]] = getattr(self.client, op)
        try:
            with anyio.fail_after(self.options.timeout * 2):
                record.value = await method(*args, **kwargs)
        except ClientError as exc:
            record.error = exc.to_json()
        except anyio.get_cancelled_exc_class():
            # The drive gave up on the call on purpose (a caller abandoning it): neither
            # a result nor a failure of the client.
            record.error = {
                "kind": "abandoned",
                "code": None,
                "message": "the harness abandoned the call (as the scenario intends)",
            }
            record.ended = time.monotonic()
            record.seconds = record.ended - start
            raise
        except TimeoutError:
            record.error = {
                "kind": "hang",
                "code": None,
                "message": f"the client did not return within {self.options.timeout * 2:g} s",
            }
        except Exception as exc:  # not a ClientError: a crash, never a report
            record.error = {
                "kind": "crash",
                "code": None,
                "message": f"{type(exc).__name__}: {exc}",
            }
        record.ended = time.monotonic()
        record.seconds = record.ended - start
        record.finished = True
        return record

    async def connect(self) -> Operation:
        target = self.target
        where = " ".join(target.command) if isinstance(target, StdioTarget) else target.url
        shown = {
            "transport": target.type,
            "target": where,
            "protocolVersion": self.options.protocol_version,
        }
        return await self._call("connect", (target, self.options), {}, shown)


Drive = Callable[[Session], Awaitable[None]]


async def connect_only(session: Session) -> None:
    await session.connect()


@dataclass(frozen=True)
class Scenario:
    id: str
    script: str
    """Path of the script under fixtures/."""
    checks: tuple[str, ...]
    drive: Drive = connect_only
    description: str = ""
    revisions: tuple[str, ...] | None = None
    """Default: every revision the script declares."""
    transports: tuple[str, ...] | None = None
    """Default: every transport the script declares."""
    handlers: Handlers = field(default_factory=Handlers)
    requires: frozenset[str] = frozenset()
    """Features the client must declare for the scenario to run at all."""
    pin_version: bool = True
    """Ask the client for the run's revision (ConnectOptions.protocol_version); False: the
    client picks the version it offers itself (LC-2)."""
    connect_may_fail: bool = False
    """The scenario provokes a failed connection (an unsupported version): a failed
    connect is what its checks judge, not a precondition that blocks them."""
    authorization: Authorization | None = None
    """What the client is given for a server behind OAuth 2.1 (with `requires` naming
    `auth`); None: HEADLESS_AUTHORIZATION (a name and a redirect URI, no credentials)."""
    local_answers: frozenset[str] = frozenset()
    """Operations the client may rightly answer without a request (a list the server
    declared no capability for): no root cause when it does."""
    waits_on_the_client: bool = False
    """The drive waits, up to the run's time-out, for something the client does on its own
    (answers a server request, listens again, restarts its server): a client that never
    does it makes the run last the whole time-out. A process starts such runs before its
    others, so that those waits overlap the rest of its work instead of ending it."""

    def load(self) -> Script:
        return load_script(fixtures_root() / self.script)  # checked once per process

    def matrix(self) -> Iterator[tuple[str, str]]:
        script = self.load()
        for revision in self.revisions or script.revisions:
            if revision not in script.revisions:
                continue
            for transport in self.transports or script.transports:
                if transport in script.transports and transport in transports_for(revision):
                    yield revision, transport


@dataclass
class ScenarioRun:
    scenario: Scenario
    revision: str
    transport: str
    client_name: str = ""
    supports: frozenset[str] = frozenset()
    transcript: Mapping[str, Any] = field(default_factory=dict)
    operations: list[Operation] = field(default_factory=list)
    events: list[ClientEvent] = field(default_factory=list)
    event_times: list[float] = field(default_factory=list, repr=False, compare=False)
    """When each event was surfaced (the monotonic clock of `Operation.started`)."""
    waits: list[dict[str, Any]] = field(default_factory=list)
    """The drive's bounded waits for transcript entries, and whether each was seen."""
    harness_error: str | None = None
    """Why the run could not be completed (factory failed, client hung...)."""
    start_error: str | None = None
    """Why the client could not be created or started (then nothing else was tried)."""
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """What judging derives once per run (root causes)."""
    diagnostics: str = ""
    """What the client printed on the side (a driver's stderr), for failure reports."""
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    """Where the run's time went, in seconds: start (client and mock server), drive (the
    operations and waits, connect included), close (client and server); for benchmarks."""

    @property
    def entries(self) -> list[dict[str, Any]]:
        return list(self.transcript.get("entries", []))

    def client_messages(self) -> list[dict[str, Any]]:
        return [e for e in self.entries if e["kind"] == "message" and e["direction"] == "client"]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """Transcript entries of client requests (optionally of one method)."""
        return [
            e
            for e in self.client_messages()
            if "id" in e["message"]
            and "method" in e["message"]
            and (method is None or e["message"]["method"] == method)
        ]

    def of_kind(self, *kinds: str) -> list[dict[str, Any]]:
        return [e for e in self.entries if e["kind"] in kinds]

    def endpoint_requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The client's HTTP requests to the MCP endpoint (optionally of one method): every
        `http_request` but those the mock served as something else, authorization (an
        `auth` entry naming another endpoint than `mcp`: metadata, registration, token...)
        or a document of `http.documents` (a `document` entry). The transport's rules bind
        what goes to the MCP endpoint; a GET of a metadata document is none of it."""
        elsewhere = {
            e.get("request")
            for e in self.entries
            if (e["kind"] == "auth" and e.get("endpoint") != "mcp") or e["kind"] == "document"
        }
        return [
            e
            for e in self.entries
            if e["kind"] == "http_request"
            and e.get("request") not in elsewhere
            and (method is None or e.get("method") == method)
        ]

    def operation(self, op: str, index: int = 0) -> Operation | None:
        matching = [o for o in self.operations if o.op == op]
        return matching[index] if index < len(matching) else None

    def moment(self, entry: Mapping[str, Any]) -> float:
        """When the mock recorded a transcript entry, on the clock of `Operation.started`."""
        return float(self.transcript.get("origin", 0.0)) + float(entry.get("t", 0.0))

    def before(self, seq: int | None, moment: float) -> ScenarioRun:
        """The run as it stood at a moment: the transcript's entries before entry `seq`
        (with no seq, before `moment`), the operations the client had returned from, and
        the events it had surfaced. Judging asks a check about this part of a run to tell
        whether its evidence was complete before a fault."""
        entries = [
            e
            for e in self.entries
            if (int(e["seq"]) < seq if seq is not None else self.moment(e) < moment)
        ]
        surfaced = [
            (event, when)
            for event, when in zip(self.events, self.event_times, strict=False)
            if when < moment
        ]
        return dataclasses.replace(
            self,
            transcript={**self.transcript, "entries": entries},
            operations=[o for o in self.operations if o.ended is not None and o.ended <= moment],
            events=[event for event, _ in surfaced],
            event_times=[when for _, when in surfaced],
            harness_error=None,
            cache={},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.id,
            "revision": self.revision,
            "transport": self.transport,
            "client": self.client_name,
            "harness_error": self.harness_error,
            "operations": [o.to_json() for o in self.operations],
            "transcript": dict(self.transcript),
        }


_POOL_LOCK = threading.Lock()
_POOL: StdioPool | None = None
_POOL_FAILED = False
POOL_VARIABLE = "MCP_TESTBENCH_STDIO_POOL"
"""Set to 0 to start every stdio mock as a plain subprocess (paying its imports)."""


def stdio_pool() -> StdioPool | None:
    """This process's fork server for stdio mocks, started on first use; None when it is
    turned off (MCP_TESTBENCH_STDIO_POOL=0) or could not start (then mocks are plain
    subprocesses). Ended by `stop_stdio_pool()`, or when this process exits."""
    global _POOL, _POOL_FAILED
    if os.environ.get(POOL_VARIABLE, "1") == "0" or sys.platform == "win32":
        return None
    with _POOL_LOCK:
        if _POOL is None and not _POOL_FAILED:
            from mock_servers.stdio import StdioPool

            pool = StdioPool()
            try:
                pool.start()
            except (OSError, RuntimeError):
                _POOL_FAILED = True
                return None
            atexit.register(pool.stop)
            _POOL = pool
        return _POOL


def stop_stdio_pool() -> None:
    """End the stdio mock pool, if one runs (a later stdio run starts a new one)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.stop()


def _target(transport: str, script_path: Path, revision: str, transcript: Path, url: str) -> Target:
    if transport == "stdio":
        from mock_servers.stdio import stdio_command

        # Appending: a client that restarts a crashed server (ST-5) spawns this command
        # again, and the checks need both processes in the one transcript.
        command = stdio_command(
            script_path, revision=revision, transcript=transcript, append_transcript=True
        )
        pool = stdio_pool()
        return StdioTarget(tuple(pool.command(command) if pool is not None else command))
    if transport == "sse-legacy":
        return SseLegacyTarget(url)
    return HttpTarget(url)


def execute(
    scenario: Scenario,
    revision: str,
    transport: str,
    factory: ClientFactory,
    *,
    op_timeout: float = 10.0,
    waiting: Callable[[bool], None] | None = None,
) -> ScenarioRun:
    """Run one scenario at one revision over one transport; never raises, never hangs.

    `waiting(True)` is called when the drive starts to wait for what the client does on
    its own, `waiting(False)` when that wait ends (the run window lets another run work
    meanwhile); it is called from the run's own thread."""
    run = ScenarioRun(scenario, revision, transport)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-") as folder:
        transcript_path = Path(folder) / "transcript.jsonl"
        worker = threading.Thread(
            target=_run_in_thread,
            args=(run, factory, transcript_path, op_timeout, waiting),
            name=f"mcp-testbench {scenario.id} {revision} {transport}",
            daemon=True,  # a client stuck in synchronous code must not keep the suite alive
        )
        worker.start()
        # The drive itself is bounded inside the thread; this bound covers a client that
        # blocks its event loop, plus connect, close and the mock server's start and stop,
        # which a busy machine slows for every client alike: so it grows with the load (a
        # load of 24 on two cores turned a hung connect into this at 0.1 s time-outs).
        bound = op_timeout * _JOIN_BOUND * load_factor()
        worker.join(bound)
        if worker.is_alive():
            run.harness_error = (
                f"the client did not finish the scenario in time (it blocked for more than "
                f"{bound:.0f} s, even to cancellation)"
            )
            for operation in run.operations:
                if not operation.finished:
                    operation.error = {
                        "kind": "hang",
                        "code": None,
                        "message": f"the client blocked in {operation.op} and never returned",
                    }
                    operation.seconds = time.monotonic() - started
        if transcript_path.exists():
            try:
                run.transcript = read_transcript(transcript_path)
            except ValueError as exc:
                run.harness_error = run.harness_error or f"unreadable transcript: {exc}"
    run.seconds = time.monotonic() - started
    return run


def _run_in_thread(
    run: ScenarioRun,
    factory: ClientFactory,
    transcript_path: Path,
    op_timeout: float,
    waiting: Callable[[bool], None] | None,
) -> None:
    try:
        anyio.run(_drive, run, factory, transcript_path, op_timeout, waiting)
    except Exception as exc:  # the run records what went wrong; the suite goes on
        run.harness_error = run.harness_error or f"{type(exc).__name__}: {exc}"


def _declares(
    supports: frozenset[str], transport: str, revision: str, requires: frozenset[str]
) -> bool:
    """Whether the client declared what the run needs (a client that declares nothing is
    tried on everything, and judged; but a driver protocol 1.1 operation is never assumed)."""
    if not supports:
        return not requires & OPERATIONS
    revisions = [r for r in REVISIONS if r in supports]
    return (
        transport in supports and requires <= supports and (not revisions or revision in revisions)
    )


async def _declared(run: ScenarioRun, client: McpClient, op_timeout: float) -> bool:
    """Record who the client is and what it declares; close it when that excludes the
    run, whose checks are then all a SKIP (harness/judging/_judge.py)."""
    run.client_name = f"{client.name} {client.version}"
    run.supports = frozenset(client.supports)
    if _declares(run.supports, run.transport, run.revision, run.scenario.requires):
        return True
    with anyio.move_on_after(op_timeout, shield=True):
        await client.close()
    return False


async def _drive(
    run: ScenarioRun,
    factory: ClientFactory,
    transcript_path: Path,
    op_timeout: float,
    waiting: Callable[[bool], None] | None,
) -> None:
    scenario = run.scenario
    began = time.monotonic()
    script = scenario.load()
    script_path = fixtures_root() / scenario.script
    try:
        client = factory()
    except Exception as exc:
        run.harness_error = run.start_error = (
            f"the client factory failed: {type(exc).__name__}: {exc}"
        )
        return
    # A client that can declare itself before it starts (an in-process client; a driver
    # whose hello its pool read from an earlier process) is not started for a run that its
    # declaration excludes: the run is a SKIP either way, and a start can cost seconds.
    if frozenset(client.supports) and not await _declared(run, client, op_timeout):
        return
    prepare = getattr(client, "prepare", None)
    if prepare is not None:  # optional: a client that must start before it can say who it is
        bound = None
        try:
            with anyio.fail_after(op_timeout * 3) as bound:
                await prepare()
        except Exception as exc:
            hung = isinstance(exc, TimeoutError) and bound is not None and bound.cancel_called
            why = (
                f"hung: prepare() did not return within {op_timeout * 3:g} s"
                if hung
                else f"{type(exc).__name__}: {exc}"
            )
            run.harness_error = run.start_error = f"the client could not start: {why}"
            run.diagnostics = str(getattr(client, "diagnostics", "") or "")
            with anyio.move_on_after(op_timeout, shield=True):
                await client.close()
            return
    if not await _declared(run, client, op_timeout):
        return
    sink: list[Session] = []  # the session, once made: it keeps what the client surfaces
    early: list[ClientEvent] = []
    early_times: list[float] = []
    run.events = early
    run.event_times = early_times

    def on_event(event: ClientEvent) -> None:
        if sink:
            sink[0].surfaced(event)
        else:
            early.append(event)
            early_times.append(time.monotonic())

    options = ConnectOptions(
        protocol_version=run.revision if scenario.pin_version else None,
        handlers=scenario.handlers,
        timeout=op_timeout,
        on_event=on_event,
        authorization=(scenario.authorization or HEADLESS_AUTHORIZATION)
        if "auth" in scenario.requires
        else None,
    )
    watch = TranscriptWatch(transcript_path)
    server = None
    try:
        if run.transport != "stdio":
            from mock_servers.http import HttpMockServer

            server = HttpMockServer(
                script,
                revision=run.revision,
                transport=run.transport,
                transcript_path=transcript_path,
            )
            server.start()
        url = server.url if server is not None else ""
        session = Session(
            client,
            _target(run.transport, script_path, run.revision, transcript_path, url),
            options,
            watch,
            revision=run.revision,
            waiting=waiting,
        )
        run.operations = session.operations
        run.waits = session.waits
        session.events = early
        session.event_times = early_times
        sink.append(session)
        driving = time.monotonic()
        run.phases["start"] = driving - began
        with anyio.move_on_after(op_timeout * _DRIVE_BOUND) as scope:
            await scenario.drive(session)
        if scope.cancelled_caught:
            run.harness_error = "the scenario did not finish in time"
        run.phases["drive"] = time.monotonic() - driving
    finally:
        closing = time.monotonic()
        with anyio.move_on_after(op_timeout, shield=True):
            try:
                await client.close()
            except Exception as exc:
                run.operations.append(
                    Operation(
                        "close",
                        {},
                        error={
                            "kind": "crash",
                            "code": None,
                            "message": f"{type(exc).__name__}: {exc}",
                        },
                    )
                )
        if server is not None:
            server.stop()
        watch.close()
        run.phases["close"] = time.monotonic() - closing
        run.diagnostics = str(getattr(client, "diagnostics", "") or "")
