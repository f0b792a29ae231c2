"""What durability costs: a served run through DurableRuns next to bare DBOS workflows of the same steps.

    python benchmarks/bench_durable.py            # 5 rounds at 1 and 10 tool steps, callgrind counts; a few
                                                  # minutes; rewrites the results in README.md
    python benchmarks/bench_durable.py --quick    # 2 rounds at 1 tool step, no callgrind; prints only
    python benchmarks/bench_durable.py --before HEAD   # the served run of the toolgen of a commit beside them
    python benchmarks/bench_durable.py --threads  # also each case's CPU by thread kind (printed, not in README.md)

Cases, each measurement in a fresh process of its own (DBOS keeps one instance a process), on SQLite (WAL, as the
service's store sets it) in a temporary folder:

- served: a run through DurableRuns (its default options: streamed), whose scripted model makes N steps of one
  trivial tool call each and then answers "done"; every model call and tool call is a DBOS step, and every event
  goes to the store. From `start()` (what POST /runs calls) to `result()` having the run's end.
- floor: a bare async DBOS workflow that awaits as many trivial async steps (`DBOS.run_step_async`) as the served
  run made (counted from DBOS's own list of its steps), started as DurableRuns starts its workflows (a task on
  DBOS's event loop) and awaited through its task: what DBOS alone costs for those checkpoints.
- same steps: a bare async DBOS workflow making the served run's steps themselves, as one would write the agent
  by hand: the same model's `complete` and the same tool's dispatch, each a DBOS step, no loop, store or events.
- plain: the same conversation through `run()` in memory (streamed, no store, no DBOS).
- before (with `--before REF`): the served run of the toolgen of that commit (its `generator/`, by git archive).

Each process freezes what it has made so far out of the garbage collector's passes (`gc.freeze()`, as the serve
verb does once it has started), makes one untimed run (the first workflow pays for warming connections and
imports), then `--runs` measured ones: CPU time of the whole process (every thread: `time.process_time`), wall time, and the
SQL statements and commits SQLite ran on every connection of the process (DBOS's and the store's). Cases run
round-robin in rounds; each figure is the median over all measured runs. With callgrind (not with --quick) each
case also runs once under `valgrind --tool=callgrind` with 3 runs and once with none (the warm-up only),
PYTHONHASHSEED=0: the difference over the runs is its instructions a run. Nothing here is a test, and no test
times anything.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import re
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
from serve_costs import extracted, opening

README = Path(__file__).resolve().parent / "README.md"
START = "<!-- durable-results:start (written by benchmarks/bench_durable.py; do not edit by hand) -->"
END = "<!-- durable-results:end -->"
CASES = ("floor", "agent", "served", "plain", "before")


def _generator(path: str | None) -> None:
    sys.path.insert(0, path or str(Path(__file__).resolve().parents[1] / "generator"))


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


def _wal(path: Path) -> str:
    """The database file in WAL mode (persistent), as the service's store leaves it; its URL."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
    return f"sqlite:///{path}"


class Counter:
    """SQL statements and commits of every SQLite connection in this process (DBOS's and the store's, through
    SQLAlchemy or on the driver's own connection), as SQLite runs them: a statement run for several rows
    (executemany) counts once a row."""

    def __init__(self) -> None:
        import sqlalchemy

        self.statements = 0
        self.commits = 0
        sqlalchemy.event.listen(sqlalchemy.pool.Pool, "connect", self._connected)

    def _connected(self, connection: Any, record: Any) -> None:
        connection.set_trace_callback(self._traced)

    def _traced(self, sql: str) -> None:
        head = sql.lstrip()[:8].upper()
        if head.startswith("COMMIT"):
            self.commits += 1
        elif not head.startswith(("BEGIN", "ROLLBACK", "PRAGMA")):
            self.statements += 1

    def reset(self) -> None:
        self.statements = self.commits = 0


