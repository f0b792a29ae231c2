# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenAI Chat Completions bodies (and Mistral's and camelCase clients' spellings of them) to and from canonical terms.

One module serves three wires that differ only in spelling: `openai-chat` (OpenAI and the compatible vendors:
Groq, xAI, DeepSeek, Qwen, Ollama's and Gemini's and Anthropic's compat endpoints), `mistral` (call entries without
`type`, content as typed chunks, `thinking` chunks) and `openai-chat-camel` (`toolCalls`, `toolCallId`,
`finishReason`, `promptTokens`... as Java and JS clients write them). Pass the wire name as `wire=`.

A full response body, which is also what a stream aggregator hands to `decode_response`:
`{"id", "object": "chat.completion", "created", "model", "choices": [{"index": 0, "message": {"role":
"assistant", "content": str | null, "reasoning_content"?: str, "tool_calls"?: [{"id", "type": "function",
"function": {"name", "arguments": <JSON text>}}]}, "finish_reason"}], "usage"?: {"prompt_tokens",
"completion_tokens", "total_tokens", "prompt_tokens_details"?: {"cached_tokens"}, "completion_tokens_details"?:
{"reasoning_tokens"}}}`. Legacy bodies put `"function_call": {"name", "arguments"}` in place of `tool_calls`.

