"""mcp-testbench's harness: the client side of a conformance check.

The public API is what `__all__` lists; modules whose names start with `_` are private.
"""

from __future__ import annotations

from harness.protocol import (
    LATEST,
    REVISIONS,
    Batch,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    ProtocolError,
    Request,
    RequestId,
    Response,
    Revision,
    classify,
    encode,
    parse,
)

__all__ = [
    "LATEST",
    "REVISIONS",
    "Batch",
    "ErrorObject",
    "ErrorResponse",
    "Message",
    "Notification",
    "ProtocolError",
    "Request",
    "RequestId",
    "Response",
    "Revision",
    "classify",
    "encode",
    "parse",
]
