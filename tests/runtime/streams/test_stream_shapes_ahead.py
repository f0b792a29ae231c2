"""Known event shapes read ahead: a delta like the one taken before, checked by comparison, is what the generic path
makes of it.

Responses: once a delta in OpenAI's key order is taken, the next delta of its call (the sequence number one more)
is known up to its string. Bedrock: a message of a length checked before is known up to its string, and after it
when its padding is the same. Runs of such deltas, with the reads that break a run (a number skipped or sent again,
another item at the index, a call closed, another padding, a wrong CRC, a bad prelude, hostile edits), go through
the shortcut and through `Aggregator.feed` (which never asks it), as read and in reads of several events; the two
must give the same events.
"""

from __future__ import annotations

import json
from inspect import getclosurevars
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_stream_shapes import (
    _BEDROCK_START,
    _EDITS,
    _LITERALS,
    _RESPONSES_START,
    _bedrock_payload,
    _message,
    _responses,
    _same,
)
from test_stream_shapes_more import _bad_prelude, _headers_reordered, _number_first

from toolgen.runtime.streams import shapes
from toolgen.runtime.streams.aggregator import Aggregator, new_state
from toolgen.runtime.streams.events import TextDelta, ToolCallDelta

FEW = settings(max_examples=300, deadline=None, database=None)

# ---- Responses: the next delta of a call ----

_PADS = [b',"obfuscation":"aB3"', b"", b',"obfuscation":"a\\"b"', b',"obfuscation":"aB3c"']
# Strings of a few lengths, most valid, some the parser refuses, some with what looks like the object's end.
_STRINGS = st.one_of(
    _LITERALS,
    st.sampled_from([b'"ab"', b'"a\\"b"', b'""', b'"\\u00e9"', b'"a"}\n\n"', b'"a","obfuscation":"x"', b'"a\\"']),
)


@st.composite
def _responses_run(draw: st.DrawFn) -> list[bytes]:
    """A call's deltas numbered one after the other, broken here and there."""
    pad = draw(st.sampled_from(_PADS))
    reads: list[bytes] = []
    number = 2
    for _ in range(draw(st.integers(1, 16))):
        step = draw(
            st.sampled_from(["delta"] * 6 + ["skip", "again", "same", "pad", "index", "done", "item", "text", "edit"])
        )
        if step == "pad":
            pad = draw(st.sampled_from(_PADS))
        if step == "skip":
            number += 1
        if step == "again" and reads:
            reads.append(reads[draw(st.integers(0, len(reads) - 1))])
            continue
        if step == "same":
            # The number of the read before: a repeat of it, or another event under its number.
            number -= 1
        added = {"type": "response.output_item.added", "sequence_number": number, "output_index": 0}
        if step == "done":
            value = {"type": "response.function_call_arguments.done", "sequence_number": number, "output_index": 0}
            reads.append(_responses({**value, "arguments": "{}"}))
        elif step == "item":
            item = {"id": f"fc_{number}", "type": "function_call", "call_id": f"c{number}", "name": "g"}
            reads.append(_responses({**added, "item": {**item, "arguments": ""}}))
        elif step == "text":
            # Another item at the index: a message, which takes no argument delta.
            reads.append(_responses({**added, "item": {"id": f"msg_{number}", "type": "message", "content": []}}))
        else:
            index = b"1" if step == "index" else b"0"
            read = _number_first(index, draw(_STRINGS), number, pad)
            if step == "edit":
                old, new = draw(st.sampled_from(_EDITS))
                read = read.replace(old, new, 1)
            reads.append(read)
        number += 1
    return reads


@FEW
@given(_responses_run())
def test_responses_deltas_read_ahead_match_the_generic_path(body: list[bytes]) -> None:
    end = {"type": "response.completed", "sequence_number": 999, "response": {"id": "resp_1", "output": []}}
    _same([*_RESPONSES_START, *body, _responses(end)], "openai-responses")


def test_responses_knows_the_next_delta_of_a_call() -> None:
    state = new_state("openai-responses")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    for read in _RESPONSES_START:
        state.feed(None, json.loads(read.partition(b"data: ")[2]))
    assert take(_number_first(b"0", b'"{"', 2, b"")) == ToolCallDelta(0, "{")
    ahead = getclosurevars(take).nonlocals["ahead"]
    assert _number_first(b"0", b'"\\"a\\""', 3, b"").startswith(ahead)
    assert ahead.endswith(b'"sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"')
    assert take(_number_first(b"0", b'"\\"a\\""', 3, b"")) == ToolCallDelta(0, '"a"')
    assert take(_number_first(b"0", b'"b', 4, b"")) is None  # no whole string: the generic path faults it
    assert take(_number_first(b"0", b'"b","x":"c"', 4, b"")) is None
    assert take(_number_first(b"0", b'"b"', 4, b',"obfuscation":"p"')) == ToolCallDelta(0, "b")  # now padded
    assert take(_number_first(b"0", b'"c"', 5, b',"obfuscation":"q"')) == ToolCallDelta(0, "c")
    assert take(_number_first(b"0", b'"d"', 5, b',"obfuscation":"r"')) is None  # number 5 again
    assert set(state.sequence) == {0, 1, 2, 3, 4, 5}


