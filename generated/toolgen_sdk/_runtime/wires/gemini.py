# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini bodies to and from canonical terms: generateContent (`gemini`) and the Interactions API (`google-interactions`).

generateContent. A full response body, which is also what a stream aggregator hands to `decode_response`:
`{"candidates": [{"content": {"role": "model", "parts": [...]}, "finishReason", ...}], "usageMetadata":
{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount"?, "totalTokenCount"}, "modelVersion",
"responseId"}`, a part being `{"text"}`, `{"text", "thought": true, "thoughtSignature"?}`, `{"functionCall":
{"name", "args": {...}}, "thoughtSignature"?}`, `{"inlineData"}` or `{"fileData"}`. With `enum-encoding=int`
`finishReason` is a number; the canonical `raw` holds it as a decimal string and it is sent back as a number.
Function calls carry no id: each gets `stable_call_id(scope, position, name, arguments)` (scope
`gemini/<responseId>` for a response, `gemini/contents/<turn>` for a request), listed in `generated_ids` so that
encoding leaves it out again. A `functionResponse` without an id answers the oldest unanswered call of the same
name in the turns before it. Usage: `output_tokens` counts thoughts too (the wire counts them apart).

Interactions. A full response body: `{"id", "status", "model", "steps": [...], "usage": {"total_input_tokens",
"total_output_tokens", "total_thought_tokens", "total_tokens", ...}}`, steps being `{"type": "thought",
"signature", "summary"?}`, `{"type": "model_output", "content": [{"type": "text", "text"}]}`, `{"type":
"function_call", "id", "name", "arguments": {...}, "signature"?}` and built-in tool steps; older bodies list
`outputs` (flat content items) instead of `steps`. `status: "requires_action"` means the model called tools.

What `extras[wire]` holds on a canonical message (only the keys that are needed):
- `blocks`: the wire order of parts (or steps), as `{"part": e}`, `{"call": e}`, `{"keep": part}` (code execution
  and other parts canonical content has no place for, as sent) or, for Interactions, `{"group": rest, "parts":
  [e...]}` for a `model_output` step; `e` is `{"rest": {...}}` with keys the encoder does not produce (a call's
  `thoughtSignature`, a text part's signature) or `{"raw": part}` (a call with no `args` key, snake_case keys).
- `signed`: the reasoning parts here came from this wire; reasoning from other wires is not sent to Gemini.
- `generated_ids`: call ids made up for calls (and results) the wire sent without one.
- tool messages: `response_key` (the single key wrapping a string result, when not `output`/`error`) or
  `response_json` (the result object is the content, as JSON text), `fields` / `part_fields` (other keys of the
  `functionResponse` and of its part).
- `joined` / `split` (see `_wire.turns`); `turn` (other keys of the wire turn, such as `role: "function"`).
Request and Response extras hold `{wire: {"fields": {...}}}` with the body keys outside the canonical model,
plus `model_in_body` (the request named its model in the body, not only in the URL), `tools` (the wire's tool
list when re-exporting would spell it differently), `system`, `candidate` /
`content` (other keys of the first candidate and its content) and `usage` (the wire's usage object when it
reports more than canonical usage).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

from .base import (
    ProviderError,
    Request,
    Response,
    args_object,
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
    plain_text,
    portable,
    restore,
    signed_for,
    split_marks,
    stable_call_id,
    stop_list,
    turns,
    weave,
)

WIRE = "gemini"
INTERACTIONS = "google-interactions"

_FINISH = MappingProxyType(
    {
        "STOP": "stop",
        "MAX_TOKENS": "length",
        "SAFETY": "content_filter",
        "RECITATION": "content_filter",
        "BLOCKLIST": "content_filter",
        "PROHIBITED_CONTENT": "content_filter",
        "SPII": "content_filter",
        "IMAGE_SAFETY": "content_filter",
        "IMAGE_PROHIBITED_CONTENT": "content_filter",
        "IMAGE_RECITATION": "content_filter",
        "MODEL_ARMOR": "content_filter",
        "MALFORMED_FUNCTION_CALL": "error",
        "UNEXPECTED_TOOL_CALL": "error",
        "TOO_MANY_TOOL_CALLS": "error",
        "LANGUAGE": "error",
        "OTHER": "error",
        "IMAGE_OTHER": "error",
        "NO_IMAGE": "error",
        "FINISH_REASON_UNSPECIFIED": "error",
        # With enum-encoding=int. Numbers past 8 differ between API versions, so only these are certain.
        "0": "error",
        "1": "stop",
        "2": "length",
        "3": "content_filter",
        "4": "content_filter",
        "5": "error",
        "6": "content_filter",
        "7": "content_filter",
        "8": "content_filter",
    }
)
_FINISH_OUT = MappingProxyType(
    {
        "stop": "STOP",
        "tool_calls": "STOP",
        "length": "MAX_TOKENS",
        "content_filter": "SAFETY",
        "error": "OTHER",
    }
)
# OpenAPI-subset schema types, by name and by enum number, as JSON Schema type names.
_SCHEMA_TYPES = MappingProxyType(
    {
        1: "string",
        2: "number",
        3: "integer",
        4: "boolean",
        5: "array",
        6: "object",
        7: "null",
    }
)


def _get(block: Mapping[str, Any], camel: str, snake: str) -> Any:
    """Gemini's JSON takes both lowerCamel and snake_case field names."""
    value = block.get(camel)
    return block.get(snake) if value is None else value


# ---- parts ----


def _media_part(media: Any, inline: bool) -> dict[str, Any] | None:
    if not isinstance(media, dict):
        return None
    mime = _get(media, "mimeType", "mime_type")
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
        uri = _get(media, "fileUri", "file_uri")
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
            signature = _get(block, "thoughtSignature", "thought_signature")
            if isinstance(signature, str):
                part["signature"] = signature
            return part
        return {"type": "text", "text": block["text"]}
    if "inlineData" in block or "inline_data" in block:
        return _media_part(_get(block, "inlineData", "inline_data"), True)
    if "fileData" in block or "file_data" in block:
        return _media_part(_get(block, "fileData", "file_data"), False)
    return None


def _part_block(part: Mapping[str, Any], pointer: str) -> dict[str, Any]:
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
            media = {"fileUri": part["url"]}
            if "media_type" in part:
                media = {"mimeType": part["media_type"], **media}
            return {"fileData": media}
    fail(pointer, "a text, reasoning, image, audio or file part with `data` or `url`")


# ---- calls ----


def _function_call(block: Mapping[str, Any]) -> Any:
    return _get(block, "functionCall", "function_call")


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


def _decode_model_turn(
    turn: Mapping[str, Any], pointer: str, scope: str
) -> dict[str, Any]:
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
        _get(block, "functionResponse", "function_response"),
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


def _decode_user_turn(
    turn: Mapping[str, Any],
    pointer: str,
    scope: str,
    pending: list[tuple[str, str]],
    before: str | None,
) -> list[dict[str, Any]]:
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


def _encode_user_turn(
    group: list[dict[str, Any]], names: Mapping[str, str], pointer: str
) -> dict[str, Any]:
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


def _encode_model_turn(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kept = extras_of(message, WIRE)
    parts = parts_of(message.get("content"))
    if not signed_for(message, WIRE):
        parts = [part for part in parts if part.get("type") != "reasoning"]
    calls = message.get("tool_calls") or []
    generated = kept.get("generated_ids") or []

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, pointer), entry, lambda raw: _part(raw) == part
        )

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _call_block(call, generated, pointer),
            entry,
            lambda raw: _same_call(raw, call, generated),
        )

    turn = dict(kept.get("turn", {"role": "model"}))
    if not (kept.get("no_parts") and not parts and not calls):
        turn["parts"] = weave(kept.get("blocks"), parts, calls, part_block, call_block)
    return turn


