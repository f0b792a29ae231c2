# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The state of one run, without I/O: what the sync and async drivers share, everything except the waiting.

Each step calls the model once (streamed or whole), appends its assistant message, runs every tool call it made
(parallel calls concurrently, each under its tool's timeout, approvals first), and appends one tool message per
call in call order: the order every provider accepts. A run stops when the model answers without calling a tool
(`finished`), a returnDirect tool succeeds (`return_direct`: its result is the answer, no further model call), a
limit is reached (`max_steps`, `max_tool_calls`), the model's answer was cut at its token limit or withheld by a
content filter (`length`, `content_filter`), the cancel token is set (`cancelled`, or the token's own reason)
or the run's deadline passes (`deadline`: a tool call still running then gets a short grace and is answered as
not finished), or the provider or a callback fails (`error`); a model call that broke off, or that the provider refused as too long, may be made
again first (see recovery.py): a `length` or `content_filter` finish stops the run with that reason, none of
the answer's calls run. Tool failures and denied approvals never stop a run: they go back to the model as
tool messages it can act on. Whatever the stop, every tool call in the transcript is answered, so the messages
can be sent to a model again. The drivers make the calls (model, approver, hooks, handlers) and tell the state
what came back; the state decides what happens next and queues the events to hand on.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pydantic

from ..clients.base import request_notes
from ..models.base import ToolSpec
from ..observe.telemetry import NO_IDS, NO_TELEMETRY, NoTelemetry, open_telemetry
from ..streams.events import (
    Event,
    MessageEnd,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from ..tools.progress import ProgressSink
from ..tools.registry import Registry, ToolContext, ToolOutcome
from ..wires.canonical import ProviderError, Request, Response, parts_of
from ..wires.settings import checked_plan
from .events import EVENT_CLASSES, EventType, RunEvent
from .interrupts import Interrupt, InterruptReason
from .options import RunOptions
from .policies import Approval, ApprovalRequest, BudgetInfo, Hooks, json_text
from .progress import ProgressBoard, Report
from .recovery import (
    failure_kind,
    incomplete_message,
    is_context_overflow,
    partial_text,
    stream_failure,
)
from .results import CallReport, CallStatus, RunMetrics, RunResult, StopReason

_new_event = object.__new__
# The kinds made for every piece of a stream, with the defaults of the fields a piece may leave out.
_DELTAS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "text_delta": MappingProxyType({"type": "text_delta"}),
        "reasoning_delta": MappingProxyType({"type": "reasoning_delta"}),
        "tool_call_delta": MappingProxyType(
            {"type": "tool_call_delta", "id": None, "name": None, "arguments": ""}
        ),
    }
)


@dataclass
class BatchCall:
    """One tool call of the current batch."""

    call: dict[str, Any]
    id: str
    name: str
    arguments: str
    spec: ToolSpec | None
    report: CallReport | None = None
    announced: bool = False  # the stream said so already, with tool_call_started
    span: Any = None  # its execute_tool span while it runs
    progress: ProgressSink | None = None  # where its handler's reports go, once started


def plain_message(message: Any) -> dict[str, Any]:
    """A canonical message as a plain dict, from a dict or one of the generated models."""
    if isinstance(message, pydantic.BaseModel):
        data: dict[str, Any] = message.model_dump(
            mode="json", by_alias=False, exclude_none=True
        )
        return data
    return dict(message)


# Finishes that end the run with their own stop reason: the answer is what it is, and asking again would not help.
_CUT_SHORT: dict[str | None, StopReason] = {
    "length": "length",
    "content_filter": "content_filter",
}

__all__ = ["BatchCall", "RunState", "RunView", "plain_message"]


