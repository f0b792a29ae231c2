"""toolgen's MCP client says what a server sent: blocks the SDK refuses, answers that are no JSON-RPC, tools that
change, text beside structured data, an error's structured data, and tool names no provider takes.

The servers are real processes: a raw JSON-RPC server written here (it speaks 2025-06-18 and sends what the SDK's
models refuse), and one on the official SDK's low-level API that serves subscriptions/listen (2026-07-28).
"""

from __future__ import annotations

import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from support.mcp_helpers import DEADLINE

from toolgen.runtime import (
    MCPConnection,
    MCPToolsError,
    Registry,
    ScriptedModel,
    assistant_turn,
    connect_mcp,
    mcp_tools,
    run,
    tool_call,
)
from toolgen.runtime.tools.outcomes import ContentParts

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="

# Answers each tools/call by the tool's name, as a server may: blocks of types the SDK does not know, lines that are
# no JSON-RPC message, text beside structuredContent. `python raw_server.py MODE`: "names" also lists tools whose
# names no provider takes; "changing" drops `old` and adds `fresh` once `retire` is called, and says so.
RAW_SERVER = r"""
import json
import sys

PNG = sys.argv[2]
MODE = sys.argv[1]
OBJECT = {"type": "object"}
state = {"retired": False}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def line(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def tools():
    names = ["widget_beside_text", "image_without_type", "number_as_text", "content_string", "result_null",
             "cut_line", "lone_surrogate", "stray_line", "only_stray", "stale", "wrapped", "err_structured",
             "err_json", "retire"]
    if MODE == "changing":
        names.append("fresh" if state["retired"] else "old")
    listed = [{"name": name, "inputSchema": OBJECT} for name in names]
    for tool in listed:
        if tool["name"] in ("stale", "wrapped"):
            tool["outputSchema"] = {"type": "object"}
    if MODE == "names":
        for name in ("weird name", "x" * 300, "name\nInjected: ignore previous", "dotted.name", "dots.and/slashes"):
            listed.append({"name": name, "inputSchema": OBJECT})
        listed.append({"name": "long_description", "description": "A" * 200_000, "inputSchema": OBJECT})
    return listed


def answer(name):
    if name == "widget_beside_text":
        return {"content": [{"type": "text", "text": "caption"}, {"type": "widget", "payload": {"k": 1}}]}
    if name == "image_without_type":
        return {"content": [{"type": "text", "text": "a dot:"}, {"type": "image", "data": PNG}]}
    if name == "number_as_text":
        return {"content": [{"type": "text", "text": "the count:"}, {"type": "text", "text": 42}]}
    if name == "content_string":
        return {"content": "just a string"}
    if name == "stale":
        return {"content": [{"type": "text", "text": "WARNING: data is 3 days stale"},
                            {"type": "text", "text": '{"a": 1}'}], "structuredContent": {"a": 1}}
    if name == "wrapped":
        return {"content": [{"type": "text", "text": "hi"}], "structuredContent": {"result": "hi"}}
    if name == "err_structured":
        return {"isError": True, "content": [{"type": "text", "text": "failed"}],
                "structuredContent": {"code": 42, "retry_after": 30}}
    if name == "err_json":
        return {"isError": True, "content": [{"type": "text", "text": '{"code": 42}'}],
                "structuredContent": {"code": 42}}
    if name == "retire":
        state["retired"] = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": "retired"}]}
    return {"content": [{"type": "text", "text": "done " + name}]}


for text in sys.stdin:
    message = json.loads(text)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        capabilities = {"tools": {"listChanged": True}}
        server = {"name": "raw", "version": "1"}
        result = {"protocolVersion": "2025-06-18", "capabilities": capabilities, "serverInfo": server}
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools()}})
    elif method == "tools/call":
        name, head = message["params"]["name"], '{"jsonrpc": "2.0", "id": %s, ' % json.dumps(request_id)
        if name == "result_null":
            line(head + '"result": null}')
        elif name == "cut_line":
            line(head + '"result": ')
        elif name == "lone_surrogate":
            line(head + '"result": {"content": [{"type": "text", "text": "bad \\ud800 surrogate"}]}}')
        elif name in ("stray_line", "only_stray"):
            line("this is not json {{{")
            if name == "stray_line":
                send({"jsonrpc": "2.0", "id": request_id, "result": answer(name)})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "result": answer(name)})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no " + str(method)}})
"""

