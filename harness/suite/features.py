"""Utilities and client features: ping, cancellation, progress, logging, resources,
prompts, roots, sampling, elicitation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio

from harness.clients import Handlers
from harness.judging import (
    Clause,
    Status,
    Trigger,
    Verdict,
    check,
    clause,
    client_sent,
    passed,
    server_sent,
    silent,
    skip,
    trigger,
    violated,
)
from harness.protocol import same_json, validate_definition
from harness.running import Entries, Operation, Scenario, ScenarioRun, Session
from harness.suite._evidence import (
    HANDSHAKE,
    STATELESS,
    cancellations,
    cancelled_by_notification,
    cancelled_id,
    first_operation,
    is_empty_result,
    missing,
    never_answered,
    op_evidence,
    operations_with,
    overtaken,
    params_of,
    requests_with,
    response_to,
    result_of,
    same_id,
    tool_calls,
)
from harness.suite.utilities import SET_LEVEL_ASKED
from harness.suite.utilities import set_level_only_if_declared as set_level_rule

__all__ = ["SCENARIOS", "answer_to", "cancel_and_race", "server_request"]

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
THREE = [{"type": "text", "text": "3"}]
"""What the add tool (1 + 2) answers in every script of this module."""


# -- reading the transcript ---------------------------------------------------------------


def _is_server_request(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    return (
        entry["kind"] == "message"
        and entry.get("direction") == "server"
        and isinstance(message, dict)
        and "method" in message
        and "id" in message
    )


def _is_client_answer(entry: Mapping[str, Any]) -> bool:
    return (
        entry["kind"] == "message"
        and entry.get("direction") == "client"
        and "method" not in entry["message"]
        and "id" in entry["message"]
    )


def server_request(run: ScenarioRun, request_id: str | int) -> dict[str, Any] | None:
    """The transcript entry of the server request with this id."""
    return next(
        (
            e
            for e in run.entries
            if _is_server_request(e) and same_id(e["message"].get("id"), request_id)
        ),
        None,
    )


def answer_to(run: ScenarioRun, request_id: str | int) -> dict[str, Any] | None:
    """The client's answer (a response entry) to the server request with this id."""
    request = server_request(run, request_id)
    after = request["seq"] if request is not None else -1
    return next(
        (
            e
            for e in run.entries
            if e["seq"] > after
            and _is_client_answer(e)
            and same_id(e["message"].get("id"), request_id)
        ),
        None,
    )


def _unanswered(entries: Entries) -> list[Any]:
    """The ids of the server requests the client has not answered yet."""
    waiting: list[Any] = []
    for entry in entries:
        if _is_server_request(entry):
            waiting.append(entry["message"]["id"])
        elif _is_client_answer(entry):
            answered = entry["message"]["id"]
            waiting = [i for i in waiting if not same_id(i, answered)]
    return waiting


def _the(entry: dict[str, Any] | None, what: str) -> dict[str, Any]:
    """An entry the check's trigger guarantees (its absence is a bug of the check)."""
    if entry is None:
        raise LookupError(f"{what} is missing although the trigger found it")
    return entry


def _server_capabilities(run: ScenarioRun) -> dict[str, Any]:
    """What the server declared in its initialize result ({} without one)."""
    init = next(iter(run.requests("initialize")), None)
    response = response_to(run, init) if init is not None else None
    result = response["message"].get("result") if response is not None else None
    capabilities = result.get("capabilities") if isinstance(result, dict) else None
    return capabilities if isinstance(capabilities, dict) else {}


def _client_capabilities(run: ScenarioRun) -> dict[str, Any]:
    """What the client declared in its initialize request ({} without one)."""
    init = next(iter(run.requests("initialize")), None)
    params = init["message"].get("params") if init is not None else None
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    return capabilities if isinstance(capabilities, dict) else {}


def _request_sent(request_id: str | int) -> Trigger:
    """Trigger: the server sent its request with this id to the client."""

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        request = server_request(run, request_id)
        return [request] if request is not None else []

    return trigger(f"the server sent its request {request_id!r}", find)


def _failure(operation: Operation) -> str | None:
    """How the operation failed, in words (None: it returned a value)."""
    error = operation.error
    if error is None:
        return None
    if operation.hung:
        return f"it hung (no answer within {operation.seconds:.1f} s)"
    if not operation.reported:
        return f"the client crashed ({error.get('message')})"
    return f"it failed ({error.get('kind')} error: {error.get('message')})"


def _surfaced_wrong(operation: Operation, member: str, expected: Any) -> str | None:
    """What is wrong with what the operation surfaced under `member` (None: it returned
    exactly `expected` there, as JSON)."""
    failure = _failure(operation)
    if failure is not None:
        return failure
    value = operation.value.get(member) if isinstance(operation.value, dict) else None
    return None if same_json(value, expected) else f"it surfaced {member} {value!r}"


# -- the clauses the checks rest on ------------------------------------------------------------

_JSON_RPC = "MUST follow the JSON-RPC 2.0 specification"


def _json_rpc(revisions: tuple[str, ...], branch: str = "") -> list[Clause]:
    """The general clause that every message follows JSON-RPC 2.0 (so a request the client
    received gets a well-formed response): on basic/messages at 2024-11-05, on basic/index
    after, at those of `revisions` the check is judged at."""
    early = [r for r in revisions if r == "2024-11-05"]
    later = [r for r in revisions if r != "2024-11-05"]
    return [
        *([clause("basic/messages", _JSON_RPC, *early, branch=branch)] if early else []),
        *([clause("basic/index", _JSON_RPC, *later, branch=branch)] if later else []),
    ]


PING = "basic/utilities/ping"
_PING_ANSWERED = "receiver MUST respond promptly with an empty response"


# -- answers to server requests --------------------------------------------------------------


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


def _result_problem(message: Mapping[str, Any], revision: str, definition: str) -> str | None:
    """What keeps a response that is no error from being a well-formed `definition`
    result (None: nothing)."""
    problem = _shape_problem(message)
    if problem is None:
        violations = validate_definition(message["result"], revision, definition)
        if violations:
            return f"the result is no {definition}: {violations[0]}"
    return problem


