# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Chat-completions messages to and from canonical messages: system and user, assistant with its reasoning and calls, tool results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..call_ids import stable_call_id
from ..canonical import parts_of
from ..helpers import (
    _ABSENT,
    args_text,
    as_dict,
    as_list,
    as_str,
    assistant_content,
    extras_of,
    fail,
    fill,
    keep_entry,
    restore,
)
from ..placement import place
from .dialects import Dialect
from .parts import call_block, decode_call, decode_content, encode_parts, same_call

_REASONING_KEYS = ("reasoning_content", "reasoning")


# ---- decoding ----


def decode_message(
    raw: Any, pointer: str, d: Dialect, scope: str, pending: list[tuple[str, str]]
) -> dict[str, Any]:
    """A wire message of any role as one canonical message."""
    msg = as_dict(raw, pointer, "a message object")
    role = msg.get("role")
    if role in ("system", "developer", "user"):
        return _decode_plain(msg, pointer, d)
    if role == "assistant":
        return decode_assistant(msg, pointer, d, scope, pending)
    if role == "tool":
        return _decode_tool(msg, pointer, d)
    if role == "function":
        return _decode_function_result(msg, pointer, scope, pending, d)
    fail(
        f"{pointer}/role", "one of system, developer, user, assistant, tool or function"
    )


def _take_content(
    msg: Mapping[str, Any], pointer: str, d: Dialect, kept: dict[str, Any]
) -> list[dict[str, Any]] | str | None:
    """Content as the wire spelled it: a string, parts, or None, with its empty spellings noted in `kept`."""
    content = msg.get("content", _ABSENT)
    if content is _ABSENT:
        kept["omit_content"] = True
        return None
    if content is None or isinstance(content, str):
        return content
    parts, skeleton = decode_content(
        as_list(content, f"{pointer}/content", "a string or an array of parts"),
        f"{pointer}/content",
        d,
    )
    if skeleton:
        kept["parts"] = skeleton
    return parts


def _decode_plain(msg: dict[str, Any], pointer: str, d: Dialect) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    role = msg["role"]
    if role == "developer":
        kept["role"] = role
    content = _take_content(msg, pointer, d, kept)
    if content is None:
        if "omit_content" not in kept:
            kept["empty_content"] = None
        content = ""
    out: dict[str, Any] = {
        "role": "system" if role == "developer" else role,
        "content": content,
    }
    consumed = {"role", "content"}
    if isinstance(msg.get("name"), str):
        out["name"] = msg["name"]
        consumed.add("name")
    return _finish_message(out, msg, consumed, kept, d)


def _finish_message(
    out: dict[str, Any],
    msg: Mapping[str, Any],
    consumed: set[str],
    kept: dict[str, Any],
    d: Dialect,
) -> dict[str, Any]:
    fields = {key: value for key, value in msg.items() if key not in consumed}
    if fields:
        kept["fields"] = fields
    if kept:
        out["extras"] = {d.wire: kept}
    return out


def decode_assistant(
    msg: dict[str, Any],
    pointer: str,
    d: Dialect,
    scope: str,
    pending: list[tuple[str, str]],
) -> dict[str, Any]:
    """A wire assistant message (or a completion's message) as one canonical assistant message."""
    kept: dict[str, Any] = {}
    consumed = {"role", "content"}
    parts: list[dict[str, Any]] = []
    for name in _REASONING_KEYS:
        key = d.key(name)
        if isinstance(msg.get(key), str):
            parts.append({"type": "reasoning", "text": msg[key]})
            kept["reasoning"] = key
            consumed.add(key)
            break
    content = _take_content(msg, pointer, d, kept)
    if isinstance(content, str):
        if content:
            parts.append({"type": "text", "text": content})
        else:
            kept["empty_content"] = ""
    elif isinstance(content, list):
        if not content and not kept.get("parts"):
            kept["empty_content"] = []
        if any(part["type"] == "reasoning" for part in content):
            kept["reasoning"] = "content"
        if len(content) == 1 and content[0]["type"] == "text" and not kept.get("parts"):
            kept["content_list"] = True
        parts.extend(content)
    if "reasoning" in kept and kept["reasoning"] == d.reasoning_default:
        del kept["reasoning"]
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(parts)}
    for key in ("name", "refusal"):
        if isinstance(msg.get(key), str):
            out[key] = msg[key]
            consumed.add(key)
    calls, generated = _decode_calls(msg, pointer, d, scope, kept, consumed, pending)
    if calls is not None:
        out["tool_calls"] = calls
    if generated:
        kept["generated_ids"] = generated
    return _finish_message(out, msg, consumed, kept, d)


