"""The adapters' shortcuts give what the long way gives: tool lists told plain without exporting them, arguments
read and written with json's own scanner and C encoder, message models not validated twice."""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.projects import SOURCE_PACKAGE

from toolgen.runtime.wires.anthropic import codec as anthropic
from toolgen.runtime.wires.anthropic import messages as anthropic_messages
from toolgen.runtime.wires.anthropic import plain as anthropic_plain
from toolgen.runtime.wires.bedrock import codec as bedrock
from toolgen.runtime.wires.cohere import codec as cohere
from toolgen.runtime.wires.export import (
    decode_tools,
    encode_tools,
    export_tools,
    plain_chat_definition,
    plain_chat_function,
)
from toolgen.runtime.wires.gemini import tools as gemini_tools
from toolgen.runtime.wires.helpers import args_object, args_text
from toolgen.runtime.wires.interactions import codec as interactions
from toolgen.runtime.wires.ollama import codec as ollama
from toolgen.runtime.wires.openai_chat import codec as openai_chat
from toolgen.runtime.wires.openai_chat import messages as openai_chat_messages
from toolgen.runtime.wires.openai_chat.dialects import WIRES as CHAT_DIALECTS
from toolgen.runtime.wires.openai_chat.dialects import dialect_of
from toolgen.runtime.wires.responses import codec as responses

SCHEMAS = st.sampled_from(
    [
        {"type": "object", "properties": {"city": {"type": "string"}}},
        {"type": "object"},
        {"properties": {"city": {"type": "string"}}},
        {},
        {"type": "string"},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False},
        True,
        None,
        5,
    ]
)
DESCRIPTIONS = st.sampled_from([None, "", "Weather.", 5])
STRICT = st.sampled_from([None, True, False, "yes"])
EXTRA = st.sampled_from([None, ("cache_control", {"type": "ephemeral"}), ("type", "custom"), ("type", "function")])


def _entry(fields: dict[str, Any], extra: tuple[str, Any] | None) -> dict[str, Any]:
    entry = {key: value for key, value in fields.items() if value is not None}
    if extra is not None:
        entry.setdefault(extra[0], extra[1])
    return entry


@st.composite
def anthropic_entries(draw: st.DrawFn) -> dict[str, Any]:
    fields = {"name": draw(st.sampled_from(["get_weather", 5])), "description": draw(DESCRIPTIONS)}
    fields["input_schema"] = draw(SCHEMAS)
    fields["strict"] = draw(STRICT)
    return _entry(fields, draw(EXTRA))


@st.composite
def responses_entries(draw: st.DrawFn) -> dict[str, Any]:
    fields = {"type": draw(st.sampled_from(["function", "custom", None])), "name": "get_weather"}
    fields.update(description=draw(DESCRIPTIONS), parameters=draw(SCHEMAS), strict=draw(STRICT))
    return _entry(fields, draw(EXTRA))


@st.composite
def bedrock_entries(draw: st.DrawFn) -> dict[str, Any]:
    spec = _entry(
        {
            "name": draw(st.sampled_from(["get_weather", None])),
            "description": draw(DESCRIPTIONS),
            "inputSchema": draw(st.sampled_from([None, "json", "other"])),
        },
        draw(EXTRA),
    )
    if spec.get("inputSchema") == "json":
        spec["inputSchema"] = {"json": draw(SCHEMAS)}
    elif spec.get("inputSchema") == "other":
        spec["inputSchema"] = {"json": {"type": "object"}, "other": 1}
    return _entry({"toolSpec": spec}, draw(st.sampled_from([None, ("cachePoint", {"type": "default"})])))


@st.composite
def chat_entries(draw: st.DrawFn) -> dict[str, Any]:
    function = _entry(
        {"name": "get_weather", "description": draw(DESCRIPTIONS), "parameters": draw(SCHEMAS)},
        draw(st.sampled_from([None, ("strict", True), ("strict", False), ("extra", 1)])),
    )
    return _entry({"type": draw(st.sampled_from(["function", "other", None])), "function": function}, draw(EXTRA))


def _exported_back(
    entries: list[dict[str, Any]], read: Callable[[Any], dict[str, Any] | None], provider: str
) -> bool | None:
    """Whether exporting what `read` made of `entries` gives them back; None when the export refuses them."""
    tools = [tool for tool in map(read, entries) if tool is not None]
    try:
        return bool(tools) and encode_tools(tools, None, read, provider) == entries
    except ValueError:
        return None


