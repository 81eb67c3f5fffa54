"""Transports: stdio framing and shutdown, Streamable HTTP headers, sessions, answers.

Most of these checks judge the tools scenario (every client runs it, over every transport
it supports); the session-expiry and JSON-or-SSE scenarios provoke what the tools
scenario cannot.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import anyio

from harness._catalogue import check
from harness._run import Scenario, ScenarioRun, Session
from harness._verdicts import Verdict, fail, passed, warn
from harness.clients._contract import HttpTarget, StdioTarget
from harness.suite._evidence import (
    body_messages,
    cancelled_by_notification,
    first_operation,
    header,
    http_requests,
    missing,
    op_evidence,
    requests_with,
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
    "stdio.no-batches",
    requirements=["RPC-6"],
    level="MUST",
    revisions=("2025-06-18", "2025-11-25", "2026-07-28"),
    transports=["stdio"],
    spec="changelog",
    description="From 2025-06-18 on, no line the client writes is a JSON-RPC batch (an array)",
)
def stdio_no_batches(run: ScenarioRun) -> Verdict:
    batches = [e for e in run.of_kind("invalid") if str(e.get("raw", "")).lstrip().startswith("[")]
    batches += [e for e in run.of_kind("note") if " is a batch of " in str(e.get("text", ""))]
    if batches:
        return fail(f"the client wrote a batch, which {run.revision} does not have", batches[:3])
    messages = run.client_messages()
    if not messages:
        return missing(run, "any message on stdin")
    return passed(f"{len(messages)} lines, each a single message", messages[:2])


@check(
    "stdio.shutdown-closes-stdin",
    requirements=["ST-4", "LC-10"],
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


def _echo(run: ScenarioRun, word: str) -> tuple[Any, list[dict[str, Any]]]:
    """The call_tool operation that echoes `word`, and the tools/call it sent (if any)."""
    call = next(
        (
            o
            for o in run.operations
            if o.op == "call_tool" and (o.args.get("args") or [None, {}])[1] == {"word": word}
        ),
        None,
    )
    sent = requests_with(run, "tools/call", "arguments", {"word": word})
    return call, sent


def _faults(run: ScenarioRun, *kinds: str) -> list[dict[str, Any]] | None:
    """The fault entries of these kinds, one each; None if one never happened."""
    found = []
    for kind in kinds:
        entry = next(iter(_faults_of(run, kind)), None)
        if entry is None:
            return None
        found.append(entry)
    return found


def _echo_ok(call: Any, word: str) -> bool:
    value = call.value if call is not None and call.ok else None
    return isinstance(value, dict) and value.get("content") == [{"type": "text", "text": word}]


@check(
    "stdio.stderr-not-an-error",
    requirements=["ST-3"],
    level="SHOULD",
    revisions=("2025-11-25", "2026-07-28"),
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="A flood of stderr output from the server is not taken for an error: the next call works",
)
def stdio_stderr_not_an_error(run: ScenarioRun) -> Verdict:
    call, sent = _echo(run, "first")
    flood = _faults(run, "stderr")
    if call is None or flood is None:
        return missing(run, "a tools/call after a stderr flood")
    evidence = [*flood, *sent, *op_evidence(call)]
    if not _echo_ok(call, "first"):
        return warn(
            f"after the server wrote to stderr the call surfaced {call.error or call.value}",
            evidence,
        )
    return passed("the call after 2000 stderr lines succeeded", evidence)


@check(
    "stdio.bad-lines-skipped",
    requirements=["ST-1"],
    level="SHOULD",
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="A line from the server that is not JSON, and a 200 kB line, cost only themselves: the next call works",
)
def stdio_bad_lines_skipped(run: ScenarioRun) -> Verdict:
    call, sent = _echo(run, "second")
    bad = _faults(run, "garbage", "oversized_line")
    if call is None or bad is None:
        return missing(run, "a tools/call after a garbage line and a long line")
    evidence = [*bad, *sent, *op_evidence(call)]
    if not _echo_ok(call, "second"):
        return warn(
            f"after a garbage line and a long line the call surfaced {call.error or call.value}",
            evidence,
        )
    return passed("the call after the garbage and the long line succeeded", evidence)


@check(
    "stdio.crash-surfaced",
    requirements=["LC-9"],
    level="SHOULD",
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="A call whose server process exits mid-call fails promptly with an error, not a hang or a time-out",
)
def stdio_crash_surfaced(run: ScenarioRun) -> Verdict:
    call, crash = first_operation(run, "call_tool", "crash"), _crash_fault(run)
    if call is None or crash is None:
        return missing(run, "a tools/call on which the server crashed")
    evidence = [crash, *op_evidence(call)]
    if call.ok:
        return fail(f"the client surfaced a result from a crashed server: {call.value}", evidence)
    if (call.error or {}).get("kind") == "timeout":
        return warn(
            f"the client only noticed the crash when a time-out expired ({call.seconds:.1f} s)",
            evidence,
        )
    return passed(f"the crash was surfaced as an error after {call.seconds:.2f} s", evidence)


def _crash_fault(run: ScenarioRun) -> dict[str, Any] | None:
    return next(iter(_faults_of(run, "crash")), None)


@check(
    "http.dropped-connection-surfaced",
    requirements=["HT-3", "LC-9"],
    level="MUST",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#streamable-http",
    description="A response whose connection breaks mid-body (a JSON body cut in half, an SSE "
    "stream without event ids cut inside the response event) fails with an error (MUST: never "
    "a result), promptly (SHOULD: not only when a time-out expires)",
)
def dropped_connection_surfaced(run: ScenarioRun) -> Verdict:
    calls = [o for o in run.operations if o.op == "call_tool"][:2]  # the drive's order
    drops = _faults_of(run, "drop_connection")
    if len(calls) < 2 or not drops:
        return missing(run, "tools/call whose connections broke mid-response")
    evidence = [*drops[:2], *op_evidence(*calls)]
    for operation in calls:
        if operation.ok:
            return fail(
                f"a result was surfaced from a response cut short: {operation.value}", evidence
            )
    slow = [o for o in calls if (o.error or {}).get("kind") == "timeout"]
    if slow:
        return warn(
            f"a broken connection was only noticed when a time-out expired ({slow[0].seconds:.1f} s)",
            evidence,
        )
    return passed("the broken responses failed with errors, at once", evidence)


@check(
    "http.session-survives-dropped-connection",
    requirements=["HT-3", "HT-9"],
    level="SHOULD",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="A broken connection ends one request, not the session (which ends by the "
    "server's 404 or the client's DELETE): the next call works",
)
def session_survives_dropped_connection(run: ScenarioRun) -> Verdict:
    calls = [o for o in run.operations if o.op == "call_tool"]
    drops = _faults_of(run, "drop_connection")
    if len(calls) < 3 or not drops:
        return missing(run, "a tools/call whose connection broke, then more calls")
    after = calls[2]
    evidence = [drops[0], *op_evidence(after)]
    if not after.ok or (after.value or {}).get("content") != [{"type": "text", "text": "4"}]:
        return warn(
            f"after a broken connection the next call failed: {after.error or after.value}",
            evidence,
        )
    return passed("after the broken connections the next call worked", evidence)


def _faults_of(run: ScenarioRun, kind: str) -> list[dict[str, Any]]:
    return [e for e in run.of_kind("fault") if e.get("fault", {}).get("kind") == kind]


async def calls_with_drops(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    for a in (1, 2, 3):  # the first two connections break mid-response
        await session.call("call_tool", "add", {"a": a, "b": 1})


_RESTART_TOOLS = ["add", "crash"]  # what fixtures/stdio/restart.json lists


@check(
    "stdio.restart-after-exit",
    requirements=["ST-5"],
    level="SHOULD",
    revisions=("2026-07-28",),
    transports=["stdio"],
    spec="basic/transports/stdio",
    description="2026 stdio: after the server process exits unexpectedly, the client starts it "
    "again and serves the next request (tools/list) from the new process",
)
def stdio_restart_after_exit(run: ScenarioRun) -> Verdict:
    crash = _crash_fault(run)
    crashed_call = first_operation(run, "call_tool", "crash")
    # The list_tools asked after the crash (the first one came before it).
    listing = run.operation("list_tools", 1)
    if crash is None or crashed_call is None or listing is None:
        return missing(run, "a crash of the server on a tools/call, then a list_tools")
    # Each server process records a start entry; one after the crash is a new process.
    restarts = [e for e in run.of_kind("start") if e["seq"] > crash["seq"]]
    relisted = [e for e in run.requests("tools/list") if restarts and e["seq"] > restarts[0]["seq"]]
    surfaced = listing.value if listing.ok else listing.error
    if not restarts:
        return warn(
            f"the server was not started again after it exited; list_tools surfaced {surfaced}",
            [crash, *op_evidence(crashed_call, listing)],
        )
    evidence = [crash, restarts[0], *relisted[:1], *op_evidence(listing)]
    value = listing.value if listing.ok and isinstance(listing.value, dict) else {}
    names = [t.get("name") for t in value.get("tools") or [] if isinstance(t, dict)]
    if not relisted or names != _RESTART_TOOLS:
        return warn(
            "a new server process started, but the list_tools after the crash was not "
            f"served by it: {surfaced}",
            evidence,
        )
    return passed(
        f"a new server process (pid {restarts[0].get('pid')}) started after the exit "
        "and answered tools/list",
        evidence,
    )


async def crash_then_list(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "crash", {})  # an error: the server exits mid-call
    await session.call("list_tools")  # the client restarts the server to serve this


async def noise_then_crash(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await anyio.sleep(0.3)  # the stderr flood comes right after tools/list
    await session.call("call_tool", "echo", {"word": "first"})
    await anyio.sleep(1.0)  # the bad lines come 200 ms after the first call
    await session.call("call_tool", "echo", {"word": "second"})
    await session.call("call_tool", "crash", {})


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
    requirements=["HT-10", "LC-10"],
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
    requirements=["HT-3", "HM-6"],
    level="MUST",
    transports=["http"],
    revisions=(*STREAMABLE, "2026-07-28"),
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="Answers as application/json and as text/event-stream (comments and a "
    "notification first, the response over several data: lines, in small chunks) both work",
)
def json_and_sse(run: ScenarioRun) -> Verdict:
    listing, call = run.operation("list_tools"), run.operation("call_tool")
    comments = [e for e in run.of_kind("sse_event") if e.get("event", {}).get("comments")]
    if listing is None or call is None or not _posts(run) or not comments:
        return missing(run, "a tools/list and a tools/call over HTTP, with SSE comments")
    evidence = [*op_evidence(listing, call), comments[0]]
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


@check(
    "http.get-stream-accept",
    requirements=["HT-6"],
    level="MUST",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#listening-for-messages-from-the-server",
    description="A GET for the server's event stream lists text/event-stream in Accept",
)
def get_stream_accept(run: ScenarioRun) -> Verdict:
    gets = http_requests(run, "GET")
    posts = _posts(run)
    if not gets and not posts:
        return missing(run, "an HTTP request")
    for get in gets:
        if "text/event-stream" not in (header(get, "accept") or "").lower():
            return fail(f"a GET has Accept {header(get, 'accept')!r}", [get])
    if not gets:
        return passed("the client opened no GET stream (it MAY not)", posts[:1])
    return passed(f"all {len(gets)} GETs accept text/event-stream", gets[:2])


def _status_to(run: ScenarioRun, request: dict[str, Any]) -> dict[str, Any] | None:
    return next(
        (
            r
            for r in run.of_kind("http_response")
            if r.get("request") == request.get("request") and r["seq"] > request["seq"]
        ),
        None,
    )


@check(
    "http.get-405-tolerated",
    requirements=["HT-6"],
    level="MUST",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#listening-for-messages-from-the-server",
    description="A server may answer the GET stream with 405: the session goes on (tools/list works)",
)
def get_405_tolerated(run: ScenarioRun) -> Verdict:
    listing = run.operation("list_tools")
    if listing is None:
        return missing(run, "a tools/list after connecting")
    refused = [
        (get, answer)
        for get in http_requests(run, "GET")
        if (answer := _status_to(run, get)) is not None and answer.get("status") == 405
    ]
    evidence = [*(e for pair in refused[:1] for e in pair), *op_evidence(listing)]
    tools = (listing.value or {}).get("tools") if listing.ok else None
    if not isinstance(tools, list) or [t.get("name") for t in tools] != ["add"]:
        return fail(
            f"after the GET stream was refused, tools/list surfaced {listing.error or listing.value}",
            evidence,
        )
    if not refused:
        return passed("the client opened no GET stream; the session works", evidence)
    return passed("the GET got 405 and the session went on", evidence)


@check(
    "http.accepts-202",
    requirements=["HT-4"],
    level="MUST",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="202 Accepted with an empty body, the answer to a notification, is taken as success",
)
def accepts_202(run: ScenarioRun) -> Verdict:
    connect = run.operation("connect")
    accepted = [r for r in run.of_kind("http_response") if r.get("status") == 202]
    if connect is None or not accepted:
        return missing(run, "a notification answered with 202")
    evidence = [accepted[0], *op_evidence(connect)]
    if not connect.ok:
        return fail(f"connecting failed after the 202: {connect.error}", evidence)
    return passed("the notifications/initialized POST got 202 and connecting succeeded", evidence)


async def connect_wait_list(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await anyio.sleep(0.3)  # time for a GET stream to be tried
    await session.call("list_tools")


def _broken_stream(run: ScenarioRun) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The first response stream the server closed early, and its events before the close."""
    end = next((e for e in run.of_kind("http_end") if e.get("how") == "closed"), None)
    if end is None:
        return None
    events = [
        e
        for e in run.of_kind("sse_event")
        if e.get("stream") == end.get("stream") and e["seq"] < end["seq"]
    ]
    return end, events


