"""Input files no build may skip in silence: a symbolic link to nothing among the tool files is file-unreadable
(exit 3, nothing written), and a pattern that matches only the generated package's own files matches nothing."""

from __future__ import annotations

import os
from collections.abc import Callable

from support.cli_in_process import toolgen_in
from support.projects import Project

TOOL = """\
name: get_weather
description: The weather in a city.
inputSchema:
  type: object
  properties:
    city: {type: string}
  required: [city]
"""


def config(inputs: list[str]) -> str:
    lines = "".join(f"  - {pattern}\n" for pattern in inputs)
    return f"version: v1\npackage: sdk\noutput: generated\ninputs:\n{lines}"


def test_a_dangling_link_among_the_tools_is_unreadable_at_the_input(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    project.write("toolgen.yaml", config(["schemas/*.yaml"]))
    os.symlink("gone.yaml", project.root / "schemas" / "new_tool.yaml")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == (
        "toolgen.yaml:5:5: error file-unreadable input 'schemas/*.yaml' matches schemas/new_tool.yaml, "
        "a symbolic link to nothing (dangling or a loop)"
    )
    assert not (project.root / "generated").exists()


def test_a_link_loop_among_the_tools_is_unreadable_too(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    project.write("toolgen.yaml", config(["schemas/*.yaml"]))
    os.symlink("b.yaml", project.root / "schemas" / "a.yaml")
    os.symlink("a.yaml", project.root / "schemas" / "b.yaml")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    unreadable = [line for line in result.stdout.splitlines() if "file-unreadable" in line]
    assert [line.split(" matches ")[1].split(",")[0] for line in unreadable] == ["schemas/a.yaml", "schemas/b.yaml"]


def test_a_pattern_matching_only_the_generated_package_matches_nothing(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    project.write("toolgen.yaml", config(["schemas/*.yaml"]))
    assert toolgen_in(project.root, "build").returncode == 0
    project.write("toolgen.yaml", config(["schemas/*.yaml", "generated/**/*.json"]))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(
        "toolgen.yaml:6:5: warning input-unmatched input 'generated/**/*.json' matches no file but toolgen's own"
    )
