"""The project's own MCP schemas, cross-checked against the official ones, and the API.

The official `schema.json` files (../shared/mcp-schemas/<revision>/) are test data only.
How they are used, as their README says: there is no root type, so a message is checked
against `JSONRPCMessage`, then against the envelope its members select (a member "id"
beside "method" makes it a request, as in JSON-RPC 2.0) and the direction's union, or,
for a result whose request method is known, against that method's result type.

Up to 2025-06-18 the official request and notification definitions are the bare
`{method, params}`, without the JSON-RPC envelope; ours are whole messages. There the
official side of a pair is `allOf: [JSONRPCRequest (or Notification), <definition>]`.

Documented differences (each pinned by a test below, so that a change on either side shows):

* Ours is stricter, because the spec text says so and the official schemas' open objects
  do not: a request must not carry "result"/"error"; a notification no "id"; a response
  not both "result" and "error" (JSON-RPC 2.0, and the MCP base protocol page up to
  2025-06-18); a batch is not empty (JSON-RPC 2.0) and holds no `initialize` (2025-03-26
  lifecycle); a 2026-07-28 client sends no responses at all (2026-07-28 stdio/HTTP
  transports: "The client MUST NOT write JSON-RPC responses"); a 2026-07-28 result whose
  `resultType` is not "input_required" is the method's own result type, not an
  `InputRequiredResult` ("complete ... contains the final content").
* The official schema is stricter than the spec text, so ours is laxer:
  `ElicitResult.content` values may be any number (the TypeScript type is `number` and a
  form's NumberSchema may ask for `"type": "number"`), where the official JSON says integer;
  and 2026-07-28 `JSONValue` admits null and fractional numbers (TypeScript: `string |
  number | boolean | null | JSONObject | JSONArray`), where the official JSON admits only
  strings, integers, booleans, arrays and objects. For the ours-to-official property tests,
  the generator draws from a copy of our document narrowed to the official reading.
* Official definitions that are abstract or not message types (e.g. `Request`,
  `PaginatedRequest`, `Annotated`, `JSONRPCBatchRequest` which admits `[]`) are not in the
  pair lists.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _spec_data import spec_data
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.jsonschema import DRAFT7, DRAFT202012

from harness.protocol import (
    HANDSHAKE_REVISIONS,
    REVISIONS,
    Direction,
    Violation,
    _schema_source,
    classify,
    definition_names,
    schema_document,
    validate,
    validate_definition,
)
from harness.protocol._schemas import _KNOWN_VALID
from harness.strategies import mcp_messages, schema_values

DRAFT7_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18")  # `definitions`, draft-07

# Official definitions cross-checked per revision: at least 20 message types each.
PAIRS: dict[str, list[str]] = {
    "2024-11-05": [
        "InitializeRequest",
        "InitializeResult",
        "InitializedNotification",
        "PingRequest",
        "ListToolsResult",
        "CallToolRequest",
        "CallToolResult",
        "ListResourcesResult",
        "ReadResourceRequest",
        "ReadResourceResult",
        "ResourceUpdatedNotification",
        "ListPromptsResult",
        "GetPromptRequest",
        "GetPromptResult",
        "CreateMessageRequest",
        "CreateMessageResult",
        "ListRootsResult",
        "SetLevelRequest",
        "LoggingMessageNotification",
        "ProgressNotification",
        "CancelledNotification",
        "CompleteResult",
    ],
    "2025-03-26": [
        "InitializeRequest",
        "InitializeResult",
        "InitializedNotification",
        "PingRequest",
        "ListToolsResult",
        "CallToolRequest",
        "CallToolResult",
        "ListResourceTemplatesResult",
        "ReadResourceRequest",
        "ReadResourceResult",
        "GetPromptRequest",
        "GetPromptResult",
        "CreateMessageRequest",
        "CreateMessageResult",
        "ListRootsRequest",
        "ListRootsResult",
        "RootsListChangedNotification",
        "LoggingMessageNotification",
        "ProgressNotification",
        "CancelledNotification",
        "CompleteRequest",
        "CompleteResult",
    ],
    "2025-06-18": [
        "InitializeRequest",
        "InitializeResult",
        "PingRequest",
        "ListToolsRequest",
        "ListToolsResult",
        "CallToolRequest",
        "CallToolResult",
        "ListResourcesResult",
        "ReadResourceResult",
        "GetPromptRequest",
        "GetPromptResult",
        "CreateMessageRequest",
        "CreateMessageResult",
        "ListRootsResult",
        "ElicitRequest",
        "ElicitResult",
        "SetLevelRequest",
        "LoggingMessageNotification",
        "ProgressNotification",
        "CancelledNotification",
        "CompleteRequest",
        "CompleteResult",
    ],
    "2025-11-25": [
        "InitializeRequest",
        "InitializeResult",
        "InitializedNotification",
        "PingRequest",
        "ListToolsResult",
        "CallToolRequest",
        "CallToolResult",
        "ReadResourceResult",
        "GetPromptResult",
        "CreateMessageRequest",
        "CreateMessageResult",
        "ElicitRequest",
        "ElicitResult",
        "ElicitationCompleteNotification",
        "GetTaskRequest",
        "GetTaskResult",
        "CreateTaskResult",
        "ListTasksResult",
        "TaskStatusNotification",
        "CancelledNotification",
        "ProgressNotification",
        "URLElicitationRequiredError",
    ],
    "2026-07-28": [
        "DiscoverRequest",
        "DiscoverResult",
        "ListToolsRequest",
        "ListToolsResult",
        "CallToolRequest",
        "CallToolResult",
        "CallToolResultResponse",
        "ReadResourceRequest",
        "ReadResourceResult",
        "GetPromptRequest",
        "GetPromptResult",
        "SubscriptionsListenRequest",
        "SubscriptionsListenResult",
        "SubscriptionsAcknowledgedNotification",
        "InputRequiredResult",
        "CreateMessageRequest",
        "ElicitRequest",
        "ElicitResult",
        "ListRootsResult",
        "CancelledNotification",
        "CompleteResult",
        "UnsupportedProtocolVersionError",
    ],
}
PAIR_IDS = [(revision, name) for revision, names in PAIRS.items() for name in names]


# --- the official schemas ------------------------------------------------------------------


@functools.cache
def official(revision: str) -> dict[str, Any]:
    path = spec_data(f"mcp-schemas/{revision}/schema.json")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def defs_key(revision: str) -> str:
    return "definitions" if revision in DRAFT7_REVISIONS else "$defs"


@functools.cache
def _official_registry(revision: str) -> Registry[Any]:
    spec = DRAFT7 if revision in DRAFT7_REVISIONS else DRAFT202012
    registry: Registry[Any] = Registry().with_resource(
        f"urn:official:{revision}", spec.create_resource(official(revision))
    )
    return registry


@functools.cache
def official_validator(revision: str, name: str) -> Validator:
    cls = Draft7Validator if revision in DRAFT7_REVISIONS else Draft202012Validator
    schema = {"$ref": f"urn:official:{revision}#/{defs_key(revision)}/{name}"}
    validator: Validator = cls(schema, registry=_official_registry(revision))
    return validator


def official_errors(revision: str, name: str, instance: Any) -> list[str]:
    return [
        f"{name}: {error.json_path}: {error.message}"
        for error in official_validator(revision, name).iter_errors(instance)
    ]


def _union_refs(revision: str, union: str) -> set[str]:
    node = official(revision)[defs_key(revision)].get(union, {})
    branches = node.get("anyOf", [node])
    return {branch["$ref"].rsplit("/", 1)[-1] for branch in branches if "$ref" in branch}


def official_envelope(revision: str, name: str) -> str | None:
    """The JSON-RPC envelope that the official `name` lacks (up to 2025-06-18), if any."""
    if revision not in DRAFT7_REVISIONS:
        return None
    if name in _union_refs(revision, "ClientRequest") | _union_refs(revision, "ServerRequest"):
        return "JSONRPCRequest"
    if name in _union_refs(revision, "ClientNotification") | _union_refs(
        revision, "ServerNotification"
    ):
        return "JSONRPCNotification"
    return None


def official_pair_errors(revision: str, name: str, instance: Any) -> list[str]:
    """Errors of `instance` against the official message type `name` (envelope included)."""
    envelope = official_envelope(revision, name)
    errors = official_errors(revision, envelope, instance) if envelope else []
    return errors + official_errors(revision, name, instance)


@functools.cache
def official_generation_document(revision: str) -> dict[str, Any]:
    """The official document plus, up to 2025-06-18, each message type with its envelope."""
    document = copy.deepcopy(official(revision))
    key = defs_key(revision)
    for name in PAIRS[revision]:
        envelope = official_envelope(revision, name)
        if envelope:
            document[key][f"_Message_{name}"] = {
                "allOf": [{"$ref": f"#/{key}/{envelope}"}, {"$ref": f"#/{key}/{name}"}]
            }
    return document


def official_generation_name(revision: str, name: str) -> str:
    return f"_Message_{name}" if official_envelope(revision, name) else name


# Which result type answers which request, for the official side of the corpus.
RESULT_OF = {
    "initialize": "InitializeResult",
    "tools/call": "CallToolResult",
    "tools/list": "ListToolsResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
    "elicitation/create": "ElicitResult",
}
SPECIFIC_ERRORS = {
    -32042: "URLElicitationRequiredError",
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}


def official_verdict(
    message: Any, revision: str, direction: str, request_method: str | None = None
) -> list[str]:
    """The official schema's errors for a message sent by `direction` ([] = accepted)."""
    errors = official_errors(revision, "JSONRPCMessage", message)
    if errors:
        return errors
    if isinstance(message, list):
        return [e for item in message for e in official_verdict(item, revision, direction)]
    side = "Client" if direction == "client" else "Server"
    defs = official(revision)[defs_key(revision)]
    if "method" in message:
        kind = "Request" if "id" in message else "Notification"
        checks = [f"JSONRPC{kind}", f"{side}{kind}"]
    elif "result" in message:
        envelope = "JSONRPCResultResponse" if "JSONRPCResultResponse" in defs else "JSONRPCResponse"
        if request_method is not None and f"{RESULT_OF[request_method]}Response" in defs:
            checks = [envelope, f"{RESULT_OF[request_method]}Response"]  # 2026-07-28 names them
        else:
            union = f"{side}Result" if request_method is None else RESULT_OF[request_method]
            if union not in defs:
                return [f"the official schema has no {union} at {revision}"]
            result_errors = official_errors(revision, union, message["result"])
            return official_errors(revision, envelope, message) + result_errors
    else:
        checks = ["JSONRPCErrorResponse" if "JSONRPCErrorResponse" in defs else "JSONRPCError"]
        code = message["error"].get("code") if isinstance(message["error"], dict) else None
        if isinstance(code, int) and SPECIFIC_ERRORS.get(code) in defs:
            checks.append(SPECIFIC_ERRORS[code])
    out = []
    for name in checks:
        if name not in defs:
            return [f"the official schema has no {name} at {revision}"]
        out += official_errors(revision, name, message)
    return out


