# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Captured content in the GenAI conventions' JSON shape: canonical messages as input and output messages.

The conventions record `gen_ai.input.messages`, `gen_ai.output.messages` and `gen_ai.system_instructions` as
messages of `role` and `parts`, each part typed: `text` and `reasoning` (`content`), `tool_call` (`id`, `name`,
`arguments`), `tool_call_response` (`id`, `response`), `blob` / `uri` / `file` (`modality`, `mime_type`, and
`content`, `uri` or `file_id`); a part of any other type goes as it is (their GenericPart). Canonical messages
(wires/canonical.py) are turned into that shape here: content as a string or parts, `tool_calls` of `{id, function:
{name, arguments}}`, tool messages answering a `tool_call_id`. Tool arguments and results that are JSON text of
an object or array go as the value they hold, as the conventions ask. Nothing a message holds makes these
functions raise: a field of an unexpected type is left out or passed on as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..wires.media import audio_format, inline

# Wires whose requests carry the system prompt apart from the conversation: there it is the conventions'
# gen_ai.system_instructions; elsewhere a system message is part of the input messages.
SYSTEM_APART = frozenset(
    {"anthropic", "gemini", "bedrock-converse", "google-interactions"}
)
# The output messages' finish_reason values (their FinishReason) where canonical spells one otherwise.
_FINISH = {"tool_calls": "tool_call"}
_AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_MODALITIES = ("image", "audio", "video")


def structured(value: Any) -> Any:
    """JSON text of an object or an array as the value it holds; anything else as it is."""
    if not isinstance(value, str) or not value.lstrip().startswith(("{", "[")):
        return value
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return parsed if isinstance(parsed, (dict, list)) else value


def _modality(kind: Any, media_type: str | None) -> str:
    if kind in _MODALITIES:
        return str(kind)
    head = (media_type or "").split("/", 1)[0]
    return head if head in _MODALITIES else "document"


def _media(kind: Any, part: Mapping[str, Any]) -> dict[str, Any]:
    """An image, audio or file part as a blob (inline data), uri or file (a provider's file id) part."""
    part = inline(part)
    media_type = part.get("media_type")
    media_type = media_type if isinstance(media_type, str) and media_type else None
    if kind == "audio" and media_type is None:
        media_type = _AUDIO_TYPES.get(audio_format(part) or "")
    out: dict[str, Any] = {"modality": _modality(kind, media_type)}
    if media_type is not None:
        out["mime_type"] = media_type
    for key, shape, field in (
        ("data", "blob", "content"),
        ("url", "uri", "uri"),
        ("file_id", "file", "file_id"),
    ):
        value = part.get(key)
        if isinstance(value, str):
            return {"type": shape, **out, field: value}
    return {**part, "type": str(kind)}


def content_part(part: Any) -> dict[str, Any]:
    """One canonical content part in the conventions' shape."""
    if not isinstance(part, Mapping):
        return {"type": "text", "content": str(part)}
    kind = part.get("type")
    if kind in ("text", "reasoning"):
        text = part.get("text")
        out: dict[str, Any] = {
            "type": kind,
            "content": text if isinstance(text, str) else "",
        }
        if kind == "reasoning" and part.get("redacted") is True:
            out["redacted"] = (
                True  # the model's reasoning was sent encrypted: there is no text to record
            )
        return out
    if kind in ("image", "audio", "video", "file"):
        return _media(kind, part)
    return {**part, "type": kind if isinstance(kind, str) and kind else "unknown"}


def content_parts(content: Any) -> list[dict[str, Any]]:
    """A canonical content value (a string, parts, or None) as the conventions' parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    if not isinstance(content, list):
        return [{"type": "text", "content": str(content)}]
    return [content_part(part) for part in content]


def _call(call: Any) -> dict[str, Any]:
    call = call if isinstance(call, Mapping) else {}
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    name = function.get("name")
    out: dict[str, Any] = {
        "type": "tool_call",
        "name": name if isinstance(name, str) else "",
    }
    if isinstance(call.get("id"), str):
        out["id"] = call["id"]
    if "arguments" in function:
        out["arguments"] = structured(function["arguments"])
    return out


def tool_response(content: Any) -> Any:
    """A tool message's content as the response it records: text (or JSON text of an object) as a value,
    anything richer as parts."""
    if isinstance(content, list) and all(
        isinstance(part, Mapping) and part.get("type") == "text" for part in content
    ):
        content = "".join(str(part.get("text", "")) for part in content)
    if content is None or isinstance(content, str):
        return structured(content)
    return content_parts(content)


def message(canonical: Any) -> dict[str, Any]:
    """One canonical message as a message of the conventions."""
    canonical = canonical if isinstance(canonical, Mapping) else {}
    role = canonical.get("role")
    role = role if isinstance(role, str) and role else "user"
    if role == "tool":
        part: dict[str, Any] = {"type": "tool_call_response"}
        if isinstance(canonical.get("tool_call_id"), str):
            part["id"] = canonical["tool_call_id"]
        part["response"] = tool_response(canonical.get("content"))
        return {"role": "tool", "parts": [part]}
    parts = content_parts(canonical.get("content"))
    calls = canonical.get("tool_calls")
    if isinstance(calls, list):
        parts.extend(_call(call) for call in calls)
    out: dict[str, Any] = {"role": role, "parts": parts}
    if isinstance(canonical.get("name"), str):
        out["name"] = canonical["name"]
    return out


def input_messages(
    messages: list[Any], wire: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system instructions, input messages) of a request: the system prompt goes apart on the wires that send
    it apart, and stays a `system` message of the conversation on the others."""
    apart = wire in SYSTEM_APART
    instructions: list[dict[str, Any]] = []
    out = []
    for canonical in messages:
        if (
            apart
            and isinstance(canonical, Mapping)
            and canonical.get("role") == "system"
        ):
            instructions.extend(content_parts(canonical.get("content")))
        else:
            out.append(message(canonical))
    return instructions, out


def output_messages(canonical: Any, finish_reason: str | None) -> list[dict[str, Any]]:
    """A response's message as the output messages (one per choice: the runtime keeps the first)."""
    out = message(
        {**(canonical if isinstance(canonical, Mapping) else {}), "role": "assistant"}
    )
    if finish_reason is not None:
        out["finish_reason"] = _FINISH.get(finish_reason, finish_reason)
    return [out]
