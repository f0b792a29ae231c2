"""The generated `agent` module: the loop's public surface, usable without reaching into runtime modules."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from conftest import REPO_ROOT


def test_agent_module_runs_a_scripted_conversation_and_streams_sse() -> None:
    probe = """
from toolgen_sdk import Tools, agent
tools = Tools()

@tools.get_current_weather.handler
def weather(args, ctx):
    return {"location": args.location, "temperature": 20.0, "unit": "celsius"}

call = agent.tool_call("get_current_weather", {"location": "Paris"})
model = agent.ScriptedModel([agent.assistant_turn(None, call), "Sunny, 20 C."])
result = agent.run([{"role": "user", "content": "Weather in Paris?"}], model, tools)
assert (result.text, result.stop_reason) == ("Sunny, 20 C.", "finished"), result
assert result.metrics.tools["get_current_weather"].ok == 1
lines = "".join(agent.sse_lines(agent.run_events([{"role": "user", "content": "hi"}], agent.ScriptedModel(["hello"]), tools)))
assert lines.startswith("event: run_started") and "event: run_finished" in lines
assert sorted(agent.__all__) == sorted(set(agent.__all__))
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT / "generated", capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_importing_the_package_does_not_import_the_loop() -> None:
    probe = (
        "import sys, toolgen_sdk; print(sorted(m for m in sys.modules if m.endswith(('_loop', '_clients', 'agent'))))"
    )
    result: Any = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT / "generated", capture_output=True, text=True, check=False
    )
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
