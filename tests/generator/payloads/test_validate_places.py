"""`toolgen validate` places every problem of recorded traffic in the file: the body's own JSON pointer and line:col.

Tool call arguments found wrong in a provider body carry the body's pointer, on into the arguments (even when they
are JSON text in a string), at the value's line:col; in a recorded stream, the pointer into the event that
started the call, at that event's line. Malformed content blocks of every kind a wire documents are refused at
their pointer, and a record with one invalid message still has its other messages paired (results with calls).
Runs in this process (click's CliRunner) against one built project, so the SDK is imported once.
"""

from __future__ import annotations

import contextlib
import json
import struct
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.projects import Project, shared_dir

import toolgen
from toolgen.cli.main import main

# Unique in every file below: where it is, the argument's value is.
BAD = 12345
ARGS = {"location": BAD}
ARGS_TEXT = json.dumps(ARGS)
SENTENCE = f"arguments of 'get_current_weather' at /location: expected a string, got {BAD}"
NAME = "get_current_weather"


@pytest.fixture(scope="module")
def built(built_root: Path) -> Iterator[Project]:
    """The module's one built project: every test writes its own files in it.

    Its package has the name `sdk` to itself while this module runs, as in a `toolgen validate` process: with an
    `sdk` other tests of this worker imported from their own projects set aside, load_sdk would import the
    package anew on every run (the same findings, many times slower). What was set aside comes back after."""
    owned = [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]
    set_aside = {name: sys.modules.pop(name) for name in owned}
    yield Project(built_root)
    for name in [name for name in sys.modules if name == "sdk" or name.startswith("sdk.")]:
        del sys.modules[name]
    sys.modules.update(set_aside)


def invoke(project: Project, *args: str) -> Result:
    """`toolgen validate -C ROOT ARGS` in this process, paths relative to the project root."""
    with contextlib.chdir(project.root):
        return CliRunner().invoke(main, ["validate", "-q", "-C", str(project.root), *args])


