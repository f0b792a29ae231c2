# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""ECMA-262 Unicode property escapes (`\\p{Letter}`, `\\P{Lu}`) in schema patterns, spelled as Python character classes.

JSON Schema patterns are ECMA-262 regular expressions with the `u` flag; Python's `re` has no `\\p{...}`. The
General_Category values are translated into explicit code point ranges from this Python's Unicode database, when a
validator is built, so the generated code is the same whichever Python built it. Scripts and binary properties
(`\\p{Script=Greek}`, `\\p{Alphabetic}`) have no table here: `unsupported` names them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .keywords import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_SINGLES, map_subschemas

# General_Category values and their aliases (ECMA-262, table "Value aliases and canonical values for the Unicode
# property General_Category"), each as the two-letter categories it covers.
_GROUPS: Mapping[str, tuple[str, ...]] = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "LC": ("Lu", "Ll", "Lt"),
    "M": ("Mn", "Mc", "Me"),
    "N": ("Nd", "Nl", "No"),
    "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"),
    "S": ("Sm", "Sc", "Sk", "So"),
    "Z": ("Zs", "Zl", "Zp"),
    "C": ("Cc", "Cf", "Cs", "Co", "Cn"),
}
_ALIASES: Mapping[str, str] = {
    "Letter": "L",
    "Cased_Letter": "LC",
    "Uppercase_Letter": "Lu",
    "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm",
    "Other_Letter": "Lo",
    "Mark": "M",
    "Combining_Mark": "M",
    "Nonspacing_Mark": "Mn",
    "Spacing_Mark": "Mc",
    "Enclosing_Mark": "Me",
    "Number": "N",
    "Decimal_Number": "Nd",
    "digit": "Nd",
    "Letter_Number": "Nl",
    "Other_Number": "No",
    "Punctuation": "P",
    "punct": "P",
    "Connector_Punctuation": "Pc",
    "Dash_Punctuation": "Pd",
    "Open_Punctuation": "Ps",
    "Close_Punctuation": "Pe",
    "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf",
    "Other_Punctuation": "Po",
    "Symbol": "S",
    "Math_Symbol": "Sm",
    "Currency_Symbol": "Sc",
    "Modifier_Symbol": "Sk",
    "Other_Symbol": "So",
    "Separator": "Z",
    "Space_Separator": "Zs",
    "Line_Separator": "Zl",
    "Paragraph_Separator": "Zp",
    "Other": "C",
    "Control": "Cc",
    "cntrl": "Cc",
    "Format": "Cf",
    "Surrogate": "Cs",
    "Private_Use": "Co",
    "Unassigned": "Cn",
}
_CATEGORIES = frozenset(c for group in _GROUPS.values() for c in group)
_ESCAPE = re.compile(r"\\(?:[pP]\{([^}]*)\}|.)", re.DOTALL)
_MAX = 0x10FFFF

Ranges = list[tuple[int, int]]


def has_property_escapes(pattern: str) -> bool:
    """Whether `pattern` uses `\\p{...}` or `\\P{...}` (an escaped backslash before a `p` does not count)."""
    return any(match.group(1) is not None for match in _ESCAPE.finditer(pattern))


def _categories(name: str) -> tuple[str, ...] | None:
    """The two-letter categories `name` stands for (`Letter`, `L`, `gc=L`, `General_Category=Letter`), or None."""
    key, _, value = name.partition("=")
    if value:
        if key not in ("gc", "General_Category"):
            return None
        name = value
    short = _ALIASES.get(name, name)
    if short in _GROUPS:
        return _GROUPS[short]
    return (short,) if short in _CATEGORIES else None


def unsupported(pattern: str) -> list[str]:
    """The property names in `pattern` that are not General_Category values."""
    return [
        m.group(1)
        for m in _ESCAPE.finditer(pattern)
        if m.group(1) is not None and _categories(m.group(1)) is None
    ]


def _table(wanted: Iterable[str]) -> dict[str, Ranges]:
    """Code point ranges of each wanted category, read from this Python's Unicode database in one pass."""
    wanted = set(wanted)
    table: dict[str, Ranges] = {category: [] for category in wanted}
    category = unicodedata.category
    for point in range(_MAX + 1):
        found = category(chr(point))
        if found in wanted:
            ranges = table[found]
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1] = (ranges[-1][0], point)
            else:
                ranges.append((point, point))
    return table


def _merged(parts: Iterable[Ranges]) -> Ranges:
    merged: Ranges = []
    for start, end in sorted(r for ranges in parts for r in ranges):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _complement(ranges: Ranges) -> Ranges:
    result: Ranges = []
    next_start = 0
    for start, end in ranges:
        if start > next_start:
            result.append((next_start, start - 1))
        next_start = end + 1
    if next_start <= _MAX:
        result.append((next_start, _MAX))
    return result


def _class_body(ranges: Ranges) -> str:
    return "".join(
        f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges
    )


