# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenTelemetry spans and metrics of agent runs, following the GenAI semantic conventions, through opentelemetry-api.

A run is an `invoke_agent {name}` span; each model call a `chat {model}` span and each tool call an
`execute_tool {tool}` span, both children of the run's span (parallel calls and async runs alike, since every
span names its parent explicitly). Metrics: the conventions' `gen_ai.client.operation.duration` (seconds) and
`gen_ai.client.token.usage` (with `gen_ai.token.type`) histograms for model calls, and `toolgen.tool.calls`,
`toolgen.tool.errors` and `toolgen.tool.duration` per tool, so that counts and success rates add up across runs
and processes in any backend. Message contents, tool arguments and results are recorded only when
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true, as the conventions ask.

Nothing is imported until a run starts, and when opentelemetry-api is not installed, or no tracer or meter
provider has been set, a run gets NO_TELEMETRY, whose methods do nothing: tracing off costs the loop nothing.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
SCOPE = "toolgen"
OTHER_PROVIDER = "_OTHER"
# The conventions' well-known gen_ai.provider.name of each wire's provider.
PROVIDERS: Mapping[str, str] = MappingProxyType(
    {
        "anthropic": "anthropic",
        "bedrock-converse": "aws.bedrock",
        "cohere": "cohere",
        "gemini": "gcp.gemini",
        "google-interactions": "gcp.gemini",
        "mistral": "mistral_ai",
        "ollama": "ollama",
        "openai-chat": "openai",
        "openai-chat-camel": "openai",
        "openai-responses": "openai",
    }
)
# The bucket boundaries the conventions advise for the two gen_ai.client histograms.
DURATION_BUCKETS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)
TOKEN_BUCKETS = tuple(4**power for power in range(14))
# Generation settings a request states, as the conventions' request attributes.
_SETTINGS = MappingProxyType(
    {
        "max_tokens": "gen_ai.request.max_tokens",
        "temperature": "gen_ai.request.temperature",
        "top_p": "gen_ai.request.top_p",
        "stop": "gen_ai.request.stop_sequences",
    }
)
# What the API's global providers are before an SDK sets real ones: spans and metrics there go nowhere.
_UNSET_PROVIDERS = frozenset(
    {
        "ProxyTracerProvider",
        "NoOpTracerProvider",
        "_ProxyMeterProvider",
        "NoOpMeterProvider",
    }
)
Ids = tuple[str | None, str | None]
NO_IDS: Ids = (None, None)


def capture_content(environ: Mapping[str, str] | None = None) -> bool:
    """Whether message contents go into spans: the conventions' switch, off unless set to true."""
    value = (os.environ if environ is None else environ).get(CAPTURE_CONTENT_ENV, "")
    return value.strip().lower() in ("true", "1", "yes")


