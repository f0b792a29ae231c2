# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Cohere v2 chat bodies to and from canonical terms: `tool_plan`, `tool_calls` with JSON-text arguments, TOOL_CALL.

A full response body, which is also what a stream aggregator hands to `decode_response`: `{"id",
"finish_reason": "COMPLETE" | "TOOL_CALL" | ..., "message": {"role": "assistant", "content"?: [{"type": "text",
"text"} | {"type": "thinking", "thinking"}], "tool_plan"?, "tool_calls"?: [{"id", "type": "function", "function":
{"name", "arguments": <JSON text>}}], "citations"?}, "usage": {"billed_units": {"input_tokens", "output_tokens"},
"tokens": {"input_tokens", "output_tokens"}, "cached_tokens"?}}`. Errors are `{"id"?, "message": "<text>"}`.
Arguments are kept as sent, including the literal `"null"` some calls carry. `tool_plan` is a reasoning part.
Usage counts come from `tokens` (what the model saw), else `billed_units`.

What `extras["cohere"]` holds on a canonical message (only the keys that are needed):
- `tool_plan`: the first reasoning part is the message's `tool_plan` (other reasoning parts are thinking blocks).
- `blocks`: the wire order of content blocks when the encoder would not rebuild it, as `{"part": e}` or
  `{"keep": block}` (documents, anything canonical content has no place for); `e` is `{"rest": {...}}` or
  `{"raw": block}`. `calls`: per tool call, the same kind of entry.
- `content_string`: the content was a plain string. `omit_content`: there was no `content` key.
  `fields`: other message keys (`citations`).
Request and Response extras hold `{"cohere": {"fields": {...}}}` with the body keys outside the canonical model,
plus `tools` (the wire's tool list when re-exporting would spell it differently) and `usage` (the wire's usage
object when it reports more than canonical usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import structured
from ..canonical import ProviderError, Request, Response, parts_of
from ..export import (
    decode_tools,
    encode_tools,
    plain_chat_definition,
    plain_chat_function,
)
from ..helpers import (
    _ABSENT,
    Counts,
    args_text,
    as_dict,
    as_list,
    as_str,
    assistant_content,
    body_rest,
    decoded_request,
    extras_of,
    fail,
    fill,
    finish_from,
    guarded,
    is_trivial,
    keep_entry,
    note_finish,
    portable,
    restore,
    sampling_settings,
    stop_value,
    weave,
)
from ..placement import place
from .plain import decode_plain, encode_plain

WIRE = "cohere"

_FINISH = MappingProxyType(
    {
        "COMPLETE": "stop",
        "STOP_SEQUENCE": "stop",
        "TOOL_CALL": "tool_calls",
        "MAX_TOKENS": "length",
        "ERROR": "error",
        "TIMEOUT": "error",
    }
)
_FINISH_OUT = MappingProxyType(
    {
        "stop": "COMPLETE",
        "tool_calls": "TOOL_CALL",
        "length": "MAX_TOKENS",
        "content_filter": "ERROR",
        "error": "ERROR",
    }
)


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return {"type": "reasoning", "text": block["thinking"]}
    if kind == "image_url":
        image = block.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str):
            part = {"type": "image", "url": url}
            if isinstance(image, dict) and image.get("detail") in (
                "auto",
                "low",
                "high",
            ):
                part["detail"] = image["detail"]
            return part
    return None