# --- our document, narrowed to the official reading where the official is stricter ---------


@functools.cache
def official_compatible_document(revision: str) -> dict[str, Any]:
    """Our document with the two documented official narrowings applied (see module doc)."""
    document = schema_document(revision)
    defs = document["$defs"]
    if "JSONObject" in defs:
        defs["JSONObject"] = {
            "type": "object",
            "additionalProperties": {"type": ["string", "integer", "boolean"]},
        }
    if "ElicitResult" in defs:
        content = defs["ElicitResult"]["properties"]["content"]
        text = json.dumps(content).replace('"number"', '"integer"')
        defs["ElicitResult"]["properties"]["content"] = json.loads(text)
    return document


@functools.cache
def our_table(revision: str) -> dict[str, Any]:
    table: dict[str, Any] = schema_document(revision)["x-mcp"]
    return table


def _senders(revision: str, name: str) -> Iterator[tuple[Direction, str]]:
    """(direction, "request" or "notification") of each message kind that is `name`."""
    table = our_table(revision)
    sides: tuple[Direction, ...] = ("client", "server")
    for side in sides:
        if any(e["request"] == name for e in table[side]["requests"].values()):
            yield side, "request"
        elif name in table[side]["notifications"].values():
            yield side, "notification"


def _result_routes(revision: str, name: str) -> Iterator[tuple[Direction, str]]:
    """(responder, request method) pairs whose primary result type is `name`."""
    table = our_table(revision)
    sides: tuple[tuple[str, Direction], ...] = (("client", "server"), ("server", "client"))
    for side, responder in sides:
        for method, entry in table[side]["requests"].items():
            if entry["result"] == name and name != "EmptyResult":
                yield responder, method


