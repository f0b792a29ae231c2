# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A served run's tools and approvals as DBOS steps and messages: each tool call a step, each decision a message.

The parallel calls of one batch each reserve their step when their task starts (in call order: the loop creates
the tasks in call order and each reserves before it first waits), run at once, and are each checkpointed. A call's
step runs on one of DBOS's threads, its checkpoints with it: the call's start is counted in the store first (with
the events kept so far, one write), then a sync handler runs on one of the registry's threads, waited for there,
and an async one (or one whose kind the registry does not tell) on the workflow's event loop. A tool call whose
handler was running when the process died is run again only when its tool says it is safe to repeat (MCP's
`idempotentHint` or `readOnlyHint`); any other is answered as interrupted. A call that requires approval waits for
the decision another process sends, durably (`recv_async`, holding no thread), however long it takes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..loop.interrupts import (
    GRACE_SECONDS,
    InterruptReason,
    RunInterrupted,
    interrupted_what,
    unfinished_text,
)
from ..loop.policies import Approval, ApprovalRequest
from ..tools.entry import ToolContext, ToolEntry
from ..tools.outcomes import ToolError, ToolOutcome
from ..tools.registry import Registry
from .durable_calls import (
    INTERRUPTED_KIND,
    STEP_VERSION,
    WATCH_SECONDS,
    DurableRun,
    checked,
    safe_to_repeat,
)

# How long one durable wait for a decision lasts before it is renewed; a decision may take days.
DECISION_WAIT_SECONDS = 3600.0


