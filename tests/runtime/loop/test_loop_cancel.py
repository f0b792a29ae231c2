"""Cancel and deadline of an in-memory run: whatever the run waits for (a tool, a model call, a stream), it ends."""

from __future__ import annotations

import asyncio
import importlib
import math
import threading
import time
from collections.abc import AsyncIterator, Iterator
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

# Well under the tool's 3 seconds: the run did not wait for it (a cancel at 0.5 s, a grace of 0.5 s, some polls).
PROMPT_END = 2.5
USER = [{"role": "user", "content": "Go."}]
MODES = ["sync", "async"]


@pytest.fixture(scope="module")
def rt(source_package: ModuleType) -> SimpleNamespace:
    """The runtime of the package built from the repo's own project."""
    runtime = importlib.import_module(f"{source_package.__name__}._runtime")
    return SimpleNamespace(runtime=runtime, **{name: getattr(runtime, name) for name in runtime.__all__})


def drive(rt: SimpleNamespace, mode: str, model: Any, registry: Any, **settings: Any) -> tuple[Any, list[Any], float]:
    """run() or arun(): the result, the events, and the seconds it took."""
    events: list[Any] = []
    started = time.monotonic()
    if mode == "sync":
        result = rt.run(USER, model, registry, on_event=events.append, **settings)
    else:
        result = asyncio.run(rt.arun(USER, model, registry, on_event=events.append, **settings))
    return result, events, time.monotonic() - started


def call(rt: SimpleNamespace, name: str, call_id: str) -> dict[str, Any]:
    made: dict[str, Any] = rt.tool_call(name, {}, id=call_id)
    return made


def slow_tools(rt: SimpleNamespace, release: threading.Event) -> Any:
    """`slow` takes 3 seconds (unless released), `quick` answers at once."""
    registry = rt.Registry({})
    registry.add("slow", {"type": "object"}, lambda args, ctx: {"slept": not release.wait(3)})
    registry.add("quick", {"type": "object"}, lambda args, ctx: {"ok": True})
    return registry


def calls_then(rt: SimpleNamespace, *calls: dict[str, Any]) -> Any:
    return rt.ScriptedModel([rt.assistant_turn(None, *calls), "never asked"])


def kinds(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def assert_consistent(rt: SimpleNamespace, result: Any, events: list[Any], stop: str) -> None:
    """Every call answered once, a tool_call_finished for each started one, run_finished last with the stop."""
    assert not rt.check_pairing(result.messages)
    started = [e.data["id"] for e in kinds(events, "tool_call_started")]
    finished = [e.data["id"] for e in kinds(events, "tool_call_finished")]
    assert sorted(started) == sorted(finished) and len(set(finished)) == len(finished)
    assert events[-1].type == "run_finished" and events[-1].data["stop_reason"] == stop
    assert result.stop_reason == stop and result.error is None


# ---- a sync tool running when the run is cancelled or hits its deadline ----


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["cancel", "deadline"])
def test_a_run_ends_soon_after_a_cancel_or_its_deadline_while_a_sync_tool_runs(
    rt: SimpleNamespace, mode: str, how: str
) -> None:
    release = threading.Event()
    cancel = threading.Event()
    settings: dict[str, Any] = {"deadline": 0.5} if how == "deadline" else {"cancel": cancel}
    timer = threading.Timer(0.5, cancel.set)
    if how == "cancel":
        timer.start()
    model = calls_then(rt, call(rt, "quick", "q"), call(rt, "slow", "s"))
    try:
        result, events, seconds = drive(rt, mode, model, slow_tools(rt, release), **settings)
    finally:
        timer.cancel()
        release.set()
    reason = "cancelled" if how == "cancel" else "deadline"
    assert seconds < PROMPT_END
    assert_consistent(rt, result, events, reason)
    assert len(model.requests) == 1  # the model is not asked again
    by_id = {report.call_id: report for report in result.calls}
    assert by_id["q"].status == "ok"
    slow = by_id["s"]
    assert slow.status == "skipped" and slow.error_kind == reason
    words = "was cancelled" if how == "cancel" else "reached its deadline"
    assert f"the run {words} while this call ran" in slow.content
    assert "abandoned after a grace of 0.5 seconds and may still be running" in slow.content
    answer = next(m for m in result.messages if m.get("tool_call_id") == "s")
    assert answer["content"] == slow.content and answer["is_error"] is True
    assert result.metrics.tools["slow"].skipped == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_deadline_not_reached_changes_nothing(rt: SimpleNamespace, mode: str) -> None:
    model = rt.ScriptedModel([rt.assistant_turn(None, call(rt, "quick", "q")), "Done."])
    result, events, _ = drive(rt, mode, model, slow_tools(rt, threading.Event()), deadline=60)
    assert_consistent(rt, result, events, "finished")
    assert result.text == "Done." and result.calls[0].status == "ok"