def our_problems(revision: str, name: str, instance: Any) -> list[Violation]:
    """Our verdict on `instance` as the message type `name`, through the public API."""
    problems: list[Violation] = []
    senders = list(_senders(revision, name))
    routes = list(_result_routes(revision, name))
    for sender, kind in senders:
        # The official envelopes leave these members open; JSON-RPC forbids them (module doc).
        forbidden = {"result", "error"} | ({"id"} if kind == "notification" else set())
        assume(not forbidden & set(instance))
        problems += validate(instance, revision, sender)
    for responder, method in routes:
        response = {"jsonrpc": "2.0", "id": 1, "result": instance}
        problems += validate(response, revision, responder, request_method=method)
    if not senders and not routes:
        problems += validate_definition(instance, revision, name)
    return problems


# --- 1 and 2: property cross-checks ----------------------------------------------------------

# 220 property tests (two directions of 110 pairs) over data that changes only with a
# schema: breadth. Each draws half the profile's examples, at least 50: under CI 100 each,
# 22,000 a run, drawn afresh every run. At the CI profile's 200 they were a fifth of the
# project's CI CPU time (three times everything else in this file). After a change to a
# schema, HYPOTHESIS_PROFILE=deep runs them at 500 each (tests/conftest.py).
PAIR_EXAMPLES = settings(max_examples=max(50, settings().max_examples // 2))


@pytest.mark.parametrize(("revision", "name"), PAIR_IDS)
@PAIR_EXAMPLES
@given(data=st.data())
def test_official_instances_validate_against_ours(
    revision: str, name: str, data: st.DataObject
) -> None:
    document = official_generation_document(revision)
    instance = data.draw(schema_values(document, official_generation_name(revision, name)))
    note(instance)
    problems = our_problems(revision, name, instance)
    if problems:  # first rule out a generator fault (checked only then: it costs time)
        assert official_pair_errors(revision, name, instance) == []
    assert problems == []


@pytest.mark.parametrize(("revision", "name"), PAIR_IDS)
@PAIR_EXAMPLES
@given(data=st.data())
def test_our_instances_validate_against_official(
    revision: str, name: str, data: st.DataObject
) -> None:
    instance = data.draw(schema_values(official_compatible_document(revision), name))
    note(instance)
    errors = official_pair_errors(revision, name, instance)
    if errors:
        assert validate_definition(instance, revision, name) == []
    assert errors == []


def test_pair_lists_cover_twenty_message_types_per_revision() -> None:
    for revision in REVISIONS:
        names = PAIRS[revision]
        assert len(set(names)) == len(names) >= 20, revision
        official_names = set(official(revision)[defs_key(revision)])
        assert set(names) <= official_names, revision
        assert set(names) <= set(definition_names(revision)), revision


def _resolve(document: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        target: Any = document
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def member_paths(document: dict[str, Any], node: Any, depth: int = 0, at: str = "") -> set[str]:
    """Pointers of the members a schema names, through `properties`, `$ref` and `allOf`."""
    node = _resolve(document, node)
    if not isinstance(node, dict):
        return set()
    members: dict[str, list[Any]] = {}
    for part in [node, *(_resolve(document, p) for p in node.get("allOf", []))]:
        for name, sub in part.get("properties", {}).items() if isinstance(part, dict) else ():
            members.setdefault(name, []).append(sub)
    paths = set()
    for name, subs in members.items():
        if all(sub is False for sub in subs):
            continue  # a member our envelopes forbid
        paths.add(f"{at}/{name}")
        if depth < 3:
            for sub in subs:
                paths |= member_paths(document, sub, depth + 1, f"{at}/{name}")
    return paths


@pytest.mark.parametrize("revision", REVISIONS)
def test_our_definitions_name_every_official_member(revision: str) -> None:
    # The property tests cannot see a missing optional member (an open object accepts it
    # anyway); this can. Four levels deep, for every definition both documents have.
    theirs, ours = official(revision), schema_document(revision)
    common = set(theirs[defs_key(revision)]) & set(ours["$defs"])
    assert len(common) >= 70
    missing = {
        name: sorted(
            member_paths(theirs, theirs[defs_key(revision)][name])
            - member_paths(ours, ours["$defs"][name])
        )
        for name in sorted(common)
    }
    assert {name: paths for name, paths in missing.items() if paths} == {}


def test_documented_differences_are_real() -> None:
    # ElicitResult: a fractional answer (the spec's `number`); the official JSON says integer.
    for revision in ("2025-06-18", "2025-11-25", "2026-07-28"):
        answer = {"action": "accept", "content": {"ratio": 0.5}}
        assert validate_definition(answer, revision, "ElicitResult") == []
        assert official_errors(revision, "ElicitResult", answer) != []
    # 2026-07-28 JSONValue: null and fractions are JSON values (the spec's TypeScript).
    capabilities = {"experimental": {"x": {"threshold": 0.5, "none": None}}}
    assert validate_definition(capabilities, "2026-07-28", "ClientCapabilities") == []
    assert official_errors("2026-07-28", "ClientCapabilities", capabilities) != []
    # The narrowed copy used for ours-to-official generation rejects both.
    narrowed = official_compatible_document("2026-07-28")
    narrowed_validator = Draft202012Validator(narrowed)
    check = narrowed_validator.evolve(schema={"$ref": "#/$defs/ClientCapabilities"})
    assert not check.is_valid(capabilities)


# --- 3: a corpus of known-bad and known-good messages ---------------------------------------

_META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
_INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "c", "version": "1"},
}


def _req(method: str, params: Any = None, id_: Any = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        out["params"] = params
    return out


def _ok(result: Any, id_: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


_TEXT = {"type": "text", "text": "hi"}

# (id, revision, direction, message, request_method)
Case = tuple[str, str, Direction, Any, "str | None"]
KNOWN_BAD: list[Case] = [
    ("null-id", "2025-06-18", "client", _req("ping", id_=None), None),
    ("null-id-2026", "2026-07-28", "client", _req("tools/list", {"_meta": _META_2026}, None), None),
    ("missing-jsonrpc", "2024-11-05", "client", {"id": 1, "method": "ping"}, None),
    ("jsonrpc-1.0", "2025-03-26", "client", {**_req("ping"), "jsonrpc": "1.0"}, None),
    ("id-float", "2025-06-18", "client", _req("ping", id_=1.5), None),
    ("id-boolean", "2025-11-25", "client", _req("ping", id_=True), None),
    ("id-object", "2024-11-05", "client", _req("ping", id_={"n": 1}), None),
    (
        "error-code-string",
        "2025-06-18",
        "server",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "-32601", "message": "no"}},
        None,
    ),
    (
        "error-without-message",
        "2025-11-25",
        "client",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}},
        None,
    ),
    (
        "2026-no-protocol-version",
        "2026-07-28",
        "client",
        _req("tools/list", {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        None,
    ),
    (
        "2026-no-client-capabilities",
        "2026-07-28",
        "client",
        _req("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        None,
    ),
    ("2026-no-meta", "2026-07-28", "client", _req("tools/call", {"name": "t"}), None),
    (
        "2026-result-without-resultType",
        "2026-07-28",
        "server",
        _ok({"content": [_TEXT]}),
        "tools/call",
    ),
    (
        "2026-list-without-ttl",
        "2026-07-28",
        "server",
        _ok({"resultType": "complete", "tools": [], "cacheScope": "public"}),
        "tools/list",
    ),
    ("batch-2025-06-18", "2025-06-18", "client", [_req("ping")], None),
    ("batch-2025-11-25", "2025-11-25", "client", [_req("ping")], None),
    (
        "batch-2026-07-28",
        "2026-07-28",
        "client",
        [_req("server/discover", {"_meta": _META_2026})],
        None,
    ),
    (
        "batch-mixed-2025-03-26",
        "2025-03-26",
        "client",
        [_req("ping"), _ok({})],
        None,
    ),
    ("initialize-2026", "2026-07-28", "client", _req("initialize", _INIT_PARAMS), None),
    ("ping-2026", "2026-07-28", "client", _req("ping", {"_meta": _META_2026}), None),
    (
        "setLevel-2026",
        "2026-07-28",
        "client",
        _req("logging/setLevel", {"_meta": _META_2026, "level": "info"}),
        None,
    ),
    (
        "roots-list-changed-2026",
        "2026-07-28",
        "client",
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        None,
    ),
    ("discover-2025-11-25", "2025-11-25", "client", _req("server/discover", {}), None),
    ("sampling-from-client", "2025-06-18", "client", _req("sampling/createMessage", {}), None),
    (
        "notification-with-id",
        "2025-06-18",
        "client",
        _req("notifications/initialized"),
        None,
    ),
    (
        "tools-call-without-name",
        "2025-06-18",
        "client",
        _req("tools/call", {"arguments": {}}),
        None,
    ),
    ("resources-read-without-uri", "2024-11-05", "client", _req("resources/read", {}), None),
    (
        "params-array",
        "2025-03-26",
        "client",
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": []},
        None,
    ),
    (
        "text-block-without-text",
        "2025-06-18",
        "server",
        _ok({"content": [{"type": "text"}]}),
        "tools/call",
    ),
    (
        "image-without-mimeType",
        "2024-11-05",
        "server",
        _ok({"content": [{"type": "image", "data": "AA=="}]}),
        "tools/call",
    ),
    (
        "audio-block-2024",
        "2024-11-05",
        "server",
        _ok({"content": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]}),
        "tools/call",
    ),
    (
        "sampling-result-without-model",
        "2025-03-26",
        "client",
        _ok({"role": "assistant", "content": _TEXT}),
        "sampling/createMessage",
    ),
    (
        "elicit-action-unknown",
        "2025-06-18",
        "client",
        _ok({"action": "maybe"}),
        "elicitation/create",
    ),
    (
        "initialize-without-clientInfo",
        "2025-11-25",
        "client",
        _req("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}),
        None,
    ),
    (
        "2026-version-error-without-data",
        "2026-07-28",
        "server",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "unsupported"}},
        None,
    ),
]

