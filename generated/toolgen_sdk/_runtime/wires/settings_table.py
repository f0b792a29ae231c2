# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The mapping table of the portable run settings: for each, how every wire carries it, or why it cannot.

One place: settings.py plans a run's settings with it, the README's table summarizes it, the tests read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .helpers import number
from .settings_types import REASONING_EFFORTS


@dataclass(frozen=True)
class Spelling:
    """How one wire carries one portable setting.

    `path` is where the value goes in the body (dotted). `encoder`: the wire's codec writes it from
    `Request.extras["settings"]`. `levels`: only these values are carried, each as (path, wire value).
    `also`: fields written alongside (path -> value). `shape`: "cache_control" turns True or {"ttl"} into
    Anthropic's marker. `refuses`: portable values the wire has no word for, each with why.
    """

    path: str
    encoder: bool = False
    levels: Mapping[str, tuple[str, Any]] | None = None
    also: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    shape: str | None = None
    refuses: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Refused:
    """A portable setting one wire cannot carry: why, and what to do instead."""

    why: str


Entry = Spelling | Refused


def _e(path: str) -> Spelling:
    return Spelling(path, encoder=True)


def _levels(path: str, names: Sequence[str], **special: tuple[str, Any]) -> Spelling:
    levels = {name: (path, name) for name in names}
    levels.update(special)
    return Spelling(path, levels=MappingProxyType(levels))


_CHATS = ("openai-chat", "openai-chat-camel", "mistral")
_SDK_REMOVED = Refused(
    "the anthropic SDK took it out of messages.create in 1.0 (current models do not use sampling "
    "parameters); for an older model that still honours it, pass extra_body={...}"
)
_OPENAI_BUDGET = Refused(
    "OpenAI takes a level, not a token budget: set reasoning_effort"
)
_BEDROCK_REASONING = Refused(
    "Converse has no reasoning field; pass the model's own in "
    "additionalModelRequestFields (Claude: {'thinking': {...}})"
)

