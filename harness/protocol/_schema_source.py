"""Builds the project's own JSON Schemas of MCP messages, one document per revision.

The documents are written from the specification's text (the TypeScript schema and the
prose of each revision), not copied from the official `schema.json` files: those are test
data that `tests/protocol/test_schemas.py` cross-checks ours against. Shared building blocks take
the revision and add what that revision added, so a field that appeared in 2025-06-18 is
written once, with its "since", instead of five times.

Every document is JSON Schema draft 2020-12 with its definitions under `$defs`: the
dialect the specification adopts itself from 2025-11-25 on (for its schema and for tool
schemas), so one validator class and one layout serve all five revisions. Formats are
annotations only, as they are in the official schemas.

Run `python -m harness.protocol._schema_source --write` to regenerate `harness/protocol/schemas/` and
`--check` to verify that the committed files are up to date (exit status 1 if not).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from harness.protocol._revisions import REVISIONS, Revision, check_revision

__all__ = ["DIALECT", "SCHEMA_DIR", "build", "document_id", "file_name", "main", "render"]

Schema = dict[str, Any]

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_DIR: Final = Path(__file__).resolve().with_name("schemas")

R0, R1, R2, R3, R4 = REVISIONS  # 2024-11-05 … 2026-07-28, for readable "since" tests


def document_id(revision: str) -> str:
    # A URN: the documents are resolved from the package, never fetched.
    return f"urn:mcp-testbench:schema:mcp-{revision}"


def file_name(revision: str) -> str:
    return f"mcp-{revision}.schema.json"


# --- small constructors -------------------------------------------------------------


def ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def string(**keywords: Any) -> Schema:
    return {"type": "string", **keywords}


def const(value: str) -> Schema:
    return {"type": "string", "const": value}


def enum(*values: str) -> Schema:
    return {"type": "string", "enum": list(values)}


def array(items: Schema, **keywords: Any) -> Schema:
    return {"type": "array", "items": items, **keywords}


def mapping(values: Schema | None = None) -> Schema:
    """An object with any member names whose values all match `values` (any, if None)."""
    return (
        {"type": "object"} if values is None else {"type": "object", "additionalProperties": values}
    )


def obj(properties: Mapping[str, Any] | None = None, required: Iterable[str] = ()) -> Schema:
    """An open object: the spec lets senders add members that it does not define."""
    out: Schema = {"type": "object"}
    if properties:
        out["properties"] = dict(properties)  # a member schema of `false` forbids the member
    names = sorted(required)
    if names:
        out["required"] = names
    return out


def any_of(*names: str) -> Schema:
    return {"anyOf": [ref(name) for name in names]}


BOOLEAN: Final[Schema] = {"type": "boolean"}
INTEGER: Final[Schema] = {"type": "integer"}
NUMBER: Final[Schema] = {"type": "number"}
URI: Final[Schema] = string(format="uri")
BYTES: Final[Schema] = string(format="byte")  # base64
ANY: Final[Schema] = {}


class _Document:
    """The definitions of one revision, plus the method table that the API reads."""

    def __init__(self, revision: Revision) -> None:
        self.revision = revision
        self.defs: dict[str, Schema] = {}
        # direction -> kind ("requests"/"notifications") -> method -> entry
        self.methods: dict[str, dict[str, dict[str, Any]]] = {
            "client": {"requests": {}, "notifications": {}},
            "server": {"requests": {}, "notifications": {}},
        }
        self.errors: dict[str, str] = {}

    def since(self, revision: str) -> bool:
        return REVISIONS.index(self.revision) >= REVISIONS.index(check_revision(revision))

    def until(self, revision: str) -> bool:
        """True up to and including `revision`."""
        return REVISIONS.index(self.revision) <= REVISIONS.index(check_revision(revision))

    @property
    def stateless(self) -> bool:
        return self.since(R4)

    def add(self, name: str, schema: Schema) -> None:
        if name in self.defs:
            raise ValueError(f"{name} defined twice for {self.revision}")
        self.defs[name] = schema

    def props(
        self, base: dict[str, Schema], *added: tuple[str, dict[str, Schema]]
    ) -> dict[str, Schema]:
        """`base` plus each (since, members) group whose revision has been reached."""
        out = dict(base)
        for revision, members in added:
            if self.since(revision):
                out.update(members)
        return out

    # --- message shapes ---

    def request_params(self, members: dict[str, Schema], required: Iterable[str] = ()) -> Schema:
        """Params of a client or server request: `_meta` is the request meta object."""
        needed = set(required)
        if self.stateless:
            needed.add("_meta")  # 2026-07-28: every request carries its own _meta
        return obj({"_meta": ref("RequestMetaObject"), **members}, needed)

    def notification_params(
        self, members: dict[str, Schema], required: Iterable[str] = ()
    ) -> Schema:
        meta = "NotificationMetaObject" if self.stateless else "MetaObject"
        return obj({"_meta": ref(meta), **members}, required)

    def result(self, members: dict[str, Schema], required: Iterable[str] = ()) -> Schema:
        needed = set(required)
        meta = "MetaObject"
        if self.stateless:
            needed.add("resultType")  # 2026-07-28: every result says what it is
            meta = "ResultMetaObject"
            members = {"resultType": ref("ResultType"), **members}
        return obj({"_meta": ref(meta), **members}, needed)

    def cacheable(self, members: dict[str, Schema], required: Iterable[str] = ()) -> Schema:
        """2026-07-28 list/read/discover results carry a time to live and a cache scope."""
        if not self.stateless:
            return self.result(members, required)
        extra = {
            "ttlMs": {"type": "integer", "minimum": 0},
            "cacheScope": enum("public", "private"),
        }
        return self.result({**members, **extra}, {*required, "ttlMs", "cacheScope"})

    def request(
        self,
        name: str,
        method: str,
        params: Schema,
        *,
        params_required: bool = True,
        senders: Sequence[str] = ("client",),
        result: str = "EmptyResult",
        **flags: bool,
    ) -> None:
        """A JSON-RPC request sent by `senders`, answered by the definition `result`."""
        required = ["jsonrpc", "id", "method"]
        if params_required or self.stateless:
            required.append("params")
        self.add(
            name,
            obj(
                {
                    "jsonrpc": ref("JSONRPCVersion"),
                    "id": ref("RequestId"),
                    "method": const(method),
                    "params": params,
                },
                required,
            ),
        )
        for sender in senders:
            entry: dict[str, Any] = {"request": name, "result": result}
            entry.update({flag: True for flag, on in sorted(flags.items()) if on})
            self.methods[sender]["requests"][method] = entry

    def notification(
        self,
        name: str,
        method: str,
        params: Schema,
        *,
        params_required: bool = True,
        senders: Sequence[str] = ("client",),
    ) -> None:
        required = ["jsonrpc", "method"] + (["params"] if params_required else [])
        self.add(
            name,
            obj(
                {"jsonrpc": ref("JSONRPCVersion"), "method": const(method), "params": params},
                required,
            ),
        )
        for sender in senders:
            self.methods[sender]["notifications"][method] = name

    def input_request(
        self, name: str, method: str, params: Schema, *, params_required: bool = True
    ) -> None:
        """2026-07-28: what the server asks for inside an InputRequiredResult (not a message)."""
        self.add(
            name,
            obj(
                {"method": const(method), "params": params},
                ["method"] + (["params"] if params_required else []),
            ),
        )


# --- the building blocks, each adding its revision deltas ---------------------------------


def _base(d: _Document) -> None:
    d.add("JSONRPCVersion", const("2.0"))
    # "Requests MUST include a string or integer ID"; "the ID MUST NOT be null".
    d.add("RequestId", {"type": ["string", "integer"]})
    d.add("ProgressToken", {"type": ["string", "integer"]})
    d.add("Cursor", string())
    d.add("Role", enum("user", "assistant"))
    d.add(
        "LoggingLevel",
        enum("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
    )
    d.add("MetaObject", mapping())
    request_meta = {"progressToken": ref("ProgressToken")}
    if d.stateless:
        d.add("JSONObject", mapping())  # any JSON value is allowed inside
        request_meta.update(
            {
                "io.modelcontextprotocol/protocolVersion": string(),
                "io.modelcontextprotocol/clientInfo": ref("Implementation"),
                "io.modelcontextprotocol/clientCapabilities": ref("ClientCapabilities"),
                "io.modelcontextprotocol/logLevel": ref("LoggingLevel"),
            }
        )
        d.add(
            "RequestMetaObject",
            obj(
                request_meta,
                [
                    "io.modelcontextprotocol/protocolVersion",
                    "io.modelcontextprotocol/clientCapabilities",
                ],
            ),
        )
        d.add(
            "NotificationMetaObject",
            obj({"io.modelcontextprotocol/subscriptionId": ref("RequestId")}),
        )
        d.add(
            "ResultMetaObject", obj({"io.modelcontextprotocol/serverInfo": ref("Implementation")})
        )
        # "complete", "input_required", or a value an extension adds: a string.
        d.add("ResultType", string())
    else:
        d.add("RequestMetaObject", obj(request_meta))
    d.add("RequestParams", d.request_params({}))
    d.add("NotificationParams", d.notification_params({}))
    d.add("PaginatedRequestParams", d.request_params({"cursor": ref("Cursor")}))
    d.add("Result", d.result({}))
    d.add("EmptyResult", ref("Result"))
    d.add("PaginatedResult", d.result({"nextCursor": ref("Cursor")}))
    if d.stateless:
        d.add("CacheableResult", d.cacheable({}))


def _jsonrpc(d: _Document) -> None:
    # JSON-RPC 2.0: a request has no result/error, a notification has no id ("Notifications
    # MUST NOT include an ID"), a response has result or error and never both. The official
    # schemas leave these members open; ours say it with `false` member schemas.
    common = {"jsonrpc": ref("JSONRPCVersion")}
    # Up to 2025-06-18 the envelope itself describes `_meta` in params; later revisions
    # leave that to each message's params.
    request_params = obj({"_meta": ref("RequestMetaObject")}) if d.until(R2) else mapping()
    notification_params = obj({"_meta": ref("MetaObject")}) if d.until(R2) else mapping()
    d.add(
        "JSONRPCRequest",
        obj(
            {
                **common,
                "id": ref("RequestId"),
                "method": string(),
                "params": request_params,
                "result": False,
                "error": False,
            },
            ["jsonrpc", "id", "method"],
        ),
    )
    d.add(
        "JSONRPCNotification",
        obj(
            {
                **common,
                "method": string(),
                "params": notification_params,
                "id": False,
                "result": False,
                "error": False,
            },
            ["jsonrpc", "method"],
        ),
    )
    d.add("Error", obj({"code": INTEGER, "message": string(), "data": ANY}, ["code", "message"]))
    result_name = "JSONRPCResultResponse" if d.since(R3) else "JSONRPCResponse"
    error_name = "JSONRPCErrorResponse" if d.since(R3) else "JSONRPCError"
    d.add(
        result_name,
        obj(
            {
                **common,
                "id": ref("RequestId"),
                "result": ref("Result"),
                "method": False,
                "error": False,
            },
            ["jsonrpc", "id", "result"],
        ),
    )
    # From 2025-11-25 the id of an error response may be absent: "except in error cases
    # where the ID could not be read due a malformed request".
    error_required = ["jsonrpc", "error"] + ([] if d.since(R3) else ["id"])
    d.add(
        error_name,
        obj(
            {
                **common,
                "id": ref("RequestId"),
                "error": ref("Error"),
                "method": False,
                "result": False,
            },
            error_required,
        ),
    )
    if d.since(R3):
        d.add("JSONRPCResponse", any_of(result_name, error_name))
    message = [ref("JSONRPCRequest"), ref("JSONRPCNotification"), ref(result_name), ref(error_name)]
    if d.revision == R1:
        # Only 2025-03-26 admits batches; JSON-RPC 2.0 makes an empty array invalid.
        d.add(
            "JSONRPCBatchRequest",
            array({"anyOf": [ref("JSONRPCRequest"), ref("JSONRPCNotification")]}, minItems=1),
        )
        d.add(
            "JSONRPCBatchResponse",
            array({"anyOf": [ref(result_name), ref(error_name)]}, minItems=1),
        )
        message += [ref("JSONRPCBatchRequest"), ref("JSONRPCBatchResponse")]
    d.add("JSONRPCMessage", {"anyOf": message})
    if d.stateless:
        for name, code in [
            ("ParseError", -32700),
            ("InvalidRequestError", -32600),
            ("MethodNotFoundError", -32601),
            ("InvalidParamsError", -32602),
            ("InternalError", -32603),
        ]:
            d.add(
                name,
                obj(
                    {"code": {"type": "integer", "const": code}, "message": string(), "data": ANY},
                    ["code", "message"],
                ),
            )
        _error_response(d, "HeaderMismatchError", -32020, None)
        _error_response(
            d,
            "MissingRequiredClientCapabilityError",
            -32021,
            obj({"requiredCapabilities": ref("ClientCapabilities")}, ["requiredCapabilities"]),
        )
        _error_response(
            d,
            "UnsupportedProtocolVersionError",
            -32022,
            obj({"supported": array(string()), "requested": string()}, ["supported", "requested"]),
        )


def _error_response(d: _Document, name: str, code: int, data: Schema | None) -> None:
    """An error response whose code the spec gives a meaning (and, maybe, a `data` shape)."""
    error_props: dict[str, Schema] = {
        "code": {"type": "integer", "const": code},
        "message": string(),
        "data": ANY,
    }
    error_required = ["code", "message"]
    if data is not None:
        error_props["data"] = data
        error_required.append("data")
    envelope = "JSONRPCErrorResponse" if d.since(R3) else "JSONRPCError"
    d.add(
        name,
        {"allOf": [ref(envelope)], **obj({"error": obj(error_props, error_required)}, ["error"])},
    )
    d.errors[str(code)] = name


def _metadata(d: _Document) -> None:
    if d.since(R3):
        d.add(
            "Icon",
            obj(
                {
                    "src": URI,
                    "mimeType": string(),
                    "sizes": array(string()),
                    "theme": enum("light", "dark"),
                },
                ["src"],
            ),
        )
    if d.since(R2):
        d.add("BaseMetadata", obj({"name": string(), "title": string()}, ["name"]))
    d.add(
        "Implementation",
        obj(
            d.props(
                {"name": string(), "version": string()},
                (R2, {"title": string()}),
                (R3, {"description": string(), "icons": array(ref("Icon")), "websiteUrl": URI}),
            ),
            ["name", "version"],
        ),
    )
    d.add(
        "Annotations",
        obj(
            d.props(
                {
                    "audience": array(ref("Role")),
                    "priority": {"type": "number", "minimum": 0, "maximum": 1},
                },
                (R2, {"lastModified": string()}),
            )
        ),
    )


def _meta_member(d: _Document, since: str = R2) -> dict[str, Schema]:
    """The `_meta` member that most data types gained in 2025-06-18."""
    return {"_meta": ref("MetaObject")} if d.since(since) else {}


def _content(d: _Document) -> None:
    meta = _meta_member(d)
    annotated = {"annotations": ref("Annotations"), **meta}
    d.add(
        "TextContent", obj({"type": const("text"), "text": string(), **annotated}, ["type", "text"])
    )
    for kind, name, since in [("image", "ImageContent", R0), ("audio", "AudioContent", R1)]:
        if d.since(since):
            d.add(
                name,
                obj(
                    {"type": const(kind), "data": BYTES, "mimeType": string(), **annotated},
                    ["type", "data", "mimeType"],
                ),
            )
    contents = {"uri": URI, "mimeType": string(), **meta}
    d.add("ResourceContents", obj(contents, ["uri"]))
    d.add("TextResourceContents", obj({**contents, "text": string()}, ["uri", "text"]))
    d.add("BlobResourceContents", obj({**contents, "blob": BYTES}, ["uri", "blob"]))
    d.add(
        "EmbeddedResource",
        obj(
            {
                "type": const("resource"),
                "resource": any_of("TextResourceContents", "BlobResourceContents"),
                **annotated,
            },
            ["type", "resource"],
        ),
    )
    resource = d.props(
        {
            "uri": URI,
            "name": string(),
            "description": string(),
            "mimeType": string(),
            "annotations": ref("Annotations"),
            "size": INTEGER,  # bytes
        },
        (R2, {"title": string(), **meta}),
        (R3, {"icons": array(ref("Icon"))}),
    )
    d.add("Resource", obj(resource, ["uri", "name"]))
    if d.since(R2):
        d.add(
            "ResourceLink",
            obj({**resource, "type": const("resource_link")}, ["uri", "name", "type"]),
        )
    blocks = ["TextContent", "ImageContent"]
    blocks += ["AudioContent"] if d.since(R1) else []
    blocks += ["ResourceLink"] if d.since(R2) else []
    d.add("ContentBlock", any_of(*blocks, "EmbeddedResource"))


def _capabilities(d: _Document) -> None:
    flag_object = obj  # capability sub-objects are open
    json_object = ref("JSONObject") if d.stateless else mapping()
    client: dict[str, Schema] = {
        "experimental": mapping(json_object),
        "roots": flag_object({"listChanged": BOOLEAN}) if not d.stateless else flag_object(),
    }
    if d.since(R3):
        client["sampling"] = flag_object({"context": json_object, "tools": json_object})
    else:
        client["sampling"] = mapping()
    if d.since(R3):
        client["elicitation"] = flag_object({"form": json_object, "url": json_object})
    elif d.since(R2):
        client["elicitation"] = mapping()
    if d.revision == R3:
        client["tasks"] = _task_capability(
            {
                "sampling": obj({"createMessage": mapping()}),
                "elicitation": obj({"create": mapping()}),
            }
        )
    if d.stateless:
        client["extensions"] = mapping(json_object)
    d.add("ClientCapabilities", obj(client))

    server: dict[str, Schema] = {
        "experimental": mapping(json_object),
        "logging": json_object,
        "prompts": flag_object({"listChanged": BOOLEAN}),
        "resources": flag_object({"subscribe": BOOLEAN, "listChanged": BOOLEAN}),
        "tools": flag_object({"listChanged": BOOLEAN}),
    }
    if d.since(R1):
        server["completions"] = json_object
    if d.revision == R3:
        server["tasks"] = _task_capability({"tools": obj({"call": mapping()})})
    if d.stateless:
        server["extensions"] = mapping(json_object)
    d.add("ServerCapabilities", obj(server))


def _task_capability(requests: dict[str, Schema]) -> Schema:
    return obj({"list": mapping(), "cancel": mapping(), "requests": obj(requests)})


def _lifecycle(d: _Document) -> None:
    if d.stateless:
        # 2026-07-28: no handshake; server/discover is the optional probe.
        d.request(
            "DiscoverRequest", "server/discover", ref("RequestParams"), result="DiscoverResult"
        )
        d.add(
            "DiscoverResult",
            d.cacheable(
                {
                    "supportedVersions": array(string()),
                    "capabilities": ref("ServerCapabilities"),
                    "instructions": string(),
                },
                ["supportedVersions", "capabilities"],
            ),
        )
        return
    d.add(
        "InitializeRequestParams",
        d.request_params(
            {
                "protocolVersion": string(),
                "capabilities": ref("ClientCapabilities"),
                "clientInfo": ref("Implementation"),
            },
            ["protocolVersion", "capabilities", "clientInfo"],
        ),
    )
    d.request(
        "InitializeRequest", "initialize", ref("InitializeRequestParams"), result="InitializeResult"
    )
    d.add(
        "InitializeResult",
        d.result(
            {
                "protocolVersion": string(),
                "capabilities": ref("ServerCapabilities"),
                "serverInfo": ref("Implementation"),
                "instructions": string(),
            },
            ["protocolVersion", "capabilities", "serverInfo"],
        ),
    )
    d.notification(
        "InitializedNotification",
        "notifications/initialized",
        ref("NotificationParams"),
        params_required=False,
    )
    d.request(
        "PingRequest",
        "ping",
        ref("RequestParams"),
        params_required=False,
        senders=("client", "server"),
    )


def _utilities(d: _Document) -> None:
    # 2025-11-25 makes requestId optional (tasks are cancelled with tasks/cancel instead).
    cancelled_required = [] if d.revision == R3 else ["requestId"]
    d.add(
        "CancelledNotificationParams",
        d.notification_params(
            {"requestId": ref("RequestId"), "reason": string()}, cancelled_required
        ),
    )
    # 2026-07-28: cancellation is client-to-server, except that a server ends a
    # subscriptions/listen stream with it.
    d.notification(
        "CancelledNotification",
        "notifications/cancelled",
        ref("CancelledNotificationParams"),
        senders=("client", "server"),
    )
    progress = d.props(
        {"progressToken": ref("ProgressToken"), "progress": NUMBER, "total": NUMBER},
        (R1, {"message": string()}),
    )
    d.add(
        "ProgressNotificationParams", d.notification_params(progress, ["progressToken", "progress"])
    )
    # 2026-07-28: progress only flows from server to client.
    d.notification(
        "ProgressNotification",
        "notifications/progress",
        ref("ProgressNotificationParams"),
        senders=("server",) if d.stateless else ("client", "server"),
    )
    d.add(
        "LoggingMessageNotificationParams",
        d.notification_params(
            {"level": ref("LoggingLevel"), "logger": string(), "data": ANY}, ["level", "data"]
        ),
    )
    d.notification(
        "LoggingMessageNotification",
        "notifications/message",
        ref("LoggingMessageNotificationParams"),
        senders=("server",),
    )
    if not d.stateless:  # 2026-07-28 sets the level per request (_meta logLevel)
        d.add("SetLevelRequestParams", d.request_params({"level": ref("LoggingLevel")}, ["level"]))
        d.request("SetLevelRequest", "logging/setLevel", ref("SetLevelRequestParams"))
    reference = "ResourceTemplateReference" if d.since(R2) else "ResourceReference"
    d.add(
        reference,
        obj({"type": const("ref/resource"), "uri": string(format="uri-template")}, ["type", "uri"]),
    )
    prompt_ref = d.props({"type": const("ref/prompt"), "name": string()}, (R2, {"title": string()}))
    d.add("PromptReference", obj(prompt_ref, ["type", "name"]))
    complete = d.props(
        {
            "ref": any_of("PromptReference", reference),
            "argument": obj({"name": string(), "value": string()}, ["name", "value"]),
        },
        (R2, {"context": obj({"arguments": mapping(string())})}),
    )
    d.add("CompleteRequestParams", d.request_params(complete, ["ref", "argument"]))
    d.request(
        "CompleteRequest",
        "completion/complete",
        ref("CompleteRequestParams"),
        result="CompleteResult",
    )
    # "An array of completion values. Must not exceed 100 items." (every revision)
    completion = obj(
        {"values": array(string(), maxItems=100), "total": INTEGER, "hasMore": BOOLEAN}, ["values"]
    )
    d.add("CompleteResult", d.result({"completion": completion}, ["completion"]))


def _list(
    d: _Document,
    noun: str,
    method: str,
    item: str,
    member: str,
    senders: Sequence[str] = ("client",),
) -> None:
    d.request(
        f"List{noun}Request",
        method,
        ref("PaginatedRequestParams"),
        params_required=False,
        senders=senders,
        result=f"List{noun}Result",
    )
    d.add(
        f"List{noun}Result",
        d.cacheable({"nextCursor": ref("Cursor"), member: array(ref(item))}, [member]),
    )


def _input_responses(d: _Document) -> dict[str, Schema]:
    """2026-07-28 MRTR: a retried request carries the answers and the opaque state."""
    if not d.stateless:
        return {}
    return {"inputResponses": ref("InputResponses"), "requestState": string()}


def _resources(d: _Document) -> None:
    template = d.props(
        {
            "uriTemplate": string(format="uri-template"),
            "name": string(),
            "description": string(),
            "mimeType": string(),
            "annotations": ref("Annotations"),
        },
        (R2, {"title": string(), **_meta_member(d)}),
        (R3, {"icons": array(ref("Icon"))}),
    )
    d.add("ResourceTemplate", obj(template, ["uriTemplate", "name"]))
    _list(d, "Resources", "resources/list", "Resource", "resources")
    _list(
        d, "ResourceTemplates", "resources/templates/list", "ResourceTemplate", "resourceTemplates"
    )
    d.add(
        "ReadResourceRequestParams", d.request_params({"uri": URI, **_input_responses(d)}, ["uri"])
    )
    d.request(
        "ReadResourceRequest",
        "resources/read",
        ref("ReadResourceRequestParams"),
        result="ReadResourceResult",
        inputRequired=d.stateless,
    )
    d.add(
        "ReadResourceResult",
        d.cacheable(
            {"contents": array(any_of("TextResourceContents", "BlobResourceContents"))},
            ["contents"],
        ),
    )
    d.add("ResourceUpdatedNotificationParams", d.notification_params({"uri": URI}, ["uri"]))
    d.notification(
        "ResourceUpdatedNotification",
        "notifications/resources/updated",
        ref("ResourceUpdatedNotificationParams"),
        senders=("server",),
    )
    d.notification(
        "ResourceListChangedNotification",
        "notifications/resources/list_changed",
        ref("NotificationParams"),
        params_required=False,
        senders=("server",),
    )
    if not d.stateless:
        for name, method in [
            ("Subscribe", "resources/subscribe"),
            ("Unsubscribe", "resources/unsubscribe"),
        ]:
            d.add(f"{name}RequestParams", d.request_params({"uri": URI}, ["uri"]))
            d.request(f"{name}Request", method, ref(f"{name}RequestParams"))
        return
    # 2026-07-28: one listen stream replaces resources/subscribe and the GET stream.
    d.add(
        "SubscriptionFilter",
        obj(
            {
                "toolsListChanged": BOOLEAN,
                "promptsListChanged": BOOLEAN,
                "resourcesListChanged": BOOLEAN,
                "resourceSubscriptions": array(string()),
            }
        ),
    )
    d.add(
        "SubscriptionsListenRequestParams",
        d.request_params({"notifications": ref("SubscriptionFilter")}, ["notifications"]),
    )
    d.request(
        "SubscriptionsListenRequest",
        "subscriptions/listen",
        ref("SubscriptionsListenRequestParams"),
        result="SubscriptionsListenResult",
    )
    d.add(
        "SubscriptionsListenResultMetaObject",
        obj(
            {
                "io.modelcontextprotocol/serverInfo": ref("Implementation"),
                "io.modelcontextprotocol/subscriptionId": ref("RequestId"),
            },
            ["io.modelcontextprotocol/subscriptionId"],
        ),
    )
    listen_result = d.result({})
    listen_result["properties"]["_meta"] = ref("SubscriptionsListenResultMetaObject")
    listen_result["required"] = sorted({*listen_result["required"], "_meta"})
    d.add("SubscriptionsListenResult", listen_result)
    d.add(
        "SubscriptionsAcknowledgedNotificationParams",
        d.notification_params({"notifications": ref("SubscriptionFilter")}, ["notifications"]),
    )
    d.notification(
        "SubscriptionsAcknowledgedNotification",
        "notifications/subscriptions/acknowledged",
        ref("SubscriptionsAcknowledgedNotificationParams"),
        senders=("server",),
    )


def _prompts(d: _Document) -> None:
    argument = d.props(
        {"name": string(), "description": string(), "required": BOOLEAN}, (R2, {"title": string()})
    )
    d.add("PromptArgument", obj(argument, ["name"]))
    prompt = d.props(
        {"name": string(), "description": string(), "arguments": array(ref("PromptArgument"))},
        (R2, {"title": string(), **_meta_member(d)}),
        (R3, {"icons": array(ref("Icon"))}),
    )
    d.add("Prompt", obj(prompt, ["name"]))
    d.add(
        "PromptMessage",
        obj({"role": ref("Role"), "content": ref("ContentBlock")}, ["role", "content"]),
    )
    _list(d, "Prompts", "prompts/list", "Prompt", "prompts")
    d.add(
        "GetPromptRequestParams",
        d.request_params(
            {"name": string(), "arguments": mapping(string()), **_input_responses(d)}, ["name"]
        ),
    )
    d.request(
        "GetPromptRequest",
        "prompts/get",
        ref("GetPromptRequestParams"),
        result="GetPromptResult",
        inputRequired=d.stateless,
    )
    d.add(
        "GetPromptResult",
        d.result({"description": string(), "messages": array(ref("PromptMessage"))}, ["messages"]),
    )
    d.notification(
        "PromptListChangedNotification",
        "notifications/prompts/list_changed",
        ref("NotificationParams"),
        params_required=False,
        senders=("server",),
    )


def _tool_schema(d: _Document, *, input_schema: bool) -> Schema:
    if d.stateless:
        # 2026-07-28: any JSON Schema 2020-12 object; an input schema must describe objects.
        if input_schema:
            return obj({"$schema": string(), "type": const("object")}, ["type"])
        return obj({"$schema": string()})
    members: dict[str, Schema] = {
        "type": const("object"),
        "properties": mapping(mapping()),
        "required": array(string()),
    }
    if d.since(R3):
        members["$schema"] = string()
    return obj(members, ["type"])


def _tools(d: _Document) -> None:
    if d.since(R1):
        d.add(
            "ToolAnnotations",
            obj(
                {
                    "title": string(),
                    "readOnlyHint": BOOLEAN,
                    "destructiveHint": BOOLEAN,
                    "idempotentHint": BOOLEAN,
                    "openWorldHint": BOOLEAN,
                }
            ),
        )
    if d.revision == R3:
        d.add("ToolExecution", obj({"taskSupport": enum("forbidden", "optional", "required")}))
    tool = d.props(
        {
            "name": string(),
            "description": string(),
            "inputSchema": _tool_schema(d, input_schema=True),
        },
        (R1, {"annotations": ref("ToolAnnotations")}),
        (
            R2,
            {
                "title": string(),
                "outputSchema": _tool_schema(d, input_schema=False),
                **_meta_member(d),
            },
        ),
        (R3, {"icons": array(ref("Icon"))}),
    )
    if d.revision == R3:
        tool["execution"] = ref("ToolExecution")
    d.add("Tool", obj(tool, ["name", "inputSchema"]))
    _list(d, "Tools", "tools/list", "Tool", "tools")
    call = {"name": string(), "arguments": mapping(), **_input_responses(d)}
    if d.revision == R3:
        call["task"] = ref("TaskMetadata")
    d.add("CallToolRequestParams", d.request_params(call, ["name"]))
    d.request(
        "CallToolRequest",
        "tools/call",
        ref("CallToolRequestParams"),
        result="CallToolResult",
        inputRequired=d.stateless,
        taskAugmentable=d.revision == R3,
    )
    result: dict[str, Schema] = {"content": array(ref("ContentBlock")), "isError": BOOLEAN}
    if d.since(R2):
        # 2026-07-28: structured content may be any JSON value, not only an object.
        result["structuredContent"] = ANY if d.stateless else mapping()
    d.add("CallToolResult", d.result(result, ["content"]))
    d.notification(
        "ToolListChangedNotification",
        "notifications/tools/list_changed",
        ref("NotificationParams"),
        params_required=False,
        senders=("server",),
    )


def _sampling(d: _Document) -> None:
    d.add("ModelHint", obj({"name": string()}))
    priority = {"type": "number", "minimum": 0, "maximum": 1}
    d.add(
        "ModelPreferences",
        obj(
            {
                "hints": array(ref("ModelHint")),
                "costPriority": priority,
                "speedPriority": priority,
                "intelligencePriority": priority,
            }
        ),
    )
    if d.since(R3):
        d.add("ToolChoice", obj({"mode": enum("auto", "required", "none")}))
        d.add(
            "ToolUseContent",
            obj(
                {
                    "type": const("tool_use"),
                    "id": string(),
                    "name": string(),
                    "input": mapping(),
                    "_meta": ref("MetaObject"),
                },
                ["type", "id", "name", "input"],
            ),
        )
        d.add(
            "ToolResultContent",
            obj(
                {
                    "type": const("tool_result"),
                    "toolUseId": string(),
                    "content": array(ref("ContentBlock")),
                    "structuredContent": ANY if d.stateless else mapping(),
                    "isError": BOOLEAN,
                    "_meta": ref("MetaObject"),
                },
                ["type", "toolUseId", "content"],
            ),
        )
        d.add(
            "SamplingMessageContentBlock",
            any_of(
                "TextContent", "ImageContent", "AudioContent", "ToolUseContent", "ToolResultContent"
            ),
        )
        # From 2025-11-25 a sampling message holds one block or a list of them.
        content: Schema = {
            "anyOf": [ref("SamplingMessageContentBlock"), array(ref("SamplingMessageContentBlock"))]
        }
    else:
        content = any_of("TextContent", "ImageContent", *(["AudioContent"] if d.since(R1) else []))
    d.add(
        "SamplingMessage",
        obj(
            {"role": ref("Role"), "content": content, **_meta_member(d, since=R3)},
            ["role", "content"],
        ),
    )
    params = d.props(
        {
            "messages": array(ref("SamplingMessage")),
            "modelPreferences": ref("ModelPreferences"),
            "systemPrompt": string(),
            "includeContext": enum("none", "thisServer", "allServers"),
            "temperature": NUMBER,
            "maxTokens": INTEGER,
            "stopSequences": array(string()),
            "metadata": ref("JSONObject") if d.stateless else mapping(),
        },
        (R3, {"tools": array(ref("Tool")), "toolChoice": ref("ToolChoice")}),
    )
    required = ["messages", "maxTokens"]
    message_result = {
        "role": ref("Role"),
        "content": content,
        "model": string(),
        "stopReason": string(),
    }
    if d.stateless:
        # 2026-07-28: an input request inside an InputRequiredResult, answered in the retry.
        d.add("CreateMessageRequestParams", obj(params, required))
        d.input_request(
            "CreateMessageRequest", "sampling/createMessage", ref("CreateMessageRequestParams")
        )
        d.add(
            "CreateMessageResult",
            obj({**message_result, "_meta": ref("MetaObject")}, ["role", "content", "model"]),
        )
        return
    if d.revision == R3:
        params["task"] = ref("TaskMetadata")
    d.add("CreateMessageRequestParams", d.request_params(params, required))
    d.request(
        "CreateMessageRequest",
        "sampling/createMessage",
        ref("CreateMessageRequestParams"),
        senders=("server",),
        result="CreateMessageResult",
        taskAugmentable=d.revision == R3,
    )
    d.add("CreateMessageResult", d.result(message_result, ["role", "content", "model"]))


def _roots(d: _Document) -> None:
    d.add("Root", obj({"uri": URI, "name": string(), **_meta_member(d)}, ["uri"]))
    roots = {"roots": array(ref("Root"))}
    if d.stateless:
        d.input_request(
            "ListRootsRequest",
            "roots/list",
            obj({"_meta": ref("MetaObject")}),
            params_required=False,
        )
        d.add("ListRootsResult", obj(roots, ["roots"]))
        return
    d.request(
        "ListRootsRequest",
        "roots/list",
        ref("RequestParams"),
        params_required=False,
        senders=("server",),
        result="ListRootsResult",
    )
    d.add("ListRootsResult", d.result(roots, ["roots"]))
    d.notification(
        "RootsListChangedNotification",
        "notifications/roots/list_changed",
        ref("NotificationParams"),
        params_required=False,
    )


def _elicitation_schemas(d: _Document) -> list[str]:
    """The primitive-schema definitions of form elicitation; returns the union's members."""
    described = {"title": string(), "description": string()}
    default = (R3, {"default": string()})
    d.add(
        "StringSchema",
        obj(
            d.props(
                {
                    "type": const("string"),
                    **described,
                    "minLength": INTEGER,
                    "maxLength": INTEGER,
                    "format": enum("email", "uri", "date", "date-time"),
                },
                default,
            ),
            ["type"],
        ),
    )
    d.add(
        "NumberSchema",
        obj(
            d.props(
                {
                    "type": enum("number", "integer"),
                    **described,
                    "minimum": NUMBER,
                    "maximum": NUMBER,
                },
                (R3, {"default": NUMBER}),
            ),
            ["type"],
        ),
    )
    d.add(
        "BooleanSchema", obj({"type": const("boolean"), **described, "default": BOOLEAN}, ["type"])
    )
    legacy = {
        "type": const("string"),
        **described,
        "enum": array(string()),
        "enumNames": array(string()),
    }
    if not d.since(R3):
        d.add("EnumSchema", obj(legacy, ["type", "enum"]))
        return ["StringSchema", "NumberSchema", "BooleanSchema", "EnumSchema"]
    titled_option = obj({"const": string(), "title": string()}, ["const", "title"])
    multi = {
        "type": const("array"),
        **described,
        "minItems": INTEGER,
        "maxItems": INTEGER,
        "default": array(string()),
    }
    d.add(
        "UntitledSingleSelectEnumSchema",
        obj(
            {"type": const("string"), **described, "enum": array(string()), "default": string()},
            ["type", "enum"],
        ),
    )
    d.add(
        "TitledSingleSelectEnumSchema",
        obj(
            {
                "type": const("string"),
                **described,
                "oneOf": array(titled_option),
                "default": string(),
            },
            ["type", "oneOf"],
        ),
    )
    d.add(
        "UntitledMultiSelectEnumSchema",
        obj(
            {
                **multi,
                "items": obj({"type": const("string"), "enum": array(string())}, ["type", "enum"]),
            },
            ["type", "items"],
        ),
    )
    d.add(
        "TitledMultiSelectEnumSchema",
        obj({**multi, "items": obj({"anyOf": array(titled_option)}, ["anyOf"])}, ["type", "items"]),
    )
    d.add("LegacyTitledEnumSchema", obj({**legacy, "default": string()}, ["type", "enum"]))
    d.add(
        "SingleSelectEnumSchema",
        any_of("UntitledSingleSelectEnumSchema", "TitledSingleSelectEnumSchema"),
    )
    d.add(
        "MultiSelectEnumSchema",
        any_of("UntitledMultiSelectEnumSchema", "TitledMultiSelectEnumSchema"),
    )
    members = [
        "UntitledSingleSelectEnumSchema",
        "TitledSingleSelectEnumSchema",
        "UntitledMultiSelectEnumSchema",
        "TitledMultiSelectEnumSchema",
        "LegacyTitledEnumSchema",
    ]
    d.add("EnumSchema", any_of(*members))
    return ["StringSchema", "NumberSchema", "BooleanSchema", *members]


