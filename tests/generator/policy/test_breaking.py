"""`toolgen breaking`: every schema change classified as breaking or safe, per rule, placed in the current files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.projects import REPO_ROOT

import toolgen
from toolgen.cli.main import main
from toolgen.core.diagnostics import Diagnostic
from toolgen.policy.breaking.rules import RULES

CONFIG = "version: v1\npackage: sdk\noutput: generated\ninputs:\n  - schemas/*.json\n  - schemas/*.yaml\n"


def args(properties: dict[str, Any], required: tuple[str, ...] = (), **schema: Any) -> dict[str, Any]:
    """A tool named t whose arguments are an object with these properties."""
    body: dict[str, Any] = {"type": "object", "properties": properties, **schema}
    return {"name": "t", "inputSchema": {**body, **({"required": list(required)} if required else {})}}


def result(properties: dict[str, Any], required: tuple[str, ...] = (), **schema: Any) -> dict[str, Any]:
    """A tool named t with no arguments whose result is an object with these properties."""
    body: dict[str, Any] = {"type": "object", "properties": properties, **schema}
    output = {**body, **({"required": list(required)} if required else {})}
    return {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": output}


def arg(schema: Any) -> dict[str, Any]:
    """A tool named t with one optional argument x of this schema."""
    return args({"x": schema})


def field(schema: Any) -> dict[str, Any]:
    """A tool named t whose result has one required field x of this schema."""
    return result({"x": schema}, ("x",))


def make(root: Path, tools: list[dict[str, Any]] | dict[str, Any], extra: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "toolgen.yaml").write_text(CONFIG, encoding="utf-8")
    (root / "schemas").mkdir()
    listed = tools if isinstance(tools, list) else [tools]
    (root / "schemas" / "tools.json").write_text(json.dumps({"tools": listed}, indent=1), encoding="utf-8")
    for name, text in (extra or {}).items():
        (root / "schemas" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def changes(tmp_path: Path, old: Any, new: Any, name: str = "case") -> tuple[Diagnostic, ...]:
    """Findings of the project `new` against the project `old` given as a directory REF."""
    before = make(tmp_path / f"{name}-old", old)
    after = make(tmp_path / f"{name}-new", new)
    return toolgen.breaking(str(before), root=after)


def rules(findings: tuple[Diagnostic, ...], severity: str | None = None) -> set[str]:
    return {f.rule for f in findings if severity is None or f.severity.value == severity}


@dataclass(frozen=True)
class Case:
    rule: str
    old: Any
    new: Any
    says: str  # part of the finding's message
    symmetric: bool = False  # the change reversed is the same kind of change

    @property
    def breaking(self) -> bool:
        return RULES[self.rule].severity.value == "error"


OBJ = {"type": "object", "properties": {"a": {"type": "string"}}}
U = {"name": "u", "inputSchema": {"type": "object", "properties": {"other": {"type": "integer"}}}}
T_PLAIN = args({"a": {"type": "string"}})

# Each rule with a pair that triggers it; reversed (unless symmetric), the pair must not trigger it.
TRIGGERS = [
    Case("tool-removed", [T_PLAIN, U], [T_PLAIN], "tool 'u' was removed"),
    Case("tool-renamed", [T_PLAIN], [{**T_PLAIN, "name": "t2"}], "'t' was renamed to 't2'", symmetric=True),
    Case("tool-added", [T_PLAIN], [T_PLAIN, U], "new tool 'u'"),
    Case(
        "model-renamed",
        [{**T_PLAIN, "name": "get-x"}],
        [{**T_PLAIN, "name": "get-x"}, {**U, "name": "get_x"}],
        "arguments class is now GetXArgs2, was GetXArgs",
        symmetric=True,
    ),
    Case("return-direct-changed", T_PLAIN, {**T_PLAIN, "returnDirect": True}, "goes to the user", symmetric=True),
    Case("requires-approval-added", T_PLAIN, {**T_PLAIN, "requiresApproval": True}, "requiresApproval is now true"),
    Case("requires-approval-removed", {**T_PLAIN, "requiresApproval": True}, T_PLAIN, "requiresApproval is now false"),
    Case("strict-changed", T_PLAIN, {**T_PLAIN, "strict": True}, "strict mode is now on", symmetric=True),
    Case("timeout-changed", {**T_PLAIN, "timeout": 5}, {**T_PLAIN, "timeout": 9}, "timeout 5 -> 9", symmetric=True),
    Case("description-changed", T_PLAIN, {**T_PLAIN, "description": "Now with words."}, "description changed", True),
    Case("description-changed", arg({"type": "string"}), arg({"type": "string", "title": "X"}), "'x': title", True),
    Case(
        "default-changed",
        arg({"type": "string", "default": "a"}),
        arg({"type": "string", "default": "b"}),
        '"a" -> "b"',
        True,
    ),
    Case("result-schema-removed", field({"type": "string"}), args({}), "no longer declares its result"),
    Case("result-schema-added", args({}), field({"type": "string"}), "now declares its result"),
    # arguments
    Case("argument-removed", args({"a": {"type": "string"}, "b": {"type": "string"}}), T_PLAIN, "'b' was removed"),
    Case(
        "argument-removed",
        arg({"type": "object", "properties": {"in": {"type": "string"}, "out": {"type": "string"}}}),
        arg({"type": "object", "properties": {"in": {"type": "string"}}}),
        "argument 'x.out' was removed",
    ),
    Case(
        "required-argument-added",
        T_PLAIN,
        args({"a": {"type": "string"}, "b": {"type": "string"}}, ("b",)),
        "new required argument 'b'",
    ),
    Case(
        "argument-added", T_PLAIN, args({"a": {"type": "string"}, "b": {"type": "string"}}), "new optional argument 'b'"
    ),
    Case("argument-made-required", T_PLAIN, args({"a": {"type": "string"}}, ("a",)), "'a' is now required"),
    Case("argument-made-optional", args({"a": {"type": "string"}}, ("a",)), T_PLAIN, "'a' is now optional"),
    Case("argument-type-narrowed", arg({"type": "number"}), arg({"type": "integer"}), "is now an integer"),
    Case(
        "argument-type-narrowed", arg({"type": ["string", "null"]}), arg({"type": "string"}), "no longer accepts null"
    ),
    Case(
        "argument-type-narrowed",
        arg({"anyOf": [{"type": "string"}, {"type": "boolean"}]}),
        arg({"anyOf": [{"type": "string"}]}),
        "no longer accepts boolean",
    ),
    Case("argument-type-narrowed", arg({}), arg({"type": "string"}), "is now string, was any type"),
    Case("argument-type-narrowed", arg({"type": "string"}), arg(False), "no longer accepts any value"),
    Case(
        "argument-type-narrowed",
        arg({"type": "array", "prefixItems": [{"type": "string"}]}),
        arg({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}),
        "'x[1]' is now integer, was any type",
    ),
    Case("argument-type-widened", arg({"type": "integer"}), arg({"type": "number"}), "is now any number"),
    Case("argument-type-widened", arg({"type": "string"}), arg({"type": ["string", "null"]}), "now also accepts null"),
    Case("argument-enum-value-removed", arg({"enum": ["a", "b"]}), arg({"enum": ["a"]}), 'no longer accepts "b"'),
    Case(
        "argument-enum-value-removed",
        arg({"type": "string"}),
        arg({"type": "string", "enum": ["a"]}),
        'now accepts only "a"',
    ),
    Case(
        "argument-enum-value-removed",
        arg({"anyOf": [{"const": "a"}, {"const": "b"}]}),
        arg({"anyOf": [{"const": "a"}]}),
        'no longer accepts "b"',
    ),
    Case("argument-enum-value-added", arg({"enum": ["a"]}), arg({"enum": ["a", "b"]}), 'now also accepts "b"'),
    Case(
        "argument-const-changed", arg({"const": "a"}), arg({"const": "b"}), 'must now be "b", was "a"', symmetric=True
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "string", "maxLength": 9}),
        arg({"type": "string", "maxLength": 5}),
        "maxLength 9 -> 5",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "string"}),
        arg({"type": "string", "minLength": 1}),
        "now has minLength 1",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "integer", "maximum": 9}),
        arg({"type": "integer", "maximum": 5}),
        "maximum 9 -> 5",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "integer", "minimum": 0}),
        arg({"type": "integer", "minimum": 1}),
        "minimum 0 -> 1",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "integer"}),
        arg({"type": "integer", "exclusiveMaximum": 3}),
        "exclusiveMaximum",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "integer", "multipleOf": 2}),
        arg({"type": "integer", "multipleOf": 4}),
        "multipleOf",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "string"}),
        arg({"type": "string", "pattern": "^a"}),
        'now has pattern "^a"',
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "string", "pattern": "^a"}),
        arg({"type": "string", "pattern": "^b"}),
        'pattern "^a" -> "^b"',
        symmetric=True,  # toolgen cannot compare regular expressions: a changed one counts as stricter
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "integer", "multipleOf": 2}),
        arg({"type": "integer", "multipleOf": 3}),
        "multipleOf 2 -> 3",
        symmetric=True,  # neither divides the other: some values are refused, others allowed
    ),
    Case("argument-constraint-tightened", arg({"type": "array"}), arg({"type": "array", "minItems": 1}), "minItems 1"),
    Case(
        "argument-constraint-tightened",
        arg({"type": "array", "maxItems": 4}),
        arg({"type": "array", "maxItems": 2}),
        "maxItems 4 -> 2",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "array"}),
        arg({"type": "array", "uniqueItems": True}),
        "unique items",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "object"}),
        arg({"type": "object", "maxProperties": 2}),
        "maxProperties 2",
    ),
    Case(
        "argument-constraint-loosened",
        arg({"type": "string", "maxLength": 5}),
        arg({"type": "string", "maxLength": 9}),
        "maxLength 5 -> 9",
    ),
    Case(
        "argument-constraint-loosened",
        arg({"type": "integer", "multipleOf": 4}),
        arg({"type": "integer", "multipleOf": 2}),
        "multipleOf",
    ),
    Case(
        "argument-object-closed", arg(OBJ), arg({**OBJ, "additionalProperties": False}), "additionalProperties: false"
    ),
    Case(
        "argument-object-closed",
        T_PLAIN,
        args({"a": {"type": "string"}}, additionalProperties=False),
        "the arguments no longer",
    ),
    Case(
        "argument-object-opened",
        arg({**OBJ, "additionalProperties": False}),
        arg(OBJ),
        "now accepts properties it does not list",
    ),
    Case(
        "argument-constraint-tightened",
        arg({"type": "object", "additionalProperties": {"type": "string"}}),
        arg({"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}),
        "argument 'x.*': now has maxLength 3",
    ),
    Case(
        "argument-schema-changed",
        arg({"not": {"type": "string"}}),
        arg({"not": {"type": "integer"}}),
        "'not' changed",
        True,
    ),
    Case(
        "argument-schema-changed",
        arg({"allOf": [{"type": "string"}]}),
        arg({"allOf": [{"type": "string"}, {"minLength": 1}]}),
        "'allOf' changed",
        symmetric=True,
    ),
    Case(
        "argument-schema-changed",
        arg({"$ref": "https://json-schema.org/draft/2020-12/schema"}),
        arg({"$ref": "https://json-schema.org/draft/2020-12/meta/validation#/$defs/simpleTypes"}),
        "'$ref' changed",
        symmetric=True,
    ),
    Case(
        "argument-constraint-tightened",
        arg({"allOf": [{"type": "string"}]}),
        arg({"allOf": [{"type": "string", "maxLength": 3}]}),
        "now has maxLength 3",
    ),
    # results: what readers of the old result relied on
    Case(
        "result-field-removed",
        result({"x": {"type": "string"}, "y": {"type": "string"}}),
        result({"x": {"type": "string"}}),
        "result field 'y' was removed",
    ),
    Case("result-field-added", result({}), result({"x": {"type": "string"}}, ("x",)), "new required result field 'x'"),
    Case(
        "result-field-made-optional",
        field({"type": "string"}),
        result({"x": {"type": "string"}}),
        "'x' is now optional",
    ),
    Case(
        "result-field-made-required",
        result({"x": {"type": "string"}}),
        field({"type": "string"}),
        "'x' is now required",
    ),
    Case("result-type-widened", field({"type": "string"}), field({"type": ["string", "null"]}), "can now also be null"),
    Case("result-type-widened", field({"type": "integer"}), field({"type": "number"}), "is now any number"),
    Case(
        "result-type-narrowed", field({"type": ["string", "null"]}), field({"type": "string"}), "can no longer be null"
    ),
    Case("result-enum-value-added", field({"enum": ["a"]}), field({"enum": ["a", "b"]}), 'can now also be "b"'),
    Case("result-enum-value-removed", field({"enum": ["a", "b"]}), field({"enum": ["a"]}), 'can no longer be "b"'),
    Case("result-const-changed", field({"const": 1}), field({"const": 2}), "must now be 2, was 1", symmetric=True),
    Case(
        "result-constraint-loosened",
        field({"type": "integer", "maximum": 5}),
        field({"type": "integer", "maximum": 6}),
        "maximum 5 -> 6",
    ),
    Case(
        "result-constraint-tightened",
        field({"type": "integer", "maximum": 6}),
        field({"type": "integer", "maximum": 5}),
        "maximum 6 -> 5",
    ),
    Case(
        "result-constraint-loosened",
        field({"type": "string", "pattern": "^a"}),
        field({"type": "string", "pattern": "^b"}),
        'pattern "^a" -> "^b"',
        symmetric=True,  # another pattern may match what the old one did not: readers cannot rely on it
    ),
    Case(
        "result-object-closed", field(OBJ), field({**OBJ, "additionalProperties": False}), "additionalProperties: false"
    ),
    Case("result-object-opened", field({**OBJ, "additionalProperties": False}), field(OBJ), "may now carry properties"),
    Case(
        "result-schema-changed",
        field({"not": {"type": "string"}}),
        field({"not": {"type": "null"}}),
        "'not' changed",
        True,
    ),
]


@pytest.mark.parametrize("case", TRIGGERS, ids=[f"{c.rule}-{i}" for i, c in enumerate(TRIGGERS)])
def test_rule_triggers_and_its_reverse_does_not(case: Case, tmp_path: Path) -> None:
    found = changes(tmp_path, case.old, case.new, "forward")
    matching = [f for f in found if f.rule == case.rule]
    assert matching, [f.format() for f in found]
    assert any(case.says in f.message for f in matching), [f.format() for f in matching]
    assert all(f.severity is RULES[case.rule].severity for f in matching)
    if not case.breaking:
        assert not rules(found, "error"), [f.format() for f in found]
    if not case.symmetric:
        reverse = changes(tmp_path, case.new, case.old, "reverse")
        assert case.rule not in rules(reverse), [f.format() for f in reverse]


def test_every_rule_has_a_triggering_case() -> None:
    assert set(RULES) == {case.rule for case in TRIGGERS}


# Safe changes: no error at all, and the warning that names them.
SAFE = [
    ("new tool", [T_PLAIN], [T_PLAIN, U], "tool-added"),
    ("new optional argument", T_PLAIN, args({"a": {"type": "string"}, "b": {"type": "integer"}}), "argument-added"),
    (
        "enum value added",
        arg({"type": "string", "enum": ["a"]}),
        arg({"type": "string", "enum": ["a", "b"]}),
        "argument-enum-value-added",
    ),
    ("integer widened to number", arg({"type": "integer"}), arg({"type": "number"}), "argument-type-widened"),
    (
        "null allowed",
        arg({"type": "string"}),
        arg({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        "argument-type-widened",
    ),
    (
        "union branch added",
        arg({"anyOf": [{"type": "string"}]}),
        arg({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        "argument-type-widened",
    ),
    (
        "description changed",
        arg({"type": "string", "description": "a"}),
        arg({"type": "string", "description": "b"}),
        "description-changed",
    ),
    ("tool title", T_PLAIN, {**T_PLAIN, "title": "Tee"}, "description-changed"),
    (
        "constraint loosened",
        arg({"type": "string", "minLength": 3}),
        arg({"type": "string", "minLength": 1}),
        "argument-constraint-loosened",
    ),
    ("argument made optional", args({"a": {"type": "string"}}, ("a",)), T_PLAIN, "argument-made-optional"),
    ("object opened", args({"a": {"type": "string"}}, additionalProperties=False), T_PLAIN, "argument-object-opened"),
    ("result field added", result({}), result({"y": {"type": "string"}}, ("y",)), "result-field-added"),
    (
        "result field made required",
        result({"x": {"type": "string"}}),
        field({"type": "string"}),
        "result-field-made-required",
    ),
    ("result narrowed", field({"type": "number"}), field({"type": "integer"}), "result-type-narrowed"),
    ("approval dropped", {**T_PLAIN, "requiresApproval": True}, T_PLAIN, "requires-approval-removed"),
    ("result declared", T_PLAIN, {**T_PLAIN, "outputSchema": {"type": "string"}}, "result-schema-added"),
    (
        "union member description",
        arg({"anyOf": [{"type": "string", "description": "a"}, {"type": "null"}]}),
        arg({"anyOf": [{"type": "string", "description": "b"}, {"type": "null"}]}),
        "description-changed",
    ),
]


@pytest.mark.parametrize(("old", "new", "rule"), [s[1:] for s in SAFE], ids=[s[0] for s in SAFE])
def test_safe_changes_are_warnings_only(old: Any, new: Any, rule: str, tmp_path: Path) -> None:
    found = changes(tmp_path, old, new)
    assert not rules(found, "error"), [f.format() for f in found]
    assert rule in rules(found, "warning")


# The same set of values written another way is no change at all.
SAME = [
    ("enum as const union", arg({"enum": ["a", "b"]}), arg({"anyOf": [{"const": "a"}, {"const": "b"}]})),
    ("type list as union", arg({"type": ["string", "null"]}), arg({"anyOf": [{"type": "string"}, {"type": "null"}]})),
    (
        "oneOf as anyOf",
        arg({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
        arg({"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    ),
    (
        "inline as $ref",
        arg({"type": "object", "properties": {"a": {"type": "string"}}}),
        args(
            {"x": {"$ref": "#/$defs/X"}},
            **{"$defs": {"X": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        ),
    ),
    (
        "order of properties",
        args({"a": {"type": "string"}, "b": {"type": "string"}}),
        args({"b": {"type": "string"}, "a": {"type": "string"}}),
    ),
    ("uniqueItems false is the default", arg({"type": "array", "uniqueItems": False}), arg({"type": "array"})),
    ("untouched project", [T_PLAIN, U], [U, T_PLAIN]),
]


@pytest.mark.parametrize(("old", "new"), [s[1:] for s in SAME], ids=[s[0] for s in SAME])
def test_equivalent_schemas_have_no_findings(old: Any, new: Any, tmp_path: Path) -> None:
    assert changes(tmp_path, old, new) == ()


def test_recursive_refs_are_followed_and_terminate(tmp_path: Path) -> None:
    def tree(status: list[str]) -> dict[str, Any]:
        node = {
            "type": "object",
            "properties": {
                "status": {"enum": status},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
        }
        return {"name": "t", "inputSchema": {"$ref": "#/$defs/Node", "$defs": {"Node": node}}}

    found = changes(tmp_path, tree(["a", "b"]), tree(["a"]))
    assert [(f.rule, f.message) for f in found] == [
        ("argument-enum-value-removed", "t: argument 'status' no longer accepts \"b\"")
    ]


OLD_YAML = """\
$defs:
  Item:
    type: object
    properties:
      status: {type: string, enum: [open, closed, stale]}
