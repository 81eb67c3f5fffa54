"""The properties a client must keep on any plan, each resting on requirements of the spec.

A property reads one run of a plan (`ScenarioRun`: the transcript and what the client
surfaced) and returns what it found wrong, one line each; an empty list is a pass. The run's
first operation is `connect`; then one operation per operation of the plan, in order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, Literal

from harness.fuzzing._plans import (
    CallTool,
    Complete,
    GetPrompt,
    Listing,
    Plan,
    ReadResource,
    is_fault,
)
from harness.fuzzing._plans import Operation as Planned
from harness.protocol import same_json, validate
from harness.running import Operation as RunOperation
from harness.running import ScenarioRun

__all__ = ["PROPERTIES", "Property", "by_name", "harness_fault"]


@dataclass(frozen=True)
class Property:
    name: str
    requirements: tuple[str, ...]
    """Requirement ids (the requirements digest; harness/suite/_requirements.py)."""
    summary: str
    check: Callable[[Plan, ScenarioRun], list[str]]
    level: Literal["FAIL", "WARN"] = "FAIL"
    """WARN: the property rests on a SHOULD (or on no sentence at all): a client that breaks
    it is reported, never failed."""

    def __str__(self) -> str:
        return f"{self.name} ({', '.join(self.requirements)})"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 300 else text[:300] + "..."


_SINGLES: Final = (CallTool, ReadResource, GetPrompt, Complete)


def _asked(plan: Plan, run: ScenarioRun) -> list[tuple[Planned, RunOperation]]:
    """Each operation of the plan with the run's record of it (missing ones left out)."""
    records = [o for o in run.operations if o.op != "connect" and o.op != "close"]
    return list(zip(plan.operations, records, strict=False))


def _ends(plan: Plan, run: ScenarioRun) -> list[str]:
    found: list[str] = []
    for operation in run.operations:
        if operation.hung or not operation.finished:
            found.append(f"{operation.op} never returned: {operation.error}")
        elif operation.error is not None and operation.error.get("kind") == "crash":
            found.append(
                f"{operation.op} ended with neither a result nor a ClientError: "
                f"{operation.error.get('message')}"
            )
    for number, (planned, record) in enumerate(_asked(plan, run), start=1):
        if isinstance(planned, _SINGLES) and planned.is_fault and record.ok:
            kind = planned.reply["fault"].get("kind")
            found.append(
                f"operation {number} ({record.op}): the server never answered (its fault: "
                f"{kind}), yet the client surfaced a result: {_shown(record.value)}"
            )
    asked = [o for o in run.operations if o.op not in ("connect", "close")]
    if len(asked) < len(plan.operations):
        found.append(f"only {len(asked)} of {len(plan.operations)} operations were asked")
    if run.harness_error:
        found.append(f"the run did not end in time: {run.harness_error}")
    return found


def _probes(plan: Plan, run: ScenarioRun) -> int:
    """How many of the client's first messages are server/discover probes that a client
    declaring 2026-07-28 sends a handshake-era server before initialize (LC-M3, LC-M4: the
    same rule as the suite's `dual_era_probes`): valid 2026-07-28 requests, not a breach."""
    if "2026-07-28" not in run.supports or plan.revision == "2026-07-28":
        return 0
    count = 0
    for entry in run.client_messages():
        if entry["message"].get("method") != "server/discover":
            break
        count += 1
    return count


def _valid(plan: Plan, run: ScenarioRun) -> list[str]:
    found: list[str] = []
    probes = _probes(plan, run)
    for entry in run.entries:
        if entry.get("direction") != "client":
            continue
        if probes and entry["kind"] == "message":
            probes -= 1
            found.extend(
                f"{_shown(entry['message'])}: {violation}"
                for violation in validate(entry["message"], "2026-07-28", "client")
            )
            continue
        if entry["kind"] == "invalid":
            found.append(f"line {entry.get('line')}: not a JSON-RPC message: {entry.get('reason')}")
        elif entry["kind"] == "message":
            for violation in validate(entry["message"], plan.revision, "client"):
                found.append(f"{_shown(entry['message'])}: {violation}")
    return found


def _ids_unique(plan: Plan, run: ScenarioRun) -> list[str]:
    seen: dict[str, Mapping[str, Any]] = {}
    found: list[str] = []
    for entry in run.requests():
        request = entry["message"]
        # Typed: 1 and "1" are different ids.
        key = json.dumps([type(request["id"]).__name__, request["id"]])
        if key in seen:
            found.append(
                f"id {request['id']!r} of {request['method']} was already used by "
                f"{seen[key]['method']}"
            )
        seen[key] = request
    return found