def findings(project: Project, path: str, kind: str) -> tuple[int, list[dict[str, Any]]]:
    result = invoke(project, path, "--as", kind, "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def place(text: str, needle: str, after: str = "") -> tuple[int, int]:
    """1-based line:col of the first `needle` in `text` (past the first `after`, when given)."""
    offset = text.index(needle, text.index(after) if after else 0)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


# ---- bad arguments in a body ----

_CHAT_CALL = {"id": "c1", "type": "function", "function": {"name": NAME, "arguments": ARGS_TEXT}}
BODIES: list[tuple[str, Any, str]] = [
    (
        "openai-chat.response",
        {
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c0",
                                "type": "function",
                                "function": {"name": NAME, "arguments": '{"location": "Oslo"}'},
                            },
                            _CHAT_CALL,
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
        },
        "/choices/0/message/tool_calls/1/function/arguments/location",
    ),
    (
        "openai-chat.request",
        {
            "model": "m",
            "messages": [{"role": "user", "content": "w?"}, {"role": "assistant", "tool_calls": [_CHAT_CALL]}],
        },
        "/messages/1/tool_calls/0/function/arguments/location",
    ),
    (
        "openai-chat-camel.response",
        {
            "id": "x",
            "model": "m",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "toolCalls": [_CHAT_CALL]}, "finishReason": "tool_calls"}
            ],
        },
        "/choices/0/message/toolCalls/0/function/arguments/location",
    ),
    (
        "mistral.response",
        {
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"id": "abcdefghi", "function": {"name": NAME, "arguments": ARGS_TEXT}}],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
        },
        "/choices/0/message/tool_calls/0/function/arguments/location",
    ),
    (
        "anthropic.response",
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "c",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "tool_use", "id": "toolu_1", "name": NAME, "input": ARGS},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
        "/content/1/input/location",
    ),
    (
        "anthropic.request",
        {
            "model": "c",
            "max_tokens": 5,
            "messages": [
                {"role": "user", "content": "w?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": NAME, "input": ARGS}]},
            ],
        },
        "/messages/1/content/0/input/location",
    ),
    (
        "gemini.response",
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"functionCall": {"name": NAME, "args": ARGS}}]},
                    "finishReason": "STOP",
                }
            ]
        },
        "/candidates/0/content/parts/0/functionCall/args/location",
    ),
    (
        "gemini.request",
        {
            "contents": [
                {"role": "user", "parts": [{"text": "w?"}]},
                {"role": "model", "parts": [{"text": "let me see"}, {"functionCall": {"name": NAME, "args": ARGS}}]},
            ]
        },
        "/contents/1/parts/1/functionCall/args/location",
    ),
    (
        "bedrock-converse.response",
        {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [{"toolUse": {"toolUseId": "t1", "name": NAME, "input": ARGS}}],
                }
            },
            "stopReason": "tool_use",
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        },
        "/output/message/content/0/toolUse/input/location",
    ),
    (
        "openai-responses.response",
        {
            "id": "r",
            "object": "response",
            "status": "completed",
            "model": "g",
            "output": [
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": NAME, "arguments": ARGS_TEXT}
            ],
        },
        "/output/0/arguments/location",
    ),
    (
        "openai-responses.request",
        {
            "model": "g",
            "input": [
                {"role": "user", "content": "w?"},
                {"type": "function_call", "call_id": "call_1", "name": NAME, "arguments": ARGS_TEXT},
            ],
        },
        "/input/1/arguments/location",
    ),
    (
        "cohere.response",
        {
            "id": "x",
            "finish_reason": "TOOL_CALL",
            "message": {"role": "assistant", "tool_plan": "p", "tool_calls": [_CHAT_CALL]},
        },
        "/message/tool_calls/0/function/arguments/location",
    ),
    (
        "ollama.response",
        {
            "model": "l",
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": NAME, "arguments": ARGS}}],
            },
            "done": True,
            "done_reason": "stop",
        },
        "/message/tool_calls/0/function/arguments/location",
    ),
    (
        "google-interactions.response",
        {
            "id": "i",
            "status": "requires_action",
            "model": "g",
            "steps": [{"type": "function_call", "id": "f1", "name": NAME, "arguments": ARGS}],
        },
        "/steps/0/arguments/location",
    ),
]


@pytest.mark.parametrize(("kind", "body", "pointer"), BODIES, ids=[kind for kind, _, _ in BODIES])
def test_bad_arguments_in_a_body_carry_the_body_pointer_and_the_value_line_col(
    built: Project, kind: str, body: Any, pointer: str
) -> None:
    name = f"bodies/{kind}.json"
    text = json.dumps(body, indent=2)
    built.write(name, text)
    result = invoke(built, name, "--as", kind)
    assert result.exit_code == 1, result.output
    # The value's place: inside the arguments string when the wire sends them as JSON text.
    line, col = place(text, str(BAD))
    assert f"{name}:{line}:{col}: error arguments-invalid {pointer}: {SENTENCE}" in result.stdout.splitlines()
    code, found = findings(built, name, kind)
    assert code == 1 and [f["pointer"] for f in found if f["rule"] == "arguments-invalid"] == [pointer]


def test_a_jsonl_log_of_bodies_places_each_at_its_line(built: Project) -> None:
    kind, body, pointer = BODIES[0]
    good = json.loads(json.dumps(body).replace(ARGS_TEXT.replace('"', '\\"'), '{\\"location\\": \\"Rome\\"}'))
    text = "\n".join(json.dumps(b) for b in (good, body, good)) + "\n"
    built.write("bodies/log.jsonl", text)
    result = invoke(built, "bodies/log.jsonl", "--as", kind)
    assert result.exit_code == 1 and "3 record(s), 1 invalid" in result.stderr
    line, col = place(text, str(BAD))
    assert result.stdout.splitlines() == [
        f"bodies/log.jsonl:{line}:{col}: error arguments-invalid {pointer}: {SENTENCE}"
    ]
    assert line == 2