# ---- system, tools, usage ----


def _json_schema(schema: Any) -> Any:
    """An OpenAPI-subset `parameters` schema with JSON Schema type names (`OBJECT` and 6 both become `object`)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, int) and not isinstance(kind, bool):
        out["type"] = _SCHEMA_TYPES.get(kind, kind)
    elif isinstance(kind, str):
        out["type"] = kind.lower()
    if isinstance(out.get("properties"), dict):
        out["properties"] = {
            key: _json_schema(value) for key, value in out["properties"].items()
        }
    if "items" in out:
        out["items"] = _json_schema(out["items"])
    for key in ("anyOf", "any_of"):
        if isinstance(out.get(key), list):
            out[key] = [_json_schema(value) for value in out[key]]
    return out


def _tool_definition(decl: Any) -> dict[str, Any] | None:
    if not isinstance(decl, dict) or not isinstance(decl.get("name"), str):
        return None
    tool: dict[str, Any] = {"name": decl["name"]}
    if isinstance(decl.get("description"), str):
        tool["description"] = decl["description"]
    schema = _get(decl, "parametersJsonSchema", "parameters_json_schema")
    if schema is None and "parameters" in decl:
        schema = _json_schema(decl["parameters"])
    tool["inputSchema"] = (
        schema if schema is not None else {"type": "object", "properties": {}}
    )
    output = _get(decl, "responseJsonSchema", "response_json_schema")
    if output is None and "response" in decl:
        output = _json_schema(decl["response"])
    if output is not None:
        tool["outputSchema"] = output
    return tool


def _declarations(raw: list[Any]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for entry in raw:
        if isinstance(entry, dict):
            decls = _get(entry, "functionDeclarations", "function_declarations")
            if isinstance(decls, list):
                tools.extend(
                    tool for tool in map(_tool_definition, decls) if tool is not None
                )
    return tools


def _decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        return []
    tools = _declarations(raw)
    if not tools or _encode_tools(tools, None) != raw:
        kept["tools"] = raw
    return tools


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    raw = kept.get("tools") if kept else None
    if raw is not None and _declarations(raw) == tools:
        return list(raw)
    exported = export_checked(tools, "gemini")
    if raw is not None:
        exported.extend(
            entry
            for entry in raw
            if not (
                isinstance(entry, dict)
                and _get(entry, "functionDeclarations", "function_declarations")
            )
        )
    return exported


def _decode_system(
    body: Mapping[str, Any], kept: dict[str, Any]
) -> dict[str, Any] | None:
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


def _encode_system(
    messages: list[dict[str, Any]], kept: Mapping[str, Any], body: dict[str, Any]
) -> None:
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


_MODES = MappingProxyType(
    {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}
)


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    config = _get(fields, "generationConfig", "generation_config")
    if isinstance(config, dict):
        _config_settings(config, out, "maxOutputTokens", "topP", "stopSequences")
        _config_settings(config, out, "max_output_tokens", "top_p", "stop_sequences")
    tool_config = _get(fields, "toolConfig", "tool_config")
    calling = (
        _get(tool_config, "functionCallingConfig", "function_calling_config")
        if isinstance(tool_config, dict)
        else None
    )
    if (
        isinstance(calling, dict)
        and isinstance(calling.get("mode"), str)
        and calling["mode"] in _MODES
    ):
        names = _get(calling, "allowedFunctionNames", "allowed_function_names")
        single = (
            calling["mode"] == "ANY"
            and isinstance(names, list)
            and len(names) == 1
            and isinstance(names[0], str)
        )
        out["tool_choice"] = {"name": names[0]} if single else _MODES[calling["mode"]]
    return out


def _config_settings(
    config: Mapping[str, Any],
    out: dict[str, Any],
    max_key: str,
    top_key: str,
    stop_key: str,
) -> None:
    if type(config.get(max_key)) is int:
        out["max_tokens"] = config[max_key]
    for key, setting in (("temperature", "temperature"), (top_key, "top_p")):
        if number(config.get(key)):
            out[setting] = config[key]
    stop = stop_list(config.get(stop_key))
    if stop is not None:
        out["stop"] = stop


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    config = dict(body.get("generationConfig") or {})
    for key, wire_key in (
        ("max_tokens", "maxOutputTokens"),
        ("temperature", "temperature"),
        ("top_p", "topP"),
    ):
        if key in settings:
            config[wire_key] = settings[key]
    if "stop" in settings:
        config["stopSequences"] = settings["stop"]
    if config:
        body["generationConfig"] = config
    choice = settings.get("tool_choice")
    if isinstance(choice, dict):
        calling: dict[str, Any] = {
            "mode": "ANY",
            "allowedFunctionNames": [choice["name"]],
        }
    elif choice is not None:
        calling = {
            "mode": {"auto": "AUTO", "required": "ANY", "none": "NONE"}.get(
                choice, "AUTO"
            )
        }
    else:
        return
    body["toolConfig"] = {
        **(body.get("toolConfig") or {}),
        "functionCallingConfig": calling,
    }


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _usage(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    prompt = _count(raw.get("promptTokenCount"))
    if prompt is None:
        return None
    thoughts = _count(raw.get("thoughtsTokenCount"))
    usage = {
        "input_tokens": prompt,
        "output_tokens": (_count(raw.get("candidatesTokenCount")) or 0)
        + (thoughts or 0),
    }
    total = _count(raw.get("totalTokenCount"))
    if total is not None:
        usage["total_tokens"] = total
    cached = _count(raw.get("cachedContentTokenCount"))
    if cached is not None:
        usage["cache_read_tokens"] = cached
    if thoughts is not None:
        usage["reasoning_tokens"] = thoughts
    return usage


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    thoughts = usage.get("reasoning_tokens")
    body: dict[str, Any] = {
        "promptTokenCount": usage["input_tokens"],
        "candidatesTokenCount": usage["output_tokens"] - (thoughts or 0),
        "totalTokenCount": usage.get(
            "total_tokens", usage["input_tokens"] + usage["output_tokens"]
        ),
    }
    if "cache_read_tokens" in usage:
        body["cachedContentTokenCount"] = usage["cache_read_tokens"]
    if thoughts is not None:
        body["thoughtsTokenCount"] = thoughts
    return body


def _finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str):
        return None
    reason = _FINISH.get(raw, "content_filter" if raw.isdigit() else "error")
    if reason == "stop" and has_calls:
        reason = "tool_calls"
    return finish(reason, raw)


def _finish_value(done: Mapping[str, Any], has_calls: bool, native: bool) -> Any:
    """The raw finish value when this wire sent it and it still says the same; else this wire's word for it."""
    raw = done.get("raw") if native else None
    if not (
        isinstance(raw, str)
        and (_finish(raw, has_calls) or {}).get("reason") == done["reason"]
    ):
        raw = _FINISH_OUT.get(done["reason"], "STOP")
    return int(raw) if raw.isdigit() else raw


