# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Wall-clock deadlines for a model call: httpx's own timeouts count per read, and a drip never trips them."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

# What the body's reader thread hands over: a chunk, the end, or the error that stopped it.
_CHUNK, _END, _FAILED = 0, 1, 2

# Python 3.10 has a distinct asyncio.TimeoutError; 3.11 made it the builtin one.
TIMEOUTS: tuple[type[BaseException], ...] = (TimeoutError, asyncio.TimeoutError)


class DeadlinePassed(TimeoutError):
    """The call's wall-clock deadline passed while the response was still arriving."""


def within(chunks: Iterable[T], deadline: float, seconds: float) -> Iterator[T]:
    """The chunks of a body, ended by DeadlinePassed once the deadline has passed.

    A blocking read cannot be interrupted, and between two chunks a stalled server holds it for a whole
    per-read timeout: so a daemon thread reads, and this waits for each chunk only as long as is left.
    """
    arrived: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for chunk in chunks:
                arrived.put((_CHUNK, chunk))
                if stop.is_set():
                    return
        except BaseException as error:  # noqa: BLE001 - handed to the reader, in the reader's thread
            arrived.put((_FAILED, error))
        else:
            arrived.put((_END, None))

    threading.Thread(target=pump, name="toolgen-body-read", daemon=True).start()
    try:
        while True:
            try:
                kind, value = arrived.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise DeadlinePassed(
                    f"the response took more than {seconds} s"
                ) from None
            if kind == _END:
                return
            if kind == _FAILED:
                raise value
            yield value
    finally:
        stop.set()


async def awithin(chunks: Any, deadline: float, seconds: float) -> AsyncIterator[Any]:
    """The async chunks of a body, each awaited no longer than what is left of the deadline."""
    iterator = chunks.__aiter__()
    while True:
        left = deadline - time.monotonic()
        try:
            chunk = await asyncio.wait_for(iterator.__anext__(), max(left, 0.0))
        except StopAsyncIteration:
            return
        except TIMEOUTS:
            await iterator.aclose()
            raise DeadlinePassed(f"the response took more than {seconds} s") from None
        yield chunk


def before(
    deadline: float,
    seconds: float,
    function: Callable[[], T],
    discard: Callable[[T], None],
) -> T:
    """function() in a daemon thread, waited for until the deadline; a result that comes later is discarded.

    A blocking read cannot be interrupted from outside: this is how a sync call stops waiting for a server
    that drips its status line and headers. The thread ends at its own per-read timeout, or when the server
    stops, and never keeps the interpreter from exiting.
    """
    lock = threading.Lock()
    done = threading.Event()
    outcome: list[Any] = []
    abandoned: list[bool] = []

    def work() -> None:
        try:
            value: Any = function()
        except BaseException as error:  # noqa: BLE001 - handed to the caller, in the caller's thread
            value, failed = error, True
        else:
            failed = False
        with lock:
            late = bool(abandoned)
            if not late:
                outcome.append((failed, value))
        if late and not failed:
            discard(value)
        done.set()

    threading.Thread(target=work, name="toolgen-model-call", daemon=True).start()
    done.wait(max(0.0, deadline - time.monotonic()))
    with lock:
        if not outcome:
            abandoned.append(True)
            raise DeadlinePassed(f"the call took more than {seconds} s")
        failed, value = outcome[0]
    if failed:
        raise value
    return value  # type: ignore[no-any-return]
