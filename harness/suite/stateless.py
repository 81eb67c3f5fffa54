"""The stateless 2026-07-28 revision: per-request _meta, standard headers, version retry."""

from __future__ import annotations

import base64
import re
from typing import Any

import anyio

from harness._catalogue import check
from harness._run import Operation, Scenario, ScenarioRun, Session
from harness._verdicts import Verdict, fail, passed, skip, warn
from harness.clients._contract import Handlers
from harness.suite._evidence import (
    STATELESS,
    body_messages,
    cancelled_by_notification,
    first_operation,
    header,
    http_requests,
    missing,
    op_evidence,
    response_to,
    tool_calls,
)
from harness.suite.features import cancel_and_race

__all__ = ["ON_EVERY_TRANSPORT", "SCENARIOS"]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_SENTINEL = re.compile(r"^=\?base64\?([A-Za-z0-9+/=]*)\?=$")


@check(
    "stateless.meta-on-every-request",
    requirements=["LC-M1"],
    level="MUST",
    revisions=STATELESS,
    spec="basic/index#meta",
    description="Every request carries _meta protocolVersion and clientCapabilities",
)
def meta_on_every_request(run: ScenarioRun) -> Verdict:
    requests = run.requests()
    if not requests:
        return missing(run, "a request")
    for entry in requests:
        meta = (entry["message"].get("params") or {}).get("_meta")
        lacking = [
            k
            for k in (META_VERSION, META_CAPABILITIES)
            if not isinstance(meta, dict) or k not in meta
        ]
        if lacking:
            return fail(f"{entry['message']['method']} lacks _meta {', '.join(lacking)}", [entry])
    return passed(
        f"all {len(requests)} requests carry their protocol version and capabilities", requests[:2]
    )


def _decode(value: str) -> str:
    found = _SENTINEL.match(value)
    if found is None:
        return value
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return value


@check(
    "stateless.standard-headers",
    requirements=["HM-2", "HM-3"],
    level="MUST",
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http#standard-headers",
    description="Every POST carries MCP-Protocol-Version (equal to _meta), Mcp-Method, and Mcp-Name where required",
)
def standard_headers(run: ScenarioRun) -> Verdict:
    posts = [p for p in http_requests(run, "POST") if body_messages(p)]
    if not posts:
        return missing(run, "an HTTP POST with a message")
    for post in posts:
        message = body_messages(post)[0]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        meta = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        version = header(post, "mcp-protocol-version")
        if version is None or version != meta.get(META_VERSION, version):
            return fail(
                f"MCP-Protocol-Version is {version!r}, _meta says {meta.get(META_VERSION)!r}",
                [post],
            )
        if "method" in message and header(post, "mcp-method") != message["method"]:
            return fail(
                f"Mcp-Method is {header(post, 'mcp-method')!r} for {message['method']}", [post]
            )
        name = (
            params.get("uri") if message.get("method") == "resources/read" else params.get("name")
        )
        if message.get("method") in ("tools/call", "prompts/get", "resources/read"):
            sent = header(post, "mcp-name")
            if sent is None or _decode(sent) != name:
                return fail(f"Mcp-Name is {sent!r} for {message['method']} of {name!r}", [post])
    return passed(f"all {len(posts)} POSTs carry the standard headers", posts[:2])


