# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How a Gemini generateContent body, error or stream payload is recognized: the predicates its table row names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def request(body: Mapping[str, Any]) -> str | None:
    return "gemini" if "contents" in body else None


def response(body: Any) -> str | None:
    if isinstance(body, list):
        # Gemini's REST errors come as a one-element array.
        if len(body) == 1 and isinstance(body[0], dict) and "error" in body[0]:
            return "gemini"
        return None
    if "candidates" in body or "usageMetadata" in body or "promptFeedback" in body:
        return "gemini"
    return None


def error(body: Mapping[str, Any]) -> str | None:
    error = body.get("error")
    if (
        isinstance(error, dict)
        and isinstance(error.get("status"), str)
        and isinstance(error.get("code"), int)
    ):
        return "gemini"
    return None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    if "candidates" in payload or "usageMetadata" in payload:
        return "gemini"
    return None