def test_canonical_records_point_into_the_arguments_too(built: Project) -> None:
    call = json.dumps({"role": "assistant", "content": None, "tool_calls": [_CHAT_CALL]})
    built.write("canonical/m.jsonl", call + "\n")
    code, found = findings(built, "canonical/m.jsonl", "message")
    assert code == 1
    assert [(f["line"], f["col"], f["pointer"]) for f in found] == [
        (1, place(call, str(BAD))[1], "/tool_calls/0/function/arguments/location")
    ]


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


# ---- malformed content blocks of every documented kind ----

# (kind, a valid body around {BLOCK}, [(malformed block, pointer of the problem within the block)])
_ANTHROPIC = {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": ["BLOCK"]}]}
_ANTHROPIC_ASSISTANT = {"model": "c", "max_tokens": 5, "messages": [{"role": "assistant", "content": ["BLOCK"]}]}
_CHAT_USER = {"model": "m", "messages": [{"role": "user", "content": ["BLOCK"]}]}
_RESPONSES_INPUT = {"model": "m", "input": [{"role": "user", "content": ["BLOCK"]}]}
_RESPONSES_ITEM = {"model": "m", "input": ["BLOCK"]}
_GEMINI = {"contents": [{"role": "user", "parts": ["BLOCK"]}]}
_BEDROCK = {"messages": [{"role": "user", "content": ["BLOCK"]}]}
_COHERE = {"model": "m", "messages": [{"role": "user", "content": ["BLOCK"]}]}
_INTERACTIONS = {"model": "m", "input": [{"type": "user_input", "content": ["BLOCK"]}]}
BLOCKS: list[tuple[str, dict[str, Any], Any, str]] = [
    ("anthropic.request", _ANTHROPIC, {"type": "image", "source": {"type": "base64"}}, "/source/data"),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "image", "source": {"type": "base64", "data": "AA=="}},
        "/source/media_type",
    ),
    ("anthropic.request", _ANTHROPIC, {"type": "image", "source": {"type": "path", "url": "x"}}, "/source/type"),
    ("anthropic.request", _ANTHROPIC, {"type": "text"}, "/text"),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "document", "source": {"type": "text", "media_type": "text/plain"}},
        "/source/data",
    ),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "tool_result", "tool_use_id": "toolu_7", "content": [{"type": "image", "source": {}}]},
        "/content/0/source/type",
    ),
    (
        "anthropic.request",
        _ANTHROPIC,
        {"type": "tool_result", "tool_use_id": "toolu_8", "is_error": "yes"},
        "/is_error",
    ),
    ("anthropic.request", _ANTHROPIC, {"type": "search_result", "source": "s", "title": "t"}, "/content"),
    (
        "anthropic.request",
        _ANTHROPIC_ASSISTANT,
        {"type": "tool_use", "id": "toolu_1", "name": NAME, "input": "x"},
        "/input",
    ),
    ("anthropic.request", _ANTHROPIC_ASSISTANT, {"type": "thinking", "thinking": "hm"}, "/signature"),
    ("anthropic.request", _ANTHROPIC_ASSISTANT, {"type": "redacted_thinking"}, "/data"),
    ("anthropic.request", _ANTHROPIC_ASSISTANT, {"type": "server_tool_use", "id": "s", "name": "web_search"}, "/input"),
    (
        "anthropic.response",
        {"id": "m", "type": "message", "role": "assistant", "content": ["BLOCK"]},
        {"type": "tool_use", "name": NAME, "input": {}},
        "/id",
    ),
    ("openai-chat.request", _CHAT_USER, {"type": "image_url", "image_url": {"detail": "low"}}, "/image_url/url"),
    (
        "openai-chat.request",
        _CHAT_USER,
        {"type": "image_url", "image_url": {"url": "u", "detail": "max"}},
        "/image_url/detail",
    ),
    (
        "openai-chat.request",
        _CHAT_USER,
        {"type": "input_audio", "input_audio": {"data": "AA=="}},
        "/input_audio/format",
    ),
    ("openai-chat.request", _CHAT_USER, {"type": "file", "file": {"filename": "a.pdf"}}, "/file"),
    ("openai-chat.request", _CHAT_USER, {"type": "text", "text": 5}, "/text"),
    ("openai-chat-camel.request", _CHAT_USER, {"type": "image_url", "imageUrl": {}}, "/imageUrl/url"),
    ("mistral.request", _CHAT_USER, {"type": "document_url"}, "/document_url"),
    ("openai-responses.request", _RESPONSES_INPUT, {"type": "input_image", "detail": "low"}, ""),
    ("openai-responses.request", _RESPONSES_INPUT, {"type": "input_file", "filename": "a.pdf"}, ""),
    ("openai-responses.request", _RESPONSES_INPUT, {"type": "input_text"}, "/text"),
    ("openai-responses.request", _RESPONSES_ITEM, {"type": "function_call_output", "call_id": "c1"}, "/output"),
    (
        "openai-responses.request",
        _RESPONSES_ITEM,
        {"type": "reasoning", "summary": [{"type": "summary_text"}]},
        "/summary/0/text",
    ),
    ("gemini.request", _GEMINI, {"inlineData": {"data": "AA=="}}, "/inlineData/mimeType"),
    ("gemini.request", _GEMINI, {"inline_data": {"mime_type": "image/png"}}, "/inline_data/data"),
    ("gemini.request", _GEMINI, {"fileData": {"mimeType": "image/png"}}, "/fileData/fileUri"),
    ("gemini.request", _GEMINI, {"functionResponse": {"name": NAME}}, "/functionResponse/response"),
    ("gemini.request", _GEMINI, {"executableCode": {"language": "PYTHON"}}, "/executableCode/code"),
    ("bedrock-converse.request", _BEDROCK, {"image": {"format": "png", "source": {}}}, "/image/source"),
    ("bedrock-converse.request", _BEDROCK, {"image": {"format": "bmp", "source": {"bytes": "AA=="}}}, "/image/format"),
    (
        "bedrock-converse.request",
        _BEDROCK,
        {"document": {"format": "pdf", "source": {"bytes": "AA=="}}},
        "/document/name",
    ),
    ("bedrock-converse.request", _BEDROCK, {"toolResult": {"content": [{"text": "x"}]}}, "/toolResult/toolUseId"),
    (
        "bedrock-converse.request",
        _BEDROCK,
        {"toolResult": {"toolUseId": "tooluse_7", "content": [{}]}},
        "/toolResult/content/0",
    ),
    (
        "bedrock-converse.request",
        _BEDROCK,
        {"reasoningContent": {"reasoningText": {"signature": "s"}}},
        "/reasoningContent/reasoningText/text",
    ),
    ("cohere.request", _COHERE, {"type": "image_url", "image_url": {}}, "/image_url/url"),
    ("cohere.request", _COHERE, {"type": "document", "document": {}}, "/document/data"),
    ("google-interactions.request", _INTERACTIONS, {"type": "image", "mime_type": "image/png"}, ""),
    (
        "google-interactions.request",
        _INTERACTIONS,
        {"type": "function_result", "name": NAME, "result": "x"},
        "/call_id",
    ),
    # Response bodies: the blocks a model sends back.
    (
        "gemini.response",
        {"candidates": [{"content": {"role": "model", "parts": ["BLOCK"]}, "finishReason": "STOP"}]},
        {"inlineData": {"data": "AA=="}},
        "/inlineData/mimeType",
    ),
    (
        "gemini.response",
        {"candidates": [{"content": {"role": "model", "parts": ["BLOCK"]}, "finishReason": "STOP"}]},
        {"functionCall": {"args": {}}},
        "/functionCall/name",
    ),
    (
        "bedrock-converse.response",
        {"output": {"message": {"role": "assistant", "content": ["BLOCK"]}}, "stopReason": "end_turn"},
        {"reasoningContent": {}},
        "/reasoningContent",
    ),
    (
        "bedrock-converse.response",
        {"output": {"message": {"role": "assistant", "content": ["BLOCK"]}}, "stopReason": "tool_use"},
        {"toolUse": {"toolUseId": "tooluse_1", "input": {}}},
        "/toolUse/name",
    ),
    (
        "openai-responses.response",
        {"id": "r", "object": "response", "status": "completed", "output": ["BLOCK"]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]},
        "/content/0/text",
    ),
    (
        "openai-responses.response",
        {"id": "r", "object": "response", "status": "completed", "output": ["BLOCK"]},
        {"type": "function_call", "call_id": "call_1", "name": NAME, "arguments": {}},
        "/arguments",
    ),
    (
        "openai-chat.response",
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "tool_calls": ["BLOCK"]}, "finish_reason": "tool_calls"}
            ],
        },
        {"id": "call_1", "type": "function", "function": {"name": NAME, "arguments": 5}},
        "/function/arguments",
    ),
    (
        "cohere.response",
        {"id": "x", "finish_reason": "COMPLETE", "message": {"role": "assistant", "content": ["BLOCK"]}},
        {"type": "thinking"},
        "/thinking",
    ),
    (
        "ollama.response",
        {
            "model": "l",
            "message": {"role": "assistant", "content": "", "tool_calls": ["BLOCK"]},
            "done": True,
            "done_reason": "stop",
        },
        {"function": {"name": NAME, "arguments": "{}"}},
        "/function/arguments",
    ),
    (
        "google-interactions.response",
        {"id": "i", "status": "requires_action", "steps": ["BLOCK"]},
        {"type": "function_call", "id": "f1", "name": NAME},
        "/arguments",
    ),
]


