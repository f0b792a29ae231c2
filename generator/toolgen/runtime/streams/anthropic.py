# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Anthropic Messages: content-block events accumulate into one Message body.

Blocks are keyed by their content-block index, which text, thinking, server-tool and tool_use blocks share; only
`tool_use` blocks are tool calls. `input_json_delta` fragments are joined once, at the block's stop.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..wires.base import ProviderError, Response
from .events import parse_json
from .state import Call, WireState

_TEXT_FIELDS = MappingProxyType({"text": "text", "thinking": "thinking"})
# Blocks whose `input` streams as JSON text but which are not calls for the client to run.
_INPUT_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})


class _Block:
    __slots__ = ("call", "data", "done", "parts")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.parts: list[str] = []
        self.call: Call | None = None
        self.done = False


class AnthropicState(WireState):
    """message_start ... message_stop in, one Message body out."""

    wire = "anthropic"
    object_arguments = True
    end_signal = "message_stop"

    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] = {"type": "message", "role": "assistant"}
        self.blocks: dict[int, _Block] = {}

    def feed(self, event: str | None, data: Any) -> None:
        kind = data.get("type") or event
        if kind == "content_block_delta":
            self._delta(data)
        elif kind == "content_block_start":
            self._start(data)
        elif kind == "content_block_stop":
            block = self.blocks.get(data.get("index", 0))
            if block is not None:
                self._stop(block)
        elif kind == "message_start":
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

    def _start(self, data: dict[str, Any]) -> None:
        block = _Block(dict(data.get("content_block") or {}))
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
            self._start({"index": index, "content_block": {"type": implied}})
            block = self.blocks[index]
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
            self._stop(block)
        super().finish()

    def body(self) -> dict[str, Any]:
        body = dict(self.message)
        body["content"] = [self.blocks[index].data for index in sorted(self.blocks)]
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        from ..wires.anthropic import decode_response

        return decode_response(body)
