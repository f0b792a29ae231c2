"""Keys of a schema that misspell a JSON Schema keyword (`propertys`, `requird`, `max_length`), found by walking it.

JSON Schema ignores keys it does not know, so a misspelled keyword builds a tool that checks nothing of what it
meant: `propertys` gives a tool with no arguments, `requird` one whose arguments are all optional.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from toolgen.core.positions import Pointer
from toolgen.source.schemawalk import walk

# Every keyword of draft 2020-12 and of the drafts before it (draft-07's `definitions`, `dependencies` and
# `additionalItems`, draft-04's `id`), plus OpenAPI's `nullable`.
KEYWORDS = frozenset(
    {
        "$anchor",
        "$comment",
        "$defs",
        "$dynamicAnchor",
        "$dynamicRef",
        "$id",
        "$ref",
        "$schema",
        "$vocabulary",
        "additionalItems",
        "additionalProperties",
        "allOf",
        "anyOf",
        "const",
        "contains",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "default",
        "definitions",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "deprecated",
        "description",
        "else",
        "enum",
        "examples",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "id",
        "if",
        "items",
        "maxContains",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minContains",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "not",
        "nullable",
        "oneOf",
        "pattern",
        "patternProperties",
        "prefixItems",
        "properties",
        "propertyNames",
        "readOnly",
        "required",
        "then",
        "title",
        "type",
        "unevaluatedItems",
        "unevaluatedProperties",
        "uniqueItems",
        "writeOnly",
    }
)


def _folded(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "").replace("$", "")


def _distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: optimal string alignment."""
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        previous, row = row, [i] + [0] * len(b)
        for j, other in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (char != other))
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                row[j] = min(row[j], before[j - 2] + 1)
        before = previous
    return row[-1]


def _allowed_edits(keyword: str) -> int:
    """A typo of a short keyword (`if`, `not`) is as likely a word of its own; of a long one, one or two slips."""
    return 0 if len(keyword) <= 3 else 1 if len(keyword) <= 5 else 2


def meant_keyword(key: str) -> str | None:
    """The keyword `key` misspells (`requird` → `required`, `max_length` → `maxLength`), or None."""
    if key in KEYWORDS or key.startswith("x-"):
        return None
    return nearest_name(key, KEYWORDS)


def nearest_name(key: str, names: Iterable[str], *, closed: bool = False) -> str | None:
    """The one of `names` that `key` misspells (a keyword, a toolgen.yaml key, a choice), or None: the same but
    for case, `_`, `-` and `$`, or within a slip or two of it. A name `key` holds whole or is held in counts only
    for a `closed` set, where no other word may stand (`input` for `inputs` in toolgen.yaml)."""
    folded = _folded(key)
    found = [
        keyword
        for keyword in sorted(names)
        # A key holding a keyword whole (`enumDescriptions`, `types`) or held in one (`example`, `item`) is a word
        # of its own, not a typo; a key spelled as a keyword but for case, `_`, `-` and `$` is one.
        if _folded(keyword) == folded
        or (
            (closed or (_folded(keyword) not in folded and folded not in _folded(keyword)))
            # No fewer edits than the lengths differ: most keys are ruled out before the distance is counted.
            and abs(len(folded) - len(_folded(keyword))) <= _allowed_edits(keyword)
            and _distance(folded, _folded(keyword)) <= _allowed_edits(keyword)
        )
    ]
    found.sort(key=lambda keyword: _distance(folded, _folded(keyword)))
    return found[0] if found else None


def misspelled_keywords(schema: Any) -> Iterator[tuple[Pointer, str, str]]:
    """(pointer of the key, key, keyword it misspells) for every such key of `schema` and its subschemas whose
    keyword the same subschema does not also have."""
    for subschema, pointer in walk(schema):
        if not isinstance(subschema, dict):
            continue
        for key in subschema:
            meant = meant_keyword(str(key))
            if meant is not None and meant not in subschema:
                yield (*pointer, str(key)), str(key), meant
