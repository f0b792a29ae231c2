"""Every request body toolgen encodes for openai-chat, openai-responses and anthropic is one the official SDK's
request types accept; what a wire cannot hold where it stands is moved (with a note) or refused by name, or in a
tool result named in a text (with a note).

The SDKs' TypedDicts are checked with pydantic, extra keys forbidden (a type checker would refuse them too), and
every lazily validated `Iterable` walked, so that a union member that does not fit is really refused.
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from typing_extensions import TypedDict

from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.codecs import codec
from toolgen.runtime.wires.helpers import args_text
from toolgen.runtime.wires.losses import encode_request_noted


def materialize(value: Any) -> Any:
    """Walk a TypedDict validation result: pydantic checks `Iterable` fields only as they are iterated."""
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [materialize(item) for item in value]
    return value


class Checker:
    """One SDK request type, validated plain (as the SDK's own TypeAdapter would) or with extra keys forbidden."""

    def __init__(self, params: Any) -> None:
        # A TypeAdapter takes no config for a TypedDict; a wrapper's config reaches every nested TypedDict
        # that has none of its own, which is all of the SDKs'.
        wrapper = TypedDict("Wrapper", {"body": params})  # type: ignore[misc]  # noqa: UP013
        wrapper.__pydantic_config__ = pydantic.ConfigDict(extra="forbid")  # type: ignore[attr-defined]
        self.strict = pydantic.TypeAdapter(wrapper)
        self.plain = pydantic.TypeAdapter(params)

    def check(self, body: dict[str, Any]) -> None:
        materialize(self.strict.validate_python({"body": body})["body"])

    def check_plain(self, body: dict[str, Any]) -> None:
        materialize(self.plain.validate_python(body))


SDK = {
    "openai-chat": Checker(CompletionCreateParamsNonStreaming),
    "openai-responses": Checker(ResponseCreateParamsNonStreaming),
    "anthropic": Checker(MessageCreateParamsNonStreaming),
}
TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}


# ---- the check is strict enough to mean something ----


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize(
    ("wire", "body"),
    [
        (
            "openai-chat",
            {
                "model": "m",
                "messages": [
                    {"role": "assistant", "content": None, "tool_calls": [CALL]},
                    {
                        "role": "tool",
                        "tool_call_id": "call_1",
                        "content": [{"type": "image_url", "image_url": {"url": "u"}}],
                    },
                ],
            },
        ),
        (
            "openai-chat",
            {
                "model": "m",
                "messages": [{"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}],
            },
        ),
        (
            "openai-chat",
            {
                "model": "m",
                "messages": [
                    {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "UklGRg=="}}]}
                ],
            },
        ),
        (
            "openai-responses",
            {
                "model": "m",
                "input": [
                    {
                        "role": "user",
                        "content": [{"type": "input_audio", "input_audio": {"data": "x", "format": "wav"}}],
                    }
                ],
            },
        ),
        (
            "anthropic",
            {
                "model": "m",
                "max_tokens": 10,
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "call_1",
                                "content": [{"type": "thinking", "thinking": "t", "signature": "s"}],
                            }
                        ],
                    }
                ],
            },
        ),
    ],
)
def test_the_sdk_types_refuse_what_the_issue_found(wire: str, body: dict[str, Any], strict: bool) -> None:
    checker = SDK[wire]
    with pytest.raises(pydantic.ValidationError):
        (checker.check if strict else checker.check_plain)(body)


def test_the_strict_check_refuses_a_key_the_sdk_type_does_not_name() -> None:
    body = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "c", "content": "x", "name": "f"}]}
    SDK["openai-chat"].check_plain(body)
    with pytest.raises(pydantic.ValidationError):
        SDK["openai-chat"].check(body)


