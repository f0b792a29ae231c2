# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Content detection of request and response bodies: the predicates the table of wires names.

Each takes a decoded body and returns the wire it recognizes, or None; `detect` tries them by the rank
their rows give, so a predicate here may rely on the higher-ranked ones having said no.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_CHAT_CAMEL_KEYS = frozenset(
    (
        "toolCalls",
        "toolCallId",
        "finishReason",
        "functionCall",
        "maxTokens",
        "promptTokens",
    )
)
_ANTHROPIC_BLOCKS = frozenset(
    ("tool_use", "tool_result", "redacted_thinking", "server_tool_use")
)
# Request fields only Anthropic's API takes (OpenAI, Mistral and Cohere spell these differently or not at all).
_ANTHROPIC_KEYS = frozenset(("anthropic_version", "top_k", "anthropic_beta"))
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
_OLLAMA_KEYS = frozenset(("options", "format", "keep_alive", "think"))
_COHERE_KEYS = frozenset(
    (
        "documents",
        "citation_options",
        "safety_mode",
        "strict_tools",
        "k",
        "p",
        "return_prompt",
    )
)
_MISTRAL_KEYS = frozenset(("safe_prompt", "random_seed", "prompt_mode"))
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


# ---- responses ----


def gemini_response(body: Any) -> str | None:
    if isinstance(body, list):
        # Gemini's REST errors come as a one-element array.
        if len(body) == 1 and isinstance(body[0], dict) and "error" in body[0]:
            return "gemini"
        return None
    if "candidates" in body or "usageMetadata" in body or "promptFeedback" in body:
        return "gemini"
    return None


def chat_response(body: Mapping[str, Any]) -> str | None:
    if isinstance(body.get("choices"), list):
        return _chat_family(
            [c.get("message") or {} for c in body["choices"] if isinstance(c, dict)],
            body,
        )
    return None


def bedrock_response(body: Mapping[str, Any]) -> str | None:
    output = body.get("output")
    if isinstance(output, dict) and "message" in output or "stopReason" in body:
        return "bedrock-converse"
    return None


def responses_response(body: Mapping[str, Any]) -> str | None:
    output = body.get("output")
    if body.get("object") == "response" or (
        isinstance(output, list) and "status" in body
    ):
        return "openai-responses"
    return None


def anthropic_response(body: Mapping[str, Any]) -> str | None:
    if body.get("type") == "message" or (
        "stop_reason" in body and isinstance(body.get("content"), list)
    ):
        return "anthropic"
    return None


def interactions_response(body: Mapping[str, Any]) -> str | None:
    if (
        body.get("object") == "interaction"
        or "steps" in body
        or ("outputs" in body and "status" in body)
    ):
        return "google-interactions"
    return None


def ollama_response(body: Mapping[str, Any]) -> str | None:
    if (
        "done" in body
        or "done_reason" in body
        or ("created_at" in body and isinstance(body.get("message"), dict))
    ):
        return "ollama"
    return None


def cohere_response(body: Mapping[str, Any]) -> str | None:
    if isinstance(body.get("message"), dict) and (
        "finish_reason" in body or "tool_plan" in body["message"]
    ):
        return "cohere"
    return None


# ---- requests ----


def gemini_request(body: Mapping[str, Any]) -> str | None:
    return "gemini" if "contents" in body else None


def input_request(body: Mapping[str, Any]) -> str | None:
    if "input" in body and "messages" not in body:
        return _input_family(body)
    return None


def anthropic_request(body: Mapping[str, Any]) -> str | None:
    if not isinstance(body.get("messages"), list):
        return None
    blocks = _blocks_of(_messages_of(body))
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


def bedrock_request(body: Mapping[str, Any]) -> str | None:
    if not isinstance(body.get("messages"), list):
        return None
    blocks = _blocks_of(_messages_of(body))
    if (
        "inferenceConfig" in body
        or "toolConfig" in body
        or any("type" not in b and b.keys() & _BEDROCK_BLOCKS for b in blocks)
    ):
        return "bedrock-converse"
    return None


