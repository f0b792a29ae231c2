# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Where a served run's events go: its store, in order, a few at a time, keyed so that a replay writes nothing twice.

The workflow hands the sink every event the loop makes, on its event loop, and the sink only keeps it. They are
written, with the run's row (status, conversation, metrics) when an event changed it, in one transaction (the
row when its status changed, at the end, and otherwise at most every _STATE_SECONDS):

- when a tool call not safe to repeat is about to start (its DBOS step's first work, off the event loop): its
  start is counted in the same transaction, so that the call is known to have begun before it runs;
- at once when a call is about to wait for a decision (the workflow waits for that write before it waits for
  the decision), and at the run's end (its last write wakes those waiting for the end; the workflow ends only
  once it is done);
- otherwise at most _BATCH_SECONDS after they came, on the store's writer thread: stream pieces, progress, a
  model call's start, and whatever a hook or a pause holds up between two steps.

Writes go one at a time and each takes every event kept so far, so they commit in the events' order and a
reader never sees an event before one that precedes it. A write that fails keeps its events for the next one.
Events the process had not written when it died are made again by the workflow's replay, from the steps'
records (until the run has ended, which its last write precedes).

A replay after a restart makes the same events with the same numbers, and the store keeps the rows it has. A
model call that was streaming when the process died left rows the replay does not make: they stay (a reader may
have seen them), an `error` event after them says the call is made again, and the events from there on are
numbered after them (`offset`, recorded by the model call's step so that every later replay numbers them the
same).

Progress is the one kind whose count depends on timing, so a replay does not make the progress events the first
run made (a recorded tool call returns its outcome at once) and may make others (a tool call the crash cut short,
run again). While a replay walks over the rows an earlier process stored, the sink matches it to them by kind
(`drift`): the stored progress rows stay where they are and the replay's events land on the rows they repeat; a
progress event of the replay lands on a stored progress row (which stays as it was) or, where the stored rows have
none, is dropped. Past the stored rows every event is written as it comes. So a replay writes no row twice and
loses no event but progress: the progress a call cut short reported stays, and that of its run again follows
once it goes past it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..loop.events import ErrorEvent, RunEvent
from .run_record import RunRecord, RunRequest, error_fields
from .store import Ask, EventRow, RunStore
from .store_rows import event_row, state_dumps

_PROGRESS = "tool_call_progress"
# The longest an event waits to be written when no step start or end writes it first.
_BATCH_SECONDS = 0.05
# While its status stays as it is, a running run's row (its conversation so far) is written at most this often:
# its events say as they come what the row's messages would, and a long conversation's JSON is not small.
_STATE_SECONDS = 1.0
# Events after which the run's row (status, conversation, metrics) is written again.
_STATE_CHANGES = frozenset(
    {
        "run_started",
        "model_call_finished",
        "approval_requested",
        "approval_decided",
        "tool_call_finished",
        "run_finished",
    }
)


def status_of(stop_reason: str | None) -> str:
    """The run's status for the service once its loop has stopped: finished, error, or stopped (a limit, a
    cancel, the deadline)."""
    if stop_reason in ("finished", "return_direct"):
        return "finished"
    return "error" if stop_reason == "error" else "stopped"


def stored_before(store: RunStore, run_id: str) -> tuple[int, frozenset[int]]:
    """What an earlier process stored of the run: its last event's number, and those of its progress events."""
    prior = store.last_seq(run_id)
    progress: set[int] = set()
    after = 0
    while after < prior:
        page = store.events_after(run_id, after, 1000)
        if not page:
            break
        progress.update(e.seq for e in page if e.type == _PROGRESS)
        after = page[-1].seq
    return prior, frozenset(progress)