WIRES = [
    (anthropic._plain_tool, anthropic._tool_definition, "anthropic", anthropic_entries()),
    (responses._plain_tool, responses._tool_definition, "openai-responses", responses_entries()),
    (bedrock._plain_tool, bedrock._tool_definition, "bedrock", bedrock_entries()),
    (plain_chat_function, cohere._tool_definition, "openai", chat_entries()),
    (plain_chat_function, ollama._tool_definition, "ollama", chat_entries()),
]


@pytest.mark.parametrize(
    ("plain", "read", "provider", "entries"),
    WIRES,
    ids=["anthropic", "openai-responses", "bedrock", "cohere", "ollama"],
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_entry_told_plain_is_one_the_export_writes_back(
    plain: Callable[[Any], bool],
    read: Callable[[Any], dict[str, Any] | None],
    provider: str,
    entries: st.SearchStrategy[dict[str, Any]],
    data: st.DataObject,
) -> None:
    raw = data.draw(st.lists(entries, max_size=3))
    if raw and all(map(plain, raw)):
        assert _exported_back(raw, read, provider) is True
    # Decoding keeps the raw list exactly when the long way (no shortcut) keeps it, and refuses what it refuses.
    outcomes = []
    for shortcut in (plain, None):
        kept: dict[str, Any] = {}
        try:
            tools = decode_tools(raw, kept, read, provider, shortcut)
        except ValueError as error:
            outcomes.append(("refused", str(error)))
        else:
            outcomes.append(("decoded", tools, kept))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=300, deadline=None)
@given(raw=st.lists(anthropic_entries(), max_size=3))
def test_an_anthropic_tool_list_read_in_one_pass_is_what_the_long_way_reads(raw: list[dict[str, Any]]) -> None:
    for entry in raw:
        definition = anthropic._plain_definition(entry)
        assert definition is None or definition == anthropic._tool_definition(entry)
    outcomes = []
    for decode in (
        anthropic._decode_tools,
        lambda raw, kept: decode_tools(raw, kept, anthropic._tool_definition, "anthropic", None),
    ):
        kept: dict[str, Any] = {}
        try:
            outcomes.append(("decoded", decode(raw, kept), kept))
        except ValueError as error:
            outcomes.append(("refused", str(error)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("dialect", CHAT_DIALECTS)
@settings(max_examples=200, deadline=None)
@given(raw=st.lists(chat_entries(), max_size=3))
def test_a_chat_tool_list_told_plain_is_one_every_dialect_writes_back(dialect: str, raw: list[dict[str, Any]]) -> None:
    d = dialect_of(dialect)
    if raw and all(map(plain_chat_function, raw)):
        tools = [openai_chat._tool_definition(entry["function"]) for entry in raw]
        assert export_tools(tools, d.export_as).tools == raw
    kept: dict[str, Any] = {}
    try:
        tools = openai_chat._decode_tools({"tools": raw}, d, kept)
    except ValueError:
        return
    # The raw list is kept exactly when the long way keeps it: no tools, or an export that differs.
    assert ("tools" in kept) == (not tools or openai_chat._encode_tools(tools, d, None) != raw)
    assert openai_chat._encode_tools(tools, d, kept) == raw


@st.composite
def gemini_lists(draw: st.DrawFn) -> list[Any]:
    declarations = [
        _entry(
            {"name": draw(st.sampled_from(["get_weather", 5])), "description": draw(DESCRIPTIONS)}
            | {draw(st.sampled_from(["parametersJsonSchema", "parameters", "parameters_json_schema"])): draw(SCHEMAS)},
            draw(st.sampled_from([None, ("responseJsonSchema", {"type": "string"}), ("behavior", "BLOCKING")])),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    entries: list[Any] = [{"functionDeclarations": declarations}]
    extra = draw(st.sampled_from([None, {"googleSearch": {}}, {"functionDeclarations": []}]))
    return entries + [extra] if extra is not None else entries


@settings(max_examples=300, deadline=None)
@given(raw=gemini_lists())
def test_a_gemini_tool_list_told_plain_is_one_the_export_writes_back(raw: list[Any]) -> None:
    if gemini_tools.plain_declarations(raw) is not None:
        assert export_tools(gemini_tools.declarations(raw), "gemini").tools == raw
    kept: dict[str, Any] = {}
    try:
        tools = gemini_tools.decode_tools(raw, kept)
    except ValueError:
        return
    assert ("tools" in kept) == (not tools or gemini_tools.encode_tools(tools, None) != raw)


@st.composite
def interactions_entries(draw: st.DrawFn) -> dict[str, Any]:
    fields = {
        "type": draw(st.sampled_from(["function", "google_search", None])),
        "name": draw(st.sampled_from(["f", 5])),
    }
    fields.update(description=draw(DESCRIPTIONS), parameters=draw(SCHEMAS))
    return _entry(fields, draw(st.sampled_from([None, ("strict", True), ("extra", 1)])))


@settings(max_examples=300, deadline=None)
@given(raw=st.lists(interactions_entries(), max_size=3))
def test_an_interactions_tool_list_told_plain_is_one_the_export_writes_back(raw: list[dict[str, Any]]) -> None:
    tools = [tool for tool in map(interactions._tool_definition, raw) if tool is not None]
    if raw and all(map(interactions._plain_tool, raw)):
        assert interactions._encode_tools(tools, None) == raw
    # The raw list is kept exactly when an export that is made to find out differs, and refused when it is.
    try:
        long_way: Any = interactions._encode_tools(tools, None) != raw
    except ValueError as error:
        long_way = ("refused", str(error))
    kept: dict[str, Any] = {}
    try:
        assert interactions._decode_tools(raw, kept) == tools
    except ValueError as error:
        assert long_way == ("refused", str(error))
        return
    assert ("tools" in kept) == long_way


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from([-0.0, 10**40]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), JSON, max_size=4), pad=st.sampled_from(["", " ", "\n\t"]))
def test_arguments_text_and_objects_are_what_json_makes_of_them(value: dict[str, Any], pad: str) -> None:
    text = args_text(value)
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert args_object(pad + text + pad, "/a") == json.loads(text)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_arguments_holding_nan_or_infinity_have_no_json_text(number: float) -> None:
    # A wire that sends arguments as an object made '{"a":NaN}', which no JSON reader takes.
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        args_text({"a": [number]})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1} x', "Extra data at line 1 column 10"),
        ("\ufeff{}", "Unexpected UTF-8 BOM"),
        ("{'a': 1}", "Expecting property name enclosed in double quotes at line 1 column 2"),
        ("[1]", "the arguments to be a JSON object, not list"),
    ],
)
def test_arguments_that_are_no_json_object_are_refused_with_json_s_own_words(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^/a: expected .*{message}"):
        args_object(text, "/a")


def test_arguments_the_fast_scanner_cannot_take_still_read_as_json_reads_them() -> None:
    assert args_object('{"s": "\\ud800"}', "/a") == {"s": "\ud800"}
    assert math.isnan(args_object('{"n": NaN}', "/a")["n"])
    assert args_object("null", "/a") == {}


@pytest.fixture(scope="module")
def adapters(source_package: ModuleType) -> ModuleType:
    return importlib.import_module(f"{SOURCE_PACKAGE}.adapters")


CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
]


