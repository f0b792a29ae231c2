"""A forced `toolgen build` beside its floor, one datamodel-code-generator generate() over the same schemas with
formatters off: wall time, CPU time and instruction counts, for bench_build.py.

CPU time is the process's own (every thread) plus its child processes' (the staged check's interpreter, ruff),
from getrusage, so that a busy machine, which stretches wall time, changes it less. Each size is measured four
ways, round-robin: the build as a rebuild finds the project (its scratch caches: ruff's output by file, the
compiled modules, the record of packages that passed the staged check, the models modules of the same schemas,
the runtime as carried, the templates compiled), the build after one tool's schema changed (its models made
again; then a new object in it), the build with those caches removed first (as a first build, or a build after every file changed), and
the floor. Instruction counts come from
valgrind's callgrind in a second process that runs this module: only the measured call is instrumented (a
warm-up call of each first, uninstrumented), and only that process, so a build that starts a child process is
said to (a rebuild starts none).
"""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRATCH = ".toolgen-cache"


@dataclass(frozen=True)
class Cost:
    """One repetition: wall seconds, CPU seconds (self and children), of which the children's."""

    wall: float
    cpu: float
    children: float


@dataclass
class FloorRow:
    tools: int
    warm: list[Cost] = field(default_factory=list)
    edited: list[Cost] = field(default_factory=list)
    nested: list[Cost] = field(default_factory=list)
    cold: list[Cost] = field(default_factory=list)
    floor: list[Cost] = field(default_factory=list)
    instructions: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def median(costs: Sequence[Cost], part: str) -> float:
        return float(statistics.median(float(getattr(cost, part)) for cost in costs))


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def costed(function: Callable[[], object]) -> Cost:
    """What one call of `function` costs (its children included once they are waited for, as a build does)."""
    own, children = _cpu()
    start = time.perf_counter()
    function()
    wall = time.perf_counter() - start
    own_after, children_after = _cpu()
    spent_children = children_after - children
    return Cost(wall, own_after - own + spent_children, spent_children)


def floor_generate(schema: Mapping[str, Any]) -> str:
    """The floor: one generate() over `schema`, toolgen's own options where they shape the models, formatters off."""
    from datamodel_code_generator import InputFileType, LiteralType, PythonVersion, generate
    from datamodel_code_generator.enums import DataModelType

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = generate(
            dict(schema),
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            target_python_version=PythonVersion.PY_310,
            snake_case_field=True,
            use_title_as_name=True,
            use_annotated=True,
            field_constraints=True,
            enum_field_as_literal=LiteralType.All,
            use_schema_description=True,
            use_field_description=False,
            disable_timestamp=True,
            formatters=[],
        )
    assert isinstance(output, str) and "class " in output
    return output


def forced_build(root: Path) -> Callable[[], object]:
    """One forced build of `root`, in-process."""
    import toolgen

    return lambda: toolgen.build(root, force=True)


def edit_one_schema(root: Path, mark: str, *, nested: bool = False) -> None:
    """Give the first object schema of the project's first tool the description `mark`: its models change, so
    the models the build before kept no longer apply; everything else it kept still does. With `nested`, give it
    instead a new property named after `mark` holding an object: a new model class, which the package's lazy
    table of model names lists too."""
    path = root / "tools.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    stack: list[Any] = [document["tools"][0]]
    while stack:
        node = stack.pop()
        if isinstance(node, dict) and isinstance(node.get("properties"), dict):
            if nested:
                name = "added_" + "".join(c if c.isalnum() else "_" for c in mark.lower()).strip("_")
                node["properties"][name] = {"type": "object", "properties": {"note": {"type": "string"}}}
            else:
                node["description"] = mark
            break
        stack.extend(
            reversed(list(node.values())) if isinstance(node, dict) else node if isinstance(node, list) else []
        )
    else:
        raise ValueError(f"{path}: the first tool has no object schema to edit")
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")


def measure(
    projects: Mapping[int, Path], schemas: Mapping[int, Mapping[str, Any]], reps: Callable[[int], int]
) -> list[FloorRow]:
    """Warm build, build after one schema changed, cold build and floor of each project, round-robin, after one
    untimed call of each."""
    rows = []
    for tools, root in projects.items():
        print(f"\n{tools:,} tool(s): build beside its floor", flush=True)
        row = FloorRow(tools)
        forced_build(root)()
        floor_generate(schemas[tools])
        original = (root / "tools.json").read_bytes()
        for rep in range(reps(tools)):
            row.warm.append(costed(forced_build(root)))
            edit_one_schema(root, f"Edited for the benchmark, round {rep}.")  # not timed
            row.edited.append(costed(forced_build(root)))
            edit_one_schema(root, f"round {rep}", nested=True)  # not timed
            row.nested.append(costed(forced_build(root)))
            shutil.rmtree(root / SCRATCH, ignore_errors=True)  # the cold build's caches, not timed
            row.cold.append(costed(forced_build(root)))
            row.floor.append(costed(functools.partial(floor_generate, schemas[tools])))
        (root / "tools.json").write_bytes(original)
        forced_build(root)()  # as the measurements left it, for the instruction counts
        labelled = (("build", row.warm), ("build, one schema changed", row.edited), ("build, a new object", row.nested))
        for label, costs in (*labelled, ("build, cold caches", row.cold), ("floor", row.floor)):
            print(
                f"  {label:<26} wall {FloorRow.median(costs, 'wall'):8.3f} s  CPU {FloorRow.median(costs, 'cpu'):8.3f} s"
                f"  (children {FloorRow.median(costs, 'children'):.3f} s)  reps={len(costs)}",
                flush=True,
            )
        rows.append(row)
    return rows


