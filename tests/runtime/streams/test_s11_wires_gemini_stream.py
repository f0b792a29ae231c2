"""Gemini streams whose calls the state could take wrong: a call without its name, `partialArgs` that no longer say
what the model sent, arguments that are no object, and a part of a kind not known.

Gemini's streamed function-call arguments come as a `functionCall {name, willContinue: true}`, `partialArgs` entries
(a `jsonPath` and one of stringValue, numberValue, boolValue, nullValue), and a closing `functionCall {}`. Only that
empty part closes a call: a nameless part with `args` is a call whose name never came (kept, the stream
`incomplete`). A `partialArgs` entry the object cannot take as sent makes the call's arguments doubtful (`incomplete`,
a StreamError naming its jsonPath). Arguments that are JSON but no object are refused by the whole parse (a
ValueError, as Anthropic's whole parse refuses them) and make the stream `corrupt`, as Anthropic's does. A part of a
kind not known is kept in the message's `extras["gemini"]["blocks"]`, streamed or whole.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import Event, MessageEnd, StreamError, ToolCallDelta, ToolCallEnd
from toolgen.runtime.wires.canonical import Response
from toolgen.runtime.wires.gemini.codec import decode_response

_USAGE = {"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12}


def _chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-3.1-pro-preview", "responseId": "r1"}
    if finish is not None:
        chunk["usageMetadata"] = _USAGE
    return chunk


def _events(chunks: list[dict[str, Any]]) -> list[Event]:
    body = "".join(f"data: {json.dumps(chunk, separators=(',', ':'))}\r\n\r\n" for chunk in chunks).encode()
    return list(stream_events(body, "gemini"))


def _end(events: list[Event]) -> tuple[MessageEnd, Response]:
    end = events[-1]
    assert isinstance(end, MessageEnd) and isinstance(end.response, Response)
    return end, end.response


def _errors(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(event.message, event.type) for event in events if isinstance(event, StreamError)]


def _calls(response: Response) -> list[tuple[str, str]]:
    return [(call["function"]["name"], call["function"]["arguments"]) for call in response.message["tool_calls"]]


# ---- a functionCall part with args and no name is a call, not a streamed call's close ----


def test_a_nameless_call_with_args_is_kept_and_flagged() -> None:
    events = _events([_chunk([{"functionCall": {"args": {"city": "Paris"}}}]), _chunk([], "STOP")])
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [("tool call 0 has no name: a functionCall part without its name", "incomplete")]
    assert _calls(response) == [("", '{"city":"Paris"}')]
    ends = [event for event in events if isinstance(event, ToolCallEnd)]
    assert [(e.index, e.name, e.arguments, e.parsed) for e in ends] == [
        (0, None, '{"city":"Paris"}', {"city": "Paris"})
    ]
    # The same part fetched whole is refused, as Anthropic's whole parse refuses a tool_use without its name.
    whole = _chunk([{"functionCall": {"args": {"city": "Paris"}}}], "STOP")
    with pytest.raises(ValueError, match="functionCall/name: expected the function name as a string"):
        decode_response(whole)


def test_a_nameless_call_while_a_streamed_call_is_open_closes_it_in_doubt_and_is_kept() -> None:
    events = _events(
        [
            _chunk([{"functionCall": {"name": "get_weather", "willContinue": True}}]),
            _chunk(
                [
                    {
                        "functionCall": {
                            "partialArgs": [{"jsonPath": "$.city", "stringValue": "Oslo"}],
                            "willContinue": True,
                        }
                    }
                ]
            ),
            _chunk([{"functionCall": {"args": {"city": "Paris"}}}]),
            _chunk([], "STOP"),
        ]
    )
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [
        ("streamed call 0 was closed by a call without a name: its closing functionCall never came", "incomplete"),
        ("tool call 1 has no name: a functionCall part without its name", "incomplete"),
    ]
    assert _calls(response) == [("get_weather", '{"city":"Oslo"}'), ("", '{"city":"Paris"}')]


def test_the_empty_closing_part_still_closes_a_streamed_call() -> None:
    events = _events(
        [
            _chunk([{"functionCall": {"name": "get_weather", "willContinue": True}}]),
            _chunk(
                [
                    {
                        "functionCall": {
                            "partialArgs": [{"jsonPath": "$.city", "stringValue": "Oslo"}],
                            "willContinue": True,
                        }
                    }
                ]
            ),
            _chunk([{"functionCall": {"willContinue": True}}]),
            _chunk([{"functionCall": {}}]),
            _chunk([], "STOP"),
        ]
    )
    end, response = _end(events)
    assert (end.status, _errors(events)) == ("complete", [])
    assert _calls(response) == [("get_weather", '{"city":"Oslo"}')]


# ---- partialArgs the arguments cannot take as sent ----


def _streamed(entries: list[dict[str, Any]]) -> list[Event]:
    return _events(
        [
            _chunk([{"functionCall": {"name": "get_weather", "willContinue": True}}]),
            *(_chunk([{"functionCall": {"partialArgs": [entry], "willContinue": True}}]) for entry in entries),
            _chunk([{"functionCall": {}}]),
            _chunk([], "STOP"),
        ]
    )


_DOUBTFUL = [
    pytest.param(
        [{"jsonPath": "city]]", "stringValue": "Paris"}],
        "{}",
        "a partialArgs entry whose jsonPath 'city]]' is no JSON path to a member: dropped",
        id="unparsable-path",
    ),
    pytest.param(
        [{"jsonPath": "$", "stringValue": "Paris"}],
        "{}",
        "a partialArgs entry whose jsonPath '$' is no JSON path to a member: dropped",
        id="root-path",
    ),
    pytest.param(
        [{"jsonPath": "$.x", "numberValue": 1}, {"jsonPath": "$.x.y", "numberValue": 2}],
        '{"x":1}',
        "jsonPath '$.x.y' clashes with another path of the arguments (a member under a value, or a value over"
        " members): one of them is lost",
        id="member-under-a-value",
    ),
    pytest.param(
        [{"jsonPath": "$.x.y", "numberValue": 2}, {"jsonPath": "$.x", "numberValue": 1}],
        '{"x":1}',
        "jsonPath '$.x' clashes with another path of the arguments (a member under a value, or a value over"
        " members): one of them is lost",
        id="value-over-members",
    ),
    pytest.param(
        [{"jsonPath": "$.a[0]", "numberValue": 1}, {"jsonPath": "$.a.b", "numberValue": 2}],
        '{"a":[1]}',
        "jsonPath '$.a.b' clashes with another path of the arguments (a member under a value, or a value over"
        " members): one of them is lost",
        id="array-and-object",
    ),
    pytest.param(
        [{"jsonPath": "$.a[0]", "nullValue": "NULL_VALUE"}, {"jsonPath": "$.a[0].b", "numberValue": 2}],
        '{"a":[null]}',
        "jsonPath '$.a[0].b' clashes with another path of the arguments (a member under a value, or a value over"
        " members): one of them is lost",
        id="member-under-a-null-item",
    ),
    pytest.param(
        [{"jsonPath": "$.x", "numberValue": 1}, {"jsonPath": "$.x", "numberValue": 2}],
        '{"x":2}',
        "jsonPath '$.x' came again with another value: the later one is taken",
        id="same-path-other-value",
    ),
    pytest.param(
        [{"jsonPath": "$.x", "numberValue": 1}, {"jsonPath": "$.x", "boolValue": True}],
        '{"x":true}',
        "jsonPath '$.x' came again with another value: the later one is taken",
        id="same-path-one-then-true",
    ),
    pytest.param(
        [{"jsonPath": "$.x", "stringValue": "a", "willContinue": True}, {"jsonPath": "$.x", "numberValue": 2}],
        '{"x":2}',
        "jsonPath '$.x' came again with another value: the later one is taken",
        id="open-string-then-number",
    ),
    pytest.param(
        [{"jsonPath": "$.city"}],
        "{}",
        "a partialArgs entry at jsonPath '$.city' carries no value: dropped",
        id="no-value",
    ),
]


@pytest.mark.parametrize(("entries", "arguments", "problem"), _DOUBTFUL)
def test_partial_args_the_object_cannot_take_make_the_call_doubtful(
    entries: list[dict[str, Any]], arguments: str, problem: str
) -> None:
    events = _streamed(entries)
    end, response = _end(events)
    assert end.status == "incomplete"
    assert _errors(events) == [(f"tool call 0 (get_weather): {problem}", "incomplete")]
    assert _calls(response) == [("get_weather", arguments)]
    ends = [event for event in events if isinstance(event, ToolCallEnd)]
    assert [e.arguments for e in ends] == [arguments]


def test_partial_args_said_again_alike_and_strings_in_fragments_stay_complete() -> None:
    events = _streamed(
        [
            {"jsonPath": "$.city", "stringValue": "Pa", "willContinue": True},
            {"jsonPath": "$.city", "stringValue": "ris"},
            {"jsonPath": "$.days", "numberValue": 3},
            {"jsonPath": "$.days", "numberValue": 3},
            {"jsonPath": "$.tags[1]", "stringValue": "b"},
            {"jsonPath": "$.empty", "nullValue": "NULL_VALUE"},
        ]
    )
    end, response = _end(events)
    assert (end.status, _errors(events)) == ("complete", [])
    assert _calls(response) == [("get_weather", '{"city":"Paris","days":3,"tags":[null,"b"],"empty":null}')]


# ---- arguments that are no object ----


def test_arguments_that_are_no_object_make_the_stream_corrupt_as_on_anthropic() -> None:
    whole = _chunk([{"functionCall": {"name": "get_weather", "args": ["Paris"]}}], "STOP")
    events = _events([whole])
    end, response = _end(events)
    assert end.status == "corrupt"
    assert _errors(events) == [("tool call 0 (get_weather): arguments are not a JSON object (JSON list)", None)]
    assert _calls(response) == [("get_weather", '["Paris"]')]
    ends = [event for event in events if isinstance(event, ToolCallEnd)]
    assert [(e.arguments, e.parsed, e.error) for e in ends] == [
        ('["Paris"]', None, "arguments are not a JSON object (JSON list)")
    ]
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == ['["Paris"]']
    with pytest.raises(ValueError, match="expected the arguments to be a JSON object, not list"):
        decode_response(whole)


# ---- a part of a kind not known ----


def test_a_part_of_a_kind_not_known_is_kept_streamed_and_whole_alike() -> None:
    future = {"futurePart": {"kind": "new", "n": 1}}
    chunks = [_chunk([{"text": "Hi"}]), _chunk([future], "STOP")]
    end, response = _end(_events(chunks))
    whole = decode_response(_chunk([{"text": "Hi"}, future], "STOP"))
    assert isinstance(whole, Response)
    assert end.status == "complete"
    assert response.message == whole.message
    assert response.message["extras"]["gemini"]["blocks"] == [{"part": {}}, {"keep": future}]
