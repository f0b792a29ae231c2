"""OpenTelemetry of agent runs, through the SDK's in-memory exporter and reader: GenAI spans, their parents and
attributes, metrics, content capture, the ids on run events, and nothing at all when OpenTelemetry is absent."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from support.projects import REPO_ROOT, SOURCE_PACKAGE

USER = [{"role": "user", "content": "What's the weather in Paris and in Nowhere?"}]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "loop"
CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    name = source_package.__name__
    return SimpleNamespace(
        package=source_package,
        runtime=importlib.import_module(f"{name}._runtime"),
        telemetry=importlib.import_module(f"{name}._runtime.observe.telemetry"),
    )


class Otel:
    """A tracer provider and a meter provider of their own (the global ones are left alone), read in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    @property
    def options(self) -> dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self, prefix: str = "") -> list[ReadableSpan]:
        return [span for span in self.exporter.get_finished_spans() if span.name.startswith(prefix)]

    def points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


@pytest.fixture
def otel() -> Otel:
    return Otel()


def weather_tools(sdk: SimpleNamespace, seen: list[Any] | None = None) -> Any:
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        if seen is not None:
            seen.append((args.location, trace.get_current_span().get_span_context().span_id))
        if args.location == "Nowhere":
            raise LookupError("there is no such place")
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=21.5, unit="celsius")

    return tools


def two_calls(sdk: SimpleNamespace) -> Any:
    """A first answer calling the weather tool twice in parallel (one call fails), then a text answer."""
    rt = sdk.runtime
    first = rt.Response(
        rt.assistant_turn(
            None,
            rt.tool_call("get_current_weather", {"location": "Paris"}, id="call_paris"),
            rt.tool_call("get_current_weather", {"location": "Nowhere"}, id="call_nowhere"),
        ),
        {"reason": "tool_calls", "raw": "tool_calls"},
        {"input_tokens": 40, "output_tokens": 12},
        model="gpt-4o-mini-2024-07-18",
        id="chatcmpl-1",
    )
    second = rt.Response(
        {"role": "assistant", "content": "Sunny in Paris; Nowhere does not exist."},
        {"reason": "stop", "raw": "stop"},
        {"input_tokens": 90, "output_tokens": 9},
        model="gpt-4o-mini-2024-07-18",
        id="chatcmpl-2",
    )
    return rt.ScriptedModel([first, second])


