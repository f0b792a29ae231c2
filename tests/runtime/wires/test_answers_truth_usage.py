"""A usage count that is no count is left out with a note; the valid counts beside it are kept.

Every wire's usage reading goes through one helper (wires.helpers.Counts): a whole number, 0 or more, is a count
(`5.0` is the same number in JSON, and reads as 5); text, a fraction, a negative, a number past a float's range
(`1e999` reads as infinity) and null where the wire always sends a count are left out, and `extras["notes"]` names
each and why, whole and streamed (a stream's end is the body its wire's decoder reads). A part of a canonical sum
(Anthropic's and Bedrock's cache counts in `input_tokens`, Gemini's thoughts in `output_tokens`) takes the sum out
with it. The body goes back to its wire as it came, the odd value included, and converts to another wire.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from toolgen.runtime.clients.bodies import whole_response
from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import MessageEnd, Usage
from toolgen.runtime.wires.canonical import Response
from toolgen.runtime.wires.codecs import codec
from toolgen.runtime.wires.response_losses import encode_response_noted

CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-mini",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}


def note(wire: str, field: str, text: str, why: str, spoils: str = "") -> dict[str, Any]:
    also = f", and with it {spoils}, which counts it" if spoils else ""
    return {
        "type": "bad_usage_count",
        "message": f"{wire} sent {field} {text}, {why}: it is left out of the usage{also}",
        "field": field,
    }


def _chat(prompt: str) -> bytes:
    """The chat completion with `prompt_tokens` spelled as given, as the server's bytes."""
    return json.dumps(CHAT).encode().replace(b'"prompt_tokens": 5', b'"prompt_tokens": ' + prompt.encode())


# ---- one count, spelled every way a server may spell it (the tester's cases) ----

KEPT = {"output_tokens": 3, "total_tokens": 8}


@pytest.mark.parametrize(
    ("spelled", "usage", "notes"),
    [
        ("5", {"input_tokens": 5, **KEPT}, None),
        ("5.0", {"input_tokens": 5, **KEPT}, None),
        ("2e0", {"input_tokens": 2, **KEPT}, None),
        (str(2**70), {"input_tokens": 2**70, **KEPT}, None),
        ('"5"', KEPT, [note("openai-chat", "usage.prompt_tokens", '"5"', "not a number")]),
        ("null", KEPT, [note("openai-chat", "usage.prompt_tokens", "null", "where it always sends a count")]),
        (
            "1e999",
            KEPT,
            [
                note(
                    "openai-chat",
                    "usage.prompt_tokens",
                    "Infinity",
                    "a number past a float's range (read as infinity)",
                )
            ],
        ),
        ("-1", KEPT, [note("openai-chat", "usage.prompt_tokens", "-1", "a negative count")]),
        ("-1.0", KEPT, [note("openai-chat", "usage.prompt_tokens", "-1.0", "a negative count")]),
        ("5.5", KEPT, [note("openai-chat", "usage.prompt_tokens", "5.5", "not a whole number")]),
        ("true", KEPT, [note("openai-chat", "usage.prompt_tokens", "true", "not a number")]),
        ("[5]", KEPT, [note("openai-chat", "usage.prompt_tokens", "[5]", "not a number")]),
    ],
)
def test_an_odd_prompt_count_leaves_the_rest_of_the_usage(
    spelled: str, usage: dict[str, Any], notes: list[dict[str, Any]] | None
) -> None:
    content = _chat(spelled)
    response = whole_response("openai-chat", content)
    assert response.usage == usage
    assert response.extras.get("notes") == notes
    assert response.message == {"role": "assistant", "content": "Hi"}
    assert response.finish == {"reason": "stop", "raw": "stop"}
    # Back to its own wire, the body is what was sent (the same numbers), the odd value included.
    assert codec("openai-chat").encode_response(response) == json.loads(content)


# ---- every wire's usage ----


def _anthropic(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Hi"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def _responses(usage: dict[str, Any]) -> dict[str, Any]:
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
    }
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5",
        "output": [item],
        "usage": usage,
    }


def _bedrock(usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"text": "Hi"}]}
    return {"output": {"message": message}, "stopReason": "end_turn", "usage": usage, "metrics": {"latencyMs": 9}}


def _gemini(usage: dict[str, Any]) -> dict[str, Any]:
    candidate = {"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP", "index": 0}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}