def _answer(run: ScenarioRun, request_id: str, definition: str) -> Verdict:
    """The client MUST answer the server request `request_id` with a well-formed
    `definition` (PASS, its evidence the request and the answer): never answering, or a
    malformed answer, is the violation; an error answer is branch "error-answer" (the
    pages let a client refuse some requests with an error)."""
    request = _the(server_request(run, request_id), f"the server request {request_id!r}")
    method = request["message"]["method"]
    answer = answer_to(run, request_id)
    if answer is None:
        return never_answered(
            run,
            request,
            f"the client never answered the server's {method} ({request_id!r})",
            [request],
        )
    evidence = [request, answer]
    message = answer["message"]
    if "error" in message and _shape_problem(message) is None:
        return violated(
            f"the answer to {method} ({request_id!r}) is wrong: it is the error {message['error']}",
            evidence,
            clause="error-answer",
        )
    problem = _result_problem(message, run.revision, definition)
    if problem is not None:
        return violated(f"the answer to {method} ({request_id!r}) is wrong: {problem}", evidence)
    return passed(f"{method} ({request_id!r}) was answered with a {definition}", evidence)


def _result_in(answered: Verdict) -> Any:
    """The result of the answer a passed `_answer` verdict holds."""
    return answered.evidence[1]["message"]["result"]


def _empty(answered: Verdict) -> Verdict:
    """The ping's answer, well-formed, is an empty result."""
    result = _result_in(answered)
    if not is_empty_result(result):
        return violated(
            f"the ping was answered with {result!r}, not an empty result", answered.evidence
        )
    return passed("the ping was answered with an empty result", answered.evidence)


async def connect_and_call(session: Session, tool: str = "ask") -> None:
    """Connect, list, call `tool` (the server's requests come ahead of its response), and
    wait until the client has answered them all (or the wait's bound)."""
    if (await session.connect()).ok:
        await session.call("list_tools")
        await session.call("call_tool", tool, {})
        await session.until("answers to every server request", lambda e: not _unanswered(e))


@check(
    "features.ping-answered",
    requirements=["PING", "RPC-4"],
    clauses=[
        clause(PING, _PING_ANSWERED),
        # An error is no empty response either.
        clause(PING, _PING_ANSWERED, branch="error-answer"),
    ],
    revisions=HANDSHAKE,
    spec="basic/utilities/ping",
    description="A server ping during the session is answered promptly with an empty result",
    trigger=_request_sent("srv-ping"),
)
def ping_answered(run: ScenarioRun) -> Verdict:
    answered = _answer(run, "srv-ping", "EmptyResult")
    return _empty(answered) if answered.status is Status.PASS else answered


@check(
    "features.ping-before-initialized",
    requirements=["PING", "RPC-4"],
    clauses=[
        clause(PING, _PING_ANSWERED),
        # An error is no empty response either.
        clause(PING, _PING_ANSWERED, branch="error-answer"),
    ],
    revisions=HANDSHAKE,
    spec="basic/utilities/ping",
    description="A server ping sent before the initialize response is answered with an empty result",
    trigger=_request_sent("srv-early-ping"),
    # The mock awaits the answer before it answers initialize: no answer, no connection.
    independent_of=("client.connect",),
)
def ping_before_initialized(run: ScenarioRun) -> Verdict:
    answered = _answer(run, "srv-early-ping", "EmptyResult")
    return _empty(answered) if answered.status is Status.PASS else answered


_EXACT_IDS: tuple[int | str, ...] = (0, 9007199254740993, "0")


