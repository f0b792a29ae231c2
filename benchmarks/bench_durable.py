"""What durability costs a step: a served run through DurableRuns next to a bare DBOS workflow and to plain run().

    python benchmarks/bench_durable.py            # 5 rounds, 10 and 40 tool steps, under a minute;
                                                  # rewrites the results in README.md
    python benchmarks/bench_durable.py --quick    # 2 rounds, 10 tool steps, prints only

Three cases, each measurement in a fresh process of its own (DBOS keeps one instance a process), on SQLite in a
temporary folder:

- served: a run through DurableRuns (its default options: streamed), whose scripted model makes N steps of one
  trivial tool call each and then answers "done"; every model call and tool call is a DBOS step, with the run's
  load, 2N + 2 steps in all (counted from DBOS's own list of the workflow's steps), and every event goes to the
  store. Timed from `start()` to the workflow's result.
- floor: a bare DBOS workflow that calls a trivial `@DBOS.step()` function as many times as the served run has
  steps, timed from `start_workflow` to its result: what DBOS alone costs for those checkpoints.
- plain: the same conversation through `run()` in memory (streamed, no store, no DBOS).

Both DBOS cases wait for the result alike, polling its status every 2 ms. Each process makes one untimed run
first (DBOS's first workflow pays for warming its connections), then `--runs` timed ones. Cases run round-robin
in rounds; a case's time is the median over all its timed runs, a step's the run's time over the served run's
step count (for plain too, so that the columns compare), and the ratios are those of the medians of this one
benchmark run. Nothing here is a test, and no test times anything.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from readme_markers import replace_between

GENERATOR = Path(__file__).resolve().parents[1] / "generator"
sys.path.insert(0, str(GENERATOR))

README = Path(__file__).resolve().parent / "README.md"
START = "<!-- durable-results:start (written by benchmarks/bench_durable.py; do not edit by hand) -->"
END = "<!-- durable-results:end -->"
CASES = ("floor", "served", "plain")
POLL_SECONDS = 0.002


def _model_and_tools(steps: int) -> tuple[Any, Any]:
    """The scripted model (its turn read off the conversation, so one model serves every run) and one tool."""
    import pydantic

    from toolgen.runtime import ModelClientBase, Registry, Response, ToolSpec, assistant_turn, tool_call

    class Args(pydantic.BaseModel):
        n: int

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    registry = Registry({"echo": ToolSpec("echo", None, "echo", Args, None, schema, None)})
    registry.entry("echo").handler(lambda args, ctx: f"echo {args.n}")

    class Model(ModelClientBase):
        def complete(self, request: Any) -> Any:
            step = sum(1 for m in request.messages if m["role"] == "assistant")
            if step < steps:
                message = assistant_turn(None, tool_call("echo", {"n": step}, id=f"call_{step}"))
                return Response(message, {"reason": "tool_calls", "raw": None}, model="scripted")
            return Response({"role": "assistant", "content": "done"}, {"reason": "stop", "raw": None}, model="scripted")

    return Model(), registry


def _options(steps: int) -> Any:
    """DurableRuns' default options (streamed), with room for N tool steps and the answer."""
    from toolgen.runtime import RunOptions

    return RunOptions(stream=True, max_steps=steps + 1, max_tool_calls=steps)


def _dbos_config(folder: str, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "system_database_url": f"sqlite:///{Path(folder) / 'runs.sqlite'}",
        "application_version": "bench",
        "executor_id": "local",
        "log_level": "WARNING",
    }


def measure_floor(steps: int, runs: int) -> dict[str, Any]:
    from dbos import DBOS

    with tempfile.TemporaryDirectory(prefix="toolgen-bench-durable-") as folder:
        DBOS(config=_dbos_config(folder, "bench-floor"))  # type: ignore[arg-type]

        @DBOS.step()
        def trivial(number: int) -> int:
            return number

        @DBOS.workflow()
        def workflow(count: int) -> int:
            for number in range(count):
                trivial(number)
            return count

        DBOS.launch()
        seconds = []
        for _ in range(runs + 1):
            started = time.perf_counter()
            handle = DBOS.start_workflow(workflow, steps)
            DBOS.retrieve_workflow(handle.workflow_id).get_result(polling_interval_sec=POLL_SECONDS)
            seconds.append(time.perf_counter() - started)
        counted = len(DBOS.list_workflow_steps(handle.workflow_id))
        DBOS.destroy(destroy_registry=True)
    return {"seconds": seconds[1:], "steps": counted}


def measure_served(steps: int, runs: int) -> dict[str, Any]:
    import sqlalchemy
    from dbos import DBOS

    from toolgen.runtime import DurableRuns

    model, registry = _model_and_tools(steps)
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-durable-") as folder:
        url = f"sqlite:///{Path(folder) / 'runs.sqlite'}"
        durable = DurableRuns(registry, model, database_url=url, name="bench-durable", options=_options(steps))
        # The store's own transactions (events, the run's row, tool attempts), counted on its engine.
        commits = [0]
        sqlalchemy.event.listen(
            durable.store._engine, "commit", lambda connection: commits.__setitem__(0, commits[0] + 1)
        )
        seconds = []
        for _ in range(runs + 1):
            commits[0] = 0
            started = time.perf_counter()
            run_id = durable.start([{"role": "user", "content": "go"}], None)
            stop: str = DBOS.retrieve_workflow(run_id).get_result(polling_interval_sec=POLL_SECONDS)
            seconds.append(time.perf_counter() - started)
            if stop != "finished":
                raise SystemExit(f"the served run stopped with {stop!r}")
        counted = len(DBOS.list_workflow_steps(run_id))
        events = durable.store.last_seq(run_id)
        durable.close()
    return {"seconds": seconds[1:], "steps": counted, "events": events, "commits": commits[0]}


