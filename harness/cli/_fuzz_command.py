"""`mcp-testbench fuzz`: generated server behaviour against a client (harness.fuzzing,
docs/fuzzing.md), a progress line, a summary, and each failure saved as a script with the
command that replays it; `--replay SCRIPT` runs one saved script again."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.clients import McpClient
from harness.fuzzing import (
    DEFAULT_OP_TIMEOUT,
    FUZZ_REVISIONS,
    PROPERTIES,
    FuzzReport,
    fuzz,
    replay,
)

__all__ = ["add_fuzz_parser", "fuzz_command"]

_REFERENCE = "harness.clients:ReferenceClient"


def _count(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def add_fuzz_parser(commands: Any) -> None:
    fuzz_parser = commands.add_parser(
        "fuzz",
        help="fuzz a client with generated server behaviour; save failures as scripts",
        description=(
            "Run a Python client (--client; default: the reference client) against server "
            "behaviour that Hypothesis generates (tools listed in pages, tool results of every "
            "content type, isError results, JSON-RPC errors, notifications), checking the "
            "properties of docs/fuzzing.md on every example. A failure is shrunk and, with "
            "--save-failures, saved as an ordinary script with the command that replays it. "
            "Exits 1 when a property failed."
        ),
    )
    fuzz_parser.add_argument(
        "--client", metavar="MODULE:FACTORY", default=_REFERENCE,
        help=f"a factory returning the client under test (default {_REFERENCE})",
    )  # fmt: skip
    fuzz_parser.add_argument("--revision", choices=FUZZ_REVISIONS, default=FUZZ_REVISIONS[0])
    fuzz_parser.add_argument("--transport", choices=("stdio",), default="stdio")
    fuzz_parser.add_argument(
        "--examples", type=_count, default=100, metavar="N", help="examples (default 100)"
    )
    fuzz_parser.add_argument(
        "--seed", type=int, metavar="S", help="draw the same examples as an earlier run"
    )
    fuzz_parser.add_argument(
        "--save-failures", type=Path, metavar="DIR", help="save each shrunk failure here"
    )
    fuzz_parser.add_argument(
        "--timeout", type=_seconds, default=DEFAULT_OP_TIMEOUT, metavar="SECONDS",
        help=f"time the client may take per operation (default {DEFAULT_OP_TIMEOUT:g})",
    )  # fmt: skip
    fuzz_parser.add_argument(
        "--replay", type=Path, metavar="SCRIPT", help="run one saved failure again, and judge it"
    )


def _factory(spec: str) -> Callable[[], McpClient]:
    """MODULE:FACTORY, imported as `python -m` imports (the working directory first)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--client {spec!r}: write MODULE:FACTORY, e.g. mypkg.testing:make_client")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"--client {spec!r}: cannot import {module_name!r}: {exc}") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ValueError(f"--client {spec!r}: {module_name} has no callable {attr!r}")
    return factory  # type: ignore[no-any-return]


def _progress(report: FuzzReport) -> None:
    if report.examples % 10 == 0:
        print(
            f"mcp-testbench fuzz: {report.examples} examples, {report.examples_per_second:.1f}/s",
            file=sys.stderr,
            flush=True,
        )


def fuzz_command(args: argparse.Namespace) -> int:
    try:
        factory = _factory(args.client)
    except ValueError as exc:
        print(f"mcp-testbench fuzz: {exc}", file=sys.stderr)
        return 2
    if args.replay is not None:
        try:
            findings = replay(args.replay, factory, op_timeout=args.timeout)
        except (OSError, ValueError, RuntimeError) as exc:
            print(f"mcp-testbench fuzz: cannot replay {args.replay}: {exc}", file=sys.stderr)
            return 2
        failed = 0
        for prop in PROPERTIES:
            lines = findings.get(prop.name, [])
            failed += bool(lines)
            print(f"{'FAIL' if lines else 'ok'}: {prop}" + "".join(f"\n  {x}" for x in lines))
        print(f"replayed {args.replay}: {failed} of {len(PROPERTIES)} properties failed")
        return 1 if failed else 0
    print(
        f"mcp-testbench fuzz: {args.client} at {args.revision} over {args.transport}, "
        f"{args.examples} examples" + ("" if args.seed is None else f", seed {args.seed}"),
        file=sys.stderr,
        flush=True,
    )
    report = fuzz(
        factory,
        revision=args.revision,
        examples=args.examples,
        seed_value=args.seed,
        save_failures=args.save_failures,
        client_spec=args.client,
        op_timeout=args.timeout,
        progress=_progress,
    )
    for failure in report.failures:
        print(f"FAIL: {failure.violated} ({failure.steps} steps after shrinking)")
        for line in failure.details:
            print(f"  {line}")
        if failure.script is not None:
            again = "reproduced" if failure.reproduced else "did NOT reproduce on a fresh run"
            print(f"  saved: {failure.script} ({again})")
            print(f"  replay: {failure.replay_command}")
            print(f"  serve:  {failure.serve_command}")
    for fault in report.harness_faults:
        print(f"harness fault (not the client's): {fault}")
    print(report.summary())
    return 1 if report.failures else 0
