"""TOOLS, the read-only registry of definitions, and Tools(), the typed registry you bind handlers to."""

import asyncio

from toolgen_sdk import (
    TOOLS,
    GetCurrentWeatherArgs,
    GetCurrentWeatherResult,
    RunCommandArgs,
    RunCommandResult,
    ToolContext,
    Tools,
)

# --8<-- [start:registry]
spec = TOOLS["run_command"]
print(spec.name, spec.timeout, spec.requires_approval, spec.args_model.__name__)
# --8<-- [end:registry]

# --8<-- [start:bind]
tools = Tools()


@tools.get_current_weather.handler  # mypy checks the argument and result types
def weather(args: GetCurrentWeatherArgs, ctx: ToolContext) -> GetCurrentWeatherResult:
    return GetCurrentWeatherResult(location=args.location, temperature=18.0, unit="celsius")


call = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_current_weather", "arguments": '{"location": "Paris"}'},
}
outcome = tools.dispatch(call, ToolContext(conversation_id="c1"))
print(outcome.to_message())
# --8<-- [end:bind]


# --8<-- [start:failures]
def ask(name: str, arguments: str) -> str:
    message = tools.dispatch({"id": "call_2", "type": "function", "function": {"name": name, "arguments": arguments}})
    return str(message.to_message()["content"])


print(ask("get_current_weather", "{not json"))  # arguments that are not JSON
print(ask("order_status", '{"order_id": "AB-123456"}'))  # no handler bound
assert ask("get_weather", "{}").startswith("Error: there is no tool named 'get_weather'; the tools are: ")
# --8<-- [end:failures]


# --8<-- [start:approval]
@tools.run_command.handler
def run(args: RunCommandArgs, ctx: ToolContext) -> RunCommandResult:
    return RunCommandResult(exit_code=0, stdout="notes.txt\n", stderr="", truncated=False)


ls = {"id": "call_3", "type": "function", "function": {"name": "run_command", "arguments": '{"program": "ls"}'}}
refused = tools.dispatch(ls)  # requiresApproval: dispatch asks no one, so the handler is not called
print(refused.error.kind if refused.error else None, "|", refused.content)
approved = tools.dispatch(ls, ToolContext(approved=True))  # once someone approved it
print(approved.content)
# --8<-- [end:approval]


# --8<-- [start:converter]
@tools.get_current_weather.result_converter
def as_text(result: GetCurrentWeatherResult) -> str:
    return f"{result.temperature:.0f} degrees {result.unit} in {result.location}"


print(tools.dispatch(call).content)
# --8<-- [end:converter]

# --8<-- [start:runtime]
# A tool defined at run time (MCP style), checked with jsonschema.
tools.add(
    "word_count",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    lambda args, ctx: {"words": len(args["text"].split())},
    description="Count the words of a text.",
)
count = {"id": "call_4", "type": "function", "function": {"name": "word_count", "arguments": '{"text": "a b c"}'}}
print(asyncio.run(tools.adispatch(count)).content)  # the async form
tools.remove("word_count")
# --8<-- [end:runtime]

assert outcome.result is not None and outcome.result.temperature == 18.0
assert refused.error is not None and refused.error.kind == "approval_required"
assert approved.error is None
