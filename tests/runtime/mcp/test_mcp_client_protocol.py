"""toolgen's MCP client against real servers: tasks, URL elicitation, sampling and roots, timeouts, error words,
approval matched to the call in flight, remote schemas checked, and limits on what a server sends.

The servers are the reference `server-everything` and `mcp-server-time` (none of them toolgen's), and a small
server written here with the official SDK's low-level API for what no reference server does (a wrong answer).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.mcp_helpers import DEADLINE
from support.mcp_peers import peer_command

from toolgen.runtime import (
    MCPConnection,
    MCPToolsError,
    Registry,
    ToolContext,
    definitions_from_mcp,
    mcp_tools,
    tool_call,
)

# A server with the official SDK's low-level API: approval questions as serve_mcp asks them (about the call, or
# about another), results that break their output schema, and in other modes a tools list toolgen must refuse.
SERVER = """\
import json
import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types.jsonrpc import ErrorData, JSONRPCError, JSONRPCRequest
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

MODE = sys.argv[1]
# "legacy": no server/discover, so a client speaks 2025-11-25 (initialize), whose tools carry `execution`.
ERA = sys.argv[2] if len(sys.argv) > 2 else "modern"
SUM = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
APPROVAL = {"requiresApproval": True}
ASK = {"type": "object", "properties": {"about": {"type": "string"}, "same": {"type": "boolean"}}}
TOOLS = [
    {"name": "ask", "inputSchema": ASK, "_meta": APPROVAL},
    {"name": "other", "inputSchema": {"type": "object"}, "_meta": APPROVAL},
    {"name": "add", "inputSchema": {"type": "object"}, "outputSchema": SUM},
    {"name": "add_silently", "inputSchema": {"type": "object"}, "outputSchema": SUM},
]
if MODE == "bad-input":
    TOOLS.append({"name": "bad", "inputSchema": {"type": "object", "properties": {"a": {"type": "strin"}}}})
if MODE == "bad-output":
    TOOLS.append({"name": "bad", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "required": "a"}})
if MODE == "needs-tasks":
    TOOLS.append({"name": "research", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}})


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in TOOLS])


def text(value):
    return [types.TextContent(type="text", text=value)]


async def question(ctx, params, name, arguments):
    # As serve_mcp asks: inside an InputRequiredResult on 2026-07-28, else with a request of its own.
    message = f"Allow {name}({json.dumps(arguments, ensure_ascii=False, sort_keys=True)})?"
    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=message,
            requested_schema={"type": "object", "properties": {}},
            _meta={"toolgen/approval": {"tool": name}},
        )
    )
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (params.input_responses or {}).get("approval")
        if answer is None:
            return types.InputRequiredResult(input_requests={"approval": request})
        return answer.action if hasattr(answer, "action") else answer["action"]
    answer = await ctx.session.send_request(
        request, types.ElicitResult, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
    )
    return answer.action


async def call_tool(ctx, params):
    arguments = params.arguments or {}
    if params.name == "ask":
        # A question about this very call, about the same tool with other arguments, or about another tool.
        about = arguments.get("about", "ask")
        asked = arguments if arguments.get("same") else {**arguments, "more": 1}
        action = await question(ctx, params, about, asked)
        if not isinstance(action, str):
            return action
        return types.CallToolResult(content=text(action))
    if params.name == "add":
        return types.CallToolResult(content=text("five"), structured_content={"sum": "five"})
    if params.name == "add_silently":
        return types.CallToolResult(content=text("5"))
    return types.CallToolResult(content=text("done"))


async def handshake_only(read, write, forward):
    # server/discover answered "method not found" before the server sees it (it would lock the 2026 era).
    async with forward:
        async for message in read:
            request = getattr(message, "message", None)
            if isinstance(request, JSONRPCRequest) and request.method == "server/discover":
                error = ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
                await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request.id, error=error)))
            else:
                await forward.send(message)


