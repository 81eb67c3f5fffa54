"""Transports: stdio framing and shutdown, Streamable HTTP headers, sessions, answers.

Most of these checks judge the tools scenario (every client runs it, over every transport
it supports); the other scenarios provoke what the tools scenario cannot: faults of a
stdio server, broken HTTP connections and streams, a refused GET stream, an expiring
session, a legacy server.

Each check names its trigger (the exchange it is about) and judges it by the spec's
words; the header checks are the root causes of the mock's refusals
(harness/judging/_preconditions.py), so they judge every request the client made, refused ones
included, and are blocked by no other refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio

from harness.clients import HttpTarget, StdioTarget
from harness.judging import (
    Trigger,
    Verdict,
    blocked,
    check,
    clause,
    client_sent,
    fault,
    http,
    not_applicable,
    not_judged,
    passed,
    silent,
    trigger,
    violated,
)
from harness.protocol import same_json
from harness.running import MAY_HAPPEN_BOUND, Operation, Scenario, ScenarioRun, Session
from harness.suite._evidence import (
    body_messages,
    cancelled_by_notification,
    crashed,
    header,
    http_requests,
    invalid_lines,
    is_request,
    judged_elsewhere,
    op_evidence,
    response_to,
    surfaced,
)

__all__ = ["SCENARIOS"]

TRANSPORTS = "basic/transports"
STREAMABLE = ("2025-03-26", "2025-06-18", "2025-11-25")

# Where the clauses are: until 2025-11-25 one transports page (and the lifecycle page for
# stdio shutdown and time-outs); at 2026-07-28 a page per transport.
STDIO_2026 = "basic/transports/stdio"
HTTP_2026 = "basic/transports/streamable-http"
LIFECYCLE = "basic/lifecycle"
BEFORE_2026 = ("2024-11-05", *STREAMABLE)
NEW_STDIO = "client MUST NOT write anything to the server's stdin"

Entry = Mapping[str, Any]
Entries = Sequence[Entry]

# Root causes that say nothing about what a check of the client's own wire form judges
# (the lines on stdin, the headers and paths of its HTTP requests): those checks judge
# every request the client made, whatever followed, refused requests included.
_WIRE_ROOTS = (
    "client.connect",
    "jsonrpc.messages-valid",
    "lifecycle.initialize-first",
    "lifecycle.initialized-notification",
    "http.accept-header",
    "http.get-stream-accept",
    "http.session-id-echoed",
    "http.protocol-version-header",
    "http.new-session-after-404",
    "stateless.standard-headers",
    "transport.origin",
)


def _seq(entry: Entry) -> int:
    return int(entry["seq"])


def _faults_of(entries: Entries, kind: str) -> list[Entry]:
    return [
        e for e in entries if e["kind"] == "fault" and (e.get("fault") or {}).get("kind") == kind
    ]


def _saw_faults(*kinds: str) -> Callable[[Entries], bool]:
    """For `Session.until`: the mock carried out faults of all these kinds."""
    return lambda entries: all(_faults_of(entries, kind) for kind in kinds)


def _tool_call_op(run: ScenarioRun, tool: str, arguments: Mapping[str, Any]) -> Operation | None:
    """The first call_tool the harness asked with this tool and these arguments."""
    return next(
        (
            o
            for o in run.operations
            if o.op == "call_tool"
            and same_json((o.args.get("args") or [None, None])[:2], [tool, dict(arguments)])
        ),
        None,
    )


def _tool_requests(run: ScenarioRun, tool: str, arguments: Mapping[str, Any]) -> list[Entry]:
    """The client's tools/call requests of this tool with these arguments."""
    wanted = {"name": tool, "arguments": dict(arguments)}
    return [
        r
        for r in run.requests("tools/call")
        if isinstance(params := r["message"].get("params"), dict)
        and same_json({k: params.get(k) for k in wanted}, wanted)
    ]


def _text_result(operation: Operation | None, text: str) -> bool:
    """The operation returned a tool result holding exactly this one text."""
    value = operation.value if operation is not None and operation.ok else None
    return isinstance(value, dict) and same_json(
        value.get("content"), [{"type": "text", "text": text}]
    )


def _tool_names(operation: Operation | None) -> list[Any] | None:
    """The names in a list_tools result, or None when it failed or is no list."""
    value = operation.value if operation is not None and operation.ok else None
    tools = value.get("tools") if isinstance(value, dict) else None
    if not isinstance(tools, list):
        return None
    return [t.get("name") if isinstance(t, dict) else None for t in tools]


# -- stdio ---------------------------------------------------------------------------------


def _stdin_lines(run: ScenarioRun) -> list[Entry]:
    """Every line the client wrote on the server's stdin: its messages, and what was none."""
    return sorted([*run.client_messages(), *run.of_kind("invalid")], key=_seq)


_WROTE_ON_STDIN = trigger("the client wrote on the server's stdin", _stdin_lines)
_LINE_ROOTS = ("client.connect", "jsonrpc.messages-valid", *_WIRE_ROOTS[2:4])


@check(
    "stdio.framing",
    requirements=["ST-1"],
    clauses=[
        clause(TRANSPORTS, "and MUST NOT contain embedded newlines", *BEFORE_2026),
        clause(STDIO_2026, "and MUST NOT contain embedded newlines", "2026-07-28"),
    ],
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="Each line on the server's stdin is exactly one JSON-RPC message (no embedded newlines)",
    trigger=_WROTE_ON_STDIN,
    independent_of=_LINE_ROOTS,
)
def stdio_framing(run: ScenarioRun) -> Verdict:
    lines = _stdin_lines(run)
    split, others = invalid_lines(run, "stdio.framing")
    if split:
        return violated(
            f"a message was written over several lines (an embedded newline): "
            f"{split[0].get('reason')}",
            split[:3],
        )
    if others:
        return judged_elsewhere(run, others)
    return passed(f"{len(lines)} lines, each one JSON message", lines[:2])


@check(
    "stdio.only-mcp-messages",
    requirements=["ST-2"],
    clauses=[
        clause(TRANSPORTS, NEW_STDIO, *BEFORE_2026),
        clause(STDIO_2026, NEW_STDIO, "2026-07-28"),
    ],
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="The client writes nothing to the server's stdin that is not a valid MCP message",
    trigger=_WROTE_ON_STDIN,
    independent_of=_LINE_ROOTS,
)
def stdio_only_mcp(run: ScenarioRun) -> Verdict:
    lines = _stdin_lines(run)
    invalid, others = invalid_lines(run, "stdio.only-mcp-messages")
    if invalid:
        return violated(
            f"the client wrote something that is not an MCP message: {invalid[0].get('reason')}",
            invalid[:3],
        )
    if others:
        return judged_elsewhere(run, others)
    return passed(f"all {len(lines)} lines on stdin were MCP messages", lines[:2])


