# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""HandlerPool: daemon threads for sync tool handlers, sized by the registry, that say when a call starts.

A handler's deadline counts from when it starts running, so a call waiting for a free thread is never reported
as timed out. Python cannot stop a thread: a handler that overruns is abandoned, its thread is replaced so that
the pool keeps its size, and, being a daemon, it never keeps the interpreter from exiting. An async handler
that overruns is cancelled; one that ignores the cancellation is abandoned the same way, still running.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

# Imported when a handler first runs: most imports of the SDK never dispatch.
if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

# Seconds a cancelled async handler gets to finish its cleanup before it is left running.
_CANCEL_GRACE = 0.5


class _Job:
    """One handler call, its future, and the signal that it has started."""

    def __init__(
        self,
        function: Callable[..., Any],
        arguments: tuple[Any, ...],
        on_start: Callable[[], None] | None,
    ) -> None:
        self.function = function
        self.arguments = arguments
        self.on_start = on_start
        # The handler sees the submitter's context variables (its trace span among them), as asyncio.to_thread
        # would give it, though it runs on a pool thread.
        self.context = contextvars.copy_context()
        import concurrent.futures

        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.started = threading.Event()
        self.abandoned = False

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        self.started.set()
        if self.on_start is not None:
            self.on_start()
        try:
            result = self.context.run(self.function, *self.arguments)
        except BaseException as error:  # noqa: BLE001 - handed to the caller, who decides what it means
            self.future.set_exception(error)
        else:
            self.future.set_result(result)


class HandlerPool:
    """Up to `size` daemon threads running sync handlers, plus one for each handler abandoned still running."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a handler pool needs at least one thread, not {size}")
        self.size = size
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Semaphore(0)
        self._threads = 0
        self._abandoned = 0
        # Tasks of async handlers given up on while they ignore their cancellation: held until they end.
        self._abandoned_tasks: set[asyncio.Task[Any]] = set()

    def submit(
        self,
        function: Callable[..., Any],
        *arguments: Any,
        on_start: Callable[[], None] | None = None,
    ) -> _Job:
        job = _Job(function, arguments, on_start)
        self._jobs.put(job)
        if not self._idle.acquire(blocking=False):
            self._grow()
        return job

    def abandon(self, job: _Job) -> None:
        """Give up waiting for a job: if it is still running, another thread takes its place."""
        with self._lock:
            if job.future.done() or job.abandoned:
                return
            job.abandoned = True
            self._abandoned += 1
        self._grow()

    def call(
        self, timeout: float | None, function: Callable[..., Any], *arguments: Any
    ) -> Any:
        """Run function in the pool and wait for it: at most `timeout` seconds once it has started."""
        import concurrent.futures

        job = self.submit(function, *arguments)
        job.started.wait()
        try:
            return job.future.result(timeout)
        except concurrent.futures.TimeoutError:
            self.abandon(job)
            raise

    async def acall(
        self, timeout: float | None, function: Callable[..., Any], *arguments: Any
    ) -> Any:
        """call() for async code: waits without blocking the event loop; cancelling abandons the job."""
        import asyncio

        loop = asyncio.get_running_loop()
        started: asyncio.Future[None] = loop.create_future()

        def begin() -> None:
            # The loop may have closed while the call was queued: then nobody waits for it.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, started)

        job = self.submit(function, *arguments, on_start=begin)
        try:
            await started
            return await asyncio.wait_for(
                asyncio.shield(asyncio.wrap_future(job.future)), timeout
            )
        except BaseException:
            # A timeout, or the caller cancelled: a job not yet started never runs, one running is let go.
            if not job.future.cancel():
                self.abandon(job)
            raise

    def call_coroutine(
        self, timeout: float | None, coroutine: Callable[[], Coroutine[Any, Any, Any]]
    ) -> Any:
        """call() for an async function: the coroutine runs in a loop of its own on a pool thread."""
        import asyncio

        return self.call(
            timeout, lambda: asyncio.run(self.await_within(timeout, coroutine()))
        )

    async def await_within(
        self, timeout: float | None, coroutine: Coroutine[Any, Any, Any]
    ) -> Any:
        """Await `coroutine` for at most `timeout` seconds, then cancel it; never wait long for it to stop.

        asyncio.wait_for waits for the cancelled coroutine to finish, so one that swallows CancelledError (or
        awaits a long cleanup) would hold its caller for ever: past a short grace it is left running instead.
        """
        import asyncio

        task = asyncio.ensure_future(coroutine)
        try:
            done, _ = await asyncio.wait((task,), timeout=timeout)
        except BaseException:
            # The caller is cancelled: the handler is cancelled with it, and not waited for.
            self._let_go(task)
            raise
        if done:
            return task.result()
        self._let_go(task)
        await asyncio.wait((task,), timeout=_CANCEL_GRACE)
        raise TimeoutError(f"the handler did not finish within {timeout} seconds")

    def _let_go(self, task: asyncio.Task[Any]) -> None:
        task.cancel()
        if task.done():
            return
        self._abandoned_tasks.add(task)
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._abandoned_tasks.discard(task)
        if not task.cancelled():
            # Read, so that asyncio does not log an exception of a call already answered as timed out.
            task.exception()

    def _grow(self) -> None:
        with self._lock:
            if self._threads >= self.size + self._abandoned:
                return
            self._threads += 1
        threading.Thread(target=self._work, name="toolgen-handler", daemon=True).start()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            job.run()
            with self._lock:
                if job.abandoned:
                    self._abandoned -= 1
                    if self._threads > self.size + self._abandoned:
                        # Its replacement is already running: this thread is one too many.
                        self._threads -= 1
                        return
            self._idle.release()


def _settle(started: asyncio.Future[None]) -> None:
    if not started.done():
        started.set_result(None)
