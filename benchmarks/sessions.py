"""A long day of `serve --http`, beside the official Python SDK's server: memory and latency
as sessions come and go.

    python benchmarks/sessions.py                      # 100,000 sessions each
    python benchmarks/sessions.py --sessions 20000     # a quicker look

Two servers, one after the other in the same run, each in a process of its own on
127.0.0.1: `mcp-testbench serve` (the dev server: a fresh run of the script per session)
and the SDK's stateful Streamable HTTP server (benchmarks/mocks.py starts both). For each:

- **churn**: `--sessions` sessions, `--clients` at a time, each one initialize,
  notifications/initialized, a ping and a DELETE; at every tenth of the way, the server's
  RSS and the median latency of the initializes and pings of that tenth. Flat is the goal:
  an ended session must cost nothing, and finding a session must not slow as more have been.
- **per session**: `--live` sessions opened and kept (no DELETE), and the server's RSS
  growth divided by them: what each live session costs.

Figures are of this run only; the two servers are measured under the same conditions, and
the ratio last/first tenth is the figure to read. Loopback only; every loop is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mocks import INITIALIZE, REVISION, Connection, _sdk_available, server

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
SERVERS = (("mcp-testbench serve", "dev"), ("python sdk", "sdk-sessions"))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Tenth:
    sessions: int
    rss: float
    initialize_ms: float
    ping_ms: float


@dataclass
class Churn:
    tenths: list[Tenth] = field(default_factory=list)
    errors: int = 0
    seconds: float = 0.0


async def _one_session(conn: Connection, url: str, timings: dict[str, list[float]]) -> bool:
    headers = {"MCP-Protocol-Version": REVISION}
    started = time.perf_counter()
    status, got, _ = await conn.post(url, INITIALIZE, headers)
    timings["initialize"].append(time.perf_counter() - started)
    if status != 200 or "mcp-session-id" not in got:
        return False
    headers["Mcp-Session-Id"] = got["mcp-session-id"]
    await conn.post(url, INITIALIZED, headers)
    started = time.perf_counter()
    status, _, _ = await conn.post(url, PING, headers)
    timings["ping"].append(time.perf_counter() - started)
    ended, _, _ = await conn.request("DELETE", url, None, headers)
    return status == 200 and ended in (200, 202, 204)


async def churn(url: str, pid: int, sessions: int, clients: int) -> Churn:
    out = Churn()
    tenth = max(1, sessions // 10)
    started = time.monotonic()
    done = 0
    conns = [await Connection.open(url) for _ in range(clients)]
    try:
        while done < sessions:
            timings: dict[str, list[float]] = {"initialize": [], "ping": []}
            target = min(sessions, done + tenth)
            while done < target:
                batch = min(clients, target - done)
                results = await asyncio.gather(
                    *(_one_session(conns[i], url, timings) for i in range(batch))
                )
                out.errors += results.count(False)
                done += batch
            out.tenths.append(
                Tenth(
                    done,
                    rss_mb(pid),
                    statistics.median(timings["initialize"]) * 1000,
                    statistics.median(timings["ping"]) * 1000 if timings["ping"] else float("nan"),
                )
            )
            now = out.tenths[-1]
            print(
                f"  {done:>7} sessions: RSS {now.rss:6.1f} MB, initialize p50 "
                f"{now.initialize_ms:6.2f} ms, ping p50 {now.ping_ms:6.2f} ms",
                flush=True,
            )
    finally:
        for conn in conns:
            await conn.close()
    out.seconds = time.monotonic() - started
    return out


async def per_session(url: str, pid: int, live: int) -> float:
    """RSS growth (KB) per session kept open."""
    conn = await Connection.open(url)
    try:
        before = rss_mb(pid)
        for opened in range(live):
            headers = {"MCP-Protocol-Version": REVISION}
            status, got, _ = await conn.post(url, INITIALIZE, headers)
            if status != 200:
                raise RuntimeError(f"initialize answered {status} after {opened} live sessions")
            headers["Mcp-Session-Id"] = got["mcp-session-id"]
            await conn.post(url, INITIALIZED, headers)
        return (rss_mb(pid) - before) * 1024 / live
    finally:
        await conn.close()


def _row(name: str, result: Churn, kb: float) -> list[str]:
    first, last = result.tenths[0], result.tenths[-1]
    return [
        name,
        f"{first.rss:.0f} -> {last.rss:.0f} MB",
        f"{first.initialize_ms:.2f} -> {last.initialize_ms:.2f} ms "
        f"({last.initialize_ms / first.initialize_ms:.2f}x)",
        f"{first.ping_ms:.2f} -> {last.ping_ms:.2f} ms ({last.ping_ms / first.ping_ms:.2f}x)",
        f"{kb:.1f} KB",
        f"{result.errors}",
        f"{result.seconds:.0f} s",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=8, help="sessions at a time (default 8)")
    parser.add_argument(
        "--live", type=int, default=500, help="sessions kept for the per-session figure"
    )
    args = parser.parse_args(argv)
    if not _sdk_available():
        print("benchmarks/sessions.py compares with the Python SDK's server: pip install mcp")
        return 2
    rows: list[list[str]] = []
    for name, kind in SERVERS:
        print(f"{name}: {args.sessions} sessions, {args.clients} at a time", flush=True)
        with server(kind) as (url, pid):
            result = asyncio.run(churn(url, pid, args.sessions, args.clients))
        with server(kind) as (url, pid):
            kb = asyncio.run(per_session(url, pid, args.live))
        rows.append(_row(name, result, kb))
    heads = [
        "server",
        "RSS first -> last tenth",
        "initialize p50",
        "ping p50",
        "per live session",
        "errors",
        "took",
    ]
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    for row in [heads, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
