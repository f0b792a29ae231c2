# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini generateContent bodies (`gemini`) to and from canonical terms.

A full response body, which is also what a stream aggregator hands to `decode_response`:
`{"candidates": [{"content": {"role": "model", "parts": [...]}, "finishReason", ...}], "usageMetadata":
{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount"?, "totalTokenCount"}, "modelVersion",
"responseId"}`, a part being `{"text"}`, `{"text", "thought": true, "thoughtSignature"?}`, `{"functionCall":
{"name", "args": {...}}, "thoughtSignature"?}`, `{"inlineData"}` or `{"fileData"}`. With `enum-encoding=int`
`finishReason` is a number; the canonical `raw` holds it as a decimal string and it is sent back as a number.
Function calls carry no id: each gets `stable_call_id(scope, position, name, arguments)` (scope
`gemini/<responseId>` for a response, `gemini/contents/<turn>` for a request), listed in `generated_ids` so that
encoding leaves it out again. A `functionResponse` without an id answers the oldest unanswered call of the same
name in the turns before it. Usage: `output_tokens` counts thoughts too (the wire counts them apart).

What `extras["gemini"]` holds on a canonical message (only the keys that are needed):
- `blocks`: the wire order of parts, as `{"part": e}`, `{"call": e}` or `{"keep": part}` (code execution and
  other parts canonical content has no place for, as sent); `e` is `{"rest": {...}}` with keys the encoder does
  not produce (a call's `thoughtSignature`, a text part's signature) or `{"raw": part}` (a call with no `args` key, snake_case keys).
- `signed`: the reasoning parts here came from this wire; reasoning from other wires is not sent to Gemini.
- `generated_ids`: call ids made up for calls (and results) the wire sent without one.
- tool messages: `response_key` (the single key wrapping a string result, when not `output`/`error`) or
  `response_json` (the result object is the content, as JSON text), `fields` / `part_fields` (other keys of the
  `functionResponse` and of its part).
- `joined` / `split` (see `base.turns`); `turn` (other keys of the wire turn, such as `role: "function"`).
Request and Response extras hold `{"gemini": {"fields": {...}}}` with the body keys outside the canonical model,
plus `model_in_body` (the request named its model in the body, not only in the URL), `tools` (the wire's tool
list when re-exporting would spell it differently), `system`, `candidate` / `content` (other keys of the first
candidate and its content) and `usage` (the wire's usage object when it reports more than canonical usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .. import structured
from ..canonical import ProviderError, Request, Response
from ..google_errors import array_error, status_body, status_error
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
    portable,
    sampling_settings,
    turns,
    usage_total,
)
from ..placement import place
from .contents import (
    WIRE,
    decode_model_turn,
    decode_system,
    decode_user_turn,
    either_case,
    encode_model_turn,
    encode_system,
    encode_user_turn,
)
from .plain import decode_plain, decode_plain_system, encode_plain
from .tools import decode_tools, encode_tools

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


# ---- settings, usage, finish ----


_MODES = MappingProxyType(
    {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}
)


