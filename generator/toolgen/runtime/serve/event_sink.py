# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Where a served run's events go: its store, in order, keyed so that a replay writes nothing twice.

The workflow hands the sink every event the loop makes. Stream pieces are written in batches at most
_PIECE_BATCH_SECONDS apart (a commit per word would cost more than the word); every other event is written at
once, with the run's status and conversation. A replay after a restart makes the same events with the same
numbers, and the store keeps the rows it has. A model call that was streaming when the process died left rows
the replay does not make: they stay (a reader may have seen them), an `error` event after them says the call is
made again, and the events from there on are numbered after them (`offset`, recorded by the model call's step so
that every later replay numbers them the same).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..loop.events import RunEvent
from .run_record import RunRecord, RunRequest
from .store import RunStore, StoredEvent

PIECES = frozenset({"text_delta", "reasoning_delta", "tool_call_delta"})
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
        self._last = 0  # the number of the last event handed on, offset included
        self._waiting: list[StoredEvent] = []
        self._pending: set[str] = set()
        self._asked: dict[str, int] = {}
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def add(self, event: RunEvent) -> None:
        seq = event.seq + self.offset
        stored = StoredEvent(
            seq, event.type, event.data, event.time, event.trace_id, event.span_id
        )
        with self._lock:
            self._last = seq
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
