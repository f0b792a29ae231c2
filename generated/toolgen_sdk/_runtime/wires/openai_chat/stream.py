# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Stream state for OpenAI Chat Completions and the wires that copy it (Groq, xAI, DeepSeek, Qwen, Mistral, ...).

Chunks accumulate into a `chat.completion` body: deltas per choice, tool call fragments per slot, usage from
whichever chunk carries it (its own `choices: []` chunk or the finish chunk).

A call is closed by its choice's `finish_reason`, by a later call of the same choice beginning (calls stream one
after the other), or by `[DONE]`; a call still open when the body ends is cut. Arguments a compatible sends as a
JSON value rather than its text are that value's compact JSON text, as the decoder makes them of a whole response.

The answer is over when every choice has said its `finish_reason` (`[DONE]` ends the stream, not the answer: a
choice that never said one makes it incomplete). Only the first choice's calls are events; a call of another
choice the body ended inside is cut all the same, said by a `StreamError` that names its choice and holds the text
that arrived, and listed by `more_cut_calls()` as `cut_calls` lists the first choice's, with a `choice` key.

Per-call data beside a call's fragments (Gemini's compatible endpoint sends `extra_content` with its thought
signature) is merged into that call's entry, and indexed reasoning entries (OpenRouter's `reasoning_details`: text
in some deltas, the signature in a later one) are merged by their `index`, so the body holds each whole entry as
the provider's own clients send it back. The head (id, model, created, fingerprint) takes each value from the
first chunk that carries one: Azure opens with a `prompt_filter_results` chunk whose id and model are empty.

