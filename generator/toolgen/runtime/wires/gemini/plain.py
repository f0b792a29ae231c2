# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini contents that keep nothing, the short way: to canonical messages and back without the part skeletons,
generated ids, kept fields and regrouping marks `gemini_contents` reads and writes for the rest.

Each function gives exactly what the long way gives, or None, and then the caller takes the long way: so contents
or a conversation the long way would refuse, or keep something of, are always its business.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..helpers import args_object, assistant_content
from ..plain_arguments import plain_arguments


def decode_plain(
    contents: list[Any], before: str | None
) -> list[dict[str, Any]] | None:
    """The canonical messages of turns that keep nothing (text parts, calls and responses with their ids, string
    outputs, no other keys), as `decode_model_turn` and `decode_user_turn` of `gemini_contents` give them after
    a message of role `before`; None for anything else."""
    # Keys are told by count and lookup: a dict of n entries holding n wanted keys has no other. One loop with
    # few calls: this runs for every turn of every decoded request.
    messages: list[dict[str, Any]] = []
    for turn in contents:
        if type(turn) is not dict or len(turn) != 2:
            return None
        role, parts = turn.get("role"), turn.get("parts")
        if type(parts) is not list:
            return None
        first = parts[0] if parts else None
        if role == "model":
            if not _plain_model(parts, messages):
                return None
        elif role != "user" or type(first) is not dict:
            return None
        elif "functionResponse" in first:
            # Text and responses in one turn, or responses right after a tool message, are marked by the long way.
            if before == "tool":
                return None
            for block in parts:
                result = _plain_response(block)
                if result is None:
                    return None
                messages.append(result)
        elif len(parts) == 1:
            text = first.get("text")
            if len(first) != 1 or type(text) is not str:
                return None
            messages.append({"role": "user", "content": text})
        else:
            texts = _texts(parts)
            if texts is None:
                return None
            messages.append({"role": "user", "content": texts})
        before = messages[-1]["role"]
    return messages


def decode_plain_system(system: Any) -> dict[str, Any] | None:
    """The canonical system message of a `systemInstruction` of text parts and nothing else, as `decode_system`
    of `gemini_contents` gives it when it keeps nothing; None for anything else."""
    if type(system) is not dict or len(system) != 1:
        return None
    blocks = system.get("parts")
    if type(blocks) is not list or not blocks:
        return None
    texts = _texts(blocks)
    if texts is None:
        return None
    return {"role": "system", "content": texts[0]["text"] if len(texts) == 1 else texts}


def _texts(parts: list[Any]) -> list[dict[str, Any]] | None:
    texts = []
    for block in parts:
        if type(block) is not dict or len(block) != 1:
            return None
        text = block.get("text")
        if type(text) is not str:
            return None
        texts.append({"type": "text", "text": text})
    return texts


def _plain_response(block: Any) -> dict[str, Any] | None:
    if type(block) is not dict or len(block) != 1:
        return None
    fr = block.get("functionResponse")
    if type(fr) is not dict or len(fr) != 3:
        return None
    call_id, name, response = fr.get("id"), fr.get("name"), fr.get("response")
    # Responses without an id are paired with calls by name, and that is the long way's.
    if type(call_id) is not str or not call_id or type(name) is not str:
        return None
    if type(response) is not dict or len(response) != 1:
        return None
    output, error = response.get("output"), response.get("error")
    out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "name": name}
    if type(output) is str:
        out["content"] = output
    elif type(error) is str:
        out["content"] = error
        out["is_error"] = True
    else:
        return None
    return out


def _plain_model(parts: list[Any], messages: list[dict[str, Any]]) -> bool:
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in parts:
        if type(block) is not dict or len(block) != 1:
            return False
        fc = block.get("functionCall")
        if fc is not None:
            call = _plain_call(fc)
            if call is None:
                return False
            calls.append(call)
            continue
        text = block.get("text")
        # Text after a call is laid out again by the long way's skeleton.
        if type(text) is not str or calls:
            return False
        texts.append({"type": "text", "text": text})
    out: dict[str, Any] = {"role": "assistant", "content": assistant_content(texts)}
    if calls:
        out["tool_calls"] = calls
    messages.append(out)
    return True


def _plain_call(fc: Any) -> dict[str, Any] | None:
    if type(fc) is not dict or len(fc) != 3:
        return None
    call_id, name, args = fc.get("id"), fc.get("name"), fc.get("args")
    # Calls without an id get generated ones, and that is the long way's.
    if type(call_id) is not str or not call_id or type(name) is not str:
        return None
    if type(args) is not dict:
        return None
    arguments = plain_arguments(args)
    # Arguments that do not read back as they came (NaN, non-string keys) are kept by the long way.
    if arguments is None:
        return None
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def encode_plain(
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(system instruction parts, contents) of a conversation that kept nothing from a decoded body: string
    contents, calls, string tool results; as `encode_system`, `encode_model_turn` and `encode_user_turn` of
    `gemini_contents` over `base.turns` give them. None for anything else, and for anything they would refuse."""
    system: list[dict[str, Any]] = []
    contents: list[dict[str, Any]] = []
    previous = None
    try:
        # Every call's name, later ones too, as the long way finds the function a result answers.
        names = {
            call["id"]: call["function"]["name"]
            for message in messages
            for call in message.get("tool_calls") or ()
        }
        for message in messages:
            if "extras" in message:
                return None
            role, content = message["role"], message.get("content")
            if type(content) is not str and (
                role != "assistant" or content is not None
            ):
                return None
            if role == "system":
                system.append({"text": content})
                # System prompts go outside the contents: they part no run of results (see `turns`).
                continue
            if role == "tool":
                call_id = message["tool_call_id"]
                name = message.get("name") or names.get(call_id) or ""
                if not name:
                    return None  # refused by the long way, with its pointer
                key = "error" if message.get("is_error") else "output"
                response = {"id": call_id, "name": name, "response": {key: content}}
                # Consecutive results share one user turn, as `turns` groups them.
                if previous == "tool":
                    contents[-1]["parts"].append({"functionResponse": response})
                else:
                    contents.append(
                        {"role": "user", "parts": [{"functionResponse": response}]}
                    )
            elif role == "user":
                contents.append({"role": "user", "parts": [{"text": content}]})
            elif role == "assistant":
                contents.append({"role": "model", "parts": _plain_parts(message)})
            else:
                return None
            previous = role
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        return None
    return system, contents


def _plain_parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    parts: list[dict[str, Any]] = [] if content is None else [{"text": content}]
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        called = {
            "id": call["id"],
            "name": fn["name"],
            # Bad arguments raise here and take the long way, which names them with their pointer.
            "args": args_object(fn["arguments"], ""),
        }
        parts.append({"functionCall": called})
    return parts