def _resumption(run: ScenarioRun, end: dict[str, Any]) -> dict[str, Any] | None:
    return next((g for g in http_requests(run, "GET") if g["seq"] > end["seq"]), None)


@check(
    "http.resume-with-last-event-id",
    requirements=["HT-7"],
    level="SHOULD",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#resumability-and-redelivery",
    description="A response stream closed before the response is resumed with GET and Last-Event-ID",
)
def resume_with_last_event_id(run: ScenarioRun) -> Verdict:
    call = run.operation("call_tool")
    broken = _broken_stream(run)
    if call is None or broken is None:
        return missing(run, "a tools/call whose event stream the server closed early")
    end, events = broken
    ids = [e["event"]["id"] for e in events if e.get("event", {}).get("id")]
    get = _resumption(run, end)
    evidence = [*events[-1:], end, *([get] if get else []), *op_evidence(call)]
    if get is None:
        return warn("the client did not reconnect after the stream closed", evidence)
    if not ids or header(get, "last-event-id") != ids[-1]:
        return warn(
            f"the GET carries Last-Event-ID {header(get, 'last-event-id')!r}, "
            f"not the last event id {ids[-1] if ids else None!r}",
            evidence,
        )
    if not call.ok or (call.value or {}).get("content") != [{"type": "text", "text": "3"}]:
        return warn(f"the resumed call surfaced {call.error or call.value}", evidence)
    return passed("the stream was resumed with Last-Event-ID and the answer surfaced", evidence)


