# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Cohere v2 chat: typed events (message-start ... message-end) into one chat response.

`delta.message.tool_calls` is a single object in these events, not an array; `index` is the call's slot. A call
with no arguments has a tool-call-start and a tool-call-end and nothing between them. A call is closed by its
`tool-call-end`; a call still open when the body ends is cut.

Repeats and new calls: events carry the slot index and no sequence number; a call is named by its slot and its id.
A `tool-call-start` for a slot already started is that call again (a repeat, dropped) under the same id, and a new
call under another id (the call that held the slot, if still open, is cut); a start at a new slot under an id a
call took is that call again (a repeat when its arguments are the call's, else dropped in doubt). A `content-start` for a content index
already started with the same part, a `citation-start` for a citation index already seen, a `tool-call-end` for a
call already ended, a second `message-start` and a second equal `message-end` change nothing and are dropped. What
the index cannot settle makes the stream incomplete: a `tool-call-delta` for a call already ended (dropped), or for
a slot never started (its call's start never came: dropped), a `tool-call-end` for a slot never started, a content
delta before its `content-start` or after its `content-end`, a delta without its index or message, a payload that is no v2 stream event, anything else
after `message-end`, and, once `message-end` came, a missing `message-start`, no `finish_reason`, or a call slot
never seen below the highest one. Two equal deltas for an open slot cannot be told from a model saying the same
thing twice, and are both kept; a delta sent twice, lost, or two swapped inside one slot leave no evidence at all.
"""

from __future__ import annotations

from typing import Any

from ...streams.state import Call, WireState, first_gap
from ..canonical import ProviderError, Response
from .codec import decode_response

_CALL_KEYS = frozenset({"id", "function"})
_PLAN = "tool-plan-delta"
# The events that carry a piece of the message: one without its index (a plan has none) or message is damaged.
_DELTAS = frozenset({"tool-call-delta", "content-delta", _PLAN})
# Events that carry nothing the response body holds.
_SILENT = frozenset({"citation-end", "debug"})


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
        self.content_ended: set[Any] = set()
        # The call holding each slot now, and the start event that opened it.
        self.slots: dict[int, Call] = {}
        self.starts: dict[int, Any] = {}
        self.citations: list[Any] = []
        self.citation_slots: set[Any] = set()
        self.message_started = False
        self.end: Any = None

    def feed(self, event: str | None, data: Any) -> None:
        kind = data.get("type") or event
        delta = data.get("delta") or {}
        message = delta.get("message") or {}
        if self.complete:
            self._after_end(kind, data)
        elif kind in _DELTAS and (
            not message or ("index" not in data and kind != _PLAN)
        ):
            self.doubt(
                f"a {kind} without its index or delta: whatever it held is lost", data
            )
        elif kind == "tool-call-delta":
            self._call_delta(data, message)
        elif kind == "content-delta":
            self._content_delta(data.get("index", 0), message.get("content") or {})
        elif kind == "tool-plan-delta":
            text = message.get("tool_plan") or ""
            if text:
                self.plan.append(text)
                self.reasoning(text)
        elif kind == "tool-call-start":
            self._call_start(data, message.get("tool_calls") or {})
        elif kind == "tool-call-end":
            index = data.get("index", 0)
            call = self.slots.get(index)
            if call is None:
                self.doubt(
                    f"tool-call-end for slot {index}, which never started: its call is lost",
                    data,
                )
            elif call.closed:
                self.repeat()
            else:
                self.close_call(call)
        elif kind == "content-start":
            index = data.get("index", len(self.content))
            part = dict(message.get("content") or {})
            held = self.content.get(index)
            if held is not None:
                if held[2] == part:
                    self.repeat()
                else:
                    self.presumed_repeat(
                        f"content-start for content {index} again, with another part",
                        data,
                    )
                return
            self.content[index] = [part, [], dict(part)]
            self._content_delta(index, part, initial=True)
        elif kind == "content-end":
            self.content_ended.add(data.get("index", 0))
        elif kind == "citation-start":
            if "index" in data:
                if data["index"] in self.citation_slots:
                    self.repeat()
                    return
                self.citation_slots.add(data["index"])
            self.citations.append(message.get("citations"))
        elif kind == "message-start":
            if self.message_started:
                self.repeat()
                return
            self.message_started = True
            self.top["id"] = data.get("id")
            self.role = message.get("role") or self.role
            self.begin(data.get("id"))
        elif kind == "message-end":
            self.end = data
            self._end(delta)
        elif kind not in _SILENT:
            self.doubt(
                f"a payload that is no Cohere v2 stream event ({kind}): dropped", data
            )

    def _after_end(self, kind: str | None, data: dict[str, Any]) -> None:
        """An event after message-end: a repeat when it changes nothing taken; else dropped, in doubt."""
        call = self.slots.get(data.get("index", 0))
        harmless = (
            (kind == "message-end" and data == self.end)
            or kind in ("message-start", "content-end", "citation-end")
            or (kind == "tool-call-end" and call is not None and call.closed)
            or (kind == "citation-start" and data.get("index") in self.citation_slots)
        )
        if harmless:
            self.repeat()
        else:
            self.presumed_repeat(f"{kind} after message-end", data)

    def _call_delta(self, data: dict[str, Any], message: dict[str, Any]) -> None:
        index = data.get("index", 0)
        call = self.slots.get(index)
        fragment = ((message.get("tool_calls") or {}).get("function") or {}).get(
            "arguments"
        )
        if call is None:
            if fragment:
                self.doubt(
                    f"tool-call-delta for slot {index}, which never started: dropped",
                    data,
                )
        elif call.closed:
            if fragment:
                self.presumed_repeat(
                    f"tool-call-delta for slot {index} after its tool-call-end", data
                )
            else:
                self.repeat()
        elif fragment:
            if call.twin is None:
                self.arguments(call, fragment)
            else:
                call.parts.append(fragment)

    def _content_delta(
        self, index: int, content: dict[str, Any], initial: bool = False
    ) -> None:
        entry = self.content.get(index)
        if not initial and (entry is None or index in self.content_ended):
            if not (content.get("text") or content.get("thinking")):
                return
            if entry is not None:
                self.presumed_repeat(
                    f"content-delta for content {index} after its content-end"
                )
                return
            self.doubt(
                f"content-delta for content {index} came before its content-start"
            )
        if entry is None:
            entry = self.content[index] = [
                {"type": "thinking" if "thinking" in content else "text"},
                [],
                None,
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

    def _call_start(self, data: dict[str, Any], entry: dict[str, Any]) -> None:
        index = data.get("index", len(self.slots))
        held = self.slots.get(index)
        if held is not None:
            if (entry.get("id") or None) == held.id:
                if data == self.starts.get(index):
                    self.repeat()
                else:
                    self.presumed_repeat(
                        f"tool-call-start for slot {index} again, with other content",
                        data,
                    )
                return
            # Another call at a slot already used: a new call, never a repeat.
            if not held.closed:
                self.cut_call(held)
        function = entry.get("function") or {}
        first = self.holder(entry.get("id"))
        if first is not None:
            # A call again under an id taken at another slot: weighed against that call at its tool-call-end.
            twin = self.slots[index] = self.open_twin(
                first, first.id, function.get("name")
            )
            self.starts[index] = data
            twin.parts.append(function.get("arguments") or "")
            return
        call = self.slots[index] = self.open_call(entry.get("id"), function.get("name"))
        self.starts[index] = data
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

    def finish(self) -> None:
        for call in self.slots.values():
            if call.twin is not None:
                self.cut_call(call)
        if self.complete and self.provider_error is None:
            if not self.message_started:
                self.doubt("no message-start came")
            if self.top.get("finish_reason") is None:
                self.doubt(
                    "the message-end did not say why the message stopped (finish_reason)"
                )
            missing = first_gap(self.slots)
            if missing is not None:
                self.doubt(f"tool call slot {missing} never came")
        super().finish()

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
    part, fragments = entry[0], entry[1]
    key = "thinking" if part.get("type") == "thinking" else "text"
    return {**part, key: "".join(fragments)}


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
