# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How a chat-completions-shaped body or stream payload is recognized, and which wire of that shape wrote it.

Each predicate takes a decoded body (or a stream payload and its SSE event name) and returns the wire it
recognizes, or None; detection tries every row's by rank, so a predicate here may rely on the higher-ranked
ones having said no. Mistral's chunks have the shape of OpenAI's and are told apart by the same marks; a first
chunk with none (a bare role delta under a `chatcmpl-` id) is `openai-chat`.

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

from ..detection import blocks_of, calls_of, function_of, messages_of, usage_of

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


def request(body: Mapping[str, Any]) -> str | None:
    """Any other body with a message list: Anthropic's when its system is a list of blocks (Bedrock's
    are too, which ranks higher), else the chat-completions dialect its keys show."""
    if not isinstance(body.get("messages"), list):
        return None
    if isinstance(body.get("system"), list):
        return "anthropic"
    return _chat_family(messages_of(body), body)


def response(body: Mapping[str, Any]) -> str | None:
    if isinstance(body.get("choices"), list):
        return _chat_family(
            [c.get("message") or {} for c in body["choices"] if isinstance(c, dict)],
            body,
        )
    return None


def error(body: Mapping[str, Any]) -> str | None:
    return "openai-chat" if isinstance(body.get("error"), dict) else None


def chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    if "choices" in payload or payload.get("object") == "chat.completion.chunk":
        choices = payload.get("choices")
        listed = choices if isinstance(choices, list) else ()
        deltas = [
            c["delta"]
            for c in listed
            if isinstance(c, dict) and isinstance(c.get("delta"), dict)
        ]
        if _camel_marks(deltas, payload):
            # openai-chat-camel is not streamed: read as openai-chat, its camelCase calls and finish would be lost.
            return None
        return "openai-chat"
    return None


def mistral_error(body: Mapping[str, Any]) -> str | None:
    return "mistral" if body.get("object") == "error" else None


def mistral_chunk(payload: Mapping[str, Any], event: str | None) -> str | None:
    """A chat-completions chunk with Mistral's marks or naming (the rules of this module); asked before
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


def _camel_marks(messages: list[dict[str, Any]], body: Mapping[str, Any]) -> bool:
    if body.keys() & _CHAT_CAMEL_KEYS or usage_of(body).keys() & _CHAT_CAMEL_KEYS:
        return True
    choices = body.get("choices")
    if isinstance(choices, list) and any(
        isinstance(c, dict) and "finishReason" in c for c in choices
    ):
        return True
    return any(m.keys() & _CHAT_CAMEL_KEYS for m in messages) or any(
        b.keys() & _CHAT_CAMEL_KEYS for b in blocks_of(messages)
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
        isinstance(function_of(c).get("arguments"), dict) and "type" not in c
        for c in calls_of(messages)
    )


def _cohere_marks(messages: list[dict[str, Any]], body: Mapping[str, Any]) -> bool:
    if body.keys() & _COHERE_KEYS or body.get("tool_choice") in ("REQUIRED", "NONE"):
        return True
    # Cohere's nucleus sampling is `p`, a number; Mistral's stream padding is a string `p`.
    if isinstance(body.get("p"), (int, float)) and not isinstance(body["p"], bool):
        return True
    if any("tool_plan" in m for m in messages):
        return True
    for block in blocks_of(messages):
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
    if body.keys() & _MISTRAL_KEYS or usage_of(body).keys() & _MISTRAL_USAGE:
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
        for c in calls_of(messages)
    ):
        return True
    return any(
        b.get("type") == "thinking" and isinstance(b.get("thinking"), list)
        for b in blocks_of(messages)
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
