"""Streaming's byte framing on hand-written input: SSE, JSON lines and arrays, AWS eventstream, and sniffing which."""

from __future__ import annotations

import asyncio
import json
import struct
import zlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.projects import TESTS

from toolgen.runtime.streams.aggregator import (
    stream_events,
)
from toolgen.runtime.streams.events import (
    Event,
    MessageEnd,
    ReasoningDelta,
    StreamError,
    TextDelta,
)
from toolgen.runtime.streams.framing import (
    EventStreamDecoder,
    Frame,
    FramingError,
    JSONArrayDecoder,
    JSONLinesDecoder,
    SSEDecoder,
    aiter_sse,
    iter_eventstream,
    iter_frames,
    iter_json_lines,
    iter_sse,
    sniff_framing,
)
from toolgen.runtime.wires.canonical import ProviderError, Response

FIXTURES = TESTS / "fixtures" / "streams"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def splits(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def events_of(data: bytes | list[Any], wire: str | None = None) -> list[Event]:
    return list(stream_events(data, wire))


def final(events: list[Event]) -> Response | ProviderError:
    end = events[-1]
    assert isinstance(end, MessageEnd)
    return end.response


def text_of(events: list[Event], kind: type[TextDelta] | type[ReasoningDelta] = TextDelta) -> str:
    return "".join(event.text for event in events if isinstance(event, kind))


def calls_of(response: Response | ProviderError) -> list[tuple[str, str, Any]]:
    assert isinstance(response, Response)
    return [
        (call["id"], call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in response.message.get("tool_calls", [])
    ]


def errors_of(events: list[Event]) -> list[StreamError]:
    return [event for event in events if isinstance(event, StreamError)]


# ---- SSE framing ----


def sse_frames(data: bytes, size: int | None = None) -> list[Frame]:
    return list(iter_sse(splits(data, size) if size else [data]))


def test_sse_fields_comments_and_multiline_data() -> None:
    body = b": comment\nevent: add\ndata: one\ndata:two\ndata\nid: 5\nretry: 10\nunknown: x\n\ndata: {}\n\n"
    assert sse_frames(body) == [Frame("add", b"one\ntwo\n"), Frame(None, b"{}")]


def test_sse_line_endings_cr_lf_crlf_are_all_line_ends() -> None:
    for end in (b"\n", b"\r", b"\r\n"):
        body = b"event: e" + end + b"data: x" + end + end + b"data: y" + end + end
        assert sse_frames(body) == [Frame("e", b"x"), Frame(None, b"y")], end


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_sse_split_anywhere_gives_the_same_frames(size: int) -> None:
    body = "\ufeffdata: Grüße 🌍\r\n\r\nevent: x\r\ndata: 你好\r\n\r\n: c\r\ndata: [DONE]\r\n\r\n".encode()
    assert (
        sse_frames(body, size)
        == sse_frames(body)
        == [
            Frame(None, "Grüße 🌍".encode()),
            Frame("x", "你好".encode()),
            Frame(None, b"[DONE]"),
        ]
    )


def test_sse_split_between_cr_and_lf_is_one_line_end() -> None:
    decoder = SSEDecoder()
    out = decoder.feed(b"data: a\r") + decoder.feed(b"\n\r") + decoder.feed(b"\ndata: b\r\n\r\n") + decoder.close()
    assert out == [Frame(None, b"a"), Frame(None, b"b")]


def test_sse_blank_event_and_empty_data_follow_the_spec() -> None:
    # An event with no data line dispatches nothing; `data:` with no value dispatches an empty payload.
    assert sse_frames(b"event: ping\n\ndata:\n\n") == [Frame(None, b"")]


def test_sse_close_delivers_an_unterminated_last_event() -> None:
    assert sse_frames(b'data: {"a": 1}\n\ndata: {"b"') == [Frame(None, b'{"a": 1}'), Frame(None, b'{"b"')]


def test_sse_async_helper() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for piece in splits(b"data: 1\n\ndata: 2\n\n", 3):
            yield piece

    async def collect() -> list[Frame]:
        return [frame async for frame in aiter_sse(chunks())]

    assert asyncio.run(collect()) == [Frame(None, b"1"), Frame(None, b"2")]


# ---- JSON lines and JSON array framing ----


def test_json_lines_skip_blank_lines_and_accept_crlf() -> None:
    body = b'{"a":1}\r\n\n  \n{"b":"\xc3\xa9"}\n{"c":3}'
    frames = [frame.data.strip() for frame in iter_json_lines(splits(body, 2))]
    assert frames == [b'{"a":1}', b'{"b":"\xc3\xa9"}', b'{"c":3}']


def test_json_array_elements_with_tricky_strings() -> None:
    elements = [{"a": 'x]}{["\\'}, {"b": [1, {"c": "\\\\"}]}, {"d": "é"}]
    body = ("[" + ",\r\n".join(json.dumps(e, ensure_ascii=False, indent=2) for e in elements) + "]").encode()
    for size in (1, 3, 64, len(body)):
        frames = list(iter_frames(splits(body, size), JSONArrayDecoder()))
        assert [json.loads(frame.data) for frame in frames] == elements


def test_json_array_cut_off_element_is_handed_on() -> None:
    decoder = JSONArrayDecoder()
    assert decoder.feed(b'[{"a": 1}, {"b": ') == [Frame(None, b'{"a": 1}')]
    assert decoder.close() == [Frame(None, b'{"b": ')]


# ---- AWS eventstream framing ----


def _header(name: str, value: str) -> bytes:
    raw = value.encode()
    return bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw


def eventstream_message(headers: dict[str, str], payload: bytes, extra_headers: bytes = b"") -> bytes:
    head = b"".join(_header(k, v) for k, v in headers.items()) + extra_headers
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_event(name: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return eventstream_message(headers, json.dumps(payload).encode())


def test_eventstream_frames_with_every_header_type_and_any_split() -> None:
    typed = (
        b"\x01a\x00"  # bool true
        + b"\x01b\x02\x7f"  # byte
        + b"\x01c\x03\x00\x02"  # short
        + b"\x01d\x04\x00\x00\x00\x03"  # int
        + b"\x01e\x05"
        + b"\x00" * 7
        + b"\x04"  # long
        + b"\x01f\x06\x00\x02hi"  # bytes
        + b"\x01g\x08"
        + b"\x00" * 8  # timestamp
        + b"\x01h\x09"
        + b"\x11" * 16  # uuid
    )
    one = eventstream_message({":event-type": "messageStart", ":message-type": "event"}, b'{"role":"assistant"}', typed)
    two = eventstream_message(
        {":exception-type": "throttlingException", ":message-type": "exception"}, b'{"message":"slow down"}'
    )
    body = one + two
    for size in (1, 5, 13, len(body)):
        assert list(iter_eventstream(splits(body, size))) == [
            Frame("messageStart", b'{"role":"assistant"}'),
            Frame("throttlingException", b'{"message":"slow down"}', "exception"),
        ]


@pytest.mark.parametrize("where", ["prelude", "message"])
def test_eventstream_bad_crc_is_an_error_keeping_earlier_frames(where: str) -> None:
    good = bedrock_event("messageStart", {"role": "assistant"})
    bad = bytearray(bedrock_event("messageStop", {"stopReason": "end_turn"}))
    bad[9 if where == "prelude" else len(bad) - 1] ^= 0xFF
    decoder = EventStreamDecoder()
    with pytest.raises(FramingError) as info:
        decoder.feed(good + bytes(bad))
    assert [frame.event for frame in info.value.frames] == ["messageStart"]
    assert f"{where} CRC" in str(info.value)


def test_eventstream_truncated_message_is_an_error_at_close() -> None:
    decoder = EventStreamDecoder()
    assert decoder.feed(bedrock_event("messageStart", {"role": "assistant"})[:-3]) == []
    with pytest.raises(FramingError, match="ended inside a message"):
        decoder.close()


def test_sniffing() -> None:
    assert sniff_framing(b"") is None
    assert sniff_framing(b" \r\n") is None
    assert sniff_framing(b"\xef\xbb") is None
    assert sniff_framing(b"\xef\xbb\xbfdata: x") == "sse"
    assert sniff_framing(b"event: x") == "sse"
    assert sniff_framing(b": hi") == "sse"
    assert sniff_framing(b'\n{"a"') == "jsonl"
    assert sniff_framing(b"[{") == "json-array"
    assert sniff_framing(b"\x00\x00\x00\x90") == "eventstream"


def test_json_lines_decoder_close_flushes_the_last_line() -> None:
    decoder = JSONLinesDecoder()
    assert decoder.feed(b'{"a":1}\n{"b"') == [Frame(None, b'{"a":1}')]
    assert decoder.close() == [Frame(None, b'{"b"')]
