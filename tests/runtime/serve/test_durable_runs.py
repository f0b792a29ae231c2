"""Durable runs as the service starts, stores and replays them: a recorded run runs even when its process dies before
its workflow starts, `result()` is woken by the run's last write, each event is stored with the SSE text the service
sends, and a replay after a restart sends the very bytes a live reader got.

Each DurableRuns lives in a process of its own (DBOS keeps one engine per process); the service's app is called
in that process through httpx's ASGI transport.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.projects import TESTS

import toolgen.runtime as rt
from toolgen.runtime.loop.events import sse_encode
from toolgen.runtime.serve.store_rows import event_row

pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")
pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")

from toolgen.runtime.serve.store import RunStore  # noqa: E402 - after the skip: it needs sqlalchemy

FIXTURE = TESTS / "fixtures" / "serve" / "runs-before-versions.sqlite"

# argv: database URL, out file, action, executor id. The model says a few words, calls `lookup` once, then answers.
SCRIPT = """
import asyncio, json, os, sys, time
from pathlib import Path
import httpx
from toolgen.runtime import DurableRuns, Registry, ScriptedModel, assistant_turn, service_app, tool_call
from toolgen.runtime.serve.auth import open_access
from toolgen.runtime.serve.wakeup import ended_key

database, out, action, executor = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
tools = Registry({})
tools.add("lookup", {"type": "object"}, lambda args, ctx: "found it")
turns = [assistant_turn("Looking it up now.", tool_call("lookup", {}, id="call_1")), "It is found, and here it is."]
tools.add("careful", {"type": "object"}, lambda args, ctx: "careful", requires_approval=True)
if "carefully" in sys.argv[5:]:
    turns = [assistant_turn(None, tool_call("careful", {}, id="call_2")), "Done."]
if action == "wait_for_decision":
    import toolgen.runtime.serve.durable as durable
    durable.APP_VERSION = "toolgen-durable-runs-2"  # the engine version before this one
runs = DurableRuns(tools, ScriptedModel(turns), database_url=database, name="durable-runs-test",
                   executor_id=executor, launch=action != "record_before_launch")
user = [{"role": "user", "content": "Find it."}]

async def events(run_id):
    transport = httpx.ASGITransport(app=service_app(runs, auth=open_access))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        answer = await client.get(f"/runs/{run_id}/events")
        return answer.status_code, answer.text

def ended(run_id):
    found = runs.result(run_id, timeout=120)
    return None if found is None else {"status": found.status, "stop_reason": found.state.get("stop_reason")}

if action == "record_and_die":
    # What POST /runs does before it answers 201; the process then dies before the workflow starts.
    out.write_text(runs.record(user, None))
    os._exit(0)
elif action == "record_before_launch":
    run_id = runs.record(user, None)
    runs.begin(run_id)  # before launch(): launch starts it
    runs.launch()
    out.write_text(json.dumps({"run_id": run_id, "ended": ended(run_id)}))
elif action == "resume":
    run_id = out.read_text()
    out.write_text(json.dumps({"ended": ended(run_id), "other": ended("no-such-run")}))
elif action == "woken":
    run_id = runs.record(user, None)
    with runs.store.wakeups.watch(ended_key(run_id)) as watch:
        runs.begin(run_id)
        woken = watch.wait_blocking(120)
    head = runs.store.head(run_id)
    awaited = asyncio.run(runs.aresult(run_id, timeout=120))
    out.write_text(json.dumps({"woken": woken, "status": head[1], "ended": ended(run_id),
                               "awaited": awaited.status, "none": asyncio.run(runs.aresult("no-such-run"))}))
elif action == "live":
    run_id = runs.start(user, None)
    status, text = asyncio.run(events(run_id))  # read while the run runs: ends after run_finished
    out.write_text(json.dumps({"run_id": run_id, "status": status, "text": text, "ended": ended(run_id)}))
elif action == "wait_for_decision":
    # As a server of the engine version before left it: killed while the run waited for a decision.
    run_id = runs.start([{"role": "user", "content": "Find it carefully."}], None)
    while runs.store.head(run_id)[1] != "awaiting_approval":
        time.sleep(0.05)
    out.write_text(run_id)
    os._exit(0)
elif action == "launch":
    run_id = out.read_text()
    found = runs.store.run(run_id)
    last = [e.event(found.conversation_id).to_json() for e in runs.store.events_after(run_id, 0, 10_000)][-2:]
    out.write_text(json.dumps({"status": found.status, "last": last}))
elif action == "replay":
    run_id = out.read_text()
    status, text = asyncio.run(events(run_id))
    out.write_text(json.dumps({"status": status, "text": text}))