What `extras[wire]` holds on a canonical message (only the keys that are needed):
- `fields`: message keys the canonical model has no place for (`prefix`, `annotations`, `refusal: null`, vendor
  keys such as Gemini's `thought_signature`), written back as they were.
- `reasoning`: where reasoning text lives on the wire: `"reasoning_content"`, `"reasoning"` or `"content"` (typed
  chunks, Mistral). Reasoning parts from other wires are not sent to OpenAI-compatible wires.
- `omit_content` / `empty_content`: the message had no `content` key / had `""` or `[]` where canonical has none.
- `content_list`: the one text part was sent as a list of parts. `role`: `"developer"` or `"function"` (legacy).
  `tool_name`: a tool message carried `name` (OpenAI's has none, so it is only written back where it was).
- `parts` / `calls`: per content part and per tool call, `{"rest": {...}}` with wire keys the encoder does not
  produce (`index`, `cache_control`) or `{"raw": {...}}` for a spelling it does not produce (arguments sent as an
  object, `custom` calls); `parts` may also hold `{"keep": block}` for a part with no canonical type (`refusal`).
- `function_call`: the single call travels in the legacy `function_call` field. `generated_ids`: ids made up for
  calls the wire sent without one (legacy calls, `id: ""`); they are left out again when encoding.
Request and Response extras hold `{wire: {"fields": {...}}}` with the body keys outside the canonical model, plus
`tools` (the wire's tool list when re-exporting would spell it differently), `tools_key: "functions"`,
`usage` (the wire's usage object when it reports more than canonical usage), `choice` / `more_choices`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any

from .base import (
    _ABSENT,
    ProviderError,
    Request,
    Response,
    args_text,
    as_dict,
    as_list,
    as_str,
    assistant_content,
    body_rest,
    decoded_request,
    export_checked,
    extras_of,
    fail,
    fill,
    finish,
    guarded,
    is_trivial,
    keep_entry,
    number,
    parts_of,
    portable,
    restore,
    stable_call_id,
    stop_list,
    weave,
)


@dataclass(frozen=True)
class _Dialect:
    wire: str
    names: Mapping[str, str]
    typed_calls: bool
    export_as: str
    reasoning_default: str | None

    def key(self, name: str) -> str:
        return self.names.get(name, name)


_CAMEL = MappingProxyType(
    {
        "tool_calls": "toolCalls",
        "tool_call_id": "toolCallId",
        "finish_reason": "finishReason",
        "function_call": "functionCall",
        "reasoning_content": "reasoningContent",
        "prompt_tokens": "promptTokens",
        "completion_tokens": "completionTokens",
        "total_tokens": "totalTokens",
        "prompt_tokens_details": "promptTokensDetails",
        "completion_tokens_details": "completionTokensDetails",
        "cached_tokens": "cachedTokens",
        "cache_write_tokens": "cacheWriteTokens",
        "reasoning_tokens": "reasoningTokens",
        "image_url": "imageUrl",
        "input_audio": "inputAudio",
        "file_id": "fileId",
        "file_data": "fileData",
        "max_tokens": "maxTokens",
        "top_p": "topP",
        "tool_choice": "toolChoice",
        "parallel_tool_calls": "parallelToolCalls",
    }
)
_SNAKE: Mapping[str, str] = MappingProxyType({})
_DIALECTS = MappingProxyType(
    {
        "openai-chat": _Dialect("openai-chat", _SNAKE, True, "openai", None),
        "mistral": _Dialect("mistral", _SNAKE, False, "mistral", "content"),
        "openai-chat-camel": _Dialect(
            "openai-chat-camel", _CAMEL, True, "openai", None
        ),
    }
)
WIRES = tuple(_DIALECTS)

_FINISH = MappingProxyType(
    {
        "stop": "stop",
        "eos": "stop",
        "end_turn": "stop",
        "tool_calls": "tool_calls",
        "function_call": "tool_calls",
        "tool_use": "tool_calls",
        "length": "length",
        "model_length": "length",
        "max_tokens": "length",
        "content_filter": "content_filter",
        "error": "error",
        "insufficient_system_resource": "error",
    }
)
_FINISH_OUT = MappingProxyType(
    {
        "stop": "stop",
        "tool_calls": "tool_calls",
        "length": "length",
        "content_filter": "content_filter",
    }
)
_REASONING_KEYS = ("reasoning_content", "reasoning")


def _dialect(wire: str) -> _Dialect:
    dialect = _DIALECTS.get(wire)
    if dialect is None:
        raise ValueError(
            f"{wire!r} is not a chat-completions wire; one of {', '.join(_DIALECTS)}"
        )
    return dialect


# ---- content parts ----


def _data_url(url: str) -> tuple[str, str] | None:
    """(media_type, base64 data) of a `data:<type>;base64,<data>` URL."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    return head[5:-7], data


def _part(block: dict[str, Any], d: _Dialect) -> dict[str, Any] | None:
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


def _file_part(file: Any, d: _Dialect) -> dict[str, Any] | None:
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


def _part_block(part: Mapping[str, Any], d: _Dialect, pointer: str) -> dict[str, Any]:
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
        if "format" in part:
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


def _file_block(part: Mapping[str, Any], d: _Dialect, pointer: str) -> dict[str, Any]:
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


def _decode_content(
    content: list[Any], pointer: str, d: _Dialect
) -> tuple[list[dict[str, Any]], list[Any] | None]:
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


def _encode_parts(
    parts: list[dict[str, Any]], skeleton: list[Any] | None, d: _Dialect, pointer: str
) -> list[dict[str, Any]]:
    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, d, pointer), entry, lambda raw: _part(raw, d) == part
        )

    return weave(skeleton, parts, [], part_block, part_block)


# ---- tool calls ----


def _decode_call(
    raw: Any, pointer: str, d: _Dialect, scope: str, index: int, generated: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
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
    return call, keep_entry(entry, _call_block(call, d, generated))


def _call_block(
    call: Mapping[str, Any], d: _Dialect, generated: list[str]
) -> dict[str, Any]:
    block: dict[str, Any] = {}
    if call["id"] not in generated:
        block["id"] = call["id"]
    if d.typed_calls:
        block["type"] = "function"
    fn = call["function"]
    block["function"] = {"name": fn["name"], "arguments": fn["arguments"]}
    return block


def _same_call(
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


# ---- messages ----


def _decode_message(
    raw: Any, pointer: str, d: _Dialect, scope: str, pending: list[tuple[str, str]]
) -> dict[str, Any]:
    msg = as_dict(raw, pointer, "a message object")
    role = msg.get("role")
    if role in ("system", "developer", "user"):
        return _decode_plain(msg, pointer, d)
    if role == "assistant":
        return _decode_assistant(msg, pointer, d, scope, pending)
    if role == "tool":
        return _decode_tool(msg, pointer, d)
    if role == "function":
        return _decode_function_result(msg, pointer, scope, pending, d)
    fail(
        f"{pointer}/role", "one of system, developer, user, assistant, tool or function"
    )


def _take_content(
    msg: Mapping[str, Any], pointer: str, d: _Dialect, kept: dict[str, Any]
) -> list[dict[str, Any]] | str | None:
    """Content as the wire spelled it: a string, parts, or None, with its empty spellings noted in `kept`."""
    content = msg.get("content", _ABSENT)
    if content is _ABSENT:
        kept["omit_content"] = True
        return None
    if content is None or isinstance(content, str):
        return content
    parts, skeleton = _decode_content(
        as_list(content, f"{pointer}/content", "a string or an array of parts"),
        f"{pointer}/content",
        d,
    )
    if skeleton:
        kept["parts"] = skeleton
    return parts


def _decode_plain(msg: dict[str, Any], pointer: str, d: _Dialect) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    role = msg["role"]
    if role == "developer":
        kept["role"] = role
    content = _take_content(msg, pointer, d, kept)
    if content is None:
        if "omit_content" not in kept:
            kept["empty_content"] = None
        content = ""
    out: dict[str, Any] = {
        "role": "system" if role == "developer" else role,
        "content": content,
    }
    consumed = {"role", "content"}
    if isinstance(msg.get("name"), str):
        out["name"] = msg["name"]
        consumed.add("name")
    return _finish_message(out, msg, consumed, kept, d)


def _finish_message(
    out: dict[str, Any],
    msg: Mapping[str, Any],
    consumed: set[str],
    kept: dict[str, Any],
    d: _Dialect,
) -> dict[str, Any]:
    fields = {key: value for key, value in msg.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    if kept:
        out["extras"] = {d.wire: kept}
    return out


def _decode_assistant(
    msg: dict[str, Any],
    pointer: str,
    d: _Dialect,
    scope: str,
    pending: list[tuple[str, str]],
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    consumed = {"role", "content"}
    parts: list[dict[str, Any]] = []
    for name in _REASONING_KEYS:
        key = d.key(name)
        if isinstance(msg.get(key), str):
            parts.append({"type": "reasoning", "text": msg[key]})
            kept["reasoning"] = key
            consumed.add(key)
            break
    content = _take_content(msg, pointer, d, kept)
    if isinstance(content, str):
        if content:
            parts.append({"type": "text", "text": content})
        else:
            kept["empty_content"] = ""
    elif isinstance(content, list):
        if not content and not kept.get("parts"):
            kept["empty_content"] = []
        if any(part["type"] == "reasoning" for part in content):
            kept["reasoning"] = "content"
        if len(content) == 1 and content[0]["type"] == "text" and not kept.get("parts"):
            kept["content_list"] = True
        parts.extend(content)
    if "reasoning" in kept and kept["reasoning"] == d.reasoning_default:
        del kept["reasoning"]
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(parts)}
    for key in ("name", "refusal"):
        if isinstance(msg.get(key), str):
            out[key] = msg[key]
            consumed.add(key)
    calls, generated = _decode_calls(msg, pointer, d, scope, kept, consumed, pending)
    if calls is not None:
        out["tool_calls"] = calls
    if generated:
        kept["generated_ids"] = generated
    return _finish_message(out, msg, consumed, kept, d)


def _decode_calls(
    msg: Mapping[str, Any],
    pointer: str,
    d: _Dialect,
    scope: str,
    kept: dict[str, Any],
    consumed: set[str],
    pending: list[tuple[str, str]],
) -> tuple[list[dict[str, Any]] | None, list[str]]:
    generated: list[str] = []
    key = d.key("tool_calls")
    raw_calls = msg.get(key)
    if isinstance(raw_calls, list):
        consumed.add(key)
        pairs = [
            _decode_call(raw, f"{pointer}/{key}/{j}", d, scope, j, generated)
            for j, raw in enumerate(raw_calls)
        ]
        if any(entry for _, entry in pairs):
            kept["calls"] = [entry for _, entry in pairs]
        return [call for call, _ in pairs], generated
    legacy_key = d.key("function_call")
    legacy = msg.get(legacy_key)
    if not isinstance(legacy, dict):
        return None, generated
    consumed.add(legacy_key)
    name = as_str(
        legacy.get("name"),
        f"{pointer}/{legacy_key}/name",
        "the function name as a string",
    )
    value = legacy.get("arguments", "")
    arguments = value if isinstance(value, str) else args_text(value)
    call_id = stable_call_id(scope, 0, name, arguments)
    generated.append(call_id)
    pending.append((name, call_id))
    kept["function_call"] = True
    entry = keep_entry(legacy, {"name": name, "arguments": arguments})
    if entry:
        kept["calls"] = [entry]
    return [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
    ], generated


def _decode_tool(msg: dict[str, Any], pointer: str, d: _Dialect) -> dict[str, Any]:
    key = d.key("tool_call_id")
    call_id = as_str(
        msg.get(key), f"{pointer}/{key}", "the id of the tool call this message answers"
    )
    kept: dict[str, Any] = {}
    content = _take_content(msg, pointer, d, kept)
    if content is None:
        if "omit_content" not in kept:
            kept["empty_content"] = None
        content = ""
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
    consumed = {"role", "content", key}
    if isinstance(msg.get("name"), str):
        out["name"] = msg["name"]
        consumed.add("name")
        kept["tool_name"] = True
    return _finish_message(out, msg, consumed, kept, d)


def _decode_function_result(
    msg: dict[str, Any],
    pointer: str,
    scope: str,
    pending: list[tuple[str, str]],
    d: _Dialect,
) -> dict[str, Any]:
    """A legacy `role: function` result: paired with the oldest unanswered legacy call of the same name."""
    name = as_str(
        msg.get("name"),
        f"{pointer}/name",
        "the name of the function this result answers",
    )
    match = next((i for i, (called, _) in enumerate(pending) if called == name), None)
    call_id = (
        pending.pop(match)[1]
        if match is not None
        else stable_call_id(scope, 0, name, "")
    )
    kept: dict[str, Any] = {"role": "function", "generated_ids": [call_id]}
    content = msg.get("content")
    if not isinstance(content, str):
        kept["empty_content"] = content
        content = ""
    out = {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
    return _finish_message(out, msg, {"role", "content", "name"}, kept, d)


def _empty_content(kept: Mapping[str, Any], default: Any) -> Any:
    if kept.get("omit_content"):
        return _ABSENT
    return kept.get("empty_content", default)


def _encode_message(
    msg: Mapping[str, Any], pointer: str, d: _Dialect
) -> dict[str, Any]:
    role = msg.get("role")
    kept = extras_of(msg, d.wire)
    if role == "assistant":
        out = _encode_assistant(msg, pointer, d, kept)
    elif role == "tool":
        out = _encode_tool(msg, pointer, d, kept)
    elif role in ("system", "user"):
        out = {"role": kept.get("role", role)}
        _put_content(out, msg.get("content"), kept, d, pointer, "")
        if "name" in msg:
            out["name"] = msg["name"]
    else:
        fail(f"{pointer}/role", "one of system, user, assistant or tool")
    fields = kept.get("fields")
    return fill(out, fields) if fields else out


def _put_content(
    out: dict[str, Any],
    content: Any,
    kept: Mapping[str, Any],
    d: _Dialect,
    pointer: str,
    empty: Any,
) -> None:
    if content is None or content == "" or content == []:
        value = _empty_content(kept, content if content is not None else empty)
        if value is not _ABSENT:
            out["content"] = value
    elif isinstance(content, str):
        out["content"] = content
    else:
        out["content"] = _encode_parts(
            content, kept.get("parts"), d, f"{pointer}/content"
        )


def _encode_assistant(
    msg: Mapping[str, Any], pointer: str, d: _Dialect, kept: Mapping[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant"}
    where = kept.get("reasoning", d.reasoning_default)
    parts = parts_of(msg.get("content"))
    if where != "content":
        reasoning = [
            part.get("text") or "" for part in parts if part.get("type") == "reasoning"
        ]
        parts = [part for part in parts if part.get("type") != "reasoning"]
        if reasoning and where is not None:
            out[where] = "".join(reasoning)
    if not parts and not kept.get("parts"):
        value = _empty_content(kept, None)
        if value is not _ABSENT:
            out["content"] = value
    elif (
        len(parts) == 1
        and parts[0].get("type") == "text"
        and not kept.get("content_list")
        and "parts" not in kept
    ):
        out["content"] = parts[0]["text"]
    else:
        out["content"] = _encode_parts(
            parts, kept.get("parts"), d, f"{pointer}/content"
        )
    for key in ("name", "refusal"):
        if key in msg:
            out[key] = msg[key]
    calls = msg.get("tool_calls")
    if calls is not None:
        _put_calls(out, calls, d, kept)
    return out


def _put_calls(
    out: dict[str, Any],
    calls: list[dict[str, Any]],
    d: _Dialect,
    kept: Mapping[str, Any],
) -> None:
    generated = kept.get("generated_ids") or []
    entries = kept.get("calls")
    if entries is not None and len(entries) != len(calls):
        entries = None
    if kept.get("function_call") and len(calls) == 1:
        fn = calls[0]["function"]
        block = {"name": fn["name"], "arguments": fn["arguments"]}
        out[d.key("function_call")] = restore(
            block,
            entries[0] if entries else None,
            lambda raw: (
                raw.get("name") == fn["name"]
                and raw.get("arguments") == fn["arguments"]
            ),
        )
        return
    out[d.key("tool_calls")] = [
        _restore_call(call, entries[j] if entries else None, d, generated)
        for j, call in enumerate(calls)
    ]


def _restore_call(
    call: dict[str, Any],
    entry: Mapping[str, Any] | None,
    d: _Dialect,
    generated: list[str],
) -> Any:
    return restore(
        _call_block(call, d, generated),
        entry,
        lambda raw: _same_call(raw, call, generated),
    )


def _encode_tool(
    msg: Mapping[str, Any], pointer: str, d: _Dialect, kept: Mapping[str, Any]
) -> dict[str, Any]:
    if kept.get("role") == "function":
        out: dict[str, Any] = {"role": "function", "name": msg.get("name", "")}
    else:
        out = {"role": "tool", d.key("tool_call_id"): msg["tool_call_id"]}
        # OpenAI's tool message has no `name`; Mistral's takes one. Otherwise it goes back only where it came from.
        if "name" in msg and (kept.get("tool_name") or d.wire == "mistral"):
            out["name"] = msg["name"]
    _put_content(out, msg.get("content", ""), kept, d, pointer, "")
    return out


# ---- tools ----


def _tool_definition(fn: Mapping[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": fn["name"]}
    if isinstance(fn.get("description"), str):
        tool["description"] = fn["description"]
    tool["inputSchema"] = fn.get("parameters", {})
    if isinstance(fn.get("strict"), bool):
        tool["strict"] = fn["strict"]
    return tool


def _function_of(entry: Any) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or entry.get("type", "function") != "function":
        return None
    fn = entry.get("function")
    return fn if isinstance(fn, dict) and isinstance(fn.get("name"), str) else None


def _decode_tools(
    body: Mapping[str, Any], d: _Dialect, kept: dict[str, Any]
) -> list[dict[str, Any]]:
    if isinstance(body.get("tools"), list):
        raw = body["tools"]
        tools = [
            _tool_definition(fn) for fn in map(_function_of, raw) if fn is not None
        ]
        if not tools or _encode_tools(tools, d, None) != raw:
            kept["tools"] = raw
        return tools
    if isinstance(body.get("functions"), list):
        raw = body["functions"]
        tools = [
            _tool_definition(fn)
            for fn in raw
            if isinstance(fn, dict) and isinstance(fn.get("name"), str)
        ]
        kept["tools_key"] = "functions"
        if _encode_tools(tools, d, kept) != raw:
            kept["tools"] = raw
        return tools
    return []


def _encode_tools(
    tools: list[dict[str, Any]], d: _Dialect, kept: Mapping[str, Any] | None
) -> list[Any]:
    legacy = bool(kept and kept.get("tools_key") == "functions")
    raw = kept.get("tools") if kept else None
    if raw is not None:
        if legacy:
            again = [
                _tool_definition(fn)
                for fn in raw
                if isinstance(fn, dict) and isinstance(fn.get("name"), str)
            ]
        else:
            again = [
                _tool_definition(fn) for fn in map(_function_of, raw) if fn is not None
            ]
        if again == tools:
            return list(raw)
    exported = export_checked(tools, d.export_as)
    if legacy:
        return [entry["function"] for entry in exported]
    if raw is not None:
        exported.extend(entry for entry in raw if _function_of(entry) is None)
    return exported


# ---- portable settings ----


def _choice(value: Any) -> Any:
    if value in ("auto", "none", "required"):
        return value
    if value == "any":
        return "required"
    fn = value.get("function") if isinstance(value, dict) else None
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return {"name": fn["name"]}
    return None


def _settings(fields: Mapping[str, Any], d: _Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("max_completion_tokens", "max_tokens"):
        if type(fields.get(d.key(key))) is int:
            out["max_tokens"] = fields[d.key(key)]
            break
    for key in ("temperature", "top_p"):
        if number(fields.get(d.key(key))):
            out[key] = fields[d.key(key)]
    stop = stop_list(fields.get("stop"))
    if stop is not None:
        out["stop"] = stop
    legacy = fields.get(d.key("function_call"))
    choice = _choice(
        fields.get(
            d.key("tool_choice"),
            {"function": legacy} if isinstance(legacy, dict) else legacy,
        )
    )
    if choice is not None:
        out["tool_choice"] = choice
    if isinstance(fields.get(d.key("parallel_tool_calls")), bool):
        out["parallel_tool_calls"] = fields[d.key("parallel_tool_calls")]
    return out


def _apply_settings(
    settings: Mapping[str, Any], body: dict[str, Any], d: _Dialect
) -> None:
    if "max_tokens" in settings:
        # OpenAI's reasoning models refuse max_tokens; the compatible vendors and Mistral take it.
        body[
            d.key("max_completion_tokens" if d.wire == "openai-chat" else "max_tokens")
        ] = settings["max_tokens"]
    for key in ("temperature", "top_p", "stop", "parallel_tool_calls"):
        if key in settings:
            body[d.key(key)] = settings[key]
    choice = settings.get("tool_choice")
    if isinstance(choice, dict):
        body[d.key("tool_choice")] = {
            "type": "function",
            "function": {"name": choice["name"]},
        }
    elif choice is not None:
        body[d.key("tool_choice")] = (
            "any" if choice == "required" and d.wire == "mistral" else choice
        )


# ---- usage and finish ----


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _usage(raw: Any, d: _Dialect) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    prompt, completion = (
        _count(raw.get(d.key("prompt_tokens"))),
        _count(raw.get(d.key("completion_tokens"))),
    )
    if prompt is None or completion is None:
        return None
    usage = {"input_tokens": prompt, "output_tokens": completion}
    total = _count(raw.get(d.key("total_tokens")))
    if total is not None:
        usage["total_tokens"] = total
    prompt_details = raw.get(d.key("prompt_tokens_details"))
    prompt_details = prompt_details if isinstance(prompt_details, dict) else {}
    cached = _count(prompt_details.get(d.key("cached_tokens")))
    for vendor_key in ("prompt_cache_hit_tokens", "num_cached_tokens", "cached_tokens"):
        if cached is None:
            cached = _count(raw.get(vendor_key))
    if cached is not None:
        usage["cache_read_tokens"] = cached
    written = _count(prompt_details.get(d.key("cache_write_tokens")))
    if written is not None:
        usage["cache_write_tokens"] = written
    completion_details = raw.get(d.key("completion_tokens_details"))
    if isinstance(completion_details, dict):
        reasoning = _count(completion_details.get(d.key("reasoning_tokens")))
        if reasoning is not None:
            usage["reasoning_tokens"] = reasoning
    return usage


def _usage_body(usage: Mapping[str, Any], d: _Dialect) -> dict[str, Any]:
    body: dict[str, Any] = {
        d.key("prompt_tokens"): usage["input_tokens"],
        d.key("completion_tokens"): usage["output_tokens"],
        d.key("total_tokens"): usage.get(
            "total_tokens", usage["input_tokens"] + usage["output_tokens"]
        ),
    }
    details = {}
    if "cache_read_tokens" in usage:
        details[d.key("cached_tokens")] = usage["cache_read_tokens"]
    if "cache_write_tokens" in usage:
        details[d.key("cache_write_tokens")] = usage["cache_write_tokens"]
    if details:
        body[d.key("prompt_tokens_details")] = details
    if "reasoning_tokens" in usage:
        body[d.key("completion_tokens_details")] = {
            d.key("reasoning_tokens"): usage["reasoning_tokens"]
        }
    return body


def _finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    if raw is None:
        return None
    reason = _FINISH.get(raw, "stop") if isinstance(raw, str) else "stop"
    if reason == "stop" and has_calls:
        reason = "tool_calls"
    return finish(reason, raw)


def _finish_value(
    done: Mapping[str, Any], has_calls: bool, d: _Dialect, legacy: bool, native: bool
) -> Any:
    """The raw finish value when this wire sent it and it still says the same; else this wire's word for it."""
    raw = done.get("raw") if native else None
    if (
        raw is not None
        and (_finish(raw, has_calls) or {}).get("reason") == done["reason"]
    ):
        return raw
    if done["reason"] == "tool_calls" and legacy:
        return "function_call"
    if done["reason"] == "error" and d.wire == "mistral":
        return "error"
    return _FINISH_OUT.get(done["reason"], "stop")


# ---- bodies ----


def decode_request(body: Any, wire: str = "openai-chat") -> Request:
    """A chat-completions request body in canonical terms."""
    d = _dialect(wire)
    body = as_dict(body, "", "a request body object")
    raw_messages = as_list(
        body.get("messages"), "/messages", "`messages`, an array of message objects"
    )
    pending: list[tuple[str, str]] = []
    messages = [
        _decode_message(raw, f"/messages/{i}", d, f"{wire}/messages/{i}", pending)
        for i, raw in enumerate(raw_messages)
    ]
    kept: dict[str, Any] = {}
    tools = _decode_tools(body, d, kept)
    consumed = {"messages"}
    if kept.get("tools_key") == "functions":
        consumed.add("functions")
    elif isinstance(body.get("tools"), list):
        consumed.add("tools")
    model, fields = body_rest(body, consumed)
    return decoded_request(
        wire,
        messages,
        tools,
        model,
        fields,
        kept,
        _settings(fields, d),
        keep_empty=False,
    )


def encode_request(request: Request, wire: str = "openai-chat") -> dict[str, Any]:
    """A chat-completions request body from canonical terms."""
    return guarded(partial(_encode_request, wire=wire), request)


def _encode_request(request: Request, wire: str = "openai-chat") -> dict[str, Any]:
    d = _dialect(wire)
    kept = extras_of({"extras": request.extras}, wire)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    body["messages"] = [
        _encode_message(msg, f"/messages/{i}", d)
        for i, msg in enumerate(request.messages)
    ]
    if request.tools or "tools" in kept:
        body["functions" if kept.get("tools_key") == "functions" else "tools"] = (
            _encode_tools(request.tools, d, kept)
        )
    fields = kept.get("fields")
    _apply_settings(portable(request, wire, _settings(fields or {}, d)), body, d)
    return fill(body, fields) if fields else body


def _error(body: Mapping[str, Any], wire: str) -> ProviderError | None:
    error = body.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        status = error.get("status_code", error.get("status"))
        return ProviderError(
            wire,
            str(error.get("message", "")),
            type=error.get("type") if isinstance(error.get("type"), str) else None,
            code=None if code is None else str(code),
            status=status if type(status) is int else None,
            raw=dict(body),
        )
    if isinstance(error, str):
        return ProviderError(wire, error, raw=dict(body))
    if body.get("object") == "error" or ("detail" in body and "choices" not in body):
        detail = body.get("message", body.get("detail"))
        code = body.get("code")
        kind = body.get("type")
        return ProviderError(
            wire,
            detail if isinstance(detail, str) else str(detail),
            type=kind if isinstance(kind, str) else None,
            code=None if code is None else str(code),
            raw=dict(body),
        )
    return None


def decode_response(body: Any, wire: str = "openai-chat") -> Response | ProviderError:
    """A chat completion (or the error body sent instead) in canonical terms."""
    d = _dialect(wire)
    body = as_dict(body, "", "a response body object")
    if "choices" not in body:
        error = _error(body, wire)
        if error is not None:
            return error
    choices = as_list(
        body.get("choices"), "/choices", "`choices`, an array with at least one choice"
    )
    if not choices:
        fail("/choices", "at least one choice")
    choice = as_dict(choices[0], "/choices/0", "a choice object")
    if "message" not in choice and "delta" in choice:
        fail(
            "/choices/0/message",
            "the whole message: this is a stream chunk, aggregate the stream first",
        )
    scope = f"{wire}/{body.get('id', '')}"
    message = _decode_assistant(
        as_dict(
            choice.get("message"), "/choices/0/message", "the assistant message object"
        ),
        "/choices/0/message",
        d,
        scope,
        [],
    )
    if message.get("role") != "assistant":
        fail("/choices/0/message/role", "assistant")
    kept: dict[str, Any] = {}
    finish_key = d.key("finish_reason")
    rest = {
        key: value
        for key, value in choice.items()
        if key not in ("message", finish_key)
    }
    if rest:
        kept["choice"] = rest
    if finish_key not in choice:
        kept["omit_finish"] = True
    if len(choices) > 1:
        kept["more_choices"] = choices[1:]
    usage = _usage(body.get("usage"), d)
    consumed = {"choices"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage, d) != body["usage"]:
            kept["usage"] = body["usage"]
    response_id, model = body.get("id"), body.get("model")
    consumed.update(
        key
        for key, value in (("id", response_id), ("model", model))
        if isinstance(value, str)
    )
    fields = {key: value for key, value in body.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    return Response(
        message,
        _finish(choice.get(finish_key), bool(message.get("tool_calls"))),
        usage,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        {wire: kept},
    )


def encode_response(response: Response, wire: str = "openai-chat") -> dict[str, Any]:
    """A chat completion body from canonical terms."""
    return guarded(partial(_encode_response, wire=wire), response)


def _encode_response(response: Response, wire: str = "openai-chat") -> dict[str, Any]:
    d = _dialect(wire)
    kept = extras_of({"extras": response.extras}, wire)
    # A response decoded from this wire carries its own body fields; one from elsewhere gets the fields that
    # clients require of a chat completion (`created` is unknown then, so 0).
    native = wire in response.extras
    message = _encode_message(response.message, "/message", d)
    content = message.get("content")
    if (
        not native
        and isinstance(content, list)
        and all(block.get("type") == "text" for block in content)
    ):
        # A completion's message content is one string; text another wire sent in blocks is joined.
        message["content"] = "".join(block["text"] for block in content)
    choice: dict[str, Any] = {"message": message}
    if response.finish is not None:
        legacy = d.key("function_call") in message
        has_calls = bool(response.message.get("tool_calls"))
        choice[d.key("finish_reason")] = _finish_value(
            response.finish, has_calls, d, legacy, native
        )
    elif not kept.get("omit_finish"):
        choice[d.key("finish_reason")] = None
    if "choice" in kept:
        fill(choice, kept["choice"])
    elif not native:
        choice["index"] = 0
    body: dict[str, Any] = (
        {}
        if native
        else {"id": "", "object": "chat.completion", "created": 0, "model": ""}
    )
    if response.id is not None:
        body["id"] = response.id
    if response.model is not None:
        body["model"] = response.model
    body["choices"] = [choice, *kept.get("more_choices", ())]
    if response.usage is not None:
        raw_usage = kept.get("usage")
        fits = raw_usage is not None and _usage(raw_usage, d) == response.usage
        body["usage"] = raw_usage if fits else _usage_body(response.usage, d)
    fields = kept.get("fields")
    return fill(body, fields) if fields else body


def encode_error(error: ProviderError, wire: str = "openai-chat") -> dict[str, Any]:
    """The error body this wire sends; the recorded body itself when the error came from this wire."""
    if error.wire == wire and isinstance(error.raw, dict):
        return error.raw
    return {
        "error": {
            "message": error.message,
            "type": error.type,
            "param": None,
            "code": error.code,
        }
    }
