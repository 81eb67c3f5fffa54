"""JSON-RPC 2.0 codec: bytes or text in, a typed message out, and back.

Both sides of the harness use it: the mock servers to read what a client sent, the
bundled clients to read what a server answered. Every failure is a `ProtocolError`
carrying the JSON-RPC code a server would answer with (-32700 for bytes that are not
JSON, -32600 for JSON that is not a JSON-RPC message) and a precise, human reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_DEPTH",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Batch",
    "ErrorObject",
    "ErrorResponse",
    "Message",
    "Notification",
    "ProtocolError",
    "Request",
    "RequestId",
    "Response",
    "classify",
    "decode_json",
    "encode",
    "is_request_id",
    "nested_deeper_than",
    "parse",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: The deepest nesting of arrays and objects a JSON text may have here. Python's decoder
#: runs out of stack near a thousand levels, and every recursive reader after it (schema
#: validation, encoding, pattern matching) much sooner; MCP messages are nowhere near this
#: deep, and a text that is gets a parse error instead of crashing whoever reads it.
MAX_DEPTH = 128

RequestId = int | str
Params = dict[str, Any] | list[Any] | None


class ProtocolError(Exception):
    """Input that is not a JSON-RPC message: `code` is the JSON-RPC error code to answer.

    `pointer` is a JSON pointer into the offending value ("" for the whole message,
    "/2" for the third member of a batch); `request_id` is the id of the offending
    message when one could be read, so that a server can address its error response.
    """

    def __init__(
        self,
        code: int,
        reason: str,
        *,
        pointer: str = "",
        request_id: RequestId | None = None,
    ) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.pointer = pointer
        self.request_id = request_id

    def __str__(self) -> str:
        where = f" at {self.pointer}" if self.pointer else ""
        return f"{self.reason}{where} (JSON-RPC {self.code})"

    def to_error_response(self) -> ErrorResponse:
        """The error response a server sends back for this input."""
        message = "Parse error" if self.code == PARSE_ERROR else "Invalid Request"
        return ErrorResponse(
            self.request_id, ErrorObject(self.code, message, {"reason": str(self)})
        )


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: Params = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            out["params"] = self.params
        return out


@dataclass(frozen=True)
class Notification:
    method: str
    params: Params = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            out["params"] = self.params
        return out


@dataclass(frozen=True)
class Response:
    """A success response."""

    id: RequestId
    result: Any

    def to_json(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "result": self.result}


_NO_DATA: Any = object()


@dataclass(frozen=True)
class ErrorObject:
    code: int
    message: str
    data: Any = field(default=_NO_DATA)

    @property
    def has_data(self) -> bool:
        return self.data is not _NO_DATA

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.has_data:
            out["data"] = self.data
        return out


@dataclass(frozen=True)
class ErrorResponse:
    """An error response; `id` is None only when the request's id could not be read."""

    id: RequestId | None
    error: ErrorObject

    def to_json(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "error": self.error.to_json()}


Message = Request | Notification | Response | ErrorResponse


