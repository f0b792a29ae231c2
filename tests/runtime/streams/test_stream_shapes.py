"""Known event shapes (runtime/streams/shapes.py): a read a shortcut takes gives exactly what the generic path gives.

The oracle is the same aggregator fed read by read through `Aggregator.feed`, which never asks a shortcut: for
random strings (escapes, surrogates, control characters, invalid UTF-8), indexes and repeat marks, and for hostile
reads (whitespace, key order, extra and repeated keys, CRLF, two events in one read, huge indexes), both give the
same events, the same final message and the same repeat count, read as given and in network reads of several
events each. Each wire with shapes has both tests: the property, and a direct look at what its shortcut takes and
leaves.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.runtime.streams import shapes
from toolgen.runtime.streams.aggregator import Aggregator, new_state, stream_events
from toolgen.runtime.streams.events import Event, TextDelta, ToolCallDelta

# Pieces of a JSON string literal's text: most are valid, some make the literal one the parser rejects.
_PIECES = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters='"\\'), max_size=6).map(str.encode),
    st.sampled_from([b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t", b"\\u00e9", b"\\u0041"]),
    st.sampled_from([b"\\ud83d\\ude00", b"\\ud800", b"\\udc00", b"\\uDBFF\\uDFFF", b"\\u12", b"\\x", b"\\'"]),
    st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82", b"\x00", b"\x1f", b"\x7f", b"\t", b"\n"]),
    st.text(max_size=4).map(lambda text: json.dumps(text)[1:-1].encode()),
)
_LITERALS = st.lists(st.one_of(_PIECES, st.text(max_size=5).map(str.encode)), max_size=5).map(
    lambda pieces: b'"' + b"".join(pieces) + b'"'
)
_BAD_INDEXES = st.sampled_from([b"2", b"7", b"01", b"-1", b"1.0", b"1e0", b" 1", b"99999999999999999999"])
# Mostly the indexes the streams below open, so that most reads are a shortcut's to take.
_INDEXES = st.one_of(st.sampled_from([b"0", b"1"]), st.sampled_from([b"0", b"1"]), _BAD_INDEXES)
_MARKS = st.sampled_from([b"a", b"b", b"pad1", b"", b"\\u0061", b"\xc3\xa9"])

# Hostile edits of one read: each makes the text other than a shortcut's shape, or its meaning other than it seems.
_EDITS: tuple[tuple[bytes, bytes], ...] = (
    (b'":', b'": '),
    (b',"', b', "'),
    (b"\n\n", b"\r\n\r\n"),
    (b"\n\n", b"\n"),
    (b"\n\n", b"\n\n\n"),
    (b"data: ", b"data:"),
    (b'{"', b'{"x":1,"'),
    (b'"index":', b'"index":0,"index":'),
    (b'"delta":', b'"delta":"x","delta":'),
    (b'"type":"', b'"type":"x","type":"'),
    (b'"obfuscation":', b'"obfuscation":"z","obfuscation":'),
    (b'"content":', b'"cont\\u0065nt":'),
    (b'"usage":null', b'"usage":{"total_tokens":1}'),
    (b'"finish_reason":null', b'"finish_reason":"stop"'),
    (b'"logprobs":null', b'"logprobs":{"content":[]}'),
    (b'"id":"', b'"id":"\xc3\xa9'),
    (b"}\n", b" }\n"),
    (b"event: ", b"event:"),
    (b"_delta\n", b"_delta\r\n"),
)

FEW = settings(max_examples=150, deadline=None, database=None)


def _generic(reads: list[bytes], wire: str) -> list[Event]:
    """The reference: every read through Aggregator.feed (framing, parse, the state's feed), then close."""
    aggregator = Aggregator(wire)
    events = [event for read in reads for event in aggregator.feed(read)]
    return events + aggregator.close()


# Network reads of the same body at these sizes: several events a read, events split across reads.
_READ_SIZES = (97, 700, 4096)


def _same(reads: list[bytes], wire: str) -> list[Event]:
    fast = list(stream_events(reads, wire))
    assert fast == _generic(reads, wire)
    body = b"".join(reads)
    for size in _READ_SIZES:
        # A read of several events is cut into its events, each offered to the shortcut (Aggregator._several).
        regrouped = [body[at : at + size] for at in range(0, len(body), size)]
        assert list(stream_events(regrouped, wire)) == _generic(regrouped, wire), size
    return fast


@st.composite
def _edited(draw: st.DrawFn, reads: list[bytes]) -> list[bytes]:
    """Reads with a few hostile edits, maybe two reads joined into one, maybe a read sent again."""
    reads = list(reads)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(reads) - 1))
        old, new = draw(st.sampled_from(_EDITS))
        reads[at] = reads[at].replace(old, new, 1)
    if len(reads) > 1 and draw(st.booleans()):
        at = draw(st.integers(0, len(reads) - 2))
        reads[at : at + 2] = [reads[at] + reads[at + 1]]
    for _ in range(draw(st.integers(0, 2))):
        # A read sent again later (a replay): the repeat checks must see what the shortcut took.
        at = draw(st.integers(0, len(reads) - 1))
        reads.insert(draw(st.integers(at + 1, len(reads))), reads[at])
    return reads