# ---- generateContent bodies ----


def decode_request(body: Any, wire: str = WIRE) -> Request:
    """A generateContent request body (or, with `wire="google-interactions"`, an interaction) in canonical terms."""
    if wire == INTERACTIONS:
        return _decode_interaction_request(body)
    body = as_dict(body, "", "a request body object")
    contents = as_list(
        body.get("contents"), "/contents", "`contents`, an array of turns"
    )
    kept: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    system = _decode_system(body, kept)
    if system is not None:
        messages.append(system)
    pending: list[tuple[str, str]] = []
    for i, raw in enumerate(contents):
        pointer = f"/contents/{i}"
        turn = as_dict(raw, pointer, "a turn object with `role` and `parts`")
        if turn.get("role") == "model":
            message = _decode_model_turn(turn, pointer, f"{WIRE}/contents/{i}")
            pending.extend(
                (call["function"]["name"], call["id"])
                for call in message.get("tool_calls", ())
            )
            messages.append(message)
        else:
            before = messages[-1]["role"] if messages else None
            messages.extend(
                _decode_user_turn(
                    turn, pointer, f"{WIRE}/contents/{i}", pending, before
                )
            )
    tools = _decode_tools(body.get("tools"), kept)
    consumed = {"contents", "tools", "systemInstruction", "system_instruction"}
    model, fields = body_rest(body, consumed)
    if model is not None:
        kept["model_in_body"] = True
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def encode_request(request: Request, wire: str = WIRE) -> dict[str, Any]:
    """A generateContent request body from canonical terms; the model goes in the URL, in the body only if it was."""
    return guarded(partial(_encode_request, wire=wire), request)


