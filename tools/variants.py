"""Do legal clients get true verdicts? The whole suite for variants of the reference client.

    python tools/variants.py                       # every variant
    python tools/variants.py StringIds LateAnswers # some of them
    python tools/variants.py --list                # what each variant does

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
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from stability import REFERENCE_CLIENT, Verdicts, run_suite, show, verdicts

# The checkout, last: an installed harness (the one the tests use) stays first.
sys.path.append(str(Path(__file__).resolve().parent.parent))

import variant_clients  # the checkout's harness is on the path now

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
        lines = unexplained(reference, found, variant_clients.ALLOWED.get(name, frozenset()))
        faults += bool(lines)
        print(
            f"{name}: {len(found)} items, "
            + (f"{len(lines)} differ:" if lines else "as the reference")
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