# ---- OpenAI chat ----


def _chat(delta: bytes, mark: bytes | None, finish: bytes = b"null") -> bytes:
    pad = b"" if mark is None else b',"obfuscation":"' + mark + b'"'
    return (
        b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1754432618,"model":"gpt-4o",'
        b'"service_tier":"default","system_fingerprint":"fp_1","usage":null,"choices":[{"index":0,"delta":'
        + delta
        + b',"logprobs":null,"finish_reason":'
        + finish
        + b"}]"
        + pad
        + b"}\n\n"
    )


def _chat_head(slot: int) -> bytes:
    call = {"index": slot, "id": f"call_{slot}", "type": "function", "function": {"name": f"f{slot}", "arguments": ""}}
    return _chat(json.dumps({"tool_calls": [call]}, separators=(",", ":")).encode(), None)


_CHAT_READ = st.one_of(
    st.builds(
        lambda index, literal, mark: _chat(
            b'{"tool_calls":[{"index":' + index + b',"function":{"arguments":' + literal + b"}}]}", mark
        ),
        _INDEXES,
        _LITERALS,
        st.none() | _MARKS,
    ),
    st.builds(lambda literal, mark: _chat(b'{"content":' + literal + b"}", mark), _LITERALS, st.none() | _MARKS),
    st.sampled_from([_chat_head(1), _chat_head(2), _chat(b"{}", b"fin", b'"tool_calls"'), b"data: [DONE]\n\n"]),
)


@FEW
@given(st.data())
def test_openai_chat_shortcut_matches_the_generic_path(data: st.DataObject) -> None:
    # Two reads more than the head, so that the shortcut (made after two payloads) sees the drawn ones.
    start = [_chat(b'{"role":"assistant","content":""}', b"p0"), _chat_head(0)]
    start += [_chat(b'{"content":"a"}', b"w1"), _chat(b'{"content":"b"}', b"w2")]
    body = data.draw(st.lists(_CHAT_READ, min_size=1, max_size=12))
    reads = data.draw(_edited(start + body)) if data.draw(st.booleans()) else start + body
    _same(reads + [b"data: [DONE]\n\n"], "openai-chat")


