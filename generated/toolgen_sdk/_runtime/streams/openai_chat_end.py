# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The final message of a plain OpenAI chat stream (one choice of text), built from the state without a body."""

from __future__ import annotations

from typing import Any

from ..wires.base import Response, assistant_content
from ..wires.openai_chat import _finish

# The dialect whose keys the state's body spells; other dialects of the format go through the decoder.
_PLAIN_WIRE = "openai-chat"


def plain_response(state: Any) -> Response | None:
    """What `decode_response(state.body())` gives when the stream was one choice of text and nothing else; None
    for anything more (calls, reasoning, refusal, logprobs, parts, usage, extra fields, an error), which the
    decoder then takes. Typed Any: this module must not import the state's own module that imports it."""
    if state.wire != _PLAIN_WIRE or state.usage is not None or len(state.choices) != 1:
        return None
    choice = state.primary
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
    head = state.head
    response_id, model = head.get("id"), head.get("model")
    fields = dict(head)
    if isinstance(response_id, str):
        del fields["id"]
    if isinstance(model, str):
        del fields["model"]
    fields["object"] = "chat.completion"
    return Response(
        message,
        _finish(choice.finish, False),
        None,
        model if isinstance(model, str) else None,
        response_id if isinstance(response_id, str) else None,
        {_PLAIN_WIRE: {"choice": rest, "fields": fields}},
    )


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
