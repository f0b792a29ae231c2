"""An OpenAI chat stream that was asked for usage and ended without it: a note says so, and the status stands.

With `stream_options: {"include_usage": true}` (which HTTPModel sends for this wire) OpenAI documents a last chunk
with `choices: []` and the `usage` object, and `"usage": null` on every chunk before it. A stream whose chunks
carried that null key and that ended without a usage object lost its usage: the answer is whole (each choice said
its finish_reason), so the stream stays `complete` and `extras["stream"]["notes"]` says the counts are missing. A
stream whose chunks never carried the key (usage not asked for) gets no note.
"""

from __future__ import annotations

import json
from typing import Any

from support.projects import shared_dir

from toolgen.runtime.loop.recovery import failure_kind
from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import MessageEnd, Usage
from toolgen.runtime.wires.canonical import Response

_NOTE = {
    "type": "usage_missing",
    "message": "the chunks carried `usage: null`, so usage was asked for (stream_options.include_usage),"
    " yet no chunk carried the usage: the token counts are missing",
}
_USAGE = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}


def _chunk(choices: list[dict[str, Any]], usage: Any = "absent", mark: str | None = None) -> bytes:
    """One chunk in OpenAI's key order: with include_usage it carries `usage` (null but on the last chunk)."""
    payload: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1754432623,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_1",
        "choices": choices,
    }
    if usage != "absent":
        payload["usage"] = usage
    if mark is not None:
        payload["obfuscation"] = mark
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def _delta(delta: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]


def _stream(usage_key: bool, last: Any = None, done: bool = True) -> list[bytes]:
    """A text answer "Hello" in four chunks; `usage_key`: each carries `"usage": null`; `last`: the usage chunk's."""
    key: Any = None if usage_key else "absent"
    reads = [
        _chunk(_delta({"role": "assistant", "content": "", "refusal": None}), key, "a1"),
        _chunk(_delta({"content": "Hel"}), key, "a2"),
        _chunk(_delta({"content": "lo"}), key, "a3"),
        _chunk(_delta({}, "stop"), key, "a4"),
    ]
    if last is not None:
        reads.append(_chunk([], last, "a5"))
    return [*reads, b"data: [DONE]\n\n"] if done else reads


def _end(reads: list[bytes]) -> tuple[MessageEnd, Response, list[Any]]:
    events = list(stream_events(reads, "openai-chat"))
    end = events[-1]
    assert isinstance(end, MessageEnd) and isinstance(end.response, Response)
    return end, end.response, events


def test_asked_for_usage_and_ended_without_its_chunk_is_complete_with_a_note() -> None:
    end, response, events = _end(_stream(usage_key=True))
    assert (end.status, end.complete) == ("complete", True)
    assert response.message["content"] == "Hello"
    assert response.finish == {"reason": "stop", "raw": "stop"}
    assert response.usage is None and not [e for e in events if isinstance(e, Usage)]
    assert response.extras["stream"] == {"complete": True, "status": "complete", "notes": [_NOTE]}
    # Whole: not an answer to ask again for.
    assert failure_kind(response) is None


def test_asked_for_usage_and_cut_after_the_finish_chunk_is_noted_too() -> None:
    # The finish chunk came, the usage chunk and [DONE] did not: the answer is whole, its usage lost.
    end, response, _ = _end(_stream(usage_key=True, done=False))
    assert end.status == "complete"
    assert response.extras["stream"] == {"complete": True, "status": "complete", "notes": [_NOTE]}


def test_the_usage_chunk_that_came_gives_no_note() -> None:
    end, response, events = _end(_stream(usage_key=True, last=_USAGE))
    assert end.status == "complete"
    assert response.usage == {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
    assert [e for e in events if isinstance(e, Usage)]
    assert "stream" not in response.extras and "notes" not in response.extras


def test_a_usage_chunk_with_an_empty_usage_is_noted() -> None:
    end, response, _ = _end(_stream(usage_key=True, last={}))
    assert end.status == "complete"
    assert response.usage is None
    assert response.extras["stream"]["notes"] == [_NOTE]


def test_usage_in_the_finishing_chunk_as_compatibles_send_it_gives_no_note() -> None:
    reads = [
        _chunk(_delta({"role": "assistant", "content": "Hi"}), None),
        _chunk(_delta({}, "stop"), _USAGE),
        b"data: [DONE]\n\n",
    ]
    end, response, _ = _end(reads)
    assert end.status == "complete"
    assert response.usage == {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
    assert "stream" not in response.extras


def test_a_stream_never_asked_for_usage_gives_no_note() -> None:
    end, response, _ = _end(_stream(usage_key=False))
    assert end.status == "complete"
    assert response.usage is None
    assert "stream" not in response.extras


def test_a_stream_cut_before_its_finish_says_cut_and_gives_no_usage_note() -> None:
    end, response, _ = _end(_stream(usage_key=True, done=False)[:3])
    assert end.status == "cut"
    assert "notes" not in response.extras["stream"]


def test_a_failed_stream_gives_no_usage_note() -> None:
    error = b'data: {"error":{"message":"overloaded","type":"server_error","code":null}}\n\n'
    end, response, _ = _end([*_stream(usage_key=True, done=False)[:3], error])
    assert end.status == "failed"
    assert "notes" not in response.extras.get("stream", {})


def test_a_recorded_openai_stream_without_its_usage_chunk_is_noted() -> None:
    recorded = shared_dir("payloads") / "openai-chat" / "stream"
    text = (recorded / "openai-gpt4o-single-tool-call-fragmented.sse").read_bytes()
    reads = [block + b"\n\n" for block in text.split(b"\n\n") if block.strip()]
    end, response, _ = _end(reads)
    assert end.status == "complete" and response.usage is not None
    assert "stream" not in response.extras
    usage_chunk = [read for read in reads if b'"choices":[]' in read]
    assert len(usage_chunk) == 1
    end, response, _ = _end([read for read in reads if read not in usage_chunk])
    assert (end.status, end.complete) == ("complete", True)
    assert response.message["tool_calls"][0]["function"]["name"] == "get_weather"
    assert response.usage is None
    assert response.extras["stream"] == {"complete": True, "status": "complete", "notes": [_NOTE]}
