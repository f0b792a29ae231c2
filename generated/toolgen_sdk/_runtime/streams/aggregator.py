# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Canonical streaming events, and the front door that turns any provider's stream into them and one final message.

Each wire has a stream state (`_stream_<wire>.py`) that reads that provider's chunks, emits canonical events as
they come, and accumulates the body the provider would have sent without streaming. At the end that body goes
through the wire's own `decode_response`, so a stream and the same response fetched whole give the same
canonical message. Nothing raises while streaming: faults (a cut-off stream, a corrupt frame, arguments that are
not JSON, a provider error event) become `StreamError` events, and the final message keeps everything received.

Tool call events are numbered by the call's position in the final message's `tool_calls`, whatever slot,
content-block or output index the wire used. `ToolCallDelta.arguments` fragments are the text as the wire sent
it; `ToolCallEnd.arguments` is the call's final canonical text, equal to the final message's (for wires that send
an object, the compact JSON of that object). `ToolCallStart.id` is None when the wire gives calls no id; the
`ToolCallEnd` of such a call comes at the end of the stream and carries the id the final message has.
"""

from __future__ import annotations

import json
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ..wires.base import ProviderError, Response
from .framing import AutoDecoder, Decoder, Frame, FramingError, SSEDecoder, make_decoder

try:
    from pydantic_core import from_json as _from_json
except ImportError:  # pragma: no cover - pydantic_core ships with pydantic; stdlib json is the slow fallback
    _from_json = json.loads  # type: ignore[assignment]

# JSON text (bytes or str) to Python values; about three times faster than json.loads on stream chunks.
parse_json: Callable[..., Any] = _from_json


@dataclass(frozen=True, slots=True)
class MessageStart:
    """The assistant message began; its id and model, when the wire has sent them by then."""

    id: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """More reasoning (thinking) text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call began; index is its position in the final message's tool_calls."""

    index: int
    id: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call's arguments, as the wire sent it."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A tool call is complete: its final arguments text, parsed, or None and the reason they do not parse."""

    index: int
    id: str | None
    name: str | None
    arguments: str
    parsed: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of the whole response, in canonical keys (input_tokens, output_tokens, ...)."""

    usage: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Finish:
    """Why the model stopped: stop | tool_calls | length | content_filter | error, and the provider's own value."""

    reason: str
    raw: Any = None


@dataclass(frozen=True, slots=True)
class StreamError:
    """Something went wrong mid-stream; provider is True when the provider itself sent the error."""

    message: str
    code: str | None = None
    type: str | None = None
    status: int | None = None
    raw: Any = None
    provider: bool = False


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """The last event: the final message (or the provider's error) and whether the stream ended cleanly."""

    response: Response | ProviderError
    complete: bool


Event = (
    MessageStart
    | TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | Usage
    | Finish
    | StreamError
    | MessageEnd
)


# A frozen dataclass's __init__ sets each field through object.__setattr__; the per-chunk events are built by
# setting their slots directly instead, about twice as fast, giving the very same objects.
new_object = object.__new__
set_text = vars(TextDelta)["text"].__set__
set_reasoning = vars(ReasoningDelta)["text"].__set__
set_delta_index = vars(ToolCallDelta)["index"].__set__
set_delta_arguments = vars(ToolCallDelta)["arguments"].__set__


