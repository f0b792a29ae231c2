"""The generated models: camelCase input, unions discriminated by role and type, Literal aliases, deep immutability."""

import json
from typing import get_args

from toolgen_sdk import (
    FinishReason,
    RunCommandArgs,
    ToolCall,
    ToolCallFunction,
    ToolMessage,
    adapters,
    validate_message,
)

# --8<-- [start:aliases]
# snake_case attributes; camelCase is accepted on input too.
reply = validate_message({"role": "tool", "toolCallId": "call_1", "content": "18 C"})
assert isinstance(reply, ToolMessage) and reply.tool_call_id == "call_1"

# Message is a union discriminated by role, ContentPart by type: a field holds the member model itself.
message = validate_message(
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Let me look."}],
        "toolCalls": [{"id": "call_1", "type": "function", "function": {"name": "order_status", "arguments": "{}"}}],
    }
)
print(type(message).__name__, message.role, message.content[0].text)

# A named enum is a Literal type alias, so a type checker knows the values.
print(get_args(FinishReason))
# --8<-- [end:aliases]

# --8<-- [start:defaults]
# A field with a default is typed without None unless its schema allows null.
args = RunCommandArgs(program="ls")
print(repr(args.cwd), RunCommandArgs.model_fields["cwd"].annotation)
# --8<-- [end:defaults]

# --8<-- [start:frozen]
# Deep immutability: arrays are tuples, free-form objects read-only dicts, at any depth.
print(type(message.tool_calls).__name__)
try:
    message.tool_calls.append(message.tool_calls[0])  # type: ignore[attr-defined]
except AttributeError as error:
    print("refused:", error)
noted = validate_message({"role": "user", "content": "hi", "extras": {"openai": {"ids": [1, 2]}}})
assert noted.extras is not None and noted.extras.openai is not None
try:
    noted.extras.openai["ids"] = (3,)  # type: ignore[index]
except TypeError as error:
    print("refused:", error)
print(json.dumps(noted.extras.openai), noted.model_dump()["extras"])  # still JSON, dumps write lists and dicts

# model_copy(update=...) is how to change a message; what it is given is frozen too.
call = ToolCall(id="call_2", type="function", function=ToolCallFunction(name="order_status", arguments="{}"))
changed = message.model_copy(update={"tool_calls": [call]})
print(type(changed.tool_calls).__name__, changed.tool_calls[0].id)
# --8<-- [end:frozen]

# --8<-- [start:parse]
# The same types come out of provider payloads: a parsed response's finish reason is a FinishReason.
body = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-20250514",
    "content": [{"type": "text", "text": "It is cut."}],
    "stop_reason": "max_tokens",
    "usage": {"input_tokens": 10, "output_tokens": 5},
}
response = adapters.parse_response(body)
print(response.finish.reason, response.finish.raw)
# --8<-- [end:parse]

assert message.role == "assistant" and args.cwd == "."
assert response.finish.reason == "length"
