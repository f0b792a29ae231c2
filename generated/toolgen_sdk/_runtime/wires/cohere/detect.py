# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How a Cohere Chat v2 response, error or stream payload is recognized: the predicates its table row names.

Its requests are chat-completions-shaped: `openai_chat/detect.py` tells them apart by their marks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..detection import kind_of


def response(body: Mapping[str, Any]) -> str | None:
    if isinstance(body.get("message"), dict) and (
        "finish_reason" in body or "tool_plan" in body["message"]
    ):
        return "cohere"
    return None


def error(body: Mapping[str, Any]) -> str | None:
    """A bare `message` (Cohere's, with an id) or `Message` (Bedrock's, without one)."""
    if isinstance(body.get("message"), str) or isinstance(body.get("Message"), str):
        return "cohere" if "id" in body else "bedrock-converse"
    return None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    if kind_of(payload).startswith(("message-", "content-", "tool-", "citation-")):
        return "cohere"
    return None