def _exact_id_pings(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The server's pings with each of the ids _EXACT_IDS (all of them, or none)."""
    requests = [server_request(run, wanted) for wanted in _EXACT_IDS]
    return [r for r in requests if r is not None] if all(requests) else []


@check(
    "jsonrpc.answer-ids-exact",
    requirements=["RPC-1", "RPC-4"],
    clauses=[
        clause("basic/messages", "Responses MUST include the same ID as the request", "2024-11-05"),
        clause(
            "basic/index",
            "Responses MUST include the same ID as the request",
            "2025-03-26",
            "2025-06-18",
        ),
        clause("basic/index", "Result responses MUST include the same ID", "2025-11-25"),
    ],
    revisions=HANDSHAKE,
    spec="basic/index#responses",
    description='Server requests with the ids 0, 9007199254740993 (beyond 2^53) and "0" '
    "are each answered under exactly their id: same value, same JSON type",
    trigger=trigger('the server sent pings with the ids 0, 2^53 + 1 and "0"', _exact_id_pings),
)
def answer_ids_exact(run: ScenarioRun) -> Verdict:
    answers = [e for e in run.client_messages() if _is_client_answer(e)]
    evidence: list[dict[str, Any]] = []
    for wanted, request in zip(_EXACT_IDS, _exact_id_pings(run), strict=True):
        exact = answer_to(run, wanted)
        if exact is None:
            near = [a for a in answers if str(a["message"]["id"]).startswith(str(wanted)[:8])]
            shown = ", ".join(repr(a["message"]["id"]) for a in near) or "none"
            return violated(
                f"the ping with id {wanted!r} got no answer under that id (near ids: {shown})",
                [dict(request), *near[:2]],
            )
        evidence += [dict(request), exact]
    return passed("each ping was answered under exactly its own id", evidence)


def _file_roots(answered: Verdict) -> Verdict:
    """The roots of the answer, well-formed, are those given, each a file:// URI."""
    roots, evidence = _result_in(answered).get("roots"), answered.evidence
    uris = [r.get("uri") for r in roots if isinstance(r, dict)] if isinstance(roots, list) else []
    if not uris:
        return violated(
            "the client answered roots/list with no roots although it was given some",
            evidence,
            clause="no-roots",
        )
    wrong = [u for u in uris if not (isinstance(u, str) and u.startswith("file://"))]
    if wrong:
        return violated(
            f"the root {wrong[0]!r} is not a file:// URI", evidence, clause="not-file-uri"
        )
    return passed(f"{len(uris)} roots, every one a file:// URI", evidence)


@check(
    "features.roots-answer",
    requirements=["ROOTS", "RPC-4"],
    clauses=[
        *_json_rpc(HANDSHAKE),
        clause("client/roots", "This MUST be a file:// URI", branch="not-file-uri"),
        silent(
            "client/roots binds a client to expose roots only with permission, never to "
            "expose the roots it was given",
            branch="no-roots",
        ),
        silent(
            "client/roots lets a client answer with an error (Clients SHOULD return standard "
            "JSON-RPC errors for failure cases)",
            branch="error-answer",
        ),
    ],
    revisions=HANDSHAKE,
    spec="client/roots",
    description="roots/list is answered with a ListRootsResult whose every root is a file:// URI",
    feature="roots",
    trigger=_request_sent("srv-roots"),
)
def roots_answer(run: ScenarioRun) -> Verdict:
    answered = _answer(run, "srv-roots", "ListRootsResult")
    return _file_roots(answered) if answered.status is Status.PASS else answered


_SAMPLING_REFUSED = (
    "client/sampling lets a client refuse a sampling request with an error (Clients SHOULD "
    "return errors for failure cases, a user's rejection among them)"
)


@check(
    "features.sampling-answer",
    requirements=["SAMPLING", "RPC-4"],
    clauses=[*_json_rpc(HANDSHAKE), silent(_SAMPLING_REFUSED, branch="error-answer")],
    revisions=HANDSHAKE,
    spec="client/sampling",
    description="sampling/createMessage is answered with a well-formed CreateMessageResult",
    feature="sampling",
    trigger=_request_sent("srv-sampling"),
)
def sampling_answer(run: ScenarioRun) -> Verdict:
    return _answer(run, "srv-sampling", "CreateMessageResult")


def _sampling_tools_declared(run: ScenarioRun) -> bool:
    sampling = _client_capabilities(run).get("sampling")
    return isinstance(sampling, dict) and isinstance(sampling.get("tools"), dict)


def _uses_tools(result: Any) -> bool:
    content = result.get("content") if isinstance(result, dict) else None
    items = content if isinstance(content, list) else [content]
    return any(isinstance(i, dict) and i.get("type") == "tool_use" for i in items)


@check(
    "features.sampling-tools-declared",
    requirements=["SAMPLING", "LC-6"],
    clauses=[
        *_json_rpc(("2025-11-25",)),
        clause(
            "client/sampling",
            "Clients MUST declare support for tool use",
            branch="tool-use-undeclared",
        ),
        silent(_SAMPLING_REFUSED, branch="error-answer"),
    ],
    revisions=("2025-11-25",),
    spec="client/sampling#tools-in-sampling",
    description="A sampling request that offers tools is answered with tool use only by a "
    "client that declared sampling.tools, and one that declared it answers it properly",
    feature="sampling",
    trigger=_request_sent("srv-sampling-tools"),
)
def sampling_tools_declared(run: ScenarioRun) -> Verdict:
    if _sampling_tools_declared(run):
        return _answer(run, "srv-sampling-tools", "CreateMessageResult")
    request = _the(server_request(run, "srv-sampling-tools"), "the tool-enabled sampling request")
    answer = answer_to(run, "srv-sampling-tools")
    if answer is None:
        return never_answered(
            run, request, "the client never answered the tool-enabled sampling request", [request]
        )
    evidence = [request, answer]
    if _uses_tools(answer["message"].get("result")):
        return violated(
            "the client answered with tool use without declaring sampling.tools",
            evidence,
            clause="tool-use-undeclared",
        )
    return passed("without sampling.tools declared, the answer used no tools", evidence)


_BROKEN_HISTORIES = ("srv-sampling-mixed", "srv-sampling-unmatched")


def _broken_history_requests(run: ScenarioRun) -> list[Mapping[str, Any]]:
    requests = [server_request(run, request_id) for request_id in _BROKEN_HISTORIES]
    return [r for r in requests if r is not None] if all(requests) else []


@check(
    "features.sampling-tool-history-checked",
    requirements=["SAMPLING"],
    clauses=[
        *_json_rpc(("2025-11-25",)),
        clause(
            "client/sampling",
            "Clients SHOULD return errors for common failure cases",
            branch="not-refused",
        ),
    ],
    revisions=("2025-11-25",),
    spec="client/sampling#error-handling",
    description="A client that declared sampling.tools answers a sampling request whose tool "
    "results are mixed with other content, or missing, with -32602",
    feature="sampling",
    trigger=trigger(
        "the server sent sampling requests with a broken tool history", _broken_history_requests
    ),
)
def sampling_tool_history_checked(run: ScenarioRun) -> Verdict:
    if not _sampling_tools_declared(run):
        return skip("the client does not declare sampling.tools")
    evidence: list[dict[str, Any]] = []
    for request_id, request in zip(_BROKEN_HISTORIES, _broken_history_requests(run), strict=True):
        answer = answer_to(run, request_id)
        if answer is None:
            return violated(f"the client never answered {request_id}", [*evidence, dict(request)])
        evidence += [dict(request), answer]
        error = answer["message"].get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if not same_json(code, -32602):
            return violated(
                f"{request_id} was answered with {answer['message']}, not -32602",
                evidence,
                clause="not-refused",
            )
    return passed("both broken tool histories were refused with -32602", evidence)


def _invalid_answers(run: ScenarioRun) -> list[dict[str, Any]]:
    """What the client sent as answers (an id, no method) that are not JSON-RPC at all."""
    found = []
    for entry in run.of_kind("invalid"):
        try:
            value = json.loads(entry.get("raw") or "")
        except ValueError:
            continue
        if isinstance(value, dict) and "method" not in value and "id" in value:
            found.append(entry)
    return found


def _client_answers(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The client's answers to server requests, JSON-RPC or not."""
    return [*_invalid_answers(run), *(e for e in run.client_messages() if _is_client_answer(e))]


@check(
    "jsonrpc.answers-well-formed",
    requirements=["RPC-4"],
    clauses=[
        *_json_rpc(HANDSHAKE),
        clause("basic/messages", "Either a result or an error MUST be set", "2024-11-05"),
        clause("basic/messages", "A response MUST NOT set both", "2024-11-05"),
        clause("basic/messages", "Error codes MUST be integers", "2024-11-05"),
        clause("basic/index", "Either a result or an error MUST be set", *HANDSHAKE[1:3]),
        clause("basic/index", "A response MUST NOT set both", *HANDSHAKE[1:3]),
        clause("basic/index", "errors MUST include an error code and message", *HANDSHAKE[1:3]),
        clause("basic/index", "Result responses MUST include a result field", "2025-11-25"),
        clause("basic/index", "Error responses MUST include an error field", "2025-11-25"),
        clause("basic/index", "Error codes MUST be integers", *HANDSHAKE[1:]),
    ],
    revisions=HANDSHAKE,
    spec="basic/index#responses",
    description="Every answer to a server request has exactly one of result and error, an error an integer code and a message",
    trigger=trigger("the client answered a server request", _client_answers),
    # An answer so malformed that it is no JSON-RPC message is this check's violation too.
    independent_of=("jsonrpc.messages-valid",),
)
def answers_well_formed(run: ScenarioRun) -> Verdict:
    invalid = _invalid_answers(run)
    if invalid:
        return violated(
            f"an answer is no valid JSON-RPC response: {invalid[0].get('reason')}", invalid[:1]
        )
    answers = [dict(a) for a in _client_answers(run)]
    for entry in answers:
        problem = _shape_problem(entry["message"])
        if problem is not None:
            return violated(f"an answer is malformed: {problem}", [entry])
    return passed(f"{len(answers)} answers, each well-formed", answers[:4])


# -- cancellation -------------------------------------------------------------------------------

LIFECYCLE = "basic/lifecycle"
CANCELLATION = "basic/utilities/cancellation"
CANCELLATION_2026 = "basic/patterns/cancellation"
_IN_FLIGHT_ONLY = "Cancellation notifications MUST only reference requests that"
_RACES = "Both parties MUST handle these race conditions gracefully"


def _calls_in(entries: Entries, tool: str) -> list[dict[str, Any]]:
    """The client's tools/call requests of `tool` among these entries."""
    return [
        e
        for e in entries
        if e["kind"] == "message"
        and e.get("direction") == "client"
        and e["message"].get("method") == "tools/call"
        and "id" in e["message"]
        and same_json((e["message"].get("params") or {}).get("name"), tool)
    ]


def _late_response_or_stream_end(tool: str, entries: Entries) -> bool:
    """Whether the server's response to the first tools/call of `tool` is in the entries,
    or the HTTP request that carried the call has ended (the client closed its stream,
    so no response can arrive any more)."""
    calls = _calls_in(entries, tool)
    if not calls:
        return False
    call = calls[0]
    channel = str(call.get("channel", ""))
    return any(
        (
            e["kind"] == "message"
            and e.get("direction") == "server"
            and "method" not in e["message"]
            and same_id(e["message"].get("id"), call["message"]["id"])
        )
        or (e["kind"] == "http_end" and channel == f"http:{e.get('request')}")
        for e in entries
    )


async def abandon_once_sent(session: Session, tool: str) -> None:
    """Call `tool` and give the call up (cancel the task awaiting it, as a caller does)
    as soon as the server has its request."""
    async with anyio.create_task_group() as group:
        group.start_soon(partial(session.call, "call_tool", tool, {}))
        await session.until(
            f"the server has the tools/call of {tool}",
            lambda entries: bool(_calls_in(entries, tool)),
        )
        group.cancel_scope.cancel()


async def cancel_and_race(session: Session) -> None:
    """A call the client's own time-out ends (LC-9), a call the caller abandons whose
    response arrives late anyway (CANCEL), then a call that must still work."""
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "hang", {}, timeout=session.provoked_timeout)
    await abandon_once_sent(session, "slow")
    await session.until(
        "the late response to the abandoned call, or the end of its stream",
        partial(_late_response_or_stream_end, "slow"),
    )
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "features.timeout-cancels",
    requirements=["LC-9", "CANCEL"],
    clauses=[
        clause(LIFECYCLE, "the sender SHOULD issue a cancellation notification", *HANDSHAKE[1:]),
        clause(CANCELLATION_2026, "the sender SHOULD cancel the request and stop", *STATELESS),
        clause(
            LIFECYCLE,
            "SDKs and other middleware SHOULD allow these timeouts",
            *HANDSHAKE[1:],
            branch="timeout-ignored",
        ),
        clause(
            CANCELLATION_2026,
            "SDKs and other middleware SHOULD allow these timeouts",
            *STATELESS,
            branch="timeout-ignored",
        ),
        silent(
            "no sentence says how a client reports a request its own time-out ended to its "
            "caller: that is its API",
            branch="misreported",
        ),
    ],
    revisions=(*HANDSHAKE[1:], *STATELESS),
    spec="basic/lifecycle#timeouts",
    description="A request that times out (the caller's timeout=) is reported as a time-out "
    "and cancelled with notifications/cancelled naming its id",
    feature="tools",
    trigger=client_sent("tools/call", name="hang"),
)
def timeout_cancels(run: ScenarioRun) -> Verdict:
    request = tool_calls(run, "hang")[0]
    operation = _the_operation(run, "call_tool", "hang")
    evidence = [request, *op_evidence(operation)]
    error = operation.error
    if error is None:
        return violated(
            "a call the server never answered was reported as a success",
            evidence,
            clause="misreported",
        )
    if operation.hung:
        return violated(
            f"the client ignored the caller's time-out: the call hung until the harness gave "
            f"up after {operation.seconds:.1f} s",
            evidence,
            clause="timeout-ignored",
        )
    if error.get("kind") != "timeout":
        return violated(
            f"the time-out was not reported as one: {_failure(operation)}",
            evidence,
            clause="misreported",
        )
    return cancelled_by_notification(
        run, "hang", violated, what="the timed-out request", context=op_evidence(operation)
    )


