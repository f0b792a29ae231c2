"""Hostile input to dispatch: every call gets exactly one tool message, and nothing raises."""

from toolgen_sdk import GetCurrentWeatherArgs, GetCurrentWeatherResult, ToolContext, Tools

tools = Tools()


@tools.get_current_weather.handler
def weather(args: GetCurrentWeatherArgs, ctx: ToolContext) -> GetCurrentWeatherResult:
    if args.location == "Atlantis":
        raise SystemExit("a handler that tries to end the process")
    return GetCurrentWeatherResult(location=args.location, temperature=18.0, unit="celsius")


def call(arguments: object, name: object = "get_current_weather", id: object = "call_1") -> dict[str, object]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


hostile = {
    "cut short": call('{"location": "Par'),
    "a key twice": call('{"location": "Paris", "location": "Rome"}'),
    "NaN": call('{"location": "Paris", "unit": NaN}'),
    "nested 200 deep": call("[" * 200 + "]" * 200),
    "a huge integer": call('{"location": ' + "9" * 5000 + "}"),
    "NaN as data": call({"location": float("nan")}),
    "not an object": "get_current_weather(Paris)",
    "a name that is not a string": call("{}", name=42),
    "a handler raising SystemExit": call('{"location": "Atlantis"}'),
}
context = ToolContext(conversation_id="c1")
for what, tool_call in hostile.items():
    outcome = tools.dispatch(tool_call, context)
    assert outcome.is_error and outcome.error is not None
    print(f"{what:30} {outcome.error.kind}")

# A call without an id gets a stable one made from its name and arguments (never '' or 'None').
first = tools.dispatch(call('{"location": "Paris"}', id=None), context)
again = tools.dispatch(call('{"location": "Paris"}', id=""), context)
assert first.tool_call_id == again.tool_call_id and first.tool_call_id.startswith("call_toolgen_")
print(first.to_message()["tool_call_id"][:13], "...", first.to_message()["content"])
