"""What every wire adapter produces and consumes: canonical requests and responses, the typed provider error, stable ids.

Canonical messages here are plain JSON-ready dicts in the shape of the canonical schemas (snake_case keys:
`role`, `content`, `tool_calls`, `tool_call_id`, ...); the generated models validate them. Conventions every
adapter and stream decoder follows, so that a response decoded whole and the same response aggregated from its
stream give equal messages:

- An assistant message's content is a string when it is only text, a list of parts when it holds reasoning
  (`{"type": "reasoning", "text", "signature", "redacted", "encrypted"}`) or other typed parts, and None when
  the model only called tools.
- Tool call arguments are the JSON text the model produced; providers that send an object get it serialized
  with `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`.
- Fields the canonical model has no place for go into `message["extras"][<wire>]`, read back only when encoding
  to that same wire.
- A call without an id on the wire gets `stable_call_id(...)`, listed in `extras[<wire>]["generated_ids"]` so
  that encoding back to that wire leaves it out again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

WIRES = (
    "anthropic",
    "bedrock-converse",
    "cohere",
    "gemini",
    "google-interactions",
    "mistral",
    "ollama",
    "openai-chat",
    "openai-chat-camel",
    "openai-responses",
)
FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter", "error")


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


def stable_call_id(scope: str, index: int, name: str, arguments: str) -> str:
    """An id for a call the wire sent without one: the same call in the same place always gets the same id."""
    digest = hashlib.sha256(f"{scope}\x00{index}\x00{name}\x00{arguments}".encode()).hexdigest()
    return f"call_{digest[:24]}"
