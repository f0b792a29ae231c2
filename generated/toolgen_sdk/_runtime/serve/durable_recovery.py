# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Runs an earlier process left, at launch: ended when this release cannot resume them, decisions resent, starts made."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from .durable_tools import approval_topic
from .run_record import RUN_STATE_VERSION, error_fields
from .store import RunStore, StoredEvent

# Sends a claimed decision to its run: (run id, call id, round, decision).
SendDecision = Callable[[str, str, int, Mapping[str, Any]], None]


def send_decision(
    engine: Any, run_id: str, call_id: str, round: int, decision: Mapping[str, Any]
) -> None:
    """The decision on a call as a DBOS message to its run; keyed, so that sending again (after a crash between
    the claim and the send) delivers it once."""
    topic = approval_topic(call_id, round)
    engine.send(
        run_id, dict(decision), topic=topic, idempotency_key=f"{run_id}:{topic}"
    )


def resend_decisions(store: RunStore, send: SendDecision) -> None:
    """Decisions claimed by a process that died before sending them reach their runs now."""
    for run_id in store.runs_with_status("awaiting_approval"):
        for call_id, round, decision in store.decisions(run_id):
            send(run_id, call_id, round, decision)


def start_recorded(
    store: RunStore, engine: Any, executor_id: str, begin: Callable[[str], None]
) -> None:
    """Runs this executor recorded whose workflow never started (the process died between the two, or the run was
    recorded before launch): started now."""
    for run_id in store.runs_with_status("running", executor_id):
        if engine.get_workflow_status(run_id) is None:
            begin(run_id)


def refuse_unresumable(
    store: RunStore, engine: Any, executor_id: str, app_version: str
) -> None:
    """Unfinished runs this engine cannot resume (a state form it cannot read, or a workflow this executor started
    under another version of the engine than `app_version`) end now with an error that names both versions,
    instead of waiting for ever."""
    for status in ("running", "awaiting_approval"):
        for run_id in store.runs_with_status(status):
            stored = store.run(run_id)
            if stored is None:
                continue
            version = stored.state.get("version", 0)
            if version != RUN_STATE_VERSION:
                end_refused(
                    store,
                    run_id,
                    f"run {run_id!r} was left unfinished with run state version {version!r}; this "
                    f"release runs version {RUN_STATE_VERSION} and cannot resume it: start it again",
                )
                continue
            workflow = engine.get_workflow_status(run_id)
            if (
                workflow is None
                or workflow.status != "PENDING"
                or workflow.executor_id != executor_id
                or workflow.app_version == app_version
            ):
                continue
            end_refused(
                store,
                run_id,
                f"run {run_id!r} was left unfinished by a workflow of version "
                f"{workflow.app_version!r}; this release runs {app_version!r} and cannot resume it: "
                "start it again",
            )
            engine.cancel_workflow(run_id)


def end_refused(store: RunStore, run_id: str, message: str) -> None:
    """End a run this release cannot run: a fatal `error` event of type `version` saying `message`, then its
    `run_finished`, with the run's status `error`."""
    last = store.last_seq(run_id)
    now = time.time()
    error = {
        "message": message,
        "type": "version",
        "code": None,
        "status": None,
        "fatal": True,
        "retry": None,
    }
    finished = {"stop_reason": "error", "steps": 0, "metrics": {}}
    stored = store.run(run_id)
    state = dict(stored.state) if stored is not None else {}
    store.add_events(
        run_id,
        [
            StoredEvent(last + 1, "error", error, now),
            StoredEvent(last + 2, "run_finished", finished, now),
        ],
        conversation_id=None if stored is None else stored.conversation_id,
        ended=(
            "error",
            {**state, "stop_reason": "error", "error": error_fields(error)},
        ),
    )
