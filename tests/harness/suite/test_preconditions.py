"""One defect, one FAIL: a precondition mutant's root cause blocks only what it touched.

Each mutant of the reference client breaks one rule that the rest of a scenario depends
on (the session id, the ids, the Accept header, the handshake, a GET stream opened too
early or with a stale version header, a ping left unanswered during initialization,
connecting at all). Run through the real harness beside the reference client on the same
run, the mutant's run must show:
- its root cause is the check of the broken rule, reaching its violation branch (FAIL, or
  WARN for a SHOULD), or the client itself when no check explains its failure;
- no item is blocked by a root whose own verdict on the run is a PASS;
- every item that is not blocked has the reference client's verdict (its evidence was
  complete before the fault, or the fault lay off its path), and the checks listed as
  judged are among them;
- every blocked item names that root.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from _mutation import OP_TIMEOUT, outcome, run_case
from test_mutations import ConnectsIdly, NoInitializedNotification
from test_mutations_stateless import NoParamHeaders

from harness.clients import ReferenceClient
from harness.clients._contract import ConnectOptions, McpClient, Target
from harness.clients.reference._http import HttpTransport
from harness.clients.reference._stdio import StdioTransport
from harness.judging._catalogue import CATALOGUE
from harness.judging._judge import judge

pytest_plugins = ["pytester"]

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
    """ST-2: writes a line that is no JSON at all before its first message."""

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


class GetStreamBeforeInitialize(ReferenceClient):
    """LC-1: opens its GET stream before it sends initialize (and goes on when refused)."""

    class Transport(HttpTransport):
        async def send(self, message: Mapping[str, Any], *args: Any, **kwargs: Any) -> None:
            if not getattr(self, "_early_get", False):
                self._early_get = True
                await self._get(None)
            await super().send(message, *args, **kwargs)

    _http_transport = Transport


class StaleVersionOnGetStream(ReferenceClient):
    """HT-11: its GET stream names the newest revision, whatever initialize negotiated."""

    class Transport(HttpTransport):
        def _request_headers(
            self, accept: str, extra: Mapping[str, str] | None = None
        ) -> dict[str, str]:
            headers = super()._request_headers(accept, extra)
            if accept == "text/event-stream" and "MCP-Protocol-Version" in headers:  # the GET
                headers["MCP-Protocol-Version"] = "2025-11-25"
            return headers

    _http_transport = Transport


class NoPingAnswerDuringInitialize(ReferenceClient):
    """PING: leaves a server ping unanswered while its initialize is pending."""

    def _dispatch(self, message: Any) -> None:
        if getattr(message, "method", None) == "ping" and not self._initialize_answered:
            return
        super()._dispatch(message)


class NoAnswerToUrlElicitation(ReferenceClient):
    """ELICIT: answers form elicitations, and leaves a URL-mode one unanswered."""

    def _dispatch(self, message: Any) -> None:
        params = getattr(message, "params", None) or {}
        if getattr(message, "method", None) == "elicitation/create" and params.get("mode") == "url":
            return
        super()._dispatch(message)


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
    judged: tuple[str, ...] = ()
    """Checks whose evidence is complete before the fault, or off its path: they keep the
    reference client's verdict."""


