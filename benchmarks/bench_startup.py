"""How fast each `toolgen` command starts, next to `python -c "import pydantic"`, in fresh processes.

    python benchmarks/bench_startup.py            # 9 rounds and one count of instructions each; rewrites README.md
    python benchmarks/bench_startup.py --quick    # 3 rounds, prints only
    python benchmarks/bench_startup.py --rounds 15 --no-readme --no-instructions
    python benchmarks/bench_startup.py --quick --only validate   # the floor and the cases whose label has "validate"

Every case is one whole command, started as a user starts it and measured from outside, from its start to its
exit: interpreter start-up, imports and the work itself. The cases run round-robin (floor, then each command,
then the floor again, ...), so load from other processes that comes and goes hits them alike; each command's
ratio is taken against the floor of the same round, and the median of those ratios is reported. Wall time is a
monotonic clock around the child; CPU time is the operating system's user + system time of the finished child.
After the rounds, each case (the floor among them) runs once more under `valgrind --tool=callgrind`, which counts
the instructions it executes: a count that other load on the machine does not change (PYTHONHASHSEED=0, so that
it repeats). Hashing with SHA-NI, which valgrind does not emulate, counts more instructions than the CPU spends.

The projects are made in a temporary directory and built once before timing: the example project (toolgen's own
toolgen.yaml and schemas/), 1,000 real tools in one tools.json (the first 1,000 definitions of the shared tooldefs
corpus that toolgen accepts, as benchmarks/bench_build.py picks them; deterministic synthetic tools without the
corpus), and the same 1,000 tools one file each. An up-to-date `check` of each is timed, and what a fresh checkout
pays (no `.toolgen-cache/`: removed before each run, outside the timing). Nothing here is a test, and no test times
anything.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

REPO = Path(__file__).resolve().parents[1]
README = Path(__file__).resolve().parent / "README.md"
START = "<!-- startup-results:start (written by benchmarks/bench_startup.py; do not edit by hand) -->"
END = "<!-- startup-results:end -->"
BODY = REPO / "tests" / "fixtures" / "payloads" / "openai-chat" / "request" / "multimodal-developer-refusal.json"
RECORD = '{"role": "user", "content": "What is the weather in Paris?"}\n'
TOOLS = 1000
# Bytecode caching on, as in an installation: the untimed warm-up run writes the caches the timed runs read (an
# environment that turns it off would have every run compile toolgen's modules and the generated package anew).
ENV = MappingProxyType({name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"})
# The aims: each command within 2.5x of the floor (issues 18 and 40), `check` of 1,000 tools too, whether they are
# in one file or a file each; the first `validate` of a fresh checkout within 3x.
AIMS = MappingProxyType(
    {"--help": 2.5, "decode": 2.5, "validate": 2.5, "lint": 2.5, "export": 2.5, "check": 2.5, "fresh validate": 3.0}
)
# A check said to be up to date renders nothing: a source change mid-run (the manifest records toolgen's source
# hash) would make it render, which the numbers must not hide.
RENDERED = re.compile(r"generating models|checking schemas")


@dataclass
class Case:
    label: str
    command: list[str]
    cwd: Path
    aim: float | None = None
    every: int = 1  # run in every `every`-th round only (the slow full checks)
    before: Callable[[], None] | None = None  # run before each run, outside the measurement
    counted: bool = True  # counted under callgrind (not the full checks: minutes each under valgrind)
    up_to_date: bool = False  # a `check` that must answer without rendering
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    cpu_ratios: list[float] = field(default_factory=list)
    instructions: int | None = None


def toolgen() -> list[str]:
    """The `toolgen` console script beside this interpreter, as users run it; `python -m toolgen` without one."""
    script = Path(sys.executable).with_name("toolgen")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolgen"]


def timed(case: Case) -> tuple[float, float]:
    """One fresh run of the case's command: (wall seconds, CPU seconds of the child)."""
    if case.before is not None:
        case.before()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        case.command, cwd=case.cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stderr = done.stderr.decode(errors="replace")
    if done.returncode != 0:
        raise SystemExit(f"{case.label}: exit {done.returncode}\n{stderr[-2000:]}")
    if case.up_to_date and RENDERED.search(stderr):
        raise SystemExit(f"{case.label}: rendered instead of answering up to date (did toolgen change?)\n{stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(case: Case, scratch: Path) -> int:
    """The instructions one run of the case executes, as callgrind counts them."""
    if case.before is not None:
        case.before()
    out = scratch / "callgrind.out"
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *case.command],
        cwd=case.cwd,
        env={**ENV, "PYTHONHASHSEED": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    out.unlink(missing_ok=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{case.label}: callgrind exit {done.returncode}\n{done.stderr[-2000:]}")
    return int(found.group(1))


def _toolgen_build(root: Path) -> None:
    done = subprocess.run([*toolgen(), "build", "--quiet"], cwd=root, env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"build of {root} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def example_project(scratch: Path) -> Path:
    """toolgen's own project (its config and schemas), built here: the committed package may lag the source."""
    root = scratch / "example"
    root.mkdir()
    shutil.copy2(REPO / "toolgen.yaml", root / "toolgen.yaml")
    shutil.copytree(REPO / "schemas", root / "schemas")
    _toolgen_build(root)
    return root


def tools_for_projects(scratch: Path) -> tuple[list[dict[str, object]], str]:
    """TOOLS real tools (the tooldefs corpus, as bench_build picks them), or synthetic ones without it."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_build
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    if bench_build.CORPUS.is_dir():
        return bench_build.corpus_tools(TOOLS, scratch), "real tools (the tooldefs corpus)"
    return bench_build.synthetic_tools(TOOLS), f"SYNTHETIC tools ({bench_build.CORPUS} is absent)"


def big_projects(scratch: Path, tools: list[dict[str, object]]) -> tuple[Path, Path]:
    """The TOOLS-tool projects, built: one tools.json, and a file per tool."""
    config = "version: v1\npackage: bench_sdk\noutput: generated\ninputs: [{inputs}]\nnormalize: [types]\n"
    one = scratch / "tools1000"
    one.mkdir()
    (one / "toolgen.yaml").write_text(config.format(inputs="tools.json"), encoding="utf-8")
    (one / "tools.json").write_text(json.dumps({"tools": tools}, indent=1, ensure_ascii=False), encoding="utf-8")
    each = scratch / "files1000"
    (each / "tools").mkdir(parents=True)
    (each / "toolgen.yaml").write_text(config.format(inputs="'tools/*.json'"), encoding="utf-8")
    for index, tool in enumerate(tools):
        text = json.dumps({"tools": [tool]}, indent=1, ensure_ascii=False)
        (each / "tools" / f"tool{index:04d}.json").write_text(text, encoding="utf-8")
    for root in (one, each):
        print(f"building {root} ...", file=sys.stderr, flush=True)
        _toolgen_build(root)
    return one, each


def _removing(folder: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(folder, ignore_errors=True)


def _checkout(root: Path) -> Path:
    """A copy of the built project `root` to run as a fresh checkout: its own files, so that removing its cache
    before each run leaves what the other cases keep in theirs."""
    copy = root.with_name(root.name + "-checkout")
    shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".toolgen-cache"))
    return copy


def cases(scratch: Path, example: Path, one: Path | None, each: Path | None, rounds: int) -> list[Case]:
    """Every case; without the big projects (None: no case of them was asked for), those on the example only."""
    record = scratch / "message.json"
    record.write_text(RECORD, encoding="utf-8")
    cli = toolgen()
    validate = [*cli, "validate", "--as", "message", str(record)]
    fresh = "fresh checkout: no .toolgen-cache"
    example_fresh = _checkout(example)
    small = [
        Case("python -c 'import pydantic' (floor)", [sys.executable, "-c", "import pydantic"], REPO),
        Case("toolgen --help", [*cli, "--help"], REPO, AIMS["--help"]),
        Case("toolgen decode (one request body)", [*cli, "decode", str(BODY)], REPO, AIMS["decode"]),
        Case("toolgen validate --as message (one record)", validate, example, AIMS["validate"]),
        Case(
            "toolgen validate --as message (one record, first run: no kept validators)",
            validate,
            example,
            before=_removing(example / ".toolgen-cache" / "validate"),
        ),
        Case(
            f"toolgen validate --as message (one record, {fresh})",
            validate,
            example_fresh,
            AIMS["fresh validate"],
            before=_removing(example_fresh / ".toolgen-cache"),
        ),
        Case("toolgen lint (example project)", [*cli, "lint"], example, AIMS["lint"]),
        Case(
            "toolgen export --format openai (example project)",
            [*cli, "export", "--format", "openai"],
            example,
            AIMS["export"],
        ),
        Case("toolgen check (example project, up to date)", [*cli, "check"], example, AIMS["check"], up_to_date=True),
        Case("toolgen check --full (example project)", [*cli, "check", "--full"], example, counted=False),
    ]
    if one is None or each is None:
        return small
    one_fresh, each_fresh = _checkout(one), _checkout(each)
    return [
        *small[:-1],
        Case(
            f"toolgen check ({TOOLS:,} tools in one file, up to date)",
            [*cli, "check"],
            one,
            AIMS["check"],
            up_to_date=True,
        ),
        Case(
            f"toolgen check ({TOOLS:,} tools, a file each, up to date)",
            [*cli, "check"],
            each,
            AIMS["check"],
            up_to_date=True,
        ),
        Case(
            f"toolgen check ({TOOLS:,} tools in one file, {fresh})",
            [*cli, "check"],
            one_fresh,
            up_to_date=True,
            before=_removing(one_fresh / ".toolgen-cache"),
        ),
        Case(
            f"toolgen check ({TOOLS:,} tools, a file each, {fresh})",
            [*cli, "check"],
            each_fresh,
            up_to_date=True,
            before=_removing(each_fresh / ".toolgen-cache"),
        ),
        small[-1],
        Case(
            f"toolgen check --full ({TOOLS:,} tools in one file)",
            [*cli, "check", "--full"],
            one,
            every=max(1, rounds // 3),
            counted=False,
        ),
    ]


def measure(all_cases: list[Case], rounds: int) -> list[float]:
    """Round-robin runs after two untimed warm-ups of each; the load average after each round."""
    # The second warm-up comes after the answers an up-to-date check keeps may be kept: they are kept only for
    # files written well before the check began (kept_check.py), and the projects were built just now.
    for warm_up in range(2):
        for case in all_cases:
            timed(case)
        if not warm_up:
            time.sleep(3.5)
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


def count(all_cases: list[Case], scratch: Path) -> None:
    for case in all_cases:
        if case.counted:
            case.instructions = instructions(case, scratch)
            print(f"counted {case.label}: {case.instructions:,}", file=sys.stderr, flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def report(all_cases: list[Case], loads: list[float], rounds: int, command: str, source: str) -> str:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    floor = all_cases[0].instructions
    lines = [
        f"Command: `{command}`",
        "",
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.system()} {platform.machine()}, "
        f"{usable} CPUs; Python {platform.python_version()}",
        f"- {rounds} rounds, round-robin; the 1-minute load average after each round: {min(loads):.1f} to "
        f"{max(loads):.1f}"
        + (" (other work was running: absolute times carry noise, ratios less)" if max(loads) > 1 else ""),
        "- Ratio: the command's time / the floor's time in the same round, median over rounds; instructions: one "
        "run of each under callgrind, / the floor's",
        f"- The {TOOLS:,}-tool projects: {source}; a fresh checkout's `.toolgen-cache/` is removed before each run",
        "",
        "| command | runs | median wall | min - max | x floor (wall) | x floor (CPU) | instructions | x floor "
        "(instructions) | aim |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for case in all_cases:
        if case.ratios:
            ratio = f"{statistics.median(case.ratios):.2f}x"
            cpu_ratio = f"{statistics.median(case.cpu_ratios):.2f}x"
        else:
            ratio = cpu_ratio = "1.00x"
        counted = f"{case.instructions / 1e6:,.0f} M" if case.instructions else ""
        counted_ratio = f"{case.instructions / floor:.2f}x" if case.instructions and floor else ""
        aim = f"{case.aim}x" if case.aim else ""
        lines.append(
            f"| {case.label} | {len(case.wall)} | {ms(statistics.median(case.wall))} | "
            f"{ms(min(case.wall))} - {ms(max(case.wall))} | {ratio} | {cpu_ratio} | {counted} | {counted_ratio} | "
            f"{aim} |"
        )
    return "\n".join(lines) + "\n"


def write_readme(section: str) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from readme_markers import replace_between
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    replace_between(README, START, END, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="3 rounds, print only")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    parser.add_argument("--no-instructions", action="store_true", help="no callgrind counts (valgrind not needed)")
    parser.add_argument(
        "--only",
        metavar="TEXT",
        help="only the floor and the cases whose label has TEXT (the big projects are "
        "built only when TEXT has 'tools'); prints only",
    )
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    counting = not options.no_instructions and shutil.which("valgrind") is not None
    scratch = Path(tempfile.mkdtemp(prefix="toolgen-startup-"))
    try:
        example = example_project(scratch)
        one = each = None
        source = "not built (--only)"
        if options.only is None or "tools" in options.only:
            tools, source = tools_for_projects(scratch)
            one, each = big_projects(scratch, tools)
        all_cases = cases(scratch, example, one, each, rounds)
        if options.only is not None:
            all_cases = [all_cases[0], *(case for case in all_cases[1:] if options.only in case.label)]
        loads = measure(all_cases, rounds)
        if counting:
            count(all_cases, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    command = "python benchmarks/bench_startup.py" + ("" if rounds == 9 else f" --rounds {rounds}")
    section = report(all_cases, loads, rounds, command, source)
    if not counting:
        section += "\nInstructions were not counted (valgrind absent, or --no-instructions).\n"
    print(section)
    if not (options.quick or options.no_readme or options.only):
        write_readme(section)


if __name__ == "__main__":
    main()
