"""The loop's recovery from broken model calls, offline: streams cut mid-way (retried, then kept as incomplete
text), length and content_filter finishes, context-length errors, calls announced as the stream starts them,
and token estimates for the budget before the first call."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator, Iterator
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.projects import REPO_ROOT

USER = [{"role": "user", "content": "What's the weather in Paris?"}]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "loop"
ANSWER = (FIXTURES / "openai-chat-answer.sse").read_text(encoding="utf-8")
CALLS = (FIXTURES / "openai-chat-weather-parallel.sse").read_text(encoding="utf-8")
# The answer's stream, broken off after its third delta: no finish, no usage, no [DONE].
CUT_ANSWER = ANSWER[: ANSWER.index('{"content":"and Oslo')].rsplit("data:", 1)[0]
PARTIAL = "It is sunny in Paris\n(18 °C) "
WHOLE = "It is sunny in Paris\n(18 °C) and Oslo\u2028too."
MODES = ["sync", "async"]


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(package=source_package, runtime=importlib.import_module(f"{name}._runtime"))


def weather_tools(sdk: SimpleNamespace, ran: list[Any] | None = None) -> Any:
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        if ran is not None:
            ran.append(args.location)
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=18, unit="celsius")

    return tools


def drive(sdk: SimpleNamespace, mode: str, messages: list[Any], model: Any, tools: Any, **settings: Any) -> Any:
    """The result and every event of run_events() or arun_events(), the same arguments either way."""
    if mode == "sync":
        events = sdk.runtime.run_events(messages, model, tools, **settings)
        collected = list(events)
        return events.result, collected

    async def go() -> tuple[Any, list[Any]]:
        events = sdk.runtime.arun_events(messages, model, tools, **settings)
        collected = [event async for event in events]
        return events.result, collected

    return asyncio.run(go())


def of_type(events: list[Any], kind: str) -> list[dict[str, Any]]:
    return [dict(event.data) for event in events if event.type == kind]


# ---- a stream cut mid-way ----


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
def test_a_stream_cut_midway_is_asked_again_and_the_retry_answers(
    sdk: SimpleNamespace, mode: str, stream: bool
) -> None:
    model = sdk.runtime.ReplayModel([CUT_ANSWER, ANSWER], wire="openai-chat")
    result, events = drive(sdk, mode, USER, model, weather_tools(sdk), stream=stream)
    assert result.stop_reason == "finished" and result.text == WHOLE
    assert len(model.requests) == 2 and model.requests[1].messages == USER  # the broken half is not sent back
    assert [m["role"] for m in result.messages] == ["user", "assistant"]
    assert result.metrics.model_calls == 2 and result.metrics.model_retries == 1 and result.steps == 1
    retried = [e for e in of_type(events, "error") if e["retry"] is not None]
    assert len(retried) == 1 and retried[0]["type"] == "cut" and retried[0]["fatal"] is False
    assert retried[0]["retry"] == 2
    assert [(e["step"], e["attempt"]) for e in of_type(events, "model_call_started")] == [(1, 1), (1, 2)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
def test_a_stream_cut_for_good_keeps_its_text_marked_incomplete(sdk: SimpleNamespace, mode: str, stream: bool) -> None:
    model = sdk.runtime.ReplayModel([CUT_ANSWER, CUT_ANSWER, ANSWER], wire="openai-chat")
    result, events = drive(sdk, mode, USER, model, weather_tools(sdk), stream=stream)
    assert result.stop_reason == "error" and result.error.type == "cut"
    assert len(model.requests) == 2
    last = result.messages[-1]
    assert last == {
        "role": "assistant",
        "content": PARTIAL,
        "extras": {"toolgen": {"incomplete": True, "reason": "cut"}},
    }
    assert [m["role"] for m in result.messages] == ["user", "assistant"]
    sdk.package.validate_messages(result.messages)
    assert of_type(events, "error")[-1]["fatal"] is True


def test_the_retry_policy_says_how_often_and_for_what(sdk: SimpleNamespace) -> None:
    rt = sdk.runtime
    thrice = rt.ReplayModel([CUT_ANSWER, CUT_ANSWER, ANSWER], wire="openai-chat")
    result = rt.run(USER, thrice, weather_tools(sdk), stream=True, stream_retry=rt.StreamRetry(attempts=3))
    assert result.stop_reason == "finished" and len(thrice.requests) == 3
    never = rt.ReplayModel([CUT_ANSWER, ANSWER], wire="openai-chat")
    result = rt.run(USER, never, weather_tools(sdk), stream=True, stream_retry=None)
    assert result.stop_reason == "error" and len(never.requests) == 1 and result.messages[-1]["content"] == PARTIAL
    # A provider's error is retried only when the policy names it.
    overloaded = rt.ProviderError("anthropic", "Overloaded", type="overloaded_error", status=529)
    plain = rt.ScriptedModel([overloaded, "fine"])
    assert rt.run(USER, plain, weather_tools(sdk)).stop_reason == "error" and len(plain.requests) == 1
    named = rt.ScriptedModel([overloaded, "fine"])
    policy = rt.StreamRetry(errors=frozenset({"overloaded_error"}))
    assert rt.run(USER, named, weather_tools(sdk), stream_retry=policy).text == "fine"
    for bad in ({"attempts": 0}, {"delay": -1.0}):
        with pytest.raises(ValueError, match="attempts >= 1 and delay >= 0"):
            rt.StreamRetry(**bad)


@pytest.mark.parametrize("mode", MODES)
def test_a_stream_cut_inside_a_call_keeps_the_text_and_no_half_formed_call(sdk: SimpleNamespace, mode: str) -> None:
    lead = ANSWER.split("data:")[1:3]  # the role chunk and "It is "
    cut = "".join(f"data:{chunk}" for chunk in lead) + CALLS[: CALLS.index('"Oslo\\"')]
    ran: list[Any] = []
    model = sdk.runtime.ReplayModel([cut, cut], wire="openai-chat")
    result, events = drive(sdk, mode, USER, model, weather_tools(sdk, ran), stream=True)
    assert result.stop_reason == "error" and ran == []
    assert result.messages[-1]["content"] == "It is " and "tool_calls" not in result.messages[-1]
    assert not sdk.runtime.check_pairing(result.messages)
    # Every call the stream announced is closed again as skipped, on each attempt.
    started = of_type(events, "tool_call_started")
    finished = of_type(events, "tool_call_finished")
    assert [e["id"] for e in started] == ["call_paris", "call_oslo"] * 2
    assert [(e["id"], e["status"], e["error_kind"]) for e in finished] == [
        ("call_paris", "skipped", "cut"),
        ("call_oslo", "skipped", "cut"),
    ] * 2
    assert result.metrics.tool_calls == 0


# ---- length and content_filter ----


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_a_length_or_content_filter_finish_is_its_own_stop(sdk: SimpleNamespace, mode: str, reason: str) -> None:
    rt = sdk.runtime
    answer = rt.Response(
        rt.assistant_turn("The weather in Paris is", rt.tool_call("get_current_weather", {"location": "Par"}, id="c")),
        {"reason": reason, "raw": reason},
    )
    ran: list[Any] = []
    model = rt.ScriptedModel([answer, "never asked"])
    result, events = drive(sdk, mode, USER, model, weather_tools(sdk, ran), stream=True)
    assert result.stop_reason == reason and len(model.requests) == 1 and ran == []
    assert result.text == "The weather in Paris is" and "tool_calls" not in result.messages[-1]
    assert result.error is None and not rt.check_pairing(result.messages)
    assert of_type(events, "run_finished")[0]["stop_reason"] == reason
    assert [(e["id"], e["status"], e["error_kind"]) for e in of_type(events, "tool_call_finished")] == [
        ("c", "skipped", reason)
    ]


def test_a_recorded_length_finish_stops_with_length(sdk: SimpleNamespace) -> None:
    body = ANSWER.replace('"finish_reason":"stop"', '"finish_reason":"length"')
    for stream in (False, True):
        result = sdk.runtime.run(
            USER, sdk.runtime.ReplayModel([body], wire="openai-chat"), weather_tools(sdk), stream=stream
        )
        assert result.stop_reason == "length" and result.text == WHOLE


# ---- context-length errors ----


def too_long(sdk: SimpleNamespace) -> Any:
    return sdk.runtime.ProviderError(
        "openai-chat",
        "This model's maximum context length is 128000 tokens.",
        type="invalid_request_error",
        code="context_length_exceeded",
        status=400,
    )


def long_history() -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for n in range(3):
        history += [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
    return [*history, {"role": "user", "content": "latest"}]


@pytest.mark.parametrize("mode", MODES)
def test_a_context_length_error_trims_with_the_budget_and_tries_once_more(sdk: SimpleNamespace, mode: str) -> None:
    rt = sdk.runtime
    infos: list[Any] = []
    keep = rt.keep_last_turns(1, above_input_tokens=1_000_000)

    def budget(messages: list[dict[str, Any]], info: Any) -> Any:
        infos.append(info)
        return keep(messages, info)

    model = rt.ScriptedModel([too_long(sdk), "fits now"])
    result, events = drive(sdk, mode, long_history(), model, weather_tools(sdk), budget=budget)
    assert result.stop_reason == "finished" and result.text == "fits now"
    assert [m["content"] for m in model.requests[0].messages] == [m["content"] for m in long_history()]
    assert [m["content"] for m in model.requests[1].messages] == ["sys", "latest"]
    assert [info.overflow for info in infos] == [False, True] and infos[1].step == 1
    assert result.metrics.model_retries == 1
    assert [e["type"] for e in of_type(events, "error")] == ["invalid_request_error"]


def test_a_context_length_error_stops_the_run_when_trimming_cannot_help(sdk: SimpleNamespace) -> None:
    rt = sdk.runtime
    without = rt.ScriptedModel([too_long(sdk), "never"])
    assert rt.run(long_history(), without, weather_tools(sdk)).stop_reason == "error" and len(without.requests) == 1
    unchanged = rt.ScriptedModel([too_long(sdk), "never"])
    result = rt.run(long_history(), unchanged, weather_tools(sdk), budget=lambda messages, info: None)
    assert result.stop_reason == "error" and len(unchanged.requests) == 1
    assert result.error.code == "context_length_exceeded"
    twice = rt.ScriptedModel([too_long(sdk), too_long(sdk), "never"])
    keep = rt.keep_last_turns(1, above_input_tokens=1_000_000)
    result = rt.run(long_history(), twice, weather_tools(sdk), budget=keep)
    assert result.stop_reason == "error" and len(twice.requests) == 2


def test_context_length_errors_are_told_apart_from_others(sdk: SimpleNamespace) -> None:
    error = sdk.runtime.ProviderError
    overflow = sdk.runtime.is_context_overflow
    assert overflow(too_long(sdk))
    assert overflow(
        error("anthropic", "prompt is too long: 210000 tokens > 200000 maximum", type="invalid_request_error")
    )
    assert overflow(error("gemini", "The input token count (1200000) exceeds the maximum number of tokens allowed"))
    assert overflow(error("bedrock-converse", "Input is too long for requested model.", type="ValidationException"))
    assert not overflow(error("openai-chat", "Rate limit reached", type="rate_limit_error", code="rate_limit_exceeded"))
    assert not overflow(error("anthropic", "Overloaded", type="overloaded_error"))


# ---- calls announced as the stream starts them ----


class SlowStream:
    """A model whose stream hands over one event at a time, noting how many run events were out before each."""

    def __init__(self, sdk: SimpleNamespace, seen: list[Any]) -> None:
        rt = sdk.runtime
        self._turns = [
            rt.Response(
                rt.assistant_turn(None, rt.tool_call("get_current_weather", {"location": "Paris"}, id="call_1")),
                {"reason": "tool_calls", "raw": None},
            ),
            rt.Response({"role": "assistant", "content": "Mild."}, {"reason": "stop", "raw": None}),
        ]
        self._events = importlib.import_module(f"{sdk.package.__name__}._runtime.clients.base").response_events
        self.seen = seen
        self.before: list[tuple[str, list[str]]] = []

    def stream(self, request: Any) -> Iterator[Any]:
        for event in self._events(self._turns.pop(0)):
            self.before.append((type(event).__name__, [e.type for e in self.seen]))
            yield event

    async def astream(self, request: Any) -> AsyncIterator[Any]:
        for event in self.stream(request):
            yield event


@pytest.mark.parametrize("mode", MODES)
def test_tool_call_started_comes_as_soon_as_the_stream_announces_the_call(sdk: SimpleNamespace, mode: str) -> None:
    seen: list[Any] = []
    model = SlowStream(sdk, seen)
    result, events = drive(sdk, mode, USER, model, weather_tools(sdk), stream=True, on_event=seen.append)
    assert result.stop_reason == "finished"
    # When the stream hands over the event after ToolCallStart, on_event has had tool_call_started already.
    names = [name for name, _ in model.before]
    after_start = model.before[names.index("ToolCallStart") + 1][1]
    assert after_start[-1] == "tool_call_started" and "model_call_finished" not in after_start
    started = of_type(events, "tool_call_started")
    assert started == [{"id": "call_1", "name": "get_current_weather", "arguments": None, "index": 0}]
    deltas = of_type(events, "tool_call_delta")
    assert "".join(d["arguments"] for d in deltas) == '{"location": "Paris"}'
    assert {d["id"] for d in deltas} == {"call_1"} and {d["index"] for d in deltas} == {0}
    types = [event.type for event in events]
    assert types.index("tool_call_started") < types.index("model_call_finished") < types.index("tool_call_finished")


def test_without_streaming_tool_call_started_comes_when_the_call_runs(sdk: SimpleNamespace) -> None:
    rt = sdk.runtime
    turn = rt.assistant_turn(None, rt.tool_call("get_current_weather", {"location": "Oslo"}, id="w"))
    events = list(rt.run_events(USER, rt.ScriptedModel([turn, "Mild."]), weather_tools(sdk)))
    assert of_type(events, "tool_call_started") == [
        {"id": "w", "name": "get_current_weather", "arguments": '{"location": "Oslo"}', "index": None}
    ]
    assert of_type(events, "tool_call_delta") == []


# ---- token estimates ----


def test_the_budget_can_trim_before_the_first_call_from_a_token_estimate(sdk: SimpleNamespace) -> None:
    rt = sdk.runtime
    history = long_history()
    history[1]["content"] = "word " * 400  # about 500 tokens at four characters a token
    keep = rt.keep_last_turns(1, above_input_tokens=200)
    estimated = rt.ScriptedModel(["ok"])
    rt.run(history, estimated, weather_tools(sdk), budget=keep)
    assert [m["content"] for m in estimated.requests[0].messages] == ["sys", "latest"]
    blind = rt.ScriptedModel(["ok"])
    rt.run(history, blind, weather_tools(sdk), budget=keep, token_estimate=None)
    assert len(blind.requests[0].messages) == len(history)
    # A tokenizer of one's own: here one token a word, so the 400 words pass 200 as well.
    infos: list[Any] = []
    words = rt.ScriptedModel(["ok"])
    rt.run(
        history,
        words,
        weather_tools(sdk),
        budget=lambda messages, info: infos.append(info),
        token_estimate=rt.token_counter(str.split),
    )
    assert infos[0].estimated_input_tokens == 400 + 7 + 4 * len(history) and infos[0].last_input_tokens is None


def test_the_default_estimate_is_about_four_characters_a_token(sdk: SimpleNamespace) -> None:
    estimate = sdk.runtime.estimate_tokens
    assert estimate([]) == 0
    assert estimate([{"role": "user", "content": "x" * 400}]) == 100 + 4
    call = sdk.runtime.tool_call("get_current_weather", {"location": "Paris"}, id="c")
    assert estimate([{"role": "assistant", "content": None, "tool_calls": [call]}]) > 4
