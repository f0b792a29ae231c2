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
  wire's user messages (see `base.turns`). `fields`: other keys of the wire message or `tool_result` block.
- `omit_content`: the `tool_result` had no `content`.
Request and Response extras hold `{"anthropic": {"fields": {...}}}` with the body keys outside the canonical model,
plus `tools` (the wire's tool list when re-exporting would spell it differently), `system` (the system blocks'
layout) and `usage` (the wire's usage object when it reports more than canonical usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import structured
from ..canonical import ProviderError, Request, Response
from ..export import decode_tools, encode_tools
from ..helpers import (
    Counts,
    as_dict,
    as_list,
    body_rest,
    decoded_request,
    extras_of,
    fail,
    fill,
    finish_from,
    guarded,
    note_finish,
    portable,
    sampling_settings,
    stop_value,
    turns,
)
from ..placement import place
from .messages import (
    WIRE,
    decode_assistant,
    decode_system,
    decode_user,
    encode_assistant,
    encode_system,
    encode_turn,
)
from .plain import decode_plain, encode_plain

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "WIRE",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
]

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


# ---- tools, settings, usage ----


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


def _plain_definition(entry: Any) -> dict[str, Any] | None:
    """The definition of an entry the export writes back as it is (a name, a description and an object schema,
    nothing else), as `_tool_definition` reads it; None for any other entry."""
    # Keys told by count and lookup, not a key view compared: this runs for every tool of every decoded request.
    if type(entry) is not dict:
        return None
    name, schema = entry.get("name"), entry.get("input_schema")
    if (
        type(name) is not str
        or type(schema) is not dict
        or schema.get("type") != "object"
    ):
        return None
    count = len(entry)
    if count == 2:
        return {"name": name, "inputSchema": schema}
    description = entry.get("description")
    if count != 3 or type(description) is not str or not description:
        return None
    return {"name": name, "description": description, "inputSchema": schema}


def _plain_tool(entry: Any) -> bool:
    """An entry the export writes back as it is."""
    return _plain_definition(entry) is not None


def _decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    return decode_tools(
        raw, kept, _tool_definition, "anthropic", _plain_tool, _plain_definition
    )


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    return encode_tools(tools, kept, _tool_definition, "anthropic")


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sampling_settings(fields, out, "max_tokens", "top_p", "stop_sequences")
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
    fmt = (
        structured.from_anthropic(fields["output_config"])
        if "output_config" in fields
        else None
    )
    if fmt is not None:
        out["response_format"] = fmt
    metadata = fields.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        out["user"] = metadata["user_id"]
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    # temperature and top_p are not written: the anthropic SDK took them out of messages.create in 1.0 and
    # current models refuse them; the conversion notes say so, and a body that had them keeps them.
    if "max_tokens" in settings:
        body["max_tokens"] = settings["max_tokens"]
    if "stop" in settings:
        body["stop_sequences"] = settings["stop"]
    fmt = settings.get("response_format")
    spelled_format = structured.to_anthropic(fmt) if fmt is not None else None
    if spelled_format is not None:
        body["output_config"] = {
            **(body.get("output_config") or {}),
            "format": spelled_format,
        }
    if "user" in settings:
        body["metadata"] = {**(body.get("metadata") or {}), "user_id": settings["user"]}
    choice = settings.get("tool_choice")
    if choice is None and "parallel_tool_calls" not in settings:
        return
    if isinstance(choice, dict):
        spelled: dict[str, Any] = {"type": "tool", "name": choice["name"]}
    else:
        spelled = {"type": {"required": "any", None: "auto"}.get(choice, choice)}
    if isinstance(settings.get("parallel_tool_calls"), bool):
        spelled["disable_parallel_tool_use"] = not settings["parallel_tool_calls"]
    body["tool_choice"] = spelled


