"""Utilities and client features: ping, cancellation, progress, logging, resources,
prompts, roots, sampling, elicitation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio

from harness._catalogue import check
from harness._run import Scenario, ScenarioRun, Session
from harness._schemas import validate_definition
from harness._verdicts import Status, Verdict, fail, passed, skip, warn
from harness.clients._contract import Handlers
from harness.suite._evidence import (
    HANDSHAKE,
    STATELESS,
    cancellations,
    cancelled_by_notification,
    cancelled_id,
    first_operation,
    missing,
    op_evidence,
    requests_with,
    response_to,
    same_id,
    tool_calls,
)

__all__ = ["SCENARIOS", "answer_to", "server_request"]

ROOTS = (
    {"uri": "file:///tmp/mcp-testbench/project", "name": "project"},
    {"uri": "file:///tmp/mcp-testbench/notes", "name": "notes"},
)
SAMPLING = {
    "role": "assistant",
    "content": {"type": "text", "text": "hi"},
    "model": "mock-model",
    "stopReason": "endTurn",
}
ELICITATION = {"action": "accept", "content": {"name": "Ada"}}
ALL_HANDLERS = Handlers(sampling=SAMPLING, elicitation=ELICITATION, roots=ROOTS)


def server_request(run: ScenarioRun, request_id: str | int) -> dict[str, Any] | None:
    """The transcript entry of the server request with this id."""
    for entry in run.entries:
        message = entry.get("message") if entry["kind"] == "message" else None
        if (
            entry.get("direction") == "server"
            and isinstance(message, dict)
            and "method" in message
            and same_id(message.get("id"), request_id)
        ):
            return entry
    return None


def answer_to(run: ScenarioRun, request_id: str) -> dict[str, Any] | None:
    """The client's answer (a response entry) to the server request with this id."""
    for entry in run.client_messages():
        message = entry["message"]
        if "method" not in message and message.get("id") == request_id:
            return entry
    return None


def _shape_problem(message: Mapping[str, Any]) -> str | None:
    """RPC-4: what is wrong with a response's shape (None: nothing)."""
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        return "it has both result and error" if has_result else "it has neither result nor error"
    if has_error:
        error = message["error"]
        if not isinstance(error, dict):
            return "its error is not an object"
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            return f"its error code {code!r} is not an integer"
        if not isinstance(error.get("message"), str):
            return "its error has no string message"
    elif not isinstance(message["result"], dict):
        return "its result is not an object"
    return None


async def connect_and_call(session: Session, tool: str = "ask") -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")
        await session.call("call_tool", tool, {})


def _answered_with(
    run: ScenarioRun, request_id: str, definition: str
) -> tuple[Verdict | None, dict[str, Any], dict[str, Any]]:
    """The request, the answer, or a FAIL verdict if the answer is missing or malformed."""
    request, answer = server_request(run, request_id), answer_to(run, request_id)
    if request is None:
        return missing(run, f"the server request {request_id}"), {}, {}
    if answer is None:
        return fail(f"the client never answered {request_id}", [request]), request, {}
    message = answer["message"]
    problem = _shape_problem(message)
    if problem is None and "error" in message:
        problem = f"it is the error {message['error']}"
    if problem is None:
        violations = validate_definition(message["result"], run.revision, definition)
        if violations:
            problem = f"the result is no {definition}: {violations[0]}"
    if problem is not None:
        return fail(f"the answer to {request_id} is wrong: {problem}", [request, answer]), {}, {}
    return None, request, answer


