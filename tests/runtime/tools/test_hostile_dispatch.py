"""Hostile input at dispatch and validation: every call gets one well-formed tool message, nothing raises."""

from __future__ import annotations

import asyncio
import decimal
import json
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.projects import REPO_ROOT, Project


@pytest.fixture(scope="module")
def sdk() -> Iterator[ModuleType]:
    sys.path.insert(0, str(REPO_ROOT / "generated"))
    try:
        import toolgen_sdk

        yield toolgen_sdk
    finally:
        sys.path.remove(str(REPO_ROOT / "generated"))


def call(name: str, arguments: Any, call_id: Any = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tools_with(sdk: ModuleType, result: Any = None, *, raises: BaseException | None = None) -> Any:
    """The weather tool bound, and a run-time tool `echo` whose handler returns `result` (or raises)."""
    tools = sdk.Tools()
    ran: list[Any] = []

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        ran.append(args)
        return sdk.GetCurrentWeatherResult(location=args.location, temperature=21.5, unit=args.unit)

    def echo(args: Any, ctx: Any) -> Any:
        ran.append(args)
        if raises is not None:
            raise raises
        return result

    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0}, "tags": {"type": "array", "uniqueItems": True}},
    }
    tools.add("echo", schema, echo)
    tools.ran = ran
    return tools


def well_formed(outcome: Any, limit: int = 4000) -> dict[str, Any]:
    """The outcome's tool message, checked to be one a provider request can carry."""
    message = outcome.to_message()
    assert message["role"] == "tool"
    assert isinstance(message["tool_call_id"], str) and message["tool_call_id"] not in ("", "None")
    assert isinstance(message["content"], (str, list))
    json.dumps(message, allow_nan=False).encode("utf-8")
    if outcome.is_error:
        assert isinstance(message["content"], str) and len(message["content"]) <= limit
    return message


def both(tools: Any, hostile: Any) -> list[Any]:
    """The outcome of `hostile` from dispatch and from adispatch."""
    return [tools.dispatch(hostile), asyncio.run(tools.adispatch(hostile))]


# -- the parse: depth, size, strict JSON ------------------------------------------------------------------


def test_twenty_kilobytes_of_brackets_is_an_invalid_json_answer(sdk: ModuleType) -> None:
    tools = tools_with(sdk)
    for outcome in both(tools, call("get_current_weather", "[" * 20_000)):
        well_formed(outcome)
        assert outcome.error.kind == "invalid_json"
        assert outcome.error.problems[0].pointer == "/0" * 128
        assert "deeper than 128 levels" in outcome.error.message
    assert tools.ran == []


def test_arguments_as_data_nested_too_deep_are_refused_without_recursion(sdk: ModuleType) -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    tools = tools_with(sdk)
    for outcome in both(tools, call("echo", {"n": deep})):
        well_formed(outcome)
        assert outcome.error.kind == "invalid_arguments" and "deeper than 128 levels" in outcome.error.message


def test_nesting_at_the_limit_is_read_and_checked(sdk: ModuleType) -> None:
    # A recursive schema: jsonschema descends a few frames per level of the value, the deepest of the checks.
    schema = {
        "$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/t"}},
    }
    tools = sdk.Tools()
    tools.add("nested", schema, lambda args, ctx: "ran")
    deepest = "[" * 127 + "]" * 127
    assert tools.dispatch(call("nested", f'{{"x": {deepest}}}')).content == "ran"
    assert tools.dispatch(call("nested", f'{{"x": [{deepest}]}}')).error.kind == "invalid_json"
    value = "[" * 120 + "]" * 120
    outcome = tools_with(sdk).dispatch(call("get_current_weather", f'{{"location": {value}}}'))
    well_formed(outcome)
    assert outcome.error.kind == "invalid_arguments"
    assert outcome.error.problems[0].pointer == "/location"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_message({"role": "user", "content": json.loads(value)})
    assert caught.value.problems


def test_an_integer_of_five_thousand_digits_is_a_problem_at_its_place(sdk: ModuleType) -> None:
    tools = tools_with(sdk)
    for outcome in both(tools, call("echo", '{"n": ' + "7" * 5000 + "}")):
        well_formed(outcome)
        assert outcome.error.kind == "invalid_json"
        assert outcome.error.problems[0].pointer == "/n"
        assert "integer of 5000 digits" in outcome.error.message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_numbers_json_cannot_hold_are_refused(sdk: ModuleType, literal: str) -> None:
    tools = tools_with(sdk)
    outcome = tools.dispatch(call("echo", f'{{"n": {literal}}}'))
    well_formed(outcome)
    assert outcome.error.kind == "invalid_json" and outcome.error.problems[0].pointer == "/n"
    assert tools.ran == []


