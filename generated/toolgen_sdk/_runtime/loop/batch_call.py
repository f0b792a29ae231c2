# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""One tool call of a run's current batch, as the run and its drivers follow it from admission to its answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..models.base import ToolSpec
from ..tools.progress import ProgressSink
from .progress import Report
from .results import CallReport


@dataclass
class BatchCall:
    """One tool call of the current batch."""

    call: dict[str, Any]
    id: str
    name: str
    arguments: str
    spec: ToolSpec | None
    report: CallReport | None = None
    announced: bool = False  # the stream said so already, with tool_call_started
    span: Any = None  # its execute_tool span while it runs
    progress: ProgressSink | None = None  # where its handler's reports go, once started
    position: int = -1  # its place in the run's current batch (-1: a call of no batch, which finish() answers)
    handed_on: bool = False  # its outcome was (tool_call_finished)
    held: Report | None = (
        None  # its last progress report, not yet handed on when it ended
    )
