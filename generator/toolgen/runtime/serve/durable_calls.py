# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Durability as a wrapper: a served run's model client, tools, approver and cancel token, each call a DBOS step.

The one agent loop (loop/) runs inside a DBOS workflow with these in place of the plain ones. Every model call and
every tool call is a step: when the workflow replays after a restart, a step that finished returns what it
recorded instead of running again, so the loop walks the same path to where it stopped and goes on from there.
A streamed model call hands its events to the loop as they come and records them, so a replay gives the loop
the same events. The parallel calls of one batch each reserve their step in call order on the loop's thread, run
concurrently, and are each checkpointed. A tool call whose handler was running when the process died is run
again only when its tool says it is safe to repeat (MCP's `idempotentHint` or `readOnlyHint`); any other is
answered as interrupted. Cancel and the run's deadline reach the loop only through what a step recorded (the
token below), so that a replay stops exactly where the first run did.
"""

from __future__ import annotations

import contextvars
import dataclasses
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from ..loop.interrupts import GRACE_SECONDS, InterruptReason, RunInterrupted
from ..loop.policies import Approval, ApprovalRequest
from ..models.base import ToolSpec
from ..streams.events import Event, MessageEnd
from ..tools.registry import Registry, ToolContext, ToolEntry, ToolError, ToolOutcome
from ..wires.base import ProviderError, Request, Response

INTERRUPTED_KIND = "interrupted"
# The form of what a step records; a replay of a form it does not know stops the run with both versions named.
STEP_VERSION = 1
# How long one durable wait for a decision lasts before it is renewed; a decision may take days.
DECISION_WAIT_SECONDS = 3600.0
# How often a step looks at the run's cancel request and deadline while its model or tool call runs.
_WATCH_SECONDS = 0.05


def safe_to_repeat(spec: ToolSpec | None) -> bool:
    """Whether a call cut short by a crash may run again: the tool says it is idempotent or only reads."""
    if spec is None:
        return False
    hints = spec.annotations or {}
    return bool(hints.get("idempotentHint") or hints.get("readOnlyHint"))


class DurableInterrupt:
    """The loop's cancel token in a durable run: set only by what a step recorded (a cancel or the deadline seen
    while it ran), so that every replay of the workflow sees it set at the same point."""

    def __init__(self) -> None:
        self.reason: InterruptReason | None = None

    def is_set(self) -> bool:
        return self.reason is not None

    def observe(self, reason: InterruptReason | None) -> None:
        if reason is not None and self.reason is None:
            self.reason = reason


class LiveWatch:
    """What a step looks at while its call runs: the run's cancel request and deadline, as they are now."""

    def __init__(
        self, cancelled: Callable[[], bool], deadline_at: float | None
    ) -> None:
        self._cancelled = cancelled
        self._deadline_at = deadline_at

    def reason(self) -> InterruptReason | None:
        if self._cancelled():
            return "cancelled"
        if self._deadline_at is not None and time.time() >= self._deadline_at:
            return "deadline"
        return None


@dataclasses.dataclass(frozen=True)
class DurableRun:
    """One run's part of the engine: the DBOS calls, its watch, its token, and where its stream pieces go live."""

    engine: Any  # dbos.DBOS
    watch: LiveWatch
    token: DurableInterrupt
    begin_model_call: Callable[
        [], int
    ]  # before a model call first runs: the store's offset for its events
    set_offset: Callable[
        [int], None
    ]  # when a recorded model call replays: the offset it ran with
    begin_tool_call: Callable[
        [str], int
    ]  # a call's handler starts: how many starts came before


def _picklable(answer: Response | ProviderError) -> Any:
    """ProviderError does not survive pickling (its keywords are not in its args): recorded as its fields."""
    if isinstance(answer, ProviderError):
        raw = answer.raw if isinstance(answer.raw, Response) else None
        return ("provider_error", answer.to_json(), raw)
    return answer


