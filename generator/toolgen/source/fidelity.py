"""Which schemas the generated models enforce exactly, decided at build time; the others also get a JSON Schema check.

Pydantic models from datamodel-code-generator follow a schema faithfully only for a core of keywords on typed
subschemas: untyped subschemas become `Any`, and `not`, `if`/`then`, `contains`, `uniqueItems`,
`dependentRequired`, `oneOf`'s "exactly one" and non-string enums are not what the model checks. A schema
that leaves that core is validated with the `jsonschema` package as well, so nothing is accepted silently.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from toolgen.runtime import has_property_escapes
from toolgen.source.schemawalk import map_children, walk

# Keywords the models check exactly (on a typed subschema) or that change nothing about validity.
_FAITHFUL_KEYWORDS = frozenset(
    {
        "$comment",
        "$defs",
        "$ref",
        "$schema",
        "additionalProperties",
        "anyOf",
        "default",
        "definitions",
        "deprecated",
        "description",
        "enum",
        "examples",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maximum",
        "minItems",
        "minLength",
        "pattern",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "properties",
        "readOnly",
        "required",
        "title",
        "type",
        "writeOnly",
        "x-toolgen-not-null",
    }
)
# Keywords that let an object hold properties beyond `properties`, so the models must not refuse them.
_OPENING_KEYWORDS = ("patternProperties", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "dependentSchemas", "if")
RESOLUTION_KEYWORDS = frozenset({"$anchor", "$dynamicAnchor", "$dynamicRef", "$id"})
_ANNOTATIONS = frozenset(
    {"$comment", "default", "deprecated", "description", "examples", "format", "readOnly", "title", "writeOnly"}
)
# Constraints that apply to one JSON type only.
_TYPE_SPECIFIC = (
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)
_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_NUMBERS = frozenset({"number", "integer"})
# The types each of _TYPE_SPECIFIC applies to.
_APPLIES_TO = MappingProxyType(
    {
        **dict.fromkeys(("minLength", "maxLength", "pattern"), frozenset({"string"})),
        **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), _NUMBERS),
        **dict.fromkeys(("minItems", "maxItems", "uniqueItems"), frozenset({"array"})),
        **dict.fromkeys(("minProperties", "maxProperties"), frozenset({"object"})),
    }
)


# Keywords about an array's items or an object's properties: they apply to values of that type only.
_STRUCTURE = MappingProxyType(
    {
        **dict.fromkeys(("items", "prefixItems", "contains"), "array"),
        **dict.fromkeys(("properties", "required", "additionalProperties", "patternProperties"), "object"),
    }
)
# Beside an enum and no type, the keywords the models check the enum's strings against (see _string_fits).
_ENUM_CHECKED = frozenset({"enum", "minLength", "maxLength", "pattern"})


def _foreign_structure(schema: dict[str, Any], declared: set[str] | None) -> list[str]:
    """The keywords of `schema` about the items or properties of a type it does not declare (none declared:
    an enum's, whose values alone decide). They limit nothing; the models would make the value that type."""
    if declared is None and "enum" not in schema:
        return []
    return [key for key, kind in _STRUCTURE.items() if key in schema and kind not in (declared or ())]


def _faithful(schema: Any) -> bool:
    """One subschema (its own keywords, not its children) is enforced exactly by the models."""
    if schema is True or (isinstance(schema, dict) and set(schema) <= _ANNOTATIONS):
        return True
    if not isinstance(schema, dict) or not set(schema) <= _FAITHFUL_KEYWORDS:
        return False
    if isinstance(schema.get("pattern"), str) and has_property_escapes(schema["pattern"]):
        return False  # the models' re has no \p{...}; the JSON Schema check spells it out
    if "enum" in schema and not _enum_decides(schema):
        return False
    if "$ref" in schema:
        local = isinstance(schema["$ref"], str) and schema["$ref"].startswith("#")
        return local and set(schema) <= {"$ref", "description", "title", "default", "examples", "$comment"}
    kind = schema.get("type")
    if "anyOf" in schema:
        return kind is None and set(schema) <= {"anyOf", "description", "title", "default", "examples", "$comment"}
    if "enum" in schema and kind is None:
        return set(schema) <= _ANNOTATIONS | _ENUM_CHECKED
    kinds = kind if isinstance(kind, list) else [kind]
    if not kinds or not all(isinstance(k, str) and k in _TYPES for k in kinds):
        return False  # an untyped subschema with constraints becomes Any in the models
    if _foreign_structure(schema, {str(k) for k in kinds}):
        return False  # `items` on a string: JSON Schema accepts any string, the models would want an array
    if len([k for k in kinds if k != "null"]) > 1 and any(
        k in schema for k in ("properties", "items", *_TYPE_SPECIFIC)
    ):
        return False  # constraints of one type inside a type union apply to that type only
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        return False
    if any(name not in properties for name in required) or any(not name.isascii() for name in properties):
        return False
    return "items" not in schema or isinstance(schema["items"], dict)


def _enum_decides(schema: dict[str, Any]) -> bool:
    """The models hold this enum exactly: strings only, each one a value the subschema's other keywords accept.

    The models make an enum a Literal of its values and keep none of the keywords beside it that could refuse
    one (a type, a pattern), so an enum value those keywords refuse would be accepted.
    """
    values = schema["enum"]
    if not (isinstance(values, list) and values and all(isinstance(v, str) for v in values)):
        return False  # pydantic compares numbers and booleans by ==: false == 0, 1 == 1.0 == true
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [] if kind is None else [kind]
    if kinds and ("string" not in kinds or "null" in kinds):
        return False  # strings outside the declared type, or a null the type allows and the enum does not
    return all(_string_fits(value, schema) for value in values)


def _string_fits(value: str, schema: dict[str, Any]) -> bool:
    """`value` has the length and matches the pattern `schema` asks of a string."""
    low, high, pattern = schema.get("minLength"), schema.get("maxLength"), schema.get("pattern")
    if isinstance(low, (int, float)) and not isinstance(low, bool) and len(value) < low:
        return False
    if isinstance(high, (int, float)) and not isinstance(high, bool) and len(value) > high:
        return False
    if not isinstance(pattern, str):
        return True
    # Bounded: an imported schema's `^(a+)+$` against its own example must not stop the build. A pattern that
    # cannot be read, or told within its time, counts as not fitting: the JSON Schema check reports it. Imported
    # here: the matcher loads pydantic-core, which `lint` and `export` need for nothing else.
    from toolgen.runtime import search_within

    return search_within(pattern, value) is True


def _enum_outside(values: Any, declared: set[str]) -> bool:
    """Some of `values` (an enum) are of none of the `declared` types."""
    if not isinstance(values, list):
        return False
    return any(not _json_types(value) & declared for value in values)


def _json_types(value: Any) -> set[str]:
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, (int, float)):
        return {"number", "integer"} if float(value).is_integer() else {"number"}
    return {"string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"}


