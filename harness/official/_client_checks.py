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

from harness.running import AUTHORIZATION_SERVER

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

Emitted = Literal["always", "on event", "if applicable", "on failure", "info", "harness"]


@dataclass(frozen=True)
class OfficialClientCheck:
    id: str
    emitted: Emitted
    """`always`: the runner emits it in every run (a FAILURE when what it is about never
    happened); `on event`: only when that happens; `if applicable`: in every run, SKIPPED
    when what it judges is not there (a capability the client does not declare), so never
    expected of a client; `on failure`: only as a FAILURE (its
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
    """Check ids expected at some revisions only (an empty tuple: at none, though the
    runner may emit them)."""

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


# -- 2026-07-28: request metadata, MRTR, the standard and custom headers ------------------------
# (rules: `_parity_stateless`; scripts: tools/conformance_client_scripts.py)

#: The suite's checks that need nothing but a 2026-07-28 transcript over HTTP.
_STATELESS_OURS = (
    "jsonrpc.messages-valid",
    "jsonrpc.request-ids-unique",
    "http.accept-header",
    "http.one-message-per-post",
    "stateless.meta-on-every-request",
    "stateless.standard-headers",
    "stateless.no-removed-methods",
    "stateless.http-post-only",
)


def _capability_check(name: str) -> OfficialClientCheck:
    return OfficialClientCheck(
        f"sep-2575-client-declares-{name}-capability",
        "if applicable",
        f"per request, the worst so far: SKIPPED unless _meta clientCapabilities has {name}; "
        "then SUCCESS iff its value is an object (not null, not an array), else FAILURE; "
        "FAILURE when the server saw no request",
        note="ours (jsonrpc.messages-valid) holds the capabilities to the schema",
    )


_REQUEST_METADATA = ClientScenario(
    "request-metadata",
    ("2026-07-28",),
    "",
    (
        OfficialClientCheck(
            "sep-2575-http-client-sends-version-header",
            "always",
            "per POST that parses, the worst so far: FAILURE when it has no "
            "MCP-Protocol-Version header, else SUCCESS; FAILURE when the server saw none",
            ("http.protocol-version-header", "stateless.standard-headers"),
        ),
        OfficialClientCheck(
            "sep-2575-client-populates-meta",
            "always",
            "per POST, the worst so far: SUCCESS iff _meta has a truthy protocolVersion and "
            "clientCapabilities, else FAILURE",
            ("stateless.meta-on-every-request",),
        ),
        OfficialClientCheck(
            "sep-2575-client-sends-client-info",
            "always",
            "per POST, the worst so far: SUCCESS iff _meta has a truthy clientInfo, else "
            "WARNING (a SHOULD)",
            ("stateless.meta-on-every-request",),
        ),
        OfficialClientCheck(
            "sep-2575-http-version-header-matches-meta",
            "always",
            "per POST, the worst so far: SKIPPED unless both the header and _meta "
            "protocolVersion are there; then SUCCESS iff they are equal, else FAILURE",
            ("stateless.standard-headers",),
        ),
        _capability_check("roots"),
        _capability_check("sampling"),
        _capability_check("elicitation"),
        OfficialClientCheck(
            "sep-2575-client-retry-supported-version",
            "always",
            "the first request is refused (HTTP 400, -32022, supported 2026-07-28): WARNING; "
            "every later request sets it: SUCCESS iff its header and _meta version are both "
            "2026-07-28, else WARNING (the last request decides)",
            note="ours (stateless.retry-after-unsupported-version) needs the call the "
            "client was asked to make: N/A here",
        ),
    ),
    ours=_STATELESS_OURS,
    surfaced=("stateless.retry-after-unsupported-version",),
)

_MRTR_RETRY = "stateless.mrtr-retry"
_REQUEST_STATE = ClientScenario(
    "sep-2322-client-request-state",
    ("2026-07-28",),
    "/mcp",
    (
        OfficialClientCheck(
            "sep-2322-client-request-state-echoed",
            "always",
            "per retry of test_mrtr_echo_state (a call with truthy inputResponses): SUCCESS "
            "iff its requestState is exactly the one the last first call was answered with; "
            "FAILURE when absent or changed; FAILURE when no retry came",
            (_MRTR_RETRY,),
        ),
        OfficialClientCheck(
            "sep-2322-client-jsonrpc-id-different",
            "always",
            "per retry of test_mrtr_echo_state: FAILURE iff its id is that of the last first "
            "call (===), else SUCCESS; FAILURE when no retry came",
            (_MRTR_RETRY, "jsonrpc.request-ids-unique"),
        ),
        OfficialClientCheck(
            "sep-2322-client-no-state-omitted",
            "always",
            "per retry of test_mrtr_no_state: FAILURE iff it has a requestState member (even "
            "null), else SUCCESS; FAILURE when no retry came",
            (_MRTR_RETRY,),
        ),
        OfficialClientCheck(
            "sep-2322-client-parallel-isolation",
            "always",
            "per call of test_mrtr_unrelated: FAILURE iff it has an inputResponses or "
            "requestState member, else SUCCESS; FAILURE when never called",
        ),
        OfficialClientCheck(
            "sep-2322-default-result-type-complete",
            "always",
            "per call of test_mrtr_no_result_type (answered without resultType): SUCCESS "
            "without inputResponses; a retry with them replaces the first verdict with a "
            "FAILURE; FAILURE when never called",
            note="ours (stateless.absent-result-type-complete) needs what the client "
            "surfaced of that result: N/A here",
        ),
    ),
    ours=(*_STATELESS_OURS, _MRTR_RETRY),
    surfaced=("stateless.absent-result-type-complete",),
)

_STANDARD = OfficialClientCheck(
    "sep-2243-client-includes-standard-headers",
    "always",
    "one verdict per method, on its first request (any path; server/discover not seen): "
    "SUCCESS iff Mcp-Method equals the body's method, else FAILURE; one more on the first "
    "tools/call, resources/read and prompts/get: SUCCESS iff Mcp-Name equals params.name "
    "(params.uri), else FAILURE; SKIPPED for each of initialize, notifications/initialized, "
    "tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get not "
    "sent, and for each named method not sent",
    ("stateless.standard-headers",),
    "ours judges every request, not only each method's first",
)
_STANDARD_HEADERS = ClientScenario(
    "http-standard-headers",
    ("2026-07-28",),
    "",
    (_STANDARD,),
    ours=_STATELESS_OURS,
)

_CUSTOM_RULE = (
    "the header Mcp-Param-<name> must carry the argument: as is, or in =?base64?...?= (a "
    "value with a character outside printable ASCII or whitespace at an end must be in "
    "Base64), integers compared as numbers, booleans as true/false"
)
_CUSTOM_HEADERS = ClientScenario(
    "http-custom-headers",
    ("2026-07-28",),
    "",
    (
        OfficialClientCheck(
            "sep-2243-client-supports-custom-headers",
            "always",
            "per call of test_custom_headers: SUCCESS iff any Mcp-Param-* header came, else "
            "FAILURE; FAILURE when never called",
            ("stateless.x-mcp-header",),
        ),
        OfficialClientCheck(
            "sep-2243-client-mirrors-designated-params",
            "always",
            "per call of test_custom_headers: for each plain string argument (region, "
            f"empty_val, method_val, internal_space_val), {_CUSTOM_RULE}; and SUCCESS iff no "
            "Mcp-Param-FloatVal and no Mcp-Param-Query (unannotated) came",
            ("stateless.x-mcp-header",),
        ),
        OfficialClientCheck(
            "sep-2243-client-encode-values",
            "always",
            f"per call of test_custom_headers: for priority, verbose and debug, {_CUSTOM_RULE}",
            ("stateless.x-mcp-header",),
        ),
        OfficialClientCheck(
            "sep-2243-client-base64-unsafe",
            "always",
            "per call of test_custom_headers: for each string argument that needs Base64 "
            f"(non_ascii_val, whitespace_val, ..., tab_val), {_CUSTOM_RULE}",
            ("stateless.x-mcp-header",),
        ),
        OfficialClientCheck(
            "sep-2243-client-omit-null",
            "always",
            "per call of test_custom_headers_null (verbose null): SUCCESS iff no "
            "Mcp-Param-Verbose came, else FAILURE; FAILURE when never called",
            ("stateless.x-mcp-header",),
        ),
    ),
    ours=_STATELESS_OURS,
    surfaced=("stateless.x-mcp-header",),
    context={
        "toolCalls": [
            {
                "name": "test_custom_headers",
                "arguments": {
                    "region": "us-west1",
                    "priority": 42,
                    "verbose": False,
                    "debug": True,
                    "empty_val": "",
                    "method_val": "test-method",
                    "float_val": 3.14159,
                    "non_ascii_val": "Hello, 世界",
                    "whitespace_val": " padded ",
                    "leading_space_val": " us-west1",
                    "trailing_space_val": "us-west1 ",
                    "internal_space_val": "us west 1",
                    "control_char_val": "line1\nline2",
                    "crlf_val": "line1\r\nline2",
                    "tab_val": "\tindented",
                    "query": "SELECT * FROM users",
                },
            },
            {
                "name": "test_custom_headers_null",
                "arguments": {
                    "region": "us-east1",
                    "priority": 1,
                    "verbose": None,
                    "query": "SELECT 1",
                },
            },
        ]
    },
)


def _not_called(check: str, tools: str) -> OfficialClientCheck:
    return OfficialClientCheck(
        check,
        "always",
        f"one verdict per tool ({tools}): FAILURE iff the client called it, else SUCCESS",
        note="ours (stateless.x-mcp-header) judges what the client listed to its caller: N/A here",
    )


_INVALID_TOOL_HEADERS = ClientScenario(
    "http-invalid-tool-headers",
    ("2026-07-28",),
    "",
    (
        OfficialClientCheck(
            "sep-2243-invalid-tool-tools-list-gate",
            "on failure",
            "FAILURE when the client sent no tools/list",
        ),
        OfficialClientCheck(
            "sep-2243-client-reject-invalid-tool",
            "always",
            "SUCCESS iff the client called valid_tool, else FAILURE",
        ),
        _not_called("sep-2243-x-mcp-header-not-empty", "invalid_empty_header"),
        _not_called(
            "sep-2243-x-mcp-header-primitive-only",
            "invalid_object_header, invalid_array_header, invalid_null_header, "
            "invalid_number_header",
        ),
        _not_called(
            "sep-2243-x-mcp-header-unique",
            "invalid_duplicate_same_case, invalid_duplicate_diff_case",
        ),
        _not_called(
            "sep-2243-x-mcp-header-charset",
            "invalid_space_in_name, invalid_colon_in_name, invalid_non_ascii_name, "
            "invalid_control_char_name",
        ),
    ),
    ours=_STATELESS_OURS,
    surfaced=("stateless.x-mcp-header",),
    allow_client_error=True,
)

_NO_REF_DEREF = ClientScenario(
    "json-schema-ref-no-deref",
    ("2026-07-28",),
    "/mcp",
    (
        OfficialClientCheck(
            "sep-2106-no-network-ref-deref",
            "always",
            "once, at the end: FAILURE when its server never listed the tools (no POST /mcp "
            "with a JSON body holding a tools/list request that its SDK transport took: "
            "Accept naming application/json and text/event-stream, a known version header); "
            "else FAILURE iff any request, of any method, came for the canary schema the "
            "tool's network $ref names (/canary/profile-schema.json on its own origin), "
            "else SUCCESS",
            note="the suite has no check of its own on dereferencing tool schemas",
        ),
    ),
    ours=_STATELESS_OURS,
)

SERVED += (
    _REQUEST_METADATA,
    _REQUEST_STATE,
    _STANDARD_HEADERS,
    _CUSTOM_HEADERS,
    _INVALID_TOOL_HEADERS,
    _NO_REF_DEREF,
)


# -- authorization (2025-11-25 and 2026-07-28) ----------------------------------------------------
#
# The runner's auth scenarios share an authorization server (`J`), which records a check per
# request it takes, and a protected resource (`X`), which records one per bearer token shown
# to its verifier (`Y`). The metadata variants (`to`, one per entry of `eo`) backfill a
# FAILURE per step never taken; the token endpoint ones (`_o`) judge each token request's
# client authentication. Both then add `Qa`'s RFC 8707 checks. The rules are `_auth_parity`.


# `Qa`: RFC 8707, from the last authorization and token requests.
_RESOURCE_CHECKS: tuple[OfficialClientCheck, ...] = (
    *(
        OfficialClientCheck(
            f"resource-parameter-in-{where}",
            "always",
            f"SUCCESS iff the last {where} request had a non-empty resource, else FAILURE",
            ("auth.resource-parameter",),
        )
        for where in ("authorization", "token")
    ),
    OfficialClientCheck(
        "resource-parameter-valid-uri",
        "on event",
        "when either request had one: SUCCESS iff the authorization request's resource "
        "(else the token request's) parses as a URL without a fragment",
        ("auth.resource-parameter",),
    ),
    OfficialClientCheck(
        "resource-parameter-consistency",
        "on event",
        "when both had one: SUCCESS iff the two are the same string",
        ("auth.resource-parameter",),
    ),
    OfficialClientCheck(
        "resource-parameter-matches-prm",
        "on event",
        "when the resource metadata was served and either request had a resource "
        "(even empty): SUCCESS iff each is exactly the resource the metadata named",
        ("auth.resource-parameter",),
    ),
)


def _auth_step(
    check_id: str, what: str, backfilled: bool, ours: tuple[str, ...] = ()
) -> OfficialClientCheck:
    if backfilled:
        return OfficialClientCheck(
            check_id,
            "always",
            f"SUCCESS per {what}; a FAILURE ('Expected Check Missing') when none came",
            ours,
            "a step, not a rule: ours judge how the step was taken",
        )
    return OfficialClientCheck(
        check_id, "on event", f"SUCCESS per {what}; nothing when none came", ours
    )


def _auth_checks(
    *,
    steps_backfilled: bool,
    prm_backfilled: bool,
    trap_root_prm: bool = False,
    trap_root_as: bool = False,
    token_auth: str | None = None,
    scope_check: tuple[str, str] | None = None,
    resource_checks: bool = True,
) -> tuple[OfficialClientCheck, ...]:
    checks = [
        _auth_step(
            "prm-pathbased-requested",
            "GET of the resource metadata location (whatever its path: the id is the same)",
            prm_backfilled,
            ("auth.prm-discovery-order",),
        )
    ]
    if trap_root_prm:
        checks.append(
            OfficialClientCheck(
                "prm-priority-order",
                "on failure",
                "FAILURE per GET of the root resource metadata location (the server's is "
                "path-based; answered 404)",
                ("auth.prm-discovery-order",),
            )
        )
    checks.append(
        _auth_step(
            "authorization-server-metadata",
            "GET of the authorization server metadata at its one location",
            steps_backfilled,
            ("auth.as-metadata-order",),
        )
    )
    if trap_root_as:
        checks.append(
            OfficialClientCheck(
                "authorization-server-metadata-wrong-path",
                "on failure",
                "FAILURE per GET of /.well-known/oauth-authorization-server at the root of "
                "an issuer with a path (answered 404)",
                ("auth.as-metadata-order",),
            )
        )
    checks += [
        _auth_step("client-registration", "POST to the registration endpoint", steps_backfilled),
        OfficialClientCheck(
            _APPLICATION_TYPE,
            "on event",
            "per POST to the registration endpoint, at 2026-07-28 only: SUCCESS iff its "
            "application_type is native or web, else FAILURE (SEP-837, a MUST)",
        ),
        _auth_step("authorization-request", "GET of the authorization endpoint", steps_backfilled),
        OfficialClientCheck(
            "pkce-code-challenge-sent",
            "on event",
            "per authorization request: SUCCESS iff code_challenge is non-empty",
            ("auth.pkce-s256",),
        ),
        OfficialClientCheck(
            "pkce-s256-method-used",
            "on event",
            "per authorization request: SUCCESS iff code_challenge_method is S256",
            ("auth.pkce-s256",),
        ),
        _auth_step("token-request", "POST to the token endpoint (any grant)", steps_backfilled),
        OfficialClientCheck(
            "pkce-code-verifier-sent",
            "on event",
            "per authorization_code token request: SUCCESS iff code_verifier is non-empty",
            ("auth.pkce-s256",),
        ),
        OfficialClientCheck(
            "pkce-verifier-matches-challenge",
            "on event",
            "per authorization_code token request: SUCCESS iff S256(code_verifier) is the "
            "last authorization request's code_challenge",
            ("auth.pkce-s256",),
        ),
    ]
    if scope_check is not None:
        check_id, rule = scope_check
        checks.append(
            OfficialClientCheck(
                check_id,
                "always",
                f"per authorization request: SUCCESS iff {rule}, else WARNING (a SHOULD); "
                "a FAILURE when no authorization request came",
                ("auth.scope-selection",),
            )
        )
    if token_auth is not None:
        checks.append(
            OfficialClientCheck(
                "token-endpoint-auth-method",
                "always",
                f"per token request (any grant): SUCCESS iff it authenticated with "
                f"{token_auth}, the one method the server names (an Authorization starting "
                "`Basic ` whose decoded value has a colon: client_secret_basic; else a "
                "client_secret in the body: client_secret_post; else none); a FAILURE when "
                "no token request came",
                ("auth.token-endpoint-auth-method",),
            )
        )
    checks += [
        OfficialClientCheck(
            "valid-bearer-token",
            "on event",
            "per POST /mcp whose Authorization is `Bearer <token>`: SUCCESS when the "
            "token is one the authorization server issued",
            ("auth.bearer-header-only",),
        ),
        OfficialClientCheck(
            "invalid-bearer-token",
            "on failure",
            "per POST /mcp whose Authorization is `Bearer <token>`: FAILURE when the "
            "token is not one the authorization server issued",
            ("auth.bearer-header-only",),
        ),
        *(_RESOURCE_CHECKS if resource_checks else ()),
        *(
            OfficialClientCheck(log, "info", "logged per request or response")
            for log in (
                "incoming-auth-request",
                "outgoing-auth-response",
                "incoming-request",
                "outgoing-response",
            )
        ),
    ]
    return tuple(checks)


#: At 2026-07-28 the runner's registration route also judges the application type.
_APPLICATION_TYPE = "sep-837-application-type-present"
_AUTH_REVISIONS = ("2025-11-25", "2026-07-28")
_MODERN_ONLY = {_APPLICATION_TYPE: ("2026-07-28",)}

# Not the HTTP checks that read every POST as an MCP one (the authorization server's
# registration and token requests are POSTs too), nor lifecycle.initialized-notification,
# which looks for the answer to the first initialize: here the one refused with the 401.
_AUTH_OURS = (
    "jsonrpc.messages-valid",
    "jsonrpc.request-ids-unique",
    "lifecycle.offers-supported-version",
    "auth.prm-discovery-order",
    "auth.as-metadata-order",
    "auth.pkce-s256",
    "auth.resource-parameter",
    "auth.bearer-header-only",
)

_AUTH_METADATA = tuple(
    ClientScenario(
        f"auth/{name}",
        _AUTH_REVISIONS,
        "/mcp",
        _auth_checks(
            steps_backfilled=True,
            prm_backfilled=path_based,
            trap_root_prm=trap_prm,
            trap_root_as=trap_as,
        ),
        ours=_AUTH_OURS,
        only_at=_MODERN_ONLY,
    )
    for name, path_based, trap_prm, trap_as in (
        ("metadata-default", True, True, False),
        ("metadata-var1", True, False, False),
        ("metadata-var2", False, False, True),
        ("metadata-var3", False, False, True),
    )
)
_TOKEN_ENDPOINT_AUTH = tuple(
    ClientScenario(
        f"auth/token-endpoint-auth-{short}",
        _AUTH_REVISIONS,
        "/mcp",
        _auth_checks(steps_backfilled=False, prm_backfilled=False, token_auth=method),
        ours=(*_AUTH_OURS, "auth.token-endpoint-auth-method"),
        only_at=_MODERN_ONLY,
    )
    for short, method in (
        ("basic", "client_secret_basic"),
        ("post", "client_secret_post"),
        ("none", "none"),
    )
)

_SCOPE_SELECTION = tuple(
    ClientScenario(
        f"auth/{check_id}",
        _AUTH_REVISIONS,
        "/mcp",
        _auth_checks(
            steps_backfilled=False,
            prm_backfilled=False,
            scope_check=(check_id, rule),
            resource_checks=False,
        ),
        ours=(*_AUTH_OURS, "auth.scope-selection"),
        only_at=_MODERN_ONLY,
    )
    for check_id, rule in (
        ("scope-from-www-authenticate", "its scope includes mcp:basic, which the 401 named"),
        (
            "scope-from-scopes-supported",
            "its scope includes mcp:basic, mcp:read and mcp:write, the resource metadata's "
            "scopes_supported",
        ),
        ("scope-omitted-when-undefined", "it has no scope, or a blank one"),
    )
)

_PRE_REGISTRATION = ClientScenario(
    "auth/pre-registration",
    _AUTH_REVISIONS,
    "/mcp",
    (
        *_auth_checks(steps_backfilled=False, prm_backfilled=False, resource_checks=False),
        OfficialClientCheck(
            "pre-registration-auth",
            "always",
            "per token request: SUCCESS iff its Authorization starts `Basic ` and decodes "
            "to pre-registered-client:pre-registered-secret (the context's credentials), "
            "else FAILURE (and a 401); a FAILURE when no token request came",
            ("auth.pre-registered-first",),
        ),
    ),
    ours=(*_AUTH_OURS, "auth.pre-registered-first", "auth.token-endpoint-auth-method"),
    # The registration route is there though the metadata names none: a client that
    # registers all the same gets its SUCCESS, but none is expected of it, at any revision.
    only_at={"client-registration": (), _APPLICATION_TYPE: ()},
    # As the runner hands them to the client; the issuer is the mock's, once it listens.
    context={
        "client_id": "pre-registered-client",
        "client_secret": "pre-registered-secret",
        "issuer": AUTHORIZATION_SERVER,
    },
)

_BASIC_CIMD = ClientScenario(
    "auth/basic-cimd",
    _AUTH_REVISIONS,
    "/mcp",
    (
        *_auth_checks(steps_backfilled=False, prm_backfilled=False, resource_checks=False),
        OfficialClientCheck(
            "cimd-client-id-used",
            "always",
            "per authorization request: SUCCESS iff client_id is "
            "https://conformance-test.local/client-metadata.json, else WARNING (a SHOULD); "
            "a FAILURE when no authorization request came",
        ),
    ),
    ours=_AUTH_OURS,
    # A client that uses its document does not register; one that does gets its SUCCESS.
    only_at={"client-registration": (), _APPLICATION_TYPE: ()},
)

# `fo`: initialize and notifications go through without a token; the 401 names mcp:basic;
# a tools/call needs mcp:write, any other request mcp:basic (a 403 naming mcp:write alone).
_SCOPE_STEP_UP = ClientScenario(
    "auth/scope-step-up",
    _AUTH_REVISIONS,
    "/mcp",
    (
        *_auth_checks(steps_backfilled=False, prm_backfilled=False, resource_checks=False),
        OfficialClientCheck(
            "scope-step-up-initial",
            "always",
            "on the first authorization request: SUCCESS iff its scope includes mcp:basic, "
            "which the 401 named, else WARNING (a SHOULD); a FAILURE when none came",
            ("auth.scope-selection",),
        ),
        OfficialClientCheck(
            "scope-step-up-escalation",
            "always",
            "on the second authorization request: SUCCESS iff its scope includes mcp:write, "
            "which the 403 named, else WARNING (a SHOULD); a FAILURE when none came",
            ("auth.step-up",),
        ),
        OfficialClientCheck(
            "sep-2350-scope-union-on-reauth",
            "always",
            "at 2026-07-28, on the second authorization request: SUCCESS iff its scope still "
            "includes mcp:basic (the union of what was asked and what was challenged), else "
            "WARNING (a SHOULD); a FAILURE when no second one came",
            note="ours names the union in its own scenario's 403; here the 403 names "
            "mcp:write alone, as the runner's does",
        ),
    ),
    ours=(*_AUTH_OURS, "auth.scope-selection", "auth.step-up"),
    only_at={**_MODERN_ONLY, "sep-2350-scope-union-on-reauth": ("2026-07-28",)},
)

# `po`: every request with a token (but initialize and notifications) gets 403
# insufficient_scope for mcp:admin, whatever the token: no token is verified.
_SCOPE_RETRY_LIMIT = ClientScenario(
    "auth/scope-retry-limit",
    _AUTH_REVISIONS,
    "/mcp",
    (
        *_auth_checks(steps_backfilled=False, prm_backfilled=False, resource_checks=False),
        OfficialClientCheck(
            "scope-retry-limit",
            "always",
            "once, at the end: SUCCESS iff the client made 1 to 3 authorization requests; a "
            "FAILURE for none or more than 3",
            ("auth.step-up-bounded",),
        ),
        OfficialClientCheck("scope-retry-auth-attempt", "info", "logged per authorization request"),
    ),
    ours=(*_AUTH_OURS, "auth.step-up-bounded"),
    # Its resource verifies no token: the bearer checks are never emitted.
    only_at={**_MODERN_ONLY, "valid-bearer-token": ()},
    allow_client_error=True,
)

SERVED += (
    *_AUTH_METADATA,
    *_TOKEN_ENDPOINT_AUTH,
    *_SCOPE_SELECTION,
    _PRE_REGISTRATION,
    _BASIC_CIMD,
    _SCOPE_STEP_UP,
    _SCOPE_RETRY_LIMIT,
)


# -- authorization (2026-07-28 only) ------------------------------------------------------------
#
# Eleven scenarios on the same two servers, each with one departure and a check of its own
# (`Eo`, `es`, `ts`, `ns`, `os` to `fs`; the rules are `_auth_parity_modern`). A client that
# does what most of them ask stops part way (it refuses what it was given), so the steps
# after that point are not expected of it.

#: The shared checks a client that stops at that point never gets (after it, in order).
_AFTER_TOKEN = ("valid-bearer-token",)
_AFTER_AUTHORIZATION = (
    "token-request",
    "pkce-code-verifier-sent",
    "pkce-verifier-matches-challenge",
    *_AFTER_TOKEN,
)
_AFTER_METADATA = (
    "client-registration",
    _APPLICATION_TYPE,
    "authorization-request",
    "pkce-code-challenge-sent",
    "pkce-s256-method-used",
    *_AFTER_AUTHORIZATION,
)
_AFTER_PRM = ("authorization-server-metadata", *_AFTER_METADATA)


def _modern_auth(
    name: str,
    own: tuple[OfficialClientCheck, ...],
    *,
    not_expected: tuple[str, ...] = (),
    ours: tuple[str, ...] = (),
    allow_client_error: bool = False,
) -> ClientScenario:
    return ClientScenario(
        name,
        ("2026-07-28",),
        "/mcp",
        (*_auth_checks(steps_backfilled=False, prm_backfilled=False, resource_checks=False), *own),
        ours=(*_AUTH_OURS, *ours),
        only_at=dict.fromkeys(not_expected, ()),
        allow_client_error=allow_client_error,
    )


def _declined_check(check_id: str, what: str) -> OfficialClientCheck:
    """`as`: judged when the run ends."""
    return OfficialClientCheck(
        check_id,
        "always",
        f"once the authorization server metadata was read and the authorization endpoint "
        f"reached: SUCCESS iff no token request came ({what}), else FAILURE; a FAILURE "
        "('not testable') when the client never got that far",
        ("auth.iss-validated",),
    )


def _proceeded_check(check_id: str, what: str) -> OfficialClientCheck:
    return OfficialClientCheck(
        check_id, "always", f"SUCCESS iff a token request came ({what}), else FAILURE"
    )


_ISS_DECLINED = tuple(
    _modern_auth(
        f"auth/{name}",
        (_declined_check(check_id, what),),
        not_expected=_AFTER_AUTHORIZATION,
        ours=("auth.iss-validated",),
        allow_client_error=True,
    )
    for name, check_id, what in (
        (
            "iss-supported-missing",
            "sep-2468-client-reject-missing-iss",
            "the advertised iss was missing",
        ),
        (
            "iss-wrong-issuer",
            "sep-2468-client-compare-iss-supported",
            "the iss named another issuer",
        ),
        (
            "iss-unexpected",
            "sep-2468-client-compare-iss-unadvertised",
            "an unadvertised iss named another issuer",
        ),
        (
            "iss-normalized",
            "sep-2468-client-no-normalization",
            "the iss was the issuer plus a trailing slash",
        ),
    )
)

_MODERN_AUTH = (
    _modern_auth(
        "auth/resource-mismatch",
        (
            OfficialClientCheck(
                "resource-mismatch-rejected",
                "always",
                "when the run ends: SUCCESS iff the resource metadata (naming another "
                "resource) was read and no authorization request came, FAILURE when one "
                "came; a FAILURE ('not testable') when the metadata was never read",
                ("auth.resource-mismatch-refused",),
            ),
        ),
        not_expected=_AFTER_PRM,
        ours=("auth.resource-mismatch-refused",),
        allow_client_error=True,
    ),
    _modern_auth(
        "auth/offline-access-scope",
        (
            OfficialClientCheck(
                "sep-2207-client-metadata-grant-types",
                "always",
                "per registration: SUCCESS iff its grant_types has refresh_token, else "
                "WARNING (a SHOULD); INFO without a registration (the runner fetches a "
                "client ID metadata document URL when the run ends: here INFO, as there "
                "when the fetch fails)",
                ("auth.refresh-grant-registered",),
            ),
            OfficialClientCheck(
                "sep-2207-offline-access-requested",
                "always",
                "per authorization request: SUCCESS iff its scope has offline_access, else "
                "INFO (a MAY); a FAILURE when no authorization request came",
            ),
        ),
        # Both may be INFO for a client that does right (it uses a metadata document, or
        # wants no refresh token): never expected.
        not_expected=("sep-2207-client-metadata-grant-types", "sep-2207-offline-access-requested"),
    ),
    _modern_auth(
        "auth/offline-access-not-supported",
        (
            OfficialClientCheck(
                "sep-2207-offline-access-not-requested",
                "always",
                "per authorization request: FAILURE iff its scope has offline_access, "
                "which the server does not list, else SUCCESS; a FAILURE when no "
                "authorization request came",
            ),
        ),
    ),
    _modern_auth(
        "auth/authorization-server-migration",
        (
            OfficialClientCheck(
                "sep-2352-reregister-on-as-change",
                "always",
                "when the run ends: SUCCESS iff a registration reached the second "
                "authorization server, else FAILURE",
            ),
            *(
                OfficialClientCheck(
                    check_id,
                    "always",
                    "when the run ends: FAILURE iff the client id the first server issued "
                    "came to the second's authorization endpoint (client_id) or token "
                    "endpoint (client_id in the form, else the Basic user), else SUCCESS",
                    ours,
                )
                for check_id, ours in (
                    ("sep-2352-no-reuse-on-as-change", ()),
                    (
                        "sep-2352-no-cross-as-credential-reuse",
                        ("auth.tokens-stay-with-their-server",),
                    ),
                )
            ),
        ),
        ours=("auth.tokens-stay-with-their-server",),
    ),
    _modern_auth(
        "auth/iss-supported",
        (_proceeded_check("sep-2468-client-compare-iss-supported", "the right iss"),),
    ),
    _modern_auth(
        "auth/iss-not-advertised",
        (_proceeded_check("sep-2468-client-proceed-no-iss", "neither advertised nor sent"),),
    ),
    *_ISS_DECLINED,
    _modern_auth(
        "auth/metadata-issuer-mismatch",
        (
            OfficialClientCheck(
                "sep-2468-client-validate-metadata-issuer",
                "always",
                "when the run ends, the authorization server metadata (whose issuer is "
                "another) having been read: SUCCESS iff no registration, authorization or "
                "token request came, else FAILURE; a FAILURE ('not testable') when it was "
                "never read",
                ("auth.metadata-issuer-validated",),
            ),
        ),
        not_expected=_AFTER_METADATA,
        ours=("auth.metadata-issuer-validated",),
        allow_client_error=True,
    ),
)

SERVED += _MODERN_AUTH


def served_scenario(name: str) -> ClientScenario | None:
    """The served scenario of that official name, if it is served here."""
    return next((s for s in SERVED if s.name == name), None)
