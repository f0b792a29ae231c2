"""The agent loop offline, on scripted models: parallel calls, tool failures, return_direct and approval."""

from __future__ import annotations

import asyncio
import json
import threading
from types import SimpleNamespace
from typing import Any

import pytest


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
