"""Anthropic Messages streams that say more than the state's known deltas: nothing vanishes, nothing changes block.

A delta of a type the state does not know (the beta `compaction_delta`) keeps its fields on its block; a null usage
count of `message_delta` keeps the `message_start` count (the SDK types them Optional); a known delta sent to a block
of another type (a `text_delta` to a thinking or tool_use block) is not merged into it, and the stream says so. Each
stream is fed one event a read, through the known-shapes shortcut (`stream_events`) and through the generic path
(`Aggregator.feed`, which never asks a shortcut): both give the same events.
"""

from __future__ import annotations

import json
from typing import Any

from toolgen.runtime.streams.aggregator import Aggregator, stream_events
from toolgen.runtime.streams.events import (
    Event,
    MessageEnd,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    Usage,
)
from toolgen.runtime.wires.anthropic.codec import decode_response
from toolgen.runtime.wires.canonical import Response

from test_stream_properties import comparable

_START = {
    "type": "message_start",
    "message": {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-7",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 1},
    },
}
_DELTA = {
    "type": "message_delta",
    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
    "usage": {"output_tokens": 9},
}
_END = [_DELTA, {"type": "message_stop"}]


def _events(payloads: list[dict[str, Any]]) -> list[Event]:
    """The events of one payload a read, as Anthropic sends them (an `event:` line, compact JSON)."""
    reads = [
        b"event: " + p["type"].encode() + b"\ndata: " + json.dumps(p, separators=(",", ":")).encode() + b"\n\n"
        for p in payloads
    ]
    fast = list(stream_events(reads, "anthropic"))
    aggregator = Aggregator("anthropic")
    generic = [event for read in reads for event in aggregator.feed(read)] + aggregator.close()
    assert comparable(fast) == comparable(generic)
    return fast


def _end(events: list[Event]) -> tuple[MessageEnd, Response]:
    end = events[-1]
    assert isinstance(end, MessageEnd)
    assert isinstance(end.response, Response)
    return end, end.response


def _notes(events: list[Event]) -> list[str]:
    return [event.message for event in events if isinstance(event, StreamError)]


def _start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _text_block(index: int, text: str) -> list[dict[str, Any]]:
    return [
        _start(index, {"type": "text", "text": ""}),
        _delta(index, {"type": "text_delta", "text": text}),
        _stop(index),
    ]