def _unpickled(recorded: Any) -> Response | ProviderError:
    if isinstance(recorded, tuple) and recorded[:1] == ("provider_error",):
        fields, raw = recorded[1], recorded[2]
        return ProviderError(
            fields["wire"],
            fields["message"],
            type=fields["type"],
            code=fields["code"],
            status=fields["status"],
            raw=raw,
        )
    answer: Response = recorded
    return answer


def _recorded_event(event: Event) -> Any:
    if isinstance(event, MessageEnd):
        return dataclasses.replace(event, response=_picklable(event.response))
    return event


def _replayed_event(event: Any) -> Event:
    if isinstance(event, MessageEnd):
        return dataclasses.replace(event, response=_unpickled(event.response))
    replayed: Event = event
    return replayed


def _checked(record: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(record, Mapping) or record.get("version") != STEP_VERSION:
        version = record.get("version") if isinstance(record, Mapping) else None
        raise RuntimeError(
            f"a recorded {what} has step form version {version!r}; this release reads version "
            f"{STEP_VERSION}: resume the run with the release that started it"
        )
    return record


class DurableModel:
    """A model client whose every call is a DBOS step; it speaks as the client it wraps (wire, model, notes)."""

    def __init__(self, inner: Any, run: DurableRun) -> None:
        self.inner = inner
        self.run = run
        for name in ("wire", "model", "provider_name", "base_url"):
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))

    def request_notes(self, request: Request) -> tuple[str, ...]:
        notes = getattr(self.inner, "request_notes", None)
        found = notes(request) if callable(notes) else ()
        return tuple(found)

    def complete(self, request: Request) -> Response:
        record = _checked(
            self.run.engine.run_step(
                {"name": "toolgen.model_call"}, self._complete_body, request
            ),
            "model call",
        )
        self.run.set_offset(int(record["offset"]))
        self.run.token.observe(record["interrupted"])
        if record["interrupted"] is not None:
            raise RunInterrupted(record["interrupted"])
        answer = _unpickled(record["answer"])
        if isinstance(answer, ProviderError):
            raise answer
        return answer

    def _complete_body(self, request: Request) -> dict[str, Any]:
        offset = self.run.begin_model_call()
        box: list[Any] = []
        reason = _watched(lambda: box.append(self._answer(request)), self.run.watch)
        answer = box[0] if box else None
        return {
            "version": STEP_VERSION,
            "offset": offset,
            "interrupted": reason if answer is None else None,
            "answer": None if answer is None else _picklable(answer),
        }

    def _answer(self, request: Request) -> Response | ProviderError:
        try:
            response: Response = self.inner.complete(request)
        except ProviderError as error:
            return error
        return response

    def stream(self, request: Request) -> Iterator[Event]:
        """The call's events as they come the first time (recorded as they pass), as recorded on a replay."""
        reservation = self.run.engine.reserve_step()
        live: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        context = contextvars.copy_context()

        def step() -> None:
            try:
                record = reservation.run(
                    {"name": "toolgen.model_stream"}, self._stream_body, request, live
                )
                live.put(("record", record))
            except BaseException as error:  # noqa: BLE001 - handed to the loop's thread
                live.put(("raise", error))

        threading.Thread(
            target=context.run, args=(step,), name="toolgen-model-step", daemon=True
        ).start()
        return self._events(live)

    def _events(self, live: queue.SimpleQueue[tuple[str, Any]]) -> Iterator[Event]:
        passed = 0
        while True:
            kind, value = live.get()
            if kind == "event":
                passed += 1
                yield _replayed_event(value)
            elif kind == "raise":
                raise value
            else:
                break
        record = _checked(value, "model stream")
        self.run.set_offset(int(record["offset"]))
        # A replay gets nothing live: every recorded event comes from the record, in order.
        for event in record["events"][passed:]:
            yield _replayed_event(event)
        self.run.token.observe(record["interrupted"])

    def _stream_body(
        self, request: Request, live: queue.SimpleQueue[tuple[str, Any]]
    ) -> dict[str, Any]:
        offset = self.run.begin_model_call()
        recorded: list[Any] = []
        reason: InterruptReason | None = None
        events = self.inner.stream(request)
        try:
            for event in events:
                kept = _recorded_event(event)
                recorded.append(kept)
                live.put(("event", kept))
                reason = self.run.watch.reason()
                if reason is not None and not isinstance(event, MessageEnd):
                    break
                reason = None
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
        return {
            "version": STEP_VERSION,
            "offset": offset,
            "events": recorded,
            "interrupted": reason,
        }

    async def acomplete(self, request: Request) -> Response:
        raise TypeError("a durable run's workflow is sync: its loop calls complete()")

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        raise TypeError("a durable run's workflow is sync: its loop calls stream()")
        yield  # pragma: no cover - makes this an async generator


