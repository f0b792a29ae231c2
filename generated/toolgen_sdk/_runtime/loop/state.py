# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The state of one run, without I/O: what the sync and async drivers share, everything except the waiting.

Each step calls the model once (streamed or whole), appends its assistant message, runs every tool call it made
(parallel calls concurrently, each under its tool's timeout, approvals first), and appends one tool message per
call in call order: the order every provider accepts. A run stops when the model answers without calling a tool
(`finished`), a returnDirect tool succeeds (`return_direct`: its result is the answer, no further model call), a
limit is reached (`max_steps`, `max_tool_calls`), the cancel token is set (`cancelled`), or the provider or a
callback fails (`error`). Tool failures and denied approvals never stop a run: they go back to the model as
tool messages it can act on. Whatever the stop, every tool call in the transcript is answered, so the messages
can be sent to a model again. The drivers make the calls (model, approver, hooks, handlers) and tell the state
what came back; the state decides what happens next and queues the events to hand on.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pydantic

from ..models.base import ToolSpec
from ..streams.events import Event, MessageEnd, ReasoningDelta, StreamError, TextDelta
from ..tools.registry import Registry, ToolContext, ToolOutcome
from ..wires.base import ProviderError, Request, Response, parts_of
from .events import EventType, RunEvent
from .options import RunOptions
from .policies import Approval, ApprovalRequest, BudgetInfo, Hooks, json_text
from .results import CallReport, CallStatus, RunMetrics, RunResult, StopReason


@dataclass
class BatchCall:
    """One tool call of the current batch."""

    call: dict[str, Any]
    id: str
    name: str
    arguments: str
    spec: ToolSpec | None
    report: CallReport | None = None


def plain_message(message: Any) -> dict[str, Any]:
    """A canonical message as a plain dict, from a dict or one of the generated models."""
    if isinstance(message, pydantic.BaseModel):
        data: dict[str, Any] = message.model_dump(
            mode="json", by_alias=False, exclude_none=True
        )
        return data
    return dict(message)


class RunState:
    """The state of one run, shared by the sync and async drivers.

    Methods queue events in `out`; the drivers hand them on after each action.
    """

    def __init__(
        self, messages: Sequence[Any], registry: Registry, options: RunOptions
    ) -> None:
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
        self.step = 0
        self.tool_calls = 0
        self.limit_hit = False
        self.stop: StopReason | None = None
        self.final: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.response: Response | ProviderError | None = None
        self.result: RunResult | None = None
        self._seq = 0
        self._last_input: int | None = None

    # -- events --

    def emit(self, kind: EventType, /, **data: Any) -> None:
        self._seq += 1
        self.out.append(RunEvent(kind, self.conversation_id, self._seq, data))

    def drain(self) -> list[RunEvent]:
        out, self.out = self.out, []
        return out

    # -- steps --

    def begin(self) -> None:
        self.emit("run_started", messages=len(self.messages))

    def cancel_requested(self) -> bool:
        cancel = self.options.cancel
        return cancel is not None and cancel.is_set()

    def should_stop(self) -> bool:
        if self.stop is None and self.cancel_requested():
            self.end("cancelled")
        elif self.stop is None and self.step >= self.options.max_steps:
            self.end("max_steps")
        return self.stop is not None

    def budget_info(self) -> BudgetInfo:
        return BudgetInfo(self.step + 1, dict(self.metrics.usage), self._last_input)

    def use_messages(self, messages: list[dict[str, Any]] | None) -> None:
        if messages is not None:
            self.messages = [plain_message(m) for m in messages]

    def request(self) -> Request:
        settings = dict(self.options.settings or {})
        return Request(
            list(self.messages),
            # Read each model call: tools added or removed mid-run are offered from the next call on.
            self.registry.definitions(),
            None,
            {"settings": settings} if settings else {},
        )

    def model_started(self) -> float:
        self.step += 1
        self.metrics.model_calls += 1
        self.emit("model_call_started", step=self.step)
        return time.perf_counter()

    def stream_event(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.emit("text_delta", text=event.text)
        elif isinstance(event, ReasoningDelta):
            self.emit("reasoning_delta", text=event.text)
        elif isinstance(event, StreamError):
            fields = {
                "message": event.message,
                "type": event.type,
                "code": event.code,
                "status": event.status,
            }
            self.emit("error", **fields, fatal=False)
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
            duration_ms=round(seconds * 1000, 3),
            finish_reason=finish,
            usage=usage,
        )
        if isinstance(response, ProviderError):
            self.fail(response)
            return []
        self.metrics.add_usage(usage)
        input_tokens = (usage or {}).get("input_tokens")
        self._last_input = (
            input_tokens if isinstance(input_tokens, int) else self._last_input
        )
        if finish == "error":
            self.fail(_stream_failure(response))
            return []
        message = {**response.message, "role": "assistant"}
        calls = [dict(call) for call in message.get("tool_calls") or ()]
        if calls:
            message["tool_calls"] = calls
        self.messages.append(message)
        if not calls:
            self.final = message
            self.end("finished")
        return calls

    # -- tool calls --

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
        for call in calls:
            function = call.get("function") or {}
            name = str(function.get("name", ""))
            arguments = function.get("arguments")
            text = (
                arguments if isinstance(arguments, str) else json_text(arguments or {})
            )
            spec = self.registry.entry(name).spec if name in self.registry else None
            entry = BatchCall(call, str(call.get("id", "")), name, text, spec)
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
            type="approval",
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
        """The calls to run now; after a cancel, none: each is answered as skipped instead."""
        waiting = [entry for entry in batch if entry.report is None]
        if waiting and self.cancel_requested():
            for entry in waiting:
                self.settle(
                    entry,
                    "skipped",
                    "the run was cancelled before this call ran",
                    "cancelled",
                )
            self.end("cancelled")
            return []
        return waiting

    def context(self) -> ToolContext:
        return ToolContext(
            conversation_id=self.conversation_id, values=self.options.values or {}
        )

    def started(self, entry: BatchCall) -> None:
        self.emit(
            "tool_call_started", id=entry.id, name=entry.name, arguments=entry.arguments
        )

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

    def _record(self, entry: BatchCall, report: CallReport) -> None:
        entry.report = report
        self.recorded[report.call_id] = report
        self.metrics.add_call(report)
        self.emit(
            "tool_call_finished",
            id=report.call_id,
            name=report.name,
            status=report.status,
            error_kind=report.error_kind,
            duration_ms=round(report.seconds * 1000, 3),
            content=report.content,
        )

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
        self.emit("error", **fields, fatal=True)
        self.error = self.error or error
        self.end("error")

    def finish(self) -> RunResult:
        if self.result is not None:
            return self.result
        stop = self.stop or "error"
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


def _stream_failure(response: Response) -> ProviderError:
    """A response whose stream broke off or carried an error, as the error to stop the run with.

    A stream cut inside a tool call says so first: that call's arguments never arrived whole, so no call of the
    answer runs, and the model is not asked to go on from half a message.
    """
    stream = response.extras.get("stream") or {}
    notes = [note for note in stream.get("errors") or () if isinstance(note, dict)]
    if stream.get("cut_calls"):
        notes = [note for note in notes if note.get("type") == "cut"] + notes
    first = notes[0] if notes else {}
    message = str(first.get("message") or "the model's response ended with an error")
    return ProviderError(
        "stream", message, type=first.get("type"), code=first.get("code"), raw=response
    )


class RunView:
    """What the event iterators of both drivers tell of their run: its id, and its result once it is over."""

    def __init__(self, run: RunState) -> None:
        self._run = run

    @property
    def conversation_id(self) -> str:
        return self._run.conversation_id

    @property
    def result(self) -> RunResult:
        if self._run.result is None:
            raise RuntimeError(
                "the run has not finished: iterate over its events first"
            )
        return self._run.result
