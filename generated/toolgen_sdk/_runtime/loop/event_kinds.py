# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The kinds of run event, one frozen dataclass each, and their one JSON form (to_json / event_from_json).

Every event carries the run's conversation id, its sequence number in the run, the wall-clock time it happened
(`time`, seconds since the epoch) and the OpenTelemetry trace and span ids it belongs to (hex; None when tracing
is off); its own fields come under `data` in the JSON form, with `version` saying which form it is. A form stored
before events had a version (the release before EVENTS_VERSION 1) is read as version 1: its fields are the same,
and a field added since takes its default. A kind added since (`tool_call_progress`) leaves the version as it is,
since no form changed: a release before it reads such a stored row as an `unreadable_event` error in its place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal, cast, get_args

# The JSON form of an event; a newer one is refused by name rather than read wrong.
EVENTS_VERSION = 1

EventType = Literal[
    "run_started",
    "model_call_started",
    "text_delta",
    "reasoning_delta",
    "model_call_finished",
    "approval_requested",
    "approval_decided",
    "tool_call_started",
    "tool_call_delta",
    "tool_call_progress",
    "tool_call_finished",
    "final_message",
    "error",
    "note",
    "run_finished",
]
_ENVELOPE = ("type", "conversation_id", "seq", "time", "trace_id", "span_id")


class EventFormError(ValueError):
    """A JSON form that is no run event this release reads: the message says what is wrong with it."""


@dataclass(frozen=True, kw_only=True)
class EventBase:
    """What every run event has: the run it belongs to, its place in it, when, and in which trace."""

    # Each kind's own field names, in order (set below, once its dataclass exists), and the JSON names of the few
    # that differ from their attribute (an error's `type` would collide with the event's own).
    FIELDS: ClassVar[tuple[str, ...]] = ()
    JSON_NAMES: ClassVar[Mapping[str, str]] = MappingProxyType({})

    conversation_id: str
    seq: int
    time: float | None = None
    trace_id: str | None = None
    span_id: str | None = None

    @property
    def data(self) -> dict[str, Any]:
        """The kind's own fields, by their JSON names: what `data` holds in the JSON form."""
        names = self.JSON_NAMES
        values = vars(self)
        return {names.get(name, name): values[name] for name in self.FIELDS}

    def to_json(self) -> dict[str, Any]:
        """The event's JSON form: the one SSE, the store, the page and the command line use."""
        values = vars(self)
        return {
            "version": EVENTS_VERSION,
            "type": values["type"],
            "conversation_id": self.conversation_id,
            "seq": self.seq,
            "time": self.time,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "data": self.data,
        }


@dataclass(frozen=True, kw_only=True)
class RunStartedEvent(EventBase):
    """The run began with `messages` messages in its conversation."""

    type: Literal["run_started"] = "run_started"
    messages: int


@dataclass(frozen=True, kw_only=True)
class ModelCallStartedEvent(EventBase):
    """A model call of step `step` began; `attempt` counts the calls made for that step (1 unless retried)."""

    type: Literal["model_call_started"] = "model_call_started"
    step: int
    attempt: int


@dataclass(frozen=True, kw_only=True)
class TextDeltaEvent(EventBase):
    """A piece of the answer's text, as streamed (a whole answer's text in one piece when not streamed)."""

    type: Literal["text_delta"] = "text_delta"
    text: str


@dataclass(frozen=True, kw_only=True)
class ReasoningDeltaEvent(EventBase):
    """A piece of the model's reasoning text, as the wire gave it."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


@dataclass(frozen=True, kw_only=True)
class ModelCallFinishedEvent(EventBase):
    """A model call ended: how long it took, how it finished (`error` when it failed), its token usage, and the
    model that answered (the response's model name, else the client's; None when neither says)."""

    type: Literal["model_call_finished"] = "model_call_finished"
    step: int
    attempt: int
    duration_ms: float
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    model: str | None = None


@dataclass(frozen=True, kw_only=True)
class ApprovalRequestedEvent(EventBase):
    """A call to a tool that requires approval waits for a decision."""

    type: Literal["approval_requested"] = "approval_requested"
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, kw_only=True)
class ApprovalDecidedEvent(EventBase):
    """The decision on a call: approve, deny or edit (`arguments` are the ones that will run)."""

    type: Literal["approval_decided"] = "approval_decided"
    id: str
    name: str
    decision: Literal["approve", "deny", "edit"]
    reason: str | None = None
    arguments: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolCallStartedEvent(EventBase):
    """A tool call: announced by a stream (arguments None, `index` its place in the answer, the id None on wires
    that give calls none), or, when no stream announced it, about to run (its arguments, index None)."""

    type: Literal["tool_call_started"] = "tool_call_started"
    id: str | None
    name: str | None
    arguments: str | None = None
    index: int | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCallDeltaEvent(EventBase):
    """A fragment of a streamed call's arguments, as the wire sent it."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolCallProgressEvent(EventBase):
    """How far a running call has got, as its handler (or the MCP server behind it) reported: `progress` out of
    `total` (None: not known), and a `message`; coalesced, at most one every PROGRESS_INTERVAL per call
    (loop/progress.py). Informational: nothing else in the run depends on it."""

    type: Literal["tool_call_progress"] = "tool_call_progress"
    id: str
    name: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCallFinishedEvent(EventBase):
    """What became of a call: ok, error (the tool failed), denied, or skipped (a limit, a stop, a stream that broke
    off: `error_kind` says which); `content` is what the model reads (None for a call that was only announced)."""

    type: Literal["tool_call_finished"] = "tool_call_finished"
    id: str | None
    name: str | None
    status: Literal["ok", "error", "denied", "skipped"]
    error_kind: str | None = None
    duration_ms: float = 0.0
    content: str | list[Any] | None = None


