"""Robustness: valid but unexpected server messages a client must take in its stride.

The other areas script the usual shapes; here the mock sends what the schemas allow but
few servers send (members and `_meta` keys no revision defines), and what only a careless
server sends (a response whose id differs from a pending request's only in JSON type: the
spec binds the server, so a client may ignore it or match it loosely, but must survive it). A notification before the initialize response, a server request while a call is
in flight and a slow initialize are exercised by the features and lifecycle scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.judging import Verdict, check, client_sent, passed, silent, trigger, violated
from harness.protocol import same_json
from harness.running import Operation, Scenario, ScenarioRun, Session
from harness.suite._evidence import hung_or_crashed, missing, op_evidence, response_to, same_id

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


def _decoys(run: ScenarioRun) -> list[Mapping[str, Any]]:
    """The server's responses whose id equals that of the client's second tools/call in
    value but not in JSON type (the script sends the decoy ahead of that call's answer)."""
    requests = run.requests("tools/call")[1:2]
    if not requests:
        return []
    wanted = requests[0]["message"].get("id")
    return [
        entry
        for entry in run.entries
        if entry["kind"] == "message"
        and entry.get("direction") == "server"
        and "method" not in entry["message"]
        and "id" in entry["message"]
        and not same_id(entry["message"]["id"], wanted)
        and str(entry["message"]["id"]) in (str(wanted), "-1")  # -1: a non-numeric string id
    ]


@check(
    "jsonrpc.other-type-response-survived",
    requirements=["RPC-1"],
    clauses=[
        silent(
            "the ids' sentence binds the responder (the server); none tells the client what "
            "to do with a response whose id matches no request of its own"
        )
    ],
    spec="basic#responses",
    description='A response whose id has the other JSON type ("1" for 1) does not break '
    "the client: the call completes (with the real answer, or with that one if the client "
    "matches ids loosely) and the next call works",
    trigger=trigger("the server sent a response whose id has the other JSON type", _decoys),
)
def other_type_response_survived(run: ScenarioRun) -> Verdict:
    request, decoy = run.requests("tools/call")[1], _decoys(run)[0]
    calls = _calls(run)
    if len(calls) < 3:
        return missing(run, "a third tools/call after the decoy")
    call, after = calls[1], calls[2]
    evidence = [request, decoy, *op_evidence(call, after)]
    # Hanging or failing on the decoy is the breakage this check is about: judged, not
    # blocked (the harness's bound is what shows it).
    content = _surfaced_text(call)
    if not (same_json(content, _RIGHT) or same_json(content, _DECOY)):
        return violated(f"after the decoy the call failed: {call.error or call.value}", evidence)
    if not same_json(_surfaced_text(after), _RIGHT):
        return violated(
            f"after the decoy the next call failed: {after.error or after.value}", evidence
        )
    how = (
        "ignored the decoy and surfaced the real answer"
        if same_json(content, _RIGHT)
        else f"took the response with id {decoy['message']['id']!r} for its request (loose ids)"
    )
    return passed(f"the client {how}; the next call worked", evidence)


@check(
    "jsonrpc.unknown-members-tolerated",
    requirements=["RPC-8"],
    clauses=[
        silent(
            "no sentence binds the client to accept members or _meta keys that no revision "
            "defines (the sender MAY shape a result freely; the _meta MUST NOT covers "
            "reserved keys only)"
        )
    ],
    spec="basic#_meta",
    description="Results, tools and content with members and _meta keys that no revision "
    "defines are accepted, and what the client knows is surfaced intact",
    trigger=client_sent("tools/list"),
)
def unknown_members_tolerated(run: ScenarioRun) -> Verdict:
    listed = run.requests("tools/list")[0]
    listing, call = run.operation("list_tools"), next(iter(_calls(run)), None)
    if listing is None or call is None or response_to(run, listed) is None:
        return missing(run, "a tools/list and tools/call answered with unknown members")
    evidence = [listed, *op_evidence(listing, call)]
    unreported = hung_or_crashed(listing) or hung_or_crashed(call)
    if unreported is not None:
        return unreported
    tools = (listing.value or {}).get("tools") if listing.ok else None
    if not isinstance(tools, list) or not same_json([t.get("name") for t in tools], ["add"]):
        return violated(
            f"the tool list was not surfaced: {listing.error or listing.value}", evidence
        )
    schema = tools[0].get("inputSchema") or {}
    if not same_json(schema.get("required"), ["a", "b"]):
        return violated(f"the tool's inputSchema was not surfaced intact: {schema}", evidence)
    content = _surfaced_text(call)
    if content is None:
        return violated(f"the tool result was not surfaced: {call.error or call.value}", evidence)
    if not same_json(content, _RIGHT):
        return violated(f"the tool result's content was surfaced as {content}", evidence)
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
