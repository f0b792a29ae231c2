# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Converse messages to and from canonical messages: content blocks, toolUse and toolResult, reasoningContent."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
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
    plain_text,
    restore,
    signed_for,
    split_marks,
    weave,
)
from ..media import inline

WIRE = "bedrock-converse"
_IMAGE_FORMATS = frozenset(("png", "jpeg", "gif", "webp"))
_DOCUMENT_TYPES = MappingProxyType(
    {
        "pdf": "application/pdf",
        "txt": "text/plain",
        "md": "text/markdown",
        "html": "text/html",
        "csv": "text/csv",
    }
)
_DOCUMENT_FORMATS = MappingProxyType(
    {media: name for name, media in _DOCUMENT_TYPES.items()}
)
# What Converse accepts in a document's name: letters and digits, single spaces, hyphens, parentheses and square
# brackets, 1 to 200 characters. Anything else is spelled with a hyphen, and the notes show the name it became.
_NAME_REFUSED = re.compile(r"[^A-Za-z0-9\s\-()\[\]]+")
_NAME_SPACES = re.compile(r"\s+")


# ---- blocks ----


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The canonical part for a content block; None for blocks canonical content has no place for."""
    if isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        return _reasoning_part(reasoning)
    image = block.get("image")
    if (
        isinstance(image, dict)
        and isinstance(image.get("format"), str)
        and image["format"] in _IMAGE_FORMATS
    ):
        data = (image.get("source") or {}).get("bytes")
        if isinstance(data, str):
            return {
                "type": "image",
                "data": data,
                "media_type": f"image/{image['format']}",
            }
    document = block.get("document")
    if (
        isinstance(document, dict)
        and isinstance(document.get("format"), str)
        and document["format"] in _DOCUMENT_TYPES
    ):
        data = (document.get("source") or {}).get("bytes")
        if isinstance(data, str):
            part = {
                "type": "file",
                "data": data,
                "media_type": _DOCUMENT_TYPES[document["format"]],
            }
            if isinstance(document.get("name"), str):
                part["filename"] = document["name"]
            return part
    return None


def _reasoning_part(reasoning: Mapping[str, Any]) -> dict[str, Any] | None:
    text = reasoning.get("reasoningText")
    if isinstance(text, dict) and isinstance(text.get("text"), str):
        part = {"type": "reasoning", "text": text["text"]}
        if isinstance(text.get("signature"), str):
            part["signature"] = text["signature"]
        return part
    if isinstance(reasoning.get("redactedContent"), str):
        return {
            "type": "reasoning",
            "redacted": True,
            "encrypted": reasoning["redactedContent"],
        }
    return None


def _part_block(part: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    part = inline(part)
    kind = part.get("type")
    if kind == "text":
        return {"text": part["text"]}
    if kind == "reasoning":
        if part.get("redacted"):
            return {"reasoningContent": {"redactedContent": part.get("encrypted", "")}}
        text: dict[str, Any] = {"text": part.get("text", "")}
        if "signature" in part:
            text["signature"] = part["signature"]
        return {"reasoningContent": {"reasoningText": text}}
    media = part.get("media_type", "")
    if kind == "image" and "data" in part and media.startswith("image/"):
        # Converse knows lower-case names only, and `jpeg` for the common misspelling image/jpg.
        image = media[6:].lower()
        image = "jpeg" if image == "jpg" else image
        if image not in _IMAGE_FORMATS:
            fail(
                pointer,
                f"a png, jpeg, gif or webp image: Bedrock Converse takes no {media}",
            )
        return {"image": {"format": image, "source": {"bytes": part["data"]}}}
    if kind == "file" and "data" in part and media in _DOCUMENT_FORMATS:
        document = {
            "format": _DOCUMENT_FORMATS[media],
            "name": _document_name(part.get("filename")),
        }
        return {"document": {**document, "source": {"bytes": part["data"]}}}
    if kind in ("image", "file") and "url" in part:
        fail(
            pointer,
            f"an inline {kind}: Bedrock Converse takes its bytes, not a URL "
            f"({part['url'][:80]}); fetch it and send its data",
        )
    fail(
        pointer,
        "a text or reasoning part, an inline image, or an inline pdf/txt/md/html/csv document",
    )


def _document_name(filename: Any) -> str:
    """`filename` in the characters Converse takes for a document's name ("document" when there is none)."""
    if not isinstance(filename, str):
        return "document"
    ascii_name = (
        unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    )
    name = (
        _NAME_SPACES.sub(" ", _NAME_REFUSED.sub("-", ascii_name)).strip()[:200].strip()
    )
    return name or "document"


