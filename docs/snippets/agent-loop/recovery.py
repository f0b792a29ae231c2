"""Recovery: a stream that breaks off is asked again, a context-length error lets the budget trim, a tool that
fails does not stop the run, and a deadline or a cancel ends it within about a second."""

import json
import threading
import time

from toolgen_sdk import Tools, agent
from toolgen_sdk._runtime import ProviderError

tools = Tools()
ask = [{"role": "user", "content": "What's the weather in Oslo?"}]


def chunk(delta: dict, finish: str | None = None) -> str:
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n"


# --8<-- [start:stream-retry]
# Two recorded OpenAI Chat streams: the first breaks off mid-answer, the second is whole.
cut = chunk({"role": "assistant", "content": "Sunny and"})
whole = cut + chunk({"content": " 18 °C."}, "stop") + "data: [DONE]\n\n"

result = agent.run(ask, agent.ReplayModel([cut, whole], wire="openai-chat"), tools, stream=True)
print(result.stop_reason, result.text, result.metrics.model_retries)  # asked again (StreamRetry's default)

result = agent.run(ask, agent.ReplayModel([cut, whole], wire="openai-chat"), tools, stream=True, stream_retry=None)
print(result.stop_reason, result.messages[-1])  # never retried: what arrived is kept, marked incomplete
# --8<-- [end:stream-retry]
assert result.messages[-1]["extras"]["toolgen"]["incomplete"] is True

# --8<-- [start:overflow]
too_long = ProviderError("openai-chat", "maximum context length exceeded", code="context_length_exceeded", status=400)
history = [*ask, {"role": "assistant", "content": "Sunny."}, {"role": "user", "content": "And tomorrow?"}]
trim = agent.keep_last_turns(1, above_input_tokens=100_000)  # trims only past 100k tokens, or on overflow
result = agent.run(history, agent.ScriptedModel([too_long, "Rain."]), tools, budget=trim)
print(result.stop_reason, result.text)  # the budget was called with BudgetInfo.overflow set, then the call made again
print(agent.run(history, agent.ScriptedModel([too_long, "Rain."]), tools).stop_reason)  # no budget: the error stops it
# --8<-- [end:overflow]


# --8<-- [start:tool-failure]
@tools.get_current_weather.handler
def broken(args, ctx):
    raise ConnectionError("the weather service is down")


script = [agent.assistant_turn(None, agent.tool_call("get_current_weather", {"location": "Oslo"})), "Sorry, no data."]
result = agent.run(ask, agent.ScriptedModel(script), tools)
print(
    result.stop_reason, result.calls[0].status, result.calls[0].error_kind
)  # the model read the error, the run went on
# --8<-- [end:tool-failure]
assert result.messages[2]["is_error"] is True


# --8<-- [start:deadline]
@tools.get_current_weather.handler
def slow(args, ctx):
    time.sleep(5)  # a sync handler Python cannot stop
    return {"location": args.location, "temperature": 18.0, "unit": "celsius"}


started = time.monotonic()
result = agent.run(ask, agent.ScriptedModel(script), tools, deadline=0.5)
print(result.stop_reason, result.calls[0].status)  # the call got half a second of grace, then was abandoned
assert time.monotonic() - started < 3

cancel = threading.Event()  # or asyncio.Event, or anything with is_set()
threading.Timer(0.2, cancel.set).start()
print(agent.run(ask, agent.ScriptedModel(script), tools, cancel=cancel).stop_reason)
# --8<-- [end:deadline]
