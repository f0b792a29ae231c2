# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Google Interactions API bodies (`google-interactions`) to and from canonical terms.

A full response body, which is also what a stream aggregator hands to `decode_response`: `{"id", "status",
"model", "steps": [...], "usage": {"total_input_tokens", "total_output_tokens", "total_thought_tokens",
"total_tokens", ...}}`, steps being `{"type": "thought", "signature", "summary"?}`, `{"type": "model_output",
"content": [{"type": "text", "text"}]}`, `{"type": "function_call", "id", "name", "arguments": {...},
"signature"?}` and built-in tool steps; older bodies list `outputs` (flat content items) instead of `steps`.
`status: "requires_action"` means the model called tools. A request's `input` is a string, content items (one
user turn) or steps, `user_input` steps holding content items and `function_result` items.

What `extras["google-interactions"]` holds on a canonical message (only the keys that are needed):
- `blocks`: the wire order of steps (or content items), as `{"part": e}`, `{"call": e}`, `{"keep": step}`
  (steps canonical content has no place for, as sent) or `{"group": rest, "parts": [e...]}` for a
  `model_output` step; `e` is `{"rest": {...}}` with keys the encoder does not produce (a call's `signature`)
  or `{"raw": item}`.
- `signed`: the reasoning parts here came from this wire; reasoning from other wires is not sent to it.
- `step` / `content_string`: other keys of a `user_input` step, and its content sent as a string.
- tool messages: `result_json` (the result was JSON, kept as its text), `fields` (other keys of the result).
- `joined` / `split` (see `base.turns`).
Request and Response extras hold `{"google-interactions": {"fields": {...}}}` with the body keys outside the
canonical model, plus `input_string` / `input_content` (the request's `input` was a string / bare content
items), `tools` (the wire's tool list when re-exporting would spell it differently), `key: "outputs"` / `no_steps`
and `usage` (the wire's usage object when it reports more than canonical usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import structured
from ..canonical import ProviderError, Request, Response
from ..export import export_checked, named_entry, object_schema
from ..google_errors import array_error, status_body, status_error
from ..helpers import (
    Counts,
    as_dict,
    as_list,
    extras_of,
    fail,
    fill,
    finish,
    guarded,
    note_finish,
    portable,
    sampling_settings,
    usage_total,
)
from .plain import decode_plain, encode_plain
from .steps import (
    WIRE,
    ModelSteps,
    decode_input_steps,
    decode_user_input,
    encode_input_steps,
    encode_steps,
    is_content,
)

__all__ = [
    "WIRE",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
]

_STATUS = MappingProxyType(
    {
        "completed": "stop",
        "requires_action": "tool_calls",
        "failed": "error",
        "incomplete": "length",
        # "The interaction was halted because the token budget was exceeded."
        "budget_exceeded": "length",
        "cancelled": "error",
    }
)
# The statuses that say no finish yet (a background interaction), beside those `_STATUS` reads.
_STATUSES = frozenset({*_STATUS, "in_progress", "queued"})
_STATUS_OUT = MappingProxyType(
    {
        "stop": "completed",
        "tool_calls": "requires_action",
        "length": "incomplete",
        "error": "failed",
        "content_filter": "failed",
    }
)


# ---- tools, settings, usage, status ----


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
    tool["inputSchema"] = entry.get("parameters", {"type": "object", "properties": {}})
    return tool


_TOOL_KEYS = frozenset({"type", "name", "parameters"})
_DESCRIBED_TOOL_KEYS = _TOOL_KEYS | {"description"}


def _plain_tool(entry: Any) -> bool:
    """An entry the export writes back as it is: a function of a name, a description and an object schema."""
    return (
        named_entry(entry, _TOOL_KEYS, _DESCRIBED_TOOL_KEYS)
        and entry["type"] == "function"
        and object_schema(entry["parameters"])
    )


def _plain_definition(entry: Any) -> dict[str, Any] | None:
    """The definition of an entry `_plain_tool` tells plain, as `_tool_definition` reads it; None for any other."""
    # One pass, keys told by count and lookup: this runs for every tool of every decoded request.
    if type(entry) is not dict:
        return None
    name, schema = entry.get("name"), entry.get("parameters")
    if (
        type(name) is not str
        or type(schema) is not dict
        or schema.get("type") != "object"
        or entry.get("type") != "function"
    ):
        return None
    count = len(entry)
    if count == 3:
        return {"name": name, "inputSchema": schema}
    description = entry.get("description")
    if count != 4 or type(description) is not str or not description:
        return None
    return {"name": name, "description": description, "inputSchema": schema}


def _plain_definitions(raw: list[Any]) -> list[dict[str, Any]] | None:
    tools = []
    for entry in raw:
        tool = _plain_definition(entry)
        if tool is None:
            return None
        tools.append(tool)
    return tools


def _decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        return []
    # A list of plain entries is what exporting its tools gives: nothing is exported to find that out.
    plain = _plain_definitions(raw) if raw else None
    if plain is not None:
        return plain
    tools = [tool for tool in map(_tool_definition, raw) if tool is not None]
    if _encode_tools(tools, None) != raw:
        kept["tools"] = raw
    return tools


def _encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    raw = kept.get("tools") if kept else None
    if (
        raw is not None
        and [t for t in map(_tool_definition, raw) if t is not None] == tools
    ):
        return list(raw)
    out = export_checked(tools, "google-interactions")
    if raw is not None:
        out.extend(entry for entry in raw if _tool_definition(entry) is None)
    return out


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    config = fields.get("generation_config")
    if isinstance(config, dict):
        sampling_settings(config, out, "max_output_tokens", "top_p", "stop_sequences")
        choice = config.get("tool_choice")
        if isinstance(choice, str) and choice in ("auto", "any", "none", "validated"):
            out["tool_choice"] = {"any": "required", "validated": "auto"}.get(
                choice, choice
            )
        if type(config.get("seed")) is int:
            out["seed"] = config["seed"]
    fmt = structured.from_interactions(fields)
    if fmt is not None:
        out["response_format"] = fmt
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
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
    if "seed" in settings:
        config["seed"] = settings["seed"]
    if config:
        body["generation_config"] = config
    if "response_format" in settings:
        body.update(structured.to_interactions(settings["response_format"]))


def _usage(raw: Any, counts: Counts | None = None) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    counts = counts or Counts(WIRE, "usage")
    take = counts.take
    prompt = take(raw, "total_input_tokens", required=True)
    # The canonical output counts thoughts too; an output count not sent is 0 (the wire leaves zeros out).
    output = take(raw, "total_output_tokens", spoils="output_tokens")
    thoughts = take(raw, "total_thought_tokens", spoils="output_tokens")
    usage: dict[str, Any] = {}
    if prompt is not None:
        usage["input_tokens"] = prompt
    if (
        prompt is not None or output is not None or thoughts is not None
    ) and not counts.failed("total_output_tokens", "total_thought_tokens"):
        usage["output_tokens"] = (output or 0) + (thoughts or 0)
    total = take(raw, "total_tokens")
    if total is not None:
        usage["total_tokens"] = total
    cached = take(raw, "total_cached_tokens")
    if cached is not None:
        usage["cache_read_tokens"] = cached
    if thoughts is not None:
        usage["reasoning_tokens"] = thoughts
    return usage or None


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    thoughts = usage.get("reasoning_tokens")
    body: dict[str, Any] = {}
    total = usage_total(usage)
    if total is not None:
        body["total_tokens"] = total
    if "input_tokens" in usage:
        body["total_input_tokens"] = usage["input_tokens"]
    if "output_tokens" in usage:
        body["total_output_tokens"] = usage["output_tokens"] - (thoughts or 0)
    if "cache_read_tokens" in usage:
        body["total_cached_tokens"] = usage["cache_read_tokens"]
    if thoughts is not None:
        body["total_thought_tokens"] = thoughts
    return body


def _status_finish(raw: Any, has_calls: bool) -> dict[str, Any] | None:
    reason = _STATUS.get(raw) if isinstance(raw, str) else None
    if reason is None:
        return None
    if reason == "stop" and has_calls:
        reason = "tool_calls"
    return finish(reason, raw)


# ---- bodies ----


def decode_request(body: Any) -> Request:
    """An interaction request body in canonical terms."""
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
        # The first step tells most bodies apart without a generator over them all.
        first = steps[0] if steps else None
        if (
            isinstance(first, dict)
            and is_content(first)
            and all(isinstance(step, dict) and is_content(step) for step in steps)
        ):
            # Bare content blocks: one user turn.
            kept["input_content"] = True
            messages.extend(decode_user_input(steps, "/input", None))
        else:
            plain = decode_plain(steps, messages[-1]["role"] if messages else None)
            if plain is None:
                decode_input_steps(steps, messages)
            else:
                messages.extend(plain)
    tools = _decode_tools(body.get("tools"), kept)
    model = body.get("model")
    consumed = {"input", "tools"}
    if isinstance(system, str):
        consumed.add("system_instruction")
    if isinstance(model, str):
        consumed.add("model")
    fields = {k: v for k, v in body.items() if k not in consumed}
    if fields:
        kept["fields"] = fields
    extras: dict[str, Any] = {WIRE: kept}
    settings = _settings(fields)
    if settings:
        extras["settings"] = settings
    return Request(messages, tools, model if isinstance(model, str) else None, extras)


def encode_request(request: Request) -> dict[str, Any]:
    """An interaction request body from canonical terms."""
    return guarded(_encode_request, request)


def _encode_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, WIRE)
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
        body["input"] = encode_input_steps(conversation)[0]["content"]
    else:
        steps = encode_plain(request.messages)
        body["input"] = encode_input_steps(request.messages) if steps is None else steps
    if request.tools or "tools" in kept:
        body["tools"] = _encode_tools(request.tools, kept)
    fields = kept.get("fields")
    changed = portable(request, WIRE, _settings(fields) if fields else {})
    if changed:
        if fields and "generation_config" in fields:
            body["generation_config"] = fields["generation_config"]
        _apply_settings(changed, body)
    return fill(body, fields) if fields else body


def decode_response(body: Any) -> Response | ProviderError:
    """An interaction (or the error body sent instead) in canonical terms."""
    error = array_error(body, WIRE)
    if error is not None:
        return error
    body = as_dict(body, "", "an interaction object")
    if "error" in body and body.get("status") in (None, "failed"):
        return status_error(body, WIRE)
    key = "steps" if "steps" in body else "outputs"
    steps = ModelSteps()
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
    counts = Counts(WIRE, "usage")
    usage = _usage(body.get("usage"), counts)
    consumed = {key, "status"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    response_id, model = body.get("id"), body.get("model")
    consumed.update(
        k
        for k, value in (("id", response_id), ("model", model))
        if isinstance(value, str)
    )
    status = body.get("status")
    done = _status_finish(status, bool(message.get("tool_calls")))
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
        counts.noted(
            note_finish({WIRE: kept}, WIRE, "status", status, done, _STATUSES)
        ),
    )


def encode_response(response: Response) -> dict[str, Any]:
    """An interaction body from canonical terms."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    native = WIRE in response.extras
    body: dict[str, Any] = {} if native else {"object": "interaction"}
    if response.id is not None:
        body["id"] = response.id
    if response.finish is not None:
        raw = response.finish.get("raw") if WIRE in response.extras else None
        has_calls = bool(response.message.get("tool_calls"))
        fits = (_status_finish(raw, has_calls) or {}).get("reason") == response.finish[
            "reason"
        ]
        body["status"] = (
            raw if fits else _STATUS_OUT.get(response.finish["reason"], "completed")
        )
    if response.usage is not None:
        raw_usage = kept.get("usage")
        fits = raw_usage is not None and _usage(raw_usage) == response.usage
        body["usage"] = raw_usage if fits else _usage_body(response.usage)
    key = kept.get("key", "steps")
    if not kept.get("no_steps"):
        body[key] = encode_steps(response.message, f"/{key}", key == "outputs")
    if response.model is not None:
        body["model"] = response.model
    fields = kept.get("fields")
    return fill(body, fields) if fields else body


def encode_error(error: ProviderError) -> Any:
    """The error body this wire sends; the recorded body itself when the error came from this wire."""
    return status_body(error, WIRE)
