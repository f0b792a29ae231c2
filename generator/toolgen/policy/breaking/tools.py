"""Breaking changes between two versions of the tools: each tool's own fields, renames, removals and schemas."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from toolgen.core.diagnostics import Diagnostic, Severity, normalized
from toolgen.ir.model import thaw
from toolgen.policy.breaking.alternatives import Place, canonical, show
from toolgen.policy.breaking.rules import RULES
from toolgen.policy.breaking.schemas import schema_changes
from toolgen.policy.breaking.snapshots import ToolSnapshot
from toolgen.source.shapes import RawTool


def _tool_finding(raw: RawTool, key: str, rule: str, message: str) -> Diagnostic:
    """A finding of `rule` at the tool's `key` in its current file."""
    return raw.document.key_diagnostic(raw.where(key), rule, message, RULES[rule].severity)


def _flags(old: ToolSnapshot, new: ToolSnapshot, raw: RawTool, renamed: bool) -> Iterator[Diagnostic]:
    """Changes of the tool's own fields: its generated classes, returnDirect, approval, strict, timeout, texts."""
    name = new.name
    models = [(old.args_model, new.args_model, "arguments")]
    models += [(old.result_model, new.result_model, "result")] if old.result_model and new.result_model else []
    for before, after, what in models:
        if before != after and not renamed:  # a renamed tool's classes are renamed with it
            yield _tool_finding(
                raw, "name", "model-renamed", f"{name}: the generated {what} class is now {after}, was {before}"
            )
    if old.return_direct != new.return_direct:
        where = "to the user, not back to the model" if new.return_direct else "back to the model, not to the user"
        yield _tool_finding(raw, "returnDirect", "return-direct-changed", f"{name}: the result now goes {where}")
    if old.requires_approval != new.requires_approval:
        rule = "requires-approval-added" if new.requires_approval else "requires-approval-removed"
        yield _tool_finding(
            raw, "requiresApproval", rule, f"{name}: requiresApproval is now {str(new.requires_approval).lower()}"
        )
    if (old.strict is True) != (new.strict is True):
        state = "on" if new.strict is True else "off"
        yield _tool_finding(raw, "strict", "strict-changed", f"{name}: OpenAI strict mode is now {state}")
    if old.timeout != new.timeout:
        before, after = (show([t]) if t is not None else "none" for t in (old.timeout, new.timeout))
        yield _tool_finding(raw, "timeout", "timeout-changed", f"{name}: timeout {before} -> {after}")
    for key in ("title", "description"):
        if getattr(old, key) != getattr(new, key):
            yield _tool_finding(raw, key, "description-changed", f"{name}: the tool's {key} changed")


def _schema_changes(old: ToolSnapshot, new: ToolSnapshot, raw: RawTool) -> Iterator[Diagnostic]:
    """A result schema added or removed, and every change inside the input and result schemas."""
    schemas = [(0, "inputSchema", old.input_schema, new.input_schema)]
    if old.output_schema is None and new.output_schema is not None:
        yield _tool_finding(raw, "outputSchema", "result-schema-added", f"{new.name}: the tool now declares its result")
    elif old.output_schema is not None and new.output_schema is None:
        yield _tool_finding(raw, "name", "result-schema-removed", f"{new.name}: the tool no longer declares its result")
    elif old.output_schema is not None and new.output_schema is not None:
        schemas.append((1, "outputSchema", old.output_schema, new.output_schema))
    for direction, key, before, after in schemas:
        where = Place(raw.where(key), raw.value(key))
        yield from schema_changes(direction, new.name, thaw(before), thaw(after), raw.document, where)


def _renames(removed: Sequence[ToolSnapshot], added: Sequence[ToolSnapshot]) -> dict[str, ToolSnapshot]:
    """New tool name -> the removed tool it renames: the only removed and the only added tool with that input schema."""

    def by_schema(tools: Sequence[ToolSnapshot]) -> dict[str, list[ToolSnapshot]]:
        groups: dict[str, list[ToolSnapshot]] = {}
        for tool in tools:
            groups.setdefault(canonical(thaw(tool.input_schema)), []).append(tool)
        return groups

    olds, news = by_schema(removed), by_schema(added)
    return {news[k][0].name: group[0] for k, group in olds.items() if len(group) == 1 and len(news.get(k, ())) == 1}


def breaking_changes(
    old: Sequence[ToolSnapshot], new: Sequence[ToolSnapshot], sources: Iterable[RawTool], label: str
) -> tuple[Diagnostic, ...]:
    """Every change from `old` (the tools at `label`) to `new`, placed in the current files (`sources`).

    Breaking changes are errors, safe ones warnings. A removed tool is placed where it was, as `label:path`.
    """
    raws = {str(raw.value("name")): raw for raw in sources}
    before = {t.name: t for t in old}
    now = {t.name for t in new}
    renames = _renames([t for t in old if t.name not in now], [t for t in new if t.name not in before])
    findings: list[Diagnostic] = []
    for tool in new:
        raw = raws[tool.name]
        previous = before.get(tool.name) or renames.get(tool.name)
        if previous is None:
            findings.append(_tool_finding(raw, "name", "tool-added", f"new tool {tool.name!r}"))
            continue
        if previous.name != tool.name:
            where = f"{label}:{previous.source}:{previous.line}:{previous.col}"
            message = f"tool {previous.name!r} was renamed to {tool.name!r} (same input schema; was at {where})"
            findings.append(_tool_finding(raw, "name", "tool-renamed", message))
        findings.extend(_flags(previous, tool, raw, previous.name != tool.name))
        findings.extend(_schema_changes(previous, tool, raw))
    renamed = {t.name for t in renames.values()}
    for tool in old:
        if tool.name not in now and tool.name not in renamed:
            message = f"tool {tool.name!r} was removed (it was defined here, in {label})"
            findings.append(
                Diagnostic(f"{label}:{tool.source}", tool.line, tool.col, Severity.ERROR, "tool-removed", message)
            )
    return normalized(findings)
