# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The table of wires: one row per provider wire format, and the one vocabulary of their names.

Detection, codecs, stream states, HTTP clients, tool-definition export, lint and every command line read
this table; nothing else lists the wires. Each wire is a sub-package `wires/<wire>/`: its codec (`codec.py`:
`decode_request`, `encode_request`, `decode_response`, `encode_response`, `encode_error`), its detection
predicates (`detect.py`), and its stream state (`stream.py`: a `WireState` subclass taking the wire's name;
with `stream*.py` beside it, part of the streams layer). Adding a wire is that sub-package and one `Wire` row
below. A module that serves several rows (dialects of one format) lists them in its `WIRES` tuple and takes
`wire=` in each codec function.

Modules are named relative to `wires/`: a codec as "<wire>.codec", a stream state as "<wire>.stream:Class".
Content detection tries the rows' predicates by rank, highest first; the first that names a wire wins.
A predicate is "<wire>.detect:function", taking the body (or a stream payload and its SSE event name) and
returning the wire it recognizes, or None. Detection modules import nothing of the runtime but
`wires/detection.py`, and every package carries them all, so a body of a wire it leaves out is still named.

This module imports nothing of the runtime: reading the table costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# Name rules of the providers' tool definitions, shared by several rows.
_FUNCTION_NAME = (r"^[a-zA-Z0-9_-]{1,64}$", "1-64 letters, digits, '_' or '-'")
_GEMINI_NAME = (
    r"^[a-zA-Z0-9_.:-]{1,64}$",
    "1-64 letters, digits, '_', '.', ':' or '-'",
)


@dataclass(frozen=True)
class Sniff:
    """One content-detection predicate ("module:function") and its rank among the other wires'."""

    where: str
    rank: int


@dataclass(frozen=True)
class Detection:
    """How a body of this wire is recognized; None where another row's predicate covers it."""

    request: Sniff | None = None
    response: Sniff | None = None
    error: Sniff | None = None
    chunk: Sniff | None = None


@dataclass(frozen=True)
class Route:
    """Where and how the wire's HTTP API takes a request; base_url is the official SDK's default.

    base_url may name `{region}` (filled from the client's region); `{model}` in a path is the model, URL-quoted
    with the characters in `model_safe` left as they are.
    """

    base_url: str
    path: str
    # "bearer", "sigv4" (AWS Signature Version 4 when no key is given), or the name of the header that
    # carries the key as it is.
    auth: str
    stream_path: str | None = None
    # What a streamed answer comes as, for the request's accept header.
    stream_accept: str = "text/event-stream"
    # Body fields the endpoint refuses, dropped after encoding (Bedrock takes the model in the path only).
    omit: tuple[str, ...] = ()
    # Body fields the endpoint knows by another name (`max_completion_tokens` -> `max_tokens`), as (ours, its).
    rename: tuple[tuple[str, str], ...] = ()
    model_safe: str = "/"
    stream_fields: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({"stream": True})
    )
    whole_fields: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({})
    )
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class LintRules:
    """What the provider accepts in a tool definition, checked at build time by `toolgen lint`."""

    name_pattern: str
    name_wanted: str
    # OpenAI's strict mode (Structured Outputs): tools with `strict: true` must fit its subset.
    strict_mode: bool = False
    # Gemini's `parameters` OpenAPI subset, when the project exports that field.
    gemini_subset: bool = False
    description_limit: int | None = None


@dataclass(frozen=True)
class Wire:
    """One provider wire format: its names, its modules, its HTTP route and its rules."""

    name: str
    title: str
    # The module under wires/ that converts its bodies ("<wire>.codec"), and "<wire>.stream:Class" of its stream
    # state (None: the wire is not streamed).
    codec: str
    stream: str | None
    # How `toolgen export` writes tool definitions for it (a builder in wires/export.py).
    export: str
    lint: LintRules
    detection: Detection
    aliases: tuple[str, ...] = ()
    # None where the package has no HTTP client for the wire yet.
    route: Route | None = None
    key_variable: str | None = None
    # The stream framing only this wire uses, which names it before any payload does.
    framing: str | None = None

    @property
    def package(self) -> str:
        """The wire's sub-package under wires/ (`openai_chat` for `openai_chat.codec`): one per wire format."""
        return self.codec.partition(".")[0]


