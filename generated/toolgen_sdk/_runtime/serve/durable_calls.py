# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Durability as a wrapper: a served run's model client, and what its steps share, each call a DBOS step.

The one agent loop (loop/async_driver.py) runs inside an async DBOS workflow with these in place of the plain
ones (durable_tools.py has the tools and the approver). Every model call and every tool call is a step: when the
workflow replays after a restart, a step that finished returns what it recorded instead of running again, so
the loop walks the same path to where it stopped and goes on from there. A streamed model call hands its events
to the loop as they come and records them, so a replay gives the loop the same events; a client whose stream's
async form is ModelClientBase's (its sync stream read whole on a thread) has its whole step run on one of DBOS's
threads, as that thread. The workflow is async so that a run waiting for a decision (`recv_async`) holds no
thread. Cancel and the run's deadline reach the loop only through what a step recorded (DurableInterrupt), so
that a replay stops exactly where the first run did; the steps watch them while their calls run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any, TypeVar

from ..clients.base import ModelClientBase
from ..loop.interrupts import GRACE_SECONDS, InterruptReason, RunInterrupted
from ..models.base import ToolSpec
from ..streams.events import Event, MessageEnd
from ..wires.canonical import ProviderError, Request, Response

T = TypeVar("T")
INTERRUPTED_KIND = "interrupted"
# The form of what a step records; a replay of a form it does not know stops the run with both versions named.
STEP_VERSION = 1
# How often a step looks at the run's cancel request and deadline while its model or tool call runs.
WATCH_SECONDS = 0.05


def safe_to_repeat(spec: ToolSpec | None) -> bool:
    """Whether a call cut short by a crash may run again: the tool says it is idempotent or only reads."""
    if spec is None:
        return False
    hints = spec.annotations or {}
    return bool(hints.get("idempotentHint") or hints.get("readOnlyHint"))


class DurableInterrupt:
    """The loop's cancel token in a durable run: set only by what a step recorded (a cancel or the deadline seen
    while it ran), so that every replay of the workflow sees it set at the same point. The steps watch the run's
    cancel and deadline themselves; the loop reads the token between steps and never watches it (`watched`)."""

    watched = False

    def __init__(self) -> None:
        self.reason: InterruptReason | None = None

    def is_set(self) -> bool:
        return self.reason is not None

    def observe(self, reason: InterruptReason | None) -> None:
        if reason is not None and self.reason is None:
            self.reason = reason


class LiveWatch:
    """What a step looks at while its call runs: the run's cancel request and deadline, as they are now.

    A cancel asked of this server is seen at once (`asked_here`, in memory); one asked of another server sharing
    the database is looked up in the store (`look`, a blocking read) on DBOS's threads, at most every
    LOOK_SECONDS, so that the workflows' event loop never waits on the database."""

    LOOK_SECONDS = 0.25

    def __init__(
        self,
        asked_here: Callable[[], bool],
        look: Callable[[], bool],
        deadline_at: float | None,
    ) -> None:
        self._asked_here = asked_here
        self._look = look
        self._deadline_at = deadline_at
        self._seen_in_store = False
        self._looked = 0.0

    async def refresh(self) -> None:
        """Look in the store, when it is time to."""
        now = time.monotonic()
        if self._seen_in_store or now - self._looked < self.LOOK_SECONDS:
            return
        self._looked = now
        self._seen_in_store = await asyncio.to_thread(self._look)

    def reason_now(self) -> InterruptReason | None:
        """`refresh` then `reason`, for a step's thread: the store's read (when due) blocks only that thread."""
        now = time.monotonic()
        if not self._seen_in_store and now - self._looked >= self.LOOK_SECONDS:
            self._looked = now
            self._seen_in_store = self._look()
        return self.reason()

    def reason(self) -> InterruptReason | None:
        if self._seen_in_store or self._asked_here():
            return "cancelled"
        if self._deadline_at is not None and time.time() >= self._deadline_at:
            return "deadline"
        return None


