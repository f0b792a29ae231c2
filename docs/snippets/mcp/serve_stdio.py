"""Serve: the official MCP client starts `python -m toolgen_sdk mcp`, lists the tools and calls one over stdio."""

import os
import sys

import anyio
import mcp

# --8<-- [start:client]
server = mcp.StdioServerParameters(
    command=sys.executable,
    args=["-m", "toolgen_sdk", "mcp"],  # the demo's handlers (demo: true); yours with --tools myapp.tools:build
    env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},  # where toolgen_sdk is importable
)


async def main() -> None:
    async with mcp.Client(server) as client:
        listed = await client.list_tools()
        weather = next(tool for tool in listed.tools if tool.name == "get_current_weather")
        print(weather.title, "|", weather.annotations.read_only_hint, "|", weather.meta)

        result = await client.call_tool("get_current_weather", {"location": "Paris"})
        print(result.is_error, result.structured_content)

        refused = await client.call_tool("get_current_weather", {"location": 3})
        print(refused.is_error, refused.content[0].text)


anyio.run(main)
# --8<-- [end:client]
