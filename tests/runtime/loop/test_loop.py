"""The agent loop of the generated SDK, offline: scripted models, policies, limits, events, the sandbox, the CLI."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import json
import os
import subprocess
import sys
import threading
import time
import typing
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.projects import REPO_ROOT, SOURCE_PACKAGE, Project


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    """The package built from the repo's own project: its runtime's declared surface, and the demo and framing
    modules that surface leaves out."""
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        demo=SimpleNamespace(
            **{
                **vars(importlib.import_module(f"{name}._runtime.demo.sandbox")),
                **vars(importlib.import_module(f"{name}._runtime.demo.handlers")),
            }
        ),
        framing=importlib.import_module(f"{name}._runtime.streams.framing"),
    )


def weather_tools(sdk: SimpleNamespace) -> Any:
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=21.5, unit="celsius")

    return tools


def call(sdk: SimpleNamespace, name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    made: dict[str, Any] = sdk.runtime.tool_call(name, arguments, id=call_id)
    return made


def drive(
    sdk: SimpleNamespace, mode: str, messages: list[Any], model: Any, registry: Any, *options: Any, **settings: Any
) -> Any:
    """run() or arun(), the same arguments either way."""
    if mode == "sync":
        return sdk.runtime.run(messages, model, registry, *options, **settings)
    return asyncio.run(sdk.runtime.arun(messages, model, registry, *options, **settings))


USER = [{"role": "user", "content": "What's the weather in Paris?"}]
MODES = ["sync", "async"]


def no_unanswered_calls(sdk: SimpleNamespace, messages: list[dict[str, Any]]) -> bool:
    return not sdk.runtime.check_pairing(messages)


# ---- parallel calls, failures, timeouts ----


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
def test_parallel_calls_run_concurrently_and_failures_go_back_to_the_model(
    sdk: SimpleNamespace, mode: str, stream: bool
) -> None:
    tools = weather_tools(sdk)
    both_running = threading.Barrier(2, timeout=5)
    release = threading.Event()

    def meet(args: Any, ctx: Any) -> dict[str, Any]:
        both_running.wait()  # raises BrokenBarrierError unless the two calls run at the same time
        return {"met": args["who"]}

    def broken(args: Any, ctx: Any) -> Any:
        raise PermissionError("the printer is on fire")

    def stuck(args: Any, ctx: Any) -> Any:
        release.wait(5)
        return {}

    schema = {"type": "object", "properties": {"who": {"type": "string"}}}
    tools.add("meet", schema, meet, timeout=5)
    tools.add("broken", {"type": "object"}, broken)
    tools.add("stuck", {"type": "object"}, stuck, timeout=0.2)
    seen: list[Any] = []

    def answer(request: Any) -> str:
        seen.append(request.messages)
        return "Done, with two failures."

    first = sdk.runtime.assistant_turn(
        None,
        call(sdk, "meet", {"who": "a"}, "c1"),
        call(sdk, "broken", {}, "c2"),
        call(sdk, "stuck", {}, "c3"),
        call(sdk, "meet", {"who": "b"}, "c4"),
        call(sdk, "get_current_weather", {"location": "Paris"}, "c5"),
    )
    model = sdk.runtime.ScriptedModel([first, answer])
    # Let the stuck handler go once its timeout was reported: asyncio.run() waits for the threads it started.
    hooks = sdk.runtime.Hooks(after_tool=lambda report: release.set() if report.call_id == "c3" else None)
    try:
        result = drive(sdk, mode, USER, model, tools, stream=stream, hooks=hooks)
    finally:
        release.set()
    assert result.stop_reason == "finished" and result.text == "Done, with two failures."
    tool_messages = seen[0][2:]
    assert [m["tool_call_id"] for m in tool_messages] == ["c1", "c2", "c3", "c4", "c5"]  # call order, always
    assert seen[0][1]["role"] == "assistant" and len(seen[0][1]["tool_calls"]) == 5
    by_id = {report.call_id: report for report in result.calls}
    assert by_id["c1"].status == by_id["c4"].status == by_id["c5"].status == "ok"
    assert by_id["c2"].error_kind == "handler_error" and "printer is on fire" in tool_messages[1]["content"]
    assert by_id["c3"].error_kind == "timeout" and "0.2 seconds" in tool_messages[2]["content"]
    assert tool_messages[1]["is_error"] is True and "is_error" not in tool_messages[0]
    assert by_id["c3"].seconds < 2
    metrics = result.metrics
    assert metrics.model_calls == 2 and metrics.tool_calls == 5
    assert metrics.tools["meet"].success_rate == 1.0 and metrics.tools["broken"].success_rate == 0.0
    assert metrics.tools["stuck"].errors == 1 and metrics.tools["stuck"].max_seconds >= 0.2
    assert no_unanswered_calls(sdk, result.messages)
    sdk.package.validate_messages(result.messages)


@pytest.mark.parametrize("mode", MODES)
def test_unknown_and_unbound_tools_and_bad_arguments_are_tool_errors(sdk: SimpleNamespace, mode: str) -> None:
    tools = sdk.package.Tools()  # nothing bound
    turns = [
        sdk.runtime.assistant_turn(
            None,
            call(sdk, "todo_read", {}, "a"),
            call(sdk, "no_such_tool", {}, "b"),
            {"id": "c", "type": "function", "function": {"name": "get_current_weather", "arguments": '{"loc'}},
        ),
        "I could not use the tools.",
    ]
    result = drive(sdk, mode, USER, sdk.runtime.ScriptedModel(turns), tools)
    kinds = [report.error_kind for report in result.calls]
    assert kinds == ["unbound", "unknown_tool", "unbound"]  # in call order; an unbound tool is not even parsed
    weather = weather_tools(sdk)
    bad_json = sdk.runtime.ScriptedModel([turns[0], "ok"])
    assert drive(sdk, mode, USER, bad_json, weather).calls[2].error_kind == "invalid_json"
    assert result.stop_reason == "finished"


# ---- returnDirect ----


@pytest.mark.parametrize("mode", MODES)
def test_return_direct_ends_the_run_with_the_tool_result_and_no_second_model_call(
    sdk: SimpleNamespace, mode: str
) -> None:
    tools = sdk.package.Tools()
    tools.show_order_status.handler(lambda args, ctx: f"Order {args.order_id} has shipped.")
    model = sdk.runtime.ScriptedModel(
        [sdk.runtime.assistant_turn(None, call(sdk, "show_order_status", {"order_id": "AB-123456"}, "o1"))]
    )
    result = drive(sdk, mode, [{"role": "user", "content": "Where is AB-123456?"}], model, tools)
    assert result.stop_reason == "return_direct"
    assert len(model.requests) == 1 and model.remaining == 0
    assert result.text == "Order AB-123456 has shipped."
    assert result.final == result.messages[-1] and result.messages[-2]["role"] == "tool"
    assert no_unanswered_calls(sdk, result.messages)


def test_a_failed_return_direct_call_goes_back_to_the_model(sdk: SimpleNamespace) -> None:
    tools = sdk.package.Tools()
    tools.show_order_status.handler(lambda args, ctx: "never")
    bad = sdk.runtime.assistant_turn(None, call(sdk, "show_order_status", {"order_id": "bad id"}, "o1"))
    model = sdk.runtime.ScriptedModel([bad, "That order id looks wrong."])
    result = sdk.runtime.run(USER, model, tools)
    assert result.stop_reason == "finished" and len(model.requests) == 2
    assert result.calls[0].error_kind == "invalid_arguments"


# ---- approval ----


def command_tools(sdk: SimpleNamespace, ran: list[Any]) -> Any:
    tools = sdk.package.Tools()

    @tools.run_command.handler
    def run_command(args: Any, ctx: Any) -> Any:
        ran.append(args)
        return {"exit_code": 0, "stdout": "ok", "stderr": "", "truncated": False}

    return tools


LS = {"program": "ls", "args": ["-l"]}


@pytest.mark.parametrize("mode", MODES)
def test_a_denied_approval_never_runs_the_handler_and_the_model_reads_why(sdk: SimpleNamespace, mode: str) -> None:
    ran: list[Any] = []
    asked: list[Any] = []

    def deny(request: Any) -> Any:
        asked.append(request)
        return sdk.runtime.Approval.deny("not on a Friday")

    events: list[Any] = []
    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, call(sdk, "run_command", LS, "r1")), "OK."])
    result = drive(sdk, mode, USER, model, command_tools(sdk, ran), approve=deny, on_event=events.append)
    assert ran == [] and asked[0].name == "run_command" and json.loads(asked[0].arguments) == LS
    tool_message = model.requests[1].messages[-1]
    assert tool_message["is_error"] is True and "not on a Friday" in tool_message["content"]
    assert result.calls[0].status == "denied" and result.metrics.tools["run_command"].denied == 1
    types = [event.type for event in events]
    assert types.index("approval_requested") < types.index("approval_decided") < types.index("tool_call_finished")
    assert "tool_call_started" not in types


@pytest.mark.parametrize("mode", MODES)
def test_edited_arguments_are_the_ones_that_run_and_the_transcript_shows_them(sdk: SimpleNamespace, mode: str) -> None:
    ran: list[Any] = []

    async def edit_async(request: Any) -> Any:
        return sdk.runtime.Approval.edit({"program": "cat", "args": ["notes.txt"]})

    def edit(request: Any) -> Any:
        return sdk.runtime.Approval.edit({"program": "cat", "args": ["notes.txt"]})

    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, call(sdk, "run_command", LS, "r1")), "OK."])
    approve = edit if mode == "sync" else edit_async
    result = drive(sdk, mode, USER, model, command_tools(sdk, ran), approve=approve)
    assert [(a.program, a.args) for a in ran] == [("cat", ("notes.txt",))]  # arguments are frozen: a tuple
    sent = model.requests[1].messages[-2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == {"program": "cat", "args": ["notes.txt"]}
    assert result.calls[0].status == "ok"


def test_approval_fails_closed(sdk: SimpleNamespace) -> None:
    ran: list[Any] = []
    turn = sdk.runtime.assistant_turn(None, call(sdk, "run_command", LS, "r1"))
    no_approver = sdk.runtime.run(USER, sdk.runtime.ScriptedModel([turn, "OK."]), command_tools(sdk, ran))
    assert no_approver.calls[0].status == "denied" and "no approver" in no_approver.calls[0].content

    def explode(request: Any) -> Any:
        raise RuntimeError("approval service down")

    events: list[Any] = []
    crashed = sdk.runtime.run(
        USER, sdk.runtime.ScriptedModel([turn, "OK."]), command_tools(sdk, ran), approve=explode, on_event=events.append
    )
    assert crashed.calls[0].status == "denied" and crashed.stop_reason == "finished"
    assert any(e.type == "error" and "approval service down" in e.data["message"] for e in events)
    approved = sdk.runtime.run(
        USER, sdk.runtime.ScriptedModel([turn, "OK."]), command_tools(sdk, ran), approve=lambda request: True
    )
    assert approved.calls[0].status == "ok" and len(ran) == 1


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


# ---- events and SSE ----


def parse_sse(sdk: SimpleNamespace, text: str) -> list[tuple[str | None, bytes]]:
    decoder = sdk.framing.SSEDecoder()
    frames = decoder.feed(text.encode("utf-8")) + decoder.close()
    return [(frame[0], frame[1]) for frame in frames]


def test_the_event_stream_of_a_run_as_sse_parses_back(sdk: SimpleNamespace) -> None:
    tricky = 'Line one\nline two\r\n"quoted" \u2028 data: not a field\n\nend'
    turn = sdk.runtime.assistant_turn(None, call(sdk, "get_current_weather", {"location": "Oslo"}, "w"))
    events = sdk.runtime.run_events(
        USER, sdk.runtime.ScriptedModel([turn, tricky]), weather_tools(sdk), stream=True, conversation_id="c-sse"
    )
    collected = list(events)
    text = "".join(sdk.runtime.sse_lines(collected))
    frames = parse_sse(sdk, text)
    assert [name for name, _ in frames] == [event.type for event in collected]
    payloads = [json.loads(data) for _, data in frames]
    assert payloads == [event.to_json() for event in collected]
    assert {p["conversation_id"] for p in payloads} == {"c-sse"}
    assert [p["seq"] for p in payloads] == list(range(1, len(payloads) + 1))
    deltas = "".join(p["data"]["text"] for p in payloads if p["type"] == "text_delta")
    assert deltas == tricky and events.result.text == tricky
    types = [p["type"] for p in payloads]
    assert types[0] == "run_started" and types[-2:] == ["final_message", "run_finished"]
    finished = next(p["data"] for p in payloads if p["type"] == "tool_call_finished")
    assert finished["status"] == "ok" and finished["duration_ms"] >= 0 and finished["name"] == "get_current_weather"
    metrics = payloads[-1]["data"]["metrics"]
    assert metrics["tools"]["get_current_weather"]["success_rate"] == 1.0
    for line in text.split("\n"):
        assert line == "" or line.startswith(("event: ", "id: ", "data: ")), line


def test_sse_encoding_never_lets_a_line_break_through(sdk: SimpleNamespace) -> None:
    event = sdk.runtime.ErrorEvent(conversation_id="c\n1", seq=3, message="a\rb\nc", code=b"bytes")
    text = sdk.runtime.sse_encode(event)
    assert text.count("\n\n") == 1 and text.endswith("\n\n") and "\r" not in text
    (name, data), *_ = parse_sse(sdk, text + sdk.runtime.sse_comment("keep-alive\nping"))
    assert name == "error" and json.loads(data)["data"]["message"] == "a\rb\nc"


def test_sse_encoding_of_a_lone_surrogate_is_text_utf8_can_carry(sdk: SimpleNamespace) -> None:
    # A model may write "\ud800" in its text or a call id: the event stream to a browser must still encode.
    event = sdk.runtime.ToolCallDeltaEvent(
        conversation_id="c1", seq=1, index=0, arguments="half \ud800 a pair", id="call_\udfff"
    )
    text = sdk.runtime.sse_encode(event)
    text.encode("utf-8")
    (name, data), *_ = parse_sse(sdk, text)
    assert json.loads(data)["data"] == {
        "index": 0,
        "arguments": "half \ud800 a pair",
        "id": "call_\udfff",
        "name": None,
    }


# ---- clients offline ----


def test_replay_model_reads_recorded_bodies_whole_and_streamed(sdk: SimpleNamespace) -> None:
    stream = (REPO_ROOT / "tests" / "fixtures" / "loop" / "openai-chat-weather-parallel.sse").read_bytes()
    answer = (REPO_ROOT / "tests" / "fixtures" / "loop" / "openai-chat-answer.sse").read_text(encoding="utf-8")
    for streaming in (False, True):
        model = sdk.runtime.ReplayModel([stream, answer], wire="openai-chat")
        result = sdk.runtime.run(USER, model, weather_tools(sdk), stream=streaming)
        assert result.stop_reason == "finished" and result.text == "It is sunny in Paris\n(18 °C) and Oslo\u2028too."
        assert [r.call_id for r in result.calls] == ["call_paris", "call_oslo"]
        assert result.metrics.usage["input_tokens"] == 200
    whole = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
    assert sdk.runtime.run(USER, sdk.runtime.ReplayModel([whole]), weather_tools(sdk), stream=True).text == "hi"
    exhausted = sdk.runtime.run(USER, sdk.runtime.ReplayModel([]), weather_tools(sdk))
    assert exhausted.stop_reason == "error" and exhausted.error.type == "script_exhausted"


def counting_weather_tools(sdk: SimpleNamespace, ran: list[Any]) -> Any:
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        ran.append(args)
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=21.5, unit="celsius")

    return tools


def anthropic_call_without_its_block_stop() -> str:
    """A whole Anthropic answer (stop_reason tool_use, message_stop) save the tool block's content_block_stop."""
    events = [
        {"type": "message_start", "message": {"id": "msg_cut", "model": "claude", "usage": {"input_tokens": 9}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_cut", "name": "get_current_weather", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"loca'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("recording", ["openai cut inside the second call", "anthropic block never stopped"])
def test_a_cut_tool_call_ends_the_run_with_an_error_and_no_handler_runs(
    sdk: SimpleNamespace, mode: str, streaming: bool, recording: str
) -> None:
    if recording.startswith("openai"):
        whole = (REPO_ROOT / "tests" / "fixtures" / "loop" / "openai-chat-weather-parallel.sse").read_text(
            encoding="utf-8"
        )
        body, wire = whole[: whole.index('"Oslo\\"')], "openai-chat"
    else:
        body, wire = anthropic_call_without_its_block_stop(), "anthropic"
    ran: list[Any] = []
    model = sdk.runtime.ReplayModel([body, body, "never asked for"], wire=wire)
    result = drive(sdk, mode, USER, model, counting_weather_tools(sdk, ran), stream=streaming)
    # Not even the call that did close runs: the answer it came in is broken. It is asked for once more (the
    # default StreamRetry), comes back cut again, and the run stops there.
    assert ran == [] and len(model.requests) == 2 and result.metrics.model_retries == 1
    assert result.stop_reason == "error" and result.metrics.tool_calls == 0
    assert "cut" in str(result.error.message)
    assert no_unanswered_calls(sdk, result.messages)
    assert all(not m.get("tool_calls") for m in result.messages)
    once = sdk.runtime.ReplayModel([body, "never asked for"], wire=wire)
    drive(sdk, mode, USER, once, counting_weather_tools(sdk, ran), stream=streaming, stream_retry=None)
    assert ran == [] and len(once.requests) == 1


def test_the_package_imports_without_httpx_and_says_what_the_http_client_needs(source_build: Path) -> None:
    modules = ["loop.sync_driver", "loop.async_driver", "clients.scripted", "clients.http", "app.main"]
    probe = (
        "import importlib, sys\n"
        "sys.modules['httpx'] = None\n"
        f"for name in {modules!r}:\n"
        f"    importlib.import_module('{SOURCE_PACKAGE}._runtime.' + name)\n"
        f"import {SOURCE_PACKAGE}.__main__, {SOURCE_PACKAGE}.agent\n"
        "try:\n"
        f"    {SOURCE_PACKAGE}.agent.HTTPModel('http://127.0.0.1:9', 'm')\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=source_build, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "pip install httpx" in result.stdout


# ---- the demo sandbox ----


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("hello\nworld\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("do not read", encoding="utf-8")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    return root


def test_the_sandbox_runs_allowlisted_programs_inside_the_workspace(sdk: SimpleNamespace, workspace: Path) -> None:
    sandbox = sdk.demo.Sandbox(workspace)
    assert sandbox.run("cat", ["notes.txt"])["stdout"] == "hello\nworld\n"
    assert sandbox.run("head", ["-n", "1", "notes.txt"])["stdout"] == "hello\n"
    assert sandbox.run("grep", ["-n", "wor", "notes.txt"])["stdout"] == "2:world\n"
    assert sandbox.run("wc", ["-l", "sub/../notes.txt"])["stdout"].split()[0] == "2"
    assert sandbox.run("ls", ["-la"], cwd="sub")["exit_code"] == 0
    assert sandbox.run("echo", ["$(whoami)", ";", "rm", "-rf", "/"])["stdout"] == "$(whoami) ; rm -rf /\n"
    missing = sandbox.run("cat", ["nope.txt"])
    assert missing["exit_code"] != 0 and "nope.txt" in missing["stderr"]


@pytest.mark.parametrize(
    ("program", "args", "cwd", "reason"),
    [
        ("python", ["-c", "print(1)"], ".", "not an allowed program"),
        ("git", ["status"], ".", "not an allowed program"),
        ("sh", ["-c", "ls"], ".", "not an allowed program"),
        ("cat", ["../secret.txt"], ".", "outside the workspace"),
        ("cat", ["sub/../../secret.txt"], ".", "outside the workspace"),
        ("cat", ["/etc/passwd"], ".", "outside the workspace"),
        ("cat", ["escape"], ".", "outside the workspace"),
        ("ls", [], "..", "outside the workspace"),
        ("ls", [], "/", "outside the workspace"),
        ("grep", ["--file=/etc/passwd", "x"], ".", "long options"),
        ("grep", ["-f", "/etc/passwd", "notes.txt"], ".", "option -f"),
        ("grep", ["root", "/etc/passwd"], ".", "outside the workspace"),
        ("grep", ["-e", "x", "/etc/passwd"], ".", "outside the workspace"),
        ("tail", ["-f", "notes.txt"], ".", "option -f"),
        ("date", ["010100002030"], ".", "takes no argument"),
        ("cat", ["--", "/etc/passwd"], ".", "outside the workspace"),
        ("cat", ["a\x00b"], ".", "NUL"),
    ],
)
def test_the_sandbox_refuses(
    sdk: SimpleNamespace, workspace: Path, program: str, args: list[str], cwd: str, reason: str
) -> None:
    with pytest.raises(sdk.demo.SandboxRefusal, match=reason):
        sdk.demo.Sandbox(workspace).run(program, args, cwd)


def test_the_sandbox_caps_output_and_stops_slow_programs(sdk: SimpleNamespace, workspace: Path) -> None:
    (workspace / "big.txt").write_text("x" * 5000, encoding="utf-8")
    capped = sdk.demo.Sandbox(workspace, output_cap=100).run("cat", ["big.txt"])
    assert capped["truncated"] is True and capped["stdout"] == "x" * 100
    os.mkfifo(workspace / "pipe")  # opening a FIFO with no writer blocks forever
    with pytest.raises(sdk.demo.CommandTimeout, match="did not finish within 0.3 seconds"):
        sdk.demo.Sandbox(workspace, timeout=0.3).run("cat", ["pipe"])


def test_run_command_through_the_loop_reports_refusals_to_the_model(sdk: SimpleNamespace, workspace: Path) -> None:
    tools = sdk.package.Tools()
    bound = sdk.demo.bind_demo_handlers(tools, workspace)
    assert sorted(bound) == list(sdk.demo.DEMO_TOOLS) and not tools.unbound()
    calls = [
        call(sdk, "run_command", {"program": "tail", "args": ["-f", "notes.txt"]}, "bad"),
        call(sdk, "run_command", {"program": "cat", "args": ["../secret.txt"]}, "escape"),
        call(sdk, "run_command", {"program": "cat", "args": ["notes.txt"]}, "good"),
    ]
    model = sdk.runtime.ScriptedModel([sdk.runtime.assistant_turn(None, *calls), "done"])
    result = sdk.runtime.run(USER, model, tools, approve=lambda request: True)
    by_id = {r.call_id: r for r in result.calls}
    assert "option -f is not allowed" in by_id["bad"].content and by_id["bad"].status == "error"
    assert "outside the workspace" in by_id["escape"].content
    assert json.loads(by_id["good"].content)["stdout"] == "hello\nworld\n"


def test_demo_todo_lists_belong_to_their_conversation(sdk: SimpleNamespace, workspace: Path) -> None:
    tools = sdk.package.Tools()
    sdk.demo.bind_demo_handlers(tools, workspace)
    todo = {"id": "1", "content": "buy milk", "status": "pending"}
    write = sdk.runtime.assistant_turn(None, call(sdk, "todo_write", {"todos": [todo]}, "t1"))
    read = sdk.runtime.assistant_turn(None, call(sdk, "todo_read", {}, "t2"))
    sdk.runtime.run(USER, sdk.runtime.ScriptedModel([write, "ok"]), tools, conversation_id="alice")
    alice = sdk.runtime.run(USER, sdk.runtime.ScriptedModel([read, "ok"]), tools, conversation_id="alice")
    bob = sdk.runtime.run(USER, sdk.runtime.ScriptedModel([read, "ok"]), tools, conversation_id="bob")
    assert json.loads(alice.calls[0].content) == {"todos": [todo]}
    assert json.loads(bob.calls[0].content) == {"todos": []}


# ---- python -m <package> ----


def cli(cwd: Path, *args: str, package: str = SOURCE_PACKAGE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", package, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


def test_python_m_package_runs_the_loop_offline_and_prints_the_answer(source_build: Path) -> None:
    result = cli(source_build, "What's the weather in Paris?")
    assert result.returncode == 0, result.stderr
    assert "get_current_weather returned: location: Paris, temperature: 18.0" in result.stdout
    order = cli(source_build, "Where is order AB-123456?")
    assert order.returncode == 0 and order.stdout == "Order AB-123456: shipped, arriving in 2 days.\n"


def test_python_m_package_prints_the_sse_event_stream(sdk: SimpleNamespace, source_build: Path) -> None:
    result = cli(source_build, "--events", "--stream", "weather in Oslo and Lima")
    assert result.returncode == 0, result.stderr
    frames = parse_sse(sdk, result.stdout)
    types = [name for name, _ in frames]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert types.count("tool_call_finished") == 2 and "text_delta" in types
    assert len({json.loads(data)["conversation_id"] for _, data in frames}) == 1


def test_python_m_package_denies_approval_without_a_person_and_approves_with_yes(source_build: Path) -> None:
    denied = cli(source_build, "list the files in the workspace")
    assert denied.returncode == 0 and "run_command failed" in denied.stdout and "--yes" in denied.stdout
    approved = cli(source_build, "--yes", "list the files in the workspace")
    assert approved.returncode == 0 and "notes.txt" in approved.stdout


def test_python_m_package_for_a_project_without_demo_tools_reports_unbound_tools(make_project: Any) -> None:
    project: Project = make_project("crm_sdk")
    project.write(
        "schemas/crm.yaml",
        """\
        tools:
          - name: lookup_customer
            description: Find a customer.
            inputSchema:
              type: object
              properties:
                email: {type: string}
                tier: {type: string, enum: [gold, silver]}
              required: [email, tier]
        """,
    )
    assert project.cli("build").returncode == 0
    result = cli(project.root / "generated", "Who is ada@example.com?", package="crm_sdk")
    assert result.returncode == 0, result.stderr
    assert "lookup_customer failed: Error: the tool 'lookup_customer' is not available right now" in result.stdout
    usage = cli(project.root / "generated", "--base-url", "http://127.0.0.1:9/v1", "hi", package="crm_sdk")
    assert usage.returncode == 2 and "--model is required" in usage.stderr
