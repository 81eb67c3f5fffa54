"""Transports: stdio framing and shutdown, Streamable HTTP headers, sessions, answers.

Most of these checks judge the tools scenario (every client runs it, over every transport
it supports); the session-expiry and JSON-or-SSE scenarios provoke what the tools
scenario cannot.
"""

from __future__ import annotations

from typing import Any

from harness._catalogue import check
from harness._run import Scenario, ScenarioRun, Session
from harness._verdicts import Verdict, fail, passed, warn
from harness.suite._evidence import (
    body_messages,
    header,
    http_requests,
    missing,
    op_evidence,
)

__all__ = ["SCENARIOS"]

TRANSPORTS = "basic/transports"
STREAMABLE = ("2025-03-26", "2025-06-18", "2025-11-25")


# -- stdio ---------------------------------------------------------------------------------


@check(
    "stdio.framing",
    requirements=["ST-1"],
    level="MUST",
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="Each line on the server's stdin is exactly one JSON-RPC message (no embedded newlines)",
)
def stdio_framing(run: ScenarioRun) -> Verdict:
    broken = [e for e in run.of_kind("invalid") if e.get("code") == -32700]
    if broken:
        return fail(
            f"a line on stdin is not one JSON message: {broken[0].get('reason')}", broken[:3]
        )
    messages = run.client_messages()
    if not messages:
        return missing(run, "any message on stdin")
    return passed(f"{len(messages)} lines, each one JSON message", messages[:2])


@check(
    "stdio.only-mcp-messages",
    requirements=["ST-2"],
    level="MUST",
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="The client writes nothing to the server's stdin that is not a valid MCP message",
)
def stdio_only_mcp(run: ScenarioRun) -> Verdict:
    invalid = run.of_kind("invalid")
    if invalid:
        return fail(
            f"the client wrote something that is not an MCP message: {invalid[0].get('reason')}",
            invalid[:3],
        )
    messages = run.client_messages()
    if not messages:
        return missing(run, "any message on stdin")
    return passed("everything written to stdin was an MCP message", messages[:2])


@check(
    "stdio.shutdown-closes-stdin",
    requirements=["ST-4"],
    level="SHOULD",
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="To shut down, the client first closes the server's stdin before any signal",
)
def stdio_shutdown(run: ScenarioRun) -> Verdict:
    if not run.client_messages():
        return missing(run, "a stdio session")
    ends = run.of_kind("stdin_eof", "signal")
    if not ends:
        return warn(
            "the server saw neither stdin closing nor a signal: it was killed outright (SIGKILL)"
        )
    if ends[0]["kind"] == "signal":
        return warn(f"the client sent {ends[0].get('signal')} without closing stdin first", ends)
    return passed("the client closed stdin first", ends[:1])


# -- Streamable HTTP ----------------------------------------------------------------------------


def _posts(run: ScenarioRun) -> list[dict[str, Any]]:
    return http_requests(run, "POST")


@check(
    "http.accept-header",
    requirements=["HT-2", "HM-1"],
    level="MUST",
    transports=["http"],
    revisions=(*STREAMABLE, "2026-07-28"),
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="Every POST lists both application/json and text/event-stream in Accept",
)
def accept_header(run: ScenarioRun) -> Verdict:
    posts = _posts(run)
    if not posts:
        return missing(run, "an HTTP POST")
    for post in posts:
        accept = (header(post, "accept") or "").lower()
        if "application/json" not in accept or "text/event-stream" not in accept:
            return fail(f"a POST has Accept {header(post, 'accept')!r}", [post])
    return passed(f"all {len(posts)} POSTs accept both JSON and SSE", posts[:2])


@check(
    "http.one-message-per-post",
    requirements=["HT-1", "RPC-6"],
    level="MUST",
    transports=["http"],
    revisions=(*STREAMABLE, "2026-07-28"),
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="Every client message is its own POST to the MCP endpoint (no batches from 2025-06-18)",
)
def one_message_per_post(run: ScenarioRun) -> Verdict:
    posts = _posts(run)
    if not posts:
        return missing(run, "an HTTP POST")
    endpoint = run.scenario.load().http.path
    for post in posts:
        if post.get("path") != endpoint:
            return fail(
                f"a POST went to {post.get('path')!r}, not the MCP endpoint {endpoint!r}", [post]
            )
        body = (post.get("body") or "").lstrip()
        if body.startswith("[") and run.revision != "2025-03-26":
            return fail("a POST body is a JSON array (a batch)", [post])
    return passed(f"{len(posts)} POSTs to {endpoint}, one message each", posts[:2])


@check(
    "http.session-id-echoed",
    requirements=["HT-8"],
    level="MUST",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="The Mcp-Session-Id issued at initialize is sent on every later request",
)
def session_echoed(run: ScenarioRun) -> Verdict:
    responses = run.of_kind("http_response")
    issued = next((r for r in responses if header(r, "mcp-session-id")), None)
    if issued is None:
        return missing(run, "an initialize response with a session id")
    session = header(issued, "mcp-session-id")
    later = [r for r in http_requests(run) if r["seq"] > issued["seq"]]
    if not later:
        return missing(run, "a request after initialize")
    for request in later:
        if header(request, "mcp-session-id") != session and not _is_new_initialize(request):
            return fail(
                f"a {request.get('method')} carries session id {header(request, 'mcp-session-id')!r}, not {session!r}",
                [issued, request],
            )
    return passed(f"all {len(later)} later requests carry the session id", [issued, *later[:2]])