def _encode_request(request: Request, wire: str = WIRE) -> dict[str, Any]:
    if wire == INTERACTIONS:
        return _encode_interaction_request(request)
    kept = extras_of({"extras": request.extras}, WIRE)
    body: dict[str, Any] = {}
    if request.model is not None and kept.get("model_in_body"):
        body["model"] = request.model
    _encode_system(request.messages, kept, body)
    names = {
        call["id"]: call["function"]["name"]
        for message in request.messages
        for call in message.get("tool_calls") or ()
    }
    contents = []
    for i, (side, group) in enumerate(turns(request.messages, WIRE)):
        pointer = f"/contents/{i}"
        contents.append(
            _encode_model_turn(group[0], pointer)
            if side == "assistant"
            else _encode_user_turn(group, names, pointer)
        )
    body["contents"] = contents
    if request.tools or "tools" in kept:
        body["tools"] = _encode_tools(request.tools, kept)
    fields = kept.get("fields")
    changed = portable(request, WIRE, _settings(fields or {}))
    if changed:
        # Settings merge into the kept generationConfig/toolConfig rather than beside them.
        body.update(
            {
                key: fields[key]
                for key in ("generationConfig", "toolConfig")
                if fields and key in fields
            }
        )
        _apply_settings(changed, body)
    return fill(body, fields) if fields else body


def _error(body: Any, wire: str) -> ProviderError:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ProviderError(wire, str(error), raw=body)
    code, status = error.get("code"), error.get("status")
    return ProviderError(
        wire,
        str(error.get("message", "")),
        type=status if isinstance(status, str) else None,
        code=status if isinstance(status, str) else None if code is None else str(code),
        status=code if type(code) is int else None,
        raw=body,
    )


