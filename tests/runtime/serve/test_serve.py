"""`python -m toolgen_sdk serve`: durable runs over HTTP, killed with SIGKILL and resumed, and their API's errors."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.serve_helpers import GENERATED, LIST_FILES, Server, awaiting, over, serving, stop_all

# Bound by --tools: the weather tool records each start and end of its handler in a file, and blocks (until
# the server is killed) on the call for the place named in block.txt.
SLOW_TOOLS = """
import os, time
from pathlib import Path
from toolgen_sdk import Tools

HERE = Path(__file__).parent

def tools():
    bound = Tools()

    @bound.get_current_weather.handler
    def weather(args, ctx):
        with (HERE / "calls.log").open("a") as log:
            log.write(f"start {args.location}\\n")
        block = HERE / "block.txt"
        if block.exists() and block.read_text().strip() == args.location:
            (HERE / "blocked.txt").write_text(args.location)
            time.sleep(600)
        with (HERE / "calls.log").open("a") as log:
            log.write(f"end {args.location}\\n")
        return {"location": args.location, "temperature": 20.0, "unit": "celsius"}

    return bound
"""


def _database(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


def _checkpointed_calls(database: Path) -> int:
    """How many tool calls DBOS has recorded as finished steps (its operation_outputs table)."""
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as connection:
        query = "SELECT count(*) FROM operation_outputs WHERE function_name = 'toolgen.tool_call'"
        [(count,)] = connection.execute(query).fetchall()
    return int(count)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server on its default database, for the tests that need no restart and no fresh database: each starts
    runs of its own."""
    with serving(tmp_path_factory.mktemp("shared"), graceful=False) as server:
        yield server


