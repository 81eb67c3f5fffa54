"""Hypothesis strategies for MCP and JSON-RPC messages, for users' own property tests.

    from hypothesis import given
    from harness.strategies import jsonrpc_messages, malformed_jsonrpc

Codec-level strategies produce typed messages (`harness.Request` and friends) or raw
payloads; `mcp_messages` produces valid MCP messages of one revision as plain dicts.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from harness._jsonrpc import (
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
    "request_ids",
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
        error = draw(
            st.sampled_from(
                [None, "oops", [], {"message": "m"}, {"code": "1", "message": "m"},
                 {"code": 1.5, "message": "m"}, {"code": True, "message": "m"}, {"code": 1}]
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
        return text.encode() + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])), PARSE_ERROR
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