@dataclasses.dataclass(frozen=True)
class DurableRun:
    """One run's part of the engine: the DBOS calls, its watch, its token, and where its stream pieces go live."""

    engine: Any  # dbos.DBOS
    watch: LiveWatch
    token: DurableInterrupt
    # Before a model call first runs: the store's offset for its events (written, when it has to be, before the
    # call runs); `model_call_offset` is the same, blocking, for a step's thread.
    begin_model_call: Callable[[], Awaitable[int]]
    model_call_offset: Callable[[], int]
    # When a recorded model call replays: the offset it ran with.
    set_offset: Callable[[int], None]
    # A call's handler is about to start, on its step's thread: how many starts of the call keyed so came before,
    # its start counted in the store first (None: a call safe to repeat, whose starts need no counting).
    count_tool_start: Callable[[str | None], int]
    # The run's deadline has passed while a call (id, round) waits for a decision: True when its ask is now closed
    # (denied by the deadline), False when a person's decision was claimed first (store.close_ask). Blocking.
    close_ask: Callable[[str, int], bool] = lambda call_id, round: True


def _picklable(answer: Response | ProviderError) -> Any:
    """ProviderError does not survive pickling (its keywords are not in its args): recorded as its fields."""
    if isinstance(answer, ProviderError):
        raw = answer.raw if isinstance(answer.raw, Response) else None
        return ("provider_error", answer.to_json(), raw)
    return answer


def _unpickled(recorded: Any) -> Response | ProviderError:
    if isinstance(recorded, tuple) and recorded[:1] == ("provider_error",):
        fields, raw = recorded[1], recorded[2]
        return ProviderError(
            fields["wire"],
            fields["message"],
            type=fields["type"],
            code=fields["code"],
            status=fields["status"],
            raw=raw,
        )
    answer: Response = recorded
    return answer


def _recorded_event(event: Event) -> Any:
    if isinstance(event, MessageEnd):
        return dataclasses.replace(event, response=_picklable(event.response))
    return event


def _replayed_event(event: Any) -> Event:
    if isinstance(event, MessageEnd):
        return dataclasses.replace(event, response=_unpickled(event.response))
    replayed: Event = event
    return replayed


