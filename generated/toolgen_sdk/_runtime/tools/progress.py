# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A tool call's progress reports: what `ctx.report_progress()` accepts, made sane, and handed to the run.

A handler calls `ctx.report_progress(progress, total=None, message=None)` as often as it likes; the call never
raises and never waits on the run (it keeps the latest report and wakes the loop, which hands reports on as
`tool_call_progress` events at its own pace: loop/progress.py; a served MCP call that carries a progress token
sends them to its client: mcp/server_progress.py). Outside both (no one gave the context a sink,
as for a bare `Registry.dispatch(call)`) it does nothing. What is reported is made sane rather than refused:

- `progress` must be a finite real number (an int or a float, not a bool): anything else (None, NaN, an
  infinity, a string) drops the report, since there is no number to show; a sink with a `refused(progress)`
  method hears of each such report (the run's notes it once per call: loop/progress.py);
- below 0 it is 0; with a `total`, above the total it is the total;
- `total` is kept only when it is a finite number above 0, otherwise the total is unknown (None);
- `message` is kept only when it is a string, cut to MAX_PROGRESS_MESSAGE characters (a lone surrogate, which no
  wire can carry, becomes U+FFFD).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from typing import Any

from .guards import cut_text, sendable

# Where a context's reports go: (progress, total, message), already made sane.
ProgressSink = Callable[[float, float | None, str | None], None]

# The longest progress message handed on: a status line, not a log.
MAX_PROGRESS_MESSAGE = 500


def progress_values(
    progress: Any, total: Any = None, message: Any = None
) -> tuple[float, float | None, str | None] | None:
    """The report as it is handed on, by the rules above; None when it is no report."""
    value = _finite(progress)
    if value is None:
        return None
    limit = _finite(total)
    if limit is not None and limit <= 0:
        limit = None
    value = max(value, 0.0)
    if limit is not None:
        value = min(value, limit)
    text = (
        sendable(cut_text(str.__str__(message), MAX_PROGRESS_MESSAGE))
        if isinstance(message, str)
        else None
    )
    return value, limit, text


def report_progress(
    sink: ProgressSink | None, progress: Any, total: Any = None, message: Any = None
) -> None:
    """Hand a report to `sink` (nothing without one); whatever goes wrong stays here, never in the handler."""
    if sink is None:
        return
    try:
        values = progress_values(progress, total, message)
        if values is not None:
            sink(*values)
            return
        refused = getattr(sink, "refused", None)
        if callable(refused):
            refused(_described(progress))
    except Exception:  # noqa: BLE001, S110 - progress is informational: a report lost beats a tool broken
        pass


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _described(progress: Any) -> str:
    """A refused progress value, for a note: a number as it reads, anything else by its type."""
    if isinstance(progress, float) or (
        isinstance(progress, Real) and not isinstance(progress, bool)
    ):
        return cut_text(repr(progress), 40)
    return "None" if progress is None else f"of type {type(progress).__name__}"
