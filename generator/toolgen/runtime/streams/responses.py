# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for the OpenAI Responses API: typed events rebuild the final response object.

`response.completed` (or `.incomplete`, `.failed`) carries the whole response; when it is missing, or its
`output` is empty, the output items are rebuilt from the item, content-part and delta events, keyed by
`output_index` (or `item_id`).

A call is closed by `response.function_call_arguments.done` (`custom_tool_call_input.done` for a custom tool),
by the `response.output_item.done` of its item, or by the final response holding the item; otherwise it is cut.

Repeats: every event carries a `sequence_number`, so an event whose number was already seen is a repeat, whatever
its content; two deltas with different numbers are two deltas, even when their text is the same.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from ..wires.base import ProviderError, Response
from ..wires.responses import decode_response
from .events import ToolCallEnd, dumps_compact
from .state import Call, WireState

# Call items and the field their input streams into: JSON text for functions, free text for custom tools.
_CALL_ITEMS = MappingProxyType(
    {"function_call": "arguments", "custom_tool_call": "input"}
)


class _Item:
    __slots__ = ("call", "data", "parts", "summary")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.call: Call | None = None
        # content_index / summary_index -> [part, text fragments]
        self.parts: dict[int, list[Any]] = {}
        self.summary: dict[int, list[Any]] = {}


