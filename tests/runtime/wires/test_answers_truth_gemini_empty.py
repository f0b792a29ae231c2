"""A Gemini answer with no candidates is an answer only when the prompt was blocked.

The API's contract (GenerateContentResponse): "either all requested candidates are returned or no candidates at all;
no candidates are returned only if there was something wrong with the prompt (see prompt_feedback)", and Vertex AI's
"process blocked responses": a blocked prompt has `promptFeedback` populated and `candidates` unset. So a body with
neither candidates nor `promptFeedback.blockReason` lost its answer: it is an `invalid_response` error, as an OpenAI
body without `choices` is, never an empty answer that finished. Streamed, the prompt-blocked chunk is the whole
answer (complete, content_filter); a stream that ends before any candidate is cut, its usage kept.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolgen.runtime.clients.bodies import whole_response
from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import Finish, MessageEnd
from toolgen.runtime.wires.canonical import ProviderError, Response
from toolgen.runtime.wires.codecs import codec

MISSING = (
    "the response body could not be read: /candidates: expected at least one candidate, or"
    " promptFeedback.blockReason saying why there is none"
)
USAGE = {"promptTokenCount": 5, "totalTokenCount": 5}


def _sse(*payloads: dict[str, Any], done: bool = False) -> list[bytes]:
    reads = [b"data: " + json.dumps(payload).encode() + b"\r\n\r\n" for payload in payloads]
    return [*reads, b"data: [DONE]\r\n\r\n"] if done else reads


def _end(reads: list[bytes]) -> tuple[MessageEnd, list[Finish]]:
    events = list(stream_events(reads, "gemini"))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    return end, [event for event in events if isinstance(event, Finish)]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"candidates": []},
        {"candidates": [], "modelVersion": "gemini-2.5-flash"},
        {"candidates": None, "usageMetadata": USAGE},
        # Feedback without a block reason says nothing was wrong with the prompt: the candidates are missing.
        {"promptFeedback": {"safetyRatings": []}, "usageMetadata": USAGE},
    ],
)
def test_a_whole_body_without_candidates_or_a_block_reason_is_an_invalid_response(body: dict[str, Any]) -> None:
    content = json.dumps(body).encode()
    with pytest.raises(ProviderError) as raised:
        whole_response("gemini", content)
    error = raised.value
    assert (error.wire, error.type, error.code, error.status) == ("gemini", "invalid_response", None, None)
    assert error.message == MISSING
    assert error.raw == body
    with pytest.raises(ValueError, match="^/candidates: expected at least one candidate"):
        codec("gemini").decode_response(body)


def test_a_whole_body_of_a_blocked_prompt_is_still_a_content_filter_answer() -> None:
    body = {"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []}, "usageMetadata": USAGE}
    response = whole_response("gemini", json.dumps(body).encode())
    assert response.finish == {"reason": "content_filter", "raw": "SAFETY"}
    assert response.message == {"role": "assistant", "content": None}
    assert response.usage == {"input_tokens": 5, "output_tokens": 0, "total_tokens": 5}
    assert "notes" not in response.extras
    # It goes back to the same body.
    assert codec("gemini").encode_response(response) == body


def test_a_streamed_blocked_prompt_is_a_complete_content_filter_answer() -> None:
    chunk = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": USAGE, "modelVersion": "g"}
    end, finishes = _end(_sse(chunk))
    assert (end.status, end.complete) == ("complete", True)
    response = end.response
    assert isinstance(response, Response)
    assert response.finish == {"reason": "content_filter", "raw": "PROHIBITED_CONTENT"}
    assert [(f.reason, f.raw) for f in finishes] == [("content_filter", "PROHIBITED_CONTENT")]
    assert response.usage == {"input_tokens": 5, "output_tokens": 0, "total_tokens": 5}
    assert "stream" not in response.extras


@pytest.mark.parametrize(
    "reads",
    [
        _sse({"usageMetadata": USAGE, "modelVersion": "g"}),
        _sse({"candidates": [], "usageMetadata": USAGE, "modelVersion": "g"}),
    ],
)
def test_a_stream_that_ends_before_any_candidate_is_cut_with_its_usage_kept(reads: list[bytes]) -> None:
    end, finishes = _end(reads)
    assert (end.status, end.complete) == ("cut", False)
    response = end.response
    assert isinstance(response, Response)
    assert response.finish == {"reason": "error", "raw": None}
    assert [(f.reason, f.raw) for f in finishes] == [("error", None)]
    assert response.usage == {"input_tokens": 5, "output_tokens": 0, "total_tokens": 5}
    assert response.model == "g"
    assert response.extras["stream"] == {
        "complete": False,
        "status": "cut",
        "errors": [{"message": "stream ended before a finishReason", "code": None, "type": "cut", "provider": False}],
    }


def test_a_stream_said_done_without_any_candidate_is_not_an_answer() -> None:
    end, _ = _end(_sse({"candidates": [], "modelVersion": "g"}, done=True))
    assert (end.status, end.complete) == ("corrupt", False)
    response = end.response
    assert isinstance(response, Response)
    assert response.message == {"role": "assistant", "content": None}
    assert response.finish == {"reason": "error", "raw": None}
    assert response.extras["stream"]["errors"] == [
        {
            "message": "could not decode the gemini message built from the stream (ValueError: /candidates: expected"
            " at least one candidate, or promptFeedback.blockReason saying why there is none)",
            "code": None,
            "type": None,
            "provider": False,
        }
    ]
