"""Code for packages built by earlier versions, as it reads now."""

import pydantic
from toolgen_sdk import (
    Message,
    RunCommandArgs,
    TextPart,
    ToolContext,
    Tools,
    adapters,
    validate_content_part,
    validate_message,
)

data = {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "tool_calls": []}

# --8<-- [start:unions]
# Was: Message.model_validate(data).root
message = validate_message(data)  # or: pydantic.TypeAdapter(Message).validate_python(data)
same = pydantic.TypeAdapter(Message).validate_python(data)
part = validate_content_part({"type": "text", "text": "hi"})
print(type(message).__name__, type(same).__name__, message.content[0].text, isinstance(part, TextPart))
# --8<-- [end:unions]

# --8<-- [start:literals]
# Was: response.finish.reason.root == "length", and `if args.cwd is not None` for a field with a default.
body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "..."}, "finish_reason": "length"}]}
response = adapters.parse_response(body, "openai-chat")
print(response.finish.reason == "length", RunCommandArgs(program="ls").cwd)
# --8<-- [end:literals]

# --8<-- [start:frozen]
# Was: message.tool_calls.append(call) on a list field.
changed = message.model_copy(update={"content": (TextPart(type="text", text="Changed."),)})
print(type(message.tool_calls).__name__, changed.content[0].text)
# --8<-- [end:frozen]


# --8<-- [start:approval]
# Was: tools.dispatch(call) ran a requiresApproval tool without asking.
def ls(args: RunCommandArgs, ctx: ToolContext) -> dict[str, object]:
    return {"exit_code": 0, "stdout": "", "stderr": "", "truncated": False}


call = {"id": "call_1", "type": "function", "function": {"name": "run_command", "arguments": '{"program": "ls"}'}}
tools = Tools()
tools.run_command.handler(ls)
print(tools.dispatch(call).error.kind)  # approval_required, and the handler did not run
print(tools.dispatch(call, ToolContext(approved=True)).error)  # someone approved it: None
unasked = Tools(require_approval=False)  # dispatch as it was, without asking
unasked.run_command.handler(ls)
print(unasked.dispatch(call).error)
# --8<-- [end:approval]