class DurableTools(Registry):
    """The run's tools with every call a DBOS step; everything else is the registry it wraps, as it is."""

    def __init__(self, inner: Registry, run: DurableRun) -> None:
        # Registry.__init__ is not called: the tools, handlers and pool are the wrapped registry's own.
        self.inner = inner
        self.run = run
        # The current batch's calls, in call order (each set once handed on), and the interrupts they saw.
        self._batch: list[asyncio.Event] = []
        self._seen: list[InterruptReason] = []
        # Whether each call of the batch has its step's record (or has ended without one).
        self._records: list[asyncio.Event] = []

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

    def dispatch(self, call: Any, ctx: ToolContext | None = None) -> ToolOutcome:
        raise TypeError("a durable run's workflow is async: its loop calls adispatch()")

    async def adispatch(self, call: Any, ctx: ToolContext | None = None) -> ToolOutcome:
        """The call's step, reserved before the first wait (call order, as the loop starts the calls' tasks).

        The calls of a batch run at once, but each hands its outcome on only after the one before it, and a
        cancel or the deadline a call saw reaches the loop once the whole batch is handed on: a replay returns
        every recorded outcome at once, so nothing the loop sees may depend on which call ended first. A call the
        run gave up on (its step saw the cancel or the deadline) raises RunInterrupted, as the loop's own watch
        would have answered it: skipped, not an error. It does so once every later call of the batch has its
        record, so that the loop, which then cancels the calls still pending, hears each of those calls' own
        outcome, as it hears the calls that ended before its deadline in a run of its own."""
        if self._batch and all(slot.is_set() for slot in self._batch):
            self._batch, self._seen, self._records = [], [], []
        batch, seen, records = self._batch, self._seen, self._records
        previous = batch[-1] if batch else None
        handed_on = asyncio.Event()
        has_record = asyncio.Event()
        batch.append(handed_on)
        records.append(has_record)
        reservation = self.run.engine.reserve_step()
        plain = dict(call)
        context = ctx or ToolContext(conversation_id="")
        # Its attempts are counted under its step's place as well as its id: a model that reuses `call_0` at
        # every step makes a new call each time, not a repeat of one a crash cut short.
        attempt_key = f"{reservation.step_id}:{plain.get('id', '')}"
        try:
            try:
                recorded: Any = await reservation.run_async(
                    {"name": "toolgen.tool_call"},
                    self._tool_body,
                    plain,
                    context,
                    attempt_key,
                    asyncio.get_running_loop(),
                )
            except Exception as failure:  # noqa: BLE001 - handed on in its turn, below
                recorded = failure
            has_record.set()
            if previous is not None:
                await _held(previous)
            if isinstance(recorded, Exception):
                raise recorded
            record = checked(recorded, "tool call")
            reason: InterruptReason | None = record["interrupted"]
            if reason is not None:
                seen.append(reason)
                later = records[records.index(has_record) + 1 :]
                await asyncio.gather(*(slot.wait() for slot in later))
            if handed_on is batch[-1] and seen:
                self.run.token.observe(seen[0])
            if reason is not None:
                raise RunInterrupted(reason, record["content"])
            problem = record["error"]
            return ToolOutcome(
                str(plain.get("id", "")),
                record["name"],
                record["content"],
                record["result"],
                None
                if problem is None
                else ToolError(problem["kind"], problem["message"]),
                tuple(record.get("notes") or ()),
            )
        finally:
            has_record.set()
            handed_on.set()

    def _entry(self, call: Mapping[str, Any]) -> ToolEntry[Any, Any] | None:
        function = call.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        return (
            self.inner.entry(name)
            if isinstance(name, str) and name in self.inner
            else None
        )

    def _key(self, entry: ToolEntry[Any, Any] | None, attempt_key: str) -> str | None:
        """Where the call's starts are counted; None for a call safe to repeat: run again after a crash either way."""
        return (
            None
            if safe_to_repeat(None if entry is None else entry.spec)
            else attempt_key
        )

    def _tool_body(
        self,
        call: dict[str, Any],
        ctx: ToolContext,
        attempt_key: str,
        loop: asyncio.AbstractEventLoop,
    ) -> dict[str, Any]:
        """The call's step, on one of DBOS's threads (DBOS's checkpoints with it, in one hop from the workflow's
        event loop): its start counted, then the call. A sync handler runs on one of the registry's threads, waited
        for here while the run's cancel and deadline are looked at; an async one (or one whose kind the registry
        does not tell) is awaited, and watched, on the workflow's event loop."""
        entry = self._entry(call)
        if self.run.count_tool_start(self._key(entry, attempt_key)):
            return _record(call, None, None, began_before=True)
        pool = self.inner.pool
        if entry is not None and entry.bound and not entry.is_async:
            job = pool.submit(self.inner.dispatch, call, ctx)
            done: concurrent.futures.Future[ToolOutcome] = job.future

            def cancel() -> bool:
                return job.future.cancel()  # False once it runs: it gets its grace

            def let_go() -> None:
                pool.abandon(job)  # its thread is replaced; it runs on, unheard
        else:
            tasks: list[asyncio.Task[Any]] = []
            done = asyncio.run_coroutine_threadsafe(
                _adispatched(self.inner, call, ctx, tasks), loop
            )

            def cancel() -> bool:
                # The task itself, not its future: an async handler that ends anyway within the grace is heard.
                loop.call_soon_threadsafe(lambda: [task.cancel() for task in tasks])
                return False

            def let_go() -> None:
                pass  # cancelled already; one that ignores it runs on, unheard

        reason = None
        while reason is None:
            try:
                return _record(call, done.result(WATCH_SECONDS), None)
            except concurrent.futures.TimeoutError:
                if loop.is_running():
                    reason = self.run.watch.reason_now()
                    continue
            except concurrent.futures.CancelledError:
                pass  # before the watch fires, only the engine's close cancels it
            # The engine has closed: the step ends unrecorded, as if the process had died (DBOS records no step
            # that ends in a cancellation), and this thread is not held for the rest of the call.
            raise asyncio.CancelledError("the workflow's event loop has stopped")
        if not cancel():
            with contextlib.suppress(
                concurrent.futures.TimeoutError, concurrent.futures.CancelledError
            ):
                return _record(call, done.result(GRACE_SECONDS), None)
            if not done.done():
                let_go()
        return _record(call, None, reason)


async def _held(previous: asyncio.Event) -> None:
    """Wait for the call before this one to be handed on. A cancel meanwhile (the loop's, once a call of the batch
    said the run was interrupted) is not taken: this call has its record, which is its answer; the calls before it
    each hand on theirs, or end, at once."""
    while not previous.is_set():
        with contextlib.suppress(asyncio.CancelledError):
            await previous.wait()


async def _adispatched(
    registry: Registry,
    call: dict[str, Any],
    ctx: ToolContext,
    tasks: list[asyncio.Task[Any]],
) -> ToolOutcome:
    """`registry.adispatch`, its task kept in `tasks` for whoever has to cancel it."""
    task = asyncio.current_task()
    if task is not None:
        tasks.append(task)
    return await registry.adispatch(call, ctx)


