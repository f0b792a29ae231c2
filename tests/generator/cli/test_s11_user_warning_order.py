"""Findings print in the order a user fixes them, top to bottom: by file, line, column, then rule, the same in text,
JSON and GitHub annotations, for build, check and lint; stages find them stage by stage, not file by file."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from support.projects import Project

# Two files, each with a lint warning (description-missing, found last) and schema warnings (found first), the
# name-collision of zz.yaml found before the default-invalid above it.
ZZ = """\
tools:
  - name: first_tool
    inputSchema:
      type: object
      properties:
        count:
          type: integer
          default: "three"
        b-name:
          type: string
        b_name:
          type: string
  - name: second_tool
    description: has one
    inputSchema:
      type: object
      properties:
        level:
          type: integer
          default: "x"
"""
AA = """\
tools:
  - name: alpha_tool
    inputSchema:
      type: object
      properties:
        n:
          type: integer
          default: "bad"
"""
IN_ORDER = [
    ("schemas/aa.yaml", 2, 11, "description-missing"),
    ("schemas/aa.yaml", 8, 20, "default-invalid"),
    ("schemas/zz.yaml", 2, 11, "description-missing"),
    ("schemas/zz.yaml", 8, 20, "default-invalid"),
    ("schemas/zz.yaml", 9, 9, "name-collision"),
    ("schemas/zz.yaml", 20, 20, "default-invalid"),
]
# What `check` repeats: the build's warnings without the providers' lint (build_stages.py: not in the manifest).
CHECKED = [place for place in IN_ORDER if place[3] != "description-missing"]
COLLISION = "property 'b-name' gets the attribute b_name_1 because property 'b_name' has b_name"
DEFAULT = "default {!r} does not fit its own schema; the model leaves it out"
TEXT = [
    "schemas/aa.yaml:2:11: warning description-missing tool has no description",
    f"schemas/aa.yaml:8:20: warning default-invalid {DEFAULT.format('bad')}",
    "schemas/zz.yaml:2:11: warning description-missing tool has no description",
    f"schemas/zz.yaml:8:20: warning default-invalid {DEFAULT.format('three')}",
    f"schemas/zz.yaml:9:9: warning name-collision {COLLISION}",
    f"schemas/zz.yaml:20:20: warning default-invalid {DEFAULT.format('x')}",
]


@pytest.fixture
def warned(make_project: Callable[..., Project]) -> Project:
    project = make_project()
    project.write("schemas/zz.yaml", ZZ)
    project.write("schemas/aa.yaml", AA)
    return project


def _places(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(f["path"], f["line"], f["col"], f["rule"]) for f in findings]


def test_build_prints_its_warnings_by_file_line_and_column(warned: Project) -> None:
    built = warned.cli("build")
    assert built.returncode == 0, built.stderr
    assert built.stdout.splitlines() == TEXT


def test_build_json_and_github_have_the_same_order(warned: Project) -> None:
    as_json = warned.cli("build", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert _places(json.loads(as_json.stdout)) == IN_ORDER
    github = warned.cli("build", "--format", "github", "--force")
    assert github.returncode == 0, github.stderr
    assert [line.split("::")[1] for line in github.stdout.splitlines()] == [
        f"warning file={path},line={line},col={col},title={rule}" for path, line, col, rule in IN_ORDER
    ]


def test_check_prints_and_lists_its_warnings_in_the_same_order(warned: Project) -> None:
    assert warned.cli("build").returncode == 0
    checked = warned.cli("check")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines() == [line for line in TEXT if "description-missing" not in line]
    as_json = warned.cli("check", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert _places(json.loads(as_json.stdout)["findings"]) == CHECKED


def test_lint_prints_its_findings_in_order(warned: Project) -> None:
    linted = warned.cli("lint")
    assert linted.returncode == 0, linted.stderr
    assert linted.stdout.splitlines() == [line for line in TEXT if "description-missing" in line]


def test_errors_of_several_files_print_in_order(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/b.yaml", "tools:\n  - name: b\n    inputSchema: {type: objekt}\n")
    project.write("schemas/a.json", '{"tools": [{"name": "a",\n "inputSchema": {"type": "object"}}')
    built = project.cli("build", "--format", "json")
    assert built.returncode == 3
    assert _places(json.loads(built.stdout)) == [
        ("schemas/a.json", 2, 36, "syntax"),
        ("schemas/b.yaml", 3, 25, "nonstandard-type"),
    ]