runs.close()
"""


def _process(
    tmp_path: Path, action: str, out: Path, executor: str = "local", *extra: str
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "durable_runs.py"
    script.write_text(SCRIPT, encoding="utf-8")
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return subprocess.run(
        [sys.executable, str(script), database, str(out), action, executor, *extra],
        capture_output=True,
        text=True,
        timeout=240,
    )


def _done(tmp_path: Path, action: str, out: Path, executor: str = "local") -> dict[str, Any]:
    done = _process(tmp_path, action, out, executor)
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return found


def test_a_run_recorded_by_a_process_that_died_before_its_workflow_started_runs_at_its_executors_next_launch(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.txt"
    recorded = _process(tmp_path, "record_and_die", out)
    assert recorded.returncode == 0, recorded.stderr
    run_id = out.read_text(encoding="utf-8")
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        # Kept, not begun: no event yet; it is the recording executor's to start (as DBOS resumes its own).
        assert store.head(run_id) == (run_id, "running") and store.events_after(run_id, 0) == []
        assert store.runs_with_status("running", "local") == [run_id]
        assert store.runs_with_status("running", "elsewhere") == []
    finally:
        store.close()
    resumed = _done(tmp_path, "resume", out)
    assert resumed == {"ended": {"status": "finished", "stop_reason": "finished"}, "other": None}


def test_a_run_left_unfinished_by_the_engine_version_before_is_ended_at_launch_naming_both_versions(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.txt"
    left = _process(tmp_path, "wait_for_decision", out, "local", "carefully")
    assert left.returncode == 0, left.stderr
    found = _done(tmp_path, "launch", out)
    assert found["status"] == "error"
    error, finished = found["last"]
    assert error["type"] == "error" and error["data"]["fatal"]
    assert "'toolgen-durable-runs-2'" in error["data"]["message"]
    assert "'toolgen-durable-runs-3'" in error["data"]["message"]
    assert finished["type"] == "run_finished" and finished["data"]["stop_reason"] == "error"


def test_a_run_recorded_and_begun_before_launch_starts_at_launch(tmp_path: Path) -> None:
    found = _done(tmp_path, "record_before_launch", tmp_path / "out.json")
    assert found["ended"] == {"status": "finished", "stop_reason": "finished"}


def test_the_runs_last_write_wakes_those_waiting_for_its_end_once_its_end_is_stored(tmp_path: Path) -> None:
    found = _done(tmp_path, "woken", tmp_path / "out.json")
    assert found == {
        "woken": True,
        "status": "finished",
        "ended": {"status": "finished", "stop_reason": "finished"},
        "awaited": "finished",
        "none": None,
    }


def test_a_replay_after_a_restart_sends_the_bytes_a_live_reader_got(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    live = _done(tmp_path, "live", out)
    assert live["status"] == 200 and live["ended"]["status"] == "finished"
    out.write_text(live["run_id"], encoding="utf-8")
    replay = _done(tmp_path, "replay", out)  # a new process: DBOS and the store opened again
    assert replay == {"status": 200, "text": live["text"]}
    # The bytes are those the release before made by reading each row back: the same events, the same encoding.
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        head = store.head(live["run_id"])
        assert head is not None
        stored = store.events_after(live["run_id"], 0, 10_000)
        assert "".join(sse_encode(e.event(head[0])) for e in stored) == live["text"]
        kinds = [e.type for e in stored]
        assert kinds[0] == "run_started" and kinds[-1] == "run_finished" and "tool_call_finished" in kinds
        assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    finally:
        store.close()


def test_rows_kept_before_the_sse_text_was_are_sent_as_they_always_were_encoded(tmp_path: Path) -> None:
    copy = tmp_path / "old.sqlite"
    shutil.copy(FIXTURE, copy)
    store = RunStore(f"sqlite:///{copy}")  # adds the sse column the old table lacks
    try:
        for run_id in store.runs_with_status("finished"):
            head = store.head(run_id)
            assert head is not None
            stored = store.events_after(run_id, 0, 10_000)
            texts = store.sse_after(run_id, head[0], 0, 10_000)
            assert texts == [sse_encode(e.event(head[0])) for e in stored]
            # From a cursor too, and in pages.
            assert store.sse_after(run_id, head[0], 2, 3) == texts[2:5]
    finally:
        store.close()


def _events_of_every_kind() -> list[Any]:
    """The events of a run with text, a tool call needing approval, progress, an error and a note."""
    tools = rt.Registry({})

    def careful(args: Any, ctx: Any) -> str:
        ctx.report_progress(1, 2, "half way \u00e9")
        return "careful done"

    def broken(args: Any, ctx: Any) -> str:
        raise RuntimeError("broken on purpose")

    tools.add("careful", {"type": "object"}, careful, requires_approval=True)
    tools.add("broken", {"type": "object"}, broken)
    turn = rt.assistant_turn(
        'Checking \u2028both "quoted" \\ tools \U0001f600.',
        rt.tool_call("careful", {}, id="c1"),
        rt.tool_call("broken", {}, id="c2"),
    )
    events: list[Any] = []
    rt.run(
        [{"role": "user", "content": "Go."}],
        rt.ScriptedModel([turn, "Done."]),
        tools,
        stream=True,
        conversation_id="conv-\u00fc",
        approve=lambda request: rt.Approval.approve(),
        on_event=events.append,
    )
    return events


def test_each_stored_events_sse_text_is_what_sse_encode_gives_it_under_its_stored_seq() -> None:
    events = _events_of_every_kind()
    kinds = {event.type for event in events}
    assert {"text_delta", "approval_requested", "tool_call_progress", "tool_call_finished", "run_finished"} <= kinds
    for offset in (0, 7):
        for event in events:
            row = event_row(event, event.seq + offset)
            assert row.sse == sse_encode(dataclasses.replace(event, seq=event.seq + offset))
            assert json.loads(row.data) == json.loads(json.dumps(event.data, default=str))
            assert (row.seq, row.type, row.time) == (event.seq + offset, event.type, event.time)
    # A lone surrogate (which a model may send) has no UTF-8 form: its escape is kept, as sse_encode sends it.
    cut = rt.TextDeltaEvent(conversation_id="conv-\u00fc", seq=3, text="cut \ud800 here")
    row = event_row(cut, 3)
    assert row.sse == sse_encode(cut) and "\\ud800" in row.data
    row.data.encode("utf-8")
    row.sse.encode("utf-8")
