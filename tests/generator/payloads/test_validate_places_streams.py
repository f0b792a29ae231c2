"""`toolgen validate` places bad arguments in a recorded stream at the event that started the call, in every framing."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import pytest
from support.projects import Project, shared_dir
from test_validate_places_bodies import ARGS, ARGS_TEXT, BAD, NAME, SENTENCE, findings, invoke, place

import toolgen

# ---- bad arguments in a stream ----


def sse(events: list[tuple[str | None, dict[str, Any]]]) -> str:
    return "".join((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n" for name, data in events)


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _chat_stream() -> str:
    start = {"index": 0, "id": "c1", "type": "function", "function": {"name": NAME, "arguments": ""}}
    first = {
        "index": 0,
        "id": "c0",
        "type": "function",
        "function": {"name": NAME, "arguments": '{"location": "Oslo"}'},
    }
    return (
        sse(
            [
                (None, chat_chunk({"role": "assistant", "content": "Looking."})),
                (None, chat_chunk({"tool_calls": [first]})),
                (None, chat_chunk({"tool_calls": [{**start, "index": 1}]})),
                (None, chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"location": '}}]})),
                (None, chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": f"{BAD}}}"}}]})),
                (None, chat_chunk({}, "tool_calls")),
            ]
        )
        + "data: [DONE]\n\n"
    )


def _anthropic_stream() -> str:
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": [], "usage": usage}
    return sse(
        [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {"type": "tool_use", "id": "toolu_1", "name": NAME, "input": {}},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": ARGS_TEXT},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            (
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}},
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def _responses_stream() -> str:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": NAME,
        "arguments": "",
        "status": "in_progress",
    }
    done = {**item, "arguments": ARGS_TEXT, "status": "completed"}
    response = {"id": "r", "object": "response", "status": "completed", "model": "g", "output": [done]}
    events = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {**response, "status": "in_progress", "output": []},
        },
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 2,
            "item_id": "fc_1",
            "output_index": 0,
            "delta": ARGS_TEXT,
        },
        {
            "type": "response.function_call_arguments.done",
            "sequence_number": 3,
            "item_id": "fc_1",
            "output_index": 0,
            "arguments": ARGS_TEXT,
        },
        {"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": done},
        {"type": "response.completed", "sequence_number": 5, "response": response},
    ]
    return "".join(json.dumps(event) + "\n" for event in events)


def _gemini_stream() -> str:
    def chunk(parts: list[Any], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "modelVersion": "g"}

    chunks = [
        chunk([{"text": "Sure."}]),
        chunk(
            [
                {"functionCall": {"name": NAME, "args": {"location": "Oslo"}}},
                {"functionCall": {"name": NAME, "args": ARGS}},
            ]
        ),
        chunk([{"text": ""}], "STOP"),
    ]
    return "".join(json.dumps(c) + "\n" for c in chunks)


def _cohere_stream() -> str:
    start = {"id": "c1", "type": "function", "function": {"name": NAME, "arguments": ""}}
    events = [
        {"type": "message-start", "id": "x", "delta": {"message": {"role": "assistant"}}},
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will"}}},
        {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": start}}},
        {
            "type": "tool-call-delta",
            "index": 0,
            "delta": {"message": {"tool_calls": {"function": {"arguments": ARGS_TEXT}}}},
        },
        {"type": "tool-call-end", "index": 0},
        {
            "type": "message-end",
            "delta": {"finish_reason": "TOOL_CALL", "usage": {"tokens": {"input_tokens": 1, "output_tokens": 1}}},
        },
    ]
    return "".join(json.dumps(event) + "\n" for event in events)


def _ollama_stream() -> str:
    chunks = [
        {"model": "l", "message": {"role": "assistant", "content": "ok"}, "done": False},
        {
            "model": "l",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": NAME, "arguments": ARGS}}],
            },
            "done": False,
        },
        {"model": "l", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ]
    return "".join(json.dumps(c) + "\n" for c in chunks)


# (kind, file name, text, text in the event carrying the call, the call's arguments in that event as the key and
# the value the place is at, the pointer)
_EMPTY = '"arguments": ""'
STREAMS: list[tuple[str, str, str, str, str, str]] = [
    (
        "openai-chat.response",
        "chat.sse",
        _chat_stream(),
        '"id": "c1"',
        _EMPTY,
        "/choices/0/delta/tool_calls/0/function/arguments",
    ),
    (
        "anthropic.response",
        "anthropic.sse",
        _anthropic_stream(),
        '"id": "toolu_1"',
        '"input": {}',
        "/content_block/input",
    ),
    (
        "openai-responses.response",
        "responses.jsonl",
        _responses_stream(),
        "output_item.added",
        _EMPTY,
        "/item/arguments",
    ),
    (
        "gemini.response",
        "gemini.jsonl",
        _gemini_stream(),
        f'"location": {BAD}',
        f'"location": {BAD}',
        "/candidates/0/content/parts/1/functionCall/args/location",
    ),
    (
        "cohere.response",
        "cohere.jsonl",
        _cohere_stream(),
        "tool-call-start",
        _EMPTY,
        "/delta/message/tool_calls/function/arguments",
    ),
    (
        "ollama.response",
        "ollama.ndjson",
        _ollama_stream(),
        f"{BAD}",
        f'"location": {BAD}',
        "/message/tool_calls/0/function/arguments/location",
    ),
]


_ARRAY = [json.loads(line) for line in _gemini_stream().splitlines()]
# Gemini's alt=json stream: one JSON array, its pointers into the file itself.
STREAMS.append(
    (
        "gemini.response",
        "gemini-array.json",
        json.dumps(_ARRAY, indent=1),
        f'"location": {BAD}',
        f'"location": {BAD}',
        "/1/candidates/0/content/parts/1/functionCall/args/location",
    )
)


@pytest.mark.parametrize(("kind", "name", "text", "event", "value", "pointer"), STREAMS, ids=[s[1] for s in STREAMS])
def test_bad_arguments_in_a_stream_are_placed_at_the_event_that_started_the_call(
    built: Project, kind: str, name: str, text: str, event: str, value: str, pointer: str
) -> None:
    path = f"streams/{name}"
    built.write(path, text)
    result = invoke(built, path, "--as", kind)
    assert result.exit_code == 1, result.output
    assert "1 record(s), 1 invalid" in result.stderr
    line, _ = place(text, event)
    # The event's line; the column of the call's arguments in it (of the value, where the event holds it whole:
    # where it holds a fragment or nothing yet, the pointer stops at the arguments and the sentence names the place).
    key, _, _ = value.partition(": ")
    col = text.splitlines()[line - 1].index(value) + len(key) + len(": ") + 1
    expected = f"{path}:{line}:{col}: error arguments-invalid {pointer}: {SENTENCE}"
    assert result.stdout.splitlines() == [expected]


def eventstream_frame(event: str, payload: dict[str, Any]) -> bytes:
    """One AWS eventstream message, as Bedrock's ConverseStream sends it."""
    headers = b""
    for key, value in ((":event-type", event), (":content-type", "application/json"), (":message-type", "event")):
        headers += bytes([len(key)]) + key.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
    body = json.dumps(payload).encode()
    total = 16 + len(headers) + len(body)
    prelude = struct.pack(">II", total, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def test_bad_arguments_in_a_bedrock_eventstream_are_placed_at_its_frame(built: Project) -> None:
    frames = [
        ("messageStart", {"role": "assistant", "p": "abc"}),
        (
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": NAME}}, "p": "ab"},
        ),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": ARGS_TEXT}}, "p": "a"}),
        ("contentBlockStop", {"contentBlockIndex": 0, "p": "abcd"}),
        ("messageStop", {"stopReason": "tool_use", "p": "ab"}),
        (
            "metadata",
            {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1}, "p": "a"},
        ),
    ]
    data = b"".join(eventstream_frame(event, payload) for event, payload in frames)
    (built.root / "streams").mkdir(exist_ok=True)
    (built.root / "streams/bedrock.eventstream").write_bytes(data)
    code, found = findings(built, "streams/bedrock.eventstream", "bedrock-converse.response")
    assert code == 1
    start = data.index(b'{"contentBlockIndex": 0, "start"')
    # A binary file: the payload's place counted in bytes, its newline bytes ending lines.
    line = data.count(b"\n", 0, start) + 1
    col = start - (data.rfind(b"\n", 0, start) + 1) + 1
    assert [(f["line"], f["col"], f["rule"], f["pointer"]) for f in found] == [
        (
            line,
            col + len('{"contentBlockIndex": 0, "start": {"toolUse": '),
            "arguments-invalid",
            "/start/toolUse",
        )
    ]


