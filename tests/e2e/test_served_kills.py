"""SIGKILL a process serving one durable run at 30 seeded random moments, restarting it after each, until the run
ends: the run is never lost, a call to a tool not marked safe to repeat starts at most once, and the stored events
read as one contiguous log, for a store reader and for an SSE reader resuming from its Last-Event-ID.

Each process is DurableRuns in a process of its own (DBOS keeps one instance a process), with executor id
"local", so that DBOS resumes the unfinished run when the next one launches. The run: a streamed scripted model
whose first turn makes three parallel calls (one to `write`, not safe to repeat, two to `lookup`, marked
idempotentHint), then two more (`write`, `lookup`), then an answer of 40 text pieces; every handler logs its
call's start and end and sleeps 0.1-0.3 s.

The 30 kills fall on five runs, six each, at moments drawn (seeded) from the span of one unkilled run, measured
first with the time of each of its events. A moment is "so many seconds after event N": a process is killed once
event N of its run is stored and that many seconds more have passed (counted from when the process is ready if an
earlier process stored event N already), so that the kills spread over the whole run however long each restart
takes. A run that ends before its kills are spent leaves them to the next run: 30 kills land, each on a live
process. Meanwhile a reader reads the run's events from its cursor (`events_after`, what the SSE endpoint serves
for Last-Event-ID) up to the kill, and goes on from the same cursor after the restart.

The calls of a batch finish out of call order (the call to `write` last): the loop hands a batch's outcomes on in
call order whatever order they end in, so a replay, which gets the recorded calls back at once, numbers their
`tool_call_finished` events as the first run did (the last test holds a batch half handed on when the kill comes).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")

from toolgen.runtime.serve.store import RunStore, StoredEvent  # noqa: E402 - after the skip

pytestmark = pytest.mark.slow

KILLS = 30
PER_RUN = 6
SEED = 31
FINAL = " ".join(f"word{index}" for index in range(40))
# How long a process may take to be ready, and a killed run to end once its process is left alone.
READY_SECONDS = 60.0
END_SECONDS = 120.0

# argv: the run's directory, the scenario ("kills" or "order"), "start" or "resume", and the run id to resume.
# It prints "ready <run id>" once the run is started (or DBOS launched), "finished" once its workflow succeeded.
SERVER = """
import os, sys, time
from pathlib import Path
import pydantic
from dbos import DBOS
from toolgen.runtime import (
    DurableRuns, Hooks, ModelClientBase, Registry, Response, RunOptions, ToolSpec, assistant_turn, tool_call,
)
from toolgen.runtime.clients.base import response_events

here, scenario, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
FINAL = " ".join(f"word{index}" for index in range(40))
if scenario == "kills":
    # Each batch finishes out of call order (see the module docstring of the test).
    STEPS = [
        [("write", "s1_w", 0.3), ("lookup", "s1_a", 0.1), ("lookup", "s1_b", 0.2)],
        [("write", "s2_w", 0.25), ("lookup", "s2_a", 0.1)],
    ]
else:
    # Six slow calls and a fast last one, which finishes first.
    STEPS = [[*(("lookup", f"o{index}", 0.3) for index in range(6)), ("lookup", "o6", 0.02)]]

class Args(pydantic.BaseModel):
    key: str
    sleep: float

def spec(name, hints):
    schema = {
        "type": "object",
        "properties": {"key": {"type": "string"}, "sleep": {"type": "number"}},
        "required": ["key", "sleep"],
    }
    return ToolSpec(name, None, name, Args, None, schema, None, annotations=hints)

