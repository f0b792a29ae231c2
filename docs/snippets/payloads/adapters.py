"""The same conversions in the generated package: `from toolgen_sdk import adapters`."""

import json
from pathlib import Path

from toolgen_sdk import adapters

import toolgen

body = json.loads(Path(__file__).with_name("weather.response.json").read_text())

# --8<-- [start:parse]
response = adapters.parse_response(body)  # typed: AssistantMessage, Finish, Usage
print(response.finish.reason, response.finish.raw, response.usage.output_tokens)
print(response.message.tool_calls[0].function.name, response.message.tool_calls[0].function.arguments)
# --8<-- [end:parse]

# --8<-- [start:encode]
messages = [
    {"role": "system", "content": "You answer weather questions."},
    {"role": "user", "content": "What's the weather in Paris?"},
]
request = adapters.encode_request(messages, "anthropic", model="claude-sonnet-4-20250514", max_tokens=1024)
print(sorted(request), "get_current_weather" in [tool["name"] for tool in request["tools"]])
print(adapters.parse_request(request)[1].content)  # the conversation back, as list[Message]
# --8<-- [end:encode]

# --8<-- [start:refuse]
# A tool result without its call is refused before a body is built.
try:
    adapters.encode_request([*messages, {"role": "tool", "tool_call_id": "call_9", "content": "18 C"}], "anthropic")
except Exception as error:
    print(type(error).__name__, str(error).splitlines()[-1].strip())
# --8<-- [end:refuse]

# --8<-- [start:notes]
encoded = adapters.encode_request_noted(messages, "anthropic", tools=[], model="claude-sonnet-4-20250514", seed=7)
print(encoded.wire, encoded.notes)
# --8<-- [end:notes]

# --8<-- [start:convert]
gemini = adapters.convert(body, "gemini")
print(json.dumps(gemini["candidates"][0]["content"]["parts"][-1]))
# --8<-- [end:convert]

# --8<-- [start:dropped]
# toolgen's own convert_noted names what a response loses on the way to another wire.
converted = toolgen.convert_noted(Path(__file__).with_name("weather.response.json"), to_wire="openai-chat")
for note in converted.notes:
    print(note)
# --8<-- [end:dropped]

# --8<-- [start:error]
overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
try:
    adapters.parse_response(overloaded)
except adapters.ProviderError as error:
    print(error.wire, error.type, error.message)
# --8<-- [end:error]
assert response.finish.reason == "tool_calls"
