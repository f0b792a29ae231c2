# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Ollama's native /api/chat: NDJSON lines, each a partial message, the last one `done: true`.

Tool calls arrive whole (arguments as an object, often without an id), so each is closed as it arrives; the
message accumulates into the shape of the non-streamed /api/chat response.

Repeats and new calls: each line carries its own `created_at` timestamp (to the microsecond or finer), so a line
equal to an earlier one, timestamp included, is that line again (dropped); a call whose `id` was already seen is
that call again (dropped; when it is not that very call, dropped in doubt), and a call under a new id is a new call. Nothing follows the `done: true` line: a line after it
that is no such repeat is dropped in doubt (a line out of order), making the stream incomplete, as does a line
before `done` without its message (it lost what it held). Lines without a timestamp cannot be told apart, and are
all kept; a line lost, or two swapped, leave no evidence.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, ClassVar

from ...streams.events import dumps_compact, parse_json
from ...streams.shapes import KnownShapes
from ...streams.state import WireState
from ..canonical import ProviderError, Response
from .codec import decode_response
from .stream_shapes import ollama


class OllamaState(WireState):
    """/api/chat lines in, one /api/chat response out."""

    wire = "ollama"
    object_arguments = True
    end_signal = "a line with done: true"
    # Its common reads, taken by one pattern each (see `shapes`).
    known_shapes: ClassVar[KnownShapes] = MappingProxyType({"jsonl": ollama})

    def __init__(self) -> None:
        super().__init__()
        self.top: dict[str, Any] = {}
        self.role = "assistant"
        self.content: list[str] = []
        self.thinking: list[str] = []
        self.tool_calls: list[Any] = []
        self.extra: dict[str, Any] = {}
        # created_at -> the line that carried it (its payload, or its JSON text); each call id taken -> the call
        # entry that carried it
        self.lines: dict[str, Any] = {}
        self.call_ids: dict[str, Any] = {}

    def feed(self, event: str | None, data: Any) -> None:
        stamp = data.get("created_at")
        # A line is kept as its payload, or as its text where the shortcut took it (see `shapes.ollama`).
        kept = self.lines.get(stamp) if isinstance(stamp, str) else None
        if (
            kept is not None
            and (parse_json(kept) if type(kept) is bytes else kept) == data
        ):
            self.repeat()
            return
        if self.complete:
            self.presumed_repeat("a line after the done line", data)
            return
        if isinstance(stamp, str):
            self.lines[stamp] = data
        if "error" in data and "message" not in data:
            self.fail(str(data.get("error")), raw=data)
            return
        if "message" not in data and not data.get("done"):
            # Every line but the last holds its piece of the message: this one lost what it held.
            self.doubt("a line without its message: whatever it held is lost", data)
        if not self.started:
            self.begin(None, data.get("model"))
        for key, value in data.items():
            if key == "message":
                self._message(value or {})
            else:
                self.top[key] = value
        if data.get("done"):
            self.complete = True

    def _message(self, message: dict[str, Any]) -> None:
        for key, value in message.items():
            if key == "content":
                if value:
                    self.content.append(value)
                    self.text(value)
            elif key == "thinking":
                if value:
                    self.thinking.append(value)
                    self.reasoning(value)
            elif key == "tool_calls":
                for entry in value or ():
                    self._tool_call(entry)
            elif key == "role":
                self.role = value or self.role
            else:
                self.extra[key] = value

    def _tool_call(self, entry: dict[str, Any]) -> None:
        call_id = entry.get("id")
        if isinstance(call_id, str) and call_id:
            taken = self.call_ids.get(call_id)
            if taken is not None:
                if taken == entry:
                    self.repeat()
                else:
                    self.presumed_repeat(
                        f"a call under id {call_id}, already taken, with other content",
                        entry,
                    )
                return
            self.call_ids[call_id] = entry
        self.tool_calls.append(entry)
        function = entry.get("function") or {}
        call = self.open_call(entry.get("id"), function.get("name"))
        arguments = function.get("arguments")
        text = (
            arguments
            if isinstance(arguments, str)
            else ""
            if arguments is None
            else dumps_compact(arguments)
        )
        if text:
            self.arguments(call, text)
        self.close_call(call)

    def body(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self.role, "content": "".join(self.content)}
        if self.thinking:
            message["thinking"] = "".join(self.thinking)
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        message.update(self.extra)
        body = dict(self.top)
        body["message"] = message
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)