def _elicitation(d: _Document) -> None:
    if not d.since(R2):
        return
    d.add("PrimitiveSchemaDefinition", any_of(*_elicitation_schemas(d)))
    requested = {
        "type": const("object"),
        "properties": mapping(ref("PrimitiveSchemaDefinition")),
        "required": array(string()),
    }
    if d.since(R3):
        requested["$schema"] = string()
    form = {"message": string(), "requestedSchema": obj(requested, ["type", "properties"])}
    # Elicitation answers: a string, a number (NumberSchema admits "number"), a boolean,
    # and from 2025-11-25 a list of strings (multi-select).
    answer: Schema = {"type": ["string", "number", "boolean"]}
    if d.since(R3):
        answer = {"anyOf": [answer, array(string())]}
    response = {"action": enum("accept", "decline", "cancel"), "content": mapping(answer)}
    if d.revision == R2:
        d.add("ElicitRequestParams", d.request_params(form, ["message", "requestedSchema"]))
    else:
        # "Clients MUST treat requests without a mode field as form mode."
        form["mode"] = const("form")
        url: dict[str, Schema] = {"mode": const("url"), "message": string(), "url": URI}
        if d.revision == R3:
            url["elicitationId"] = string()  # removed again in 2026-07-28
        url_required = ["mode", "message", "url"] + (["elicitationId"] if d.revision == R3 else [])
        if d.stateless:
            d.add("ElicitRequestFormParams", obj(form, ["message", "requestedSchema"]))
            d.add("ElicitRequestURLParams", obj(url, url_required))
        else:
            d.add(
                "ElicitRequestFormParams",
                d.request_params(
                    {**form, "task": ref("TaskMetadata")}, ["message", "requestedSchema"]
                ),
            )
            d.add(
                "ElicitRequestURLParams",
                d.request_params({**url, "task": ref("TaskMetadata")}, url_required),
            )
        d.add("ElicitRequestParams", any_of("ElicitRequestFormParams", "ElicitRequestURLParams"))
    if d.stateless:
        d.input_request("ElicitRequest", "elicitation/create", ref("ElicitRequestParams"))
        d.add("ElicitResult", obj(response, ["action"]))
        return
    d.request(
        "ElicitRequest",
        "elicitation/create",
        ref("ElicitRequestParams"),
        senders=("server",),
        result="ElicitResult",
        taskAugmentable=d.revision == R3,
    )
    d.add("ElicitResult", d.result(response, ["action"]))
    if d.revision == R3:
        d.add(
            "ElicitationCompleteNotificationParams",
            d.notification_params({"elicitationId": string()}, ["elicitationId"]),
        )
        d.notification(
            "ElicitationCompleteNotification",
            "notifications/elicitation/complete",
            ref("ElicitationCompleteNotificationParams"),
            senders=("server",),
        )
        _error_response(
            d,
            "URLElicitationRequiredError",
            -32042,
            obj({"elicitations": array(ref("ElicitRequestURLParams"))}, ["elicitations"]),
        )


