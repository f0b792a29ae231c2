"""Which tool calls a stream's own events close, read off the payloads per wire: the tests' independent judge.

Written from the wire formats (../shared/WIRE-FORMATS.md), not from the stream states: a call is closed by
Anthropic's content_block_stop, Bedrock's contentBlockStop, Cohere's tool-call-end, the Interactions step.stop,
the Responses arguments.done / output_item.done / final response, Gemini's closing functionCall (or the next
call, or finishReason), OpenAI chat's finish_reason, [DONE] or next call; Gemini whole calls and Ollama calls
arrive closed. Calls are numbered in the order they begin, as the stream events number them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from toolgen.runtime.streams.framing import AutoDecoder, Frame, FramingError

Payload = tuple[str | None, Any]  # (event name, decoded payload), or (None, "[DONE]")


def frames_of(body: bytes) -> list[Frame]:
    """The frames of a whole body, as the aggregator's sniffing decoder cuts them (a broken tail included)."""
    decoder = AutoDecoder()
    frames: list[Frame] = []
    for step in (lambda: decoder.feed(body), decoder.close):
        try:
            frames += step()
        except FramingError as error:
            frames += error.frames
            break
    return frames


def payloads_of(frames: Iterable[Frame]) -> list[Payload]:
    out: list[Payload] = []
    for frame in frames:
        if frame.kind != "event":
            continue
        if frame.data.strip() == b"[DONE]":
            out.append((None, "[DONE]"))
            continue
        try:
            out.append((frame.event, json.loads(frame.data)))
        except ValueError:
            continue
    return out


def _dicts(payloads: list[Payload]) -> Iterable[tuple[str | None, dict[str, Any]]]:
    for event, data in payloads:
        if isinstance(data, dict):
            yield event, data


