"""Tool progress end to end: `ctx.report_progress()` in a handler becomes `tool_call_progress` events, in order and
coalesced, under run(), arun() and a served run (stored, and matched to the stored rows when a run is resumed
after a SIGKILL), the page has a handler for it, and an MCP server's progress notifications (the reference
server-everything's long running operation) arrive the same way."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.mcp_peers import peer_command

import toolgen.runtime as rt
from toolgen.runtime.loop.events import EVENT_CLASSES
from toolgen.runtime.loop.progress import PROGRESS_INTERVAL
from toolgen.runtime.serve.page_turns import TURNS_SCRIPT

USER = [{"role": "user", "content": "Go."}]
REPORTS = 100_000


def _progress(events: list[Any], call_id: str | None = None) -> list[Any]:
    return [e for e in events if e.type == "tool_call_progress" and call_id in (None, e.id)]


def _assert_between_start_and_end(events: list[Any], call_id: str) -> None:
    """The call's progress events come after its tool_call_started and before its tool_call_finished."""
    places = {
        e.type: i for i, e in enumerate(events) if getattr(e, "id", None) == call_id and e.type != "tool_call_progress"
    }
    for i, event in enumerate(events):
        if event.type == "tool_call_progress" and event.id == call_id:
            assert places["tool_call_started"] < i < places["tool_call_finished"], (i, places)


def _chatty_registry(took: dict[str, float]) -> Any:
    """`chatty` reports REPORTS times as fast as it can; `paced` (async) five times, waiting a little between."""
    tools = rt.Registry({})

    def chatty(args: Any, ctx: Any) -> str:
        started = time.monotonic()
        for step in range(1, REPORTS + 1):
            ctx.report_progress(step, REPORTS, f"step {step}")
        took["chatty"] = time.monotonic() - started
        return "chatty done"

    async def paced(args: Any, ctx: Any) -> str:
        for step in range(1, 6):
            ctx.report_progress(step, 5)
            await asyncio.sleep(0.01)
        return "paced done"

    tools.add("chatty", {"type": "object"}, chatty)
    tools.add("paced", {"type": "object"}, paced)
    return tools


def _both() -> Any:
    turn = rt.assistant_turn(None, rt.tool_call("chatty", {}, id="c_chatty"), rt.tool_call("paced", {}, id="c_paced"))
    return rt.ScriptedModel([turn, "Both done."])


# ---- what a handler may report ----


def test_report_progress_makes_values_sane_and_never_raises() -> None:
    got: list[tuple[Any, ...]] = []
    ctx = rt.ToolContext(on_progress=lambda *report: got.append(report))
    ctx.report_progress(3, 10, "three")
    ctx.report_progress(-2, 10)  # below 0: 0
    ctx.report_progress(12, 10)  # past the total: the total
    ctx.report_progress(5, float("nan"), 42)  # type: ignore[arg-type] # no total, a message that is no string
    ctx.report_progress(5, 0)  # a total of 0 is no total
    ctx.report_progress(7.5, None, "x" * 1000)  # a long message is cut
    for nothing in (float("nan"), float("inf"), None, "7", True):
        ctx.report_progress(nothing)  # type: ignore[arg-type]
    ctx.report_progress(1, 2, "lone \ud800 surrogate")
    assert got[:5] == [
        (3.0, 10.0, "three"),
        (0.0, 10.0, None),
        (10.0, 10.0, None),
        (5.0, None, None),
        (5.0, None, None),
    ]
    assert got[5][0] == 7.5 and len(got[5][2]) <= 500 and got[5][2].endswith("characters cut)")
    assert got[6] == (1.0, 2.0, "lone \ufffd surrogate") and len(got) == 7

    def broken(*report: Any) -> None:
        raise RuntimeError("the sink broke")

    rt.ToolContext(on_progress=broken).report_progress(1)  # swallowed: the handler goes on
    rt.ToolContext().report_progress(1, 2, "outside a run")  # a no-op


def test_outside_a_run_a_handler_that_reports_progress_works_as_ever() -> None:
    tools = rt.Registry({})

    def chatty(args: Any, ctx: Any) -> str:
        ctx.report_progress(1, 1)
        return "fine"

    tools.add("chatty", {"type": "object"}, chatty)
    outcome = tools.dispatch(rt.tool_call("chatty", {}, id="c1"))
    assert (outcome.is_error, outcome.content) == (False, "fine")


# ---- run() and arun() ----


