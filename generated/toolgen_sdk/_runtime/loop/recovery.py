# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""How a run gets over a failed model call: stream retries, context-length errors, and token estimates.

A stream that breaks off mid-way, ends `incomplete` (events dropped, out of order or missing) or `corrupt` (a
payload that could not be read, dropped) is asked again, as StreamRetry says, whatever finish its answer names;
when it fails for good, the text that did arrive goes into the transcript as an assistant message marked
incomplete (`extras["toolgen"]["incomplete"]`), without any of its tool calls, so that nothing runs on arguments
that never arrived whole or calls the stream may have lost. A provider's context-length error
lets the budget hook trim (told so by `BudgetInfo.overflow`) and the call is made once more.
A budget hook can act before the first call too: `BudgetInfo.estimated_input_tokens` is a token estimate of the
conversation about to be sent, by `estimate_tokens` (about four characters a token) or a tokenizer of your own
(`token_counter(encoding.encode)`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..wires.canonical import ProviderError, Response, parts_of

# What stream faults and provider errors are called when a stream ended early: the aggregator's `cut`, its
# `incomplete` (it dropped or guessed something: calls may be missing or wrong), its `corrupt` (a payload it could
# not read was dropped: text or arguments may lack a piece), and the loop's own name for a stream that ended
# without its last event.
CUT = "cut"
INCOMPLETE = "incomplete"
CORRUPT = "corrupt"
INCOMPLETE_STREAM = "incomplete_stream"
# Words providers use for a request longer than the model's context window (OpenAI's code, Anthropic's and
# Bedrock's messages, Gemini's and Ollama's wording).
_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "maximum context",
    "exceeds the maximum number of tokens",
    "input token count",
)
# A character-based estimate: English runs about four characters a token; every message costs a few more.
_CHARS_PER_TOKEN = 4
_TOKENS_PER_MESSAGE = 4

TokenEstimate = Callable[[list[dict[str, Any]]], int]


@dataclass(frozen=True)
class StreamRetry:
    """Model calls made for one step at most (`attempts`, the first included), and the failures asked again.

    `errors` names failure types: `cut` (the stream broke off mid-way), `incomplete` (it ended, but events
    were dropped, out of order or missing, so its calls cannot be trusted), `corrupt` (it ended, but a payload
    could not be read and was dropped), `incomplete_stream` (it ended without its final event), or a provider
    error's type or code (`overloaded_error`, `rate_limit_exceeded`, ...): either matches.
    `delay` seconds pass before each new attempt. HTTPModel already retries a request that fails before its
    response begins; this is for what breaks after.
    """

    attempts: int = 2
    errors: frozenset[str] = frozenset({CUT, INCOMPLETE, CORRUPT, INCOMPLETE_STREAM})
    delay: float = 0.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.delay < 0:
            raise ValueError("a StreamRetry needs attempts >= 1 and delay >= 0")

    def retries(self, kind: str | None, attempt: int, code: Any = None) -> bool:
        """Whether a call that failed as `kind` (a provider error's type, else its code), or with the provider's
        `code`, on attempt number `attempt` is made again."""
        if attempt >= self.attempts:
            return False
        return (kind is not None and kind in self.errors) or (
            code is not None and str(code) in self.errors
        )


# A run's default: one more attempt after a stream that broke off.
DEFAULT_STREAM_RETRY = StreamRetry()


def stream_broken(response: Response, ended: str | None = None) -> bool:
    """Whether the stream an answer came from broke, whatever finish the answer names: it ended `cut`,
    `incomplete` or `corrupt`, as its MessageEnd says (`ended`) or the answer's extras["stream"] (an answer whose
    stream the client read whole). A corrupt stream whose only faults are a call's own arguments that do not parse
    lost nothing: the model wrote them so, and the call goes to its tool, which refuses them, as the same answer
    fetched whole would."""
    stream = response.extras.get("stream")
    stream = stream if isinstance(stream, dict) else {}
    statuses = {ended, stream.get("status")}
    if CUT in statuses or INCOMPLETE in statuses:
        return True
    return CORRUPT in statuses and not _own_arguments_only(response, stream)


def _own_arguments_only(response: Response, stream: dict[str, Any]) -> bool:
    """Whether every fault the stream noted is a tool call of the answer whose arguments did not parse: the stream
    states name such a fault `tool call <index> (<name>): ...`, and a corrupt stream has no cut call, so each
    index is the call's place in tool_calls."""
    calls = response.message.get("tool_calls") or ()
    notes = stream.get("errors")
    if not calls or not isinstance(notes, list) or not notes:
        return False
    prefixes = tuple(
        f"tool call {index} ({(call.get('function') or {}).get('name')}): "
        for index, call in enumerate(calls)
        if isinstance(call, dict)
    )
    return all(
        isinstance(note, dict)
        and not note.get("provider")
        and note.get("type") is None
        and str(note.get("message", "")).startswith(prefixes)
        for note in notes
    )