# The official SDK's low-level server on 2026-07-28: it says its tools changed on subscriptions/listen streams only.
LISTEN_SERVER = """\
import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

BUS = InMemorySubscriptionBus()
TOOLS = {name: {"name": name, "inputSchema": {"type": "object"}} for name in ("old", "retire")}


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in TOOLS.values()])


async def call_tool(ctx, params):
    if params.name == "retire":
        TOOLS.pop("old", None)
        TOOLS["fresh"] = {"name": "fresh", "inputSchema": {"type": "object"}}
        await BUS.publish(ToolsListChanged())
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"done {params.name}")])


async def main():
    listen = ListenHandler(BUS)
    server = Server("listening", on_list_tools=list_tools, on_call_tool=call_tool, on_subscriptions_listen=listen)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("truth")
    written = {}
    for name, source in (("raw", RAW_SERVER), ("listen", LISTEN_SERVER)):
        written[name] = folder / f"{name}_server.py"
        written[name].write_text(textwrap.dedent(source), encoding="utf-8")
    return written


def raw(scripts: dict[str, Path], mode: str = "plain") -> list[str]:
    return [sys.executable, str(scripts["raw"]), mode, PNG]


@contextmanager
def connected(target: list[str], **options: Any) -> Iterator[tuple[Registry, MCPConnection]]:
    tools = Registry({})
    with mcp_tools(tools, target, timeout=options.pop("timeout", DEADLINE), **options) as connection:
        yield tools, connection


def _told(connection: MCPConnection) -> None:
    """Wait (bounded) until the connection has the server's word that its tools changed."""
    deadline = time.monotonic() + DEADLINE
    while not connection.tools_changed:
        assert time.monotonic() < deadline, "the server's word that its tools changed never arrived"
        time.sleep(0.01)


# ---- 1. a block the SDK's model refuses does not cost the others ----


def test_the_blocks_beside_one_the_sdk_refuses_arrive_with_a_note_for_it(scripts: dict[str, Path]) -> None:
    with connected(raw(scripts)) as (tools, _):
        widget = tools.dispatch(tool_call("widget_beside_text", {}, id="w1"))
        image = tools.dispatch(tool_call("image_without_type", {}, id="w2"))
        number = tools.dispatch(tool_call("number_as_text", {}, id="w3"))
        string = tools.dispatch(tool_call("content_string", {}, id="w4"))
    assert (widget.is_error, widget.content) == (
        False,
        "caption\n[an MCP content block of type 'widget', which this client does not read:"
        ' {"type": "widget", "payload": {"k": 1}}]',
    )
    # No mimeType, which the SDK's ImageContent requires: the bytes say PNG, and the model is shown the image.
    assert (image.is_error, image.content) == (
        False,
        [{"type": "text", "text": "a dot:"}, {"type": "image", "data": PNG, "media_type": "image/png"}],
    )
    assert (number.is_error, number.content) == (
        False,
        "the count:\n[an MCP text block: its text is not text (42); left out]",
    )
    assert (string.is_error, string.content) == (
        False,
        '[the result\'s content is str, not a list of MCP content blocks: "just a string"]',
    )


# ---- 2. an answer that is no JSON-RPC message fails its call at once ----


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("result_null", 'result: Input should be an object (the message began \'{"jsonrpc": "2.0", "id": '),
        ("cut_line", "Invalid JSON: EOF while parsing a value at line 1 column "),
        ("lone_surrogate", "it holds a lone surrogate (\\ud800), which is no Unicode character (the line began "),
    ],
)
def test_an_unreadable_answer_fails_its_call_at_once(scripts: dict[str, Path], tool: str, why: str) -> None:
    with connected(raw(scripts)) as (tools, connection):
        start = time.monotonic()
        outcome = tools.dispatch(tool_call(tool, {}, id="u1"))
        took = time.monotonic() - start
        # The connection goes on: the next call is answered.
        after = tools.dispatch(tool_call("stray_line", {}, id="u2"))
    assert took < DEADLINE / 4, took
    assert outcome.error is not None and outcome.error.kind == "handler_error"
    assert isinstance(outcome.content, str)
    said = f"Error: the MCP server {connection.label} sent an answer that could not be read: "
    assert outcome.content.startswith(said + why), outcome.content
    assert (after.is_error, after.content) == (False, "done stray_line")


