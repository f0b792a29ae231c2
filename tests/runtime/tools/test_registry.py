"""Tools registry and dispatch in the generated SDK: typed handlers, every failure as a tool message."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.projects import REPO_ROOT


@pytest.fixture(scope="module")
def sdk() -> Iterator[ModuleType]:
    sys.path.insert(0, str(REPO_ROOT / "generated"))
    try:
        import toolgen_sdk

        yield toolgen_sdk
    finally:
        sys.path.remove(str(REPO_ROOT / "generated"))


def call(name: str, arguments: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def weather_tools(sdk: ModuleType) -> Any:
    tools = sdk.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        return sdk.GetCurrentWeatherResult(location=args.location, temperature=21.5, unit=args.unit)

    return tools


def test_dispatch_validates_calls_and_converts_the_result(sdk: ModuleType) -> None:
    tools = weather_tools(sdk)
    outcome = tools.dispatch(
        call("get_current_weather", '{"location": "Paris"}'), sdk.ToolContext(conversation_id="c1")
    )
    assert not outcome.is_error
    assert outcome.result.temperature == 21.5
    assert outcome.content == '{"location":"Paris","temperature":21.5,"unit":"celsius"}'
    message = sdk.validate_message(outcome.to_message())
    assert message.tool_call_id == "call_1" and message.content == outcome.content


def test_every_failure_is_a_tool_error_the_model_can_read(sdk: ModuleType) -> None:
    tools = weather_tools(sdk)
    bad_field = tools.dispatch(call("get_current_weather", '{"location": 5}'))
    assert bad_field.error.kind == "invalid_arguments"
    assert "/location" in bad_field.content and bad_field.content.startswith("Error: ")
    assert tools.dispatch(call("get_current_weather", '{"location": ')).error.kind == "invalid_json"
    unknown = tools.dispatch(call("get_weather", "{}"))
    assert unknown.error.kind == "unknown_tool" and "get_current_weather" in unknown.content
    assert tools.dispatch(call("todo_read", "{}")).error.kind == "unbound"
    assert sdk.validate_message(bad_field.to_message()).is_error is True


def test_handler_exceptions_timeouts_and_bad_results(sdk: ModuleType) -> None:
    tools = sdk.Tools()

    @tools.todo_write.handler
    def write(args: Any, ctx: Any) -> Any:
        raise PermissionError("the list is read-only today")

    @tools.run_command.handler
    def slow(args: Any, ctx: Any) -> Any:
        time.sleep(60)

    @tools.todo_read.handler
    def wrong(args: Any, ctx: Any) -> Any:
        return {"todos": "not a list"}

    failed = tools.dispatch(call("todo_write", '{"todos": []}'))
    assert failed.error.kind == "handler_error" and "read-only today" in failed.content
    spec = tools.run_command.spec
    object.__setattr__(spec, "timeout", 0.2)  # the example's 30 s would make the test slow
    tools.require_approval = False  # run_command requires approval, which this test does not ask for
    try:
        started = time.monotonic()
        timed_out = tools.dispatch(call("run_command", '{"program": "ls"}'))
        assert timed_out.error.kind == "timeout" and time.monotonic() - started < 5
    finally:
        object.__setattr__(spec, "timeout", 30)
    invalid = tools.dispatch(call("todo_read", "{}"))
    assert invalid.error.kind == "invalid_result" and "/todos" in invalid.content


def test_async_handlers_and_adispatch(sdk: ModuleType) -> None:
    tools = sdk.Tools()

    @tools.show_order_status.handler
    async def status(args: Any, ctx: Any) -> str:
        await asyncio.sleep(0)
        return f"Order {args.order_id} ({ctx.conversation_id}) ships tomorrow."

    context = sdk.ToolContext(conversation_id="conv-9")
    outcome = asyncio.run(tools.adispatch(call("show_order_status", '{"order_id": "AB-123456"}'), context))
    assert outcome.content == "Order AB-123456 (conv-9) ships tomorrow."
    assert tools.show_order_status.spec.return_direct is True
    assert tools.dispatch(call("show_order_status", '{"order_id": "AB-123456"}'), context).content == outcome.content


def test_result_converter_and_unbound_report(sdk: ModuleType) -> None:
    tools = weather_tools(sdk)

    @tools.get_current_weather.result_converter
    def spoken(result: Any) -> str:
        return f"{result.temperature} degrees in {result.location}"

    assert tools.dispatch(call("get_current_weather", '{"location": "Oslo"}')).content == "21.5 degrees in Oslo"
    assert tools.unbound() == ["run_command", "show_order_status", "todo_read", "todo_write"]
    with pytest.raises(RuntimeError, match="run_command, show_order_status"):
        tools.require_bound()


def test_tools_added_at_run_time_are_validated_the_same_way(sdk: ModuleType) -> None:
    tools = sdk.Tools()
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    tools.add("search", schema, lambda args, ctx: {"hits": [args["q"]]}, description="Search.")
    assert tools.dispatch(call("search", '{"q": "cats"}')).content == '{"hits": ["cats"]}'
    rejected = tools.dispatch(call("search", '{"q": 3}'))
    assert rejected.error.kind == "invalid_arguments" and "/q" in rejected.content
    tools.remove("search")
    assert tools.dispatch(call("search", "{}")).error.kind == "unknown_tool"


def test_a_handler_with_the_wrong_argument_type_fails_mypy(tmp_path: Path, mypy_cache: str) -> None:
    good = """\
        from toolgen_sdk import GetCurrentWeatherArgs, GetCurrentWeatherResult, ToolContext, Tools

        tools = Tools()

        @tools.get_current_weather.handler
        def weather(args: GetCurrentWeatherArgs, ctx: ToolContext) -> GetCurrentWeatherResult:
            return GetCurrentWeatherResult(location=args.location, temperature=1.0, unit="celsius")
        """
    bad = good.replace("args: GetCurrentWeatherArgs", "args: int")
    results = []
    for name, source in (("good.py", good), ("bad.py", bad)):
        (tmp_path / name).write_text(textwrap.dedent(source))
        results.append(
            subprocess.run(
                [sys.executable, "-m", "mypy", "--strict", "--config-file", os.devnull, "--cache-dir", mypy_cache]
                + [str(tmp_path / name)],
                capture_output=True,
                text=True,
                env={"MYPYPATH": str(REPO_ROOT / "generated"), "PATH": ""},
                check=False,
            )
        )
    assert results[0].returncode == 0, results[0].stdout
    assert results[1].returncode == 1
    assert "bad.py:5" in results[1].stdout, results[1].stdout


def test_an_integral_float_is_an_integer_as_json_schema_says(sdk: ModuleType) -> None:
    usage = sdk.validate_usage({"input_tokens": 5.0, "output_tokens": 2})
    assert usage.input_tokens == 5 and type(usage.input_tokens) is int
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_usage({"input_tokens": 5.5, "output_tokens": "2"})
    assert [p.pointer for p in caught.value.problems] == ["/input_tokens", "/output_tokens"]


def test_the_generated_tools_class_sizes_its_handler_pool(sdk: ModuleType) -> None:
    tools = sdk.Tools(max_workers=1, max_error_chars=50)
    assert tools.pool.size == 1 and tools.max_error_chars == 50
    assert sdk.Tools().pool.size == 32, "the registry's default"
    threads: set[int] = set()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        threads.add(threading.get_ident())
        return sdk.GetCurrentWeatherResult(location=args.location, temperature=21.5, unit=args.unit)

    async def both() -> list[Any]:
        calls = [call("get_current_weather", '{"location": "Oslo"}', f"call_{i}") for i in range(4)]
        return await asyncio.gather(*(tools.adispatch(c) for c in calls))

    outcomes = asyncio.run(both())
    assert [o.is_error for o in outcomes] == [False] * 4
    assert len(threads) == 1, "every sync handler ran on the pool's one thread"
    with pytest.raises(ValueError, match="at least one thread"):
        sdk.Tools(max_workers=0)
