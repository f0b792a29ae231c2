"""The end of a plain OpenAI chat stream, built from the state, is the message the wire's decoder builds from its body."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.runtime import MessageEnd, Response, stream_events
from toolgen.runtime.streams.aggregator import Aggregator
from toolgen.runtime.streams.ending import _decode
from toolgen.runtime.wires.openai_chat.stream import OpenAIChatState

# Values that reach the head and the choice as the chunks send them: the right types, placeholders and wrong types.
_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from(["", "c", "m", "chatcmpl-1", "é"]),
    st.lists(st.integers(0, 1), max_size=1),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 1), max_size=1),
)
_HEAD_KEY = st.sampled_from(
    ["id", "model", "created", "object", "system_fingerprint", "service_tier", "usage", "obfuscation", "x"]
)
_DELTA = st.dictionaries(
    st.sampled_from(["role", "content", "refusal", "reasoning_content", "channel", "tool_calls", "extra"]),
    st.one_of(_VALUE, st.sampled_from(["assistant", "user", "hi", " there"])),
    max_size=3,
)
_CHOICE = st.fixed_dictionaries(
    {"delta": _DELTA},
    optional={
        "index": st.sampled_from([0, 0, 0, 1, None, "0"]),
        "finish_reason": st.sampled_from([None, "stop", "length", "tool_calls", "content_filter", "odd", 3]),
        "logprobs": st.sampled_from([None, None, {"content": []}]),
    },
)
_CHUNK = st.builds(
    lambda head, choices: {**head, "choices": choices},
    st.dictionaries(_HEAD_KEY, _VALUE, max_size=5),
    st.lists(_CHOICE, max_size=2),
)


def _closed_state(payloads: list[dict[str, Any]], done: bool) -> OpenAIChatState:
    aggregator = Aggregator("openai-chat")
    for payload in payloads:
        aggregator.feed(b"data: " + json.dumps(payload).encode() + b"\n\n")
    if done:
        aggregator.feed(b"data: [DONE]\n\n")
    state = aggregator._state
    assert isinstance(state, OpenAIChatState)
    state.finish()
    return state


@settings(max_examples=400, deadline=None)
@given(st.lists(_CHUNK, max_size=5), st.booleans())
def test_the_plain_end_is_the_decoded_body(payloads: list[dict[str, Any]], done: bool) -> None:
    state = _closed_state(payloads, done)
    plain = state.plain()
    if plain is not None:
        assert plain == state.decode(state.body())
        # Equal as data and spelled alike, key order included, as a caller serializing it sees it.
        assert repr(plain) == repr(state.decode(state.body()))


def _text_stream(words: list[str], head: dict[str, Any], finish: Any, logprobs_key: bool) -> list[bytes]:
    def chunk(delta: dict[str, Any], reason: Any = None) -> bytes:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": reason}
        if logprobs_key:
            choice["logprobs"] = None
        payload = {**head, "object": "chat.completion.chunk", "choices": [choice]}
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    reads = [chunk({"role": "assistant", "content": ""})]
    reads += [chunk({"content": word}) for word in words]
    return [*reads, chunk({}, finish), b"data: [DONE]\n\n"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["", "hi", " there", "é", "\n"]), max_size=4),
    st.dictionaries(_HEAD_KEY.filter(lambda key: key not in ("usage", "obfuscation")), _VALUE, max_size=4),
    st.sampled_from(["stop", "length", "odd", 3, None]),
    st.booleans(),
)
def test_plain_text_streams_take_the_plain_end_and_match_the_decoder(
    words: list[str], head: dict[str, Any], finish: Any, logprobs_key: bool
) -> None:
    reads = _text_stream(words, head, finish, logprobs_key)
    state = _closed_state([json.loads(read[6:]) for read in reads[:-1]], True)
    plain = state.plain()
    assert plain is not None
    decoded = state.decode(state.body())
    assert plain == decoded and repr(plain) == repr(decoded)
    # The whole stream's final message is that one too.
    (end,) = [event for event in stream_events(reads, "openai-chat") if isinstance(event, MessageEnd)]
    if finish is None:
        # No chunk said why the answer stopped: [DONE] alone does not make it complete.
        assert end.status == "incomplete" and end.response.finish == {"reason": "error", "raw": None}
    else:
        assert end.response == decoded


def test_streams_beyond_plain_text_go_through_the_decoder() -> None:
    head = {"id": "c", "model": "m", "created": 1}
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    others = [
        [{**head, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": "tool_calls"}]}],
        [
            {**head, "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}]},
            {**head, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
        ],
        [{**head, "choices": [{"index": 0, "delta": {"reasoning_content": "r"}, "finish_reason": "stop"}]}],
        [{**head, "choices": [{"index": 0, "delta": {"refusal": "no"}, "finish_reason": "stop"}]}],
        [{**head, "choices": [{"index": 0, "delta": {"content": "a"}, "logprobs": {"content": []}}]}],
        [{**head, "choices": [{"index": 0, "delta": {"content": "a"}}, {"index": 1, "delta": {"content": "b"}}]}],
    ]
    for payloads in others:
        state = _closed_state(payloads, True)
        assert state.plain() is None
        result = _decode(state)
        assert isinstance(result, Response) and result == state.decode(state.body())


def test_other_dialects_of_the_format_go_through_the_decoder() -> None:
    payloads = [{"id": "c", "model": "m", "created": 1, "choices": [{"index": 0, "delta": {"content": "a"}}]}]
    aggregator = Aggregator("mistral")
    for payload in payloads:
        aggregator.feed(payload)
    state = aggregator._state
    assert isinstance(state, OpenAIChatState) and state.wire != "openai-chat"
    assert state.plain() is None
