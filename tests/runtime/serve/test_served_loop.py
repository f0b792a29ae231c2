"""One loop everywhere: a scripted conversation through run(), arun() and a served (durable) run on SQLite and on
Postgres gives the same events, kind by kind and field by field (ids and times aside); a served run fires the
hooks, asks the budget, honours its deadline and stops within about a second when cancelled while a sync tool
sleeps.

Each served run is a process of its own (DBOS keeps one engine per process), driven through DurableRuns with
the runtime as the generator ships it (`toolgen.runtime`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.projects import TESTS

import toolgen.runtime as rt

pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")
from support.serve_helpers import postgres_cluster  # noqa: E402 - after the skip: it needs the serve extra

# The conversation: the model says a word and calls two tools at once, `careful` (needs approval, takes a moment)
# and `broken` (fails at once); then it answers. Shared by this process and the served one.
CONVERSATION = """
import time
from toolgen.runtime import Registry, ScriptedModel, assistant_turn, tool_call

def registry(sleep=0.2):
    tools = Registry({})

    def careful(args, ctx):
        time.sleep(args["seconds"] if "seconds" in args else sleep)
        return "careful done"

    def broken(args, ctx):
        raise RuntimeError("broken on purpose")

    schema = {"type": "object", "properties": {"seconds": {"type": "number"}}}
    tools.add("careful", schema, careful, description="Takes a moment.", requires_approval=True)
    tools.add("broken", schema, broken, description="Always fails.")
    tools.add("plain", schema, lambda args, ctx: "plain done", description="Answers at once.")
    return tools

def reusing_model(tool="plain"):
    # As some OpenAI-compatible servers do: every step's first call is `call_0`.
    turn = assistant_turn(None, tool_call(tool, {"seconds": 0.01}, id="call_0"))
    return ScriptedModel([turn, turn, "Both ran."])

def model(seconds=None):
    careful = {} if seconds is None else {"seconds": seconds}
    turn = assistant_turn(
        "Checking both.",
        tool_call("careful", careful, id="call_careful"),
        tool_call("broken", {}, id="call_broken"),
    )
    return ScriptedModel([turn, "One worked, one failed."])
"""

SERVED = (
    CONVERSATION
    + """
import json, sys, threading
from pathlib import Path
from toolgen.runtime import Approval, DurableRuns, Hooks, RunOptions

database, out, action = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
log = []
hooks = Hooks(
    before_model=lambda step, request: log.append(["before_model", step]),
    after_model=lambda step, response: log.append(["after_model", step]),
    before_tool=lambda call, ctx: log.append(["before_tool", call["id"]]),
    after_tool=lambda report: log.append(["after_tool", report.call_id, report.status]),
)
def budget(messages, info):
    log.append(["budget", info.step])
    return None
options = RunOptions(stream=True, hooks=hooks, budget=budget, on_event=lambda e: log.append(["on_event", e.type]))
seconds = 3.0 if action in ("cancel", "cancel_elsewhere", "deadline", "cancel_waiting") else None
def cut_then_whole():
    # A stream cut mid-way, then the whole answer: the run's stream_retry asks again.
    from pathlib import Path
    from toolgen.runtime import ReplayModel
    answer = (Path(sys.argv[4]) / "openai-chat-answer.sse").read_text(encoding="utf-8")
    cut = answer[: answer.index('{"content":"and Oslo')].rsplit("data:", 1)[0]
    return ReplayModel([cut, answer], wire="openai-chat")

chosen = (
    cut_then_whole() if action == "retry"
    else reusing_model() if action == "reuse"
    else reusing_model("careful") if action == "reuse_approved"
    else model(seconds)
)
runs = DurableRuns(registry(), chosen, database_url=database, name="served-loop", options=options)
run_id = runs.start(
    [{"role": "user", "content": "Try both tools."}], "conv-1", deadline=1.0 if action == "deadline" else None
)
started = time.monotonic()
cancelled_at = None
while True:
    state = runs.store.run(run_id)
    for pending in runs.store.pending(run_id):
        if action == "cancel_waiting":
            cancelled_at = cancelled_at or time.monotonic()
            runs.cancel(run_id)
        else:
            runs.decide(run_id, pending["id"], Approval.approve())
    if action in ("cancel", "cancel_elsewhere") and cancelled_at is None and any(
        e.type == "tool_call_started" for e in runs.store.events_after(run_id, 0)
    ):
        time.sleep(0.3)
        cancelled_at = time.monotonic()
        if action == "cancel":
            runs.cancel(run_id)
        else:
            runs.store.request_cancel(run_id)  # as another server sharing the database does
    if state.status in ("finished", "stopped", "error"):
        break
    time.sleep(0.02)
