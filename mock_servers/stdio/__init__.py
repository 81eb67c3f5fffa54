"""The stdio mock server: `python -m mock_servers.stdio SCRIPT [options]`.

    python -m mock_servers.stdio SCRIPT [--revision R] [--transcript PATH]
        [--append-transcript] [--answer-timeout SECONDS] [--max-line-bytes N]

`--append-transcript` continues an existing transcript of the same run, for a client that
starts the server again after it exited (each process records a `start` entry).

A client spawns it (build the argv with `stdio_command`) and speaks newline-delimited
JSON-RPC on its stdin/stdout; stdout carries MCP messages only, logs go to stderr. Exit
code 0, a `crash` fault's exit code, or 2 for bad options or a bad script (one line on
stderr). In-process use: `await serve_stdio(script, stdin=..., stdout=...)`. `serve_stdio_dev` is
`mcp-testbench serve --stdio`: the revision picked from the client's first line, and one
line per message on stderr.
"""

from __future__ import annotations

from mock_servers.stdio._dev import serve_stdio_dev
from mock_servers.stdio._pool import StdioPool
from mock_servers.stdio._server import (
    DEFAULT_ANSWER_TIMEOUT,
    MAX_LINE_BYTES,
    main,
    prepare_script,
    serve_stdio,
    stdio_command,
)

__all__ = [
    "DEFAULT_ANSWER_TIMEOUT",
    "MAX_LINE_BYTES",
    "StdioPool",
    "main",
    "prepare_script",
    "serve_stdio",
    "serve_stdio_dev",
    "stdio_command",
]