@pytest.mark.parametrize("mode", MODES)
def test_a_deadline_passed_between_steps_stops_before_the_next_call(rt: SimpleNamespace, mode: str) -> None:
    def late(args: Any, ctx: Any) -> str:
        time.sleep(0.3)
        return "late"

    registry = rt.Registry({})
    registry.add("late", {"type": "object"}, late, timeout=5)
    model = rt.ScriptedModel([rt.assistant_turn(None, call(rt, "late", "l")), "never asked"])
    result, events, _ = drive(rt, mode, model, registry, deadline=0.2)
    assert_consistent(rt, result, events, "deadline")
    assert len(model.requests) == 1 and result.calls[0].status in ("ok", "skipped")


# ---- a model call or a stream that hangs ----


class HangingModel:
    """A model whose calls never answer until released; its streams send one delta, then stall."""

    def __init__(self, rt: SimpleNamespace, release: threading.Event) -> None:
        self.rt = rt
        self.release = release

    def complete(self, request: Any) -> Any:
        self.release.wait(30)
        raise AssertionError("the run waited for a call it should have given up on")

    async def acomplete(self, request: Any) -> Any:
        await asyncio.sleep(30)
        raise AssertionError("the run waited for a call it should have given up on")

    def stream(self, request: Any) -> Iterator[Any]:
        yield self.rt.TextDelta("Thinking")
        self.release.wait(30)

    async def astream(self, request: Any) -> AsyncIterator[Any]:
        yield self.rt.TextDelta("Thinking")
        await asyncio.sleep(30)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
def test_a_deadline_ends_a_model_call_or_a_stream_that_hangs(rt: SimpleNamespace, mode: str, stream: bool) -> None:
    release = threading.Event()
    try:
        result, events, seconds = drive(
            rt, mode, HangingModel(rt, release), rt.Registry({}), deadline=0.3, stream=stream
        )
    finally:
        release.set()
    assert seconds < PROMPT_END
    assert_consistent(rt, result, events, "deadline")
    assert [e.data["text"] for e in kinds(events, "text_delta")] == (["Thinking"] if stream else [])
    assert len(kinds(events, "model_call_started")) == 1 and not kinds(events, "model_call_finished")


@pytest.mark.parametrize("mode", MODES)
def test_a_cancel_ends_a_stalled_stream(rt: SimpleNamespace, mode: str) -> None:
    release = threading.Event()
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    try:
        result, events, seconds = drive(
            rt, mode, HangingModel(rt, release), rt.Registry({}), cancel=cancel, stream=True
        )
    finally:
        timer.cancel()
        release.set()
    assert seconds < PROMPT_END
    assert_consistent(rt, result, events, "cancelled")


@pytest.mark.parametrize("mode", MODES)
def test_a_token_may_say_the_stop_is_a_deadline(rt: SimpleNamespace, mode: str) -> None:
    class FoldedDeadline:
        """A durable engine's token: set when its own deadline passed, and saying so."""

        reason = "deadline"

        def is_set(self) -> bool:
            return True

    model = rt.ScriptedModel(["never asked"])
    result, events, _ = drive(rt, mode, model, rt.Registry({}), cancel=FoldedDeadline())
    assert_consistent(rt, result, events, "deadline")
    assert not model.requests


# ---- RunInterrupted from a model client or a tool dispatch ----


class InterruptedModel:
    """A model client of a durable engine that learns, during its call, that the run's deadline passed."""

    def __init__(self, rt: SimpleNamespace) -> None:
        self.rt = rt
        self.calls = 0

    def complete(self, request: Any) -> Any:
        self.calls += 1
        raise self.rt.RunInterrupted("deadline")

    async def acomplete(self, request: Any) -> Any:
        return self.complete(request)

    def stream(self, request: Any) -> Iterator[Any]:
        yield self.rt.TextDelta("Hel")
        self.complete(request)

    async def astream(self, request: Any) -> AsyncIterator[Any]:
        yield self.rt.TextDelta("Hel")
        self.complete(request)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
def test_run_interrupted_from_the_model_client_ends_the_run_with_its_reason(
    rt: SimpleNamespace, mode: str, stream: bool
) -> None:
    model = InterruptedModel(rt)
    result, events, _ = drive(rt, mode, model, rt.Registry({}), stream=stream)
    assert_consistent(rt, result, events, "deadline")
    assert model.calls == 1 and not kinds(events, "error")


