# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The front door to the wire adapters: tell a body's wire and kind from its content, decode, encode, convert, check.

`detect(body)` names the wire format and whether the body is a request or a response, from the content alone;
`decode` turns a body into a Request, a Response or a ProviderError (error bodies are data, never raised);
`encode_request`, `encode_response` and `encode_error` write canonical values in a wire's spelling; `convert` does
both; `check_pairing` lists tool results and calls that do not pair up. Malformed bodies raise ValueError whose
text starts with a JSON pointer.

Some bodies cannot be told apart, and then decoding them as the guess is still right: OpenAI Chat and its
compatible vendors (Groq, xAI, DeepSeek, ...) share one format; a Mistral, Ollama or Cohere chat body without
their own traits (untyped calls, `prefix`; `options`, object arguments; `tool_plan`, documents) is an OpenAI Chat
body; an `{"error": {...}}` body is the same shape from OpenAI Chat and the Responses API; `{"model", "input":
"<text>"}` is a Responses request unless the model is a Gemini model (then the Interactions API).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any

from .base import WIRES, ProviderError, Request, Response

REQUEST = "request"
RESPONSE = "response"


@dataclass(frozen=True)
class Codec:
    """The four conversions of one wire, plus its error body."""

    decode_request: Callable[[Any], Request]
    encode_request: Callable[[Request], dict[str, Any]]
    decode_response: Callable[[Any], Response | ProviderError]
    encode_response: Callable[[Response], dict[str, Any]]
    encode_error: Callable[[ProviderError], Any]


@dataclass(frozen=True)
class Problem:
    """A tool call and its result that do not pair up, with a JSON pointer into the messages."""

    pointer: str
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"pointer": self.pointer, "code": self.code, "message": self.message}


def codec(wire: str) -> Codec:
    """The conversions for `wire` (one of `WIRES`); its module is imported on first use."""
    if wire in ("openai-chat", "mistral", "openai-chat-camel"):
        return _chat(wire)
    if wire in ("gemini", "google-interactions"):
        return _gemini(wire)
    build = _MODULES.get(wire)
    if build is None:
        raise ValueError(f"unknown wire {wire!r}; one of {', '.join(WIRES)}")
    return build()


def _chat(wire: str) -> Codec:
    from .openai_chat import (
        decode_request,
        decode_response,
        encode_error,
        encode_request,
        encode_response,
    )

    return Codec(
        partial(decode_request, wire=wire),
        partial(encode_request, wire=wire),
        partial(decode_response, wire=wire),
        partial(encode_response, wire=wire),
        partial(encode_error, wire=wire),
    )


def _gemini(wire: str) -> Codec:
    from .gemini import (
        decode_request,
        decode_response,
        encode_error,
        encode_request,
        encode_response,
    )

    return Codec(
        partial(decode_request, wire=wire),
        partial(encode_request, wire=wire),
        partial(decode_response, wire=wire),
        partial(encode_response, wire=wire),
        partial(encode_error, wire=wire),
    )


def _anthropic() -> Codec:
    from .anthropic import (
        decode_request,
        decode_response,
        encode_error,
        encode_request,
        encode_response,
    )

    return Codec(
        decode_request, encode_request, decode_response, encode_response, encode_error
    )


def _responses() -> Codec:
    from .responses import (
        decode_request,
        decode_response,
        encode_error,
        encode_request,
        encode_response,
    )

    return Codec(
        decode_request, encode_request, decode_response, encode_response, encode_error
    )


def _bedrock() -> Codec:
    from .bedrock import (
        decode_request,
        decode_response,
        encode_error,
        encode_request,
        encode_response,
    )

    return Codec(
        decode_request, encode_request, decode_response, encode_response, encode_error
    )


def _ollama() -> Codec:
    from .ollama import (
        decode_request,
        decode_response,
        encode_error,
        encode_request,
        encode_response,
    )

    return Codec(
        decode_request, encode_request, decode_response, encode_response, encode_error
    )


