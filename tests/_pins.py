"""The real clients' pinned verdicts: one source for the end-to-end tests that hold each
client to them (tests/e2e/test_e2e_real_clients.py) and for the published figures
(docs/compare.md, docs/findings.md), which tests/project/test_published_figures.py holds to
the same pins.

Every pinned verdict that is not a PASS is explained in docs/findings.md; update both
together, then regenerate docs/compare.md from the e2e runs (`sh tools/compare.sh`).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.clients._contract import OPERATIONS
from harness.judging._catalogue import CATALOGUE
from harness.protocol import HANDSHAKE_REVISIONS
from harness.suite import SCENARIOS
from harness.suite.auth import SCENARIOS as AUTH_SCENARIOS

Key = tuple[str, str, str, str]  # (check id, scenario, revision, transport)

HANDSHAKE = HANDSHAKE_REVISIONS
STREAMABLE = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN = ("2026-07-28",)
ALL_TRANSPORTS = ("stdio", "http", "sse-legacy")
ANY = "*"
# The two eras of "Only use capabilities that were successfully negotiated" (basic/lifecycle):
# "Both parties SHOULD" before 2025-06-18, "Both parties MUST" from it.
EARLY = ("2024-11-05", "2025-03-26")
LATE = ("2025-06-18", "2025-11-25")
SET_LEVEL_UNDECLARED = "features-set-level-undeclared"


@dataclass(frozen=True)
class Pin:
    """The items of `check` (ANY: every check) at these revisions and transports, in
    `scenario` (ANY: every scenario that has the check), have `status`: the verdict's
    kind, not only its status ("FAIL", "WARN", "N/A", "SKIP", or "BLOCKED:<root cause>"),
    so that a slide from a judged verdict into a vacuous one moves a pin."""

    status: str
    check: str
    revisions: tuple[str, ...]
    transports: tuple[str, ...] = ALL_TRANSPORTS
    scenario: str = ANY

    def covers(self, key: Key) -> bool:
        check, scenario, revision, transport = key
        return (
            self.check in (ANY, check)
            and self.scenario in (ANY, scenario)
            and revision in self.revisions
            and transport in self.transports
        )


# -- verdicts that are not PASS, by cause: docs/findings.md explains each one ----------------

# F1 (HT-9, MUST): after an HTTP 404 to a request that carries the session id, the client
# surfaces an error and never sends a new initialize.
F1 = (Pin("FAIL", "http.new-session-after-404", STREAMABLE, ("http",)),)

# F2 (LC-7): the client sends tools/list to a server that declared no tools capability
# (MUST from 2025-06-18; SHOULD before, hence WARN).
F2 = (
    Pin("FAIL", "lifecycle.negotiated-capabilities-only", ("2025-06-18", "2025-11-25")),
    Pin("WARN", "lifecycle.negotiated-capabilities-only-early", ("2024-11-05", "2025-03-26")),
)

# F3 (ST-5, MUST NOT): in a 2026-07-28 stdio session the client answers a server request
# (with a -32601 error response) instead of writing no response at all.
F3 = (
    Pin(
        "FAIL",
        "stateless.no-responses",
        MODERN,
        ("stdio",),
        scenario="stateless-server-request-and-cancel",
    ),
)

# F4 (RPC-6b, MUST): at 2025-03-26 a JSON-RPC batch from the server is rejected as a
# malformed message; the ping in it is never answered.
F4 = (Pin("FAIL", "features.batch-accepted", ("2025-03-26",)),)

# F5 (HM-5, a changelog line: NOTE): 2026-07-28 HTTP: a request whose response stream broke
# is not re-issued; only the changelog says a client must.
F5 = (Pin("NOTE", "stateless.reissue-after-broken-stream", MODERN, ("http",)),)

# F6 (RPC-9, MUST): a result with an unknown resultType is surfaced as a valid result.
F6 = (Pin("FAIL", "stateless.unknown-result-type", MODERN),)

# F7 (TL-9, MUST; tasks are experimental in 2025-11-25): a tool whose taskSupport is
# "required" is called without task augmentation.
F7 = (Pin("FAIL", "tools.task-augmentation", ("2025-11-25",)),)

# F8 (HT-12, a lowercase "should"): given the URL of an HTTP+SSE server, the client does
# not fall back to the old transport after its POST is refused with 405.
F8 = (Pin("NOTE", "http.legacy-fallback", ("2024-11-05",), ("sse-legacy",)),)

# F9 (RPC-9, MUST): a 2026-07-28 result without resultType (a legacy server's) is rejected
# by validation instead of being read as complete.
F9 = (Pin("FAIL", "stateless.absent-result-type-complete", MODERN),)

# F10 (ST-5, SHOULD): after the 2026-07-28 stdio server exits, the client does not start it
# again; every later request fails.
F10 = (Pin("WARN", "stdio.restart-after-exit", MODERN, ("stdio",)),)

# F11 (SHOULD): one POST whose connection breaks mid-response ends the whole session in the
# client: every later call fails with "Connection closed".
F11 = (Pin("NOTE", "http.session-survives-dropped-connection", STREAMABLE, ("http",)),)

# F12 (RPC-1/RPC-4, MUST): a server request whose id is an integer beyond 2^53 is never
# answered (the id does not survive parsing as a double).
F12 = (Pin("FAIL", "jsonrpc.answer-ids-exact", HANDSHAKE),)

# F13 (LC-9, SHOULD): a response stream cut inside the response event is only noticed when
# the request times out.
F13 = (Pin("NOTE", "http.dropped-connection-surfaced", STREAMABLE, ("http",)),)

# F14 (LC-7, LOG): asked to set a log level, the client sends logging/setLevel to a server
# that did not declare logging (the SDKs check no server capability before a request).
F14 = (
    Pin("WARN", "features.set-level-only-if-declared", EARLY, scenario=SET_LEVEL_UNDECLARED),
    Pin("FAIL", "features.set-level-only-if-declared", LATE, scenario=SET_LEVEL_UNDECLARED),
)

# F15 (LC-7, RES): asked to subscribe, the client sends resources/subscribe to a server whose
# resources capability does not declare subscribe.
F15 = (
    Pin("WARN", "features.subscribe-only-if-declared", EARLY),
    Pin("FAIL", "features.subscribe-only-if-declared", LATE),
)

# F16 (LC-7, COMPLETION): asked to complete an argument, the client sends
# completion/complete to a server that did not declare completions.
F16 = (
    Pin("WARN", "features.complete-only-if-declared", ("2025-03-26",)),
    Pin("FAIL", "features.complete-only-if-declared", LATE),
)

# F17 (LISTEN, SHOULD): when the server ends a subscriptions/listen stream with its result,
# the client does not listen again (the mcp SDK leaves that to its application).
F17 = (
    Pin("NOTE", "stateless.relisten-after-end", MODERN, ("http",), scenario="http-listen-relisten"),
)

# The scenarios that need a driver protocol 1.1 operation (features-set-level*, subscribe,
# completion, roots change, tasks, listen): a SKIP for a client that does not name it.
OPERATION_SCENARIOS = tuple(s.id for s in SCENARIOS if s.requires & OPERATIONS)


def skipped(*scenarios: str) -> tuple[Pin, ...]:
    return tuple(Pin("SKIP", ANY, (*HANDSHAKE, *MODERN), scenario=s) for s in scenarios)


# The checks' own SKIP: both Python SDKs declare URL-mode elicitation whenever an
# elicitation callback is set, so the undeclared-mode check has nothing to judge.
URL_MODE_DECLARED = (Pin("SKIP", "features.elicitation-undeclared-mode", ("2025-11-25",)),)

# No client declares sampling.tools, so the tool-history check (for clients that offer tool
# use in sampling) has nothing to judge.
NO_SAMPLING_TOOLS = (Pin("SKIP", "features.sampling-tool-history-checked", ("2025-11-25",)),)


# A1: a driver that does not implement the contract's authorization option (the frozen v1
# copy of the TypeScript driver) declares no "auth": every item of the authorization
# scenarios is a SKIP (docs/findings.md, "Authorization").
NO_AUTH_DECLARED = tuple(
    Pin(
        "SKIP",
        ANY,
        ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"),
        ("http",),
        scenario=s.id,
    )
    for s in AUTH_SCENARIOS
)

# A2 (AUTH-PKCE, MUST from 2025-11-25): authorization server metadata without
# code_challenge_methods_supported, and the client authorizes there all the same.
A2 = (Pin("FAIL", "auth.pkce-unadvertised-refused", ("2025-11-25",), ("http",)),)


def _registration_refused(*methods: str) -> tuple[Pin, ...]:
    """A3: the client registers for a token endpoint authentication method the
    authorization server's metadata does not list; the registration is refused, so the
    connection fails and the method the client would use is never seen."""
    return tuple(
        Pin(
            "BLOCKED:client.connect",
            "auth.token-endpoint-auth-method",
            ("2025-06-18", "2025-11-25"),
            ("http",),
            scenario=f"auth-token-auth-{method}",
        )
        for method in methods
    )


# A4: the Python SDK (and fastmcp on it) answers a 401 invalid_token with a new
# authorization, never with its refresh token, so the refresh checks have nothing to judge.
NO_REFRESH_ON_401 = (
    Pin(
        "N/A",
        "auth.refresh-token-rotated",
        ("2025-06-18", "2025-11-25", "2026-07-28"),
        ("http",),
        scenario="auth-refresh",
    ),
    Pin("N/A", "auth.refresh-grant-registered", MODERN, ("http",), scenario="auth-refresh"),
)

# A5 (AUTH-step-up, SHOULD): on 403 insufficient_scope the TypeScript SDK refreshes its token
# (without the scope) and retries once with a token that still lacks it; it never asks for
# the scope the challenge names.
A5 = (Pin("WARN", "auth.step-up", ("2025-11-25",), ("http",), scenario="auth-step-up"),)


# -- verdicts that are not judged (docs/findings.md, "Verdicts re-derived after the verdict
# rules of issue 9"): each was a vacuous PASS before --------------------------------------------

# N1: the client contract has no operation that asks a client to set a log level, and no
# client sends logging/setLevel on its own: "only if the server declared logging" has
# nothing to judge.
# Only features-set-level-undeclared asks for a level (driver protocol 1.1).
NO_SET_LEVEL = tuple(
    Pin("N/A", "features.set-level-only-if-declared", HANDSHAKE, scenario=s)
    for s in ("features-server-requests", "features-progress", "features-progress-2024")
)

# N4: the mcp SDK does not opt in to log messages at 2026-07-28 (no `log_level`: no
# `_meta` logLevel), so a conformant server sends it none: log tolerance has nothing to
# judge there. fastmcp opts in and is judged.
NO_LOG_OPT_IN = (
    Pin("N/A", "features.log-messages-accepted", MODERN, scenario="features-logging-2026"),
)

# N3: a client without 2026-07-28 (the TypeScript SDK) sends no server/discover probe, so no
# handshake-era server ever refuses one: the fallback after a refused probe has nothing to
# judge (its companion stateless.era-probe is a SKIP for such a client, R3).
NO_ERA_PROBE = (Pin("N/A", "stateless.era-fallback", ("2025-11-25",)),)

# N5: the change notification of http-listen-relisten goes out on the second listen stream;
# a client that does not listen again (F17) is sent none, so whether it surfaces one has
# nothing to judge.
NO_SECOND_LISTEN = (
    Pin(
        "N/A",
        "stateless.listen-notifications-surfaced",
        MODERN,
        ("http",),
        scenario="http-listen-relisten",
    ),
)

# N6: re-listening is owed to a server the client started again; mcp does not start it
# again (F10), so after the exit there is no new process to listen on.
NO_RESTART_TO_RELISTEN_ON = (
    Pin(
        "N/A",
        "stateless.relisten-after-restart",
        MODERN,
        ("stdio",),
        scenario="stdio-listen-restart",
    ),
)


# docs/findings.md, "Verdicts under review" (questions about the checks; all resolved):
# R1: a dual-era client's server/discover probe before initialize is what the 2026-07-28
# revision asks of it (LC-M3), no breach of LC-1.
# R2: re-listing after list_changed is not normative; the check now asks only that the list
# the application gets after the notification is fetched anew (all three clients do).
# R3: stateless.era-probe applies to dual-era clients only; a client without 2026-07-28
# gets a SKIP.
R3 = (Pin("SKIP", "stateless.era-probe", ("2025-11-25",), ("stdio",)),)
# R4: a client that refuses (locally, sending nothing) to call a task-required tool outside
# a task does not breach TL-9; the TypeScript SDK does so and passes.

# The mcp SDK adapter has every 1.1 operation but tasks (the SDK has no task requests).
_PYTHON_SDK = (
    *F1,
    *F2,
    *F3,
    *F4,
    *F5,
    *F6,
    *F7,
    *F8,
    *F9,
    *F10,
    *F11,
    *URL_MODE_DECLARED,
    *NO_SAMPLING_TOOLS,
    *NO_SET_LEVEL,
    *A2,
    *NO_REFRESH_ON_401,
)
MCP_AUTO = (
    *_PYTHON_SDK,
    *_registration_refused("post"),
    *F14,
    *F15,
    *F16,
    *F17,
    *NO_SECOND_LISTEN,
    *NO_RESTART_TO_RELISTEN_ON,
    *skipped("tools-tasks-polling"),
)

# fastmcp (built on the mcp SDK) gets the same verdicts; on its SSE transport it treats
# "auto" as "legacy" and sends no probe, which changes no verdict. fastmcp.Client has no
# resource subscription, no listen and no 2025-11-25 tasks (docs/findings.md, "Driver
# protocol 1.1"). It opts in to log messages at 2026-07-28, so it has no N4. Its OAuth
# helper registers as a public client ("none") where mcp names no method (so
# client_secret_basic): each is refused where the server does not have that method (A3).
FASTMCP = (
    *_PYTHON_SDK,
    *_registration_refused("basic", "post"),
    *F14,
    *F16,
    *skipped(
        "features-subscribe",
        "features-subscribe-undeclared",
        "tools-tasks-polling",
        "http-listen-relisten",
        "listen-two-subscriptions",
        "stdio-listen-restart",
    ),
)
MCP_AUTO = (*MCP_AUTO, *NO_LOG_OPT_IN)

# The TypeScript SDK 1.32 has no 2026-07-28 revision, and its driver says so: every item
# at 2026-07-28 is a SKIP.
_TYPESCRIPT_SDK = (
    *F1,
    *F2,
    *F4,
    *F8,
    *F12,
    *F13,
    *NO_SAMPLING_TOOLS,
    *NO_SET_LEVEL,
    *NO_ERA_PROBE,
    *R3,
    Pin("SKIP", ANY, MODERN),
)
# Its 1.1 driver has every operation but listen (2026-07-28 only); tasks through the SDK's
# experimental task API.
TYPESCRIPT_SDK = (
    *_TYPESCRIPT_SDK,
    *F14,
    *F15,
    *F16,
    *A2,
    *_registration_refused("post"),
    *A5,
)
# The v1 driver: what it passed before, and SKIP wherever a 1.1 operation is needed.
TYPESCRIPT_SDK_V1 = (*_TYPESCRIPT_SDK, *NO_AUTH_DECLARED, *skipped(*OPERATION_SCENARIOS))


# -- the small Java client of the Java kit (tests/e2e/test_e2e_java_driver.py): docs/findings.md,
# "The small Java client" ------------------------------------------------------------------------

OWN = ("stdio", "http")  # the small client's transports (it has no HTTP+SSE)

# -- the small client's verdicts that are not PASS: docs/findings.md, "The small Java client" --

# J1 (HT-9, MUST): after a 404 to a request with the session id, the error is surfaced and no
# new initialize is sent (F1 of the SDKs).
J1 = (Pin("FAIL", "http.new-session-after-404", STREAMABLE, ("http",)),)

# J2 (LC-7): the client never reads the server's capabilities: tools/list (F2 of the SDKs),
# logging/setLevel, resources/subscribe and completion/complete go to servers that declared
# none of them.
J2 = (
    Pin("FAIL", "lifecycle.negotiated-capabilities-only", ("2025-06-18", "2025-11-25"), OWN),
    Pin("WARN", "lifecycle.negotiated-capabilities-only-early", ("2024-11-05", "2025-03-26"), OWN),
    Pin("WARN", "features.set-level-only-if-declared", EARLY, OWN, scenario=SET_LEVEL_UNDECLARED),
    Pin("FAIL", "features.set-level-only-if-declared", LATE, OWN, scenario=SET_LEVEL_UNDECLARED),
    Pin("WARN", "features.subscribe-only-if-declared", EARLY, OWN),
    Pin("FAIL", "features.subscribe-only-if-declared", LATE, OWN),
    Pin("WARN", "features.complete-only-if-declared", ("2025-03-26",), OWN),
    Pin("FAIL", "features.complete-only-if-declared", LATE, OWN),
)

# J3 (RPC-6b, MUST): at 2025-03-26 a batch from the server (a JSON array) is dropped on stdio;
# over HTTP the batch comes on the GET stream, which the client never opens (J8).
J3 = (
    Pin("FAIL", "features.batch-accepted", ("2025-03-26",), ("stdio",)),
    Pin("N/A", "features.batch-accepted", ("2025-03-26",), ("http",)),
)

# J4 (TL-9, MUST): a tool whose taskSupport is "required" is called without a task (F7).
J4 = (Pin("FAIL", "tools.task-augmentation", ("2025-11-25",), OWN),)

# J5 (ELICIT, MUST): an elicitation in URL mode, which the client did not declare, is answered
# with the form-mode answer instead of error -32602.
J5 = (Pin("FAIL", "features.elicitation-undeclared-mode", ("2025-11-25",), OWN),)

# J6 (HT-3/LC-9): a POST whose answer breaks (a JSON body cut short, an SSE stream cut in the
# response event) is only logged: the request waits for its time-out (like F13).
J6 = (Pin("NOTE", "http.dropped-connection-surfaced", STREAMABLE, ("http",)),)

# J7 (HT-7, SHOULD): a response stream closed before the response is not resumed with
# Last-Event-ID; with no reconnection, the retry field has nothing to be judged on.
J7 = (
    Pin("WARN", "http.resume-with-last-event-id", ("2025-11-25",), ("http",)),
    Pin("N/A", "http.retry-honoured", ("2025-11-25",), ("http",)),
)

# J8 (N/A, HT-6): the client never opens the GET stream, so the checks about it have
# nothing to judge, and a resource update the server sends there never reaches it.
J8 = (
    Pin("N/A", "http.get-405-tolerated", STREAMABLE, ("http",)),
    Pin("N/A", "http.get-stream-accept", STREAMABLE, ("http",)),
    Pin("N/A", "features.resource-updates-surfaced", STREAMABLE, ("http",)),
)

# J9 (TL-3, SHOULD): structuredContent is not validated against the tool's outputSchema.
J9 = (Pin("WARN", "tools.output-schema-validated", ("2025-06-18", "2025-11-25"), OWN),)

# J10 (resolved, ROOTS/LC-6): over HTTP the client sends notifications/roots/list_changed as
# it must, but the server's roots/list that follows can only come on the GET stream, which
# the client never opens (J8): never delivered, so the rest of the check is N/A.
J10 = (Pin("N/A", "features.roots-list-changed", STREAMABLE, ("http",)),)

# Not judged, as for the other clients (docs/findings.md N1): the scenarios that do not ask
# for a log level.
NO_SET_LEVEL_JAVA = tuple(
    Pin("N/A", "features.set-level-only-if-declared", HANDSHAKE, OWN, scenario=scenario)
    for scenario in ("features-progress", "features-progress-2024", "features-server-requests")
)

SMALL_JAVA = (
    *J1,
    *J2,
    *J3,
    *J4,
    *J5,
    *J6,
    *J7,
    *J8,
    *J9,
    *J10,
    *NO_SET_LEVEL_JAVA,
    *NO_SAMPLING_TOOLS,
    *NO_ERA_PROBE,
    *R3,
    *NO_AUTH_DECLARED,  # A1: the Java kit does not implement headless authorization
    # It speaks neither 2026-07-28 nor the HTTP+SSE transport, and has no tasks (driver
    # protocol 1.1 "tasks"): its hello says so.
    Pin("SKIP", ANY, MODERN),
    Pin("SKIP", ANY, ("2025-11-25",), OWN, scenario="tools-tasks-polling"),
    Pin("SKIP", ANY, ("2024-11-05",), ("sse-legacy",)),
)


def expected_statuses(pins: tuple[Pin, ...], items: set[Key]) -> tuple[dict[Key, str], list[Pin]]:
    """The pinned status of every item that is not a PASS, and the pins that cover no item
    of the suite (stale: the suite changed under them)."""
    expected: dict[Key, str] = {}
    stale = []
    for pin in pins:
        covered = {key for key in items if pin.covers(key)}
        if not covered:
            stale.append(pin)
        for key in covered:
            assert expected.setdefault(key, pin.status) == pin.status, f"two pins for {key}"
    return expected, stale


def suite_items() -> set[Key]:
    """Every item the plugin collects for a full run (no filter)."""
    return {
        (check_id, scenario.id, revision, transport)
        for scenario in SCENARIOS
        for revision, transport in scenario.matrix()
        for check_id in scenario.checks
        if CATALOGUE[check_id].applies(revision, transport)
    }