def log(line):
    # One write(2) on an O_APPEND file: a kill leaves whole lines only.
    fd = os.open(here / "calls.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, (line + "\\n").encode())
    finally:
        os.close(fd)

def handler(name):
    def run(args, ctx):
        log(f"start {ctx.tool_call_id}")
        time.sleep(args.sleep)
        log(f"end {ctx.tool_call_id}")
        return f"{name} {ctx.tool_call_id} done"
    return run

registry = Registry({"lookup": spec("lookup", {"idempotentHint": True}), "write": spec("write", {})})
registry.entry("lookup").handler(handler("lookup"))
registry.entry("write").handler(handler("write"))

class Model(ModelClientBase):
    \"\"\"Its turn from the conversation alone, so that every process answers a request alike.\"\"\"

    def complete(self, request):
        step = sum(1 for m in request.messages if m["role"] == "assistant")
        if step < len(STEPS):
            calls = [tool_call(name, {"key": key, "sleep": s}, id=key) for name, key, s in STEPS[step]]
            message, reason = assistant_turn(None, *calls), "tool_calls"
        else:
            message, reason = {"role": "assistant", "content": FINAL}, "stop"
        return Response(message, {"reason": reason, "raw": None}, model="scripted", id=f"turn-{step}")

    def stream(self, request):
        for event in response_events(self.complete(request)):
            time.sleep(0.02)
            yield event

def hold(report):
    # The "order" scenario's first process: the first call handed on holds the loop before its event is stored
    # (its step is recorded), while the others, the fast last one first, finish and are recorded too.
    if scenario == "order" and mode == "start" and report.call_id == "o0":
        (here / "held").write_text(report.call_id)
        time.sleep(600)

options = RunOptions(stream=True, hooks=Hooks(after_tool=hold))
runs = DurableRuns(
    registry, Model(), database_url=f"sqlite:///{here / 'runs.sqlite'}", name="served-kills", options=options
)
if mode == "start":
    run_id = runs.start([{"role": "user", "content": "go"}], None)
else:
    run_id = sys.argv[4]
print("ready", run_id, flush=True)
ready = time.monotonic()
while True:
    status = DBOS.get_workflow_status(run_id)
    if status is not None and status.status == "SUCCESS":
        break
    time.sleep(0.02)
print("finished", time.monotonic() - ready, flush=True)
runs.close()
"""


def _server(here: Path, scenario: str, run_id: str | None) -> subprocess.Popen[str]:
    mode = ["start"] if run_id is None else ["resume", run_id]
    return subprocess.Popen(
        [sys.executable, str(here.parent / "server.py"), str(here), scenario, *mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _line(process: subprocess.Popen[str], seconds: float) -> str:
    """The process's next line; a failure naming its stderr if it ends or stays silent first."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    line = process.stdout.readline() if ready else ""
    if not line:
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"the server said nothing within {seconds} s (exit {process.returncode}):\n{err}")
    return line


def _kill(process: subprocess.Popen[str]) -> bool:
    """SIGKILL the process; whether it was still running."""
    alive = process.poll() is None
    if alive:
        os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    return alive


