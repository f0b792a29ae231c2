"""mcp_server(): the same MCP server, embedded; a tool that requires approval asks the client (elicitation)."""

import anyio
import mcp
import mcp.types
from toolgen_sdk import Tools
from toolgen_sdk._runtime import ContentParts, mcp_server

tools = Tools()  # get_current_weather is left without a handler here
tools.add(
    "delete_file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    lambda args, ctx: f"deleted {args['path']}",
    requires_approval=True,
    annotations={"destructiveHint": True},
)
# --8<-- [start:parts]
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="


def chart(args, ctx) -> ContentParts:
    ctx.report_progress(1, total=2, message="drawing")  # a tool_call_progress event in a run; a no-op outside one
    parts = [{"type": "text", "text": "Oslo, this week"}, {"type": "image", "data": PIXEL, "media_type": "image/png"}]
    return ContentParts(parts, value={"city": "Oslo", "days": 7})  # value: served as structuredContent


tools.add("weather_chart", {"type": "object"}, chart, output_schema={"type": "object"})
# --8<-- [end:parts]
asked: list[str] = []


# --8<-- [start:embed]
async def elicit(context, params) -> mcp.types.ElicitResult:
    """The server's approval question: accept approves, decline or cancel denies."""
    asked.append(params.message)
    return mcp.types.ElicitResult(action="accept" if "old.log" in params.message else "decline", content={})


async def main() -> None:
    server = mcp_server(tools, name="files")  # the SDK's low-level Server, to embed in your own
    async with mcp.Client(server, elicitation_callback=elicit) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        print(listed["delete_file"].meta, listed["get_current_weather"].meta)

        approved = await client.call_tool("delete_file", {"path": "old.log"})
        denied = await client.call_tool("delete_file", {"path": "notes.txt"})
        unbound = await client.call_tool("get_current_weather", {"location": "Oslo"})
        print(approved.content[0].text, "|", denied.is_error, "|", unbound.is_error)

        drawn = await client.call_tool("weather_chart", {})
        print([block.type for block in drawn.content], drawn.structured_content)

    async with mcp.Client(mcp_server(tools)) as client:  # a client without elicitation
        print((await client.call_tool("delete_file", {"path": "old.log"})).content[0].text)


anyio.run(main)
print(asked)
# --8<-- [end:embed]
assert asked == ['Allow delete_file({"path": "old.log"})?', 'Allow delete_file({"path": "notes.txt"})?']
