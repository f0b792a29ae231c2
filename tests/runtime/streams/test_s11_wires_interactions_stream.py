"""Google Interactions streams the state could take wrong: a delta a `function_call` step cannot take, a delta of a
type not known for another step, and a `step.start` or `step.stop` without its index.

A call's arguments come in `arguments_delta` deltas; any other delta for a call's step (a type added since, or text)
is dropped and makes the call doubtful (`incomplete`), so a call's arguments are never a silent `{}`. A delta of a
type not known for a step that is no call is left out, and a note (type `unknown_delta`) names its type once. An
index is never guessed: a `step.stop` without one closes nothing, a `step.start` without one is lost (`incomplete`).
"""

from __future__ import annotations

import json
from typing import Any

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import Event, MessageEnd, StreamError, TextDelta
from toolgen.runtime.wires.canonical import Response

_CREATED = {
    "interaction": {"id": "i1", "status": "in_progress", "object": "interaction", "model": "gemini-2.5-flash"},
    "event_type": "interaction.created",
}
_USAGE = {"total_input_tokens": 5, "total_output_tokens": 3, "total_tokens": 8}


def _completed(status: str) -> dict[str, Any]:
    return {"interaction": {"id": "i1", "status": status, "usage": _USAGE}, "event_type": "interaction.completed"}


def _call_start(index: int) -> dict[str, Any]:
    step = {"id": "c1", "type": "function_call", "name": "get_weather", "arguments": {}}
    return {"index": index, "step": step, "event_type": "step.start"}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"index": index, "delta": delta, "event_type": "step.delta"}


def _stop(index: int) -> dict[str, Any]:
    return {"index": index, "event_type": "step.stop"}


def _events(payloads: list[dict[str, Any]]) -> list[Event]:
    body = "".join(
        f"event: {p['event_type']}\ndata: {json.dumps(p, separators=(',', ':'))}\n\n" for p in payloads
    ).encode()
    return list(stream_events(body, "google-interactions"))


def _end(events: list[Event]) -> tuple[MessageEnd, Response]:
    end = events[-1]
    assert isinstance(end, MessageEnd) and isinstance(end.response, Response)
    return end, end.response


def _errors(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(event.message, event.type) for event in events if isinstance(event, StreamError)]


def _calls(response: Response) -> list[tuple[str, str]]:
    return [(call["function"]["name"], call["function"]["arguments"]) for call in response.message["tool_calls"]]


def test_a_delta_of_a_type_not_known_on_a_call_makes_the_call_doubtful() -> None:
    events = _events(
        [
            _CREATED,
            _call_start(0),
            _delta(0, {"type": "arguments_patch", "arguments": '{"city":"Paris"}'}),
            _stop(0),
            _completed("requires_action"),
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [
        (
            "a step.delta of type 'arguments_patch' for step 0, a function_call, which it cannot add to: dropped,"
            " so the call may not be the model's",
            "incomplete",
        )
    ]
    assert _calls(response) == [("get_weather", "{}")]


def test_text_for_a_call_step_is_dropped_in_doubt_and_makes_no_event() -> None:
    events = _events(
        [
            _CREATED,
            _call_start(0),
            _delta(0, {"type": "arguments_delta", "arguments": '{"city":"Paris"}'}),
            _delta(0, {"type": "text", "text": "Checking."}),
            _stop(0),
            _completed("requires_action"),
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [
        (
            "a step.delta of type 'text' for step 0, a function_call, which it cannot add to: dropped,"
            " so the call may not be the model's",
            "incomplete",
        )
    ]
    assert [e for e in events if isinstance(e, TextDelta)] == []
    assert response.message["content"] is None
    assert _calls(response) == [("get_weather", '{"city":"Paris"}')]


def test_a_delta_of_a_type_not_known_on_another_step_is_noted_once() -> None:
    events = _events(
        [
            _CREATED,
            {"index": 0, "step": {"type": "model_output"}, "event_type": "step.start"},
            _delta(0, {"type": "text", "text": "Hi."}),
            _delta(0, {"type": "future_delta", "data": "x"}),
            _delta(0, {"type": "future_delta", "data": "y"}),
            _delta(0, {"type": "other_delta", "data": "z"}),
            _stop(0),
            _completed("completed"),
        ]
    )
    end, response = _end(events)
    assert (end.status, _errors(events)) == ("complete", [])
    assert response.message["content"] == "Hi."
    assert response.extras["stream"]["notes"] == [
        {
            "type": "unknown_delta",
            "message": "the stream sent step.delta types this state does not know, left out of the message:"
            " 'future_delta', 'other_delta'",
        }
    ]


def test_a_stop_without_its_index_closes_no_step() -> None:
    events = _events(
        [
            _CREATED,
            _call_start(0),
            _delta(0, {"type": "arguments_delta", "arguments": '{"city":"Paris"}'}),
            {"event_type": "step.stop"},
            _completed("requires_action"),
        ]
    )
    end, response = _end(events)
    assert end.status == "cut"
    assert _errors(events) == [
        ("a step.stop without its index: no step is closed by it", "incomplete"),
        ("tool call 0 (get_weather) was cut: the stream ended before its step.stop closed the arguments", "cut"),
    ]
    assert "tool_calls" not in response.message


def test_a_start_without_its_index_is_not_given_one() -> None:
    start = _call_start(0)
    del start["index"]
    events = _events([_CREATED, start, _completed("requires_action")])
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [("a step.start without its index: its step is lost", "incomplete")]
