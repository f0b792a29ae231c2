# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Statistics across runs, per tool and per model: calls, errors, success rate and p50/p95 durations over a window.

A `RunStats` collects them from run events as they happen, from any number of runs::

    stats = RunStats(window=3600.0)
    run(messages, model, tools, on_event=stats.add)
    print(stats.snapshot().to_json())

It reads two kinds of event and ignores the others:

- `tool_call_finished` {"name", "status", "duration_ms", ...}: per tool name, `calls` are the calls that ran
  (status ok or error), as in RunMetrics' ToolStats; `denied` and `skipped` count the calls that did not run
  (a status other than the four known ones counts as skipped, as there); `success_rate` is ok / calls (None
  before any ran); p50_ms and p95_ms are of the calls that ran.
- `model_call_finished` {"model", "duration_ms", "finish_reason", "usage", ...}: per model name (None or
  missing: "unknown"), `calls`, `errors` (finish_reason "error"), `success_rate` (calls - errors) / calls,
  p50_ms and p95_ms of every call, and input_tokens and output_tokens summed from its usage.

Percentiles are nearest-rank: the p-th percentile of n sorted durations is the one at rank ceil(p / 100 * n)
(1-based), always one of the samples; None when there are none.

The window is the `window` seconds up to `now` (the snapshot's, or the wall clock), by each event's own `time`
(an event without one counts as it arrives). Memory is bounded: samples older than the window are dropped as
events come and at each snapshot; each name keeps at most `max_samples` (10,000) samples, the newest, so past
that many calls in one window a name's counts cover its newest `max_samples`; at most `max_keys` (1,000) names
of each kind are kept, the least recently seen dropped first; a name longer than 200 characters is cut there.
A collector is safe to share between threads and concurrent runs, and nothing an event holds makes `add` raise.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

DEFAULT_WINDOW = 3600.0
MAX_SAMPLES = 10_000
MAX_KEYS = 1_000
UNKNOWN = "unknown"
STATS_EVENT_TYPES = ("tool_call_finished", "model_call_finished")
_MAX_NAME = 200
_RAN = frozenset({"ok", "error"})


class StatsEvent(Protocol):
    """What `RunStats.add` reads of an event: a RunEvent, or an event as the service stores it."""

    @property
    def type(self) -> str: ...

    @property
    def data(self) -> Mapping[str, Any]: ...

    @property
    def time(self) -> float | None: ...


class _ToolSample(NamedTuple):
    time: float
    status: str
    duration_ms: float | None


class _ModelSample(NamedTuple):
    time: float
    error: bool
    duration_ms: float | None
    input_tokens: int
    output_tokens: int


_Sample = TypeVar("_Sample", _ToolSample, _ModelSample)
_Summary = TypeVar("_Summary", "ToolSummary", "ModelSummary")


@dataclass(frozen=True)
class ToolSummary:
    """One tool's calls in the window: those that ran (ok + errors), those that did not, and their durations."""

    calls: int
    ok: int
    errors: int
    denied: int
    skipped: int
    success_rate: float | None
    p50_ms: float | None
    p95_ms: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "ok": self.ok,
            "errors": self.errors,
            "denied": self.denied,
            "skipped": self.skipped,
            "success_rate": self.success_rate,
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
        }


@dataclass(frozen=True)
class ModelSummary:
    """One model's calls in the window: how many, how many failed, their durations and the tokens they used."""

    calls: int
    errors: int
    success_rate: float | None
    p50_ms: float | None
    p95_ms: float | None
    input_tokens: int
    output_tokens: int

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "errors": self.errors,
            "success_rate": self.success_rate,
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


@dataclass(frozen=True)
class StatsReport:
    """The statistics of the `window` seconds from `start` to `end` (epoch seconds), per tool and per model."""

    window: float
    start: float
    end: float
    tools: Mapping[str, ToolSummary]
    models: Mapping[str, ModelSummary]

    def to_json(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "start": self.start,
            "end": self.end,
            "tools": {name: s.to_json() for name, s in self.tools.items()},
            "models": {name: s.to_json() for name, s in self.models.items()},
        }


def nearest_rank(ordered: Sequence[float], percent: float) -> float | None:
    """The nearest-rank percentile of values sorted ascending: the one at rank ceil(percent / 100 * n)."""
    if not ordered:
        return None
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


class _Table(Generic[_Sample]):
    """Samples per name, each name's newest `limit`, at most `keys` names (the least recently added go first)."""

    def __init__(self, limit: int, keys: int) -> None:
        self.limit = limit
        self.keys = keys
        self.samples: OrderedDict[str, deque[_Sample]] = OrderedDict()

    def add(self, name: str, sample: _Sample, cutoff: float) -> None:
        found = self.samples.get(name)
        if found is None:
            if len(self.samples) >= self.keys:
                self.expire(cutoff)
            while len(self.samples) >= self.keys:
                self.samples.popitem(last=False)
            found = self.samples[name] = deque(maxlen=self.limit)
        else:
            self.samples.move_to_end(name)
        found.append(sample)
        _drop_older(found, cutoff)

    def expire(self, cutoff: float) -> None:
        for name in list(self.samples):
            kept = self.samples[name]
            _drop_older(kept, cutoff)
            if not kept:
                del self.samples[name]

    def copy(self) -> list[tuple[str, list[_Sample]]]:
        return [(name, list(kept)) for name, kept in self.samples.items()]


