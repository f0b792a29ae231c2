"""Values JSON cannot hold and nesting past the limit at `toolgen build`: exit 3 at the place; at the limit it works."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest
from support.cli_in_process import toolgen_in
from support.projects import Project

# --- build: numbers, surrogates, depth ------------------------------------------------------------------------


def weather(**extra: object) -> dict[str, object]:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    return {"name": "get_weather", "description": "d", "inputSchema": schema, **extra}


def nested(levels: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


@pytest.mark.parametrize(
    ("name", "text", "place", "expected"),
    [
        (
            "timeout.json",
            '{"name": "f", "timeout": 1e400, "inputSchema": {"type": "object"}}',
            "1:26",
            "number too large",
        ),
        (
            "enum.json",
            '{"name": "f", "inputSchema": {"type": "object", "properties": {"a": {"enum": [1, -1e999]}}}}',
            "1:82",
            "number too large",
        ),
        ("const.yaml", "name: f\ninputSchema:\n  properties:\n    a: {const: 1e400}\n", "4:16", "number too large"),
        (
            "meta.json",
            '{"name": "f", "meta": {"x": 2e308}, "inputSchema": {"type": "object"}}',
            "1:29",
            "number too large",
        ),
        (
            "enum-surrogate.json",
            '{"name": "f", "inputSchema": {"properties": {"a": {"enum": ["ok", "\\ud800"]}}}}',
            "1:67",
            "lone surrogate (U+D800",
        ),
        ("description.json", '{"name": "f", "description": "x\\udfff", "inputSchema": {}}', "1:30", "lone surrogate"),
        (
            "property.json",
            '{"name": "f", "inputSchema": {"properties": {"\\udc00": {"type": "string"}}}}',
            "1:46",
            "key: string holds a lone surrogate",
        ),
        ("name.json", '{"name": "f\\ud83d", "inputSchema": {}}', "1:10", "lone surrogate"),
        # An integer past the float range: most JSON readers (and the generated bounds) take it as infinity.
        (
            "bound.yaml",
            "name: f\ninputSchema:\n  properties:\n    a: {type: number, maximum: 1" + "0" * 400 + "}\n",
            "4:32",
            "number too large",
        ),
        (
            "bound.json",
            '{"name": "f", "inputSchema": {"properties": {"a": {"maximum": -1' + "0" * 400 + "}}}}",
            "1:63",
            "number too large",
        ),
        # Longer than Python's int() reads (4,300 digits): refused at the number, not as a crash or at 1:1.
        (
            "digits.yaml",
            "name: f\ninputSchema:\n  properties:\n    a: {maxLength: " + "9" * 5_000 + "}\n",
            "4:20",
            "number too large",
        ),
        ("digits.json", '{"name": "f", "timeout": ' + "9" * 5_000 + ', "inputSchema": {}}', "1:26", "number too large"),
        ("hex.yaml", "name: f\ntimeout: 0x" + "f" * 300 + "\ninputSchema: {}\n", "2:10", "number too large"),
    ],
)
def test_values_json_cannot_hold_are_exit_3_at_their_place(
    make_project: Callable[..., Project], name: str, text: str, place: str, expected: str
) -> None:
    project = make_project()
    project.write(f"schemas/{name}", text)
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(f"schemas/{name}:{place}: error syntax "), result.stdout
    assert expected in result.stdout
    assert not (project.root / "generated").exists()


def test_nesting_past_the_limit_is_refused_where_it_gets_too_deep(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/deep.json", json.dumps(weather(inputSchema=nested(32))))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("schemas/deep.json:1:") and " error too-deep nested deeper than 64 levels" in first
    assert not first.startswith("schemas/deep.json:1:1:")  # the deep value's column, not the file's start
    assert "toolgen.yaml" not in result.stdout


@pytest.mark.parametrize("levels", [5_000, 200_000])
def test_nesting_too_deep_to_parse_is_exit_3_not_an_internal_error(
    make_project: Callable[..., Project], levels: int
) -> None:
    project = make_project()
    project.write("schemas/deep.json", '{"name": "f", "inputSchema": ' + "[" * levels + "]" * levels + "}")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "error too-deep" in result.stdout and "Traceback" not in result.stderr


def test_nesting_at_the_limit_builds_an_sdk_whose_validators_work(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/deep.json", json.dumps(weather(inputSchema=nested(31))))
    assert (built := toolgen_in(project.root, "build")).returncode == 0, built.stdout + built.stderr
    good: object = "x"
    bad: object = 5
    for _ in range(31):
        good, bad = {"a": good}, {"a": bad}
    script = (
        "import json, sys\n"
        "from sdk import ToolgenValidationError, validate_tool_arguments\n"
        f"validate_tool_arguments('get_weather', json.loads({json.dumps(json.dumps(good))}))\n"
        "try:\n"
        f"    validate_tool_arguments('get_weather', json.loads({json.dumps(json.dumps(bad))}))\n"
        "except ToolgenValidationError:\n"
        "    print('refused')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=project.root / "generated", capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "refused\n"