@check(
    "stdio.no-batches",
    requirements=["RPC-6"],
    # The pages say only that messages are single ones (no keyword); from 2025-06-18 a
    # batch is no valid MCP message (the schema has none), which stdin must not carry.
    clauses=[
        clause(TRANSPORTS, NEW_STDIO, "2025-06-18", "2025-11-25"),
        clause(STDIO_2026, NEW_STDIO, "2026-07-28"),
    ],
    revisions=("2025-06-18", "2025-11-25", "2026-07-28"),
    transports=["stdio"],
    spec="changelog",
    description="From 2025-06-18 on, no line the client writes is a JSON-RPC batch (an array)",
    trigger=_WROTE_ON_STDIN,
    independent_of=_LINE_ROOTS,
)
def stdio_no_batches(run: ScenarioRun) -> Verdict:
    lines = _stdin_lines(run)
    batches, others = invalid_lines(run, "stdio.no-batches")
    batches += [e for e in run.of_kind("note") if " is a batch of " in str(e.get("text", ""))]
    if batches:
        return violated(
            f"the client wrote a batch, which {run.revision} does not have", batches[:3]
        )
    if others:
        return judged_elsewhere(run, others)
    return passed(f"{len(lines)} lines, each a single message", lines[:2])


def _session_start(run: ScenarioRun) -> list[Entry]:
    """The client's first message on stdin: a session was open."""
    return list(run.client_messages()[:1])


@check(
    "stdio.shutdown-closes-stdin",
    requirements=["ST-4", "LC-10"],
    clauses=[
        clause(LIFECYCLE, "client SHOULD initiate shutdown by", *BEFORE_2026),
        clause(STDIO_2026, "client SHOULD initiate shutdown by", "2026-07-28"),
    ],
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="To shut down, the client first closes the server's stdin before any signal",
    # The harness closes the client at the end of every run: a stdio session is the trigger.
    trigger=trigger(
        "a stdio session, which the harness closed at the end of the run", _session_start
    ),
)
def stdio_shutdown(run: ScenarioRun) -> Verdict:
    session = _session_start(run)
    ends = run.of_kind("stdin_eof", "signal", "exit")
    if ends and ends[0]["kind"] == "exit":
        return not_applicable("the server had exited on its own before the client closed", ends[:1])
    if not ends:
        return violated(
            "the server saw neither stdin closing nor a signal: it was killed outright (SIGKILL)",
            session,
        )
    if ends[0]["kind"] == "signal":
        return violated(
            f"the client sent {ends[0].get('name', 'a signal')} without closing stdin first",
            [*session, *ends],
        )
    return passed("the client closed stdin first", [*session, ends[0]])


def _call_after_faults(word: str, *kinds: str) -> Trigger:
    """The echo of `word` the harness asked after the mock carried out these faults (the
    drive waits for them), unless its request went out before them. Asked, not sent: a
    client that takes the faults for the end of the session may fail the call unsent."""

    def find(run: ScenarioRun) -> list[Entry]:
        faults = [next(iter(_faults_of(run.entries, kind)), None) for kind in kinds]
        call = _tool_call_op(run, "echo", {"word": word})
        if call is None or not all(faults):
            return []
        last = max(_seq(f) for f in faults if f is not None)
        sent = _tool_requests(run, "echo", {"word": word})
        if sent and _seq(sent[0]) < last:
            return []
        return [*(f for f in faults if f is not None), *sent[:1], call.to_json()]

    shown = " and ".join(kinds)
    return trigger(f"a call_tool asked after the server's {shown} output", find)


_AFTER_STDERR = _call_after_faults("first", "stderr")
_AFTER_BAD_LINES = _call_after_faults("second", "garbage", "oversized_line")


@check(
    "stdio.stderr-not-an-error",
    requirements=["ST-3"],
    clauses=[
        clause(
            TRANSPORTS, "SHOULD NOT assume stderr output indicates error conditions", "2025-11-25"
        ),
        clause(
            STDIO_2026, "SHOULD NOT assume stderr output indicates error conditions", "2026-07-28"
        ),
    ],
    revisions=("2025-11-25", "2026-07-28"),
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="A flood of stderr output from the server is not taken for an error: the next call works",
    trigger=_AFTER_STDERR,
)
def stdio_stderr_not_an_error(run: ScenarioRun) -> Verdict:
    call = _tool_call_op(run, "echo", {"word": "first"})
    evidence = _AFTER_STDERR.find(run)
    if (unjudged := crashed(call)) is not None:
        return unjudged
    if call is None or not _text_result(call, "first"):
        return violated(
            f"after the server wrote to stderr the next call {surfaced(call) if call else 'was lost'}",
            evidence,
        )
    return passed("the call after 2000 lines on stderr succeeded", evidence)


@check(
    "stdio.bad-lines-skipped",
    requirements=["ST-1"],
    clauses=[
        silent(
            "only the server is bound (it must not write what is no MCP message on stdout); "
            "no sentence asks the client to skip such a line, nor sets a line length"
        ),
    ],
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="A line from the server that is not JSON, and a 200 kB line, cost only themselves: the next call works",
    trigger=_AFTER_BAD_LINES,
)
def stdio_bad_lines_skipped(run: ScenarioRun) -> Verdict:
    call = _tool_call_op(run, "echo", {"word": "second"})
    evidence = _AFTER_BAD_LINES.find(run)
    if (unjudged := crashed(call)) is not None:
        return unjudged
    if call is None or not _text_result(call, "second"):
        return violated(
            "after a garbage line and a long line the next call "
            f"{surfaced(call) if call else 'was lost'}",
            evidence,
        )
    return passed("the call after the garbage and the long line succeeded", evidence)


def _crash_during_call(run: ScenarioRun) -> list[Entry]:
    """The server's crash, and the tools/call of `crash` it was answering (sent before it)."""
    crash = next(iter(_faults_of(run.entries, "crash")), None)
    if crash is None:
        return []
    sent = [r for r in _tool_requests(run, "crash", {}) if _seq(r) < _seq(crash)]
    return [*sent[:1], crash] if sent else []


