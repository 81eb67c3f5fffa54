"""Writes fixtures/conformance/server-<revision>.json: what the official runner's server
scenarios call (`@modelcontextprotocol/conformance`, pinned in tests/e2e-node).

    python tools/conformance_scripts.py           # write the three scripts
    python tools/conformance_scripts.py --check   # exit 1 if a shipped script differs

Each scenario's source names what it needs ("Implement tool `test_simple_text` ... that
returns ..."); the scripts answer exactly that. One script per revision, because some
server requests are valid at some revisions only: `elicitation/create` and
`sampling/createMessage` are not server requests at 2026-07-28 (its tools ask through an
InputRequiredResult instead), and the SEP-1330 enum schemas are not valid at 2025-06-18.
Every step repeats (a scenario may call a tool more than once in one session) and is
optional (no scenario calls everything). tests/e2e/test_e2e_official_runner.py runs them, and
checks that the shipped files are what this writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "fixtures" / "conformance"
REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
MODERN = "2026-07-28"

Json = dict[str, Any]

# A 1x1 PNG and a WAV header with no samples: the smallest valid payloads.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="
NO_ARGUMENTS: Json = {"type": "object", "properties": {}}
PRESENT: Json = {"$present": True}
ABSENT: Json = {"$absent": True}
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def text(value: str) -> Json:
    return {"type": "text", "text": value}


def done(value: str) -> Json:
    return {"result": {"content": [text(value)]}}


def tool(name: str, description: str, schema: Json = NO_ARGUMENTS) -> Json:
    return {"name": name, "description": description, "inputSchema": schema}


def step(label: str, method: str, params: Json | None, reply: Json) -> Json:
    expect: Json = {"method": method}
    if params:
        expect["params"] = params
    return {"label": label, "expect": expect, "reply": reply, "repeat": True, "optional": True}


def call(name: str, reply: Json, label: str | None = None, **params: Any) -> Json:
    return step(label or name, "tools/call", {"name": name, **params}, reply)


def log(message: str) -> Json:
    return {
        "method": "notifications/message",
        "params": {"level": "info", "logger": "conformance", "data": message},
    }


def progress(value: int) -> Json:
    token = {"$request": "/params/_meta/progressToken"}
    return {
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": value, "total": 100},
    }


def elicit(message: str, field: str, kind: str = "string") -> Json:
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema},
    }


def sample(prompt: str, max_tokens: int = 100) -> Json:
    message = {"role": "user", "content": text(prompt)}
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [message], "maxTokens": max_tokens},
    }


def input_required(requests: Json, state: str | None = None) -> Json:
    result: Json = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return {"result": result}


# -- 2025-06-18 and later: tools, resources, prompts, completion, logging ---------------------

JSON_SCHEMA_2020_12: Json = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
SEP_1034_DEFAULTS: Json = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}
OPTIONS = ["option1", "option2", "option3"]
SEP_1330_ENUMS: Json = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": OPTIONS},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": OPTIONS}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


def _string_argument(name: str) -> Json:
    return {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}


# (tool, its call steps, the revisions that have it)
def _tools() -> list[tuple[Json, Json | list[Json], tuple[str, ...]]]:
    every = REVISIONS
    handshake = ("2025-06-18", "2025-11-25")
    mixed = [
        text("Multiple content types test:"),
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": '{"test":"data","value":123}',
            },
        },
    ]
    embedded = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    sampling = sample("")
    sampling["params"]["messages"][0]["content"]["text"] = {"$request": "/params/arguments/prompt"}
    elicitation = {
        "message": {"$request": "/params/arguments/message"},
        "requestedSchema": {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    }
    return [
        (
            tool("test_simple_text", "Returns a simple text."),
            call("test_simple_text", done("This is a simple text response for testing.")),
            every,
        ),
        (
            tool("test_image_content", "Returns an image."),
            call(
                "test_image_content",
                {"result": {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}},
            ),
            every,
        ),
        (
            tool("test_audio_content", "Returns audio."),
            call(
                "test_audio_content",
                {"result": {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}},
            ),
            every,
        ),
        (
            tool("test_embedded_resource", "Returns an embedded resource."),
            call(
                "test_embedded_resource",
                {"result": {"content": [{"type": "resource", "resource": embedded}]}},
            ),
            every,
        ),
        (
            tool("test_multiple_content_types", "Returns text, an image and a resource."),
            call("test_multiple_content_types", {"result": {"content": mixed}}),
            every,
        ),
        (
            # At 2026-07-28 a log needs the request's logLevel opt-in: see test_logging_tool.
            tool("test_tool_with_logging", "Sends three log messages while it runs."),
            call(
                "test_tool_with_logging",
                {
                    "sse": {
                        "events": [
                            {"message": log("Tool execution started")},
                            {"message": log("Tool processing data")},
                            {"message": log("Tool execution completed")},
                            {"response": True},
                        ]
                    },
                    "result": {"content": [text("Tool with logging executed successfully")]},
                },
            ),
            handshake,
        ),
        (
            tool("test_error_handling", "Fails: its result has isError."),
            call(
                "test_error_handling",
                {
                    "result": {
                        "isError": True,
                        "content": [text("This tool intentionally returns an error for testing")],
                    }
                },
            ),
            every,
        ),
        (
            tool("test_tool_with_progress", "Reports progress on the request's token."),
            [
                call(
                    "test_tool_with_progress",
                    {
                        "before": [progress(0), progress(50), progress(100)],
                        "result": {"content": [text("Tool with progress executed successfully")]},
                    },
                    "test_tool_with_progress: with a progress token",
                    _meta={"progressToken": PRESENT},
                ),
                # No token, no notifications: there is nothing they could name.
                call(
                    "test_tool_with_progress",
                    done("Tool with progress executed successfully"),
                    "test_tool_with_progress: without a token",
                ),
            ],
            every,
        ),
        (
            tool("test_sampling", "Asks the client for a sampling.", _string_argument("prompt")),
            call(
                "test_sampling",
                {
                    "before": [{"id": "sampling-1", **sampling}],
                    "result": {
                        "content": [text("LLM response: the client answered the sampling request")]
                    },
                },
                # The prompt is copied into the request: a call without it is unmatched.
                arguments={"prompt": {"$type": "string"}},
            ),
            handshake,
        ),
        (
            tool(
                "test_elicitation",
                "Asks the user for a username and an email.",
                _string_argument("message"),
            ),
            call(
                "test_elicitation",
                {
                    "before": [
                        {
                            "id": "elicitation-1",
                            "method": "elicitation/create",
                            "params": elicitation,
                        }
                    ],
                    "result": {
                        "content": [
                            text("User response: the client answered the elicitation request")
                        ]
                    },
                },
                arguments={"message": {"$type": "string"}},
            ),
            handshake,
        ),
        (
            tool(
                "test_elicitation_sep1034_defaults", "Elicits primitives with defaults (SEP-1034)."
            ),
            call(
                "test_elicitation_sep1034_defaults",
                {
                    "before": [
                        {
                            "id": "elicitation-sep1034",
                            "method": "elicitation/create",
                            "params": {
                                "message": "Please review the defaults",
                                "requestedSchema": SEP_1034_DEFAULTS,
                            },
                        }
                    ],
                    "result": {"content": [text("Elicitation completed: the client answered")]},
                },
            ),
            ("2025-11-25",),
        ),
        (
            tool("test_elicitation_sep1330_enums", "Elicits the five enum forms (SEP-1330)."),
            call(
                "test_elicitation_sep1330_enums",
                {
                    "before": [
                        {
                            "id": "elicitation-sep1330",
                            "method": "elicitation/create",
                            "params": {
                                "message": "Please choose",
                                "requestedSchema": SEP_1330_ENUMS,
                            },
                        }
                    ],
                    "result": {"content": [text("Elicitation completed: the client answered")]},
                },
            ),
            ("2025-11-25",),
        ),
        (
            # The stream closes after its priming event; the result waits for the runner to
            # resume with GET and Last-Event-ID (SEP-1699).
            tool("test_reconnection", "Closes its event stream before the result (resumable)."),
            call(
                "test_reconnection",
                {
                    "sse": {
                        "events": [{"prime": True, "retry": 100, "close": True}, {"response": True}]
                    },
                    "result": {"content": [text("Reconnection test completed")]},
                },
            ),
            ("2025-11-25",),
        ),
        (
            tool(
                "json_schema_2020_12_tool",
                "Tool with JSON Schema 2020-12 features",
                JSON_SCHEMA_2020_12,
            ),
            call("json_schema_2020_12_tool", done("received")),
            every,
        ),
    ]


def _resources_and_prompts(revision: str) -> list[Json]:
    static_text = {
        "uri": "test://static-text",
        "mimeType": "text/plain",
        "text": "This is the content of the static text resource.",
    }
    static_binary = {"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}
    template_123 = {
        "uri": "test://template/123/data",
        "mimeType": "application/json",
        "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
    }
    resources = [
        {
            "uri": "test://static-text",
            "name": "static-text",
            "description": "A static text resource",
            "mimeType": "text/plain",
        },
        {
            "uri": "test://static-binary",
            "name": "static-binary",
            "description": "A static binary resource (a PNG)",
            "mimeType": "image/png",
        },
        {
            "uri": "test://watched-resource",
            "name": "watched-resource",
            "description": "A resource to subscribe to",
            "mimeType": "text/plain",
        },
    ]
    template = {
        "uriTemplate": "test://template/{id}/data",
        "name": "template",
        "description": "Data for an id",
        "mimeType": "application/json",
    }
    prompts = [
        {"name": "test_simple_prompt", "description": "A prompt without arguments"},
        {
            "name": "test_prompt_with_arguments",
            "description": "A prompt with two arguments",
            "arguments": [
                {"name": "arg1", "description": "First test argument", "required": True},
                {"name": "arg2", "description": "Second test argument", "required": True},
            ],
        },
        {
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt that embeds a resource",
            "arguments": [
                {
                    "name": "resourceUri",
                    "description": "URI of the resource to embed",
                    "required": True,
                }
            ],
        },
        {"name": "test_prompt_with_image", "description": "A prompt with an image"},
    ]
    embedded = {
        "uri": {"$request": "/params/arguments/resourceUri"},
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    steps = [
        step("resources/list", "resources/list", None, {"result": {"resources": resources}}),
        step(
            "resources/templates/list",
            "resources/templates/list",
            None,
            {"result": {"resourceTemplates": [template]}},
        ),
        step(
            "read static-text",
            "resources/read",
            {"uri": "test://static-text"},
            {"result": {"contents": [static_text]}},
        ),
        step(
            "read static-binary",
            "resources/read",
            {"uri": "test://static-binary"},
            {"result": {"contents": [static_binary]}},
        ),
        step(
            "read template 123",
            "resources/read",
            {"uri": "test://template/123/data"},
            {"result": {"contents": [template_123]}},
        ),
    ]
    if revision != MODERN:
        # 2026-07-28 removed resources/subscribe and logging/setLevel.
        steps += [
            step(
                "subscribe",
                "resources/subscribe",
                {"uri": "test://watched-resource"},
                {"result": {}},
            ),
            step(
                "unsubscribe",
                "resources/unsubscribe",
                {"uri": "test://watched-resource"},
                {"result": {}},
            ),
        ]
    steps += [
        step("prompts/list", "prompts/list", None, {"result": {"prompts": prompts}}),
        step(
            "prompt simple",
            "prompts/get",
            {"name": "test_simple_prompt"},
            {
                "result": {
                    "messages": [
                        {"role": "user", "content": text("This is a simple prompt for testing.")}
                    ]
                }
            },
        ),
        step(
            "prompt with arguments",
            "prompts/get",
            {
                "name": "test_prompt_with_arguments",
                "arguments": {"arg1": "testValue1", "arg2": "testValue2"},
            },
            {
                "result": {
                    "messages": [
                        {
                            "role": "user",
                            "content": text(
                                "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
                            ),
                        }
                    ]
                }
            },
        ),
        step(
            "prompt with embedded resource",
            "prompts/get",
            {
                "name": "test_prompt_with_embedded_resource",
                "arguments": {"resourceUri": {"$type": "string"}},
            },
            {
                "result": {
                    "messages": [
                        {"role": "user", "content": {"type": "resource", "resource": embedded}},
                        {
                            "role": "user",
                            "content": text("Please process the embedded resource above."),
                        },
                    ]
                }
            },
        ),
        step(
            "prompt with image",
            "prompts/get",
            {"name": "test_prompt_with_image"},
            {
                "result": {
                    "messages": [
                        {
                            "role": "user",
                            "content": {"type": "image", "data": PNG, "mimeType": "image/png"},
                        },
                        {"role": "user", "content": text("Please analyze the image above.")},
                    ]
                }
            },
        ),
        step(
            "completion",
            "completion/complete",
            None,
            {
                "result": {
                    "completion": {
                        "values": ["testValue1", "testValue2"],
                        "total": 2,
                        "hasMore": False,
                    }
                }
            },
        ),
    ]
    if revision != MODERN:
        steps.append(step("logging/setLevel", "logging/setLevel", None, {"result": {}}))
    return steps


# -- 2026-07-28: multi round-trip requests (SEP-2322), the stateless diagnostics -------------

CONFIRM = {
    "method": "elicitation/create",
    "params": {
        "message": "Please confirm",
        "requestedSchema": {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
        },
    },
}
USER_NAME = elicit("What is your name?", "name")
ROOTS = {"method": "roots/list", "params": {}}
SIGNED_STATE = "sig:3f9a1c:ok"

MODERN_TOOLS = [
    tool("test_input_required_result_elicitation", "Asks the user for a name (one round trip)."),
    tool("test_input_required_result_sampling", "Asks the client's model a question."),
    tool("test_input_required_result_list_roots", "Asks for the client's roots."),
    tool("test_input_required_result_request_state", "Round-trips an opaque requestState."),
    tool("test_input_required_result_multiple_inputs", "Asks for three inputs at once."),
    tool("test_input_required_result_multi_round", "Asks twice, with evolving requestState."),
    tool("test_input_required_result_tampered_state", "Rejects a requestState it did not issue."),
    tool(
        "test_input_required_result_capabilities",
        "Asks only for what the client declared (sampling).",
    ),
    tool("test_missing_capability", "Needs sampling: refused with -32021 when it is not declared."),
    tool("test_streaming_elicitation", "Answers with an input request on its response stream."),
    tool("test_logging_tool", "Logs only when the request asks for a logLevel."),
    tool(
        "test_custom_header",
        "Mirrors its region argument into the Mcp-Param-Region header.",
        {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"],
        },
    ),
]

# Steps are matched earliest first: each tool's specific rounds come before its first round.
MODERN_STEPS = [
    # Invalid answers are refused, a wrong key is asked again, the right key completes
    # (extra keys ignored).
    call(
        "test_input_required_result_elicitation",
        {"error": {"code": -32602, "message": "Invalid params: inputResponses must be an object"}},
        "elicitation: null inputResponses",
        inputResponses={"$type": "null"},
    ),
    call(
        "test_input_required_result_elicitation",
        {
            "error": {
                "code": -32602,
                "message": "Invalid params: inputResponses.user_name must be an elicitation result",
            }
        },
        "elicitation: answer is not an object",
        inputResponses={"user_name": {"$type": "number"}},
    ),
    call(
        "test_input_required_result_elicitation",
        done("Hello, Alice!"),
        "elicitation: answered",
        inputResponses={"user_name": {"$type": "object"}},
    ),
    call(
        "test_input_required_result_elicitation",
        input_required({"user_name": USER_NAME}),
        "elicitation: first round, or asked again",
    ),
    call(
        "test_input_required_result_sampling",
        done("The capital of France is Paris."),
        "sampling: answered",
        inputResponses=PRESENT,
    ),
    call(
        "test_input_required_result_sampling",
        input_required({"capital_question": sample("What is the capital of France?")}),
        "sampling: first round",
    ),
    call(
        "test_input_required_result_list_roots",
        done("Roots received: file:///test/root"),
        "roots: answered",
        inputResponses=PRESENT,
    ),
    call(
        "test_input_required_result_list_roots",
        input_required({"client_roots": ROOTS}),
        "roots: first round",
    ),
    call(
        "test_input_required_result_request_state",
        done("state-ok"),
        "request state: echoed",
        inputResponses=PRESENT,
        requestState="confirm-state-1",
    ),
    call(
        "test_input_required_result_request_state",
        input_required({"confirm": CONFIRM}, "confirm-state-1"),
        "request state: first round",
        requestState=ABSENT,
    ),
    call(
        "test_input_required_result_multiple_inputs",
        done("Hello Alice: all three inputs received"),
        "multiple inputs: all answered",
        requestState="multi-state-1",
        inputResponses={"user_name": PRESENT, "greeting": PRESENT, "client_roots": PRESENT},
    ),
    call(
        "test_input_required_result_multiple_inputs",
        input_required(
            {
                "user_name": USER_NAME,
                "greeting": sample("Generate a greeting", 50),
                "client_roots": ROOTS,
            },
            "multi-state-1",
        ),
        "multiple inputs: first round",
    ),
    call(
        "test_input_required_result_multi_round",
        done("Alice likes blue"),
        "multi round: third round",
        requestState="round-2",
        inputResponses={"step2": PRESENT},
    ),
    call(
        "test_input_required_result_multi_round",
        input_required(
            {"step2": elicit("Step 2: What is your favorite color?", "color")}, "round-2"
        ),
        "multi round: second round",
        requestState="round-1",
        inputResponses={"step1": PRESENT},
    ),
    call(
        "test_input_required_result_multi_round",
        input_required({"step1": elicit("Step 1: What is your name?", "name")}, "round-1"),
        "multi round: first round",
        requestState=ABSENT,
    ),
    call(
        "test_input_required_result_tampered_state",
        done("state verified"),
        "tampered state: the issued state",
        requestState=SIGNED_STATE,
        inputResponses=PRESENT,
    ),
    call(
        "test_input_required_result_tampered_state",
        {
            "error": {
                "code": -32602,
                "message": "Invalid params: requestState failed its integrity check",
            }
        },
        "tampered state: any other state",
        requestState=PRESENT,
    ),
    call(
        "test_input_required_result_tampered_state",
        input_required({"confirm": CONFIRM}, SIGNED_STATE),
        "tampered state: first round",
    ),
    call(
        "test_input_required_result_capabilities",
        done("sampling answer received"),
        "capabilities: answered",
        inputResponses=PRESENT,
    ),
    call(
        "test_input_required_result_capabilities",
        input_required({"question": sample("What is the capital of France?")}),
        "capabilities: sampling only",
        _meta={CLIENT_CAPABILITIES: {"sampling": PRESENT, "elicitation": ABSENT}},
    ),
    call(
        "test_missing_capability",
        input_required({"question": sample("Say hello")}),
        "missing capability: sampling declared",
        _meta={CLIENT_CAPABILITIES: {"sampling": PRESENT}},
    ),
    call(
        "test_missing_capability",
        {
            "status": 400,
            "error": {
                "code": -32021,
                "message": "Missing required client capability: sampling",
                "data": {"requiredCapabilities": {"sampling": {}}},
            },
        },
        "missing capability: sampling undeclared",
    ),
    call(
        "test_streaming_elicitation",
        input_required({"user_name": USER_NAME}),
        "streaming elicitation",
    ),
    # An info log goes only to a request that opted in at debug or info.
    call(
        "test_logging_tool",
        {"before": [log("test_logging_tool ran")], "result": {"content": [text("logged")]}},
        "logging tool: asked for info or more",
        _meta={LOG_LEVEL: {"$any": ["debug", "info"]}},
    ),
    call(
        "test_logging_tool", done("ran without logging"), "logging tool: no logLevel, or above info"
    ),
    call("test_custom_header", done("region received"), "custom header"),
    step(
        "prompt needing input: answered",
        "prompts/get",
        {"name": "test_input_required_result_prompt", "inputResponses": PRESENT},
        {
            "result": {
                "messages": [{"role": "user", "content": text("Use this context: test context")}]
            }
        },
    ),
    step(
        "prompt needing input: first round",
        "prompts/get",
        {"name": "test_input_required_result_prompt"},
        input_required({"user_context": elicit("What context should the prompt use?", "context")}),
    ),
    # After the scripted resources: any other uri is not found (SEP-2164).
    step(
        "read an unknown resource",
        "resources/read",
        None,
        {
            "error": {
                "code": -32602,
                "message": "Resource not found",
                "data": {"uri": {"$request": "/params/uri"}},
            }
        },
    ),
]


def build(revision: str) -> Json:
    """The script for one revision."""
    tools = [(t, s) for t, s, revisions in _tools() if revision in revisions]
    listed = [t for t, _ in tools]
    steps = [one for _, s in tools for one in (s if isinstance(s, list) else [s])]
    if revision == MODERN:
        listed += MODERN_TOOLS
    steps = [step("tools/list", "tools/list", None, {"result": {"tools": listed}}), *steps]
    steps += _resources_and_prompts(revision)
    if revision == MODERN:
        steps += MODERN_STEPS
    # No resources.subscribe at 2026-07-28: it would promise subscriptions/listen, which the
    # scripts do not drive.
    resources: Json = {} if revision == MODERN else {"subscribe": True}
    capabilities: Json = {"tools": {}, "resources": resources, "prompts": {}, "completions": {}}
    capabilities["logging"] = {}
    return {
        "format_version": 1,
        "name": "conformance-server-scenarios",
        "description": (
            f"Everything the official MCP conformance runner's server scenarios call at {revision}: "
            "the test_* tools, resources and prompts, completion and logging. Every step "
            "repeats and is optional. Written by tools/conformance_scripts.py; edit that, not this."
        ),
        "revisions": [revision],
        "transports": ["http"],
        "server": {
            "info": {"name": "mcp-testbench-conformance", "version": "1.0.0"},
            "capabilities": capabilities,
        },
        "steps": steps,
    }


def render(revision: str) -> str:
    """The file's text, in the form every fixture has (mock_servers._jsonfiles)."""
    return json.dumps(build(revision), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a shipped script differs")
    args = parser.parse_args(argv)
    stale = []
    for revision in REVISIONS:
        path = FOLDER / f"server-{revision}.json"
        wanted = render(revision)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != wanted:
                stale.append(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted, encoding="utf-8")
    for path in stale:
        print(
            f"{path.relative_to(ROOT)} differs: run python tools/conformance_scripts.py",
            file=sys.stderr,
        )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
