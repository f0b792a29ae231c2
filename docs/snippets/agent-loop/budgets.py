"""Budgets and limits: trim the conversation before each model call; stop after so many steps or calls."""

from toolgen_sdk import Tools, agent

tools = Tools()
tools.get_current_weather.handler(lambda args, ctx: {"location": args.location, "temperature": 18.0, "unit": "celsius"})
history = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "Hello! " * 200},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "What's the weather in Oslo?"},
]

# --8<-- [start:budget]
seen: list[agent.BudgetInfo] = []


def budget(messages: list[dict], info: agent.BudgetInfo) -> list[dict] | None:
    """Called before every model call: return the conversation to send from then on, or None to keep it."""
    seen.append(info)
    return keep(messages, info)


# Keep the system messages and the last user turn once the conversation passes about 100 tokens.
keep = agent.keep_last_turns(1, above_input_tokens=100)
model = agent.ScriptedModel(["Sunny and 18 °C."])
result = agent.run(history, model, tools, budget=budget)
print(seen[0].step, seen[0].last_input_tokens, seen[0].estimated_input_tokens)
print([message["role"] for message in model.requests[0].messages])
# --8<-- [end:budget]
assert seen[0].last_input_tokens is None and seen[0].estimated_input_tokens > 100
assert [m["role"] for m in model.requests[0].messages] == ["system", "user"]

# --8<-- [start:tokenizer]
# A real tokenizer instead of "about four characters a token" (tiktoken, or any function of the messages):
words = agent.token_counter(str.split)  # counts what str.split returns for each message's text
result = agent.run(history, agent.ScriptedModel(["Sunny."]), tools, budget=budget, token_estimate=words)
print(seen[-1].estimated_input_tokens)
# --8<-- [end:tokenizer]
assert seen[-1].estimated_input_tokens < seen[0].estimated_input_tokens

# --8<-- [start:limits]
ask = [{"role": "user", "content": "Weather in Oslo, again and again?"}]
again = agent.assistant_turn(None, agent.tool_call("get_current_weather", {"location": "Oslo"}))
print(agent.run(ask, agent.ScriptedModel([again] * 5), tools, max_steps=3).stop_reason)
print(agent.run(ask, agent.ScriptedModel([again] * 5), tools, max_tool_calls=2).stop_reason)
# --8<-- [end:limits]
assert agent.run(ask, agent.ScriptedModel([again] * 5), tools, max_steps=3).steps == 3

# --8<-- [start:hooks]
log: list[str] = []
hooks = agent.Hooks(
    before_model=lambda step, request: log.append(f"model call {step}"),  # may return a replacement Request
    after_tool=lambda report: log.append(f"{report.name}: {report.status}"),  # a CallReport
)
agent.run(ask, agent.ScriptedModel([again, "Sunny."]), tools, hooks=hooks)
print(log)
# --8<-- [end:hooks]
assert log == ["model call 1", "get_current_weather: ok", "model call 2"]
