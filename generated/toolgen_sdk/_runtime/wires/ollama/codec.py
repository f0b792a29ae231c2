# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Ollama's native /api/chat bodies to and from canonical terms: arguments as objects, `thinking`, `done_reason`.

A full response body, which is also what a stream aggregator hands to `decode_response` (the NDJSON stream's
last line, with the message contents of all lines joined): `{"model", "created_at", "message": {"role":
"assistant", "content", "thinking"?, "tool_calls"?: [{"id"?, "function": {"index"?, "name", "arguments":
{...}}}]}, "done": true, "done_reason", "prompt_eval_count", "eval_count", ...durations}`. Errors are
`{"error": "<text>"}`. `done_reason` is `stop` even when the model called tools; the canonical reason is then
`tool_calls`. Usage is `prompt_eval_count` / `eval_count`; no total is reported.

Calls may come without an id: each then gets `stable_call_id(scope, position, name, arguments)` (scope
`ollama/messages/<index>` in a request, `ollama/<created_at>` in a response), listed in `generated_ids` and left
out again when encoding. A tool message without `tool_call_id` answers the oldest unanswered call (of the same
name when it carries `tool_name`).

What `extras["ollama"]` holds on a canonical message (only the keys that are needed):
- `fields`: message keys the canonical model has no place for. `calls`: per tool call, `{"rest": {...}}` with
  keys the encoder does not produce (`function.index`, `type`) or `{"raw": {...}}`.
- `generated_ids`: ids made up for calls (and results) the wire sent without one. `omit_content`: no `content`
  key. `empty_thinking`: `thinking: ""` was sent.
Request and Response extras hold `{"ollama": {"fields": {...}}}` with the body keys outside the canonical model,
plus `tools` (the wire's tool list when re-exporting would spell it differently).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import structured
from ..call_ids import stable_call_id
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
    args_object,
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
    keep_entry,
    note_finish,
    portable,
    restore,
    sampling_settings,
    stop_value,
)
from ..media import inline
from ..placement import place
from .plain import decode_plain, encode_plain

WIRE = "ollama"

_FINISH = MappingProxyType(
    {"stop": "stop", "length": "length", "load": "stop", "unload": "stop"}
)
_FINISH_OUT = MappingProxyType(
    {"stop": "stop", "tool_calls": "stop", "length": "length"}
)


# ---- calls ----


