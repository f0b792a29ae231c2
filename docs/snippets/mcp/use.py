"""Use: another server's tools in your own loop, called like local ones; the connection called directly."""

import os
import sys

from toolgen_sdk import Tools, agent
from toolgen_sdk._runtime import mcp_tools

server = [sys.executable, "-m", "toolgen_sdk", "mcp"]  # a command (stdio), or a URL (streamable HTTP)
env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # where the server's package is importable

# --8<-- [start:use]
tools = Tools()
model = agent.ScriptedModel(
    [
        agent.assistant_turn(
            None,
            agent.tool_call("remote_get_current_weather", {"location": "Oslo"}),
            agent.tool_call("remote_get_current_weather", {"location": 5}),  # checked here, never sent
        ),
        "18 °C in Oslo.",
    ]
)
messages = [{"role": "user", "content": "What's the weather in Oslo?"}]
# names=: only these tools (default: every tool the server has a handler for); prefix=: added under new names.
with mcp_tools(tools, server, env=env, names=["get_current_weather"], prefix="remote_") as connection:
    result = agent.run(messages, model, tools)  # remote tools are called like local ones
    for call in result.calls:
        print(call.name, call.status, call.content)

    weather = next(d for d in connection.definitions if d["name"] == "get_current_weather")  # canonical definitions
    print(weather["title"], weather["annotations"], weather["timeout"])
    print(connection.call("get_current_weather", {"location": "Paris"}))
# --8<-- [end:use]
assert [call.status for call in result.calls] == ["ok", "error"]
assert result.stop_reason == "finished"
