# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Content detection of request and response bodies: the predicates the table of wires names.

Each takes a decoded body and returns the wire it recognizes, or None; `detect` tries them by the rank
their rows give, so a predicate here may rely on the higher-ranked ones having said no.

Chat-completions-shaped bodies (a `messages` list, or `choices`) are told apart by `_chat_family`, evidence first:
1. marks only one wire writes: camelCase keys (`toolCalls`, `imageUrl`...) for `openai-chat-camel`; Ollama's
   `options`/`format`/`keep_alive`/`think`, `images`, `tool_name`, a message-level `thinking` string or call
   arguments sent as an object; Cohere's `documents`/`citation_options`/`safety_mode`/`stop_sequences`/`k`/`p`,
   `tool_plan`, `REQUIRED`/`NONE` tool choices or a `thinking` block holding a string; Mistral's `safe_prompt`/
   `random_seed`/`prompt_mode`, `prefix`, `num_cached_tokens`, `tool_choice: "any"`, call entries or tools
   without `type`, `thinking` blocks holding a list of chunks, a streamed `delta` with its own `index` or the
   `p` padding field of its stream chunks;
2. then, weakest, Mistral's naming, only where no other vendor's mark is present (`system_fingerprint`,
   `service_tier`, `obfuscation`, `x_groq`, Azure's `prompt_filter_results`, a `chatcmpl`/`gen-`/`msg_` id):
   an `id` of 32 lowercase hex digits (Mistral's completion ids) or a model of Mistral's own API names
   (`mistral-`, `magistral-`, `codestral-`, `devstral-`, `ministral-`, `pixtral-`, `voxtral-`, `open-mistral`,
   `open-mixtral`);
3. else `openai-chat`: OpenAI and every compatible vendor (Groq, xAI, DeepSeek, Qwen, Ollama's `/v1`, Gemini's and
   Anthropic's compat endpoints) write that format themselves.

Genuinely ambiguous, and read as `openai-chat` by rule 3: a body with none of these marks is byte for byte what
Mistral, Cohere, Ollama and the camelCase clients also send (a user turn and string content; function tools with
`type`; `image_url` parts; a tool result answering a call with `type`), and an Anthropic request whose only
trait is `max_tokens` (OpenAI, Mistral and Cohere take it too; with `stop_sequences` as well it reads as Cohere's).
Decoding such a body as `openai-chat` gives the same canonical messages as its own wire does (toolgen's tests
name every body it encodes that is ambiguous, and check that), so the rule loses nothing; a wire given when
decoding (`decode(body, wire)`, `toolgen decode --wire W`) reads it as that wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Keys only the camelCase spelling of chat completions has (Java and JS clients that serialize their own models).
_CHAT_CAMEL_KEYS = frozenset(
    (
        "toolCalls",
        "toolCallId",
        "finishReason",
        "functionCall",
        "maxTokens",
        "maxCompletionTokens",
        "toolChoice",
        "parallelToolCalls",
        "topP",
        "reasoningContent",
        "promptTokens",
        "completionTokens",
        "imageUrl",
        "inputAudio",
        "fileData",
        "fileId",
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
        "stop_sequences",
        "k",
        "return_prompt",
    )
)
_MISTRAL_KEYS = frozenset(("safe_prompt", "random_seed", "prompt_mode"))
_MISTRAL_USAGE = frozenset(("num_cached_tokens", "prompt_audio_seconds"))
# Model names of Mistral's own API; a name with a `/` or a `:` tag is another server's (OpenRouter, Ollama, vLLM).
_MISTRAL_MODELS = (
    "mistral-",
    "magistral-",
    "codestral-",
    "devstral-",
    "ministral-",
    "pixtral-",
    "voxtral-",
    "open-mistral",
    "open-mixtral",
)
# Marks of other chat-completions servers: where one is present, Mistral's naming is not evidence.
_FOREIGN_KEYS = frozenset(
    (
        "system_fingerprint",
        "service_tier",
        "obfuscation",
        "x_groq",
        "prompt_filter_results",
        "usage_breakdown",
    )
)
_FOREIGN_IDS = ("chatcmpl", "cmpl-", "gen-", "gen_", "msg_", "resp_")
_HEX = frozenset("0123456789abcdef")
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
    """Which chat-completions-shaped wire, by the evidence rules of this module's docstring."""
    messages = [m for m in messages if isinstance(m, dict)]
    if _camel_marks(messages, body):
        return "openai-chat-camel"
    if _ollama_marks(messages, body):
        return "ollama"
    if _cohere_marks(messages, body):
        return "cohere"
    if mistral_marks(messages, body) or mistral_named(body):
        return "mistral"
    return "openai-chat"


def _usage_of(body: Mapping[str, Any]) -> Mapping[str, Any]:
    usage = body.get("usage")
    return usage if isinstance(usage, dict) else {}


def _camel_marks(messages: list[dict[str, Any]], body: Mapping[str, Any]) -> bool:
    if body.keys() & _CHAT_CAMEL_KEYS or _usage_of(body).keys() & _CHAT_CAMEL_KEYS:
        return True
    choices = body.get("choices")
    if isinstance(choices, list) and any(
        isinstance(c, dict) and "finishReason" in c for c in choices
    ):
        return True
    return any(m.keys() & _CHAT_CAMEL_KEYS for m in messages) or any(
        b.keys() & _CHAT_CAMEL_KEYS for b in _blocks_of(messages)
    )


def _ollama_marks(messages: list[dict[str, Any]], body: Mapping[str, Any]) -> bool:
    if body.keys() & _OLLAMA_KEYS:
        return True
    for m in messages:
        if isinstance(m.get("images"), list) or "tool_name" in m:
            return True
        if isinstance(m.get("thinking"), str):
            return True  # reasoning as a message field: the compat endpoints call it `reasoning(_content)`
        if m.get("role") == "tool" and "tool_call_id" not in m:
            return True
    return any(
        isinstance(_function_of(c).get("arguments"), dict) and "type" not in c
        for c in _calls_of(messages)
    )


def _cohere_marks(messages: list[dict[str, Any]], body: Mapping[str, Any]) -> bool:
    if body.keys() & _COHERE_KEYS or body.get("tool_choice") in ("REQUIRED", "NONE"):
        return True
    # Cohere's nucleus sampling is `p`, a number; Mistral's stream padding is a string `p`.
    if isinstance(body.get("p"), (int, float)) and not isinstance(body["p"], bool):
        return True
    if any("tool_plan" in m for m in messages):
        return True
    for block in _blocks_of(messages):
        kind = block.get("type")
        if kind == "document" and "document" in block:
            return True
        # Cohere's thinking block holds a string; Anthropic's carries a signature, Mistral's a list of chunks.
        if (
            kind == "thinking"
            and isinstance(block.get("thinking"), str)
            and "signature" not in block
        ):
            return True
    return False


def mistral_marks(messages: Iterable[Any], body: Mapping[str, Any]) -> bool:
    """Fields only Mistral writes, in a body (messages) or a stream chunk (its choices' deltas)."""
    if body.keys() & _MISTRAL_KEYS or _usage_of(body).keys() & _MISTRAL_USAGE:
        return True
    if body.get("tool_choice") == "any":
        return True
    # The random padding of Mistral's stream chunks (Bedrock pads too, but its payloads have no `choices`).
    if isinstance(body.get("p"), str) and "choices" in body:
        return True
    tools = body.get("tools")
    if isinstance(tools, list) and any(
        isinstance(t, dict) and "function" in t and "type" not in t for t in tools
    ):
        return True
    messages = [m for m in messages if isinstance(m, dict)]
    # `prefix` on a message; a streamed delta with its own `index` (seen on Mistral-served models).
    if any("prefix" in m or isinstance(m.get("index"), int) for m in messages):
        return True
    # A call header (it has an id) without `type`: OpenAI's continuation deltas have neither.
    if any(
        isinstance(c.get("id"), str) and c["id"] and "type" not in c
        for c in _calls_of(messages)
    ):
        return True
    return any(
        b.get("type") == "thinking" and isinstance(b.get("thinking"), list)
        for b in _blocks_of(messages)
    )


def mistral_named(body: Mapping[str, Any]) -> bool:
    """Mistral's naming (the weakest evidence): a 32-hex-digit id or a model of its API, and no other vendor's mark."""
    if body.keys() & _FOREIGN_KEYS:
        return False
    ident = body.get("id")
    if isinstance(ident, str):
        if len(ident) == 32 and _HEX.issuperset(ident):
            return True
        if ident.startswith(_FOREIGN_IDS):
            return False
    model = body.get("model")
    return (
        isinstance(model, str)
        and model.startswith(_MISTRAL_MODELS)
        and "/" not in model
        and ":" not in model
    )


def _function_of(call: Mapping[str, Any]) -> Mapping[str, Any]:
    function = call.get("function")
    return function if isinstance(function, dict) else {}
