"""Values a body may hold that are legal JSON but awkward for Python: an integer longer than Python writes as text,
a lone surrogate, an empty string where a URL goes. Decoding and encoding them is a ValueError that says where,
or it works; never KeyError, UnicodeError or Python's own wording."""

from __future__ import annotations

import copy
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.body_places import places, with_value
from support.projects import TESTS

FIXTURES = TESTS / "fixtures" / "payloads"
HUGE = 10**5000
TARGETS = ("openai-chat", "anthropic", "gemini", "openai-responses", "bedrock-converse", "cohere", "ollama")


@pytest.fixture(scope="module")
def rt(source_package: ModuleType) -> ModuleType:
    return importlib.import_module(f"{source_package.__name__}._runtime")


def _round_trip(rt: ModuleType, body: Any, wire: str, direction: str) -> None:
    """Decode, then encode to every wire: each step works or is a ValueError whose message starts at a pointer
    (or, for a tool's schema, at the tool's name)."""
    try:
        decoded = rt.decode(body, wire, direction)
    except ValueError as error:
        assert str(error).startswith("/") or " schema of " in str(error), error
        return
    if isinstance(decoded, rt.ProviderError):
        return
    encode = rt.encode_request if isinstance(decoded, rt.Request) else rt.encode_response
    for target in TARGETS:
        try:
            encode(decoded, target)
        except ValueError as error:
            assert str(error).startswith("/"), (target, error)


FIXTURE_FILES = sorted(FIXTURES.glob("*/*/*.json"))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda path: "/".join(path.parts[-3:]))
def test_an_integer_too_long_for_python_to_write_anywhere_is_a_value_error_that_says_so(
    rt: ModuleType, fixture: Path
) -> None:
    body = json.loads(fixture.read_text(encoding="utf-8"))
    wire, direction = fixture.parts[-3], fixture.parts[-2]
    for at in list(places(body))[:60]:
        _round_trip(rt, with_value(body, at, HUGE), wire, direction)


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda path: "/".join(path.parts[-3:]))
def test_a_lone_surrogate_in_any_string_decodes_or_is_a_value_error(rt: ModuleType, fixture: Path) -> None:
    body = json.loads(fixture.read_text(encoding="utf-8"))
    wire, direction = fixture.parts[-3], fixture.parts[-2]
    for at in list(places(body))[:60]:
        _round_trip(rt, with_value(body, at, "x\ud800"), wire, direction)


def test_a_call_without_an_id_whose_arguments_hold_a_lone_surrogate_gets_a_stable_id(rt: ModuleType) -> None:
    # The id of a call sent without one is a hash of its name and arguments, which encoded them strictly.
    body = json.loads(
        '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":"\\ud800"}}}]},'
        '"finishReason":"STOP"}]}'
    )
    first, again = rt.decode(body, "gemini", "response"), rt.decode(copy.deepcopy(body), "gemini", "response")
    ids = [call["id"] for call in first.message["tool_calls"]]
    assert ids == [call["id"] for call in again.message["tool_calls"]]
    assert ids[0].startswith("call_")
    ollama = {
        "model": "m",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f\udfff", "arguments": {}}}],
        },
        "done": True,
    }
    assert rt.decode(ollama, "ollama", "response").message["tool_calls"][0]["id"].startswith("call_")


def test_a_long_integer_literal_in_arguments_text_is_a_value_error_that_says_so(rt: ModuleType) -> None:
    arguments = '{"n": ' + "9" * 5000 + "}"
    request = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}],
            },
        ],
    }
    decoded = rt.decode(request, "openai-chat", "request")
    for target in ("anthropic", "gemini", "bedrock-converse"):
        with pytest.raises(ValueError, match=r"^/") as caught:
            rt.encode_request(decoded, target)
        assert "digits" in str(caught.value)


def test_an_image_part_with_an_empty_url_is_sent_to_cohere_as_that_url(rt: ModuleType) -> None:
    # An empty URL was taken for no URL, and the part's missing `data` read: KeyError.
    body = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": ""}}]}]}
    decoded = rt.decode(body, "cohere", "request")
    assert decoded.messages[0]["content"][0]["url"] == ""
    encoded = rt.encode_request(decoded, "cohere")
    assert encoded["messages"][0]["content"][0]["image_url"]["url"] == ""
    bare = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": ""}]}]}
    try:
        rt.encode_request(rt.decode(bare, "cohere", "request"), "cohere")
    except ValueError as error:
        assert str(error).startswith("/")


def test_object_arguments_holding_nan_are_a_value_error_not_arguments_text_no_json_reader_takes(rt: ModuleType) -> None:
    body = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"a": float("nan")}}],
    }
    with pytest.raises(ValueError, match="^/: expected values JSON can hold; the value holds NaN or infinity"):
        rt.decode(body, "anthropic", "response")