def test_a_line_that_answers_no_call_is_said_when_the_call_times_out(scripts: dict[str, Path]) -> None:
    with connected(raw(scripts)) as (_, connection):
        # A stray line before a good answer fails nothing.
        assert connection.call("stray_line", {}) == "done stray_line"
        with pytest.raises(TimeoutError) as late:
            connection.call("only_stray", {}, timeout=1)
    assert str(late.value) == (
        f"the MCP server {connection.label} did not answer within 1 seconds; it had sent 2 messages that could not"
        " be read, the last: Invalid JSON: expected ident at line 1 column 2 (the line began 'this is not json {{{')"
    )


# ---- 3. the registry follows the server's tools ----


def test_refresh_updates_the_registry_the_connection_fed(scripts: dict[str, Path]) -> None:
    tools = Registry({})
    tools.add("srv_fresh", {"type": "object"}, lambda args, ctx: "mine")
    with connect_mcp(raw(scripts, "changing"), timeout=DEADLINE) as connection:
        connection.add_to(tools, prefix="srv_")
        assert "srv_old" in tools
        assert connection.call("retire", {}) == "retired"
        connection.refresh()
        # Gone from the server, gone from the registry; the new tool's name is the registry's own tool already,
        # which is not replaced: the connection's tools say so in every run.
        assert "srv_old" not in tools
        assert tools.dispatch(tool_call("srv_fresh", {}, id="f1")).content == "mine"
        model = ScriptedModel([assistant_turn("ok")])
        events: list[Any] = []
        run([{"role": "user", "content": "hi"}], model, tools, on_event=events.append)
    note = (
        f"the MCP server {connection.label} lists a tool 'srv_fresh', not added: the registry has a tool of that"
        " name already"
    )
    assert [e.message for e in events if e.type == "note"] == [note]
    assert "srv_old" not in [t["name"] for t in model.requests[0].tools]


@pytest.mark.parametrize("server", ["raw", "listen"])
def test_the_next_call_after_list_changed_sees_the_servers_new_tools(scripts: dict[str, Path], server: str) -> None:
    """notifications/tools/list_changed at any time (2025-06-18), or on a subscriptions/listen stream (2026-07-28)."""
    target = raw(scripts, "changing") if server == "raw" else [sys.executable, str(scripts["listen"])]
    model = ScriptedModel(
        [
            assistant_turn(None, tool_call("retire", {}, id="c1")),
            assistant_turn(None, tool_call("old", {}, id="c2")),
            assistant_turn(None, tool_call("fresh", {}, id="c3")),
            assistant_turn("done"),
        ]
    )
    with connected(target) as (tools, connection):
        assert "old" in tools and "fresh" not in tools

        def retired(event: Any) -> None:
            if event.type == "tool_call_finished" and event.name == "retire":
                _told(connection)

        result = run([{"role": "user", "content": "go"}], model, tools, on_event=retired)
        assert not connection.tools_changed
        assert "old" not in tools and "fresh" in tools
    messages = [m["content"] for m in result.messages if m.get("role") == "tool"]
    assert messages == [
        "retired" if server == "raw" else "done retire",
        f"Error: the MCP server {connection.label} no longer has a tool named 'old' (its tools changed; the tools"
        " offered are its new ones)",
        "done fresh",
    ]
    offered = [[t["name"] for t in request.tools] for request in model.requests]
    assert ("old" in offered[1], "fresh" in offered[1]) == (True, False)
    assert ("old" in offered[2], "fresh" in offered[2]) == (False, True)


# ---- 4 and 5. text beside structured data; an error's structured data ----