# The mapping table: portable setting -> wire -> how that wire carries it. A wire missing from a row has no
# equivalent. Written by the encoder (_e) or here (Spelling); the README's table summarizes it.
TABLE: Mapping[str, Mapping[str, Entry]] = MappingProxyType(
    {
        "max_tokens": MappingProxyType(
            {
                "openai-chat": _e("max_completion_tokens"),
                "openai-chat-camel": _e("maxTokens"),
                "mistral": _e("max_tokens"),
                "openai-responses": _e("max_output_tokens"),
                "anthropic": _e("max_tokens"),
                "gemini": _e("generationConfig.maxOutputTokens"),
                "bedrock-converse": _e("inferenceConfig.maxTokens"),
                "cohere": _e("max_tokens"),
                "ollama": _e("options.num_predict"),
                "google-interactions": _e("generation_config.max_output_tokens"),
            }
        ),
        "temperature": MappingProxyType(
            {
                **{wire: _e("temperature") for wire in _CHATS},
                "openai-responses": _e("temperature"),
                "anthropic": _SDK_REMOVED,
                "gemini": _e("generationConfig.temperature"),
                "bedrock-converse": _e("inferenceConfig.temperature"),
                "cohere": _e("temperature"),
                "ollama": _e("options.temperature"),
                "google-interactions": _e("generation_config.temperature"),
            }
        ),
        "top_p": MappingProxyType(
            {
                "openai-chat": _e("top_p"),
                "openai-chat-camel": _e("topP"),
                "mistral": _e("top_p"),
                "openai-responses": _e("top_p"),
                "anthropic": _SDK_REMOVED,
                "gemini": _e("generationConfig.topP"),
                "bedrock-converse": _e("inferenceConfig.topP"),
                "cohere": _e("p"),
                "ollama": _e("options.top_p"),
                "google-interactions": _e("generation_config.top_p"),
            }
        ),
        "top_k": MappingProxyType(
            {
                "anthropic": _SDK_REMOVED,
                "gemini": Spelling("generationConfig.topK"),
                "bedrock-converse": Refused(
                    "Converse's inferenceConfig has no top_k; pass the model's own in "
                    "additionalModelRequestFields"
                ),
                "cohere": Spelling("k"),
                "ollama": Spelling("options.top_k"),
            }
        ),
        "stop": MappingProxyType(
            {
                **{wire: _e("stop") for wire in _CHATS},
                "openai-responses": Refused(
                    "the Responses API takes no stop sequences"
                ),
                "anthropic": _e("stop_sequences"),
                "gemini": _e("generationConfig.stopSequences"),
                "bedrock-converse": _e("inferenceConfig.stopSequences"),
                "cohere": _e("stop_sequences"),
                "ollama": _e("options.stop"),
                "google-interactions": _e("generation_config.stop_sequences"),
            }
        ),
        "seed": MappingProxyType(
            {
                "openai-chat": _e("seed"),
                "openai-chat-camel": _e("seed"),
                "mistral": _e("random_seed"),
                "gemini": _e("generationConfig.seed"),
                "cohere": _e("seed"),
                "ollama": _e("options.seed"),
                "google-interactions": _e("generation_config.seed"),
            }
        ),
        "user": MappingProxyType(
            {
                "openai-chat": _e("user"),
                "openai-chat-camel": _e("user"),
                "openai-responses": _e("user"),
                "anthropic": _e("metadata.user_id"),
            }
        ),
        "tool_choice": MappingProxyType(
            {
                "openai-chat": _e("tool_choice"),
                "openai-chat-camel": _e("toolChoice"),
                "mistral": _e("tool_choice"),
                "openai-responses": _e("tool_choice"),
                "anthropic": _e("tool_choice"),
                "gemini": _e("toolConfig.functionCallingConfig"),
                "bedrock-converse": Spelling(
                    "toolConfig.toolChoice",
                    encoder=True,
                    refuses=MappingProxyType(
                        {
                            "none": "Converse's toolChoice takes auto, any or tool; it has no 'none'"
                        }
                    ),
                ),
                # Its tool_choice takes REQUIRED or NONE; "auto" is its default (DEFAULTS below).
                "cohere": _e("tool_choice"),
                "ollama": Refused(
                    "Ollama has no tool choice (the model always chooses, as with 'auto')"
                ),
                "google-interactions": _e("generation_config.tool_choice"),
            }
        ),
        "parallel_tool_calls": MappingProxyType(
            {
                "openai-chat": _e("parallel_tool_calls"),
                "openai-chat-camel": _e("parallelToolCalls"),
                "mistral": _e("parallel_tool_calls"),
                "openai-responses": _e("parallel_tool_calls"),
                "anthropic": _e("tool_choice.disable_parallel_tool_use"),
            }
        ),
        "response_format": MappingProxyType(
            {
                **{wire: _e("response_format") for wire in _CHATS},
                "openai-responses": _e("text.format"),
                "anthropic": _e("output_config.format"),
                "gemini": _e("generationConfig.responseJsonSchema"),
                "bedrock-converse": _e("outputConfig.textFormat"),
                "cohere": _e("response_format"),
                "ollama": _e("format"),
                "google-interactions": _e("response_format"),
            }
        ),
        "reasoning_effort": MappingProxyType(
            {
                "openai-chat": Spelling("reasoning_effort"),
                "openai-chat-camel": Spelling("reasoningEffort"),
                "mistral": Refused(
                    "Mistral's reasoning models take prompt_mode='reasoning'"
                ),
                "openai-responses": Spelling("reasoning.effort"),
                "anthropic": _levels(
                    "output_config.effort",
                    ("low", "medium", "high", "xhigh", "max"),
                    none=("thinking", {"type": "disabled"}),
                ),
                "gemini": _levels(
                    "generationConfig.thinkingConfig.thinkingLevel",
                    ("minimal", "low", "medium", "high"),
                    none=("generationConfig.thinkingConfig.thinkingBudget", 0),
                ),
                "bedrock-converse": _BEDROCK_REASONING,
                "cohere": _levels(
                    "thinking", (), none=("thinking", {"type": "disabled"})
                ),
                "ollama": _levels(
                    "think", ("low", "medium", "high"), none=("think", False)
                ),
                "google-interactions": _levels(
                    "generation_config.thinking_level",
                    ("minimal", "low", "medium", "high"),
                ),
            }
        ),
        "reasoning_budget": MappingProxyType(
            {
                "openai-chat": _OPENAI_BUDGET,
                "openai-chat-camel": _OPENAI_BUDGET,
                "openai-responses": _OPENAI_BUDGET,
                "anthropic": Spelling(
                    "thinking.budget_tokens",
                    also=MappingProxyType({"thinking.type": "enabled"}),
                ),
                "gemini": Spelling("generationConfig.thinkingConfig.thinkingBudget"),
                "bedrock-converse": _BEDROCK_REASONING,
                "cohere": Spelling(
                    "thinking.token_budget",
                    also=MappingProxyType({"thinking.type": "enabled"}),
                ),
            }
        ),
        "service_tier": MappingProxyType(
            {
                "openai-chat": Spelling("service_tier"),
                "openai-chat-camel": Spelling("serviceTier"),
                "openai-responses": Spelling("service_tier"),
                "anthropic": Spelling("service_tier"),
                "bedrock-converse": Spelling("serviceTier.type"),
            }
        ),
        "metadata": MappingProxyType(
            {
                "openai-chat": Spelling("metadata"),
                "openai-chat-camel": Spelling("metadata"),
                "openai-responses": Spelling("metadata"),
                "anthropic": Refused(
                    "Anthropic's metadata holds only user_id: set `user`, or "
                    "metadata={'user_id': ...}"
                ),
                "gemini": Refused("Gemini has no request metadata (Vertex AI: labels)"),
                "bedrock-converse": Spelling("requestMetadata"),
            }
        ),
        "prompt_cache_key": MappingProxyType(
            {
                "openai-chat": Spelling("prompt_cache_key"),
                "openai-chat-camel": Spelling("promptCacheKey"),
                "openai-responses": Spelling("prompt_cache_key"),
            }
        ),
        "prompt_cache": MappingProxyType(
            {
                "anthropic": Spelling("cache_control", shape="cache_control"),
                **{
                    wire: Refused(
                        "OpenAI caches prompt prefixes by itself; prompt_cache_key and "
                        "prompt_cache_retention steer it"
                    )
                    for wire in ("openai-chat", "openai-responses")
                },
                "gemini": Refused(
                    "Gemini caches prompt prefixes by itself; an explicit cache is a "
                    "cachedContent resource"
                ),
                "bedrock-converse": Refused(
                    "Converse marks caching with cachePoint blocks inside the messages"
                ),
            }
        ),
    }
)
# Portable values a wire has no word for but means when its field is absent: left out of the body, neither
# refused nor changed, since the request then says what was asked. setting -> wire -> value -> why.
DEFAULTS: Mapping[str, Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "tool_choice": MappingProxyType(
            {
                "cohere": MappingProxyType(
                    {
                        "auto": "without tool_choice (which takes only REQUIRED or NONE) the "
                        "model chooses whether to call a tool"
                    }
                ),
                "ollama": MappingProxyType(
                    {
                        "auto": "Ollama has no tool choice; the model always chooses whether "
                        "to call a tool"
                    }
                ),
            }
        ),
    }
)
PORTABLE: tuple[str, ...] = (*TABLE, "extra_body")
# Settings `Request.extras["settings"]` holds for a wire's encoder, as canonical.py documents them.
ENCODED = frozenset(
    key
    for key, row in TABLE.items()
    if any(isinstance(entry, Spelling) and entry.encoder for entry in row.values())
)
_KINDS = ("json_schema", "json_object", "text")
EXPECTED = MappingProxyType(
    {
        "max_tokens": "a whole number of tokens",
        "temperature": "a number",
        "top_p": "a number",
        "top_k": "a whole number",
        "stop": "a string or a list of strings",
        "seed": "a whole number",
        "user": "a string",
        "tool_choice": "'auto', 'none', 'required' or {'name': ...}",
        "parallel_tool_calls": "true or false",
        "response_format": "{'type': 'json_schema', 'schema': {...}}, {'type': 'json_object'} "
        "or {'type': 'text'}",
        "reasoning_effort": "one of " + ", ".join(REASONING_EFFORTS),
        "reasoning_budget": "a whole number of tokens",
        "service_tier": "a string",
        "metadata": "an object of strings",
        "prompt_cache_key": "a string",
        "prompt_cache": "true or {'ttl': ...}",
        "extra_body": "an object of body fields",
    }
)


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def portable_value(key: str, value: Any) -> bool:
    """Whether `value` is a portable setting `key` in its portable form."""
    if key in ("max_tokens", "top_k", "seed", "reasoning_budget"):
        return type(value) is int and (key == "seed" or value >= 0)
    if key in ("temperature", "top_p"):
        return number(value)
    if key in ("user", "service_tier", "prompt_cache_key"):
        return isinstance(value, str)
    if key == "stop":
        return isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        )
    if key == "tool_choice":
        if isinstance(value, dict):
            return list(value) == ["name"] and isinstance(value["name"], str)
        return value in ("auto", "none", "required")
    if key == "parallel_tool_calls":
        return isinstance(value, bool)
    if key == "response_format":
        if not isinstance(value, dict) or value.get("type") not in _KINDS:
            return False
        return value["type"] != "json_schema" or isinstance(value.get("schema"), dict)
    if key == "reasoning_effort":
        return value in REASONING_EFFORTS
    if key == "metadata":
        return _strings(value)
    if key == "prompt_cache":
        return value is True or _strings(value)
    return key == "extra_body" and isinstance(value, dict)