def test_a_stream_summary_counts_the_invalid_call_and_the_fault_of_a_cut_stream_is_at_its_end(built: Project) -> None:
    built.write("streams/summary.sse", _chat_stream())
    result = invoke(built, "streams/summary.sse", "--as", "openai-chat.response", "--summary", "--format", "json")
    report = json.loads(result.stdout)
    row = next(tool for tool in report["tools"] if tool["tool"] == NAME)
    assert (row["calls"], row["invalid_calls"], row["invalid_by_rule"]) == (2, 1, {"arguments-invalid": 1})
    cut = _chat_stream().split("data: {", 5)
    text = "data: {".join(cut[:5])  # the call's last fragment and everything after it never came
    built.write("streams/cut.sse", text)
    code, found = findings(built, "streams/cut.sse", "openai-chat.response")
    last_event = text.rstrip("\n").rfind("\n") + 1
    assert code == 1 and found and all(f["rule"] == "stream-invalid" for f in found)
    assert {(f["line"], f["col"]) for f in found} == {(text.count("\n", 0, last_event) + 1, len("data: ") + 1)}


def test_every_recorded_stream_places_each_call_at_the_event_that_started_it(make_project: Any) -> None:
    """On every wire's recorded streams: tools that refuse every call, each refusal at the call's first event."""
    from toolgen.runtime import Response, aggregate

    streams = sorted(shared_dir("payloads").glob("*/stream/*"))
    calls = {path: _calls(aggregate(path.read_bytes()), Response) for path in streams}
    project: Project = make_project("refusing_sdk")
    for name in sorted({name for names in calls.values() for name in names}):
        schema = "{type: object, required: [zzz], properties: {zzz: {type: integer}}}"
        project.write(f"schemas/{name}.yaml", f"name: {name}\ndescription: Refuses.\ninputSchema: {schema}\n")
    assert project.cli("build").returncode == 0
    wires = set()
    for path, names in calls.items():
        found = list(toolgen.validate([path], kind=f"{path.parent.parent.name}.response", root=project.root))
        assert [d.rule for d in found] == ["arguments-invalid"] * len(names), (path, found)
        lines = path.read_bytes().replace(b"\r\n", b"\n").split(b"\n")
        for finding in found:
            # A required member that is not there: at the arguments the event holds, the sentence naming /zzz.
            assert "at /zzz:" in finding.message and finding.message.startswith(finding.pointer), finding
            # The line holds the event that started the call: it names the tool.
            assert any(name.encode() in lines[finding.line - 1] for name in names), (path, finding)
        if names:
            wires.add(path.parent.parent.name)
    assert len(wires) >= 8, wires


def _calls(result: Any, response: type) -> list[str]:
    if not isinstance(result, response):
        return []
    return [call["function"]["name"] for call in result.message.get("tool_calls") or ()]