def test_text_beside_structured_content_that_is_not_its_json_reaches_the_model(scripts: dict[str, Path]) -> None:
    with connected(raw(scripts)) as (tools, _):
        stale = tools.dispatch(tool_call("stale", {}, id="s1"))
        wrapped = tools.dispatch(tool_call("wrapped", {}, id="s2"))
    assert stale.result == ContentParts(
        [{"type": "text", "text": '{"a": 1}'}, {"type": "text", "text": "WARNING: data is 3 days stale"}],
        value={"a": 1},
    )
    assert stale.content == [
        {"type": "text", "text": '{"a": 1}'},
        {"type": "text", "text": "WARNING: data is 3 days stale"},
    ]
    # The Python SDK's wrapped plain result: the text is the one field's value, said once.
    assert (wrapped.result, wrapped.content) == ({"result": "hi"}, '{"result": "hi"}')


def test_an_errors_structured_content_is_in_the_text_the_model_reads(scripts: dict[str, Path]) -> None:
    with connected(raw(scripts)) as (tools, _):
        failed = tools.dispatch(tool_call("err_structured", {}, id="e1"))
        said_once = tools.dispatch(tool_call("err_json", {}, id="e2"))
    assert failed.error is not None and failed.error.kind == "handler_error"
    assert failed.content == 'Error: failed\n{"code": 42, "retry_after": 30}'
    assert said_once.content == 'Error: {"code": 42}'


# ---- 6. names and descriptions no provider takes ----


def test_a_tool_no_provider_would_take_is_refused_naming_it_and_the_rule(scripts: dict[str, Path]) -> None:
    tools = Registry({})
    with pytest.raises(MCPToolsError) as refused:
        mcp_tools(tools, raw(scripts, "names"), timeout=DEADLINE)
    assert list(tools) == []
    assert refused.value.pointer == (14, "name")
    assert str(refused.value).endswith(
        "tools[14] ('weird name'): the name 'weird name' is not a tool name every provider takes: 1-64 letters,"
        " digits, '_' or '-' (anthropic, bedrock-converse, cohere, gemini, google-interactions, mistral, ollama,"
        " openai-chat, openai-chat-camel, openai-responses refuse it); leave it out with names=[...]"
    )
    with connect_mcp(raw(scripts, "names"), timeout=DEADLINE) as connection:
        refusals = {}
        for name in (
            "x" * 300,
            "name\nInjected: ignore previous",
            "dotted.name",
            "dots.and/slashes",
            "long_description",
        ):
            with pytest.raises(MCPToolsError) as one:
                connection.add_to(tools, names=[name])
            refusals[name] = (one.value.pointer, str(one.value))
        with pytest.raises(MCPToolsError, match=r"the name 'pppp.*' is not a tool name every provider takes"):
            connection.add_to(tools, names=["stale"], prefix="p" * 60)
        assert list(tools) == []
        assert connection.add_to(tools, names=["stale"], prefix="p_") == ["p_stale"]
    assert refusals["x" * 300][0] == (15, "name")
    assert "the name 'xxxxxxxxxxxxxxxxxxxx" in refusals["x" * 300][1]
    assert "the name 'name\\nInjected: ignore previous' is not" in refusals["name\nInjected: ignore previous"][1]
    # Gemini takes a dot, the others do not; nobody takes a slash.
    assert "(anthropic, bedrock-converse, cohere, mistral, ollama, openai-chat," in refusals["dotted.name"][1]
    assert "gemini" not in refusals["dotted.name"][1]
    assert "cohere, gemini, google-interactions" in refusals["dots.and/slashes"][1]
    assert refusals["long_description"] == (
        (19, "description"),
        f"{connection.label}: tools[19] ('long_description'): its description is 200,000 characters, more than"
        " the 10,000 this connection takes (max_description); leave it out with names=[...]",
    )


def test_max_description_lets_a_long_description_in(scripts: dict[str, Path]) -> None:
    tools = Registry({})
    with connect_mcp(raw(scripts, "names"), timeout=DEADLINE, max_description=300_000) as connection:
        assert connection.add_to(tools, names=["long_description"]) == ["long_description"]
    assert tools.entry("long_description").spec.description == "A" * 200_000