def measure_plain(steps: int, runs: int) -> dict[str, Any]:
    from toolgen.runtime import run

    model, registry = _model_and_tools(steps)
    seconds = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        result = run([{"role": "user", "content": "go"}], model, registry, _options(steps))
        seconds.append(time.perf_counter() - started)
        if result.stop_reason != "finished":
            raise SystemExit(f"the plain run stopped with {result.stop_reason!r}")
    return {"seconds": seconds[1:]}


def child(case: str, steps: int, runs: int) -> None:
    measure = {"floor": measure_floor, "served": measure_served, "plain": measure_plain}[case]
    print(json.dumps(measure(steps, runs)))


def spawn(case: str, steps: int, runs: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", case, "--steps", str(steps), "--runs", str(runs)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{case} ({steps} steps) failed:\n{done.stderr}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.2f} ms" if seconds < 0.1 else f"{seconds * 1000:,.0f} ms"


def report(
    results: dict[int, dict[str, list[float]]], counts: dict[int, dict[str, int]], rounds: int, runs: int, command: str
) -> str:
    load = os.getloadavg()[0]
    lines = [
        f"Command: `{command}`",
        "",
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; Python {platform.python_version()}; DBOS {version('dbos')}; "
        f"SQLite {sqlite3.sqlite_version}",
        f"- {rounds} rounds, round-robin, each case a fresh process per round making 1 untimed and {runs} timed "
        f"runs; medians over the {rounds * runs} timed runs; the 1-minute load average at the end: {load:.1f}",
        "- A step: the run's time over the served run's DBOS steps (its load, N + 1 model calls, N tool calls)",
        "",
        "| tool steps | case | DBOS steps | median run | per step | min - max per step | x floor | x plain |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    labels = {
        "floor": "bare DBOS workflow, trivial steps (floor)",
        "served": "served run through DurableRuns",
        "plain": "plain run(), in memory",
    }
    for steps, cases in results.items():
        count = counts[steps]["steps"]
        medians = {case: statistics.median(seconds) for case, seconds in cases.items()}
        for case in CASES:
            seconds = cases[case]
            lines.append(
                f"| {steps} | {labels[case]} | {count if case != 'plain' else ''} | {_ms(medians[case])} | "
                f"{_ms(medians[case] / count)} | {_ms(min(seconds) / count)} - {_ms(max(seconds) / count)} | "
                f"{medians[case] / medians['floor']:.2f}x | {medians[case] / medians['plain']:.1f}x |"
            )
    lines.append("")
    for steps, cases in results.items():
        count = counts[steps]["steps"]
        medians = {case: statistics.median(seconds) for case, seconds in cases.items()}
        over_plain = (medians["served"] - medians["plain"]) / count
        over_floor = (medians["served"] - medians["floor"]) / count
        lines.append(
            f"- {steps} tool steps ({counts[steps]['events']} events stored, {counts[steps]['commits']} store "
            "transactions a run): durability costs "
            f"{_ms(over_plain)} a step over plain run(), of which DBOS's own checkpoint is "
            f"{_ms(medians['floor'] / count)} and the rest ({_ms(over_floor)}) the served run's own"
        )
    return "\n".join(lines) + "\n"


def write_readme(section: str) -> None:
    replace_between(README, START, END, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds, 10 tool steps; prints only")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per process")
    parser.add_argument("--steps", type=int, nargs="*", default=None, help="tool steps of a run (N)")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child, options.steps[0], options.runs)
        return
    rounds = options.rounds or (2 if options.quick else 5)
    sizes = options.steps or ([10] if options.quick else [10, 40])
    results: dict[int, dict[str, list[float]]] = {steps: {case: [] for case in CASES} for steps in sizes}
    counts: dict[int, dict[str, int]] = {}
    for number in range(rounds):
        for steps in sizes:
            # The served run first: the floor makes as many steps as it recorded.
            served = spawn("served", steps, options.runs)
            counts[steps] = {key: served[key] for key in ("steps", "events", "commits")}
            results[steps]["served"].extend(served["seconds"])
            floor = spawn("floor", served["steps"], options.runs)
            if floor["steps"] != served["steps"]:
                raise SystemExit(f"the floor made {floor['steps']} steps, the served run {served['steps']}")
            results[steps]["floor"].extend(floor["seconds"])
            results[steps]["plain"].extend(spawn("plain", steps, options.runs)["seconds"])
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    command = "python benchmarks/bench_durable.py" + (" --quick" if options.quick else "")
    section = report(results, counts, rounds, options.runs, command)
    print(section)
    if not (options.quick or options.no_readme):
        write_readme(section)


if __name__ == "__main__":
    main()
