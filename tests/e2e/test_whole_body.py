"""Servers that ignore `stream: true`: a local server answers every stream request with the whole JSON body, on
each wire with an HTTP route, and run(), arun(), `python -m <package> --stream` and the served run still run the
tool calls and print the answer.

The bodies are each wire's own encoding of a tool-call turn and an answer turn, pretty-printed over many lines and
written a few bytes at a time as `application/json`, as an OpenAI-compatible server that ignores `stream` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, Received, queue
from support.projects import SOURCE_PACKAGE

ANSWER = "It is sunny in Paris."
PROMPT = "What's the weather in Paris?"
# The path prefix each wire's official SDK puts in its base URL.
PREFIX = {"openai-chat": "/v1", "mistral": "/v1", "openai-responses": "/v1", "gemini": "/v1beta"}


@pytest.fixture(scope="module")
def sdk(source_package: ModuleType) -> SimpleNamespace:
    """The package built from the repo's own project, and its runtime."""
    return SimpleNamespace(
        package=source_package, runtime=importlib.import_module(f"{source_package.__name__}._runtime")
    )


ROUTED = ["anthropic", "bedrock-converse", "cohere", "gemini", "mistral", "ollama", "openai-chat", "openai-responses"]


def test_every_wire_with_a_route_is_exercised(sdk: SimpleNamespace) -> None:
    assert sorted(row.name for row in sdk.runtime.ROWS if row.route is not None) == ROUTED


def _bodies(sdk: SimpleNamespace, wire: str) -> tuple[bytes, bytes]:
    """A turn calling get_current_weather for Paris, then the answer: whole bodies of `wire`, pretty-printed."""
    Response = sdk.runtime.Response
    arguments = json.dumps({"location": "Paris"})
    call = Response(
        message={
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_current_weather", "arguments": arguments},
                }
            ],
        },
        finish={"reason": "tool_calls", "raw": None},
        model="m",
        id="r1",
        usage={"input_tokens": 12, "output_tokens": 8},
    )
    answer = Response(message={"role": "assistant", "content": ANSWER}, finish={"reason": "stop", "raw": None}, id="r2")
    encode = sdk.runtime.encode_response
    return tuple(json.dumps(encode(turn, wire), indent=2).encode() for turn in (call, answer))  # type: ignore[return-value]


def _whole(body: bytes) -> Answer:
    return Answer(body, content_type="application/json", chunk=7)


@pytest.fixture
def server(sdk: SimpleNamespace, wire: str) -> Iterator[LocalServer]:
    """A server answering the two requests of a run with the whole bodies of `wire`, whatever they ask."""
    local = LocalServer(queue(*(_whole(body) for body in _bodies(sdk, wire))))
    try:
        yield local
    finally:
        local.close()


def _asked_to_stream(received: Received, wire: str) -> bool:
    body = json.loads(received.body)
    if wire == "gemini":
        return ":streamGenerateContent" in received.path
    if wire == "bedrock-converse":
        return received.path.endswith("/converse-stream")
    return body.get("stream") is True


def _tools(sdk: SimpleNamespace) -> Any:
    tools = sdk.package.Tools()
    tools.get_current_weather.handler(
        lambda args, ctx: {"location": args.location, "temperature": 18.0, "unit": args.unit or "celsius"}
    )
    return tools