@check(
    "http.retry-honoured",
    requirements=["HT-7"],
    level="MUST",
    transports=["http"],
    revisions=("2025-11-25",),
    spec=TRANSPORTS + "#resumability-and-redelivery",
    description="Before reconnecting, the client waits the milliseconds of the stream's retry field",
)
def retry_honoured(run: ScenarioRun) -> Verdict:
    broken = _broken_stream(run)
    if broken is None:
        return missing(run, "an event stream the server closed early")
    end, events = broken
    retries = [
        e["event"]["retry"] for e in events if isinstance(e.get("event", {}).get("retry"), int)
    ]
    get = _resumption(run, end)
    if not retries or get is None:
        return missing(run, "a reconnection after a stream that set retry")
    waited = float(get["t"]) - float(end["t"])
    evidence = [*events[:1], end, get]
    if waited + 0.005 < retries[-1] / 1000:
        return fail(
            f"the client reconnected after {waited * 1000:.0f} ms; retry asked for {retries[-1]} ms",
            evidence,
        )
    return passed(
        f"the client reconnected after {waited * 1000:.0f} ms (retry {retries[-1]} ms)", evidence
    )


def _endpoint_event(run: ScenarioRun) -> dict[str, Any] | None:
    return next(
        (e for e in run.of_kind("sse_event") if e.get("event", {}).get("event") == "endpoint"),
        None,
    )


