"""The short ways of the Converse, Gemini and Responses codecs give what their long ways give, or step aside."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.runtime.wires.bedrock import codec as bedrock
from toolgen.runtime.wires.bedrock import plain as bedrock_plain
from toolgen.runtime.wires.gemini import codec as gemini
from toolgen.runtime.wires.gemini import plain as gemini_plain
from toolgen.runtime.wires.responses import codec as responses
from toolgen.runtime.wires.responses import plain as responses_plain


def _outcome(decode: Any, body: Any) -> Any:
    try:
        return ("ok", decode(body))
    except Exception as exc:  # what the long way raises, whatever it is, the short way must raise alike
        return (type(exc).__name__, str(exc))


def _long_way(module: Any, decode: Any, body: Any) -> Any:
    with mock.patch.object(module, "decode_plain", lambda *_: None):
        return _outcome(decode, body)


BEDROCK_BLOCKS = st.sampled_from(
    [
        {"text": "hi"},
        {"text": ""},
        {"text": 5},
        {"text": "hi", "cachePoint": {"type": "default"}},
        {"cachePoint": {"type": "default"}},
        {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "s"}}},
        {"toolUse": {"toolUseId": "c1", "name": "f", "input": {"city": "Paris"}}},
        {"toolUse": {"toolUseId": "c2", "name": "f", "input": {}}},
        {"toolUse": {"toolUseId": "c3", "name": "f"}},
        {"toolUse": {"toolUseId": "c3", "name": "f", "input": {"n": float("nan")}}},
        {"toolUse": {"toolUseId": "c4", "name": "f", "input": {"t": (1, 2)}}},
        {"toolUse": {"toolUseId": "c4", "name": "f", "input": {1: 2}}},
        {"toolUse": {"toolUseId": 5, "name": "f", "input": {}}},
        {"toolUse": {"toolUseId": "c5", "name": "f", "input": "text"}},
        {"toolUse": {"toolUseId": "c5", "name": "f", "input": {}, "extra": 1}},
        {"toolUse": "not a use"},
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}]}},
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}], "status": "error"}},
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}], "status": "success"}},
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}], "status": "odd"}},
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "a"}, {"text": "b"}]}},
        {"toolResult": {"toolUseId": "c1", "content": [{"json": {"a": 1}}]}},
        {"toolResult": {"toolUseId": "c1", "content": []}},
        {"toolResult": {"toolUseId": "c1"}},
        {"toolResult": {"toolUseId": 5, "content": [{"text": "sunny"}]}},
        {"toolResult": {"toolUseId": "c1", "content": "sunny"}},
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}], "type": "x"}},
        {"image": {"format": "png", "source": {"bytes": "aGk="}}},
        {},
        "not a block",
        None,
    ]
)
PLAIN_TEXT = st.sampled_from([{"text": "hi"}, {"text": ""}])
PLAIN_CALLS = st.sampled_from(
    [
        {"toolUse": {"toolUseId": "c1", "name": "f", "input": {"city": "Paris"}}},
        {"toolUse": {"toolUseId": "c2", "name": "f", "input": {"a": [1, 2.5, None, True]}}},
    ]
)
PLAIN_RESULTS = st.sampled_from(
    [
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}]}},
        {"toolResult": {"toolUseId": "c2", "content": [{"text": ""}], "status": "error"}},
    ]
)
BEDROCK_MESSAGES = st.one_of(
    # What the short way takes, most of the time, so that it is compared often.
    st.fixed_dictionaries({"role": st.just("user"), "content": st.lists(PLAIN_TEXT, min_size=1, max_size=2)}),
    st.fixed_dictionaries({"role": st.just("user"), "content": st.lists(PLAIN_RESULTS, min_size=1, max_size=2)}),
    st.builds(
        lambda text, calls: {"role": "assistant", "content": text + calls},
        st.lists(PLAIN_TEXT, max_size=2),
        st.lists(PLAIN_CALLS, max_size=2),
    ),
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["assistant", "user"]),
            "content": st.lists(st.one_of(PLAIN_TEXT, PLAIN_CALLS, PLAIN_RESULTS), max_size=3),
        }
    ),
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system", 5]), "content": st.lists(BEDROCK_BLOCKS, max_size=3)}
    ),
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant"]), "content": st.sampled_from(["hi", 5, None])}
    ),
    st.sampled_from(
        [
            {"role": "user", "content": [{"text": "hi"}], "name": "x"},
            {"role": "user"},
            {"content": [{"text": "hi"}]},
            "not a message",
            None,
        ]
    ),
)
BEDROCK_SYSTEMS = st.sampled_from(
    [None, [], [{"text": "Be brief."}], [{"text": "a"}, {"text": "b"}], [{"text": "a", "x": 1}], [5], "Be brief.", 5]
)


@settings(max_examples=600, deadline=None)
@given(system=BEDROCK_SYSTEMS, raw=st.lists(BEDROCK_MESSAGES, max_size=5))
def test_a_converse_body_read_the_short_way_is_what_the_long_way_reads(system: Any, raw: list[Any]) -> None:
    body: dict[str, Any] = {"modelId": "m", "messages": raw}
    if system is not None:
        body["system"] = system
    short = _outcome(bedrock.decode_request, body)
    assert short == _long_way(bedrock, bedrock.decode_request, body)
    plain = bedrock_plain.decode_plain(system, raw) if isinstance(raw, list) else None
    if plain is not None:
        assert short == ("ok", bedrock.decode_request(body))
        assert short[1].messages == plain


def test_the_plain_converse_conversation_takes_the_short_way() -> None:
    raw = [
        {"role": "user", "content": [{"text": "Weather?"}]},
        {"role": "assistant", "content": [{"text": "Looking."}, {}]},
    ]
    raw[1]["content"][1] = {"toolUse": {"toolUseId": "c1", "name": "f", "input": {"city": "Paris"}}}
    raw.append({"role": "user", "content": [{"toolResult": {"toolUseId": "c1", "content": [{"text": "sunny"}]}}]})
    assert bedrock_plain.decode_plain([{"text": "Be brief."}], raw) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]


RESPONSES_ITEMS = st.sampled_from(
    [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": ""},
        {"role": "developer", "content": "Be brief."},
        {"role": "assistant", "content": "Sunny."},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"role": "user", "content": 5},
        {"role": "tool", "content": "x"},
        {"role": 5, "content": "x"},
        {"type": "message", "role": "user", "content": "hi"},
        {"type": None, "role": "user"},
        {"role": "user", "content": "hi", "id": "m1"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "c2", "name": "f", "arguments": ""},
        {"type": "function_call", "call_id": "c3", "name": "f", "arguments": {"city": "Paris"}},
        {"type": "function_call", "call_id": 5, "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c4", "name": "f"},
        {"type": "function_call", "call_id": "c5", "name": "f", "arguments": "{}", "id": "fc_1"},
        {"type": "custom_tool_call", "call_id": "c6", "name": "f", "input": "x"},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "c1", "output": ""},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "a"}]},
        {"type": "function_call_output", "call_id": "c1", "output": {"a": 1}},
        {"type": "function_call_output", "call_id": 5, "output": "sunny"},
        {"type": "function_call_output", "call_id": "c1"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "x"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
        {"type": "web_search_call", "id": "ws1"},
        {},
        "not an item",
        None,
    ]
)
PLAIN_ITEMS = st.sampled_from(
    [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Sunny."},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ]
)


@settings(max_examples=600, deadline=None)
@given(
    instructions=st.sampled_from([None, "Be brief.", 5]),
    raw=st.one_of(
        st.lists(PLAIN_ITEMS, max_size=6),
        st.lists(st.one_of(PLAIN_ITEMS, RESPONSES_ITEMS), max_size=6),
        st.sampled_from(["hi", 5, None, {}]),
    ),
)
def test_a_responses_body_read_the_short_way_is_what_the_long_way_reads(instructions: Any, raw: Any) -> None:
    body: dict[str, Any] = {"model": "m", "input": raw}
    if instructions is not None:
        body["instructions"] = instructions
    short = _outcome(responses.decode_request, body)
    assert short == _long_way(responses, responses.decode_request, body)
    plain = responses_plain.decode_plain(raw) if isinstance(raw, list) else None
    if plain is not None:
        assert short[0] == "ok"
        assert short[1].messages[len(short[1].messages) - len(plain) :] == plain


def test_the_plain_responses_input_takes_the_short_way() -> None:
    raw = [
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]
    assert responses_plain.decode_plain(raw) == [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"city": "Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {
            "role": "assistant",
            "content": "Sunny.",
            "extras": {
                "openai-responses": {
                    "blocks": [{"group": {"item": {"role": "assistant"}, "string": True}, "parts": [{}]}]
                }
            },
        },
    ]


GEMINI_PARTS = st.sampled_from(
    [
        {"text": "hi"},
        {"text": ""},
        {"text": 5},
        {"text": "hm", "thought": True},
        {"text": "hi", "thoughtSignature": "s"},
        {"inlineData": {"mimeType": "image/png", "data": "aGk="}},
        {"functionCall": {"id": "c1", "name": "f", "args": {"city": "Paris"}}},
        {"functionCall": {"id": "c2", "name": "f", "args": {}}},
        {"functionCall": {"id": "c3", "name": "f"}},
        {"functionCall": {"name": "f", "args": {}}},
        {"functionCall": {"id": "", "name": "f", "args": {}}},
        {"functionCall": {"id": "c4", "name": "f", "args": None}},
        {"functionCall": {"id": "c4", "name": "f", "args": {"n": float("nan")}}},
        {"functionCall": {"id": "c4", "name": "f", "args": {"t": (1, 2)}}},
        {"functionCall": {"id": "c4", "name": "f", "args": {1: 2}}},
        {"functionCall": {"id": "c5", "name": 5, "args": {}}},
        {"functionCall": {"id": "c5", "name": "f", "args": "text"}},
        {"function_call": {"id": "c6", "name": "f", "args": {}}},
        {"functionCall": {"id": "c7", "name": "f", "args": {}}, "thoughtSignature": "s"},
        {"functionCall": "not a call"},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"output": "sunny"}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"error": "no"}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"result": "sunny"}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"output": {"t": 21}}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"output": "a", "error": "b"}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": "sunny"}},
        {"functionResponse": {"name": "f", "response": {"output": "sunny"}}},
        {"functionResponse": {"id": "", "name": "f", "response": {"output": "sunny"}}},
        {"functionResponse": {"id": "c1", "response": {"output": "sunny"}}},
        {"functionResponse": {"id": "c1", "name": "f", "response": {"output": "sunny"}, "willContinue": True}},
        {"function_response": {"id": "c1", "name": "f", "response": {"output": "sunny"}}},
        {},
        "not a part",
        None,
    ]
)
PLAIN_GEMINI_TEXT = st.sampled_from([{"text": "hi"}, {"text": ""}])
PLAIN_GEMINI_CALLS = st.sampled_from(
    [
        {"functionCall": {"id": "c1", "name": "f", "args": {"city": "Paris"}}},
        {"functionCall": {"id": "c2", "name": "g", "args": {"a": [1, 2.5, None, True]}}},
    ]
)
PLAIN_GEMINI_RESPONSES = st.sampled_from(
    [
        {"functionResponse": {"id": "c1", "name": "f", "response": {"output": "sunny"}}},
        {"functionResponse": {"id": "c2", "name": "g", "response": {"error": ""}}},
    ]
)
GEMINI_TURNS = st.one_of(
    # What the short way takes, most of the time, so that it is compared often.
    st.fixed_dictionaries({"role": st.just("user"), "parts": st.lists(PLAIN_GEMINI_TEXT, min_size=1, max_size=2)}),
    st.fixed_dictionaries({"role": st.just("user"), "parts": st.lists(PLAIN_GEMINI_RESPONSES, min_size=1, max_size=2)}),
    st.builds(
        lambda text, calls: {"role": "model", "parts": text + calls},
        st.lists(PLAIN_GEMINI_TEXT, max_size=2),
        st.lists(PLAIN_GEMINI_CALLS, max_size=2),
    ),
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["model", "user"]),
            "parts": st.lists(st.one_of(PLAIN_GEMINI_TEXT, PLAIN_GEMINI_CALLS, PLAIN_GEMINI_RESPONSES), max_size=3),
        }
    ),
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "model", "system", 5]), "parts": st.lists(GEMINI_PARTS, max_size=3)}
    ),
    st.fixed_dictionaries({"role": st.sampled_from(["user", "model"]), "parts": st.sampled_from(["hi", 5, None])}),
    st.sampled_from(
        [
            {"role": "user", "parts": [{"text": "hi"}], "name": "x"},
            {"parts": [{"text": "hi"}]},
            {"role": "model"},
            {"role": "user"},
            "not a turn",
            None,
        ]
    ),
)
GEMINI_SYSTEMS = st.sampled_from(
    [None, {"parts": [{"text": "Be brief."}]}, {"parts": [{"text": "a"}, {"text": "b"}]}, "Be brief.", 5]
)


@settings(max_examples=600, deadline=None)
@given(system=GEMINI_SYSTEMS, raw=st.lists(GEMINI_TURNS, max_size=5))
def test_a_gemini_body_read_the_short_way_is_what_the_long_way_reads(system: Any, raw: list[Any]) -> None:
    body: dict[str, Any] = {"contents": raw}
    if system is not None:
        body["systemInstruction"] = system
    short = _outcome(gemini.decode_request, body)
    assert short == _long_way(gemini, gemini.decode_request, body)
    plain = gemini_plain.decode_plain(raw, None)
    if plain is not None and system is None:
        assert short == ("ok", gemini.decode_request(body))
        assert short[1].messages == plain


def test_the_plain_gemini_contents_take_the_short_way() -> None:
    raw = [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "f", "args": {"city": "Paris"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "f", "response": {"output": "sunny"}}}]},
        {"role": "model", "parts": [{"text": "Sunny."}]},
    ]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"city":"Paris"}'}}
    assert gemini_plain.decode_plain(raw, "system") == [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]
