"""Every recorded stream in the shared corpus decodes, to the calls a person read off the files by hand.

The expectation table below was written by reading each file in ../shared/payloads/*/stream, not by running the
decoder. Where the corpus also holds the same conversation (or the same fixture family) as a whole response,
both decode to the same calls, content kinds and finish reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.projects import SHARED, shared_dir

from toolgen.runtime.streams.aggregator import stream_events
from toolgen.runtime.streams.events import (
    Event,
    Finish,
    MessageEnd,
    MessageStart,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolgen.runtime.wires.canonical import ProviderError, Response

STRING_ARGUMENT_WIRES = {"openai-chat", "mistral", "openai-responses", "cohere"}
ANY = object()  # an id the wire does not send: the decoder makes one up


@dataclass(frozen=True)
class Expect:
    calls: list[tuple[Any, str, Any]] = field(default_factory=list)
    text: str | None = None  # the whole answer text, when short enough to write out
    text_start: str = ""
    reasoning_start: str = ""
    finish: str | None = None  # normalized reason; None: tool_calls when there are calls, else stop
    usage: tuple[int, int] | None = None  # (input, output) where the wire's mapping is unambiguous
    error_code: str | None = None  # the code of a provider error the stream carries


RECIPE = {
    "recipe": {
        "ingredients": [
            {"amount": "16 oz", "name": "Lasagna noodles"},
            {"amount": "1 lb", "name": "Ground beef"},
            {"amount": "15 oz", "name": "Ricotta cheese"},
            {"amount": "3 cups", "name": "Mozzarella cheese"},
            {"amount": "1/2 cup", "name": "Parmesan cheese"},
            {"amount": "24 oz", "name": "Tomato sauce"},
            {"amount": "1", "name": "Egg"},
            {"amount": "2 cloves", "name": "Garlic"},
            {"amount": "1 tsp", "name": "Salt"},
            {"amount": "1/2 tsp", "name": "Pepper"},
        ],
        "name": "Lasagna",
        "steps": [
            "Preheat oven to 375°F (190°C).",
            "Cook lasagna noodles according to package directions, drain and set aside.",
            "Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce. Simmer for 10 minutes.",
            "In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.",
            "In a 9x13 baking dish, spread a thin layer of meat sauce.",
            "Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.",
            "Top with remaining mozzarella cheese.",
            "Cover with foil and bake for 25 minutes.",
            "Remove foil and bake for another 25 minutes until golden.",
            "Let stand for 15 minutes before serving.",
        ],
    }
}
SF = {"location": "San Francisco"}

EXPECTED: dict[str, Expect] = {
    "openai-chat/stream/alibaba-qwen3max-tool-call-empty-ids.jsonl": Expect(
        calls=[("call_eee11723464a4b9eb8cee71d", "weather", SF)], text="", usage=(295, 22)
    ),
    "openai-chat/stream/anthropic-compat-tool-call-index-starts-at-1.sse": Expect(
        calls=[("toolu_sanitized", "read_file", {"path": "a.txt"})], text="Reading it."
    ),
    "openai-chat/stream/deepseek-reasoner-tool-call.jsonl": Expect(
        calls=[("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", SF)],
        text="",
        reasoning_start="The user is asking for the weather in San Francisco.",
        usage=(339, 83),
    ),
    "openai-chat/stream/groq-gptoss-error-event-midstream.sse": Expect(
        text="",
        reasoning_start="We need to call the tool with invalid parameters first",
        finish="error",
        error_code="tool_use_failed",
    ),
    "openai-chat/stream/groq-llama33-tool-call-single-chunk.jsonl": Expect(
        calls=[("tk85n1k4m", "weather", {})], usage=(210, 15)
    ),
    "openai-chat/stream/openai-gpt4o-parallel-tool-calls.sse": Expect(
        calls=[
            ("call_3rqTYrA6H21AYUaRGP4F66oq", "get_country", {}),
            ("call_Xw9XMKBJU48kAAd78WgIswDx", "get_product_name", {}),
        ],
        text="",
        usage=(364, 40),
    ),
    "openai-chat/stream/openai-gpt4o-single-tool-call-fragmented.sse": Expect(
        calls=[("call_Vz0Sie91Ap56nH0ThKGrZXT7", "get_weather", {"city": "Mexico City"})], text="", usage=(423, 15)
    ),
    "openai-chat/stream/xai-grok3mini-reasoning-then-tool-call.jsonl": Expect(
        calls=[("call_79382389", "weather", SF)],
        text="",
        reasoning_start="First, the user is asking about the weather",
        usage=(307, 26),
    ),
    "mistral/stream/magistral-thinking-content-chunks.jsonl": Expect(
        text="2 + 2 = 4", reasoning_start="The user is asking for 2+2. This is basic arithmetic. 2+2=4.", usage=(10, 46)
    ),
    "mistral/stream/mistral-hosted-glm-incremental-tool-call.jsonl": Expect(
        calls=[("chatcmpl-tool-9f149c74c42f265b", "webSearchTool", {"query": "current Berlin weather"})],
        text="",
        usage=(171, 14),
    ),
    "mistral/stream/mistral-small-tool-call.jsonl": Expect(
        calls=[("gSIMJiOkT", "weather", SF)], text="", usage=(124, 22)
    ),
    "openai-responses/stream/azure-gpt51-function-call.jsonl": Expect(
        calls=[("call_H5DxLSFnsGhiROnUiDHmgyc8", "weather", SF)], text="", usage=(45, 24)
    ),
    "openai-responses/stream/lmstudio-glm47-function-call.jsonl": Expect(
        calls=[("call_2025306790300011", "weather", SF)],
        text="I'll get the current weather information for San Francisco for you.",
        reasoning_start="The user is asking for the weather in San Francisco. I have a weather function",
        usage=(182, 61),
    ),
    "openai-responses/stream/openai-error-insufficient-quota.jsonl": Expect(
        text="", finish="error", error_code="insufficient_quota"
    ),
    "anthropic/stream/claude-haiku45-tool-use-json.jsonl": Expect(
        calls=[
            (
                "toolu_01KFbKqPYSuAKujiL6mTfzYA",
                "json",
                {"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]},
            )
        ],
        text="",
        usage=(849, 47),
    ),
    "anthropic/stream/claude-sonnet45-tool-use-no-args.jsonl": Expect(
        calls=[("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", {})],
        text="I'll update the issue list for you.",
        usage=(565, 48),
    ),
    "anthropic/stream/claude-sonnet46-server-tool-then-tool-use.sse": Expect(
        calls=[("toolu_01EFn5wTNBYA8Reni8rbmnHT", "get_exchange_rate", {"from_currency": "USD", "to_currency": "EUR"})],
        text="Let me search for a tool that can provide current exchange rate information."
        "I found the right tool! Let me fetch the current USD to EUR exchange rate for you.",
        usage=(1591, 175),
    ),
    "gemini/stream/gemini20flash-alt-json-array.json": Expect(text="15 * 7 is 105.\n"),
    "gemini/stream/gemini31pro-streamed-args-partialargs.jsonl": Expect(
        calls=[(ANY, "getWeather", {"location": "Boston"}), (ANY, "getWeather", {"location": "San Francisco"})], text=""
    ),
    "gemini/stream/gemini3pro-function-call-thought-signature.sse": Expect(calls=[(ANY, "get_country", {})], text=""),
    "gemini/stream/gemini3pro-function-call.jsonl": Expect(calls=[(ANY, "weather", SF)], text=""),
    "gemini/stream/vertex-gemini31pro-streamed-args-nested.jsonl": Expect(calls=[(ANY, "cookRecipe", RECIPE)], text=""),
    "gemini/stream/vertex-gemini3flash-no-args-and-parallel-streamed.jsonl": Expect(
        calls=[
            (ANY, "read_theme", {}),
            (ANY, "read_screen", {"id": "A"}),
            (ANY, "read_screen", {"id": "B"}),
            (ANY, "read_screen", {"id": "C"}),
        ],
        text="",
        reasoning_start="**Processing User Requests**",
    ),
    "google-interactions/stream/gemini25flash-function-call-step.jsonl": Expect(
        calls=[("61nzpsv4", "getWeather", SF)], text=""
    ),
    "bedrock-converse/stream/claude-text-sdk-decoded.jsonl": Expect(
        text='Let me count the "r"s in "strawberry":\n\ns-t-**r**-a-w-b-e-**r**-**r**-y\n\n'
        'There are **3** r\'s in "strawberry."',
        usage=(22, 55),
    ),
    "bedrock-converse/stream/nova-micro-tool-use.eventstream": Expect(
        calls=[("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_temperature", {"city": "Paris"})],
        text_start="<thinking> To find the temperature of the capital of France,",
        usage=(471, 91),
    ),
    "bedrock-converse/stream/text-then-two-tool-uses-sdk-decoded.jsonl": Expect(
        calls=[("weather-tool-1", "weather", SF), ("weather-tool-2", "weather", {"location": "London"})],
        text="2 + 2 equals 4. Now let me check the weather for you.",
        usage=(500, 100),
    ),
    "ollama/stream/ollama-gemma3-chat-text.ndjson": Expect(text="Okay, here we go!\n\n1, 2, 3, 4, 5\n"),
    "cohere/stream/cohere-parallel-tool-calls.jsonl": Expect(
        calls=[
            ("weather_e8p4pn45zt0t", "weather", SF),
            ("cityAttractions_pyxssbwnq9fq", "cityAttractions", {"city": "San Francisco"}),
        ],
        text="",
    ),
    "cohere/stream/cohere-tool-call-no-arg-deltas.jsonl": Expect(
        calls=[("currentTime_y46ar19t5gvw", "currentTime", {})], text=""
    ),
}

# The same conversation (or fixture family) recorded whole: stream file -> response file.
PAIRS = {
    "openai-chat/stream/deepseek-reasoner-tool-call.jsonl": "openai-chat/response/deepseek-reasoner-tool-call.json",
    "openai-chat/stream/groq-llama33-tool-call-single-chunk.jsonl": "openai-chat/response/groq-llama33-tool-call.json",
    "openai-chat/stream/xai-grok3mini-reasoning-then-tool-call.jsonl": "openai-chat/response/xai-grok3mini-tool-call-empty-content.json",
    "openai-chat/stream/groq-gptoss-error-event-midstream.sse": "openai-chat/response/groq-error-tool-use-failed.json",
    "mistral/stream/mistral-small-tool-call.jsonl": "mistral/response/mistral-small-tool-call.json",
    "openai-responses/stream/azure-gpt51-function-call.jsonl": "openai-responses/response/azure-gpt51-function-call.json",
    "anthropic/stream/claude-sonnet45-tool-use-no-args.jsonl": "anthropic/response/claude3opus-tool-use-no-args.json",
    "gemini/stream/gemini3pro-function-call.jsonl": "gemini/response/gemini3pro-function-call-thought-signature.json",
    "google-interactions/stream/gemini25flash-function-call-step.jsonl": "google-interactions/response/gemini25flash-function-call-step.json",
    "cohere/stream/cohere-parallel-tool-calls.jsonl": "cohere/response/cohere-parallel-tool-calls.json",
}


def corpus_streams() -> list[str]:
    base = SHARED / "payloads"
    return sorted(str(path.relative_to(base)) for path in base.glob("*/stream/*")) if base.is_dir() else []


def load(relative: str) -> tuple[str, bytes]:
    path = shared_dir("payloads") / relative
    return relative.split("/")[0], path.read_bytes()


def run(relative: str) -> list[Event]:
    wire, body = load(relative)
    return list(stream_events(body, wire))


def texts(events: list[Event], kind: type[TextDelta] | type[ReasoningDelta]) -> str:
    return "".join(event.text for event in events if isinstance(event, kind))


def parts_text(message: dict[str, Any], kind: str) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content if kind == "text" else ""
    return "".join(part.get("text") or "" for part in content or [] if part.get("type") == kind)


def test_the_table_covers_every_stream_in_the_corpus() -> None:
    shared_dir("payloads")
    assert sorted(EXPECTED) == corpus_streams()


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_stream_decodes_to_the_expected_message(relative: str) -> None:
    expect = EXPECTED[relative]
    events = run(relative)
    errors = [event for event in events if isinstance(event, StreamError)]
    if expect.error_code is None:
        assert errors == []
    else:
        assert [e.code for e in errors if e.provider] == [expect.error_code]
        assert [e for e in errors if not e.provider] == []
    result = events[-1].response if isinstance(events[-1], MessageEnd) else None
    if expect.error_code is not None and not (expect.text or expect.reasoning_start):
        assert isinstance(result, ProviderError) and result.code == expect.error_code
        return
    assert isinstance(result, Response)
    message = result.message
    calls = message.get("tool_calls", [])
    assert [call["function"]["name"] for call in calls] == [name for _, name, _ in expect.calls]
    assert [json.loads(call["function"]["arguments"]) for call in calls] == [args for _, _, args in expect.calls]
    for call, (call_id, _, _) in zip(calls, expect.calls, strict=True):
        assert call["id"] == call_id if call_id is not ANY else call["id"].startswith("call_")
    text = texts(events, TextDelta)
    if expect.text is not None:
        assert text == expect.text
    assert text.startswith(expect.text_start)
    assert texts(events, ReasoningDelta).startswith(expect.reasoning_start)
    assert result.finish is not None
    assert result.finish["reason"] == (expect.finish or ("tool_calls" if expect.calls else "stop"))
    if expect.usage is not None:
        assert result.usage is not None
        assert (result.usage["input_tokens"], result.usage["output_tokens"]) == expect.usage


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_events_agree_with_the_final_message(relative: str) -> None:
    wire = relative.split("/")[0]
    events = run(relative)
    assert isinstance(events[0], MessageStart)
    assert isinstance(events[-1], MessageEnd) and isinstance(events[-2], Finish)
    result = events[-1].response
    if not isinstance(result, Response):
        return
    calls = result.message.get("tool_calls", [])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert (
        [s.index for s in starts] == [e.index for e in sorted(ends, key=lambda e: e.index)] == list(range(len(calls)))
    )
    for end in ends:
        call = calls[end.index]
        assert (end.id, end.name, end.arguments) == (
            call["id"],
            call["function"]["name"],
            call["function"]["arguments"],
        )
        assert end.error is None and end.parsed == json.loads(end.arguments)
        start = starts[end.index]
        assert start.name == end.name and start.id in (None, end.id)
        live = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == end.index)
        if wire in STRING_ARGUMENT_WIRES:
            assert live in (end.arguments, "" if end.arguments == "{}" else None)
        else:
            assert json.loads(live or "{}") == end.parsed
    assert texts(events, TextDelta) == parts_text(result.message, "text")
    assert texts(events, ReasoningDelta) == parts_text(result.message, "reasoning")
    assert events[-1].complete == (not any(isinstance(e, StreamError) for e in events))


def decode_whole(wire: str, body: Any) -> Response | ProviderError:
    from toolgen.runtime.wires.codecs import codec

    return codec(wire).decode_response(body)


@pytest.mark.parametrize("relative", sorted(PAIRS))
def test_stream_matches_the_whole_response(relative: str) -> None:
    wire, _ = load(relative)
    whole = decode_whole(wire, json.loads((shared_dir("payloads") / PAIRS[relative]).read_text(encoding="utf-8")))
    streamed = run(relative)[-1]
    assert isinstance(streamed, MessageEnd)
    result = streamed.response
    if isinstance(whole, ProviderError):
        # The stream carried the same error mid-way, after content: a partial message that finished with it.
        code = result.code if isinstance(result, ProviderError) else (result.finish or {}).get("raw")
        assert whole.code == code
        return
    assert isinstance(result, Response)
    assert shape(result.message) == shape(whole.message)
    assert result.finish is not None and whole.finish is not None
    assert result.finish["reason"] == whole.finish["reason"]
    if result.id == whole.id:
        # The very same response (Mistral's capture): everything canonical agrees, not just the shape.
        assert strip(result.message) == strip(whole.message)
        assert (result.usage, result.model) == (whole.usage, whole.model)


def shape(message: dict[str, Any]) -> dict[str, Any]:
    """What two runs of the same request share: content kinds, call names and arguments."""
    content = message.get("content")
    kinds = (
        "text"
        if isinstance(content, str) and content
        else [p.get("type") for p in content]
        if isinstance(content, list)
        else None
    )
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls", [])]
    return {"role": message["role"], "content": kinds, "calls": calls}


def strip(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "extras"}


def test_a_stream_fed_line_by_line_matches_the_whole_body() -> None:
    wire, body = load("openai-chat/stream/openai-gpt4o-parallel-tool-calls.sse")
    lines = body.splitlines(keepends=True)
    assert list(stream_events(lines, wire)) == list(stream_events(body, wire))


def test_recorded_stream_cut_short_reports_it() -> None:
    wire, body = load("anthropic/stream/claude-sonnet46-server-tool-then-tool-use.sse")
    cut = body[: body.index(b'"partial_json":"D\\""')]
    events = list(stream_events(cut, wire))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    result = end.response
    assert isinstance(result, Response)
    # The call never got its content_block_stop: it is cut, out of the message, its end event without arguments.
    assert "tool_calls" not in result.message
    assert result.extras["stream"]["cut_calls"][0]["arguments_received"] == '{"from_currency": "US'
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [(e.name, e.arguments, e.parsed) for e in ends] == [("get_exchange_rate", None, None)]
    assert ends[0].error is not None and "content_block_stop" in ends[0].error
    assert result.finish == {"reason": "error", "raw": None}
    assert any("stream ended before message_stop" in e.message for e in events if isinstance(e, StreamError))
    assert end.status == "cut" and not end.complete


def test_corpus_paths_exist() -> None:
    base = shared_dir("payloads")
    for relative in [*EXPECTED, *PAIRS.values()]:
        assert (base / relative).is_file(), relative
    assert Path(base).is_dir()
