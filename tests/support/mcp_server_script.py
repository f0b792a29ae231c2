"""An MCP server written with the official SDK's own low-level server API, for the tests of toolgen's client.

`python mcp_server_script.py MODE`: `good` serves working tools (and some that fail in the ways servers do),
`not-object` lists a tool whose input schema is a string, `bad-meta` one whose _meta.timeout is not a number,
`endless-list` pages its tools list with a cursor that never ends.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OBJECT = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
TOOLS = {
    "add": {
        "name": "add",
        "title": "Add two numbers",
        "description": "a + b",
        "inputSchema": OBJECT,
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
        "annotations": {"readOnlyHint": True},
    },
    "shout": {
        "name": "shout",
        "description": "The text in capitals, straight to the user.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "_meta": {"returnDirect": True, "timeout": 5, "owner": "tests"},
    },
    "fail": {"name": "fail", "inputSchema": {"type": "object"}},
    "die": {"name": "die", "inputSchema": {"type": "object"}},
    "retire": {"name": "retire", "description": "Remove `add` from this server.", "inputSchema": {"type": "object"}},
    "slow": {"name": "slow", "inputSchema": {"type": "object"}, "_meta": {"timeout": 1}},
}
MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
if MODE == "not-object":
    TOOLS["text_only"] = {"name": "text_only", "inputSchema": {"type": "string"}}
if MODE == "bad-meta":
    TOOLS["late"] = {"name": "late", "inputSchema": {"type": "object"}, "_meta": {"timeout": "soon"}}


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    listed = [types.Tool.model_validate(tool) for tool in TOOLS.values()]
    if MODE == "endless-list":
        return types.ListToolsResult(tools=listed[:1], next_cursor="again")
    return types.ListToolsResult(tools=listed)


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    name, arguments = params.name, params.arguments or {}
    if name not in TOOLS:
        raise ValueError(f"unknown tool: {name}")
    if name == "add":
        total = arguments["a"] + arguments["b"]
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=str(total))], structured_content={"sum": total}
        )
    if name == "shout":
        return types.CallToolResult(content=[types.TextContent(type="text", text=arguments["text"].upper())])
    if name == "fail":
        return types.CallToolResult(content=[types.TextContent(type="text", text="the disk is full")], is_error=True)
    if name == "die":
        os._exit(3)
    if name == "slow":
        await anyio.sleep(30)
    TOOLS.pop("add", None)
    return types.CallToolResult(content=[types.TextContent(type="text", text="add is gone")])


async def main() -> None:
    server = Server("test-server", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
