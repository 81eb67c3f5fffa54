"""How fast `mcp-testbench fuzz` runs examples, beside a bare baseline in the same run.

    python benchmarks/fuzz.py [--examples 60] [--seed 37] [--only 2025-11-25/stdio ...]

For each revision and transport it times, one after the other in this process:

1. **draw**: Hypothesis drawing `--examples` served plans from the seed (no client runs);
2. **bare**: the reference client run once against each of those scripts
   (`harness.fuzzing.run_plan`: the mock, connect, the operations), no search and no
   judging: the floor a fuzzer of these plans cannot go under;
3. **fuzz**: `harness.fuzzing.fuzz` with the same seed and count (drawing, running, judging
   every property): examples per second, and the ratio to the bare runs;
4. **driver**: the same search through the Python example driver (driver protocol 1.1,
   one process kept across examples, `reset` between them): examples per second, and
   the ratio to the in-process search.

The plans' own delays (a few hundred milliseconds at most per example) are in every figure
but the draw. Figures are of this run only and move with the machine's load: read the
ratios. A benchmark, not a test: it asserts nothing and never runs in the test suite. The
mocks listen on loopback only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

from harness.clients import DriverPool, McpClient, ReferenceClient
from harness.fuzzing import (
    FUZZ_REVISIONS,
    FUZZ_TRANSPORTS,
    ServedPlan,
    fuzz,
    harness_fault,
    run_plan,
    served_plans,
)
from harness.running import stop_stdio_pool

ROOT = Path(__file__).resolve().parent.parent
DRIVER = [sys.executable, str(ROOT / "examples" / "drivers" / "python" / "driver.py")]


def draw(revision: str, transport: str, examples: int, seed_value: int) -> list[ServedPlan]:
    drawn: list[ServedPlan] = []

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @seed(seed_value)
    @given(served_plans(revision, transport))
    def collect(plan: ServedPlan) -> None:
        drawn.append(plan)

    collect()
    return drawn


def bare(drawn: list[ServedPlan]) -> int:
    """Run the reference client on each script; the harness faults (0 expected)."""
    faults = 0
    with tempfile.TemporaryDirectory(prefix="mcptb-fuzz-bench-") as folder:
        for number, plan in enumerate(drawn):
            run = run_plan(plan, ReferenceClient, Path(folder) / f"bare-{number}.json")
            faults += harness_fault(run) is not None
    return faults


def searched(
    factory: Callable[[], McpClient], revision: str, transport: str, examples: int, seed_value: int
) -> tuple[float, str]:
    report = fuzz(
        factory, revision=revision, transport=transport, examples=examples, seed_value=seed_value
    )
    return report.examples_per_second, report.summary()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument(
        "--only", nargs="*", metavar="REVISION/TRANSPORT", help="e.g. 2026-07-28/http"
    )
    parser.add_argument("--no-driver", action="store_true", help="skip the driver's search")
    args = parser.parse_args(argv)
    configs = [f"{r}/{t}" for r in FUZZ_REVISIONS for t in FUZZ_TRANSPORTS]
    if args.only:
        configs = [c for c in configs if c in args.only]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"fuzz benchmark: {args.examples} examples each, seed {args.seed}; "
        f"{os.cpu_count()} cores, load {load:.1f}; driver: the Python example driver"
    )
    pool = None if args.no_driver else DriverPool(DRIVER)
    try:
        for config in configs:
            revision, transport = config.split("/")
            n = args.examples
            start = time.monotonic()
            drawn = draw(revision, transport, n, args.seed)
            drawing = time.monotonic() - start
            start = time.monotonic()
            faults = bare(drawn)
            bare_rate = len(drawn) / (time.monotonic() - start)
            rate, summary = searched(ReferenceClient, revision, transport, n, args.seed)
            line = (
                f"{revision} {transport:5}  draw {len(drawn) / drawing:6.1f}/s  "
                f"bare {bare_rate:5.1f}/s ({faults} faults)  "
                f"fuzz {rate:5.1f}/s = {rate / bare_rate:.2f} of bare"
            )
            if pool is not None:
                driven, driven_summary = searched(pool.client, revision, transport, n, args.seed)
                line += f"  driver {driven:5.1f}/s = {driven / rate:.2f} of in process"
                summary += f"\n    driver: {driven_summary}"
            print(line)
            print(f"    {summary}", flush=True)
    finally:
        if pool is not None:
            pool.close()
        stop_stdio_pool()
    return 0


if __name__ == "__main__":
    sys.exit(main())
