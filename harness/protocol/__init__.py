"""The protocol layer: what both sides of an MCP exchange share.

JSON-RPC 2.0 messages and their codec, the SSE event-stream codec, the MCP revisions, the
MCP JSON Schemas (generated into `schemas/`) and typed JSON comparison. The harness (the
client side of a check) and `mock_servers` (the server side) both build on this package,
and it imports neither: `.importlinter` keeps it at the bottom of the layers.
"""

from __future__ import annotations

from harness.protocol._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_DEPTH,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Batch,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    ProtocolError,
    Request,
    RequestId,
    Response,
    classify,
    decode_json,
    encode,
    is_request_id,
    nested_deeper_than,
    parse,
)
from harness.protocol._jsonvalue import json_type, same_json
from harness.protocol._revisions import (
    HANDSHAKE_REVISIONS,
    LATEST,
    META_SUBSCRIPTION_ID,
    REVISIONS,
    STATELESS_REVISIONS,
    Revision,
    batches_allowed,
    check_revision,
    is_stateless,
    transports_for,
)
from harness.protocol._schemas import (
    Direction,
    Violation,
    definition_names,
    request_methods,
    schema_document,
    validate,
    validate_definition,
)
from harness.protocol._sse import SSEEvent, SSEParser, encode_event, encode_events, parse_all

__all__ = [
    "HANDSHAKE_REVISIONS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST",
    "MAX_DEPTH",
    "META_SUBSCRIPTION_ID",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REVISIONS",
    "STATELESS_REVISIONS",
    "Batch",
    "Direction",
    "ErrorObject",
    "ErrorResponse",
    "Message",
    "Notification",
    "ProtocolError",
    "Request",
    "RequestId",
    "Response",
    "Revision",
    "SSEEvent",
    "SSEParser",
    "Violation",
    "batches_allowed",
    "check_revision",
    "classify",
    "decode_json",
    "definition_names",
    "encode",
    "encode_event",
    "encode_events",
    "is_request_id",
    "is_stateless",
    "json_type",
    "nested_deeper_than",
    "parse",
    "parse_all",
    "request_methods",
    "same_json",
    "schema_document",
    "transports_for",
    "validate",
    "validate_definition",
]
