"""A draft 2019-09 `$recursiveRef` is bundled as the `$ref` it resolves to, or refused where it is written.

`$recursiveRef: "#"` names the schema resource it is written in (2019-09, 8.2.4.2), unless that resource declares
`$recursiveAnchor: true`, when the dynamic scope decides. Kept as written in the bundle, its `#` named the tool's
root instead, and the models followed it to a class no package defines (exit 4). Validity here is what jsonschema's
Draft201909Validator says of the schema as written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
import referencing
from referencing.jsonschema import DRAFT201909
from support.projects import CONFIG, Project, run_sdk

from toolgen.core.errors import InvalidInputError
from toolgen.ir.lower import lower
from toolgen.ir.model import thaw
from toolgen.project.config import load_config

DRAFT = "https://json-schema.org/draft/2019-09/schema"
TREE_URI = "https://example.com/shared/tree19.json"
TREE = {"$schema": DRAFT, "$id": TREE_URI, "type": "object", "properties": {"kids": {"type": "array", "items": {}}}}
TREE["properties"]["kids"]["items"] = {"$recursiveRef": "#"}
INPUT = {
    "$schema": DRAFT,
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "t": {"$ref": TREE_URI}},
}
# Each valid or not as Draft201909Validator has it: `#` in the tree is the tree, which does not require `name`.
ARGUMENTS = [
    {"name": "a"},
    {"name": "a", "t": {"kids": [{"kids": []}]}},
    {"name": "a", "t": {"kids": [{"other": 1, "kids": [{}]}]}},
    {"name": "a", "t": {"kids": [{"kids": [1]}]}},
    {"name": "a", "t": {"kids": [{"kids": [{"kids": "x"}]}]}},
    {"name": "a", "t": {"kids": [5]}},
    {"t": {}},
]


def _project(make_project: Callable[..., Project], tool_schema: dict[str, Any], tree: Any = None) -> Project:
    project = make_project()
    project.write("toolgen.yaml", CONFIG.format(package="sdk") + "remotes: {'https://example.com/shared/': vendor/}\n")
    project.write("vendor/tree19.json", json.dumps(TREE if tree is None else tree))
    project.write("schemas/t.json", json.dumps({"name": "rr", "description": "d", "inputSchema": tool_schema}))
    return project


def _written_validity() -> list[bool]:
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(
        TREE_URI, referencing.Resource.from_contents(TREE, default_specification=DRAFT201909)
    )
    validator = jsonschema.Draft201909Validator(INPUT, registry=registry)
    return [validator.is_valid(data) for data in ARGUMENTS]


def test_a_recursive_ref_in_another_file_is_its_own_resource(make_project: Callable[..., Project]) -> None:
    expected = _written_validity()
    assert expected == [True, True, True, False, False, False, False]
    project = _project(make_project, INPUT)
    (tool,) = lower(load_config(project.root)).project.tools
    exported = thaw(tool.input_schema)
    assert exported["$defs"] == {
        "Tree19": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree19"}}}}
    }
    validator = jsonschema.Draft201909Validator(exported)
    assert [validator.is_valid(data) for data in ARGUMENTS] == expected
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    seen = run_sdk(
        project.root,
        """
        import json, sys
        from sdk import TOOLS, ToolgenValidationError
        valid = []
        for data in json.loads(sys.argv[1]):
            try:
                TOOLS["rr"].check_arguments(data, json_text=False)
                valid.append(True)
            except ToolgenValidationError:
                valid.append(False)
        print(json.dumps(valid))
        """,
        json.dumps(ARGUMENTS),
    )
    assert seen == expected


def test_a_recursive_ref_beside_a_ref_keeps_both(make_project: Callable[..., Project]) -> None:
    tool_schema = {
        "$schema": DRAFT,
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"$ref": "#/$defs/Small", "$recursiveRef": "#"}},
        "$defs": {"Small": {"maximum": 3}},
    }
    (tool,) = lower(load_config(_project(make_project, tool_schema).root)).project.tools
    exported = thaw(tool.input_schema)
    assert exported["properties"]["b"] == {"$ref": "#/$defs/Small", "allOf": [{"$ref": "#/$defs/RrArgs"}]}
    written = jsonschema.Draft201909Validator(tool_schema)
    bundled = jsonschema.Draft201909Validator(exported)
    for data in ({"b": 2}, {"b": 4}, {"b": {"a": 1}}, {"b": {"a": "x"}}, {"b": {"b": 5}}):
        assert bundled.is_valid(data) == written.is_valid(data), data


def _refused(project: Project) -> list[str]:
    with pytest.raises(InvalidInputError) as caught:
        lower(load_config(project.root))
    return [f"{d.rule} {d.pointer} {d.message}" for d in caught.value.diagnostics]


def test_a_recursive_ref_that_resolves_by_dynamic_scope_is_refused(make_project: Callable[..., Project]) -> None:
    tree = {**TREE, "$recursiveAnchor": True}
    assert _refused(_project(make_project, INPUT, tree)) == [
        "ref-unsupported /properties/kids/items/$recursiveRef $recursiveRef '#' is not supported: the schema "
        "resource it names (vendor/tree19.json#) declares $recursiveAnchor: true, so it resolves by dynamic scope, "
        "which toolgen follows only for draft 2020-12's $dynamicRef; write $ref '#' and drop $recursiveAnchor, $ref "
        "the schema you mean, or declare draft 2020-12 and write $dynamicAnchor and $dynamicRef instead"
    ]


def test_a_recursive_ref_of_no_declared_draft_is_refused(make_project: Callable[..., Project]) -> None:
    tree = {key: value for key, value in TREE.items() if key != "$schema"}
    assert _refused(_project(make_project, INPUT, tree)) == [
        "ref-unsupported /properties/kids/items/$recursiveRef $recursiveRef '#' is a keyword of draft 2019-09 "
        "only, and no $schema above it says which draft this schema is; declare "
        f'"$schema": "{DRAFT}", or use $ref'
    ]


def test_a_recursive_ref_to_anything_but_the_root_is_refused(make_project: Callable[..., Project]) -> None:
    tool_schema = {"$schema": DRAFT, "type": "object", "properties": {"x": {"$recursiveRef": "#/properties"}}}
    assert _refused(_project(make_project, tool_schema)) == [
        "ref-unsupported /inputSchema/properties/x/$recursiveRef $recursiveRef '#/properties' is defined only "
        "for '#' (draft 2019-09, 8.2.4.2.1); use $ref"
    ]


def test_a_recursive_ref_in_a_draft_without_it_is_ignored_as_its_validators_do(
    make_project: Callable[..., Project],
) -> None:
    tool_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"x": {"type": "string", "$recursiveRef": "#"}},
    }
    project = _project(make_project, tool_schema)
    (tool,) = lower(load_config(project.root)).project.tools
    assert thaw(tool.input_schema)["properties"]["x"] == {"type": "string"}
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
