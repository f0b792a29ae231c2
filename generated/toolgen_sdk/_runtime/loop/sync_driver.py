# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The sync driver of the agent loop: run() and run_events(), tool calls on daemon threads.

A run with a cancel token or a deadline waits for its model calls, streams and tool calls while watching them
(interrupts.py): it ends within about a second of either firing, whatever it was waiting for. Tool calls run
on threads of their batch, a lone one too, so that the loop's thread is free to hand on the progress a call
reports (loop/progress.py) while it runs; except a lone call that nothing can interrupt in a run whose events
no one reads as they come (run() without on_event): it runs on the loop's thread, and its last report comes out
before its end, as a call's last report always does.
"""

from __future__ import annotations

import contextvars
import inspect
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..clients.base import ModelClient
from ..observe.telemetry import NoTelemetry
from ..tools.outcomes import ToolOutcome
from ..tools.registry import Registry
from ..wires.canonical import ProviderError, Request, Response
from ..wires.settings import settings_wire
from .batch_call import BatchCall
from .events import RunEvent
from .interrupts import (
    GRACE_SECONDS,
    POLL_SECONDS,
    InterruptReason,
    RunInterrupted,
    stopped_before,
    unfinished,
)
from .options import RunOptions, RunSettings, run_options
from .policies import Approval, ApprovalRequest, Approver
from .results import RunResult
from .state import RunState, RunView

if TYPE_CHECKING:
    # typing has Unpack from Python 3.11 on; a checker for 3.10 reads the keywords as Any. (typing_extensions
    # would do on 3.10, but the package imports nothing beyond the standard library and pydantic.)
    from typing import Unpack  # type: ignore[attr-defined,unused-ignore]

# More threads than this for one batch of parallel calls would only queue on the GIL and the providers' limits.
_MAX_WORKERS = 16
# How long a run's tool thread waits for the next call before it ends.
_IDLE_SECONDS = 1.0


def _call_model(
    model: ModelClient, request: Request, run: RunState
) -> Iterator[RunEvent]:
    """Events of one model call; the answer ends up in run.response (None after a cancel mid-stream).

    With a cancel token or a deadline the call is waited for on a daemon thread, and given up on when they fire.
    """
    run.response = None
    interrupt = run.interrupt
    try:
        if not run.options.stream:
            with run.telemetry.active(run.chat_span):
                run.response = interrupt.call(model.complete, request)
            run.whole_response(run.response)
            return
        events = interrupt.iterate(lambda: model.stream(request))
        try:
            for event in events:
                run.stream_event(event)
                yield from run.drain()
                if run.cancel_requested():
                    break
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
        # Also after the stream's end: a cancel that came with its last event stops the run all the same.
        interrupted = run.cancel_requested()
        if interrupted is not None:
            run.end(interrupted)
    except RunInterrupted as interrupted:
        run.end(interrupted.reason)
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
    dispatch: Callable[[], ToolOutcome], entry: BatchCall, telemetry: NoTelemetry
) -> tuple[ToolOutcome | InterruptReason, float]:
    """The call's outcome, or why the run was interrupted during it, and how long it took."""
    started = time.perf_counter()
    # Spans the handler makes nest under the call's, on whichever thread it runs.
    with telemetry.active(entry.span):
        try:
            outcome: ToolOutcome | InterruptReason = dispatch()
        except RunInterrupted as interrupted:
            outcome = interrupted.reason
    return outcome, time.perf_counter() - started


# What _dispatch says of a call: its outcome or why the run was interrupted, its seconds, and whether it began.
_Done = tuple[BatchCall, ToolOutcome | InterruptReason, float, bool]
# Put on a batch's queue of finished calls when a call reports progress: the loop wakes to hand it on.
_WOKEN = -1


