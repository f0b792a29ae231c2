# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini `contents` to and from canonical messages: parts, function calls and responses, turns, the system instruction.

A model turn becomes one assistant message; a user turn becomes user messages and tool messages, one per
`functionResponse` part, in wire order. See `gemini` for what `extras["gemini"]` holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..call_ids import stable_call_id
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
from ..media import inline, url_type

WIRE = "gemini"


def either_case(block: Mapping[str, Any], camel: str, snake: str) -> Any:
    """Gemini's JSON takes both lowerCamel and snake_case field names."""
    value = block.get(camel)
    return block.get(snake) if value is None else value


# ---- parts ----


def _media_part(media: Any, inline: bool) -> dict[str, Any] | None:
    if not isinstance(media, dict):
        return None
    mime = either_case(media, "mimeType", "mime_type")
    if inline:
        if not isinstance(media.get("data"), str):
            return None
        if isinstance(mime, str) and mime.startswith("audio/"):
            return {"type": "audio", "data": media["data"], "format": mime[6:]}
        part = {
            "type": "image"
            if isinstance(mime, str) and mime.startswith("image/")
            else "file",
            "data": media["data"],
        }
    else:
        uri = either_case(media, "fileUri", "file_uri")
        if not isinstance(uri, str):
            return None
        part = {
            "type": "image"
            if isinstance(mime, str) and mime.startswith("image/")
            else "file",
            "url": uri,
        }
    if isinstance(mime, str):
        part["media_type"] = mime
    return part


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The canonical part for a Gemini part; None for parts canonical content has no place for."""
    if isinstance(block.get("text"), str):
        if block.get("thought") is True:
            part = {"type": "reasoning", "text": block["text"]}
            signature = either_case(block, "thoughtSignature", "thought_signature")
            if isinstance(signature, str):
                part["signature"] = signature
            return part
        return {"type": "text", "text": block["text"]}
    if "inlineData" in block or "inline_data" in block:
        return _media_part(either_case(block, "inlineData", "inline_data"), True)
    if "fileData" in block or "file_data" in block:
        return _media_part(either_case(block, "fileData", "file_data"), False)
    return None


def _part_block(part: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    part = inline(part)
    kind = part.get("type")
    if kind == "text":
        return {"text": part["text"]}
    if kind == "reasoning":
        block: dict[str, Any] = {"text": part.get("text", ""), "thought": True}
        if "signature" in part:
            block["thoughtSignature"] = part["signature"]
        return block
    if kind == "audio":
        return {
            "inlineData": {
                "mimeType": f"audio/{part.get('format', 'wav')}",
                "data": part["data"],
            }
        }
    if kind in ("image", "file"):
        if "data" in part:
            media = {
                "mimeType": part.get("media_type", "application/octet-stream"),
                "data": part["data"],
            }
            return {"inlineData": media}
        if "url" in part:
            mime = part.get("media_type") or url_type(part["url"])
            if mime is None:
                fail(
                    f"{pointer}/media_type",
                    "a MIME type for this URL: Gemini refuses a fileData without one, "
                    "and the URL's extension does not tell it",
                )
            return {"fileData": {"mimeType": mime, "fileUri": part["url"]}}
    fail(pointer, "a text, reasoning, image, audio or file part with `data` or `url`")


# ---- calls ----


def _function_call(block: Mapping[str, Any]) -> Any:
    return either_case(block, "functionCall", "function_call")


def _call(
    block: Mapping[str, Any], pointer: str, scope: str, index: int, generated: list[str]
) -> dict[str, Any]:
    fc = as_dict(
        _function_call(block), f"{pointer}/functionCall", "a functionCall object"
    )
    name = as_str(
        fc.get("name"), f"{pointer}/functionCall/name", "the function name as a string"
    )
    args = fc.get("args")
    arguments = args_text({} if args is None else args)
    call_id = fc.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = stable_call_id(scope, index, name, arguments)
        generated.append(call_id)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _call_block(
    call: Mapping[str, Any], generated: list[str], pointer: str
) -> dict[str, Any]:
    fn = call["function"]
    fc: dict[str, Any] = {}
    if call["id"] not in generated:
        fc["id"] = call["id"]
    fc["name"] = fn["name"]
    fc["args"] = args_object(fn["arguments"], f"{pointer}/function/arguments")
    return {"functionCall": fc}


def _same_call(
    raw: Mapping[str, Any], call: Mapping[str, Any], generated: list[str]
) -> bool:
    fc = _function_call(raw)
    if not isinstance(fc, dict):
        return False
    args = fc.get("args")
    same_id = fc.get("id") == call["id"] or (
        call["id"] in generated and not fc.get("id")
    )
    fn = call["function"]
    return (
        same_id
        and fc.get("name") == fn["name"]
        and args_text({} if args is None else args) == fn["arguments"]
    )


# ---- turns ----


def decode_model_turn(
    turn: Mapping[str, Any], pointer: str, scope: str
) -> dict[str, Any]:
    """A model turn as one canonical assistant message; calls without an id get stable ids in `scope`."""
    raw_parts = turn.get("parts", [])
    blocks = as_list(raw_parts, f"{pointer}/parts", "`parts`, an array of part objects")
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    skeleton: list[dict[str, Any]] = []
    generated: list[str] = []
    for i, raw in enumerate(blocks):
        at = f"{pointer}/parts/{i}"
        block = as_dict(raw, at, "a part object")
        if _function_call(block) is not None:
            call = _call(block, at, scope, len(calls), generated)
            calls.append(call)
            skeleton.append(
                {"call": keep_entry(block, _call_block(call, generated, at))}
            )
            continue
        part = _part(block)
        if part is None:
            skeleton.append({"keep": block})
            continue
        parts.append(part)
        skeleton.append({"part": keep_entry(block, _part_block(part, at))})
    kept: dict[str, Any] = {}
    if not is_trivial(skeleton):
        kept["blocks"] = skeleton
    if any(part["type"] == "reasoning" for part in parts):
        kept["signed"] = True
    if generated:
        kept["generated_ids"] = generated
    rest = {key: value for key, value in turn.items() if key != "parts"}
    if rest != {"role": "model"}:
        kept["turn"] = rest
    if "parts" not in turn:
        kept["no_parts"] = True
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(parts)}
    if calls:
        out["tool_calls"] = calls
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _tool_message(
    block: Mapping[str, Any],
    pointer: str,
    scope: str,
    index: int,
    pending: list[tuple[str, str]],
) -> dict[str, Any]:
    fr = as_dict(
        either_case(block, "functionResponse", "function_response"),
        pointer,
        "a functionResponse object",
    )
    name = as_str(fr.get("name"), f"{pointer}/name", "the function name as a string")
    kept: dict[str, Any] = {}
    call_id = fr.get("id")
    if isinstance(call_id, str) and call_id:
        pending[:] = [entry for entry in pending if entry[1] != call_id]
    else:
        match = next(
            (i for i, (called, _) in enumerate(pending) if called == name), None
        )
        call_id = (
            pending.pop(match)[1]
            if match is not None
            else stable_call_id(scope, index, name, "")
        )
        kept["generated_ids"] = [call_id]
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "name": name}
    response = fr.get("response")
    key, value = (
        next(iter(response.items()))
        if isinstance(response, dict) and len(response) == 1
        else (None, None)
    )
    if isinstance(value, str):
        out["content"] = value
        if key == "error":
            out["is_error"] = True
        elif key != "output":
            kept["response_key"] = key
    else:
        out["content"] = args_text(response)
        kept["response_json"] = True
    fields = {k: v for k, v in fr.items() if k not in ("id", "name", "response")}
    if fields:
        kept["fields"] = fields
    part_fields = {
        k: v
        for k, v in block.items()
        if k not in ("functionResponse", "function_response")
    }
    if part_fields:
        kept["part_fields"] = part_fields
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def decode_user_turn(
    turn: Mapping[str, Any],
    pointer: str,
    scope: str,
    pending: list[tuple[str, str]],
    before: str | None,
) -> list[dict[str, Any]]:
    """A user turn as canonical messages: a user message per run of ordinary parts, a tool message per result."""
    blocks = as_list(
        turn.get("parts"), f"{pointer}/parts", "`parts`, an array of part objects"
    )
    produced: list[dict[str, Any]] = []
    run: list[tuple[int, dict[str, Any]]] = []

    def flush() -> None:
        parts: list[dict[str, Any]] = []
        skeleton: list[dict[str, Any]] = []
        for i, block in run:
            part = _part(block)
            if part is None:
                skeleton.append({"keep": block})
            else:
                parts.append(part)
                skeleton.append(
                    {
                        "part": keep_entry(
                            block, _part_block(part, f"{pointer}/parts/{i}")
                        )
                    }
                )
        message: dict[str, Any] = {"role": "user", "content": parts}
        if not is_trivial(skeleton):
            message["extras"] = {WIRE: {"blocks": skeleton}}
        produced.append(message)
        run.clear()

    for i, raw in enumerate(blocks):
        block = as_dict(raw, f"{pointer}/parts/{i}", "a part object")
        if "functionResponse" in block or "function_response" in block:
            if run:
                flush()
            produced.append(
                _tool_message(block, f"{pointer}/parts/{i}", scope, i, pending)
            )
        else:
            run.append((i, block))
    if run or not produced:
        flush()
    _plain_text(produced)
    split_marks(produced, before, WIRE)
    rest = {key: value for key, value in turn.items() if key != "parts"}
    if rest != {"role": "user"}:
        produced[0].setdefault("extras", {}).setdefault(WIRE, {})["turn"] = rest
    return produced


def _plain_text(produced: list[dict[str, Any]]) -> None:
    """A user turn that is one plain text part reads as a string, as in other wires' canonical messages."""
    for message in produced:
        content = message.get("content")
        plain = message["role"] == "user" and "extras" not in message
        if (
            plain
            and isinstance(content, list)
            and len(content) == 1
            and content[0]["type"] == "text"
        ):
            message["content"] = content[0]["text"]


