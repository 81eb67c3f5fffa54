"""The stateless 2026-07-28 revision: per-request _meta, standard headers, version retry."""

from __future__ import annotations

import base64
import re
from typing import Any

import anyio

from harness._catalogue import check
from harness._run import Scenario, ScenarioRun, Session
from harness._verdicts import Verdict, fail, passed, warn
from harness.suite._evidence import (
    STATELESS,
    body_messages,
    header,
    http_requests,
    missing,
    op_evidence,
)

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
    slow = [
        e
        for e in run.requests("tools/call")
        if (e["message"].get("params") or {}).get("name") == "slow"
    ]
    if not slow:
        return missing(run, "a tools/call that the caller abandons")
    request = slow[0]
    cancels = [
        m
        for m in run.client_messages()
        if m["message"].get("method") == "notifications/cancelled" and m["seq"] > request["seq"]
    ]
    if not cancels:
        return fail(
            "the abandoned request was never cancelled with notifications/cancelled", [request]
        )
    named = (cancels[0]["message"].get("params") or {}).get("requestId")
    wanted = request["message"]["id"]
    if named != wanted or type(named) is not type(wanted):
        return fail(
            f"notifications/cancelled names {named!r}, not the request {wanted!r}",
            [request, cancels[0]],
        )
    return passed("the abandoned request was cancelled by notification", [request, cancels[0]])


async def answer_nothing_then_cancel(session: Session) -> None:
    if not (await session.connect()).ok:
        return
    await session.call("list_tools")
    await anyio.sleep(0.3)  # the server request comes right after tools/list
    await session.call("call_tool", "echo", {"word": "first"})
    with anyio.move_on_after(0.5):  # the caller gives up: the client must cancel
        await session.call("call_tool", "slow", {})
    await anyio.sleep(0.3)


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
]

#: Judged on every run of the tools scenario.
ON_EVERY_TRANSPORT = (
    "stateless.meta-on-every-request",
    "stateless.standard-headers",
    "stateless.no-responses",
    "stateless.http-post-only",
)
