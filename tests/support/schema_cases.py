"""Random JSON Schemas within toolgen's keywords, and values near their edges, for agreement tests with jsonschema.

Schemas come from a seeded `random.Random`, so one build serves a whole test run; values come from hypothesis
strategies (or a fixed sweep) built from each schema, so a disagreement shrinks to a small value.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

STRINGS = ("", "a", "b", "ab", "abc", "A", "1", "12", "é", "🙂", "a b", "zzz")
NUMBERS = (0, 1, -1, 2, 3, 5, 10, 0.5, 1.5, -2.5, 100, 1.0, 2.0)
PATTERNS = ("^a", "b", "^[a-z]+$", "^\\d+$", "a|b", "^$", "^.{2}$")
# Property names: plain, ones Python cannot use as they are, ones pydantic and the models use themselves.
NAMES = ("a", "b", "c", "a-b", "x y", "1st", "class", "model_config", "root")
TYPES = ("string", "integer", "number", "boolean", "null", "array", "object")
FORMATS = ("date-time", "email", "uuid", "uri", "int32")
# Keywords that apply to one JSON type only, with values to give them.
TYPE_KEYWORDS: dict[str, tuple[tuple[str, tuple[Any, ...]], ...]] = {
    "string": (("minLength", (0, 1, 2, 3)), ("maxLength", (0, 1, 2, 3)), ("pattern", PATTERNS)),
    "number": (
        ("minimum", (0, 1, 2, -1, 1.5)),
        ("maximum", (0, 1, 2, 10, 2.5)),
        ("exclusiveMinimum", (0, 1, -1, 0.5)),
        ("exclusiveMaximum", (1, 2, 10, 2.5)),
        ("multipleOf", (2, 0.5, 3)),
    ),
    "array": (("minItems", (0, 1, 2)), ("maxItems", (0, 1, 2)), ("uniqueItems", (True, False))),
    "object": (("minProperties", (0, 1, 2)), ("maxProperties", (0, 1, 2))),
}
TYPE_KEYWORDS["integer"] = TYPE_KEYWORDS["number"]


def scalar(rng: random.Random) -> Any:
    """A value of any JSON type, small."""
    pick = rng.randrange(6)
    if pick == 0:
        return rng.choice(STRINGS)
    if pick == 1:
        return rng.choice(NUMBERS)
    if pick == 2:
        return rng.choice((True, False))
    if pick == 3:
        return None
    if pick == 4:
        return [rng.choice(STRINGS)] if rng.random() < 0.5 else []
    return {rng.choice(NAMES): rng.choice(STRINGS)} if rng.random() < 0.5 else {}


def _enum(rng: random.Random, kind: str | None) -> list[Any]:
    """Enum values: mostly of `kind`, sometimes of other types (what the build must notice)."""
    size = rng.randrange(1, 4)
    if kind == "string" or (kind is None and rng.random() < 0.5):
        values: list[Any] = rng.sample(STRINGS, size)
    elif kind in ("integer", "number"):
        values = rng.sample(NUMBERS, size)
    else:
        values = [scalar(rng) for _ in range(size)]
    if rng.random() < 0.3:
        values[rng.randrange(size)] = rng.choice((*STRINGS, *NUMBERS, None, True))
    unique: list[Any] = []
    for value in values:
        if not any(value == seen and type(value) is type(seen) for seen in unique):
            unique.append(value)
    return unique


def schema(rng: random.Random, depth: int, defs: tuple[str, ...] = ()) -> Any:
    """One subschema; `defs` are the names a $ref may point to."""
    roll = rng.random()
    if roll < 0.03:
        return rng.choice((True, {}))
    if defs and roll < 0.1:
        node: dict[str, Any] = {"$ref": f"#/$defs/{rng.choice(defs)}"}
        if rng.random() < 0.3:
            node["description"] = "a reference"
        return node
    if depth > 0 and roll < 0.22:
        key = rng.choice(("anyOf", "anyOf", "oneOf", "allOf"))
        node = {key: [schema(rng, depth - 1, defs) for _ in range(rng.randrange(1, 4))]}
        if rng.random() < 0.2:
            node["type"] = rng.choice(TYPES)
        return node
    if depth > 0 and roll < 0.25:
        return {"not": schema(rng, depth - 1, defs)}
    if roll < 0.3:
        node = {"enum": _enum(rng, None)}
        if depth > 0 and rng.random() < 0.15:
            # An array's or object's keywords beside an enum without a type: the enum alone decides.
            node[rng.choice(("items", "additionalProperties"))] = schema(rng, depth - 1, defs)
        return node
    if roll < 0.34:
        return {"const": scalar(rng)}
    kinds = [rng.choice(TYPES)]
    if rng.random() < 0.2:
        kinds.append(rng.choice(TYPES))
    if rng.random() < 0.1:
        kinds.append("null")
    kinds = list(dict.fromkeys(kinds))
    node = {"type": kinds[0] if len(kinds) == 1 and rng.random() < 0.8 else kinds}
    main = kinds[0]
    for kind in kinds:
        for keyword, choices in TYPE_KEYWORDS.get(kind, ()):
            if rng.random() < 0.25:
                node[keyword] = rng.choice(choices)
    if rng.random() < 0.08:
        # A keyword of another type than the one declared: JSON Schema ignores it.
        other = rng.choice(sorted(TYPE_KEYWORDS))
        keyword, choices = rng.choice(TYPE_KEYWORDS[other])
        node[keyword] = rng.choice(choices)
    if rng.random() < 0.2:
        node["enum"] = _enum(rng, main)
    if rng.random() < 0.04:
        node["const"] = scalar(rng)
    if rng.random() < 0.08:
        node["format"] = rng.choice(FORMATS)
    if "array" in kinds and depth > 0 and rng.random() < 0.8:
        node["items"] = schema(rng, depth - 1, defs)
    if "object" in kinds and depth > 0:
        _object(rng, node, depth, defs)
    if depth > 0 and rng.random() < 0.06:
        # Items or properties on a type that has none: JSON Schema ignores them, so the models must too.
        if "array" not in kinds:
            node["items"] = schema(rng, depth - 1, defs)
        elif "object" not in kinds:
            _object(rng, node, depth, defs)
    if rng.random() < 0.1:
        node["description"] = "described"
    return node


def _object(rng: random.Random, node: dict[str, Any], depth: int, defs: tuple[str, ...]) -> None:
    names = rng.sample(NAMES, rng.randrange(0, 4))
    if names or rng.random() < 0.5:
        node["properties"] = {name: schema(rng, depth - 1, defs) for name in names}
    required = [name for name in names if rng.random() < 0.4]
    if required:
        node["required"] = required
    roll = rng.random()
    if roll < 0.3:
        node["additionalProperties"] = False
    elif roll < 0.4:
        node["additionalProperties"] = schema(rng, depth - 1, defs)


def input_schema(rng: random.Random) -> Any:
    """A tool's input schema: mostly an object with properties, sometimes anything, sometimes with $defs."""
    defs = {f"D{i}": schema(rng, 1) for i in range(rng.randrange(0, 3))}
    if rng.random() < 0.8:
        root: dict[str, Any] = {"type": "object"}
        _object(rng, root, 3, tuple(defs))
    else:
        found = schema(rng, 3, tuple(defs))
        root = found if isinstance(found, dict) else {"anyOf": [found]}
    if defs:
        root["$defs"] = defs
    return root


