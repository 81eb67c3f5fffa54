"""Preconditions and root causes: one defect, one FAIL, and it blocks only what it touched.

A scenario's checks only mean something where the client got as far as they need: it
started, it connected, the mock did not refuse what it sent for breaking a transport
rule, its messages were JSON-RPC, the handshake completed. A root cause is one such
failure, placed in the run: when it happened (`moment`, `seq`) and what it touched
(`touches`). Judging (harness/judging/_judge.py) blocks a check by it only when the fault
lay on that check's path; a check whose evidence was complete before the fault is judged.

A root cause's `id` is the check that judges the broken rule (so the report can say
"http.session-id-echoed FAIL blocks 29 items"), and that check's verdict on the same run
is a FAIL or a WARN, never a PASS (`confirmed_causes`); or `client.<operation>` when the
client itself failed (raised, hung, or reported a result it never asked the server for)
and no check of the run explains why; or `client.start` when it could not be started at
all; or `harness` for the harness's own fault (the mock refused to send a message its
revision's schema rejects, a refusal no check finds wrong, a check that raised): never
the client's.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.judging._verdicts import Defect
from harness.protocol import same_json
from harness.running import Operation, ScenarioRun

__all__ = [
    "RootCause",
    "causes_of_failure",
    "failed_operation",
    "invalid_line_owner",
    "root_causes",
    "unread_initialized",
]

# Which check judges the rule behind each kind of refusal the HTTP mock records
# (transcript `refusal` entries; mock_servers/engine/_transcript.py lists the rules), once
# the client holds a session id. A rule missing here (405 to an optional GET, a body too
# large for the mock) is the server's choice, not a client defect, and blocks nothing; so
# is a session that ended (the script expired it, or the client deleted it itself): what
# a client does after that is judged by http.new-session-after-404. The second member
# narrows a rule to an HTTP method or to the transport.
_REFUSAL_ROOTS: Mapping[tuple[str, str | None], str] = {
    ("session-required", None): "http.session-id-echoed",
    ("session-unknown", None): "http.session-id-echoed",
    ("protocol-version", None): "http.protocol-version-header",
    ("not-acceptable", "GET"): "http.get-stream-accept",
    ("not-acceptable", None): "http.accept-header",
    ("header-mismatch", None): "stateless.standard-headers",
    ("unparsable", None): "jsonrpc.messages-valid",
    ("origin", None): "transport.origin",
    ("wrong-path", "sse-legacy"): "sse-legacy.posts-to-endpoint",
    ("wrong-path", None): "http.one-message-per-post",
}
# A request that needs a session sent before the client had one is no failure to echo
# an id it was never given (HT-8): it came before initialize (LC-1).
_BEFORE_A_SESSION = {"session-required", "session-unknown"}

# The request each operation of the client contract must put on the wire, for the first
# call of its kind at least (later ones may be served from a cache, RPC-9).
_OPERATION_METHODS: Mapping[str, str] = {
    "list_tools": "tools/list",
    "call_tool": "tools/call",
    "list_resources": "resources/list",
    "read_resource": "resources/read",
    "list_prompts": "prompts/list",
    "get_prompt": "prompts/get",
    "ping": "ping",
}

_HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_ALWAYS = -math.inf


@dataclass(frozen=True)
class RootCause:
    id: str
    reason: str
    evidence: tuple[Mapping[str, Any], ...] = ()
    moment: float = _ALWAYS
    """When it happened (the clock of `Operation.started`): what the client had done by
    then is evidence the fault cannot have touched. -inf: it touched everything."""
    seq: int | None = None
    """The transcript entry of the fault, when it is one: the run as it stood is the
    entries before it."""
    touched_seqs: frozenset[int] = frozenset()
    """Transcript entries on the fault's path (a refused request's exchange)."""
    touched_ops: tuple[Mapping[str, Any], ...] = ()
    """Operations on its path, as JSON (as evidence cites them)."""
    touches_after: float | None = None
    """From this moment on, everything is on its path (the client itself failed)."""
    until: float = math.inf
    """When the operation that failed ended (a client failure; inf: it never did)."""
    symptom: str | None = None
    """The client failure this cause explains (`client.connect`, ...): a check that
    declares itself independent of that failure is independent of its cause too."""
    defect: Defect | None = None
    """The defect this cause is one instance of, where another check's cause may be the
    same one (a server request of another kind left unanswered too)."""

    @property
    def contained(self) -> bool:
        """The fault touched its own exchange only: the client went on, and no operation
        failed after it."""
        return self.moment != _ALWAYS and self.touches_after is None and not self.touched_ops

    def touches(self, run: ScenarioRun, records: Sequence[Mapping[str, Any]]) -> bool:
        """Whether any of these records (transcript entries, operations as JSON) lies on
        the fault's path."""
        if self.moment == _ALWAYS:
            return True
        for record in records:
            if "seq" in record:
                if int(record["seq"]) in self.touched_seqs:
                    return True
                if self.touches_after is not None and run.moment(record) >= self.touches_after:
                    return True
            elif "op" in record:
                if any(same_json(record, op) for op in self.touched_ops):
                    return True
                started = _op_started(run, record)
                after = self.touches_after
                if after is not None and started is not None and started >= after:
                    return True
        return False


