"""`toolgen breaking`: safe changes only warn, equivalent schemas find nothing, findings are placed in current files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_breaking_rules import T_PLAIN, U, arg, args, changes, field, make, result, rules

import toolgen

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
