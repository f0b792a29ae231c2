"""A run-time tool's result is checked against its output schema: dispatched here, and served over MCP to the
official SDK's client, which never receives structuredContent its outputSchema refuses."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
from support.mcp_helpers import DEADLINE, child_env

from toolgen.runtime import Registry, tool_call
from toolgen.runtime.tools.outcomes import ContentParts

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
REFUSED = 'Error: the tool returned a result its schema does not allow: /x: expected an integer, got "str"'

SERVER = """\
from toolgen.runtime import Registry, serve_mcp
from toolgen.runtime.tools.outcomes import ContentParts

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
tools = Registry({})
tools.add("bad_value", {"type": "object"}, lambda args, ctx: {"x": "str"}, output_schema=SCHEMA)
bad_parts = ContentParts([{"type": "text", "text": "t"}], value={"x": "str"})
tools.add("parts_value_mismatch", {"type": "object"}, lambda args, ctx: bad_parts, output_schema=SCHEMA)
good_parts = ContentParts([{"type": "text", "text": "seven"}], value={"x": 7})
tools.add("good", {"type": "object"}, lambda args, ctx: good_parts, output_schema=SCHEMA)
serve_mcp(tools)
"""


def _registry(check_result: bool = True) -> Registry:
    tools = Registry({})
    bad_parts = ContentParts([{"type": "text", "text": "t"}], value={"x": "str"})
    for name, result in (("bad_value", {"x": "str"}), ("parts_value_mismatch", bad_parts), ("plain", {"x": 3})):
        tools.add(
            name, {"type": "object"}, lambda args, ctx, r=result: r, output_schema=SCHEMA, check_result=check_result
        )
    return tools


def test_a_run_time_tools_result_that_fails_its_output_schema_is_an_invalid_result() -> None:
    tools = _registry()
    for name in ("bad_value", "parts_value_mismatch"):
        outcome = tools.dispatch(tool_call(name, {}, id="c1"))
        assert outcome.error is not None and outcome.error.kind == "invalid_result"
        assert outcome.content == REFUSED
    plain = tools.dispatch(tool_call("plain", {}, id="c2"))
    assert (plain.is_error, plain.result, plain.content) == (False, {"x": 3}, '{"x": 3}')
    # Left to the handler when asked (what an MCP connection does: it checks the server's results itself).
    unchecked = _registry(check_result=False).dispatch(tool_call("bad_value", {}, id="c3"))
    assert (unchecked.is_error, unchecked.result) == (False, {"x": "str"})


def test_the_official_client_gets_an_error_not_structured_content_its_schema_refuses(tmp_path: Path) -> None:
    script = tmp_path / "served.py"
    script.write_text(SERVER, encoding="utf-8")
    server = mcp.StdioServerParameters(command=sys.executable, args=[str(script)], env=child_env())

    async def session() -> list[Any]:
        with anyio.fail_after(DEADLINE):
            async with mcp.Client(server) as client:
                return [await client.call_tool(name, {}) for name in ("bad_value", "parts_value_mismatch", "good")]

    bad, bad_parts, good = anyio.run(session)
    for result in (bad, bad_parts):
        assert (result.is_error, result.structured_content) == (True, None)
        assert [block.text for block in result.content] == [REFUSED]
    assert (good.is_error, good.structured_content, [b.text for b in good.content]) == (False, {"x": 7}, ["seven"])
