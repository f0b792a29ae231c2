# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What every layer reads and writes: canonical requests, responses and messages, and the typed provider error.

Canonical messages here are plain JSON-ready dicts in the shape of the canonical schemas (snake_case keys:
`role`, `content`, `tool_calls`, `tool_call_id`, ...); the generated models validate them. Conventions every
adapter and stream decoder follows, so that a response decoded whole and the same response aggregated from its
stream give equal messages:

- An assistant message's content is a string when it is only text, a list of parts when it holds reasoning
  (`{"type": "reasoning", "text", "signature", "redacted", "encrypted"}`) or other typed parts, and None when
  the model only called tools.
- Tool call arguments are the JSON text the model produced; providers that send an object get it serialized
  with `json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)`: an object holding NaN
  or infinity has no JSON text, and its body is a ValueError.
- Fields the canonical model has no place for go into `message["extras"][<wire>]`, read back only when encoding
  to that same wire.
- A call without an id on the wire gets `stable_call_id(...)`, listed in `extras[<wire>]["generated_ids"]` so
  that encoding back to that wire leaves it out again.
- `Request.extras["settings"]` is a wire-neutral view of the generation settings a request body states:
  `max_tokens`, `temperature`, `top_p`, `stop` (a list), `tool_choice` (`"auto"`, `"none"`, `"required"` or
  `{"name": ...}`), `parallel_tool_calls`, `response_format` (see structured.py), `seed` and `user` (the
  end-user id). Encoding to another wire writes them in that wire's spelling; encoding to the same wire
  writes only the ones changed since decoding (its own fields are kept as they were). What a wire cannot
  write is named by losses.py, never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter", "error")


# The canonical values' shapes for type checkers (schemas/canonical/*.yaml): at run time they are plain dicts.


class Function(TypedDict):
    """The function a tool call names, and its arguments as the JSON text the model produced."""

    name: str
    arguments: str


class ToolCall(TypedDict):
    """One tool call of an assistant message; `id` pairs it with the tool message that answers it."""

    id: str
    type: Literal["function"]
    function: Function


class _Typed(TypedDict):
    type: str


class Part(_Typed, total=False):
    """One content part: its `type` (text, image, audio, file or reasoning) and the fields of that type."""

    text: str
    url: str
    data: str
    media_type: str
    detail: str
    format: str
    transcript: str
    file_id: str
    filename: str
    signature: str
    redacted: bool
    encrypted: str


class _Role(TypedDict):
    role: str


class Message(_Role, total=False):
    """One canonical message: its role, its content (a string, parts or None), and the calls or the call answered."""

    content: str | list[Part] | None
    name: str
    tool_calls: list[ToolCall]
    refusal: str
    tool_call_id: str
    is_error: bool
    # What the message kept of its wire's own fields, by wire name.
    extras: dict[str, Any]


@dataclass(frozen=True)
class Request:
    """A request body in canonical terms: the conversation, the tools offered, and every other field kept as is."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    """One model response in canonical terms: the assistant message, why it stopped, and the tokens it used."""

    message: dict[str, Any]
    finish: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    id: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)


class ProviderError(Exception):
    """An error body a provider sent instead of a response, as data: decoding returns it, it is never raised deep inside."""

    def __init__(
        self,
        wire: str,
        message: str,
        *,
        type: str | None = None,
        code: str | None = None,
        status: int | None = None,
        raw: Any = None,
    ) -> None:
        super().__init__(message)
        self.wire = wire
        self.message = message
        self.type = type
        self.code = code
        self.status = status
        self.raw = raw

    def to_json(self) -> dict[str, Any]:
        return {
            "wire": self.wire,
            "message": self.message,
            "type": self.type,
            "code": self.code,
            "status": self.status,
        }

    def __repr__(self) -> str:
        return f"ProviderError(wire={self.wire!r}, message={self.message!r}, type={self.type!r}, code={self.code!r})"


def aws_error_name(value: str) -> str:
    """An AWS error type as the wire spells it (`x-amzn-ErrorType`, a body's `__type`): the name alone, without
    the `namespace#` before it or the `:url` after it (`ValidationException:http://...` is ValidationException)."""
    return value.partition(":")[0].rpartition("#")[2].strip()


def parts_of(content: Any) -> list[dict[str, Any]]:
    """A canonical content value as a list of parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)
