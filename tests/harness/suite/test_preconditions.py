"""One defect, one FAIL: precondition mutants give one root cause, and block the rest.

Each mutant of the reference client breaks one rule that the rest of a scenario depends
on (the session id, the ids, the Accept header, the handshake, connecting at all). Run
through the real harness, its run must show exactly one root cause: the check that judges
the broken rule FAILs (or WARNs, for a SHOULD), and every other item of the run is
BLOCKED by it, never failed for a requirement that was not tested. A root cause that is
the client itself (connect raised or hung, an operation answered without a request)
blocks every item.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from _mutation import outcome, run_case
from test_mutations import ConnectsIdly, NoInitializedNotification
from test_mutations_stateless import NoParamHeaders

from harness.clients import ReferenceClient
from harness.clients._contract import ConnectOptions, McpClient, Target
from harness.clients.reference._http import HttpTransport
from harness.clients.reference._stdio import StdioTransport
from harness.judging._catalogue import CATALOGUE
from harness.judging._judge import judge

# -- the mutants ---------------------------------------------------------------------------------


def _headers_mutant(
    name: str,
    doc: str,
    rewrite: Callable[[HttpTransport, dict[str, str]], dict[str, str]],
) -> type[ReferenceClient]:
    """A reference client whose HTTP transport rewrites the headers of every request."""

    class Transport(HttpTransport):
        def _request_headers(
            self, accept: str, extra: Mapping[str, str] | None = None
        ) -> dict[str, str]:
            return rewrite(self, super()._request_headers(accept, extra))

    return type(name, (ReferenceClient,), {"__doc__": doc, "_http_transport": Transport})


def _without(headers: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() != name}


NoSessionEcho = _headers_mutant(
    "NoSessionEcho",
    "HT-8: never sends the Mcp-Session-Id it was given.",
    lambda transport, headers: _without(headers, "mcp-session-id"),
)
WrongSessionId = _headers_mutant(
    "WrongSessionId",
    "HT-8: sends a session id the server never issued.",
    lambda transport, headers: (
        {**_without(headers, "mcp-session-id"), "Mcp-Session-Id": "never-issued"}
        if transport.session_id is not None
        else headers
    ),
)
WrongProtocolVersionHeader = _headers_mutant(
    "WrongProtocolVersionHeader",
    "HT-11: after initialize, a protocol version header the server does not support.",
    lambda transport, headers: (
        {**_without(headers, "mcp-protocol-version"), "MCP-Protocol-Version": "1999-01-01"}
        if transport.protocol_version is not None
        else headers
    ),
)
JsonOnlyAccept = _headers_mutant(
    "JsonOnlyAccept",
    "HT-2: POSTs accept application/json only.",
    lambda transport, headers: (
        {**_without(headers, "accept"), "Accept": "application/json"}
        if "application/json" in headers.get("Accept", "")
        else headers
    ),
)
NoMethodHeader = _headers_mutant(
    "NoMethodHeader",
    "HM-3: at 2026-07-28, no Mcp-Method header.",
    lambda transport, headers: _without(headers, "mcp-method"),
)


class NullIds(ReferenceClient):
    """RPC-1: every request id is null."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.repeat(None)  # type: ignore[arg-type]


class GarbageFirst(ReferenceClient):
    """RPC-1/ST-1: writes a line that is not JSON-RPC before its first message."""

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        transport = self._transport
        if isinstance(transport, StdioTransport) and not getattr(self, "_dirty", False):
            self._dirty = True
            stdin = transport._process.stdin
            assert stdin is not None
            await stdin.send(b"this is not JSON-RPC\n")
        await super()._send(message, limit)


class ConnectRaises(ReferenceClient):
    """Crashes in connect (not a ClientError)."""

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        raise RuntimeError("connect is broken")


class ConnectHangs(ReferenceClient):
    """Never returns from connect."""

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


class SilentListTools(ReferenceClient):
    """Answers list_tools with an empty list it never asked the server for."""

    async def list_tools(self) -> dict[str, Any]:
        return {"tools": []}


# -- one root cause each -------------------------------------------------------------------------

TOOLS_HTTP = ("tools-call", "2025-11-25", "http")
TOOLS_STDIO = ("tools-call", "2025-11-25", "stdio")
HANDSHAKE_STDIO = ("lifecycle-handshake", "2025-11-25", "stdio")