def python_patterns(patterns: Iterable[str]) -> dict[str, str]:
    """Each pattern that uses General_Category escapes, as a Python pattern; the others are left out.

    Outside a character class `\\p{L}` becomes `[...]`; inside one, its ranges join the class. `\\P` is the
    complement. Raises ValueError for a property that is not a General_Category value.
    """
    chosen = [p for p in patterns if has_property_escapes(p)]
    if not chosen:
        return {}
    names = {
        m.group(1)
        for p in chosen
        for m in _ESCAPE.finditer(p)
        if m.group(1) is not None
    }
    needed: dict[str, tuple[str, ...]] = {}
    for name in names:
        categories = _categories(name)
        if categories is None:
            raise ValueError(
                f"Unicode property {name!r} is not a General_Category value"
            )
        needed[name] = categories
    table = _table(c for categories in needed.values() for c in categories)
    ranges = {
        name: _merged(table[c] for c in categories)
        for name, categories in needed.items()
    }
    return {pattern: _translated(pattern, ranges) for pattern in chosen}


def _translated(pattern: str, ranges: Mapping[str, Ranges]) -> str:
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            match = _ESCAPE.match(pattern, index)
            name = match.group(1) if match else None
            if match is None:  # a lone trailing backslash, left for re to reject
                out.append(char)
                index += 1
                continue
            if name is None:
                out.append(match.group(0))
            else:
                wanted = (
                    ranges[name]
                    if match.group(0)[1] == "p"
                    else _complement(ranges[name])
                )
                body = _class_body(wanted)
                out.append(body if in_class else f"[{body}]")
            index = match.end()
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        out.append(char)
        index += 1
    return "".join(out)


_SUBSCHEMA_KEYS = frozenset((*SCHEMA_MAPS, *SCHEMA_LISTS, *SCHEMA_SINGLES, "items"))
# Keywords whose values are data, never schemas: a "pattern" key inside `const` is not a pattern.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# An object where no keyword leads may still be a schema a `$ref` points at (`names.json#/Name`): one with
# any of these keys is taken for one.
_SCHEMA_LIKE = frozenset(
    {
        "$ref",
        "$id",
        "$anchor",
        "type",
        "pattern",
        "patternProperties",
        "properties",
        "items",
        "enum",
        "const",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "required",
        "format",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
    }
)


def _visit(
    node: Any, on_schema: Callable[[Any, dict[str, Any]], Any], schema: bool
) -> Any:
    """A copy of `node` with `on_schema(original, copy)` applied to every schema object in it, children first:
    at keyword positions, and at any object that looks like a schema. Data keywords are left as they are."""
    if isinstance(node, list):
        return [_visit(item, on_schema, False) for item in node]
    if not isinstance(node, dict):
        return node
    if not schema and not _SCHEMA_LIKE & node.keys():
        return {key: _visit(value, on_schema, False) for key, value in node.items()}
    subschemas = map_subschemas(node, lambda sub: _visit(sub, on_schema, True))
    result = {
        key: value
        if key in _DATA_KEYWORDS
        else subschemas[key]
        if key in _SUBSCHEMA_KEYS
        else _visit(value, on_schema, False)
        for key, value in node.items()
    }
    return on_schema(node, result)


def _patterns_in(document: Any) -> list[str]:
    """Every `pattern` and `patternProperties` key of the schemas in `document`."""
    found: list[str] = []

    def collect(schema: Any, copy: dict[str, Any]) -> Any:
        if isinstance(schema.get("pattern"), str):
            found.append(schema["pattern"])
        if isinstance(schema.get("patternProperties"), dict):
            found.extend(
                key for key in schema["patternProperties"] if isinstance(key, str)
            )
        return copy

    _visit(document, collect, True)
    return found


def _rewritten(document: Any, translated: Mapping[str, str]) -> Any:
    def rewrite(schema: Any, copy: dict[str, Any]) -> Any:
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and pattern in translated:
            copy["pattern"] = translated[pattern]
        keyed = copy.get("patternProperties")
        if isinstance(keyed, dict):
            copy["patternProperties"] = {
                translated.get(key, key): value for key, value in keyed.items()
            }
        return copy

    return _visit(document, rewrite, True)


def python_documents(
    documents: Iterable[Any],
) -> tuple[list[Any], dict[str, str]] | None:
    """The documents (a schema and the ones it refers to) with every General_Category escape translated, and
    each translated pattern's original (Python -> ECMA); None when no document has one."""
    documents = list(documents)
    patterns = [p for document in documents for p in _patterns_in(document)]
    if not any(has_property_escapes(p) for p in patterns):
        return None
    # Not a General_Category value: the build refused it wherever a keyword leads, so this one sits where
    # only a `$ref` might (`x-meta`); left as written, a check that reaches it reports it could not run it.
    translated = python_patterns(p for p in patterns if not unsupported(p))
    rewritten = [_rewritten(document, translated) for document in documents]
    return rewritten, {python: ecma for ecma, python in translated.items()}
