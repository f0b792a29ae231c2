# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A remote tool call's progress: requested from the MCP server, and its notifications handed to the call's run.

The handler of an imported tool wraps the call's arguments as ReportingArguments when its context can report
progress (inside a run); the call then passes the SDK a `progress_callback`, so the request carries a
`progressToken` and each `notifications/progress` the server sends for it goes to `ctx.report_progress()`,
which makes it sane, never raises and never waits (tools/progress.py): the SDK's event loop is not held up by
the run. Outside a run no token is sent, and a server sends no progress.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..tools.progress import report_progress

# What the SDK's call_tool takes as progress_callback: (progress, total, message), awaited.
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


class ReportingArguments(dict[str, Any]):
    """A call's arguments (the same dict, as the server gets them), carrying where its progress goes."""

    def __init__(
        self,
        arguments: Mapping[str, Any],
        on_progress: Callable[[float, float | None, str | None], None],
    ) -> None:
        super().__init__(arguments)
        self.on_progress = on_progress


def progress_callback(arguments: Any) -> ProgressCallback | None:
    """The callback that hands the server's progress for this call on; None when no one listens."""
    sink = getattr(arguments, "on_progress", None)
    if not isinstance(arguments, ReportingArguments) or sink is None:
        return None

    async def forward(
        progress: float, total: float | None, message: str | None
    ) -> None:
        report_progress(sink, progress, total, message)

    return forward