def _interactions(usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "v1_1",
        "object": "interaction",
        "model": "gemini-2.5-flash",
        "status": "completed",
        "outputs": [{"type": "text", "text": "Hi"}],
        "usage": usage,
    }


def _cohere(usage: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": "Hi"}]}
    return {"id": "c-1", "finish_reason": "COMPLETE", "message": message, "usage": usage}


def _ollama(counts: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "qwen3:8b",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": "Hi"},
        "done": True,
        "done_reason": "stop",
        **counts,
    }


def _camel(usage: dict[str, Any]) -> dict[str, Any]:
    choice = {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finishReason": "stop"}
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice], "usage": usage}


CASES: list[tuple[str, dict[str, Any], dict[str, Any] | None, list[dict[str, Any]]]] = [
    (
        "openai-chat",
        {**CHAT, "usage": {"prompt_tokens": 5, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": -2}}},
        {"input_tokens": 5, "output_tokens": 3},
        [note("openai-chat", "usage.prompt_tokens_details.cached_tokens", "-2", "a negative count")],
    ),
    (
        "openai-chat-camel",
        _camel({"promptTokens": "5", "completionTokens": 3, "totalTokens": 8}),
        {"output_tokens": 3, "total_tokens": 8},
        [note("openai-chat-camel", "usage.promptTokens", '"5"', "not a number")],
    ),
    (
        "openai-responses",
        _responses({"input_tokens": 5, "output_tokens": 1.5, "total_tokens": 7,
                    "output_tokens_details": {"reasoning_tokens": 1}}),
        {"input_tokens": 5, "total_tokens": 7, "reasoning_tokens": 1},
        [note("openai-responses", "usage.output_tokens", "1.5", "not a whole number")],
    ),
    (
        "anthropic",
        _anthropic({"input_tokens": 10, "cache_read_input_tokens": "100", "cache_creation_input_tokens": 5,
                    "output_tokens": 7}),
        {"output_tokens": 7, "cache_write_tokens": 5},
        [note("anthropic", "usage.cache_read_input_tokens", '"100"', "not a number", "input_tokens")],
    ),
    (
        # A cache count the API documents as nullable is not sent when null: nothing is left out.
        "anthropic",
        _anthropic({"input_tokens": 10, "cache_read_input_tokens": None, "cache_creation_input_tokens": None,
                    "output_tokens": 7}),
        {"input_tokens": 10, "output_tokens": 7},
        [],
    ),
    (
        "anthropic",
        _anthropic({"input_tokens": None, "output_tokens": 7}),
        {"output_tokens": 7},
        [note("anthropic", "usage.input_tokens", "null", "where it always sends a count")],
    ),
    (
        "bedrock-converse",
        _bedrock({"inputTokens": -3, "outputTokens": 2, "totalTokens": 4, "cacheReadInputTokens": 1}),
        {"output_tokens": 2, "total_tokens": 4, "cache_read_tokens": 1},
        [note("bedrock-converse", "usage.inputTokens", "-3", "a negative count")],
    ),
    (
        "gemini",
        _gemini({"promptTokenCount": 3, "candidatesTokenCount": 2, "thoughtsTokenCount": "4", "totalTokenCount": 9}),
        {"input_tokens": 3, "total_tokens": 9},
        [note("gemini", "usageMetadata.thoughtsTokenCount", '"4"', "not a number", "output_tokens")],
    ),
    (
        "google-interactions",
        _interactions({"total_input_tokens": None, "total_output_tokens": 1, "total_tokens": 4}),
        {"output_tokens": 1, "total_tokens": 4},
        [note("google-interactions", "usage.total_input_tokens", "null", "where it always sends a count")],
    ),
    (
        "cohere",
        _cohere({"billed_units": {"input_tokens": 3, "output_tokens": 1},
                 "tokens": {"input_tokens": 9.0, "output_tokens": "x"}}),
        # What the model saw (`tokens`), never mixed with what was billed: 9.0 is 9.
        {"input_tokens": 9},
        [note("cohere", "usage.tokens.output_tokens", '"x"', "not a number")],
    ),
    (
        "ollama",
        _ollama({"prompt_eval_count": 3, "eval_count": -1}),
        {"input_tokens": 3},
        [note("ollama", "eval_count", "-1", "a negative count")],
    ),
    (
        "ollama",
        _ollama({"prompt_eval_count": "3", "eval_count": "1"}),
        None,
        [note("ollama", "prompt_eval_count", '"3"', "not a number"), note("ollama", "eval_count", '"1"', "not a number")],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("wire", "body", "usage", "notes"), CASES)
def test_each_wire_keeps_the_valid_counts_and_names_the_rest(
    wire: str, body: dict[str, Any], usage: dict[str, Any] | None, notes: list[dict[str, Any]]
) -> None:
    sent = copy.deepcopy(body)
    response = codec(wire).decode_response(body)
    assert isinstance(response, Response)
    assert response.usage == usage
    assert response.extras.get("notes", []) == notes
    assert body == sent
    # The same body comes back from its own wire, the odd values included.
    assert codec(wire).encode_response(response) == sent
    # Another wire takes the counts the usage holds, and no more.
    target = "anthropic" if wire != "anthropic" else "openai-chat"
    again = codec(target).decode_response(encode_response_noted(response, target).body)
    assert isinstance(again, Response)
    if usage is not None:
        assert again.usage is not None
        assert {k: again.usage[k] for k in ("input_tokens", "output_tokens") if k in again.usage} == {
            k: usage[k] for k in ("input_tokens", "output_tokens") if k in usage
        }


# ---- streamed: the note where the same body fetched whole has it, and the status stands ----


def _sse(payloads: list[dict[str, Any]], done: bool = False) -> list[bytes]:
    reads = [b"data: " + json.dumps(payload).encode() + b"\n\n" for payload in payloads]
    return [*reads, b"data: [DONE]\n\n"] if done else reads


def _chat_stream(usage: dict[str, Any]) -> list[bytes]:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return _sse(
        [
            {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}]},
            {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**head, "choices": [], "usage": usage},
        ],
        done=True,
    )


def _anthropic_stream(delta_usage: dict[str, Any]) -> list[bytes]:
    start = {**_anthropic({"input_tokens": 5, "output_tokens": 1}), "content": [], "stop_reason": None}
    events = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": delta_usage},
        {"type": "message_stop"},
    ]
    return [b"event: " + e["type"].encode() + b"\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events]


def _bedrock_lines(usage: dict[str, Any]) -> list[bytes]:
    # The SDK-decoded form of ConverseStream: one event object a line.
    events: list[dict[str, Any]] = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": usage, "metrics": {"latencyMs": 9}}},
    ]
    return [json.dumps(event).encode() + b"\n" for event in events]