@pytest.mark.parametrize("wire", ["anthropic", "openai-chat", "gemini"])
def test_message_models_encode_as_their_dicts_do(adapters: ModuleType, wire: str) -> None:
    models = adapters.parse_request(adapters.encode_request(CONVERSATION, wire, model="m"), wire)
    mixed = [models[0], CONVERSATION[1], models[2], CONVERSATION[3]]
    expected = adapters.encode_request(CONVERSATION, wire, model="m")
    assert adapters.encode_request(models, wire, model="m") == expected
    assert adapters.encode_request(mixed, wire, model="m") == expected


def test_a_bad_dict_among_message_models_is_reported_at_its_own_index(adapters: ModuleType) -> None:
    models = adapters.parse_request(adapters.encode_request(CONVERSATION, "openai-chat", model="m"), "openai-chat")
    with pytest.raises(adapters.ToolgenValidationError) as raised:
        adapters.encode_request([models[0], {"role": "user", "content": 5}], "openai-chat", model="m")
    assert [p.pointer for p in raised.value.problems] == ["/1/content"]


BAD_MESSAGES: list[Any] = [
    {"role": "user", "content": 5},
    {"role": "user", "content": "hi", "extra": 1},
    {"role": "robot", "content": "hi"},
    {"role": "tool", "content": "sunny"},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f"}}]},
    {"role": "user", "content": [{"type": "text"}]},
    {"role": "user", "content": None, "name": None},
    "not a message",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_dict_messages_pass_the_plain_check_exactly_when_the_models_take_them(
    adapters: ModuleType, data: st.DataObject
) -> None:
    plain = adapters._plain_messages()
    assert plain is not None  # the package's messages have a plain form: encode_request builds no models for dicts
    messages = data.draw(st.lists(st.sampled_from([*CONVERSATION, *BAD_MESSAGES]), max_size=5))
    try:
        adapters.check(adapters.Messages, messages, json_text=False)
    except adapters.ToolgenValidationError:
        accepted = False
    else:
        accepted = True
    assert plain.isinstance_python(messages, strict=True) == accepted


def test_a_bad_dict_message_reports_the_models_problems(adapters: ModuleType) -> None:
    with pytest.raises(adapters.ToolgenValidationError) as raised:
        adapters.encode_request([*CONVERSATION, {"role": "user", "content": 5}], "anthropic", model="m")
    assert [p.pointer for p in raised.value.problems] == ["/4/content"]


# Anthropic blocks and messages next to what the short way takes: extra keys, other types, values of other kinds.
ANTHROPIC_BLOCKS = st.sampled_from(
    [
        {"type": "text", "text": "hi"},
        {"type": "text", "text": 5},
        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
        {"type": "thinking", "thinking": "hm", "signature": "s"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "f", "input": {}},
        {"type": "tool_use", "id": "c3", "name": "f", "input": {"n": float("nan")}},
        {"type": "tool_use", "id": "c4", "name": "f", "input": {"t": (1, 2)}},
        {"type": "tool_use", "id": 5, "name": "f", "input": {}},
        {"type": "tool_use", "id": "c5", "name": "f", "input": "text"},
        {"type": "tool_result", "tool_use_id": "c1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "sunny"}]},
        {"type": "tool_result", "tool_use_id": "c1", "content": "sunny", "is_error": True},
        {"type": "tool_result", "tool_use_id": "c1"},
        {"type": "tool_result", "tool_use_id": 5, "content": "sunny"},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
        "not a block",
    ]
)
PLAIN_TEXT = st.sampled_from([{"type": "text", "text": "hi"}, {"type": "text", "text": ""}])
PLAIN_CALLS = st.sampled_from(
    [
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "f", "input": {"a": [1, 2.5, None, True]}},
    ]
)
PLAIN_RESULTS = st.sampled_from(
    [
        {"type": "tool_result", "tool_use_id": "c1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "c2", "content": ""},
    ]
)
ANTHROPIC_MESSAGES = st.one_of(
    # What the short way takes, most of the time, so that it is compared often.
    st.fixed_dictionaries({"role": st.just("user"), "content": st.sampled_from(["hi", ""])}),
    st.fixed_dictionaries({"role": st.just("user"), "content": st.lists(PLAIN_RESULTS, min_size=1, max_size=2)}),
    st.builds(
        lambda text, calls: {"role": "assistant", "content": text + calls},
        st.lists(PLAIN_TEXT, max_size=2),
        st.lists(PLAIN_CALLS, max_size=2),
    ),
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system", 5]), "content": st.lists(ANTHROPIC_BLOCKS, max_size=3)}
    ),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.sampled_from(["hi", 5])}),
    st.sampled_from([{"role": "user", "content": "hi", "name": "x"}, {"role": "user"}, "not a message"]),
)