def failure_kind(
    response: Response | ProviderError | None, ended: str | None = None
) -> str | None:
    """What went wrong with a model call's answer, by the names StreamRetry.errors uses; None when nothing did.
    `ended` is the status of the stream it came from, when it came streamed."""
    if response is None:
        return INCOMPLETE_STREAM
    if isinstance(response, ProviderError):
        return response.type or response.code or "provider_error"
    broken = stream_broken(response, ended)
    if (response.finish or {}).get("reason") != "error" and not broken:
        return None
    stream = response.extras.get("stream") or {}
    notes = [note for note in stream.get("errors") or () if isinstance(note, dict)]
    statuses = {ended, stream.get("status")}
    if (
        stream.get("cut_calls")
        or any(note.get("type") == CUT for note in notes)
        or CUT in statuses
    ):
        return CUT
    if INCOMPLETE in statuses:
        return INCOMPLETE
    if broken and CORRUPT in statuses:
        return CORRUPT
    first = notes[0] if notes else {}
    return str(first.get("type") or first.get("code") or "error")


def is_context_overflow(error: ProviderError) -> bool:
    """Whether a provider refused the request for being longer than the model's context window."""
    text = " ".join(
        str(value).lower()
        for value in (error.type, error.code, error.message)
        if value is not None
    )
    return any(marker in text for marker in _OVERFLOW_MARKERS)


def partial_text(response: Response | ProviderError | None, streamed: str) -> str:
    """The answer text that arrived before a call failed: the aggregated message's, else the deltas seen."""
    answer = response.raw if isinstance(response, ProviderError) else response
    if isinstance(answer, Response):
        texts = [
            str(part["text"])
            for part in parts_of(answer.message.get("content"))
            if part.get("type") == "text" and isinstance(part.get("text"), str)
        ]
        if any(texts):
            return "".join(texts)
    return streamed


def incomplete_message(text: str, kind: str) -> dict[str, Any]:
    """The partial answer as an assistant message, marked incomplete; no tool call, whatever had begun."""
    return {
        "role": "assistant",
        "content": text,
        "extras": {"toolgen": {"incomplete": True, "reason": kind}},
    }


def _message_text(message: dict[str, Any]) -> int:
    size = 0
    for part in parts_of(message.get("content")):
        text = part.get("text")
        size += (
            len(text) if isinstance(text, str) else len(json.dumps(part, default=str))
        )
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        size += len(str(function.get("name", ""))) + len(
            str(function.get("arguments", ""))
        )
    return size


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A cheap token estimate of a conversation: its characters over four, plus a few for each message."""
    characters = sum(_message_text(message) for message in messages)
    return -(-characters // _CHARS_PER_TOKEN) + _TOKENS_PER_MESSAGE * len(messages)


def token_counter(encode: Callable[[str], Sequence[Any]]) -> TokenEstimate:
    """A token estimate that counts with a real tokenizer's `encode` (tiktoken's, a Hugging Face tokenizer's)."""

    def count(messages: list[dict[str, Any]]) -> int:
        total = 0
        for message in messages:
            total += _TOKENS_PER_MESSAGE
            for part in parts_of(message.get("content")):
                text = part.get("text")
                if isinstance(text, str):
                    total += len(encode(text))
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                total += len(encode(str(function.get("arguments", ""))))
        return total

    return count


def stream_failure(response: Response, ended: str | None = None) -> ProviderError:
    """A response whose stream broke off or carried an error, as the error to stop the run with.

    A stream cut inside a tool call says so first: that call's arguments never arrived whole, so no call of the
    answer runs, and the model is not asked to go on from half a message. So does an incomplete stream: what
    it dropped or guessed comes first, and none of its calls runs either, nor those of a corrupt one.
    """
    stream = response.extras.get("stream") or {}
    notes = [note for note in stream.get("errors") or () if isinstance(note, dict)]
    if stream.get("cut_calls"):
        notes = [note for note in notes if note.get("type") == CUT] + notes
    elif stream.get("status") == INCOMPLETE:
        notes = [note for note in notes if note.get("type") == INCOMPLETE] + notes
    first = notes[0] if notes else {}
    message = str(first.get("message") or "the model's response ended with an error")
    status = stream.get("status") or ended
    if first.get("type") is None and status in (CUT, CORRUPT):
        # A fault the stream state gave no type (a payload that was not JSON): named by how the stream ended.
        first = {**first, "type": status}
    return ProviderError(
        "stream", message, type=first.get("type"), code=first.get("code"), raw=response
    )
