"""How fast each `toolgen` command starts, next to `python -c "import pydantic"`, in fresh processes.

    python benchmarks/bench_startup.py            # 9 rounds (about 2 minutes); rewrites the results in README.md
    python benchmarks/bench_startup.py --quick    # 3 rounds, prints only
    python benchmarks/bench_startup.py --rounds 15 --no-readme

Every case is one whole command, started as a user starts it and timed from outside, from its start to its
exit: interpreter start-up, imports and the work itself. The cases run round-robin (floor, then each command,
then the floor again, ...), so load from other processes that comes and goes hits them alike; each command's
ratio is taken against the floor of the same round, and the median of those ratios is reported. Wall time is a
monotonic clock around the child; CPU time is the operating system's user + system time of the finished child.

The example project is toolgen's own (toolgen.yaml, schemas/tools, the committed generated/ package). The
1,000-tool project is made in a temporary directory from deterministic synthetic tools (bench_build.py's) and
built once before timing; `check` of it is then up to date. Nothing here is a test, and no test times anything.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = Path(__file__).resolve().parent / "README.md"
START = "<!-- startup-results:start (written by benchmarks/bench_startup.py; do not edit by hand) -->"
END = "<!-- startup-results:end -->"
BODY = REPO / "tests" / "fixtures" / "payloads" / "openai-chat" / "request" / "multimodal-developer-refusal.json"
RECORD = '{"role": "user", "content": "What is the weather in Paris?"}\n'
TOOLS = 1000
# Bytecode caching on, as in an installation: the untimed warm-up run writes the caches the timed runs read (an
# environment that turns it off would have every run compile toolgen's modules and the generated package anew).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
# The aims of the issue: each of these commands within 2.5x of the floor, `check` of 1,000 tools within 3x.
AIMS = {"--help": 2.5, "decode": 2.5, "validate": 2.5, "lint": 2.5, "export": 2.5, "check": 2.5, "check 1000": 3.0}


@dataclass
class Case:
    label: str
    command: list[str]
    cwd: Path
    aim: float | None = None
    every: int = 1  # run in every `every`-th round only (the slow full check)
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    cpu_ratios: list[float] = field(default_factory=list)


def toolgen() -> list[str]:
    """The `toolgen` console script beside this interpreter, as users run it; `python -m toolgen` without one."""
    script = Path(sys.executable).with_name("toolgen")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolgen"]


def timed(case: Case) -> tuple[float, float]:
    """One fresh run of the case's command: (wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        case.command, cwd=case.cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{case.label}: exit {done.returncode}\n{done.stderr.decode(errors='replace')[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def big_project(scratch: Path) -> Path:
    """A 1,000-tool project, built, so that `check` finds it up to date."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_build import synthetic_tools
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    root = scratch / "tools1000"
    root.mkdir()
    (root / "toolgen.yaml").write_text(
        "version: v1\npackage: bench_sdk\noutput: generated\ninputs: [tools.json]\n", encoding="utf-8"
    )
    (root / "tools.json").write_text(json.dumps({"tools": synthetic_tools(TOOLS)}, indent=1), encoding="utf-8")
    print(f"building a {TOOLS:,}-tool project in {root} ...", file=sys.stderr, flush=True)
    subprocess.run([*toolgen(), "build"], cwd=root, check=True, capture_output=True)
    return root


def cases(scratch: Path, big: Path, rounds: int) -> list[Case]:
    record = scratch / "message.json"
    record.write_text(RECORD, encoding="utf-8")
    cli = toolgen()
    return [
        Case("python -c 'import pydantic' (floor)", [sys.executable, "-c", "import pydantic"], REPO),
        Case("toolgen --help", [*cli, "--help"], REPO, AIMS["--help"]),
        Case("toolgen decode (one request body)", [*cli, "decode", str(BODY)], REPO, AIMS["decode"]),
        Case(
            "toolgen validate --as message (one record)",
            [*cli, "validate", "--as", "message", str(record)],
            REPO,
            AIMS["validate"],
        ),
        Case(
            "toolgen validate --as message (one record, first run: no kept validators)",
            [
                "sh",
                "-c",
                'rm -rf .toolgen-cache/validate && exec "$@"',
                "sh",
                *cli,
                "validate",
                "--as",
                "message",
                str(record),
            ],
            REPO,
        ),
        Case("toolgen lint (example project)", [*cli, "lint"], REPO, AIMS["lint"]),
        Case(
            "toolgen export --format openai (example project)",
            [*cli, "export", "--format", "openai"],
            REPO,
            AIMS["export"],
        ),
        Case("toolgen check (example project, up to date)", [*cli, "check"], REPO, AIMS["check"]),
        Case(f"toolgen check ({TOOLS:,} tools, up to date)", [*cli, "check"], big, AIMS["check 1000"]),
        Case("toolgen check --full (example project)", [*cli, "check", "--full"], REPO),
        Case(f"toolgen check --full ({TOOLS:,} tools)", [*cli, "check", "--full"], big, every=max(1, rounds // 3)),
    ]


def measure(all_cases: list[Case], rounds: int) -> list[float]:
    """Round-robin runs after one untimed warm-up of each; the load average after each round."""
    for case in all_cases:
        timed(case)
    loads = []
    floor = all_cases[0]
    for index in range(rounds):
        floor_wall, floor_cpu = timed(floor)
        floor.wall.append(floor_wall)
        floor.cpu.append(floor_cpu)
        for case in all_cases[1:]:
            if index % case.every:
                continue
            wall, cpu = timed(case)
            case.wall.append(wall)
            case.cpu.append(cpu)
            case.ratios.append(wall / floor_wall)
            case.cpu_ratios.append(cpu / floor_cpu)
        loads.append(os.getloadavg()[0])
        print(f"round {index + 1}/{rounds} done", file=sys.stderr, flush=True)
    return loads


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def report(all_cases: list[Case], loads: list[float], rounds: int, command: str) -> str:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    lines = [
        f"Command: `{command}`",
        "",
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.system()} {platform.machine()}, "
        f"{usable} CPUs; Python {platform.python_version()}",
        f"- {rounds} rounds, round-robin; the 1-minute load average after each round: {min(loads):.1f} to "
        f"{max(loads):.1f}"
        + (" (other work was running: absolute times carry noise, ratios less)" if max(loads) > 1 else ""),
        "- Ratio: the command's time / the floor's time in the same round, median over rounds",
        "",
        "| command | runs | median wall | min - max | x floor (wall) | x floor (CPU) | aim |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case in all_cases:
        if case.ratios:
            ratio = f"{statistics.median(case.ratios):.2f}x"
            cpu_ratio = f"{statistics.median(case.cpu_ratios):.2f}x"
        else:
            ratio = cpu_ratio = "1.00x"
        aim = f"{case.aim}x" if case.aim else ""
        lines.append(
            f"| {case.label} | {len(case.wall)} | {ms(statistics.median(case.wall))} | "
            f"{ms(min(case.wall))} - {ms(max(case.wall))} | {ratio} | {cpu_ratio} | {aim} |"
        )
    return "\n".join(lines) + "\n"


def write_readme(section: str) -> None:
    text = README.read_text(encoding="utf-8")
    if START not in text:
        raise SystemExit(f"{README} has no {START} marker")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{START}\n{section}{END}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="3 rounds, print only")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    scratch = Path(tempfile.mkdtemp(prefix="toolgen-startup-"))
    try:
        all_cases = cases(scratch, big_project(scratch), rounds)
        loads = measure(all_cases, rounds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    command = "python benchmarks/bench_startup.py" + ("" if rounds == 9 else f" --rounds {rounds}")
    section = report(all_cases, loads, rounds, command)
    print(section)
    if not (options.quick or options.no_readme):
        write_readme(section)


if __name__ == "__main__":
    main()
