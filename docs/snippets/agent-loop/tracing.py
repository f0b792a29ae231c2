"""Traces and metrics: every run traced and measured with OpenTelemetry's GenAI conventions."""

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolgen_sdk import Tools, agent

tools = Tools()
tools.get_current_weather.handler(lambda args, ctx: {"location": args.location, "temperature": 18.0, "unit": "celsius"})
messages = [{"role": "user", "content": "What's the weather in Oslo?"}]
model = agent.ScriptedModel(
    [agent.assistant_turn(None, agent.tool_call("get_current_weather", {"location": "Oslo"})), "Sunny, 18 °C."]
)

# --8<-- [start:console]
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))  # each span printed as JSON
# trace.set_tracer_provider(provider) traces every run; tracer_provider= traces this one.
# --8<-- [end:console]
kept = InMemorySpanExporter()  # what the page states, checked below
provider.add_span_processor(SimpleSpanProcessor(kept))
reader = InMemoryMetricReader()
# --8<-- [start:run]
result = agent.run(
    messages,
    model,
    tools,
    agent_name="weather",
    tracer_provider=provider,
    meter_provider=MeterProvider(metric_readers=[reader]),
)
# --8<-- [end:run]

spans = {span.name: span for span in kept.get_finished_spans()}
assert set(spans) == {"invoke_agent weather", "chat scripted", "execute_tool get_current_weather"}, set(spans)
run_span, tool_span = spans["invoke_agent weather"], spans["execute_tool get_current_weather"]
assert run_span.attributes["gen_ai.operation.name"] == "invoke_agent"
assert run_span.attributes["toolgen.stop_reason"] == "finished"
assert tool_span.attributes["gen_ai.tool.call.id"] == result.calls[0].call_id
assert tool_span.attributes["toolgen.tool.outcome"] == "ok"
assert tool_span.parent.span_id == run_span.context.span_id  # chat and tool spans are children of the run's
assert "gen_ai.tool.call.arguments" not in tool_span.attributes  # contents only with the conventions' switch
metrics = {m.name for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
assert {"gen_ai.client.operation.duration", "toolgen.tool.calls", "toolgen.tool.duration"} <= metrics, metrics
