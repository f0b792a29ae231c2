# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The async driver of the agent loop: arun() and arun_events(), parallel tool calls as tasks, callbacks awaited."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..clients.base import ModelClient
from ..observe.telemetry import NoTelemetry
from ..tools.registry import Registry, ToolContext, ToolOutcome
from ..wires.base import ProviderError, Request, Response
from ..wires.settings import settings_wire
from .events import RunEvent
from .options import RunOptions, RunSettings, run_options
from .policies import Approval, ApprovalRequest, Approver, CancelToken
from .results import RunResult
from .state import BatchCall, RunState, RunView

if TYPE_CHECKING:
    # typing has Unpack from Python 3.11 on; a checker for 3.10 reads the keywords as Any. (typing_extensions
    # would do on 3.10, but the package imports nothing beyond the standard library and pydantic.)
    from typing import Unpack  # type: ignore[attr-defined,unused-ignore]

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
    model: ModelClient, request: Request, run: RunState
) -> AsyncIterator[RunEvent]:
    run.response = None
    try:
        if not run.options.stream:
            # The task that makes the call copies the context: the client's own spans nest under the chat span.
            with run.telemetry.active(run.chat_span):
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
    registry: Registry,
    entry: BatchCall,
    context: ToolContext,
    telemetry: NoTelemetry,
) -> tuple[BatchCall, ToolOutcome, float]:
    started = time.perf_counter()
    # Each call is a task with its own copy of the context, so the spans of parallel calls never mix.
    with telemetry.active(entry.span):
        outcome = await registry.adispatch(entry.call, context)
    return entry, outcome, time.perf_counter() - started


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
    tasks = [
        asyncio.ensure_future(
            _atimed(run.registry, entry, run.context(), run.telemetry)
        )
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