_CRASH_DURING_CALL = trigger("the server exited while answering a tools/call", _crash_during_call)


@check(
    "stdio.crash-surfaced",
    requirements=["LC-9"],
    clauses=[
        silent("the spec asks for time-outs, not for noticing a server's exit before one expires"),
        silent(
            "no sentence speaks of a result for a call whose server exited (2026-07-28: "
            "in-flight requests are simply lost, no keyword)",
            branch="result-surfaced",
        ),
        clause(
            LIFECYCLE,
            "SHOULD implement appropriate timeouts for all requests",
            "2024-11-05",
            branch="hung",
        ),
        clause(
            LIFECYCLE, "SHOULD establish timeouts for all sent requests", *STREAMABLE, branch="hung"
        ),
        clause(
            "basic/patterns/cancellation",
            "SHOULD establish timeouts for all sent requests",
            "2026-07-28",
            branch="hung",
        ),
    ],
    transports=["stdio"],
    spec=TRANSPORTS + "#stdio",
    description="A call whose server process exits mid-call fails promptly with an error, not a hang or a time-out",
    trigger=_CRASH_DURING_CALL,
)
def stdio_crash_surfaced(run: ScenarioRun) -> Verdict:
    call = _tool_call_op(run, "crash", {})
    evidence = [*_crash_during_call(run), *op_evidence(call)]
    if (unjudged := crashed(call)) is not None:
        return unjudged
    if call is None:
        return not_applicable("the harness asked no call_tool of crash", evidence)
    if call.ok:
        return violated(
            f"the client surfaced a result from a crashed server: {call.value}",
            evidence,
            clause="result-surfaced",
        )
    if call.hung:
        return violated(
            f"the client never noticed the server exit: the call {surfaced(call)}",
            evidence,
            clause="hung",
        )
    if (call.error or {}).get("kind") == "timeout":
        return violated(
            f"the client only noticed the crash when its time-out expired ({call.seconds:.1f} s)",
            evidence,
        )
    return passed(f"the crash was surfaced as an error after {call.seconds:.2f} s", evidence)


def _restart_then_list(run: ScenarioRun) -> list[Entry]:
    """The server's crash, and the list_tools the harness asked after it (the second one)."""
    crash = next(iter(_faults_of(run.entries, "crash")), None)
    listing = run.operation("list_tools", 1)
    return [crash, listing.to_json()] if crash is not None and listing is not None else []


_RESTART_TOOLS = ["add", "crash"]  # what fixtures/stdio/restart.json lists


