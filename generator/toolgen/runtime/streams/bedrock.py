# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Bedrock ConverseStream: eventstream messages (or SDK-decoded events) into one Converse response.

Events arrive either from the binary eventstream (the event name in the `:event-type` header, the payload padded
with a random `p` field) or SDK-decoded as `{"<eventName>": {...}}`. `contentBlockIndex` is shared by text,
reasoning and toolUse blocks; a text block may start with its first delta, without a contentBlockStart.
"""

from __future__ import annotations

from typing import Any

from ..wires.base import ProviderError, Response
from .state import Call, WireState

_EVENTS = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)


class _Block:
    __slots__ = ("call", "data", "done", "kind", "signature", "texts")

    def __init__(self, kind: str, data: dict[str, Any]) -> None:
        self.kind = kind
        self.data = data
        self.texts: list[str] = []
        self.signature: list[str] = []
        self.call: Call | None = None
        self.done = False


class BedrockState(WireState):
    """ConverseStream events in, one Converse response body out."""

    wire = "bedrock-converse"
    object_arguments = True
    end_signal = "messageStop"

    def __init__(self) -> None:
        super().__init__()
        self.role = "assistant"
        self.top: dict[str, Any] = {}
        self.blocks: dict[int, _Block] = {}

    def feed(self, event: str | None, data: Any) -> None:
        if event is None and len(data) == 1:
            # The SDK-decoded form wraps each payload in its event name.
            ((event, data),) = data.items()
            if event not in _EVENTS and event.endswith("Exception"):
                detail = data if isinstance(data, dict) else {"message": data}
                self.fail(
                    str(detail.get("message") or event),
                    code=event,
                    type="exception",
                    raw=data,
                )
                return
        if event == "contentBlockDelta":
            self._delta(data)
        elif event == "contentBlockStart":
            self._start(data)
        elif event == "contentBlockStop":
            block = self.blocks.get(data.get("contentBlockIndex", 0))
            if block is not None:
                self._stop(block)
        elif event == "messageStart":
            self.role = data.get("role") or self.role
            self.begin()
        elif event == "messageStop":
            self.top.update({key: value for key, value in data.items() if key != "p"})
            self.complete = True
        elif event == "metadata":
            self.top.update({key: value for key, value in data.items() if key != "p"})

    def _start(self, data: dict[str, Any]) -> None:
        start = data.get("start") or {}
        index = data.get("contentBlockIndex", 0)
        tool = start.get("toolUse")
        if tool is not None:
            block = self.blocks[index] = _Block("toolUse", dict(tool))
            block.call = self.open_call(tool.get("toolUseId"), tool.get("name"))
        else:
            kind = next(iter(start), "text")
            self.blocks[index] = _Block(kind, dict(start.get(kind) or {}))

    def _block(self, index: int, kind: str) -> _Block:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = _Block(kind, {})
        return block

    def _delta(self, data: dict[str, Any]) -> None:
        index = data.get("contentBlockIndex", 0)
        delta = data.get("delta") or {}
        text = delta.get("text")
        if text is not None:
            if text:
                self._block(index, "text").texts.append(text)
                self.text(text)
            return
        tool = delta.get("toolUse")
        if tool is not None:
            block = self._block(index, "toolUse")
            if block.call is None:
                block.call = self.open_call(None, None)
            fragment = tool.get("input") or ""
            if fragment:
                self.arguments(block.call, fragment)
            return
        reasoning = delta.get("reasoningContent")
        if reasoning is not None:
            self._reasoning(self._block(index, "reasoningContent"), reasoning)

    def _reasoning(self, block: _Block, delta: dict[str, Any]) -> None:
        text = delta.get("text")
        if text:
            block.texts.append(text)
            self.reasoning(text)
        if delta.get("signature"):
            block.signature.append(delta["signature"])
        if delta.get("redactedContent"):
            block.data["redactedContent"] = (
                block.data.get("redactedContent") or ""
            ) + delta["redactedContent"]

    def _stop(self, block: _Block) -> None:
        if block.done:
            return
        block.done = True
        if block.call is not None:
            self.close_call(block.call)
            block.data["input"] = (
                block.call.value if block.call.value is not None else {}
            )

    def finish(self) -> None:
        for block in self.blocks.values():
            self._stop(block)
        super().finish()

    def body(self) -> dict[str, Any]:
        content = [_block_body(self.blocks[index]) for index in sorted(self.blocks)]
        body: dict[str, Any] = {
            "output": {"message": {"role": self.role, "content": content}}
        }
        body.update(self.top)
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        from ..wires.bedrock import decode_response

        return decode_response(body)


def _block_body(block: _Block) -> dict[str, Any]:
    if block.kind == "text":
        return {"text": "".join(block.texts)}
    if block.kind == "reasoningContent":
        if "redactedContent" in block.data and not block.texts:
            return {
                "reasoningContent": {"redactedContent": block.data["redactedContent"]}
            }
        text: dict[str, Any] = {"text": "".join(block.texts)}
        if block.signature:
            text["signature"] = "".join(block.signature)
        return {"reasoningContent": {"reasoningText": text}}
    return {block.kind: block.data}
