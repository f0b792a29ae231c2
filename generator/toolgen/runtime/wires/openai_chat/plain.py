# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Chat-completions conversations that keep nothing, written the short way: canonical messages to a dialect's
wire messages without the kept parts, call entries and made-up ids `openai_chat_messages` restores for the rest.

`encode_plain` gives exactly what the long way gives, or None, and then the caller takes the long way: so a
conversation the long way would refuse, or restore something of, is always its business.
"""

from __future__ import annotations

from typing import Any

from ..canonical import ToolCall
from .dialects import Dialect

# A tuple, not a set: a role may be any value, unhashable too.
_ROLES = ("system", "user")


def encode_plain(messages: list[Any], d: Dialect) -> list[dict[str, Any]] | None:
    """The wire messages of a conversation without extras (string or no contents, calls, string results), as
    `openai_chat_messages.encode_message` writes them in dialect `d`; None for anything else, and for anything
    it would refuse."""
    out: list[dict[str, Any]] = []
    calls_key, id_key = d.key("tool_calls"), d.key("tool_call_id")
    try:
        for msg in messages:
            if type(msg) is not dict or "extras" in msg:
                return None
            role, content = msg.get("role"), msg.get("content", "")
            if role == "assistant":
                content = msg.get("content")
            if content is None:
                # No content is an empty string, but an assistant's, which stays null.
                content = None if role == "assistant" else ""
            elif type(content) is not str:
                return None
            if role in _ROLES:
                wire: dict[str, Any] = {"role": role, "content": content}
                if "name" in msg:
                    wire["name"] = msg["name"]
            elif role == "assistant":
                wire = {"role": "assistant", "content": content}
                for key in ("name", "refusal"):
                    if key in msg:
                        wire[key] = msg[key]
                calls = msg.get("tool_calls")
                if calls is not None:
                    wire[calls_key] = [_wire_call(call, d) for call in calls]
            elif role == "tool":
                wire = {"role": "tool", id_key: msg["tool_call_id"]}
                # OpenAI's tool message has no `name`; Mistral's takes one.
                if "name" in msg and d.wire == "mistral":
                    wire["name"] = msg["name"]
                wire["content"] = content
            else:
                return None
            out.append(wire)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None
    return out


def _wire_call(call: ToolCall, d: Dialect) -> dict[str, Any]:
    block: dict[str, Any] = {"id": call["id"]}
    if d.typed_calls:
        block["type"] = "function"
    fn = call["function"]
    block["function"] = {"name": fn["name"], "arguments": fn["arguments"]}
    return block
