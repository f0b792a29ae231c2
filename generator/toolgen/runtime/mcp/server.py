# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""serve_mcp: a registry's tools over MCP (stdio or streamable HTTP) with the official SDK's low-level server.

`tools/list` is the MCP export (`toolgen export --format mcp`): title, annotations, object output schemas, and
under `_meta` toolgen's policies (returnDirect, requiresApproval, timeout), strict, and an output schema MCP's
field cannot hold; a tool without a handler is listed with `_meta.unavailable: true`. `tools/call` is the registry's dispatch (arguments checked against the typed
models, the tool's timeout applied): the result as text (or as image, audio and resource blocks, for a tool
that returns content parts) plus `structuredContent` where the tool has an object output schema, and every
failure as `isError: true` with the sentence the model would read. A tool that
requires approval asks the client through elicitation, and is refused where the client cannot be asked. A call
that carries a progress token gets the handler's `ctx.report_progress()` as `notifications/progress`, each above
the last (server_progress.py).

Each call runs in a conversation of its own MCP session (`ToolContext.conversation_id`), or the one it names under
`_meta["toolgen/conversation"]` (sessions.py): what a tool keeps for a conversation is not seen by other clients.
The annotations (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) are the tool definition's; they are
hints for the client, while toolgen enforces its own policies (requiresApproval, timeout), and a durable run repeats
a call a crash cut short only for a tool whose hints say idempotent or read-only. `serverInfo` names the package and
its version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

import pydantic
import pydantic_core

from ..tools.entry import ToolContext
from ..tools.guards import sendable
from ..tools.outcomes import ContentParts, ToolOutcome
from ..tools.registry import Registry
from ..wires.export import export_tools
from .content import mcp_from_parts
from .sdk import mcp_module, mcp_types, uses_input_required
from .server_progress import forwarded_progress
from .sessions import ConversationError, Conversations, package_version

Transport = Literal["stdio", "http"]
# The key of the approval question inside an InputRequiredResult, and the `_meta` key that marks it.
APPROVAL_KEY = "toolgen/approval"
# The answer form of an approval question: nothing to fill in; accept approves, decline or cancel denies.
_APPROVAL_FORM: Mapping[str, Any] = {"type": "object", "properties": {}}


def _listed(tools: Registry) -> list[dict[str, Any]]:
    entries = export_tools(tools.definitions(), "mcp").tools
    for entry in entries:
        if not tools.entry(entry["name"]).bound:
            entry["_meta"] = {**entry.get("_meta", {}), "unavailable": True}
    return entries


def _content(outcome: ToolOutcome) -> list[dict[str, Any]]:
    if isinstance(outcome.content, str):
        return [{"type": "text", "text": outcome.content}]
    # Images, audio and files as MCP's own blocks; a part MCP has no block for as its JSON text (content.py).
    return mcp_from_parts(outcome.content)


def _structured(tools: Registry, outcome: ToolOutcome) -> Any:
    """The result as JSON data, where the tool has an object output schema (the only kind MCP lists)."""
    if outcome.is_error or outcome.name not in tools:
        return None
    schema = tools.entry(outcome.name).spec.output_schema
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return None
    result = outcome.result
    if isinstance(result, pydantic.BaseModel):
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        data = pydantic_core.to_jsonable_python(result)
    # A lone surrogate (a file name that is no UTF-8, as os.listdir gives it) had made the SDK's writer fail and
    # the stdio server exit: it becomes U+FFFD, as in the text content.
    text = json.dumps(data, ensure_ascii=False)
    cleaned = sendable(text)
    return data if cleaned is text else json.loads(cleaned)


def call_result(tools: Registry, outcome: ToolOutcome) -> dict[str, Any]:
    """A dispatch outcome as an MCP CallToolResult (JSON data)."""
    result: dict[str, Any] = {"content": _content(outcome), "isError": outcome.is_error}
    # A result of content parts: the data they stand for, if any, is the structured result.
    if isinstance(outcome.result, ContentParts):
        outcome = replace(outcome, result=outcome.result.value)
    structured = _structured(tools, outcome)
    if structured is not None:
        result["structuredContent"] = structured
    return result


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Error: {text}"}], "isError": True}