def _judged(plan: Plan, run: ScenarioRun) -> list[tuple[int, Planned, RunOperation]]:
    """Each operation a FAIL-level property judges on what it surfaced, numbered from 1:
    none from the first operation that did not survive a survivable fault before it on
    (`survives-faults` reports that one, at WARN), none the client does not implement
    (`complete` when its `supports` leaves it out), none whose answer is a fatal fault."""
    judged = []
    after_faults = _after_faults(plan)
    for number, (planned, record) in enumerate(_asked(plan, run), start=1):
        if number - 1 in after_faults and not _answered_as_sent(planned, record):
            break
        if _not_implemented(planned, record, run) or (
            isinstance(planned, _SINGLES) and planned.is_fault
        ):
            continue
        judged.append((number, planned, record))
    return judged


def _answered_as_sent(planned: Planned, record: RunOperation) -> bool:
    """Whether the client surfaced the kind of answer the server gave (a result, a tool
    failure, a protocol error), whatever its content: the operation got through."""
    if isinstance(planned, Listing) or not (planned.is_protocol_error or planned.is_fault):
        kind = (record.error or {}).get("kind")
        return record.ok or (
            not isinstance(planned, Listing) and planned.is_error_result and kind == "tool"
        )
    return planned.is_protocol_error and (record.error or {}).get("kind") == "protocol"


def _after_faults(plan: Plan) -> set[int]:
    """Indexes (from 0) of the operations asked right after a survivable fault."""
    return {
        index + 1
        for index, operation in enumerate(plan.operations[:-1])
        if any(is_fault(item) for item in operation.after)
    }


def _not_implemented(planned: Planned, record: RunOperation, run: ScenarioRun) -> bool:
    error = record.error or {}
    return (
        isinstance(planned, Complete)
        and bool(run.supports)
        and "complete" not in run.supports
        and error.get("kind") == "unsupported"
    )


def _where(number: int, planned: Planned, record: RunOperation) -> str:
    named = f" {planned.name!r}" if isinstance(planned, (CallTool, GetPrompt)) else ""
    return f"operation {number} ({record.op}{named})"


def _surfaced(plan: Plan, run: ScenarioRun) -> list[str]:
    connect = run.operation("connect")
    if connect is None or not connect.ok:
        return [f"connect failed on a plain handshake: {connect.error if connect else 'not asked'}"]
    found: list[str] = []
    for number, planned, record in _judged(plan, run):
        found.extend(_surfaced_one(_where(number, planned, record), planned, record))
    return found


# Protocol members the schema types as `number` (Annotations.priority, Resource.size,
# the completion's total): a client whose model holds them as floats surfaces 0 as 0.0,
# which says the same number. Only their value counts there; everything else, application
# data above all (structuredContent, _meta), keeps its JSON type: 5.0 is not 5.
_NUMBER_MEMBERS: Final = ("priority", "size", "total")
_NUMBER_TAG: Final = "\x00number "


def _loosened(value: Any, parent: str = "") -> Any:
    """`value` with each number at a `_NUMBER_MEMBERS` member of an annotations object, of a
    resource (an item of `resources`) or of a completion written as its exact value."""
    if isinstance(value, list):
        return [_loosened(item, parent) for item in value]
    if not isinstance(value, dict):
        return value
    numeric = parent in ("annotations", "resources", "completion")
    return {
        key: _NUMBER_TAG + str(Fraction(item))
        if numeric
        and key in _NUMBER_MEMBERS
        and isinstance(item, int | float)
        and not isinstance(item, bool)
        else _loosened(item, "" if key in ("structuredContent", "_meta") else key)
        for key, item in value.items()
    }


# What a successful answer of each kind surfaces: the members the server sent, as sent.
_SURFACED_MEMBERS: Final[dict[type, tuple[str, ...]]] = {
    CallTool: ("content", "structuredContent"),
    ReadResource: ("contents",),
    GetPrompt: ("messages", "description"),
    Complete: ("completion",),
}


