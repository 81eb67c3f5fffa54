"""The JSON-RPC 2.0 codec: typed parsing, precise errors, exact serialisation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from harness.protocol import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Batch,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    ProtocolError,
    Request,
    Response,
    classify,
    encode,
    parse,
)
from harness.strategies import json_values, jsonrpc_messages, malformed_jsonrpc


def _parse_error(data: bytes | str, **kwargs: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        parse(data, **kwargs)
    return info.value


# -- typing of valid messages -----------------------------------------------------------


def test_request_with_integer_id() -> None:
    msg = parse(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c"}}')
    assert msg == Request(7, "tools/list", {"cursor": "c"})


def test_request_id_zero_is_an_id() -> None:
    # The TypeScript SDK numbers its requests from 0.
    msg = parse('{"jsonrpc":"2.0","id":0,"method":"ping"}')
    assert isinstance(msg, Request)
    assert msg.id == 0


def test_string_and_integer_ids_stay_apart() -> None:
    as_string = parse('{"jsonrpc":"2.0","id":"1","method":"ping"}')
    as_integer = parse('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert isinstance(as_string, Request)
    assert isinstance(as_integer, Request)
    assert as_string.id == "1"
    assert as_integer.id == 1
    assert as_string != as_integer


def test_big_integer_id_is_exact() -> None:
    big = 2**64 + 1
    msg = parse(f'{{"jsonrpc":"2.0","id":{big},"result":{{}}}}')
    assert msg == Response(big, {})
    assert encode(msg) == f'{{"jsonrpc":"2.0","id":{big},"result":{{}}}}'


def test_notification_has_no_id() -> None:
    assert parse('{"jsonrpc":"2.0","method":"notifications/initialized"}') == Notification(
        "notifications/initialized"
    )


def test_error_response_with_null_id() -> None:
    msg = parse('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
    assert msg == ErrorResponse(None, ErrorObject(-32700, "Parse error"))


def test_error_response_without_id() -> None:
    # JSON-RPC 2.0 asks for "id": null, MCP 2025-11-25 lets the member be left out.
    msg = parse('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}')
    assert msg == ErrorResponse(None, ErrorObject(-32700, "Parse error"))


def test_error_data_null_differs_from_absent() -> None:
    with_null = parse('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null}}')
    without = parse('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}')
    assert isinstance(with_null, ErrorResponse)
    assert isinstance(without, ErrorResponse)
    assert with_null.error.has_data
    assert not without.error.has_data
    assert '"data":null' in encode(with_null)
    assert "data" not in encode(without)


def test_unknown_members_are_tolerated() -> None:
    msg = parse('{"jsonrpc":"2.0","id":1,"result":{},"extra":true}')
    assert msg == Response(1, {})


def test_batch_when_allowed() -> None:
    data = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]'
    assert parse(data, allow_batch=True) == Batch((Request(1, "ping"), Notification("n")))


# -- parse errors (-32700) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (b"", "not valid JSON"),
        (b"{", "not valid JSON"),
        (b"\xff\xfe", "not valid UTF-8: byte 0 is 0xff"),
        (b'{"jsonrpc":"2.0","id":1,"result":NaN}', "NaN is not valid JSON"),
        (b'{"jsonrpc":"2.0","id":1,"result":Infinity}', "Infinity is not valid JSON"),
        (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"result":{}}', "byte order mark"),
        (b"[" * 100_000, "nested more than 128 levels deep"),
    ],
)
def test_parse_error(payload: bytes, fragment: str) -> None:
    error = _parse_error(payload)
    assert error.code == PARSE_ERROR
    assert fragment in str(error)
    assert error.request_id is None


# -- invalid requests (-32600) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fragment", "pointer"),
    [
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, "not null", "/id"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, "not a fractional number", "/id"),
        ({"jsonrpc": "2.0", "id": 1.0, "method": "ping"}, "not a fractional number", "/id"),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, "not a boolean", "/id"),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, "not an object", "/id"),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, "not an array", "/id"),
        ({"id": 1, "method": "ping"}, '"jsonrpc" member is missing', ""),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 'not "1.0"', "/jsonrpc"),
        ({"jsonrpc": 2.0, "id": 1, "method": "ping"}, "not 2.0", "/jsonrpc"),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
            'both "result" and "error"',
            "",
        ),
        ({"jsonrpc": "2.0", "id": 1, "method": "x", "result": {}}, 'must not carry "result"', ""),
        ({"jsonrpc": "2.0", "id": 1}, 'needs "method"', ""),
        ({"jsonrpc": "2.0", "result": {}}, 'must carry the "id"', ""),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, "not null", "/id"),
        ({"jsonrpc": "2.0", "method": 5}, '"method" must be a string', "/method"),
        ({"jsonrpc": "2.0", "method": "m", "params": "p"}, '"params" must be an object', "/params"),
        ({"jsonrpc": "2.0", "method": "m", "params": None}, "not null", "/params"),
        (
            {"jsonrpc": "2.0", "id": 3, "method": "notifications/initialized"},
            "must not carry an id",
            "/id",
        ),
        ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, '"error" must be an object', "/error"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "m"}}, "not missing", "/error/code"),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}},
            "not str",
            "/error/code",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": 1.5, "message": "m"}},
            "not a fractional number",
            "/error/code",
        ),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "not missing", "/error/message"),
        (
            {"jsonrpc": "2.0", "id": 1.5, "error": {"code": 1, "message": "m"}},
            "not a fractional number",
            "/id",
        ),
        ("hello", "must be an object, not str", ""),
        (None, "must be an object, not null", ""),
    ],
)
def test_invalid_request(value: Any, fragment: str, pointer: str) -> None:
    with pytest.raises(ProtocolError) as info:
        classify(value)
    assert info.value.code == INVALID_REQUEST
    assert fragment in info.value.reason
    assert info.value.pointer == pointer


def test_invalid_request_keeps_a_readable_id() -> None:
    error = _parse_error('{"jsonrpc":"1.0","id":"abc","method":"ping"}')
    assert error.request_id == "abc"
    response = error.to_error_response()
    assert response.id == "abc"
    assert response.error.code == INVALID_REQUEST
    assert "jsonrpc" in response.error.data["reason"]


def test_batch_refused_unless_allowed() -> None:
    error = _parse_error('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    assert error.code == INVALID_REQUEST
    assert "2025-03-26" in error.reason


def test_empty_batch() -> None:
    assert _parse_error("[]", allow_batch=True).reason == "an empty batch"


def test_bad_member_of_batch_is_located() -> None:
    error = _parse_error(
        '[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":null,"method":"b"}]',
        allow_batch=True,
    )
    assert error.pointer == "/1/id"


# -- serialisation ---------------------------------------------------------------------


def test_encode_keeps_unicode_and_has_no_raw_newline() -> None:
    line = encode(Request(1, "tools/call", {"name": "héllo\nwörld ✓"}))
    assert "\n" not in line
    assert "héllo" in line
    assert "✓" in line


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
def test_encode_escapes_characters_that_line_splitters_break_on(char: str) -> None:
    line = encode(Notification("n", {"t": f"a{char}b"}))
    assert char not in line
    assert len(line.splitlines()) == 1
    assert parse(line) == Notification("n", {"t": f"a{char}b"})


def test_encode_lone_surrogate_stays_encodable() -> None:
    msg = parse('{"jsonrpc":"2.0","method":"n","params":{"t":"\\ud800"}}')
    line = encode(msg)
    line.encode("utf-8")
    assert parse(line) == msg


def test_encode_refuses_nan() -> None:
    with pytest.raises(ValueError, match="Out of range float"):
        encode(Response(1, float("nan")))


# -- properties -------------------------------------------------------------------------


def _same_types(a: Any, b: Any) -> bool:
    """Equality that also tells 1 from 1.0 and True from 1, recursively."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_types(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@given(jsonrpc_messages())