def test_a_repeated_key_cannot_slip_past_minimum(sdk: ModuleType) -> None:
    tools = tools_with(sdk)
    outcome = tools.dispatch(call("echo", '{"n": -5, "n": 5}'))
    well_formed(outcome)
    assert outcome.error.kind == "invalid_json"
    assert outcome.error.problems[0].pointer == "/n"
    assert "more than once" in outcome.error.message
    assert tools.ran == []
    with pytest.raises(sdk.ToolgenValidationError):
        sdk.TOOLS["get_current_weather"].check_arguments('{"location": "a", "location": "b"}')


def test_the_parse_names_the_place_of_each_refusal(sdk: ModuleType) -> None:
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("get_current_weather", '{"a": {"b": [1, NaN]}, "c/d": {"x": 1, "x": 2}}')
    assert [(p.pointer, p.message.split(",")[0]) for p in caught.value.problems] == [
        ("/a/b/1", "is NaN"),
        ("/c~1d/x", "appears more than once in one object (JSON readers disagree on which value counts)"),
    ]


# -- the shape of the call ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    [
        None,
        [],
        ["get_current_weather", "{}"],
        "a call",
        {"id": "c", "function": "get_current_weather"},
        {"id": "c", "function": ["get_current_weather"]},
        {"id": "c", "function": {"name": 5, "arguments": "{}"}},
        {"id": "c", "function": {"name": None}},
        {"id": "c"},
    ],
)
def test_a_call_of_the_wrong_shape_is_one_error_message(sdk: ModuleType, hostile: Any) -> None:
    tools = tools_with(sdk)
    for outcome in both(tools, hostile):
        well_formed(outcome)
        assert outcome.is_error
    assert tools.ran == []


def test_a_missing_or_null_id_gets_a_stable_generated_one(sdk: ModuleType) -> None:
    tools = tools_with(sdk)
    missing = {"type": "function", "function": {"name": "get_current_weather", "arguments": '{"location": "P"}'}}
    first, second = tools.dispatch(missing), tools.dispatch(dict(missing))
    assert first.tool_call_id == second.tool_call_id and first.tool_call_id.startswith("call_toolgen_")
    assert not first.is_error
    null = tools.dispatch(call("get_current_weather", '{"location": "P"}', None))
    assert null.tool_call_id == first.tool_call_id
    other = tools.dispatch({**missing, "function": {"name": "get_current_weather", "arguments": '{"location": "Q"}'}})
    assert other.tool_call_id != first.tool_call_id
    assert tools.dispatch(call("get_current_weather", '{"location": "P"}', 7)).tool_call_id == "7"


# -- handlers, converters, results --------------------------------------------------------------------------


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), RecursionError("deep")])
def test_a_handler_raising_anything_is_a_tool_error(sdk: ModuleType, raised: BaseException) -> None:
    tools = tools_with(sdk, raises=raised)
    for outcome in both(tools, call("echo", "{}")):
        well_formed(outcome)
        assert outcome.error.kind == "handler_error"
        assert type(raised).__name__ in outcome.error.message


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt()])
@pytest.mark.parametrize("timeout", [None, 5.0])
def test_an_async_or_timed_handler_exiting_never_escapes_the_event_loop(
    sdk: ModuleType, raised: BaseException, timeout: float | None
) -> None:
    tools = sdk.Tools()

    async def exits(args: Any, ctx: Any) -> Any:
        raise raised

    def exits_in_a_thread(args: Any, ctx: Any) -> Any:
        raise raised

    tools.add("async_exit", {"type": "object"}, exits, timeout=timeout)
    tools.add("thread_exit", {"type": "object"}, exits_in_a_thread, timeout=timeout)
    for name in ("async_exit", "thread_exit"):
        for outcome in both(tools, call(name, "{}")):
            well_formed(outcome)
            assert outcome.error.kind == "handler_error" and type(raised).__name__ in outcome.error.message


class _AsyncCallable:
    """A handler object whose __call__ is async: iscoroutinefunction() says no of the object itself."""

    async def __call__(self, args: Any, ctx: Any) -> Any:
        await asyncio.sleep(0)
        return "awaited"


