# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a run's model calls and tool calls share: the run's fields, the events it queues, and how it ends or fails."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pydantic

from ..clients.retry import error_text
from ..observe.telemetry import NO_IDS, NO_TELEMETRY, NoTelemetry
from ..tools.registry import Registry
from ..wires.canonical import ProviderError, Response
from ..wires.settings import checked_plan
from .batch_call import BatchCall
from .events import EVENT_CLASSES, EventType, RunEvent
from .interrupts import Interrupt, InterruptReason
from .options import RunOptions
from .policies import Hooks
from .progress import ProgressBoard
from .results import CallReport, RunMetrics, RunResult, StopReason

_new_event = object.__new__
# The kinds made for every piece of a stream, with the defaults of the fields a piece may leave out.
_DELTAS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "text_delta": MappingProxyType({"type": "text_delta"}),
        "reasoning_delta": MappingProxyType({"type": "reasoning_delta"}),
        "tool_call_delta": MappingProxyType(
            {"type": "tool_call_delta", "id": None, "name": None, "arguments": ""}
        ),
    }
)


def plain_message(message: Any) -> dict[str, Any]:
    """A canonical message as a plain dict, from a dict or one of the generated models."""
    if isinstance(message, pydantic.BaseModel):
        data: dict[str, Any] = message.model_dump(
            mode="json", by_alias=False, exclude_none=True
        )
        return data
    return dict(message)


class RunCore:
    """The fields of one run, its events (queued in `out`, handed on by the drivers after each action) and its end;
    the model calls and tool calls of RunState build on them."""

    def __init__(
        self,
        messages: Sequence[Any],
        registry: Registry,
        options: RunOptions,
        wire: str | None = None,
    ) -> None:
        """`wire`: the model client's wire, which the settings are checked against (None: only the portable
        settings are sent); a setting it cannot carry raises UnsupportedSettings here, before any request,
        unless options.on_unsupported is "note"."""
        self.messages = [plain_message(m) for m in messages]
        self.registry = registry
        self.options = options
        self.hooks = options.hooks or Hooks()
        self.conversation_id = options.conversation_id or uuid.uuid4().hex
        self.metrics = RunMetrics()
        # Reports in call order as their tool messages are filed; `recorded` has them as soon as a call ends.
        self.reports: list[CallReport] = []
        self.recorded: dict[str, CallReport] = {}
        # The current batch, and how many of its calls, from the first, had their outcome handed on.
        self.batch: list[BatchCall] = []
        self.handed = 0
        self.out: list[RunEvent] = []
        # The progress its calls in flight report, from any thread; only the loop's thread makes it events.
        self.progress: ProgressBoard[BatchCall] = ProgressBoard()
        # Whether anyone reads the events as they come: run() without on_event hands on none, so a tool call's
        # progress need not be handed on while it runs (the sync driver then runs a lone call on its own thread).
        self.live = True
        self.step = 0
        self.tool_calls = 0
        self.limit_hit = False
        self.stop: StopReason | None = None
        # The cancel token and the deadline; the deadline counts from begin().
        self.interrupt = Interrupt(options.cancel, options.deadline)
        self.final: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.response: Response | ProviderError | None = None
        self.result: RunResult | None = None
        self.telemetry: NoTelemetry = NO_TELEMETRY
        # The attempt at the current step's model call, and why it is to be made again (stream, overflow).
        self.attempt = 0
        self.retry: str | None = None
        self._retry_error: ProviderError | None = None
        self._overflow_retried = False
        self._chat: Any = None
        self._client_model: str | None = (
            None  # the model the client asks for, when it says
        )
        self._chat_started = 0.0
        # How the model call's stream ended (its MessageEnd's status), and the retries its client reported so far.
        self._ended: str | None = None
        self._retried = 0
        # What the current model call's stream has shown so far: calls announced by index, text.
        self._announced: dict[int, tuple[str | None, str | None]] = {}
        self._streamed: list[str] = []
        # Notes the model client gave about the requests so far: each is reported once per run.
        self._noted: set[str] = set()
        self._seq = 0
        self._last_input: int | None = None
        self._definitions = registry.definitions()
        self._revision = registry.revision
        self.settings = checked_plan(
            options.settings, wire, self._definitions, options.on_unsupported
        )

    # -- events --

    def emit(self, kind: EventType, /, **data: Any) -> None:
        """Queue an event of the run, or of the model call in flight when there is one."""
        self.emit_in(self._chat, kind, data)

    def emit_in(self, span: Any, kind: EventType, data: dict[str, Any]) -> None:
        """An event of `span`'s (a model or tool call's; None: the run's), carrying its trace and span ids."""
        self._seq += 1
        telemetry = self.telemetry
        ids = telemetry.ids(span) if telemetry.enabled else NO_IDS
        if kind in _DELTAS:
            # A run makes one of these for every piece of a stream: filled in one call rather than field by field
            # through the frozen dataclass's __init__ (the same event; a test holds the two equal).
            event = _new_event(EVENT_CLASSES[kind])
            vars(event).update(
                _DELTAS[kind],
                conversation_id=self.conversation_id,
                seq=self._seq,
                time=time.time(),
                trace_id=ids[0],
                span_id=ids[1],
                **data,
            )
        else:
            event = EVENT_CLASSES[kind](
                conversation_id=self.conversation_id,
                seq=self._seq,
                time=time.time(),
                trace_id=ids[0],
                span_id=ids[1],
                **data,
            )
        self.out.append(event)  # type: ignore[arg-type]

    def drain(self) -> list[RunEvent]:
        out, self.out = self.out, []
        return out

    # -- the end --

    def cancel_requested(self) -> InterruptReason | None:
        """The stop a set cancel token or a passed deadline asks for (`cancelled`, `deadline`); None until then."""
        return self.interrupt.reason()

    def end(self, reason: StopReason) -> None:
        if self.stop is None:
            self.stop = reason

    def fail(self, error: BaseException) -> None:
        fields: dict[str, Any] = {
            "message": str(error),
            "type": type(error).__name__,
            "code": None,
            "status": None,
        }
        if isinstance(error, ProviderError):
            fields = {
                "message": error_text(error),
                "type": error.type,
                "code": error.code,
                "status": error.status,
            }
        self.emit(
            "error",
            message=fields["message"],
            error_type=fields["type"],
            code=fields["code"],
            status=fields["status"],
            fatal=True,
        )
        self.error = self.error or error
        self.end("error")