def provider_name(model: Any) -> str:
    """The gen_ai.provider.name of a model client: from its wire (HTTPModel, ReplayModel), `_OTHER` otherwise."""
    named = getattr(model, "provider_name", None)
    if isinstance(named, str) and named:
        return named
    wire = getattr(model, "wire", None)
    return (
        PROVIDERS.get(wire, wire) if isinstance(wire, str) and wire else OTHER_PROVIDER
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _unset(provider: Any) -> bool:
    return type(provider).__name__ in _UNSET_PROVIDERS


class NoTelemetry:
    """What a run records when OpenTelemetry is off: nothing."""

    enabled = False

    def start_run(self) -> None:
        pass

    def end_run(
        self, stop: str, error_type: str | None, usage: Mapping[str, int]
    ) -> None:
        pass

    def start_chat(
        self, messages: list[dict[str, Any]], settings: Mapping[str, Any]
    ) -> Any:
        return None

    def end_chat(
        self,
        span: Any,
        seconds: float,
        response: Any = None,
        error_type: str | None = None,
        message: str | None = None,
    ) -> None:
        pass

    def start_tool(self, name: str, call_id: str, arguments: str) -> Any:
        return None

    def end_tool(
        self,
        span: Any,
        name: str,
        status: str,
        error_kind: str | None,
        seconds: float,
        content: Any,
    ) -> None:
        pass

    @contextlib.contextmanager
    def active(self, span: Any) -> Iterator[None]:
        yield

    def ids(self, span: Any = None) -> Ids:
        return NO_IDS


NO_TELEMETRY = NoTelemetry()


class Telemetry(NoTelemetry):
    """The spans and metric instruments of one run."""

    enabled = True

    def __init__(
        self,
        trace: Any,
        tracer_provider: Any,
        meter_provider: Any,
        *,
        agent: str | None,
        conversation_id: str,
        provider: str,
        request_model: str | None,
        capture: bool,
    ) -> None:
        self._trace = trace
        self._tracer = (
            None
            if tracer_provider is None
            else tracer_provider.get_tracer(SCOPE, schema_url=None)
        )
        self._agent = agent
        self._conversation_id = conversation_id
        self._provider = provider
        self._request_model = request_model
        self._capture = capture
        self._run_span: Any = None
        self._parent: Any = None
        self._meter = (
            None if meter_provider is None else meter_provider.get_meter(SCOPE)
        )
        if self._meter is not None:
            meter = self._meter
            self._durations = meter.create_histogram(
                "gen_ai.client.operation.duration",
                unit="s",
                description="GenAI operation duration",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )
            self._tokens = meter.create_histogram(
                "gen_ai.client.token.usage",
                unit="{token}",
                description="Number of input and output tokens used",
                explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
            )
            self._tool_calls = meter.create_counter(
                "toolgen.tool.calls",
                unit="{call}",
                description="Tool calls, by tool and outcome (ok, error, denied, skipped)",
            )
            self._tool_errors = meter.create_counter(
                "toolgen.tool.errors",
                unit="{call}",
                description="Tool calls that failed, by tool and error type",
            )
            self._tool_durations = meter.create_histogram(
                "toolgen.tool.duration",
                unit="s",
                description="Duration of the tool calls that ran",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            )

    def _common(self, operation: str) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": self._provider,
            "gen_ai.conversation.id": self._conversation_id,
        }
        if self._request_model:
            attributes["gen_ai.request.model"] = self._request_model
        return attributes

    def _failed(self, span: Any, error_type: str, message: str | None) -> None:
        span.set_attribute("error.type", error_type)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, message))

    # -- the run --

    def start_run(self) -> None:
        if self._tracer is None:
            return
        attributes = self._common("invoke_agent")
        if self._agent:
            attributes["gen_ai.agent.name"] = self._agent
        name = f"invoke_agent {self._agent}" if self._agent else "invoke_agent"
        # The caller's current span, if any, is the parent: a run inside a request handler nests under it.
        self._run_span = self._tracer.start_span(
            name, kind=self._trace.SpanKind.INTERNAL, attributes=attributes
        )
        self._parent = self._trace.set_span_in_context(self._run_span)

    def end_run(
        self, stop: str, error_type: str | None, usage: Mapping[str, int]
    ) -> None:
        span, self._run_span = self._run_span, None
        if span is None:
            return
        span.set_attribute("toolgen.stop_reason", stop)
        for key in ("input_tokens", "output_tokens"):
            if key in usage:
                span.set_attribute(f"gen_ai.usage.{key}", usage[key])
        if stop == "error":
            self._failed(span, error_type or "error", None)
        span.end()

    # -- model calls --

    def start_chat(
        self, messages: list[dict[str, Any]], settings: Mapping[str, Any]
    ) -> Any:
        if self._tracer is None:
            return None
        attributes = self._common("chat")
        for key, attribute in _SETTINGS.items():
            value = settings.get(key)
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                attributes[attribute] = value
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                attributes[attribute] = tuple(value)
        model = self._request_model
        span = self._tracer.start_span(
            f"chat {model}" if model else "chat",
            context=self._parent,
            kind=self._trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        if self._capture and span.is_recording():
            span.set_attribute("gen_ai.input.messages", _json(messages))
        return span

    def end_chat(
        self,
        span: Any,
        seconds: float,
        response: Any = None,
        error_type: str | None = None,
        message: str | None = None,
    ) -> None:
        usage = getattr(response, "usage", None) or {}
        response_model = getattr(response, "model", None)
        if span is not None:
            if response is not None:
                if response_model:
                    span.set_attribute("gen_ai.response.model", response_model)
                    if not self._request_model:
                        span.update_name(f"chat {response_model}")
                if response.id:
                    span.set_attribute("gen_ai.response.id", response.id)
                reason = (response.finish or {}).get("reason")
                if reason:
                    span.set_attribute("gen_ai.response.finish_reasons", (str(reason),))
                for key in ("input_tokens", "output_tokens"):
                    if isinstance(usage.get(key), int):
                        span.set_attribute(f"gen_ai.usage.{key}", usage[key])
                if self._capture and span.is_recording():
                    span.set_attribute(
                        "gen_ai.output.messages", _json([response.message])
                    )
            if error_type is not None:
                self._failed(span, error_type, message)
            span.end()
        if self._meter is None:
            return
        attributes = self._common("chat")
        del attributes[
            "gen_ai.conversation.id"
        ]  # one series per conversation would swamp a backend
        if response_model:
            attributes["gen_ai.response.model"] = response_model
        if error_type is not None:
            attributes["error.type"] = error_type
        self._durations.record(seconds, attributes)
        for key, kind in (("input_tokens", "input"), ("output_tokens", "output")):
            if isinstance(usage.get(key), int):
                self._tokens.record(
                    usage[key], {**attributes, "gen_ai.token.type": kind}
                )

    # -- tool calls --

    def start_tool(self, name: str, call_id: str, arguments: str) -> Any:
        if self._tracer is None:
            return None
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.conversation.id": self._conversation_id,
        }
        span = self._tracer.start_span(
            f"execute_tool {name}",
            context=self._parent,
            kind=self._trace.SpanKind.INTERNAL,
            attributes=attributes,
        )
        if self._capture and span.is_recording():
            span.set_attribute("gen_ai.tool.call.arguments", arguments)
        return span

    def end_tool(
        self,
        span: Any,
        name: str,
        status: str,
        error_kind: str | None,
        seconds: float,
        content: Any,
    ) -> None:
        failed = status != "ok"
        error_type = (error_kind or status) if failed else None
        if span is not None:
            span.set_attribute("toolgen.tool.outcome", status)
            if self._capture and span.is_recording():
                result = content if isinstance(content, str) else _json(content)
                span.set_attribute("gen_ai.tool.call.result", result)
            if error_type is not None:
                self._failed(span, error_type, None)
            span.end()
        if self._meter is None:
            return
        attributes = {"gen_ai.tool.name": name, "toolgen.tool.outcome": status}
        self._tool_calls.add(1, attributes)
        if error_type is not None:
            self._tool_errors.add(
                1, {"gen_ai.tool.name": name, "error.type": error_type}
            )
        if status in ("ok", "error"):
            self._tool_durations.record(seconds, attributes)

    # -- context --

    @contextlib.contextmanager
    def active(self, span: Any) -> Iterator[None]:
        """The span as the current one while a handler runs, so that spans the handler makes nest under it."""
        if span is None:
            yield
            return
        with self._trace.use_span(
            span,
            end_on_exit=False,
            record_exception=False,
            set_status_on_exception=False,
        ):
            yield

    def ids(self, span: Any = None) -> Ids:
        """The trace and span ids (hex) of `span`, or of the run's span; None when nothing is recorded."""
        span = span if span is not None else self._run_span
        if span is None:
            return NO_IDS
        context = span.get_span_context()
        if not context.is_valid:
            return NO_IDS
        return format(context.trace_id, "032x"), format(context.span_id, "016x")