def _count(number: int, noun: str) -> str:
    """ "1 request", "2 requests": a reason reads as a person says it."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _op_started(run: ScenarioRun, record: Mapping[str, Any]) -> float | None:
    for operation in run.operations:
        if same_json(operation.to_json(), record):
            return operation.started
    return None


def root_causes(run: ScenarioRun) -> list[RootCause]:
    """The run's failed preconditions, earliest first (computed once per run)."""
    cached = run.cache.get("root_causes")
    if cached is None:
        cached = run.cache["root_causes"] = _merged(
            sorted(_find_root_causes(run), key=lambda cause: cause.moment)
        )
    return list(cached)


def _merged(causes: list[RootCause]) -> list[RootCause]:
    """One cause per check: an HTTP body the mock could not parse is both a refusal and an
    invalid entry; the first says when, and both say what was touched."""
    merged: dict[str, RootCause] = {}
    for cause in causes:
        first = merged.get(cause.id)
        if first is None:
            merged[cause.id] = cause
            continue
        afters = [t for t in (first.touches_after, cause.touches_after) if t is not None]
        merged[cause.id] = dataclasses.replace(
            first,
            touched_seqs=first.touched_seqs | cause.touched_seqs,
            touched_ops=(*first.touched_ops, *cause.touched_ops),
            touches_after=min(afters) if afters else None,
        )
    return list(merged.values())


def _find_root_causes(run: ScenarioRun) -> list[RootCause]:
    causes: list[RootCause] = []
    if run.start_error is not None:
        return [RootCause("client.start", f"the client could not be started: {run.start_error}")]
    mock_errors = run.of_kind("mock_error")
    if mock_errors:
        # The mock refused to send an invalid message and ended the run: whatever the
        # client did next says nothing about it, so this cause alone blocks every check.
        return [_mock_error_cause(mock_errors)]
    causes += [*_refusal_causes(run), *_invalid_causes(run)]
    connect = run.operation("connect")
    if connect is not None and not connect.ok and not run.scenario.connect_may_fail:
        causes.append(_operation_cause(connect))
    if connect is not None and connect.ok:
        causes += _handshake_causes(run, connect)
    causes += _silent_operations(run)
    return causes


def _mock_error_cause(errors: list[dict[str, Any]]) -> RootCause:
    first = errors[0]
    return RootCause(
        "harness",
        f"mock error (the harness's own fault, not the client's): {first.get('where')}: "
        f"not a valid {first.get('revision')} server message at {first.get('pointer') or '/'}: "
        f"{first.get('reason')}; the mock did not send it and ended the run; please report it",
        tuple(errors[:3]),
    )


def _failure(operation: Operation) -> str:
    error = operation.error or {}
    if operation.hung:
        return f"hung: no answer within {operation.seconds:.1f} s"
    if error.get("kind") == "crash":
        return f"crashed: {error.get('message')}"
    return f"failed: {error.get('message')}"


def _operation_cause(operation: Operation, reason: str | None = None) -> RootCause:
    """The client failed in `operation` (it raised or hung, or `reason`): it, and everything
    after it began, is suspect."""
    return RootCause(
        f"client.{operation.op}",
        reason or f"{operation.op} {_failure(operation)}",
        (operation.to_json(),),
        moment=operation.started,
        touched_ops=(operation.to_json(),),
        touches_after=operation.started,
        until=math.inf if operation.ended is None else operation.ended,
    )


def _failed_after(run: ScenarioRun, moment: float) -> tuple[Mapping[str, Any], ...]:
    """Operations in flight at `moment` or begun after it that failed of themselves (not
    with an answer the server gave): a fault at `moment` may be why."""
    return tuple(
        o.to_json()
        for o in run.operations
        if (o.ended is None or o.ended >= moment) and not o.ok and not _expected_failure(run, o)
    )


