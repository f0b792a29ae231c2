"""A deep copy of plain JSON data (dicts, lists, scalars), several times faster than `copy.deepcopy`."""

from __future__ import annotations

import json
from typing import Any


def copy_json(value: Any) -> Any:
    """`value` with every dict and list copied; scalars are immutable and shared. Unlike `copy.deepcopy`, an
    object reached twice is copied twice, which plain JSON never needs."""
    if isinstance(value, dict):
        return {key: copy_json(item) if isinstance(item, (dict, list)) else item for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) if isinstance(item, (dict, list)) else item for item in value]
    return value


def freeze(value: Any) -> str:
    """Compact JSON text keeping the schema author's key order, which loading makes the same everywhere."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def thaw(text: str | None) -> Any:
    return None if text is None else json.loads(text)