KNOWN_GOOD: list[Case] = [
    *[
        (f"initialize-{revision}", revision, "client", _req("initialize", _INIT_PARAMS), None)
        for revision in HANDSHAKE_REVISIONS
    ],
    (
        "batch-2025-03-26",
        "2025-03-26",
        "client",
        [
            _req("tools/list"),
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 0.5},
            },
        ],
        None,
    ),
    (
        "response-batch-2025-03-26",
        "2025-03-26",
        "client",
        [_ok({}), {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "no"}}],
        None,
    ),
    ("discover-2026", "2026-07-28", "client", _req("server/discover", {"_meta": _META_2026}), None),
    (
        "tools-call-2026",
        "2026-07-28",
        "client",
        _req("tools/call", {"_meta": _META_2026, "name": "t", "arguments": {"x": [1, None]}}),
        None,
    ),
    (
        "input-required-2026",
        "2026-07-28",
        "server",
        _ok(
            {
                "resultType": "input_required",
                "inputRequests": {"r": {"method": "roots/list"}},
                "requestState": "opaque",
            }
        ),
        "tools/call",
    ),
    (
        "cancelled-2026",
        "2026-07-28",
        "client",
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        None,
    ),
    (
        "resource-link-2025-06-18",
        "2025-06-18",
        "server",
        _ok({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]}),
        "tools/call",
    ),
    (
        "sampling-result-2024",
        "2024-11-05",
        "client",
        _ok({"role": "assistant", "content": _TEXT, "model": "m"}),
        "sampling/createMessage",
    ),
    (
        "error-without-id-2025-11-25",
        "2025-11-25",
        "server",
        {"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse error"}},
        None,
    ),
]

