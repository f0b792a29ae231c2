# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The run settings each wire's API documents, as TypedDicts: the portable ones and one type per wire.

`run(settings=...)` takes a `CanonicalSettings` (mapped to every wire, see settings.py), the wire's own settings
(an `OpenAIChatSettings`, `AnthropicSettings`, ... sent as given), or both. The keys of each class are that
wire's vocabulary: a name outside it and outside the portable ones is refused by name before any request.
The fields the run itself fills (the conversation, the tools, the model, streaming) are not settings; `reserved`
says what to do instead. Types are loose where the API's are deep (a dict for an object): the provider checks
those values, the run checks the names.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypedDict

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
REASONING_EFFORTS: tuple[str, ...] = (
    "none",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)


class CanonicalSettings(TypedDict, total=False):
    """Settings every wire reads in its own spelling, or refuses by name (the table in settings.py).

    `stop` is a string or a list of strings; `tool_choice` is "auto", "none", "required" or {"name": ...};
    `response_format` is structured.py's canonical form; `reasoning_effort` a level, `reasoning_budget` a
    number of thinking tokens; `prompt_cache` True (or {"ttl": ...}) marks the conversation for caching;
    `extra_body` is merged into the body as given, on any wire (what the official SDKs call `extra_body`).
    """

    max_tokens: int
    temperature: float
    top_p: float
    top_k: int
    stop: str | list[str]
    seed: int
    user: str
    tool_choice: str | dict[str, str]
    parallel_tool_calls: bool
    response_format: dict[str, Any]
    reasoning_effort: ReasoningEffort
    reasoning_budget: int
    service_tier: str
    metadata: dict[str, str]
    prompt_cache_key: str
    prompt_cache: bool | dict[str, str]
    extra_body: dict[str, Any]


class OpenAIChatSettings(TypedDict, total=False):
    """`client.chat.completions.create(...)`'s parameters (openai SDK), less the ones the run fills."""

    audio: dict[str, Any]
    frequency_penalty: float
    function_call: str | dict[str, Any]
    logit_bias: dict[str, int]
    logprobs: bool
    max_completion_tokens: int
    max_tokens: int
    metadata: dict[str, str]
    modalities: list[str]
    moderation: dict[str, Any]
    n: int
    parallel_tool_calls: bool
    prediction: dict[str, Any]
    presence_penalty: float
    prompt_cache_key: str
    prompt_cache_options: dict[str, Any]
    prompt_cache_retention: str
    reasoning_effort: str
    response_format: dict[str, Any]
    safety_identifier: str
    seed: int
    service_tier: str
    stop: str | list[str]
    store: bool
    temperature: float
    tool_choice: str | dict[str, Any]
    top_logprobs: int
    top_p: float
    user: str
    verbosity: str
    web_search_options: dict[str, Any]


class MistralSettings(TypedDict, total=False):
    """Mistral's chat completions parameters, less the ones the run fills."""

    frequency_penalty: float
    max_tokens: int
    n: int
    parallel_tool_calls: bool
    prediction: dict[str, Any]
    presence_penalty: float
    prompt_mode: str
    random_seed: int
    response_format: dict[str, Any]
    safe_prompt: bool
    stop: str | list[str]
    temperature: float
    tool_choice: str | dict[str, Any]
    top_p: float


class ResponsesSettings(TypedDict, total=False):
    """`client.responses.create(...)`'s parameters (openai SDK), less the ones the run fills."""

    access_programs: dict[str, Any]
    background: bool
    background_options: dict[str, Any]
    context_management: list[dict[str, Any]]
    conversation: str | dict[str, Any]
    image: dict[str, Any]
    include: list[str]
    instructions: str
    max_output_tokens: int
    max_tool_calls: int
    metadata: dict[str, str]
    moderation: dict[str, Any]
    parallel_tool_calls: bool
    previous_response_id: str
    prompt: dict[str, Any]
    prompt_cache_key: str
    prompt_cache_options: dict[str, Any]
    prompt_cache_retention: str
    reasoning: dict[str, Any]
    safety_identifier: str
    service_tier: str
    store: bool
    temperature: float
    text: dict[str, Any]
    tool_choice: str | dict[str, Any]
    top_logprobs: int
    top_p: float
    truncation: str
    user: str


