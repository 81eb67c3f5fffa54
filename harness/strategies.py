"""Hypothesis strategies for MCP and JSON-RPC messages, for users' own property tests.

    from hypothesis import given
    from harness.strategies import jsonrpc_messages, malformed_jsonrpc

Codec-level strategies produce typed messages (`harness.Request` and friends) or raw
payloads; `mcp_messages` produces valid MCP messages of one revision as plain dicts.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import string
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from hypothesis import strategies as st
from jsonschema.validators import validator_for

from harness.protocol import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)

__all__ = [
    "json_values",
    "jsonrpc_messages",
    "malformed_jsonrpc",
    "mcp_messages",
    "request_ids",
    "schema_values",
]

# Beyond 2**53 a JSON number loses precision in JavaScript clients: ids there are exactly
# the ones a codec must not round through a float.
_BIG = 2**70


def request_ids() -> st.SearchStrategy[RequestId]:
    """Valid JSON-RPC ids: integers (0, negative, beyond 2**53) and any string."""
    return st.one_of(
        st.integers(min_value=-_BIG, max_value=_BIG),
        st.sampled_from([0, 2**53, 2**53 + 1, -(2**63)]),
        st.text(max_size=40),
    )


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value (finite numbers, unicode strings, nested arrays and objects)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-_BIG, max_value=_BIG),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=30),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=12), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def _json_objects() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.text(max_size=12), json_values(6), max_size=4)


def _params() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), _json_objects(), st.lists(json_values(4), max_size=3))


_methods = st.one_of(
    st.sampled_from(["initialize", "tools/list", "tools/call", "ping", "server/discover"]),
    st.text(max_size=30),
)
_request_methods = _methods.filter(lambda m: not m.startswith("notifications/"))
_notification_methods = st.one_of(
    st.sampled_from(["notifications/initialized", "notifications/cancelled"]), _methods
)


def _error_objects() -> st.SearchStrategy[ErrorObject]:
    codes = st.one_of(
        st.sampled_from([-32700, -32600, -32601, -32602, -32603, -32002, -32022, -1]),
        st.integers(min_value=-_BIG, max_value=_BIG),
    )
    with_data = st.builds(ErrorObject, codes, st.text(max_size=40), json_values(6))
    return st.one_of(st.builds(ErrorObject, codes, st.text(max_size=40)), with_data)


def jsonrpc_messages() -> st.SearchStrategy[Message]:
    """Valid JSON-RPC 2.0 messages of every kind, as typed values."""
    return st.one_of(
        st.builds(Request, request_ids(), _request_methods, _params()),
        st.builds(Notification, _notification_methods, _params()),
        st.builds(Response, request_ids(), json_values()),
        st.builds(ErrorResponse, st.one_of(st.none(), request_ids()), _error_objects()),
    )


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


@st.composite
def _invalid_messages(draw: st.DrawFn) -> tuple[bytes, int]:
    """A JSON value that is well-formed JSON but not a JSON-RPC message (-32600)."""
    base = draw(jsonrpc_messages()).to_json()
    mutation = draw(
        st.sampled_from(
            [
                "drop_jsonrpc",
                "wrong_jsonrpc",
                "bad_id",
                "both_result_and_error",
                "nothing",
                "bad_method",
                "bad_params",
                "bad_error",
                "not_an_object",
                "unasked_batch",
                "notification_with_id",
            ]
        )
    )
    bad_ids = st.one_of(
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )
    if mutation == "drop_jsonrpc":
        del base["jsonrpc"]
    elif mutation == "wrong_jsonrpc":
        base["jsonrpc"] = draw(st.one_of(st.just("1.0"), st.just(2.0), st.none(), st.text()))
        if base["jsonrpc"] == "2.0":
            base["jsonrpc"] = "2"
    elif mutation == "bad_id":
        bad = draw(bad_ids)
        if "error" in base and bad is None:
            bad = True  # a null id is legal on an error response
        base["id"] = bad
    elif mutation == "both_result_and_error":
        base = {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}
    elif mutation == "nothing":
        base = {"jsonrpc": "2.0", "id": draw(request_ids())}
    elif mutation == "bad_method":
        base = {"jsonrpc": "2.0", "method": draw(st.one_of(st.integers(), st.none(), bad_ids))}
    elif mutation == "bad_params":
        base = {"jsonrpc": "2.0", "method": "m", "params": draw(st.one_of(st.none(), st.text()))}
    elif mutation == "bad_error":
        error: Any = draw(
            st.sampled_from(
                [
                    None,
                    "oops",
                    [],
                    {"message": "m"},
                    {"code": "1", "message": "m"},
                    {"code": 1.5, "message": "m"},
                    {"code": True, "message": "m"},
                    {"code": 1},
                ]
            )
        )
        base = {"jsonrpc": "2.0", "id": 1, "error": error}
    elif mutation == "not_an_object":
        return _dumps(draw(st.one_of(st.none(), st.booleans(), st.integers(), st.text()))), (
            INVALID_REQUEST
        )
    elif mutation == "unasked_batch":
        return _dumps([base]), INVALID_REQUEST
    else:
        base = {"jsonrpc": "2.0", "id": draw(request_ids()), "method": "notifications/initialized"}
    return _dumps(base), INVALID_REQUEST


@st.composite
def _unparsable(draw: st.DrawFn) -> tuple[bytes, int]:
    """Bytes that are not UTF-8 JSON at all (-32700)."""
    text = json.dumps(draw(jsonrpc_messages()).to_json())
    kind = draw(st.sampled_from(["truncate", "invalid_utf8", "nan", "garbage", "bom"]))
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text) - 1))].encode(), PARSE_ERROR
    if kind == "invalid_utf8":
        return text.encode() + draw(
            st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])
        ), PARSE_ERROR
    if kind == "nan":
        return b'{"jsonrpc":"2.0","id":1,"result":NaN}', PARSE_ERROR
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode(), PARSE_ERROR
    return draw(st.sampled_from([b"", b" ", b"{", b"hello", b"{'a': 1}", b"[1,]"])), PARSE_ERROR


def malformed_jsonrpc() -> st.SearchStrategy[tuple[bytes, int]]:
    """Payloads that are not a JSON-RPC message, each with the error code a server owes.

    -32700 for bytes that are not UTF-8 JSON, -32600 for JSON that is not a message
    (batches included: pass only single messages to a server that is not 2025-03-26).
    """
    return st.one_of(_invalid_messages(), _unparsable())


# --- MCP messages from the project's schemas ------------------------------------------
#
# `mcp_messages` draws messages that the project's own schemas (harness/protocol/schemas/) accept,
# for any revision and either direction. `schema_values` draws values of one definition of
# any JSON Schema document written with the keywords the MCP schemas use (ours and the
# official ones), which is what the schema cross-check tests need.
#
# Why not hypothesis-jsonschema: its latest release (0.23.1) drives a private Hypothesis
# API (`conjecture.utils.many(...).more()`) that current Hypothesis no longer has, so it
# fails on every object schema. The generator below uses public strategies only, compiles
# a small, fixed set of keywords (anything else is an error, never silently ignored), and
# filters where it merges (`allOf`) or excludes (`not`, `oneOf`), so that every value it
# draws is valid against the schema it was asked for.

Direction = Literal["client", "server"]

# Keywords that only annotate: they never constrain a value.
_ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated"}
)
_SUPPORTED: Final = frozenset(
    {
        "$ref",
        "$defs",
        "definitions",
        "type",
        "const",
        "enum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "format",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "x-mcp",
    }
)
_ALL_TYPES: Final = ("null", "boolean", "integer", "number", "string", "array", "object")
_NAME_CHARS: Final = string.ascii_letters + string.digits + "_-./"


def _uri_path() -> st.SearchStrategy[str]:
    return st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=10)


_FORMATS: Final[dict[str, st.SearchStrategy[str]]] = {
    "uri": st.one_of(
        st.sampled_from(["file:///tmp/notes.txt", "https://example.com/a?b=c", "urn:example:x"]),
        _uri_path().map("file:///project/{}".format),
        _uri_path().map("https://example.com/{}".format),
    ),
    "uri-template": st.one_of(
        st.sampled_from(["file:///{path}", "https://example.com/{id}", "db://tables/{table}/rows"]),
        _uri_path().map("file:///{}/{{name}}".format),
    ),
    "byte": st.binary(max_size=12).map(lambda raw: base64.b64encode(raw).decode("ascii")),
    "date-time": st.datetimes().map(lambda moment: moment.isoformat() + "Z"),
    "date": st.dates().map(str),
    "email": _uri_path().map("{}@example.com".format),
}


# Small values where a schema allows anything: the point is their presence, not their size
# (and a flat strategy draws far faster than a recursive one).
_SCALARS: Final = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_ANY_VALUE: Final = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=2),
    st.dictionaries(st.text(max_size=6), _SCALARS, max_size=2),
)


_ONE_IN_FOUR: Final = st.integers(0, 3)


class _Compiler:
    """Turns the schemas of one document into strategies (refs resolved within it)."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        # Format is not asserted: the same validator semantics as the harness's checks.
        self.validator = validator_for(document)(document)
        self._refs: dict[str, st.SearchStrategy[Any]] = {}

    def check(self, schema: Any) -> Callable[[Any], bool]:
        is_valid: Callable[[Any], bool] = self.validator.evolve(schema=schema).is_valid
        return is_valid

    def resolve(self, reference: str) -> Any:
        if not reference.startswith("#/"):
            raise ValueError(f"only local references are supported, not {reference!r}")
        node: Any = self.document
        for part in reference[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def ref(self, reference: str) -> st.SearchStrategy[Any]:
        if reference not in self._refs:
            # Deferred, so that recursive definitions (e.g. a JSON value) compile.
            self._refs[reference] = st.deferred(lambda: self.compile(self.resolve(reference)))
        return self._refs[reference]

    def compile(self, schema: Any) -> st.SearchStrategy[Any]:
        if schema is True:
            return _ANY_VALUE
        if schema is False:
            return st.nothing()
        if not isinstance(schema, Mapping):
            raise TypeError(f"not a schema: {schema!r}")
        keys = set(schema) - _ANNOTATIONS
        unsupported = keys - _SUPPORTED
        if unsupported:
            raise ValueError(f"unsupported JSON Schema keywords {sorted(unsupported)}")
        rest = {k: schema[k] for k in keys if k not in ("$defs", "definitions", "x-mcp")}
        if not rest:
            return _ANY_VALUE
        if "$ref" in rest:
            target = self.ref(rest.pop("$ref"))
            return target.filter(self.check(schema)) if rest else target
        if "allOf" in rest:
            return self._all_of(schema, rest)
        if "anyOf" in rest or "oneOf" in rest:
            return self._any_of(schema, rest)
        if "not" in rest:
            excluded = self.check(rest.pop("not"))
            return self.compile(rest).filter(lambda value: not excluded(value))
        if "const" in rest or "enum" in rest:
            values = [rest["const"]] if "const" in rest else list(rest["enum"])
            choice = st.sampled_from(values)
            return choice.filter(self.check(schema)) if len(rest) > 1 else choice
        types = rest.get("type")
        if types is None:
            if {"properties", "required", "additionalProperties"} & set(rest):
                types = "object"
            elif {"items", "minItems", "maxItems"} & set(rest):
                types = "array"
            else:
                types = list(_ALL_TYPES)
        names = [types] if isinstance(types, str) else list(types)
        return st.one_of([self._typed(name, rest) for name in names])

    def _any_of(self, schema: Mapping[str, Any], rest: dict[str, Any]) -> st.SearchStrategy[Any]:
        key = "anyOf" if "anyOf" in rest else "oneOf"
        branches = rest.pop(key)
        strategy = st.one_of([self.compile(branch) for branch in branches])
        if rest:  # constraints beside the union apply to every branch
            strategy = strategy.filter(self.check(rest))
        if key == "oneOf":
            checks = [self.check(branch) for branch in branches]
            strategy = strategy.filter(lambda value: sum(c(value) for c in checks) == 1)
        return strategy

    def _all_of(self, schema: Mapping[str, Any], rest: dict[str, Any]) -> st.SearchStrategy[Any]:
        parts = [self._deref(part) for part in rest.pop("allOf")]
        if rest:
            parts.append(rest)
        merged = _merge(parts)
        # The merge is a good first guess; the filter makes the result exact.
        strategy = self.compile(merged if merged is not None else parts[0])
        return strategy.filter(self.check(dict(schema)))

    def _deref(self, schema: Any) -> Any:
        seen = 0
        while isinstance(schema, Mapping) and set(schema) - _ANNOTATIONS == {"$ref"}:
            schema = self.resolve(schema["$ref"])
            seen += 1
            if seen > 32:
                raise ValueError("a chain of more than 32 references")
        return schema

    def _typed(self, name: str, schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        low, high = schema.get("minimum"), schema.get("maximum")
        if name == "null":
            return st.none()
        if name == "boolean":
            return st.booleans()
        if name == "integer":
            return st.integers(
                min_value=None if low is None else math.ceil(low),
                max_value=None if high is None else math.floor(high),
            )
        if name == "number":
            return st.one_of(
                st.integers(
                    min_value=None if low is None else math.ceil(low),
                    max_value=None if high is None else math.floor(high),
                ),
                st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False),
            )
        if name == "string":
            fmt = _FORMATS.get(schema.get("format", ""))
            if fmt is not None:
                return fmt
            return st.text(
                min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 16)
            )
        if name == "array":
            items = self.compile(schema.get("items", True))
            smallest = schema.get("minItems", 0)
            largest = min(schema.get("maxItems", smallest + 2), smallest + 2)
            return st.lists(items, min_size=smallest, max_size=largest)
        if name == "object":
            return self._object(schema)
        raise ValueError(f"unknown JSON type {name!r}")

    def _object(self, schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        extra: Any = schema.get("additionalProperties", True)
        member = {**{k: extra for k in required if k not in properties}, **properties}
        fixed = st.fixed_dictionaries(
            {k: self.compile(member[k]) for k in sorted(required)},
            optional={
                k: self.compile(v)
                for k, v in properties.items()
                if k not in required and v is not False
            },
        )
        if extra is False:
            return fixed
        # Open objects: now and then, members the schema does not name (the spec allows them).
        names = st.text(alphabet=_NAME_CHARS, min_size=1, max_size=8).filter(
            lambda name: name not in properties
        )
        extras = st.dictionaries(names, self.compile(extra), min_size=1, max_size=2)

        @st.composite
        def open_object(draw: st.DrawFn) -> dict[str, Any]:
            value = draw(fixed)
            if draw(_ONE_IN_FOUR) == 3:  # drawn only when used: a quarter of the time
                value = {**draw(extras), **value}
            return value

        return open_object()


def _merge(parts: list[Any]) -> dict[str, Any] | None:
    """One schema that approximates the conjunction of object/scalar `parts`, or None."""
    merged: dict[str, Any] = {}
    for part in parts:
        if part is True:
            continue
        if not isinstance(part, Mapping) or {"$ref", "anyOf", "oneOf", "allOf"} & set(part):
            return None
        for key, value in part.items():
            if key in _ANNOTATIONS or key == "not":
                continue  # checked by the caller's filter
            if key == "type":
                mine = (
                    {merged[key]}
                    if isinstance(merged.get(key), str)
                    else set(merged.get(key, _ALL_TYPES))
                )
                theirs = {value} if isinstance(value, str) else set(value)
                merged[key] = sorted(mine & theirs)
            elif key == "properties":
                props = dict(merged.get(key, {}))
                for name, sub in value.items():
                    props[name] = {"allOf": [props[name], sub]} if name in props else sub
                merged[key] = props
            elif key == "required":
                merged[key] = sorted({*merged.get(key, ()), *value})
            elif key == "additionalProperties" and key in merged:
                merged[key] = {"allOf": [merged[key], value]}
            else:
                merged.setdefault(key, value)
    return merged


_COMPILERS: dict[int, tuple[Mapping[str, Any], _Compiler]] = {}


def _compiler_for(document: Mapping[str, Any]) -> _Compiler:
    # Keyed by identity and kept alive with the document, so ids are never reused.
    entry = _COMPILERS.get(id(document))
    if entry is None or entry[0] is not document:
        entry = (document, _Compiler(document))
        _COMPILERS[id(document)] = entry
    return entry[1]


def schema_values(document: Mapping[str, Any], definition: str) -> st.SearchStrategy[Any]:
    """Values valid against `definition` of `document` (under `$defs` or `definitions`)."""
    for container in ("$defs", "definitions"):
        if definition in document.get(container, {}):
            return _compiler_for(document).ref(f"#/{container}/{definition}")
    raise ValueError(f"no definition {definition!r} in the schema document")


@functools.cache
def _our_document(revision: str) -> Mapping[str, Any]:
    from harness.protocol import schema_document

    return schema_document(revision)


@functools.cache  # one strategy per arguments: Hypothesis validates a new one on each draw
def mcp_messages(
    revision: str, direction: Direction = "client", method: str | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """Valid MCP messages that a `direction` ("client": client-to-server) sends at `revision`.

    Requests and notifications of that direction and, where the peer sends requests,
    result and error responses. With `method`, only requests or notifications of that
    method. Every message drawn passes `harness.protocol.validate` (results are checked
    against the direction's result union, as no request method is known).
    """
    from harness.protocol import validate

    document = _our_document(revision)
    table = document["x-mcp"]
    if direction not in ("client", "server"):
        raise ValueError(f"direction must be 'client' or 'server', not {direction!r}")
    mine = table[direction]
    choices: list[st.SearchStrategy[Any]] = []
    for kind in ("requests", "notifications"):
        for name, entry in sorted(mine[kind].items()):
            if method is None or name == method:
                definition = entry["request"] if kind == "requests" else entry
                choices.append(schema_values(document, definition))
    if method is not None and not choices:
        known = sorted({*mine["requests"], *mine["notifications"]})
        raise ValueError(
            f"{method!r} is not a {direction} request or notification at MCP {revision}; "
            f"known: {', '.join(known)}"
        )
    peer = table["server" if direction == "client" else "client"]
    if method is None and peer["requests"]:
        results = set()
        for entry in peer["requests"].values():
            results.add(entry["result"])
            if entry.get("inputRequired"):
                results.add("InputRequiredResult")
            if entry.get("taskAugmentable"):
                results.add("CreateTaskResult")
        ids = schema_values(document, "RequestId")
        for name in sorted(results):
            choices.append(
                st.builds(
                    lambda request_id, result: {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": result,
                    },
                    ids,
                    schema_values(document, name),
                )
            )
        choices.append(schema_values(document, table["envelopes"]["error"]))
        choices.extend(schema_values(document, name) for name in sorted(table["errors"].values()))
    # The schema of each message is exact; the whole-message rules (e.g. no "result"
    # member on a request) live in the envelopes, which an open object rarely trips.
    return st.one_of(choices).filter(lambda message: not validate(message, revision, direction))
