"""The properties a client must keep on any plan, each resting on requirements of the spec.

A property reads one run of a plan (`ScenarioRun`: the transcript and what the client
surfaced) and returns what it found wrong, one line each; an empty list is a pass. The run's
first operation is `connect`; then one operation per operation of the plan, in order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from harness.fuzzing._plans import CallTool, ListTools, Plan
from harness.protocol import same_json, validate
from harness.running import Operation, ScenarioRun

__all__ = ["PROPERTIES", "Property", "by_name", "harness_fault"]


@dataclass(frozen=True)
class Property:
    name: str
    requirements: tuple[str, ...]
    """Requirement ids (the requirements digest; harness/suite/_requirements.py)."""
    summary: str
    check: Callable[[Plan, ScenarioRun], list[str]]

    def __str__(self) -> str:
        return f"{self.name} ({', '.join(self.requirements)})"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 300 else text[:300] + "..."


def _asked(plan: Plan, run: ScenarioRun) -> list[tuple[Any, Operation]]:
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
    asked = [o for o in run.operations if o.op not in ("connect", "close")]
    if len(asked) < len(plan.operations):
        found.append(f"only {len(asked)} of {len(plan.operations)} operations were asked")
    if run.harness_error:
        found.append(f"the run did not end in time: {run.harness_error}")
    return found


def _valid(plan: Plan, run: ScenarioRun) -> list[str]:
    found: list[str] = []
    for entry in run.entries:
        if entry.get("direction") != "client":
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


def _surfaced(plan: Plan, run: ScenarioRun) -> list[str]:
    found: list[str] = []
    connect = run.operation("connect")
    if connect is None or not connect.ok:
        return [f"connect failed on a plain handshake: {connect.error if connect else 'not asked'}"]
    for number, (planned, record) in enumerate(_asked(plan, run), start=1):
        where = f"operation {number} ({record.op})"
        if isinstance(planned, ListTools):
            if not record.ok:
                found.append(f"{where}: failed on valid pages: {record.error}")
            elif not same_json(record.value, planned.expected):
                found.append(
                    f"{where}: surfaced {_shown(record.value)}; the pages held "
                    f"{_shown(planned.expected)}"
                )
        elif isinstance(planned, CallTool) and not (
            planned.is_error_result or planned.is_protocol_error
        ):
            found.extend(_result_surfaced(where, planned.reply["result"], record))
    return found


def _result_surfaced(where: str, sent: Mapping[str, Any], record: Operation) -> list[str]:
    if not record.ok:
        return [f"{where}: a successful result was surfaced as a failure: {record.error}"]
    value = record.value if isinstance(record.value, dict) else {}
    found = []
    for member in ("content", "structuredContent"):
        if member in sent and not (member in value and same_json(value[member], sent[member])):
            found.append(
                f"{where}: {member} surfaced as {_shown(value.get(member, '(absent)'))}; "
                f"the server sent {_shown(sent[member])}"
            )
    if value.get("isError") is True:
        found.append(f"{where}: a successful result was surfaced with isError true")
    return found


def _errors_apart(plan: Plan, run: ScenarioRun) -> list[str]:
    found: list[str] = []
    for number, (planned, record) in enumerate(_asked(plan, run), start=1):
        if not isinstance(planned, CallTool):
            continue
        where = f"operation {number} (call_tool {planned.name!r})"
        if planned.is_protocol_error:
            code = planned.reply["error"]["code"]
            error = record.error or {}
            if error.get("kind") != "protocol" or not same_json(error.get("code"), code):
                shown = record.error if record.error is not None else _shown(record.value)
                found.append(
                    f"{where}: a JSON-RPC error {code} was surfaced as {shown}, not as a "
                    f"protocol error with code {code}"
                )
        elif planned.is_error_result:
            found.extend(_tool_failure(where, planned.reply["result"], record))
    return found


def _tool_failure(where: str, sent: Mapping[str, Any], record: Operation) -> list[str]:
    """An isError result is a tool failure: a result with isError true and its content, or
    a ClientError of kind `tool` (docs/clients.md)."""
    if record.error is not None:
        if record.error.get("kind") == "tool":
            return []
        return [f"{where}: an isError result was surfaced as {record.error}, not a tool failure"]
    value = record.value if isinstance(record.value, dict) else {}
    if value.get("isError") is not True:
        return [f"{where}: an isError result was surfaced as a success: {_shown(value)}"]
    if not same_json(value.get("content"), sent["content"]):
        return [
            f"{where}: the tool failure's content surfaced as {_shown(value.get('content'))}; "
            f"the server sent {_shown(sent['content'])}"
        ]
    return []


PROPERTIES: Final[tuple[Property, ...]] = (
    Property(
        "operations-end",
        ("LC-9",),
        "every operation ends within its bound: a result, a ClientError or a reported "
        "time-out, never a hang or a crash",
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
        "surfaced-as-sent",
        ("TL-1", "TL-2"),
        "every page's tools, and every result's content and structuredContent, are surfaced "
        'as the server sent them, as typed JSON (5, 5.0 and "5" differ)',
        _surfaced,
    ),
    Property(
        "errors-told-apart",
        ("TL-4",),
        "an isError result is surfaced as a tool failure (with its content), a JSON-RPC error "
        "as a protocol error with its code",
        _errors_apart,
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
    return None