ended = time.monotonic()
events = [e.event("conv-1").to_json() for e in runs.store.events_after(run_id, 0, 10_000)]
out.write_text(json.dumps({
    "events": events,
    "log": log,
    "status": state.status,
    "stop_reason": state.state.get("stop_reason"),
    "messages": state.state.get("messages"),
    "cancel_took": None if cancelled_at is None else ended - cancelled_at,
    "took": ended - started,
}))
runs.close()
# Out at once: a cancelled call's handler may still be sleeping on its thread, which the interpreter's exit
# would wait for (its seconds, not the run's), and what it does now changes nothing above.
sys.stdout.flush()
sys.stderr.flush()
import os
os._exit(0)
"""
)


FIXTURES = TESTS / "fixtures" / "loop"


def _conversation() -> dict[str, Any]:
    scope: dict[str, Any] = {}
    exec(CONVERSATION, scope)  # noqa: S102 - the test's own source, shared with the served process
    return scope


def _comparable(form: dict[str, Any]) -> dict[str, Any]:
    """An event's JSON form without what differs run to run: times, trace ids, the conversation id."""
    data = dict(form["data"])
    data.pop("duration_ms", None)
    if form["type"] == "run_finished":
        metrics = dict(data["metrics"])
        metrics.pop("model_seconds")
        metrics["tools"] = {
            name: {k: v for k, v in stats.items() if k not in ("seconds", "max_seconds")}
            for name, stats in metrics["tools"].items()
        }
        data["metrics"] = metrics
    return {"type": form["type"], "seq": form["seq"], "data": data}


def _in_memory(mode: str) -> list[dict[str, Any]]:
    conversation = _conversation()
    events: list[Any] = []
    arguments = ([{"role": "user", "content": "Try both tools."}], conversation["model"](), conversation["registry"]())
    settings: dict[str, Any] = {
        "stream": True,
        "conversation_id": "conv-1",
        "approve": lambda request: rt.Approval.approve(),
        "on_event": events.append,
    }
    if mode == "sync":
        rt.run(*arguments, **settings)
    else:
        asyncio.run(rt.arun(*arguments, **settings))
    return [_comparable(event.to_json()) for event in events]


def _served(tmp_path: Path, database: str, action: str = "run") -> dict[str, Any]:
    out = tmp_path / f"served-{action}.json"
    script = tmp_path / "served.py"
    script.write_text(SERVED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), database, str(out), action, str(FIXTURES)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


def _sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


def test_run_and_arun_give_the_same_events(tmp_path: Path) -> None:
    sync, asynchronous = _in_memory("sync"), _in_memory("async")
    assert sync == asynchronous
    kinds = [event["type"] for event in sync]
    assert kinds.count("approval_requested") == 1 and kinds.count("tool_call_finished") == 2
    statuses = {e["data"]["id"]: e["data"]["status"] for e in sync if e["type"] == "tool_call_finished"}
    assert statuses == {"call_careful": "ok", "call_broken": "error"}


def test_a_served_run_is_the_same_run_as_run_and_fires_the_hooks(tmp_path: Path) -> None:
    served = _served(tmp_path, _sqlite(tmp_path))
    assert served["status"] == "finished" and served["stop_reason"] == "finished"
    assert [_comparable(event) for event in served["events"]] == _in_memory("sync")
    log = served["log"]
    assert ["before_model", 1] in log and ["after_model", 2] in log and ["budget", 2] in log
    assert ["before_tool", "call_careful"] in log and ["after_tool", "call_broken", "error"] in log
    # on_event saw every event the store holds, in order.
    assert [entry[1] for entry in log if entry[0] == "on_event"] == [e["type"] for e in served["events"]]
    assert not rt.check_pairing(served["messages"])