def _can_elicit(ctx: Any) -> bool:
    capabilities = ctx.session.client_capabilities
    elicitation = getattr(capabilities, "elicitation", None)
    # A bare `elicitation: {}` (before modes existed) means form support; url-only does not.
    return elicitation is not None and (
        elicitation.form is not None or elicitation.url is None
    )


def _question(name: str, arguments: Any) -> Any:
    types = mcp_types()
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=f"Allow {name}({text})?",
            requested_schema=dict(_APPROVAL_FORM),
            _meta={APPROVAL_KEY: {"tool": name}},
        )
    )


def _denial(answer: Any) -> str | None:
    """None when the answer approves; else why not, as the loop words a denied call."""
    action = getattr(answer, "action", None)
    if action == "accept":
        return None
    reason = "the user declined" if action == "decline" else "the user cancelled"
    return f"the call was denied: {reason}"


async def _approval(ctx: Any, params: Any, name: str, arguments: Any) -> Any:
    """None when approved; an InputRequiredResult to ask first (2026-07-28); else the error result to send."""
    modern = uses_input_required(ctx.protocol_version)
    answer = (params.input_responses or {}).get(APPROVAL_KEY) if modern else None
    if answer is None:
        if not _can_elicit(ctx):
            return _error(
                f"the tool {name!r} requires approval, and this MCP client cannot be asked for it"
                " (it does not support elicitation)"
            )
        question = _question(name, arguments)
        if modern:
            return mcp_types().InputRequiredResult(
                input_requests={APPROVAL_KEY: question}
            )
        message = mcp_module("mcp.shared.message")
        answer = await ctx.session.send_request(
            question,
            mcp_types().ElicitResult,
            metadata=message.ServerMessageMetadata(related_request_id=ctx.request_id),
        )
    denial = _denial(answer)
    return None if denial is None else _error(denial)


def mcp_server(
    tools: Registry, *, name: str = "toolgen", version: str | None = None
) -> Any:
    """The official SDK's low-level `Server` for `tools`, to run on any transport it offers; `serverInfo` says
    `name` and `version` (default: the version of the package these tools come from, sessions.package_version)."""
    lowlevel = mcp_module("mcp.server.lowlevel")
    types = mcp_types()
    conversations = Conversations()

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[types.Tool.model_validate(entry) for entry in _listed(tools)]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        tool, arguments = params.name, params.arguments or {}
        try:
            conversation = conversations.of(ctx, params)
        except ConversationError as error:
            return types.CallToolResult.model_validate(_error(str(error)))
        entry = tools.entry(tool) if tool in tools else None
        if entry is not None and entry.bound and entry.spec.requires_approval:
            stop = await _approval(ctx, params, tool, arguments)
            if isinstance(stop, dict):
                return types.CallToolResult.model_validate(stop)
            if stop is not None:
                return stop
        call = {
            "id": f"mcp_{ctx.request_id}",
            "type": "function",
            "function": {"name": tool, "arguments": arguments},
        }
        # Asked above when the tool requires approval: the call is approved, or needs none.
        async with forwarded_progress(ctx) as on_progress:
            context = ToolContext(
                conversation_id=conversation, approved=True, on_progress=on_progress
            )
            outcome = await tools.adispatch(call, context)
        return types.CallToolResult.model_validate(call_result(tools, outcome))

    return lowlevel.Server(
        name,
        version=version or package_version(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def parse_address(address: str) -> tuple[str, int]:
    """`HOST:PORT` (an IPv6 host in brackets) as its parts; ValueError saying what is wrong."""
    host, colon, port = address.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{address!r} is not HOST:PORT, e.g. 127.0.0.1:8000")
    return host, int(port)


def serve_mcp(
    tools: Registry,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    name: str = "toolgen",
    version: str | None = None,
) -> None:
    """Serve `tools` over MCP until the client goes away (stdio) or the process is stopped (HTTP, at
    http://HOST:PORT/mcp)."""
    anyio = mcp_module("anyio")
    server = mcp_server(tools, name=name, version=version)
    if transport == "http":
        uvicorn = mcp_module("uvicorn")
        app = server.streamable_http_app(host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        uvicorn.Server(config).run()
        return
    if transport != "stdio":
        raise ValueError(f"transport {transport!r} is not one of: stdio, http")
    stdio = mcp_module("mcp.server.stdio")

    async def run_stdio() -> None:
        async with stdio.stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run_stdio)