def _refusal_causes(run: ScenarioRun) -> list[RootCause]:
    requests = {e.get("request"): e for e in run.of_kind("http_request")}
    found: dict[str, list[Mapping[str, Any]]] = {}
    for refusal in run.of_kind("refusal"):
        if refusal.get("scripted"):
            continue
        root = _refusal_root(run, refusal, requests.get(refusal.get("request")))
        if root is not None:
            found.setdefault(root, []).append(refusal)
    causes = []
    for root, refusals in found.items():
        first = refusals[0]
        # What the refusal touched is the answer the client got instead of the server's:
        # what the client sent is seen whole (its ids, its headers, its messages).
        numbers = {r["request"] for r in refusals if r.get("request") is not None}
        exchange = frozenset(
            int(e["seq"])
            for e in run.entries
            if e.get("request") in numbers and e["kind"] != "http_request"
        )
        said = f"the mock refused {_count(len(refusals), 'request')} of the client"
        causes.append(
            _wire_cause(
                run,
                root,
                refusals,
                f"{said}: {first.get('status')} {first.get('reason')}",
                exchange,
            )
        )
    return causes


def _wire_cause(
    run: ScenarioRun,
    root: str,
    faults: list[Mapping[str, Any]],
    reason: str,
    touched: frozenset[int],
) -> RootCause:
    """A fault on the wire, from its first entry on: it touched `touched`, and whatever
    operation failed of itself from then on."""
    first = faults[0]
    return RootCause(
        root,
        reason,
        tuple(faults[:3]),
        moment=run.moment(first),
        seq=int(first["seq"]),
        touched_seqs=touched,
        touched_ops=_failed_after(run, run.moment(first)),
    )


def _refusal_root(
    run: ScenarioRun, refusal: Mapping[str, Any], request: Mapping[str, Any] | None
) -> str | None:
    rule = str(refusal.get("rule"))
    method = request.get("method") if request is not None else None
    early = rule in _BEFORE_A_SESSION and run.revision in _HANDSHAKE
    if early and not _session_issued_before(run, int(refusal["seq"])):
        return "lifecycle.initialize-first"
    return (
        _param_header_root(refusal)
        or _REFUSAL_ROOTS.get((rule, method))
        or _REFUSAL_ROOTS.get((rule, run.transport))
        or _REFUSAL_ROOTS.get((rule, None))
    )


def _session_issued_before(run: ScenarioRun, seq: int) -> bool:
    """Whether the mock had handed the client a session (an Mcp-Session-Id on a response,
    or an HTTP+SSE endpoint event) before transcript entry `seq`."""
    for entry in run.entries:
        if int(entry["seq"]) >= seq:
            return False
        if entry["kind"] == "http_response" and any(
            name.lower() == "mcp-session-id" for name in entry.get("headers") or {}
        ):
            return True
        if entry["kind"] == "sse_event" and (entry.get("event") or {}).get("event") == "endpoint":
            return True
    return False


def _param_header_root(refusal: Mapping[str, Any]) -> str | None:
    """An Mcp-Param-* header mismatch (the refusal's `header`) is HM-4's rule, not the
    standard headers'."""
    param = str(refusal.get("header", "")).lower().startswith("mcp-param-")
    return "stateless.x-mcp-header" if refusal.get("rule") == "header-mismatch" and param else None


def _invalid_causes(run: ScenarioRun) -> list[RootCause]:
    """Bytes that are no message, charged to the one check that owns them (an invalid
    line is one defect: `invalid_line_owner`)."""
    by_owner: dict[str, list[Mapping[str, Any]]] = {}
    for entry in run.of_kind("invalid"):
        by_owner.setdefault(invalid_line_owner(run, entry), []).append(entry)
    return [
        _wire_cause(
            run,
            owner,
            entries,
            f"the client sent {_count(len(entries), 'message')} that are not JSON-RPC: "
            f"{entries[0].get('reason')}",
            frozenset(int(e["seq"]) for e in entries),
        )
        for owner, entries in by_owner.items()
    ]


_NO_BATCHES_FROM = ("2025-06-18", "2025-11-25", "2026-07-28")