@check(
    "sse-legacy.posts-to-endpoint",
    requirements=["HT-13"],
    level="MUST",
    revisions=("2024-11-05",),
    transports=["sse-legacy"],
    spec=TRANSPORTS + "#http-with-sse",
    description="HTTP+SSE: every message after the endpoint event is POSTed to the URI it names",
)
def posts_to_endpoint(run: ScenarioRun) -> Verdict:
    endpoint = _endpoint_event(run)
    if endpoint is None:
        return missing(run, "an endpoint event")
    path = urlsplit(str(endpoint["event"].get("data", "")).strip()).path
    posts = [p for p in _posts(run) if p["seq"] > endpoint["seq"]]
    if not posts:
        return missing(run, "a POST after the endpoint event")
    for post in posts:
        if post.get("path") != path:
            return fail(
                f"a POST went to {post.get('path')!r}, not the endpoint {path!r}", [endpoint, post]
            )
    return passed(f"all {len(posts)} POSTs went to the endpoint {path}", [endpoint, *posts[:2]])


@check(
    "http.legacy-fallback",
    requirements=["HT-12"],
    level="SHOULD",
    revisions=("2024-11-05",),
    transports=["sse-legacy"],
    spec=TRANSPORTS + "#backwards-compatibility",
    description="Given the URL of an HTTP+SSE server, a POST refused with 400/404/405 leads to a GET and the old transport",
)
def legacy_fallback(run: ScenarioRun) -> Verdict:
    connect, listing = run.operation("connect"), run.operation("list_tools")
    if connect is None or not http_requests(run):
        return missing(run, "a connection to a legacy server given by its URL")
    refused = next(
        (
            r
            for r in run.of_kind("http_response")
            if r.get("status") in (400, 404, 405)
            and any(
                q.get("request") == r.get("request") and q.get("method") == "POST"
                for q in http_requests(run)
            )
        ),
        None,
    )
    endpoint = _endpoint_event(run)
    evidence = [*([refused] if refused else []), *([endpoint] if endpoint else [])]
    evidence += op_evidence(connect, listing)
    if endpoint is None:
        return warn("the client never opened the HTTP+SSE stream", evidence)
    if listing is None:
        return warn(f"connecting over HTTP+SSE failed: {connect.error}", evidence)
    tools = (listing.value or {}).get("tools") if listing.ok else None
    if not isinstance(tools, list) or not tools:
        return warn(f"over HTTP+SSE tools/list surfaced {listing.error or listing.value}", evidence)
    return passed("the client fell back to HTTP+SSE and the session works", evidence)