def _with_block(body: Any, block: Any) -> Any:
    return json.loads(json.dumps(body).replace('"BLOCK"', json.dumps(block)))


def _block_pointer(body: Any) -> str:
    """The pointer of the block's place ("BLOCK") in a body."""

    def walk(value: Any, pointer: str) -> str | None:
        if value == "BLOCK":
            return pointer
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            found = walk(item, f"{pointer}/{key}")
            if found is not None:
                return found
        return None

    found = walk(body, "")
    assert found is not None
    return found


@pytest.mark.parametrize("kind", sorted({kind for kind, *_ in BLOCKS}))
def test_malformed_content_blocks_of_every_documented_kind_are_refused_at_their_pointer(
    built: Project, kind: str
) -> None:
    cases = [(body, block, inner) for k, body, block, inner in BLOCKS if k == kind]
    text = "\n".join(json.dumps(_with_block(body, block)) for body, block, _ in cases) + "\n"
    name = f"blocks/{kind}.jsonl"
    built.write(name, text)
    code, found = findings(built, name, kind)
    assert code == 1
    wire_found = {(f["line"], f["pointer"]) for f in found if f["rule"] == "wire-invalid"}
    for line, (body, _, inner) in enumerate(cases, 1):
        assert (line, _block_pointer(body) + inner) in wire_found, (line, inner, found)
    for finding in found:
        assert finding["col"] > 1, finding
        if finding["rule"] == "wire-invalid":
            assert f"{finding['pointer'] or '/'}: expected" in finding["message"]