@pytest.mark.postgres
def test_a_served_run_on_postgres_is_the_same_run_as_run(tmp_path: Path, postgres_url: str) -> None:
    served = _served(tmp_path, postgres_url)
    assert served["status"] == "finished"
    assert [_comparable(event) for event in served["events"]] == _in_memory("sync")


@pytest.mark.parametrize("action", ["cancel", "cancel_elsewhere"])
def test_a_served_run_cancelled_while_a_sync_tool_sleeps_stops_within_about_a_second(
    tmp_path: Path, action: str
) -> None:
    served = _served(tmp_path, _sqlite(tmp_path), action)
    assert served["stop_reason"] == "cancelled" and served["status"] == "stopped"
    # The tool sleeps 3 s; the run is over well before it would have woken.
    assert served["cancel_took"] < 2.0, served["cancel_took"]
    careful = next(m for m in served["messages"] if m.get("tool_call_id") == "call_careful")
    assert careful.get("is_error") and "cancel" in json.dumps(careful["content"])
    assert served["events"][-1]["type"] == "run_finished"
    assert served["events"][-1]["data"]["stop_reason"] == "cancelled"
    assert not rt.check_pairing(served["messages"])


def test_a_served_run_waiting_for_a_decision_stops_at_once_when_cancelled(tmp_path: Path) -> None:
    served = _served(tmp_path, _sqlite(tmp_path), "cancel_waiting")
    assert served["stop_reason"] == "cancelled" and served["status"] == "stopped"
    assert served["cancel_took"] < 2.0, served["cancel_took"]
    careful = next(m for m in served["messages"] if m.get("tool_call_id") == "call_careful")
    assert careful.get("is_error") and "cancelled before a decision" in json.dumps(careful["content"])
    decided = [e["data"] for e in served["events"] if e["type"] == "approval_decided"]
    assert decided == [
        {
            "id": "call_careful",
            "name": "careful",
            "decision": "deny",
            "reason": "the run was cancelled before a decision",
            "arguments": '{"seconds": 3.0}',
        }
    ]
    assert not rt.check_pairing(served["messages"])


def test_a_call_id_the_model_reuses_at_a_later_step_is_a_new_call_that_runs(tmp_path: Path) -> None:
    served = _served(tmp_path, _sqlite(tmp_path), "reuse")
    assert served["status"] == "finished"
    answers = [m for m in served["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"], m.get("is_error")) for m in answers] == [
        ("call_0", "plain done", None),
        ("call_0", "plain done", None),
    ]


def test_a_call_id_reused_at_a_later_step_is_asked_about_anew_and_runs_once_approved(tmp_path: Path) -> None:
    served = _served(tmp_path, _sqlite(tmp_path), "reuse_approved")
    assert served["status"] == "finished", served
    answers = [(m["tool_call_id"], m["content"]) for m in served["messages"] if m["role"] == "tool"]
    assert answers == [("call_0", "careful done"), ("call_0", "careful done")]
    kinds = [e["type"] for e in served["events"]]
    assert kinds.count("approval_requested") == kinds.count("approval_decided") == 2


def test_a_served_run_asks_again_after_a_stream_cut_mid_way_as_its_stream_retry_says(tmp_path: Path) -> None:
    served = _served(tmp_path, _sqlite(tmp_path), "retry")
    assert served["status"] == "finished", served
    assert served["messages"][-1]["content"] == "It is sunny in Paris\n(18 °C) and Oslo\u2028too."
    errors = [e["data"] for e in served["events"] if e["type"] == "error"]
    # The stream's own fault as it came, then the loop's word that it asks again.
    assert [(e["type"], e["retry"], e["fatal"]) for e in errors][-1] == ("cut", 2, False)
    assert all(not e["fatal"] for e in errors)
    started = [(e["data"]["step"], e["data"]["attempt"]) for e in served["events"] if e["type"] == "model_call_started"]
    assert started == [(1, 1), (1, 2)]


def test_a_served_run_stops_at_its_deadline(tmp_path: Path) -> None:
    served = _served(tmp_path, _sqlite(tmp_path), "deadline")
    assert served["stop_reason"] == "deadline" and served["status"] == "stopped"
    assert served["took"] < 3.0, served["took"]
    assert not rt.check_pairing(served["messages"])


