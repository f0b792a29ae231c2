"""OpenAI chat and Gemini streams tell the truth: object arguments, every choice's or candidate's end, [DONE] alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_stream_framing import errors_of, events_of, final

from toolgen.runtime.streams.aggregator import Aggregator
from toolgen.runtime.streams.events import (
    Finish,
    MessageEnd,
    ToolCallDelta,
    ToolCallEnd,
)
from toolgen.runtime.wires.canonical import Response
from toolgen.runtime.wires.gemini.stream import GeminiState
from toolgen.runtime.wires.openai_chat.codec import decode_response
from toolgen.runtime.wires.openai_chat.stream import OpenAIChatState

_HEAD = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "gpt-4o",
}


def _sse(payloads: list[dict[str, Any]], done: bool = True) -> bytes:
    frames = [b"data: " + json.dumps(payload).encode() + b"\n\n" for payload in payloads]
    return b"".join(frames) + (b"data: [DONE]\n\n" if done else b"")


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {**_HEAD, "choices": [{"index": index, "delta": delta or {}, "finish_reason": finish}]}


def _call(
    arguments: Any, slot: int = 0, call_id: str | None = "call_1", name: str | None = "get_weather"
) -> dict[str, Any]:
    entry: dict[str, Any] = {"index": slot, "function": {"arguments": arguments}}
    if call_id is not None:
        entry.update(id=call_id, type="function")
        entry["function"] = {"name": name, "arguments": arguments}
    return {"tool_calls": [entry]}


def _end(events: list[Any]) -> MessageEnd:
    end = events[-1]
    assert isinstance(end, MessageEnd)
    return end


def _notes(response: Any) -> list[tuple[str, str | None]]:
    assert isinstance(response, Response)
    return [(note["message"], note["type"]) for note in response.extras["stream"]["errors"]]


# ---- OpenAI chat: arguments sent as a JSON object ----


def _whole(arguments: Any) -> Response:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": arguments},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    result = decode_response(body, "openai-chat")
    assert isinstance(result, Response)
    return result


def test_chat_object_arguments_are_taken_as_the_whole_response_takes_them() -> None:
    """A compatible that sends `function.arguments` as an object: the call's arguments are that object's JSON text,
    as the decoder of the same response fetched whole makes them; never a made-up `{}`."""
    arguments = {"location": "Paris", "days": [1, 2]}
    events = events_of(
        _sse([_chunk({"role": "assistant"}), _chunk(_call(arguments)), _chunk({}, "tool_calls")]), "openai-chat"
    )
    assert errors_of(events) == []
    text = '{"location":"Paris","days":[1,2]}'
    assert [e for e in events if isinstance(e, ToolCallDelta)] == [ToolCallDelta(0, text)]
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [
        ToolCallEnd(0, "call_1", "get_weather", text, arguments, None)
    ]
    assert [e for e in events if isinstance(e, Finish)] == [Finish("tool_calls", "tool_calls")]
    end = _end(events)
    assert (end.status, end.complete) == ("complete", True)
    whole = _whole(arguments)
    assert isinstance(end.response, Response)
    assert end.response.message == whole.message
    assert end.response.finish == whole.finish
    assert end.response.message["tool_calls"][0]["function"]["arguments"] == text


def test_chat_object_arguments_of_a_second_choice_and_a_legacy_call() -> None:
    """A choice other than the first, and the legacy `function_call`, take an object as their arguments too."""
    events = events_of(
        _sse(
            [
                _chunk({"role": "assistant", "content": "A"}),
                _chunk({"role": "assistant", **_call({"city": "Oslo"}, call_id="call_2")}, index=1),
                _chunk({}, "stop"),
                _chunk({}, "tool_calls", index=1),
            ]
        ),
        "openai-chat",
    )
    assert errors_of(events) == []
    end = _end(events)
    assert end.status == "complete"
    assert isinstance(end.response, Response)
    second = end.response.extras["openai-chat"]["more_choices"][0]
    assert second["message"]["tool_calls"][0]["function"]["arguments"] == {"city": "Oslo"}
    legacy = events_of(
        _sse(
            [
                _chunk({"role": "assistant", "function_call": {"name": "get_weather", "arguments": {"city": "Rome"}}}),
                _chunk({}, "function_call"),
            ]
        ),
        "openai-chat",
    )
    assert errors_of(legacy) == []
    ends = [e for e in legacy if isinstance(e, ToolCallEnd)]
    assert [(e.arguments, e.parsed, e.error) for e in ends] == [('{"city":"Rome"}', {"city": "Rome"}, None)]
    response = final(legacy)
    assert isinstance(response, Response)
    assert response.message["tool_calls"][0]["function"]["arguments"] == '{"city":"Rome"}'


@pytest.mark.parametrize(("value", "text"), [([], "[]"), (False, "false"), (0, "0"), ([1], "[1]")])
def test_chat_arguments_that_are_no_object_stay_what_they_were(value: Any, text: str) -> None:
    """A value that is no object (falsy ones too) is its own JSON text, marked as no tool's arguments: never `{}`."""
    events = events_of(_sse([_chunk(_call(value)), _chunk({}, "tool_calls")]), "openai-chat")
    (end_call,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert (end_call.arguments, end_call.parsed) == (text, None)
    assert end_call.error is not None and end_call.error.startswith("arguments are not a JSON object")
    response = final(events)
    assert isinstance(response, Response)
    assert response.message["tool_calls"][0]["function"]["arguments"] == text
    assert (
        response.message["tool_calls"][0]["function"]["arguments"]
        == _whole(value).message["tool_calls"][0]["function"]["arguments"]
    )


def test_chat_object_arguments_joined_with_text_are_the_text_they_make() -> None:
    """An object after a string fragment of the same call makes no JSON: the call says so and keeps that text."""
    events = events_of(
        _sse([_chunk(_call('{"a":')), _chunk(_call({"b": 1}, call_id=None)), _chunk({}, "tool_calls")]),
        "openai-chat",
    )
    (end_call,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert (end_call.arguments, end_call.parsed) == ('{"a":{"b":1}', None)
    assert end_call.error is not None and end_call.error.startswith("arguments are not valid JSON")
    assert _end(events).status == "corrupt"
    response = final(events)
    assert isinstance(response, Response)
    assert response.message["tool_calls"][0]["function"]["arguments"] == '{"a":{"b":1}'


def test_chat_object_arguments_no_json_can_write_never_run() -> None:
    """1e400 in an object reads as infinity, which no JSON text says: the call is marked and cannot run."""
    body = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather",'
        b'"arguments":{"days":1e400}}}]},"finish_reason":null}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
    )
    events = events_of(body, "openai-chat")
    error = "arguments hold a number JSON cannot carry (NaN, or beyond a float's range)"
    (end_call,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert (end_call.arguments, end_call.parsed, end_call.error) == ('{"days":Infinity}', None, error)
    assert [(e.message, e.type) for e in errors_of(events)] == [(f"tool call 0 (get_weather): {error}", None)]
    end = _end(events)
    assert end.status == "corrupt"
    assert isinstance(end.response, Response)
    assert end.response.message["tool_calls"][0]["function"]["arguments"] == '{"days":Infinity}'


# ---- OpenAI chat: [DONE] without a finish_reason ----


def test_chat_done_without_any_finish_reason_is_incomplete() -> None:
    """[DONE] is the stream's end, not the answer's: a choice whose finish_reason never came makes it incomplete,
    and the Finish event and the final message both say error."""
    usage = {**_HEAD, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}}
    events = events_of(
        _sse(
            [
                _chunk({"role": "assistant", "content": None}),
                _chunk(_call('{"location":', call_id="call_A")),
                _chunk(_call('"Paris"}', call_id=None)),
                usage,
            ]
        ),
        "openai-chat",
    )
    note = "no chunk said why choice 0 stopped (finish_reason)"
    assert [(e.message, e.type) for e in errors_of(events)] == [(note, "incomplete")]
    assert [e for e in events if isinstance(e, Finish)] == [Finish("error", None)]
    end = _end(events)
    assert (end.status, end.complete) == ("incomplete", False)
    assert isinstance(end.response, Response)
    assert end.response.finish == {"reason": "error", "raw": None}
    assert end.response.extras["stream"] == {
        "complete": False,
        "status": "incomplete",
        "errors": [{"message": note, "code": None, "type": "incomplete", "provider": False}],
    }
    # The call's text arrived whole and stays in the message; the status keeps any run from running it.
    assert end.response.message["tool_calls"][0]["function"]["arguments"] == '{"location":"Paris"}'


def test_chat_done_alone_is_incomplete_and_done_after_finish_is_complete() -> None:
    only_done = events_of(b"data: [DONE]\n\n", "openai-chat")
    assert _end(only_done).status == "incomplete"
    assert [e.message for e in errors_of(only_done)] == [
        "[DONE] came, yet no chunk held a choice (finish_reason)",
        "could not decode the openai-chat message built from the stream (ValueError: /choices: expected at least one"
        " choice)",
    ]
    assert [e for e in only_done if isinstance(e, Finish)] == [Finish("error", None)]
    fine = events_of(_sse([_chunk({"content": "hi"}), _chunk({}, "stop")]), "openai-chat")
    assert (_end(fine).status, errors_of(fine)) == ("complete", [])


def test_chat_done_with_a_second_choice_unfinished_is_incomplete() -> None:
    events = events_of(
        _sse([_chunk({"content": "A"}), _chunk({"content": "B"}, index=1), _chunk({}, "stop")]), "openai-chat"
    )
    assert [e.message for e in errors_of(events)] == ["no chunk said why choice 1 stopped (finish_reason)"]
    assert _end(events).status == "incomplete"


# ---- OpenAI chat: every choice ends the answer ----


def test_chat_choice_that_begins_after_the_others_finished_must_finish_too() -> None:
    events = events_of(
        _sse([_chunk({"content": "A"}), _chunk({}, "stop"), _chunk({"content": "B"}, index=1)], done=False),
        "openai-chat",
    )
    end = _end(events)
    assert (end.status, end.complete) == ("cut", False)
    assert [e.message for e in errors_of(events)] == ["stream ended before a finish_reason or [DONE]"]


def _cut_second_choice() -> list[dict[str, Any]]:
    return [
        _chunk({"role": "assistant", "content": "A"}),
        _chunk({"role": "assistant"}, index=1),
        _chunk(_call('{"x":', call_id="k1", name="order_status"), index=1),
        _chunk({}, "stop"),
    ]


def test_chat_cut_call_of_a_second_choice_is_said() -> None:
    events = events_of(_sse(_cut_second_choice(), done=False), "openai-chat")
    cut = (
        "choice 1's tool call 0 (order_status) was cut: the stream ended before a finish_reason or the next call"
        " closed the arguments"
    )
    errors = errors_of(events)
    assert [(e.message, e.type, e.raw) for e in errors] == [
        (cut, "cut", '{"x":'),
        ("stream ended before a finish_reason or [DONE]", "cut", None),
    ]
    # Only the first choice's calls are events: the second's cut makes none.
    assert [e for e in events if isinstance(e, ToolCallEnd)] == []
    end = _end(events)
    assert end.status == "cut"
    assert isinstance(end.response, Response)
    assert [message for message, _ in _notes(end.response)] == [e.message for e in errors]
    assert end.response.extras["openai-chat"]["more_choices"][0]["message"] == {"role": "assistant", "content": None}


def test_chat_cut_calls_of_other_choices_are_listed_for_cut_calls() -> None:
    """The state lists a cut call of another choice with that choice's index and the text that arrived, in
    `cut_calls`' shape; `more_cut_calls()` is empty while none was cut."""
    aggregator = Aggregator("openai-chat")
    aggregator.feed(_sse(_cut_second_choice(), done=False))
    aggregator.close()
    state = aggregator._state
    assert isinstance(state, OpenAIChatState)
    assert state.more_cut_calls() == [
        {"choice": 1, "index": 0, "id": "k1", "name": "order_status", "arguments_received": '{"x":'}
    ]
    whole = Aggregator("openai-chat")
    whole.feed(_sse(_cut_second_choice()))
    whole.close()
    assert isinstance(whole._state, OpenAIChatState) and whole._state.more_cut_calls() == []


# ---- Gemini: every candidate ends the answer ----


def _gemini(candidate: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}


def _content(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"parts": list(parts), "role": "model"}


def test_gemini_a_second_candidate_finishing_does_not_end_the_first() -> None:
    events = events_of(
        _sse(
            [
                _gemini({"content": _content({"text": "A start"}), "index": 0}),
                _gemini({"content": _content({"text": "B done"}), "index": 1, "finishReason": "STOP"}),
                _gemini({"content": _content({"text": " more"}), "index": 0}),
            ],
            done=False,
        ),
        "gemini",
    )
    end = _end(events)
    assert (end.status, end.complete) == ("cut", False)
    assert [(e.message, e.type) for e in errors_of(events)] == [("stream ended before a finishReason", "cut")]
    assert [e for e in events if isinstance(e, Finish)] == [Finish("error", None)]
    assert isinstance(end.response, Response)
    assert end.response.finish == {"reason": "error", "raw": None}


def test_gemini_every_candidate_finished_is_complete_in_any_order() -> None:
    events = events_of(
        _sse(
            [
                _gemini({"content": _content({"text": "B"}), "index": 1, "finishReason": "STOP"}),
                _gemini({"content": _content({"text": "A"}), "index": 0}),
                _gemini({"content": _content({"text": "!"}), "index": 0, "finishReason": "STOP"}),
            ],
            done=False,
        ),
        "gemini",
    )
    end = _end(events)
    assert (end.status, end.complete, errors_of(events)) == ("complete", True, [])


def test_gemini_candidate_that_begins_after_the_others_finished_must_finish_too() -> None:
    events = events_of(
        _sse(
            [
                _gemini({"content": _content({"text": "A"}), "index": 0, "finishReason": "STOP"}),
                _gemini({"content": _content({"text": "B"}), "index": 1}),
            ],
            done=False,
        ),
        "gemini",
    )
    assert _end(events).status == "cut"


def _cut_second_candidate() -> list[dict[str, Any]]:
    opening = {"functionCall": {"name": "show_order_status", "willContinue": True}}
    partial = {
        "functionCall": {
            "partialArgs": [{"jsonPath": "$.order_id", "stringValue": "12", "willContinue": True}],
            "willContinue": True,
        }
    }
    return [
        _gemini({"content": _content({"text": "A done"}), "index": 0, "finishReason": "STOP"}),
        _gemini({"content": _content({"functionCall": {"name": "lookup", "args": {"q": 1}}}), "index": 1}),
        _gemini({"content": _content(opening), "index": 1}),
        _gemini({"content": _content(partial), "index": 1}),
    ]


def test_gemini_cut_streamed_call_of_a_second_candidate_is_said() -> None:
    events = events_of(_sse(_cut_second_candidate(), done=False), "gemini")
    cut = "candidate 1's tool call 1 (show_order_status) was cut: the stream ended before its closing functionCall closed the arguments"
    assert [(e.message, e.type, e.raw) for e in errors_of(events)] == [
        (cut, "cut", '{"order_id":"12'),
        ("stream ended before a finishReason", "cut", None),
    ]
    end = _end(events)
    assert end.status == "cut"
    assert isinstance(end.response, Response)
    # The whole call before it stays in its candidate; the cut one is out of it.
    second = end.response.extras["gemini"]["more_candidates"][0]
    assert second["content"]["parts"] == [{"functionCall": {"name": "lookup", "args": {"q": 1}}}]
    assert end.response.message["content"] == "A done"
    assert "tool_calls" not in end.response.message


def test_gemini_cut_calls_of_other_candidates_are_listed_for_cut_calls() -> None:
    aggregator = Aggregator("gemini")
    aggregator.feed(_sse(_cut_second_candidate(), done=False))
    aggregator.close()
    state = aggregator._state
    assert isinstance(state, GeminiState)
    assert state.more_cut_calls() == [
        {
            "candidate": 1,
            "index": 1,
            "id": None,
            "name": "show_order_status",
            "arguments_received": '{"order_id":"12',
        }
    ]


def test_gemini_streamed_call_of_a_second_candidate_closed_by_finish_names_its_candidate() -> None:
    opening = {"functionCall": {"name": "show_order_status", "willContinue": True}}
    events = events_of(
        _sse(
            [
                _gemini({"content": _content({"text": "A"}), "index": 0, "finishReason": "STOP"}),
                _gemini({"content": _content(opening), "index": 1, "finishReason": "STOP"}),
            ],
            done=False,
        ),
        "gemini",
    )
    assert [(e.message, e.type) for e in errors_of(events)] == [
        (
            "candidate 1's streamed call 0 was closed by the finishReason: its closing functionCall never came",
            "incomplete",
        )
    ]
    assert _end(events).status == "incomplete"
