# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Chat-completions content parts and tool call entries to and from canonical parts and calls, in each dialect's spelling."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..call_ids import stable_call_id
from ..helpers import (
    args_text,
    as_dict,
    as_str,
    fail,
    is_trivial,
    keep_entry,
    restore,
    weave,
)
from ..media import audio_format
from .dialects import Dialect

# ---- content parts ----


def _data_url(url: str) -> tuple[str, str] | None:
    """(media_type, base64 data) of a `data:<type>;base64,<data>` URL."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    return head[5:-7], data


def _part(block: dict[str, Any], d: Dialect) -> dict[str, Any] | None:
    """The canonical part for a wire content part; None for a part type canonical content has no place for."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "image_url":
        return _image_part(block.get(d.key("image_url")))
    if kind == "input_audio":
        audio = block.get(d.key("input_audio"))
        if isinstance(audio, dict) and isinstance(audio.get("data"), str):
            part = {"type": "audio", "data": audio["data"]}
            if isinstance(audio.get("format"), str):
                part["format"] = audio["format"]
            return part
        return None
    if kind == "file":
        return _file_part(block.get("file"), d)
    if kind == "thinking":
        return _thinking_part(block.get("thinking"))
    return None


def _image_part(image: Any) -> dict[str, Any] | None:
    if isinstance(image, str):
        return {"type": "image", "url": image}
    if not isinstance(image, dict) or not isinstance(image.get("url"), str):
        return None
    part = {"type": "image", "url": image["url"]}
    if image.get("detail") in ("auto", "low", "high"):
        part["detail"] = image["detail"]
    return part


def _file_part(file: Any, d: Dialect) -> dict[str, Any] | None:
    if not isinstance(file, dict):
        return None
    part: dict[str, Any] = {"type": "file"}
    if isinstance(file.get(d.key("file_id")), str):
        part["file_id"] = file[d.key("file_id")]
    data = file.get(d.key("file_data"))
    if isinstance(data, str):
        parsed = _data_url(data)
        if parsed:
            part["media_type"], part["data"] = parsed
        else:
            part["data"] = data
    if isinstance(file.get("filename"), str):
        part["filename"] = file["filename"]
    return part


def _thinking_part(thinking: Any) -> dict[str, Any] | None:
    """Mistral's thinking chunk: `thinking` is a list of text chunks (or, leniently, a string)."""
    if isinstance(thinking, str):
        return {"type": "reasoning", "text": thinking}
    if not isinstance(thinking, list):
        return None
    texts = [
        chunk["text"]
        for chunk in thinking
        if isinstance(chunk, dict) and isinstance(chunk.get("text"), str)
    ]
    if len(texts) != len(thinking):
        return None
    return {"type": "reasoning", "text": "".join(texts)}


def _part_block(part: Mapping[str, Any], d: Dialect, pointer: str) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "image":
        url = part.get("url")
        if url is None and "data" in part:
            url = f"data:{part.get('media_type', 'image/png')};base64,{part['data']}"
        if url is None:
            fail(pointer, "an image part with `url` or `data`")
        image = {"url": url}
        if "detail" in part:
            image["detail"] = part["detail"]
        return {"type": "image_url", d.key("image_url"): image}
    if kind == "audio":
        audio = {"data": part["data"]}
        if d.wire == "openai-chat":
            # OpenAI's input_audio requires a format, wav or mp3 only; untyped audio is typed by its first bytes.
            known = audio_format(part)
            if known is None:
                fail(
                    pointer,
                    "an audio part in wav or mp3: OpenAI's chat completions take no other audio "
                    f"(format {part.get('format', 'not given, and the data is neither')!s})",
                )
            audio["format"] = known
        elif "format" in part:
            audio["format"] = part["format"]
        return {"type": "input_audio", d.key("input_audio"): audio}
    if kind == "file":
        return {"type": "file", "file": _file_block(part, d, pointer)}
    if kind == "reasoning":
        return {
            "type": "thinking",
            "thinking": [{"type": "text", "text": part.get("text") or ""}],
        }
    fail(pointer, "a text, image, audio, file or reasoning part")


def _file_block(part: Mapping[str, Any], d: Dialect, pointer: str) -> dict[str, Any]:
    file: dict[str, Any] = {}
    if "file_id" in part:
        file[d.key("file_id")] = part["file_id"]
    if "data" in part:
        media_type = part.get("media_type")
        file[d.key("file_data")] = (
            f"data:{media_type};base64,{part['data']}" if media_type else part["data"]
        )
    elif "url" in part:
        fail(
            pointer,
            "a file part with `file_id` or `data`: chat completions take no file URL",
        )
    if "filename" in part:
        file["filename"] = part["filename"]
    return file


