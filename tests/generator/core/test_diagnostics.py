"""Bad input: exit 3, sorted `path:line:col: error rule message` findings, generated/ untouched."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from support.cli_in_process import toolgen_in
from support.projects import Project

FINDING = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<severity>error|warning) (?P<rule>\S+) (?P<message>.+)$"
)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    severity: str
    rule: str
    message: str

    @property
    def place(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.rule)


def findings(stdout: str) -> list[Finding]:
    parsed = []
    for line in stdout.splitlines():
        match = FINDING.match(line)
        assert match, f"not a finding line: {line!r}"
        parsed.append(
            Finding(
                match["path"],
                int(match["line"]),
                int(match["col"]),
                match["severity"],
                match["rule"],
                match["message"],
            )
        )
    return parsed


def rejected(project: Project, files: dict[str, str], *args: str, errors: int = 1) -> list[Finding]:
    """Write `files`, run `build`, check the failure contract and return the findings."""
    before = project.snapshot()
    assert "sdk/models.py" in before
    for relative, text in files.items():
        project.write(relative, text)
    result = project.cli("build", *args)
    assert result.returncode == 3, result.stdout + result.stderr
    assert project.snapshot() == before
    noun = "error" if errors == 1 else "errors"
    assert f"toolgen: {errors} {noun} in the input; nothing was written" in result.stderr
    assert "toolgen:" not in result.stdout
    found = findings(result.stdout)
    assert sum(f.severity == "error" for f in found) == errors
    places = [(f.path, f.line, f.col) for f in found]
    assert places == sorted(places)
    return found


def only(found: list[Finding]) -> Finding:
    assert len(found) == 1, found
    return found[0]


def test_yaml_syntax_error_points_at_the_problem(project: Project) -> None:
    bad = """\
        tools:
          - name: lookup
            description: key: value
            inputSchema: {type: object}
        """
    finding = only(rejected(project, {"schemas/bad.yaml": bad}))
    assert finding.place == ("schemas/bad.yaml", 3, 21, "syntax")
    assert finding.message.startswith("invalid YAML: mapping values are not allowed")


def test_invalid_json_points_at_the_problem(project: Project) -> None:
    bad = """\
        {
          "tools": [
            {"name": "x",}
          ]
        }
        """
    finding = only(rejected(project, {"schemas/bad.json": bad}))
    assert finding.place == ("schemas/bad.json", 3, 18, "syntax")
    assert finding.message.startswith("invalid JSON: ")


def test_yaml_duplicate_key_points_at_the_second_key(project: Project) -> None:
    bad = """\
        tools:
          - name: first
            name: second
            inputSchema: {type: object}
        """
    finding = only(rejected(project, {"schemas/bad.yaml": bad}))
    assert finding.place == ("schemas/bad.yaml", 3, 5, "duplicate-key")
    assert "'name'" in finding.message


REF_TOOL = """\
    tools:
      - name: lookup
        inputSchema:
          type: object
          properties:
            key: {{$ref: "{ref}"}}
    """


def test_dangling_ref_points_at_the_ref_value(project: Project) -> None:
    finding = only(rejected(project, {"schemas/bad.yaml": REF_TOOL.format(ref="#/$defs/Nope")}))
    assert finding.place == ("schemas/bad.yaml", 6, 21, "ref-unresolved")
    assert "#/$defs/Nope" in finding.message


def test_dangling_ref_in_json_points_at_the_ref_value(project: Project) -> None:
    bad = """\
        {
          "name": "lookup",
          "inputSchema": {
            "type": "object",
            "properties": {"key": {"$ref": "#/$defs/Key"}}
          }
        }
        """
    finding = only(rejected(project, {"schemas/bad.json": bad}))
    assert finding.place == ("schemas/bad.json", 5, 36, "ref-unresolved")


@pytest.mark.parametrize(
    ("text", "line", "col", "rule"),
    [
        ("Key:\n  type: number\n  maximum: 1e400\n", 3, 12, "syntax"),
        ("Key:\n  type: object\n  default: " + "[" * 70 + "]" * 70 + "\n", 3, 74, "too-deep"),
        ("Key: {type: string\n", 2, 1, "syntax"),
    ],
)
def test_a_referenced_file_that_does_not_load_is_named_at_its_own_place_too(
    project: Project, text: str, line: int, col: int, rule: str
) -> None:
    found = rejected(
        project,
        {"schemas/bad.yaml": REF_TOOL.format(ref="../shared/key.yaml#/Key"), "shared/key.yaml": text},
        errors=2,
    )
    assert [f.place for f in found] == [
        ("schemas/bad.yaml", 6, 21, "ref-file"),
        ("shared/key.yaml", line, col, rule),
    ]
    assert f"shared/key.yaml:{line}:{col}" in found[0].message


def test_ref_to_missing_file(project: Project) -> None:
    bad = REF_TOOL.format(ref="missing.yaml#/Key")
    finding = only(rejected(project, {"schemas/bad.yaml": bad}))
    assert finding.place == ("schemas/bad.yaml", 6, 21, "ref-file")
    assert "missing.yaml" in finding.message
    assert "file not found" in finding.message


def test_remote_ref_is_not_fetched(project: Project) -> None:
    finding = only(rejected(project, {"schemas/bad.yaml": REF_TOOL.format(ref="https://example.com/key.json")}))
    assert finding.place == ("schemas/bad.yaml", 6, 21, "ref-remote")
    assert "https://example.com/key.json" in finding.message


def test_pure_ref_cycle_across_two_files(project: Project) -> None:
    files = {
        "schemas/defs/a.yml": 'A:\n  $ref: "b.yml#/B"\n',
        "schemas/defs/b.yml": 'B:\n  $ref: "a.yml#/A"\n',
        "schemas/bad.yaml": REF_TOOL.format(ref="defs/a.yml#/A"),
    }
    finding = only(rejected(project, files))
    assert finding.place == ("schemas/bad.yaml", 6, 21, "ref-cycle")
    assert "schemas/defs/a.yml#/A" in finding.message
    assert "schemas/defs/b.yml#/B" in finding.message


def test_recursive_schema_builds(project: Project) -> None:
    project.write(
        "schemas/tree.yaml",
        """\
        tools:
          - name: walk_tree
            description: Walk a tree of labelled nodes.
            inputSchema:
              type: object
              properties:
                root: {$ref: "#/$defs/Node"}
              required: [root]
              $defs:
                Node:
                  type: object
                  properties:
                    label: {type: string}
                    children:
                      type: array
                      items: {$ref: "#/$defs/Node"}
                  required: [label]
        """,
    )
    result = project.cli("build")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    models = "\n".join(
        path.read_text(encoding="utf-8")
        for path in [project.package_dir / "models.py", *(project.package_dir / "_tool_models").glob("*.py")]
    )
    assert "class Node(" in models
    assert "children: FrozenList[Node] | None" in models


def test_findings_in_referenced_files_use_normalized_paths(project: Project) -> None:
    files = {
        "defs/key.yaml": 'Key:\n  type: object\n  properties:\n    inner: {$ref: "#/Missing"}\n',
        "schemas/bad.yaml": REF_TOOL.format(ref="../defs/key.yaml#/Key"),
    }
    finding = only(rejected(project, files))
    assert finding.place == ("defs/key.yaml", 4, 19, "ref-unresolved")


def test_duplicate_tool_names_the_first_place(project: Project) -> None:
    first = """\
        tools:
          - name: lookup
            inputSchema: {type: object}
        """
    second = """\
        tools:
          - name: other
            inputSchema: {type: object}
          - name: lookup
            inputSchema: {type: object}
        """
    finding = only(rejected(project, {"schemas/a.yaml": first, "schemas/b.yaml": second}))
    assert finding.place == ("schemas/b.yaml", 4, 11, "duplicate-tool")
    assert "'lookup'" in finding.message
    assert "schemas/a.yaml:2:11" in finding.message


def test_required_not_a_list_is_schema_invalid(project: Project) -> None:
    bad = """\
        tools:
          - name: lookup
            inputSchema:
              type: object
              required: "x"
        """
    finding = only(rejected(project, {"schemas/bad.yaml": bad}))
    assert finding.place == ("schemas/bad.yaml", 5, 17, "schema-invalid")
    assert finding.message == '/tools/0/inputSchema/required: expected an array, got "x"'


def test_type_not_a_string_is_schema_invalid(project: Project) -> None:
    bad = """\
        tools:
          - name: lookup
            inputSchema:
              type: 5
        """
    finding = only(rejected(project, {"schemas/bad.yaml": bad}))
    assert finding.place == ("schemas/bad.yaml", 4, 13, "schema-invalid")


def test_entries_that_are_not_tools(project: Project) -> None:
    bad = """\
        tools:
          - 42
          - foo: bar
        """
    found = rejected(project, {"schemas/bad.yaml": bad}, errors=2)
    assert [f.place for f in found] == [
        ("schemas/bad.yaml", 2, 5, "tool-shape"),
        ("schemas/bad.yaml", 3, 5, "tool-shape"),
    ]
    assert "found int" in found[0].message
    assert "foo" in found[1].message


BFCL = """\
    tools:
      - name: lookup
        description: A BFCL-style function.
        parameters:
          type: dict
          properties:
            ratio: {type: float}
            label: {type: string}
    """


def test_bfcl_types_are_rejected_with_a_hint(project: Project) -> None:
    found = rejected(project, {"schemas/bfcl.yaml": BFCL}, errors=2)
    assert [f.place for f in found] == [
        ("schemas/bfcl.yaml", 5, 13, "nonstandard-type"),
        ("schemas/bfcl.yaml", 7, 23, "nonstandard-type"),
    ]
    assert "'dict'" in found[0].message
    assert "'object'" in found[0].message
    assert "'float'" in found[1].message
    assert "'number'" in found[1].message
    assert all("normalize: [types]" in f.message for f in found)


def test_bfcl_types_build_when_normalized(project: Project) -> None:
    config = (project.root / "toolgen.yaml").read_text(encoding="utf-8")
    project.write("toolgen.yaml", config + "normalize: [types]\n")
    project.write("schemas/bfcl.yaml", BFCL)
    result = project.cli("build")
    assert result.returncode == 0, result.stdout + result.stderr
    found = findings(result.stdout)
    assert [(f.place, f.severity) for f in found] == [
        (("schemas/bfcl.yaml", 5, 13, "normalized-type"), "warning"),
        (("schemas/bfcl.yaml", 7, 23, "normalized-type"), "warning"),
    ]
    assert "'dict' normalized to 'object'" in found[0].message
    assert "'float' normalized to 'number'" in found[1].message
    assert "LookupArgs" in (project.package_dir / "models.py").read_text(encoding="utf-8")


def test_findings_are_sorted_across_files_and_stages(project: Project) -> None:
    first = """\
        tools:
          - 42
          - name: lookup
            description: Look up.
            inputSchema:
              type: object
              properties:
                key: {$ref: "#/$defs/Key"}
          - name: other
            inputSchema: {type: object}
          - 43
        """
    found = rejected(project, {"schemas/a.yaml": first, "schemas/b.yaml": "tools: [\n"}, errors=4)
    assert [f.place for f in found] == [
        ("schemas/a.yaml", 2, 5, "tool-shape"),
        ("schemas/a.yaml", 8, 21, "ref-unresolved"),
        ("schemas/a.yaml", 11, 5, "tool-shape"),
        ("schemas/b.yaml", 2, 1, "syntax"),
    ]


TWO_ERRORS = """\
    tools:
      - name: lookup
        inputSchema:
          type: object
          required: "x"
      - 42
    """


def test_json_format(project: Project) -> None:
    before = project.snapshot()
    project.write("schemas/bad.yaml", TWO_ERRORS)
    result = project.cli("build", "--format", "json")
    assert result.returncode == 3
    assert project.snapshot() == before
    data = json.loads(result.stdout)
    assert isinstance(data, list)
    assert [(d["path"], d["line"], d["col"], d["severity"], d["rule"]) for d in data] == [
        ("schemas/bad.yaml", 5, 17, "error", "schema-invalid"),
        ("schemas/bad.yaml", 6, 5, "error", "tool-shape"),
    ]
    assert all(isinstance(d["message"], str) and d["message"] for d in data)
    assert "2 errors in the input" in result.stderr


def test_github_format(project: Project) -> None:
    before = project.snapshot()
    project.write("schemas/bad.yaml", TWO_ERRORS)
    result = project.cli("build", "--format", "github")
    assert result.returncode == 3
    assert project.snapshot() == before
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=schemas/bad.yaml,line=5,col=17,title=schema-invalid::")
    assert lines[1].startswith("::error file=schemas/bad.yaml,line=6,col=5,title=tool-shape::")


def test_check_reports_bad_input_like_build(project: Project) -> None:
    before = project.snapshot()
    project.write("schemas/bad.yaml", TWO_ERRORS)
    built = project.cli("build")
    checked = project.cli("check")
    assert checked.returncode == 3
    assert checked.stdout == built.stdout
    assert len(findings(checked.stdout)) == 2
    assert project.snapshot() == before


CONFIG_HEAD = "version: v1\npackage: sdk\noutput: generated\n"


def test_config_unknown_key_points_at_the_key(project: Project) -> None:
    config = CONFIG_HEAD + "bogus: 1\ninputs:\n  - schemas/**/*.yaml\n"
    finding = only(rejected(project, {"toolgen.yaml": config}))
    assert finding.place == ("toolgen.yaml", 4, 1, "shape")
    assert finding.message.startswith("/bogus: expected no value here (not an allowed field), got ")


def test_config_unknown_key_is_rejected(project: Project) -> None:
    config = CONFIG_HEAD + "bogus: 1\ninputs:\n  - schemas/**/*.yaml\n"
    finding = only(rejected(project, {"toolgen.yaml": config}))
    assert (finding.path, finding.rule) == ("toolgen.yaml", "shape")
    assert finding.message.startswith("/bogus: expected no value here (not an allowed field), got ")


def test_config_wrong_version(project: Project) -> None:
    config = "version: v2\npackage: sdk\noutput: generated\ninputs:\n  - schemas/**/*.yaml\n"
    finding = only(rejected(project, {"toolgen.yaml": config}))
    assert finding.place == ("toolgen.yaml", 1, 10, "shape")
    assert "'v1'" in finding.message


def test_config_syntax_error(project: Project) -> None:
    config = CONFIG_HEAD + "inputs: [schemas/**/*.yaml\n"
    finding = only(rejected(project, {"toolgen.yaml": config}))
    assert finding.place == ("toolgen.yaml", 5, 1, "syntax")


def test_config_missing_input_points_at_the_entry(project: Project) -> None:
    config = CONFIG_HEAD + "inputs:\n  - schemas/weather.yaml\n  - schemas/nothing.yaml\n"
    finding = only(rejected(project, {"toolgen.yaml": config}))
    assert finding.place == ("toolgen.yaml", 6, 5, "file-missing")


def test_config_given_with_option_is_shown_by_its_path(project: Project) -> None:
    project.write("conf/alt.yaml", CONFIG_HEAD + "bogus: 1\n")
    finding = only(rejected(project, {}, "--config", "conf/alt.yaml"))
    assert finding.path == "conf/alt.yaml"


@pytest.mark.parametrize("verb", ["build", "check"])
def test_missing_config(project: Project, verb: str) -> None:
    before = project.snapshot()
    (project.root / "toolgen.yaml").unlink()
    result = project.cli(verb)
    assert result.returncode == 3
    assert result.stdout == ""
    assert "toolgen.yaml" in result.stderr
    assert "toolgen init" in result.stderr
    assert project.snapshot() == before


def test_paths_are_relative_to_the_project_root(project: Project) -> None:
    project.write("schemas/bad.yaml", TWO_ERRORS)
    result = toolgen_in(project.root.parent, "build", "-C", str(project.root))
    assert result.returncode == 3
    assert [f.path for f in findings(result.stdout)] == ["schemas/bad.yaml", "schemas/bad.yaml"]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "rec.yaml",
            "tools:\n  - name: a\n    inputSchema: &s {type: object, properties: {x: *s}}\n",
            "schemas/rec.yaml:3:18: error syntax a YAML alias refers to a node that contains it",
        ),
        (
            "list.yaml",
            "&a [*a]\n",
            "schemas/list.yaml:1:1: error syntax a YAML alias refers to a node that contains it",
        ),
        (
            "laughs.yaml",
            "a: &a [1,1,1,1,1,1,1,1,1,1]\n"
            + "".join(f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdef", "bcdefg", strict=True)),
            "schemas/laughs.yaml:1:10: error syntax YAML aliases expand to more than",
        ),
        (
            # Under the node limit, but 400 bytes that had expanded into a 35 MB package.
            "chuckles.yaml",
            "x-parts:\n  a: &a [1,1,1,1,1,1,1,1,1]\n"
            + "".join(f"  {n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcd", "bcde", strict=True))
            + "name: t\ninputSchema: {type: object, properties: {x: {type: array, default: *e}}}\n",
            "schemas/chuckles.yaml:1:1: error syntax YAML aliases expand the 35 values written here into 141,183, over 100 times",
        ),
        (
            "nan.yaml",
            "tools:\n  - name: n\n    inputSchema: {type: object, properties: {a: {default: .nan}}}\n",
            "schemas/nan.yaml:3:59: error syntax YAML value nan has no JSON equivalent",
        ),
        (
            "nan.json",
            '{"name": "n", "inputSchema": {"default": NaN}}',
            "schemas/nan.json:1:42: error syntax invalid JSON: NaN is not a JSON number",
        ),
        (
            "dup.json",
            '{"name": "d", "inputSchema": {"type": "object",\n "properties": {"a": {}, "a": {}}}}',
            "schemas/dup.json:2:26: error duplicate-key key 'a' appears twice",
        ),
    ],
)
def test_yaml_and_json_that_json_schema_cannot_mean(project: Project, name: str, text: str, expected: str) -> None:
    before = project.snapshot()
    project.write(f"schemas/{name}", text)
    result = project.cli("build")
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith(expected), result.stdout
    assert project.snapshot() == before


def test_yaml_is_read_as_yaml_1_2_core(project: Project) -> None:
    project.write(
        "schemas/yn.yaml",
        """\
        tools:
          - name: yn
            inputSchema: {type: object, properties: {a: {type: string, enum: [yes, no, on, off]}, d: {type: string, default: 2024-01-01}}}
        """,
    )
    result = project.cli("build")
    assert result.returncode == 0, result.stdout + result.stderr
    tools = (project.package_dir / "tools.py").read_text()
    # tools.py holds each schema as the compact JSON the build froze it to
    assert '"enum":["yes","no","on","off"]' in tools
    assert '"default":"2024-01-01"' in tools


def test_a_default_that_does_not_fit_its_schema_is_reported_and_left_out_of_the_model(project: Project) -> None:
    project.write(
        "schemas/d.yaml",
        "tools:\n  - name: d\n    inputSchema: {type: object, properties: {a: {type: string, default: 10}}}\n",
    )
    result = project.cli("build")
    assert result.returncode == 0, result.stderr
    assert "schemas/d.yaml:3:73: warning default-invalid default 10 does not fit its own schema" in result.stdout
    assert "a: str | None = None" in (project.package_dir / "_tool_models" / "d.py").read_text()


def test_build_refuses_to_replace_a_directory_it_did_not_write(project: Project) -> None:
    (project.root / "toolgen.yaml").write_text(
        (project.root / "toolgen.yaml")
        .read_text()
        .replace("package: sdk", "package: schemas")
        .replace("output: generated", 'output: "."')
    )
    before = sorted(p.name for p in (project.root / "schemas").rglob("*"))
    result = project.cli("build")
    assert result.returncode == 3
    assert "was not generated by toolgen" in result.stderr
    assert sorted(p.name for p in (project.root / "schemas").rglob("*")) == before
