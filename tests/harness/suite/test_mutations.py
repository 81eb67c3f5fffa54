"""Falsifiability: broken variants of the reference client fail exactly the checks they should.

Each mutant breaks one rule of the spec (and nothing else on purpose). It runs through the
real harness (mock server, scenario, judging) on the scenario that exercises the rule, and
the verdicts are compared with the expectation: the named checks get the named status,
every other check of the run still passes. A check that a mutant cannot make fail would
be a check that cannot fail.
"""

from __future__ import annotations

import contextlib
import itertools
import urllib.parse
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from _mutation import (
    OP_TIMEOUT,
    Case,
    assert_mutant_fails_exactly,
    assert_reference_passes,
    outcome,
    run_case,
    verdicts,
)
from variant_clients import IdsPerSession, ListsAtConnect

from harness.clients import ClientError, ReferenceClient
from harness.clients._contract import ConnectOptions, Target
from harness.clients.reference._http import HttpTransport
from harness.clients.reference._stdio import StdioTransport
from harness.judging._catalogue import CATALOGUE
from harness.judging._judge import judge

# -- the mutants -------------------------------------------------------------------------------


class NoInitializedNotification(ReferenceClient):
    """LC-4: never sends notifications/initialized."""

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        if message.get("method") != "notifications/initialized":
            await super()._send(message, limit)


class ListsBeforeInitialized(ReferenceClient):
    """LC-4: lists the tools, and has the answer, before it sends notifications/initialized."""

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        if message.get("method") == "notifications/initialized":
            with contextlib.suppress(ClientError):  # an answer, even an error, is enough
                await self._request("tools/list", {})
        await super()._send(message, limit)


class DropsIsError(ReferenceClient):
    """TL-4: loses the isError flag of a tool result."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        result = await super().call_tool(*args, **kwargs)
        result.pop("isError", None)
        return result


class ErrorsAsToolResults(ReferenceClient):
    """TL-4: turns JSON-RPC errors into isError results."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super().call_tool(*args, **kwargs)
        except ClientError as exc:
            if exc.kind != "protocol":
                raise
            return {"content": [{"type": "text", "text": exc.message}], "isError": True}


class FirstPageOnly(ReferenceClient):
    """TL-1: ignores nextCursor."""

    async def _list_all(self, method: str, key: str) -> list[Any]:
        page = await self._request(method)
        items = page.get(key, [])
        return items if isinstance(items, list) else []


