"""How long a generated SDK takes to import as its tool count grows, and what first use of one tool costs.

    python benchmarks/bench_import.py            # 10, 1,000 and 3,000 tools, 15 rounds; rewrites benchmarks/README.md
    python benchmarks/bench_import.py --quick    # 10 and 100 tools, 3 rounds, prints only
    python benchmarks/bench_import.py --synthetic  # synthetic tools even when the tooldefs corpus is there

Each size is a project of the first N tools of the shared tooldefs corpus that toolgen accepts (as
benchmarks/bench_build.py picks them), or synthetic tools of the same shape without it, built once. Every
round then runs, in fresh interpreters and interleaved (the floor, then each size): `python -c "import
pydantic"`, and `import <pkg>` of each SDK, timed from outside (wall and CPU time of the child, bytecode
cached). Inside one more fresh process per size and round, the child times itself: first use of one
tool's arguments model (`from <pkg> import XArgs`, its first validation) and `TOOLS[name]` with the spec's
`args_model`. Medians are reported, with the load average, since the machine is shared. After the rounds,
the floor and each import run once more under `valgrind --tool=callgrind` (PYTHONHASHSEED=0), which counts
the instructions they execute: a count other load on the machine does not change.

This is a measuring script, not a test: nothing here runs under pytest.
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
from pathlib import Path
from types import MappingProxyType

REPO = Path(__file__).resolve().parents[1]
README = Path(__file__).resolve().parent / "README.md"
START = "<!-- import-results:start (written by benchmarks/bench_import.py; do not edit by hand) -->"
END = "<!-- import-results:end -->"
PACKAGE = "bench_sdk"
ENV = MappingProxyType({name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"})
# The aims: the largest SDK (3,000 tools) imports within 1.3x of a 10-tool one, in CPU time and in instructions
# (issue 40; 1,000 tools within 1.5x, issue 18); first use of a model < 5 ms.
IMPORT_AIM = 1.3
FIRST_USE_AIM_MS = 5.0

# Run in the child: times first use of one tool's models after the package imported.
FIRST_USE = """
import json, sys, time
started = time.perf_counter()
import {package} as sdk
imported = time.perf_counter()
name = sorted(sdk.TOOLS)[len(sdk.TOOLS) // 2]
spec = sdk.TOOLS[name]
args_model = spec.args_model
loaded = time.perf_counter()
try:
    spec.check_arguments({{}})
except Exception:
    pass  # most tools require arguments: the validation error is the first use being timed
validated = time.perf_counter()
print(json.dumps({{"import": imported - started, "load": loaded - imported, "validate": validated - loaded}}))
"""


def toolgen() -> list[str]:
    script = Path(sys.executable).with_name("toolgen")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolgen"]


def project_tools(count: int, synthetic: bool, scratch: Path) -> tuple[list[dict[str, object]], bool]:
    """The first `count` tools (each size takes the first N of them), and whether they are the corpus's."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_build
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    if not synthetic and bench_build.CORPUS.is_dir():
        return bench_build.corpus_tools(count, scratch), True
    return bench_build.synthetic_tools(count), False


def build_project(root: Path, tools: list[dict[str, object]], corpus: bool) -> Path:
    root.mkdir(parents=True)
    normalize = "normalize: [types]\n" if corpus else ""
    (root / "toolgen.yaml").write_text(
        f"version: v1\npackage: {PACKAGE}\noutput: generated\ninputs: [tools.json]\n{normalize}", encoding="utf-8"
    )
    (root / "tools.json").write_text(json.dumps({"tools": tools}, ensure_ascii=False), encoding="utf-8")
    print(f"building {len(tools):,} {'corpus' if corpus else 'synthetic'} tools in {root} ...", file=sys.stderr)
    done = subprocess.run([*toolgen(), "build", "--quiet"], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"build of {root} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return root / "generated"


def timed(command: list[str], cwd: Path) -> tuple[float, float, str]:
    """One fresh run: (wall seconds, CPU seconds of the child, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} in {cwd}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def instructions(command: list[str], cwd: Path) -> int:
    """The instructions one run of `command` executes, as callgrind counts them."""
    with tempfile.TemporaryDirectory(prefix="toolgen-callgrind-") as scratch:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *command],
            cwd=cwd,
            env={**ENV, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
            check=False,
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{' '.join(command)} under callgrind: exit {done.returncode}\n{done.stderr[-2000:]}")
    return int(found.group(1))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 and 100 tools, 3 rounds; print only")
    parser.add_argument("--synthetic", action="store_true", help="synthetic tools, not the tooldefs corpus")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--no-instructions", action="store_true", help="no callgrind counts (valgrind not needed)")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    options = parser.parse_args()
    sizes = (10, 100) if options.quick else (10, 1000, 3000)
    counting = not options.no_instructions and shutil.which("valgrind") is not None
    rounds = options.rounds or (3 if options.quick else 15)
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-import-") as scratch:
        tools, corpus = project_tools(max(sizes), options.synthetic, Path(scratch))
        folders = {n: build_project(Path(scratch) / f"tools{n}", tools[:n], corpus) for n in sizes}
        floor_command = [sys.executable, "-c", "import pydantic"]
        labels = ["python -c 'import pydantic' (floor)", *(f"import {PACKAGE} ({n:,} tools)" for n in sizes)]
        commands = [(floor_command, Path(scratch))] + [
            ([sys.executable, "-c", f"import {PACKAGE}"], folders[n]) for n in sizes
        ]
        for command, cwd in commands:  # untimed warm-up: writes the bytecode caches the timed runs read
            timed(command, cwd)
        wall: dict[str, list[float]] = {label: [] for label in labels}
        cpu: dict[str, list[float]] = {label: [] for label in labels}
        inside: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
        loads = []
        for _ in range(rounds):
            for label, (command, cwd) in zip(labels, commands, strict=True):
                spent, used, _ = timed(command, cwd)
                wall[label].append(spent)
                cpu[label].append(used)
            for n in sizes:
                script = FIRST_USE.format(package=PACKAGE)
                inside[n].append(json.loads(timed([sys.executable, "-c", script], folders[n])[2]))
            loads.append(os.getloadavg()[0])
        counted = {}
        if counting:
            for label, (command, cwd) in zip(labels, commands, strict=True):
                counted[label] = instructions(command, cwd)
    section = report(labels, wall, cpu, counted, inside, sizes, rounds, loads, options)
    print(section)
    if not (options.quick or options.no_readme):
        write_readme(section)


def report(
    labels: list[str],
    wall: dict[str, list[float]],
    cpu: dict[str, list[float]],
    counted: dict[str, int],
    inside: dict[int, list[dict[str, float]]],
    sizes: tuple[int, ...],
    rounds: int,
    loads: list[float],
    options: argparse.Namespace,
) -> str:
    median = {label: statistics.median(values) for label, values in wall.items()}
    cpu_median = {label: statistics.median(values) for label, values in cpu.items()}
    smallest = labels[1]
    lines = [
        f"Measured {dt.date.today().isoformat()} on {platform.machine()} ({os.cpu_count()} CPUs), Python "
        f"{platform.python_version()}: {rounds} interleaved rounds of fresh processes, medians; load average "
        f"{min(loads):.2f}-{max(loads):.2f} during the run; instructions: one run of each under callgrind. "
        f"Command: `python benchmarks/bench_import.py"
        f"{' --quick' if options.quick else ''}{' --synthetic' if options.synthetic else ''}`.",
        "",
        f"| command | wall | CPU | instructions | vs {sizes[0]} tools (wall) | vs {sizes[0]} tools (CPU) "
        f"| vs {sizes[0]} tools (instructions) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def versus(values: dict[str, float], label: str) -> str:
        return "" if label == labels[0] or label not in values else f"{values[label] / values[smallest]:.2f}x"

    for label in labels:
        count = f"{counted[label] / 1e6:,.0f} M" if label in counted else ""
        lines.append(
            f"| {label} | {ms(median[label])} | {ms(cpu_median[label])} | {count} | {versus(median, label)} | "
            f"{versus(cpu_median, label)} | {versus(dict(counted), label)} |"
        )
    lines += ["", "| first use of one tool (inside the process) | " + " | ".join(f"{n:,} tools" for n in sizes) + " |"]
    lines.append("|---|" + "---:|" * len(sizes))
    for key, what in (
        ("import", f"`import {PACKAGE}`"),
        ("load", "`TOOLS[name].args_model` (its module imported, its classes made)"),
        ("validate", "its first validation (pydantic builds the validator)"),
    ):
        cells = [ms(statistics.median(sample[key] for sample in inside[n])) for n in sizes]
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    first_use = max(statistics.median(s["load"] + s["validate"] for s in inside[n]) for n in sizes)
    biggest = labels[-1]
    counts = f", {counted[biggest] / counted[smallest]:.2f}x in instructions" if biggest in counted and counted else ""
    lines += [
        "",
        f"Aims: {sizes[-1]:,} tools within {IMPORT_AIM}x of {sizes[0]} tools: "
        f"{cpu_median[biggest] / cpu_median[smallest]:.2f}x in CPU time{counts} "
        f"({median[biggest] / median[smallest]:.2f}x wall); first use of one tool's model under "
        f"{FIRST_USE_AIM_MS:.0f} ms: {first_use * 1000:.1f} ms (the slowest size).",
    ]
    return "\n".join(lines)


def write_readme(section: str) -> None:
    text = README.read_text(encoding="utf-8")
    block = f"{START}\n{section}\n{END}"
    if START in text and END in text:
        text = text[: text.index(START)] + block + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n## SDK import as the tool count grows\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
