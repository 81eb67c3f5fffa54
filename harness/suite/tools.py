"""Tools: listing with pagination, results, isError results versus JSON-RPC errors.

Also the JSON-RPC checks that every run can judge (message shapes, unique ids): they are
judged on the tools scenario, which every client can run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.judging import (
    Trigger,
    Verdict,
    blocked,
    check,
    clause,
    client_sent,
    not_applicable,
    passed,
    server_sent,
    silent,
    trigger,
    violated,
)
from harness.protocol import same_json, validate
from harness.running import Operation, Scenario, ScenarioRun, Session
from harness.suite._evidence import (
    ToolCall,
    answered_tool_call,
    dual_era_probes,
    first_operation,
    hung_or_crashed,
    invalid_lines,
    judged_elsewhere,
    missing,
    op_evidence,
    params_of,
    response_to,
    same_id,
    tool_call,
    tool_calls,
)

__all__ = ["SCENARIOS"]

TOOLS = "server/tools"
TASKS = "basic/utilities/tasks"
# Revisions where a page's sentence reads the same (for the clauses below).
_SINCE_2025_03 = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
_2025_03_TO_11 = ("2025-03-26", "2025-06-18", "2025-11-25")
_BEFORE_2025_11 = ("2024-11-05", "2025-03-26", "2025-06-18")
_SINCE_2025_11 = ("2025-11-25", "2026-07-28")


async def call_every_tool(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})
    await session.call("call_tool", "divide", {"a": 1, "b": 0})
    await session.call("call_tool", "stale", {})
    await session.call("call_tool", "gone", {})
    await session.call("call_tool", "flaky", {})


async def list_all_pages(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")


def _called(tool: str) -> Trigger:
    return client_sent("tools/call", name=tool)


@check(
    "tools.call-result",
    requirements=["TL-2"],
    clauses=[
        silent(
            "server/tools describes a tool result, but no sentence binds the client to "
            "surface it to its caller intact"
        )
    ],
    spec=TOOLS + "#calling-tools",
    description="A tool result reaches the caller with its content intact and not flagged as an error",
    feature="tools",
    trigger=_called("add"),
)
def call_result(run: ScenarioRun) -> Verdict:
    call = answered_tool_call(run, "add")
    if isinstance(call, Verdict):
        return call
    surfaced, evidence = call.surfaced, call.evidence
    if surfaced is None:
        return hung_or_crashed(call.operation) or violated(
            f"the successful result was surfaced as an error: {_error(call)}", evidence
        )
    if surfaced.get("isError"):
        return violated("a successful result was surfaced with isError true", evidence)
    if not same_json(surfaced.get("content"), (call.result or {}).get("content")):
        return violated(f"the content was altered: {surfaced.get('content')!r}", evidence)
    return passed("the result's content was surfaced intact", evidence)


def _error(call: ToolCall) -> Any:
    return (call.operation.error if call.operation else None) or {}


@check(
    "tools.is-error-result",
    requirements=["TL-4"],
    clauses=[
        silent(
            "server/tools#error-handling only tells the two error mechanisms apart; "
            "nothing binds the client to surface an isError result as a tool failure",
            *_BEFORE_2025_11,
        ),
        clause(
            TOOLS,
            "Clients SHOULD provide tool execution errors to language models",
            *_SINCE_2025_11,
        ),
    ],
    spec=TOOLS + "#error-handling",
    description="A result with isError: true is surfaced as a tool failure with its content, not as a protocol error",
    feature="tools",
    trigger=_called("divide"),
)
def is_error_result(run: ScenarioRun) -> Verdict:
    call = answered_tool_call(run, "divide")
    if isinstance(call, Verdict):
        return call
    surfaced, evidence = call.surfaced, call.evidence
    content = (call.result or {}).get("content")
    if surfaced is not None:
        if surfaced.get("isError") is not True:
            return violated("the isError flag was lost: the failure looks like a success", evidence)
        if not same_json(surfaced.get("content"), content):
            return violated(f"the error content was altered: {surfaced.get('content')!r}", evidence)
        return passed("the tool failure was surfaced as a result with isError true", evidence)
    unreported = hung_or_crashed(call.operation)
    if unreported is not None:
        return unreported
    error = _error(call)
    texts = [c.get("text") for c in content or [] if isinstance(c, dict)]
    if error.get("kind") == "tool" and all(str(t) in str(error.get("message")) for t in texts):
        return passed(
            "the tool failure was surfaced as a tool error carrying its content", evidence
        )
    return violated(
        f"the tool failure was surfaced as {error.get('kind')} error {error}, not as a tool result",
        evidence,
    )


def _protocol_error_check(code: int, tool: str) -> Callable[[ScenarioRun], Verdict]:
    def judge(run: ScenarioRun) -> Verdict:
        call = answered_tool_call(run, tool)
        if isinstance(call, Verdict):
            return call
        evidence = call.evidence
        if call.surfaced is not None:
            return violated(
                f"the JSON-RPC error {code} was surfaced as a result: {call.surfaced!r}", evidence
            )
        error = _error(call)
        unreported = hung_or_crashed(call.operation)
        if unreported is not None:
            return unreported
        if error.get("kind") != "protocol":
            return violated(
                f"the JSON-RPC error {code} was surfaced as a {error.get('kind')} error", evidence
            )
        if not same_json(error.get("code"), code):
            return violated(
                f"the JSON-RPC error {code} was surfaced with code {error.get('code')!r}", evidence
            )
        return passed(
            f"the JSON-RPC error {code} was surfaced as a protocol error with its code", evidence
        )

    return judge


for _code, _tool in ((-32602, "stale"), (-32601, "gone"), (-32603, "flaky")):
    check(
        f"tools.protocol-error{_code}",
        requirements=["TL-4", "RPC-7"],
        clauses=[
            silent(
                "no sentence binds the client to surface a JSON-RPC error to tools/call as a "
                "protocol error with its code (from 2025-11-25 the only word is that clients "
                "MAY give protocol errors to the model)"
            )
        ],
        spec=TOOLS + "#error-handling",
        description=f"A JSON-RPC error {_code} to tools/call is surfaced as a protocol error with that code",
        feature="tools",
        trigger=_called(_tool),
    )(_protocol_error_check(_code, _tool))


_PAGE_CURSORS = ("c/2 \u00f6=+?", "eyJwYWdlIjozfQ==")  # the script's nextCursor values


@check(
    "tools.pagination",
    requirements=["TL-1"],
    clauses=[
        clause(
            "server/utilities/pagination",
            "Clients MUST treat cursors as opaque tokens",
            branch="cursor-modified",
        ),
        # "- Treat a missing nextCursor as the end of results - Support both paginated
        # and non-paginated flows"
        clause("server/utilities/pagination", "Clients SHOULD: - Treat a missing nextCursor"),
    ],
    spec="server/utilities/pagination",
    description="tools/list follows nextCursor, sends each cursor back verbatim, and surfaces every page",
    feature="tools",
    trigger=client_sent("tools/list"),
)
def pagination(run: ScenarioRun) -> Verdict:
    sent = run.requests("tools/list")
    operation = run.operation("list_tools")
    evidence = [*sent, *op_evidence(operation)]
    cursors = [(r["message"].get("params") or {}).get("cursor") for r in sent]
    modified = [
        cursor
        for cursor in cursors
        if cursor is not None and not any(same_json(cursor, c) for c in _PAGE_CURSORS)
    ]
    if modified:
        return violated(
            f"the cursor {modified[0]!r} is none the server gave: a cursor was not sent back "
            f"verbatim (cursors sent: {cursors!r})",
            evidence,
            clause="cursor-modified",
        )
    for expected in _PAGE_CURSORS:
        if not any(same_json(cursor, expected) for cursor in cursors):
            return violated(
                f"the cursor {expected!r} was never sent back (cursors sent: {cursors!r})",
                evidence,
            )
    if operation is None:
        return missing(run, "a list_tools operation")
    unreported = hung_or_crashed(operation)
    if unreported is not None:
        return unreported
    if not operation.ok:
        return violated(f"list_tools failed: {operation.error}", evidence)
    names = [t.get("name") for t in (operation.value or {}).get("tools", [])]
    if not same_json(sorted(map(str, names)), ["alpha", "beta", "delta", "gamma"]):
        return violated(
            f"the surfaced tools are {names!r}, not the four of the three pages", evidence
        )
    return passed("all three pages were fetched with verbatim cursors and surfaced", evidence)


def _unparsable(run: ScenarioRun) -> list[dict[str, Any]]:
    """What the client sent that was no JSON-RPC message: `invalid` entries, and the HTTP
    mock's unscripted refusals of a body it could not parse."""
    refused = [
        e for e in run.of_kind("refusal") if e.get("rule") == "unparsable" and not e.get("scripted")
    ]
    mine, _ = invalid_lines(run, "jsonrpc.messages-valid")
    return [*mine, *refused]