class EncodesCursors(ReferenceClient):
    """TL-1: percent-encodes a cursor before sending it back, as if it were part of a URL."""

    async def _request(
        self, method: str, params: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        cursor = (params or {}).get("cursor")
        if isinstance(cursor, str):
            params = {**(params or {}), "cursor": urllib.parse.quote(cursor, safe="")}
        return await super()._request(method, params, **kwargs)


class ReusesRequestIds(ReferenceClient):
    """RPC-2: numbers every request 7."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.repeat(7)


class NoProtocolVersionHeader(ReferenceClient):
    """HT-11: never sends MCP-Protocol-Version."""

    async def _initialize(self, revision: str) -> None:
        await super()._initialize(revision)
        if isinstance(self._transport, HttpTransport):
            self._transport.protocol_version = None


class NoDelete(ReferenceClient):
    """HT-10: forgets the session instead of ending it with DELETE."""

    async def close(self) -> None:
        if isinstance(self._transport, HttpTransport):
            self._transport.session_id = None
        await super().close()


class AcceptsAnyVersion(ReferenceClient):
    """LC-3: carries on with a protocol version it does not support."""

    async def _initialize(self, revision: str) -> None:
        try:
            await super()._initialize(revision)
        except ClientError as exc:
            if "chose protocolVersion" not in exc.message:
                raise
            await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})


class KillsTheServer(ReferenceClient):
    """ST-4: kills the stdio server outright instead of closing its stdin first."""

    async def close(self) -> None:
        if isinstance(self._transport, StdioTransport):
            self._transport._process.kill()
        await super().close()


class ConnectsIdly(ReferenceClient):
    """LC-1: reports a connection without sending initialize, or anything at all."""

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        return {"protocolVersion": options.protocol_version, "serverInfo": {}}


class HangsOnUnknownVersion(ReferenceClient):
    """LC-3: neither goes on nor disconnects at a version it does not support: it waits."""

    async def _initialize(self, revision: str) -> None:
        try:
            await super()._initialize(revision)
        except ClientError as exc:
            if "chose protocolVersion" not in exc.message:
                raise
            await anyio.sleep_forever()


def _doubles(value: Any) -> Any:
    """Every integer in a JSON value made a double (1 -> 1.0), as a careless codec does."""
    if isinstance(value, dict):
        return {k: _doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_doubles(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


class IntegersAsDoubles(ReferenceClient):
    """TL-3: surfaces structuredContent with its integers turned into doubles."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        result = await super().call_tool(*args, **kwargs)
        if "structuredContent" in result:
            result["structuredContent"] = _doubles(result["structuredContent"])
        return result


# Mutants whose failure is no report of the client (a crash, a hang): the check they
# concern must not read it as the behaviour it looks for, nor as its violation. They are
# BLOCKED by the operation, which is how a hang or a crash is reported.


class CrashesOnRequiredTask(ReferenceClient):
    """TL-9: dies (RuntimeError) instead of refusing a tool that requires a task."""

    async def call_tool(self, name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if self._task_required(name):
            raise RuntimeError("tasks are not implemented")
        return await super().call_tool(name, *args, **kwargs)


class CrashesWithoutToolsCapability(ReferenceClient):
    """LC-7: dies (RuntimeError) when asked for tools the server did not declare."""

    async def list_tools(self) -> dict[str, Any]:
        if not self._has("tools"):
            raise RuntimeError("no tools here")
        return await super().list_tools()


class HangsOnInvalidStructure(ReferenceClient):
    """TL-3: never returns from a call whose structuredContent breaks its outputSchema."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super().call_tool(*args, **kwargs)
        except ClientError as exc:
            if "structuredContent" not in exc.message:
                raise
            await anyio.sleep_forever()
            raise


# -- the expectations ----------------------------------------------------------------------------


CASES = {
    "no-initialized": Case(
        NoInitializedNotification,
        ("lifecycle-handshake", "2025-11-25", "stdio"),
        {"lifecycle.initialized-notification": "FAIL"},
    ),
    # No sentence orders the client's requests after its initialized notification (the
    # client waits for the initialize response, a SHOULD NOT): a NOTE.
    "lists-before-initialized": Case(
        ListsBeforeInitialized,
        ("lifecycle-handshake", "2025-11-25", "stdio"),
        {"lifecycle.initialized-notification": "NOTE"},
    ),
    "lists-before-initialized-over-http": Case(
        ListsBeforeInitialized,
        ("lifecycle-handshake", "2025-11-25", "http"),
        {"lifecycle.initialized-notification": "NOTE"},
    ),
    # Before 2025-11-25 nothing binds the client here; from then, a SHOULD.
    "drops-is-error": Case(
        DropsIsError, ("tools-call", "2025-06-18", "stdio"), {"tools.is-error-result": "NOTE"}
    ),
    "drops-is-error-2025-11": Case(
        DropsIsError, ("tools-call", "2025-11-25", "http"), {"tools.is-error-result": "WARN"}
    ),
    # No sentence binds the client to surface a JSON-RPC error with its code.
    "errors-as-results": Case(
        ErrorsAsToolResults,
        ("tools-call", "2025-03-26", "stdio"),
        {
            "tools.protocol-error-32601": "NOTE",
            "tools.protocol-error-32602": "NOTE",
            "tools.protocol-error-32603": "NOTE",
        },
    ),
    # Following nextCursor is a SHOULD; sending a cursor back altered breaks a MUST.
    "first-page-only": Case(
        FirstPageOnly, ("tools-pagination", "2024-11-05", "stdio"), {"tools.pagination": "WARN"}
    ),
    "encodes-cursors": Case(
        EncodesCursors, ("tools-pagination", "2025-11-25", "http"), {"tools.pagination": "FAIL"}
    ),
    "reused-ids": Case(
        ReusesRequestIds,
        ("tools-call", "2025-11-25", "stdio"),
        {"jsonrpc.request-ids-unique": "FAIL"},
    ),
    "no-protocol-version-header": Case(
        NoProtocolVersionHeader,
        ("tools-call", "2025-11-25", "http"),
        {"http.protocol-version-header": "FAIL"},
    ),
    "no-delete": Case(
        NoDelete, ("tools-call", "2025-06-18", "http"), {"http.delete-session": "WARN"}
    ),
    "accepts-any-version": Case(
        AcceptsAnyVersion,
        ("lifecycle-unsupported-version", "2025-11-25", "stdio"),
        {"lifecycle.unsupported-version-disconnect": "WARN"},
    ),
    "kills-the-server": Case(
        KillsTheServer,
        ("tools-call", "2025-11-25", "stdio"),
        {"stdio.shutdown-closes-stdin": "WARN"},
    ),
    "connects-idly": Case(
        ConnectsIdly,
        ("lifecycle-handshake", "2025-06-18", "stdio"),
        {
            "lifecycle.initialize-first": "FAIL",
            "lifecycle.initialized-notification": "BLOCKED:lifecycle.initialize-first",
            "lifecycle.no-request-before-initialize-response": "BLOCKED:lifecycle.initialize-first",
        },
    ),
    "hangs-on-unknown-version": Case(
        HangsOnUnknownVersion,
        ("lifecycle-unsupported-version", "2025-06-18", "stdio"),
        {"lifecycle.unsupported-version-disconnect": "WARN"},
    ),
    # The SHOULD is to validate; surfacing a valid structuredContent intact has no clause.
    "integers-as-doubles": Case(
        IntegersAsDoubles,
        ("tools-content", "2025-11-25", "stdio"),
        {"tools.output-schema-validated": "NOTE"},
    ),
}

UNREPORTED = {
    "crashes-on-required-task": Case(
        CrashesOnRequiredTask,
        ("tools-tasks", "2025-11-25", "stdio"),
        {"tools.task-augmentation": "BLOCKED:client.call_tool"},
        crashes=True,
    ),
    "crashes-without-tools-capability": Case(
        CrashesWithoutToolsCapability,
        ("lifecycle-no-tools-capability", "2025-11-25", "stdio"),
        {"lifecycle.negotiated-capabilities-only": "BLOCKED:client.list_tools"},
        crashes=True,
    ),
    "hangs-on-invalid-structure": Case(
        HangsOnInvalidStructure,
        ("tools-content", "2025-06-18", "http"),
        {"tools.output-schema-validated": "BLOCKED:client.call_tool"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    assert_mutant_fails_exactly(name, CASES[name])


@pytest.mark.parametrize("name", sorted(UNREPORTED))
def test_a_hang_or_crash_is_never_a_pass(name: str) -> None:
    assert_mutant_fails_exactly(name, UNREPORTED[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_client_passes_the_same_runs(name: str) -> None:
    assert_reference_passes(CASES[name])


@pytest.mark.parametrize(
    "run",
    [
        ("tools-pagination", "2025-11-25", "stdio"),
        ("features-resources-prompts", "2025-11-25", "http"),
        ("features-resources-prompts-2026", "2026-07-28", "stdio"),
        ("features-resource-templates", "2025-11-25", "stdio"),
        ("http-json-and-sse", "2025-11-25", "http"),
        ("stateless-version-retry", "2026-07-28", "http"),
    ],
    ids="-".join,
)
def test_a_client_that_lists_at_connect_and_again_passes(run: tuple[str, str, str]) -> None:
    # It fetches every list the server declares as it connects, then lists again when its
    # application asks. A real server answers a list every time; a page the script
    # answered only once made the application's own list fail, and its check with it.
    seen = verdicts(ListsAtConnect, run)
    assert seen, "no check was judged"
    assert set(seen.values()) == {"PASS"}, seen


@pytest.mark.parametrize(
    "run",
    [("http-session-expiry", revision, "http") for revision in ("2025-03-26", "2025-11-25")],
    ids="-".join,
)
def test_ids_counted_afresh_in_a_new_session_are_not_reused(run: tuple[str, str, str]) -> None:
    # RPC-2 binds ids within a session: the check compares the ids of one session (from
    # an initialize on), and an id of the session before is not a reuse. The check is
    # judged on tools-call (one session); this run has two, the second after a 404.
    result = run_case(IdsPerSession, run)
    ids = [e["message"]["id"] for e in result.requests()]
    assert len(ids) > len(set(ids)), f"no id came again: {ids}"
    assert outcome(judge(CATALOGUE["jsonrpc.request-ids-unique"], result)) == "PASS"


class TerminatesTheServer(ReferenceClient):
    """ST-4: sends the stdio server SIGTERM instead of closing its stdin first."""

    async def close(self) -> None:
        if isinstance(self._transport, StdioTransport):
            self._transport._process.terminate()
            # Until the server has gone: closing its stdin at once raced the signal, and
            # the server saw stdin close first about one run in ten.
            with anyio.move_on_after(OP_TIMEOUT):
                await self._transport._process.wait()
        await super().close()


def test_a_signal_before_stdin_closes_is_named_in_the_verdict() -> None:
    run = run_case(TerminatesTheServer, ("tools-call", "2025-11-25", "stdio"))
    verdict = judge(CATALOGUE["stdio.shutdown-closes-stdin"], run)
    assert (verdict.status.value, verdict.kind) == ("WARN", "violation")
    assert "the client sent SIGTERM without closing stdin first" in verdict.reason


@pytest.mark.parametrize(
    ("refused", "status"),
    [("unauthorized", "PASS"), ("insufficient-scope", "PASS"), ("header", "FAIL"), (None, "FAIL")],
)
def test_a_request_the_bearer_check_refused_is_sent_again_under_its_id(
    refused: str | None, status: str
) -> None:
    # A 401 or 403 of the bearer check answers before the server reads the message: the
    # request sent again with a token is that request, at any revision. Any other use of
    # the id within the session is a second one.
    from harness.running._scenario import Scenario, ScenarioRun
    from harness.suite.tools import request_ids_unique

    def sent(seq: int, rule: str | None) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "seq": seq, "t": 0.0, "kind": "message", "direction": "client", "channel": "http:1",
            "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        }  # fmt: skip
        if rule is not None:
            entry["refused"] = {"rule": rule, "scripted": True, "status": 401}
        return entry

    run = ScenarioRun(
        Scenario("fake", "fake.json", checks=()),
        "2025-11-25",
        "http",
        transcript={"entries": [sent(1, refused), sent(2, None)]},
    )
    assert request_ids_unique(run).status.name == status
