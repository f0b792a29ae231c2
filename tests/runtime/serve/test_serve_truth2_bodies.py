"""A big body is held once, not copied form after form; an answer's JSON never fails on what the store kept."""

from __future__ import annotations

import json
import math

import pytest

from toolgen.runtime.serve import bodies
from toolgen.runtime.serve.run_record import RunRecord, RunRequest


def test_the_body_s_messages_are_taken_as_parsed_not_copied_again_and_again() -> None:
    raw = json.dumps({"messages": [{"role": "user", "content": str(i)} for i in range(3)]}).encode()
    parsed = bodies.parse_json_body(bytearray(raw))
    asked = bodies.new_run(parsed)
    assert all(kept is given for kept, given in zip(asked.messages, parsed["messages"], strict=True))
    request = RunRequest(messages=asked.messages, conversation_id="c")
    form = RunRecord(request=request, messages=request.messages).to_json()
    # The row's JSON form shares the messages it encodes at once; a Mapping that is no dict is made one.
    assert form["messages"][0] is asked.messages[0] and form["request"]["messages"][0] is asked.messages[0]
    assert bodies.body_text(bytearray(raw)) == raw.decode()
    with pytest.raises(bodies.BodyError, match=r"^the body is not UTF-8 text \(byte 1\)$"):
        bodies.parse_json_body(b'"\xff"')


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"messages":[{"role":"user","content":"\\ud800"}]}', "/messages/0/content"),
        ('{"messages":[{"role":"user","content":"\\uDFFF"}]}', "/messages/0/content"),
        ('{"messages":[{"role":"user","content":"a","\\udbff":1}]}', "/messages/0/\\udbff"),
    ],
)
def test_a_lone_surrogate_escape_is_still_found_in_any_case(text: str, field: str) -> None:
    with pytest.raises(bodies.BodyError) as raised:
        bodies.parse_json_body(text.encode())
    assert raised.value.field == field


def test_a_pair_of_surrogate_escapes_is_one_character_and_taken() -> None:
    parsed = bodies.parse_json_body(b'{"messages":[{"role":"user","content":"\\ud83d\\ude00 \\\\ud800"}]}')
    assert parsed["messages"][0]["content"] == "\U0001f600 \\ud800"


def test_an_answer_is_starlette_s_json_and_what_utf8_or_json_cannot_carry_is_escaped_or_said() -> None:
    plain = {"id": "r", "messages": [{"content": "héllo ✓"}], "metrics": {"latency": 1.5}}
    assert bodies.answer_json(plain) == json.dumps(
        plain, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    ).encode("utf-8")
    lone = {"messages": [{"content": "a\ud800b é", "\udc00": 1}]}
    sent = bodies.answer_json(lone)
    assert sent == '{"messages":[{"content":"a\\ud800b é","\\udc00":1}]}'.encode()
    assert json.loads(sent) == lone  # the same strings, read back
    numbers = {"metrics": {"a": math.nan, "b": [1.0, -math.inf]}, "notes": ["kept"]}
    assert json.loads(bodies.answer_json(numbers)) == {
        "metrics": {"a": None, "b": [1.0, None]},
        "notes": [
            "kept",
            "a number JSON cannot carry (NaN or Infinity), stored by an earlier release, is sent as null at "
            "/metrics/a, /metrics/b/1",
        ],
    }
