"""Small readers of a ScenarioRun shared by the checks: what was sent, when, over what."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.judging import (
    Verdict,
    blocked,
    fail,
    invalid_line_owner,
    not_judged,
    passed,
    trigger,
)
from harness.protocol import same_json
from harness.running import Operation, ScenarioRun

__all__ = [
    "HANDSHAKE",
    "INITIALIZE_ANSWERED",
    "STATELESS",
    "ToolCall",
    "answered",
    "answered_tool_call",
    "body_messages",
    "cancellations",
    "cancelled_by_notification",
    "cancelled_id",
    "crashed",
    "dual_era_probes",
    "error_code",
    "exchanges",
    "first_index",
    "first_operation",
    "header",
    "http_requests",
    "http_response_for",
    "hung_or_crashed",
    "initialize_exchange",
    "initialize_request",
    "invalid_lines",
    "is_empty_result",
    "is_request",
    "judged_elsewhere",
    "keeps_order",
    "missing",
    "never_answered",
    "op_evidence",
    "operations_with",
    "overtaken",
    "params_of",
    "requests_with",
    "response_to",
    "result_of",
    "same_id",
    "surfaced",
    "tool_call",
    "tool_calls",
]

HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS = ("2026-07-28",)


def dual_era_probes(run: ScenarioRun) -> list[dict[str, Any]]:
    """The server/discover probes a dual-era client sent a handshake-era server first.

    The 2026-07-28 revision tells a client that speaks both eras to probe with
    server/discover and fall back to initialize on an error (LC-M3, LC-M4): for such a
    client (one that declares 2026-07-28) those probes are not a breach of LC-1.
    """
    if run.revision == "2026-07-28" or "2026-07-28" not in run.supports:
        return []
    probes = []
    for entry in run.client_messages():
        if entry["message"].get("method") != "server/discover":
            break
        probes.append(entry)
    return probes


def invalid_lines(
    run: ScenarioRun, owner: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The run's `invalid` entries (bytes that are no message) that check `owner` judges,
    and those another check judges: one invalid line is one defect, one FAIL
    (harness.judging.invalid_line_owner says whose it is)."""
    mine: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for entry in run.of_kind("invalid"):
        (mine if invalid_line_owner(run, entry) == owner else others).append(entry)
    return mine, others


def judged_elsewhere(run: ScenarioRun, lines: list[dict[str, Any]]) -> Verdict:
    """What another check's invalid line keeps this one from judging: BLOCKED by it."""
    owner = invalid_line_owner(run, lines[0])
    return blocked(
        owner,
        f"blocked by {owner}: the client sent {len(lines)} "
        f"line{'' if len(lines) == 1 else 's'} that {owner} judges "
        f"(one defect, one FAIL): {lines[0].get('reason')}",
        lines[:3],
    )


def never_answered(
    run: ScenarioRun, request: Mapping[str, Any], reason: str, evidence: Sequence[Mapping[str, Any]]
) -> Verdict:
    """The FAIL of a server request the client never answered, unless it did answer with
    something that is no JSON-RPC message (an `invalid` entry carrying the request's id):
    that answer is the message rule's defect, and BLOCKS this check (one defect, one FAIL)."""
    request_id = request["message"].get("id")
    unreadable = [
        e
        for e in run.of_kind("invalid")
        if e["seq"] > request["seq"] and _carries_id(e, request_id)
    ]
    if unreadable:
        return judged_elsewhere(run, unreadable)
    stray = _answer_under_another_id(run, request)
    if stray is not None:
        reason += (
            f": the answer that followed it carries the id {json.dumps(stray['message'].get('id'))}"
            f", which no server request has, not {json.dumps(request_id)}"
        )
        evidence = [*evidence, stray]
    return fail(reason, evidence)


