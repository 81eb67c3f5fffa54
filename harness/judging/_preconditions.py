"""Preconditions and root causes: one defect, one FAIL.

A scenario's checks only mean something when the client got where the scenario needs it:
it started, it connected, the mock did not refuse what it sent for breaking a transport
rule, its messages were JSON-RPC, the handshake completed. When one of these fails, the
checks that depend on it are BLOCKED by that root cause instead of failing requirements
that were never tested; the root cause's own check (when it has one) is judged as usual
and carries the FAIL.

A root cause's `id` is the check that judges the broken rule (so the report can say
"http.session-id-echoed FAIL blocks 29 items"), or `client.<operation>` when the client
itself failed (raised, hung, or reported a result it never asked the server for), or
`client.start` when it could not be started at all, or `harness` when the mock refused
to send a message that its revision's schema rejects (a `mock_error` entry): a fault of
the script or the mock, never of the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.protocol import same_json
from harness.running import Operation, ScenarioRun

__all__ = ["RootCause", "failed_operation", "root_causes"]

# Which check judges the rule behind each kind of refusal the HTTP mock records
# (transcript `refusal` entries; mock_servers/engine/_transcript.py lists the rules). A rule
# missing here (405 to an optional GET, a body too large for the mock) is the server's
# choice, not a client defect, and blocks nothing; so is a session that ended (the script
# expired it, or the client deleted it itself): what a client does after that is judged
# by http.new-session-after-404. The second member narrows a rule to an HTTP method or
# to the transport.
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


@dataclass(frozen=True)
class RootCause:
    id: str
    reason: str
    evidence: tuple[Mapping[str, Any], ...] = ()


def root_causes(run: ScenarioRun) -> list[RootCause]:
    """The run's failed preconditions, first cause first (computed once per run)."""
    cached = run.cache.get("root_causes")
    if cached is None:
        cached = run.cache["root_causes"] = _find_root_causes(run)
    return list(cached)


def _find_root_causes(run: ScenarioRun) -> list[RootCause]:
    causes: list[RootCause] = []
    if run.start_error is not None:
        return [RootCause("client.start", f"the client could not be started: {run.start_error}")]
    mock_errors = run.of_kind("mock_error")
    if mock_errors:
        # The mock refused to send an invalid message and ended the run: whatever the
        # client did next says nothing about it, so this cause alone blocks every check.
        return [_mock_error_cause(mock_errors)]
    # Wire-level causes first: a refused or unparsable message explains a failed connect,
    # not the other way round.
    causes += _refusal_causes(run)
    invalid = run.of_kind("invalid")
    if invalid:
        causes.append(
            RootCause(
                "jsonrpc.messages-valid",
                f"the client sent {len(invalid)} message(s) that are not JSON-RPC: "
                f"{invalid[0].get('reason')}",
                tuple(invalid[:3]),
            )
        )
    connect = run.operation("connect")
    if connect is not None and not connect.ok and not run.scenario.connect_may_fail:
        causes.append(
            RootCause("client.connect", f"connect {_failure(connect)}", (connect.to_json(),))
        )
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


def _refusal_causes(run: ScenarioRun) -> list[RootCause]:
    methods = {e.get("request"): e.get("method") for e in run.of_kind("http_request")}
    found: dict[str, list[Mapping[str, Any]]] = {}
    for refusal in run.of_kind("refusal"):
        if refusal.get("scripted"):
            continue
        rule = str(refusal.get("rule"))
        method = methods.get(refusal.get("request"))
        root = (
            _param_header_root(refusal)
            or _REFUSAL_ROOTS.get((rule, method))
            or _REFUSAL_ROOTS.get((rule, run.transport))
            or _REFUSAL_ROOTS.get((rule, None))
        )
        if root is not None:
            found.setdefault(root, []).append(refusal)
    return [
        RootCause(
            root,
            f"the mock refused {len(refusals)} request(s) of the client: "
            f"{refusals[0].get('status')} {refusals[0].get('reason')}",
            tuple(refusals[:3]),
        )
        for root, refusals in found.items()
    ]


def _param_header_root(refusal: Mapping[str, Any]) -> str | None:
    """An Mcp-Param-* header mismatch (the refusal's `header`) is HM-4's rule, not the
    standard headers'."""
    param = str(refusal.get("header", "")).lower().startswith("mcp-param-")
    return "stateless.x-mcp-header" if refusal.get("rule") == "header-mismatch" and param else None


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
            )
        ]
    answered = any(
        e["kind"] == "message"
        and e["direction"] == "server"
        and "result" in e["message"]
        and same_json(e["message"].get("id"), init["message"].get("id"))
        for e in run.entries
    )
    initialized = any(m["message"].get("method") == "notifications/initialized" for m in messages)
    if answered and not initialized:
        return [
            RootCause(
                "lifecycle.initialized-notification",
                "the initialize response was never followed by notifications/initialized",
                (init,),
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
            causes.append(
                RootCause(
                    f"client.{operation.op}",
                    f"{operation.op} reported success, but the client never sent {method}",
                    (operation.to_json(),),
                )
            )
    return causes


def failed_operation(run: ScenarioRun) -> RootCause | None:
    """The first operation that raised or hung, or the run's own failure (a scenario that
    did not finish in time): why a trigger might never have arisen."""
    for operation in run.operations:
        # An error the server answered (and the client surfaced) is an exchange that
        # completed, like the calls a scenario makes to see errors surfaced.
        answered = operation.op != "connect" and (operation.error or {}).get("kind") in (
            "protocol",
            "tool",
        )
        expected = (
            answered
            or operation.deliberate
            or (operation.op == "connect" and run.scenario.connect_may_fail)
        )
        if not operation.ok and not expected:
            return RootCause(
                f"client.{operation.op}",
                f"{operation.op} {_failure(operation)}",
                (operation.to_json(),),
            )
    if run.harness_error:
        return RootCause("client.run", run.harness_error)
    return None
