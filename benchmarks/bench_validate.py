"""Message validation side by side: toolgen's generated validators vs jsonschema, fastjsonschema, jsonschema-rs and
plain datamodel-code-generator models, on the same 1,000 valid and 1,000 invalid canonical messages.

    python benchmarks/bench_validate.py            # medians of 15 rounds, CPU time, and callgrind counts;
                                                   # rewrites its section of benchmarks/README.md
    python benchmarks/bench_validate.py --quick    # 3 rounds, no callgrind; prints only
    python benchmarks/bench_validate.py --generator DIR   # the generator (and runtime) of another checkout

Every contender checks the same JSON Schema: toolgen's canonical Message schema with its references bundled,
as toolgen hands it to datamodel-code-generator. Validators that are not installed are skipped and named.
toolgen's validators are those of a package built from the working tree (the repo's own project, into a
temporary folder), so the runtime measured is the one in generator/, not the committed generated/.

CPU time (`time.process_time`) is taken round by round with every contender interleaved, medians over rounds.
Instructions are callgrind's (see `instructions.py`): one child process runs each contender over the 1,000
messages once as a warm-up, then twice inside `functools.reduce`, the only code counted.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

import instructions
from readme_markers import replace_between

REPO = Path(__file__).resolve().parents[1]
README = Path(__file__).resolve().parent / "README.md"
START = "<!-- validate-results -->"
END = "<!-- /validate-results -->"
# The package name the repo's own project is built under here (not the committed generated/'s).
PACKAGE = "bench_validate_sdk"
COUNTED_RUNS = 2


def conversation(n: int) -> list[dict[str, Any]]:
    """n messages of every role, tool calls included, as an application keeps them."""
    messages: list[dict[str, Any]] = []
    for i in range(n // 4):
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "get_current_weather", "arguments": '{"location": "Paris"}'},
        }
        messages += [
            {"role": "user", "content": f"What is the weather in city {i}?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": '{"temperature": 21}'},
            {"role": "assistant", "content": [{"type": "text", "text": "It is 21 degrees."}]},
        ]
    return messages


def broken(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One real problem per message: a wrong role, a missing field, a wrong type, a bad part."""
    out = []
    for i, message in enumerate(messages):
        kind = i % 4
        if kind == 0:
            out.append({**message, "content": 42})
        elif kind == 1:
            call = dict(message["tool_calls"][0], id=7)
            out.append({**message, "tool_calls": [call]})
        elif kind == 2:
            out.append({k: v for k, v in message.items() if k != "tool_call_id"})
        else:
            out.append({**message, "content": [{"type": "text"}]})
    return out


def message_schema() -> dict[str, Any]:
    """The canonical Message schema with every $def it needs, as toolgen bundles it."""
    from toolgen.ir.lower import lower
    from toolgen.project.config import load_config

    project = lower(load_config(REPO)).project
    defs = json.loads(project.models_schema)["$defs"]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "$ref": "#/$defs/Message"}


def build(scratch: Path) -> Path:
    """The repo's own project built by the toolgen on sys.path into `scratch`: the folder that holds PACKAGE."""
    from toolgen import api

    root = scratch / "project"
    root.mkdir()
    shutil.copytree(REPO / "schemas", root / "schemas")
    config = (REPO / "toolgen.yaml").read_text(encoding="utf-8")
    (root / "toolgen.yaml").write_text(re.sub(r"(?m)^package:.*$", f"package: {PACKAGE}", config), encoding="utf-8")
    built = api.build(root)
    return Path(built.package_dir).parent


