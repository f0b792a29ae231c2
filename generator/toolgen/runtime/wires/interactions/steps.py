# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Interactions steps and content items to and from canonical messages: model steps, user input, function results."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
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
    turns,
    weave,
)
from ..media import inline

WIRE = "google-interactions"
_CONTENT_TYPES = frozenset(("text", "image", "audio", "document", "video"))


def is_content(block: Mapping[str, Any]) -> bool:
    """Whether an input entry is a bare content item (text, image, audio, document, video) rather than a step."""
    kind = block.get("type")
    return isinstance(kind, str) and kind in _CONTENT_TYPES


# ---- content items and calls ----


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "thought":
        summary = block.get("summary")
        entries = summary if isinstance(summary, list) else []
        items = [
            item
            for item in entries
            if isinstance(item, dict) and item.get("type") == "text"
        ]
        texts = [item["text"] for item in items if isinstance(item.get("text"), str)]
        part: dict[str, Any] = {"type": "reasoning"}
        if texts and len(texts) == len(items):
            part["text"] = "\n".join(texts)
        if isinstance(block.get("signature"), str):
            part["signature"] = block["signature"]
        return part
    if kind in ("image", "audio", "document", "video"):
        mime = block.get("mime_type")
        part = {
            "type": "image"
            if kind == "image"
            else "audio"
            if kind == "audio"
            else "file"
        }
        if isinstance(block.get("data"), str):
            part["data"] = block["data"]
        elif isinstance(block.get("uri"), str) and kind != "audio":
            part["url"] = block["uri"]
        else:
            return None
        if kind == "audio":
            if not isinstance(mime, str) or not mime.startswith("audio/"):
                return None
            part["format"] = mime[6:]
        elif isinstance(mime, str):
            part["media_type"] = mime
        return part
    return None


