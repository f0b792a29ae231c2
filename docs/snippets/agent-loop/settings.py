"""Run settings per wire: portable settings in each wire's own field, the wire's own by name, the rest refused."""

from toolgen_sdk import Tools, agent
from toolgen_sdk._runtime import encode_request

tools = Tools()
ask = [{"role": "user", "content": "What's the weather in Oslo?"}]
# An Anthropic Messages answer, replayed: the run's requests are kept, as a real client would send them.
answer = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Sunny."}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 12, "output_tokens": 3},
}

# --8<-- [start:settings]
model = agent.ReplayModel([answer], wire="anthropic")
settings = {"max_tokens": 256, "reasoning_effort": "high", "stop": ["\n\n"], "service_tier": "auto"}
agent.run(ask, model, tools, settings=settings)
body = encode_request(model.requests[0], "anthropic")
print(body["max_tokens"], body["output_config"], body["stop_sequences"], body["service_tier"])

try:
    agent.run(ask, agent.ReplayModel([answer], wire="anthropic"), tools, settings={"top_k": 5})
except agent.UnsupportedSettings as error:  # raised before any request, naming the setting, the wire and why
    print(error.problems[0].setting, error.wire)

events: list[agent.RunEvent] = []
result = agent.run(
    ask,
    agent.ReplayModel([answer], wire="anthropic"),
    tools,
    settings={"top_k": 5},
    on_unsupported="note",
    on_event=events.append,
)
print(result.stop_reason, [event.data["setting"] for event in events if event.type == "note"])
# --8<-- [end:settings]
assert result.stop_reason == "finished"
