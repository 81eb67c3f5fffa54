"""Falsifiability of the stateless (2026-07-28) checks, and the dual-era ones: one mutant
per broken rule.

Same structure as tests/harness/suite/test_mutations.py: each mutant breaks one rule of the spec, the
named checks get the named outcome and every other check of the run still passes. Below
the cases, the outcomes that are not a violation: a condition that never arose is N/A,
and a client that hangs where it should report has not reported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import pytest
from _mutation import (
    Case,
    assert_mutant_fails_exactly,
    assert_reference_passes,
    outcomes,
    run_case,
    verdicts,
)
from variant_clients import IdsPerSession

from harness.clients import ClientError, ReferenceClient
from harness.clients._contract import ConnectOptions, Target
from harness.clients.reference._base import ServerError, StreamBrokenError
from harness.clients.reference._http import HttpTransport
from harness.protocol import ErrorObject, ErrorResponse, Request, RequestId, same_json

# -- the mutants -------------------------------------------------------------------------------


class ListsWithoutCapabilities(ReferenceClient):
    """LC-M1: leaves clientCapabilities out of the _meta of tools/list."""

    async def _exchange(
        self, method: str, params: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        if method == "tools/list" and isinstance(params.get("_meta"), dict):
            meta = {
                k: v for k, v in params["_meta"].items() if not k.endswith("/clientCapabilities")
            }
            params = {**params, "_meta": meta}
        return await super()._exchange(method, params, *args, **kwargs)


class NoMcpMethodHeader(ReferenceClient):
    """HM-3: leaves out Mcp-Method on tools/list."""

    async def _exchange(
        self, method: str, params: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        # _exchange(method, params, limit, progress, cancellable, headers)
        if method == "tools/list" and len(args) >= 4 and isinstance(args[3], Mapping):
            headers = {k: v for k, v in args[3].items() if k.lower() != "mcp-method"}
            args = (*args[:3], headers)
        return await super()._exchange(method, params, *args, **kwargs)


class NeverRetriesVersion(ReferenceClient):
    """LC-M2: swallows -32022 and reports an empty list instead of retrying or failing."""

    async def list_tools(self) -> dict[str, Any]:
        try:
            return await self._request_once("tools/list")
        except ClientError as exc:
            if exc.code != -32022:
                raise
            return {"tools": []}

    async def _request_once(self, method: str) -> dict[str, Any]:
        body = {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": self._revision,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        }
        result = await self._exchange(method, body, None, False, True)
        assert isinstance(result, dict)
        return result


class AnswersServerRequests(ReferenceClient):
    """ST-5: answers a server request at 2026-07-28 (with method not found)."""

    def _dispatch(self, message: Any) -> None:
        if self._modern and isinstance(message, Request):
            self._answer_soon(ErrorResponse(message.id, ErrorObject(-32601, "method not found")))
            return
        super()._dispatch(message)


class AbandonsSilently(ReferenceClient):
    """ST-5: drops a cancelled request on 2026 stdio without notifications/cancelled."""

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        if not self._modern:
            await super()._cancel(request_id, reason)


class ListensAt2026(ReferenceClient):
    """HM-1: opens the GET stream over 2026-07-28 HTTP, which has none."""

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        result = await super().connect(target, options)
        if self._modern and isinstance(self._transport, HttpTransport):
            self._transport.listen()
            await anyio.sleep(0.2)
        return result


class GivesUpOnBrokenStream(ReferenceClient):
    """HM-5: reports a broken 2026 response stream instead of re-issuing the request."""

    async def _exchange(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super()._exchange(*args, **kwargs)
        except StreamBrokenError as exc:
            raise ClientError("transport", exc.message) from None


class NeverProbes(ReferenceClient):
    """LC-M3: left to choose, goes straight to initialize without a server/discover probe."""

    async def _connect(self, target: Target, forced: str | None) -> None:
        await super()._connect(target, forced or "2025-11-25")


class FallsBackOnlyOn32601(ReferenceClient):
    """LC-M4: falls back to initialize only when server/discover gets -32601."""

    async def _request(self, method: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super()._request(method, *args, **kwargs)
        except ServerError as exc:
            if method == "server/discover" and exc.code != -32601:
                raise ClientError("other", f"server/discover failed: {exc.message}") from None
            raise


class FallsBackOnModernError(ReferenceClient):
    """LC-M4: takes any error to server/discover, a modern one too, for a legacy server."""

    async def _request(self, method: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super()._request(method, *args, **kwargs)
        except ServerError as exc:
            if method == "server/discover":
                error = ErrorObject(-32601, exc.message)
                raise ServerError(error) from None
            raise


class TidiesRequestState(ReferenceClient):
    """MRTR: trims the whitespace around requestState before echoing it."""

    async def _exchange(self, method: str, params: dict[str, Any], *args: Any) -> Any:
        state = params.get("requestState")
        if isinstance(state, str):
            params = {**params, "requestState": state.strip()}
        return await super()._exchange(method, params, *args)


class AbsentResultTypeInvalid(ReferenceClient):
    """RPC-9: rejects a result without resultType instead of reading it as complete."""

    async def _exchange(self, *args: Any) -> Any:
        result = await super()._exchange(*args)
        if isinstance(result, dict) and "resultType" not in result:
            raise ClientError("protocol", "the result has no resultType")
        return result


class TakesUnknownResultTypes(ReferenceClient):
    """RPC-9: treats a resultType it does not know as complete."""

    async def _exchange(self, *args: Any) -> Any:
        result = await super()._exchange(*args)
        if isinstance(result, dict) and result.get("resultType") not in (
            None,
            "complete",
            "input_required",
        ):
            result = {**result, "resultType": "complete"}
        return result


class PingsAt2026(ReferenceClient):
    """LC-M5: checks the connection with a ping, which 2026-07-28 removed."""

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        result = await super().connect(target, options)
        with contextlib.suppress(ClientError):
            await self._request("ping")
        return result


class CachesByMethod(ReferenceClient):
    """TL-10: keys its cache of cacheable answers by method alone."""

    def __init__(self) -> None:
        super().__init__()
        self._cache: dict[str, dict[str, Any]] = {}

    async def read_resource(self, uri: str) -> dict[str, Any]:
        if "resources/read" not in self._cache:
            self._cache["resources/read"] = await super().read_resource(uri)
        return self._cache["resources/read"]


class NoParamHeaders(ReferenceClient):
    """HM-4: never sends the Mcp-Param-* headers that x-mcp-header asks for."""

    async def _exchange(
        self, method: str, params: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        # _exchange(method, params, limit, progress, cancellable, headers)
        if len(args) >= 4 and isinstance(args[3], Mapping):
            headers = {k: v for k, v in args[3].items() if not k.lower().startswith("mcp-param-")}
            args = (*args[:3], headers)
        return await super()._exchange(method, params, *args, **kwargs)


class Any404IsGone(ReferenceClient):
    """HM-6: takes every HTTP 404 for a missing endpoint, whatever its -32601 body says."""

    async def _exchange(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super()._exchange(*args, **kwargs)
        except ServerError as exc:
            if exc.http_status == 404:
                raise ClientError("transport", "no MCP endpoint here (HTTP 404)") from None
            raise


class HidesMissingCapability(ReferenceClient):
    """LC-M6: turns -32021 into an empty tool result instead of reporting it."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super().call_tool(*args, **kwargs)
        except ClientError as exc:
            if exc.code != -32021:
                raise
            return {"content": []}


