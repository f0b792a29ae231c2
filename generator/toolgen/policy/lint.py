"""Lint stage: provider-compatibility rules over the tool definitions, found at build time instead of request time.

The rules and the providers they apply to are in RULES; each finding names its rule, the provider and the
place in the source file. Sources for each limit:

- tool names: OpenAI (function name: a-z, A-Z, 0-9, underscores and dashes, at most 64), Anthropic
  (`^[a-zA-Z0-9_-]{1,64}$`), Bedrock (ToolSpecification name `[a-zA-Z0-9_-]+`, 1-64), Mistral and Ollama
  (OpenAI-compatible), Gemini (FunctionDeclaration name: letters, digits, underscores, colons, dots and
  dashes, at most 64), MCP (1-128 characters of letters, digits, `_`, `-`, `.`);
- the root of an input schema: OpenAI refuses anyOf, oneOf, allOf, enum and not there ("schema must have type
  'object' and not have ... at the top level"), Anthropic (and Bedrock, which hands Claude the schema) anyOf,
  oneOf and allOf; export merges them into one object (runtime/wires/export_root.py), a warning saying so;
- OpenAI strict mode (Structured Outputs, supported schemas) and Gemini's `FunctionDeclaration.parameters`
  Schema ("a select subset of an OpenAPI 3.0 schema object"): the rules are runtime/schema/fit.py's, the
  rewrites export makes. What export rewrites by itself is a warning saying what it will do; what it cannot
  rewrite (allOf or not in strict mode, a recursive $ref in Gemini's subset) is an error, since export then sends
  the tool with strict: false or as parametersJsonSchema; a dropped annotation, which changes nothing the model
  may send, is export's note alone (a rule `note_only`);
- description length: OpenAI refuses a function description over 1024 characters (error code
  `string_above_max_length` on `tools[N].function.description`);
- patterns, for every provider: nested quantifiers a backtracking engine can take exponential time on, and
  patterns toolgen's bounded checks cannot read (lint_patterns.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.positions import Pointer
from toolgen.policy.lint_patterns import BACKTRACKING, UNCHECKED, pattern_findings
from toolgen.project.config import canonical_provider
from toolgen.runtime import MCP, FitTarget, LintRules, Unfit, fit_input_schema, target_names, wire
from toolgen.source.shapes import RawTool

# Every provider `toolgen lint` knows: the wires of the runtime's table (aliases accepted) and MCP.
PROVIDERS = target_names()
# A provider's refused root composition, merged into one object by export (runtime/wires/export_root.py), and
# every root keyword some provider refuses: a schema with none of them needs no look.
ROOT_RULE = "root-composition"
_ROOT_KEYWORDS = ("anyOf", "oneOf", "allOf", "enum", "not")
# MCP's tool names (its tools/list has no wire row).
_MCP_RULES = LintRules(r"^[a-zA-Z0-9_.-]{1,128}$", "1-128 letters, digits, '_', '.' or '-'")


def provider_rules(provider: str) -> LintRules:
    """The lint rules of a provider named as the table names it, or by one of its aliases."""
    return _MCP_RULES if provider == MCP else wire(provider).lint


def _function_pattern() -> str:
    """The function-name rule most providers share (OpenAI Chat's)."""
    return wire("openai-chat").lint.name_pattern


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    # A rewrite that changes nothing the model may send: export's note says so, lint does not (a warning for
    # every `$schema` would bury the findings that matter, and fail `--fail-on warning`).
    note_only: bool = False


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
            # Schema-subset rules: a warning where export rewrites the schema, an error where it cannot.
            Rule(
                "openai-strict-additional-properties",
                Severity.ERROR,
                "strict mode needs additionalProperties: false on every object",
            ),
            Rule("openai-strict-required", Severity.ERROR, "strict mode needs every property in required"),
            Rule("openai-strict-keyword", Severity.ERROR, "strict mode does not support this keyword"),
            Rule(
                ROOT_RULE,
                Severity.WARNING,
                "the provider refuses this composition at the input schema's root; export merges it into one object",
            ),
            Rule("description-length", Severity.ERROR, "the tool description is longer than the provider accepts"),
            Rule("gemini-ref", Severity.ERROR, "Gemini's parameters subset has no $ref or $defs; refs must be inlined"),
            Rule("gemini-type", Severity.ERROR, "Gemini's parameters subset takes one type name and string enums only"),
            Rule("gemini-composition", Severity.ERROR, "Gemini's parameters subset has anyOf, but no oneOf or allOf"),
            Rule("gemini-keyword", Severity.WARNING, "Gemini's parameters subset has no such keyword"),
            Rule(
                "gemini-required",
                Severity.ERROR,
                "Gemini's parameters subset refuses a required name its properties do not define",
            ),
            Rule(
                "gemini-root",
                Severity.ERROR,
                "Gemini's parameters must list the arguments as properties; a root without them that still "
                "constrains them cannot be parameters",
            ),
            Rule(
                "gemini-items",
                Severity.WARNING,
                "Gemini's parameters subset needs items on an array; export adds items: {}, which is what no items means",
                note_only=True,
            ),
            Rule(
                "gemini-annotation",
                Severity.WARNING,
                "Gemini's parameters subset has no such annotation ($schema, readOnly...); export drops it",
                note_only=True,
            ),
            Rule(
                BACKTRACKING,
                Severity.WARNING,
                "a pattern with nested quantifiers: exponential time in a backtracking regex engine",
            ),
            Rule(UNCHECKED, Severity.WARNING, "a pattern toolgen's bounded checks cannot read"),
        )
    }
)


