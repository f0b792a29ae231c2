"""OpenAI chat, Mistral and Responses streams never change a call in silence, and agree with the body fetched whole.

Chat: OpenAI sends a call's name whole in its first delta; OpenAI's Python SDK joins the name pieces of later
deltas (Gemini's compatible endpoint sends pieces), and some servers send the whole name again in every delta: a
piece is joined on, the same name again is kept once, and a piece that begins with the name so far cannot be told
from the whole name sent again longer (`incomplete`, the note naming both). Custom tool calls (`type: custom`,
`custom: {name, input}`) stream their input as the whole response holds it. Mistral sends each call whole under its
own id, with no index: two entries under one id are two calls under one id (`incomplete`, as the repeats table
says), and the same body fetched whole says so in a note. Responses: a final item that renames a call or changes
its call_id, events after the final response, a delta after a call's done event and a second done event with
other input make the stream `incomplete`; an unknown event type is let pass with one `unknown_event` note.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import MessageEnd, StreamError, ToolCallEnd
from toolgen.runtime.wires.codecs import decode


def _sse(payloads: list[dict[str, Any]], done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(p)}\n\n" for p in payloads).encode()
    return body + (b"data: [DONE]\n\n" if done else b"")


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _run(body: bytes, wire: str | None) -> tuple[list[Any], MessageEnd]:
    events = list(stream_events(body, wire))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    return events, end


def _errors(events: list[Any]) -> list[str]:
    return [e.message for e in events if isinstance(e, StreamError)]


def _named(first: str, second: str) -> bytes:
    return _sse(
        [
            _chunk(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": first, "arguments": ""},
                        }
                    ],
                }
            ),
            _chunk({"tool_calls": [{"index": 0, "function": {"name": second, "arguments": "{}"}}]}),
            _chunk({}, "tool_calls"),
        ]
    )


@pytest.mark.parametrize("wire", ["openai-chat", "mistral"])
@pytest.mark.parametrize(("first", "second", "name"), [("get_", "weather", "get_weather"), ("f", "g", "fg")])
def test_name_pieces_are_joined(wire: str, first: str, second: str, name: str) -> None:
    events, end = _run(_named(first, second), wire)
    assert end.status == "complete"
    (call_end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert call_end.name == name
    assert end.response.message["tool_calls"][0]["function"]["name"] == name


@pytest.mark.parametrize("wire", ["openai-chat", "mistral"])
def test_whole_name_sent_again_is_kept_once(wire: str) -> None:
    events, end = _run(_named("get_weather", "get_weather"), wire)
    assert end.status == "complete"
    assert end.response.message["tool_calls"][0]["function"]["name"] == "get_weather"


def test_name_that_may_be_sent_whole_again_is_in_doubt() -> None:
    events, end = _run(_named("get_", "get_weather"), "openai-chat")
    assert end.status == "incomplete"
    assert _errors(events) == [
        "tool call 0: its name came as 'get_', then as 'get_weather': the whole name sent again longer, or its next"
        " piece, cannot be told apart; read as 'get_get_weather'"
    ]


def test_custom_tool_call_streams_as_the_whole_body_reads() -> None:
    call = {"id": "call_c", "type": "custom", "custom": {"name": "grammar", "input": "SELECT 1"}}
    whole = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
    }
    chunks = [
        _chunk(
            {
                "role": "assistant",
                "tool_calls": [
                    {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "grammar", "input": "SELECT "}}
                ],
            }
        ),
        _chunk({"tool_calls": [{"index": 0, "custom": {"input": "1"}}]}),
        _chunk({}, "tool_calls"),
    ]
    for chunk in chunks:
        chunk["model"] = "gpt-5"
    events, end = _run(_sse(chunks), "openai-chat")
    assert end.status == "complete"
    assert _errors(events) == []
    (call_end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert (call_end.id, call_end.name, call_end.arguments, call_end.parsed, call_end.error) == (
        "call_c",
        "grammar",
        '"SELECT 1"',
        "SELECT 1",
        None,
    )
    fetched = decode(whole, "openai-chat", "response")
    assert end.response.message == fetched.message


def test_mistral_two_entries_under_one_id_are_two_calls() -> None:
    entry = {"id": "aaaaaaaaa", "function": {"name": "f", "arguments": '{"a":1}'}}
    chunks = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": None, "tool_calls": [entry, entry]}, "tool_calls"),
    ]
    for chunk in chunks:
        chunk["model"] = "mistral-small-latest"
    events, end = _run(_sse(chunks, done=False), "mistral")
    assert end.status == "incomplete"
    assert [c["function"]["arguments"] for c in end.response.message["tool_calls"]] == ['{"a":1}', '{"a":1}']
    assert _errors(events) == ["two tool calls under one id: a call sent twice, or one of them is not the model's"]


_SHARED = "two tool calls under one id: a call sent twice, or one of them is not the model's"


def test_whole_bodies_note_two_calls_under_one_id() -> None:
    calls = [{"id": "call_a", "type": "function", "function": {"name": n, "arguments": "{}"}} for n in ("f", "g")]
    chat = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": calls},
                "finish_reason": "tool_calls",
            }
        ],
    }
    output = [
        {
            "id": f"fc_{i}",
            "type": "function_call",
            "status": "completed",
            "arguments": "{}",
            "call_id": "call_a",
            "name": n,
        }
        for i, n in ((1, "f"), (2, "g"))
    ]
    responses = {
        "id": "r",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "m",
        "output": output,
    }
    for body, wire in ((chat, "openai-chat"), (responses, "openai-responses")):
        notes = decode(body, wire, "response").extras["notes"]
        assert notes == [{"type": "shared_call_id", "message": _SHARED, "raw": ["call_a"]}]


def test_camel_body_with_snake_calls_notes_them() -> None:
    snake = [{"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "toolCalls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                    "tool_calls": snake,
                },
                "finishReason": "tool_calls",
            }
        ],
    }
    notes = decode(body, "openai-chat-camel", "response").extras["notes"]
    assert [n["type"] for n in notes] == ["foreign_calls"]
    assert notes[0]["raw"] == snake


def test_camel_stream_is_not_read_as_openai_chat() -> None:
    chunk = _chunk(
        {"role": "assistant", "toolCalls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}
    )
    chunk["choices"][0]["finishReason"] = chunk["choices"][0].pop("finish_reason")
    events, end = _run(_sse([chunk]), None)
    assert end.status != "complete"
    assert any(m.startswith("cannot tell which provider wire this stream is") for m in _errors(events))
    with pytest.raises(ValueError, match="streaming is not supported for wire 'openai-chat-camel'"):
        list(stream_events(_sse([chunk]), "openai-chat-camel"))


# -- Responses ------------------------------------------------------------------------------------------------------

_ARGS = '{"x":1}'


def _fc(name: str = "f", call_id: str = "call_1", args: str = "", status: str = "in_progress") -> dict[str, Any]:
    return {
        "id": "fc_1",
        "type": "function_call",
        "status": status,
        "arguments": args,
        "call_id": call_id,
        "name": name,
    }


def _resp(status: str, output: list[Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": "gpt-5",
        "output": output,
        "usage": None,
    }


_DONE = _fc(args=_ARGS, status="completed")
_HEAD = [
    {"type": "response.created", "response": _resp("in_progress", [])},
    {"type": "response.output_item.added", "output_index": 0, "item": _fc()},
    {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": _ARGS},
    {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "fc_1", "arguments": _ARGS},
]


def _responses(events: list[dict[str, Any]]) -> bytes:
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps(dict(e, sequence_number=i))}\n\n" for i, e in enumerate(events)
    ).encode()


def _tail(done_item: dict[str, Any], output: list[Any]) -> list[dict[str, Any]]:
    return [
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {"type": "response.completed", "response": _resp("completed", output)},
    ]


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (
            _tail(_DONE, [_fc(name="g", args=_ARGS, status="completed")]),
            "tool call 0: the final response names it 'g' (call_id 'call_1'), its events announced 'f' (call_id"
            " 'call_1'): the events' are kept",
        ),
        (
            _tail(_DONE, [_fc(call_id="call_X", args=_ARGS, status="completed")]),
            "tool call 0: the final response names it 'f' (call_id 'call_X'), its events announced 'f' (call_id"
            " 'call_1'): the events' are kept",
        ),
        (
            _tail(_fc(name="g", args=_ARGS, status="completed"), []),
            "tool call 0: its output_item.done names it 'g' (call_id 'call_1'), its events announced 'f' (call_id"
            " 'call_1'): the events' are kept",
        ),
    ],
)
def test_responses_final_item_that_renames_a_call(tail: list[dict[str, Any]], message: str) -> None:
    events, end = _run(_responses(_HEAD + tail), "openai-responses")
    assert end.status == "incomplete"
    assert _errors(events) == [message]
    (call_end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    final = end.response.message["tool_calls"][0]
    assert (final["id"], final["function"]["name"]) == (call_end.id, call_end.name) == ("call_1", "f")


@pytest.mark.parametrize(
    ("events", "message"),
    [
        (
            _HEAD
            + [
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": 0,
                    "item_id": "fc_1",
                    "delta": ',"y":2}',
                }
            ]
            + _tail(_DONE, [_DONE]),
            "tool call 0 (f): an input delta after its input was done: dropped",
        ),
        (
            _HEAD
            + [
                {
                    "type": "response.function_call_arguments.done",
                    "output_index": 0,
                    "item_id": "fc_1",
                    "arguments": '{"x":5}',
                }
            ]
            + _tail(_DONE, [_DONE]),
            "tool call 0 (f): a second done event with other input: dropped",
        ),
        (
            _HEAD
            + _tail(_DONE, [_DONE])
            + [
                {
                    "type": "response.output_text.delta",
                    "output_index": 1,
                    "item_id": "msg_9",
                    "content_index": 0,
                    "delta": "late",
                }
            ],
            "a response.output_text.delta event after the final response: dropped",
        ),
        (
            _HEAD
            + [
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": _fc(args='{"x":5}', status="completed"),
                }
            ]
            + [{"type": "response.completed", "response": _resp("completed", [_DONE])}],
            "tool call 0 (f): its output_item.done holds other arguments than its done event closed it with: dropped",
        ),
    ],
)
def test_responses_late_events_make_the_stream_incomplete(events: list[dict[str, Any]], message: str) -> None:
    out, end = _run(_responses(events), "openai-responses")
    assert end.status == "incomplete"
    assert _errors(out) == [message]
    assert end.response.message["tool_calls"][0]["function"]["arguments"] == _ARGS


def test_responses_second_done_with_the_same_input_is_a_repeat() -> None:
    again = {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "fc_1", "arguments": _ARGS}
    out, end = _run(_responses(_HEAD + [again] + _tail(_DONE, [_DONE])), "openai-responses")
    assert (end.status, end.duplicates_ignored) == ("complete", 1)


def test_responses_unknown_event_type_gets_one_note() -> None:
    new = {"type": "response.brand_new_thing.delta", "output_index": 0, "item_id": "fc_1", "delta": "?"}
    events = _HEAD[:2] + [new, dict(new)] + _HEAD[2:] + _tail(_DONE, [_DONE])
    out, end = _run(_responses(events), "openai-responses")
    assert end.status == "complete"
    assert _errors(out) == []
    assert end.response.extras["stream"]["notes"] == [
        {
            "type": "unknown_event",
            "message": "the stream sent event types toolgen does not know, let pass as OpenAI's Responses API adds"
            " new ones: response.brand_new_thing.delta",
        }
    ]
