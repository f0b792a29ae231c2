"""toolgen's MCP server: a conversation per MCP session (or the one a call names), serverInfo's name and version,
annotations from the tool definition, and the `$schema` of a tool's schemas kept through build, export and MCP."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.mcp_helpers import DEADLINE, child_env, http_server
from support.projects import SOURCE_PACKAGE, Project, run_sdk

mcp = pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install -e '.[mcp]'")

from toolgen.runtime import Registry  # noqa: E402
from toolgen.runtime.mcp.server import mcp_server  # noqa: E402
from toolgen.runtime.mcp.sessions import CONVERSATION_KEY, UNKNOWN_VERSION, package_version  # noqa: E402

TODO = [{"id": "1", "content": "pack the tent", "status": "pending"}]
OTHER = [{"id": "9", "content": "book the train", "status": "completed", "priority": "high"}]


def _serve(source_build: Path) -> tuple[tuple[str, ...], Path, dict[str, str]]:
    """`python -m <package> mcp` of the repo's own project, built by this checkout into a temporary folder."""
    return (sys.executable, "-m", SOURCE_PACKAGE, "mcp"), source_build, child_env()


@pytest.fixture(scope="module")
def source_server(source_build: Path) -> Iterator[str]:
    """One HTTP server of the repo's own project for the module's tests, which share it as clients do: each opens
    sessions of its own and names conversations no other test names."""
    with http_server(*_serve(source_build)) as url:
        yield url


