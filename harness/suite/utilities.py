"""What driver protocol 1.1 lets the harness ask for: setting a log level, subscribing to a
resource, completion, a change of roots, tasks (2025-11-25), subscriptions/listen
(2026-07-28); and the SSE response left open after its result.

Every scenario here needs a 1.1 operation (`requires` names it), so a client that does not
name it in `supports` gets SKIP for the whole scenario, never a FAIL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.clients import ClientEvent, Handlers
from harness.judging import (
    Trigger,
    Verdict,
    asked,
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
from harness.protocol import META_SUBSCRIPTION_ID, same_json
from harness.running import Entries, Operation, Scenario, ScenarioRun, Session
from harness.suite._evidence import (
    HANDSHAKE,
    STATELESS,
    cancellations,
    cancelled_id,
    first_operation,
    missing,
    op_evidence,
    operations_with,
    params_of,
    requests_with,
    response_to,
    same_id,
    surfaced,
    tool_calls,
)

__all__ = ["SCENARIOS"]

NOTES_URI = "file:///tmp/mcp-testbench/notes.md"
ROOTS = ({"uri": "file:///tmp/mcp-testbench/project", "name": "project"},)
NEW_ROOTS = (
    {"uri": "file:///tmp/mcp-testbench/project", "name": "project"},
    {"uri": "file:///tmp/mcp-testbench/other", "name": "other"},
)
PROMPT_REF = {"type": "ref/prompt", "name": "greet"}
ARGUMENT = {"name": "language", "value": "py"}
COMPLETIONS = ["python", "pytorch"]  # what fixtures/features/completion.json answers
FILTER = {"toolsListChanged": True}
THREE = [{"type": "text", "text": "3"}]
SLOW_DONE = [{"type": "text", "text": "slow done"}]
_SLOW_STREAM = 2.0
"""Seconds more than the same call on a stream that ended, after which a result taken
from a stream left open counts as waited for."""

LIFECYCLE = "basic/lifecycle"
SUBSCRIPTIONS_PAGE = "basic/patterns/subscriptions"
ONLY_NEGOTIATED = "- Respect the negotiated protocol version - Only use capabilities"
"""The list under 'Both parties SHOULD/MUST:' whose second item is the rule of LC-7."""


# -- shared ----------------------------------------------------------------------------------


def _event_json(event: ClientEvent) -> dict[str, Any]:
    return {"event": event.event, "method": event.method, "params": dict(event.params)}


def _surfaced(run: ScenarioRun, method: str) -> list[dict[str, Any]]:
    return [_event_json(e) for e in run.events if e.event == "notification" and e.method == method]


async def _until_surfaced(session: Session, method: str, *, standalone: bool = False) -> bool:
    return await session.until_surfaced(
        f"{method} surfaced",
        lambda events: any(e.method == method for e in events),
        standalone=standalone,
    )


def _server_capabilities(run: ScenarioRun) -> dict[str, Any]:
    for request in run.requests("initialize"):
        response = response_to(run, request)
        result = (response or {}).get("message", {}).get("result")
        if isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
            return dict(result["capabilities"])
    return {}


def _client_capabilities(run: ScenarioRun) -> dict[str, Any]:
    for request in run.requests("initialize"):
        capabilities = (request["message"].get("params") or {}).get("capabilities")
        if isinstance(capabilities, dict):
            return capabilities
    return {}


def _initialize_evidence(run: ScenarioRun) -> list[dict[str, Any]]:
    for request in run.requests("initialize"):
        response = response_to(run, request)
        return [response] if response is not None else [request]
    return []


def _either(description: str, *triggers: Trigger) -> Trigger:
    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        return [item for t in triggers for item in t.find(run)]

    return trigger(description, find)


def _asked_once(run: ScenarioRun, op: str) -> Operation | None:
    return next((o for o in run.operations if o.op == op), None)


def _only_if_declared(
    run: ScenarioRun, op: str, method: str, declared: bool, capability: str
) -> Verdict:
    """The rule of the three "only if declared" checks (LC-7)."""
    sent = [dict(m) for m in client_sent(method).find(run)]
    operation = _asked_once(run, op)
    if declared:
        return not_applicable(f"the server declared {capability}, so {method} was allowed", sent)
    evidence = [*_initialize_evidence(run), *sent, *op_evidence(operation)]
    if sent:
        return violated(
            f"{method} was sent to a server that did not declare {capability}", evidence
        )
    assert operation is not None  # the trigger: the harness asked for it
    return passed(
        f"asked to {op}, the client sent no {method} to a server without {capability} "
        f"(it {surfaced(operation)})",
        evidence,
    )


# -- logging/setLevel --------------------------------------------------------------------------


async def set_level(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("set_log_level", "warning")
        await session.call("list_tools")


@check(
    "features.set-level-sent",
    requirements=["LOG"],
    clauses=[
        clause("server/utilities/logging", "clients MAY send a logging/setLevel request"),
        silent(
            "the logging page says nothing of the client handing the result of "
            "logging/setLevel to its application",
            branch="not-surfaced",
        ),
    ],
    revisions=HANDSHAKE,
    spec="server/utilities/logging#setting-log-level",
    description="asked to set the log level of a server that declared logging, the client "
    "sends logging/setLevel with that level and surfaces the empty result",
    trigger=asked("set_log_level"),
)
def set_level_sent(run: ScenarioRun) -> Verdict:
    operation = _asked_once(run, "set_log_level")
    assert operation is not None
    sent = [dict(m) for m in client_sent("logging/setLevel").find(run)]
    evidence = [*sent, *op_evidence(operation)]
    if not sent:
        return violated(
            f"asked to set the level warning, the client sent no logging/setLevel "
            f"(it {surfaced(operation)})",
            evidence,
        )
    # Any of them: a client may set a level of its own once connected (info, say) before
    # its application asks for warning.
    levels = [params_of(m).get("level") for m in sent]
    if not any(same_json(level, "warning") for level in levels):
        return violated(
            f"logging/setLevel asked for the level {' and '.join(map(repr, levels))}, "
            "never 'warning'",
            evidence,
        )
    if not operation.ok:
        return violated(
            f"the server answered {{}}, but the client {surfaced(operation)}",
            evidence,
            clause="not-surfaced",
        )
    return passed("logging/setLevel with the level warning, answered and surfaced", evidence)


SET_LEVEL_ASKED = _either(
    "the harness asked the client to set a log level, or the client sent logging/setLevel",
    asked("set_log_level"),
    client_sent("logging/setLevel"),
)


def set_level_only_if_declared(run: ScenarioRun) -> Verdict:
    """The rule of features.set-level-only-if-declared (declared in harness.suite.features)."""
    return _only_if_declared(
        run,
        "set_log_level",
        "logging/setLevel",
        "logging" in _server_capabilities(run),
        "logging",
    )


# -- resources/subscribe -----------------------------------------------------------------------


async def subscribe(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    if (await session.call("subscribe_resource", NOTES_URI)).ok:
        # The update is the server's own message: over HTTP it needs the GET stream.
        await _until_surfaced(session, "notifications/resources/updated", standalone=True)
    await session.call("unsubscribe_resource", NOTES_URI)


async def subscribe_undeclared(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("subscribe_resource", NOTES_URI)
        await session.call("list_resources")


@check(
    "features.subscribe-only-if-declared",
    requirements=["RES", "LC-7"],
    clauses=[
        clause(LIFECYCLE, "SHOULD: " + ONLY_NEGOTIATED, "2024-11-05", "2025-03-26"),
        clause(LIFECYCLE, "MUST: " + ONLY_NEGOTIATED, "2025-06-18", "2025-11-25"),
    ],
    revisions=HANDSHAKE,
    spec="server/resources#capabilities",
    description="resources/subscribe is never sent to a server whose resources capability "
    "does not declare subscribe",
    trigger=_either(
        "the harness asked the client to subscribe, or the client sent resources/subscribe",
        asked("subscribe_resource"),
        client_sent("resources/subscribe"),
    ),
)
def subscribe_only_if_declared(run: ScenarioRun) -> Verdict:
    resources = _server_capabilities(run).get("resources")
    declared = isinstance(resources, dict) and resources.get("subscribe") is True
    return _only_if_declared(
        run, "subscribe_resource", "resources/subscribe", declared, "resources.subscribe"
    )


@check(
    "features.resource-updates-surfaced",
    requirements=["RES"],
    clauses=[
        silent(
            "the subscriptions section only says clients 'can' subscribe and receive "
            "notifications; nothing binds the client to surface an update"
        ),
        silent(
            "resources/unsubscribe is on no prose page at these revisions (only in the "
            "schema, with a lowercase 'should'), so nothing requires it",
            branch="no-unsubscribe",
        ),
    ],
    revisions=HANDSHAKE,
    spec="server/resources#subscriptions",
    description="a subscribed resource's notifications/resources/updated reaches the "
    "application, and unsubscribing sends resources/unsubscribe for the same URI",
    trigger=server_sent("notifications/resources/updated"),
)
def resource_updates_surfaced(run: ScenarioRun) -> Verdict:
    updates = [dict(u) for u in server_sent("notifications/resources/updated").find(run)]
    subscribed = [dict(m) for m in client_sent("resources/subscribe", uri=NOTES_URI).find(run)]
    handed = [e for e in _surfaced(run, "notifications/resources/updated")]
    evidence = [*subscribed, *updates, *handed]
    if not [e for e in handed if same_json(e["params"].get("uri"), NOTES_URI)]:
        return violated(
            "the server said the subscribed resource was updated, and the client did not "
            "surface notifications/resources/updated for it",
            evidence,
        )
    unsubscribed = [dict(m) for m in client_sent("resources/unsubscribe", uri=NOTES_URI).find(run)]
    operation = _asked_once(run, "unsubscribe_resource")
    if not unsubscribed:
        return violated(
            f"asked to unsubscribe, the client sent no resources/unsubscribe for {NOTES_URI} "
            f"(it {surfaced(operation) if operation else 'was never asked'})",
            [*evidence, *op_evidence(operation)],
            clause="no-unsubscribe",
        )
    return passed(
        "the update was surfaced, and the client unsubscribed from the same URI",
        [*evidence, *unsubscribed],
    )


# -- resources/templates/list ----------------------------------------------------------------

TEMPLATE_NAMES = ["notes", "logs"]  # fixtures/features/resource-templates.json, two pages
TEMPLATES_CURSOR = "page-2 +/="
PAGINATION = "server/utilities/pagination"


async def list_templates(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_resource_templates")


@check(
    "features.resource-templates-listed",
    requirements=["RES", "TL-1"],
    clauses=[
        clause(PAGINATION, "Clients SHOULD: - Treat a missing nextCursor"),
        clause(PAGINATION, "Clients MUST treat cursors as opaque tokens", branch="cursor-modified"),
    ],
    revisions=HANDSHAKE,
    spec="server/resources#resource-templates",
    description="resources/templates/list follows nextCursor verbatim, and every template of "
    "every page reaches the application",
    trigger=asked("list_resource_templates"),
)
def resource_templates_listed(run: ScenarioRun) -> Verdict:
    operation = _asked_once(run, "list_resource_templates")
    assert operation is not None
    pages = run.requests("resources/templates/list")
    evidence = [*pages, *op_evidence(operation)]
    cursors = [(p["message"].get("params") or {}).get("cursor") for p in pages]
    if TEMPLATES_CURSOR not in cursors:
        reason = (
            f"the first page ended with nextCursor {TEMPLATES_CURSOR!r}, and the client asked "
            f"with the cursors {cursors!r}"
        )
        if any(cursor is not None for cursor in cursors):  # a cursor, not the one given
            return violated(reason, evidence, clause="cursor-modified")
        return violated(reason, evidence)  # the next page never asked for
    templates = (operation.value or {}).get("resourceTemplates") if operation.ok else None
    names = [t.get("name") for t in templates or [] if isinstance(t, dict)]
    if names != TEMPLATE_NAMES:
        return violated(
            f"both pages were answered, and the client {surfaced(operation)} "
            f"(templates {names!r}, not {TEMPLATE_NAMES!r})",
            evidence,
        )
    return passed(
        "both pages fetched, the cursor sent back verbatim, both templates surfaced", evidence
    )


# -- completion/complete ----------------------------------------------------------------------


async def complete(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("complete", PROMPT_REF, ARGUMENT)


async def complete_undeclared(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("complete", PROMPT_REF, ARGUMENT)
        await session.call("list_prompts")


COMPLETION_REVISIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
"""The completions capability exists from 2025-03-26 (2024-11-05 had none to declare)."""


@check(
    "features.complete-only-if-declared",
    requirements=["COMPLETION", "LC-7"],
    clauses=[
        clause(LIFECYCLE, "SHOULD: " + ONLY_NEGOTIATED, "2025-03-26"),
        clause(LIFECYCLE, "MUST: " + ONLY_NEGOTIATED, "2025-06-18", "2025-11-25"),
    ],
    revisions=COMPLETION_REVISIONS,
    spec="server/utilities/completion#capabilities",
    description="completion/complete is never sent to a server that did not declare completions",
    trigger=_either(
        "the harness asked the client to complete an argument, or the client sent "
        "completion/complete",
        asked("complete"),
        client_sent("completion/complete"),
    ),
)
def complete_only_if_declared(run: ScenarioRun) -> Verdict:
    declared = "completions" in _server_capabilities(run)
    return _only_if_declared(run, "complete", "completion/complete", declared, "completions")


@check(
    "features.completion-surfaced",
    requirements=["COMPLETION"],
    clauses=[
        silent(
            "the completion/complete request is described without a keyword, and the page's "
            "client SHOULDs (debounce, cache, handle partial results) say nothing of passing "
            "the ref, the argument or the values on intact"
        ),
    ],
    revisions=COMPLETION_REVISIONS,
    spec="server/utilities/completion#requesting-completions",
    description="completion/complete carries the ref and the argument asked for, and the "
    "completion values come back to the application as the server sent them",
    trigger=client_sent("completion/complete"),
)
def completion_surfaced(run: ScenarioRun) -> Verdict:
    sent = [dict(m) for m in client_sent("completion/complete").find(run)]
    operation = _asked_once(run, "complete")
    evidence = [*sent, *op_evidence(operation)]
    params = sent[0]["message"].get("params") or {}
    if not same_json(params.get("ref"), PROMPT_REF) or not same_json(
        params.get("argument"), ARGUMENT
    ):
        return violated(
            f"completion/complete asked for ref {params.get('ref')!r} and argument "
            f"{params.get('argument')!r}, not {PROMPT_REF!r} and {ARGUMENT!r}",
            evidence,
        )
    if operation is None or not operation.ok:
        return violated(
            f"the server answered with completions, but the client "
            f"{surfaced(operation) if operation else 'reported nothing'}",
            evidence,
        )
    values = ((operation.value or {}).get("completion") or {}).get("values")
    if not same_json(values, COMPLETIONS):
        return violated(f"the client surfaced the values {values!r}, not {COMPLETIONS!r}", evidence)
    return passed("the completion request and its values, intact", evidence)


# -- roots change -----------------------------------------------------------------------------


def _roots_answered(entries: Entries) -> bool:
    return any(
        e["kind"] == "message"
        and e.get("direction") == "client"
        and same_json(e["message"].get("id"), "roots-1")
        for e in entries
    )


async def change_roots(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    if (await session.call("set_roots", list(NEW_ROOTS))).ok:
        await session.until(
            "the answer to roots/list after the change", _roots_answered, standalone=True
        )


@check(
    "features.roots-list-changed",
    requirements=["ROOTS", "LC-6"],
    clauses=[
        clause("client/roots", "clients that support listChanged MUST send a notification"),
        clause(
            "basic/index",
            "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0",
            branch="unanswered",
        ),
        silent(
            "client/roots shows roots/list answered with the updated roots only in a diagram "
            "and an example, with no keyword: nothing binds the answer to the new roots",
            branch="old-roots",
        ),
    ],
    revisions=HANDSHAKE,
    spec="client/roots#root-list-changes",
    description="a client that declared roots.listChanged sends notifications/roots/"
    "list_changed when its roots change, and the next roots/list gets the new roots",
    feature="roots",
    trigger=asked("set_roots"),
)
def roots_list_changed(run: ScenarioRun) -> Verdict:
    operation = _asked_once(run, "set_roots")
    assert operation is not None
    roots = _client_capabilities(run).get("roots")
    init = [r for r in run.requests("initialize")][:1]
    if not (isinstance(roots, dict) and roots.get("listChanged") is True):
        return not_applicable(
            "the client did not declare roots.listChanged: it owes no notification",
            [*init, *op_evidence(operation)],
        )
    changed = [dict(m) for m in client_sent("notifications/roots/list_changed").find(run)]
    evidence = [*init, *op_evidence(operation), *changed]
    if not changed:
        return violated(
            "the client declared roots.listChanged, its roots changed, and it sent no "
            "notifications/roots/list_changed",
            evidence,
        )
    # Over HTTP the server's roots/list travels on the GET stream: a client that never
    # opened one was never asked, and owes no answer.
    asked = [
        e
        for e in run.entries
        if e["kind"] == "message"
        and e["direction"] == "server"
        and e["message"].get("method") == "roots/list"
        and same_id(e["message"].get("id"), "roots-1")
    ]
    if not asked:
        return not_applicable(
            "list_changed was sent, but the server's roots/list after it was never delivered "
            "(over HTTP it needs the GET stream, which the client did not open)",
            evidence,
        )
    answers = [m for m in run.client_messages() if same_id(m["message"].get("id"), "roots-1")]
    if not answers:
        return violated(
            "the roots/list sent after the change was never answered",
            [*evidence, *asked],
            clause="unanswered",
        )
    got = (answers[0]["message"].get("result") or {}).get("roots")
    if not same_json(got, list(NEW_ROOTS)):
        return violated(
            f"after the change, roots/list was answered with {got!r}, not the new roots",
            [*evidence, answers[0]],
            clause="old-roots",
        )
    return passed(
        "list_changed sent, and roots/list answered with the new roots", [*evidence, answers[0]]
    )


# -- tasks (2025-11-25) -------------------------------------------------------------------------


async def tasks_poll_and_cancel(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    created = await session.call("call_tool_as_task", "slow", {}, task={"ttl": 60000})
    if created.ok:
        await session.call("get_task", "task-slow")
        await session.call("get_task", "task-slow")
        await session.call("task_result", "task-slow")
    if (await session.call("call_tool_as_task", "long", {}, task={"ttl": 60000})).ok:
        await session.call("cancel_task", "task-long")


def _answered_statuses(run: ScenarioRun, gets: list[dict[str, Any]]) -> list[Any]:
    """The status the server answered to each of these tasks/get, in order."""
    statuses = []
    for get in gets:
        response = response_to(run, get)
        if response is not None and isinstance(response["message"].get("result"), dict):
            statuses.append(response["message"]["result"].get("status"))
    return statuses


def _in_order(seen: list[Any], among: list[Any]) -> bool:
    """Whether every item of `seen` is in `among`, in the same order (typed JSON)."""
    rest = iter(among)
    return all(any(same_json(item, other) for other in rest) for item in seen)


@check(
    "tools.task-polled",
    requirements=["TL-9"],
    clauses=[
        silent(
            "the tasks page describes the created task, tasks/result and the statuses "
            "without binding the client to fetch the result or to hand any of them to its "
            "application"
        ),
        clause(
            "basic/utilities/tasks",
            "clients MAY invoke the tool as a task",
            branch="no-task-member",
        ),
        clause(
            "basic/utilities/tasks",
            "Requestors SHOULD continue polling until the task reaches",
            branch="not-polled",
        ),
    ],
    revisions=("2025-11-25",),
    spec="basic/utilities/tasks#getting-tasks",
    description="a task-augmented tools/call surfaces the task the server created; tasks/get "
    "and tasks/result name that taskId, and the statuses and the result come back intact",
    feature="tools",
    trigger=asked("call_tool_as_task", "slow"),
)
def task_polled(run: ScenarioRun) -> Verdict:
    created = first_operation(run, "call_tool_as_task", "slow")
    assert created is not None
    calls = tool_calls(run, "slow")
    evidence = [*calls[:1], *op_evidence(created)]
    if not calls or not isinstance((calls[0]["message"].get("params") or {}).get("task"), dict):
        return violated(
            "asked for a task-augmented call, the client sent no task member",
            evidence,
            clause="no-task-member",
        )
    task = (created.value or {}).get("task") if created.ok else None
    if not isinstance(task, dict) or task.get("taskId") != "task-slow":
        return violated(
            f"the server created task-slow, and the client {surfaced(created)}", evidence
        )
    polls = operations_with(run, "get_task", "task-slow")
    result = _asked_once(run, "task_result")
    gets = requests_with(run, "tasks/get", "taskId", "task-slow")
    results = requests_with(run, "tasks/result", "taskId", "task-slow")
    evidence += [*gets, *results, *op_evidence(*polls, result)]
    if len(gets) < len(polls) or not results:
        reason = (
            f"asked to poll task-slow {len(polls)} times and fetch its result, the client "
            f"sent {len(gets)} tasks/get and {len(results)} tasks/result naming it"
        )
        if len(gets) < len(polls):
            return violated(reason, evidence, clause="not-polled")
        return violated(reason, evidence)  # polled, and the result never fetched
    # A client may also poll on its own (the requestor polls; nothing says only when its
    # application asks), so the statuses its polls surfaced are judged against what the
    # server answered to all the tasks/get, in order, not against the script's sequence.
    statuses = [(o.value or {}).get("status") if o.ok else None for o in polls]
    answered = _answered_statuses(run, gets)
    if not _in_order(statuses, answered):
        return violated(
            f"the polls surfaced the statuses {statuses!r}; the server answered the "
            f"client's tasks/get with {answered!r}, in that order",
            evidence,
        )
    if result is None or not result.ok or not same_json(result.value.get("content"), SLOW_DONE):
        return violated(
            f"tasks/result answered {SLOW_DONE!r}, and the client "
            f"{surfaced(result) if result else 'was never asked'}",
            evidence,
        )
    return passed("task created, polled to completion and its result fetched", evidence)


@check(
    "tools.task-cancelled",
    requirements=["TL-9", "CANCEL"],
    clauses=[
        clause("basic/utilities/cancellation", "the tasks/cancel request MUST be used instead"),
        silent(
            "nothing binds the client to hand the result of tasks/cancel (the task's "
            "cancelled status) to its application",
            branch="not-surfaced",
        ),
    ],
    revisions=("2025-11-25",),
    spec="basic/utilities/tasks#cancelling-tasks",
    description="a task is cancelled with tasks/cancel naming its taskId, never with "
    "notifications/cancelled for the tools/call that created it",
    feature="tools",
    trigger=asked("cancel_task"),
)
def task_cancelled(run: ScenarioRun) -> Verdict:
    operation = _asked_once(run, "cancel_task")
    assert operation is not None
    cancels = requests_with(run, "tasks/cancel", "taskId", "task-long")
    calls = tool_calls(run, "long")
    notified = [
        c
        for c in cancellations(run)
        if any(same_id(cancelled_id(c), call["message"].get("id")) for call in calls)
    ]
    evidence = [*calls[:1], *cancels, *notified, *op_evidence(operation)]
    if notified:
        return violated(
            "the client cancelled the task with notifications/cancelled for the tools/call "
            "(tasks are cancelled with tasks/cancel)",
            evidence,
        )
    if not cancels:
        return violated(
            f"asked to cancel task-long, the client sent no tasks/cancel for it "
            f"(it {surfaced(operation)})",
            evidence,
        )
    status = (operation.value or {}).get("status") if operation.ok else None
    if status != "cancelled":
        return violated(
            f"the server answered cancelled, and the client {surfaced(operation)}",
            evidence,
            clause="not-surfaced",
        )
    return passed("tasks/cancel named the task, and the cancelled status was surfaced", evidence)


# -- subscriptions/listen (2026-07-28) ---------------------------------------------------------


def _second_listen_and_change(entries: Entries) -> bool:
    listens = [
        e
        for e in entries
        if e["kind"] == "message"
        and e.get("direction") == "client"
        and e["message"].get("method") == "subscriptions/listen"
    ]
    sent = any(
        e["kind"] == "message"
        and e.get("direction") == "server"
        and e["message"].get("method") == "notifications/tools/list_changed"
        for e in entries
    )
    return len(listens) >= 2 and sent


async def listen(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    if (await session.call("listen", FILTER)).ok and await session.until(
        "a second listen, and a change sent on it", _second_listen_and_change
    ):
        await _until_surfaced(session, "notifications/tools/list_changed")


@check(
    "stateless.listen-opened",
    requirements=["LISTEN"],
    clauses=[
        silent(
            "'The client sends a subscriptions/listen request with a notifications filter' "
            "has no keyword: nothing obliges a client to listen, or to send the filter its "
            "application asked for"
        ),
        silent(
            "the one client keyword on the acknowledgment ('The client SHOULD check the "
            "acknowledged filter') is about checking it, not about handing it to the "
            "application",
            branch="ack-not-surfaced",
        ),
    ],
    revisions=STATELESS,
    spec="basic/patterns/subscriptions",
    description="asked to listen, the client sends subscriptions/listen with the filter it "
    "was given and surfaces the acknowledged set",
    trigger=asked("listen"),
)
def listen_opened(run: ScenarioRun) -> Verdict:
    operation = _asked_once(run, "listen")
    assert operation is not None
    listens = run.requests("subscriptions/listen")
    evidence = [*listens[:1], *op_evidence(operation)]
    if not listens:
        return violated(
            f"asked to listen, the client sent no subscriptions/listen (it {surfaced(operation)})",
            evidence,
        )
    wanted = (listens[0]["message"].get("params") or {}).get("notifications")
    if not same_json(wanted, FILTER):
        return violated(f"subscriptions/listen asked for {wanted!r}, not {FILTER!r}", evidence)
    acknowledged = (operation.value or {}).get("notifications") if operation.ok else None
    if not same_json(acknowledged, FILTER):
        return violated(
            f"the server acknowledged {FILTER!r}, and the client {surfaced(operation)}",
            evidence,
            clause="ack-not-surfaced",
        )
    return passed("subscriptions/listen with the filter asked for, acknowledged", evidence)


def _first_listen_ended(run: ScenarioRun) -> list[Mapping[str, Any]]:
    listens = run.requests("subscriptions/listen")
    if not listens:
        return []
    response = response_to(run, listens[0])
    return [response] if response is not None and "result" in response["message"] else []


@check(
    "stateless.relisten-after-end",
    requirements=["LISTEN"],
    clauses=[
        silent(
            "after a graceful end the client only 'knows the subscription closed cleanly': "
            "listening again is a MUST only after a stdio reconnection, and a MAY only after "
            "an abrupt drop"
        ),
        silent(
            "basic/index at 2026-07-28 forbids only the id of a request still unanswered, and "
            "the first listen had its response",
            branch="id-reused",
        ),
    ],
    revisions=STATELESS,
    spec="basic/patterns/subscriptions",
    description="when the server ends a subscriptions/listen stream, a client that still "
    "wants its notifications listens again (the server keeps no subscription state)",
    trigger=trigger("the server ended the first subscriptions/listen", _first_listen_ended),
)
def relisten_after_end(run: ScenarioRun) -> Verdict:
    ended = [dict(e) for e in _first_listen_ended(run)]
    listens = run.requests("subscriptions/listen")
    again = listens[1:2]
    if not again:
        return violated(
            "the server ended the listen stream, and the client did not listen again",
            [*listens[:1], *ended],
        )
    if same_id(again[0]["message"].get("id"), listens[0]["message"].get("id")):
        return violated(
            "the second subscriptions/listen reused the id of the first",
            [*listens[:2], *ended],
            clause="id-reused",
        )
    return passed("the client listened again, with a new id", [*listens[:1], *ended, *again])


@check(
    "stateless.listen-notifications-surfaced",
    requirements=["LISTEN", "TL-5"],
    clauses=[
        silent(
            "no page binds the client to hand an opted-in notification to its application: "
            "the listen stream 'delivers the change notifications the client opted in to' "
            "(no keyword), and the nearest SHOULD (server/tools) binds the server"
        ),
    ],
    revisions=STATELESS,
    spec="basic/patterns/subscriptions",
    description="a notification the client opted in to, sent on its listen stream, reaches "
    "the application",
    trigger=server_sent("notifications/tools/list_changed"),
)
def listen_notifications_surfaced(run: ScenarioRun) -> Verdict:
    sent = [dict(e) for e in server_sent("notifications/tools/list_changed").find(run)]
    handed = _surfaced(run, "notifications/tools/list_changed")
    if not handed:
        return violated(
            "tools/list_changed arrived on the listen stream, and the client did not surface it",
            sent,
        )
    return passed("the notification on the listen stream was surfaced", [*sent, *handed])


# -- re-listening after a stdio restart (2026-07-28) -------------------------------------------


def _listens(entries: Entries) -> list[dict[str, Any]]:
    return [
        e
        for e in entries
        if e["kind"] == "message"
        and e.get("direction") == "client"
        and e["message"].get("method") == "subscriptions/listen"
    ]


def _listen_then_exit(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """A subscriptions/listen, and the server process exiting (a crash) after it."""
    crash = next(
        (e for e in run.of_kind("fault") if (e.get("fault") or {}).get("kind") == "crash"), None
    )
    before = [e for e in _listens(run.entries) if crash is not None and e["seq"] < crash["seq"]]
    return [before[0], crash] if before and crash is not None else []


def _restart_after(entries: Entries, seq: int) -> dict[str, Any] | None:
    """The start of a server process after `seq` (the client spawned its server again)."""
    return next((e for e in entries if e["kind"] == "start" and e["seq"] > seq), None)


def _relistened(entries: Entries) -> bool:
    starts = [e for e in entries if e["kind"] == "start"]
    return len(starts) > 1 and any(e["seq"] > starts[1]["seq"] for e in _listens(entries))


async def listen_then_crash(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    if not (await session.call("listen", FILTER)).ok:
        return
    await session.call("call_tool", "crash", {})  # an error: the server exits mid-call
    # A client that restarts its server only when asked for something: ask.
    await session.call("list_tools")
    await session.until("a listen sent to the restarted server", _relistened)


@check(
    "stateless.relisten-after-restart",
    requirements=["LISTEN", "ST-5"],
    clauses=[clause(SUBSCRIPTIONS_PAGE, "the client MUST re-send subscriptions/listen")],
    revisions=STATELESS,
    transports=["stdio"],
    spec="basic/patterns/subscriptions#graceful-closure",
    description="2026 stdio: when the client starts its server again after the process "
    "exited, it sends subscriptions/listen again with the filter of the subscription it "
    "still holds (a new process keeps no subscription)",
    trigger=trigger("the client listened, then the server process exited", _listen_then_exit),
)
def relisten_after_restart(run: ScenarioRun) -> Verdict:
    first, crash = _listen_then_exit(run)
    restart = _restart_after(run.entries, crash["seq"])
    if restart is None:
        # The MUST holds once the connection is re-established; whether the client starts
        # its server again at all is stdio.restart-after-exit's SHOULD.
        return not_applicable(
            "the server exited and the client did not start it again: there was no new "
            "connection to listen on",
            [first, crash],
        )
    again = [e for e in _listens(run.entries) if e["seq"] > restart["seq"]]
    evidence = [first, crash, restart, *again[:1]]
    if not again:
        return violated(
            f"the client started the server again (pid {restart.get('pid')}) and did not "
            "send it subscriptions/listen: its subscription is gone",
            evidence,
        )
    wanted = (again[0]["message"].get("params") or {}).get("notifications")
    if not same_json(wanted, FILTER):
        return violated(
            f"after the restart the client listened for {wanted!r}, not for the {FILTER!r} "
            "of its subscription",
            evidence,
        )
    return passed(
        f"after the restart (pid {restart.get('pid')}) the client listened again, same filter",
        evidence,
    )


# -- two subscriptions/listen at once (2026-07-28) ----------------------------------------------

# The drive's two listens, by the key each is given (`listen_routing`): both opt in to tools
# changes, and each to one more kind. The script's last send is its only tools change, on
# the first alone, so a client that routes by kind instead of by subscriptionId surfaces it
# under both; and since no earlier send makes that pair, the drive's wait for every pair
# cannot end before the client has handled it
# (fixtures/stateless/listen-two-subscriptions.json).
SUBSCRIPTIONS: dict[int, dict[str, Any]] = {
    1: {"toolsListChanged": True, "promptsListChanged": True},
    2: {"toolsListChanged": True, "resourcesListChanged": True},
}
_CHANGES = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }
)


def _tagged_changes(entries: Entries) -> list[dict[str, Any]]:
    """The change notifications the server sent marked with a subscription's id."""
    return [
        e
        for e in entries
        if e["kind"] == "message"
        and e.get("direction") == "server"
        and e["message"].get("method") in _CHANGES
        and META_SUBSCRIPTION_ID in ((e["message"].get("params") or {}).get("_meta") or {})
    ]