def test_every_recorded_body_has_the_shape_its_wire_documents(built: Project) -> None:
    """No false alarm: the recorded bodies of real providers pass the shape checks (their tools are not ours)."""
    bodies = sorted(p for p in shared_dir("payloads").glob("*/*/*.json") if p.parent.name != "stream")
    assert bodies
    for path in bodies:
        kind = f"{path.parent.parent.name}.{path.parent.name}"
        found = list(toolgen.validate([path], kind=kind, root=built.root))
        assert [d for d in found if d.rule == "wire-invalid"] == [], path


ERRORS = {
    "anthropic": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
    "openai-chat": {"error": {"message": "bad", "type": "invalid_request_error", "code": None}},
    "openai-chat-camel": {"error": {"message": "bad", "type": "invalid_request_error"}},
    "mistral": {"object": "error", "message": "bad", "type": "invalid_request_error", "code": 1000},
    "openai-responses": {"error": {"message": "bad", "type": "invalid_request_error", "code": "x"}},
    "gemini": {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}},
    "google-interactions": {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}},
    "bedrock-converse": {"message": "bad"},
    "cohere": {"id": "x", "message": "bad"},
    "ollama": {"error": "model does not support tools"},
}


@pytest.mark.parametrize("wire", sorted(ERRORS))
def test_an_error_body_has_no_blocks_to_find_wrong(built: Project, wire: str) -> None:
    built.write(f"errors/{wire}.json", json.dumps(ERRORS[wire]))
    result = invoke(built, f"errors/{wire}.json", "--as", f"{wire}.response")
    assert result.exit_code == 0 and result.stdout == "", result.output