def _surfaced_one(where: str, planned: Planned, record: RunOperation) -> list[str]:
    if isinstance(planned, Listing):
        if not record.ok:
            return [f"{where}: failed on valid pages: {record.error}"]
        if not same_json(_loosened(record.value), _loosened(planned.expected)):
            return [
                f"{where}: surfaced {_shown(record.value)}; the pages held "
                f"{_shown(planned.expected)}"
            ]
        return []
    if planned.is_protocol_error or planned.is_error_result or planned.is_fault:
        return []
    sent = planned.reply["result"]
    if not record.ok:
        return [f"{where}: a successful result was surfaced as a failure: {record.error}"]
    value = record.value if isinstance(record.value, dict) else {}
    found = []
    for member in _SURFACED_MEMBERS[type(planned)]:
        if member in sent and not (
            member in value
            and same_json(_loosened(value[member], member), _loosened(sent[member], member))
        ):
            found.append(
                f"{where}: {member} surfaced as {_shown(value.get(member, '(absent)'))}; "
                f"the server sent {_shown(sent[member])}"
            )
    if isinstance(planned, CallTool) and value.get("isError") is True:
        found.append(f"{where}: a successful result was surfaced with isError true")
    return found


def _errors_apart(plan: Plan, run: ScenarioRun) -> list[str]:
    found: list[str] = []
    for number, planned, record in _judged(plan, run):
        found.extend(_errors_apart_one(_where(number, planned, record), planned, record))
    return found


def _errors_apart_one(where: str, planned: Planned, record: RunOperation) -> list[str]:
    if isinstance(planned, Listing):
        return []
    if planned.is_protocol_error:
        code = planned.reply["error"]["code"]
        error = record.error or {}
        if error.get("kind") != "protocol" or not same_json(error.get("code"), code):
            shown = record.error if record.error is not None else _shown(record.value)
            return [
                f"{where}: a JSON-RPC error {code} was surfaced as {shown}, not as a "
                f"protocol error with code {code}"
            ]
    elif planned.is_error_result:
        return _tool_failure(where, planned.reply["result"], record)
    return []


def _tool_failure(where: str, sent: Mapping[str, Any], record: RunOperation) -> list[str]:
    """An isError result is a tool failure: a result with isError true and its content, or
    a ClientError of kind `tool` (docs/clients.md)."""
    if record.error is not None:
        if record.error.get("kind") == "tool":
            return []
        return [f"{where}: an isError result was surfaced as {record.error}, not a tool failure"]
    value = record.value if isinstance(record.value, dict) else {}
    if value.get("isError") is not True:
        return [f"{where}: an isError result was surfaced as a success: {_shown(value)}"]
    if not same_json(_loosened(value.get("content")), _loosened(sent["content"])):
        return [
            f"{where}: the tool failure's content surfaced as {_shown(value.get('content'))}; "
            f"the server sent {_shown(sent['content'])}"
        ]
    return []


def _survives(plan: Plan, run: ScenarioRun) -> list[str]:
    """SHOULD-level: the operation asked after a line that is not JSON, a long line or
    stderr noise gets through: the client surfaces the kind of answer the server gave
    (what it surfaced of it is for the FAIL-level properties to judge)."""
    asked = _asked(plan, run)
    found: list[str] = []
    for index in sorted(_after_faults(plan)):
        if index >= len(asked):
            continue
        planned, record = asked[index]
        if _not_implemented(planned, record, run) or (
            isinstance(planned, _SINGLES) and planned.is_fault
        ):
            continue
        faults = [item["fault"] for item in plan.operations[index - 1].after if is_fault(item)]
        where = _where(index + 1, planned, record)
        kinds = ", ".join(str(f.get("kind")) for f in faults)
        if not _answered_as_sent(planned, record):
            got = record.error if record.error is not None else _shown(record.value)
            answer = "a JSON-RPC error" if planned.reply.keys() == {"error"} else "an answer"
            found.append(
                f"after the server's deliberate fault ({kinds}): {where}: the server sent "
                f"{answer}, the client surfaced {got}"
            )
    return found


def _capability_of(method: str) -> str | None:
    return {
        "roots/list": "roots",
        "sampling/createMessage": "sampling",
        "elicitation/create": "elicitation",
    }.get(method)