def _answer_under_another_id(run: ScenarioRun, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The first response the client sent after `request` whose id answers no request the
    server sent: most likely this request's answer under a mangled id."""
    asked = [
        e["message"].get("id")
        for e in run.entries
        if e["kind"] == "message" and e["direction"] == "server" and is_request(e["message"])
    ]
    for entry in run.client_messages():
        message = entry["message"]
        if entry["seq"] <= request["seq"] or "method" in message or "id" not in message:
            continue
        if not any(same_json(message["id"], known) for known in asked):
            return entry
    return None


def _carries_id(entry: Mapping[str, Any], request_id: Any) -> bool:
    """Whether an invalid entry's text is a JSON object whose `id` is `request_id`."""
    try:
        value = json.loads(str(entry.get("raw", "")))
    except ValueError:
        return False
    return isinstance(value, dict) and "id" in value and same_json(value["id"], request_id)


def missing(run: ScenarioRun, what: str) -> Verdict:
    """The exchange a check needs never happened: BLOCKED by the operation that failed
    or hung on the way, or N/A when nothing failed (never a pass, never a FAIL of the
    requirement, which was not tested)."""
    return not_judged(run, what)


def header(entry: Mapping[str, Any], name: str) -> str | None:
    headers = entry.get("headers", {})
    value = headers.get(name.lower())
    return value if isinstance(value, str) else None


def http_requests(run: ScenarioRun, method: str | None = None) -> list[dict[str, Any]]:
    """The client's HTTP requests to the MCP endpoint (`ScenarioRun.endpoint_requests`)."""
    return run.endpoint_requests(method)


def is_request(message: Mapping[str, Any]) -> bool:
    """A JSON-RPC request (a method and an id), not a notification or response."""
    return "method" in message and "id" in message


def body_messages(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON-RPC messages in an HTTP request body ([] if it is not JSON)."""
    try:
        value = json.loads(entry.get("body") or "")
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    return [m for m in items if isinstance(m, dict)]


def first_index(entries: Sequence[Mapping[str, Any]], method: str) -> int | None:
    for index, entry in enumerate(entries):
        if entry.get("kind") == "message" and entry["message"].get("method") == method:
            return index
    return None


def same_id(a: Any, b: Any) -> bool:
    """JSON-RPC ids are equal in value and in JSON type: "1" is not 1."""
    return same_json(a, b)


def is_empty_result(result: Any) -> bool:
    """An empty result (EmptyResult, a ping's answer): an object with no member but,
    maybe, `_meta`, which every result may carry (metadata, not data)."""
    return (
        isinstance(result, dict)
        and set(result) <= {"_meta"}
        and isinstance(result.get("_meta", {}), dict)
    )


def response_to(run: ScenarioRun, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The server's response entry for a client request entry: the first with its id after
    it, unless the client sent another request with that id first (an id may come again
    once its request is over, in a new session for one: it is that request's id then)."""
    request_id = request["message"].get("id")
    for entry in run.entries:
        if (
            entry["seq"] <= request["seq"]
            or entry["kind"] != "message"
            or "id" not in entry["message"]
            or not same_id(entry["message"]["id"], request_id)
        ):
            continue
        is_request = "method" in entry["message"]
        if entry["direction"] == "server" and not is_request:
            return entry
        if entry["direction"] == "client" and is_request:
            return None
    return None


def cancellations(run: ScenarioRun) -> list[dict[str, Any]]:
    """The client's notifications/cancelled, in order."""
    return [
        m for m in run.client_messages() if m["message"].get("method") == "notifications/cancelled"
    ]


def cancelled_id(entry: Mapping[str, Any]) -> Any:
    params = entry["message"].get("params")
    return params.get("requestId") if isinstance(params, dict) else None


def keeps_order(run: ScenarioRun) -> bool:
    """Whether the transcript has the client's messages in the order it sent them: on
    stdio one pipe carries them all; over HTTP each POST has a connection of its own, and
    a busy mock reads them in the order it gets to them."""
    return run.transport == "stdio"


def overtaken(run: ScenarioRun, cancel: Mapping[str, Any]) -> bool:
    """Whether a notifications/cancelled came before the request it names where the
    transcript need not keep the client's order (`keeps_order`)."""
    named = cancelled_id(cancel)
    return not keeps_order(run) and any(
        same_id(r["message"]["id"], named) for r in run.requests() if r["seq"] > cancel["seq"]
    )


def cancelled_by_notification(
    run: ScenarioRun,
    tool: str,
    breach: Callable[[str, Sequence[Mapping[str, Any]]], Verdict],
    *,
    what: str = "the abandoned request",
    context: Sequence[Mapping[str, Any]] = (),
) -> Verdict:
    """Whether a notifications/cancelled after the client's (first) tools/call of `tool`
    names that request's id exactly; `breach` (fail or warn) says how bad it is if none
    does. `context` is evidence the caller adds (the operation).

    Any of the later cancellations counts, not only the first: a client may still be
    cancelling an earlier request (one its own time-out ended) when this one goes out."""
    sent = tool_calls(run, tool)
    if not sent:
        return missing(run, f"a tools/call of {tool}")
    request = sent[0]
    wanted = request["message"]["id"]
    later = [
        c
        for c in cancellations(run)
        if c["seq"] > request["seq"] or (same_id(cancelled_id(c), wanted) and overtaken(run, c))
    ]
    naming = next((c for c in later if same_id(cancelled_id(c), wanted)), None)
    if naming is not None:
        return passed(
            f"{what} was cancelled by notifications/cancelled naming its id",
            [request, naming, *context],
        )
    if not later:
        return breach(
            f"{what} was never cancelled with notifications/cancelled", [request, *context]
        )
    named = ", ".join(repr(cancelled_id(c)) for c in later[:3])
    return breach(
        f"no notifications/cancelled names {what} {wanted!r}; those after it name {named}",
        [request, *later[:3], *context],
    )


def answered(run: ScenarioRun, request: Mapping[str, Any]) -> bool:
    return response_to(run, request) is not None


def params_of(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The params of a transcript entry's message ({}: none, or not an object)."""
    params = entry["message"].get("params")
    return params if isinstance(params, dict) else {}


def result_of(entry: Mapping[str, Any] | None) -> dict[str, Any]:
    """The result of a transcript entry's response ({}: no entry, no result, or not an
    object)."""
    result = entry["message"].get("result") if entry is not None else None
    return result if isinstance(result, dict) else {}


def requests_with(run: ScenarioRun, method: str, member: str, value: Any) -> list[dict[str, Any]]:
    """The client's requests of `method` whose params have `member` equal to `value`
    (a tool or prompt name, a URI)."""
    return [r for r in run.requests(method) if same_json(params_of(r).get(member), value)]


def tool_calls(run: ScenarioRun, tool: str) -> list[dict[str, Any]]:
    """The client's tools/call requests of this tool."""
    return requests_with(run, "tools/call", "name", tool)


def operations_with(run: ScenarioRun, op: str, first_arg: Any) -> list[Operation]:
    """The operations `op` the harness asked with this first argument (a tool name, a
    URI, a prompt name), in order."""
    return [o for o in run.operations if o.op == op and same_json(o.first_arg, first_arg)]


def first_operation(run: ScenarioRun, op: str, first_arg: Any) -> Operation | None:
    """The first of `operations_with`, or None."""
    return next(iter(operations_with(run, op, first_arg)), None)


def op_evidence(*operations: Operation | None) -> list[dict[str, Any]]:
    return [o.to_json() for o in operations if o is not None]


def surfaced(operation: Operation) -> str:
    """What the client surfaced for an operation, in words: the value it returned, the
    failure it reported, or that it hung or crashed (the harness's findings, no report)."""
    error = operation.error or {}
    if operation.ok:
        return f"returned {operation.value!r}"
    if operation.hung:
        return f"hung ({error.get('message')})"
    if error.get("kind") == "crash":
        return f"crashed ({error.get('message')})"
    return f"reported a {error.get('kind')} error: {error.get('message')}"


def crashed(operation: Operation | None) -> Verdict | None:
    """BLOCKED by the operation when the client (its driver) crashed on it: a crash is not
    the behaviour a check judges, neither the right one nor the wrong one. None otherwise."""
    if operation is None or (operation.error or {}).get("kind") != "crash":
        return None
    return blocked(
        f"client.{operation.op}",
        f"not judged: {operation.op} {surfaced(operation)}",
        [operation.to_json()],
    )


def exchanges(
    run: ScenarioRun, method: str | None = None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The client's requests (of `method`) that the server answered, with the answer."""
    pairs = []
    for request in run.requests(method):
        answer = response_to(run, request)
        if answer is not None:
            pairs.append((request, answer))
    return pairs


def error_code(entry: Mapping[str, Any]) -> Any:
    """The JSON-RPC error code of a response entry (None for a result)."""
    error = entry["message"].get("error")
    return error.get("code") if isinstance(error, dict) else None


def http_response_for(run: ScenarioRun, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The HTTP response to the POST that carried a message entry (channel "http:<n>")."""
    channel = str(entry.get("channel") or "")
    if not channel.startswith("http:"):
        return None
    number = channel.removeprefix("http:")
    for response in run.of_kind("http_response"):
        if str(response.get("request")) == number:
            return response
    return None


# -- shapes many judges share: an exchange and what the client made of it -------------------


def initialize_request(run: ScenarioRun) -> dict[str, Any] | None:
    """The client's first initialize request entry, or None."""
    return next(iter(run.requests("initialize")), None)


def initialize_exchange(run: ScenarioRun) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The client's first initialize request and the server's answer to it, or None."""
    request = initialize_request(run)
    response = response_to(run, request) if request is not None else None
    return None if request is None or response is None else (request, response)


def _initialize_answered(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return list(initialize_exchange(run) or ())


INITIALIZE_ANSWERED = trigger("the server answered the client's initialize", _initialize_answered)
"""Trigger of the checks about what follows (or precedes) the initialize answer."""


@dataclass(frozen=True)
class ToolCall:
    """A tools/call the client sent, the server's answer, and what the client surfaced."""

    request: dict[str, Any]
    response: dict[str, Any] | None
    operation: Operation | None

    @property
    def result(self) -> dict[str, Any] | None:
        """The result the server answered with (None: an error, or no answer)."""
        result = (self.response or {}).get("message", {}).get("result")
        return result if isinstance(result, dict) else None

    @property
    def surfaced(self) -> dict[str, Any] | None:
        """The result the client surfaced to its caller (None: it raised or hung)."""
        operation = self.operation
        if operation is None or not operation.ok or not isinstance(operation.value, dict):
            return None
        return operation.value

    @property
    def evidence(self) -> list[dict[str, Any]]:
        return [
            self.request,
            *([self.response] if self.response else ()),
            *op_evidence(self.operation),
        ]


def tool_call(run: ScenarioRun, tool: str) -> ToolCall | None:
    """The first tools/call of `tool` the client sent, its answer, and the first call_tool
    operation of that tool (None: the client never sent one)."""
    sent = tool_calls(run, tool)
    if not sent:
        return None
    return ToolCall(sent[0], response_to(run, sent[0]), first_operation(run, "call_tool", tool))


def answered_tool_call(run: ScenarioRun, tool: str) -> ToolCall | Verdict:
    """The answered tools/call of `tool` and the operation that sent it; else why not
    (N/A or BLOCKED, see `missing`)."""
    call = tool_call(run, tool)
    if call is None or call.response is None or call.operation is None:
        return missing(run, f"an answered tools/call of {tool}")
    return call


def hung_or_crashed(operation: Operation | None) -> Verdict | None:
    """BLOCKED when the operation hung (the harness's bound expired) or crashed: neither
    is something the client reported, so the check cannot read it as a verdict on what it
    surfaced. None otherwise."""
    if operation is None or operation.ok or operation.reported:
        return None
    how = "hung" if operation.hung else "crashed"
    message = (operation.error or {}).get("message")
    return blocked(
        f"client.{operation.op}",
        f"{operation.op} {how} ({message}): nothing the client reported to judge",
        [operation.to_json()],
    )