class AnthropicSettings(TypedDict, total=False):
    """`client.messages.create(...)`'s body parameters (anthropic SDK), less the ones the run fills.

    The SDK took `temperature`, `top_p` and `top_k` out in 1.0 (its MIGRATION.md: current models do not use
    them); for an older model that still honours one, send it with `extra_body`.
    """

    cache_control: dict[str, Any]
    container: str | dict[str, Any]
    diagnostics: dict[str, Any]
    inference_geo: str
    max_tokens: int
    metadata: dict[str, Any]
    output_config: dict[str, Any]
    service_tier: str
    speed: str
    stop_sequences: list[str]
    thinking: dict[str, Any]
    tool_choice: dict[str, Any]


class GeminiSettings(TypedDict, total=False):
    """`generateContent`'s request fields, and generationConfig's fields by their own names (put under it).

    snake_case spellings (`thinking_config`, as google-genai writes them) are read as the camelCase ones.
    """

    cachedContent: str
    generationConfig: dict[str, Any]
    labels: dict[str, str]
    safetySettings: list[dict[str, Any]]
    toolConfig: dict[str, Any]
    candidateCount: int
    enableEnhancedCivicAnswers: bool
    frequencyPenalty: float
    imageConfig: dict[str, Any]
    logprobs: int
    maxOutputTokens: int
    mediaResolution: str
    presencePenalty: float
    responseJsonSchema: dict[str, Any]
    responseLogprobs: bool
    responseMimeType: str
    responseModalities: list[str]
    responseSchema: dict[str, Any]
    seed: int
    speechConfig: dict[str, Any]
    stopSequences: list[str]
    temperature: float
    thinkingConfig: dict[str, Any]
    topK: int
    topP: float


class BedrockSettings(TypedDict, total=False):
    """Converse's request members (botocore's service model), less the ones the run fills."""

    additionalModelRequestFields: dict[str, Any]
    additionalModelResponseFieldPaths: list[str]
    guardrailConfig: dict[str, Any]
    inferenceConfig: dict[str, Any]
    outputConfig: dict[str, Any]
    performanceConfig: dict[str, Any]
    projectIdentifier: str
    promptVariables: dict[str, Any]
    requestMetadata: dict[str, str]
    serviceTier: dict[str, str]


class CohereSettings(TypedDict, total=False):
    """Cohere's v2 chat parameters, less the ones the run fills."""

    citation_options: dict[str, Any]
    documents: list[Any]
    frequency_penalty: float
    k: int
    logprobs: bool
    max_tokens: int
    p: float
    presence_penalty: float
    priority: int
    response_format: dict[str, Any]
    safety_mode: str
    seed: int
    stop_sequences: list[str]
    strict_tools: bool
    temperature: float
    thinking: dict[str, Any]
    tool_choice: str


class OllamaSettings(TypedDict, total=False):
    """Ollama's /api/chat parameters, less the ones the run fills; model options go in `options`."""

    format: str | dict[str, Any]
    keep_alive: str | int
    logprobs: bool
    options: dict[str, Any]
    think: bool | str
    top_logprobs: int