class Reader:
    """A reader of one run's events, as the SSE endpoint serves them: from a cursor (its Last-Event-ID) on."""

    def __init__(self, store: RunStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.cursor = 0
        self.seen: list[StoredEvent] = []

    def read(self) -> None:
        while batch := self.store.events_after(self.run_id, self.cursor):
            for event in batch:
                assert event.seq == self.cursor + 1, f"after {self.cursor} the reader got {event.seq}"
                self.seen.append(event)
                self.cursor = event.seq


def _all_events(store: RunStore, run_id: str) -> list[StoredEvent]:
    events: list[StoredEvent] = []
    while batch := store.events_after(run_id, events[-1].seq if events else 0):
        events.extend(batch)
    return events


def _calls_made(events: Sequence[StoredEvent]) -> tuple[Counter[str], Counter[str], list[str]]:
    """The tool calls the log announces and answers, and the text of each model call, without what a model call
    cut by a kill said before its `error` of type interrupted (the call is made again from the start)."""
    started: Counter[str] = Counter()
    finished: Counter[str] = Counter()
    texts: list[str] = []
    cut_started: list[str] = []  # the calls the model call in progress announced
    text: list[str] = []
    for event in events:
        data = event.data
        if event.type == "model_call_started":
            cut_started, text = [], []
        elif event.type == "error" and data.get("type") == "interrupted":
            started.subtract(cut_started)
            cut_started, text = [], []
        elif event.type == "tool_call_started":
            started[str(data["id"])] += 1
            if data.get("index") is not None:
                cut_started.append(str(data["id"]))
        elif event.type == "tool_call_finished":
            finished[str(data["id"])] += 1
        elif event.type == "text_delta":
            text.append(str(data["text"]))
        elif event.type == "model_call_finished":
            texts.append("".join(text))
    return +started, +finished, texts


def _check_log(events: Sequence[StoredEvent]) -> None:
    """Numbered 1..N, run_finished last and once, and each announced call answered once."""
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    types = [e.type for e in events]
    assert types[-1] == "run_finished" and types.count("run_finished") == 1, types[-3:]
    started, finished, texts = _calls_made(events)
    assert started == finished, f"tool calls started {dict(started)}, finished {dict(finished)}"
    assert set(started.values()) == {1}, dict(started)
    assert texts[-1] == FINAL


def _check_calls(here: Path, state: Mapping[str, Any]) -> dict[str, int]:
    """Each call answered once, `write` started at most once, an unfinished one answered as interrupted; how
    many calls were interrupted, re-run, run once."""
    messages = state["messages"]
    asked = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    answers = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
    assert sorted(asked) == sorted(answers) and len(asked) == len(set(asked)) == 5, (asked, list(answers))
    assert messages[-1] == {"role": "assistant", "content": FINAL}
    log = Counter((here / "calls.log").read_text(encoding="utf-8").splitlines())
    seen = Counter[str]()
    for call_id, answer in answers.items():
        name, starts, ends = answer["name"], log[f"start {call_id}"], log[f"end {call_id}"]
        interrupted = "interrupted" in str(answer["content"])
        if name == "write":
            assert starts <= 1, f"{call_id} (not safe to repeat) started {starts} times"
            if interrupted:
                assert answer.get("is_error") and str(answer["content"]).startswith("Error: interrupted")
            else:
                assert starts == ends == 1 and answer["content"] == f"write {call_id} done", (answer, starts)
        else:
            assert not interrupted and not answer.get("is_error"), answer
            assert answer["content"] == f"lookup {call_id} done" and ends >= 1 and starts >= ends
        seen["interrupted" if interrupted else "re-run" if starts > 1 else "once"] += 1
    return dict(seen)


def _timeline(tmp_path: Path) -> list[tuple[int, float]]:
    """Each event of one unkilled run, with its seconds since the run started."""
    here = tmp_path / "timed"
    here.mkdir()
    server = _server(here, "kills", None)
    run_id = _line(server, READY_SECONDS).split()[1]
    _line(server, END_SECONDS)
    _, err = server.communicate(timeout=END_SECONDS)
    assert server.returncode == 0, err
    store = RunStore(f"sqlite:///{here / 'runs.sqlite'}")
    events = _all_events(store, run_id)
    store.close()
    first = events[0].time or 0.0
    return [(e.seq, (e.time or first) - first) for e in events]


def _moment(timeline: Sequence[tuple[int, float]], seconds: float) -> tuple[int, float]:
    """`seconds` into the run as (the last event by then, the seconds after it)."""
    seq, at = max((e for e in timeline if e[1] <= seconds), key=lambda e: e[1], default=(0, 0.0))
    return seq, seconds - at


def _serve_until(server: subprocess.Popen[str], reader: Reader, seq: int, seconds: float) -> None:
    """Read the run's events as they come until event `seq` is stored and `seconds` more have passed."""
    while reader.cursor < seq and server.poll() is None:
        reader.read()
        time.sleep(0.005)
    until = time.monotonic() + seconds
    while time.monotonic() < until and server.poll() is None:
        reader.read()
        time.sleep(0.005)
    reader.read()  # the cursor the reader holds when the server dies


def test_sigkill_at_30_random_moments_of_served_runs_loses_nothing(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    timeline = _timeline(tmp_path)
    span = timeline[-1][1]
    chance = random.Random(SEED)
    landed = 0
    summary: list[str] = []
    number = 0
    while landed < KILLS:
        number += 1
        here = tmp_path / f"run-{number}"
        here.mkdir()
        moments = sorted(chance.uniform(0, span) for _ in range(min(PER_RUN, KILLS - landed)))
        run_id: str | None = None
        reader: Reader | None = None
        store: RunStore | None = None
        ended = False
        for moment in moments:
            server = _server(here, "kills", run_id)
            run_id = _line(server, READY_SECONDS).split()[1]
            if store is None:  # the first process made the tables
                store = RunStore(f"sqlite:///{here / 'runs.sqlite'}")
                reader = Reader(store, run_id)
            assert reader is not None
            _serve_until(server, reader, *_moment(timeline, moment))
            if not _kill(server):
                assert server.returncode == 0, server.stderr
                ended = True
                break
            landed += 1
        assert store is not None and reader is not None and run_id is not None
        if not ended:  # the last process runs the run to its end
            server = _server(here, "kills", run_id)
            _line(server, READY_SECONDS)
            until = time.monotonic() + END_SECONDS
            while server.poll() is None:
                assert time.monotonic() < until, f"run {number} was lost: it did not end after a restart"
                reader.read()
                time.sleep(0.02)
            _, err = server.communicate()
            assert server.returncode == 0, err
        reader.read()
        run = store.run(run_id)
        assert run is not None and run.status == "finished", run
        assert run.state["stop_reason"] == "finished"
        events = _all_events(store, run_id)
        _check_log(events)
        # The reader, resumed from its cursor after each restart, saw each event once and in order.
        assert [(e.seq, e.type) for e in reader.seen] == [(e.seq, e.type) for e in events]
        calls = _check_calls(here, run.state)
        notes = sum(1 for e in events if e.type == "error" and e.data.get("type") == "interrupted")
        at = ", ".join(f"{m:.2f}" for m in moments)
        summary.append(f"run {number}: kills at {at} s; {len(events)} events, {notes} cut model calls, {calls}")
        store.close()
    assert landed == KILLS
    print(f"\none run took {span:.2f} s; {landed} kills landed\n" + "\n".join(summary))


def test_a_replay_numbers_the_calls_of_a_batch_as_they_first_finished(tmp_path: Path) -> None:
    """Seven parallel calls, the last one fast; the first call handed on holds the loop (an after_tool hook)
    before its event is stored, while the rest finish and are recorded, and the process is killed there. The next
    process replays the batch, every call recorded: each call's tool_call_finished is stored once, in call order."""
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    here = tmp_path / "run"
    here.mkdir()
    server = _server(here, "order", None)
    run_id = _line(server, READY_SECONDS).split()[1]
    until = time.monotonic() + READY_SECONDS
    while not (here / "held").exists():
        assert server.poll() is None and time.monotonic() < until, server.communicate()
        time.sleep(0.02)
    time.sleep(0.5)  # the other slow calls finish and are recorded
    assert _kill(server)
    store = RunStore(f"sqlite:///{here / 'runs.sqlite'}")
    finished = [e.data["id"] for e in _all_events(store, run_id) if e.type == "tool_call_finished"]
    assert finished == []
    server = _server(here, "order", run_id)
    _line(server, READY_SECONDS)
    _line(server, END_SECONDS)
    server.communicate(timeout=END_SECONDS)
    events = _all_events(store, run_id)
    store.close()
    _, finished_calls, _ = _calls_made(events)
    assert finished_calls == Counter(f"o{index}" for index in range(7)), json.dumps(
        [e.data["id"] for e in events if e.type == "tool_call_finished"]
    )
    in_order = [e.data["id"] for e in events if e.type == "tool_call_finished"]
    assert in_order == [f"o{index}" for index in range(7)]
    _check_log(events)
