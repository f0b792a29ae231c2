"""The agent loop runs none of the calls of a stream that ends incomplete, and asks for it again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.projects import REPO_ROOT
from test_stream_repeats_reuse import FILES, end_of

from toolgen.runtime.streams.aggregator import stream_events

pytestmark = pytest.mark.skipif(not FILES, reason="../shared/payloads is absent: no recorded streams to replay")


# ---- the loop: an incomplete stream runs none of its calls, and is asked again ----

LOOP_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "loop"
USER = [{"role": "user", "content": "What's the weather in Paris and Oslo?"}]


def _late_call() -> str:
    """The parallel-calls answer with Oslo's call (header and arguments in one chunk) after the finish_reason:
    taken as a repeat, Paris alone would have run and the stream said complete."""
    chunks = [c for c in (LOOP_FIXTURES / "openai-chat-weather-parallel.sse").read_text().split("\n\n") if c]
    oslo = json.loads(chunks[5].removeprefix("data: "))
    oslo["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = '{"location": "Oslo"}'
    finish = next(i for i, c in enumerate(chunks) if '"finish_reason":"tool_calls"' in c)
    late = [*chunks[:5], chunks[finish], "data: " + json.dumps(oslo), *chunks[finish + 1 :]]
    return "".join(chunk + "\n\n" for chunk in late)


@pytest.fixture(scope="module")
def loop_sdk(source_package: Any) -> Any:
    import importlib

    return source_package, importlib.import_module(f"{source_package.__name__}._runtime")


def _tools(package: Any, ran: list[str]) -> Any:
    tools = package.Tools()

    @tools.get_current_weather.handler
    def weather(args: Any, ctx: Any) -> Any:
        ran.append(args.location)
        return package.GetCurrentWeatherResult(location=args.location, temperature=18, unit="celsius")

    return tools


def test_an_incomplete_stream_runs_none_of_its_calls_and_is_asked_again(loop_sdk: Any) -> None:
    package, rt = loop_sdk
    damaged = _late_call()
    end = end_of(list(stream_events(damaged, "openai-chat")))
    assert end.status == "incomplete" and end.duplicates_ignored == 1
    calls = (LOOP_FIXTURES / "openai-chat-weather-parallel.sse").read_text()
    answer = (LOOP_FIXTURES / "openai-chat-answer.sse").read_text()
    ran: list[str] = []
    events = rt.run_events(USER, rt.ReplayModel([damaged, calls, answer], wire="openai-chat"), _tools(package, ran))
    seen = [event for event in events]
    result = events.result
    # The calls of one batch run at once: in either order.
    assert sorted(ran) == ["Oslo", "Paris, FR"] and result.stop_reason == "finished"
    retried = [dict(e.data) for e in seen if e.type == "error" and dict(e.data).get("retry")]
    assert [(e["type"], e["retry"]) for e in retried] == [("incomplete", 2)]
    # Without retries, the run stops on it: no call runs on what the stream may have lost or reordered.
    ran.clear()
    result = rt.run(
        USER, rt.ReplayModel([damaged], wire="openai-chat"), _tools(package, ran), stream=True, stream_retry=None
    )
    assert ran == [] and result.stop_reason == "error" and "dropped as a repeat" in result.error.message
