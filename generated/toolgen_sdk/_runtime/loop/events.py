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

Every event's JSON is strict (RFC 8259), as a browser's JSON.parse reads it: a NaN or infinite float anywhere in
an event, which JSON has no form for, is written as null, and the event's JSON says where and what it was in a
top-level `notes` list beside `data` (`finite_json`, which the service's store and answers use too).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from types import MappingProxyType
from typing import Any

from ..models.problems import escape_pointer_part
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
    "finite_json",
    "non_finite_note",
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
# The event's JSON: compact, UTF-8, any other value as its str(), no NaN; made once, as json.dumps makes an encoder
# a call when given options.
STRICT_JSON_TEXT = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False
).encode
STRICT_JSON_ASCII = json.JSONEncoder(
    separators=(",", ":"), default=str, allow_nan=False
).encode


def sse_encode(event: RunEvent) -> str:
    """One event as `text/event-stream` text: `event:`, `id:` and `data:` lines (the JSON of the event), a blank line.

    The JSON is strict: a NaN or infinite number in the event is written as null, and a `notes` list after `data`
    says where (`finite_json`)."""
    name = _LINE_BREAK.sub(" ", event.type)
    form = event.to_json()
    try:
        payload = STRICT_JSON_TEXT(form)
    except ValueError:
        # A number JSON has no form for (json.dumps would write NaN, which JSON.parse refuses): null, and said.
        form, replaced = finite_json(form)
        form["notes"] = [non_finite_note(replaced)]
        payload = STRICT_JSON_TEXT(form)
    if not payload.isascii():
        try:
            payload.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (a model may write "\ud800") has no UTF-8 form; its JSON escape carries it.
            payload = STRICT_JSON_ASCII(form)
    # json.dumps escapes newlines inside strings, so this is one line; splitting keeps the framing safe regardless.
    data = "".join(f"data: {line}\n" for line in _LINE_BREAK.split(payload))
    return f"event: {name}\nid: {event.seq}\n{data}\n"


def finite_json(value: Any) -> tuple[Any, list[tuple[str, float]]]:
    """`value` as strict JSON can carry it: each NaN or infinite float (JSON has no form for one) as None, and
    where each was, its JSON pointer and the number. Dicts, lists and tuples are copied only where one was found;
    a dict key that is such a float becomes the text json.dumps would write for it ("NaN")."""
    replaced: list[tuple[str, float]] = []
    return _finite(value, "", replaced), replaced


def non_finite_note(replaced: Sequence[tuple[str, float]]) -> str:
    """What a note says of the numbers `finite_json` replaced: which, and where (the first five)."""
    shown = ", ".join(
        f"{_number_name(number)} at {pointer or '/'}"
        for pointer, number in replaced[:5]
    )
    more = f" and {len(replaced) - 5:,} more" if len(replaced) > 5 else ""
    return (
        f"a number JSON cannot carry (NaN or Infinity) is sent as null: {shown}{more}"
    )


def _number_name(number: float) -> str:
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"


def _key_text(key: Any) -> str:
    """A dict key as json.dumps writes it, for its pointer."""
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    return key if isinstance(key, str) else repr(key)


def _finite(value: Any, at: str, replaced: list[tuple[str, float]]) -> Any:
    # The types json.dumps walks into, as it walks them: anything else it writes through `default` (str()).
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        replaced.append((at, value))
        return None
    if isinstance(value, dict):
        found = len(replaced)
        copied: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, float) and not math.isfinite(key):
                replaced.append((f"{at}/{_number_name(key)}", key))
                key = _number_name(key)
            part = _key_text(key)
            copied[key] = _finite(item, f"{at}/{escape_pointer_part(part)}", replaced)
        return copied if len(replaced) > found else value
    if isinstance(value, (list, tuple)):
        found = len(replaced)
        items = [
            _finite(item, f"{at}/{index}", replaced) for index, item in enumerate(value)
        ]
        return items if len(replaced) > found else value
    return value


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