def _server_messages(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return [
        e["message"]
        for e in run.entries
        if e["kind"] == "message" and e.get("direction") == "server"
    ]


def _typed(value: Any) -> str:
    return json.dumps([type(value).__name__, value])


def _answers(plan: Plan, run: ScenarioRun) -> list[str]:
    """Every answer the client writes carries the id of a request the server sent, exactly
    (typed: 1 and "1" differ; no digit lost beyond 2**53), once; every request the server
    sent before an answer (the mock waits for them) is answered; a ping with `{}`."""
    sent = {_typed(m["id"]): m for m in _server_messages(run) if "method" in m and "id" in m}
    # A request sent before an answer the client got: the mock sent that answer only once
    # the request was answered (a client that gave up on the operation first is excused).
    awaited = {
        _typed(m["id"])
        for op, record in _asked(plan, run)
        if record.ok
        for m in op.before
        if "method" in m and "id" in m
    }
    found: list[str] = []
    answered: set[str] = set()
    for message in (m["message"] for m in run.client_messages()):
        if "method" in message or message.get("id") is None:
            continue  # a request, or an answer to no request (say, to a line that is not JSON)
        key = _typed(message["id"])
        request = sent.get(key)
        if request is None:
            found.append(
                f"an answer with id {_shown(message['id'])} answers no request the server "
                f"sent (it sent ids {', '.join(_shown(m['id']) for m in sent.values())})"
            )
        elif key in answered:
            found.append(
                f"the server's {request['method']} {_shown(request['id'])} was answered twice"
            )
        elif request["method"] == "ping" and message.get("result") != {}:
            found.append(f"the ping {_shown(request['id'])} was answered with {_shown(message)}")
        answered.add(key)
    for key in sorted((awaited & set(sent)) - answered):
        request = sent[key]
        found.append(
            f"the server's {request['method']} with id {_shown(request['id'])}, sent before an "
            "answer the client waited for, was never answered"
        )
    return found


PROPERTIES: Final[tuple[Property, ...]] = (
    Property(
        "operations-end",
        ("LC-9",),
        "every operation ends within its bound: a result, a ClientError or a reported "
        "time-out, never a hang or a crash; one the server never answered is no result",
        _ends,
    ),
    Property(
        "messages-valid",
        ("RPC-1", "RPC-3", "LC-1"),
        "every line the client writes is a JSON-RPC message valid for the revision's schema",
        _valid,
    ),
    Property("ids-unique", ("RPC-2",), "no request id is used twice in the session", _ids_unique),
    Property(
        "server-requests-answered",
        ("RPC-4",),
        "every answer carries the id of a request the server sent, exactly (typed), once; "
        "every request the server sent before an answer is answered; a ping with {}",
        _answers,
    ),
    Property(
        "surfaced-as-sent",
        ("TL-1", "TL-2", "RES", "PROMPTS", "COMPLETION"),
        "every page's items, and every result's content, structuredContent, contents, "
        "messages and completion, are surfaced as the server sent them, as typed JSON "
        '(5, 5.0 and "5" differ)',
        _surfaced,
    ),
    Property(
        "errors-told-apart",
        ("TL-4", "RPC-7"),
        "an isError result is surfaced as a tool failure (with its content), a JSON-RPC error "
        "as a protocol error with its code",
        _errors_apart,
    ),
    Property(
        "survives-faults",
        ("ST-1",),
        "after a line that is not JSON, a long line or stderr noise, the next operation is "
        "answered as if the fault had not been there",
        _survives,
        level="WARN",
    ),
)


def by_name(names: Sequence[str]) -> tuple[Property, ...]:
    known = {p.name: p for p in PROPERTIES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown properties {unknown}; known: {', '.join(known)}")
    return tuple(known[n] for n in names)


def harness_fault(run: ScenarioRun) -> str | None:
    """What went wrong on the harness's side (a message the mock refused to send, a client
    that could not start): never the client's failure of a property."""
    if run.start_error:
        return run.start_error
    for entry in run.entries:
        if entry["kind"] == "mock_error":
            return f"the mock refused to send a generated message: {_shown(entry)}"
    return _undeclared_sent(run)


def _undeclared_sent(run: ScenarioRun) -> str | None:
    """A server request for a capability the client's initialize did not declare: the mock
    must withhold it (docs/scripts.md); sent, the run shows nothing about the client."""
    initialize = run.requests("initialize")
    params = initialize[0]["message"].get("params") if initialize else None
    declared = params.get("capabilities") if isinstance(params, dict) else None
    declared = declared if isinstance(declared, dict) else {}
    for message in _server_messages(run):
        capability = _capability_of(str(message.get("method", "")))
        if "id" in message and capability is not None and capability not in declared:
            return (
                f"the mock sent {message['method']} although the client declared no "
                f"{capability}: {_shown(message)}"
            )
    return None
