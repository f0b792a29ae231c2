# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The async driver of the agent loop: arun() and arun_events(), parallel tool calls as tasks, callbacks awaited.

A run with a cancel token or a deadline watches them while it awaits a model call, a stream or its tool calls
(interrupts.py): the calls in flight are cancelled, and those that ignore it are let go after a short grace.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..clients.base import ModelClient
from ..observe.telemetry import NoTelemetry
from ..tools.entry import ToolContext
from ..tools.outcomes import ToolOutcome
from ..tools.registry import Registry
from ..wires.canonical import ProviderError, Request, Response
from ..wires.settings import settings_wire
from .batch_call import BatchCall
from .events import RunEvent
from .interrupts import GRACE_SECONDS, InterruptReason, RunInterrupted, unfinished
from .options import RunOptions, RunSettings, run_options
from .policies import Approval, ApprovalRequest, Approver
from .results import RunResult
from .state import RunState, RunView

if TYPE_CHECKING:
    # typing has Unpack from Python 3.11 on; a checker for 3.10 reads the keywords as Any. (typing_extensions
    # would do on 3.10, but the package imports nothing beyond the standard library and pydantic.)
    from typing import Unpack  # type: ignore[attr-defined,unused-ignore]


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _acall_model(
    model: ModelClient, request: Request, run: RunState
) -> AsyncIterator[RunEvent]:
    """Events of one model call; with a cancel token or a deadline, given up on when they fire."""
    run.response = None
    interrupt = run.interrupt
    try:
        if not run.options.stream:
            # The task that makes the call copies the context: the client's own spans nest under the chat span.
            with run.telemetry.active(run.chat_span):
                response = await interrupt.wait(model.acomplete(request))
            run.response = response
            run.whole_response(response)
            return
        events = interrupt.aiterate(model.astream(request))
        try:
            async for event in events:
                run.stream_event(event)
                for out in run.drain():
                    yield out
                if run.cancel_requested():
                    break
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        # Also after the stream's end: a cancel that came with its last event stops the run all the same.
        interrupted = run.cancel_requested()
        if interrupted is not None:
            run.end(interrupted)
    except RunInterrupted as interrupted:
        run.end(interrupted.reason)
    except ProviderError as error:
        run.response = error


async def _adecide(
    approve: Approver | None, request: ApprovalRequest
) -> Approval | bool:
    if approve is None:
        return Approval.deny("this tool needs approval and no approver is configured")
    answer: Approval | bool = await _maybe(approve(request))
    return answer


# What _acalls says of a call: its outcome or why the run was interrupted, and its seconds.
_Done = tuple[BatchCall, ToolOutcome | InterruptReason, float]


async def _atimed(
    registry: Registry,
    entry: BatchCall,
    context: ToolContext,
    telemetry: NoTelemetry,
) -> _Done:
    started = time.perf_counter()
    # Each call is a task with its own copy of the context, so the spans of parallel calls never mix.
    with telemetry.active(entry.span):
        try:
            outcome: ToolOutcome | InterruptReason = await registry.adispatch(
                entry.call, context
            )
        except RunInterrupted as interrupted:
            outcome = interrupted.reason
    return entry, outcome, time.perf_counter() - started


