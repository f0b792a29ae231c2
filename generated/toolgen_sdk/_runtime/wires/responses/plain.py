# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Responses input that keeps nothing, the short way: to canonical messages and back without the part skeletons
and kept fields `responses_items` reads and writes for the rest.

Each function gives exactly what the long way gives, or None, and then the caller takes the long way: so input
or a conversation the long way would refuse, or keep something more of, is always its business.
"""

from __future__ import annotations

from typing import Any

from ..helpers import assistant_content
from .items import WIRE


def decode_plain(items: list[Any]) -> list[dict[str, Any]] | None:
    """The canonical messages of input items that keep nothing but how assistant text was spelled (string
    messages, calls with text arguments, string outputs, no other keys), as `decode_input` of `responses_items`
    gives them; None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other.
    messages: list[dict[str, Any]] = []
    run: _Run | None = None
    for item in items:
        if type(item) is not dict:
            return None
        kind = item.get("type")
        if kind == "function_call":
            call_id, name, arguments = (
                item.get("call_id"),
                item.get("name"),
                item.get("arguments"),
            )
            if (
                len(item) != 4
                or type(call_id) is not str
                or type(name) is not str
                or type(arguments) is not str
            ):
                return None
            run = run or _Run()
            run.calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
            run.skeleton.append({"call": {}})
            continue
        if kind is None and len(item) == 2:
            role, content = item.get("role"), item.get("content")
            if type(content) is not str:
                return None
            if role == "assistant":
                run = run or _Run()
                run.parts.append({"type": "text", "text": content})
                # The long way keeps that the text came as its own string message item.
                run.skeleton.append(
                    {
                        "group": {"item": {"role": "assistant"}, "string": True},
                        "parts": [{}],
                    }
                )
                continue
            if role != "user" and role != "system":
                return None
            message: dict[str, Any] = {"role": role, "content": content}
        elif kind == "function_call_output":
            call_id, output = item.get("call_id"), item.get("output")
            if len(item) != 3 or type(call_id) is not str or type(output) is not str:
                return None
            message = {"role": "tool", "tool_call_id": call_id, "content": output}
        else:
            return None
        if run is not None:
            messages.append(run.message())
            run = None
        messages.append(message)
    if run is not None:
        messages.append(run.message())
    return messages


class _Run:
    """Consecutive plain assistant-side items, as `AssistantRun` of `responses_items` collects them."""

    __slots__ = ("calls", "parts", "skeleton")

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.skeleton: list[dict[str, Any]] = []

    def message(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": "assistant",
            "content": assistant_content(self.parts),
        }
        if self.calls:
            out["tool_calls"] = self.calls
        # Calls alone are laid out again by the encoder; string message items are not.
        if self.parts:
            out["extras"] = {WIRE: {"blocks": self.skeleton}}
        return out


# A tuple, not a set: a role may be any value, unhashable too.
_INPUT_ROLES = ("system", "user")


def encode_plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The input items of a conversation that kept nothing from a decoded body: string contents, calls, string
    tool results; as `encode_input_message`, `encode_run` and `encode_result` of `responses_items` give them.
    None for anything else, and for anything they would refuse."""
    items: list[dict[str, Any]] = []
    try:
        for message in messages:
            if "extras" in message:
                return None
            role, content = message["role"], message.get("content")
            if type(content) is not str and (
                role != "assistant" or content is not None
            ):
                return None
            if role == "assistant":
                if content is not None:
                    items.append({"role": "assistant", "content": content})
                for call in message.get("tool_calls") or ():
                    fn = call["function"]
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": call["id"],
                            "name": fn["name"],
                            "arguments": fn["arguments"],
                        }
                    )
            elif role == "tool":
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": message["tool_call_id"],
                        "output": content,
                    }
                )
            elif role in _INPUT_ROLES:
                items.append({"role": role, "content": content})
            else:
                return None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None
    return items