async def _answer() -> str:
    await asyncio.sleep(0)
    return "awaited"


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_a_handler_that_gives_a_coroutine_has_it_awaited_never_sent_as_text(
    sdk: ModuleType, timeout: float | None
) -> None:
    tools = sdk.Tools()
    tools.add("obj", {"type": "object"}, _AsyncCallable(), timeout=timeout)
    tools.add("wrapper", {"type": "object"}, lambda args, ctx: _answer(), timeout=timeout)
    for name in ("obj", "wrapper"):
        for outcome in both(tools, call(name, "{}")):
            well_formed(outcome)
            assert outcome.content == "awaited", outcome


def test_a_raising_result_converter_is_an_invalid_result(sdk: ModuleType) -> None:
    tools = tools_with(sdk, {"ok": True})

    @tools.entry("echo").result_converter
    def broken(result: Any) -> str:
        raise RuntimeError("converter broke")

    for outcome in both(tools, call("echo", "{}")):
        well_formed(outcome)
        assert outcome.error.kind == "invalid_result" and "converter broke" in outcome.error.message


def test_a_converter_returning_something_else_is_an_invalid_result(sdk: ModuleType) -> None:
    tools = tools_with(sdk, {"ok": True})
    tools.entry("echo").result_converter(lambda result: 42)
    outcome = tools.dispatch(call("echo", "{}"))
    well_formed(outcome)
    assert outcome.error.kind == "invalid_result" and "not text or a list of parts" in outcome.error.message


def circular() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize("result", [float("nan"), {"x": float("inf")}, circular()])
def test_a_result_json_cannot_carry_is_an_invalid_result_never_invalid_json(sdk: ModuleType, result: Any) -> None:
    tools = tools_with(sdk, result)
    for outcome in both(tools, call("echo", "{}")):
        message = well_formed(outcome)
        assert outcome.error.kind == "invalid_result"
        assert "NaN" not in message["content"] or "could not be sent" in message["content"]


def test_a_result_with_a_lone_surrogate_is_sent_as_utf8_can_carry_it(sdk: ModuleType) -> None:
    tools = tools_with(sdk, "half \ud800 a pair")
    outcome = tools.dispatch(call("echo", "{}"))
    well_formed(outcome)
    assert outcome.content == "half \ufffd a pair"


# -- bounded messages ----------------------------------------------------------------------------------------


def test_a_two_megabyte_bad_argument_is_a_short_message(sdk: ModuleType) -> None:
    tools = tools_with(sdk)
    huge = json.dumps({"location": ["x" * 1000] * 2000})
    outcome = tools.dispatch(call("get_current_weather", huge))
    well_formed(outcome)
    assert outcome.error.kind == "invalid_arguments"


def test_many_problems_are_cut_to_the_registry_limit_and_counted(sdk: ModuleType) -> None:
    tools = tools_with(sdk)
    many = json.dumps({f"field_{i}": i for i in range(2000)} | {"location": "P"})
    outcome = tools.dispatch(call("get_current_weather", many))
    content = well_formed(outcome)["content"]
    assert "more problems left out" in content
    assert len(outcome.error.problems) == 2000
    tools.max_error_chars = 600
    short = tools.dispatch(call("get_current_weather", many))
    well_formed(short, limit=600)
    handler_text = tools_with(sdk, raises=ValueError("y" * 100_000))
    assert len(handler_text.dispatch(call("echo", "{}")).content) <= 4000


def test_unique_items_errors_do_not_quote_the_array(sdk: ModuleType) -> None:
    tools = tools_with(sdk)
    tags = ["same"] * 50_000
    outcome = tools.dispatch(call("echo", json.dumps({"tags": tags})))
    well_formed(outcome)
    assert outcome.error.problems[0].pointer == "/tags"
    assert len(outcome.error.problems[0].message) < 100


def test_quoted_values_in_problems_are_cut(sdk: ModuleType) -> None:
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_message({"role": "user", "content": [{"type": "text", "text": 5, "extra": "z" * 10**6}]})
    assert all(len(p.message) < 700 for p in caught.value.problems)


MANY = 100_000  # bad items: each jsonschema error kept costs kilobytes, so all of them cost hundreds of megabytes


