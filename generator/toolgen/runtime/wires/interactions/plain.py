# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Interactions input steps that keep little, the short way: to canonical messages without the step skeletons,
kept entries and regrouping marks `interactions_steps` works out for the rest.

`decode_plain` gives exactly what the long way gives, or None, and then the caller takes the long way: so a
body the long way would refuse, or keep more of, is always its business.
"""

from __future__ import annotations

from typing import Any

from ..canonical import ToolCall
from ..helpers import args_object, assistant_content
from ..plain_arguments import plain_arguments

WIRE = "google-interactions"


def decode_plain(steps: list[Any], before: str | None) -> list[dict[str, Any]] | None:
    """The canonical messages of input steps of text, function calls with object arguments and string results,
    no other keys, as `interactions_steps.decode_input_steps` gives them after a message of role `before`
    (with the step layout it keeps of model output); None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other. One loop with
    # few calls: this runs for every step of every decoded request.
    messages: list[dict[str, Any]] = []
    # The model-side steps since the last user input, gathered into one assistant message: its text parts,
    # calls, and the step layout `ModelSteps` keeps when model output grouped its text.
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    layout: list[dict[str, Any]] = []
    grouped = False
    for step in steps:
        if type(step) is not dict:
            return None
        kind = step.get("type")
        count = len(step)
        if kind == "user_input" and count == 2:
            if layout:
                messages.append(_assistant(texts, calls, layout, grouped))
                texts, calls, layout, grouped = [], [], [], False
            previous = messages[-1]["role"] if messages else before
            if not _plain_input(step.get("content"), previous, messages):
                return None
        elif kind == "function_call" and count == 4:
            call_id, name, given = (
                step.get("id"),
                step.get("name"),
                step.get("arguments"),
            )
            if (
                type(call_id) is not str
                or type(name) is not str
                or type(given) is not dict
            ):
                return None
            arguments = plain_arguments(given)
            # Arguments that do not read back as they came (NaN, non-string keys) are kept by the long way.
            if arguments is None:
                return None
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
            layout.append({"call": {}})
        elif kind == "model_output" and count == 2:
            content = step.get("content")
            if type(content) is not list:
                return None
            for block in content:
                if (
                    type(block) is not dict
                    or len(block) != 2
                    or block.get("type") != "text"
                ):
                    return None
                text = block.get("text")
                if type(text) is not str:
                    return None
                texts.append({"type": "text", "text": text})
            layout.append(
                {"group": {"type": "model_output"}, "parts": [{} for _ in content]}
            )
            grouped = True
        else:
            return None
    if layout:
        messages.append(_assistant(texts, calls, layout, grouped))
    return messages


def _plain_input(
    content: Any, previous: str | None, messages: list[dict[str, Any]]
) -> bool:
    # Text only (one user message) or results only (a tool message each): a mix, or a first result after a
    # tool message, carries regrouping marks the long way sets.
    if type(content) is not list or not content:
        return False
    first = content[0]
    if type(first) is not dict:
        return False
    if first.get("type") == "text":
        if len(content) == 1:
            text = first.get("text")
            if len(first) != 2 or type(text) is not str:
                return False
            messages.append({"role": "user", "content": text})
            return True
        parts = []
        for block in content:
            if (
                type(block) is not dict
                or len(block) != 2
                or block.get("type") != "text"
            ):
                return False
            text = block.get("text")
            if type(text) is not str:
                return False
            parts.append({"type": "text", "text": text})
        messages.append({"role": "user", "content": parts})
        return True
    if previous == "tool":
        return False
    for block in content:
        if (
            type(block) is not dict
            or len(block) != 3
            or block.get("type") != "function_result"
        ):
            return False
        call_id, result = block.get("call_id"), block.get("result")
        if type(call_id) is not str or type(result) is not str:
            return False
        # A refused block discards the whole list (the caller returns None), so results go straight in.
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    return True


def _assistant(
    texts: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    layout: list[dict[str, Any]],
    grouped: bool,
) -> dict[str, Any]:
    """One assistant message of model-side steps; the layout is kept when model output grouped its text (calls
    alone lay out as the encoder writes them anyway)."""
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(texts)}
    if calls:
        out["tool_calls"] = calls
    if grouped:
        out["extras"] = {WIRE: {"blocks": layout}}
    return out


def encode_plain(messages: list[Any]) -> list[dict[str, Any]] | None:
    """The input steps of a conversation that keeps nothing (no extras, string or no contents, calls, string
    results), as `interactions_steps.encode_input_steps` writes them; None for anything else, and for anything
    it would refuse."""
    steps: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None
    try:
        for msg in messages:
            if type(msg) is not dict or "extras" in msg:
                return None
            role, content = msg.get("role"), msg.get("content")
            if role == "system":
                continue
            if role == "tool":
                block = _result_block(msg)
                if block is None:
                    return None
                # Consecutive results share one user input step, as `turns` groups them.
                if results is None:
                    results = [block]
                    steps.append({"type": "user_input", "content": results})
                else:
                    results.append(block)
                continue
            results = None
            if content is None:
                items = []
            elif type(content) is str:
                items = [{"type": "text", "text": content}]
            else:
                return None
            if role == "user":
                steps.append({"type": "user_input", "content": items})
            elif role == "assistant":
                if items:
                    steps.append({"type": "model_output", "content": items})
                steps.extend(map(_call_step, msg.get("tool_calls") or []))
            else:
                return None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None
    return steps


def _result_block(msg: dict[str, Any]) -> dict[str, Any] | None:
    content = msg.get("content", "")
    if type(content) is not str:
        return None
    block: dict[str, Any] = {
        "type": "function_result",
        "call_id": msg["tool_call_id"],
        "result": content,
    }
    if "name" in msg:
        block["name"] = msg["name"]
    if "is_error" in msg:
        block["is_error"] = msg["is_error"]
    return block


def _call_step(call: ToolCall) -> dict[str, Any]:
    fn = call["function"]
    return {
        "type": "function_call",
        "id": call["id"],
        "name": fn["name"],
        # Bad arguments raise here and take the long way, which names them with their pointer.
        "arguments": args_object(fn["arguments"], ""),
    }
