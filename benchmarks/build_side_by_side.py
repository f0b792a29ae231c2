"""toolgen build side by side with datamodel-code-generator (CLI, generate()) and its floor, size by size."""

from __future__ import annotations

import json
import statistics
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import build_floor
from build_inputs import combined_schema, model_schemas, write_project
from build_plan import SLOW, Plan, Results, Row, load, timed
from build_under_test import UnderTest, run, script

# The options toolgen itself passes to datamodel-code-generator (targets/models.py), so that both
# sides produce comparable models; formatters are datamodel-code-generator's defaults (black, isort),
# which is what a user gets, while toolgen formats with ruff.
DMCG_CLI_OPTIONS = (
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
)


def dmcg_cli(under: UnderTest, schema_file: Path) -> None:
    run(
        under,
        [
            *script("datamodel-codegen"),
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


def extrapolated_cli(under: UnderTest, paths: list[Path], picked: list[Path]) -> Callable[[], float]:
    def one_rep() -> float:
        return statistics.fmean(timed(lambda p=p: dmcg_cli(under, p)) for p in picked) * len(paths)

    return one_rep


def size_cases(plan: Plan, n: int, root: Path, scratch: Path, under: UnderTest) -> list[Case]:
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
                timer(lambda: run(under, [*script("toolgen"), "build", "--force"], root)),
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
                timer(lambda: [dmcg_cli(under, p) for p in paths]),
                note=f"{len(paths)} schema(s), all run",
            )
        )
    else:
        cases.append(
            Case(
                f"dmcg_cli_{n}",
                "`datamodel-codegen` CLI once per schema (extrapolated)",
                plan.reps_cli if n < SLOW else plan.reps_slow,
                extrapolated_cli(under, paths, picked),
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
                timer(lambda: run(under, [*script("toolgen"), "check"], root)),
            ),
        ]
    return cases


def measure(
    plan: Plan, tools: list[dict[str, Any]], source: str, scratch: Path, under: UnderTest, loads: list[float]
) -> Results:
    """toolgen beside datamodel-code-generator at each of plan.sizes; each row adds a load sample to `loads`."""
    results = Results(source, loads)
    for n in plan.sizes:
        print(
            f"\n{n} tool(s)"
            + (" (and the no-op rebuild and check of the same project)" if n == plan.noop_size else ""),
            flush=True,
        )
        root = write_project(scratch / f"project_{n}", tools[:n])
        interleaved(results, n, size_cases(plan, n, root, scratch, under))
    return results


def measure_floor(
    plan: Plan, tools: list[dict[str, Any]], scratch: Path, under: UnderTest, loads: list[float], *, callgrind: bool
) -> list[str]:
    """The build beside its floor at each of plan.floor_sizes (build_floor.py), sampling the load into `loads`."""
    projects = {n: write_project(scratch / f"floor_{n}", tools[:n]) for n in plan.floor_sizes}
    schemas = {n: combined_schema(model_schemas(root)) for n, root in projects.items()}
    rows = build_floor.measure(projects, schemas, lambda n: plan.reps_slow if n >= SLOW else plan.reps_fast)
    loads.append(load())
    problem = "left out (--no-callgrind)"
    if callgrind:
        counted = {n: projects[n] for n in plan.callgrind_sizes}
        problem = build_floor.count_instructions(rows, counted, under.env)
        loads.append(load())
    return build_floor.report(rows, problem)
