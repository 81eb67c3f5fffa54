"""`mcp-testbench record`: a real server's session written as a script, and `record --check`:
a recording replayed against the live server, what drifted reported (mock_servers.recording).

Over stdio the recorder is the command the client starts, so stdout is the protocol
channel: everything it says goes to stderr. The drift check prints its report on stdout,
its progress and errors on stderr.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["add_record_parser", "record_command"]


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression: {text!r} ({exc})") from None
    return text


def add_record_parser(commands: Any, host_port: Any) -> None:
    record = commands.add_parser(
        "record",
        help="record a session with a real server as a script (a proxy between client and server)",
        description=(
            "Stand between a real client and a real server, relay every message both ways "
            "unchanged, and write the session as one script that `validate` accepts and "
            "`serve` replays. --stdio: give the client this command (with the server's "
            "command after --) instead of the server's. --http URL: point the client at the "
            "address --listen names. Secrets (Authorization, cookies, tokens in headers, "
            "bodies and URLs) are replaced by named placeholders. --check SCRIPT: replay a "
            "recording's requests against the live server instead and report what changed "
            "(exit 0: nothing, 1: drift, 2: the check could not run). See docs/scripts.md, "
            "Recording a real server and Catching drift."
        ),
    )
    what = record.add_mutually_exclusive_group(required=True)
    what.add_argument("--out", type=Path, metavar="SCRIPT", help="the script to write (JSON)")
    what.add_argument(
        "--check",
        type=Path,
        metavar="SCRIPT",
        help="the drift check: replay this recording against the live server (--stdio, or "
        "--http at its Streamable HTTP endpoint) and report every difference",
    )
    where = record.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--stdio",
        action="store_true",
        help="start the server command given after -- and speak to the client on stdin/stdout",
    )
    where.add_argument(
        "--http",
        metavar="URL",
        help="the real server's Streamable HTTP endpoint (its MCP URL), or a legacy HTTP+SSE "
        "server's SSE URL (told apart by its `endpoint` event; the session ends when the "
        "client closes that stream)",
    )
    record.add_argument(
        "--listen",
        type=host_port,
        metavar="HOST:PORT",
        help="with --http: where the client connects (default 127.0.0.1:0, a free port; the "
        "URL is printed)",
    )
    record.add_argument(
        "--exact",
        action="store_true",
        help="keep volatile values (cursors, progress tokens, timestamps, UUIDs) literal in "
        "the patterns instead of matching any value of their kind",
    )
    record.add_argument(
        "--redact",
        action="append",
        default=[],
        type=_regex,
        metavar="REGEX",
        help="also replace whatever REGEX matches, anywhere (repeatable)",
    )
    record.add_argument(
        "--name",
        metavar="NAME",
        help="the script's name (default: from the file name; made lower case, file-name-like)",
    )
    record.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="with --check: how long each request may take (default 30)",
    )
    record.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="with --check: also write the report as JSON to FILE",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return value


def _say(line: str) -> None:
    print(f"mcp-testbench record: {line}", file=sys.stderr, flush=True)


def _check_command(args: argparse.Namespace, command: Sequence[str]) -> int:
    """The drift check: the report's lines on stdout, progress and errors on stderr."""
    from mock_servers.recording import DEFAULT_TIMEOUT, RecordError, check_drift

    for given, name in ((args.listen, "--listen"), (args.exact, "--exact"), (args.name, "--name")):
        if given:
            _say(f"{name} goes with --out (recording), not --check")
            return 2
    if args.redact:
        _say("--redact goes with --out (recording), not --check")
        return 2
    if args.stdio and not command:
        _say("--stdio needs the server's command after --, e.g. -- python server.py")
        return 2
    if args.http and command:
        _say("a command after -- goes with --stdio; --http checks the server at its URL")
        return 2
    try:
        report = check_drift(
            args.check,
            command=command if args.stdio else None,
            url=args.http,
            timeout=args.timeout or DEFAULT_TIMEOUT,
            say=_say,
        )
    except RecordError as exc:
        _say(str(exc))
        return 2
    for line in report.lines():
        print(line, flush=True)
    for note in report.notes:
        _say(f"note: {note}")
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report.as_json(), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            _say(f"cannot write --json {args.json}: {exc.strerror or exc}")
            return 2
    return 1 if report.drifted else 0


def record_command(args: argparse.Namespace, command: Sequence[str]) -> int:
    from mock_servers.recording import RecordError, record_stdio

    if args.check is not None:
        return _check_command(args, command)
    for given, name in ((args.timeout, "--timeout"), (args.json, "--json")):
        if given is not None:
            _say(f"{name} goes with --check, not --out")
            return 2
    if args.stdio:
        if not command:
            _say("--stdio needs the server's command after --, e.g. -- python server.py")
            return 2
        if args.listen is not None:
            _say("--listen goes with --http, not --stdio")
            return 2
        try:
            return record_stdio(
                command,
                args.out,
                exact=args.exact,
                redact=args.redact,
                name=args.name,
                say=_say,
            )
        except RecordError as exc:
            _say(str(exc))
            return 2
    if command:
        _say("a command after -- goes with --stdio; --http records the server at its URL")
        return 2
    from mock_servers.recording import record_http

    host, port = args.listen or ("127.0.0.1", 0)

    def ready(url: str) -> None:
        print(f"mcp-testbench record: recording {args.http} at {url}", flush=True)
        print("press Ctrl+C to stop and write the script", flush=True)

    try:
        return record_http(
            args.http,
            args.out,
            host=host,
            port=port,
            exact=args.exact,
            redact=args.redact,
            name=args.name,
            ready=ready,
            say=_say,
        )
    except RecordError as exc:
        _say(str(exc))
        return 2