def test_openai_chat_shortcut_takes_its_shapes() -> None:
    state = new_state("openai-chat")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    head = _chat(b'{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\""}}]}', b"x")
    assert take(head) is None  # no choice yet: the head takes the generic path
    state.feed(None, json.loads(_chat(b'{"role":"assistant","content":""}', b"p")[6:-2]))
    state.feed(None, json.loads(_chat_head(0)[6:-2]))
    assert take(head) == ToolCallDelta(0, '{"a"')
    assert take(_chat(b'{"content":"caf\xc3\xa9"}', b"y")) == TextDelta("café")
    assert take(_chat(b'{"content":""}', b"z")) is shapes.TAKEN
    assert take(_chat(b'{"content":"again"}', b"y")) is None  # a pad seen before: the generic path compares
    assert take(_chat(b'{"content":"\\ud800"}', b"w")) is None  # a lone surrogate the parser rejects
    assert take(_chat(b'{"tool_calls":[{"index":5,"function":{"arguments":"x"}}]}', b"v")) is None  # no call 5
    assert state.marks.keys() == {"p", "x", "y", "z"}
    assert state.marks["x"] == head[6:-2]


# ---- Anthropic ----


def _anthropic(name: str, value: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + json.dumps(value, separators=(",", ":")).encode() + b"\n\n"


def _block_delta(index: bytes, kind: bytes, literal: bytes) -> bytes:
    field = b"partial_json" if kind == b"input_json_delta" else b"text"
    return (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
        + index
        + b',"delta":{"type":"'
        + kind
        + b'","'
        + field
        + b'":'
        + literal
        + b"}}\n\n"
    )


_ANTHROPIC_START = [
    _anthropic(
        "message_start", {"type": "message_start", "message": {"id": "msg_1", "model": "claude", "content": []}}
    ),
    _anthropic("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}),
    _anthropic(
        "content_block_start",
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "f"}},
    ),
    _anthropic(
        "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}
    ),
]
_ANTHROPIC_READ = st.one_of(
    st.builds(_block_delta, _INDEXES, st.sampled_from([b"input_json_delta", b"text_delta"]), _LITERALS),
    st.sampled_from(
        [
            _anthropic("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _anthropic("content_block_stop", {"type": "content_block_stop", "index": 1}),
            _anthropic("message_stop", {"type": "message_stop"}),
        ]
    ),
)


@FEW
@given(st.data())
def test_anthropic_shortcut_matches_the_generic_path(data: st.DataObject) -> None:
    body = data.draw(st.lists(_ANTHROPIC_READ, min_size=1, max_size=12))
    reads = _ANTHROPIC_START + body
    if data.draw(st.booleans()):
        reads = data.draw(_edited(reads))
    _same(reads + [_anthropic("message_stop", {"type": "message_stop"})], "anthropic")


def test_anthropic_shortcut_takes_its_shapes() -> None:
    arguments = _block_delta(b"1", b"input_json_delta", b'"{\\"q\\":1}"')
    text, stray = _block_delta(b"0", b"text_delta", b'"hi"'), _block_delta(b"3", b"text_delta", b'"no block"')
    state = new_state("anthropic")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    assert take(arguments) is None  # block 1 not started yet
    for read in _ANTHROPIC_START:
        state.feed(None, json.loads(read.partition(b"data: ")[2]))
    assert take(arguments) == ToolCallDelta(0, '{"q":1}')
    assert take(text) == TextDelta("hi")
    assert take(stray) is None
    assert _same([*_ANTHROPIC_START, arguments, text, stray], "anthropic")[-1].complete is False  # type: ignore[union-attr]


# ---- OpenAI Responses ----


def _responses(value: dict[str, Any]) -> bytes:
    return (
        b"event: " + value["type"].encode() + b"\ndata: " + json.dumps(value, separators=(",", ":")).encode() + b"\n\n"
    )


def _arguments_delta(index: bytes, literal: bytes, number: int) -> bytes:
    return (
        b'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta",'
        b'"item_id":"fc_1","output_index":'
        + index
        + b',"delta":'
        + literal
        + b',"sequence_number":'
        + str(number).encode()
        + b"}\n\n"
    )


_RESPONSES_START = [
    _responses({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "model": "gpt"}}),
    _responses(
        {
            "type": "response.output_item.added",
            "sequence_number": 1,
            "output_index": 0,
            "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""},
        }
    ),
]
_RESPONSES_READ = st.one_of(
    st.builds(_arguments_delta, _INDEXES, _LITERALS, st.integers(1, 8)),
    st.builds(
        lambda number: _responses(
            {
                "type": "response.function_call_arguments.done",
                "sequence_number": number,
                "output_index": 0,
                "arguments": "{}",
            }
        ),
        st.integers(1, 8),
    ),
)


