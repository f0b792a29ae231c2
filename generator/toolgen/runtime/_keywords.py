"""Where the subschemas of a JSON Schema are (2020-12 and the older drafts' spellings): one table for the generator
and the generated runtime alike."""

from __future__ import annotations

# Keywords whose value maps names to subschemas, lists subschemas, or is one subschema (`items` is either).
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
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
