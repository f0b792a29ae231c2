"""The short ways of Ollama, Cohere and Interactions requests give exactly what the long ways give, or nothing:
plain conversations, conversations that keep something, and hostile ones drawn side by side."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.runtime.wires.cohere import codec as cohere
from toolgen.runtime.wires.cohere import plain as cohere_plain
from toolgen.runtime.wires.interactions import codec as interactions
from toolgen.runtime.wires.interactions import plain as interactions_plain
from toolgen.runtime.wires.interactions import steps as interactions_steps
from toolgen.runtime.wires.ollama import codec as ollama
from toolgen.runtime.wires.ollama import plain as ollama_plain
from toolgen.runtime.wires.openai_chat import codec as openai_chat
from toolgen.runtime.wires.openai_chat import plain as openai_chat_plain
from toolgen.runtime.wires.openai_chat.dialects import WIRES as CHAT_DIALECTS
from toolgen.runtime.wires.openai_chat.dialects import dialect_of

# Values that are not what they look like: a str that is not a str, a dict that is not a dict.


class _Text(str):
    pass


class _Object(dict):  # type: ignore[type-arg]
    pass


ODD = st.sampled_from([None, 5, 1.5, True, "", _Text("hi"), [], {}, _Object(a=1), float("nan"), ["x"]])
ARGUMENTS = st.sampled_from(
    [
        {"city": "Paris"},
        {},
        {"a": [1, 2.5, None, True], "b": {"c": "é"}},
        {"n": float("nan")},
        {"n": float("inf")},
        {1: "non-string key"},
        {"t": (1, 2)},
        {"s": {1, 2}},
        {"a": 1.0},
        _Object(city="Paris"),
        '{"city": "Paris"}',
        "",
        None,
        [1],
    ]
)


def _same(short: Any, long_way: Any) -> None:
    # Key order too: bodies encoded again from either must read the same.
    assert short == long_way
    assert json.dumps(short, default=repr) == json.dumps(long_way, default=repr)


def _maybe(draw: st.DrawFn, entry: dict[str, Any]) -> dict[str, Any]:
    """Most of the time the entry as it is; else with a key dropped, changed or added."""
    change = draw(st.sampled_from(["keep"] * 8 + ["drop", "odd", "add"]))
    if change == "keep" or not entry:
        return entry
    key = draw(st.sampled_from(sorted(entry)))
    changed = dict(entry)
    if change == "drop":
        del changed[key]
    elif change == "odd":
        changed[key] = draw(ODD)
    else:
        changed[draw(st.sampled_from(["extra", "name", "type", "thinking", "images", "tool_plan", "id"]))] = 1
    return changed


# ---- Ollama ----


@st.composite
def ollama_calls(draw: st.DrawFn) -> dict[str, Any]:
    fn = {"name": draw(st.sampled_from(["get_weather", "f"])), "arguments": draw(ARGUMENTS)}
    entry = {"id": draw(st.sampled_from(["call_1", "call_2", ""])), "function": _maybe(draw, fn)}
    return _maybe(draw, entry)


@st.composite
def ollama_messages(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["system", "user", "assistant", "calls", "tool", "named tool", "other"]))
    content = draw(st.sampled_from(["hi", "", "It is sunny."]))
    if kind in ("system", "user", "assistant"):
        msg: dict[str, Any] = {"role": kind, "content": content}
    elif kind == "calls":
        msg = {"role": "assistant", "content": content, "tool_calls": draw(st.lists(ollama_calls(), max_size=3))}
    elif kind == "tool":
        msg = {"role": "tool", "content": content, "tool_call_id": draw(st.sampled_from(["call_1", "call_2", ""]))}
    elif kind == "named tool":
        msg = {"role": "tool", "content": content, "tool_call_id": "call_1", "tool_name": "get_weather"}
    else:
        return draw(st.sampled_from(["not a message", None, [], {"role": "robot", "content": "beep"}]))
    return _maybe(draw, msg)


@settings(max_examples=600, deadline=None)
@given(raw=st.lists(ollama_messages(), max_size=6))
def test_an_ollama_conversation_taken_the_short_way_is_what_the_long_way_makes_of_it(raw: list[Any]) -> None:
    short = ollama_plain.decode_plain(raw)
    try:
        long_way = ollama._decode_messages(raw)
    except (ValueError, TypeError, RecursionError):
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(short, long_way)
        body = {"model": "m", "messages": raw}
        _same(ollama.decode_request(body).messages, long_way)


def test_the_benchmark_s_ollama_conversation_takes_the_short_way() -> None:
    raw = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_1", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"id": "call_2", "function": {"name": "get_time", "arguments": {"city": "Paris"}}},
            ],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
        {"role": "tool", "content": "14:05", "tool_call_id": "call_2", "tool_name": "get_time"},
        {"role": "assistant", "content": "Sunny."},
    ]
    short = ollama_plain.decode_plain(raw)
    assert short is not None
    _same(short, ollama._decode_messages(raw))
    assert short[2]["tool_calls"][0]["function"]["arguments"] == '{"city":"Paris"}'
    assert short[4]["name"] == "get_time"


# ---- Cohere ----


@st.composite
def cohere_calls(draw: st.DrawFn) -> dict[str, Any]:
    fn = {"name": draw(st.sampled_from(["get_weather", "f"])), "arguments": draw(ARGUMENTS)}
    entry = {
        "id": draw(st.sampled_from(["call_1", "call_2", ""])),
        "type": draw(st.sampled_from(["function", "function", "other"])),
        "function": _maybe(draw, fn),
    }
    return _maybe(draw, entry)


COHERE_BLOCKS = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, st.sampled_from(["hi", "", "ok"])),
    st.sampled_from(
        [
            {"type": "text", "text": 5},
            {"type": "text", "text": "hi", "extra": 1},
            {"type": "thinking", "thinking": "hm"},
            {"type": "document", "document": {"data": "x"}},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            "not a block",
        ]
    ),
)


@st.composite
def cohere_messages(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["system", "user", "assistant", "tool", "other"]))
    text = draw(st.sampled_from(["hi", "", "It is sunny."]))
    if kind in ("system", "user"):
        msg: dict[str, Any] = {"role": kind, "content": text}
    elif kind == "assistant":
        msg = {"role": "assistant"}
        content = draw(
            st.sampled_from(["absent", "string", "blocks", "none"]),
        )
        if content == "string":
            msg["content"] = text
        elif content == "blocks":
            msg["content"] = draw(st.lists(COHERE_BLOCKS, max_size=3))
        elif content == "none":
            msg["content"] = None
        if draw(st.booleans()):
            msg["tool_calls"] = draw(st.lists(cohere_calls(), max_size=3))
    elif kind == "tool":
        msg = {"role": "tool", "tool_call_id": draw(st.sampled_from(["call_1", ""])), "content": text}
    else:
        return draw(st.sampled_from(["not a message", None, {"role": "robot", "content": "beep"}]))
    return _maybe(draw, msg)


@settings(max_examples=600, deadline=None)
@given(raw=st.lists(cohere_messages(), max_size=6))
def test_a_cohere_conversation_taken_the_short_way_is_what_the_long_way_makes_of_it(raw: list[Any]) -> None:
    short = cohere_plain.decode_plain(raw)
    try:
        long_way = cohere._decode_messages(raw)
    except (ValueError, TypeError, RecursionError):
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(short, long_way)
        _same(cohere.decode_request({"model": "m", "messages": raw}).messages, long_way)


def test_the_benchmark_s_cohere_conversation_takes_the_short_way_with_its_marks() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    raw = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
        {"role": "assistant", "content": "Sunny."},
    ]
    short = cohere_plain.decode_plain(raw)
    assert short is not None
    _same(short, cohere._decode_messages(raw))
    assert short[1]["extras"] == {"cohere": {"omit_content": True}}
    assert short[4]["extras"] == {"cohere": {"content_string": True}}


# ---- Interactions ----

TEXT_ITEMS = st.builds(lambda text: {"type": "text", "text": text}, st.sampled_from(["hi", "", "ok"]))
RESULT_ITEMS = st.builds(
    lambda call_id, result: {"type": "function_result", "call_id": call_id, "result": result},
    st.sampled_from(["call_1", "call_2"]),
    st.sampled_from(["sunny", "", "14:05", "sunny", 5, {"t": 21}, [{"type": "text", "text": "x"}]]),
)
ODD_ITEMS = st.sampled_from(
    [
        {"type": "image", "data": "AAAA", "mime_type": "image/png"},
        {"type": "thought", "summary": [{"type": "text", "text": "hm"}]},
        {"type": "text", "text": 5},
        {"type": "function_result", "call_id": "call_1", "result": "x", "name": "f"},
        {"type": "function_result", "call_id": "call_1", "result": "x", "is_error": True},
        {"type": "function_result", "result": "x"},
        "not an item",
    ]
)


@st.composite
def interactions_steps_(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text input", "results", "mixed input", "call", "output", "other"]))
    step: dict[str, Any]
    if kind == "text input":
        step = {"type": "user_input", "content": draw(st.lists(TEXT_ITEMS, max_size=3))}
    elif kind == "results":
        step = {"type": "user_input", "content": draw(st.lists(RESULT_ITEMS, max_size=3))}
    elif kind == "mixed input":
        items = st.one_of(TEXT_ITEMS, RESULT_ITEMS, ODD_ITEMS)
        step = {"type": "user_input", "content": draw(st.one_of(st.lists(items, max_size=3), ODD))}
    elif kind == "call":
        step = {
            "type": "function_call",
            "id": draw(st.sampled_from(["call_1", "call_2"])),
            "name": "get_weather",
            "arguments": draw(ARGUMENTS),
        }
    elif kind == "output":
        step = {"type": "model_output", "content": draw(st.lists(st.one_of(TEXT_ITEMS, ODD_ITEMS), max_size=2))}
    else:
        return draw(
            st.sampled_from(
                [
                    {"type": "text", "text": "bare"},
                    {"type": "thought", "summary": []},
                    {"role": "user", "content": "hi"},
                    {"role": "model", "content": [{"type": "text", "text": "hi"}]},
                    {"type": "user_input", "content": "a string"},
                    "not a step",
                    None,
                ]
            )
        )
    return _maybe(draw, step)


@settings(max_examples=800, deadline=None)
@given(
    system=st.sampled_from([None, "Be brief."]),
    steps=st.lists(interactions_steps_(), max_size=6),
)
def test_interactions_steps_taken_the_short_way_are_what_the_long_way_makes_of_them(
    system: str | None, steps: list[Any]
) -> None:
    before = [{"role": "system", "content": system}] if system is not None else []
    short = interactions_plain.decode_plain(steps, "system" if system is not None else None)
    long_way = list(before)
    try:
        interactions_steps.decode_input_steps(steps, long_way)
    except (ValueError, TypeError, RecursionError):
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(before + short, long_way)
        body: dict[str, Any] = {"model": "m", "input": steps}
        if system is not None:
            body["system_instruction"] = system
        decoded = interactions.decode_request(body)
        # Bare content items are one user turn, which the request decoder reads before any step.
        if not (steps and all(isinstance(s, dict) and interactions_steps.is_content(s) for s in steps)):
            _same(decoded.messages, long_way)
            assert interactions.encode_request(decoded) == body


def test_the_benchmark_s_interactions_steps_take_the_short_way() -> None:
    steps = [
        {"type": "user_input", "content": [{"type": "text", "text": "Weather?"}]},
        {"type": "function_call", "id": "call_1", "name": "f", "arguments": {"city": "Paris"}},
        {"type": "function_call", "id": "call_2", "name": "g", "arguments": {}},
        {
            "type": "user_input",
            "content": [
                {"type": "function_result", "call_id": "call_1", "result": "sunny"},
                {"type": "function_result", "call_id": "call_2", "result": "14:05"},
            ],
        },
        {"type": "model_output", "content": [{"type": "text", "text": "Sunny."}]},
    ]
    short = interactions_plain.decode_plain(steps, None)
    assert short is not None
    long_way: list[dict[str, Any]] = []
    interactions_steps.decode_input_steps(steps, long_way)
    _same(short, long_way)
    assert "extras" not in short[1] and "blocks" in short[4]["extras"]["google-interactions"]


INTERACTIONS_TOOLS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["function", "function", "google_search", 5]),
        "name": st.sampled_from(["get_weather", 5]),
        "description": st.sampled_from(["Weather.", "", 5]),
        "parameters": st.sampled_from(
            [{"type": "object", "properties": {"city": {"type": "string"}}}, {"type": "object"}, {}, None, 5]
        ),
        "extra": st.just(1),
    },
)


@settings(max_examples=500, deadline=None)
@given(
    raw=st.one_of(
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.just("function"),
                    "name": st.just("get_weather"),
                    "parameters": st.just({"type": "object"}),
                },
                optional={"description": st.just("Weather.")},
            ),
            max_size=3,
        ),
        st.lists(st.one_of(INTERACTIONS_TOOLS, ODD), max_size=3),
    )
)
def test_an_interactions_tool_list_read_in_one_pass_is_what_the_long_way_reads(raw: list[Any]) -> None:
    short = interactions._plain_definitions(raw)
    # Told plain in one pass exactly when every entry is one the export writes back as it is.
    assert (short is not None) == all(map(interactions._plain_tool, raw))
    long_kept: dict[str, Any] = {}
    try:
        long_way = _tools_the_long_way(raw, long_kept)
    except ValueError as exc:
        assert short is None  # what the long way refuses never takes the short way
        with pytest.raises(ValueError) as refused:
            interactions._decode_tools(raw, {})
        assert str(refused.value) == str(exc)
        return
    if short is not None:
        _same(short, long_way)
    kept: dict[str, Any] = {}
    _same(interactions._decode_tools(raw, kept), long_way)
    assert kept == long_kept


def _tools_the_long_way(raw: list[Any], kept: dict[str, Any]) -> list[dict[str, Any]]:
    """What `interactions._decode_tools` did before its one pass: every entry read, then the list told plain."""
    tools = [tool for tool in map(interactions._tool_definition, raw) if tool is not None]
    plain = bool(tools) and all(map(interactions._plain_tool, raw))
    if not plain and interactions._encode_tools(tools, None) != raw:
        kept["tools"] = raw
    return tools


# ---- canonical -> wire ----

_CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
PLAIN_CANONICAL = st.sampled_from(
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": None, "tool_calls": [_CALL]},
        {"role": "assistant", "content": "Sure.", "tool_calls": [_CALL, {**_CALL, "id": "c2"}]},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "assistant", "content": None},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "rain", "name": "f"},
        {"role": "tool", "tool_call_id": "c2", "content": "rain", "is_error": True},
    ]
)
ODD_CANONICAL = st.sampled_from(
    [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "AAAA"}]},
        {"role": "user", "content": _Text("hi")},
        {"role": "user", "content": "hi", "extras": {"ollama": {"fields": {"x": 1}}}},
        {"role": "user", "content": "hi", "extras": {"cohere": {"content_string": True}}},
        {"role": "user", "content": "hi", "extras": {"google-interactions": {"step": {"type": "user_input"}}}},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "assistant", "content": None, "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": ""}}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": "[1]"}}],
        },
        {"role": "assistant", "content": None, "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": "{x"}}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c4", "function": {"name": "f"}}]},
        {"role": "assistant", "content": None, "tool_calls": ["not a call"]},
        {"role": "assistant", "content": None, "tool_calls": "not calls"},
        {"role": "assistant", "content": [{"type": "reasoning", "text": "hm"}, {"type": "text", "text": "ok"}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "rain"}]},
        {"role": "tool", "content": "no id"},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny", "extras": {"ollama": {"generated_ids": ["c1"]}}},
        {"role": "robot", "content": "beep"},
        {"role": ["unhashable"], "content": "beep"},
        {"content": "no role"},
        "not a message",
    ]
)
CANONICAL = st.lists(st.one_of(PLAIN_CANONICAL, ODD_CANONICAL), max_size=6)
_REFUSED = (ValueError, KeyError, TypeError, AttributeError, IndexError)


@settings(max_examples=500, deadline=None)
@given(messages=CANONICAL)
def test_an_ollama_conversation_encoded_the_short_way_is_what_the_long_way_writes(messages: list[Any]) -> None:
    short = ollama_plain.encode_plain(messages)
    try:
        long_way = ollama._encode_messages(messages)
    except _REFUSED:
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(short, long_way)


@settings(max_examples=500, deadline=None)
@given(messages=CANONICAL)
def test_a_cohere_conversation_encoded_the_short_way_is_what_the_long_way_writes(messages: list[Any]) -> None:
    short = cohere_plain.encode_plain(messages)
    try:
        long_way = cohere._encode_messages(messages)
    except _REFUSED:
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(short, long_way)


@settings(max_examples=500, deadline=None)
@given(messages=CANONICAL)
def test_interactions_steps_encoded_the_short_way_are_what_the_long_way_writes(messages: list[Any]) -> None:
    short = interactions_plain.encode_plain(messages)
    try:
        long_way = interactions_steps.encode_input_steps(messages)
    except _REFUSED:
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(short, long_way)


CHAT_CANONICAL = st.lists(
    st.one_of(
        PLAIN_CANONICAL,
        ODD_CANONICAL,
        st.sampled_from(
            [
                {"role": "user", "content": "hi", "name": "ann"},
                {"role": "user"},
                {"role": "system", "content": None},
                {"role": "assistant", "content": "", "name": "bot", "refusal": "no"},
                {"role": "assistant"},
                {"role": "tool", "tool_call_id": "c1"},
                {"role": "tool", "tool_call_id": "c1", "content": None, "name": "f"},
                {"role": "tool", "tool_call_id": ["c1"], "content": "sunny"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": 5}}],
                },
                {"role": "assistant", "content": None, "tool_calls": [{**_CALL, "id": 5}]},
            ]
        ),
    ),
    max_size=6,
)


@pytest.mark.parametrize("dialect", CHAT_DIALECTS)
@settings(max_examples=400, deadline=None)
@given(messages=CHAT_CANONICAL)
def test_a_chat_conversation_encoded_the_short_way_is_what_the_long_way_writes(
    dialect: str, messages: list[Any]
) -> None:
    d = dialect_of(dialect)
    short = openai_chat_plain.encode_plain(messages, d)
    try:
        long_way = openai_chat._encode_messages(messages, d)
    except _REFUSED:
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(short, long_way)