def _call(
    raw: Any, pointer: str, scope: str, index: int, generated: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    entry = as_dict(raw, pointer, "a tool call object")
    fn = as_dict(
        entry.get("function"),
        f"{pointer}/function",
        "a `function` object with name and arguments",
    )
    name = as_str(
        fn.get("name"), f"{pointer}/function/name", "the function name as a string"
    )
    value = fn.get("arguments", {})
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
    return call, keep_entry(entry, _call_block(call, generated, pointer))


def _call_block(
    call: Mapping[str, Any], generated: list[str], pointer: str
) -> dict[str, Any]:
    block: dict[str, Any] = {}
    if call["id"] not in generated:
        block["id"] = call["id"]
    fn = call["function"]
    block["function"] = {
        "name": fn["name"],
        "arguments": args_object(fn["arguments"], f"{pointer}/function/arguments"),
    }
    return block


def _same_call(
    raw: Mapping[str, Any], call: Mapping[str, Any], generated: list[str]
) -> bool:
    fn = raw.get("function")
    if not isinstance(fn, dict):
        return False
    value = fn.get("arguments", {})
    arguments = value if isinstance(value, str) else args_text(value)
    same_id = raw.get("id") == call["id"] or (
        call["id"] in generated and not raw.get("id")
    )
    return (
        same_id
        and fn.get("name") == call["function"]["name"]
        and arguments == call["function"]["arguments"]
    )


# ---- messages ----


def _decode_message(
    raw: Any, pointer: str, scope: str, pending: list[tuple[str, str]]
) -> dict[str, Any]:
    msg = as_dict(raw, pointer, "a message object")
    role = msg.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        fail(f"{pointer}/role", "one of system, user, assistant or tool")
    kept: dict[str, Any] = {}
    consumed = {"role", "content"}
    content = msg.get("content", _ABSENT)
    if content is _ABSENT:
        kept["omit_content"] = True
        content = ""
    elif not isinstance(content, str):
        fail(f"{pointer}/content", "the content as a string")
    parts: list[dict[str, Any]] = []
    if isinstance(msg.get("thinking"), str):
        consumed.add("thinking")
        if msg["thinking"]:
            parts.append({"type": "reasoning", "text": msg["thinking"]})
        else:
            kept["empty_thinking"] = True
    if content:
        parts.append({"type": "text", "text": content})
    images = msg.get("images")
    if isinstance(images, list) and all(isinstance(image, str) for image in images):
        consumed.add("images")
        # Typed by their first bytes, as Ollama reads them: the wire has no field for a type.
        parts.extend(dict(inline({"type": "image", "data": i})) for i in images)
    out: dict[str, Any] = {"role": role}
    if role == "assistant":
        out["content"] = assistant_content(parts)
        _decode_calls(msg, pointer, scope, out, kept, consumed, pending)
    else:
        if role == "tool":
            _decode_result(msg, pointer, scope, out, kept, consumed, pending)
        # A tool message's images are read back as its parts too: the encoder sends them there (placement.py).
        out["content"] = (
            content if len(parts) <= 1 and "images" not in consumed else parts
        )
    fields = {key: value for key, value in msg.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _decode_calls(
    msg: Mapping[str, Any],
    pointer: str,
    scope: str,
    out: dict[str, Any],
    kept: dict[str, Any],
    consumed: set[str],
    pending: list[tuple[str, str]],
) -> None:
    raw_calls = msg.get("tool_calls")
    if not isinstance(raw_calls, list):
        return
    consumed.add("tool_calls")
    generated: list[str] = []
    pairs = [
        _call(raw, f"{pointer}/tool_calls/{j}", scope, j, generated)
        for j, raw in enumerate(raw_calls)
    ]
    out["tool_calls"] = [call for call, _ in pairs]
    pending.extend((call["function"]["name"], call["id"]) for call, _ in pairs)
    if any(entry for _, entry in pairs):
        kept["calls"] = [entry for _, entry in pairs]
    if generated:
        kept["generated_ids"] = generated


def _decode_result(
    msg: Mapping[str, Any],
    pointer: str,
    scope: str,
    out: dict[str, Any],
    kept: dict[str, Any],
    consumed: set[str],
    pending: list[tuple[str, str]],
) -> None:
    """Pair a tool result with its call: by `tool_call_id` when sent, else the oldest open call (of its name)."""
    name = msg.get("tool_name")
    if isinstance(name, str):
        consumed.add("tool_name")
    call_id = msg.get("tool_call_id")
    if isinstance(call_id, str) and call_id:
        consumed.add("tool_call_id")
        pending[:] = [entry for entry in pending if entry[1] != call_id]
    else:
        match = next(
            (
                i
                for i, (called, _) in enumerate(pending)
                if not isinstance(name, str) or called == name
            ),
            None,
        )
        call_id = (
            pending.pop(match)[1]
            if match is not None
            else stable_call_id(scope, 0, str(name or ""), "")
        )
        kept["generated_ids"] = [call_id]
    out["tool_call_id"] = call_id
    if isinstance(name, str):
        out["name"] = name


def _encode_message(msg: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    role = msg.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        fail(f"{pointer}/role", "one of system, user, assistant or tool")
    kept = extras_of(msg, WIRE)
    out: dict[str, Any] = {"role": role}
    parts = parts_of(msg.get("content"))
    text = "".join(part["text"] for part in parts if part.get("type") == "text")
    if text or not kept.get("omit_content"):
        out["content"] = text
    reasoning = [
        part.get("text") or "" for part in parts if part.get("type") == "reasoning"
    ]
    if reasoning or kept.get("empty_thinking"):
        out["thinking"] = "".join(reasoning)
    # An image given as a base64 `data:` URL is sent as its data too; one by any other URL has no place here.
    inlined = (inline(part) for part in parts if part.get("type") == "image")
    images = [part["data"] for part in inlined if isinstance(part.get("data"), str)]
    if images:
        out["images"] = images
    if role == "assistant" and msg.get("tool_calls") is not None:
        _put_calls(out, msg["tool_calls"], kept, pointer)
    if role == "tool":
        if msg["tool_call_id"] not in (kept.get("generated_ids") or ()):
            out["tool_call_id"] = msg["tool_call_id"]
        if "name" in msg:
            out["tool_name"] = msg["name"]
    fields = kept.get("fields")
    return fill(out, fields) if fields else out


def _put_calls(
    out: dict[str, Any],
    calls: list[dict[str, Any]],
    kept: Mapping[str, Any],
    pointer: str,
) -> None:
    generated = kept.get("generated_ids") or []
    entries = kept.get("calls")
    if entries is not None and len(entries) != len(calls):
        entries = None
    out["tool_calls"] = [
        _restore_call(
            call,
            entries[j] if entries else None,
            generated,
            f"{pointer}/tool_calls/{j}",
        )
        for j, call in enumerate(calls)
    ]


def _restore_call(
    call: dict[str, Any],
    entry: Mapping[str, Any] | None,
    generated: list[str],
    pointer: str,
) -> Any:
    return restore(
        _call_block(call, generated, pointer),
        entry,
        lambda raw: _same_call(raw, call, generated),
    )


def _encode_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The long way: every message's kept fields, call entries and made-up ids restored."""
    return [_encode_message(msg, f"/messages/{i}") for i, msg in enumerate(messages)]


# ---- tools, usage ----


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
        "ollama",
        plain_chat_function,
        plain_chat_definition,
    )


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    return encode_tools(tools, kept, _tool_definition, "ollama")


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fmt = structured.from_ollama(fields.get("format"))
    if fmt is not None:
        out["response_format"] = fmt
    options = fields.get("options")
    if not isinstance(options, dict):
        return out
    sampling_settings(options, out, "num_predict", "top_p", "stop")
    if type(options.get("seed")) is int:
        out["seed"] = options["seed"]
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    # Ollama has no tool choice; the other settings are model options.
    options = dict(body.get("options") or {})
    for key, wire_key in (
        ("max_tokens", "num_predict"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
    ):
        if key in settings:
            options[wire_key] = settings[key]
    if "stop" in settings:
        options["stop"] = settings["stop"]
    if "seed" in settings:
        options["seed"] = settings["seed"]
    if options:
        body["options"] = options
    fmt = settings.get("response_format")
    spelled = structured.to_ollama(fmt) if fmt is not None else None
    if spelled is not None:
        body["format"] = spelled


# The body's count keys, each to its canonical count.
_COUNTS = (("prompt_eval_count", "input_tokens"), ("eval_count", "output_tokens"))


def _usage(body: Mapping[str, Any], counts: Counts) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    for key, name in _COUNTS:
        value = counts.take(body, key, required=True)
        if value is not None:
            usage[name] = value
    return usage


def _finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    return finish_from(_FINISH, raw, has_calls)


# ---- bodies ----


def decode_request(body: Any) -> Request:
    """An /api/chat request body in canonical terms."""
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
    """The long way: every message read, what canonical messages have no place for kept, results paired."""
    pending: list[tuple[str, str]] = []
    return [
        _decode_message(raw, f"/messages/{i}", f"{WIRE}/messages/{i}", pending)
        for i, raw in enumerate(raw_messages)
    ]


def encode_request(request: Request) -> dict[str, Any]:
    """An /api/chat request body from canonical terms."""
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
    changed = portable(request, WIRE, _settings(fields) if fields else {})
    if changed:
        if fields and "options" in fields:
            body["options"] = fields["options"]
        _apply_settings(changed, body)
    return fill(body, fields) if fields else body


def decode_response(body: Any) -> Response | ProviderError:
    """An /api/chat response (or the error body sent instead) in canonical terms."""
    body = as_dict(body, "", "a response body object")
    if "error" in body and "message" not in body:
        error = body["error"]
        text = (
            error
            if isinstance(error, str)
            else str(error.get("message", error) if isinstance(error, dict) else error)
        )
        return ProviderError(WIRE, text, raw=dict(body))
    msg = as_dict(body.get("message"), "/message", "the assistant message object")
    message = _decode_message(
        msg, "/message", f"{WIRE}/{body.get('created_at', '')}", []
    )
    if message["role"] != "assistant":
        fail("/message/role", "assistant")
    kept: dict[str, Any] = {}
    counts = Counts(WIRE, "")
    usage = _usage(body, counts)
    consumed = {"message", "done_reason"}
    # A count sent as no count stays in the body's fields, as sent.
    consumed.update(key for key, name in _COUNTS if name in usage)
    raw = body.get("done_reason")
    done = _finish(raw, bool(message.get("tool_calls")))
    if done is None:
        consumed.discard("done_reason")
    model = body.get("model")
    if isinstance(model, str):
        consumed.add("model")
    fields = {key: value for key, value in body.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    return Response(
        message,
        done,
        usage or None,
        model if isinstance(model, str) else None,
        None,
        counts.noted(
            note_finish({WIRE: kept}, WIRE, "done_reason", raw, done, _FINISH)
        ),
    )


def encode_response(response: Response) -> dict[str, Any]:
    """An /api/chat response body (the stream's final line, whole) from canonical terms."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    native = WIRE in response.extras
    body: dict[str, Any] = {}
    if response.model is not None:
        body["model"] = response.model
    if not native:
        body["created_at"] = "1970-01-01T00:00:00Z"
    body["message"] = _encode_message(response.message, "/message")
    if not native:
        body["done"] = response.finish is not None
    if response.finish is not None:
        body["done_reason"] = stop_value(response, WIRE, _FINISH, _FINISH_OUT, "stop")
    usage = response.usage or {}
    for key, name in _COUNTS:
        if name in usage:
            body[key] = usage[name]
    fields = kept.get("fields")
    return fill(body, fields) if fields else body


def encode_error(error: ProviderError) -> dict[str, Any]:
    """The error body this wire sends; the recorded body itself when the error came from this wire."""
    if error.wire == WIRE and isinstance(error.raw, dict):
        return error.raw
    return {"error": error.message}