def _last_changes_sent(entries: Entries) -> bool:
    """The script's last send happened: its only tools change, after the others."""
    return any(
        e["message"]["method"] == "notifications/tools/list_changed"
        for e in _tagged_changes(entries)
    )


def _tag(entry: Mapping[str, Any]) -> Any:
    return entry["message"]["params"]["_meta"][META_SUBSCRIPTION_ID]


def _typed(request_id: Any) -> tuple[str, str]:
    """A key under which JSON-RPC ids are equal only in value and JSON type ("1" is not 1)."""
    return type(request_id).__name__, repr(request_id)


def _routed_changes(events: list[ClientEvent]) -> set[tuple[int | str, str]]:
    """(subscription key, method) of every change notification surfaced under a subscription."""
    return {
        (e.subscription, e.method)
        for e in events
        if e.event == "notification" and e.method in _CHANGES and e.subscription is not None
    }


async def listen_twice(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    for key, notifications in SUBSCRIPTIONS.items():
        if not (await session.call("listen", notifications, subscription=key)).ok:
            return
    sent = await session.until("every change notification sent", _last_changes_sent)
    if sent and session.watch is not None:
        wanted = {
            (_typed(_tag(e)), e["message"]["method"])
            for e in _tagged_changes(session.watch.entries())
        }
        await session.until_surfaced(
            "as many (subscription, change) pairs surfaced as were sent",
            lambda events: len(_routed_changes(events)) >= len(wanted),
        )


def _listen_ids(run: ScenarioRun) -> dict[int, list[Any]]:
    """The ids of the subscriptions/listen requests made for each listen the harness asked
    for (by its key), told apart by the filter each asked for."""
    requests = run.requests("subscriptions/listen")
    ids: dict[int, list[Any]] = {}
    for operation in run.operations:
        key = operation.args.get("subscription")
        if operation.op != "listen" or not isinstance(key, int):
            continue
        wanted = operation.first_arg
        ids[key] = [
            r["message"].get("id")
            for r in requests
            if same_json((r["message"].get("params") or {}).get("notifications"), wanted)
        ]
    return ids


def _two_subscriptions_tagged(run: ScenarioRun) -> list[Mapping[str, Any]]:
    ids = _listen_ids(run)
    key_of = {_typed(i): key for key, known in ids.items() for i in known}
    tagged: list[Mapping[str, Any]] = [
        e for e in _tagged_changes(run.entries) if _typed(_tag(e)) in key_of
    ]
    return tagged if len({key_of[_typed(_tag(e))] for e in tagged}) >= 2 else []


@check(
    "stateless.listen-correlated",
    requirements=["LISTEN", "ST-5"],
    clauses=[
        clause(SUBSCRIPTIONS_PAGE, "clients MUST use this field to correlate"),
        clause("basic/transports/stdio", "Clients MUST correlate these using the"),
        silent(
            "the MUST to correlate by subscriptionId is said for stdio only; over HTTP each "
            "listen has its own stream, and the id is there only 'so clients can "
            "demultiplex them' (no keyword)",
            branch="over-http",
        ),
        silent(
            "correlating is required, handing a notification to the application at all is "
            "not: no sentence binds the client to surface it",
            branch="lost",
        ),
    ],
    revisions=STATELESS,
    spec="basic/patterns/subscriptions#multiple-concurrent-subscriptions",
    description="with two subscriptions/listen open at once, every change notification is "
    "surfaced under the subscription whose id its _meta io.modelcontextprotocol/"
    "subscriptionId carries, and under no other (on stdio the one channel carries both)",
    trigger=trigger(
        "the server sent change notifications marked with the ids of two subscriptions",
        _two_subscriptions_tagged,
    ),
)
def listen_correlated(run: ScenarioRun) -> Verdict:
    # The MUST is spelled out for stdio (one channel for every subscription); over HTTP each
    # subscription has a stream of its own, and the id on every message of it names the
    # listen request that opened it all the same, so one rule serves both transports (but
    # only on stdio does a keyword bind the client to it: branch "over-http").
    # Coalescing repeats is allowed: what is compared is which kinds of change each
    # subscription surfaced, not how many times.
    ids = _listen_ids(run)
    key_of = {_typed(i): key for key, known in ids.items() for i in known}
    tagged = _two_subscriptions_tagged(run)
    expected: dict[int, set[str]] = {key: set() for key in ids}
    for entry in tagged:
        expected[key_of[_typed(_tag(entry))]].add(entry["message"]["method"])
    surfaced = _routed_changes(run.events)
    shown = [
        {"event": "notification", "method": method, "subscription": key}
        for key, method in sorted(surfaced, key=repr)
    ]
    evidence = [*run.requests("subscriptions/listen"), *tagged, *shown]

    def name(key: int | str) -> str:
        known = ids.get(key) if isinstance(key, int) else None
        return (
            f"subscription {key!r} (subscriptions/listen id {known[0]!r})" if known else repr(key)
        )

    wrong = sorted(
        (key, method)
        for key, method in surfaced
        if not isinstance(key, int) or method not in expected.get(key, set())
    )
    if wrong:
        listed = "; ".join(
            f"{method} under {name(key)}, which the server sent it on "
            f"{' and '.join(name(k) for k in expected if method in expected[k]) or 'no subscription'}"
            for key, method in wrong
        )
        return violated(
            f"surfaced under a subscription whose id it did not carry: {listed}",
            evidence,
            clause="over-http" if run.transport == "http" else "",
        )
    lost = sorted(
        (key, method)
        for key, methods in expected.items()
        for method in methods
        if (key, method) not in surfaced
    )
    if lost:
        listed = "; ".join(f"{method} on {name(key)}" for key, method in lost)
        return violated(
            f"sent on a subscription and not surfaced under it (nor under another): {listed}",
            evidence,
            clause="lost",
        )
    return passed(
        f"{len(tagged)} change notifications on two subscriptions, each surfaced under the "
        "subscription whose id it carried and under no other",
        evidence,
    )


# -- an SSE response left open after its result -------------------------------------------------


async def call_twice(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})
    await session.call("call_tool", "add", {"a": 1, "b": 2})


