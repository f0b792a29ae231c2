# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Where the subschemas of a JSON Schema are (2020-12 and the older drafts' spellings): one table for the generator
and the generated runtime alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Keywords whose value maps names to subschemas, lists subschemas, or is one subschema (`items` is either).
SCHEMA_MAPS = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_SINGLES = (
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "additionalItems",
    "contentSchema",
)


def map_subschemas(
    schema: dict[str, Any], transform: Callable[[Any], Any]
) -> dict[str, Any]:
    """A copy of the schema object `schema` with `transform` applied to each direct subschema (`true` and
    `false` included)."""
    result = dict(schema)
    for key in SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            result[key] = {name: transform(sub) for name, sub in schema[key].items()}
    for key in SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            result[key] = [transform(sub) for sub in schema[key]]
    items = schema.get("items")
    if isinstance(items, list):
        result["items"] = [transform(sub) for sub in items]
    elif isinstance(items, (dict, bool)):
        result["items"] = transform(items)
    for key in SCHEMA_SINGLES:
        if isinstance(schema.get(key), (dict, bool)):
            result[key] = transform(schema[key])
    return result