@FEW
@given(st.data())
def test_responses_shortcut_matches_the_generic_path(data: st.DataObject) -> None:
    body = data.draw(st.lists(_RESPONSES_READ, min_size=1, max_size=12))
    warm = [_arguments_delta(b"0", b'"{"', 100), _arguments_delta(b"0", b'"\\"a\\""', 101)]
    reads = _RESPONSES_START + warm + body
    if data.draw(st.booleans()):
        reads = data.draw(_edited(reads))
    _same(reads, "openai-responses")


def test_responses_shortcut_takes_its_shapes() -> None:
    state = new_state("openai-responses")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    for read in _RESPONSES_START:
        state.feed(None, json.loads(read.partition(b"data: ")[2]))
    assert take(_arguments_delta(b"0", b'"{\\"a\\":"', 2)) == ToolCallDelta(0, '{"a":')
    assert take(_arguments_delta(b"0", b'"1}"', 2)) is None  # sequence number 2 seen: the generic path counts it
    assert take(_arguments_delta(b"1", b'"x"', 3)) is None  # no item 1
    assert take(_arguments_delta(b"0", b'""', 4)) is None  # number 3 never came: the generic path judges it
    assert take(_arguments_delta(b"0", b'""', 3)) is shapes.TAKEN
    assert set(state.sequence) == {0, 1, 2, 3}


# ---- Gemini ----


def _gemini(
    part: bytes, usage: bytes = b'{"promptTokenCount":9,"totalTokenCount":10}', end: bytes = b"\r\n\r\n"
) -> bytes:
    return (
        b'data: {"candidates":[{"content":{"role":"model","parts":[' + part + b']},"index":0}],'
        b'"modelVersion":"gemini-2.5-flash","usageMetadata":' + usage + b',"responseId":"r1"}' + end
    )


_GEMINI_FINISH = (
    b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],'
    b'"modelVersion":"gemini-2.5-flash","responseId":"r1"}\r\n\r\n'
)


def _partial(path: bytes, value: bytes, more: bytes = b"true", call_more: bytes = b"true") -> bytes:
    """A partialArgs chunk of one string entry (value a JSON literal) for the call candidate 0 streams."""
    entry = b'{"jsonPath":"' + path + b'","stringValue":' + value + b',"willContinue":' + more + b"}"
    return _gemini(b'{"functionCall":{"partialArgs":[' + entry + b'],"willContinue":' + call_more + b"}}")


_GEMINI_CALL_START = _gemini(b'{"functionCall":{"name":"search","willContinue":true}}')
_GEMINI_CALL_END = _gemini(b'{"functionCall":{}}')
# Mostly the path the call's string streams under, so that most entries go on with it.
_GEMINI_PATHS = st.one_of(
    st.just(b"$.query"), st.sampled_from([b"$.query", b"$.notes[0]", b"$.a.b", b"$['q']", b"$['query']", b"", b"$"])
)
_GEMINI_PARTIAL = st.builds(
    _partial,
    _GEMINI_PATHS,
    _LITERALS,
    st.sampled_from([b"true", b"true", b"true", b"false"]),
    st.sampled_from([b"true", b"true", b"true", b"true", b"true", b"false"]),
)
_GEMINI_READ = st.one_of(
    _GEMINI_PARTIAL,
    _GEMINI_PARTIAL,
    _GEMINI_PARTIAL,
    st.sampled_from(
        [
            _GEMINI_CALL_START,
            _GEMINI_CALL_END,
            _gemini(b'{"functionCall":{"partialArgs":[{"jsonPath":"$.n","numberValue":1}],"willContinue":true}}'),
        ]
    ),
    st.builds(
        lambda literal, usage, end: _gemini(b'{"text":' + literal + b"}", usage, end),
        _LITERALS,
        st.sampled_from(
            [
                b'{"promptTokenCount":9,"totalTokenCount":10}',
                b'{"promptTokenCount":9,"totalTokenCount":11}',
                b'{"promptTokenCount":09}',
                b'{"a":1,"a":2}',
            ]
        ),
        st.sampled_from([b"\r\n\r\n", b"\n\n", b"\r\n\n"]),
    ),
    st.sampled_from(
        [
            _gemini(b'{"text":"thinking","thought":true}'),
            _gemini(b'{"text":"signed","thoughtSignature":"c2ln"}'),
            _gemini(b'{"functionCall":{"name":"f","args":{"a":1}}}'),
            _GEMINI_FINISH,
        ]
    ),
)