@pytest.mark.parametrize("mode", ["run", "arun"])
def test_progress_events_are_in_order_coalesced_and_end_with_the_last_report(mode: str) -> None:
    took: dict[str, float] = {}
    events: list[Any] = []
    tools = _chatty_registry(took)
    if mode == "run":
        result = rt.run(USER, _both(), tools, on_event=events.append)
    else:
        result = asyncio.run(rt.arun(USER, _both(), tools, on_event=events.append))
    assert result.stop_reason == "finished"
    assert [c.content for c in result.calls] == ["chatty done", "paced done"]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    for call_id in ("c_chatty", "c_paced"):
        _assert_between_start_and_end(events, call_id)
    chatty = _progress(events, "c_chatty")
    # Coalesced: at most one event per interval while it reported, and its last report before it finished.
    assert 1 <= len(chatty) <= took["chatty"] / PROGRESS_INTERVAL + 2, (len(chatty), took)
    assert [e.progress for e in chatty] == sorted(e.progress for e in chatty)
    assert (chatty[-1].progress, chatty[-1].total, chatty[-1].message) == (REPORTS, REPORTS, f"step {REPORTS}")
    paced = _progress(events, "c_paced")
    assert paced and (paced[-1].progress, paced[-1].total, paced[-1].message) == (5, 5, None)
    assert all(e.name == "paced" for e in paced)
    for event in chatty + paced:
        assert type(event) is rt.ToolCallProgressEvent
        assert rt.event_from_json(json.loads(json.dumps(event.to_json()))) == event


def test_a_single_sync_call_hands_its_progress_on_while_it_runs() -> None:
    """A lone call runs on a thread of its own: the run's iterator yields its progress before the call ends."""
    release = threading.Event()
    tools = rt.Registry({})

    def waits(args: Any, ctx: Any) -> str:
        ctx.report_progress(1, 2, "half way")
        # Released by the test once it has seen the progress event: only if the event came while this waited.
        return "done" if release.wait(30) else "the progress never came while the call ran"

    tools.add("waits", {"type": "object"}, waits)
    model = rt.ScriptedModel([rt.assistant_turn(None, rt.tool_call("waits", {}, id="c1")), "Done."])
    seen = []
    events = rt.run_events(USER, model, tools)
    for event in events:
        seen.append(event)
        if event.type == "tool_call_progress":
            assert not any(e.type == "tool_call_finished" for e in seen)
            release.set()
    assert events.result.stop_reason == "finished" and events.result.calls[0].content == "done"
    assert [(e.progress, e.total, e.message) for e in _progress(seen)] == [(1, 2, "half way")]


def test_a_report_after_its_call_ended_is_dropped() -> None:
    kept: list[Any] = []
    tools = rt.Registry({})

    def leaks(args: Any, ctx: Any) -> str:
        kept.append(ctx)
        ctx.report_progress(1, 1)
        return "leaked"

    def pokes(args: Any, ctx: Any) -> str:
        kept[0].report_progress(99, 100, "too late")  # the first call's context, after its end
        ctx.report_progress(2, 2)
        return "poked"

    tools.add("leaks", {"type": "object"}, leaks)
    tools.add("pokes", {"type": "object"}, pokes)
    model = rt.ScriptedModel(
        [
            rt.assistant_turn(None, rt.tool_call("leaks", {}, id="c1")),
            rt.assistant_turn(None, rt.tool_call("pokes", {}, id="c2")),
            "Done.",
        ]
    )
    events: list[Any] = []
    rt.run(USER, model, tools, on_event=events.append)
    assert [(e.id, e.progress) for e in _progress(events)] == [("c1", 1), ("c2", 2)]


def test_the_page_has_a_handler_for_every_kind_of_event() -> None:
    handled = set(re.findall(r"(?m)^  (?:async )?([a-z_]+)\(turn", TURNS_SCRIPT))
    assert set(EVENT_CLASSES) <= handled, set(EVENT_CLASSES) - handled
    assert "tool_call_progress" in handled


# ---- a served run ----