def test_a_run_awaiting_approval_survives_sigkill_and_finishes_when_approved_after_the_restart(
    tmp_path: Path,
) -> None:
    server = Server(tmp_path, "--database", _database(tmp_path)).start()
    try:
        run_id = server.start_run(LIST_FILES)
        state = server.wait_for(run_id, awaiting)
        [pending] = state["pending"]
        assert pending["name"] == "run_command"
        server.kill()

        server.start()
        state = server.state(run_id)
        assert state["status"] == "awaiting_approval" and state["pending"] == [pending]
        answer = server.client.post(f"/runs/{run_id}/approvals/{pending['id']}", json={"decision": "approve"})
        assert answer.status_code == 200, answer.text
        again = server.client.post(f"/runs/{run_id}/approvals/{pending['id']}", json={"decision": "approve"})
        assert again.status_code == 409 and again.json()["error"]["field"] == "/tool_call_id"

        state = server.wait_for(run_id, over)
        assert (state["status"], state["stop_reason"]) == ("finished", "finished")
        tool_messages = [m for m in state["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_messages] == [pending["id"]]
        assert "notes.txt" in str(tool_messages[0]["content"])
        assert state["metrics"]["model_calls"] == 2

        events = server.events(run_id, 0)
        ids = [event_id for event_id, _, _ in events]
        assert ids == list(range(1, len(ids) + 1)), ids
        kinds = Counter(kind for _, kind, _ in events)
        assert kinds["run_started"] == kinds["run_finished"] == kinds["approval_requested"] == 1
        assert kinds["approval_decided"] == kinds["tool_call_started"] == kinds["tool_call_finished"] == 1
        assert kinds["model_call_started"] == 2
        # The call is on the stream as the model announces it, before it asks for approval.
        order = [kind for _, kind, _ in events]
        assert 0 < order.index("tool_call_delta") < order.index("approval_requested")
        announced = next(data for _, kind, data in events if kind == "tool_call_delta")
        assert (announced["id"], announced["name"]) == (pending["id"], "run_command")
        # A reconnecting reader gets what came after the last id it saw, nothing twice.
        assert server.events(run_id, ids[-4]) == events[-3:]
    finally:
        server.stop(graceful=False)


def test_a_kill_in_the_middle_of_a_tool_batch_runs_no_call_twice_and_loses_none(tmp_path: Path) -> None:
    (tmp_path / "slow_tools.py").write_text(SLOW_TOOLS, encoding="utf-8")
    (tmp_path / "block.txt").write_text("London", encoding="utf-8")
    server = Server(tmp_path, "--database", _database(tmp_path), "--tools", "slow_tools:tools").start()
    try:
        run_id = server.start_run("What is the weather in Paris, London and Rome?")
        blocked = tmp_path / "blocked.txt"
        server.wait_for(run_id, lambda state: blocked.exists())
        # And Paris's step recorded: a kill before its checkpoint would (rightly) run that read-only call again.
        server.wait_for(run_id, lambda state: _checkpointed_calls(tmp_path / "runs.sqlite") >= 1)
        server.kill()
        (tmp_path / "block.txt").unlink()

        server.start()
        state = server.wait_for(run_id, over)
        assert state["status"] == "finished", state
        log = (tmp_path / "calls.log").read_text(encoding="utf-8").split("\n")
        # Paris ran before the kill and is not run again; London was cut short and, get_current_weather being
        # read-only (readOnlyHint), is safe to repeat: it runs again to its end; Rome runs once, after the restart.
        # (A call not safe to repeat is answered as interrupted instead: tests/e2e/test_served_kills.py.)
        assert Counter(log) == Counter(
            ["start Paris", "end Paris", "start London", "start London", "end London", "start Rome", "end Rome", ""]
        )
        answers = {m["tool_call_id"]: m for m in state["messages"] if m["role"] == "tool"}
        assert len(answers) == 3
        assert all("20.0" in str(m["content"]) and not m.get("is_error") for m in answers.values()), answers
        kinds = Counter(kind for _, kind, _ in server.events(run_id))
        assert kinds["tool_call_finished"] == 3 and kinds["run_finished"] == 1
    finally:
        server.stop(graceful=False)


def test_bad_requests_get_a_json_error_naming_the_field(shared: Server) -> None:
    server = shared
    post = server.client.post
    cases = [
        (post("/runs", content=b"{not json"), 400, ""),
        # json.loads recurses once a level: nested past the recursion limit it is still a bad body, not a 500
        # Nested past the 128 levels every reader of JSON here accepts: refused at the first level past it.
        (post("/runs", content=b"[" * 5000 + b"]" * 5000), 422, "/0" * 128),
        (post("/runs", json=[]), 400, ""),
        (post("/runs", json={}), 422, "/messages"),
        (post("/runs", json={"messages": [{"role": "robot"}]}), 422, "/messages/0/role"),
        (post("/runs", json={"messages": [{"role": "user", "content": 3}]}), 422, "/messages/0/content"),
        (post("/runs", json={"messages": [{"role": "user"}], "colour": 1}), 422, "/colour"),
        (post("/runs", json={"messages": [{"role": "user"}], "conversation_id": ""}), 422, "/conversation_id"),
        (server.client.get("/runs/nope"), 404, "/id"),
        (server.client.get("/runs/nope/events"), 404, "/id"),
        (post("/runs/nope/approvals/call", json={"decision": "approve"}), 404, "/id"),
    ]
    for answer, status, field in cases:
        assert answer.status_code == status, (answer.request.url, answer.text)
        assert answer.json()["error"]["field"] == field, answer.text
    run_id = server.start_run(LIST_FILES)
    [pending] = server.wait_for(run_id, awaiting)["pending"]
    url = f"/runs/{run_id}/approvals/{pending['id']}"
    for body, field in [
        ({"decision": "maybe"}, "/decision"),
        ({"decision": "edit"}, "/arguments"),
        ({"decision": "edit", "arguments": "{oops"}, "/arguments"),
        ({"decision": "edit", "arguments": "[" * 5000 + "]" * 5000}, "/arguments" + "/0" * 128),
        ({"decision": "deny", "reason": 5}, "/reason"),
    ]:
        answer = post(url, json=body)
        assert (answer.status_code, answer.json()["error"]["field"]) == (422, field), answer.text
    assert post(f"/runs/{run_id}/approvals/not-a-call", json={"decision": "approve"}).status_code == 409
    events = server.client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "x"})
    assert events.status_code == 422 and events.json()["error"]["field"] == "Last-Event-ID"
    edited = post(url, json={"decision": "edit", "arguments": {"program": "cat", "args": ["notes.txt"]}})
    assert edited.status_code == 200, edited.text
    state = server.wait_for(run_id, over)
    tool = next(m for m in state["messages"] if m["role"] == "tool")
    assert "Files here are what run_command can see." in str(tool["content"])
    assert post(url, json={"decision": "deny"}).status_code == 409


def test_a_denied_call_is_answered_with_the_reason_and_the_run_finishes(shared: Server) -> None:
    server = shared
    run_id = server.start_run(LIST_FILES)
    [pending] = server.wait_for(run_id, awaiting)["pending"]
    answer = server.client.post(
        f"/runs/{run_id}/approvals/{pending['id']}", json={"decision": "deny", "reason": "not today"}
    )
    assert answer.status_code == 200
    state = server.wait_for(run_id, over)
    tool = next(m for m in state["messages"] if m["role"] == "tool")
    assert "not today" in str(tool["content"]) and tool["is_error"] is True
    # The default database is a SQLite file under the state folder of the directory served from.
    assert (server.cwd / ".toolgen-state" / "toolgen_sdk" / "runs.sqlite").is_file()