def checked(record: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(record, Mapping) or record.get("version") != STEP_VERSION:
        version = record.get("version") if isinstance(record, Mapping) else None
        raise RuntimeError(
            f"a recorded {what} has step form version {version!r}; this release reads version "
            f"{STEP_VERSION}: resume the run with the release that started it"
        )
    return record


class DurableModel:
    """A model client whose every call is a DBOS step; it speaks as the client it wraps (wire, model, notes)."""

    def __init__(self, inner: Any, run: DurableRun) -> None:
        self.inner = inner
        self.run = run
        # A client whose stream's async form is ModelClientBase's (its sync stream read whole on a thread): its
        # step runs on one thread, DBOS's checkpoints with it, rather than a thread inside an async step.
        self._threaded = (
            getattr(type(inner), "astream", None) is ModelClientBase.astream
        )
        for name in ("wire", "model", "provider_name", "base_url"):
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))

    def request_notes(self, request: Request) -> tuple[str, ...]:
        notes = getattr(self.inner, "request_notes", None)
        found = notes(request) if callable(notes) else ()
        return tuple(found)

    def complete(self, request: Request) -> Response:
        raise TypeError("a durable run's workflow is async: its loop calls acomplete()")

    def stream(self, request: Request) -> Iterator[Event]:
        raise TypeError("a durable run's workflow is async: its loop calls astream()")

    async def acomplete(self, request: Request) -> Response:
        record = checked(
            await self.run.engine.run_step_async(
                {"name": "toolgen.model_call"}, self._complete_body, request
            ),
            "model call",
        )
        self.run.set_offset(int(record["offset"]))
        self.run.token.observe(record["interrupted"])
        if record["interrupted"] is not None:
            raise RunInterrupted(record["interrupted"])
        answer = _unpickled(record["answer"])
        if isinstance(answer, ProviderError):
            raise answer
        return answer

    async def _complete_body(self, request: Request) -> dict[str, Any]:
        offset = await self.run.begin_model_call()
        answer, reason = await watched(self._answer(request), self.run.watch)
        return {
            "version": STEP_VERSION,
            "offset": offset,
            "interrupted": reason,
            "answer": None if answer is None else _picklable(answer),
        }

    async def _answer(self, request: Request) -> Response | ProviderError:
        try:
            response: Response = await self.inner.acomplete(request)
        except ProviderError as error:
            return error
        return response

    async def astream(self, request: Request) -> AsyncIterator[Event]:
        """The call's events as they come the first time (recorded as they pass), as recorded on a replay."""
        if self._threaded:
            record = checked(
                await self.run.engine.run_step_async(
                    {"name": "toolgen.model_stream"}, self._threaded_body, request
                ),
                "model stream",
            )
            self.run.set_offset(int(record["offset"]))
            for event in record["events"]:
                yield _replayed_event(event)
            self.run.token.observe(record["interrupted"])
            return
        reservation = self.run.engine.reserve_step()
        live: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        async def step() -> None:
            try:
                record = await reservation.run_async(
                    {"name": "toolgen.model_stream"}, self._stream_body, request, live
                )
                live.put_nowait(("record", record))
            except BaseException as error:  # noqa: BLE001 - handed to the loop's task
                live.put_nowait(("raise", error))

        running = asyncio.ensure_future(step())
        passed = 0
        try:
            while True:
                kind, value = await live.get()
                if kind == "event":
                    passed += 1
                    yield _replayed_event(value)
                elif kind == "raise":
                    raise value
                else:
                    break
        finally:
            if not running.done():
                # The loop let go of the stream (its run ended): the step is not waited for.
                running.cancel()
        record = checked(value, "model stream")
        self.run.set_offset(int(record["offset"]))
        # A replay gets nothing live: every recorded event comes from the record, in order.
        for event in record["events"][passed:]:
            yield _replayed_event(event)
        self.run.token.observe(record["interrupted"])

    async def _stream_body(
        self, request: Request, live: asyncio.Queue[tuple[str, Any]]
    ) -> dict[str, Any]:
        offset = await self.run.begin_model_call()
        recorded: list[Any] = []
        reason: InterruptReason | None = None
        events = self.inner.astream(request)
        try:
            async for event in events:
                kept = _recorded_event(event)
                recorded.append(kept)
                live.put_nowait(("event", kept))
                if isinstance(event, MessageEnd):
                    continue
                await self.run.watch.refresh()
                reason = self.run.watch.reason()
                if reason is not None:
                    break
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        return {
            "version": STEP_VERSION,
            "offset": offset,
            "events": recorded,
            "interrupted": reason,
        }

    def _threaded_body(self, request: Request) -> dict[str, Any]:
        """The step of a threaded client's stream, on DBOS's thread: its sync stream, as ModelClientBase's astream
        reads it, the run's cancel and deadline looked at after each event."""
        offset = self.run.model_call_offset()
        recorded: list[Any] = []
        reason: InterruptReason | None = None
        events = self.inner.stream(request)
        try:
            for event in events:
                recorded.append(_recorded_event(event))
                if isinstance(event, MessageEnd):
                    continue
                reason = self.run.watch.reason_now()
                if reason is not None:
                    break
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
        return {
            "version": STEP_VERSION,
            "offset": offset,
            "events": recorded,
            "interrupted": reason,
        }


async def watched(
    work: Awaitable[T], watch: LiveWatch
) -> tuple[T | None, InterruptReason | None]:
    """`work`'s result, or, when the run's cancel or deadline fires first, None and why: the work is then
    cancelled and, after a grace, let go (a sync handler on its thread is abandoned, still running)."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=WATCH_SECONDS)
        if done:
            return task.result(), None
        await watch.refresh()
        reason = watch.reason()
        if reason is not None:
            break
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=GRACE_SECONDS)
    if done and not task.cancelled() and task.exception() is None:
        return task.result(), None
    return None, reason
