"""Where a forced build's time goes: generate(), toolgen's rewrites, the rest; --profile's stages and hotspots."""

from __future__ import annotations

import contextlib
import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from build_inputs import combined_schema, model_schemas, write_project
from build_plan import Plan, Results, Row, timed
from build_side_by_side import dmcg_generate


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
    projects = [(n, write_project(scratch / f"split_{n}", spread(tools[: max(plan.scaling)], n))) for n in plan.scaling]
    projects.append((plan.long_names, write_project(scratch / "long_names", [long_names_tool(plan.long_names)])))
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
            with stage("format_python (ruff check --fix twice + ruff format, 3 subprocesses)"):
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
