"""User code type-checks against a generated package: finish reasons, roles and defaulted enums are Literals."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import yaml
from support.projects import REPO_ROOT, Project

import toolgen

LABELS = """\
$defs:
  Color:
    description: A color the label is printed in.
    enum: [red, green]
tools:
  - name: print_label
    inputSchema:
      type: object
      properties:
        text: {type: string}
        color: {$ref: "labels.yaml#/$defs/Color", default: red}
        shade: {type: string, enum: [light, dark], default: light}
        size: {type: integer, default: 12}
      required: [text]
      additionalProperties: false
"""

# A user's script: each assert_type fails mypy when the value is typed otherwise (Any included), and run, its
# asserts check that the values behave as typed.
USER_SCRIPT = '''\
"""Code a user writes against the generated packages."""

from typing import Literal, assert_type

from labels_sdk import PrintLabelArgs, validate_tool_arguments
from labels_sdk.models import Color
from toolgen_sdk import FinishReason, GetCurrentWeatherArgs, Role, validate_tool_definition
from toolgen_sdk.adapters import parse_request, parse_response

RESPONSE = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Par"}, "finish_reason": "length"}],
}
REQUEST = {"model": "m", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]}

parsed = parse_response(RESPONSE, "openai-chat")
assert parsed.finish is not None
reason: Literal["stop", "tool_calls", "length", "content_filter", "error"] = parsed.finish.reason
assert_type(parsed.finish.reason, FinishReason)
assert parsed.finish.reason == "length" and reason == "length"
assert_type(parsed.message.role, Literal["assistant"])
roles: list[Role] = [message.role for message in parse_request(REQUEST, "openai-chat")]
assert roles == ["system", "user"]

weather = GetCurrentWeatherArgs(location="Paris")
assert_type(weather.unit, Literal["celsius", "fahrenheit"])
assert weather.unit == "celsius"
definition = validate_tool_definition({"name": "t", "inputSchema": {"type": "object"}})
assert_type(definition.return_direct, bool)
assert definition.return_direct is False

label = validate_tool_arguments("print_label", {"text": "hi"})
assert isinstance(label, PrintLabelArgs)
assert_type(label.color, Color)
assert_type(label.color, Literal["red", "green"])
assert_type(label.shade, Literal["light", "dark"])
assert_type(label.size, int)
assert (label.color, label.shade, label.size) == ("red", "light", 12)
print("ok")
'''


def _labels_package(make_project: Callable[..., Project]) -> Path:
    project = make_project("labels_sdk")
    project.write("schemas/labels.yaml", LABELS)
    toolgen.build(project.root)
    return project.root / "generated"


def test_a_user_script_type_checks_and_runs_against_the_generated_packages(
    make_project: Callable[..., Project], tmp_path: Path, mypy_cache: str
) -> None:
    generated = _labels_package(make_project)
    script = tmp_path / "user_code.py"
    script.write_text(USER_SCRIPT, encoding="utf-8")
    paths = os.pathsep.join([str(REPO_ROOT / "generated"), str(generated)])
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MYPYPATH": paths, "PYTHONPATH": paths}
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            os.devnull,
            "--cache-dir",
            mypy_cache,
            str(script),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, env=env, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "ok\n"


def test_a_mistyped_use_fails_the_type_check(
    make_project: Callable[..., Project], tmp_path: Path, mypy_cache: str
) -> None:
    generated = _labels_package(make_project)
    script = tmp_path / "wrong.py"
    script.write_text(
        textwrap.dedent(
            """\
            from typing import Literal

            from labels_sdk import PrintLabelArgs
            from labels_sdk.models import Color

            def shade(args: PrintLabelArgs) -> Literal["light"]:
                return args.shade

            def color(args: PrintLabelArgs) -> None:
                wrong: Color = "blue"
                print(args.size.upper(), wrong)
            """
        ),
        encoding="utf-8",
    )
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", os.devnull, "--cache-dir", mypy_cache]
        + [str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(generated)},
        check=False,
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    lines = checked.stdout.splitlines()
    assert any("wrong.py:7:" in line and "Incompatible return value" in line for line in lines), lines
    assert any("wrong.py:10:" in line and "Incompatible types in assignment" in line for line in lines), lines
    assert any("wrong.py:11:" in line and '"int" has no attribute "upper"' in line for line in lines), lines


def test_role_names_every_message_kind() -> None:
    canonical = yaml.safe_load((REPO_ROOT / "schemas" / "canonical" / "message.yaml").read_text(encoding="utf-8"))
    defs = canonical["$defs"]
    kinds = [branch["$ref"].rsplit("/", 1)[1] for branch in defs["Message"]["oneOf"]]
    assert defs["Role"]["enum"] == [defs[kind]["properties"]["role"]["const"] for kind in kinds]