SERVED = """
import json, sys, time
from pathlib import Path
from toolgen.runtime import DurableRuns, Registry, RunOptions, ScriptedModel, assistant_turn, tool_call

database, here, action = sys.argv[1], Path(sys.argv[2]), sys.argv[3]

def slow(args, ctx):
    steps = int((here / "steps.txt").read_text())
    for step in range(1, steps + 1):
        ctx.report_progress(step, steps, f"step {step} of {steps}")
        time.sleep(PACE)
    while (here / "block.txt").exists():  # until the test has killed this process
        (here / "blocked.txt").write_text("yes")
        time.sleep(0.05)
    return "done"

tools = Registry({})
# Only reads: a call the kill cut short runs again after the restart.
tools.add("slow", {"type": "object"}, slow, annotations={"readOnlyHint": True})
calling = assistant_turn("Working.", tool_call("slow", {}, id="call_slow"))
# A resumed run replays its first model call from the record: the script starts at the second.
model = ScriptedModel(["Done."] if action == "resume" else [calling, "Done."])
runs = DurableRuns(tools, model, database_url=database, name="progress", options=RunOptions(stream=True))
if action == "resume":
    run_id = (here / "run_id.txt").read_text()
else:
    run_id = runs.start([{"role": "user", "content": "Go."}], "conv-1")
    (here / "run_id.txt").write_text(run_id)
while runs.store.run(run_id).status not in ("finished", "stopped", "error"):
    time.sleep(0.05)
events = [e.event("conv-1").to_json() for e in runs.store.events_after(run_id, 0, 10_000)]
(here / "events.json").write_text(json.dumps(events))
runs.close()
""".replace("PACE", repr(PROGRESS_INTERVAL * 1.5))


def _served(tmp_path: Path, action: str) -> subprocess.Popen[str]:
    script = tmp_path / "served.py"
    script.write_text(SERVED, encoding="utf-8")
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with (tmp_path / f"{action}.log").open("w") as log:
        return subprocess.Popen(
            [sys.executable, str(script), database, str(tmp_path), action],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )


def _finished(process: subprocess.Popen[str], tmp_path: Path, action: str) -> list[Any]:
    process.wait(timeout=180)
    assert process.returncode == 0, (tmp_path / f"{action}.log").read_text()
    forms = json.loads((tmp_path / "events.json").read_text(encoding="utf-8"))
    return [rt.event_from_json(form) for form in forms]


def _stored_progress(tmp_path: Path) -> list[dict[str, Any]]:
    try:
        with sqlite3.connect(tmp_path / "runs.sqlite") as db:
            rows = db.execute(
                "SELECT data FROM toolgen_run_events WHERE type = 'tool_call_progress' ORDER BY seq"
            ).fetchall()
    except sqlite3.OperationalError:  # the tables are not there yet
        return []
    return [json.loads(row[0]) for row in rows]


def _one_call_answered(events: list[Any]) -> None:
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    kinds = [e.type for e in events]
    assert kinds.count("tool_call_started") == kinds.count("tool_call_finished") == 1
    assert kinds.count("run_started") == kinds.count("run_finished") == 1 and kinds[-1] == "run_finished"
    _assert_between_start_and_end(events, "call_slow")
    finished = next(e for e in events if e.type == "tool_call_finished")
    assert (finished.status, finished.content) == ("ok", "done")
    assert events[-1].stop_reason == "finished"


def test_a_served_run_stores_its_progress_events_in_order(tmp_path: Path) -> None:
    pytest.importorskip("dbos", reason="the serve extra (dbos) is not installed")
    (tmp_path / "steps.txt").write_text("3")
    events = _finished(_served(tmp_path, "start"), tmp_path, "start")
    _one_call_answered(events)
    progress = _progress(events)
    assert progress and all(type(e) is rt.ToolCallProgressEvent for e in progress)
    assert (progress[-1].progress, progress[-1].total, progress[-1].message) == (3, 3, "step 3 of 3")


def test_a_served_run_killed_while_its_tool_reports_progress_resumes_without_losing_a_row(tmp_path: Path) -> None:
    """The first process stores three progress rows and is killed; the second runs the call again (it only reads),
    which reports once: that report lands on a stored progress row, and the call's end comes after them all."""
    pytest.importorskip("dbos", reason="the serve extra (dbos) is not installed")
    (tmp_path / "steps.txt").write_text("3")
    (tmp_path / "block.txt").write_text("block")
    first = _served(tmp_path, "start")
    try:
        deadline = time.monotonic() + 120
        stored = ["step 3 of 3"]
        while (
            not (tmp_path / "blocked.txt").exists() or [r["message"] for r in _stored_progress(tmp_path)][-1:] != stored
        ):
            assert first.poll() is None and time.monotonic() < deadline, (tmp_path / "start.log").read_text()
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    stored_before = _stored_progress(tmp_path)
    (tmp_path / "block.txt").unlink()
    (tmp_path / "steps.txt").write_text("1")
    events = _finished(_served(tmp_path, "resume"), tmp_path, "resume")
    _one_call_answered(events)
    # The rows the first process stored stand as they were; the second one's report had no new place.
    assert [e.data for e in _progress(events)] == stored_before
    assert [e.message for e in _progress(events)][-1] == "step 3 of 3"


