"""The incremental SSE decoder: framing, UTF-8 across chunks, comments, bounds."""

from __future__ import annotations

import pytest

from melgui.core.transports.http.sse import EventTooLarge, SSEComment, SSEDecoder, SSEEvent, SSEItem


def decode(chunks: list[bytes], limit: int = 1 << 20) -> list[SSEItem]:
    decoder = SSEDecoder(limit)
    items: list[SSEItem] = []
    for chunk in chunks:
        items.extend(decoder.feed(chunk))
    return items + decoder.close()


def bytewise(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


BODY = (
    'event: delta\r\ndata: {"text": "héllo ✓ 😀"}\r\n\r\n'
    ": keep-alive\n\n"
    "data: line one\ndata: line two\n\n"
    "event: done\rdata: {}\r\r"
).encode()

EXPECTED: list[SSEItem] = [
    SSEEvent("delta", '{"text": "héllo ✓ 😀"}'),
    SSEComment("keep-alive"),
    SSEEvent("", "line one\nline two"),
    SSEEvent("done", "{}"),
]


def test_mixed_framing_in_one_chunk() -> None:
    assert decode([BODY]) == EXPECTED


def test_every_split_point_gives_the_same_events() -> None:
    for cut in range(1, len(BODY)):
        assert decode([BODY[:cut], BODY[cut:]]) == EXPECTED, cut


def test_byte_at_a_time_splits_utf8_characters_and_crlf() -> None:
    assert decode(bytewise(BODY)) == EXPECTED


def test_cr_at_chunk_end_then_lf_is_one_line_break() -> None:
    items = decode([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"])
    assert items == [SSEEvent("", "a\nb")]


def test_lone_cr_line_endings() -> None:
    assert decode([b"data: a\r\rdata: b\r\r"]) == [SSEEvent("", "a"), SSEEvent("", "b")]


def test_field_parsing_details() -> None:
    body = b"data:no-space\nid: 7\nretry: 300\nunknown: x\ndata\n\n"
    assert decode([body]) == [SSEEvent("", "no-space\n", id="7", retry=300)]


def test_byte_order_mark_is_ignored() -> None:
    assert decode([b"\xef\xbb", b"\xbfdata: x\n\n"]) == [SSEEvent("", "x")]


def test_event_with_name_but_no_data_is_kept() -> None:
    assert decode([b"event: done\n\n"]) == [SSEEvent("done", "")]


def test_blank_lines_alone_dispatch_nothing() -> None:
    assert decode([b"\n\n\r\n"]) == []


def test_body_ending_without_blank_line_keeps_the_last_event() -> None:
    assert decode([b"data: [DONE]"]) == [SSEEvent("", "[DONE]")]
    assert decode([b"event: delta\ndata: {}\n"]) == [SSEEvent("delta", "{}")]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode([b"data: \xff\xfe\n\n"]) == [SSEEvent("", "\ufffd\ufffd")]


def test_event_over_the_limit_is_an_error_and_the_decoder_lets_go() -> None:
    decoder = SSEDecoder(max_event_bytes=1024)
    decoder.feed(b"data: " + b"x" * 600 + b"\n")
    with pytest.raises(EventTooLarge, match="larger than 1 KB"):
        decoder.feed(b"data: " + b"y" * 600 + b"\n")
    assert decoder.feed(b"data: small\n\n") == [SSEEvent("", "small")]


def test_endless_line_without_newline_is_bounded() -> None:
    decoder = SSEDecoder(max_event_bytes=4096)
    with pytest.raises(EventTooLarge):
        for _ in range(100):
            decoder.feed(b"z" * 100)
    assert decoder.close() == []


def test_many_small_events_never_accumulate() -> None:
    decoder = SSEDecoder(max_event_bytes=64)
    for number in range(1000):
        assert decoder.feed(f"data: {number}\n\n".encode()) == [SSEEvent("", str(number))]


def test_event_just_under_the_limit_passes() -> None:
    payload = b"x" * 1000
    items = decode([b"data: ", payload[:500], payload[500:], b"\n\n"], limit=1006)
    assert items == [SSEEvent("", "x" * 1000)]


def test_wire_text_is_cut_for_huge_events() -> None:
    event = SSEEvent("delta", "a" * 100)
    assert event.wire_text() == "event: delta\ndata: " + "a" * 100
    assert event.wire_text(limit=10).endswith("… (90 more characters)")
    assert SSEComment("ping").wire_text() == ":ping"
