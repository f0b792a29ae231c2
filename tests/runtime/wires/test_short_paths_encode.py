"""The Converse, Gemini and Responses short ways to a request body give exactly what the long ways give, or step aside: plain
conversations, conversations that keep something, and hostile ones drawn side by side."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from test_adapter_fast_paths import bedrock_entries, gemini_lists, responses_entries
from test_short_paths_ollama_cohere_interactions import ODD_CANONICAL, PLAIN_CANONICAL, _same

from toolgen.runtime.wires.bedrock import codec as bedrock
from toolgen.runtime.wires.bedrock import plain as bedrock_plain
from toolgen.runtime.wires.canonical import Request
from toolgen.runtime.wires.export import decode_tools, export_tools
from toolgen.runtime.wires.gemini import codec as gemini
from toolgen.runtime.wires.gemini import plain as gemini_plain
from toolgen.runtime.wires.gemini import tools as gemini_tools
from toolgen.runtime.wires.gemini.contents import decode_system
from toolgen.runtime.wires.helpers import args_object, args_text
from toolgen.runtime.wires.interactions import codec as interactions
from toolgen.runtime.wires.plain_arguments import plain_arguments
from toolgen.runtime.wires.responses import codec as responses
from toolgen.runtime.wires.responses import plain as responses_plain

_CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
# What these two wires lay out in their own way: system prompts among results, several of them, empty texts.
MORE_CANONICAL = st.sampled_from(
    [
        {"role": "system", "content": "Also be kind."},
        {"role": "system", "content": None},
        {"role": "system", "content": ""},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "", "tool_calls": [_CALL]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": " {} "}}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": "null"}}],
        },
        {"role": "assistant", "content": "hi", "extras": {}},
        {"role": "assistant", "content": "hi", "extras": {"bedrock": {"signed": True}}},
        {"role": "user", "content": "hi", "extras": {"bedrock": {"blocks": [{"part": {}}]}}},
        {"role": "tool", "tool_call_id": "c1"},
        {"role": "tool", "tool_call_id": "c1", "content": "", "is_error": False},
        {"role": "tool", "tool_call_id": "c1", "content": "{}", "extras": {"bedrock": {"result_json": True}}},
        {"role": "tool", "tool_call_id": "c3", "content": "done", "name": "g"},
        {"role": "tool", "tool_call_id": "c3", "content": "done", "name": 5},
        {"role": "tool", "tool_call_id": ["c1"], "content": "done"},
        {"role": "tool", "tool_call_id": "c1", "content": "done", "is_error": 1},
        {"role": "user", "content": "hi", "tool_calls": [{**_CALL, "id": "c3"}]},
        {"role": "assistant", "content": "hi", "extras": {"gemini": {"generated_ids": ["c1"]}}},
    ]
)
# Plain messages drawn three times as often as the rest, so that the short way is compared often.
CONVERSATIONS = st.lists(
    st.one_of(PLAIN_CANONICAL, PLAIN_CANONICAL, PLAIN_CANONICAL, ODD_CANONICAL, MORE_CANONICAL), max_size=7
)
_REFUSED = (ValueError, KeyError, TypeError, AttributeError, IndexError)


def _outcome(encode: Any, request: Request) -> Any:
    try:
        return ("ok", encode(request))
    except Exception as exc:  # what the long way raises, whatever it is, the short way must raise alike
        return (type(exc).__name__, str(exc))


# ---- Converse ----


def _converse_long_way(messages: list[Any]) -> tuple[list[Any], list[Any]]:
    """What `bedrock._encode_request` writes of the conversation without its short way: (system, messages)."""
    body = bedrock._encode_request(Request(messages))
    return body.get("system", []), body["messages"]


@settings(max_examples=600, deadline=None)
@given(messages=CONVERSATIONS)
def test_a_converse_conversation_encoded_the_short_way_is_what_the_long_way_writes(messages: list[Any]) -> None:
    short = bedrock_plain.encode_plain(messages)
    with mock.patch.object(bedrock, "encode_plain", lambda *_: None):
        try:
            long_way = _converse_long_way(messages)
        except _REFUSED:
            assert short is None  # what the long way refuses never takes the short way
            return
    if short is not None:
        _same(short, long_way)


@settings(max_examples=300, deadline=None)
@given(
    messages=CONVERSATIONS,
    extras=st.sampled_from([{}, {"bedrock": {"system": [{"part": {"text": "x", "cachePoint": {}}}]}}]),
    model=st.sampled_from([None, "anthropic.claude"]),
)
def test_a_converse_request_encoded_either_way_is_the_same_body_or_the_same_refusal(
    messages: list[Any], extras: dict[str, Any], model: str | None
) -> None:
    request = Request(messages, [{"name": "f", "inputSchema": {"type": "object"}}], model, extras)
    short = _outcome(bedrock.encode_request, request)
    with mock.patch.object(bedrock, "encode_plain", lambda *_: None):
        long_way = _outcome(bedrock.encode_request, request)
    assert short[0] == long_way[0]
    _same(short, long_way)


def test_the_benchmark_s_conversation_takes_the_converse_short_way() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [_CALL, {**_CALL, "id": "c2"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "14:05", "is_error": False},
        {"role": "assistant", "content": "Sunny, 14:05."},
    ]
    assert bedrock_plain.encode_plain(messages) == (
        [{"text": "Be brief."}],
        [
            {"role": "user", "content": [{"text": "Weather and time in Paris?"}]},
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "c1", "name": "f", "input": {"a": 1}}},
                    {"toolUse": {"toolUseId": "c2", "name": "f", "input": {"a": 1}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}]}},
                    {"toolResult": {"toolUseId": "c2", "content": [{"text": "14:05"}], "status": "success"}},
                ],
            },
            {"role": "assistant", "content": [{"text": "Sunny, 14:05."}]},
        ],
    )


def test_bad_arguments_take_the_converse_long_way_and_its_pointer() -> None:
    bad = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": "{x"}}],
    }
    assert bedrock_plain.encode_plain([{"role": "user", "content": "hi"}, bad]) is None
    outcome = _outcome(bedrock.encode_request, Request([{"role": "user", "content": "hi"}, bad]))
    assert outcome[0] == "ValueError" and "/messages/1/tool_calls/0/function/arguments" in outcome[1]


@settings(max_examples=300, deadline=None)
@given(raw=st.lists(bedrock_entries(), max_size=3))
def test_a_converse_tool_list_read_in_one_pass_is_what_the_long_way_reads(raw: list[dict[str, Any]]) -> None:
    for entry in raw:
        definition = bedrock._plain_definition(entry)
        assert definition is None or definition == bedrock._tool_definition(entry)
        assert (definition is not None) == bedrock._plain_tool(entry)
    outcomes = []
    for decode in (
        lambda raw, kept: bedrock._decode_tools({"tools": raw}, kept),
        lambda raw, kept: decode_tools(raw, kept, bedrock._tool_definition, "bedrock", None),
    ):
        kept: dict[str, Any] = {}
        try:
            outcomes.append(("decoded", decode(raw, kept), kept))
        except ValueError as error:
            outcomes.append(("refused", str(error)))
    assert outcomes[0] == outcomes[1]


# ---- Gemini ----


def _gemini_long_way(messages: list[Any]) -> tuple[list[Any], list[Any]]:
    """What `gemini._encode_request` writes of the conversation without its short way: (system parts, contents)."""
    body = gemini._encode_request(Request(messages))
    return body.get("systemInstruction", {}).get("parts", []), body["contents"]


@settings(max_examples=600, deadline=None)
@given(messages=CONVERSATIONS)
def test_gemini_contents_encoded_the_short_way_are_what_the_long_way_writes(messages: list[Any]) -> None:
    short = gemini_plain.encode_plain(messages)
    with mock.patch.object(gemini, "encode_plain", lambda *_: None):
        try:
            long_way = _gemini_long_way(messages)
        except _REFUSED:
            assert short is None  # what the long way refuses never takes the short way
            return
    if short is not None:
        _same(short, long_way)


@settings(max_examples=300, deadline=None)
@given(
    messages=CONVERSATIONS,
    extras=st.sampled_from(
        [{}, {"gemini": {"system": {"key": "system_instruction"}}}, {"gemini": {"system": {"string": True}}}]
    ),
    model=st.sampled_from([None, "gemini-2.5-flash"]),
)
def test_a_gemini_request_encoded_either_way_is_the_same_body_or_the_same_refusal(
    messages: list[Any], extras: dict[str, Any], model: str | None
) -> None:
    request = Request(messages, [{"name": "f", "inputSchema": {"type": "object"}}], model, extras)
    short = _outcome(gemini.encode_request, request)
    with mock.patch.object(gemini, "encode_plain", lambda *_: None):
        long_way = _outcome(gemini.encode_request, request)
    assert short[0] == long_way[0]
    _same(short, long_way)


def test_the_benchmark_s_conversation_takes_the_gemini_short_way() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [_CALL, {**_CALL, "id": "c2"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "no clock", "is_error": True},
        {"role": "assistant", "content": "Sunny."},
    ]
    assert gemini_plain.encode_plain(messages) == (
        [{"text": "Be brief."}],
        [
            {"role": "user", "parts": [{"text": "Weather and time in Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"id": "c1", "name": "f", "args": {"a": 1}}},
                    {"functionCall": {"id": "c2", "name": "f", "args": {"a": 1}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "c1", "name": "f", "response": {"output": "sunny"}}},
                    {"functionResponse": {"id": "c2", "name": "f", "response": {"error": "no clock"}}},
                ],
            },
            {"role": "model", "parts": [{"text": "Sunny."}]},
        ],
    )


def test_a_result_with_no_function_to_name_takes_the_gemini_long_way_and_its_pointer() -> None:
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "x"}]
    assert gemini_plain.encode_plain(orphan) is None
    outcome = _outcome(gemini.encode_request, Request(orphan))
    assert outcome[0] == "ValueError" and "/contents/1/name" in outcome[1]


# ---- arguments told plain by their types ----

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)
ODD_VALUES = st.sampled_from([(1, 2), {1: "a"}, {"a": (1,)}, {"s": {1}}, float("nan"), b"x"])


@settings(max_examples=500, deadline=None)
@given(given=st.dictionaries(st.text(max_size=3), JSON_VALUES | ODD_VALUES, max_size=4))
def test_arguments_told_plain_are_those_that_read_back_as_they_came(given: dict[str, Any]) -> None:
    text = plain_arguments(given)
    try:
        written = args_text(given)
        reads_back = args_object(written, "") == given
    except (TypeError, ValueError, RecursionError):
        assert text is None
        return
    assert text == (written if reads_back else None)


def test_arguments_nested_past_the_typed_depth_are_still_told_by_reading_them_back() -> None:
    deep: Any = "leaf"
    for _ in range(60):
        deep = {"k": [deep]}
    assert plain_arguments({"deep": deep}) == args_text({"deep": deep})
    assert plain_arguments({"nan": [float("nan")]}) is None
    assert plain_arguments({"inf": float("inf")}) is None  # no JSON text: the long way refuses it


# ---- Gemini tool lists and system instructions read the short way ----


@settings(max_examples=300, deadline=None)
@given(raw=gemini_lists())
def test_a_gemini_tool_list_read_in_one_pass_is_what_the_long_way_reads(raw: list[Any]) -> None:
    plain = gemini_tools.plain_declarations(raw)
    assert plain is None or plain == gemini_tools.declarations(raw)
    if plain is not None:
        assert export_tools(plain, "gemini").tools == raw  # what it reads needs nothing kept


SYSTEM_PARTS = st.sampled_from(
    [{"text": "Be brief."}, {"text": ""}, {"text": 5}, {"text": "hm", "thought": True}, {"inlineData": {}}, "odd", None]
)


@settings(max_examples=300, deadline=None)
@given(
    system=st.one_of(
        st.fixed_dictionaries({"parts": st.lists(SYSTEM_PARTS, max_size=3)}),
        st.fixed_dictionaries({"parts": st.lists(SYSTEM_PARTS, max_size=2), "role": st.just("system")}),
        st.sampled_from([None, "Be brief.", {"parts": "odd"}, {}, 5]),
    )
)
def test_a_gemini_system_instruction_read_the_short_way_is_what_the_long_way_reads(system: Any) -> None:
    short = gemini_plain.decode_plain_system(system)
    kept: dict[str, Any] = {}
    try:
        long_way = decode_system({"systemInstruction": system}, kept)
    except ValueError:
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        assert (short, kept) == (long_way, {})


# ---- Responses ----


@settings(max_examples=600, deadline=None)
@given(messages=CONVERSATIONS)
def test_responses_input_encoded_the_short_way_is_what_the_long_way_writes(messages: list[Any]) -> None:
    short = responses_plain.encode_plain(messages)
    body: dict[str, Any] = {}
    try:
        long_way = responses._encode_input(messages, body)
    except _REFUSED:
        assert short is None  # what the long way refuses never takes the short way
        return
    if short is not None:
        _same(short, long_way)
        assert body == {}  # nothing kept to put beside the input


@settings(max_examples=300, deadline=None)
@given(
    messages=CONVERSATIONS,
    extras=st.sampled_from([{}, {"openai-responses": {"input_string": True}}]),
    model=st.sampled_from([None, "gpt-5"]),
)
def test_a_responses_request_encoded_either_way_is_the_same_body_or_the_same_refusal(
    messages: list[Any], extras: dict[str, Any], model: str | None
) -> None:
    request = Request(messages, [{"name": "f", "inputSchema": {"type": "object"}}], model, extras)
    short = _outcome(responses.encode_request, request)
    with mock.patch.object(responses, "encode_plain", lambda *_: None):
        long_way = _outcome(responses.encode_request, request)
    assert short[0] == long_way[0]
    _same(short, long_way)


def test_the_benchmark_s_conversation_takes_the_responses_short_way() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [_CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]
    assert responses_plain.encode_plain(messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a":1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]


@settings(max_examples=300, deadline=None)
@given(raw=st.lists(responses_entries(), max_size=3))
def test_a_responses_tool_list_read_in_one_pass_is_what_the_long_way_reads(raw: list[dict[str, Any]]) -> None:
    for entry in raw:
        definition = responses._plain_definition(entry)
        assert definition is None or definition == responses._tool_definition(entry)
    outcomes = []
    for decode in (
        responses._decode_tools,
        lambda raw, kept: decode_tools(raw, kept, responses._tool_definition, "openai-responses", None),
    ):
        kept: dict[str, Any] = {}
        try:
            outcomes.append(("decoded", decode(raw, kept), kept))
        except ValueError as error:
            outcomes.append(("refused", str(error)))
    assert outcomes[0] == outcomes[1]


# ---- Interactions tool lists: its own export, spelled as Anthropic's with `parameters` ----

CANONICAL_TOOLS = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["f", "g"])},
        optional={
            "description": st.sampled_from(["", "Gets it."]),
            "inputSchema": st.sampled_from([{}, True, {"type": "object"}, {"properties": {"a": {}}}]),
        },
    ).map(lambda tool: {"inputSchema": {"type": "object"}, **tool}),
    max_size=3,
)


@settings(max_examples=200, deadline=None)
@given(tools=CANONICAL_TOOLS)
def test_interactions_tools_export_as_anthropic_s_spelled_with_parameters(tools: list[dict[str, Any]]) -> None:
    anthropic_spelled = [
        {
            "type": "function",
            **{k: v for k, v in entry.items() if k != "input_schema"},
            "parameters": entry["input_schema"],
        }
        for entry in export_tools(tools, "anthropic").tools
    ]
    _same(interactions._encode_tools(tools, None), anthropic_spelled)
    assert export_tools(tools, "google-interactions").notes == export_tools(tools, "anthropic").notes
