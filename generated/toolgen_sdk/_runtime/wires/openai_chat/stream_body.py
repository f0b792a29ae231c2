# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What an OpenAI chat stream's choices make at its end: chat.completion choices, or a plain-text Response straight."""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from ...streams.state import Call
from ..canonical import Response
from ..helpers import assistant_content, note_finish
from .codec import _FINISH, finish_of
from .stream_choice import Choice

# The dialect whose keys the state's body spells; other dialects of the format go through the decoder.
_PLAIN_WIRE = "openai-chat"


def choice_body(choice: Choice, custom: Container[Call] = ()) -> dict[str, Any]:
    """One choice of the chat.completion body; `custom` holds the calls of custom tools."""
    message: dict[str, Any] = {
        "role": choice.role or "assistant",
        "content": _content_body(choice),
    }
    if choice.reasoning:
        message[choice.reasoning_key] = "".join(choice.reasoning)
    if choice.refusal:
        message["refusal"] = "".join(choice.refusal)
    calls = [
        call
        for call in choice.calls
        if call is not choice.function_call and not call.cut
    ]
    if calls:
        message["tool_calls"] = [_call_body(call, custom) for call in calls]
    if choice.function_call is not None and not choice.function_call.cut:
        call = choice.function_call
        message["function_call"] = {
            "name": call.name or "",
            "arguments": _arguments_body(call),
        }
    message.update(choice.extra)
    body: dict[str, Any] = {
        "index": choice.index,
        "message": message,
        "finish_reason": choice.finish,
    }
    if choice.logprobs:
        body["logprobs"] = merge_logprobs(choice.logprobs)
    elif choice.logprobs_key:
        body["logprobs"] = None
    return body


def _call_body(call: Call, custom: Container[Call]) -> dict[str, Any]:
    body: dict[str, Any] = {"id": call.id or ""}
    extra = call.extra or {}
    if call in custom:
        body.update((key, value) for key, value in extra.items() if key != "custom")
        body["custom"] = {
            "name": call.name or "",
            "input": "".join(call.parts),
            **extra.get("custom", {}),
        }
        return body
    body.update((key, value) for key, value in extra.items() if key != "function")
    function = body["function"] = {
        "name": call.name or "",
        "arguments": call.arguments,
        **extra.get("function", {}),
    }
    function["arguments"] = _arguments_body(call)
    return body


def _arguments_body(call: Call) -> Any:
    """The value a call's arguments came as, when they came as one value and nothing else (see
    OpenAIChatState._value_arguments); else their text."""
    function = call.extra.get("function") if call.extra is not None else None
    if function is not None and "arguments" in function and len(call.parts) == 1:
        return function["arguments"]
    return call.arguments


def _content_body(choice: Choice) -> Any:
    if choice.parts is not None:
        return [_part_body(kind, value) for kind, value in choice.parts]
    if choice.content or choice.saw_content:
        return "".join(choice.content)
    return None


def _part_body(kind: str, value: Any) -> Any:
    if kind == "text":
        return {"type": "text", "text": "".join(value)}
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": [{"type": "text", "text": "".join(value)}],
        }
    return value


def merge_logprobs(chunks: list[Any]) -> Any:
    """The logprobs of a choice's chunks as one: their lists joined, their other keys as first sent."""
    merged: dict[str, Any] = {}
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        for key, value in chunk.items():
            if isinstance(value, list):
                merged.setdefault(key, []).extend(value)
            elif key not in merged:
                merged[key] = value
    return merged


def plain_response(
    wire: str,
    usage: Any,
    choices: Mapping[int, Choice],
    choice: Choice | None,
    head: Mapping[str, Any],
) -> Response | None:
    """What `decode_response(state.body())` gives when the stream (of `wire`, its `usage`, `choices`, the one
    `choice` and the `head` fields) was one choice of text and nothing else; None for anything more (calls,
    reasoning, refusal, logprobs, parts, usage, extra fields, an error), which the decoder then takes."""
    if wire != _PLAIN_WIRE or usage is not None or len(choices) != 1:
        return None
    if (
        choice is None
        or choice.calls
        or choice.function_call is not None
        or choice.reasoning
        or choice.refusal
        or choice.extra
        or choice.parts is not None
        or choice.logprobs
        or choice.role not in (None, "assistant")
    ):
        return None
    message: dict[str, Any] = {"role": "assistant"}
    if choice.content or choice.saw_content:
        text = "".join(choice.content)
        message["content"] = (
            assistant_content([{"type": "text", "text": text}]) if text else None
        )
        if not text:
            # An empty string is kept apart from an absent content, as the decoder keeps it.
            message["extras"] = {_PLAIN_WIRE: {"empty_content": ""}}
    else:
        message["content"] = None
    # The body's other choice keys, then its fields but the id and model (kept in the Response itself).
    rest: dict[str, Any] = {"index": choice.index}
    if choice.logprobs_key:
        rest["logprobs"] = None
    response_id, model = head.get("id"), head.get("model")
    fields = dict(head)
    if isinstance(response_id, str):
        del fields["id"]
    if isinstance(model, str):
        del fields["model"]
    fields["object"] = "chat.completion"
    done = finish_of(choice.finish, False)
    extras = {_PLAIN_WIRE: {"choice": rest, "fields": fields}}
    return Response(
        message,
        done,
        None,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        note_finish(extras, _PLAIN_WIRE, "finish_reason", choice.finish, done, _FINISH),
    )
