"""`mcp-testbench serve` as a subprocess, for the tests that read what it prints.

A thin face over `_served.serving` (one way to start and stop it): the URL, and the lines
it has printed (stdout and stderr), which grow while it runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _machine import within
from _served import serving

WAIT = within(10.0)


@contextmanager
def serve(script: str | Path, *options: str) -> Iterator[tuple[str, None, list[str]]]:
    """`mcp-testbench serve SCRIPT OPTIONS --http 127.0.0.1:0`: its URL, None, its lines."""
    with serving(Path(script), *options) as served:
        yield served.url, None, served.output
