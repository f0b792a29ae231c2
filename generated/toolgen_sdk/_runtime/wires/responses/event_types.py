# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""OpenAI Responses' stream event types that carry nothing new: what they hold comes again in a later event."""

from __future__ import annotations

# Event types documented that carry nothing the item's output_item.done (or the final response) does not carry.
WHOLE_LATER = frozenset(
    {
        "response.queued",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.content_part.done",
        "response.refusal.done",
        "response.reasoning_text.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
    }
)
# Progress events of the built-in tools' items (web search, file search, code interpreter, image generation, MCP).
TOOL_PROGRESS = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call",
    "response.image_generation_call.",
    "response.mcp_",
)


def carries_nothing_new(kind: str) -> bool:
    """Whether an event of type `kind` is one of those: a documented repeat or a built-in tool's progress."""
    return kind in WHOLE_LATER or kind.startswith(TOOL_PROGRESS)
