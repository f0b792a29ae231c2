# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How an Ollama chat response, error or stream payload is recognized: the predicates its table row names.

Its requests are chat-completions-shaped: `openai_chat/detect.py` tells them apart by their marks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def response(body: Mapping[str, Any]) -> str | None:
    if (
        "done" in body
        or "done_reason" in body
        or ("created_at" in body and isinstance(body.get("message"), dict))
    ):
        return "ollama"
    return None


def error(body: Mapping[str, Any]) -> str | None:
    return "ollama" if isinstance(body.get("error"), str) else None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    return "ollama" if "message" in payload and "done" in payload else None
