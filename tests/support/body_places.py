"""Every place of a JSON body, and the body with one place's value swapped: for tests that plant hostile values."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any


def places(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The route (keys and indexes) to every value below `value`, parents before children."""
    if at:
        yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*at, index))


def with_value(body: Any, at: tuple[Any, ...], new: Any) -> Any:
    """A deep copy of `body` whose value at `at` is `new`."""
    changed = copy.deepcopy(body)
    parent = changed
    for step in at[:-1]:
        parent = parent[step]
    parent[at[-1]] = new
    return changed
