"""Prepare bundled schemas for model generation: class names for every object, discriminators, standalone copies."""

from __future__ import annotations

import copy
import unicodedata
from typing import Any

from toolgen.checks import default_fits
from toolgen.ir import Union
from toolgen.names import NameRegistry, pascal
from toolgen.schemawalk import children, walk

# Annotation-only keywords in 2020-12 that model generators would turn into behaviour (EmailStr needs an extra
# package, date-time becomes datetime) or into code; validation keeps the schema's meaning without them.
_ANNOTATIONS = frozenset(
    {"format", "examples", "example", "$comment", "readOnly", "writeOnly", "contentMediaType", "contentEncoding"}
)
_DEF_PREFIX = "#/$defs/"


def _refs(schema: Any) -> set[str]:
    return {
        sub["$ref"][len(_DEF_PREFIX) :]
        for sub, _ in walk(schema)
        if isinstance(sub, dict) and isinstance(sub.get("$ref"), str) and sub["$ref"].startswith(_DEF_PREFIX)
    }


def standalone(defs: dict[str, Any], name: str) -> Any:
    """defs[name] as a self-contained schema: every model it refers to carried in its own `$defs`."""
    needed: set[str] = set()
    pending = _refs(defs[name])
    while pending:
        current = pending.pop()
        if current not in needed and current in defs:
            needed.add(current)
            pending |= _refs(defs[current])
    root = copy.deepcopy(defs[name])
    if needed and isinstance(root, dict):
        root["$defs"] = {key: copy.deepcopy(defs[key]) for key in sorted(needed)}
    return root


def _escaped(char: str) -> str:
    if char in "\n\t" or (unicodedata.category(char) not in ("Cc", "Zl", "Zp")):
        return char
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def _printable(text: str) -> str:
    """Control and line-separator characters spelled as escapes: a class description becomes a docstring verbatim."""
    return "".join(_escaped(char) for char in text.replace("\r\n", "\n").replace("\r", "\n"))


# Carried to the model as json_schema_extra; the runtime turns it into a check and removes it again.
NOT_NULL_KEY = "x-toolgen-not-null"


def _refuses_null(schema: Any) -> bool:
    """An explicit `type` without "null" (and no null in enum/const) means null is invalid here."""
    if not isinstance(schema, dict) or "type" not in schema:
        return False
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if "null" in types:
        return False
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return False
    return not ("const" in schema and schema["const"] is None)


def _as_class(schema: dict[str, Any], name: str) -> None:
    schema["title"] = name
    if isinstance(schema.get("description"), str):
        schema["description"] = _printable(schema["description"])
    properties = schema.get("properties")
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    if isinstance(properties, dict):
        # The model makes an optional field `X | None`; JSON Schema refuses an explicit null unless it says so.
        optional = [key for key, sub in properties.items() if key not in required and _refuses_null(sub)]
        if optional:
            schema[NOT_NULL_KEY] = optional


def strip_annotations_for_models(defs: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(defs)
    for schema in result.values():
        for sub, _ in walk(schema):
            if isinstance(sub, dict):
                if "default" in sub and not default_fits(sub):
                    del sub["default"]
                for key in _ANNOTATIONS & sub.keys():
                    if not (key == "format" and not isinstance(sub[key], str)):
                        del sub[key]
    return result


def _const_of(schema: Any, prop: str) -> Any:
    if not isinstance(schema, dict) or prop not in schema.get("required", []):
        return None
    value = schema.get("properties", {}).get(prop)
    return value.get("const") if isinstance(value, dict) else None


def infer_unions(defs: dict[str, Any]) -> list[Union]:
    """`oneOf` of `$ref`s whose targets share a required constant property becomes a discriminated union."""
    unions = []
    for name, schema in defs.items():
        if not isinstance(schema, dict):
            continue
        branches = schema.get("oneOf") or schema.get("anyOf")
        if not isinstance(branches, list) or len(branches) < 2:
            continue
        targets = [
            b.get("$ref", "")[len(_DEF_PREFIX) :] if isinstance(b, dict) and set(b) == {"$ref"} else ""
            for b in branches
        ]
        if not all(t in defs for t in targets):
            continue
        first = defs[targets[0]]
        candidates = (
            [p for p in first.get("required", []) if _const_of(first, p) is not None] if isinstance(first, dict) else []
        )
        for prop in candidates:
            values = [_const_of(defs[t], prop) for t in targets]
            if all(isinstance(v, str) for v in values) and len(set(values)) == len(values):
                schema["discriminator"] = {"propertyName": prop}
                unions.append(Union(name, prop, tuple(targets)))
                break
    return unions


def _label(relative: tuple[str, ...]) -> str:
    keyword = relative[0]
    if keyword in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
        return pascal(relative[1], fallback="Field")
    if keyword in ("allOf", "anyOf", "oneOf", "prefixItems"):
        return f"Variant{int(relative[1]) + 1}"
    return {"items": "Item", "additionalProperties": "Value"}.get(keyword, pascal(keyword))


def _name_children(schema: Any, owner: str, names: NameRegistry) -> None:
    for sub, relative in children(schema, ()):
        if not isinstance(sub, dict):
            continue
        child_owner = owner
        if isinstance(sub.get("properties"), dict) and sub.get("properties") and "$ref" not in sub:
            child_owner = names.claim(owner + _label(relative))
            _as_class(sub, child_owner)
        else:
            sub.pop("title", None)
            if relative[0] in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "prefixItems"):
                child_owner = owner + _label(relative)
        _name_children(sub, child_owner, names)


def assign_class_names(
    defs: dict[str, Any], names: NameRegistry, lenient: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Give every object that becomes a class a title that is its unique, predictable class name.

    Models named in `lenient` (the canonical ones, fed by provider payloads that write absent fields
    as null) accept null for optional fields.
    """
    for name, schema in defs.items():
        if isinstance(schema, dict):
            _as_class(schema, name)
            _name_children(schema, name, names)
            if name in lenient:
                schema.pop(NOT_NULL_KEY, None)
    return defs
