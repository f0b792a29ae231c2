# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Durable runs on DBOS: the one agent loop inside a workflow, with its model calls and tool calls as steps.

A served run is `run_events()` itself, given a durable model client, durable tools, an approver that waits for
decisions as DBOS messages, and a cancel token set only by what steps recorded (durable_calls.py): every option
`run()` takes (hooks, budget and token estimate, stream_retry, limits, parallel calls, a deadline, cancel) holds
for a served run because it is the same loop. Its events go to the store (event_sink.py), where the service's
readers find them. After a restart DBOS replays each unfinished workflow: the steps that finished return what they
recorded, so the loop walks the same path and goes on from the step that did not finish. Hooks and on_event run
again for the steps a replay walks through.

Starting a run records it first (its row, committed, naming this server's executor id) and starts its workflow
after, without waiting (`record` then `begin`; the service answers between the two): a run recorded by a process
that died before its workflow started is started by the next launch of that executor, as DBOS resumes the
workflows it had started. `result()` waits for a run's end without polling: the run's last write wakes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..clients.base import ModelClient
from ..extras import missing_extra
from ..loop.async_driver import arun_events
from ..loop.options import RunOptions
from ..loop.policies import Approval
from ..loop.stats import DEFAULT_WINDOW, StatsReport
from ..tools.registry import Registry
from ..wires.settings import checked_plan, settings_wire
from .durable_calls import (
    DurableInterrupt,
    DurableModel,
    DurableRun,
    LiveWatch,
    safe_to_repeat,
)
from .durable_recovery import (
    end_refused,
    refuse_unresumable,
    resend_decisions,
    send_decision,
    start_recorded,
)
from .durable_tools import (
    DurableTools,
    approval_topic,
    durable_approver,
    recorded_approver,
)
from .event_sink import StoreSink, status_of, stored_before
from .executor_lock import ExecutorBusy, ExecutorLock
from .run_record import (
    RunRecord,
    RunRequest,
    RunStateVersionError,
    record_from_json,
)
from .stats import stored_stats
from .store import RunStore, StoredRun
from .wakeup import ended_key

__all__ = [
    "MAX_OPEN_RUNS",
    "DeadlineAboveLimit",
    "DurableRuns",
    "DurableRunsError",
    "OpenRunsLimit",
    "safe_to_repeat",
    "status_of",
]

# The version DBOS files workflows under: recovery resumes only workflows of the running version, and the
# default (a hash of the workflow's source) would change with every edit of the package. Version 1 drove its own
# copy of the loop; version 2 read the run in a step of its own (version 3 reads the run's fixed request as it
# is kept, without a step). Unfinished runs of another version are refused at launch, by name, rather than left
# hanging.
APP_VERSION = "toolgen-durable-runs-3"
_ENDED = frozenset({"finished", "error", "stopped"})
_LOG = logging.getLogger(__name__)
# Runs one holder may have open (running or awaiting approval) at once: a run waiting for a decision holds no
# thread, but it holds its rows and a task until someone decides, so no one credential may pile them up.
MAX_OPEN_RUNS = 100
# How often DBOS looks for a run's messages on SQLite (see DurableRuns.__init__).
SQLITE_POLL_SECONDS = 0.1


class DurableRunsError(RuntimeError):
    """The durable engine could not start: a database it cannot use, say which (a missing extra is a MissingExtra,
    the ImportError naming the extra to install)."""


class OpenRunsLimit(DurableRunsError):
    """A run not started: its holder has as many runs open as `max_open_runs` allows."""


class DeadlineAboveLimit(ValueError):
    """A run not started: it asked for a deadline longer than the operator's (the options' deadline is a cap)."""


def _seconds(value: float) -> str:
    """Seconds as a person reads them: 1 second, 2.5 seconds, 0.125 seconds."""
    number = f"{value:.6f}".rstrip("0").rstrip(".")
    return f"{number} second" if number == "1" else f"{number} seconds"


def _dbos() -> Any:
    try:
        import dbos  # type: ignore[import-not-found,unused-ignore]
    except ImportError as error:
        named = missing_extra(error, "durable", "DurableRuns")
        if named is None:
            raise
        raise named from None
    return dbos


class DurableRuns:
    """The service's engine: starts runs as DBOS workflows, hands decisions and cancels to them, resumes them.

    `options` are every run's RunOptions (hooks, budget, stream_retry, limits, deadline, settings, telemetry...);
    the run's own conversation id, cancel and approvals come from the service. One per process (DBOS keeps one
    instance); `close()` lets go of it. `launch=False` defers resuming unfinished runs to `launch()`.
    `max_open_runs`: the runs one holder (a credential's, see auth.py) may have running or awaiting approval at
    once (None: no cap); checked against the database, so it holds across servers sharing one. Runs started with
    no holder (the application's own, not a credential's) are not capped.
    """

    def __init__(
        self,
        registry: Registry,
        model: ModelClient,
        *,
        database_url: str,
        name: str = "toolgen",
        executor_id: str = "local",
        options: RunOptions | None = None,
        launch: bool = True,
        max_open_runs: int | None = MAX_OPEN_RUNS,
    ) -> None:
        if max_open_runs is not None and max_open_runs < 1:
            raise ValueError(f"max_open_runs must be 1 or more, not {max_open_runs}")
        self.max_open_runs = max_open_runs
        self.registry = registry
        self.model = model
        self.options = options or RunOptions(stream=True)
        # Checked now, as every run checks them: a setting the model's wire cannot carry stops the service
        # from starting (UnsupportedSettings) rather than each run.
        checked_plan(
            self.options.settings,
            settings_wire(model),
            registry.definitions(),
            self.options.on_unsupported,
        )
        self.executor_id = executor_id
        self._cancelled: set[str] = set()
        # Runs recorded here whose workflow has not read them yet: their request, fixed, as kept in the store.
        self._fresh: dict[str, RunRequest] = {}
        self._lock = threading.Lock()
        self._begins = asyncio.Lock()  # taken on DBOS's event loop only
        try:
            self.store = RunStore(database_url)
        except Exception as error:  # noqa: BLE001 - any failure to open the database is said plainly
            # sqlalchemy missing is the extra to install (DBOS brings it), not a database it cannot use.
            named = (
                missing_extra(error, "durable", "DurableRuns")
                if isinstance(error, ImportError)
                else None
            )
            if named is not None:
                raise named from None
            raise DurableRunsError(
                f"cannot use the database {database_url!r}: {error}"
            ) from None
        dbos = _dbos()
        self._engine = dbos.DBOS
        self._set_workflow_id = dbos.SetWorkflowID
        config: dict[str, object] = {
            "name": name,
            "system_database_url": database_url,
            "application_version": APP_VERSION,
            "executor_id": executor_id,
            "log_level": "WARNING",
        }
        if database_url.startswith("sqlite"):
            # SQLite has no LISTEN/NOTIFY: DBOS polls for a run's messages (an approval's decision) and its stop
            # waits out one poll. Its default second would hold a decision and every shutdown that long.
            config["notification_listener_polling_interval_sec"] = SQLITE_POLL_SECONDS
        self._engine(config=config)
        self._workflow = self._engine.workflow(name="toolgen.run")(_workflow_of(self))
        self._lock_of_executor = ExecutorLock(database_url, executor_id)
        self._database_url = database_url
        self.launched = False
        if launch:
            self.launch()

    def launch(self) -> None:
        """Take this executor id's lock, then let DBOS resume the runs it left unfinished; a server that binds its
        port first calls this after, so that one which cannot serve never takes a live server's runs."""
        if self.launched:
            return
        try:
            self._lock_of_executor.acquire()
        except ExecutorBusy as error:
            self._engine.destroy(destroy_registry=True)
            raise DurableRunsError(str(error)) from None
        try:
            self._engine.launch()
        except Exception as error:  # noqa: BLE001 - DBOS's own error, with the database named
            self._engine.destroy(destroy_registry=True)
            self._lock_of_executor.release()
            raise DurableRunsError(
                f"DBOS could not start on {self._database_url!r}: {error}"
            ) from None
        self.launched = True
        refuse_unresumable(self.store, self._engine, self.executor_id, APP_VERSION)
        resend_decisions(self.store, self._send)
        start_recorded(self.store, self._engine, self.executor_id, self.begin)

    def close(self) -> None:
        self._engine.destroy(destroy_registry=True)
        self._lock_of_executor.release()
        self.store.close()

    # -- what the HTTP service calls --

    def start(
        self,
        messages: Sequence[Mapping[str, Any]],
        conversation_id: str | None,
        *,
        deadline: float | None = None,
        holder: str = "",
    ) -> str:
        """Start a run of `messages`; its id, which is also its DBOS workflow id. `deadline`: seconds for the
        whole run (default: the options' deadline, which is also its cap: a longer one is DeadlineAboveLimit). `holder`: whose run it is (the credential's); OpenRunsLimit
        when that holder has max_open_runs open already. The run is recorded when this returns; its workflow
        starts on DBOS's event loop (see `record` and `begin`)."""
        run_id = self.record(
            messages, conversation_id, deadline=deadline, holder=holder
        )
        self.begin(run_id)
        return run_id

    def record(
        self,
        messages: Sequence[Mapping[str, Any]],
        conversation_id: str | None,
        *,
        deadline: float | None = None,
        holder: str = "",
    ) -> str:
        """Record a run as `start` does, without starting its workflow: its id. The run is durable once this
        returns: `begin(run_id)` starts it, and if this process dies first, the next launch of this executor id
        does."""
        limit = self.options.deadline
        if deadline is not None and limit is not None and deadline > limit:
            # The operator's deadline bounds every run: a run may ask for less, never for more.
            raise DeadlineAboveLimit(
                f"deadline {_seconds(deadline)} is above this server's limit of {_seconds(limit)} "
                f"(the deadline it gives every run): ask for at most {_seconds(limit)}"
            )
        run_id = uuid.uuid4().hex
        seconds = deadline if deadline is not None else limit
        request = RunRequest(
            messages=[dict(m) for m in messages],
            conversation_id=conversation_id or run_id,
            deadline_at=None if seconds is None else time.time() + seconds,
        )
        record = RunRecord(request=request, messages=request.messages)
        if not self.store.create_run(
            run_id,
            request.conversation_id,
            record.to_json(),
            holder=holder,
            # The application's own starts (no holder) are its to bound; a credential's are capped.
            max_open=self.max_open_runs if holder else None,
            executor=self.executor_id,
        ):
            waiting = self.store.open_runs(holder, ("awaiting_approval",))
            raise OpenRunsLimit(
                f"{holder or 'this credential'} has {self.max_open_runs} runs open, "
                f"{waiting} of them awaiting approval: decide, cancel or wait for one before starting another"
            )
        with self._lock:
            self._fresh[run_id] = request
        return run_id

    def begin(self, run_id: str) -> None:
        """Start a recorded run's workflow, as a task on DBOS's own event loop, without waiting for it (before
        `launch()`, launch starts it). DBOS's start_workflow, called from a thread, runs an async workflow by
        holding one of its threads until the workflow ends: a run waiting a day for a decision would hold a
        thread a day. Started from the loop, it holds none."""
        if not self.launched:
            return
        loop = _dbos_loop()
        if loop is None:
            # A DBOS without its background loop where this looks: its own way, a thread a run.
            threading.Thread(
                target=self._begin_in_thread, args=(run_id,), daemon=True
            ).start()
            return
        started = asyncio.run_coroutine_threadsafe(self._begin_async(run_id), loop)
        started.add_done_callback(lambda done: self._begun(run_id, done))

    async def _begin_async(self, run_id: str) -> None:
        # One start at a time: a burst of starts at once would each take a thread of DBOS's (unbounded) pool.
        async with self._begins:
            with self._set_workflow_id(run_id):
                await self._engine.start_workflow_async(self._workflow, run_id)

    def _begin_in_thread(self, run_id: str) -> None:
        try:
            with self._set_workflow_id(run_id):
                self._engine.start_workflow(self._workflow, run_id)
        except Exception as error:  # noqa: BLE001 - said, and left to the next launch
            self._not_begun(run_id, error)

    def _begun(self, run_id: str, done: Any) -> None:
        error = None if done.cancelled() else done.exception()
        if error is not None:
            self._not_begun(run_id, error)

    def _not_begun(self, run_id: str, error: BaseException) -> None:
        with self._lock:
            self._fresh.pop(run_id, None)
        _LOG.warning(
            "run %s is recorded but its workflow did not start (%s: %s); the next launch of executor %r "
            "starts it",
            run_id,
            type(error).__name__,
            error,
            self.executor_id,
        )

    def result(self, run_id: str, timeout: float | None = None) -> StoredRun | None:
        """The run once it has ended (its row: status, stop reason, messages, metrics), waiting for that; None
        when there is no such run or `timeout` seconds passed first. Not polled: the run's last write wakes the
        wait (a run another process runs: on Postgres its NOTIFY does; on SQLite the wait looks every
        wakeups.poll_seconds). Blocks: call it from a thread, or `aresult` from async code."""
        store = self.store
        deadline = None if timeout is None else time.monotonic() + timeout
        with store.wakeups.watch(ended_key(run_id)) as watch:
            while True:
                found = store.run(run_id)
                if found is None or found.status in _ENDED:
                    return found
                left = store.wakeups.poll_seconds
                if deadline is not None:
                    left = min(left, deadline - time.monotonic())
                    if left <= 0:
                        return None
                watch.wait_blocking(left)

    async def aresult(
        self, run_id: str, timeout: float | None = None
    ) -> StoredRun | None:
        """`result` for async code: the event loop is never blocked (the store is read on a worker thread)."""
        store = self.store
        deadline = None if timeout is None else time.monotonic() + timeout
        with store.wakeups.watch(ended_key(run_id)) as watch:
            while True:
                found = await asyncio.to_thread(store.run, run_id)
                if found is None or found.status in _ENDED:
                    return found
                left = store.wakeups.poll_seconds
                if deadline is not None:
                    left = min(left, deadline - time.monotonic())
                    if left <= 0:
                        return None
                await watch.wait(left)

    def decide(self, run_id: str, call_id: str, approval: Approval) -> bool:
        """Send the decision on a pending call to its run; False when it is not taken (refused_decision)."""
        return self.refused_decision(run_id, call_id, approval) is None

    def refused_decision(
        self, run_id: str, call_id: str, approval: Approval
    ) -> str | None:
        """`decide`: None when the decision is recorded and sent, else why not (nothing recorded): `cancelled`,
        `deadline` (the run's has passed: the run denies the call) or `not_pending` (decided, or never asked)."""
        decision = {
            "decision": approval.decision,
            "reason": approval.reason,
            "arguments": approval.arguments,
        }
        round = self.store.claim_decision(run_id, call_id, decision)
        if isinstance(round, str):
            return round
        self._send(run_id, call_id, round, decision)
        return None

    def _send(
        self, run_id: str, call_id: str, round: int, decision: Mapping[str, Any]
    ) -> None:
        send_decision(self._engine, run_id, call_id, round, decision)

    def cancel(self, run_id: str) -> str | None:
        """Ask a run to stop; its status then (None: no such run). A run that has ended stays as it ended."""
        run = self.store.run(run_id)
        if run is None:
            return None
        if run.status in _ENDED:
            return run.status
        self.store.request_cancel(run_id)
        with self._lock:
            self._cancelled.add(run_id)
        for call_id, round in self.store.pending_rounds(run_id):
            # A run waiting for a decision hears the cancel there too, at once.
            topic = approval_topic(call_id, round)
            self._engine.send(
                run_id,
                {"cancel": True},
                topic=topic,
                idempotency_key=f"cancel:{run_id}:{topic}",
            )
        return run.status

    def stats(self, window: float = DEFAULT_WINDOW) -> StatsReport:
        """Per tool and per model, the calls of every stored run in the last `window` seconds (GET /stats)."""
        return stored_stats(self.store, window)

    def cancel_requested(self, run_id: str) -> bool:
        """Whether the run was asked to stop here (seen at once); another server's cancel is in the store."""
        with self._lock:
            return run_id in self._cancelled

    # -- the workflow --

    def _load(self, run_id: str) -> tuple[dict[str, Any], int, frozenset[int]]:
        """A run this process did not just record: its row's state, and what an earlier process stored."""
        stored = self.store.run(run_id)
        return (
            {} if stored is None else dict(stored.state),
            *stored_before(self.store, run_id),
        )

    async def _run_workflow(self, run_id: str) -> str:
        """One run: the loop, driven to its end inside the workflow; its stop reason.

        Async, so that a run waiting for a decision holds no thread; the store's writes go to worker threads.
        The run's request is read without a step: it is fixed when the run is recorded, so every replay reads
        the same (a run just recorded here is not read at all)."""
        with self._lock:
            request: RunRequest | None = self._fresh.pop(run_id, None)
        prior: int = 0
        progress: frozenset[int] = frozenset()
        if request is None:
            form, prior, progress = await asyncio.to_thread(self._load, run_id)
            try:
                request = record_from_json(form, run_id).request
            except RunStateVersionError as error:
                await asyncio.to_thread(end_refused, self.store, run_id, str(error))
                return "error"
            if request is None:
                message = f"run {run_id!r} has no request to run"
                await asyncio.to_thread(end_refused, self.store, run_id, message)
                return "error"
        token = DurableInterrupt()
        messages: list[Callable[[], Sequence[Mapping[str, Any]]]] = []
        sink = StoreSink(
            self.store,
            run_id,
            request,
            lambda: messages[0]() if messages else (),
            prior=prior,
            progress_rows=progress,
        )
        durable = DurableRun(
            engine=self._engine,
            watch=LiveWatch(
                lambda: self.cancel_requested(run_id),
                lambda: self.store.cancel_requested(run_id),
                request.deadline_at,
            ),
            token=token,
            begin_model_call=sink.begin_model_call,
            model_call_offset=sink.model_call_offset,
            set_offset=sink.set_offset,
            count_tool_start=sink.count_tool_start,
            close_ask=functools.partial(self.store.close_ask, run_id),
        )
        events = arun_events(
            request.messages,
            DurableModel(self.model, durable),
            DurableTools(self.registry, durable),
            self._options(request, durable, token),
        )
        messages.append(events.messages)
        try:
            async for event in events:
                if sink.add(event):
                    # A call about to wait for a decision: its ask is stored before the wait begins.
                    await asyncio.to_thread(sink.flush)
            sink.close()
            await asyncio.to_thread(sink.flush)
        finally:
            sink.close()
            # The loop's state and this run's sink and steps refer to each other through it: cleared, they go as the
            # run ends, not at the next full collection of the process (a run of many messages: hundreds of MB).
            messages.clear()
            with self._lock:
                # A long-lived server forgets the runs it has finished.
                self._cancelled.discard(run_id)
        return events.result.stop_reason

    def _options(
        self, request: RunRequest, durable: DurableRun, token: DurableInterrupt
    ) -> RunOptions:
        options = self.options
        approve = options.approve
        return dataclasses.replace(
            options,
            conversation_id=request.conversation_id,
            cancel=token,
            # The deadline is watched by the steps against the wall clock it was set by, and reaches the loop
            # through the token, as a replay will see it.
            deadline=None,
            approve=durable_approver(durable, request.deadline_at)
            if approve is None
            else recorded_approver(self._engine, approve),
            max_steps=request.max_steps or options.max_steps,
            max_tool_calls=request.max_tool_calls
            if request.max_tool_calls is not None
            else options.max_tool_calls,
        )


def _dbos_loop() -> asyncio.AbstractEventLoop | None:
    """DBOS's background event loop, where its recovered async workflows run, once it is running (not public in
    dbos 3.x: read with care, and None when it is not where it was)."""
    try:
        from dbos._dbos import _get_dbos_instance  # type: ignore[import-not-found,unused-ignore]

        loop = _get_dbos_instance()._background_event_loop._loop
    except Exception:  # noqa: BLE001 - any other layout of DBOS's internals: start workflows its public way
        return None
    return (
        loop
        if isinstance(loop, asyncio.AbstractEventLoop) and loop.is_running()
        else None
    )


def _workflow_of(runs: DurableRuns) -> Callable[[str], Awaitable[str]]:
    """The workflow as a plain function (DBOS registers functions, not bound methods), under a fixed name."""

    async def run_workflow(run_id: str) -> str:
        return await runs._run_workflow(run_id)

    return run_workflow