@settings(max_examples=500, deadline=None)
@given(
    system=st.sampled_from([None, "Be brief.", [{"type": "text", "text": "Be brief."}], 5]),
    raw=st.lists(ANTHROPIC_MESSAGES, max_size=5),
)
def test_an_anthropic_conversation_taken_the_short_way_is_what_the_long_way_makes_of_it(
    system: Any, raw: list[Any]
) -> None:
    body: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": raw}
    if system is not None:
        body["system"] = system
    short = anthropic_plain.decode_plain(system, raw)
    kept: dict[str, Any] = {}
    try:
        long_way = anthropic._decode_messages(system, raw, kept)
    except ValueError:
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        assert (short, kept) == (long_way, {})
        assert anthropic.decode_request(body).messages == long_way


_PLAIN_CANONICAL = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}],
    },
    {"role": "assistant", "content": "It is sunny."},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "c2", "content": "rain", "is_error": True},
]
# What the short way takes, drawn as often as everything else, so that it is compared often.
PLAIN_CANONICAL = st.sampled_from(_PLAIN_CANONICAL)
CANONICAL_MESSAGES = st.sampled_from(
    [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": "hi"},
        {"role": "user", "content": ""},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "user", "content": "hi", "extras": {"anthropic": {"message_fields": {"x": 1}}}},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}],
        },
        {
            "role": "assistant",
            "content": "Sure.",
            "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": ""}}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "f", "arguments": "[1]"}}],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c4", "function": {"name": "f"}}]},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": [{"type": "reasoning", "text": "hm"}, {"type": "text", "text": "ok"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "rain", "is_error": True},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "rain"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny", "extras": {"anthropic": {"split": True}}},
        {"role": "robot", "content": "beep"},
        {"content": "no role"},
    ]
)