@FEW
@given(st.data())
def test_gemini_shortcut_matches_the_generic_path(data: st.DataObject) -> None:
    reads = [_gemini(b'{"text":"Hello"}'), _gemini(b'{"text":" a"}'), _gemini(b'{"text":" b"}')]
    if data.draw(st.booleans()):
        # A call whose arguments stream as partialArgs entries, opened early so that most entries go on with it.
        reads += [_GEMINI_CALL_START, _partial(b"$.query", b'"a"')]
    reads += data.draw(st.lists(_GEMINI_READ, min_size=1, max_size=12))
    if data.draw(st.booleans()):
        reads = data.draw(_edited(reads))
    _same(reads + [_GEMINI_FINISH], "gemini")


_GEMINI_ENTRY = st.builds(
    lambda path, text, more: _partial(path, json.dumps(text).encode(), more),
    st.one_of(st.just(b"$.query"), st.just(b"$.query"), st.sampled_from([b"$.notes[0]", b"$['query']", b"$.b"])),
    st.text(max_size=6),
    st.sampled_from([b"true", b"true", b"true", b"false"]),
)


@FEW
@given(st.lists(_GEMINI_ENTRY, min_size=1, max_size=20))
def test_gemini_partial_args_shortcut_matches_the_generic_path(entries: list[bytes]) -> None:
    """Mostly valid string entries under one path, closed and reopened, beside other paths: the shortcut's case."""
    reads = [_gemini(b'{"text":"Hello"}'), _gemini(b'{"text":" a"}'), _GEMINI_CALL_START, _partial(b"$.query", b'"a"')]
    _same([*reads, *entries, _GEMINI_CALL_END, _GEMINI_FINISH], "gemini")


def test_gemini_shortcut_takes_its_shapes() -> None:
    state = new_state("gemini")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    read = _gemini(b'{"text":" world"}', b'{"promptTokenCount":9,"totalTokenCount":12}')
    assert take(read) is None  # no text part yet
    state.feed(None, json.loads(_gemini(b'{"text":"Hello"}')[6:-4]))
    assert take(read) == TextDelta(" world")
    assert state.head["usageMetadata"] == {"promptTokenCount": 9, "totalTokenCount": 12}
    assert take(_gemini(b'{"text":""}')) is None  # the empty part a finish carries: the generic path
    assert take(_gemini(b'{"text":"x"}', b'{"a":01}')) is None  # usage the parser rejects
    assert state.candidates[0].parts[-1][1] == ["Hello", " world"]


