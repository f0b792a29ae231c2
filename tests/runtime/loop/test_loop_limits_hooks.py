"""The agent loop offline: step and call limits, cancellation, hooks, the budget, resuming, and its options."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import threading
import time
import typing
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from support.projects import SOURCE_PACKAGE
from test_loop_calls import MODES, USER, call, drive, no_unanswered_calls, weather_tools

# ---- limits and cancellation ----


def forever(sdk: SimpleNamespace) -> Callable[[Any], Any]:
    def turn(request: Any) -> Any:
        step = sum(1 for m in request.messages if m["role"] == "assistant")
        return sdk.runtime.assistant_turn(None, call(sdk, "get_current_weather", {"location": "Oslo"}, f"w{step}"))

    return turn


@pytest.mark.parametrize("mode", MODES)
def test_max_steps_stops_the_run(sdk: SimpleNamespace, mode: str) -> None:
    model = sdk.runtime.ScriptedModel([forever(sdk)] * 10)
    result = drive(sdk, mode, USER, model, weather_tools(sdk), max_steps=3)
    assert result.stop_reason == "max_steps" and result.steps == 3 and len(model.requests) == 3
    assert result.metrics.tool_calls == 3 and no_unanswered_calls(sdk, result.messages)
    assert result.final is not None and result.final["tool_calls"][0]["id"] == "w2"


@pytest.mark.parametrize("mode", MODES)
def test_max_tool_calls_runs_what_fits_answers_the_rest_and_stops(sdk: SimpleNamespace, mode: str) -> None:
    calls = [call(sdk, "get_current_weather", {"location": city}, city) for city in ("Oslo", "Rome", "Lima")]
    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, *calls), "unused"])
    result = drive(sdk, mode, USER, model, weather_tools(sdk), max_tool_calls=2)
    assert result.stop_reason == "max_tool_calls" and len(model.requests) == 1
    assert [r.status for r in result.calls] == ["ok", "ok", "skipped"]
    assert "limit of 2 tool calls" in result.messages[-1]["content"]
    assert no_unanswered_calls(sdk, result.messages)


@pytest.mark.parametrize("mode", MODES)
def test_a_cancel_token_stops_between_steps(sdk: SimpleNamespace, mode: str) -> None:
    cancel = threading.Event()
    model = sdk.runtime.ScriptedModel([forever(sdk)] * 10)
    hooks = sdk.runtime.Hooks(after_tool=lambda report: cancel.set())
    result = drive(sdk, mode, USER, model, weather_tools(sdk), cancel=cancel, hooks=hooks)
    assert result.stop_reason == "cancelled" and len(model.requests) == 1 and result.metrics.tool_calls == 1
    assert no_unanswered_calls(sdk, result.messages)


@pytest.mark.parametrize("mode", MODES)
def test_a_cancel_token_stops_a_stream_midway(sdk: SimpleNamespace, mode: str) -> None:
    cancel = threading.Event()
    texts: list[str] = []

    def on_event(event: Any) -> None:
        if event.type == "text_delta":
            texts.append(event.data["text"])
            cancel.set()

    model = sdk.runtime.ScriptedModel(["one two three four five"])
    result = drive(sdk, mode, USER, model, weather_tools(sdk), cancel=cancel, on_event=on_event, stream=True)
    assert result.stop_reason == "cancelled" and texts == ["one "]


def test_a_cancel_token_interrupts_a_model_call_in_flight_in_arun(sdk: SimpleNamespace) -> None:
    async def scenario() -> Any:
        cancel = asyncio.Event()
        model = sdk.runtime.ScriptedModel(["too late"], delay=5)
        asyncio.get_running_loop().call_later(0.05, cancel.set)
        return await sdk.runtime.arun(USER, model, weather_tools(sdk), cancel=cancel)

    started = time.perf_counter()
    result = asyncio.run(scenario())
    assert result.stop_reason == "cancelled" and time.perf_counter() - started < 2


def test_cancelling_the_arun_task_propagates_and_reports_the_end(sdk: SimpleNamespace) -> None:
    events: list[Any] = []

    async def scenario() -> None:
        model = sdk.runtime.ScriptedModel(["too late"], delay=5)
        task = asyncio.ensure_future(sdk.runtime.arun(USER, model, weather_tools(sdk), on_event=events.append))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert events[-1].type == "run_finished" and events[-1].data["stop_reason"] == "cancelled"


# ---- hooks, budget, resume ----


@pytest.mark.parametrize("mode", MODES)
def test_hooks_run_around_every_model_and_tool_call(sdk: SimpleNamespace, mode: str) -> None:
    log: list[str] = []

    def before_model(step: int, request: Any) -> Any:
        log.append(f"before_model {step}")
        system = {"role": "system", "content": "Be brief."}
        return type(request)([system, *request.messages], request.tools, request.model, request.extras)

    hooks = sdk.runtime.Hooks(
        before_model=before_model,
        after_model=lambda step, response: log.append(f"after_model {step}"),
        before_tool=lambda tool_call, ctx: log.append(f"before_tool {tool_call['id']} {ctx.conversation_id}"),
        after_tool=lambda report: log.append(f"after_tool {report.call_id} {report.status}"),
    )
    turn = sdk.runtime.assistant_turn(None, call(sdk, "get_current_weather", {"location": "Oslo"}, "w"))
    model = sdk.runtime.ScriptedModel([turn, "Sunny."])
    result = drive(sdk, mode, USER, model, weather_tools(sdk), hooks=hooks, conversation_id="conv-7")
    assert log == [
        "before_model 1",
        "after_model 1",
        "before_tool w conv-7",
        "after_tool w ok",
        "before_model 2",
        "after_model 2",
    ]
    assert model.requests[0].messages[0] == {"role": "system", "content": "Be brief."}
    assert result.conversation_id == "conv-7"


def test_a_failing_hook_ends_the_run_with_the_error_and_a_valid_transcript(sdk: SimpleNamespace) -> None:
    def explode(tool_call: Any, ctx: Any) -> None:
        raise RuntimeError("hook bug")

    turn = sdk.runtime.assistant_turn(None, call(sdk, "get_current_weather", {"location": "Oslo"}, "w"))
    result = sdk.runtime.run(
        USER, sdk.runtime.ScriptedModel([turn]), weather_tools(sdk), hooks=sdk.runtime.Hooks(before_tool=explode)
    )
    assert result.stop_reason == "error" and isinstance(result.error, RuntimeError)
    assert no_unanswered_calls(sdk, result.messages)


def test_the_budget_hook_trims_the_conversation_before_a_model_call(sdk: SimpleNamespace) -> None:
    history = [{"role": "system", "content": "sys"}]
    for n in range(4):
        history += [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]
    history.append({"role": "user", "content": "latest"})
    infos: list[Any] = []
    keep = sdk.runtime.keep_last_turns(2)

    def budget(messages: list[dict[str, Any]], info: Any) -> Any:
        infos.append(info)
        return keep(messages, info)

    model = sdk.runtime.ScriptedModel(["fine"])
    result = sdk.runtime.run(history, model, weather_tools(sdk), budget=budget)
    sent = [m["content"] for m in model.requests[0].messages]
    assert sent == ["sys", "q3", "a3", "latest"]
    assert infos[0].step == 1 and result.messages[-1]["content"] == "fine"
    quiet = sdk.runtime.keep_last_turns(1, above_input_tokens=10_000)
    assert quiet(history, infos[0]) is None


def test_a_conversation_ending_with_unanswered_calls_resumes_with_them(sdk: SimpleNamespace) -> None:
    pending = sdk.runtime.assistant_turn(None, call(sdk, "get_current_weather", {"location": "Oslo"}, "w"))
    model = sdk.runtime.ScriptedModel(["Oslo is mild."])
    result = sdk.runtime.run([*USER, pending], model, weather_tools(sdk))
    assert result.stop_reason == "finished" and model.requests[0].messages[-1]["tool_call_id"] == "w"


def test_a_provider_error_stops_the_run_with_it(sdk: SimpleNamespace) -> None:
    error = sdk.runtime.ProviderError("openai-chat", "rate limited", code="rate_limit", status=429)
    events: list[Any] = []
    result = sdk.runtime.run(USER, sdk.runtime.ScriptedModel([error]), weather_tools(sdk), on_event=events.append)
    assert result.stop_reason == "error" and result.error is error
    assert [e.data for e in events if e.type == "error"][0]["code"] == "rate_limit"


def test_typed_messages_are_accepted(sdk: SimpleNamespace) -> None:
    typed = [sdk.package.UserMessage(role="user", content="hi")]
    result = sdk.runtime.run(typed, sdk.runtime.ScriptedModel(["hello"]), weather_tools(sdk))
    assert result.messages[0] == {"role": "user", "content": "hi"} and result.text == "hello"


# ---- options ----


def test_run_settings_are_the_fields_of_run_options_with_their_types(sdk: SimpleNamespace) -> None:
    options_module = importlib.import_module(f"{SOURCE_PACKAGE}._runtime.loop.options")
    fields = [f.name for f in dataclasses.fields(sdk.runtime.RunOptions)]
    assert list(options_module.RunSettings.__annotations__) == fields
    assert typing.get_type_hints(options_module.RunSettings) == typing.get_type_hints(sdk.runtime.RunOptions)
    for entry in (sdk.runtime.run, sdk.runtime.run_events, sdk.runtime.arun, sdk.runtime.arun_events):
        parameters = list(inspect.signature(entry).parameters.values())
        assert [p.name for p in parameters] == ["messages", "model", "registry", "options", "settings"], entry
        assert parameters[-1].kind is inspect.Parameter.VAR_KEYWORD
    assert importlib.import_module(f"{SOURCE_PACKAGE}.agent").RunOptions is sdk.runtime.RunOptions


@pytest.mark.parametrize("mode", MODES)
def test_an_options_object_runs_like_its_keywords_and_keywords_override_it(sdk: SimpleNamespace, mode: str) -> None:
    options = sdk.runtime.RunOptions(max_steps=2, conversation_id="shared")
    by_options = drive(sdk, mode, USER, sdk.runtime.ScriptedModel([forever(sdk)] * 5), weather_tools(sdk), options)
    by_keywords = drive(sdk, mode, USER, sdk.runtime.ScriptedModel([forever(sdk)] * 5), weather_tools(sdk), max_steps=2)
    assert (
        (by_options.stop_reason, by_options.steps) == (by_keywords.stop_reason, by_keywords.steps) == ("max_steps", 2)
    )
    assert by_options.conversation_id == "shared" and by_keywords.conversation_id != "shared"
    overridden = drive(
        sdk, mode, USER, sdk.runtime.ScriptedModel([forever(sdk)] * 5), weather_tools(sdk), options, max_steps=3
    )
    assert overridden.steps == 3 and overridden.conversation_id == "shared"
    assert options.max_steps == 2  # the options object is left as it was


def test_settings_that_cannot_be_are_refused_by_name(sdk: SimpleNamespace) -> None:
    model, tools = sdk.runtime.ScriptedModel(["hi"]), weather_tools(sdk)
    with pytest.raises(TypeError, match="unknown run setting\\(s\\): max_step, strem"):
        sdk.runtime.run(USER, model, tools, max_step=3, strem=True)
    with pytest.raises(TypeError, match="options must be a RunOptions, not dict"):
        sdk.runtime.run(USER, model, tools, {"max_steps": 3})
    with pytest.raises(ValueError, match="max_steps must be at least 1"):
        sdk.runtime.RunOptions(max_steps=0)
    with pytest.raises(ValueError, match="max_tool_calls at least 0"):
        sdk.runtime.run_events(USER, model, tools, sdk.runtime.RunOptions(), max_tool_calls=-1)
    assert model.requests == []


@pytest.mark.parametrize("mode", MODES)
def test_on_event_gets_every_event_the_iterators_yield(sdk: SimpleNamespace, mode: str) -> None:
    seen: list[Any] = []
    turn = sdk.runtime.assistant_turn(None, call(sdk, "get_current_weather", {"location": "Oslo"}, "w"))
    model = sdk.runtime.ScriptedModel([turn, "Mild."])
    if mode == "sync":
        events = sdk.runtime.run_events(USER, model, weather_tools(sdk), on_event=seen.append)
        yielded = list(events)
    else:

        async def collect() -> list[Any]:
            async def note(event: Any) -> None:
                seen.append(event)

            events = sdk.runtime.arun_events(USER, model, weather_tools(sdk), on_event=note)
            return [event async for event in events]

        yielded = asyncio.run(collect())
    assert seen == yielded and yielded[-1].type == "run_finished"


def test_an_async_on_event_in_run_is_refused_plainly(sdk: SimpleNamespace) -> None:
    async def note(event: Any) -> None:
        pass

    with pytest.raises(TypeError, match="on_event is async: use arun"):
        sdk.runtime.run(USER, sdk.runtime.ScriptedModel(["hi"]), weather_tools(sdk), on_event=note)
