# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What every wire's stream state shares: call bookkeeping, event helpers, the fault path and cut calls."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from ..wires.canonical import ProviderError, Response
from ..wires.helpers import args_text as dumps_json
from .events import (
    INCOMPLETE,
    Event,
    MessageStart,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    new_object,
    parse_json,
    set_delta_arguments,
    set_delta_index,
    set_reasoning,
    set_start_id,
    set_start_model,
    set_text,
)

# The type of the note a stream state gives when usage its wire documents as always sent never came.
USAGE_MISSING = "usage_missing"


class Call:
    """One tool call being streamed: its fragments, and once closed its final arguments."""

    __slots__ = (
        "arguments",
        "closed",
        "cut",
        "emitted",
        "error",
        "extra",
        "id",
        "index",
        "name",
        "parsed",
        "parts",
        "twin",
        "value",
    )

    def __init__(self, index: int, id: str | None, name: str | None) -> None:
        self.index = index
        self.id = id
        self.name = name
        self.parts: list[str] = []
        self.closed = False
        # Closed by the end of the body, not by the wire's own event: its arguments may be missing or truncated.
        self.cut = False
        self.emitted = False
        self.arguments = ""
        self.parsed: Any = None
        self.value: Any = None
        self.error: str | None = None
        # Wire keys of the call's entry worth mirroring in the accumulated body (`type` where the wire sent it).
        self.extra: dict[str, Any] | None = None
        # The call that took this call's id first: this one is its repeat or a clash, never a call of the message.
        self.twin: Call | None = None


