# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Detection of a stream's wire from its first payload: the predicates the table of wires names.

Each takes a decoded payload (a JSON object) and its SSE event name, and returns the wire it recognizes,
or None; they are tried by the rank their rows give, highest first. Only the first payload is asked, so a
predicate decides from one chunk, and never raises on a payload of odd types (the aggregator does not guard it).

Mistral's chunks have the shape of OpenAI's; what tells them apart is in `wires/sniff.py` (`mistral_marks`,
then `mistral_named`). A first chunk with neither (a bare role delta under a `chatcmpl-` id) is `openai-chat`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..wires.sniff import mistral_marks, mistral_named

# Bedrock ConverseStream's events, each under its own key as the SDKs hand them over (eventstream frames name theirs).
BEDROCK_EVENTS = frozenset(
    (
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    )
)
# `metadata` alone names no wire: other payloads carry a key of that name too.
_BEDROCK_MARKS = BEDROCK_EVENTS - {"metadata"}


def _kind(payload: Mapping[str, Any]) -> str:
    kind = payload.get("type")
    return kind if isinstance(kind, str) else ""


def responses_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    kind = _kind(payload)
    if kind.startswith("response.") or (
        "sequence_number" in payload and kind == "error"
    ):
        return "openai-responses"
    return None


def anthropic_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    kind = _kind(payload)
    if kind.startswith(("message_", "content_block_")) or kind == "ping":
        return "anthropic"
    # Anthropic names every SSE event after its payload's type; an untyped payload still has the name.
    if (
        not kind
        and event is not None
        and event.startswith(("message_", "content_block_"))
    ):
        return "anthropic"
    return None


def cohere_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    if _kind(payload).startswith(("message-", "content-", "tool-", "citation-")):
        return "cohere"
    return None


def interactions_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    return "google-interactions" if "event_type" in payload else None


def mistral_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    """A chat-completions chunk with Mistral's marks or naming (the rules of `wires/sniff.py`); asked before
    `chat_chunk`, which takes every other chunk of that shape."""
    choices = payload.get("choices")
    if not isinstance(choices, list):
        return None
    # A chunk's deltas, or the message of a whole response sent where a stream was asked for.
    messages = [
        c.get("delta", c.get("message")) for c in choices if isinstance(c, dict)
    ]
    if mistral_marks(messages, payload) or mistral_named(payload):
        return "mistral"
    return None


def chat_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    if "choices" in payload or payload.get("object") == "chat.completion.chunk":
        return "openai-chat"
    return None


def gemini_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    if "candidates" in payload or "usageMetadata" in payload:
        return "gemini"
    return None


def ollama_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    return "ollama" if "message" in payload and "done" in payload else None


def bedrock_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    return "bedrock-converse" if payload.keys() & _BEDROCK_MARKS else None
