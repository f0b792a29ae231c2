# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenAI Responses API bodies to and from canonical terms: input/output items, reasoning items, custom tool calls.

A full response body, which is also what a stream aggregator hands to `decode_response` (the `response` of
`response.completed`, with the items of the `response.output_item.done` events as `output`): `{"id", "object":
"response", "status": "completed" | "incomplete" | "failed", "model", "output": [items], "usage": {"input_tokens",
"output_tokens", "total_tokens", "input_tokens_details": {"cached_tokens"}, "output_tokens_details":
{"reasoning_tokens"}}, ...}`, items being `{"type": "reasoning", "id", "summary": [...], "encrypted_content"?}`,
`{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text", "annotations"}]}`,
`{"type": "function_call", "id", "call_id", "name", "arguments": <JSON text>, "status"}`, `{"type":
"custom_tool_call", "call_id", "name", "input": <free text>}` and built-in tool items. A `failed` response with an
`error` object, or an `{"error": {...}}` body, decodes to a ProviderError. `status` is `completed` even when the
model called tools; the canonical reason is then `tool_calls`.

Canonical mapping: the output items (or a run of assistant-side input items) make one assistant message. A
reasoning item is a reasoning part: `text` from its summary (or its `reasoning_text` content), `encrypted` from
`encrypted_content`. A call's canonical id is its `call_id` (the item `id`, `fc_...`, is kept aside). A custom tool
call's free-text `input` becomes the arguments as a JSON string value (`""SELECT ...""`), so arguments stay
JSON text. `instructions` is a system message.

What `extras["openai-responses"]` holds on a canonical message (only the keys that are needed):
- `blocks`: the wire order of the items, as `{"part": e}` (a reasoning item), `{"group": {"item": rest},
  "parts": [e...]}` (an assistant message item and its text parts), `{"call": e}` or `{"keep": item}` (built-in
  tool calls, `program` items, item references: anything canonical content has no place for, as sent); `e` is
  `{"rest": {...}}` with keys the encoder does not produce (item ids, `status`, `caller`, `annotations`) or
  `{"raw": item}` for a spelling it does not produce (custom tool calls, reasoning summaries).
- `signed`: the encrypted reasoning here was issued by OpenAI; reasoning from other wires is not sent.
- `parts` (user content entries), `fields` (other keys of an input message or `function_call_output` item),
  `role: "developer"`, `instructions: true` (this system message is the `instructions` field), `custom: true`
  (a `custom_tool_call_output`).
