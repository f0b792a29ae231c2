"""How deep a tool's bundled schema nests once its references are followed: the load stage's depth limit holds
through `$ref` too, since the generated models nest as deep as the schemas they follow (and pydantic builds them
recursively: a few hundred levels exhaust Python's stack when the package is imported)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.positions import Pointer
from toolgen.source.load import MAX_DEPTH, Document
from toolgen.source.schemawalk import walk

_PREFIX = "#/$defs/"


def nesting_depth(defs: Mapping[str, Any], name: str, limit: int = MAX_DEPTH) -> int:
    """Levels of mappings and lists below bundled schema `name`, a reference counting as its target written in its
    place; a reference back into its own chain (a recursive schema) counts nothing, as the models refer to
    themselves there. Counting stops past `limit` (or a chain of more than `limit` references, even ones that
    add no level), and then returns `limit` plus one."""
    known: dict[str, int] = {}

    def measure(current: str, start: int, chain: frozenset[str]) -> int:
        if current in chain or current not in defs:
            return start
        if len(chain) > limit:
            return limit + 1
        if current in known:
            return start + known[current]
        deepest = start
        for sub, where in walk(defs[current]):
            level = start + len(where)
            target = sub.get("$ref") if isinstance(sub, dict) else None
            if isinstance(target, str) and target.startswith(_PREFIX) and level <= limit:
                level = measure(target[len(_PREFIX) :], level, chain | {current})
            deepest = max(deepest, level)
            if deepest > limit:
                return limit + 1
        known[current] = deepest - start  # below a cut cycle a lower bound, which recursion makes harmless
        return deepest

    return measure(name, 0, frozenset())


def too_deep(
    defs: Mapping[str, Any], roots: Iterable[str], origins: Mapping[str, tuple[Document, Pointer]]
) -> list[Diagnostic]:
    """An error at each root schema (a tool's input or output) that nests past MAX_DEPTH through its references."""
    found = []
    for name in roots:
        if name in origins and nesting_depth(defs, name) > MAX_DEPTH:
            document, pointer = origins[name]
            message = (
                f"nested deeper than {MAX_DEPTH} levels of mappings and lists once its $ref are followed "
                "(each reference counts as its target written in its place); make the chain of references shorter"
            )
            found.append(document.diagnostic(pointer, "too-deep", message))
    return found