def _the_operation(run: ScenarioRun, op: str, first_arg: Any) -> Operation:
    """An operation the check's trigger guarantees the harness asked for."""
    operation = first_operation(run, op, first_arg)
    if operation is None:
        raise LookupError(f"no {op}({first_arg!r}) although the trigger found its request")
    return operation


@check(
    "features.cancel-notifies",
    requirements=["CANCEL", "HT-5"],
    clauses=[
        silent(
            "before 2026-07-28 cancelling is optional ('Either side can send a cancellation "
            "notification'); only Streamable HTTP asks a client to cancel by notification",
            *HANDSHAKE,
        ),
        clause(CANCELLATION_2026, "A client SHOULD send a cancellation notification", *STATELESS),
        clause(
            "basic/transports",
            "To cancel, the client SHOULD explicitly send an MCP CancelledNotification",
            *HANDSHAKE[1:],
            branch="streamable-http",
        ),
        silent(
            "at 2026-07-28 closing a request's stream is its cancellation on Streamable HTTP; "
            "no notifications/cancelled is expected there",
            *STATELESS,
            branch="streamable-http",
        ),
    ],
    spec="basic/utilities/cancellation",
    description="Abandoning a call (cancelling the task that awaits it) sends "
    "notifications/cancelled with that request's id",
    feature="cancel",
    trigger=client_sent("tools/call", name="slow"),
)
def cancel_notifies(run: ScenarioRun) -> Verdict:
    if run.transport == "http":
        return cancelled_by_notification(run, "slow", partial(violated, clause="streamable-http"))
    return cancelled_by_notification(run, "slow", violated)


