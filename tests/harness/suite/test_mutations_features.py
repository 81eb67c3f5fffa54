"""Falsifiability of the utility, lifecycle-remainder, tool and client-feature checks.

Same structure as tests/harness/suite/test_mutations.py: each mutant breaks one rule; its run gets the
named verdicts and every other check of the run still passes.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from _mutation import Case, assert_mutant_fails_exactly, outcomes, run_case, verdicts
from variant_clients import MetaInAnswers, RefetchesOnChange

from harness.clients import ClientError, ReferenceClient
from harness.clients.reference._http import HttpTransport
from harness.protocol import ErrorResponse, Notification, Request, RequestId, Response
from harness.running._scenario import execute
from harness.suite import scenario
from harness.suite._evidence import response_to

# -- the mutants -------------------------------------------------------------------------------


class PingAnswersPong(ReferenceClient):
    """PING: answers a ping with a non-empty result."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        if method == "ping":
            return {"pong": True}
        return super()._result_for(method, params)


class HttpsRoots(ReferenceClient):
    """ROOTS: reports roots with https:// URIs."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        result = super()._result_for(method, params)
        if method == "roots/list":
            return {"roots": [{"uri": "https://example.com/project", "name": "project"}]}
        return result


class ToolUseUndeclared(ReferenceClient):
    """SAMPLING: answers with tool use although it declared no sampling.tools."""

    def _capabilities(self, revision: str) -> dict[str, Any]:
        capabilities = super()._capabilities(revision)
        if "sampling" in capabilities:
            capabilities["sampling"] = {}
        return capabilities

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        result = super()._result_for(method, params)
        if method == "sampling/createMessage" and params.get("tools"):
            tool = params["tools"][0]["name"]
            use = {"type": "tool_use", "id": "use-1", "name": tool, "input": {"city": "Paris"}}
            return {**result, "content": [use], "stopReason": "toolUse"}
        return result


class UncheckedToolHistory(ReferenceClient):
    """SAMPLING: answers sampling requests whatever their tool history."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        if method == "sampling/createMessage":
            return dict(self._options.handlers.sampling or {})
        return super()._result_for(method, params)


class SamplingWithoutModel(ReferenceClient):
    """SAMPLING: a CreateMessageResult without its model."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        result = super()._result_for(method, params)
        if method == "sampling/createMessage":
            result.pop("model", None)
        return result


class StringErrorCodes(ReferenceClient):
    """RPC-4: error answers carry their code as a string."""

    async def _reply(self, reply: Response | ErrorResponse) -> None:
        if not isinstance(reply, ErrorResponse):
            await super()._reply(reply)
            return
        message = reply.to_json()
        message["error"] = {**message["error"], "code": str(message["error"]["code"])}
        try:
            await self._send(message)
        finally:
            self._replied_one()


class IdsThroughDoubles(ReferenceClient):
    """RPC-1: keeps request ids as doubles, as JavaScript's JSON.parse does: 2^53 + 1
    comes back as 2^53."""

    async def _reply(self, reply: Response | ErrorResponse) -> None:
        if isinstance(reply, Response) and isinstance(reply.id, int):
            reply = Response(int(float(reply.id)), reply.result)
        await super()._reply(reply)


class DeclaresNothing(ReferenceClient):
    """LC-6: answers roots and sampling requests without having declared either."""

    def _capabilities(self, revision: str) -> dict[str, Any]:
        return {}

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        handlers = self._options.handlers
        if method == "roots/list" and handlers.roots is not None:
            return {"roots": [dict(root) for root in handlers.roots]}
        return super()._result_for(method, params)


class SilentOnUndeclared(ReferenceClient):
    """LC-6: drops server requests for features it did not declare."""

    def _answer_soon(self, reply: Response | ErrorResponse) -> None:
        if isinstance(reply, ErrorResponse):
            return
        super()._answer_soon(reply)


class EmptyRootsWhenUndeclared(ReferenceClient):
    """LC-6: answers roots/list with an empty result although it declared no roots."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        if method == "roots/list":
            return {"roots": []}
        return super()._result_for(method, params)


class ImagesDropped(ReferenceClient):
    """TL-2: drops image content from tool results."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        result = await super().call_tool(*args, **kwargs)
        content = result.get("content")
        if isinstance(content, list):
            result["content"] = [c for c in content if c.get("type") != "image"]
        return result


class EverythingIsError(ReferenceClient):
    """TL-2: surfaces every tool result with isError true."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**await super().call_tool(*args, **kwargs), "isError": True}