def _call(block: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    use = as_dict(block.get("toolUse"), f"{pointer}/toolUse", "a toolUse object")
    call_id = as_str(
        use.get("toolUseId"),
        f"{pointer}/toolUse/toolUseId",
        "the toolUseId as a string",
    )
    name = as_str(
        use.get("name"), f"{pointer}/toolUse/name", "the tool name as a string"
    )
    arguments = args_text(use.get("input", {}))
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _call_block(call: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    fn = call["function"]
    arguments = args_object(fn["arguments"], f"{pointer}/function/arguments")
    return {
        "toolUse": {"toolUseId": call["id"], "name": fn["name"], "input": arguments}
    }


def decode_blocks(
    blocks: list[Any], pointer: str, start: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Content blocks as canonical parts and calls, with the skeleton that restores their order."""
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    skeleton: list[dict[str, Any]] = []
    for i, raw in enumerate(blocks, start):
        at = f"{pointer}/{i}"
        block = as_dict(raw, at, "a content block object")
        if "toolUse" in block:
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


def encode_blocks(
    parts: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    skeleton: list[Any] | None,
    pointer: str,
) -> list[Any]:
    """Content blocks from canonical parts and calls, in the kept order when there is one."""
    if not skeleton:
        # Nothing kept from a decoded body: parts then calls, as `weave` would give them.
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
    """A wire assistant message (or a response's message) as one canonical assistant message."""
    blocks = as_list(
        msg.get("content"),
        f"{pointer}/content",
        "`content`, an array of content blocks",
    )
    parts, calls, skeleton = decode_blocks(blocks, f"{pointer}/content")
    kept: dict[str, Any] = {}
    if not is_trivial(skeleton):
        kept["blocks"] = skeleton
    if any(part["type"] == "reasoning" for part in parts):
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
    result = as_dict(
        block.get("toolResult"), f"{pointer}/toolResult", "a toolResult object"
    )
    call_id = as_str(
        result.get("toolUseId"),
        f"{pointer}/toolResult/toolUseId",
        "the toolUseId this result answers",
    )
    kept: dict[str, Any] = {}
    content_blocks = as_list(
        result.get("content", []),
        f"{pointer}/toolResult/content",
        "an array of result blocks",
    )
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id}
    if (
        len(content_blocks) == 1
        and isinstance(content_blocks[0], dict)
        and set(content_blocks[0]) == {"json"}
    ):
        out["content"] = args_text(content_blocks[0]["json"])
        kept["result_json"] = True
    else:
        parts, _, skeleton = decode_blocks(
            content_blocks, f"{pointer}/toolResult/content"
        )
        single = len(parts) == 1 and parts[0]["type"] == "text" and is_trivial(skeleton)
        out["content"] = parts[0]["text"] if single else parts
        if not is_trivial(skeleton):
            kept["blocks"] = skeleton
    status = result.get("status")
    if status in ("success", "error"):
        out["is_error"] = status == "error"
    fields = {
        key: value
        for key, value in result.items()
        if key not in ("toolUseId", "content", "status")
    }
    if status is not None and status not in ("success", "error"):
        fields["status"] = status
    if fields:
        kept["fields"] = fields
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def decode_user(
    msg: Mapping[str, Any], pointer: str, before: str | None
) -> list[dict[str, Any]]:
    """A wire user message as canonical messages: a user message per run of blocks, a tool message per result."""
    blocks = as_list(
        msg.get("content"),
        f"{pointer}/content",
        "`content`, an array of content blocks",
    )
    produced: list[dict[str, Any]] = []
    start = 0
    for i, raw in enumerate([*blocks, None]):
        if raw is not None and not (isinstance(raw, dict) and "toolResult" in raw):
            continue
        if i > start or (raw is None and not produced):
            parts, _, skeleton = decode_blocks(
                blocks[start:i], f"{pointer}/content", start
            )
            message: dict[str, Any] = {
                "role": "user",
                "content": plain_text(parts, skeleton),
            }
            if not is_trivial(skeleton):
                message["extras"] = {WIRE: {"blocks": skeleton}}
            produced.append(message)
        if raw is not None:
            produced.append(_tool_message(raw, f"{pointer}/content/{i}"))
        start = i + 1
    split_marks(produced, before, WIRE)
    fields = {
        key: value for key, value in msg.items() if key not in ("role", "content")
    }
    if fields:
        produced[0].setdefault("extras", {}).setdefault(WIRE, {})["message_fields"] = (
            fields
        )
    return produced


def _result_block(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kept = extras_of(message, WIRE)
    content = message.get("content", "")
    result: dict[str, Any] = {"toolUseId": message["tool_call_id"]}
    if kept.get("result_json") and isinstance(content, str):
        result["content"] = [{"json": json.loads(content)}]
    elif isinstance(content, str):
        result["content"] = [{"text": content}]
    else:
        result["content"] = encode_blocks(content, [], kept.get("blocks"), pointer)
    if "is_error" in message:
        result["status"] = "error" if message["is_error"] else "success"
    if kept.get("fields"):
        fill(result, kept["fields"])
    return {"toolResult": result}


def encode_turn(side: str, group: list[dict[str, Any]], pointer: str) -> dict[str, Any]:
    """One wire message from a group of canonical messages that make one turn (see `base.turns`)."""
    if side == "assistant":
        message = group[0]
        kept = extras_of(message, WIRE)
        parts = parts_of(message.get("content"))
        if not signed_for(message, WIRE):
            parts = [part for part in parts if part.get("type") != "reasoning"]
        blocks = encode_blocks(
            parts, message.get("tool_calls") or [], kept.get("blocks"), pointer
        )
        out: dict[str, Any] = {"role": "assistant", "content": blocks}
        return fill(out, kept["fields"]) if kept.get("fields") else out
    content: list[Any] = []
    for message in group:
        if message.get("role") == "tool":
            content.append(_result_block(message, pointer))
            continue
        parts = [
            part
            for part in parts_of(message.get("content"))
            if part.get("type") != "reasoning"
        ]
        content.extend(
            encode_blocks(parts, [], extras_of(message, WIRE).get("blocks"), pointer)
        )
    out = {"role": "user", "content": content}
    fields = extras_of(group[0], WIRE).get("message_fields")
    return fill(out, fields) if fields else out
