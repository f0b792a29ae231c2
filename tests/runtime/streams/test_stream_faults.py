"""Streams that never lie: cut, duplicated and corrupted streams never pass an open call off as closed.

Bodies are every recorded stream in ../shared/payloads (when present) and the hand-written ones in
tests/fixtures/streams. Which calls a stream closed is judged by `stream_oracle`, read off the payloads per
wire. A cut anywhere, a repeated event, flipped bytes, dropped lines, garbage lines, payloads that are not JSON
or not objects: the front door never raises, ends with one MessageEnd, and every `ToolCallEnd` without an error
holds a JSON object the stream closed; a repeat the wire lets us recognize leaves every event as it was.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.stream_oracle import closed_calls, frames_of, payloads_of

from toolgen.runtime.streams.aggregator import Aggregator, stream_events
from toolgen.runtime.streams.events import (
    Event,
    MessageEnd,
    StreamError,
    TextDelta,
    ToolCallEnd,
)
from toolgen.runtime.streams.framing import Frame
from toolgen.runtime.wires.canonical import ProviderError, Response

from test_stream_properties import BODIES, body_of, comparable, pieces

NAMES = sorted(BODIES)
SOME = settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
STATUSES = {"complete", "incomplete", "cut", "failed", "corrupt"}


@functools.cache
def frames(name: str) -> tuple[Frame, ...]:
    return tuple(frames_of(body_of(name)))


@functools.cache
def wire_of(name: str) -> str:
    aggregator = Aggregator(BODIES[name][0])
    for frame in frames(name):
        aggregator.feed(frame)
    aggregator.close()
    assert aggregator.wire is not None
    return aggregator.wire


def run_frames(name: str, chunks: list[Frame]) -> list[Event]:
    aggregator = Aggregator(BODIES[name][0])
    events = [event for frame in chunks for event in aggregator.feed(frame)]
    return events + aggregator.close()


@functools.cache
def reference(name: str) -> tuple[Any, ...]:
    return comparable(run_frames(name, list(frames(name))))


@functools.cache
def reference_ends(name: str) -> dict[int, ToolCallEnd]:
    return {event.index: event for event in reference(name) if isinstance(event, ToolCallEnd)}


def honest(events: list[Event]) -> MessageEnd:
    """What holds of any stream, however broken: one MessageEnd last, and no call passed off as closed."""
    ends = [event for event in events if isinstance(event, MessageEnd)]
    assert len(ends) == 1 and events[-1] is ends[0]
    end = ends[0]
    assert end.status in STATUSES and (end.status == "complete") == end.complete
    assert end.complete == (not any(isinstance(event, StreamError) for event in events))
    calls = [event for event in events if isinstance(event, ToolCallEnd)]
    assert len({event.index for event in calls}) == len(calls)
    for event in calls:
        if event.arguments is None:
            assert event.parsed is None and event.error is not None and event.error.startswith("cut:")
            assert end.status == "cut" and not end.complete
        elif event.error is None:
            # An object; or the free text a Responses custom tool takes, held as a JSON string.
            assert isinstance(event.parsed, dict | str) and json.loads(event.arguments) == event.parsed
    if isinstance(end.response, Response):
        held = [call["function"]["arguments"] for call in end.response.message.get("tool_calls", [])]
        assert held == [
            event.arguments for event in sorted(calls, key=lambda e: e.index) if event.arguments is not None
        ]
        if any(event.arguments is None for event in calls):
            assert (end.response.finish or {}).get("reason") == "error"
            assert end.response.extras["stream"]["status"] == "cut"
    else:
        assert isinstance(end.response, ProviderError) and not calls
    return end


def judge_cut(name: str, events: list[Event], seen: list[Frame]) -> int:
    """Every call the prefix closed ends as in the whole stream; every other is cut. Returns the cut ones."""
    honest(events)
    closed = closed_calls(wire_of(name), seen)
    whole = reference_ends(name)
    cut = 0
    for event in events:
        if not isinstance(event, ToolCallEnd):
            continue
        if event.index in closed:
            assert (event.arguments, event.parsed, event.error) == (
                whole[event.index].arguments,
                whole[event.index].parsed,
                whole[event.index].error,
            ), name
        else:
            assert event.arguments is None and event.error is not None, (name, event)
            cut += 1
    return cut


# ---- cuts ----


@pytest.mark.parametrize("name", NAMES)
def test_a_cut_after_any_frame_never_passes_an_open_call_as_closed(name: str) -> None:
    """Every prefix of every stream: error-free ToolCallEnds are exactly the calls the prefix closed."""
    whole = list(frames(name))
    for count in range(len(whole) + 1):
        judge_cut(name, run_frames(name, whole[:count]), whole[:count])


@SOME
@given(name=st.sampled_from(NAMES), data=st.data())
def test_a_cut_at_any_byte_never_passes_an_open_call_as_closed(name: str, data: st.DataObject) -> None:
    body = body_of(name)
    cut = data.draw(st.integers(0, len(body)))
    events = list(stream_events(data.draw(pieces(body[:cut])), BODIES[name][0]))
    judge_cut(name, events, frames_of(body[:cut]))


def test_the_corpus_has_cut_calls_to_judge() -> None:
    """The exhaustive cut test above is not empty: over the bodies, its prefixes do cut calls."""
    cut = sum(
        judge_cut(name, run_frames(name, list(frames(name))[:count]), list(frames(name))[:count])
        for name in NAMES
        for count in range(len(frames(name)) + 1)
    )
    assert cut > 20


# ---- repeats ----


def _fragment(delta: Any) -> bool:
    """Whether a chat delta carries text or argument text (a repeat of it would say more)."""
    if not isinstance(delta, dict):
        return False
    if any(
        isinstance(delta.get(key), (str, list)) and delta.get(key)
        for key in ("content", "reasoning_content", "reasoning", "refusal")
    ):
        return True
    calls = delta.get("tool_calls") or []
    legacy = delta.get("function_call") or {}
    return any((call.get("function") or {}).get("arguments") for call in calls) or bool(legacy.get("arguments"))


def _chat_repeat(data: dict[str, Any]) -> str:
    if isinstance(data.get("obfuscation"), str):
        return "recognized"
    choices = data.get("choices") or []
    if any(choice.get("finish_reason") for choice in choices):
        return "recognized" if any(choice.get("delta") for choice in choices) else "harmless"
    return "unknown" if any(_fragment(choice.get("delta")) for choice in choices) else "harmless"


def _gemini_repeat(data: dict[str, Any]) -> str:
    verdicts = []
    for candidate in data.get("candidates") or []:
        parts = (candidate.get("content") or {}).get("parts") or []
        if candidate.get("finishReason") is not None:
            verdicts.append("recognized" if parts else "harmless")
            continue
        for part in parts:
            call = part.get("functionCall")
            if part.get("thoughtSignature") or (isinstance(call, dict) and call.get("id")):
                verdicts.append("recognized")
            elif part.get("text") or (isinstance(call, dict) and call):
                verdicts.append("unknown")
    if "unknown" in verdicts or not verdicts:
        return "unknown" if "unknown" in verdicts else "harmless"
    return "recognized"


def _typed_repeat(recognized: set[str], harmless: set[str], kind: Any) -> str:
    return "recognized" if kind in recognized else "harmless" if kind in harmless else "unknown"


def repeat_kind(wire: str, event: str | None, data: Any) -> str:
    """recognized: the wire marks it as a repeat; harmless: taking it twice changes nothing; unknown: neither.

    The per-wire rules the stream states' docstrings give, written out again from the wire formats.
    """
    if data == "[DONE]":
        return "harmless"
    if not isinstance(data, dict):
        return "unknown"
    if wire == "openai-responses":
        return "recognized" if isinstance(data.get("sequence_number"), int) else "unknown"
    if wire == "anthropic":
        return _typed_repeat(
            {"message_start", "content_block_start", "content_block_stop", "message_stop"},
            {"message_delta", "ping"},
            data.get("type") or event,
        )
    if wire == "bedrock-converse":
        name = event if event is not None else next(iter(data), None)
        return "unknown" if name == "contentBlockDelta" else "recognized"
    if wire == "google-interactions":
        return _typed_repeat(
            {"step.start", "step.stop", "interaction.created", "interaction.completed"},
            {"interaction.status_update"},
            data.get("event_type") or event,
        )
    if wire == "cohere":
        return _typed_repeat(
            {"message-start", "tool-call-start", "tool-call-end", "content-start", "message-end"},
            {"content-end", "citation-end"},
            data.get("type") or event,
        )
    if wire == "ollama":
        return "recognized" if isinstance(data.get("created_at"), str) else "unknown"
    if wire == "gemini":
        return _gemini_repeat(data)
    return _chat_repeat(data)


@SOME
@given(name=st.sampled_from(NAMES), data=st.data())
def test_a_repeated_event_the_wire_marks_changes_nothing(name: str, data: st.DataObject) -> None:
    whole = list(frames(name))
    assume(whole)
    at = data.draw(st.integers(0, len(whole) - 1))
    repeated = [*whole[: at + 1], whole[at], *whole[at + 1 :]]
    events = run_frames(name, repeated)
    end = honest(events)
    parsed = payloads_of([whole[at]])
    kind = repeat_kind(wire_of(name), *parsed[0]) if parsed else "unknown"
    if kind == "unknown":
        return
    expected = reference(name)
    got = comparable(events)
    assert got[:-1] == expected[:-1], (name, at, kind)
    last = expected[-1]
    assert isinstance(end, MessageEnd)
    if isinstance(last, MessageEnd):
        assert (end.response, end.complete, end.status) == (last.response, last.complete, last.status)
    if kind == "recognized":
        assert end.duplicates_ignored == 1, (name, at)


@SOME
@given(name=st.sampled_from([n for n in NAMES if "responses" in n]), data=st.data())
def test_a_responses_event_replayed_later_changes_nothing(name: str, data: st.DataObject) -> None:
    whole = list(frames(name))
    at = data.draw(st.integers(0, len(whole) - 1))
    later = data.draw(st.integers(at + 1, len(whole)))
    events = run_frames(name, [*whole[:later], whole[at], *whole[later:]])
    end = honest(events)
    assert comparable(events)[:-1] == reference(name)[:-1]
    assert end.duplicates_ignored == 1


# ---- corruptions ----


def _lines(body: bytes) -> list[bytes]:
    return body.splitlines(keepends=True)


def _replace_payload(line: bytes, payload: bytes) -> bytes:
    end = line[len(line.rstrip(b"\r\n")) :]
    prefix = b"data: " if line.startswith(b"data:") else b""
    return prefix + payload + end if line.strip() and not line.startswith((b"event:", b":")) else line


NOT_OBJECTS = [
    b"[1, 2]",
    b'"text"',
    b"42",
    b"null",
    b"true",
    b"[]",
    b'{"type": "content_block_delta"',
    b"{,}",
    b"\xff\xfe",
]


@st.composite
def corrupted(draw: st.DrawFn, body: bytes) -> bytes:
    """The body with one kind of damage: flipped bytes, dropped lines, garbage lines, or payloads not JSON objects."""
    lines = _lines(body)
    how = draw(st.sampled_from(["flip", "drop", "garbage", "payload"] if len(lines) > 1 else ["flip"]))
    if how == "flip" or not lines:
        damaged = bytearray(body)
        for _ in range(draw(st.integers(1, 4))):
            if damaged:
                damaged[draw(st.integers(0, len(damaged) - 1))] ^= draw(st.integers(1, 255))
        return bytes(damaged)
    picked = set(draw(st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=4)))
    if how == "drop":
        return b"".join(line for i, line in enumerate(lines) if i not in picked)
    if how == "garbage":
        junk = st.one_of(st.binary(max_size=30), st.sampled_from(NOT_OBJECTS)).map(lambda b: b + b"\n")
        out = []
        for i, line in enumerate(lines):
            if i in picked:
                out.append(draw(junk))
            out.append(line)
        return b"".join(out)
    payload = st.sampled_from(NOT_OBJECTS)
    return b"".join(_replace_payload(line, draw(payload)) if i in picked else line for i, line in enumerate(lines))


@SOME
@given(name=st.sampled_from(NAMES), data=st.data())
def test_a_corrupted_stream_never_raises_and_never_passes_a_broken_call(name: str, data: st.DataObject) -> None:
    body = data.draw(corrupted(body_of(name)))
    events = list(stream_events(data.draw(pieces(body)), BODIES[name][0]))
    honest(events)
    wire = wire_of(name)
    error_free = [e for e in events if isinstance(e, ToolCallEnd) and e.error is None]
    # However the damage fell, no more calls come out clean than the damaged stream has closing events for, unless
    # the stream says it is not complete (a Responses call rebuilt from the final output after gaps in the
    # sequence): then nothing runs its calls.
    end = events[-1]
    assert isinstance(end, MessageEnd)
    if end.status == "complete":
        assert len(error_free) <= len(closed_calls(wire, frames_of(body))), name


@SOME
@given(name=st.sampled_from(NAMES), data=st.data())
def test_a_corrupted_stream_fed_as_payloads_never_raises(name: str, data: st.DataObject) -> None:
    """Decoded payloads handed straight in (an SDK's chunks), some of them not objects at all."""
    payloads: list[Any] = [payload for _, payload in payloads_of(frames(name)) if payload != "[DONE]"]
    assume(payloads)
    junk = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(payloads)))
        payloads.insert(at, {"junk": data.draw(junk)} if data.draw(st.booleans()) else {str(data.draw(junk)): 1})
    events = list(stream_events(payloads, wire_of(name)))
    honest(events)


