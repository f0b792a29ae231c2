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
call's free-text `input` becomes the arguments as a JSON string value (`"\"SELECT ...\""`), so arguments stay
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

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .base import (
    ProviderError,
    Request,
    Response,
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
    finish,
    guarded,
    is_trivial,
    keep_entry,
    number,
    parts_of,
    portable,
    restore,
    signed_for,
    weave,
)

WIRE = "openai-responses"

_ASSISTANT_ITEMS = frozenset(("reasoning", "function_call", "custom_tool_call"))
_RESULT_ITEMS = frozenset(("function_call_output", "custom_tool_call_output"))
_INCOMPLETE = MappingProxyType(
    {"max_output_tokens": "length", "content_filter": "content_filter"}
)


# ---- content parts ----


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The canonical part for an input or output content part; None for parts canonical content has no place for."""
    kind = block.get("type")
    if kind in ("input_text", "output_text", "text") and isinstance(
        block.get("text"), str
    ):
        return {"type": "text", "text": block["text"]}
    if kind == "input_image" and isinstance(block.get("image_url"), str):
        part = {"type": "image", "url": block["image_url"]}
        if block.get("detail") in ("auto", "low", "high"):
            part["detail"] = block["detail"]
        return part
    if kind == "input_file":
        return _file_part(block)
    if kind == "input_audio":
        audio = block.get("input_audio")
        if isinstance(audio, dict) and isinstance(audio.get("data"), str):
            part = {"type": "audio", "data": audio["data"]}
            if isinstance(audio.get("format"), str):
                part["format"] = audio["format"]
            return part
    return None


def _file_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    part: dict[str, Any] = {"type": "file"}
    for wire_key, key in (
        ("file_id", "file_id"),
        ("file_url", "url"),
        ("filename", "filename"),
    ):
        if isinstance(block.get(wire_key), str):
            part[key] = block[wire_key]
    data = block.get("file_data")
    if isinstance(data, str):
        head, sep, payload = data.partition(",")
        if data.startswith("data:") and sep and head.endswith(";base64"):
            part["media_type"], part["data"] = head[5:-7], payload
        else:
            part["data"] = data
    return part if len(part) > 1 else None


def _part_block(
    part: Mapping[str, Any], pointer: str, text_type: str
) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": text_type, "text": part["text"]}
    if kind == "image":
        url = (
            part.get("url")
            or f"data:{part.get('media_type', 'image/png')};base64,{part.get('data', '')}"
        )
        block = {
            "type": "input_image",
            "image_url": url,
            "detail": part.get("detail", "auto"),
        }
        return block
    if kind == "file":
        block = {"type": "input_file"}
        if "file_id" in part:
            block["file_id"] = part["file_id"]
        if "url" in part:
            block["file_url"] = part["url"]
        if "data" in part:
            media = part.get("media_type")
            block["file_data"] = (
                f"data:{media};base64,{part['data']}" if media else part["data"]
            )
        if "filename" in part:
            block["filename"] = part["filename"]
        return block
    if kind == "audio":
        audio = {"data": part["data"]}
        if "format" in part:
            audio["format"] = part["format"]
        return {"type": "input_audio", "input_audio": audio}
    fail(pointer, "a text, image, file or audio part")


# ---- assistant items ----


def _reasoning_text(item: Mapping[str, Any]) -> str | None:
    for key, kind in (("summary", "summary_text"), ("content", "reasoning_text")):
        entries = item.get(key)
        if isinstance(entries, list) and entries:
            matching = [
                entry
                for entry in entries
                if isinstance(entry, dict) and entry.get("type") == kind
            ]
            texts = [
                entry["text"]
                for entry in matching
                if isinstance(entry.get("text"), str)
            ]
            if texts and len(texts) == len(matching):
                return "\n\n".join(texts)
    return None


def _reasoning_part(item: Mapping[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "reasoning"}
    text = _reasoning_text(item)
    if text is not None:
        part["text"] = text
    if isinstance(item.get("encrypted_content"), str):
        part["encrypted"] = item["encrypted_content"]
    return part


def _reasoning_item(part: Mapping[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning"}
    text = part.get("text")
    item["summary"] = [{"type": "summary_text", "text": text}] if text else []
    if "encrypted" in part:
        item["encrypted_content"] = part["encrypted"]
    return item


def _call(item: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    call_id = as_str(
        item.get("call_id"), f"{pointer}/call_id", "the call_id as a string"
    )
    name = as_str(item.get("name"), f"{pointer}/name", "the tool name as a string")
    if item.get("type") == "custom_tool_call":
        arguments = args_text(item.get("input", ""))
    else:
        value = item.get("arguments", "")
        arguments = value if isinstance(value, str) else args_text(value)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _call_item(call: Mapping[str, Any]) -> dict[str, Any]:
    fn = call["function"]
    return {
        "type": "function_call",
        "call_id": call["id"],
        "name": fn["name"],
        "arguments": fn["arguments"],
    }


def _same_call(raw: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    try:
        return _call(raw, "") == call
    except ValueError:
        return False


def _is_assistant_item(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    if isinstance(kind, str) and kind in _RESULT_ITEMS:
        return False
    if "role" in item and kind in (None, "message"):
        return bool(item["role"] == "assistant")
    return True


class _Run:
    """Consecutive assistant-side items, collected into one canonical assistant message."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.skeleton: list[dict[str, Any]] = []

    def add(self, item: dict[str, Any], pointer: str) -> None:
        kind = item.get("type")
        if kind == "reasoning":
            part = _reasoning_part(item)
            self.parts.append(part)
            self.skeleton.append({"part": keep_entry(item, _reasoning_item(part))})
        elif kind in ("function_call", "custom_tool_call"):
            call = _call(item, pointer)
            self.calls.append(call)
            self.skeleton.append({"call": keep_entry(item, _call_item(call))})
        elif "role" in item and kind in (None, "message"):
            self._add_message(item, pointer)
        else:
            self.skeleton.append({"keep": item})

    def _add_message(self, item: dict[str, Any], pointer: str) -> None:
        content = item.get("content")
        rest = {key: value for key, value in item.items() if key != "content"}
        if isinstance(content, str):
            self.parts.append({"type": "text", "text": content})
            self.skeleton.append(
                {"group": {"item": rest, "string": True}, "parts": [{}]}
            )
            return
        blocks = as_list(
            content, f"{pointer}/content", "content as a string or an array of parts"
        )
        parts = [_part(block) for block in blocks if isinstance(block, dict)]
        texts = [part for part in parts if part is not None and part["type"] == "text"]
        if len(texts) != len(blocks):
            self.skeleton.append({"keep": item})
            return
        entries = [
            keep_entry(block, _output_text(part))
            for block, part in zip(blocks, texts, strict=True)
        ]
        self.parts.extend(texts)
        self.skeleton.append({"group": {"item": rest}, "parts": entries})

    def message(self) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        if not is_trivial(self.skeleton):
            kept["blocks"] = self.skeleton
        if any(part["type"] == "reasoning" for part in self.parts):
            kept["signed"] = True
        out: dict[str, Any] = {
            "role": "assistant",
            "content": assistant_content(self.parts),
        }
        if self.calls:
            out["tool_calls"] = self.calls
        if kept:
            out["extras"] = {WIRE: kept}
        return out


