# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a run gives back: why it stopped, a report per tool call, metrics per tool and for the run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..wires.canonical import parts_of

# length and content_filter: the model's answer was cut at the token limit or withheld by the provider's filter;
# deadline: the run's RunOptions.deadline passed (or its cancel token said so).
StopReason = Literal[
    "finished",
    "return_direct",
    "max_steps",
    "max_tool_calls",
    "cancelled",
    "deadline",
    "length",
    "content_filter",
    "error",
]
CallStatus = Literal["ok", "error", "denied", "skipped"]


@dataclass(frozen=True)
class CallReport:
    """What became of one tool call: ok, error (the tool failed), denied (approval), or skipped (a limit or a stop)."""

    call_id: str
    name: str
    arguments: str
    status: CallStatus
    content: str | list[Any]
    seconds: float = 0.0
    error_kind: str | None = None
    result: Any = None
    # What was sent otherwise than the tool gave it, or not sent (ToolOutcome.notes, progress reports refused):
    # each also a `note` event of the run.
    notes: tuple[str, ...] = ()

    def to_message(self) -> dict[str, Any]:
        """The canonical tool message answering the call."""
        message: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": self.call_id,
            "name": self.name,
        }
        message["content"] = self.content
        if self.status != "ok":
            message["is_error"] = True
        return message


@dataclass
class ToolStats:
    """Calls of one tool: how many ran, how they ended, how long they took."""

    calls: int = 0
    ok: int = 0
    errors: int = 0
    denied: int = 0
    skipped: int = 0
    seconds: float = 0.0
    max_seconds: float = 0.0

    @property
    def success_rate(self) -> float | None:
        """Share of the calls that ran which succeeded; None before any ran."""
        return self.ok / self.calls if self.calls else None

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "ok": self.ok,
            "errors": self.errors,
            "denied": self.denied,
            "skipped": self.skipped,
            "success_rate": self.success_rate,
            "seconds": round(self.seconds, 6),
            "max_seconds": round(self.max_seconds, 6),
        }


@dataclass
class RunMetrics:
    """Model calls and their durations, token usage summed over the run, and statistics per tool."""

    model_calls: int = 0
    model_seconds: list[float] = field(default_factory=list)
    # Model calls made again: a stream that broke off, a conversation trimmed after a context-length error, and
    # the requests the model client sent again itself (a 429, a 5xx, a dropped connection).
    model_retries: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    tools: dict[str, ToolStats] = field(default_factory=dict)

    @property
    def tool_calls(self) -> int:
        return sum(stats.calls for stats in self.tools.values())

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        for key, value in (usage or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value

    def add_call(self, report: CallReport) -> None:
        stats = self.tools.setdefault(report.name, ToolStats())
        if report.status in ("ok", "error"):
            stats.calls += 1
            stats.seconds += report.seconds
            stats.max_seconds = max(stats.max_seconds, report.seconds)
        if report.status == "ok":
            stats.ok += 1
        elif report.status == "error":
            stats.errors += 1
        elif report.status == "denied":
            stats.denied += 1
        else:
            stats.skipped += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "model_calls": self.model_calls,
            "model_seconds": [round(s, 6) for s in self.model_seconds],
            "model_retries": self.model_retries,
            "tool_calls": self.tool_calls,
            "usage": dict(self.usage),
            "tools": {
                name: stats.to_json() for name, stats in sorted(self.tools.items())
            },
        }


@dataclass(frozen=True)
class RunResult:
    """How a run ended: the answer, the whole conversation, why it stopped, every tool call, and the metrics.

    `final` is the answer when the run finished (the model's last message) or hit returnDirect (the tool's
    result as an assistant message); after another stop it is the last assistant message, if any.
    """

    final: dict[str, Any] | None
    messages: list[dict[str, Any]]
    stop_reason: StopReason
    metrics: RunMetrics
    conversation_id: str
    steps: int
    calls: tuple[CallReport, ...] = ()
    error: BaseException | None = None

    @property
    def text(self) -> str | None:
        """The text of the final message, parts joined; None when there is none."""
        if self.final is None:
            return None
        texts = [
            p["text"]
            for p in parts_of(self.final.get("content"))
            if p.get("type") == "text" and "text" in p
        ]
        return "".join(str(t) for t in texts) if texts else None
