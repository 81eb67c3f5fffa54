"""Clients with one planted defect each, the reference client otherwise: what the reports
say of such a run (tests/harness/test_plugin_reporting.py, tests/harness/reports/).

The suite's own mutants (tests/harness/suite/test_mutations*.py, test_preconditions.py)
prove each check can fail; these are the defects a new user's first client tends to have.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.clients import ReferenceClient
from harness.clients.reference._http import HttpTransport
from harness.clients.reference._stdio import StdioTransport
from harness.protocol import ErrorResponse, Notification, Request, Response

__all__ = ["GarbageOnStdio", "NeverAnswersServerRequests", "NoSessionEcho"]


class _DropsSessionId(HttpTransport):
    def _request_headers(
        self, accept: str, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        headers = super()._request_headers(accept, extra)
        return {k: v for k, v in headers.items() if k.lower() != "mcp-session-id"}


class NoSessionEcho(ReferenceClient):
    """HT-8: never sends back the Mcp-Session-Id the server issued (Streamable HTTP)."""

    _http_transport = _DropsSessionId


class NeverAnswersServerRequests(ReferenceClient):
    """Leaves every request of the server unanswered: ping, roots/list, sampling,
    elicitation (a client that reads answers to its own requests only)."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if not isinstance(message, Request):
            super()._dispatch(message)


class GarbageOnStdio(ReferenceClient):
    """ST-2: writes a line that is no JSON at all on the server's stdin before its first
    message (a stray print)."""

    _dirty = False

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        transport = self._transport
        if isinstance(transport, StdioTransport) and not self._dirty:
            self._dirty = True
            stdin = transport._process.stdin
            assert stdin is not None
            await stdin.send(b"debug: connecting\n")
        await super()._send(message, limit)
