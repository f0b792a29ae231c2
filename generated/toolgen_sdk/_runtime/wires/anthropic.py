# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Anthropic Messages API bodies to and from canonical terms: tool_use/tool_result, thinking, server tool blocks.

A full response body, which is also what a stream aggregator hands to `decode_response`:
`{"id", "type": "message", "role": "assistant", "model", "content": [blocks], "stop_reason", "stop_sequence",
"usage": {"input_tokens", "output_tokens", "cache_creation_input_tokens"?, "cache_read_input_tokens"?}}`, where a
block is `{"type": "text", "text"}`, `{"type": "thinking", "thinking", "signature"}`, `{"type":
"redacted_thinking", "data"}`, `{"type": "tool_use", "id", "name", "input": {...}}` or a server block
(`server_tool_use`, `*_tool_result`, ...). Errors are `{"type": "error", "error": {"type", "message"}}`.

Canonical mapping: `thinking` is a reasoning part with its `signature`; `redacted_thinking` is a reasoning part
with `redacted: true` and the data in `encrypted`. A user message holding `tool_result` blocks becomes one canonical
tool message per block (plus a user message for any other blocks). Usage `input_tokens` is normalized to every
input token, cache reads and writes included (the wire counts them apart).

What `extras["anthropic"]` holds on a canonical message (only the keys that are needed):
- `blocks`: the wire order of the content blocks, as entries `{"part": e}`, `{"call": e}` or `{"keep": block}`;
  `keep` holds blocks canonical content has no place for (server tool use and results, container uploads...)
  exactly as sent, `e` is `{"rest": {...}}` with keys the encoder does not produce (`cache_control`, `citations`,
  `caller`) or `{"raw": block}`. `message_fields`: other keys of a wire user message.
- `signed`: the reasoning signatures in this message were issued by Anthropic. Reasoning from other wires is not
  sent: Anthropic rejects thinking blocks it did not sign.
- `content_string`: the content was a plain string. `joined` / `split`: how canonical messages regroup into the
  wire's user messages (see `_wire.turns`). `fields`: other keys of the wire message or `tool_result` block.
