# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Anthropic messages to and from canonical messages: content blocks, tool_use and tool_result, thinking, system blocks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..canonical import parts_of
from ..helpers import (
    args_object,
    args_text,
    as_dict,
    as_list,
    as_str,
    assistant_content,
    call_pointer,
    extras_of,
    fail,
    fill,
    is_trivial,
    keep_entry,
    restore,
    signed_for,
    split_marks,
    weave,
)
from ..media import inline

WIRE = "anthropic"


# ---- parts and calls ----


def _source_part(kind: str, source: Any) -> dict[str, Any] | None:
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64" and isinstance(source.get("data"), str):
        part = {"type": kind, "data": source["data"]}
        if isinstance(source.get("media_type"), str):
            part["media_type"] = source["media_type"]
        return part
    if source.get("type") == "url" and isinstance(source.get("url"), str):
        return {"type": kind, "url": source["url"]}
    if (
        kind == "file"
        and source.get("type") == "file"
        and isinstance(source.get("file_id"), str)
    ):
        return {"type": "file", "file_id": source["file_id"]}
    return None


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The canonical part for a content block; None for blocks canonical content has no place for."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        part = {"type": "reasoning", "text": block["thinking"]}
        if isinstance(block.get("signature"), str):
            part["signature"] = block["signature"]
        return part
    if kind == "redacted_thinking" and isinstance(block.get("data"), str):
        return {"type": "reasoning", "redacted": True, "encrypted": block["data"]}
    if kind == "image":
        return _source_part("image", block.get("source"))
    if kind == "document":
        return _source_part("file", block.get("source"))
    return None


