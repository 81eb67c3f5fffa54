"""The stateless 2026-07-28 revision: per-request _meta, standard headers, version retry."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio

from harness.clients import Handlers
from harness.judging import (
    Trigger,
    Verdict,
    check,
    clause,
    client_sent,
    passed,
    silent,
    skip,
    trigger,
    violated,
)
from harness.protocol import same_json
from harness.running import Operation, Scenario, ScenarioRun, Session
from harness.suite._evidence import (
    STATELESS,
    body_messages,
    cancelled_by_notification,
    error_code,
    exchanges,
    first_operation,
    header,
    http_requests,
    http_response_for,
    is_request,
    missing,
    op_evidence,
    response_to,
    result_of,
    same_id,
)
from harness.suite.features import cancel_and_race

__all__ = ["ON_EVERY_TRANSPORT", "SCENARIOS"]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_SENTINEL = re.compile(r"^=\?base64\?([A-Za-z0-9+/=]*)\?=$")

# Errors only a modern (2026-07-28 and later) server gives: HeaderMismatch,
# MissingRequiredClientCapability, UnsupportedProtocolVersion (basic/index#error-codes).
_MODERN_ERRORS = (-32020, -32021, -32022)
_UNSUPPORTED_VERSION = -32022
_MISSING_CAPABILITY = -32021
_METHOD_NOT_FOUND = -32601
# resources/read names its resource by uri; the others by name (HM-3).
_NAME_SOURCES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_RESULT_TYPES = ("complete", "input_required")

# The pages the clauses below are on (2026-07-28 unless named otherwise).
_INDEX = "basic/index"
_HTTP = "basic/transports/streamable-http"
_STDIO = "basic/transports/stdio"
_CANCELLATION = "basic/patterns/cancellation"
_MRTR = "basic/patterns/mrtr"


# -- small readers -------------------------------------------------------------------------------


def _params(message: Mapping[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _meta(message: Mapping[str, Any]) -> dict[str, Any]:
    meta = _params(message).get("_meta")
    return meta if isinstance(meta, dict) else {}


def _is_response(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and "method" not in message
        and "id" in message
        and ("result" in message or "error" in message)
    )


def _server_messages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["kind"] == "message" and e["direction"] == "server"]


def _trigger(
    description: str, find: Callable[[ScenarioRun], Sequence[Mapping[str, Any]]]
) -> Trigger:
    """A trigger whose finder returns any sequence of records."""
    return trigger(description, lambda run: list(find(run)))


def _answers(
    run: ScenarioRun, method: str | None, rule: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """The server's answers to the client's requests (of `method`) that meet `rule`."""
    return [answer for _, answer in exchanges(run, method) if rule(answer)]


def _request_answered_by(run: ScenarioRun, answer: Mapping[str, Any]) -> dict[str, Any] | None:
    """The client request a server answer entry responds to (the latest before it)."""
    earlier = [
        r
        for r in run.requests()
        if r["seq"] < answer["seq"] and same_id(r["message"].get("id"), answer["message"].get("id"))
    ]
    return earlier[-1] if earlier else None


def _same_requests_after(
    run: ScenarioRun, request: Mapping[str, Any], moment: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The client's requests of the same method and name (a tool's) as `request`, sent
    after the `moment` entry: its re-issues, its retries."""
    message = request["message"]
    return [
        r
        for r in run.requests(message["method"])
        if r["seq"] > moment["seq"]
        and same_json(_params(r["message"]).get("name"), _params(message).get("name"))
    ]


def _tool_of(run: ScenarioRun, answer: Mapping[str, Any]) -> Any:
    request = _request_answered_by(run, answer)
    return _params(request["message"]).get("name") if request is not None else None


def _decode(value: str) -> str:
    """A header value, with the base64 sentinel (=?base64?...?=) decoded."""
    found = _SENTINEL.match(value)
    if found is None:
        return value
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return value


def _plain_ascii(value: str) -> bool:
    return value.isascii() and value.isprintable() and value == value.strip()


def _reported_or(
    operation: Operation,
    evidence: list[Mapping[str, Any]],
    *,
    reported: Callable[[Operation], Verdict],
    swallowed: str,
    run: ScenarioRun,
) -> Verdict:
    """For a check whose rule is "the client reports this to its caller": the client's
    own report decides (`reported`); a value surfaced as if all were well is the
    violation; a hang or a crash is no report, and leaves the rule unjudged."""
    if operation.reported:
        return reported(operation)
    if operation.ok:
        return violated(f"{swallowed}: {operation.value}", evidence)
    kind = "hung" if operation.hung else "crashed"
    return missing(run, f"the client's report (the {operation.op} {kind})")


# -- per-request metadata and the standard headers ------------------------------------------------


@check(
    "stateless.meta-on-every-request",
    requirements=["LC-M1"],
    clauses=[clause(_INDEX, "fields marked as required MUST be included on every request")],
    revisions=STATELESS,
    spec="basic/index#meta",
    description="Every request carries _meta protocolVersion and clientCapabilities",
    trigger=_trigger("the client sent a request", lambda run: run.requests()),
)
def meta_on_every_request(run: ScenarioRun) -> Verdict:
    requests = run.requests()
    for entry in requests:
        lacking = [k for k in (META_VERSION, META_CAPABILITIES) if k not in _meta(entry["message"])]
        if lacking:
            return violated(
                f"{entry['message']['method']} lacks _meta {', '.join(lacking)}", [entry]
            )
    return passed(
        f"all {len(requests)} requests carry their protocol version and capabilities", requests[:2]
    )


def _message_posts(run: ScenarioRun) -> list[dict[str, Any]]:
    """The client's HTTP POSTs that carry a JSON-RPC message (refused ones included)."""
    return [p for p in http_requests(run, "POST") if body_messages(p)]