@settings(max_examples=500, deadline=None)
@given(messages=st.lists(st.one_of(PLAIN_CANONICAL, CANONICAL_MESSAGES), max_size=6))
def test_an_anthropic_conversation_encoded_the_short_way_is_what_the_long_way_writes(
    messages: list[dict[str, Any]],
) -> None:
    short = anthropic_plain.encode_plain(messages)
    try:
        long_way = (anthropic_messages.encode_system(messages, {}), anthropic._encode_messages(messages))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        assert short is None  # what the long way refuses never takes the short way
        return
    assert short is None or short == long_way


def _chat_messages(d: Any) -> st.SearchStrategy[Any]:
    """Chat-completions messages in dialect `d`'s spelling, next to what the short way takes."""
    calls_key, id_key = d.key("tool_calls"), d.key("tool_call_id")
    typed = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
    untyped = {"id": "c1", "function": {"name": "f", "arguments": '{"a":1}'}}
    plain_call = typed if d.typed_calls else untyped
    other_calls = [
        typed if not d.typed_calls else untyped,
        {"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
        {"id": "c3", "type": "function", "function": {"name": 5, "arguments": "{}"}},
        {"id": "c4", "type": "custom", "custom": {"name": "f", "input": "x"}},
        {"id": "c5", "type": "function", "function": {"name": "f"}},
        {"id": "c6", "type": "other", "function": {"name": "f", "arguments": "{}"}},
        {"id": "c7", "extra": 1, "function": {"name": "f", "arguments": "{}"}},
        "not a call",
    ]
    plain = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": None, calls_key: [plain_call]},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "assistant", "content": "Sure.", calls_key: [plain_call, plain_call]},
        {"role": "tool", id_key: "c1", "content": "sunny"},
    ]
    other = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "user", "content": None},
        {"role": "user", "content": "hi", "name": "ann"},
        {"role": "assistant", "content": ""},
        {"role": "assistant"},
        {"role": "assistant", "content": None, calls_key: []},
        {"role": "assistant", "content": None, "reasoning_content": "hm"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "tool", id_key: "c1", "content": "sunny", "name": "f"},
        {"role": "tool", id_key: 5, "content": "sunny"},
        {"role": "tool", "content": "sunny"},
        {"role": "function", "name": "f", "content": "sunny"},
        {"role": "robot", "content": "beep"},
        "not a message",
    ]
    odd_calls = st.builds(
        lambda call: {"role": "assistant", "content": None, calls_key: [call]}, st.sampled_from(other_calls)
    )
    return st.one_of(st.sampled_from(plain), st.sampled_from(other), odd_calls)


@pytest.mark.parametrize("dialect", CHAT_DIALECTS)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_chat_conversation_taken_the_short_way_is_what_the_long_way_makes_of_it(
    dialect: str, data: st.DataObject
) -> None:
    d = dialect_of(dialect)
    raw = data.draw(st.lists(_chat_messages(d), max_size=5))
    short = openai_chat_messages.decode_plain(raw, d)
    try:
        long_way = openai_chat._decode_messages(raw, d, dialect)
    except ValueError:
        assert short is None  # what the long way refuses never takes the short way
        return
    assert short is None or short == long_way
    if short is not None:
        assert openai_chat.decode_request({"model": "m", "messages": raw}, dialect).messages == long_way


@settings(max_examples=300, deadline=None)
@given(raw=st.lists(chat_entries(), max_size=3))
def test_a_chat_tool_entry_read_the_short_way_is_what_every_chat_wire_reads(raw: list[dict[str, Any]]) -> None:
    for entry in raw:
        definition = plain_chat_definition(entry)
        assert (definition is not None) == plain_chat_function(entry)
        if definition is not None:
            assert definition == cohere._tool_definition(entry) == ollama._tool_definition(entry)
            assert definition == openai_chat._tool_definition(entry["function"])
    for module in (cohere, ollama):
        kept: dict[str, Any] = {}
        long_kept: dict[str, Any] = {}
        provider = "openai" if module is cohere else "ollama"
        try:
            long_way: Any = decode_tools(raw, long_kept, module._tool_definition, provider, None)
        except ValueError as error:
            long_way = ("refused", str(error))
        try:
            assert (module._decode_tools(raw, kept), kept) == (long_way, long_kept)
        except ValueError as error:
            assert long_way == ("refused", str(error))
