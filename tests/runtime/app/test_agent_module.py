"""The generated `agent` module: the loop's public surface, usable without reaching into runtime modules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.projects import SOURCE_PACKAGE


def test_agent_module_runs_a_scripted_conversation_and_streams_sse(source_build: Path) -> None:
    probe = f"""
from {SOURCE_PACKAGE} import Tools, agent
tools = Tools()

@tools.get_current_weather.handler
def weather(args, ctx):
    return {{"location": args.location, "temperature": 20.0, "unit": "celsius"}}

call = agent.tool_call("get_current_weather", {{"location": "Paris"}})
model = agent.ScriptedModel([agent.assistant_turn(None, call), "Sunny, 20 C."])
result = agent.run([{{"role": "user", "content": "Weather in Paris?"}}], model, tools)
assert (result.text, result.stop_reason) == ("Sunny, 20 C.", "finished"), result
assert result.metrics.tools["get_current_weather"].ok == 1
lines = "".join(agent.sse_lines(agent.run_events([{{"role": "user", "content": "hi"}}], agent.ScriptedModel(["hello"]), tools)))
assert lines.startswith("event: run_started") and "event: run_finished" in lines
options = agent.RunOptions(stream=True, max_steps=1)
limited = agent.run([{{"role": "user", "content": "hi"}}], agent.ScriptedModel([agent.assistant_turn(None, call)]), tools, options)
assert (limited.stop_reason, limited.steps) == ("max_steps", 1), limited
assert sorted(agent.__all__) == sorted(set(agent.__all__)) and "RunOptions" in agent.__all__
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=source_build, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_importing_the_package_does_not_import_the_loop_the_clients_or_httpx(source_build: Path) -> None:
    loaded = (
        f"{SOURCE_PACKAGE}.agent",
        f"{SOURCE_PACKAGE}._runtime.loop",
        f"{SOURCE_PACKAGE}._runtime.clients",
        "httpx",
    )
    probe = f"import sys, {SOURCE_PACKAGE}; print(sorted(m for m in sys.modules if m.startswith({loaded!r})))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=source_build, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout


def test_the_command_line_whose_reader_left_stops_without_a_traceback(source_build: Path) -> None:
    # `python -m <package> --events ... | head -1`: the pipe's reader gone before the first event is written.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        result = subprocess.run(
            [sys.executable, "-m", SOURCE_PACKAGE, "--events", "Where is order AB-123456?"],
            cwd=source_build,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(writer)
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""
