# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Bedrock Converse bodies to and from canonical terms: toolUse/toolResult blocks, reasoningContent, camelCase usage.

A full response body, which is also what a stream aggregator hands to `decode_response`:
`{"output": {"message": {"role": "assistant", "content": [blocks]}}, "stopReason", "usage": {"inputTokens",
"outputTokens", "totalTokens", "cacheReadInputTokens"?, "cacheWriteInputTokens"?}, "metrics": {"latencyMs"}}`,
a block being `{"text"}`, `{"reasoningContent": {"reasoningText": {"text", "signature"}}}` (or `{"redactedContent"}`),
`{"toolUse": {"toolUseId", "name", "input": {...}}}`, `{"image"}`, `{"document"}` or `{"cachePoint"}`. An HTTP
error body is only `{"message"}` (the exception type travels in a header, sometimes copied into `__type`).
Usage `input_tokens` is normalized to every input token, cache reads and writes included.

What `extras["bedrock-converse"]` holds on a canonical message (only the keys that are needed):
- `blocks`: the wire order of the content blocks, as `{"part": e}`, `{"call": e}` or `{"keep": block}` (cache
  points, guard content, anything canonical content has no place for, as sent); `e` is `{"rest": {...}}` with keys
  the encoder does not produce (a toolUse's `type`) or `{"raw": block}`.
- `signed`: the reasoning signatures here were issued through Bedrock; reasoning from other wires is not sent.
- tool messages: `result_json` (the result was a `{"json"}` block, the content is its JSON text), `fields` (other
  keys of `toolResult`), `blocks` for a result content list.
- `joined` / `split` (see `_wire.turns`).
Request and Response extras hold `{"bedrock-converse": {"fields": {...}}}` with the body keys outside the canonical
model, plus `tools` (the wire's `toolConfig.tools` when re-exporting would spell it differently), `system` and
`usage` (the wire's usage object when it reports more than canonical usage).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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
    decode_tools,
    decoded_request,
    encode_tools,
    extras_of,
    fail,
    fill,
    finish_from,
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
    stop_list,
    stop_value,
    turns,
    weave,
)

WIRE = "bedrock-converse"

_FINISH = MappingProxyType(
    {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "tool_use": "tool_calls",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "guardrail_intervened": "content_filter",
        "content_filtered": "content_filter",
        "malformed_model_output": "error",
        "malformed_tool_use": "error",
    }
)
_FINISH_OUT = MappingProxyType(
    {
        "stop": "end_turn",
        "tool_calls": "tool_use",
        "length": "max_tokens",
        "content_filter": "content_filtered",
        "error": "malformed_model_output",
    }
)
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
        return {"image": {"format": media[6:], "source": {"bytes": part["data"]}}}
    if kind == "file" and "data" in part and media in _DOCUMENT_FORMATS:
        document = {
            "format": _DOCUMENT_FORMATS[media],
            "name": part.get("filename", "document"),
        }
        return {"document": {**document, "source": {"bytes": part["data"]}}}
    fail(
        pointer,
        "a text or reasoning part, an inline image, or an inline pdf/txt/md/html/csv document",
    )


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


def _decode_blocks(
    blocks: list[Any], pointer: str, start: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
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


def _encode_blocks(
    parts: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    skeleton: list[Any] | None,
    pointer: str,
) -> list[Any]:
    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, pointer), entry, lambda raw: _part(raw) == part
        )

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _call_block(call, pointer), entry, lambda raw: _call(raw, pointer) == call
        )

    return weave(skeleton, parts, calls, part_block, call_block)


# ---- messages ----


