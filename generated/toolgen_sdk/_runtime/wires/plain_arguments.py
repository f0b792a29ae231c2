# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Whether a decoded call's arguments object reads back as it came, so that the short ways of decoding keep
nothing of it: told by its types where it can be, by writing and reading it again where it cannot."""

from __future__ import annotations

from math import isnan
from typing import Any

from .helpers import args_object, args_text


def plain_arguments(given: dict[str, Any]) -> str | None:
    """`args_text(given)` when that text reads back as `given`, so that a decoded call keeps nothing of its
    arguments; None when it would not (NaN, non-string keys, tuples) or cannot be written at all."""
    try:
        text = args_text(given)
    except (TypeError, ValueError, RecursionError):
        return None
    # Values of JSON's own types read back as they are: told by their types, at a third of reading the text.
    if _json_typed_object(given):
        return text
    try:
        return text if args_object(text, "") == given else None
    except (TypeError, ValueError, RecursionError):
        return None


# Deeper values are told by reading their text back, which has its own limit.
_TYPED_DEPTH = 32


def _json_typed_object(value: dict[str, Any]) -> bool:
    # Flat arguments (the most common) are told without a call per value.
    for key, item in value.items():
        if type(key) is not str:
            return False
        kind = type(item)
        if not (kind is str or kind is int or kind is bool or item is None) and (
            not _json_typed(item, 1)
        ):
            return False
    return True


def _json_typed(value: Any, depth: int) -> bool:
    """Whether `value` is made of JSON's types only (exact str, int, bool, None, a float that is no NaN, lists,
    and dicts with string keys), so that its JSON text reads back equal to it."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return not isnan(value)  # a NaN reads back as a NaN, which equals nothing
    if depth > _TYPED_DEPTH:
        return False
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not _json_typed(item, depth + 1):
                return False
        return True
    if kind is list:
        return all(_json_typed(item, depth + 1) for item in value)
    return False
