# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The stream state for the Google Interactions API: `event_type`-tagged events (`interaction.created`,
`step.start`, `step.delta`, `step.stop`, `interaction.completed`) rebuilt into one interaction with its steps.

A call (a `function_call` step) is closed by its `step.stop`, or by `interaction.completed` carrying the steps;
a call still open when the body ends is cut.

Repeats: events carry the step index and no sequence number, so what is recognized is what the index makes
impossible twice: a `step.start` for a step already started, a `step.stop` or `step.delta` for a step already
stopped, a second `interaction.created`, and anything after `interaction.completed`. Two equal deltas for an
open step cannot be told from a model saying the same thing twice, and are both kept.
"""

from __future__ import annotations

from typing import Any

from ..wires.base import ProviderError, Response
from ..wires.interactions import decode_response
from .events import dumps_compact
from .state import WireState


class InteractionsState(WireState):
    """Gemini Interactions API events (`event_type`-tagged) in, one interaction with its steps out."""

    wire = "google-interactions"
    object_arguments = True
    end_signal = "interaction.completed"
    call_end_signal = "its step.stop"

    def __init__(self) -> None:
        super().__init__()
        self.interaction: dict[str, Any] = {"object": "interaction"}
        self.steps: dict[int, list[Any]] = {}
        self.created = False

    def feed(self, event: str | None, data: Any) -> None:
        kind = data.get("event_type") or event
        if self.complete and kind != "error":
            self.repeat()  # the interaction is over: nothing after interaction.completed belongs to it
        elif kind == "step.delta":
            self._delta(data)
        elif kind == "step.start":
            if data.get("index", len(self.steps)) in self.steps:
                self.repeat()
            else:
                self._start(data)
        elif kind == "step.stop":
            step = self.steps.get(data.get("index", 0))
            if step is not None and step[3]:
                self.repeat()
            elif step is not None:
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

    def _start(self, data: dict[str, Any]) -> None:
        step = dict(data.get("step") or {})
        # [step, text fragments, call, stopped]
        entry: list[Any] = [step, [], None, False]
        self.steps[data.get("index", len(self.steps))] = entry
        if step.get("type") == "function_call":
            entry[2] = call = self.open_call(step.get("id"), step.get("name"))
            arguments = step.get("arguments")
            if isinstance(arguments, str) and arguments:
                self.arguments(call, arguments)
            elif isinstance(arguments, dict) and arguments:
                self.arguments(call, dumps_compact(arguments))
        else:
            for item in step.get("content") or ():
                if (
                    isinstance(item, dict)
                    and item.get("type") == "text"
                    and item.get("text")
                ):
                    self._text(entry, str(item["text"]))

    def _delta(self, data: dict[str, Any]) -> None:
        entry = self.steps.get(data.get("index", 0))
        if entry is None:
            self._start(
                {"index": data.get("index", 0), "step": {"type": "model_output"}}
            )
            entry = self.steps[data.get("index", 0)]
        elif entry[3]:
            self.repeat()
            return
        delta = data.get("delta") or {}
        kind = delta.get("type")
        if kind == "arguments_delta" and entry[2] is not None:
            fragment = delta.get("arguments")
            if isinstance(fragment, dict):
                fragment = dumps_compact(fragment)
            if fragment:
                self.arguments(entry[2], fragment)
        elif kind == "thought_signature":
            entry[0]["signature"] = (entry[0].get("signature") or "") + (
                delta.get("signature") or ""
            )
        elif "text" in delta:
            self._text(entry, str(delta.get("text") or ""))

    def _text(self, entry: list[Any], text: str) -> None:
        if not text:
            return
        entry[1].append(text)
        if entry[0].get("type") == "thought":
            self.reasoning(text)
        else:
            self.text(text)

    def _stop(self, entry: list[Any]) -> None:
        step, fragments, call, _ = entry
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
        for entry in self.steps.values():
            call = entry[2]
            if call is not None and not call.closed and not whole:
                self.cut_call(call)
            else:
                self._stop(entry)
        super().finish()

    def body(self) -> dict[str, Any]:
        body = dict(self.interaction)
        if not body.get("steps"):
            body["steps"] = [
                self.steps[index][0]
                for index in sorted(self.steps)
                if self.steps[index][2] is None or not self.steps[index][2].cut
            ]
        return body

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        return decode_response(body)
