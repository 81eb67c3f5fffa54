"""Lifecycle: the initialize handshake, version negotiation, negotiated capabilities."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness._catalogue import check
from harness._run import Scenario, ScenarioRun, Session
from harness._schemas import validate
from harness._verdicts import Verdict, fail, passed, skip, warn
from harness.suite._evidence import HANDSHAKE, dual_era_probes, missing, op_evidence, response_to

__all__ = ["SCENARIOS"]

LIFECYCLE = "basic/lifecycle"


async def connect_and_list(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")


async def connect_list_and_call(session: Session) -> None:
    if (await session.connect()).ok:
        await session.call("list_tools")
        await session.call("call_tool", "ask", {})


@check(
    "lifecycle.initialize-first",
    requirements=["LC-1"],
    level="MUST",
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#initialization",
    description="The first message is an initialize request with protocolVersion, capabilities and clientInfo",
)
def initialize_first(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    probes = dual_era_probes(run)
    messages = [m for m in messages if m not in probes]
    if not messages:
        return missing(run, "any client message")
    first = messages[0]
    if first["message"].get("method") != "initialize":
        return fail(
            f"the first message was {first['message'].get('method', 'a response')!r}, not initialize",
            [first],
        )
    problems = validate(first["message"], run.revision, "client")
    if problems:
        return fail(f"the initialize request is malformed: {problems[0]}", [first])
    return passed("initialize came first and is well-formed", [first])


@check(
    "lifecycle.initialized-notification",
    requirements=["LC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#initialization",
    description="After the initialize response the client sends notifications/initialized before other requests",
)
def initialized_sent(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    init = next((m for m in messages if m["message"].get("method") == "initialize"), None)
    if init is None or response_to(run, init) is None:
        return missing(run, "an answered initialize request")
    later = [m for m in messages if m["seq"] > init["seq"]]
    notice = next(
        (m for m in later if m["message"].get("method") == "notifications/initialized"), None
    )
    if notice is None:
        return fail(
            "no notifications/initialized after the initialize response", [init, *later[:3]]
        )
    early = [
        m
        for m in later
        if m["seq"] < notice["seq"]
        and "id" in m["message"]
        and m["message"].get("method") not in (None, "ping")
    ]
    if early:
        return fail(
            f"{early[0]['message']['method']} was sent before notifications/initialized",
            [init, *early, notice],
        )
    return passed("notifications/initialized followed the initialize response", [init, notice])


@check(
    "lifecycle.no-request-before-initialize-response",
    requirements=["LC-5"],
    level="SHOULD",
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#initialization",
    description="No request other than ping goes out before the initialize response arrives",
)
def nothing_before_init_response(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    init = next((m for m in messages if m["message"].get("method") == "initialize"), None)
    response = response_to(run, init) if init else None
    if init is None or response is None:
        return missing(run, "an answered initialize request")
    early = [
        m
        for m in messages
        if init["seq"] < m["seq"] < response["seq"]
        and "id" in m["message"]
        and m["message"].get("method") not in (None, "ping")
    ]
    if early:
        return warn(
            f"{early[0]['message']['method']} was sent before the initialize response",
            [init, *early],
        )
    return passed("nothing but pings preceded the initialize response", [init, response])


@check(
    "lifecycle.initialize-not-cancelled",
    requirements=["LC-8"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="basic/utilities/cancellation",
    description="The client never cancels its initialize request, even when the answer is slow",
)
def initialize_not_cancelled(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    init = next((m for m in messages if m["message"].get("method") == "initialize"), None)
    if init is None or response_to(run, init) is None:
        return missing(run, "an answered initialize request")
    init_id = init["message"]["id"]
    for m in messages:
        params = m["message"].get("params") or {}
        if (
            m["message"].get("method") == "notifications/cancelled"
            and params.get("requestId") == init_id
        ):
            return fail("the client cancelled its initialize request", [init, m])
    return passed("the slow initialize was awaited, not cancelled", [init])


@check(
    "lifecycle.unsupported-version-disconnect",
    requirements=["LC-3"],
    level="SHOULD",
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#version-negotiation",
    description="When the server answers with a version the client does not support, the client disconnects",
)
def unsupported_version(run: ScenarioRun) -> Verdict:
    messages = run.client_messages()
    init = next((m for m in messages if m["message"].get("method") == "initialize"), None)
    response = response_to(run, init) if init else None
    if init is None or response is None:
        return missing(run, "an answered initialize request")
    after = [m for m in messages if m["seq"] > response["seq"]]
    connect = run.operation("connect")
    evidence = [init, response, *after[:3], *op_evidence(connect)]
    if after:
        what = after[0]["message"].get("method", "a response")
        return warn(
            f"the client went on with {what} after the server chose version 1999-01-01", evidence
        )
    if connect is not None and connect.ok:
        return warn("the client reported a successful connection at version 1999-01-01", evidence)
    return passed("the client sent nothing more and reported the failed negotiation", evidence)


@check(
    "lifecycle.negotiated-capabilities-only",
    requirements=["LC-7"],
    level="MUST",
    revisions=HANDSHAKE[2:],
    spec=LIFECYCLE + "#capability-negotiation",
    description="The client does not call tools/list on a server that declared no tools capability",
)
def negotiated_capabilities(run: ScenarioRun) -> Verdict:
    return _capabilities_verdict(run, fail)


@check(
    "lifecycle.negotiated-capabilities-only-early",
    requirements=["LC-7"],
    level="SHOULD",
    revisions=HANDSHAKE[:2],
    spec=LIFECYCLE + "#capability-negotiation",
    description="The client does not call tools/list on a server that declared no tools capability",
)
def negotiated_capabilities_early(run: ScenarioRun) -> Verdict:
    return _capabilities_verdict(run, warn)


def _capabilities_verdict(run: ScenarioRun, violation: Callable[..., Verdict]) -> Verdict:
    negotiated = [m for m in run.client_messages() if m["message"].get("method") == "initialize"]
    if not negotiated:
        return missing(run, "an initialize request")
    listed = run.requests("tools/list")
    operation = run.operation("list_tools")
    if listed:
        why = "the client sent tools/list although the server declared no tools capability"
        return violation(why, [*negotiated, *listed])
    if operation is None or operation.ok:
        return missing(run, "a refused list_tools operation")
    return passed(
        "tools/list was never sent; the client refused the operation itself",
        [*negotiated, *op_evidence(operation)],
    )


_FEATURES = (
    ("roots", "roots/list"),
    ("sampling", "sampling/createMessage"),
    ("elicitation", "elicitation/create"),
)
_FEATURE_SINCE = {"roots": "2024-11-05", "sampling": "2024-11-05", "elicitation": "2025-06-18"}


def _declared(run: ScenarioRun) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The initialize request entry and the client capabilities it declared."""
    init = next(
        (m for m in run.client_messages() if m["message"].get("method") == "initialize"), None
    )
    if init is None:
        return None, {}
    capabilities = (init["message"].get("params") or {}).get("capabilities")
    return init, capabilities if isinstance(capabilities, dict) else {}


