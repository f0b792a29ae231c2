"""The service's API against hostile input: client text echoed safely, decisions taken only as they will be
recorded, bounded ids, streams that end with their run, ports checked, the logout behind the boundary."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.projects import SOURCE_PACKAGE
from support.serve_helpers import LIST_FILES, SourceServer, awaiting, over, stop_all


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, source_build: Path) -> Iterator[SourceServer]:
    """One server of this checkout's runtime for the module: each test starts runs of its own."""
    started = SourceServer(source_build, tmp_path_factory.mktemp("truth")).start()
    try:
        yield started
    finally:
        stop_all([started])


def _error(answer: httpx.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    return error


def _awaiting(server: SourceServer) -> tuple[str, dict[str, Any]]:
    """A new run waiting for a decision on its run_command call: its id and that call."""
    run_id = server.start_run(LIST_FILES)
    [call] = server.wait_for(run_id, awaiting)["pending"]
    return run_id, call


def _decide(server: SourceServer, run_id: str, call_id: str, body: bytes | dict[str, Any]) -> httpx.Response:
    path = f"/runs/{run_id}/approvals/{call_id}"
    if isinstance(body, bytes):
        return server.client.post(path, content=body)
    return server.client.post(path, json=body)


SURROGATE = "a string holds a lone surrogate (\\ud800-\\udfff), which no UTF-8 text can"


def test_a_lone_surrogate_in_a_key_is_422_at_its_escaped_pointer_with_no_traceback(server: SourceServer) -> None:
    # The JSON escape of a lone surrogate as a key: the answer writes it as the escape (UTF-8 cannot carry it).
    anonymous = httpx.post(
        f"{server.url}/session", content=b'{"\\ud800":1}', headers={"Content-Type": "application/json"}
    )
    assert _error(anonymous, 422) == {"field": "/\\ud800", "message": SURROGATE}
    run = server.client.post("/runs", content=b'{"messages":[{"role":"user","content":"a","\\udc00":1}]}')
    assert _error(run, 422) == {"field": "/messages/0/\\udc00", "message": SURROGATE}
    decision = server.client.post("/runs/x/approvals/y", content=b'{"\\udfff":1}')
    assert _error(decision, 422) == {"field": "/\\udfff", "message": SURROGATE}
    # Repeated, the key is found twice before its surrogate is looked at: the same escape.
    twice = server.client.post("/runs", content=b'{"\\ud800":1,"\\ud800":2}')
    assert _error(twice, 422)["field"] == "/\\ud800"
    # A key holding `/` is one reference token (RFC 6901), and a long one is not echoed whole.
    odd = server.client.post("/runs", json={"messages": [{"role": "user", "content": "a"}], "a/b" + "x" * 5000: 1})
    error = _error(odd, 422)
    assert error["field"] == "/a~1b" + "x" * 5000
    assert error["message"] == f"unknown field {'a/b' + 'x' * 77!r}... (5,003 characters)"
    assert "Traceback" not in server.log()


def test_edit_arguments_given_as_json_text_are_read_as_strictly_as_the_body(server: SourceServer) -> None:
    run_id, call = _awaiting(server)
    refused = {
        '{"program":"ls","args":["-l"],"x":NaN}': (
            "/arguments/x",
            "the value at /arguments/x is NaN, which JSON does not allow (write null or a number)",
        ),
        '{"program":"ls","args":["-l"],"args":["-a"]}': (
            "/arguments/args",
            "the value at /arguments/args appears more than once in one object (JSON readers disagree on which "
            "value counts)",
        ),
        '{"program":"ls","args":["\\ud800"]}': ("/arguments/args/0", SURROGATE),
        '{"program":': ("/arguments", "arguments is not valid JSON: Expecting value at line 1 column 12"),
        "[1]": ("/arguments", "an edit needs arguments: a JSON object"),
    }
    for text, (field, message) in refused.items():
        answer = _decide(server, run_id, call["id"], {"decision": "edit", "arguments": text})
        assert _error(answer, 422) == {"field": field, "message": message}, text
    # None of them was taken: the call still waits, and the run reads back.
    assert server.wait_for(run_id, awaiting)["pending"] == [call]
    taken = _decide(server, run_id, call["id"], {"decision": "edit", "arguments": '{"program":"ls","args":["-a"]}'})
    assert taken.status_code == 200, taken.text
    state = server.wait_for(run_id, over)
    assert state["status"] == "finished"
    [asked] = [c for m in state["messages"] for c in m.get("tool_calls") or []]
    assert asked["function"]["arguments"] == '{"program":"ls","args":["-a"]}'


def test_approve_or_deny_with_arguments_is_422_and_the_call_still_waits(server: SourceServer) -> None:
    run_id, call = _awaiting(server)
    for decision in ("approve", "deny"):
        body = {"decision": decision, "arguments": {"program": "cat", "args": ["notes.txt"]}}
        answer = _decide(server, run_id, call["id"], body)
        assert _error(answer, 422) == {
            "field": "/arguments",
            "message": f"only an edit takes arguments, not {decision!r}",
        }
    assert server.state(run_id)["pending"] == [call]
    server.client.post(f"/runs/{run_id}/cancel")


def test_a_decision_after_a_cancel_is_409_not_a_200_the_run_overrides(server: SourceServer) -> None:
    run_id, call = _awaiting(server)
    assert server.client.post(f"/runs/{run_id}/cancel").status_code == 202
    answer = _decide(server, run_id, call["id"], {"decision": "approve"})
    # The run may have ended already by the time the decision comes: either way, no 200 it then overrides.
    assert _error(answer, 409) in (
        {"field": "/id", "message": f"run {run_id!r} is being cancelled: it takes no more decisions"},
        {"field": "/id", "message": f"run {run_id!r} has ended (stopped)"},
    )
    state = server.wait_for(run_id, over)
    assert state["status"] == "stopped"
    [tool] = [m for m in state["messages"] if m["role"] == "tool"]
    assert "the run was cancelled before a decision" in tool["content"]
    again = _decide(server, run_id, call["id"], {"decision": "approve"})
    assert _error(again, 409) == {"field": "/id", "message": f"run {run_id!r} has ended (stopped)"}


def test_conversation_ids_and_client_call_ids_are_bounded(server: SourceServer) -> None:
    user = {"role": "user", "content": "what is the weather in Paris"}
    long = server.client.post("/runs", json={"messages": [user], "conversation_id": "c" * 257})
    assert _error(long, 422) == {
        "field": "/conversation_id",
        "message": "conversation_id must be a non-empty string of at most 256 characters",
    }
    run_id = server.start_run(user["content"], conversation_id="c" * 256)
    assert server.state(run_id)["conversation_id"] == "c" * 256
    call = {"id": "x" * 257, "type": "function", "function": {"name": "get_current_weather", "arguments": "{}"}}
    turn = {"role": "assistant", "content": None, "tool_calls": [call]}
    answered = {"role": "tool", "tool_call_id": call["id"], "content": "sunny"}
    too_long = server.client.post("/runs", json={"messages": [user, turn, answered]})
    assert _error(too_long, 422) == {
        "field": "/messages/1/tool_calls/0/id",
        "message": "a tool call needs an id: a non-empty string of at most 256 characters",
    }


def test_a_stream_opened_past_the_last_event_of_a_live_run_ends_when_the_run_does(server: SourceServer) -> None:
    run_id, call = _awaiting(server)
    seen: list[str] = []
    ended = threading.Event()

    def read() -> None:
        headers = {"Last-Event-ID": "1000000"}
        with server.client.stream("GET", f"/runs/{run_id}/events", headers=headers) as answer:
            assert answer.status_code == 200
            seen.extend(line for line in answer.iter_lines() if line)
        ended.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(1)  # the stream is open, waiting, before the run goes on
    assert not ended.is_set()
    assert _decide(server, run_id, call["id"], {"decision": "approve"}).status_code == 200
    assert server.wait_for(run_id, over)["status"] == "finished"
    # Within a poll or two of the end, as a new request with that cursor is answered 204 at once.
    assert ended.wait(30), "the stream outlived its run"
    assert seen == []  # every event is at or before the cursor the reader gave
    after = server.client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "1000000"})
    assert after.status_code == 204


