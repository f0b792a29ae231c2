"""Known event shapes, the later ones: what each shortcut takes gives exactly what the generic path gives.

Gemini partialArgs entries that begin the next member of an object or array, Responses deltas in OpenAI's key order
(the sequence number first), Anthropic deltas read in place (one-digit block indexes) and by the pattern (more
digits), Bedrock messages whose start (prelude, headers, payload start) was checked before, Ollama lines kept as
their text. The oracle is the one of test_stream_shapes: the same aggregator fed through `Aggregator.feed`, which
never asks a shortcut, read as given and in reads of several events. And no shortcut raises, whatever it is fed.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_stream_shapes import (
    _ANTHROPIC_START,
    _BEDROCK_START,
    _GEMINI_CALL_END,
    _GEMINI_CALL_START,
    _GEMINI_FINISH,
    _LITERALS,
    _RESPONSES_START,
    _anthropic,
    _bedrock_payload,
    _block_delta,
    _edited,
    _gemini,
    _message,
    _ollama,
    _partial,
    _responses,
    _same,
)

from toolgen.runtime.streams import shapes
from toolgen.runtime.streams.aggregator import Aggregator, new_state
from toolgen.runtime.streams.events import MessageEnd, ToolCallDelta

FEW = settings(max_examples=150, deadline=None, database=None)

# ---- Gemini partialArgs: the next member of an object or array ----

# Paths mostly in document order under a few containers, some out of order, some spelled otherwise.
_MEMBER_PATHS = st.one_of(
    st.integers(0, 6).map(lambda n: b"$.notes[%d]" % n),
    st.integers(0, 6).map(lambda n: b"$.notes[%d]" % n),
    st.sampled_from(
        [
            b"$.query",
            b"$.a.b",
            b"$.a.c",
            b"$.a.c",
            b"$.a.d[0]",
            b"$.a.d[1]",
            b"$['a'].e",
            b"$.notes[01]",
            "$.notes[\u0663]".encode(),
            b"$.notes[-1]",
            b"$.notes[]",
            b"$.notes.x",
            b"$.",
            b"$",
            b"",
        ]
    ),
)
_MEMBER_ENTRY = st.builds(
    lambda path, text, more: _partial(path, text, more),
    _MEMBER_PATHS,
    st.one_of(st.text(max_size=5).map(lambda t: json.dumps(t).encode()), _LITERALS),
    st.sampled_from([b"true", b"false", b"false"]),
)


@FEW
@given(st.lists(_MEMBER_ENTRY, min_size=1, max_size=24), st.booleans())
def test_gemini_member_entries_match_the_generic_path(entries: list[bytes], number: bool) -> None:
    reads = [_gemini(b'{"text":"Hello"}'), _gemini(b'{"text":" a"}'), _GEMINI_CALL_START]
    if number:
        # A value that is no string first: the container the next entries go beside is the object's.
        reads.append(
            _gemini(b'{"functionCall":{"partialArgs":[{"jsonPath":"$.n","numberValue":1}],"willContinue":true}}')
        )
    _same([*reads, *entries, _GEMINI_CALL_END, _GEMINI_FINISH], "gemini")


def test_gemini_takes_the_next_items_of_an_array() -> None:
    reads = [_gemini(b'{"text":"Hello"}'), _gemini(b'{"text":" a"}'), _GEMINI_CALL_START]
    reads += [_partial(b"$.notes[%d]" % n, b'"w%d"' % n, b"false") for n in range(6)]
    reads += [_partial(b"$.tag", b'"x"', b"false"), _GEMINI_CALL_END, _GEMINI_FINISH]
    events = _same(reads, "gemini")
    deltas = "".join(event.arguments for event in events if isinstance(event, ToolCallDelta))
    assert json.loads(deltas) == {"notes": [f"w{n}" for n in range(6)], "tag": "x"}
    end = events[-1]
    assert isinstance(end, MessageEnd) and end.complete


def test_gemini_member_entries_are_the_shortcut_s() -> None:
    state = new_state("gemini")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    assert take is not None
    for read in (_gemini(b'{"text":"Hello"}'), _GEMINI_CALL_START, _partial(b"$.notes[0]", b'"a"', b"false")):
        state.feed(None, json.loads(read[6:-4]))
    assert take(_partial(b"$.notes[1]", b'"b"', b"false")) == ToolCallDelta(0, ',"b"')
    assert take(_partial(b"$.notes[3]", b'"d"', b"false")) == ToolCallDelta(0, ',null,"d"')
    assert take(_partial(b"$.notes[3]", b'"again"', b"false")) is None  # a path taken: the generic path judges it
    assert take(_partial(b"$.notes['x']", b'"x"', b"false")) is None  # quoted: the generic path reads it
    assert take(_partial(b"$.label", b'"e"', b"false")) is None  # another container than the last path's


# ---- Responses in OpenAI's key order ----


def _number_first(index: bytes, literal: bytes, number: int, pad: bytes = b',"obfuscation":"aB3"') -> bytes:
    return (
        b'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta",'
        b'"sequence_number":'
        + str(number).encode()
        + b',"item_id":"fc_1","output_index":'
        + index
        + b',"delta":'
        + literal
        + pad
        + b"}\n\n"
    )


_NUMBER_FIRST = st.builds(
    _number_first,
    st.sampled_from([b"0", b"0", b"1", b"01"]),
    _LITERALS,
    st.integers(1, 9),
    st.sampled_from([b',"obfuscation":"aB3"', b"", b',"obfuscation":"a\\"b"']),
)


@FEW
@given(st.data())
def test_responses_in_openai_s_order_match_the_generic_path(data: st.DataObject) -> None:
    done = _responses(
        {"type": "response.function_call_arguments.done", "sequence_number": 9, "output_index": 0, "arguments": "{}"}
    )
    body = data.draw(st.lists(st.one_of(_NUMBER_FIRST, st.just(done)), min_size=1, max_size=12))
    reads = _RESPONSES_START + [_number_first(b"0", b'"{"', 100), _number_first(b"0", b'"\\"a\\""', 101)] + body
    if data.draw(st.booleans()):
        reads = data.draw(_edited(reads))
    _same(reads, "openai-responses")


def test_responses_in_openai_s_order_are_the_shortcut_s() -> None:
    state = new_state("openai-responses")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    for read in _RESPONSES_START:
        state.feed(None, json.loads(read.partition(b"data: ")[2]))
    assert take(_number_first(b"0", b'"{\\"a\\":"', 2)) == ToolCallDelta(0, '{"a":')
    assert take(_number_first(b"0", b'"1}"', 2)) is None  # number 2 seen: the generic path counts it


# ---- Anthropic: one-digit indexes in place, longer ones by the pattern ----


def _tool_start(index: int) -> bytes:
    block = {"type": "tool_use", "id": f"t{index}", "name": "f"}
    return _anthropic("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


_ANTHROPIC_MANY = st.builds(
    _block_delta,
    st.sampled_from([b"1", b"9", b"10", b"12", b"012", b"1 "]),
    st.sampled_from([b"input_json_delta", b"text_delta"]),
    st.one_of(_LITERALS, st.sampled_from([b'"a"}}\n\n', b'"a\\"}}"', b'"\n"', b'"a"b"'])),
)


@FEW
@given(st.lists(_ANTHROPIC_MANY, min_size=1, max_size=12), st.booleans())
def test_anthropic_deltas_of_any_index_match_the_generic_path(body: list[bytes], edited: bool) -> None:
    reads = [*_ANTHROPIC_START, _tool_start(9), _tool_start(10), _tool_start(12), *body]
    if edited:
        reads = [read.replace(b"\n\n", b"\r\n\r\n") if b"12" in read else read for read in reads]
    _same([*reads, _anthropic("message_stop", {"type": "message_stop"})], "anthropic")


# ---- Bedrock: starts checked before ----


def _headers_reordered(event: bytes, payload: bytes) -> bytes:
    """A message whose header block lists its headers in another order (another header block, same meaning)."""
    headers = b""
    for name, value in ((b":message-type", b"event"), (b":event-type", event), (b":content-type", b"application/json")):
        headers += bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
    prelude = struct.pack(">II", 12 + len(headers) + len(payload) + 4, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _bad_prelude(message: bytes) -> bytes:
    """The message with its prelude CRC wrong, and a message CRC that agrees with that wrong prelude."""
    body = message[:8] + struct.pack(">I", zlib.crc32(message[:8]) ^ 1) + message[12:-4]
    return body + struct.pack(">I", zlib.crc32(body))


_BEDROCK_MANY = st.builds(
    lambda index, kind, literal, pad, how: (
        how(_message(b"contentBlockDelta", _bedrock_payload(index, kind, literal, pad)))
        if how is _bad_prelude
        else how(b"contentBlockDelta", _bedrock_payload(index, kind, literal, pad))
    ),
    st.sampled_from([b"1", b"1", b"0", b"10", b"3"]),
    st.sampled_from([b"toolUse", b"toolUse", b"text"]),
    st.one_of(st.sampled_from([b'"ab"', b'"abc"', b'"a\\"b"', b'""']), _LITERALS),
    st.sampled_from([b',"p":"ab"', b',"p":"abcdef"', b"", b',"p":"a\\"b"', b',"q":"x"']),
    st.sampled_from([_message, _message, _message, _headers_reordered, _bad_prelude]),
)


@FEW
@given(st.lists(_BEDROCK_MANY, min_size=1, max_size=16))
def test_bedrock_messages_of_starts_seen_before_match_the_generic_path(body: list[bytes]) -> None:
    start = _message(b"contentBlockStart", b'{"contentBlockIndex":10,"start":{"toolUse":{"toolUseId":"t","name":"g"}}}')
    reads = [*_BEDROCK_START, start, *body, *body]
    _same([*reads, _message(b"messageStop", b'{"stopReason":"tool_use"}')], "bedrock-converse")


def test_bedrock_checks_the_prelude_of_a_start_seen_before() -> None:
    aggregator = Aggregator("bedrock-converse")
    for read in _BEDROCK_START:
        aggregator.feed(read)
    take = shapes.shortcut_for(aggregator._state, aggregator._decoder, "eventstream")  # type: ignore[arg-type]
    assert take is not None
    good = _message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"abc"', b',"p":"ab"'))
    assert take(good) == ToolCallDelta(0, "abc")
    assert take(good) == ToolCallDelta(0, "abc")  # its start kept: the same again
    assert take(_bad_prelude(good)) is None
    assert take(good[:-1] + bytes([good[-1] ^ 1])) is None  # the message CRC
    longer = _message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"abcd"', b',"p":"ab"'))
    assert take(longer) == ToolCallDelta(0, "abcd")  # a new length after a start checked before


# ---- Ollama: lines kept as their text ----

_OLLAMA_LINE = st.builds(
    _ollama,
    st.one_of(_LITERALS, st.sampled_from([b'"a"', b'"b"', b'"\\u0061"'])),
    st.sampled_from([b"t1", b"t2", b"t3", b"t4"]),
)


@FEW
@given(st.lists(_OLLAMA_LINE, min_size=1, max_size=16), st.booleans())
def test_ollama_lines_kept_as_text_match_the_generic_path(body: list[bytes], again: bool) -> None:
    reads = [_ollama(b'"Hi"', b"t0"), _ollama(b'"a"', b"w1"), _ollama(b'"b"', b"w2"), *body]
    if again:
        reads += body  # every line sent again: a repeat where it is the very line its stamp holds
    _same([*reads, _ollama(b'""', b"end", b"true")], "ollama")


def test_ollama_keeps_a_plain_line_as_its_text() -> None:
    state = new_state("ollama")
    take = shapes.shortcut_for(state, None, "jsonl")  # type: ignore[arg-type]
    state.feed(None, json.loads(_ollama(b'"Hi"', b"t1")))
    line = _ollama(b'" there"', b"t2")
    assert take(line) is not None
    assert state.lines["t2"] == line
    assert take(line) is None  # the same line again: the generic path counts it
    state.feed(None, json.loads(line))
    assert state.duplicates == 1


# ---- Whatever a shortcut is fed, it does not raise ----


def _takers() -> list[tuple[Any, list[bytes]]]:
    """Each wire's shortcut, its stream begun, and reads of its shapes to mangle."""
    found = []
    for wire, start, reads in (
        ("anthropic", _ANTHROPIC_START, [_block_delta(b"1", b"input_json_delta", b'"a\\"b"')]),
        ("openai-responses", _RESPONSES_START, [_number_first(b"0", b'"x"', 2)]),
        (
            "gemini",
            [_gemini(b'{"text":"Hello"}'), _GEMINI_CALL_START, _partial(b"$.notes[0]", b'"a"')],
            [_partial(b"$.notes[1]", b'"b"'), _gemini(b'{"text":"x"}')],
        ),
        ("ollama", [_ollama(b'"Hi"', b"t1")], [_ollama(b'"x"', b"t2")]),
        (
            "bedrock-converse",
            _BEDROCK_START,
            [_message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"a"', b',"p":"ab"'))],
        ),
    ):
        aggregator = Aggregator(wire)
        for read in start:
            aggregator.feed(read)
        framing = {"ollama": "jsonl", "bedrock-converse": "eventstream"}.get(wire, "sse")
        take = shapes.shortcut_for(aggregator._state, aggregator._decoder, framing)  # type: ignore[arg-type]
        assert take is not None, wire
        found.append((take, reads))
    return found


@FEW
@given(st.data())
def test_no_shortcut_raises(data: st.DataObject) -> None:
    for take, reads in _takers():
        read = data.draw(st.sampled_from(reads))
        cut = data.draw(st.integers(0, len(read)))
        at = data.draw(st.integers(0, len(read)))
        mangled = data.draw(
            st.sampled_from(
                [
                    read[:cut],
                    read[cut:],
                    read[:at] + data.draw(st.binary(max_size=4)) + read[at:],
                    read[:at] + read[at + 1 :],
                    read + read,
                    b"",
                ]
            )
        )
        take(mangled)  # an event, TAKEN or None: never an exception
