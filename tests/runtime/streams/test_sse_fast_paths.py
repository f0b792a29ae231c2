"""The SSE decoder's fast paths (one whole event a read, LF-only or CRLF-only text) frame as the line-by-line rules do."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.runtime import stream_events
from toolgen.runtime.streams.framing import Frame, SSEDecoder

# Names and data with the characters that matter to framing: colons, spaces, CR and LF, a BOM's bytes.
_TEXT = st.text(alphabet=st.sampled_from(list('ab: {}"\r\n') + ["é", "\ufeff"]), max_size=12)
_END = st.sampled_from([b"\n", b"\r\n", b"\r"])


def _event(name: str | None, data: str, end: bytes, space: bool) -> bytes:
    head = b"" if name is None else b"event:" + (b" " if space else b"") + name.encode() + end
    return head + b"data:" + (b" " if space else b"") + data.encode() + end + end


def _one_byte_at_a_time(body: bytes) -> list[Frame]:
    decoder = SSEDecoder()
    frames = [frame for i in range(len(body)) for frame in decoder.feed(body[i : i + 1])]
    return frames + decoder.close()


def _as_read(reads: list[bytes]) -> tuple[list[Frame], list[str | None]]:
    decoder = SSEDecoder()
    frames: list[Frame] = []
    names: list[str | None] = []
    for read in reads:
        data = decoder.simple(read)
        if data is not None:
            frames.append(Frame(decoder.event, data))
            names.append(decoder.event)
        else:
            frames += decoder.feed(read)
    return frames + decoder.close(), names


@given(st.lists(st.tuples(st.none() | _TEXT, _TEXT, _END, st.booleans()), min_size=1, max_size=6))
def test_events_read_whole_frame_as_byte_by_byte(events: list[tuple[str | None, str, bytes, bool]]) -> None:
    reads = [_event(*event) for event in events]
    body = b"".join(reads)
    expected = _one_byte_at_a_time(body)
    got, _ = _as_read(reads)
    assert got == expected
    decoder = SSEDecoder()
    assert decoder.feed(body) + decoder.close() == expected


@given(st.lists(st.tuples(st.none() | _TEXT, _TEXT, st.booleans()), min_size=1, max_size=6), _END, st.integers(1, 64))
def test_a_body_of_one_line_end_in_any_reads_frames_as_byte_by_byte(
    events: list[tuple[str | None, str, bool]], end: bytes, size: int
) -> None:
    body = b"".join(_event(name, data, end, space) for name, data, space in events)
    reads = [body[i : i + size] for i in range(0, len(body), size)]
    got, _ = _as_read(reads)
    assert got == _one_byte_at_a_time(body)


def test_the_usual_reads_take_the_fast_path_with_their_event_name() -> None:
    reads = [
        b'event: content_block_delta\ndata: {"a":1}\n\n',
        b'data: {"b":2}\r\n\r\n',
        b'event: message_stop\r\ndata: {"c":3}\r\n\r\n',
        b"event: \ndata: \n\n",
    ]
    frames, names = _as_read(reads)
    assert names == ["content_block_delta", None, "message_stop", ""]
    assert [frame.data for frame in frames] == [b'{"a":1}', b'{"b":2}', b'{"c":3}', b""]
    for odd in (b"event: a\rdata: x\n\n", b"event: a\ndata: x\r\n\r\n", b"event: a\n\n\n", b"data: a\nb\n\n"):
        assert SSEDecoder().simple(odd) is None, odd


# Payloads a stream state takes: a text delta each, with the line ends and spaces framing must not misread.
_PAYLOAD = st.sampled_from(['{"choices":[{"index":0,"delta":{"content":"x"}}]}', '{"choices":[],\r"id":"a"}', "[DONE]"])


# The first example pays the stream modules' import: no deadline (a machine under load misses it).
@settings(deadline=None)
@given(st.lists(st.tuples(st.none() | st.sampled_from(["", "message"]), _PAYLOAD, _END, st.booleans()), max_size=6))
def test_the_stream_loop_reads_whole_events_as_one_byte_reads(
    events: list[tuple[str | None, str, bytes, bool]],
) -> None:
    """Aggregator.stream checks data-only reads inline, before the decoder: a read it takes must give the events
    the same body gives one byte at a time, whatever its line ends."""
    reads = [_event(*event) for event in events]
    body = b"".join(reads)
    whole = list(stream_events(reads, "openai-chat"))
    bytewise = list(stream_events([body[i : i + 1] for i in range(len(body))], "openai-chat"))
    assert whole == bytewise
