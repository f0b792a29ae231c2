"""Validators: one ToolgenValidationError listing every problem at its JSON pointer."""

from toolgen_sdk import (
    ToolgenValidationError,
    validate_message,
    validate_messages,
    validate_tool_arguments,
    validate_tool_result,
)

# --8<-- [start:problems]
validate_message({"role": "tool", "toolCallId": "call_1", "content": "18 C"})
try:
    validate_tool_arguments("get_current_weather", '{"location": 5, "unit": "kelvin"}')
except ToolgenValidationError as error:
    for problem in error.problems:
        print(problem)
# --8<-- [end:problems]


# --8<-- [start:more]
def problems(validate, *data):  # the sentences, or [] when the data is valid
    try:
        validate(*data)
    except ToolgenValidationError as error:
        return [str(problem) for problem in error.problems]
    return []


# A list of messages: pointers start at the message's index.
print(problems(validate_messages, [{"role": "user", "content": "hi"}, {"role": "tool", "content": 5}]))
# A result against the tool's output schema; a pattern is quoted as written.
print(problems(validate_tool_result, "order_status", {"order_id": "AB-123456", "status": "lost"}))
print(problems(validate_tool_arguments, "order_status", {"order_id": "123"}))
# The schema decides, not Python's habits: "5" is no integer, 1 no boolean.
print(problems(validate_tool_arguments, "run_command", {"program": "ls", "args": ["-l", 5]}))
# --8<-- [end:more]

# --8<-- [start:nulls]
# An optional argument refuses null unless its schema allows it; left out, it takes its default.
print(problems(validate_tool_arguments, "run_command", '{"program": "ls", "cwd": null}'))
print(validate_tool_arguments("run_command", '{"program": "ls"}').cwd)
# An optional field without a default, sent as null, is refused the same way.
result = {"location": "Oslo", "temperature": 3.5, "unit": "celsius", "conditions": None}
print(problems(validate_tool_result, "get_current_weather", result))
# --8<-- [end:nulls]

assert problems(validate_tool_arguments, "get_current_weather", {"location": "Oslo"}) == []
