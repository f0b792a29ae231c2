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

Its parts: build_inputs.py (the tools: corpus or synthetic, projects, their schemas), build_under_test.py
(the toolgen measured, --ref), build_plan.py (sizes, repetitions, results), build_side_by_side.py (toolgen beside
datamodel-code-generator and beside its floor), build_time_split.py (where a build's time goes, --profile) and
build_report.py (the tables, README.md).

This is a measuring script, not a test: nothing here runs under pytest.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from build_inputs import CORPUS, REPO, combined_schema, corpus_tools, model_schemas, synthetic_tools, write_project
from build_plan import FULL, QUICK, load
from build_report import README, machine, report, write_readme
from build_side_by_side import measure, measure_floor
from build_time_split import measure_split, profile, stage_split
from build_under_test import UnderTest, use_ref

# What the other benchmarks (bench_import.py, bench_startup.py) take from here: the same tools, picked the same way.
__all__ = ["CORPUS", "combined_schema", "corpus_tools", "main", "model_schemas", "synthetic_tools", "write_project"]


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
    loads = [load()]  # the 1-minute load average, sampled at the start and after each measurement
    with tempfile.TemporaryDirectory(prefix="toolgen-bench-") as scratch_name:
        scratch = Path(scratch_name)
        under = use_ref(args.ref, scratch) if args.ref else UnderTest()
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
        floor = measure_floor(plan, tools, scratch, under, loads, callgrind=not args.no_callgrind)
        if args.floor_only:
            print("\n" + "\n".join([*machine(under, loads), f"- Inputs: {source}", *floor]))
            print(f"total wall time {time.perf_counter() - started:.0f} s")
            return
        results = measure(plan, tools, source, scratch, under, loads)
        measure_split(results, plan, tools, scratch)
        hotspots = ""
        if args.profile:
            profiled = scratch / f"project_{max(*plan.sizes, plan.noop_size)}"
            hotspots = stage_split(profiled) + "\n\n" + profile(profiled)
    flags = [f for f, on in (("--quick", args.quick), ("--synthetic", args.synthetic)) if on]
    flags += [f"--ref {args.ref}"] if args.ref else []
    flags += ["--no-callgrind"] if args.no_callgrind else []
    section = report(results, plan, " ".join(["python benchmarks/bench_build.py", *flags]), under, floor)
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