def test_a_bad_after_query_is_named_as_after_and_a_bad_header_as_the_header(server: SourceServer) -> None:
    run_id = server.start_run("what is the weather in Paris")
    by_query = server.client.get(f"/runs/{run_id}/events?after=x1")
    assert _error(by_query, 422) == {"field": "after", "message": "after must be a whole number below 2**63"}
    by_header = server.client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "-1"})
    assert _error(by_header, 422) == {
        "field": "Last-Event-ID",
        "message": "Last-Event-ID must be a whole number below 2**63",
    }


def test_a_405_says_in_allow_which_methods_the_route_takes(server: SourceServer) -> None:
    answer = server.client.put("/session")
    assert _error(answer, 405) == {"field": "", "message": "Method Not Allowed"}
    assert set(answer.headers["allow"].split(", ")) == {"POST", "DELETE"}
    answer = server.client.delete("/runs")
    assert _error(answer, 405) == {"field": "", "message": "Method Not Allowed"}
    assert set(answer.headers["allow"].split(", ")) == {"GET", "HEAD", "POST"}
    answer = server.client.delete("/runs/x/events")
    assert answer.status_code == 405
    assert set(answer.headers["allow"].split(", ")) == {"GET", "HEAD"}


def test_a_logout_carrying_only_the_cookie_needs_an_origin(server: SourceServer) -> None:
    with httpx.Client(base_url=server.url, headers={"Content-Type": "application/json"}) as page:
        assert page.post("/session", json={"token": server.token}).status_code == 204
        refused = page.delete("/session")
        assert _error(refused, 403) == {
            "field": "Origin",
            "message": "a DELETE without Origin needs `Authorization: Bearer TOKEN`: a cookie alone is not enough",
        }
        assert "set-cookie" not in refused.headers
        assert page.get("/runs").status_code == 200  # still logged in
        assert page.delete("/session", headers={"Origin": server.url}).status_code == 204
        assert page.get("/runs").status_code == 401
    # Without the cookie there is nothing to log out, and nothing to refuse.
    assert httpx.delete(f"{server.url}/session").status_code == 204


@pytest.mark.parametrize("port", ["99999", "-1", "0", "65536", "8x"])
def test_a_port_out_of_range_is_a_usage_error(port: str, source_build: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", SOURCE_PACKAGE, "serve", "--database", f"sqlite:///{tmp_path / 'r.sqlite'}"]
    done = subprocess.run(
        [*command, f"--port={port}"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(source_build)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"argument --port: {port!r} is not a port: a whole number from 1 to 65535" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "head",
    [
        "GET /info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
        "POST /runs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: -1\r\nConnection: close\r\n\r\n",
    ],
    ids=["two Host headers", "a negative Content-Length"],
)
def test_a_request_http_itself_refuses_is_answered_in_the_error_shape(server: SourceServer, head: str) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(head.format(port=server.port).encode())
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 400 Bad Request", answer
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in headers.lower()
    assert json.loads(body) == {"error": {"field": "", "message": "the request is not valid HTTP/1.1"}}
