"""toolgen build vs datamodel-code-generator, side by side on the same tool schemas.

    python benchmarks/bench_build.py            # full run (a few minutes), rewrites the results in benchmarks/README.md
    python benchmarks/bench_build.py --quick    # smoke run: small sizes, one or two reps, prints only
    python benchmarks/bench_build.py --profile  # also a stage split and cProfile hotspots of a 1,000-tool build
    python benchmarks/bench_build.py --ref HEAD # toolgen as committed at HEAD (git archive), not the working tree
    python benchmarks/bench_build.py --floor-only  # only the build beside its floor (CPU, instructions), prints only

Inputs are the first N distinct-named tool definitions of the shared tooldefs corpus (in the order
tests/support/tooldefs_corpus.py extracts them) that toolgen's front end accepts with `normalize: [types]`
(so each one's inputSchema is valid JSON Schema after type normalization). Without the corpus,
synthetic tools of realistic shape stand in, and the output says so.

The alternatives get exactly the JSON Schemas toolgen turns into models: each tool's normalized,
standalone inputSchema (plus outputSchema when it has one), titled with the class name toolgen gives it.

First comes the build beside its floor (build_floor.py): a forced build, as a rebuild and with its scratch
caches removed, next to one generate() over the same schemas with formatters off, in wall time, CPU time (child
processes included) and, at 1 and 100 tools, instructions counted by callgrind.

This is a measuring script, not a test: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as dt
import importlib.metadata
import io
import itertools
import json
import os
import platform
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "tooldefs"
README = Path(__file__).resolve().parent / "README.md"
START = "<!-- bench-results:start (written by benchmarks/bench_build.py; do not edit by hand) -->"
END = "<!-- bench-results:end -->"
PACKAGE = "bench_sdk"

# The options toolgen itself passes to datamodel-code-generator (targets/models.py), so that both
# sides produce comparable models; formatters are datamodel-code-generator's defaults (black, isort),
# which is what a user gets, while toolgen formats with ruff.
DMCG_CLI_OPTIONS = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "pydantic_v2.BaseModel",
    "--target-python-version",
    "3.10",
    "--snake-case-field",
    "--use-title-as-name",
    "--use-annotated",
    "--field-constraints",
    "--enum-field-as-literal",
    "all",
    "--use-schema-description",
    "--disable-timestamp",
]


SLOW = 1000  # project size from which every case gets plan.reps_slow repetitions


@dataclass
class Plan:
    sizes: tuple[int, ...]
    reps_fast: int  # cases well under a second
    reps_slow: int  # cases of several seconds (1,000-tool builds, generate() over 1,000 schemas)
    reps_cli: int  # subprocess cases
    sample: int  # schemas timed per rep for the extrapolated datamodel-codegen CLI rows
    noop_size: int
    scaling: tuple[int, ...]  # project sizes whose builds are split into generate(), the rewrites and the rest
    long_names: int  # property names of the one wide tool of the long-names case
    floor_sizes: tuple[int, ...]  # project sizes whose builds are measured beside their floor (build_floor.py)
    callgrind_sizes: tuple[int, ...]  # of those, the sizes whose instructions callgrind counts


FULL = Plan(
    sizes=(1, 100, 1000),
    reps_fast=7,
    reps_slow=3,
    reps_cli=5,
    sample=10,
    noop_size=1000,
    scaling=(1000, 3000),
    long_names=1200,
    floor_sizes=(1, 100, 1000, 3000),
    callgrind_sizes=(1, 100),
)
QUICK = Plan(
    sizes=(1, 10, 50),
    reps_fast=2,
    reps_slow=1,
    reps_cli=1,
    sample=3,
    noop_size=50,
    scaling=(10, 50),
    long_names=120,
    floor_sizes=(1, 10, 50),
    callgrind_sizes=(1,),
)


@dataclass
class Row:
    key: str
    case: str
    tools: int
    times: list[float]
    note: str = ""
    extrapolated: bool = False

    @property
    def median(self) -> float:
        return statistics.median(self.times)


@dataclass
class Results:
    source: str
    rows: list[Row] = field(default_factory=list)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        LOADS.append(_load())
        spread = f"{min(row.times):.3f}-{max(row.times):.3f}" if len(row.times) > 1 else "-"
        print(
            f"  {row.case:<58} n={row.tools:<5} reps={len(row.times):<2} median {row.median:9.3f} s  [{spread}]",
            flush=True,
        )
        return row

    def get(self, key: str) -> Row | None:
        return next((r for r in self.rows if r.key == key), None)


# --------------------------------------------------------------------------------------------------
# Inputs


def _name_of(raw: dict[str, Any]) -> Any:
    for holder in (raw, raw.get("function"), raw.get("toolSpec")):
        if isinstance(holder, dict) and "name" in holder:
            return holder["name"]
    return raw.get("api_name")


def _corpus_candidates() -> Iterator[dict[str, Any]]:
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from support.tooldefs_corpus import iter_corpus_tools
    finally:
        sys.path.remove(str(REPO / "tests"))
    seen: set[str] = set()
    for tool in iter_corpus_tools(CORPUS):
        name = _name_of(tool.raw)
        if isinstance(name, str) and name not in seen:
            seen.add(name)
            yield tool.raw


def _write_project(root: Path, defs: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "toolgen.yaml").write_text(
        f"version: v1\npackage: {PACKAGE}\noutput: generated\ninputs: [tools.json]\nnormalize: [types]\n",
        encoding="utf-8",
    )
    (root / "tools.json").write_text(json.dumps({"tools": defs}, indent=1, ensure_ascii=False), encoding="utf-8")
    return root


def _rejected(root: Path) -> set[int]:
    """Indexes of the tools in root/tools.json that toolgen's front end rejects (any error diagnostic)."""
    from toolgen.core.errors import InvalidInputError
    from toolgen.ir.lower import lower
    from toolgen.policy.build_lint import build_lint
    from toolgen.project.config import load_config

    try:
        config = load_config(root)
        build_lint(config, lower(config))  # what a build refuses beyond the front end: its providers' lint
    except InvalidInputError as error:
        bad = set()
        for diagnostic in error.diagnostics:
            if diagnostic.severity.value != "error":
                continue
            parts = diagnostic.pointer.split("/")
            if len(parts) < 3 or parts[1] != "tools" or not parts[2].isdigit():
                raise RuntimeError(f"diagnostic not tied to one tool: {diagnostic.format()}") from None
            bad.add(int(parts[2]))
        return bad
    return set()