# ---- both sides of a repeat: equal deltas the wire cannot tell apart are kept ----


def _chat(text: str, mark: str | None = None) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": text}}],
    }
    if mark is not None:
        chunk["obfuscation"] = mark
    return chunk


CHAT_END = {
    "id": "c",
    "object": "chat.completion.chunk",
    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
}


def _responses(text: str, number: int) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "sequence_number": number,
        "output_index": 0,
        "content_index": 0,
        "delta": text,
    }


def _ollama(text: str, stamp: str) -> dict[str, Any]:
    return {"model": "m", "created_at": stamp, "message": {"role": "assistant", "content": text}, "done": False}


ANTHROPIC_HA = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ha"}}
BEDROCK_HA = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "ha"}}}
COHERE_HA = {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "ha"}}}}
GEMINI_HA = {"candidates": [{"content": {"parts": [{"text": "ha"}], "role": "model"}, "index": 0}]}
INTERACTIONS_HA = {"index": 0, "delta": {"type": "text", "text": "ha"}, "event_type": "step.delta"}

TWICE: list[tuple[str, str, list[dict[str, Any]], str, int]] = [
    # (what, wire, payloads, text, repeats dropped)
    ("chat: two equal deltas, no mark", "openai-chat", [_chat("ha"), _chat("ha"), CHAT_END], "haha", 0),
    ("chat: two equal deltas, two marks", "openai-chat", [_chat("ha", "x1"), _chat("ha", "y2"), CHAT_END], "haha", 0),
    ("chat: one chunk twice", "openai-chat", [_chat("ha", "x1"), _chat("ha", "x1"), CHAT_END], "ha", 1),
    ("chat: a delta after the finish", "openai-chat", [_chat("ha"), CHAT_END, _chat("ha")], "ha", 1),
    ("responses: two numbers", "openai-responses", [_responses("ha", 3), _responses("ha", 4)], "haha", 0),
    ("responses: one number twice", "openai-responses", [_responses("ha", 3), _responses("ha", 3)], "ha", 1),
    ("anthropic: two equal deltas", "anthropic", [ANTHROPIC_HA, ANTHROPIC_HA], "haha", 0),
    (
        "anthropic: a delta after its block stopped",
        "anthropic",
        [ANTHROPIC_HA, {"type": "content_block_stop", "index": 0}, ANTHROPIC_HA],
        "ha",
        1,
    ),
    ("bedrock: two equal deltas", "bedrock-converse", [BEDROCK_HA, BEDROCK_HA], "haha", 0),
    (
        "bedrock: a delta after its block stopped",
        "bedrock-converse",
        [BEDROCK_HA, {"contentBlockStop": {"contentBlockIndex": 0}}, BEDROCK_HA],
        "ha",
        1,
    ),
    ("cohere: two equal deltas", "cohere", [COHERE_HA, COHERE_HA], "haha", 0),
    ("gemini: two equal chunks", "gemini", [GEMINI_HA, GEMINI_HA], "haha", 0),
    ("interactions: two equal deltas", "google-interactions", [INTERACTIONS_HA, INTERACTIONS_HA], "haha", 0),
    ("ollama: two stamps", "ollama", [_ollama("ha", "t1"), _ollama("ha", "t2")], "haha", 0),
    ("ollama: one line twice", "ollama", [_ollama("ha", "t1"), _ollama("ha", "t1")], "ha", 1),
]