def test_serve_without_its_extra_says_which_package_is_missing_and_exits_4(tmp_path: Path) -> None:
    probe = (
        "import sys; sys.modules['starlette'] = None\n"
        "from toolgen_sdk._runtime import main\n"
        "from toolgen_sdk.tools import Tools\n"
        "raise SystemExit(main(['serve', '--port', '1'], Tools, prog='sdk'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(GENERATED)}
    # Both at once: neither depends on the other.
    result, bad = (
        subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for command in (
            [sys.executable, "-c", probe],
            [sys.executable, "-m", "toolgen_sdk", "serve", "--database", "mysql://x"],
        )
    )
    result_err, bad_err = result.communicate(timeout=120)[1], bad.communicate(timeout=120)[1]
    assert result.returncode == 4, result_err
    assert "starlette is not installed" in result_err and "`serve` extra" in result_err
    assert bad.returncode == 2 and "--database must be a sqlite:/// or postgresql:// URL" in bad_err


def test_ctrl_c_is_exit_130_and_sigterm_a_clean_stop(tmp_path: Path) -> None:
    logs = []
    # Both at once, each on a database of its own: neither stop depends on the other.
    stops = ((signal.SIGINT, 130), (signal.SIGTERM, 0))
    servers = [Server(tmp_path, "--database", f"sqlite:///{tmp_path / f'{sent.name}.sqlite'}") for sent, _ in stops]
    try:
        for server in [server.spawn() for server in servers]:
            server.ready()
        for server, (sent, _) in zip(servers, stops, strict=True):
            assert server.process is not None
            server.process.send_signal(sent)
        for server, (_, code) in zip(servers, stops, strict=True):
            assert server.process is not None
            assert server.process.wait(timeout=60) == code, server.log()
            logs.append(server.log())
    finally:
        stop_all(servers)  # once they have stopped, only their clients are left to close
    assert "interrupted; unfinished runs resume at the next start" in logs[0]
    assert all("Traceback" not in log for log in logs), logs


def test_a_port_already_taken_is_exit_4_naming_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(GENERATED)}
        command = [sys.executable, "-m", "toolgen_sdk", "serve", "--port", str(port), "--database", _database(tmp_path)]
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 4, result.stderr
    assert f"could not listen on 127.0.0.1:{port}" in result.stderr


def test_hostile_requests_are_refused_in_json_and_leave_no_run_stuck(tmp_path: Path) -> None:
    # Each of these had been a 500 with a traceback, a run stuck for good in `running` or `awaiting_approval`,
    # a stream that never ended, or a body read whole before it was refused.
    with serving(tmp_path) as server:
        client = server.client
        user = {"role": "user", "content": "hi"}

        def refused(body: bytes, status: int, field: str) -> None:
            answer = client.post("/runs", content=body, headers={"content-type": "application/json"})
            assert (answer.status_code, answer.json()["error"]["field"]) == (status, field), answer.text

        refused(b'{"messages": [{"role": "user", "content": "hi", "x": NaN}]}', 422, "/messages/0/x")
        refused(b'{"messages": [{"role": "user", "content": "\\ud800"}]}', 422, "/messages/0/content")
        for calls in ('"zzz"', "[1]", '[{"id": []}]', '{"a": 1}'):
            body = f'{{"messages": [{json.dumps(user)}, {{"role": "assistant", "tool_calls": {calls}}}]}}'
            answer = client.post("/runs", content=body.encode(), headers={"content-type": "application/json"})
            assert answer.status_code == 422 and answer.json()["error"]["field"].startswith("/messages/1/tool_calls")
        call = {"type": "function", "function": {"name": "run_command", "arguments": '{"program": "ls"}'}}
        twice = {"role": "assistant", "tool_calls": [{**call, "id": "dup"}, {**call, "id": "dup"}]}
        refused(json.dumps({"messages": [user, twice]}).encode(), 422, "/messages/1/tool_calls/1/id")
        too_large = client.post("/runs", content=b" " * 16_000_001, headers={"content-type": "application/json"})
        assert too_large.status_code == 413 and "larger than 16,000,000 bytes" in too_large.text
        for path, method, status in [("/nope", "GET", 404), ("/runs", "OPTIONS", 405), ("/runs", "DELETE", 405)]:
            answer = client.request(method, path)
            assert answer.status_code == status and answer.headers["content-type"] == "application/json", answer.text
        waiting = server.start_run(LIST_FILES)
        server.wait_for(waiting, awaiting)
        head = client.head(f"/runs/{waiting}/events")
        assert head.status_code == 200 and head.headers["content-type"].startswith("text/event-stream")
        assert client.get(f"/runs/{waiting}").status_code == 200  # the connection after a HEAD still answers
        run_id = server.start_run("What's the weather in Paris?")
        server.wait_for(run_id, over)
        for cursor in ("9223372036854775808", "+3", "1_0", "99999999999999999999"):
            answer = client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": cursor})
            assert answer.status_code == 422 and answer.json()["error"]["field"] == "Last-Event-ID", cursor
        last = server.events(run_id)[-1][0]
        # Reconnecting after run_finished is told there is nothing more (EventSource stops on 204).
        assert client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": str(last)}).status_code == 204
        assert server.state(run_id)["status"] == "finished"
        assert "Traceback" not in server.log()
        # SIGTERM with a run still awaiting approval: the process had stayed on, joining DBOS's waiting thread.
        assert server.process is not None
        server.process.terminate()
        assert server.process.wait(timeout=30) == 0
