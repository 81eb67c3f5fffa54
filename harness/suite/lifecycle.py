"""Lifecycle: the initialize handshake, version negotiation, negotiated capabilities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.judging import (
    Verdict,
    asked,
    check,
    clause,
    client_sent,
    not_applicable,
    passed,
    silent,
    skip,
    trigger,
    unread_initialized,
    violated,
)
from harness.protocol import same_json, validate
from harness.running import Scenario, ScenarioRun, Session
from harness.suite._evidence import (
    HANDSHAKE,
    INITIALIZE_ANSWERED,
    cancellations,
    cancelled_id,
    dual_era_probes,
    hung_or_crashed,
    initialize_exchange,
    initialize_request,
    judged_elsewhere,
    keeps_order,
    missing,
    never_answered,
    op_evidence,
    response_to,
    same_id,
)

__all__ = ["SCENARIOS"]

LIFECYCLE = "basic/lifecycle"


async def connect_and_list(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")


async def connect_list_and_call(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")
        await session.call("call_tool", "ask", {})


INITIALIZE_SENT = client_sent("initialize")


def _requests_other_than_ping(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        m
        for m in entries
        if "id" in m["message"] and m["message"].get("method") not in (None, "ping")
    ]


@check(
    "lifecycle.initialize-first",
    requirements=["LC-1"],
    clauses=[
        clause(LIFECYCLE, "The initialization phase MUST be the first interaction"),
        clause(LIFECYCLE, "The client MUST initiate this phase by sending"),
    ],
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#initialization",
    description="The first message is an initialize request with protocolVersion, capabilities and clientInfo",
    trigger=asked("connect"),
    # The root cause of a failed handshake: judged whatever connect did, and whatever
    # followed the initialize (a missing notifications/initialized is its own defect).
    independent_of=("client.connect", "lifecycle.initialized-notification"),
)
def initialize_first(run: ScenarioRun) -> Verdict:
    operation = run.operation("connect")
    assert operation is not None  # the trigger
    connect = [operation.to_json()]
    probes = dual_era_probes(run)  # a dual-era client's server/discover first (LC-M3)
    messages = [m for m in run.client_messages() if m not in probes]
    if not messages:
        if operation.ok:
            return violated(
                "connect reported success, but the client never sent initialize", connect
            )
        return missing(run, "a client message")  # connect failed or hung first: BLOCKED by it
    first = messages[0]
    if first["message"].get("method") != "initialize":
        what = first["message"].get("method", "a response")
        return violated(f"the first message was {what!r}, not initialize", [first, *connect])
    # Over Streamable HTTP a GET stream or a DELETE is an interaction too: before the
    # initialize, it comes first (a stream the server has no session for yet).
    # Authorization discovery (a metadata GET) is not an interaction with the MCP endpoint.
    ahead = [
        e
        for e in run.endpoint_requests()
        if run.transport == "http" and e.get("method") != "POST" and e["seq"] < first["seq"]
    ]
    if ahead:
        return violated(
            f"the client's first interaction was an HTTP {ahead[0].get('method')}, "
            "before its initialize request",
            [ahead[0], first, *connect],
        )
    problems = validate(first["message"], run.revision, "client")
    if problems:
        return violated(f"the initialize request is malformed: {problems[0]}", [first, *connect])
    return passed("initialize came first and is well-formed", [first, *connect])


@check(
    "lifecycle.initialized-notification",
    requirements=["LC-4"],
    clauses=[
        clause(LIFECYCLE, "the client MUST send an initialized notification"),
        silent(
            "the page orders no client request after the initialized notification: the "
            "client's rule is to wait for the initialize response (a SHOULD NOT), and the "
            "rule about the notification's arrival binds the server",
            branch="request-before-initialized",
        ),
    ],
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#initialization",
    description="After the initialize response the client sends notifications/initialized before other requests",
    trigger=INITIALIZE_ANSWERED,
)
def initialized_sent(run: ScenarioRun) -> Verdict:
    init, response = initialize_exchange(run) or ({}, {})
    later = [m for m in run.client_messages() if m["seq"] > response["seq"]]
    notice = next(
        (m for m in later if m["message"].get("method") == "notifications/initialized"), None
    )
    if notice is None:
        # A notification the server could not read (in a batch, over several lines) was
        # sent all the same: that line is another check's defect (one defect, one FAIL).
        unreadable = unread_initialized(run, response["seq"])
        if unreadable:
            return judged_elsewhere(run, unreadable)
        return violated(
            "no notifications/initialized after the initialize response",
            [init, response, *later[:3]],
        )
    # Where the transcript need not keep the client's order, a request still unanswered
    # when the notification arrived may have been sent after it; one answered before then
    # was surely sent before it.
    early: list[Mapping[str, Any]] = []
    crossed: list[Mapping[str, Any]] = []
    for request in _requests_other_than_ping([m for m in later if m["seq"] < notice["seq"]]):
        sure = keeps_order(run) or _answered_before(run, request, notice)
        (early if sure else crossed).append(request)
    if early:
        return violated(
            f"{early[0]['message']['method']} was sent before notifications/initialized",
            [init, response, *early, notice],
            clause="request-before-initialized",
        )
    methods = ", ".join(str(m["message"]["method"]) for m in crossed)
    also = f"; {methods} crossed it on another connection" if crossed else ""
    return passed(
        f"notifications/initialized followed the initialize response{also}",
        [init, response, notice, *crossed],
    )


def _answered_before(
    run: ScenarioRun, request: Mapping[str, Any], notice: Mapping[str, Any]
) -> bool:
    answer = response_to(run, request)
    return answer is not None and answer["seq"] < notice["seq"]


@check(
    "lifecycle.no-request-before-initialize-response",
    requirements=["LC-5"],
    clauses=[clause(LIFECYCLE, "The client SHOULD NOT send requests other than")],
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#initialization",
    description="No request other than ping goes out before the initialize response arrives",
    trigger=INITIALIZE_ANSWERED,
    independent_of=("lifecycle.initialized-notification",),  # judges what came before it
)
def nothing_before_init_response(run: ScenarioRun) -> Verdict:
    init, response = initialize_exchange(run) or ({}, {})
    early = _requests_other_than_ping(
        [m for m in run.client_messages() if init["seq"] < m["seq"] < response["seq"]]
    )
    if early:
        return violated(
            f"{early[0]['message']['method']} was sent before the initialize response",
            [init, *early, response],
        )
    return passed("nothing but pings preceded the initialize response", [init, response])


@check(
    "lifecycle.initialize-not-cancelled",
    requirements=["LC-8"],
    clauses=[
        clause(
            "basic/utilities/cancellation",
            "The initialize request MUST NOT be cancelled by clients",
        )
    ],
    revisions=HANDSHAKE,
    spec="basic/utilities/cancellation",
    description="The client never cancels its initialize request, even when the answer is slow",
    trigger=INITIALIZE_ANSWERED,
    independent_of=("lifecycle.initialized-notification",),  # judges what came before it
)
def initialize_not_cancelled(run: ScenarioRun) -> Verdict:
    init, response = initialize_exchange(run) or ({}, {})
    for notice in cancellations(run):
        if same_id(cancelled_id(notice), init["message"].get("id")):
            return violated("the client cancelled its initialize request", [init, notice, response])
    return passed("the slow initialize was awaited, not cancelled", [init, response])


@check(
    "lifecycle.unsupported-version-disconnect",
    requirements=["LC-3"],
    # The schema page's InitializeResult says "MUST disconnect" from 2025-06-18; the
    # lifecycle page's SHOULD is the prose, whose word wins.
    clauses=[clause(LIFECYCLE, "version in the server's response, it SHOULD disconnect")],
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#version-negotiation",
    description="When the server answers with a version the client does not support, the client disconnects",
    trigger=INITIALIZE_ANSWERED,
)
def unsupported_version(run: ScenarioRun) -> Verdict:
    init, response = initialize_exchange(run) or ({}, {})
    after = [m for m in run.client_messages() if m["seq"] > response["seq"]]
    connect = run.operation("connect")
    evidence = [init, response, *after[:3], *op_evidence(connect)]
    if after:
        what = after[0]["message"].get("method", "a response")
        return violated(
            f"the client went on with {what} after the server chose version 1999-01-01", evidence
        )
    if connect is None or connect.ok:
        return violated(
            "the client reported a successful connection at version 1999-01-01", evidence
        )
    if connect.hung:
        # It neither went on nor disconnected: it stayed connected, waiting, until the
        # harness gave up. Not disconnecting is what the SHOULD is about, so it is judged.
        return violated("connect hung after the server chose version 1999-01-01", evidence)
    crashed = hung_or_crashed(connect)  # a driver that died reported nothing
    if crashed is not None:
        return crashed
    return passed("the client sent nothing more and reported the failed negotiation", evidence)


@check(
    "lifecycle.negotiated-capabilities-only",
    requirements=["LC-7"],
    clauses=[clause(LIFECYCLE, "Both parties MUST")],  # "- Only use capabilities that were ..."
    revisions=HANDSHAKE[2:],
    spec=LIFECYCLE + "#capability-negotiation",
    description="The client does not call tools/list on a server that declared no tools capability",
    trigger=asked("list_tools"),
)
def negotiated_capabilities(run: ScenarioRun) -> Verdict:
    return _capabilities_verdict(run)


@check(
    "lifecycle.negotiated-capabilities-only-early",
    requirements=["LC-7"],
    clauses=[clause(LIFECYCLE, "Both parties SHOULD")],  # "- Only use capabilities that were ..."
    revisions=HANDSHAKE[:2],
    spec=LIFECYCLE + "#capability-negotiation",
    description="The client does not call tools/list on a server that declared no tools capability",
    trigger=asked("list_tools"),
)
def negotiated_capabilities_early(run: ScenarioRun) -> Verdict:
    return _capabilities_verdict(run)


def _capabilities_verdict(run: ScenarioRun) -> Verdict:
    """The harness asked for the tools of a server that declared no tools capability: the
    client must not send tools/list (a refused one was sent all the same)."""
    negotiated = list(initialize_exchange(run) or ())
    operation = run.operation("list_tools")
    listed = run.requests("tools/list")
    if listed:
        why = "the client sent tools/list although the server declared no tools capability"
        return violated(why, [*negotiated, *listed, *op_evidence(operation)])
    assert operation is not None  # the trigger
    unreported = hung_or_crashed(operation)
    if unreported is not None:
        return unreported
    how = "refused the operation itself" if operation.reported else "answered it itself"
    return passed(
        f"tools/list was never sent; the client {how}", [*negotiated, operation.to_json()]
    )


_FEATURES = (
    ("roots", "roots/list"),
    ("sampling", "sampling/createMessage"),
    ("elicitation", "elicitation/create"),
)
_FEATURE_SINCE = {"roots": "2024-11-05", "sampling": "2024-11-05", "elicitation": "2025-06-18"}
_FEATURE_OF = {method: feature for feature, method in _FEATURES}


def _declared(run: ScenarioRun) -> tuple[dict[str, Any], dict[str, Any]]:
    """The initialize request entry and the client capabilities it declared. There is
    one: it is the trigger, or a server request, which the mock sends only after it."""
    init = initialize_request(run)
    assert init is not None
    capabilities = (init["message"].get("params") or {}).get("capabilities")
    return init, capabilities if isinstance(capabilities, dict) else {}


@check(
    "lifecycle.declares-client-features",
    requirements=["LC-6", "ROOTS", "SAMPLING", "ELICIT"],
    clauses=[
        clause("client/roots", "Clients that support roots MUST declare the"),
        clause("client/sampling", "Clients that support sampling MUST declare the"),
        clause(
            "client/elicitation",
            "Clients that support elicitation MUST declare the",
            *HANDSHAKE[HANDSHAKE.index(_FEATURE_SINCE["elicitation"]) :],
        ),
    ],
    revisions=HANDSHAKE,
    spec="client/roots#capabilities",
    description="A client that supports roots, sampling or elicitation (and has answers for "
    "them) declares the capability in initialize",
    trigger=INITIALIZE_SENT,
)
def declares_client_features(run: ScenarioRun) -> Verdict:
    init, capabilities = _declared(run)
    answerable = [
        name
        for name in ("roots", "sampling", "elicitation")
        if getattr(run.scenario.handlers, name) is not None
        and HANDSHAKE.index(run.revision) >= HANDSHAKE.index(_FEATURE_SINCE[name])
    ]
    if not answerable:
        return not_applicable("the scenario gives the client nothing to answer with", [init])
    expected = [name for name in answerable if not run.supports or name in run.supports]
    if not expected:
        return skip("the client supports none of roots, sampling and elicitation")
    absent = [name for name in expected if not isinstance(capabilities.get(name), dict)]
    if absent:
        return violated(f"the client supports {', '.join(absent)} but did not declare it", [init])
    return passed(f"{', '.join(expected)} declared in initialize", [init])


def _feature_requests(run: ScenarioRun) -> list[Mapping[str, Any]]:
    return [
        e
        for e in run.entries
        if e["kind"] == "message"
        and e.get("direction") == "server"
        and "id" in e["message"]
        and e["message"].get("method") in _FEATURE_OF
    ]


def _answer_to(run: ScenarioRun, request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The client's response to a server request (same id, later in time)."""
    return next(
        (
            m
            for m in run.client_messages()
            if m["seq"] > request["seq"]
            and "method" not in m["message"]
            and same_id(m["message"].get("id"), request["message"]["id"])
        ),
        None,
    )