class Latin1Mojibake(ReferenceClient):
    """RPC-5: encodes string arguments as UTF-8 but labels the bytes Latin-1."""

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        if arguments:
            arguments = {
                k: v.encode("utf-8").decode("latin-1") if isinstance(v, str) else v
                for k, v in arguments.items()
            }
        return await super().call_tool(name, arguments, **kwargs)


class RejectsReservedMeta(ReferenceClient):
    """RPC-8: assumes it understands every io.modelcontextprotocol/ key, and chokes."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        result = await super().call_tool(*args, **kwargs)
        meta = result.get("_meta")
        if isinstance(meta, dict) and any("modelcontextprotocol" in key for key in meta):
            raise ClientError("protocol", "unknown reserved _meta key")
        return result


class StrictToolNames(ReferenceClient):
    """TL-7: hides tools whose names are outside [A-Za-z0-9_.-]."""

    async def list_tools(self) -> dict[str, Any]:
        result = await super().list_tools()
        result["tools"] = [
            t for t in result["tools"] if re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", t["name"])
        ]
        return result


class NoOutputValidation(ReferenceClient):
    """TL-3: never validates structuredContent."""

    def _check_structured(self, name: str, result: dict[str, Any]) -> None:
        return None


class NoCancelOnTimeout(ReferenceClient):
    """LC-9: gives up on a timed-out request without telling the server."""

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        if reason != "timed out":
            await super()._cancel(request_id, reason)


class NoCancelOnAbandon(ReferenceClient):
    """CANCEL: abandons a request without notifications/cancelled."""

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        if reason == "timed out":
            await super()._cancel(request_id, reason)


class CancelsTheWrongId(ReferenceClient):
    """CANCEL: names a request id it never used when the caller abandons a call."""

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        if reason != "timed out" and isinstance(request_id, int):
            request_id += 1000
        await super()._cancel(request_id, reason)


class CancelsAnAnsweredRequest(ReferenceClient):
    """CANCEL: once its tools/list is answered, cancels it anyway (a clean-up that names
    every request it sent, done or not)."""

    async def _exchange(self, method: str, *args: Any, **kwargs: Any) -> Any:
        sent: list[RequestId] = []
        told = kwargs.get("on_id")

        def on_id(request_id: RequestId) -> None:
            sent.append(request_id)
            if told is not None:
                told(request_id)

        result = await super()._exchange(method, *args, **{**kwargs, "on_id": on_id})
        if method == "tools/list":
            await self._cancel(sent[-1], "cleaning up")
        return result


class BreaksOnLateResponse(ReferenceClient):
    """CANCEL: a response to an abandoned request breaks the session."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, (Response, ErrorResponse)) and message.id not in self._pending:
            self._fail(None, ClientError("protocol", f"response to unknown id {message.id!r}"))
            return
        super()._dispatch(message)


class BreaksOnUnknownCancel(ReferenceClient):
    """CANCEL: a cancellation of an unknown request breaks the session."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            self._fail(None, ClientError("protocol", "cancellation of an unknown request"))
            return
        super()._dispatch(message)


class OneProgressToken(ReferenceClient):
    """PROG: every request that asks for progress uses the token "progress"."""

    async def _request(
        self, method: str, params: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        if kwargs.pop("progress", False):
            params = {**(params or {}), "_meta": {"progressToken": "progress"}}
        return await super()._request(method, params, **kwargs)


class RejectsFractionalProgress(ReferenceClient):
    """PROG: fails the request when progress is not an integer."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        params = message.params if isinstance(message, Notification) else None
        if (
            isinstance(message, Notification)
            and message.method == "notifications/progress"
            and isinstance(params, dict)
            and not isinstance(params.get("progress"), int)
        ):
            self._fail(params.get("progressToken"), ClientError("protocol", "bad progress"))
            return
        super()._dispatch(message)


class AlwaysSetsLevel(ReferenceClient):
    """LOG: sends logging/setLevel whatever the server declared."""

    async def _initialize(self, revision: str) -> None:
        await super()._initialize(revision)
        with contextlib.suppress(ClientError):
            await self._request("logging/setLevel", {"level": "info"})