@dataclass(frozen=True)
class Defect:
    mutant: Callable[[], McpClient]
    run: tuple[str, str, str]
    root: str
    """The root cause every other item names: the check of the broken rule, or the
    client's own failure (`client.<operation>`)."""
    also_broken: tuple[str, ...] = ()
    """Other checks whose requirement the same defect breaks (garbage on stdin breaks
    stdio framing as well as JSON-RPC): they FAIL too, judged on the same evidence."""
    judged_elsewhere: bool = False
    """The run's scenario does not judge the root check itself (other scenarios do)."""


DEFECTS: dict[str, Defect] = {
    "no session echo": Defect(NoSessionEcho, TOOLS_HTTP, "http.session-id-echoed"),
    "wrong session id": Defect(WrongSessionId, TOOLS_HTTP, "http.session-id-echoed"),
    # The refused tools/list was sent: never "tools/list was never sent" (a PASS).
    "no session echo, server without tools": Defect(
        NoSessionEcho,
        ("lifecycle-no-tools-capability", "2025-11-25", "http"),
        "http.session-id-echoed",
        judged_elsewhere=True,
    ),
    # The notification refused with 400 is no breach of "accepts 202" (HT-4).
    "no session echo, 202 to notifications": Defect(
        NoSessionEcho,
        ("http-get-405", "2025-11-25", "http"),
        "http.session-id-echoed",
        judged_elsewhere=True,
    ),
    "bad protocol version header": Defect(
        WrongProtocolVersionHeader, TOOLS_HTTP, "http.protocol-version-header"
    ),
    "Accept: application/json only": Defect(JsonOnlyAccept, TOOLS_HTTP, "http.accept-header"),
    "no Mcp-Method header at 2026-07-28": Defect(
        NoMethodHeader, ("tools-call", "2026-07-28", "http"), "stateless.standard-headers"
    ),
    # The mock refuses the call for its missing Mcp-Param header: HM-4's rule, not HM-2's.
    "no Mcp-Param header at 2026-07-28": Defect(
        NoParamHeaders, ("stateless-param-headers", "2026-07-28", "http"), "stateless.x-mcp-header"
    ),
    "null ids": Defect(
        NullIds, TOOLS_STDIO, "jsonrpc.messages-valid", also_broken=("stdio.only-mcp-messages",)
    ),
    "garbage before the first message": Defect(
        GarbageFirst,
        TOOLS_STDIO,
        "jsonrpc.messages-valid",
        also_broken=("stdio.framing", "stdio.only-mcp-messages"),
    ),
    "no notifications/initialized": Defect(
        NoInitializedNotification, HANDSHAKE_STDIO, "lifecycle.initialized-notification"
    ),
    "connected without initialize": Defect(
        ConnectsIdly, HANDSHAKE_STDIO, "lifecycle.initialize-first"
    ),
    "connect raises": Defect(ConnectRaises, TOOLS_STDIO, "client.connect"),
    "connect hangs": Defect(ConnectHangs, TOOLS_HTTP, "client.connect"),
    "list_tools answered without a request": Defect(
        SilentListTools, TOOLS_STDIO, "client.list_tools"
    ),
}


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_one_defect_gives_one_root_cause(name: str) -> None:
    """The root check reaches its violation branch; every item whose check depends on the
    broken rule is BLOCKED by it; a check declared independent of that root (one that
    judges other headers of the same requests) may be judged, but never FAILs."""
    defect = DEFECTS[name]
    result = run_case(defect.mutant, defect.run)
    seen = {
        check_id: judge(CATALOGUE[check_id], result)
        for check_id in result.scenario.checks
        if CATALOGUE[check_id].applies(result.revision, result.transport)
    }
    broken = {defect.root, *defect.also_broken}
    wrong = {}
    for check_id, verdict in seen.items():
        got = outcome(verdict)
        if check_id in broken:
            right = got in ("FAIL", "WARN")  # the violation branch (WARN: a SHOULD in it)
        elif defect.root in CATALOGUE[check_id].independent_of:
            right = got not in ("FAIL", "WARN")
        else:
            right = got == f"BLOCKED:{defect.root}"
        if not right:
            wrong[check_id] = (got, verdict.reason)
    assert not wrong, wrong
    if defect.root.startswith("client."):
        assert defect.root not in CATALOGUE
    elif not defect.judged_elsewhere:
        assert defect.root in seen, f"the run {defect.run} does not judge {defect.root}"
    if name == "connect hangs":
        assert all("hung" in verdict.reason for verdict in seen.values())
