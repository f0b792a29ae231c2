"""A request's `tools` field for each provider, and the notes on what was changed to fit it."""

import json

from toolgen_sdk import export_definitions, tool_definitions


def one(tools: list, name: str) -> dict:  # a tool's entry, whatever the provider's shape
    return next(tool for tool in tools if name in json.dumps(tool)[:200])


# --8<-- [start:definitions]
print(json.dumps(one(tool_definitions("anthropic"), "order_status")))
print(json.dumps(one(tool_definitions("openai-chat"), "order_status")))
# --8<-- [end:definitions]

# --8<-- [start:notes]
# OpenAI strict mode: every property required, optional ones nullable; each change is a note.
exported = export_definitions("openai-chat", strict=True)
print(json.dumps(one(exported.tools, "get_current_weather")["function"]["parameters"]["properties"]["unit"]))
for note in exported.notes:
    if note.startswith("get_current_weather:"):
        print(note)
# --8<-- [end:notes]

# --8<-- [start:gemini]
# Gemini's `parameters` field takes an OpenAPI 3.0 subset; the default, parametersJsonSchema, takes JSON Schema.
gemini = export_definitions("gemini", gemini="openapi")
(declarations,) = gemini.tools
print(json.dumps(one(declarations["functionDeclarations"], "order_status")))
# --8<-- [end:gemini]

assert exported.notes and one(exported.tools, "order_status")["function"]["strict"] is True
