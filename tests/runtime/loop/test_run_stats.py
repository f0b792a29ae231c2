"""Run statistics: RunStats fed by real runs, its window, percentiles and bounds; the same report from the store and GET /stats."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

T0 = 1_700_000_000.0  # a fixed wall-clock time for the events made by hand
USER = [{"role": "user", "content": "Check the weather, the printer and the disk."}]


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    """The runtime's surface, and the modules behind the service the surface leaves out."""
    name = source_package.__name__
    return SimpleNamespace(
        runtime=importlib.import_module(f"{name}._runtime"),
        stats=importlib.import_module(f"{name}._runtime.loop.stats"),
        store=importlib.import_module(f"{name}._runtime.serve.store"),
        served=importlib.import_module(f"{name}._runtime.serve.stats"),
        page=importlib.import_module(f"{name}._runtime.serve.page"),
    )


def event(sdk: SimpleNamespace, kind: str, when: float | None, **data: Any) -> Any:
    """An event as the service stores it: what RunStats reads of any event (type, data, time)."""
    return sdk.store.StoredEvent(0, kind, data, when)


def tool(sdk: SimpleNamespace, name: str, when: float, duration_ms: float = 1.0, status: str = "ok") -> Any:
    return event(
        sdk,
        "tool_call_finished",
        when,
        id="c",
        name=name,
        status=status,
        error_kind=None,
        duration_ms=duration_ms,
        content="",
    )


def model_call(sdk: SimpleNamespace, when: float, duration_ms: float = 1.0, **data: Any) -> Any:
    fields = {"step": 1, "attempt": 1, "duration_ms": duration_ms, "finish_reason": "stop", "usage": None, **data}
    return event(sdk, "model_call_finished", when, **fields)


# ---- real runs ----


def registry(sdk: SimpleNamespace) -> Any:
    tools = sdk.runtime.Registry({})
    tools.add("weather", {"type": "object"}, lambda args, ctx: {"temperature": 21})
    tools.add("printer", {"type": "object"}, printer_on_fire)
    tools.add("wipe_disk", {"type": "object"}, lambda args, ctx: "wiped", requires_approval=True)
    return tools


def printer_on_fire(args: Any, ctx: Any) -> Any:
    raise PermissionError("the printer is on fire")


def script(sdk: SimpleNamespace) -> Any:
    calls = [sdk.runtime.tool_call(name, {}, id=f"c{i}") for i, name in enumerate(["weather", "printer", "wipe_disk"])]
    usage = {"input_tokens": 100, "output_tokens": 7}
    first = sdk.runtime.Response(
        sdk.runtime.assistant_turn(None, *calls), {"reason": "tool_calls"}, usage=usage, model="scripted"
    )
    last = sdk.runtime.Response(
        {"role": "assistant", "content": "Sunny; the printer failed."}, {"reason": "stop"}, usage=usage
    )
    return sdk.runtime.ScriptedModel([first, last])


def deny(request: Any) -> Any:
    return False


