"""Robustness: valid but unexpected server messages a client must take in its stride.

The other areas script the usual shapes; here the mock sends what the schemas allow but
few servers send (members and `_meta` keys no revision defines), and what only a careless
server sends (a response whose id differs from a pending request's only in JSON type: the
spec binds the server, so a client may ignore it or match it loosely, but must survive it). A notification before the initialize response, a server request while a call is
in flight and a slow initialize are exercised by the features and lifecycle scenarios.
"""

from __future__ import annotations

from typing import Any

from harness._catalogue import check
from harness._run import Operation, Scenario, ScenarioRun, Session
from harness._verdicts import Verdict, fail, passed, warn
from harness.suite._evidence import missing, op_evidence, response_to

__all__ = ["SCENARIOS"]

_RIGHT = [{"type": "text", "text": "3"}]
_DECOY = [{"type": "text", "text": "decoy"}]


def _surfaced_text(call: Operation) -> list[dict[str, Any]] | None:
    """The type and text of each content item the call surfaced (None: no result)."""
    content = (call.value or {}).get("content") if call.ok else None
    if not isinstance(content, list):
        return None
    return [
        {k: v for k, v in item.items() if k in ("type", "text")}
        for item in content
        if isinstance(item, dict)
    ]


def _calls(run: ScenarioRun) -> list[Operation]:
    return [o for o in run.operations if o.op == "call_tool"]


def _decoy_for(run: ScenarioRun, request: dict[str, Any]) -> dict[str, Any] | None:
    """The server's response whose id equals the request's id in value but not in type."""
    wanted = request["message"].get("id")
    for entry in run.entries:
        message = entry.get("message") if entry["kind"] == "message" else None
        if (
            entry.get("direction") == "server"
            and isinstance(message, dict)
            and "method" not in message
            and "id" in message
            and type(message["id"]) is not type(wanted)
            and str(message["id"]) in (str(wanted), "-1")
        ):
            return entry
    return None


@check(
    "jsonrpc.other-type-response-survived",
    requirements=["RPC-1"],
    level="SHOULD",
    spec="basic#responses",
    description='A response whose id has the other JSON type ("1" for 1) does not break '
    "the client: the call completes (with the real answer, or with that one if the client "
    "matches ids loosely) and the next call works",
)
def other_type_response_survived(run: ScenarioRun) -> Verdict:
    requests = run.requests("tools/call")[1:2]  # the second call gets the decoy
    calls = _calls(run)
    decoy = _decoy_for(run, requests[0]) if requests else None
    if len(calls) < 3 or decoy is None:
        return missing(run, "a decoy response of the other id type, then another call")
    call, after = calls[1], calls[2]
    evidence = [requests[0], decoy, *op_evidence(call, after)]
    content = _surfaced_text(call)
    if content not in (_RIGHT, _DECOY):
        return warn(f"after the decoy the call failed: {call.error or call.value}", evidence)
    if _surfaced_text(after) != _RIGHT:
        return warn(f"after the decoy the next call failed: {after.error or after.value}", evidence)
    how = (
        "ignored the decoy and surfaced the real answer"
        if content == _RIGHT
        else f"took the response with id {decoy['message']['id']!r} for its request (loose ids)"
    )
    return passed(f"the client {how}; the next call worked", evidence)


@check(
    "jsonrpc.unknown-members-tolerated",
    requirements=["RPC-8"],
    level="MUST",
    spec="basic#_meta",
    description="Results, tools and content with members and _meta keys that no revision "
    "defines are accepted, and what the client knows is surfaced intact",
)
def unknown_members_tolerated(run: ScenarioRun) -> Verdict:
    listing, call = run.operation("list_tools"), next(iter(_calls(run)), None)
    lists = run.requests("tools/list")
    if listing is None or call is None or not lists or response_to(run, lists[0]) is None:
        return missing(run, "a tools/list and tools/call answered with unknown members")
    evidence = [lists[0], *op_evidence(listing, call)]
    tools = (listing.value or {}).get("tools") if listing.ok else None
    if not isinstance(tools, list) or [t.get("name") for t in tools] != ["add"]:
        return fail(f"the tool list was not surfaced: {listing.error or listing.value}", evidence)
    schema = tools[0].get("inputSchema") or {}
    if schema.get("required") != ["a", "b"]:
        return fail(f"the tool's inputSchema was not surfaced intact: {schema}", evidence)
    content = _surfaced_text(call)
    if content is None:
        return fail(f"the tool result was not surfaced: {call.error or call.value}", evidence)
    if content != _RIGHT:
        return fail(f"the tool result's content was surfaced as {content}", evidence)
    return passed("the unknown members were tolerated; list and result surfaced", evidence)


async def list_and_add(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")
        for _ in range(3):  # the second response comes after a decoy
            await session.call("call_tool", "add", {"a": 1, "b": 2})


SCENARIOS = [
    Scenario(
        "robustness",
        "tools/robustness.json",
        checks=("jsonrpc.other-type-response-survived", "jsonrpc.unknown-members-tolerated"),
        drive=list_and_add,
        description="unknown members and _meta keys everywhere; a decoy response whose id "
        "has the other JSON type ahead of a second tools/call response; a third call",
        requires=frozenset({"tools"}),
    ),
]