def encode_user_turn(
    group: list[dict[str, Any]], names: Mapping[str, str], pointer: str
) -> dict[str, Any]:
    """One user turn from a group of user and tool messages; `names` finds the function a result answers."""
    parts: list[Any] = []
    for message in group:
        kept = extras_of(message, WIRE)
        if message.get("role") == "tool":
            parts.append(_response_part(message, kept, names, pointer))
            continue
        content = [
            part
            for part in parts_of(message.get("content"))
            if part.get("type") != "reasoning"
        ]
        if not kept:
            # Nothing kept from a decoded body: the parts in order, as `weave` would give them.
            parts.extend(_part_block(part, pointer) for part in content)
            continue

        def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
            return restore(
                _part_block(part, pointer), entry, lambda raw: _part(raw) == part
            )

        parts.extend(weave(kept.get("blocks"), content, [], part_block, part_block))
    turn = extras_of(group[0], WIRE).get("turn", {"role": "user"})
    return {**turn, "parts": parts}


def _response_part(
    message: Mapping[str, Any],
    kept: Mapping[str, Any],
    names: Mapping[str, str],
    pointer: str,
) -> dict[str, Any]:
    call_id = message["tool_call_id"]
    fr: dict[str, Any] = {}
    if call_id not in (kept.get("generated_ids") or ()):
        fr["id"] = call_id
    fr["name"] = message.get("name") or names.get(call_id) or ""
    if not fr["name"]:
        fail(
            f"{pointer}/name",
            "the tool name: Gemini function responses are matched by name",
        )
    content = message.get("content", "")
    if not isinstance(content, str):
        content = "".join(
            part.get("text", "") for part in content if part.get("type") == "text"
        )
    if kept.get("response_json"):
        fr["response"] = args_object(content, f"{pointer}/content")
    else:
        key = kept.get("response_key") or (
            "error" if message.get("is_error") else "output"
        )
        fr["response"] = {key: content}
    if kept.get("fields"):
        fill(fr, kept["fields"])
    block = {"functionResponse": fr}
    return fill(block, kept["part_fields"]) if kept.get("part_fields") else block


