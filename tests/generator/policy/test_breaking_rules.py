"""`toolgen breaking`: every rule triggered by a schema change, with its severity, and not by the change reversed."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import toolgen
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
