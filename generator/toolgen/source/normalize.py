"""Non-standard `type` names (BFCL's dict/float/tuple/any, Java's String/HashMap, Gemini's STRING): found, and
rewritten to JSON Schema types only when the project opts in with `normalize: [types]`; every rewrite is reported."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from toolgen.core.positions import Pointer
from toolgen.source.schemawalk import children, map_children, walk

STANDARD_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})

# Keys are lower-cased; "" and "any" mean "no type constraint".
TYPE_ALIASES: Mapping[str, str | None] = MappingProxyType(
    {
        "dict": "object",
        "map": "object",
        "hashmap": "object",
        "object": "object",
        "float": "number",
        "double": "number",
        "decimal": "number",
        "number": "number",
        "int": "integer",
        "integer": "integer",
        "long": "integer",
        "short": "integer",
        "str": "string",
        "string": "string",
        "char": "string",
        "text": "string",
        "bool": "boolean",
        "boolean": "boolean",
        "list": "array",
        "array": "array",
        "arraylist": "array",
        "tuple": "array",
        "set": "array",
        "null": "null",
        "none": "null",
        "any": None,
        "": None,
    }
)

Report = Callable[[Pointer, str], None]


def _type_names(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def nonstandard_types(schema: Any) -> list[tuple[Pointer, str]]:
    """(pointer to the `type` value, the offending name) for every non-standard type in `schema`."""
    found = []
    for sub, pointer in walk(schema):
        if isinstance(sub, dict) and "type" in sub:
            for index, name in enumerate(_type_names(sub["type"])):
                if isinstance(name, str) and name not in STANDARD_TYPES:
                    where = (*pointer, "type", str(index)) if isinstance(sub["type"], list) else (*pointer, "type")
                    found.append((where, str(name)))
    return found


def suggestion(name: str) -> str:
    """What to do about a non-standard type name, in words."""
    if name.lower() not in TYPE_ALIASES:
        return "no JSON Schema type corresponds to it: use one of " + ", ".join(sorted(STANDARD_TYPES))
    target = TYPE_ALIASES[name.lower()]
    meaning = "no type constraint" if target is None else f"JSON Schema spells it {target!r}"
    return f"{meaning}; fix the schema or set `normalize: [types]` in toolgen.yaml"


def _mapped(names: list[Any]) -> list[str | None] | None:
    """Each name mapped to a standard type (None: unconstrained), or None when some name is unknown."""
    result: list[str | None] = []
    for name in names:
        if not isinstance(name, str) or name.lower() not in TYPE_ALIASES:
            return None
        result.append(name if name in STANDARD_TYPES else TYPE_ALIASES[name.lower()])
    return result


def normalize_types(schema: Any, report: Report) -> Any:
    """`schema` with known non-standard type names mapped; unknown names are left for the checks.

    Only the schemas on the way to a rewrite are copied: an unchanged sub-tree (the whole schema, usually) is
    returned as it came, so nothing is copied where nothing is normalized.
    """
    return _normalized(schema, (), report)


def _normalized(schema: Any, pointer: Pointer, report: Report) -> Any:
    if not isinstance(schema, dict):
        return schema
    result = schema
    if "type" in schema:
        original = schema["type"]
        names = _type_names(original)
        mapped = None if all(isinstance(n, str) and n in STANDARD_TYPES for n in names) else _mapped(names)
        if mapped is not None:
            result = dict(schema)
            if None in mapped:
                del result["type"]
                report((*pointer, "type"), f"type {original!r} normalized to no type constraint")
            else:
                unique = sorted({m for m in mapped if m is not None}, key=mapped.index)
                result["type"] = unique[0] if len(unique) == 1 else unique
                report((*pointer, "type"), f"type {original!r} normalized to {result['type']!r}")
    # Children in the order `walk` visits them, so reports come parents first, in the same order as before.
    replaced = {}
    for sub, relative in children(schema, ()):
        new = _normalized(sub, (*pointer, *relative), report)
        if new is not sub:
            replaced[relative] = new
    if not replaced:
        return result
    return map_children(result, lambda sub, relative: replaced.get(relative, sub))