class StoreSink:
    """One run's events into the store, numbered with the run's offset, and its row kept current.

    `prior` and `progress_rows`: what an earlier process stored of the run (stored_before); a new run has none.
    Without `prior` the sink reads them from the store at the first event.
    """

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        request: RunRequest,
        messages: Callable[[], Sequence[Mapping[str, Any]]],
        *,
        prior: int | None = None,
        progress_rows: frozenset[int] = frozenset(),
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.request = request
        self._messages = messages
        self.offset = 0
        # Where a replay stands against the rows stored before it began: progress rows stepped over (+) and
        # progress events of its own that had no place (-); 0 in a run that is not a replay.
        self.drift = 0
        self._last = 0  # the number of the last event handed on, with offset and drift
        self._prior = prior
        self._progress_rows = progress_rows
        # Kept until the next write: events with their stored numbers, the run's row, asks.
        self._waiting: list[tuple[int, RunEvent]] = []
        self._state: RunRecord | None = None
        self._status = "running"
        self._ended = False
        # The run's row as last written: its status, and when (time.monotonic()).
        self._written_status = "running"
        self._written_at = 0.0
        self._asks: list[Ask] = []
        # The fatal `error` event's fields, for the row of a run that stops with `error` (RunResult.error).
        self._error: dict[str, Any] | None = None
        self._pending: set[str] = set()
        self._asked: dict[str, int] = {}
        self._lock = threading.Lock()  # what is kept, and the numbers
        # One write at a time: they commit in the events' order.
        self._writing = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    # -- on the workflow's event loop --

    def add(self, event: RunEvent) -> bool:
        """Keep `event` to write; True when it must be written before the run goes on (a call is about to wait
        for a decision: the caller writes it, `flush`, off the event loop)."""
        kind = event.type
        with self._lock:
            seq = self._place(kind, event.seq)
            if seq is None:
                return False
            self._last = seq
            self._waiting.append((seq, event))
            if kind == "approval_requested":
                call_id = str(event.data["id"])
                self._pending.add(call_id)
                # Counted as the approver counts them (durable_tools.py): a replay makes the same asks in order.
                self._asked[call_id] = self._asked.get(call_id, 0) + 1
                data = event.data
                ask = Ask(
                    call_id,
                    str(data["name"]),
                    str(data["arguments"]),
                    self._asked[call_id],
                    self.request.deadline_at,
                )
                self._asks.append(ask)
            elif kind == "approval_decided":
                self._pending.discard(str(event.data["id"]))
            elif kind == "error" and event.data.get("fatal"):
                self._error = error_fields(event.data)
            if kind in _STATE_CHANGES:
                self._keep_state(event)
        if kind == "approval_requested":
            return True
        self._later()
        return False

    def _keep_state(self, event: RunEvent) -> None:
        """The run's row as of `event` (its messages copied now, on the loop's thread; encoded when written)."""
        data = event.data
        finished = event.type == "run_finished"
        self._ended = self._ended or finished
        stop = data.get("stop_reason") if finished else None
        self._status = (
            status_of(stop)
            if finished
            else "awaiting_approval"
            if self._pending
            else "running"
        )
        self._state = RunRecord(
            request=self.request,
            messages=list(self._messages()),
            metrics=data.get("metrics") if finished else None,
            stop_reason=stop,
            steps=int(data.get("steps") or 0),
            error=self._error if finished and stop == "error" else None,
        )

    def _place(self, kind: str, seq: int) -> int | None:
        """The stored number of the loop's event `seq` of `kind`; None for progress a replay has no place for."""
        if self._prior is None:
            self._prior, self._progress_rows = stored_before(self.store, self.run_id)
        place = seq + self.offset + self.drift
        if place > self._prior:
            return place
        if kind == _PROGRESS:
            if place in self._progress_rows:
                return place  # on a stored progress row, which stays as it was
            self.drift -= 1
            return None
        while place in self._progress_rows:
            # Progress the earlier process stored and this replay did not make: stepped over.
            self.drift += 1
            place += 1
        return place

    def _later(self) -> None:
        """What is kept gets written within the batch time even if no step start or end writes it first."""
        if self._timer is not None:
            return
        if self._loop is None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # handed events outside an event loop: its caller writes them (flush)
        self._timer = self._loop.call_later(_BATCH_SECONDS, self._due)

    def _due(self) -> None:
        self._timer = None
        with self._lock:
            # A row kept that is not due yet waits for the next write: no hop to a write that would write nothing.
            due = bool(self._waiting) or (
                self._state is not None and self._state_due(time.monotonic())
            )
        if due:
            # On the store's writer thread, the event loop waiting for nothing; a write that fails there keeps
            # its events for the next one, whose error it is to raise.
            self.store.later(self._flush_quietly)

    def _state_due(self, now: float) -> bool:
        """Whether the run's row kept is to be written now: its status changed, the run ended, or it was last
        written _STATE_SECONDS ago or more."""
        return (
            self._status != self._written_status
            or self._ended
            or now - self._written_at >= _STATE_SECONDS
        )

    def _flush_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self.flush()

    def close(self) -> None:
        """No timer left to fire (the run has ended, its last write done)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- on a worker thread --

    def flush(self, attempt: str | None = None, *, model_call: bool = False) -> int:
        """Write what is kept, in one transaction; with `attempt`, one more start of that tool call too (its starts
        before this one are returned). `model_call`: a model call is about to run for the first time."""
        with self._writing:
            now = time.monotonic()
            with self._lock:
                if model_call:
                    self._after_cut_call()
                taken, self._waiting = self._waiting, []
                status, state = self._status, self._state
                if state is not None and self._state_due(now):
                    self._state = None
                else:
                    state = None  # kept for a later write
                asks, self._asks = self._asks, []
            if not (taken or state or asks or attempt):
                return 0
            try:
                rows: list[EventRow] = [event_row(event, seq) for seq, event in taken]
                run = None if state is None else (status, state_dumps(state.to_json()))
                ended = bool(rows) and rows[-1].type == "run_finished"
                before = self.store.write(
                    self.run_id, rows, run=run, asks=asks, attempt=attempt, ended=ended
                )
            except BaseException:
                with self._lock:
                    # Kept for the next write, in their place before whatever came meanwhile.
                    self._waiting[:0] = taken
                    self._asks[:0] = asks
                    if self._state is None:
                        self._state = state
                raise
            if state is not None:
                self._written_status, self._written_at = status, now
            return before

    def _after_cut_call(self) -> None:
        """Rows past this process's numbers were stored by a model call a crash cut short: kept, and said by an
        `error` event after them, the numbers going on after it."""
        if self._prior is None or self._prior <= self._last:
            return
        seq = self._prior + 1
        note = ErrorEvent(
            conversation_id=self.request.conversation_id,
            seq=seq,
            time=time.time(),
            message="the server stopped while this model call ran; it is made again from the start",
            error_type="interrupted",
        )
        self._waiting.append((seq, note))
        self.offset += seq - self._last
        self._last = seq

    # -- what the steps ask, on the event loop --

    def model_call_offset(self) -> int:
        """`begin_model_call` for a step's thread."""
        with self._lock:
            if (self._prior or 0) <= self._last:
                return self.offset
        self.flush(model_call=True)
        with self._lock:
            return self.offset

    async def begin_model_call(self) -> int:
        """Before a model call runs for the first time: the offset to record. When rows a call cut by a crash left
        are past this process's numbers, the note that says so is written first (a replay of the recorded offset
        would not make it again)."""
        with self._lock:
            if (self._prior or 0) <= self._last:
                return self.offset
        await asyncio.to_thread(self.flush, model_call=True)
        with self._lock:
            return self.offset

    def count_tool_start(self, attempt: str | None) -> int:
        """A tool call's handler is about to start, on its step's thread: its start (keyed `attempt`) counted, with
        what is kept, in one write; the starts before this one. None: a call safe to repeat, not counted."""
        return 0 if attempt is None else self.flush(attempt)

    def set_offset(self, offset: int) -> None:
        """A recorded model call replays: its events are numbered as when it ran."""
        with self._lock:
            self._last += offset - self.offset
            self.offset = offset