def _tasks(d: _Document) -> None:
    """Tasks (2025-11-25 only: 2026-07-28 moves them to an extension)."""
    if d.revision != R3:
        return
    both = ("client", "server")
    d.add("TaskMetadata", obj({"ttl": INTEGER}))
    d.add("RelatedTaskMetadata", obj({"taskId": string()}, ["taskId"]))
    d.add("TaskStatus", enum("working", "input_required", "completed", "failed", "cancelled"))
    task = {
        "taskId": string(),
        "status": ref("TaskStatus"),
        "statusMessage": string(),
        "createdAt": string(),
        "lastUpdatedAt": string(),
        "ttl": {"type": ["integer", "null"]},
        "pollInterval": INTEGER,
    }
    task_required = ["taskId", "status", "createdAt", "lastUpdatedAt", "ttl"]
    d.add("Task", obj(task, task_required))
    d.add("CreateTaskResult", d.result({"task": ref("Task")}, ["task"]))
    d.add("TaskRequestParams", d.request_params({"taskId": string()}, ["taskId"]))
    for name, method, result in [
        ("GetTask", "tasks/get", "GetTaskResult"),
        ("GetTaskPayload", "tasks/result", "GetTaskPayloadResult"),
        ("CancelTask", "tasks/cancel", "CancelTaskResult"),
    ]:
        d.request(f"{name}Request", method, ref("TaskRequestParams"), senders=both, result=result)
    d.add("GetTaskResult", d.result(task, task_required))
    d.add("CancelTaskResult", d.result(task, task_required))
    d.add("GetTaskPayloadResult", ref("Result"))  # the payload is the original request's result
    _list(d, "Tasks", "tasks/list", "Task", "tasks", senders=both)
    d.add("TaskStatusNotificationParams", d.notification_params(task, task_required))
    d.notification(
        "TaskStatusNotification",
        "notifications/tasks/status",
        ref("TaskStatusNotificationParams"),
        senders=both,
    )