def in_time(function: Callable[..., Any], *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await function(*args)

    return anyio.run(bounded)


async def _todos(client: Any, meta: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    result = await client.call_tool("todo_read", {}, meta=meta)
    assert not result.is_error, result.content
    todos: list[dict[str, Any]] = result.structured_content["todos"]
    return todos


async def _write(client: Any, todos: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
    result = await client.call_tool("todo_write", {"todos": todos}, meta=meta)
    assert not result.is_error and result.structured_content == {"count": len(todos)}, result.content


# ---- a conversation per MCP session ----


async def _two_sessions(url: str) -> dict[str, Any]:
    # Both sessions open at once, on one server: what one writes, the other must not read.
    async with mcp.Client(url, mode="legacy") as first, mcp.Client(url, mode="legacy") as second:
        await _write(first, TODO)
        seen: dict[str, Any] = {"first": await _todos(first), "second before": await _todos(second)}
        await _write(second, OTHER)
        seen["second"] = await _todos(second)
        seen["first again"] = await _todos(first)
        seen["info"] = (first.server_info, second.server_info)
    async with mcp.Client(url, mode="legacy") as third:
        seen["third"] = await _todos(third)
    return seen


def test_two_http_sessions_of_one_server_keep_their_own_todo_lists(source_server: str) -> None:
    seen = in_time(_two_sessions, source_server)
    assert seen["first"] == TODO and seen["first again"] == TODO
    assert seen["second before"] == [] and seen["second"] == OTHER
    assert seen["third"] == []  # a new session starts a new conversation
    # serverInfo names the package and says its version: not installed, it says its __version__ (package_version).
    for info in seen["info"]:
        assert (info.name, info.version) == (SOURCE_PACKAGE, "0.1.0")


async def _named(url: str) -> dict[str, Any]:
    trip, work = {CONVERSATION_KEY: "trip"}, {CONVERSATION_KEY: "work"}
    # mode="auto" speaks the 2026-07-28 protocol here: its requests carry no session.
    async with mcp.Client(url) as first, mcp.Client(url) as second:
        await _write(first, TODO, trip)
        await _write(first, OTHER)
        seen = {
            "version": first.protocol_version,
            "trip, other client": await _todos(second, trip),
            "work": await _todos(second, work),
            "unnamed": await _todos(first),
            "info": first.server_info,
        }
        for bad in (5, "", "x" * 201):
            refused = await first.call_tool("todo_read", {}, meta={CONVERSATION_KEY: bad})
            seen.setdefault("refused", []).append((refused.is_error, refused.content[0].text))
    return seen


def test_a_call_names_its_conversation_in_meta_and_a_sessionless_call_shares_nothing(source_server: str) -> None:
    seen = in_time(_named, source_server)
    assert seen["version"] == "2026-07-28"
    assert seen["trip, other client"] == TODO  # every call that names a conversation shares it
    assert seen["work"] == []
    assert seen["unnamed"] == []  # no session and no name: the call's conversation is its own
    assert (seen["info"].name, seen["info"].version) == (SOURCE_PACKAGE, "0.1.0")
    message = (
        f"Error: _meta[{CONVERSATION_KEY!r}], the conversation the call belongs to, must be a string of 1 to 200 "
        "characters"
    )
    assert seen["refused"] == [(True, message)] * 3


async def _stdio_session(server: Any, mode: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async with mcp.Client(server, mode=mode) as client:
        await _write(client, TODO)
        return await _todos(client), await _todos(client, {CONVERSATION_KEY: "elsewhere"})


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_stdio_server_is_one_session_in_both_protocol_eras(source_build: Path, mode: str) -> None:
    args, cwd, env = _serve(source_build)
    server = mcp.StdioServerParameters(command=args[0], args=list(args[1:]), cwd=str(cwd), env=env)
    own, elsewhere = in_time(_stdio_session, server, mode)
    assert own == TODO and elsewhere == []


WHOAMI = """\
import sys
from toolgen.runtime import Registry, serve_mcp

registry = Registry({})
registry.add(
    "whoami",
    {"type": "object", "properties": {}},
    lambda args, ctx: {"conversation": ctx.conversation_id},
    output_schema={"type": "object", "properties": {"conversation": {"type": "string"}}},
)
host, _, port = sys.argv[2].rpartition(":")
serve_mcp(registry, transport="http", host=host, port=int(port), name="whoami", version="2.5.0")
"""


async def _whoami(url: str) -> dict[str, Any]:
    async def ask(client: Any, meta: dict[str, Any] | None = None) -> str:
        result = await client.call_tool("whoami", {}, meta=meta)
        assert not result.is_error, result.content
        conversation: str = result.structured_content["conversation"]
        return conversation

    async with mcp.Client(url, mode="legacy") as first, mcp.Client(url, mode="legacy") as second:
        return {
            "first": [await ask(first), await ask(first)],
            "second": await ask(second),
            "named": await ask(second, {CONVERSATION_KEY: "chat 42"}),
            "info": first.server_info,
        }


def test_each_session_has_a_conversation_id_of_its_own_and_a_named_one_is_taken_as_it_is(tmp_path: Path) -> None:
    script = tmp_path / "whoami.py"
    script.write_text(WHOAMI, encoding="utf-8")
    with http_server((sys.executable, str(script)), tmp_path, child_env()) as url:
        seen = in_time(_whoami, url)
    first, again = seen["first"]
    assert first == again and first.startswith("mcp-session-")  # derived from the session id, not the id itself
    assert seen["second"].startswith("mcp-session-") and seen["second"] != first
    assert seen["named"] == "chat 42"
    assert (seen["info"].name, seen["info"].version) == ("whoami", "2.5.0")


def test_the_demo_keeps_the_todo_lists_of_the_latest_conversations_only(source_package: Any, tmp_path: Path) -> None:
    runtime = importlib.import_module(f"{SOURCE_PACKAGE}._runtime")
    handlers = importlib.import_module(f"{SOURCE_PACKAGE}._runtime.demo.handlers")
    registry = source_package.Tools()
    handlers.bind_demo_handlers(registry, tmp_path)

    def call(name: str, conversation: str, arguments: dict[str, Any]) -> Any:
        call = {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}
        outcome = registry.dispatch(call, runtime.ToolContext(conversation_id=conversation))
        assert not outcome.is_error, outcome.content
        return outcome.result.model_dump(mode="json", exclude_none=True)

    call("todo_write", "first", {"todos": TODO})
    for number in range(handlers.MOST_TODO_LISTS - 1):
        call("todo_write", f"c{number}", {"todos": OTHER})
    call("todo_write", "first", {"todos": TODO})  # written again: the newest now
    call("todo_write", "one more", {"todos": OTHER})
    assert call("todo_read", "first", {}) == {"todos": TODO}
    assert call("todo_read", "c0", {}) == {"todos": []}  # the oldest list went
    assert call("todo_read", "one more", {}) == {"todos": OTHER}


# ---- serverInfo ----


def test_server_info_says_the_version_of_the_package_the_tools_come_from() -> None:
    server = mcp_server(Registry({}), name="toolgen")
    # This runtime is toolgen's own (the package `toolgen`, installed): its distribution's version.
    assert server.server_info.version == importlib.metadata.version("toolgen") == package_version()
    assert mcp_server(Registry({}), version="3.1.4").server_info.version == "3.1.4"
    assert package_version("no_such_package_here") == UNKNOWN_VERSION


# ---- annotations from the tool definition ----

HINTS = {
    "get_current_weather": {"readOnlyHint": True, "openWorldHint": True},
    "run_command": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
    "show_order_status": {"readOnlyHint": True, "openWorldHint": False},
    "todo_read": {"readOnlyHint": True, "openWorldHint": False},
    "todo_write": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
}


async def _listed(server: Any) -> dict[str, Any]:
    async with mcp.Client(server) as client:
        listed = await client.list_tools()
    return {tool.name: tool.annotations.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools}


def test_annotations_flow_from_the_schema_files_to_tools_the_export_and_the_server(
    source_package: Any, source_build: Path
) -> None:
    assert {name: dict(spec.annotations) for name, spec in source_package.TOOLS.items()} == HINTS
    exported = source_package.export_definitions("mcp").tools
    assert {entry["name"]: entry["annotations"] for entry in exported} == HINTS
    args, cwd, env = _serve(source_build)
    server = mcp.StdioServerParameters(command=args[0], args=list(args[1:]), cwd=str(cwd), env=env)
    assert in_time(_listed, server) == HINTS


def test_an_annotation_hint_of_another_type_is_refused_at_build(make_project: Callable[..., Project]) -> None:
    project = make_project("hint_types")
    project.write(
        "schemas/tools.yaml",
        """\
        tools:
          - name: lookup
            annotations: {readOnlyHint: "yes", title: Lookup}
            inputSchema: {type: object}
        """,
    )
    result = project.cli("build")
    assert result.returncode != 0
    assert (
        'schemas/tools.yaml:3:33: error tool-shape /tools/0/annotations/readOnlyHint: expected a boolean, got "yes"'
        in result.stdout + result.stderr
    )


# ---- $schema kept ----

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
DIALECT_TOOLS = f"""\
tools:
  - name: old
    description: A tool imported from a server that writes draft-07 schemas.
    inputSchema:
      $schema: "{DRAFT_07}"
      type: object
      properties: {{a: {{type: string}}, b: {{type: string}}}}
      dependencies: {{a: {{properties: {{b: {{minLength: 3}}}}}}}}
    outputSchema:
      $schema: "{DRAFT_07}"
      type: object
      properties: {{ok: {{type: boolean}}}}
"""


@pytest.fixture(scope="module")
def dialect_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DIALECT_TOOLS built once for the module, as package `dialect`; the tests that use it only read it."""
    project = Project(tmp_path_factory.mktemp("dialect"), "dialect")
    project.write("schemas/tools.yaml", DIALECT_TOOLS)
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    assert (project.package_dir / "__main__.py").is_file()  # `python -m dialect mcp` serves it
    return project.root


def test_the_schema_keyword_is_kept_in_tools_and_the_mcp_export_and_dropped_for_gemini_with_a_note(
    dialect_root: Path,
) -> None:
    seen = run_sdk(
        dialect_root,
        """\
        import json
        import dialect as sdk

        spec = sdk.TOOLS["old"]
        problems = []
        try:
            sdk.validate_tool_arguments("old", {"a": "q", "b": "ab"})
        except sdk.ToolgenValidationError as error:
            problems = [p.pointer for p in error.problems]
        exports = {f: sdk.export_definitions(f) for f in ("mcp", "anthropic", "gemini")}
        openapi = sdk.export_definitions("gemini", gemini="openapi")
        print(json.dumps({
            "input": spec.input_schema.get("$schema"),
            "output": spec.output_schema.get("$schema"),
            "problems": problems,
            "tools": {f: e.tools for f, e in exports.items()},
            "notes": {f: list(e.notes) for f, e in exports.items()},
            "openapi": [openapi.tools, list(openapi.notes)],
        }))
        """,
    )
    assert seen["input"] == seen["output"] == DRAFT_07
    assert seen["problems"] == ["/b"]  # still checked under draft-07 (`dependencies`)
    (mcp_entry,) = seen["tools"]["mcp"]
    assert mcp_entry["inputSchema"]["$schema"] == mcp_entry["outputSchema"]["$schema"] == DRAFT_07
    assert seen["tools"]["anthropic"][0]["input_schema"]["$schema"] == DRAFT_07
    (declaration,) = seen["tools"]["gemini"][0]["functionDeclarations"]
    assert "$schema" not in declaration["parametersJsonSchema"] and "$schema" not in declaration["responseJsonSchema"]
    dropped = [
        f"old: {field}'s $schema {DRAFT_07!r} is not sent to gemini (it refuses the keyword); toolgen still checks "
        "the values under that draft"
        for field in ("inputSchema", "outputSchema")
    ]
    assert [note for note in seen["notes"]["gemini"] if "$schema" in note] == dropped
    assert not any("$schema" in note for note in seen["notes"]["mcp"] + seen["notes"]["anthropic"])
    # Gemini's OpenAPI subset drops it with the other annotation keywords, as `toolgen lint` says (schema/fit.py).
    (openapi_declaration,) = seen["openapi"][0][0]["functionDeclarations"]
    assert "$schema" not in json.dumps(openapi_declaration)


async def _input_schema(server: Any) -> Any:
    async with mcp.Client(server) as client:
        (tool,) = (await client.list_tools()).tools
    return tool.input_schema, tool.output_schema


def test_the_mcp_server_lists_the_schema_keyword_as_written(dialect_root: Path) -> None:
    generated = dialect_root / "generated"
    server = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "dialect", "mcp"], cwd=str(generated), env=child_env()
    )
    listed_input, listed_output = in_time(_input_schema, server)
    assert listed_input["$schema"] == listed_output["$schema"] == DRAFT_07
    assert listed_input["dependencies"] == {"a": {"properties": {"b": {"minLength": 3}}}}


def test_api_export_keeps_the_schema_keyword(make_project: Callable[..., Project]) -> None:
    project = make_project("api_dialect")
    project.write("schemas/tools.yaml", DIALECT_TOOLS)
    result = project.cli("export", "--format", "mcp")
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads(result.stdout)
    assert entry["inputSchema"]["$schema"] == DRAFT_07
