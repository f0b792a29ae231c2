"""Vocabularies a schema's meta-schema turns off (2020-12 `$vocabulary`): their keywords are annotations there.

A tool schema whose `$schema` is a vendored meta-schema without the validation vocabulary does not assert
`minimum`, `type` or `required`; the models and the JSON Schema check must not either, so those keywords are
taken out of every subschema before either sees the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolgen.source.schemawalk import map_children

# The validation vocabulary as 2020-12 and 2019-09 name it: a meta-schema listing either keeps its keywords.
_VALIDATION = frozenset(
    {"https://json-schema.org/draft/2020-12/vocab/validation", "https://json-schema.org/draft/2019-09/vocab/validation"}
)
# The 2020-12 validation vocabulary's assertions (its meta/validation meta-schema).
_VALIDATION_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
    }
)


def keywords_turned_off(meta_schema: Any) -> frozenset[str]:
    """The keywords `meta_schema` leaves without effect: those of the validation vocabulary when its
    `$vocabulary` lists vocabularies and not that one. A meta-schema without `$vocabulary` turns nothing off."""
    vocabularies = meta_schema.get("$vocabulary") if isinstance(meta_schema, Mapping) else None
    if not isinstance(vocabularies, Mapping) or _VALIDATION & vocabularies.keys():
        return frozenset()
    return _VALIDATION_KEYWORDS


def without_keywords(schema: Any, keywords: frozenset[str]) -> Any:
    """`schema` with `keywords` removed from it and every subschema."""
    if not keywords or not isinstance(schema, dict):
        return schema
    trimmed = map_children(schema, lambda sub, _relative: without_keywords(sub, keywords))
    return {key: value for key, value in trimmed.items() if key not in keywords}
