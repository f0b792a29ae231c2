"""Bedrock ConverseStream deltas the state could take wrong: a known delta sent to a block of another kind, a delta
of a kind not known, and an event without its block index.

AWS's ContentBlockDelta is a union (text, toolUse, reasoningContent, citation, image, toolResult, ...). A text,
toolUse or reasoningContent delta for a block of another kind is no part of that block: dropped, the stream
`incomplete`, and no event says otherwise (as Anthropic's state does). A delta of a kind not known here is kept as
sent under the response's `extras["bedrock-converse"]["deltas"]`. A `contentBlockStop` or `contentBlockStart`
without its `contentBlockIndex` is never taken as block 0. Each stream is read as JSON lines and as a binary
eventstream (the known-shapes shortcut's path): both give the same events.
"""

from __future__ import annotations

import json
from typing import Any

from test_stream_framing import bedrock_event

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import Event, MessageEnd, ReasoningDelta, StreamError, TextDelta
from toolgen.runtime.wires.canonical import Response

from test_stream_properties import comparable

_END = [
    {"messageStop": {"stopReason": "tool_use"}},
    {"metadata": {"usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}, "metrics": {"latencyMs": 9}}},
]


def _tool_start(index: int, tool_id: str, name: str) -> dict[str, Any]:
    return {
        "contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_id, "name": name}}}
    }


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": delta}}


def _stop(index: int) -> dict[str, Any]:
    return {"contentBlockStop": {"contentBlockIndex": index}}


def _events(payloads: list[dict[str, Any]]) -> list[Event]:
    """The events of the stream as JSON lines; the binary eventstream of it (one message a read) gives the same."""
    lines = "".join(json.dumps(p, separators=(",", ":")) + "\n" for p in payloads).encode()
    events = list(stream_events(lines, "bedrock-converse", framing="jsonl"))
    reads = [bedrock_event(name, {**payload, "p": "abcd"}) for p in payloads for name, payload in p.items()]
    assert _without_padding(stream_events(reads, "bedrock-converse")) == _without_padding(events)
    return events


def _without_padding(events: Any) -> tuple[Any, ...]:
    """Events as values, a StreamError's raw payload without AWS's padding `p`."""
    return tuple(
        (event.message, event.type, {k: v for k, v in event.raw.items() if k != "p"})
        if isinstance(event, StreamError) and isinstance(event.raw, dict)
        else event
        for event in comparable(events)
    )


def _end(events: list[Event]) -> tuple[MessageEnd, Response]:
    end = events[-1]
    assert isinstance(end, MessageEnd) and isinstance(end.response, Response)
    return end, end.response


def _errors(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(event.message, event.type) for event in events if isinstance(event, StreamError)]


def _calls(response: Response) -> list[tuple[str, str, str]]:
    return [
        (call["id"], call["function"]["name"], call["function"]["arguments"]) for call in response.message["tool_calls"]
    ]


# ---- a known delta for a block of another kind ----


def test_text_and_reasoning_sent_to_a_tool_block_are_dropped_in_doubt_and_make_no_event() -> None:
    events = _events(
        [
            {"messageStart": {"role": "assistant"}},
            _tool_start(0, "t1", "get_weather"),
            _delta(0, {"toolUse": {"input": '{"city":"Paris"}'}}),
            _delta(0, {"text": "Let me check that."}),
            _delta(0, {"reasoningContent": {"text": "thinking..."}}),
            _stop(0),
            *_END,
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [
        ("a text delta for block 0, a toolUse block, which it cannot add to: dropped", "incomplete"),
        ("a reasoningContent delta for block 0, a toolUse block, which it cannot add to: dropped", "incomplete"),
    ]
    assert [e for e in events if isinstance(e, (TextDelta, ReasoningDelta))] == []
    assert response.message["content"] is None
    assert _calls(response) == [("t1", "get_weather", '{"city":"Paris"}')]


def test_tool_input_sent_to_a_text_block_and_text_to_a_reasoning_block_are_dropped_in_doubt() -> None:
    events = _events(
        [
            {"messageStart": {"role": "assistant"}},
            _delta(0, {"reasoningContent": {"text": "Think."}}),
            _delta(0, {"text": "not reasoning"}),
            _stop(0),
            _delta(1, {"text": "Sunny."}),
            _delta(1, {"toolUse": {"input": '{"city":"Paris"}'}}),
            _stop(1),
            {"messageStop": {"stopReason": "end_turn"}},
            _END[1],
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [
        ("a text delta for block 0, a reasoningContent block, which it cannot add to: dropped", "incomplete"),
        ("a toolUse delta for block 1, a text block, which it cannot add to: dropped", "incomplete"),
    ]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Sunny."]
    assert response.message["content"] == [{"type": "reasoning", "text": "Think."}, {"type": "text", "text": "Sunny."}]
    assert "tool_calls" not in response.message


# ---- a delta of a kind not known here ----


def test_deltas_of_kinds_not_known_are_kept_as_sent_in_the_wire_extras() -> None:
    citation = {
        "title": "weather.pdf",
        "sourceContent": [{"text": "sunny"}],
        "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 5}},
    }
    events = _events(
        [
            {"messageStart": {"role": "assistant"}},
            _delta(0, {"text": "Paris is sunny."}),
            _delta(0, {"citation": citation}),
            _stop(0),
            _tool_start(1, "t1", "get_weather"),
            _delta(1, {"toolResult": [{"text": "partial result"}]}),
            _delta(1, {"toolUse": {"input": "{}"}}),
            _stop(1),
            *_END,
        ]
    )
    end, response = _end(events)
    assert (end.status, _errors(events)) == ("complete", [])
    assert response.message["content"] == "Paris is sunny."
    assert _calls(response) == [("t1", "get_weather", "{}")]
    assert response.extras["bedrock-converse"]["deltas"] == [
        {"contentBlockIndex": 0, "delta": {"citation": citation}},
        {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "partial result"}]}},
    ]


# ---- an event without its block index ----


def test_a_stop_without_its_index_closes_no_block() -> None:
    events = _events(
        [
            {"messageStart": {"role": "assistant"}},
            _tool_start(0, "t1", "a"),
            _tool_start(1, "t2", "b"),
            _delta(0, {"toolUse": {"input": '{"x":1}'}}),
            {"contentBlockStop": {}},
            _delta(1, {"toolUse": {"input": "{}"}}),
            _stop(1),
            *_END,
        ]
    )
    end, response = _end(events)
    # Call 0 never had its own stop: it is cut, not closed by a guess.
    assert end.status == "cut"
    assert _errors(events) == [
        ("a contentBlockStop without its index: no block is closed by it", "incomplete"),
        ("tool call 0 (a) was cut: the stream ended before its contentBlockStop closed the arguments", "cut"),
    ]
    assert _calls(response) == [("t2", "b", "{}")]
    assert response.extras["stream"]["cut_calls"] == [
        {"index": 0, "id": "t1", "name": "a", "arguments_received": '{"x":1}'}
    ]


def test_a_start_without_its_index_is_not_taken_as_block_zero() -> None:
    events = _events(
        [
            {"messageStart": {"role": "assistant"}},
            _delta(0, {"text": "Hi."}),
            {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": "a"}}}},
            _stop(0),
            {"messageStop": {"stopReason": "end_turn"}},
            _END[1],
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [("a contentBlockStart without its index: its block is lost", "incomplete")]
    assert response.message["content"] == "Hi."