DEFECTS: dict[str, Defect] = {
    # Its DELETE lacks the id too: HT-10's SHOULD, broken by the same missing header.
    "no session echo": Defect(
        NoSessionEcho,
        TOOLS_HTTP,
        "http.session-id-echoed",
        also_broken=("http.delete-session",),
        judged=("jsonrpc.messages-valid",),
    ),
    "wrong session id": Defect(
        WrongSessionId,
        TOOLS_HTTP,
        "http.session-id-echoed",
        also_broken=("http.delete-session",),
        judged=("jsonrpc.messages-valid",),
    ),
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
    # One invalid line is one defect: JSON that is no JSON-RPC message is the message
    # rule's; a line that is no JSON at all, ST-2's (the other line checks are BLOCKED by it).
    "null ids": Defect(NullIds, TOOLS_STDIO, "jsonrpc.messages-valid"),
    "garbage before the first message": Defect(
        GarbageFirst,
        TOOLS_STDIO,
        "stdio.only-mcp-messages",
        judged=("tools.call-result", "jsonrpc.request-ids-unique"),
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
    # A stream opened before initialize is LC-1's matter, not a session id left out
    # (HT-8): no id had been issued. The rest of the session is untouched by it.
    "a GET stream before initialize": Defect(
        GetStreamBeforeInitialize,
        TOOLS_HTTP,
        "lifecycle.initialize-first",
        judged_elsewhere=True,
        judged=("tools.call-result", "jsonrpc.messages-valid"),
    ),
    "a stale version header on the GET stream": Defect(
        StaleVersionOnGetStream,
        ("tools-call", "2025-06-18", "http"),
        "http.protocol-version-header",
        judged_elsewhere=True,
        judged=("tools.call-result", "jsonrpc.messages-valid"),
    ),
    # The mock answers initialize only once its ping is answered: connect hangs, and the
    # check of the ping, not the hang, is the root.
    "no answer to a ping during initialization": Defect(
        NoPingAnswerDuringInitialize,
        ("features-server-requests", "2025-11-25", "stdio"),
        "features.ping-before-initialized",
    ),
    # The call hangs waiting on the URL elicitation's answer: the unknown
    # elicitation/complete that came with it is not judged by a call that could never end
    # (BLOCKED), not failed as a second defect; the form elicitation before it is judged.
    "no answer to a URL-mode elicitation": Defect(
        NoAnswerToUrlElicitation,
        ("features-elicitation-modes", "2025-11-25", "stdio"),
        "features.elicitation-undeclared-mode",
        judged=("features.elicitation-answer",),
    ),
}


@functools.cache
def _clean(run: tuple[str, str, str]) -> dict[str, str]:
    """The reference client's verdicts on the same run."""
    result = run_case(ReferenceClient, run)
    return {
        check_id: outcome(judge(CATALOGUE[check_id], result))
        for check_id in result.scenario.checks
        if CATALOGUE[check_id].applies(result.revision, result.transport)
    }


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_one_defect_gives_one_root_cause(name: str) -> None:
    """The root check reaches its violation branch; an item the fault touched is BLOCKED
    by it; any other item keeps the reference client's verdict; no root is a PASS."""
    defect = DEFECTS[name]
    result = run_case(defect.mutant, defect.run)
    clean = _clean(defect.run)
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
        elif got.startswith("BLOCKED:"):
            right = got == f"BLOCKED:{defect.root}" and check_id not in defect.judged
        else:
            right = got == clean[check_id]
        if not right:
            wrong[check_id] = (got, clean.get(check_id), verdict.reason)
    assert not wrong, wrong
    assert all(check_id in seen for check_id in defect.judged), defect.judged
    # A root is never a PASS: the root check's own verdict on this very run.
    roots = {verdict.root for verdict in seen.values() if verdict.root in CATALOGUE}
    for root in roots | ({defect.root} & set(CATALOGUE)):
        assert outcome(judge(CATALOGUE[root], result)) in ("FAIL", "WARN"), root
    if defect.root.startswith("client."):
        assert defect.root not in CATALOGUE
    elif not defect.judged_elsewhere:
        assert defect.root in seen, f"the run {defect.run} does not judge {defect.root}"
    if name == "connect hangs":
        assert all("hung" in verdict.reason for verdict in seen.values())


# -- one invalid message, one FAIL, over the whole suite ----------------------------------------

# Each writes one kind of line that is no valid message, on every stdio session; the one
# check whose requirement that line breaks is the only one that may FAIL anywhere.
INVALID_LINES = {
    "test_preconditions:NullIds": "jsonrpc.messages-valid",
    "test_mutations_transports:BatchesOnStdio": "stdio.no-batches",
    "test_mutations_transports:PrettyPrintsOnStdio": "stdio.framing",
    "test_preconditions:GarbageFirst": "stdio.only-mcp-messages",
}


@pytest.mark.parametrize("mutant", sorted(INVALID_LINES))
def test_one_invalid_line_is_one_fail_over_the_whole_suite(
    pytester: pytest.Pytester, mutant: str
) -> None:
    """The whole suite at one revision over stdio: every FAIL or WARN is the owner's,
    every item it blocks names it, and no item fails for a requirement the line does
    not break."""
    report = pytester.path / "r.json"
    pytester.runpytest(
        f"--mcp-client={mutant}",
        "--mcp-revision=2025-11-25",
        "--mcp-transport=stdio",
        f"--mcp-timeout={OP_TIMEOUT}",
        f"--mcp-report={report}",
        "-p",
        "no:cacheprovider",
    )
    owner = INVALID_LINES[mutant]
    results = json.loads(report.read_text(encoding="utf-8"))["results"]
    assert results
    failing = {(r["check"], r["status"]) for r in results if r["status"] in ("FAIL", "WARN")}
    # The clean client's own WARNs and FAILs are none; the mutant's are the owner's.
    assert failing == {(owner, "FAIL")}, failing
    roots = {r["root"] for r in results if r["status"] == "BLOCKED"}
    assert roots <= {owner}, roots