@check(
    "features.cancel-only-in-flight",
    requirements=["CANCEL", "LC-8"],
    clauses=[
        clause(CANCELLATION, _IN_FLIGHT_ONLY, *HANDSHAKE),
        clause(CANCELLATION_2026, _IN_FLIGHT_ONLY, *STATELESS),
        clause(
            CANCELLATION,
            "The initialize request MUST NOT be cancelled by clients",
            *HANDSHAKE,
            branch="initialize",
        ),
    ],
    spec="basic/utilities/cancellation",
    description="Every notifications/cancelled names a request the client sent and had no "
    "response to yet (never initialize)",
    feature="cancel",
    trigger=client_sent("notifications/cancelled"),
)
def cancel_only_in_flight(run: ScenarioRun) -> Verdict:
    # A cancellation that crosses its response on the wire is the race the spec allows
    # (the client still believed the request in progress). The scenarios rule it out: the
    # abandoned call's response waits for the cancellation (`after_cancel`), and the
    # timed-out call is never answered. A response sent before the cancellation is then
    # one the client had been given.
    cancels = cancellations(run)
    for cancel in cancels:
        named = cancelled_id(cancel)
        request = next(
            (
                r
                for r in run.requests()
                if r["seq"] < cancel["seq"] and same_id(r["message"]["id"], named)
            ),
            None,
        )
        if request is None:
            if overtaken(run, cancel):
                continue  # sent after its request, on another connection: in flight
            return violated(f"the client cancelled {named!r}, a request it never sent", [cancel])
        if request["message"].get("method") == "initialize":
            return violated(
                "the client cancelled its initialize request",
                [request, cancel],
                clause="initialize",
            )
        response = response_to(run, request)
        if response is not None and response["seq"] < cancel["seq"]:
            return violated(
                f"the client cancelled {named!r} after its response had arrived",
                [request, response, cancel],
            )
    return passed(f"{len(cancels)} cancellations, each of a request in flight", cancels[:3])


def _late_response_after_cancel(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The client's notifications/cancelled for its call of slow, and the server's response
    to that call arriving after it (the race), or nothing."""
    calls = tool_calls(run, "slow")
    if not calls:
        return []
    request = calls[0]
    cancel = next(
        (
            c
            for c in cancellations(run)
            if c["seq"] > request["seq"] and same_id(cancelled_id(c), request["message"]["id"])
        ),
        None,
    )
    late = response_to(run, request)
    if cancel is None or late is None or late["seq"] < cancel["seq"]:
        return []
    return [cancel, late]


@check(
    "features.cancel-races-survived",
    requirements=["CANCEL"],
    # Before 2026-07-28 the call also follows the server's cancellation of an id the client
    # never saw ("Invalid cancellation notifications SHOULD be ignored"). The client cannot
    # tell that id from one it has already answered, whose cancellation crossed its answer:
    # the race both parties MUST handle. Nor can the transcript tell which of the two broke
    # the call (both come before it), so the check rests on the MUST.
    clauses=[
        clause(CANCELLATION, _RACES, *HANDSHAKE),
        clause(CANCELLATION_2026, _RACES, *STATELESS),
    ],
    spec="basic/utilities/cancellation#timing-considerations",
    description="A response arriving after the client cancelled its request, and (before "
    "2026-07-28) a notifications/cancelled for an id the client never saw, are ignored: the "
    "next call works",
    feature="tools",
    trigger=trigger(
        "the response to a cancelled request arrived after the client's notifications/cancelled",
        _late_response_after_cancel,
    ),
)
def cancel_races(run: ScenarioRun) -> Verdict:
    race = [dict(e) for e in _late_response_after_cancel(run)]
    operation = first_operation(run, "call_tool", "add")
    if operation is None:
        return missing(run, "a tools/call of add after the late response")
    evidence = [*race, *op_evidence(operation)]
    wrong = _surfaced_wrong(operation, "content", THREE)
    if wrong is None:
        return passed("the late response was ignored: the next call worked", evidence)
    return violated(f"after the races the next call did not work: {wrong}", evidence)


# -- progress -----------------------------------------------------------------------------------


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


PROGRESS = "basic/utilities/progress"
PROGRESS_2026 = "basic/patterns/progress"


def _two_work_calls(run: ScenarioRun) -> list[Mapping[str, Any]]:
    calls: list[Mapping[str, Any]] = list(tool_calls(run, "work"))
    return calls if len(calls) >= 2 else []


@check(
    "features.progress-tokens",
    requirements=["PROG"],
    clauses=[
        clause(PROGRESS, "Progress tokens MUST be a string or integer value", *HANDSHAKE),
        clause(PROGRESS, "MUST be unique across all active requests", *HANDSHAKE),
        clause(PROGRESS_2026, "Progress tokens MUST be a string or integer value", *STATELESS),
        clause(PROGRESS_2026, "MUST be unique across all active requests", *STATELESS),
    ],
    spec="basic/utilities/progress",
    description="A call asking for progress carries a string or integer progressToken, "
    "unique among the requests in flight",
    feature="progress",
    trigger=trigger(
        "the client sent two concurrent tools/call asking for progress", _two_work_calls
    ),
)
def progress_tokens(run: ScenarioRun) -> Verdict:
    sent = tool_calls(run, "work")
    tokens = [_token(e) for e in sent]
    for token, entry in zip(tokens, sent, strict=True):
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            return violated(f"the progressToken {token!r} is not a string or an integer", [entry])
    for index, token in enumerate(tokens):
        if any(same_json(token, other) for other in tokens[index + 1 :]):
            return violated(f"two requests in flight share a progressToken: {tokens!r}", sent)
    return passed(f"progress tokens {tokens!r}: valid and distinct", sent)


@check(
    "features.progress-accepted",
    requirements=["PROG"],
    clauses=[
        silent(
            "the progress page lets the server send fractional progress and total (a MAY of "
            "the sender) but binds the client to nothing about receiving them"
        )
    ],
    spec="basic/utilities/progress",
    description="Fractional progress and total (with a message from 2025-03-26) are accepted: both calls "
    "complete with their results",
    feature="progress",
    trigger=server_sent("notifications/progress"),
)
def progress_accepted(run: ScenarioRun) -> Verdict:
    notices = server_sent("notifications/progress").find(run)
    calls = [o for o in run.operations if o.op == "call_tool"]
    evidence = [dict(notices[0]), *op_evidence(*calls)]
    for operation in calls:
        wrong = _surfaced_wrong(operation, "content", [{"type": "text", "text": "worked"}])
        if wrong is not None:
            return violated(f"a call with fractional progress did not complete: {wrong}", evidence)
    return passed("both calls completed after fractional progress with messages", evidence)


# -- logging ------------------------------------------------------------------------------------


async def connect_and_add(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")
        await session.call("call_tool", "add", {"a": 1, "b": 2})


def _log_on_its_own(entries: Entries) -> bool:
    """Whether the server's log message that belongs to no request (level warning, in
    features/logging.json) has been sent."""
    return any(
        e["kind"] == "message"
        and e.get("direction") == "server"
        and e["message"].get("method") == "notifications/message"
        and same_json((e["message"].get("params") or {}).get("level"), "warning")
        for e in entries
    )


async def connect_log_and_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.until("the log message on its own", _log_on_its_own, standalone=True)
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "features.log-messages-accepted",
    requirements=["LOG"],
    clauses=[
        silent(
            "server/utilities/logging binds the server (to declare logging, and what it may "
            "send), never the client to accept log messages at any time"
        )
    ],
    spec="server/utilities/logging",
    description="notifications/message at any time (ahead of the initialize response, on its "
    "own, ahead of a response; in 2026-07-28 on a request's stream) breaks nothing",
    feature="tools",
    trigger=server_sent("notifications/message"),
)
def log_messages(run: ScenarioRun) -> Verdict:
    notices = [dict(n) for n in server_sent("notifications/message").find(run)]
    operation = first_operation(run, "call_tool", "add")
    if operation is None:
        return missing(run, "a tools/call of add after the log messages")
    evidence = [*notices, *op_evidence(*run.operations)]
    for other in run.operations:
        failure = _failure(other)
        if failure is not None:
            return violated(f"{other.op} broke after log messages: {failure}", evidence)
    wrong = _surfaced_wrong(operation, "content", THREE)
    if wrong is not None:
        return violated(f"the call after log messages did not work: {wrong}", evidence)
    return passed(f"{len(notices)} log messages, and the session went on", evidence)


@check(
    "features.set-level-only-if-declared",
    requirements=["LOG", "LC-7"],
    # The list item "Only use capabilities that were successfully negotiated".
    clauses=[
        clause(
            "basic/lifecycle",
            "Both parties SHOULD: - Respect the negotiated protocol version",
            *HANDSHAKE[:2],
        ),
        clause(
            "basic/lifecycle",
            "Both parties MUST: - Respect the negotiated protocol version",
            *HANDSHAKE[2:],
        ),
    ],
    revisions=HANDSHAKE,
    spec="server/utilities/logging#capabilities",
    description="logging/setLevel is never sent to a server that did not declare logging "
    "(judged when the harness asks for a level, driver protocol 1.1 set_log_level, or a "
    "client sends it on its own)",
    trigger=SET_LEVEL_ASKED,
)
def set_level_only_if_declared(run: ScenarioRun) -> Verdict:
    return set_level_rule(run)


# -- resources and prompts ------------------------------------------------------------------------

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


def _first_page_with_cursor(method: str) -> Trigger:
    """Trigger: the server answered the client's `method` with a nextCursor (a next page)."""

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        for page in run.requests(method)[:1]:
            response = response_to(run, page)
            result = response["message"].get("result") if response is not None else None
            if response is not None and isinstance(result, dict) and "nextCursor" in result:
                return [page, response]
        return []

    return trigger(f"the server answered {method} with a nextCursor", find)