async def connect_by_url(session: Session) -> None:
    # The client gets the legacy server's URL as a plain (Streamable) HTTP target.
    session.target = (
        HttpTarget(session.target.url)
        if not isinstance(session.target, StdioTarget)
        else session.target
    )
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")


@check(
    "http.cancel-explicitly",
    requirements=["HT-5", "CANCEL"],
    level="SHOULD",
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="A request the caller abandons is cancelled with notifications/cancelled, not only by dropping the connection",
)
def cancel_explicitly(run: ScenarioRun) -> Verdict:
    return cancelled_by_notification(run, "slow", warn)


async def abandon_a_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    with anyio.move_on_after(0.5):  # the caller gives up: the client must cancel
        await session.call("call_tool", "slow", {})
    await anyio.sleep(0.3)


SCENARIOS = [
    Scenario(
        "stdio-noise-and-crash",
        "stdio/noise-and-crash.json",
        checks=("stdio.stderr-not-an-error", "stdio.bad-lines-skipped", "stdio.crash-surfaced"),
        drive=noise_then_crash,
        description="stderr flood, a garbage line and a long line from the server, then a crash",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "stdio-restart",
        "stdio/restart.json",
        checks=("stdio.crash-surfaced", "stdio.restart-after-exit"),
        drive=crash_then_list,
        description="the server exits on a tools/call; the tools are listed again afterwards",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "http-get-405",
        "http/get-405.json",
        checks=("http.get-405-tolerated", "http.accepts-202"),
        drive=connect_wait_list,
        description="the server refuses the GET stream with 405",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "http-resume-retry",
        "http/resume-retry.json",
        checks=("http.resume-with-last-event-id", "http.retry-honoured"),
        drive=list_then_call,
        description="a tools/call stream closed after a priming event with retry 400 ms",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "http-legacy-fallback",
        "tools/list-and-call.json",
        # HT-13 is judged on every HTTP+SSE run; here it would only repeat, as a FAIL,
        # the (non-normative) fallback that http.legacy-fallback already reports.
        checks=("http.legacy-fallback",),
        drive=connect_by_url,
        description="an HTTP+SSE server given to the client as a plain HTTP URL; version unpinned",
        revisions=("2024-11-05",),
        transports=("sse-legacy",),
        requires=frozenset({"tools"}),
        pin_version=False,
    ),
    Scenario(
        "http-legacy-fallback-404",
        "http/legacy-404.json",
        checks=("http.legacy-fallback",),
        drive=connect_by_url,
        description="an HTTP+SSE server that refuses POST with 404, given to the client as a "
        "plain HTTP URL; version unpinned",
        requires=frozenset({"tools"}),
        pin_version=False,
    ),
    Scenario(
        "http-legacy-fallback-400",
        "http/legacy-400.json",
        checks=("http.legacy-fallback",),
        drive=connect_by_url,
        description="an HTTP+SSE server that refuses POST with 400, given to the client as a "
        "plain HTTP URL; version unpinned",
        requires=frozenset({"tools"}),
        pin_version=False,
    ),
    Scenario(
        "http-drop-connection",
        "http/drop-connection.json",
        checks=("http.dropped-connection-surfaced", "http.session-survives-dropped-connection"),
        drive=calls_with_drops,
        description="a JSON body and an SSE stream cut mid-response, then a call that must work",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "http-cancel",
        "http/cancel.json",
        checks=("http.cancel-explicitly",),
        drive=abandon_a_call,
        description="a tools/call never answered, abandoned by the caller",
        requires=frozenset({"tools"}),
    ),
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
    "stdio.no-batches",
    "stdio.shutdown-closes-stdin",
    "http.accept-header",
    "http.get-stream-accept",
    "http.one-message-per-post",
    "http.session-id-echoed",
    "http.protocol-version-header",
    "http.delete-session",
    "sse-legacy.posts-to-endpoint",
)