- `omit_content`: the `tool_result` had no `content`.
Request and Response extras hold `{"anthropic": {"fields": {...}}}` with the body keys outside the canonical model,
plus `tools` (the wire's tool list when re-exporting would spell it differently), `system` (the system blocks'
layout) and `usage` (the wire's usage object when it reports more than canonical usage).
"""

from __future__ import annotations

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
    portable,
    restore,
    signed_for,
    split_marks,
    stop_list,
    stop_value,
    turns,
    weave,
)

WIRE = "anthropic"
# Anthropic requires max_tokens; a request converted from a wire that had none gets this.
DEFAULT_MAX_TOKENS = 4096

_FINISH = MappingProxyType(
    {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "pause_turn": "stop",
        "tool_use": "tool_calls",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "refusal": "content_filter",
    }
)
_FINISH_OUT = MappingProxyType(
    {
        "stop": "end_turn",
        "tool_calls": "tool_use",
        "length": "max_tokens",
        "content_filter": "refusal",
    }
)


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
    call_id = as_str(block.get("id"), f"{pointer}/id", "the tool_use id as a string")
    name = as_str(block.get("name"), f"{pointer}/name", "the tool name as a string")
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
        blocks.extend(_call_block(call, pointer) for call in calls)
        return blocks

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
    call_id = as_str(
        block.get("tool_use_id"),
        f"{pointer}/tool_use_id",
        "the id of the tool_use this answers",
    )
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


def _decode_user(
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


def _encode_turn(
    side: str, group: list[dict[str, Any]], pointer: str
) -> dict[str, Any]:
    if side == "assistant":
        return _encode_assistant(group[0], pointer)
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
        block["content"] = _encode_blocks(content, [], kept.get("blocks"), pointer)
    elif content or not kept.get("omit_content"):
        block["content"] = content
    if "is_error" in message:
        block["is_error"] = message["is_error"]
    fields = kept.get("fields")
    return fill(block, fields) if fields else block


def _encode_assistant(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
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
            _call_block(call, pointer) for call in message.get("tool_calls") or ()
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


# ---- system, tools, usage ----


def _decode_system(system: Any, kept: dict[str, Any]) -> dict[str, Any] | None:
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


def _encode_system(messages: list[dict[str, Any]], kept: Mapping[str, Any]) -> Any:
    system = [message for message in messages if message.get("role") == "system"]
    if not system:
        return None
    if len(system) == 1 and isinstance(system[0].get("content"), str):
        return system[0]["content"]
    parts = [part for message in system for part in parts_of(message.get("content"))]
    return _encode_blocks(parts, [], kept.get("system"), "/system")


def _tool_definition(entry: Any) -> dict[str, Any] | None:
    if (
        not isinstance(entry, dict)
        or entry.get("type", "custom") != "custom"
        or "input_schema" not in entry
    ):
        return None
    if not isinstance(entry.get("name"), str):
        return None
    tool: dict[str, Any] = {"name": entry["name"]}
    if isinstance(entry.get("description"), str):
        tool["description"] = entry["description"]
    tool["inputSchema"] = entry["input_schema"]
    if isinstance(entry.get("strict"), bool):
        tool["strict"] = entry["strict"]
    return tool


def _decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    return decode_tools(raw, kept, _tool_definition, "anthropic")


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    return encode_tools(tools, kept, _tool_definition, "anthropic")


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if type(fields.get("max_tokens")) is int:
        out["max_tokens"] = fields["max_tokens"]
    for key in ("temperature", "top_p"):
        if number(fields.get(key)):
            out[key] = fields[key]
    stop = stop_list(fields.get("stop_sequences"))
    if stop is not None:
        out["stop"] = stop
    choice = fields.get("tool_choice")
    if isinstance(choice, dict):
        kind = choice.get("type")
        if kind in ("auto", "none"):
            out["tool_choice"] = kind
        elif kind == "any":
            out["tool_choice"] = "required"
        elif kind == "tool" and isinstance(choice.get("name"), str):
            out["tool_choice"] = {"name": choice["name"]}
        if isinstance(choice.get("disable_parallel_tool_use"), bool):
            out["parallel_tool_calls"] = not choice["disable_parallel_tool_use"]
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    for key, wire_key in (
        ("max_tokens", "max_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
    ):
        if key in settings:
            body[wire_key] = settings[key]
    if "stop" in settings:
        body["stop_sequences"] = settings["stop"]
    choice = settings.get("tool_choice")
    if choice is None and "parallel_tool_calls" not in settings:
        return
    if isinstance(choice, dict):
        spelled: dict[str, Any] = {"type": "tool", "name": choice["name"]}
    else:
        spelled = {"type": {"required": "any", None: "auto"}.get(choice, choice)}
    if settings.get("parallel_tool_calls") is False:
        spelled["disable_parallel_tool_use"] = True
    body["tool_choice"] = spelled


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _usage(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    fresh, output = _count(raw.get("input_tokens")), _count(raw.get("output_tokens"))
    if fresh is None or output is None:
        return None
    read, written = (
        _count(raw.get("cache_read_input_tokens")),
        _count(raw.get("cache_creation_input_tokens")),
    )
    usage = {
        "input_tokens": fresh + (read or 0) + (written or 0),
        "output_tokens": output,
    }
    if read is not None:
        usage["cache_read_tokens"] = read
    if written is not None:
        usage["cache_write_tokens"] = written
    details = raw.get("output_tokens_details")
    if isinstance(details, dict) and _count(details.get("thinking_tokens")) is not None:
        usage["reasoning_tokens"] = details["thinking_tokens"]
    return usage


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    read, written = usage.get("cache_read_tokens"), usage.get("cache_write_tokens")
    body: dict[str, Any] = {
        "input_tokens": usage["input_tokens"] - (read or 0) - (written or 0)
    }
    if written is not None:
        body["cache_creation_input_tokens"] = written
    if read is not None:
        body["cache_read_input_tokens"] = read
    body["output_tokens"] = usage["output_tokens"]
    if "reasoning_tokens" in usage:
        body["output_tokens_details"] = {"thinking_tokens": usage["reasoning_tokens"]}
    return body


def _finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    return finish_from(_FINISH, raw, has_calls)


# ---- bodies ----


def decode_request(body: Any) -> Request:
    """A Messages API request body in canonical terms."""
    body = as_dict(body, "", "a request body object")
    raw_messages = as_list(
        body.get("messages"), "/messages", "`messages`, an array of message objects"
    )
    kept: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    system = _decode_system(body.get("system"), kept)
    if system is not None:
        messages.append(system)
    for i, raw in enumerate(raw_messages):
        pointer = f"/messages/{i}"
        msg = as_dict(raw, pointer, "a message object")
        role = msg.get("role")
        if role == "assistant":
            messages.append(_decode_assistant(msg, pointer))
        elif role == "user":
            before = messages[-1]["role"] if messages else None
            messages.extend(_decode_user(msg, pointer, before))
        else:
            fail(
                f"{pointer}/role",
                "user or assistant (the system prompt is the top-level `system` field)",
            )
    tools = _decode_tools(body.get("tools"), kept)
    consumed = {"messages", "system", "tools"}
    model, fields = body_rest(body, consumed)
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def encode_request(request: Request) -> dict[str, Any]:
    """A Messages API request body from canonical terms."""
    return guarded(_encode_request, request)


def _encode_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, WIRE)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    if WIRE not in request.extras:
        body["max_tokens"] = DEFAULT_MAX_TOKENS
    system = _encode_system(request.messages, kept)
    if system is not None:
        body["system"] = system
    body["messages"] = [
        _encode_turn(side, group, f"/messages/{i}")
        for i, (side, group) in enumerate(turns(request.messages, WIRE))
    ]
    if request.tools or "tools" in kept:
        body["tools"] = _encode_tools(request.tools, kept)
    fields = kept.get("fields")
    _apply_settings(portable(request, WIRE, _settings(fields or {})), body)
    return fill(body, fields) if fields else body


def _error(body: Mapping[str, Any]) -> ProviderError:
    error = body.get("error")
    if isinstance(error, dict):
        kind = error.get("type")
        return ProviderError(
            WIRE,
            str(error.get("message", "")),
            type=kind if isinstance(kind, str) else None,
            code=kind if isinstance(kind, str) else None,
            raw=dict(body),
        )
    return ProviderError(
        WIRE,
        str(error if error is not None else body.get("message", "")),
        raw=dict(body),
    )


def decode_response(body: Any) -> Response | ProviderError:
    """A Messages API response (or the error body sent instead) in canonical terms."""
    body = as_dict(body, "", "a response body object")
    if body.get("type") == "error" or ("error" in body and "content" not in body):
        return _error(body)
    content = as_list(
        body.get("content"), "/content", "`content`, an array of content blocks"
    )
    message = _decode_assistant({"content": content}, "")
    kept: dict[str, Any] = {}
    usage = _usage(body.get("usage"))
    consumed = {"content", "stop_reason"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    response_id, model = body.get("id"), body.get("model")
    consumed.update(
        key
        for key, value in (("id", response_id), ("model", model))
        if isinstance(value, str)
    )
    if "stop_reason" in body and not isinstance(body["stop_reason"], str):
        consumed.discard("stop_reason")
    fields = {key: value for key, value in body.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    return Response(
        message,
        _finish(body.get("stop_reason"), bool(message.get("tool_calls"))),
        usage,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        {WIRE: kept},
    )


def encode_response(response: Response) -> dict[str, Any]:
    """A Messages API response body from canonical terms."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    native = WIRE in response.extras
    message = _encode_assistant(response.message, "/content")
    # Clients require these of a Message; a response from another wire may not know them.
    body: dict[str, Any] = (
        {}
        if native
        else {"id": "", "type": "message", "role": "assistant", "model": ""}
    )
    if response.id is not None:
        body["id"] = response.id
    if response.model is not None:
        body["model"] = response.model
    body["content"] = message["content"]
    if response.finish is not None:
        body["stop_reason"] = stop_value(
            response, WIRE, _FINISH, _FINISH_OUT, "end_turn"
        )
    if not native:
        body["stop_sequence"] = None
        body["usage"] = {"input_tokens": 0, "output_tokens": 0}
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
    return {
        "type": "error",
        "error": {"type": error.type or "api_error", "message": error.message},
    }