@check(
    "stdio.restart-after-exit",
    requirements=["ST-5"],
    clauses=[clause(STDIO_2026, "the client SHOULD restart it")],
    revisions=("2026-07-28",),
    transports=["stdio"],
    spec="basic/transports/stdio",
    description="2026 stdio: after the server process exits unexpectedly, the client starts it "
    "again and serves the next request (tools/list) from the new process",
    trigger=trigger("a list_tools asked after the server exited", _restart_then_list),
)
def stdio_restart_after_exit(run: ScenarioRun) -> Verdict:
    crash, _ = _restart_then_list(run)
    listing = run.operation("list_tools", 1)
    assert listing is not None  # the trigger
    if (unjudged := crashed(listing)) is not None:
        return unjudged
    # Each server process records a start entry; one after the crash is a new process.
    restarts = [e for e in run.of_kind("start") if _seq(e) > _seq(crash)]
    if not restarts:
        return violated(
            f"the server was not started again after it exited; list_tools {surfaced(listing)}",
            [crash, *op_evidence(listing)],
        )
    relisted = [e for e in run.requests("tools/list") if _seq(e) > _seq(restarts[0])]
    evidence = [crash, restarts[0], *relisted[:1], *op_evidence(listing)]
    if not relisted or not same_json(_tool_names(listing), _RESTART_TOOLS):
        return violated(
            "a new server process started, but the list_tools after the crash was not "
            f"served by it: list_tools {surfaced(listing)}",
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
    # The script floods stderr after tools/list, and writes the bad lines 200 ms after the
    # first call: each call goes out once the mock has done what it is meant to survive.
    await session.until("the server's stderr flood", _saw_faults("stderr"))
    await session.call("call_tool", "echo", {"word": "first"})
    await session.until(
        "the garbage line and the long line", _saw_faults("garbage", "oversized_line")
    )
    await session.call("call_tool", "echo", {"word": "second"})
    await session.call("call_tool", "crash", {})


# -- broken HTTP connections -----------------------------------------------------------------


def _dropped_calls(run: ScenarioRun) -> list[tuple[Entry, Operation | None]]:
    """Each connection the mock broke mid-response, with the call_tool whose request it carried."""
    requests = {r.get("request"): r for r in http_requests(run, "POST")}
    found = []
    for drop in _faults_of(run.entries, "drop_connection"):
        messages = body_messages(requests.get(drop.get("request"), {}))
        params = messages[0].get("params") if messages else None
        call = None
        if isinstance(params, dict) and messages[0].get("method") == "tools/call":
            call = _tool_call_op(run, str(params.get("name")), params.get("arguments") or {})
        found.append((drop, call))
    return found


@check(
    "http.dropped-connection-surfaced",
    requirements=["HT-3", "LC-9"],
    clauses=[
        silent(
            "the spec asks for time-outs, not for noticing a broken connection before one "
            "expires (disconnection may occur at any time)"
        ),
        silent(
            "no sentence speaks of a response cut short: the client must support JSON and "
            "SSE answers, which says nothing of a body or stream that breaks off",
            branch="result-surfaced",
        ),
        clause(LIFECYCLE, "SHOULD establish timeouts for all sent requests", branch="hung"),
    ],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#streamable-http",
    description="A response whose connection breaks mid-body (a JSON body cut in half, an SSE "
    "stream without event ids cut inside the response event) fails with an error: never a "
    "result, never a hang, and not only when a time-out expires",
    trigger=fault("drop_connection"),
)
def dropped_connection_surfaced(run: ScenarioRun) -> Verdict:
    dropped = _dropped_calls(run)
    calls = [call for _, call in dropped if call is not None]
    evidence = [*(drop for drop, _ in dropped), *op_evidence(*calls)]
    for call in calls:
        if (unjudged := crashed(call)) is not None:
            return unjudged
    for call in calls:
        if call.ok:
            return violated(
                f"a result was surfaced from a response cut short: {call.value}",
                evidence,
                clause="result-surfaced",
            )
        if call.hung:
            return violated(
                f"the client never noticed a broken connection: the call {surfaced(call)}",
                evidence,
                clause="hung",
            )
    slow = [c for c in calls if (c.error or {}).get("kind") == "timeout"]
    if slow:
        return violated(
            f"a broken connection was only noticed when a time-out expired ({slow[0].seconds:.1f} s)",
            evidence,
        )
    if not calls:
        return not_applicable("no call the harness asked was cut short", evidence)
    return passed(f"{len(calls)} broken responses failed with errors, at once", evidence)


_ADD_AFTER_DROPS = {"a": 3, "b": 1}  # the drive's third call, after the two broken ones


def _call_after_drops(run: ScenarioRun) -> list[Entry]:
    drops = _faults_of(run.entries, "drop_connection")
    after = _tool_call_op(run, "add", _ADD_AFTER_DROPS)
    return [drops[-1], after.to_json()] if drops and after is not None else []


@check(
    "http.session-survives-dropped-connection",
    requirements=["HT-3", "HT-9"],
    clauses=[
        silent(
            "no sentence says a broken connection leaves the session usable: a session ends "
            "by the server's 404 or the client's DELETE, and disconnection may occur"
        ),
    ],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="A broken connection ends one request, not the session (which ends by the "
    "server's 404 or the client's DELETE): the next call works",
    # Asked, not sent: a client that gave the session up may fail the call unsent.
    trigger=trigger("a call_tool asked after connections broke", _call_after_drops),
)
def session_survives_dropped_connection(run: ScenarioRun) -> Verdict:
    after = _tool_call_op(run, "add", _ADD_AFTER_DROPS)
    evidence = _call_after_drops(run)
    if (unjudged := crashed(after)) is not None:
        return unjudged
    if not _text_result(after, "4"):
        return violated(
            f"after a broken connection the next call {surfaced(after) if after else 'was lost'}",
            evidence,
        )
    return passed("after the broken connections the next call worked", evidence)


async def calls_with_drops(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    for a in (1, 2, 3):  # the first two connections break mid-response
        await session.call("call_tool", "add", {"a": a, "b": 1})


# -- Streamable HTTP: the client's requests -----------------------------------------------------


def _media_types(entry: Entry) -> set[str]:
    """The media types an Accept header lists (parameters dropped, lower case)."""
    accept = header(entry, "accept") or ""
    return {part.split(";")[0].strip().lower() for part in accept.split(",") if part.strip()}


@check(
    "http.accept-header",
    requirements=["HT-2", "HM-1"],
    clauses=[
        clause(TRANSPORTS, "MUST include an Accept header, listing both", *STREAMABLE),
        clause(HTTP_2026, "MUST include an Accept header listing both", "2026-07-28"),
    ],
    transports=["http"],
    revisions=(*STREAMABLE, "2026-07-28"),
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="Every POST lists both application/json and text/event-stream in Accept",
    trigger=http("POST"),
    independent_of=_WIRE_ROOTS,
)
def accept_header(run: ScenarioRun) -> Verdict:
    posts = http_requests(run, "POST")
    for post in posts:
        if not {"application/json", "text/event-stream"} <= _media_types(post):
            return violated(f"a POST has Accept {header(post, 'accept')!r}", [post])
    return passed(f"all {len(posts)} POSTs accept both JSON and SSE", posts[:2])


@check(
    "http.get-stream-accept",
    requirements=["HT-6"],
    clauses=[clause(TRANSPORTS, "MUST include an Accept header, listing text/event-stream")],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#listening-for-messages-from-the-server",
    description="A GET for the server's event stream lists text/event-stream in Accept",
    trigger=http("GET"),
    independent_of=_WIRE_ROOTS,
)
def get_stream_accept(run: ScenarioRun) -> Verdict:
    gets = http_requests(run, "GET")
    for get in gets:
        if "text/event-stream" not in _media_types(get):
            return violated(f"a GET has Accept {header(get, 'accept')!r}", [get])
    return passed(f"all {len(gets)} GETs accept text/event-stream", gets[:2])


@check(
    "http.one-message-per-post",
    requirements=["HT-1", "RPC-6"],
    clauses=[
        clause(TRANSPORTS, "client MUST be a new HTTP POST request", *STREAMABLE),
        clause(HTTP_2026, "client MUST be a new HTTP POST request", "2026-07-28"),
        silent(
            "at 2025-03-26 a POST body may be a batch (an array), so none is judged",
            "2025-03-26",
            branch="batch",
        ),
        clause(
            TRANSPORTS,
            "POST request MUST be a single JSON-RPC",
            "2025-06-18",
            "2025-11-25",
            branch="batch",
        ),
        clause(HTTP_2026, "HTTP POST MUST be a single JSON-RPC", "2026-07-28", branch="batch"),
    ],
    transports=["http"],
    revisions=(*STREAMABLE, "2026-07-28"),
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="Every client message is its own POST to the MCP endpoint (no batches from 2025-06-18)",
    trigger=http("POST"),
    independent_of=_WIRE_ROOTS,
)
def one_message_per_post(run: ScenarioRun) -> Verdict:
    posts = http_requests(run, "POST")
    endpoint = run.scenario.load().http.path
    for post in posts:
        if post.get("path") != endpoint:
            return violated(
                f"a POST went to {post.get('path')!r}, not the MCP endpoint {endpoint!r}", [post]
            )
        body = (post.get("body") or "").lstrip()
        if body.startswith("[") and run.revision != "2025-03-26":
            return violated("a POST body is a JSON array (a batch)", [post], clause="batch")
    return passed(f"{len(posts)} POSTs to {endpoint}, one message each", posts[:2])


def _is_initialize(request: Entry) -> bool:
    return any(m.get("method") == "initialize" for m in body_messages(request))


def _answer_to(run: ScenarioRun, request: Entry) -> Entry | None:
    """The mock's HTTP response to an HTTP request entry (same request number)."""
    return next(
        (
            r
            for r in run.of_kind("http_response")
            if r.get("request") == request.get("request") and _seq(r) > _seq(request)
        ),
        None,
    )


@dataclass(frozen=True)
class _Handshake:
    """One initialize over HTTP: what it settled, and the requests made under it."""

    answer: Entry
    """The HTTP response to the initialize POST."""
    session_id: str | None
    """The Mcp-Session-Id the answer issued (None: no session)."""
    version: Any
    """The protocolVersion of the InitializeResult (None: no result)."""
    later: Sequence[Entry]
    """The client's HTTP requests after the answer, up to the next initialize."""


def _handshakes(run: ScenarioRun) -> list[_Handshake]:
    requests = http_requests(run)
    inits = [r for r in requests if _is_initialize(r)]
    found = []
    for index, init in enumerate(inits):
        answer = _answer_to(run, init)
        if answer is None:
            continue
        end = _seq(inits[index + 1]) if index + 1 < len(inits) else None
        later = [r for r in requests if _seq(r) > _seq(answer) and (end is None or _seq(r) < end)]
        message = next(
            (m for m in run.client_messages() if m.get("channel") == f"http:{init.get('request')}"),
            None,
        )
        reply = response_to(run, message) if message is not None else None
        result = reply["message"].get("result") if reply is not None else None
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        found.append(_Handshake(answer, header(answer, "mcp-session-id"), version, later))
    return found


def _under_a_session(run: ScenarioRun) -> list[Entry]:
    return [r for h in _handshakes(run) if h.session_id is not None for r in h.later]


@check(
    "http.session-id-echoed",
    requirements=["HT-8"],
    clauses=[clause(TRANSPORTS, "Streamable HTTP transport MUST include it in the")],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="The Mcp-Session-Id issued at initialize is sent on every later request",
    trigger=trigger("a request after the mock issued a session id", _under_a_session),
    independent_of=_WIRE_ROOTS,
)
def session_echoed(run: ScenarioRun) -> Verdict:
    sessions = [h for h in _handshakes(run) if h.session_id is not None]
    for session in sessions:
        for request in session.later:
            sent = header(request, "mcp-session-id")
            if sent != session.session_id:
                return violated(
                    f"a {request.get('method')} carries session id {sent!r}, "
                    f"not {session.session_id!r}",
                    [session.answer, request],
                )
    later = [r for s in sessions for r in s.later]
    return passed(
        f"all {len(later)} requests after initialize carry the session id",
        [sessions[0].answer, *later[:2]],
    )


def _after_negotiation(run: ScenarioRun) -> list[Entry]:
    return [r for h in _handshakes(run) if h.version is not None for r in h.later]


@check(
    "http.protocol-version-header",
    requirements=["HT-11"],
    clauses=[
        clause(TRANSPORTS, "If using HTTP, the client MUST include"),
        clause(TRANSPORTS, "sent by the client SHOULD be the one", branch="not-negotiated"),
    ],
    transports=["http"],
    revisions=("2025-06-18", "2025-11-25"),
    spec=TRANSPORTS + "#protocol-version-header",
    description="Every request after initialize carries MCP-Protocol-Version (MUST), with the "
    "negotiated version (SHOULD)",
    trigger=trigger("a request after initialize negotiated a version", _after_negotiation),
    independent_of=_WIRE_ROOTS,
)
def protocol_version_header(run: ScenarioRun) -> Verdict:
    negotiated = [h for h in _handshakes(run) if h.version is not None]
    for handshake in negotiated:
        for request in handshake.later:
            sent = header(request, "mcp-protocol-version")
            if sent is None:
                return violated(
                    f"a {request.get('method')} after initialize has no MCP-Protocol-Version",
                    [handshake.answer, request],
                )
            if not same_json(sent, handshake.version):
                return violated(
                    f"a {request.get('method')} carries MCP-Protocol-Version {sent!r}, "
                    f"not the negotiated {handshake.version!r}",
                    [handshake.answer, request],
                    clause="not-negotiated",
                )
    later = [r for h in negotiated for r in h.later]
    return passed(
        f"all {len(later)} requests after initialize carry the negotiated MCP-Protocol-Version",
        later[:2],
    )


def _sessions_issued(run: ScenarioRun) -> list[Entry]:
    return [h.answer for h in _handshakes(run) if h.session_id is not None]


@check(
    "http.delete-session",
    requirements=["HT-10", "LC-10"],
    clauses=[clause(TRANSPORTS, "SHOULD send an HTTP DELETE to the MCP endpoint")],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="A client that is done with a session ends it with DELETE and the session id",
    # The harness closes the client at the end of every run: it needs its session no more.
    trigger=trigger("a session the client held when the harness closed it", _sessions_issued),
)
def delete_session(run: ScenarioRun) -> Verdict:
    last = [h for h in _handshakes(run) if h.session_id is not None][-1]
    deletes = [r for r in last.later if r.get("method") == "DELETE"]
    if not deletes:
        return violated("the client closed without a DELETE of its session", [last.answer])
    sent = header(deletes[-1], "mcp-session-id")
    if sent != last.session_id:
        return violated(
            f"the DELETE names session {sent!r}, not {last.session_id!r}", [last.answer, *deletes]
        )
    return passed("the session was ended with DELETE and its id", [last.answer, deletes[-1]])


# -- Streamable HTTP: answers, sessions, streams ---------------------------------------------


def _session_gone(run: ScenarioRun) -> list[Entry]:
    """The 404 the mock gave to a request that carried a session id: the first to a POST
    (the client awaited its answer), else the first to any request. A 404 to the GET of
    the client's stream may cross a POST already on its way with the same id."""
    gone = [
        [request, answer]
        for request in http_requests(run)
        if header(request, "mcp-session-id")
        and (answer := _answer_to(run, request)) is not None
        and answer.get("status") == 404
    ]
    return next((g for g in gone if g[0].get("method") == "POST"), gone[0] if gone else [])


@check(
    "http.new-session-after-404",
    requirements=["HT-9"],
    clauses=[clause(TRANSPORTS, "it MUST start a new session by sending")],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#session-management",
    description="After a 404 on a request with a session id, the client starts a new session without that id",
    trigger=trigger("a 404 to a request with a session id", _session_gone),
)
def new_session_after_404(run: ScenarioRun) -> Verdict:
    request, gone = _session_gone(run)
    posts = [r for r in http_requests(run, "POST") if _seq(r) > _seq(gone)]
    # Requests only: a notification or response may have been on its way when the 404
    # came, and it says nothing of how the client answers the 404.
    after = [r for r in posts if any(is_request(m) for m in body_messages(r))]
    if not after:
        last = run.operations[-1:]
        if last and (unjudged := crashed(last[0])) is not None:
            return unjudged
        what = "no request" if posts else "nothing"
        return violated(
            f"the client sent {what} after the 404",
            [request, gone, *posts[:2], *op_evidence(*last)],
        )
    first = after[0]
    if not _is_initialize(first):
        methods = [m.get("method") for m in body_messages(first)]
        return violated(
            f"after the 404 the client sent {methods}, not a new initialize", [gone, first]
        )
    if header(first, "mcp-session-id") is not None:
        return violated("the new initialize still carries the expired session id", [gone, first])
    return passed("the client re-initialized without the expired session id", [gone, first])


async def call_twice(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})
    await session.call("call_tool", "add", {"a": 1, "b": 2})


async def list_then_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})