# ---- Bedrock: a message of a length checked before ----

_BEDROCK_PADS = st.sampled_from([b',"p":"ab"', b',"p":"abc"', b',"p":"a"', b"", b',"p":"a\\"b"', b',"q":"x"'])
# Pieces of a string's text: plain, escapes, two-byte characters, a lone backslash or quote (no string then).
_BEDROCK_PIECES = st.sampled_from([b"x", b"y", b'\\"', b"\\n", b"\xc3\xa9", b"\\", b'"', b"\n"])


@st.composite
def _bedrock_text(draw: st.DrawFn, pad: bytes) -> bytes:
    """A string literal as long as its padding leaves of a fixed length, so that messages of one length often
    differ in their string and their padding; sometimes any literal."""
    if draw(st.integers(0, 4)) == 0:
        return draw(_LITERALS)
    text = b"".join(draw(st.lists(_BEDROCK_PIECES, min_size=12, max_size=12)))
    return b'"' + text[: max(0, 16 - len(pad))] + b'"'


def _corrupt(message: bytes) -> bytes:
    return message[:-1] + bytes([message[-1] ^ 1])


@st.composite
def _bedrock_delta(draw: st.DrawFn) -> bytes:
    index = draw(st.sampled_from([b"1", b"1", b"1", b"0", b"2", b"10"]))
    kind = draw(st.sampled_from([b"toolUse", b"toolUse", b"text"]))
    pad = draw(_BEDROCK_PADS)
    payload = _bedrock_payload(index, kind, draw(_bedrock_text(pad)), pad)
    how = draw(st.sampled_from([_message] * 12 + [_headers_reordered, _bad_prelude, _corrupt]))
    if how in (_bad_prelude, _corrupt):
        return how(_message(b"contentBlockDelta", payload))
    return how(b"contentBlockDelta", payload)


_BEDROCK_DELTA = _bedrock_delta()
_BEDROCK_OTHER = st.sampled_from(
    [
        _message(b"contentBlockStop", b'{"contentBlockIndex":1}'),
        _message(b"contentBlockStart", b'{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t2","name":"g"}}}'),
        _message(b"messageStop", b'{"stopReason":"tool_use"}'),
    ]
)


@FEW
@given(st.lists(st.one_of(_BEDROCK_DELTA, _BEDROCK_DELTA, _BEDROCK_DELTA, _BEDROCK_OTHER), min_size=1, max_size=24))
def test_bedrock_messages_of_lengths_checked_before_match_the_generic_path(body: list[bytes]) -> None:
    start = _message(b"contentBlockStart", b'{"contentBlockIndex":10,"start":{"toolUse":{"toolUseId":"t","name":"g"}}}')
    stop = _message(b"messageStop", b'{"stopReason":"tool_use"}')
    _same([*_BEDROCK_START, start, *body, *body, stop], "bedrock-converse")


def _taker() -> tuple[Any, dict[int, Any]]:
    aggregator = Aggregator("bedrock-converse")
    for read in _BEDROCK_START:
        aggregator.feed(read)
    take = shapes.shortcut_for(aggregator._state, aggregator._decoder, "eventstream")  # type: ignore[arg-type]
    assert take is not None
    return take, getclosurevars(take).nonlocals["known"]


def test_bedrock_keeps_a_message_by_its_length() -> None:
    take, known = _taker()
    good = _message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"ab"', b',"p":"ab"'))
    assert take(good) == ToolCallDelta(0, "ab")
    assert len(good) in known
    same = _message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"cd"', b',"p":"ab"'))
    assert take(same) == ToolCallDelta(0, "cd")  # its start and end kept: only its string and CRC read
    assert take(_corrupt(same)) is None
    assert take(_bad_prelude(same)) is None
    other_pad = _message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"a"', b',"p":"abc"'))
    assert len(other_pad) == len(good)
    assert take(other_pad) == ToolCallDelta(0, "a")  # another padding: read by the pattern, then kept
    assert take(_corrupt(other_pad)) is None
    broken = _message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"a\\"', b',"p":"ab"'))
    assert len(broken) == len(good)
    assert take(broken) is None  # no whole string: the generic path faults it
    text = _message(b"contentBlockDelta", _bedrock_payload(b"0", b"text", b'"abcdefghijklmno"', b',"p":"ab"'))
    assert len(text) == len(good)
    assert take(text) == TextDelta("abcdefghijklmno")  # another start of that length: checked whole, then kept
    assert take(good) == ToolCallDelta(0, "ab")