ROWS: tuple[Wire, ...] = (
    Wire(
        name="anthropic",
        title="Anthropic Messages",
        codec="anthropic.codec",
        stream="anthropic.stream:AnthropicState",
        export="anthropic",
        lint=LintRules(*_FUNCTION_NAME),
        detection=Detection(
            request=Sniff("anthropic.detect:request", 70),
            response=Sniff("anthropic.detect:response", 40),
            error=Sniff("anthropic.detect:error", 60),
            chunk=Sniff("anthropic.detect:chunk", 70),
        ),
        route=Route(
            "https://api.anthropic.com",
            "/v1/messages",
            "x-api-key",
            headers=MappingProxyType({"anthropic-version": "2023-06-01"}),
        ),
        key_variable="ANTHROPIC_API_KEY",
    ),
    Wire(
        name="bedrock-converse",
        title="Amazon Bedrock Converse",
        codec="bedrock.codec",
        stream="bedrock.stream:BedrockState",
        export="bedrock",
        lint=LintRules(*_FUNCTION_NAME),
        detection=Detection(
            request=Sniff("bedrock.detect:request", 60),
            response=Sniff("bedrock.detect:response", 60),
            chunk=Sniff("bedrock.detect:chunk", 10),
        ),
        aliases=("bedrock",),
        # A key is a Bedrock API key (a bearer token); without one, requests are signed with SigV4.
        route=Route(
            "https://bedrock-runtime.{region}.amazonaws.com",
            "/model/{model}/converse",
            "sigv4",
            stream_path="/model/{model}/converse-stream",
            stream_fields=MappingProxyType({}),
            stream_accept="application/vnd.amazon.eventstream",
            omit=("modelId",),
            # Model ids may be ARNs: their `/` and `:` are quoted like any other character.
            model_safe="",
        ),
        key_variable="AWS_BEARER_TOKEN_BEDROCK",
        framing="eventstream",
    ),
    Wire(
        name="cohere",
        title="Cohere Chat v2",
        codec="cohere.codec",
        stream="cohere.stream:CohereState",
        export="chat-function",
        lint=LintRules(*_FUNCTION_NAME),
        detection=Detection(
            response=Sniff("cohere.detect:response", 10),
            error=Sniff("cohere.detect:error", 10),
            chunk=Sniff("cohere.detect:chunk", 60),
        ),
        route=Route("https://api.cohere.com", "/v2/chat", "bearer"),
        key_variable="CO_API_KEY",
    ),
    Wire(
        name="gemini",
        title="Gemini generateContent",
        codec="gemini.codec",
        stream="gemini.stream:GeminiState",
        export="gemini",
        lint=LintRules(*_GEMINI_NAME, gemini_subset=True),
        detection=Detection(
            request=Sniff("gemini.detect:request", 90),
            response=Sniff("gemini.detect:response", 80),
            error=Sniff("gemini.detect:error", 40),
            chunk=Sniff("gemini.detect:chunk", 30),
        ),
        aliases=("google",),
        route=Route(
            "https://generativelanguage.googleapis.com/v1beta",
            "/models/{model}:generateContent",
            "x-goog-api-key",
            stream_path="/models/{model}:streamGenerateContent?alt=sse",
            stream_fields=MappingProxyType({}),
        ),
        key_variable="GEMINI_API_KEY",
    ),
    Wire(
        name="google-interactions",
        title="Google Interactions",
        codec="interactions.codec",
        stream="interactions.stream:InteractionsState",
        export="interactions",
        lint=LintRules(*_GEMINI_NAME),
        detection=Detection(
            response=Sniff("interactions.detect:response", 30),
            chunk=Sniff("interactions.detect:chunk", 50),
        ),
        aliases=("interactions",),
        key_variable="GEMINI_API_KEY",
    ),
    Wire(
        name="mistral",
        title="Mistral Chat Completions",
        codec="openai_chat.codec",
        stream="openai_chat.stream:OpenAIChatState",
        export="plain-function",
        lint=LintRules(*_FUNCTION_NAME),
        # Its bodies are told from OpenAI's by `openai-chat`'s predicates (see wires/openai_chat/detect.py); its chunks here.
        detection=Detection(
            error=Sniff("openai_chat.detect:mistral_error", 20),
            chunk=Sniff("openai_chat.detect:mistral_chunk", 45),
        ),
        route=Route("https://api.mistral.ai/v1", "/chat/completions", "bearer"),
        key_variable="MISTRAL_API_KEY",
    ),
    Wire(
        name="ollama",
        title="Ollama chat",
        codec="ollama.codec",
        stream="ollama.stream:OllamaState",
        export="plain-function",
        lint=LintRules(*_FUNCTION_NAME),
        detection=Detection(
            response=Sniff("ollama.detect:response", 20),
            error=Sniff("ollama.detect:error", 50),
            chunk=Sniff("ollama.detect:chunk", 20),
        ),
        # Ollama streams unless told not to.
        route=Route(
            "http://localhost:11434",
            "/api/chat",
            "bearer",
            whole_fields=MappingProxyType({"stream": False}),
        ),
        key_variable="OLLAMA_API_KEY",
    ),
    Wire(
        name="openai-chat",
        title="OpenAI Chat Completions",
        codec="openai_chat.codec",
        stream="openai_chat.stream:OpenAIChatState",
        export="chat-function",
        lint=LintRules(*_FUNCTION_NAME, strict_mode=True, description_limit=1024),
        detection=Detection(
            # The fallback for chat-shaped bodies: it also tells the dialects apart.
            request=Sniff("openai_chat.detect:request", 10),
            response=Sniff("openai_chat.detect:response", 70),
            error=Sniff("openai_chat.detect:error", 30),
            chunk=Sniff("openai_chat.detect:chunk", 40),
        ),
        aliases=("openai",),
        route=Route(
            "https://api.openai.com/v1",
            "/chat/completions",
            "bearer",
            stream_fields=MappingProxyType(
                {"stream": True, "stream_options": {"include_usage": True}}
            ),
        ),
        key_variable="OPENAI_API_KEY",
    ),
    Wire(
        name="openai-chat-camel",
        title="Chat Completions in camelCase (SDKs that serialize their own models)",
        codec="openai_chat.codec",
        stream=None,
        export="chat-function",
        lint=LintRules(*_FUNCTION_NAME, strict_mode=True),
        detection=Detection(),
    ),
    Wire(
        name="openai-responses",
        title="OpenAI Responses",
        codec="responses.codec",
        stream="responses.stream:ResponsesState",
        export="responses-function",
        lint=LintRules(*_FUNCTION_NAME, strict_mode=True),
        detection=Detection(
            # Also tells Interactions' `input` bodies apart, which take the same fields.
            request=Sniff("responses.detect:request", 80),
            response=Sniff("responses.detect:response", 50),
            chunk=Sniff("responses.detect:chunk", 80),
        ),
        aliases=("responses",),
        route=Route("https://api.openai.com/v1", "/responses", "bearer"),
        key_variable="OPENAI_API_KEY",
    ),
)

