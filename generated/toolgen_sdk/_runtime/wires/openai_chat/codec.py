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
from functools import partial
from types import MappingProxyType
from typing import Any

from .. import structured
from ..canonical import ProviderError, Request, Response
from ..export import (
    export_checked,
    plain_chat_definition,
    plain_chat_function,
    plain_definitions,
)
from ..helpers import (
    Counts,
    as_dict,
    as_list,
    body_rest,
    decoded_request,
    extras_of,
    fail,
    fill,
    finish,
    guarded,
    note_finish,
    number,
    portable,
    stop_list,
    usage_total,
)
from .dialects import WIRES, Dialect, dialect_of
from .messages import (
    decode_assistant,
    decode_message,
    decode_plain,
    encode_message,
    encode_messages,
)
from .parts import note_shared_ids
from .plain import encode_plain

__all__ = [
    "WIRES",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
]

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
    body: Mapping[str, Any], d: Dialect, kept: dict[str, Any]
) -> list[dict[str, Any]]:
    if isinstance(body.get("tools"), list):
        raw = body["tools"]
        read_plain = plain_definitions(raw, plain_chat_definition)
        if read_plain is not None:
            return read_plain  # a list of plain entries, read in one pass
        tools = [
            _tool_definition(fn) for fn in map(_function_of, raw) if fn is not None
        ]
        if (
            not tools
            or not all(map(plain_chat_function, raw))
            and _encode_tools(tools, d, None) != raw
        ):
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
    tools: list[dict[str, Any]], d: Dialect, kept: Mapping[str, Any] | None
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


def _settings(fields: Mapping[str, Any], d: Dialect) -> dict[str, Any]:
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
    fmt = structured.from_chat(fields.get(d.key("response_format")))
    if fmt is not None:
        out["response_format"] = fmt
    if type(fields.get(d.key(_seed_key(d)))) is int:
        out["seed"] = fields[d.key(_seed_key(d))]
    if d.wire != "mistral" and isinstance(fields.get("user"), str):
        out["user"] = fields["user"]
    return out


def _seed_key(d: Dialect) -> str:
    return "random_seed" if d.wire == "mistral" else "seed"


def _apply_settings(
    settings: Mapping[str, Any], body: dict[str, Any], d: Dialect
) -> None:
    if "max_tokens" in settings:
        # OpenAI's reasoning models refuse max_tokens; the compatible vendors and Mistral take it.
        body[
            d.key("max_completion_tokens" if d.wire == "openai-chat" else "max_tokens")
        ] = settings["max_tokens"]
    for key in ("temperature", "top_p", "stop", "parallel_tool_calls"):
        if key in settings:
            body[d.key(key)] = settings[key]
    if "response_format" in settings:
        body[d.key("response_format")] = structured.to_chat(settings["response_format"])
    if "seed" in settings:
        body[d.key(_seed_key(d))] = settings["seed"]
    if "user" in settings and d.wire != "mistral":
        # Mistral takes no end-user id; the conversion notes say so.
        body["user"] = settings["user"]
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