class _Workers:
    """A run's tool threads, kept from one batch to the next: starting a thread costs more than a short call.

    Daemon threads, not a ThreadPoolExecutor: the interpreter joins an executor's threads at exit, so a handler
    abandoned still running would keep the process from ending. A thread waiting for work ends after
    _IDLE_SECONDS, or at once when the run closes the pool; one busy with an abandoned call is simply not idle.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[Callable[[], None]], object] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._idle = 0  # threads waiting for work (or about to) that no job put since has claimed

    def submit(self, job: Callable[[Callable[[], None]], object]) -> None:
        """Run `job(release)` on a thread of the run's; a job calls `release()` just before its last word (its
        thread counts as idle from then on, so that the next batch finds it), or its thread does after it."""
        with self._lock:
            claimed = self._idle > 0
            if claimed:
                self._idle -= 1
        self._jobs.put(job)
        if not claimed:
            threading.Thread(
                target=self._work, name="toolgen-tool", daemon=True
            ).start()

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle == 0:
                        continue  # claimed by a job on its way
                    self._idle -= 1
                return
            if job is None:
                return
            released = False

            def release() -> None:
                nonlocal released
                if not released:
                    released = True
                    with self._lock:
                        self._idle += 1

            job(release)
            release()

    def close(self) -> None:
        """The run is over: the idle threads end now."""
        with self._lock:
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._jobs.put(None)


class _Threads:
    """The calls of one batch on the run's threads, taken in call order; an interrupted batch is not waited for."""

    def __init__(
        self,
        calls: list[tuple[BatchCall, Callable[[], ToolOutcome]]],
        telemetry: NoTelemetry,
    ) -> None:
        self.calls = calls
        self.telemetry = telemetry
        # Each call sees the loop thread's context variables (its trace span among them).
        self.contexts = [contextvars.copy_context() for _ in calls]
        self.done: queue.SimpleQueue[
            tuple[int, ToolOutcome | InterruptReason | BaseException | None, float]
        ] = queue.SimpleQueue()
        self.began: dict[int, float] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._closed = False

    def wake(self) -> None:
        self.done.put((_WOKEN, None, 0.0))

    def start(self, workers: _Workers) -> None:
        for _ in range(min(len(self.calls), _MAX_WORKERS)):
            workers.submit(self._work)

    def _take(self) -> int | None:
        with self._lock:
            if self._closed or self._next >= len(self.calls):
                return None
            index, self._next = self._next, self._next + 1
            self.began[index] = time.perf_counter()
            return index

    def _work(self, release: Callable[[], None]) -> None:
        index = self._take()
        while index is not None:
            entry, dispatch = self.calls[index]
            try:
                done: tuple[Any, float] = self.contexts[index].run(
                    _timed, dispatch, entry, self.telemetry
                )
            except BaseException as error:  # noqa: BLE001 - raised again on the loop's thread
                done = error, 0.0
            following = self._take()
            if following is None:
                release()  # before the loop hears of its last call: its next batch may have this thread
            self.done.put((index, *done))
            index = following

    def close(self) -> dict[int, float]:
        """Start no more calls; when each call that did start began."""
        with self._lock:
            self._closed = True
            return dict(self.began)


def _dispatch(
    run: RunState, entries: list[BatchCall], workers: _Workers
) -> Iterator[_Done | None]:
    """Run the calls, concurrently when there are several; their outcomes in call order, and None each time
    progress events were queued meanwhile (for the caller to hand on).

    Each call is made ready by the registry in call order on this thread. After a cancel or the deadline (or a
    call raising RunInterrupted) the calls still running get GRACE_SECONDS, then are left to run on their own.
    """
    if not entries:
        return
    refused: InterruptReason | None = None
    try:
        calls = [
            (entry, run.registry.dispatcher(entry.call, run.context(entry)))
            for entry in entries
        ]
    except RunInterrupted as interrupted:
        calls, refused = [], interrupted.reason
    if refused is not None:
        # No call starts: each is answered as not run.
        run.end(refused)
        for entry in entries:
            yield entry, refused, 0.0, False
        return
    interrupt = run.interrupt
    if len(calls) == 1 and not interrupt.armed and not run.live:
        # Nothing can interrupt it and no one would see its progress before its end: no thread.
        entry, dispatch = calls[0]
        alone, took = _timed(dispatch, entry, run.telemetry)
        if isinstance(alone, str):
            run.end(alone)
        yield entry, alone, took, True
        return
    threads = _Threads(calls, run.telemetry)
    run.progress.watch(threads.wake)
    threads.start(workers)
    left = set(range(len(calls)))
    # Outcomes are handed on in call order, whatever order the calls end in: the run's events are then the same
    # on every replay of a durable run, and in run(), arun() and a served run alike.
    ready: dict[int, tuple[ToolOutcome | InterruptReason, float]] = {}
    handed = 0
    grace_until: float | None = None
    progress_due: float | None = None
    try:
        while left:
            if grace_until is None:
                fired = interrupt.reason()
                if fired is not None:
                    run.end(fired)
                    grace_until = time.monotonic() + GRACE_SECONDS
            elif time.monotonic() >= grace_until:
                break
            timeout = interrupt.poll() if interrupt.armed else None
            if grace_until is not None:
                timeout = max(0.0, min(POLL_SECONDS, grace_until - time.monotonic()))
            if progress_due is not None:
                timeout = (
                    progress_due if timeout is None else min(timeout, progress_due)
                )
            try:
                index, outcome, seconds = threads.done.get(timeout=timeout)
            except queue.Empty:
                index, outcome = _WOKEN, None
            progress_due = run.progress_events()
            yield None
            if outcome is None:  # woken for progress
                continue
            left.discard(index)
            if isinstance(outcome, BaseException):
                raise outcome
            if isinstance(outcome, str) and grace_until is None:
                # The call's dispatch says the run was interrupted: the others get their grace.
                run.end(outcome)
                grace_until = time.monotonic() + GRACE_SECONDS
            ready[index] = (outcome, seconds)
            while handed in ready:
                yield (calls[handed][0], *ready.pop(handed), True)
                handed += 1
    finally:
        run.progress.watch(None)
        began = threads.close()
    now = time.perf_counter()
    reason: InterruptReason = "deadline" if run.stop == "deadline" else "cancelled"
    for index in range(handed, len(calls)):
        if index in ready:
            yield (calls[index][0], *ready.pop(index), True)
            continue
        started = began.get(index)
        seconds = 0.0 if started is None else now - started
        yield calls[index][0], reason, seconds, started is not None