def _cohere() -> Codec:
    from .cohere import (
        decode_request,
        decode_response,
        encode_error,
        encode_request,
        encode_response,
    )

    return Codec(
        decode_request, encode_request, decode_response, encode_response, encode_error
    )


_MODULES: Mapping[str, Callable[[], Codec]] = MappingProxyType(
    {
        "anthropic": _anthropic,
        "openai-responses": _responses,
        "bedrock-converse": _bedrock,
        "ollama": _ollama,
        "cohere": _cohere,
    }
)


# ---- detection ----

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


def detect(body: Any) -> tuple[str, str]:
    """(wire, kind) of a request or response body, kind being "request" or "response", from its content alone."""
    if (
        isinstance(body, list)
        and len(body) == 1
        and isinstance(body[0], dict)
        and "error" in body[0]
    ):
        return "gemini", RESPONSE
    if not isinstance(body, dict):
        raise ValueError("/: expected a request or response body object")  # noqa: TRY004 - malformed input is ValueError
    found = _detect_response(body) or _detect_request(body) or _detect_error(body)
    if found is None:
        raise ValueError(
            "/: expected a request body (`messages`, `contents` or `input`) or a response body (`choices`, "
            "`candidates`, `content`, `output`, `message` or an error object)"
        )
    return found


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


def _detect_response(body: Mapping[str, Any]) -> tuple[str, str] | None:
    if "candidates" in body or "usageMetadata" in body or "promptFeedback" in body:
        return "gemini", RESPONSE
    if isinstance(body.get("choices"), list):
        return _chat_family(
            [c.get("message") or {} for c in body["choices"] if isinstance(c, dict)],
            body,
        ), RESPONSE
    output = body.get("output")
    if isinstance(output, dict) and "message" in output or "stopReason" in body:
        return "bedrock-converse", RESPONSE
    if body.get("object") == "response" or (
        isinstance(output, list) and "status" in body
    ):
        return "openai-responses", RESPONSE
    if body.get("type") == "message" or (
        "stop_reason" in body and isinstance(body.get("content"), list)
    ):
        return "anthropic", RESPONSE
    if (
        body.get("object") == "interaction"
        or "steps" in body
        or ("outputs" in body and "status" in body)
    ):
        return "google-interactions", RESPONSE
    if (
        "done" in body
        or "done_reason" in body
        or ("created_at" in body and isinstance(body.get("message"), dict))
    ):
        return "ollama", RESPONSE
    if isinstance(body.get("message"), dict) and (
        "finish_reason" in body or "tool_plan" in body["message"]
    ):
        return "cohere", RESPONSE
    return None


def _detect_request(body: Mapping[str, Any]) -> tuple[str, str] | None:
    if "contents" in body:
        return "gemini", REQUEST
    if "input" in body and "messages" not in body:
        return _input_family(body), REQUEST
    if not isinstance(body.get("messages"), list):
        return None
    messages = _messages_of(body)
    blocks = _blocks_of(messages)
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
        return "anthropic", REQUEST
    if (
        any("input_schema" in t for t in tools)
        or body.keys() & _ANTHROPIC_KEYS
        or _anthropic_choice(body)
    ):
        return "anthropic", REQUEST
    if (
        "inferenceConfig" in body
        or "toolConfig" in body
        or any("type" not in b and b.keys() & _BEDROCK_BLOCKS for b in blocks)
    ):
        return "bedrock-converse", REQUEST
    if isinstance(body.get("system"), list):
        return "anthropic", REQUEST
    return _chat_family(messages, body), REQUEST


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


def _detect_error(body: Mapping[str, Any]) -> tuple[str, str] | None:
    error = body.get("error")
    if body.get("type") == "error":
        return "anthropic", RESPONSE
    if isinstance(error, str):
        return "ollama", RESPONSE
    if isinstance(error, dict):
        if isinstance(error.get("status"), str) and isinstance(error.get("code"), int):
            return "gemini", RESPONSE
        return "openai-chat", RESPONSE
    if body.get("object") == "error":
        return "mistral", RESPONSE
    if isinstance(body.get("message"), str) or isinstance(body.get("Message"), str):
        return ("cohere" if "id" in body else "bedrock-converse"), RESPONSE
    return None