def drive(sdk: SimpleNamespace, mode: str, model: Any, tools: Any, **settings: Any) -> Any:
    if mode == "sync":
        events = sdk.runtime.run_events(USER, model, tools, **settings)
        collected = list(events)
        return events.result, collected

    async def go() -> tuple[Any, list[Any]]:
        events = sdk.runtime.arun_events(USER, model, tools, **settings)
        collected = [event async for event in events]
        return events.result, collected

    return asyncio.run(go())


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_run_is_an_invoke_agent_span_over_chat_and_execute_tool_spans(
    sdk: SimpleNamespace, otel: Otel, mode: str, stream: bool
) -> None:
    seen: list[Any] = []
    result, events = drive(
        sdk, mode, two_calls(sdk), weather_tools(sdk, seen), stream=stream, agent_name="weather", **otel.options
    )
    assert result.stop_reason == "finished"
    (run,) = otel.spans("invoke_agent")
    chats = otel.spans("chat")
    tools = otel.spans("execute_tool")
    assert run.name == "invoke_agent weather" and run.parent is None
    assert [span.name for span in chats] == ["chat gpt-4o-mini-2024-07-18"] * 2
    assert {span.name for span in tools} == {"execute_tool get_current_weather"}
    for span in chats + tools:
        assert span.parent is not None and span.parent.span_id == run.context.span_id
        assert span.context.trace_id == run.context.trace_id
    assert run.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "weather"
    assert run.attributes["gen_ai.conversation.id"] == result.conversation_id
    assert run.attributes["gen_ai.usage.input_tokens"] == 130 and run.attributes["gen_ai.usage.output_tokens"] == 21
    first = dict(chats[0].attributes or {})
    assert first["gen_ai.operation.name"] == "chat" and first["gen_ai.provider.name"] == "_OTHER"
    assert first["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18" and first["gen_ai.response.id"] == "chatcmpl-1"
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert first["gen_ai.usage.input_tokens"] == 40 and first["gen_ai.usage.output_tokens"] == 12
    assert first.get("gen_ai.request.stream") is (True if stream else None)  # set only for a streamed call
    assert dict(chats[1].attributes or {})["gen_ai.response.finish_reasons"] == ("stop",)
    # The call ids of the spans are those of the transcript's tool messages.
    by_id = {dict(span.attributes or {})["gen_ai.tool.call.id"]: span for span in tools}
    answered = [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]
    assert sorted(by_id) == sorted(answered) == ["call_nowhere", "call_paris"]
    for span in tools:
        attributes = dict(span.attributes or {})
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["gen_ai.tool.name"] == "get_current_weather" and attributes["gen_ai.tool.type"] == "function"
        description = weather_tools(sdk).entry("get_current_weather").spec.description
        assert attributes.get("gen_ai.tool.description") == description
    failed, ok = by_id["call_nowhere"], by_id["call_paris"]
    assert dict(failed.attributes or {})["error.type"] == "handler_error"
    assert failed.status.status_code is StatusCode.ERROR
    assert "error.type" not in dict(ok.attributes or {}) and ok.status.status_code is StatusCode.UNSET
    # Each chat span closes before the tools of its answer start; tools run inside the run's span.
    assert chats[0].end_time is not None and all(chats[0].end_time <= (span.start_time or 0) for span in tools)
    assert run.end_time is not None and all((span.end_time or 0) <= run.end_time for span in chats + tools)
    # The handler's own current span is its call's execute_tool span, in a worker thread or a task alike.
    spans_of = {dict(span.attributes or {})["gen_ai.tool.call.id"]: span.context.span_id for span in tools}
    assert dict(seen) == {"Paris": spans_of["call_paris"], "Nowhere": spans_of["call_nowhere"]}
    # Events name the span they belong to, and the trace.
    trace_id = format(run.context.trace_id, "032x")
    assert {event.trace_id for event in events} == {trace_id}
    assert events[0].type == "run_started" and events[0].span_id == format(run.context.span_id, "016x")
    finished = {event.data["id"]: event for event in events if event.type == "tool_call_finished"}
    assert finished["call_nowhere"].span_id == format(spans_of["call_nowhere"], "016x")
    model_events = [event for event in events if event.type == "model_call_finished"]
    assert [event.span_id for event in model_events] == [format(span.context.span_id, "016x") for span in chats]


def test_a_run_inside_a_span_of_the_caller_nests_under_it(sdk: SimpleNamespace, otel: Otel) -> None:
    tracer = otel.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("handle request") as outer:
        sdk.runtime.run(USER, sdk.runtime.ScriptedModel(["hi"]), weather_tools(sdk), **otel.options)
    (run,) = otel.spans("invoke_agent")
    assert run.name == "invoke_agent" and run.parent is not None
    assert run.parent.span_id == outer.get_span_context().span_id


def test_metrics_count_calls_outcomes_durations_and_tokens_across_runs(sdk: SimpleNamespace, otel: Otel) -> None:
    for _ in range(2):
        sdk.runtime.run(USER, two_calls(sdk), weather_tools(sdk), **otel.options)
    durations = otel.points("gen_ai.client.operation.duration")
    assert len(durations) == 1 and durations[0].count == 4
    assert dict(durations[0].attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "_OTHER",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    }
    tokens = {point.attributes["gen_ai.token.type"]: point for point in otel.points("gen_ai.client.token.usage")}
    assert tokens["input"].count == 4 and tokens["input"].sum == 2 * (40 + 90)
    assert tokens["output"].sum == 2 * (12 + 9)
    calls = {point.attributes["toolgen.tool.outcome"]: point.value for point in otel.points("toolgen.tool.calls")}
    assert calls == {"ok": 2, "error": 2}
    (errors,) = otel.points("toolgen.tool.errors")
    assert errors.value == 2 and dict(errors.attributes) == {
        "gen_ai.tool.name": "get_current_weather",
        "error.type": "handler_error",
    }
    assert sum(point.count for point in otel.points("toolgen.tool.duration")) == 4


def test_calls_that_never_ran_have_execute_tool_spans_ended_as_errors(sdk: SimpleNamespace, otel: Otel) -> None:
    """A call the approver denies and one past max_tool_calls: neither runs, and each has its span, a child of the
    run's, with its kind as error.type, as the tools' metrics count it."""
    rt = sdk.runtime
    tools = weather_tools(sdk)
    ran: list[Any] = []
    tools.add(
        "delete_city",
        {"type": "object"},
        lambda args, ctx: ran.append(args),
        description="Delete a city for good",
        requires_approval=True,
    )
    turn = rt.assistant_turn(
        None,
        rt.tool_call("get_current_weather", {"location": "Paris"}, id="call_ok"),
        rt.tool_call("delete_city", {"name": "Paris"}, id="call_denied"),
        rt.tool_call("get_current_weather", {"location": "Oslo"}, id="call_over"),
    )
    model = rt.ScriptedModel([rt.Response(turn, {"reason": "tool_calls", "raw": "tool_calls"}), "unused"])
    result = rt.run(USER, model, tools, approve=lambda request: False, max_tool_calls=2, **otel.options)
    assert result.stop_reason == "max_tool_calls" and not ran
    (run,) = otel.spans("invoke_agent")
    spans = {str(dict(span.attributes or {})["gen_ai.tool.call.id"]): span for span in otel.spans("execute_tool")}
    assert sorted(spans) == ["call_denied", "call_ok", "call_over"]
    for span in spans.values():
        assert span.parent is not None and span.parent.span_id == run.context.span_id
        assert run.end_time is not None and (span.end_time or 0) <= run.end_time
    denied, over = (dict(spans[key].attributes or {}) for key in ("call_denied", "call_over"))
    assert spans["call_denied"].name == "execute_tool delete_city"
    assert denied["error.type"] == "denied" and denied["toolgen.tool.outcome"] == "denied"
    assert denied["gen_ai.tool.description"] == "Delete a city for good"
    assert over["error.type"] == "limit" and over["toolgen.tool.outcome"] == "skipped"
    assert spans["call_denied"].status.status_code is StatusCode.ERROR
    assert spans["call_over"].status.status_code is StatusCode.ERROR
    assert spans["call_ok"].status.status_code is StatusCode.UNSET
    calls = {point.attributes["toolgen.tool.outcome"]: point.value for point in otel.points("toolgen.tool.calls")}
    assert calls == {"ok": 1, "denied": 1, "skipped": 1}


def test_a_run_stopped_mid_answer_still_gives_every_unanswered_call_a_span(sdk: SimpleNamespace, otel: Otel) -> None:
    """A cancel before the calls ran: each is answered as skipped, its span an error of kind `cancelled`."""
    rt = sdk.runtime
    cancel = threading.Event()
    turn = rt.assistant_turn(None, rt.tool_call("get_current_weather", {"location": "Paris"}, id="call_late"))

    def answer(request: Any) -> Any:
        cancel.set()
        return rt.Response(turn, {"reason": "tool_calls", "raw": "tool_calls"})

    result = rt.run(USER, rt.ScriptedModel([answer]), weather_tools(sdk), cancel=cancel, **otel.options)
    assert result.stop_reason == "cancelled"
    (span,) = otel.spans("execute_tool")
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.tool.call.id"] == "call_late" and attributes["error.type"] == "cancelled"
    assert attributes["toolgen.tool.outcome"] == "skipped" and span.status.status_code is StatusCode.ERROR


def test_a_streamed_call_records_its_time_to_first_chunk(sdk: SimpleNamespace, otel: Otel) -> None:
    """The first chunk's time, from the request, on a streamed call's span; none on a whole one."""
    telemetry = sdk.telemetry.open_telemetry(sdk.runtime.ScriptedModel([]), "conversation-1", **otel.options)
    request = sdk.runtime.Request([{"role": "user", "content": "hi"}])
    answer = sdk.runtime.Response({"role": "assistant", "content": "hello"}, {"reason": "stop", "raw": "stop"})
    for stream in (True, False):
        span = telemetry.start_chat(request, stream)
        telemetry.first_chunk(span)
        telemetry.first_chunk(span)  # later chunks change nothing
        telemetry.end_chat(span, 0.0, answer)
    streamed, whole = (dict(span.attributes or {}) for span in otel.spans("chat"))
    first = streamed["gen_ai.response.time_to_first_chunk"]
    assert isinstance(first, float) and first >= 0.0 and streamed["gen_ai.request.stream"] is True
    assert "gen_ai.response.time_to_first_chunk" not in whole and "gen_ai.request.stream" not in whole


def test_a_failed_model_call_is_an_error_span_and_ends_the_run_span_as_error(sdk: SimpleNamespace, otel: Otel) -> None:
    refusal = sdk.runtime.ProviderError("openai-chat", "slow down", type="rate_limit_error", status=429)
    result = sdk.runtime.run(USER, sdk.runtime.ScriptedModel([refusal]), weather_tools(sdk), **otel.options)
    assert result.stop_reason == "error"
    (chat,) = otel.spans("chat")
    (run,) = otel.spans("invoke_agent")
    assert dict(chat.attributes or {})["error.type"] == "rate_limit_error"
    assert chat.status.status_code is StatusCode.ERROR and chat.status.description == "slow down"
    assert dict(run.attributes or {})["error.type"] == "rate_limit_error" and run.status.status_code is StatusCode.ERROR
    (duration,) = otel.points("gen_ai.client.operation.duration")
    assert duration.attributes["error.type"] == "rate_limit_error"


def test_a_recorded_stream_gives_provider_model_id_and_usage(sdk: SimpleNamespace, otel: Otel) -> None:
    calls = (FIXTURES / "openai-chat-weather-parallel.sse").read_bytes()
    answer = (FIXTURES / "openai-chat-answer.sse").read_bytes()
    model = sdk.runtime.ReplayModel([calls, answer], wire="openai-chat")
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=18, unit="celsius")

    result = sdk.runtime.run(USER, model, tools, stream=True, **otel.options)
    assert result.stop_reason == "finished"
    first, second = (dict(span.attributes or {}) for span in otel.spans("chat"))
    assert first["gen_ai.provider.name"] == "openai" and first["gen_ai.response.id"] == "chatcmpl-loop-weather"
    assert first["gen_ai.response.model"] == "gpt-4o-mini" and first["gen_ai.response.finish_reasons"] == (
        "tool_calls",
    )
    assert second["gen_ai.usage.input_tokens"] == 120 and second["gen_ai.usage.output_tokens"] == 12
    ids = {dict(span.attributes or {})["gen_ai.tool.call.id"] for span in otel.spans("execute_tool")}
    assert ids == {"call_paris", "call_oslo"}