class ResponsesState(WireState):
    """response.* events in, one response object out."""

    wire = "openai-responses"
    end_signal = "response.completed"
    call_end_signal = "response.function_call_arguments.done"

    def __init__(self) -> None:
        super().__init__()
        self.response: dict[str, Any] = {"object": "response"}
        self.final: dict[str, Any] | None = None
        self.items: dict[int, _Item] = {}
        self.by_id: dict[str, _Item] = {}
        self.sequence: set[int] = set()
        self.handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "response.output_text.delta": self._text_delta,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.reasoning_text.delta": self._reasoning_delta,
            "response.reasoning_summary_text.delta": self._summary_delta,
            "response.refusal.delta": self._refusal_delta,
            "response.custom_tool_call_input.delta": self._custom_delta,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.content_part.added": self._part_added,
            "response.reasoning_summary_part.added": self._summary_added,
            "response.function_call_arguments.done": self._arguments_done,
            "response.custom_tool_call_input.done": self._arguments_done,
            "response.created": self._created,
            "response.in_progress": self._created,
            "response.completed": self._end,
            "response.incomplete": self._end,
            "response.failed": self._end,
            "error": self._error,
        }

    def feed(self, event: str | None, data: Any) -> None:
        number = data.get("sequence_number")
        if type(number) is int:
            if number in self.sequence:
                self.repeat()
                return
            self.sequence.add(number)
        kind = data.get("type") or event or ""
        if kind == "response.function_call_arguments.delta":
            # Nearly every event of a call's arguments, for a call already open: taken here, as _arguments_delta would.
            index = data.get("output_index")
            item = self.items.get(index) if index is not None else None
            if item is not None and item.call is not None:
                fragment = data.get("delta") or ""
                if fragment and not item.call.closed:
                    self.arguments(item.call, fragment)
                return
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(data)

    # -- items ------------------------------------------------------------------------------------------------------

    def _item(self, data: dict[str, Any]) -> _Item:
        index = data.get("output_index")
        item = (
            self.items.get(index)
            if index is not None
            else self.by_id.get(data.get("item_id") or "")
        )
        if item is None:
            item = self._register(
                index,
                {"id": data.get("item_id"), "type": "message", "role": "assistant"},
            )
        return item

    def _register(self, index: int | None, data: dict[str, Any]) -> _Item:
        item = _Item(data)
        self.items[len(self.items) if index is None else index] = item
        if data.get("id"):
            self.by_id[data["id"]] = item
        return item

    def _item_added(self, data: dict[str, Any]) -> None:
        item = self._register(data.get("output_index"), dict(data.get("item") or {}))
        field = _CALL_ITEMS.get(str(item.data.get("type")))
        if field is not None:
            item.call = self.open_call(item.data.get("call_id"), item.data.get("name"))
            initial = item.data.get(field) or ""
            if initial:
                self.arguments(item.call, initial)

    def _item_done(self, data: dict[str, Any]) -> None:
        final = data.get("item") or {}
        item = self._item(data)
        item.data = dict(final)
        item.parts.clear()
        item.summary.clear()
        if item.call is not None and not item.call.closed:
            self._close_with(
                item, final.get(_CALL_ITEMS.get(str(final.get("type")), "arguments"))
            )

    def _part_added(self, data: dict[str, Any]) -> None:
        part = dict(data.get("part") or {})
        self._item(data).parts[data.get("content_index", 0)] = [
            part,
            [part.get("text") or ""],
        ]

    def _summary_added(self, data: dict[str, Any]) -> None:
        part = dict(data.get("part") or {})
        self._item(data).summary[data.get("summary_index", 0)] = [
            part,
            [part.get("text") or ""],
        ]

    # -- deltas -----------------------------------------------------------------------------------------------------

    def _fragments(
        self, parts: dict[int, list[Any]], index: int, kind: str
    ) -> list[str]:
        entry = parts.get(index)
        if entry is None:
            entry = parts[index] = [{"type": kind, "text": ""}, []]
        fragments: list[str] = entry[1]
        return fragments

    def _text_delta(self, data: dict[str, Any]) -> None:
        text = data.get("delta") or ""
        if text:
            self._fragments(
                self._item(data).parts, data.get("content_index", 0), "output_text"
            ).append(text)
            self.text(text)

    def _refusal_delta(self, data: dict[str, Any]) -> None:
        text = data.get("delta") or ""
        entry = self._item(data).parts.setdefault(
            data.get("content_index", 0), [{"type": "refusal"}, []]
        )
        entry[1].append(text)

    def _reasoning_delta(self, data: dict[str, Any]) -> None:
        text = data.get("delta") or ""
        if text:
            self._fragments(
                self._item(data).parts, data.get("content_index", 0), "reasoning_text"
            ).append(text)
            self.reasoning(text)

    def _summary_delta(self, data: dict[str, Any]) -> None:
        text = data.get("delta") or ""
        if text:
            self._fragments(
                self._item(data).summary, data.get("summary_index", 0), "summary_text"
            ).append(text)
            self.reasoning(text)

    def _arguments_delta(self, data: dict[str, Any]) -> None:
        fragment = data.get("delta") or ""
        item = self._item(data)
        if item.call is None:
            item.data.setdefault("type", "function_call")
            item.call = self.open_call(item.data.get("call_id"), item.data.get("name"))
        if fragment and not item.call.closed:
            self.arguments(item.call, fragment)

    def _custom_delta(self, data: dict[str, Any]) -> None:
        item = self._item(data)
        if item.call is None:
            item.data.setdefault("type", "custom_tool_call")
            item.call = self.open_call(item.data.get("call_id"), item.data.get("name"))
        fragment = data.get("delta") or ""
        if fragment and not item.call.closed:
            self.arguments(item.call, fragment)

    def _arguments_done(self, data: dict[str, Any]) -> None:
        item = self._item(data)
        if item.call is not None and not item.call.closed:
            self._close_with(item, data.get("arguments", data.get("input")))

    def _close_with(self, item: _Item, text: Any) -> None:
        """Close a call with the full text its done event carries, sending whatever the deltas did not."""
        call = item.call
        assert call is not None
        streamed = "".join(call.parts)
        if not isinstance(text, str):
            text = streamed
        elif text.startswith(streamed) and len(text) > len(streamed):
            self.arguments(call, text[len(streamed) :])
        if item.data.get("type") == "custom_tool_call":
            # A custom tool's input is free text; canonical arguments hold it as a JSON string value.
            call.closed = True
            call.arguments, call.parsed, call.value = dumps_compact(text), text, text
            call.emitted = call.id is not None
            if call.emitted:
                self.out.append(
                    ToolCallEnd(
                        call.index,
                        call.id,
                        call.name,
                        call.arguments,
                        call.parsed,
                        None,
                    )
                )
            return
        self.close_call(call, text)

    # -- the response -----------------------------------------------------------------------------------------------

    def _created(self, data: dict[str, Any]) -> None:
        self.response.update(data.get("response") or {})
        self.begin(self.response.get("id"), self.response.get("model"))

    def _end(self, data: dict[str, Any]) -> None:
        self.final = dict(data.get("response") or {})
        self.begin(self.final.get("id"), self.final.get("model"))
        self.complete = True
        if self.final.get("status") == "failed" and self.provider_error is None:
            error = self.final.get("error") or {}
            self.fail(
                str(error.get("message") or "response failed"),
                code=error.get("code"),
                type=error.get("type"),
                raw=data,
            )

    def _error(self, data: dict[str, Any]) -> None:
        error = data.get("error") if isinstance(data.get("error"), dict) else data
        assert isinstance(error, dict)
        self.fail(
            str(error.get("message") or error),
            code=error.get("code"),
            type=error.get("type"),
            raw=data,
        )

    def finish(self) -> None:
        for item in self.items.values():
            if item.call is not None and not item.call.closed:
                final = self._final_item(item)
                if final is None:
                    self.cut_call(item.call)
                else:
                    field = _CALL_ITEMS.get(str(final.get("type")), "arguments")
                    self._close_with(item, final.get(field))
        super().finish()

    def _final_item(self, item: _Item) -> dict[str, Any] | None:
        """The item as the final response holds it, when that response came and has it."""
        output = (self.final or {}).get("output")
        for entry in output if isinstance(output, list) else ():
            if isinstance(entry, dict) and any(
                entry.get(key) is not None and entry.get(key) == item.data.get(key)
                for key in ("id", "call_id")
            ):
                return entry
        return None

    def salvage(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """A failed response still holds the output streamed before the failure: decode it without the failure."""
        return {
            key: value for key, value in body.items() if key not in ("error", "status")
        }

    def body(self) -> dict[str, Any]:
        if self.final is not None and self.final.get("output"):
            return self.final
        body = dict(self.final if self.final is not None else self.response)
        body["output"] = [
            self._item_body(self.items[index])
            for index in sorted(self.items)
            if not _is_cut(self.items[index])
        ]
        return body

    @staticmethod
    def _item_body(item: _Item) -> dict[str, Any]:
        data = dict(item.data)
        if item.parts:
            data["content"] = [
                _part_body(item.parts[index]) for index in sorted(item.parts)
            ]
        if item.summary:
            data["summary"] = [
                _part_body(item.summary[index]) for index in sorted(item.summary)
            ]
        if item.call is not None:
            if data.get("type") == "custom_tool_call":
                data["input"] = (
                    item.call.parsed
                    if isinstance(item.call.parsed, str)
                    else "".join(item.call.parts)
                )
            else:
                data["arguments"] = item.call.arguments
        return data

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)


def _part_body(entry: list[Any]) -> dict[str, Any]:
    part, fragments = entry
    key = "refusal" if part.get("type") == "refusal" else "text"
    return {**part, key: "".join(fragments)}


def _is_cut(item: _Item) -> bool:
    return item.call is not None and item.call.cut
