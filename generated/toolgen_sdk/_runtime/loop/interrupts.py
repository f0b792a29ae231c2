# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What interrupts a run (its cancel token, its deadline) and how a driver waiting on a blocking call notices.

A run is interrupted when its cancel token is set (stop reason `cancelled`, or the token's own `reason`) or its
deadline has passed (`deadline`). The drivers check between steps and stream events; while they wait on something
that blocks (a model call, a stalled stream, a tool call) they watch the interrupt every few tens of
milliseconds, but only when a run has a cancel token or a deadline: a run without one waits without watching
(no watcher thread or task; the sync driver's tool calls run on threads either way, see sync_driver.py). A model client or a tool dispatch may raise RunInterrupted itself (a durable
engine does, when the run's cancel or deadline fires during its call): the run stops with its reason.
Python cannot stop a thread: a call given up on is abandoned, still running, on a daemon thread.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .policies import CancelToken
from .results import CallReport

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
InterruptReason = Literal["cancelled", "deadline"]

# How often a waiting driver looks at the cancel token and the clock.
POLL_SECONDS = 0.02
# Seconds a tool call gets to finish once its run is interrupted, before it is abandoned (as a registry timeout
# gives a cancelled async handler; tools/pool.py).
GRACE_SECONDS = 0.5
# Stream events read ahead of the run while it watches the interrupt: enough to keep a fast stream moving.
_READ_AHEAD = 64


class RunInterrupted(Exception):
    """Raised by a model client or a tool dispatch when the run's cancel or deadline fires during its call."""

    def __init__(
        self, reason: InterruptReason = "cancelled", message: str = ""
    ) -> None:
        super().__init__(message or f"the run was interrupted ({reason})")
        self.reason: InterruptReason = reason if reason == "deadline" else "cancelled"


def token_reason(cancel: CancelToken) -> InterruptReason:
    """The stop reason a set token asks for: its own `reason` when it carries one, else `cancelled`."""
    return "deadline" if getattr(cancel, "reason", None) == "deadline" else "cancelled"


def stopped_before(reason: InterruptReason) -> str:
    """Why a call that never started was not run."""
    return f"the run {interrupted_what(reason)} before this call ran"


def unfinished(
    call_id: str, name: str, arguments: str, reason: InterruptReason, seconds: float
) -> CallReport:
    """The report of a call the run gave up on while it ran: skipped, not finished, perhaps still running."""
    content = unfinished_text(reason)
    return CallReport(call_id, name, arguments, "skipped", content, seconds, reason)


def unfinished_text(reason: InterruptReason) -> str:
    """What the model reads of a call the run gave up on while it ran."""
    return (
        f"Error: not finished: the run {interrupted_what(reason)} while this call ran; it was "
        f"abandoned after a grace of {GRACE_SECONDS:g} seconds and may still be running"
    )


def interrupted_what(reason: InterruptReason) -> str:
    """The run's interrupt in words: "was cancelled" or "reached its deadline"."""
    return "reached its deadline" if reason == "deadline" else "was cancelled"


class Interrupt:
    """A run's cancel token and deadline, checked together; the tasks it gave up on, held until they end."""

    def __init__(self, cancel: CancelToken | None, deadline: float | None) -> None:
        self.cancel = cancel
        self.deadline = deadline
        self._until: float | None = None
        self._abandoned: set[asyncio.Future[Any]] = set()

    def start(self) -> None:
        """The run starts: its deadline counts from now."""
        if self.deadline is not None:
            self._until = time.monotonic() + self.deadline

    @property
    def armed(self) -> bool:
        """Whether anything can interrupt the run while it waits: only then is a blocking call watched. A token
        whose `watched` is False is set only by what the run's own calls return (a durable run's: from its steps'
        records), so it is checked between steps like any other, never watched during a call."""
        cancel = self.cancel
        watched = cancel is not None and getattr(cancel, "watched", True) is not False
        return watched or self.deadline is not None

    def reason(self) -> InterruptReason | None:
        """Why the run is to stop now (the cancel token first), or None."""
        cancel = self.cancel
        if cancel is not None and cancel.is_set():
            return token_reason(cancel)
        if self._until is not None and time.monotonic() >= self._until:
            return "deadline"
        return None

    def poll(self) -> float:
        """How long to wait before looking again: never past the deadline."""
        if self._until is None:
            return POLL_SECONDS
        return max(0.001, min(POLL_SECONDS, self._until - time.monotonic()))

    def check(self) -> None:
        reason = self.reason()
        if reason is not None:
            raise RunInterrupted(reason)

    # -- sync waiting --

    def call(self, function: Callable[..., T], *arguments: Any) -> T:
        """function(*arguments), waited for on a daemon thread while watching; RunInterrupted when it fires first."""
        if not self.armed:
            return function(*arguments)
        self.check()
        done = threading.Event()
        box: list[tuple[bool, Any]] = []
        context = contextvars.copy_context()  # the caller's span, on the thread

        def work() -> None:
            try:
                box.append((True, context.run(function, *arguments)))
            except BaseException as error:  # noqa: BLE001 - handed to the waiting driver
                box.append((False, error))
            finally:
                done.set()

        threading.Thread(target=work, name="toolgen-run-call", daemon=True).start()
        while not done.wait(self.poll()):
            self.check()
        ok, value = box[0]
        if ok:
            result: T = value
            return result
        raise value

    def iterate(self, open_stream: Callable[[], Iterator[T]]) -> Iterator[T]:
        """The items of open_stream(), read on a daemon thread while watching; RunInterrupted when it fires first.

        Unwatched, the stream itself. The thread alone touches the stream: it closes it once the run lets go,
        as soon as the item it waits for arrives (a stalled stream is abandoned as it is).
        """
        if not self.armed:
            return open_stream()
        return self._pumped(open_stream)

    def _pumped(self, open_stream: Callable[[], Iterator[T]]) -> Iterator[T]:
        self.check()
        items: queue.Queue[tuple[int, Any]] = queue.Queue(_READ_AHEAD)
        stop = threading.Event()
        context = contextvars.copy_context()

        def put(kind: int, value: Any) -> bool:
            while not stop.is_set():
                try:
                    items.put((kind, value), timeout=POLL_SECONDS)
                    return True
                except queue.Full:
                    continue
            return False

        def pump() -> None:
            stream: Any = None
            try:
                stream = open_stream()
                for item in stream:
                    if not put(0, item):
                        return
                put(1, None)
            except BaseException as error:  # noqa: BLE001 - handed to the waiting driver
                put(2, error)
            finally:
                close = getattr(stream, "close", None)
                if callable(close):
                    close()

        threading.Thread(
            target=context.run, args=(pump,), name="toolgen-run-stream", daemon=True
        ).start()
        try:
            while True:
                try:
                    kind, value = items.get(timeout=self.poll())
                except queue.Empty:
                    self.check()
                    continue
                if kind == 1:
                    return
                if kind == 2:
                    raise value
                yield value
        finally:
            stop.set()

    # -- async waiting --

    async def watch(self) -> InterruptReason:
        """Returns when the run is interrupted, with why."""
        import asyncio

        while True:
            reason = self.reason()
            if reason is not None:
                return reason
            await asyncio.sleep(self.poll())

    async def wait(self, awaitable: Awaitable[T]) -> T:
        """The awaitable's result, watching; RunInterrupted when it fires first (the awaitable is then let go)."""
        if not self.armed:
            return await awaitable
        import asyncio

        reason = self.reason()
        if reason is not None:
            close = getattr(awaitable, "close", None)
            if callable(close):
                close()  # no "coroutine was never awaited" warning
            raise RunInterrupted(reason)
        work = asyncio.ensure_future(awaitable)
        watch = asyncio.ensure_future(self.watch())
        try:
            done, _ = await asyncio.wait(
                {work, watch}, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            watch.cancel()
            if not work.done():
                self.let_go(work)
        if work in done:
            return work.result()
        raise RunInterrupted(watch.result())

    def aiterate(self, events: AsyncIterator[T]) -> AsyncIterator[T]:
        """The events, watching while each is awaited; RunInterrupted when it fires first. Unwatched, themselves."""
        if not self.armed:
            return events
        return self._awatched(events)

    async def _awatched(self, events: AsyncIterator[T]) -> AsyncIterator[T]:
        import asyncio

        # One task reads the stream and another watches, both into one queue: the stream is driven by a single
        # task from start to end (its cancel scopes and timeouts stay in the task that opened them).
        items: asyncio.Queue[tuple[int, Any]] = asyncio.Queue(_READ_AHEAD)

        async def pump() -> None:
            end: tuple[int, Any] = (1, None)
            try:
                async for event in events:
                    await items.put((0, event))
            except Exception as error:  # noqa: BLE001 - handed to the waiting driver
                end = (2, error)
            finally:
                # Closed before the driver hears of the end, as when it reads the stream itself.
                close = getattr(events, "aclose", None)
                if close is not None:
                    await close()
            await items.put(end)

        async def watch() -> None:
            reason = await self.watch()
            with contextlib.suppress(asyncio.QueueFull):
                # A full queue is read without waiting: the check before each read sees the interrupt.
                items.put_nowait((3, reason))

        reader = asyncio.ensure_future(pump())
        watcher = asyncio.ensure_future(watch())
        try:
            while True:
                self.check()
                kind, value = await items.get()
                if kind == 1:
                    return
                if kind == 2:
                    raise value
                if kind == 3:
                    raise RunInterrupted(value)
                yield value
        finally:
            watcher.cancel()
            if not reader.done():
                # Cancelled, not waited for: a stalled stream may never answer its cancellation.
                self.let_go(reader)

    def let_go(self, task: asyncio.Future[Any]) -> None:
        """Cancel a task without waiting for it; held until it ends, so that it is not collected while it runs."""
        task.cancel()
        if task.done():
            return
        self._abandoned.add(task)
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Future[Any]) -> None:
        self._abandoned.discard(task)
        if not task.cancelled():
            task.exception()  # read, so that asyncio logs nothing about a call already answered
