"""Lint stage: provider-compatibility rules over the tool definitions, found at build time instead of request time.

The rules and the providers they apply to are in RULES; each finding names its rule, the provider and the
place in the source file. Sources for each limit:

- tool names: OpenAI (function name: a-z, A-Z, 0-9, underscores and dashes, at most 64), Anthropic
  (`^[a-zA-Z0-9_-]{1,64}$`), Bedrock (ToolSpecification name `[a-zA-Z0-9_-]+`, 1-64), Mistral and Ollama
  (OpenAI-compatible), Gemini (FunctionDeclaration name: letters, digits, underscores, colons, dots and
  dashes, at most 64), MCP (1-128 characters of letters, digits, `_`, `-`, `.`);
- OpenAI strict mode (Structured Outputs, supported schemas): every object sets `additionalProperties:
  false`, every property is required, and allOf, not, if/then/else, dependentRequired and
  dependentSchemas are not supported;
- Gemini's `FunctionDeclaration.parameters` Schema, "a select subset of an OpenAPI 3.0 schema object": one
  type name, string enums, anyOf but no oneOf/allOf, no $ref/$defs (see runtime/_schema_fit.py for the list);
- description length: OpenAI refuses a function description over 1024 characters (error code
  `string_above_max_length` on `tools[N].function.description`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolgen.diagnostics import Diagnostic, Severity
from toolgen.positions import Pointer
from toolgen.runtime import GEMINI_KEYWORDS, STRICT_UNSUPPORTED
from toolgen.schemawalk import walk
from toolgen.shapes import RawTool

PROVIDERS = ("anthropic", "bedrock", "gemini", "mcp", "mistral", "ollama", "openai")

_OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
NAME_PATTERNS: Mapping[str, tuple[re.Pattern[str], str]] = MappingProxyType(
    {
        "anthropic": (_OPENAI_NAME, "1-64 letters, digits, '_' or '-'"),
        "bedrock": (_OPENAI_NAME, "1-64 letters, digits, '_' or '-'"),
        "mistral": (_OPENAI_NAME, "1-64 letters, digits, '_' or '-'"),
        "ollama": (_OPENAI_NAME, "1-64 letters, digits, '_' or '-'"),
        "openai": (_OPENAI_NAME, "1-64 letters, digits, '_' or '-'"),
        "gemini": (re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$"), "1-64 letters, digits, '_', '.', ':' or '-'"),
        "mcp": (re.compile(r"^[a-zA-Z0-9_.-]{1,128}$"), "1-128 letters, digits, '_', '.' or '-'"),
    }
)
OPENAI_DESCRIPTION_LIMIT = 1024
# Keywords that only annotate; Gemini's subset has no field for them, and leaving them out changes nothing.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$anchor", "deprecated", "readOnly", "writeOnly"})


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str


RULES: Mapping[str, Rule] = MappingProxyType(
    {
        rule.id: rule
        for rule in (
            Rule("name-pattern", Severity.ERROR, "the tool name has characters or a length the provider refuses"),
            Rule(
                "name-duplicate-normalized",
                Severity.ERROR,
                "two tool names become one once made valid for the provider",
            ),
            Rule(
                "description-missing",
                Severity.WARNING,
                "a tool without a description gives the model nothing to choose by",
            ),
            Rule(
                "openai-strict-additional-properties",
                Severity.ERROR,
                "strict mode needs additionalProperties: false on every object",
            ),
            Rule("openai-strict-required", Severity.ERROR, "strict mode needs every property in required"),
            Rule("openai-strict-keyword", Severity.ERROR, "strict mode does not support this keyword"),
            Rule("description-length", Severity.ERROR, "the tool description is longer than the provider accepts"),
            Rule("gemini-ref", Severity.ERROR, "Gemini's parameters subset has no $ref or $defs; refs must be inlined"),
            Rule("gemini-type", Severity.ERROR, "Gemini's parameters subset takes one type name and string enums only"),
            Rule("gemini-composition", Severity.ERROR, "Gemini's parameters subset has anyOf, but no oneOf or allOf"),
            Rule("gemini-keyword", Severity.ERROR, "Gemini's parameters subset has no such keyword"),
        )
    }
)


def _finding(
    raw: RawTool, pointer: Pointer, rule: str, provider: str, message: str, *, at_key: bool = False
) -> Diagnostic:
    """A finding at the value `pointer` names, or at its key (a property's or keyword's name) when asked."""
    place = raw.document.key_diagnostic if at_key else raw.document.diagnostic
    return place(pointer, rule, f"[{provider}] {message}", RULES[rule].severity)


def _name_findings(raw: RawTool, provider: str) -> Iterator[Diagnostic]:
    pattern, wanted = NAME_PATTERNS[provider]
    name = str(raw.value("name"))
    if not pattern.match(name):
        yield _finding(raw, raw.where("name"), "name-pattern", provider, f"tool name {name!r} must be {wanted}")


def _strict_findings(raw: RawTool, schema: Any) -> Iterator[Diagnostic]:
    base = raw.where("inputSchema")
    for sub, pointer in walk(schema):
        if not isinstance(sub, dict):
            continue
        where = (*base, *pointer)
        for keyword in STRICT_UNSUPPORTED:
            if keyword in sub:
                yield _finding(
                    raw,
                    (*where, keyword),
                    "openai-strict-keyword",
                    "openai",
                    f"{keyword!r} is not supported in strict mode",
                    at_key=True,
                )
        properties = sub.get("properties")
        if sub.get("type") == "object" or isinstance(properties, dict):
            if sub.get("additionalProperties") is not False:
                yield _finding(
                    raw,
                    where,
                    "openai-strict-additional-properties",
                    "openai",
                    "this object must set additionalProperties: false",
                )
            if isinstance(properties, dict):
                listed = sub.get("required")
                required: list[Any] = listed if isinstance(listed, list) else []
                for key in properties:
                    if key not in required:
                        message = f"property {key!r} must be required (make it nullable to keep it optional)"
                        pointer = (*where, "properties", key)
                        yield _finding(raw, pointer, "openai-strict-required", "openai", message, at_key=True)


def _gemini_findings(raw: RawTool, schema: Any) -> Iterator[Diagnostic]:
    base = raw.where("inputSchema")
    for sub, pointer in walk(schema):
        if not isinstance(sub, dict):
            continue
        where = (*base, *pointer)
        for keyword, value in sub.items():
            rule, message = _gemini_problem(keyword, value)
            if rule:
                yield _finding(raw, (*where, keyword), rule, "gemini", message, at_key=True)


def _gemini_problem(keyword: str, value: Any) -> tuple[str, str]:
    """The rule a keyword breaks in Gemini's `parameters` subset and why, or ("", "") when it fits."""
    if keyword in ("$ref", "$defs", "definitions"):
        return (
            "gemini-ref",
            f"{keyword!r} is not supported by `parameters`; inline it (export --gemini-schema openapi does)",
        )
    if keyword in ("oneOf", "allOf"):
        return "gemini-composition", f"{keyword!r} is not supported by `parameters`; only anyOf is"
    if keyword == "type" and not isinstance(value, str):
        return "gemini-type", "`parameters` takes one type name; use nullable: true for a null alternative"
    if keyword == "const":
        return "gemini-type", "'const' is not supported by `parameters`; a one-value string enum is"
    if keyword == "enum" and not all(isinstance(item, str) for item in value or ()):
        return "gemini-type", "`parameters` enums hold strings only"
    if keyword not in GEMINI_KEYWORDS and keyword not in _ANNOTATIONS and keyword not in ("enum", "type"):
        return "gemini-keyword", f"{keyword!r} is not in Gemini's `parameters` schema subset"
    return "", ""


