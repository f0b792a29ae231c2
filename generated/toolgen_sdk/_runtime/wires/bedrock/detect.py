# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How a Bedrock Converse body or stream payload is recognized: the predicates its table row names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..detection import blocks_of, messages_of

_BEDROCK_BLOCKS = frozenset(
    (
        "text",
        "toolUse",
        "toolResult",
        "image",
        "document",
        "reasoningContent",
        "cachePoint",
    )
)

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


def request(body: Mapping[str, Any]) -> str | None:
    if not isinstance(body.get("messages"), list):
        return None
    blocks = blocks_of(messages_of(body))
    if (
        "inferenceConfig" in body
        or "toolConfig" in body
        or any("type" not in b and b.keys() & _BEDROCK_BLOCKS for b in blocks)
    ):
        return "bedrock-converse"
    return None


def response(body: Mapping[str, Any]) -> str | None:
    output = body.get("output")
    if isinstance(output, dict) and "message" in output or "stopReason" in body:
        return "bedrock-converse"
    return None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    return "bedrock-converse" if payload.keys() & _BEDROCK_MARKS else None