def _watched(work: Callable[[], None], watch: LiveWatch) -> InterruptReason | None:
    """Run `work` on a daemon thread until it ends or the run's cancel or deadline fires (then, after a grace, it
    is abandoned, still running): None, or the reason it was given up on."""
    done = threading.Event()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            context.run(work)
        finally:
            done.set()

    threading.Thread(target=run, name="toolgen-step-call", daemon=True).start()
    while not done.wait(_WATCH_SECONDS):
        reason = watch.reason()
        if reason is not None:
            return None if done.wait(GRACE_SECONDS) else reason
    return None


class DurableTools(Registry):
    """The run's tools with every call a DBOS step; everything else is the registry it wraps, as it is."""

    def __init__(self, inner: Registry, run: DurableRun) -> None:
        # Registry.__init__ is not called: the tools, handlers and pool are the wrapped registry's own.
        self.inner = inner
        self.run = run
        # The current batch's calls, in call order (each set once handed on), and the interrupts they saw.
        self._batch: list[threading.Event] = []
        self._seen: list[InterruptReason] = []

    # The wrapped registry's, read through: a tool added to it mid-run is offered from the next model call on.
    @property
    def revision(self) -> int:
        return self.inner.revision

    @revision.setter
    def revision(self, value: int) -> None:
        self.inner.revision = value

    @property
    def max_error_chars(self) -> int:
        return self.inner.max_error_chars

    @max_error_chars.setter
    def max_error_chars(self, value: int) -> None:
        self.inner.max_error_chars = value

    def entry(self, name: str) -> ToolEntry[Any, Any]:
        return self.inner.entry(name)

    def __contains__(self, name: object) -> bool:
        return name in self.inner

    def __iter__(self) -> Iterator[str]:
        return iter(self.inner)

    def unbound(self) -> list[str]:
        return self.inner.unbound()

    def definitions(self) -> list[dict[str, Any]]:
        return self.inner.definitions()

    def dispatcher(self, call: Any, ctx: ToolContext) -> Callable[[], ToolOutcome]:
        """The call's step, reserved now on the loop's thread (call order), to run on whichever thread runs it.

        The calls of a batch run at once, but each hands its outcome on only after the one before it: a replay
        returns every recorded outcome at once, so the order they finish in must not depend on timing, or the
        events would be numbered differently the second time. A cancel or the deadline a call saw reaches the
        loop once the whole batch is handed on, for the same reason."""
        if self._batch and all(slot.is_set() for slot in self._batch):
            self._batch, self._seen = [], []
        batch, seen = self._batch, self._seen
        previous = batch[-1] if batch else None
        handed_on = threading.Event()
        batch.append(handed_on)
        reservation = self.run.engine.reserve_step()
        plain = dict(call)
        # Its attempts are counted under its step's place as well as its id: a model that reuses `call_0` at
        # every step makes a new call each time, not a repeat of one a crash cut short.
        attempt_key = f"{reservation.step_id}:{plain.get('id', '')}"

        def run_step() -> ToolOutcome:
            try:
                try:
                    recorded: Any = reservation.run(
                        {"name": "toolgen.tool_call"},
                        self._tool_body,
                        plain,
                        ctx,
                        attempt_key,
                    )
                except BaseException as failure:  # noqa: BLE001 - handed on in its turn, below
                    recorded = failure
                if previous is not None:
                    previous.wait()
                if isinstance(recorded, BaseException):
                    raise recorded
                record = _checked(recorded, "tool call")
                reason: InterruptReason | None = record["interrupted"]
                if reason is not None:
                    seen.append(reason)
                if handed_on is batch[-1] and seen:
                    self.run.token.observe(seen[0])
                problem = record["error"]
                return ToolOutcome(
                    str(plain.get("id", "")),
                    record["name"],
                    record["content"],
                    record["result"],
                    None
                    if problem is None
                    else ToolError(problem["kind"], problem["message"]),
                )
            finally:
                handed_on.set()

        return run_step

    def dispatch(self, call: Any, ctx: ToolContext | None = None) -> ToolOutcome:
        return self.dispatcher(call, ctx or ToolContext(conversation_id=""))()

    def _tool_body(
        self, call: dict[str, Any], ctx: ToolContext, attempt_key: str
    ) -> dict[str, Any]:
        name = str((call.get("function") or {}).get("name", ""))
        spec = self.inner.entry(name).spec if name in self.inner else None
        record: dict[str, Any] = {
            "version": STEP_VERSION,
            "name": name,
            "interrupted": None,
            "result": None,
        }
        if self.run.begin_tool_call(attempt_key) and not safe_to_repeat(spec):
            return {
                **record,
                "content": "Error: interrupted: the server stopped while this call was "
                "running; the tool is not marked safe to repeat, so it was not run again "
                "and its effect is unknown",
                "error": {"kind": INTERRUPTED_KIND, "message": "interrupted"},
            }
        box: list[ToolOutcome] = []
        reason = _watched(
            lambda: box.append(self.inner.dispatch(call, ctx)), self.run.watch
        )
        if not box:
            what = "reached its deadline" if reason == "deadline" else "was cancelled"
            return {
                **record,
                "interrupted": reason,
                "content": f"Error: not finished: the run {what} while this call ran; it was "
                f"abandoned after a grace of {GRACE_SECONDS:g} seconds and may still be running",
                "error": {"kind": reason, "message": f"the run {what}"},
            }
        outcome = box[0]
        result = outcome.result
        if dataclasses.is_dataclass(result) or hasattr(result, "model_dump"):
            result = None  # the content says it all; a model object need not survive a restart
        return {
            **record,
            "content": outcome.content,
            "error": None
            if outcome.error is None
            else {"kind": outcome.error.kind, "message": outcome.error.message},
            "result": result,
        }


