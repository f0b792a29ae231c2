# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Anthropic Messages: content-block events accumulate into one Message body.

Blocks are keyed by their content-block index, which text, thinking, server-tool and tool_use blocks share; only
`tool_use` blocks are tool calls. `input_json_delta` fragments are joined once, at the block's stop: a call is
closed by the `content_block_stop` of its block, and a call whose block never stopped is cut. A call's arguments
are its fragments; with none, the `input` its start carried (the documented one is `{}`); with both, the fragments,
and the stream is incomplete when they disagree. A delta of a type not known here (a beta `compaction_delta`) keeps
its fields on its block as the SDKs merge the known ones, a string appended and anything else set; a field the block
holds already makes the stream incomplete, as adding and replacing cannot be told apart. A known delta for a block of
another type (a `text_delta` for a thinking or tool_use block) is no part of it: dropped, and the stream is
incomplete. A null `message_delta` usage count is not given: the `message_start` count stands.

Repeats and new calls: events carry no sequence number; a block is named by its index and, for a tool_use block, by
its id. A `content_block_start` at an index already used is the same block again (a repeat, dropped) when its type
and id are the block's, and a new block (a new call, for a tool_use) under another id or type; the block that held
the index before, if still open, is closed there (a call of it is cut). A tool_use start at a new index under an
id a call already took is that call again: a repeat when its arguments are the call's, else dropped in doubt. A `content_block_stop` for a block already
stopped, a second `message_start` of the same message and a second `message_stop` change nothing and are dropped.
What the index cannot settle makes the stream incomplete: a delta for a block already stopped (a repeat, or a
fragment out of order: dropped), a delta before its block's start (the block is implied), a delta without its index
or delta object and a stop without its index (an index is never guessed), a stop for a block that never started
(whatever it held is lost), anything but a repeat after `message_stop`, a payload with no `type`, and, once
`message_stop` came, a missing `message_start`, no `stop_reason`, or an index never seen below the highest one. An
event type it does not know is let pass, as Anthropic asks of clients, and a note in `extras["stream"]["notes"]`
(type `unknown_event`) names each such type once. Two equal deltas for an open block cannot be told from a model
saying the same thing twice, and are both kept; a delta sent twice, lost, or two swapped inside one block leave no
evidence at all.

A stream whose `message_delta` carried no `usage` (the API always sends it) is whole all the same: it stays
complete, and a note in `extras["stream"]["notes"]` says the final output count never came.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, ClassVar

from ...streams.events import dumps_compact, parse_json
from ...streams.shapes import KnownShapes
from ...streams.state import USAGE_MISSING, Call, WireState, carries, first_gap
from ..canonical import ProviderError, Response
from .codec import decode_response
from .stream_shapes import anthropic

_TEXT_FIELDS = MappingProxyType({"text": "text", "thinking": "thinking"})
# Blocks whose `input` streams as JSON text but which are not calls for the client to run.
_INPUT_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
# The blocks each known delta adds to: sent to a block of another type, it is no part of that block.
_INPUTS = _INPUT_BLOCKS | {"tool_use"}
_TEXT_ONLY = frozenset({"text"})
_THINKING_ONLY = frozenset({"thinking"})
_DELTA_BLOCKS = MappingProxyType(
    {
        "text_delta": _TEXT_ONLY,
        "citations_delta": _TEXT_ONLY,
        "thinking_delta": _THINKING_ONLY,
        "signature_delta": _THINKING_ONLY,
        "input_json_delta": _INPUTS,
    }
)
# The block a known delta implies when its content_block_start never came.
_IMPLIED = MappingProxyType(
    {
        "input_json_delta": "tool_use",
        "thinking_delta": "thinking",
        "signature_delta": "thinking",
    }
)
# The type of the note naming the event types the stream sent that this state does not know.
UNKNOWN_EVENT = "unknown_event"
# Values a field of a block's start may hold that a delta's value fills rather than adds to.
_EMPTY: tuple[Any, ...] = (None, "", [], {})


class _Block:
    __slots__ = ("call", "data", "done", "implied", "kind", "parts", "start", "twin")

    def __init__(self, data: dict[str, Any], implied: bool = False) -> None:
        self.data = data
        # Its type, read by the text shortcut: a text_delta adds to a text block only.
        self.kind: Any = data.get("type")
        # The content_block its start carried, as sent: a start sent again is compared with it.
        self.start = dict(data)
        self.parts: list[str] = []
        self.call: Call | None = None
        self.done = False
        # Started by a delta whose content_block_start never came.
        self.implied = implied
        # The call that took this tool_use block's id at another index: this block is its repeat, or a clash.
        self.twin: Call | None = None