def corpus_tools(count: int, scratch: Path) -> list[dict[str, Any]]:
    """The first `count` distinct-named corpus definitions that toolgen accepts with normalize: [types]."""
    candidates = _corpus_candidates()
    accepted: list[dict[str, Any]] = []
    rejected = 0
    while True:  # until a round rejects nothing: the lint runs only once the front end takes every tool
        batch = list(itertools.islice(candidates, count - len(accepted) + 50 if len(accepted) < count else 0))
        trial = accepted + batch
        bad = _rejected(_write_project(scratch / "select", trial))
        rejected += len(bad)
        accepted = [d for i, d in enumerate(trial) if i not in bad]
        if not bad and len(accepted) >= count or len(accepted) < count and not batch:
            break
    if len(accepted) < count:
        raise RuntimeError(f"the corpus has only {len(accepted)} usable definitions, {count} wanted")
    print(
        f"selected {count} corpus definitions ({rejected} rejected by toolgen's front end or lint along the way)",
        flush=True,
    )
    return accepted[:count]


_WORDS = (
    "account",
    "customer",
    "order",
    "invoice",
    "file",
    "folder",
    "message",
    "channel",
    "user",
    "project",
    "issue",
    "repository",
    "branch",
    "ticket",
    "event",
    "calendar",
    "location",
    "city",
    "country",
    "currency",
    "amount",
    "price",
    "product",
    "query",
    "page",
    "limit",
    "status",
    "region",
    "language",
    "model",
    "image",
    "document",
    "record",
    "metric",
)


def synthetic_tools(count: int) -> list[dict[str, Any]]:
    """Stand-ins shaped like the corpus: OpenAI-style function declarations, 1-8 parameters, enums,
    bounds, arrays and the odd nested object."""
    rng = random.Random(20240601)
    tools = []
    for index in range(count):
        verb = rng.choice(["get", "list", "create", "update", "delete", "search", "send", "compute"])
        noun = rng.choice(_WORDS)
        properties: dict[str, Any] = {}
        for _ in range(rng.randint(1, 8)):
            pname = f"{rng.choice(_WORDS)}_{rng.choice(['id', 'name', 'count', 'type', 'list', 'filter', 'options'])}"
            kind = rng.choice(["string", "string", "integer", "number", "boolean", "enum", "array", "object"])
            description = f"The {pname.replace('_', ' ')} to use for this {noun} request."
            if kind == "enum":
                prop: dict[str, Any] = {"type": "string", "enum": rng.sample(_WORDS, 3), "description": description}
            elif kind == "array":
                prop = {"type": "array", "items": {"type": "string"}, "description": description}
            elif kind == "object":
                prop = {
                    "type": "object",
                    "description": description,
                    "properties": {
                        "start": {"type": "string", "description": "Start of the range."},
                        "end": {"type": "string", "description": "End of the range."},
                    },
                    "required": ["start"],
                }
            elif kind == "integer":
                prop = {"type": "integer", "minimum": 0, "maximum": 1000, "description": description}
            else:
                prop = {"type": kind, "description": description}
            properties[pname] = prop
        required = sorted(rng.sample(sorted(properties), rng.randint(0, len(properties))))
        tools.append(
            {
                "name": f"{verb}_{noun}_{index}",
                "description": f"{verb.capitalize()} a {noun} and return the result as JSON.",
                "parameters": {"type": "object", "properties": properties, "required": required},
            }
        )
    return tools