# The counts the wire always sends, each to its canonical name.
_COUNTS = (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"))


def _usage(raw: Any, d: Dialect, counts: Counts | None = None) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    take = (counts or Counts(d.wire, "usage")).take
    usage: dict[str, Any] = {}
    for key, name in (*_COUNTS, ("total_tokens", "total_tokens")):
        value = take(raw, d.key(key), required=key != "total_tokens")
        if value is not None:
            usage[name] = value
    details_key = d.key("prompt_tokens_details")
    prompt_details = raw.get(details_key)
    prompt_details = prompt_details if isinstance(prompt_details, dict) else {}
    cached = take(prompt_details, d.key("cached_tokens"), within=details_key)
    for vendor_key in ("prompt_cache_hit_tokens", "num_cached_tokens", "cached_tokens"):
        if cached is None and vendor_key in raw:
            cached = take(raw, vendor_key)
    if cached is not None:
        usage["cache_read_tokens"] = cached
    written = take(prompt_details, d.key("cache_write_tokens"), within=details_key)
    if written is not None:
        usage["cache_write_tokens"] = written
    details_key = d.key("completion_tokens_details")
    completion_details = raw.get(details_key)
    if isinstance(completion_details, dict):
        reasoning = take(
            completion_details, d.key("reasoning_tokens"), within=details_key
        )
        if reasoning is not None:
            usage["reasoning_tokens"] = reasoning
    return usage or None


def _usage_body(usage: Mapping[str, Any], d: Dialect) -> dict[str, Any]:
    body = {d.key(key): usage[name] for key, name in _COUNTS if name in usage}
    total = usage_total(usage)
    if total is not None:
        body[d.key("total_tokens")] = total
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


def finish_of(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    if raw is None:
        return None
    reason = _FINISH.get(raw, "stop") if isinstance(raw, str) else "stop"
    if reason == "stop" and has_calls:
        reason = "tool_calls"
    return finish(reason, raw)


def _finish_value(
    done: Mapping[str, Any], has_calls: bool, d: Dialect, legacy: bool, native: bool
) -> Any:
    """The raw finish value when this wire sent it and it still says the same; else this wire's word for it."""
    raw = done.get("raw") if native else None
    if (
        raw is not None
        and (finish_of(raw, has_calls) or {}).get("reason") == done["reason"]
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
    d = dialect_of(wire)
    body = as_dict(body, "", "a request body object")
    raw_messages = as_list(
        body.get("messages"), "/messages", "`messages`, an array of message objects"
    )
    messages = decode_plain(raw_messages, d)
    if messages is None:
        messages = _decode_messages(raw_messages, d, wire)
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


def _decode_messages(
    raw_messages: list[Any], d: Dialect, wire: str
) -> list[dict[str, Any]]:
    """The long way: every message read, and what canonical messages have no place for kept."""
    pending: list[tuple[str, str]] = []
    return [
        decode_message(raw, f"/messages/{i}", d, f"{wire}/messages/{i}", pending)
        for i, raw in enumerate(raw_messages)
    ]


def _encode_messages(
    messages: list[dict[str, Any]], d: Dialect
) -> list[dict[str, Any]]:
    """The long way: every message's kept parts, call entries, made-up ids and fields restored."""
    return encode_messages(messages, d)


def encode_request(request: Request, wire: str = "openai-chat") -> dict[str, Any]:
    """A chat-completions request body from canonical terms."""
    return guarded(partial(_encode_request, wire=wire), request)


def _encode_request(request: Request, wire: str = "openai-chat") -> dict[str, Any]:
    d = dialect_of(wire)
    kept = extras_of({"extras": request.extras}, wire)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    messages = encode_plain(request.messages, d)
    if messages is None:
        messages = _encode_messages(request.messages, d)
    body["messages"] = messages
    if request.tools or "tools" in kept:
        body["functions" if kept.get("tools_key") == "functions" else "tools"] = (
            _encode_tools(request.tools, d, kept)
        )
    fields = kept.get("fields")
    _apply_settings(
        portable(request, wire, _settings(fields, d) if fields else {}), body, d
    )
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
    d = dialect_of(wire)
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
    message = decode_assistant(
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
    counts = Counts(wire, "usage")
    usage = _usage(body.get("usage"), d, counts)
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
    raw = choice.get(finish_key)
    done = finish_of(raw, bool(message.get("tool_calls")))
    noted = counts.noted(
        note_finish({wire: kept}, wire, finish_key, raw, done, _FINISH)
    )
    return Response(
        message,
        done,
        usage,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        note_shared_ids(noted, message, choice.get("message"), d),
    )


def encode_response(response: Response, wire: str = "openai-chat") -> dict[str, Any]:
    """A chat completion body from canonical terms."""
    return guarded(partial(_encode_response, wire=wire), response)


def _encode_response(response: Response, wire: str = "openai-chat") -> dict[str, Any]:
    d = dialect_of(wire)
    kept = extras_of({"extras": response.extras}, wire)
    # A response decoded from this wire carries its own body fields; one from elsewhere gets the fields that
    # clients require of a chat completion (`created` is unknown then, so 0).
    native = wire in response.extras
    message = encode_message(response.message, "/message", d)
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
