"""Scriptable MCP mock servers (stdio and Streamable HTTP), usable without pytest.

The package's face: scripts (`load_script`, `Script`, `ScriptError`), transcripts
(`read_transcript`) and the shipped fixtures (`fixtures_root`; `find_script` finds one by
name). The servers themselves are `mock_servers.stdio` and `mock_servers.http`, imported on
demand (the HTTP one brings in Starlette and uvicorn). The package builds on
`harness.protocol` only.
"""

from __future__ import annotations

from mock_servers._fixtures import find_script, fixtures_root
from mock_servers.engine import (
    NOTIFY_SUFFIX,
    Script,
    ScriptError,
    Transcript,
    load_script,
    package_version,
    parse_script,
    read_transcript,
)

__all__ = [
    "NOTIFY_SUFFIX",
    "Script",
    "ScriptError",
    "Transcript",
    "find_script",
    "fixtures_root",
    "load_script",
    "package_version",
    "parse_script",
    "read_transcript",
]