# Ours rejects, the official schema accepts: each is a spec rule the official JSON does
# not encode (module doc). Pinned so that a change on either side is noticed.
OURS_STRICTER: list[Case] = [
    (
        "both-result-and-error",
        "2025-06-18",
        "server",
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
        None,
    ),
    ("request-with-result", "2024-11-05", "client", {**_req("ping"), "result": {}}, None),
    ("empty-batch-2025-03-26", "2025-03-26", "client", [], None),
    ("initialize-in-batch", "2025-03-26", "client", [_req("initialize", _INIT_PARAMS)], None),
    ("client-response-2026", "2026-07-28", "client", _ok({"resultType": "complete"}), None),
    (
        "complete-result-without-content-2026",
        "2026-07-28",
        "server",
        _ok({"resultType": "complete"}),
        "tools/call",
    ),
]


def _case_ids(cases: list[Case]) -> list[str]:
    return [case[0] for case in cases]


@pytest.mark.parametrize(
    ("case", "revision", "direction", "message", "method"), KNOWN_BAD, ids=_case_ids(KNOWN_BAD)
)
def test_known_bad_rejected_by_both(
    case: str, revision: str, direction: Direction, message: Any, method: str | None
) -> None:
    ours = validate(message, revision, direction, request_method=method)
    assert ours, f"{case}: our schema accepted it"
    assert all(isinstance(v, Violation) and v.reason for v in ours)
    assert official_verdict(message, revision, direction, method), f"{case}: official accepted"


