"""`toolgen validate` still pairs results with calls over the valid messages of a record that has an invalid one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.projects import Project
from test_validate_places_bodies import NAME, findings, place

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
