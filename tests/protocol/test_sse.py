"""Tests for the SSE codec (harness.protocol): the WHATWG event-stream rules, the writer, and properties."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from harness.protocol import SSEEvent, SSEParser, encode_event, encode_events, parse_all

BOM = b"\xef\xbb\xbf"


def _split(raw: bytes, cuts: Sequence[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(raw)]
    return [raw[start:end] for start, end in pairwise(bounds)]


def _parse_chunks(chunks: Sequence[bytes]) -> tuple[list[SSEEvent], SSEParser]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events, parser


# --- data ------------------------------------------------------------------------------


def test_single_data_line_is_dispatched() -> None:
    [event] = parse_all(b"data: hello\n\n")
    assert event == SSEEvent(data="hello")
    assert event.dispatched


def test_multi_line_data_is_joined_with_lf() -> None:
    assert parse_all(b"data: a\ndata: b\ndata: c\n\n") == [SSEEvent(data="a\nb\nc")]


def test_only_the_final_lf_of_the_data_buffer_is_removed() -> None:
    assert parse_all(b"data: a\ndata:\ndata:\n\n") == [SSEEvent(data="a\n\n")]


def test_data_with_colon_and_empty_value_is_empty_string() -> None:
    assert parse_all(b"data:\n\n") == [SSEEvent(data="")]


def test_data_without_colon_is_empty_string() -> None:
    assert parse_all(b"data\n\n") == [SSEEvent(data="")]


def test_value_may_contain_colons() -> None:
    assert parse_all(b'data: {"a": 1}\n\n') == [SSEEvent(data='{"a": 1}')]


def test_nul_in_data_is_kept() -> None:
    assert parse_all(b"data: a\x00b\n\n") == [SSEEvent(data="a\x00b")]


# --- field syntax ----------------------------------------------------------------------


def test_exactly_one_leading_space_is_stripped_from_the_value() -> None:
    assert parse_all(b"data:  two\n\n") == [SSEEvent(data=" two")]


def test_value_without_leading_space_is_kept_whole() -> None:
    assert parse_all(b"data:x\n\n") == [SSEEvent(data="x")]


def test_leading_tab_is_not_stripped() -> None:
    assert parse_all(b"data:\tx\n\n") == [SSEEvent(data="\tx")]


def test_field_without_colon_has_empty_value() -> None:
    assert parse_all(b"event\nid\ndata: x\n\n") == [SSEEvent(data="x", event="", id="")]


def test_unknown_field_is_ignored() -> None:
    assert parse_all(b"foo: bar\ndata: x\n\n") == [SSEEvent(data="x")]


def test_field_names_are_case_sensitive() -> None:
    assert parse_all(b"Data: x\nEVENT: y\n\n") == []


def test_block_with_only_unknown_fields_is_not_reported() -> None:
    assert parse_all(b"foo: bar\n\n") == []


def test_later_field_in_a_block_wins() -> None:
    assert parse_all(b"event: a\nevent: b\nid: 1\nid: 2\ndata: x\n\n") == [
        SSEEvent(data="x", event="b", id="2")
    ]


# --- event -----------------------------------------------------------------------------


def test_event_field_names_the_event() -> None:
    assert parse_all(b"event: ping\ndata: x\n\n") == [SSEEvent(data="x", event="ping")]


def test_event_type_does_not_carry_over_to_the_next_block() -> None:
    assert parse_all(b"event: ping\ndata: 1\n\ndata: 2\n\n") == [
        SSEEvent(data="1", event="ping"),
        SSEEvent(data="2"),
    ]


def test_event_only_block_is_reported_but_not_dispatched() -> None:
    [event] = parse_all(b"event: ping\n\n")
    assert event == SSEEvent(event="ping")
    assert not event.dispatched


# --- id --------------------------------------------------------------------------------


def test_id_field_sets_event_id_and_last_event_id() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: 7\ndata: x\n\n") == [SSEEvent(data="x", id="7")]
    assert parser.last_event_id == "7"


def test_last_event_id_persists_across_blocks_without_id() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 7\ndata: x\n\ndata: y\n\n")
    assert events == [SSEEvent(data="x", id="7"), SSEEvent(data="y")]
    assert parser.last_event_id == "7"


def test_empty_id_resets_last_event_id() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 7\ndata: x\n\nid\ndata: y\n\n")
    assert events == [SSEEvent(data="x", id="7"), SSEEvent(data="y", id="")]
    assert parser.last_event_id == ""


def test_id_containing_nul_is_ignored() -> None:
    parser = SSEParser()
    events = parser.feed(b"id: 1\n\nid: a\x00b\ndata: x\n\n")
    assert events == [SSEEvent(id="1"), SSEEvent(data="x")]
    assert parser.last_event_id == "1"


def test_id_only_block_is_reported_and_sets_last_event_id() -> None:
    parser = SSEParser()
    [event] = parser.feed(b"id: prime\n\n")
    assert event == SSEEvent(id="prime")
    assert not event.dispatched
    assert parser.last_event_id == "prime"


def test_last_event_id_is_updated_only_when_the_block_ends() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: 1\n") == []
    assert parser.last_event_id == ""
    parser.feed(b"\n")
    assert parser.last_event_id == "1"


def test_id_of_an_incomplete_block_never_reaches_last_event_id() -> None:
    parser = SSEParser()
    parser.feed(b"id: 1\n\nid: 2\ndata: x\n")
    assert parser.close() == []
    assert parser.last_event_id == "1"


def test_initial_last_event_id_is_kept_until_a_new_id() -> None:
    parser = SSEParser(last_event_id="41")
    parser.feed(b"data: x\n\n")
    assert parser.last_event_id == "41"


# --- retry -----------------------------------------------------------------------------


def test_valid_retry_is_reported_and_remembered() -> None:
    parser = SSEParser()
    assert parser.feed(b"retry: 3000\n\n") == [SSEEvent(retry=3000)]
    assert parser.retry == 3000


def test_retry_with_leading_zeros_is_decimal() -> None:
    assert parse_all(b"retry: 0010\n\n") == [SSEEvent(retry=10)]


@pytest.mark.parametrize(
    "value",
    [
        b"",
        b"1.5",
        b"-1",
        b"+1",
        b" 10",  # the second space survives stripping
        b"10ms",
        b"1e3",
        "\u0663".encode(),  # ARABIC-INDIC DIGIT THREE: a digit, but not ASCII
        "\uff11".encode(),  # FULLWIDTH DIGIT ONE
    ],
)
def test_invalid_retry_is_ignored(value: bytes) -> None:
    parser = SSEParser()
    assert parser.feed(b"retry: " + value + b"\ndata: x\n\n") == [SSEEvent(data="x")]
    assert parser.retry is None


def test_invalid_retry_keeps_the_previous_valid_one() -> None:
    parser = SSEParser()
    parser.feed(b"retry: 5\n\nretry: x\ndata: y\n\n")
    assert parser.retry == 5


def test_retry_beyond_the_int_digit_limit_is_ignored() -> None:
    parser = SSEParser()
    assert parser.feed(b"retry: 1" + b"0" * 5000 + b"\n\n") == []
    assert parser.retry is None


def test_retry_takes_effect_before_the_block_ends() -> None:
    parser = SSEParser()
    parser.feed(b"retry: 250\n")
    assert parser.retry == 250


# --- comments --------------------------------------------------------------------------


def test_comments_are_attached_to_their_block() -> None:
    assert parse_all(b": one\n:two\ndata: x\n: three\n\n") == [
        SSEEvent(data="x", comments=("one", "two", "three"))
    ]


def test_comment_loses_only_one_leading_space() -> None:
    assert parse_all(b":  indented\n:\n: \ndata: x\n\n") == [
        SSEEvent(data="x", comments=(" indented", "", ""))
    ]


def test_comment_only_block_is_reported() -> None:
    [event] = parse_all(b": keep-alive\n\n")
    assert event == SSEEvent(comments=("keep-alive",))
    assert not event.dispatched


def test_comments_in_a_block_of_unknown_fields_are_reported() -> None:
    assert parse_all(b": c\nfoo: bar\n\n") == [SSEEvent(comments=("c",))]


def test_comments_do_not_carry_over_to_the_next_block() -> None:
    assert parse_all(b": a\n\ndata: x\n\n") == [SSEEvent(comments=("a",)), SSEEvent(data="x")]


def test_colon_line_is_a_comment_not_a_field() -> None:
    assert parse_all(b":data: x\n\n") == [SSEEvent(comments=("data: x",))]


def test_blank_lines_alone_report_nothing() -> None:
    assert parse_all(b"\n\n\r\n\r\r\n") == []


# --- line ends -------------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"], ids=["LF", "CR", "CRLF"])
def test_each_line_end_separates_lines(eol: bytes) -> None:
    raw = b"event: e" + eol + b"data: a" + eol + b"data: b" + eol + eol
    assert parse_all(raw) == [SSEEvent(data="a\nb", event="e")]


def test_mixed_line_ends_in_one_stream() -> None:
    raw = b"data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\r"
    assert parse_all(raw) == [SSEEvent(data="a\nb\nc"), SSEEvent(data="d")]


def test_lf_cr_is_two_line_ends() -> None:
    assert parse_all(b"data: a\n\r") == [SSEEvent(data="a")]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    events, _ = _parse_chunks([b"data: a\r", b"\ndata: b\n\n"])
    assert events == [SSEEvent(data="a\nb")]


def test_crlf_split_by_empty_chunks_is_one_line_end() -> None:
    events, _ = _parse_chunks([b"data: a\r", b"", b"", b"\ndata: b\n\n"])
    assert events == [SSEEvent(data="a\nb")]


def test_cr_at_chunk_end_followed_by_text_is_a_line_end() -> None:
    events, _ = _parse_chunks([b"data: a\r", b"data: b\r\r"])
    assert events == [SSEEvent(data="a\nb")]


def test_block_ending_in_cr_is_reported_without_waiting_for_more_input() -> None:
    assert SSEParser().feed(b"data: a\r\r") == [SSEEvent(data="a")]


def test_block_ending_in_cr_at_end_of_stream_is_complete() -> None:
    events, parser = _parse_chunks([b"data: a\r\r"])
    assert events == [SSEEvent(data="a")]
    assert not parser.pending


# --- byte order mark -------------------------------------------------------------------


def test_bom_at_stream_start_is_stripped() -> None:
    assert parse_all(BOM + b"data: x\n\n") == [SSEEvent(data="x")]


def test_bom_split_across_chunks_is_stripped() -> None:
    events, _ = _parse_chunks([BOM[:1], BOM[1:2], BOM[2:] + b"data: x\n\n"])
    assert events == [SSEEvent(data="x")]


def test_only_one_bom_is_stripped() -> None:
    # The second BOM becomes part of the field name, which is then unknown.
    assert parse_all(BOM + BOM + b"data: x\n\ndata: y\n\n") == [SSEEvent(data="y")]


def test_bom_after_stream_start_is_not_stripped() -> None:
    events, _ = _parse_chunks([b"data: x\n\n", BOM + b"data: y\n\n"])
    assert events == [SSEEvent(data="x")]


def test_bom_inside_a_value_is_kept() -> None:
    assert parse_all(b"data: " + BOM + b"x\n\n") == [SSEEvent(data="\ufeffx")]


# --- UTF-8 -----------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\u00e9", "\u20ac", "\U0001f600"])
def test_utf8_character_split_across_chunks(char: str) -> None:
    raw = f"data: {char}\n\n".encode()
    for cut in range(len(raw) + 1):
        events, _ = _parse_chunks([raw[:cut], raw[cut:]])
        assert events == [SSEEvent(data=char)], cut


def test_invalid_utf8_byte_becomes_replacement_character() -> None:
    assert parse_all(b"data: a\xffb\n\n") == [SSEEvent(data="a\ufffdb")]


def test_truncated_utf8_sequence_becomes_one_replacement_character() -> None:
    assert parse_all(b"data: \xe2\x82\n\n") == [SSEEvent(data="\ufffd")]


def test_invalid_utf8_in_field_name_makes_the_field_unknown() -> None:
    assert parse_all(b"dat\xe1: x\n\n") == []


# --- end of stream ---------------------------------------------------------------------


def test_incomplete_trailing_block_is_discarded_and_flagged() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\nid: 2\ndata: b\n") == [SSEEvent(data="a")]
    assert parser.close() == []
    assert parser.pending
    assert parser.pending_text == "id: 2\ndata: b\n"


def test_incomplete_trailing_line_is_discarded_and_flagged() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\ndata: b") == [SSEEvent(data="a")]
    assert parser.close() == []
    assert parser.pending
    assert parser.pending_text == "data: b"


def test_truncated_utf8_at_end_of_stream_is_flagged() -> None:
    parser = SSEParser()
    parser.feed(b"data: a\n\n\xe2\x82")
    assert parser.pending
    assert parser.pending_text == ""
    assert parser.close() == []
    assert parser.pending_text == "\ufffd"


def test_complete_stream_leaves_nothing_pending() -> None:
    parser = SSEParser()
    parser.feed(b"data: a\n\n")
    assert parser.close() == []
    assert not parser.pending
    assert parser.pending_text == ""


def test_trailing_blank_lines_leave_nothing_pending() -> None:
    parser = SSEParser()
    parser.feed(b"data: a\n\n\n\r\n")
    parser.close()
    assert not parser.pending


def test_feed_after_close_raises() -> None:
    parser = SSEParser()
    parser.close()
    with pytest.raises(ValueError, match="closed"):
        parser.feed(b"data: x\n\n")


def test_close_twice_is_harmless() -> None:
    parser = SSEParser()
    parser.feed(b"data: x")
    assert parser.close() == []
    assert parser.close() == []


def test_empty_chunk_yields_nothing() -> None:
    assert SSEParser().feed(b"") == []


def test_byte_at_a_time_matches_whole() -> None:
    raw = BOM + b": hi\r\nid: 1\revent: e\ndata: a\r\ndata: \xc3\xa9\r\n\r\nretry: 9\n\n"
    events, _ = _parse_chunks([raw[i : i + 1] for i in range(len(raw))])
    assert events == parse_all(raw)
    assert len(events) == 2


# --- writer ----------------------------------------------------------------------------


def test_encode_data_event() -> None:
    assert encode_event(SSEEvent(data="hi")) == b"data: hi\n\n"


def test_encode_all_fields_in_fixed_order() -> None:
    event = SSEEvent(data="d", event="e", id="i", retry=10, comments=("c1", "c2"))
    assert encode_event(event) == b": c1\n: c2\nevent: e\nid: i\nretry: 10\ndata: d\n\n"


def test_encode_multi_line_data_as_several_data_lines() -> None:
    assert encode_event(SSEEvent(data="a\n\nb\n")) == b"data: a\ndata: \ndata: b\ndata: \n\n"


def test_encode_empty_data() -> None:
    assert encode_event(SSEEvent(data="")) == b"data: \n\n"


def test_encode_empty_id() -> None:
    assert encode_event(SSEEvent(id="")) == b"id: \n\n"


def test_encode_comment_keep_alive() -> None:
    assert encode_event(SSEEvent(comments=("",))) == b": \n\n"


def test_encode_value_with_leading_space_survives_parsing() -> None:
    event = SSEEvent(data=" x", comments=(" c",))
    assert encode_event(event) == b":  c\ndata:  x\n\n"
    assert parse_all(encode_event(event)) == [event]


@pytest.mark.parametrize("eol", ["\n", "\r", "\r\n"], ids=["LF", "CR", "CRLF"])
def test_encode_with_line_ending(eol: str) -> None:
    raw = encode_event(SSEEvent(data="a\nb", id="1"), line_ending=eol)
    assert raw == f"id: 1{eol}data: a{eol}data: b{eol}{eol}".encode()


def test_encode_utf8() -> None:
    assert encode_event(SSEEvent(data="\u00e9")) == b"data: \xc3\xa9\n\n"


def test_encode_events_concatenates_blocks() -> None:
    events = [SSEEvent(data="1"), SSEEvent(comments=("ping",)), SSEEvent(id="2")]
    assert encode_events(events) == b"data: 1\n\n: ping\n\nid: 2\n\n"


def test_encode_events_of_nothing_is_empty() -> None:
    assert encode_events([]) == b""


@pytest.mark.parametrize(
    ("event", "match"),
    [
        (SSEEvent(), "no field"),
        (SSEEvent(data="a\rb"), "data"),
        (SSEEvent(data="a\r\nb"), "data"),
        (SSEEvent(event="a\nb"), "event name"),
        (SSEEvent(event="a\rb"), "event name"),
        (SSEEvent(id="a\nb"), "id"),
        (SSEEvent(id="a\rb"), "id"),
        (SSEEvent(id="a\x00b"), "id"),
        (SSEEvent(comments=("a\nb",)), "comment"),
        (SSEEvent(comments=("ok", "a\rb")), "comment"),
        (SSEEvent(retry=-1), "retry"),
        (SSEEvent(retry=True), "retry"),
        (SSEEvent(data="\ud800"), "UTF-8"),
    ],
    ids=repr,
)
def test_encode_rejects_what_cannot_round_trip(event: SSEEvent, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        encode_event(event)


def test_encode_rejects_unknown_line_ending() -> None:
    with pytest.raises(ValueError, match="line_ending"):
        encode_event(SSEEvent(data="x"), line_ending="\n\n")


# --- properties ------------------------------------------------------------------------

# Characters the format treats specially are drawn often, so that they meet the edge cases.
_SPECIAL = "\n: \ufeff\x00\ufffd"


def _text(exclude: str) -> st.SearchStrategy[str]:
    special = [c for c in _SPECIAL if c not in exclude]
    return st.text(
        st.characters(codec="utf-8", exclude_characters=exclude) | st.sampled_from(special)
    )


_events = st.builds(
    SSEEvent,
    data=st.none() | _text("\r"),
    event=st.none() | _text("\r\n"),
    id=st.none() | _text("\r\n\x00"),
    retry=st.none() | st.integers(min_value=0),
    comments=st.lists(_text("\r\n"), max_size=3).map(tuple),
).filter(lambda e: e != SSEEvent())

# Byte pieces that exercise the parser's edge cases, mixed with arbitrary bytes.
_SYNTAX = [b"\r", b"\n", b"\r\n", b" ", b":", b"data", b"id", b"event", b"retry", b"7", b"\x00"]
_ENCODING = [BOM, b"\xff", b"\xc3", b"\xa9", b"\xe2\x82", b"\xf0\x9f\x98"]  # BOM, bad UTF-8
_piece = st.sampled_from(_SYNTAX) | st.sampled_from(_ENCODING) | st.binary(max_size=8)
_wire = st.lists(_piece).map(b"".join)


@given(events=st.lists(_events), line_ending=st.sampled_from(["\n", "\r\n", "\r"]), data=st.data())
def test_parse_of_write_round_trips_under_any_chunking(
    events: list[SSEEvent], line_ending: str, data: st.DataObject
) -> None:
    raw = encode_events(events, line_ending=line_ending)
    cuts = data.draw(st.lists(st.integers(0, len(raw))), label="cuts")
    note(f"events={events!r} line_ending={line_ending!r} raw={raw!r} cuts={sorted(cuts)!r}")
    parsed, parser = _parse_chunks(_split(raw, cuts))
    assert parsed == events
    assert not parser.pending


@given(events=st.lists(_events))
def test_parser_state_after_round_trip_matches_last_id_and_retry(events: list[SSEEvent]) -> None:
    note(f"events={events!r}")
    _, parser = _parse_chunks([encode_events(events)])
    ids = [e.id for e in events if e.id is not None]
    retries = [e.retry for e in events if e.retry is not None]
    assert parser.last_event_id == (ids[-1] if ids else "")
    assert parser.retry == (retries[-1] if retries else None)


@given(raw=_wire, data=st.data())
def test_parser_never_raises_on_arbitrary_bytes_in_arbitrary_chunks(
    raw: bytes, data: st.DataObject
) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(raw))), label="cuts")
    note(f"raw={raw!r} cuts={sorted(cuts)!r}")
    events, parser = _parse_chunks(_split(raw, cuts))
    assert all(isinstance(e, SSEEvent) for e in events)
    assert isinstance(parser.pending_text, str)


@given(raw=_wire, data=st.data())
def test_chunking_does_not_change_the_result(raw: bytes, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(raw))), label="cuts")
    note(f"raw={raw!r} cuts={sorted(cuts)!r}")
    whole_events, whole = _parse_chunks([raw])
    chunked_events, chunked = _parse_chunks(_split(raw, cuts))
    assert chunked_events == whole_events
    assert chunked.last_event_id == whole.last_event_id
    assert chunked.retry == whole.retry
    assert chunked.pending == whole.pending
    assert chunked.pending_text == whole.pending_text
