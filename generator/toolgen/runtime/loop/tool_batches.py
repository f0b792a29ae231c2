# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A run's tool calls, a batch at a time: admitted under the limit, approved, started, answered in call order."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..tools.entry import ToolContext
from ..tools.outcomes import ToolOutcome
from .batch_call import BatchCall
from .policies import Approval, ApprovalRequest, json_text
from .progress import Report
from .results import CallReport, CallStatus
from .run_core import RunCore


class ToolBatches(RunCore):
    """The tool calls of a run: each batch the model asks for, from its admission to its tool messages."""

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
        self.hand_on_filed()  # a batch a failing hook left: what it filed comes before this one's
        batch: list[BatchCall] = []
        self.batch, self.handed = batch, 0
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
            entry.position = index
            batch.append(entry)
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
            outcome.notes,
        )
        return self._record(entry, report)

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
        return self._record(entry, report)

    def abandoned(self, entry: BatchCall, report: CallReport) -> CallReport:
        """File the report of a call the run stopped waiting for (a cancel or the deadline while it ran)."""
        return self._record(entry, report)

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

    def _record(self, entry: BatchCall, report: CallReport) -> CallReport:
        """File a call's report; its outcome is handed on once every earlier call of its batch has had its own.

        A call skipped or denied before the others run is filed first, yet handed on in its place: a batch's
        events are then in call order in run(), arun() and a served run alike."""
        held, refused = self.progress.close(entry)
        entry.held = held
        if refused is not None:
            report = replace(report, notes=(*report.notes, f"{entry.name}'s {refused}"))
        entry.report = report
        self.recorded[report.call_id] = report
        batch = self.batch
        if not (0 <= entry.position < len(batch) and batch[entry.position] is entry):
            self._hand_on(entry)  # a call of no batch
            return report
        while self.handed < len(batch) and batch[self.handed].report is not None:
            following = batch[self.handed]
            self.handed += 1
            if not following.handed_on:
                self._hand_on(following)
        return report

    def hand_on_filed(self) -> None:
        """Hand on, in call order, what the batch filed and has not handed on: for a batch left before its end."""
        for entry in self.batch[self.handed :]:
            if entry.report is not None and not entry.handed_on:
                self._hand_on(entry)
        self.handed = len(self.batch)

    def _hand_on(self, entry: BatchCall) -> None:
        report = entry.report
        assert report is not None  # only a filed call is handed on
        entry.handed_on = True
        if entry.held is not None:
            # The call's last word on its progress comes before its end.
            self._progress_event(entry, entry.held)
        for note in report.notes:
            self.emit_in(entry.span, "note", {"message": note, "setting": None})
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