def _finding(
    raw: RawTool,
    pointer: Pointer,
    rule: str,
    provider: str,
    message: str,
    *,
    at_key: bool = False,
    severity: Severity | None = None,
) -> Diagnostic:
    """A finding at the value `pointer` names, or at its key (a property's or keyword's name) when asked."""
    place = raw.document.key_diagnostic if at_key else raw.document.diagnostic
    return place(pointer, rule, f"[{provider}] {message}", severity or RULES[rule].severity)


def _name_findings(raw: RawTool, rules: LintRules, providers: str) -> Iterator[Diagnostic]:
    name = str(raw.value("name"))
    if not re.match(rules.name_pattern, name):
        message = f"tool name {name!r} must be {rules.name_wanted}"
        yield _finding(raw, raw.where("name"), "name-pattern", providers, message)


def _tokens(pointer: str) -> Pointer:
    return tuple(token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:])


# What export does when a subset cannot express a tool, said in the error.
_FALLBACK: Mapping[str, str] = MappingProxyType(
    {
        "strict": "strict mode cannot express this ({reason}); export sends the tool with strict: false",
        "gemini": "`parameters` cannot express this ({reason}); export sends the tool as parametersJsonSchema",
    }
)


def fit_findings(raw: RawTool, definition: Mapping[str, Any], target: FitTarget, tag: str) -> Iterator[Diagnostic]:
    """What export does to fit the tool into `target`'s subset: each rewrite a warning (but a note-only rule's),
    a refusal an error.

    The rewrites are export's own (`fit_input_schema`), so lint and export cannot disagree on what is fixed. They
    are placed at the subschema in the file; a place that only exists once refs are bundled falls back to the
    nearest place that is written.
    """
    base = raw.where("inputSchema")
    try:
        _, rewrites = fit_input_schema(definition, target)
    except Unfit as unfit:
        message = _FALLBACK[target].format(reason=unfit.reason)
        yield _finding(raw, (*base, *_tokens(unfit.pointer)), unfit.rule, tag, message, at_key=True)
        return
    for rewrite in rewrites:
        # The root merge is its own finding (root_findings), for every provider that refuses the root as written.
        if RULES[rewrite.rule].note_only or rewrite.rule == ROOT_RULE:
            continue
        message = f"export rewrites this: {rewrite.text}"
        where = (*base, *_tokens(rewrite.pointer), *((rewrite.keyword,) if rewrite.keyword else ()))
        yield _finding(raw, where, rewrite.rule, tag, message, at_key=bool(rewrite.keyword), severity=Severity.WARNING)


