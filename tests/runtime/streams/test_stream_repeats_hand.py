"""Hand-written streams of the documented formats: a call lost, doubled or changed is never `complete`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.projects import REPO_ROOT
from test_stream_repeats_damage import no_evidence
from test_stream_repeats_reuse import FILES, end_of

from toolgen.runtime.streams.aggregator import Aggregator, stream_events
from toolgen.runtime.streams.events import MessageEnd
from toolgen.runtime.wires.canonical import Response

from test_stream_properties import comparable

pytestmark = pytest.mark.skipif(not FILES, reason="../shared/payloads is absent: no recorded streams to replay")


# ---- hand-written streams of the documented formats: a call lost, doubled or changed is never `complete` ----


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _hand(wire: str, payloads: list[dict[str, Any]]) -> MessageEnd:
    """One payload a read (SSE for the SSE wires, JSON lines for the others), through the shortcuts and through
    the generic path: the same events."""
    if wire in ("anthropic", "openai-chat", "gemini"):
        reads = [
            (b"event: " + p["type"].encode() + b"\n" if wire == "anthropic" and "type" in p else b"")
            + b"data: "
            + _json(p)
            + b"\n\n"
            for p in payloads
        ]
    else:
        reads = [_json(p) + b"\n" for p in payloads]
    fast = list(stream_events(reads, wire))
    aggregator = Aggregator(wire)
    generic = [event for read in reads for event in aggregator.feed(read)] + aggregator.close()
    assert comparable(fast) == comparable(generic), wire
    return end_of(fast)


def _args(end: MessageEnd) -> list[tuple[str, Any]]:
    assert isinstance(end.response, Response)
    return [
        (call["id"], json.loads(call["function"]["arguments"])) for call in end.response.message.get("tool_calls") or ()
    ]


_A_START = {
    "type": "message_start",
    "message": {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "c",
        "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    },
}
_A_END = [
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
    {"type": "message_stop"},
]


def _anthropic(index: int, id: str, arguments: str | None, given: Any = None) -> list[dict[str, Any]]:
    block = {"type": "tool_use", "id": id, "name": "f", "input": {} if given is None else given}
    delta = {"type": "input_json_delta", "partial_json": arguments}
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *([{"type": "content_block_delta", "index": index, "delta": delta}] if arguments is not None else []),
        {"type": "content_block_stop", "index": index},
    ]


def _bedrock(index: int, id: str, arguments: str | None, given: Any = None) -> list[dict[str, Any]]:
    tool: dict[str, Any] = {"toolUseId": id, "name": "f", **({} if given is None else {"input": given})}
    return [
        {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": tool}}},
        *(
            [{"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": arguments}}}}]
            if arguments is not None
            else []
        ),
        {"contentBlockStop": {"contentBlockIndex": index}},
    ]


_B_START = [{"messageStart": {"role": "assistant"}}]
_B_END = [
    {"messageStop": {"stopReason": "tool_use"}},
    {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}},
]


def _cohere(index: int, id: str, arguments: str) -> list[dict[str, Any]]:
    call = {"id": id, "type": "function", "function": {"name": "f", "arguments": ""}}
    return [
        {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}},
        {
            "type": "tool-call-delta",
            "index": index,
            "delta": {"message": {"tool_calls": {"function": {"arguments": arguments}}}},
        },
        {"type": "tool-call-end", "index": index},
    ]


_C_START = [{"id": "x", "type": "message-start", "delta": {"message": {"role": "assistant"}}}]
_C_END = [
    {
        "type": "message-end",
        "delta": {"finish_reason": "TOOL_CALL", "usage": {"billed_units": {"input_tokens": 1, "output_tokens": 1}}},
    }
]


def _interactions(index: int, id: str, arguments: str) -> list[dict[str, Any]]:
    step = {"id": id, "type": "function_call", "name": "f", "arguments": {}}
    return [
        {"index": index, "step": step, "event_type": "step.start"},
        {"index": index, "delta": {"arguments": arguments, "type": "arguments_delta"}, "event_type": "step.delta"},
        {"index": index, "event_type": "step.stop"},
    ]


_I_START = [{"interaction": {"id": "i", "status": "in_progress"}, "event_type": "interaction.created"}]
_I_END = [{"interaction": {"id": "i", "status": "requires_action"}, "event_type": "interaction.completed"}]

_INDEXED = {
    "anthropic": (lambda i, id, a: _anthropic(i, id, a), [_A_START], _A_END),
    "bedrock-converse": (lambda i, id, a: _bedrock(i, id, a), _B_START, _B_END),
    "cohere": (_cohere, _C_START, _C_END),
    "google-interactions": (_interactions, _I_START, _I_END),
}


def test_an_anthropic_or_bedrock_call_s_input_in_its_start_is_its_arguments() -> None:
    a = lambda *calls: [_A_START, *(e for c in calls for e in c), *_A_END]  # noqa: E731
    end = _hand("anthropic", a(_anthropic(0, "tA", None, {"x": 1})))
    assert (end.status, _args(end)) == ("complete", [("tA", {"x": 1})])
    end = _hand("anthropic", a(_anthropic(0, "tA", '{"x":1}', {"x": 1})))
    assert (end.status, _args(end)) == ("complete", [("tA", {"x": 1})])
    # Both, disagreeing: the deltas (the documented form) are taken, and the stream is incomplete.
    end = _hand("anthropic", a(_anthropic(0, "tA", '{"x":2}', {"x": 1})))
    assert (end.status, _args(end)) == ("incomplete", [("tA", {"x": 2})])
    b = lambda *calls: [*_B_START, *(e for c in calls for e in c), *_B_END]  # noqa: E731
    end = _hand("bedrock-converse", b(_bedrock(0, "tA", None, {"x": 1})))
    assert (end.status, _args(end)) == ("complete", [("tA", {"x": 1})])
    end = _hand("bedrock-converse", b(_bedrock(0, "tA", '{"x":2}', {"x": 1})))
    assert (end.status, _args(end)) == ("incomplete", [("tA", {"x": 2})])


@pytest.mark.parametrize("wire", sorted(_INDEXED))
def test_a_call_id_again_at_a_new_index_is_a_repeat_or_makes_the_stream_incomplete(wire: str) -> None:
    call, head, tail = _INDEXED[wire]
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), *call(1, "A", '{"x": 1}'), *tail])
    assert (end.status, _args(end), end.duplicates_ignored) == ("complete", [("A", {"x": 1})], 1)
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), *call(1, "A", '{"x":9}'), *tail])
    assert (end.status, _args(end)) == ("incomplete", [("A", {"x": 1})])
    # A new id at the next index is a new call, as before.
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), *call(1, "B", '{"x":1}'), *tail])
    assert (end.status, _args(end)) == ("complete", [("A", {"x": 1}), ("B", {"x": 1})])


def test_two_openai_chat_calls_under_one_id_are_never_complete() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    calls = [
        chunk(
            {
                "tool_calls": [
                    {"index": i, "id": "A", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}}
                ]
            }
        )
        for i in (0, 1)
    ]
    end = _hand("openai-chat", [chunk({"role": "assistant"}), *calls, chunk({}, "tool_calls")])
    assert end.status == "incomplete"


def _gemini(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "g"}


def _call(name: str, args: dict[str, Any], **marks: str) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
    if "id" in marks:
        part["functionCall"]["id"] = marks["id"]
    if "signature" in marks:
        part["thoughtSignature"] = marks["signature"]
    return part


def test_a_gemini_or_ollama_part_under_a_mark_taken_is_a_repeat_only_when_it_is_the_same() -> None:
    same = _call("f", {"x": 1}, id="a")
    end = _hand("gemini", [_gemini([same]), _gemini([same], "STOP")])
    assert (end.status, end.duplicates_ignored) == ("complete", 1)
    for again in (_call("f", {"x": 2}, id="a"), _call("g", {"x": 1}, signature="S")):
        first = _call("f", {"x": 1}, **({"id": "a"} if "id" in again["functionCall"] else {"signature": "S"}))
        end = _hand("gemini", [_gemini([first]), _gemini([again], "STOP")])
        assert (end.status, len(_args(end))) == ("incomplete", 1), again
    # A new call after the finishReason, carrying its own: not the finishing chunk again.
    end = _hand("gemini", [_gemini([_call("f", {"x": 1})], "STOP"), _gemini([_call("rm", {"p": "/"})], "STOP")])
    assert end.status == "incomplete"
    # Two whole bodies one after the other, the second with another call.
    body = [_gemini([{"text": "ok"}]), _gemini([_call("f", {"x": 1})], "STOP")]
    end = _hand("gemini", [*body, body[0], _gemini([_call("g", {"y": 2})], "STOP")])
    assert end.status == "incomplete"

    def line(stamp: str, args: dict[str, Any] | None, done: bool = False) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if args is not None:
            message["tool_calls"] = [{"id": "a", "function": {"name": "f", "arguments": args}}]
        return {
            "model": "m",
            "created_at": stamp,
            "message": message,
            "done": done,
            **({"done_reason": "stop"} if done else {}),
        }

    end = _hand("ollama", [line("t1", {"x": 1}), line("t2", {"x": 1}), line("t3", None, True)])
    assert (end.status, end.duplicates_ignored, len(_args(end))) == ("complete", 1, 1)
    end = _hand("ollama", [line("t1", {"x": 1}), line("t2", {"x": 2}), line("t3", None, True)])
    assert (end.status, _args(end)) == ("incomplete", [("a", {"x": 1})])


@pytest.mark.parametrize("wire", sorted(_INDEXED))
def test_a_payload_the_wire_cannot_place_is_never_silence(wire: str) -> None:
    call, head, tail = _INDEXED[wire]
    end = _hand(wire, [*head, *call(0, "A", '{"x":1}'), {}, *tail])
    assert end.status == "incomplete"


def test_another_wire_s_stream_read_as_anthropic_is_not_complete() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    end = _hand("anthropic", [_A_START, chunk, *_A_END])
    assert end.status == "incomplete"


def test_a_lost_chunk_of_a_signed_gemini_call_is_what_the_readme_says_cannot_be_told() -> None:
    """Nothing in a Gemini stream says a call should have come (finishReason is STOP either way): a lost chunk
    holding a signed call leaves a complete answer without it, and the table in docs/payloads.md says so."""
    text = _gemini([{"text": "Let me look."}])
    signed = _gemini([_call("f", {"x": 1}, signature="S")])
    end = _hand("gemini", [text, _gemini([], "STOP")])
    assert (end.status, _args(end)) == ("complete", [])
    assert "drop" in no_evidence()["gemini"]
    row = (REPO_ROOT / "docs" / "payloads.md").read_text(encoding="utf-8").split("| `gemini` |", 1)[1].split("\n", 1)[0]
    assert "signed or not" in row.split("|")[1]
    end = _hand("gemini", [text, signed, _gemini([], "STOP")])
    assert (end.status, len(_args(end))) == ("complete", 1)