PAGINATION = "server/utilities/pagination"
_CURSORS_OPAQUE = "Clients MUST treat cursors as opaque tokens"
# The list item "Support both paginated and non-paginated flows".
_PAGINATION_SUPPORTED = "Clients SHOULD: - Treat a missing nextCursor"


def _paged_verdict(run: ScenarioRun, method: str, op: str, key: str) -> Verdict | None:
    """The violation unless the client sent the first page's nextCursor back verbatim
    (the check's own branch if it sent another cursor, "next-page" if it asked for no
    next page) and surfaced the items of every page ("not-surfaced"); None when it did.

    A client may list more than once (at connect, to fill a cache, and again when its
    application asks): the pages are told apart by the cursor that asked for them, and
    the items of a whole listing are each page's once, in the order first asked."""
    pages = run.requests(method)
    operation = run.operation(op)
    if operation is None:
        return missing(run, f"a {op} operation")
    evidence = [*pages, *op_evidence(operation)]
    sent = [params_of(p).get("cursor") for p in pages]
    asked: list[Any] = []  # the cursor of each page, first asking only
    every_item: list[Any] = []
    for page, cursor in zip(pages, sent, strict=True):
        if any(same_json(cursor, seen) for seen in asked):
            continue
        asked.append(cursor)
        items = result_of(response_to(run, page)).get(key)
        every_item.extend(items if isinstance(items, list) else [])
    first = next((p for p, cursor in zip(pages, sent, strict=True) if cursor is None), None)
    cursor = result_of(response_to(run, first)).get("nextCursor") if first is not None else None
    if cursor is None or not any(same_json(cursor, seen) for seen in asked):
        reason = f"{method} did not send the cursor {cursor!r} back verbatim: {sent!r}"
        if any(seen is not None for seen in asked):
            return violated(reason, evidence)  # a cursor, not the one it was given
        return violated(reason, evidence, clause="next-page")
    wrong = _surfaced_wrong(operation, key, every_item)
    if wrong is not None:
        return violated(
            f"{op} did not surface every page intact: {wrong}", evidence, clause="not-surfaced"
        )
    return None


def _surfaced_intact(
    run: ScenarioRun, request: Mapping[str, Any] | None, operation: Operation | None, key: str
) -> Verdict | None:
    """The violation ("not-surfaced") unless the operation surfaced the server's `key` of
    its answer intact."""
    response = response_to(run, request) if request is not None else None
    if request is None or response is None or operation is None:
        return missing(run, f"an answered request for {key}")
    evidence = [dict(request), *op_evidence(operation)]
    sent = (response["message"].get("result") or {}).get(key)
    wrong = _surfaced_wrong(operation, key, sent)
    if wrong is not None:
        return violated(
            f"the {key} were not surfaced intact: {wrong}", evidence, clause="not-surfaced"
        )
    return None


