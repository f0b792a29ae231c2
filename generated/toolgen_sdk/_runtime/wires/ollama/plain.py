# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Ollama conversations that keep nothing, the short way: to canonical messages without the per-message key
sets, kept fields and call entries `ollama` builds for the rest.

`decode_plain` gives exactly what the long way gives, or None, and then the caller takes the long way: so a
body the long way would refuse, or keep something of, is always its business.
"""

from __future__ import annotations

from typing import Any

from ..canonical import ToolCall
from ..helpers import args_object
from ..plain_arguments import plain_arguments

# A tuple, not a set: a role may be any value, unhashable too.
_ROLES = ("system", "user")


def decode_plain(raw: list[Any]) -> list[dict[str, Any]] | None:
    """The canonical messages of a conversation that keeps nothing (string contents, calls with ids and object
    arguments, results naming their call, no other keys), as `ollama._decode_messages` gives them; None for
    anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other.
    messages: list[dict[str, Any]] = []
    for msg in raw:
        if type(msg) is not dict:
            return None
        role, content = msg.get("role"), msg.get("content")
        if type(content) is not str:
            return None
        size = len(msg)
        if role in _ROLES and size == 2:
            messages.append({"role": role, "content": content})
        elif role == "tool":
            call_id, name = msg.get("tool_call_id"), msg.get("tool_name")
            # A result without an id is paired by the long way, which may make one up.
            if type(call_id) is not str or not call_id:
                return None
            out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id}
            if size == 4 and type(name) is str:
                out["name"] = name
            elif size != 3:
                return None
            out["content"] = content
            messages.append(out)
        elif role == "assistant":
            out = {"role": "assistant", "content": content or None}
            if size == 3:
                calls = _plain_calls(msg.get("tool_calls"))
                if calls is None:
                    return None
                out["tool_calls"] = calls
            elif size != 2:
                return None
            messages.append(out)
        else:
            return None
    return messages


def _plain_calls(raw: Any) -> list[dict[str, Any]] | None:
    if type(raw) is not list:
        return None
    calls = []
    for entry in raw:
        if type(entry) is not dict or len(entry) != 2:
            return None
        call_id, fn = entry.get("id"), entry.get("function")
        if (
            type(call_id) is not str
            or not call_id
            or type(fn) is not dict
            or len(fn) != 2
        ):
            return None
        name, given = fn.get("name"), fn.get("arguments")
        if type(name) is not str or type(given) is not dict:
            return None
        arguments = plain_arguments(given)
        # Arguments that do not read back as they came (NaN, non-string keys) are kept by the long way.
        if arguments is None:
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
    as `ollama._encode_message` writes them; None for anything else, and for anything it would refuse."""
    out: list[dict[str, Any]] = []
    try:
        for msg in messages:
            if type(msg) is not dict or "extras" in msg:
                return None
            role, content = msg.get("role"), msg.get("content")
            if content is None:
                content = ""
            elif type(content) is not str:
                return None
            if role in _ROLES:
                out.append({"role": role, "content": content})
            elif role == "assistant":
                wire: dict[str, Any] = {"role": "assistant", "content": content}
                calls = msg.get("tool_calls")
                if calls is not None:
                    wire["tool_calls"] = [_wire_call(call) for call in calls]
                out.append(wire)
            elif role == "tool":
                wire = {"role": "tool", "content": content}
                wire["tool_call_id"] = msg["tool_call_id"]
                if "name" in msg:
                    wire["tool_name"] = msg["name"]
                out.append(wire)
            else:
                return None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None
    return out


def _wire_call(call: ToolCall) -> dict[str, Any]:
    fn = call["function"]
    return {
        "id": call["id"],
        # Bad arguments raise here and take the long way, which names them with their pointer.
        "function": {"name": fn["name"], "arguments": args_object(fn["arguments"], "")},
    }