def _decode_calls(
    msg: Mapping[str, Any],
    pointer: str,
    d: Dialect,
    scope: str,
    kept: dict[str, Any],
    consumed: set[str],
    pending: list[tuple[str, str]],
) -> tuple[list[dict[str, Any]] | None, list[str]]:
    generated: list[str] = []
    key = d.key("tool_calls")
    raw_calls = msg.get(key)
    if isinstance(raw_calls, list):
        consumed.add(key)
        pairs = [
            decode_call(raw, f"{pointer}/{key}/{j}", d, scope, j, generated)
            for j, raw in enumerate(raw_calls)
        ]
        if any(entry for _, entry in pairs):
            kept["calls"] = [entry for _, entry in pairs]
        return [call for call, _ in pairs], generated
    legacy_key = d.key("function_call")
    legacy = msg.get(legacy_key)
    if not isinstance(legacy, dict):
        return None, generated
    consumed.add(legacy_key)
    name = as_str(
        legacy.get("name"),
        f"{pointer}/{legacy_key}/name",
        "the function name as a string",
    )
    value = legacy.get("arguments", "")
    arguments = value if isinstance(value, str) else args_text(value)
    call_id = stable_call_id(scope, 0, name, arguments)
    generated.append(call_id)
    pending.append((name, call_id))
    kept["function_call"] = True
    entry = keep_entry(legacy, {"name": name, "arguments": arguments})
    if entry:
        kept["calls"] = [entry]
    return [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
    ], generated


def _decode_tool(msg: dict[str, Any], pointer: str, d: Dialect) -> dict[str, Any]:
    key = d.key("tool_call_id")
    call_id = as_str(
        msg.get(key), f"{pointer}/{key}", "the id of the tool call this message answers"
    )
    kept: dict[str, Any] = {}
    content = _take_content(msg, pointer, d, kept)
    if content is None:
        if "omit_content" not in kept:
            kept["empty_content"] = None
        content = ""
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": content}
    consumed = {"role", "content", key}
    if isinstance(msg.get("name"), str):
        out["name"] = msg["name"]
        consumed.add("name")
        kept["tool_name"] = True
    return _finish_message(out, msg, consumed, kept, d)