def _record(
    call: Mapping[str, Any],
    outcome: ToolOutcome | None,
    reason: InterruptReason | None,
    *,
    began_before: bool = False,
) -> dict[str, Any]:
    """What a tool call's step records: its outcome, why the run gave up on it, or that it had begun before."""
    function = call.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    record: dict[str, Any] = {
        "version": STEP_VERSION,
        "name": str(name or ""),
        "interrupted": None,
        "result": None,
    }
    if began_before:
        return {
            **record,
            "content": "Error: interrupted: the server stopped while this call was "
            "running; the tool is not marked safe to repeat, so it was not run again "
            "and its effect is unknown",
            "error": {"kind": INTERRUPTED_KIND, "message": "interrupted"},
        }
    if outcome is None:
        assert reason is not None  # watched() gives one or the other
        return {
            **record,
            "interrupted": reason,
            "content": unfinished_text(reason),
            "error": {"kind": reason, "message": f"the run {interrupted_what(reason)}"},
        }
    result = outcome.result
    if not isinstance(result, (str, int, float, bool, list, dict, type(None))):
        result = None  # the content says it all; an object of the tool's need not survive a restart
    return {
        **record,
        "content": outcome.content,
        "error": None
        if outcome.error is None
        else {"kind": outcome.error.kind, "message": outcome.error.message},
        "result": result,
        # Kept so that a replay after a restart says what the live call said of its result.
        "notes": list(outcome.notes),
    }


def approval_topic(call_id: str, round: int) -> str:
    """Where a run waits for the decision on one ask about a call."""
    return f"approval:{call_id}:{round}"


def durable_approver(
    run: DurableRun, deadline_at: float | None
) -> Callable[[ApprovalRequest], Any]:
    """Decisions as DBOS messages, waited for durably (`recv_async`), however long they take; a cancel or the run's
    deadline ends the wait with a denial, and the token set, recorded as every replay will see it. At the deadline
    the ask is closed in the store, unless a decision was claimed first (its 200 said it was taken): then the run
    waits for that decision's message and takes it."""
    asked: dict[str, int] = {}

    async def approve(request: ApprovalRequest) -> Approval:
        # The round of this ask about the call id: a model reusing `call_0` at a later step is asked anew.
        asked[request.call_id] = asked.get(request.call_id, 0) + 1
        round = asked[request.call_id]
        topic = approval_topic(request.call_id, round)

        def clock() -> float | dict[str, Any]:
            # The time, as a step records it; past the deadline the ask is closed in the same step, so that a replay
            # takes the path the first run took. A float: the time (and, past the deadline, the ask closed); a
            # release before this one recorded only the time, and denied at the deadline, as a float still does.
            now = time.time()
            if deadline_at is None or now < deadline_at:
                return now
            return now if run.close_ask(request.call_id, round) else {"claimed": now}

        claimed = False
        while True:
            wait = DECISION_WAIT_SECONDS
            if deadline_at is not None and not claimed:
                # Past the deadline the step writes to the store, which a busy database may refuse a while.
                options = {
                    "name": "toolgen.clock",
                    "retries_allowed": True,
                    "max_attempts": 5,
                }
                now = await run.engine.run_step_async(options, clock)
                if isinstance(now, Mapping):
                    claimed = True  # a decision came first: its message is on its way
                elif now >= deadline_at:
                    run.token.observe("deadline")
                    return Approval.deny(
                        "the run reached its deadline before a decision"
                    )
                else:
                    wait = min(wait, max(0.05, deadline_at - now))
            message = await run.engine.recv_async(topic, timeout_seconds=wait)
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


def recorded_approver(
    engine: Any, approve: Callable[[ApprovalRequest], Any]
) -> Callable[[ApprovalRequest], Any]:
    """The service's own approver (sync or async), its answers recorded as a step: a replay gets the answer it
    gave."""

    async def ask(request: ApprovalRequest) -> Approval | bool:
        answer = approve(request)
        if inspect.isawaitable(answer):
            answer = await answer
        decided: Approval | bool = answer
        return decided

    async def decide(request: ApprovalRequest) -> Approval | bool:
        answer: Approval | bool = await engine.run_step_async(
            {"name": "toolgen.approval"}, ask, request
        )
        return answer

    return decide
