"""Request headers the HTTP mock checks: `Origin`, and the 2026-07-28 mirrored headers.

2026-07-28 Streamable HTTP mirrors body fields into headers (`MCP-Protocol-Version`,
`Mcp-Method`, `Mcp-Name`) so that intermediaries can route without reading the body; a
server must refuse a request whose headers are missing or disagree with its body
(HTTP 400, JSON-RPC -32020 HeaderMismatch). Values that are not plain ASCII travel in the
`=?base64?...?=` sentinel, decoded before the comparison.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from urllib.parse import urlsplit

from harness.protocol import Request
from mock_servers._engine import META_PROTOCOL_VERSION

__all__ = ["HEADER_MISMATCH", "decode_header_value", "header_mismatch", "loopback_origin"]

HEADER_MISMATCH = -32020
# The methods whose `Mcp-Name` header mirrors a body field, and which field.
_NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_PREFIX, _SUFFIX = "=?base64?", "?="
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def accepts(accept: str, media_type: str) -> bool:
    """Whether an Accept header value lists `media_type` itself. The spec asks clients to
    list the types ("listing both application/json and text/event-stream"), so a
    wildcard such as `*/*` does not count."""
    return any(part.split(";")[0].strip().lower() == media_type for part in accept.split(","))


def loopback_origin(origin: str) -> bool:
    """Whether an `Origin` names a loopback host (anything else risks DNS rebinding)."""
    try:
        host = urlsplit(origin.strip()).hostname
    except ValueError:
        return False
    return host in _LOOPBACK_HOSTS


def decode_header_value(raw: str) -> str | None:
    """A header value as the body would carry it: the `=?base64?...?=` sentinel decoded.

    None when the value is not a valid header value (non-ASCII, control characters) or
    the sentinel does not hold canonical base64 of UTF-8 text.
    """
    if not raw.isascii() or any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in raw):
        return None
    if not (raw.startswith(_PREFIX) and raw.endswith(_SUFFIX)):
        return raw
    if len(raw) < len(_PREFIX) + len(_SUFFIX):  # "=?base64?=": the markers overlap
        return None
    payload = raw[len(_PREFIX) : -len(_SUFFIX)]
    try:
        data = base64.b64decode(payload, validate=True)
        if base64.b64encode(data).decode("ascii") != payload:
            return None
        return data.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def header_mismatch(headers: Mapping[str, str], request: Request) -> str | None:
    """Why a 2026-07-28 request's headers (lower-case names) disagree with its body.

    None when they agree. A `_meta` without a protocol version is left to the engine,
    which answers -32602.
    """
    params = request.params if isinstance(request.params, dict) else {}
    meta = params.get("_meta")
    header = headers.get("mcp-protocol-version")
    if header is None:
        return "the MCP-Protocol-Version header is missing"
    body_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if body_version is not None and header != body_version:
        return (
            f"MCP-Protocol-Version header {header!r} does not match "
            f"_meta {META_PROTOCOL_VERSION} {body_version!r}"
        )
    method = headers.get("mcp-method")
    if method is None:
        return "the Mcp-Method header is missing"
    if method != request.method:
        return f"Mcp-Method header {method!r} does not match method {request.method!r}"
    source = _NAME_FIELDS.get(request.method)
    if source is None:
        return None
    expected = params.get(source)
    raw = headers.get("mcp-name")
    if raw is None:
        return f"the Mcp-Name header is missing (params.{source} is {expected!r})"
    decoded = decode_header_value(raw)
    if decoded is None:
        return f"Mcp-Name header {raw!r} is not a valid header value"
    if decoded != expected:
        return f"Mcp-Name header value {decoded!r} does not match params.{source} {expected!r}"
    return None