def _mrtr(d: _Document) -> None:
    """2026-07-28 multi round-trip requests: the server asks, the client retries with answers."""
    if not d.stateless:
        return
    d.add("InputRequest", any_of("CreateMessageRequest", "ListRootsRequest", "ElicitRequest"))
    d.add("InputResponse", any_of("CreateMessageResult", "ListRootsResult", "ElicitResult"))
    d.add("InputRequests", mapping(ref("InputRequest")))
    d.add("InputResponses", mapping(ref("InputResponse")))
    d.add("InputResponseRequestParams", d.request_params(_input_responses(d)))
    d.add(
        "InputRequiredResult",
        d.result({"inputRequests": ref("InputRequests"), "requestState": string()}),
    )
    envelope = {"jsonrpc": ref("JSONRPCVersion"), "id": ref("RequestId")}
    for method_entry in d.methods["client"]["requests"].values():
        result = method_entry["result"]
        if result == "EmptyResult":
            continue
        shape = (
            any_of("InputRequiredResult", result)
            if method_entry.get("inputRequired")
            else ref(result)
        )
        d.add(f"{result}Response", obj({**envelope, "result": shape}, ["jsonrpc", "id", "result"]))


def _unions(d: _Document) -> None:
    for side, title in [("client", "Client"), ("server", "Server")]:
        requests = [e["request"] for e in d.methods[side]["requests"].values()]
        if requests:
            d.add(f"{title}Request", any_of(*requests))
        notifications = list(d.methods[side]["notifications"].values())
        # A union of one (2026-07-28 client notifications) is that definition itself.
        d.add(
            f"{title}Notification",
            ref(notifications[0]) if len(notifications) == 1 else any_of(*notifications),
        )
        other = "server" if side == "client" else "client"
        answers = [e["result"] for e in d.methods[other]["requests"].values()]
        if not answers:
            continue  # 2026-07-28: no server requests, so a client never sends a result
        if d.revision == R3:
            answers.append("CreateTaskResult")  # the answer to a task-augmented request
        if d.stateless:
            answers.append("InputRequiredResult")
        names = ["Result", *dict.fromkeys(a for a in answers if a != "EmptyResult")]
        d.add(f"{title}Result", any_of(*names))