def _decode_assistant(msg: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    blocks = as_list(
        msg.get("content"),
        f"{pointer}/content",
        "`content`, an array of content blocks",
    )
    parts, calls, skeleton = _decode_blocks(blocks, f"{pointer}/content")
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
        parts, _, skeleton = _decode_blocks(
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


def _decode_user(
    msg: Mapping[str, Any], pointer: str, before: str | None
) -> list[dict[str, Any]]:
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
            parts, _, skeleton = _decode_blocks(
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
        result["content"] = _encode_blocks(content, [], kept.get("blocks"), pointer)
    if "is_error" in message:
        result["status"] = "error" if message["is_error"] else "success"
    if kept.get("fields"):
        fill(result, kept["fields"])
    return {"toolResult": result}


def _encode_turn(
    side: str, group: list[dict[str, Any]], pointer: str
) -> dict[str, Any]:
    if side == "assistant":
        message = group[0]
        kept = extras_of(message, WIRE)
        parts = parts_of(message.get("content"))
        if not signed_for(message, WIRE):
            parts = [part for part in parts if part.get("type") != "reasoning"]
        blocks = _encode_blocks(
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
            _encode_blocks(parts, [], extras_of(message, WIRE).get("blocks"), pointer)
        )
    out = {"role": "user", "content": content}
    fields = extras_of(group[0], WIRE).get("message_fields")
    return fill(out, fields) if fields else out


# ---- system, tools, usage ----


def _tool_definition(entry: Any) -> dict[str, Any] | None:
    spec = entry.get("toolSpec") if isinstance(entry, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        return None
    schema = spec.get("inputSchema")
    tool: dict[str, Any] = {"name": spec["name"]}
    if isinstance(spec.get("description"), str):
        tool["description"] = spec["description"]
    tool["inputSchema"] = schema.get("json", {}) if isinstance(schema, dict) else {}
    return tool


def _decode_tools(config: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    raw = config.get("tools") if isinstance(config, dict) else None
    return decode_tools(raw, kept, _tool_definition, "bedrock")


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    return encode_tools(tools, kept, _tool_definition, "bedrock")


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    config = fields.get("inferenceConfig")
    if isinstance(config, dict):
        if type(config.get("maxTokens")) is int:
            out["max_tokens"] = config["maxTokens"]
        for key, setting in (("temperature", "temperature"), ("topP", "top_p")):
            if number(config.get(key)):
                out[setting] = config[key]
        stop = stop_list(config.get("stopSequences"))
        if stop is not None:
            out["stop"] = stop
    choice = (
        fields.get("toolConfig", {}).get("toolChoice")
        if isinstance(fields.get("toolConfig"), dict)
        else None
    )
    if isinstance(choice, dict) and len(choice) == 1:
        ((kind, value),) = choice.items()
        if kind in ("auto", "any"):
            out["tool_choice"] = "auto" if kind == "auto" else "required"
        elif (
            kind == "tool"
            and isinstance(value, dict)
            and isinstance(value.get("name"), str)
        ):
            out["tool_choice"] = {"name": value["name"]}
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    config = dict(body.get("inferenceConfig") or {})
    for key, wire_key in (
        ("max_tokens", "maxTokens"),
        ("temperature", "temperature"),
        ("top_p", "topP"),
    ):
        if key in settings:
            config[wire_key] = settings[key]
    if "stop" in settings:
        config["stopSequences"] = settings["stop"]
    if config:
        body["inferenceConfig"] = config
    choice = settings.get("tool_choice")
    # Converse has no "none" choice, and a choice needs tools to choose from.
    if choice is None or choice == "none" or "toolConfig" not in body:
        return
    if isinstance(choice, dict):
        spelled: dict[str, Any] = {"tool": {"name": choice["name"]}}
    else:
        spelled = {"any" if choice == "required" else "auto": {}}
    body["toolConfig"] = {**body["toolConfig"], "toolChoice": spelled}


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _usage(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    fresh, output = _count(raw.get("inputTokens")), _count(raw.get("outputTokens"))
    if fresh is None or output is None:
        return None
    read, written = (
        _count(raw.get("cacheReadInputTokens")),
        _count(raw.get("cacheWriteInputTokens")),
    )
    usage = {
        "input_tokens": fresh + (read or 0) + (written or 0),
        "output_tokens": output,
    }
    total = _count(raw.get("totalTokens"))
    if total is not None:
        usage["total_tokens"] = total
    if read is not None:
        usage["cache_read_tokens"] = read
    if written is not None:
        usage["cache_write_tokens"] = written
    return usage


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    read, written = usage.get("cache_read_tokens"), usage.get("cache_write_tokens")
    body: dict[str, Any] = {
        "inputTokens": usage["input_tokens"] - (read or 0) - (written or 0),
        "outputTokens": usage["output_tokens"],
        "totalTokens": usage.get(
            "total_tokens", usage["input_tokens"] + usage["output_tokens"]
        ),
    }
    if read is not None:
        body["cacheReadInputTokens"] = read
    if written is not None:
        body["cacheWriteInputTokens"] = written
    return body


def _finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    return finish_from(_FINISH, raw, has_calls)


# ---- bodies ----


def decode_request(body: Any) -> Request:
    """A Converse request body in canonical terms."""
    body = as_dict(body, "", "a request body object")
    raw_messages = as_list(
        body.get("messages"), "/messages", "`messages`, an array of message objects"
    )
    kept: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if isinstance(system, list) and system:
        parts, _, skeleton = _decode_blocks(system, "/system")
        if not is_trivial(skeleton):
            kept["system"] = skeleton
        messages.append({"role": "system", "content": plain_text(parts, skeleton)})
    for i, raw in enumerate(raw_messages):
        pointer = f"/messages/{i}"
        msg = as_dict(raw, pointer, "a message object")
        role = msg.get("role")
        if role == "assistant":
            messages.append(_decode_assistant(msg, pointer))
        elif role == "user":
            messages.extend(
                _decode_user(msg, pointer, messages[-1]["role"] if messages else None)
            )
        else:
            fail(
                f"{pointer}/role",
                "user or assistant (the system prompt is the top-level `system` field)",
            )
    config = body.get("toolConfig")
    tools = _decode_tools(config, kept)
    consumed = {"messages"}
    if isinstance(system, list) and system:
        consumed.add("system")
    model, fields = body_rest(body, consumed, "modelId")
    if "tools" in kept or tools:
        fields["toolConfig"] = {
            key: value for key, value in config.items() if key != "tools"
        }
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def encode_request(request: Request) -> dict[str, Any]:
    """A Converse request body from canonical terms (`modelId` only when the request names a model)."""
    return guarded(_encode_request, request)


def _encode_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, WIRE)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["modelId"] = request.model
    body["messages"] = [
        _encode_turn(side, group, f"/messages/{i}")
        for i, (side, group) in enumerate(turns(request.messages, WIRE))
    ]
    system = [
        part
        for m in request.messages
        if m.get("role") == "system"
        for part in parts_of(m.get("content"))
    ]
    if system:
        body["system"] = _encode_blocks(system, [], kept.get("system"), "/system")
    fields = dict(kept.get("fields") or {})
    config = (
        fields.pop("toolConfig") if isinstance(fields.get("toolConfig"), dict) else {}
    )
    if request.tools or "tools" in kept:
        body["toolConfig"] = {"tools": _encode_tools(request.tools, kept), **config}
    elif config:
        body["toolConfig"] = config
    changed = portable(request, WIRE, _settings(kept.get("fields") or {}))
    if changed:
        if "inferenceConfig" in fields:
            body["inferenceConfig"] = fields["inferenceConfig"]
        _apply_settings(changed, body)
    return fill(body, fields) if fields else body


def _error(body: Mapping[str, Any]) -> ProviderError:
    message = body.get("message", body.get("Message", ""))
    kind = body.get("__type")
    if isinstance(kind, str):
        kind = kind.rpartition("#")[2]
    return ProviderError(
        WIRE,
        str(message),
        type=kind if isinstance(kind, str) else None,
        code=kind if isinstance(kind, str) else None,
        raw=dict(body),
    )


def decode_response(body: Any) -> Response | ProviderError:
    """A Converse response (or the error body sent instead) in canonical terms."""
    body = as_dict(body, "", "a response body object")
    if "output" not in body and (
        "message" in body or "Message" in body or "__type" in body
    ):
        return _error(body)
    output = as_dict(
        body.get("output"), "/output", "`output`, an object holding `message`"
    )
    msg = as_dict(
        output.get("message"), "/output/message", "the assistant message object"
    )
    message = _decode_assistant(msg, "/output/message")
    kept: dict[str, Any] = {}
    if set(output) != {"message"}:
        kept["output"] = {
            key: value for key, value in output.items() if key != "message"
        }
    if msg.get("role") != "assistant":
        kept["role"] = msg.get("role")
    usage = _usage(body.get("usage"))
    consumed = {"output", "stopReason"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    done = _finish(body.get("stopReason"), bool(message.get("tool_calls")))
    if done is None:
        consumed.discard("stopReason")
    fields = {key: value for key, value in body.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    return Response(message, done, usage, None, None, {WIRE: kept})


def encode_response(response: Response) -> dict[str, Any]:
    """A Converse response body from canonical terms (the wire has no id or model field)."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    message = _encode_turn("assistant", [response.message], "/output/message")
    if "role" in kept:
        message["role"] = kept["role"]
    body: dict[str, Any] = {"output": {"message": message, **kept.get("output", {})}}
    if response.finish is not None:
        body["stopReason"] = stop_value(
            response, WIRE, _FINISH, _FINISH_OUT, "end_turn"
        )
    if response.usage is not None:
        raw_usage = kept.get("usage")
        fits = raw_usage is not None and _usage(raw_usage) == response.usage
        body["usage"] = raw_usage if fits else _usage_body(response.usage)
    fields = kept.get("fields")
    return fill(body, fields) if fields else body


def encode_error(error: ProviderError) -> dict[str, Any]:
    """The error body this wire sends; the recorded body itself when the error came from this wire."""
    if error.wire == WIRE and isinstance(error.raw, dict):
        return error.raw
    return {"message": error.message}