def root_findings(raw: RawTool, definition: Mapping[str, Any], providers: Iterable[str]) -> Iterator[Diagnostic]:
    """A warning at each root keyword a provider refuses, saying what its export makes of it; one per group of
    providers whose exports say the same."""
    schema = definition.get("inputSchema")
    if not isinstance(schema, Mapping) or not any(key in schema for key in _ROOT_KEYWORDS):
        return
    said: dict[tuple[Any, ...], list[str]] = {}
    for provider in providers:
        _, rewrites = fit_input_schema(definition, "root", provider)
        for rewrite in rewrites:
            said.setdefault((rewrite.keyword, rewrite.text), []).append(provider)
    base = raw.where("inputSchema")
    for (keyword, text), names in said.items():
        message = f"export rewrites this: {text}"
        yield _finding(raw, (*base, keyword), ROOT_RULE, ", ".join(names), message, at_key=True)


def _description_findings(
    raw: RawTool, definition: Mapping[str, Any], limit: int, providers: str
) -> Iterator[Diagnostic]:
    # What the provider is sent: meta that describeMeta folds in counts too.
    from toolgen.runtime import described

    description = described(definition)
    if isinstance(description, str) and len(description) > limit:
        folded = " (meta folded in by describeMeta)" if description != raw.value("description") else ""
        message = f"description{folded} has {len(description)} characters; {providers} accepts at most {limit}"
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
    sources: Iterable[tuple[RawTool, Mapping[str, Any]]],
    providers: Iterable[str] = PROVIDERS,
    *,
    gemini_subset: bool = False,
    strict: bool = False,
) -> list[Diagnostic]:
    """Every finding for every tool under each provider's rules, sorted by place.

    Each source is a tool as written and its canonical definition, as export takes it. Providers are named as
    the table of wires names them (aliases accepted) or `mcp`. Strict-mode rules apply to tools declaring
    `strict: true`, or all with `strict` (export.strict). Gemini's schema-subset rules apply with
    `gemini_subset`: only the `parameters` field has that subset, while `parametersJsonSchema` (export's
    default) takes JSON Schema as written.
    """
    chosen = sorted({canonical_provider(p) for p in providers})
    names = _grouped(chosen, lambda rules: (rules.name_pattern, rules.name_wanted))
    strict_tags = _grouped(chosen, lambda rules: rules.strict_mode)
    limits = _grouped(chosen, lambda rules: rules.description_limit)
    subset = _grouped(chosen, lambda rules: rules.gemini_subset) if gemini_subset else {}
    wires = [p for p in chosen if p != MCP]
    # Names that differ only in what a function-name rule would replace collide for those providers.
    normalizing = ", ".join(p for p in chosen if provider_rules(p).name_pattern == _function_pattern())
    findings: list[Diagnostic] = []
    seen: dict[str, RawTool] = {}
    for raw, definition in sources:
        if not raw.value("description"):
            findings.append(
                raw.document.diagnostic(
                    raw.where("name"), "description-missing", "tool has no description", Severity.WARNING
                )
            )
        for (pattern, wanted), tag in names.items():
            findings.extend(_name_findings(raw, LintRules(pattern, wanted), tag))
        findings.extend(pattern_findings(raw))
        for limit, tag in limits.items():
            findings.extend(_description_findings(raw, definition, limit, tag))
        findings.extend(root_findings(raw, definition, wires))
        if strict or definition.get("strict") is True:
            for tag in strict_tags.values():
                findings.extend(fit_findings(raw, definition, "strict", tag))
        for tag in subset.values():
            findings.extend(fit_findings(raw, definition, "gemini", tag))
        key = _normalized(str(raw.value("name")))
        other = seen.get(key)
        if other is not None and other.value("name") != raw.value("name") and normalizing:
            message = f"tool names {other.value('name')!r} and {raw.value('name')!r} both become {key!r}"
            findings.append(_finding(raw, raw.where("name"), "name-duplicate-normalized", normalizing, message))
        seen.setdefault(key, raw)
    return sorted(set(findings))