_BLOCKS: Final[tuple[Callable[[_Document], None], ...]] = (
    _base,
    _jsonrpc,
    _metadata,
    _content,
    _capabilities,
    _tasks,
    _lifecycle,
    _utilities,
    _resources,
    _prompts,
    _tools,
    _sampling,
    _roots,
    _elicitation,
    _mrtr,
    _unions,
)


def build(revision: str) -> dict[str, Any]:
    """The schema document of `revision`, as a JSON-ready dict."""
    d = _Document(check_revision(revision))
    for block in _BLOCKS:
        block(d)
    unresolved = sorted(_refs(d.defs) - set(d.defs))
    if unresolved:
        raise AssertionError(f"{revision}: undefined references {unresolved}")
    envelopes = {
        "request": "JSONRPCRequest",
        "notification": "JSONRPCNotification",
        "result": "JSONRPCResultResponse" if d.since(R3) else "JSONRPCResponse",
        "error": "JSONRPCErrorResponse" if d.since(R3) else "JSONRPCError",
        "message": "JSONRPCMessage",
    }
    return {
        "$schema": DIALECT,
        "$id": document_id(revision),
        "$comment": (
            "Written by mcp-testbench (harness/protocol/_schema_source.py) from the MCP specification's "
            "text; not the official schema.json. Draft 2020-12, the dialect the specification "
            "adopts from 2025-11-25 on, for every revision. Validate against one definition."
        ),
        "title": f"MCP {revision} messages (mcp-testbench)",
        "$defs": dict(sorted(d.defs.items())),
        # Read by harness/protocol/_schemas.py: which definition each method and envelope uses.
        # An unknown keyword, so JSON Schema validators treat it as an annotation.
        "x-mcp": {
            "revision": revision,
            "batches": d.revision == R1,
            "envelopes": envelopes,
            "errors": d.errors,
            "client": d.methods["client"],
            "server": d.methods["server"],
        },
    }