def _not_found_verdict(
    request: Mapping[str, Any], operation: Operation, codes: tuple[int, ...], what: str
) -> Verdict:
    """The server's not-found error to `request` surfaced as a protocol error with one of
    `codes`."""
    evidence = [dict(request), *op_evidence(operation)]
    error = operation.error or {}
    if operation.ok:
        return violated(f"the not-found error of {what} was surfaced as a result", evidence)
    if not operation.reported:
        return violated(
            f"the not-found error of {what} was never surfaced: {_failure(operation)}", evidence
        )
    if error.get("kind") != "protocol" or not any(same_json(error.get("code"), c) for c in codes):
        return violated(
            f"the not-found error of {what} was surfaced as {error.get('kind')} error "
            f"{error.get('code')}, not as protocol error {codes[0]}",
            evidence,
        )
    return passed(f"the not-found error of {what} was surfaced with its code", evidence)


@check(
    "features.resources-listed-and-read",
    requirements=["RES", "TL-1"],
    clauses=[
        clause(PAGINATION, _CURSORS_OPAQUE),
        clause(PAGINATION, _PAGINATION_SUPPORTED, branch="next-page"),
        silent(
            "no sentence binds a client to surface to its caller what it was answered: "
            "that is its API",
            branch="not-surfaced",
        ),
    ],
    spec="server/resources",
    description="resources/list follows nextCursor verbatim and surfaces every page; "
    "resources/read surfaces the contents intact",
    feature="resources",
    trigger=_first_page_with_cursor("resources/list"),
)
def resources_listed_and_read(run: ScenarioRun) -> Verdict:
    bad = _paged_verdict(run, "resources/list", "list_resources", "resources")
    if bad is not None:
        return bad
    reads = requests_with(run, "resources/read", "uri", NOTES_URI)
    read = reads[0] if reads else None
    bad = _surfaced_intact(run, read, first_operation(run, "read_resource", NOTES_URI), "contents")
    if bad is not None:
        return bad
    pages = run.requests("resources/list")
    return passed(
        "both pages of resources listed, and the resource read intact",
        [*pages, *([read] if read is not None else [])],
    )


@check(
    "features.resource-not-found",
    requirements=["RES", "RPC-7"],
    clauses=[
        silent(
            "server/resources#error-handling binds the server to its not-found code; no "
            "sentence binds the client to surface it as a protocol error with that code"
        )
    ],
    spec="server/resources#error-handling",
    description="A resource-not-found error (-32002; -32602 from 2026-07-28) to resources/read "
    "is surfaced as a protocol error with its code",
    feature="resources",
    trigger=client_sent("resources/read", uri=MISSING_URI),
)
def resource_not_found(run: ScenarioRun) -> Verdict:
    request = requests_with(run, "resources/read", "uri", MISSING_URI)[0]
    codes = (-32602, -32002) if run.revision in STATELESS else (-32002,)
    operation = _the_operation(run, "read_resource", MISSING_URI)
    return _not_found_verdict(request, operation, codes, "resources/read")


@check(
    "features.legacy-not-found-accepted",
    requirements=["RES", "RPC-7"],
    clauses=[clause("server/resources", "clients SHOULD also accept -32002")],
    revisions=STATELESS,
    spec="server/resources#error-handling",
    description="2026: a resources/read refused with the pre-2026 code -32002 is still surfaced "
    "as a not-found protocol error, and the client goes on working",
    feature="resources",
    trigger=client_sent("resources/read", uri=GONE_URI),
)
def legacy_not_found_accepted(run: ScenarioRun) -> Verdict:
    request = requests_with(run, "resources/read", "uri", GONE_URI)[0]
    read = _the_operation(run, "read_resource", GONE_URI)
    surfaced = _not_found_verdict(request, read, (-32002,), "resources/read")
    if surfaced.status is not Status.PASS:
        return violated(surfaced.reason, surfaced.evidence)
    after = operations_with(run, "get_prompt", "greet")[1:2]  # the get that follows the -32002 read
    evidence = [request, *op_evidence(read, *after)]
    if not after:
        return missing(run, "a prompts/get after the -32002 error")
    failure = _failure(after[0])
    if failure is not None:
        return violated(
            f"after the -32002 error the next request did not work: {failure}", evidence
        )
    return passed(
        "-32002 was surfaced as a not-found protocol error and the client went on", evidence
    )


@check(
    "features.prompts-listed-and-got",
    requirements=["PROMPTS", "TL-1"],
    clauses=[
        clause(PAGINATION, _CURSORS_OPAQUE),
        clause(PAGINATION, _PAGINATION_SUPPORTED, branch="next-page"),
        clause(
            "server/prompts",
            "Clients SHOULD handle pagination for large prompt lists",
            branch="next-page",
        ),
        silent(
            "no sentence binds a client to surface to its caller what it was answered: "
            "that is its API",
            branch="not-surfaced",
        ),
    ],
    spec="server/prompts",
    description="prompts/list follows nextCursor verbatim and surfaces every page; "
    "prompts/get sends the arguments and surfaces the messages intact",
    feature="prompts",
    trigger=_first_page_with_cursor("prompts/list"),
)
def prompts_listed_and_got(run: ScenarioRun) -> Verdict:
    bad = _paged_verdict(run, "prompts/list", "list_prompts", "prompts")
    if bad is not None:
        return bad
    gets = requests_with(run, "prompts/get", "name", "greet")
    get = gets[0] if gets else None
    bad = _surfaced_intact(run, get, first_operation(run, "get_prompt", "greet"), "messages")
    if bad is not None:
        return bad
    pages = run.requests("prompts/list")
    return passed(
        "both pages of prompts listed, and the prompt got intact",
        [*pages, *([get] if get is not None else [])],
    )


@check(
    "features.prompt-not-found",
    requirements=["PROMPTS", "RPC-7"],
    clauses=[
        silent(
            "server/prompts#error-handling binds the server to return -32602; no sentence "
            "binds the client to surface it as a protocol error with that code"
        )
    ],
    spec="server/prompts#error-handling",
    description="An unknown-prompt error (-32602) to prompts/get is surfaced as a protocol error with its code",
    feature="prompts",
    trigger=client_sent("prompts/get", name="nope"),
)
def prompt_not_found(run: ScenarioRun) -> Verdict:
    request = requests_with(run, "prompts/get", "name", "nope")[0]
    operation = _the_operation(run, "get_prompt", "nope")
    return _not_found_verdict(request, operation, (-32602,), "prompts/get")


# -- elicitation ---------------------------------------------------------------------------------

ELICIT_PAGE = "client/elicitation"
_MODELESS_IS_FORM = "Clients MUST treat requests without a mode field"