def test_run_stats_counts_the_calls_of_real_runs_sync_and_async(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats(window=3600.0)
    first = sdk.runtime.run(USER, script(sdk), registry(sdk), approve=deny, on_event=stats.add)
    second = asyncio.run(sdk.runtime.arun(USER, script(sdk), registry(sdk), approve=deny, on_event=stats.add))
    failed = sdk.runtime.run(
        USER,
        sdk.runtime.ScriptedModel([sdk.runtime.ProviderError("openai-chat", "overloaded", status=529)]),
        registry(sdk),
        on_event=stats.add,
    )
    assert (first.stop_reason, second.stop_reason, failed.stop_reason) == ("finished", "finished", "error")
    report = stats.snapshot()

    assert sorted(report.tools) == ["printer", "weather", "wipe_disk"]
    weather, printer, wipe = report.tools["weather"], report.tools["printer"], report.tools["wipe_disk"]
    assert (weather.calls, weather.ok, weather.errors, weather.success_rate) == (2, 2, 0, 1.0)
    assert (printer.calls, printer.ok, printer.errors, printer.success_rate) == (2, 0, 2, 0.0)
    assert (wipe.calls, wipe.denied, wipe.skipped, wipe.success_rate) == (0, 2, 0, None)
    # Percentiles are of the calls that ran: a denied call has no duration to count.
    assert wipe.p50_ms is None and wipe.p95_ms is None
    assert 0 <= weather.p50_ms <= weather.p95_ms and 0 <= printer.p50_ms <= printer.p95_ms
    # The same counts as the metrics each run keeps for itself.
    for name, summary in report.tools.items():
        mine = [result.metrics.tools[name] for result in (first, second)]
        assert summary.calls == sum(m.calls for m in mine) and summary.ok == sum(m.ok for m in mine)
        assert summary.errors == sum(m.errors for m in mine) and summary.denied == sum(m.denied for m in mine)

    # Five model calls: two per finished run, one that failed. The scripted model names itself on some answers;
    # a call whose event has no model name counts under "unknown".
    assert set(report.models) <= {"scripted", "unknown"}
    models = list(report.models.values())
    assert sum(m.calls for m in models) == 5 and sum(m.errors for m in models) == 1
    assert sum(m.input_tokens for m in models) == 400 and sum(m.output_tokens for m in models) == 28
    assert all(m.p50_ms is not None and m.p50_ms <= m.p95_ms for m in models)

    document = json.loads(json.dumps(report.to_json()))
    assert document["window"] == 3600.0 and document["end"] - document["start"] == pytest.approx(3600.0)
    assert document["tools"]["printer"] == {
        "calls": 2,
        "ok": 0,
        "errors": 2,
        "denied": 0,
        "skipped": 0,
        "success_rate": 0.0,
        "p50_ms": printer.p50_ms,
        "p95_ms": printer.p95_ms,
    }


def test_models_are_counted_by_name_and_a_missing_name_is_unknown(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats()
    stats.add(model_call(sdk, T0, 10, model="gpt-x", usage={"input_tokens": 3, "output_tokens": 4}))
    stats.add(model_call(sdk, T0, 30, model="gpt-x", finish_reason="error"))
    stats.add(model_call(sdk, T0, 20, model=None))
    stats.add(model_call(sdk, T0, 20))  # from before events named their model
    report = stats.snapshot(now=T0)
    assert list(report.models) == ["gpt-x", "unknown"]
    gpt = report.models["gpt-x"]
    assert (gpt.calls, gpt.errors, gpt.success_rate, gpt.p50_ms, gpt.p95_ms) == (2, 1, 0.5, 10.0, 30.0)
    assert (gpt.input_tokens, gpt.output_tokens) == (3, 4)
    assert report.models["unknown"].calls == 2 and report.models["unknown"].errors == 0


# ---- the window ----


def test_the_window_ends_at_now_and_older_samples_are_dropped(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats(window=1000.0)
    stats.add(tool(sdk, "a", T0 + 1000))
    stats.add(tool(sdk, "a", T0 + 1500))
    stats.add(tool(sdk, "b", T0 + 1200))
    stats.add(tool(sdk, "later", T0 + 5000))

    report = stats.snapshot(now=T0 + 1600)
    assert (report.start, report.end, report.window) == (T0 + 600, T0 + 1600, 1000.0)
    assert {name: s.calls for name, s in report.tools.items()} == {"a": 2, "b": 1}  # nothing after `now`

    report = stats.snapshot(now=T0 + 2300)
    assert {name: s.calls for name, s in report.tools.items()} == {"a": 1}
    # A sample exactly at the window's start is in it.
    assert stats.snapshot(now=T0 + 2500).tools["a"].calls == 1
    # What fell out of a window is gone, also for a snapshot of an earlier time.
    assert {name: s.calls for name, s in stats.snapshot(now=T0 + 1600).tools.items()} == {"a": 1}
    assert stats.snapshot(now=T0 + 5000).tools["later"].calls == 1
    assert list(stats.snapshot(now=T0 + 10_000).tools) == []


def test_a_newer_event_drops_the_older_samples_of_its_name(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats(window=60.0)
    for second in range(100):
        stats.add(tool(sdk, "a", T0 + second))
    assert stats.snapshot(now=T0 + 99).tools["a"].calls == 61  # T0 + 39 .. T0 + 99
    report = stats.snapshot()  # the wall clock: years after T0
    assert not report.tools and abs(report.end - time.time()) < 3600


def test_an_event_without_a_time_counts_when_it_arrives(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats(window=60.0)
    stats.add(tool(sdk, "a", None))
    assert stats.snapshot().tools["a"].calls == 1


# ---- percentiles ----


def test_percentiles_are_nearest_rank_of_the_calls_that_ran(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats()
    for ms in [7, 3, 20, 1, 15, 11, 2, 9, 18, 4, 13, 6, 17, 5, 10, 19, 8, 12, 16, 14]:  # 1..20, shuffled
        stats.add(tool(sdk, "twenty", T0, ms))
    for ms in [5, 1, 3]:
        stats.add(tool(sdk, "three", T0, ms))
    stats.add(tool(sdk, "one", T0, 42.5, status="error"))
    stats.add(tool(sdk, "one", T0, 0.0, status="denied"))
    stats.add(tool(sdk, "one", T0, 0.0, status="skipped"))
    report = stats.snapshot(now=T0)
    twenty, three, one = report.tools["twenty"], report.tools["three"], report.tools["one"]
    # rank ceil(p / 100 * n): 10th and 19th of 20; 2nd and 3rd of 3; the one call that ran, twice
    assert (twenty.p50_ms, twenty.p95_ms) == (10.0, 19.0)
    assert (three.p50_ms, three.p95_ms) == (3.0, 5.0)
    assert (one.p50_ms, one.p95_ms) == (42.5, 42.5)
    assert (one.calls, one.errors, one.denied, one.skipped, one.success_rate) == (1, 1, 1, 1, 0.0)
    nearest = sdk.stats.nearest_rank
    assert nearest([], 50) is None and nearest([4.0], 0) == 4.0 and nearest([1.0, 2.0], 100) == 2.0


# ---- bounds ----


def test_each_name_keeps_at_most_max_samples_the_newest(sdk: SimpleNamespace) -> None:
    assert sdk.stats.MAX_SAMPLES == 10_000
    stats = sdk.runtime.RunStats()
    for i in range(10_005):
        stats.add(tool(sdk, "busy", T0, float(i)))
    busy = stats.snapshot(now=T0).tools["busy"]
    assert busy.calls == 10_000 and busy.p50_ms == 5004.0  # samples 5 .. 10004

    small = sdk.runtime.RunStats(max_samples=5)
    for i in range(12):
        small.add(tool(sdk, "a", T0, float(i)))
    a = small.snapshot(now=T0).tools["a"]
    assert (a.calls, a.p50_ms, a.p95_ms) == (5, 9.0, 11.0)


def test_names_are_bounded_in_number_and_length(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats(max_keys=3)
    for name in ["a", "b", "c", "a", "d"]:  # "b" was seen least recently when "d" came
        stats.add(tool(sdk, name, T0))
    assert list(stats.snapshot(now=T0).tools) == ["a", "c", "d"]
    long = sdk.runtime.RunStats()
    long.add(tool(sdk, "x" * 100_000, T0))
    assert [len(name) for name in long.snapshot(now=T0).tools] == [200]


def test_nothing_an_event_holds_makes_add_raise(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats()
    hostile = [
        event(sdk, "tool_call_finished", T0, name=None, status=5, duration_ms="slow"),
        event(sdk, "tool_call_finished", T0, name=["x"], status="ok", duration_ms=float("nan")),
        event(sdk, "tool_call_finished", T0, name="t", status="ok", duration_ms=10**400),
        event(sdk, "tool_call_finished", T0, name="t", status="ok", duration_ms=True),
        event(sdk, "tool_call_finished", T0, name="t", status="ok", duration_ms=-3),
        event(sdk, "model_call_finished", T0, usage="lots", duration_ms=None, model=7),
        event(sdk, "model_call_finished", T0, usage={"input_tokens": -5, "output_tokens": True}, model=""),
        event(sdk, "model_call_finished", T0, usage={"input_tokens": 10**30, "output_tokens": "9"}),
        event(sdk, "text_delta", T0, text="ignored"),
        sdk.store.StoredEvent(0, "tool_call_finished", "not a mapping", T0),
        SimpleNamespace(),
        None,
    ]
    for item in hostile:
        stats.add(item)
    stats.add(sdk.store.StoredEvent(0, "tool_call_finished", {"name": "odd time"}, float("inf")))
    stats.add(sdk.store.StoredEvent(0, "tool_call_finished", {"name": "odd time"}, "yesterday"))
    report = stats.snapshot(now=T0)
    unknown = report.tools["unknown"]  # a name that is no text; a status that is none of the four: skipped
    assert (unknown.calls, unknown.skipped) == (1, 1)
    assert report.tools["t"].calls == 3 and report.tools["t"].p50_ms is None
    assert report.models["unknown"].calls == 3 and report.models["unknown"].input_tokens == 10**30
    assert report.models["unknown"].output_tokens == 0
    assert "odd time" in stats.snapshot().tools  # counted when it came: the wall clock
    json.dumps(report.to_json(), allow_nan=False)
    with pytest.raises(ValueError, match="window"):
        sdk.runtime.RunStats(window=0)
    with pytest.raises(ValueError, match="window"):
        sdk.runtime.RunStats(window=float("inf"))


def test_a_collector_shared_by_threads_loses_no_event(sdk: SimpleNamespace) -> None:
    stats = sdk.runtime.RunStats()
    start = threading.Barrier(9)
    reports: list[Any] = []

    def feed(worker: int) -> None:
        start.wait()
        for i in range(500):
            stats.add(tool(sdk, f"tool{worker % 2}", T0, float(i)))
            stats.add(model_call(sdk, T0, float(i), model="m", usage={"input_tokens": 1}))

    def read() -> None:
        start.wait()
        for _ in range(50):
            reports.append(stats.snapshot(now=T0))

    threads = [threading.Thread(target=feed, args=(n,)) for n in range(8)] + [threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = stats.snapshot(now=T0)
    assert report.tools["tool0"].calls == report.tools["tool1"].calls == 2000
    assert report.models["m"].calls == report.models["m"].input_tokens == 4000
    assert len(reports) == 50 and all(r.models.get("m") is None or r.models["m"].calls <= 4000 for r in reports)


# ---- from the store ----


def stored(events: list[Any], sdk: SimpleNamespace, shift: float = 0.0) -> list[Any]:
    """Run events as the service stores them, their times moved by `shift` seconds."""
    return [
        sdk.store.StoredEvent(e.seq, e.type, json.loads(json.dumps(dict(e.data), default=str)), e.time + shift)
        for e in events
    ]


def test_the_store_gives_the_same_report_as_the_events_in_memory(sdk: SimpleNamespace, tmp_path: Path) -> None:
    store = sdk.store.RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        events: list[Any] = []
        sdk.runtime.run(USER, script(sdk), registry(sdk), approve=deny, on_event=events.append)
        now = time.time()
        store.add_events("run-1", stored(events, sdk))
        store.add_events("run-2", stored(events, sdk, shift=-30))
        store.add_events("run-old", stored(events, sdk, shift=-7200))  # outside the hour
        store.add_events("run-1", stored(events, sdk))  # a replay writes the same rows again: no double count

        kinds = {e.type for e in store.events_of_types_since(["tool_call_finished", "model_call_finished"], 0)}
        assert kinds == {"tool_call_finished", "model_call_finished"}
        since = list(store.events_of_types_since(["tool_call_finished"], now - 3600))
        assert len(since) == 6 and [e.time for e in since] == sorted(e.time for e in since)
        assert list(store.events_of_types_since([], 0)) == []

        report = sdk.served.stored_stats(store, 3600.0, now=now)
        memory = sdk.runtime.RunStats(3600.0)
        for e in stored(events, sdk) + stored(events, sdk, shift=-30):
            memory.add(e)
        assert report.to_json() == memory.snapshot(now).to_json()
        assert {name: (s.calls, s.denied) for name, s in report.tools.items()} == {
            "printer": (2, 0),
            "weather": (2, 0),
            "wipe_disk": (0, 2),
        }
        assert sum(m.calls for m in report.models.values()) == 4

        day = sdk.served.stored_stats(store, 86400.0, now=now)
        assert day.tools["weather"].calls == 3
        assert sdk.served.stored_stats(store, 10.0, now=now - 3600).tools == {}
    finally:
        store.close()


@pytest.mark.parametrize(
    ("raw", "window"),
    [(None, 3600.0), ("60", 60.0), ("1", 1.0), ("2592000", 2592000.0), ("90.5", 90.5)],
)
def test_a_window_is_whole_or_decimal_seconds_from_one_to_thirty_days(
    sdk: SimpleNamespace, raw: str | None, window: float
) -> None:
    assert sdk.served.parse_window(raw) == window


@pytest.mark.parametrize("raw", ["", "0", "0.5", "2592001", "-5", "1e3", "nan", "inf", " 60", "6_0", "+60", "٣"])
def test_a_bad_window_is_refused(sdk: SimpleNamespace, raw: str) -> None:
    assert sdk.served.parse_window(raw) is None


def test_get_stats_answers_the_report_of_the_stored_runs(sdk: SimpleNamespace, tmp_path: Path) -> None:
    testclient = pytest.importorskip("starlette.testclient", reason="the serve extra (starlette) is not installed")
    pytest.importorskip("httpx", reason="starlette's TestClient needs httpx")
    http = importlib.import_module(f"{sdk.runtime.__name__}.serve.http")
    store = sdk.store.RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        events: list[Any] = []
        sdk.runtime.run(USER, script(sdk), registry(sdk), approve=deny, on_event=events.append)
        store.add_events("recent", stored(events, sdk))
        store.add_events("old", stored(events, sdk, shift=-600))
        # The app reads only `runs.store` for /stats; the durable runs themselves (DBOS) are not needed here.
        auth = importlib.import_module(f"{sdk.runtime.__name__}.serve.auth")
        app = http.service_app(SimpleNamespace(store=store), auth=auth.open_access, hosts=["testserver"])
        with testclient.TestClient(app) as client:
            hour = client.get("/stats")
            assert hour.status_code == 200, hour.text
            body = hour.json()
            assert body["window"] == 3600.0 and body["end"] - body["start"] == pytest.approx(3600.0)
            assert body["tools"]["weather"]["calls"] == 2 and body["tools"]["wipe_disk"]["denied"] == 2
            assert body["tools"]["printer"]["success_rate"] == 0.0
            assert sum(m["calls"] for m in body["models"].values()) == 4

            minute = client.get("/stats", params={"window": "60"}).json()
            assert minute["window"] == 60.0 and minute["tools"]["weather"]["calls"] == 1

            for bad in ["0", "2592001", "abc", "-1", "nan"]:
                refused = client.get("/stats", params={"window": bad})
                assert refused.status_code == 422, bad
                assert refused.json()["error"]["field"] == "window"
                assert "1 to 2592000" in refused.json()["error"]["message"]
            assert client.post("/stats").status_code == 405
    finally:
        store.close()


# ---- the page ----


def test_the_page_has_the_stats_panel_and_the_stop_button_and_draws_data_as_text(sdk: SimpleNamespace) -> None:
    html, js = sdk.page.PAGE_HTML, sdk.page.PAGE_SCRIPT
    assert 'id="stats"' in html and 'id="tool-stats"' in html and 'id="model-stats"' in html
    assert '<button id="stop" type="button" hidden>Stop</button>' in html
    assert "api('/stats')" in js and "'/cancel'" in js
    assert js.count("loadStats();") >= 2  # when the page loads, and after each run finishes
    for writer in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "DOMParser", "eval("):
        assert writer not in js and writer not in html, writer


def test_the_page_script_parses_as_javascript(sdk: SimpleNamespace, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the script's syntax is checked only where it is")
    script = tmp_path / "page.js"
    script.write_text(sdk.page.PAGE_SCRIPT, encoding="utf-8")
    checked = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