# Threads by what they do, for --threads: (a part of the name, the kind), the first that matches.
THREAD_KINDS = (
    ("dbos-executor", "DBOS step threads"),
    ("_run_event_loop", "DBOS event loop (workflows)"),
    ("toolgen-handler", "tool handler pool"),
    ("toolgen-store-writer", "store writer"),
    ("MainThread", "caller (start, result)"),
)


def _thread_clocks() -> dict[int, tuple[str, float]]:
    """Each live thread's CPU seconds so far, with its kind (THREAD_KINDS; any other: DBOS background)."""
    import threading

    found = {}
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        kind = next((k for part, k in THREAD_KINDS if part in thread.name), "DBOS background")
        try:
            found[thread.ident] = (kind, time.clock_gettime(time.pthread_getcpuclockid(thread.ident)))
        except OSError:  # it ended meanwhile
            continue
    return found


def _measured(runs: int, once: Any, counter: Counter | None) -> dict[str, Any]:
    """`once()` run 1 + `runs` times; the measured runs' CPU and wall seconds, statements and commits, and CPU
    seconds by thread kind. What is alive before is frozen out of the garbage collector's passes, as the serve
    verb does once it has started."""
    gc.collect()
    gc.freeze()
    once()
    cpu, wall, statements, commits = [], [], [], []
    threads: dict[str, float] = {}
    for _ in range(runs):
        if counter is not None:
            counter.reset()
        before = _thread_clocks()
        started_cpu, started = time.process_time(), time.perf_counter()
        once()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        for ident, (kind, seconds) in _thread_clocks().items():
            threads[kind] = threads.get(kind, 0.0) + seconds - before.get(ident, (kind, 0.0))[1]
        if counter is not None:
            statements.append(counter.statements)
            commits.append(counter.commits)
    return {"cpu": cpu, "wall": wall, "statements": statements, "commits": commits, "threads": threads}


def _dbos_loop() -> Any:
    from dbos._dbos import _get_dbos_instance

    return _get_dbos_instance()._background_event_loop._loop


def measure_floor(steps: int, runs: int) -> dict[str, Any]:
    import asyncio

    from dbos import DBOS, SetWorkflowID

    counter = Counter()
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-durable-") as folder:
        url = _wal(Path(folder) / "runs.sqlite")
        config = {
            "name": "bench-floor",
            "system_database_url": url,
            "application_version": "bench",
            "executor_id": "local",
            "log_level": "WARNING",
        }
        DBOS(config=config)  # type: ignore[arg-type]

        async def trivial(number: int) -> int:
            return number

        @DBOS.workflow(name="bench.floor")
        async def workflow(count: int) -> int:
            for number in range(count):
                await DBOS.run_step_async({"name": "trivial"}, trivial, number)
            return count

        DBOS.launch()
        loop = _dbos_loop()
        made: list[str] = []

        async def start_and_wait() -> None:
            made.append(f"floor-{len(made)}")
            with SetWorkflowID(made[-1]):
                handle = await DBOS.start_workflow_async(workflow, steps)
            await handle.get_result()

        found = _measured(runs, lambda: asyncio.run_coroutine_threadsafe(start_and_wait(), loop).result(), counter)
        found["steps"] = len(DBOS.list_workflow_steps(made[-1]))
        DBOS.destroy(destroy_registry=True)
    return found


def _result(durable: Any, run_id: str) -> Any:
    """The run once it has ended: `result()`, or for a toolgen without it, the store's row watched for its end."""
    if hasattr(durable, "result"):
        return durable.result(run_id, timeout=60)
    store = durable.store
    with store.wakeups.watch(run_id) as watch:
        while (found := store.run(run_id)).status not in ("finished", "error", "stopped"):
            watch.wait_blocking(0.05)
    return found


