"""Which schemas the generated models enforce exactly, decided at build time; the others also get a JSON Schema check.

Pydantic models from datamodel-code-generator follow a schema faithfully only for a core of keywords on typed
subschemas: untyped subschemas become `Any`, and `not`, `if`/`then`, `contains`, `uniqueItems`,
`dependentRequired`, `oneOf`'s "exactly one" and non-string enums are not what the model checks. A schema
that leaves that core is validated with the `jsonschema` package as well, so nothing is accepted silently.
"""

from __future__ import annotations

from typing import Any

from toolgen.runtime import has_property_escapes
from toolgen.schemawalk import map_children, walk

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


def _faithful(schema: Any) -> bool:
    """One subschema (its own keywords, not its children) is enforced exactly by the models."""
    if schema is True or (isinstance(schema, dict) and set(schema) <= _ANNOTATIONS):
        return True
    if not isinstance(schema, dict) or not set(schema) <= _FAITHFUL_KEYWORDS:
        return False
    if isinstance(schema.get("pattern"), str) and has_property_escapes(schema["pattern"]):
        return False  # the models' re has no \p{...}; the JSON Schema check spells it out
    values = schema.get("enum")
    if values is not None and not (isinstance(values, list) and values and all(isinstance(v, str) for v in values)):
        return False  # pydantic compares numbers and booleans by ==: false == 0, 1 == 1.0 == true
    if "$ref" in schema:
        local = isinstance(schema["$ref"], str) and schema["$ref"].startswith("#")
        return local and set(schema) <= {"$ref", "description", "title", "default", "examples", "$comment"}
    kind = schema.get("type")
    if "anyOf" in schema:
        return kind is None and set(schema) <= {"anyOf", "description", "title", "default", "examples", "$comment"}
    if "enum" in schema and kind is None:
        return True
    kinds = kind if isinstance(kind, list) else [kind]
    if not kinds or not all(isinstance(k, str) and k in _TYPES for k in kinds):
        return False  # an untyped subschema with constraints becomes Any in the models
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


def models_are_exact(schema: Any) -> bool:
    """Whether the generated models alone accept exactly what `schema` accepts (every subschema followed)."""
    return all(_faithful(sub) or _closes_object(sub, pointer) for sub, pointer in walk(schema))


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
    return result