async def list_tools_once(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")


@check(
    "stateless.retry-after-unsupported-version",
    requirements=["LC-M2"],
    level="SHOULD",
    revisions=STATELESS,
    spec="basic/versioning",
    description="After -32022 the client retries with a version from data.supported and a new id, or reports the error",
)
def retry_after_32022(run: ScenarioRun) -> Verdict:
    listed = run.requests("tools/list")
    operation = run.operation("list_tools")
    if not listed or operation is None:
        return missing(run, "a refused tools/list")
    evidence = [*listed[:2], *op_evidence(operation)]
    if len(listed) >= 2:
        first, retry = listed[0]["message"], listed[1]["message"]
        version = ((retry.get("params") or {}).get("_meta") or {}).get(META_VERSION)
        if retry["id"] == first["id"]:
            return warn("the retry reused the refused request's id", evidence)
        if version != "2026-07-28":
            return warn(
                f"the retry asked for {version!r}, not a version from data.supported", evidence
            )
        if not operation.ok:
            return warn(
                f"the retry succeeded on the wire but the caller saw {operation.error}", evidence
            )
        return passed("the client retried with a supported version and a new id", evidence)
    if not operation.ok and (operation.error or {}).get("code") == -32022:
        return passed("the client surfaced the -32022 error to its caller", evidence)
    return warn(
        f"the client neither retried nor reported -32022: {operation.error or operation.value}",
        evidence,
    )


def _is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and "id" in message


@check(
    "stateless.no-responses",
    requirements=["ST-5", "HM-1"],
    level="MUST",
    revisions=STATELESS,
    spec="basic/transports/stdio",
    description="A 2026-07-28 client never writes a JSON-RPC response, not even to a server request",
)
def no_responses(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    if not messages:
        return missing(run, "any client message")
    answers = [m for m in messages if _is_response(m["message"])]
    answers += [p for p in http_requests(run, "POST") if any(map(_is_response, body_messages(p)))]
    if answers:
        return fail(
            "the client sent a JSON-RPC response, which 2026-07-28 does not have", answers[:3]
        )
    asked = [
        e
        for e in run.entries
        if e["kind"] == "message"
        and e["direction"] == "server"
        and "method" in e["message"]
        and "id" in e["message"]
    ]
    return passed(
        f"{len(messages)} client messages, none of them a response",
        [*asked[:1], *messages[:2]],
    )


@check(
    "stateless.http-post-only",
    requirements=["HM-1", "HM-5"],
    level="MUST",
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http",
    description="2026-07-28 HTTP: every request is a POST, with no Mcp-Session-Id and no Last-Event-ID",
)
def http_post_only(run: ScenarioRun) -> Verdict:
    requests = http_requests(run)
    if not requests:
        return missing(run, "an HTTP request")
    for request in requests:
        if request.get("method") != "POST":
            return fail(
                f"the client sent a {request.get('method')} (2026-07-28 has no GET stream or DELETE)",
                [request],
            )
        for name in ("mcp-session-id", "last-event-id"):
            if header(request, name) is not None:
                return fail(
                    f"a POST carries {name} (2026-07-28 has no sessions or resumption)", [request]
                )
    return passed(
        f"all {len(requests)} requests are POSTs without session or resumption headers",
        requests[:2],
    )


@check(
    "stateless.stdio-cancel-notification",
    requirements=["ST-5", "CANCEL"],
    level="MUST",
    revisions=STATELESS,
    transports=["stdio"],
    spec="basic/transports/stdio",
    description="2026 stdio: a request the caller abandons is cancelled with notifications/cancelled naming its id",
)
def stdio_cancel_notification(run: ScenarioRun) -> Verdict:
    return cancelled_by_notification(run, "slow", fail)


@check(
    "stateless.http-cancel-closes-stream",
    requirements=["HM-5", "LC-9", "CANCEL"],
    level="SHOULD",
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http",
    description="2026 HTTP: a request that times out, and one the caller abandons, are "
    "cancelled by closing their response streams before the server answers",
)
def http_cancel_closes_stream(run: ScenarioRun) -> Verdict:
    evidence: list[dict[str, Any]] = []
    posts = [_post_of_call(run, tool) for tool in ("hang", "slow", "add")]
    if None in posts:
        return missing(run, "tools/call of hang, slow and add over HTTP")
    hang, slow, add = (p for p in posts if p is not None)
    for post, following, what in (
        (hang, slow, "hang timed out"),
        (slow, add, "slow was abandoned"),
    ):
        ends = [e for e in run.of_kind("http_end") if e.get("request") == post.get("request")]
        evidence += [post, *ends[:1]]
        # Closed by the client, and then, not at the end of the run: before the next call.
        if not any(e.get("how") == "client_closed" and e["seq"] < following["seq"] for e in ends):
            return warn(f"the call of {what}, but its stream was not closed", evidence)
    return passed("both streams were closed by the client: the requests were cancelled", evidence)


def _post_of_call(run: ScenarioRun, tool: str) -> dict[str, Any] | None:
    """The HTTP request that carried the first tools/call of `tool`."""
    for entry in http_requests(run, "POST"):
        for message in body_messages(entry):
            params = message.get("params") or {}
            if message.get("method") == "tools/call" and params.get("name") == tool:
                return entry
    return None


async def answer_nothing_then_cancel(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await anyio.sleep(0.3)  # the server request comes right after tools/list
    await session.call("call_tool", "echo", {"word": "first"})
    with anyio.move_on_after(0.5):  # the caller gives up: the client must cancel
        await session.call("call_tool", "slow", {})
    await anyio.sleep(0.3)


@check(
    "stateless.reissue-after-broken-stream",
    requirements=["HM-5", "RPC-2"],
    level="MUST",
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http",
    description="2026 HTTP: a request whose stream broke before the response is re-issued with a new id",
)
def reissue_after_broken_stream(run: ScenarioRun) -> Verdict:
    call = run.operation("call_tool")
    calls = run.requests("tools/call")
    broken = next(
        (e for e in run.of_kind("http_end") if e.get("how") in ("dropped", "closed")), None
    )
    if call is None or not calls or broken is None:
        return missing(run, "a tools/call whose response stream broke")
    first = calls[0]
    again = [c for c in calls[1:] if c["seq"] > broken["seq"]]
    evidence = [first, broken, *again[:1], *op_evidence(call)]
    if not again:
        return fail("the request was not re-issued after its stream broke", evidence)
    if again[0]["message"].get("id") == first["message"].get("id"):
        return fail("the request was re-issued under the same id", evidence)
    if not call.ok or (call.value or {}).get("content") != [{"type": "text", "text": "3"}]:
        return fail(f"the re-issued call surfaced {call.error or call.value}", evidence)
    return passed("the request was re-issued with a new id and its answer surfaced", evidence)


async def list_then_call(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "add", {"a": 1, "b": 2})


@check(
    "stateless.era-probe",
    requirements=["LC-M3"],
    level="SHOULD",
    revisions=("2025-11-25",),
    transports=["stdio"],
    spec="basic/versioning",
    description="A dual-era client left to choose its version probes a stdio server with server/discover first",
)
def era_probe(run: ScenarioRun) -> Verdict:
    if run.supports and "2026-07-28" not in run.supports:
        return skip("the client does not declare 2026-07-28: it is no dual-era client")
    requests = run.requests()
    if not requests:
        return missing(run, "a request")
    first = requests[0]
    if first["message"].get("method") != "server/discover":
        return warn(
            f"the first request was {first['message'].get('method')}, not a server/discover probe",
            [first],
        )
    return passed("the client probed with server/discover first", [first])


@check(
    "stateless.era-fallback",
    requirements=["LC-M4", "HM-7"],
    level="MUST",
    revisions=("2025-11-25",),
    transports=["stdio", "http"],
    spec="basic/versioning",
    description="A server/discover probe refused other than with a modern error (-32603, an empty HTTP 400) leads to initialize",
)
def era_fallback(run: ScenarioRun) -> Verdict:
    requests = run.requests()
    listing = run.operation("list_tools")
    if not requests or listing is None:
        return missing(run, "a session")
    probes = run.requests("server/discover")
    inits = [e for e in run.requests("initialize") if not probes or e["seq"] > probes[0]["seq"]]
    if not probes:
        if requests[0]["message"].get("method") == "initialize" and listing.ok:
            return passed(
                "the client did not try a modern request first: nothing to fall back from",
                [requests[0], *op_evidence(listing)],
            )
        return missing(run, "a server/discover probe or an initialize")
    refusal = response_to(run, probes[0])
    if refusal is None:
        refusal = next(
            (r for r in run.of_kind("http_response") if r["seq"] > probes[0]["seq"]), None
        )
    evidence = [probes[0], *([refusal] if refusal else []), *inits[:1]]
    if not inits:
        return fail("after the probe was refused the client never sent initialize", evidence)
    if not listing.ok:
        return fail(
            "after falling back the session did not work", [*evidence, *op_evidence(listing)]
        )
    return passed("the refused probe led to initialize and a working session", evidence)


@check(
    "stateless.era-stays-modern",
    requirements=["LC-M4", "HM-7"],
    level="MUST",
    revisions=STATELESS,
    transports=["stdio", "http"],
    spec="basic/versioning",
    description="A server/discover probe answered with a modern error (-32022) never leads to initialize",
)
def era_stays_modern(run: ScenarioRun) -> Verdict:
    probes = run.requests("server/discover")
    if not probes:
        return missing(run, "a server/discover probe")
    refusal = response_to(run, probes[0])
    if refusal is None:
        return missing(run, "an answer to the probe")
    inits = run.requests("initialize")
    if inits:
        return fail(
            "the client fell back to initialize after a modern error",
            [probes[0], refusal, inits[0]],
        )
    return passed(
        "after the modern error the client did not fall back to initialize", [probes[0], refusal]
    )


@check(
    "stateless.mrtr-retry",
    requirements=["MRTR", "RPC-2"],
    level="MUST",
    revisions=STATELESS,
    spec="basic/patterns/mrtr",
    description="After input_required the retry has a new id, requestState echoed exactly, and an answer per input request key",
)
def mrtr_retry(run: ScenarioRun) -> Verdict:
    calls = tool_calls(run, "ask")
    operation = first_operation(run, "call_tool", "ask")
    first = calls[0] if calls else None
    answer = response_to(run, first) if first is not None else None
    result = (answer or {}).get("message", {}).get("result") or {}
    if (
        first is None
        or answer is None
        or operation is None
        or result.get("resultType") != "input_required"
    ):
        return missing(run, "a tools/call answered with input_required")
    evidence = [first, answer, *calls[1:2], *op_evidence(operation)]
    if len(calls) < 2:
        return fail("the client did not retry the request after input_required", evidence)
    retry = calls[1]["message"]
    params = retry.get("params") or {}
    if retry.get("id") == first["message"].get("id"):
        return fail("the retry reused the id of the first request", evidence)
    if params.get("requestState") != result.get("requestState"):
        return fail(
            f"requestState came back as {params.get('requestState')!r}, "
            f"not {result.get('requestState')!r}",
            evidence,
        )
    responses = params.get("inputResponses")
    wanted = set(result.get("inputRequests") or {})
    if not isinstance(responses, dict) or set(responses) != wanted:
        keys = sorted(responses) if isinstance(responses, dict) else responses
        return fail(f"inputResponses has keys {keys!r}, not {sorted(wanted)!r}", evidence)
    if not operation.ok or (operation.value or {}).get("content") != [
        {"type": "text", "text": "done"}
    ]:
        return fail(
            f"the final result was not surfaced: {operation.error or operation.value}", evidence
        )
    return passed("the retry echoed requestState, answered every input, under a new id", evidence)


@check(
    "stateless.unknown-result-type",
    requirements=["RPC-9"],
    level="MUST",
    revisions=STATELESS,
    spec="basic/index",
    description="A result whose resultType the client does not know is invalid: surfaced as an error, not as a result",
)
def unknown_result_type(run: ScenarioRun) -> Verdict:
    operation, answer = _call_and_answer(run, "odd")
    if operation is None or answer is None:
        return missing(run, "a result with an unknown resultType")
    evidence = [answer, *op_evidence(operation)]
    if operation.ok:
        return fail(f"the client surfaced the result as valid: {operation.value}", evidence)
    return passed(
        f"the client reported the unknown resultType as an error ({operation.error})", evidence
    )


@check(
    "stateless.absent-result-type-complete",
    requirements=["RPC-9"],
    level="MUST",
    revisions=STATELESS,
    spec="basic/index",
    description="A result without resultType (a legacy server's) is read as complete and surfaced",
)
def absent_result_type_complete(run: ScenarioRun) -> Verdict:
    operation, answer = _call_and_answer(run, "legacy")
    if operation is None or answer is None:
        return missing(run, "a result without resultType")
    evidence = [answer, *op_evidence(operation)]
    if "resultType" in (answer["message"].get("result") or {}):
        return missing(run, "a result without resultType (the mock sent one)")
    if not operation.ok:
        return fail(f"the client rejected a result without resultType: {operation.error}", evidence)
    if (operation.value or {}).get("content") != [{"type": "text", "text": "old but complete"}]:
        return fail(f"the client surfaced {operation.value}, not the result", evidence)
    return passed("a result without resultType was surfaced as a complete result", evidence)


def _call_and_answer(run: ScenarioRun, tool: str) -> tuple[Operation | None, dict[str, Any] | None]:
    """The harness's call of `tool`, and the server's answer to its first tools/call."""
    calls = tool_calls(run, tool)
    answer = response_to(run, calls[0]) if calls else None
    return first_operation(run, "call_tool", tool), answer


async def mrtr_then_odd(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "ask", {})
    await session.call("call_tool", "odd", {})
    await session.call("call_tool", "legacy", {})


_REMOVED = frozenset({"ping", "logging/setLevel", "notifications/roots/list_changed"})


@check(
    "stateless.no-removed-methods",
    requirements=["LC-M5"],
    level="MUST",
    revisions=STATELESS,
    spec="changelog",
    description="A 2026-07-28 client sends no ping, logging/setLevel or notifications/roots/list_changed",
)
def no_removed_methods(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    if not messages:
        return missing(run, "any client message")
    removed = [m for m in messages if m["message"].get("method") in _REMOVED]
    if removed:
        return fail(
            f"the client sent {removed[0]['message']['method']}, which 2026-07-28 removed",
            removed[:3],
        )
    return passed(f"none of {len(messages)} client messages uses a removed method", messages[:2])


def _texts(operation: Any) -> list[Any]:
    value = operation.value if operation is not None and operation.ok else None
    contents = value.get("contents") if isinstance(value, dict) else None
    return (
        [c.get("text") for c in contents if isinstance(c, dict)]
        if isinstance(contents, list)
        else []
    )


@check(
    "stateless.cache-keyed-by-params",
    requirements=["TL-10"],
    level="MUST",
    revisions=STATELESS,
    spec="server/utilities/caching",
    description="A cacheable answer (ttlMs, public) is never reused for a request with other params",
    feature="resources",
)
def cache_keyed_by_params(run: ScenarioRun) -> Verdict:
    reads = [o for o in run.operations if o.op == "read_resource"]
    first = next((o for o in reads if o.args.get("args") == ["mem://a"]), None)
    other = next((o for o in reads if o.args.get("args") == ["mem://b"]), None)
    if first is None or other is None or _texts(first) != ["A"]:
        return missing(run, "a cacheable read of mem://a, then a read of mem://b")
    evidence = [*run.requests("resources/read")[:2], *op_evidence(first, other)]
    if _texts(other) != ["B"]:
        return fail(f"reading mem://b surfaced {other.error or other.value}", evidence)
    return passed("the read of mem://b got its own answer, not the cached mem://a", evidence)


async def read_two_resources(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("read_resource", "mem://a")
    await session.call("read_resource", "mem://b")


_REGION = "eu-w\u00ebst 1"


@check(
    "stateless.x-mcp-header",
    requirements=["HM-4"],
    level="MUST",
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http#custom-headers-from-tool-parameters",
    description="x-mcp-header arguments are mirrored as Mcp-Param-* (base64 when not plain ASCII); a tool with an invalid declaration is left out of tools/list",
)
def x_mcp_header(run: ScenarioRun) -> Verdict:
    listing = run.operation("list_tools")
    posts = [
        p
        for p in http_requests(run, "POST")
        if any(
            m.get("method") == "tools/call" and (m.get("params") or {}).get("name") == "route"
            for m in body_messages(p)
        )
    ]
    if listing is None or not listing.ok or not posts:
        return missing(run, "a tools/list and a call of a tool with x-mcp-header")
    names = [t.get("name") for t in (listing.value or {}).get("tools", [])]
    evidence = [posts[0], *op_evidence(listing)]
    if "bad" in names:
        return fail("the tool with an invalid x-mcp-header was listed, not rejected", evidence)
    sent = header(posts[0], "mcp-param-region")
    if sent is None or _decode(sent) != _REGION:
        return fail(f"Mcp-Param-Region is {sent!r}, the argument {_REGION!r}", evidence)
    if not sent.startswith("=?base64?"):
        return fail(f"the non-ASCII value went out unencoded: {sent!r}", evidence)
    return passed("the argument was mirrored (base64) and the invalid tool rejected", evidence)


async def list_then_route(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await session.call("call_tool", "route", {"region": _REGION, "query": "select 1"})


def _is_method_not_found(response: dict[str, Any]) -> bool:
    return any(
        isinstance(m.get("error"), dict) and m["error"].get("code") == -32601
        for m in body_messages(response)
    )


@check(
    "stateless.404-method-not-found",
    requirements=["HM-6"],
    level="MUST",
    revisions=STATELESS,
    transports=["http"],
    spec="basic/transports/streamable-http#protocol-version-header",
    description="A 404 whose body is a -32601 error is an unknown method: surfaced as that error, no legacy fallback",
)
def http_404_method_not_found(run: ScenarioRun) -> Verdict:
    gone = [
        r
        for r in run.of_kind("http_response")
        if r.get("status") == 404 and _is_method_not_found(r)
    ]
    if not gone:
        return missing(run, "a 404 with a -32601 body")
    after = [r for r in http_requests(run) if r["seq"] > gone[0]["seq"]]
    fallback = [
        r
        for r in after
        if r.get("method") != "POST"
        or any(m.get("method") == "initialize" for m in body_messages(r))
    ]
    if fallback:
        return fail(
            "after a 404 with -32601 the client fell back to the legacy transports",
            [gone[0], fallback[0]],
        )
    surfaced = [o for o in run.operations if (o.error or {}).get("code") == -32601]
    if not surfaced:
        ops = [o for o in run.operations if not o.ok]
        return fail("no operation surfaced the -32601 error", [gone[0], *op_evidence(*ops[:2])])
    return passed(
        "the 404 was surfaced as method not found (-32601)", [gone[0], *op_evidence(surfaced[0])]
    )


@check(
    "stateless.missing-capability-surfaced",
    requirements=["LC-M6"],
    level="MUST",
    revisions=STATELESS,
    spec="basic/index#error-codes",
    description="-32021 (a capability the client did not declare) is surfaced, or retried with the capability declared",
)
def missing_capability_surfaced(run: ScenarioRun) -> Verdict:
    operation = run.operation("call_tool")
    calls = run.requests("tools/call")
    if operation is None or not calls or response_to(run, calls[0]) is None:
        return missing(run, "a tools/call refused with -32021")
    evidence = [calls[0], *op_evidence(operation)]
    if (operation.error or {}).get("code") == -32021:
        return passed("the client surfaced the -32021 error", evidence)
    retried = [
        c
        for c in calls[1:]
        if "sampling"
        in (((c["message"].get("params") or {}).get("_meta") or {}).get(META_CAPABILITIES) or {})
    ]
    if operation.ok and retried:
        return passed(
            "the client retried declaring the required capability", [*evidence, retried[0]]
        )
    return fail(
        f"the client neither surfaced -32021 nor retried with the capability: "
        f"{operation.error or operation.value}",
        evidence,
    )


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
        description="a server request the client must not answer, then a call the caller abandons",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "stateless-http-cancel",
        "stateless/http-cancel.json",
        checks=("stateless.http-cancel-closes-stream", "features.cancel-races-survived"),
        drive=cancel_and_race,
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

#: Judged on every run of the tools scenario.
ON_EVERY_TRANSPORT = (
    "stateless.meta-on-every-request",
    "stateless.standard-headers",
    "stateless.no-responses",
    "stateless.http-post-only",
    "stateless.no-removed-methods",
    "stateless.404-method-not-found",
)
