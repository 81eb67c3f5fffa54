"""Do legal clients get true verdicts? The whole suite for variants of the reference client.

    python tools/variants.py                       # every variant
    python tools/variants.py StringIds LateAnswers # some of them
    python tools/variants.py --list                # what each variant does
    python tools/variants.py --gaps                # requests the mocks left unanswered

Each variant (tools/variant_clients.py) does one thing the spec allows that the bundled
clients do not: other request ids, a request of its own as it connects, answers that take
their time, HTTP written another way. One varies a driver instead (LateEvents: the Python
example driver writing its notification events 300 ms late). The suite is derived from
the spec's words, so a variant must get what the reference client gets, item by item
(status, kind and root cause); a difference is a fault of the harness, unless the variant
allows it (a client that declares less is skipped where it declared nothing, and has
nothing judged where it was asked nothing). One run of the reference client
first, then one run per variant, each as tools/stability.py runs the suite; exit status 1
if any variant's verdicts differ, with the items and both verdicts.

Verdicts alone miss a script that refuses a legal request without changing a verdict (R9
in docs/findings.md: a resource read again after an update got an error from the mock).
`--gaps` looks for those instead: every run of every scenario, in this process, for the
reference client and each variant, and the client messages the mock recorded as
`unmatched` (no step took them) for a variant but not for the reference client.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from stability import REFERENCE_CLIENT, Verdicts, run_suite, show, verdicts

# The checkout, last: an installed harness (the one the tests use) stays first.
sys.path.append(str(Path(__file__).resolve().parent.parent))

import variant_clients  # the checkout's harness is on the path now

from harness.clients import ReferenceClient
from harness.clients._driver import DriverClient
from harness.running._scenario import execute
from harness.suite import SCENARIOS, scenario

MODULE = "tools.variant_clients"
# Variants of a driver rather than of the client: name -> the driver command.
DRIVERS = {
    "LateEvents": shlex.join(
        [sys.executable, str(Path(__file__).resolve().parent / "late_events_driver.py")]
    ),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="The whole suite for legal variants of the reference client; "
        "exit 1 if any verdict differs from the reference client's."
    )
    parser.add_argument("names", nargs="*", metavar="VARIANT", help="default: every variant")
    parser.add_argument("--list", action="store_true", help="list the variants and exit")
    parser.add_argument(
        "--gaps",
        action="store_true",
        help="instead of verdicts: requests the mocks left unmatched for a variant only",
    )
    parser.add_argument(
        "--workers", default="2", metavar="N", help="pytest-xdist workers per run (default 2)"
    )
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="give up on a run after this long (default 1800)",
    )
    return parser


def unexplained(reference: Verdicts, variant: Verdicts, allowed: frozenset[str]) -> list[str]:
    """The items whose verdict differs from the reference client's and is not allowed."""
    lines = []
    for item in sorted(set(reference) | set(variant)):
        mine, theirs = variant.get(item), reference.get(item)
        if mine != theirs and (mine is None or mine[0] not in allowed):
            lines.append(f"{item}: {show(theirs)} (reference) -> {show(mine)}")
    return lines


# The in-process runs' bound on one client operation: as the mutation tests' (tests/_mutation.py).
GAP_OP_TIMEOUT = 2.5

Run = tuple[str, str, str]  # scenario id, revision, transport


def unanswered(factory: Callable[[], Any], run: Run) -> set[str]:
    """What the mock left unmatched in one run: the method of each client message that no
    step took ("an answer" for a response)."""
    scenario_id, revision, transport = run
    result = execute(scenario(scenario_id), revision, transport, factory, op_timeout=GAP_OP_TIMEOUT)
    return {
        str(e["message"].get("method", "an answer"))
        for e in result.entries
        if e["kind"] == "unmatched" and isinstance(e.get("message"), dict)
    }


def factory_of(name: str) -> Callable[[], Any]:
    """A variant's client factory: its class, or a driver client running its command."""
    if name in DRIVERS:
        command = shlex.split(DRIVERS[name])
        return lambda: DriverClient(command)
    return getattr(variant_clients, name)  # type: ignore[no-any-return]


def find_gaps(
    factories: Mapping[str, Callable[[], Any]], workers: int, runs: Sequence[Run] | None = None
) -> int:
    """Print the runs where a variant left a request unmatched that the reference client
    did not (default: every run of every scenario); 1 if any did."""
    if runs is None:
        runs = [(s.id, rev, transport) for s in SCENARIOS for rev, transport in s.matrix()]

    def one(run: Run) -> dict[str, list[str]]:
        reference = unanswered(ReferenceClient, run)
        found = {name: sorted(unanswered(f, run) - reference) for name, f in factories.items()}
        return {name: methods for name, methods in found.items() if methods}

    started = time.monotonic()
    gaps = 0
    with ThreadPoolExecutor(workers) as pool:
        for done, (run, found) in enumerate(zip(runs, pool.map(one, runs), strict=True), 1):
            for name, methods in found.items():
                gaps += 1
                print(f"{'-'.join(run)}: {name}: unmatched {', '.join(methods)}", flush=True)
            if done % 50 == 0:
                print(f"  {done} of {len(runs)} runs", flush=True)
    minutes = (time.monotonic() - started) / 60
    print(
        f"{len(factories)} variants in {len(runs)} runs ({minutes:.1f} min): "
        + (f"{gaps} left a request unmatched" if gaps else "no request left unmatched")
    )
    return 1 if gaps else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    known = [*variant_clients.VARIANTS, *DRIVERS]
    if args.list:
        for name in variant_clients.VARIANTS:
            doc = (getattr(variant_clients, name).__doc__ or "").split("\n\n")[0]
            print(f"{name}: {' '.join(doc.split())}")
        for name, command in DRIVERS.items():
            print(f"{name}: the driver {command}")
        return 0
    unknown = [n for n in args.names if n not in known]
    if unknown:
        print(f"unknown variants: {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    names = args.names or known
    if args.gaps:
        return find_gaps({name: factory_of(name) for name in names}, int(args.workers))
    folder = Path(tempfile.mkdtemp(prefix="mcp-testbench-variants-"))
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    started = time.monotonic()
    runs: dict[str, Verdicts] = {}
    for index, (name, client) in enumerate(
        [("reference", REFERENCE_CLIENT)]
        + [(n, f"driver:{DRIVERS[n]}" if n in DRIVERS else f"{MODULE}:{n}") for n in names]
    ):
        print(f"{name}: running...", flush=True)
        code, report = run_suite(index, folder, client, args.workers, [], args.run_timeout)
        if not report.exists() or code not in (0, 1):
            print(f"{name}: no usable report (pytest exit {code}); see {folder}/run-{index}.log")
            return 1
        runs[name] = verdicts(report)
    reference = runs.pop("reference")
    faults = 0
    for name, found in runs.items():
        allowed = variant_clients.ALLOWED.get(name, frozenset())
        lines = unexplained(reference, found, allowed)
        excused = len(unexplained(reference, found, frozenset())) - len(lines)
        faults += bool(lines)
        print(
            f"{name}: {len(found)} items, "
            + (f"{len(lines)} differ:" if lines else "as the reference")
            + (f" ({excused} {'/'.join(sorted(allowed))} where it allows)" if excused else "")
        )
        for line in lines:
            print(f"  {line}")
    minutes = (time.monotonic() - started) / 60
    print(f"{len(runs)} variants against the reference client in {minutes:.1f} min: ", end="")
    if faults:
        print(f"{faults} got verdicts of their own (reports and logs in {folder})")
        return 1
    print("every item as the reference's")
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
