# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Where a served run's events go: its store, in order, keyed so that a replay writes nothing twice.

The workflow hands the sink every event the loop makes. Stream pieces and tool call progress are written in
batches at most _PIECE_BATCH_SECONDS apart (a commit per word would cost more than the word); every other event
is written at once, with the run's status and conversation. A replay after a restart makes the same events with
the same numbers, and the store keeps the rows it has. A model call that was streaming when the process died left
rows the replay does not make: they stay (a reader may have seen them), an `error` event after them says the call
is made again, and the events from there on are numbered after them (`offset`, recorded by the model call's step
so that every later replay numbers them the same).

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

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..loop.events import RunEvent
from .run_record import RunRecord, RunRequest
from .store import RunStore, StoredEvent

# Written in batches by the sink's timer, and handed to it on the workflow's event loop: many, small, often.
PIECES = frozenset(
    {"text_delta", "reasoning_delta", "tool_call_delta", "tool_call_progress"}
)
_PROGRESS = "tool_call_progress"
_PIECE_BATCH_SECONDS = 0.05
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


class StoreSink:
    """One run's events into the store, numbered with the run's offset, and its row kept current."""

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        request: RunRequest,
        messages: Callable[[], Sequence[Mapping[str, Any]]],
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
        self._prior: int | None = None  # the store's last number when the sink began
        self._progress_rows: set[int] = set()  # the progress rows among them
        self._waiting: list[StoredEvent] = []
        self._pending: set[str] = set()
        self._asked: dict[str, int] = {}
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def add(self, event: RunEvent) -> None:
        with self._lock:
            seq = self._place(event.type, event.seq)
            if seq is None:
                return
            self._last = seq
            stored = StoredEvent(
                seq, event.type, event.data, event.time, event.trace_id, event.span_id
            )
            self._waiting.append(stored)
            if event.type in PIECES:
                # Never written here: the timer writes them, so that the workflow's loop never waits on the store.
                self._later()
                return
            self._flush_locked()
        if event.type == "approval_requested":
            data = event.data
            call_id = str(data["id"])
            self._pending.add(call_id)
            # Counted as the approver counts them (durable_calls.py): a replay makes the same asks in order.
            self._asked[call_id] = self._asked.get(call_id, 0) + 1
            self.store.add_pending(
                self.run_id,
                call_id,
                str(data["name"]),
                str(data["arguments"]),
                self._asked[call_id],
            )
        elif event.type == "approval_decided":
            self._pending.discard(str(event.data["id"]))
        if event.type in _STATE_CHANGES:
            self._write_state(event)

    def _place(self, kind: str, seq: int) -> int | None:
        """The stored number of the loop's event `seq` of `kind`; None for progress a replay has no place for."""
        if self._prior is None:
            # The first event (run_started, handed on off the event loop): the rows an earlier process stored.
            self._prior = self.store.last_seq(self.run_id)
            after = 0
            while after < self._prior:
                page = self.store.events_after(self.run_id, after, 1000)
                if not page:
                    break
                self._progress_rows.update(e.seq for e in page if e.type == _PROGRESS)
                after = page[-1].seq
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
        """Pieces held back are written within the batch time even if nothing follows them."""
        if self._timer is None:
            self._timer = threading.Timer(_PIECE_BATCH_SECONDS, self.flush)
            self._timer.daemon = True
            self._timer.start()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._waiting:
            waiting, self._waiting = self._waiting, []
            self.store.add_events(self.run_id, waiting)

    def _write_state(self, event: RunEvent) -> None:
        stop = event.data.get("stop_reason") if event.type == "run_finished" else None
        metrics = event.data.get("metrics") if event.type == "run_finished" else None
        status = (
            status_of(stop)
            if event.type == "run_finished"
            else "awaiting_approval"
            if self._pending
            else "running"
        )
        record = RunRecord(
            request=self.request,
            messages=list(self._messages()),
            metrics=metrics,
            stop_reason=stop,
            steps=int(event.data.get("steps") or 0),
        )
        self.store.update_run(self.run_id, status, record.to_json())

    # -- what the model call's step asks --

    def begin_model_call(self) -> int:
        """Before a model call runs for the first time: rows a call cut by a crash left are kept and said, and the
        numbers go on after them; the offset to record."""
        self.flush()
        with self._lock:
            stored = self.store.last_seq(self.run_id)
            if stored > self._last:
                note = StoredEvent(
                    stored + 1,
                    "error",
                    {
                        "message": "the server stopped while this model call ran; "
                        "it is made again from the start",
                        "type": "interrupted",
                        "code": None,
                        "status": None,
                        "fatal": False,
                        "retry": None,
                    },
                    time.time(),
                )
                self.store.add_events(self.run_id, [note])
                self.offset += stored + 1 - self._last
                self._last = stored + 1
            return self.offset

    def set_offset(self, offset: int) -> None:
        """A recorded model call replays: its events are numbered as when it ran."""
        with self._lock:
            self._last += offset - self.offset
            self.offset = offset
