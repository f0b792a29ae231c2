"""`python -m toolgen_sdk mcp`: the official MCP client lists and calls the committed SDK's tools, over stdio and HTTP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.mcp_helpers import DEADLINE, GENERATED, SERVE, child_env, http_server

mcp = pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install -e '.[mcp]'")
types = pytest.importorskip("mcp.types")

TOOL_NAMES = ["get_current_weather", "run_command", "show_order_status", "todo_read", "todo_write"]


def stdio(*extra: str, env: dict[str, str] | None = None) -> mcp.StdioServerParameters:
    return mcp.StdioServerParameters(
        command=SERVE[0], args=[*SERVE[1:], *extra], cwd=str(GENERATED), env=env or child_env()
    )


async def _answering(actions: list[str], seen: list[str]) -> Any:
    """An elicitation callback that gives `actions` in turn, one a question, and keeps each question in `seen`."""

    async def elicit(context: Any, params: Any) -> Any:
        action = actions[len(seen)]
        seen.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)  # type: ignore[arg-type]

    return elicit


def in_time(function: Any, *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await function(*args)

    return anyio.run(bounded)


async def _list_and_call(server: Any, mode: str = "auto") -> dict[str, Any]:
    async with mcp.Client(server, read_timeout_seconds=DEADLINE, mode=mode) as client:
        listed = await client.list_tools()
        weather = await client.call_tool("get_current_weather", {"location": "Paris"})
        bad = await client.call_tool("get_current_weather", {"location": 3})
        unknown = await client.call_tool("no_such_tool", {})
        order = await client.call_tool("show_order_status", {"order_id": "AB-12345"})
        approval = await client.call_tool("run_command", {"program": "ls"})
        return {
            "tools": {tool.name: tool for tool in listed.tools},
            "weather": weather,
            "bad": bad,
            "unknown": unknown,
            "order": order,
            "approval": approval,
        }


def _check_served(seen: dict[str, Any]) -> None:
    tools = seen["tools"]
    assert sorted(tools) == TOOL_NAMES
    # returnDirect, and the string result's schema, which MCP's outputSchema (objects only) cannot hold.
    assert tools["show_order_status"].meta == {"outputSchema": {"type": "string"}, "returnDirect": True}
    assert tools["run_command"].meta == {
        "sandbox": {"output_cap_bytes": 65536},
        "requiresApproval": True,
        "timeout": 30,
    }
    assert tools["get_current_weather"].title == "Current weather"
    assert tools["get_current_weather"].output_schema["type"] == "object"
    assert tools["show_order_status"].output_schema is None
    weather = seen["weather"]
    assert not weather.is_error
    assert weather.structured_content == {
        "location": "Paris",
        "temperature": 18.0,
        "unit": "celsius",
        "conditions": "sunny",
    }
    assert weather.content[0].text.startswith('{"location":"Paris"')
    bad = seen["bad"]
    assert (
        bad.is_error
        and bad.content[0].text == "Error: the arguments were not accepted: /location: expected a string, got 3"
    )
    assert seen["unknown"].is_error
    assert seen["unknown"].content[0].text.startswith("Error: there is no tool named 'no_such_tool'; the tools are: ")
    order = seen["order"]
    assert not order.is_error and order.structured_content is None
    assert order.content[0].text == "Order AB-12345: shipped, arriving in 2 days."
    # This client declared no elicitation: a tool that needs approval is refused, with the reason.
    approval = seen["approval"]
    assert approval.is_error
    assert "requires approval, and this MCP client cannot be asked for it" in approval.content[0].text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_official_client_lists_and_calls_over_stdio(mode: str) -> None:
    _check_served(in_time(_list_and_call, stdio(), mode))


def test_official_client_lists_and_calls_over_streamable_http() -> None:
    with http_server(SERVE, GENERATED, child_env()) as url:
        _check_served(in_time(_list_and_call, url))


async def _approve(actions: list[str], mode: str) -> tuple[list[Any], list[str]]:
    # One session, a call per action: each call is asked about on its own (an answer is not kept for the next).
    seen: list[str] = []
    elicit = await _answering(actions, seen)
    async with mcp.Client(stdio(), read_timeout_seconds=DEADLINE, mode=mode, elicitation_callback=elicit) as client:
        return [await client.call_tool("run_command", {"program": "ls"}) for _ in actions], seen


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_approval_is_asked_through_elicitation_in_both_protocol_eras(mode: str) -> None:
    (approved, declined), asked = in_time(_approve, ["accept", "decline"], mode)
    assert not approved.is_error and approved.structured_content["stdout"] == "notes.txt\n"
    assert asked == ['Allow run_command({"program": "ls"})?'] * 2
    assert declined.is_error and declined.content[0].text == "Error: the call was denied: the user declined"


BOUND = """\
from toolgen_sdk.tools import Tools


