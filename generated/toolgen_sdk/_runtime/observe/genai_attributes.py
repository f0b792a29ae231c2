# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The GenAI conventions' attributes of a model client, a request and a response: provider, server, settings, usage.

A request's settings are read where the run put them: the portable ones in `Request.extras["settings"]`, the
wire's own (a penalty, `topK`, a reasoning level) among its body fields in `Request.extras[wire]["fields"]`,
by the place each wire gives them. Only what the request states is recorded; a value of the wrong type is left
out. Provider-specific attributes (`openai.*`) go only with their provider, as the conventions ask.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

OTHER_PROVIDER = "_OTHER"
# The conventions' well-known gen_ai.provider.name of each wire's provider.
PROVIDERS: Mapping[str, str] = MappingProxyType(
    {
        "anthropic": "anthropic",
        "bedrock-converse": "aws.bedrock",
        "cohere": "cohere",
        "gemini": "gcp.gemini",
        "google-interactions": "gcp.gemini",
        "mistral": "mistral_ai",
        "ollama": "ollama",
        "openai-chat": "openai",
        "openai-chat-camel": "openai",
        "openai-responses": "openai",
    }
)
# Hosts of the providers the conventions name (the host itself, or a subdomain or `{region}-` prefix of it): an
# OpenAI-compatible wire pointed at Groq is Groq's, not OpenAI's.
_HOSTS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", "openai"),
    ("openai.azure.com", "azure.ai.openai"),
    ("api.anthropic.com", "anthropic"),
    ("generativelanguage.googleapis.com", "gcp.gemini"),
    ("aiplatform.googleapis.com", "gcp.vertex_ai"),
    ("api.groq.com", "groq"),
    ("api.x.ai", "x_ai"),
    ("api.deepseek.com", "deepseek"),
    ("api.mistral.ai", "mistral_ai"),
    ("api.perplexity.ai", "perplexity"),
    ("api.moonshot.ai", "moonshot_ai"),
    ("api.moonshot.cn", "moonshot_ai"),
    ("api.cohere.com", "cohere"),
    ("api.cohere.ai", "cohere"),
)
_DEFAULT_PORTS = MappingProxyType({"https": 443, "http": 80})
_OPENAI_APIS = MappingProxyType(
    {
        "openai-chat": "chat_completions",
        "openai-chat-camel": "chat_completions",
        "openai-responses": "responses",
    }
)
# Portable settings (Request.extras["settings"]) and the request attribute each one is.
_PORTABLE = MappingProxyType(
    {
        "max_tokens": "gen_ai.request.max_tokens",
        "temperature": "gen_ai.request.temperature",
        "top_p": "gen_ai.request.top_p",
        "top_k": "gen_ai.request.top_k",
        "stop": "gen_ai.request.stop_sequences",
        "seed": "gen_ai.request.seed",
        "reasoning_effort": "gen_ai.request.reasoning.level",
    }
)
# The places in a wire's body fields (dotted, space-separated) that state each request attribute, across wires.
_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        attribute: tuple(paths.split())
        for attribute, paths in {
            "gen_ai.request.max_tokens": "max_tokens max_completion_tokens maxTokens "
            "maxCompletionTokens max_output_tokens generationConfig.maxOutputTokens "
            "inferenceConfig.maxTokens options.num_predict "
            "generation_config.max_output_tokens",
            "gen_ai.request.temperature": "temperature generationConfig.temperature "
            "inferenceConfig.temperature options.temperature "
            "generation_config.temperature",
            "gen_ai.request.top_p": "top_p topP p generationConfig.topP "
            "inferenceConfig.topP options.top_p generation_config.top_p",
            "gen_ai.request.top_k": "top_k topK k generationConfig.topK options.top_k "
            "generation_config.top_k",
            "gen_ai.request.stop_sequences": "stop stop_sequences stopSequences "
            "generationConfig.stopSequences inferenceConfig.stopSequences "
            "options.stop generation_config.stop_sequences",
            "gen_ai.request.frequency_penalty": "frequency_penalty frequencyPenalty "
            "generationConfig.frequencyPenalty options.frequency_penalty",
            "gen_ai.request.presence_penalty": "presence_penalty presencePenalty "
            "generationConfig.presencePenalty options.presence_penalty",
            "gen_ai.request.seed": "seed random_seed randomSeed generationConfig.seed "
            "options.seed generation_config.seed",
            "gen_ai.request.choice.count": "n generationConfig.candidateCount",
            "gen_ai.request.reasoning.level": "reasoning_effort reasoningEffort "
            "reasoning.effort output_config.effort "
            "generationConfig.thinkingConfig.thinkingLevel "
            "generation_config.thinking_level think",
        }.items()
    }
)
# Where a wire's body asks for structured output, and the places a media type says so.
_FORMATS = (
    "response_format",
    "responseFormat",
    "text.format",
    "output_config.format",
    "outputConfig.textFormat",
    "format",
    "generationConfig.responseJsonSchema",
    "generationConfig.responseSchema",
)
_MIME_TYPES = ("generationConfig.responseMimeType", "response_mime_type")
_INTEGERS = frozenset(
    {"gen_ai.request.max_tokens", "gen_ai.request.seed", "gen_ai.request.choice.count"}
)
# Canonical usage keys (wires/*: `_usage`) and the usage attribute each one is.
USAGE: Mapping[str, str] = MappingProxyType(
    {
        "input_tokens": "gen_ai.usage.input_tokens",
        "output_tokens": "gen_ai.usage.output_tokens",
        "cache_read_tokens": "gen_ai.usage.cache_read.input_tokens",
        "cache_write_tokens": "gen_ai.usage.cache_write.input_tokens",
        "reasoning_tokens": "gen_ai.usage.reasoning.output_tokens",
    }
)


