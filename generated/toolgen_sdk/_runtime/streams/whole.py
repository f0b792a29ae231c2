# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A stream request answered with one whole response body: telling it from a stream, and its events.

Servers that ignore `stream: true` send the whole response instead (an OpenAI `chat.completion`, an Anthropic
`message`, a Bedrock `output`, ...), as `application/json`. The first payload of a stream decides. A whole
response of the wire, by its shape (or, when the transport said the body is JSON, a payload that is no stream
chunk and that the codecs' detection reads as a response of the wire's format), goes through the wire's own
`decode_response`, and `WholeState` sends the events a stream of that message would have sent: MessageStart, the
text and reasoning, each call with its arguments, then Usage, Finish and MessageEnd at the end. Whatever reads
events cannot tell the difference. The message is the one `decode_response` gives; an error body ends `failed`
with the provider's error, and a body the decoder cannot read, or anything after the whole body, is a fault:
such a stream never ends `complete`.

Gemini's chunks and Ollama's last chunk have the shape of the whole response. Gemini's stream state reads a whole
body as a stream of one chunk, giving the message `decode_response` gives, so only Gemini's error body is taken
whole here (a JSON array is Gemini's `alt=json` stream of chunks, read by the state). Ollama's body is taken whole
when its first payload is already `done`, which a stream's first chunk never is but for an empty answer, and that
comes out the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ..wires.bedrock.detect import BEDROCK_EVENTS
from ..wires.canonical import ProviderError, Response, parts_of
from ..wires.codecs import conversion, detect
from ..wires.table import wire as wire_row
from .state import WireState

# The JSON media types a server labels a whole body with (`application/problem+json` and the like included).
_JSON_TYPES = frozenset(("application/json", "text/json"))


def json_media(content_type: str | None) -> bool:
    """Whether a response's content type says its body is one JSON document (not SSE, NDJSON or eventstream)."""
    if not content_type:
        return False
    media = content_type.partition(";")[0].strip().lower()
    return media in _JSON_TYPES or media.endswith("+json")


# ---- a whole response, or a stream chunk, of each wire: (payload, event name) -> bool ----


def _chat_chunk(payload: Mapping[str, Any], event: str | None) -> bool:
    if payload.get("object") == "chat.completion.chunk":
        return True
    choices = payload.get("choices")
    return isinstance(choices, list) and any(
        isinstance(choice, dict) and "delta" in choice for choice in choices
    )


def _chat_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    if _chat_chunk(payload, event):
        return False
    if payload.get("object") in ("chat.completion", "error"):
        return True
    choices = payload.get("choices")
    if isinstance(choices, list):
        return any(
            isinstance(choice, dict) and "message" in choice for choice in choices
        )
    return "error" in payload


def _typed_chunk(payload: Mapping[str, Any], event: str | None) -> bool:
    """Responses and Cohere: every stream event says its `type`; the whole response has none."""
    return "type" in payload


def _responses_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    return "type" not in payload and (
        payload.get("object") == "response" or "output" in payload or "error" in payload
    )


def _cohere_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    return "type" not in payload and (
        "message" in payload or "finish_reason" in payload
    )


def _anthropic_chunk(payload: Mapping[str, Any], event: str | None) -> bool:
    kind = payload.get("type")
    if isinstance(kind, str):
        return kind.startswith(("message_", "content_block_")) or kind == "ping"
    return event is not None and event.startswith(("message_", "content_block_"))


def _anthropic_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    # `error` is the whole error body, and also Anthropic's error event, which the stream ends with all the same.
    return payload.get("type") in ("message", "error")


def _gemini_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    return "error" in payload and "candidates" not in payload


def _gemini_chunk(payload: Mapping[str, Any], event: str | None) -> bool:
    # A chunk is a GenerateContentResponse, as the whole body is: the stream state reads the body as a stream of
    # one chunk, and gives the message decode_response gives.
    return not _gemini_whole(payload, event)


def _interactions_chunk(payload: Mapping[str, Any], event: str | None) -> bool:
    return "event_type" in payload


def _interactions_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    return "event_type" not in payload and (
        payload.get("object") == "interaction"
        or any(key in payload for key in ("outputs", "steps", "status", "error"))
    )


def _bedrock_chunk(payload: Mapping[str, Any], event: str | None) -> bool:
    return event is not None or bool(payload.keys() & BEDROCK_EVENTS)


def _bedrock_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    if _bedrock_chunk(payload, event):
        return False
    return "output" in payload or "message" in payload or "Message" in payload


def _ollama_chunk(payload: Mapping[str, Any], event: str | None) -> bool:
    return payload.get("done") is False


def _ollama_whole(payload: Mapping[str, Any], event: str | None) -> bool:
    return payload.get("done") is True or (
        "error" in payload and "message" not in payload
    )


Predicate = Callable[[Mapping[str, Any], str | None], bool]

# By the wire's sub-package (dialects of one format share it): (is a stream chunk, is a whole response).
SHAPES: Mapping[str, tuple[Predicate, Predicate]] = MappingProxyType(
    {
        "anthropic": (_anthropic_chunk, _anthropic_whole),
        "bedrock": (_bedrock_chunk, _bedrock_whole),
        "cohere": (_typed_chunk, _cohere_whole),
        "gemini": (_gemini_chunk, _gemini_whole),
        "interactions": (_interactions_chunk, _interactions_whole),
        "ollama": (_ollama_chunk, _ollama_whole),
        "openai_chat": (_chat_chunk, _chat_whole),
        "responses": (_typed_chunk, _responses_whole),
    }
)


def is_whole(
    wire: str, payload: Any, event: str | None = None, *, json_body: bool = False
) -> bool:
    """Whether the first payload of a stream of `wire` is a whole response of it rather than a stream chunk.

    json_body: the transport said the body is one JSON document (a JSON content type, and framed as JSON, not as
    SSE, eventstream or an array); then a payload of neither shape is taken whole too when the codecs' detection
    reads it as a response body of the wire's format."""
    if not isinstance(payload, dict):
        return False
    row = wire_row(wire)
    shapes = SHAPES.get(row.package)
    if shapes is None:
        return False
    chunk, whole = shapes
    try:
        if whole(payload, event):
            return True
        if not json_body or chunk(payload, event):
            return False
        found, kind = detect(payload)
    except Exception:  # noqa: BLE001 - a payload of odd types, or one no detector knows, is no whole response
        return False
    return kind == "response" and wire_row(found).package == row.package


def whole_state(payload: Any) -> WireState | None:
    """A WholeState for a first payload no stream chunk shape named a wire for, when it is a whole response body of
    a wire that streams (as the codecs' detection tells); None otherwise."""
    if not isinstance(payload, dict):
        return None
    try:
        wire, kind = detect(payload)
    except Exception:  # noqa: BLE001 - a payload no detector recognizes names no wire
        return None
    if kind != "response" or wire_row(wire).stream is None:
        return None
    return WholeState(wire)


def reading(
    state: WireState, payload: Any, event: str | None, json_body: bool
) -> WireState:
    """The state that reads a stream whose first payload this is: `state`, or a WholeState for a whole response.

    json_body: the content type was JSON and the body is framed as JSON (SSE, eventstream or an array is a stream).
    """
    if payload is None or not is_whole(state.wire, payload, event, json_body=json_body):
        return state
    whole = WholeState(state.wire)
    # What the stream said before its first payload (a fault) stays said.
    whole.errors[:0], whole.out[:0] = state.errors, state.out
    return whole


class WholeState(WireState):
    """The state of a stream that turned out to be one whole response body: decoded whole, replayed as events."""

    end_signal = "the whole response body"
    call_end_signal = "the whole response body"

    def __init__(self, wire: str) -> None:
        super().__init__(wire)
        self._result: Response | None = None
        self._taken = False

    def feed(self, event: str | None, data: Any) -> None:
        if self._taken:
            self.fault(
                f"the body went on after a whole {self.wire} response: {str(data)[:200]}",
                raw=data,
            )
            return
        self._taken = True
        # The body is all there is: its end is the end signal, and the decoder says whether it holds a message.
        self.complete = True
        try:
            result = conversion(self.wire, "decode_response")(data)
        except Exception as error:  # noqa: BLE001 - a body the decoder cannot read is a fault, never a raise
            self.fault(
                f"the whole {self.wire} response body could not be read ({type(error).__name__}: {error})",
                raw=data,
            )
            return
        if isinstance(result, ProviderError):
            raw = result.raw if result.raw is not None else data
            self.fail(
                result.message,
                code=result.code,
                type=result.type,
                status=result.status,
                raw=raw,
            )
            self.provider_error = result
            return
        self._result = result
        self._replay(result)

    def _replay(self, response: Response) -> None:
        """The events of the message: its text and reasoning in order, then each call with its arguments."""
        self.begin(response.id, response.model)
        message = response.message
        for part in parts_of(message.get("content")):
            text = part.get("text") if isinstance(part, dict) else None
            if not isinstance(text, str) or not text:
                continue
            kind = part.get("type")
            if kind == "reasoning":
                self.reasoning(text)
            elif kind == "text":
                self.text(text)
        for entry in message.get("tool_calls") or ():
            function = (
                entry.get("function") if isinstance(entry, dict) else None
            ) or {}
            call = self.open_call(
                entry.get("id") if isinstance(entry, dict) else None,
                function.get("name"),
            )
            arguments = function.get("arguments")
            if arguments:
                self.arguments(call, arguments)
            # The message's own text, as the decoder wrote it: the call's end event says the same.
            self.close_call(call, arguments if isinstance(arguments, str) else "")

    def done_marker(self) -> None:
        """An SSE `[DONE]` after a whole body adds nothing."""

    def plain(self) -> Response | None:
        return self._result

    def body(self) -> dict[str, Any]:
        return {}