def model_schemas(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(class name, standalone JSON Schema) of every tool model of the project, tools in file order."""
    from toolgen.ir.lower import lower
    from toolgen.ir.model import thaw
    from toolgen.project.config import load_config

    project = lower(load_config(root)).project
    order = {
        _name_of(d): i for i, d in enumerate(json.loads((root / "tools.json").read_text(encoding="utf-8"))["tools"])
    }
    schemas: list[tuple[str, dict[str, Any]]] = []
    for tool in sorted(project.tools, key=lambda t: order[t.name]):
        schemas.append((tool.args_model, {"title": tool.args_model, **thaw(tool.input_schema)}))
        if tool.result_model and tool.output_schema:
            schemas.append((tool.result_model, {"title": tool.result_model, **thaw(tool.output_schema)}))
    return schemas


def combined_schema(schemas: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """All schemas as `$defs` of one document (their own `$defs` hoisted; toolgen names them globally)."""
    defs: dict[str, Any] = {}
    for name, schema in schemas:
        body = dict(schema)
        defs.update(body.pop("$defs", {}))
        defs[name] = body
    return {"title": "Root", "$defs": defs}


# --------------------------------------------------------------------------------------------------
# Measurements


def timed(function: Callable[[], Any]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def repeat(function: Callable[[], Any], reps: int) -> list[float]:
    return [timed(function) for _ in range(reps)]


def _script(name: str) -> list[str]:
    local = Path(sys.executable).with_name(name)
    if local.exists():
        return [str(local)]
    found = shutil.which(name)
    if found:
        return [found]
    module = {"toolgen": "toolgen", "datamodel-codegen": "datamodel_code_generator"}[name]
    return [sys.executable, "-m", module]


# Where the toolgen under test comes from; --ref swaps in a committed version for the working tree.
SOURCE: dict[str, Any] = {"toolgen": "", "env": None}


def use_ref(ref: str, scratch: Path) -> str:
    """Import toolgen (and run its CLI) from `git archive REF` instead of the working tree; returns a description."""
    if "toolgen" in sys.modules:
        raise RuntimeError("toolgen was imported before --ref could take effect")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", f"{ref}^{{commit}}"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "generator", "templates", "schemas"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    source = scratch / "toolgen-src"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(source, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(source)
    sys.path.insert(0, str(source / "generator"))
    SOURCE["env"] = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(source / "generator"), os.environ.get("PYTHONPATH")])),
    }
    import toolgen

    if not Path(toolgen.__file__).is_relative_to(source):
        raise RuntimeError(f"--ref: toolgen still imports from {toolgen.__file__}")
    return f"commit {commit} (`--ref {ref}`: a git archive of generator/, templates/, schemas/, not the working tree)"


def run(arguments: list[str], cwd: Path) -> None:
    env = SOURCE["env"]
    completed = subprocess.run(arguments, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments[:3])} ... exited {completed.returncode}: {completed.stderr[-2000:]}")


def dmcg_cli(schema_file: Path) -> None:
    run(
        [
            *_script("datamodel-codegen"),
            "--input",
            str(schema_file),
            "--output",
            str(schema_file.with_suffix(".py")),
            *DMCG_CLI_OPTIONS,
        ],
        schema_file.parent,
    )


def dmcg_generate(schema: dict[str, Any]) -> str:
    from datamodel_code_generator import DataModelType, InputFileType, PythonVersion, generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = generate(
            schema,
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            target_python_version=PythonVersion.PY_310,
            snake_case_field=True,
            use_title_as_name=True,
            use_annotated=True,
            field_constraints=True,
            enum_field_as_literal="all",
            use_schema_description=True,
            use_field_description=False,
            disable_timestamp=True,
        )
    assert isinstance(output, str) and "class " in output
    return output


def sample_indexes(total: int, count: int) -> list[int]:
    if total <= count:
        return list(range(total))
    return sorted({round(i * (total - 1) / (count - 1)) for i in range(count)})


@dataclass
class Case:
    key: str
    label: str
    reps: int
    run: Callable[[], float]  # one repetition, returns seconds
    note: str = ""
    extrapolated: bool = False


def timer(function: Callable[[], Any]) -> Callable[[], float]:
    return lambda: timed(function)


def interleaved(results: Results, tools: int, cases: list[Case]) -> None:
    """Repetitions round-robin over the cases, so load that comes and goes hits every case alike."""
    times: dict[str, list[float]] = {case.key: [] for case in cases}
    for rep in range(max(case.reps for case in cases)):
        for case in cases:
            if rep < case.reps:
                times[case.key].append(case.run())
    for case in cases:
        results.add(Row(case.key, case.label, tools, times[case.key], case.note, case.extrapolated))


def extrapolated_cli(paths: list[Path], picked: list[Path]) -> Callable[[], float]:
    def one_rep() -> float:
        return statistics.fmean(timed(lambda p=p: dmcg_cli(p)) for p in picked) * len(paths)

    return one_rep


def size_cases(plan: Plan, n: int, root: Path, scratch: Path) -> list[Case]:
    import toolgen

    reps = plan.reps_slow if n >= SLOW else plan.reps_fast
    toolgen.build(root, force=True)  # warm-up, untimed: imports and first-call caches
    cases = [
        Case(
            f"build_{n}", "toolgen.build(force=True), in-process", reps, timer(lambda: toolgen.build(root, force=True))
        )
    ]
    if n == min(plan.sizes):
        cases.append(
            Case(
                f"build_cli_{n}",
                "`toolgen build --force`, CLI subprocess",
                plan.reps_cli,
                timer(lambda: run([*_script("toolgen"), "build", "--force"], root)),
            )
        )

    schemas = model_schemas(root)
    files = scratch / f"schemas_{n}"
    files.mkdir()
    paths = []
    for name, schema in schemas:
        path = files / f"{name}.json"
        path.write_text(json.dumps(schema, indent=1, ensure_ascii=False), encoding="utf-8")
        paths.append(path)
    picked = [paths[i] for i in sample_indexes(len(paths), plan.sample)]
    if len(picked) == len(paths):
        cases.append(
            Case(
                f"dmcg_cli_{n}",
                "`datamodel-codegen` CLI once per schema",
                plan.reps_cli,
                timer(lambda: [dmcg_cli(p) for p in paths]),
                note=f"{len(paths)} schema(s), all run",
            )
        )
    else:
        cases.append(
            Case(
                f"dmcg_cli_{n}",
                "`datamodel-codegen` CLI once per schema (extrapolated)",
                plan.reps_cli if n < SLOW else plan.reps_slow,
                extrapolated_cli(paths, picked),
                note=f"{len(picked)} of {len(paths)} schemas timed per rep, mean x {len(paths)}",
                extrapolated=True,
            )
        )

    dmcg_generate(schemas[0][1])  # warm-up, untimed: the import and its first-call costs
    cases.append(
        Case(
            f"dmcg_each_{n}",
            "datamodel_code_generator.generate() once per schema",
            reps,
            timer(lambda: [dmcg_generate(s) for _, s in schemas]),
            note=f"{len(schemas)} schema(s)",
        )
    )
    combined = combined_schema(schemas)
    cases.append(
        Case(
            f"dmcg_one_{n}",
            "datamodel_code_generator.generate() on one combined schema",
            reps,
            timer(lambda: dmcg_generate(combined)),
        )
    )

    if n == plan.noop_size:
        # Every forced build above leaves the project built and unchanged, so these stay valid when interleaved.
        if toolgen.build(root).written:
            raise RuntimeError("a build without force rewrote an unchanged project")
        if not toolgen.check(root).ok:
            raise RuntimeError("toolgen check found drift in a freshly built project")
        cases += [
            Case(
                "noop",
                "toolgen.build() without force, nothing changed",
                plan.reps_fast,
                timer(lambda: toolgen.build(root)),
            ),
            Case("check", "toolgen.check(), in-process, up to date", reps, timer(lambda: toolgen.check(root))),
            Case(
                "check_cli",
                "`toolgen check`, CLI subprocess, up to date",
                plan.reps_slow,
                timer(lambda: run([*_script("toolgen"), "check"], root)),
            ),
        ]
    return cases


def measure(plan: Plan, tools: list[dict[str, Any]], source: str, scratch: Path) -> Results:
    results = Results(source)
    for n in plan.sizes:
        print(
            f"\n{n} tool(s)"
            + (" (and the no-op rebuild and check of the same project)" if n == plan.noop_size else ""),
            flush=True,
        )
        root = _write_project(scratch / f"project_{n}", tools[:n])
        interleaved(results, n, size_cases(plan, n, root, scratch))
    return results


def measure_floor(plan: Plan, tools: list[dict[str, Any]], scratch: Path, *, callgrind: bool) -> list[str]:
    """The build beside its floor at each of plan.floor_sizes (build_floor.py); the report's lines."""
    import build_floor

    projects = {n: _write_project(scratch / f"floor_{n}", tools[:n]) for n in plan.floor_sizes}
    schemas = {n: combined_schema(model_schemas(root)) for n, root in projects.items()}
    rows = build_floor.measure(projects, schemas, lambda n: plan.reps_slow if n >= SLOW else plan.reps_fast)
    LOADS.append(_load())
    problem = "left out (--no-callgrind)"
    if callgrind:
        counted = {n: projects[n] for n in plan.callgrind_sizes}
        problem = build_floor.count_instructions(rows, counted, SOURCE["env"])
        LOADS.append(_load())
    return build_floor.report(rows, problem)


# --------------------------------------------------------------------------------------------------
# Where a build's time goes: datamodel-code-generator, toolgen's rewrites of its module, everything else


@contextlib.contextmanager
def clocked(owner: Any, name: str, spent: list[float]) -> Iterator[bool]:
    """Time every call of owner.name into `spent` while the block runs; yields False when owner has no such name
    (internals move), and then times nothing."""
    original = getattr(owner, name, None)
    if original is None:
        yield False
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    setattr(owner, name, wrapper)
    try:
        yield True
    finally:
        setattr(owner, name, original)


def split_build(root: Path) -> tuple[float, float, float]:
    """One forced build: (whole build, datamodel-code-generator's generate() inside it, toolgen's rewrites of its
    module) in seconds; the rewrites are NaN when their function is not where this script looks. The models the
    build before kept are removed first, so that generate() runs as after a change of the schemas."""
    import datamodel_code_generator

    import toolgen
    import toolgen.codegen.targets.models as models_target
    from toolgen.output.build_cache import models_cache_path
    from toolgen.project.config import load_config

    models_cache_path(load_config(root)).unlink(missing_ok=True)

    generate: list[float] = []
    rewrite: list[float] = []
    with (
        clocked(datamodel_code_generator, "generate", generate),
        clocked(models_target, "rewrite_models", rewrite) as found,
    ):
        total = timed(lambda: toolgen.build(root, force=True))
    return total, sum(generate), sum(rewrite) if found else float("nan")


def long_names_tool(count: int) -> dict[str, Any]:
    """One tool of `count` camelCase property names of about 400 characters (each needs an alias), the shape
    of a generated API's wide request object; quadratic passes over the models module show here first."""
    properties = {
        f"theQuiteLongNameOfAPropertyThatAGeneratedApiGave{index:04d}" + "X" * 350: {
            "type": "string",
            "description": f"Property {index}.",
        }
        for index in range(count)
    }
    return {
        "name": "wide_tool",
        "description": "A tool with many long property names.",
        "parameters": {"type": "object", "properties": properties, "required": sorted(properties)[: count // 2]},
    }


def spread(tools: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` tools taken at even steps through `tools`: a smaller project of the same mix of tool sizes as the
    whole list, so that per-tool costs at two sizes compare like with like (corpus order runs source by source)."""
    step = len(tools) / count
    return [tools[int(index * step)] for index in range(count)]


def measure_split(results: Results, plan: Plan, tools: list[dict[str, Any]], scratch: Path) -> None:
    """Forced builds split three ways, at each scaling size and for the long-names tool; repetitions interleaved
    with one generate() over the same schemas alone."""
    projects = [
        (n, _write_project(scratch / f"split_{n}", spread(tools[: max(plan.scaling)], n))) for n in plan.scaling
    ]
    projects.append((plan.long_names, _write_project(scratch / "long_names", [long_names_tool(plan.long_names)])))
    for n, root in projects:
        label = f"{n:,} long property names" if root.name == "long_names" else f"{n:,} tools"
        print(f"\nsplit of a forced build: {label}", flush=True)
        split_build(root)  # warm-up, untimed
        combined = combined_schema(model_schemas(root))
        dmcg_generate(combined)
        parts: dict[str, list[float]] = {"build": [], "generate": [], "rewrite": [], "alone": []}
        for _ in range(plan.reps_slow):
            total, generate, rewrite = split_build(root)
            parts["build"].append(total)
            parts["generate"].append(generate)
            parts["rewrite"].append(rewrite)
            parts["alone"].append(timed(lambda schema=combined: dmcg_generate(schema)))
        key = "long" if root.name == "long_names" else f"split_{n}"
        size = 1 if root.name == "long_names" else n
        note = label if root.name == "long_names" else ""
        results.add(Row(f"{key}_build", "split: toolgen.build(force=True)", size, parts["build"], note))
        results.add(Row(f"{key}_generate", "split: generate() inside that build", size, parts["generate"], note))
        results.add(
            Row(f"{key}_rewrite", "split: toolgen's rewrites of the models module", size, parts["rewrite"], note)
        )
        results.add(Row(f"{key}_alone", "split: generate() alone on the combined schema", size, parts["alone"], note))


# --------------------------------------------------------------------------------------------------
# Profile


def stage_split(root: Path, rounds: int = 3) -> str:
    """Median wall time of each stage over a few rounds of (forced build, then the stages one by one),
    without the profiler's overhead. Uses toolgen internals: best effort, never breaks the benchmark."""
    import toolgen

    try:
        from toolgen.codegen.format import format_python
        from toolgen.codegen.render import header_line
        from toolgen.codegen.targets.models import render_models
        from toolgen.codegen.targets.package import render_package
        from toolgen.ir.lower import lower
        from toolgen.output.build_cache import models_cache_path
        from toolgen.project.config import load_config

        totals: list[float] = []
        split: dict[str, list[float]] = {}

        @contextlib.contextmanager
        def stage(name: str) -> Iterator[None]:
            start = time.perf_counter()
            yield
            split.setdefault(name, []).append(time.perf_counter() - start)

        for _ in range(rounds):
            models_cache_path(load_config(root)).unlink(missing_ok=True)  # the stages below make the models
            totals.append(timed(lambda: toolgen.build(root, force=True)))
            config = load_config(root)
            header = header_line(config)
            with stage("lower (load, shapes, normalize, meta-schema checks, resolve, IR)"):
                project = lower(config).project
            with stage("render_models (datamodel-code-generator, then toolgen's one-pass rewrites)"):
                files = {"models.py": render_models(project, header)}
            with stage("render_package (templates)"):
                files.update(render_package(project, header))
            with stage("format_python (ruff check --fix + ruff format, 2 subprocesses)"):
                format_python(files, config.package)
    except Exception as error:  # noqa: BLE001 - internals move; the benchmark itself must not break
        return f"stage split unavailable ({type(error).__name__}: {error})"
    total = statistics.median(totals)
    medians = {name: statistics.median(times) for name, times in split.items()}
    medians["the rest: config, manifest, staged check, fsync, rename, build cache"] = total - sum(medians.values())
    lines = [f"stage split of toolgen.build(force=True), no profiler, medians of {rounds}; build median {total:.2f} s:"]
    lines += [f"{seconds:8.3f} s {seconds / total:6.1%}  {name}" for name, seconds in medians.items()]
    return "\n".join(lines)


def profile(root: Path, top: int = 20) -> str:
    """Top cumulative-time functions of toolgen's own code in one forced build, with their share."""
    import toolgen

    toolgen.build(root, force=True)
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(toolgen.build, root, force=True)
    total = time.perf_counter() - start
    stats = pstats.Stats(profiler)
    own = str(Path(toolgen.__file__).parent)
    rows = []
    for (filename, line, function), (_, calls, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if filename.startswith(own):
            rows.append(
                (cumulative, calls, f"{Path(filename).relative_to(Path(own).parent).as_posix()}:{line}({function})")
            )
    rows.sort(reverse=True)
    lines = [
        f"cProfile of toolgen.build(force=True), {total:.2f} s wall under the profiler;"
        " toolgen functions by cumulative time:",
        f"{'cumulative s':>12} {'share':>6} {'calls':>8}  function",
    ]
    lines += [f"{c:12.3f} {c / total:6.1%} {k:8d}  {name}" for c, k, name in rows[:top]]
    external = io.StringIO()
    pstats.Stats(profiler, stream=external).sort_stats("tottime").print_stats(12)
    lines += ["", "all code by own (tottime) time:", *external.getvalue().strip().splitlines()[-16:]]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Report


def fmt_seconds(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:.0f} ms" if value >= 0.01 else f"{value * 1000:.1f} ms"


def fmt_ratio(alternative: float, ours: float) -> str:
    ratio = alternative / ours
    return f"toolgen {ratio:.1f}x faster" if ratio >= 1 else f"toolgen {1 / ratio:.1f}x slower"


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


LOADS: list[float] = []


def machine() -> list[str]:
    cpu = ""
    with contextlib.suppress(OSError):
        match = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.MULTILINE)
        cpu = match.group(1).strip() if match else ""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = []
    for package in (
        "toolgen",
        "datamodel-code-generator",
        "pydantic",
        "ruff",
        "black",
        "isort",
        "jsonschema",
        "PyYAML",
    ):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions.append(f"{package} {importlib.metadata.version(package)}")
    commit = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "generator", "templates", "schemas"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        if head.returncode == 0:
            commit = (
                "the working tree at commit "
                + head.stdout.strip()
                + (" (with uncommitted changes in generator/templates/schemas)" if dirty.stdout.strip() else "")
            )
    commit = SOURCE["toolgen"] or commit
    return [
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC"
        + (f"; toolgen from {commit}" if commit else ""),
        f"- Machine: {platform.system()} {platform.machine()}, nproc {usable}" + (f", {cpu}" if cpu else ""),
        f"- Python {platform.python_version()} ({platform.python_implementation()})",
        f"- 1-minute load average sampled after each measurement: {min(LOADS):.1f} to {max(LOADS):.1f} on {usable} CPUs"
        + (
            " (other processes were running, so absolute times carry noise; the ratios less so)"
            if max(LOADS) > (usable or 1) * 0.75
            else ""
        ),
        f"- Packages: {', '.join(versions)}",
    ]


def report(results: Results, plan: Plan, command: str, floor: list[str] | None = None) -> str:
    lines = [
        f"Command: `{command}`",
        "",
        *machine(),
        f"- Inputs: {results.source}",
        (
            f"- Repetitions: medians of {plan.reps_fast} for in-process cases, {plan.reps_cli} for subprocess cases"
            + (
                f", {plan.reps_slow} for the slow cases at {SLOW:,} tools (all but the no-op rebuild)"
                if max(plan.sizes) >= SLOW
                else ""
            )
            + ", taken round-robin across the cases of one project size so that load which "
            "comes and goes hits every case alike; each in-process case has one untimed warm-up call first. Rows "
            f"marked *extrapolated* time {plan.sample} evenly spaced schemas per repetition and multiply their mean "
            "by the number of schemas."
        ),
        *(floor or []),
        "",
        "### Build from scratch",
        "",
        "Median wall time; under each alternative, alternative time / toolgen time.",
        "",
        "| tools | toolgen.build(force=True) | datamodel-codegen CLI per schema | generate() per schema"
        " | generate() on one combined schema |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for n in plan.sizes:
        build = results.get(f"build_{n}")
        assert build is not None
        cells = [fmt_seconds(build.median)]
        for key in ("dmcg_cli", "dmcg_each", "dmcg_one"):
            row = results.get(f"{key}_{n}")
            assert row is not None
            mark = " *extrapolated*" if row.extrapolated else ""
            cells.append(f"{fmt_seconds(row.median)}{mark}<br>{fmt_ratio(row.median, build.median)}")
        lines.append(f"| {n:,} | {' | '.join(cells)} |")
    lines += [
        "",
        "### Every measurement",
        "",
        "| case | tools | reps | median | min - max | note |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in results.rows:
        spread = f"{fmt_seconds(min(row.times))} - {fmt_seconds(max(row.times))}" if len(row.times) > 1 else "-"
        note = row.note + (" (extrapolated)" if row.extrapolated and "extrapolated" not in row.note else "")
        lines.append(
            f"| {row.case} | {row.tools:,} | {len(row.times)} | {fmt_seconds(row.median)} | {spread} | {note} |"
        )
    first = min(plan.sizes)
    cli, lib = results.get(f"build_cli_{first}"), results.get(f"build_{first}")
    noop, check, check_cli = results.get("noop"), results.get("check"), results.get("check_cli")
    forced = results.get(f"build_{plan.noop_size}")
    lines += ["", "### Derived", ""]
    if cli and lib:
        lines.append(
            f"- Process start cost of the `toolgen` CLI ({first} tool): {fmt_seconds(cli.median - lib.median)} "
            f"(CLI {fmt_seconds(cli.median)} vs in-process {fmt_seconds(lib.median)})."
        )
    if noop and forced:
        lines.append(
            f"- No-op rebuild of {plan.noop_size:,} tools: {fmt_seconds(noop.median)}, "
            f"{forced.median / noop.median:,.0f}x less than a forced build ({fmt_seconds(forced.median)})."
        )
    if check and forced:
        lines.append(
            f"- `toolgen check` of {plan.noop_size:,} tools: {fmt_seconds(check.median)} in-process"
            + (f", {fmt_seconds(check_cli.median)} as a CLI subprocess" if check_cli else "")
            + f"; {check.median / forced.median:.0%} of a forced build"
            " (it renders everything in memory and compares, but writes nothing)."
        )
    lines += split_report(results, plan)
    return "\n".join(lines)


def split_report(results: Results, plan: Plan) -> list[str]:
    """The split of forced builds: datamodel-code-generator, toolgen's rewrites of its module, everything else."""
    lines = [
        "",
        "### Where a build's time goes",
        "",
        "Medians of forced in-process builds (the models the build before kept removed first, so that generate() "
        "runs), each timed whole and, inside it, datamodel-code-generator's "
        "`generate()` and toolgen's rewrites of the module it returns (`targets/model_rewrites.py`); *rest* is "
        "everything else (load, meta-schema checks, normalize, lower, templates, ruff, the import check of the "
        "staged package, the atomic write). *generate() alone* is one call over the same schemas as one document, "
        "timed in the same round-robin.",
        "",
        "| project | build | generate() in it | rewrites | rewrites / build | rest | build per tool | generate() alone |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    keys = [(f"split_{n}", f"{n:,} tools", n) for n in plan.scaling] + [
        ("long", f"1 tool of {plan.long_names:,} long property names", 1)
    ]
    per_tool: dict[int, float] = {}
    for key, label, tools in keys:
        build, generate = results.get(f"{key}_build"), results.get(f"{key}_generate")
        rewrite, alone = results.get(f"{key}_rewrite"), results.get(f"{key}_alone")
        if not (build and generate and rewrite and alone):
            continue
        rest = build.median - generate.median - rewrite.median
        if key != "long":
            per_tool[tools] = build.median / tools
        lines.append(
            f"| {label} | {fmt_seconds(build.median)} | {fmt_seconds(generate.median)} | "
            f"{fmt_seconds(rewrite.median)} | {rewrite.median / build.median:.0%} | {fmt_seconds(rest)} | "
            f"{fmt_seconds(build.median / tools)} | {fmt_seconds(alone.median)} |"
        )
    if len(per_tool) == 2:
        small, large = sorted(per_tool)
        lines += [
            "",
            f"- Build time per tool at {large:,} tools / at {small:,} tools: {per_tool[large] / per_tool[small]:.2f}x "
            f"(the {small:,} tools are one in {large // small} of the {large:,}, so both hold the same mix of "
            "tool sizes).",
        ]
    return lines


def write_readme(section: str) -> None:
    text = README.read_text(encoding="utf-8") if README.exists() else "# Benchmarks\n"
    block = f"{START}\n{section}\n{END}"
    if START in text and END in text:
        text = text[: text.index(START)] + block + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n## Results\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1/10/50 tools, 1-2 reps; prints, leaves README.md alone"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile one build of the largest project and print toolgen's hotspots",
    )
    parser.add_argument(
        "--ref",
        metavar="REF",
        help="benchmark toolgen as committed at REF (git archive) instead of the working tree, e.g. while it is mid-edit",
    )
    parser.add_argument("--synthetic", action="store_true", help="use synthetic tools even when the corpus is present")
    parser.add_argument(
        "--no-callgrind", action="store_true", help="leave out the instruction counts (callgrind takes a few minutes)"
    )
    parser.add_argument(
        "--no-readme", action="store_true", help="print only; do not rewrite the results in benchmarks/README.md"
    )
    parser.add_argument(
        "--floor-only",
        action="store_true",
        help="only the build beside its floor (build_floor.py), at 1, 100, 1,000 and 3,000 tools; prints only",
    )
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    started = time.perf_counter()
    LOADS.append(_load())
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-") as scratch_name:
        scratch = Path(scratch_name)
        if args.ref:
            SOURCE["toolgen"] = use_ref(args.ref, scratch)
        largest = (
            max(*plan.floor_sizes)
            if args.floor_only
            else max(*plan.sizes, plan.noop_size, *plan.scaling, *plan.floor_sizes)
        )
        if CORPUS.is_dir() and not args.synthetic:
            tools = corpus_tools(largest, scratch)
            source = (
                f"the first N distinct-named definitions of the tooldefs corpus ({CORPUS.name}/, extractor order of "
                "tests/support/tooldefs_corpus.py) that toolgen accepts with `normalize: [types]`, one tools.json per project"
            )
        else:
            tools = synthetic_tools(largest)
            why = "--synthetic was given" if args.synthetic else f"{CORPUS} is absent"
            source = f"SYNTHETIC tools of realistic shape ({why}), one tools.json per project"
            print(f"using synthetic tools: {why}", flush=True)
        floor = measure_floor(plan, tools, scratch, callgrind=not args.no_callgrind)
        if args.floor_only:
            print("\n" + "\n".join([*machine(), f"- Inputs: {source}", *floor]))
            print(f"total wall time {time.perf_counter() - started:.0f} s")
            return
        results = measure(plan, tools, source, scratch)
        measure_split(results, plan, tools, scratch)
        hotspots = ""
        if args.profile:
            profiled = scratch / f"project_{max(*plan.sizes, plan.noop_size)}"
            hotspots = stage_split(profiled) + "\n\n" + profile(profiled)
    flags = [f for f, on in (("--quick", args.quick), ("--synthetic", args.synthetic)) if on]
    flags += [f"--ref {args.ref}"] if args.ref else []
    flags += ["--no-callgrind"] if args.no_callgrind else []
    section = report(results, plan, " ".join(["python benchmarks/bench_build.py", *flags]), floor)
    print("\n" + section)
    if hotspots:
        print("\n" + hotspots)
    if args.quick or args.no_readme:
        print("\n(README.md left alone: --quick / --no-readme)")
    else:
        write_readme(section)
        print(f"\nresults written to {README.relative_to(REPO)}")
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
