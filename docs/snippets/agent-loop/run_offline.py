"""Run the agent loop offline: a scripted model, a bound handler, the result."""

import os

from toolgen_sdk import GetCurrentWeatherArgs, GetCurrentWeatherResult, ToolContext, Tools, agent

# --8<-- [start:run]
tools = Tools()


@tools.get_current_weather.handler
def weather(args: GetCurrentWeatherArgs, ctx: ToolContext) -> GetCurrentWeatherResult:
    return GetCurrentWeatherResult(location=args.location, temperature=18.0, unit="celsius")


# No LLM, no network: the model answers from a script, turn by turn.
model = agent.ScriptedModel(
    [
        agent.assistant_turn(
            None,
            agent.tool_call("get_current_weather", {"location": "Paris"}),
            agent.tool_call("get_current_weather", {"location": "Oslo"}),
        ),
        "Paris and Oslo are both at 18 °C.",
    ]
)
messages = [{"role": "user", "content": "What's the weather in Paris and Oslo?"}]
result = agent.run(messages, model, tools, max_steps=8, max_tool_calls=20)

print(result.stop_reason, "-", result.text)
print([message["role"] for message in result.messages])
print(result.metrics.to_json()["tools"]["get_current_weather"]["calls"], "calls")
# --8<-- [end:run]
assert result.stop_reason == "finished"
assert result.text == "Paris and Oslo are both at 18 °C."
assert result.steps == 2
assert [call.status for call in result.calls] == ["ok", "ok"]

# --8<-- [start:options]
careful = agent.RunOptions(max_steps=4, approve=lambda request: agent.Approval.deny("read-only"))
agent.run(messages, agent.ScriptedModel(["Sunny."]), tools, careful)  # one set of settings for many runs
agent.run(messages, agent.ScriptedModel(["Sunny."]), tools, careful, stream=True)  # keywords override its fields
# --8<-- [end:options]

try:
    agent.run(messages, agent.ScriptedModel(["Sunny."]), tools, max_stepz=4)  # type: ignore[call-arg]
except TypeError as error:
    assert "max_stepz" in str(error)
else:
    raise AssertionError("an unknown setting is a TypeError")

# --8<-- [start:http]
model = agent.HTTPModel(
    "https://api.openai.com/v1", "gpt-4o-mini", wire="openai-chat", api_key=os.environ.get("OPENAI_API_KEY")
)
# --8<-- [end:http]
model.close()  # nothing was sent: a client connects on its first call