def _description_findings(raw: RawTool) -> Iterator[Diagnostic]:
    description = raw.value("description")
    if isinstance(description, str) and len(description) > OPENAI_DESCRIPTION_LIMIT:
        message = f"description has {len(description)} characters; OpenAI accepts at most {OPENAI_DESCRIPTION_LIMIT}"
        yield _finding(raw, raw.where("description"), "description-length", "openai", message)


def _normalized(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64]


def lint(
    sources: Iterable[tuple[RawTool, Any]], providers: Iterable[str] = PROVIDERS, *, gemini_subset: bool = False
) -> list[Diagnostic]:
    """Every finding for every tool under each provider's rules, sorted by place.

    Gemini's schema-subset rules apply with `gemini_subset`: only the `parameters` field has that subset, while
    `parametersJsonSchema` (export's default) takes JSON Schema as written.
    """
    chosen = [p for p in PROVIDERS if p in set(providers)]
    findings: list[Diagnostic] = []
    seen: dict[str, RawTool] = {}
    for raw, schema in sources:
        if not raw.value("description"):
            findings.append(
                raw.document.diagnostic(
                    raw.where("name"), "description-missing", "tool has no description", Severity.WARNING
                )
            )
        for provider in chosen:
            findings.extend(_name_findings(raw, provider))
        if "openai" in chosen:
            findings.extend(_description_findings(raw))
            if raw.value("strict") is True:
                findings.extend(_strict_findings(raw, schema))
        if "gemini" in chosen and gemini_subset:
            findings.extend(_gemini_findings(raw, schema))
        key = _normalized(str(raw.value("name")))
        other = seen.get(key)
        if (
            other is not None
            and other.value("name") != raw.value("name")
            and any(p in chosen for p in ("openai", "anthropic", "bedrock", "mistral", "ollama"))
        ):
            message = f"tool names {other.value('name')!r} and {raw.value('name')!r} both become {key!r}"
            findings.append(_finding(raw, raw.where("name"), "name-duplicate-normalized", "openai", message))
        seen.setdefault(key, raw)
    return sorted(set(findings))