def _drop_older(samples: deque[Any], cutoff: float) -> None:
    # Events of concurrent runs may arrive a little out of order: this drops the old prefix, and a snapshot
    # leaves out any older sample still behind a newer one.
    while samples and samples[0].time < cutoff:
        samples.popleft()


class RunStats:
    """Statistics of the run events it is given (`on_event=stats.add`), over the last `window` seconds.

    Thread-safe; bounded (see the module's docstring): `max_samples` per name, `max_keys` names per kind.
    """

    def __init__(
        self,
        window: float = DEFAULT_WINDOW,
        *,
        max_samples: int = MAX_SAMPLES,
        max_keys: int = MAX_KEYS,
    ) -> None:
        seconds = _number(window)
        if seconds is None or seconds <= 0:
            raise ValueError(
                f"window must be a positive number of seconds, not {window!r}"
            )
        if max_samples < 1 or max_keys < 1:
            raise ValueError("max_samples and max_keys must be at least 1")
        self._window = seconds
        self._lock = threading.Lock()
        self._tools: _Table[_ToolSample] = _Table(max_samples, max_keys)
        self._models: _Table[_ModelSample] = _Table(max_samples, max_keys)

    @property
    def window(self) -> float:
        return self._window

    def add(self, event: StatsEvent) -> None:
        """Count one event if it is a finished tool or model call; any other event is ignored."""
        kind = getattr(event, "type", None)
        if kind not in STATS_EVENT_TYPES:
            return
        data = getattr(event, "data", None)
        if not isinstance(data, Mapping):
            return
        when = _when(getattr(event, "time", None))
        cutoff = when - self._window
        if kind == "tool_call_finished":
            status = data.get("status")
            tool = _ToolSample(
                when,
                status if isinstance(status, str) else "",
                _duration(data.get("duration_ms")),
            )
            with self._lock:
                self._tools.add(_name(data.get("name")), tool, cutoff)
            return
        usage = data.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
        model = _ModelSample(
            when,
            data.get("finish_reason") == "error",
            _duration(data.get("duration_ms")),
            _tokens(usage.get("input_tokens")),
            _tokens(usage.get("output_tokens")),
        )
        with self._lock:
            self._models.add(_name(data.get("model")), model, cutoff)

    def snapshot(self, now: float | None = None) -> StatsReport:
        """The statistics of the window ending at `now` (default: the wall clock); older samples are dropped."""
        end = time.time() if now is None else float(now)
        if not math.isfinite(end):
            raise ValueError(f"now must be a finite time, not {now!r}")
        start = end - self._window
        with self._lock:
            self._tools.expire(start)
            self._models.expire(start)
            tools = self._tools.copy()
            models = self._models.copy()
        return StatsReport(
            self._window,
            start,
            end,
            _sorted_view(
                (name, _tool_summary(_within(kept, start, end))) for name, kept in tools
            ),
            _sorted_view(
                (name, _model_summary(_within(kept, start, end)))
                for name, kept in models
            ),
        )


def _sorted_view(
    pairs: Iterable[tuple[str, _Summary | None]],
) -> Mapping[str, _Summary]:
    """The names with samples in the window, sorted, read-only."""
    kept = {name: summary for name, summary in pairs if summary is not None}
    return MappingProxyType(dict(sorted(kept.items())))


def _within(samples: list[_Sample], start: float, end: float) -> list[_Sample]:
    return [s for s in samples if start <= s.time <= end]


def _tool_summary(samples: list[_ToolSample]) -> ToolSummary | None:
    if not samples:
        return None
    ok = sum(1 for s in samples if s.status == "ok")
    errors = sum(1 for s in samples if s.status == "error")
    denied = sum(1 for s in samples if s.status == "denied")
    durations = sorted(
        s.duration_ms for s in samples if s.status in _RAN and s.duration_ms is not None
    )
    ran = ok + errors
    return ToolSummary(
        calls=ran,
        ok=ok,
        errors=errors,
        denied=denied,
        skipped=len(samples) - ran - denied,
        success_rate=ok / ran if ran else None,
        p50_ms=nearest_rank(durations, 50),
        p95_ms=nearest_rank(durations, 95),
    )


def _model_summary(samples: list[_ModelSample]) -> ModelSummary | None:
    if not samples:
        return None
    durations = sorted(s.duration_ms for s in samples if s.duration_ms is not None)
    errors = sum(1 for s in samples if s.error)
    return ModelSummary(
        calls=len(samples),
        errors=errors,
        success_rate=(len(samples) - errors) / len(samples),
        p50_ms=nearest_rank(durations, 50),
        p95_ms=nearest_rank(durations, 95),
        input_tokens=sum(s.input_tokens for s in samples),
        output_tokens=sum(s.output_tokens for s in samples),
    )


def _number(value: Any) -> float | None:
    """A finite number as a float; None for anything else (a bool, text, NaN, an int too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _when(value: Any) -> float:
    """The event's time; the wall clock for an event without a usable one."""
    number = _number(value)
    return time.time() if number is None else number


def _name(value: Any) -> str:
    if isinstance(value, str) and value:
        return value[:_MAX_NAME]
    return UNKNOWN


def _duration(value: Any) -> float | None:
    number = _number(value)
    return number if number is not None and number >= 0 else None


def _tokens(value: Any) -> int:
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and value > 0
        else 0
    )