def chat_request(body: Mapping[str, Any]) -> str | None:
    """Any other body with a message list: Anthropic's when its system is a list of blocks (Bedrock's
    are too, which ranks higher), else the chat-completions dialect its keys show."""
    if not isinstance(body.get("messages"), list):
        return None
    if isinstance(body.get("system"), list):
        return "anthropic"
    return _chat_family(_messages_of(body), body)


# ---- error bodies ----


def anthropic_error(body: Mapping[str, Any]) -> str | None:
    return "anthropic" if body.get("type") == "error" else None


def ollama_error(body: Mapping[str, Any]) -> str | None:
    return "ollama" if isinstance(body.get("error"), str) else None


def gemini_error(body: Mapping[str, Any]) -> str | None:
    error = body.get("error")
    if (
        isinstance(error, dict)
        and isinstance(error.get("status"), str)
        and isinstance(error.get("code"), int)
    ):
        return "gemini"
    return None


def openai_error(body: Mapping[str, Any]) -> str | None:
    return "openai-chat" if isinstance(body.get("error"), dict) else None


def mistral_error(body: Mapping[str, Any]) -> str | None:
    return "mistral" if body.get("object") == "error" else None


def message_error(body: Mapping[str, Any]) -> str | None:
    """A bare `message` (Cohere's, with an id) or `Message` (Bedrock's, without one)."""
    if isinstance(body.get("message"), str) or isinstance(body.get("Message"), str):
        return "cohere" if "id" in body else "bedrock-converse"
    return None


# ---- helpers ----


def _messages_of(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return (
        [m for m in messages if isinstance(m, dict)]
        if isinstance(messages, list)
        else []
    )


def _blocks_of(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        b
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict)
    ]


def _calls_of(
    messages: Iterable[Mapping[str, Any]], key: str = "tool_calls"
) -> list[dict[str, Any]]:
    return [
        c
        for m in messages
        if isinstance(m.get(key), list)
        for c in m[key]
        if isinstance(c, dict)
    ]


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


def _chat_family(messages: list[Any], body: Mapping[str, Any]) -> str:
    """Which chat-completions-shaped wire: the camelCase spelling, Ollama, Cohere, Mistral, or OpenAI Chat."""
    messages = [m for m in messages if isinstance(m, dict)]
    keys = set(body).union(*(m.keys() for m in messages)) if messages else set(body)
    choices = [c for c in body.get("choices") or () if isinstance(c, dict)]
    raw_usage = body.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    if (
        keys & _CHAT_CAMEL_KEYS
        or any("finishReason" in c for c in choices)
        or "promptTokens" in usage
    ):
        return "openai-chat-camel"
    calls = _calls_of(messages)
    if body.keys() & _OLLAMA_KEYS or any(
        isinstance(m.get("images"), list) or "tool_name" in m for m in messages
    ):
        return "ollama"
    if any(
        isinstance((c.get("function") or {}).get("arguments"), dict) and "type" not in c
        for c in calls
    ):
        return "ollama"
    if any(m.get("role") == "tool" and "tool_call_id" not in m for m in messages):
        return "ollama"
    documents = any(
        b.get("type") == "document" and "document" in b for b in _blocks_of(messages)
    )
    if (
        body.keys() & _COHERE_KEYS
        or "tool_plan" in keys
        or documents
        or body.get("tool_choice") in ("REQUIRED", "NONE")
    ):
        return "cohere"
    if (
        body.keys() & _MISTRAL_KEYS
        or "prefix" in keys
        or "num_cached_tokens" in usage
        or body.get("tool_choice") == "any"
    ):
        return "mistral"
    if any("type" not in c for c in calls) or any(
        b.get("type") == "thinking" for b in _blocks_of(messages)
    ):
        return "mistral"
    return "openai-chat"
