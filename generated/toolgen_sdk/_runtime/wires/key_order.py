# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The key order of a recorded body, kept as `extras.<wire>.order` so encoding to that wire writes it back."""

from __future__ import annotations

from typing import Any

from .canonical import Request, Response

ORDER = "order"
# A body deeper than this keeps its order only down to here: the rest comes back in the encoder's order.
_DEPTH = 64


def key_order(body: Any) -> dict[str, list[str]]:
    """Per JSON pointer of every object in `body` holding two or more keys, its keys in the order given."""
    found: dict[str, list[str]] = {}
    _walk(body, "", found, 0)
    return found


def _walk(value: Any, pointer: str, found: dict[str, list[str]], depth: int) -> None:
    if depth > _DEPTH:
        return
    if isinstance(value, dict):
        if len(value) > 1:
            found[pointer] = [str(key) for key in value]
        for key, item in value.items():
            _walk(item, f"{pointer}/{_escaped(str(key))}", found, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, f"{pointer}/{i}", found, depth + 1)


def _escaped(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def in_order(body: Any, order: Any) -> Any:
    """`body` with each object's keys in the recorded order; keys the record does not name follow in the
    encoder's order. A record that is not one (edited by hand) changes nothing."""
    if not isinstance(order, dict) or not order:
        return body
    return _ordered(body, "", order, 0)


def _ordered(value: Any, pointer: str, order: dict[str, Any], depth: int) -> Any:
    if depth > _DEPTH:
        return value
    if isinstance(value, dict):
        keys = order.get(pointer)
        named = [key for key in keys if key in value] if isinstance(keys, list) else []
        ranked = list(dict.fromkeys([*named, *value]))
        return {
            key: _ordered(
                value[key], f"{pointer}/{_escaped(str(key))}", order, depth + 1
            )
            for key in ranked
        }
    if isinstance(value, list):
        return [
            _ordered(item, f"{pointer}/{i}", order, depth + 1)
            for i, item in enumerate(value)
        ]
    return value


def with_order(result: Request | Response, body: Any, wire: str) -> None:
    """Record `body`'s key order in `result.extras[wire]` (the wire it was read from)."""
    order = key_order(body)
    if not order:
        return
    kept = result.extras.get(wire)
    if kept is None:
        kept = result.extras[wire] = {}
    if isinstance(kept, dict):
        kept[ORDER] = order


def recorded_order(extras: Any, wire: str) -> Any:
    """The key order recorded for `wire` in `extras`, or None."""
    kept = extras.get(wire) if isinstance(extras, dict) else None
    return kept.get(ORDER) if isinstance(kept, dict) else None