def test_contents_are_recorded_only_behind_the_conventions_switch(
    sdk: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    off = Otel()
    monkeypatch.delenv(CAPTURE, raising=False)
    sdk.runtime.run(USER, two_calls(sdk), weather_tools(sdk), **off.options)
    for span in off.spans():
        keys = set(span.attributes or {})
        assert not keys & {
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        }
    on = Otel()
    monkeypatch.setenv(CAPTURE, "true")
    sdk.runtime.run(USER, two_calls(sdk), weather_tools(sdk), **on.options)
    chats = on.spans("chat")
    first = dict(chats[0].attributes or {})
    # The conventions' shape: messages of role and typed parts, not the canonical (OpenAI-like) messages.
    assert json.loads(str(first["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": USER[0]["content"]}]}
    ]
    (output,) = json.loads(str(first["gen_ai.output.messages"]))
    assert output["role"] == "assistant" and output["finish_reason"] == "tool_call"
    assert output["parts"] == [
        {"type": "tool_call", "id": "call_paris", "name": "get_current_weather", "arguments": {"location": "Paris"}},
        {
            "type": "tool_call",
            "id": "call_nowhere",
            "name": "get_current_weather",
            "arguments": {"location": "Nowhere"},
        },
    ]
    second = json.loads(str(dict(chats[1].attributes or {})["gen_ai.input.messages"]))
    assert [message["role"] for message in second] == ["user", "assistant", "tool", "tool"]
    paris = second[2]["parts"][0]
    assert paris["type"] == "tool_call_response" and paris["id"] == "call_paris"
    assert paris["response"]["temperature"] == 21.5  # the tool's JSON result as the object it holds
    tools = {dict(span.attributes or {})["gen_ai.tool.call.id"]: span for span in on.spans("execute_tool")}
    ok = dict(tools["call_paris"].attributes or {})
    assert json.loads(str(ok["gen_ai.tool.call.arguments"])) == {"location": "Paris"}
    assert json.loads(str(ok["gen_ai.tool.call.result"]))["temperature"] == 21.5
    # A result is recorded for a call that succeeded; a failure's text is its span's status description.
    failed = tools["call_nowhere"]
    assert "gen_ai.tool.call.result" not in dict(failed.attributes or {})
    assert "no such place" in str(failed.status.description)
    (run,) = on.spans("invoke_agent")
    assert json.loads(str(dict(run.attributes or {})["gen_ai.output.messages"]))[0]["finish_reason"] == "stop"