# ---- generated conversations ----

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
WAV, MP3, UNKNOWN = "UklGRgAAAA==", "SUQzAAAA", "AAAAAAAA"
images = st.one_of(
    st.fixed_dictionaries({"type": st.just("image"), "url": st.just("https://example.com/a.png")}),
    st.fixed_dictionaries(
        {"type": st.just("image"), "data": st.just("iVBORw0KGgo="), "media_type": st.just("image/png")},
        optional={"detail": st.sampled_from(["auto", "low", "high"])},
    ),
)
audios = st.fixed_dictionaries(
    {"type": st.just("audio"), "data": st.sampled_from([WAV, MP3, UNKNOWN])},
    optional={"format": st.sampled_from(["wav", "mp3", "audio/mpeg", "flac"])},
)
files = st.one_of(
    st.fixed_dictionaries({"type": st.just("file"), "file_id": st.just("file-1")}),
    st.fixed_dictionaries(
        {"type": st.just("file"), "data": st.just("JVBERi0="), "media_type": st.just("application/pdf")},
        optional={"filename": st.just("a.pdf")},
    ),
    st.fixed_dictionaries({"type": st.just("file"), "url": st.just("https://example.com/a.pdf")}),
)
reasonings = st.one_of(
    st.fixed_dictionaries({"type": st.just("reasoning"), "text": texts}, optional={"signature": st.just("sig")}),
    st.fixed_dictionaries({"type": st.just("reasoning"), "encrypted": st.just("opaque")}),
    st.fixed_dictionaries({"type": st.just("reasoning"), "redacted": st.just(True), "encrypted": st.just("opaque")}),
)
text_parts = st.fixed_dictionaries({"type": st.just("text"), "text": texts})


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """System, user, assistant (with reasoning and calls) and tool messages, media in every place it can stand."""
    media = st.one_of(images, files, audios) if draw(st.booleans()) else st.one_of(images, files)
    any_part = st.one_of(text_parts, media, reasonings)
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        system = draw(st.one_of(texts, st.lists(text_parts, min_size=1, max_size=2)))
        messages.append({"role": "system", "content": system})
    for turn in range(draw(st.integers(1, 2))):
        user = draw(st.one_of(texts, st.lists(st.one_of(text_parts, media), min_size=1, max_size=3)))
        messages.append({"role": "user", "content": user})
        calls = [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": "get_weather", "arguments": args_text({"city": draw(texts)})},
            }
            for i in range(draw(st.integers(0, 2)))
        ]
        content = draw(st.one_of(st.none(), texts, st.lists(any_part, min_size=1, max_size=3)))
        if content is None and not calls:
            content = draw(texts)
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            assistant["tool_calls"] = calls
        messages.append(assistant)
        for call in calls:
            result = draw(st.one_of(texts, st.lists(any_part, min_size=1, max_size=3)))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return messages


# Which part types each role takes in the SDK's request types; a part elsewhere must be named by a note.
HELD = {
    "openai-chat": {"user": {"text", "image", "audio", "file"}, "assistant": {"text"}, "tool": {"text"}},
    "openai-responses": {"user": {"text", "image", "file"}, "assistant": {"text"}, "tool": {"text", "image", "file"}},
    "anthropic": {
        "user": {"text", "image", "file"},
        "assistant": {"text", "image", "file"},
        "tool": {"text", "image", "file"},
    },
}


def _parts(messages: list[dict[str, Any]]) -> list[tuple[int, int, str, dict[str, Any]]]:
    return [
        (i, j, message["role"], part)
        for i, message in enumerate(messages)
        if isinstance(message.get("content"), list)
        for j, part in enumerate(message["content"])
    ]


def unsendable(wire: str, part: dict[str, Any]) -> bool:
    """Whether `part` has no place on `wire` at all: audio on Responses and Anthropic, audio in a format other
    than wav or mp3 and a file given only by URL on chat completions."""
    kind = part["type"]
    if kind == "audio" and wire != "openai-chat":
        return True
    if wire == "openai-chat" and kind == "file" and "url" in part:
        return True
    if wire == "openai-chat" and kind == "audio":
        given = part.get("format")
        return given in ("flac",) or (given is None and part["data"] == UNKNOWN)
    return False


def refusal_expected(wire: str, messages: list[dict[str, Any]]) -> bool:
    """Whether a part that has no place on `wire` stands outside a tool result: one in a tool result is replaced by
    a text naming it (placement.py), since what a server sends must not stop a run."""
    return any(role != "tool" and unsendable(wire, part) for _, _, role, part in _parts(messages))


def media_count(body: dict[str, Any], wire: str) -> int:
    """Images, audio and files in a chat-completions body, and that every one stands in a user message."""
    count = 0
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if block["type"] in ("image_url", "input_audio", "file"):
                assert message["role"] == "user", message
                count += 1
    return count