def test_a_replay_lands_each_event_on_its_stored_row_or_after_them_all(tmp_path: Path) -> None:
    """The sink against the real store, as a replay after a crash meets it: stored progress rows the replay does not
    make are stepped over (the call's end is written after them, not lost on one of them), a report of the replay
    lands on a stored progress row (which stays as it was) or, where the stored row is another kind, is dropped."""
    pytest.importorskip("sqlalchemy", reason="the serve extra is not installed")
    from toolgen.runtime.serve.event_sink import StoreSink
    from toolgen.runtime.serve.run_record import RunRequest
    from toolgen.runtime.serve.store import RunStore

    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    request = RunRequest(messages=USER, conversation_id="conv-1")

    def event(kind: str, seq: int, **data: Any) -> Any:
        return EVENT_CLASSES[kind](conversation_id="conv-1", seq=seq, **data)

    def progress(seq: int, step: int, total: int) -> Any:
        return event("tool_call_progress", seq, id="c1", name="slow", progress=step, total=total)

    started = event("tool_call_started", 2, id="c1", name="slow", arguments="{}")
    done = {"id": "c1", "name": "slow", "status": "ok", "content": "done"}
    over = {"stop_reason": "finished", "steps": 1, "metrics": {}}

    def attempts(run_id: str, first: list[Any], replay: list[Any]) -> tuple[list[tuple[int, str]], StoreSink]:
        store.create_run(run_id, "conv-1", {"version": 1})
        for made in (first, replay):
            sink = StoreSink(store, run_id, request, lambda: USER)
            for each in made:
                sink.add(each)
            sink.flush()
        return [(e.seq, e.type) for e in store.events_after(run_id, 0)], sink

    # The first attempt stored two progress rows and died before the call's end was written; the replay runs the
    # call again, which reports once.
    rows, sink = attempts(
        "run-1",
        [event("run_started", 1, messages=1), started, progress(3, 1, 3), progress(4, 2, 3)],
        [
            event("run_started", 1, messages=1),
            started,
            progress(3, 1, 1),
            event("tool_call_finished", 4, **done),
            event("run_finished", 5, **over),
        ],
    )
    assert rows == [
        (1, "run_started"),
        (2, "tool_call_started"),
        (3, "tool_call_progress"),
        (4, "tool_call_progress"),
        (5, "tool_call_finished"),
        (6, "run_finished"),
    ]
    assert sink.drift == 1
    assert [e.data["total"] for e in store.events_after("run-1", 0) if e.type == "tool_call_progress"] == [3, 3]

    # The first attempt made no progress and got past the call's end; the replay's report has no row to land on.
    rows, sink = attempts(
        "run-2",
        [event("run_started", 1, messages=1), started, event("tool_call_finished", 3, **done)],
        [
            event("run_started", 1, messages=1),
            started,
            progress(3, 1, 1),
            event("tool_call_finished", 4, **done),
            event("run_finished", 5, **over),
        ],
    )
    assert rows == [(1, "run_started"), (2, "tool_call_started"), (3, "tool_call_finished"), (4, "run_finished")]
    assert sink.drift == -1
    store.close()


# ---- a remote tool: the MCP reference server's long running operation ----


def test_an_mcp_servers_progress_notifications_arrive_as_progress_events() -> None:
    command = peer_command("everything", "stdio")
    tools = rt.Registry({})
    turn = rt.assistant_turn(None, rt.tool_call("trigger-long-running-operation", {"duration": 2, "steps": 4}, id="c1"))
    model = rt.ScriptedModel([turn, "It ran."])
    events: list[Any] = []
    with rt.mcp_tools(tools, command, names=["trigger-long-running-operation"], timeout=60):
        result = rt.run(USER, model, tools, on_event=events.append)
    assert result.stop_reason == "finished" and result.calls[0].status == "ok", result.calls
    progress = [(e.progress, e.total) for e in _progress(events, "c1")]
    # The server notifies every half second, 1 of 4 to 4 of 4 (coalescing might merge some, never the last).
    assert progress and progress[-1] == (4, 4), progress
    assert set(progress) <= {(1, 4), (2, 4), (3, 4), (4, 4)} and progress == sorted(progress)
    assert {e.name for e in _progress(events)} == {"trigger-long-running-operation"}
    _assert_between_start_and_end(events, "c1")
