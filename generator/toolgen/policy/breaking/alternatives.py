"""A schema read as `breaking` compares it: `$ref`s followed, unions flattened into alternatives by JSON type."""

from __future__ import annotations

import json
import posixpath
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolgen.core.positions import Pointer
from toolgen.source.load import Document

# The JSON types a value can have, in the order findings name them; an integer is a number.
FAMILIES = ("null", "boolean", "object", "array", "string", "number")
TYPE_FAMILY: Mapping[str, str] = MappingProxyType({**{f: f for f in FAMILIES}, "integer": "number"})
# Keywords that describe a value without limiting it.
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    }
)
# Keywords that hold or name schemas without saying anything about the value.
CONTAINERS = frozenset({"$defs", "definitions", "$schema", "$id", "$anchor"})


@dataclass(frozen=True)
class Place:
    """Where a schema of the current side is written: the deepest pointer known exactly, and the node there."""

    pointer: Pointer
    node: Any
    exact: bool = True

    def step(self, *keys: str) -> Place:
        node, pointer = self.node, self.pointer
        if not self.exact:
            return self
        for key in keys:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return Place(pointer, None, False)
            pointer = (*pointer, key)
        return Place(pointer, node)


NOWHERE = Place((), None, False)


@dataclass(frozen=True)
class Side:
    """One schema of one side, and its identity: the bundled $def it sits in and the path inside it."""

    value: Any
    ident: Pointer


Branch = tuple[Side, Place]


def canonical(value: Any) -> str:
    """`value` as JSON text that is equal exactly when the values are (keys sorted)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def show(values: Iterable[Any]) -> str:
    """Values as a finding quotes them: JSON, comma-separated."""
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is an object, else an empty one (`true` and `false` are schemas too)."""
    return value if isinstance(value, dict) else {}


def resolve(side: Side, defs: Mapping[str, Any]) -> Side:
    """Follow `$ref`s into the bundled $defs; siblings of a `$ref` are kept."""
    value, ident = side.value, side.ident
    for _ in range(64):  # the bundler has refused chains that only loop
        ref = value.get("$ref") if isinstance(value, dict) else None
        target = defs.get(ref.removeprefix("#/$defs/")) if isinstance(ref, str) else None
        if ref is None or target is None:
            break
        siblings = {k: v for k, v in value.items() if k != "$ref"}
        value = {**target, **siblings} if isinstance(target, dict) else (siblings or target)
        # the same definition with other siblings (`maxLength` next to the `$ref`) is another schema
        own = {k: v for k, v in siblings.items() if k not in CONTAINERS}
        ident = (str(ref), canonical(own)) if own else (str(ref),)
    return Side(value, ident)


def local_target(document: Document, root: Pointer, ref: str) -> Place | None:
    """Where `ref`, written in the schema at `root` of `document`, points in the same file; None elsewhere."""
    file_part, _, fragment = ref.partition("#")
    display = document.display
    base = root
    if file_part:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(display), urllib.parse.unquote(file_part)))
        if target != display:
            return None  # another file: findings stay at the $ref
        base = ()
    fragment = urllib.parse.unquote(fragment)
    if fragment and not fragment.startswith("/"):
        return None
    parts = tuple(p.replace("~1", "/").replace("~0", "~") for p in fragment[1:].split("/")) if fragment else ()
    place = Place((), document.data).step(*base, *parts)
    return place if place.exact else None


def follow(document: Document, root: Pointer, place: Place) -> Place:
    """The place a `$ref` written at `place` leads to within the same file."""
    for _ in range(64):
        ref = place.node.get("$ref") if place.exact and isinstance(place.node, dict) else None
        if not isinstance(ref, str):
            return place
        target = local_target(document, root, ref)
        if target is None:
            return Place(place.pointer, None, False)
        place = target
    return place


def union_key(value: Any) -> str | None:
    """The keyword of a pure union (anyOf or oneOf with nothing but annotations beside it), else None."""
    if not isinstance(value, dict):
        return None
    keys = [k for k in ("anyOf", "oneOf") if isinstance(value.get(k), list)]
    rest = set(value) - {*keys, "default", *ANNOTATIONS}
    return keys[0] if len(keys) == 1 and not any(not k.startswith("x-") for k in rest) else None


def branches(document: Document, root: Pointer, side: Side, defs: Mapping[str, Any], place: Place) -> list[Branch]:
    """The alternatives of a schema: the members of a pure anyOf/oneOf (nested ones flattened), else itself."""
    pending, result, seen = [(side, place)], [], set()
    while pending:
        current, where = pending.pop(0)
        current, where = resolve(current, defs), follow(document, root, where)
        key = union_key(current.value)
        if key is None or current.ident in seen:
            result.append((current, where))
            continue
        seen.add(current.ident)
        members = [
            (Side(member, (*current.ident, key, str(i))), where.step(key, str(i)))
            for i, member in enumerate(current.value[key])
        ]
        pending[0:0] = members
    return result


def declared_types(schema: Any) -> list[str]:
    """The type names a schema's `type` keyword lists, whether it is written as a string or a list."""
    kinds = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kinds, str):
        return [kinds]
    return [k for k in kinds if isinstance(k, str)] if isinstance(kinds, list) else []


def integer_only(schema: dict[str, Any]) -> bool:
    """True when the schema allows integers but not every number."""
    types = declared_types(schema)
    return "integer" in types and "number" not in types


def value_family(value: Any) -> str:
    """The JSON type of a value, as in FAMILIES."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "boolean"
    kinds = {dict: "object", list: "array", str: "string"}
    return next((name for kind, name in kinds.items() if isinstance(value, kind)), "number")


def listed_values(schema: Any) -> list[Any] | None:
    """The values `const`/`enum` allow (that fit `type`), or None when they do not restrict the schema."""
    if not isinstance(schema, dict) or ("const" not in schema and not isinstance(schema.get("enum"), list)):
        return None
    values = [schema["const"]] if "const" in schema else list(schema["enum"])
    if isinstance(schema.get("enum"), list) and "const" in schema:
        values = [v for v in values if canonical(v) in {canonical(e) for e in schema["enum"]}]
    types = {TYPE_FAMILY.get(t, t) for t in declared_types(schema)}
    return [v for v in values if not types or value_family(v) in types]


def families(schema: Any) -> list[str]:
    """The JSON types a schema allows, by its `type` and its `const`/`enum` values, in FAMILIES order."""
    if schema is False:
        return []
    types = {TYPE_FAMILY[t] for t in declared_types(schema) if t in TYPE_FAMILY}
    values = listed_values(schema)
    allowed = {value_family(v) for v in values} if values is not None else set(FAMILIES)
    return [f for f in FAMILIES if f in allowed and (not types or f in types)]


def value_only(schema: Any) -> bool:
    """True when the schema is a set of values (`const`/`enum`) and says nothing else that limits them."""
    rest = set(as_dict(schema)) - {"type", "enum", "const", "default", *ANNOTATIONS}
    return listed_values(schema) is not None and not any(not k.startswith("x-") for k in rest)


def by_family(alternatives: Iterable[Branch]) -> dict[str, list[Branch]]:
    """The alternatives grouped by each JSON type they allow."""
    groups: dict[str, list[Branch]] = {}
    for branch in alternatives:
        for family in families(branch[0].value):
            groups.setdefault(family, []).append(branch)
    return groups
