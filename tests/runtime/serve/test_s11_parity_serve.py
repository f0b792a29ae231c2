"""A served run against the same conversation run in-process (the package's own `run_events`): a sync tool cut off
by the run's deadline or a cancel is `skipped` in both, with the same metrics, and /stats does not count it as the
tool's error; the operator's deadline caps the one a run asks for (422, nothing recorded); a run that stops with
`error` keeps that error in GET /runs/{id} and in the run list.

The served side is the serve verb of the package built from this checkout, a real process (SourceServer); the
in-process side runs that package's loop with the serve verb's offline model and the same bound tools.
"""

from __future__ import annotations

import importlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from support.local_http import Answer, LocalServer, Received
from support.projects import SOURCE_PACKAGE
from support.serve_helpers import SourceServer, over

PROMPT = "What is the weather in Paris, London and Rome?"
# Bound by --tools (and in-process): London's call sleeps past the run's deadline or its cancel; the others
# answer at once.
SLOW_LONDON = """
import time
from {package} import Tools

def tools():
    bound = Tools()

    @bound.get_current_weather.handler
    def weather(args, ctx):
        if args.location == "London":
            time.sleep(3)
        return {{"location": args.location, "temperature": 20.0, "unit": "celsius"}}

    return bound
"""
# What no two runs share: how long things took.
TIMINGS = {"seconds", "max_seconds", "model_seconds"}


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _untimed(item) for key, item in value.items() if key not in TIMINGS}
    if isinstance(value, list):
        return [_untimed(item) for item in value]
    return value


def _compared(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """What the two runs must agree on: each call's end (status, kind, content) and the run's end and metrics."""
    finished = [
        (data["name"], data["status"], data["error_kind"], data["content"])
        for kind, data in events
        if kind == "tool_call_finished"
    ]
    [end] = [data for kind, data in events if kind == "run_finished"]
    return {"calls": finished, "end": _untimed(end)}


def _tools_module(tmp_path: Path) -> str:
    text = SLOW_LONDON.format(package=SOURCE_PACKAGE)
    (tmp_path / "slow_london.py").write_text(text, encoding="utf-8")
    return text


def _in_process(package: ModuleType, text: str, *, deadline: float | None, cancel_after: float | None) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(text, "slow_london.py", "exec"), namespace)
    prompted = importlib.import_module(f"{package.__name__}._runtime.app.prompted")
    agent = importlib.import_module(f"{package.__name__}.agent")
    cancel = threading.Event()
    if cancel_after is not None:
        threading.Timer(cancel_after, cancel.set).start()
    options = agent.RunOptions(
        stream=True, max_steps=8, deadline=deadline, cancel=cancel if cancel_after is not None else None
    )
    messages = [{"role": "user", "content": PROMPT}]
    events = agent.run_events(messages, prompted.PromptedModel(), namespace["tools"](), options=options)
    return _compared([(event.type, event.to_json()["data"]) for event in events])


def _served_events(server: SourceServer, run_id: str) -> dict[str, Any]:
    server.wait_for(run_id, over)
    return _compared([(kind, data) for _, kind, data in server.events(run_id)])


def _expected_cut(reason: str, what: str) -> dict[str, Any]:
    """The calls and metrics of the conversation when London's call is cut off by `reason`."""
    cut = (
        f"Error: not finished: the run {what} while this call ran; it was abandoned after a grace of 0.5 seconds "
        "and may still be running"
    )
    answer = '{"location":"%s","temperature":20.0,"unit":"celsius"}'
    return {
        "calls": [
            ("get_current_weather", "ok", None, answer % "Paris"),
            ("get_current_weather", "skipped", reason, cut),
            ("get_current_weather", "ok", None, answer % "Rome"),
        ],
        "tools": {
            "get_current_weather": {
                "calls": 2,
                "ok": 2,
                "errors": 0,
                "denied": 0,
                "skipped": 1,
                "success_rate": 1.0,
            }
        },
        "tool_calls": 2,
        "stop_reason": reason,
    }


def _summary(compared: dict[str, Any]) -> dict[str, Any]:
    metrics = compared["end"]["metrics"]
    return {
        "calls": compared["calls"],
        "tools": metrics["tools"],
        "tool_calls": metrics["tool_calls"],
        "stop_reason": compared["end"]["stop_reason"],
    }


def _stats_of_weather(server: SourceServer) -> dict[str, Any]:
    answer = server.client.get("/stats")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()["tools"]["get_current_weather"]
    return {key: found[key] for key in ("calls", "ok", "errors", "skipped", "success_rate")}


def test_a_sync_call_cut_off_by_the_deadline_is_skipped_served_as_in_process(
    tmp_path: Path, serve: Callable[..., SourceServer], source_package: ModuleType
) -> None:
    text = _tools_module(tmp_path)
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    server = serve("--database", database, "--tools", "slow_london:tools", "--deadline", "1")
    served = _served_events(server, server.start_run(PROMPT))
    in_process = _in_process(source_package, text, deadline=1.0, cancel_after=None)

    assert served == in_process
    assert _summary(served) == _expected_cut("deadline", "reached its deadline")
    # Not the tool's failure: /stats counts it as skipped, its success rate that of the calls that ran.
    assert _stats_of_weather(server) == {"calls": 2, "ok": 2, "errors": 0, "skipped": 1, "success_rate": 1.0}