# Body places a wire refuses together, with why: when two settings set both, the second is a problem.
EXCLUSIVE: Mapping[str, tuple[tuple[str, str, str], ...]] = MappingProxyType(
    {
        "gemini": (
            (
                "generationConfig.thinkingConfig.thinkingLevel",
                "generationConfig.thinkingConfig.thinkingBudget",
                (
                    "Gemini refuses a request with both (thinkingLevel is for Gemini 3 models, "
                    "thinkingBudget for earlier ones)"
                ),
            ),
        ),
    }
)

_OPENAI_NAMED = ("function", "custom")
_RESPONSES_TOOL_TYPES = frozenset(
    {
        *("file_search", "web_search_preview", "web_search_preview_2025_03_11"),
        *("computer", "computer_use", "computer_use_preview", "image_generation"),
        *("code_interpreter", "apply_patch", "shell", "programmatic_tool_calling"),
    }
)


def _chat_choice(value: Any) -> bool:
    """OpenAI chat's {"type": "function", "function": {"name": ...}}, its custom twin, or allowed_tools."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    inner = value.get(kind) if isinstance(kind, str) else None
    if kind in _OPENAI_NAMED:
        return isinstance(inner, dict) and isinstance(inner.get("name"), str)
    return kind == "allowed_tools" and isinstance(inner, dict) and len(value) == 2


def _mistral_choice(value: Any) -> bool:
    """Mistral's "any", or {"type": "function", "function": {"name": ...}}."""
    if value == "any":
        return True
    return _chat_choice(value) and value["type"] == "function"


