# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Converse conversations that keep nothing, the short way: to canonical messages and back without the block
skeletons, kept fields and regrouping marks `bedrock_messages` reads and writes for the rest.

Each function gives exactly what the long way gives, or None, and then the caller takes the long way: so a body
or a conversation the long way would refuse, or keep something of, is always its business.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..helpers import args_object, assistant_content
from ..plain_arguments import plain_arguments


def decode_plain(system: Any, raw: list[Any]) -> list[dict[str, Any]] | None:
    """The canonical messages of a conversation that keeps nothing (text blocks, calls, single-text tool results,
    no other keys), as `decode_blocks`, `decode_user` and `decode_assistant` of `bedrock_messages` give them;
    None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other. One loop with
    # few calls: this runs for every message of every decoded request.
    messages: list[dict[str, Any]] = []
    if type(system) is list and system:
        only = system[0]
        if len(system) == 1 and type(only) is dict and len(only) == 1:
            content: Any = only.get("text")
            if type(content) is not str:
                return None
        else:
            content = _texts(system)
            if content is None:
                return None
        messages.append({"role": "system", "content": content})
    for msg in raw:
        if type(msg) is not dict or len(msg) != 2:
            return None
        role, content = msg.get("role"), msg.get("content")
        if type(content) is not list or not content:
            return None
        first = content[0]
        if role == "assistant":
            if not _plain_assistant(content, messages):
                return None
        elif role != "user" or type(first) is not dict:
            return None
        elif "toolResult" in first:
            # Results right after a tool message were split from it on the wire: the long way marks that.
            if messages and messages[-1]["role"] == "tool":
                return None
            for block in content:
                result = _plain_result(block)
                if result is None:
                    return None
                messages.append(result)
        elif len(content) == 1:
            text = first.get("text")
            if len(first) != 1 or type(text) is not str:
                return None
            messages.append({"role": "user", "content": text})
        else:
            # Text and results in one wire message are marked by the long way: _texts refuses a result.
            parts = _texts(content)
            if parts is None:
                return None
            messages.append({"role": "user", "content": parts})
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
    only = blocks[0]
    if type(only) is not dict or len(only) != 1:
        return None
    text = only.get("text")
    if type(text) is not str:
        return None
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": text}
    if status is not None:
        out["is_error"] = status == "error"
    return out


def _plain_assistant(content: list[Any], messages: list[dict[str, Any]]) -> bool:
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if type(block) is not dict or len(block) != 1:
            return False
        use = block.get("toolUse")
        if use is None:
            text = block.get("text")
            # Text after a call is laid out again by the long way's skeleton.
            if type(text) is not str or calls:
                return False
            texts.append({"type": "text", "text": text})
            continue
        if type(use) is not dict or len(use) != 3:
            return False
        call_id, name, given = use.get("toolUseId"), use.get("name"), use.get("input")
        if type(call_id) is not str or type(name) is not str or type(given) is not dict:
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
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(texts)}
    if calls:
        out["tool_calls"] = calls
    messages.append(out)
    return True


def encode_plain(
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(system blocks, wire messages) of a conversation that kept nothing from a decoded body: string contents,
    calls, string tool results; as `encode_turn` of `bedrock_messages` over `base.turns`, and `encode_blocks` of
    the system prompts, give them. None for anything else, and for anything they would refuse."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    previous = None
    try:
        for message in messages:
            if "extras" in message:
                return None
            role, content = message["role"], message.get("content")
            if type(content) is not str and (
                role != "assistant" or content is not None
            ):
                return None
            if role == "system":
                system.append({"text": content})
                # System prompts go outside the conversation: they part no run of results (see `turns`).
                continue
            if role == "tool":
                result: dict[str, Any] = {
                    "toolUseId": message["tool_call_id"],
                    "content": [{"text": content}],
                }
                if "is_error" in message:
                    result["status"] = "error" if message["is_error"] else "success"
                # Consecutive results share one user message, as `turns` groups them.
                if previous == "tool":
                    out[-1]["content"].append({"toolResult": result})
                else:
                    out.append({"role": "user", "content": [{"toolResult": result}]})
            elif role == "user":
                out.append({"role": "user", "content": [{"text": content}]})
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
    blocks: list[dict[str, Any]] = [] if content is None else [{"text": content}]
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        use = {
            "toolUseId": call["id"],
            "name": fn["name"],
            # Bad arguments raise here and take the long way, which names them with their pointer.
            "input": args_object(fn["arguments"], ""),
        }
        blocks.append({"toolUse": use})
    return blocks
