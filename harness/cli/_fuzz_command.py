"""`mcp-testbench fuzz`: generated server behaviour against a client (harness.fuzzing,
docs/fuzzing.md), a progress line, a summary, and each failure saved as a script with the
command that replays it; `--replay SCRIPT` runs one saved script again."""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.clients import DriverPool, McpClient
from harness.fuzzing import (
    DEFAULT_OP_TIMEOUT,
    FUZZ_REVISIONS,
    FUZZ_TRANSPORTS,
    PROPERTIES,
    ClientCannotStart,
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
            "Run a Python client (--client; default: the reference client) or a client in any "
            "language (--driver) against server behaviour that Hypothesis generates (tools "
            "listed in pages, tool results of every content type, isError results, JSON-RPC "
            "errors, notifications; over HTTP, JSON and SSE answers of generated framing), "
            "checking the "
            "properties of docs/fuzzing.md on every example. A failure is shrunk and, with "
            "--save-failures, saved as an ordinary script with the command that replays it. "
            "Exits 1 when a property failed."
        ),
    )
    who = fuzz_parser.add_mutually_exclusive_group()
    who.add_argument(
        "--client", metavar="MODULE:FACTORY",
        help=f"a factory returning the client under test (default {_REFERENCE})",
    )  # fmt: skip
    who.add_argument(
        "--driver", metavar="CMD",
        help='a driver for a client in any language (docs/driver-protocol.md), e.g. "node '
        'driver.mjs"; a driver that offers reuse keeps one process for every example',
    )  # fmt: skip
    fuzz_parser.add_argument("--revision", choices=FUZZ_REVISIONS, default=FUZZ_REVISIONS[0])
    fuzz_parser.add_argument(
        "--transport", choices=FUZZ_TRANSPORTS, default=FUZZ_TRANSPORTS[0],
        help="stdio, or Streamable HTTP (the HTTP mock on a loopback port); default stdio",
    )  # fmt: skip
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
    if args.driver is not None:
        try:
            argv = shlex.split(args.driver)
        except ValueError as exc:
            argv, problem = [], str(exc)
        else:
            problem = "give the command that starts the driver"
        if not argv:
            print(f"mcp-testbench fuzz: --driver {args.driver!r}: {problem}", file=sys.stderr)
            return 2
        # Kept processes, across examples, for a driver that offers reuse (driver
        # protocol 1.1); any other gets a process per example.
        pool = DriverPool(argv)
        try:
            return _fuzz_with(args, pool.client, args.driver)
        finally:
            pool.close()
    spec = args.client or _REFERENCE
    try:
        factory = _factory(spec)
    except ValueError as exc:
        print(f"mcp-testbench fuzz: {exc}", file=sys.stderr)
        return 2
    return _fuzz_with(args, factory, spec)


def _fuzz_with(args: argparse.Namespace, factory: Callable[[], McpClient], who: str) -> int:
    """Replay one script, or fuzz; `who` names the client (a factory, or a driver command)."""
    if args.replay is not None:
        try:
            findings = replay(args.replay, factory, op_timeout=args.timeout)
        except (OSError, ValueError, RuntimeError) as exc:  # ClientCannotStart included
            print(f"mcp-testbench fuzz: cannot replay {args.replay}: {exc}", file=sys.stderr)
            return 2
        failed = 0
        for prop in PROPERTIES:
            lines = findings.get(prop.name, [])
            failed += bool(lines) and prop.level == "FAIL"
            print(f"{prop.level if lines else 'ok'}: {prop}" + "".join(f"\n  {x}" for x in lines))
        print(f"replayed {args.replay}: {failed} of {len(PROPERTIES)} properties failed")
        return 1 if failed else 0
    print(
        f"mcp-testbench fuzz: {who} at {args.revision} over {args.transport}, "
        f"{args.examples} examples" + ("" if args.seed is None else f", seed {args.seed}"),
        file=sys.stderr,
        flush=True,
    )
    try:
        report = fuzz(
            factory,
            revision=args.revision,
            transport=args.transport,
            examples=args.examples,
            seed_value=args.seed,
            save_failures=args.save_failures,
            client_spec=who,
            driver=args.driver,
            op_timeout=args.timeout,
            progress=_progress,
        )
    except ClientCannotStart as exc:
        print(f"mcp-testbench fuzz: the client cannot start: {exc}", file=sys.stderr)
        return 2
    for failure in report.failures:
        level = failure.violated.level  # WARN: a SHOULD-level property, never a failure
        print(f"{level}: {failure.violated} ({failure.steps} steps after shrinking)")
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
    return 1 if report.failed else 0