async def main():
    server = Server("scripted", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        if ERA != "legacy":
            await server.run(read, write, server.create_initialization_options())
            return
        forward, served = anyio.create_memory_object_stream(100)
        async with anyio.create_task_group() as group:
            group.start_soon(handshake_only, read, write, forward)
            await server.run(served, write, server.create_initialization_options())
            group.cancel_scope.cancel()


anyio.run(main)
"""


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = tmp_path_factory.mktemp("scripted") / "scripted_server.py"
    script.write_text(textwrap.dedent(SERVER), encoding="utf-8")
    return script


def everything() -> list[str]:
    return peer_command("everything", "stdio")


@contextmanager
def connected(target: list[str], **options: Any) -> Iterator[tuple[Registry, MCPConnection]]:
    tools = Registry({})
    with mcp_tools(tools, target, timeout=options.pop("timeout", DEADLINE), **options) as connection:
        yield tools, connection


def test_task_support_is_kept_in_meta_and_written_by_import() -> None:
    from toolgen.importing.definitions import definitions_from_server, schema_text

    (required,) = [
        d for d in definitions_from_server(everything(), timeout=DEADLINE) if d["name"] == "simulate-research-query"
    ]
    assert required["meta"] == {"toolgen/taskSupport": "required"}
    written = yaml.safe_load(schema_text(required, "server-everything"))
    assert written["tools"][0]["meta"] == {"toolgen/taskSupport": "required"}
    # "forbidden" is the default and says nothing; only the server's `execution` sets the key, not its `_meta`.
    entries = [
        {"name": "plain", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "forbidden"}},
        {"name": "either", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
        {"name": "relabelled", "inputSchema": {"type": "object"}, "_meta": {"toolgen/taskSupport": "required"}},
    ]
    assert [d.get("meta") for d in definitions_from_mcp(entries)] == [None, {"toolgen/taskSupport": "optional"}, None]
    with pytest.raises(MCPToolsError) as refused:
        definitions_from_mcp([{"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "always"}}])
    assert refused.value.pointer == (0, "execution", "taskSupport")
    assert "tools[0] ('t'): execution.taskSupport must be one of forbidden, optional, required, not 'always'" in str(
        refused.value
    )


def test_a_tool_that_requires_tasks_runs_as_one_and_its_elicitation_reaches_on_elicit() -> None:
    asked: list[tuple[str, Any]] = []

    async def clarify(message: str, request: Any) -> Mapping[str, Any] | None:
        asked.append((message, request))
        return {"interpretation": "snake"}

    reports: list[tuple[float, float | None, str | None]] = []
    inside_a_run = ToolContext(on_progress=lambda *report: reports.append(report))
    with connected(everything(), on_elicit=clarify) as (tools, _):
        call = tool_call("simulate-research-query", {"topic": "python", "ambiguous": True}, id="t1")
        outcome = tools.dispatch(call, inside_a_run)
    assert not outcome.is_error, outcome.content
    assert isinstance(outcome.content, str)
    assert outcome.content.startswith("# Research Report: python (snake)")
    ((message, schema),) = asked
    assert "could have multiple interpretations" in message
    assert schema["required"] == ["interpretation"]
    # The task's status messages, as polled, are the call's progress.
    messages = [message for _, _, message in reports]
    assert messages[0] == "Gathering sources..." and messages[-1] == "Generating report..."
    assert [progress for progress, _, _ in reports] == [float(n) for n in range(1, len(reports) + 1)]


def test_a_server_that_cannot_run_a_required_task_is_refused_at_connect(scripted: Path) -> None:
    with pytest.raises(MCPToolsError) as refused:
        MCPConnection([sys.executable, str(scripted), "needs-tasks", "legacy"], timeout=DEADLINE)
    assert refused.value.pointer == (4, "execution", "taskSupport")
    assert (
        "tools[4] ('research') requires MCP tasks (execution.taskSupport: required), and the server does not"
        " offer task-augmented tools/call (capabilities.tasks.requests.tools.call)"
    ) in str(refused.value)


def test_url_elicitation_goes_to_on_elicit_with_the_url() -> None:
    asked: list[tuple[str, Any]] = []

    async def agree(message: str, request: Any) -> Mapping[str, Any] | None:
        asked.append((message, request))
        return {} if request != "https://example.com/no" else None

    with connected(everything(), on_elicit=agree) as (tools, _):
        opened = tools.dispatch(tool_call("trigger-url-elicitation", {"url": "https://example.com/yes"}, id="u1"))
        refused = tools.dispatch(tool_call("trigger-url-elicitation", {"url": "https://example.com/no"}, id="u2"))
        # The error path (-32042): the URL it names is asked about, then the call is made once more.
        again = tools.dispatch(
            tool_call("trigger-url-elicitation", {"url": "https://example.com/yes", "errorPath": True}, id="u3")
        )
    assert isinstance(opened.content, str) and opened.content.startswith("✅ User completed the URL elicitation flow.")
    assert isinstance(refused.content, str) and refused.content.startswith("❌ User declined to open the URL")
    assert isinstance(again.content, str) and again.content.startswith("✅ User completed")
    assert [url for _, url in asked] == [
        "https://example.com/yes",
        "https://example.com/no",
        "https://modelcontextprotocol.io",
        "https://example.com/yes",
    ]
    assert asked[0][0] == "Please open the link to complete this action."


def test_a_callback_written_for_forms_declines_a_url() -> None:
    async def form_only(message: str, schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return {name: "x" for name in schema["properties"]}  # a str has no keys: this fails, and declines

    with connected(everything(), on_elicit=form_only) as (tools, _):
        declined = tools.dispatch(tool_call("trigger-url-elicitation", {"url": "https://example.com/a"}, id="u4"))
    assert isinstance(declined.content, str) and declined.content.startswith("❌ User declined")


def test_roots_and_sampling_are_advertised_when_the_application_answers_them(tmp_path: Path) -> None:
    with connected(everything()) as (tools, _):
        assert "get-roots-list" not in tools and "trigger-sampling-request" not in tools
    requests: list[Mapping[str, Any]] = []

    def sample(params: Mapping[str, Any]) -> str:
        requests.append(params)
        return "a sampled reply"

    with connected(everything(), roots=[str(tmp_path)], on_sample=sample) as (tools, _):
        listed = tools.dispatch(tool_call("get-roots-list", {}, id="r1"))
        sampled = tools.dispatch(tool_call("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20}, id="s1"))
    assert isinstance(listed.content, str) and f"URI: {tmp_path.as_uri()}" in listed.content
    assert isinstance(sampled.content, str) and '"text": "a sampled reply"' in sampled.content
    (request,) = requests
    assert (request["maxTokens"], request["systemPrompt"]) == (20, "You are a helpful test server.")
    assert request["messages"][0]["content"]["text"].endswith("say hi")


def test_declined_sampling_and_roots_from_a_callback() -> None:
    async def roots() -> list[Any]:
        return [{"uri": "file:///srv/data", "name": "data"}]

    with connected(everything(), roots=roots, on_sample=lambda params: None) as (tools, _):
        listed = tools.dispatch(tool_call("get-roots-list", {}, id="r2"))
        declined = tools.dispatch(tool_call("trigger-sampling-request", {"prompt": "no"}, id="s2"))
    assert isinstance(listed.content, str) and "1. data\n   URI: file:///srv/data" in listed.content
    assert declined.is_error and "the user declined the sampling request" in str(declined.content)


def test_a_remote_timeout_is_a_timeout() -> None:
    with connected(everything(), timeout=1) as (tools, connection):
        outcome = tools.dispatch(tool_call("trigger-long-running-operation", {"duration": 30, "steps": 2}, id="l1"))
        with pytest.raises(TimeoutError, match="did not answer within 1 seconds"):
            connection.call("trigger-long-running-operation", {"duration": 30, "steps": 2})
    assert outcome.error is not None and outcome.error.kind == "timeout"
    assert outcome.content == "Error: the tool did not finish within 1 seconds"


def test_error_texts_are_the_servers_own_once() -> None:
    with connected(peer_command("time")) as (tools, _):
        failed = tools.dispatch(tool_call("get_current_time", {"timezone": "Nowhere/Nope"}, id="e1"))
    assert failed.error is not None and failed.error.kind == "handler_error"
    assert isinstance(failed.content, str)
    assert failed.content.startswith("Error: executing tool get_current_time: Invalid timezone")
    assert failed.content.count("Error") == 1


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_approval_is_answered_only_for_the_call_in_flight(scripted: Path, era: str) -> None:
    """On 2026-07-28 the question comes inside an InputRequiredResult, before, as a request of the server's own."""
    asked: list[str] = []

    async def ask_user(message: str, request: Any) -> Mapping[str, Any] | None:
        asked.append(message)
        return None

    with connected([sys.executable, str(scripted), "good", era], on_elicit=ask_user) as (_, connection):
        this_call = connection.call("ask", {"about": "ask", "same": True})
        other_arguments = connection.call("ask", {"about": "ask", "same": False})
        other_tool = connection.call("ask", {"about": "other", "same": True})
    assert (this_call, other_arguments, other_tool) == ("accept", "decline", "decline")
    # The two questions about other calls went to the application, which declined them.
    assert asked == [
        'Allow ask({"about": "ask", "more": 1, "same": false})?',
        'Allow other({"about": "other", "same": true})?',
    ]


def test_structured_content_is_checked_against_the_output_schema(scripted: Path) -> None:
    with connected([sys.executable, str(scripted), "good"]) as (tools, _):
        wrong = tools.dispatch(tool_call("add", {}, id="o1"))
        silent = tools.dispatch(tool_call("add_silently", {}, id="o2"))
    assert wrong.error is not None and wrong.error.kind == "handler_error"
    assert wrong.content == 'Error: Invalid structured content returned by add: /sum: expected an integer, got "five"'
    assert silent.content == (
        "Error: Invalid structured content returned by add_silently: there is none, though the tool has an output schema"
    )


@pytest.mark.parametrize(
    ("mode", "field", "pointer", "said"),
    [
        ("bad-input", "inputSchema", ("properties", "a", "type"), "inputSchema/properties/a/type is not a valid"),
        ("bad-output", "outputSchema", ("required",), "outputSchema/required is not a valid JSON Schema: 'a' is not"),
    ],
)
def test_a_remote_schema_that_is_no_json_schema_is_refused_at_connect(
    scripted: Path, mode: str, field: str, pointer: tuple[str, ...], said: str
) -> None:
    with pytest.raises(MCPToolsError) as refused:
        MCPConnection([sys.executable, str(scripted), mode], timeout=DEADLINE)
    assert refused.value.pointer == (4, field, *pointer)
    assert f"tools[4] ('bad'): {said}" in str(refused.value)


def test_limits_on_result_bytes_and_tool_count() -> None:
    with connected(everything(), max_result_bytes=200) as (tools, _):
        small = tools.dispatch(tool_call("echo", {"message": "hi"}, id="b1"))
        large = tools.dispatch(tool_call("echo", {"message": "x" * 500}, id="b2"))
    assert (small.is_error, small.content) == (False, "Echo: hi")
    assert isinstance(large.content, str)
    assert large.content.startswith("Error: the result of echo is ")
    assert large.content.endswith("bytes, more than the 200 this MCP connection takes (max_result_bytes)")
    with pytest.raises(MCPToolsError, match=r"it lists more than 3 tools, this connection's max_tools"):
        MCPConnection(everything(), timeout=DEADLINE, max_tools=3)
