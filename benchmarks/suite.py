"""The conformance suite's speed: wall time, items per second, and where the time goes.

    python benchmarks/suite.py [--workers 2] [--driver CMD]... [--sdk] [--no-breakdown]
                               [--pool-off] [--timeout SECONDS]

1. Whole runs, each one `python -m pytest -n WORKERS` of the suite in a scratch folder
   (what `mcp-testbench run` does), timed from outside: the reference client in process,
   then each driver (default: the Python example driver), and with --sdk the official
   Python SDK's adapter in process. Printed: wall, judged items, items per second, and
   each row's ratio to the in-process reference client of the same run. --pool-off adds
   the reference client with every stdio mock a plain subprocess (MCP_TESTBENCH_STDIO_POOL=0),
   to show what the pool saves.
2. The breakdown (one serial in-process run of every scenario with the reference client):
   seconds in start (client and mock server), connect, the rest of the drive, the drive's
   bounded waits, close, and judging; then the slowest runs first.

A benchmark, not a test: it asserts nothing; every run is bounded by --timeout.
Loopback only. Numbers on a shared machine are noisy: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.cli._run_command import LEAN_PYTEST  # noqa: E402 (the source tree, as the runs use)

PYTHON_DRIVER = f"{sys.executable} {ROOT / 'examples' / 'drivers' / 'python' / 'driver.py'}"
SDK_CLIENT = "harness.clients._sdk_mcp:McpSdkClient"
REFERENCE = "harness.clients:ReferenceClient"


@dataclass
class Whole:
    label: str
    wall: float
    items: int
    code: int
    failing: tuple[str, ...] = ()
    """The ids of the items that failed the run (FAIL, BLOCKED), to say why exit is 1."""

    @property
    def rate(self) -> float:
        return self.items / self.wall if self.wall else 0.0


def _env(pool: bool) -> dict[str, str]:
    env = dict(os.environ)
    # The source tree first, as the benchmark itself runs it (also for a driver).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    if not pool:
        env["MCP_TESTBENCH_STDIO_POOL"] = "0"
    return env


def whole_run(label: str, option: str, workers: int, timeout: float, *, pool: bool = True) -> Whole:
    """One whole suite run under pytest-xdist, timed from its start to its exit."""
    with tempfile.TemporaryDirectory(prefix="mcptb-bench-") as scratch:
        folder = Path(scratch)
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        report = folder / "results.json"
        argv = [sys.executable, "-m", "pytest", "-c", str(folder / "pytest.ini")]
        argv += ["--rootdir", str(folder), "-q", "-n", str(workers)]
        argv += LEAN_PYTEST  # what `mcp-testbench run` turns off
        argv += [option, "--mcp-report", str(report), str(folder)]
        start = time.monotonic()
        try:
            done = subprocess.run(
                argv,
                cwd=folder,
                env=_env(pool),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=timeout,
                check=False,
            )
            code = done.returncode
        except subprocess.TimeoutExpired:
            code = -1
        wall = time.monotonic() - start
        items, failing = 0, []
        if report.exists():
            results = json.loads(report.read_text(encoding="utf-8"))["results"]
            items = len(results)
            failing = [
                f"{r['id'].removeprefix('mcp-testbench::')} {r['status']}"
                for r in results
                if r["status"] in ("FAIL", "BLOCKED")
            ]
    return Whole(label, wall, items, code, tuple(failing))


def print_whole(rows: list[Whole]) -> None:
    base = rows[0].rate or 1.0
    print(f"\n{'run':<52} {'wall s':>8} {'items':>6} {'items/s':>8} {'ratio':>6} exit")
    for row in rows:
        print(
            f"{row.label:<52} {row.wall:>8.1f} {row.items:>6} {row.rate:>8.1f} "
            f"{row.rate / base:>5.2f}x {row.code if row.code >= 0 else 'TIMEOUT'}"
        )
    for row in rows:
        for failed in row.failing[:10]:
            print(f"  {row.label}: {failed}")


def breakdown(timeout: float, slowest: int) -> None:
    """Every scenario run once, serially, in this process: where the time goes."""
    from harness.clients import ReferenceClient
    from harness.judging._catalogue import CATALOGUE
    from harness.judging._judge import judge
    from harness.running._scenario import execute, stop_stdio_pool
    from harness.suite import SCENARIOS

    totals = dict.fromkeys(("start", "connect", "drive", "waits", "close", "judge"), 0.0)
    runs: list[tuple[float, str, str]] = []
    items = 0
    began = time.monotonic()
    try:
        for scenario in SCENARIOS:
            for revision, transport in scenario.matrix():
                if time.monotonic() - began > timeout:
                    print(f"(breakdown stopped at its bound of {timeout:g} s)")
                    break
                run = execute(scenario, revision, transport, ReferenceClient)
                judging = time.monotonic()
                for check_id in scenario.checks:
                    check = CATALOGUE[check_id]
                    if check.applies(revision, transport):
                        judge(check, run)
                        items += 1
                judged = time.monotonic() - judging
                connect = sum(o.seconds for o in run.operations if o.op == "connect")
                waits = sum(float(w["seconds"]) for w in run.waits)
                totals["start"] += run.phases.get("start", 0.0)
                totals["connect"] += connect
                totals["drive"] += max(0.0, run.phases.get("drive", 0.0) - connect - waits)
                totals["waits"] += waits
                totals["close"] += run.phases.get("close", 0.0)
                totals["judge"] += judged
                ops = ", ".join(
                    f"{o.op} {o.seconds:.2f}" for o in run.operations if o.seconds >= 0.1
                )
                waited = ", ".join(
                    f"wait {float(w['seconds']):.2f}" for w in run.waits if w["seconds"] >= 0.1
                )
                detail = "; ".join(part for part in (ops, waited) if part)
                runs.append((run.seconds + judged, f"{scenario.id}-{revision}-{transport}", detail))
    finally:
        stop_stdio_pool()
    wall = time.monotonic() - began
    print(f"\nbreakdown: {len(runs)} scenario runs, {items} items, serial, in process")
    print(f"{'phase':<10} {'seconds':>8} {'share':>6}")
    for phase, seconds in totals.items():
        print(f"{phase:<10} {seconds:>8.2f} {seconds / wall:>6.1%}")
    print(f"{'wall':<10} {wall:>8.2f}  ({items / wall:.1f} items/s)")
    print(f"\nslowest {slowest} runs (seconds; operations and waits of 0.1 s or more)")
    for seconds, name, detail in sorted(runs, reverse=True)[:slowest]:
        print(f"{seconds:>6.2f}  {name}  {detail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (-n)")
    parser.add_argument(
        "--driver", action="append", help="a driver command to time (default: the Python one)"
    )
    parser.add_argument("--sdk", action="store_true", help="also the Python SDK's adapter")
    parser.add_argument("--pool-off", action="store_true", help="also without the stdio pool")
    parser.add_argument("--no-breakdown", action="store_true", help="only the whole runs")
    parser.add_argument("--no-whole", action="store_true", help="only the breakdown")
    parser.add_argument("--slowest", type=int, default=15, help="runs listed in the breakdown")
    parser.add_argument("--timeout", type=float, default=600.0, help="bound on each run (s)")
    args = parser.parse_args()
    if not args.no_whole:
        rows = [
            whole_run(
                f"reference client, in process, -n {args.workers}",
                f"--mcp-client={REFERENCE}",
                args.workers,
                args.timeout,
            )
        ]
        if args.pool_off:
            rows.append(
                whole_run(
                    f"reference client, in process, -n {args.workers}, no stdio pool",
                    f"--mcp-client={REFERENCE}",
                    args.workers,
                    args.timeout,
                    pool=False,
                )
            )
        for driver in args.driver or [PYTHON_DRIVER]:
            shown = driver.replace(str(ROOT) + os.sep, "").replace(sys.executable, "python")
            rows.append(
                whole_run(
                    f"driver: {shown}"[:44] + f", -n {args.workers}",
                    f"--mcp-driver={driver}",
                    args.workers,
                    args.timeout,
                )
            )
        if args.sdk:
            rows.append(
                whole_run(
                    f"Python SDK adapter, in process, -n {args.workers}",
                    f"--mcp-client={SDK_CLIENT}",
                    args.workers,
                    args.timeout,
                )
            )
        print_whole(rows)
    if not args.no_breakdown:
        breakdown(args.timeout, args.slowest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