@dataclass(frozen=True, kw_only=True)
class FinalMessageEvent(EventBase):
    """The answer: the model's last message, or a returnDirect tool's result as an assistant message."""

    type: Literal["final_message"] = "final_message"
    message: Mapping[str, Any]
    stop_reason: str


@dataclass(frozen=True, kw_only=True)
class ErrorEvent(EventBase):
    """Something failed: `fatal` when it ends the run; `retry` is the attempt about to be made when the failed model
    call is made again. `error_type` is `type` in the JSON form."""

    JSON_NAMES: ClassVar[Mapping[str, str]] = MappingProxyType({"error_type": "type"})

    type: Literal["error"] = "error"
    message: str
    error_type: str | None = None
    code: str | int | None = None
    status: int | None = None
    fatal: bool = False
    retry: int | None = None


@dataclass(frozen=True, kw_only=True)
class NoteEvent(EventBase):
    """Something the run did not do as asked, said rather than done in silence: a setting the model's wire cannot
    carry, left out (`setting` names it), or content the request holds where its wire cannot, moved or dropped
    (setting None; the message names the part by its pointer); or what an answer held that was not read as sent
    (a finish value no table knows, a usage count left out as unreadable, usage a stream never sent); or a tool
    call's result sent otherwise than given, or its progress reports not sent (CallReport.notes)."""

    type: Literal["note"] = "note"
    message: str
    setting: str | None = None
    wire: str | None = None


@dataclass(frozen=True, kw_only=True)
class RunFinishedEvent(EventBase):
    """The run's last event: why it stopped, the model steps it took, and its metrics."""

    type: Literal["run_finished"] = "run_finished"
    stop_reason: str
    steps: int
    metrics: Mapping[str, Any]


# Every kind of run event: what on_event gets, the drivers yield and event_from_json returns.
RunEvent = (
    RunStartedEvent
    | ModelCallStartedEvent
    | TextDeltaEvent
    | ReasoningDeltaEvent
    | ModelCallFinishedEvent
    | ApprovalRequestedEvent
    | ApprovalDecidedEvent
    | ToolCallStartedEvent
    | ToolCallDeltaEvent
    | ToolCallProgressEvent
    | ToolCallFinishedEvent
    | FinalMessageEvent
    | ErrorEvent
    | NoteEvent
    | RunFinishedEvent
)

EVENT_CLASSES: Mapping[str, type[EventBase]] = MappingProxyType(
    {
        "run_started": RunStartedEvent,
        "model_call_started": ModelCallStartedEvent,
        "text_delta": TextDeltaEvent,
        "reasoning_delta": ReasoningDeltaEvent,
        "model_call_finished": ModelCallFinishedEvent,
        "approval_requested": ApprovalRequestedEvent,
        "approval_decided": ApprovalDecidedEvent,
        "tool_call_started": ToolCallStartedEvent,
        "tool_call_delta": ToolCallDeltaEvent,
        "tool_call_progress": ToolCallProgressEvent,
        "tool_call_finished": ToolCallFinishedEvent,
        "final_message": FinalMessageEvent,
        "error": ErrorEvent,
        "note": NoteEvent,
        "run_finished": RunFinishedEvent,
    }
)
EVENT_TYPES: tuple[EventType, ...] = get_args(EventType)

for _kind in EVENT_CLASSES.values():
    _kind.FIELDS = tuple(
        field.name for field in dataclasses.fields(_kind) if field.name not in _ENVELOPE
    )
del _kind


def event_from_json(form: Mapping[str, Any]) -> RunEvent:
    """The event a JSON form (to_json's) describes; EventFormError says what is wrong with one that is not."""
    if not isinstance(form, Mapping):
        raise EventFormError(f"a run event is a JSON object, not {type(form).__name__}")
    version = form.get("version", EVENTS_VERSION)
    if version != EVENTS_VERSION:
        raise EventFormError(
            f"this run event has version {version!r}; this release reads version {EVENTS_VERSION}"
        )
    kind = EVENT_CLASSES.get(str(form.get("type")))
    if kind is None:
        raise EventFormError(f"{form.get('type')!r} is no kind of run event")
    data = form.get("data")
    if not isinstance(data, Mapping):
        raise EventFormError(f"a {form['type']} event's data must be a JSON object")
    names = {json_name: name for name, json_name in kind.JSON_NAMES.items()}
    fields: dict[str, Any] = {
        names.get(str(key), str(key)): value for key, value in data.items()
    }
    unknown = sorted(set(fields) - set(kind.FIELDS))
    if unknown:
        raise EventFormError(f"a {form['type']} event has no field {unknown[0]!r}")
    missing = [
        field.name
        for field in dataclasses.fields(kind)
        if field.name in kind.FIELDS
        and field.name not in fields
        and field.default is dataclasses.MISSING
    ]
    if missing:
        raise EventFormError(f"a {form['type']} event needs the field {missing[0]!r}")
    seq = form.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise EventFormError(f"a run event's seq must be a whole number, not {seq!r}")
    event = kind(
        conversation_id=str(form.get("conversation_id", "")),
        seq=seq,
        time=form.get("time"),
        trace_id=form.get("trace_id"),
        span_id=form.get("span_id"),
        **fields,
    )
    return cast(RunEvent, event)