# ---- pairing over the valid messages of a partly invalid record ----

_STRAY = "c9"
# (kind, body with one message its decoder refuses and a result answering no call, the result's id pointer)
PARTLY_INVALID: list[tuple[str, Any, str]] = [
    (
        "openai-chat.request",
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "w?"},
                {"role": "wizard", "content": "x"},
                {"role": "tool", "tool_call_id": _STRAY, "content": "x"},
            ],
        },
        "/messages/2/tool_call_id",
    ),
    (
        "openai-chat-camel.request",
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "w?"},
                {"role": "wizard", "content": "x"},
                {"role": "tool", "toolCallId": _STRAY, "content": "x"},
            ],
        },
        "/messages/2/toolCallId",
    ),
    (
        "mistral.request",
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "w?"},
                {"role": "wizard", "content": "x"},
                {"role": "tool", "tool_call_id": _STRAY, "content": "x"},
            ],
        },
        "/messages/2/tool_call_id",
    ),
    (
        "cohere.request",
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "w?"},
                {"role": "wizard", "content": "x"},
                {"role": "tool", "tool_call_id": _STRAY, "content": "x"},
            ],
        },
        "/messages/2/tool_call_id",
    ),
    (
        "anthropic.request",
        {
            "model": "c",
            "max_tokens": 5,
            "messages": [
                {"role": "user", "content": "w?"},
                {"role": "assistant", "content": 5},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": _STRAY, "content": "x"}]},
            ],
        },
        "/messages/2/content/0/tool_use_id",
    ),
    (
        "gemini.request",
        {
            "contents": [
                {"role": "user", "parts": [{"text": "w?"}]},
                {"role": "model", "parts": 5},
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"id": _STRAY, "name": NAME, "response": {"output": "x"}}}],
                },
            ]
        },
        "/contents/2/parts/0/functionResponse/id",
    ),
    (
        "bedrock-converse.request",
        {
            "messages": [
                {"role": "user", "content": [{"text": "w?"}]},
                {"role": "assistant", "content": 5},
                {"role": "user", "content": [{"toolResult": {"toolUseId": _STRAY, "content": [{"text": "x"}]}}]},
            ]
        },
        "/messages/2/content/0/toolResult/toolUseId",
    ),
    (
        "openai-responses.request",
        {
            "model": "m",
            "input": [
                {"role": "user", "content": "w?"},
                {"type": "function_call", "name": NAME, "arguments": "{}"},
                {"type": "function_call_output", "call_id": _STRAY, "output": "x"},
            ],
        },
        "/input/2/call_id",
    ),
    (
        "google-interactions.request",
        {
            "model": "m",
            "input": [
                {"type": "user_input", "content": [{"type": "text", "text": "w?"}]},
                {"type": "function_call", "name": NAME, "arguments": {}},
                {
                    "type": "user_input",
                    "content": [{"type": "function_result", "call_id": _STRAY, "name": NAME, "result": "x"}],
                },
            ],
        },
        "/input/2/content/0/call_id",
    ),
]


