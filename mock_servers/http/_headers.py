"""Request headers the HTTP mock checks: `Origin`, and the 2026-07-28 mirrored headers.

2026-07-28 Streamable HTTP mirrors body fields into headers (`MCP-Protocol-Version`,
`Mcp-Method`, `Mcp-Name`) so that intermediaries can route without reading the body; a
server must refuse a request whose headers are missing or disagree with its body
(HTTP 400, JSON-RPC -32020 HeaderMismatch). Values that are not plain ASCII travel in the
`=?base64?...?=` sentinel, decoded before the comparison. A tool may designate arguments
to mirror as well (`x-mcp-header` in its `inputSchema`): the mock checks the
`Mcp-Param-{name}` headers of a call against the tool definitions it serves.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from harness.protocol import Request
from mock_servers.engine import META_PROTOCOL_VERSION

__all__ = [
    "HEADER_MISMATCH",
    "LOOPBACK_HOSTS",
    "Mismatch",
    "ParamHeaders",
    "declared_param_headers",
    "decode_header_value",
    "header_mismatch",
    "host_allowed",
    "loopback_origin",
]

HEADER_MISMATCH = -32020
# The methods whose `Mcp-Name` header mirrors a body field, and which field.
_NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_PREFIX, _SUFFIX = "=?base64?", "?="
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
#: The `Host` names a mock serves by default: it binds loopback only.
LOOPBACK_HOSTS = frozenset(_LOOPBACK_HOSTS)

_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
# (property path in the arguments, header name) for each mirrored argument of a tool.
ParamHeaders = Sequence[tuple[tuple[str, ...], str]]


@dataclass(frozen=True)
class Mismatch:
    """A request header that disagrees with the body: its name, and why."""

    header: str
    reason: str


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


def host_allowed(host: str | None, allowed: frozenset[str] | None) -> bool:
    """Whether a request's `Host` header names this server: one of `allowed` (None: any
    name) or a loopback address. A server on loopback that answers any Host can be reached
    from a web page through DNS rebinding, whatever its Origin check says. No Host at all
    (HTTP/1.0) names nothing to rebind."""
    if allowed is None or host is None:
        return True
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.rpartition(":")[0]
    if name in allowed:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


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


def declared_param_headers(schema: Any) -> ParamHeaders:
    """The arguments a tool's `inputSchema` designates for `Mcp-Param-*` headers.

    Only declarations on properties reached from the root through `properties` alone are
    recognized: one anywhere else (under `items`, `oneOf`, `$ref`...) makes the tool
    definition invalid, and a client leaves such a tool out instead of calling it.
    """
    found: list[tuple[tuple[str, ...], str]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        properties = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(properties, dict):
            return
        for key, sub in properties.items():
            name = sub.get("x-mcp-header") if isinstance(sub, dict) else None
            if isinstance(name, str) and name:
                found.append(((*path, key), name))
            walk(sub, (*path, key))

    walk(schema, ())
    return found


def header_mismatch(
    headers: Mapping[str, str], request: Request, param_headers: ParamHeaders = ()
) -> Mismatch | None:
    """Why a 2026-07-28 request's headers (lower-case names) disagree with its body.

    None when they agree. `param_headers` are the arguments the called tool mirrors. A
    `_meta` without a protocol version is left to the engine, which answers -32602.
    """
    params = request.params if isinstance(request.params, dict) else {}
    meta = params.get("_meta")
    header = headers.get("mcp-protocol-version")
    if header is None:
        return Mismatch("MCP-Protocol-Version", "the MCP-Protocol-Version header is missing")
    body_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if body_version is not None and header != body_version:
        return Mismatch(
            "MCP-Protocol-Version",
            f"MCP-Protocol-Version header {header!r} does not match "
            f"_meta {META_PROTOCOL_VERSION} {body_version!r}",
        )
    method = headers.get("mcp-method")
    if method is None:
        return Mismatch("Mcp-Method", "the Mcp-Method header is missing")
    if method != request.method:
        return Mismatch(
            "Mcp-Method", f"Mcp-Method header {method!r} does not match method {request.method!r}"
        )
    source = _NAME_FIELDS.get(request.method)
    if source is None:
        return None
    expected = params.get(source)
    raw = headers.get("mcp-name")
    if raw is None:
        return Mismatch(
            "Mcp-Name", f"the Mcp-Name header is missing (params.{source} is {expected!r})"
        )
    decoded = decode_header_value(raw)
    if decoded is None:
        return Mismatch("Mcp-Name", f"Mcp-Name header {raw!r} is not a valid header value")
    if decoded != expected:
        return Mismatch(
            "Mcp-Name",
            f"Mcp-Name header value {decoded!r} does not match params.{source} {expected!r}",
        )
    return _param_mismatch(headers, params.get("arguments"), param_headers)


def _param_mismatch(
    headers: Mapping[str, str], arguments: Any, param_headers: ParamHeaders
) -> Mismatch | None:
    """Why the `Mcp-Param-*` headers disagree with the arguments they mirror (or None).

    A header is due exactly when the argument has a value: null or absent means none.
    """
    for path, name in param_headers:
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        where = "arguments." + ".".join(path)
        field = f"Mcp-Param-{name}"
        raw = headers.get(f"mcp-param-{name.lower()}")
        if raw is None:
            if value is None:
                continue
            return Mismatch(field, f"the {field} header is missing ({where} is {value!r})")
        decoded = decode_header_value(raw)
        if decoded is None:
            return Mismatch(
                field,
                f"{field} header {raw!r} is not a valid header value (invalid characters, "
                "or a =?base64?...?= sentinel without canonical base64 of UTF-8 text)",
            )
        if value is None:
            return Mismatch(field, f"{field} header is {decoded!r} but {where} has no value")
        if not _mirrors(decoded, value):
            return Mismatch(
                field, f"{field} header value {decoded!r} does not match {where} {value!r}"
            )
    return None


def _mirrors(text: str, value: Any) -> bool:
    """Whether a decoded header value mirrors an argument: booleans as `true`/`false`,
    numbers compared numerically (the spec's SHOULD: `42.0` and `42` are equal)."""
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return _NUMBER.fullmatch(text) is not None and Decimal(text) == Decimal(str(value))
        except InvalidOperation:
            return False
    return isinstance(value, str) and text == value
