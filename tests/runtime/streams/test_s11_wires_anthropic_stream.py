"""Anthropic Messages streams with an event that lacks its block index, or of a type the state does not know.

A `content_block_delta` or `content_block_stop` without its `index` is never taken as block 0 (the state's fast path
included): the delta is dropped and the stop closes nothing, the stream says so. An event type not known is let pass,
as Anthropic's versioning policy asks, and one note (type `unknown_event`) names each such type; `ping` is no such
event. Each stream is fed one event a read, through the known-shapes shortcut and through the generic path: both
give the same events.
"""

from __future__ import annotations

import json
from typing import Any

from toolgen.runtime.streams.aggregator import Aggregator, stream_events
from toolgen.runtime.streams.events import Event, MessageEnd, StreamError
from toolgen.runtime.wires.canonical import Response

from test_stream_properties import comparable

_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-7",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}


def _end_events(stop_reason: str) -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]


def _tool(index: int, tool_id: str, name: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _json(index: int, text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": text}}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _events(payloads: list[dict[str, Any]]) -> list[Event]:
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
    assert isinstance(end, MessageEnd) and isinstance(end.response, Response)
    return end, end.response


def _errors(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(event.message, event.type) for event in events if isinstance(event, StreamError)]


def _calls(response: Response) -> list[tuple[str, str, str]]:
    return [
        (call["id"], call["function"]["name"], call["function"]["arguments"]) for call in response.message["tool_calls"]
    ]


def test_a_delta_without_its_index_is_not_added_to_block_zero() -> None:
    no_index = {"type": "content_block_delta", "delta": {"type": "input_json_delta", "partial_json": ',"y":2'}}
    events = _events(
        [
            _START,
            _tool(0, "t1", "a"),
            _tool(1, "t2", "b"),
            _json(0, '{"x":1'),
            no_index,
            _json(0, "}"),
            _json(1, "{}"),
            _stop(0),
            _stop(1),
            *_end_events("tool_use"),
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [
        ("a content_block_delta without its index or delta: whatever it held is lost", "incomplete")
    ]
    assert _calls(response) == [("t1", "a", '{"x":1}'), ("t2", "b", "{}")]


def test_a_text_delta_without_its_index_is_not_added_to_block_zero() -> None:
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    no_index = {"type": "content_block_delta", "delta": {"type": "text_delta", "text": " lost"}}
    events = _events(
        [
            _START,
            text,
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
            no_index,
            _stop(0),
            *_end_events("end_turn"),
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert response.message["content"] == "Hi"


def test_a_stop_without_its_index_closes_no_block() -> None:
    events = _events(
        [
            _START,
            _tool(0, "t1", "a"),
            _tool(1, "t2", "b"),
            _json(0, '{"x":1}'),
            {"type": "content_block_stop"},
            _json(1, "{}"),
            _stop(1),
            *_end_events("tool_use"),
        ]
    )
    end, response = _end(events)
    assert end.status == "cut"
    assert _errors(events) == [
        ("a content_block_stop without its index: no block is closed by it", "incomplete"),
        ("tool call 0 (a) was cut: the stream ended before its content_block_stop closed the arguments", "cut"),
    ]
    assert _calls(response) == [("t2", "b", "{}")]


def test_event_types_not_known_are_let_pass_and_named_once_in_a_note() -> None:
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    events = _events(
        [
            _START,
            {"type": "ping"},
            {"type": "future_event", "data": {"a": 1}},
            text,
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
            {"type": "future_event", "data": {"a": 2}},
            {"type": "other_event"},
            _stop(0),
            *_end_events("end_turn"),
        ]
    )
    end, response = _end(events)
    assert (end.status, _errors(events)) == ("complete", [])
    assert response.message["content"] == "Hi"
    assert response.extras["stream"]["notes"] == [
        {
            "type": "unknown_event",
            "message": "the stream sent event types this state does not know, ignored as Anthropic's versioning"
            " policy asks: future_event, other_event",
        }
    ]


def test_ping_alone_gives_no_note() -> None:
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    events = _events(
        [
            _START,
            {"type": "ping"},
            text,
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
            _stop(0),
            *_end_events("end_turn"),
        ]
    )
    end, response = _end(events)
    assert (end.status, _errors(events)) == ("complete", [])
    assert "stream" not in response.extras
