# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Anthropic Messages: content-block events accumulate into one Message body.

Blocks are keyed by their content-block index, which text, thinking, server-tool and tool_use blocks share; only
`tool_use` blocks are tool calls. `input_json_delta` fragments are joined once, at the block's stop: a call is
closed by the `content_block_stop` of its block, and a call whose block never stopped is cut.

Repeats: events carry no sequence number, only the block index, so what is recognized is what the index makes
impossible twice: a second `message_start`, a `content_block_start` for an index already started, a
`content_block_stop` for a block already stopped, a delta for a stopped block, and anything after `message_stop`.
Two equal deltas for an open block cannot be told from a model saying the same thing twice, and are both kept.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..wires.anthropic import decode_response
from ..wires.base import ProviderError, Response
from .events import parse_json
from .state import Call, WireState

_TEXT_FIELDS = MappingProxyType({"text": "text", "thinking": "thinking"})
# Blocks whose `input` streams as JSON text but which are not calls for the client to run.
_INPUT_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})


class _Block:
    __slots__ = ("call", "data", "done", "implied", "parts")

    def __init__(self, data: dict[str, Any], implied: bool = False) -> None:
        self.data = data
        self.parts: list[str] = []
        self.call: Call | None = None
        self.done = False
        # Started by a delta whose content_block_start never came.
        self.implied = implied


class AnthropicState(WireState):
    """message_start ... message_stop in, one Message body out."""

    wire = "anthropic"
    object_arguments = True
    end_signal = "message_stop"
    call_end_signal = "its content_block_stop"

    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] = {"type": "message", "role": "assistant"}
        self.blocks: dict[int, _Block] = {}
        self.message_started = False

    def feed(self, event: str | None, data: Any) -> None:
        kind = data.get("type") or event
        if kind == "content_block_delta" and not self.complete:
            # A text or argument delta for an open block is nearly every event: taken here, as _delta would.
            block = self.blocks.get(data.get("index", 0))
            delta = data.get("delta")
            if block is not None and not block.done and type(delta) is dict:
                delta_kind = delta.get("type")
                if delta_kind == "input_json_delta" and block.call is not None:
                    fragment = delta.get("partial_json") or ""
                    if fragment:
                        self.arguments(block.call, fragment)
                    return
                if delta_kind == "text_delta":
                    text = delta.get("text") or ""
                    if text:
                        block.parts.append(text)
                        self.text(text)
                    return
        if self.complete and kind not in ("error", "ping"):
            self.repeat()  # the message is over: nothing after message_stop belongs to it
        elif kind == "content_block_delta":
            self._delta(data)
        elif kind == "content_block_start":
            block = self.blocks.get(data.get("index", 0))
            if block is None:
                self._start(data)
            elif block.implied:
                _name_implied(block, data)
            else:
                self.repeat()
        elif kind == "content_block_stop":
            block = self.blocks.get(data.get("index", 0))
            if block is not None and block.done:
                self.repeat()
            elif block is not None:
                self._stop(block)
        elif kind == "message_start":
            if self.message_started:
                self.repeat()
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

    def _start(self, data: dict[str, Any], implied: bool = False) -> None:
        block = _Block(dict(data.get("content_block") or {}), implied)
        self.blocks[data.get("index", 0)] = block
        kind = block.data.get("type")
        field = _TEXT_FIELDS.get(kind or "")
        if field is not None:
            initial = block.data.get(field) or ""
            if initial:
                self._text(block, kind, initial)
        elif kind == "tool_use":
            block.call = self.open_call(block.data.get("id"), block.data.get("name"))

    def _delta(self, data: dict[str, Any]) -> None:
        index = data.get("index", 0)
        delta = data.get("delta") or {}
        kind = delta.get("type")
        block = self.blocks.get(index)
        if block is None:
            # A delta for a block that never started: start the block its delta implies.
            implied = (
                "tool_use"
                if kind == "input_json_delta"
                else "thinking"
                if kind == "thinking_delta"
                else "text"
            )
            self._start({"index": index, "content_block": {"type": implied}}, True)
            block = self.blocks[index]
        elif block.done:
            self.repeat()
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
            self.close_call(block.call)
            block.data["input"] = (
                block.call.value if block.call.value is not None else {}
            )
        elif kind in _INPUT_BLOCKS and block.parts:
            block.data["input"] = self._input("".join(block.parts))

    def _input(self, text: str) -> Any:
        try:
            return parse_json(text)
        except ValueError as error:
            self.fault(f"server tool input is not valid JSON: {error}", raw=text)
            return {}

    def _message_delta(self, data: dict[str, Any]) -> None:
        delta = data.get("delta") or {}
        self.message.update(delta)
        usage = data.get("usage")
        if usage:
            self.message["usage"] = {**(self.message.get("usage") or {}), **usage}

    def finish(self) -> None:
        for block in self.blocks.values():
            if block.call is not None and not block.done:
                # No content_block_stop: the call's input may be missing or cut short.
                self.cut_call(block.call)
            else:
                self._stop(block)
        super().finish()

    def body(self) -> dict[str, Any]:
        body = dict(self.message)
        body["content"] = [
            self.blocks[index].data
            for index in sorted(self.blocks)
            if not _is_cut(self.blocks[index])
        ]
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)


def _is_cut(block: _Block) -> bool:
    return block.call is not None and block.call.cut


def _name_implied(block: _Block, data: dict[str, Any]) -> None:
    """A start that comes after deltas already opened its block only says what the block is."""
    block.implied = False
    block.data = {**dict(data.get("content_block") or {}), **block.data}
    call = block.call
    if call is not None:
        call.id = call.id or block.data.get("id") or None
        call.name = call.name or block.data.get("name") or None
