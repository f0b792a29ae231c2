"""Durable runs: a run waiting for approval outlives its server; the next one on the database decides it."""

import atexit
import shutil
import tempfile
import time

from toolgen_sdk import Tools, agent
from toolgen_sdk._runtime import DurableRuns

# --8<-- [start:runs]
tools = Tools()
tools.get_current_weather.handler(lambda args, ctx: {"location": args.location, "temperature": 18.0, "unit": "celsius"})
tools.add("send_report", {"type": "object"}, lambda args, ctx: "sent", requires_approval=True)


def answer(request) -> dict | str:
    """The model's next turn, read from the conversation so far (a resumed run picks up where it was)."""
    answered = {message.get("name") for message in request.messages if message.get("role") == "tool"}
    if "get_current_weather" not in answered:
        return agent.assistant_turn(None, agent.tool_call("get_current_weather", {"location": "Oslo"}, id="call_1"))
    if "send_report" not in answered:
        return agent.assistant_turn(None, agent.tool_call("send_report", {}, id="call_2"))
    return "Report sent: Oslo is at 18 °C."


def durable_runs(database_url: str) -> DurableRuns:
    # Every run's settings are one RunOptions: hooks, budget, stream_retry, limits, deadline, settings, telemetry.
    options = agent.RunOptions(stream=True, max_steps=6)
    return DurableRuns(tools, agent.ScriptedModel([answer] * 3), database_url=database_url, options=options)


# --8<-- [end:runs]


folder = tempfile.mkdtemp()
atexit.register(shutil.rmtree, folder, ignore_errors=True)

# --8<-- [start:wait]
database_url = f"sqlite:///{folder}/runs.sqlite"
runs = durable_runs(database_url)
run_id = runs.start([{"role": "user", "content": "Send the Oslo weather report."}], conversation_id="report")
while runs.store.run(run_id).status != "awaiting_approval":
    time.sleep(0.05)
runs.close()  # the server goes away while the run waits for a person
# --8<-- [end:wait]
# --8<-- [start:resume]
runs = durable_runs(database_url)  # the next server on the database resumes its unfinished runs
decided = runs.decide(run_id, "call_2", agent.Approval.approve())
again = runs.decide(run_id, "call_2", agent.Approval.deny())  # a call is decided once
ended = runs.result(run_id, timeout=30)  # waits for the run's last write, without polling
runs.close()
print(decided, again, ended.status, ended.state["stop_reason"])
print(ended.state["messages"][-1]["content"])
# --8<-- [end:resume]

# The weather call finished before the server went away: it was not made again.
assert [m.get("name") for m in ended.state["messages"] if m["role"] == "tool"] == ["get_current_weather", "send_report"]
assert ended.status == "finished"
