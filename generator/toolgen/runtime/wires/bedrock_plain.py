# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Converse conversations that keep nothing, the short way: to canonical messages without the block skeletons,
kept fields and regrouping marks `bedrock_messages` reads for the rest.

It gives exactly what the long way gives, or None, and then the caller takes the long way: so a conversation the
long way would refuse, or keep something of, is always its business.
"""

from __future__ import annotations

from typing import Any

from .base import args_object, args_text, assistant_content


def decode_plain(system: Any, raw: list[Any]) -> list[dict[str, Any]] | None:
    """The canonical messages of a conversation that keeps nothing (text blocks, calls, single-text tool results,
    no other keys), as `decode_blocks`, `decode_user` and `decode_assistant` of `bedrock_messages` give them;
    None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other.
    messages: list[dict[str, Any]] = []
    if type(system) is list and system:
        parts = _texts(system)
        if parts is None:
            return None
        content = parts[0]["text"] if len(parts) == 1 else parts
        messages.append({"role": "system", "content": content})
    for msg in raw:
        if type(msg) is not dict or len(msg) != 2:
            return None
        role, content = msg.get("role"), msg.get("content")
        if type(content) is not list or not content:
            return None
        if role == "assistant":
            if not _plain_assistant(content, messages):
                return None
        elif role != "user" or not _plain_user(content, messages):
            return None
    return messages


def _texts(blocks: list[Any]) -> list[dict[str, Any]] | None:
    parts = []
    for block in blocks:
        if type(block) is not dict or len(block) != 1:
            return None
        text = block.get("text")
        if type(text) is not str:
            return None
        parts.append({"type": "text", "text": text})
    return parts


def _plain_user(content: list[Any], messages: list[dict[str, Any]]) -> bool:
    # Text and results in one wire message, or results right after a tool message, are marked by the long way.
    first = content[0]
    if type(first) is dict and "toolResult" in first:
        if messages and messages[-1]["role"] == "tool":
            return False
        results = []
        for block in content:
            result = _plain_result(block)
            if result is None:
                return False
            results.append(result)
        messages.extend(results)
        return True
    parts = _texts(content)
    if parts is None:
        return False
    text = parts[0]["text"] if len(parts) == 1 else parts
    messages.append({"role": "user", "content": text})
    return True


def _plain_result(block: Any) -> dict[str, Any] | None:
    if type(block) is not dict or len(block) != 1:
        return None
    result = block.get("toolResult")
    if type(result) is not dict:
        return None
    count = len(result)
    status = result.get("status")
    if status is not None:
        if status != "success" and status != "error":
            return None
        count -= 1
    call_id, blocks = result.get("toolUseId"), result.get("content")
    if (
        count != 2
        or type(call_id) is not str
        or type(blocks) is not list
        or len(blocks) != 1
    ):
        return None
    parts = _texts(blocks)
    if parts is None:
        return None
    out: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": call_id,
        "content": parts[0]["text"],
    }
    if status is not None:
        out["is_error"] = status == "error"
    return out


def _plain_assistant(content: list[Any], messages: list[dict[str, Any]]) -> bool:
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if type(block) is not dict or len(block) != 1:
            return False
        use = block.get("toolUse")
        if use is not None:
            call = _plain_call(use)
            if call is None:
                return False
            calls.append(call)
            continue
        text = block.get("text")
        # Text after a call is laid out again by the long way's skeleton.
        if type(text) is not str or calls:
            return False
        parts.append({"type": "text", "text": text})
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(parts)}
    if calls:
        out["tool_calls"] = calls
    messages.append(out)
    return True


def _plain_call(use: Any) -> dict[str, Any] | None:
    if type(use) is not dict or len(use) != 3:
        return None
    call_id, name, given = use.get("toolUseId"), use.get("name"), use.get("input")
    if type(call_id) is not str or type(name) is not str or type(given) is not dict:
        return None
    try:
        arguments = args_text(given)
        # Arguments that do not read back as they came (NaN, non-string keys) are kept by the long way.
        if args_object(arguments, "") != given:
            return None
    except (TypeError, ValueError, RecursionError):
        return None
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
