"""`toolgen validate` places bad tool call arguments in a body at the body's pointer and the value's line:col."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.projects import Project

from toolgen.cli.main import main

# Unique in every file the placement tests write: where it is, the argument's value is.
BAD = 12345
ARGS = {"location": BAD}
ARGS_TEXT = json.dumps(ARGS)
SENTENCE = f"arguments of 'get_current_weather' at /location: expected a string, got {BAD}"
NAME = "get_current_weather"


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
        # a shape error too: a gemini answer always holds a candidate or the reason it has none
        (ANTHROPIC_RESPONSE, "gemini.response", "/candidates: expected at least one candidate"),
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
