"""Where run()'s tool calls run: a lone call of a run whose events no one reads as they come runs on the caller's
thread (no thread to start for it), one whose progress someone may read runs on a thread of the run's, and those
threads are kept from one step to the next; the progress a call reports is handed on either way."""

from __future__ import annotations

import threading
from typing import Any

import toolgen.runtime as rt

USER = [{"role": "user", "content": "Go."}]


def _recording() -> tuple[Any, list[str], list[int]]:
    """A registry whose `where` tool reports progress and notes the thread it ran on."""
    names: list[str] = []
    idents: list[int] = []
    tools = rt.Registry({})

    def where(args: Any, ctx: Any) -> str:
        names.append(threading.current_thread().name)
        idents.append(threading.get_ident())
        ctx.report_progress(1, 1, "all of it")
        return "here"

    tools.add("where", {"type": "object"}, where)
    return tools, names, idents


def _model(steps: int) -> Any:
    turns: list[Any] = [rt.assistant_turn(None, rt.tool_call("where", {}, id=f"c{n}")) for n in range(steps)]
    return rt.ScriptedModel([*turns, "Done."])


def test_a_lone_call_of_a_run_no_one_reads_as_it_goes_runs_on_the_callers_thread() -> None:
    tools, names, idents = _recording()
    result = rt.run(USER, _model(2), tools)
    assert result.stop_reason == "finished" and [c.content for c in result.calls] == ["here", "here"]
    assert idents == [threading.get_ident()] * 2


def test_with_on_event_a_lone_call_runs_on_a_thread_and_its_progress_is_handed_on() -> None:
    tools, names, idents = _recording()
    events: list[Any] = []
    result = rt.run(USER, _model(1), tools, on_event=events.append)
    assert result.stop_reason == "finished"
    assert names == ["toolgen-tool"] and idents != [threading.get_ident()]
    progress = [e for e in events if e.type == "tool_call_progress"]
    assert [(e.id, e.progress, e.total, e.message) for e in progress] == [("c0", 1, 1, "all of it")]
    kinds = [e.type for e in events]
    assert kinds.index("tool_call_started") < kinds.index("tool_call_progress") < kinds.index("tool_call_finished")


def test_the_threads_of_a_run_are_kept_from_one_step_to_the_next() -> None:
    tools, names, idents = _recording()
    seen = []
    events = rt.run_events(USER, _model(5), tools)
    for event in events:
        seen.append(event.type)
    assert events.result.stop_reason == "finished" and seen.count("tool_call_progress") == 5
    # One thread of the run's served every step: none was started for each call.
    assert len(set(idents)) == 1 and idents[0] != threading.get_ident() and set(names) == {"toolgen-tool"}


def test_a_run_whose_iteration_stops_early_lets_its_threads_go() -> None:
    tools, names, idents = _recording()
    before = {t.ident for t in threading.enumerate() if t.name == "toolgen-tool"}
    events = rt.run_events(USER, _model(3), tools)
    iterator = iter(events)
    for event in iterator:
        if event.type == "tool_call_finished":
            break
    iterator.close()  # type: ignore[attr-defined]
    kept = [t for t in threading.enumerate() if t.name == "toolgen-tool" and t.ident not in before]
    for thread in kept:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in kept)