def _settings(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    config = either_case(fields, "generationConfig", "generation_config")
    if isinstance(config, dict):
        sampling_settings(config, out, "maxOutputTokens", "topP", "stopSequences")
        # snake_case spellings win where a body has both; most bodies have neither, and skip the second read.
        if (
            "max_output_tokens" in config
            or "top_p" in config
            or "stop_sequences" in config
        ):
            sampling_settings(
                config, out, "max_output_tokens", "top_p", "stop_sequences"
            )
        if "responseMimeType" in config or "response_mime_type" in config:
            fmt = structured.from_gemini(config)
            if fmt is not None:
                out["response_format"] = fmt
        if type(config.get("seed")) is int:
            out["seed"] = config["seed"]
    tool_config = either_case(fields, "toolConfig", "tool_config")
    calling = (
        either_case(tool_config, "functionCallingConfig", "function_calling_config")
        if isinstance(tool_config, dict)
        else None
    )
    if (
        isinstance(calling, dict)
        and isinstance(calling.get("mode"), str)
        and calling["mode"] in _MODES
    ):
        names = either_case(calling, "allowedFunctionNames", "allowed_function_names")
        single = (
            calling["mode"] == "ANY"
            and isinstance(names, list)
            and len(names) == 1
            and isinstance(names[0], str)
        )
        out["tool_choice"] = {"name": names[0]} if single else _MODES[calling["mode"]]
    return out


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
    if "response_format" in settings:
        config.update(structured.to_gemini(settings["response_format"]))
    if "seed" in settings:
        config["seed"] = settings["seed"]
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


def _usage(raw: Any, counts: Counts | None = None) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    counts = counts or Counts(WIRE, "usageMetadata")
    take = counts.take
    prompt = take(raw, "promptTokenCount", required=True)
    # The canonical output counts thoughts too; an output count not sent is 0 (the wire leaves zeros out).
    output = take(raw, "candidatesTokenCount", spoils="output_tokens")
    thoughts = take(raw, "thoughtsTokenCount", spoils="output_tokens")
    usage: dict[str, Any] = {}
    if prompt is not None:
        usage["input_tokens"] = prompt
    if (
        prompt is not None or output is not None or thoughts is not None
    ) and not counts.failed("candidatesTokenCount", "thoughtsTokenCount"):
        usage["output_tokens"] = (output or 0) + (thoughts or 0)
    total = take(raw, "totalTokenCount")
    if total is not None:
        usage["total_tokens"] = total
    cached = take(raw, "cachedContentTokenCount")
    if cached is not None:
        usage["cache_read_tokens"] = cached
    if thoughts is not None:
        usage["reasoning_tokens"] = thoughts
    return usage or None


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    thoughts = usage.get("reasoning_tokens")
    body: dict[str, Any] = {}
    if "input_tokens" in usage:
        body["promptTokenCount"] = usage["input_tokens"]
    if "output_tokens" in usage:
        body["candidatesTokenCount"] = usage["output_tokens"] - (thoughts or 0)
    total = usage_total(usage)
    if total is not None:
        body["totalTokenCount"] = total
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


# ---- bodies ----


def decode_request(body: Any) -> Request:
    """A generateContent request body in canonical terms."""
    body = as_dict(body, "", "a request body object")
    contents = as_list(
        body.get("contents"), "/contents", "`contents`, an array of turns"
    )
    kept: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    system = decode_plain_system(body.get("systemInstruction"))
    if system is None:
        system = decode_system(body, kept)
    if system is not None:
        messages.append(system)
    plain = decode_plain(contents, messages[-1]["role"] if messages else None)
    if plain is None:
        _decode_contents(contents, messages)
    else:
        messages.extend(plain)
    tools = decode_tools(body.get("tools"), kept)
    consumed = {"contents", "tools", "systemInstruction", "system_instruction"}
    model, fields = body_rest(body, consumed)
    if model is not None:
        kept["model_in_body"] = True
    return decoded_request(
        WIRE, messages, tools, model, fields, kept, _settings(fields)
    )


def _decode_contents(contents: list[Any], messages: list[dict[str, Any]]) -> None:
    pending: list[tuple[str, str]] = []
    for i, raw in enumerate(contents):
        pointer = f"/contents/{i}"
        turn = as_dict(raw, pointer, "a turn object with `role` and `parts`")
        if turn.get("role") == "model":
            message = decode_model_turn(turn, pointer, f"{WIRE}/contents/{i}")
            pending.extend(
                (call["function"]["name"], call["id"])
                for call in message.get("tool_calls", ())
            )
            messages.append(message)
        else:
            before = messages[-1]["role"] if messages else None
            messages.extend(
                decode_user_turn(turn, pointer, f"{WIRE}/contents/{i}", pending, before)
            )


def encode_request(request: Request) -> dict[str, Any]:
    """A generateContent request body from canonical terms; the model goes in the URL, in the body only if it was."""
    return guarded(_encode_request, request)


def _encode_request(request: Request) -> dict[str, Any]:
    kept = extras_of({"extras": request.extras}, WIRE)
    body: dict[str, Any] = {}
    if request.model is not None and kept.get("model_in_body"):
        body["model"] = request.model
    # Parts a tool result cannot hold are moved, dropped or named in a text first (placement.py; the notes say
    # which).
    placed = place(request.messages, WIRE).messages
    # A kept system layout is restored by the long way.
    plain = None if "system" in kept else encode_plain(placed)
    if plain is None:
        encode_system(placed, kept, body)
        body["contents"] = _encode_contents(placed)
    else:
        system, contents = plain
        if system:
            body["systemInstruction"] = {"parts": system}
        body["contents"] = contents
    if request.tools or "tools" in kept:
        body["tools"] = encode_tools(request.tools, kept)
    fields = kept.get("fields")
    changed = portable(request, WIRE, _settings(fields) if fields else {})
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


def _encode_contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The long way: every turn's kept parts, fields, ids and grouping restored."""
    names = {
        call["id"]: call["function"]["name"]
        for message in messages
        for call in message.get("tool_calls") or ()
    }
    contents = []
    for i, (side, group) in enumerate(turns(messages, WIRE)):
        pointer = f"/contents/{i}"
        contents.append(
            encode_model_turn(group[0], pointer)
            if side == "assistant"
            else encode_user_turn(group, names, pointer)
        )
    return contents


def decode_response(body: Any, *, cut: bool = False) -> Response | ProviderError:
    """A generateContent response (or the error body sent instead) in canonical terms. A body without candidates
    is a response only when promptFeedback says the prompt was blocked, or when it is `cut`: a stream that ended
    before any candidate came (its status says so), of which the rest (usage, model) is read."""
    error = array_error(body, WIRE)
    if error is not None:
        return error
    body = as_dict(body, "", "a response body object")
    if "error" in body and "candidates" not in body:
        return status_error(body, WIRE)
    kept: dict[str, Any] = {}
    extras: dict[str, Any] = {WIRE: kept}
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
        message = decode_model_turn(
            as_dict(content, "/candidates/0/content", "a content object"),
            "/candidates/0/content",
            scope,
        )
        raw = candidate.get("finishReason")
        done = _finish(raw, bool(message.get("tool_calls")))
        # A number is read as its decimal string, as the table spells it.
        raw = done["raw"] if done else raw
        note_finish(extras, WIRE, "finishReason", raw, done, _FINISH)
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
        # The API sends no candidates only when the prompt itself was blocked, the reason in promptFeedback:
        # without one, the answer is missing, not empty.
        feedback = body.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if not isinstance(reason, str) and not cut:
            fail(
                "/candidates",
                "at least one candidate, or promptFeedback.blockReason saying why there is none",
            )
        message = {"role": "assistant", "content": None}
        kept["no_candidates"] = True
        done = finish("content_filter", reason) if isinstance(reason, str) else None
    counts = Counts(WIRE, "usageMetadata")
    usage = _usage(body.get("usageMetadata"), counts)
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
        counts.noted(extras),
    )


def encode_response(response: Response) -> dict[str, Any]:
    """A generateContent response body from canonical terms."""
    return guarded(_encode_response, response)


def _encode_response(response: Response) -> dict[str, Any]:
    kept = extras_of({"extras": response.extras}, WIRE)
    body: dict[str, Any] = {}
    fields = kept.get("fields") or {}
    if not kept.get("no_candidates") and "candidates" not in fields:
        candidate: dict[str, Any] = {}
        if not kept.get("no_content"):
            candidate["content"] = encode_model_turn(
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


def encode_error(error: ProviderError) -> Any:
    """The error body this wire sends; the recorded body itself when the error came from this wire."""
    return status_body(error, WIRE)