class WireState:
    """What every wire's stream state shares: the event helpers, call bookkeeping and the fault path."""

    wire: str = ""
    # True where the whole (non-streamed) response carries call arguments as an object, not JSON text.
    object_arguments: ClassVar[bool] = False
    end_signal: ClassVar[str] = "its final event"
    # The wire's event that closes one call's arguments, named in the error of a call the stream cut.
    call_end_signal: ClassVar[str] = "the event that closes a call"

    def __init__(self, wire: str | None = None) -> None:
        if wire is not None:
            self.wire = wire
        self.out: list[Event] = []
        self.calls: list[Call] = []
        self.started = False
        self.complete = False
        self.errors: list[StreamError] = []
        self.provider_error: ProviderError | None = None
        self.text_parts: list[str] = []
        self.reasoning_parts: list[str] = []
        # Repeated events the wire let us recognize, and dropped.
        self.duplicates = 0
        # The JSON text the payload being fed was parsed from; None when it was handed over decoded.
        self.payload_text: bytes | None = None
        # Each call id to the first call that took it: a start under it again is that call's repeat, or a clash.
        self.ids: dict[str, Call] = {}
        # Cut calls of the answers beside the first (OpenAI's choices, Gemini's candidates): cut_in_other_answer.
        self.cut_elsewhere: list[dict[str, Any]] = []
        # What the stream lacks that changes no status (usage the wire documents, never sent): see `note`.
        self.notes: list[dict[str, Any]] = []

    # -- what each wire implements --------------------------------------------------------------------------------

    def feed(self, event: str | None, data: Any) -> None:
        """Take one decoded payload (and its SSE event name or eventstream event type)."""
        raise NotImplementedError

    def body(self) -> dict[str, Any]:
        """The accumulated body, shaped like the wire's non-streamed response."""
        raise NotImplementedError

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        """The wire's own decoder for a whole response body."""
        return self.fallback()

    def plain(self) -> Response | None:
        """The final message built from the state directly, when it is exactly what decode(body()) gives; None
        (the default) when the body must go through the decoder."""
        return None

    def finish(self) -> None:
        """The body ended: every call the wire did not close is cut."""
        for call in self.calls:
            self.cut_call(call)

    def exception(self, name: str | None, data: bytes, kind: str) -> None:
        """An out-of-band error message of the framing (an eventstream exception)."""
        text = data.decode("utf-8", "replace")
        try:
            payload = parse_json(data)
        except ValueError:
            payload = text
        message = payload.get("message") if isinstance(payload, dict) else None
        self.fail(
            str(message or text or name or kind), code=name, type=kind, raw=payload
        )

    def done_marker(self) -> None:
        """The SSE `[DONE]` sentinel."""
        self.complete = True

    # -- helpers for the wires ------------------------------------------------------------------------------------

    def begin(self, id: str | None = None, model: str | None = None) -> None:
        if not self.started:
            self.started = True
            event = new_object(MessageStart)
            set_start_id(event, id)
            set_start_model(event, model)
            self.out.append(event)

    def text(self, text: str) -> None:
        if type(text) is not str:
            self.not_text("text", text)
            return
        if not self.started:
            self.begin()
        self.text_parts.append(text)
        event = new_object(TextDelta)
        set_text(event, text)
        self.out.append(event)

    def reasoning(self, text: str) -> None:
        if type(text) is not str:
            self.not_text("reasoning", text)
            return
        if not self.started:
            self.begin()
        self.reasoning_parts.append(text)
        event = new_object(ReasoningDelta)
        set_reasoning(event, text)
        self.out.append(event)

    def open_call(self, id: str | None, name: str | None) -> Call:
        if not self.started:
            self.begin()
        call = Call(len(self.calls), id or None, name or None)
        self.calls.append(call)
        if call.id is not None and call.id not in self.ids:
            self.ids[call.id] = call
        self.out.append(ToolCallStart(call.index, call.id, call.name))
        return call

    def open_twin(self, first: Call, id: str | None, name: str | None) -> Call:
        """A call begun again under an id `first` took: no event, no place in the message; weighed when it closes."""
        call = Call(first.index, id, name)
        call.twin = first
        return call

    def arguments(self, call: Call, fragment: str) -> None:
        if type(fragment) is not str:
            self.not_text("tool call arguments", fragment)
            return
        call.parts.append(fragment)
        event = new_object(ToolCallDelta)
        set_delta_index(event, call.index)
        set_delta_arguments(event, fragment)
        self.out.append(event)

    def close_call(self, call: Call, text: str | None = None) -> None:
        """Settle a call's arguments; its ToolCallEnd goes out now when the call has an id, else at the end."""
        if call.closed:
            return
        call.closed = True
        if call.twin is not None:
            self.twin(call.twin, "".join(call.parts) if text is None else text)
            return
        self.settle(call, "".join(call.parts) if text is None else text)
        if call.id is not None:
            call.emitted = True
            self.out.append(
                ToolCallEnd(
                    call.index,
                    call.id,
                    call.name,
                    call.arguments,
                    call.parsed,
                    call.error,
                )
            )

    def cut_call(self, call: Call) -> None:
        """The body ended before the wire closed this call: no arguments, an error, and no place in the message."""
        if call.closed:
            return
        if call.twin is not None:
            self.close_call(call)
            return
        call.closed = call.cut = True
        call.arguments, call.parsed, call.value = "".join(call.parts), None, None
        call.error = (
            f"cut: the stream ended before {self.call_end_signal} closed the arguments"
        )
        self.fault(
            f"tool call {call.index} ({call.name}) was cut: {call.error[5:]}",
            raw=call.arguments,
            type="cut",
        )
        if call.id is not None:
            call.emitted = True
            self.out.append(
                ToolCallEnd(call.index, call.id, call.name, None, None, call.error)
            )

    def holder(self, id: Any) -> Call | None:
        """The call, not cut, that already took this id; None for a new id (or none)."""
        call = self.ids.get(id) if type(id) is str else None
        return None if call is None or call.cut else call

    def twin(self, first: Call, text: Any) -> None:
        """A call sent again under an id `first` took, its arguments over (text, or the object the wire sent): a
        repeat, dropped, when they are first's; else dropped in doubt. One id never names two calls."""
        if type(text) is str:
            try:
                value = parse_json(text) if text.strip() else {}
            except ValueError:
                value = text
        else:
            value = text
        if first.closed and not first.cut and value == first.value:
            self.repeat()
        else:
            self.doubt(
                f"tool call id {first.id} came again with other arguments: the second call is dropped",
                text,
            )

    def repeat(self) -> None:
        """An event the wire marks as one already taken: dropped, and counted."""
        self.duplicates += 1

    def presumed_repeat(self, what: str, raw: Any = None) -> None:
        """An event dropped as a repeat without the wire's proof (it may as well be one that came out of order):
        counted, and the stream is incomplete."""
        self.duplicates += 1
        self.doubt(
            f"{what}: dropped as a repeat, though it may be an event out of order", raw
        )

    def doubt(self, message: str, raw: Any = None) -> None:
        """Something dropped, taken out of order or guessed that the wire's evidence cannot settle: the stream
        ends incomplete, and says why."""
        self.fault(message, raw=raw, type=INCOMPLETE)

    def note(self, message: str, type: str) -> None:
        """Something the wire documents that the stream did not send, which leaves the answer whole (its usage):
        said under extras["stream"]["notes"], the status unchanged, so a run does not ask the model again."""
        self.notes.append({"type": type, "message": message})

    def doubted(self) -> bool:
        """Whether the stream has dropped, reordered or guessed anything so far (it will end incomplete)."""
        return any(error.type == INCOMPLETE for error in self.errors)

    def settle(self, call: Call, text: str) -> None:
        if not text.strip():
            # A call with no arguments at all: the whole response would say {} (or an empty object).
            call.arguments, call.parsed, call.value = "{}", {}, {}
            return
        try:
            value = parse_json(text)
        except ValueError as error:
            call.arguments, call.parsed, call.value = text, None, None
            call.error = f"arguments are not valid JSON: {error}"
            self.fault(f"tool call {call.index} ({call.name}): {call.error}", raw=text)
            return
        if self.object_arguments:
            try:
                arguments = dumps_json(value)
            except ValueError:
                # A number past a float's range (1e400) reads as infinity, and JSON text has no word for it:
                # the call cannot run, and the rest of the message is kept.
                call.arguments, call.parsed, call.value = text, None, None
                call.error = "arguments hold a number JSON cannot carry (NaN, or beyond a float's range)"
                self.fault(
                    f"tool call {call.index} ({call.name}): {call.error}", raw=text
                )
                return
        else:
            arguments = text
        call.value = value
        call.arguments = arguments
        if isinstance(value, dict):
            call.parsed = value
        else:
            # Valid JSON, yet nothing a tool's arguments can be; the message keeps the text as sent.
            call.error = (
                f"arguments are not a JSON object (JSON {type(value).__name__})"
            )

    def not_text(self, what: str, value: Any) -> None:
        """A fragment a server sent as something other than a string: a fault, and nothing kept of it."""
        self.fault(
            f"unexpected {self.wire} stream payload: {what} must be a string,"
            f" not {_json_kind(value)}",
            raw=value,
        )

    def fault(self, message: str, raw: Any = None, type: str | None = None) -> None:
        """A fault of the stream itself (not an error the provider sent); type "cut" when the body ended early."""
        error = StreamError(message, type=type, raw=raw)
        self.errors.append(error)
        self.out.append(error)

    def fail(
        self,
        message: str,
        *,
        code: str | None = None,
        type: str | None = None,
        status: int | None = None,
        raw: Any = None,
    ) -> None:
        """An error the provider sent mid-stream; the very same error payload again is a repeat."""
        if (
            self.provider_error is not None
            and raw is not None
            and self.provider_error.raw == raw
        ):
            self.repeat()
            return
        self.provider_error = ProviderError(
            self.wire, message, type=type, code=code, status=status, raw=raw
        )
        error = StreamError(message, code, type, status, raw, provider=True)
        self.errors.append(error)
        self.out.append(error)

    def salvage(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The body without the failure markers that make the decoder return a ProviderError, if the wire has any."""
        return None

    def more_cut_calls(self) -> list[dict[str, Any]]:
        """Cut calls of the answers a stream carries beside the first (OpenAI's choices, Gemini's candidates), which
        make no events: `cut_calls` entries with a key naming their answer (`choice`, `candidate`)."""
        return self.cut_elsewhere

    def cut_in_other_answer(self, answer: str, position: int, call: Call) -> None:
        """A call of an answer beside the first (`answer` is "choice" or "candidate", at `position`) that the body
        ended inside: it makes no events, so a cut error says so and more_cut_calls lists it."""
        call.closed = call.cut = True
        call.arguments = "".join(call.parts)
        self.fault(
            f"{answer} {position}'s tool call {call.index} ({call.name}) was cut: the stream ended before"
            f" {self.call_end_signal} closed the arguments",
            raw=call.arguments,
            type="cut",
        )
        self.cut_elsewhere.append(
            {
                answer: position,
                "index": call.index,
                "id": call.id,
                "name": call.name,
                "arguments_received": call.arguments,
            }
        )

    def has_content(self) -> bool:
        return bool(self.text_parts or self.reasoning_parts or self.calls)

    def closed_calls(self) -> list[Call]:
        """The calls the final message holds: every one but the cut ones, in the order they began."""
        return [call for call in self.calls if not call.cut]

    def fallback(self) -> Response:
        """The message rebuilt from the events alone, for when the wire's decoder cannot take the body."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self.text_parts) or None,
        }
        if self.reasoning_parts:
            reasoning = {"type": "reasoning", "text": "".join(self.reasoning_parts)}
            text = message["content"]
            message["content"] = [reasoning] + (
                [{"type": "text", "text": text}] if text else []
            )
        if self.closed_calls():
            message["tool_calls"] = [
                {
                    "id": call.id or "",
                    "type": "function",
                    "function": {"name": call.name or "", "arguments": call.arguments},
                }
                for call in self.closed_calls()
            ]
        return Response(message=message)


class _NoState(WireState):
    """Stands in when a body ended before any payload said which wire it is."""

    def feed(self, event: str | None, data: Any) -> None:
        """Payloads of an unrecognized wire are dropped; the first one already raised a StreamError."""

    def body(self) -> dict[str, Any]:
        return {}


def carries(delta: Any, ignored: str = "type") -> bool:
    """Whether a delta carries anything: a non-empty value (an object: one that carries) under a key but `ignored`,
    the key that only names the delta's kind. What carries nothing is harmless to take twice or to drop."""
    if not isinstance(delta, dict):
        return False
    return any(
        carries(value, ignored) if isinstance(value, dict) else bool(value)
        for key, value in delta.items()
        if key != ignored
    )


def first_gap(indexes: Iterable[Any]) -> int | None:
    """The lowest index missing below the highest of a stream's block indexes; None when they run 0 to n-1.

    Linear in the indexes seen whatever they are: an index of a billion costs nothing more."""
    seen = {index for index in indexes if type(index) is int and index >= 0}
    for index in range(len(seen)):
        if index not in seen:
            return index
    return None


def _json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type, for a fault's sentence."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