class BreaksOnLogMessages(ReferenceClient):
    """LOG: a log message after the handshake breaks the session."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if (
            isinstance(message, Notification)
            and message.method == "notifications/message"
            and self._server_capabilities is not None
        ):
            self._fail(None, ClientError("protocol", "unexpected log message"))
            return
        super()._dispatch(message)


class FirstResourcePageOnly(ReferenceClient):
    """RES: ignores nextCursor of resources/list."""

    async def list_resources(self) -> dict[str, Any]:
        page = await self._request("resources/list")
        return {"resources": page.get("resources", [])}


class FirstPromptPageOnly(ReferenceClient):
    """PROMPTS: ignores nextCursor of prompts/list."""

    async def list_prompts(self) -> dict[str, Any]:
        page = await self._request("prompts/list")
        return {"prompts": page.get("prompts", [])}


class MissingResourceIsEmpty(ReferenceClient):
    """RES: turns resource-not-found into empty contents."""

    async def read_resource(self, uri: str) -> dict[str, Any]:
        try:
            return await super().read_resource(uri)
        except ClientError as exc:
            if exc.code not in (-32002, -32602):
                raise
            return {"contents": []}


class LegacyNotFoundUnknown(ReferenceClient):
    """RES: at 2026-07-28 treats the pre-2026 code -32002 as an unknown failure."""

    async def read_resource(self, uri: str) -> dict[str, Any]:
        try:
            return await super().read_resource(uri)
        except ClientError as exc:
            if exc.code != -32002 or self._revision != "2026-07-28":
                raise
            raise ClientError("other", f"unexpected error code {exc.code}") from None


class PromptErrorsWithoutCode(ReferenceClient):
    """PROMPTS, RPC-7: surfaces a JSON-RPC error of prompts/get without its code."""

    async def get_prompt(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super().get_prompt(*args, **kwargs)
        except ClientError as exc:
            raise ClientError("other", exc.message) from None


class ElicitWithoutAction(ReferenceClient):
    """ELICIT: an ElicitResult without its action."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        result = super()._result_for(method, params)
        if method == "elicitation/create":
            result.pop("action", None)
        return result


class AnyElicitationMode(ReferenceClient):
    """ELICIT: answers a URL-mode elicitation it never declared like a form."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        if method == "elicitation/create" and isinstance(params, dict):
            params = {k: v for k, v in params.items() if k != "mode"}
        return super()._result_for(method, params)


class BreaksOnElicitationComplete(ReferenceClient):
    """ELICIT: an elicitation/complete for an unknown id breaks the session."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, Notification) and message.method.startswith(
            "notifications/elicitation"
        ):
            self._fail(None, ClientError("protocol", "unknown elicitation"))
            return
        super()._dispatch(message)


class OffersTheOldest(ReferenceClient):
    """LC-2: left to choose, offers its oldest revision."""

    async def _initialize(self, revision: str) -> None:
        if self._options.protocol_version is None and revision == "2025-11-25":
            revision = "2024-11-05"
        await super()._initialize(revision)


class OffersAnUnknownVersion(ReferenceClient):
    """LC-2: left to choose, offers a version it does not support."""

    async def _initialize(self, revision: str) -> None:
        if self._options.protocol_version is None:
            revision = "2099-01-01"
        await super()._initialize(revision)


class CachesToolList(ReferenceClient):
    """TL-5: lists the tools once and serves that list ever after, list_changed or not."""

    _cached: dict[str, Any] | None = None

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, Notification) and message.method.endswith("/list_changed"):
            return
        super()._dispatch(message)

    async def list_tools(self) -> dict[str, Any]:
        if self._cached is None:
            self._cached = await super().list_tools()
        return self._cached


class IgnoresBatches(ReferenceClient):
    """RPC-6b: drops a JSON-RPC batch from the server, even at 2025-03-26."""

    def _deliver(self, data: bytes | str) -> None:
        text = data.decode() if isinstance(data, bytes) else data
        if text.lstrip().startswith("["):
            return
        super()._deliver(data)


class NeverTasks(ReferenceClient):
    """TL-9: calls a tool that requires a task like any other."""

    def _task_required(self, name: str) -> bool:
        return False


