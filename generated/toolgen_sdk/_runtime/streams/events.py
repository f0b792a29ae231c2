# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Canonical streaming events: what every wire's stream becomes, as it arrives.

Each wire has a stream state (`wires/<wire>/stream.py`) that reads that provider's chunks, emits canonical events as
they come, and accumulates the body the provider would have sent without streaming. At the end that body goes
through the wire's own `decode_response`, so a stream and the same response fetched whole give the same
canonical message. Nothing raises while streaming: faults (a cut-off stream, a corrupt frame, arguments that are
not JSON, a provider error event) become `StreamError` events, and the final message keeps everything received.

Tool call events are numbered in the order the calls began, which is each call's position in the final
message's `tool_calls` unless a call before it was cut. `ToolCallDelta.arguments` fragments are the text as the
wire sent it. A call is closed when the wire's own event says its arguments are over (each stream state's
docstring names that event); its `ToolCallEnd.arguments` is then the call's final canonical text, equal to the
final message's (for wires that send an object, the compact JSON of that object), and `error` says why it is not
a JSON object when it is not one. A call the stream never closed is cut: its `ToolCallEnd` has `arguments` None,
`parsed` None and an `error` starting with "cut:", and the final message leaves it out of `tool_calls` (it is
listed, with the text that did arrive, under `extras["stream"]["cut_calls"]`), so nothing can run it on made-up
or truncated arguments. `ToolCallStart.id` is None when the wire gives calls no id; the `ToolCallEnd` of such a
call comes at the end of the stream and carries the id the final message has.

An event the stream repeats is ignored where the wire gives a way to tell it is a repeat (each stream state's
docstring says what counts as one, ids first, positions only where the wire has no ids) and counted in
`MessageEnd.duplicates_ignored`; two equal deltas the wire cannot tell apart are both kept, since a model may
well say "ha" twice. A new id at a position already used is a new call, never a repeat. Whatever a state drops
without the wire's proof that it is a repeat, takes out of order, or has to guess (a call whose start never came,
a final event missing what it should carry) is a `StreamError` of type `incomplete`, and the stream ends
`incomplete`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..wires.canonical import ProviderError, Response

try:
    from pydantic_core import from_json as _from_json
except ImportError:  # pragma: no cover - pydantic_core ships with pydantic; stdlib json is the slow fallback
    _from_json = json.loads  # type: ignore[assignment]

# JSON text (bytes or str) to Python values; about three times faster than json.loads on stream chunks.
parse_json: Callable[..., Any] = _from_json


# How a stream ended: see MessageEnd.
StreamStatus = Literal["complete", "incomplete", "cut", "failed", "corrupt"]
# The type of the StreamError a stream state raises for what it dropped, took out of order or guessed.
INCOMPLETE = "incomplete"


@dataclass(frozen=True, slots=True)
class MessageStart:
    """The assistant message began; its id and model, when the wire has sent them by then."""

    id: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """More reasoning (thinking) text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call began; index is its position in the final message's tool_calls."""

    index: int
    id: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call's arguments, as the wire sent it."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A tool call is over: its final arguments text and parsed value, or None and the reason (cut, not JSON)."""

    index: int
    id: str | None
    name: str | None
    arguments: str | None
    parsed: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of the whole response, in canonical keys (input_tokens, output_tokens, ...)."""

    usage: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Finish:
    """Why the model stopped: stop | tool_calls | length | content_filter | error, and the provider's own value."""

    reason: str
    raw: Any = None


@dataclass(frozen=True, slots=True)
class StreamError:
    """Something went wrong mid-stream; provider is True when the provider itself sent the error."""

    message: str
    code: str | None = None
    type: str | None = None
    status: int | None = None
    raw: Any = None
    provider: bool = False


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """The last event: the final message (or the provider's error), whether the stream ended cleanly, and how.

    status is complete (the wire's end signal arrived and nothing went wrong), cut (the stream ended before its
    end signal, or left a tool call open), failed (the provider sent an error), incomplete (the end arrived, but
    the stream state dropped an event it could not prove a repeat, took one out of order, or had to guess: text
    or calls may be missing or wrong; its `StreamError`s of type `incomplete` say what) or corrupt (the end
    arrived, but a payload or a call's arguments did not parse). The first that applies, in that order of
    precedence: failed, cut, incomplete, corrupt. duplicates_ignored counts the events dropped as repeats (a
    presumed one also makes the stream incomplete). What the stream lacked that leaves the answer whole (usage the
    wire documents, never sent) changes no status: the response's `extras["stream"]["notes"]` says it.
    """

    response: Response | ProviderError
    complete: bool
    status: StreamStatus = "complete"
    duplicates_ignored: int = 0


Event = (
    MessageStart
    | TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | Usage
    | Finish
    | StreamError
    | MessageEnd
)


# A frozen dataclass's __init__ sets each field through object.__setattr__; the per-chunk events are built by
# setting their slots directly instead, about twice as fast, giving the very same objects.
new_object = object.__new__
set_start_id = vars(MessageStart)["id"].__set__
set_start_model = vars(MessageStart)["model"].__set__
set_text = vars(TextDelta)["text"].__set__
set_reasoning = vars(ReasoningDelta)["text"].__set__
set_delta_index = vars(ToolCallDelta)["index"].__set__
set_delta_arguments = vars(ToolCallDelta)["arguments"].__set__


def dumps_compact(value: Any) -> str:
    """JSON text of a value the way the wire contract serializes object arguments."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