@check(
    "lifecycle.declares-client-features",
    requirements=["LC-6", "ROOTS", "SAMPLING", "ELICIT"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="client/roots#capabilities",
    description="A client that supports roots, sampling or elicitation (and has answers for "
    "them) declares the capability in initialize",
)
def declares_client_features(run: ScenarioRun) -> Verdict:
    init, capabilities = _declared(run)
    if init is None:
        return missing(run, "an initialize request")
    handlers = run.scenario.handlers
    expected = [
        name
        for name in ("roots", "sampling", "elicitation")
        if getattr(handlers, name) is not None
        and (not run.supports or name in run.supports)
        and HANDSHAKE.index(run.revision) >= HANDSHAKE.index(_FEATURE_SINCE[name])
    ]
    if not expected:
        return skip("the client supports none of roots, sampling and elicitation")
    absent = [name for name in expected if not isinstance(capabilities.get(name), dict)]
    if absent:
        return fail(f"the client supports {', '.join(absent)} but did not declare it", [init])
    return passed(f"{', '.join(expected)} declared in initialize", [init])


@check(
    "lifecycle.undeclared-feature-refused",
    requirements=["LC-6", "ROOTS", "SAMPLING", "RPC-4"],
    level="MUST",
    revisions=HANDSHAKE,
    spec="client/roots#error-handling",
    description="A server request for a feature the client did not declare is answered with a "
    "JSON-RPC error, never with a result and never with silence",
)
def undeclared_refused(run: ScenarioRun) -> Verdict:
    init, capabilities = _declared(run)
    if init is None:
        return missing(run, "an initialize request")
    feature_of = {method: feature for feature, method in _FEATURES}
    server_requests = [
        e
        for e in run.entries
        if e["kind"] == "message"
        and e.get("direction") == "server"
        and "id" in e["message"]
        and e["message"].get("method") in feature_of
    ]
    judged = [e for e in server_requests if feature_of[e["message"]["method"]] not in capabilities]
    if not judged:
        if server_requests:
            return skip("the client declared every feature the server asked for")
        return missing(run, "a server request for roots or sampling")
    evidence: list[dict[str, Any]] = [init]
    for request in judged:
        answer = next(
            (
                m
                for m in run.client_messages()
                if "method" not in m["message"]
                and m["message"].get("id") == request["message"]["id"]
            ),
            None,
        )
        method = request["message"]["method"]
        if answer is None:
            return fail(f"{method} (not declared) was never answered", [init, request])
        if "error" not in answer["message"] or "result" in answer["message"]:
            return fail(
                f"{method} (not declared) was answered with a result", [init, request, answer]
            )
        evidence += [request, answer]
    return passed("every request for an undeclared feature was answered with an error", evidence)


def _offered(run: ScenarioRun) -> tuple[dict[str, Any] | None, Any, list[str]]:
    """The initialize request, the version it offers, the handshake revisions declared."""
    init, _ = _declared(run)
    offered = ((init or {}).get("message", {}).get("params") or {}).get("protocolVersion")
    declared = [r for r in HANDSHAKE if r in run.supports]
    return init, offered, declared


@check(
    "lifecycle.offers-supported-version",
    requirements=["LC-2"],
    level="MUST",
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#version-negotiation",
    description="Left to choose, the client offers in initialize a protocol version it "
    "supports (one it declares, or at least a released one)",
)
def offers_supported_version(run: ScenarioRun) -> Verdict:
    init, offered, declared = _offered(run)
    if init is None:
        return missing(run, "an initialize request")
    allowed = declared or list(HANDSHAKE)
    if offered not in allowed:
        return fail(f"the client offered {offered!r}, not one of {', '.join(allowed)}", [init])
    return passed(f"the client offered {offered}, a version it supports", [init])


@check(
    "lifecycle.offers-latest-version",
    requirements=["LC-2"],
    level="SHOULD",
    revisions=HANDSHAKE,
    spec=LIFECYCLE + "#version-negotiation",
    description="Left to choose, the client offers the latest handshake revision it declares",
)
def offers_latest_version(run: ScenarioRun) -> Verdict:
    init, offered, declared = _offered(run)
    if init is None:
        return missing(run, "an initialize request")
    if not declared:
        return skip("the client does not declare which revisions it supports")
    if offered != declared[-1]:
        return warn(f"the client offered {offered!r}, not its latest {declared[-1]}", [init])
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