def invalid_line_owner(run: ScenarioRun, entry: Mapping[str, Any]) -> str:
    """The check whose requirement an `invalid` transcript entry breaks, of those that
    could all claim it: one defect, one FAIL. Over stdio, a batch (2025-06-18 on) is
    RPC-6's (stdio.no-batches), a line of a message written over several lines ST-1's
    (stdio.framing), any other line that is not JSON ST-2's (stdio.only-mcp-messages);
    JSON that is no valid JSON-RPC message (a null id, no jsonrpc member) is the message
    rule's (jsonrpc.messages-valid), as it is on every other transport."""
    owners = run.cache.get("invalid_line_owners")
    if owners is None:
        owners = run.cache["invalid_line_owners"] = _invalid_line_owners(run)
    return str(owners[entry["seq"]])


def _invalid_line_owners(run: ScenarioRun) -> dict[int, str]:
    """`invalid_line_owner` for every invalid entry of the run, worked out at once."""
    invalid = run.of_kind("invalid")
    if run.transport != "stdio":
        return {e["seq"]: "jsonrpc.messages-valid" for e in invalid}
    split = _lines_of_split_messages(run)
    owners = {}
    for entry in invalid:
        raw = str(entry.get("raw", ""))
        if raw.lstrip().startswith("[") and run.revision in _NO_BATCHES_FROM:
            owners[entry["seq"]] = "stdio.no-batches"
        elif entry.get("code") != -32700:
            owners[entry["seq"]] = "jsonrpc.messages-valid"
        elif entry["seq"] in split:
            owners[entry["seq"]] = "stdio.framing"
        else:
            owners[entry["seq"]] = "stdio.only-mcp-messages"
    return owners


def _lines_of_split_messages(run: ScenarioRun) -> set[int]:
    """The unparsable stdin lines that are part of one JSON value written over several
    lines (embedded newlines: a pretty-printed message). Each stretch of consecutive
    unparsable lines is joined again and read value by value from each line's start; a
    value that ends past its first line marks every line it spans."""
    decoder = json.JSONDecoder()
    found: set[int] = set()
    stretch: list[Mapping[str, Any]] = []
    lines = [e for e in run.entries if e["kind"] == "invalid" or _client_message(e)]
    for entry in [*lines, None]:
        if entry is not None and entry["kind"] == "invalid":
            stretch.append(entry)
            continue
        raws = [str(e.get("raw", "")) for e in stretch]
        text = "\n".join(raws)
        starts = list(itertools.accumulate((len(raw) + 1 for raw in raws), initial=0))
        line = 0
        while line < len(stretch):
            begin = starts[line] + len(raws[line]) - len(raws[line].lstrip())
            last = line
            try:
                _, end = decoder.raw_decode(text, begin)
            except ValueError:
                end = -1
            else:
                last = bisect.bisect_right(starts, end - 1) - 1
            # A value over several lines, and nothing after it on its last line.
            if last > line and not text[end : starts[last + 1] - 1].strip():
                found.update(int(e["seq"]) for e in stretch[line : last + 1])
            line = last + 1
        stretch = []
    return found


def _client_message(entry: Mapping[str, Any]) -> bool:
    return entry["kind"] == "message" and entry.get("direction") == "client"


def unread_initialized(run: ScenarioRun, after: int) -> list[dict[str, Any]]:
    """Lines after transcript entry `after` that the server could not read but that carry
    a notifications/initialized (in a batch, or written over several lines): the
    notification was sent, and those lines are another check's defect."""
    return [
        e
        for e in run.of_kind("invalid")
        if e["seq"] > after and "notifications/initialized" in str(e.get("raw", ""))
    ]


def _handshake_causes(run: ScenarioRun, connect: Operation) -> list[RootCause]:
    if run.revision not in _HANDSHAKE:
        return []
    messages = run.client_messages()
    init = next((m for m in messages if m["message"].get("method") == "initialize"), None)
    if init is None:
        return [
            RootCause(
                "lifecycle.initialize-first",
                "connect reported success, but the client never sent initialize",
                (connect.to_json(),),
                moment=connect.started,
                touches_after=connect.started,
            )
        ]
    answer = next(
        (
            e
            for e in run.entries
            if e["kind"] == "message"
            and e["direction"] == "server"
            and "result" in e["message"]
            and same_json(e["message"].get("id"), init["message"].get("id"))
        ),
        None,
    )
    initialized = any(m["message"].get("method") == "notifications/initialized" for m in messages)
    # One the mock could not read is that line's defect (its owner's root), not a second.
    if answer is not None and not initialized and not unread_initialized(run, answer["seq"]):
        return [
            RootCause(
                "lifecycle.initialized-notification",
                "the initialize response was never followed by notifications/initialized",
                (init,),
                moment=run.moment(answer),
                seq=int(answer["seq"]) + 1,
                touches_after=run.moment(answer),
            )
        ]
    return []


