# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A small value that a JSON Schema accepts: the arguments the offline scripted model sends to a tool."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from .matcher import PATTERN_SECONDS, PatternMatcher, search_within

# Values for the formats tools use most, each one the format's own example of a valid value.
_FORMATS = {
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "12:00:00Z",
    "duration": "P1D",
    "uri": "https://example.com",
    "iri": "https://example.com",
    "url": "https://example.com",
    "uri-reference": "https://example.com",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
# Tried in turn against a `pattern`; a pattern none of them fits gets the first (or the format's example).
_CANDIDATES = (
    "example",
    "EXAMPLE",
    "Example",
    "1",
    "12345",
    "a",
    "A",
    "AB-123456",
    "abc123",
    "2024-01-01",
    "user@example.com",
    "https://example.com",
)
_SCALARS = {"string": "example", "boolean": False, "null": None}
# Deeper than any real tool's arguments: a recursive schema stops here with its smallest value.
_MAX_DEPTH = 16


def example_value(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A value `schema` accepts, built from its default, const, enum, examples, format and bounds.

    Local `$ref`s (`#/$defs/...`) are followed inside `root` (default: the schema itself). Objects get their
    required properties only; what a schema cannot say simply (`not`, a pattern no candidate fits) is a best
    effort, since the value is an example, not a proof.
    """
    root = schema if root is None else root
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return None if schema is False else {}
    if "$ref" in schema:
        target = _resolve(str(schema["$ref"]), root)
        if target is not None:
            return example_value(target, root, depth + 1)
    for keyword in ("const", "default"):
        if keyword in schema:
            return schema[keyword]
    for keyword in ("enum", "examples"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            return schema[keyword][0]
    if isinstance(schema.get("allOf"), list):
        merged = _merged([schema, *schema["allOf"]], root)
        return example_value(merged, root, depth + 1)
    for keyword in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(keyword) or () if isinstance(b, Mapping)]
        if branches:
            chosen = next((b for b in branches if b.get("type") != "null"), branches[0])
            return example_value(
                {**_without(schema, keyword), **chosen}, root, depth + 1
            )
    kind = _kind(schema)
    if kind == "object":
        properties = schema.get("properties") or {}
        required = [str(name) for name in schema.get("required") or ()]
        return {
            name: example_value(properties.get(name, {}), root, depth + 1)
            for name in required
        }
    if kind == "array":
        return _array(schema, root, depth)
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "string":
        return _string(schema)
    return _SCALARS.get(kind, "example")


def _kind(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if isinstance(kind, str):
        return kind
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return "string"


def _resolve(ref: str, root: Any) -> Any:
    if not ref.startswith("#"):
        return None
    node = root
    for part in ref[1:].split("/")[1:]:
        # A JSON pointer in a URI fragment: percent-decoded first (RFC 6901, 6).
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def _without(schema: Mapping[str, Any], keyword: str) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != keyword}


def _merged(branches: list[Any], root: Any) -> dict[str, Any]:
    """The `allOf` branches as one schema: properties and required lists joined, other keywords the last's."""
    merged: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for branch in branches:
        if isinstance(branch, Mapping) and "$ref" in branch:
            branch = _resolve(str(branch["$ref"]), root) or {}
        if not isinstance(branch, Mapping):
            continue
        merged.update(_without(branch, "allOf"))
        properties.update(branch.get("properties") or {})
        required += [r for r in branch.get("required") or () if r not in required]
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = required
    return merged


def _array(schema: Mapping[str, Any], root: Any, depth: int) -> list[Any]:
    prefix = [
        example_value(item, root, depth + 1) for item in schema.get("prefixItems") or ()
    ]
    items = schema.get("items")
    wanted = int(schema.get("minItems") or 0)
    if isinstance(items, list):  # draft-07 tuple form
        prefix = [example_value(item, root, depth + 1) for item in items]
        items = schema.get("additionalItems", {})
    value = prefix[: max(wanted, len(prefix))]
    while len(value) < wanted:
        item = example_value(items if items is not None else {}, root, depth + 1)
        if schema.get("uniqueItems") and isinstance(item, (int, float)):
            item = item + len(value)
        elif schema.get("uniqueItems") and isinstance(item, str):
            item = f"{item}{len(value) or ''}"
        value.append(item)
    return value


def _bound(value: Any) -> float | None:
    return (
        value
        if isinstance(value, (int, float)) and not isinstance(value, bool)
        else None
    )


def _number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    """The first of a few candidates (1 and the values at and between the bounds) that every bound allows."""
    low, high = _bound(schema.get("minimum")), _bound(schema.get("maximum"))
    above, below = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    # Draft 4 spells an exclusive bound as `minimum` plus `exclusiveMinimum: true`.
    above = low if above is True else _bound(above)
    below = high if below is True else _bound(below)
    step = _bound(schema.get("multipleOf"))

    def allowed(value: float) -> bool:
        return (
            (low is None or value >= low)
            and (high is None or value <= high)
            and (above is None or value > above)
            and (below is None or value < below)
            and (not step or math.isclose(value / step, round(value / step)))
            and (not integer or float(value).is_integer())
        )

    edges = [b for b in (low, above, high, below) if b is not None]
    candidates: list[float] = [1, 0]
    for edge in edges:
        candidates += [edge, edge + 1, edge - 1, math.ceil(edge), math.floor(edge)]
        if step:
            candidates += [
                math.ceil(edge / step) * step,
                (math.ceil(edge / step) + 1) * step,
            ]
    if len(edges) >= 2:
        candidates.append((min(edges) + max(edges)) / 2)
    value = next((c for c in candidates if allowed(c)), 1)
    return int(value) if float(value).is_integer() else value


def _string(schema: Mapping[str, Any]) -> str:
    """The format's example or a candidate, repeated or cut to the length bounds, that fits the pattern."""
    low, high = schema.get("minLength"), schema.get("maxLength")
    low = low if isinstance(low, int) else 0
    high = high if isinstance(high, int) else None

    def sized(text: str) -> str:
        if len(text) < low:
            text = (text * (low // len(text) + 1))[:low]
        return text if high is None else text[:high]

    formatted = _FORMATS.get(str(schema.get("format", "")))
    candidates = [sized(c) for c in ((formatted,) if formatted else ()) + _CANDIDATES]
    pattern = schema.get("pattern")
    if not isinstance(pattern, str):
        return candidates[0]
    matcher = PatternMatcher(pattern)
    deadline = time.monotonic() + PATTERN_SECONDS
    return next(
        (c for c in candidates if search_within(matcher, c, deadline)), candidates[0]
    )