def interrupting_registry(rt: SimpleNamespace, interrupted: str) -> Any:
    """A registry whose dispatch of `interrupted` says the run was cancelled while it ran (a durable engine's)."""

    class Interrupting(rt.Registry):  # type: ignore[misc,name-defined]
        def dispatcher(self, tool_call: Any, ctx: Any) -> Any:
            if tool_call["id"] != interrupted:
                return super().dispatcher(tool_call, ctx)

            def dispatch() -> Any:
                raise rt.RunInterrupted("cancelled")

            return dispatch

        async def adispatch(self, tool_call: Any, ctx: Any = None) -> Any:
            if tool_call["id"] == interrupted:
                raise rt.RunInterrupted("cancelled")
            return await super().adispatch(tool_call, ctx)

    registry = Interrupting({})
    registry.add("quick", {"type": "object"}, lambda args, ctx: {"ok": True})
    return registry


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("parallel", [False, True])
def test_run_interrupted_from_a_tool_dispatch_answers_the_call_and_ends_the_run(
    rt: SimpleNamespace, mode: str, parallel: bool
) -> None:
    calls = [call(rt, "quick", "a"), call(rt, "quick", "b")] if parallel else [call(rt, "quick", "b")]
    model = calls_then(rt, *calls)
    result, events, _ = drive(rt, mode, model, interrupting_registry(rt, "b"))
    assert_consistent(rt, result, events, "cancelled")
    by_id = {report.call_id: report for report in result.calls}
    assert by_id["b"].status == "skipped" and by_id["b"].error_kind == "cancelled"
    assert "the run was cancelled while this call ran" in by_id["b"].content
    if parallel:
        # run() lets the other call finish within its grace; arun() cancels it at once (it may have finished).
        assert by_id["a"].status == "ok" if mode == "sync" else by_id["a"].status in ("ok", "skipped")
    assert len(model.requests) == 1


def test_a_dispatcher_refusing_to_make_a_call_ready_answers_every_call_as_not_run(rt: SimpleNamespace) -> None:
    class Refusing(rt.Registry):  # type: ignore[misc,name-defined]
        def dispatcher(self, tool_call: Any, ctx: Any) -> Any:
            raise rt.RunInterrupted("deadline")

    registry = Refusing({})
    registry.add("quick", {"type": "object"}, lambda args, ctx: {"ok": True})
    model = calls_then(rt, call(rt, "quick", "a"), call(rt, "quick", "b"))
    result, events, _ = drive(rt, "sync", model, registry)
    assert_consistent(rt, result, events, "deadline")
    assert [(r.status, r.error_kind) for r in result.calls] == [("skipped", "deadline")] * 2
    assert all(r.content == "Error: not run: the run reached its deadline before this call ran" for r in result.calls)


def test_calls_of_a_big_batch_that_never_started_are_answered_as_not_run(rt: SimpleNamespace) -> None:
    release = threading.Event()
    ids = [f"s{n}" for n in range(20)]  # more than the threads of one batch: the last ones wait for a thread
    model = calls_then(rt, *(call(rt, "slow", i) for i in ids))
    try:
        result, events, seconds = drive(rt, "sync", model, slow_tools(rt, release), deadline=0.3)
    finally:
        release.set()
    assert seconds < PROMPT_END
    assert_consistent(rt, result, events, "deadline")
    contents = [r.content for r in result.calls]
    ran = [c for c in contents if "while this call ran" in c]
    waited = [c for c in contents if c == "Error: not run: the run reached its deadline before this call ran"]
    assert len(ran) + len(waited) == len(ids) and ran and waited


# ---- the order parallel calls start in ----


@pytest.mark.parametrize("armed", [False, True])
def test_parallel_calls_are_made_ready_in_call_order_on_the_loops_thread(rt: SimpleNamespace, armed: bool) -> None:
    made: list[tuple[str, int]] = []

    class Recording(rt.Registry):  # type: ignore[misc,name-defined]
        def dispatcher(self, tool_call: Any, ctx: Any) -> Any:
            made.append((tool_call["id"], threading.get_ident()))
            return super().dispatcher(tool_call, ctx)

    registry = Recording({})
    registry.add("quick", {"type": "object"}, lambda args, ctx: {"ok": True})
    ids = [f"c{n}" for n in range(20)]  # more than the threads of one batch
    model = rt.ScriptedModel([rt.assistant_turn(None, *(call(rt, "quick", i) for i in ids)), "Done."])
    settings: dict[str, Any] = {"deadline": 60} if armed else {}
    result = rt.run(USER, model, registry, max_tool_calls=50, **settings)
    assert result.stop_reason == "finished" and [r.status for r in result.calls] == ["ok"] * len(ids)
    assert [call_id for call_id, _ in made] == ids
    assert {thread for _, thread in made} == {threading.get_ident()}
    assert [m["tool_call_id"] for m in result.messages if m["role"] == "tool"] == ids


# ---- the option ----


@pytest.mark.parametrize("deadline", [0, -1, math.nan])
def test_a_deadline_must_be_above_zero(rt: SimpleNamespace, deadline: float) -> None:
    with pytest.raises(ValueError, match="deadline must be a number of seconds above 0"):
        rt.RunOptions(deadline=deadline)


def test_a_run_interrupted_says_why(rt: SimpleNamespace) -> None:
    assert rt.RunInterrupted("deadline").reason == "deadline"
    assert rt.RunInterrupted().reason == "cancelled"
    assert isinstance(rt.RunInterrupted(), Exception)
