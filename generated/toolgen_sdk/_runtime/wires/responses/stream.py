# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for the OpenAI Responses API: typed events rebuild the final response object.

`response.completed` (or `.incomplete`, `.failed`) carries the whole response; when it is missing, or its
`output` is empty, the output items are rebuilt from the item, content-part and delta events, keyed by
`output_index` (or `item_id`).

A call is closed by `response.function_call_arguments.done` (`custom_tool_call_input.done` for a custom tool),
by the `response.output_item.done` of its item, or by the final response holding the item; otherwise it is cut.

Repeats and new calls: every event carries a `sequence_number`, one more than the event before, so an event whose
number was already seen is a repeat, dropped whatever its content; two deltas with different numbers are two
deltas, even when their text is the same. An event whose number's predecessor has not come (an event lost, or
events out of order: every reordering shows so at its first event) makes the stream incomplete. An item is named by
its `output_index` and its id: an `output_item.added` at an index already used under another item id is a new item
(a new call), never a repeat; taken while the item that held the index is still open, it makes the stream
incomplete. The final response is the answer when its `output` holds every call the events closed, with the
name, call_id and arguments they closed it with; when it holds none, the output is rebuilt from the events (in doubt for an item no
`output_item.done` closed), and when it leaves out a call the events closed, or holds other arguments for it, the
output is rebuilt and the stream is incomplete. An event after the final response, a delta after a call's done
event or a second done event with other input is dropped in doubt; an event type not known here is let pass, and
named once in an `unknown_event` note. Events without a `sequence_number` (some compatible servers) leave
only the ids.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any, ClassVar

from ...streams.events import ToolCallEnd, dumps_compact, parse_json
from ...streams.shapes import KnownShapes
from ...streams.state import Call, WireState
from ..canonical import ProviderError, Response
from .codec import decode_response
from .event_types import carries_nothing_new
from .stream_shapes import responses

# The type of the note naming the event types the stream sent that this state does not know.
UNKNOWN_EVENT = "unknown_event"
# Call items and the field their input streams into: JSON text for functions, free text for custom tools.
_CALL_ITEMS = MappingProxyType(
    {"function_call": "arguments", "custom_tool_call": "input"}
)


class _Item:
    __slots__ = ("call", "data", "done", "parts", "summary")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        # Closed by its output_item.done, which carries it whole.
        self.done = False
        self.call: Call | None = None
        # content_index / summary_index -> [part, text fragments]
        self.parts: dict[int, list[Any]] = {}
        self.summary: dict[int, list[Any]] = {}


