"""Lint and export the tooldefs corpus: per provider, how many definitions it would reject as written and after export."""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.projects import REPO_ROOT
from support.tooldefs_build import _chunks, _tool_index, _write_project, distinct_definitions
from toolgen.core.errors import InvalidInputError
from toolgen.ir.lower import lower
from toolgen.policy.build_lint import definition as _definition
from toolgen.policy.lint import canonical_provider, fit_findings, lint
from toolgen.project.config import load_config
from toolgen.runtime.schema.fit import GEMINI_KEYWORDS, Unfit, gemini_schema, strict_schema
from toolgen.runtime.wires.export import export_tools

# What the table of docs/reference/lint.md lists: a provider's request format, and which lint rules and export rewrite stand for it.
TARGETS = (
    "openai",
    "openai (strict)",
    "anthropic",
    "bedrock",
    "gemini (parametersJsonSchema)",
    "gemini (parameters subset)",
    "mistral",
    "ollama",
    "mcp",
)
_NAME_ONLY = {"anthropic": "anthropic", "bedrock": "bedrock", "mistral": "mistral", "ollama": "ollama", "mcp": "mcp"}


@dataclass(frozen=True)
class Verdict:
    """For one definition that builds: per target, the rules it breaks as written (lint's errors, and the warnings
    for what export rewrites), the rules lint calls errors (what export cannot fix), and whether export makes it fit.
    """

    key: int
    written: dict[str, tuple[str, ...]]
    after_export: dict[str, bool]
    problems: tuple[str, ...] = ()
    refused: dict[str, tuple[str, ...]] | None = None


def _tagged(message: str, provider: str) -> bool:
    """Whether a finding's `[a, b, ...]` tag names the provider: providers sharing a rule share one finding."""
    tag = message[1 : message.find("]")] if message.startswith("[") else ""
    return canonical_provider(provider) in tag.split(", ")


def _rules(findings: Sequence[Any], provider: str, *, errors_only: bool = False) -> tuple[str, ...]:
    # Duplicate names depend on which tools are offered together, not on the definition itself; a warning with a
    # provider's tag is a rewrite export makes because the provider refuses the schema as written.
    return tuple(
        sorted(
            {
                f.rule
                for f in findings
                if (f.severity.value == "error" or not errors_only)
                and _tagged(f.message, provider)
                and f.rule != "name-duplicate-normalized"
            }
        )
    )