def decode_content(
    content: list[Any], pointer: str, d: Dialect
) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """Content parts as canonical parts, with the skeleton that restores them (None when trivial)."""
    parts: list[dict[str, Any]] = []
    skeleton: list[dict[str, Any]] = []
    for i, raw in enumerate(content):
        block = as_dict(raw, f"{pointer}/{i}", "a content part object")
        part = _part(block, d)
        if part is None:
            skeleton.append({"keep": block})
            continue
        parts.append(part)
        skeleton.append({"part": keep_entry(block, _part_block(part, d, pointer))})
    return parts, None if is_trivial(skeleton) else skeleton


def encode_parts(
    parts: list[dict[str, Any]], skeleton: list[Any] | None, d: Dialect, pointer: str
) -> list[dict[str, Any]]:
    """Content parts from canonical parts, in the kept order when there is one."""

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, d, pointer), entry, lambda raw: _part(raw, d) == part
        )

    return weave(skeleton, parts, [], part_block, part_block)


# ---- tool calls ----


def decode_call(
    raw: Any, pointer: str, d: Dialect, scope: str, index: int, generated: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool call entry as a canonical call, with the entry that restores its wire spelling."""
    entry = as_dict(raw, pointer, "a tool call object")
    if entry.get("type") == "custom" and isinstance(entry.get("custom"), dict):
        fn = entry["custom"]
        name = as_str(
            fn.get("name"), f"{pointer}/custom/name", "the tool name as a string"
        )
        arguments = args_text(fn.get("input", ""))
    else:
        fn = as_dict(
            entry.get("function"),
            f"{pointer}/function",
            "a `function` object with name and arguments",
        )
        name = as_str(
            fn.get("name"), f"{pointer}/function/name", "the function name as a string"
        )
        value = fn.get("arguments", "")
        arguments = value if isinstance(value, str) else args_text(value)
    call_id = entry.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = stable_call_id(scope, index, name, arguments)
        generated.append(call_id)
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return call, keep_entry(entry, call_block(call, d, generated))


def call_block(
    call: Mapping[str, Any], d: Dialect, generated: list[str]
) -> dict[str, Any]:
    """The tool call entry for a canonical call in the dialect's spelling; made-up ids are left out."""
    block: dict[str, Any] = {}
    if call["id"] not in generated:
        block["id"] = call["id"]
    if d.typed_calls:
        block["type"] = "function"
    fn = call["function"]
    block["function"] = {"name": fn["name"], "arguments": fn["arguments"]}
    return block


def same_call(
    raw: Mapping[str, Any], call: Mapping[str, Any], generated: list[str]
) -> bool:
    """Whether a kept raw call entry still says what the canonical call says."""
    fn = raw.get("custom") if raw.get("type") == "custom" else raw.get("function")
    if not isinstance(fn, dict):
        return False
    value = (
        fn.get("input", "") if raw.get("type") == "custom" else fn.get("arguments", "")
    )
    arguments = (
        value
        if isinstance(value, str) and raw.get("type") != "custom"
        else args_text(value)
    )
    same_id = call["id"] in generated or raw.get("id") == call["id"]
    return bool(
        same_id
        and fn.get("name") == call["function"]["name"]
        and arguments == call["function"]["arguments"]
    )


# The type of the note a decoder gives for a message holding two tool calls under one id.
SHARED_CALL_ID = "shared_call_id"
# The type of the note a camelCase body gets for snake_case `tool_calls` beside its own `toolCalls`.
FOREIGN_CALLS = "foreign_calls"


def note_shared_ids(
    extras: dict[str, Any],
    message: Mapping[str, Any],
    raw: Any = None,
    d: Dialect | None = None,
) -> dict[str, Any]:
    """`extras`, with a note under "notes" when two of the decoded message's tool calls share an id: a call sent
    twice, or one that is not the model's (the same body streamed ends `incomplete` with this sentence); and one
    when the raw message of a dialect spelling `tool_calls` otherwise (camelCase) holds `tool_calls` too: they
    are kept as an opaque field, no calls of the answer."""
    notes = list(extras.get("notes", ()))
    own = "tool_calls" if d is None else d.key("tool_calls")
    if own != "tool_calls" and isinstance(raw, dict) and "tool_calls" in raw:
        notes.append(
            {
                "type": FOREIGN_CALLS,
                "message": f"{d.wire if d else ''} message holds `tool_calls` beside `{own}`:"
                " kept as a field, not read as the answer's tool calls",
                "raw": raw["tool_calls"],
            }
        )
    calls = message.get("tool_calls")
    ids = (
        [c.get("id") for c in calls if isinstance(c, dict)]
        if isinstance(calls, list)
        else []
    )
    shared = sorted({i for i in ids if isinstance(i, str) and ids.count(i) > 1})
    if shared:
        notes.append(
            {
                "type": SHARED_CALL_ID,
                "message": "two tool calls under one id: a call sent twice, or one of them is not the model's",
                "raw": shared,
            }
        )
    if notes:
        extras["notes"] = notes
    return extras
