"""Where the subschemas of a JSON Schema are: one table of keywords, shared by every stage that walks schemas."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any

from toolgen.core.positions import Pointer
from toolgen.runtime import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_SINGLES

# Every keyword that can hold a subschema, in the order `children` yields them, with what its value holds: most
# schemas (a string property, say) hold none, and are passed by one set operation rather than a look-up per keyword.
_MAP, _LIST, _ITEMS, _SINGLE = range(4)
_ORDER = (
    *((key, _MAP) for key in SCHEMA_MAPS),
    *((key, _LIST) for key in SCHEMA_LISTS),
    ("items", _ITEMS),
    *((key, _SINGLE) for key in SCHEMA_SINGLES),
)
_KIND = MappingProxyType(dict(_ORDER))
_RANK = MappingProxyType({key: rank for rank, (key, _) in enumerate(_ORDER)})
_SCHEMA_KEYWORDS = frozenset(_KIND)


def children(schema: Any, pointer: Pointer) -> Iterator[tuple[Any, Pointer]]:
    """Direct subschemas of `schema` with their pointers; non-schema values are skipped."""
    if not isinstance(schema, dict):
        return
    present = _SCHEMA_KEYWORDS.intersection(schema)
    if not present:
        return
    for key in present if len(present) == 1 else sorted(present, key=_RANK.__getitem__):
        value = schema[key]
        kind = _KIND[key]
        if kind == _MAP:
            if isinstance(value, dict):
                for name, sub in value.items():
                    yield sub, (*pointer, key, name)
        elif kind == _LIST or (kind == _ITEMS and isinstance(value, list)):  # `items` as a list: draft-07 tuples
            if isinstance(value, list):
                for index, sub in enumerate(value):
                    yield sub, (*pointer, key, str(index))
        elif isinstance(value, (dict, bool)):
            yield value, (*pointer, key)


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


def node_at(data: Any, pointer: Pointer) -> tuple[bool, Any]:
    """Whether `pointer` leads somewhere in `data`, and what is there."""
    current = data
    for part in pointer:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current