def test_gemini_shortcut_takes_a_streamed_string_argument_going_on() -> None:
    state = new_state("gemini")
    take = shapes.shortcut_for(state, None, "sse")  # type: ignore[arg-type]
    for read in (_gemini(b'{"text":"Hello"}'), _GEMINI_CALL_START):
        state.feed(None, json.loads(read[6:-4]))
    assert take(_partial(b"$.query", b'"the "')) is None  # the first entry of a path opens it: the generic path
    state.feed(None, json.loads(_partial(b"$.query", b'"the "')[6:-4]))
    assert take(_partial(b"$.query", b'"qu\\"ick"')) == ToolCallDelta(0, 'qu\\"ick')
    assert take(_partial(b"$['query']", b'"x"')) is None  # the same path in other words: parsed on the generic path
    assert take(_partial(b"$.query", b'"\\ud800"')) is None  # a lone surrogate the parser rejects
    assert take(_partial(b"$.query", b'""')) is shapes.TAKEN  # nothing to add: no event
    assert take(_partial(b"$.query", b'" fox"', b"false")) == ToolCallDelta(0, ' fox"')
    assert take(_partial(b"$.query", b'"more"')) is None  # the string was closed
    assert take(_partial(b"$.query", b'"x"', call_more=b"false")) is None  # the call ends: the generic path
    state.feed(None, json.loads(_GEMINI_CALL_END[6:-4]))
    assert state.calls[0].arguments == '{"query":"the qu\\"ick fox"}'


# ---- Ollama ----


def _ollama(literal: bytes, stamp: bytes = b"2025-08-20T13:48:24.316155Z", done: bytes = b"false") -> bytes:
    return (
        b'{"model":"qwen3:8b","created_at":"'
        + stamp
        + b'","message":{"role":"assistant","content":'
        + literal
        + b'},"done":'
        + done
        + b"}\n"
    )


_OLLAMA_READ = st.builds(
    _ollama,
    _LITERALS,
    st.sampled_from([b"2025-08-20T13:48:24.316155Z", b"t2", b"t3"]),
    st.sampled_from([b"false"] * 5 + [b"true"]),
)


@FEW
@given(st.data())
def test_ollama_shortcut_matches_the_generic_path(data: st.DataObject) -> None:
    reads = [_ollama(b'"Hi"'), _ollama(b'"a"', b"w1"), _ollama(b'"b"', b"w2")] + data.draw(
        st.lists(_OLLAMA_READ, min_size=1, max_size=12)
    )
    if data.draw(st.booleans()):
        reads = data.draw(_edited(reads))
    _same(reads + [_ollama(b'""', b"end", b"true")], "ollama")


def test_ollama_shortcut_takes_its_shapes() -> None:
    state = new_state("ollama")
    take = shapes.shortcut_for(state, None, "jsonl")  # type: ignore[arg-type]
    state.feed(None, json.loads(_ollama(b'"Hi"')))
    assert take(_ollama(b'" there"', b"t2")) == TextDelta(" there")
    assert take(_ollama(b'" there"', b"t2")) is None  # the same line again: the generic path counts it
    assert take(_ollama(b'"\\u00e9"', b"t3")) == TextDelta("é")
    assert state.lines["t3"] == json.loads(_ollama(b'"\\u00e9"', b"t3"))


# ---- Bedrock ConverseStream (AWS eventstream) ----