def open_telemetry(
    model: Any,
    conversation_id: str,
    *,
    agent: str | None = None,
    tracer_provider: Any = None,
    meter_provider: Any = None,
) -> NoTelemetry:
    """The telemetry of one run: the given providers, else the global ones; NO_TELEMETRY when there is none."""
    try:
        # By name, as clients/http.py imports httpx: the package imports and type-checks without it installed.
        trace = importlib.import_module("opentelemetry.trace")
        metrics = importlib.import_module("opentelemetry.metrics")
    except ImportError:
        return NO_TELEMETRY
    tracer_provider = tracer_provider or trace.get_tracer_provider()
    meter_provider = meter_provider or metrics.get_meter_provider()
    # Before an SDK is set up the API's providers are proxies, and its proxy meter keeps every instrument made
    # through it: nothing would be recorded, and a long-lived process would grow with every run.
    tracing = None if _unset(tracer_provider) else tracer_provider
    metering = None if _unset(meter_provider) else meter_provider
    if tracing is None and metering is None:
        return NO_TELEMETRY
    request_model = getattr(model, "model", None)
    return Telemetry(
        trace,
        tracing,
        metering,
        agent=agent,
        conversation_id=conversation_id,
        provider=provider_name(model),
        request_model=request_model if isinstance(request_model, str) else None,
        capture=capture_content(),
    )