def _answers(run: ScenarioRun, method: str) -> list[Entry]:
    """The mock's 200 answers to the client's POSTs of `method`."""
    found = []
    for post in http_requests(run, "POST"):
        if any(m.get("method") == method for m in body_messages(post)):
            answer = _answer_to(run, post)
            if answer is not None and answer.get("status") == 200:
                found.append(answer)
    return found


def _content_type(entry: Entry) -> str:
    return (header(entry, "content-type") or "").split(";")[0].strip().lower()


def _json_answer(run: ScenarioRun) -> list[Entry]:
    """The mock's application/json answer to tools/list."""
    return [a for a in _answers(run, "tools/list") if _content_type(a) == "application/json"][:1]


def _sse_answer(run: ScenarioRun) -> list[Entry]:
    """The mock's text/event-stream answer to tools/call, and its first comment line."""
    for answer in _answers(run, "tools/call"):
        if _content_type(answer) != "text/event-stream":
            continue
        comments = [
            e
            for e in run.of_kind("sse_event")
            if e.get("request") == answer.get("request") and (e.get("event") or {}).get("comments")
        ]
        if comments:
            return [answer, comments[0]]
    return []


@check(
    "http.json-and-sse-answers",
    requirements=["HT-3", "HM-6"],
    # SSE comment lines are part of text/event-stream (2026-07-28 adds only a lowercase
    # "clients must ignore such lines"): a client that fails on them fails the SSE case.
    clauses=[
        clause(TRANSPORTS, "The client MUST support both these cases", *STREAMABLE),
        clause(HTTP_2026, "The client MUST support both.", "2026-07-28"),
    ],
    transports=["http"],
    revisions=(*STREAMABLE, "2026-07-28"),
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="Answers as application/json and as text/event-stream (comments and a "
    "notification first, the response over several data: lines, in small chunks) both work",
    trigger=trigger(
        "a JSON answer or an SSE answer with comments",
        lambda run: [*_json_answer(run), *_sse_answer(run)],
    ),
)
def json_and_sse(run: ScenarioRun) -> Verdict:
    listing, call = run.operation("list_tools"), run.operation("call_tool")
    json_answer, sse_answer = _json_answer(run), _sse_answer(run)
    evidence = [*json_answer, *sse_answer, *op_evidence(listing, call)]
    for operation in (listing, call):
        if (unjudged := crashed(operation)) is not None:
            return unjudged
    if json_answer and not same_json(_tool_names(listing), ["add"]):
        return violated(
            "the JSON answer to tools/list was not surfaced: list_tools "
            f"{surfaced(listing) if listing else 'was not asked'}",
            evidence,
        )
    if sse_answer and not _text_result(call, "3"):
        return violated(
            "the SSE answer to tools/call was not surfaced: call_tool "
            f"{surfaced(call) if call else 'was not asked'}",
            evidence,
        )
    if not json_answer or not sse_answer:
        return not_judged(run, "a JSON answer and an SSE answer with comments, both")
    return passed("both the JSON and the SSE answer were surfaced", evidence)


