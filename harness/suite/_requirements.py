"""Every client requirement of the specification the suite knows, by requirement id.

The ids are those of the project's requirements digest (spec-client-requirements); each
requirement is covered by the checks that name it (harness.judging._catalogue), or says why no
mock server can observe it. `python -m harness.reports._coverage` writes docs/coverage.md
from this table and the catalogue; a test fails when a requirement has neither.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.protocol import REVISIONS

__all__ = ["REQUIREMENTS", "Requirement"]

ALL = REVISIONS
HANDSHAKE = REVISIONS[:4]
STATELESS = REVISIONS[4:]
FROM_2025_03 = REVISIONS[1:]
FROM_2025_06 = REVISIONS[2:]
FROM_2025_11 = REVISIONS[3:]


@dataclass(frozen=True)
class Requirement:
    id: str
    summary: str
    revisions: tuple[str, ...]
    unobservable: str | None = None
    """Why no check can judge it from a mock server, when none can."""
    partly: str | None = None
    """The part its checks do not judge, and why (the requirement is partly judged)."""


_UI = "a matter of the client's user interface, which a server cannot observe"

REQUIREMENTS: dict[str, Requirement] = {
    r.id: r
    for r in (
        Requirement("RPC-1", "request ids are strings or integers, never null", ALL),
        Requirement(
            "RPC-2", "request ids are not reused (per session; per in-flight request in 2026)", ALL
        ),
        Requirement("RPC-3", "notifications carry no id", ALL),
        Requirement("RPC-4", "answers to server requests are well-formed responses", ALL),
        Requirement("RPC-5", "messages are UTF-8", ALL),
        Requirement("RPC-6", "no batches sent from 2025-06-18 on", ALL),
        Requirement("RPC-6b", "batches from the server accepted at 2025-03-26", ("2025-03-26",)),
        Requirement("RPC-7", "standard and MCP error codes understood", ALL),
        Requirement("RPC-8", "no assumptions about reserved _meta keys", FROM_2025_06),
        Requirement(
            "RPC-9", "absent resultType means complete; unknown values are invalid", STATELESS
        ),
        Requirement(
            "LC-1", "initialize first, with protocolVersion, capabilities and clientInfo", HANDSHAKE
        ),
        Requirement("LC-2", "offers a version it supports, preferably its latest", HANDSHAKE),
        Requirement("LC-3", "disconnects when the server's version is not supported", HANDSHAKE),
        Requirement("LC-4", "sends notifications/initialized after initialization", HANDSHAKE),
        Requirement("LC-5", "no requests but pings before the initialize response", HANDSHAKE),
        Requirement(
            "LC-6", "declares roots, sampling and elicitation exactly when supported", HANDSHAKE
        ),
        Requirement("LC-7", "uses only negotiated capabilities", HANDSHAKE),
        Requirement("LC-8", "never cancels initialize", HANDSHAKE),
        Requirement("LC-9", "times out requests and cancels them", FROM_2025_03),
        Requirement("LC-10", "shutdown is closing the transport", HANDSHAKE),
        Requirement(
            "LC-M1", "every request carries _meta protocolVersion and clientCapabilities", STATELESS
        ),
        Requirement(
            "LC-M2",
            "retries with a supported version after -32022, or reports the error",
            STATELESS,
        ),
        Requirement("LC-M3", "a dual-era client probes with server/discover", STATELESS),
        Requirement("LC-M4", "falls back to initialize on any error but a modern one", STATELESS),
        Requirement("LC-M5", "no ping, logging/setLevel or roots list_changed in 2026", STATELESS),
        Requirement("LC-M6", "handles MissingRequiredClientCapability (-32021)", STATELESS),
        Requirement("ST-1", "newline-delimited messages without embedded newlines", ALL),
        Requirement("ST-2", "nothing but MCP messages on the server's stdin", ALL),
        Requirement("ST-3", "stderr output is not taken for an error", FROM_2025_11),
        Requirement("ST-4", "shutdown: close stdin, wait, SIGTERM, SIGKILL", ALL),
        Requirement(
            "ST-5",
            "2026 stdio: no responses, cancel by notification, restart (re-listen after it: "
            "see LISTEN)",
            STATELESS,
        ),
        Requirement(
            "ST-6",
            "the stdio process is not bound to one task or conversation",
            STATELESS,
            unobservable="a matter of how the application uses the client over time; one run of one "
            "scenario cannot tell a process per conversation from a long-lived one",
        ),
        Requirement("HT-1", "every message is its own POST to the MCP endpoint", FROM_2025_03),
        Requirement("HT-2", "POSTs accept application/json and text/event-stream", FROM_2025_03),
        Requirement("HT-3", "JSON and SSE answers both handled", FROM_2025_03),
        Requirement("HT-4", "202 with no body for notifications and responses", HANDSHAKE[1:]),
        Requirement(
            "HT-5", "a dropped connection is no cancellation; cancel explicitly", HANDSHAKE[1:]
        ),
        Requirement(
            "HT-6", "the GET stream accepts text/event-stream; 405 tolerated", HANDSHAKE[1:]
        ),
        Requirement(
            "HT-7", "resumption with GET and Last-Event-ID, honouring retry", HANDSHAKE[1:]
        ),
        Requirement("HT-8", "the session id is echoed on every later request", HANDSHAKE[1:]),
        Requirement(
            "HT-9", "a 404 on a session starts a new session without the old id", HANDSHAKE[1:]
        ),
        Requirement("HT-10", "DELETE ends a session the client no longer needs", HANDSHAKE[1:]),
        Requirement(
            "HT-11", "MCP-Protocol-Version header after initialize", ("2025-06-18", "2025-11-25")
        ),
        Requirement("HT-12", "falls back to HTTP+SSE on 400/404/405", FROM_2025_03),
        Requirement("HT-13", "HTTP+SSE: POSTs go to the endpoint event's URI", ("2024-11-05",)),
        Requirement("HM-1", "2026 HTTP: POST only, Accept both, no responses", STATELESS),
        Requirement("HM-2", "MCP-Protocol-Version header equals the _meta version", STATELESS),
        Requirement("HM-3", "Mcp-Method and Mcp-Name headers, base64 when unsafe", STATELESS),
        Requirement(
            "HM-4", "x-mcp-header mirrored as Mcp-Param-*; invalid definitions rejected", STATELESS
        ),
        Requirement(
            "HM-5", "no sessions or GET; a broken stream is re-issued with a new id", STATELESS
        ),
        Requirement(
            "HM-6", "a 404 with -32601 is an unknown method; SSE comments ignored", STATELESS
        ),
        Requirement("HM-7", "a 400 body is inspected before falling back", STATELESS),
        Requirement("TL-1", "cursors are opaque and followed until absent", ALL),
        Requirement("TL-2", "every content type of the revision is surfaced", ALL),
        Requirement("TL-3", "structuredContent validated against outputSchema", FROM_2025_06),
        Requirement("TL-4", "isError results and JSON-RPC errors surfaced differently", ALL),
        Requirement("TL-5", "tools re-listed after list_changed", ALL),
        Requirement("TL-6", "tool annotations are untrusted", FROM_2025_03, unobservable=_UI),
        Requirement(
            "TL-7", "tool names outside the recommended characters are handled", FROM_2025_11
        ),
        Requirement(
            "TL-8",
            "confirm sensitive operations, show inputs, validate results, log usage",
            ALL,
            unobservable=_UI + " (the time-out part is judged under LC-9)",
        ),
        Requirement(
            "TL-9", "task augmentation only where the server and the tool allow it", ("2025-11-25",)
        ),
        Requirement(
            "TL-10", "no cached answer for a request with other method or parameters", STATELESS
        ),
        Requirement("PING", "server pings answered with an empty result", HANDSHAKE),
        Requirement(
            "CANCEL", "cancellations only for requests in flight; late responses ignored", ALL
        ),
        Requirement(
            "PROG", "progress tokens unique; fractional progress and messages accepted", ALL
        ),
        Requirement(
            "LOG",
            "log notifications accepted at any time; setLevel only if declared",
            ALL,
        ),
        Requirement(
            "RES",
            "resources: paging, subscribe only if declared, not-found errors",
            ALL,
        ),
        Requirement(
            "COMPLETION",
            "completion/complete only if the server declared completions; values surfaced",
            FROM_2025_03,
        ),
        Requirement("PROMPTS", "prompts: paging and errors", ALL),
        Requirement(
            "ROOTS",
            "roots declared, file:// URIs, list_changed when declared",
            ALL,
        ),
        Requirement(
            "SAMPLING",
            "sampling declared; tool use only with sampling.tools, broken tool histories "
            "refused; maxTokens respected",
            ALL,
            partly="maxTokens bounds what the client's model generates: a server sees only "
            "the result, whose tokens it cannot count (the tokenizer is the model's), and in "
            "a test run the harness's sampling handler stands in for the model",
        ),
        Requirement(
            "ELICIT",
            "elicitation declared; modes; unknown completions ignored; forms pre-filled with "
            "their defaults",
            FROM_2025_06,
            partly="pre-filling forms with their defaults is " + _UI,
        ),
        Requirement(
            "MRTR", "input_required answered with requestState echoed and a new id", STATELESS
        ),
        Requirement(
            "ICONS",
            "icons: PNG and JPEG, no unsafe URI schemes",
            FROM_2025_11,
            unobservable="the rules bind clients that render icons, which is "
            + _UI
            + ": refusing a javascript: or file: icon, or decoding a PNG, sends nothing a "
            "server sees, and an https icon is fetched (or not) from wherever it points, "
            "not from the MCP endpoint",
        ),
        Requirement(
            "LISTEN",
            "subscriptions/listen correlated by subscriptionId; re-listen",
            STATELESS,
        ),
        # Authorization: the requirements judged so far (the others come with their checks).
        Requirement(
            "AUTH-401",
            "after a 401: the resource metadata the challenge names, else path then root",
            FROM_2025_06,
        ),
        Requirement(
            "AUTH-AS",
            "authorization server metadata: OAuth then OpenID, path inserted then appended",
            FROM_2025_11,
        ),
        Requirement(
            "AUTH-PKCE",
            "PKCE with S256; no flow with a server that does not advertise it (the refusal "
            "judged from 2025-11-25, where MCP makes it explicit)",
            FROM_2025_03,
        ),
        Requirement(
            "AUTH-resource",
            "resource parameter (RFC 8707) on authorization and token requests",
            FROM_2025_06,
        ),
        Requirement(
            "AUTH-step-up",
            "on 403 insufficient_scope: authorize again with that scope, with bounded retries",
            FROM_2025_11,
        ),
        Requirement(
            "AUTH-iss", "the iss of the authorization response checked (RFC 9207)", STATELESS
        ),
        Requirement(
            "AUTH-scope",
            "the first authorization asks for the 401's scope, else the resource's "
            "scopes_supported, else no scope",
            FROM_2025_11,
        ),
        Requirement(
            "AUTH-registration",
            "pre-registered client information first, when the client has it (before "
            "client ID metadata documents and dynamic registration)",
            FROM_2025_11,
        ),
        Requirement(
            "AUTH-client-auth",
            "at the token endpoint, the authentication method the client was registered with",
            FROM_2025_03,
        ),
        Requirement(
            "AUTH-refresh",
            "a rotated refresh token is replaced by the new one; refresh_token in the "
            "registered grant_types of a client that refreshes (2026-07-28)",
            FROM_2025_06,
        ),
        Requirement(
            "AUTH-legacy",
            "2025-03-26: the metadata at the root of the MCP server's origin first, then "
            "its endpoints, else the default /authorize, /token, /register",
            ("2025-03-26",),
        ),
        Requirement(
            "AUTH-token-origin",
            "only tokens of the MCP server's authorization server go to it; no token of one "
            "authorization server goes to another",
            FROM_2025_06,
        ),
        Requirement(
            "AUTH-bearer",
            "the token in the Authorization header of every request, never in the query",
            FROM_2025_03,
        ),
    )
}
