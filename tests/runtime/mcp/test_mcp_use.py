"""toolgen's MCP client: a server's tools in a registry, their policies honoured by the loop, bad servers reported."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mcp_helpers import DEADLINE, GENERATED, SERVE, child_env, http_server, imported_package
from support.projects import TESTS, Project

from toolgen.runtime import (
    MCPConnectionError,
    MCPToolsError,
    Registry,
    ScriptedModel,
    assistant_turn,
    definitions_from_mcp,
    mcp_tools,
    run,
    tool_call,
)

SCRIPT = str(TESTS / "support" / "mcp_server_script.py")


def test_a_servers_tools_are_run_time_tools_with_their_schema_and_meta() -> None:
    tools = Registry({})
    with mcp_tools(tools, [sys.executable, SCRIPT], timeout=DEADLINE) as server:
        assert list(tools) == ["add", "die", "fail", "retire", "shout", "slow"]
        add = tools.entry("add").spec
        assert (add.title, add.description, add.annotations) == ("Add two numbers", "a + b", {"readOnlyHint": True})
        shout = tools.entry("shout").spec
        assert (shout.return_direct, shout.timeout, dict(shout.meta)) == (True, 5, {"owner": "tests"})
        outcome = tools.dispatch(tool_call("add", {"a": 2, "b": 3}, id="c1"))
        assert (outcome.is_error, outcome.result, outcome.content) == (False, {"sum": 5}, '{"sum": 5}')
        # Checked against the inputSchema here: the server never sees the bad call.
        refused = tools.dispatch(tool_call("add", {"a": "two", "b": 3}, id="c2"))
        assert refused.is_error and refused.error is not None and refused.error.kind == "invalid_arguments"
        assert "/a" in refused.content
        failed = tools.dispatch(tool_call("fail", {}, id="c3"))
        assert failed.content == "Error: the disk is full"
        # Run-time tools are offered like built ones, in every provider format.
        names = [entry["function"]["name"] for entry in tools.tool_definitions("openai")]
        assert names == ["add", "die", "fail", "retire", "shout", "slow"]
        assert tools.tool_definitions("mcp")[-2]["_meta"] == {"owner": "tests", "returnDirect": True, "timeout": 5}
        # A tool that vanished from the server since it was listed: the server's refusal, in words.
        assert tools.dispatch(tool_call("retire", {}, id="c4")).content == "add is gone"
        vanished = tools.dispatch(tool_call("add", {"a": 1, "b": 1}, id="c5"))
        assert vanished.content == f"Error: the MCP server {server.label} no longer has a tool named 'add'"
        assert [d["name"] for d in server.refresh()] == ["shout", "fail", "die", "retire", "slow"]


def test_return_direct_from_meta_ends_the_run_without_a_second_model_call() -> None:
    tools = Registry({})
    model = ScriptedModel([assistant_turn(None, tool_call("shout", {"text": "it works"}))])
    with mcp_tools(tools, [sys.executable, SCRIPT], timeout=DEADLINE):
        result = run([{"role": "user", "content": "shout it"}], model, tools)
    assert (result.stop_reason, result.text, len(model.requests)) == ("return_direct", "IT WORKS", 1)


def test_the_timeout_from_meta_is_applied_to_the_remote_call() -> None:
    tools = Registry({})
    model = ScriptedModel([assistant_turn(None, tool_call("slow", {})), assistant_turn("gave up")])
    with mcp_tools(tools, [sys.executable, SCRIPT], timeout=DEADLINE):
        result = run([{"role": "user", "content": "go"}], model, tools)
    (report,) = result.calls
    assert report.status == "error"
    assert model.requests[1].messages[-1]["content"] == "Error: the tool did not finish within 1 seconds"


def test_the_sdk_client_over_streamable_http() -> None:
    tools = Registry({})
    model = ScriptedModel([assistant_turn(None, tool_call("show_order_status", {"order_id": "AB-12345"}))])
    with http_server(SERVE, GENERATED, child_env()) as url, mcp_tools(tools, url, timeout=DEADLINE):
        assert "get_current_weather" in tools
        result = run([{"role": "user", "content": "Where is AB-12345?"}], model, tools)
    assert (result.stop_reason, result.text) == ("return_direct", "Order AB-12345: shipped, arriving in 2 days.")


def test_a_server_that_dies_mid_call_is_a_tool_error_not_a_hang() -> None:
    tools = Registry({})
    with mcp_tools(tools, [sys.executable, SCRIPT], timeout=DEADLINE):
        outcome = tools.dispatch(tool_call("die", {}, id="c1"))
        assert outcome.is_error
        assert outcome.content.startswith(f"Error: the MCP server {sys.executable} {SCRIPT} did not answer the call: ")
        # Later calls fail the same way, quickly: the connection is gone.
        again = tools.dispatch(tool_call("add", {"a": 1, "b": 2}, id="c2"))
        assert again.is_error and "did not answer the call" in again.content


def test_a_tools_list_toolgen_cannot_use_is_refused_by_name() -> None:
    with pytest.raises(MCPToolsError) as raised:
        mcp_tools(Registry({}), [sys.executable, SCRIPT, "bad-meta"], timeout=DEADLINE)
    assert "tools[6] ('late'): _meta.timeout must be a positive number of seconds, at most 604,800, not 'soon'" in str(
        raised.value
    )


def test_a_schema_that_is_not_an_object_fails_the_connection_with_the_servers_words() -> None:
    # The official server refuses to send it at all; the client says so rather than waiting.
    with pytest.raises(MCPConnectionError, match="invalid result"):
        mcp_tools(Registry({}), [sys.executable, SCRIPT, "not-object"], timeout=DEADLINE)


@pytest.mark.parametrize(
    ("tools", "said"),
    [
        ([{"name": "t", "inputSchema": {"type": "string"}}], "tools[0] ('t'): inputSchema must be an object schema"),
        (
            [{"name": "t", "inputSchema": True}],
            "tools[0] ('t'): inputSchema must be an object schema (type: object), not 'bool'",
        ),
        ([{"inputSchema": {"type": "object"}}], "tools[0]: name must be a non-empty string"),
        (["add"], "tools[0]: a tool must be a JSON object, not str"),
        ({"tools": 3}, "an MCP tools list is an array of tools"),
        (
            [{"name": "t", "inputSchema": {"type": "object"}, "_meta": []}],
            "tools[0] ('t'): _meta must be a JSON object",
        ),
        (
            [{"name": "t", "inputSchema": {"type": "object"}, "_meta": {"returnDirect": "yes"}}],
            "_meta.returnDirect must be true or false",
        ),
        ([{"name": "t", "inputSchema": {"type": "object"}}] * 2, "tools[1]: a second tool named 't'"),
        (
            # Past threading's limit every call had failed with OverflowError after the server ran it.
            [{"name": "t", "inputSchema": {"type": "object"}, "_meta": {"timeout": 1e10}}],
            "_meta.timeout must be a positive number of seconds, at most 604,800, not 10000000000.0",
        ),
    ],
)
def test_malformed_tools_lists_name_the_tool_and_field(tools: Any, said: str) -> None:
    with pytest.raises(MCPToolsError) as raised:
        definitions_from_mcp(tools)
    assert said in str(raised.value)


def test_a_tools_list_whose_cursor_never_ends_is_refused_not_cut_short() -> None:
    with pytest.raises(MCPToolsError, match="its tools list repeats the cursor 'again'; it never ends"):
        mcp_tools(Registry({}), [sys.executable, SCRIPT, "endless-list"], timeout=DEADLINE)


def test_a_command_that_is_not_an_mcp_server_is_a_connection_error() -> None:
    with pytest.raises(MCPConnectionError, match="could not connect to the MCP server .*: MCPError: Connection closed"):
        mcp_tools(Registry({}), [sys.executable, "-c", "print('hello')"], timeout=10)
    with pytest.raises(MCPConnectionError, match="/no/such/program: FileNotFoundError: "):
        mcp_tools(Registry({}), ["/no/such/program"], timeout=10)
    with pytest.raises(MCPConnectionError, match="http://127.0.0.1:9/mcp: ConnectError: "):
        mcp_tools(Registry({}), "http://127.0.0.1:9/mcp", timeout=10)
    with pytest.raises(MCPConnectionError, match="cannot be empty"):
        mcp_tools(Registry({}), [], timeout=10)


def test_names_already_taken_are_an_error_not_a_replacement() -> None:
    tools = Registry({})
    tools.add("add", {"type": "object"}, lambda args, ctx: "mine")
    with pytest.raises(ValueError, match="already has tools named add"):
        mcp_tools(tools, [sys.executable, SCRIPT], timeout=DEADLINE)
    with mcp_tools(tools, [sys.executable, SCRIPT], prefix="remote_", names=["add"], timeout=DEADLINE):
        assert list(tools) == ["add", "remote_add"]
        assert tools.dispatch(tool_call("remote_add", {"a": 1, "b": 1}, id="c")).result == {"sum": 2}


def test_tools_added_or_removed_mid_run_are_offered_from_the_next_model_call() -> None:
    tools = Registry({})

    def unlock(args: Any, ctx: Any) -> str:
        tools.add("secret", {"type": "object"}, lambda a, c: "42", description="The secret.", requires_approval=True)
        tools.remove("unlock")
        return "unlocked"

    tools.add("unlock", {"type": "object"}, unlock)
    model = ScriptedModel(
        [
            assistant_turn(None, tool_call("unlock", {})),
            assistant_turn(None, tool_call("secret", {})),
            assistant_turn("done"),
        ]
    )
    result = run([{"role": "user", "content": "go"}], model, tools)
    offered = [[tool["name"] for tool in request.tools] for request in model.requests]
    assert offered == [["unlock"], ["secret"], ["secret"]]
    # The run-time tool's requiresApproval is honoured: no approver, so the call is denied.
    assert result.stop_reason == "finished"
    assert [report.status for report in result.calls] == ["ok", "denied"]


ORDERS = """\
tools:
  - name: greet
    description: Say hello.
    inputSchema:
      type: object
      properties:
        name: {type: string}
      required: [name]
