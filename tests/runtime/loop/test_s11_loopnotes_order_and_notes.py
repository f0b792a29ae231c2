"""A batch's outcomes are handed on in call order, skipped and denied calls included; and a tool result or
progress report the run sends otherwise than the tool gave it (a lone surrogate, a value JSON cannot hold, a
progress with no number) is said so in a `note` event and the call's report, not changed in silence."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

import toolgen.runtime as rt

USER = [{"role": "user", "content": "go"}]
MODES = ["sync", "async"]


def _events(mode: str, model: Any, tools: Any, **settings: Any) -> tuple[list[Any], Any]:
    if mode == "sync":
        events = rt.run_events(USER, model, tools, **settings)
        return list(events), events.result

    async def collect() -> tuple[list[Any], Any]:
        events = rt.arun_events(USER, model, tools, **settings)
        return [event async for event in events], events.result

    return asyncio.run(collect())


def _outcomes(events: list[Any]) -> list[tuple[str, ...]]:
    """The events that hand a call's outcome on (and its notes), in order."""
    return [
        (e.type, e.id, e.status) if e.type == "tool_call_finished" else (e.type, e.message)
        for e in events
        if e.type in ("tool_call_finished", "note")
    ]


# ---- call order ----


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
def test_a_call_skipped_for_the_limit_is_handed_on_after_the_calls_before_it(mode: str, stream: bool) -> None:
    tools = rt.Registry({})
    tools.add("t", {"type": "object"}, lambda a, c: "ok")
    tools.add("rd", {"type": "object"}, lambda a, c: {"final": "direct answer"}, return_direct=True)
    first = rt.assistant_turn(None, rt.tool_call("t", {}, id="a1"), rt.tool_call("t", {}, id="a2"))
    second = rt.assistant_turn(
        "thinking", rt.tool_call("t", {}, id="b1"), rt.tool_call("rd", {}, id="b2"), rt.tool_call("t", {}, id="b3")
    )
    after: list[tuple[str, str]] = []
    hooks = rt.Hooks(after_tool=lambda report: after.append((report.call_id, report.status)))
    events, result = _events(
        mode,
        rt.ScriptedModel([first, second, "never"]),
        tools,
        stream=stream,
        max_steps=5,
        max_tool_calls=4,
        hooks=hooks,
    )
    assert _outcomes(events) == [
        ("tool_call_finished", "a1", "ok"),
        ("tool_call_finished", "a2", "ok"),
        ("tool_call_finished", "b1", "ok"),
        ("tool_call_finished", "b2", "ok"),
        ("tool_call_finished", "b3", "skipped"),
    ]
    # after_tool follows the calls that ran (before_tool's), in the same order.
    assert after == [("a1", "ok"), ("a2", "ok"), ("b1", "ok"), ("b2", "ok")]
    assert [r.call_id for r in result.calls] == ["a1", "a2", "b1", "b2", "b3"]
    assert [m.get("tool_call_id") for m in result.messages if m["role"] == "tool"] == ["a1", "a2", "b1", "b2", "b3"]
    assert result.stop_reason == "return_direct"
    assert result.metrics.tools["t"].skipped == 1 and result.metrics.tools["t"].ok == 3
    finished = [e for e in events if e.type == "tool_call_finished"]
    assert [e.seq for e in finished] == sorted(e.seq for e in finished)
    assert events[-1].type == "run_finished"


@pytest.mark.parametrize("mode", MODES)
def test_a_denied_call_is_handed_on_in_its_place(mode: str) -> None:
    tools = rt.Registry({})
    tools.add("t", {"type": "object"}, lambda a, c: "ok")
    tools.add("careful", {"type": "object"}, lambda a, c: "done", requires_approval=True)
    turn = rt.assistant_turn(
        None, rt.tool_call("t", {}, id="c1"), rt.tool_call("careful", {}, id="c2"), rt.tool_call("t", {}, id="c3")
    )
    events, result = _events(mode, rt.ScriptedModel([turn, "Done."]), tools)
    assert _outcomes(events) == [
        ("tool_call_finished", "c1", "ok"),
        ("tool_call_finished", "c2", "denied"),
        ("tool_call_finished", "c3", "ok"),
    ]
    kinds = [(e.type, getattr(e, "id", None)) for e in events]
    # The approval is asked and decided before any call runs; its outcome still comes in its place.
    assert kinds.index(("approval_decided", "c2")) < kinds.index(("tool_call_started", "c1"))
    assert [r.status for r in result.calls] == ["ok", "denied", "ok"]