@check(
    "features.elicitation-answer",
    requirements=["ELICIT", "RPC-4"],
    clauses=[
        *_json_rpc(HANDSHAKE[2:]),
        clause(ELICIT_PAGE, _MODELESS_IS_FORM, "2025-11-25"),
        silent(
            "client/elicitation of 2025-06-18 says nothing of how a client answers, and a "
            "client may refuse a request with an error",
            "2025-06-18",
            branch="error-answer",
        ),
        # A client that treats the request as the form-mode request it is answers with
        # an ElicitResult (a user's decline is an action, not an error).
        clause(ELICIT_PAGE, _MODELESS_IS_FORM, "2025-11-25", branch="error-answer"),
    ],
    revisions=HANDSHAKE[2:],
    spec="client/elicitation",
    description="elicitation/create (without a mode: form mode) is answered with a "
    "well-formed ElicitResult",
    feature="elicitation",
    trigger=_request_sent("srv-elicit"),
)
def elicitation_answer(run: ScenarioRun) -> Verdict:
    return _answer(run, "srv-elicit", "ElicitResult")


@check(
    "features.elicitation-undeclared-mode",
    requirements=["ELICIT"],
    clauses=[
        *_json_rpc(("2025-11-25",)),
        clause(ELICIT_PAGE, "Clients MUST return standard JSON-RPC errors"),
    ],
    revisions=("2025-11-25",),
    spec="client/elicitation#error-handling",
    description="A URL-mode elicitation to a client that declared only form mode is "
    "answered with error -32602",
    feature="elicitation",
    trigger=_request_sent("srv-elicit-url"),
)
def elicitation_undeclared_mode(run: ScenarioRun) -> Verdict:
    declared = _client_capabilities(run).get("elicitation")
    if isinstance(declared, dict) and "url" in declared:
        return skip("the client declared URL-mode elicitation")
    request = _the(server_request(run, "srv-elicit-url"), "the URL-mode elicitation")
    answer = answer_to(run, "srv-elicit-url")
    if answer is None:
        return never_answered(
            run, request, "the URL-mode elicitation was never answered", [request]
        )
    evidence = [request, answer]
    error = answer["message"].get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if not same_json(code, -32602) or "result" in answer["message"]:
        return violated(
            f"the undeclared mode was answered with {answer['message']!r}, not error -32602",
            evidence,
        )
    return passed("the undeclared URL mode was refused with -32602", evidence)


@check(
    "features.elicitation-complete-unknown-ignored",
    requirements=["ELICIT"],
    clauses=[
        clause(
            ELICIT_PAGE, "MUST ignore notifications referencing unknown or already-completed IDs"
        )
    ],
    revisions=("2025-11-25",),
    spec="client/elicitation#url-mode-elicitation-requests",
    description="notifications/elicitation/complete for an unknown elicitation id is ignored: "
    "the call it arrived with completes",
    feature="elicitation",
    trigger=server_sent("notifications/elicitation/complete"),
)
def elicitation_complete_unknown(run: ScenarioRun) -> Verdict:
    notice = dict(server_sent("notifications/elicitation/complete").find(run)[0])
    operation = first_operation(run, "call_tool", "ask-url")
    if operation is None:
        return missing(run, "the tools/call of ask-url")
    evidence = [notice, *op_evidence(operation)]
    wrong = _surfaced_wrong(operation, "content", [{"type": "text", "text": "done"}])
    if wrong is not None:
        return violated(
            f"the call did not complete after an unknown elicitation/complete: {wrong}", evidence
        )
    return passed("the unknown elicitation/complete was ignored: the call completed", evidence)


async def ask_twice(session: Session) -> None:
    if (await session.connect()).ok:
        listed = await session.call("list_tools")
        names = [t.get("name") for t in (listed.value or {}).get("tools", [])] if listed.ok else []
        for name in ("ask", "ask-url"):
            if name in names:
                await session.call("call_tool", name, {})
        await session.until("answers to every server request", lambda e: not _unanswered(e))


# -- batches -------------------------------------------------------------------------------------

_BATCHED_PING = "srv-batch-ping"


def _batch_delivered(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The server's batch as delivered: written to stdout (stdio), or as an event on a
    stream the client had open (HTTP); a batch queued for a GET stream the client never
    opened was never delivered."""
    if run.transport == "stdio":
        return [e for e in run.of_kind("fault") if _BATCHED_PING in str(e.get("fault"))]
    return [e for e in run.of_kind("sse_event") if _BATCHED_PING in str(e.get("event"))]


def _batched_ping_answered(entries: Entries) -> bool:
    return any(_is_client_answer(e) and same_id(e["message"]["id"], _BATCHED_PING) for e in entries)


async def list_wait_and_add(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.until(
        "the answer to the ping in the server's batch", _batched_ping_answered, standalone=True
    )
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "features.batch-accepted",
    requirements=["RPC-6b", "PING"],
    clauses=[
        clause("basic/index", "MUST support receiving JSON-RPC batches"),
        clause(PING, _PING_ANSWERED),
    ],
    revisions=("2025-03-26",),
    spec="basic/index#batching",
    description="A JSON-RPC batch from the server (a notification and a ping) is accepted: "
    "the ping in it is answered with an empty result and the session goes on",
    feature="tools",
    trigger=trigger("the server's batch was delivered to the client", _batch_delivered),
)
def batch_accepted(run: ScenarioRun) -> Verdict:
    batch = dict(_batch_delivered(run)[0])
    answer = next(
        (
            e
            for e in run.client_messages()
            if e["seq"] > batch["seq"]
            and _is_client_answer(e)
            and same_id(e["message"]["id"], _BATCHED_PING)
        ),
        None,
    )
    if answer is None:
        return violated("the ping inside the batch was never answered", [batch])
    if not is_empty_result(answer["message"].get("result")):
        return violated(
            f"the batched ping was answered with {answer['message']!r}", [batch, answer]
        )
    operation = first_operation(run, "call_tool", "add")
    if operation is None:
        return missing(run, "a tools/call of add after the batch")
    evidence = [batch, answer, *op_evidence(operation)]
    wrong = _surfaced_wrong(operation, "content", THREE)
    if wrong is not None:
        return violated(f"the call after the batch did not work: {wrong}", evidence)
    return passed("the batch was accepted, its ping answered, and the session went on", evidence)


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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
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
        waits_on_the_client=True,
        description="2025-03-26: a batch of a log notification and a ping from the server",
        requires=frozenset({"tools"}),
    ),
]