class InteractionsSettings(TypedDict, total=False):
    """The Interactions API's parameters, and generation_config's by their own names (put under it)."""

    agent_config: dict[str, Any]
    background: bool
    generation_config: dict[str, Any]
    previous_interaction_id: str
    response_format: dict[str, Any]
    response_mime_type: str
    response_modalities: list[str]
    store: bool
    image_config: dict[str, Any]
    max_output_tokens: int
    seed: int
    speech_config: dict[str, Any]
    stop_sequences: list[str]
    temperature: float
    thinking_level: str
    thinking_summaries: str
    tool_choice: str | dict[str, Any]
    top_p: float


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# Per wire: its settings type, and the container its nested fields go in (`topK` -> generationConfig.topK).
SETTINGS_TYPES: Mapping[str, type] = MappingProxyType(
    {
        "openai-chat": OpenAIChatSettings,
        "openai-chat-camel": OpenAIChatSettings,
        "mistral": MistralSettings,
        "openai-responses": ResponsesSettings,
        "anthropic": AnthropicSettings,
        "gemini": GeminiSettings,
        "bedrock-converse": BedrockSettings,
        "cohere": CohereSettings,
        "ollama": OllamaSettings,
        "google-interactions": InteractionsSettings,
    }
)
_GEMINI_TOP = frozenset(
    {"cachedContent", "generationConfig", "labels", "safetySettings", "toolConfig"}
)
_INTERACTIONS_TOP = frozenset(
    {
        *("agent_config", "background", "generation_config"),
        *("previous_interaction_id", "response_format", "response_mime_type"),
        *("response_modalities", "store"),
    }
)


def vocabulary(wire: str) -> Mapping[str, str]:
    """The wire's setting names, each with the body path it goes to (dotted: `generationConfig.topK`)."""
    kind = SETTINGS_TYPES.get(wire)
    if kind is None:
        return MappingProxyType({})
    names = list(kind.__annotations__)
    if wire == "openai-chat-camel":
        return MappingProxyType({_camel(name): _camel(name) for name in names})
    if wire == "gemini":
        return MappingProxyType(
            {n: n if n in _GEMINI_TOP else f"generationConfig.{n}" for n in names}
        )
    if wire == "google-interactions":
        return MappingProxyType(
            {
                n: n if n in _INTERACTIONS_TOP else f"generation_config.{n}"
                for n in names
            }
        )
    return MappingProxyType({name: name for name in names})


def spelled(wire: str, name: str) -> str:
    """A name as the wire spells it: google-genai's snake_case read as Gemini's camelCase."""
    return _camel(name) if wire == "gemini" and "_" in name else name


# Body fields the run fills itself, per wire, with what to do instead of setting them.
_RUN = "the run sends the conversation"
_TOOLS = "the run offers its registry's tools"
_MODEL = "the model is the client's (HTTPModel(model=...))"
_STREAM = "set the run's `stream` option"
_STREAM_OPTIONS = "the client sets it when it streams (include_usage); the run's `stream` option decides"
_SYSTEM = "the run sends the conversation's system message"
_HEADER = "the SDK sends it as the header {}; pass headers={{'{}': ...}} to the client"


def reserved(wire: str) -> Mapping[str, str]:
    """The body fields of `wire` the run fills, each with what to do instead."""
    common = {"model": _MODEL, "stream": _STREAM, "tools": _TOOLS}
    extra: dict[str, str] = {}
    if wire in ("openai-chat", "openai-chat-camel", "mistral", "cohere", "ollama"):
        extra = {"messages": _RUN}
    if wire in ("openai-chat", "openai-chat-camel"):
        extra.update(
            functions=_TOOLS,
            stream_options=_STREAM_OPTIONS,
            streamOptions=_STREAM_OPTIONS,
        )
    elif wire == "openai-responses":
        extra = {"input": _RUN, "stream_options": _STREAM_OPTIONS}
    elif wire == "anthropic":
        extra = {
            "messages": _RUN,
            "system": _SYSTEM,
            "user_profile_id": _HEADER.format(
                "anthropic-user-profile-id", "anthropic-user-profile-id"
            ),
            "workspace_id": _HEADER.format(
                "anthropic-workspace-id", "anthropic-workspace-id"
            ),
        }
    elif wire == "gemini":
        extra = {"contents": _RUN, "systemInstruction": _SYSTEM}
    elif wire == "bedrock-converse":
        extra = {
            "messages": _RUN,
            "system": _SYSTEM,
            "modelId": _MODEL,
            "toolConfig": _TOOLS + "; set tool_choice",
        }
    elif wire == "google-interactions":
        extra = {"input": _RUN, "system_instruction": _SYSTEM, "agent": _MODEL}
    return MappingProxyType({**common, **extra})
