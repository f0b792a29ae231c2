"""Google Interactions' `budget_exceeded` status is a finish the table knows: `length`.

The Interactions API reference (Status enum): "BUDGET_EXCEEDED: The interaction was halted because the token budget
was exceeded", beside "INCOMPLETE: The interaction is completed, but contains incomplete results (e.g. hitting
maxTokens)", which reads as `length` too. So the answer stopped for a limit, as `length` says, with no
unknown_finish note, whole and streamed, and the status goes back to the wire as it came.
"""

from __future__ import annotations

import json
from typing import Any

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import Finish, MessageEnd
from toolgen.runtime.wires.canonical import Response
from toolgen.runtime.wires.codecs import codec

WIRE = "google-interactions"
HEAD = {"id": "v1_1", "object": "interaction", "model": "gemini-2.5-flash"}
USAGE = {"total_input_tokens": 3, "total_output_tokens": 1, "total_tokens": 4}


def _whole(status: str) -> dict[str, Any]:
    return {**HEAD, "status": status, "outputs": [{"type": "text", "text": "Hi"}], "usage": USAGE}


def test_a_whole_interaction_halted_by_its_budget_stopped_for_length() -> None:
    body = _whole("budget_exceeded")
    response = codec(WIRE).decode_response(body)
    assert isinstance(response, Response)
    assert response.finish == {"reason": "length", "raw": "budget_exceeded"}
    assert "notes" not in response.extras
    assert response.message["content"] == "Hi"
    assert codec(WIRE).encode_response(response) == body
    # Another wire's length reads back as this wire's word for it.
    other = codec("openai-chat").decode_response(codec("openai-chat").encode_response(response))
    assert isinstance(other, Response)
    assert other.finish == {"reason": "length", "raw": "length"}


def test_a_streamed_interaction_halted_by_its_budget_stopped_for_length() -> None:
    events = [
        {"event_type": "interaction.created", "interaction": {**HEAD, "status": "in_progress"}},
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output", "content": []}},
        {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Hi"}},
        {"event_type": "step.stop", "index": 0},
        {"event_type": "interaction.status_update", "interaction_id": "v1_1", "status": "budget_exceeded"},
        {"event_type": "interaction.completed", "interaction": {**HEAD, "status": "budget_exceeded", "usage": USAGE}},
    ]
    reads = [b"data: " + json.dumps(event).encode() + b"\n\n" for event in events]
    out = list(stream_events(reads, WIRE))
    end = out[-1]
    assert isinstance(end, MessageEnd)
    assert (end.status, end.complete) == ("complete", True)
    assert [(e.reason, e.raw) for e in out if isinstance(e, Finish)] == [("length", "budget_exceeded")]
    response = end.response
    assert isinstance(response, Response)
    assert response.finish == {"reason": "length", "raw": "budget_exceeded"}
    assert "notes" not in response.extras and "stream" not in response.extras