class _KeepsStreamsOpen(HttpTransport):
    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        # The caller giving up does not reach the HTTP exchange under way: the response
        # is opened all the same (bounded, so a response that never starts still ends).
        with anyio.move_on_after(1.0, shield=True):
            await super().send(message, headers, written)

    def release(self, request_id: RequestId) -> None:
        pass  # the response stream of a request the caller gave up on stays open


class AbandonsWithoutClosing(ReferenceClient):
    """HM-5, CANCEL: at 2026-07-28 over HTTP, gives up on a request but leaves its stream open."""

    _http_transport = _KeepsStreamsOpen


# -- the expectations ----------------------------------------------------------------------------


CASES = {
    "lists-without-capabilities": Case(
        ListsWithoutCapabilities,
        ("tools-call", "2026-07-28", "stdio"),
        {"stateless.meta-on-every-request": "FAIL", "jsonrpc.messages-valid": "FAIL"},
    ),
    "no-mcp-method-header": Case(
        NoMcpMethodHeader,
        ("tools-call", "2026-07-28", "http"),
        # The mock refuses the tools/list without Mcp-Method (-32020): one root cause,
        # and the calls that follow it, answered, lie off its path.
        {"stateless.standard-headers": "FAIL"},
    ),
    "never-retries-version": Case(
        NeverRetriesVersion,
        ("stateless-version-retry", "2026-07-28", "stdio"),
        {"stateless.retry-after-unsupported-version": "WARN"},
    ),
    "answers-server-requests": Case(
        AnswersServerRequests,
        ("stateless-server-request-and-cancel", "2026-07-28", "stdio"),
        {"stateless.no-responses": "FAIL"},
    ),
    "abandons-silently": Case(
        AbandonsSilently,
        ("stateless-server-request-and-cancel", "2026-07-28", "stdio"),
        # never cancelled at all: "A client SHOULD send a cancellation notification"
        {"stateless.stdio-cancel-notification": "WARN"},
    ),
    "listens-at-2026": Case(
        ListensAt2026,
        ("tools-call", "2026-07-28", "http"),
        # a GET without a JSON-RPC message: no sentence forbids it to the client
        {"stateless.http-post-only": "NOTE"},
    ),
    "gives-up-on-broken-stream": Case(
        GivesUpOnBrokenStream,
        ("stateless-broken-stream", "2026-07-28", "http"),
        # the duty to re-issue is only in the changelog
        {"stateless.reissue-after-broken-stream": "NOTE"},
    ),
    "never-probes": Case(
        NeverProbes,
        ("stdio-era-other-error", "2025-11-25", "stdio"),
        # no probe, nothing to fall back from: the fallback rule was not exercised
        # (the probe's SHOULD is on the 2026-07-28 stdio page, not at 2025-11-25)
        {"stateless.era-probe": "NOTE", "stateless.era-fallback": "N/A"},
    ),
    "falls-back-only-on-32601": Case(
        FallsBackOnlyOn32601,
        ("stdio-era-other-error", "2025-11-25", "stdio"),
        {"stateless.era-fallback": "FAIL"},
    ),
    "falls-back-on-modern-error": Case(
        FallsBackOnModernError,
        ("stateless-era-modern-error", "2026-07-28", "stdio"),
        # on stdio "Do not fall back to initialize" carries no keyword
        {"stateless.era-stays-modern": "NOTE"},
    ),
    "tidies-request-state": Case(
        TidiesRequestState,
        ("stateless-mrtr", "2026-07-28", "stdio"),
        {"stateless.mrtr-retry": "FAIL"},
    ),
    "absent-result-type-invalid": Case(
        AbsentResultTypeInvalid,
        ("stateless-mrtr", "2026-07-28", "stdio"),
        {"stateless.absent-result-type-complete": "FAIL"},
    ),
    "abandons-without-closing": Case(
        AbandonsWithoutClosing,
        ("stateless-http-cancel", "2026-07-28", "http"),
        {"stateless.http-cancel-closes-stream": "WARN"},
    ),
    "takes-unknown-result-types": Case(
        TakesUnknownResultTypes,
        ("stateless-mrtr", "2026-07-28", "http"),
        {"stateless.unknown-result-type": "FAIL"},
    ),
    "pings-at-2026": Case(
        PingsAt2026,
        ("tools-call", "2026-07-28", "stdio"),
        {
            "stateless.no-removed-methods": "NOTE",  # removed only in the changelog
            "jsonrpc.messages-valid": "FAIL",
        },
    ),
    "caches-by-method": Case(
        CachesByMethod,
        ("stateless-cache-keys", "2026-07-28", "stdio"),
        {"stateless.cache-keyed-by-params": "FAIL"},
    ),
    "no-param-headers": Case(
        NoParamHeaders,
        ("stateless-param-headers", "2026-07-28", "http"),
        {"stateless.x-mcp-header": "FAIL"},
    ),
    "any-404-is-gone": Case(
        Any404IsGone,
        ("tools-call", "2026-07-28", "http"),
        # no client sentence: the 404 MUST binds the server (nor one for surfacing -32601
        # as a protocol error: tools.protocol-error-32601 is a NOTE too)
        {"stateless.404-method-not-found": "NOTE", "tools.protocol-error-32601": "NOTE"},
    ),
    "hides-missing-capability": Case(
        HidesMissingCapability,
        ("stateless-missing-capability", "2026-07-28", "stdio"),
        # no client sentence: the -32021 MUST binds the server
        {"stateless.missing-capability-surfaced": "NOTE"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    assert_mutant_fails_exactly(name, CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_client_passes_the_same_runs(name: str) -> None:
    assert_reference_passes(CASES[name])


# -- outcomes that are not a violation -----------------------------------------------------------


class ModernWithoutProbe(ReferenceClient):
    """A modern-only client: goes stateless without the optional server/discover probe."""

    async def _discover(self, *, probing: bool) -> bool:
        self._set_modern(True)
        self._revision = "2026-07-28"
        return True


class HangsOnUnknownResultType(ReferenceClient):
    """RPC-9, as a hang: never returns a result whose resultType it does not know."""

    async def _exchange(self, *args: Any) -> Any:
        result = await super()._exchange(*args)
        if isinstance(result, dict) and result.get("resultType") == "pending_review":
            await anyio.sleep_forever()
        return result


def test_no_probe_is_not_applicable_to_the_era_checks() -> None:
    # basic/versioning: a modern client MAY call server/discover; without the probe there
    # is no modern error to stay modern after.
    seen = verdicts(ModernWithoutProbe, ("stateless-era-modern-error", "2026-07-28", "stdio"))
    assert seen == {"stateless.era-stays-modern": "N/A"}


def test_a_hang_is_not_a_report_of_an_unknown_result_type() -> None:
    seen = verdicts(HangsOnUnknownResultType, ("stateless-mrtr", "2026-07-28", "stdio"))
    assert seen["stateless.unknown-result-type"] == "BLOCKED:client.call_tool"
    assert seen["stateless.mrtr-retry"] == "PASS"


def test_a_probe_id_used_again_by_initialize_is_still_a_refused_probe() -> None:
    # The probe (id 1) is refused with an empty 400, no JSON-RPC answer; the client's
    # initialize begins a session and counts from 1 again, as it may. The answer to that
    # initialize was taken for the probe's, and the refusal never seen (N/A).
    run = run_case(IdsPerSession, ("http-era-empty-400", "2025-11-25", "http"))
    probe, initialize = run.requests("server/discover")[0], run.requests("initialize")[0]
    assert same_json(probe["message"]["id"], initialize["message"]["id"])
    assert outcomes(run)["stateless.era-fallback"] == "PASS"