@check(
    "lifecycle.undeclared-feature-refused",
    requirements=["LC-6", "ROOTS", "SAMPLING", "RPC-4"],
    clauses=[
        # Never answered: JSON-RPC 2.0 has every request that is no notification answered.
        clause("basic/index", "All messages between MCP clients and servers MUST"),
        clause(
            "client/roots",
            "Clients SHOULD return standard JSON-RPC errors for common",
            branch="roots-result",
        ),
        clause(
            "client/sampling",
            "Clients SHOULD return errors for common failure cases",
            branch="sampling-result",
        ),
        silent(
            "no sentence says how a client answers an elicitation/create it did not declare "
            "(the page's error rules cover a declared capability's modes)",
            branch="elicitation-result",
        ),
    ],
    revisions=HANDSHAKE,
    spec="client/roots#error-handling",
    description="A server request for a feature the client did not declare is answered with a "
    "JSON-RPC error, never with a result and never with silence",
    trigger=trigger("the server asked for roots, sampling or elicitation", _feature_requests),
)
def undeclared_refused(run: ScenarioRun) -> Verdict:
    init, capabilities = _declared(run)
    judged = [
        request
        for request in _feature_requests(run)
        if _FEATURE_OF[request["message"]["method"]] not in capabilities
    ]
    if not judged:
        return skip("the client declared every feature the server asked for")
    evidence: list[Mapping[str, Any]] = [init]
    for request in judged:
        answer, method = _answer_to(run, request), request["message"]["method"]
        if answer is None:
            return never_answered(
                run, request, f"{method} (not declared) was never answered", [*evidence, request]
            )
        if "error" not in answer["message"] or "result" in answer["message"]:
            why = f"{method} (not declared) was answered with a result"
            seen = [*evidence, request, answer]
            if method == "roots/list":
                return violated(why, seen, clause="roots-result")
            if method == "sampling/createMessage":
                return violated(why, seen, clause="sampling-result")
            return violated(why, seen, clause="elicitation-result")
        evidence += [request, answer]
    return passed("every request for an undeclared feature was answered with an error", evidence)