def _subschemas(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.append(node)
            stack.extend(node.get("properties", {}).values())
            stack.extend(node.get("anyOf", []))
            stack.extend(sub for key in ("items",) if isinstance(sub := node.get(key), dict))
            stack.extend(node.get("$defs", {}).values())
    return found


def _strict_problems(schema: dict[str, Any]) -> list[str]:
    """Where an export said to be strict still breaks a strict-mode rule."""
    return [
        f"strict object not closed or not all-required: {sorted(node)}"
        for node in _subschemas(schema)
        if "properties" in node
        and (node.get("additionalProperties") is not False or node.get("required") != list(node["properties"]))
    ]


def _gemini_problems(schema: dict[str, Any]) -> list[str]:
    """Where an export said to fit Gemini's `parameters` subset still uses a keyword outside it."""
    return [
        f"keyword outside Gemini's subset: {sorted(set(node) - GEMINI_KEYWORDS)}"
        for node in _subschemas(schema)
        if set(node) - GEMINI_KEYWORDS
    ]


def _fits(rewrite: Any, schema: Any, invariants: Any, problems: list[str]) -> bool:
    try:
        rewritten, _ = rewrite(schema)
    except Unfit:
        return False
    problems.extend(invariants(rewritten))
    return True


def _verdicts(lowered: Any) -> dict[int, Verdict]:
    definitions = [_definition(tool) for tool in lowered.project.tools]
    sources = [(raw, definition) for (raw, _), definition in zip(lowered.sources, definitions, strict=True)]
    findings = lint(sources, gemini_subset=True)
    by_tool: dict[int, list[Any]] = {}
    for finding in findings:
        index = _tool_index(finding.pointer)
        if index is not None:
            by_tool.setdefault(index, []).append(finding)
    verdicts: dict[int, Verdict] = {}
    for (raw, definition), tool in zip(sources, lowered.project.tools, strict=True):
        index = _tool_index("/".join(("", *raw.pointer)))
        assert index is not None
        mine = by_tool.get(index, [])
        names = tuple(r for r in _rules(mine, "openai") if not r.startswith("openai-strict"))
        gemini_names = tuple(r for r in _rules(mine, "gemini") if r == "name-pattern")
        parameters = export_tools([_definition(tool)], "openai").tools[0]["function"]["parameters"]
        strict_found = list(fit_findings(raw, definition, "strict", "openai-chat"))
        strict_written = tuple(sorted({f.rule for f in strict_found}))
        strict_refused = tuple(sorted({f.rule for f in strict_found if f.severity.value == "error"}))
        written = {
            "openai": names,
            "openai (strict)": tuple(sorted({*names, *strict_written})),
            "gemini (parametersJsonSchema)": gemini_names,
            "gemini (parameters subset)": _rules(mine, "gemini"),
            **{target: _rules(mine, provider) for target, provider in _NAME_ONLY.items()},
        }
        after = {target: not rules for target, rules in written.items()}
        problems: list[str] = []
        after["openai (strict)"] = not names and _fits(strict_schema, parameters, _strict_problems, problems)
        fits_gemini = _fits(gemini_schema, parameters, _gemini_problems, problems)
        after["gemini (parameters subset)"] = not gemini_names and fits_gemini
        refused = {
            "openai (strict)": tuple(sorted({*names, *strict_refused})),
            "gemini (parameters subset)": _rules(mine, "gemini", errors_only=True),
        }
        verdicts[index] = Verdict(index, written, after, tuple(problems), refused)
    return verdicts


def lint_chunk(job: tuple[int, list[dict[str, Any]]]) -> dict[int, Verdict]:
    """Verdicts for the definitions of one chunk that build; the ones the build rejects are left out."""
    number, defs = job
    with tempfile.TemporaryDirectory(prefix="tooldefs-lint-") as scratch:
        root = Path(scratch)
        _write_project(root, f"corpus_lint_{number}", defs, True)
        try:
            lowered = lower(load_config(root))
            kept = list(range(len(defs)))
        except InvalidInputError as error:
            rejected = {_tool_index(d.pointer) for d in error.diagnostics if d.severity.value == "error"}
            kept = [i for i in range(len(defs)) if i not in rejected]
            _write_project(root, f"corpus_lint_{number}", (defs[i] for i in kept), True)
            lowered = lower(load_config(root))
        verdicts = _verdicts(lowered)
    return {kept[i]: verdict for i, verdict in verdicts.items()}


def lint_corpus(defs: Sequence[dict[str, Any]], workers: int = 2) -> dict[int, Verdict]:
    """A verdict for every corpus definition that builds with `normalize: [types, shapes]`, keyed by its index."""
    chunks = _chunks(defs)
    jobs = [(n, [defs[i] for i in indexes]) for n, indexes in enumerate(chunks)]
    verdicts: dict[int, Verdict] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for indexes, results in zip(chunks, pool.map(lint_chunk, jobs), strict=True):
            verdicts.update({indexes[i]: v for i, v in results.items()})
    return verdicts


def markdown_report(root: Path) -> str:
    """The table of docs/reference/lint.md: per provider format, rejected as written (by rule) and passing after export's rewrite."""
    defs = [raw for _, raw in distinct_definitions(root)]
    verdicts = lint_corpus(defs)
    lines = [
        f"Of {len(defs)} distinct definitions, {len(verdicts)} build (with `normalize: [types, shapes]`) and are checked.",
        "",
        "| provider format | rejected as written | rules (definitions) | pass after `toolgen export` |",
        "| --- | --- | --- | --- |",
    ]
    for target in TARGETS:
        rejected = [v for v in verdicts.values() if v.written[target]]
        rules = Counter(rule for v in rejected for rule in v.written[target])
        listed = ", ".join(f"{rule} ({count})" for rule, count in sorted(rules.items())) or "none"
        passing = sum(v.after_export[target] for v in verdicts.values())
        lines.append(f"| {target} | {len(rejected)} | {listed} | {passing} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_report(REPO_ROOT.parent / "shared" / "tooldefs"))