def test_round_trip(message: Message) -> None:
    note(f"message: {message!r}")
    line = encode(message)
    note(f"encoded: {line!r}")
    assert "\n" not in line
    assert "\r" not in line
    back = parse(line.encode("utf-8"))
    assert back == message
    assert _same_types(back.to_json(), message.to_json())


@given(st.lists(jsonrpc_messages(), min_size=1, max_size=4))
def test_batch_round_trip(messages: list[Message]) -> None:
    note(f"messages: {messages!r}")
    batch = Batch(tuple(messages))
    assert parse(encode(batch), allow_batch=True) == batch


@given(st.binary(max_size=200))
def test_any_bytes_give_a_message_or_the_right_error(data: bytes) -> None:
    note(f"bytes: {data!r}")
    try:
        parse(data)
    except ProtocolError as exc:
        error: ProtocolError | None = exc
    else:
        error = None
    if error is not None:
        assert error.code in (PARSE_ERROR, INVALID_REQUEST)
        assert error.reason


@given(json_values())
def test_any_json_value_gives_a_message_or_invalid_request(value: Any) -> None:
    note(f"value: {value!r}")
    try:
        result: object = parse(json.dumps(value))
    except ProtocolError as exc:
        result = exc
    if isinstance(result, ProtocolError):
        assert result.code == INVALID_REQUEST
        assert result.reason
    else:
        assert isinstance(result, (Request, Notification, Response, ErrorResponse))


@given(malformed_jsonrpc())
def test_malformed_payloads_get_their_code(case: tuple[bytes, int]) -> None:
    payload, code = case
    note(f"payload: {payload!r}, expected code {code}")
    with pytest.raises(ProtocolError) as info:
        parse(payload)
    assert info.value.code == code