def _offered(run: ScenarioRun) -> tuple[dict[str, Any], Any, list[str]]:
    """The initialize request, the version it offers, the handshake revisions declared."""
    init, _ = _declared(run)
    offered = (init["message"].get("params") or {}).get("protocolVersion")
    return init, offered, [r for r in HANDSHAKE if r in run.supports]


@check(
    "lifecycle.offers-supported-version",
    requirements=["LC-2"],
    clauses=[clause(LIFECYCLE, "the client MUST send a protocol version it supports")],
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#version-negotiation",
    description="Left to choose, the client offers in initialize a protocol version it "
    "supports (one it declares, or at least a released one)",
    trigger=INITIALIZE_SENT,
)
def offers_supported_version(run: ScenarioRun) -> Verdict:
    init, offered, declared = _offered(run)
    allowed = declared or list(HANDSHAKE)
    if not any(same_json(offered, version) for version in allowed):
        return violated(f"the client offered {offered!r}, not one of {', '.join(allowed)}", [init])
    return passed(f"the client offered {offered}, a version it supports", [init])


@check(
    "lifecycle.offers-latest-version",
    requirements=["LC-2"],
    clauses=[clause(LIFECYCLE, "SHOULD be the latest version supported by the client")],
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#version-negotiation",
    description="Left to choose, the client offers the latest handshake revision it declares",
    trigger=INITIALIZE_SENT,
)
def offers_latest_version(run: ScenarioRun) -> Verdict:
    init, offered, declared = _offered(run)
    if not declared:
        return skip("the client does not declare which revisions it supports")
    if not same_json(offered, declared[-1]):
        return violated(f"the client offered {offered!r}, not its latest {declared[-1]}", [init])
    return passed(f"the client offered {offered}, its latest", [init])


