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
from typing import Any

from ..observe.telemetry import open_telemetry
from ..wires.canonical import ProviderError
from .batch_call import BatchCall
from .model_calls import ModelCalls
from .results import RunResult
from .tool_batches import ToolBatches

__all__ = ["RunState", "RunView"]


class RunState(ModelCalls, ToolBatches):
    """The state of one run, shared by the sync and async drivers: its fields and events (RunCore), its model calls
    (ModelCalls), its tool calls (ToolBatches), its start and its end.

    Methods queue events in `out`; the drivers hand them on after each action.
    """

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

    def should_stop(self) -> bool:
        if self.stop is None:
            interrupted = self.cancel_requested()
            if interrupted is not None:
                self.end(interrupted)
            elif self.step >= self.options.max_steps:
                self.end("max_steps")
        return self.stop is not None

    # -- the end --

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
        # A call of the batch not answered yet is answered as itself: in its place among the batch's outcomes.
        waiting: dict[str, BatchCall | None] = {
            entry.id: entry for entry in self.batch if entry.report is None
        }
        for call in self.pending_calls():
            # Leave no call unanswered, so that the conversation can be sent to a model again.
            call_id = str(call.get("id", ""))
            report = self.recorded.get(call_id)
            if report is None:
                name = str((call.get("function") or {}).get("name", ""))
                report = self.settle(
                    waiting.pop(call_id, None)
                    or BatchCall(call, call_id, name, "", None),
                    "skipped",
                    f"the run stopped ({stop})",
                    stop,
                )
            self.reports.append(report)
            self.messages.append(report.to_message())
        self.hand_on_filed()
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
