# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How an Anthropic Messages body, error or stream payload is recognized: the predicates its table row names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..detection import blocks_of, kind_of, messages_of

_ANTHROPIC_BLOCKS = frozenset(
    ("tool_use", "tool_result", "redacted_thinking", "server_tool_use")
)

# Request fields only Anthropic's API takes (OpenAI, Mistral and Cohere spell these differently or not at all).
_ANTHROPIC_KEYS = frozenset(("anthropic_version", "top_k", "anthropic_beta"))


def request(body: Mapping[str, Any]) -> str | None:
    if not isinstance(body.get("messages"), list):
        return None
    blocks = blocks_of(messages_of(body))
    raw_tools = body.get("tools")
    tools = (
        [t for t in raw_tools if isinstance(t, dict)]
        if isinstance(raw_tools, list)
        else []
    )
    if (
        "system" in body
        and not isinstance(body["system"], list)
        or any(map(_anthropic_block, blocks))
    ):
        return "anthropic"
    if (
        any("input_schema" in t for t in tools)
        or body.keys() & _ANTHROPIC_KEYS
        or _anthropic_choice(body)
    ):
        return "anthropic"
    return None


def response(body: Mapping[str, Any]) -> str | None:
    if body.get("type") == "message" or (
        "stop_reason" in body and isinstance(body.get("content"), list)
    ):
        return "anthropic"
    return None


def error(body: Mapping[str, Any]) -> str | None:
    return "anthropic" if body.get("type") == "error" else None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    kind = kind_of(payload)
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


def _anthropic_block(block: Mapping[str, Any]) -> bool:
    """Blocks only Anthropic writes; Mistral's thinking chunks hold a list and Cohere's documents no `source`."""
    kind = block.get("type")
    if not isinstance(kind, str):
        return False
    if kind in _ANTHROPIC_BLOCKS:
        return True
    if kind == "thinking":
        return isinstance(block.get("thinking"), str) and "signature" in block
    return kind in ("image", "document") and isinstance(block.get("source"), dict)


def _anthropic_choice(body: Mapping[str, Any]) -> bool:
    choice = body.get("tool_choice")
    return (
        isinstance(choice, dict)
        and choice.get("type") in ("auto", "any", "tool", "none")
        and "function" not in choice
    )
