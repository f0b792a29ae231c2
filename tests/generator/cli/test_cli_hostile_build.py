"""Careless projects at `toolgen build`: toolgen.yaml, tool definitions and their files, each an exit 3 at the place."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli_in_process import toolgen_in
from support.projects import Project

# --- build: toolgen.yaml -------------------------------------------------------------------------------------

TOOL = """\
name: get_weather
description: The weather in a city.
inputSchema:
  type: object
  properties:
    city: {type: string}
  required: [city]
"""


def config(inputs: list[str], output: str = "generated") -> str:
    lines = "".join(f"  - {pattern}\n" for pattern in inputs)
    return f"version: v1\npackage: sdk\noutput: {output}\ninputs:\n{lines}"


def test_output_naming_a_file_is_exit_3_at_output(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    project.write("toolgen.yaml", config(["schemas/*.yaml"], output="out.txt"))
    project.write("out.txt", "not a folder\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("toolgen.yaml:3:9: error config-output output 'out.txt' is a file"), result.stdout
    project.write("toolgen.yaml", config(["schemas/*.yaml"], output="out.txt/deeper"))
    nested = toolgen_in(project.root, "build")
    assert nested.returncode == 3 and "'out.txt' in output 'out.txt/deeper' is a file" in nested.stdout
    assert (project.root / "out.txt").read_bytes() == b"not a folder\n"


def test_inputs_that_match_nothing_are_an_error_at_the_glob(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    project.write("toolgen.yaml", config(["schemaz/*.yaml"]))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("toolgen.yaml:5:5: error input-unmatched input 'schemaz/*.yaml' matches no file")
    assert "the project has no tools" in result.stdout
    assert not (project.root / "generated").exists()


def test_inputs_holding_only_shared_definitions_are_an_error(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/common.yaml", "$defs:\n  city: {type: string}\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith("toolgen.yaml:5:5: error no-tools the 1 file(s) the inputs match hold no tool")
    assert not (project.root / "generated").exists()


def test_a_glob_among_others_that_matches_nothing_is_a_warning_at_its_place(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    # a missing folder is a typo; *.json beside *.yaml in the folder that holds the tools is a choice
    project.write("toolgen.yaml", config(["schemas/*.json", "schemas/*.yaml", "shemas/*.yaml"]))
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "toolgen.yaml:7:5: warning input-unmatched input 'shemas/*.yaml' matches no file\n"


# --- build: tool definitions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "place", "meant"),
    [
        ("name: f\ndescription: d\nparamters:\n  type: object\n", "3:1", "'paramters'; did you mean 'parameters'?"),
        (
            "name: f\ndescription: d\ninputschema:\n  type: object\n",
            "3:1",
            "'inputschema'; did you mean 'inputSchema'?",
        ),
        ("name: f\ninputSchema: {type: object}\ndescrption: d\n", "3:1", "'descrption'; did you mean 'description'?"),
        ("name: f\ninputSchema: {type: object}\noutput_schema: {}\n", "3:1", "did you mean 'outputSchema'?"),
    ],
)
def test_a_misspelled_tool_key_is_an_error_with_a_suggestion(
    make_project: Callable[..., Project], text: str, place: str, meant: str
) -> None:
    project = make_project()
    project.write("schemas/f.yaml", text)
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(f"schemas/f.yaml:{place}: error unknown-key unknown tool key "), result.stdout
    assert meant in result.stdout
    assert not (project.root / "generated").exists()


def test_a_misspelled_key_in_a_tool_without_arguments_is_named_too(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/f.yaml", "name: f\nparamters: {type: object}\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3
    assert "did you mean 'parameters' for 'paramters'?" in result.stdout


@pytest.mark.parametrize(
    ("schema", "place", "meant"),
    [
        ("{type: object, propertys: {city: {type: string}}}", "3:29", "'propertys'; did you mean 'properties'?"),
        ("{type: object, properites: {city: {type: string}}}", "3:29", "'properites'; did you mean 'properties'?"),
        (
            "{type: object, properties: {city: {type: string}}, requird: [city]}",
            "3:65",
            "'requird'; did you mean 'required'?",
        ),
        ("{type: object, properties: {city: {tpye: string}}}", "3:49", "'tpye'; did you mean 'type'?"),
        (
            "{type: object, properties: {city: {type: string, maxLenght: 3}}}",
            "3:63",
            "'maxLenght'; did you mean 'maxLength'?",
        ),
        (
            "{type: object, properties: {tags: {type: array, items: {type: string, min_length: 1}}}}",
            "3:84",
            "'min_length'; did you mean 'minLength'?",
        ),
        ("{type: object, additional_properties: false}", "3:29", "did you mean 'additionalProperties'?"),
    ],
)
def test_a_misspelled_schema_keyword_is_an_error_at_its_key(
    make_project: Callable[..., Project], schema: str, place: str, meant: str
) -> None:
    project = make_project()
    project.write("schemas/f.yaml", f"name: f\ndescription: d\ninputSchema: {schema}\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.startswith(f"schemas/f.yaml:{place}: error unknown-keyword unknown schema keyword "), (
        result.stdout
    )
    assert meant in result.stdout
    assert not (project.root / "generated").exists()


def test_property_names_and_words_of_ones_own_are_no_misspelled_keywords(make_project: Callable[..., Project]) -> None:
    project = make_project()
    properties = "{propertys: {type: string}, requird: {type: string, example: x, x-typ: 1, enumDescriptions: [a]}}"
    project.write(
        "schemas/f.yaml", f"name: f\ndescription: d\ninputSchema: {{type: object, properties: {properties}}}\n"
    )
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "unknown-keyword" not in result.stdout


def test_an_unrelated_unknown_key_stays_a_warning(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL + "x-owner: team-a\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning unknown-key unknown tool key 'x-owner' is ignored" in result.stdout


def test_the_summary_counts_errors_and_warnings_apart(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("schemas/f.yaml", "name: f\ninputSchema: {type: object}\ndescrption: d\nx-owner: a\n")
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3
    assert result.stdout.count(" error ") == 1 and result.stdout.count(" warning ") == 1, result.stdout
    assert result.stderr.endswith("\ntoolgen: 1 error, 1 warning in the input; nothing was written\n")


def test_empty_files_a_byte_that_is_no_utf_8_and_a_missing_name_are_said_where_they_are(
    make_project: Callable[..., Project],
) -> None:
    project = make_project()
    project.write("toolgen.yaml", config(["schemas/*.yaml", "schemas/*.json"]))
    project.write("schemas/weather.yaml", TOOL)
    project.write("schemas/blank.yaml", "  \n")
    project.write("schemas/empty.json", "")
    project.write("schemas/unnamed.yaml", "description: x\ninputSchema: {type: object}\n")
    project.write("schemas/listed.yaml", "tools:\n  - name: a\n    inputSchema: {type: object}\n  - inputSchema: {}\n")
    (project.root / "schemas/latin.yaml").write_bytes(b"name: a\n\ndescription: caf\xe9\n")
    before = project.snapshot()
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3, result.stderr
    assert result.stdout.splitlines() == [
        "schemas/blank.yaml:1:1: error tool-shape the file is empty: expected a tool definition (a mapping)",
        "schemas/empty.json:1:1: error syntax the file is empty: expected JSON",
        "schemas/latin.yaml:3:17: error syntax not UTF-8 text: byte 0xe9 starts no UTF-8 character (save the file "
        "as UTF-8)",
        "schemas/listed.yaml:4:5: error tool-shape /tools/1/name: expected a value (it is required), got nothing",
        "schemas/unnamed.yaml:1:1: error tool-shape /name: expected a value (it is required), got nothing",
    ]
    assert project.snapshot() == before


def test_a_config_or_project_that_is_not_there_is_named_as_given(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    project = make_project()
    project.write("schemas/weather.yaml", TOOL)
    missing = tmp_path / "elsewhere" / "toolgen.yaml"
    for args, said in [
        (("--config", str(missing)), f"toolgen: the config file {missing} does not exist"),
        (("--config", "sub/other.yaml"), f"toolgen: the config file {project.root / 'sub/other.yaml'} does not exist"),
        (("-C", str(tmp_path / "nowhere")), f"toolgen: the project folder {tmp_path / 'nowhere'} does not exist"),
    ]:
        result = toolgen_in(project.root, "build", *args)
        assert result.returncode == 3, result.stderr
        assert result.stderr.strip() == said


def test_a_tool_defined_twice_names_both_places(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write("toolgen.yaml", config(["schemas/*.yaml"]))
    project.write("schemas/a.yaml", TOOL)
    project.write("schemas/b.yaml", TOOL)
    result = toolgen_in(project.root, "build")
    assert result.returncode == 3
    assert result.stdout.splitlines() == [
        "schemas/b.yaml:1:7: error duplicate-tool tool 'get_weather' is defined here and at schemas/a.yaml:1:7; "
        "names must be unique"
    ]
