# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for Bedrock ConverseStream: eventstream messages (or SDK-decoded events) into one Converse response.

Events arrive either from the binary eventstream (the event name in the `:event-type` header, the payload padded
with a random `p` field) or SDK-decoded as `{"<eventName>": {...}}`. `contentBlockIndex` is shared by text,
reasoning and toolUse blocks; a text or reasoning block may start with its first delta, without a
contentBlockStart.

A call (a toolUse block) is closed by the `contentBlockStop` of its block; a call whose block never stopped is
cut. A text, toolUse or reasoningContent delta for a block of another kind is no part of it: dropped (no event),
and the stream is incomplete. A delta of a kind not known here (AWS lists citation, image, toolResult, ...) is kept as
sent, `{"contentBlockIndex", "delta"}` in arrival order, under the response's `extras["bedrock-converse"]["deltas"]`.

Repeats and new calls: events carry the block index and no sequence number (the eventstream's `p` field is padding
of random length, not a mark two events never share); a toolUse block is named by its index and its `toolUseId`. A
`contentBlockStart` at an index already started is the same block again (a repeat, dropped) under the same
toolUseId and kind, and a new block (a new call) under another; the block that held the index, if still open, is
closed there (a call of it is cut); a toolUse start at a new index under a toolUseId a call took is that call again
(a repeat when its input is the call's, else dropped in doubt). A `contentBlockStop` for a block already stopped, a second `messageStart`, a
second `messageStop` and a second equal `metadata` change nothing and are dropped. What the index cannot settle
makes the stream incomplete: a delta for a block already stopped (dropped), a delta without its index or delta
object, a start without its index (its block is lost) or a stop without one (it closes nothing: an index is never
guessed), toolUse input before its block's start (a call with no id or name), a stop for a block that never started,
a payload that is no ConverseStream event, a different second `metadata`, anything else after `messageStop`, and, once `messageStop` came, no `stopReason` or
an index never seen below the highest one (a missing `messageStart` loses nothing: it only says the role). Two
equal deltas for an open block cannot be told from a model saying the same thing twice, and are both kept; a delta
sent twice, lost, or two swapped inside one block leave no evidence at all.

The `metadata` event that follows `messageStop` carries the usage and metrics; a stream that ends without it (or
with no usage in it) is whole all the same, so it stays complete, and a note in `extras["stream"]["notes"]` says
the usage never came.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any, ClassVar

from ...streams.events import dumps_compact
from ...streams.shapes import KnownShapes
from ...streams.state import USAGE_MISSING, Call, WireState, carries, first_gap
from ..canonical import ProviderError, Response
from .codec import WIRE, decode_response
from .detect import BEDROCK_EVENTS
from .stream_shapes import bedrock


class _Block:
    __slots__ = (
        "call",
        "data",
        "done",
        "implied",
        "kind",
        "signature",
        "start",
        "texts",
        "twin",
    )

    def __init__(self, kind: str, data: dict[str, Any], implied: bool = False) -> None:
        self.kind = kind
        # Started by its first delta, without a contentBlockStart (usual for text).
        self.implied = implied
        self.data = data
        # The contentBlockStart's `start`, as sent: a start sent again is compared with it.
        self.start: dict[str, Any] | None = None
        self.texts: list[str] = []
        self.signature: list[str] = []
        self.call: Call | None = None
        self.done = False
        # The call that took this toolUse block's toolUseId at another index: this block is its repeat, or a clash.
        self.twin: Call | None = None


class BedrockState(WireState):
    """ConverseStream events in, one Converse response body out."""

    wire = "bedrock-converse"
    object_arguments = True
    end_signal = "messageStop"
    # Its common reads, taken by one pattern each (see `shapes`).
    known_shapes: ClassVar[KnownShapes] = MappingProxyType({"eventstream": bedrock})
    call_end_signal = "its contentBlockStop"

    def __init__(self) -> None:
        super().__init__()
        self.role = "assistant"
        self.top: dict[str, Any] = {}
        # The block holding each index now; every block in the order they started (an index may be reused).
        self.blocks: dict[int, _Block] = {}
        self.order: list[_Block] = []
        self.message_started = False
        self.metadata: dict[str, Any] | None = None
        # The contentBlockDelta events of kinds not known here, as sent: see `decode`.
        self.kept_deltas: list[dict[str, Any]] = []

    def feed(self, event: str | None, data: Any) -> None:
        if event is None and len(data) == 1:
            # The SDK-decoded form wraps each payload in its event name.
            ((event, data),) = data.items()
            if event not in BEDROCK_EVENTS and event.endswith("Exception"):
                detail = data if isinstance(data, dict) else {"message": data}
                self.fail(
                    str(detail.get("message") or event),
                    code=event,
                    type="exception",
                    raw=data,
                )
                return
        if event == "metadata":
            self._metadata(data)
        elif self.complete:
            self._after_stop(event, data)
        elif event == "contentBlockDelta":
            self._delta(data)
        elif event == "contentBlockStart":
            self._start(data)
        elif event == "contentBlockStop":
            index = data.get("contentBlockIndex")
            block = self.blocks.get(index)
            if index is None:
                self.doubt(
                    "a contentBlockStop without its index: no block is closed by it",
                    data,
                )
            elif block is None:
                self.doubt(
                    f"contentBlockStop for block {index}, which never started: whatever it held is lost",
                    data,
                )
            elif block.done:
                self.repeat()
            else:
                self._stop(block)
        elif event == "messageStart":
            if self.message_started:
                self.repeat()
                return
            self.message_started = True
            self.role = data.get("role") or self.role
            self.begin()
        elif event == "messageStop":
            self.top.update({key: value for key, value in data.items() if key != "p"})
            self.complete = True
        else:
            self.doubt(
                f"a payload that is no ConverseStream event ({event}): dropped", data
            )

    def _metadata(self, data: dict[str, Any]) -> None:
        kept = {key: value for key, value in data.items() if key != "p"}
        if self.metadata is None:
            self.metadata = kept
            self.top.update(kept)
        elif kept == self.metadata:
            self.repeat()
        else:
            self.presumed_repeat("a second, different metadata event", data)

    def _after_stop(self, event: str | None, data: dict[str, Any]) -> None:
        """An event after messageStop: a repeat when it changes nothing taken; else dropped, in doubt."""
        index = data.get("contentBlockIndex")
        block = self.blocks.get(index) if type(index) is int else None
        delta = data.get("delta")
        harmless = (
            event in ("messageStop", "messageStart")
            or (event == "contentBlockStop" and block is not None and block.done)
            or (
                event == "contentBlockStart"
                and block is not None
                and data.get("start") == block.start
            )
            or (event == "contentBlockDelta" and not carries(delta))
        )
        if harmless:
            self.repeat()
        else:
            self.presumed_repeat(f"{event} after messageStop", data)

    def _start(self, data: dict[str, Any]) -> None:
        start = data.get("start") or {}
        index = data.get("contentBlockIndex")
        if type(index) is not int:
            self.doubt("a contentBlockStart without its index: its block is lost", data)
            return
        tool = start.get("toolUse")
        held = self.blocks.get(index)
        if held is not None and held.implied:
            # The start comes after deltas already opened its block: it only names what the block is.
            held.implied = False
            held.start = start
            if tool is not None and held.call is not None:
                held.data = {**dict(tool), **held.data}
                held.call.id = held.call.id or tool.get("toolUseId") or None
                held.call.name = held.call.name or tool.get("name") or None
            return
        if held is not None:
            if _identity(start) == _identity(held.start or {}):
                if start == held.start:
                    self.repeat()
                else:
                    self.presumed_repeat(
                        f"contentBlockStart for block {index} again, with other content",
                        data,
                    )
                return
            # Another block at an index already used: a new block (a new call), never a repeat.
            if not held.done:
                self._close_early(held, index)
        if tool is not None:
            block = _Block("toolUse", dict(tool))
            block.twin = self.holder(tool.get("toolUseId"))
            if block.twin is None:
                block.call = self.open_call(tool.get("toolUseId"), tool.get("name"))
        else:
            kind = next(iter(start), "text")
            block = _Block(kind, dict(start.get(kind) or {}))
        block.start = start
        self.blocks[index] = block
        self.order.append(block)

    def _close_early(self, block: _Block, index: int) -> None:
        """A block whose index a new block took before its contentBlockStop came."""
        if block.call is not None:
            self.cut_call(block.call)
            block.done = True
        else:
            self._stop(block)
            self.doubt(f"block {index} was replaced before its contentBlockStop")

    def _block(self, index: int, kind: str) -> _Block:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = _Block(kind, {}, implied=True)
            self.order.append(block)
        return block

    def _delta(self, data: dict[str, Any]) -> None:
        index = data.get("contentBlockIndex", 0)
        delta = data.get("delta")
        if type(delta) is not dict or not delta or "contentBlockIndex" not in data:
            self.doubt(
                "a contentBlockDelta without its index or delta: whatever it held is lost",
                data,
            )
            return
        held = self.blocks.get(index)
        if held is not None and held.done:
            if carries(delta):
                self.presumed_repeat(
                    f"a delta for block {index} after its contentBlockStop", data
                )
            else:
                self.repeat()
            return
        text = delta.get("text")
        if text is not None:
            block = self._block(index, "text")
            if block.kind != "text":
                self._foreign(block, index, "text", data)
            elif text:
                block.texts.append(text)
                self.text(text)
            return
        tool = delta.get("toolUse")
        if tool is not None:
            block = self._block(index, "toolUse")
            if block.kind != "toolUse":
                self._foreign(block, index, "toolUse", data)
                return
            if block.twin is not None:
                # A call again under a toolUseId taken: its input is weighed at its stop.
                block.texts.append(tool.get("input") or "")
                return
            if block.call is None:
                self.doubt(
                    f"toolUse input for block {index} came before its contentBlockStart"
                )
                block.call = self.open_call(None, None)
            fragment = tool.get("input") or ""
            if fragment:
                self.arguments(block.call, fragment)
            return
        reasoning = delta.get("reasoningContent")
        if reasoning is not None:
            block = self._block(index, "reasoningContent")
            if block.kind != "reasoningContent":
                self._foreign(block, index, "reasoningContent", data)
            elif type(reasoning) is dict:
                self._reasoning(block, reasoning)
            else:
                self.not_text("reasoningContent", reasoning)
            return
        # A delta of a kind not known here (a citation, an image, a toolResult): kept as sent, in order, under
        # extras["bedrock-converse"]["deltas"], for the message has no place for it.
        self.kept_deltas.append(
            {key: value for key, value in data.items() if key != "p"}
        )

    def _foreign(self, block: _Block, index: int, kind: str, data: Any) -> None:
        """A known delta sent to a block of another kind: no part of that block, so dropped, in doubt."""
        if carries(data.get("delta")):
            self.doubt(
                f"a {kind} delta for block {index}, a {block.kind} block, which it cannot add to: dropped",
                data,
            )

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
        call = block.call
        if call is not None:
            given = block.data.get("input")
            if given is not None and given != {} and not call.parts:
                # Input the start carried (not the documented form), with no delta after it.
                self.close_call(call, dumps_compact(given))
            else:
                self.close_call(call)
                if given is not None and given != {} and call.value != given:
                    self.doubt(
                        f"tool call {call.index} ({call.name}): its contentBlockStart input and its"
                        " deltas disagree; the deltas are taken",
                        given,
                    )
            block.data["input"] = call.value if call.value is not None else {}
        elif block.twin is not None:
            given = block.data.get("input")
            self.twin(block.twin, "".join(block.texts) or given or "")

    def finish(self) -> None:
        for block in self.order:
            if block.call is not None and not block.done:
                # No contentBlockStop: the call's input may be missing or cut short.
                self.cut_call(block.call)
            else:
                self._stop(block)
        if self.complete and self.provider_error is None:
            if self.top.get("stopReason") is None:
                self.doubt(
                    "the messageStop did not say why the message stopped (stopReason)"
                )
            missing = first_gap(self.blocks)
            if missing is not None:
                self.doubt(f"content block {missing} never came")
            self._check_metadata()
        super().finish()

    def _check_metadata(self) -> None:
        """The metadata event ConverseStream sends after messageStop, with the usage and metrics: without it the
        answer is whole, so a note says what is missing and the status stands."""
        if self.metadata is None:
            self.note(
                "the stream ended after messageStop without its metadata event: the usage (and metrics) it"
                " carries are missing",
                USAGE_MISSING,
            )
        elif not isinstance(self.metadata.get("usage"), dict):
            self.note("the metadata event carried no usage", USAGE_MISSING)

    def body(self) -> dict[str, Any]:
        content = [
            _block_body(block)
            for block in self.order
            if not _is_cut(block) and block.twin is None
        ]
        body: dict[str, Any] = {
            "output": {"message": {"role": self.role, "content": content}}
        }
        body.update(self.top)
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        result = decode_response(body)
        if self.kept_deltas and isinstance(result, Response):
            extras = dict(result.extras)
            extras[WIRE] = {**extras.get(WIRE, {}), "deltas": list(self.kept_deltas)}
            result = replace(result, extras=extras)
        return result


def _identity(start: dict[str, Any]) -> tuple[Any, Any]:
    """What names a block beside its index: its kind and, for a call, its toolUseId."""
    kind = next(iter(start), None)
    inner = start.get(kind) if kind is not None else None
    return kind, inner.get("toolUseId") if isinstance(inner, dict) else None


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