def _tool_batch(
    run: RunState, calls: list[dict[str, Any]], workers: _Workers
) -> Iterator[RunEvent]:
    hooks = run.hooks
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
    for done in _dispatch(run, entries, workers):
        if done is None:
            yield from run.drain()  # progress of the calls in flight
            continue
        entry, outcome, seconds, began = done
        if isinstance(outcome, ToolOutcome):
            report = run.finished(entry, outcome, seconds)
        elif began:
            report = unfinished(entry.id, entry.name, entry.arguments, outcome, seconds)
            report = run.abandoned(entry, report)
        else:
            report = run.settle(entry, "skipped", stopped_before(outcome), outcome)
        if hooks.after_tool is not None:
            _sync(hooks.after_tool(report), "the after_tool hook")
        yield from run.drain()
    run.close_batch(batch)
    yield from run.drain()


def _trim(run: RunState, overflow: bool = False) -> bool:
    """Let the budget hook shorten the conversation; whether it did."""
    budget = run.options.budget
    if budget is None:
        return False
    trimmed = budget(list(run.messages), run.budget_info(overflow))
    return run.use_messages(_sync(trimmed, "the budget hook"))


def _step(model: ModelClient, run: RunState, workers: _Workers) -> Iterator[RunEvent]:
    hooks = run.hooks
    _trim(run)
    while True:
        request = run.request()
        if hooks.before_model is not None:
            step = run.step + (run.retry is None)
            request = (
                _sync(hooks.before_model(step, request), "the before_model hook")
                or request
            )
        started = run.model_started(request, model)
        yield from run.drain()
        yield from _call_model(model, request, run)
        if run.stop is not None:
            return
        calls = run.model_finished(started)
        if run.retry is None:
            break
        if run.retry == "overflow" and not _trim(run, overflow=True):
            run.give_up()
            yield from run.drain()
            return
        yield from run.drain()
        retry = run.options.stream_retry
        if retry is not None and retry.delay:
            time.sleep(retry.delay)
    if (
        hooks.after_model is not None
        and isinstance(run.response, Response)
        and run.stop != "error"
    ):
        _sync(hooks.after_model(run.step, run.response), "the after_model hook")
    yield from run.drain()
    if calls:
        yield from _tool_batch(run, calls, workers)


def _drive(model: ModelClient, run: RunState) -> Iterator[RunEvent]:
    run.begin(model)
    yield from run.drain()
    workers = _Workers()
    try:
        try:
            pending = run.pending_calls()
            if pending:
                yield from _tool_batch(run, pending, workers)
            while not run.should_stop():
                yield from _step(model, run, workers)
        except RunInterrupted as interrupted:
            # Raised by a hook or an approver that watches the run too: the run stops as it says, not as failed.
            run.end(interrupted.reason)
        except Exception as error:  # noqa: BLE001 - a failing hook or client ends the run with the error, not a crash
            run.fail(error)
    finally:
        workers.close()
    run.finish()
    yield from run.drain()


def _deliver(
    events: Iterator[RunEvent], on_event: Callable[[RunEvent], Any]
) -> Iterator[RunEvent]:
    """The events, each handed to on_event first."""
    for event in events:
        _sync(on_event(event), "on_event")
        yield event


class RunEvents(RunView):
    """A run as an iterator of its events; iterating drives it. `result` once the iteration is over."""

    def __init__(self, model: ModelClient, run: RunState) -> None:
        super().__init__(run)
        on_event = run.options.on_event
        events = _drive(model, run)
        self._events = events if on_event is None else _deliver(events, on_event)

    def __iter__(self) -> Iterator[RunEvent]:
        return self._events


def run_events(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    options: RunOptions | None = None,
    **settings: Unpack[RunSettings],
) -> RunEvents:
    """The run of run(), as events to iterate (for an SSE response); `.result` afterwards."""
    return RunEvents(
        model,
        RunState(
            messages,
            registry,
            run_options(options, settings),
            settings_wire(model),
        ),
    )


def run(
    messages: Sequence[Any],
    model: ModelClient,
    registry: Registry,
    options: RunOptions | None = None,
    **settings: Unpack[RunSettings],
) -> RunResult:
    """Run the conversation `messages` (dicts or models) with `model` and the tools of `registry` until it stops.

    Settings come as `options` (a RunOptions), as keywords (its field names: `stream=True, max_steps=8`), or
    both, a keyword winning over the same field of `options`. Never raises for a provider or tool failure: the run stops with stop reason `error`
    and the error in `result.error`. A generation setting the model's wire cannot carry raises
    UnsupportedSettings (a ValueError naming each one) before any request, unless `on_unsupported="note"`.
    """
    events = run_events(messages, model, registry, options, **settings)
    state = events._run
    state.live = state.options.on_event is not None
    for _ in events:
        pass
    return events.result