@pytest.mark.parametrize(
    ("case", "revision", "direction", "message", "method"), KNOWN_GOOD, ids=_case_ids(KNOWN_GOOD)
)
def test_known_good_accepted_by_both(
    case: str, revision: str, direction: Direction, message: Any, method: str | None
) -> None:
    assert validate(message, revision, direction, request_method=method) == []
    assert official_verdict(message, revision, direction, method) == []


@pytest.mark.parametrize(
    ("case", "revision", "direction", "message", "method"),
    OURS_STRICTER,
    ids=_case_ids(OURS_STRICTER),
)
def test_ours_stricter_where_the_spec_says_so(
    case: str, revision: str, direction: Direction, message: Any, method: str | None
) -> None:
    assert validate(message, revision, direction, request_method=method)
    assert official_verdict(message, revision, direction, method) == []


# --- 4: the generated files --------------------------------------------------------------------


def test_generated_files_are_up_to_date() -> None:
    stale = _schema_source.stale_files()
    assert stale == [], f"run `python -m harness.protocol._schema_source --write`: stale {stale}"


def test_check_entry_point_reports_stale_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _schema_source.main(["--check"], directory=tmp_path) == 1  # nothing written yet
    assert _schema_source.main(["--write"], directory=tmp_path) == 0
    assert _schema_source.main(["--check"], directory=tmp_path) == 0
    stale = tmp_path / _schema_source.file_name("2025-06-18")
    stale.write_text(stale.read_text(encoding="utf-8").replace('"2.0"', '"1.0"'), encoding="utf-8")
    capsys.readouterr()
    assert _schema_source.main(["--check"], directory=tmp_path) == 1
    assert "mcp-2025-06-18.schema.json" in capsys.readouterr().err


