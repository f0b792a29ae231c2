# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Cohere v2 chat: typed events (message-start ... message-end) into one chat response.

`delta.message.tool_calls` is a single object in these events, not an array; `index` is the call's slot. A call
with no arguments has a tool-call-start and a tool-call-end and nothing between them. A call is closed by its
`tool-call-end`; a call still open when the body ends is cut.

Repeats: events carry the slot index and no sequence number, so what is recognized is what the index makes
impossible twice: a `tool-call-start`, `content-start` or `citation-start` for a slot already started, a
`tool-call-delta` or `tool-call-end` for a call already ended, a second `message-start`, and anything after
`message-end`. Two equal deltas for an open slot cannot be told from a model saying the same thing twice, and
are both kept.
"""

from __future__ import annotations

from typing import Any

from ..wires.base import ProviderError, Response
from ..wires.cohere import decode_response
from .state import Call, WireState


class CohereState(WireState):
    """Cohere v2 stream events in, one v2 chat response out."""

    wire = "cohere"
    end_signal = "message-end"
    call_end_signal = "its tool-call-end"

    def __init__(self) -> None:
        super().__init__()
        self.top: dict[str, Any] = {}
        self.role = "assistant"
        self.plan: list[str] = []
        self.content: dict[int, list[Any]] = {}
        self.slots: dict[int, Call] = {}
        self.citations: list[Any] = []
        self.citation_slots: set[Any] = set()
        self.message_started = False

    def feed(self, event: str | None, data: Any) -> None:
        kind = data.get("type") or event
        delta = data.get("delta") or {}
        message = delta.get("message") or {}
        if self._repeated(kind, data):
            self.repeat()
        elif kind == "tool-call-delta":
            call = self.slots.get(data.get("index", 0))
            fragment = ((message.get("tool_calls") or {}).get("function") or {}).get(
                "arguments"
            )
            if call is not None and fragment:
                self.arguments(call, fragment)
        elif kind == "content-delta":
            self._content_delta(data.get("index", 0), message.get("content") or {})
        elif kind == "tool-plan-delta":
            text = message.get("tool_plan") or ""
            if text:
                self.plan.append(text)
                self.reasoning(text)
        elif kind == "tool-call-start":
            self._call_start(
                data.get("index", len(self.slots)), message.get("tool_calls") or {}
            )
        elif kind == "tool-call-end":
            call = self.slots.get(data.get("index", 0))
            if call is not None:
                self.close_call(call)
        elif kind == "content-start":
            part = dict(message.get("content") or {})
            self.content[data.get("index", len(self.content))] = [part, []]
            self._content_delta(data.get("index", 0), part, initial=True)
        elif kind == "citation-start":
            self.citations.append(message.get("citations"))
        elif kind == "message-start":
            self.message_started = True
            self.top["id"] = data.get("id")
            self.role = message.get("role") or self.role
            self.begin(data.get("id"))
        elif kind == "message-end":
            self._end(delta)

    def _repeated(self, kind: str | None, data: dict[str, Any]) -> bool:
        """Whether the event is one the slot indexes say was already taken."""
        if self.complete:
            return True
        if kind == "message-start":
            return self.message_started
        index = data.get("index", 0)
        if kind == "tool-call-start":
            return data.get("index", len(self.slots)) in self.slots
        if kind == "content-start":
            return data.get("index", len(self.content)) in self.content
        if kind == "citation-start" and "index" in data:
            seen = index in self.citation_slots
            self.citation_slots.add(index)
            return seen
        if kind in ("tool-call-delta", "tool-call-end"):
            call = self.slots.get(index)
            return call is not None and call.closed
        return False

    def _content_delta(
        self, index: int, content: dict[str, Any], initial: bool = False
    ) -> None:
        entry = self.content.get(index)
        if entry is None:
            entry = self.content[index] = [
                {"type": "thinking" if "thinking" in content else "text"},
                [],
            ]
        key = "thinking" if entry[0].get("type") == "thinking" else "text"
        text = content.get(key) or ""
        if not text:
            return
        if not initial:
            entry[1].append(text)
        else:
            entry[1][:] = [text]
        if key == "thinking":
            self.reasoning(text)
        else:
            self.text(text)

    def _call_start(self, index: int, entry: dict[str, Any]) -> None:
        function = entry.get("function") or {}
        call = self.slots[index] = self.open_call(entry.get("id"), function.get("name"))
        # The call's own data beside its id and name goes into the body, as a whole response carries it.
        extra = {key: value for key, value in entry.items() if key not in _CALL_KEYS}
        inner = {k: v for k, v in function.items() if k not in ("name", "arguments")}
        if inner:
            extra["function"] = inner
        call.extra = extra or None
        initial = function.get("arguments") or ""
        if initial:
            self.arguments(call, initial)

    def _end(self, delta: dict[str, Any]) -> None:
        self.complete = True
        finish = delta.get("finish_reason")
        self.top["finish_reason"] = finish
        if delta.get("usage") is not None:
            self.top["usage"] = delta["usage"]
        error = delta.get("error")
        if error or finish == "ERROR":
            self.fail(
                str(error or "the model stopped with an error"), code=finish, raw=delta
            )

    def body(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": self.role}
        if self.plan:
            message["tool_plan"] = "".join(self.plan)
        calls = self.closed_calls()
        if calls:
            message["tool_calls"] = [_call_body(call) for call in calls]
        if self.content:
            message["content"] = [
                _part(self.content[index]) for index in sorted(self.content)
            ]
        if self.citations:
            message["citations"] = [
                citation for citation in self.citations if citation is not None
            ]
        body = dict(self.top)
        body["message"] = message
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)


def _part(entry: list[Any]) -> dict[str, Any]:
    part, fragments = entry
    key = "thinking" if part.get("type") == "thinking" else "text"
    return {**part, key: "".join(fragments)}


_CALL_KEYS = frozenset({"id", "function"})


def _call_body(call: Call) -> dict[str, Any]:
    extra = call.extra or {}
    body: dict[str, Any] = {"id": call.id or "", "type": "function"}
    body.update((key, value) for key, value in extra.items() if key != "function")
    body["function"] = {
        "name": call.name or "",
        "arguments": call.arguments,
        **extra.get("function", {}),
    }
    return body