def test_the_store_reads_runs_and_events_the_release_before_versions_wrote(tmp_path: Path) -> None:
    import shutil

    from toolgen.runtime.serve.run_record import record_from_json
    from toolgen.runtime.serve.store import RunStore

    copy = tmp_path / "old.sqlite"
    shutil.copy(TESTS / "fixtures" / "serve" / "runs-before-versions.sqlite", copy)
    store = RunStore(f"sqlite:///{copy}")
    try:
        finished = store.runs_with_status("finished")
        assert len(finished) == 3
        for run_id in finished:
            stored = store.run(run_id)
            assert stored is not None
            record = record_from_json(stored.state, run_id)
            assert record.version == 0 and record.messages and record.stop_reason == "finished"
            events = [e.event(stored.conversation_id) for e in store.events_after(run_id, 0, 10_000)]
            assert events[0].type == "run_started" and events[-1].type == "run_finished"
    finally:
        store.close()


def test_a_run_state_of_a_later_version_is_refused_naming_both_versions() -> None:
    from toolgen.runtime.serve.run_record import RunStateVersionError, record_from_json

    with pytest.raises(RunStateVersionError, match=r"run 'r1' was stored with run state version 7; this release"):
        record_from_json({"version": 7, "messages": []}, "r1")


def _old_database(tmp_path: Path) -> Path:
    import shutil

    copy = tmp_path / "old.sqlite"
    shutil.copy(TESTS / "fixtures" / "serve" / "runs-before-versions.sqlite", copy)
    return copy


def test_event_rows_carry_their_form_version_and_one_no_form_fits_is_said_at_its_place(tmp_path: Path) -> None:
    import sqlite3

    from toolgen.runtime.serve.store import RunStore, StoredEvent

    copy = _old_database(tmp_path)
    store = RunStore(f"sqlite:///{copy}")  # adds the version column the old table lacks
    try:
        [run_id, *_] = store.runs_with_status("finished")
        last = store.last_seq(run_id)
        store.add_events(run_id, [StoredEvent(last + 1, "note", {"message": "later", "setting": None, "wire": None})])
        store.add_events(run_id, [StoredEvent(last + 2, "text_delta", {"text": "x"}, version=2)])
        old, new, future = store.events_after(run_id, last - 1, 10)
        assert (old.version, new.version, future.version) == (None, 1, 2)
        assert new.event("c").type == "note"
        said = future.event("c")
        assert said.type == "error" and said.seq == last + 2 and said.error_type == "unreadable_event"
        assert "version 2; this release reads version 1" in said.message
    finally:
        store.close()
    versions = sqlite3.connect(copy).execute("SELECT DISTINCT version FROM toolgen_run_events").fetchall()
    assert {row[0] for row in versions} == {None, 1, 2}


REFUSE = """
import sys
from toolgen.runtime import DurableRuns, Registry, ScriptedModel
runs = DurableRuns(Registry({}), ScriptedModel(["hi"]), database_url=sys.argv[1], name="refuse-test")
runs.close()
"""


def test_an_unfinished_run_of_the_release_before_is_ended_at_launch_naming_both_versions(tmp_path: Path) -> None:
    import sqlite3

    from toolgen.runtime.serve.store import RunStore

    copy = _old_database(tmp_path)
    database = sqlite3.connect(copy)
    [(run_id,)] = database.execute("SELECT id FROM toolgen_runs ORDER BY created LIMIT 1").fetchall()
    # As a server of that release left it: killed while the run was waiting for a decision.
    database.execute("UPDATE toolgen_runs SET status = 'awaiting_approval' WHERE id = ?", (run_id,))
    database.commit()
    database.close()
    script = tmp_path / "refuse.py"
    script.write_text(REFUSE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), f"sqlite:///{copy}"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    store = RunStore(f"sqlite:///{copy}")
    try:
        stored = store.run(run_id)
        assert stored is not None and stored.status == "error"
        *_, error, finished = [e.event(stored.conversation_id) for e in store.events_after(run_id, 0, 10_000)]
        assert error.type == "error" and error.fatal and "run state version 0" in error.message
        assert f"this release runs version {1}" in error.message
        assert finished.type == "run_finished" and finished.stop_reason == "error"
        # The other runs, finished, are as they were.
        assert len(store.runs_with_status("finished")) == 2
    finally:
        store.close()