def _output_text(part: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "output_text", "text": part["text"]}


def _encode_run(message: Mapping[str, Any], pointer: str, output: bool) -> list[Any]:
    kept = extras_of(message, WIRE)
    parts = parts_of(message.get("content"))
    if not signed_for(message, WIRE):
        parts = [part for part in parts if part.get("type") != "reasoning"]
    calls = message.get("tool_calls") or []

    def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        # Inside a message item (entry given) a text part is an output_text block; on its own it is a message item.
        if part.get("type") == "reasoning":
            return restore(
                _reasoning_item(part), entry, lambda raw: _reasoning_part(raw) == part
            )
        if entry is not None:
            return restore(_output_text(part), entry, lambda raw: _part(raw) == part)
        if part.get("type") != "text":
            fail(pointer, "text or reasoning parts in an assistant message")
        if output:
            text = {**_output_text(part), "annotations": []}
            return {
                "type": "message",
                "id": "",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        return {"role": "assistant", "content": part["text"]}

    def call_block(call: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
        return restore(_call_item(call), entry, lambda raw: _same_call(raw, call))

    def group_block(meta: Mapping[str, Any], blocks: list[Any]) -> Any:
        return {
            **meta["item"],
            "content": blocks[0]["text"] if meta.get("string") else blocks,
        }

    return weave(kept.get("blocks"), parts, calls, part_block, call_block, group_block)


# ---- input messages and results ----


def _decode_input_message(item: dict[str, Any], pointer: str) -> dict[str, Any]:
    role = item["role"]
    kept: dict[str, Any] = {}
    if role == "developer":
        kept["role"] = role
    elif role not in ("user", "system"):
        fail(f"{pointer}/role", "one of user, system, developer or assistant")
    content = item.get("content")
    if not isinstance(content, str):
        blocks = as_list(
            content, f"{pointer}/content", "content as a string or an array of parts"
        )
        parts: list[dict[str, Any]] = []
        skeleton: list[dict[str, Any]] = []
        for i, raw in enumerate(blocks):
            block = as_dict(raw, f"{pointer}/content/{i}", "a content part object")
            part = _part(block)
            if part is None:
                skeleton.append({"keep": block})
            else:
                parts.append(part)
                skeleton.append(
                    {
                        "part": keep_entry(
                            block, _part_block(part, pointer, "input_text")
                        )
                    }
                )
        if not is_trivial(skeleton):
            kept["parts"] = skeleton
        content = parts
    fields = {
        key: value for key, value in item.items() if key not in ("role", "content")
    }
    if fields:
        kept["fields"] = fields
    out: dict[str, Any] = {
        "role": "system" if role == "developer" else role,
        "content": content,
    }
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _encode_input_message(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kept = extras_of(message, WIRE)
    content = message.get("content", "")
    if not isinstance(content, str):
        parts = [part for part in content if part.get("type") != "reasoning"]

        def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
            block = _part_block(part, f"{pointer}/content", "input_text")
            return restore(block, entry, lambda raw: _part(raw) == part)

        content = weave(kept.get("parts"), parts, [], part_block, part_block)
    out = {"role": kept.get("role", message["role"]), "content": content}
    fields = kept.get("fields")
    return fill(out, fields) if fields else out


def _decode_result(item: dict[str, Any], pointer: str) -> dict[str, Any]:
    call_id = as_str(
        item.get("call_id"), f"{pointer}/call_id", "the call_id this output answers"
    )
    kept: dict[str, Any] = {}
    if item.get("type") == "custom_tool_call_output":
        kept["custom"] = True
    output = item.get("output", "")
    if not isinstance(output, str):
        blocks = as_list(
            output, f"{pointer}/output", "the output as a string or an array of parts"
        )
        parts = [
            part
            for part in (_part(block) for block in blocks if isinstance(block, dict))
            if part is not None
        ]
        if len(parts) != len(blocks):
            output = args_text(output)
            kept["output_json"] = True
        else:
            pairs = zip(blocks, parts, strict=True)
            entries = [
                keep_entry(block, _part_block(part, pointer, "input_text"))
                for block, part in pairs
            ]
            if any(entries):
                kept["parts"] = [{"part": entry} for entry in entries]
            output = parts
    fields = {
        key: value
        for key, value in item.items()
        if key not in ("type", "call_id", "output")
    }
    if fields:
        kept["fields"] = fields
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": output}
    if kept:
        out["extras"] = {WIRE: kept}
    return out


def _encode_result(message: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    kept = extras_of(message, WIRE)
    kind = "custom_tool_call_output" if kept.get("custom") else "function_call_output"
    content = message.get("content", "")
    if kept.get("output_json") and isinstance(content, str):
        output: Any = json.loads(content)
    elif isinstance(content, str):
        output = content
    else:

        def part_block(part: dict[str, Any], entry: Mapping[str, Any] | None) -> Any:
            return restore(
                _part_block(part, pointer, "input_text"),
                entry,
                lambda raw: _part(raw) == part,
            )

        output = weave(kept.get("parts"), list(content), [], part_block, part_block)
    item = {"type": kind, "call_id": message["tool_call_id"], "output": output}
    fields = kept.get("fields")
    return fill(item, fields) if fields else item


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


def _decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    return decode_tools(raw, kept, _tool_definition, "openai-responses")


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
    return out


def _apply_settings(settings: Mapping[str, Any], body: dict[str, Any]) -> None:
    # The Responses API takes no stop sequences; a `stop` setting has nowhere to go.
    if "max_tokens" in settings:
        body["max_output_tokens"] = settings["max_tokens"]
    for key in ("temperature", "top_p", "parallel_tool_calls"):
        if key in settings:
            body[key] = settings[key]
    choice = settings.get("tool_choice")
    if isinstance(choice, dict):
        body["tool_choice"] = {"type": "function", "name": choice["name"]}
    elif choice is not None:
        body["tool_choice"] = choice


def _count(value: Any) -> int | None:
    return value if type(value) is int else None


def _usage(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    prompt, output = _count(raw.get("input_tokens")), _count(raw.get("output_tokens"))
    if prompt is None or output is None:
        return None
    usage = {"input_tokens": prompt, "output_tokens": output}
    if _count(raw.get("total_tokens")) is not None:
        usage["total_tokens"] = raw["total_tokens"]
    details = raw.get("input_tokens_details")
    if isinstance(details, dict):
        for wire_key, key in (
            ("cached_tokens", "cache_read_tokens"),
            ("cache_write_tokens", "cache_write_tokens"),
        ):
            if _count(details.get(wire_key)) is not None:
                usage[key] = details[wire_key]
    details = raw.get("output_tokens_details")
    if (
        isinstance(details, dict)
        and _count(details.get("reasoning_tokens")) is not None
    ):
        usage["reasoning_tokens"] = details["reasoning_tokens"]
    return usage


def _usage_body(usage: Mapping[str, Any]) -> dict[str, Any]:
    # The Responses API always sends these detail counters and clients require them; unreported ones go as 0.
    details = {
        "cached_tokens": usage.get("cache_read_tokens", 0),
        "cache_write_tokens": usage.get("cache_write_tokens", 0),
    }
    return {
        "input_tokens": usage["input_tokens"],
        "input_tokens_details": details,
        "output_tokens": usage["output_tokens"],
        "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
        "total_tokens": usage.get(
            "total_tokens", usage["input_tokens"] + usage["output_tokens"]
        ),
    }


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


# ---- bodies ----


def _decode_input(items: list[Any], messages: list[dict[str, Any]]) -> None:
    """Input items as canonical messages: each run of assistant-side items makes one assistant message."""
    run: _Run | None = None
    for i, raw in enumerate(items):
        pointer = f"/input/{i}"
        item = as_dict(raw, pointer, "an input item object")
        if _is_assistant_item(item):
            run = run or _Run()
            run.add(item, pointer)
            continue
        if run is not None:
            messages.append(run.message())
            run = None
        if isinstance(item.get("type"), str) and item["type"] in _RESULT_ITEMS:
            messages.append(_decode_result(item, pointer))
        else:
            messages.append(_decode_input_message(item, pointer))
    if run is not None:
        messages.append(run.message())


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
        _decode_input(
            as_list(raw_input, "/input", "`input`, a string or an array of items"),
            messages,
        )
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
    items: list[Any] = []
    for i, message in enumerate(request.messages):
        pointer = f"/input/{i}"
        role = message.get("role")
        if role == "system" and extras_of(message, WIRE).get("instructions"):
            body["instructions"] = message["content"]
        elif role == "assistant":
            items.extend(_encode_run(message, pointer, False))
        elif role == "tool":
            items.append(_encode_result(message, pointer))
        else:
            items.append(_encode_input_message(message, pointer))
    plain = (
        len(items) == 1
        and items[0].get("role") == "user"
        and isinstance(items[0].get("content"), str)
    )
    body["input"] = items[0]["content"] if kept.get("input_string") and plain else items
    if request.tools or "tools" in kept:
        body["tools"] = _encode_tools(request.tools, kept)
    fields = kept.get("fields")
    _apply_settings(portable(request, WIRE, _settings(fields or {})), body)
    return fill(body, fields) if fields else body


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
    run = _Run()
    for i, raw in enumerate(
        as_list(body.get("output"), "/output", "`output`, an array of items")
    ):
        run.add(as_dict(raw, f"/output/{i}", "an output item object"), f"/output/{i}")
    message = run.message()
    kept: dict[str, Any] = {}
    usage = _usage(body.get("usage"))
    consumed = {"output", "status"}
    if usage is not None:
        consumed.add("usage")
        if _usage_body(usage) != body["usage"]:
            kept["usage"] = body["usage"]
    done = _finish(
        body.get("status"),
        body.get("incomplete_details"),
        bool(message.get("tool_calls")),
    )
    if done is None:
        consumed.discard("status")
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
        {WIRE: kept},
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
    body["output"] = _encode_run(response.message, "/output", True)
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
