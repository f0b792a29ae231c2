"""An MCP server (the official SDK's low-level API) whose tools are whatever a JSON file lists when it is asked.

`python mcp_drift_server.py TOOLS.json`: `tools/list` reads the file at each request, so a test changes a tool
(its description, its schema) between two connections, or between a connection's two listings, by writing it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = Path(sys.argv[1])


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    listed = json.loads(TOOLS.read_text(encoding="utf-8"))
    return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in listed])


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} ran")])


async def main() -> None:
    server = Server("drift-server", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
