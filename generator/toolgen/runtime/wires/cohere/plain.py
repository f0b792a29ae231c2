# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Cohere conversations that keep little, the short way: to canonical messages without the per-message key sets,
block skeletons and call entries `cohere` builds for the rest.

`decode_plain` gives exactly what the long way gives, or None, and then the caller takes the long way: so a
body the long way would refuse, or keep more of, is always its business.
"""

from __future__ import annotations

from typing import Any

from ..canonical import ToolCall
from ..helpers import assistant_content

WIRE = "cohere"
# A tuple, not a set: a role may be any value, unhashable too.
_ROLES = ("system", "user")


def decode_plain(raw: list[Any]) -> list[dict[str, Any]] | None:
    """The canonical messages of a conversation of string contents, text blocks, calls with text arguments and
    results, no other keys, as `cohere._decode_messages` gives them (with the marks of a missing or string
    assistant content); None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other.
    messages: list[dict[str, Any]] = []
    for msg in raw:
        if type(msg) is not dict:
            return None
        role, size = msg.get("role"), len(msg)
        if role == "assistant":
            out = _plain_assistant(msg, size)
            if out is None:
                return None
            messages.append(out)
            continue
        content = msg.get("content")
        if type(content) is not str:
            return None
        if role in _ROLES and size == 2:
            messages.append({"role": role, "content": content})
        elif role == "tool" and size == 3:
            call_id = msg.get("tool_call_id")
            if type(call_id) is not str:
                return None
            messages.append(
                {"role": "tool", "content": content, "tool_call_id": call_id}
            )
        else:
            return None
    return messages


def _plain_assistant(msg: dict[str, Any], size: int) -> dict[str, Any] | None:
    kept: dict[str, Any] = {}
    known = 1
    parts: list[dict[str, Any]] = []
    if "content" not in msg:
        kept["omit_content"] = True
    else:
        known += 1
        content = msg["content"]
        if type(content) is str:
            kept["content_string"] = True
            if content:
                parts.append({"type": "text", "text": content})
        elif type(content) is list:
            for block in content:
                if (
                    type(block) is not dict
                    or len(block) != 2
                    or block.get("type") != "text"
                ):
                    return None
                text = block.get("text")
                if type(text) is not str:
                    return None
                parts.append({"type": "text", "text": text})
        elif content is not None:
            return None
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(parts)}
    if "tool_calls" in msg:
        known += 1
        calls = _plain_calls(msg["tool_calls"])
        if calls is None:
            return None
        out["tool_calls"] = calls
    if size != known:
        return None
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _plain_calls(raw: Any) -> list[dict[str, Any]] | None:
    if type(raw) is not list:
        return None
    calls = []
    for entry in raw:
        if (
            type(entry) is not dict
            or len(entry) != 3
            or entry.get("type") != "function"
        ):
            return None
        call_id, fn = entry.get("id"), entry.get("function")
        if type(call_id) is not str or type(fn) is not dict or len(fn) != 2:
            return None
        name, arguments = fn.get("name"), fn.get("arguments")
        if type(name) is not str or type(arguments) is not str:
            return None
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    return calls


def encode_plain(messages: list[Any]) -> list[dict[str, Any]] | None:
    """The wire messages of a conversation that keeps nothing (no extras, string or no contents, calls, results),
    as `cohere._encode_message` writes them; None for anything else, and for anything it would refuse."""
    out: list[dict[str, Any]] = []
    try:
        for msg in messages:
            if type(msg) is not dict or "extras" in msg:
                return None
            role = msg.get("role")
            if role == "assistant":
                wire = _wire_assistant(msg)
                if wire is None:
                    return None
                out.append(wire)
                continue
            content = msg.get("content", "")
            if type(content) is not str:
                return None
            if role in _ROLES:
                out.append({"role": role, "content": content})
            elif role == "tool":
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": msg["tool_call_id"],
                        "content": content,
                    }
                )
            else:
                return None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None
    return out


def _wire_assistant(msg: dict[str, Any]) -> dict[str, Any] | None:
    content, calls = msg.get("content"), msg.get("tool_calls")
    wire: dict[str, Any] = {"role": "assistant"}
    if type(content) is str:
        # Canonical text goes out as a text block: only a decoded string content is sent back as a string.
        wire["content"] = [{"type": "text", "text": content}]
    elif content is not None:
        return None
    elif not calls:
        wire["content"] = []
    if calls is not None:
        wire["tool_calls"] = [_wire_call(call) for call in calls]
    return wire


def _wire_call(call: ToolCall) -> dict[str, Any]:
    fn = call["function"]
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": fn["name"], "arguments": fn["arguments"]},
    }
