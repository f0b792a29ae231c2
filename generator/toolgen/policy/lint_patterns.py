"""Lint rules for a tool's `pattern`s: what a backtracking regex engine can take exponential time on, and what
toolgen's own bounded checks cannot read.

toolgen matches patterns with Rust's linear-time regex, or a backtracker with a memory and a deadline
(runtime/schema/patterns.py), so its checks stay bounded; the same schema is also read by providers, MCP clients
and other validators, many of which backtrack (Python's re, most ECMA-262 engines). A repeat inside a repeat
(`(a+)+`, `(\\w+\\s?)+$`), a repeat of something that can match nothing (`(a?)+`) and a repeat of a choice whose
options can match alike (`(a|a)*`) take exponential time there on a long string that almost matches.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.positions import Pointer, pointer_text
from toolgen.runtime import pattern_problem, pattern_risk
from toolgen.source.schemawalk import walk
from toolgen.source.shapes import RawTool

BACKTRACKING = "pattern-backtracking"
UNCHECKED = "pattern-unchecked"


def _patterns(schema: Any) -> Iterator[tuple[Pointer, str, bool]]:
    """Every `pattern` (at its value) and `patternProperties` key (at the key) in `schema`, with its pointer."""
    for sub, pointer in walk(schema):
        if not isinstance(sub, dict):
            continue
        if isinstance(sub.get("pattern"), str):
            yield (*pointer, "pattern"), sub["pattern"], False
        if isinstance(sub.get("patternProperties"), dict):
            for key in sub["patternProperties"]:
                if isinstance(key, str):
                    yield (*pointer, "patternProperties", key), key, True


def pattern_findings(raw: RawTool) -> Iterator[Diagnostic]:
    """A warning for each pattern of the tool's input and output schemas a backtracking engine may take
    exponential time on, and for each toolgen's checks cannot read (every value is then reported unchecked)."""
    for field in ("inputSchema", "outputSchema"):
        schema = raw.value(field)
        if not isinstance(schema, dict):
            continue
        base = raw.where(field)
        for relative, pattern, at_key in _patterns(schema):
            pointer = (*base, *relative)
            place = raw.document.key_diagnostic if at_key else raw.document.diagnostic
            risk = pattern_risk(pattern)
            if risk is not None:
                message = (
                    f"pattern '{pattern}' at {pointer_text(pointer)} has {risk}: a backtracking regex engine "
                    "(Python's re, most ECMA-262 ones) can take exponential time on a long string that almost "
                    "matches; toolgen's own checks stay bounded, other validators of this schema may not"
                )
                yield place(pointer, BACKTRACKING, message, Severity.WARNING)
            problem = pattern_problem(pattern)
            if problem is not None:
                message = f"at {pointer_text(pointer)}: {problem}; every value it applies to is reported unchecked"
                yield place(pointer, UNCHECKED, message, Severity.WARNING)
