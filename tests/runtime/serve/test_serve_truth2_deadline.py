"""A decision after the run's deadline is refused (409) even before the run has written its denial, and nothing is
recorded as the person's decision; a decision claimed before the deadline is the one the run takes."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.serve_helpers import LIST_FILES, SourceServer, awaiting, over

from toolgen.runtime.serve.store import CLOSED, RunStore

DEADLINE_DENIAL = "the run reached its deadline before a decision"


def _approval_row(database: Path, run_id: str) -> tuple[str, str | None]:
    with sqlite3.connect(database) as connection:
        [row] = connection.execute(
            "SELECT call_id, decision FROM toolgen_approvals WHERE run_id = ?", (run_id,)
        ).fetchall()
    return row[0], row[1]


def test_a_decision_after_the_deadline_is_409_before_the_run_has_denied_it(
    serve: Callable[..., SourceServer], tmp_path: Path
) -> None:
    database = tmp_path / "runs.sqlite"
    url = f"sqlite:///{database}"
    first = serve("--database", url)
    token = {"TOOLGEN_SERVE_TOKEN": first.token}
    # Another server on the database, which does not run this run (its executor id is its own): it answers the
    # decision while the run's own server is down, so the deadline passes with no denial written yet.
    other = serve("--database", url, "--executor-id", "other", env=token)
    started = time.time()
    run_id = first.start_run(LIST_FILES, deadline=8)
    [call] = first.wait_for(run_id, awaiting)["pending"]
    first.kill()
    time.sleep(max(0.0, started + 8.5 - time.time()))
    assert other.state(run_id)["status"] == "awaiting_approval"  # the run has not written its denial

    answer = other.client.post(f"/runs/{run_id}/approvals/{call['id']}", json={"decision": "approve"})
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"] == {
        "field": "/id",
        "message": f"the deadline of run {run_id!r} passed before a decision on call {call['id']!r}: the run "
        "denies it, and takes no decision now",
    }
    assert _approval_row(database, run_id) == (call["id"], None)  # nothing recorded as the person's decision

    # The run's own server, back: the run denies the call for its deadline, and the ask is closed as such.
    again = serve("--database", url, env=token)
    state = again.wait_for(run_id, over)
    assert (state["status"], state["stop_reason"]) == ("stopped", "deadline")
    [tool] = [m for m in state["messages"] if m["role"] == "tool"]
    assert DEADLINE_DENIAL in tool["content"]
    decided = [data for _, kind, data in again.events(run_id) if kind == "approval_decided"]
    assert [(d["decision"], d["reason"]) for d in decided] == [("deny", DEADLINE_DENIAL)]
    assert _approval_row(database, run_id) == (call["id"], CLOSED)
    late = again.client.post(f"/runs/{run_id}/approvals/{call['id']}", json={"decision": "approve"})
    assert late.status_code == 409
    assert late.json()["error"]["message"] == f"run {run_id!r} has ended (stopped)"


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    opened.create_run("run", "run", {"version": 1})
    yield opened
    opened.close()


APPROVE = {"decision": "approve", "reason": None, "arguments": None}


def test_the_ask_row_decides_between_a_decision_and_the_deadline_whichever_comes_first(store: RunStore) -> None:
    later = time.time() + 3600
    store.add_pending("run", "a", "run_command", "{}", 1, deadline=later)
    store.add_pending("run", "b", "run_command", "{}", 1, deadline=later)
    # A decision claimed first is the one the run takes: closing the ask at the deadline then fails.
    assert store.claim_decision("run", "a", APPROVE) == 1
    assert store.close_ask("run", "a", 1) is False
    assert store.decisions("run") == [("a", 1, APPROVE)]
    # The deadline first: the ask is closed, no decision is taken after, and none is sent again at a launch.
    assert store.close_ask("run", "b", 1) is True
    assert store.close_ask("run", "b", 1) is True  # a replay closes it again: the same answer
    assert store.claim_decision("run", "b", APPROVE) == "deadline"
    assert store.decisions("run") == [("a", 1, APPROVE)]
    assert store.pending("run") == []
    # Past the ask's deadline a decision is refused before the run has closed it, and nothing is written.
    store.add_pending("run", "c", "run_command", "{}", 1, deadline=time.time() - 1)
    assert store.claim_decision("run", "c", APPROVE) == "deadline"
    assert [p["id"] for p in store.pending("run")] == ["c"]
    # An ask without a deadline (or from before asks kept one) takes a decision at any time.
    store.add_pending("run", "d", "run_command", "{}", 1)
    assert store.claim_decision("run", "d", APPROVE) == 1
    assert store.claim_decision("run", "d", APPROVE) == "not_pending"
    assert store.claim_decision("run", "never", APPROVE) == "not_pending"
    store.request_cancel("run")
    assert store.claim_decision("run", "c", APPROVE) == "cancelled"
