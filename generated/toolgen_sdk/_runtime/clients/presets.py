# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Servers by name: OpenAI-compatible vendors, Azure OpenAI and Vertex AI, each one data row of the table below.

A row says which wire the server speaks, its base URL (with `{variables}` filled from arguments, the environment
or defaults), the variable holding its key, how the key is sent, and its known quirks as data: body fields it
refuses or spells otherwise. `preset_model("groq", "llama-3.3-70b-versatile")` is an HTTPModel for that row.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ..wires.table import wire as wire_row
from .auth import google_token
from .http import HTTPModel


@dataclass(frozen=True)
class Variable:
    """A `{name}` in a preset's base URL: from `variables=`, else the environment variable, else the default."""

    name: str
    environment: str | None = None
    # May itself be `{model}`: Azure deployments are often named after their model.
    default: str | None = None


@dataclass(frozen=True)
class Preset:
    """One server: its wire, base URL, key and quirks."""

    name: str
    title: str
    wire: str
    base_url: str
    key_variable: str | None
    # Where a key goes when not where the wire's route puts it: "bearer" or a header name.
    auth: str | None = None
    key_required: bool = True
    # "google": without a key or token, a bearer token from google-auth's default credentials.
    token_from: str | None = None
    variables: tuple[Variable, ...] = ()
    omit: tuple[str, ...] = ()
    rename: tuple[tuple[str, str], ...] = ()
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    note: str = ""


# Older OpenAI-compatible servers know the output limit only by its first name.
_MAX_TOKENS = (("max_completion_tokens", "max_tokens"),)
_AZURE_ENDPOINT = Variable("endpoint", "AZURE_OPENAI_ENDPOINT")

PRESETS: tuple[Preset, ...] = (
    Preset(
        "azure",
        "Azure OpenAI, a deployment (api-version in the URL)",
        "openai-chat",
        "{endpoint}/openai/deployments/{deployment}?api-version={api_version}",
        "AZURE_OPENAI_API_KEY",
        auth="api-key",
        variables=(
            _AZURE_ENDPOINT,
            Variable("deployment", "AZURE_OPENAI_DEPLOYMENT", "{model}"),
            Variable("api_version", "OPENAI_API_VERSION", "2024-10-21"),
        ),
        note="an Entra ID token (token=, a string or a provider) replaces the key",
    ),
    Preset(
        "azure-v1",
        "Azure OpenAI, the v1 API (no api-version)",
        "openai-chat",
        "{endpoint}/openai/v1",
        "AZURE_OPENAI_API_KEY",
        auth="api-key",
        variables=(_AZURE_ENDPOINT,),
        note="an Entra ID token (token=, a string or a provider) replaces the key",
    ),
    Preset(
        "deepseek",
        "DeepSeek",
        "openai-chat",
        "https://api.deepseek.com/v1",
        "DEEPSEEK_API_KEY",
        rename=_MAX_TOKENS,
    ),
    Preset(
        "fireworks",
        "Fireworks AI",
        "openai-chat",
        "https://api.fireworks.ai/inference/v1",
        "FIREWORKS_API_KEY",
        rename=_MAX_TOKENS,
    ),
    Preset(
        "groq",
        "Groq",
        "openai-chat",
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
    ),
    Preset(
        "lmstudio",
        "LM Studio's local server",
        "openai-chat",
        "http://localhost:1234/v1",
        "LM_API_TOKEN",
        key_required=False,
        rename=_MAX_TOKENS,
    ),
    Preset(
        "ollama",
        "Ollama's OpenAI-compatible /v1",
        "openai-chat",
        "http://localhost:11434/v1",
        "OLLAMA_API_KEY",
        key_required=False,
        rename=_MAX_TOKENS,
    ),
    Preset(
        "openrouter",
        "OpenRouter",
        "openai-chat",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        rename=_MAX_TOKENS,
    ),
    Preset(
        "together",
        "Together AI",
        "openai-chat",
        "https://api.together.xyz/v1",
        "TOGETHER_API_KEY",
        rename=_MAX_TOKENS,
    ),
    Preset(
        "vertex",
        "Vertex AI Gemini",
        "gemini",
        "https://{location}-aiplatform.googleapis.com/v1/projects/{project}"
        "/locations/{location}/publishers/google",
        None,
        auth="bearer",
        key_required=False,
        token_from="google",
        variables=(
            Variable("project", "GOOGLE_CLOUD_PROJECT"),
            Variable("location", "GOOGLE_CLOUD_LOCATION", "us-central1"),
        ),
        note="the global location has no regional host: give base_url=https://aiplatform.googleapis.com/...",
    ),
    Preset(
        "vllm",
        "vLLM's OpenAI-compatible server",
        "openai-chat",
        "http://localhost:8000/v1",
        "VLLM_API_KEY",
        key_required=False,
        note="tool calls need the server started with --enable-auto-tool-choice and a --tool-call-parser",
    ),
)

BY_PRESET: Mapping[str, Preset] = MappingProxyType({p.name: p for p in PRESETS})


def preset(name: str) -> Preset:
    """The row named `name`; ValueError naming the choices if none."""
    row = BY_PRESET.get(name)
    if row is None:
        raise ValueError(f"unknown preset {name!r}; one of {', '.join(BY_PRESET)}")
    return row


def preset_url(row: Preset, model: str, variables: Mapping[str, str]) -> str:
    """The row's base URL with its variables filled; ValueError naming the one that has no value."""
    url = row.base_url
    for variable in row.variables:
        value = variables.get(variable.name) or (
            os.environ.get(variable.environment) if variable.environment else None
        )
        value = value or (variable.default or "").replace("{model}", model)
        if not value:
            where = f"set {variable.environment} or " if variable.environment else ""
            raise ValueError(
                f"the {row.name} preset needs its {variable.name}: {where}pass variables={{{variable.name!r}: ...}}"
            )
        url = url.replace("{" + variable.name + "}", value.rstrip("/"))
    return url


def preset_model(
    name: str,
    model: str,
    *,
    api_key: str | None = None,
    token: str | Callable[[], str] | None = None,
    base_url: str | None = None,
    variables: Mapping[str, str] | None = None,
    **options: Any,
) -> HTTPModel:
    """An HTTPModel for the preset `name`: its base URL, its key (api_key=, else its key variable), its quirks."""
    row = preset(name)
    url = base_url or preset_url(row, model, variables or {})
    key = api_key or (os.environ.get(row.key_variable) if row.key_variable else None)
    if token is None and not key and row.token_from == "google":
        token = google_token()
    if token is None and not key and row.key_required:
        raise ValueError(
            f"the {row.name} preset needs an API key: set {row.key_variable} or pass api_key="
        )
    route = wire_row(row.wire).route
    if route is None:
        raise ValueError(
            f"the {row.name} preset names {row.wire}, which has no HTTP route"
        )
    adjusted = replace(
        route,
        base_url=url,
        auth=row.auth or route.auth,
        omit=(*route.omit, *row.omit),
        rename=(*route.rename, *row.rename),
        headers=MappingProxyType({**route.headers, **row.headers}),
    )
    return HTTPModel(
        url, model, wire=row.wire, api_key=key, token=token, route=adjusted, **options
    )
