# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The stream state for Gemini generateContent (SSE, JSON lines or a JSON array).

Gemini chunks are whole response objects: their parts merge into one GenerateContentResponse (adjacent text of
the same kind joins; a later signature attaches to the text before it). Gemini 3 streams call arguments as
`partialArgs` entries (`jsonPath` plus a string, number, bool or null value; `willContinue` on a string means more
of it follows) between a `functionCall {name, willContinue: true}` and a closing `functionCall {}`; they are
rebuilt into the call's `args` object, and rendered live as JSON text while paths arrive in document order.
There are no call indexes: consecutive calls are told apart by order only.

A call that arrives whole is closed as it arrives; a streamed one is closed by its closing `functionCall {}`, by
the next call beginning, or by the candidate's `finishReason`, and cut when the body ends first. Only a part with no
name and nothing but `partialArgs` and `willContinue` goes on with a streamed call (or, empty, closes it): a nameless
part with `args` is a call whose name never came, kept (named "" in the message) and the stream incomplete. A
`partialArgs` entry the arguments cannot take as sent (a jsonPath that is no path, an entry with no value, a path
sent again with another value, a path that clashes with another) makes the stream incomplete, its StreamError naming
the jsonPath. Arguments that are JSON but no object make the stream corrupt (the call keeps their text), as the same
body fetched whole is refused.

