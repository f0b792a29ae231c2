# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What the wires' detection predicates read of a body: its messages, their content blocks and tool calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def messages_of(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return (
        [m for m in messages if isinstance(m, dict)]
        if isinstance(messages, list)
        else []
    )


def blocks_of(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        b
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict)
    ]


def calls_of(
    messages: Iterable[Mapping[str, Any]], key: str = "tool_calls"
) -> list[dict[str, Any]]:
    return [
        c
        for m in messages
        if isinstance(m.get(key), list)
        for c in m[key]
        if isinstance(c, dict)
    ]


def usage_of(body: Mapping[str, Any]) -> Mapping[str, Any]:
    usage = body.get("usage")
    return usage if isinstance(usage, dict) else {}


def function_of(call: Mapping[str, Any]) -> Mapping[str, Any]:
    function = call.get("function")
    return function if isinstance(function, dict) else {}


def kind_of(payload: Mapping[str, Any]) -> str:
    kind = payload.get("type")
    return kind if isinstance(kind, str) else ""
