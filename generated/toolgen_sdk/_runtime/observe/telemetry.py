# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenTelemetry spans and metrics of agent runs, following the GenAI semantic conventions, through opentelemetry-api.

A run is an `invoke_agent {name}` span; each model call a `chat {model}` span and each tool call an
`execute_tool {tool}` span, both children of the run's span (parallel calls and async runs alike, since every
span names its parent explicitly). A call that never ran (denied, skipped by a limit or a stop) has its
`execute_tool` span too, started and ended at once with an error status and its kind as `error.type`. Spans carry
the attributes the conventions require or recommend that the run knows: request settings (genai_attributes.py),
server address, usage with cached and reasoning tokens, finish reasons, time to first chunk of a stream, OpenAI's
fingerprint and service tier. Metrics: the conventions' `gen_ai.client.operation.duration` (seconds) and
`gen_ai.client.token.usage` (with `gen_ai.token.type`) histograms for model calls, and `toolgen.tool.calls`,
`toolgen.tool.errors` and `toolgen.tool.duration` per tool, so that counts and success rates add up across runs
and processes in any backend. Message contents, tool arguments and results are recorded only when
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true, as the conventions ask, in their JSON shape
(genai_content.py).

Nothing is imported until a run starts, and when opentelemetry-api is not installed, or no tracer or meter
provider has been set, a run gets NO_TELEMETRY, whose methods do nothing: tracing off costs the loop nothing.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from ..extras import missing_extra
from ..wires.canonical import Request
from . import genai_content
from .genai_attributes import (
    OTHER_PROVIDER,
    PROVIDERS,
    provider_name,
    request_attributes,
    response_attributes,
    server_of,
    usage_attributes,
)

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "NO_IDS",
    "NO_TELEMETRY",
    "OTHER_PROVIDER",
    "PROVIDERS",
    "NoTelemetry",
    "Telemetry",
    "ToolReport",
    "capture_content",
    "open_telemetry",
    "provider_name",
]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
SCOPE = "toolgen"
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
# The request attributes an invoke_agent span carries (its conventions list these, not top_k or stream).
_AGENT_REQUEST = frozenset(
    {
        "gen_ai.request.max_tokens",
        "gen_ai.request.choice.count",
        "gen_ai.request.temperature",
        "gen_ai.request.top_p",
        "gen_ai.request.stop_sequences",
        "gen_ai.request.frequency_penalty",
        "gen_ai.request.presence_penalty",
        "gen_ai.request.seed",
        "gen_ai.output.type",
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


class ToolReport(Protocol):
    """What the end of a tool call says of it (loop/results.py's CallReport)."""

    @property
    def call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def content(self) -> Any: ...
    @property
    def seconds(self) -> float: ...
    @property
    def error_kind(self) -> str | None: ...


def capture_content(environ: Mapping[str, str] | None = None) -> bool:
    """Whether message contents go into spans: the conventions' switch, off unless set to true."""
    value = (os.environ if environ is None else environ).get(CAPTURE_CONTENT_ENV, "")
    return value.strip().lower() in ("true", "1", "yes")


def _json(value: Any) -> str | None:
    """JSON text of captured content; None for a value that has none (too deep, odd keys), left out then."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, TypeError, RecursionError):
        return None


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

    def start_chat(self, request: Request, stream: bool = False) -> Any:
        return None

    def first_chunk(self, span: Any) -> None:
        pass

    def retried(self, span: Any, note: Any) -> None:
        pass

    def end_chat(
        self,
        span: Any,
        seconds: float,
        response: Any = None,
        error_type: str | None = None,
        message: str | None = None,
    ) -> None:
        pass

    def start_tool(
        self, name: str, call_id: str, arguments: str, spec: Any = None
    ) -> Any:
        return None

    def end_tool(self, span: Any, report: ToolReport, spec: Any = None) -> None:
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
        wire: str | None = None,
        server: tuple[str, int] | None = None,
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
        self._wire = wire
        self._server = server
        self._run_span: Any = None
        self._parent: Any = None
        # The run's first request states its settings; its last answer, the agent's finish and output.
        self._run_requested = False
        self._finish_reasons: tuple[str, ...] = ()
        self._output: str | None = None
        # The model call in flight (calls of one run never overlap): when it started, its first chunk.
        self._streaming = False
        self._chat_started = 0.0
        self._first_chunk: float | None = None
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
        if operation == "chat" and self._server is not None:
            attributes["server.address"], attributes["server.port"] = self._server
        return attributes

    def _failed(self, span: Any, error_type: str, message: str | None) -> None:
        span.set_attribute("error.type", error_type)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, message))

    def _content(self, span: Any, attribute: str, value: Any) -> None:
        text = _json(value)
        if text is not None:
            span.set_attribute(attribute, text)

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
        for attribute, count in usage_attributes(usage, agent=True).items():
            span.set_attribute(attribute, count)
        if self._finish_reasons:
            span.set_attribute("gen_ai.response.finish_reasons", self._finish_reasons)
        if self._output is not None and span.is_recording():
            span.set_attribute("gen_ai.output.messages", self._output)
        if stop == "error":
            self._failed(span, error_type or "error", None)
        span.end()

    # -- model calls --

    def start_chat(self, request: Request, stream: bool = False) -> Any:
        if self._tracer is None:
            return None
        attributes = self._common("chat")
        settings = request_attributes(request.extras, self._wire, self._provider)
        attributes.update(settings)
        if stream:
            attributes["gen_ai.request.stream"] = True  # set only when true, as asked
        model = self._request_model
        span = self._tracer.start_span(
            f"chat {model}" if model else "chat",
            context=self._parent,
            kind=self._trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        self._streaming, self._first_chunk = stream, None
        self._chat_started = time.perf_counter()
        run, first = self._run_span, not self._run_requested
        self._run_requested = True
        if first and run is not None:
            for attribute, value in settings.items():
                if attribute in _AGENT_REQUEST:
                    run.set_attribute(attribute, value)
        if self._capture and span.is_recording():
            instructions, messages = genai_content.input_messages(
                request.messages, self._wire
            )
            for target in (span, run) if first and run is not None else (span,):
                self._content(target, "gen_ai.input.messages", messages)
                if instructions:
                    self._content(target, "gen_ai.system_instructions", instructions)
        return span

    def first_chunk(self, span: Any) -> None:
        """Note that the first chunk of the streamed call in flight arrived; later chunks change nothing."""
        if span is not None and self._first_chunk is None:
            self._first_chunk = time.perf_counter()

    def retried(self, span: Any, note: Any) -> None:
        """The model client sent the call in flight again (`note`, a clients/retry.py Retried): an event on its
        span, and `http.request.resend_count` (the conventions' name) counting them."""
        if span is None:
            return
        attributes: dict[str, Any] = {
            "error.type": str(note.type or "error"),
            "toolgen.retry.attempt": note.attempt + 1,
            "toolgen.retry.wait": float(note.wait),
        }
        if isinstance(note.status, int):
            attributes["http.response.status_code"] = note.status
        span.add_event("toolgen.model_call.retry", attributes)
        span.set_attribute("http.request.resend_count", note.attempt)

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
        finish = getattr(response, "finish", None)
        reason = finish.get("reason") if isinstance(finish, Mapping) else None
        # A finish expected but not received (a failed or cancelled call, a cut stream) is `error`.
        reasons = (str(reason),) if reason else ("error",) if error_type else ()
        self._finish_reasons = reasons or self._finish_reasons
        if span is not None:
            self._chat_ended(span, response, reasons)
            if error_type is not None:
                self._failed(span, error_type, message)
            span.end()
        if self._meter is None:
            return
        attributes = self._common("chat")
        # One series per conversation would swamp a backend.
        del attributes["gen_ai.conversation.id"]
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

    def _chat_ended(self, span: Any, response: Any, reasons: tuple[str, ...]) -> None:
        if reasons:
            span.set_attribute("gen_ai.response.finish_reasons", reasons)
        if self._streaming and self._first_chunk is not None:
            span.set_attribute(
                "gen_ai.response.time_to_first_chunk",
                self._first_chunk - self._chat_started,
            )
        if response is None:
            return
        if response.model:
            span.set_attribute("gen_ai.response.model", response.model)
            if not self._request_model:
                span.update_name(f"chat {response.model}")
        if response.id:
            span.set_attribute("gen_ai.response.id", response.id)
        attributes = {
            **usage_attributes(response.usage),
            **response_attributes(response, self._wire, self._provider),
        }
        for attribute, value in attributes.items():
            span.set_attribute(attribute, value)
        if self._capture and span.is_recording():
            output = _json(
                genai_content.output_messages(
                    response.message, reasons[0] if reasons else None
                )
            )
            if output is not None:
                span.set_attribute("gen_ai.output.messages", output)
                self._output = output

    # -- tool calls --

    def start_tool(
        self, name: str, call_id: str, arguments: str, spec: Any = None
    ) -> Any:
        if self._tracer is None:
            return None
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        }
        description = getattr(spec, "description", None)
        if isinstance(description, str) and description:
            attributes["gen_ai.tool.description"] = description
        span = self._tracer.start_span(
            f"execute_tool {name}",
            context=self._parent,
            kind=self._trace.SpanKind.INTERNAL,
            attributes=attributes,
        )
        if self._capture and span.is_recording():
            span.set_attribute("gen_ai.tool.call.arguments", arguments)
        return span

    def end_tool(self, span: Any, report: ToolReport, spec: Any = None) -> None:
        status = report.status
        error_type = (report.error_kind or status) if status != "ok" else None
        if span is None:
            # A call that never ran (denied, skipped): its span opens and closes here.
            span = self.start_tool(report.name, report.call_id, report.arguments, spec)
        if span is not None:
            span.set_attribute("toolgen.tool.outcome", status)
            capture = self._capture and span.is_recording()
            if capture and status == "ok":
                # The conventions record a result only for a call that succeeded; a failure's text is the
                # status description instead.
                content = report.content
                text = content if isinstance(content, str) else _json(content)
                if text is not None:
                    span.set_attribute("gen_ai.tool.call.result", text)
            if error_type is not None:
                described = report.content if isinstance(report.content, str) else None
                self._failed(span, error_type, described if capture else None)
            span.end()
        if self._meter is None:
            return
        attributes = {"gen_ai.tool.name": report.name, "toolgen.tool.outcome": status}
        self._tool_calls.add(1, attributes)
        if error_type is not None:
            self._tool_errors.add(
                1, {"gen_ai.tool.name": report.name, "error.type": error_type}
            )
        if status in ("ok", "error"):
            self._tool_durations.record(report.seconds, attributes)

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
    """The telemetry of one run: the given providers, else the global ones; NO_TELEMETRY when there is none.

    Without opentelemetry-api a run is not traced, unless a provider was given: then the run was asked to be
    traced, and MissingExtra names the `otel` extra rather than dropping the spans in silence."""
    try:
        # By name, as clients/http.py imports httpx: the package imports and type-checks without it installed.
        trace = importlib.import_module("opentelemetry.trace")
        metrics = importlib.import_module("opentelemetry.metrics")
    except ImportError as error:
        named = missing_extra(
            error, "otel", "Tracing a run with tracer_provider= or meter_provider="
        )
        if named is None or (tracer_provider is None and meter_provider is None):
            return NO_TELEMETRY
        raise named from None
    tracer_provider = tracer_provider or trace.get_tracer_provider()
    meter_provider = meter_provider or metrics.get_meter_provider()
    # Before an SDK is set up the API's providers are proxies, and its proxy meter keeps every instrument made
    # through it: nothing would be recorded, and a long-lived process would grow with every run.
    tracing = None if _unset(tracer_provider) else tracer_provider
    metering = None if _unset(meter_provider) else meter_provider
    if tracing is None and metering is None:
        return NO_TELEMETRY
    request_model = getattr(model, "model", None)
    wire = getattr(model, "wire", None)
    return Telemetry(
        trace,
        tracing,
        metering,
        agent=agent,
        conversation_id=conversation_id,
        provider=provider_name(model),
        request_model=request_model if isinstance(request_model, str) else None,
        capture=capture_content(),
        wire=wire if isinstance(wire, str) else None,
        server=server_of(model),
    )