def encode_model_turn(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    """A model turn from a canonical assistant message, its kept part order and signatures restored."""
    kept = extras_of(message, WIRE)
    parts = parts_of(message.get("content"))
    if not signed_for(message, WIRE):
        parts = [part for part in parts if part.get("type") != "reasoning"]
    calls = message.get("tool_calls") or []
    if not kept:
        # Nothing kept from a decoded body: parts then calls, as `weave` would give them.
        blocks = [_part_block(part, pointer) for part in parts]
        blocks.extend(
            _call_block(call, [], f"{pointer}/tool_calls/{index}")
            for index, call in enumerate(calls)
        )
        return {"role": "model", "parts": blocks}
    generated = kept.get("generated_ids") or []

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, pointer), entry, lambda raw: _part(raw) == part
        )

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _call_block(call, generated, call_pointer(pointer, calls, call)),
            entry,
            lambda raw: _same_call(raw, call, generated),
        )

    turn = dict(kept.get("turn", {"role": "model"}))
    if not (kept.get("no_parts") and not parts and not calls):
        turn["parts"] = weave(kept.get("blocks"), parts, calls, part_block, call_block)
    return turn


# ---- system instruction ----


def decode_system(
    body: Mapping[str, Any], kept: dict[str, Any]
) -> dict[str, Any] | None:
    """The `systemInstruction` as a canonical system message (None when there is none); its layout goes in `kept`."""
    key = "systemInstruction" if "systemInstruction" in body else "system_instruction"
    system = body.get(key)
    if system is None:
        return None
    if isinstance(system, str):
        kept["system"] = {"key": key, "string": True}
        return {"role": "system", "content": system}
    system = as_dict(system, f"/{key}", "a content object with `parts`")
    blocks = as_list(
        system.get("parts"), f"/{key}/parts", "`parts`, an array of text parts"
    )
    parts: list[dict[str, Any]] = []
    skeleton: list[dict[str, Any]] = []
    for i, raw in enumerate(blocks):
        block = as_dict(raw, f"/{key}/parts/{i}", "a part object")
        part = _part(block)
        if part is None or part["type"] != "text":
            skeleton.append({"keep": block})
        else:
            parts.append(part)
            skeleton.append({"part": keep_entry(block, _part_block(part, ""))})
    layout: dict[str, Any] = {}
    if key != "systemInstruction":
        layout["key"] = key
    if not is_trivial(skeleton):
        layout["blocks"] = skeleton
    rest = {k: v for k, v in system.items() if k != "parts"}
    if rest:
        layout["fields"] = rest
    if layout:
        kept["system"] = layout
    content: Any = (
        parts[0]["text"] if len(parts) == 1 and "blocks" not in layout else parts
    )
    return {"role": "system", "content": content}


def encode_system(
    messages: list[dict[str, Any]], kept: Mapping[str, Any], body: dict[str, Any]
) -> None:
    """Write the system messages into `body` as a `systemInstruction` spelled the way it came."""
    system = [message for message in messages if message.get("role") == "system"]
    if not system:
        return
    layout = kept.get("system") or {}
    key = layout.get("key", "systemInstruction")
    if (
        layout.get("string")
        and len(system) == 1
        and isinstance(system[0].get("content"), str)
    ):
        body[key] = system[0]["content"]
        return
    parts = [part for message in system for part in parts_of(message.get("content"))]

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, f"/{key}"), entry, lambda raw: _part(raw) == part
        )

    content = {"parts": weave(layout.get("blocks"), parts, [], part_block, part_block)}
    body[key] = fill(content, layout["fields"]) if layout.get("fields") else content