def _refs(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                found.add(item.rsplit("/", 1)[-1])
            else:
                found |= _refs(item)
    elif isinstance(value, list):
        for item in value:
            found |= _refs(item)
    return found


def render(revision: str) -> str:
    """The normalised text of the document: what `--write` stores and `--check` expects."""
    return json.dumps(build(revision), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def stale_files(directory: Path | None = None) -> list[str]:
    """The names of the files in `directory` that differ from what `render` produces."""
    folder = SCHEMA_DIR if directory is None else directory
    stale = []
    for revision in REVISIONS:
        path = folder / file_name(revision)
        if not path.is_file() or path.read_text(encoding="utf-8") != render(revision):
            stale.append(path.name)
    return stale


def main(argv: Sequence[str] | None = None, *, directory: Path | None = None) -> int:
    """`--write` regenerates the documents; `--check` exits 1 naming the stale ones."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.protocol._schema_source", description=__doc__.splitlines()[0]
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate harness/protocol/schemas/")
    action.add_argument(
        "--check", action="store_true", help="exit 1 if harness/protocol/schemas/ is stale"
    )
    args = parser.parse_args(argv)
    folder = SCHEMA_DIR if directory is None else directory
    if args.write:
        folder.mkdir(exist_ok=True)
        for revision in REVISIONS:
            (folder / file_name(revision)).write_text(render(revision), encoding="utf-8")
        print(f"wrote {len(REVISIONS)} schema documents to {folder}")
        return 0
    stale = stale_files(folder)
    if stale:
        print(
            f"stale schema documents in {folder}: {', '.join(stale)}; "
            "run `python -m harness.protocol._schema_source --write`",
            file=sys.stderr,
        )
        return 1
    print(f"{len(REVISIONS)} schema documents are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
