"""Proves the common JSON Schemas valid under the 2020-12 meta-schema without running jsonschema over them."""

from __future__ import annotations

from collections.abc import Callable, Collection
from types import MappingProxyType
from typing import Any

from toolgen.core.positions import Pointer
from toolgen.runtime import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_SINGLES

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _is_schema(value: Any) -> bool:
    return isinstance(value, (dict, bool))


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_non_negative_integer(value: Any) -> bool:
    # jsonschema also takes 2.0 as an integer; anything unusual is left to it.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_positive_number(value: Any) -> bool:
    return _is_number(value) and value > 0


def _is_array(value: Any) -> bool:
    return isinstance(value, list)


def _is_anything(value: Any) -> bool:
    return True


def _is_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _SIMPLE_TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(name, str) and name in _SIMPLE_TYPES for name in value)
        and len(set(value)) == len(value)
    )


def _is_string_array(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value) and len(set(value)) == len(value)


def _is_string_array_map(value: Any) -> bool:
    return isinstance(value, dict) and all(_is_string_array(item) for item in value.values())


# Keywords whose value the 2020-12 meta-schema constrains without a subschema, with the test it applies. Any other
# keyword the meta-schema names ($id, $anchor, dependencies, ...) is left to jsonschema (see `_ANY_OTHER`).
_VALUE_CHECKS: MappingProxyType[str, Callable[[Any], bool]] = MappingProxyType(
    {
        "type": _is_type,
        "enum": _is_array,
        "const": _is_anything,
        "default": _is_anything,
        "examples": _is_array,
        "title": _is_string,
        "description": _is_string,
        "$comment": _is_string,
        "$ref": _is_string,
        "format": _is_string,
        "pattern": _is_string,
        "contentEncoding": _is_string,
        "contentMediaType": _is_string,
        "deprecated": _is_boolean,
        "readOnly": _is_boolean,
        "writeOnly": _is_boolean,
        "uniqueItems": _is_boolean,
        "multipleOf": _is_positive_number,
        "maximum": _is_number,
        "exclusiveMaximum": _is_number,
        "minimum": _is_number,
        "exclusiveMinimum": _is_number,
        "maxLength": _is_non_negative_integer,
        "minLength": _is_non_negative_integer,
        "maxItems": _is_non_negative_integer,
        "minItems": _is_non_negative_integer,
        "maxContains": _is_non_negative_integer,
        "minContains": _is_non_negative_integer,
        "maxProperties": _is_non_negative_integer,
        "minProperties": _is_non_negative_integer,
        "required": _is_string_array,
        "dependentRequired": _is_string_array_map,
    }
)
# Keywords whose value is one subschema, a mapping of subschemas, or a non-empty list of them: the runtime's
# tables, as 2020-12 reads them (`items` one schema; draft-07's `additionalItems` is not proven here).
_SCHEMA_SINGLES = (frozenset(SCHEMA_SINGLES) - {"additionalItems"}) | {"items"}
_SCHEMA_MAPS = frozenset(SCHEMA_MAPS)
_SCHEMA_LISTS = frozenset(SCHEMA_LISTS)
# The rest of what the 2020-12 meta-schema (with the keywords it keeps from older drafts) names: a schema holding
# one of these is not proven here. Keys outside every list are unknown keywords, which the meta-schema allows.
_ANY_OTHER = frozenset(
    {
        "$id",
        "$schema",
        "$vocabulary",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "dependencies",
    }
)
# Every keyword the 2020-12 meta-schema names: kept beside the tables so a test can compare it with the real one.
KNOWN_KEYWORDS = frozenset({*_VALUE_CHECKS, *_SCHEMA_SINGLES, *_SCHEMA_MAPS, *_SCHEMA_LISTS, *_ANY_OTHER})


def proven_valid(schema: Any, excused: Collection[Pointer] = frozenset()) -> bool:
    """True only when `schema` is certainly valid under the 2020-12 meta-schema; False means "not proven here"
    (it may still be valid), and the caller asks jsonschema, whose errors are the diagnostics.

    A string `type` at one of the `excused` places (pointers to a `type` key, relative to `schema`) is not looked
    at: True then says that every error jsonschema would find lies at one of those places.
    """
    pending: list[tuple[Any, Pointer]] = [(schema, ())]
    while pending:
        node, pointer = pending.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for key, value in node.items():
            check = _VALUE_CHECKS.get(key)
            if check is not None:
                if not check(value) and not (key == "type" and isinstance(value, str) and (*pointer, key) in excused):
                    return False
            elif key in _SCHEMA_SINGLES:
                if not _is_schema(value):
                    return False
                pending.append((value, (*pointer, key)))
            elif key in _SCHEMA_MAPS:
                if not isinstance(value, dict):
                    return False
                pending.extend((sub, (*pointer, key, name)) for name, sub in value.items())
            elif key in _SCHEMA_LISTS:
                if not isinstance(value, list) or not value:
                    return False
                pending.extend((sub, (*pointer, key, str(index))) for index, sub in enumerate(value))
            elif key in _ANY_OTHER or not isinstance(key, str):
                return False
    return True