WIRES: tuple[str, ...] = tuple(sorted(row.name for row in ROWS))
# The tool-list format of MCP servers: an export and lint target with no wire of its own.
MCP = "mcp"
BY_NAME: Mapping[str, Wire] = MappingProxyType(
    {
        **{alias: row for row in ROWS for alias in row.aliases},
        **{row.name: row for row in ROWS},
    }
)

# Every name a wire may be called by: the table's names and their aliases.
NAMES: tuple[str, ...] = tuple(sorted(BY_NAME))


def canonical_name(name: str) -> str:
    """The table's name for a wire named `name` or by one of its aliases (`openai` -> `openai-chat`)."""
    row = BY_NAME.get(name)
    if row is None:
        raise ValueError(f"unknown wire {name!r}; one of {', '.join(WIRES)}")
    return row.name


def wire(name: str) -> Wire:
    """The row of the wire named `name` (or one of its aliases); ValueError naming the choices if none."""
    return BY_NAME[canonical_name(name)]


def _shared_modules() -> frozenset[tuple[str, str]]:
    found: dict[tuple[str, str], int] = {}
    for row in ROWS:
        for column in ("codec", "stream"):
            module = getattr(row, column)
            if module is not None:
                found[column, module] = found.get((column, module), 0) + 1
    return frozenset(key for key, count in found.items() if count > 1)


# (column, module) of every codec or stream module that serves more than one row; asked on every decode.
_SHARED = _shared_modules()


def shares_module(row: Wire, column: str) -> bool:
    """Whether another row names the same codec or stream module: its functions then take `wire=`."""
    return (column, getattr(row, column)) in _SHARED


def target_names() -> tuple[str, ...]:
    """Every name export and lint take: the wires and MCP."""
    return tuple(sorted((*WIRES, MCP)))