class AlwaysTasks(ReferenceClient):
    """TL-9: task-augments every tools/call, whatever the server and the tool declared."""

    async def _request(
        self, method: str, params: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        if method == "tools/call" and params is not None and "task" not in params:
            params = {**params, "task": {}}
        return await super()._request(method, params, **kwargs)


class PingsFirst(ReferenceClient):
    """LC-1: sends a ping before its initialize request."""

    async def _initialize(self, revision: str) -> None:
        await self._send({"jsonrpc": "2.0", "id": "early-ping", "method": "ping"})
        await super()._initialize(revision)


class ListsDuringInitialize(ReferenceClient):
    """LC-5: sends tools/list while initialize is still unanswered."""

    async def _initialize(self, revision: str) -> None:
        self._tasks.start_soon(self._list_early)
        await super()._initialize(revision)

    async def _list_early(self) -> None:
        await anyio.sleep(0.1)
        await self._send({"jsonrpc": "2.0", "id": "early-list", "method": "tools/list"})


class CancelsInitialize(ReferenceClient):
    """LC-8: cancels its slow initialize request (and waits for the answer anyway)."""

    async def _initialize(self, revision: str) -> None:
        self._tasks.start_soon(self._cancel_initialize)
        await super()._initialize(revision)

    async def _cancel_initialize(self) -> None:
        await anyio.sleep(0.1)
        await self._send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        )


class IgnoresServerCapabilities(ReferenceClient):
    """LC-7: lists tools whatever the server declared."""

    def _has(self, capability: str) -> bool:
        return True


class NeverAnswersPings(ReferenceClient):
    """PING: never answers a ping from the server."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, Request) and message.method == "ping" and self._drops_ping():
            return
        super()._dispatch(message)

    def _drops_ping(self) -> bool:
        return True


class NoPingsInSession(NeverAnswersPings):
    """PING: answers a ping during the handshake, never one once it is over."""

    def _drops_ping(self) -> bool:
        return self._server_capabilities is not None


class IgnoresItsTimeout(ReferenceClient):
    """LC-9: ignores the caller's timeout= and waits for an answer for ever."""

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the McpClient contract)
        progress: bool = False,
    ) -> dict[str, Any]:
        return await super().call_tool(name, arguments, timeout=3600, progress=progress)


