"""Prepare bundled schemas for model generation: class names for every object, discriminators, standalone copies."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from toolgen.core.jsoncopy import copy_json
from toolgen.core.names import NameRegistry, pascal
from toolgen.ir.model import Union
from toolgen.source.checks import default_fits
from toolgen.source.schemawalk import children, walk

# Annotation-only keywords in 2020-12 that model generators would turn into behaviour (EmailStr needs an extra
# package, date-time becomes datetime, OpenAPI's `nullable` a `| None`) or into code; validation keeps the
# schema's meaning without them.
_ANNOTATIONS = frozenset(
    {
        "format",
        "examples",
        "example",
        "$comment",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "nullable",
    }
)
_DEF_PREFIX = "#/$defs/"


def _refs(schema: Any) -> set[str]:
    return {
        sub["$ref"][len(_DEF_PREFIX) :]
        for sub, _ in walk(schema)
        if isinstance(sub, dict) and isinstance(sub.get("$ref"), str) and sub["$ref"].startswith(_DEF_PREFIX)
    }


def closure_of_refs(defs: Mapping[str, Any], roots: Iterable[str]) -> set[str]:
    """The names of `roots` found in `defs`, and of every definition those refer to, directly or not."""
    needed: set[str] = set()
    pending = {root for root in roots if root in defs}
    while pending:
        current = pending.pop()
        if current not in needed and current in defs:
            needed.add(current)
            pending |= _refs(defs[current])
    return needed


def standalone(defs: dict[str, Any], name: str) -> Any:
    """defs[name] as a self-contained schema: every model it refers to carried in its own `$defs`."""
    needed = closure_of_refs(defs, _refs(defs[name]))
    root = copy_json(defs[name])
    if needed and isinstance(root, dict):
        root["$defs"] = {key: copy_json(defs[key]) for key in sorted(needed)}
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


def _refuses_null(schema: Any, defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> bool:
    """Whether null is invalid here: an explicit `type` without "null" (and no null in enum/const), an enum or
    const without null, a local `$ref` to a schema that refuses it, an `allOf` branch or every `anyOf`/`oneOf`
    branch that does."""
    if schema is False:
        return True
    if not isinstance(schema, dict):
        return False
    enum = schema.get("enum")
    if (isinstance(enum, list) and None not in enum) or schema.get("const", None) is not None:
        return True
    # Past the line above, a listed value (enum or const) is null.
    listed = isinstance(enum, list) or "const" in schema
    if "type" in schema and not listed:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if "null" not in types:
            return True
    ref = schema.get("$ref")
    local = isinstance(ref, str) and ref.startswith(_DEF_PREFIX) and ref not in seen
    if local and _refuses_null(defs.get(str(ref)[len(_DEF_PREFIX) :], True), defs, seen | {str(ref)}):
        return True
    for key in ("allOf", "anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            refusing = [_refuses_null(branch, defs, seen) for branch in branches]
            if any(refusing) if key == "allOf" else all(refusing):
                return True
    return False


def _as_class(schema: dict[str, Any], name: str, defs: dict[str, Any]) -> None:
    schema["title"] = name
    if isinstance(schema.get("description"), str):
        schema["description"] = _printable(schema["description"])
    properties = schema.get("properties")
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    if isinstance(properties, dict):
        # The model makes an optional field without a default `X | None`; JSON Schema refuses an explicit null
        # unless it says so. A field with a default is typed without None, which refuses null by itself.
        optional = [
            key
            for key, sub in properties.items()
            if key not in required and not (isinstance(sub, dict) and "default" in sub) and _refuses_null(sub, defs)
        ]
        if optional:
            schema[NOT_NULL_KEY] = optional


def strip_annotations_for_models(defs: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = copy_json(defs)
    for schema in result.values():
        for sub, _ in walk(schema):
            if isinstance(sub, dict):
                # A null default says no more than an absent optional field does, and a model field typed
                # without None (a default makes it so) could not hold it.
                if "default" in sub and (sub["default"] is None or not default_fits(sub)):
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


def _name_children(schema: Any, owner: str, names: NameRegistry, defs: dict[str, Any]) -> None:
    for sub, relative in children(schema, ()):
        if not isinstance(sub, dict):
            continue
        child_owner = owner
        if isinstance(sub.get("properties"), dict) and sub.get("properties") and "$ref" not in sub:
            child_owner = names.claim(owner + _label(relative))
            _as_class(sub, child_owner, defs)
        else:
            sub.pop("title", None)
            if relative[0] in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "prefixItems"):
                child_owner = owner + _label(relative)
        _name_children(sub, child_owner, names, defs)


def assign_class_names(
    defs: dict[str, Any], names: NameRegistry, lenient: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Give every object that becomes a class a title that is its unique, predictable class name.

    Models named in `lenient` (the canonical ones, fed by provider payloads that write absent fields
    as null) accept null for optional fields.
    """
    for name, schema in defs.items():
        if isinstance(schema, dict):
            _as_class(schema, name, defs)
            _name_children(schema, name, names, defs)
            if name in lenient:
                schema.pop(NOT_NULL_KEY, None)
    return defs
