"""describe_meta / describeMeta: tool meta folded into the description every provider is sent."""

from toolgen_sdk import Tools, export_definitions

# --8<-- [start:fold]
tools = Tools()
tools.add(
    "refund",
    {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    lambda args, ctx: {"ok": True},
    description="Refund an order.",
    meta={"owner": "billing", "tier": 2},
    describe_meta=["owner"],  # a tool file says `describeMeta: [owner]`
)
(refund,) = [tool for tool in tools.tool_definitions("openai-chat") if tool["function"]["name"] == "refund"]
print(repr(refund["function"]["description"]))
# --8<-- [end:fold]

# --8<-- [start:notes]
# Meta that is not folded is not sent, and the export notes say so.
for note in export_definitions("gemini").notes:
    if note.startswith("run_command:") and "meta" in note:
        print(note)
# --8<-- [end:notes]
assert refund["function"]["description"] == "Refund an order.\n\nowner: billing"