def decode_response(body: Any, wire: str = WIRE) -> Response | ProviderError:
    """A generateContent response (or, with `wire="google-interactions"`, an interaction) in canonical terms."""
    if (
        isinstance(body, list)
        and len(body) == 1
        and isinstance(body[0], dict)
        and "error" in body[0]
    ):
        # alt=json wraps even an error in a one-element array.
        error = _error(body[0], wire)
        error.raw = body
        return error
    if wire == INTERACTIONS:
        return _decode_interaction(body)
    body = as_dict(body, "", "a response body object")
    if "error" in body and "candidates" not in body:
        return _error(body, wire)
    kept: dict[str, Any] = {}
    candidates = body.get("candidates")
    response_id = body.get("responseId")
    scope = f"{WIRE}/{response_id or ''}"
    if candidates:
        candidate = as_dict(
            as_list(candidates, "/candidates")[0], "/candidates/0", "a candidate object"
        )
        content = candidate.get("content")
        if content is None:
            kept["no_content"] = True
            content = {"role": "model", "parts": []}
        message = _decode_model_turn(
            as_dict(content, "/candidates/0/content", "a content object"),
            "/candidates/0/content",
            scope,
        )
        done = _finish(candidate.get("finishReason"), bool(message.get("tool_calls")))
        rest = {
            key: value
            for key, value in candidate.items()
            if key not in ("content", "finishReason")
        }
        if rest:
            kept["candidate"] = rest
        if len(candidates) > 1:
            kept["more_candidates"] = candidates[1:]
    else:
        # The prompt itself was blocked: no candidates, the reason is in promptFeedback.
        message = {"role": "assistant", "content": None}
        kept["no_candidates"] = True
        feedback = body.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        done = finish("content_filter", reason) if isinstance(reason, str) else None
    usage = _usage(body.get("usageMetadata"))
    consumed = {"candidates"} if candidates else set()
    if usage is not None:
        consumed.add("usageMetadata")
        if _usage_body(usage) != body["usageMetadata"]:
            kept["usage"] = body["usageMetadata"]
    model = body.get("modelVersion")
    consumed.update(
        key
        for key, value in (("responseId", response_id), ("modelVersion", model))
        if isinstance(value, str)
    )
    fields = {key: value for key, value in body.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    return Response(
        message,
        done,
        usage,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        {WIRE: kept},
    )


def encode_response(response: Response, wire: str = WIRE) -> dict[str, Any]:
    """A generateContent response body (or an interaction) from canonical terms."""
    return guarded(partial(_encode_response, wire=wire), response)


def _encode_response(response: Response, wire: str = WIRE) -> dict[str, Any]:
    if wire == INTERACTIONS:
        return _encode_interaction(response)
    kept = extras_of({"extras": response.extras}, WIRE)
    body: dict[str, Any] = {}
    fields = kept.get("fields") or {}
    if not kept.get("no_candidates") and "candidates" not in fields:
        candidate: dict[str, Any] = {}
        if not kept.get("no_content"):
            candidate["content"] = _encode_model_turn(
                response.message, "/candidates/0/content"
            )
        if response.finish is not None:
            has_calls = bool(response.message.get("tool_calls"))
            candidate["finishReason"] = _finish_value(
                response.finish, has_calls, WIRE in response.extras
            )
        if "candidate" in kept:
            fill(candidate, kept["candidate"])
        body["candidates"] = [candidate, *kept.get("more_candidates", ())]
    if response.usage is not None:
        raw_usage = kept.get("usage")
        fits = raw_usage is not None and _usage(raw_usage) == response.usage
        body["usageMetadata"] = raw_usage if fits else _usage_body(response.usage)
    if response.model is not None:
        body["modelVersion"] = response.model
    if response.id is not None:
        body["responseId"] = response.id
    return fill(body, fields) if fields else body


def decode_interactions_response(body: Any) -> Response | ProviderError:
    """An Interactions API response (or the error body sent instead) in canonical terms."""
    return decode_response(body, INTERACTIONS)


def encode_error(error: ProviderError, wire: str = WIRE) -> Any:
    """The error body this wire sends; the recorded body itself when the error came from this wire."""
    if error.wire == wire and error.raw is not None:
        return error.raw
    return {
        "error": {
            "code": error.status or 500,
            "message": error.message,
            "status": error.code or "UNKNOWN",
        }
    }


# ---- Interactions ----

_CONTENT_TYPES = frozenset(("text", "image", "audio", "document", "video"))


def _is_content(block: Mapping[str, Any]) -> bool:
    kind = block.get("type")
    return isinstance(kind, str) and kind in _CONTENT_TYPES


def _interaction_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
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


def _interaction_block(part: Mapping[str, Any], pointer: str) -> dict[str, Any]:
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


def _interaction_call(step: Mapping[str, Any], pointer: str) -> dict[str, Any]:
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


def _interaction_call_block(call: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    fn = call["function"]
    arguments = args_object(fn["arguments"], f"{pointer}/function/arguments")
    return {
        "type": "function_call",
        "id": call["id"],
        "name": fn["name"],
        "arguments": arguments,
    }


class _Steps:
    """Accumulates model-side steps (or flat output items) into one canonical assistant message."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.skeleton: list[dict[str, Any]] = []

    def add(self, step: dict[str, Any], pointer: str) -> None:
        kind = step.get("type")
        if kind == "function_call":
            call = _interaction_call(step, pointer)
            self.calls.append(call)
            self.skeleton.append(
                {"call": keep_entry(step, _interaction_call_block(call, pointer))}
            )
        elif (kind == "model_output" or step.get("role") == "model") and isinstance(
            step.get("content"), list
        ):
            entries = []
            for i, raw in enumerate(step["content"]):
                block = as_dict(raw, f"{pointer}/content/{i}", "a content object")
                part = _interaction_part(block)
                if part is None or part["type"] == "reasoning":
                    self.skeleton.append({"keep": step})
                    return
                entries.append(
                    (part, keep_entry(block, _interaction_block(part, pointer)))
                )
            self.parts.extend(part for part, _ in entries)
            rest = {key: value for key, value in step.items() if key != "content"}
            self.skeleton.append(
                {"group": rest, "parts": [entry for _, entry in entries]}
            )
        else:
            part = _interaction_part(step)
            if part is None:
                self.skeleton.append({"keep": step})
                return
            self.parts.append(part)
            self.skeleton.append(
                {"part": keep_entry(step, _interaction_block(part, pointer))}
            )

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
            out["extras"] = {INTERACTIONS: kept}
        return out


def _encode_steps(message: Mapping[str, Any], pointer: str, flat: bool) -> list[Any]:
    kept = extras_of(message, INTERACTIONS)
    parts = parts_of(message.get("content"))
    if not signed_for(message, INTERACTIONS):
        parts = [part for part in parts if part.get("type") != "reasoning"]
    calls = message.get("tool_calls") or []

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        block = _interaction_block(part, pointer)
        if entry is None and not flat and part.get("type") != "reasoning":
            return {"type": "model_output", "content": [block]}
        return restore(block, entry, lambda raw: _interaction_part(raw) == part)

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _interaction_call_block(call, pointer),
            entry,
            lambda raw: _interaction_call(raw, pointer) == call,
        )

    def group_block(rest: Mapping[str, Any], blocks: list[Any]) -> Any:
        return {**rest, "content": blocks}

    return weave(kept.get("blocks"), parts, calls, part_block, call_block, group_block)


def _interaction_usage(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    prompt = _count(raw.get("total_input_tokens"))
    if prompt is None:
        return None
    thoughts = _count(raw.get("total_thought_tokens"))
    usage = {
        "input_tokens": prompt,
        "output_tokens": (_count(raw.get("total_output_tokens")) or 0)
        + (thoughts or 0),
    }
    total = _count(raw.get("total_tokens"))
    if total is not None:
        usage["total_tokens"] = total
    cached = _count(raw.get("total_cached_tokens"))
    if cached is not None:
        usage["cache_read_tokens"] = cached
    if thoughts is not None:
        usage["reasoning_tokens"] = thoughts
    return usage


def _interaction_usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    thoughts = usage.get("reasoning_tokens")
    body: dict[str, Any] = {
        "total_tokens": usage.get(
            "total_tokens", usage["input_tokens"] + usage["output_tokens"]
        ),
        "total_input_tokens": usage["input_tokens"],
        "total_output_tokens": usage["output_tokens"] - (thoughts or 0),
    }
    if "cache_read_tokens" in usage:
        body["total_cached_tokens"] = usage["cache_read_tokens"]
    if thoughts is not None:
        body["total_thought_tokens"] = thoughts
    return body


_STATUS = MappingProxyType(
    {
        "completed": "stop",
        "requires_action": "tool_calls",
        "failed": "error",
        "incomplete": "length",
        "cancelled": "error",
    }
)
_STATUS_OUT = MappingProxyType(
    {
        "stop": "completed",
        "tool_calls": "requires_action",
        "length": "incomplete",
        "error": "failed",
        "content_filter": "failed",
    }
)


def _status_finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    reason = _STATUS.get(raw) if isinstance(raw, str) else None
    if reason is None:
        return None
    if reason == "stop" and has_calls:
        reason = "tool_calls"
    return finish(reason, raw)


def _decode_interaction(body: Any) -> Response | ProviderError:
    body = as_dict(body, "", "an interaction object")
    if "error" in body and body.get("status") in (None, "failed"):
        return _error(body, INTERACTIONS)
    key = "steps" if "steps" in body else "outputs"
    steps = _Steps()
    for i, raw in enumerate(
        as_list(body.get(key, []), f"/{key}", f"`{key}`, an array")
    ):
        pointer = f"/{key}/{i}"
        step = as_dict(raw, pointer, "a step object")
        if step.get("type") == "user_input":
            fail(f"{pointer}/type", "model steps only in a response")
        steps.add(step, pointer)
    message = steps.message()
    kept: dict[str, Any] = {}
    if key == "outputs":
        kept["key"] = key
    if key not in body:
        kept["no_steps"] = True
    usage = _interaction_usage(body.get("usage"))
    consumed = {key, "status"}
    if usage is not None:
        consumed.add("usage")
        if _interaction_usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    response_id, model = body.get("id"), body.get("model")
    consumed.update(
        k
        for k, value in (("id", response_id), ("model", model))
        if isinstance(value, str)
    )
    done = _status_finish(body.get("status"), bool(message.get("tool_calls")))
    if done is None:
        consumed.discard("status")
    fields = {k: v for k, v in body.items() if k not in consumed}
    if fields:
        kept["fields"] = fields
    return Response(
        message,
        done,
        usage,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        {INTERACTIONS: kept},
    )


def _encode_interaction(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, INTERACTIONS)
    native = INTERACTIONS in response.extras
    body: dict[str, Any] = {} if native else {"object": "interaction"}
    if response.id is not None:
        body["id"] = response.id
    if response.finish is not None:
        raw = response.finish.get("raw") if INTERACTIONS in response.extras else None
        has_calls = bool(response.message.get("tool_calls"))
        fits = (_status_finish(raw, has_calls) or {}).get("reason") == response.finish[
            "reason"
        ]
        body["status"] = (
            raw if fits else _STATUS_OUT.get(response.finish["reason"], "completed")
        )
    if response.usage is not None:
        raw_usage = kept.get("usage")
        fits = raw_usage is not None and _interaction_usage(raw_usage) == response.usage
        body["usage"] = raw_usage if fits else _interaction_usage_body(response.usage)
    key = kept.get("key", "steps")
    if not kept.get("no_steps"):
        body[key] = _encode_steps(response.message, f"/{key}", key == "outputs")
    if response.model is not None:
        body["model"] = response.model
    fields = kept.get("fields")
    return fill(body, fields) if fields else body


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
        isinstance(item, dict) and _interaction_part(item) for item in result
    ):
        out["content"] = [_interaction_part(item) for item in result]
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
        out["extras"] = {INTERACTIONS: kept}
    return out


def _result_block(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kept = extras_of(message, INTERACTIONS)
    block: dict[str, Any] = {
        "type": "function_result",
        "call_id": message["tool_call_id"],
    }
    content = message.get("content", "")
    if kept.get("result_json") and isinstance(content, str):
        block["result"] = json.loads(content)
    elif isinstance(content, list):
        block["result"] = [_interaction_block(part, pointer) for part in content]
    else:
        block["result"] = content
    if "name" in message:
        block["name"] = message["name"]
    if "is_error" in message:
        block["is_error"] = message["is_error"]
    return fill(block, kept["fields"]) if kept.get("fields") else block


def _user_input(
    blocks: list[Any], pointer: str, before: str | None
) -> list[dict[str, Any]]:
    produced: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []

    def flush() -> None:
        parts: list[dict[str, Any]] = []
        skeleton: list[dict[str, Any]] = []
        for block in run:
            part = _interaction_part(block)
            if part is None:
                skeleton.append({"keep": block})
            else:
                parts.append(part)
                skeleton.append(
                    {"part": keep_entry(block, _interaction_block(part, pointer))}
                )
        message: dict[str, Any] = {
            "role": "user",
            "content": plain_text(parts, skeleton),
        }
        if not is_trivial(skeleton):
            message["extras"] = {INTERACTIONS: {"blocks": skeleton}}
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
    split_marks(produced, before, INTERACTIONS)
    return produced


def _decode_interaction_request(body: Any) -> Request:
    body = as_dict(body, "", "a request body object")
    kept: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    system = body.get("system_instruction")
    if isinstance(system, str):
        messages.append({"role": "system", "content": system})
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        kept["input_string"] = True
        messages.append({"role": "user", "content": raw_input})
    else:
        steps = as_list(raw_input, "/input", "`input`, a string or an array of steps")
        if steps and all(
            isinstance(step, dict) and _is_content(step) for step in steps
        ):
            # Bare content blocks: one user turn.
            kept["input_content"] = True
            messages.extend(_user_input(steps, "/input", None))
        else:
            _decode_input_steps(steps, messages)
    raw_tools = body.get("tools")
    tools = (
        [tool for tool in map(_interaction_tool, raw_tools) if tool is not None]
        if isinstance(raw_tools, list)
        else []
    )
    if (
        isinstance(raw_tools, list)
        and _encode_interaction_tools(tools, None) != raw_tools
    ):
        kept["tools"] = raw_tools
    model = body.get("model")
    consumed = {"input", "tools"} | (
        {"system_instruction"} if isinstance(system, str) else set()
    )
    if isinstance(model, str):
        consumed.add("model")
    fields = {k: v for k, v in body.items() if k not in consumed}
    if fields:
        kept["fields"] = fields
    extras: dict[str, Any] = {INTERACTIONS: kept}
    settings = _interaction_settings(fields)
    if settings:
        extras["settings"] = settings
    return Request(messages, tools, model if isinstance(model, str) else None, extras)


def _interaction_settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    config = fields.get("generation_config")
    if isinstance(config, dict):
        _config_settings(config, out, "max_output_tokens", "top_p", "stop_sequences")
        choice = config.get("tool_choice")
        if isinstance(choice, str) and choice in ("auto", "any", "none", "validated"):
            out["tool_choice"] = {"any": "required", "validated": "auto"}.get(
                choice, choice
            )
    return out


def _apply_interaction_settings(
    settings: Mapping[str, Any], body: dict[str, Any]
) -> None:
    config = dict(body.get("generation_config") or {})
    for key, wire_key in (
        ("max_tokens", "max_output_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
    ):
        if key in settings:
            config[wire_key] = settings[key]
    if "stop" in settings:
        config["stop_sequences"] = settings["stop"]
    choice = settings.get("tool_choice")
    if isinstance(choice, dict):
        config["tool_choice"] = {
            "allowed_tools": {"mode": "any", "tools": [choice["name"]]}
        }
    elif choice is not None:
        config["tool_choice"] = "any" if choice == "required" else choice
    if config:
        body["generation_config"] = config


def _decode_input_steps(steps: list[Any], messages: list[dict[str, Any]]) -> None:
    model_side: _Steps | None = None
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
                produced = _user_input(
                    as_list(content, f"{pointer}/content"), f"{pointer}/content", before
                )
            rest = {k: v for k, v in step.items() if k != "content"}
            if rest != {"type": "user_input"} or isinstance(content, str):
                kept_step = (
                    produced[0].setdefault("extras", {}).setdefault(INTERACTIONS, {})
                )
                kept_step["step"] = rest
                if isinstance(content, str):
                    kept_step["content_string"] = True
            messages.extend(produced)
        else:
            model_side = model_side or _Steps()
            model_side.add(step, pointer)
    if model_side is not None:
        messages.append(model_side.message())


def _interaction_tool(entry: Any) -> dict[str, Any] | None:
    if (
        not isinstance(entry, dict)
        or entry.get("type") != "function"
        or not isinstance(entry.get("name"), str)
    ):
        return None
    tool: dict[str, Any] = {"name": entry["name"]}
    if isinstance(entry.get("description"), str):
        tool["description"] = entry["description"]
    tool["inputSchema"] = entry.get("parameters", {"type": "object", "properties": {}})
    return tool


def _encode_interaction_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    raw = kept.get("tools") if kept else None
    if (
        raw is not None
        and [t for t in map(_interaction_tool, raw) if t is not None] == tools
    ):
        return list(raw)
    # Interactions spells a function tool like Anthropic's, with `parameters` for `input_schema`.
    out: list[Any] = []
    for entry in export_checked(tools, "anthropic"):
        schema = entry.pop("input_schema")
        out.append({"type": "function", **entry, "parameters": schema})
    if raw is not None:
        out.extend(entry for entry in raw if _interaction_tool(entry) is None)
    return out


def _encode_interaction_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, INTERACTIONS)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    system = [m for m in request.messages if m.get("role") == "system"]
    if system:
        body["system_instruction"] = "\n\n".join(
            m["content"]
            if isinstance(m["content"], str)
            else "".join(p.get("text", "") for p in m["content"])
            for m in system
        )
    conversation = [m for m in request.messages if m.get("role") != "system"]
    if (
        kept.get("input_string")
        and len(conversation) == 1
        and isinstance(conversation[0].get("content"), str)
    ):
        body["input"] = conversation[0]["content"]
    elif (
        kept.get("input_content")
        and len(conversation) == 1
        and conversation[0].get("role") == "user"
    ):
        body["input"] = _encode_input_steps(conversation)[0]["content"]
    else:
        body["input"] = _encode_input_steps(request.messages)
    if request.tools or "tools" in kept:
        body["tools"] = _encode_interaction_tools(request.tools, kept)
    fields = kept.get("fields")
    changed = portable(request, INTERACTIONS, _interaction_settings(fields or {}))
    if changed:
        if fields and "generation_config" in fields:
            body["generation_config"] = fields["generation_config"]
        _apply_interaction_settings(changed, body)
    return fill(body, fields) if fields else body


def _user_block(
    part: dict[str, Any], entry: Mapping[str, Any] | None, pointer: str
) -> Any:
    return restore(
        _interaction_block(part, pointer),
        entry,
        lambda raw: _interaction_part(raw) == part,
    )


def _encode_input_steps(messages: list[dict[str, Any]]) -> list[Any]:
    steps: list[Any] = []
    for i, (side, group) in enumerate(turns(messages, INTERACTIONS)):
        pointer = f"/input/{i}"
        if side == "assistant":
            steps.extend(_encode_steps(group[0], pointer, False))
            continue
        content: list[Any] = []
        for message in group:
            if message.get("role") == "tool":
                content.append(_result_block(message, pointer))
                continue
            kept = extras_of(message, INTERACTIONS)
            parts = [
                p
                for p in parts_of(message.get("content"))
                if p.get("type") != "reasoning"
            ]
            block = partial(_user_block, pointer=pointer)
            content.extend(weave(kept.get("blocks"), parts, [], block, block))
        first = extras_of(group[0], INTERACTIONS)
        text = group[0].get("content")
        if first.get("content_string") and len(group) == 1 and isinstance(text, str):
            steps.append({**first["step"], "content": text})
            continue
        steps.append({**first.get("step", {"type": "user_input"}), "content": content})
    return steps