async def _acalls(
    run: RunState, entries: list[BatchCall]
) -> AsyncGenerator[_Done | None, None]:
    """Run the calls as tasks; their outcomes in call order, and None each time progress events were queued
    meanwhile (for the caller to hand on).

    After a cancel or the deadline (or a call raising RunInterrupted) the calls still running are cancelled and
    get GRACE_SECONDS to end; one that ignores its cancellation is then left to run on its own.
    """
    # A report wakes the loop from whatever thread it comes from (a sync handler's, or this one): it settles the
    # waker of the moment, a plain future (no task), replaced once it has been taken.
    loop = asyncio.get_running_loop()
    wakers: list[asyncio.Future[Any]] = [loop.create_future()]

    def woken() -> None:
        if not wakers[0].done():
            wakers[0].set_result(None)

    run.progress.watch(lambda: loop.call_soon_threadsafe(woken))
    waker = wakers[0]
    tasks: dict[asyncio.Future[Any], BatchCall] = {
        asyncio.ensure_future(
            _atimed(run.registry, entry, run.context(entry), run.telemetry)
        ): entry
        for entry in entries
    }
    started = time.perf_counter()
    interrupt = run.interrupt
    watch = asyncio.ensure_future(interrupt.watch()) if interrupt.armed else None
    pending: set[asyncio.Future[Any]] = set(tasks)
    grace_until: float | None = None

    def give_grace(reason: InterruptReason) -> None:
        nonlocal grace_until
        run.end(reason)
        grace_until = time.monotonic() + GRACE_SECONDS
        for task in pending:
            task.cancel()

    # Outcomes are handed on in call order, whatever order the calls end in, as run() does.
    order = list(tasks)
    ready: dict[asyncio.Future[Any], _Done] = {}
    handed = 0
    progress_due: float | None = None
    try:
        while pending:
            waiting = set(pending) | {waker}
            if watch is not None and grace_until is None:
                waiting.add(watch)
            timeout = progress_due
            if grace_until is not None:
                grace = max(0.0, grace_until - time.monotonic())
                timeout = grace if timeout is None else min(timeout, grace)
            done, _ = await asyncio.wait(
                waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if waker in done:
                # Replaced before the reports are taken: a report after them wakes the loop again.
                done.discard(waker)
                waker = wakers[0] = loop.create_future()
            progress_due = run.progress_events()
            yield None
            if not done and grace_until is not None and time.monotonic() >= grace_until:
                break  # the grace is over
            if watch in done:
                done.discard(watch)
                if grace_until is None:
                    give_grace(watch.result())
            for task in done:
                pending.discard(task)
                entry = tasks[task]
                if task.cancelled():
                    ready[task] = (entry, _reason(run), time.perf_counter() - started)
                    continue
                done_call: _Done = task.result()
                if isinstance(done_call[1], str) and grace_until is None:
                    # The call's dispatch says the run was interrupted: the others get their grace.
                    give_grace(done_call[1])
                ready[task] = done_call
            while handed < len(order) and order[handed] in ready:
                yield ready.pop(order[handed])
                handed += 1
        for task in order[handed:]:
            if task in ready:
                yield ready.pop(task)
                continue
            interrupt.let_go(task)
            yield tasks[task], _reason(run), time.perf_counter() - started
    finally:
        run.progress.watch(None)
        waker.cancel()
        if watch is not None:
            watch.cancel()
        for task in tasks:
            task.cancel()  # none is left running by a run that ends early (a hook failing, the caller cancelled)


def _reason(run: RunState) -> InterruptReason:
    return "deadline" if run.stop == "deadline" else "cancelled"


async def _atool_batch(
    run: RunState, calls: list[dict[str, Any]]
) -> AsyncIterator[RunEvent]:
    hooks = run.hooks
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
    calls_done = _acalls(run, entries)
    try:
        async for done in calls_done:
            if done is None:
                for out in run.drain():  # progress of the calls in flight
                    yield out
                continue
            entry, outcome, seconds = done
            if isinstance(outcome, ToolOutcome):
                report = run.finished(entry, outcome, seconds)
            else:
                report = unfinished(
                    entry.id, entry.name, entry.arguments, outcome, seconds
                )
                report = run.abandoned(entry, report)
            if hooks.after_tool is not None:
                await _maybe(hooks.after_tool(report))
            for out in run.drain():
                yield out
    finally:
        await calls_done.aclose()
    run.close_batch(batch)
    for out in run.drain():
        yield out


async def _atrim(run: RunState, overflow: bool = False) -> bool:
    """Let the budget hook shorten the conversation; whether it did."""
    budget = run.options.budget
    if budget is None:
        return False
    trimmed = await _maybe(budget(list(run.messages), run.budget_info(overflow)))
    return run.use_messages(trimmed)


async def _astep(model: ModelClient, run: RunState) -> AsyncIterator[RunEvent]:
    hooks = run.hooks
    await _atrim(run)
    while True:
        request = run.request()
        if hooks.before_model is not None:
            step = run.step + (run.retry is None)
            request = await _maybe(hooks.before_model(step, request)) or request
        started = run.model_started(request, model)
        for out in run.drain():
            yield out
        async for out in _acall_model(model, request, run):
            yield out
        if run.stop is not None:
            return
        calls = run.model_finished(started)
        if run.retry is None:
            break
        if run.retry == "overflow" and not await _atrim(run, overflow=True):
            run.give_up()
            for out in run.drain():
                yield out
            return
        for out in run.drain():
            yield out
        retry = run.options.stream_retry
        if retry is not None and retry.delay:
            await asyncio.sleep(retry.delay)
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


async def _adrive(model: ModelClient, run: RunState) -> AsyncIterator[RunEvent]:
    run.begin(model)
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
    except RunInterrupted as interrupted:
        # Raised by a hook or an approver that watches the run too: the run stops as it says, not as failed.
        run.end(interrupted.reason)
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


def _leftover(run: RunState) -> list[RunEvent]:
    """After a cancellation: finish the run as cancelled if it was not, and the events not yet delivered."""
    if run.result is None:
        run.end("cancelled")
        run.finish()
    return run.drain()


async def _adeliver(
    run: RunState, events: AsyncIterator[RunEvent], on_event: Callable[[RunEvent], Any]
) -> AsyncIterator[RunEvent]:
    """The events, each handed to on_event first; after an asyncio cancellation, on_event still gets the events
    the run did not get to yield (run_finished last), then the cancellation goes on."""
    try:
        async for event in events:
            await _maybe(on_event(event))
            yield event
    except asyncio.CancelledError:
        for event in _leftover(run):
            on_event(event)
        raise


class ARunEvents(RunView):
    """A run as an async iterator of its events; iterating drives it. `result` once the iteration is over.

    After an asyncio cancellation `result` holds the run as it stood (stop reason `cancelled`), and
    `leftover()` the events it did not get to yield (none when on_event is set: it got them).
    """

    def __init__(self, model: ModelClient, run: RunState) -> None:
        super().__init__(run)
        on_event = run.options.on_event
        events = _adrive(model, run)
        self._events = events if on_event is None else _adeliver(run, events, on_event)

    def __aiter__(self) -> AsyncIterator[RunEvent]:
        return self._events

    def leftover(self) -> list[RunEvent]:
        """After a cancellation: finish the run as cancelled if it was not, and the events not yet delivered."""
        return _leftover(self._run)


def arun_events(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    options: RunOptions | None = None,
    **settings: Unpack[RunSettings],
) -> ARunEvents:
    """The run of arun(), as an async iterator of events (for an SSE response); `.result` afterwards."""
    return ARunEvents(
        model,
        RunState(
            messages,
            registry,
            run_options(options, settings),
            settings_wire(model),
        ),
    )


async def arun(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    options: RunOptions | None = None,
    **settings: Unpack[RunSettings],
) -> RunResult:
    """run() for async code: async handlers, approvers, hooks and on_event are awaited, and a cancel token
    interrupts a model call in flight. Cancelling the task cancels the run: on_event still gets its last events
    (run_finished with stop reason `cancelled`), then CancelledError propagates as asyncio expects."""
    events = arun_events(messages, model, registry, options, **settings)
    async for _ in events:
        pass
    return events.result
