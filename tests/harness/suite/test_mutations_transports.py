"""Falsifiability of the transport and 2026-07-28 checks: one mutant per broken rule.

Same structure as tests/harness/suite/test_mutations.py: each mutant breaks one rule of the spec, the
named checks get the named status and every other check of the run still passes.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import httpx
import pytest
from _mutation import (
    Case,
    all_blocked_by,
    assert_mutant_fails_exactly,
    assert_reference_passes,
    run_case,
)
from test_preconditions import GarbageFirst

from harness.clients import ClientError, ReferenceClient
from harness.clients._contract import ConnectOptions, Target
from harness.clients.reference._http import SSE, HttpTransport
from harness.clients.reference._sse_legacy import SseLegacyTransport
from harness.clients.reference._stdio import StdioTransport
from harness.judging import CATALOGUE, judge
from harness.protocol import (
    ProtocolError,
    RequestId,
    SSEEvent,
    SSEParser,
    decode_json,
    encode,
)

# -- the mutants -------------------------------------------------------------------------------


class _StderrTail(deque[str]):
    def __init__(self, on_line: Callable[[], None]) -> None:
        super().__init__(maxlen=20)
        self._on_line = on_line

    def append(self, line: str) -> None:
        super().append(line)
        self._on_line()


def _echoes(args: tuple[Any, ...], word: str) -> bool:
    # _exchange(method, params, ...)
    return args[0] == "tools/call" and args[1].get("arguments") == {"word": word}


class StderrIsAnError(ReferenceClient):
    """ST-3: takes the server's stderr output for an error: the next call fails.

    (The mutant waits a little for stderr to arrive, so that a loaded machine does not
    make it pass by accident.)
    """

    def __init__(self) -> None:
        super().__init__()
        self._stderr = anyio.Event()

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        result = await super().connect(target, options)
        if isinstance(self._transport, StdioTransport):
            self._transport.stderr_tail = _StderrTail(self._stderr.set)
        return result

    async def _exchange(self, *args: Any, **kwargs: Any) -> Any:
        result = await super()._exchange(*args, **kwargs)
        if _echoes(args, "first"):
            with anyio.move_on_after(3):
                await self._stderr.wait()
            if self._stderr.is_set():
                raise ClientError("transport", "the server reported an error on stderr")
        return result


class GarbageFailsTheNextCall(ReferenceClient):
    """ST-1: a line from the server that is not JSON makes the next call fail."""

    def __init__(self) -> None:
        super().__init__()
        self._garbage = anyio.Event()

    def _deliver(self, data: bytes | str) -> None:
        try:
            decode_json(data)
        except ProtocolError:
            self._garbage.set()
            return
        super()._deliver(data)

    async def _exchange(self, *args: Any, **kwargs: Any) -> Any:
        if _echoes(args, "second"):
            with anyio.move_on_after(3):
                await self._garbage.wait()
            if self._garbage.is_set():
                raise ClientError("protocol", "the server sent garbage")
        return await super()._exchange(*args, **kwargs)


class IgnoresServerExit(ReferenceClient):
    """LC-9: does not notice that the server process is gone; waits for its time-out."""

    def _fail(self, request_id: RequestId | None, error: ClientError) -> None:
        if request_id is None and self._state == "open":
            return
        super()._fail(request_id, error)


class NeverRestarts(ReferenceClient):
    """ST-5: leaves a 2026 stdio server that exited dead: every later request fails."""

    async def _restart_server(self) -> None:
        return


class BatchesOnStdio(ReferenceClient):
    """RPC-6: sends notifications/initialized inside a batch (an array) on stdio."""

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        transport = self._transport
        if message.get("method") == "notifications/initialized" and isinstance(
            transport, StdioTransport
        ):
            assert transport._process.stdin is not None
            await transport._process.stdin.send((encode([dict(message)]) + "\n").encode())
            return
        await super()._send(message, limit)


class _SseAcceptAnything(HttpTransport):
    def _request_headers(
        self, accept: str, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        return super()._request_headers("*/*" if accept == SSE else accept, extra)


class _CommentIsAnError(HttpTransport):
    async def _read(
        self, response: httpx.Response, parser: SSEParser, request_id: RequestId | None
    ) -> bool:
        feed = parser.feed

        def strict(chunk: bytes) -> list[SSEEvent]:
            events = feed(chunk)
            if any(event.comments for event in events):
                raise ClientError("transport", "unexpected SSE comment line")
            return events

        parser.feed = strict  # type: ignore[method-assign]
        return await super()._read(response, parser, request_id)


class SseCommentIsAnError(ReferenceClient):
    """HM-6, HT-3: fails a request whose SSE stream holds a comment line."""

    _http_transport = _CommentIsAnError


class BrokenCallIsEmpty(ReferenceClient):
    """HT-3: turns a call whose connection broke into an empty result."""

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return await super().call_tool(*args, **kwargs)
        except ClientError as exc:
            if exc.kind != "transport":
                raise
            return {"content": []}


class BrokenConnectionEndsSession(ReferenceClient):
    """HT-3: after one broken connection, fails every later call."""

    _gave_up = False

    async def call_tool(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        if self._gave_up:
            raise ClientError("transport", "the connection is closed")
        try:
            return await super().call_tool(*args, **kwargs)
        except ClientError as exc:
            self._gave_up = exc.kind == "transport"
            raise


class GetWithoutSseAccept(ReferenceClient):
    """HT-6: opens the GET stream with Accept: */*."""

    _http_transport = _SseAcceptAnything


class _GetRefusalIsFatal(HttpTransport):
    async def _get(self, last_event_id: str | None) -> httpx.Response | None:
        response = await super()._get(last_event_id)
        if response is None:
            self._sink.fail(None, ClientError("transport", "the server refused the GET stream"))
        return response


class GetRefusalIsFatal(ReferenceClient):
    """HT-6: takes a 405 on the GET stream for the end of the session."""

    _http_transport = _GetRefusalIsFatal


class _GetRefusalIsFatalLate(HttpTransport):
    refused = False

    async def _get(self, last_event_id: str | None) -> httpx.Response | None:
        response = await super()._get(last_event_id)
        self.refused = self.refused or response is None
        return response

    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        await super().send(message, headers, written)
        if self.refused:  # it notices the refusal only now, a request later
            self._sink.fail(None, ClientError("transport", "the server refused the GET stream"))


class GetRefusalIsFatalLate(ReferenceClient):
    """HT-6: takes a 405 on the GET stream for the end of the session, but only after the
    request that follows it has been answered (a client that reads the refusal late): one
    tools/list after the 405 still works, the next does not."""

    _http_transport = _GetRefusalIsFatalLate


async def _choke_on_202(response: httpx.Response) -> None:
    if response.status_code == 202:
        raise httpx.DecodingError("expected a JSON body", request=response.request)


class ChokesOn202(ReferenceClient):
    """HT-4: takes a 202 Accepted with an empty body for an error, and reports it (the
    202 to notifications/initialized: connecting fails)."""

    def __init__(self) -> None:
        super().__init__(
            http_client_factory=lambda: httpx.AsyncClient(
                timeout=httpx.Timeout(5.0, read=None),
                event_hooks={"response": [_choke_on_202]},
            )
        )


async def _refuse_sse_answers(response: httpx.Response) -> None:
    kind = response.headers.get("content-type", "")
    if response.request.method == "POST" and kind.startswith("text/event-stream"):
        raise httpx.DecodingError("only JSON answers are understood", request=response.request)


class JsonOnly(ReferenceClient):
    """HT-3: handles a POST answered as application/json, fails on text/event-stream."""

    def __init__(self) -> None:
        super().__init__(
            http_client_factory=lambda: httpx.AsyncClient(
                timeout=httpx.Timeout(5.0, read=None),
                event_hooks={"response": [_refuse_sse_answers]},
            )
        )


class _ResumesWithoutLastEventId(HttpTransport):
    async def _get(self, last_event_id: str | None) -> httpx.Response | None:
        return await super()._get(None)


class ResumesWithoutLastEventId(ReferenceClient):
    """HT-7: reconnects after a broken stream without Last-Event-ID."""

    _http_transport = _ResumesWithoutLastEventId


class _IgnoresRetry(HttpTransport):
    def _retry_delay(self, retry_ms: int) -> float:
        return 0.0


class IgnoresRetry(ReferenceClient):
    """HT-7: reconnects at once, whatever the stream's retry field asked for."""

    _http_transport = _IgnoresRetry


class NoLegacyFallback(ReferenceClient):
    """HT-12: gives up when the initialize POST is refused, never trying HTTP+SSE."""

    async def _handshake(self, target: Target, revision: str) -> None:
        await self._initialize(revision)


class FallsBackOnlyOn405(ReferenceClient):
    """HT-12: tries HTTP+SSE after a 405, but gives up on a 400 or a 404."""

    async def _handshake(self, target: Target, revision: str) -> None:
        try:
            await self._initialize(revision)
        except ClientError as exc:
            if getattr(exc, "http_status", None) != 405:
                raise
            await self._open_sse_legacy(target)
            await self._initialize(revision)


class _GuessesTheEndpoint(SseLegacyTransport):
    def _set_endpoint(self, data: str) -> None:
        super()._set_endpoint(data)
        query = urlsplit(self._endpoint or "").query
        self._endpoint = urljoin(self._url, "/messages?" + query)


class GuessesTheEndpoint(ReferenceClient):
    """HT-13: POSTs to /messages, a common guess, not to the URI the endpoint event names."""

    _sse_legacy_transport = _GuessesTheEndpoint


class CancelsByHangingUp(ReferenceClient):
    """HT-5: cancels an HTTP request by closing its stream, without notifications/cancelled."""

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        if not isinstance(self._transport, HttpTransport):
            await super()._cancel(request_id, reason)


class NoRenewal(ReferenceClient):
    """HT-9: after a 404 on its session, reports the error instead of initializing again."""

    async def _renew_session(self, generation: int) -> None:
        raise ClientError("transport", "the session is gone")


class PrettyPrintsOnStdio(ReferenceClient):
    """ST-1: writes notifications/initialized pretty-printed, over several lines."""

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        transport = self._transport
        if message.get("method") == "notifications/initialized" and isinstance(
            transport, StdioTransport
        ):
            assert transport._process.stdin is not None
            text = json.dumps(dict(message), indent=2) + "\n"
            await transport._process.stdin.send(text.encode())
            return
        await super()._send(message, limit)


class _NoSessionEcho(HttpTransport):
    def _request_headers(
        self, accept: str, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        headers = super()._request_headers(accept, extra)
        headers.pop("Mcp-Session-Id", None)
        return headers


class NoSessionEcho(ReferenceClient):
    """HT-8: never sends the Mcp-Session-Id the server issued at initialize (and, refused,
    does not try HTTP+SSE either, which would only add requests of another transport)."""

    _http_transport = _NoSessionEcho

    async def _handshake(self, target: Target, revision: str) -> None:
        await self._initialize(revision)


class _DeletesWithoutSession(HttpTransport):
    _closing = False

    def _request_headers(
        self, accept: str, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        headers = super()._request_headers(accept, extra)
        if self._closing:
            headers.pop("Mcp-Session-Id", None)
        return headers

    async def close(self) -> None:
        self._closing = True
        await super().close()


class DeletesWithoutSession(ReferenceClient):
    """HT-8: leaves Mcp-Session-Id off the DELETE that ends the session."""

    _http_transport = _DeletesWithoutSession


class _PostsBesideTheEndpoint(HttpTransport):
    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        if message.get("method") == "notifications/initialized":
            url, self._url = self._url, self._url + "/notify"
            session, version = self.session_id, self.protocol_version
            try:
                await super().send(message, headers, written)
            except ClientError:
                pass  # notifications are fire and forget
            finally:
                self._url, self.session_id, self.protocol_version = url, session, version
            return
        await super().send(message, headers, written)


class PostsBesideTheEndpoint(ReferenceClient):
    """HT-1: POSTs notifications to a path of its own, not the MCP endpoint."""

    _http_transport = _PostsBesideTheEndpoint


class _AcceptsOnlyJson(HttpTransport):
    def _request_headers(
        self, accept: str, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        if (extra or {}).get("Mcp-Method") == "tools/list":
            accept = "application/json"
        return super()._request_headers(accept, extra)


class AcceptsOnlyJson(ReferenceClient):
    """HT-2: lists only application/json in the Accept of tools/list."""

    _http_transport = _AcceptsOnlyJson


# -- the expectations ----------------------------------------------------------------------------


def _precondition(
    mutant: Callable[[], Any],
    root: str,
    run: tuple[str, str, str],
    *,
    judged: tuple[str, ...] = (),
    **outcomes: str,
) -> Case:
    return Case(mutant, run, all_blocked_by(root, run, judged=judged, **{root: "FAIL", **outcomes}))


CASES = {
    "stderr-is-an-error": Case(
        StderrIsAnError,
        ("stdio-noise-and-crash", "2025-11-25", "stdio"),
        {"stdio.stderr-not-an-error": "WARN"},
    ),
    # A line that is no JSON at all is ST-2's alone; the calls after it, answered, pass.
    "writes-garbage-on-stdin": Case(
        GarbageFirst,
        ("tools-call", "2025-11-25", "stdio"),
        {
            "stdio.only-mcp-messages": "FAIL",
            "jsonrpc.messages-valid": "BLOCKED:stdio.only-mcp-messages",
            "stdio.framing": "BLOCKED:stdio.only-mcp-messages",
            "stdio.no-batches": "BLOCKED:stdio.only-mcp-messages",
        },
    ),
    "garbage-fails-the-next-call": Case(
        GarbageFailsTheNextCall,
        ("stdio-noise-and-crash", "2026-07-28", "stdio"),
        # No sentence binds the client to skip a bad line from the server: a NOTE.
        {"stdio.bad-lines-skipped": "NOTE"},
    ),
    # One invalid line, one FAIL: the batch is RPC-6's (stdio.no-batches); the other line
    # checks are blocked by it, and the calls, answered, pass.
    "batches-on-stdio": Case(
        BatchesOnStdio,
        ("tools-call", "2025-11-25", "stdio"),
        {
            "stdio.no-batches": "FAIL",
            "jsonrpc.messages-valid": "BLOCKED:stdio.no-batches",
            "stdio.framing": "BLOCKED:stdio.no-batches",
            "stdio.only-mcp-messages": "BLOCKED:stdio.no-batches",
        },
    ),
    # The refused GET stream lies on no other check's path.
    "get-without-sse-accept": Case(
        GetWithoutSseAccept,
        ("tools-call", "2025-11-25", "http"),
        {"http.get-stream-accept": "FAIL"},
    ),
    # The 405 binds only the server: what the client makes of it is a NOTE.
    "get-refusal-is-fatal": Case(
        GetRefusalIsFatal,
        ("http-get-405", "2025-06-18", "http"),
        {"http.get-405-tolerated": "NOTE"},
    ),
    "get-refusal-is-fatal-late": Case(
        GetRefusalIsFatalLate,
        ("http-get-405", "2025-06-18", "http"),
        {"http.get-405-tolerated": "NOTE"},
    ),
    "chokes-on-202": Case(
        ChokesOn202,
        ("http-get-405", "2025-03-26", "http"),
        # connecting fails on the 202, so the session the 405 check needs never happens;
        # the 202 binds only the server, so its check, a NOTE, is no root cause: the
        # failed connect is
        {"http.accepts-202": "NOTE", "http.get-405-tolerated": "BLOCKED:client.connect"},
    ),
    "resumes-without-last-event-id": Case(
        ResumesWithoutLastEventId,
        ("http-resume-retry", "2025-11-25", "http"),
        {"http.resume-with-last-event-id": "WARN"},
    ),
    "ignores-retry": Case(
        IgnoresRetry, ("http-resume-retry", "2025-11-25", "http"), {"http.retry-honoured": "FAIL"}
    ),
    "sse-comment-is-an-error": Case(
        SseCommentIsAnError,
        ("http-json-and-sse", "2026-07-28", "http"),
        {"http.json-and-sse-answers": "FAIL"},
    ),
    "broken-call-is-empty": Case(
        BrokenCallIsEmpty,
        ("http-drop-connection", "2025-06-18", "http"),
        # No sentence speaks of a response cut short (branch result-surfaced): a NOTE.
        {"http.dropped-connection-surfaced": "NOTE"},
    ),
    "broken-connection-ends-session": Case(
        BrokenConnectionEndsSession,
        ("http-drop-connection", "2025-11-25", "http"),
        {"http.session-survives-dropped-connection": "NOTE"},
    ),
    "falls-back-only-on-405": Case(
        FallsBackOnlyOn405,
        ("http-legacy-fallback-404", "2024-11-05", "sse-legacy"),
        # 2024-11-05 has no fallback to speak of (later ones a lowercase "should"): NOTE.
        {"http.legacy-fallback": "NOTE"},
    ),
    "falls-back-only-on-405-not-400": Case(
        FallsBackOnlyOn405,
        ("http-legacy-fallback-400", "2024-11-05", "sse-legacy"),
        {"http.legacy-fallback": "NOTE"},
    ),
    "no-legacy-fallback": Case(
        NoLegacyFallback,
        ("http-legacy-fallback", "2024-11-05", "sse-legacy"),
        {"http.legacy-fallback": "NOTE"},
    ),
    "guesses-the-endpoint": Case(
        GuessesTheEndpoint,
        ("tools-call", "2024-11-05", "sse-legacy"),
        # The mock refuses the POSTs to the guessed URI (rule wrong-path): every check but
        # the one of the broken rule is blocked by it, and the messages' own form, seen
        # whole, is judged.
        all_blocked_by(
            "sse-legacy.posts-to-endpoint",
            ("tools-call", "2024-11-05", "sse-legacy"),
            judged=("jsonrpc.messages-valid",),
            **{"sse-legacy.posts-to-endpoint": "FAIL"},
        ),
    ),
    "json-only": Case(
        JsonOnly, ("http-json-and-sse", "2025-11-25", "http"), {"http.json-and-sse-answers": "FAIL"}
    ),
    "cancels-by-hanging-up": Case(
        CancelsByHangingUp,
        ("http-cancel", "2025-11-25", "http"),
        {"http.cancel-explicitly": "WARN"},
    ),
    "no-renewal": Case(
        NoRenewal,
        ("http-session-expiry", "2025-06-18", "http"),
        {"http.new-session-after-404": "FAIL"},
    ),
    # A message cut over lines with embedded newlines is ST-1's (stdio.framing) alone.
    "pretty-prints-on-stdio": Case(
        PrettyPrintsOnStdio,
        ("tools-call", "2025-06-18", "stdio"),
        {
            "stdio.framing": "FAIL",
            "jsonrpc.messages-valid": "BLOCKED:stdio.framing",
            "stdio.only-mcp-messages": "BLOCKED:stdio.framing",
            "stdio.no-batches": "BLOCKED:stdio.framing",
        },
    ),
    "no-session-echo": _precondition(
        NoSessionEcho,
        "http.session-id-echoed",
        ("tools-call", "2025-11-25", "http"),
        # Refused, connecting fails before the client opens a GET stream: no GET to judge.
        # Its messages, seen whole, are judged; its DELETE lacks the id too (HT-10).
        judged=("jsonrpc.messages-valid",),
        **{
            "http.get-stream-accept": "BLOCKED:http.session-id-echoed",
            "http.delete-session": "WARN",
        },
    ),
    # The refused DELETE comes last: nothing else was on its path.
    "deletes-without-session": Case(
        DeletesWithoutSession,
        ("tools-call", "2025-11-25", "http"),
        {"http.session-id-echoed": "FAIL", "http.delete-session": "WARN"},
    ),
    "posts-beside-the-endpoint": Case(
        PostsBesideTheEndpoint,
        ("tools-call", "2025-03-26", "http"),
        # The mock refuses the stray POST (rule wrong-path); nothing else was on its path.
        {"http.one-message-per-post": "FAIL"},
    ),
    "accepts-only-json": Case(
        AcceptsOnlyJson, ("tools-call", "2026-07-28", "http"), {"http.accept-header": "FAIL"}
    ),
    "ignores-server-exit": Case(
        IgnoresServerExit,
        ("stdio-noise-and-crash", "2025-11-25", "stdio"),
        # Noticed at its time-out: the spec asks for time-outs only, so a NOTE.
        {"stdio.crash-surfaced": "NOTE"},
    ),
    "never-restarts": Case(
        NeverRestarts,
        ("stdio-restart", "2026-07-28", "stdio"),
        {"stdio.restart-after-exit": "WARN"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    assert_mutant_fails_exactly(name, CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_client_passes_the_same_runs(name: str) -> None:
    assert_reference_passes(CASES[name])


# -- conditions that never arose: not applicable, never a pass -----------------------------------


class _NoGetTransport(HttpTransport):
    def listen(self) -> None:
        pass  # the optional GET stream is never opened


class NeverOpensGetStream(ReferenceClient):
    """Opens no GET stream (it may: HT-6 makes it optional)."""

    _http_transport = _NoGetTransport


class _NoResumeTransport(HttpTransport):
    async def _get(self, last_event_id: str | None) -> httpx.Response | None:
        if last_event_id is not None:
            return None  # never reconnects to resume a broken stream
        return await super()._get(last_event_id)


class NeverResumes(ReferenceClient):
    """Never reconnects after a stream ends before its response (HT-7's SHOULD)."""

    _http_transport = _NoResumeTransport


# A check whose triggering condition a client never brings about is N/A: the GET checks
# without a GET, the retry wait without a reconnection.
NOT_TRIGGERED = {
    "no-get-stream": Case(
        NeverOpensGetStream,
        ("http-get-405", "2025-11-25", "http"),
        {"http.get-405-tolerated": "N/A"},
    ),
    "no-get-stream-on-tools": Case(
        NeverOpensGetStream,
        ("tools-call", "2025-06-18", "http"),
        {"http.get-stream-accept": "N/A"},
    ),
    "never-resumes": Case(
        NeverResumes,
        ("http-resume-retry", "2025-11-25", "http"),
        {"http.retry-honoured": "N/A", "http.resume-with-last-event-id": "WARN"},
    ),
}


@pytest.mark.parametrize("name", sorted(NOT_TRIGGERED))
def test_a_condition_that_never_arose_is_not_applicable(name: str) -> None:
    assert_mutant_fails_exactly(name, NOT_TRIGGERED[name])


# Where a check's branches rest on different sentences, the mutant shows the branch it
# was written for (its level is that branch's): check id, branch ("" the check's own).
BRANCHES = {
    "broken-call-is-empty": ("http.dropped-connection-surfaced", "result-surfaced"),
    "ignores-server-exit": ("stdio.crash-surfaced", ""),
    "resumes-without-last-event-id": ("http.resume-with-last-event-id", ""),
    "never-resumes": ("http.resume-with-last-event-id", "no-reconnect"),
}


@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_a_mutant_takes_its_branch(name: str) -> None:
    check_id, branch = BRANCHES[name]
    case = {**CASES, **NOT_TRIGGERED}[name]
    verdict = judge(CATALOGUE[check_id], run_case(case.mutant, case.run))
    assert verdict.kind == "violation", verdict.reason
    assert verdict.clause == branch, verdict.reason