def build() -> Tools:
    tools = Tools()

    @tools.get_current_weather.handler
    def weather(args, ctx):
        return {"location": args.location, "temperature": 21.5, "unit": "celsius"}

    return tools
"""


def test_tools_from_a_module_attribute_and_unbound_tools_listed_as_unavailable(tmp_path: Path) -> None:
    (tmp_path / "myapp.py").write_text(BOUND, encoding="utf-8")

    async def session() -> tuple[Any, Any, Any]:
        server = stdio("--tools", "myapp:build", env=child_env(tmp_path, GENERATED))
        async with mcp.Client(server, read_timeout_seconds=DEADLINE) as client:
            listed = await client.list_tools()
            bound = await client.call_tool("get_current_weather", {"location": "Oslo"})
            unbound = await client.call_tool("todo_read", {})
            return listed, bound, unbound

    listed, bound, unbound = in_time(session)
    unavailable = {tool.name: (tool.meta or {}).get("unavailable") for tool in listed.tools}
    assert unavailable == {name: (None if name == "get_current_weather" else True) for name in TOOL_NAMES}
    assert bound.structured_content == {"location": "Oslo", "temperature": 21.5, "unit": "celsius"}
    assert (
        unbound.is_error
        and unbound.content[0].text == "Error: no handler is bound for the tool 'todo_read', so it did not run"
    )


def _serve(*args: str, cwd: Path = GENERATED) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SERVE, *args], cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=DEADLINE, check=False
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--http", "nowhere"], "--http: 'nowhere' is not HOST:PORT"),
        (["--http", "127.0.0.1:99999"], "is not HOST:PORT"),
        (["--tools", "no_such_module:tools"], "no module named 'no_such_module'"),
        (["--tools", "toolgen_sdk"], "should be 'module:attribute'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_options_are_usage_errors(args: list[str], said: str) -> None:
    result = _serve(*args)
    assert result.returncode == 2, result.stderr
    assert said in result.stderr


def test_without_the_sdk_the_error_names_the_extra(tmp_path: Path) -> None:
    # A stand-in `mcp` that cannot be imported, first on the path: as if the extra were not installed.
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text("raise ImportError('no mcp here', name='mcp')\n", encoding="utf-8")
    result = subprocess.run(
        [*SERVE], cwd=GENERATED, env=child_env(tmp_path), capture_output=True, text=True, timeout=DEADLINE, check=False
    )
    assert result.returncode == 4
    # The package is a folder here, not an installed distribution with extras: the extra is toolgen's.
    assert "`mcp` extra" in result.stderr and "pip install 'toolgen[mcp]'" in result.stderr


def test_a_prompt_named_mcp_still_runs_the_loop() -> None:
    result = _serve_prompt("--", "mcp")
    assert result.returncode == 0, result.stderr


def _serve_prompt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgen_sdk", *args],
        cwd=GENERATED,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )


def test_serve_mcp_in_process_with_the_official_in_memory_client() -> None:
    """mcp_server() is the same server, for embedding: the official Client connects to it in-process."""
    sys.path.insert(0, str(GENERATED))
    try:
        from toolgen_sdk._runtime import mcp_server
        from toolgen_sdk.tools import Tools
    finally:
        sys.path.remove(str(GENERATED))
    tools = Tools()
    tools.todo_read.handler(lambda args, ctx: {"todos": []})

    async def session() -> Any:
        async with mcp.Client(mcp_server(tools, name="embedded")) as client:
            return await client.call_tool("todo_read", {})

    result = in_time(session)
    assert result.structured_content == {"todos": []}
    assert result.content[0].text == '{"todos":[]}'