tools:
  - name: keep
    inputSchema:
      type: object
      properties:
        items: {type: array, items: {$ref: "tools.yaml#/$defs/Item"}}
        city: {type: string}
        unit: {type: string}
  - name: gone
    inputSchema: {type: object, properties: {q: {type: integer}}}
"""
NEW_YAML = """\
$defs:
  Item:
    type: object
    properties:
      status: {type: string, enum: [open, closed]}
tools:
  - name: keep
    inputSchema:
      type: object
      properties:
        items: {type: array, items: {$ref: "tools.yaml#/$defs/Item"}}
        city:
          type: string
          maxLength: 64
"""


def test_a_ref_with_siblings_is_compared_at_each_place(tmp_path: Path) -> None:
    def tool(second_limit: int) -> dict[str, Any]:
        defs = {"$defs": {"Name": {"type": "string"}}}
        first = {"$ref": "#/$defs/Name", "maxLength": 9}
        return args({"first": first, "second": {"$ref": "#/$defs/Name", "maxLength": second_limit}}, **defs)

    found = changes(tmp_path, tool(9), tool(5))
    assert [f.message for f in found] == ["t: argument 'second': maxLength 9 -> 5"]


def test_findings_are_placed_in_the_current_files(tmp_path: Path) -> None:
    old = make(tmp_path / "v1", [], {"tools.yaml": OLD_YAML})
    new = make(tmp_path / "v2", [], {"tools.yaml": NEW_YAML})
    found = [f.format() for f in toolgen.breaking(str(old), root=new)]
    assert found == [
        f"{old}:schemas/tools.yaml:14:11: error tool-removed tool 'gone' was removed (it was defined here, in {old})",
        # the $ref is followed to the definition it names, in the same file
        "schemas/tools.yaml:5:30: error argument-enum-value-removed keep: argument 'items[].status' no longer accepts \"stale\"",
        # a removed argument is placed at the parent that remains
        "schemas/tools.yaml:10:7: error argument-removed keep: argument 'unit' was removed",
        "schemas/tools.yaml:14:11: error argument-constraint-tightened keep: argument 'city': now has maxLength 64",
    ]


def test_findings_in_a_referenced_file_stay_at_the_ref(tmp_path: Path) -> None:
    tool = args({"p": {"$ref": "lib.yaml#/$defs/P"}})
    old = make(tmp_path / "v1", tool, {"lib.yaml": "$defs:\n  P: {type: string, enum: [a, b]}\n"})
    new = make(tmp_path / "v2", tool, {"lib.yaml": "$defs:\n  P: {type: string, enum: [a]}\n"})
    (finding,) = toolgen.breaking(str(old), root=new)
    assert finding.rule == "argument-enum-value-removed"
    assert (finding.path, finding.pointer) == ("schemas/tools.json", "/tools/0/inputSchema/properties/p")


def cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["breaking", *arguments])


def git(repo: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=toolgen", "-c", "user.email=toolgen@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, "-C", str(repo), *arguments], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with the project in a subfolder and two commits: the second removes an enum value."""
    root = tmp_path / "repo"
    project = make(root / "services" / "tools", arg({"type": "string", "enum": ["a", "b"]}))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v1")
    make(root / "scratch", T_PLAIN)  # unrelated files elsewhere in the tree
    (project / "schemas" / "tools.json").write_text(json.dumps({"tools": [arg({"enum": ["a"]})]}), encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v2")
    return project


def test_git_revision(repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolgen", "breaking", "--against", "HEAD~1"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "schemas/tools.json:1:81: error argument-enum-value-removed t: argument 'x' no longer accepts \"b\""
    ]
    assert "1 breaking change(s), 0 safe change(s) against HEAD~1" in done.stderr
    assert cli("-C", str(repo), "--against", "HEAD").exit_code == 0


def test_git_revision_against_the_working_tree(repo: Path) -> None:
    (repo / "schemas" / "tools.json").write_text(json.dumps({"tools": [arg({"enum": ["a", "c"]})]}), encoding="utf-8")
    quiet = cli("-C", str(repo), "--against", "HEAD")
    assert (quiet.exit_code, quiet.stdout) == (0, "")  # safe changes print only with --all
    loud = cli("-C", str(repo), "--against", "HEAD", "--all", "--format", "github")
    assert loud.exit_code == 0
    assert loud.stdout.startswith("::warning file=schemas/tools.json,line=1,col=")
    assert "title=argument-enum-value-added::t: argument 'x' now also accepts \"c\"" in loud.stdout


def test_git_revision_without_the_project_or_with_a_broken_one(repo: Path) -> None:
    root = repo.parent.parent
    git(root, "commit", "-q", "--allow-empty", "-m", "v3")
    first = subprocess.run(
        ["git", "-C", str(root), "rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True
    )
    (root / "elsewhere" / "schemas").mkdir(parents=True)
    (root / "elsewhere" / "toolgen.yaml").write_text(CONFIG, encoding="utf-8")
    # A project with no tools is refused before any comparison: this one has the same tools as the repo's.
    (root / "elsewhere" / "schemas" / "tools.json").write_text(
        (repo / "schemas" / "tools.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "v4")
    missing = cli("-C", str(root / "elsewhere"), "--against", first.stdout.strip())
    assert missing.exit_code == 3
    assert "has no toolgen.yaml for this project" in missing.stdout
    good = (repo / "schemas" / "tools.json").read_text(encoding="utf-8")
    (repo / "schemas" / "tools.json").write_text("{oops", encoding="utf-8")
    git(root, "commit", "-q", "-am", "v5")
    (repo / "schemas" / "tools.json").write_text(good, encoding="utf-8")  # only the revision is broken
    broken = cli("-C", str(repo), "--against", "HEAD")
    assert broken.exit_code == 3
    assert broken.stdout.startswith("HEAD:schemas/tools.json:1:2: error syntax")


def test_directory_ref(tmp_path: Path) -> None:
    old = make(tmp_path / "old", args({"a": {"type": "string"}, "b": {"type": "string"}}))
    new = make(tmp_path / "new", T_PLAIN)
    done = cli("-C", str(new), "--against", str(old), "--format", "json")
    assert done.exit_code == 1
    (finding,) = json.loads(done.stdout)
    assert (finding["rule"], finding["severity"], finding["pointer"]) == (
        "argument-removed",
        "error",
        "/tools/0/inputSchema/properties",
    )
    assert cli("-C", str(new), "--against", str(new)).exit_code == 0


def test_exported_snapshot_ref(tmp_path: Path) -> None:
    project = make(tmp_path / "p", [args({"a": {"type": "string"}}, ("a",)), U])
    snapshot = tmp_path / "baseline.json"
    assert cli("-C", str(project), "--export", str(snapshot)).exit_code == 0
    printed = cli("-C", str(project), "--export", "-")
    assert printed.stdout == snapshot.read_text(encoding="utf-8")  # stable: the same text twice
    data = json.loads(printed.stdout)
    assert [t["name"] for t in data["tools"]] == ["t", "u"]
    assert data["tools"][0]["inputSchema"]["required"] == ["a"]
    assert cli("-C", str(project), "--against", str(snapshot)).exit_code == 0
    (project / "schemas" / "tools.json").write_text(json.dumps({"tools": [T_PLAIN]}), encoding="utf-8")
    done = cli("-C", str(project), "--against", str(snapshot), "--all")
    assert done.exit_code == 1
    lines = done.stdout.splitlines()
    # where the removed tool was when the snapshot was taken, labeled with the snapshot
    assert (
        lines[0]
        == f"{snapshot}:schemas/tools.json:18:12: error tool-removed tool 'u' was removed (it was defined here, in {snapshot})"
    )
    assert any("warning argument-made-optional t: argument 'a' is now optional" in line for line in lines)


def test_bad_refs_exit_3(tmp_path: Path) -> None:
    project = make(tmp_path / "p", T_PLAIN)
    done = cli("-C", str(project), "--against", "no-such-branch")
    assert done.exit_code == 3
    assert done.stdout.startswith(
        "--against:1:1: error against-ref 'no-such-branch' is not a file, a directory or a git"
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "toolgen-breaking-snapshot", "version": 1, "tools": [{"name": 5}]}', encoding="utf-8")
    done = cli("-C", str(project), "--against", str(bad))
    assert done.exit_code == 3
    assert "snapshot-invalid tool entry 0: 'name' is missing or invalid" in done.stdout
    bad.write_text("[1, 2", encoding="utf-8")
    assert cli("-C", str(project), "--against", str(bad)).exit_code == 3
    assert cli("-C", str(project), "--against", str(tmp_path)).exit_code == 3  # a directory without toolgen.yaml


def test_usage_needs_one_of_against_or_export(tmp_path: Path) -> None:
    project = make(tmp_path / "p", T_PLAIN)
    assert cli("-C", str(project)).exit_code == 2
    assert cli("-C", str(project), "--against", "HEAD", "--export", "-").exit_code == 2


def test_the_cli_page_lists_every_rule_with_its_severity() -> None:
    # The severity a rule has in RULES is what the cases above check findings against; this holds it to the
    # documented one, so a rule cannot turn from breaking to safe (or back) without docs/cli.md saying so.
    page = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = page.split("<!-- breaking-rules -->", 1)[1].split("<!-- /breaking-rules -->", 1)[0]
    listed = dict(re.findall(r"^\| `([a-z-]+)` \| (error|warning) \|", table, re.MULTILINE))
    assert listed == {rule: RULES[rule].severity.value for rule in RULES}