class ResponsesState(WireState):
    """response.* events in, one response object out."""

    wire = "openai-responses"
    end_signal = "response.completed"
    # Its common reads, taken by one pattern each (see `shapes`).
    known_shapes: ClassVar[KnownShapes] = MappingProxyType({"sse": responses})
    call_end_signal = "response.function_call_arguments.done"

    def __init__(self) -> None:
        super().__init__()
        self.response: dict[str, Any] = {"object": "response"}
        self.final: dict[str, Any] | None = None
        # The item holding each output_index now; every item with its index, in the order they came.
        self.items: dict[int, _Item] = {}
        self.order: list[tuple[int, _Item]] = []
        self.by_id: dict[str, _Item] = {}
        # sequence_number -> the id of the item its event named (the text as sent, where a shortcut took it)
        self.sequence: dict[int, Any] = {}
        # The final response leaves out calls the events closed: the output is rebuilt from the events.
        self.rebuild = False
        # The event types not known here that the stream sent, ignored: said in one note at the end.
        self.unknown_events: list[str] = []
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
            named = data.get("item_id")
            if named is None:
                item = data.get("item")
                named = item.get("id") if type(item) is dict else None
            sequence = self.sequence
            if number in sequence:
                self._number_again(number, named, data)
                return
            if number - 1 not in sequence and sequence:
                # Every reordering or loss shows here first: an event whose predecessor has not come.
                self.doubt(
                    f"event {number} came before event {number - 1} (sequence_number):"
                    " events are missing or out of order"
                )
            sequence[number] = named
        kind = data.get("type") or event or ""
        if kind == "response.function_call_arguments.delta":
            # Nearly every event of a call's arguments, for a call already open: taken here, as _arguments_delta would.
            index = data.get("output_index")
            item = self.items.get(index) if index is not None else None
            if item is not None and item.call is not None and not item.call.closed:
                fragment = data.get("delta") or ""
                if fragment:
                    self.arguments(item.call, fragment)
                return
        if self.final is not None:
            # response.completed (or .incomplete, .failed) is the last event: what comes after it is not taken.
            self.doubt(f"a {kind} event after the final response: dropped", data)
            return
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(data)
        elif kind not in self.unknown_events and not carries_nothing_new(kind):
            # New event types may come as the API grows: let pass, and named once in a note at the end.
            self.unknown_events.append(str(kind))

    def _number_again(self, number: int, named: Any, data: dict[str, Any]) -> None:
        """A sequence_number seen before: that event again, unless it names another item than the first did."""
        seen = self.sequence[number]
        if type(seen) is bytes:
            seen = seen.decode("utf-8", "replace")
        if named is None or seen is None or seen == named:
            self.repeat()
        else:
            self.presumed_repeat(
                f"event {number} came again for item {named}, where it was for item {seen}",
                data,
            )

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
        at = len(self.items) if index is None else index
        self.items[at] = item
        self.order.append((at, item))
        if data.get("id"):
            self.by_id[data["id"]] = item
        return item

    def _item_added(self, data: dict[str, Any]) -> None:
        index = data.get("output_index")
        new = dict(data.get("item") or {})
        held = self.items.get(index) if index is not None else None
        if held is not None:
            if held.data.get("id") == new.get("id"):
                self.presumed_repeat(
                    f"output_item.added for output {index} again", data
                )
                return
            # Another item at an index already used: a new item (a new call), never a repeat.
            if not held.done and (held.call is None or not held.call.closed):
                self.doubt(
                    f"output {index} was taken by another item before its output_item.done"
                )
        item = self._register(index, new)
        field = _CALL_ITEMS.get(str(item.data.get("type")))
        if field is not None:
            item.call = self.open_call(item.data.get("call_id"), item.data.get("name"))
            initial = item.data.get(field) or ""
            if initial:
                self.arguments(item.call, initial)

    def _item_done(self, data: dict[str, Any]) -> None:
        final = data.get("item") or {}
        item = self._item(data)
        item.done = True
        call = item.call
        item.data = dict(final)
        if call and not self._same_call(call, final, "its output_item.done"):
            item.data["name"], item.data["call_id"] = (
                call.name,
                call.id,
            )  # as ToolCallEnd says
        item.parts.clear()
        item.summary.clear()
        if item.call is None and str(final.get("type")) in _CALL_ITEMS:
            # A call whose output_item.added never came: announced now, from the item its done event carries.
            self.doubt(
                f"output_item.done for call {final.get('call_id')!r}, whose output_item.added never came",
                data,
            )
            item.call = self.open_call(final.get("call_id"), final.get("name"))
        if item.call is not None and not item.call.closed:
            self._close_with(
                item, final.get(_CALL_ITEMS.get(str(final.get("type")), "arguments"))
            )
        elif call is not None and not call.cut and not _same_input(final, call):
            self.doubt(
                f"tool call {call.index} ({call.name}): its output_item.done holds other arguments than its done"
                " event closed it with: dropped",
                final,
            )

    def _same_call(self, call: Call, final: dict[str, Any], where: str) -> bool:
        """Whether a call's item as `where` holds it has the name and call_id its events announced (else a doubt)."""
        # A key the item leaves out says nothing against the events.
        name, call_id = final.get("name", call.name), final.get("call_id", call.id)
        if name == call.name and call_id == call.id:
            return True
        self.doubt(
            f"tool call {call.index}: {where} names it {name!r} (call_id {call_id!r}), its events announced"
            f" {call.name!r} (call_id {call.id!r}): the events' are kept",
            final,
        )
        return False

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
        self._call_delta(data, "function_call")

    def _custom_delta(self, data: dict[str, Any]) -> None:
        self._call_delta(data, "custom_tool_call")

    def _call_delta(self, data: dict[str, Any], kind: str) -> None:
        item = self._item(data)
        call = item.call
        if call is None:
            if item.data.get("type") != kind:
                # Its output_item.added was lost, or said another type: a call all the same, in doubt.
                self.doubt(
                    f"{kind} input for output {data.get('output_index')}, not announced as one"
                )
                item.data["type"] = kind
            call = item.call = self.open_call(
                item.data.get("call_id"), item.data.get("name")
            )
        fragment = data.get("delta") or ""
        if fragment and not call.closed:
            self.arguments(call, fragment)
        elif fragment:
            self.doubt(
                f"tool call {call.index} ({call.name}): an input delta after its input was done: dropped",
                data,
            )

    def _arguments_done(self, data: dict[str, Any]) -> None:
        item = self._item(data)
        call = item.call
        text = data.get("arguments", data.get("input"))
        if call is not None and not call.closed:
            self._close_with(item, text)
        elif call is not None and not call.cut:
            # Done again: the very same input is that event again; other input cannot be both.
            field = _CALL_ITEMS.get(str(item.data.get("type")), "arguments")
            if _same_input({**item.data, field: text}, call):
                self.repeat()
            else:
                self.doubt(
                    f"tool call {call.index} ({call.name}): a second done event with other input: dropped",
                    data,
                )

    @staticmethod
    def _same_value(streamed: str, text: str) -> bool:
        """Whether two spellings of arguments hold one JSON value (spacing apart); unreadable ones only if equal."""
        try:
            return bool(parse_json(streamed) == parse_json(text))
        except ValueError:
            return streamed == text

    def _close_with(self, item: _Item, text: Any) -> None:
        """Close a call with the full text its done event carries, sending whatever the deltas did not."""
        call = item.call
        assert call is not None
        streamed = "".join(call.parts)
        if not isinstance(text, str):
            text = streamed
        elif text.startswith(streamed):
            if len(text) > len(streamed):
                self.arguments(call, text[len(streamed) :])
        elif not self._same_value(streamed, text):
            # The live deltas spelled other arguments than the done event: the done event's are the call's, and
            # the stream says the deltas a reader saw were not them.
            self.doubt(
                f"tool call {call.index} ({call.name}): its argument deltas and its done event disagree;"
                " the done event's arguments are taken",
                streamed,
            )
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
        for _, item in self.order:
            if item.call is not None and not item.call.closed:
                final = self._final_item(item)
                if final is None:
                    self.cut_call(item.call)
                else:
                    field = _CALL_ITEMS.get(str(final.get("type")), "arguments")
                    self._close_with(item, final.get(field))
        super().finish()
        if self.complete and self.provider_error is None:
            self._check_final()
        if self.unknown_events:
            self.note(
                "the stream sent event types toolgen does not know, let pass as OpenAI's Responses API adds"
                f" new ones: {', '.join(self.unknown_events)}",
                UNKNOWN_EVENT,
            )

    def _check_final(self) -> None:
        """Whether the final response's output can be the answer; why the rebuilt one is in doubt, if it is."""
        output = (self.final or {}).get("output")
        if output:
            held = {
                (key, entry.get(key)): entry
                for entry in output
                if isinstance(entry, dict)
                for key in ("id", "call_id")
                if entry.get(key) is not None
            }
            for _, item in self.order:
                call = item.call
                if call is None or call.cut:
                    continue
                final = held.get(("id", item.data.get("id"))) or held.get(
                    ("call_id", item.data.get("call_id"))
                )
                if final is not None and not self._same_call(
                    call, final, "the final response"
                ):
                    self.rebuild = True
                    return
                if final is None or not _same_input(final, call):
                    self.rebuild = True
                    what = (
                        "leaves out" if final is None else "holds other arguments for"
                    )
                    self.doubt(
                        f"the final response {what} call {call.index}, which the events closed:"
                        " the output is rebuilt from the events"
                    )
                    return
            announced = {
                item.data.get(key)
                for _, item in self.order
                if item.call is not None
                for key in ("id", "call_id")
            }
            for entry in output:
                if (
                    isinstance(entry, dict)
                    and str(entry.get("type")) in _CALL_ITEMS
                    and entry.get("id") not in announced
                    and entry.get("call_id") not in announced
                ):
                    # Its events never came, so nothing announced it: the answer is the events', and in doubt.
                    self.rebuild = True
                    self.doubt(
                        f"the final response holds call {entry.get('call_id')!r}, which no event announced:"
                        " the output is rebuilt from the events, without it"
                    )
                    return
            return
        open_items = [
            index for index, item in self.order if not item.done and not _is_cut(item)
        ]
        if open_items:
            self.doubt(
                f"the final response holds no output, and no output_item.done closed output {open_items[0]}:"
                " it is rebuilt from its deltas"
            )

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
        if self.final is not None and self.final.get("output") and not self.rebuild:
            return self.final
        body = dict(self.final if self.final is not None else self.response)
        # By output_index, the items of one index in the order they came.
        body["output"] = [
            self._item_body(item)
            for _, item in sorted(self.order, key=lambda entry: entry[0])
            if not _is_cut(item)
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


def _same_input(final: dict[str, Any], call: Call) -> bool:
    """Whether the final response's item holds the input the events closed the call with."""
    if final.get("type") == "custom_tool_call":
        return bool(final.get("input") == call.parsed)
    text = final.get("arguments")
    if text == call.arguments:
        return True
    try:
        return bool(isinstance(text, str) and parse_json(text) == call.value)
    except ValueError:
        return False


def _is_cut(item: _Item) -> bool:
    return item.call is not None and item.call.cut
