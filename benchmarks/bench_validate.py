"""Message validation side by side: toolgen's generated validators vs jsonschema, fastjsonschema, jsonschema-rs and
plain datamodel-code-generator models, on the same 1,000 valid and 1,000 invalid canonical messages.

    python benchmarks/bench_validate.py            # medians of 15 runs; prints a markdown table
    python benchmarks/bench_validate.py --quick    # 3 runs

Every contender checks the same JSON Schema: toolgen's canonical Message schema with its references bundled,
as toolgen hands it to datamodel-code-generator. Validators that are not installed are skipped and named.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolgen.config import load_config
from toolgen.lower import lower

REPO = Path(__file__).resolve().parents[1]


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
    project = lower(load_config(REPO)).project
    defs = json.loads(project.models_schema)["$defs"]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "$ref": "#/$defs/Message"}


def interleaved_ms(functions: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """Median ms of each function, run round by round in turn: load that comes and goes hits every one alike."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    for function in functions.values():
        function()
    for _ in range(runs):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(samples) * 1000 for name, samples in times.items()}


def contenders(schema: dict[str, Any], scratch: Path) -> dict[str, tuple[Callable[[Any], int], str]]:
    """name -> (validate one message, returning how many problems were reported; version)."""
    found: dict[str, tuple[Callable[[Any], int], str]] = {}
    sys.path.insert(0, str(REPO / "generated"))
    sdk = importlib.import_module("toolgen_sdk")

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    runs = 3 if options.quick else 15
    valid = conversation(1000)
    invalid = broken(valid)
    schema = message_schema()
    with tempfile.TemporaryDirectory() as scratch:
        found = contenders(schema, Path(scratch))
        reported = {}
        for name, (check, _) in found.items():
            assert sum(check(m) for m in valid) == 0, f"{name} rejects valid messages"
            reported[name] = sum(check(m) for m in invalid)
        functions: dict[str, Callable[[], Any]] = {}
        for name, (check, _) in found.items():
            functions[f"{name} valid"] = lambda check=check: [check(m) for m in valid]
            functions[f"{name} invalid"] = lambda check=check: [check(m) for m in invalid]
        # jsonschema takes a second a round: it gets fewer rounds of its own, the rest are interleaved.
        slow = {key: functions.pop(key) for key in list(functions) if key.startswith("jsonschema ")}
        ms = interleaved_ms(functions, runs) | interleaved_ms(slow, max(3, runs // 5))
        rows = [
            (name, version, ms[f"{name} valid"], ms[f"{name} invalid"], reported[name])
            for name, (_, version) in found.items()
        ]
    print(
        f"1,000 messages, median of {runs} runs interleaved (jsonschema: of {max(3, runs // 5)}), Python {sys.version.split()[0]}\n"
    )
    print(
        "| validator | version | 1,000 valid (ms) | 1,000 invalid, with errors (ms) | problems reported (1,000 planted) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for name, version, ok_ms, bad_ms, reported in rows:
        print(f"| {name} | {version} | {ok_ms:.2f} | {bad_ms:.2f} | {reported} |")
    ours, bare, read = list(found)[:3]  # toolgen, pydantic alone, pydantic with its errors read
    print(
        f"\ntoolgen / pydantic alone: valid {ms[f'{ours} valid'] / ms[f'{bare} valid']:.2f}x,"
        f" invalid {ms[f'{ours} invalid'] / ms[f'{bare} invalid']:.2f}x"
        f" (against pydantic with its errors read: {ms[f'{ours} invalid'] / ms[f'{read} invalid']:.2f}x)"
    )


if __name__ == "__main__":
    main()