def measure_agent(steps: int, runs: int) -> dict[str, Any]:
    """The served run's steps by hand: the model's `complete` and the tool's dispatch as DBOS steps."""
    import asyncio

    from dbos import DBOS, SetWorkflowID

    from toolgen.runtime.wires.canonical import Request

    counter = Counter()
    model, registry = _model_and_tools(steps)
    tools = registry.definitions()
    messages = opening()
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-durable-") as folder:
        url = _wal(Path(folder) / "runs.sqlite")
        config = {
            "name": "bench-agent",
            "system_database_url": url,
            "application_version": "bench",
            "executor_id": "local",
            "log_level": "WARNING",
        }
        DBOS(config=config)  # type: ignore[arg-type]

        @DBOS.workflow(name="bench.agent")
        async def workflow(messages: list[dict[str, Any]]) -> int:
            messages = list(messages)
            while True:
                request = Request(messages=list(messages), tools=tools)
                response = await DBOS.run_step_async({"name": "model"}, model.complete, request)
                messages.append(response.message)
                calls = response.message.get("tool_calls") or []
                if not calls:
                    return len(messages)
                for call in calls:
                    outcome = await DBOS.run_step_async({"name": "tool"}, registry.dispatch, call)
                    messages.append(outcome.to_message())

        DBOS.launch()
        loop = _dbos_loop()
        made: list[str] = []

        async def start_and_wait() -> None:
            made.append(f"agent-{len(made)}")
            with SetWorkflowID(made[-1]):
                handle = await DBOS.start_workflow_async(workflow, messages)
            await handle.get_result()

        found = _measured(runs, lambda: asyncio.run_coroutine_threadsafe(start_and_wait(), loop).result(), counter)
        found["steps"] = len(DBOS.list_workflow_steps(made[-1]))
        DBOS.destroy(destroy_registry=True)
    return found


def measure_served(steps: int, runs: int) -> dict[str, Any]:
    from dbos import DBOS

    from toolgen.runtime import DurableRuns

    counter = Counter()
    model, registry = _model_and_tools(steps)
    messages = opening()
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-durable-") as folder:
        url = _wal(Path(folder) / "runs.sqlite")
        durable = DurableRuns(registry, model, database_url=url, name="bench-durable", options=_options(steps))
        made: list[str] = []

        def once() -> None:
            made.append(durable.start(messages, None))
            ended = _result(durable, made[-1])
            if ended is None or ended.state.get("stop_reason") != "finished":
                raise SystemExit(f"the served run ended as {ended}")

        found = _measured(runs, once, counter)
        found["steps"] = len(DBOS.list_workflow_steps(made[-1]))
        found["events"] = durable.store.last_seq(made[-1])
        durable.close()
    return found


def measure_plain(steps: int, runs: int) -> dict[str, Any]:
    from toolgen.runtime import run

    model, registry = _model_and_tools(steps)
    messages = opening()

    def once() -> None:
        result = run(messages, model, registry, _options(steps))
        if result.stop_reason != "finished":
            raise SystemExit(f"the plain run stopped with {result.stop_reason!r}")

    return _measured(runs, once, None)


def child(case: str, steps: int, runs: int) -> None:
    measure = {
        "floor": measure_floor,
        "agent": measure_agent,
        "served": measure_served,
        "before": measure_served,
        "plain": measure_plain,
    }[case]
    print(json.dumps(measure(steps, runs)))


def _command(case: str, steps: int, runs: int, generator: str | None) -> list[str]:
    command = [sys.executable, __file__, "--child", case, "--steps", str(steps), "--runs", str(runs)]
    return command + (["--generator", generator] if generator else [])


def spawn(case: str, steps: int, runs: int, generator: str | None) -> dict[str, Any]:
    done = subprocess.run(_command(case, steps, runs, generator), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{case} ({steps} steps) failed:\n{done.stderr}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def instructions(case: str, steps: int, runs: int, generator: str | None) -> float:
    """Instructions a run under callgrind: (the process with `runs` runs - the one with none) / runs."""
    counts = []
    for count in (runs, 0):
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        done = subprocess.run(
            [*command, *_command(case, steps, count, generator)],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"callgrind of {case} failed:\n{done.stderr[-3000:]}")
        counts.append(int(found.group(1)))
    return (counts[0] - counts[1]) / runs


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.2f} ms" if seconds < 0.1 else f"{seconds * 1000:,.0f} ms"


