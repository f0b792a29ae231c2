# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Durable runs on DBOS: the agent loop as a workflow, each model call and each tool call a step.

The loop's state (RunState) is rebuilt by replaying the workflow: a step that finished before a crash returns
its recorded result instead of running again, so after a restart the run goes on from its last finished step
without calling the model or a tool twice. A tool call whose handler was running when the process died is run
again only when its tool says it is safe to repeat (MCP's `idempotentHint` or `readOnlyHint`); any other is
answered as interrupted, and the model decides what to do. A call that requires approval waits on
`DBOS.recv`, durably, for the decision another process sends (`decide`), however long that takes.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from ..clients.base import ModelClient
from ..loop.events import RunEvent
from ..loop.options import RunOptions
from ..loop.policies import Approval
from ..loop.state import BatchCall, RunState
from ..models.base import ToolSpec
from ..streams.events import (
    MessageEnd,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from ..tools.registry import Registry, ToolContext, ToolError, ToolOutcome
from ..wires.base import ProviderError, Request, Response
from ..wires.settings import checked_plan, settings_wire
from .store import RunStore, StoredEvent

# The version DBOS files workflows under: recovery resumes only workflows of the running version, and the
# default (a hash of the workflow's source) would change with every edit of the package.
APP_VERSION = "toolgen-durable-runs-1"
# How long one durable wait for a decision lasts before it is renewed; a decision may take days.
_DECISION_WAIT_SECONDS = 3600.0
INTERRUPTED_KIND = "interrupted"
# Streamed deltas are written in batches at most this far apart, for the live readers of the event stream.
_DELTA_BATCH_SECONDS = 0.05


class DurableRunsError(RuntimeError):
    """The durable engine could not start: a missing extra or a database it cannot use; the message says which."""


def _dbos() -> Any:
    try:
        import dbos
    except ModuleNotFoundError as error:
        if error.name != "dbos":
            raise
        raise DurableRunsError(
            "durable runs need DBOS, the `durable` extra: pip install dbos"
        ) from None
    return dbos


def safe_to_repeat(spec: ToolSpec | None) -> bool:
    """Whether a call cut short by a crash may run again: the tool says it is idempotent or only reads."""
    if spec is None:
        return False
    hints = spec.annotations or {}
    return bool(hints.get("idempotentHint") or hints.get("readOnlyHint"))


def status_of(run: RunState) -> str:
    """The run's status for the service: finished, error, or stopped (a limit) once the loop has stopped."""
    if run.stop in ("finished", "return_direct"):
        return "finished"
    return "error" if run.stop == "error" else "stopped"


class DurableRuns:
    """The service's engine: starts runs as DBOS workflows, hands decisions to them, resumes them on launch.

    One per process (DBOS keeps one instance); `close()` lets go of it.
    """

    def __init__(
        self,
        registry: Registry,
        model: ModelClient,
        *,
        database_url: str,
        name: str = "toolgen",
        executor_id: str = "local",
        stream: bool = True,
        max_steps: int = 10,
        values: Mapping[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None,
        on_unsupported: Literal["error", "note"] = "error",
    ) -> None:
        self.registry = registry
        self.model = model
        self.stream = stream
        self.max_steps = max_steps
        self.values = dict(values or {})
        # Checked now, as every run checks them: a setting the model's wire cannot carry stops the service
        # from starting (UnsupportedSettings) rather than each run.
        self.settings = dict(settings or {})
        self.on_unsupported = on_unsupported
        self.wire = settings_wire(model)
        checked_plan(self.settings, self.wire, registry.definitions(), on_unsupported)
        try:
            self.store = RunStore(database_url)
        except Exception as error:  # noqa: BLE001 - any failure to open the database is said plainly
            raise DurableRunsError(
                f"cannot use the database {database_url!r}: {error}"
            ) from None
        dbos = _dbos()
        self._engine = dbos.DBOS
        self._set_workflow_id = dbos.SetWorkflowID
        config = {
            "name": name,
            "system_database_url": database_url,
            "application_version": APP_VERSION,
            "executor_id": executor_id,
            "log_level": "WARNING",
        }
        self._engine(config=config)
        self._workflow = _register(self._engine, self)
        try:
            self._engine.launch()
        except Exception as error:  # noqa: BLE001 - DBOS's own error, with the database named
            self._engine.destroy(destroy_registry=True)
            raise DurableRunsError(
                f"DBOS could not start on {database_url!r}: {error}"
            ) from None
        self._resend_decisions()

    def close(self) -> None:
        self._engine.destroy(destroy_registry=True)
        self.store.close()

    # -- what the HTTP service calls --

    def start(
        self, messages: Sequence[Mapping[str, Any]], conversation_id: str | None
    ) -> str:
        """Start a run of `messages`; its id, which is also its DBOS workflow id."""
        run_id = uuid.uuid4().hex
        conversation = conversation_id or run_id
        plain = [dict(m) for m in messages]
        self.store.create_run(run_id, conversation, plain)
        with self._set_workflow_id(run_id):
            self._engine.start_workflow(self._workflow, run_id, conversation, plain)
        return run_id

    def decide(self, run_id: str, call_id: str, approval: Approval) -> bool:
        """Send the decision on a pending call to its run; False when that call is not pending."""
        decision = {
            "decision": approval.decision,
            "reason": approval.reason,
            "arguments": approval.arguments,
        }
        if not self.store.claim_decision(run_id, call_id, decision):
            return False
        self._send(run_id, call_id, decision)
        return True

    def _send(self, run_id: str, call_id: str, decision: Mapping[str, Any]) -> None:
        # Keyed, so that sending again (after a crash between the claim and the send) delivers it once.
        self._engine.send(
            run_id,
            dict(decision),
            topic=f"approval:{call_id}",
            idempotency_key=f"approval:{run_id}:{call_id}",
        )

    def _resend_decisions(self) -> None:
        """Decisions claimed by a process that died before sending them reach their runs now."""
        for run_id in self.store.runs_with_status("awaiting_approval"):
            for call_id, decision in self.store.decisions(run_id):
                self._send(run_id, call_id, decision)

    # -- the steps' bodies, run by DBOS at most once each unless a crash cut them short --

    def model_call(
        self, run_id: str, request: Request, base_seq: int
    ) -> dict[str, Any]:
        """One model call: the events it streamed (kept as they come, for live readers) and its answer."""
        self.store.drop_events_after(run_id, base_seq)
        deltas: list[tuple[str, dict[str, Any]]] = []
        unsent: list[StoredEvent] = []
        calls: dict[int, tuple[str | None, str | None]] = {}
        sent_at = time.monotonic()

        def send() -> None:
            nonlocal sent_at
            self.store.add_events(run_id, unsent)
            unsent.clear()
            sent_at = time.monotonic()

        def note(kind: str, data: dict[str, Any]) -> None:
            deltas.append((kind, data))
            unsent.append(
                StoredEvent(base_seq + len(deltas), kind, {**data}, time.time())
            )
            # A write per delta would cost a commit per word; readers poll every 0.1 s anyway.
            if time.monotonic() - sent_at >= _DELTA_BATCH_SECONDS:
                send()

        answer: Response | ProviderError | None = None
        try:
            if not self.stream:
                answer = self.model.complete(request)
            else:
                for event in self.model.stream(request):
                    if isinstance(event, (TextDelta, ReasoningDelta)):
                        kind = (
                            "text_delta"
                            if isinstance(event, TextDelta)
                            else "reasoning_delta"
                        )
                        note(kind, {"text": event.text})
                    elif isinstance(event, ToolCallStart):
                        calls[event.index] = (event.id, event.name)
                        note("tool_call_delta", _fragment(event.index, calls, ""))
                    elif isinstance(event, ToolCallDelta):
                        fragment = _fragment(event.index, calls, event.arguments)
                        note("tool_call_delta", fragment)
                    elif isinstance(event, StreamError):
                        fields = {
                            "message": event.message,
                            "type": event.type,
                            "code": event.code,
                            "status": event.status,
                        }
                        note("error", {**fields, "fatal": False})
                    elif isinstance(event, MessageEnd):
                        answer = event.response
        except ProviderError as error:
            answer = error
        send()
        return {"deltas": deltas, "answer": _answer_data(answer)}

    def tool_call(
        self, run_id: str, call: dict[str, Any], conversation_id: str
    ) -> dict[str, Any]:
        """One tool call's outcome; a call whose earlier start a crash cut short runs again only if safe."""
        call_id = str(call.get("id", ""))
        name = str((call.get("function") or {}).get("name", ""))
        spec = self.registry.entry(name).spec if name in self.registry else None
        started_before = self.store.begin_attempt(run_id, call_id)
        if started_before and not safe_to_repeat(spec):
            return {
                "content": "Error: interrupted: the server stopped while this call was "
                "running; the tool is not marked safe to repeat, so it was not run again "
                "and its effect is unknown",
                "error": {"kind": INTERRUPTED_KIND, "message": "interrupted"},
                "seconds": 0.0,
                "result": None,
            }
        context = ToolContext(conversation_id=conversation_id, values=self.values)
        started = time.perf_counter()
        outcome = self.registry.dispatch(call, context)
        seconds = time.perf_counter() - started
        result = outcome.result
        if dataclasses.is_dataclass(result) or hasattr(result, "model_dump"):
            result = None  # the content says it all; a model object need not survive a restart
        return {
            "content": outcome.content,
            "error": None
            if outcome.error is None
            else {"kind": outcome.error.kind, "message": outcome.error.message},
            "seconds": seconds,
            "result": result,
        }


def _fragment(
    index: int, calls: Mapping[int, tuple[str | None, str | None]], arguments: str
) -> dict[str, Any]:
    call_id, name = calls.get(index, (None, None))
    return {"index": index, "id": call_id, "name": name, "arguments": arguments}


def _answer_data(answer: Response | ProviderError | None) -> dict[str, Any] | None:
    if answer is None:
        return None
    if isinstance(answer, ProviderError):
        return {
            "error": {
                "wire": answer.wire,
                "message": answer.message,
                "type": answer.type,
                "code": answer.code,
                "status": answer.status,
            }
        }
    return {"response": dataclasses.asdict(answer)}


def _answer(data: dict[str, Any] | None) -> Response | ProviderError | None:
    if data is None:
        return None
    if "error" in data:
        error = data["error"]
        return ProviderError(
            error["wire"],
            error["message"],
            type=error["type"],
            code=error["code"],
            status=error["status"],
        )
    return Response(**data["response"])


def _register(engine: Any, runs: DurableRuns) -> Callable[..., Any]:
    """The workflow and its steps, registered with DBOS under fixed names (recovery finds them by name)."""

    def model_call(run_id: str, request: Request, base_seq: int) -> dict[str, Any]:
        return runs.model_call(run_id, request, base_seq)

    def tool_call(
        run_id: str, call: dict[str, Any], conversation_id: str
    ) -> dict[str, Any]:
        return runs.tool_call(run_id, call, conversation_id)

    steps = _Steps(
        engine.step(name="toolgen.model_call")(model_call),
        engine.step(name="toolgen.tool_call")(tool_call),
        engine.recv,
    )

    def run_workflow(
        run_id: str, conversation_id: str, messages: list[dict[str, Any]]
    ) -> str:
        return _DurableRun(runs, steps, run_id, conversation_id, messages).drive()

    workflow: Callable[..., Any] = engine.workflow(name="toolgen.run")(run_workflow)
    return workflow


@dataclasses.dataclass(frozen=True)
class _Steps:
    model: Callable[..., dict[str, Any]]
    tool: Callable[..., dict[str, Any]]
    recv: Callable[..., Any]


class _DurableRun:
    """One run's workflow body: RunState driven by recorded steps, its events and state written as it goes."""

    def __init__(
        self,
        runs: DurableRuns,
        steps: _Steps,
        run_id: str,
        conversation_id: str,
        messages: list[dict[str, Any]],
    ) -> None:
        self.runs = runs
        self.store = runs.store
        self.steps = steps
        self.run_id = run_id
        options = RunOptions(
            conversation_id=conversation_id,
            stream=runs.stream,
            max_steps=runs.max_steps,
            settings=runs.settings,
            on_unsupported=runs.on_unsupported,
        )
        # The same settings plan as run() and arun() make: the same body for the same settings.
        self.state = RunState(messages, runs.registry, options, runs.wire)
        self.last_seq = 0

    def flush(self, status: str = "running") -> None:
        events: list[RunEvent] = self.state.drain()
        if events:
            self.last_seq = events[-1].seq
            self.store.add_events(
                self.run_id,
                [
                    StoredEvent(
                        e.seq, e.type, dict(e.data), e.time, e.trace_id, e.span_id
                    )
                    for e in events
                ],
            )
        self.store.update_run(self.run_id, status, self._snapshot())

    def _snapshot(self) -> dict[str, Any]:
        run = self.state
        return {
            "messages": run.messages,
            "metrics": run.metrics.to_json(),
            "stop_reason": run.stop if run.result is not None else None,
            "steps": run.step,
        }

    def drive(self) -> str:
        run = self.state
        run.begin()
        self.flush()
        try:
            pending = run.pending_calls()
            if pending:
                self._batch(pending)
            while not run.should_stop():
                self._step()
        except Exception as error:  # noqa: BLE001 - a failing model client or handler ends the run, not the worker
            run.fail(error)
        result = run.finish()
        self.flush(status_of(run))
        return result.stop_reason

    def _step(self) -> None:
        run = self.state
        request = run.request()
        started = run.model_started(request, self.runs.model)
        self.flush()
        recorded = self.steps.model(self.run_id, request, self.last_seq)
        for kind, data in recorded["deltas"]:
            run.emit(kind, **data)
        run.response = _answer(recorded["answer"])
        if not run.options.stream and isinstance(run.response, Response):
            run.whole_response(run.response)
        calls = run.model_finished(started)
        self.flush()
        if calls:
            self._batch(calls)

    def _batch(self, calls: list[dict[str, Any]]) -> None:
        run = self.state
        batch = run.admit(calls)
        asked = [entry for entry in batch if run.approval_request(entry) is not None]
        for entry in asked:
            self.store.add_pending(self.run_id, entry.id, entry.name, entry.arguments)
        if asked:
            self.flush("awaiting_approval")
        for entry in asked:
            run.decide(entry, self._decision(entry))
            self.flush("awaiting_approval" if entry is not asked[-1] else "running")
        for entry in run.runnable(batch):
            run.started(entry)
            self.flush()
            self._tool(entry)
            self.flush()
        run.close_batch(batch)
        self.flush()

    def _decision(self, entry: BatchCall) -> Approval:
        while True:
            message = self.steps.recv(
                f"approval:{entry.id}", timeout_seconds=_DECISION_WAIT_SECONDS
            )
            if isinstance(message, Mapping):
                decision = str(message.get("decision"))
                if decision == "approve":
                    return Approval.approve()
                if decision == "edit" and message.get("arguments") is not None:
                    return Approval.edit(
                        str(message["arguments"]), message.get("reason")
                    )
                return Approval.deny(
                    message.get("reason") or "the user denied this call"
                )

    def _tool(self, entry: BatchCall) -> None:
        run = self.state
        data = self.steps.tool(self.run_id, entry.call, run.conversation_id)
        error = data["error"]
        outcome = ToolOutcome(
            entry.id,
            entry.name,
            data["content"],
            data["result"],
            None if error is None else ToolError(error["kind"], error["message"]),
        )
        run.finished(entry, outcome, float(data["seconds"]))
