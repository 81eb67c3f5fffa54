"""The official runner's client scenarios, and the check ids of those served here.

`@modelcontextprotocol/conformance` 0.2.0-alpha.12 (pinned in tests/e2e-node) runs a
client's conformance command once per client scenario and judges what its server saw with
check ids of its own. This module keeps, from its `requirements/<revision>.yaml`, the
scored client scenarios of each revision (the tier figure's denominator), and for every
scenario mcp-testbench serves (`SERVED`): where its server listens, the script that serves
it here, and every check id it emits, with the runner's rule for it in words. The rules
themselves, applied to a transcript, are `_parity`. A test reads the pinned package and
fails when an id here is not emitted there, or a scored list differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CLIENT_RUNNER_VERSION",
    "NOT_SCORED_CLIENT",
    "SCORED_CLIENT",
    "SERVED",
    "ClientScenario",
    "OfficialClientCheck",
    "served_scenario",
]

CLIENT_RUNNER_VERSION = "0.2.0-alpha.12"

#: `client:` of requirements/<revision>.yaml: what the tier figure counts, in its order.
SCORED_CLIENT: Mapping[str, tuple[str, ...]] = {
    "2025-11-25": (
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
    ),
    "2026-07-28": (
        "tools_call",
        "request-metadata",
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
    ),
}

#: The client scenarios of `not_scored` (run by `--requirements`, never counted), the same
#: at both revisions.
NOT_SCORED_CLIENT: tuple[str, ...] = (
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
    "json-schema-2020-12-preservation",
)

Emitted = Literal["always", "on event", "on failure", "info", "harness"]


@dataclass(frozen=True)
class OfficialClientCheck:
    id: str
    emitted: Emitted
    """`always`: the runner emits it in every run (a FAILURE when what it is about never
    happened); `on event`: only when that happens; `on failure`: only as a FAILURE (its
    silence is the pass); `info`: a log line, never scored; `harness`: the runner's own
    fault, never a client's."""
    rule: str
    """The runner's rule, in words (the code is `_parity`)."""
    ours: tuple[str, ...] = ()
    """The suite's checks that judge the same behaviour on the same traffic."""
    note: str = ""
    """How ours differs, or why there is none."""