@pytest.mark.parametrize(("kind", "body", "pointer"), PARTLY_INVALID, ids=[k for k, _, _ in PARTLY_INVALID])
def test_a_request_with_a_refused_message_still_pairs_its_other_messages(
    built: Project, kind: str, body: Any, pointer: str
) -> None:
    text = json.dumps(body)
    name = f"pairing/{kind}.json"
    built.write(name, text)
    code, found = findings(built, name, kind)
    assert code == 1
    assert [f["rule"] for f in found] == ["wire-invalid", "pairing-invalid"], found
    stray = found[1]
    assert stray["pointer"] == pointer and f"tool result for {_STRAY!r}" in stray["message"]
    assert (stray["line"], stray["col"]) == place(text, f'"{_STRAY}"')


def test_a_result_whose_call_is_in_a_refused_message_is_not_called_unanswered(built: Project) -> None:
    broken_call = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": 5}}]}
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "w?"},
            broken_call,
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "tool", "tool_call_id": _STRAY, "content": "x"},
        ],
    }
    built.write("pairing/explained.json", json.dumps(body))
    code, found = findings(built, "pairing/explained.json", "openai-chat.request")
    assert code == 1
    assert [(f["rule"], f["pointer"]) for f in found] == [
        ("wire-invalid", "/messages/1/tool_calls/0/function/name"),
        ("pairing-invalid", "/messages/3/tool_call_id"),
    ]


def test_messages_with_an_invalid_one_are_still_paired(built: Project) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": NAME, "arguments": '{"location": "Oslo"}'}}
    records = [
        # An invalid message, and a result answering nothing: the pairing is still checked.
        [{"role": "user", "content": 5}, {"role": "tool", "tool_call_id": _STRAY, "content": "x"}],
        # The call is in the invalid message: its result is not said to answer nothing.
        [
            {"role": "assistant", "content": 5, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
        ],
        # A valid call no result answers, after an invalid message.
        [{"role": "wizard", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [call]}],
    ]
    text = "\n".join(json.dumps(record) for record in records) + "\n"
    built.write("pairing/messages.jsonl", text)
    code, found = findings(built, "pairing/messages.jsonl", "messages")
    assert code == 1
    assert [(f["line"], f["rule"], f["pointer"]) for f in found] == [
        (1, "payload-invalid", "/0/content"),
        (1, "pairing-invalid", "/1/tool_call_id"),
        (2, "payload-invalid", "/0/content"),
        (3, "payload-invalid", "/0/role"),
        (3, "pairing-invalid", "/1/tool_calls/0"),
    ]
    assert found[1]["col"] == place(text.splitlines()[0], f'"{_STRAY}"')[1]


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


# ---- a body of another wire ----


ANTHROPIC_REQUEST = {
    "model": "claude",
    "max_tokens": 10,
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": NAME, "input": {"location": "P"}}]},
    ],
}
ANTHROPIC_RESPONSE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "content": [{"type": "text", "text": "hi"}],
    "model": "c",
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


@pytest.mark.parametrize(
    ("body", "kind", "said"),
    [
        # openai-chat reads this request without fault, its call gone: refused, not passed as valid.
        (ANTHROPIC_REQUEST, "openai-chat.request", "read as openai-chat it loses what anthropic reads"),
        # a shape error, and which wire the body is
        (ANTHROPIC_RESPONSE, "openai-chat.response", "/choices: expected"),
        # a body this wire reads as nothing at all
        (ANTHROPIC_RESPONSE, "gemini.response", "nothing in this body is a gemini response"),
    ],
)
def test_a_body_of_another_wire_is_named_with_the_kind_to_give(
    built: Project, body: dict[str, Any], kind: str, said: str
) -> None:
    path = built.root / "other-wire.json"
    path.write_text(json.dumps(body))
    code, found = findings(built, "other-wire.json", kind)
    assert code == 1
    wanted = f"looks like the anthropic wire's {kind.rsplit('.', 1)[1]}"
    messages = [f["message"] for f in found if f["rule"] == "wire-invalid"]
    assert any(
        said in m and wanted in m and m.endswith(f"give --as anthropic.{kind.rsplit('.', 1)[1]}") for m in messages
    ), messages