@pytest.mark.parametrize("wire", sorted(SDK))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=conversations())
def test_every_encoded_request_is_one_the_sdk_accepts(wire: str, messages: list[dict[str, Any]]) -> None:
    request = Request(messages, [TOOL], "some-model")
    try:
        encoded = encode_request_noted(request, wire)
    except ValueError as refusal:
        assert refusal_expected(wire, messages), refusal
        assert str(refusal).startswith("/messages/") or str(refusal).startswith("/input/"), refusal
        return
    assert not refusal_expected(wire, messages), encoded.body
    SDK[wire].check(encoded.body)
    for i, j, role, part in _parts(messages):
        if part["type"] not in HELD[wire].get(role, {"text"}):
            pointer = f"/messages/{i}/content/{j}/"
            # A note names the part, or a place that holds it (a whole assistant message left out, say).
            named = [note.split(":", 1)[0] + "/" for note in encoded.notes]
            assert any(pointer.startswith(place) for place in named), (pointer, part, encoded.notes)
    if wire == "openai-chat":
        sent = [
            part
            for _, _, role, part in _parts(messages)
            if part["type"] in ("image", "audio", "file") and not (role == "tool" and unsendable(wire, part))
        ]
        assert media_count(encoded.body, wire) == len(sent), encoded.body


def test_an_image_in_a_tool_result_follows_the_batch_in_a_user_message_naming_its_call() -> None:
    image = {"type": "image", "data": "iVBORw0KGgo=", "media_type": "image/png"}
    second = {**CALL, "id": "call_2"}
    messages = [
        {"role": "user", "content": "Show me Paris."},
        {"role": "assistant", "content": None, "tool_calls": [CALL, second]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "a photo"}, image]},
        {"role": "tool", "tool_call_id": "call_2", "content": [image]},
        {"role": "user", "content": "Thanks."},
    ]
    encoded = encode_request_noted(Request(messages, [TOOL], "m"), "openai-chat")
    SDK["openai-chat"].check(encoded.body)
    sent = encoded.body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert sent[2]["content"] == [{"type": "text", "text": "a photo"}]
    assert isinstance(sent[3]["content"], str) and sent[3]["content"]
    carried = sent[4]["content"]
    assert [block["type"] for block in carried] == ["text", "image_url", "text", "image_url"]
    assert "call_1 (get_weather)" in carried[0]["text"] and "call_2 (get_weather)" in carried[2]["text"]
    assert carried[1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
    assert [note.split(":", 1)[0] for note in encoded.notes] == ["/messages/2/content/1", "/messages/3/content/0"]
    assert all("moved to a user message after the tool results" in note for note in encoded.notes)


def test_audio_is_refused_by_name_where_the_wire_takes_none() -> None:
    messages = [{"role": "user", "content": [{"type": "audio", "data": WAV, "format": "wav"}]}]
    with pytest.raises(ValueError, match="Responses input takes no audio"):
        codec("openai-responses").encode_request(Request(messages, [], "m"))
    with pytest.raises(ValueError, match="Anthropic takes no audio"):
        codec("anthropic").encode_request(Request(messages, [], "m"))
    flac = [{"role": "user", "content": [{"type": "audio", "data": WAV, "format": "flac"}]}]
    with pytest.raises(ValueError, match="wav or mp3"):
        codec("openai-chat").encode_request(Request(flac, [], "m"))


def test_untyped_audio_gets_the_format_its_bytes_show() -> None:
    messages = [{"role": "user", "content": [{"type": "audio", "data": MP3}]}]
    body = codec("openai-chat").encode_request(Request(messages, [], "m"))
    SDK["openai-chat"].check(body)
    assert body["messages"][0]["content"][0]["input_audio"] == {"data": MP3, "format": "mp3"}


def test_reasoning_in_a_tool_result_is_left_out_with_a_note() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": [{"type": "reasoning", "text": "t"}, {"type": "text", "text": "ok"}],
        },
    ]
    for wire in sorted(SDK):
        encoded = encode_request_noted(Request(messages, [TOOL], "m"), wire)
        SDK[wire].check(encoded.body)
        assert any(note.startswith("/messages/2/content/0:") for note in encoded.notes), (wire, encoded.notes)