def _responses_choice(value: Any) -> bool:
    """The Responses API's {"type": "function", "name": ...}, a hosted tool's type, mcp or allowed_tools."""
    if not isinstance(value, dict):
        return False
    kind, keys = value.get("type"), set(value)
    if kind in _OPENAI_NAMED:
        return keys == {"type", "name"} and isinstance(value["name"], str)
    if kind == "mcp":
        return keys <= {"type", "server_label", "name"} and isinstance(
            value.get("server_label"), str
        )
    if kind == "allowed_tools":
        return keys == {"type", "mode", "tools"} and isinstance(value["tools"], list)
    return kind in _RESPONSES_TOOL_TYPES and keys == {"type"}


def _anthropic_choice(value: Any) -> bool:
    """Anthropic's {"type": "auto" | "any" | "tool" (with name) | "none"}; none takes nothing else."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        return False
    keys = {"type"} if kind == "none" else {"type", "disable_parallel_tool_use"}
    if kind == "tool":
        keys.add("name")
        if not isinstance(value.get("name"), str):
            return False
    return set(value) <= keys and isinstance(
        value.get("disable_parallel_tool_use", False), bool
    )


def _interactions_choice(value: Any) -> bool:
    """The Interactions API's "any" or "validated", or {"allowed_tools": {...}}."""
    if value in ("auto", "any", "none", "validated"):
        return True
    return (
        isinstance(value, dict)
        and list(value) == ["allowed_tools"]
        and isinstance(value["allowed_tools"], dict)
    )


def _chat_format(value: Any) -> bool:
    """OpenAI chat's (and Mistral's) {"type": "json_schema", "json_schema": {"name": ..., ...}}."""
    return (
        isinstance(value, dict)
        and set(value) == {"type", "json_schema"}
        and value["type"] == "json_schema"
        and isinstance(value["json_schema"], dict)
        and isinstance(value["json_schema"].get("name"), str)
    )


def _anthropic_metadata(value: Any) -> bool:
    """Anthropic's metadata: user_id, nothing else."""
    return (
        isinstance(value, dict)
        and set(value) <= {"user_id"}
        and isinstance(value.get("user_id"), (str, type(None)))
    )


# A portable setting's name a wire also uses for a field of its own, in a form of its own the run sends as given
# (the wire's documented form, checked here): setting -> wire -> whether a value is in that form. A value in
# neither this nor the portable form is refused, not sent raw. Where a wire's form is the portable one (a number,
# a string), there is no entry.
OWN_FORMS: Mapping[str, Mapping[str, Callable[[Any], bool]]] = MappingProxyType(
    {
        "tool_choice": MappingProxyType(
            {
                "openai-chat": _chat_choice,
                "mistral": _mistral_choice,
                "openai-responses": _responses_choice,
                "anthropic": _anthropic_choice,
                "cohere": lambda value: value in ("REQUIRED", "NONE"),
                "google-interactions": _interactions_choice,
            }
        ),
        "response_format": MappingProxyType(
            {
                "openai-chat": _chat_format,
                "mistral": _chat_format,
                "google-interactions": lambda value: isinstance(value, dict),
            }
        ),
        "metadata": MappingProxyType({"anthropic": _anthropic_metadata}),
    }
)


def wire_default(wire: str, key: str, value: Any) -> str | None:
    """Why portable setting `key` at `value` is left out on `wire` as what it means by default (DEFAULTS), or None."""
    if not isinstance(value, str):
        return None
    return DEFAULTS.get(key, {}).get(wire, {}).get(value)


def own_form(wire: str, key: str, value: Any) -> bool:
    """Whether `value` is portable setting `key` in `wire`'s own documented form (OWN_FORMS)."""
    check = OWN_FORMS.get(key, {}).get(wire)
    return check is not None and check(value)