def _silent_operations(run: ScenarioRun) -> list[RootCause]:
    """An operation that reported success without the request it stands for (the first
    of its kind): the client surfaced something it never asked the server for."""
    causes = []
    seen: set[str] = set()
    sent = {m["message"].get("method") for m in run.client_messages()}
    for operation in run.operations:
        method = _OPERATION_METHODS.get(operation.op)
        if (
            method is None
            or operation.op in seen
            or not operation.ok
            or operation.op in run.scenario.local_answers
        ):
            continue
        seen.add(operation.op)
        if method not in sent:
            said = f"{operation.op} reported success, but the client never sent {method}"
            causes.append(_operation_cause(operation, said))
    return causes


def _expected_failure(run: ScenarioRun, operation: Operation) -> bool:
    """An error the server answered (and the client surfaced) is an exchange that
    completed, like the calls a scenario makes to see errors surfaced; so is a failure
    the drive asked for, and a connect the scenario means to fail."""
    answered = operation.op != "connect" and (operation.error or {}).get("kind") in (
        "protocol",
        "tool",
    )
    return (
        answered
        or operation.deliberate
        or (operation.op == "connect" and run.scenario.connect_may_fail)
    )


def failed_operation(run: ScenarioRun) -> RootCause | None:
    """The first operation that raised or hung, or the run's own failure (a scenario that
    did not finish in time): why a trigger might never have arisen."""
    for operation in run.operations:
        if not operation.ok and not _expected_failure(run, operation):
            return _operation_cause(operation)
    if run.harness_error:
        unfinished = next((o for o in run.operations if o.ended is None), None)
        moment = unfinished.started if unfinished is not None else math.inf
        return RootCause("client.run", run.harness_error, moment=moment, touches_after=moment)
    return None


Explain = Callable[[RootCause], RootCause]


def causes_of_failure(
    run: ScenarioRun, explain: Explain
) -> tuple[list[RootCause], RootCause | None]:
    """The run's root causes and the failed operation, each put in terms of what explains
    it (`explain`: a check of the run whose violation lies inside a failed operation is
    its root, not the symptom), earliest first; a failure of the client that an earlier
    cause inside its window explains is left out (the refusal made connect fail)."""
    causes = root_causes(run)
    explained: list[RootCause] = []
    for cause in causes:
        if cause.id.startswith("client.") and cause.touches_after is not None:
            if any(
                other is not cause and _inside(other, cause) and not other.id.startswith("client.")
                for other in causes
            ):
                continue
            cause = explain(cause)
        explained.append(cause)
    explained += _explained_operations(run, explain, explained)
    failed = failed_operation(run)
    if failed is not None:
        inside = next((c for c in explained if _inside(c, failed)), None)
        failed = inside if inside is not None else explain(failed)
    explained.sort(key=lambda c: c.moment)
    return explained, failed


def _explained_operations(
    run: ScenarioRun, explain: Explain, known: Sequence[RootCause]
) -> list[RootCause]:
    """Each call that failed of itself after connect while a request of the server sent
    inside it went unanswered, which a check of the run judges: a cause of that check, which
    touched the call and what failed after it began, not everything after (the client went
    on). A verdict that rests on such a call ("the call did not complete") is blocked by
    what made it fail, not a second FAIL of the same defect."""
    found: dict[str, RootCause] = {}
    for operation in run.operations:
        if operation.ok or operation.op == "connect" or _expected_failure(run, operation):
            continue
        failure = _operation_cause(operation)
        if any(_inside(cause, failure) for cause in [*known, *found.values()]):
            continue
        charged = explain(failure)
        # Only a request it waited on and never got an answer to surely made it fail:
        # another violation in its window may be its consequence (a crash's restart).
        if charged.defect is None or charged.id in found:
            continue
        found[charged.id] = dataclasses.replace(
            charged, touches_after=None, touched_ops=_failed_after(run, charged.moment)
        )
    return list(found.values())


def _inside(cause: RootCause, failure: RootCause) -> bool:
    """Whether `cause` happened during the failed operation `failure` stands for."""
    return failure.moment <= cause.moment <= failure.until
