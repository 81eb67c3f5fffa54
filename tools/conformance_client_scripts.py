"""Writes fixtures/conformance-clients/<revision>/<scenario>.json: for each client scenario of
the official runner (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, pinned in
tests/e2e-node) that mcp-testbench serves, a script that serves what that scenario's server
serves, so that a conformance client started as the runner starts it meets the same server.

    python tools/conformance_client_scripts.py           # write the scripts
    python tools/conformance_client_scripts.py --check   # exit 1 if a shipped script differs

What each official server serves was read from the pinned package's dist/index.js (the
scenario classes `Ne` initialize, `un` tools_call, `pn`/`mn` elicitation defaults, `hn`
sse-retry; `ot` and `Lt` the shared stateful and stateless servers of tools_call). The
scripts copy its endpoint paths, sessions, tool names, descriptions and schemas, server
names, elicitation request and SSE retry fields, and its leniency where a conformant
server may be as lenient (a tools/list answered without the tools capability, an
elicitation sent whether the client declared it or not, marked as the violation it is).
Where the mock must stay a conformant server, or cannot do what the official one does, the
script says so in its description, and docs/conformance-clients.md lists each difference.
harness.official (_client_checks) says which script serves which scenario;
tests/project/test_tools.py runs the --check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "fixtures" / "conformance-clients"
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"

Json = dict[str, Any]

_WRITTEN_BY = "Written by tools/conformance_client_scripts.py; edit that, not this."


def text(value: str) -> Json:
    return {"type": "text", "text": value}


def _answer(label: str, expect: Json, result: Json) -> Json:
    """A step answering every matching request, as often as asked, or never asked."""
    return {
        "label": label,
        "expect": expect,
        "reply": {"result": result},
        "repeat": True,
        "optional": True,
    }


def script(name: str, revision: str, description: str, **members: Any) -> Json:
    return {
        "format_version": 1,
        "name": f"conformance-client-{name}",
        "description": f"{description} {_WRITTEN_BY}",
        "revisions": [revision],
        "transports": ["http"],
        **members,
    }


# -- initialize (2025-11-25) ------------------------------------------------------------------


def initialize() -> Json:
    return script(
        "initialize",
        HANDSHAKE,
        "The official `initialize` scenario's server: every path, no session, JSON answers, "
        "serverInfo test-server and no capabilities; tools/list answered with no tools "
        "though no tools capability was declared, as it does. It answers the version the "
        "client offers when it is 2025-06-18, 2025-11-25 or 2026-07-28; this mock answers "
        "2025-11-25 (the revision it is run at).",
        server={"info": {"name": "test-server", "version": "1.0.0"}, "capabilities": {}},
        http={"path": "/", "sessions": False, "get": "405"},
        steps=[_answer("tools/list", {"method": "tools/list"}, {"tools": []})],
    )


# -- tools_call (2025-11-25 and 2026-07-28) ---------------------------------------------------

ADD_NUMBERS: Json = {
    "name": "add_numbers",
    "description": "Add two numbers together",
    "inputSchema": {
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": "First number"},
            "b": {"type": "number", "description": "Second number"},
        },
        "required": ["a", "b"],
    },
}


def tools_call(revision: str) -> Json:
    modern = revision == MODERN
    wire = (
        "the stateless server (JSON answers, no session)"
        if modern
        else "the stateful server without sessions (POST only, SSE answers)"
    )
    http: Json = {"path": "/mcp"}
    if not modern:
        # The official stateful server has no GET route (404): a conformant server says 405.
        http |= {"sessions": False, "reply_as": "sse", "get": "405"}
    return script(
        "tools-call",
        revision,
        f"The official `tools_call` scenario's server at {revision}: {wire}, "
        "serverInfo conformance-mock-server, one tool add_numbers. The official answer "
        "computes the sum; this mock answers the call with a fixed text (the runner judges "
        "the arguments only).",
        server={
            "info": {"name": "conformance-mock-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
        },
        http=http,
        steps=[
            _answer("tools/list", {"method": "tools/list"}, {"tools": [ADD_NUMBERS]}),
            {
                "label": "add_numbers",
                "expect": {"method": "tools/call", "params": {"name": "add_numbers"}},
                "reply": {
                    "result": {"content": [text("The sum of a and b (not computed by this mock)")]}
                },
                "repeat": True,
                "optional": True,
            },
        ],
    )


# -- elicitation-sep1034-client-defaults (2025-11-25) -----------------------------------------

ELICITATION_DEFAULTS: Json = {
    "message": "Test client default value handling - please accept with defaults",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {
                "type": "boolean",
                "description": "Verification status",
                "default": True,
            },
        },
        "required": [],
    },
}
#: The id of the elicitation request: the one the suite's features.elicitation-answer reads.
ELICITATION_ID = "srv-elicit"
UNDECLARED = (
    "sent whether or not the client declared the elicitation capability, as the official "
    "scenario's server does (it does not enforce capabilities); a client that did not "
    "declare it must refuse it"
)


def elicitation_defaults() -> Json:
    request = {
        "id": ELICITATION_ID,
        "method": "elicitation/create",
        "params": ELICITATION_DEFAULTS,
        "violation": UNDECLARED,
    }
    return script(
        "elicitation-sep1034-client-defaults",
        HANDSHAKE,
        "The official `elicitation-sep1034-client-defaults` scenario's server: sessions, "
        "SSE answers, a GET stream; calling test_client_elicitation_defaults sends "
        "elicitation/create with a default for every field on the GET stream (as the "
        "official server does: its request names no related request), and answers the "
        "call once the client has answered it (in JSON here, on an event stream there).",
        server={
            "info": {"name": "elicitation-defaults-test-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
        },
        http={"path": "/mcp", "reply_as": "sse"},
        steps=[
            {
                "label": "tools/list",
                "expect": {"method": "tools/list"},
                "reply": {
                    "result": {
                        "tools": [
                            {
                                "name": "test_client_elicitation_defaults",
                                "description": "Tests that client applies defaults for "
                                "omitted elicitation fields",
                                "inputSchema": {
                                    "type": "object",
                                    "properties": {},
                                    "required": [],
                                },
                            }
                        ]
                    }
                },
                "repeat": True,
                "optional": True,
            },
            {
                "label": "test_client_elicitation_defaults",
                "expect": {
                    "method": "tools/call",
                    "params": {"name": "test_client_elicitation_defaults"},
                },
                "reply": {
                    "as": "json",
                    "before": [request],
                    "result": {"content": [text("Elicitation completed")]},
                },
                "optional": True,
            },
        ],
    )


# -- sse-retry (2025-11-25) -------------------------------------------------------------------


def sse_retry() -> Json:
    return script(
        "sse-retry",
        HANDSHAKE,
        "The official `sse-retry` scenario's server: every path, a session id, JSON answers, "
        "initialize answered with 2025-11-25 whatever the client offers; a tools/call "
        "answered with an event stream of one priming event (retry 500 ms) that the server "
        "then closes; the response waits for the client to reconnect. The official server "
        "closes 50 ms after the priming event and hands the response to any GET; this mock "
        "closes at once and resumes with Last-Event-ID (a GET without it opens a plain "
        "stream).",
        server={
            "info": {"name": "sse-retry-test-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
            "protocol_version": HANDSHAKE,
        },
        http={"path": "/"},
        steps=[
            {
                "label": "tools/list",
                "expect": {"method": "tools/list"},
                "reply": {
                    "result": {
                        "tools": [
                            {
                                "name": "test_reconnection",
                                "description": "A tool that triggers SSE stream closure to "
                                "test client reconnection behavior",
                                "inputSchema": {
                                    "type": "object",
                                    "properties": {},
                                    "required": [],
                                },
                            }
                        ]
                    }
                },
                "repeat": True,
                "optional": True,
            },
            {
                "label": "tools/call",
                "expect": {"method": "tools/call"},
                "reply": {
                    "as": "sse",
                    "sse": {
                        "retry": 500,
                        "events": [{"prime": True, "close": True}, {"response": True}],
                    },
                    "result": {"content": [text("Reconnection test completed successfully")]},
                },
                "repeat": True,
                "optional": True,
            },
        ],
    )


# -- the 2026-07-28 client scenarios: request metadata, MRTR, headers ---------------------------
# (`vn` request-metadata, `xn`/`Sn` sep-2322-client-request-state, `Bt` the shared server of
# `Es` http-standard-headers, `Is` http-custom-headers and `Ls` http-invalid-tool-headers.)

#: What the official request-metadata server answers the first request, whatever it is.
UNSUPPORTED_FIRST = {
    "code": -32022,
    "message": "Unsupported protocol version",
    "data": {
        "supported": [MODERN],
        "requested": {"$request": "/params/_meta/io.modelcontextprotocol~1protocolVersion"},
    },
}


def request_metadata() -> Json:
    return script(
        "request-metadata",
        MODERN,
        "The official `request-metadata` scenario's server: every path, POST only, "
        "serverInfo test; the first request, whatever its method, refused with HTTP 400 "
        "and -32022 (supported: 2026-07-28) so that the client retries; then server/discover "
        "answered, tools/list with no tools and tools/call with no content. The official "
        "server answers tools/list though it declares no capability; so does this one. It "
        "names the header's version as the one requested, this mock the _meta one (a "
        "request reaches the script only when the two agree).",
        server={"info": {"name": "test", "version": "1.0"}, "capabilities": {}},
        http={"path": "/"},
        steps=[
            {
                "label": "the first request",
                "expect": {"method": {"$type": "string"}, "id": {"$present": True}},
                "reply": {"status": 400, "error": UNSUPPORTED_FIRST},
            },
            _answer("tools/list", {"method": "tools/list"}, {"tools": []}),
            _answer("tools/call", {"method": "tools/call"}, {"content": []}),
        ],
    )


def _no_arguments_tool(name: str, description: str) -> Json:
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}, "required": []},
    }


MRTR_TOOLS = [
    _no_arguments_tool(
        "test_mrtr_echo_state",
        "Test tool: triggers MRTR flow with requestState. Client must echo state back unchanged.",
    ),
    _no_arguments_tool(
        "test_mrtr_no_state",
        "Test tool: triggers MRTR flow WITHOUT requestState. Client must NOT include "
        "requestState in retry.",
    ),
    _no_arguments_tool(
        "test_mrtr_unrelated",
        "Test tool: simple tool called between MRTR rounds. Must NOT carry inputResponses or "
        "requestState from another tool.",
    ),
    _no_arguments_tool(
        "test_mrtr_no_result_type",
        "Test tool: returns a result without resultType. Client must treat it as complete "
        "(default).",
    ),
]
#: The requestState the echo tool hands out (the official one is a fresh nonce and the
#: request id in JSON, a string either way: the client must return it byte for byte).
MRTR_STATE = '{"nonce":"4f9c2a7e-conformance","originalId":"from-the-mock"}'


def _confirm(message: str) -> Json:
    return {
        "confirm": {
            "method": "elicitation/create",
            "params": {
                "message": message,
                "requestedSchema": {
                    "type": "object",
                    "properties": {"confirmed": {"type": "boolean", "description": "Confirm?"}},
                },
            },
        }
    }


def _mrtr_call(name: str, *, retry: bool) -> Json:
    responses = {"$present": True} if retry else {"$absent": True}
    return {"method": "tools/call", "params": {"name": name, "inputResponses": responses}}


def request_state() -> Json:
    answered = "the retry answered once it carries inputResponses"
    return script(
        "sep-2322-client-request-state",
        MODERN,
        "The official `sep-2322-client-request-state` scenario's server: /mcp, JSON "
        "answers, serverInfo mrtr-mock-server, four tools. test_mrtr_echo_state answers "
        "its first call with input_required (an elicitation and a requestState), "
        f"test_mrtr_no_state the same without requestState, {answered}; "
        "test_mrtr_unrelated answers at once; test_mrtr_no_result_type answers a result "
        "without resultType (the deliberate violation the official server commits, to see "
        "the client take it as complete). The official requestState is a fresh nonce; this "
        "one is fixed.",
        server={
            "info": {"name": "mrtr-mock-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
        },
        http={"path": "/mcp"},
        steps=[
            _answer("tools/list", {"method": "tools/list"}, {"tools": MRTR_TOOLS}),
            {
                "label": "echo_state asks",
                "expect": _mrtr_call("test_mrtr_echo_state", retry=False),
                "reply": {
                    "result": {
                        "resultType": "input_required",
                        "inputRequests": _confirm("Please confirm to continue"),
                        "requestState": MRTR_STATE,
                    }
                },
                "repeat": True,
                "optional": True,
            },
            _answer(
                "echo_state retried",
                _mrtr_call("test_mrtr_echo_state", retry=True),
                {"content": [text("echo-state-ok")]},
            ),
            {
                "label": "no_state asks",
                "expect": _mrtr_call("test_mrtr_no_state", retry=False),
                "reply": {
                    "result": {
                        "resultType": "input_required",
                        "inputRequests": _confirm("Please confirm to continue (no state test)"),
                    }
                },
                "repeat": True,
                "optional": True,
            },
            _answer(
                "no_state retried",
                _mrtr_call("test_mrtr_no_state", retry=True),
                {"content": [text("no-state-ok")]},
            ),
            _answer(
                "unrelated",
                {"method": "tools/call", "params": {"name": "test_mrtr_unrelated"}},
                {"content": [text("unrelated-ok")]},
            ),
            {
                "label": "no_result_type",
                "expect": _mrtr_call("test_mrtr_no_result_type", retry=False),
                "reply": {
                    "result": {"content": [text("no-result-type-test-ok")]},
                    "violation": "a result without resultType, as the official server "
                    "sends it: the client must take it as complete",
                },
                "repeat": True,
                "optional": True,
            },
            _answer(
                "no_result_type retried",
                _mrtr_call("test_mrtr_no_result_type", retry=True),
                {"content": [text("unexpected-retry")]},
            ),
        ],
    )


def _bt_script(name: str, description: str, capabilities: Json, steps: list[Json]) -> Json:
    """The official header scenarios share one server (`Bt`): every path, JSON answers,
    serverInfo `<scenario>-server`, everything it does not know answered with an empty
    result. A GET there opens a stream that never ends; a stateless server says 405."""
    return script(
        name,
        MODERN,
        description,
        server={
            "info": {"name": f"{name}-server", "version": "1.0.0"},
            "capabilities": capabilities,
        },
        http={"path": "/"},
        steps=steps,
    )


HEADER_TOOLS = [
    _no_arguments_tool(
        "test_headers", "A simple tool used to test that HTTP headers are sent correctly"
    ),
    _no_arguments_tool(
        "my-hyphenated-tool", "Tool with hyphen in name to test special chars in Mcp-Name header"
    ),
]
HEADER_RESOURCES = [
    {
        "uri": "file:///path/to/file%20name.txt",
        "name": "File with spaces",
        "description": "Resource URI with percent-encoded spaces",
    },
    {
        "uri": "https://example.com/resource?id=123",
        "name": "Resource with query string",
        "description": "Resource URI with query string",
    },
]


def standard_headers() -> Json:
    return _bt_script(
        "http-standard-headers",
        "The official `http-standard-headers` scenario's server: every path, JSON answers, "
        "two tools (test_headers, my-hyphenated-tool), two resources (a percent-encoded "
        "space, a query string) read with no contents, one prompt test_prompt got with no "
        "messages. The official server records each method's first Mcp-Method header, and "
        "Mcp-Name on tools/call, resources/read and prompts/get, answering whatever came; "
        "this mock refuses a request whose headers do not mirror its body (HTTP 400, "
        "-32020), as a 2026-07-28 server must.",
        {"tools": {}, "resources": {}, "prompts": {}},
        [
            _answer("tools/list", {"method": "tools/list"}, {"tools": HEADER_TOOLS}),
            _answer(
                "tools/call",
                {
                    "method": "tools/call",
                    "params": {"name": {"$any": ["test_headers", "my-hyphenated-tool"]}},
                },
                {"content": [text("Headers test completed")]},
            ),
            _answer(
                "resources/list", {"method": "resources/list"}, {"resources": HEADER_RESOURCES}
            ),
            _answer("resources/read", {"method": "resources/read"}, {"contents": []}),
            _answer(
                "prompts/list",
                {"method": "prompts/list"},
                {
                    "prompts": [
                        {"name": "test_prompt", "description": "A simple prompt for header testing"}
                    ]
                },
            ),
            _answer(
                "prompts/get",
                {"method": "prompts/get", "params": {"name": "test_prompt"}},
                {"messages": []},
            ),
        ],
    )


def _header_property(kind: str, description: str, header: str | None = None) -> Json:
    value: Json = {"type": kind, "description": description}
    if header is not None:
        value["x-mcp-header"] = header
    return value


CUSTOM_HEADER_TOOLS = [
    {
        "name": "test_custom_headers",
        "description": "A tool with x-mcp-header annotations to test custom header mirroring "
        "and encoding",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": _header_property("string", "Plain ASCII string value", "Region"),
                "priority": _header_property("integer", "Integer numeric value", "Priority"),
                "verbose": _header_property("boolean", "Boolean value", "Verbose"),
                "debug": _header_property("boolean", "Boolean true value", "Debug"),
                "empty_val": _header_property("string", "Empty string value", "EmptyVal"),
                "method_val": _header_property(
                    "string",
                    'Value for header named "Method" — tests that x-mcp-header "Method" '
                    "produces Mcp-Param-Method (not Mcp-Method)",
                    "Method",
                ),
                "float_val": _header_property(
                    "number",
                    "Floating point value — no x-mcp-header annotation, should not be mirrored",
                ),
                "non_ascii_val": _header_property(
                    "string", "Non-ASCII string value — requires Base64 encoding", "NonAscii"
                ),
                "whitespace_val": _header_property(
                    "string",
                    "String with leading/trailing whitespace — requires Base64 encoding",
                    "Whitespace",
                ),
                "leading_space_val": _header_property(
                    "string",
                    "String with leading space only — requires Base64 encoding",
                    "LeadingSpace",
                ),
                "trailing_space_val": _header_property(
                    "string",
                    "String with trailing space only — requires Base64 encoding",
                    "TrailingSpace",
                ),
                "internal_space_val": _header_property(
                    "string",
                    "String with internal spaces only — plain ASCII, no Base64",
                    "InternalSpace",
                ),
                "control_char_val": _header_property(
                    "string",
                    "String with control characters — requires Base64 encoding",
                    "ControlChar",
                ),
                "crlf_val": _header_property(
                    "string",
                    "String with carriage return and line feed — requires Base64 encoding",
                    "CrLf",
                ),
                "tab_val": _header_property(
                    "string", "String with leading tab — requires Base64 encoding", "Tab"
                ),
                "query": _header_property(
                    "string", "No x-mcp-header annotation - should not be mirrored"
                ),
            },
            "required": ["region", "priority", "query"],
        },
    },
    {
        "name": "test_custom_headers_null",
        "description": "A tool for testing null/omitted x-mcp-header parameter handling",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": _header_property("string", "Plain ASCII string value", "Region"),
                "priority": _header_property("integer", "Integer numeric value", "Priority"),
                "verbose": _header_property(
                    "boolean", "Boolean value — will be null to test omission", "Verbose"
                ),
                "query": _header_property("string", "No x-mcp-header annotation"),
            },
            "required": ["region", "priority", "query"],
        },
    },
]


def custom_headers() -> Json:
    return _bt_script(
        "http-custom-headers",
        "The official `http-custom-headers` scenario's server: every path, JSON answers, two "
        "tools whose inputSchema marks parameters with x-mcp-header (a string, an integer, "
        "booleans, an empty string, a header named Method, non-ASCII and whitespace values "
        "that need Base64, an unannotated number and string); the arguments to call them "
        "with come in MCP_CONFORMANCE_CONTEXT (toolCalls). The official server judges each "
        "Mcp-Param header and answers whatever came; this mock refuses a call whose headers "
        "do not mirror its arguments (HTTP 400, -32020), as a 2026-07-28 server must.",
        {"tools": {}},
        [
            _answer("tools/list", {"method": "tools/list"}, {"tools": CUSTOM_HEADER_TOOLS}),
            _answer(
                "tools/call",
                {
                    "method": "tools/call",
                    "params": {
                        "name": {"$any": ["test_custom_headers", "test_custom_headers_null"]}
                    },
                },
                {"content": [text("Custom headers test completed")]},
            ),
        ],
    )


def _invalid_tool(name: str, description: str, properties: Json) -> Json:
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": list(properties)},
    }


def _one(field: str, schema: Json, header: str) -> Json:
    return {field: {**schema, "x-mcp-header": header}}


_STRING = {"type": "string"}
_PRIMITIVE = "x-mcp-header MUST only be on primitive types (MUST be rejected)"
INVALID_HEADER_TOOLS = [
    _invalid_tool(
        "valid_tool", "A valid tool with correct x-mcp-header", _one("region", _STRING, "Region")
    ),
    _invalid_tool(
        "invalid_empty_header",
        "x-mcp-header MUST NOT be empty (MUST be rejected by client)",
        _one("value", _STRING, ""),
    ),
    _invalid_tool("invalid_object_header", _PRIMITIVE, _one("data", {"type": "object"}, "Data")),
    _invalid_tool(
        "invalid_array_header",
        _PRIMITIVE,
        _one("items", {"type": "array", "items": {"type": "string"}}, "Items"),
    ),
    _invalid_tool("invalid_null_header", _PRIMITIVE, _one("nil", {"type": "null"}, "Nil")),
    _invalid_tool(
        "invalid_number_header",
        "x-mcp-header MUST NOT be on number type (MUST be rejected)",
        _one("score", {"type": "number"}, "Score"),
    ),
    _invalid_tool(
        "invalid_duplicate_same_case",
        'Duplicate x-mcp-header "Region" on two properties (MUST be rejected)',
        {**_one("field1", _STRING, "Region"), **_one("field2", _STRING, "Region")},
    ),
    _invalid_tool(
        "invalid_duplicate_diff_case",
        'Duplicate case-insensitive x-mcp-header "MyField"/"myfield" (MUST be rejected)',
        {**_one("field1", _STRING, "MyField"), **_one("field2", _STRING, "myfield")},
    ),
    _invalid_tool(
        "invalid_space_in_name",
        "x-mcp-header MUST NOT contain space (MUST be rejected)",
        _one("value", _STRING, "My Region"),
    ),
    _invalid_tool(
        "invalid_colon_in_name",
        "x-mcp-header MUST NOT contain colon (MUST be rejected)",
        _one("value", _STRING, "Region:Primary"),
    ),
    _invalid_tool(
        "invalid_non_ascii_name",
        "x-mcp-header MUST contain only ASCII chars (MUST be rejected)",
        _one("value", _STRING, "Région"),
    ),
    _invalid_tool(
        "invalid_control_char_name",
        "x-mcp-header MUST NOT contain control chars (MUST be rejected)",
        _one("value", _STRING, "Region\t1"),
    ),
]


def invalid_tool_headers() -> Json:
    return _bt_script(
        "http-invalid-tool-headers",
        "The official `http-invalid-tool-headers` scenario's server: every path, JSON "
        "answers, twelve tools: valid_tool (one x-mcp-header Region) and eleven whose "
        "x-mcp-header annotation is invalid (empty, on a non-primitive or number type, "
        "duplicated, a space, colon, non-ASCII or control character in the name): a "
        "client must keep the valid one and call no other. Every call is answered.",
        {"tools": {}},
        [
            _answer("tools/list", {"method": "tools/list"}, {"tools": INVALID_HEADER_TOOLS}),
            _answer(
                "tools/call", {"method": "tools/call"}, {"content": [text("Tool call received")]}
            ),
        ],
    )


# -- json-schema-ref-no-deref (2026-07-28; `Hs`, its tool from `Vs`) ------------------------

#: Where the official server's canary schema is, on its own origin: any request for it
#: means the client dereferenced the tool schema's network `$ref`.
CANARY_PATH = "/canary/profile-schema.json"
CANARY_SCHEMA: Json = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"displayName": {"type": "string"}},
}
LOOKUP_USER: Json = {
    "name": "lookup_user",
    "description": "Look up a user profile by id",
    "inputSchema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"userId": {"type": "string", "pattern": "^[a-z0-9-]+$"}},
        "properties": {
            "id": {"$ref": "#/$defs/userId"},
            "profile": {"$ref": {"$base_url": CANARY_PATH}},
        },
        "required": ["id"],
    },
}


def json_schema_ref_no_deref() -> Json:
    return script(
        "json-schema-ref-no-deref",
        MODERN,
        "The official `json-schema-ref-no-deref` scenario's server: POST /mcp, SSE answers "
        "(its SDK transport's), serverInfo json-schema-ref-deref-server; one tool "
        "lookup_user whose inputSchema has a same-document $ref and a $ref to "
        f"{CANARY_PATH} on the server's own origin (http://localhost:PORT), which a client "
        "must not fetch. The canary schema is served there, as there, and every request "
        "for it is in the transcript. No tools/call is answered (the official server has "
        "no handler for it).",
        server={
            "info": {"name": "json-schema-ref-deref-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
        },
        http={"path": "/mcp", "reply_as": "sse", "documents": {CANARY_PATH: CANARY_SCHEMA}},
        steps=[_answer("tools/list", {"method": "tools/list"}, {"tools": [LOOKUP_USER]})],
    )


# -- authorization (2025-11-25 and 2026-07-28) ------------------------------------------------
#
# The runner's auth scenarios share two servers: `J`, the authorization server (its own
# port; metadata with response_types [code], grant types authorization_code and
# refresh_token, S256, token_endpoint_auth_methods_supported [none], the iss parameter;
# registration, /authorize that redirects at once with the code, /token), and `X`, the
# protected MCP endpoint (POST /mcp, bearer check, a 401 naming the resource metadata;
# the stateless SDK server behind it with one tool, test-tool). `to` varies where the
# metadata documents are (`eo`, four variants).

TEST_TOOL: Json = {"name": "test-tool", "inputSchema": {"type": "object"}}


def auth_protected_server(
    name: str, description: str, auth: Json, revision: str = HANDSHAKE
) -> Json:
    """An auth scenario's script: `X`'s MCP server (up to 2025-11-25 stateless, SSE
    answers, POST only, serverInfo auth-prm-pathbased-server; at 2026-07-28 the stateless
    revision's server, JSON answers; test-tool) behind the OAuth mock `auth`."""
    modern = revision == MODERN
    wire = (
        "the 2026-07-28 stateless server (server/discover, _meta on every request, JSON answers)"
        if modern
        else "the stateless server (SSE answers, POST only)"
    )
    http: Json = {"path": "/mcp"}
    if not modern:
        http |= {"sessions": False, "reply_as": "sse", "get": "405"}
    info = "conformance-mock-server" if modern else "auth-prm-pathbased-server"
    return script(
        name.replace("/", "-"),
        revision,
        f"The official `{name}` scenario's servers: {description} Behind the bearer check, "
        f"{wire} with one tool, test-tool. The "
        "official authorization server accepts any client, code and verifier (it only "
        "records them); this mock's is a conformant one, which refuses what a conformant "
        "client never sends. A registration asking for a method the server does not name "
        "gets the first it names, said in the answer (the official server answers with "
        "a secret and no method, or with its one method).",
        server={"info": {"name": info, "version": "1.0.0"}, "capabilities": {"tools": {}}},
        http=http,
        auth=auth,
        steps=[
            _answer("tools/list", {"method": "tools/list"}, {"tools": [TEST_TOOL]}),
            _answer(
                "test-tool",
                {"method": "tools/call", "params": {"name": "test-tool"}},
                {"content": [text("test")]},
            ),
        ],
    )


#: `eo`: where each metadata variant serves its documents, in the mock's terms.
AUTH_METADATA_VARIANTS: dict[str, tuple[str, Json]] = {
    "auth/metadata-default": (
        "resource metadata at the path-based location /.well-known/oauth-protected-resource"
        "/mcp, named in the 401 (the root location answers 404, a FAILURE there); "
        "authorization server metadata at /.well-known/oauth-authorization-server.",
        {"protected_resource": {"locations": ["path"]}, "authorization_server": {}},
    ),
    "auth/metadata-var1": (
        "resource metadata at the path-based location, not named in the 401; the "
        "authorization server's at /.well-known/openid-configuration only.",
        {
            "protected_resource": {"locations": ["path"], "in_www_authenticate": False},
            "authorization_server": {"metadata": ["oidc-inserted"]},
        },
    ),
    "auth/metadata-var2": (
        "resource metadata at the root location only, not named in the 401; the issuer "
        "has a path (/tenant1), its metadata at /.well-known/oauth-authorization-server"
        "/tenant1 (the root of that origin answers 404, a FAILURE there). The official "
        "resource metadata names the origin as the resource; this mock's names the MCP "
        "endpoint's URL.",
        {
            "protected_resource": {"locations": ["root"], "in_www_authenticate": False},
            "authorization_server": {"tenant": "/tenant1"},
        },
    ),
    "auth/metadata-var3": (
        "resource metadata at /custom/metadata/location.json, named in the 401; the "
        "issuer has a path (/tenant1), its metadata at /tenant1/.well-known/openid-"
        "configuration (the root of that origin answers 404, a FAILURE there).",
        {
            "protected_resource": {
                "locations": ["custom"],
                "custom_path": "/custom/metadata/location.json",
            },
            "authorization_server": {"tenant": "/tenant1", "metadata": ["oidc-appended"]},
        },
    ),
}


def auth_metadata(name: str, revision: str) -> Json:
    description, auth = AUTH_METADATA_VARIANTS[name]
    # The official metadata names the method none alone, and registers any client.
    server = {
        "token_endpoint_auth_methods": ["none"],
        "registration_assigns_method": True,
        **auth["authorization_server"],
    }
    return auth_protected_server(
        name, description, {**auth, "authorization_server": server}, revision
    )


#: `_o`: the token endpoint accepts one client authentication method only.
TOKEN_ENDPOINT_AUTH = {
    "auth/token-endpoint-auth-basic": "client_secret_basic",
    "auth/token-endpoint-auth-post": "client_secret_post",
    "auth/token-endpoint-auth-none": "none",
}


def auth_token_endpoint(name: str, revision: str) -> Json:
    method = TOKEN_ENDPOINT_AUTH[name]
    return auth_protected_server(
        name,
        f"resource metadata at the path-based location, named in the 401; the "
        f"authorization server's at /.well-known/oauth-authorization-server, naming "
        f"{method} as its only token endpoint authentication method. The official server "
        f"registers every client with {method}, whatever it asked for; so does this mock "
        f"(it names the method in its answer), and it refuses a token request that "
        f"authenticates otherwise, where the official one records the method and answers.",
        {
            "protected_resource": {"locations": ["path"]},
            "authorization_server": {
                "token_endpoint_auth_methods": [method],
                "registration_assigns_method": True,
            },
        },
        revision,
    )


#: `co`, `lo`, `uo`: where the scope a client should ask for comes from.
AUTH_SCOPE_SOURCES: dict[str, tuple[str, Json]] = {
    "auth/scope-from-www-authenticate": (
        "the 401 names the scope mcp:basic, and a token without it gets a 403 "
        "insufficient_scope naming mcp:basic, as the official resource answers.",
        {
            "challenge_scope": "mcp:basic",
            "step_up": {"methods": {"*": "mcp:basic"}, "union": False},
        },
    ),
    "auth/scope-from-scopes-supported": (
        "the resource metadata's scopes_supported is mcp:basic mcp:read mcp:write, and the "
        "401 names no scope.",
        {"protected_resource": {"scopes_supported": ["mcp:basic", "mcp:read", "mcp:write"]}},
    ),
    "auth/scope-omitted-when-undefined": (
        "no scope anywhere: neither the 401, the resource metadata nor the authorization "
        "server's names one.",
        {},
    ),
}


def auth_scope(name: str, revision: str) -> Json:
    description, auth = AUTH_SCOPE_SOURCES[name]
    prm = {"locations": ["path"], **auth.get("protected_resource", {})}
    return auth_protected_server(
        name,
        "resource metadata at the path-based location, named in the 401; the authorization "
        "server's at /.well-known/oauth-authorization-server, naming the method none alone "
        f"(a client asking for another is registered with it); {description}",
        {
            **auth,
            "protected_resource": prm,
            "authorization_server": {
                "token_endpoint_auth_methods": ["none"],
                "registration_assigns_method": True,
            },
        },
        revision,
    )


#: `ko`: the pre-registered client, as the runner's context hands it to the client.
PRE_REGISTERED = {"client_id": "pre-registered-client", "client_secret": "pre-registered-secret"}


def auth_pre_registration(revision: str) -> Json:
    return auth_protected_server(
        "auth/pre-registration",
        "resource metadata at the path-based location, named in the 401; an authorization "
        "server without dynamic registration, naming client_secret_basic alone, that knows "
        "one client: pre-registered-client, whose credentials the client gets in "
        "MCP_CONFORMANCE_CONTEXT (with the issuer). The official server takes any redirect "
        "URI; this mock takes a loopback http://localhost:PORT/callback (any port), and "
        "refuses a token request with other credentials (401), as the official one does.",
        {
            "protected_resource": {"locations": ["path"]},
            "authorization_server": {
                "registration": False,
                "token_endpoint_auth_methods": ["client_secret_basic"],
            },
            "clients": [
                {
                    **PRE_REGISTERED,
                    "token_endpoint_auth_method": "client_secret_basic",
                    "redirect_uris": ["http://localhost:3000/callback"],
                }
            ],
        },
        revision,
    )


#: `ao`: the client ID a client should use, a document URL on a host that does not exist.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def auth_basic_cimd(revision: str) -> Json:
    return auth_protected_server(
        "auth/basic-cimd",
        "resource metadata at the path-based location, named in the 401; an authorization "
        "server that supports client ID metadata documents "
        "(client_id_metadata_document_supported) besides registration. The official "
        f"server takes any client id without fetching anything; this mock reads the "
        f"document of {CLIENT_METADATA_URL} from its own copy (a public client, redirect "
        "URI any loopback http://localhost:PORT/callback) and refuses another it cannot "
        "fetch.",
        {
            "protected_resource": {"locations": ["path"]},
            "authorization_server": {
                "client_id_metadata_documents": True,
                "metadata_document_copies": {
                    CLIENT_METADATA_URL: {
                        "client_id": CLIENT_METADATA_URL,
                        "client_name": "conformance client",
                        "redirect_uris": ["http://localhost:3000/callback"],
                        "grant_types": ["authorization_code"],
                        "response_types": ["code"],
                        "token_endpoint_auth_method": "none",
                    }
                },
                "token_endpoint_auth_methods": ["none"],
                "registration_assigns_method": True,
            },
        },
        revision,
    )


#: `fo`, `po`: the lifecycle goes through without a token, as their resources let it.
OPEN_METHODS = ["initialize", "notifications/*"]


def auth_scope_step_up(revision: str) -> Json:
    return auth_protected_server(
        "auth/scope-step-up",
        "initialize and notifications served without a token; any other request without "
        "one gets a 401 naming the scope mcp:basic; resource metadata at the path-based "
        "location, named in the 401, whose scopes_supported is mcp:profile; a tools/call "
        "needs mcp:write and any other request mcp:basic, else 403 insufficient_scope "
        "naming the scope needed alone (the official 403 names mcp:write whatever was "
        "lacking). Tokens carry the scope they were issued for; the authorization server "
        "names the method none alone (a client asking for another is registered with it).",
        {
            "challenge_scope": "mcp:basic",
            "protected_resource": {"locations": ["path"], "scopes_supported": ["mcp:profile"]},
            # The official token answers carry no refresh token: a client that has one
            # would refresh instead of authorizing for the new scope.
            "authorization_server": {
                "token_endpoint_auth_methods": ["none"],
                "registration_assigns_method": True,
                "refresh_tokens": "never",
            },
            "step_up": {
                "methods": {"tools/call": "mcp:write", "*": "mcp:basic"},
                "open_methods": OPEN_METHODS,
                "union": False,
            },
        },
        revision,
    )


def auth_scope_retry_limit(revision: str) -> Json:
    return auth_protected_server(
        "auth/scope-retry-limit",
        "initialize and notifications served without a token; any other request without "
        "one gets a 401 naming the scope mcp:admin, and with one (whatever it is) a 403 "
        "insufficient_scope naming mcp:admin: the scope upgrade never succeeds; resource "
        "metadata at the path-based location, named in the 401, whose scopes_supported is "
        "mcp:admin. After three 403s, a request that would get a fourth is answered 410 "
        "test_complete, as the official resource ends the test. The mock checks that a token is one it issued (a 401 otherwise), where the "
        "official resource verifies none.",
        {
            "challenge_scope": "mcp:admin",
            "protected_resource": {"locations": ["path"], "scopes_supported": ["mcp:admin"]},
            # The official token answers carry no refresh token: a client that has one
            # would refresh instead of authorizing for the new scope.
            "authorization_server": {
                "token_endpoint_auth_methods": ["none"],
                "registration_assigns_method": True,
                "refresh_tokens": "never",
            },
            "step_up": {
                "methods": {"*": "mcp:admin"},
                "open_methods": OPEN_METHODS,
                "always": True,
                "union": False,
                "give_up_after": 3,
            },
        },
        revision,
    )


def auth_scripts() -> dict[str, Json]:
    """The authorization scenarios' scripts, by their path under fixtures/conformance-clients/."""
    made: dict[str, Json] = {}
    for revision in (HANDSHAKE, MODERN):
        at = {name: auth_metadata(name, revision) for name in AUTH_METADATA_VARIANTS}
        at |= {name: auth_token_endpoint(name, revision) for name in TOKEN_ENDPOINT_AUTH}
        at |= {name: auth_scope(name, revision) for name in AUTH_SCOPE_SOURCES}
        at["auth/pre-registration"] = auth_pre_registration(revision)
        at["auth/basic-cimd"] = auth_basic_cimd(revision)
        at["auth/scope-step-up"] = auth_scope_step_up(revision)
        at["auth/scope-retry-limit"] = auth_scope_retry_limit(revision)
        made |= {f"{revision}/{name}.json": script for name, script in at.items()}
    return made


# -- authorization (2026-07-28 only) ----------------------------------------------------------
#
# The scenarios the runner has at 2026-07-28 alone, on the same two servers (`J`, `X`, the
# revision's stateless server behind the bearer check). Each makes one departure, most of
# them a deliberate fault of the authorization server or of the resource metadata that a
# client must refuse (said so in the description, as the runner's own option names say).

#: `J` as these scenarios set it up: the method none alone, any client registered.
_MODERN_SERVER: Json = {
    "token_endpoint_auth_methods": ["none"],
    "registration_assigns_method": True,
}

#: Scenario -> (what its servers serve, the `auth` members beside the defaults above).
AUTH_MODERN: dict[str, tuple[str, Json]] = {
    "auth/resource-mismatch": (
        "resource metadata at the path-based location, named in the 401, whose resource is "
        "another server's (a deliberate mismatch: a client must not authorize for it).",
        {"protected_resource": {"resource": "mismatch"}},
    ),
    "auth/offline-access-scope": (
        "an authorization server whose scopes_supported is mcp:basic and offline_access "
        "(and that supports client ID metadata documents); resource metadata naming "
        "mcp:basic. A client that wants a refresh token asks for offline_access and "
        "registers the refresh_token grant; this mock issues one only then.",
        {
            "protected_resource": {"scopes_supported": ["mcp:basic"]},
            "authorization_server": {
                "scopes_supported": ["mcp:basic", "offline_access"],
                "client_id_metadata_documents": True,
                "refresh_tokens": "offline_access",
            },
        },
    ),
    "auth/offline-access-not-supported": (
        "an authorization server and resource metadata whose scopes_supported is mcp:basic "
        "and mcp:read, without offline_access, which a client must then not ask for (this "
        "mock refuses an unknown scope with invalid_scope; the official server records it "
        "and goes on).",
        {
            "protected_resource": {"scopes_supported": ["mcp:basic", "mcp:read"]},
            "authorization_server": {"scopes_supported": ["mcp:basic", "mcp:read"]},
        },
    ),
    "auth/authorization-server-migration": (
        "a 401 naming the scope mcp:basic; after the first request served with a token, "
        "the resource moves to a second authorization server (its metadata names the new "
        "issuer, the first's tokens get 401 invalid_token): a client must register there "
        "anew and never present the first server's client id (the official second server "
        "listens on a port of its own; this one is the first's issuer plus /as2).",
        {"challenge_scope": "mcp:basic", "migrate_after": 1},
    ),
    "auth/iss-supported": (
        "an authorization server that advertises the iss parameter and sends the right "
        "one (RFC 9207).",
        {"authorization_server": {"iss": "correct"}},
    ),
    "auth/iss-not-advertised": (
        "an authorization server that neither advertises nor sends the iss parameter.",
        {"authorization_server": {"iss": "absent"}},
    ),
    "auth/iss-supported-missing": (
        "an authorization server that advertises the iss parameter and leaves it out of "
        "the authorization response (a deliberate fault: a client must not redeem the "
        "code).",
        {"authorization_server": {"iss": "absent", "iss_advertised": True}},
    ),
    "auth/iss-wrong-issuer": (
        "an authorization server that advertises the iss parameter and sends another "
        "issuer's (a deliberate fault: a client must not redeem the code).",
        {"authorization_server": {"iss": "wrong"}},
    ),
    "auth/iss-unexpected": (
        "an authorization server that does not advertise the iss parameter and sends "
        "another issuer's all the same (a deliberate fault: a client must compare it, and "
        "not redeem the code).",
        {"authorization_server": {"iss": "wrong", "iss_advertised": False}},
    ),
    "auth/iss-normalized": (
        "an authorization server that advertises the iss parameter and sends its issuer "
        "with a trailing slash, equal to it only once normalised (a deliberate fault: a "
        "client compares strings, and must not redeem the code).",
        {"authorization_server": {"iss": "normalized"}},
    ),
    "auth/metadata-issuer-mismatch": (
        "authorization server metadata whose issuer is not the one its well-known URL is "
        "formed from (a deliberate fault: a client must use none of its endpoints).",
        {"authorization_server": {"metadata_issuer": "mismatch"}},
    ),
}


def auth_modern(name: str) -> Json:
    description, auth = AUTH_MODERN[name]
    prm = {"locations": ["path"], **auth.get("protected_resource", {})}
    server = {**_MODERN_SERVER, **auth.get("authorization_server", {})}
    return auth_protected_server(
        name,
        description,
        {**auth, "protected_resource": prm, "authorization_server": server},
        MODERN,
    )


def auth_scripts_modern() -> dict[str, Json]:
    """The 2026-07-28-only authorization scenarios' scripts, by their path."""
    return {f"{MODERN}/{name}.json": auth_modern(name) for name in AUTH_MODERN}


def scripts() -> dict[str, Json]:
    """Every script, by its path under fixtures/conformance-clients/."""
    return {
        f"{HANDSHAKE}/initialize.json": initialize(),
        f"{HANDSHAKE}/tools_call.json": tools_call(HANDSHAKE),
        f"{HANDSHAKE}/elicitation-sep1034-client-defaults.json": elicitation_defaults(),
        f"{HANDSHAKE}/sse-retry.json": sse_retry(),
        f"{MODERN}/tools_call.json": tools_call(MODERN),
        f"{MODERN}/request-metadata.json": request_metadata(),
        f"{MODERN}/sep-2322-client-request-state.json": request_state(),
        f"{MODERN}/http-standard-headers.json": standard_headers(),
        f"{MODERN}/http-custom-headers.json": custom_headers(),
        f"{MODERN}/http-invalid-tool-headers.json": invalid_tool_headers(),
        f"{MODERN}/json-schema-ref-no-deref.json": json_schema_ref_no_deref(),
        **auth_scripts(),
        **auth_scripts_modern(),
    }


def render(value: Json) -> str:
    """The file's text, in the form every fixture has (mock_servers._jsonfiles)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a shipped script differs")
    args = parser.parse_args(argv)
    wanted = {FOLDER / name: render(value) for name, value in scripts().items()}
    stale = []
    for path, content in wanted.items():
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != content:
                stale.append(f"{path.relative_to(ROOT)} differs")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    shipped = set(FOLDER.rglob("*.json")) if FOLDER.is_dir() else set()
    for extra in sorted(shipped - set(wanted)):
        if args.check:
            stale.append(f"{extra.relative_to(ROOT)} is written by nothing")
        else:
            extra.unlink()
    for line in stale:
        print(f"{line}: run python tools/conformance_client_scripts.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
