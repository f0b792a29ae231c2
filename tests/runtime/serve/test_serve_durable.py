"""Durable runs without the HTTP service: a call cut short by SIGKILL runs again only when its tool is safe to repeat."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from toolgen.runtime.serve.durable import safe_to_repeat

pytest.importorskip("dbos", reason="the durable extra (dbos) is not installed")

# A process that starts (or, with "resume", just resumes) one durable run of three calls: `lookup` is marked
# idempotent, `write` is not. Each handler logs its start and end; the one named in block.txt hangs.
SCRIPT = """
import json, sys, time
from pathlib import Path
import pydantic
from toolgen.runtime import (
    DurableRuns, ModelClientBase, Registry, ScriptedModel, ToolSpec, assistant_turn, tool_call,
)

here = Path(sys.argv[1])

class Args(pydantic.BaseModel):
    key: str

def spec(name, hints):
    schema = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    return ToolSpec(name, None, name, Args, None, schema, None, annotations=hints)

registry = Registry({"lookup": spec("lookup", {"idempotentHint": True}), "write": spec("write", {})})

def handler(name):
    def run(args, ctx):
        with (here / "calls.log").open("a") as log:
            log.write(f"start {name} {args.key}\\n")
        block = here / "block.txt"
        if block.exists() and block.read_text() == f"{name} {args.key}":
            (here / "blocked.txt").write_text("yes")
            time.sleep(600)
        with (here / "calls.log").open("a") as log:
            log.write(f"end {name} {args.key}\\n")
        return f"{name} {args.key} done"
    return run

registry.entry("lookup").handler(handler("lookup"))
registry.entry("write").handler(handler("write"))

class Model(ModelClientBase):
    def complete(self, request):
        if request.messages[-1]["role"] == "tool":
            return ScriptedModel(["all done"]).complete(request)
        calls = [tool_call("lookup", {"key": "a"}), tool_call("write", {"key": "b"}),
                 tool_call("lookup", {"key": "c"})]
        return ScriptedModel([assistant_turn(None, *calls)]).complete(request)

runs = DurableRuns(registry, Model(), database_url=f"sqlite:///{here / 'runs.sqlite'}", name="durable-test")
if sys.argv[2] == "start":
    runs.start([{"role": "user", "content": "go"}], None)
while True:
    [run_id] = runs.store.runs_with_status("finished") or [None]
    if run_id:
        print(json.dumps(runs.store.run(run_id).state["messages"]))
        break
    time.sleep(0.05)
runs.close()
"""


def _process(tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(tmp_path / "durable_run.py"), str(tmp_path), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def _checkpointed_calls(database: Path) -> int:
    """How many tool calls DBOS has recorded as finished steps (its operation_outputs table)."""
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as connection:
        query = "SELECT count(*) FROM operation_outputs WHERE function_name = 'toolgen.tool_call'"
        [(count,)] = connection.execute(query).fetchall()
    return int(count)


@pytest.mark.parametrize(
    ("blocked", "ran"),
    [
        # lookup is idempotent: cut short by the kill, it runs again after the restart and answers the model.
        ("lookup a", ["start lookup a", "start lookup a", "end lookup a", "start write b", "end write b"]),
        # write is not: cut short, it is answered as interrupted and never started a second time.
        ("write b", ["start lookup a", "end lookup a", "start write b"]),
    ],
)
def test_a_call_cut_short_by_sigkill_runs_again_only_when_its_tool_is_safe_to_repeat(
    tmp_path: Path, blocked: str, ran: list[str]
) -> None:
    (tmp_path / "durable_run.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "block.txt").write_text(blocked, encoding="utf-8")
    first = _process(tmp_path, "start")
    _wait_for(tmp_path / "blocked.txt", first)
    # The kill comes while the blocked call runs and after the others have ended and been recorded: a kill in
    # the moment between a handler's end and its step's checkpoint is the case the idempotent hint is for.
    others = {"lookup a", "write b", "lookup c"} - {blocked}
    deadline = time.monotonic() + 30
    while not all(f"end {call}" in (tmp_path / "calls.log").read_text(encoding="utf-8") for call in others):
        assert time.monotonic() < deadline, "the other calls never ended"
        time.sleep(0.05)
    while _checkpointed_calls(tmp_path / "runs.sqlite") < len(others):
        assert time.monotonic() < deadline, "the other calls' steps were never checkpointed"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    (tmp_path / "block.txt").unlink()

    second = _process(tmp_path, "resume")
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    messages = json.loads(out)
    log = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    assert Counter(log) == Counter([*ran, "start lookup c", "end lookup c"]), log
    answers = [m for m in messages if m["role"] == "tool"]
    assert len(answers) == 3 and messages[-1] == {"role": "assistant", "content": "all done"}
    interrupted = [m for m in answers if "interrupted" in str(m["content"])]
    assert len(interrupted) == (1 if blocked == "write b" else 0)
    assert all(m.get("is_error") for m in interrupted)


def test_only_tools_hinted_idempotent_or_read_only_are_safe_to_repeat() -> None:
    from toolgen.runtime import ToolSpec

    def spec(hints: dict[str, bool]) -> ToolSpec:
        return ToolSpec("t", None, None, ToolSpec, None, {}, None, annotations=hints)  # type: ignore[arg-type]

    assert safe_to_repeat(spec({"idempotentHint": True})) and safe_to_repeat(spec({"readOnlyHint": True}))
    assert not safe_to_repeat(spec({})) and not safe_to_repeat(spec({"idempotentHint": False}))
    assert not safe_to_repeat(spec({"destructiveHint": True})) and not safe_to_repeat(None)
