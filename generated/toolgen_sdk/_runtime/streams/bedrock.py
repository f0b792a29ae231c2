# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Bedrock ConverseStream: eventstream messages (or SDK-decoded events) into one Converse response.

Events arrive either from the binary eventstream (the event name in the `:event-type` header, the payload padded
with a random `p` field) or SDK-decoded as `{"<eventName>": {...}}`. `contentBlockIndex` is shared by text,
reasoning and toolUse blocks; a text block may start with its first delta, without a contentBlockStart.

A call (a toolUse block) is closed by the `contentBlockStop` of its block; a call whose block never stopped is
cut.

Repeats: events carry the block index and no sequence number (the eventstream's `p` field is padding of random
length, not a mark two events never share), so what is recognized is what the index makes impossible twice: a
second `messageStart`, a `contentBlockStart` for a block already started, a `contentBlockStop` or delta for a
block already stopped, a second `metadata`, and after `messageStop` anything but `metadata`. Two equal deltas for an open block
cannot be told from a model saying the same thing twice, and are both kept.
"""

from __future__ import annotations

from typing import Any

from ..wires.base import ProviderError, Response
from ..wires.bedrock import decode_response
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
    __slots__ = ("call", "data", "done", "implied", "kind", "signature", "texts")

    def __init__(self, kind: str, data: dict[str, Any], implied: bool = False) -> None:
        self.kind = kind
        # Started by its first delta, without a contentBlockStart (usual for text).
        self.implied = implied
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
    call_end_signal = "its contentBlockStop"

    def __init__(self) -> None:
        super().__init__()
        self.role = "assistant"
        self.top: dict[str, Any] = {}
        self.blocks: dict[int, _Block] = {}
        self.message_started = False
        self.metadata = False

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
        if self._repeated(event, data):
            self.repeat()
        elif event == "contentBlockDelta":
            self._delta(data)
        elif event == "contentBlockStart":
            self._start(data)
        elif event == "contentBlockStop":
            block = self.blocks.get(data.get("contentBlockIndex", 0))
            if block is not None:
                self._stop(block)
        elif event == "messageStart":
            self.message_started = True
            self.role = data.get("role") or self.role
            self.begin()
        elif event == "messageStop":
            self.top.update({key: value for key, value in data.items() if key != "p"})
            self.complete = True
        elif event == "metadata":
            self.metadata = True
            self.top.update({key: value for key, value in data.items() if key != "p"})

    def _repeated(self, event: str | None, data: Any) -> bool:
        """Whether the event is one the block indexes say was already taken."""
        if event == "metadata":
            return self.metadata
        if self.complete:
            return True
        if event == "messageStart":
            return self.message_started
        block = self.blocks.get(data.get("contentBlockIndex", 0))
        if block is None:
            return False
        if event == "contentBlockStart":
            return not block.implied
        return block.done and event in ("contentBlockDelta", "contentBlockStop")

    def _start(self, data: dict[str, Any]) -> None:
        start = data.get("start") or {}
        index = data.get("contentBlockIndex", 0)
        tool = start.get("toolUse")
        implied = self.blocks.get(index)
        if implied is not None:
            # The start comes after deltas already opened its block: it only names what the block is.
            implied.implied = False
            if tool is not None and implied.call is not None:
                implied.data = {**dict(tool), **implied.data}
                implied.call.id = implied.call.id or tool.get("toolUseId") or None
                implied.call.name = implied.call.name or tool.get("name") or None
            return
        if tool is not None:
            block = self.blocks[index] = _Block("toolUse", dict(tool))
            block.call = self.open_call(tool.get("toolUseId"), tool.get("name"))
        else:
            kind = next(iter(start), "text")
            self.blocks[index] = _Block(kind, dict(start.get(kind) or {}))

    def _block(self, index: int, kind: str) -> _Block:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = _Block(kind, {}, implied=True)
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
            if block.call is None and block.kind != "toolUse":
                # Only a toolUse block is a call; input for a text block is a corrupt event.
                self.fault(f"toolUse input for {block.kind} block {index}", raw=data)
                return
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
            if block.call is not None and not block.done:
                # No contentBlockStop: the call's input may be missing or cut short.
                self.cut_call(block.call)
            else:
                self._stop(block)
        super().finish()

    def body(self) -> dict[str, Any]:
        content = [
            _block_body(self.blocks[index])
            for index in sorted(self.blocks)
            if not _is_cut(self.blocks[index])
        ]
        body: dict[str, Any] = {
            "output": {"message": {"role": self.role, "content": content}}
        }
        body.update(self.top)
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
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


def _is_cut(block: _Block) -> bool:
    return block.call is not None and block.call.cut