SPANS = (
    CONVERSATION
    + """
import json, sys, time
from pathlib import Path
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolgen.runtime import Approval, DurableRuns, RunOptions

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
options = RunOptions(stream=True, tracer_provider=provider, agent_name="checker")
runs = DurableRuns(registry(), model(), database_url=sys.argv[1], name="served-spans", options=options)
run_id = runs.start([{"role": "user", "content": "Try both tools."}], "conv-1")
while runs.store.run(run_id).status not in ("finished", "stopped", "error"):
    for pending in runs.store.pending(run_id):
        runs.decide(run_id, pending["id"], Approval.approve())
    time.sleep(0.02)
Path(sys.argv[2]).write_text(json.dumps(SPAN_FORMS(exporter.get_finished_spans())))
runs.close()
"""
)

SPAN_FORMS = """
def SPAN_FORMS(spans):
    by_id = {span.context.span_id: span.name for span in spans}
    return sorted(
        (
            span.name,
            by_id.get(span.parent.span_id) if span.parent is not None else None,
            str(span.status.status_code),
            sorted(
                (key, list(value) if isinstance(value, tuple) else value)
                for key, value in span.attributes.items()
                if "time" not in key and "duration" not in key
            ),
        )
        for span in spans
    )
"""


def test_a_served_run_makes_the_spans_run_makes(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is not installed")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    scope: dict[str, Any] = {}
    exec(SPAN_FORMS, scope)  # noqa: S102 - the test's own source, shared with the served process
    conversation = _conversation()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    rt.run(
        [{"role": "user", "content": "Try both tools."}],
        conversation["model"](),
        conversation["registry"](),
        stream=True,
        conversation_id="conv-1",
        approve=lambda request: rt.Approval.approve(),
        tracer_provider=provider,
        agent_name="checker",
    )
    in_memory = json.loads(json.dumps(scope["SPAN_FORMS"](exporter.get_finished_spans())))
    script = tmp_path / "spans.py"
    script.write_text(SPAN_FORMS + SPANS, encoding="utf-8")
    out = tmp_path / "spans.json"
    done = subprocess.run(
        [sys.executable, str(script), _sqlite(tmp_path), str(out)], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    served = json.loads(out.read_text(encoding="utf-8"))
    names = [form[0] for form in in_memory]
    assert names.count("execute_tool careful") == 1 and any(name.startswith("chat") for name in names)
    assert served == in_memory


WAITING = """
import sys, threading, time
from toolgen.runtime import DurableRuns, ModelClientBase, Registry, RunOptions, ScriptedModel
from toolgen.runtime import assistant_turn, tool_call

class Model(ModelClientBase):
    def complete(self, request):
        if request.messages[-1]["role"] == "user":
            turn = assistant_turn(None, tool_call("careful", {}, id="call_1"))
        else:
            turn = "done"
        return ScriptedModel([turn]).complete(request)

tools = Registry({})
tools.add("careful", {"type": "object"}, lambda args, ctx: "ok", requires_approval=True)
runs = DurableRuns(tools, Model(), database_url=sys.argv[1], name="waiting", options=RunOptions(stream=False))
count = int(sys.argv[2])
before = threading.active_count()
ids = [runs.start([{"role": "user", "content": f"run {n}"}], None) for n in range(count)]
deadline = time.monotonic() + 300
while len(runs.store.runs_with_status("awaiting_approval")) < count:
    assert time.monotonic() < deadline, "the runs never all waited"
    time.sleep(0.2)
print(before, threading.active_count(), flush=True)
runs.close()
"""


def test_three_hundred_runs_waiting_for_decisions_hold_no_thread_each(tmp_path: Path) -> None:
    script = tmp_path / "waiting.py"
    script.write_text(WAITING, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), _sqlite(tmp_path), "300"], capture_output=True, text=True, timeout=400
    )
    assert done.returncode == 0, done.stderr
    before, waiting = (int(n) for n in done.stdout.split())
    # DBOS's own threads and a few of the store's: nowhere near one a run.
    assert waiting - before < 50, (before, waiting)