def test_a_sync_call_cut_off_by_a_cancel_is_skipped_served_as_in_process(
    tmp_path: Path, serve: Callable[..., SourceServer], source_package: ModuleType
) -> None:
    text = _tools_module(tmp_path)
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    server = serve("--database", database, "--tools", "slow_london:tools")
    run_id = server.start_run(PROMPT)
    # Cancelled while London's call sleeps: once its start is stored, and the others have ended.
    server.wait_for(run_id, lambda state: any(m["role"] == "assistant" for m in state["messages"]))
    time.sleep(1.0)
    assert server.client.post(f"/runs/{run_id}/cancel").status_code == 202
    served = _served_events(server, run_id)
    in_process = _in_process(source_package, text, deadline=None, cancel_after=1.0)

    assert served == in_process
    assert _summary(served) == _expected_cut("cancelled", "was cancelled")
    assert _stats_of_weather(server) == {"calls": 2, "ok": 2, "errors": 0, "skipped": 1, "success_rate": 1.0}


def test_the_operators_deadline_caps_the_one_a_run_asks_for(tmp_path: Path, serve: Callable[..., SourceServer]) -> None:
    server = serve("--database", f"sqlite:///{tmp_path / 'runs.sqlite'}", "--deadline", "1")
    body = {"messages": [{"role": "user", "content": PROMPT}]}

    longer = server.client.post("/runs", json={**body, "deadline": 30})
    assert longer.status_code == 422, longer.text
    assert longer.json() == {
        "error": {
            "field": "/deadline",
            "message": "deadline 30 seconds is above this server's limit of 1 second (the deadline it gives "
            "every run): ask for at most 1 second",
        }
    }
    assert server.client.get("/runs").json()["runs"] == []  # nothing was recorded

    # As long as the cap, or shorter: taken.
    assert server.client.post("/runs", json={**body, "deadline": 1}).status_code == 201
    assert server.client.post("/runs", json={**body, "deadline": 0.5}).status_code == 201
    # A server without a deadline of its own takes any the body allows.
    free = serve("--database", f"sqlite:///{tmp_path / 'free.sqlite'}")
    assert free.client.post("/runs", json={**body, "deadline": 3600}).status_code == 201


def _bad_request(received: Received) -> Answer:
    error = {"error": {"message": "Invalid 'messages[0]': bad thing", "type": "invalid_request_error", "code": "bad"}}
    return Answer(json.dumps(error).encode(), status=400)


def test_a_run_stopped_by_an_error_keeps_the_error_in_its_state(
    tmp_path: Path, serve: Callable[..., SourceServer]
) -> None:
    endpoint = LocalServer(_bad_request)
    try:
        options = ("--base-url", endpoint.base + "/v1", "--model", "m", "--api-key-env", "PARITY_TEST_KEY")
        server = serve(
            "--database", f"sqlite:///{tmp_path / 'runs.sqlite'}", *options, env={"PARITY_TEST_KEY": "not-a-key"}
        )
        run_id = server.start_run(PROMPT)
        state = server.wait_for(run_id, over)
    finally:
        endpoint.close()

    assert (state["status"], state["stop_reason"]) == ("error", "error")
    [fatal] = [data for _, kind, data in server.events(run_id) if kind == "error" and data["fatal"]]
    expected = {key: fatal[key] for key in ("type", "message", "code", "status")}
    assert expected["type"] == "invalid_request_error"
    assert expected["status"] == 400
    assert state["error"] == expected
    [listed] = server.client.get("/runs").json()["runs"]
    assert (listed["id"], listed["error"]) == (run_id, expected)


def test_a_run_that_did_not_stop_by_an_error_has_none_nor_has_a_row_stored_before_the_field(
    tmp_path: Path, serve: Callable[..., SourceServer]
) -> None:
    from toolgen.runtime.serve.store import RunStore

    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    store = RunStore(database)
    # A row as an earlier release wrote it: stopped by an error, with no `error` kept.
    old_state = {"version": 1, "messages": [], "metrics": None, "stop_reason": "error", "steps": 1}
    store.create_run("old", "old", old_state)
    store.update_run("old", "error", old_state)
    store.close()
    server = serve("--database", database)

    old = server.state("old")
    assert (old["status"], old["stop_reason"], old["error"]) == ("error", "error", None)
    run_id = server.start_run(PROMPT)
    state = server.wait_for(run_id, over)
    assert (state["status"], state["error"]) == ("finished", None)
    listed = {run["id"]: run["error"] for run in server.client.get("/runs").json()["runs"]}
    assert listed == {"old": None, run_id: None}