@pytest.mark.parametrize("revision", REVISIONS)
def test_files_are_normalised_and_our_own(revision: str) -> None:
    path = _schema_source.SCHEMA_DIR / _schema_source.file_name(revision)
    text = path.read_text(encoding="utf-8")
    document = json.loads(text)
    assert text == json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(document)
    theirs = official(revision)
    assert document != theirs
    assert "definitions" not in document
    # Not copied: none of the official descriptions (the bulk of its text) is in ours.
    descriptions = set(_descriptions(theirs))
    assert len(descriptions) > 50
    assert not [d for d in descriptions if len(d) > 30 and d in text]


def _descriptions(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _descriptions(item)


# --- 5: the validate() API ----------------------------------------------------------------------


def test_wrong_type_names_the_member() -> None:
    message = _req("tools/call", {"name": 5})
    assert validate(message, "2025-06-18", "client") == [
        Violation("/params/name", "must be a string, not an integer (5)")
    ]


def test_missing_member_points_at_its_object() -> None:
    message = _req("tools/call", {"_meta": _META_2026})
    assert validate(message, "2026-07-28", "client") == [
        Violation("/params", 'missing required member "name"')
    ]


def test_unknown_method_names_method_and_revision() -> None:
    (violation,) = validate(_req("initialize", _INIT_PARAMS), "2026-07-28", "client")
    assert violation.pointer == "/method"
    assert '"initialize"' in violation.reason
    assert "2026-07-28" in violation.reason
    (violation,) = validate(_req("server/discover", {}), "2025-11-25", "client")
    assert '"server/discover"' in violation.reason
    assert "2025-11-25" in violation.reason
    assert "2026-07-28" in violation.reason  # where it does exist
    (violation,) = validate(_req("no/such"), "2025-06-18", "server")
    assert violation.reason == 'unknown method "no/such": not a server request at MCP 2025-06-18'


def test_direction_matters() -> None:
    sampling = _req(
        "sampling/createMessage", {"messages": [{"role": "user", "content": _TEXT}], "maxTokens": 9}
    )
    assert validate(sampling, "2025-06-18", "server") == []
    (violation,) = validate(sampling, "2025-06-18", "client")
    assert "server-to-client request" in violation.reason


def test_result_type_follows_request_method() -> None:
    answer = _ok({"role": "assistant", "content": {"type": "text"}, "model": "m"})
    assert validate(answer, "2025-06-18", "client") == []  # the union admits any object
    assert validate(answer, "2025-06-18", "client", request_method="sampling/createMessage") == [
        Violation("/result/content", 'missing required member "text"')
    ]
    (violation,) = validate(answer, "2025-06-18", "client", request_method="tools/call")
    assert '"tools/call" is not a request that a server sends' in violation.reason


def test_content_block_errors_come_from_the_matching_branch() -> None:
    result = _ok({"content": [_TEXT, {"type": "image", "data": "AA=="}]})
    assert validate(result, "2025-03-26", "server", request_method="tools/call") == [
        Violation("/result/content/1", 'missing required member "mimeType"')
    ]


def test_mrtr_and_tasks_route_their_results() -> None:
    required = _ok({"resultType": "input_required", "inputRequests": {"a": {"method": "nope"}}})
    violations = validate(required, "2026-07-28", "server", request_method="tools/call")
    assert violations
    assert all(v.pointer.startswith("/result/inputRequests/a") for v in violations)
    task = _ok(
        {"task": {"taskId": "t", "status": "working", "createdAt": "x", "lastUpdatedAt": "x"}}
    )
    assert validate(task, "2025-11-25", "server", request_method="tools/call") == [
        Violation("/result/task", 'missing required member "ttl"')
    ]


def test_2026_client_sends_no_responses() -> None:
    (violation,) = validate(_ok({"resultType": "complete"}), "2026-07-28", "client")
    assert "never sends JSON-RPC responses" in violation.reason
    assert validate(_ok({"resultType": "complete"}), "2026-07-28", "server") == []


def test_batches() -> None:
    (violation,) = validate([_req("ping")], "2025-06-18", "client")
    assert violation.pointer == ""
    assert "batch" in violation.reason
    assert "2025-03-26" in violation.reason
    batch = [_req("ping"), _req("tools/call", {"name": 1})]
    assert validate(batch, "2025-03-26", "client") == [
        Violation("/1/params/name", "must be a string, not an integer (1)")
    ]


def test_envelope_faults_are_readable() -> None:
    assert validate({"jsonrpc": "2.0", "id": 1}, "2025-06-18", "client")[0].reason.startswith(
        "not a JSON-RPC message"
    )
    assert validate(_req("ping", id_=None), "2024-11-05", "client") == [
        Violation("/id", "must be a string or an integer, not null")
    ]
    assert validate("ping", "2024-11-05", "client") == [  # type: ignore[arg-type]
        Violation("", 'a JSON-RPC message must be an object, not a string ("ping")')
    ]


def test_unknown_revision_and_definition() -> None:
    with pytest.raises(ValueError, match=r"known revisions: 2024-11-05, .*2026-07-28"):
        validate(_req("ping"), "2025-01-01", "client")
    with pytest.raises(ValueError, match="known revisions"):
        definition_names("draft")
    with pytest.raises(ValueError, match="did you mean CallToolResult"):
        validate_definition({}, "2025-06-18", "CallToolResults")
    with pytest.raises(ValueError, match="direction"):
        validate(_req("ping"), "2025-06-18", "both")  # type: ignore[arg-type]


def test_definitions_and_documents() -> None:
    names = definition_names("2026-07-28")
    assert names == sorted(names)
    assert {"DiscoverRequest", "InputRequiredResult", "SubscriptionsListenRequest"} <= set(names)
    assert not {"InitializeRequest", "PingRequest", "SetLevelRequest"} & set(names)
    assert "ElicitRequest" not in definition_names("2025-03-26")
    document = schema_document("2025-06-18")
    document["$defs"].clear()
    assert schema_document("2025-06-18")["$defs"]  # a copy each time
    assert validate_definition({"type": "text"}, "2024-11-05", "TextContent") == [
        Violation("", 'missing required member "text"')
    ]


# --- mcp_messages ---------------------------------------------------------------------------------


def _has_null_or_fraction(value: Any) -> bool:
    if value is None or (isinstance(value, float) and not value.is_integer()):
        return True
    if isinstance(value, dict):
        return any(_has_null_or_fraction(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null_or_fraction(v) for v in value)
    return False


@pytest.mark.parametrize("direction", ["client", "server"])
@pytest.mark.parametrize("revision", REVISIONS)
@given(data=st.data())
def test_mcp_messages_are_valid_everywhere(
    revision: str, direction: Direction, data: st.DataObject
) -> None:
    message = data.draw(mcp_messages(revision, direction))
    note(message)
    if "id" in message or "error" not in message:
        # The codec takes it as one JSON-RPC message. (From 2025-11-25 an error response may
        # omit the id, which the JSON-RPC 2.0 codec still requires: it wants null there.)
        classify(message)
    assert validate(message, revision, direction) == []
    if revision in ("2024-11-05", "2025-03-26") or not _has_null_or_fraction(message):
        # Elsewhere nulls and fractions may hit the two documented official narrowings.
        assert official_verdict(message, revision, direction) == []


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(), inner, max_size=2),
    max_leaves=4,
)