The answer is over when every candidate has said its `finishReason`. Only the first candidate's calls are events; a
streamed call of another candidate the body ended inside is cut all the same (out of that candidate's parts), said
by a `StreamError` that names its candidate and holds the text that arrived, and listed by `more_cut_calls()` as
`cut_calls` lists the first candidate's, with a `candidate` key; `index` is the call's position among its
candidate's calls.

Repeats and new calls: chunks carry no sequence number and no index, and every chunk repeats the same `responseId`.
What the wire does mark are parts: a `thoughtSignature` is an opaque blob made for one part, and a call `id` (where
one is sent) names one call, so a part carrying a signature or call id already seen is that part again (dropped;
when it is not that very part, dropped in doubt), and a call under a new id is a new call. What the order cannot
settle makes the stream incomplete: a chunk with content after its candidate's `finishReason` that is no such
repeat and not the finishing chunk again (a candidate sends `finishReason` once) is dropped (a repeat, or a chunk
out of order), `partialArgs` with no streamed call open (dropped: the call's start never came), a chunk with
neither candidates, usage nor the prompt's feedback (it lost what it held), and a streamed call closed by the next
call or by `finishReason` instead of its closing `functionCall {}`. A repeated or swapped chunk of plain text, of an
unsigned whole call or of `partialArgs` cannot be told from what a model may send, and is taken as it came; a lost
chunk, of a signed call too, leaves no evidence (`finishReason` is STOP with calls or without).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, ClassVar

from ...streams.events import dumps_compact
from ...streams.shapes import KnownShapes
from ...streams.state import Call, WireState
from ..canonical import ProviderError, Response
from .codec import decode_response
from .stream_args import PartialArgs, parse_json_path
from .stream_shapes import gemini

__all__ = ["GeminiState", "PartialArgs", "parse_json_path"]

_CANDIDATE_SKIP = frozenset({"content"})
_TEXT_PART_KEYS = frozenset({"text", "thought", "thoughtSignature"})
# The keys of a streamed call's own later parts: more partialArgs, or (with neither) its closing `functionCall {}`.
_GOING_ON = frozenset({"partialArgs", "willContinue"})


class _Candidate:
    __slots__ = (
        "args",
        "call",
        "calls",
        "entry",
        "fields",
        "final",
        "finished",
        "index",
        "parts",
        "primary",
        "role",
        "streamed",
    )

    def __init__(self, index: int, primary: bool) -> None:
        self.index = index
        self.primary = primary
        self.role: str | None = None
        # Each entry is [part dict, text fragments or None].
        self.parts: list[list[Any]] = []
        self.fields: dict[str, Any] = {}
        self.call: Call | None = None
        # How many calls the candidate has begun: the position of its next one.
        self.calls = 0
        self.args: PartialArgs | None = None
        self.streamed: dict[str, Any] | None = None
        # The parts entry of the call being streamed, taken out again if the call is cut.
        self.entry: list[Any] | None = None
        self.finished = False
        # The candidate as its finishReason chunk carried it: that chunk again is a repeat.
        self.final: Any = None


class GeminiState(WireState):
    """GenerateContentResponse chunks in, one merged GenerateContentResponse out."""

    wire = "gemini"
    object_arguments = True
    end_signal = "a finishReason"
    # Its common reads, taken by one pattern each (see `shapes`).
    known_shapes: ClassVar[KnownShapes] = MappingProxyType({"sse": gemini})
    call_end_signal = "its closing functionCall"

    def __init__(self) -> None:
        super().__init__()
        self.head: dict[str, Any] = {}
        self.candidates: dict[int, _Candidate] = {}
        # Thought signatures and call ids seen, each to the one part it marks: that part again is a repeat.
        self.marks: dict[str, Any] = {}
        # Cut calls of the candidates after the first, as `cut_calls` entries with their candidate's index.

    def feed(self, event: str | None, data: Any) -> None:
        if "error" in data and "candidates" not in data:
            error = data.get("error") or {}
            detail = error if isinstance(error, dict) else {"message": error}
            code = detail.get("code")
            self.fail(
                str(detail.get("message") or error),
                code=None if code is None else str(code),
                type=detail.get("status"),
                status=code if isinstance(code, int) else None,
                raw=data,
            )
            return
        if (
            "candidates" not in data
            and "usageMetadata" not in data
            and "promptFeedback" not in data
        ):
            # Every chunk holds candidates, the usage or the prompt's feedback: this one lost what it held.
            self.doubt(
                "a chunk without candidates, usage or feedback: whatever it held is lost",
                data,
            )
        if not self.started:
            self.begin(data.get("responseId"), data.get("modelVersion"))
        for key, value in data.items():
            if key == "candidates":
                for candidate in value or ():
                    self._candidate(candidate)
            else:
                self.head[key] = value
        feedback = data.get("promptFeedback")
        if (
            feedback is not None
            and not self.candidates
            and isinstance(feedback, dict)
            and isinstance(feedback.get("blockReason"), str)
        ):
            # The prompt was blocked: no candidate comes, and this chunk is the whole answer.
            self.complete = True

    def _candidate(self, data: dict[str, Any]) -> None:
        index = data.get("index") or 0
        candidate = self.candidates.get(index)
        if candidate is None:
            candidate = self.candidates[index] = _Candidate(index, not self.candidates)
            # A candidate that begins has its finishReason to say yet.
            self.complete = False
        content = data.get("content")
        if content and candidate.finished:
            if data == candidate.final:
                self.repeat()  # finishReason comes once a candidate: this is the finishing chunk again
            else:
                self._after_finish(content)
            return
        if content:
            candidate.role = content.get("role") or candidate.role
            for part in content.get("parts") or ():
                self._part(candidate, part)
        for key, value in data.items():
            if key not in _CANDIDATE_SKIP:
                candidate.fields[key] = value
        if data.get("finishReason") is not None:
            candidate.finished = True
            self.complete = all(other.finished for other in self.candidates.values())
            candidate.final = data
            if candidate.args is not None:
                self._unclosed(candidate, "the finishReason")
                self._end_streamed(candidate)

    def _after_finish(self, content: dict[str, Any]) -> None:
        """Content of a finished candidate: a repeat when every part is one already taken (or empty); else
        dropped, in doubt."""
        marks = self.marks
        for part in content.get("parts") or ():
            if not isinstance(part, dict):
                continue
            call = part.get("functionCall")
            named = [
                mark
                for mark in (
                    part.get("thoughtSignature"),
                    call.get("id") if isinstance(call, dict) else None,
                )
                if isinstance(mark, str) and mark
            ]
            if named and all(marks.get(mark) == part for mark in named):
                continue
            if part.get("text") or call or len(part) > 1:
                self.presumed_repeat(
                    "content after the candidate's finishReason", content
                )
                return
        self.repeat()

    def _unclosed(self, candidate: _Candidate, by: str) -> None:
        call = candidate.call
        index = "" if call is None else f" {call.index}"
        whose = "" if candidate.primary else f"candidate {candidate.index}'s "
        self.doubt(
            f"{whose}streamed call{index} was closed by {by}: its closing functionCall never came"
        )

    def _seen(self, part: dict[str, Any]) -> bool:
        """Whether the part carries a signature or call id of a part already taken (and if not, remember them);
        a part under a mark taken that is not that part is dropped in doubt."""
        call = part.get("functionCall")
        if "thoughtSignature" not in part and (
            not isinstance(call, dict) or "id" not in call
        ):
            return False  # nothing marks it (most text parts): nothing to look up or remember
        marks = [
            mark
            for mark in (
                part.get("thoughtSignature"),
                call.get("id") if isinstance(call, dict) else None,
            )
            if isinstance(mark, str) and mark
        ]
        taken = [self.marks[mark] for mark in marks if mark in self.marks]
        if taken:
            if any(other != part for other in taken):
                self.doubt(
                    "a part under a thoughtSignature or call id already taken, with other content: dropped",
                    part,
                )
            return True
        self.marks.update((mark, part) for mark in marks)
        return False

    def _part(self, candidate: _Candidate, part: dict[str, Any]) -> None:
        if self._seen(part):
            self.repeat()
            return
        call = part.get("functionCall")
        if call is not None:
            self._function_call(candidate, part, call)
            return
        text = part.get("text")
        if text is None:
            candidate.parts.append([dict(part), None])
            return
        signature = part.get("thoughtSignature")
        if not text and signature is None and len(part) == 1:
            return  # the empty text part Gemini sends with finishReason
        thought = bool(part.get("thought"))
        last = candidate.parts[-1] if candidate.parts else None
        if (
            last is not None
            and last[1] is not None
            and bool(last[0].get("thought")) == thought
            and "thoughtSignature" not in last[0]
            and part.keys() <= _TEXT_PART_KEYS
        ):
            last[1].append(text)
            if signature is not None:
                last[0]["thoughtSignature"] = signature
        else:
            candidate.parts.append([dict(part), [text]])
        if text and candidate.primary:
            if thought:
                self.reasoning(text)
            else:
                self.text(text)

    def _function_call(
        self, candidate: _Candidate, part: dict[str, Any], call: dict[str, Any]
    ) -> None:
        name = call.get("name")
        partial = call.get("partialArgs")
        continues = bool(call.get("willContinue"))
        if name is None and not call.keys() <= _GOING_ON:
            # Arguments (or an id) without a name: a call whose name never came, not a streamed call's own part.
            if candidate.args is not None:
                self._unclosed(candidate, "a call without a name")
                self._end_streamed(candidate)
            candidate.parts.append([dict(part), None])
            self._whole_call(candidate, call)
            return
        if candidate.args is not None and name is None:
            if partial:
                self._partial(candidate, partial)
            if not continues:
                self._end_streamed(candidate)
            return
        if candidate.args is not None:
            self._unclosed(candidate, "the next call")
            self._end_streamed(candidate)
        if name is None:
            if partial:
                self.doubt("partialArgs came with no streamed call open: dropped", call)
            return  # else a closing `functionCall {}` with no call open
        if continues or partial:
            self._start_streamed(candidate, part, call)
            if partial:
                self._partial(candidate, partial)
            if not continues:
                self._end_streamed(candidate)
            return
        candidate.parts.append([dict(part), None])
        self._whole_call(candidate, call)

    def _new_call(self, candidate: _Candidate, call: dict[str, Any]) -> Call:
        position = candidate.calls
        candidate.calls += 1
        if candidate.primary:
            return self.open_call(call.get("id"), call.get("name"))
        return Call(position, call.get("id"), call.get("name"))

    def _whole_call(self, candidate: _Candidate, data: dict[str, Any]) -> None:
        call = self._new_call(candidate, data)
        args = data.get("args")
        text = dumps_compact(args) if args is not None else ""
        if text and candidate.primary:
            self.arguments(call, text)
        self._finish_call(candidate, call, text)
        nameless = type(data.get("name")) is not str
        if nameless:
            whose = "" if candidate.primary else f"candidate {candidate.index}'s "
            self.doubt(
                f"{whose}tool call {call.index} has no name: a functionCall part without its name",
                data,
            )
        elif call.error is not None and call.value is not None and candidate.primary:
            # Arguments that are JSON but no object: the same body fetched whole is refused (a ValueError), so the
            # stream is corrupt, as on the other wires whose calls carry an object; the call keeps its text.
            self.fault(f"tool call {call.index} ({call.name}): {call.error}", raw=args)
        if (call.error is not None and args is not None) or nameless:
            # The decoder reads the part's args: ones no call can take (a number JSON cannot carry, or no object)
            # stand as {} there, and the call's own text is put back after (ending._patch_arguments); a missing name
            # stands as "", what a call without one reads as.
            entry = candidate.parts[-1][0]
            if entry.get("functionCall") is data:
                fixed = {**data, "name": ""} if nameless else dict(data)
                if call.error is not None and args is not None:
                    fixed["args"] = {}
                entry["functionCall"] = fixed

    def _finish_call(self, candidate: _Candidate, call: Call, text: str) -> None:
        if candidate.primary:
            self.close_call(call, text)
        else:
            call.closed = True
            self.settle(call, text)

    def _start_streamed(
        self, candidate: _Candidate, part: dict[str, Any], call: dict[str, Any]
    ) -> None:
        streamed = {
            key: value
            for key, value in call.items()
            if key not in ("willContinue", "partialArgs")
        }
        entry = {key: value for key, value in part.items() if key != "functionCall"}
        entry["functionCall"] = streamed
        candidate.entry = [entry, None]
        candidate.parts.append(candidate.entry)
        candidate.streamed = streamed
        candidate.call = self._new_call(candidate, call)
        candidate.args = PartialArgs()

    def _partial(self, candidate: _Candidate, entries: list[dict[str, Any]]) -> None:
        assert candidate.args is not None and candidate.call is not None
        for entry in entries:
            text = candidate.args.apply(entry)
            if text:
                if candidate.primary:
                    self.arguments(candidate.call, text)
                else:
                    # No events for this candidate; the text is kept for its note should the call be cut.
                    candidate.call.parts.append(text)

    def _end_streamed(self, candidate: _Candidate) -> None:
        args, call, streamed = candidate.args, candidate.call, candidate.streamed
        candidate.args = candidate.call = candidate.streamed = candidate.entry = None
        assert args is not None and call is not None and streamed is not None
        tail = args.close()
        if tail and candidate.primary:
            self.arguments(call, tail)
        value = args.build()
        if args.problems:
            whose = "" if candidate.primary else f"candidate {candidate.index}'s "
            for problem in args.problems:
                self.doubt(f"{whose}tool call {call.index} ({call.name}): {problem}")
        if args.values:
            streamed["args"] = value
        # The arguments are the object's JSON, whether or not the live text kept up with it.
        text = dumps_compact(value)
        self._finish_call(candidate, call, text)
        if call.error is not None and args.values:
            streamed["args"] = {}

    def finish(self) -> None:
        for candidate in self.candidates.values():
            if candidate.call is not None:
                self._cut_streamed(candidate, candidate.call)
        super().finish()

    def _cut_streamed(self, candidate: _Candidate, call: Call) -> None:
        """A streamed call the body ended inside: cut, and out of the candidate's parts."""
        candidate.parts = [
            entry for entry in candidate.parts if entry is not candidate.entry
        ]
        candidate.args = candidate.call = candidate.streamed = candidate.entry = None
        if candidate.primary:
            self.cut_call(call)
            return
        self.cut_in_other_answer("candidate", candidate.index, call)

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "candidates": [
                self._candidate_body(self.candidates[i])
                for i in sorted(self.candidates)
            ]
        }
        body.update(self.head)
        return body

    @staticmethod
    def _candidate_body(candidate: _Candidate) -> dict[str, Any]:
        parts = [
            part if fragments is None else {**part, "text": "".join(fragments)}
            for part, fragments in candidate.parts
        ]
        body: dict[str, Any] = {
            "content": {"parts": parts, "role": candidate.role or "model"}
        }
        body.update(candidate.fields)
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body, cut=not self.complete)
