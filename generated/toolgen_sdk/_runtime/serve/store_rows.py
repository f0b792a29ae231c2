# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The rows of the service's store as Python values: events, runs and asks, and the JSON and SSE text they are kept as."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..loop.events import (
    EVENTS_VERSION,
    STRICT_JSON_ASCII,
    STRICT_JSON_TEXT,
    ErrorEvent,
    EventFormError,
    RunEvent,
    event_from_json,
    finite_json,
    non_finite_note,
    sse_encode,
)
from .run_record import stored_error

# The JSON the store keeps is the form sse_encode sends (strict: a NaN raises, and the callers write it as null).
_JSON_TEXT = STRICT_JSON_TEXT
_JSON_ASCII = STRICT_JSON_ASCII


@dataclass(frozen=True)
class StoredEvent:
    """One run event as stored: its sequence number (the SSE `id:`), type, JSON data, and when it happened
    and in which trace (as on the RunEvent it came from), so the page and a trace can be joined."""

    seq: int
    type: str
    data: Mapping[str, Any]
    time: float | None = None
    trace_id: str | None = None
    span_id: str | None = None
    # The event form's version (EVENTS_VERSION when written; None: a row from before events had one).
    version: int | None = None

    def event(self, conversation_id: str) -> RunEvent:
        """The run event this row keeps, read by the one JSON form events have (rows from before events had a
        version read as version 1). A row no event form fits (written by a later release, or by hand) comes back
        as an `error` event at its place that says so, rather than ending the stream or vanishing."""
        form: dict[str, Any] = {
            "type": self.type,
            "conversation_id": conversation_id,
            "seq": self.seq,
            "time": self.time,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "data": self.data,
        }
        if self.version is not None:
            form["version"] = self.version
        try:
            return event_from_json(form)
        except EventFormError as error:
            return ErrorEvent(
                conversation_id=conversation_id,
                seq=self.seq,
                time=self.time,
                message=f"the stored event {self.seq} ({self.type}) could not be read: {error}",
                error_type="unreadable_event",
            )


class EventRow(NamedTuple):
    """An event as `write` stores it: its columns, JSON text and SSE text made already."""

    seq: int
    type: str
    data: str
    time: float | None
    trace_id: str | None
    span_id: str | None
    version: int
    sse: str | None


class Ask(NamedTuple):
    """A call waiting for a decision, as `write` keeps it: `round` counts the asks about its call id; `deadline`
    is the run's (epoch seconds, None: none), past which no decision is taken."""

    call_id: str
    name: str
    arguments: str
    round: int
    deadline: float | None = None


@dataclass(frozen=True)
class StoredRun:
    """A run's row: its status and the state the workflow last wrote (messages, metrics, stop reason)."""

    id: str
    conversation_id: str
    status: str
    state: Mapping[str, Any]


def dumps(value: Any) -> str:
    """JSON text as the store keeps it: strict, a NaN or infinite number as null (an event's SSE text, kept beside
    it, says where); a lone surrogate (which no database text holds) as its escape."""
    try:
        text = _JSON_TEXT(value)
    except ValueError:
        value = finite_json(value)[0]
        text = _JSON_TEXT(value)
    if text.isascii() or _utf8(text):
        return text
    return _JSON_ASCII(value)


def state_dumps(state: Mapping[str, Any]) -> str:
    """A run's state as the store keeps it (`dumps`), a NaN or infinite number in it as null and said in the
    state's `notes`, which GET /runs/{id} answers with: a run read back later says what it said when written."""
    try:
        text = _JSON_TEXT(state)
    except ValueError:
        plain, replaced = finite_json(dict(state))
        notes = plain.get("notes")
        kept = list(notes) if isinstance(notes, list) else []
        return dumps({**plain, "notes": [*kept, non_finite_note(replaced)]})
    if text.isascii() or _utf8(text):
        return text
    return _JSON_ASCII(state)


def event_row(event: RunEvent, seq: int) -> EventRow:
    """`event` as stored under `seq` (its own, or after a replay's offset), with its SSE text: the text
    `sse_encode` gives the event under that seq, made from the data's JSON text rather than a second encoding."""
    try:
        data: str | None = _JSON_TEXT(event.data)
    except ValueError:
        data = None  # a NaN or Infinity: written as null, and said, by sse_encode below
    head = {
        "version": EVENTS_VERSION,
        "type": event.type,
        "conversation_id": event.conversation_id,
        "seq": seq,
        "time": event.time,
        "trace_id": event.trace_id,
        "span_id": event.span_id,
    }
    # The JSON of to_json(), whose `data` comes last: the head's text without its `}`, then the data.
    payload = "" if data is None else f'{_JSON_TEXT(head)[:-1]},"data":{data}}}'
    if data is not None and (payload.isascii() or _utf8(payload)):
        sse = f"event: {event.type}\nid: {seq}\ndata: {payload}\n\n"
    else:
        # A lone surrogate, which no database text holds: escaped, in the data's text and (as sse_encode
        # escapes it) in the whole payload; or a number JSON has no form for, null in both (the SSE text's
        # `notes` say where).
        data = dumps(event.data)
        placed = object.__new__(type(event))
        vars(placed).update(vars(event), seq=seq)
        sse = sse_encode(placed)
    return EventRow(
        seq,
        event.type,
        data,
        event.time,
        event.trace_id,
        event.span_id,
        EVENTS_VERSION,
        sse,
    )


def strict_sse(text: str) -> bool:
    """Whether a kept SSE text's JSON is strict: False for one holding NaN or Infinity, which a release before
    events were strict JSON kept. Parsed only when it holds either word (a `notes` list names them too)."""
    if "NaN" not in text and "Infinity" not in text:
        return True
    payload = "\n".join(
        line[6:] for line in text.split("\n") if line.startswith("data: ")
    )
    try:
        json.loads(payload, parse_constant=_refuse)
    except ValueError:
        return False
    return True


def _refuse(word: str) -> None:
    raise ValueError(f"{word} is not JSON")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def stored_event(row: Any) -> StoredEvent:
    """A row of `SELECT seq, type, data, time, trace_id, span_id, version`."""
    return StoredEvent(
        int(row[0]),
        str(row[1]),
        json.loads(row[2]),
        None if row[3] is None else float(row[3]),
        row[4],
        row[5],
        None if row[6] is None else int(row[6]),
    )


def listed_run(
    run_id: str, conversation_id: str, status: str, state_text: str, created: float
) -> dict[str, Any]:
    """A run as GET /runs lists it: its first user message's text as `prompt`, cut to 200 characters."""
    state = json.loads(state_text)
    messages = state.get("messages") if isinstance(state, dict) else None
    first = next(
        (m for m in messages or () if isinstance(m, dict) and m.get("role") == "user"),
        {},
    )
    content = first.get("content")
    parts = content if isinstance(content, list) else [content]
    text = " ".join(
        part if isinstance(part, str) else str(part.get("text") or "")
        for part in parts
        if isinstance(part, str)
        or (isinstance(part, dict) and part.get("type") == "text")
    )
    return {
        "id": run_id,
        "conversation_id": conversation_id,
        "status": status,
        "stop_reason": state.get("stop_reason") if isinstance(state, dict) else None,
        "error": stored_error(state),
        "created": float(created),
        "prompt": text[:200],
    }
