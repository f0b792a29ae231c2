"""Where the subschemas of a JSON Schema are: one table of keywords, shared by every stage that walks schemas."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from toolgen.positions import Pointer
from toolgen.runtime import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_SINGLES

# Every keyword that can hold a subschema: most schemas (a string property, say) hold none, and are passed by one
# set test rather than a look-up per keyword.
_SCHEMA_KEYWORDS = frozenset((*SCHEMA_MAPS, *SCHEMA_LISTS, "items", *SCHEMA_SINGLES))


def children(schema: Any, pointer: Pointer) -> Iterator[tuple[Any, Pointer]]:
    """Direct subschemas of `schema` with their pointers; non-schema values are skipped."""
    if not isinstance(schema, dict) or _SCHEMA_KEYWORDS.isdisjoint(schema):
        return
    for key in SCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                yield sub, (*pointer, key, name)
    for key in SCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            for index, sub in enumerate(value):
                yield sub, (*pointer, key, str(index))
    items = schema.get("items")
    if isinstance(items, list):  # draft-07 tuple form
        for index, sub in enumerate(items):
            yield sub, (*pointer, "items", str(index))
    elif isinstance(items, (dict, bool)):
        yield items, (*pointer, "items")
    for key in SCHEMA_SINGLES:
        if key in schema and isinstance(schema[key], (dict, bool)):
            yield schema[key], (*pointer, key)


def walk(schema: Any, pointer: Pointer = ()) -> Iterator[tuple[Any, Pointer]]:
    """Every subschema, parents before children, in document order."""
    stack = [(schema, pointer)]
    while stack:
        current, where = stack.pop()
        yield current, where
        stack.extend(reversed(list(children(current, where))))


def map_children(schema: Any, transform: Callable[[Any, tuple[str, ...]], Any]) -> Any:
    """A shallow copy of `schema` whose direct subschemas are replaced by `transform(sub, relative_pointer)`."""
    if not isinstance(schema, dict):
        return schema
    result = dict(schema)
    for sub, relative in children(schema, ()):
        container: Any = result
        for part in relative[:-1]:
            copied = dict(container[part]) if isinstance(container[part], dict) else list(container[part])
            container[part] = copied
            container = copied
        last = relative[-1]
        if isinstance(container, list):
            container[int(last)] = transform(sub, relative)
        else:
            container[last] = transform(sub, relative)
    return result
