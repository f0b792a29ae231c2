# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The stream state for the Google Interactions API: `event_type`-tagged events (`interaction.created`,
`step.start`, `step.delta`, `step.stop`, `interaction.completed`) rebuilt into one interaction with its steps.

A call (a `function_call` step) is closed by its `step.stop`, or by `interaction.completed` carrying the steps;
a call still open when the body ends is cut.

Repeats and new calls: an event's `event_id` (the token a client resumes the stream from) names one event, so an
event whose `event_id` was seen is a repeat, dropped, whatever it holds. Past that, events carry the step index and
no sequence number; a step is named by its index and, for a call, its id. A `step.start` for an index already
started is that step again (a repeat) under the same type and id, and a new step (a new call) under another (the
step that held the index, if still open, is closed there: a call of it is cut); a call at a new index under an id a
call took is that call again (a repeat when its arguments are the call's, else dropped in doubt). A `step.stop` for a step already
stopped, a second `interaction.created` and a second equal `interaction.completed` change nothing and are dropped.
What the index cannot settle makes the stream incomplete: a `step.delta` for a step already stopped (dropped), one
without its index or delta, a delta before its step's start (the step is implied; arguments for no call are lost),
a `step.stop` for a step never started, a `step.start` or `step.stop` without its index (an index is never
guessed: the start's step is lost, the stop closes nothing), a delta a `function_call` step cannot take (text, or a
type not known here: dropped, the call in doubt), a payload that is no Interactions event, anything else after
`interaction.completed`, and, once it came, a missing `interaction.created` or a step index never seen below the
highest one. A delta of a type not known here for a step that is no call is left out, and a note in
`extras["stream"]["notes"]` (type `unknown_delta`) names each such type once. Two equal deltas for an open step
without `event_id`s cannot be told from a model saying the same thing twice, and are both kept; a delta sent twice,
lost, or two swapped inside one step leave no evidence without them.
"""

from __future__ import annotations

from typing import Any

from ...streams.events import dumps_compact
from ...streams.state import WireState, carries, first_gap
from ..canonical import ProviderError, Response
from .codec import decode_response

# The type of the note naming the delta types, of steps that are no call, left out of the message.
UNKNOWN_DELTA = "unknown_delta"


class InteractionsState(WireState):
    """Gemini Interactions API events (`event_type`-tagged) in, one interaction with its steps out."""

    wire = "google-interactions"
    object_arguments = True
    end_signal = "interaction.completed"
    call_end_signal = "its step.stop"

    def __init__(self) -> None:
        super().__init__()
        self.interaction: dict[str, Any] = {"object": "interaction"}
        # The step holding each index now; every step in the order they started (an index may be reused).
        self.steps: dict[int, list[Any]] = {}
        self.order: list[list[Any]] = []
        self.event_ids: set[str] = set()
        self.created = False
        self.completed: Any = None
        # The types of the deltas, of steps no call, that this state does not know and left out: see `finish`.
        self.unknown_deltas: list[Any] = []

    def feed(self, event: str | None, data: Any) -> None:
        kind = data.get("event_type") or event
        event_id = data.get("event_id")
        if type(event_id) is str and event_id:
            if event_id in self.event_ids:
                self.repeat()
                return
            self.event_ids.add(event_id)
        if self.complete and kind != "error":
            self._after_end(kind, data)
        elif kind == "step.delta":
            self._delta(data)
        elif kind == "step.start":
            self._step_start(data)
        elif kind == "step.stop":
            index = data.get("index")
            step = self.steps.get(index)
            if index is None:
                self.doubt(
                    "a step.stop without its index: no step is closed by it", data
                )
            elif step is None:
                self.doubt(
                    f"step.stop for step {index}, which never started: whatever it held is lost",
                    data,
                )
            elif step[3]:
                self.repeat()
            else:
                self._stop(step)
        elif kind == "interaction.created":
            if self.created:
                self.repeat()
                return
            self.created = True
            self.interaction.update(data.get("interaction") or {})
            self.begin(self.interaction.get("id"), self.interaction.get("model"))
        elif kind == "interaction.status_update":
            if data.get("status"):
                self.interaction["status"] = data["status"]
        elif kind == "interaction.completed":
            self.completed = data
            self.interaction.update(data.get("interaction") or {})
            self.complete = True
        elif kind == "error":
            error = data.get("error") or {}
            detail = error if isinstance(error, dict) else {"message": error}
            self.fail(
                str(detail.get("message") or error),
                code=detail.get("code"),
                type=detail.get("status"),
                raw=data,
            )
        else:
            self.doubt(
                f"a payload that is no Interactions stream event ({kind}): dropped",
                data,
            )

    def _after_end(self, kind: str | None, data: dict[str, Any]) -> None:
        """An event after interaction.completed: a repeat when it changes nothing taken; else dropped, in doubt."""
        index = data.get("index")
        step = self.steps.get(index) if type(index) is int else None
        harmless = (
            (kind == "interaction.completed" and data == self.completed)
            or kind in ("interaction.created", "interaction.status_update")
            or (kind == "step.stop" and step is not None and step[3])
            or (
                kind == "step.start"
                and step is not None
                and data.get("step") == step[4]
            )
            or (kind == "step.delta" and not carries(data.get("delta")))
        )
        if harmless:
            self.repeat()
        else:
            self.presumed_repeat(f"{kind} after interaction.completed", data)

    def _step_start(self, data: dict[str, Any]) -> None:
        index = data.get("index")
        if type(index) is not int:
            self.doubt("a step.start without its index: its step is lost", data)
            return
        held = self.steps.get(index)
        if held is None:
            self._start(data)
            return
        step = data.get("step") or {}
        if held[4] is None:
            # The start comes after a delta already implied its step (in doubt then): it says what the step is.
            held[4] = dict(step)
            held[0] = {**held[0], **step}
            if step.get("type") == "function_call" and held[2] is None:
                held[2] = self.open_call(step.get("id"), step.get("name"))
            return
        if _identity(step) != _identity(held[4]):
            # Another step at an index already used: a new step (a new call), never a repeat.
            if not held[3]:
                self._close_early(held, index)
            self._start(data)
        elif step == held[4]:
            self.repeat()
        else:
            self.presumed_repeat(
                f"step.start for step {index} again, with other content", data
            )

    def _close_early(self, entry: list[Any], index: int) -> None:
        """A step whose index a new step took before its step.stop came."""
        call = entry[2]
        entry[3] = True
        if call is not None and not call.closed:
            self.cut_call(call)
        else:
            self._stop(entry)
            self.doubt(f"step {index} was replaced before its step.stop")

    def _start(self, data: dict[str, Any], implied: bool = False) -> None:
        step = dict(data.get("step") or {})
        # [step, text fragments, call, stopped, the step its start carried (None when implied)]
        entry: list[Any] = [step, [], None, False, None if implied else dict(step)]
        self.steps[data["index"]] = entry
        self.order.append(entry)
        if step.get("type") == "function_call":
            first = self.holder(step.get("id"))
            if first is None:
                entry[2] = call = self.open_call(step.get("id"), step.get("name"))
            else:
                # A call again under an id taken at another index: weighed against that call at its step.stop.
                entry[2] = call = self.open_twin(first, first.id, step.get("name"))
            arguments = step.get("arguments")
            if isinstance(arguments, dict) and arguments:
                arguments = dumps_compact(arguments)
            if isinstance(arguments, str) and arguments:
                if call.twin is None:
                    self.arguments(call, arguments)
                else:
                    call.parts.append(arguments)
        else:
            for item in step.get("content") or ():
                if (
                    isinstance(item, dict)
                    and item.get("type") == "text"
                    and item.get("text")
                ):
                    self._text(entry, str(item["text"]))

    def _delta(self, data: dict[str, Any]) -> None:
        index = data.get("index", 0)
        delta = data.get("delta")
        if type(delta) is not dict or not delta or "index" not in data:
            self.doubt(
                "a step.delta without its index or delta: whatever it held is lost",
                data,
            )
            return
        entry = self.steps.get(index)
        if entry is None:
            self.doubt(f"a step.delta for step {index} came before its step.start")
            self._start({"index": index, "step": {"type": "model_output"}}, True)
            entry = self.steps[index]
        elif entry[3]:
            if carries(delta):
                self.presumed_repeat(
                    f"a step.delta for step {index} after its step.stop", data
                )
            else:
                self.repeat()
            return
        kind = delta.get("type")
        if kind == "arguments_delta":
            fragment = delta.get("arguments")
            if isinstance(fragment, dict):
                fragment = dumps_compact(fragment)
            if not fragment:
                return
            if entry[2] is not None:
                if entry[2].twin is None:
                    self.arguments(entry[2], fragment)
                else:
                    entry[2].parts.append(fragment)
            else:
                self.doubt(
                    f"arguments for step {index}, which is no function_call: dropped",
                    data,
                )
        elif kind == "thought_signature":
            entry[0]["signature"] = (entry[0].get("signature") or "") + (
                delta.get("signature") or ""
            )
        elif entry[2] is not None:
            # A call's step holds no text, and what its arguments are with an unknown delta cannot be told.
            if carries(delta):
                self.doubt(
                    f"a step.delta of type {kind!r} for step {index}, a function_call, which it cannot add to:"
                    " dropped, so the call may not be the model's",
                    data,
                )
        elif "text" in delta:
            self._text(entry, str(delta.get("text") or ""))
        elif kind not in self.unknown_deltas:
            # Not carried into the message (a step type's delta added since): a note at the end names each once.
            self.unknown_deltas.append(kind)

    def _text(self, entry: list[Any], text: str) -> None:
        if not text:
            return
        entry[1].append(text)
        if entry[0].get("type") == "thought":
            self.reasoning(text)
        else:
            self.text(text)

    def _stop(self, entry: list[Any]) -> None:
        step, fragments, call = entry[0], entry[1], entry[2]
        entry[3] = True
        if call is not None and not call.closed:
            self.close_call(call)
            step["arguments"] = call.value if call.value is not None else {}
        elif fragments and call is None:
            # Text deltas rebuild a model_output step's text content (a thought step's summary).
            key = "summary" if step.get("type") == "thought" else "content"
            others = [
                item
                for item in step.get(key) or ()
                if not (isinstance(item, dict) and item.get("type") == "text")
            ]
            step[key] = [*others, {"type": "text", "text": "".join(fragments)}]
            entry[1] = []

    def finish(self) -> None:
        # The completed interaction's own steps hold every call whole.
        whole = bool(self.interaction.get("steps"))
        for entry in self.order:
            call = entry[2]
            if call is not None and not call.closed and not whole:
                self.cut_call(call)
            else:
                self._stop(entry)
        if self.complete and self.provider_error is None:
            if not self.created:
                self.doubt("no interaction.created came")
            missing = first_gap(self.steps)
            if missing is not None:
                self.doubt(f"step {missing} never came")
        if self.unknown_deltas:
            self.note(
                "the stream sent step.delta types this state does not know, left out of the message: "
                + ", ".join(map(repr, self.unknown_deltas)),
                UNKNOWN_DELTA,
            )
        super().finish()

    def body(self) -> dict[str, Any]:
        body = dict(self.interaction)
        if not body.get("steps"):
            body["steps"] = [
                entry[0]
                for entry in self.order
                if entry[2] is None or not (entry[2].cut or entry[2].twin)
            ]
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)


def _identity(step: dict[str, Any]) -> tuple[Any, Any]:
    """What names a step beside its index: its type and, for a call, its id."""
    return step.get("type"), step.get("id")
