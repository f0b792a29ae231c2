"""A run an earlier release stored with a lone surrogate or NaN (before the door refused them) reads back through
the API without a 500: the surrogate as its JSON escape, NaN as null with a note saying where."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.serve_helpers import SourceServer, over, stop_all

PROMPT = "what is the weather in Paris"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, source_build: Path) -> Iterator[tuple[SourceServer, Path]]:
    cwd = tmp_path_factory.mktemp("stored")
    database = cwd / "runs.sqlite"
    server = SourceServer(source_build, cwd, "--database", f"sqlite:///{database}").start()
    try:
        yield server, database
    finally:
        stop_all([server])


def _finished_run(server: SourceServer) -> str:
    run_id = server.start_run(PROMPT)
    server.wait_for(run_id, over)
    return run_id


def _rewrite(database: Path, run_id: str, old: str, new: str) -> None:
    """The run's row and events as an earlier release wrote them: `new` (JSON text) where `old` was, and its events
    without their SSE text (a release before that column)."""
    with sqlite3.connect(database) as connection:
        [state] = connection.execute("SELECT state FROM toolgen_runs WHERE id = ?", (run_id,)).fetchone()
        assert old in state
        connection.execute("UPDATE toolgen_runs SET state = ? WHERE id = ?", (state.replace(old, new), run_id))
        for seq, data in connection.execute(
            "SELECT seq, data FROM toolgen_run_events WHERE run_id = ?", (run_id,)
        ).fetchall():
            connection.execute(
                "UPDATE toolgen_run_events SET data = ?, sse = NULL WHERE run_id = ? AND seq = ?",
                (data.replace(old, new), run_id, seq),
            )


def test_a_stored_lone_surrogate_reads_back_as_its_escape_in_the_run_the_list_and_the_stream(
    stored: tuple[SourceServer, Path],
) -> None:
    server, database = stored
    run_id = _finished_run(server)
    # What a release before the door's 422 stored for a user's "Pa\ud800ris": the JSON escape, as UTF-8 has no form.
    _rewrite(database, run_id, "Paris", "Pa\\ud800ris")

    answer = server.client.get(f"/runs/{run_id}")
    assert answer.status_code == 200, answer.text
    assert b'"content":"what is the weather in Pa\\ud800ris"' in answer.content  # the escape, the rest as it was
    state = answer.json()
    assert state["messages"][0] == {"role": "user", "content": "what is the weather in Pa\ud800ris"}
    assert "notes" not in state  # nothing was replaced
    assert state["status"] == "finished" and state["stop_reason"] == "finished"

    listed = server.client.get("/runs", params={"limit": 100})
    assert listed.status_code == 200, listed.text
    [run] = [r for r in listed.json()["runs"] if r["id"] == run_id]
    assert run["prompt"] == "what is the weather in Pa\ud800ris"

    events = server.events(run_id)
    assert events[-1][1] == "run_finished"
    assert "Pa\ud800ris" in json.dumps([data for _, _, data in events], ensure_ascii=False)
    assert server.client.get("/stats").status_code == 200
    assert "Traceback" not in server.log()


def test_a_stored_nan_is_sent_as_null_and_the_answer_says_where(stored: tuple[SourceServer, Path]) -> None:
    server, database = stored
    run_id = _finished_run(server)
    # A release before the door refused NaN kept a message's extra field as it came.
    _rewrite(database, run_id, f'"content":"{PROMPT}"', f'"content":"{PROMPT}","weight":NaN')

    answer = server.client.get(f"/runs/{run_id}")
    assert answer.status_code == 200, answer.text
    state = answer.json()
    assert state["messages"][0] == {"role": "user", "content": PROMPT, "weight": None}
    assert state["notes"] == [
        "a number JSON cannot carry (NaN or Infinity), stored by an earlier release, is sent as null at "
        "/messages/0/weight"
    ]
    assert server.client.get("/runs", params={"limit": 100}).status_code == 200
    assert "Traceback" not in server.log()