def _part_block(part: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    if kind == "reasoning":
        return {"type": "thinking", "thinking": part.get("text", "")}
    if kind == "image" and ("url" in part or "data" in part):
        url = (
            part["url"]
            if "url" in part
            else f"data:{part.get('media_type', 'image/png')};base64,{part['data']}"
        )
        image = {"url": url}
        if "detail" in part:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    fail(pointer, "a text, reasoning or image part")


def _decode_content(
    content: Any, pointer: str, kept: dict[str, Any]
) -> list[dict[str, Any]] | str | None:
    if content is _ABSENT:
        kept["omit_content"] = True
        return None
    if content is None or isinstance(content, str):
        return content
    blocks = as_list(
        content, pointer, "content as a string or an array of content blocks"
    )
    parts: list[dict[str, Any]] = []
    skeleton: list[dict[str, Any]] = []
    for i, raw in enumerate(blocks):
        block = as_dict(raw, f"{pointer}/{i}", "a content block object")
        part = _part(block)
        if part is None:
            skeleton.append({"keep": block})
        else:
            parts.append(part)
            skeleton.append(
                {"part": keep_entry(block, _part_block(part, f"{pointer}/{i}"))}
            )
    if not is_trivial(skeleton):
        kept["blocks"] = skeleton
    return parts


def _encode_content(
    parts: list[dict[str, Any]], kept: Mapping[str, Any], pointer: str
) -> list[Any]:
    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(
            _part_block(part, pointer), entry, lambda raw: _part(raw) == part
        )

    return weave(kept.get("blocks"), parts, [], part_block, part_block)


def _call(raw: Any, pointer: str) -> tuple[dict[str, Any], dict[str, Any]]:
    entry = as_dict(raw, pointer, "a tool call object")
    fn = as_dict(
        entry.get("function"),
        f"{pointer}/function",
        "a `function` object with name and arguments",
    )
    name = as_str(
        fn.get("name"), f"{pointer}/function/name", "the function name as a string"
    )
    call_id = as_str(entry.get("id"), f"{pointer}/id", "the tool call id as a string")
    value = fn.get("arguments", "")
    arguments = value if isinstance(value, str) else args_text(value)
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return call, keep_entry(entry, _call_block(call))


def _call_block(call: Mapping[str, Any]) -> dict[str, Any]:
    fn = call["function"]
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": fn["name"], "arguments": fn["arguments"]},
    }


