"""A recursive schema extended through its `$dynamicAnchor` (2020-12's strict tree) is checked and exported as the
specification has it, whether the extension has an `$id` or not.

From the official suite (dynamicRef.json, "strict-tree schema, guards against misspelled properties"): the tree
declares `$dynamicAnchor: node` and refers to its children with `$dynamicRef: "#node"`; the strict tree declares
the same anchor and `$ref`s the tree, so each child is a strict tree. jsonschema's resolver leaves a root without
`$id` out of the dynamic scope (python-jsonschema/referencing#366), so the package's check of such an extension
accepted the misspelled child the exported schema refuses. A draft 2019-09 `$recursiveRef` that resolves by
dynamic scope stays refused, naming where it is written and what to write instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.projects import CONFIG, Project, run_sdk, shared_dir

from toolgen.core.errors import InvalidInputError
from toolgen.ir.check_levels import SCOPE_ROOT
from toolgen.ir.lower import lower
from toolgen.ir.model import thaw
from toolgen.project.config import load_config
from toolgen.runtime.models.check import schema_accepts, schema_validator

DRAFT = "https://json-schema.org/draft/2020-12/schema"
TREE_URI = "http://localhost:1234/draft2020-12/tree.json"


def _suite() -> Path:
    return shared_dir("json-schema-test-suite")


def _tree() -> dict[str, Any]:
    tree: dict[str, Any] = json.loads((_suite() / "remotes" / "draft2020-12" / "tree.json").read_text("utf-8"))
    return tree


def _cases() -> list[tuple[Any, bool]]:
    """The suite's instances for the strict tree, and a few deeper ones of the same kind."""
    groups = json.loads((_suite() / "tests" / "draft2020-12" / "dynamicRef.json").read_text("utf-8"))
    (group,) = [g for g in groups if g["description"].startswith("strict-tree schema")]
    found = [(test["data"], test["valid"]) for test in group["tests"]]
    assert found == [({"children": [{"daat": 1}]}, False), ({"children": [{"data": 1}]}, True)]
    deeper = [({"children": [{"children": [{"daat": 1}]}]}, False), ({"children": [{"children": [{}]}]}, True)]
    return [*found, ({"daat": 1}, False), *deeper]


def _schemas() -> dict[str, dict[str, Any]]:
    tree = {key: value for key, value in _tree().items() if key != "$schema"}
    strict = {"$schema": DRAFT, "$dynamicAnchor": "node", "unevaluatedProperties": False}
    return {
        # The suite's own: the extension has an `$id`, the tree is a vendored document.
        "suite": {**strict, "$id": "http://localhost:1234/draft2020-12/strict-tree.json", "$ref": "tree.json"},
        "vendored_no_id": {**strict, "$ref": TREE_URI},
        "embedded_no_id": {**strict, "$ref": "#/$defs/tree", "$defs": {"tree": {**tree, "$id": "urn:example:tree"}}},
    }


def _project(make_project: Callable[..., Project], schema: dict[str, Any]) -> Project:
    project = make_project()
    remotes = json.dumps(str(_suite() / "remotes" / "draft2020-12"))
    project.write(
        "toolgen.yaml",
        CONFIG.format(package="sdk") + f"remotes: {{'http://localhost:1234/draft2020-12/': {remotes}}}\n",
    )
    project.write("schemas/t.json", json.dumps({"name": "tree", "description": "d", "inputSchema": schema}))
    return project


@pytest.mark.parametrize("variant", ["suite", "vendored_no_id", "embedded_no_id"])
def test_the_check_and_the_export_agree_with_the_suite(make_project: Callable[..., Project], variant: str) -> None:
    schema = _schemas()[variant]
    (tool,) = lower(load_config(_project(make_project, schema).root)).project.tools
    check_schema = thaw(tool.check_schema)
    resources = thaw(tool.check_resources) if tool.check_resources else None
    # The check reads the schema as written; one without `$id` is given one so that it is in its dynamic scope.
    assert tool.check_input
    assert check_schema == (schema if "$id" in schema else {"$id": SCOPE_ROOT, **schema})
    checked = schema_validator(check_schema, resources)
    exported = jsonschema.Draft202012Validator(thaw(tool.input_schema))
    for data, valid in _cases():
        assert (schema_accepts(checked, data), exported.is_valid(data)) == (valid, valid), data


def test_the_built_package_refuses_the_misspelled_child(make_project: Callable[..., Project]) -> None:
    project = _project(make_project, _schemas()["embedded_no_id"])
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    seen = run_sdk(
        project.root,
        """
        import json, sys
        from sdk import TOOLS, ToolgenValidationError, tool_definitions
        verdicts = []
        for data in json.loads(sys.argv[1]):
            try:
                TOOLS["tree"].check_arguments(data, json_text=False)
                verdicts.append(None)
            except ToolgenValidationError as error:
                verdicts.append([p.pointer for p in error.problems])
        print(json.dumps({"verdicts": verdicts, "anthropic": tool_definitions("anthropic")[0]["input_schema"]}))
        """,
        json.dumps([data for data, _ in _cases()]),
    )
    # unevaluatedProperties is reported at the object that holds the key it refuses.
    assert seen["verdicts"] == [["/children/0"], None, [""], ["/children/0/children/0"], None]
    exported = jsonschema.Draft202012Validator(seen["anthropic"])
    assert [exported.is_valid(data) for data, _ in _cases()] == [valid for _, valid in _cases()]


def test_a_scope_that_needs_no_root_keeps_the_schema_as_written(make_project: Callable[..., Project]) -> None:
    # The tree alone: its `$dynamicRef` is in its own resource, so it resolves there whatever the scope.
    tree = {key: value for key, value in _tree().items() if key != "$id"}
    (tool,) = lower(load_config(_project(make_project, tree).root)).project.tools
    assert thaw(tool.check_schema) == tree


def test_a_recursive_ref_by_dynamic_scope_is_refused_naming_its_place(make_project: Callable[..., Project]) -> None:
    draft = "https://json-schema.org/draft/2019-09/schema"
    tree = {
        "$schema": draft,
        "$id": "http://localhost:1234/draft2020-12/tree19.json",
        "$recursiveAnchor": True,
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$recursiveRef": "#"}}},
    }
    schema = {
        "$schema": draft,
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/tree"}},
        "$defs": {"tree": tree},
    }
    with pytest.raises(InvalidInputError) as caught:
        lower(load_config(_project(make_project, schema).root))
    at = "/inputSchema/$defs/tree/properties/children/items/$recursiveRef"
    assert [(d.path, d.rule, d.pointer, d.message) for d in caught.value.diagnostics] == [
        (
            "schemas/t.json",
            "ref-unsupported",
            at,
            "$recursiveRef '#' is not supported: the schema resource it names "
            "(schemas/t.json#/inputSchema/$defs/tree) declares $recursiveAnchor: true, so it resolves by dynamic "
            "scope, which toolgen follows only for draft 2020-12's $dynamicRef; write $ref '#' and drop "
            "$recursiveAnchor, $ref the schema you mean, or declare draft 2020-12 and write $dynamicAnchor and "
            "$dynamicRef instead",
        )
    ]