def _left_open(run: ScenarioRun) -> list[Mapping[str, Any]]:
    calls = run.requests("tools/call")
    response = response_to(run, calls[0]) if calls else None
    return [response] if response is not None else []


@check(
    "http.stream-left-open-not-blocking",
    requirements=["HT-3"],
    clauses=[
        clause(
            "basic/transports",
            "The client MUST support both these cases",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
        ),
        clause("basic/transports/streamable-http", "The client MUST support both", "2026-07-28"),
        silent(
            "2024-11-05 has no Streamable HTTP (its HTTP+SSE answers every request on the one "
            "long-lived stream), and the check runs over http only",
            "2024-11-05",
        ),
    ],
    transports=("http",),
    spec="basic/transports#sending-messages-to-the-server",
    description="a result that arrives on an SSE response the server leaves open is "
    "surfaced at once: the client does not wait for the stream to end",
    trigger=trigger("the server answered tools/call on an SSE stream it left open", _left_open),
)
def stream_left_open(run: ScenarioRun) -> Verdict:
    response = _left_open(run)
    operation = first_operation(run, "call_tool", "add")
    if operation is None:
        return missing(run, "the call whose stream was left open")
    evidence = [*map(dict, response), *op_evidence(operation)]
    if not operation.ok:
        return violated(
            f"the result arrived on a stream left open, and the client {surfaced(operation)}: "
            "it waited for the end of the stream",
            evidence,
        )
    # Beside the same call answered on a stream that ended: on a loaded machine any call
    # can take seconds, and only the difference is the client's waiting.
    usual = next(
        (o for o in operations_with(run, "call_tool", "add") if o.ok and o is not operation),
        None,
    )
    baseline = usual.seconds if usual is not None else 0.0
    if operation.seconds > baseline + _SLOW_STREAM:
        return violated(
            f"the result took {operation.seconds:.1f} s to surface, against "
            f"{baseline:.2f} s for the same call on a stream that ended: the client waited "
            "for the stream to end",
            [*evidence, *op_evidence(usual)],
        )
    if not same_json(operation.value.get("content"), THREE):
        return violated(f"the result was surfaced as {operation.value!r}", evidence)
    return passed(f"the result surfaced in {operation.seconds:.2f} s, stream still open", evidence)