def models_are_exact(schema: Any) -> bool:
    """Whether the generated models alone accept exactly what `schema` accepts (every subschema followed)."""
    return all(
        (_faithful(sub) and not _open_when_empty(sub, pointer)) or _closes_object(sub, pointer)
        for sub, pointer in walk(schema)
    )


def _open_when_empty(schema: Any, pointer: tuple[str, ...]) -> bool:
    # A closed object with no properties refuses every key where the models make it a class or a field of one
    # (the root, a definition, a property); elsewhere (an array's items, a union's branch, additional
    # properties, a type union) it is a plain dict that takes any keys.
    closed_empty = isinstance(schema, dict) and schema.get("additionalProperties") is False
    if not closed_empty or schema.get("properties"):
        return False
    held = pointer == () or pointer[-2:-1] in (("$defs",), ("definitions",), ("properties",))
    return not (held and schema.get("type") == "object")


def _closes_object(schema: Any, pointer: tuple[str, ...]) -> bool:
    # `additionalProperties: false` is a keyword's value the models enforce (extra="forbid"), not a subschema.
    return schema is False and pointer[-1:] == ("additionalProperties",)


def relax_for_models(schema: Any) -> Any:
    """`schema` with what the models would check wrongly taken out of every subschema they do not follow exactly.

    Safe because any tool that reaches such a subschema is validated with a JSON Schema check as well; the
    models keep the types. `false` subschemas become `{}` (datamodel-code-generator cannot build them) and
    objects whose extra properties depend on patternProperties or unevaluatedProperties stop refusing them.
    """
    return _relax(schema, ())


def _relax(node: Any, pointer: tuple[str, ...]) -> Any:
    if node is False and not _closes_object(node, pointer):
        return {}
    if not isinstance(node, dict):
        return node
    result = map_children(node, lambda sub, relative: _relax(sub, (*pointer, *relative)))
    for key in RESOLUTION_KEYWORDS & result.keys():
        del result[key]  # refs are bundled already; datamodel-code-generator would try to follow these again
    if not str(result.get("$ref", "#")).startswith("#"):
        del result["$ref"]  # a meta-schema left as written: Any to the models, which must not fetch it
    if not _faithful(node) and any(k in node for k in _OPENING_KEYWORDS):
        result.pop("additionalProperties", None)
        result.pop("unevaluatedProperties", None)
        # A map typed by its key pattern refuses the keys the pattern does not match: right only for a closed
        # object with one pattern (with two, the models would want every key to match the same one).
        keyed = node.get("patternProperties")
        single = isinstance(keyed, dict) and len(keyed) == 1 and not any(has_property_escapes(k) for k in keyed)
        if node.get("additionalProperties") is not False or "properties" in node or not single:
            result.pop("patternProperties", None)
    if isinstance(node.get("pattern"), str) and has_property_escapes(node["pattern"]):
        del result["pattern"]
    kinds = node.get("type")
    if isinstance(kinds, list) and len([k for k in kinds if k != "null"]) > 1:
        # The models would apply a string's or a number's limits to every member of the union (or fail to build).
        for key in _TYPE_SPECIFIC:
            result.pop(key, None)
    declared = {kinds} if isinstance(kinds, str) else set(kinds) if isinstance(kinds, list) else None
    for key in _foreign_structure(node, declared):
        result.pop(key, None)
    if declared is not None:
        # A limit of a type the schema does not declare limits nothing; the models would apply it anyway
        # (maxItems on a string becomes its max_length).
        for key, applies_to in _APPLIES_TO.items():
            if key in result and not applies_to & declared:
                del result[key]
    if declared is not None and _enum_outside(node.get("enum"), declared):
        # The JSON Schema check decides an enum with values of a type the schema does not declare; the models
        # would make it an Enum class that no JSON value is an instance of, or a Literal of the wrong type.
        del result["enum"]
    return result