def _get_refused(run: ScenarioRun) -> list[Entry]:
    """The client's first GET the mock answered 405, and that answer."""
    for get in http_requests(run, "GET"):
        answer = _answer_to(run, get)
        if answer is not None and answer.get("status") == 405:
            return [get, answer]
    return []


def _saw_get_refused(entries: Entries) -> bool:
    """For `Session.until`: a GET answered 405 (the request numbers tie the two)."""
    gets = {
        e.get("request")
        for e in entries
        if e["kind"] == "http_request" and e.get("method") == "GET"
    }
    return any(
        e["kind"] == "http_response" and e.get("status") == 405 and e.get("request") in gets
        for e in entries
    )


@check(
    "http.get-405-tolerated",
    requirements=["HT-6"],
    clauses=[
        silent(
            "only the server is bound (it must answer the GET with a stream or 405); the "
            "client may issue the GET, and no sentence says how it takes the 405"
        ),
    ],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#listening-for-messages-from-the-server",
    description="A server may answer the GET stream with 405: the session goes on (tools/list works)",
    trigger=trigger("a GET the mock answered 405", _get_refused),
)
def get_405_tolerated(run: ScenarioRun) -> Verdict:
    get, refusal = _get_refused(run)
    listings = [o for o in run.operations if o.op == "list_tools"]
    for listing in listings:
        if (unjudged := crashed(listing)) is not None:
            return unjudged
    evidence = [get, refusal, *op_evidence(*listings)]
    listed = [r for r in run.requests("tools/list") if _seq(r) > _seq(refusal)]
    if not listings or (all(o.ok for o in listings) and not listed):
        return not_applicable("no tools/list went out after the GET was refused", evidence)
    for listing in listings:
        if not same_json(_tool_names(listing), ["add"]):
            return violated(
                f"after the GET stream was refused, list_tools {surfaced(listing)}", evidence
            )
    return passed(
        f"the GET got 405 and the session went on: tools/list worked {len(listings)} times, "
        f"{len(listed)} of them sent after the refusal",
        [*evidence, *listed],
    )


def _accepted(run: ScenarioRun) -> list[tuple[Entry, Entry]]:
    """The client's POSTs of notifications or responses that the mock answered 202."""
    found: list[tuple[Entry, Entry]] = []
    for post in http_requests(run, "POST"):
        messages = body_messages(post)
        if not messages or any(is_request(m) for m in messages):
            continue  # a request, or no JSON-RPC at all
        answer = _answer_to(run, post)
        if answer is not None and answer.get("status") == 202:
            found.append((post, answer))
    return found