def _usage(raw: Any, counts: Counts | None = None) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    counts = counts or Counts(WIRE, "usage")
    take = counts.take
    # The canonical input counts every input token: the cache reads and writes are part of it.
    fresh = take(raw, "input_tokens", required=True)
    read = take(raw, "cache_read_input_tokens", spoils="input_tokens")
    written = take(raw, "cache_creation_input_tokens", spoils="input_tokens")
    output = take(raw, "output_tokens", required=True)
    usage: dict[str, Any] = {}
    if fresh is not None and not counts.failed(
        "cache_read_input_tokens", "cache_creation_input_tokens"
    ):
        usage["input_tokens"] = fresh + (read or 0) + (written or 0)
    if output is not None:
        usage["output_tokens"] = output
    if read is not None:
        usage["cache_read_tokens"] = read
    if written is not None:
        usage["cache_write_tokens"] = written
    details = raw.get("output_tokens_details")
    if isinstance(details, dict):
        thinking = take(details, "thinking_tokens", within="output_tokens_details")
        if thinking is not None:
            usage["reasoning_tokens"] = thinking
    return usage or None


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    read, written = usage.get("cache_read_tokens"), usage.get("cache_write_tokens")
    body: dict[str, Any] = {}
    if "input_tokens" in usage:
        body["input_tokens"] = usage["input_tokens"] - (read or 0) - (written or 0)
    if written is not None:
        body["cache_creation_input_tokens"] = written
    if read is not None:
        body["cache_read_input_tokens"] = read
    if "output_tokens" in usage:
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
    messages = decode_plain(body.get("system"), raw_messages)
    if messages is None:
        messages = _decode_messages(body.get("system"), raw_messages, kept)
    tools = _decode_tools(body.get("tools"), kept)
    consumed = {"messages", "system", "tools"}
    model, fields = body_rest(body, consumed)
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def _decode_messages(
    system: Any, raw_messages: list[Any], kept: dict[str, Any]
) -> list[dict[str, Any]]:
    """The long way: every block read, and what canonical messages have no place for kept."""
    messages: list[dict[str, Any]] = []
    decoded_system = decode_system(system, kept)
    if decoded_system is not None:
        messages.append(decoded_system)
    for i, raw in enumerate(raw_messages):
        pointer = f"/messages/{i}"
        msg = as_dict(raw, pointer, "a message object")
        role = msg.get("role")
        if role == "assistant":
            messages.append(decode_assistant(msg, pointer))
        elif role == "user":
            before = messages[-1]["role"] if messages else None
            messages.extend(decode_user(msg, pointer, before))
        else:
            fail(
                f"{pointer}/role",
                "user or assistant (the system prompt is the top-level `system` field)",
            )
    return messages


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
    # Parts no block of theirs holds are dropped or named in a text first (placement.py; the notes say which).
    placed = place(request.messages, WIRE).messages
    plain = encode_plain(placed)
    if plain is None:
        system = encode_system(placed, kept)
        messages = _encode_messages(placed)
    else:
        system, messages = plain
    if system is not None:
        body["system"] = system
    body["messages"] = messages
    if request.tools or "tools" in kept:
        body["tools"] = _encode_tools(request.tools, kept)
    fields = kept.get("fields")
    _apply_settings(portable(request, WIRE, _settings(fields) if fields else {}), body)
    return fill(body, fields) if fields else body


def _encode_messages(messages: list[dict[str, Any]]) -> list[Any]:
    """The long way: every message's kept blocks, fields and grouping restored."""
    return [
        encode_turn(side, group, f"/messages/{i}")
        for i, (side, group) in enumerate(turns(messages, WIRE))
    ]


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
    message = decode_assistant({"content": content}, "")
    kept: dict[str, Any] = {}
    counts = Counts(WIRE, "usage")
    usage = _usage(body.get("usage"), counts)
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
    raw = body.get("stop_reason")
    done = _finish(raw, bool(message.get("tool_calls")))
    return Response(
        message,
        done,
        usage,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        counts.noted(
            note_finish({WIRE: kept}, WIRE, "stop_reason", raw, done, _FINISH)
        ),
    )


def encode_response(response: Response) -> dict[str, Any]:
    """A Messages API response body from canonical terms."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    native = WIRE in response.extras
    message = encode_assistant(response.message, "/content")
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