def _get(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _chat(payloads: list[Payload]) -> set[int]:
    count, finished = 0, False
    slots: dict[Any, str | None] = {}
    ids: set[str] = set()
    legacy = False
    for _, data in payloads:
        if data == "[DONE]":
            finished = True
            continue
        if not isinstance(data, dict):
            continue
        for choice in data.get("choices") or ():
            if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
                continue
            delta = choice.get("delta") or {}
            for entry in delta.get("tool_calls") or () if isinstance(delta, dict) else ():
                if not isinstance(entry, dict):
                    continue
                slot, call_id = entry.get("index"), entry.get("id") or None
                if slot is None:
                    new = count == 0 or (call_id is not None and call_id not in ids)
                else:
                    known = slots.get(slot)
                    new = slot not in slots or (call_id is not None and known is not None and call_id != known)
                    if new or known is None:
                        slots[slot] = call_id
                if call_id is not None:
                    ids.add(call_id)
                count += new
            if isinstance(delta, dict) and delta.get("function_call") and not legacy:
                legacy = True
                count += 1
            if choice.get("finish_reason"):
                finished = True
    return set(range(count if finished else max(count - 1, 0)))


def _renumber(kind_of: Callable[..., tuple[str, dict[str, Any]]]) -> Callable[[list[Payload]], set[int]]:
    """Anthropic, Bedrock, Cohere: a call is a slot (started, or implied by an input delta), closed by its stop."""

    def judge(payloads: list[Payload]) -> set[int]:
        calls: dict[Any, int] = {}
        others: set[Any] = set()
        closed: set[int] = set()
        for event, data in _dicts(payloads):
            kind, body = kind_of(event, data)
            index = body.get("index", body.get("contentBlockIndex", 0))
            if kind in ("start", "input") and index not in calls and index not in others:
                calls[index] = len(calls)
            elif kind == "other-start" and index not in calls:
                others.add(index)
            elif kind == "stop" and index in calls:
                closed.add(calls[index])
        return closed

    return judge


def _anthropic_kind(event: str | None, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = data.get("type") or event
    if kind == "content_block_start":
        block_type = _get(data, "content_block", "type")
        return ("start" if block_type == "tool_use" else "other-start"), data
    if kind == "content_block_delta" and _get(data, "delta", "type") == "input_json_delta":
        return "input", data
    if kind == "content_block_delta":
        return "other-start", data
    return ("stop" if kind == "content_block_stop" else ""), data


def _bedrock_kind(event: str | None, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if event is None and len(data) == 1:
        ((event, inner),) = data.items()
        data = inner if isinstance(inner, dict) else {}
    if event == "contentBlockStart":
        return ("start" if _get(data, "start", "toolUse") is not None else "other-start"), data
    if event == "contentBlockDelta":
        return ("input" if _get(data, "delta", "toolUse") is not None else "other-start"), data
    return ("stop" if event == "contentBlockStop" else ""), data


def _cohere_kind(event: str | None, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = data.get("type") or event
    return {"tool-call-start": "start", "tool-call-end": "stop"}.get(str(kind), ""), data


def _interactions(payloads: list[Payload]) -> set[int]:
    steps: dict[Any, int] = {}
    closed: set[int] = set()
    for event, data in _dicts(payloads):
        kind = data.get("event_type") or event
        index = data.get("index", 0)
        if kind == "step.start" and _get(data, "step", "type") == "function_call" and index not in steps:
            steps[index] = len(steps)
        elif kind == "step.stop" and index in steps:
            closed.add(steps[index])
        elif kind == "interaction.completed" and _get(data, "interaction", "steps"):
            closed |= set(steps.values())
    return closed


def _responses(payloads: list[Payload]) -> set[int]:
    calls: dict[Any, int] = {}
    keys: dict[str, Any] = {}
    ids: dict[int, set[str]] = {}
    closed: set[int] = set()
    for event, data in _dicts(payloads):
        kind = data.get("type") or event
        key = data.get("output_index", keys.get(str(data.get("item_id"))))
        if kind == "response.output_item.added" and _get(data, "item", "type") in ("function_call", "custom_tool_call"):
            if key in calls:
                continue
            calls[key] = number = len(calls)
            item = data.get("item") or {}
            ids[number] = {str(item[name]) for name in ("id", "call_id") if item.get(name)}
            if item.get("id"):
                keys[str(item["id"])] = key
        elif kind in ("response.function_call_arguments.delta", "response.custom_tool_call_input.delta"):
            if key is None:
                key = ("item", data.get("item_id"))
                keys[str(data.get("item_id"))] = key
            if key not in calls:
                calls[key] = len(calls)
                ids[calls[key]] = set()
        elif kind in (
            "response.function_call_arguments.done",
            "response.custom_tool_call_input.done",
            "response.output_item.done",
        ):
            if key in calls:
                closed.add(calls[key])
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            output = _get(data, "response", "output") or []
            held = {str(entry.get(name)) for entry in output if isinstance(entry, dict) for name in ("id", "call_id")}
            closed |= {number for number, names in ids.items() if names & held}
    return closed


def _gemini(payloads: list[Payload]) -> set[int]:
    count, open_call = 0, None
    closed: set[int] = set()
    for _, data in _dicts(payloads):
        for candidate in data.get("candidates") or ():
            if not isinstance(candidate, dict) or (candidate.get("index") or 0) != 0:
                continue
            for part in _get(candidate, "content", "parts") or ():
                call = part.get("functionCall") if isinstance(part, dict) else None
                if not isinstance(call, dict):
                    continue
                name, continues = call.get("name"), bool(call.get("willContinue"))
                if open_call is not None and name is None:
                    if not continues:
                        closed.add(open_call)
                        open_call = None
                    continue
                if open_call is not None:
                    closed.add(open_call)
                    open_call = None
                if name is None:
                    continue
                if continues or call.get("partialArgs"):
                    if continues:
                        open_call = count
                    else:
                        closed.add(count)
                else:
                    closed.add(count)
                count += 1
            if candidate.get("finishReason") is not None and open_call is not None:
                closed.add(open_call)
                open_call = None
    return closed


def _ollama(payloads: list[Payload]) -> set[int]:
    count = 0
    for _, data in _dicts(payloads):
        calls = _get(data, "message", "tool_calls")
        count += len(calls) if isinstance(calls, list) else 0
    return set(range(count))


_JUDGES: dict[str, Callable[[list[Payload]], set[int]]] = {
    "anthropic": _renumber(_anthropic_kind),
    "bedrock-converse": _renumber(_bedrock_kind),
    "cohere": _renumber(_cohere_kind),
    "google-interactions": _interactions,
    "openai-responses": _responses,
    "gemini": _gemini,
    "ollama": _ollama,
}


def closed_calls(wire: str, frames: Iterable[Frame]) -> set[int]:
    """The numbers of the calls whose closing event is among the frames; any wire not named is OpenAI chat's."""
    return _JUDGES.get(wire, _chat)(payloads_of(frames))