def _message(event: bytes, payload: bytes, corrupt: bool = False) -> bytes:
    headers = b""
    for name, value in ((b":event-type", event), (b":content-type", b"application/json"), (b":message-type", b"event")):
        headers += bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
    prelude = struct.pack(">II", 12 + len(headers) + len(payload) + 4, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + payload
    return message + struct.pack(">I", zlib.crc32(message) ^ (1 if corrupt else 0))


def _bedrock_payload(index: bytes, kind: bytes, literal: bytes, pad: bytes) -> bytes:
    delta = b'{"toolUse":{"input":' + literal + b"}}" if kind == b"toolUse" else b'{"text":' + literal + b"}"
    return b'{"contentBlockIndex":' + index + b',"delta":' + delta + pad + b"}"


_BEDROCK_START = [
    _message(b"messageStart", b'{"role":"assistant"}'),
    _message(b"contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"Hi"}}'),
    _message(b"contentBlockStart", b'{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}'),
]
_BEDROCK_READ = st.one_of(
    st.builds(
        lambda event, payload, corrupt: _message(event, payload, corrupt),
        st.sampled_from([b"contentBlockDelta"] * 4 + [b"contentBlockStop", b"messageStop"]),
        st.builds(
            _bedrock_payload,
            _INDEXES,
            st.sampled_from([b"toolUse", b"text"]),
            _LITERALS,
            st.sampled_from([b"", b',"p":"abcd"', b',"p":"ab","p":"c"', b',"x":1']),
        ),
        st.sampled_from([False] * 6 + [True]),
    ),
    st.sampled_from(
        [
            _message(b"contentBlockStop", b'{"contentBlockIndex":0}'),
            _message(b"contentBlockStop", b'{"contentBlockIndex":1}'),
            _message(b"messageStop", b'{"stopReason":"tool_use"}'),
        ]
    ),
)


@FEW
@given(st.data())
def test_bedrock_shortcut_matches_the_generic_path(data: st.DataObject) -> None:
    reads = _BEDROCK_START + data.draw(st.lists(_BEDROCK_READ, min_size=1, max_size=12))
    if data.draw(st.booleans()) and len(reads) > 1:
        at = data.draw(st.integers(0, len(reads) - 2))
        reads[at : at + 2] = [reads[at] + reads[at + 1]]  # two messages in one read
    _same(reads + [_message(b"messageStop", b'{"stopReason":"tool_use"}')], "bedrock-converse")


def test_bedrock_shortcut_takes_its_shapes() -> None:
    aggregator = Aggregator("bedrock-converse")
    for read in _BEDROCK_START:
        aggregator.feed(read)
    state, decoder = aggregator._state, aggregator._decoder
    take = shapes.shortcut_for(state, decoder, "eventstream")  # type: ignore[arg-type]
    assert take(_message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"{\\"a\\":1}"', b""))) == (
        ToolCallDelta(0, '{"a":1}')
    )
    assert take(_message(b"contentBlockDelta", _bedrock_payload(b"0", b"text", b'" there"', b',"p":"ab"'))) == (
        TextDelta(" there")
    )
    assert take(_message(b"contentBlockDelta", _bedrock_payload(b"1", b"toolUse", b'"x"', b""), True)) is None
    assert take(_message(b"contentBlockStop", _bedrock_payload(b"1", b"toolUse", b'"x"', b""))) is None
    assert take(_message(b"contentBlockDelta", _bedrock_payload(b"2", b"toolUse", b'"x"', b""))) is None


# ---- Reads of several events ----


def test_reads_of_several_events_take_the_shortcut_event_by_event(monkeypatch: Any) -> None:
    """Reads of 4 KiB (a dozen events each, most split across two reads) go to the generic path only for the
    events the shortcut leaves and the start of the last event of each read, not for every event."""
    start = [_chat(b'{"role":"assistant","content":""}', b"p0"), _chat_head(0)]
    fragments = [b'{\\"a\\":\\"'] + [b"x%d" % n for n in range(400)] + [b'\\"}']
    body = [
        _chat(b'{"tool_calls":[{"index":0,"function":{"arguments":"' + fragment + b'"}}]}', b"m%d" % n)
        for n, fragment in enumerate(fragments)
    ]
    text = b"".join(start + body + [_chat(b"{}", b"fin", b'"tool_calls"'), b"data: [DONE]\n\n"])
    reads = [text[at : at + 4096] for at in range(0, len(text), 4096)]
    fed: list[bytes] = []
    feed = Aggregator.feed

    def counted(self: Aggregator, chunk: Any) -> list[Event]:
        fed.append(chunk)
        return feed(self, chunk)

    monkeypatch.setattr(Aggregator, "feed", counted)
    events = list(stream_events(reads, "openai-chat"))
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)][1:-1] == [f"x{n}" for n in range(400)]
    assert events[-1].complete  # type: ignore[union-attr]
    # After the first read (the wire is not known yet), about one piece a read: the start of its last event.
    assert sum(len(chunk) for chunk in fed[1:]) < len(text) // 4
    monkeypatch.setattr(Aggregator, "feed", feed)
    assert events == _generic(reads, "openai-chat")