@check(
    "http.accepts-202",
    requirements=["HT-4"],
    clauses=[
        silent(
            "only the server is bound (it must return 202 Accepted with no body); no "
            "sentence tells the client how to take the 202"
        ),
    ],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="202 Accepted with an empty body, the answer to a notification, is taken as "
    "success: not surfaced as an error, not sent again",
    trigger=trigger(
        "a notification or response the mock answered 202",
        lambda run: [entry for pair in _accepted(run) for entry in pair],
    ),
    # A client that takes the 202 to notifications/initialized for an error fails to connect.
    independent_of=("client.connect",),
)
def accepts_202(run: ScenarioRun) -> Verdict:
    accepted = _accepted(run)
    posts = http_requests(run, "POST")
    for post, answer in accepted:
        again = [
            p
            for p in posts
            if _seq(p) > _seq(answer) and same_json(body_messages(p), body_messages(post))
        ]
        if again:
            return violated(
                "the client sent a message again after the mock accepted it with 202",
                [post, answer, again[0]],
            )
    connect = run.operation("connect")
    if (unjudged := crashed(connect)) is not None:
        return unjudged
    initialized = next(
        (
            (post, answer)
            for post, answer in accepted
            if any(m.get("method") == "notifications/initialized" for m in body_messages(post))
        ),
        None,
    )
    if connect is not None and not connect.ok and initialized is not None:
        post, answer = initialized
        heard_later = [
            r
            for r in run.of_kind("http_response")
            if _seq(r) > _seq(answer) and r.get("request") not in _deletes(run)
        ]
        evidence = [post, answer, *op_evidence(connect)]
        if heard_later:  # something else came after the 202: the failure may be its own
            return blocked("client.connect", f"connect {surfaced(connect)}", evidence)
        return violated(
            f"the mock accepted notifications/initialized with 202, its last answer, and "
            f"connect {surfaced(connect)}",
            evidence,
        )
    post, answer = accepted[0]
    return passed(
        f"{len(accepted)} notification(s) got 202 with no body; none was surfaced as an "
        "error or sent again",
        [post, answer, *op_evidence(connect)],
    )


def _deletes(run: ScenarioRun) -> set[Any]:
    return {r.get("request") for r in http_requests(run, "DELETE")}