def _host_provider(host: str) -> str | None:
    for known, provider in _HOSTS:
        if host == known or host.endswith(("." + known, "-" + known)):
            return provider
    return None


def server_of(model: Any) -> tuple[str, int] | None:
    """(server.address, server.port) of a model client's base URL; None when it has none."""
    base = getattr(model, "base_url", None)
    if not isinstance(base, str) or not base:
        return None
    try:
        parts = urlsplit(base)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    port = port or _DEFAULT_PORTS.get(parts.scheme.lower())
    return None if not host or port is None else (host, port)


def provider_name(model: Any) -> str:
    """The gen_ai.provider.name of a model client: its own, else its server's when that is a provider the
    conventions name, else its wire's (HTTPModel, ReplayModel), else `_OTHER`."""
    named = getattr(model, "provider_name", None)
    if isinstance(named, str) and named:
        return named
    server = server_of(model)
    by_host = None if server is None else _host_provider(server[0].lower())
    if by_host is not None:
        return by_host
    wire = getattr(model, "wire", None)
    return (
        PROVIDERS.get(wire, wire) if isinstance(wire, str) and wire else OTHER_PROVIDER
    )


def _at(fields: Mapping[str, Any], path: str) -> Any:
    value: Any = fields
    for key in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _value(attribute: str, value: Any) -> Any:
    """`value` as the attribute's type, or None when it is not one."""
    if attribute == "gen_ai.request.stop_sequences":
        if isinstance(value, str):
            return (value,)
        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return tuple(value) if strings and value else None
    if attribute == "gen_ai.request.reasoning.level":
        return value if isinstance(value, str) and value else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if attribute not in _INTEGERS or isinstance(value, int) else None


def _output_type(settings: Mapping[str, Any], fields: Mapping[str, Any]) -> str | None:
    """gen_ai.output.type: `json` when the request asks for structured output, `text` when it asks for text."""
    for value in (
        settings.get("response_format"),
        *(_at(fields, path) for path in _FORMATS),
    ):
        kind = value.get("type") if isinstance(value, Mapping) else value
        if isinstance(kind, str) and kind.startswith("json"):
            return "json"
        if kind == "text":
            return "text"
        if isinstance(value, Mapping) and (kind == "object" or "properties" in value):
            return "json"  # a bare JSON Schema (Ollama's format, Gemini's responseJsonSchema)
    for path in _MIME_TYPES:
        mime = _at(fields, path)
        if mime == "application/json":
            return "json"
        if mime == "text/plain":
            return "text"
    return None


def request_attributes(extras: Any, wire: str | None, provider: str) -> dict[str, Any]:
    """The request attributes a request's extras state (its settings), in the conventions' names."""
    extras = extras if isinstance(extras, Mapping) else {}
    settings = extras.get("settings")
    settings = settings if isinstance(settings, Mapping) else {}
    own = extras.get(wire) if wire else None
    fields = own.get("fields") if isinstance(own, Mapping) else None
    fields = fields if isinstance(fields, Mapping) else {}
    out: dict[str, Any] = {}
    for key, attribute in _PORTABLE.items():
        value = _value(attribute, settings.get(key))
        if value is not None:
            out[attribute] = value
    for attribute, paths in _FIELDS.items():
        for path in paths:
            value = _value(attribute, _at(fields, path))
            if value is not None:
                out.setdefault(attribute, value)
                break
    if out.get("gen_ai.request.choice.count") == 1:
        # Recorded only when not the default, as the conventions ask.
        del out["gen_ai.request.choice.count"]
    output = _output_type(settings, fields)
    if output is not None:
        out["gen_ai.output.type"] = output
    if provider == "openai":
        out.update(_openai_request(settings, fields, wire))
    return out


def _openai_request(
    settings: Mapping[str, Any], fields: Mapping[str, Any], wire: str | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    api = _OPENAI_APIS.get(wire or "")
    if api is not None:
        out["openai.api.type"] = api
    given = (
        settings.get("service_tier"),
        fields.get("service_tier"),
        fields.get("serviceTier"),
    )
    tier = next((value for value in given if value), None)
    if isinstance(tier, str) and tier != "auto":
        out["openai.request.service_tier"] = tier
    return out


def usage_attributes(usage: Any, agent: bool = False) -> dict[str, int]:
    """The usage attributes of a canonical usage dict (counts only); an `agent` span's leave reasoning out,
    which the conventions define for inference spans only."""
    if not isinstance(usage, Mapping):
        return {}
    return {
        attribute: usage[key]
        for key, attribute in USAGE.items()
        if isinstance(usage.get(key), int)
        and not isinstance(usage[key], bool)
        and not (agent and key == "reasoning_tokens")
    }


def response_attributes(
    response: Any, wire: str | None, provider: str
) -> dict[str, Any]:
    """Provider-specific attributes of a response: OpenAI's service tier and system fingerprint."""
    if provider != "openai" or not wire:
        return {}
    extras = getattr(response, "extras", None)
    kept = extras.get(wire) if isinstance(extras, Mapping) else None
    fields = kept.get("fields") if isinstance(kept, Mapping) else None
    if not isinstance(fields, Mapping):
        return {}
    out = {}
    for attribute, keys in (
        (
            "openai.response.system_fingerprint",
            ("system_fingerprint", "systemFingerprint"),
        ),
        ("openai.response.service_tier", ("service_tier", "serviceTier")),
    ):
        value = next(
            (fields[key] for key in keys if isinstance(fields.get(key), str)), None
        )
        if value:
            out[attribute] = value
    return out
