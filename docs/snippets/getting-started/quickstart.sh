# The quick start of getting-started.md, run as written in an empty folder (the page shows its steps).
toolgen init
test -f toolgen.yaml && test -f schemas/tools/get_current_weather.yaml
# What init adds to pyproject.toml, as getting-started.md shows it.
diff pyproject.toml "$(dirname "$0")/init-pyproject.toml"

# The tool of the quick start, as the page shows it (the docs' project has it too).
cp "$(dirname "$0")/../project/tools/order_status.yaml" schemas/tools/

toolgen build
toolgen check
test -f generated/toolgen_sdk/__init__.py

cat > handlers.py <<'EOF'
# --8<-- [start:handlers]
"""The application's handlers, bound to the generated registry."""

from toolgen_sdk import (
    GetCurrentWeatherArgs,
    GetCurrentWeatherResult,
    OrderStatusArgs,
    OrderStatusResult,
    ToolContext,
    Tools,
)

tools = Tools()


@tools.get_current_weather.handler
def weather(args: GetCurrentWeatherArgs, ctx: ToolContext) -> GetCurrentWeatherResult:
    return GetCurrentWeatherResult(location=args.location, temperature=18.0, unit=args.unit)


@tools.order_status.handler
def order_status(args: OrderStatusArgs, ctx: ToolContext) -> OrderStatusResult:
    return OrderStatusResult(order_id=args.order_id, status="shipped")


tools.require_bound()  # fails at start-up if a tool has no handler
# --8<-- [end:handlers]
EOF

cat > dispatch.py <<'EOF'
# --8<-- [start:dispatch]
from handlers import tools
from toolgen_sdk import ToolContext

# A tool call as a model sends it (any wire's call, decoded, has this shape).
call = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "order_status", "arguments": '{"order_id": "AB-123456"}'},
}
outcome = tools.dispatch(call, ToolContext(conversation_id="c1"))
print(outcome.to_message())

# A bad call is a tool message too, never an exception: the model reads it and tries again.
bad = {"id": "call_2", "type": "function", "function": {"name": "order_status", "arguments": '{"order_id": "123"}'}}
print(tools.dispatch(bad).to_message()["content"])
# --8<-- [end:dispatch]
assert outcome.result is not None and outcome.result.status == "shipped"
assert tools.dispatch(bad).error is not None
EOF
python dispatch.py

python -m toolgen_sdk --tools handlers:tools "Where is order AB-123456?"
python -m toolgen_sdk --tools handlers:tools "Where is order AB-123456?" | grep -q "order_status returned"