def _peak_bytes(work: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_run_time_tool_given_many_bad_items_lists_a_bounded_number_of_problems(sdk: ModuleType) -> None:
    tools = sdk.Tools()
    tools.add("many", {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}, echo)
    bad = json.dumps({"xs": ["x"] * MANY})
    outcome, peak = _peak_bytes(lambda: tools.dispatch(call("many", bad)))
    content = well_formed(outcome)["content"]
    assert outcome.error.kind == "invalid_arguments" and "left out" in content
    assert 1 < len(outcome.error.problems) <= 1001
    assert "more problems" in str(outcome.error.problems[-1])
    assert peak < 64 * 2**20


def test_a_built_tool_whose_model_refuses_asks_the_schema_check_only_whether_it_accepts(sdk: ModuleType) -> None:
    # The model refuses every item; the JSON Schema check runs after it (an enum the model cannot hold), and
    # its answer is only needed as yes or no: the model's problems are the ones reported.
    schema = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}
    Args = pydantic.create_model("Args", xs=(list[int], None))  # noqa: N806 - a model class
    spec = sdk._runtime.ToolSpec(
        name="many", title=None, description=None, args_model=Args, result_model=None,
        input_schema=schema, output_schema=None, check_input=True,
    )  # fmt: skip
    value = {"xs": ["x"] * MANY}

    def refused() -> Any:
        with pytest.raises(sdk.ToolgenValidationError) as caught:
            spec.check_arguments(value)
        return caught.value

    error, peak = _peak_bytes(refused)
    assert error.problems[0].pointer == "/xs/0"
    assert peak < 64 * 2**20


def test_a_message_with_many_bad_parts_lists_a_bounded_number_of_problems(sdk: ModuleType) -> None:
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_message({"role": "user", "content": [{"type": "text"}] * MANY})
    problems = caught.value.problems
    assert problems[0].pointer == "/content/0/text" and 1000 < len(problems) <= 10_001
    assert "left out" in str(problems[-1])
    # An integral float among many problems is still an integer, as in a small message.
    outcome = tools_with(sdk).dispatch(call("echo", json.dumps({"n": 5.0, "tags": [1] * 5})))
    assert not outcome.is_error or outcome.error.problems[0].pointer == "/tags"


def echo(args: Any, ctx: Any) -> Any:
    return "ran"


# -- toolgen validate ----------------------------------------------------------------------------------------


def test_validate_reports_every_record_of_a_hostile_file(project: Project) -> None:
    weather = {"name": "get_current_weather", "arguments": '{"location": ' + "[" * 1000 + "}"}
    lines = [
        "[" * 20_000,
        '{"role": "user", "content": ' + "9" * 6000 + "}",
        '{"role": "user", "content": NaN}',
        '{"role": "user", "role": "wizard", "content": "x"}',
        '{"role": "wizard", "content": "x"}',
        json.dumps({"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": weather}]}),
        json.dumps({"role": "user", "content": [{"type": "text"}] * 500}),
    ]
    project.write("logs/hostile.jsonl", "\n".join(lines) + "\n")
    result = project.cli("validate", "logs/hostile.jsonl", "--as", "message")
    assert result.returncode == 1, result.stderr
    lines_reported = {int(line.split(":")[1]) for line in result.stdout.splitlines()}
    assert lines_reported == set(range(1, 8))
    assert "7:1: error findings-truncated 400 more findings in this record left out" in result.stdout
    as_json = project.cli("validate", "logs/hostile.jsonl", "--as", "message", "--format", "json")
    assert as_json.returncode == 1
    findings = json.loads(as_json.stdout)
    assert len(findings) == len(result.stdout.splitlines())


# -- properties ----------------------------------------------------------------------------------------------

# Stands for an integer of 5,000 digits, put in place when the value is used: hypothesis cannot print one.
HUGE = "<an integer of 5000 digits>"


def with_huge(value: Any) -> Any:
    if value == HUGE:
        return 10**5000
    if isinstance(value, list):
        return [with_huge(item) for item in value]
    if isinstance(value, dict):
        return {key: with_huge(item) for key, item in value.items()}
    return value


# Text with lone surrogates too: they reach dispatch from JSON escapes ("\ud800") and from handlers.
any_text = st.text(st.characters() | st.characters(categories=["Cs"]))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.just(HUGE) | st.floats() | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def hostile_texts() -> st.SearchStrategy[str]:
    return st.one_of(
        any_text,
        json_values.map(lambda value: json.dumps(value)),
        st.integers(1, 3000).map(lambda depth: "[" * depth + "]" * depth),
        st.integers(1, 20_000).map(lambda depth: "{" * depth),
        st.integers(4000, 6000).map(lambda digits: '{"n": ' + "1" * digits + "}"),
        st.sampled_from(['{"n": NaN}', '{"n": -Infinity}', '{"n": 1, "n": -1}', "1e999", '"\\ud800"']),
    )


