"""Recording a real MCP server into a script (`mcp-testbench record`).

A recording proxy sits between a real client and a real server, relays every message both
ways unchanged, and writes one normalised script of the session that `validate` accepts and
`serve` replays: `record_stdio` is the command a client starts (the server its child),
`record_http` an HTTP endpoint in front of the server's URL (Streamable HTTP, or the legacy
HTTP+SSE, told apart by the server's answers). `build_script` turns
what passed (`Capture`) into the script; `Redactor` keeps secrets out of it. `check_drift`
replays a recording against the live server and reports what changed (`DriftReport`).
Builds on the engine and the protocol only; never imports pytest.
"""

from __future__ import annotations

from mock_servers.recording._build import RecordError, Recording, build_script, script_name
from mock_servers.recording._capture import UNPARSED, Capture, HttpFacts, Seen, decode
from mock_servers.recording._drift import DEFAULT_TIMEOUT, Difference, DriftReport, check_drift
from mock_servers.recording._http import record_http
from mock_servers.recording._output import check_out
from mock_servers.recording._redact import PLACEHOLDER, Redactor, is_secret_name
from mock_servers.recording._stdio import record_stdio

__all__ = [
    "DEFAULT_TIMEOUT",
    "PLACEHOLDER",
    "UNPARSED",
    "Capture",
    "Difference",
    "DriftReport",
    "HttpFacts",
    "RecordError",
    "Recording",
    "Redactor",
    "Seen",
    "build_script",
    "check_drift",
    "check_out",
    "decode",
    "is_secret_name",
    "record_http",
    "record_stdio",
    "script_name",
]