# ---- results sent otherwise than given ----


class Weird:
    def __repr__(self) -> str:
        return "<Weird>"


def _odd_tools(reported: list[Any]) -> Any:
    tools = rt.Registry({})
    tools.add("surrogate", {"type": "object"}, lambda a, c: "bad \ud800 text")
    tools.add("nested", {"type": "object"}, lambda a, c: {"text": ["fine", "x\udc00"], "ok": "y"})
    tools.add("obj", {"type": "object"}, lambda a, c: {"s": {1, 2}, "o": Weird(), "n": 1})
    tools.add("plain", {"type": "object"}, lambda a, c: {"n": [1, "two"]})

    def progress(args: Any, ctx: Any) -> str:
        ctx.report_progress(1, 2, "half")
        ctx.report_progress(math.nan, None, "lost")
        ctx.report_progress(None)
        return "done"

    tools.add("progress", {"type": "object"}, progress)
    return tools


@pytest.mark.parametrize("mode", MODES)
def test_a_result_sent_otherwise_than_given_is_noted(mode: str) -> None:
    names = ["surrogate", "nested", "obj", "plain", "progress"]
    turn = rt.assistant_turn(None, *[rt.tool_call(n, {}, id=f"c{i}") for i, n in enumerate(names)])
    events, result = _events(mode, rt.ScriptedModel([turn, "Done."]), _odd_tools([]), stream=True)
    surrogate = "surrogate's result: a lone surrogate was sent as U+FFFD"
    nested = "nested's result: a lone surrogate at /text/1 was sent as U+FFFD"
    texted = "obj's result: a set at /s and a Weird at /o were not JSON, sent as their text"
    progress = "progress's progress: 2 reports were not sent, their progress not a finite number (the first: nan)"
    assert _outcomes(events) == [
        ("note", surrogate),
        ("tool_call_finished", "c0", "ok"),
        ("note", nested),
        ("tool_call_finished", "c1", "ok"),
        ("note", texted),
        ("tool_call_finished", "c2", "ok"),
        ("tool_call_finished", "c3", "ok"),
        ("note", progress),
        ("tool_call_finished", "c4", "ok"),
    ]
    notes = {e.message: e for e in events if e.type == "note"}
    assert all(n.setting is None and n.wire is None for n in notes.values())
    assert [r.notes for r in result.calls] == [(surrogate,), (nested,), (texted,), (), (progress,)]
    # What was sent is unchanged: the replacement and the text, as before.
    assert [r.content for r in result.calls] == [
        "bad \ufffd text",
        '{"text": ["fine", "x\ufffd"], "ok": "y"}',
        '{"s": "{1, 2}", "o": "<Weird>", "n": 1}',
        '{"n": [1, "two"]}',
        "done",
    ]
    assert [r.status for r in result.calls] == ["ok"] * 5
    # The report that had a number still arrived.
    assert [(e.progress, e.total, e.message) for e in events if e.type == "tool_call_progress"] == [(1.0, 2.0, "half")]


def test_dispatch_puts_the_notes_on_the_outcome() -> None:
    tools = _odd_tools([])

    def boom(args: Any, ctx: Any) -> Any:
        raise ValueError("broken \ud800 here")

    tools.add("boom", {"type": "object"}, boom)
    tools.add("root_set", {"type": "object"}, lambda a, c: {3})
    tools.add("many", {"type": "object"}, lambda a, c: [{1}, {2}, {3}, {4}, {5}])
    assert tools.dispatch(rt.tool_call("plain", {}, id="p")).notes == ()
    assert tools.dispatch(rt.tool_call("root_set", {}, id="r")).notes == (
        "root_set's result: a set was not JSON, sent as its text",
    )
    assert tools.dispatch(rt.tool_call("many", {}, id="m")).notes == (
        "many's result: a set at /0, a set at /1, a set at /2 and 2 more were not JSON, sent as their text",
    )
    failed = tools.dispatch(rt.tool_call("boom", {}, id="b"))
    assert failed.content == "Error: the tool failed: ValueError: broken \ufffd here"
    assert failed.notes == ("boom's error: a lone surrogate in its message was sent as U+FFFD",)