class RunState:
    """The state of one run, shared by the sync and async drivers: its fields, its model calls, its tool calls
    and its end.

    Methods queue events in `out`; the drivers hand them on after each action.
    """

    def __init__(
        self,
        messages: Sequence[Any],
        registry: Registry,
        options: RunOptions,
        wire: str | None = None,
    ) -> None:
        """`wire`: the model client's wire, which the settings are checked against (None: only the portable
        settings are sent); a setting it cannot carry raises UnsupportedSettings here, before any request,
        unless options.on_unsupported is "note"."""
        self.messages = [plain_message(m) for m in messages]
        self.registry = registry
        self.options = options
        self.hooks = options.hooks or Hooks()
        self.conversation_id = options.conversation_id or uuid.uuid4().hex
        self.metrics = RunMetrics()
        # Reports in call order as their tool messages are filed; `recorded` has them as soon as a call ends.
        self.reports: list[CallReport] = []
        self.recorded: dict[str, CallReport] = {}
        self.out: list[RunEvent] = []
        # The progress its calls in flight report, from any thread; only the loop's thread makes it events.
        self.progress: ProgressBoard[BatchCall] = ProgressBoard()
        # Whether anyone reads the events as they come: run() without on_event hands on none, so a tool call's
        # progress need not be handed on while it runs (the sync driver then runs a lone call on its own thread).
        self.live = True
        self.step = 0
        self.tool_calls = 0
        self.limit_hit = False
        self.stop: StopReason | None = None
        # The cancel token and the deadline; the deadline counts from begin().
        self.interrupt = Interrupt(options.cancel, options.deadline)
        self.final: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.response: Response | ProviderError | None = None
        self.result: RunResult | None = None
        self.telemetry: NoTelemetry = NO_TELEMETRY
        # The attempt at the current step's model call, and why it is to be made again (stream, overflow).
        self.attempt = 0
        self.retry: str | None = None
        self._retry_error: ProviderError | None = None
        self._overflow_retried = False
        self._chat: Any = None
        self._client_model: str | None = (
            None  # the model the client asks for, when it says
        )
        self._chat_started = 0.0
        # What the current model call's stream has shown so far: calls announced by index, text.
        self._announced: dict[int, tuple[str | None, str | None]] = {}
        self._streamed: list[str] = []
        # Notes the model client gave about the requests so far: each is reported once per run.
        self._noted: set[str] = set()
        self._seq = 0
        self._last_input: int | None = None
        self._definitions = registry.definitions()
        self._revision = registry.revision
        self.settings = checked_plan(
            options.settings, wire, self._definitions, options.on_unsupported
        )

    # -- events --

    def emit(self, kind: EventType, /, **data: Any) -> None:
        """Queue an event of the run, or of the model call in flight when there is one."""
        self.emit_in(self._chat, kind, data)

    def emit_in(self, span: Any, kind: EventType, data: dict[str, Any]) -> None:
        """An event of `span`'s (a model or tool call's; None: the run's), carrying its trace and span ids."""
        self._seq += 1
        telemetry = self.telemetry
        ids = telemetry.ids(span) if telemetry.enabled else NO_IDS
        if kind in _DELTAS:
            # A run makes one of these for every piece of a stream: filled in one call rather than field by field
            # through the frozen dataclass's __init__ (the same event; a test holds the two equal).
            event = _new_event(EVENT_CLASSES[kind])
            vars(event).update(
                _DELTAS[kind],
                conversation_id=self.conversation_id,
                seq=self._seq,
                time=time.time(),
                trace_id=ids[0],
                span_id=ids[1],
                **data,
            )
        else:
            event = EVENT_CLASSES[kind](
                conversation_id=self.conversation_id,
                seq=self._seq,
                time=time.time(),
                trace_id=ids[0],
                span_id=ids[1],
                **data,
            )
        self.out.append(event)  # type: ignore[arg-type]

    def drain(self) -> list[RunEvent]:
        out, self.out = self.out, []
        return out

    # -- steps --

    def begin(self, model: Any = None) -> None:
        options = self.options
        self.telemetry = open_telemetry(
            model,
            self.conversation_id,
            agent=options.agent_name,
            tracer_provider=options.tracer_provider,
            meter_provider=options.meter_provider,
        )
        self.interrupt.start()
        self.telemetry.start_run()
        self.emit("run_started", messages=len(self.messages))
        for problem in self.settings.problems:
            # Only with on_unsupported="note": otherwise the run never started.
            self.emit(
                "note",
                message=f"setting not sent: {problem.sentence()}",
                setting=problem.setting,
                wire=problem.wire,
            )
        # What the tools offered ask every run to tell (an MCP server's drift from its lock), once each.
        registry = self.registry
        told = {note for name in registry for note in registry.entry(name).spec.notes}
        for note in sorted(told):
            self.emit("note", message=note, setting=None, wire=None)

    def cancel_requested(self) -> InterruptReason | None:
        """The stop a set cancel token or a passed deadline asks for (`cancelled`, `deadline`); None until then."""
        return self.interrupt.reason()

    def should_stop(self) -> bool:
        if self.stop is None:
            interrupted = self.cancel_requested()
            if interrupted is not None:
                self.end(interrupted)
            elif self.step >= self.options.max_steps:
                self.end("max_steps")
        return self.stop is not None

    # -- the end --

    def end(self, reason: StopReason) -> None:
        if self.stop is None:
            self.stop = reason

    def fail(self, error: BaseException) -> None:
        fields: dict[str, Any] = {
            "message": str(error),
            "type": type(error).__name__,
            "code": None,
            "status": None,
        }
        if isinstance(error, ProviderError):
            fields = {
                "message": error.message,
                "type": error.type,
                "code": error.code,
                "status": error.status,
            }
        self.emit(
            "error",
            message=fields["message"],
            error_type=fields["type"],
            code=fields["code"],
            status=fields["status"],
            fatal=True,
        )
        self.error = self.error or error
        self.end("error")

    # -- model calls --

    def budget_info(self, overflow: bool = False) -> BudgetInfo:
        estimate = self.options.token_estimate
        return BudgetInfo(
            self.step if overflow else self.step + 1,
            dict(self.metrics.usage),
            self._last_input,
            None if estimate is None else estimate(list(self.messages)),
            overflow,
        )

    def use_messages(self, messages: list[dict[str, Any]] | None) -> bool:
        """Go on with the budget hook's conversation; whether it differs from the one there was."""
        if messages is None:
            return False
        trimmed = [plain_message(m) for m in messages]
        changed = trimmed != self.messages
        self.messages = trimmed
        return changed

    def request(self) -> Request:
        if self._revision != self.registry.revision:
            # Tools added or removed mid-run are offered from the next model call on.
            self._definitions = self.registry.definitions()
            self._revision = self.registry.revision
        # The settings as planned for the model's wire when the run began (wires/settings.py).
        return Request(
            list(self.messages), list(self._definitions), None, self.settings.extras()
        )

    def model_started(self, request: Request | None = None, model: Any = None) -> float:
        """Start a model call of `request` (None: the run's own) to `model`, whose notes about what the request
        loses on its wire (an image moved out of a tool result, reasoning dropped) become `note` events."""
        if self.retry is None:
            self.step += 1
            self.attempt = 0
            self._overflow_retried = False
        else:
            self.metrics.model_retries += 1
        self.retry = None
        self.attempt += 1
        self.metrics.model_calls += 1
        self._announced, self._streamed = {}, []
        sent = request or self.request()
        self._chat = self.telemetry.start_chat(sent, self.options.stream)
        self.emit("model_call_started", step=self.step, attempt=self.attempt)
        if model is not None:
            named = getattr(model, "model", None)
            self._client_model = named if isinstance(named, str) else None
            self._request_noted(model, sent)
        self._chat_started = time.perf_counter()
        return self._chat_started

    def _model_name(self, response: Response | ProviderError) -> str | None:
        """The model that answered: the response's name for it, else the one the client asked for."""
        named = getattr(response, "model", None)
        return named if isinstance(named, str) and named else self._client_model

    def _request_noted(self, model: Any, request: Request) -> None:
        """A `note` event per note the client gives about `request`, once per run: the conversation only grows, so
        the image moved at step 2 would be noted again at every later step."""
        wire = getattr(model, "wire", None)
        for note in request_notes(model, request):
            if note not in self._noted:
                self._noted.add(note)
                self.emit(
                    "note",
                    message=note,
                    setting=None,
                    wire=wire if isinstance(wire, str) else None,
                )

    @property
    def chat_span(self) -> Any:
        """The span of the model call in flight (None when tracing is off)."""
        return self._chat

    def stream_event(self, event: Event) -> None:
        if self._chat is not None:
            self.telemetry.first_chunk(self._chat)
        if isinstance(event, TextDelta):
            self._streamed.append(event.text)
            self.emit("text_delta", text=event.text)
        elif isinstance(event, ToolCallDelta):
            call_id, name = self._announced.get(event.index, (None, None))
            self.emit(
                "tool_call_delta",
                index=event.index,
                id=call_id,
                name=name,
                arguments=event.arguments,
            )
        elif isinstance(event, ToolCallStart):
            self._announced[event.index] = (event.id, event.name)
            self.emit(
                "tool_call_started",
                id=event.id,
                name=event.name,
                arguments=None,
                index=event.index,
            )
        elif isinstance(event, ReasoningDelta):
            self.emit("reasoning_delta", text=event.text)
        elif isinstance(event, StreamError):
            self.emit(
                "error",
                message=event.message,
                error_type=event.type,
                code=event.code,
                status=event.status,
                fatal=False,
            )
        elif isinstance(event, MessageEnd):
            self.response = event.response

    def whole_response(self, response: Response) -> None:
        """The deltas a stream would have sent, so that event consumers see the same thing either way."""
        for part in parts_of(response.message.get("content")):
            text = part.get("text")
            if (
                isinstance(text, str)
                and text
                and part.get("type") in ("text", "reasoning")
            ):
                self.emit(
                    "text_delta" if part["type"] == "text" else "reasoning_delta",
                    text=text,
                )

    def model_finished(self, started: float) -> list[dict[str, Any]]:
        """Record the model's answer; the tool calls to run next (none when the run ends here)."""
        seconds = time.perf_counter() - started
        self.metrics.model_seconds.append(seconds)
        response = self.response
        if response is None:
            response = ProviderError(
                "stream",
                "the stream ended without a final message",
                type="incomplete_stream",
            )
        usage = None if isinstance(response, ProviderError) else response.usage
        finish = (
            "error"
            if isinstance(response, ProviderError)
            else (response.finish or {}).get("reason")
        )
        self.emit(
            "model_call_finished",
            step=self.step,
            attempt=self.attempt,
            duration_ms=round(seconds * 1000, 3),
            finish_reason=finish,
            usage=usage,
            model=self._model_name(response),
        )
        error = (
            response
            if isinstance(response, ProviderError)
            else stream_failure(response)
            if finish == "error"
            else None
        )
        kind = failure_kind(response) if error is not None else None
        self.telemetry.end_chat(
            self._chat,
            seconds,
            response if isinstance(response, Response) else None,
            kind,
            None if error is None else error.message,
        )
        self._chat = None
        if isinstance(response, Response):
            self.metrics.add_usage(usage)
            input_tokens = (usage or {}).get("input_tokens")
            self._last_input = (
                input_tokens if isinstance(input_tokens, int) else self._last_input
            )
        if error is not None:
            self._close_announced(kind or "error")
            self._call_failed(error, kind or "error", response)
            return []
        assert isinstance(response, Response)
        message = {**response.message, "role": "assistant"}
        calls = [dict(call) for call in message.get("tool_calls") or ()]
        short = _CUT_SHORT.get(finish)
        if short is not None:
            # The calls of an answer cut at its token limit may be cut themselves: none of them runs.
            self._close_announced(short)
            message.pop("tool_calls", None)
            if parts_of(message.get("content")):
                self.messages.append(message)
                self.final = message
            self.end(short)
            return []
        if calls:
            message["tool_calls"] = calls
        self.messages.append(message)
        if not calls:
            self.final = message
            self.end("finished")
        return calls

    def _call_failed(
        self,
        error: ProviderError,
        kind: str,
        response: Response | ProviderError | None,
    ) -> None:
        """Ask again if the policy says so, or trim after a context-length error; else stop, keeping the text."""
        retry = self.options.stream_retry
        if retry is not None and retry.retries(kind, self.attempt):
            self.retry = "stream"
        elif (
            isinstance(response, ProviderError)
            and self.options.budget is not None
            and not self._overflow_retried
            and is_context_overflow(response)
        ):
            self._overflow_retried = True
            self.retry = "overflow"
            self._retry_error = response
        if self.retry is not None:
            self.emit(
                "error",
                message=error.message,
                error_type=kind,
                code=error.code,
                status=error.status,
                fatal=False,
                retry=self.attempt + 1,
            )
            return
        text = partial_text(response, "".join(self._streamed))
        if text:
            self.messages.append(incomplete_message(text, kind))
        self.fail(error)

    def give_up(self) -> None:
        """The budget hook could not shorten the conversation the provider refused: stop with the refusal."""
        self.retry = None
        error = self._retry_error or ProviderError("loop", "the model call failed")
        self.fail(error)

    def _close_announced(self, kind: str) -> None:
        """Calls the stream announced that will never run: each gets its tool_call_finished, as skipped."""
        for call_id, name in self._announced.values():
            self.emit(
                "tool_call_finished",
                id=call_id,
                name=name,
                status="skipped",
                error_kind=kind,
                duration_ms=0.0,
                content=None,
            )
        self._announced = {}

    def pending_calls(self) -> list[dict[str, Any]]:
        """Calls of the conversation's last assistant message that no tool message answers yet (a resumed run)."""
        answered = set()
        for message in reversed(self.messages):
            if message.get("role") == "tool":
                answered.add(message.get("tool_call_id"))
            elif message.get("role") == "assistant":
                calls = message.get("tool_calls") or ()
                return [dict(c) for c in calls if c.get("id") not in answered]
            else:
                return []
        return []

    def admit(self, calls: list[dict[str, Any]]) -> list[BatchCall]:
        """The batch as BatchCalls; calls past max_tool_calls are skipped, and the run stops after this batch."""
        batch = []
        announced = self._announced
        self._announced = {}
        for index, call in enumerate(calls):
            function = call.get("function") or {}
            name = str(function.get("name", ""))
            arguments = function.get("arguments")
            text = (
                arguments if isinstance(arguments, str) else json_text(arguments or {})
            )
            spec = self.registry.entry(name).spec if name in self.registry else None
            entry = BatchCall(call, str(call.get("id", "")), name, text, spec)
            entry.announced = index in announced
            if self.tool_calls >= self.options.max_tool_calls:
                self.limit_hit = True
                limit = self.options.max_tool_calls
                self.settle(
                    entry,
                    "skipped",
                    f"the run reached its limit of {limit} tool calls",
                    "limit",
                )
            else:
                self.tool_calls += 1
            batch.append(entry)
        return batch

    def approval_request(self, entry: BatchCall) -> ApprovalRequest | None:
        if (
            entry.report is not None
            or entry.spec is None
            or not entry.spec.requires_approval
        ):
            return None
        self.emit(
            "approval_requested",
            id=entry.id,
            name=entry.name,
            arguments=entry.arguments,
        )
        return ApprovalRequest(
            self.conversation_id, entry.id, entry.name, entry.arguments, entry.spec
        )

    def decide(self, entry: BatchCall, answer: Approval | bool) -> None:
        decision = (
            answer
            if isinstance(answer, Approval)
            else Approval.approve()
            if answer
            else Approval.deny()
        )
        if decision.decision == "edit" and decision.arguments is not None:
            self._edit(entry, decision.arguments)
        self.emit(
            "approval_decided",
            id=entry.id,
            name=entry.name,
            decision=decision.decision,
            reason=decision.reason,
            arguments=entry.arguments,
        )
        if decision.decision == "deny":
            self.settle(
                entry,
                "denied",
                f"the call was denied: {decision.reason or 'no reason given'}",
                "denied",
            )

    def approval_failed(self, entry: BatchCall, error: Exception) -> None:
        """An approver that raises denies: a handler that needs approval never runs without it."""
        self.emit(
            "error",
            message=f"approval failed: {type(error).__name__}: {error}",
            error_type="approval",
            fatal=False,
        )
        self.decide(
            entry,
            Approval.deny(f"approval could not be obtained ({type(error).__name__})"),
        )

    def _edit(self, entry: BatchCall, arguments: str) -> None:
        """Run with the edited arguments, and let the transcript say so: the model sees what actually ran."""
        entry.arguments = arguments
        entry.call = {
            **entry.call,
            "function": {**(entry.call.get("function") or {}), "arguments": arguments},
        }
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                message["tool_calls"] = [
                    entry.call if call.get("id") == entry.id else call
                    for call in message.get("tool_calls") or ()
                ]
                return

    def runnable(self, batch: list[BatchCall]) -> list[BatchCall]:
        """The calls to run now; after a cancel or past the deadline, none: each is answered as skipped instead."""
        waiting = [entry for entry in batch if entry.report is None]
        interrupted = self.cancel_requested() if waiting else None
        if interrupted is not None:
            what = (
                "reached its deadline" if interrupted == "deadline" else "was cancelled"
            )
            for entry in waiting:
                self.settle(
                    entry,
                    "skipped",
                    f"the run {what} before this call ran",
                    interrupted,
                )
            self.end(interrupted)
            return []
        return waiting

    def context(self, entry: BatchCall | None = None) -> ToolContext:
        """The context of the run's calls; with `entry` (a call started), the one its handler reports progress to,
        approved: a call starts only once its approval (if its tool requires one) was asked and given."""
        return ToolContext(
            conversation_id=self.conversation_id,
            values=self.options.values or {},
            on_progress=None if entry is None else entry.progress,
            approved=entry is not None,
        )

    def started(self, entry: BatchCall) -> None:
        entry.span = self.telemetry.start_tool(
            entry.name, entry.id, entry.arguments, entry.spec
        )
        entry.progress = self.progress.open(entry)
        if not entry.announced:
            data = {"id": entry.id, "name": entry.name, "arguments": entry.arguments}
            self.emit_in(entry.span, "tool_call_started", data)

    def finished(
        self, entry: BatchCall, outcome: ToolOutcome, seconds: float
    ) -> CallReport:
        status: CallStatus = "error" if outcome.is_error else "ok"
        kind = outcome.error.kind if outcome.error is not None else None
        report = CallReport(
            entry.id,
            entry.name,
            entry.arguments,
            status,
            outcome.content,
            seconds,
            kind,
            outcome.result,
        )
        self._record(entry, report)
        return report

    def settle(
        self, entry: BatchCall, status: CallStatus, reason: str, kind: str
    ) -> CallReport:
        """Answer a call that does not run."""
        report = CallReport(
            entry.id,
            entry.name,
            entry.arguments,
            status,
            f"Error: not run: {reason}",
            0.0,
            kind,
        )
        self._record(entry, report)
        return report

    def abandoned(self, entry: BatchCall, report: CallReport) -> None:
        """File the report of a call the run stopped waiting for (a cancel or the deadline while it ran)."""
        self._record(entry, report)

    def progress_events(self) -> float | None:
        """Queue the progress events due now; the seconds until the next one is due (None: no report waits)."""
        due, wait = self.progress.take()
        for entry, report in due:
            self._progress_event(entry, report)
        return wait

    def _progress_event(self, entry: BatchCall, report: Report) -> None:
        progress, total, message = report
        data = {
            "id": entry.id,
            "name": entry.name,
            "progress": progress,
            "total": total,
            "message": message,
        }
        self.emit_in(entry.span, "tool_call_progress", data)

    def _record(self, entry: BatchCall, report: CallReport) -> None:
        held = self.progress.close(entry)
        if held is not None:
            # The call's last word on its progress comes before its end.
            self._progress_event(entry, held)
        entry.report = report
        self.recorded[report.call_id] = report
        self.metrics.add_call(report)
        data = {
            "id": report.call_id,
            "name": report.name,
            "status": report.status,
            "error_kind": report.error_kind,
            "duration_ms": round(report.seconds * 1000, 3),
            "content": report.content,
        }
        self.emit_in(entry.span, "tool_call_finished", data)
        self.telemetry.end_tool(entry.span, report, entry.spec)
        entry.span = None

    def close_batch(self, batch: list[BatchCall]) -> None:
        """Tool messages in call order; then the stop a returnDirect result or the call limit asks for."""
        direct = []
        for entry in batch:
            if entry.report is None:
                continue  # a cancelled run: finish() answers it
            self.reports.append(entry.report)
            self.messages.append(entry.report.to_message())
            if (
                entry.report.status == "ok"
                and entry.spec is not None
                and entry.spec.return_direct
            ):
                direct.append(entry.report.content)
        if direct and self.stop is None:
            self.final = {"role": "assistant", "content": _direct_content(direct)}
            self.messages.append(self.final)
            self.end("return_direct")
        elif self.limit_hit and self.stop is None:
            self.end("max_tool_calls")

    def finish(self) -> RunResult:
        if self.result is not None:
            return self.result
        self.progress.close_all()
        stop = self.stop or "error"
        self._close_announced(
            stop
        )  # calls a stream announced before a cancel: they will not run
        if self._chat is not None:
            # A model call left in flight (a cancel mid-stream): its span ends with the run.
            seconds = time.perf_counter() - self._chat_started
            self.telemetry.end_chat(self._chat, seconds, None, stop, None)
            self._chat = None
        for call in self.pending_calls():
            # Leave no call unanswered, so that the conversation can be sent to a model again.
            call_id = str(call.get("id", ""))
            report = self.recorded.get(call_id)
            if report is None:
                name = str((call.get("function") or {}).get("name", ""))
                report = self.settle(
                    BatchCall(call, call_id, name, "", None),
                    "skipped",
                    f"the run stopped ({stop})",
                    stop,
                )
            self.reports.append(report)
            self.messages.append(report.to_message())
        final = self.final or next(
            (m for m in reversed(self.messages) if m.get("role") == "assistant"), None
        )
        if stop in ("finished", "return_direct") and final is not None:
            self.emit("final_message", message=final, stop_reason=stop)
        self.emit(
            "run_finished",
            stop_reason=stop,
            steps=self.step,
            metrics=self.metrics.to_json(),
        )
        error = self.error
        error_type = (
            (error.type or error.code or "provider_error")
            if isinstance(error, ProviderError)
            else type(error).__name__
            if error is not None
            else None
        )
        self.telemetry.end_run(stop, error_type, self.metrics.usage)
        self.result = RunResult(
            final,
            self.messages,
            stop,
            self.metrics,
            self.conversation_id,
            self.step,
            tuple(self.reports),
            self.error,
        )
        return self.result


def _direct_content(contents: list[str | list[Any]]) -> str | list[Any]:
    if len(contents) == 1:
        return contents[0]
    if all(isinstance(c, str) for c in contents):
        return "\n".join(str(c) for c in contents)
    return [
        part
        for c in contents
        for part in (c if isinstance(c, list) else [{"type": "text", "text": c}])
    ]


class RunView:
    """What the event iterators of both drivers tell of their run: its id, and its result once it is over."""

    def __init__(self, run: RunState) -> None:
        self._run = run

    @property
    def conversation_id(self) -> str:
        return self._run.conversation_id

    def messages(self) -> list[dict[str, Any]]:
        """The conversation as it stands now (a copy): what the run has added so far included."""
        return list(self._run.messages)

    @property
    def result(self) -> RunResult:
        if self._run.result is None:
            raise RuntimeError(
                "the run has not finished: iterate over its events first"
            )
        return self._run.result