SCENARIOS: list[Scenario] = [
    Scenario(
        "features-set-level",
        "features/set-level.json",
        checks=("features.set-level-sent",),
        drive=set_level,
        description="a server that declares logging; the client is asked to set the level warning",
        requires=frozenset({"tools", "set_log_level"}),
    ),
    Scenario(
        "features-set-level-undeclared",
        "features/set-level-undeclared.json",
        checks=("features.set-level-only-if-declared",),
        drive=set_level,
        description="a server without logging; the client is asked to set a log level",
        requires=frozenset({"tools", "set_log_level"}),
    ),
    Scenario(
        "features-subscribe",
        "features/subscribe.json",
        checks=("features.resource-updates-surfaced",),
        drive=subscribe,
        waits_on_the_client=True,
        description="a server with resources.subscribe; subscribe, an update, unsubscribe",
        requires=frozenset({"resources", "subscribe_resource"}),
    ),
    Scenario(
        "features-subscribe-undeclared",
        "features/subscribe-undeclared.json",
        checks=("features.subscribe-only-if-declared",),
        drive=subscribe_undeclared,
        description="a server whose resources capability lacks subscribe; the client is "
        "asked to subscribe",
        requires=frozenset({"resources", "subscribe_resource"}),
    ),
    Scenario(
        "features-resource-templates",
        "features/resource-templates.json",
        checks=("features.resource-templates-listed",),
        drive=list_templates,
        description="resource templates in two pages",
        requires=frozenset({"resources", "list_resource_templates"}),
    ),
    Scenario(
        "features-completion",
        "features/completion.json",
        checks=("features.completion-surfaced",),
        drive=complete,
        description="a server with completions; the client completes a prompt argument",
        requires=frozenset({"prompts", "complete"}),
    ),
    Scenario(
        "features-completion-undeclared",
        "features/completion-undeclared.json",
        checks=("features.complete-only-if-declared",),
        drive=complete_undeclared,
        description="a server without completions; the client is asked to complete",
        requires=frozenset({"prompts", "complete"}),
    ),
    Scenario(
        "features-roots-changed",
        "features/roots-changed.json",
        checks=("features.roots-list-changed",),
        drive=change_roots,
        waits_on_the_client=True,
        description="the client's roots change while connected; then the server lists them",
        handlers=Handlers(roots=ROOTS),
        requires=frozenset({"tools", "roots", "set_roots"}),
    ),
    Scenario(
        "tools-tasks-polling",
        "tools/tasks-polling.json",
        checks=("tools.task-polled", "tools.task-cancelled"),
        drive=tasks_poll_and_cancel,
        description="2025-11-25: a task polled to completion and its result fetched; "
        "another task cancelled",
        requires=frozenset({"tools", "tasks"}),
    ),
    Scenario(
        "http-listen-relisten",
        "http/listen-relisten.json",
        checks=(
            "stateless.listen-opened",
            "stateless.relisten-after-end",
            "stateless.listen-notifications-surfaced",
        ),
        drive=listen,
        waits_on_the_client=True,
        description="2026-07-28: a listen the server ends with a result, then a second one "
        "that carries tools/list_changed",
        requires=frozenset({"tools", "listen"}),
    ),
    Scenario(
        "stdio-listen-restart",
        "stateless/listen-restart.json",
        checks=("stateless.relisten-after-restart",),
        drive=listen_then_crash,
        waits_on_the_client=True,
        description="2026-07-28 stdio: a listen is open when the server exits on a tools/call; "
        "the tools are listed again afterwards",
        requires=frozenset({"tools", "listen"}),
    ),
    Scenario(
        "listen-two-subscriptions",
        "stateless/listen-two-subscriptions.json",
        checks=("stateless.listen-correlated",),
        drive=listen_twice,
        waits_on_the_client=True,
        description="2026-07-28: two listens open at once, their change notifications "
        "interleaved, each marked with its own subscription's id",
        requires=frozenset({"tools", "listen", "listen_routing"}),
    ),
    Scenario(
        "http-stream-left-open",
        "http/stream-left-open.json",
        checks=("http.stream-left-open-not-blocking",),
        drive=call_twice,
        description="a tools/call answered on an SSE stream that stays open after the result",
        requires=frozenset({"tools"}),
    ),
]
