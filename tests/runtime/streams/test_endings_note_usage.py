"""A stream that ends without the usage its wire documents as always sent: a note says so, and the status stands.

Bedrock ConverseStream sends `metadata {usage, metrics}` after `messageStop`; Anthropic's `message_delta` always
carries `usage` (the final output count). Without them the answer is whole (its end signal came), so the stream stays
`complete` and a run does not ask the model again; `extras["stream"]["notes"]` says what never came.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_endings_note_finish import anthropic_events, anthropic_sse, bedrock_stream, end_of
from test_stream_framing import bedrock_event

from toolgen.runtime.loop.recovery import failure_kind
from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import MessageEnd, Usage
from toolgen.runtime.wires.canonical import Response

_BEDROCK_NOTE = {
    "type": "usage_missing",
    "message": "the stream ended after messageStop without its metadata event: the usage (and metrics) it"
    " carries are missing",
}
_ANTHROPIC_NOTE = {
    "type": "usage_missing",
    "message": "no message_delta carried usage: the output token count is message_start's, not the final one",
}


def _response(end: MessageEnd) -> Response:
    assert isinstance(end.response, Response)
    return end.response


def test_bedrock_without_its_metadata_event_is_complete_with_a_note() -> None:
    events = list(stream_events(bedrock_stream("end_turn", None), "bedrock-converse"))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    assert (end.status, end.complete) == ("complete", True)
    response = _response(end)
    assert response.message["content"] == "Hi"
    assert response.finish == {"reason": "stop", "raw": "end_turn"}
    assert response.usage is None and not [e for e in events if isinstance(e, Usage)]
    assert response.extras["stream"] == {"complete": True, "status": "complete", "notes": [_BEDROCK_NOTE]}
    # Not an answer to ask again for.
    assert failure_kind(response) is None


def test_bedrock_with_its_metadata_event_has_no_note() -> None:
    usage = {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}
    end, _ = end_of(bedrock_stream("end_turn", {"usage": usage, "metrics": {"latencyMs": 9}}), "bedrock-converse")
    assert end.status == "complete"
    response = _response(end)
    assert response.usage == {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
    assert "stream" not in response.extras and "notes" not in response.extras


def test_bedrock_metadata_without_usage_is_noted() -> None:
    end, _ = end_of(bedrock_stream("end_turn", {"metrics": {"latencyMs": 9}}), "bedrock-converse")
    assert end.status == "complete"
    assert _response(end).extras["stream"]["notes"] == [
        {"type": "usage_missing", "message": "the metadata event carried no usage"}
    ]


def test_bedrock_sdk_decoded_form_without_metadata_is_noted_too() -> None:
    reads = [
        b'{"messageStart": {"role": "assistant"}}\n',
        b'{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}}\n',
        b'{"contentBlockStop": {"contentBlockIndex": 0}}\n',
        b'{"messageStop": {"stopReason": "end_turn"}}\n',
    ]
    end, _ = end_of(reads, "bedrock-converse")
    assert end.status == "complete"
    assert _response(end).extras["stream"]["notes"] == [_BEDROCK_NOTE]


def test_bedrock_cut_before_message_stop_says_cut_and_no_usage_note() -> None:
    reads = bedrock_stream("end_turn", None)[:2]
    end, _ = end_of(reads, "bedrock-converse")
    assert end.status == "cut"
    assert "notes" not in _response(end).extras["stream"]


def test_bedrock_with_a_doubt_keeps_both_the_errors_and_the_note() -> None:
    # A payload that is no ConverseStream event: dropped in doubt, the stream incomplete; the usage still never came.
    reads = [bedrock_event("somethingElse", {"x": 1}), *bedrock_stream("end_turn", None)]
    end, _ = end_of(reads, "bedrock-converse")
    assert end.status == "incomplete"
    stream = _response(end).extras["stream"]
    assert stream["status"] == "incomplete" and stream["complete"] is False
    assert [e["type"] for e in stream["errors"]] == ["incomplete"]
    assert stream["notes"] == [_BEDROCK_NOTE]


def test_anthropic_without_message_delta_usage_is_complete_with_a_note() -> None:
    end, _ = end_of(anthropic_sse(anthropic_events("end_turn")), "anthropic")
    assert (end.status, end.complete) == ("complete", True)
    response = _response(end)
    # The message_start's counts stand, and the note says the final output count never came.
    assert response.usage == {"input_tokens": 5, "output_tokens": 1}
    assert response.extras["stream"] == {"complete": True, "status": "complete", "notes": [_ANTHROPIC_NOTE]}
    assert failure_kind(response) is None


@pytest.mark.parametrize("usage", [{"output_tokens": 2}, {"output_tokens": 2, "input_tokens": None}])
def test_anthropic_with_message_delta_usage_has_no_note(usage: dict[str, Any]) -> None:
    end, _ = end_of(anthropic_sse(anthropic_events("end_turn", usage)), "anthropic")
    assert end.status == "complete"
    response = _response(end)
    assert response.usage == {"input_tokens": 5, "output_tokens": 2}
    assert "stream" not in response.extras


@pytest.mark.parametrize(
    "reads",
    [
        # Not asked for usage (its chunks carry no `usage: null`): a chat stream without a usage chunk is whole.
        [
            b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":'
            b'{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n',
            b'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},'
            b'"finish_reason":"stop"}]}\n\n',
            b"data: [DONE]\n\n",
        ],
    ],
)
def test_wires_whose_usage_is_optional_give_no_note(reads: list[bytes]) -> None:
    end, _ = end_of(reads, "openai-chat")
    assert end.status == "complete"
    assert "stream" not in _response(end).extras