def _header_breach(
    post: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]]
) -> Verdict | None:
    """What is wrong with a POST's standard headers (HM-2, HM-3), as a violation of its
    branch, or None. A notification's POST is judged as a request's, but its branch is
    the page's Note: no header requirement for it is defined at 2026-07-28."""
    message = body_messages(post)[0]
    version = header(post, "mcp-protocol-version")
    if version is None:  # every POST, whatever it carries
        if not is_request(message):
            return violated("MCP-Protocol-Version is missing", evidence, clause="notification")
        return violated("MCP-Protocol-Version is missing", evidence, clause="version-missing")
    declared = _meta(message).get(META_VERSION)
    if declared is not None and not same_json(version, declared):
        reason = f"MCP-Protocol-Version is {version!r}, _meta says {declared!r}"
        if not is_request(message):
            return violated(reason, evidence, clause="notification")
        return violated(reason, evidence, clause="version-differs")
    if not is_request(message):  # Mcp-Method and Mcp-Name are defined for requests only
        return None
    method = message["method"]
    sent_method = header(post, "mcp-method")
    if sent_method is None:
        return violated(f"Mcp-Method is None for {method}", evidence, clause="header-missing")
    if not same_json(sent_method, method):
        return violated(f"Mcp-Method is {sent_method!r} for {method}", evidence)
    source = _NAME_SOURCES.get(method)
    if source is None:
        return None
    name = _params(message).get(source)
    sent_name = header(post, "mcp-name")
    if sent_name is None:
        return violated(
            f"Mcp-Name is None for {method} of {name!r}", evidence, clause="header-missing"
        )
    if not same_json(_decode(sent_name), name):
        return violated(f"Mcp-Name is {sent_name!r} for {method} of {name!r}", evidence)
    return None


@check(
    "stateless.standard-headers",
    requirements=["HM-2", "HM-3"],
    clauses=[
        # A header whose value is not its body field's is no mirror of it (the section
        # mirrors "selected JSON-RPC body fields into HTTP headers"); the mock's refusal.
        clause(_HTTP, "The client MUST include the request metadata headers"),
        clause(_HTTP, "MUST include an MCP-Protocol-Version header", branch="version-missing"),
        clause(
            _HTTP,
            "The header value MUST match the io.modelcontextprotocol/protocolVersion field",
            branch="version-differs",
        ),
        clause(_HTTP, "These headers are REQUIRED for compliance", branch="header-missing"),
        silent(
            "the page's Note says header requirements for notification POSTs are not "
            "defined by this revision",
            branch="notification",
        ),
    ],
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http#standard-headers",
    description="Every POST carries MCP-Protocol-Version (equal to _meta); every request "
    "Mcp-Method, and Mcp-Name where required",
    trigger=_trigger("the client sent an HTTP POST with a JSON-RPC message", _message_posts),
)
def standard_headers(run: ScenarioRun) -> Verdict:
    posts = _message_posts(run)
    for post in posts:
        breach = _header_breach(post, [post, *_refusals_of(run, post)])
        if breach is not None:
            return breach
    # The mock refuses a mismatch with 400 (a root cause of the run): its reading stands
    # as evidence even where the rule above saw nothing wrong. An Mcp-Param-* mismatch is
    # stateless.x-mcp-header's to judge (HM-4), not a standard header's.
    for post in posts:
        refusals = [
            r
            for r in _refusals_of(run, post)
            if r.get("rule") == "header-mismatch"
            and not str(r.get("header", "")).lower().startswith("mcp-param-")
        ]
        if refusals:
            reason = f"the server refused the POST: {refusals[0].get('reason')}"
            if not is_request(body_messages(post)[0]):
                return violated(reason, [post, *refusals], clause="notification")
            return violated(reason, [post, *refusals])
    return passed(f"all {len(posts)} POSTs carry the standard headers", posts[:2])


