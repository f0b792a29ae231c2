# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How an OpenAI Responses body or stream payload is recognized: the predicates its table row names.

A request's `model` and `input` are the Interactions API's fields too: `request` tells the two apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..detection import kind_of

_INTERACTION_KEYS = frozenset(
    (
        "system_instruction",
        "generation_config",
        "previous_interaction_id",
        "agent",
        "agent_config",
        "response_modalities",
    )
)

_INTERACTION_STEPS = frozenset(
    ("user_input", "model_output", "thought", "function_result")
)

# Content blocks only the Interactions API takes as bare `input` items.
_INTERACTION_CONTENT = frozenset(("text", "image", "audio", "document", "video"))


def request(body: Mapping[str, Any]) -> str | None:
    if "input" in body and "messages" not in body:
        return _input_family(body)
    return None


def response(body: Mapping[str, Any]) -> str | None:
    output = body.get("output")
    if body.get("object") == "response" or (
        isinstance(output, list) and "status" in body
    ):
        return "openai-responses"
    return None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    kind = kind_of(payload)
    if kind.startswith("response.") or (
        "sequence_number" in payload and kind == "error"
    ):
        return "openai-responses"
    return None


def _input_family(body: Mapping[str, Any]) -> str:
    """Responses or Interactions: both take `model` and `input`. A bare string input with nothing else to go by
    is told apart by the model's name (Gemini models are only served by the Interactions API here)."""
    if body.keys() & _INTERACTION_KEYS:
        return "google-interactions"
    model = body.get("model")
    if isinstance(model, str) and model.startswith(("gemini", "models/")):
        return "google-interactions"
    items = body.get("input")
    kinds = (
        {
            i["type"]
            for i in items
            if isinstance(i, dict) and isinstance(i.get("type"), str)
        }
        if isinstance(items, list)
        else set()
    )
    if kinds & _INTERACTION_STEPS or kinds & _INTERACTION_CONTENT:
        return "google-interactions"
    return "openai-responses"
