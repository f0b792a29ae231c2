# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Responses API items to and from canonical messages: input messages, output messages, reasoning, calls, results."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..canonical import parts_of
from ..helpers import (
    args_text,
    as_dict,
    as_list,
    as_str,
    assistant_content,
    extras_of,
    fail,
    fill,
    is_trivial,
    keep_entry,
    restore,
    signed_for,
    weave,
)

WIRE = "openai-responses"
_ASSISTANT_ITEMS = frozenset(("reasoning", "function_call", "custom_tool_call"))
_RESULT_ITEMS = frozenset(("function_call_output", "custom_tool_call_output"))


# ---- content parts ----


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The canonical part for an input or output content part; None for parts canonical content has no place for."""
    kind = block.get("type")
    if kind in ("input_text", "output_text", "text") and isinstance(
        block.get("text"), str
    ):
        return {"type": "text", "text": block["text"]}
    if kind == "input_image" and isinstance(block.get("image_url"), str):
        part = {"type": "image", "url": block["image_url"]}
        if block.get("detail") in ("auto", "low", "high"):
            part["detail"] = block["detail"]
        return part
    if kind == "input_file":
        return _file_part(block)
    if kind == "input_audio":
        audio = block.get("input_audio")
        if isinstance(audio, dict) and isinstance(audio.get("data"), str):
            part = {"type": "audio", "data": audio["data"]}
            if isinstance(audio.get("format"), str):
                part["format"] = audio["format"]
            return part
    return None


def _file_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    part: dict[str, Any] = {"type": "file"}
    for wire_key, key in (
        ("file_id", "file_id"),
        ("file_url", "url"),
        ("filename", "filename"),
    ):
        if isinstance(block.get(wire_key), str):
            part[key] = block[wire_key]
    data = block.get("file_data")
    if isinstance(data, str):
        head, sep, payload = data.partition(",")
        if data.startswith("data:") and sep and head.endswith(";base64"):
            part["media_type"], part["data"] = head[5:-7], payload
        else:
            part["data"] = data
    return part if len(part) > 1 else None


def _part_block(
    part: Mapping[str, Any], pointer: str, text_type: str
) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": text_type, "text": part["text"]}
    if kind == "image":
        url = (
            part.get("url")
            or f"data:{part.get('media_type', 'image/png')};base64,{part.get('data', '')}"
        )
        block = {
            "type": "input_image",
            "image_url": url,
            "detail": part.get("detail", "auto"),
        }
        return block
    if kind == "file":
        block = {"type": "input_file"}
        if "file_id" in part:
            block["file_id"] = part["file_id"]
        if "url" in part:
            block["file_url"] = part["url"]
        if "data" in part:
            media = part.get("media_type")
            block["file_data"] = (
                f"data:{media};base64,{part['data']}" if media else part["data"]
            )
        if "filename" in part:
            block["filename"] = part["filename"]
        return block
    if kind == "audio":
        # How a body that had one spelled it: decoding keeps it, `_sendable` refuses to send it.
        audio = {"data": part["data"]}
        if "format" in part:
            audio["format"] = part["format"]
        return {"type": "input_audio", "input_audio": audio}
    fail(pointer, "a text, image or file part")


def _sendable(part: Mapping[str, Any], pointer: str) -> None:
    """Refuse audio: the Responses API's input content is input_text, input_image and input_file (the official
    SDK's union), so a model there hears none, and a part the API rejects is not sent."""
    if part.get("type") == "audio":
        fail(
            pointer,
            "a text, image or file part (Responses input takes no audio: transcribe it, or use openai-chat)",
        )


# ---- assistant items ----


def _reasoning_text(item: Mapping[str, Any]) -> str | None:
    for key, kind in (("summary", "summary_text"), ("content", "reasoning_text")):
        entries = item.get(key)
        if isinstance(entries, list) and entries:
            matching = [
                entry
                for entry in entries
                if isinstance(entry, dict) and entry.get("type") == kind
            ]
            texts = [
                entry["text"]
                for entry in matching
                if isinstance(entry.get("text"), str)
            ]
            if texts and len(texts) == len(matching):
                return "\n\n".join(texts)
    return None


