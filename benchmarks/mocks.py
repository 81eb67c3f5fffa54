"""The mock servers' speed beside bare baselines, in one run, as ratios.

    python benchmarks/mocks.py [--seconds S] [--concurrency 16] [--rounds 10] [--sessions 1000]

HTTP (each server in a process of its own, the clients in this one, over loopback,
HTTP/1.1 keep-alive on raw sockets so the client costs little): a `tools/list` answered

- by the HTTP mock (fixtures/tools/list-and-call.json, one session, JSON answers);
- by a bare Starlette app on the same uvicorn settings, answering the same JSON (sent the
  same headers as the mock, session id included, so each parses the same request);
- by the Python SDK's own server (FastMCP, stateless, JSON answers), when installed;

for one sequential client and for --concurrency concurrent ones: requests per second and
p50/p99 latency, each beside the bare app's, and the server's CPU time per request.

stdio: round trips per second of `tools/list` through the stdio mock, beside a bare pipe
echo (a Python process answering each line with a fixed line, no parsing) and a bare
stdio server (one that does what the bare Starlette app does: parse the line, answer the
same JSON with its id), the same bare server on an asyncio loop (the floor for any
asyncio server, the mock included: it reads as the mock does, in a reader callback), each
with its process's CPU time per round trip. The mock runs as
a client spawns it by hand (no transcript) and as the suite does (its transcript written
to a file, an entry a line, flushed as it happens). Every run starts after a few hundred
untimed round trips, and a server's ratio to the echo is the median of its per-round
ratios: where a pipe's two ends run (one core or two) moves a round's rate up to
threefold on a 2-core machine, and servers timed seconds apart share that luck.

Each phase is split into --rounds rounds that take turns between the servers, so a
machine whose speed drifts (these are shared) slows all of them alike. Memory: the
resident size of `mcp-testbench serve` (a fresh mock per session) holding --sessions idle
sessions, beside the bare app's at rest, and the SDK's.

A benchmark, not a test: it asserts nothing; every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "fixtures" / "tools" / "list-and-call.json"
REVISION = "2025-11-25"
START_BOUND = 30.0


# -- the servers, each run as `python benchmarks/mocks.py --serve KIND` --------------------


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def _tools_result() -> dict[str, Any]:
    steps = json.loads(SCRIPT.read_text(encoding="utf-8"))["steps"]
    result: dict[str, Any] = steps[0]["reply"]["result"]
    return result


def _uvicorn(app: Any) -> None:
    import uvicorn

    sock = _listening_socket()
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",  # the SDK's app starts its session manager in its lifespan
        ws="none",
        http="h11",
        server_header=False,
    )
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def serve(kind: str) -> None:
    sys.path.insert(0, str(ROOT))
    if kind in ("mock", "dev"):
        from mock_servers import load_script
        from mock_servers.http import serve_dev, serve_http

        script = load_script(SCRIPT)
        if kind == "mock":
            serve_http(script, revision=REVISION, ready=lambda url: print(url, flush=True))
        else:
            serve_dev(script, ready=lambda url: print(url, flush=True), log=None)
    elif kind == "bare":
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        result = _tools_result()

        async def endpoint(request: Request) -> Response:
            message = json.loads(await request.body())
            body = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": result})
            return Response(body, media_type="application/json")

        _uvicorn(Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])]))
    elif kind in ("sdk", "sdk-sessions"):
        _uvicorn(_sdk_app(stateless=kind == "sdk"))
    elif kind == "echo":
        answer = json.dumps({"jsonrpc": "2.0", "id": 0, "result": _tools_result()}).encode()
        for _line in sys.stdin.buffer:
            sys.stdout.buffer.write(answer + b"\n")
            sys.stdout.buffer.flush()
    elif kind == "json":  # what the bare Starlette app does, over stdio
        result = _tools_result()
        for line in sys.stdin.buffer:
            message = json.loads(line)
            answer = {"jsonrpc": "2.0", "id": message.get("id"), "result": result}
            sys.stdout.buffer.write(json.dumps(answer).encode() + b"\n")
            sys.stdout.buffer.flush()
    elif kind == "loop":  # the same on an asyncio loop, as the mock reads: the floor for it
        asyncio.run(_serve_json_on_loop(_tools_result()))


async def _serve_json_on_loop(result: dict[str, Any]) -> None:
    """Parse each line and answer it from a reader callback: the least an asyncio stdio
    server does per message (the mock answers a plain request this way too)."""
    loop = asyncio.get_running_loop()
    finished = loop.create_future()
    os.set_blocking(0, False)
    pending = bytearray()

    def readable() -> None:
        try:
            data = os.read(0, 65536)
        except BlockingIOError:
            return
        if not data:
            loop.remove_reader(0)
            finished.set_result(None)
            return
        pending.extend(data)
        while (end := pending.find(b"\n")) >= 0:
            message = json.loads(pending[:end])
            del pending[: end + 1]
            answer = {"jsonrpc": "2.0", "id": message.get("id"), "result": result}
            os.write(1, json.dumps(answer).encode() + b"\n")

    loop.add_reader(0, readable)
    await finished


def _sdk_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("mcp") is not None


def _sdk_app(*, stateless: bool) -> Any:
    """The Python SDK's server (mcp 2.x MCPServer, or 1.x FastMCP) with one tool."""

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    try:
        from mcp.server.mcpserver import MCPServer

        server: Any = MCPServer("bench")
        server.tool()(add)
        return server.streamable_http_app(json_response=True, stateless_http=stateless)
    except ImportError:
        from mcp.server.fastmcp import FastMCP

        server = FastMCP("bench", stateless_http=stateless, json_response=True)
        server.tool()(add)
        return server.streamable_http_app()