def _gemini_stream(usage: dict[str, Any]) -> list[bytes]:
    first = {"content": {"role": "model", "parts": [{"text": "Hi"}]}, "index": 0}
    last = {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}
    return _sse(
        [
            {"candidates": [first], "modelVersion": "gemini-2.5-flash"},
            {"candidates": [last], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"},
        ]
    )


STREAMS = [
    (
        "openai-chat",
        _chat_stream({"prompt_tokens": "5", "completion_tokens": 3, "total_tokens": 8}),
        {"output_tokens": 3, "total_tokens": 8},
        [note("openai-chat", "usage.prompt_tokens", '"5"', "not a number")],
    ),
    (
        # The final output count is the odd one: message_start's 1 is not put in its place.
        "anthropic",
        _anthropic_stream({"output_tokens": -2}),
        {"input_tokens": 5},
        [note("anthropic", "usage.output_tokens", "-2", "a negative count")],
    ),
    (
        "bedrock-converse",
        _bedrock_lines({"inputTokens": 3.5, "outputTokens": 1, "totalTokens": 4}),
        {"output_tokens": 1, "total_tokens": 4},
        [note("bedrock-converse", "usage.inputTokens", "3.5", "not a whole number")],
    ),
    (
        "gemini",
        _gemini_stream({"promptTokenCount": -3, "candidatesTokenCount": 1, "totalTokenCount": 4}),
        {"output_tokens": 1, "total_tokens": 4},
        [note("gemini", "usageMetadata.promptTokenCount", "-3", "a negative count")],
    ),
]


@pytest.mark.parametrize(("wire", "reads", "usage", "notes"), STREAMS)
def test_a_stream_keeps_the_valid_counts_and_names_the_rest(
    wire: str, reads: list[bytes], usage: dict[str, Any], notes: list[dict[str, Any]]
) -> None:
    events = list(stream_events(reads, wire))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    assert (end.status, end.complete) == ("complete", True)
    response = end.response
    assert isinstance(response, Response)
    assert response.usage == usage
    assert [event.usage for event in events if isinstance(event, Usage)] == [usage]
    assert response.extras["notes"] == notes
    assert "stream" not in response.extras
