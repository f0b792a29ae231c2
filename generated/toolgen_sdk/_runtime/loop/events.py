# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Run events: what an agent run reports as it goes, and their text/event-stream (SSE) encoding for a browser.

One merged stream per run. `RunEvent` is the union of the kinds in event_kinds.py, one frozen dataclass each with
`type` a Literal and its own documented fields; `event.to_json()` and `event_from_json()` are the one JSON form
that SSE, the service's store, the page and the command line all use. In order of a run:

- `run_started` {"messages"}; `run_finished` {"stop_reason", "steps", "metrics"}
- `model_call_started` {"step", "attempt"}; `model_call_finished` {"step", "attempt", "duration_ms",
  "finish_reason", "usage", "model"}
- `text_delta` {"text"}; `reasoning_delta` {"text"}
- `approval_requested` {"id", "name", "arguments"}; `approval_decided` {"id", "name", "decision", "reason",
  "arguments"}
- `tool_call_started` {"id", "name", "arguments", "index"}: in a streamed run as soon as the stream announces
  the call (arguments None then, the id None on wires that give calls none), otherwise when the call is about
  to run (index None); `tool_call_delta` {"index", "id", "name", "arguments"}: a fragment of a streamed call's
  arguments as the wire sent it; `tool_call_finished` {"id", "name", "status", "error_kind", "duration_ms",
  "content"} (status: ok | error | denied | skipped; a call announced by a stream that then broke off is skipped
  with error_kind cut)
- `tool_call_progress` {"id", "name", "progress", "total", "message"}: how far a running call has got, as its
  handler reported with `ctx.report_progress()` (an MCP tool: as its server reported); between the call's
  `tool_call_started` and `tool_call_finished`, at most one every 0.1 s per call, the reports between coalesced
  (loop/progress.py); informational, and the only kind whose count depends on timing
- `final_message` {"message", "stop_reason"}
- `error` {"message", "type", "code", "status", "fatal", "retry"}: retry is the attempt about to be made when the
  failed model call is made again (a stream the run asks again, or a request the model client sends again after
  a 429, a 5xx or a dropped connection), else None
- `note` {"message", "setting", "wire"}: a run setting the model's wire cannot carry, left out (only with
  on_unsupported="note"; otherwise the run does not start); or, setting None, content the model call's request
  holds where its wire cannot, moved or dropped as the model client sent it (an image in a tool result moved to
  a user message on openai-chat; the message names the part by its pointer), after that call's
  `model_call_started` and once per run for each distinct message
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from types import MappingProxyType

from .event_kinds import (
    EVENT_CLASSES,
    EVENT_TYPES,
    EVENTS_VERSION,
    ApprovalDecidedEvent,
    ApprovalRequestedEvent,
    ErrorEvent,
    EventFormError,
    EventType,
    FinalMessageEvent,
    ModelCallFinishedEvent,
    ModelCallStartedEvent,
    NoteEvent,
    ReasoningDeltaEvent,
    RunEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallProgressEvent,
    ToolCallStartedEvent,
    event_from_json,
)

__all__ = [
    "EVENTS_VERSION",
    "EVENT_CLASSES",
    "EVENT_TYPES",
    "SSE_CONTENT_TYPE",
    "SSE_HEADERS",
    "ApprovalDecidedEvent",
    "ApprovalRequestedEvent",
    "ErrorEvent",
    "EventFormError",
    "EventType",
    "FinalMessageEvent",
    "ModelCallFinishedEvent",
    "ModelCallStartedEvent",
    "NoteEvent",
    "ReasoningDeltaEvent",
    "RunEvent",
    "RunFinishedEvent",
    "RunStartedEvent",
    "TextDeltaEvent",
    "ToolCallDeltaEvent",
    "ToolCallFinishedEvent",
    "ToolCallProgressEvent",
    "ToolCallStartedEvent",
    "asse_lines",
    "event_from_json",
    "sse_comment",
    "sse_encode",
    "sse_lines",
]

SSE_CONTENT_TYPE = "text/event-stream"
# What a proxy in front of the app needs to pass events through as they come instead of buffering them.
SSE_HEADERS: Mapping[str, str] = MappingProxyType(
    {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
    }
)

# SSE ends a field at CR, LF or CRLF, nothing else; JSON text never holds a raw one, the event name might.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def sse_encode(event: RunEvent) -> str:
    """One event as `text/event-stream` text: `event:`, `id:` and `data:` lines (the JSON of the event), a blank line."""
    name = _LINE_BREAK.sub(" ", event.type)
    payload = json.dumps(
        event.to_json(), ensure_ascii=False, separators=(",", ":"), default=str
    )
    try:
        payload.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a model may write "\ud800") has no UTF-8 form; its JSON escape carries it.
        payload = json.dumps(event.to_json(), separators=(",", ":"), default=str)
    # json.dumps escapes newlines inside strings, so this is one line; splitting keeps the framing safe regardless.
    data = "".join(f"data: {line}\n" for line in _LINE_BREAK.split(payload))
    return f"event: {name}\nid: {event.seq}\n{data}\n"


def sse_comment(text: str = "") -> str:
    """A comment line, which browsers ignore: a keep-alive for proxies that close idle connections."""
    return "".join(f": {line}\n" for line in _LINE_BREAK.split(text)) + "\n"


def sse_lines(events: Iterable[RunEvent]) -> Iterator[str]:
    """The SSE text of each event in turn, for a web framework's streaming response."""
    for event in events:
        yield sse_encode(event)


async def asse_lines(events: AsyncIterable[RunEvent]) -> AsyncIterator[str]:
    """The async twin of sse_lines."""
    async for event in events:
        yield sse_encode(event)
