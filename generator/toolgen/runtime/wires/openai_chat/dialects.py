# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The three spellings of the chat-completions wire (`openai-chat`, `mistral`, `openai-chat-camel`) and how they differ."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Dialect:
    """How one chat-completions wire spells a body: its key names, typed call entries, export format, reasoning key."""

    wire: str
    names: Mapping[str, str]
    typed_calls: bool
    export_as: str
    reasoning_default: str | None

    def key(self, name: str) -> str:
        """The dialect's spelling of a snake_case key."""
        return self.names.get(name, name)


_CAMEL = MappingProxyType(
    {
        "tool_calls": "toolCalls",
        "tool_call_id": "toolCallId",
        "finish_reason": "finishReason",
        "function_call": "functionCall",
        "reasoning_content": "reasoningContent",
        "prompt_tokens": "promptTokens",
        "completion_tokens": "completionTokens",
        "total_tokens": "totalTokens",
        "prompt_tokens_details": "promptTokensDetails",
        "completion_tokens_details": "completionTokensDetails",
        "cached_tokens": "cachedTokens",
        "cache_write_tokens": "cacheWriteTokens",
        "reasoning_tokens": "reasoningTokens",
        "image_url": "imageUrl",
        "input_audio": "inputAudio",
        "file_id": "fileId",
        "file_data": "fileData",
        "max_tokens": "maxTokens",
        "top_p": "topP",
        "tool_choice": "toolChoice",
        "parallel_tool_calls": "parallelToolCalls",
    }
)
_SNAKE: Mapping[str, str] = MappingProxyType({})
_DIALECTS = MappingProxyType(
    {
        "openai-chat": Dialect("openai-chat", _SNAKE, True, "openai", None),
        "mistral": Dialect("mistral", _SNAKE, False, "mistral", "content"),
        "openai-chat-camel": Dialect("openai-chat-camel", _CAMEL, True, "openai", None),
    }
)
WIRES = tuple(_DIALECTS)


def dialect_of(wire: str) -> Dialect:
    """The dialect named `wire`; ValueError for a wire that is not a chat-completions one."""
    dialect = _DIALECTS.get(wire)
    if dialect is None:
        raise ValueError(
            f"{wire!r} is not a chat-completions wire; one of {', '.join(_DIALECTS)}"
        )
    return dialect