def _whole(content: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> Response:
    """The same message fetched whole: what the stream's final message must be."""
    body = {
        **_START["message"],
        "content": content,
        "stop_reason": "end_turn",
        "usage": usage or {"input_tokens": 50, "output_tokens": 9},
    }
    whole = decode_response(body)
    assert isinstance(whole, Response)
    return whole


# ---- 1. a delta of a type the state does not know keeps its fields on its block ----

_SUMMARY = "Summary: the user wants the weather in Paris."
_COMPACTION = {"type": "compaction_delta", "content": _SUMMARY, "encrypted_content": "EncBlobXYZ=="}


def test_compaction_delta_reaches_its_block() -> None:
    """The documented beta stream: a compaction block's start with `content: null`, one compaction_delta with the
    whole summary and its encrypted_content, its stop. The final message is the whole response's, and complete."""
    events = _events(
        [
            _START,
            _start(0, {"type": "compaction", "content": None}),
            _delta(0, _COMPACTION),
            _stop(0),
            *_text_block(1, "Sure."),
            *_END,
        ]
    )
    end, response = _end(events)
    assert (end.status, _notes(events)) == ("complete", [])
    whole = _whole(
        [
            {"type": "compaction", "content": _SUMMARY, "encrypted_content": "EncBlobXYZ=="},
            {"type": "text", "text": "Sure."},
        ]
    )
    assert response.message == whole.message
    assert response.message["extras"]["anthropic"]["blocks"][0] == {
        "keep": {"type": "compaction", "content": _SUMMARY, "encrypted_content": "EncBlobXYZ=="}
    }
    assert [event for event in events if isinstance(event, TextDelta)] == [TextDelta("Sure.")]


def test_unknown_delta_fields_merge_like_known_ones() -> None:
    """A string field the block holds already is appended to, anything else set: both guesses, so each is a note
    and the stream is incomplete. A null field is "not given": the block keeps what it held, without a note."""
    events = _events(
        [
            _START,
            _start(0, {"type": "compaction", "content": None}),
            _delta(0, {"type": "compaction_delta", "content": "one ", "encrypted_content": None, "level": 1}),
            _delta(0, {"type": "compaction_delta", "content": "two", "encrypted_content": "E", "level": 2}),
            _delta(0, {"type": "compaction_delta", "content": None, "encrypted_content": None, "level": 2}),
            _stop(0),
            *_END,
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == [
        "a compaction_delta for block 0 gives its 'content' again: appended, though it may replace what the block held",
        "a compaction_delta for block 0 gives its 'level' again: replaced, though it may add to what the block held",
    ]
    assert response.message["extras"]["anthropic"]["blocks"] == [
        {"keep": {"type": "compaction", "content": "one two", "encrypted_content": "E", "level": 2}}
    ]


def test_unknown_delta_to_a_text_block_adds_to_its_text_in_doubt() -> None:
    """The text of a text block is what its text_deltas said, as events: an unknown delta's `text` is appended and
    sent as an event (so the events and the message agree), a guess the stream names; a field the block does not
    hold is set without a note."""
    events = _events(
        [
            _START,
            _start(0, {"type": "text", "text": ""}),
            _delta(0, {"type": "text_delta", "text": "Hello"}),
            _delta(0, {"type": "shout_delta", "text": "!", "volume": 11}),
            _stop(0),
            *_END,
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == [
        "a shout_delta for block 0 gives its 'text' again: appended, though it may replace what the block held"
    ]
    assert [event for event in events if isinstance(event, TextDelta)] == [TextDelta("Hello"), TextDelta("!")]
    assert response.message["content"] == "Hello!"
    assert response.message["extras"]["anthropic"]["blocks"] == [{"part": {"rest": {"volume": 11}}}]


def test_unknown_delta_never_changes_what_known_deltas_make() -> None:
    """A call's input is its input_json_delta fragments, a text block's text its text_deltas: an unknown delta's
    `input`, or a `text` that is no string, is dropped with a note, never merged into them."""
    events = _events(
        [
            _START,
            _start(0, {"type": "tool_use", "id": "toolu_A", "name": "f", "input": {}}),
            _delta(0, {"type": "input_json_delta", "partial_json": '{"a":1}'}),
            _delta(0, {"type": "patch_delta", "input": {"a": 2}, "note": "x"}),
            _stop(0),
            _start(1, {"type": "text", "text": ""}),
            _delta(1, {"type": "shout_delta", "text": 5}),
            _stop(1),
            *_END,
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == [
        "a patch_delta for block 0 gives its 'input', which only its own deltas make: dropped",
        "a shout_delta for block 1 gives its 'text', which only its own deltas make: dropped",
    ]
    assert ToolCallEnd(0, "toolu_A", "f", '{"a":1}', {"a": 1}) in events
    assert response.message["tool_calls"][0]["function"]["arguments"] == '{"a":1}'


def test_unknown_delta_before_its_start_implies_its_block() -> None:
    """A compaction_delta whose block never started: the block its name implies, with its fields, in doubt."""
    events = _events([_START, _delta(0, _COMPACTION), _stop(0), *_END])
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == ["a delta for block 0 came before its content_block_start"]
    assert response.message["extras"]["anthropic"]["blocks"] == [
        {"keep": {"type": "compaction", "content": _SUMMARY, "encrypted_content": "EncBlobXYZ=="}}
    ]


# ---- 2. a null usage count of message_delta keeps the message_start count ----

_USAGE_START = {
    **_START,
    "message": {
        **_START["message"],
        "usage": {
            "input_tokens": 50,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 10,
            "output_tokens": 1,
        },
    },
}
_NULLS = {
    "type": "message_delta",
    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
    "usage": {
        "input_tokens": None,
        "cache_creation_input_tokens": None,
        "cache_read_input_tokens": None,
        "output_tokens": 89,
    },
}


def test_null_usage_counts_keep_the_start_counts() -> None:
    events = _events([_USAGE_START, *_text_block(0, "Hi"), _NULLS, {"type": "message_stop"}])
    end, response = _end(events)
    assert (end.status, _notes(events)) == ("complete", [])
    whole = _whole(
        [{"type": "text", "text": "Hi"}],
        {"input_tokens": 50, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 10, "output_tokens": 89},
    )
    assert (
        response.usage
        == whole.usage
        == {
            "input_tokens": 60,
            "output_tokens": 89,
            "cache_read_tokens": 10,
            "cache_write_tokens": 0,
        }
    )
    assert Usage(whole.usage) in events


def test_null_usage_delta_again_after_stop_is_a_repeat() -> None:
    """The same message_delta again after message_stop changes nothing: a repeat, not a note."""
    events = _events([_USAGE_START, *_text_block(0, "Hi"), _NULLS, {"type": "message_stop"}, _NULLS])
    end, response = _end(events)
    assert (end.status, end.duplicates_ignored, _notes(events)) == ("complete", 1, [])
    assert response.usage is not None and response.usage["input_tokens"] == 60


def test_usage_that_is_no_object_is_a_note() -> None:
    usage = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": [89]}
    events = _events([_START, *_text_block(0, "Hi"), usage, {"type": "message_stop"}])
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == ["a message_delta whose usage is no object: its usage is lost"]
    assert response.usage == {"input_tokens": 50, "output_tokens": 1}


# ---- 3. a known delta is never merged into a block of another type ----


def _thinking_with_text(index: int) -> list[dict[str, Any]]:
    return [
        _start(index, {"type": "thinking", "thinking": "", "signature": ""}),
        _delta(index, {"type": "thinking_delta", "thinking": "I think"}),
        _delta(index, {"type": "text_delta", "text": " ANSWER"}),
        _delta(index, {"type": "signature_delta", "signature": "SIG"}),
        _stop(index),
    ]


def test_text_delta_to_a_thinking_block_is_dropped_in_doubt() -> None:
    events = _events([_START, *_thinking_with_text(0), *_END])
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == ["a text_delta for block 0, a thinking block, which it cannot add to: dropped"]
    assert not [event for event in events if isinstance(event, TextDelta)]
    assert [event for event in events if isinstance(event, ReasoningDelta)] == [ReasoningDelta("I think")]
    assert response.message["content"] == [{"type": "reasoning", "text": "I think", "signature": "SIG"}]
    assert response.finish is not None and response.finish["reason"] == "error"


def test_text_delta_to_a_thinking_block_of_a_longer_index() -> None:
    """Block 10: the shortcut reads a longer index by its pattern; the same outcome."""
    blocks = [payload for index in range(10) for payload in _text_block(index, str(index))]
    events = _events([_START, *blocks, *_thinking_with_text(10), *_END])
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == ["a text_delta for block 10, a thinking block, which it cannot add to: dropped"]
    assert "".join(event.text for event in events if isinstance(event, TextDelta)) == "0123456789"
    assert response.message["content"][-1] == {"type": "reasoning", "text": "I think", "signature": "SIG"}


def test_text_delta_to_a_tool_use_block_is_dropped_in_doubt() -> None:
    events = _events(
        [
            _START,
            _start(0, {"type": "tool_use", "id": "toolu_A", "name": "show_order_status", "input": {}}),
            _delta(0, {"type": "input_json_delta", "partial_json": '{"order_id":"1"}'}),
            _delta(0, {"type": "text_delta", "text": "STRAY TEXT"}),
            _stop(0),
            *_END,
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == ["a text_delta for block 0, a tool_use block, which it cannot add to: dropped"]
    assert not [event for event in events if isinstance(event, TextDelta)]
    assert [event for event in events if isinstance(event, ToolCallDelta)] == [ToolCallDelta(0, '{"order_id":"1"}')]
    assert ToolCallEnd(0, "toolu_A", "show_order_status", '{"order_id":"1"}', {"order_id": "1"}) in events
    assert response.message["content"] is None
    assert response.message["tool_calls"][0]["function"]["arguments"] == '{"order_id":"1"}'
    assert response.finish is not None and response.finish["reason"] == "error"


def test_other_known_deltas_to_a_text_block_are_dropped_in_doubt() -> None:
    """A thinking, argument or signature delta for a text block: none is folded into its text."""
    events = _events(
        [
            _START,
            _start(0, {"type": "text", "text": ""}),
            _delta(0, {"type": "text_delta", "text": "Hi"}),
            _delta(0, {"type": "thinking_delta", "thinking": "hmm"}),
            _delta(0, {"type": "input_json_delta", "partial_json": '{"a":1}'}),
            _delta(0, {"type": "signature_delta", "signature": "SIG"}),
            _delta(0, {"type": "thinking_delta", "thinking": ""}),
            _stop(0),
            *_END,
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _notes(events) == [
        f"a {kind} for block 0, a text block, which it cannot add to: dropped"
        for kind in ("thinking_delta", "input_json_delta", "signature_delta")
    ]
    assert not [event for event in events if isinstance(event, ReasoningDelta)]
    assert response.message["content"] == "Hi"