def input_schemas(seed: int, count: int) -> list[Any]:
    rng = random.Random(seed)
    return [input_schema(rng) for _ in range(count)]


# -- values ---------------------------------------------------------------------------------------------


def _resolved(node: Any, root: Any) -> Any:
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        return root.get("$defs", {}).get(node["$ref"].rsplit("/", 1)[-1], {})
    return node


def _near_numbers(node: dict[str, Any]) -> list[Any]:
    found: list[Any] = []
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        value = node.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found.extend((value, value - 1, value + 1, value + 0.5, float(value)))
    return found


def _near_strings(node: dict[str, Any]) -> list[str]:
    found = []
    for key in ("minLength", "maxLength"):
        value = node.get(key)
        if isinstance(value, int):
            found.extend("x" * n for n in (max(value - 1, 0), value, value + 1))
    return found


def values(node: Any, root: Any, depth: int = 3) -> st.SearchStrategy[Any]:
    """Values near what `node` accepts and refuses: its enum, its limits, its properties, null, and anything."""
    node = _resolved(node, root)
    anything = st.sampled_from((*STRINGS, *NUMBERS, True, False, None, [], {}, ["a"], {"a": 1}))
    if not isinstance(node, dict) or depth <= 0:
        return anything
    options: list[st.SearchStrategy[Any]] = [anything]
    listed = [v for key in ("enum", "const") for v in (node.get(key) if key == "enum" else [node.get(key)]) or ()]
    if listed and isinstance(node.get("enum", []), list):
        options.append(st.sampled_from(listed))
    near = [*_near_numbers(node), *_near_strings(node)]
    if near:
        options.append(st.sampled_from(near))
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(key) or ():
            options.append(values(branch, root, depth - 1))
    if isinstance(node.get("not"), (dict, bool)):
        options.append(values(node["not"], root, depth - 1))
    items = node.get("items")
    if items is not None:
        options.append(st.lists(values(items, root, depth - 1), max_size=3))
    properties = node.get("properties")
    if isinstance(properties, dict) or "additionalProperties" in node:
        known = properties if isinstance(properties, dict) else {}
        fields = {name: values(sub, root, depth - 1) | st.none() for name, sub in known.items()}
        extra = values(node.get("additionalProperties", {}), root, depth - 1)
        options.append(
            st.builds(
                lambda chosen, more: {**chosen, **more},
                st.fixed_dictionaries({}, optional=fields),
                st.dictionaries(st.sampled_from(("zz", "a", "b", "a_b")), extra, max_size=2),
            )
        )
    return st.one_of(options)
