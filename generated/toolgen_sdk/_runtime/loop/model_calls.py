# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A run's model calls: the request, the stream's events, the answer and the calls it asks for, and asking again."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..clients.base import request_notes
from ..clients.retry import Retried, error_text, retries_of
from ..streams.events import (
    Event,
    MessageEnd,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from ..wires.canonical import ProviderError, Request, Response, parts_of
from .policies import BudgetInfo
from .recovery import (
    failure_kind,
    incomplete_message,
    is_context_overflow,
    partial_text,
    stream_broken,
    stream_failure,
)
from .results import StopReason
from .run_core import RunCore, plain_message

# Finishes that end the run with their own stop reason: the answer is what it is, and asking again would not help.
_CUT_SHORT: dict[str | None, StopReason] = {
    "length": "length",
    "content_filter": "content_filter",
}


class ModelCalls(RunCore):
    """The model calls of a run: one per step, made again after a broken stream or a refusal as too long."""

    def budget_info(self, overflow: bool = False) -> BudgetInfo:
        estimate = self.options.token_estimate
        return BudgetInfo(
            self.step if overflow else self.step + 1,
            dict(self.metrics.usage),
            self._last_input,
            None if estimate is None else estimate(list(self.messages)),
            overflow,
        )

    def use_messages(self, messages: list[dict[str, Any]] | None) -> bool:
        """Go on with the budget hook's conversation; whether it differs from the one there was."""
        if messages is None:
            return False
        trimmed = [plain_message(m) for m in messages]
        changed = trimmed != self.messages
        self.messages = trimmed
        return changed

    def request(self) -> Request:
        if self._revision != self.registry.revision:
            # Tools added or removed mid-run are offered from the next model call on.
            self._definitions = self.registry.definitions()
            self._revision = self.registry.revision
        # The settings as planned for the model's wire when the run began (wires/settings.py).
        return Request(
            list(self.messages), list(self._definitions), None, self.settings.extras()
        )

    def model_started(self, request: Request | None = None, model: Any = None) -> float:
        """Start a model call of `request` (None: the run's own) to `model`, whose notes about what the request
        loses on its wire (an image moved out of a tool result, reasoning dropped) become `note` events."""
        if self.retry is None:
            self.step += 1
            self.attempt = 0
            self._overflow_retried = False
        else:
            self.metrics.model_retries += 1
        self.retry = None
        self.attempt += 1
        self.metrics.model_calls += 1
        self._announced, self._streamed = {}, []
        self._ended, self._retried = None, 0
        sent = request or self.request()
        self._chat = self.telemetry.start_chat(sent, self.options.stream)
        self.emit("model_call_started", step=self.step, attempt=self.attempt)
        if model is not None:
            named = getattr(model, "model", None)
            self._client_model = named if isinstance(named, str) else None
            self._request_noted(model, sent)
        self._chat_started = time.perf_counter()
        return self._chat_started

    def _model_name(self, response: Response | ProviderError) -> str | None:
        """The model that answered: the response's name for it, else the one the client asked for."""
        named = getattr(response, "model", None)
        return named if isinstance(named, str) and named else self._client_model

    def _request_noted(self, model: Any, request: Request) -> None:
        """A `note` event per note the client gives about `request`, once per run: the conversation only grows, so
        the image moved at step 2 would be noted again at every later step."""
        wire = getattr(model, "wire", None)
        for note in request_notes(model, request):
            if note not in self._noted:
                self._noted.add(note)
                self.emit(
                    "note",
                    message=note,
                    setting=None,
                    wire=wire if isinstance(wire, str) else None,
                )

    def _response_noted(self, response: Response | ProviderError) -> None:
        """A `note` event per note the answer's decoding made (a finish value no table knows, a usage count left
        out as unreadable, usage a stream never sent): what the server sent that was not read as sent."""
        extras = getattr(response, "extras", None)
        if not isinstance(extras, Mapping):
            return
        stream = extras.get("stream")
        notes = [
            *(extras.get("notes") or ()),
            *((stream.get("notes") or ()) if isinstance(stream, Mapping) else ()),
        ]
        for note in notes:
            message = note.get("message") if isinstance(note, Mapping) else None
            if isinstance(message, str):
                self.emit("note", message=message, setting=None)

    @property
    def chat_span(self) -> Any:
        """The span of the model call in flight (None when tracing is off)."""
        return self._chat

    def stream_event(self, event: Event) -> None:
        if self._chat is not None:
            self.telemetry.first_chunk(self._chat)
        if isinstance(event, TextDelta):
            self._streamed.append(event.text)
            self.emit("text_delta", text=event.text)
        elif isinstance(event, ToolCallDelta):
            call_id, name = self._announced.get(event.index, (None, None))
            self.emit(
                "tool_call_delta",
                index=event.index,
                id=call_id,
                name=name,
                arguments=event.arguments,
            )
        elif isinstance(event, ToolCallStart):
            self._announced[event.index] = (event.id, event.name)
            self.emit(
                "tool_call_started",
                id=event.id,
                name=event.name,
                arguments=None,
                index=event.index,
            )
        elif isinstance(event, ReasoningDelta):
            self.emit("reasoning_delta", text=event.text)
        elif isinstance(event, StreamError):
            if isinstance(event.raw, Retried):
                self.client_retried(event.raw)
                return
            self.emit(
                "error",
                message=event.message,
                error_type=event.type,
                code=event.code,
                status=event.status,
                fatal=False,
            )
        elif isinstance(event, MessageEnd):
            self.response = event.response
            self._ended = event.status

    def client_retried(self, note: Retried) -> None:
        """The model client made its call again (a 429, a 5xx, a dropped connection): an `error` event saying so,
        counted as a retry, and an event on the call's span."""
        self._retried += 1
        self.metrics.model_retries += 1
        self.telemetry.retried(self._chat, note)
        self.emit(
            "error",
            message=note.describe(),
            error_type=note.type,
            code=note.code,
            status=note.status,
            fatal=False,
            retry=note.attempt + 1,
        )

    def whole_response(self, response: Response) -> None:
        """The deltas a stream would have sent, so that event consumers see the same thing either way."""
        for part in parts_of(response.message.get("content")):
            text = part.get("text")
            if (
                isinstance(text, str)
                and text
                and part.get("type") in ("text", "reasoning")
            ):
                self.emit(
                    "text_delta" if part["type"] == "text" else "reasoning_delta",
                    text=text,
                )

    def model_finished(self, started: float) -> list[dict[str, Any]]:
        """Record the model's answer; the tool calls to run next (none when the run ends here)."""
        seconds = time.perf_counter() - started
        self.metrics.model_seconds.append(seconds)
        response = self.response
        # Retries a whole answer or a final error lists, that no stream event reported as it came.
        for note in retries_of(response)[self._retried :]:
            self.client_retried(note)
        if response is None:
            response = ProviderError(
                "stream",
                "the stream ended without a final message",
                type="incomplete_stream",
            )
        else:
            self._response_noted(response)
        usage = None if isinstance(response, ProviderError) else response.usage
        finish = (
            "error"
            if isinstance(response, ProviderError)
            else (response.finish or {}).get("reason")
        )
        self.emit(
            "model_call_finished",
            step=self.step,
            attempt=self.attempt,
            duration_ms=round(seconds * 1000, 3),
            finish_reason=finish,
            usage=usage,
            model=self._model_name(response),
        )
        error = (
            response
            if isinstance(response, ProviderError)
            else stream_failure(response, self._ended)
            if finish == "error" or stream_broken(response, self._ended)
            else None
        )
        kind = failure_kind(response, self._ended) if error is not None else None
        self.telemetry.end_chat(
            self._chat,
            seconds,
            response if isinstance(response, Response) else None,
            kind,
            None if error is None else error_text(error),
        )
        self._chat = None
        if isinstance(response, Response):
            self.metrics.add_usage(usage)
            input_tokens = (usage or {}).get("input_tokens")
            self._last_input = (
                input_tokens if isinstance(input_tokens, int) else self._last_input
            )
        if error is not None:
            self._close_announced(kind or "error")
            self._call_failed(error, kind or "error", response)
            return []
        assert isinstance(response, Response)
        message = {**response.message, "role": "assistant"}
        calls = [dict(call) for call in message.get("tool_calls") or ()]
        short = _CUT_SHORT.get(finish)
        if short is not None:
            # The calls of an answer cut at its token limit may be cut themselves: none of them runs.
            self._close_announced(short)
            message.pop("tool_calls", None)
            if parts_of(message.get("content")):
                self.messages.append(message)
                self.final = message
            self.end(short)
            return []
        if calls:
            message["tool_calls"] = calls
        self.messages.append(message)
        if not calls:
            self.final = message
            self.end("finished")
        return calls

    def _call_failed(
        self,
        error: ProviderError,
        kind: str,
        response: Response | ProviderError | None,
    ) -> None:
        """Ask again if the policy says so, or trim after a context-length error; else stop, keeping the text."""
        retry = self.options.stream_retry
        if retry is not None and retry.retries(kind, self.attempt, error.code):
            self.retry = "stream"
        elif (
            isinstance(response, ProviderError)
            and self.options.budget is not None
            and not self._overflow_retried
            and is_context_overflow(response)
        ):
            self._overflow_retried = True
            self.retry = "overflow"
            self._retry_error = response
        if self.retry is not None:
            self.emit(
                "error",
                message=error.message,
                error_type=kind,
                code=error.code,
                status=error.status,
                fatal=False,
                retry=self.attempt + 1,
            )
            return
        text = partial_text(response, "".join(self._streamed))
        if text:
            self.messages.append(incomplete_message(text, kind))
        self.fail(error)

    def give_up(self) -> None:
        """The budget hook could not shorten the conversation the provider refused: stop with the refusal."""
        self.retry = None
        error = self._retry_error or ProviderError("loop", "the model call failed")
        self.fail(error)

    def _close_announced(self, kind: str) -> None:
        """Calls the stream announced that will never run: each gets its tool_call_finished, as skipped."""
        for call_id, name in self._announced.values():
            self.emit(
                "tool_call_finished",
                id=call_id,
                name=name,
                status="skipped",
                error_kind=kind,
                duration_ms=0.0,
                content=None,
            )
        self._announced = {}