def _anything_sent(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return [*run.client_messages(), *run.of_kind("invalid"), *_unparsable(run)]


@check(
    "jsonrpc.messages-valid",
    requirements=["RPC-1", "RPC-3", "RPC-4"],
    clauses=[
        clause("basic/index", "All messages between MCP clients and servers MUST"),
        clause("basic/messages", "Requests MUST include a string or integer ID", "2024-11-05"),
        clause("basic/index", "Requests MUST include a string or integer ID", *_SINCE_2025_03),
        clause("basic/messages", "Notifications MUST NOT include an ID", "2024-11-05"),
        clause("basic/index", "Notifications MUST NOT include an ID", *_SINCE_2025_03),
    ],
    spec="basic/index#messages",
    description="Every message the client sends is valid JSON-RPC and valid against the revision's schema",
    trigger=trigger("the client sent something", _anything_sent),
    # What the server could not read may have been the initialize or its notification:
    # the handshake's failure is then a consequence of this check's defect, not a cause.
    independent_of=(
        "client.connect",
        "lifecycle.initialize-first",
        "lifecycle.initialized-notification",
    ),
)
def messages_valid(run: ScenarioRun) -> Verdict:
    unparsable = _unparsable(run)
    if unparsable:
        return violated(
            f"the client sent something that is not a JSON-RPC message: {unparsable[0].get('reason')}",
            unparsable[:3],
        )
    _, others = invalid_lines(run, "jsonrpc.messages-valid")
    if others:  # a stdio line that a stdio check judges
        return judged_elsewhere(run, others)
    messages = run.client_messages()
    probes = dual_era_probes(run)  # valid 2026-07-28 messages, sent on purpose (LC-M3)
    for entry in messages:
        if entry in probes:
            continue
        problems = validate(
            entry["message"], run.revision, "client", request_method=_answered_method(run, entry)
        )
        if problems:
            return violated(f"{problems[0]}", [entry])
    return passed(f"all {len(messages)} client messages are valid at {run.revision}", messages[:3])


def _answered_method(run: ScenarioRun, entry: dict[str, Any]) -> str | None:
    """For a client response: the method of the server request it answers."""
    message = entry["message"]
    if "method" in message or "id" not in message:
        return None
    for e in run.entries:
        m = e.get("message") or {}
        if (
            e["kind"] == "message"
            and e["direction"] == "server"
            and "method" in m
            and same_id(m.get("id"), message["id"])
        ):
            return str(m["method"])
    return None


def _two_requests(run: ScenarioRun) -> list[Mapping[str, Any]]:
    requests = run.requests()
    return list(requests) if len(requests) >= 2 else []


#: The refusals of the mock's bearer check (401, 403 insufficient_scope, and the 410 that
#: ends a step-up loop).
_BEARER_REFUSALS = ("unauthorized", "insufficient-scope", "gave-up")


@check(
    "jsonrpc.request-ids-unique",
    requirements=["RPC-2"],
    clauses=[
        clause("basic/messages", "The request ID MUST NOT have been previously used", "2024-11-05"),
        clause(
            "basic/index",
            "The request ID MUST NOT have been previously used",
            *_2025_03_TO_11,
        ),
        clause("basic/index", "The request ID MUST NOT match the ID", "2026-07-28"),
    ],
    spec="basic/index#requests",
    description="The client never reuses a request id (within the session; in 2026-07-28, among requests in flight)",
    trigger=trigger("the client sent two or more requests", _two_requests),
)
def request_ids_unique(run: ScenarioRun) -> Verdict:
    requests = run.requests()
    session = 0  # where the session of `entry` begins (below)
    for index, entry in enumerate(requests):
        if entry["message"].get("method") == "initialize":
            # A new session: its ids may count afresh (RPC-2 binds them within a session,
            # after a 404 or with a new server process). 2026-07-28 has no initialize.
            session = index
        for earlier in requests[session:index]:
            if not same_id(earlier["message"]["id"], entry["message"]["id"]):
                continue
            if (earlier.get("refused") or {}).get("rule") in _BEARER_REFUSALS:
                # Refused by the bearer check before the server read it: sent again with a
                # token, it is the same request, not a second use of its id.
                continue
            # 2026-07-28 asks only that ids of requests in flight differ.
            answer = response_to(run, earlier)
            if not (
                run.revision == "2026-07-28" and answer is not None and answer["seq"] < entry["seq"]
            ):
                return violated(
                    f"request id {entry['message']['id']!r} was used twice", [earlier, entry]
                )
    return passed(f"{len(requests)} requests, no id reused", requests[:3])


UTF8_TEXT = "h\u00e9llo w\u00f6rld \u2014 \u65e5\u672c\u8a9e \U0001f680 \u00df\u2203x"
ODD_NAME = "r\u00e9sum\u00e9 tool/v2:run"


async def call_every_listed_tool(session: Session) -> None:
    """List the tools, then call each, in order (echo with non-ASCII text)."""
    if not (await session.connect()).ok:
        return
    listed = await session.call("list_tools")
    tools = (listed.value or {}).get("tools", []) if listed.ok else []
    for tool in tools if isinstance(tools, list) else []:
        name = tool.get("name") if isinstance(tool, dict) else None
        if isinstance(name, str):
            arguments = {"text": UTF8_TEXT} if name == "echo" else {}
            await session.call("call_tool", name, arguments)


@check(
    "tools.content-types",
    requirements=["TL-2"],
    clauses=[
        silent(
            "server/tools lists the content types with what a server MAY return; no "
            "sentence binds the client to surface every item intact and in order"
        )
    ],
    spec=TOOLS + "#tool-result",
    description="Every content type of the revision (text, image, audio, resource_link, "
    "embedded text and blob resources) reaches the caller intact and in order",
    feature="tools",
    trigger=_called("media"),
)
def content_types(run: ScenarioRun) -> Verdict:
    call = answered_tool_call(run, "media")
    if isinstance(call, Verdict):
        return call
    if call.result is None:
        return missing(run, "a tools/call of media answered with a result")
    sent_content, evidence = call.result.get("content"), call.evidence
    if call.surfaced is None:
        return hung_or_crashed(call.operation) or violated(
            f"the result was surfaced as an error: {_error(call)}", evidence
        )
    surfaced = call.surfaced.get("content")
    if not same_json(surfaced, sent_content):
        return violated(f"the content was altered: {surfaced!r}", evidence)
    kinds = ", ".join(str(c.get("type")) for c in sent_content or [] if isinstance(c, dict))
    return passed(f"every content item ({kinds}) was surfaced intact", evidence)


@check(
    "jsonrpc.utf-8",
    requirements=["RPC-5"],
    clauses=[
        silent("2024-11-05 has no sentence on the messages' encoding", "2024-11-05"),
        clause("basic/transports", "JSON-RPC messages MUST be UTF-8 encoded", *_2025_03_TO_11),
        clause("basic/transports/index", "JSON-RPC messages MUST be UTF-8", "2026-07-28"),
        silent(
            "the client's own messages MUST be UTF-8; no sentence binds it to surface "
            "the result's text unaltered",
            branch="result-surfaced",
        ),
    ],
    spec="basic/transports",
    description="Non-ASCII text survives both ways: in tool arguments (as the server decodes "
    "them as UTF-8) and in the result surfaced to the caller",
    feature="tools",
    # Bytes the server could not decode at all are `invalid` entries: the root cause
    # jsonrpc.messages-valid, which blocks this check.
    trigger=_called("echo"),
)
def utf8(run: ScenarioRun) -> Verdict:
    call = tool_call(run, "echo")
    assert call is not None  # the trigger
    evidence = call.evidence
    argument = ((call.request["message"].get("params") or {}).get("arguments") or {}).get("text")
    if not same_json(argument, UTF8_TEXT):
        return violated(f"the argument arrived as {argument!r}, not {UTF8_TEXT!r}", evidence)
    if call.response is None or call.operation is None:
        return missing(run, "an answered tools/call of echo")
    if call.surfaced is None:
        return hung_or_crashed(call.operation) or violated(
            f"the result was surfaced as an error: {_error(call)}",
            evidence,
            clause="result-surfaced",
        )
    texts = [c.get("text") for c in call.surfaced.get("content") or [] if isinstance(c, dict)]
    if not same_json(texts, [UTF8_TEXT, UTF8_TEXT]):
        return violated(
            f"the non-ASCII result was altered: {texts!r}", evidence, clause="result-surfaced"
        )
    return passed("non-ASCII text arrived intact at the server and back at the caller", evidence)


def _listed(tool: str) -> Trigger:
    """The server answered a tools/list with `tool` in it (the request and the answer)."""

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        found: list[Mapping[str, Any]] = []
        for request in run.requests("tools/list"):
            response = response_to(run, request)
            tools = ((response or {}).get("message", {}).get("result") or {}).get("tools")
            if response is not None and tool in _tool_names(tools):
                found += [request, response]
        return found

    return trigger(f"the server listed the tool {tool!r}", find)


def _surfaced_tools(listing: Operation) -> list[Any]:
    return _tool_names((listing.value or {}).get("tools")) if listing.ok else []


@check(
    "tools.reserved-meta-tolerated",
    requirements=["RPC-8"],
    clauses=[clause("basic/index", "implementations MUST NOT make assumptions about values at")],
    revisions=("2025-06-18", "2025-11-25", "2026-07-28"),
    spec="basic/index#meta",
    description="Unknown values at reserved _meta keys (io.modelcontextprotocol/..., "
    "...mcp...) in a tool and its result break nothing: the tool is listed and its result surfaced",
    feature="tools",
    trigger=_listed("meta"),
)
def reserved_meta(run: ScenarioRun) -> Verdict:
    listing = _listed("meta").find(run)[:2]
    listed = run.operation("list_tools")
    if listed is None:  # the client listed on its own, and was never asked
        return missing(run, "a list_tools operation")
    unreported = hung_or_crashed(listed)
    if unreported is not None:
        return unreported
    if "meta" not in _surfaced_tools(listed):
        return violated(
            f"the tool with reserved _meta keys was not listed: {listed.error or listed.value}",
            [*listing, listed.to_json()],
        )
    call = answered_tool_call(run, "meta")
    if isinstance(call, Verdict):
        return call
    evidence = [*listing, *call.evidence]
    if call.surfaced is None:
        return hung_or_crashed(call.operation) or violated(
            f"a result with reserved _meta keys was refused: {_error(call)}", evidence
        )
    texts = [c.get("text") for c in call.surfaced.get("content") or [] if isinstance(c, dict)]
    if not same_json(texts, ["meta ok"]):
        return violated(f"the result's content was altered: {texts!r}", evidence)
    return passed("the tool with reserved _meta keys was listed, called and surfaced", evidence)


@check(
    "tools.unusual-names",
    requirements=["TL-7"],
    clauses=[
        silent(
            "the tool-name rules (SHOULD, SHOULD NOT) bind whoever names the tools, the "
            "server; nothing binds a client to a name outside them"
        )
    ],
    revisions=("2025-11-25", "2026-07-28"),
    spec=TOOLS + "#tool-names",
    description="A tool name outside [A-Za-z0-9_.-] (spaces, a slash, non-ASCII) is listed "
    "and called by exactly that name",
    feature="tools",
    trigger=_listed(ODD_NAME),
)
def unusual_names(run: ScenarioRun) -> Verdict:
    listing = _listed(ODD_NAME).find(run)[:2]
    listed = run.operation("list_tools")
    if listed is None:  # the client listed on its own, and was never asked
        return missing(run, "a list_tools operation")
    unreported = hung_or_crashed(listed)
    if unreported is not None:
        return unreported
    names = _surfaced_tools(listed)
    if ODD_NAME not in names:
        return violated(
            f"the tool {ODD_NAME!r} was not surfaced: {listed.error or names!r}",
            [*listing, listed.to_json()],
        )
    call = tool_call(run, ODD_NAME)
    if call is None or call.response is None:
        operation = first_operation(run, "call_tool", ODD_NAME)
        return hung_or_crashed(operation) or violated(
            f"the tool {ODD_NAME!r} could not be called by its name",
            [*listing, *op_evidence(listed, operation)],
        )
    if call.surfaced is None:
        return hung_or_crashed(call.operation) or violated(
            f"calling {ODD_NAME!r} failed: {_error(call)}", [*listing, *call.evidence]
        )
    return passed(
        f"{ODD_NAME!r} was listed and called by its exact name", [*listing, *call.evidence]
    )


def _typed_calls(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The tools/call of typed-ok and typed-bad, when the client sent both."""
    good, bad = tool_calls(run, "typed-ok"), tool_calls(run, "typed-bad")
    return [good[0], bad[0]] if good and bad else []


@check(
    "tools.output-schema-validated",
    requirements=["TL-3"],
    clauses=[
        clause(TOOLS, "Clients SHOULD validate structured results against this schema"),
        silent(
            "the clause asks the client to validate; none binds it to surface a "
            "structuredContent that is valid intact",
            branch="valid-surfaced",
        ),
    ],
    revisions=("2025-06-18", "2025-11-25", "2026-07-28"),
    spec=TOOLS + "#output-schema",
    description="structuredContent that violates the tool's outputSchema is flagged to the "
    "caller; structuredContent that matches it is surfaced intact",
    feature="tools",
    trigger=trigger("the client called typed-ok and typed-bad", _typed_calls),
)
def output_schema_validated(run: ScenarioRun) -> Verdict:
    good, bad = answered_tool_call(run, "typed-ok"), answered_tool_call(run, "typed-bad")
    if isinstance(good, Verdict):
        return good
    if isinstance(bad, Verdict):
        return bad
    evidence = [*good.evidence, *bad.evidence]
    unreported = hung_or_crashed(good.operation) or hung_or_crashed(bad.operation)
    if unreported is not None:
        return unreported
    valid = (good.result or {}).get("structuredContent")
    surfaced = (good.surfaced or {}).get("structuredContent")
    if good.surfaced is None or not same_json(surfaced, valid):
        shown = _error(good) if good.surfaced is None else surfaced
        return violated(
            f"a structuredContent that matches its outputSchema was not surfaced intact: {shown!r}",
            evidence,
            clause="valid-surfaced",
        )
    flagged = bad.surfaced is None or bad.surfaced.get("isError") is True
    if not flagged:
        return violated(
            "a structuredContent violating the outputSchema was surfaced as valid", evidence
        )
    return passed("the invalid structuredContent was flagged, the valid one surfaced", evidence)


async def list_call_and_list(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})  # list_changed comes first
    await session.call("list_tools")  # the application, told of the change, asks again


@check(
    "tools.relist-after-list-changed",
    requirements=["TL-5"],
    clauses=[
        silent(
            "the list-changed sentence binds the server (it SHOULD notify); only the "
            "message-flow diagram shows the client listing again"
        )
    ],
    revisions=("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"),
    spec=TOOLS + "#list-changed-notification",
    description="After notifications/tools/list_changed the tool list is fetched anew (on the "
    "client's own or when the application asks), never served from before the change",
    feature="tools",
    trigger=server_sent("notifications/tools/list_changed"),
)
def relist_after_list_changed(run: ScenarioRun) -> Verdict:
    # The spec binds the server (it SHOULD notify); for the client it means that a list
    # asked for after the change is the new one. So that is judged, when one was asked for.
    notice = server_sent("notifications/tools/list_changed").find(run)[0]
    listing = _listing_after_change(run)
    if listing is None:
        return not_applicable("no tool list was asked for after list_changed", [notice])
    unreported = hung_or_crashed(listing)
    if unreported is not None:
        return unreported
    again = [r for r in run.requests("tools/list") if r["seq"] > notice["seq"]]
    if not again:
        return violated(
            "the tools were not fetched again after list_changed: the list the application "
            "got is the one from before the change",
            [notice, listing.to_json()],
        )
    answer = response_to(run, again[0])
    if answer is None:
        return missing(run, "an answer to the tools/list sent after list_changed")
    evidence = [notice, again[0], answer, listing.to_json()]
    fetched = _tool_names((answer["message"].get("result") or {}).get("tools"))
    shown = _tool_names((listing.value or {}).get("tools")) if listing.ok else None
    if not same_json(shown, fetched):
        return violated(
            f"the list fetched after list_changed was not surfaced: {listing.error or shown!r}",
            evidence,
        )
    return passed("the tools were fetched again after list_changed and surfaced", evidence)


def _listing_after_change(run: ScenarioRun) -> Operation | None:
    """The list_tools the harness asked for after the call whose answer the notification
    came ahead of (the drive's second listing)."""
    ops = run.operations
    call = next((i for i, o in enumerate(ops) if o.op == "call_tool"), len(ops))
    return next((o for o in ops[call + 1 :] if o.op == "list_tools"), None)


def _tool_names(tools: Any) -> list[Any]:
    return [t.get("name") for t in tools or [] if isinstance(t, dict)]


def _tasked(entry: Mapping[str, Any]) -> bool:
    return "task" in (entry["message"].get("params") or {})


@check(
    "tools.task-augmentation",
    requirements=["TL-9"],
    clauses=[
        clause(TASKS, "clients MUST NOT attempt to invoke the tool as"),
        clause(TASKS, "clients MUST invoke the tool as a task", branch="required-untasked"),
    ],
    revisions=("2025-11-25",),
    spec="basic/utilities/tasks#tool-level-negotiation",
    description="With tasks.requests.tools.call declared, a tool whose taskSupport is absent "
    "or forbidden is never called as a task, and one whose taskSupport is required is called "
    "as a task (or refused by the client, which sends nothing)",
    feature="tools",
    trigger=client_sent("tools/call"),
)
def task_augmentation(run: ScenarioRun) -> Verdict:
    plain, forbidden = tool_calls(run, "plain"), tool_calls(run, "forbidden")
    if not plain or not forbidden:
        return missing(run, "tools/call of plain and forbidden")
    for name, sent in (("plain", plain), ("forbidden", forbidden)):
        tasked = [e for e in sent if _tasked(e)]
        if tasked:
            why = "absent" if name == "plain" else name
            return violated(f"{name} (taskSupport {why}) was called as a task", tasked[:1])
    required = tool_calls(run, "required")
    if required:
        untasked = [e for e in required if not isinstance(params_of(e).get("task"), dict)]
        if untasked:
            return violated(
                "required (taskSupport required) was called without task augmentation",
                untasked[:1],
                clause="required-untasked",
            )
        return passed(
            "only the tool that requires it was called as a task",
            [plain[0], forbidden[0], required[0]],
        )
    # Not sent: a client that cannot run it as a task may refuse it (no breach of TL-9),
    # if it reports so; a hang, a crash, a time-out or a transport failure is no refusal.
    operation = first_operation(run, "call_tool", "required")
    if operation is None:
        return missing(run, "a call_tool of required")
    unreported = hung_or_crashed(operation)
    if unreported is not None:
        return unreported
    kind = (operation.error or {}).get("kind")
    if operation.ok or kind in ("timeout", "transport"):
        return blocked(
            "client.call_tool",
            f"call_tool(required) {'reported a result' if operation.ok else f'failed ({kind})'} "
            "without sending tools/call",
            [operation.to_json()],
        )
    return passed(
        "plain and forbidden were called without a task; the client refused to call "
        f"required (taskSupport required) outside a task: {operation.error}",
        [plain[0], forbidden[0], operation.to_json()],
    )


@check(
    "tools.no-task-without-capability",
    requirements=["TL-9"],
    clauses=[clause(TASKS, "clients MUST NOT attempt to use task augmentation")],
    revisions=("2025-11-25",),
    spec="basic/utilities/tasks#capabilities",
    description="A server that did not declare tasks.requests.tools.call gets no task-augmented "
    "tools/call, whatever the tools' taskSupport",
    feature="tools",
    trigger=client_sent("tools/call"),
)
def no_task_without_capability(run: ScenarioRun) -> Verdict:
    calls = run.requests("tools/call")
    tasked = [e for e in calls if _tasked(e)]
    if tasked:
        return violated(
            "a tools/call was task-augmented although the server declared no tasks", tasked[:1]
        )
    return passed(f"{len(calls)} tools/call, none task-augmented", calls[:3])


SCENARIOS = [
    Scenario(
        "tools-call",
        "tools/list-and-call.json",
        checks=(
            "tools.call-result",
            "tools.is-error-result",
            "tools.protocol-error-32602",
            "tools.protocol-error-32601",
            "tools.protocol-error-32603",
            "jsonrpc.messages-valid",
            "jsonrpc.request-ids-unique",
        ),
        drive=call_every_tool,
        description="list the tools, call add, divide by zero, and three tools that end in JSON-RPC errors",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "tools-pagination",
        "tools/pagination.json",
        checks=("tools.pagination",),
        drive=list_all_pages,
        description="tools/list in three pages with opaque cursors",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "tools-content-2024",
        "tools/content-2024.json",
        checks=("tools.content-types", "jsonrpc.utf-8", "jsonrpc.messages-valid"),
        drive=call_every_listed_tool,
        description="text, image and embedded resources; non-ASCII text both ways",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "tools-content-2025-03",
        "tools/content-2025-03.json",
        checks=("tools.content-types", "jsonrpc.utf-8", "jsonrpc.messages-valid"),
        drive=call_every_listed_tool,
        description="text, image, audio and embedded resources; non-ASCII text both ways",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "tools-content",
        "tools/content.json",
        checks=(
            "tools.content-types",
            "jsonrpc.utf-8",
            "jsonrpc.messages-valid",
            "tools.reserved-meta-tolerated",
            "tools.unusual-names",
            "tools.output-schema-validated",
        ),
        drive=call_every_listed_tool,
        description="every content type, non-ASCII text, reserved _meta keys, an unusual tool name, structuredContent valid and invalid",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "tools-list-changed",
        "tools/list-changed.json",
        checks=("tools.relist-after-list-changed",),
        drive=list_call_and_list,
        description="notifications/tools/list_changed ahead of a tools/call response, then "
        "the application lists the tools again",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "tools-tasks",
        "tools/tasks.json",
        checks=("tools.task-augmentation",),
        drive=call_every_listed_tool,
        description="2025-11-25: tools with taskSupport absent, forbidden and required, tasks declared",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "tools-tasks-undeclared",
        "tools/tasks-undeclared.json",
        checks=("tools.no-task-without-capability",),
        drive=call_every_listed_tool,
        description="2025-11-25: tools with taskSupport optional and required, no tasks declared",
        requires=frozenset({"tools"}),
    ),
]