@dataclass(frozen=True)
class Batch:
    """A JSON-RPC batch (only the 2025-03-26 revision of MCP admits them)."""

    messages: tuple[Message, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [m.to_json() for m in self.messages]


def _reject_constant(name: str) -> Any:
    # Python's json module accepts NaN and Infinity, which are not JSON.
    raise ValueError(f"{name} is not valid JSON")


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a fractional number"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def is_request_id(value: Any) -> TypeGuard[RequestId]:
    """A JSON-RPC id: a string or an integer (a boolean or a fractional number is neither)."""
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


# What json.loads(text, parse_constant=...) makes on every call, made once.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def decode_json(data: bytes | str) -> Any:
    """Bytes or text to a JSON value; anything that is not strict UTF-8 JSON is -32700."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(
                PARSE_ERROR, f"not valid UTF-8: byte {exc.start} is {bytes(data)[exc.start]:#04x}"
            ) from None
    else:
        text = data
    if text.startswith("\ufeff"):
        raise ProtocolError(PARSE_ERROR, "a byte order mark precedes the JSON text")
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            raise ProtocolError(PARSE_ERROR, _TOO_DEEP) from None
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise ProtocolError(PARSE_ERROR, f"not valid JSON: {reason}") from None
    # Fewer brackets than the limit cannot nest past it: the walk is for the rare text
    # that has more (str.count is cheap beside the decoding itself).
    if text.count("[") + text.count("{") > MAX_DEPTH and nested_deeper_than(value, MAX_DEPTH):
        raise ProtocolError(PARSE_ERROR, _TOO_DEEP)
    return value


_TOO_DEEP = f"not accepted: arrays and objects nested more than {MAX_DEPTH} levels deep"


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels deep in `value` (without
    recursion, which is what such a value would exhaust)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def parse(data: bytes | str, *, allow_batch: bool = False) -> Message | Batch:
    """Decode one JSON-RPC message (or a batch, when `allow_batch`)."""
    return classify(decode_json(data), allow_batch=allow_batch)


def classify(value: Any, *, allow_batch: bool = False) -> Message | Batch:
    """Type an already-decoded JSON value as a JSON-RPC message, or raise -32600."""
    if isinstance(value, list):
        if not allow_batch:
            raise ProtocolError(
                INVALID_REQUEST,
                "a JSON array (batch) is not allowed: only the 2025-03-26 revision admits batches",
            )
        if not value:
            raise ProtocolError(INVALID_REQUEST, "an empty batch")
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_classify_one(item))
            except ProtocolError as exc:
                exc.pointer = f"/{index}{exc.pointer}"
                raise
        return Batch(tuple(items))
    return _classify_one(value)


def _classify_one(value: Any) -> Message:
    if not isinstance(value, dict):
        raise ProtocolError(INVALID_REQUEST, f"a message must be an object, not {_describe(value)}")
    raw_id = value.get("id")
    known_id: RequestId | None = raw_id if is_request_id(raw_id) else None

    def bad(reason: str, pointer: str = "") -> ProtocolError:
        return ProtocolError(INVALID_REQUEST, reason, pointer=pointer, request_id=known_id)

    if "jsonrpc" not in value:
        raise bad('the "jsonrpc" member is missing (it must be "2.0")')
    if value["jsonrpc"] != "2.0":
        raise bad(f'"jsonrpc" must be "2.0", not {json.dumps(value["jsonrpc"])}', "/jsonrpc")

    has_method = "method" in value
    has_result = "result" in value
    has_error = "error" in value
    if has_method:
        if has_result or has_error:
            raise bad('a message with "method" must not carry "result" or "error"')
        method = value["method"]
        if not isinstance(method, str):
            raise bad(f'"method" must be a string, not {_describe(method)}', "/method")
        params = value.get("params")
        if "params" in value and not isinstance(params, (dict, list)):
            raise bad(f'"params" must be an object or an array, not {_describe(params)}', "/params")
        if "id" not in value:
            return Notification(method, params)
        if not is_request_id(raw_id):
            raise bad(
                f"a request id must be a string or an integer, not {_describe(raw_id)}", "/id"
            )
        if method.startswith("notifications/"):
            raise bad(f'the notification "{method}" must not carry an id', "/id")
        assert known_id is not None
        return Request(known_id, method, params)

    if has_result and has_error:
        raise bad('a response must not carry both "result" and "error"')
    if not has_result and not has_error:
        raise bad(
            'a message needs "method" (request or notification) or "result"/"error" (response)'
        )
    if has_result and "id" not in value:
        raise bad('a response must carry the "id" of the request it answers')
    if has_result:
        if not is_request_id(raw_id):
            raise bad(
                f"a response id must be a string or an integer, not {_describe(raw_id)}", "/id"
            )
        assert known_id is not None
        return Response(known_id, value["result"])
    if raw_id is not None and not is_request_id(raw_id):
        raise bad(
            f"an error response id must be a string, an integer or null, not {_describe(raw_id)}",
            "/id",
        )
    return ErrorResponse(raw_id, _error_object(value["error"], bad))


def _error_object(error: Any, bad: Any) -> ErrorObject:
    if not isinstance(error, dict):
        raise bad(f'"error" must be an object, not {_describe(error)}', "/error")
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        missing = "missing" if "code" not in error else _describe(code)
        raise bad(f'"error.code" must be an integer, not {missing}', "/error/code")
    message = error.get("message")
    if not isinstance(message, str):
        missing = "missing" if "message" not in error else _describe(message)
        raise bad(f'"error.message" must be a string, not {missing}', "/error/message")
    return ErrorObject(code, message, error.get("data", _NO_DATA))


def encode(message: Message | Batch | Mapping[str, Any] | list[Any]) -> str:
    """One line of JSON: unicode kept, ids and big integers exact, no newline inside.

    JSON escapes control characters inside strings, so the output never contains a raw
    newline and is safe for newline-delimited framing (stdio).
    """
    value = message.to_json() if hasattr(message, "to_json") else message
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (legal in JSON text, not in UTF-8): keep it as an escape.
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    # Characters that some line splitters (Python's str.splitlines among them) take for a
    # line break; escaped, they mean the same to JSON and cannot break the framing.
    if "\x85" in text or "\u2028" in text or "\u2029" in text:  # rare: skip the slow pass
        text = text.translate(_LINE_BREAK_ESCAPES)
    return text


_LINE_BREAK_ESCAPES = {c: f"\\u{c:04x}" for c in (0x85, 0x2028, 0x2029)}
