"""Patterns over MCP in bounded time: toolgen's server checks a call's arguments, toolgen's client a server's result.

Python's re takes minutes on `^(a+)+$` against thirty `a`s and a `!`, holding the GIL: one such call froze an MCP
HTTP server for every session. Both sides here answer well within the tool's timeout.
"""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from support.mcp_helpers import DEADLINE

from toolgen.runtime import Registry, mcp_server, mcp_tools, tool_call

mcp = pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")

HOSTILE = "a" * 30 + "!"
TIMEOUT = 5.0
WORD = {"type": "object", "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}}, "required": ["word"]}


def test_toolgens_server_refuses_the_call_in_time() -> None:
    tools = Registry({})
    tools.add("pick", WORD, lambda args, ctx: {"picked": args["word"]}, timeout=TIMEOUT)

    async def session() -> tuple[Any, Any]:
        async with mcp.Client(mcp_server(tools)) as client:
            refused = await client.call_tool("pick", {"word": HOSTILE})
            picked = await client.call_tool("pick", {"word": "aaa"})
            return refused, picked

    async def bounded() -> tuple[Any, Any]:
        with anyio.fail_after(DEADLINE):
            return await session()

    start = time.monotonic()
    refused, picked = anyio.run(bounded)
    assert time.monotonic() - start < TIMEOUT
    assert refused.is_error
    assert "/word: expected a string matching '^(a+)+$'" in refused.content[0].text
    assert not picked.is_error and picked.content[0].text == '{"picked": "aaa"}'


SERVER = """\
import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

WORD = {"type": "object", "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}}, "required": ["word"]}
TOOL = types.Tool(name="echo", input_schema={"type": "object"}, output_schema=WORD)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    word = (params.arguments or {}).get("word", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=word)], structured_content={"word": word})


async def main():
    server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def test_toolgens_client_checks_a_servers_result_in_time(tmp_path: Path) -> None:
    script = tmp_path / "hostile_server.py"
    script.write_text(textwrap.dedent(SERVER), encoding="utf-8")
    tools = Registry({})
    with mcp_tools(tools, [sys.executable, str(script)], timeout=DEADLINE):
        start = time.monotonic()
        # The official SDK checks structuredContent against the outputSchema itself, before toolgen sees it.
        refused = tools.dispatch(tool_call("echo", {"word": HOSTILE}, id="c1"))
        assert time.monotonic() - start < TIMEOUT
        assert refused.is_error and "Invalid structured content" in refused.content
        echoed = tools.dispatch(tool_call("echo", {"word": "aaa"}, id="c2"))
    assert (echoed.is_error, echoed.result) == (False, {"word": "aaa"})