def approval_topic(call_id: str, round: int) -> str:
    """Where a run waits for the decision on one ask about a call."""
    return f"approval:{call_id}:{round}"


def durable_approver(
    run: DurableRun, deadline_at: float | None
) -> Callable[[ApprovalRequest], Approval]:
    """Decisions as DBOS messages, waited for durably (`recv`), however long they take; a cancel or the run's
    deadline ends the wait with a denial, and the token set, recorded as every replay will see it."""

    asked: dict[str, int] = {}

    def approve(request: ApprovalRequest) -> Approval:
        # The round of this ask about the call id: a model reusing `call_0` at a later step is asked anew.
        asked[request.call_id] = asked.get(request.call_id, 0) + 1
        topic = approval_topic(request.call_id, asked[request.call_id])
        while True:
            wait = DECISION_WAIT_SECONDS
            if deadline_at is not None:
                now = run.engine.run_step({"name": "toolgen.clock"}, time.time)
                if now >= deadline_at:
                    run.token.observe("deadline")
                    return Approval.deny(
                        "the run reached its deadline before a decision"
                    )
                wait = min(wait, max(0.05, deadline_at - now))
            message = run.engine.recv(topic, timeout_seconds=wait)
            if not isinstance(message, Mapping):
                continue
            if message.get("cancel"):
                run.token.observe("cancelled")
                return Approval.deny("the run was cancelled before a decision")
            decision = str(message.get("decision"))
            if decision == "approve":
                return Approval.approve()
            if decision == "edit" and message.get("arguments") is not None:
                return Approval.edit(str(message["arguments"]), message.get("reason"))
            return Approval.deny(message.get("reason") or "the user denied this call")

    return approve