class AnthropicState(WireState):
    """message_start ... message_stop in, one Message body out."""

    wire = "anthropic"
    object_arguments = True
    end_signal = "message_stop"
    # Its common reads, taken by one pattern each (see `shapes`).
    known_shapes: ClassVar[KnownShapes] = MappingProxyType({"sse": anthropic})
    call_end_signal = "its content_block_stop"

    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] = {"type": "message", "role": "assistant"}
        # The block holding each index now; every block in the order they started (an index may be reused).
        self.blocks: dict[int, _Block] = {}
        self.order: list[_Block] = []
        self.message_started = False
        # Whether a message_delta carried its usage (the final output count), as the API always sends it.
        self.final_usage = False
        # The event types not known here that the stream sent, ignored: said in one note at the end.
        self.unknown_events: list[str] = []

    def feed(self, event: str | None, data: Any) -> None:
        kind = data.get("type") or event
        if kind == "content_block_delta" and not self.complete:
            # A text or argument delta for an open block is nearly every event: taken here, as _delta would.
            # No index is no block: _delta says so (an index is never guessed).
            block = self.blocks.get(data.get("index"))
            delta = data.get("delta")
            if block is not None and not block.done and type(delta) is dict:
                delta_kind = delta.get("type")
                if delta_kind == "input_json_delta" and block.call is not None:
                    fragment = delta.get("partial_json") or ""
                    if fragment:
                        self.arguments(block.call, fragment)
                    return
                if delta_kind == "text_delta" and block.kind == "text":
                    text = delta.get("text") or ""
                    if text:
                        block.parts.append(text)
                        self.text(text)
                    return
        if self.complete and kind not in ("error", "ping"):
            self._after_stop(kind, data)
        elif kind == "content_block_delta":
            self._delta(data)
        elif kind == "content_block_start":
            self._block_start(data)
        elif kind == "content_block_stop":
            index = data.get("index")
            block = self.blocks.get(index)
            if index is None:
                self.doubt(
                    "a content_block_stop without its index: no block is closed by it",
                    data,
                )
            elif block is None:
                self.doubt(
                    f"content_block_stop for block {index}, which never started: whatever it held is lost",
                    data,
                )
            elif block.done:
                self.repeat()
            else:
                self._stop(block)
        elif kind == "message_start":
            if self.message_started:
                self._message_again(data)
                return
            self.message_started = True
            self.message.update(data.get("message") or {})
            self.begin(self.message.get("id"), self.message.get("model"))
        elif kind == "message_delta":
            self._message_delta(data)
        elif kind == "message_stop":
            self.complete = True
        elif kind == "error":
            error = data.get("error") or {}
            self.fail(
                str(error.get("message") or error),
                code=error.get("type"),
                type=error.get("type"),
                raw=data,
            )
        elif kind == "ping":
            pass
        elif type(data.get("type")) is not str:
            # A payload with no type is no event at all.
            self.doubt(
                f"a payload that is no Messages stream event ({kind}): dropped", data
            )
        elif kind not in self.unknown_events:
            # A typed event of a kind not listed here is let pass: Anthropic's versioning policy says new event
            # types may be added and clients should ignore them. A note at the end names them, once each.
            self.unknown_events.append(str(kind))

    def _block_start(self, data: dict[str, Any]) -> None:
        if type(data.get("content_block")) is not dict or "index" not in data:
            self.doubt(
                "a content_block_start without its index or content_block: its block is lost",
                data,
            )
            return
        index = data.get("index", 0)
        block = self.blocks.get(index)
        if block is None:
            self._start(data)
            return
        if block.implied:
            _name_implied(block, data)
            return
        content = data.get("content_block") or {}
        if _identity(content) != _identity(block.start):
            # Another block at an index already used: a new block (a new call), never a repeat.
            if not block.done:
                self._close_early(block, index)
            self._start(data)
        elif content == block.start:
            self.repeat()
        else:
            self.presumed_repeat(
                f"content_block_start for block {index} again, with other content", data
            )

    def _close_early(self, block: _Block, index: int) -> None:
        """A block whose index a new block took before its content_block_stop came."""
        if block.call is not None:
            self.cut_call(block.call)
            block.done = True
        else:
            self._stop(block)
            self.doubt(f"block {index} was replaced before its content_block_stop")

    def _start(self, data: dict[str, Any], implied: bool = False) -> None:
        block = _Block(dict(data.get("content_block") or {}), implied)
        self.blocks[data.get("index", 0)] = block
        self.order.append(block)
        kind = block.data.get("type")
        field = _TEXT_FIELDS.get(kind or "")
        if field is not None:
            initial = block.data.get(field) or ""
            if initial:
                self._text(block, kind, initial)
        elif kind == "tool_use":
            first = self.holder(block.data.get("id"))
            if first is None:
                block.call = self.open_call(
                    block.data.get("id"), block.data.get("name")
                )
            else:
                # Its deltas gather in block.parts (no call, so no shortcut takes them) until its stop.
                block.twin = first

    def _delta(self, data: dict[str, Any]) -> None:
        index = data.get("index", 0)
        delta = data.get("delta")
        if (
            type(delta) is not dict
            or type(delta.get("type")) is not str
            or "index" not in data
        ):
            self.doubt(
                "a content_block_delta without its index or delta: whatever it held is lost",
                data,
            )
            return
        kind: str = delta["type"]
        accepts = _DELTA_BLOCKS.get(kind)
        block = self.blocks.get(index)
        if block is None:
            # A delta for a block that never started: start the block its delta implies (an unknown delta's by its
            # name, as Anthropic names them: a compaction_delta's block is a compaction block).
            implied = _IMPLIED.get(kind) or (
                "text" if accepts is not None else kind.removesuffix("_delta")
            )
            self.doubt(f"a delta for block {index} came before its content_block_start")
            self._start({"index": index, "content_block": {"type": implied}}, True)
            block = self.blocks[index]
        elif block.done:
            if carries(delta):
                self.presumed_repeat(
                    f"a delta for block {index} after its content_block_stop", data
                )
            else:
                self.repeat()
            return
        if accepts is None:
            self._unknown(block, index, kind, delta)
            return
        if block.kind not in accepts:
            if carries(delta):
                self.doubt(
                    f"a {kind} for block {index}, a {block.kind} block, which it cannot add to: dropped",
                    data,
                )
            return
        if kind == "text_delta":
            self._text(block, "text", delta.get("text") or "")
        elif kind == "input_json_delta":
            fragment = delta.get("partial_json") or ""
            if fragment:
                if block.call is not None:
                    self.arguments(block.call, fragment)
                else:
                    block.parts.append(fragment)
        elif kind == "thinking_delta":
            self._text(block, "thinking", delta.get("thinking") or "")
        elif kind == "signature_delta":
            block.data["signature"] = (block.data.get("signature") or "") + (
                delta.get("signature") or ""
            )
        elif kind == "citations_delta":
            block.data.setdefault("citations", []).append(delta.get("citation"))

    def _unknown(
        self, block: _Block, index: int, kind: str, delta: dict[str, Any]
    ) -> None:
        """A delta of a type this state does not know (a beta one, or one added since): its fields are kept on its
        block as the SDKs merge the known deltas, a string appended and anything else set. A null is "not given".
        Where the block holds the field already, whether the delta adds to it or replaces it is a guess: a note."""
        held = block.data
        # The field the block's own deltas make, set at its stop: a text block's text, a call's input.
        field = (
            _TEXT_FIELDS.get(block.kind) or ("input" if block.kind in _INPUTS else None)
            if type(block.kind) is str
            else None
        )
        for key, value in delta.items():
            if key == "type":
                continue
            if value is None:
                held.setdefault(key, None)
                continue
            if key == field:
                if type(value) is not str or key == "input":
                    self.doubt(
                        f"a {kind} for block {index} gives its {key!r}, which only its own deltas make: dropped",
                        delta,
                    )
                    continue
                # A text or thinking block's text is its parts, each sent as an event: this one too.
                again = appended = bool(block.parts) or bool(held.get(key))
                self._text(block, block.kind, value)
            else:
                before = held.get(key)
                appended = type(value) is str and type(before) is str
                if appended:
                    held[key] = before + value
                    again = before != ""
                else:
                    held[key] = value
                    again = before not in _EMPTY and before != value
            if again:
                how = (
                    "appended, though it may replace"
                    if appended
                    else "replaced, though it may add to"
                )
                self.doubt(
                    f"a {kind} for block {index} gives its {key!r} again: {how} what the block held",
                    delta,
                )

    def _text(self, block: _Block, kind: str | None, text: str) -> None:
        if not text:
            return
        block.parts.append(text)
        if kind == "thinking":
            self.reasoning(text)
        else:
            self.text(text)

    def _stop(self, block: _Block) -> None:
        if block.done:
            return
        block.done = True
        kind = block.data.get("type")
        field = _TEXT_FIELDS.get(kind or "")
        if field is not None:
            block.data[field] = "".join(block.parts)
        elif block.call is not None:
            self._close(block, block.call)
        elif block.twin is not None:
            self.twin(block.twin, "".join(block.parts) or _start_input(block) or "")
        elif kind in _INPUT_BLOCKS and block.parts:
            block.data["input"] = self._input("".join(block.parts))

    def _close(self, block: _Block, call: Call) -> None:
        """A call's input is its input_json_delta fragments; with none, the input its start carried (the
        documented start has `{}`). When both are there and disagree, the fragments are taken, in doubt."""
        given = _start_input(block)
        if not call.parts and given is not None:
            self.close_call(call, dumps_compact(given))
        else:
            self.close_call(call)
            if given is not None and call.value != given:
                self.doubt(
                    f"tool call {call.index} ({call.name}): its content_block_start input and its"
                    " input_json_delta fragments disagree; the fragments are taken",
                    given,
                )
        block.data["input"] = call.value if call.value is not None else {}

    def _input(self, text: str) -> Any:
        try:
            return parse_json(text)
        except ValueError as error:
            self.fault(f"server tool input is not valid JSON: {error}", raw=text)
            return {}

    def _message_again(self, data: dict[str, Any]) -> None:
        """A second message_start: the same message's again is a repeat; another message's is not this one's."""
        again = data.get("message") or {}
        if again.get("id") == self.message.get("id"):
            self.repeat()
        else:
            self.presumed_repeat("a message_start of another message", data)

    def _message_delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta") or {}
        self.message.update(delta)
        usage = data.get("usage")
        if type(usage) is dict:
            self.final_usage = True
            # Its counts are totals, each optional: a null one is not given, and the message_start count stands.
            self.message["usage"] = {
                **(self.message.get("usage") or {}),
                **{key: value for key, value in usage.items() if value is not None},
            }
        elif usage is not None:
            self.doubt(
                "a message_delta whose usage is no object: its usage is lost", data
            )

    def _after_stop(self, kind: str | None, data: dict[str, Any]) -> None:
        """An event after message_stop: a repeat when it changes nothing taken; else dropped, in doubt."""
        index = data.get("index")
        block = self.blocks.get(index) if type(index) is int else None
        content = data.get("content_block") or {}
        delta = data.get("delta")
        harmless = (
            kind == "message_stop"
            or (kind == "content_block_stop" and block is not None and block.done)
            or (
                kind == "content_block_start"
                and block is not None
                and content == block.start
            )
            or (kind == "content_block_delta" and not carries(delta))
            or (
                kind == "message_start"
                and (data.get("message") or {}).get("id") == self.message.get("id")
            )
            or (kind == "message_delta" and not self._changes(data))
        )
        if harmless:
            self.repeat()
        else:
            self.presumed_repeat(f"{kind} after message_stop", data)

    def _changes(self, data: dict[str, Any]) -> bool:
        """Whether a message_delta says anything the message does not hold already."""
        delta = data.get("delta") or {}
        usage = data.get("usage") or {}
        have = self.message.get("usage") or {}
        return any(
            self.message.get(key) != value for key, value in delta.items()
        ) or any(
            value is not None and have.get(key) != value for key, value in usage.items()
        )

    def finish(self) -> None:
        for block in self.order:
            if block.call is not None and not block.done:
                # No content_block_stop: the call's input may be missing or cut short.
                self.cut_call(block.call)
            else:
                self._stop(block)
        if self.complete and self.provider_error is None:
            self._check_end()
        if self.unknown_events:
            self.note(
                "the stream sent event types this state does not know, ignored as Anthropic's versioning policy"
                f" asks: {', '.join(self.unknown_events)}",
                UNKNOWN_EVENT,
            )
        super().finish()

    def _check_end(self) -> None:
        """What a stream that reached message_stop must have had."""
        if not self.message_started:
            self.doubt(
                "no message_start came: the message's id, model and input usage are missing"
            )
        if self.message.get("stop_reason") is None:
            self.doubt("no message_delta said why the message stopped (stop_reason)")
        if not self.final_usage:
            # The answer is whole without it: a note, not a doubt, so a run does not ask again.
            self.note(
                "no message_delta carried usage: the output token count is message_start's, not the final one",
                USAGE_MISSING,
            )
        missing = first_gap(self.blocks)
        if missing is not None:
            self.doubt(f"content block {missing} never came")

    def body(self) -> dict[str, Any]:
        body = dict(self.message)
        body["content"] = [
            block.data
            for block in self.order
            if not _is_cut(block) and block.twin is None
        ]
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)


def _identity(content: dict[str, Any]) -> tuple[Any, Any]:
    """What names a block beside its index: its type and, for a call, its id."""
    return content.get("type"), content.get("id")


def _start_input(block: _Block) -> Any:
    """The input a tool_use block's start carried, when it is anything but the documented empty object."""
    given = block.start.get("input")
    return None if given is None or given == {} else given


def _is_cut(block: _Block) -> bool:
    return block.call is not None and block.call.cut


def _name_implied(block: _Block, data: dict[str, Any]) -> None:
    """A start that comes after deltas already opened its block only says what the block is."""
    block.implied = False
    block.start = dict(data.get("content_block") or {})
    block.data = {**block.start, **block.data}
    block.kind = block.data.get("type")
    call = block.call
    if call is not None:
        call.id = call.id or block.data.get("id") or None
        call.name = call.name or block.data.get("name") or None
