"""The agent loop offline: its events as SSE, recorded bodies replayed, a cut tool call, and no httpx needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support.projects import REPO_ROOT, SOURCE_PACKAGE
from test_loop_calls import MODES, USER, call, drive, no_unanswered_calls, weather_tools

# ---- events and SSE ----


def parse_sse(sdk: SimpleNamespace, text: str) -> list[tuple[str | None, bytes]]:
    decoder = sdk.framing.SSEDecoder()
    frames = decoder.feed(text.encode("utf-8")) + decoder.close()
    return [(frame[0], frame[1]) for frame in frames]


def test_the_event_stream_of_a_run_as_sse_parses_back(sdk: SimpleNamespace) -> None:
    tricky = 'Line one\nline two\r\n"quoted" \u2028 data: not a field\n\nend'
    turn = sdk.runtime.assistant_turn(None, call(sdk, "get_current_weather", {"location": "Oslo"}, "w"))
    events = sdk.runtime.run_events(
        USER, sdk.runtime.ScriptedModel([turn, tricky]), weather_tools(sdk), stream=True, conversation_id="c-sse"
    )
    collected = list(events)
    text = "".join(sdk.runtime.sse_lines(collected))
    frames = parse_sse(sdk, text)
    assert [name for name, _ in frames] == [event.type for event in collected]
    payloads = [json.loads(data) for _, data in frames]
    assert payloads == [event.to_json() for event in collected]
    assert {p["conversation_id"] for p in payloads} == {"c-sse"}
    assert [p["seq"] for p in payloads] == list(range(1, len(payloads) + 1))
    deltas = "".join(p["data"]["text"] for p in payloads if p["type"] == "text_delta")
    assert deltas == tricky and events.result.text == tricky
    types = [p["type"] for p in payloads]
    assert types[0] == "run_started" and types[-2:] == ["final_message", "run_finished"]
    finished = next(p["data"] for p in payloads if p["type"] == "tool_call_finished")
    assert finished["status"] == "ok" and finished["duration_ms"] >= 0 and finished["name"] == "get_current_weather"
    metrics = payloads[-1]["data"]["metrics"]
    assert metrics["tools"]["get_current_weather"]["success_rate"] == 1.0
    for line in text.split("\n"):
        assert line == "" or line.startswith(("event: ", "id: ", "data: ")), line


def test_sse_encoding_never_lets_a_line_break_through(sdk: SimpleNamespace) -> None:
    event = sdk.runtime.ErrorEvent(conversation_id="c\n1", seq=3, message="a\rb\nc", code=b"bytes")
    text = sdk.runtime.sse_encode(event)
    assert text.count("\n\n") == 1 and text.endswith("\n\n") and "\r" not in text
    (name, data), *_ = parse_sse(sdk, text + sdk.runtime.sse_comment("keep-alive\nping"))
    assert name == "error" and json.loads(data)["data"]["message"] == "a\rb\nc"


def test_sse_encoding_of_a_lone_surrogate_is_text_utf8_can_carry(sdk: SimpleNamespace) -> None:
    # A model may write "\ud800" in its text or a call id: the event stream to a browser must still encode.
    event = sdk.runtime.ToolCallDeltaEvent(
        conversation_id="c1", seq=1, index=0, arguments="half \ud800 a pair", id="call_\udfff"
    )
    text = sdk.runtime.sse_encode(event)
    text.encode("utf-8")
    (name, data), *_ = parse_sse(sdk, text)
    assert json.loads(data)["data"] == {
        "index": 0,
        "arguments": "half \ud800 a pair",
        "id": "call_\udfff",
        "name": None,
    }


# ---- clients offline ----


def test_replay_model_reads_recorded_bodies_whole_and_streamed(sdk: SimpleNamespace) -> None:
    stream = (REPO_ROOT / "tests" / "fixtures" / "loop" / "openai-chat-weather-parallel.sse").read_bytes()
    answer = (REPO_ROOT / "tests" / "fixtures" / "loop" / "openai-chat-answer.sse").read_text(encoding="utf-8")
    for streaming in (False, True):
        model = sdk.runtime.ReplayModel([stream, answer], wire="openai-chat")
        result = sdk.runtime.run(USER, model, weather_tools(sdk), stream=streaming)
        assert result.stop_reason == "finished" and result.text == "It is sunny in Paris\n(18 °C) and Oslo\u2028too."
        assert [r.call_id for r in result.calls] == ["call_paris", "call_oslo"]
        assert result.metrics.usage["input_tokens"] == 200
    whole = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
    assert sdk.runtime.run(USER, sdk.runtime.ReplayModel([whole]), weather_tools(sdk), stream=True).text == "hi"
    exhausted = sdk.runtime.run(USER, sdk.runtime.ReplayModel([]), weather_tools(sdk))
    assert exhausted.stop_reason == "error" and exhausted.error.type == "script_exhausted"


def counting_weather_tools(sdk: SimpleNamespace, ran: list[Any]) -> Any:
    tools = sdk.package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        ran.append(args)
        return sdk.package.GetCurrentWeatherResult(location=args.location, temperature=21.5, unit="celsius")

    return tools


def anthropic_call_without_its_block_stop() -> str:
    """A whole Anthropic answer (stop_reason tool_use, message_stop) save the tool block's content_block_stop."""
    events = [
        {"type": "message_start", "message": {"id": "msg_cut", "model": "claude", "usage": {"input_tokens": 9}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_cut", "name": "get_current_weather", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"loca'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("recording", ["openai cut inside the second call", "anthropic block never stopped"])
def test_a_cut_tool_call_ends_the_run_with_an_error_and_no_handler_runs(
    sdk: SimpleNamespace, mode: str, streaming: bool, recording: str
) -> None:
    if recording.startswith("openai"):
        whole = (REPO_ROOT / "tests" / "fixtures" / "loop" / "openai-chat-weather-parallel.sse").read_text(
            encoding="utf-8"
        )
        body, wire = whole[: whole.index('"Oslo\\"')], "openai-chat"
    else:
        body, wire = anthropic_call_without_its_block_stop(), "anthropic"
    ran: list[Any] = []
    model = sdk.runtime.ReplayModel([body, body, "never asked for"], wire=wire)
    result = drive(sdk, mode, USER, model, counting_weather_tools(sdk, ran), stream=streaming)
    # Not even the call that did close runs: the answer it came in is broken. It is asked for once more (the
    # default StreamRetry), comes back cut again, and the run stops there.
    assert ran == [] and len(model.requests) == 2 and result.metrics.model_retries == 1
    assert result.stop_reason == "error" and result.metrics.tool_calls == 0
    assert "cut" in str(result.error.message)
    assert no_unanswered_calls(sdk, result.messages)
    assert all(not m.get("tool_calls") for m in result.messages)
    once = sdk.runtime.ReplayModel([body, "never asked for"], wire=wire)
    drive(sdk, mode, USER, once, counting_weather_tools(sdk, ran), stream=streaming, stream_retry=None)
    assert ran == [] and len(once.requests) == 1


def test_the_package_imports_without_httpx_and_says_what_the_http_client_needs(source_build: Path) -> None:
    modules = ["loop.sync_driver", "loop.async_driver", "clients.scripted", "clients.http", "app.main"]
    probe = (
        "import importlib, sys\n"
        "sys.modules['httpx'] = None\n"
        f"for name in {modules!r}:\n"
        f"    importlib.import_module('{SOURCE_PACKAGE}._runtime.' + name)\n"
        f"import {SOURCE_PACKAGE}.__main__, {SOURCE_PACKAGE}.agent\n"
        "try:\n"
        f"    {SOURCE_PACKAGE}.agent.HTTPModel('http://127.0.0.1:9', 'm')\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=source_build, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "pip install httpx" in result.stdout