def interleaved(functions: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """Median CPU ms of each function, run round by round in turn: load that comes and goes hits every one alike."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    for function in functions.values():
        function()
    for _ in range(runs):
        for name, function in functions.items():
            start = time.process_time()
            function()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(samples) * 1000 for name, samples in times.items()}


def contenders(
    schema: dict[str, Any], scratch: Path, package: Path, *, slow: bool = True
) -> dict[str, tuple[Callable[[Any], int], str]]:
    """name -> (validate one message, returning how many problems were reported; version). `package` is the
    folder holding PACKAGE; without `slow`, only toolgen, pydantic alone and the plain models (what is counted)."""
    found: dict[str, tuple[Callable[[Any], int], str]] = {}
    sys.path.insert(0, str(package))
    sdk = importlib.import_module(PACKAGE)

    def ours(message: Any) -> int:
        try:
            sdk.validate_message(message)
        except sdk.ToolgenValidationError as error:
            # Every problem read, its pointer and sentence: what a caller that reports them pays.
            return sum(1 for problem in error.problems if problem.pointer is not None and problem.message)
        return 0

    found["toolgen (generated validate_message)"] = (ours, "working tree")
    found["pydantic alone: the same models, raw errors"] = _bare_union(sdk)
    found["pydantic alone, its errors read (errors(): loc and msg each)"] = _bare_union(sdk, read=True)
    if not slow:
        found["datamodel-codegen models (plain)"] = _plain_models(schema, scratch)
        return found
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    found["jsonschema"] = (lambda m: sum(1 for _ in validator.iter_errors(m)), importlib.metadata.version("jsonschema"))
    try:
        import fastjsonschema

        compiled = fastjsonschema.compile(schema)

        def fast(message: Any) -> int:
            try:
                compiled(message)
            except fastjsonschema.JsonSchemaException:
                return 1  # it stops at the first problem
            return 0

        found["fastjsonschema"] = (fast, fastjsonschema.VERSION)
    except ImportError:
        print("fastjsonschema not installed: skipped", file=sys.stderr)
    try:
        import jsonschema_rs

        rs = jsonschema_rs.validator_for(schema)
        found["jsonschema-rs"] = (
            lambda m: sum(1 for _ in rs.iter_errors(m)),
            importlib.metadata.version("jsonschema-rs"),
        )
    except ImportError:
        print("jsonschema-rs not installed: skipped", file=sys.stderr)
    found["datamodel-codegen models (plain)"] = _plain_models(schema, scratch)
    return found


def _bare_union(sdk: Any, *, read: bool = False) -> tuple[Callable[[Any], int], str]:
    """The generated message models through pydantic's own validator, errors left as pydantic gives them.

    The floor under validate_message: what it costs beyond this is toolgen's (strict JSON types, the
    one-problem-per-problem folding, pointers and sentences). With `read`, pydantic's error list is built
    and every location and message read, as a caller reporting pydantic's own errors would.
    """
    import pydantic

    sdk.validate_message({"role": "user", "content": "warm-up"})  # builds the deferred validator
    validator = sdk.validators._MESSAGE.validator

    def bare(message: Any) -> int:
        try:
            validator.validate_python(message, strict=True)
        except pydantic.ValidationError as error:
            return error.error_count()
        return 0

    def bare_read(message: Any) -> int:
        try:
            validator.validate_python(message, strict=True)
        except pydantic.ValidationError as error:
            return sum(1 for item in error.errors(include_url=False) if item["loc"] is not None and item["msg"])
        return 0

    return (bare_read if read else bare), pydantic.VERSION


def _plain_models(schema: dict[str, Any], scratch: Path) -> tuple[Callable[[Any], int], str]:
    """What datamodel-code-generator makes of the same schema with its defaults, validated with pydantic."""
    import pydantic
    from datamodel_code_generator import DataModelType, InputFileType, generate

    target = scratch / "plain_models.py"
    generate(
        json.dumps({**schema, "title": "Message"}),
        input_file_type=InputFileType.JsonSchema,
        output=target,
        output_model_type=DataModelType.PydanticV2BaseModel,
    )
    sys.path.insert(0, str(scratch))
    module = importlib.import_module("plain_models")
    model = module.Message

    def plain(message: Any) -> int:
        try:
            model.model_validate(message)
        except pydantic.ValidationError as error:
            return error.error_count()
        return 0

    return plain, importlib.metadata.version("datamodel-code-generator")


def _all(check: Callable[[Any], int], messages: list[dict[str, Any]]) -> list[int]:
    return [check(message) for message in messages]


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def report(
    found: dict[str, tuple[Callable[[Any], int], str]],
    ms: dict[str, float],
    counts: dict[str, float] | None,
    reported: dict[str, int],
    head: list[str],
) -> str:
    lines = [*head, ""]
    counted_head = " | M instructions valid | M instructions invalid" if counts is not None else ""
    lines.append(
        "| validator | version | 1,000 valid (CPU ms) | 1,000 invalid, with errors (CPU ms) | problems reported"
        " (1,000 planted)" + counted_head + " |"
    )
    lines.append("| --- | --- | ---: | ---: | ---: |" + (" ---: | ---: |" if counts is not None else ""))
    for name, (_, version) in found.items():
        row = f"| {name} | {version} | {ms[f'{name} valid']:.2f} | {ms[f'{name} invalid']:.2f} | {reported[name]}"
        if counts is not None:
            valid, invalid = counts.get(f"{name} valid"), counts.get(f"{name} invalid")
            row += " | " + (f"{valid / 1e6:.1f}" if valid else "") + " | " + (f"{invalid / 1e6:.1f}" if invalid else "")
        lines.append(row + " |")
    ours, bare, read = list(found)[:3]  # toolgen, pydantic alone, pydantic with its errors read
    lines += [
        "",
        "toolgen against pydantic alone (the aims: valid within 1.15x, invalid with every problem read within"
        " 1.5x pydantic with its errors read):",
        "",
    ]
    lines += ["| ratio | CPU time | instructions |", "| --- | ---: | ---: |"]
    for label, mine, theirs in (
        ("valid / pydantic alone", f"{ours} valid", f"{bare} valid"),
        ("invalid, every problem read / pydantic alone, raw errors", f"{ours} invalid", f"{bare} invalid"),
        ("invalid, every problem read / pydantic alone, its errors read", f"{ours} invalid", f"{read} invalid"),
    ):
        counted = f"{counts[mine] / counts[theirs]:.2f}x" if counts is not None else "not counted"
        lines.append(f"| {label} | {ms[mine] / ms[theirs]:.2f}x | {counted} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, no callgrind; prints only")
    parser.add_argument("--no-callgrind", action="store_true", help="CPU time only")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    parser.add_argument("--generator", type=Path, default=REPO / "generator", help="the folder holding toolgen")
    parser.add_argument("--count", type=Path, default=None, help=argparse.SUPPRESS)  # the callgrind child
    options = parser.parse_args()
    sys.path.insert(0, str(options.generator.resolve()))
    valid = conversation(1000)
    invalid = broken(valid)
    schema = message_schema()
    if options.count is not None:
        # The callgrind child: the package the parent built, the contenders it counts, in its order.
        with tempfile.TemporaryDirectory() as scratch:
            found = contenders(schema, Path(scratch), options.count, slow=False)
            cases: dict[str, Callable[[], Any]] = {}
            for name, (check, _) in found.items():
                cases[f"{name} valid"] = partial(_all, check, valid)
                cases[f"{name} invalid"] = partial(_all, check, invalid)
            instructions.run_counted(cases, COUNTED_RUNS)
        return
    runs = 3 if options.quick else 15
    with tempfile.TemporaryDirectory() as scratch:
        package = build(Path(scratch))
        found = contenders(schema, Path(scratch), package)
        reported = {}
        for name, (check, _) in found.items():
            assert sum(check(m) for m in valid) == 0, f"{name} rejects valid messages"
            reported[name] = sum(check(m) for m in invalid)
        functions: dict[str, Callable[[], Any]] = {}
        for name, (check, _) in found.items():
            functions[f"{name} valid"] = partial(_all, check, valid)
            functions[f"{name} invalid"] = partial(_all, check, invalid)
        # jsonschema takes a second a round: it gets fewer rounds of its own, the rest are interleaved.
        slow = {key: functions.pop(key) for key in list(functions) if key.startswith("jsonschema ")}
        load_before = _load()
        ms = interleaved(functions, runs) | interleaved(slow, max(3, runs // 5))
        load_after = _load()
        counts = None
        if not (options.quick or options.no_callgrind) and instructions.available():
            # The child's contenders: toolgen, pydantic alone (both), the plain models, in found's order.
            counted_names = [*list(found)[:3], "datamodel-codegen models (plain)"]
            names = [f"{name} {kind}" for name in counted_names for kind in ("valid", "invalid")]
            command = [
                str(Path(__file__).resolve()),
                "--count",
                str(package),
                "--generator",
                str(options.generator.resolve()),
            ]
            counts = instructions.count(command, names, COUNTED_RUNS)
    revision = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    # The results are committed: name the generator by its place in this checkout, never by a machine's path.
    generator = options.generator.resolve()
    shown = generator.relative_to(REPO) if generator.is_relative_to(REPO) else "another checkout's generator/"
    head = [
        f"Command: `python benchmarks/bench_validate.py`{' --quick' if options.quick else ''}",
        "",
        f"- {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.system()} {platform.machine()},"
        f" {os.cpu_count()} CPUs; Python {platform.python_version()}; toolgen's validators built by"
        f" {shown} (working tree at {revision or '?'}) into a temporary package",
        f"- CPU time: 1,000 messages a run, median of {runs} rounds interleaved (jsonschema: of {max(3, runs // 5)});"
        f" 1-minute load average {load_before} before, {load_after} after (2 cores)",
        "- Instructions: "
        + (
            f"callgrind, each contender over the 1,000 messages {COUNTED_RUNS} times after a warm-up, per 1,000"
            " messages (jsonschema and the others not installed here are not counted)"
            if counts is not None
            else "not counted (--quick, --no-callgrind or no valgrind)"
        ),
    ]
    section = report(found, ms, counts, reported, head)
    print(section)
    if not (options.quick or options.no_readme):
        replace_between(README, START, END, section)
        print(f"wrote {README}", file=sys.stderr)


if __name__ == "__main__":
    main()