Request and Response extras hold `{"openai-responses": {"fields": {...}}}` with the body keys outside the canonical
model, plus `tools` (the wire's tool list when re-exporting would spell it differently), `input_string` and
`usage` (the wire's usage object when it reports more than canonical usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import structured
from ..canonical import ProviderError, Request, Response
from ..export import decode_tools, encode_tools
from ..helpers import (
    UNKNOWN_FINISH,
    Counts,
    as_dict,
    as_list,
    body_rest,
    decoded_request,
    extras_of,
    fill,
    finish,
    guarded,
    note_finish,
    number,
    portable,
    usage_total,
)
from ..openai_chat.parts import note_shared_ids
from ..placement import place
from .items import (
    WIRE,
    AssistantRun,
    decode_input,
    encode_input_message,
    encode_result,
    encode_run,
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

_INCOMPLETE = MappingProxyType(
    {"max_output_tokens": "length", "content_filter": "content_filter"}
)
# Every response status the API documents; in_progress and queued (a background response) say no finish yet.
_STATUSES = frozenset(
    {"completed", "incomplete", "failed", "cancelled", "in_progress", "queued"}
)


# ---- tools, usage, finish ----


def _tool_definition(entry: Any) -> dict[str, Any] | None:
    if (
        not isinstance(entry, dict)
        or entry.get("type") != "function"
        or not isinstance(entry.get("name"), str)
    ):
        return None
    tool: dict[str, Any] = {"name": entry["name"]}
    if isinstance(entry.get("description"), str):
        tool["description"] = entry["description"]
    tool["inputSchema"] = entry.get("parameters") or {}
    if isinstance(entry.get("strict"), bool):
        tool["strict"] = entry["strict"]
    return tool


def _plain_definition(entry: Any) -> dict[str, Any] | None:
    """The definition of an entry the export writes back as it is (a function with a name, a description, an
    object schema and `strict: false`, nothing else), as `_tool_definition` reads it; None for any other entry.
    A strict one may have been rewritten for strict mode, so it takes the long way."""
    # Keys told by count and lookup, not a key view compared: this runs for every tool of every decoded request.
    if (
        type(entry) is not dict
        or entry.get("type") != "function"
        or entry.get("strict") is not False
    ):
        return None
    name, schema = entry.get("name"), entry.get("parameters")
    if (
        type(name) is not str
        or type(schema) is not dict
        or schema.get("type") != "object"
    ):
        return None
    count = len(entry)
    if count == 4:
        return {"name": name, "inputSchema": schema, "strict": False}
    description = entry.get("description")
    if count != 5 or type(description) is not str or not description:
        return None
    return {
        "name": name,
        "description": description,
        "inputSchema": schema,
        "strict": False,
    }


def _plain_tool(entry: Any) -> bool:
    """An entry the export writes back as it is (see `_plain_definition`)."""
    return _plain_definition(entry) is not None


def _decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    return decode_tools(
        raw,
        kept,
        _tool_definition,
        "openai-responses",
        _plain_tool,
        _plain_definition,
    )


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    return encode_tools(tools, kept, _tool_definition, "openai-responses")


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if type(fields.get("max_output_tokens")) is int:
        out["max_tokens"] = fields["max_output_tokens"]
    for key in ("temperature", "top_p"):
        if number(fields.get(key)):
            out[key] = fields[key]
    choice = fields.get("tool_choice")
    if choice in ("auto", "none", "required"):
        out["tool_choice"] = choice
    elif (
        isinstance(choice, dict)
        and choice.get("type") == "function"
        and isinstance(choice.get("name"), str)
    ):
        out["tool_choice"] = {"name": choice["name"]}
    if isinstance(fields.get("parallel_tool_calls"), bool):
        out["parallel_tool_calls"] = fields["parallel_tool_calls"]
    fmt = structured.from_responses(fields.get("text"))
    if fmt is not None:
        out["response_format"] = fmt
    if isinstance(fields.get("user"), str):
        out["user"] = fields["user"]
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    # The Responses API takes no stop sequences; a `stop` setting has nowhere to go.
    if "max_tokens" in settings:
        body["max_output_tokens"] = settings["max_tokens"]
    for key in ("temperature", "top_p", "parallel_tool_calls", "user"):
        if key in settings:
            body[key] = settings[key]
    if "response_format" in settings:
        text = dict(body.get("text") or {})
        text["format"] = structured.to_responses(settings["response_format"])
        body["text"] = text
    choice = settings.get("tool_choice")
    if isinstance(choice, dict):
        body["tool_choice"] = {"type": "function", "name": choice["name"]}
    elif choice is not None:
        body["tool_choice"] = choice


def _usage(raw: Any, counts: Counts | None = None) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    counts = counts or Counts(WIRE, "usage")
    take = counts.take
    usage: dict[str, Any] = {}
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        value = take(raw, key, required=key != "total_tokens")
        if value is not None:
            usage[key] = value
    details = raw.get("input_tokens_details")
    if isinstance(details, dict):
        for wire_key, key in (
            ("cached_tokens", "cache_read_tokens"),
            ("cache_write_tokens", "cache_write_tokens"),
        ):
            value = take(details, wire_key, within="input_tokens_details")
            if value is not None:
                usage[key] = value
    details = raw.get("output_tokens_details")
    if isinstance(details, dict):
        value = take(details, "reasoning_tokens", within="output_tokens_details")
        if value is not None:
            usage["reasoning_tokens"] = value
    return usage or None


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    # The Responses API always sends these detail counters and clients require them; unreported ones go as 0.
    details = {
        "cached_tokens": usage.get("cache_read_tokens", 0),
        "cache_write_tokens": usage.get("cache_write_tokens", 0),
    }
    body: dict[str, Any] = {}
    if "input_tokens" in usage:
        body["input_tokens"] = usage["input_tokens"]
    body["input_tokens_details"] = details
    if "output_tokens" in usage:
        body["output_tokens"] = usage["output_tokens"]
    body["output_tokens_details"] = {
        "reasoning_tokens": usage.get("reasoning_tokens", 0)
    }
    total = usage_total(usage)
    if total is not None:
        body["total_tokens"] = total
    return body


def _finish(status: Any, details: Any, has_calls: bool) -> dict[str, Any] | None:
    if status == "completed":
        return finish("tool_calls" if has_calls else "stop", status)
    if status == "incomplete":
        reason = details.get("reason") if isinstance(details, dict) else None
        return finish(
            _INCOMPLETE.get(reason, "length") if isinstance(reason, str) else "length",
            status,
        )
    if status in ("failed", "cancelled"):
        return finish("error", status)
    return None


def _note_incomplete(
    extras: dict[str, Any], body: dict[str, Any], done: dict[str, Any] | None
) -> None:
    """An incomplete response whose reason the table does not know, or that gives none (no incomplete_details, or
    no reason in it), is read as `length`, a guess: a note says so, as for any finish value the table lacks."""
    details = body.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if reason is not None:
        note_finish(
            extras, WIRE, "incomplete_details.reason", reason, done, _INCOMPLETE
        )
        return
    if "incomplete_details" not in body:
        given = "no incomplete_details"
    elif details is None:
        given = "incomplete_details null"
    elif not isinstance(details, dict):
        text = repr(details)
        text = text if len(text) <= 80 else f"{text[:77]}..."
        given = f"incomplete_details {text}, no object"
    elif "reason" not in details:
        given = "incomplete_details without a reason"
    else:
        given = "incomplete_details.reason null"
    read = (done or {}).get("reason")
    note = {
        "type": UNKNOWN_FINISH,
        "message": f"{WIRE} sent status 'incomplete' with {given}, so no reason why: read as {read!r}",
        # The value sent where the reason should be: incomplete_details when it is no object.
        "raw": None if isinstance(details, dict) else details,
    }
    extras["notes"] = [*extras.get("notes", ()), note]


# ---- bodies ----


def decode_request(body: Any) -> Request:
    """A Responses API request body in canonical terms."""
    body = as_dict(body, "", "a request body object")
    kept: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        messages.append(
            {
                "role": "system",
                "content": instructions,
                "extras": {WIRE: {"instructions": True}},
            }
        )
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        kept["input_string"] = True
        messages.append({"role": "user", "content": raw_input})
    else:
        items = as_list(raw_input, "/input", "`input`, a string or an array of items")
        plain = decode_plain(items)
        if plain is None:
            decode_input(items, messages)
        else:
            messages.extend(plain)
    tools = _decode_tools(body.get("tools"), kept)
    consumed = {"input"}
    if isinstance(body.get("tools"), list):
        consumed.add("tools")
    if isinstance(instructions, str):
        consumed.add("instructions")
    model, fields = body_rest(body, consumed)
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def encode_request(request: Request) -> dict[str, Any]:
    """A Responses API request body from canonical terms."""
    return guarded(_encode_request, request)


def _encode_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, WIRE)
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    items = encode_plain(request.messages)
    if items is None:
        items = _encode_input(request.messages, body)
    plain = (
        len(items) == 1
        and items[0].get("role") == "user"
        and isinstance(items[0].get("content"), str)
    )
    body["input"] = items[0]["content"] if kept.get("input_string") and plain else items
    if request.tools or "tools" in kept:
        body["tools"] = _encode_tools(request.tools, kept)
    fields = kept.get("fields")
    _apply_settings(portable(request, WIRE, _settings(fields) if fields else {}), body)
    return fill(body, fields) if fields else body


def _encode_input(messages: list[dict[str, Any]], body: dict[str, Any]) -> list[Any]:
    """The long way: every item's kept parts, fields and layout restored; kept instructions go into `body`."""
    items: list[Any] = []
    # Parts an item cannot hold are moved or dropped first (placement.py; the conversion notes say which).
    placed = place(messages, WIRE)
    for i, message in enumerate(placed.messages):
        pointer = placed.pointer(i).replace("/messages/", "/input/", 1)
        role = message.get("role")
        if role == "system" and extras_of(message, WIRE).get("instructions"):
            body["instructions"] = message["content"]
        elif role == "assistant":
            items.extend(encode_run(message, pointer, False))
        elif role == "tool":
            items.append(encode_result(message, pointer))
        else:
            items.append(encode_input_message(message, pointer))
    return items


def _error(body: Mapping[str, Any], error: Any) -> ProviderError:
    if not isinstance(error, dict):
        return ProviderError(WIRE, str(error), raw=dict(body))
    code = error.get("code")
    kind = error.get("type")
    return ProviderError(
        WIRE,
        str(error.get("message", "")),
        type=kind if isinstance(kind, str) else None,
        code=None if code is None else str(code),
        raw=dict(body),
    )


def decode_response(body: Any) -> Response | ProviderError:
    """A Responses API response (or the error body sent instead) in canonical terms."""
    body = as_dict(body, "", "a response body object")
    if "output" not in body and body.get("error") is not None:
        return _error(body, body["error"])
    if body.get("status") == "failed" and isinstance(body.get("error"), dict):
        return _error(body, body["error"])
    run = AssistantRun()
    for i, raw in enumerate(
        as_list(body.get("output"), "/output", "`output`, an array of items")
    ):
        run.add(as_dict(raw, f"/output/{i}", "an output item object"), f"/output/{i}")
    message = run.message()
    kept: dict[str, Any] = {}
    counts = Counts(WIRE, "usage")
    usage = _usage(body.get("usage"), counts)
    consumed = {"output", "status"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    status, details = body.get("status"), body.get("incomplete_details")
    done = _finish(status, details, bool(message.get("tool_calls")))
    if done is None:
        consumed.discard("status")
    extras = note_finish({WIRE: kept}, WIRE, "status", status, done, _STATUSES)
    if status == "incomplete":
        _note_incomplete(extras, body, done)
    note_shared_ids(counts.noted(extras), message)
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
        done,
        usage,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        extras,
    )


def encode_response(response: Response) -> dict[str, Any]:
    """A Responses API response body from canonical terms."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    native = WIRE in response.extras
    fields = kept.get("fields") or {}
    # Clients require these of a Response; a response from another wire may not know them.
    body: dict[str, Any] = (
        {} if native else {"id": "", "object": "response", "created_at": 0, "model": ""}
    )
    if response.id is not None:
        body["id"] = response.id
    if response.finish is not None:
        raw = response.finish.get("raw") if WIRE in response.extras else None
        has_calls = bool(response.message.get("tool_calls"))
        fits = (_finish(raw, fields.get("incomplete_details"), has_calls) or {}).get(
            "reason"
        ) == response.finish["reason"]
        status = (
            raw
            if fits
            else {"length": "incomplete", "error": "failed"}.get(
                response.finish["reason"], "completed"
            )
        )
        body["status"] = status
    if response.model is not None:
        body["model"] = response.model
    body["output"] = encode_run(response.message, "/output", True)
    if response.usage is not None:
        raw_usage = kept.get("usage")
        fits = raw_usage is not None and _usage(raw_usage) == response.usage
        body["usage"] = raw_usage if fits else _usage_body(response.usage)
    if not native:
        body.update({"parallel_tool_calls": True, "tool_choice": "auto", "tools": []})
    return fill(body, fields) if fields else body


def encode_error(error: ProviderError) -> dict[str, Any]:
    """The error body this wire sends; the recorded body itself when the error came from this wire."""
    if error.wire == WIRE and isinstance(error.raw, dict):
        return error.raw
    return {
        "error": {
            "message": error.message,
            "type": error.type,
            "param": None,
            "code": error.code,
        }
    }