def _refusals_of(run: ScenarioRun, post: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The mock's unscripted refusals of an HTTP request (a transport rule it broke)."""
    return [
        r
        for r in run.of_kind("refusal")
        if r.get("request") == post.get("request") and not r.get("scripted")
    ]


# -- version negotiation -------------------------------------------------------------------------


def _unsupported_version_answers(run: ScenarioRun) -> list[dict[str, Any]]:
    return _answers(run, None, lambda a: same_json(error_code(a), _UNSUPPORTED_VERSION))


@check(
    "stateless.retry-after-unsupported-version",
    requirements=["LC-M2"],
    clauses=[
        clause("basic/versioning", "The client SHOULD select a mutually supported version"),
        silent(
            "basic/index forbids only an id of a request not yet answered, and the refused "
            "request was answered (-32022); only an MRTR retry must take a new id",
            branch="same-id",
        ),
    ],
    revisions=STATELESS,
    spec="basic/versioning",
    description="After -32022 the client retries with a version from data.supported and a new id, or reports the error",
    trigger=_trigger(
        "the server refused a request with UnsupportedProtocolVersion (-32022)",
        _unsupported_version_answers,
    ),
)
def retry_after_32022(run: ScenarioRun) -> Verdict:
    refusal = _unsupported_version_answers(run)[0]
    refused = _request_answered_by(run, refusal)
    operation = run.operation("list_tools")
    if refused is None or operation is None:
        return missing(run, "the harness's tools/list that was refused")
    method = refused["message"]["method"]
    retries = [r for r in run.requests(method) if r["seq"] > refusal["seq"]]
    evidence = [refused, refusal, *retries[:1], *op_evidence(operation)]
    if retries:
        retry = retries[0]["message"]
        version = _meta(retry).get(META_VERSION)
        supported = (refusal["message"]["error"].get("data") or {}).get("supported") or []
        if same_id(retry.get("id"), refused["message"].get("id")):
            return violated("the retry reused the refused request's id", evidence, clause="same-id")
        if not any(same_json(version, s) for s in supported):
            return violated(f"the retry asked for {version!r}, not one of {supported!r}", evidence)
        if not operation.ok:
            return violated(
                f"the retry was answered, but the caller saw {operation.error}", evidence
            )
        return passed("the client retried with a supported version and a new id", evidence)
    if operation.reported and same_json((operation.error or {}).get("code"), _UNSUPPORTED_VERSION):
        return passed("the client reported the -32022 error to its caller", evidence)
    if operation.hung:
        return violated("the client neither retried nor reported -32022: it hung", evidence)
    return violated(
        f"the client neither retried nor reported -32022: {operation.error or operation.value}",
        evidence,
    )


# -- no server-to-client requests, no removed methods ----------------------------------------------


def _server_requests(run: ScenarioRun) -> list[dict[str, Any]]:
    """What the mock sent that looks like a request (a legacy server's), for a client that
    must not answer it: 2026-07-28 has no server-to-client requests."""
    return [e for e in _server_messages(run.entries) if is_request(e["message"])]


@check(
    "stateless.no-responses",
    requirements=["ST-5", "HM-1"],
    clauses=[
        clause(_STDIO, "The client MUST NOT write JSON-RPC responses"),
        clause(_HTTP, "The client MUST NOT send JSON-RPC responses", branch="http"),
    ],
    revisions=STATELESS,
    spec="basic/transports/stdio",
    description="A 2026-07-28 client never writes a JSON-RPC response, not even to a server request",
    trigger=_trigger("the server sent a message shaped like a request", _server_requests),
)
def no_responses(run: ScenarioRun) -> Verdict:
    stimulus = _server_requests(run)[0]
    answers = [m for m in run.client_messages() if _is_response(m["message"])]
    answers += [p for p in http_requests(run, "POST") if any(map(_is_response, body_messages(p)))]
    if answers:
        reason = "the client sent a JSON-RPC response, which 2026-07-28 does not have"
        if run.transport == "http":
            return violated(reason, [stimulus, *answers[:3]], clause="http")
        return violated(reason, [stimulus, *answers[:3]])
    later = [m for m in run.client_messages() if m["seq"] > stimulus["seq"]]
    return passed(
        f"the client did not answer the server's {stimulus['message'].get('method')}: "
        f"none of its {len(later)} later messages is a response",
        [stimulus, *later[:2]],
    )


_REMOVED = frozenset({"ping", "logging/setLevel", "notifications/roots/list_changed"})


@check(
    "stateless.no-removed-methods",
    requirements=["LC-M5"],
    clauses=[
        silent(
            "their removal is stated only in the changelog (Major changes, item 5); no "
            "normative page forbids a client to send them, the pages just no longer define them"
        )
    ],
    revisions=STATELESS,
    spec="changelog",
    description="A 2026-07-28 client sends no ping, logging/setLevel or notifications/roots/list_changed",
    trigger=client_sent(),
)
def no_removed_methods(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    removed = [m for m in messages if m["message"].get("method") in _REMOVED]
    if removed:
        return violated(
            f"the client sent {removed[0]['message']['method']}, which 2026-07-28 removed",
            removed[:3],
        )
    return passed(f"none of {len(messages)} client messages uses a removed method", messages[:2])


# -- HTTP without sessions, cancellation, broken streams --------------------------------------------


@check(
    "stateless.http-post-only",
    requirements=["HM-1", "HM-5"],
    clauses=[
        clause(_HTTP, "The client MUST use HTTP POST to send JSON-RPC messages"),
        silent(
            "the POST rule binds how JSON-RPC messages are sent; a GET or DELETE carrying "
            "none is no longer part of the revision, and only servers are told (SHOULD) to "
            "answer it with 405",
            branch="no-message",
        ),
        silent(
            "the page only says sessions and resumption are not part of this revision, and "
            "that servers SHOULD ignore these headers; no sentence forbids a client to send them",
            branch="session-headers",
        ),
    ],
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http",
    description="2026-07-28 HTTP: every request is a POST, with no Mcp-Session-Id and no Last-Event-ID",
    trigger=_trigger("the client made an HTTP request", lambda run: http_requests(run)),
)
def http_post_only(run: ScenarioRun) -> Verdict:
    requests = http_requests(run)
    for request in requests:
        if request.get("method") != "POST":
            reason = f"the client sent a {request.get('method')} (2026-07-28 has no GET stream or DELETE)"
            if body_messages(request):
                return violated(reason, [request])
            return violated(reason, [request], clause="no-message")
        for name in ("mcp-session-id", "last-event-id"):
            if header(request, name) is not None:
                return violated(
                    f"a POST carries {name} (2026-07-28 has no sessions or resumption)",
                    [request],
                    clause="session-headers",
                )
    return passed(
        f"all {len(requests)} requests are POSTs without session or resumption headers",
        requests[:2],
    )


@check(
    "stateless.stdio-cancel-notification",
    requirements=["ST-5", "CANCEL"],
    clauses=[
        # How to cancel on stdio: a notification naming the request's id.
        clause(_STDIO, "the client MUST send a notifications/cancelled"),
        clause(_CANCELLATION, "The client MUST send a notifications/cancelled"),
        # Whether to cancel an abandoned request at all.
        clause(_CANCELLATION, "A client SHOULD send a cancellation notification", branch="never"),
    ],
    revisions=STATELESS,
    transports=["stdio"],
    spec="basic/transports/stdio",
    description="2026 stdio: a request the caller abandons is cancelled with notifications/cancelled naming its id",
    trigger=client_sent("tools/call", name="slow"),
)
def stdio_cancel_notification(run: ScenarioRun) -> Verdict:
    # The drive abandons the call of slow once it is on the wire; a notifications/cancelled
    # after it must name it. No cancellation at all is the SHOULD's branch; one that names
    # another id (it is in the evidence) the stdio MUST's.
    def breach(reason: str, evidence: Sequence[Mapping[str, Any]]) -> Verdict:
        if any(_is_cancellation(e) for e in evidence):
            return violated(reason, evidence)
        return violated(reason, evidence, clause="never")

    return cancelled_by_notification(run, "slow", breach)


def _is_cancellation(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    return isinstance(message, dict) and message.get("method") == "notifications/cancelled"


def _cancelled_posts(run: ScenarioRun) -> list[dict[str, Any]]:
    """The POSTs of the calls of hang (timed out) and slow (abandoned by the caller)."""
    return [p for p in (_post_of_call(run, tool) for tool in ("hang", "slow")) if p is not None]


@check(
    "stateless.http-cancel-closes-stream",
    requirements=["HM-5", "LC-9", "CANCEL"],
    clauses=[
        # On HTTP the cancellation is the closing of the stream (Transport-Specific
        # Cancellation): the abandoned call of slow...
        clause(_CANCELLATION, "A client SHOULD send a cancellation notification"),
        # ...and the call of hang, which timed out.
        clause(_CANCELLATION, "the sender SHOULD cancel the request", branch="timed-out"),
    ],
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http",
    description="2026 HTTP: a request that times out, and one the caller abandons, are "
    "cancelled by closing their response streams before the server answers",
    trigger=_trigger(
        "the client POSTed the calls of hang (to time out) and slow (to abandon)",
        _cancelled_posts,
    ),
)
def http_cancel_closes_stream(run: ScenarioRun) -> Verdict:
    last = _post_of_call(run, "slow")
    if last is None:
        return missing(run, "the call of slow over HTTP")
    # Closed by the client, and then, not at the end of the run: before the first request
    # after the call of slow (the drive waits for that call's stream to end before its next
    # call). Not before the request that follows the call of hang: the close and the POST
    # of slow come on two connections, so a busy mock may see them in either order.
    following = [r for r in http_requests(run) if r["seq"] > last["seq"]]
    if not following:
        return missing(run, "a request after the call of slow")
    evidence: list[dict[str, Any]] = []
    for tool, what in (("hang", "hang timed out"), ("slow", "slow was abandoned")):
        post = _post_of_call(run, tool)
        if post is None:
            return missing(run, f"the call of {tool} over HTTP")
        ends = [e for e in run.of_kind("http_end") if e.get("request") == post.get("request")]
        evidence += [post, *ends[:1]]
        if not any(
            e.get("how") == "client_closed" and e["seq"] < following[0]["seq"] for e in ends
        ):
            reason = f"the call of {what}, but its stream was not closed"
            if tool == "hang":
                return violated(reason, evidence, clause="timed-out")
            return violated(reason, evidence)
    return passed("both streams were closed by the client: the requests were cancelled", evidence)


def _post_of_call(run: ScenarioRun, tool: str) -> dict[str, Any] | None:
    """The HTTP request that carried the first tools/call of `tool`."""
    for entry in http_requests(run, "POST"):
        for message in body_messages(entry):
            if message.get("method") == "tools/call" and same_json(
                _params(message).get("name"), tool
            ):
                return entry
    return None


def _server_request_sent(entries: list[dict[str, Any]]) -> bool:
    return any(is_request(e["message"]) for e in _server_messages(entries))


def _sent_call_of(tool: str) -> Callable[[list[dict[str, Any]]], bool]:
    def seen(entries: list[dict[str, Any]]) -> bool:
        return any(
            e["kind"] == "message"
            and e["direction"] == "client"
            and e["message"].get("method") == "tools/call"
            and same_json(_params(e["message"]).get("name"), tool)
            for e in entries
        )

    return seen


def _sent_cancellation(entries: list[dict[str, Any]]) -> bool:
    return any(
        e["kind"] == "message"
        and e["direction"] == "client"
        and e["message"].get("method") == "notifications/cancelled"
        for e in entries
    )


async def answer_nothing_then_cancel(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.until("the server's roots/list request", _server_request_sent)
    await session.call("call_tool", "echo", {"word": "first"})
    async with anyio.create_task_group() as group:
        group.start_soon(session.call, "call_tool", "slow", {})
        await session.until("the tools/call of slow", _sent_call_of("slow"))
        group.cancel_scope.cancel()  # the caller gives up: the client must cancel
    await session.until("notifications/cancelled", _sent_cancellation)


def _broken_streams(run: ScenarioRun) -> list[dict[str, Any]]:
    """The ends of HTTP response streams that broke before the request was answered."""
    broken = []
    for end in run.of_kind("http_end"):
        if end.get("how") not in ("dropped", "closed"):
            continue
        carried = [m for m in run.requests() if m.get("channel") == f"http:{end.get('request')}"]
        if carried and not any(
            (answer := response_to(run, c)) is not None and answer["seq"] < end["seq"]
            for c in carried
        ):
            broken.append(end)
    return broken


@check(
    "stateless.reissue-after-broken-stream",
    requirements=["HM-5", "RPC-2"],
    clauses=[
        silent(
            "'clients MUST re-issue it as a new request' is only in the changelog (Major "
            "changes, item 9); streamable-http says of a broken stream only that closing it "
            "cancels"
        ),
        # The broken request never received a response: its id is still taken.
        clause(_INDEX, "The request ID MUST NOT match the ID", branch="same-id"),
    ],
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http",
    description="2026 HTTP: a request whose stream broke before the response is re-issued with a new id",
    trigger=_trigger("a response stream broke before the server answered", _broken_streams),
)
def reissue_after_broken_stream(run: ScenarioRun) -> Verdict:
    broken = _broken_streams(run)[0]
    first = next(m for m in run.requests() if m.get("channel") == f"http:{broken.get('request')}")
    name = _params(first["message"]).get("name")
    again = _same_requests_after(run, first, broken)
    call = first_operation(run, "call_tool", name)
    evidence = [first, broken, *again[:1], *op_evidence(call)]
    if not again:
        return violated("the request was not re-issued after its stream broke", evidence)
    if same_id(again[0]["message"].get("id"), first["message"].get("id")):
        return violated("the request was re-issued under the same id", evidence, clause="same-id")
    answer = response_to(run, again[0])
    if call is None or answer is None:
        return missing(run, "the answer to the re-issued request")
    if not call.ok or not same_json(
        (call.value or {}).get("content"), result_of(answer).get("content")
    ):
        shown = "hung" if call.hung else call.error or call.value
        return violated(
            f"the re-issued call's answer was not surfaced: {shown}", [*evidence, answer]
        )
    return passed(
        "the request was re-issued with a new id and its answer surfaced", [*evidence, answer]
    )


async def list_tools_once(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")


async def list_then_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})


# -- era detection: dual-era clients ---------------------------------------------------------------


@check(
    "stateless.era-probe",
    requirements=["LC-M3"],
    clauses=[
        silent(
            "2025-11-25 has no server/discover and no probe (its lifecycle even says a client "
            "SHOULD NOT send requests before initialize is answered); the probe's SHOULD is "
            "on the 2026-07-28 stdio page"
        )
    ],
    revisions=("2025-11-25",),
    transports=["stdio"],
    spec="basic/transports/stdio#backward-compatibility",
    description="A dual-era client left to choose its version probes a stdio server with server/discover first",
    trigger=_trigger(
        "the client, left to choose its version, sent its first request",
        lambda run: run.requests()[:1],
    ),
    # Judged on the wire during connect: a connect that fails after the probe is not a
    # precondition of this check.
    independent_of=("client.connect",),
)
def era_probe(run: ScenarioRun) -> Verdict:
    if run.supports and "2026-07-28" not in run.supports:
        return skip("the client does not declare 2026-07-28: it is no dual-era client")
    first = run.requests()[0]
    if first["message"].get("method") != "server/discover":
        return violated(
            f"the first request was {first['message'].get('method')}, not a server/discover probe",
            [first],
        )
    return passed("the client probed with server/discover first", [first])


def _probe_refusals(run: ScenarioRun) -> list[tuple[dict[str, Any], dict[str, Any], bool]]:
    """The client's server/discover probes the server refused: (probe, refusal, modern),
    the refusal being the JSON-RPC error, or an HTTP 4xx without one; `modern` when the
    error is one only a modern server gives (the server speaks 2026-07-28 or later)."""
    refusals = []
    for probe in run.requests("server/discover"):
        answer = response_to(run, probe)
        if answer is not None and "error" in answer["message"]:
            modern = any(same_json(error_code(answer), c) for c in _MODERN_ERRORS)
            refusals.append((probe, answer, modern))
            continue
        response = http_response_for(run, probe)
        if answer is None and response is not None and 400 <= int(response.get("status", 0)) < 500:
            refusals.append((probe, response, False))
    return refusals


def _legacy_refusals(run: ScenarioRun) -> list[dict[str, Any]]:
    return [refusal for _, refusal, modern in _probe_refusals(run) if not modern]


def _modern_refusals(run: ScenarioRun) -> list[dict[str, Any]]:
    return [refusal for _, refusal, modern in _probe_refusals(run) if modern]


@check(
    "stateless.era-fallback",
    requirements=["LC-M4", "HM-7"],
    clauses=[
        # The legacy server's revision: a client speaking it opens with initialize.
        clause("basic/lifecycle", "The client MUST initiate this phase by sending"),
    ],
    revisions=("2025-11-25",),
    transports=["stdio", "http"],
    spec="basic/versioning#backward-compatibility-with-initialization-based-versions",
    description="A server/discover probe refused other than with a modern error (-32603, an empty HTTP 400) leads to initialize",
    trigger=_trigger(
        "a handshake-era server refused the client's server/discover probe", _legacy_refusals
    ),
    # A client that does not fall back fails to connect: that failure is this violation.
    independent_of=("client.connect",),
)
def era_fallback(run: ScenarioRun) -> Verdict:
    probe, refusal, _ = next(r for r in _probe_refusals(run) if not r[2])
    inits = [e for e in run.requests("initialize") if e["seq"] > refusal["seq"]]
    if not inits:
        return violated(
            "after its probe was refused by a legacy server the client never sent initialize",
            [probe, refusal],
        )
    return passed("the refused probe led to initialize", [probe, refusal, inits[0]])


@check(
    "stateless.era-stays-modern",
    requirements=["LC-M4", "HM-7"],
    clauses=[
        silent(
            "on stdio 'Do not fall back to initialize' (and basic/versioning's 'rather than "
            "falling back') carries no BCP-14 keyword; the probe's SHOULD is about probing"
        ),
        clause(_HTTP, "the client SHOULD inspect the response body", branch="http"),
    ],
    revisions=STATELESS,
    transports=["stdio", "http"],
    spec="basic/versioning#backward-compatibility-with-initialization-based-versions",
    description="A server/discover probe answered with a modern error (-32022) never leads to initialize",
    trigger=_trigger(
        "the client's server/discover probe was answered with a modern error", _modern_refusals
    ),
)
def era_stays_modern(run: ScenarioRun) -> Verdict:
    # Probing is optional for a modern-only client (basic/versioning): without a probe
    # the trigger is absent and the item is N/A, never a FAIL.
    probe, refusal, _ = next(r for r in _probe_refusals(run) if r[2])
    inits = [e for e in run.requests("initialize") if e["seq"] > refusal["seq"]]
    if inits:
        reason = "the client fell back to initialize after a modern error"
        if run.transport == "http":
            return violated(reason, [probe, refusal, inits[0]], clause="http")
        return violated(reason, [probe, refusal, inits[0]])
    return passed(
        "after the modern error the client did not fall back to initialize", [probe, refusal]
    )


# -- results: multi round-trip, resultType -----------------------------------------------------------


def _input_required(run: ScenarioRun) -> list[dict[str, Any]]:
    return _answers(run, "tools/call", lambda a: result_of(a).get("resultType") == "input_required")


@check(
    "stateless.mrtr-retry",
    requirements=["MRTR", "RPC-2"],
    clauses=[
        clause(_MRTR, "The JSON-RPC id MUST be different between the initial request"),
        silent(
            "the client's duties hold only for a retry ('before retrying'); none obliges it "
            "to retry, and servers MUST NOT assume it will",
            branch="no-retry",
        ),
        clause(_MRTR, "the client MUST echo back the exact value", branch="state-changed"),
        clause(_MRTR, "the client MUST NOT include one in the retry", branch="state-added"),
        clause(_MRTR, "the client MUST construct the requested inputs", branch="inputs-missing"),
        silent(
            "no sentence forbids inputResponses beyond the inputRequests (servers SHOULD "
            "ignore them), and without inputRequests the client MAY retry at once",
            branch="inputs-extra",
        ),
        silent(
            "mrtr.mdx says nothing of handing the retry's result to the caller",
            branch="not-surfaced",
        ),
    ],
    revisions=STATELESS,
    spec="basic/patterns/mrtr",
    description="After input_required the retry has a new id, requestState echoed exactly, and an answer per input request key",
    trigger=_trigger("the server answered a tools/call with input_required", _input_required),
)
def mrtr_retry(run: ScenarioRun) -> Verdict:
    answer = _input_required(run)[0]
    first = _request_answered_by(run, answer)
    assert first is not None  # an answer is found from its request
    tool = _params(first["message"]).get("name")
    operation = first_operation(run, "call_tool", tool)
    result = result_of(answer)
    retries = _same_requests_after(run, first, answer)
    evidence = [first, answer, *retries[:1], *op_evidence(operation)]
    if not retries:
        return violated(
            "the client did not retry the request after input_required", evidence, clause="no-retry"
        )
    retry = retries[0]["message"]
    params = _params(retry)
    if same_id(retry.get("id"), first["message"].get("id")):
        return violated("the retry reused the id of the first request", evidence)
    if not same_json(params.get("requestState"), result.get("requestState")):
        reason = (
            f"requestState came back as {params.get('requestState')!r}, "
            f"not {result.get('requestState')!r}"
        )
        if "requestState" not in result:
            return violated(reason, evidence, clause="state-added")
        return violated(reason, evidence, clause="state-changed")
    responses = params.get("inputResponses")
    wanted = set(result.get("inputRequests") or {})
    if not isinstance(responses, dict) or set(responses) != wanted:
        keys = sorted(responses) if isinstance(responses, dict) else responses
        reason = f"inputResponses has keys {keys!r}, not {sorted(wanted)!r}"
        if wanted - set(responses if isinstance(responses, dict) else ()):
            return violated(reason, evidence, clause="inputs-missing")
        return violated(reason, evidence, clause="inputs-extra")
    final = response_to(run, retries[0])
    if operation is None or final is None:
        return missing(run, "the answer to the retry")
    if not operation.ok or not same_json(
        (operation.value or {}).get("content"), result_of(final).get("content")
    ):
        shown = "it hung" if operation.hung else operation.error or operation.value
        return violated(
            f"the final result was not surfaced: {shown}", [*evidence, final], clause="not-surfaced"
        )
    return passed(
        "the retry echoed requestState, answered every input, under a new id", [*evidence, final]
    )


def _unknown_result_types(run: ScenarioRun) -> list[dict[str, Any]]:
    return _answers(
        run,
        "tools/call",
        lambda a: "resultType" in result_of(a) and result_of(a)["resultType"] not in _RESULT_TYPES,
    )


@check(
    "stateless.unknown-result-type",
    requirements=["RPC-9"],
    clauses=[clause(_INDEX, "any value unrecognized by the client MUST be considered invalid")],
    revisions=STATELESS,
    spec="basic/index",
    description="A result whose resultType the client does not know is invalid: surfaced as an error, not as a result",
    trigger=_trigger(
        "the server answered a tools/call with a resultType no revision defines",
        _unknown_result_types,
    ),
)
def unknown_result_type(run: ScenarioRun) -> Verdict:
    answer = _unknown_result_types(run)[0]
    operation = first_operation(run, "call_tool", _tool_of(run, answer))
    if operation is None:
        return missing(run, "the harness's call that got the unknown resultType")
    return _reported_or(
        operation,
        [answer, *op_evidence(operation)],
        reported=lambda op: passed(
            f"the client reported the unknown resultType as an error ({op.error})",
            [answer, *op_evidence(op)],
        ),
        swallowed="the client surfaced the result as valid",
        run=run,
    )


def _untyped_results(run: ScenarioRun) -> list[dict[str, Any]]:
    return _answers(
        run, "tools/call", lambda a: "result" in a["message"] and "resultType" not in result_of(a)
    )


@check(
    "stateless.absent-result-type-complete",
    requirements=["RPC-9"],
    clauses=[clause(_INDEX, "clients MUST treat an absent resultType as")],
    revisions=STATELESS,
    spec="basic/index",
    description="A result without resultType (a legacy server's) is read as complete and surfaced",
    trigger=_trigger("the server answered a tools/call without resultType", _untyped_results),
)
def absent_result_type_complete(run: ScenarioRun) -> Verdict:
    answer = _untyped_results(run)[0]
    operation = first_operation(run, "call_tool", _tool_of(run, answer))
    if operation is None:
        return missing(run, "the harness's call that got a result without resultType")
    evidence = [answer, *op_evidence(operation)]
    if operation.reported:
        return violated(
            f"the client rejected a result without resultType: {operation.error}", evidence
        )
    if not operation.ok:
        return missing(run, "the client's reading of the result (it hung or crashed)")
    if not same_json((operation.value or {}).get("content"), result_of(answer).get("content")):
        return violated(f"the client surfaced {operation.value}, not the result", evidence)
    return passed("a result without resultType was surfaced as a complete result", evidence)


async def mrtr_then_odd(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "ask", {})
    await session.call("call_tool", "odd", {})
    await session.call("call_tool", "legacy", {})


# -- caching ---------------------------------------------------------------------------------------


def _cacheable_reads(run: ScenarioRun) -> list[dict[str, Any]]:
    def cacheable(answer: dict[str, Any]) -> bool:
        ttl = result_of(answer).get("ttlMs")
        return isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0

    return _answers(run, "resources/read", cacheable)


def _uri_read(run: ScenarioRun, answer: Mapping[str, Any]) -> Any:
    request = _request_answered_by(run, answer)
    return _params(request["message"]).get("uri") if request is not None else None


@check(
    "stateless.cache-keyed-by-params",
    requirements=["TL-10"],
    clauses=[clause("server/utilities/caching", "Clients MUST NOT serve a cached response")],
    revisions=STATELESS,
    spec="server/utilities/caching",
    description="A cacheable answer (ttlMs, public) is never reused for a request with other params",
    feature="resources",
    trigger=_trigger("the server answered a resources/read as cacheable", _cacheable_reads),
)
def cache_keyed_by_params(run: ScenarioRun) -> Verdict:
    cached = _cacheable_reads(run)[0]
    uri = _uri_read(run, cached)
    other = next(
        (o for o in run.operations if o.op == "read_resource" and not same_json(o.first_arg, uri)),
        None,
    )
    if other is None:
        return missing(run, f"a read of another resource than {uri}")
    other_uri = other.first_arg
    if not other.ok:
        return missing(run, f"the client's answer to the read of {other_uri}")
    asked = [
        a
        for a in _answers(run, "resources/read", lambda a: True)
        if same_json(_uri_read(run, a), other_uri)
    ]
    evidence = [cached, *asked[:1], *op_evidence(other)]
    if not asked:
        return violated(
            f"{other_uri} was never read from the server; the client surfaced {other.value}",
            evidence,
        )
    if not same_json((other.value or {}).get("contents"), result_of(asked[0]).get("contents")):
        return violated(f"reading {other_uri} surfaced {other.value}, not its own answer", evidence)
    return passed(f"the read of {other_uri} got its own answer, not the cached {uri}", evidence)


async def read_two_resources(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("read_resource", "mem://a")
    await session.call("read_resource", "mem://b")


# -- x-mcp-header ----------------------------------------------------------------------------------


def _header_declarations(tool: Mapping[str, Any]) -> tuple[dict[str, str], bool]:
    """A listed tool's x-mcp-header declarations (property -> header name), and whether
    one is invalid: declared anywhere but on a top-level property of its inputSchema."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    valid = {
        name: str(prop["x-mcp-header"])
        for name, prop in (properties or {}).items()
        if isinstance(prop, dict) and "x-mcp-header" in prop
    }

    def count(value: Any) -> int:
        if isinstance(value, dict):
            return ("x-mcp-header" in value) + sum(count(v) for v in value.values())
        if isinstance(value, list):
            return sum(count(v) for v in value)
        return 0

    return valid, count(schema) > len(valid)


def _listed_tools(answer: Mapping[str, Any]) -> list[dict[str, Any]]:
    tools = result_of(answer).get("tools")
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


def _header_tool_listings(run: ScenarioRun) -> list[dict[str, Any]]:
    return _answers(
        run,
        "tools/list",
        lambda a: any("x-mcp-header" in str(t.get("inputSchema")) for t in _listed_tools(a)),
    )


@check(
    "stateless.x-mcp-header",
    requirements=["HM-4"],
    clauses=[
        clause(_HTTP, "conforming clients MUST mirror the designated parameter values"),
        clause(_HTTP, "the client MUST exclude the invalid tool", branch="invalid-listed"),
        clause(_HTTP, "clients MUST use Base64 encoding of the UTF-8", branch="unencoded"),
    ],
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http#custom-headers-from-tool-parameters",
    description="x-mcp-header arguments are mirrored as Mcp-Param-* (base64 when not plain ASCII); a tool with an invalid declaration is left out of tools/list",
    trigger=_trigger("the server listed tools that declare x-mcp-header", _header_tool_listings),
)
def x_mcp_header(run: ScenarioRun) -> Verdict:
    listing_answer = _header_tool_listings(run)[0]
    listing = run.operation("list_tools")
    if listing is None or not listing.ok:
        return missing(run, "the tools the client listed")
    tools = {t.get("name"): _header_declarations(t) for t in _listed_tools(listing_answer)}
    surfaced = [t.get("name") for t in (listing.value or {}).get("tools", [])]
    evidence = [listing_answer, *op_evidence(listing)]
    invalid = [name for name, (_, bad) in tools.items() if bad and name in surfaced]
    if invalid:
        return violated(
            f"the tool {invalid[0]!r} has an invalid x-mcp-header, yet was listed",
            evidence,
            clause="invalid-listed",
        )
    mirrored = []
    for post in http_requests(run, "POST"):
        for message in body_messages(post):
            name = _params(message).get("name")
            declared = (
                tools.get(name, ({}, True))[0] if message.get("method") == "tools/call" else {}
            )
            arguments = _params(message).get("arguments") or {}
            for prop, header_name in declared.items():
                value = arguments.get(prop) if isinstance(arguments, dict) else None
                if not isinstance(value, str):
                    continue  # only string arguments are judged here
                sent = header(post, f"mcp-param-{header_name}")
                if sent is None or not same_json(_decode(sent), value):
                    return violated(
                        f"Mcp-Param-{header_name} is {sent!r}, the argument {value!r}",
                        [*evidence, post],
                    )
                if not _plain_ascii(value) and not _SENTINEL.match(sent):
                    return violated(
                        f"the value {value!r} went out unencoded: {sent!r}",
                        [*evidence, post],
                        clause="unencoded",
                    )
                mirrored.append(post)
    if not mirrored:
        return missing(run, "a call of a tool with an x-mcp-header argument")
    return passed(
        "the invalid tool was left out and the arguments were mirrored as Mcp-Param-*",
        [*evidence, *mirrored[:1]],
    )


async def list_then_route(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "route", {"region": _REGION, "query": "select 1"})


_REGION = "eu-w\u00ebst 1"


# -- errors of the stateless revision --------------------------------------------------------------


def _method_not_found_404s(run: ScenarioRun) -> list[dict[str, Any]]:
    return [
        r
        for r in run.of_kind("http_response")
        if r.get("status") == 404
        and any(
            isinstance(m.get("error"), dict)
            and same_json(m["error"].get("code"), _METHOD_NOT_FOUND)
            for m in body_messages(r)
        )
    ]


@check(
    "stateless.404-method-not-found",
    requirements=["HM-6"],
    clauses=[
        silent(
            "the MUST at the cited anchor binds the server (404 with -32601); no sentence "
            "tells the client to surface it, 'The JSON-RPC error body distinguishes this "
            "case' has no keyword"
        ),
        silent(
            "the client's fallback to the legacy transport is a lowercase 'should' list "
            "('Clients wanting to support older servers should: ...')",
            branch="fallback",
        ),
    ],
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http#protocol-version-header",
    description="A 404 whose body is a -32601 error is an unknown method: surfaced as that error, no legacy fallback",
    trigger=_trigger("the server answered with a 404 whose body is -32601", _method_not_found_404s),
)
def http_404_method_not_found(run: ScenarioRun) -> Verdict:
    gone = _method_not_found_404s(run)[0]
    fallback = [
        r
        for r in http_requests(run)
        if r["seq"] > gone["seq"]
        and (
            r.get("method") != "POST"
            or any(m.get("method") == "initialize" for m in body_messages(r))
        )
    ]
    if fallback:
        return violated(
            "after a 404 with -32601 the client fell back to the legacy transports",
            [gone, fallback[0]],
            clause="fallback",
        )
    surfaced = [
        o
        for o in run.operations
        if o.reported and same_json((o.error or {}).get("code"), _METHOD_NOT_FOUND)
    ]
    if not surfaced:
        failed = [o for o in run.operations if not o.ok]
        return violated("no operation reported the -32601 error", [gone, *op_evidence(*failed[:2])])
    return passed(
        "the 404 was reported as method not found (-32601)", [gone, *op_evidence(surfaced[0])]
    )


def _missing_capability_answers(run: ScenarioRun) -> list[dict[str, Any]]:
    return _answers(run, None, lambda a: same_json(error_code(a), _MISSING_CAPABILITY))


@check(
    "stateless.missing-capability-surfaced",
    requirements=["LC-M6"],
    clauses=[
        silent(
            "only the server is bound ('the server MUST return a "
            "MissingRequiredClientCapabilityError'); no sentence says what a client does "
            "on -32021, and the HTTP bullet 'correct the request' has no keyword"
        )
    ],
    revisions=STATELESS,
    spec="basic/index#error-codes",
    description="-32021 (a capability the client did not declare) is surfaced, or retried with the capability declared",
    trigger=_trigger(
        "the server refused a request with MissingRequiredClientCapability (-32021)",
        _missing_capability_answers,
    ),
)
def missing_capability_surfaced(run: ScenarioRun) -> Verdict:
    refusal = _missing_capability_answers(run)[0]
    refused = _request_answered_by(run, refusal)
    assert refused is not None  # an answer is found from its request
    operation = first_operation(run, "call_tool", _params(refused["message"]).get("name"))
    if operation is None:
        return missing(run, "the harness's call that was refused")
    evidence = [refused, refusal, *op_evidence(operation)]
    code = (operation.error or {}).get("code")
    if operation.reported and same_json(code, _MISSING_CAPABILITY):
        return passed("the client reported the -32021 error", evidence)
    required = (refusal["message"]["error"].get("data") or {}).get("requiredCapabilities") or {}
    retried = [
        r
        for r in run.requests(refused["message"]["method"])
        if r["seq"] > refusal["seq"]
        and all(k in (_meta(r["message"]).get(META_CAPABILITIES) or {}) for k in required)
    ]
    if operation.ok and retried:
        return passed(
            "the client retried declaring the required capability", [*evidence, retried[0]]
        )
    if operation.reported or operation.ok:
        return violated(
            "the client neither reported -32021 nor retried with the capability: "
            f"{operation.error or operation.value}",
            evidence,
        )
    return missing(run, "the client's report of -32021 (the call hung or crashed)")


async def call_summarize(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("call_tool", "summarize", {"text": "a b c"})


SCENARIOS = [
    Scenario(
        "stateless-version-retry",
        "stateless/version-retry.json",
        checks=("stateless.retry-after-unsupported-version",),
        drive=list_tools_once,
        description="the first tools/list is refused with -32022",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "stateless-server-request-and-cancel",
        "stateless/server-request-and-cancel.json",
        checks=("stateless.no-responses", "stateless.stdio-cancel-notification"),
        drive=answer_nothing_then_cancel,
        waits_on_the_client=True,
        description="a server request the client must not answer, then a call the caller abandons",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "stateless-http-cancel",
        "stateless/http-cancel.json",
        # Not features.cancel-races-survived: a client that cancels by closing the stream,
        # as it should here, never sees the late response, so the race cannot arise.
        checks=("stateless.http-cancel-closes-stream",),
        drive=cancel_and_race,
        waits_on_the_client=True,
        description="2026 HTTP: a call that times out, a call the caller abandons, then a call "
        "that must work",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "stateless-broken-stream",
        "stateless/broken-stream.json",
        checks=("stateless.reissue-after-broken-stream",),
        drive=list_then_call,
        description="2026 HTTP: the first tools/call stream is dropped before the response",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "stdio-era-other-error",
        "stdio/era-other-error.json",
        checks=("stateless.era-probe", "stateless.era-fallback"),
        drive=list_tools_once,
        description="unpinned version; a legacy server refuses server/discover with -32603",
        requires=frozenset({"tools"}),
        pin_version=False,
    ),
    Scenario(
        "stateless-era-modern-error",
        "stateless/era-modern-error.json",
        checks=("stateless.era-stays-modern",),
        description="unpinned version; a modern server refuses server/discover with -32022",
        requires=frozenset({"tools"}),
        pin_version=False,
        connect_may_fail=True,
    ),
    Scenario(
        "stateless-mrtr",
        "stateless/mrtr.json",
        checks=(
            "stateless.mrtr-retry",
            "stateless.unknown-result-type",
            "stateless.absent-result-type-complete",
        ),
        drive=mrtr_then_odd,
        description="input_required with a roots/list input request, then an unknown "
        "resultType, then a result without resultType",
        handlers=Handlers(roots=({"uri": "file:///tmp/project", "name": "project"},)),
        requires=frozenset({"tools", "roots"}),
    ),
    Scenario(
        "http-era-empty-400",
        "http/era-empty-400.json",
        checks=("stateless.era-fallback",),
        drive=list_tools_once,
        description="unpinned version; a legacy HTTP server refuses server/discover with an empty 400",
        requires=frozenset({"tools"}),
        pin_version=False,
    ),
    Scenario(
        "stateless-cache-keys",
        "stateless/cache-keys.json",
        checks=("stateless.cache-keyed-by-params",),
        drive=read_two_resources,
        description="two resources whose reads may be cached for a minute",
        requires=frozenset({"resources"}),
    ),
    Scenario(
        "stateless-param-headers",
        "stateless/param-headers.json",
        checks=("stateless.x-mcp-header",),
        drive=list_then_route,
        description="a tool with x-mcp-header, and one whose declaration is invalid",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "stateless-missing-capability",
        "stateless/missing-capability.json",
        checks=("stateless.missing-capability-surfaced",),
        drive=call_summarize,
        description="a tools/call refused with -32021 (sampling not declared)",
        requires=frozenset({"tools"}),
    ),
]

#: Judged on every run of the tools scenario. Not stateless.no-responses: it needs a
#: stimulus (a request-shaped message from the server), which only
#: stateless-server-request-and-cancel sends.
ON_EVERY_TRANSPORT = (
    "stateless.meta-on-every-request",
    "stateless.standard-headers",
    "stateless.http-post-only",
    "stateless.no-removed-methods",
    "stateless.404-method-not-found",
)