@dataclass(frozen=True)
class ClientScenario:
    """An official client scenario served here, at the revisions it is served at."""

    name: str
    revisions: tuple[str, ...]
    url_path: str
    """After `http://localhost:PORT` in the URL the runner gives: "" or "/mcp"."""
    checks: tuple[OfficialClientCheck, ...]
    ours: tuple[str, ...]
    """The suite's checks judged on the same transcript (they need nothing but it)."""
    surfaced: tuple[str, ...] = ()
    """The suite's checks about this exchange that need what the client surfaced to its
    caller, which a conformance client never tells the harness: N/A here."""
    context: Mapping[str, Any] | None = None
    allow_client_error: bool = False
    wire_schema: bool = False
    """The scenario's server is the runner's `createServer`, whose traffic it validates
    (`wire-schema-valid`)."""
    only_at: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Check ids emitted at some revisions only."""

    def script(self, revision: str) -> str:
        """The script that serves it at `revision`, under fixtures/."""
        return f"conformance-clients/{revision}/{self.name}.json"

    def expected(self, revision: str) -> tuple[str, ...]:
        """The ids a run at `revision` must judge for the scenario to pass here: those
        the runner emits for a client that does what the scenario asks (not its log
        lines, its own faults, nor the ids it emits only as failures)."""
        return tuple(
            c.id
            for c in self.checks
            if c.emitted in ("always", "on event")
            and revision in self.only_at.get(c.id, (revision,))
        )


_WIRE_SCHEMA = OfficialClientCheck(
    "wire-schema-valid",
    "on event",
    "emitted when the server saw any message (a JSON POST body, or its own result): "
    "FAILURE when a body the client POSTed to /mcp is not valid against the JSON schema "
    "of the version its MCP-Protocol-Version header names (no header: 2025-03-26; an "
    "unknown one: the run's; at 2026-07-28 always the run's), else SUCCESS",
    ("jsonrpc.messages-valid",),
    "ours validates every message at the run's revision, in every scenario, and names "
    "the member at fault; here both are reported",
)
_WIRE_HARNESS = OfficialClientCheck(
    "wire-schema-harness-error",
    "harness",
    "FAILURE when the runner's own server sent a message its schema forbids: its bug, "
    "never a client verdict; judged here as the send gate's mock_error",
    note="a harness fault on either side; here a mock error blocks the run's items",
)

_SEP1034 = "present and of the schema's type (any value: the runner does not check the default)"
_ELICITATION_FIELDS = (
    ("string", "name", "a string"),
    ("integer", "age", "a number"),
    ("number", "score", "a number"),
    ("enum", "status", "a string among active, inactive, pending"),
    ("boolean", "verified", "a boolean"),
)

SERVED: tuple[ClientScenario, ...] = (
    ClientScenario(
        "initialize",
        ("2025-11-25",),
        "",
        (
            OfficialClientCheck(
                "mcp-client-initialization",
                "on event",
                "per initialize: SUCCESS iff params.protocolVersion is 2025-06-18, "
                "2025-11-25 or 2026-07-28 and clientInfo has a name and a version (JSON "
                "truthiness), else FAILURE; no initialize, no check at all",
                ("lifecycle.offers-supported-version", "lifecycle.initialize-first"),
                "theirs accepts 2026-07-28 in an initialize and says nothing when no "
                "initialize comes; a run without one passes the runner's --requirements "
                "line and not here (nothing was judged)",
            ),
            OfficialClientCheck("server-info", "info", "logged with each initialize"),
        ),
        ours=(
            "jsonrpc.messages-valid",
            "jsonrpc.request-ids-unique",
            "http.accept-header",
            "http.one-message-per-post",
            "lifecycle.offers-supported-version",
            "lifecycle.initialized-notification",
            "lifecycle.no-request-before-initialize-response",
        ),
    ),
    ClientScenario(
        "tools_call",
        ("2025-11-25", "2026-07-28"),
        "/mcp",
        (
            OfficialClientCheck(
                "tool-add-numbers",
                "always",
                "SUCCESS iff the first tools/call the server recorded (any tool name, "
                "refused or not) has arguments a and b of JSON number type, else FAILURE",
                note="ours (tools.call-result) judges what the client surfaced of the "
                "answer, which a conformance client does not report: N/A here",
            ),
            _WIRE_SCHEMA,
            _WIRE_HARNESS,
        ),
        ours=(
            "jsonrpc.messages-valid",
            "jsonrpc.request-ids-unique",
            "http.accept-header",
            "http.one-message-per-post",
            "http.protocol-version-header",
            "lifecycle.offers-supported-version",
            "lifecycle.initialized-notification",
            "lifecycle.no-request-before-initialize-response",
            "stateless.meta-on-every-request",
            "stateless.standard-headers",
            "stateless.no-removed-methods",
            "stateless.http-post-only",
        ),
        surfaced=("tools.call-result",),
        wire_schema=True,
    ),
    ClientScenario(
        "elicitation-sep1034-client-defaults",
        ("2025-11-25",),
        "/mcp",
        (
            *(
                OfficialClientCheck(
                    f"client-elicitation-sep1034-{kind}-default",
                    "always",
                    f"on an accepted elicitation: SUCCESS iff content.{name} is {shown}, "
                    f"else FAILURE; FAILURE when the elicitation was not accepted or never "
                    f"answered ({_SEP1034})",
                    note="ours does not judge default values: how a form fills them is "
                    "a matter of the client's UI",
                )
                for kind, name, shown in _ELICITATION_FIELDS
            ),
            OfficialClientCheck(
                "client-elicitation-sep1034-general",
                "on failure",
                "FAILURE when the client answered the elicitation with an action other "
                "than accept, with an error, or with a result that is no ElicitResult",
                ("features.elicitation-answer",),
                "ours judges that the answer is a well-formed ElicitResult, whatever the "
                "action (a user may decline)",
            ),
            OfficialClientCheck("incoming-request", "info", "logged per HTTP request"),
            OfficialClientCheck("outgoing-response", "info", "logged per HTTP response"),
        ),
        ours=(
            "jsonrpc.messages-valid",
            "jsonrpc.request-ids-unique",
            "jsonrpc.answers-well-formed",
            "http.accept-header",
            "http.one-message-per-post",
            "http.session-id-echoed",
            "http.protocol-version-header",
            "http.get-stream-accept",
            "lifecycle.offers-supported-version",
            "lifecycle.initialized-notification",
            "lifecycle.no-request-before-initialize-response",
            "lifecycle.undeclared-feature-refused",
            "features.elicitation-answer",
        ),
    ),
    ClientScenario(
        "sse-retry",
        ("2025-11-25",),
        "",
        (
            OfficialClientCheck(
                "client-sse-graceful-reconnect",
                "always",
                "SUCCESS iff the server saw any GET, even one before the tool call; else "
                "FAILURE, and then no other check",
                ("http.resume-with-last-event-id",),
                "ours asks for a GET after the close, carrying Last-Event-ID",
            ),
            OfficialClientCheck(
                "client-sse-retry-timing",
                "on event",
                "when a GET came: with the tool stream's close time and the last GET's "
                "arrival both known, FAILURE iff the GET came less than 450 ms (retry "
                "500 ms less 50 ms) after the close, else SUCCESS; INFO when either is "
                "unknown",
                ("http.retry-honoured",),
                "ours measures the first reconnection after the close; theirs the last GET",
            ),
            OfficialClientCheck(
                "client-sse-last-event-id",
                "on event",
                "when a GET came: SUCCESS iff some GET carried Last-Event-ID, else WARNING",
                ("http.resume-with-last-event-id",),
            ),
            OfficialClientCheck("incoming-request", "info", "logged per request"),
            OfficialClientCheck("outgoing-sse-event", "info", "logged per SSE event"),
            OfficialClientCheck("outgoing-response", "info", "logged per JSON response"),
            OfficialClientCheck("outgoing-stream-close", "info", "logged at the close"),
        ),
        ours=(
            "jsonrpc.messages-valid",
            "jsonrpc.request-ids-unique",
            "http.accept-header",
            "http.one-message-per-post",
            "http.session-id-echoed",
            "http.protocol-version-header",
            "http.get-stream-accept",
            "http.retry-honoured",
            "lifecycle.offers-supported-version",
            "lifecycle.initialized-notification",
            "lifecycle.no-request-before-initialize-response",
        ),
        surfaced=("http.resume-with-last-event-id",),
    ),
)


def served_scenario(name: str) -> ClientScenario | None:
    """The served scenario of that official name, if it is served here."""
    return next((s for s in SERVED if s.name == name), None)
