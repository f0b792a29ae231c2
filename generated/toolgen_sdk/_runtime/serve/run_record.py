# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A served run's state as the store keeps it, versioned: what it was asked, where it stands, and its JSON form.

`RUN_STATE_VERSION` names the form. A release reads the forms of its own version and of every earlier one it
knows (a row written before run state had a version reads as version 0: the same fields, no request settings);
a form of a later version, or a run left unfinished by an engine whose workflows this one cannot resume, is
refused with a message naming both versions, never read wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RUN_STATE_VERSION = 1
# The run state forms this release reads: its own, and the unversioned one before it.
_READABLE = (0, 1)


class RunStateVersionError(ValueError):
    """A stored run this release cannot read or resume: the message names its version and this release's."""


@dataclass(frozen=True)
class RunRequest:
    """What a served run was asked to do, fixed when it starts: every replay of its workflow reads the same.

    `deadline_at` is wall-clock (seconds since the epoch), so that it holds across a restart; None: no deadline.
    """

    messages: Sequence[Mapping[str, Any]]
    conversation_id: str
    deadline_at: float | None = None
    max_steps: int | None = None
    max_tool_calls: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": _plain(self.messages),
            "conversation_id": self.conversation_id,
            "deadline_at": self.deadline_at,
            "max_steps": self.max_steps,
            "max_tool_calls": self.max_tool_calls,
        }


@dataclass(frozen=True)
class RunRecord:
    """A run's row: the request it started with and, as it goes, its conversation, metrics and stop; `error`, for a
    run that stopped with `error`, the fatal `error` event's {"type", "message", "code", "status"} (None: none
    recorded, as in every row written before the field was kept)."""

    request: RunRequest | None
    messages: Sequence[Mapping[str, Any]] = ()
    metrics: Mapping[str, Any] | None = None
    stop_reason: str | None = None
    steps: int = 0
    version: int = RUN_STATE_VERSION
    error: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": RUN_STATE_VERSION,
            "request": None if self.request is None else self.request.to_json(),
            "messages": _plain(self.messages),
            "metrics": None if self.metrics is None else dict(self.metrics),
            "stop_reason": self.stop_reason,
            "steps": self.steps,
            "error": None if self.error is None else dict(self.error),
        }


def error_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """What a run's state keeps of the `error` event that ended it: its type, message, code and status."""
    return {key: data.get(key) for key in ("type", "message", "code", "status")}


def stored_error(state: Any) -> dict[str, Any] | None:
    """The error a stored run's state keeps (error_fields), as GET /runs shows it; None for a state with none."""
    error = state.get("error") if isinstance(state, Mapping) else None
    return error_fields(error) if isinstance(error, Mapping) else None


def _plain(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The messages as JSON can encode them: a form to encode at once, so a dict is not copied (a run of many
    messages would be copied twice at every write of its row)."""
    return [m if type(m) is dict else dict(m) for m in messages]


def record_from_json(form: Mapping[str, Any], run_id: str = "") -> RunRecord:
    """The record a stored form describes; RunStateVersionError for one of a version this release cannot read."""
    version = form.get("version", 0)
    named = f"run {run_id!r}" if run_id else "this run"
    if version not in _READABLE:
        raise RunStateVersionError(
            f"{named} was stored with run state version {version!r}; this release reads versions "
            f"up to {RUN_STATE_VERSION}: resume it with the release that started it"
        )
    asked = form.get("request")
    request = None
    if isinstance(asked, Mapping):
        request = RunRequest(
            messages=list(asked.get("messages") or ()),
            conversation_id=str(asked.get("conversation_id") or run_id),
            deadline_at=asked.get("deadline_at"),
            max_steps=asked.get("max_steps"),
            max_tool_calls=asked.get("max_tool_calls"),
        )
    messages = form.get("messages") or ()
    metrics = form.get("metrics")
    steps = form.get("steps")
    error = form.get("error")
    return RunRecord(
        request=request,
        messages=list(messages) if isinstance(messages, list) else [],
        metrics=metrics if isinstance(metrics, Mapping) else None,
        stop_reason=form.get("stop_reason"),
        steps=steps if isinstance(steps, int) else 0,
        version=int(version),
        error=error if isinstance(error, Mapping) else None,
    )