def _is_new_initialize(request: dict[str, Any]) -> bool:
    return any(m.get("method") == "initialize" for m in body_messages(request))


@check(
    "http.protocol-version-header",
    requirements=["HT-11"],
    level="MUST",
    transports=["http"],
    revisions=("2025-06-18", "2025-11-25"),
    spec=TRANSPORTS + "#protocol-version-header",
    description="Every request after initialize carries MCP-Protocol-Version with the negotiated version",
)
def protocol_version_header(run: ScenarioRun) -> Verdict:
    requests = http_requests(run)
    init = next((r for r in requests if _is_new_initialize(r)), None)
    if init is None:
        return missing(run, "an initialize POST")
    later = [r for r in requests if r["seq"] > init["seq"] and not _is_new_initialize(r)]
    if not later:
        return missing(run, "a request after initialize")
    for request in later:
        value = header(request, "mcp-protocol-version")
        if value != run.revision:
            return fail(
                f"a {request.get('method')} carries MCP-Protocol-Version {value!r}, not {run.revision}",
                [init, request],
            )
    return passed(
        f"all {len(later)} later requests carry MCP-Protocol-Version {run.revision}", later[:2]
    )


@check(
    "http.delete-session",
    requirements=["HT-10"],
    level="SHOULD",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="A client that is done with a session ends it with DELETE and the session id",
)
def delete_session(run: ScenarioRun) -> Verdict:
    issued = next((r for r in run.of_kind("http_response") if header(r, "mcp-session-id")), None)
    if issued is None:
        return missing(run, "a session")
    deletes = http_requests(run, "DELETE")
    if not deletes:
        return warn("the client closed without a DELETE of its session")
    if header(deletes[-1], "mcp-session-id") != header(issued, "mcp-session-id"):
        return warn("the DELETE does not name the session", deletes)
    return passed("the session was ended with DELETE", deletes)


async def call_twice(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "http.new-session-after-404",
    requirements=["HT-9"],
    level="MUST",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="After a 404 on a request with a session id, the client starts a new session without that id",
)
def new_session_after_404(run: ScenarioRun) -> Verdict:
    gone = next((r for r in run.of_kind("http_response") if r.get("status") == 404), None)
    if gone is None:
        return missing(run, "a 404 for an expired session")
    after = [r for r in http_requests(run, "POST") if r["seq"] > gone["seq"]]
    if not after:
        return fail(
            "the client sent nothing after the 404", [gone, *op_evidence(*run.operations[-1:])]
        )
    first = after[0]
    if not _is_new_initialize(first):
        kind = [m.get("method") for m in body_messages(first)]
        return fail(f"after the 404 the client sent {kind}, not a new initialize", [gone, first])
    if header(first, "mcp-session-id") is not None:
        return fail("the new initialize still carries the expired session id", [gone, first])
    return passed("the client re-initialized without the expired session id", [gone, first])


async def list_then_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "http.json-and-sse-answers",
    requirements=["HT-3"],
    level="MUST",
    transports=["http"],
    revisions=(*STREAMABLE, "2026-07-28"),
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="Answers as application/json and as text/event-stream (with a notification first) both work",
)
def json_and_sse(run: ScenarioRun) -> Verdict:
    listing, call = run.operation("list_tools"), run.operation("call_tool")
    if listing is None or call is None or not _posts(run):
        return missing(run, "a tools/list and a tools/call over HTTP")
    evidence = op_evidence(listing, call)
    if not listing.ok or [t.get("name") for t in (listing.value or {}).get("tools", [])] != ["add"]:
        return fail(
            f"the JSON answer to tools/list was not surfaced: {listing.error or listing.value}",
            evidence,
        )
    if not call.ok or (call.value or {}).get("content") != [{"type": "text", "text": "3"}]:
        return fail(
            f"the SSE answer to tools/call was not surfaced: {call.error or call.value}", evidence
        )
    return passed("both the JSON and the SSE answer were surfaced", evidence)


SCENARIOS = [
    Scenario(
        "http-session-expiry",
        "http/session-expiry.json",
        checks=("http.new-session-after-404",),
        drive=call_twice,
        description="the session expires between two calls",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "http-json-and-sse",
        "http/json-and-sse.json",
        checks=("http.json-and-sse-answers",),
        drive=list_then_call,
        description="tools/list answered as JSON, tools/call as SSE with a notification first",
        requires=frozenset({"tools"}),
    ),
]

#: Judged on every run of the tools scenario (see harness/suite/__init__.py).
ON_EVERY_TRANSPORT = (
    "stdio.framing",
    "stdio.only-mcp-messages",
    "stdio.shutdown-closes-stdin",
    "http.accept-header",
    "http.one-message-per-post",
    "http.session-id-echoed",
    "http.protocol-version-header",
    "http.delete-session",
)
