"""A ToolSet exports its definitions once per wire, and request bodies built from it are the plain list's."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pytest
from support.projects import SOURCE_PACKAGE

from toolgen.runtime import WIRES, Request, ToolSet, encode_request, export_tools

TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_weather",
        "description": "The weather in a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    {"name": "get_time", "inputSchema": {"properties": {"zone": {"enum": ["utc", "local"]}}}, "strict": True},
]
MESSAGES = [{"role": "user", "content": "Weather and time in Paris?"}]


@pytest.mark.parametrize("wire", WIRES)
def test_a_request_from_a_tool_set_is_the_request_from_the_list(wire: str) -> None:
    tool_set = ToolSet(TOOLS)
    plain = encode_request(Request(MESSAGES, [dict(t) for t in TOOLS], "m", {}), wire)
    assert encode_request(Request(MESSAGES, tool_set, "m", {}), wire) == plain
    # The second request reuses the first one's export and still says the same.
    assert encode_request(Request(MESSAGES, tool_set, "m", {}), wire) == plain


def test_the_export_is_made_once_and_made_anew_when_the_set_changes() -> None:
    tool_set = ToolSet(TOOLS)
    first = tool_set.exported("anthropic")
    assert first == export_tools(TOOLS, "anthropic").tools
    again = tool_set.exported("anthropic")
    assert again == first and again is not first
    assert again[0]["input_schema"] is first[0]["input_schema"], "exported anew instead of reused"
    again.append({"name": "mine"})
    again[0]["name"] = "changed"
    assert tool_set.exported("anthropic") == first, "a body's caller changed the set's export"
    tool_set.append({"name": "get_date", "inputSchema": {"type": "object"}})
    assert [t["name"] for t in tool_set.exported("anthropic")] == ["get_weather", "get_time", "get_date"]
    tool_set[0] = {"name": "get_rain", "inputSchema": {"type": "object"}}
    assert tool_set.exported("anthropic")[0]["name"] == "get_rain"


def test_a_tool_set_refuses_an_unknown_wire_and_a_schema_export_cannot_read() -> None:
    with pytest.raises(ValueError, match="unknown provider format 'nope'"):
        ToolSet(TOOLS).exported("nope")
    bad = ToolSet([{"name": "broken", "inputSchema": False}])
    with pytest.raises(ValueError, match="broken: an input schema of False cannot be sent"):
        encode_request(Request(MESSAGES, bad, "m", {}), "anthropic")


def test_the_generated_encode_request_sends_the_package_tools_and_takes_a_tool_set(source_package: ModuleType) -> None:
    adapters = importlib.import_module(f"{SOURCE_PACKAGE}.adapters")
    tools = importlib.import_module(f"{SOURCE_PACKAGE}.tools")
    own = adapters.encode_request(MESSAGES, "openai-chat", model="m")
    assert own["tools"] == tools.tool_definitions("openai-chat")
    assert adapters.encode_request(MESSAGES, "openai-chat", model="m") == own
    given = adapters.encode_request(MESSAGES, "gemini", tools=adapters.ToolSet(TOOLS), model="m")
    assert given == adapters.encode_request(MESSAGES, "gemini", tools=TOOLS, model="m")