async def connect_wait_list(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    # The client MAY open a GET stream; if it does, tools/list goes out after the 405.
    await session.until("a GET stream refused with 405", _saw_get_refused, bound=MAY_HAPPEN_BOUND)
    # Twice: the mock records the 405 as it sends it, so the first tools/list may go out
    # before the client has read the refusal; a round trip later, it has.
    await session.call("list_tools")
    await session.call("list_tools")


# -- resumption -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _BrokenStream:
    end: Entry
    """The http_end of the response stream the server closed before its response."""
    events: Sequence[Entry]
    """The stream's events before the close."""

    @property
    def last_id(self) -> Any:
        ids = [e["event"]["id"] for e in self.events if (e.get("event") or {}).get("id")]
        return ids[-1] if ids else None

    @property
    def retry(self) -> tuple[Entry, int] | None:
        """The last event that set `retry`, and its milliseconds."""
        for event in reversed(self.events):
            retry = (event.get("event") or {}).get("retry")
            if isinstance(retry, int) and not isinstance(retry, bool):
                return event, retry
        return None


def _broken_stream(run: ScenarioRun) -> _BrokenStream | None:
    """The first response stream the server closed early, and its events before the close."""
    end = next((e for e in run.of_kind("http_end") if e.get("how") == "closed"), None)
    if end is None:
        return None
    events = [
        e
        for e in run.of_kind("sse_event")
        if e.get("stream") == end.get("stream") and _seq(e) < _seq(end)
    ]
    return _BrokenStream(end, events)


def _reconnection(run: ScenarioRun, broken: _BrokenStream) -> Entry | None:
    """The client's first GET after the close: one that names an event id if any does."""
    gets = [g for g in http_requests(run, "GET") if _seq(g) > _seq(broken.end)]
    return next((g for g in gets if header(g, "last-event-id") is not None), None) or next(
        iter(gets), None
    )


def _closed_stream(run: ScenarioRun) -> list[Entry]:
    broken = _broken_stream(run)
    return [*broken.events[-1:], broken.end] if broken is not None else []


@check(
    "http.resume-with-last-event-id",
    requirements=["HT-7"],
    clauses=[
        clause(TRANSPORTS, "it SHOULD issue an HTTP GET to the"),
        silent(
            "before 2025-11-25 the GET is asked only if the client wishes to resume; "
            "nothing asks it to reconnect",
            "2025-03-26",
            "2025-06-18",
            branch="no-reconnect",
        ),
        clause(
            TRANSPORTS,
            'The client SHOULD then "poll" the SSE stream',
            "2025-11-25",
            branch="no-reconnect",
        ),
        silent(
            "no sentence binds the client to what follows the resumption (the server may "
            "replay the stream)",
            branch="answer-lost",
        ),
    ],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#resumability-and-redelivery",
    description="A response stream the server closed before the response is resumed with GET "
    "and Last-Event-ID (SHOULD poll, SHOULD resume)",
    trigger=trigger("a response stream the server closed before its response", _closed_stream),
)
def resume_with_last_event_id(run: ScenarioRun) -> Verdict:
    broken = _broken_stream(run)
    assert broken is not None  # the trigger
    call = run.operation("call_tool")
    get = _reconnection(run, broken)
    evidence = [*_closed_stream(run), *([get] if get else []), *op_evidence(call)]
    if get is None:
        return violated(
            "the client never reconnected after the stream closed", evidence, clause="no-reconnect"
        )
    sent = header(get, "last-event-id")
    if broken.last_id is None or not same_json(sent, broken.last_id):
        return violated(
            f"the GET carries Last-Event-ID {sent!r}, not the last event id {broken.last_id!r}",
            evidence,
        )
    if (unjudged := crashed(call)) is not None:
        return unjudged
    if not _text_result(call, "3"):
        return violated(
            f"the stream was resumed, but call_tool {surfaced(call) if call else 'was not asked'}",
            evidence,
            clause="answer-lost",
        )
    return passed("the stream was resumed with Last-Event-ID and the answer surfaced", evidence)


def _closed_after_retry(run: ScenarioRun) -> list[Entry]:
    broken = _broken_stream(run)
    retry = broken.retry if broken is not None else None
    return [retry[0], broken.end] if broken is not None and retry is not None else []


@check(
    "http.retry-honoured",
    requirements=["HT-7"],
    clauses=[clause(TRANSPORTS, "The client MUST respect the retry field")],
    transports=["http"],
    revisions=("2025-11-25",),
    spec=TRANSPORTS + "#resumability-and-redelivery",
    description="A client that reconnects after a stream closed with a retry field waits the "
    "field's milliseconds first",
    trigger=trigger("a response stream the server closed after a retry field", _closed_after_retry),
)
def retry_honoured(run: ScenarioRun) -> Verdict:
    broken = _broken_stream(run)
    assert broken is not None  # the trigger
    assert broken.retry is not None
    event, retry_ms = broken.retry
    get = _reconnection(run, broken)
    if get is None:
        # The MUST governs the wait before a reconnection; whether the client should have
        # reconnected at all is http.resume-with-last-event-id's question.
        return not_applicable(
            "the client did not reconnect, so it had no retry to wait", [event, broken.end]
        )
    waited = float(get["t"]) - float(broken.end["t"])
    evidence = [event, broken.end, get]
    if waited + 0.005 < retry_ms / 1000:
        return violated(
            f"the client reconnected after {waited * 1000:.0f} ms; retry asked for {retry_ms} ms",
            evidence,
        )
    return passed(
        f"the client reconnected after {waited * 1000:.0f} ms (retry {retry_ms} ms)", evidence
    )


# -- HTTP+SSE (2024-11-05) ----------------------------------------------------------------------


def _endpoint_event(run: ScenarioRun) -> Entry | None:
    return next(
        (e for e in run.of_kind("sse_event") if (e.get("event") or {}).get("event") == "endpoint"),
        None,
    )


def _posts_after_endpoint(run: ScenarioRun) -> list[Entry]:
    endpoint = _endpoint_event(run)
    if endpoint is None:
        return []
    return [p for p in http_requests(run, "POST") if _seq(p) > _seq(endpoint)]


@check(
    "sse-legacy.posts-to-endpoint",
    requirements=["HT-13"],
    clauses=[clause(TRANSPORTS, "All subsequent client messages MUST be sent")],
    revisions=("2024-11-05",),
    transports=["sse-legacy"],
    spec=TRANSPORTS + "#http-with-sse",
    description="HTTP+SSE: every message after the endpoint event is POSTed to the URI it names",
    trigger=trigger("a POST after the endpoint event", _posts_after_endpoint),
    independent_of=_WIRE_ROOTS,
)
def posts_to_endpoint(run: ScenarioRun) -> Verdict:
    endpoint = _endpoint_event(run)
    assert endpoint is not None  # the trigger
    path = urlsplit(str(endpoint["event"].get("data", "")).strip()).path
    posts = _posts_after_endpoint(run)
    for post in posts:
        if post.get("path") != path:
            return violated(
                f"a POST went to {post.get('path')!r}, not the endpoint {path!r}", [endpoint, post]
            )
    return passed(f"all {len(posts)} POSTs went to the endpoint {path}", [endpoint, *posts[:2]])


def _post_refused(run: ScenarioRun) -> list[Entry]:
    """The client's first POST the legacy server refused with 400, 404 or 405, and the answer."""
    for post in http_requests(run, "POST"):
        answer = _answer_to(run, post)
        if answer is not None and answer.get("status") in (400, 404, 405):
            return [post, answer]
    return []


@check(
    "http.legacy-fallback",
    requirements=["HT-12"],
    clauses=[
        silent(
            "2024-11-05 has no Streamable HTTP and no fallback; later revisions describe it "
            "with a lowercase should only"
        ),
    ],
    revisions=("2024-11-05",),
    transports=["sse-legacy"],
    spec=TRANSPORTS + "#backwards-compatibility",
    description="Given the URL of an HTTP+SSE server, a POST refused with 400/404/405 leads to a GET and the old transport",
    trigger=trigger(
        "the legacy server refused the client's POST with 400, 404 or 405", _post_refused
    ),
)
def legacy_fallback(run: ScenarioRun) -> Verdict:
    connect, listing = run.operation("connect"), run.operation("list_tools")
    for operation in (connect, listing):
        if (unjudged := crashed(operation)) is not None:
            return unjudged
    post, refusal = _post_refused(run)
    endpoint = _endpoint_event(run)
    evidence = [post, refusal, *([endpoint] if endpoint else []), *op_evidence(connect, listing)]
    if endpoint is None or _seq(endpoint) < _seq(refusal):
        return violated(
            "after the refused POST the client never opened the HTTP+SSE stream", evidence
        )
    if listing is None:
        return violated(
            f"connecting over HTTP+SSE failed: connect {surfaced(connect) if connect else 'was not asked'}",
            evidence,
        )
    names = _tool_names(listing)
    if not names:
        return violated(f"over HTTP+SSE list_tools {surfaced(listing)}", evidence)
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


# -- cancellation ---------------------------------------------------------------------------------


@check(
    "http.cancel-explicitly",
    requirements=["HT-5", "CANCEL"],
    clauses=[clause(TRANSPORTS, "the client SHOULD explicitly send an MCP CancelledNotification")],
    transports=["http"],
    revisions=STREAMABLE,
    spec=TRANSPORTS + "#sending-messages-to-the-server",
    description="A request the caller abandons is cancelled with notifications/cancelled, not only by dropping the connection",
    trigger=client_sent("tools/call", name="slow"),
)
def cancel_explicitly(run: ScenarioRun) -> Verdict:
    return cancelled_by_notification(run, "slow", violated)


def _sent(method: str) -> Callable[[Entries], bool]:
    """For `Session.until`: the client sent a message of `method`."""
    return lambda entries: any(
        e["kind"] == "message"
        and e.get("direction") == "client"
        and e["message"].get("method") == method
        for e in entries
    )


async def abandon_a_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    async with anyio.create_task_group() as calls:
        calls.start_soon(session.call, "call_tool", "slow", {})
        # The mock holds the call without an answer; then the caller gives up on it.
        await session.until("the mock holding the tools/call", _saw_faults("hang"))
        calls.cancel_scope.cancel()
    await session.until("notifications/cancelled", _sent("notifications/cancelled"))


SCENARIOS = [
    Scenario(
        "stdio-noise-and-crash",
        "stdio/noise-and-crash.json",
        checks=("stdio.stderr-not-an-error", "stdio.bad-lines-skipped", "stdio.crash-surfaced"),
        drive=noise_then_crash,
        waits_on_the_client=True,
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
        connect_may_fail=True,  # a client that does not fall back fails to connect: judged
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
        connect_may_fail=True,  # a client that does not fall back fails to connect: judged
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
        connect_may_fail=True,  # a client that does not fall back fails to connect: judged
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
        waits_on_the_client=True,
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