@pytest.mark.parametrize(("what", "wire", "payloads", "text", "dropped"), TWICE, ids=[row[0] for row in TWICE])
def test_equal_deltas_are_kept_unless_the_wire_marks_a_repeat(
    what: str, wire: str, payloads: list[dict[str, Any]], text: str, dropped: int
) -> None:
    events = list(stream_events(payloads, wire))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == text
    end = events[-1]
    assert isinstance(end, MessageEnd) and end.duplicates_ignored == dropped


def _anthropic_call() -> list[dict[str, Any]]:
    return [
        {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 5}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]


COHERE_CALL = [
    {"type": "message-start", "id": "m", "delta": {"message": {"role": "assistant"}}},
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {"message": {"tool_calls": {"id": "t1", "function": {"name": "f", "arguments": ""}}}},
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '{"a": 1}'}}}},
    },
    {"type": "tool-call-end", "index": 0},
    {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}},
]
SIGNED_CALL = {
    "candidates": [
        {
            "content": {"parts": [{"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "sig1"}]},
            "index": 0,
        }
    ]
}
GEMINI_END = {"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}]}


@pytest.mark.parametrize(
    ("wire", "payloads", "at"),
    [
        ("anthropic", _anthropic_call(), 0),
        ("anthropic", _anthropic_call(), 1),
        ("anthropic", _anthropic_call(), 3),
        ("anthropic", _anthropic_call(), 5),
        ("cohere", COHERE_CALL, 1),
        ("cohere", COHERE_CALL, 3),
        ("gemini", [SIGNED_CALL, GEMINI_END], 0),
        ("gemini", [SIGNED_CALL, GEMINI_END], 1),
    ],
)
def test_a_repeated_start_or_stop_adds_no_call(wire: str, payloads: list[dict[str, Any]], at: int) -> None:
    once = list(stream_events(payloads, wire))
    twice = list(stream_events([*payloads[: at + 1], payloads[at], *payloads[at + 1 :]], wire))
    assert comparable(twice[:-1]) == comparable(once[:-1])
    end, first = twice[-1], once[-1]
    assert isinstance(end, MessageEnd) and isinstance(first, MessageEnd)
    assert end.response == first.response and end.complete and end.duplicates_ignored == 1
    assert isinstance(end.response, Response) and len(end.response.message["tool_calls"]) == 1


def test_a_message_start_repeated_after_the_usage_does_not_reset_it() -> None:
    payloads = _anthropic_call()
    once = stream_events(payloads, "anthropic")
    twice = stream_events([*payloads[:5], payloads[0], payloads[5]], "anthropic")
    assert [e for e in twice if isinstance(e, MessageEnd)][0].response == [
        e for e in once if isinstance(e, MessageEnd)
    ][0].response


def test_an_object_the_stream_closed_but_that_is_not_an_object_is_an_error_the_message_keeps() -> None:
    payloads = [
        {**COHERE_CALL[2], "delta": {"message": {"tool_calls": {"function": {"arguments": "null"}}}}}
        if i == 2
        else payload
        for i, payload in enumerate(COHERE_CALL)
    ]
    events = list(stream_events(payloads, "cohere"))
    end = next(e for e in events if isinstance(e, ToolCallEnd))
    assert (end.arguments, end.parsed) == ("null", None) and end.error is not None and "not a JSON object" in end.error
    final = events[-1]
    assert isinstance(final, MessageEnd) and isinstance(final.response, Response)
    # As the whole response says: the text as sent, for the loop's dispatch to answer as a bad call.
    assert final.response.message["tool_calls"][0]["function"]["arguments"] == "null"


def _string_places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every string inside a decoded payload."""
    if isinstance(value, str):
        return [at]
    if isinstance(value, dict):
        return [path for key, item in value.items() for path in _string_places(item, (*at, key))]
    if isinstance(value, list):
        return [path for index, item in enumerate(value) for path in _string_places(item, (*at, index))]
    return []


def _with(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _with(value[head], rest, new)}
    return [_with(item, rest, new) if index == head else item for index, item in enumerate(value)]


NOT_STRINGS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@SOME
@given(name=st.sampled_from(NAMES), data=st.data())
def test_a_string_a_server_sends_as_another_json_type_never_raises(name: str, data: st.DataObject) -> None:
    """Any string of any payload (a text, reasoning or argument fragment among them) sent as a number, an array,
    an object, a boolean or null: the stream ends honestly, as JSON text and as decoded payloads."""
    payloads: list[Any] = [payload for _, payload in payloads_of(frames(name)) if payload != "[DONE]"]
    places = [(at, path) for at, payload in enumerate(payloads) for path in _string_places(payload)]
    assume(places)
    for _ in range(data.draw(st.integers(1, 3))):
        at, path = data.draw(st.sampled_from(places))
        payloads[at] = _with(payloads[at], path, data.draw(NOT_STRINGS))
    honest(list(stream_events(payloads, wire_of(name))))
    body = b"".join(b"data: " + json.dumps(payload).encode() + b"\n\n" for payload in payloads)
    honest(list(stream_events(data.draw(pieces(body)), wire_of(name))))


@pytest.mark.parametrize(
    ("wire", "lines"),
    [
        (
            "openai-chat",
            [
                b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
                b'"choices":[{"index":0,"delta":{"reasoning_content":1.5}}]}\n\n',
            ],
        ),
        (
            "ollama",
            [b'{"model":"m","created_at":"t","message":{"role":"assistant","content":7},"done":false}\n'],
        ),
    ],
)
def test_a_fragment_that_is_not_a_string_is_a_stream_error_and_not_kept(wire: str, lines: list[bytes]) -> None:
    events = list(stream_events(lines, wire))
    end = honest(events)
    faults = [event for event in events if isinstance(event, StreamError)]
    assert faults and any("must be a string" in fault.message for fault in faults), faults
    assert not end.complete and not any(isinstance(event, TextDelta) for event in events)
