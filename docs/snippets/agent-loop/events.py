"""Run events: iterate them, receive them as they happen, send them to a browser, keep statistics across runs."""

import asyncio

from toolgen_sdk import Tools, agent
from toolgen_sdk._runtime import RunStats, TextDeltaEvent, ToolCallFinishedEvent, event_from_json

tools = Tools()
tools.get_current_weather.handler(lambda args, ctx: {"location": args.location, "temperature": 18.0, "unit": "celsius"})
ask = [{"role": "user", "content": "What's the weather in Oslo?"}]


def script() -> agent.ScriptedModel:
    return agent.ScriptedModel(
        [agent.assistant_turn(None, agent.tool_call("get_current_weather", {"location": "Oslo"})), "Sunny, 18 °C."]
    )


# --8<-- [start:iterate]
events = agent.run_events(ask, script(), tools, stream=True)
for event in events:  # one merged stream of typed events, one frozen dataclass per kind
    if isinstance(event, TextDeltaEvent):
        print("text:", event.text)
    elif isinstance(event, ToolCallFinishedEvent):
        print("tool:", event.name, event.status, event.duration_ms is not None)
    else:
        print(event.type)
print(events.result.stop_reason)  # the RunResult, once the events are read
# --8<-- [end:iterate]

# --8<-- [start:json]
stats = RunStats(window=3600)  # per tool and per model, across runs: calls, errors, success rate, p50/p95
seen: list[agent.RunEvent] = []


def on_event(event: agent.RunEvent) -> None:
    seen.append(event)
    stats.add(event)


agent.run(ask, script(), tools, on_event=on_event, conversation_id="c-42")
first = seen[0].to_json()  # the one JSON form SSE, the service's store, the page and the command line use
print({key: first[key] for key in ("version", "type", "conversation_id", "seq", "data")})
assert event_from_json(first) == seen[0]
print(agent.sse_encode(seen[-1]).splitlines()[0])  # text/event-stream for a browser; sse_lines(events) for many
print(stats.snapshot().to_json()["tools"]["get_current_weather"]["success_rate"])
# --8<-- [end:json]
assert all(event.conversation_id == "c-42" and isinstance(event.time, float) for event in seen)
assert seen[0].trace_id is None  # set when tracing is on: a browser view and a trace join up


# --8<-- [start:async]
async def main() -> None:
    # arun awaits async handlers, approvers, hooks and on_event; arun_events is the async iterator.
    result = await agent.arun(ask, script(), tools)
    print("arun:", result.stop_reason, result.text)


asyncio.run(main())
# --8<-- [end:async]