@check(
    "features.ping-answered",
    requirements=["PING", "RPC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="basic/utilities/ping",
    description="A server ping during the session is answered promptly with an empty result",
)
def ping_answered(run: ScenarioRun) -> Verdict:
    return _ping_verdict(run, "srv-ping")


@check(
    "features.ping-before-initialized",
    requirements=["PING", "RPC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="basic/utilities/ping",
    description="A server ping sent before the initialize response is answered with an empty result",
)
def ping_before_initialized(run: ScenarioRun) -> Verdict:
    return _ping_verdict(run, "srv-early-ping")


_EXACT_IDS: tuple[int | str, ...] = (0, 9007199254740993, "0")


@check(
    "jsonrpc.answer-ids-exact",
    requirements=["RPC-1", "RPC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="basic/index#responses",
    description='Server requests with the ids 0, 9007199254740993 (beyond 2^53) and "0" '
    "are each answered under exactly their id: same value, same JSON type",
)
def answer_ids_exact(run: ScenarioRun) -> Verdict:
    answers = [e for e in run.client_messages() if "method" not in e["message"]]
    evidence: list[dict[str, Any]] = []
    for wanted in _EXACT_IDS:
        request = server_request(run, wanted)
        if request is None:
            return missing(run, f"the server ping with id {wanted!r}")
        exact = [a for a in answers if same_id(a["message"].get("id"), wanted)]
        if not exact:
            near = [a for a in answers if str(a["message"].get("id")).startswith(str(wanted)[:8])]
            shown = ", ".join(repr(a["message"].get("id")) for a in near) or "none"
            return fail(
                f"the ping with id {wanted!r} got no answer under that id (near ids: {shown})",
                [request, *near[:2]],
            )
        evidence += [request, exact[0]]
    return passed("each ping was answered under exactly its own id", evidence)


def _ping_verdict(run: ScenarioRun, request_id: str) -> Verdict:
    bad, request, answer = _answered_with(run, request_id, "EmptyResult")
    if bad is not None:
        return bad
    if answer["message"]["result"] != {}:
        return fail(
            f"the ping was answered with {answer['message']['result']!r}, not {{}}",
            [request, answer],
        )
    return passed("the ping was answered with an empty result", [request, answer])


@check(
    "features.roots-answer",
    requirements=["ROOTS", "RPC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="client/roots",
    description="roots/list is answered with a ListRootsResult whose every root is a file:// URI",
    feature="roots",
)
def roots_answer(run: ScenarioRun) -> Verdict:
    bad, request, answer = _answered_with(run, "srv-roots", "ListRootsResult")
    if bad is not None:
        return bad
    roots = answer["message"]["result"].get("roots", [])
    uris = [r.get("uri") for r in roots if isinstance(r, dict)]
    if not uris:
        return fail(
            "the client answered roots/list with no roots although it was given some",
            [request, answer],
        )
    wrong = [u for u in uris if not (isinstance(u, str) and u.startswith("file://"))]
    if wrong:
        return fail(f"the root {wrong[0]!r} is not a file:// URI", [request, answer])
    return passed(f"{len(uris)} roots, every one a file:// URI", [request, answer])


@check(
    "features.sampling-answer",
    requirements=["SAMPLING", "RPC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="client/sampling",
    description="sampling/createMessage is answered with a well-formed CreateMessageResult",
    feature="sampling",
)
def sampling_answer(run: ScenarioRun) -> Verdict:
    bad, request, answer = _answered_with(run, "srv-sampling", "CreateMessageResult")
    if bad is not None:
        return bad
    return passed("the sampling request got a CreateMessageResult", [request, answer])


def _declared_capabilities(run: ScenarioRun) -> dict[str, Any] | None:
    """The capabilities of the client's initialize request (None: no initialize)."""
    init = next(
        (m for m in run.client_messages() if m["message"].get("method") == "initialize"), None
    )
    if init is None:
        return None
    capabilities = (init["message"].get("params") or {}).get("capabilities")
    return capabilities if isinstance(capabilities, dict) else {}


def _sampling_tools_declared(capabilities: Mapping[str, Any]) -> bool:
    sampling = capabilities.get("sampling")
    return isinstance(sampling, dict) and isinstance(sampling.get("tools"), dict)


def _uses_tools(result: Any) -> bool:
    content = result.get("content") if isinstance(result, dict) else None
    items = content if isinstance(content, list) else [content]
    return any(isinstance(i, dict) and i.get("type") == "tool_use" for i in items)


@check(
    "features.sampling-tools-declared",
    requirements=["SAMPLING", "LC-6"],
    level="MUST",
    revisions=("2025-11-25",),
    spec="client/sampling#tools-in-sampling",
    description="A sampling request that offers tools is answered with tool use only by a "
    "client that declared sampling.tools, and one that declared it answers it properly",
    feature="sampling",
)
def sampling_tools_declared(run: ScenarioRun) -> Verdict:
    capabilities = _declared_capabilities(run)
    request, answer = (
        server_request(run, "srv-sampling-tools"),
        answer_to(run, "srv-sampling-tools"),
    )
    if capabilities is None or request is None:
        return missing(run, "a tool-enabled sampling request after initialize")
    if answer is None:
        return fail("the client never answered the tool-enabled sampling request", [request])
    evidence = [request, answer]
    message = answer["message"]
    if _sampling_tools_declared(capabilities):
        bad, _, _ = _answered_with(run, "srv-sampling-tools", "CreateMessageResult")
        if bad is not None:
            return fail(f"the client declared sampling.tools, but {bad.reason}", evidence)
        return passed("declared sampling.tools and answered the tool-enabled request", evidence)
    if _uses_tools(message.get("result")):
        return fail("the client answered with tool use without declaring sampling.tools", evidence)
    return passed("without sampling.tools declared, the answer used no tools", evidence)


@check(
    "features.sampling-tool-history-checked",
    requirements=["SAMPLING"],
    level="SHOULD",
    revisions=("2025-11-25",),
    spec="client/sampling#error-handling",
    description="A client that declared sampling.tools answers a sampling request whose tool "
    "results are mixed with other content, or missing, with -32602",
    feature="sampling",
)
def sampling_tool_history_checked(run: ScenarioRun) -> Verdict:
    capabilities = _declared_capabilities(run)
    if capabilities is None:
        return missing(run, "an initialize request")
    if not _sampling_tools_declared(capabilities):
        return skip("the client does not declare sampling.tools")
    evidence = []
    for request_id in ("srv-sampling-mixed", "srv-sampling-unmatched"):
        request, answer = server_request(run, request_id), answer_to(run, request_id)
        if request is None:
            return missing(run, f"the sampling request {request_id}")
        if answer is None:
            return fail(f"the client never answered {request_id}", [request])
        evidence += [request, answer]
        code = (answer["message"].get("error") or {}).get("code")
        if code != -32602:
            return warn(f"{request_id} was answered with {answer['message']}, not -32602", evidence)
    return passed("both broken tool histories were refused with -32602", evidence)


@check(
    "jsonrpc.answers-well-formed",
    requirements=["RPC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="basic/index#responses",
    description="Every answer to a server request has exactly one of result and error, an error an integer code and a message",
)
def answers_well_formed(run: ScenarioRun) -> Verdict:
    for entry in run.of_kind("invalid"):
        try:
            value = json.loads(entry.get("raw") or "")
        except ValueError:
            continue
        if isinstance(value, dict) and "method" not in value and "id" in value:
            return fail(f"an answer is no valid JSON-RPC response: {entry.get('reason')}", [entry])
    answers = [e for e in run.client_messages() if "method" not in e["message"]]
    if not answers:
        return missing(run, "an answer to a server request")
    for entry in answers:
        problem = _shape_problem(entry["message"])
        if problem is not None:
            return fail(f"an answer is malformed: {problem}", [entry])
    return passed(f"{len(answers)} answers, each well-formed", answers[:4])


async def cancel_and_race(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "hang", {}, timeout=0.5)  # LC-9: the client's own time-out
    with anyio.move_on_after(0.3):  # CANCEL: the caller abandons the call
        await session.call("call_tool", "slow", {})
    await anyio.sleep(1.6)  # the late response arrives meanwhile
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "features.timeout-cancels",
    requirements=["LC-9", "CANCEL"],
    level="SHOULD",
    revisions=(*HANDSHAKE[1:], *STATELESS),
    spec="basic/lifecycle#timeouts",
    description="A request that times out (the caller's timeout=) is reported as a time-out "
    "and cancelled with notifications/cancelled naming its id",
    feature="tools",
)
def timeout_cancels(run: ScenarioRun) -> Verdict:
    sent, operation = tool_calls(run, "hang"), first_operation(run, "call_tool", "hang")
    if not sent or operation is None:
        return missing(run, "a tools/call of hang")
    if operation.ok:
        return fail(
            "a call that was never answered was reported as a success",
            [sent[0], *op_evidence(operation)],
        )
    return cancelled_by_notification(
        run, "hang", warn, what="the timed-out request", context=op_evidence(operation)
    )


@check(
    "features.cancel-notifies",
    requirements=["CANCEL", "HT-5"],
    level="SHOULD",
    spec="basic/utilities/cancellation",
    description="Abandoning a call (cancelling the task that awaits it) sends "
    "notifications/cancelled with that request's id",
    feature="tools",
)
def cancel_notifies(run: ScenarioRun) -> Verdict:
    return cancelled_by_notification(run, "slow", warn)


@check(
    "features.cancel-only-in-flight",
    requirements=["CANCEL", "LC-8"],
    level="MUST",
    spec="basic/utilities/cancellation",
    description="Every notifications/cancelled names a request the client sent and had no "
    "response to yet (never initialize)",
    feature="cancel",
)
def cancel_only_in_flight(run: ScenarioRun) -> Verdict:
    cancels = cancellations(run)
    if not cancels:
        return missing(run, "a notifications/cancelled from the client")
    requests = run.requests()
    for cancel in cancels:
        request_id = cancelled_id(cancel)
        request = next(
            (
                r
                for r in requests
                if r["seq"] < cancel["seq"] and same_id(r["message"]["id"], request_id)
            ),
            None,
        )
        if request is None:
            return fail(f"the client cancelled {request_id!r}, a request it never sent", [cancel])
        if request["message"].get("method") == "initialize":
            return fail("the client cancelled its initialize request", [request, cancel])
        response = response_to(run, request)
        if response is not None and response["seq"] < cancel["seq"]:
            return fail(
                f"the client cancelled {request_id!r} after its response had arrived",
                [request, response, cancel],
            )
    return passed(f"{len(cancels)} cancellations, each of a request in flight", cancels[:3])


@check(
    "features.cancel-races-survived",
    requirements=["CANCEL"],
    level="MUST",
    spec="basic/utilities/cancellation#timing-considerations",
    description="A response arriving after the client cancelled its request, and (before "
    "2026-07-28) a notifications/cancelled for an id the client never saw, are ignored: the "
    "next call works",
    feature="tools",
)
def cancel_races(run: ScenarioRun) -> Verdict:
    slow, add = tool_calls(run, "slow"), tool_calls(run, "add")
    operation = first_operation(run, "call_tool", "add")
    if not slow or not add or operation is None:
        return missing(run, "tools/call of slow, then of add")
    evidence = [slow[0], add[0], *op_evidence(first_operation(run, "call_tool", "slow"), operation)]
    late = response_to(run, slow[0])
    if late is not None:
        evidence.insert(1, late)
    if response_to(run, add[0]) is None:
        return missing(run, "an answered tools/call of add")
    if not operation.ok or (operation.value or {}).get("content") != [
        {"type": "text", "text": "3"}
    ]:
        return fail(
            f"after the races the next call failed: {operation.error or operation.value}", evidence
        )
    return passed("the races were survived: the next call worked", evidence)


async def call_with_progress(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    async with anyio.create_task_group() as group:
        for _ in range(2):
            group.start_soon(partial(session.call, "call_tool", "work", {}, progress=True))


def _token(entry: Mapping[str, Any]) -> Any:
    params = entry["message"].get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


@check(
    "features.progress-tokens",
    requirements=["PROG"],
    level="MUST",
    spec="basic/utilities/progress",
    description="A call asking for progress carries a string or integer progressToken, "
    "unique among the requests in flight",
    feature="progress",
)
def progress_tokens(run: ScenarioRun) -> Verdict:
    sent = tool_calls(run, "work")
    if len(sent) < 2:
        return missing(run, "two tools/call of work")
    tokens = [_token(e) for e in sent]
    for token, entry in zip(tokens, sent, strict=True):
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            return fail(f"the progressToken {token!r} is not a string or an integer", [entry])
    if len({(type(t).__name__, t) for t in tokens}) < len(tokens):
        return fail(f"two requests in flight share a progressToken: {tokens!r}", sent)
    return passed(f"progress tokens {tokens!r}: valid and distinct", sent)


@check(
    "features.progress-accepted",
    requirements=["PROG"],
    level="MUST",
    spec="basic/utilities/progress",
    description="Fractional progress and total (with a message from 2025-03-26) are accepted: both calls "
    "complete with their results",
    feature="progress",
)
def progress_accepted(run: ScenarioRun) -> Verdict:
    sent = tool_calls(run, "work")
    ops = [o for o in run.operations if o.op == "call_tool"]
    notices = [
        e
        for e in run.entries
        if e["kind"] == "message"
        and e.get("direction") == "server"
        and e["message"].get("method") == "notifications/progress"
    ]
    if len(sent) < 2 or len(ops) < 2 or not notices:
        return missing(run, "two tools/call of work with progress notifications")
    evidence = [*sent, notices[0], *op_evidence(*ops)]
    for operation in ops:
        if not operation.ok or (operation.value or {}).get("content") != [
            {"type": "text", "text": "worked"}
        ]:
            return fail(f"a call with fractional progress failed: {operation.error}", evidence)
    return passed("both calls completed after fractional progress with messages", evidence)


async def connect_and_add(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")
        await session.call("call_tool", "add", {"a": 1, "b": 2})


async def connect_log_and_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await anyio.sleep(0.3)  # the log message on its own
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "features.log-messages-accepted",
    requirements=["LOG"],
    level="MUST",
    spec="server/utilities/logging",
    description="notifications/message at any time (ahead of the initialize response, on its "
    "own, ahead of a response; in 2026-07-28 on a request's stream) breaks nothing",
    feature="tools",
)
def log_messages(run: ScenarioRun) -> Verdict:
    notices = [
        e
        for e in run.entries
        if e["kind"] == "message"
        and e.get("direction") == "server"
        and e["message"].get("method") == "notifications/message"
    ]
    connect, operation = run.operation("connect"), first_operation(run, "call_tool", "add")
    if not notices or connect is None or operation is None:
        return missing(run, "log notifications and a tools/call of add")
    evidence = [*notices, *op_evidence(connect, operation)]
    if not connect.ok:
        return fail(f"connecting failed after a log message: {connect.error}", evidence)
    if not operation.ok or (operation.value or {}).get("content") != [
        {"type": "text", "text": "3"}
    ]:
        return fail(f"the call after log messages failed: {operation.error}", evidence)
    return passed(f"{len(notices)} log messages, and the session went on", evidence)


@check(
    "features.set-level-only-if-declared",
    requirements=["LOG", "LC-7"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="server/utilities/logging#capabilities",
    description="logging/setLevel is never sent to a server that did not declare logging",
)
def set_level_only_if_declared(run: ScenarioRun) -> Verdict:
    init = next(
        (m for m in run.client_messages() if m["message"].get("method") == "initialize"), None
    )
    response = response_to(run, init) if init else None
    if init is None or response is None:
        return missing(run, "an answered initialize request")
    capabilities = (response["message"].get("result") or {}).get("capabilities") or {}
    if "logging" in capabilities:
        return missing(run, "a server without the logging capability (this one declares it)")
    levels = run.requests("logging/setLevel")
    if levels:
        return fail(
            "logging/setLevel was sent to a server that did not declare logging",
            [response, *levels],
        )
    return passed("no logging/setLevel to a server without logging", [init, response])


NOTES_URI = "file:///tmp/mcp-testbench/notes.md"
MISSING_URI = "file:///tmp/mcp-testbench/missing.txt"
GONE_URI = "file:///tmp/mcp-testbench/gone.txt"  # answered with the pre-2026 code


async def resources_and_prompts(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_resources")
    await session.call("read_resource", NOTES_URI)
    await session.call("read_resource", MISSING_URI)
    await session.call("list_prompts")
    await session.call("get_prompt", "greet", {"who": "Ada"})
    await session.call("get_prompt", "nope")


async def resources_and_prompts_then_legacy_code(session: Session) -> None:
    await resources_and_prompts(session)
    if session.operations and session.operations[0].ok:
        await session.call("read_resource", GONE_URI)
        await session.call("get_prompt", "greet", {"who": "Ada"})


def _paged_verdict(run: ScenarioRun, method: str, op: str, key: str) -> Verdict | None:
    """FAIL (or missing) unless both pages were fetched, cursor verbatim, and surfaced."""
    pages = run.requests(method)
    operation = run.operation(op)
    if len(pages) < 1 or operation is None:
        return missing(run, f"{method} and a {op} operation")
    responses = [response_to(run, p) for p in pages]
    cursors = [
        (r["message"].get("result") or {}).get("nextCursor") for r in responses if r is not None
    ]
    sent = [(p["message"].get("params") or {}).get("cursor") for p in pages]
    evidence = [*pages, *op_evidence(operation)]
    if len(pages) < 2 or sent[1] != cursors[0]:
        return fail(
            f"{method} did not send the cursor {cursors[0]!r} back verbatim: {sent!r}", evidence
        )
    expected = [
        item
        for r in responses
        if r is not None
        for item in (r["message"].get("result") or {}).get(key, [])
    ]
    if not operation.ok or (operation.value or {}).get(key) != expected:
        return fail(
            f"{op} did not surface every page intact: {operation.error or operation.value}",
            evidence,
        )
    return None


def _not_found_verdict(operation: Any, codes: tuple[int, ...], what: str) -> Verdict:
    if operation is None:
        return fail(f"no {what} operation")
    evidence = op_evidence(operation)
    error = operation.error or {}
    if operation.ok:
        return fail(f"the not-found error of {what} was surfaced as a result", evidence)
    if error.get("kind") != "protocol" or error.get("code") not in codes:
        return fail(
            f"the not-found error of {what} was surfaced as {error.get('kind')} error "
            f"{error.get('code')}, not as protocol error {codes[0]}",
            evidence,
        )
    return passed(f"the not-found error of {what} was surfaced with its code", evidence)


@check(
    "features.resources-listed-and-read",
    requirements=["RES", "TL-1"],
    level="MUST",
    spec="server/resources",
    description="resources/list follows nextCursor verbatim and surfaces every page; "
    "resources/read surfaces the contents intact",
    feature="resources",
)
def resources_listed_and_read(run: ScenarioRun) -> Verdict:
    bad = _paged_verdict(run, "resources/list", "list_resources", "resources")
    if bad is not None:
        return bad
    reads = requests_with(run, "resources/read", "uri", NOTES_URI)
    operation = first_operation(run, "read_resource", NOTES_URI)
    response = response_to(run, reads[0]) if reads else None
    if response is None or operation is None:
        return missing(run, f"an answered resources/read of {NOTES_URI}")
    evidence = [reads[0], *op_evidence(operation)]
    sent = (response["message"].get("result") or {}).get("contents")
    if not operation.ok or (operation.value or {}).get("contents") != sent:
        return fail(
            f"the resource contents were not surfaced intact: {operation.error or operation.value}",
            evidence,
        )
    return passed("both pages of resources listed, and the resource read intact", evidence)


@check(
    "features.resource-not-found",
    requirements=["RES", "RPC-7"],
    level="MUST",
    spec="server/resources#error-handling",
    description="A resource-not-found error (-32002; -32602 from 2026-07-28) to resources/read "
    "is surfaced as a protocol error with its code",
    feature="resources",
)
def resource_not_found(run: ScenarioRun) -> Verdict:
    reads = requests_with(run, "resources/read", "uri", MISSING_URI)
    if not reads or response_to(run, reads[0]) is None:
        return missing(run, f"an answered resources/read of {MISSING_URI}")
    codes = (-32602, -32002) if run.revision in STATELESS else (-32002,)
    return _not_found_verdict(
        first_operation(run, "read_resource", MISSING_URI), codes, "resources/read"
    )


@check(
    "features.legacy-not-found-accepted",
    requirements=["RES", "RPC-7"],
    level="SHOULD",
    revisions=STATELESS,
    spec="server/resources#error-handling",
    description="2026: a resources/read refused with the pre-2026 code -32002 is still surfaced "
    "as a not-found protocol error, and the client goes on working",
    feature="resources",
)
def legacy_not_found_accepted(run: ScenarioRun) -> Verdict:
    reads = requests_with(run, "resources/read", "uri", GONE_URI)
    if not reads or response_to(run, reads[0]) is None:
        return missing(run, f"an answered resources/read of {GONE_URI}")
    read = first_operation(run, "read_resource", GONE_URI)
    verdict = _not_found_verdict(read, (-32002,), "resources/read")
    if verdict.status is not Status.PASS:
        return warn(verdict.reason, verdict.evidence)
    greets = [
        o
        for o in run.operations
        if o.op == "get_prompt" and (o.args.get("args") or [None])[0] == "greet"
    ]
    after = greets[1:2]  # the get that follows the -32002 read
    if not after or not after[0].ok:
        return warn(
            "after the -32002 error the client did not serve the next request",
            op_evidence(read, *after),
        )
    return passed(
        "-32002 was surfaced as a not-found protocol error and the client went on",
        op_evidence(read, after[0]),
    )


@check(
    "features.prompts-listed-and-got",
    requirements=["PROMPTS", "TL-1"],
    level="MUST",
    spec="server/prompts",
    description="prompts/list follows nextCursor verbatim and surfaces every page; "
    "prompts/get sends the arguments and surfaces the messages intact",
    feature="prompts",
)
def prompts_listed_and_got(run: ScenarioRun) -> Verdict:
    bad = _paged_verdict(run, "prompts/list", "list_prompts", "prompts")
    if bad is not None:
        return bad
    gets = requests_with(run, "prompts/get", "name", "greet")
    operation = first_operation(run, "get_prompt", "greet")
    response = response_to(run, gets[0]) if gets else None
    if response is None or operation is None:
        return missing(run, "an answered prompts/get of greet")
    evidence = [gets[0], *op_evidence(operation)]
    sent = (response["message"].get("result") or {}).get("messages")
    if not operation.ok or (operation.value or {}).get("messages") != sent:
        return fail(
            f"the prompt was not surfaced intact: {operation.error or operation.value}", evidence
        )
    return passed("both pages of prompts listed, and the prompt got intact", evidence)


@check(
    "features.prompt-not-found",
    requirements=["PROMPTS", "RPC-7"],
    level="MUST",
    spec="server/prompts#error-handling",
    description="An unknown-prompt error (-32602) to prompts/get is surfaced as a protocol error with its code",
    feature="prompts",
)
def prompt_not_found(run: ScenarioRun) -> Verdict:
    gets = requests_with(run, "prompts/get", "name", "nope")
    if not gets or response_to(run, gets[0]) is None:
        return missing(run, "an answered prompts/get of nope")
    return _not_found_verdict(first_operation(run, "get_prompt", "nope"), (-32602,), "prompts/get")


@check(
    "features.elicitation-answer",
    requirements=["ELICIT", "RPC-4"],
    level="MUST",
    revisions=HANDSHAKE[2:],
    spec="client/elicitation",
    description="elicitation/create (without a mode: form mode) is answered with a "
    "well-formed ElicitResult",
    feature="elicitation",
)
def elicitation_answer(run: ScenarioRun) -> Verdict:
    bad, request, answer = _answered_with(run, "srv-elicit", "ElicitResult")
    if bad is not None:
        return bad
    return passed("the form-mode elicitation got an ElicitResult", [request, answer])


@check(
    "features.elicitation-undeclared-mode",
    requirements=["ELICIT"],
    level="MUST",
    revisions=("2025-11-25",),
    spec="client/elicitation#error-handling",
    description="A URL-mode elicitation to a client that declared only form mode is "
    "answered with error -32602",
    feature="elicitation",
)
def elicitation_undeclared_mode(run: ScenarioRun) -> Verdict:
    init = next(
        (m for m in run.client_messages() if m["message"].get("method") == "initialize"), None
    )
    request, answer = server_request(run, "srv-elicit-url"), answer_to(run, "srv-elicit-url")
    if init is None or request is None:
        return missing(run, "an initialize request and a URL-mode elicitation")
    declared = ((init["message"].get("params") or {}).get("capabilities") or {}).get("elicitation")
    if isinstance(declared, dict) and "url" in declared:
        return skip("the client declared URL-mode elicitation")
    if answer is None:
        return fail("the URL-mode elicitation was never answered", [init, request])
    error = answer["message"].get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if code != -32602 or "result" in answer["message"]:
        return fail(
            f"the undeclared mode was answered with {answer['message']!r}, not error -32602",
            [init, request, answer],
        )
    return passed("the undeclared URL mode was refused with -32602", [init, request, answer])


@check(
    "features.elicitation-complete-unknown-ignored",
    requirements=["ELICIT"],
    level="MUST",
    revisions=("2025-11-25",),
    spec="client/elicitation#url-mode-elicitation-requests",
    description="notifications/elicitation/complete for an unknown elicitation id is ignored: "
    "the call it arrived with completes",
    feature="elicitation",
)
def elicitation_complete_unknown(run: ScenarioRun) -> Verdict:
    sent, operation = tool_calls(run, "ask-url"), first_operation(run, "call_tool", "ask-url")
    if not sent or operation is None or response_to(run, sent[0]) is None:
        return missing(run, "an answered tools/call of ask-url")
    evidence = [sent[0], *op_evidence(operation)]
    if not operation.ok or (operation.value or {}).get("content") != [
        {"type": "text", "text": "done"}
    ]:
        return fail(
            f"the call failed after an unknown elicitation/complete: {operation.error}", evidence
        )
    return passed("the unknown elicitation/complete was ignored", evidence)


async def ask_twice(session: Session) -> None:
    if (await session.connect()).ok:
        listed = await session.call("list_tools")
        names = [t.get("name") for t in (listed.value or {}).get("tools", [])] if listed.ok else []
        for name in ("ask", "ask-url"):
            if name in names:
                await session.call("call_tool", name, {})


async def list_wait_and_add(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await anyio.sleep(0.5)  # the batch arrives
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "features.batch-accepted",
    requirements=["RPC-6b", "PING"],
    level="MUST",
    revisions=("2025-03-26",),
    spec="basic/index#batching",
    description="A JSON-RPC batch from the server (a notification and a ping) is accepted: "
    "the ping in it is answered with an empty result and the session goes on",
    feature="tools",
)
def batch_accepted(run: ScenarioRun) -> Verdict:
    batch = next((e for e in run.of_kind("fault") if "srv-batch-ping" in json.dumps(e)), None)
    if batch is None:
        batch = next(
            (e for e in run.of_kind("sse_event") if "srv-batch-ping" in json.dumps(e)), None
        )
    if batch is None:
        return missing(run, "the server's batch")
    answer = answer_to(run, "srv-batch-ping")
    if answer is None:
        return fail("the ping inside the batch was never answered", [batch])
    if answer["message"].get("result") != {}:
        return fail(f"the batched ping was answered with {answer['message']!r}", [batch, answer])
    operation, sent = first_operation(run, "call_tool", "add"), tool_calls(run, "add")
    if operation is None or not sent or response_to(run, sent[0]) is None:
        return missing(run, "an answered tools/call of add after the batch")
    if not operation.ok:
        return fail(
            f"the call after the batch failed: {operation.error}",
            [batch, answer, *op_evidence(operation)],
        )
    return passed(
        "the batch was accepted and its ping answered", [batch, answer, *op_evidence(operation)]
    )


SCENARIOS: list[Scenario] = [
    Scenario(
        "features-server-requests",
        "features/server-requests.json",
        checks=(
            "features.ping-answered",
            "features.ping-before-initialized",
            "features.roots-answer",
            "features.sampling-answer",
            "jsonrpc.answers-well-formed",
            "lifecycle.declares-client-features",
            "features.set-level-only-if-declared",
        ),
        drive=connect_and_call,
        description="a ping ahead of the initialize response; a ping, roots/list and "
        "sampling/createMessage ahead of a tools/call response",
        handlers=ALL_HANDLERS,
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-server-ids",
        "features/server-ids.json",
        checks=("jsonrpc.answer-ids-exact", "jsonrpc.answers-well-formed"),
        drive=connect_and_call,
        description='pings with the ids 0, 9007199254740993 and "0" ahead of a tools/call response',
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-sampling-tools",
        "features/sampling-tools.json",
        checks=(
            "features.sampling-tools-declared",
            "features.sampling-tool-history-checked",
            "jsonrpc.answers-well-formed",
        ),
        drive=connect_and_call,
        description="2025-11-25: a sampling request offering a tool, then two with a broken "
        "tool history, ahead of a tools/call response",
        handlers=ALL_HANDLERS,
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-cancellation",
        "features/cancellation.json",
        checks=(
            "features.timeout-cancels",
            "features.cancel-notifies",
            "features.cancel-only-in-flight",
            "features.cancel-races-survived",
            "lifecycle.initialize-not-cancelled",
        ),
        drive=cancel_and_race,
        description="a call that times out, a call the caller abandons (its response comes "
        "late), a cancellation of an unknown id, then a call that must work",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-cancellation-2026",
        "features/cancellation-2026.json",
        checks=(
            "features.timeout-cancels",
            "features.cancel-notifies",
            "features.cancel-only-in-flight",
            "features.cancel-races-survived",
        ),
        drive=cancel_and_race,
        description="2026 stdio: a call that times out, a call the caller abandons (its "
        "response comes late), then a call that must work",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-progress",
        "features/progress.json",
        checks=(
            "features.progress-tokens",
            "features.progress-accepted",
            "features.set-level-only-if-declared",
        ),
        drive=call_with_progress,
        description="two concurrent calls with progress; fractional progress with messages",
        requires=frozenset({"tools", "progress"}),
    ),
    Scenario(
        "features-progress-2024",
        "features/progress-2024.json",
        checks=(
            "features.progress-tokens",
            "features.progress-accepted",
            "features.set-level-only-if-declared",
        ),
        drive=call_with_progress,
        description="2024-11-05: two concurrent calls with progress; fractional progress",
        requires=frozenset({"tools", "progress"}),
    ),
    Scenario(
        "features-logging",
        "features/logging.json",
        checks=("features.log-messages-accepted",),
        drive=connect_log_and_call,
        description="log messages ahead of the initialize response, on their own, and ahead of a response",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-logging-2026",
        "features/logging-2026.json",
        checks=("features.log-messages-accepted",),
        drive=connect_and_add,
        description="2026: log messages on the streams of a tools/list and a tools/call",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-resources-prompts",
        "features/resources-prompts.json",
        checks=(
            "features.resources-listed-and-read",
            "features.resource-not-found",
            "features.prompts-listed-and-got",
            "features.prompt-not-found",
        ),
        drive=resources_and_prompts,
        description="resources and prompts in two pages each; a read, a get, and both not found",
        requires=frozenset({"resources", "prompts"}),
    ),
    Scenario(
        "features-resources-prompts-2026",
        "features/resources-prompts-2026.json",
        checks=(
            "features.resources-listed-and-read",
            "features.resource-not-found",
            "features.prompts-listed-and-got",
            "features.prompt-not-found",
            "features.legacy-not-found-accepted",
        ),
        drive=resources_and_prompts_then_legacy_code,
        description="resources and prompts in two pages each; a read, a get, and both not "
        "found; a read refused with the pre-2026 code -32002, then another get",
        requires=frozenset({"resources", "prompts"}),
    ),
    Scenario(
        "features-elicitation",
        "features/elicitation.json",
        checks=(
            "features.elicitation-answer",
            "lifecycle.declares-client-features",
            "jsonrpc.answers-well-formed",
        ),
        drive=ask_twice,
        description="an elicitation without a mode ahead of a tools/call response",
        handlers=ALL_HANDLERS,
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-elicitation-modes",
        "features/elicitation-modes.json",
        checks=(
            "features.elicitation-answer",
            "features.elicitation-undeclared-mode",
            "features.elicitation-complete-unknown-ignored",
        ),
        drive=ask_twice,
        description="2025-11-25: form elicitation without a mode, a URL-mode elicitation, "
        "and an elicitation/complete for an unknown id",
        handlers=ALL_HANDLERS,
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "features-batch",
        "features/batch.json",
        checks=("features.batch-accepted",),
        drive=list_wait_and_add,
        description="2025-03-26: a batch of a log notification and a ping from the server",
        requires=frozenset({"tools"}),
    ),
]