def count_instructions(rows: Sequence[FloorRow], projects: Mapping[int, Path], env: Mapping[str, str] | None) -> str:
    """Instructions of one warm build and of one floor call per project, into each row's `instructions`, under
    callgrind; what went wrong when it could not (valgrind missing, say), else ''."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return "valgrind is not installed: no instruction counts"
    with tempfile.TemporaryDirectory(prefix="toolgen-callgrind-") as folder:
        command = [
            valgrind,
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={folder}/callgrind.out.%p",
            sys.executable,
            str(Path(__file__).resolve()),
            *(f"{tools}={projects[tools]}" for tools in sorted(projects)),
        ]
        environment = {**(env or os.environ), "PYTHONHASHSEED": "0"}
        print(
            f"\ninstruction counts under callgrind ({', '.join(f'{n:,}' for n in sorted(projects))} tools)", flush=True
        )
        done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
        if done.returncode != 0:
            return f"callgrind failed (exit {done.returncode}): {done.stderr.strip()[-500:]}"
        counts = _dumped(Path(folder))
    for row in rows:
        for kind in ("build", "floor"):
            if f"{kind}-{row.tools}" in counts:
                row.instructions[kind] = counts[f"{kind}-{row.tools}"]
    return ""


def _dumped(folder: Path) -> dict[str, int]:
    """Each named dump's total instructions, from callgrind's output files."""
    counts: dict[str, int] = {}
    for path in folder.glob("callgrind.out.*"):
        name, total = "", None
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("desc: Trigger: dump "):
                name = line.removeprefix("desc: Trigger: dump ").strip()
            elif line.startswith("totals:"):
                total = int(line.split()[1])
        if name and total is not None:
            counts[name] = total
    return counts


def _callgrind_child(arguments: Sequence[str]) -> None:
    """Under callgrind: per project, a warm-up build and floor call, then one of each, instrumented and dumped."""
    import build_inputs

    pid = str(os.getpid())

    def control(*options: str) -> None:
        subprocess.run(["callgrind_control", *options, pid], check=True, capture_output=True)

    for argument in arguments:
        tools, root = int(argument.split("=", 1)[0]), Path(argument.split("=", 1)[1])
        schema = build_inputs.combined_schema(build_inputs.model_schemas(root))
        calls: list[tuple[str, Callable[[], object]]] = [
            ("build", forced_build(root)),
            ("floor", functools.partial(floor_generate, schema)),
        ]
        for kind, call in calls:
            call()
            children = _cpu()[1]
            control("--zero")
            control("--instr=on")
            call()
            control("--instr=off")
            control("--dump", f"{kind}-{tools}")
            if kind == "build" and _cpu()[1] != children:
                print(f"build-{tools} started a child process, which callgrind does not count", file=sys.stderr)


def report(rows: Sequence[FloorRow], problem: str) -> list[str]:
    """The README's table of the build beside its floor."""
    lines = [
        "",
        "### The build beside its floor",
        "",
        "A forced `toolgen.build(root, force=True)`, in-process, beside its floor: one datamodel-code-generator "
        "`generate()` over the same tool schemas as one document, formatters off. *Build* is a rebuild (its "
        "scratch caches as the build before left them: what ruff made of each file, the compiled modules, the "
        "record of packages that passed the staged check, the models modules of the same schemas, the runtime as "
        "carried, the templates compiled); *one schema changed* is a rebuild after the first tool's schema "
        "changed (a description), so its models are made again and the rest is kept; *a new object* is a rebuild "
        "after that tool's schema gained a property holding an object (a new model class, named in the models "
        "module's table too); *cold* removes those caches "
        "first, as a first build or one after every file changed. CPU is the process's own and its child processes' (the staged check's "
        "interpreter, ruff); medians, taken round-robin. Instructions (callgrind, one call after an uninstrumented "
        "warm-up, that process only; a rebuild starts no child process) are counted where given.",
        "",
        "| tools | build wall | build CPU | one schema changed CPU | a new object CPU | cold CPU (children) "
        "| floor wall | floor CPU | build / floor CPU | one changed / floor CPU | a new object / floor CPU "
        "| cold / floor CPU | build / floor instructions |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        build, edited, nested, cold, floor = (
            FloorRow.median(costs, "cpu") for costs in (row.warm, row.edited, row.nested, row.cold, row.floor)
        )
        cold_children = FloorRow.median(row.cold, "children")
        counted = row.instructions
        instructions = (
            f"{counted['build'] / 1e6:,.0f} M / {counted['floor'] / 1e6:,.0f} M = "
            f"{counted['build'] / counted['floor']:.2f}x"
            if {"build", "floor"} <= counted.keys()
            else "-"
        )
        lines.append(
            f"| {row.tools:,} | {_seconds(FloorRow.median(row.warm, 'wall'))} | {_seconds(build)} | {_seconds(edited)} "
            f"| {_seconds(nested)} | {_seconds(cold)} ({_seconds(cold_children)}) "
            f"| {_seconds(FloorRow.median(row.floor, 'wall'))} | {_seconds(floor)} | {build / floor:.2f}x "
            f"| {edited / floor:.2f}x | {nested / floor:.2f}x | {cold / floor:.2f}x | {instructions} |"
        )
    if problem:
        lines += ["", f"Instruction counts: {problem}."]
    return lines


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:.0f} ms" if value >= 0.01 else f"{value * 1000:.1f} ms"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    _callgrind_child(sys.argv[1:])
