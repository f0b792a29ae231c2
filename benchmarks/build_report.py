"""The build benchmark's report: the machine, the tables of its results, and their place in benchmarks/README.md."""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import os
import platform
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from build_inputs import REPO
from build_plan import SLOW, Plan, Results
from build_under_test import UnderTest

README = Path(__file__).resolve().parent / "README.md"
START = "<!-- bench-results:start (written by benchmarks/bench_build.py; do not edit by hand) -->"
END = "<!-- bench-results:end -->"


def fmt_seconds(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:.0f} ms" if value >= 0.01 else f"{value * 1000:.1f} ms"


def fmt_ratio(alternative: float, ours: float) -> str:
    ratio = alternative / ours
    return f"toolgen {ratio:.1f}x faster" if ratio >= 1 else f"toolgen {1 / ratio:.1f}x slower"


def machine(under: UnderTest, loads: Sequence[float]) -> list[str]:
    """The report's lines on the toolgen measured, the machine, and the load sampled over the run."""
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
    commit = under.label or commit
    return [
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC"
        + (f"; toolgen from {commit}" if commit else ""),
        f"- Machine: {platform.system()} {platform.machine()}, nproc {usable}" + (f", {cpu}" if cpu else ""),
        f"- Python {platform.python_version()} ({platform.python_implementation()})",
        f"- 1-minute load average sampled after each measurement: {min(loads):.1f} to {max(loads):.1f} on {usable} CPUs"
        + (
            " (other processes were running, so absolute times carry noise; the ratios less so)"
            if max(loads) > (usable or 1) * 0.75
            else ""
        ),
        f"- Packages: {', '.join(versions)}",
    ]


def report(results: Results, plan: Plan, command: str, under: UnderTest, floor: list[str] | None = None) -> str:
    lines = [
        f"Command: `{command}`",
        "",
        *machine(under, results.loads),
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
