"""Tools: listing with pagination, results, isError results versus JSON-RPC errors.

Also the JSON-RPC checks that every run can judge (message shapes, unique ids): they are
judged on the tools scenario, which every client can run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness._catalogue import check
from harness._run import Operation, Scenario, ScenarioRun, Session
from harness._schemas import validate
from harness._verdicts import Verdict, fail, passed, warn
from harness.suite._evidence import (
    dual_era_probes,
    first_operation,
    missing,
    op_evidence,
    response_to,
    tool_calls,
)

__all__ = ["SCENARIOS"]

TOOLS = "server/tools"


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


@check(
    "tools.call-result",
    requirements=["TL-2"],
    level="MUST",
    spec=TOOLS + "#calling-tools",
    description="A tool result reaches the caller with its content intact and not flagged as an error",
    feature="tools",
)
def call_result(run: ScenarioRun) -> Verdict:
    operation, sent = first_operation(run, "call_tool", "add"), tool_calls(run, "add")
    if operation is None or not sent or response_to(run, sent[0]) is None:
        return missing(run, "an answered tools/call of add")
    evidence = [sent[0], *op_evidence(operation)]
    if not operation.ok or not isinstance(operation.value, dict):
        return fail(f"the successful result was surfaced as an error: {operation.error}", evidence)
    if operation.value.get("isError"):
        return fail("a successful result was surfaced with isError true", evidence)
    if operation.value.get("content") != [{"type": "text", "text": "3"}]:
        return fail(f"the content was altered: {operation.value.get('content')!r}", evidence)
    return passed("the result's content was surfaced intact", evidence)


@check(
    "tools.is-error-result",
    requirements=["TL-4"],
    level="MUST",
    spec=TOOLS + "#error-handling",
    description="A result with isError: true is surfaced as a tool failure with its content, not as a protocol error",
    feature="tools",
)
def is_error_result(run: ScenarioRun) -> Verdict:
    operation, sent = first_operation(run, "call_tool", "divide"), tool_calls(run, "divide")
    if operation is None or not sent or response_to(run, sent[0]) is None:
        return missing(run, "an answered tools/call of divide")
    evidence = [sent[0], *op_evidence(operation)]
    if operation.ok and isinstance(operation.value, dict):
        if operation.value.get("isError") is not True:
            return fail("the isError flag was lost: the failure looks like a success", evidence)
        if operation.value.get("content") != [{"type": "text", "text": "division by zero"}]:
            return fail(
                f"the error content was altered: {operation.value.get('content')!r}", evidence
            )
        return passed("the tool failure was surfaced as a result with isError true", evidence)
    error = operation.error or {}
    if error.get("kind") == "tool" and "division by zero" in str(error.get("message")):
        return passed(
            "the tool failure was surfaced as a tool error carrying its content", evidence
        )
    return fail(
        f"the tool failure was surfaced as {error.get('kind')} error {error}, not as a tool result",
        evidence,
    )


def _protocol_error_check(code: int, tool: str) -> Callable[[ScenarioRun], Verdict]:
    def judge(run: ScenarioRun) -> Verdict:
        operation, sent = first_operation(run, "call_tool", tool), tool_calls(run, tool)
        if operation is None or not sent or response_to(run, sent[0]) is None:
            return missing(run, f"an answered tools/call of {tool}")
        evidence = [sent[0], *op_evidence(operation)]
        if operation.ok:
            return fail(
                f"the JSON-RPC error {code} was surfaced as a result: {operation.value!r}", evidence
            )
        error = operation.error or {}
        if error.get("kind") != "protocol":
            return fail(
                f"the JSON-RPC error {code} was surfaced as a {error.get('kind')} error", evidence
            )
        if error.get("code") != code:
            return fail(
                f"the JSON-RPC error {code} was surfaced with code {error.get('code')}", evidence
            )
        return passed(
            f"the JSON-RPC error {code} was surfaced as a protocol error with its code", evidence
        )

    return judge


for _code, _tool in ((-32602, "stale"), (-32601, "gone"), (-32603, "flaky")):
    check(
        f"tools.protocol-error{_code}",
        requirements=["TL-4", "RPC-7"],
        level="MUST",
        spec=TOOLS + "#error-handling",
        description=f"A JSON-RPC error {_code} to tools/call is surfaced as a protocol error with that code",
        feature="tools",
    )(_protocol_error_check(_code, _tool))


@check(
    "tools.pagination",
    requirements=["TL-1"],
    level="MUST",
    spec="server/utilities/pagination",
    description="tools/list follows nextCursor, sends each cursor back verbatim, and surfaces every page",
    feature="tools",
)
def pagination(run: ScenarioRun) -> Verdict:
    sent = run.requests("tools/list")
    operation = run.operation("list_tools")
    if not sent or operation is None:
        return missing(run, "a tools/list request")
    evidence = [*sent, *op_evidence(operation)]
    cursors = [(r["message"].get("params") or {}).get("cursor") for r in sent]
    for expected in ("c/2 ö=+?", "eyJwYWdlIjozfQ=="):
        if expected not in cursors:
            return fail(
                f"the cursor {expected!r} was not sent back verbatim (cursors sent: {cursors!r})",
                evidence,
            )
    if not operation.ok:
        return fail(f"list_tools failed: {operation.error}", evidence)
    names = [t.get("name") for t in (operation.value or {}).get("tools", [])]
    if sorted(names) != ["alpha", "beta", "delta", "gamma"]:
        return fail(f"the surfaced tools are {names!r}, not the four of the three pages", evidence)
    return passed("all three pages were fetched with verbatim cursors and surfaced", evidence)


@check(
    "jsonrpc.messages-valid",
    requirements=["RPC-1", "RPC-3", "RPC-4"],
    level="MUST",
    spec="basic/index#messages",
    description="Every message the client sends is valid JSON-RPC and valid against the revision's schema",
)
def messages_valid(run: ScenarioRun) -> Verdict:
    invalid = run.of_kind("invalid")
    if invalid:
        return fail(
            f"the client sent something that is not a JSON-RPC message: {invalid[0].get('reason')}",
            invalid[:3],
        )
    messages = run.client_messages()
    if not messages:
        return missing(run, "any client message")
    probes = dual_era_probes(run)  # valid 2026-07-28 messages, sent on purpose (LC-M3)
    for entry in messages:
        if entry in probes:
            continue
        problems = validate(
            entry["message"], run.revision, "client", request_method=_answered_method(run, entry)
        )
        if problems:
            return fail(f"{problems[0]}", [entry])
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
            and m.get("id") == message["id"]
        ):
            return str(m["method"])
    return None


@check(
    "jsonrpc.request-ids-unique",
    requirements=["RPC-2"],
    level="MUST",
    spec="basic/index#requests",
    description="The client never reuses a request id (within the session; in 2026-07-28, among requests in flight)",
)
def request_ids_unique(run: ScenarioRun) -> Verdict:
    requests = run.requests()
    if len(requests) < 2:
        return missing(run, "two or more client requests")
    seen: dict[tuple[str, Any], dict[str, Any]] = {}
    for entry in requests:
        request_id = entry["message"]["id"]
        key = (type(request_id).__name__, request_id)
        if key in seen:
            earlier = seen[key]
            stateless_ok = (
                run.revision == "2026-07-28"
                and response_to(run, earlier) is not None
                and (response_to(run, earlier) or {}).get("seq", 0) < entry["seq"]
            )
            if not stateless_ok:
                return fail(f"request id {request_id!r} was used twice", [earlier, entry])
        seen[key] = entry
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


def _server_result(run: ScenarioRun, sent: dict[str, Any]) -> dict[str, Any] | None:
    response = response_to(run, sent)
    result = response["message"].get("result") if response else None
    return result if isinstance(result, dict) else None


@check(
    "tools.content-types",
    requirements=["TL-2"],
    level="MUST",
    spec=TOOLS + "#tool-result",
    description="Every content type of the revision (text, image, audio, resource_link, "
    "embedded text and blob resources) reaches the caller intact and in order",
    feature="tools",
)
def content_types(run: ScenarioRun) -> Verdict:
    operation, sent = first_operation(run, "call_tool", "media"), tool_calls(run, "media")
    result = _server_result(run, sent[0]) if sent else None
    if operation is None or result is None:
        return missing(run, "an answered tools/call of media")
    evidence = [sent[0], *op_evidence(operation)]
    if not operation.ok or not isinstance(operation.value, dict):
        return fail(f"the result was surfaced as an error: {operation.error}", evidence)
    sent_content, surfaced = result.get("content"), operation.value.get("content")
    if surfaced != sent_content:
        return fail(f"the content was altered: {surfaced!r}", evidence)
    kinds = ", ".join(str(c.get("type")) for c in sent_content or [] if isinstance(c, dict))
    return passed(f"every content item ({kinds}) was surfaced intact", evidence)


@check(
    "jsonrpc.utf-8",
    requirements=["RPC-5"],
    level="MUST",
    spec="basic/transports",
    description="Non-ASCII text survives both ways: in tool arguments (as the server decodes "
    "them as UTF-8) and in the result surfaced to the caller",
    feature="tools",
)
def utf8(run: ScenarioRun) -> Verdict:
    invalid = run.of_kind("invalid")
    if invalid:
        return fail(
            f"the server could not decode a client message: {invalid[0].get('reason')}", invalid[:2]
        )
    operation, sent = first_operation(run, "call_tool", "echo"), tool_calls(run, "echo")
    if operation is None or not sent:
        return missing(run, "a tools/call of echo")
    evidence = [sent[0], *op_evidence(operation)]
    argument = ((sent[0]["message"].get("params") or {}).get("arguments") or {}).get("text")
    if argument != UTF8_TEXT:
        return fail(f"the argument arrived as {argument!r}, not {UTF8_TEXT!r}", evidence)
    if response_to(run, sent[0]) is None:
        return missing(run, "an answered tools/call of echo")
    if not operation.ok or not isinstance(operation.value, dict):
        return fail(f"the result was surfaced as an error: {operation.error}", evidence)
    texts = [c.get("text") for c in operation.value.get("content") or [] if isinstance(c, dict)]
    if texts != [UTF8_TEXT, UTF8_TEXT]:
        return fail(f"the non-ASCII result was altered: {texts!r}", evidence)
    return passed("non-ASCII text arrived intact at the server and back at the caller", evidence)


@check(
    "tools.reserved-meta-tolerated",
    requirements=["RPC-8"],
    level="MUST",
    revisions=("2025-06-18", "2025-11-25", "2026-07-28"),
    spec="basic/index#meta",
    description="Unknown values at reserved _meta keys (io.modelcontextprotocol/..., "
    "...mcp...) in a tool and its result break nothing: the tool is listed and its result surfaced",
    feature="tools",
)
def reserved_meta(run: ScenarioRun) -> Verdict:
    operation, sent = first_operation(run, "call_tool", "meta"), tool_calls(run, "meta")
    if operation is None or not sent or response_to(run, sent[0]) is None:
        return missing(run, "an answered tools/call of meta")
    evidence = [sent[0], *op_evidence(operation)]
    if not operation.ok or not isinstance(operation.value, dict):
        return fail(f"a result with reserved _meta keys was refused: {operation.error}", evidence)
    texts = [c.get("text") for c in operation.value.get("content") or [] if isinstance(c, dict)]
    if texts != ["meta ok"]:
        return fail(f"the result's content was altered: {texts!r}", evidence)
    return passed("the tool with reserved _meta keys was listed, called and surfaced", evidence)


@check(
    "tools.unusual-names",
    requirements=["TL-7"],
    level="SHOULD",
    revisions=("2025-11-25", "2026-07-28"),
    spec=TOOLS + "#tool-names",
    description="A tool name outside [A-Za-z0-9_.-] (spaces, a slash, non-ASCII) is listed "
    "and called by exactly that name",
    feature="tools",
)
def unusual_names(run: ScenarioRun) -> Verdict:
    listed = run.operation("list_tools")
    if listed is None or not listed.ok:
        return missing(run, "a successful list_tools")
    names = [t.get("name") for t in (listed.value or {}).get("tools", []) if isinstance(t, dict)]
    if ODD_NAME not in names:
        return warn(f"the tool {ODD_NAME!r} was not surfaced: {names!r}", op_evidence(listed))
    operation, sent = first_operation(run, "call_tool", ODD_NAME), tool_calls(run, ODD_NAME)
    if operation is None or not sent or response_to(run, sent[0]) is None:
        return warn(
            f"the tool {ODD_NAME!r} could not be called by its name", op_evidence(listed, operation)
        )
    evidence = [sent[0], *op_evidence(operation)]
    if not operation.ok:
        return warn(f"calling {ODD_NAME!r} failed: {operation.error}", evidence)
    return passed(f"{ODD_NAME!r} was listed and called by its exact name", evidence)


@check(
    "tools.output-schema-validated",
    requirements=["TL-3"],
    level="SHOULD",
    revisions=("2025-06-18", "2025-11-25", "2026-07-28"),
    spec=TOOLS + "#output-schema",
    description="structuredContent that violates the tool's outputSchema is flagged to the "
    "caller; structuredContent that matches it is surfaced intact",
    feature="tools",
)
def output_schema_validated(run: ScenarioRun) -> Verdict:
    good, good_sent = first_operation(run, "call_tool", "typed-ok"), tool_calls(run, "typed-ok")
    bad, bad_sent = first_operation(run, "call_tool", "typed-bad"), tool_calls(run, "typed-bad")
    if good is None or bad is None or not good_sent or not bad_sent:
        return missing(run, "tools/call of typed-ok and typed-bad")
    if response_to(run, good_sent[0]) is None or response_to(run, bad_sent[0]) is None:
        return missing(run, "answered tools/call of typed-ok and typed-bad")
    evidence = [good_sent[0], bad_sent[0], *op_evidence(good, bad)]
    if not good.ok or (good.value or {}).get("structuredContent") != {"x": 1, "y": 2}:
        return warn(
            "a structuredContent that matches its outputSchema was not surfaced intact", evidence
        )
    if bad.ok and (bad.value or {}).get("isError") is not True:
        return warn(
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
    level="SHOULD",
    revisions=("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"),
    spec=TOOLS + "#list-changed-notification",
    description="After notifications/tools/list_changed the tool list is fetched anew (on the "
    "client's own or when the application asks), never served from before the change",
    feature="tools",
)
def relist_after_list_changed(run: ScenarioRun) -> Verdict:
    notice = next(
        (
            e
            for e in run.entries
            if e["kind"] == "message"
            and e.get("direction") == "server"
            and e["message"].get("method") == "notifications/tools/list_changed"
        ),
        None,
    )
    listings = [o for o in run.operations if o.op == "list_tools"]
    if notice is None or len(listings) < 2:
        return missing(run, "a notifications/tools/list_changed, then a list_tools")
    evidence = [notice, *op_evidence(listings[-1])]
    if not listings[-1].ok:
        return fail(f"listing the tools after list_changed failed: {listings[-1].error}", evidence)
    again = [r for r in run.requests("tools/list") if r["seq"] > notice["seq"]]
    if not again:
        return warn(
            "the tools were not fetched again after list_changed: the list the application "
            "got is the one from before the change",
            evidence,
        )
    return passed("the tools were fetched again after list_changed", [notice, again[0]])


def _task_param(entry: dict[str, Any]) -> Any:
    return (entry["message"].get("params") or {}).get("task")


@check(
    "tools.task-augmentation",
    requirements=["TL-9"],
    level="MUST",
    revisions=("2025-11-25",),
    spec="basic/utilities/tasks#tool-level-negotiation",
    description="With tasks.requests.tools.call declared, a tool whose taskSupport is absent "
    "or forbidden is never called as a task, and one whose taskSupport is required is called "
    "as a task (or refused by the client, which sends nothing)",
    feature="tools",
)
def task_augmentation(run: ScenarioRun) -> Verdict:
    calls = {name: tool_calls(run, name) for name in ("plain", "forbidden", "required")}
    refusal = _local_refusal(run, "required") if not calls["required"] else None
    if refusal is not None:
        calls.pop("required")
    if not all(calls.values()):
        absent = [name for name, sent in calls.items() if not sent]
        return missing(run, f"tools/call of {', '.join(absent)}")
    for name in ("plain", "forbidden"):
        tasked = [e for e in calls[name] if "task" in (e["message"].get("params") or {})]
        if tasked:
            return fail(
                f"{name} (taskSupport {'absent' if name == 'plain' else name}) was called as a task",
                tasked[:1],
            )
    if refusal is not None:
        return passed(
            "plain and forbidden were called without a task; the client refused to call "
            f"required (taskSupport required) outside a task: {refusal.error}",
            [calls["plain"][0], calls["forbidden"][0], *op_evidence(refusal)],
        )
    plain = [e for e in calls["required"] if not isinstance(_task_param(e), dict)]
    if plain:
        return fail(
            "required (taskSupport required) was called without task augmentation", plain[:1]
        )
    return passed(
        "only the tool that requires it was called as a task", [calls[n][0] for n in calls]
    )


def _local_refusal(run: ScenarioRun, tool: str) -> Operation | None:
    """The call of `tool` that the client refused itself, sending nothing (else None).

    A client that cannot run a task-required tool as a task may refuse it: that is no
    breach of TL-9. A time-out or a transport failure is no refusal.
    """
    operation = first_operation(run, "call_tool", tool)
    if operation is None or operation.ok or tool_calls(run, tool):
        return None
    kind = (operation.error or {}).get("kind")
    return operation if kind not in ("timeout", "transport") else None


@check(
    "tools.no-task-without-capability",
    requirements=["TL-9"],
    level="MUST",
    revisions=("2025-11-25",),
    spec="basic/utilities/tasks#capabilities",
    description="A server that did not declare tasks.requests.tools.call gets no task-augmented "
    "tools/call, whatever the tools' taskSupport",
    feature="tools",
)
def no_task_without_capability(run: ScenarioRun) -> Verdict:
    calls = run.requests("tools/call")
    if not calls:
        return missing(run, "a tools/call")
    tasked = [e for e in calls if "task" in (e["message"].get("params") or {})]
    if tasked:
        return fail(
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