def report(
    results: dict[int, dict[str, dict[str, list[float]]]],
    counts: dict[int, dict[str, int]],
    irs: dict[int, dict[str, float]],
    rounds: int,
    runs: int,
    command: str,
    loads: list[float],
    ref: str | None,
) -> str:
    lines = [
        f"Command: `{command}`",
        "",
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; Python {platform.python_version()}; DBOS {version('dbos')}; "
        f"SQLite {sqlite3.sqlite_version}",
        f"- {rounds} rounds, round-robin, each case a fresh process per round making 1 untimed and {runs} measured "
        f"runs; medians over the {rounds * runs} measured runs; the 1-minute load average ran "
        f"{min(loads):.1f}-{max(loads):.1f}",
        "- CPU: the process's, every thread; statements and commits: as SQLite ran them on every connection (DBOS's "
        "and the store's; a statement run for several rows counts once a row); instructions: callgrind, a process "
        "with 3 runs minus one without, over the runs",
        "",
        "| tool steps | case | DBOS steps | CPU a run | x floor | x same steps | instructions a run | x floor | "
        "x same steps | wall a run | SQL statements | commits |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    labels = {
        "floor": "bare DBOS workflow, trivial async steps (floor)",
        "agent": "bare DBOS workflow, the same model and tool calls as steps (same steps)",
        "served": "served run: DurableRuns start() to result()",
        "before": f"served run, toolgen of `{ref}` (before)",
        "plain": "plain run(), in memory",
    }
    for steps, cases in results.items():
        count = counts[steps]["steps"]
        cpu = {case: statistics.median(found["cpu"]) for case, found in cases.items() if found["cpu"]}
        ir = irs.get(steps, {})
        for case in CASES:
            found = cases[case]
            if not found["cpu"]:
                continue
            sql = f"{statistics.median(found['statements']):.0f}" if found["statements"] else ""
            commits = f"{statistics.median(found['commits']):.0f}" if found["commits"] else ""
            ir_text = f"{ir[case] / 1e6:,.1f} M" if case in ir else ""
            ir_floor = f"{ir[case] / ir['floor']:.2f}x" if case in ir and "floor" in ir else ""
            ir_agent = f"{ir[case] / ir['agent']:.2f}x" if case in ir and "agent" in ir else ""
            made = counts[steps].get(case, count)
            lines.append(
                f"| {steps} | {labels[case]} | {made if case != 'plain' else ''} | {_ms(cpu[case])} | "
                f"{cpu[case] / cpu['floor']:.2f}x | {cpu[case] / cpu['agent']:.2f}x | {ir_text} | {ir_floor} | "
                f"{ir_agent} | {_ms(statistics.median(found['wall']))} | {sql} | {commits} |"
            )
    lines.append("")
    for steps in results:
        lines.append(f"- {steps} tool steps: {counts[steps]['events']} events stored a run")
    return "\n".join(lines) + "\n"


def write_readme(section: str) -> None:
    replace_between(README, START, END, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds, 1 tool step, no callgrind; prints only")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--runs", type=int, default=5, help="measured runs per process")
    parser.add_argument("--steps", type=int, nargs="*", default=None, help="tool steps of a run (N)")
    parser.add_argument("--no-callgrind", action="store_true", help="CPU and wall time only")
    parser.add_argument("--before", metavar="REF", help="also the served run of the toolgen of this commit")
    parser.add_argument("--generator", help="the folder holding the toolgen package to measure")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    parser.add_argument(
        "--threads", action="store_true", help="also print each case's CPU a run by thread kind (not in README.md)"
    )
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    options = parser.parse_args()
    _generator(options.generator)
    if options.child:
        child(options.child, options.steps[0], options.runs)
        return
    with extracted(options.before) as before:
        section, threads = measure_all(options, before)
    print(section)
    if options.threads:
        print(threads)
    if not (options.quick or options.no_readme or options.generator):
        write_readme(section)


