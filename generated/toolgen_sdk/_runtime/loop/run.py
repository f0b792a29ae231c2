# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The agent loop: call the model, run the tools it asks for, send the results back, until it stops.

Each step calls the model once (streamed or whole), appends its assistant message, runs every tool call it made
(parallel calls concurrently, each under its tool's timeout, approvals first), and appends one tool message per
call in call order: the order every provider accepts. A run stops when the model answers without calling a tool
(`finished`), a returnDirect tool succeeds (`return_direct`: its result is the answer, no further model call), a
limit is reached (`max_steps`, `max_tool_calls`), the cancel token is set (`cancelled`), or the provider or a
callback fails (`error`). Tool failures and denied approvals never stop a run: they go back to the model as
tool messages it can act on. Whatever the stop, every tool call in the transcript is answered, so the messages
can be sent to a model again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import time
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import pydantic

from ..clients.base import ModelClient
from ..models.base import ToolSpec
from ..streams.events import Event, MessageEnd, ReasoningDelta, StreamError, TextDelta
from ..tools.registry import Registry, ToolContext, ToolOutcome
from ..wires.base import ProviderError, Request, Response, parts_of
from .events import EventType, RunEvent

StopReason = Literal[
    "finished", "return_direct", "max_steps", "max_tool_calls", "cancelled", "error"
]
CallStatus = Literal["ok", "error", "denied", "skipped"]
# More threads than this for one batch of parallel calls would only queue on the GIL and the providers' limits.
_MAX_WORKERS = 16


class CancelToken(Protocol):
    """Anything with is_set(): threading.Event, asyncio.Event, or your own flag."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class ApprovalRequest:
    """A call to a tool that requires approval, before its handler runs."""

    conversation_id: str
    call_id: str
    name: str
    arguments: str
    tool: ToolSpec


@dataclass(frozen=True)
class Approval:
    """The answer to an ApprovalRequest: approve, deny (with a reason the model reads), or edit the arguments."""

    decision: Literal["approve", "deny", "edit"]
    reason: str | None = None
    arguments: str | None = None

    @classmethod
    def approve(cls) -> Approval:
        return cls("approve")

    @classmethod
    def deny(cls, reason: str = "the user denied this call") -> Approval:
        return cls("deny", reason)

    @classmethod
    def edit(
        cls, arguments: str | Mapping[str, Any], reason: str | None = None
    ) -> Approval:
        text = arguments if isinstance(arguments, str) else _json(dict(arguments))
        return cls("edit", reason, text)


Approver = Callable[[ApprovalRequest], "Approval | bool | Awaitable[Approval | bool]"]
Conversation = list[dict[str, Any]]


@dataclass(frozen=True)
class BudgetInfo:
    """What a budget hook knows before a model call: the step about to run and the tokens used so far."""

    step: int
    usage: Mapping[str, int]
    last_input_tokens: int | None


# Called before every model call with the conversation; returns the conversation to use from then on (trimmed or
# with old turns summarized), or None to leave it as it is. Async in arun() if you like.
Budget = Callable[
    [Conversation, BudgetInfo], "Conversation | None | Awaitable[Conversation | None]"
]


def keep_last_turns(turns: int, *, above_input_tokens: int | None = None) -> Budget:
    """A budget hook keeping the system messages and the last `turns` user turns (a user message and what follows
    it), once the previous call's input passed `above_input_tokens` (always, when None). A turn is never cut in
    half, so every tool result keeps its call."""

    def trim(
        messages: list[dict[str, Any]], info: BudgetInfo
    ) -> list[dict[str, Any]] | None:
        if (
            above_input_tokens is not None
            and (info.last_input_tokens or 0) <= above_input_tokens
        ):
            return None
        starts = [
            i for i, message in enumerate(messages) if message.get("role") == "user"
        ]
        if len(starts) <= turns:
            return None
        cut = starts[-turns] if turns > 0 else len(messages)
        system = [m for m in messages[:cut] if m.get("role") == "system"]
        return system + messages[cut:]

    return trim


@dataclass(frozen=True)
class Hooks:
    """Callbacks around every model call and tool call; in arun() each may be async.

    before_model may return a replacement Request (another system prompt, other settings); None keeps it.
    """

    before_model: Callable[[int, Request], Any] | None = None
    after_model: Callable[[int, Response], Any] | None = None
    before_tool: Callable[[dict[str, Any], ToolContext], Any] | None = None
    after_tool: Callable[[CallReport], Any] | None = None


@dataclass(frozen=True)
class CallReport:
    """What became of one tool call: ok, error (the tool failed), denied (approval), or skipped (a limit or a stop)."""

    call_id: str
    name: str
    arguments: str
    status: CallStatus
    content: str | list[Any]
    seconds: float = 0.0
    error_kind: str | None = None
    result: Any = None

    def to_message(self) -> dict[str, Any]:
        """The canonical tool message answering the call."""
        message: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": self.call_id,
            "name": self.name,
        }
        message["content"] = self.content
        if self.status != "ok":
            message["is_error"] = True
        return message


@dataclass
class ToolStats:
    """Calls of one tool: how many ran, how they ended, how long they took."""

    calls: int = 0
    ok: int = 0
    errors: int = 0
    denied: int = 0
    skipped: int = 0
    seconds: float = 0.0
    max_seconds: float = 0.0

    @property
    def success_rate(self) -> float | None:
        """Share of the calls that ran which succeeded; None before any ran."""
        return self.ok / self.calls if self.calls else None

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "ok": self.ok,
            "errors": self.errors,
            "denied": self.denied,
            "skipped": self.skipped,
            "success_rate": self.success_rate,
            "seconds": round(self.seconds, 6),
            "max_seconds": round(self.max_seconds, 6),
        }


@dataclass
class RunMetrics:
    """Model calls and their durations, token usage summed over the run, and statistics per tool."""

    model_calls: int = 0
    model_seconds: list[float] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    tools: dict[str, ToolStats] = field(default_factory=dict)

    @property
    def tool_calls(self) -> int:
        return sum(stats.calls for stats in self.tools.values())

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        for key, value in (usage or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value

    def add_call(self, report: CallReport) -> None:
        stats = self.tools.setdefault(report.name, ToolStats())
        if report.status in ("ok", "error"):
            stats.calls += 1
            stats.seconds += report.seconds
            stats.max_seconds = max(stats.max_seconds, report.seconds)
        if report.status == "ok":
            stats.ok += 1
        elif report.status == "error":
            stats.errors += 1
        elif report.status == "denied":
            stats.denied += 1
        else:
            stats.skipped += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "model_calls": self.model_calls,
            "model_seconds": [round(s, 6) for s in self.model_seconds],
            "tool_calls": self.tool_calls,
            "usage": dict(self.usage),
            "tools": {
                name: stats.to_json() for name, stats in sorted(self.tools.items())
            },
        }


@dataclass(frozen=True)
class RunResult:
    """How a run ended: the answer, the whole conversation, why it stopped, every tool call, and the metrics.

    `final` is the answer when the run finished (the model's last message) or hit returnDirect (the tool's
    result as an assistant message); after another stop it is the last assistant message, if any.
    """

    final: dict[str, Any] | None
    messages: list[dict[str, Any]]
    stop_reason: StopReason
    metrics: RunMetrics
    conversation_id: str
    steps: int
    calls: tuple[CallReport, ...] = ()
    error: BaseException | None = None

    @property
    def text(self) -> str | None:
        """The text of the final message, parts joined; None when there is none."""
        if self.final is None:
            return None
        texts = [
            p["text"]
            for p in parts_of(self.final.get("content"))
            if p.get("type") == "text" and "text" in p
        ]
        return "".join(str(t) for t in texts) if texts else None


@dataclass(frozen=True)
class _Options:
    stream: bool
    max_steps: int
    max_tool_calls: int
    budget: Budget | None
    approve: Approver | None
    hooks: Hooks
    cancel: CancelToken | None
    settings: Mapping[str, Any]
    values: Mapping[str, Any]


@dataclass
class _Call:
    """One tool call of the current batch."""

    call: dict[str, Any]
    id: str
    name: str
    arguments: str
    spec: ToolSpec | None
    report: CallReport | None = None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _plain(message: Any) -> dict[str, Any]:
    """A canonical message as a plain dict, from a dict or one of the generated models."""
    if isinstance(message, pydantic.BaseModel):
        data: dict[str, Any] = message.model_dump(
            mode="json", by_alias=False, exclude_none=True
        )
        return data
    return dict(message)


class _Run:
    """The state of one run, shared by the sync and async drivers: everything except the waiting.

    Methods queue events in `out`; the drivers hand them on after each action.
    """

    def __init__(
        self,
        messages: Sequence[Any],
        registry: Registry,
        options: _Options,
        conversation_id: str | None,
    ) -> None:
        self.messages = [_plain(m) for m in messages]
        self.registry = registry
        self.options = options
        self.conversation_id = conversation_id or uuid.uuid4().hex
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
        self._definitions = [
            registry.entry(name).spec.definition() for name in registry
        ]

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
            self.messages = [_plain(m) for m in messages]

    def request(self) -> Request:
        settings = dict(self.options.settings)
        return Request(
            list(self.messages),
            list(self._definitions),
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

    def admit(self, calls: list[dict[str, Any]]) -> list[_Call]:
        """The batch as _Calls; calls past max_tool_calls are skipped, and the run stops after this batch."""
        batch = []
        for call in calls:
            function = call.get("function") or {}
            name = str(function.get("name", ""))
            arguments = function.get("arguments")
            text = arguments if isinstance(arguments, str) else _json(arguments or {})
            spec = self.registry.entry(name).spec if name in self.registry else None
            entry = _Call(call, str(call.get("id", "")), name, text, spec)
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

    def approval_request(self, entry: _Call) -> ApprovalRequest | None:
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

    def decide(self, entry: _Call, answer: Approval | bool) -> None:
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

    def approval_failed(self, entry: _Call, error: Exception) -> None:
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

    def _edit(self, entry: _Call, arguments: str) -> None:
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

    def runnable(self, batch: list[_Call]) -> list[_Call]:
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
            conversation_id=self.conversation_id, values=self.options.values
        )

    def started(self, entry: _Call) -> None:
        self.emit(
            "tool_call_started", id=entry.id, name=entry.name, arguments=entry.arguments
        )

    def finished(
        self, entry: _Call, outcome: ToolOutcome, seconds: float
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
        self, entry: _Call, status: CallStatus, reason: str, kind: str
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

    def _record(self, entry: _Call, report: CallReport) -> None:
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

    def close_batch(self, batch: list[_Call]) -> None:
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
                    _Call(call, call_id, name, "", None),
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
    """A response whose stream broke off or carried an error, as the error to stop the run with."""
    notes = (response.extras.get("stream") or {}).get("errors") or []
    first = notes[0] if notes and isinstance(notes[0], dict) else {}
    message = str(first.get("message") or "the model's response ended with an error")
    return ProviderError(
        "stream", message, type=first.get("type"), code=first.get("code"), raw=response
    )


# ---- the sync driver ----


def _call_model(model: ModelClient, request: Request, run: _Run) -> Iterator[RunEvent]:
    """Events of one model call; the answer ends up in run.response (None after a cancel mid-stream)."""
    run.response = None
    try:
        if not run.options.stream:
            run.response = model.complete(request)
            run.whole_response(run.response)
            return
        events = model.stream(request)
        try:
            for event in events:
                run.stream_event(event)
                yield from run.drain()
                if run.cancel_requested():
                    run.end("cancelled")
                    return
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
    except ProviderError as error:
        run.response = error


def _sync(value: Any, what: str) -> Any:
    """A callback's result in run(); an async callback is a mistake there, said plainly."""
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if callable(close):
            close()  # no "coroutine was never awaited" warning on top of the error
        raise TypeError(f"{what} is async: use arun()")
    return value


def _decide(approve: Approver | None, request: ApprovalRequest) -> Approval | bool:
    if approve is None:
        return Approval.deny("this tool needs approval and no approver is configured")
    answer: Approval | bool = _sync(approve(request), "the approver")
    return answer


def _timed(
    registry: Registry, entry: _Call, context: ToolContext
) -> tuple[ToolOutcome, float]:
    started = time.perf_counter()
    outcome = registry.dispatch(entry.call, context)
    return outcome, time.perf_counter() - started


def _dispatch(
    run: _Run, entries: list[_Call]
) -> Iterator[tuple[_Call, ToolOutcome, float]]:
    """Run the calls, concurrently when there are several; each as it completes."""
    context = run.context()
    if not entries:
        return
    if len(entries) == 1:
        yield (entries[0], *_timed(run.registry, entries[0], context))
        return
    with concurrent.futures.ThreadPoolExecutor(
        max_workers=min(len(entries), _MAX_WORKERS)
    ) as pool:
        futures = {
            pool.submit(_timed, run.registry, entry, context): entry
            for entry in entries
        }
        for future in concurrent.futures.as_completed(futures):
            yield (futures[future], *future.result())


def _tool_batch(run: _Run, calls: list[dict[str, Any]]) -> Iterator[RunEvent]:
    hooks = run.options.hooks
    batch = run.admit(calls)
    for entry in batch:
        request = run.approval_request(entry)
        if request is not None:
            yield from run.drain()
            try:
                run.decide(entry, _decide(run.options.approve, request))
            except Exception as error:  # noqa: BLE001 - fail closed: the call is denied, the model is told
                run.approval_failed(entry, error)
    entries = run.runnable(batch)
    for entry in entries:
        if hooks.before_tool is not None:
            _sync(hooks.before_tool(entry.call, run.context()), "the before_tool hook")
        run.started(entry)
    yield from run.drain()
    for entry, outcome, seconds in _dispatch(run, entries):
        report = run.finished(entry, outcome, seconds)
        if hooks.after_tool is not None:
            _sync(hooks.after_tool(report), "the after_tool hook")
        yield from run.drain()
    run.close_batch(batch)
    yield from run.drain()


def _step(model: ModelClient, run: _Run) -> Iterator[RunEvent]:
    options, hooks = run.options, run.options.hooks
    if options.budget is not None:
        run.use_messages(
            _sync(
                options.budget(list(run.messages), run.budget_info()), "the budget hook"
            )
        )
    request = run.request()
    if hooks.before_model is not None:
        request = (
            _sync(hooks.before_model(run.step + 1, request), "the before_model hook")
            or request
        )
    started = run.model_started()
    yield from run.drain()
    yield from _call_model(model, request, run)
    if run.stop is not None:
        return
    calls = run.model_finished(started)
    if (
        hooks.after_model is not None
        and isinstance(run.response, Response)
        and run.stop != "error"
    ):
        _sync(hooks.after_model(run.step, run.response), "the after_model hook")
    yield from run.drain()
    if calls:
        yield from _tool_batch(run, calls)


def _drive(model: ModelClient, run: _Run) -> Generator[RunEvent, None, RunResult]:
    run.begin()
    yield from run.drain()
    try:
        pending = run.pending_calls()
        if pending:
            yield from _tool_batch(run, pending)
        while not run.should_stop():
            yield from _step(model, run)
    except Exception as error:  # noqa: BLE001 - a failing hook or client ends the run with the error, not a crash
        run.fail(error)
    result = run.finish()
    yield from run.drain()
    return result


class RunEvents:
    """A run as an iterator of its events; iterating drives it. `result` once the iteration is over."""

    def __init__(self, model: ModelClient, run: _Run) -> None:
        self._run = run
        self._events = _drive(model, run)

    def __iter__(self) -> Iterator[RunEvent]:
        return self._events

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


def _options(
    *,
    stream: bool,
    max_steps: int,
    max_tool_calls: int,
    budget: Budget | None,
    approve: Approver | None,
    hooks: Hooks | None,
    cancel: CancelToken | None,
    settings: Mapping[str, Any] | None,
    values: Mapping[str, Any] | None,
) -> _Options:
    if max_steps < 1 or max_tool_calls < 0:
        raise ValueError("max_steps must be at least 1 and max_tool_calls at least 0")
    return _Options(
        stream,
        max_steps,
        max_tool_calls,
        budget,
        approve,
        hooks or Hooks(),
        cancel,
        settings or {},
        values or {},
    )


def run_events(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    *,
    conversation_id: str | None = None,
    stream: bool = False,
    max_steps: int = 10,
    max_tool_calls: int = 50,
    budget: Budget | None = None,
    approve: Approver | None = None,
    hooks: Hooks | None = None,
    cancel: CancelToken | None = None,
    settings: Mapping[str, Any] | None = None,
    values: Mapping[str, Any] | None = None,
) -> RunEvents:
    """The run of run(), as events to iterate (for an SSE response); `.result` afterwards."""
    options = _options(
        stream=stream,
        max_steps=max_steps,
        max_tool_calls=max_tool_calls,
        budget=budget,
        approve=approve,
        hooks=hooks,
        cancel=cancel,
        settings=settings,
        values=values,
    )
    return RunEvents(model, _Run(messages, registry, options, conversation_id))


def run(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    *,
    conversation_id: str | None = None,
    stream: bool = False,
    max_steps: int = 10,
    max_tool_calls: int = 50,
    budget: Budget | None = None,
    approve: Approver | None = None,
    hooks: Hooks | None = None,
    on_event: Callable[[RunEvent], Any] | None = None,
    cancel: CancelToken | None = None,
    settings: Mapping[str, Any] | None = None,
    values: Mapping[str, Any] | None = None,
) -> RunResult:
    """Run the conversation `messages` (dicts or models) with `model` and the tools of `registry` until it stops.

    stream: call the model streaming (text deltas reach on_event as they come). max_steps: model calls at most.
    max_tool_calls: tool calls at most over the run. budget: trims the conversation before each model call.
    approve: decides calls to tools that require approval (none configured: denied). cancel: checked between
    steps and stream events. settings: generation settings for every request (max_tokens, temperature, ...).
    values: handed to every handler in ToolContext.values. Never raises for a provider or tool failure.
    """
    events = run_events(
        messages,
        model,
        registry,
        conversation_id=conversation_id,
        stream=stream,
        max_steps=max_steps,
        max_tool_calls=max_tool_calls,
        budget=budget,
        approve=approve,
        hooks=hooks,
        cancel=cancel,
        settings=settings,
        values=values,
    )
    for event in events:
        if on_event is not None:
            on_event(event)
    return events.result


# ---- the async driver ----

_CANCELLED: Any = object()


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _cancel_wait(cancel: CancelToken) -> None:
    wait = getattr(cancel, "wait", None)
    if wait is not None and inspect.iscoroutinefunction(wait):
        await wait()
        return
    while (
        not cancel.is_set()
    ):  # a threading.Event or a flag: polled, since waiting on it would block the loop
        await asyncio.sleep(0.02)


async def _until_cancelled(
    awaitable: Awaitable[Any], cancel: CancelToken | None
) -> Any:
    """The awaitable's result, or _CANCELLED when the token is set first (the awaitable is then cancelled)."""
    if cancel is None:
        return await awaitable
    work = asyncio.ensure_future(awaitable)
    watch = asyncio.ensure_future(_cancel_wait(cancel))
    try:
        done, _ = await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not work.done():
            work.cancel()
    return work.result() if work in done else _CANCELLED


async def _acall_model(
    model: ModelClient, request: Request, run: _Run
) -> AsyncIterator[RunEvent]:
    run.response = None
    try:
        if not run.options.stream:
            response = await _until_cancelled(
                model.acomplete(request), run.options.cancel
            )
            if response is _CANCELLED:
                run.end("cancelled")
                return
            run.response = response
            run.whole_response(response)
            return
        events = model.astream(request)
        try:
            async for event in events:
                run.stream_event(event)
                for out in run.drain():
                    yield out
                if run.cancel_requested():
                    run.end("cancelled")
                    return
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
    except ProviderError as error:
        run.response = error


async def _adecide(
    approve: Approver | None, request: ApprovalRequest
) -> Approval | bool:
    if approve is None:
        return Approval.deny("this tool needs approval and no approver is configured")
    answer: Approval | bool = await _maybe(approve(request))
    return answer


async def _atimed(
    registry: Registry, entry: _Call, context: ToolContext
) -> tuple[_Call, ToolOutcome, float]:
    started = time.perf_counter()
    outcome = await registry.adispatch(entry.call, context)
    return entry, outcome, time.perf_counter() - started


async def _atool_batch(
    run: _Run, calls: list[dict[str, Any]]
) -> AsyncIterator[RunEvent]:
    hooks = run.options.hooks
    batch = run.admit(calls)
    for entry in batch:
        request = run.approval_request(entry)
        if request is not None:
            for out in run.drain():
                yield out
            try:
                run.decide(entry, await _adecide(run.options.approve, request))
            except Exception as error:  # noqa: BLE001 - fail closed: the call is denied, the model is told
                run.approval_failed(entry, error)
    entries = run.runnable(batch)
    for entry in entries:
        if hooks.before_tool is not None:
            await _maybe(hooks.before_tool(entry.call, run.context()))
        run.started(entry)
    for out in run.drain():
        yield out
    tasks = [
        asyncio.ensure_future(_atimed(run.registry, entry, run.context()))
        for entry in entries
    ]
    try:
        for next_done in asyncio.as_completed(tasks):
            entry, outcome, seconds = await next_done
            report = run.finished(entry, outcome, seconds)
            if hooks.after_tool is not None:
                await _maybe(hooks.after_tool(report))
            for out in run.drain():
                yield out
    finally:
        for task in tasks:
            task.cancel()
    run.close_batch(batch)
    for out in run.drain():
        yield out


async def _astep(model: ModelClient, run: _Run) -> AsyncIterator[RunEvent]:
    options, hooks = run.options, run.options.hooks
    if options.budget is not None:
        run.use_messages(
            await _maybe(options.budget(list(run.messages), run.budget_info()))
        )
    request = run.request()
    if hooks.before_model is not None:
        request = await _maybe(hooks.before_model(run.step + 1, request)) or request
    started = run.model_started()
    for out in run.drain():
        yield out
    async for out in _acall_model(model, request, run):
        yield out
    if run.stop is not None:
        return
    calls = run.model_finished(started)
    if (
        hooks.after_model is not None
        and isinstance(run.response, Response)
        and run.stop != "error"
    ):
        await _maybe(hooks.after_model(run.step, run.response))
    for out in run.drain():
        yield out
    if calls:
        async for out in _atool_batch(run, calls):
            yield out


async def _adrive(model: ModelClient, run: _Run) -> AsyncIterator[RunEvent]:
    run.begin()
    for out in run.drain():
        yield out
    try:
        pending = run.pending_calls()
        if pending:
            async for out in _atool_batch(run, pending):
                yield out
        while not run.should_stop():
            async for out in _astep(model, run):
                yield out
    except asyncio.CancelledError:
        # Record how the run ended, then let the cancellation go on: swallowing it would break the caller's
        # timeouts and task groups. Nothing is yielded here: that would hand the cancelled caller a value.
        run.end("cancelled")
        run.finish()
        raise
    except Exception as error:  # noqa: BLE001 - a failing hook or client ends the run with the error, not a crash
        run.fail(error)
    run.finish()
    for out in run.drain():
        yield out


class ARunEvents:
    """A run as an async iterator of its events; iterating drives it. `result` once the iteration is over.

    After an asyncio cancellation `result` holds the run as it stood (stop reason `cancelled`), and
    `leftover()` the events it did not get to yield.
    """

    def __init__(self, model: ModelClient, run: _Run) -> None:
        self._run = run
        self._events = _adrive(model, run)

    def __aiter__(self) -> AsyncIterator[RunEvent]:
        return self._events

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

    def leftover(self) -> list[RunEvent]:
        """After a cancellation: finish the run as cancelled if it was not, and the events not yet delivered."""
        if self._run.result is None:
            self._run.end("cancelled")
            self._run.finish()
        return self._run.drain()


def arun_events(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    *,
    conversation_id: str | None = None,
    stream: bool = False,
    max_steps: int = 10,
    max_tool_calls: int = 50,
    budget: Budget | None = None,
    approve: Approver | None = None,
    hooks: Hooks | None = None,
    cancel: CancelToken | None = None,
    settings: Mapping[str, Any] | None = None,
    values: Mapping[str, Any] | None = None,
) -> ARunEvents:
    """The run of arun(), as an async iterator of events (for an SSE response); `.result` afterwards."""
    options = _options(
        stream=stream,
        max_steps=max_steps,
        max_tool_calls=max_tool_calls,
        budget=budget,
        approve=approve,
        hooks=hooks,
        cancel=cancel,
        settings=settings,
        values=values,
    )
    return ARunEvents(model, _Run(messages, registry, options, conversation_id))


async def arun(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    *,
    conversation_id: str | None = None,
    stream: bool = False,
    max_steps: int = 10,
    max_tool_calls: int = 50,
    budget: Budget | None = None,
    approve: Approver | None = None,
    hooks: Hooks | None = None,
    on_event: Callable[[RunEvent], Any] | None = None,
    cancel: CancelToken | None = None,
    settings: Mapping[str, Any] | None = None,
    values: Mapping[str, Any] | None = None,
) -> RunResult:
    """run() for async code: async handlers, approvers and hooks are awaited, and a cancel token interrupts a
    model call in flight. Cancelling the task cancels the run: on_event still gets its last events (run_finished
    with stop reason `cancelled`), then CancelledError propagates as asyncio expects."""
    events = arun_events(
        messages,
        model,
        registry,
        conversation_id=conversation_id,
        stream=stream,
        max_steps=max_steps,
        max_tool_calls=max_tool_calls,
        budget=budget,
        approve=approve,
        hooks=hooks,
        cancel=cancel,
        settings=settings,
        values=values,
    )
    try:
        async for event in events:
            if on_event is not None:
                await _maybe(on_event(event))
    except asyncio.CancelledError:
        if on_event is not None:
            for event in events.leftover():
                on_event(event)
        raise
    return events.result