def dumps_compact(value: Any) -> str:
    """JSON text of a value the way the wire contract serializes object arguments."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Call:
    """One tool call being streamed: its fragments, and once closed its final arguments."""

    __slots__ = (
        "arguments",
        "closed",
        "emitted",
        "error",
        "extra",
        "id",
        "index",
        "name",
        "parsed",
        "parts",
        "value",
    )

    def __init__(self, index: int, id: str | None, name: str | None) -> None:
        self.index = index
        self.id = id
        self.name = name
        self.parts: list[str] = []
        self.closed = False
        self.emitted = False
        self.arguments = ""
        self.parsed: Any = None
        self.value: Any = None
        self.error: str | None = None
        # Wire keys of the call's entry worth mirroring in the accumulated body (`type` where the wire sent it).
        self.extra: dict[str, Any] | None = None


class WireState:
    """What every wire's stream state shares: the event helpers, call bookkeeping and the fault path."""

    wire: str = ""
    # True where the whole (non-streamed) response carries call arguments as an object, not JSON text.
    object_arguments: ClassVar[bool] = False
    end_signal: ClassVar[str] = "its final event"

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

    def finish(self) -> None:
        """The body ended: close whatever the wire left open."""
        for call in self.calls:
            self.close_call(call)

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
            self.out.append(MessageStart(id, model))

    def text(self, text: str) -> None:
        if not self.started:
            self.begin()
        self.text_parts.append(text)
        event = new_object(TextDelta)
        set_text(event, text)
        self.out.append(event)

    def reasoning(self, text: str) -> None:
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
        self.out.append(ToolCallStart(call.index, call.id, call.name))
        return call

    def arguments(self, call: Call, fragment: str) -> None:
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
        call.parsed = call.value = value
        call.arguments = dumps_compact(value) if self.object_arguments else text

    def fault(self, message: str, raw: Any = None) -> None:
        """A fault of the stream itself (not an error the provider sent)."""
        error = StreamError(message, raw=raw)
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
        """An error the provider sent mid-stream."""
        self.provider_error = ProviderError(
            self.wire, message, type=type, code=code, status=status, raw=raw
        )
        error = StreamError(message, code, type, status, raw, provider=True)
        self.errors.append(error)
        self.out.append(error)

    def salvage(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The body without the failure markers that make the decoder return a ProviderError, if the wire has any."""
        return None

    def has_content(self) -> bool:
        return bool(self.text_parts or self.reasoning_parts or self.calls)

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
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": call.id or "",
                    "type": "function",
                    "function": {"name": call.name or "", "arguments": call.arguments},
                }
                for call in self.calls
            ]
        return Response(message=message)


class _NoState(WireState):
    """Stands in when a body ended before any payload said which wire it is."""

    def feed(self, event: str | None, data: Any) -> None:
        """Payloads of an unrecognized wire are dropped; the first one already raised a StreamError."""

    def body(self) -> dict[str, Any]:
        return {}


def detect_wire(
    payload: Any, event: str | None = None, framing: str | None = None
) -> str | None:
    """The wire a first stream payload belongs to, from its shape; None when it says nothing recognizable."""
    if framing == "eventstream":
        return "bedrock-converse"
    if not isinstance(payload, dict):
        return None
    kind = payload.get("type")
    if isinstance(kind, str):
        if kind.startswith("response.") or (
            "sequence_number" in payload and kind == "error"
        ):
            return "openai-responses"
        if kind.startswith(("message_", "content_block_")) or kind == "ping":
            return "anthropic"
        if kind.startswith(("message-", "content-", "tool-", "citation-")):
            return "cohere"
    if "event_type" in payload:
        return "google-interactions"
    if "choices" in payload or payload.get("object") == "chat.completion.chunk":
        return "openai-chat"
    if "candidates" in payload or "usageMetadata" in payload:
        return "gemini"
    if "message" in payload and "done" in payload:
        return "ollama"
    if set(payload) & {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
    }:
        return "bedrock-converse"
    if event is not None and event.startswith(("message_", "content_block_")):
        return "anthropic"
    return None


def new_state(wire: str) -> WireState:
    """A fresh stream state for a wire in `_wire.WIRES`."""
    if wire in ("openai-chat", "mistral"):
        from .openai_chat import OpenAIChatState

        return OpenAIChatState(wire)
    if wire == "openai-responses":
        from .responses import ResponsesState

        return ResponsesState()
    if wire == "anthropic":
        from .anthropic import AnthropicState

        return AnthropicState()
    if wire == "gemini":
        from .gemini import GeminiState

        return GeminiState()
    if wire == "google-interactions":
        from .gemini import InteractionsState

        return InteractionsState()
    if wire == "bedrock-converse":
        from .bedrock import BedrockState

        return BedrockState()
    if wire == "ollama":
        from .ollama import OllamaState

        return OllamaState()
    if wire == "cohere":
        from .cohere import CohereState

        return CohereState()
    raise ValueError(f"streaming is not supported for wire {wire!r}")


# bytes, bytearray, memoryview or str of the body; a Frame; a decoded payload dict; an SDK object with model_dump.
Chunk = Any


class Aggregator:
    """Feed it a stream chunk by chunk; it returns canonical events as they complete, and the final message.

    A chunk is bytes of the body as they arrived (any split), text, a `Frame`, or an already decoded payload (a
    dict, or an SDK object with `model_dump`). `wire` names the provider wire; without it the first payload
    decides. `framing` (sse, jsonl, json-array, eventstream) is sniffed from the first bytes when not given.
    """

    def __init__(self, wire: str | None = None, *, framing: str | None = None) -> None:
        self._sniffer = AutoDecoder() if framing is None else None
        self._decoder: Decoder = (
            self._sniffer if self._sniffer is not None else make_decoder(framing or "")
        )
        self._framing = framing
        self._simple: Callable[[bytes], bytes | None] | None = None
        if framing is not None:
            self._use(self._decoder, framing)
        self._state: WireState | None = new_state(wire) if wire is not None else None
        # Faults before any payload named the wire: emitted with the next events, kept for the final message.
        self._early: list[Event] = []
        self._early_errors: list[StreamError] = []
        self._result: Response | ProviderError | None = None

    @property
    def wire(self) -> str | None:
        return self._state.wire if self._state is not None else None

    @property
    def errors(self) -> list[StreamError]:
        return (
            list(self._state.errors)
            if self._state is not None
            else list(self._early_errors)
        )

    @property
    def complete(self) -> bool:
        """The wire's own end signal arrived and nothing went wrong."""
        return (
            self._state is not None and self._state.complete and not self._state.errors
        )

    def feed(self, chunk: Chunk) -> list[Event]:
        """Events completed by one more chunk of the stream."""
        if type(chunk) is bytes:
            self._bytes(chunk)
        elif isinstance(chunk, str):
            self._bytes(chunk.encode("utf-8"))
        elif isinstance(chunk, (bytes, bytearray, memoryview)):
            self._bytes(bytes(chunk))
        elif isinstance(chunk, Frame):
            self._frames([chunk])
        elif isinstance(chunk, Mapping):
            self._payload(None, dict(chunk))
        elif hasattr(chunk, "model_dump"):
            self._payload(
                None, chunk.model_dump(mode="json", exclude_unset=True, by_alias=True)
            )
        else:
            raise TypeError(f"cannot stream a chunk of type {type(chunk).__name__}")
        state = self._state
        if self._early or state is None:
            return self._drain()
        out = state.out
        if not out:
            return []
        state.out = []
        return out

    def stream(self, chunks: Iterable[Chunk]) -> Iterator[Event]:
        """The events of every chunk in turn, then of the end: `feed` in a loop and `close`, inlined for speed.

        An exception raised by the chunks' source (a dropped connection) ends the stream with a StreamError and
        the partial message instead of propagating.
        """
        feed = self.feed
        parse = parse_json
        state, simple = self._state, self._simple
        try:
            for chunk in chunks:
                if simple is not None and state is not None and type(chunk) is bytes:
                    data = simple(chunk)
                    if data is not None and data != b"[DONE]":
                        # _deliver(state, None, data), inlined: this runs once per chunk of the usual stream.
                        try:
                            payload = parse(data)
                        except ValueError:
                            _deliver(state, None, data)
                        else:
                            try:
                                state.feed(None, payload)
                            except Exception as error:  # noqa: BLE001 - one odd payload must not cost the text already streamed
                                _unexpected(state, error, payload)
                        out = state.out
                        if out:
                            state.out = []
                            if len(out) == 1:
                                yield out[0]
                            else:
                                yield from out
                        continue
                events = feed(chunk)
                # feed() may have named the wire or settled the framing; it also drained any early faults.
                state, simple = self._state, self._simple
                if events:
                    yield from events
        except Exception as error:  # noqa: BLE001 - a dropped connection ends the stream with a StreamError
            self._fault(
                f"stream interrupted: {type(error).__name__}: {error}", raw=error
            )
        yield from self.close()

    def close(self) -> list[Event]:
        """The body ended: the last events, ending with MessageEnd. Calling it again returns nothing."""
        if self._result is not None:
            return []
        try:
            frames = self._decoder.close()
        except FramingError as error:
            frames = error.frames
            self._fault(f"stream framing failed: {error}")
        self._frames(frames)
        state = (
            self._state
            if self._state is not None
            else self._adopt(_NoState(self.wire or "unknown"))
        )
        try:
            state.finish()
        except Exception as error:  # noqa: BLE001 - a half-built block must not cost the message built so far
            state.fault(
                f"could not close the {state.wire} stream ({type(error).__name__}: {error})"
            )
        if not state.complete and state.provider_error is None:
            what = "any payload" if isinstance(state, _NoState) else state.end_signal
            state.fault(f"stream ended before {what}")
        self._result = _finalize(state)
        return self._drain()

    def result(self) -> Response | ProviderError:
        """The final message (closing the stream first if needed); a ProviderError when that is all there was."""
        if self._result is None:
            self.close()
        assert self._result is not None
        return self._result

    def _bytes(self, data: bytes) -> None:
        try:
            frames = self._decoder.feed(data)
        except FramingError as error:
            self._frames(error.frames)
            self._fault(f"stream framing failed: {error}")
            return
        if self._sniffer is not None and self._sniffer.decoder is not None:
            # Framing settled: talk to its decoder directly from now on.
            self._use(self._sniffer.decoder, self._sniffer.framing)
            self._sniffer = None
        if frames:
            self._frames(frames)

    def _use(self, decoder: Decoder, framing: str | None) -> None:
        self._decoder = decoder
        self._framing = framing
        self._simple = decoder.simple if isinstance(decoder, SSEDecoder) else None

    def _frames(self, frames: list[Frame]) -> None:
        """The hot loop: one JSON parse and one state call per payload; faults never escape."""
        state = self._state
        for frame in frames:
            event, data, kind = frame
            if state is None or kind != "event" or data == b"[DONE]":
                self._frame(frame)
                state = self._state
                continue
            _deliver(state, event, data)

    def _frame(self, frame: Frame) -> None:
        event, data, kind = frame
        if kind != "event":
            self._ensure_state(None, event).exception(event, data, kind)
            return
        if data == b"[DONE]":
            if self._state is not None:
                self._state.done_marker()
            return
        if not data.strip():
            return
        try:
            payload = parse_json(data)
        except ValueError as error:
            self._fault(
                f"stream payload is not JSON ({error}): {data[:200]!r}", raw=data
            )
            return
        self._payload(event, payload)

    def _payload(self, event: str | None, payload: Any) -> None:
        state = (
            self._state
            if self._state is not None
            else self._ensure_state(payload, event)
        )
        try:
            state.feed(event, payload)
        except Exception as error:  # noqa: BLE001 - one odd payload must not cost the text already streamed
            _unexpected(state, error, payload)

    def _ensure_state(self, payload: Any, event: str | None) -> WireState:
        if self._state is not None:
            return self._state
        wire = detect_wire(
            payload,
            event,
            self._framing or (self._sniffer.framing if self._sniffer else None),
        )
        if wire is not None:
            return self._adopt(new_state(wire))
        state = self._adopt(_NoState("unknown"))
        state.fault(
            f"cannot tell which provider wire this stream is: {str(payload)[:200]}"
        )
        return state

    def _adopt(self, state: WireState) -> WireState:
        state.errors[:0] = self._early_errors
        self._state = state
        return state

    def _fault(self, message: str, raw: Any = None) -> None:
        if self._state is not None:
            self._state.fault(message, raw)
        else:
            error = StreamError(message, raw=raw)
            self._early.append(error)
            self._early_errors.append(error)

    def _drain(self) -> list[Event]:
        state = self._state
        out, self._early = self._early, []
        if state is not None and state.out:
            out += state.out
            state.out = []
        return out


def _deliver(state: WireState, event: str | None, data: bytes) -> None:
    """One framed payload to the wire's state; a payload that is not JSON, or that the state chokes on, is a fault."""
    if not data.strip():
        return  # an empty `data:` event (a keep-alive) carries nothing
    try:
        payload = parse_json(data)
    except ValueError as error:
        state.fault(f"stream payload is not JSON ({error}): {data[:200]!r}", raw=data)
        return
    try:
        state.feed(event, payload)
    except Exception as error:  # noqa: BLE001 - one odd payload must not cost the text already streamed
        _unexpected(state, error, payload)


def _unexpected(state: WireState, error: Exception, payload: Any) -> None:
    state.fault(
        f"unexpected {state.wire} stream payload ({type(error).__name__}: {error})",
        raw=payload,
    )


def _finalize(state: WireState) -> Response | ProviderError:
    result = _decode(state)
    if isinstance(result, Response):
        result = _patch_arguments(result, state.calls)
        result = _mark_incomplete(result, state, state.errors)
    tool_calls = (
        result.message.get("tool_calls") if isinstance(result, Response) else None
    )
    for call in state.calls:
        if not call.emitted:
            call.emitted = True
            final = (
                tool_calls[call.index]
                if isinstance(tool_calls, list) and call.index < len(tool_calls)
                else None
            )
            call_id = final.get("id") if isinstance(final, dict) else call.id
            state.out.append(
                ToolCallEnd(
                    call.index,
                    call_id,
                    call.name,
                    call.arguments,
                    call.parsed,
                    call.error,
                )
            )
    if isinstance(result, Response):
        if result.usage:
            state.out.append(Usage(result.usage))
        finish = result.finish or {"reason": "error", "raw": None}
        state.out.append(Finish(finish.get("reason", "error"), finish.get("raw")))
    else:
        state.out.append(Finish("error", result.code))
    complete = state.complete and not state.errors
    state.out.append(MessageEnd(result, complete))
    return result


def _decode(state: WireState) -> Response | ProviderError:
    if state.provider_error is not None and not state.has_content():
        return state.provider_error
    try:
        body = state.body()
        result = state.decode(body)
        if isinstance(result, ProviderError) and state.has_content():
            # The body says the response failed, yet content was streamed first: decode that content.
            state.provider_error = state.provider_error or result
            salvaged = state.salvage(body)
            result = (
                state.decode(salvaged) if salvaged is not None else state.fallback()
            )
    except Exception as error:  # noqa: BLE001 - a decoder choking on a partial body must not lose it
        state.fault(
            f"could not decode the {state.wire} message built from the stream ({type(error).__name__}: {error})"
        )
        return state.fallback()
    if isinstance(result, ProviderError):
        state.provider_error = state.provider_error or result
        return state.fallback() if state.has_content() else result
    return result


def _patch_arguments(result: Response, calls: list[Call]) -> Response:
    """Put back the raw text of arguments that did not parse: the decoder only saw a placeholder for them."""
    broken = [call for call in calls if call.error is not None]
    tool_calls = result.message.get("tool_calls")
    if not broken or not isinstance(tool_calls, list):
        return result
    patched = list(tool_calls)
    for call in broken:
        if call.index < len(patched) and isinstance(patched[call.index], dict):
            entry = dict(patched[call.index])
            entry["function"] = {
                **entry.get("function", {}),
                "arguments": call.arguments,
            }
            patched[call.index] = entry
    return replace(result, message={**result.message, "tool_calls": patched})


def _mark_incomplete(
    result: Response, state: WireState, errors: list[StreamError]
) -> Response:
    if not errors:
        return result
    finish = result.finish
    if state.provider_error is not None:
        error = state.provider_error
        finish = {"reason": "error", "raw": error.code or error.type}
    elif finish is None:
        finish = {"reason": "error", "raw": None}
    notes = [
        {"message": e.message, "code": e.code, "type": e.type, "provider": e.provider}
        for e in errors
    ]
    extras = {**result.extras, "stream": {"complete": False, "errors": notes}}
    return replace(result, finish=finish, extras=extras)


def stream_events(
    source: Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
) -> Iterator[Event]:
    """Canonical events of a stream, ending with MessageEnd, which carries the final message.

    source is the body as bytes or text, or an iterable of chunks (httpx's `iter_bytes()`, SSE lines, decoded
    payload dicts, SDK chunk objects). An exception raised by the source itself (a dropped connection) ends the
    stream with a StreamError and the partial message instead of propagating.
    """
    chunks: Iterable[Chunk] = (
        [source] if isinstance(source, (bytes, bytearray, memoryview, str)) else source
    )
    return Aggregator(wire, framing=framing).stream(chunks)


async def astream_events(
    source: AsyncIterable[Chunk] | Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
) -> AsyncIterator[Event]:
    """The async twin of stream_events: source may be an async iterable (httpx's `aiter_bytes()`)."""
    if not isinstance(source, AsyncIterable):
        for event in stream_events(source, wire, framing=framing):
            yield event
        return
    aggregator = Aggregator(wire, framing=framing)
    try:
        async for chunk in source:
            for event in aggregator.feed(chunk):
                yield event
    except Exception as error:  # noqa: BLE001 - a dropped connection ends the stream with a StreamError
        aggregator._fault(
            f"stream interrupted: {type(error).__name__}: {error}", raw=error
        )
        for event in aggregator._drain():
            yield event
    for event in aggregator.close():
        yield event


def aggregate(
    source: Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
) -> Response | ProviderError:
    """The final canonical message of a stream (a ProviderError when the provider sent only an error)."""
    result: Response | ProviderError | None = None
    for event in stream_events(source, wire, framing=framing):
        if isinstance(event, MessageEnd):
            result = event.response
    assert result is not None
    return result


async def aaggregate(
    source: AsyncIterable[Chunk] | Iterable[Chunk] | bytes | str,
    wire: str | None = None,
    *,
    framing: str | None = None,
) -> Response | ProviderError:
    """The async twin of aggregate."""
    result: Response | ProviderError | None = None
    async for event in astream_events(source, wire, framing=framing):
        if isinstance(event, MessageEnd):
            result = event.response
    assert result is not None
    return result