def measure_all(options: argparse.Namespace, before: str | None) -> tuple[str, str]:
    """The results section, and the CPU by thread kind (--threads)."""
    rounds = options.rounds or (2 if options.quick else 5)
    sizes = options.steps or ([1] if options.quick else [1, 10])
    keys = ("cpu", "wall", "statements", "commits")
    results: dict[int, dict[str, dict[str, list[float]]]] = {
        steps: {case: {key: [] for key in keys} for case in CASES} for steps in sizes
    }
    counts: dict[int, dict[str, int]] = {}
    # CPU seconds by thread kind over every measured run, per size and case.
    threads: dict[int, dict[str, dict[str, float]]] = {steps: {} for steps in sizes}
    loads = []
    for number in range(rounds):
        for steps in sizes:
            # The served run first: the floor makes as many steps as it recorded.
            served = spawn("served", steps, options.runs, options.generator)
            counts[steps] = {key: served[key] for key in ("steps", "events")}
            found = {"served": served}
            found["floor"] = spawn("floor", served["steps"], options.runs, options.generator)
            found["agent"] = spawn("agent", steps, options.runs, options.generator)
            for case in ("floor", "agent"):
                if found[case]["steps"] != served["steps"]:
                    raise SystemExit(f"the {case} made {found[case]['steps']} steps, the served run {served['steps']}")
            found["plain"] = spawn("plain", steps, options.runs, options.generator)
            if before:
                found["before"] = spawn("before", steps, options.runs, before)
                counts[steps]["before"] = found["before"]["steps"]
            for case, measured in found.items():
                for key in keys:
                    results[steps][case][key].extend(measured[key])
                kinds = threads[steps].setdefault(case, {})
                for kind, seconds in measured.get("threads", {}).items():
                    kinds[kind] = kinds.get(kind, 0.0) + seconds
        loads.append(os.getloadavg()[0])
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    irs: dict[int, dict[str, float]] = {}
    if not (options.quick or options.no_callgrind):
        for steps in sizes:
            irs[steps] = {
                "served": instructions("served", steps, 3, options.generator),
                "floor": instructions("floor", counts[steps]["steps"], 3, options.generator),
                "agent": instructions("agent", steps, 3, options.generator),
                "plain": instructions("plain", steps, 3, options.generator),
            }
            if before:
                irs[steps]["before"] = instructions("before", steps, 3, before)
            print(f"callgrind at {steps} tool steps done", file=sys.stderr)
    command = (
        "python benchmarks/bench_durable.py"
        + (" --quick" if options.quick else "")
        + (f" --before {options.before}" if options.before else "")
    )
    section = report(results, counts, irs, rounds, options.runs, command, loads, options.before)
    return section, thread_report(threads, rounds * options.runs)


def thread_report(threads: dict[int, dict[str, dict[str, float]]], runs: int) -> str:
    """CPU a run (the mean over the measured runs) by thread kind, a row a case."""
    kinds = [kind for _, kind in THREAD_KINDS] + ["DBOS background"]
    lines = [
        "CPU a run by thread kind (mean over the measured runs):",
        "",
        "| tool steps | case | " + " | ".join(kinds) + " |",
        "| ---: | --- |" + " ---: |" * len(kinds),
    ]
    for steps, cases in threads.items():
        for case in CASES:
            if case in cases:
                cells = " | ".join(_ms(cases[case].get(kind, 0.0) / runs) for kind in kinds)
                lines.append(f"| {steps} | {case} | {cells} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
