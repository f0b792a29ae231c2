# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Anthropic conversations that keep nothing, the short way: to canonical messages and back without the block
skeletons, kept fields and regrouping marks `anthropic_messages` reads and writes for the rest.

Each function gives exactly what the long way gives, or None, and then the caller takes the long way: so a body
or a conversation the long way would refuse, or keep something of, is always its business.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..helpers import args_object, assistant_content
from ..plain_arguments import plain_arguments


def decode_plain(system: Any, raw: list[Any]) -> list[dict[str, Any]] | None:
    """The canonical messages of a conversation that keeps nothing (plain text and calls, string tool results,
    no other keys), as `decode_system`, `decode_user` and `decode_assistant` of `anthropic_messages` give them;
    None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other, and this costs
    # less than comparing key views.
    messages: list[dict[str, Any]] = []
    if system is not None:
        if type(system) is not str:
            return None
        messages.append({"role": "system", "content": system})
    for msg in raw:
        if type(msg) is not dict or len(msg) != 2:
            return None
        role, content = msg.get("role"), msg.get("content")
        if role == "user":
            if type(content) is str:
                messages.append({"role": "user", "content": content})
            elif not _plain_results(content, messages):
                return None
        elif role != "assistant" or not _plain_assistant(content, messages):
            return None
    return messages


def _plain_results(content: Any, messages: list[dict[str, Any]]) -> bool:
    # A result right after a tool message was split from it on the wire: the long way marks that.
    if type(content) is not list or not content:
        return False
    if messages and messages[-1]["role"] == "tool":
        return False
    results = []
    for block in content:
        if type(block) is not dict or len(block) != 3:
            return False
        call_id, text = block.get("tool_use_id"), block.get("content")
        if (
            type(call_id) is not str
            or type(text) is not str
            or block.get("type") != "tool_result"
        ):
            return False
        results.append({"role": "tool", "tool_call_id": call_id, "content": text})
    messages.extend(results)
    return True


def _plain_assistant(content: Any, messages: list[dict[str, Any]]) -> bool:
    if type(content) is not list:
        return False
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if kind == "tool_use" and len(block) == 4:
            call_id, name, given = (
                block.get("id"),
                block.get("name"),
                block.get("input"),
            )
            if (
                type(call_id) is not str
                or type(name) is not str
                or type(given) is not dict
            ):
                return False
            arguments = plain_arguments(given)
            # Arguments that do not read back as they came (NaN, non-string keys) are kept by the long way.
            if arguments is None:
                return False
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
        elif kind == "text" and len(block) == 2 and not calls:
            text = block.get("text")
            if type(text) is not str:
                return False
            parts.append({"type": "text", "text": text})
        else:
            return False
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(parts)}
    if calls:
        out["tool_calls"] = calls
    messages.append(out)
    return True


def encode_plain(messages: list[dict[str, Any]]) -> tuple[str | None, list[Any]] | None:
    """(system, wire messages) of a conversation that kept nothing from a decoded body: string contents, calls,
    string tool results, one system prompt at most; as `encode_system` and `encode_turn` of
    `anthropic_messages` over `base.turns` give them. None for anything else, and for anything they would
    refuse."""
    system = None
    out: list[Any] = []
    previous = None
    try:
        for message in messages:
            if "extras" in message:
                return None
            role, content = message["role"], message.get("content")
            if role == "system":
                if system is not None or type(content) is not str:
                    return None
                system = content
                continue
            if role == "tool":
                if type(content) is not str:
                    return None
                block = {
                    "type": "tool_result",
                    "tool_use_id": message["tool_call_id"],
                    "content": content,
                }
                if "is_error" in message:
                    block["is_error"] = message["is_error"]
                # Consecutive results share one user message, as `turns` groups them.
                if previous == "tool":
                    out[-1]["content"].append(block)
                else:
                    out.append({"role": "user", "content": [block]})
            elif role == "user":
                if type(content) is not str:
                    return None
                out.append({"role": "user", "content": content})
            elif role == "assistant":
                out.append({"role": "assistant", "content": _plain_blocks(message)})
            else:
                return None
            previous = role
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None
    return system, out


def _plain_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks: list[dict[str, Any]]
    if content is None:
        blocks = []
    elif type(content) is str:
        blocks = [{"type": "text", "text": content}] if content else []
    else:
        raise TypeError("content parts take the long way")
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        blocks.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": fn["name"],
                # Bad arguments raise here and take the long way, which names them with their pointer.
                "input": args_object(fn["arguments"], ""),
            }
        )
    return blocks