def _reasoning_part(item: Mapping[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "reasoning"}
    text = _reasoning_text(item)
    if text is not None:
        part["text"] = text
    if isinstance(item.get("encrypted_content"), str):
        part["encrypted"] = item["encrypted_content"]
    return part


def _reasoning_item(part: Mapping[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning"}
    text = part.get("text")
    item["summary"] = [{"type": "summary_text", "text": text}] if text else []
    if "encrypted" in part:
        item["encrypted_content"] = part["encrypted"]
    return item


def _call(item: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    call_id = as_str(
        item.get("call_id"), f"{pointer}/call_id", "the call_id as a string"
    )
    name = as_str(item.get("name"), f"{pointer}/name", "the tool name as a string")
    if item.get("type") == "custom_tool_call":
        arguments = args_text(item.get("input", ""))
    else:
        value = item.get("arguments", "")
        arguments = value if isinstance(value, str) else args_text(value)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _call_item(call: Mapping[str, Any]) -> dict[str, Any]:
    fn = call["function"]
    return {
        "type": "function_call",
        "call_id": call["id"],
        "name": fn["name"],
        "arguments": fn["arguments"],
    }


def _same_call(raw: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    try:
        return _call(raw, "") == call
    except ValueError:
        return False


def _is_assistant_item(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    if isinstance(kind, str) and kind in _RESULT_ITEMS:
        return False
    if "role" in item and kind in (None, "message"):
        return bool(item["role"] == "assistant")
    return True


class AssistantRun:
    """Consecutive assistant-side items, collected into one canonical assistant message."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.skeleton: list[dict[str, Any]] = []

    def add(self, item: dict[str, Any], pointer: str) -> None:
        kind = item.get("type")
        if kind == "reasoning":
            part = _reasoning_part(item)
            self.parts.append(part)
            self.skeleton.append({"part": keep_entry(item, _reasoning_item(part))})
        elif kind in ("function_call", "custom_tool_call"):
            call = _call(item, pointer)
            self.calls.append(call)
            self.skeleton.append({"call": keep_entry(item, _call_item(call))})
        elif "role" in item and kind in (None, "message"):
            self._add_message(item, pointer)
        else:
            self.skeleton.append({"keep": item})

    def _add_message(self, item: dict[str, Any], pointer: str) -> None:
        content = item.get("content")
        rest = {key: value for key, value in item.items() if key != "content"}
        if isinstance(content, str):
            self.parts.append({"type": "text", "text": content})
            self.skeleton.append(
                {"group": {"item": rest, "string": True}, "parts": [{}]}
            )
            return
        blocks = as_list(
            content, f"{pointer}/content", "content as a string or an array of parts"
        )
        parts = [_part(block) for block in blocks if isinstance(block, dict)]
        texts = [part for part in parts if part is not None and part["type"] == "text"]
        if len(texts) != len(blocks):
            self.skeleton.append({"keep": item})
            return
        entries = [
            keep_entry(block, _output_text(part))
            for block, part in zip(blocks, texts, strict=True)
        ]
        self.parts.extend(texts)
        self.skeleton.append({"group": {"item": rest}, "parts": entries})

    def message(self) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        if not is_trivial(self.skeleton):
            kept["blocks"] = self.skeleton
        if any(part["type"] == "reasoning" for part in self.parts):
            kept["signed"] = True
        out: dict[str, Any] = {
            "role": "assistant",
            "content": assistant_content(self.parts),
        }
        if self.calls:
            out["tool_calls"] = self.calls
        if kept:
            out["extras"] = {WIRE: kept}
        return out


def _output_text(part: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "output_text", "text": part["text"]}


def encode_run(message: Mapping[str, Any], pointer: str, output: bool) -> list[Any]:
    """The items of a canonical assistant message; `output` spells them as a response's output items."""
    kept = extras_of(message, WIRE)
    parts = parts_of(message.get("content"))
    if not signed_for(message, WIRE):
        parts = [part for part in parts if part.get("type") != "reasoning"]
    calls = message.get("tool_calls") or []

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        # Inside a message item (entry given) a text part is an output_text block; on its own it is a message item.
        if part.get("type") == "reasoning":
            return restore(
                _reasoning_item(part), entry, lambda raw: _reasoning_part(raw) == part
            )
        if entry is not None:
            return restore(_output_text(part), entry, lambda raw: _part(raw) == part)
        if part.get("type") != "text":
            fail(pointer, "text or reasoning parts in an assistant message")
        if output:
            text = {**_output_text(part), "annotations": []}
            return {
                "type": "message",
                "id": "",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        return {"role": "assistant", "content": part["text"]}

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(_call_item(call), entry, lambda raw: _same_call(raw, call))

    def group_block(meta: Mapping[str, Any], blocks: list[Any]) -> Any:
        return {
            **meta["item"],
            "content": blocks[0]["text"] if meta.get("string") else blocks,
        }

    return weave(kept.get("blocks"), parts, calls, part_block, call_block, group_block)


# ---- input messages and results ----


def _decode_input_message(item: dict[str, Any], pointer: str) -> dict[str, Any]:
    role = item["role"]
    kept: dict[str, Any] = {}
    if role == "developer":
        kept["role"] = role
    elif role not in ("user", "system"):
        fail(f"{pointer}/role", "one of user, system, developer or assistant")
    content = item.get("content")
    if not isinstance(content, str):
        blocks = as_list(
            content, f"{pointer}/content", "content as a string or an array of parts"
        )
        parts: list[dict[str, Any]] = []
        skeleton: list[dict[str, Any]] = []
        for i, raw in enumerate(blocks):
            block = as_dict(raw, f"{pointer}/content/{i}", "a content part object")
            part = _part(block)
            if part is None:
                skeleton.append({"keep": block})
            else:
                parts.append(part)
                skeleton.append(
                    {
                        "part": keep_entry(
                            block, _part_block(part, pointer, "input_text")
                        )
                    }
                )
        if not is_trivial(skeleton):
            kept["parts"] = skeleton
        content = parts
    fields = {
        key: value for key, value in item.items() if key not in ("role", "content")
    }
    if fields:
        kept["fields"] = fields
    out: dict[str, Any] = {
        "role": "system" if role == "developer" else role,
        "content": content,
    }
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def encode_input_message(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    """An input message item from a canonical system or user message."""
    kept = extras_of(message, WIRE)
    content = message.get("content", "")
    if not isinstance(content, str):
        parts = [part for part in content if part.get("type") != "reasoning"]

        def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
            _sendable(part, f"{pointer}/content")
            block = _part_block(part, f"{pointer}/content", "input_text")
            return restore(block, entry, lambda raw: _part(raw) == part)

        content = weave(kept.get("parts"), parts, [], part_block, part_block)
    out = {"role": kept.get("role", message["role"]), "content": content}
    fields = kept.get("fields")
    return fill(out, fields) if fields else out


def _decode_result(item: dict[str, Any], pointer: str) -> dict[str, Any]:
    call_id = as_str(
        item.get("call_id"), f"{pointer}/call_id", "the call_id this output answers"
    )
    kept: dict[str, Any] = {}
    if item.get("type") == "custom_tool_call_output":
        kept["custom"] = True
    output = item.get("output", "")
    if not isinstance(output, str):
        blocks = as_list(
            output, f"{pointer}/output", "the output as a string or an array of parts"
        )
        parts = [
            part
            for part in (_part(block) for block in blocks if isinstance(block, dict))
            if part is not None
        ]
        if len(parts) != len(blocks):
            output = args_text(output)
            kept["output_json"] = True
        else:
            pairs = zip(blocks, parts, strict=True)
            entries = [
                keep_entry(block, _part_block(part, pointer, "input_text"))
                for block, part in pairs
            ]
            if any(entries):
                kept["parts"] = [{"part": entry} for entry in entries]
            output = parts
    fields = {
        key: value
        for key, value in item.items()
        if key not in ("type", "call_id", "output")
    }
    if fields:
        kept["fields"] = fields
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": output}
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def encode_result(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    """A `function_call_output` (or `custom_tool_call_output`) item from a canonical tool message."""
    kept = extras_of(message, WIRE)
    kind = "custom_tool_call_output" if kept.get("custom") else "function_call_output"
    content = message.get("content", "")
    if kept.get("output_json") and isinstance(content, str):
        output: Any = json.loads(content)
    elif isinstance(content, str):
        output = content
    else:

        def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
            _sendable(part, pointer)
            return restore(
                _part_block(part, pointer, "input_text"),
                entry,
                lambda raw: _part(raw) == part,
            )

        # A result holds no reasoning; `placement` names the drop.
        parts = [part for part in content if part.get("type") != "reasoning"]
        output = weave(kept.get("parts"), parts, [], part_block, part_block)
    item = {"type": kind, "call_id": message["tool_call_id"], "output": output}
    fields = kept.get("fields")
    return fill(item, fields) if fields else item


def decode_input(items: list[Any], messages: list[dict[str, Any]]) -> None:
    """Input items as canonical messages: each run of assistant-side items makes one assistant message."""
    run: AssistantRun | None = None
    for i, raw in enumerate(items):
        pointer = f"/input/{i}"
        item = as_dict(raw, pointer, "an input item object")
        if _is_assistant_item(item):
            run = run or AssistantRun()
            run.add(item, pointer)
            continue
        if run is not None:
            messages.append(run.message())
            run = None
        if isinstance(item.get("type"), str) and item["type"] in _RESULT_ITEMS:
            messages.append(_decode_result(item, pointer))
        else:
            messages.append(_decode_input_message(item, pointer))
    if run is not None:
        messages.append(run.message())