@pytest.mark.parametrize("mode", ["run", "arun"])
@pytest.mark.parametrize("wire", ROUTED)
def test_run_and_arun_run_the_calls_of_a_whole_body_answer(
    sdk: SimpleNamespace, server: LocalServer, wire: str, mode: str
) -> None:
    model = sdk.runtime.HTTPModel(
        server.base + PREFIX.get(wire, ""),
        "m",
        wire=wire,
        api_key="sk-test",
        retry=sdk.runtime.RetryPolicy(max_retries=0),
    )
    events: list[Any] = []
    user = [{"role": "user", "content": PROMPT}]
    try:
        if mode == "run":
            result = sdk.runtime.run(user, model, _tools(sdk), stream=True, on_event=events.append)
        else:
            result = asyncio.run(sdk.runtime.arun(user, model, _tools(sdk), stream=True, on_event=events.append))
    finally:
        model.close()
    assert result.stop_reason == "finished", result.error
    assert result.text == ANSWER
    assert [call.status for call in result.calls] == ["ok"]
    assert json.loads(result.calls[0].content)["location"] == "Paris"
    first, second = server.seen
    assert _asked_to_stream(first, wire) and _asked_to_stream(second, wire)
    # The call, as the model sent it, went back with its result.
    assistant = result.messages[1]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["get_current_weather"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"location": "Paris"}
    assert result.messages[2]["role"] == "tool"
    streamed = "".join(e.data["text"] for e in events if e.type == "text_delta")
    assert streamed == ANSWER
    assert not [e for e in events if e.type == "error"]


@pytest.mark.parametrize("wire", ROUTED)
def test_python_m_package_stream_prints_the_answer_of_whole_body_answers(
    sdk: SimpleNamespace, server: LocalServer, source_build: Path, wire: str
) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "WHOLE_TEST_KEY": "sk-cli"}
    args = ["--base-url", server.base + PREFIX.get(wire, ""), "--model", "m", "--wire", wire]
    result = subprocess.run(
        [sys.executable, "-m", SOURCE_PACKAGE, *args, "--api-key-env", "WHOLE_TEST_KEY", "--stream", PROMPT],
        cwd=source_build,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    first, second = server.seen
    assert _asked_to_stream(first, wire)
    sent = json.loads(second.body)
    assert "Paris" in json.dumps(sent) and "18" in json.dumps(sent), sent


# ---- the served run ----


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _serving(source_build: Path, tmp_path: Path, *args: str) -> Iterator[Any]:
    httpx = pytest.importorskip("httpx")
    for module in ("dbos", "starlette", "uvicorn"):
        pytest.importorskip(module, reason=f"the serve extra ({module}) is not installed")
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(source_build),
        "PYTHONDONTWRITEBYTECODE": "1",
        "WHOLE_TEST_KEY": "sk",
        "TOOLGEN_SERVE_TOKEN": "whole-body-test-token",
    }
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", SOURCE_PACKAGE, "serve", "--port", str(port), *args]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=log, stderr=log)
    client = httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        timeout=30,
        headers={"Authorization": "Bearer whole-body-test-token"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "serve.log").read_text(errors="replace")
            with contextlib.suppress(httpx.HTTPError):
                if client.get("/").status_code == 200:
                    break
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.1)
        yield client
    finally:
        client.close()
        # SIGKILL: the test checks the run, not how the service stops, and a clean stop takes most of a second.
        process.kill()
        process.wait(timeout=30)
        log.close()


@pytest.mark.parametrize("wire", ROUTED)
def test_the_served_run_runs_the_calls_of_whole_body_answers(
    sdk: SimpleNamespace, server: LocalServer, source_build: Path, tmp_path: Path, wire: str
) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    endpoint = ["--base-url", server.base + PREFIX.get(wire, ""), "--model", "m", "--wire", wire]
    endpoint += ["--api-key-env", "WHOLE_TEST_KEY"]
    with _serving(source_build, tmp_path, "--database", database, *endpoint) as client:
        started = client.post("/runs", json={"messages": [{"role": "user", "content": PROMPT}]})
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]
        deadline = time.monotonic() + 60
        state = client.get(f"/runs/{run_id}").json()
        while state["status"] not in ("finished", "stopped", "error"):
            assert time.monotonic() < deadline, state
            time.sleep(0.1)
            state = client.get(f"/runs/{run_id}").json()
    assert state["status"] == "finished", state
    messages = state["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"], messages
    assert [c["function"]["name"] for c in messages[1]["tool_calls"]] == ["get_current_weather"]
    assert "Paris" in str(messages[2]["content"])
    assert messages[3]["content"] == ANSWER
    assert all(_asked_to_stream(received, wire) for received in server.seen)