@contextlib.contextmanager
def server(kind: str) -> Iterator[tuple[str, int]]:
    """(url, pid) of a server process of `kind`, stopped (by its pid) on exit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the SDK logs every session
        env=env,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = _bounded_readline(process, START_BOUND)
        if not line.startswith("http"):
            raise RuntimeError(f"the {kind} server did not start: {line!r}")
        yield line.strip(), process.pid
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def _bounded_readline(process: subprocess.Popen[str], bound: float) -> str:
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(bound):
            return ""
    return process.stdout.readline()


# -- a small HTTP/1.1 client on raw sockets -------------------------------------------------


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, url: str) -> Connection:
        host, port = url.split("//")[1].split("/")[0].split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    async def post(
        self, url: str, message: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        return await self.request("POST", url, message, headers)

    async def request(
        self, method: str, url: str, message: dict[str, Any] | None, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        path = "/" + url.split("//")[1].split("/", 1)[1]
        body = b"" if message is None else json.dumps(message).encode()
        head = [
            f"{method} {path} HTTP/1.1",
            f"Host: {url.split('//')[1].split('/')[0]}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        got = {
            k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        if "content-length" in got:
            data = await self.reader.readexactly(int(got["content-length"]))
        elif got.get("transfer-encoding") == "chunked":
            data = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                data += chunk[:-2]
        else:
            data = b""
        return status, got, data

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": REVISION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


async def _session(url: str, stateless: bool) -> dict[str, str]:
    """The headers of an initialized session (none for a stateless server)."""
    headers = {"MCP-Protocol-Version": REVISION}
    if stateless:
        return headers
    conn = await Connection.open(url)
    try:
        status, got, _ = await conn.post(url, INITIALIZE, headers)
        if status != 200:
            raise RuntimeError(f"initialize answered HTTP {status}")
        if "mcp-session-id" in got:
            headers["Mcp-Session-Id"] = got["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await conn.post(url, note, headers)
    finally:
        await conn.close()
    return headers


@dataclass
class Load:
    requests: int
    seconds: float
    latencies: list[float]
    errors: int
    server_cpu: float = 0.0  # seconds of the server process's CPU during the load

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, share: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


async def _load(url: str, headers: dict[str, str], clients: int, seconds: float) -> Load:
    latencies: list[float] = []
    errors = 0
    counter = iter(range(1, 10**9))
    deadline = time.monotonic() + seconds

    async def one() -> None:
        nonlocal errors
        conn = await Connection.open(url)
        try:
            while time.monotonic() < deadline:
                message = {"jsonrpc": "2.0", "id": next(counter), "method": "tools/list"}
                start = time.perf_counter()
                status, _, body = await conn.post(url, message, headers)
                latencies.append(time.perf_counter() - start)
                if status != 200 or b'"tools"' not in body:
                    errors += 1
        finally:
            await conn.close()

    start = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(one() for _ in range(clients))), seconds + 30)
    return Load(len(latencies), time.monotonic() - start, latencies, errors)


def _merge(loads: list[Load]) -> Load:
    return Load(
        sum(x.requests for x in loads),
        sum(x.seconds for x in loads),
        [t for x in loads for t in x.latencies],
        sum(x.errors for x in loads),
        sum(x.server_cpu for x in loads),
    )


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux), 0.0 where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def http_rows(seconds: float, concurrency: int, rounds: int) -> list[tuple[str, int, Load]]:
    """Every server up at once, loaded in turn (A B C A B C ...) for `rounds` rounds, so a
    machine whose speed drifts during the run slows each of them alike."""
    kinds = [("bare Starlette", "bare", True), ("HTTP mock", "mock", False)]
    if _sdk_available():
        kinds.append(("Python SDK server", "sdk", True))
    else:
        print("(the Python SDK is not installed: its server is left out)")
    loads: dict[tuple[str, int], list[Load]] = {}
    with contextlib.ExitStack() as stack:
        targets = []
        for label, kind, stateless in kinds:
            url, pid = stack.enter_context(server(kind))
            targets.append((label, url, pid, asyncio.run(_session(url, stateless))))
        # The bare app gets the mock's headers too: the same bytes to parse on each request.
        mock_headers = targets[1][3]
        targets[0] = (*targets[0][:3], dict(mock_headers))
        for _label, url, _pid, headers in targets:
            asyncio.run(_load(url, headers, 1, 0.5))  # warm-up
        for _round in range(rounds):
            for clients in (1, concurrency):
                for label, url, pid, headers in targets:
                    before = _cpu_seconds(pid)
                    load = asyncio.run(_load(url, headers, clients, seconds / rounds))
                    load.server_cpu = _cpu_seconds(pid) - before
                    loads.setdefault((label, clients), []).append(load)
    return [(label, clients, _merge(parts)) for (label, clients), parts in loads.items()]


def print_http(rows: list[tuple[str, int, Load]]) -> None:
    bare = {clients: load for label, clients, load in rows if label == "bare Starlette"}
    print(
        f"\n{'HTTP server':<20} {'clients':>7} {'req/s':>8} {'vs bare':>8} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'p99 vs bare':>11} {'errors':>6} {'CPU us/req':>10}"
    )
    for label, clients, load in rows:
        base = bare[clients]
        cpu = 1e6 * load.server_cpu / load.requests if load.requests else float("nan")
        print(
            f"{label:<20} {clients:>7} {load.rate:>8.0f} {load.rate / base.rate:>7.0%} "
            f"{load.percentile(0.5):>7.2f} {load.percentile(0.99):>7.2f} "
            f"{load.percentile(0.99) / base.percentile(0.99):>10.2f}x {load.errors:>6} {cpu:>10.0f}"
        )
    print(
        "(CPU us/req: the server process's own CPU time per request, which a loaded "
        "machine inflates less than it does the rates)"
    )


# -- stdio -----------------------------------------------------------------------------------


def _round_trips(argv: list[str], seconds: float, initialize: bool) -> tuple[int, float, float]:
    """(round trips, seconds, the server process's CPU seconds during them), after
    `STDIO_WARM_UP` untimed ones."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    ) as process:
        stdin, stdout = process.stdin, process.stdout
        assert stdin is not None
        assert stdout is not None
        if initialize:
            stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
            stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            stdin.flush()
            stdout.readline()

        def one(ident: int) -> bool:
            message = {"jsonrpc": "2.0", "id": ident, "method": "tools/list"}
            stdin.write(json.dumps(message).encode() + b"\n")
            stdin.flush()
            return bool(stdout.readline())

        for ident in range(-STDIO_WARM_UP, 0):
            one(ident)
        count = 0
        cpu = _cpu_seconds(process.pid)
        start = time.monotonic()
        deadline = start + seconds
        while time.monotonic() < deadline:
            count += 1
            if not one(count):
                break
        elapsed = time.monotonic() - start
        cpu = _cpu_seconds(process.pid) - cpu
        stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
    return count, elapsed, cpu


# Untimed round trips before each timed run, for every server alike: the mock's first
# answers pay one-time work (its send gate's first check of each answer, lazy imports)
# that a run of a fraction of a second would count as its steady rate.
STDIO_WARM_UP = 200


def stdio_rows(seconds: float, rounds: int) -> None:
    """Each round times every server in turn; a server's figure beside the echo is the
    median of its per-round ratios (with their range). On a 2-core machine a pipe's two
    ends may share a core or not, which moves a round's rate up to threefold; servers
    timed seconds apart share the luck, so their ratio is steadier than ratios of totals."""
    sys.path.insert(0, str(ROOT))
    import statistics
    import tempfile

    from mock_servers.stdio import stdio_command

    with tempfile.TemporaryDirectory(prefix="mcptb-bench-") as scratch:
        transcript = Path(scratch) / "transcript.jsonl"
        kinds = [
            ("bare pipe echo", [sys.executable, __file__, "--serve", "echo"], False),
            ("bare stdio server", [sys.executable, __file__, "--serve", "json"], False),
            ("  on asyncio", [sys.executable, __file__, "--serve", "loop"], False),
            ("stdio mock", stdio_command(SCRIPT, revision=REVISION), True),
            (
                "  with a transcript",
                stdio_command(SCRIPT, revision=REVISION, transcript=transcript),
                True,
            ),
        ]
        runs: dict[str, list[tuple[int, float, float]]] = {label: [] for label, _, _ in kinds}
        for _round in range(rounds):  # interleaved, as the HTTP rows
            for label, argv, initialize in kinds:
                runs[label].append(_round_trips(argv, seconds / rounds, initialize))

    def rates(label: str) -> list[float]:
        return [count / elapsed for count, elapsed, _ in runs[label]]

    def ratios(label: str, base: str) -> list[float]:
        return [mine / theirs for mine, theirs in zip(rates(label), rates(base), strict=True)]

    print(
        f"\n{'stdio':<20} {'round trips/s':>13} {'vs echo':>8} {'(range)':>11} "
        f"{'vs bare':>8} {'CPU us/rt':>10}"
    )
    for label, measured in runs.items():
        vs_echo = ratios(label, "bare pipe echo")
        count = sum(c for c, _, _ in measured)
        cpu = sum(c for _, _, c in measured)
        spread = f"{min(vs_echo):.0%}-{max(vs_echo):.0%}"
        print(
            f"{label:<20} {count / sum(e for _, e, _ in measured):>13.0f} "
            f"{statistics.median(vs_echo):>7.0%} {spread:>11} "
            f"{statistics.median(ratios(label, 'bare stdio server')):>7.0%} "
            f"{1e6 * cpu / count:>10.0f}"
        )
    print(
        f"  ({rounds} rounds; vs echo/bare: the median of the per-round ratios; "
        f"each run after {STDIO_WARM_UP} untimed round trips)"
    )


# -- memory ------------------------------------------------------------------------------------


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _open_sessions(url: str, count: int) -> int:
    opened = 0
    conn = await Connection.open(url)
    try:
        for _ in range(count):
            status, _got, _ = await conn.post(url, INITIALIZE, {"MCP-Protocol-Version": REVISION})
            opened += status == 200
    finally:
        await conn.close()
    return opened


def memory_rows(sessions: int) -> None:
    print(f"\n{'memory':<48} {'RSS MiB':>8} {'per session KiB':>16}")
    with server("bare") as (_url, pid):
        time.sleep(0.2)  # settle after start (its imports done)
        bare = _rss_mib(pid)
    print(f"{'bare Starlette, at rest':<48} {bare:>8.1f} {'':>16}")
    kinds = [("mcp-testbench serve", "dev")]
    if _sdk_available():
        kinds.append(("Python SDK server (stateful)", "sdk-sessions"))
    for label, kind in kinds:
        with server(kind) as (url, pid):
            rest = _rss_mib(pid)
            opened = asyncio.run(asyncio.wait_for(_open_sessions(url, sessions), 300))
            held = _rss_mib(pid)
        per = (held - rest) * 1024 / opened if opened else float("nan")
        print(f"{label + ', at rest':<48} {rest:>8.1f} {'':>16}")
        print(f"{label + f', {opened} idle sessions':<48} {held:>8.1f} {per:>16.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=3.0, help="each load phase (s)")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent HTTP clients")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds per phase")
    parser.add_argument("--sessions", type=int, default=1000, help="idle sessions for memory")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    print_http(http_rows(args.seconds, args.concurrency, args.rounds))
    stdio_rows(args.seconds, args.rounds)
    memory_rows(args.sessions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