# ---- conversions ----


def decode(
    body: Any, wire: str | None = None, kind: str | None = None
) -> Request | Response | ProviderError:
    """A body in canonical terms; `wire` and `kind` are detected when not given."""
    if wire is None or kind is None:
        found_wire, found_kind = detect(body)
        wire = wire or found_wire
        kind = kind or found_kind
    if kind not in (REQUEST, RESPONSE):
        raise ValueError(f"kind must be {REQUEST!r} or {RESPONSE!r}, not {kind!r}")
    conversions = codec(wire)
    return (
        conversions.decode_request(body)
        if kind == REQUEST
        else conversions.decode_response(body)
    )


def encode_request(request: Request, wire: str) -> dict[str, Any]:
    """`request` as a request body of `wire`."""
    return codec(wire).encode_request(request)


def encode_response(response: Response, wire: str) -> dict[str, Any]:
    """`response` as a response body of `wire`."""
    return codec(wire).encode_response(response)


def encode_error(error: ProviderError, wire: str) -> Any:
    """A provider error as the error body `wire` sends."""
    return codec(wire).encode_error(error)


def convert(
    body: Any, to_wire: str, from_wire: str | None = None, kind: str | None = None
) -> Any:
    """A body of one wire as the same request, response or error in another wire."""
    decoded = decode(body, from_wire, kind)
    if isinstance(decoded, ProviderError):
        return encode_error(decoded, to_wire)
    if isinstance(decoded, Request):
        return encode_request(decoded, to_wire)
    return encode_response(decoded, to_wire)


# ---- pairing ----


def check_pairing(
    messages: list[Mapping[str, Any]], allow_pending: bool = False
) -> list[Problem]:
    """Tool results whose call id no earlier call has, duplicate ids, and calls left without a result.

    With `allow_pending`, calls of the last assistant message that nothing but their own results follow are not
    reported: a conversation that ends by asking for tools is waiting for their results.
    """
    problems: list[Problem] = []
    calls: dict[str, str] = {}
    answered: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            for j, call in enumerate(message.get("tool_calls") or ()):
                _record_call(call.get("id"), f"/{i}/tool_calls/{j}", calls, problems)
        elif role == "tool":
            _record_result(
                message.get("tool_call_id"),
                f"/{i}/tool_call_id",
                calls,
                answered,
                problems,
            )
    pending = _pending_calls(messages) if allow_pending else set()
    for call_id, pointer in calls.items():
        if call_id not in answered and call_id not in pending:
            text = f"tool call {call_id!r} has no tool message answering it"
            problems.append(Problem(pointer, "missing_result", text))
    return problems


def _record_call(
    call_id: Any, pointer: str, calls: dict[str, str], problems: list[Problem]
) -> None:
    if not isinstance(call_id, str) or not call_id:
        problems.append(
            Problem(
                f"{pointer}/id",
                "missing_call_id",
                "a tool call has no id to pair its result with",
            )
        )
    elif call_id in calls:
        message = f"tool call id {call_id!r} is also used at {calls[call_id]}"
        problems.append(Problem(f"{pointer}/id", "duplicate_call_id", message))
    else:
        calls[call_id] = pointer


def _record_result(
    call_id: Any,
    pointer: str,
    calls: Mapping[str, str],
    answered: set[str],
    problems: list[Problem],
) -> None:
    if call_id not in calls:
        message = f"tool result for {call_id!r}, but no earlier assistant message made a call with that id"
        problems.append(Problem(pointer, "unknown_call", message))
    elif call_id in answered:
        problems.append(
            Problem(
                pointer,
                "duplicate_result",
                f"tool call {call_id!r} is answered more than once",
            )
        )
    else:
        answered.add(call_id)


def _pending_calls(messages: list[Mapping[str, Any]]) -> set[str]:
    for message in reversed(messages):
        if message.get("role") == "tool":
            continue
        if message.get("role") == "assistant":
            return {
                call.get("id")
                for call in message.get("tool_calls") or ()
                if isinstance(call.get("id"), str)
            }
        return set()
    return set()