def _decode_function_result(
    msg: dict[str, Any],
    pointer: str,
    scope: str,
    pending: list[tuple[str, str]],
    d: Dialect,
) -> dict[str, Any]:
    """A legacy `role: function` result: paired with the oldest unanswered legacy call of the same name."""
    name = as_str(
        msg.get("name"),
        f"{pointer}/name",
        "the name of the function this result answers",
    )
    match = next((i for i, (called, _) in enumerate(pending) if called == name), None)
    call_id = (
        pending.pop(match)[1]
        if match is not None
        else stable_call_id(scope, 0, name, "")
    )
    kept: dict[str, Any] = {"role": "function", "generated_ids": [call_id]}
    content = msg.get("content")
    if not isinstance(content, str):
        kept["empty_content"] = content
        content = ""
    out = {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
    return _finish_message(out, msg, {"role", "content", "name"}, kept, d)


# ---- the short way: a conversation that keeps nothing ----


def decode_plain(raw: list[Any], d: Dialect) -> list[dict[str, Any]] | None:
    """The canonical messages of system, user and tool messages with string content and assistant messages with
    string or null content and plain calls, no other keys, as `decode_message` gives them;
    None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other, and this costs
    # less than comparing key views.
    messages: list[dict[str, Any]] = []
    id_key = d.key("tool_call_id")
    for msg in raw:
        if type(msg) is not dict:
            return None
        role, content = msg.get("role"), msg.get("content")
        count = len(msg)
        if role == "assistant":
            message = _plain_assistant(msg, content, count, d)
            if message is None:
                return None
            messages.append(message)
        elif role == "tool":
            call_id = msg.get(id_key)
            if count != 3 or type(call_id) is not str or type(content) is not str:
                return None
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": content}
            )
        elif (role == "user" or role == "system") and count == 2:
            if type(content) is not str:
                return None
            messages.append({"role": role, "content": content})
        else:
            return None
    return messages


def _plain_assistant(
    msg: dict[str, Any], content: Any, count: int, d: Dialect
) -> dict[str, Any] | None:
    # Empty text is kept as the wire spelled it (`""`), so only non-empty text or null is plain.
    if "content" not in msg or not (
        content is None or (type(content) is str and content)
    ):
        return None
    out: dict[str, Any] = {"role": "assistant", "content": content}
    if count == 2:
        return out
    raw_calls = msg.get(d.key("tool_calls"))
    if count != 3 or type(raw_calls) is not list:
        return None
    calls = []
    # Entries are {"id", "type": "function", "function": {"name", "arguments"}}, without `type` where the dialect
    # leaves it out: what `openai_chat_parts.call_block` writes back.
    size = 3 if d.typed_calls else 2
    for entry in raw_calls:
        if type(entry) is not dict or len(entry) != size:
            return None
        call_id, fn = entry.get("id"), entry.get("function")
        if (
            type(call_id) is not str
            or not call_id
            or type(fn) is not dict
            or len(fn) != 2
        ):
            return None
        if d.typed_calls and entry.get("type") != "function":
            return None
        name, arguments = fn.get("name"), fn.get("arguments")
        if type(name) is not str or type(arguments) is not str:
            return None
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    out["tool_calls"] = calls
    return out


# ---- encoding ----


def _empty_content(kept: Mapping[str, Any], default: Any) -> Any:
    if kept.get("omit_content"):
        return _ABSENT
    return kept.get("empty_content", default)


def encode_messages(messages: list[dict[str, Any]], d: Dialect) -> list[dict[str, Any]]:
    """Wire messages from canonical ones, parts a message cannot hold on this wire moved or dropped first (see
    placement.py; the conversion notes say which)."""
    placed = place(messages, d.wire)
    return [
        encode_message(msg, placed.pointer(i), d)
        for i, msg in enumerate(placed.messages)
    ]


def encode_message(msg: Mapping[str, Any], pointer: str, d: Dialect) -> dict[str, Any]:
    """A wire message from a canonical one, in the dialect's spelling."""
    role = msg.get("role")
    kept = extras_of(msg, d.wire)
    if role == "assistant":
        out = _encode_assistant(msg, pointer, d, kept)
    elif role == "tool":
        out = _encode_tool(msg, pointer, d, kept)
    elif role in ("system", "user"):
        out = {"role": kept.get("role", role)}
        _put_content(out, msg.get("content"), kept, d, pointer, "")
        if "name" in msg:
            out["name"] = msg["name"]
    else:
        fail(f"{pointer}/role", "one of system, user, assistant or tool")
    fields = kept.get("fields")
    return fill(out, fields) if fields else out


def _put_content(
    out: dict[str, Any],
    content: Any,
    kept: Mapping[str, Any],
    d: Dialect,
    pointer: str,
    empty: Any,
) -> None:
    if content is None or content == "" or content == []:
        value = _empty_content(kept, content if content is not None else empty)
        if value is not _ABSENT:
            out["content"] = value
    elif isinstance(content, str):
        out["content"] = content
    else:
        out["content"] = encode_parts(
            content, kept.get("parts"), d, f"{pointer}/content"
        )


def _encode_assistant(
    msg: Mapping[str, Any], pointer: str, d: Dialect, kept: Mapping[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant"}
    where = kept.get("reasoning", d.reasoning_default)
    parts = parts_of(msg.get("content"))
    if where != "content":
        reasoning = [
            part.get("text") or "" for part in parts if part.get("type") == "reasoning"
        ]
        parts = [part for part in parts if part.get("type") != "reasoning"]
        if reasoning and where is not None:
            out[where] = "".join(reasoning)
    if not parts and not kept.get("parts"):
        value = _empty_content(kept, None)
        if value is not _ABSENT:
            out["content"] = value
    elif (
        len(parts) == 1
        and parts[0].get("type") == "text"
        and not kept.get("content_list")
        and "parts" not in kept
    ):
        out["content"] = parts[0]["text"]
    else:
        out["content"] = encode_parts(parts, kept.get("parts"), d, f"{pointer}/content")
    for key in ("name", "refusal"):
        if key in msg:
            out[key] = msg[key]
    calls = msg.get("tool_calls")
    if calls is not None:
        _put_calls(out, calls, d, kept)
    return out


def _put_calls(
    out: dict[str, Any],
    calls: list[dict[str, Any]],
    d: Dialect,
    kept: Mapping[str, Any],
) -> None:
    generated = kept.get("generated_ids") or []
    entries = kept.get("calls")
    if entries is not None and len(entries) != len(calls):
        entries = None
    if kept.get("function_call") and len(calls) == 1:
        fn = calls[0]["function"]
        block = {"name": fn["name"], "arguments": fn["arguments"]}
        out[d.key("function_call")] = restore(
            block,
            entries[0] if entries else None,
            lambda raw: (
                raw.get("name") == fn["name"]
                and raw.get("arguments") == fn["arguments"]
            ),
        )
        return
    out[d.key("tool_calls")] = [
        _restore_call(call, entries[j] if entries else None, d, generated)
        for j, call in enumerate(calls)
    ]


def _restore_call(
    call: dict[str, Any],
    entry: Mapping[str, Any] | None,
    d: Dialect,
    generated: list[str],
) -> Any:
    return restore(
        call_block(call, d, generated),
        entry,
        lambda raw: same_call(raw, call, generated),
    )


def _encode_tool(
    msg: Mapping[str, Any], pointer: str, d: Dialect, kept: Mapping[str, Any]
) -> dict[str, Any]:
    if kept.get("role") == "function":
        out: dict[str, Any] = {"role": "function", "name": msg.get("name", "")}
    else:
        out = {"role": "tool", d.key("tool_call_id"): msg["tool_call_id"]}
        # OpenAI's tool message has no `name`; Mistral's takes one. Otherwise it goes back only where it came from.
        if "name" in msg and (kept.get("tool_name") or d.wire == "mistral"):
            out["name"] = msg["name"]
    _put_content(out, msg.get("content", ""), kept, d, pointer, "")
    return out
