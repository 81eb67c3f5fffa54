"""`mcp-testbench record`: a real server's session written as a script (mock_servers.recording).

Over stdio the command is the one the client starts, so stdout is the protocol channel:
everything the command says goes to stderr.
"""

from __future__ import annotations

import argparse
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
            "bodies and URLs) are replaced by named placeholders. See docs/scripts.md, "
            "Recording a real server."
        ),
    )
    record.add_argument(
        "--out", type=Path, required=True, metavar="SCRIPT", help="the script to write (JSON)"
    )
    where = record.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--stdio",
        action="store_true",
        help="start the server command given after -- and speak to the client on stdin/stdout",
    )
    where.add_argument(
        "--http", metavar="URL", help="the real server's Streamable HTTP endpoint (its MCP URL)"
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


def _say(line: str) -> None:
    print(f"mcp-testbench record: {line}", file=sys.stderr, flush=True)


def record_command(args: argparse.Namespace, command: Sequence[str]) -> int:
    from mock_servers.recording import RecordError, record_stdio

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