def test_the_capture_switch_and_provider_names(sdk: SimpleNamespace) -> None:
    telemetry = sdk.telemetry
    assert telemetry.capture_content({CAPTURE: "TRUE"}) and telemetry.capture_content({CAPTURE: "1"})
    assert not telemetry.capture_content({}) and not telemetry.capture_content({CAPTURE: "false"})
    assert telemetry.provider_name(sdk.runtime.ReplayModel([], wire="anthropic")) == "anthropic"
    assert telemetry.provider_name(sdk.runtime.ReplayModel([], wire="bedrock-converse")) == "aws.bedrock"
    assert telemetry.provider_name(sdk.runtime.ScriptedModel([])) == "_OTHER"


def test_without_a_configured_sdk_a_run_records_nothing_and_events_carry_no_ids(
    source_build: Path, tmp_path: Path
) -> None:
    """The global providers are the API's proxies here (nothing set them), then the API is not importable at all."""
    probe = f"""
import sys, time
blocked = sys.argv[1] == "absent"
if blocked:
    sys.modules["opentelemetry"] = None  # import opentelemetry raises ImportError
import {SOURCE_PACKAGE} as pkg
from {SOURCE_PACKAGE}._runtime import ScriptedModel, run_events
from {SOURCE_PACKAGE}._runtime.observe import telemetry
before = time.time()
events = run_events([{{"role": "user", "content": "hi"}}], ScriptedModel(["hello"]), pkg.Tools())
seen = list(events)
assert events.result.text == "hello"
assert telemetry.open_telemetry(None, "c") is telemetry.NO_TELEMETRY
assert all(e.trace_id is None and e.span_id is None for e in seen)
assert all(before <= e.time <= time.time() for e in seen)
assert not blocked or sys.modules["opentelemetry"] is None
print("ok", len(seen))
"""
    for case in ("proxy", "absent"):
        done = subprocess.run(
            [sys.executable, "-c", probe, case], cwd=source_build, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("ok ")


def test_event_times_are_wall_clock_and_in_order(sdk: SimpleNamespace) -> None:
    before = time.time()
    events = list(sdk.runtime.run_events(USER, sdk.runtime.ScriptedModel(["hi"]), weather_tools(sdk)))
    times = [event.time for event in events]
    assert times == sorted(times) and before <= times[0] and times[-1] <= time.time()
    payload = events[0].to_json()
    assert payload["time"] == times[0] and payload["trace_id"] is None and payload["span_id"] is None
