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
- `joined` / `split` (see `base.turns`).
Request and Response extras hold `{"bedrock-converse": {"fields": {...}}}` with the body keys outside the canonical
model, plus `tools` (the wire's `toolConfig.tools` when re-exporting would spell it differently), `system` and
`usage` (the wire's usage object when it reports more than canonical usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import structured
from ..canonical import ProviderError, Request, Response, aws_error_name, parts_of
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
    is_trivial,
    note_finish,
    plain_text,
    portable,
    sampling_settings,
    stop_value,
    turns,
    usage_total,
)
from ..placement import place
from .messages import (
    WIRE,
    decode_assistant,
    decode_blocks,
    decode_user,
    encode_blocks,
    encode_turn,
)
from .plain import decode_plain, encode_plain

__all__ = [
    "WIRE",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
]

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


# ---- tools, settings, usage ----


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


def _plain_definition(entry: Any) -> dict[str, Any] | None:
    """The definition of an entry the export writes back as it is (a toolSpec of a name, a description and an
    object schema, nothing else), as `_tool_definition` reads it; None for any other entry."""
    # Keys told by count and lookup, not a key view compared: this runs for every tool of every decoded request.
    if type(entry) is not dict or len(entry) != 1:
        return None
    spec = entry.get("toolSpec")
    if type(spec) is not dict:
        return None
    name, wrapped = spec.get("name"), spec.get("inputSchema")
    if type(name) is not str or type(wrapped) is not dict or len(wrapped) != 1:
        return None
    schema = wrapped.get("json")
    if type(schema) is not dict or schema.get("type") != "object":
        return None
    count = len(spec)
    if count == 2:
        return {"name": name, "inputSchema": schema}
    description = spec.get("description")
    if count != 3 or type(description) is not str or not description:
        return None
    return {"name": name, "description": description, "inputSchema": schema}


def _plain_tool(entry: Any) -> bool:
    """An entry the export writes back as it is: a toolSpec of a name, a description and an object schema."""
    return _plain_definition(entry) is not None


def _decode_tools(config: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    raw = config.get("tools") if isinstance(config, dict) else None
    return decode_tools(
        raw, kept, _tool_definition, "bedrock", _plain_tool, _plain_definition
    )


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    return encode_tools(tools, kept, _tool_definition, "bedrock")


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    config = fields.get("inferenceConfig")
    if isinstance(config, dict):
        sampling_settings(config, out, "maxTokens", "topP", "stopSequences")
    tool_config = fields.get("toolConfig")
    choice = tool_config.get("toolChoice") if isinstance(tool_config, dict) else None
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
    if "outputConfig" in fields:
        fmt = structured.from_bedrock(fields["outputConfig"])
        if fmt is not None:
            out["response_format"] = fmt
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
        stop = settings["stop"]
        # Converse takes a list only; a single stop string is the list of it.
        config["stopSequences"] = [stop] if isinstance(stop, str) else stop
    if config:
        body["inferenceConfig"] = config
    fmt = settings.get("response_format")
    output = structured.to_bedrock(fmt) if fmt is not None else None
    if output is not None:
        body["outputConfig"] = {**(body.get("outputConfig") or {}), **output}
    choice = settings.get("tool_choice")
    # Converse has no "none" choice, and a choice needs tools to choose from.
    if choice is None or choice == "none" or "toolConfig" not in body:
        return
    if isinstance(choice, dict):
        spelled: dict[str, Any] = {"tool": {"name": choice["name"]}}
    else:
        spelled = {"any" if choice == "required" else "auto": {}}
    body["toolConfig"] = {**body["toolConfig"], "toolChoice": spelled}


def _usage(raw: Any, counts: Counts | None = None) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    counts = counts or Counts(WIRE, "usage")
    take = counts.take
    # The canonical input counts every input token: the cache reads and writes are part of it.
    fresh = take(raw, "inputTokens", required=True)
    output = take(raw, "outputTokens", required=True)
    read = take(raw, "cacheReadInputTokens", spoils="input_tokens")
    written = take(raw, "cacheWriteInputTokens", spoils="input_tokens")
    usage: dict[str, Any] = {}
    if fresh is not None and not counts.failed(
        "cacheReadInputTokens", "cacheWriteInputTokens"
    ):
        usage["input_tokens"] = fresh + (read or 0) + (written or 0)
    if output is not None:
        usage["output_tokens"] = output
    total = take(raw, "totalTokens")
    if total is not None:
        usage["total_tokens"] = total
    if read is not None:
        usage["cache_read_tokens"] = read
    if written is not None:
        usage["cache_write_tokens"] = written
    return usage or None


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    read, written = usage.get("cache_read_tokens"), usage.get("cache_write_tokens")
    body: dict[str, Any] = {}
    if "input_tokens" in usage:
        body["inputTokens"] = usage["input_tokens"] - (read or 0) - (written or 0)
    if "output_tokens" in usage:
        body["outputTokens"] = usage["output_tokens"]
    total = usage_total(usage)
    if total is not None:
        body["totalTokens"] = total
    if read is not None:
        body["cacheReadInputTokens"] = read
    if written is not None:
        body["cacheWriteInputTokens"] = written
    return body


def _finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    return finish_from(_FINISH, raw, has_calls)


# ---- bodies ----


_MESSAGES_ONLY = ("messages",)
_WITH_SYSTEM = ("messages", "system")


def decode_request(body: Any) -> Request:
    """A Converse request body in canonical terms."""
    body = as_dict(body, "", "a request body object")
    raw_messages = as_list(
        body.get("messages"), "/messages", "`messages`, an array of message objects"
    )
    kept: dict[str, Any] = {}
    system = body.get("system")
    messages = decode_plain(system, raw_messages)
    if messages is None:
        messages = _decode_messages(system, raw_messages, kept)
    config = body.get("toolConfig")
    tools = _decode_tools(config, kept)
    # A tuple, built once: the fields no canonical field took are what is left of these.
    consumed = _WITH_SYSTEM if isinstance(system, list) and system else _MESSAGES_ONLY
    model, fields = body_rest(body, consumed, "modelId")
    if "tools" in kept or tools:
        fields["toolConfig"] = (
            {key: value for key, value in config.items() if key != "tools"}
            if len(config) > 1
            else {}
        )
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def _decode_messages(
    system: Any, raw_messages: list[Any], kept: dict[str, Any]
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if isinstance(system, list) and system:
        parts, _, skeleton = decode_blocks(system, "/system")
        if not is_trivial(skeleton):
            kept["system"] = skeleton
        messages.append({"role": "system", "content": plain_text(parts, skeleton)})
    for i, raw in enumerate(raw_messages):
        pointer = f"/messages/{i}"
        msg = as_dict(raw, pointer, "a message object")
        role = msg.get("role")
        if role == "assistant":
            messages.append(decode_assistant(msg, pointer))
        elif role == "user":
            messages.extend(
                decode_user(msg, pointer, messages[-1]["role"] if messages else None)
            )
        else:
            fail(
                f"{pointer}/role",
                "user or assistant (the system prompt is the top-level `system` field)",
            )
    return messages


def encode_request(request: Request) -> dict[str, Any]:
    """A Converse request body from canonical terms (`modelId` only when the request names a model)."""
    return guarded(_encode_request, request)


def _encode_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, WIRE)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["modelId"] = request.model
    # Parts a tool result cannot hold are moved, dropped or named in a text first (placement.py; the notes say
    # which).
    placed = place(request.messages, WIRE).messages
    # A kept system layout is restored by the long way.
    plain = None if "system" in kept else encode_plain(placed)
    if plain is None:
        body["messages"] = [
            encode_turn(side, group, f"/messages/{i}")
            for i, (side, group) in enumerate(turns(placed, WIRE))
        ]
        system = [
            part
            for m in placed
            if m.get("role") == "system"
            for part in parts_of(m.get("content"))
        ]
        if system:
            body["system"] = encode_blocks(system, [], kept.get("system"), "/system")
    else:
        blocks, body["messages"] = plain
        if blocks:
            body["system"] = blocks
    fields = dict(kept.get("fields") or {})
    config = (
        fields.pop("toolConfig") if isinstance(fields.get("toolConfig"), dict) else {}
    )
    if request.tools or "tools" in kept:
        body["toolConfig"] = {"tools": _encode_tools(request.tools, kept), **config}
    elif config:
        body["toolConfig"] = config
    recorded = kept.get("fields")
    changed = portable(request, WIRE, _settings(recorded) if recorded else {})
    if changed:
        if "inferenceConfig" in fields:
            body["inferenceConfig"] = fields["inferenceConfig"]
        _apply_settings(changed, body)
    return fill(body, fields) if fields else body


def _error(body: Mapping[str, Any]) -> ProviderError:
    message = body.get("message", body.get("Message", ""))
    kind = body.get("__type")
    if isinstance(kind, str):
        kind = aws_error_name(kind) or None
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
    message = decode_assistant(msg, "/output/message")
    kept: dict[str, Any] = {}
    if set(output) != {"message"}:
        kept["output"] = {
            key: value for key, value in output.items() if key != "message"
        }
    if msg.get("role") != "assistant":
        kept["role"] = msg.get("role")
    counts = Counts(WIRE, "usage")
    usage = _usage(body.get("usage"), counts)
    consumed = {"output", "stopReason"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    raw = body.get("stopReason")
    done = _finish(raw, bool(message.get("tool_calls")))
    if done is None:
        consumed.discard("stopReason")
    fields = {key: value for key, value in body.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    extras = note_finish({WIRE: kept}, WIRE, "stopReason", raw, done, _FINISH)
    return Response(message, done, usage, None, None, counts.noted(extras))


def encode_response(response: Response) -> dict[str, Any]:
    """A Converse response body from canonical terms (the wire has no id or model field)."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    message = encode_turn("assistant", [response.message], "/output/message")
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
