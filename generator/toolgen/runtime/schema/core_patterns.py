# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A pydantic core schema's string patterns bounded: the walk, which imports the pattern machinery only once it
meets a pattern (a model without one, as most canonical ones are, builds without it)."""

from __future__ import annotations

from typing import Any

# Keys of a core schema that hold no schema to validate with: a default or a literal is data, never rewritten.
_NOT_SCHEMAS = frozenset({"metadata", "serialization", "default", "expected"})


def bounded_core_schema(schema: Any, seconds: float | None = None) -> Any:
    """A pydantic core schema with every string pattern checked in bounded time (`seconds` for a whole check,
    PATTERN_SECONDS when None), changed in place.

    A pattern Rust's regex reads as Python's re does is matched there (`regex_engine: rust-regex`, whatever the
    model's config says); any other becomes an after-validator of the string on the bounded backtracker, which
    raises pydantic's own `string_pattern_mismatch`. Applying it twice changes nothing more.
    """
    matchers: dict[str, Any] = {}
    seen: set[int] = set()
    pending = [schema]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, list):
            pending.extend(item for item in node if isinstance(item, (dict, list)))
            continue
        if not isinstance(node, dict):
            continue
        if node.get("type") == "str" and isinstance(node.get("pattern"), str):
            from .patterns import PATTERN_SECONDS, bound_pattern

            bound_pattern(
                node, matchers, PATTERN_SECONDS if seconds is None else seconds
            )
        pending.extend(
            value
            for key, value in node.items()
            if key not in _NOT_SCHEMAS and isinstance(value, (dict, list))
        )
    return schema