@pytest.mark.parametrize("revision", REVISIONS)
@given(data=st.data())
def test_a_message_known_valid_says_nothing_of_one_with_another_id(
    revision: str, data: st.DataObject
) -> None:
    """Messages found valid are remembered, their ids written by JSON type: another id of
    the same type is as valid, and any other id is judged as if nothing were remembered
    (5.0, "5" and true are not 5)."""
    direction: Direction = data.draw(st.sampled_from(["client", "server"]))
    message = data.draw(mcp_messages(revision, direction))
    assume("id" in message)
    note(message)
    other = {**message, "id": data.draw(_JSON_VALUES)}
    note(f"the same with the id {other['id']!r}")
    _KNOWN_VALID.clear()
    afresh = validate(other, revision, direction)
    _KNOWN_VALID.clear()
    assert validate(message, revision, direction) == []
    assert _KNOWN_VALID  # remembered
    assert validate(other, revision, direction) == afresh
    if type(other["id"]) in (int, str):
        assert afresh == []


def test_a_message_known_valid_says_nothing_of_one_with_another_member() -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}
    assert validate(call, "2025-06-18", "client") == []
    wrong = {**call, "id": 2, "params": {"name": 5}}
    assert [v.pointer for v in validate(wrong, "2025-06-18", "client")] == ["/params/name"]


def test_mcp_messages_method_filter() -> None:
    @given(mcp_messages("2026-07-28", "client", method="tools/call"))
    def check(message: dict[str, Any]) -> None:
        assert message["method"] == "tools/call"
        assert "io.modelcontextprotocol/protocolVersion" in message["params"]["_meta"]

    check()
    with pytest.raises(ValueError, match="not a client request or notification"):
        mcp_messages("2026-07-28", "client", method="initialize")