def _part_block(part: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "reasoning":
        if part.get("redacted"):
            return {"type": "redacted_thinking", "data": part.get("encrypted", "")}
        return {
            "type": "thinking",
            "thinking": part.get("text", ""),
            "signature": part.get("signature", ""),
        }
    if kind in ("image", "file"):
        block_type = "image" if kind == "image" else "document"
        part = inline(part)
        if "data" in part:
            source = {
                "type": "base64",
                "media_type": part.get("media_type", ""),
                "data": part["data"],
            }
        elif "url" in part:
            source = {"type": "url", "url": part["url"]}
        elif "file_id" in part:
            source = {"type": "file", "file_id": part["file_id"]}
        else:
            fail(pointer, f"an {kind} part with `data`, `url` or `file_id`")
        return {"type": block_type, "source": source}
    fail(pointer, "a text, image, file or reasoning part (Anthropic takes no audio)")


def _call(block: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    call_id, name = block.get("id"), block.get("name")
    # Pointers are spelled only for the error: every call of every decoded request passes here.
    if not isinstance(call_id, str):
        as_str(call_id, f"{pointer}/id", "the tool_use id as a string")
    if not isinstance(name, str):
        as_str(name, f"{pointer}/name", "the tool name as a string")
    arguments = args_text(block.get("input", {}))
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _call_block(call: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    fn = call["function"]
    return {
        "type": "tool_use",
        "id": call["id"],
        "name": fn["name"],
        "input": args_object(fn["arguments"], f"{pointer}/function/arguments"),
    }


def _decode_blocks(
    blocks: list[Any], pointer: str, start: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(parts, calls, skeleton) of a content list; `start` is the index of its first block in the wire list."""
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    skeleton: list[dict[str, Any]] = []
    for i, raw in enumerate(blocks, start):
        at = f"{pointer}/{i}"
        block = as_dict(raw, at, "a content block object")
        if block.get("type") == "tool_use":
            call = _call(block, at)
            calls.append(call)
            skeleton.append({"call": keep_entry(block, _call_block(call, at))})
            continue
        part = _part(block)
        if part is None:
            skeleton.append({"keep": block})
            continue
        parts.append(part)
        skeleton.append({"part": keep_entry(block, _part_block(part, at))})
    return parts, calls, skeleton


def _encode_blocks(
    parts: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    skeleton: list[Any] | None,
    pointer: str,
) -> list[Any]:
    if not skeleton:
        blocks = [_part_block(part, pointer) for part in parts]
        blocks.extend(
            _call_block(call, f"{pointer}/tool_calls/{index}")
            for index, call in enumerate(calls)
        )
        return blocks

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, pointer), entry, lambda raw: _part(raw) == part
        )

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _call_block(call, call_pointer(pointer, calls, call)),
            entry,
            lambda raw: _call(raw, pointer) == call,
        )

    return weave(skeleton, parts, calls, part_block, call_block)


# ---- messages ----


def decode_assistant(msg: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    """A wire assistant message (or a response's content) as one canonical assistant message."""
    kept: dict[str, Any] = {}
    content = msg.get("content")
    if isinstance(content, str):
        kept["content_string"] = True
        parts = [{"type": "text", "text": content}]
        calls: list[dict[str, Any]] = []
    else:
        raw = as_list(
            content,
            f"{pointer}/content",
            "content as a string or an array of content blocks",
        )
        parts, calls, skeleton = _decode_blocks(raw, f"{pointer}/content")
        if not is_trivial(skeleton):
            kept["blocks"] = skeleton
    if any("signature" in part or "encrypted" in part for part in parts):
        kept["signed"] = True
    fields = {
        key: value for key, value in msg.items() if key not in ("role", "content")
    }
    if fields:
        kept["fields"] = fields
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(parts)}
    if calls:
        out["tool_calls"] = calls
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _tool_message(block: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        as_str(call_id, f"{pointer}/tool_use_id", "the id of the tool_use this answers")
    kept: dict[str, Any] = {}
    content = block.get("content")
    if content is None:
        kept["omit_content"] = True
        content = ""
    elif not isinstance(content, str):
        raw = as_list(
            content,
            f"{pointer}/content",
            "tool result content as a string or an array of blocks",
        )
        content, _, skeleton = _decode_blocks(raw, f"{pointer}/content")
        if not is_trivial(skeleton):
            kept["blocks"] = skeleton
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
    if isinstance(block.get("is_error"), bool):
        out["is_error"] = block["is_error"]
    fields = {
        key: value
        for key, value in block.items()
        if key not in ("type", "tool_use_id", "content", "is_error")
    }
    if fields:
        kept["fields"] = fields
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def decode_user(
    msg: Mapping[str, Any], pointer: str, before: str | None
) -> list[dict[str, Any]]:
    """One wire user message: a canonical user message per run of ordinary blocks, a tool message per result."""
    content = msg.get("content")
    fields = {
        key: value for key, value in msg.items() if key not in ("role", "content")
    }
    produced: list[dict[str, Any]]
    if isinstance(content, str):
        produced = [{"role": "user", "content": content}]
    else:
        raw = as_list(
            content,
            f"{pointer}/content",
            "content as a string or an array of content blocks",
        )
        produced = _user_runs(raw, f"{pointer}/content")
    split_marks(produced, before, WIRE)
    if fields:
        produced[0].setdefault("extras", {}).setdefault(WIRE, {})["message_fields"] = (
            fields
        )
    return produced


def _user_runs(blocks: list[Any], pointer: str) -> list[dict[str, Any]]:
    produced: list[dict[str, Any]] = []
    run: list[Any] = []

    def flush(end: int) -> None:
        # An empty content list still makes one (empty) user message.
        if run or (not produced and end == len(blocks)):
            parts, _, skeleton = _decode_blocks(run, pointer, end - len(run))
            message: dict[str, Any] = {"role": "user", "content": parts}
            if not is_trivial(skeleton):
                message["extras"] = {WIRE: {"blocks": skeleton}}
            produced.append(message)
            run.clear()

    for i, raw in enumerate(blocks):
        if isinstance(raw, dict) and raw.get("type") == "tool_result":
            flush(i)
            produced.append(_tool_message(raw, f"{pointer}/{i}"))
        else:
            run.append(raw)
    flush(len(blocks))
    return produced


def encode_turn(side: str, group: list[dict[str, Any]], pointer: str) -> dict[str, Any]:
    """One wire message from a group of canonical messages that make one turn (see `base.turns`)."""
    if side == "assistant":
        return encode_assistant(group[0], pointer)
    first = group[0]
    if (
        len(group) == 1
        and first.get("role") == "user"
        and "extras" not in first
        and isinstance(first.get("content"), str)
    ):
        return {"role": "user", "content": first["content"]}
    content: list[Any] = []
    as_string = None
    for message in group:
        kept = extras_of(message, WIRE)
        if message.get("role") == "tool":
            content.append(_tool_result_block(message, kept, pointer))
        elif isinstance(message.get("content"), str) and len(group) == 1:
            as_string = message["content"]
        else:
            parts = [
                part
                for part in parts_of(message.get("content"))
                if part.get("type") != "reasoning"
            ]
            content.extend(_encode_blocks(parts, [], kept.get("blocks"), pointer))
    out: dict[str, Any] = {
        "role": "user",
        "content": as_string if as_string is not None else content,
    }
    fields = extras_of(group[0], WIRE).get("message_fields")
    return fill(out, fields) if fields else out


def _tool_result_block(
    message: Mapping[str, Any], kept: Mapping[str, Any], pointer: str
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message["tool_call_id"],
    }
    content = message.get("content", "")
    if isinstance(content, list):
        # A tool_result block holds text, images and documents (the SDK's union), no thinking: reasoning in a
        # result is left out, and the conversion notes name it.
        parts = [part for part in content if part.get("type") != "reasoning"]
        block["content"] = _encode_blocks(parts, [], kept.get("blocks"), pointer)
    elif content or not kept.get("omit_content"):
        block["content"] = content
    if "is_error" in message:
        block["is_error"] = message["is_error"]
    fields = kept.get("fields")
    return fill(block, fields) if fields else block


def encode_assistant(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    """A wire assistant message from a canonical one, its kept block order and signatures restored."""
    if "extras" not in message:
        # The common case, a message from another wire or built by hand: nothing to restore.
        given = message.get("content")
        blocks = (
            [{"type": "text", "text": given}]
            if isinstance(given, str) and given
            else []
        )
        if isinstance(given, list):
            blocks = [
                _part_block(part, pointer)
                for part in given
                if part.get("type") != "reasoning"
            ]
        blocks.extend(
            _call_block(call, f"{pointer}/tool_calls/{index}")
            for index, call in enumerate(message.get("tool_calls") or ())
        )
        return {"role": "assistant", "content": blocks}
    kept = extras_of(message, WIRE)
    parts = parts_of(message.get("content"))
    if not signed_for(message, WIRE):
        parts = [part for part in parts if part.get("type") != "reasoning"]
    calls = message.get("tool_calls") or []
    if (
        kept.get("content_string")
        and not calls
        and len(parts) == 1
        and parts[0].get("type") == "text"
    ):
        content: Any = parts[0]["text"]
    else:
        content = _encode_blocks(parts, calls, kept.get("blocks"), pointer)
    out = {"role": "assistant", "content": content}
    fields = kept.get("fields")
    return fill(out, fields) if fields else out


# ---- system ----


def decode_system(system: Any, kept: dict[str, Any]) -> dict[str, Any] | None:
    """The top-level `system` as a canonical system message (None when there is none)."""
    if system is None:
        return None
    if isinstance(system, str):
        return {"role": "system", "content": system}
    blocks = as_list(
        system, "/system", "the system prompt as a string or an array of text blocks"
    )
    parts, _, skeleton = _decode_blocks(blocks, "/system")
    if not is_trivial(skeleton):
        kept["system"] = skeleton
    return {"role": "system", "content": parts}


def encode_system(messages: list[dict[str, Any]], kept: Mapping[str, Any]) -> Any:
    """The top-level `system` from the canonical system messages (None when there are none)."""
    system = [message for message in messages if message.get("role") == "system"]
    if not system:
        return None
    if len(system) == 1 and isinstance(system[0].get("content"), str):
        return system[0]["content"]
    parts = [part for message in system for part in parts_of(message.get("content"))]
    return _encode_blocks(parts, [], kept.get("system"), "/system")