def _part_block(part: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "reasoning":
        block: dict[str, Any] = {"type": "thought"}
        if "signature" in part:
            block["signature"] = part["signature"]
        if part.get("text"):
            block["summary"] = [{"type": "text", "text": part["text"]}]
        return block
    if kind == "audio":
        return {
            "type": "audio",
            "data": part["data"],
            "mime_type": f"audio/{part.get('format', 'wav')}",
        }
    if kind in ("image", "file"):
        block = {"type": "image" if kind == "image" else "document"}
        part = inline(part)
        if "data" in part:
            block["data"] = part["data"]
        elif "url" in part:
            block["uri"] = part["url"]
        else:
            fail(pointer, f"an {kind} part with `data` or `url`")
        if "media_type" in part:
            block["mime_type"] = part["media_type"]
        return block
    fail(pointer, "a text, reasoning, image, audio or file part")


def _call(step: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    call_id = as_str(
        step.get("id"), f"{pointer}/id", "the function call id as a string"
    )
    name = as_str(step.get("name"), f"{pointer}/name", "the function name as a string")
    args = step.get("arguments")
    arguments = (
        args if isinstance(args, str) else args_text({} if args is None else args)
    )
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _call_block(call: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    fn = call["function"]
    arguments = args_object(fn["arguments"], f"{pointer}/function/arguments")
    return {
        "type": "function_call",
        "id": call["id"],
        "name": fn["name"],
        "arguments": arguments,
    }


# ---- model steps ----


class ModelSteps:
    """Accumulates model-side steps (or flat output items) into one canonical assistant message."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.skeleton: list[dict[str, Any]] = []

    def add(self, step: dict[str, Any], pointer: str) -> None:
        kind = step.get("type")
        if kind == "function_call":
            call = _call(step, pointer)
            self.calls.append(call)
            self.skeleton.append({"call": keep_entry(step, _call_block(call, pointer))})
        elif (kind == "model_output" or step.get("role") == "model") and isinstance(
            step.get("content"), list
        ):
            entries = []
            for i, raw in enumerate(step["content"]):
                block = as_dict(raw, f"{pointer}/content/{i}", "a content object")
                part = _part(block)
                if part is None or part["type"] == "reasoning":
                    self.skeleton.append({"keep": step})
                    return
                entries.append((part, keep_entry(block, _part_block(part, pointer))))
            self.parts.extend(part for part, _ in entries)
            rest = {key: value for key, value in step.items() if key != "content"}
            self.skeleton.append(
                {"group": rest, "parts": [entry for _, entry in entries]}
            )
        else:
            part = _part(step)
            if part is None:
                self.skeleton.append({"keep": step})
                return
            self.parts.append(part)
            self.skeleton.append({"part": keep_entry(step, _part_block(part, pointer))})

    def message(self) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        plain = all("group" not in entry for entry in self.skeleton)
        if not (plain and is_trivial(self.skeleton)):
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


def encode_steps(message: Mapping[str, Any], pointer: str, flat: bool) -> list[Any]:
    """The model-side steps of a canonical assistant message (flat output items when `flat`)."""
    kept = extras_of(message, WIRE)
    parts = parts_of(message.get("content"))
    if not signed_for(message, WIRE):
        parts = [part for part in parts if part.get("type") != "reasoning"]
    calls = message.get("tool_calls") or []
    if not kept.get("blocks"):
        # No kept step order: parts then calls, each part its own step unless `flat`, as `weave` would give them.
        steps: list[Any] = []
        for part in parts:
            block = _part_block(part, pointer)
            wrapped = not flat and part.get("type") != "reasoning"
            steps.append(
                {"type": "model_output", "content": [block]} if wrapped else block
            )
        steps.extend(
            _call_block(call, f"{pointer}/tool_calls/{index}")
            for index, call in enumerate(calls)
        )
        return steps

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        block = _part_block(part, pointer)
        if entry is None and not flat and part.get("type") != "reasoning":
            return {"type": "model_output", "content": [block]}
        return restore(block, entry, lambda raw: _part(raw) == part)

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _call_block(call, call_pointer(pointer, calls, call)),
            entry,
            lambda raw: _call(raw, pointer) == call,
        )

    def group_block(rest: Mapping[str, Any], blocks: list[Any]) -> Any:
        return {**rest, "content": blocks}

    return weave(kept.get("blocks"), parts, calls, part_block, call_block, group_block)


# ---- request input: user steps, results and the model steps between them ----


def _result_message(block: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    call_id = as_str(
        block.get("call_id"),
        f"{pointer}/call_id",
        "the id of the call this result answers",
    )
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id}
    kept: dict[str, Any] = {}
    result = block.get("result")
    if isinstance(result, str):
        out["content"] = result
    elif isinstance(result, list) and all(
        isinstance(item, dict) and _part(item) for item in result
    ):
        out["content"] = [_part(item) for item in result]
    else:
        out["content"] = args_text(result)
        kept["result_json"] = True
    if isinstance(block.get("name"), str):
        out["name"] = block["name"]
    if isinstance(block.get("is_error"), bool):
        out["is_error"] = block["is_error"]
    fields = {
        k: v
        for k, v in block.items()
        if k not in ("type", "call_id", "result", "name", "is_error")
    }
    if fields:
        kept["fields"] = fields
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _result_block(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kept = extras_of(message, WIRE)
    block: dict[str, Any] = {
        "type": "function_result",
        "call_id": message["tool_call_id"],
    }
    content = message.get("content", "")
    if kept.get("result_json") and isinstance(content, str):
        block["result"] = json.loads(content)
    elif isinstance(content, list):
        block["result"] = [_part_block(part, pointer) for part in content]
    else:
        block["result"] = content
    if "name" in message:
        block["name"] = message["name"]
    if "is_error" in message:
        block["is_error"] = message["is_error"]
    return fill(block, kept["fields"]) if kept.get("fields") else block


def decode_user_input(
    blocks: list[Any], pointer: str, before: str | None
) -> list[dict[str, Any]]:
    """User content items as canonical messages: a user message per run of items, a tool message per result."""
    produced: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []

    def flush() -> None:
        parts: list[dict[str, Any]] = []
        skeleton: list[dict[str, Any]] = []
        for block in run:
            part = _part(block)
            if part is None:
                skeleton.append({"keep": block})
            else:
                parts.append(part)
                skeleton.append({"part": keep_entry(block, _part_block(part, pointer))})
        message: dict[str, Any] = {
            "role": "user",
            "content": plain_text(parts, skeleton),
        }
        if not is_trivial(skeleton):
            message["extras"] = {WIRE: {"blocks": skeleton}}
        produced.append(message)
        run.clear()

    for i, raw in enumerate(blocks):
        block = as_dict(raw, f"{pointer}/{i}", "a content object")
        if block.get("type") == "function_result":
            if run:
                flush()
            produced.append(_result_message(block, f"{pointer}/{i}"))
        else:
            run.append(block)
    if run or not produced:
        flush()
    split_marks(produced, before, WIRE)
    return produced


def decode_input_steps(steps: list[Any], messages: list[dict[str, Any]]) -> None:
    """Append the canonical messages of a request's input steps to `messages`."""
    model_side: ModelSteps | None = None
    for i, raw in enumerate(steps):
        pointer = f"/input/{i}"
        step = as_dict(raw, pointer, "a step object")
        if step.get("type") == "user_input" or step.get("role") == "user":
            if model_side is not None:
                messages.append(model_side.message())
                model_side = None
            content = step.get("content", [])
            before = messages[-1]["role"] if messages else None
            produced: list[dict[str, Any]]
            if isinstance(content, str):
                produced = [{"role": "user", "content": content}]
            else:
                produced = decode_user_input(
                    as_list(content, f"{pointer}/content"), f"{pointer}/content", before
                )
            rest = {k: v for k, v in step.items() if k != "content"}
            if rest != {"type": "user_input"} or isinstance(content, str):
                kept_step = produced[0].setdefault("extras", {}).setdefault(WIRE, {})
                kept_step["step"] = rest
                if isinstance(content, str):
                    kept_step["content_string"] = True
            messages.extend(produced)
        else:
            model_side = model_side or ModelSteps()
            model_side.add(step, pointer)
    if model_side is not None:
        messages.append(model_side.message())


def _user_block(
    part: dict[str, Any], entry: Mapping[str, Any] | None, pointer: str
) -> Any:
    return restore(
        _part_block(part, pointer),
        entry,
        lambda raw: _part(raw) == part,
    )


def encode_input_steps(messages: list[dict[str, Any]]) -> list[Any]:
    """A request's input steps from canonical messages."""
    steps: list[Any] = []
    for i, (side, group) in enumerate(turns(messages, WIRE)):
        pointer = f"/input/{i}"
        if side == "assistant":
            steps.extend(encode_steps(group[0], pointer, False))
            continue
        content: list[Any] = []
        for message in group:
            if message.get("role") == "tool":
                content.append(_result_block(message, pointer))
                continue
            kept = extras_of(message, WIRE)
            parts = [
                p
                for p in parts_of(message.get("content"))
                if p.get("type") != "reasoning"
            ]
            if not kept.get("blocks"):
                content.extend(_part_block(part, pointer) for part in parts)
                continue
            block = partial(_user_block, pointer=pointer)
            content.extend(weave(kept.get("blocks"), parts, [], block, block))
        first = extras_of(group[0], WIRE)
        text = group[0].get("content")
        if first.get("content_string") and len(group) == 1 and isinstance(text, str):
            steps.append({**first["step"], "content": text})
            continue
        steps.append({**first.get("step", {"type": "user_input"}), "content": content})
    return steps