def _same_call(raw: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    try:
        return _call(raw, "")[0] == call
    except ValueError:
        return False


def _decode_message(raw: Any, pointer: str) -> dict[str, Any]:
    msg = as_dict(raw, pointer, "a message object")
    role = msg.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        fail(f"{pointer}/role", "one of system, user, assistant or tool")
    kept: dict[str, Any] = {}
    consumed = {"role", "content"}
    content = _decode_content(msg.get("content", _ABSENT), f"{pointer}/content", kept)
    out: dict[str, Any] = {"role": role}
    if role == "assistant":
        _decode_assistant(msg, pointer, content, out, kept, consumed)
    else:
        if content is None:
            content = ""
        out["content"] = content
        if role == "tool":
            out["tool_call_id"] = as_str(
                msg.get("tool_call_id"),
                f"{pointer}/tool_call_id",
                "the id of the call this answers",
            )
            consumed.add("tool_call_id")
    fields = {key: value for key, value in msg.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _decode_assistant(
    msg: Mapping[str, Any],
    pointer: str,
    content: list[dict[str, Any]] | str | None,
    out: dict[str, Any],
    kept: dict[str, Any],
    consumed: set[str],
) -> None:
    parts: list[dict[str, Any]] = []
    if isinstance(msg.get("tool_plan"), str):
        consumed.add("tool_plan")
        parts.append({"type": "reasoning", "text": msg["tool_plan"]})
        kept["tool_plan"] = True
    if isinstance(content, str):
        kept["content_string"] = True
        if content:
            parts.append({"type": "text", "text": content})
    elif isinstance(content, list):
        parts.extend(content)
    out["content"] = assistant_content(parts)
    raw_calls = msg.get("tool_calls")
    if isinstance(raw_calls, list):
        consumed.add("tool_calls")
        pairs = [
            _call(raw, f"{pointer}/tool_calls/{j}") for j, raw in enumerate(raw_calls)
        ]
        out["tool_calls"] = [call for call, _ in pairs]
        if any(entry for _, entry in pairs):
            kept["calls"] = [entry for _, entry in pairs]


def _encode_message(msg: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    role = msg.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        fail(f"{pointer}/role", "one of system, user, assistant or tool")
    kept = extras_of(msg, WIRE)
    out: dict[str, Any] = {"role": role}
    if role == "assistant":
        _encode_assistant(msg, pointer, kept, out)
    else:
        if role == "tool":
            out["tool_call_id"] = msg["tool_call_id"]
        content = msg.get("content", "")
        out["content"] = (
            content
            if isinstance(content, str)
            else _encode_content(content, kept, f"{pointer}/content")
        )
    fields = kept.get("fields")
    return fill(out, fields) if fields else out


def _encode_assistant(
    msg: Mapping[str, Any], pointer: str, kept: Mapping[str, Any], out: dict[str, Any]
) -> None:
    parts = parts_of(msg.get("content"))
    calls = msg.get("tool_calls")
    reasoning = [part for part in parts if part.get("type") == "reasoning"]
    if kept.get("tool_plan") and reasoning:
        out["tool_plan"] = reasoning[0].get("text", "")
        parts = [part for part in parts if part is not reasoning[0]]
    elif not kept and calls and reasoning:
        # A plan is what Cohere expects before tool calls; another wire's reasoning is the closest thing.
        out["tool_plan"] = "\n\n".join(part.get("text", "") for part in reasoning)
        parts = [part for part in parts if part.get("type") != "reasoning"]
    if kept.get("content_string") and all(part.get("type") == "text" for part in parts):
        out["content"] = "".join(part["text"] for part in parts)
    elif parts or kept.get("blocks"):
        out["content"] = _encode_content(parts, kept, f"{pointer}/content")
    elif not kept.get("omit_content") and not calls:
        out["content"] = []
    if calls is not None:
        entries = kept.get("calls")
        if entries is not None and len(entries) != len(calls):
            entries = None
        out["tool_calls"] = [
            _restore_call(call, entries[j] if entries else None)
            for j, call in enumerate(calls)
        ]


def _restore_call(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
    return restore(_call_block(call), entry, lambda raw: _same_call(raw, call))


def _tool_definition(entry: Any) -> dict[str, Any] | None:
    fn = (
        entry.get("function")
        if isinstance(entry, dict) and entry.get("type", "function") == "function"
        else None
    )
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        return None
    tool: dict[str, Any] = {"name": fn["name"]}
    if isinstance(fn.get("description"), str):
        tool["description"] = fn["description"]
    tool["inputSchema"] = fn.get("parameters", {})
    return tool


def _decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    return decode_tools(
        raw,
        kept,
        _tool_definition,
        "cohere",
        plain_chat_function,
        plain_chat_definition,
    )


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    # Cohere v2 takes OpenAI's function shape, without its per-function strict (Cohere's is strict_tools).
    return encode_tools(tools, kept, _tool_definition, "cohere")


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sampling_settings(fields, out, "max_tokens", "p", "stop_sequences")
    choice = fields.get("tool_choice")
    if choice in ("REQUIRED", "NONE"):
        out["tool_choice"] = "required" if choice == "REQUIRED" else "none"
    fmt = structured.from_cohere(fields.get("response_format"))
    if fmt is not None:
        out["response_format"] = fmt
    if type(fields.get("seed")) is int:
        out["seed"] = fields["seed"]
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    for key, wire_key in (
        ("max_tokens", "max_tokens"),
        ("temperature", "temperature"),
        ("top_p", "p"),
    ):
        if key in settings:
            body[wire_key] = settings[key]
    if "stop" in settings:
        body["stop_sequences"] = settings["stop"]
    if "response_format" in settings:
        body["response_format"] = structured.to_cohere(settings["response_format"])
    if "seed" in settings:
        body["seed"] = settings["seed"]
    # Cohere's choice is REQUIRED or NONE; auto is its default, and it cannot name one tool.
    choice = settings.get("tool_choice")
    if choice in ("required", "none") or isinstance(choice, dict):
        body["tool_choice"] = "NONE" if choice == "none" else "REQUIRED"


def _usage(raw: Any, counts: Counts | None = None) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    counts = counts or Counts(WIRE, "usage")
    usage: dict[str, Any] = {}
    # What the model saw (`tokens`), else what was billed: the counts come from one of them, never both.
    for key in ("tokens", "billed_units"):
        held = raw.get(key)
        if isinstance(held, dict) and (
            "input_tokens" in held or "output_tokens" in held
        ):
            for name in ("input_tokens", "output_tokens"):
                value = counts.take(held, name, within=key, required=True)
                if value is not None:
                    usage[name] = value
            break
    cached = counts.take(raw, "cached_tokens")
    if cached is not None:
        usage["cache_read_tokens"] = cached
    return usage or None


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    counts = {
        name: usage[name] for name in ("input_tokens", "output_tokens") if name in usage
    }
    body: dict[str, Any] = {"billed_units": dict(counts), "tokens": counts}
    if "cache_read_tokens" in usage:
        body["cached_tokens"] = usage["cache_read_tokens"]
    return body


def _finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    return finish_from(_FINISH, raw, has_calls)


def decode_request(body: Any) -> Request:
    """A v2 chat request body in canonical terms."""
    body = as_dict(body, "", "a request body object")
    raw_messages = as_list(
        body.get("messages"), "/messages", "`messages`, an array of message objects"
    )
    messages = decode_plain(raw_messages)
    if messages is None:
        messages = _decode_messages(raw_messages)
    kept: dict[str, Any] = {}
    tools = _decode_tools(body.get("tools"), kept)
    consumed = (
        {"messages", "tools"} if isinstance(body.get("tools"), list) else {"messages"}
    )
    model, fields = body_rest(body, consumed)
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def _decode_messages(raw_messages: list[Any]) -> list[dict[str, Any]]:
    """The long way: every message and block read, and what canonical messages have no place for kept."""
    return [
        _decode_message(raw, f"/messages/{i}") for i, raw in enumerate(raw_messages)
    ]


def _encode_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The long way: every message's kept blocks, calls, plan and fields restored."""
    return [_encode_message(msg, f"/messages/{i}") for i, msg in enumerate(messages)]


def encode_request(request: Request) -> dict[str, Any]:
    """A v2 chat request body from canonical terms."""
    return guarded(_encode_request, request)


def _encode_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, WIRE)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    # Parts a tool result cannot hold are moved, dropped or named in a text first (placement.py; the notes say
    # which).
    placed = place(request.messages, WIRE).messages
    messages = encode_plain(placed)
    if messages is None:
        messages = _encode_messages(placed)
    body["messages"] = messages
    if request.tools or "tools" in kept:
        body["tools"] = _encode_tools(request.tools, kept)
    fields = kept.get("fields")
    _apply_settings(portable(request, WIRE, _settings(fields) if fields else {}), body)
    return fill(body, fields) if fields else body


def decode_response(body: Any) -> Response | ProviderError:
    """A v2 chat response (or the error body sent instead) in canonical terms."""
    body = as_dict(body, "", "a response body object")
    if not isinstance(body.get("message"), dict):
        text = body.get("message")
        if isinstance(text, str) or "error" in body:
            return ProviderError(
                WIRE,
                text if isinstance(text, str) else str(body.get("error")),
                raw=dict(body),
            )
    message = _decode_message(
        as_dict(body.get("message"), "/message", "the assistant message object"),
        "/message",
    )
    if message["role"] != "assistant":
        fail("/message/role", "assistant")
    kept: dict[str, Any] = {}
    counts = Counts(WIRE, "usage")
    usage = _usage(body.get("usage"), counts)
    consumed = {"message", "finish_reason"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    raw = body.get("finish_reason")
    done = _finish(raw, bool(message.get("tool_calls")))
    if done is None:
        consumed.discard("finish_reason")
    response_id = body.get("id")
    if isinstance(response_id, str):
        consumed.add("id")
    fields = {key: value for key, value in body.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    return Response(
        message,
        done,
        usage,
        None,
        response_id if isinstance(response_id, str) else None,
        counts.noted(
            note_finish({WIRE: kept}, WIRE, "finish_reason", raw, done, _FINISH)
        ),
    )


def encode_response(response: Response) -> dict[str, Any]:
    """A v2 chat response body from canonical terms (the wire has no model field)."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    body: dict[str, Any] = {}
    if response.id is not None:
        body["id"] = response.id
    body["message"] = _encode_message(response.message, "/message")
    if response.finish is not None:
        body["finish_reason"] = stop_value(
            response, WIRE, _FINISH, _FINISH_OUT, "COMPLETE"
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
