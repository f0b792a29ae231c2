# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Run statistics from the service's store: RunStats' report over the stored events of every run in a window.

The events are read in one query (only the two kinds RunStats counts, only those of the window, oldest first)
and fed to a RunStats as they come, so the report is the one `run(..., on_event=stats.add)` gives, computed by
the same code, and memory stays within RunStats' bounds however many events the window holds.
"""

from __future__ import annotations

import re
import time

from ..loop.stats import DEFAULT_WINDOW, STATS_EVENT_TYPES, RunStats, StatsReport
from .store import RunStore

MIN_WINDOW = 1.0
MAX_WINDOW = 30 * 24 * 3600.0
# Seconds as digits, with up to three decimals: float() would also take "nan", "1e9", " 5" and "1_0".
_SECONDS = re.compile(r"[0-9]{1,8}(?:\.[0-9]{1,3})?")


def parse_window(raw: str | None) -> float | None:
    """The `window` a request asks for, in seconds: the default when it asks none; None when it is no number of
    seconds from 1 to 30 days."""
    if raw is None:
        return DEFAULT_WINDOW
    if not _SECONDS.fullmatch(raw):
        return None
    window = float(raw)
    return window if MIN_WINDOW <= window <= MAX_WINDOW else None


def stored_stats(
    store: RunStore, window: float = DEFAULT_WINDOW, *, now: float | None = None
) -> StatsReport:
    """The statistics of the stored runs' tool and model calls in the `window` seconds up to `now` (the clock)."""
    end = time.time() if now is None else now
    stats = RunStats(window)
    for event in store.events_of_types_since(STATS_EVENT_TYPES, end - window):
        stats.add(event)
    return stats.snapshot(end)
