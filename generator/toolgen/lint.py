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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolgen.diagnostics import Diagnostic, Severity
from toolgen.positions import Pointer
from toolgen.runtime import GEMINI_KEYWORDS, MCP, STRICT_UNSUPPORTED, LintRules, canonical_name, target_names, wire
from toolgen.schemawalk import walk
from toolgen.shapes import RawTool

# Every provider `toolgen lint` knows: the wires of the runtime's table (aliases accepted) and MCP.
PROVIDERS = target_names()
# MCP's tool names (its tools/list has no wire row).
_MCP_RULES = LintRules(r"^[a-zA-Z0-9_.-]{1,128}$", "1-128 letters, digits, '_', '.' or '-'")


def provider_rules(provider: str) -> LintRules:
    """The lint rules of a provider named as the table names it, or by one of its aliases."""
    return _MCP_RULES if provider == MCP else wire(provider).lint


def _function_pattern() -> str:
    """The function-name rule most providers share (OpenAI Chat's)."""
    return wire("openai-chat").lint.name_pattern


def canonical_provider(provider: str) -> str:
    """`openai` -> `openai-chat`: the table's own name for a provider; ValueError for an unknown one."""
    return MCP if provider == MCP else canonical_name(provider)


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


def _name_findings(raw: RawTool, rules: LintRules, providers: str) -> Iterator[Diagnostic]:
    name = str(raw.value("name"))
    if not re.match(rules.name_pattern, name):
        message = f"tool name {name!r} must be {rules.name_wanted}"
        yield _finding(raw, raw.where("name"), "name-pattern", providers, message)


def _strict_findings(raw: RawTool, schema: Any, providers: str = "openai-chat") -> Iterator[Diagnostic]:
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
                    providers,
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
                    providers,
                    "this object must set additionalProperties: false",
                )
            if isinstance(properties, dict):
                listed = sub.get("required")
                required: list[Any] = listed if isinstance(listed, list) else []
                for key in properties:
                    if key not in required:
                        message = f"property {key!r} must be required (make it nullable to keep it optional)"
                        pointer = (*where, "properties", key)
                        yield _finding(raw, pointer, "openai-strict-required", providers, message, at_key=True)


def _gemini_findings(raw: RawTool, schema: Any, providers: str) -> Iterator[Diagnostic]:
    base = raw.where("inputSchema")
    for sub, pointer in walk(schema):
        if not isinstance(sub, dict):
            continue
        where = (*base, *pointer)
        for keyword, value in sub.items():
            rule, message = _gemini_problem(keyword, value)
            if rule:
                yield _finding(raw, (*where, keyword), rule, providers, message, at_key=True)


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


def _description_findings(raw: RawTool, limit: int, providers: str) -> Iterator[Diagnostic]:
    description = raw.value("description")
    if isinstance(description, str) and len(description) > limit:
        message = f"description has {len(description)} characters; {providers} accepts at most {limit}"
        yield _finding(raw, raw.where("description"), "description-length", providers, message)


def _normalized(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64]


def _grouped(chosen: Iterable[str], key: Callable[[LintRules], Any]) -> dict[Any, str]:
    """Providers sharing one rule, joined for the finding's tag: one finding per rule, not per provider."""
    groups: dict[Any, list[str]] = {}
    for provider in chosen:
        value = key(provider_rules(provider))
        if value:
            groups.setdefault(value, []).append(provider)
    return {value: ", ".join(names) for value, names in groups.items()}


def lint(
    sources: Iterable[tuple[RawTool, Any]], providers: Iterable[str] = PROVIDERS, *, gemini_subset: bool = False
) -> list[Diagnostic]:
    """Every finding for every tool under each provider's rules, sorted by place.

    Providers are named as the table of wires names them (aliases accepted) or `mcp`. Gemini's schema-subset
    rules apply with `gemini_subset`: only the `parameters` field has that subset, while
    `parametersJsonSchema` (export's default) takes JSON Schema as written.
    """
    chosen = sorted({canonical_provider(p) for p in providers})
    names = _grouped(chosen, lambda rules: (rules.name_pattern, rules.name_wanted))
    strict = _grouped(chosen, lambda rules: rules.strict_mode)
    limits = _grouped(chosen, lambda rules: rules.description_limit)
    subset = _grouped(chosen, lambda rules: rules.gemini_subset) if gemini_subset else {}
    # Names that differ only in what a function-name rule would replace collide for those providers.
    normalizing = ", ".join(p for p in chosen if provider_rules(p).name_pattern == _function_pattern())
    findings: list[Diagnostic] = []
    seen: dict[str, RawTool] = {}
    for raw, schema in sources:
        if not raw.value("description"):
            findings.append(
                raw.document.diagnostic(
                    raw.where("name"), "description-missing", "tool has no description", Severity.WARNING
                )
            )
        for (pattern, wanted), tag in names.items():
            findings.extend(_name_findings(raw, LintRules(pattern, wanted), tag))
        for limit, tag in limits.items():
            findings.extend(_description_findings(raw, limit, tag))
        if raw.value("strict") is True:
            for tag in strict.values():
                findings.extend(_strict_findings(raw, schema, tag))
        for tag in subset.values():
            findings.extend(_gemini_findings(raw, schema, tag))
        key = _normalized(str(raw.value("name")))
        other = seen.get(key)
        if other is not None and other.value("name") != raw.value("name") and normalizing:
            message = f"tool names {other.value('name')!r} and {raw.value('name')!r} both become {key!r}"
            findings.append(_finding(raw, raw.where("name"), "name-duplicate-normalized", normalizing, message))
        seen.setdefault(key, raw)
    return sorted(set(findings))
