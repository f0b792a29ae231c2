"""A `$dynamicRef` reaches the exported schema as the `$ref` it resolves to, never left pointing nowhere.

The schema a tool exports (TOOLS' input_schema, tool_definitions(), `toolgen export`) is bundled into one resource
without its `$dynamicAnchor`s. Each `$dynamicRef` there becomes a `$ref` to where JSON Schema 2020-12 resolves it
(8.2.3.2: the outermost resource in the dynamic scope declaring the anchor, else its target), a schema reached
in scopes that resolve differently being copied once per scope. Every exported schema is checked here with
jsonschema against data whose validity the specification (and the schema as written) decides.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from support.projects import Project, run_sdk

from toolgen.core.errors import InvalidInputError
from toolgen.ir.dynamic_refs import MAX_COPIES
from toolgen.ir.lower import lower
from toolgen.ir.model import thaw
from toolgen.project.config import load_config

# The hostile tester's case: the anchor sits in a `$defs` entry nothing `$ref`s, which bundling dropped.
ANCHORED = {
    "type": "object",
    "properties": {"x": {"$dynamicRef": "#meta"}},
    "$defs": {"m": {"$dynamicAnchor": "meta", "type": "string"}},
}
ANCHORED_EXPORTED = {"type": "object", "properties": {"x": {"$ref": "#/$defs/m"}}, "$defs": {"m": {"type": "string"}}}

# From the official suite (dynamicRef.json, "multiple dynamic paths to the $dynamicRef keyword"): one generic list
# reached through two resources that declare its item type differently.
PATHS = {
    "$id": "https://test.json-schema.org/dynamic-ref-with-multiple-paths/main",
    "if": {"properties": {"kindOfList": {"const": "numbers"}}, "required": ["kindOfList"]},
    "then": {"$ref": "numberList"},
    "else": {"$ref": "stringList"},
    "$defs": {
        "genericList": {
            "$id": "genericList",
            "properties": {"list": {"items": {"$dynamicRef": "#itemType"}}},
            "$defs": {
                "defaultItemType": {"$comment": "Only needed to satisfy bookending", "$dynamicAnchor": "itemType"}
            },
        },
        "numberList": {
            "$id": "numberList",
            "$defs": {"itemType": {"$dynamicAnchor": "itemType", "type": "number"}},
            "$ref": "genericList",
        },
        "stringList": {
            "$id": "stringList",
            "$defs": {"itemType": {"$dynamicAnchor": "itemType", "type": "string"}},
            "$ref": "genericList",
        },
    },
}

# (name, input schema, [(arguments, valid)]) with validity as the specification has it.
CASES: list[tuple[str, dict[str, Any], list[tuple[Any, bool]]]] = [
    ("anchored", ANCHORED, [({"x": "s"}, True), ({"x": 1}, False)]),
    (
        "paths",
        PATHS,
        [
            ({"kindOfList": "numbers", "list": [1.1]}, True),
            ({"kindOfList": "numbers", "list": ["foo"]}, False),
            ({"kindOfList": "strings", "list": ["foo"]}, True),
            ({"kindOfList": "strings", "list": [1.1]}, False),
        ],
    ),
    (
        # The recursive tree: the root declares the anchor, so every `#node` is the root, whatever reached it.
        "tree",
        {
            "$dynamicAnchor": "node",
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}, "v": {"type": "integer"}},
        },
        [({"kids": [{"v": 1, "kids": []}]}, True), ({"kids": [{"v": "x"}]}, False)],
    ),
    (
        # A plain `$anchor` target: a `$dynamicRef` to it is a `$ref`; beside a `$ref`, both apply.
        "beside",
        {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/min", "$dynamicRef": "#int"}},
            "$defs": {"int": {"$anchor": "int", "type": "integer"}, "min": {"minimum": 3}},
        },
        [({"x": 4}, True), ({"x": 1}, False), ({"x": "a"}, False)],
    ),
    (
        "meta",
        {"type": "object", "properties": {"s": {"$dynamicRef": "https://json-schema.org/draft/2020-12/schema#meta"}}},
        [({"s": {"type": "string"}}, True), ({"s": {"type": 5}}, False)],
    ),
]


def _lowered(make_project: Callable[..., Project], tools: list[dict[str, Any]]) -> Any:
    project = make_project()
    project.write("schemas/tools.json", json.dumps({"tools": tools}))
    return lower(load_config(project.root))


def _no_dynamic_keywords(schema: Any) -> bool:
    text = json.dumps(schema)
    return "$dynamicRef" not in text and "$dynamicAnchor" not in text


@pytest.mark.parametrize(("name", "schema", "cases"), CASES, ids=[case[0] for case in CASES])
def test_each_dynamic_ref_is_exported_as_the_ref_it_resolves_to(
    make_project: Callable[..., Project], name: str, schema: dict[str, Any], cases: list[tuple[Any, bool]]
) -> None:
    lowered = _lowered(make_project, [{"name": name, "inputSchema": schema}])
    (tool,) = lowered.project.tools
    exported = thaw(tool.input_schema)
    assert _no_dynamic_keywords(exported), exported
    validator = jsonschema.Draft202012Validator(exported)
    assert [validator.is_valid(data) for data, _ in cases] == [valid for _, valid in cases]
    # The check the package runs still reads the schema as written.
    assert tool.check_input and thaw(tool.check_schema) == schema


def test_a_schema_reached_in_two_scopes_is_copied_once_for_each(make_project: Callable[..., Project]) -> None:
    lowered = _lowered(make_project, [{"name": "paths", "inputSchema": PATHS}])
    exported = thaw(lowered.project.tools[0].input_schema)
    assert exported["then"] == {"$ref": "#/$defs/numberList"} and exported["else"] == {"$ref": "#/$defs/stringList"}
    defs = exported["$defs"]
    assert defs["numberList"] == {"$ref": "#/$defs/genericList"}
    assert defs["stringList"] == {"$ref": "#/$defs/genericList2"}
    assert defs["genericList"]["properties"]["list"]["items"] == {"$ref": "#/$defs/itemType"}
    assert defs["genericList2"]["properties"]["list"]["items"] == {"$ref": "#/$defs/itemType2"}
    assert (defs["itemType"], defs["itemType2"]) == ({"type": "number"}, {"type": "string"})
    # The schemas bundled only for the export stay out of the models.
    models = json.loads(lowered.project.models_schema)["$defs"]
    assert not {"ItemType", "ItemType2", "GenericList2"} & models.keys()


def test_the_package_and_export_carry_the_anchored_schema(make_project: Callable[..., Project]) -> None:
    project = make_project()
    project.write(
        "schemas/tools.json", json.dumps({"tools": [{"name": "dyn", "description": "d", "inputSchema": ANCHORED}]})
    )
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    seen = run_sdk(
        project.root,
        """
        import json
        from sdk import TOOLS, ToolgenValidationError, tool_definitions
        try:
            TOOLS["dyn"].check_arguments({"x": 1}, json_text=False)
            refused = None
        except ToolgenValidationError as error:
            refused = [p.pointer for p in error.problems]
        print(json.dumps({
            "input_schema": TOOLS["dyn"].input_schema,
            "openai": tool_definitions("openai-chat")[0]["function"]["parameters"],
            "anthropic": tool_definitions("anthropic")[0]["input_schema"],
            "refused": refused,
        }))
        """,
    )
    assert seen["input_schema"] == seen["openai"] == seen["anthropic"] == ANCHORED_EXPORTED
    assert seen["refused"] == ["/x"]
    exported = project.cli("export", "--format", "mcp")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)[0]["inputSchema"] == ANCHORED_EXPORTED


def test_a_dynamic_ref_that_leads_back_to_itself_is_refused_where_written(
    make_project: Callable[..., Project],
) -> None:
    text = json.dumps(
        {
            "name": "loop",
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"$ref": "#/$defs/a"}},
                "$defs": {"a": {"$dynamicAnchor": "a", "$dynamicRef": "#a"}},
            },
        }
    )
    project = make_project()
    project.write("schemas/loop.json", text)
    with pytest.raises(InvalidInputError) as caught:
        lower(load_config(project.root))
    column = text.index('"#a"') + 1
    assert [d.format() for d in caught.value.diagnostics] == [
        f"schemas/loop.json:1:{column}: error ref-cycle tool 'loop': this $dynamicRef never reaches a schema: "
        "the references lead back to it"
    ]


def test_scopes_that_multiply_past_the_limit_are_refused(make_project: Callable[..., Project]) -> None:
    # Ten levels, each reached through two resources that declare its anchor: 2**10 scopes reach the leaf.
    levels = 10
    defs: dict[str, Any] = {}
    for level in range(levels):
        below = [{"$ref": f"a{level + 1}"}, {"$ref": f"b{level + 1}"}] if level + 1 < levels else [{"$ref": "leaf"}]
        for side, kind in (("a", "string"), ("b", "integer")):
            defs[f"{side}{level}"] = {
                "$id": f"{side}{level}",
                "$defs": {"k": {"$dynamicAnchor": f"k{level}", "type": kind}},
                "anyOf": below,
            }
    defs["leaf"] = {
        "$id": "leaf",
        "$defs": {f"k{level}": {"$dynamicAnchor": f"k{level}"} for level in range(levels)},
        "allOf": [{"$dynamicRef": f"#k{level}"} for level in range(levels)],
    }
    schema = {"$id": "https://example.com/root", "anyOf": [{"$ref": "a0"}, {"$ref": "b0"}], "$defs": defs}
    project = make_project()
    project.write("schemas/many.json", json.dumps({"name": "many", "inputSchema": schema}))
    with pytest.raises(InvalidInputError) as caught:
        lower(load_config(project.root))
    assert [(d.rule, d.severity.value) for d in caught.value.diagnostics] == [("ref-unsupported", "error")]
    assert caught.value.diagnostics[0].message == (
        f"tool 'many': its $dynamicRef cannot be exported: its dynamic scopes would take more than {MAX_COPIES} "
        "copies of its schemas; point at the schema you mean with $ref"
    )