Repeats and new calls: OpenAI pads every chunk with a random `obfuscation` string, so a chunk whose `obfuscation`
and whole payload equal an earlier chunk's is that chunk again, dropped. A call is named by its `tool_calls` index
and its id: an entry at an index already used under another id is a new call (the one before it is over), never a
repeat; an entry without an id (or with Qwen's empty one) goes on with the call at its index. A choice says nothing
after its `finish_reason`, which it says once: a later delta that carries nothing, or that comes with a
`finish_reason` again (the finishing chunk again), is dropped as a repeat, and one that carries text or arguments
is dropped in doubt (a repeat, or a delta out of order), making the stream incomplete. Other compatibles put no
per-chunk mark on their chunks (each repeats the response id and the same `created` second), so two equal deltas
from them are both kept: a delta sent twice doubles its text, and a delta lost, or two swapped, leave no evidence
on any server, OpenAI's included, unless the arguments stop parsing (`corrupt`). A name in a later entry of a
call is read by `_name`; a custom tool's entries (`custom: {name, input}`) stream its input text. A call whose naming entry never
came has no name, and a chunk with neither choices nor usage lost what it held: either makes the stream incomplete.

Usage asked for (`stream_options.include_usage`) comes in a last chunk of its own, `choices: []` beside the
`usage`, and every chunk before it carries `"usage": null`: a stream whose chunks carried that key, that ended
without a usage object, lost its usage. The answer is whole, so the status stands and a note under
`extras["stream"]["notes"]` says so; a stream that never carried the key (usage not asked for) gets no note. The key
is looked for on the chunks the general path reads (the first and the finishing ones among them), never on the
inline path's.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, ClassVar

from ...streams.events import (
    ToolCallDelta,
    dumps_compact,
    new_object,
    parse_json,
    set_delta_arguments,
    set_delta_index,
)
from ...streams.shapes import KnownShapes
from ...streams.state import USAGE_MISSING, Call, WireState, carries
from ..canonical import ProviderError, Response
from ..helpers import args_text
from .codec import decode_response
from .stream_body import choice_body, plain_response
from .stream_choice import (
    AUDIO_PIECES,
    Choice,
    add_part,
    empty,
    keep_call_data,
    merge_entry,
    merge_indexed,
)
from .stream_shapes import openai_chat

_REASONING_KEYS = ("reasoning_content", "reasoning")
# Delta keys that only describe the chunk, not the message.
_CHUNK_ONLY_KEYS = frozenset({"channel", "index", "obfuscation"})
_HEAD_SKIP = frozenset({"choices", "usage", "obfuscation", "object"})


class OpenAIChatState(WireState):
    """chat.completion.chunk payloads in, one chat.completion body out."""

    wire = "openai-chat"
    end_signal = "a finish_reason or [DONE]"
    # Its common reads, taken by one pattern each (see `shapes`).
    known_shapes: ClassVar[KnownShapes] = MappingProxyType({"sse": openai_chat})
    call_end_signal = "a finish_reason or the next call"

    def __init__(self, wire: str | None = None) -> None:
        super().__init__(wire)
        self.head: dict[str, Any] = {}
        self.head_open = True
        self.choices: dict[int, Choice] = {}
        # The choice whose deltas become events (the first one seen), set with the first choice.
        self.primary: Choice | None = None
        self.usage: Any = None
        # A chunk carried a `usage` key with no usage in it: include_usage's `"usage": null`, so usage was asked for.
        self.usage_asked = False
        # obfuscation mark -> the chunk that carried it: its JSON text, or its payload when it came decoded
        self.marks: dict[str, Any] = {}
        self.done = False
        # The calls of custom tools (`type: custom`): their text is free input, not JSON arguments.
        self.custom_calls: set[Call] = set()

    def feed(self, event: str | None, data: Any) -> None:
        mark = data.get("obfuscation")
        if type(mark) is str:
            marks = self.marks
            seen = marks.get(mark)
            if seen is not None and _same(seen, data, self.payload_text):
                self.repeat()
                return
            # The chunk's text rather than its payload where the text came along: pads are new on every chunk, so
            # what is kept is almost never looked at again, and one bytes object is cheaper to keep than a tree of
            # dicts and lists that the garbage collector walks.
            text = self.payload_text
            marks[mark] = data if text is None else text
        choices = data.get("choices")
        choice = self.primary
        if choices and choice is not None and len(choices) == 1:
            # Most chunks carry one argument fragment or one text delta: handled inline, since this runs once per
            # chunk; anything else (or anything odd) takes the general path below.
            entry = choices[0]
            delta = entry.get("delta")
            if (
                delta
                and len(delta) == 1
                and not (
                    entry.get("finish_reason")
                    or entry.get("logprobs")
                    or data.get("usage")
                )
                and (entry.get("index") or 0) == choice.index
                and choice.finish is None
            ):
                calls = delta.get("tool_calls")
                if calls is not None:
                    if len(calls) == 1:
                        call_entry = calls[0]
                        function = call_entry.get("function")
                        if (
                            len(call_entry) == 2
                            and function is not None
                            and len(function) == 1
                        ):
                            call = choice.slots.get(call_entry.get("index"))
                            fragment = function.get("arguments")
                            if (
                                call is not None
                                and type(fragment) is str
                                and not call.closed
                            ):
                                if fragment:
                                    call.parts.append(fragment)
                                    made = new_object(ToolCallDelta)
                                    set_delta_index(made, call.index)
                                    set_delta_arguments(made, fragment)
                                    self.out.append(made)
                                return
                else:
                    content = delta.get("content")
                    if type(content) is str and choice.parts is None:
                        choice.saw_content = True
                        if content:
                            choice.content.append(content)
                            self.text(content)
                        return
        self._general(event, data, choices)

    def _general(self, event: str | None, data: dict[str, Any], choices: Any) -> None:
        if choices is None and (event == "error" or data.get("error") is not None):
            self._error(data)
            return
        if choices is None and not data.get("usage"):
            # Every chunk has its choices (an empty list at least), or is the usage: this one lost what it held.
            self.doubt("a chunk without choices or usage: what it held is lost", data)
        if self.head_open:
            self._head(data)
        if not self.started and (choices or data.get("id") or data.get("usage")):
            self.begin(self.head.get("id"), self.head.get("model"))
        if choices:
            for choice in choices:
                self._choice(choice)
        usage = data.get("usage")
        if usage:
            self.usage = usage
        elif "usage" in data:
            self.usage_asked = True

    def _head(self, data: dict[str, Any]) -> None:
        """Head fields from the first chunk that gives each a value: a preamble's empty ones are placeholders."""
        head = self.head
        for key, value in data.items():
            if key not in _HEAD_SKIP and (
                key not in head or (empty(head[key]) and not empty(value))
            ):
                head[key] = value
        # Once a chunk has given the id, model and created time (the head values every real chunk carries, which
        # a preamble chunk leaves empty), later chunks only repeat the head.
        self.head_open = (
            empty(head.get("id"))
            or empty(head.get("model"))
            or empty(head.get("created"))
        )

    def _choice(self, data: dict[str, Any]) -> None:
        index = data.get("index") or 0
        choice = self.choices.get(index)
        if choice is None:
            choice = self.choices[index] = Choice(index, not self.choices)
            choice.logprobs_key = "logprobs" in data
            if not self.done:
                # A choice that begins has its finish_reason to say yet.
                self.complete = False
            if choice.primary:
                self.primary = choice
        delta = data.get("delta")
        if delta and choice.finish is not None:
            # finish_reason comes once a choice: a chunk carrying it again is the finishing chunk again.
            if carries(delta, "role") and not data.get("finish_reason"):
                self.presumed_repeat(f"choice {index}'s delta after its finish", data)
            else:
                self.repeat()
            return
        if delta:
            calls = delta.get("tool_calls")
            if calls is not None and len(delta) == 1:
                for entry in calls:
                    self._tool_call(choice, entry)
            else:
                self._delta(choice, delta)
        finish = data.get("finish_reason")
        if finish:
            choice.finish = finish
            self._close_choice(choice)
        logprobs = data.get("logprobs")
        if logprobs:
            choice.logprobs.append(logprobs)

    def _delta(self, choice: Choice, delta: dict[str, Any]) -> None:
        for key, value in delta.items():
            if value is None:
                continue
            if key == "tool_calls":
                for entry in value:
                    self._tool_call(choice, entry)
            elif key == "content":
                self._content(choice, value)
            elif key in _REASONING_KEYS:
                if value:
                    choice.reasoning_key = key
                    choice.reasoning.append(value)
                    if choice.primary:
                        self.reasoning(value)
            elif key == "role":
                choice.role = value
            elif key == "refusal":
                choice.refusal.append(value)
            elif key == "function_call":
                self._function_call(choice, value)
            elif key == "reasoning_details" and isinstance(value, list):
                merge_indexed(choice.extra.setdefault(key, []), value)
            elif key == "audio" and isinstance(value, dict):
                # Audio output streams its data and transcript in pieces, its id and expiry whole.
                merge_entry(choice.extra.setdefault(key, {}), value, AUDIO_PIECES)
            elif key not in _CHUNK_ONLY_KEYS:
                choice.extra[key] = value

    def _content(self, choice: Choice, value: Any) -> None:
        choice.saw_content = True
        if isinstance(value, str):
            if not value:
                return
            if choice.parts is None:
                choice.content.append(value)
            else:
                add_part(choice.parts, "text", value)
            if choice.primary:
                self.text(value)
            return
        if choice.parts is None:
            # Typed chunks after plain text: the text so far becomes the first text part.
            choice.parts = [["text", choice.content]] if choice.content else []
        for chunk in value:
            self._content_chunk(choice, chunk)

    def _content_chunk(self, choice: Choice, chunk: Any) -> None:
        assert choice.parts is not None
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind == "text":
            text = chunk.get("text") or ""
            add_part(choice.parts, "text", text)
            if text and choice.primary:
                self.text(text)
        elif kind == "thinking":
            for inner in chunk.get("thinking") or ():
                text = inner.get("text") or "" if isinstance(inner, dict) else ""
                add_part(choice.parts, "thinking", text)
                if text and choice.primary:
                    self.reasoning(text)
        else:
            choice.parts.append(["raw", chunk])

    def _tool_call(self, choice: Choice, entry: dict[str, Any]) -> None:
        slot = entry.get("index")
        call_id = entry.get("id") or None
        custom = entry.get("custom")
        # A custom tool's call streams its free-text `input` under `custom`, as the whole response holds it.
        function = custom if type(custom) is dict else entry.get("function") or {}
        name = function.get("name") or None
        if slot is None:
            call = self._unindexed(choice, call_id)
            slot = ("unindexed", len(choice.calls)) if call is None else None
        else:
            call = choice.slots.get(slot)
        if call is None or (
            call_id is not None and call.id is not None and call_id != call.id
        ):
            # A slot reused by a different call id is a new call; the one before it is over.
            if call is not None:
                self._close(choice, call)
            call = self._new_call(choice, call_id, name)
            if slot is not None:
                choice.slots[slot] = call
            if function is custom:
                self.custom_calls.add(call)
        elif call.closed:
            return
        else:
            if call.id is None and call_id is not None:
                call.id = call_id
            if name is not None and name != call.name:
                self._name(call, name)
        if len(entry) > 2 or len(function) > 1:
            keep_call_data(call, entry, function)
        choice.last = call
        if call in self.custom_calls:
            text = custom.get("input") if type(custom) is dict else None
            if text is not None and type(text) is not str:
                self.not_text("a custom tool call's input", text)
            elif text:
                if choice.primary:
                    self.arguments(call, text)
                else:
                    call.parts.append(text)
            return
        fragment = function.get("arguments")
        if fragment is not None and type(fragment) is not str:
            fragment = self._value_arguments(call, fragment)
        if fragment:
            if choice.primary:
                self.arguments(call, fragment)
            else:
                call.parts.append(fragment)

    def _name(self, call: Call, name: str) -> None:
        """A later delta's name for a call already named. OpenAI sends the name whole in the call's first delta;
        OpenAI's Python SDK joins the name pieces of later deltas, as Gemini's compatible endpoint sends them, and
        some servers (MiniMax on NVIDIA NIM) send the whole name again in every delta: the same name again is
        that, a piece is joined on, and a piece that begins with the name so far may be either, so it is joined
        on in doubt."""
        have = call.name
        if have is not None and name.startswith(have):
            self.doubt(
                f"tool call {call.index}: its name came as {have!r}, then as {name!r}: the whole name sent"
                f" again longer, or its next piece, cannot be told apart; read as {have + name!r}",
                name,
            )
        call.name = name if have is None else have + name

    @staticmethod
    def _unindexed(choice: Choice, call_id: str | None) -> Call | None:
        """Entries without an index (Mistral, which sends each call whole, under its own id): an entry with an id
        begins a call (an id already taken makes two calls under one id, said at the end), one without continues
        the latest call."""
        if call_id is None:
            return choice.last
        return None

    def _function_call(self, choice: Choice, value: dict[str, Any]) -> None:
        """The legacy `functions` API: one unnamed-id call streamed in delta.function_call."""
        call = choice.function_call
        name = value.get("name") or None
        if call is None:
            call = choice.function_call = self._new_call(choice, None, name)
        elif name is not None and name != call.name:
            self._name(call, name)
        fragment = value.get("arguments")
        if fragment is not None and type(fragment) is not str:
            fragment = self._value_arguments(call, fragment)
        if fragment:
            if choice.primary:
                self.arguments(call, fragment)
            else:
                call.parts.append(fragment)

    def _value_arguments(self, call: Call, value: Any) -> str:
        """Arguments sent as a JSON value, not as its text: the text the decoder makes of that value in a whole
        response. When the value is the call's first fragment the body keeps it as sent, as a whole response does."""
        try:
            text = args_text(value)
        except ValueError:
            # A number past a float's range (1e400) reads as infinity, which no JSON text says: the call keeps the
            # nearest text, and can never run (see settle).
            call.error = "arguments hold a number JSON cannot carry (NaN, or beyond a float's range)"
            self.fault(f"tool call {call.index} ({call.name}): {call.error}", raw=value)
            return dumps_compact(value)
        if not call.parts:
            extra = call.extra if call.extra is not None else {}
            extra.setdefault("function", {})["arguments"] = value
            call.extra = extra
        return text

    def settle(self, call: Call, text: str) -> None:
        if call in self.custom_calls:
            # A custom tool's input is free text; canonical arguments hold it as a JSON string, as decoded whole.
            call.arguments, call.parsed, call.value = args_text(text), text, text
            return
        marked = call.error
        super().settle(call, text)
        if marked is not None:
            # Marked unrunnable as its arguments came: whatever their text parses to, it is not what was sent.
            call.parsed = call.value = None
            call.error = marked

    def _new_call(self, choice: Choice, call_id: str | None, name: str | None) -> Call:
        call = (
            self.open_call(call_id, name)
            if choice.primary
            else Call(len(choice.calls), call_id, name)
        )
        choice.calls.append(call)
        return call

    def _close(self, choice: Choice, call: Call) -> None:
        if choice.primary:
            self.close_call(call)
        elif not call.closed:
            call.closed = True
            self.settle(call, "".join(call.parts))

    def _close_choice(self, choice: Choice) -> None:
        for call in choice.calls:
            self._close(choice, call)
        self.complete = all(other.finish for other in self.choices.values())

    def _error(self, data: dict[str, Any]) -> None:
        error = data.get("error")
        detail = error if isinstance(error, dict) else {"message": error}
        status = detail.get("status_code") or detail.get("status")
        self.fail(
            str(detail.get("message") or error),
            code=_text(detail.get("code")),
            type=_text(detail.get("type")),
            status=status if isinstance(status, int) else None,
            raw=data,
        )

    def done_marker(self) -> None:
        super().done_marker()
        self.done = True

    def finish(self) -> None:
        for choice in self.choices.values():
            last = len(choice.calls) - 1
            for position, call in enumerate(choice.calls):
                if self.done or position < last:
                    self._close(choice, call)
                elif choice.primary:
                    self.cut_call(call)
                elif not call.closed:
                    self.cut_in_other_answer("choice", choice.index, call)
        if self.done and self.provider_error is None:
            self._check_done()
        if (
            self.usage_asked
            and self.usage is None
            and self.complete
            and self.provider_error is None
        ):
            # The answer is whole without it: a note, not a doubt, so a run does not ask again.
            self.note(
                "the chunks carried `usage: null`, so usage was asked for (stream_options.include_usage),"
                " yet no chunk carried the usage: the token counts are missing",
                USAGE_MISSING,
            )

    def _check_done(self) -> None:
        """What a stream that reached [DONE] must have had: each choice's finish_reason."""
        if not self.choices:
            self.doubt("[DONE] came, yet no chunk held a choice (finish_reason)")
        for choice in self.choices.values():
            if choice.finish is None:
                self.doubt(
                    f"no chunk said why choice {choice.index} stopped (finish_reason)"
                )

    def body(self) -> dict[str, Any]:
        body = dict(self.head)
        body["object"] = "chat.completion"
        body["choices"] = [
            choice_body(self.choices[index], self.custom_calls)
            for index in sorted(self.choices)
        ]
        if self.usage is not None:
            body["usage"] = self.usage
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body, self.wire)

    def plain(self) -> Response | None:
        return plain_response(
            self.wire, self.usage, self.choices, self.primary, self.head
        )


def _same(seen: Any, data: dict[str, Any], text: bytes | None) -> bool:
    """Whether a chunk equals the one kept for its mark (as text or payload): a repeat of it."""
    if type(seen) is bytes:
        if seen == text:
            return True
        seen = parse_json(seen)
    return bool(seen == data)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