"""


def test_two_packages_return_direct_over_mcp(make_project: Any) -> None:
    """Package B's loop calls package A's (the committed SDK's) returnDirect tool over MCP: one model call."""
    b: Project = make_project("orders_b")
    b.write("schemas/greet.yaml", ORDERS)
    assert b.cli("build").returncode == 0
    # B runs in this process, each through its own runtime; A is a server process of the committed SDK.
    with imported_package(b.root / "generated", "orders_b"):
        runtime = importlib.import_module("orders_b._runtime")
        tools = importlib.import_module("orders_b.tools").Tools()
        tools.greet.handler(lambda args, ctx: f"hello {args.name}")
        turn = runtime.assistant_turn(None, runtime.tool_call("show_order_status", {"order_id": "AB-12345"}))
        model = runtime.ScriptedModel([turn])
        with runtime.mcp_tools(tools, list(SERVE), cwd=str(GENERATED), timeout=DEADLINE):
            result = runtime.run([{"role": "user", "content": "Where is AB-12345?"}], model, tools)
        seen = {
            "stop": result.stop_reason,
            "text": result.text,
            "model_calls": len(model.requests),
            "offered": [tool["name"] for tool in model.requests[0].tools],
        }
    assert seen == {
        "stop": "return_direct",
        "text": "Order AB-12345: shipped, arriving in 2 days.",
        "model_calls": 1,
        "offered": ["get_current_weather", "greet", "run_command", "show_order_status", "todo_read", "todo_write"],
    }


def test_approval_travels_both_ways_between_toolgen_packages() -> None:
    """The loop asks its approver for the remote tool; the server's own question is then answered yes."""
    from toolgen.runtime import Approval

    tools = Registry({})
    model = ScriptedModel([assistant_turn(None, tool_call("run_command", {"program": "ls"})), assistant_turn("ok")])
    asked: list[str] = []

    def approve(request: Any) -> Approval:
        asked.append(request.name)
        return Approval.approve()

    with mcp_tools(tools, list(SERVE), cwd=str(GENERATED), env=child_env(), timeout=DEADLINE):
        result = run([{"role": "user", "content": "ls"}], model, tools, approve=approve)
    assert asked == ["run_command"]
    (report,) = result.calls
    assert report.status == "ok"
    assert '"stdout": "notes.txt\\n"' in model.requests[1].messages[-1]["content"]


def test_tools_a_server_lists_as_unavailable_are_added_only_when_named(tmp_path: Path) -> None:
    (tmp_path / "myapp.py").write_text(
        "from toolgen_sdk.tools import Tools\n"
        "tools = Tools()\n"
        "tools.todo_read.handler(lambda args, ctx: {'todos': []})\n",
        encoding="utf-8",
    )
    server = [*SERVE, "--tools", "myapp:tools"]
    env = child_env(tmp_path, GENERATED)
    tools = Registry({})
    with mcp_tools(tools, server, cwd=str(GENERATED), env=env, timeout=DEADLINE) as connection:
        assert list(tools) == ["todo_read"]
        assert tools.dispatch(tool_call("todo_read", {}, id="c")).result == {"todos": []}
        connection.add_to(tools, names=["todo_write"])
        refused = tools.dispatch(tool_call("todo_write", {"todos": []}, id="d"))
        assert refused.content == "Error: no handler is bound for the tool 'todo_write', so it did not run"