class _Unprintable:
    """A value whose str() and repr() raise, as a handler's result or inside arguments handed over as data."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __str__(self) -> str:
        raise self.error

    __repr__ = __str__


# Python values no JSON text gives: what a caller may hand dispatch as arguments, or a handler return.
non_json = st.sampled_from(
    [
        b'{"n": 1}',
        bytearray(b"{}"),
        {1, 2},
        (1, 2),
        {"n": (1,)},
        {1: "int key"},
        {"n": float("nan")},
        {"n": decimal.Decimal("1.5")},
        complex(1, 2),
        object(),
        iter([1]),
        {"n": 10**5000},
    ]
) | st.builds(_Unprintable, st.sampled_from([ValueError("no"), SystemExit(2), KeyboardInterrupt()]))
arguments = st.one_of(hostile_texts(), json_values, non_json, st.dictionaries(st.just("n"), non_json))
calls = st.one_of(
    st.builds(
        lambda name, args, call_id: {"id": call_id, "function": {"name": name, "arguments": args}},
        st.sampled_from(["echo", "get_current_weather", "nope"]) | st.text(max_size=5) | json_values,
        arguments,
        st.none() | st.text(max_size=8) | st.integers() | st.just(HUGE),
    ),
    json_values,
    st.builds(lambda function: {"id": "x", "function": function}, json_values),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile=calls, result=json_values | hostile_texts() | non_json | st.lists(non_json, max_size=2))
def test_any_call_and_any_result_is_one_well_formed_tool_message(sdk: ModuleType, hostile: Any, result: Any) -> None:
    tools = tools_with(sdk, with_huge(result))
    for outcome in both(tools, with_huge(hostile)):
        well_formed(outcome)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values | hostile_texts())
def test_the_validators_raise_only_validation_errors(sdk: ModuleType, value: Any) -> None:
    value = with_huge(value)
    for validate in (sdk.validate_message, sdk.validate_tool_call):
        try:
            validate(value)
        except sdk.ToolgenValidationError as error:
            assert all(isinstance(p.pointer, str) and p.message for p in error.problems)
    try:
        sdk.validate_tool_arguments("get_current_weather", value)
    except sdk.ToolgenValidationError as error:
        assert all(isinstance(p.pointer, str) for p in error.problems)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_run_given_hostile_calls_answers_each_and_finishes(sdk: ModuleType, mode: str) -> None:
    runtime = sdk._runtime
    tools = tools_with(sdk, raises=KeyboardInterrupt())
    turn = runtime.assistant_turn(
        None,
        call("get_current_weather", "[" * 20_000, "a"),
        call("get_current_weather", '{"location": ' + "1" * 5000 + "}", "b"),
        call("get_current_weather", '{"location": NaN}', "c"),
        call("echo", "{}", "d"),
        call("echo", '{"n": -5, "n": 5}', "e"),
    )
    model = runtime.ScriptedModel([turn, "done"])
    user = [{"role": "user", "content": "hi"}]
    result = runtime.run(user, model, tools) if mode == "sync" else asyncio.run(runtime.arun(user, model, tools))
    assert result.stop_reason == "finished" and result.error is None
    assert [report.error_kind for report in result.calls] == [
        "invalid_json",
        "invalid_json",
        "invalid_json",
        "handler_error",
        "invalid_json",
    ]
    sdk.validate_messages(result.messages)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=non_json)
def test_arguments_handed_over_as_data_that_is_not_json_never_reach_a_handler(sdk: ModuleType, value: Any) -> None:
    tools = tools_with(sdk)
    for name in ("echo", "get_current_weather"):
        # Bytes at the top are JSON text, read as text is; inside data they are not JSON.
        top = () if isinstance(value, (bytes, bytearray)) else (value,)
        for handed in (*top, {"n": value, "location": "x"}):
            for outcome in both(tools, call(name, handed)):
                message = well_formed(outcome)
                assert outcome.error is not None and outcome.error.kind == "invalid_arguments", message
    assert tools.ran == []


@pytest.mark.parametrize("raised", [SystemExit(2), KeyboardInterrupt(), ValueError("no")])
def test_a_result_whose_str_raises_is_an_invalid_result(sdk: ModuleType, raised: BaseException) -> None:
    tools = tools_with(sdk, _Unprintable(raised))
    for outcome in both(tools, call("echo", "{}")):
        message = well_formed(outcome)
        assert outcome.error is not None and outcome.error.kind == "invalid_result", message
