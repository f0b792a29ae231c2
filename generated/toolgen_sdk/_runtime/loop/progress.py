# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The progress of a run's tool calls in flight: reports kept per call, coalesced, taken by the loop at its pace.

A handler's `ctx.report_progress()` (tools/progress.py) lands here from whatever thread the handler runs on (the
loop's, a pool thread, a tool thread): the board keeps the call's latest report under a lock and, when nothing
is waiting to be taken yet, wakes the loop with the callable its driver set (a queue put, or
call_soon_threadsafe); it never waits for the loop. The loop takes the reports on its own thread and makes them
`tool_call_progress` events, numbered and ordered with every other event of the run, each after its call's
`tool_call_started` and before its `tool_call_finished`. So that a chatty tool cannot flood a run:

- a call gets at most one event every PROGRESS_INTERVAL seconds; the reports in between are coalesced, only
  the latest is kept (a tool reporting 100,000 times in a second makes about ten events);
- a report equal to the one last handed on for its call is dropped;
- the latest report of a call not yet handed on when the call ends comes out just before its
  `tool_call_finished`, so a tool that reports it is done is seen to be;
- a report made after its call ended (a handler a cancel abandoned, still running) is dropped;
- a report that has no number to show (tools/progress.py) is not sent, and said so: the call's outcome gets
  one note counting such reports (a `note` event before its `tool_call_finished`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..tools.progress import ProgressSink

# The shortest time between two progress events of one call.
PROGRESS_INTERVAL = 0.1

T = TypeVar("T")
# A report as handed on: progress, total (None: unknown), message.
Report = tuple[float, float | None, str | None]


@dataclass
class _Slot(Generic[T]):
    """One call's place on the board while it runs."""

    owner: T
    held: Report | None = None  # the latest report not yet handed on
    last: Report | None = None  # the report last handed on
    sent_at: float = float("-inf")  # when it was (time.monotonic())
    refused: int = 0  # reports with no number to show, not sent
    first_refused: str = ""  # the first one's progress, described


class _Sink:
    """Where one call's context reports to: the board, under the call's slot key."""

    __slots__ = ("_board", "_key")

    def __init__(self, board: ProgressBoard[Any], key: int) -> None:
        self._board = board
        self._key = key

    def __call__(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        self._board._report(self._key, (progress, total, message))

    def refused(self, progress: str) -> None:
        """A report not sent, its progress (described) no number to show: counted for the call's note."""
        self._board._refused(self._key, progress)


class ProgressBoard(Generic[T]):
    """The reports of one run's calls in flight, each call known by its owner (the loop's record of the call)."""

    def __init__(self, interval: float = PROGRESS_INTERVAL) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        # Slots by a key of their own, never reused: a sink an abandoned handler still holds reaches no later call.
        self._slots: dict[int, _Slot[T]] = {}
        # id(owner) to its slot's key, while the call runs.
        self._keys: dict[int, int] = {}
        self._next = itertools.count()
        self._wake: Callable[[], object] | None = None
        # The loop was woken, or will look by itself, for reports it has not taken yet: no need to wake it again.
        self._waiting = False

    def watch(self, wake: Callable[[], object] | None) -> None:
        """How to wake the loop when a report waits (None: the loop is not waiting on calls; it takes them later)."""
        with self._lock:
            self._wake = wake
            self._waiting = False

    def open(self, owner: T) -> ProgressSink:
        """Give a call that is about to run its place; the sink its context reports to."""
        with self._lock:
            key = next(self._next)
            self._keys[id(owner)] = key
            self._slots[key] = _Slot(owner)
        return _Sink(self, key)

    def _refused(self, key: int, progress: str) -> None:
        with self._lock:
            slot = self._slots.get(key)
            if slot is not None:
                slot.refused += 1
                slot.first_refused = slot.first_refused or progress

    def _report(self, key: int, report: Report) -> None:
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                return  # the call has ended
            slot.held = report
            if self._waiting or self._wake is None:
                return
            self._waiting = True
            wake = self._wake
        wake()  # outside the lock: a wake that fails (a closed event loop) is the reporter's to swallow

    def take(self) -> tuple[list[tuple[T, Report]], float | None]:
        """The reports due now (each call's latest), and the seconds until the next is due (None: none waits)."""
        now = time.monotonic()
        due: list[tuple[T, Report]] = []
        wait: float | None = None
        with self._lock:
            for slot in self._slots.values():
                report = slot.held
                if report is None:
                    continue
                if report == slot.last:
                    slot.held = None
                    continue
                left = slot.sent_at + self.interval - now
                if left > 0:
                    wait = left if wait is None else min(wait, left)
                    continue
                due.append((slot.owner, report))
                slot.held, slot.last, slot.sent_at = None, report, now
            # With a report held back, the loop comes back by itself when it is due.
            self._waiting = wait is not None
        return due, wait

    def close(self, owner: T) -> tuple[Report | None, str | None]:
        """The call has ended: its report not yet handed on, if any, and the note on the reports it made that
        were not sent, if any (its start names no call: the loop puts the call's name before it); later reports
        of it are dropped."""
        with self._lock:
            key = self._keys.pop(id(owner), None)
            slot = None if key is None else self._slots.pop(key, None)
        if slot is None:
            return None, None
        held = None if slot.held is None or slot.held == slot.last else slot.held
        note = None
        if slot.refused == 1:
            note = f"progress: a report was not sent, its progress {slot.first_refused} not a finite number"
        elif slot.refused:
            note = (
                f"progress: {slot.refused} reports were not sent, their progress not a finite number"
                f" (the first: {slot.first_refused})"
            )
        return held, note

    def close_all(self) -> None:
        """The run is over: every report from now on is dropped."""
        with self._lock:
            self._slots.clear()
            self._keys.clear()
            self._wake = None