class TimeoutReportedAsOther(ReferenceClient):
    """LC-9: reports its own time-out as some other failure."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super().call_tool(*args, **kwargs)
        except ClientError as exc:
            if exc.kind != "timeout":
                raise
            raise ClientError("other", exc.message) from None


class CancelUndeclared(ReferenceClient):
    """Declares no cancellation support (and cancels all the same): the cancellation
    checks are SKIPs, from the declaration."""

    @property
    def supports(self) -> frozenset[str]:
        return super().supports - {"cancel"}


class NoGetStream(ReferenceClient):
    """HT-6 (a MAY): never opens the GET stream, so messages the server queues for it
    are never delivered."""

    async def _initialize(self, revision: str) -> None:
        transport = self._transport
        if isinstance(transport, HttpTransport):
            transport.listen = lambda: None  # type: ignore[method-assign]
        await super()._initialize(revision)


# -- the expectations ----------------------------------------------------------------------------

CASES = {
    "ping-answers-pong": Case(
        PingAnswersPong,
        ("features-server-requests", "2025-11-25", "stdio"),
        {
            "features.ping-answered": "FAIL",
            "features.ping-before-initialized": "FAIL",
            "features.set-level-only-if-declared": "N/A",
        },
    ),
    "https-roots": Case(
        HttpsRoots,
        ("features-server-requests", "2025-06-18", "http"),
        {
            "features.roots-answer": "FAIL",
            "features.set-level-only-if-declared": "N/A",
        },
    ),
    "sampling-without-model": Case(
        SamplingWithoutModel,
        ("features-server-requests", "2024-11-05", "stdio"),
        {
            "features.sampling-answer": "FAIL",
            "features.set-level-only-if-declared": "N/A",
        },
    ),
    "tool-use-undeclared": Case(
        ToolUseUndeclared,
        ("features-sampling-tools", "2025-11-25", "stdio"),
        {
            "features.sampling-tools-declared": "FAIL",
            "features.sampling-tool-history-checked": "SKIP",
        },
    ),
    "unchecked-tool-history": Case(
        UncheckedToolHistory,
        ("features-sampling-tools", "2025-11-25", "http"),
        {"features.sampling-tool-history-checked": "WARN"},
    ),
    "string-error-codes": Case(
        StringErrorCodes,
        ("lifecycle-undeclared-features", "2025-03-26", "http"),
        {
            "jsonrpc.answers-well-formed": "FAIL",
            # A string code makes the answer no JSON-RPC message: the root cause.
            "lifecycle.undeclared-feature-refused": "BLOCKED:jsonrpc.messages-valid",
        },
    ),
    "ids-through-doubles": Case(
        IdsThroughDoubles,
        ("features-server-ids", "2025-06-18", "http"),
        {"jsonrpc.answer-ids-exact": "FAIL"},
    ),
    "declares-nothing": Case(
        DeclaresNothing,
        ("features-server-requests", "2025-11-25", "stdio"),
        {
            "lifecycle.declares-client-features": "FAIL",
            "features.set-level-only-if-declared": "N/A",
            # The mock sends no roots/list or sampling request to a client that declared
            # neither (a conformant server must not), so there is no answer to judge.
            "features.roots-answer": "N/A",
            "features.sampling-answer": "N/A",
        },
    ),
    "silent-on-undeclared": Case(
        SilentOnUndeclared,
        ("lifecycle-undeclared-features", "2025-11-25", "stdio"),
        {
            "lifecycle.undeclared-feature-refused": "FAIL",
            # No answer at all: nothing to judge the form of. The call hung for want of
            # those answers, and the check of that is the root.
            "jsonrpc.answers-well-formed": "BLOCKED:lifecycle.undeclared-feature-refused",
        },
    ),
    "images-dropped": Case(
        ImagesDropped, ("tools-content", "2025-11-25", "http"), {"tools.content-types": "NOTE"}
    ),
    "everything-is-error": Case(
        EverythingIsError, ("tools-call", "2025-06-18", "stdio"), {"tools.call-result": "NOTE"}
    ),
    "latin1-mojibake": Case(
        Latin1Mojibake, ("tools-content-2025-03", "2025-03-26", "stdio"), {"jsonrpc.utf-8": "FAIL"}
    ),
    "rejects-reserved-meta": Case(
        RejectsReservedMeta,
        ("tools-content", "2025-06-18", "stdio"),
        {"tools.reserved-meta-tolerated": "FAIL"},
    ),
    "strict-tool-names": Case(
        StrictToolNames, ("tools-content", "2026-07-28", "http"), {"tools.unusual-names": "NOTE"}
    ),
    "no-output-validation": Case(
        NoOutputValidation,
        ("tools-content", "2025-11-25", "stdio"),
        {"tools.output-schema-validated": "WARN"},
    ),
    "no-cancel-on-timeout": Case(
        NoCancelOnTimeout,
        ("features-cancellation", "2025-11-25", "stdio"),
        {"features.timeout-cancels": "WARN"},
    ),
    "no-cancel-on-abandon": Case(
        NoCancelOnAbandon,
        ("features-cancellation", "2025-06-18", "http"),
        {
            "features.cancel-notifies": "WARN",
            # No cancellation, so no race: not judged. The blocking root is the scenario's
            # deliberate time-out (harness/judging/_preconditions.py `failed_operation` takes the
            # first failed operation, even an expected one).
            "features.cancel-races-survived": "N/A",
        },
    ),
    "cancels-the-wrong-id": Case(
        CancelsTheWrongId,
        ("features-cancellation", "2024-11-05", "stdio"),
        {
            # Before 2026-07-28 only Streamable HTTP asks a client to cancel: a NOTE here.
            "features.cancel-notifies": "NOTE",
            "features.cancel-only-in-flight": "FAIL",
            "features.cancel-races-survived": "N/A",  # no cancellation, so no race
        },
    ),
    "cancels-an-answered-request": Case(
        CancelsAnAnsweredRequest,
        ("features-cancellation", "2025-06-18", "stdio"),
        {"features.cancel-only-in-flight": "FAIL"},
    ),
    "breaks-on-late-response": Case(
        BreaksOnLateResponse,
        ("features-cancellation", "2025-03-26", "stdio"),
        {"features.cancel-races-survived": "FAIL"},
    ),
    "breaks-on-late-response-2026": Case(
        BreaksOnLateResponse,
        ("features-cancellation-2026", "2026-07-28", "stdio"),
        {"features.cancel-races-survived": "FAIL"},
    ),
    "breaks-on-decoy-response": Case(
        BreaksOnLateResponse,
        ("robustness", "2026-07-28", "http"),
        {"jsonrpc.other-type-response-survived": "NOTE"},
    ),
    "no-cancel-on-timeout-2026": Case(
        NoCancelOnTimeout,
        ("features-cancellation-2026", "2026-07-28", "stdio"),
        {"features.timeout-cancels": "WARN"},
    ),
    "rejects-fractional-progress-2026": Case(
        RejectsFractionalProgress,
        ("features-progress", "2026-07-28", "http"),
        {"features.progress-accepted": "NOTE"},  # no sentence binds the client
    ),
    "breaks-on-log-messages-2026": Case(
        BreaksOnLogMessages,
        ("features-logging-2026", "2026-07-28", "stdio"),
        {"features.log-messages-accepted": "NOTE"},  # no sentence binds the client
    ),
    "breaks-on-unknown-cancel": Case(
        BreaksOnUnknownCancel,
        ("features-cancellation", "2025-11-25", "http"),
        {"features.cancel-races-survived": "FAIL"},
    ),
    "one-progress-token": Case(
        OneProgressToken,
        ("features-progress", "2025-11-25", "stdio"),
        {
            "features.progress-tokens": "FAIL",
            "features.set-level-only-if-declared": "N/A",
        },
    ),
    "rejects-fractional-progress": Case(
        RejectsFractionalProgress,
        ("features-progress", "2025-03-26", "http"),
        {
            "features.progress-accepted": "NOTE",  # no sentence binds the client
            "features.set-level-only-if-declared": "N/A",
        },
    ),
    "always-sets-level": Case(
        AlwaysSetsLevel,
        ("features-progress", "2025-06-18", "stdio"),
        {"features.set-level-only-if-declared": "FAIL"},
    ),
    "breaks-on-log-messages": Case(
        BreaksOnLogMessages,
        ("features-logging", "2024-11-05", "sse-legacy"),
        {"features.log-messages-accepted": "NOTE"},
    ),
    "first-resource-page-only": Case(
        FirstResourcePageOnly,
        ("features-resources-prompts", "2025-11-25", "stdio"),
        # Clients SHOULD support paginated flows (only a cursor sent back altered is a MUST).
        {"features.resources-listed-and-read": "WARN"},
    ),
    "first-prompt-page-only": Case(
        FirstPromptPageOnly,
        ("features-resources-prompts-2026", "2026-07-28", "http"),
        {"features.prompts-listed-and-got": "WARN"},
    ),
    "missing-resource-is-empty": Case(
        MissingResourceIsEmpty,
        ("features-resources-prompts", "2024-11-05", "sse-legacy"),
        {"features.resource-not-found": "NOTE"},  # the error-handling clauses bind the server
    ),
    "legacy-not-found-unknown": Case(
        LegacyNotFoundUnknown,
        ("features-resources-prompts-2026", "2026-07-28", "stdio"),
        {"features.legacy-not-found-accepted": "WARN"},
    ),
    "prompt-errors-without-code": Case(
        PromptErrorsWithoutCode,
        ("features-resources-prompts", "2025-06-18", "http"),
        {"features.prompt-not-found": "NOTE"},  # the error-handling clause binds the server
    ),
    "elicit-without-action": Case(
        ElicitWithoutAction,
        ("features-elicitation", "2025-06-18", "stdio"),
        {"features.elicitation-answer": "FAIL"},
    ),
    "any-elicitation-mode": Case(
        AnyElicitationMode,
        ("features-elicitation-modes", "2025-11-25", "stdio"),
        {"features.elicitation-undeclared-mode": "FAIL"},
    ),
    "breaks-on-elicitation-complete": Case(
        BreaksOnElicitationComplete,
        ("features-elicitation-modes", "2025-11-25", "http"),
        {"features.elicitation-complete-unknown-ignored": "FAIL"},
    ),
    "offers-the-oldest": Case(
        OffersTheOldest,
        ("lifecycle-version-choice", "2025-11-25", "stdio"),
        {"lifecycle.offers-latest-version": "WARN"},
    ),
    "offers-an-unknown-version": Case(
        OffersAnUnknownVersion,
        ("lifecycle-version-choice", "2025-06-18", "http"),
        {"lifecycle.offers-supported-version": "FAIL", "lifecycle.offers-latest-version": "WARN"},
    ),
    "caches-tool-list": Case(
        CachesToolList,
        ("tools-list-changed", "2025-03-26", "http"),
        {"tools.relist-after-list-changed": "NOTE"},
    ),
    "ignores-batches": Case(
        IgnoresBatches,
        ("features-batch", "2025-03-26", "stdio"),
        {"features.batch-accepted": "FAIL"},
    ),
    "never-tasks": Case(
        NeverTasks, ("tools-tasks", "2025-11-25", "stdio"), {"tools.task-augmentation": "FAIL"}
    ),
    "always-tasks": Case(
        AlwaysTasks,
        ("tools-tasks-undeclared", "2025-11-25", "http"),
        {"tools.no-task-without-capability": "FAIL"},
    ),
    "always-tasks-declared": Case(
        AlwaysTasks, ("tools-tasks", "2025-11-25", "http"), {"tools.task-augmentation": "FAIL"}
    ),
    "pings-first": Case(
        PingsFirst,
        ("lifecycle-handshake", "2025-06-18", "stdio"),
        {"lifecycle.initialize-first": "FAIL"},
    ),
    "lists-during-initialize": Case(
        ListsDuringInitialize,
        ("lifecycle-slow-initialize", "2025-11-25", "stdio"),
        {"lifecycle.no-request-before-initialize-response": "WARN"},
    ),
    "cancels-initialize": Case(
        CancelsInitialize,
        ("lifecycle-slow-initialize", "2025-03-26", "stdio"),
        {"lifecycle.initialize-not-cancelled": "FAIL"},
    ),
    "ignores-server-capabilities": Case(
        IgnoresServerCapabilities,
        ("lifecycle-no-tools-capability", "2025-11-25", "stdio"),
        {"lifecycle.negotiated-capabilities-only": "FAIL"},
    ),
    "ignores-server-capabilities-early": Case(
        IgnoresServerCapabilities,
        ("lifecycle-no-tools-capability", "2024-11-05", "stdio"),
        {"lifecycle.negotiated-capabilities-only-early": "WARN"},
    ),
    "empty-roots-when-undeclared": Case(
        EmptyRootsWhenUndeclared,
        ("lifecycle-undeclared-features", "2025-06-18", "http"),
        {"lifecycle.undeclared-feature-refused": "WARN"},  # its roots-result branch
    ),
    "never-answers-pings": Case(
        NeverAnswersPings,
        ("features-server-requests", "2025-06-18", "stdio"),
        {
            # The mock answers initialize only once its ping is answered: connect hangs,
            # and everything after the handshake is blocked by the ping's check, which
            # explains the hang. What the initialize declared was judged before it.
            "features.ping-before-initialized": "FAIL",
            "features.ping-answered": "BLOCKED:features.ping-before-initialized",
            "features.roots-answer": "BLOCKED:features.ping-before-initialized",
            "features.sampling-answer": "BLOCKED:features.ping-before-initialized",
            "jsonrpc.answers-well-formed": "BLOCKED:features.ping-before-initialized",
            "features.set-level-only-if-declared": "BLOCKED:features.ping-before-initialized",
        },
    ),
    "no-pings-in-session": Case(
        NoPingsInSession,
        ("features-server-requests", "2025-11-25", "http"),
        {
            "features.ping-answered": "FAIL",
            # The call hung for want of the ping's answer: the ping's check is the root.
            "features.set-level-only-if-declared": "BLOCKED:features.ping-answered",
        },
    ),
    "ignores-its-timeout": Case(
        IgnoresItsTimeout,
        ("features-cancellation", "2025-11-25", "stdio"),
        {"features.timeout-cancels": "WARN"},
    ),
    "timeout-reported-as-other": Case(
        TimeoutReportedAsOther,
        ("features-cancellation-2026", "2026-07-28", "stdio"),
        # How a time-out is reported to the caller is the client's API: no sentence.
        {"features.timeout-cancels": "NOTE"},
    ),
}

# Runs where a check is not judged, and must say why: SKIP from the declaration, N/A when
# the condition never arose (no violation here, so not among the CASES).
NOT_JUDGED = {
    "cancel-undeclared": Case(
        CancelUndeclared,
        ("features-cancellation", "2025-06-18", "stdio"),
        {"features.cancel-notifies": "SKIP", "features.cancel-only-in-flight": "SKIP"},
    ),
    "no-get-stream-batch": Case(
        NoGetStream,
        ("features-batch", "2025-03-26", "http"),
        {"features.batch-accepted": "N/A"},
    ),
    "no-get-stream-resource-update": Case(
        NoGetStream,
        ("features-subscribe", "2025-11-25", "http"),
        {"features.resource-updates-surfaced": "N/A"},
    ),
    "no-get-stream-roots-request": Case(
        NoGetStream,
        ("features-roots-changed", "2025-11-25", "http"),
        {"features.roots-list-changed": "N/A"},
    ),
}

# Items the reference client gets N/A on, honestly: the condition never arises for it.
NOT_PROVOKED = {
    # Only features-set-level* ask for a level (driver protocol 1.1 set_log_level); the
    # reference never sends logging/setLevel on its own, so elsewhere it is N/A.
    "features.set-level-only-if-declared",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    assert_mutant_fails_exactly(name, CASES[name])


@pytest.mark.parametrize("name", sorted(NOT_JUDGED))
def test_not_judged_items_say_why(name: str) -> None:
    assert_mutant_fails_exactly(name, NOT_JUDGED[name])


# The runs whose drive waits for what the server sends outside any request: over HTTP
# that needs the GET stream the client MAY open.
STANDALONE_WAITS = {
    ("features-batch", "2025-03-26", "http"): "the answer to the ping in the server's batch",
    ("features-subscribe", "2025-11-25", "http"): "notifications/resources/updated surfaced",
    ("features-roots-changed", "2025-11-25", "http"): "the answer to roots/list after the change",
    ("features-logging", "2025-11-25", "http"): "the log message on its own",
}


@pytest.mark.parametrize("run", sorted(STANDALONE_WAITS), ids="-".join)
def test_without_a_get_stream_a_standalone_wait_ends_at_the_may_happen_bound(
    run: tuple[str, str, str],
) -> None:
    """The wait gives up once no GET stream opened in MAY_HAPPEN_BOUND: a client without
    GET streams does not pay the whole time-out per wait, and its verdicts stay those of
    "never delivered" (NOT_JUDGED above)."""
    result = execute(scenario(run[0]), run[1], run[2], NoGetStream, op_timeout=30.0)
    waits = [w for w in result.waits if w["wait"] == STANDALONE_WAITS[run]]
    assert len(waits) == 1, result.waits
    assert not waits[0]["seen"]
    assert waits[0]["seconds"] < 15.0, "the wait ran on towards its 30 s bound"
    reference = execute(scenario(run[0]), run[1], run[2], ReferenceClient, op_timeout=30.0)
    assert [w["seen"] for w in reference.waits if w["wait"] == STANDALONE_WAITS[run]] == [True]


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_client_passes_the_same_runs(name: str) -> None:
    seen = verdicts(ReferenceClient, CASES[name].run)
    others = {c: v for c, v in seen.items() if not (c in NOT_PROVOKED and v == "N/A")}
    assert set(others.values()) <= {"PASS"}, others


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_that_reads_again_what_was_updated_gets_the_contents(transport: str) -> None:
    # A server that says a resource was updated serves it when asked: the script answered
    # only the subscription, so a client reading the notes again got an error from the mock.
    run = run_case(RefetchesOnChange, ("features-subscribe", "2025-11-25", transport))
    assert outcomes(run) == {"features.resource-updates-surfaced": "PASS"}
    assert not [e for e in run.entries if e["kind"] == "unmatched"]
    (read,) = run.requests("resources/read")
    answer = response_to(run, read)
    assert answer is not None
    assert answer["message"]["result"]["contents"][0]["text"].startswith("# Notes")


@pytest.mark.parametrize(
    ("run", "checks"),
    [
        pytest.param(
            ("features-server-requests", "2025-11-25", "stdio"),
            ("features.ping-answered", "features.ping-before-initialized"),
            id="server-requests",
        ),
        pytest.param(
            ("features-batch", "2025-03-26", "http"), ("features.batch-accepted",), id="batch"
        ),
    ],
)
def test_a_ping_answered_with_only_meta_is_answered_empty(
    run: tuple[str, str, str], checks: tuple[str, ...]
) -> None:
    # Every result may carry _meta (metadata, not data): {"_meta": {...}} is an empty
    # result. A member of any other name still fails (the pong mutant above).
    seen = verdicts(MetaInAnswers, run)
    assert {check: seen[check] for check in checks} == dict.fromkeys(checks, "PASS")


class AnswersUnderAnotherId(ReferenceClient):
    """Answers roots/list under its id with a suffix."""

    async def _reply(self, reply: Response | ErrorResponse) -> None:
        if isinstance(reply, Response) and isinstance(reply.id, str) and "roots" in reply.result:
            reply = Response(f"{reply.id}-x", reply.result)
        await super()._reply(reply)


def test_an_answer_under_another_id_is_told_as_such_not_as_never_answered() -> None:
    from harness.judging._catalogue import CATALOGUE
    from harness.judging._judge import judge

    run = run_case(AnswersUnderAnotherId, ("features-server-requests", "2025-11-25", "stdio"))
    verdict = judge(CATALOGUE["features.roots-answer"], run)
    assert verdict.status.value == "FAIL", verdict.reason
    assert "never answered the server's roots/list" in verdict.reason
    assert re.search(r'the answer that followed it carries the id "[^"]+-x"', verdict.reason)
    stray = verdict.evidence[-1]
    assert stray["direction"] == "client"
    assert str(stray["message"]["id"]).endswith("-x")