def test_a_refused_progress_report_reaches_a_sink_that_listens_and_no_other() -> None:
    refused: list[str] = []
    sent: list[Any] = []

    class Sink:
        def __call__(self, *report: Any) -> None:
            sent.append(report)

        def refused(self, progress: str) -> None:
            refused.append(progress)

    ctx = rt.ToolContext(on_progress=Sink())
    for value in (math.inf, "3", None, True, 5):
        ctx.report_progress(value)
    assert refused == ["inf", "of type str", "None", "of type bool"]
    assert sent == [(5.0, None, None)]
    # A plain function (an MCP client's sink) hears only the reports sent, as before.
    plain: list[Any] = []
    rt.ToolContext(on_progress=lambda *report: plain.append(report)).report_progress(math.nan)
    assert plain == []


# ---- a served run: the same loop ----

SERVED = """
import json, math, os, sys, time
from toolgen.runtime import DurableRuns, Registry, RunOptions, ScriptedModel, assistant_turn, tool_call

database, out = sys.argv[1], sys.argv[2]
tools = Registry({})
tools.add("t", {"type": "object"}, lambda a, c: "ok")
tools.add("rd", {"type": "object"}, lambda a, c: {"final": "direct answer"}, return_direct=True)

def progress(a, c):
    c.report_progress(math.nan)
    return "done"

tools.add("progress", {"type": "object"}, progress)
first = assistant_turn(None, tool_call("t", {}, id="a1"), tool_call("progress", {}, id="a2"))
second = assistant_turn("thinking", tool_call("t", {}, id="b1"), tool_call("rd", {}, id="b2"), tool_call("t", {}, id="b3"))
runs = DurableRuns(tools, ScriptedModel([first, second, "never"]), database_url=database, name="loopnotes",
                   options=RunOptions(stream=True, max_steps=5, max_tool_calls=4))
run_id = runs.start([{"role": "user", "content": "go"}], "conv-1")
while runs.store.run(run_id).status not in ("finished", "stopped", "error"):
    time.sleep(0.02)
with open(out, "w") as file:
    json.dump([e.event("conv-1").to_json() for e in runs.store.events_after(run_id, 0, 10_000)], file)
runs.close()
os._exit(0)
"""


def test_a_served_run_hands_the_outcomes_on_in_call_order_with_the_progress_note(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys

    pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")
    script, out = tmp_path / "served.py", tmp_path / "events.json"
    script.write_text(SERVED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), f"sqlite:///{tmp_path / 'runs.sqlite'}", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    events = json.loads(out.read_text(encoding="utf-8"))
    assert [
        (e["type"], e["data"]["id"], e["data"]["status"])
        if e["type"] == "tool_call_finished"
        else (e["type"], e["data"]["message"])
        for e in events
        if e["type"] in ("tool_call_finished", "note")
    ] == [
        ("tool_call_finished", "a1", "ok"),
        ("note", "progress's progress: a report was not sent, its progress nan not a finite number"),
        ("tool_call_finished", "a2", "ok"),
        ("tool_call_finished", "b1", "ok"),
        ("tool_call_finished", "b2", "ok"),
        ("tool_call_finished", "b3", "skipped"),
    ]


def test_a_served_run_says_what_its_tool_result_was_sent_as(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys

    pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")
    served = SERVED.replace(
        'tools.add("t", {"type": "object"}, lambda a, c: "ok")',
        'tools.add("t", {"type": "object"}, lambda a, c: {"ids": {1, 2}, "text": "bad \\ud800 text"})',
    )
    script, out = tmp_path / "served.py", tmp_path / "events.json"
    script.write_text(served, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), f"sqlite:///{tmp_path / 'runs.sqlite'}", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    events = json.loads(out.read_text(encoding="utf-8"))
    notes = [e["data"]["message"] for e in events if e["type"] == "note" and e["data"]["message"].startswith("t's")]
    # a1 and b1 ran (b3 is skipped for the limit): each says both of what its result was sent as.
    assert len(notes) == 2 * 2, notes
    assert any("a set at /ids" in note for note in notes), notes
    assert any("a lone surrogate at /text" in note for note in notes), notes
