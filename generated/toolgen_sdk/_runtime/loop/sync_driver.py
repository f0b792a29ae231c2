# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The sync driver of the agent loop: run() and run_events(), parallel tool calls in a thread pool."""

from __future__ import annotations

import concurrent.futures
import contextvars
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..clients.base import ModelClient
from ..observe.telemetry import NoTelemetry
from ..tools.registry import Registry, ToolContext, ToolOutcome
from ..wires.base import ProviderError, Request, Response
from ..wires.settings import settings_wire
from .events import RunEvent
from .options import RunOptions, RunSettings, run_options
from .policies import Approval, ApprovalRequest, Approver
from .results import RunResult
from .state import BatchCall, RunState, RunView

if TYPE_CHECKING:
    # typing has Unpack from Python 3.11 on; a checker for 3.10 reads the keywords as Any. (typing_extensions
    # would do on 3.10, but the package imports nothing beyond the standard library and pydantic.)
    from typing import Unpack  # type: ignore[attr-defined,unused-ignore]

# More threads than this for one batch of parallel calls would only queue on the GIL and the providers' limits.
_MAX_WORKERS = 16


def _call_model(
    model: ModelClient, request: Request, run: RunState
) -> Iterator[RunEvent]:
    """Events of one model call; the answer ends up in run.response (None after a cancel mid-stream)."""
    run.response = None
    try:
        if not run.options.stream:
            with run.telemetry.active(run.chat_span):
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
    registry: Registry,
    entry: BatchCall,
    context: ToolContext,
    telemetry: NoTelemetry,
) -> tuple[ToolOutcome, float]:
    started = time.perf_counter()
    # Spans the handler makes nest under the call's, on whichever thread it runs.
    with telemetry.active(entry.span):
        outcome = registry.dispatch(entry.call, context)
    return outcome, time.perf_counter() - started


def _dispatch(
    run: RunState, entries: list[BatchCall]
) -> Iterator[tuple[BatchCall, ToolOutcome, float]]:
    """Run the calls, concurrently when there are several; each as it completes."""
    context = run.context()
    if not entries:
        return
    if len(entries) == 1:
        yield (entries[0], *_timed(run.registry, entries[0], context, run.telemetry))
        return
    with concurrent.futures.ThreadPoolExecutor(
        max_workers=min(len(entries), _MAX_WORKERS)
    ) as pool:
        futures = {
            pool.submit(
                contextvars.copy_context().run,
                _timed,
                run.registry,
                entry,
                context,
                run.telemetry,
            ): entry
            for entry in entries
        }
        for future in concurrent.futures.as_completed(futures):
            yield (futures[future], *future.result())


def _tool_batch(run: RunState, calls: list[dict[str, Any]]) -> Iterator[RunEvent]:
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
    for entry, outcome, seconds in _dispatch(run, entries):
        report = run.finished(entry, outcome, seconds)
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


def _step(model: ModelClient, run: RunState) -> Iterator[RunEvent]:
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
        yield from _tool_batch(run, calls)


def _drive(model: ModelClient, run: RunState) -> Iterator[RunEvent]:
    run.begin(model)
    yield from run.drain()
    try:
        pending = run.pending_calls()
        if pending:
            yield from _tool_batch(run, pending)
        while not run.should_stop():
            yield from _step(model, run)
    except Exception as error:  # noqa: BLE001 - a failing hook or client ends the run with the error, not a crash
        run.fail(error)
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
    for _ in events:
        pass
    return events.result