SCENARIOS = [
    Scenario(
        "lifecycle-handshake",
        "lifecycle/handshake.json",
        checks=(
            "lifecycle.initialize-first",
            "lifecycle.initialized-notification",
            "lifecycle.no-request-before-initialize-response",
        ),
        drive=connect_and_list,
        description="connect, then list the tools",
    ),
    Scenario(
        "lifecycle-slow-initialize",
        "lifecycle/slow-initialize.json",
        checks=(
            "lifecycle.initialize-not-cancelled",
            "lifecycle.no-request-before-initialize-response",
        ),
        drive=connect_and_list,
        description="the initialize answer takes 400 ms",
    ),
    Scenario(
        "lifecycle-unsupported-version",
        "lifecycle/unsupported-version.json",
        checks=("lifecycle.unsupported-version-disconnect",),
        drive=connect_and_list,
        description="the server answers initialize with version 1999-01-01",
        connect_may_fail=True,
    ),
    Scenario(
        "lifecycle-no-tools-capability",
        "lifecycle/no-tools-capability.json",
        checks=(
            "lifecycle.negotiated-capabilities-only",
            "lifecycle.negotiated-capabilities-only-early",
        ),
        drive=connect_and_list,
        description="the server declares no capabilities; the harness asks for the tools",
        local_answers=frozenset({"list_tools"}),
        revisions=HANDSHAKE,
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "lifecycle-undeclared-features",
        "lifecycle/undeclared-features.json",
        checks=("lifecycle.undeclared-feature-refused", "jsonrpc.answers-well-formed"),
        drive=connect_list_and_call,
        description="no handlers for roots or sampling; the server asks for both anyway "
        "ahead of a tools/call response",
        requires=frozenset({"tools"}),
    ),
    Scenario(
        "lifecycle-version-choice",
        "lifecycle/version-choice.json",
        checks=("lifecycle.offers-supported-version", "lifecycle.offers-latest-version"),
        drive=connect_and_list,
        description="connect without a version asked for: the client chooses what to offer",
        pin_version=False,
    ),
]
