"""Dialect tools read by their shape (`normalize: [shapes]`): parameters named like JSON Schema keywords, empty maps."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from support.projects import Project

import toolgen
from toolgen.source.dialects import is_parameter_map, is_schema

# Every keyword of JSON Schema 2020-12 (core, applicator, validation, unevaluated, format, content, meta-data)
# and the older drafts' spellings: each is a fine name for a parameter.
KEYWORDS = [
    "$anchor",
    "$comment",
    "$defs",
    "$dynamicAnchor",
    "$dynamicRef",
    "$id",
    "$ref",
    "$schema",
    "$vocabulary",
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "const",
    "contains",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "default",
    "definitions",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "deprecated",
    "description",
    "else",
    "enum",
    "examples",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "if",
    "items",
    "maxContains",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minContains",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "prefixItems",
    "properties",
    "propertyNames",
    "readOnly",
    "required",
    "then",
    "title",
    "type",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems",
    "writeOnly",
]


def _spec(keyword: str) -> dict[str, Any]:
    return {"type": "string", "description": f"the {keyword}"}


def _map(keywords: list[str]) -> dict[str, Any]:
    return {keyword: _spec(keyword) for keyword in keywords}


def _required(keywords: list[str]) -> list[str]:
    return [keyword for keyword in ("type", "items") if keyword in keywords]


# One tool per dialect `normalize: [shapes]` reads, its parameters named `keywords`, `required` of them required.
DIALECTS: dict[str, Callable[[str, list[str]], dict[str, Any]]] = {
    "seal-tools parameter map": lambda name, keywords: {
        "api_name": name,
        "api_description": "d",
        "parameters": _map(keywords),
        "required": _required(keywords),
    },
    "function declaration with a parameter map": lambda name, keywords: {
        "name": name,
        "description": "d",
        "parameters": {k: {**_spec(k), **({"required": True} if k in _required(keywords) else {})} for k in keywords},
    },
    "nestful query_parameters": lambda name, keywords: {
        "name": name,
        "description": "d",
        "query_parameters": {k: {**_spec(k), "required": k in ("type", "items")} for k in keywords},
    },
    "path_parameters": lambda name, keywords: {
        "name": name,
        "path_parameters": _map(keywords),
        "required": _required(keywords),
    },
    "arguments map": lambda name, keywords: {
        "name": name,
        "description": "d",
        "arguments": _map(keywords),
        "required": _required(keywords),
    },
    "docker arguments list": lambda name, keywords: {
        "name": name,
        "description": "d",
        "arguments": [
            {"name": k, "type": "string", "desc": "d", **({} if k in ("type", "items") else {"optional": True})}
            for k in keywords
        ],
    },
    "taskweaver parameters list": lambda name, keywords: {
        "name": name,
        "description": "d",
        "parameters": [
            {"name": k, "type": "string", "description": "d", "required": k in ("type", "items")} for k in keywords
        ],
    },
    "toolbench required/optional lists": lambda name, keywords: {
        "api_name": name,
        "api_description": "d",
        "required_parameters": [{"name": k, "type": "STRING"} for k in keywords if k in ("type", "items")],
        "optional_parameters": [{"name": k, "type": "STRING"} for k in keywords if k not in ("type", "items")],
    },
    "acebench arguments schema": lambda name, keywords: {
        "name": name,
        "description": "d",
        "arguments": {"type": "dict", "properties": _map(keywords), "required": _required(keywords)},
    },
}


@pytest.fixture
def load_package() -> Iterator[Callable[[Project], ModuleType]]:
    added: list[str] = []

    def load(project: Project) -> ModuleType:
        sys.path.insert(0, str(project.root / "generated"))
        added.append(str(project.root / "generated"))
        return importlib.import_module(project.package)

    yield load
    for path in added:
        sys.path.remove(path)
    for name in [m for m in sys.modules if m.startswith("dialects_t_")]:
        del sys.modules[name]


def _project(make_project: Callable[..., Project], tools: list[dict[str, Any]], package: str = "sdk") -> Project:
    project = make_project(package)
    project.write("schemas/tools.json", json.dumps(tools))
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text() + "normalize: [shapes, types]\n")
    return project


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_parameters_named_after_every_keyword_stay_parameters(
    dialect: str, make_project: Callable[..., Project]
) -> None:
    # All keywords as one tool's parameters, and each keyword alone as another tool's only parameter.
    tools = [DIALECTS[dialect]("every_keyword", KEYWORDS)]
    tools += [DIALECTS[dialect](f"only_{index}", [keyword]) for index, keyword in enumerate(KEYWORDS)]
    project = _project(make_project, tools)
    exported, warnings = toolgen.export(project.root, provider="mcp")
    assert not [w for w in warnings if w.severity.value == "error"]
    schemas = {tool["name"]: tool["inputSchema"] for tool in exported.tools}
    every = schemas["every_keyword"]
    assert every["type"] == "object" and sorted(every["properties"]) == sorted(KEYWORDS), dialect
    assert sorted(every.get("required", [])) == ["items", "type"], dialect
    for index, keyword in enumerate(KEYWORDS):
        only = schemas[f"only_{index}"]
        assert only["type"] == "object", (dialect, keyword, only)
        assert only.get("required", []) == _required([keyword]), (dialect, keyword, only)
        assert list(only["properties"]) == [keyword], (dialect, keyword, only)
        assert only["properties"][keyword]["type"] == "string", (dialect, keyword, only)


def test_a_schema_is_still_a_schema() -> None:
    assert is_schema({"type": "object", "properties": {"type": {"type": "string"}, "items": {"type": "array"}}})
    assert is_schema({"properties": {"description": {"type": "string"}}, "required": ["description"]})
    assert is_schema({"properties": {"items": {"type": "array"}}})
    assert not is_schema({"items": {"type": "array", "description": "the items"}})
    assert is_parameter_map({"properties": {"type": "str", "description": "properties of the element"}})
    assert is_parameter_map({"required": {"type": "boolean"}, "type": {"description": "kind"}})
    assert not is_parameter_map({"type": {"type": {"type": "string"}}})
    assert not is_schema({"city": "Boston"}) and not is_parameter_map({"city": "Boston"})


EMPTY: dict[str, dict[str, Any]] = {
    "seal-tools": {"api_name": "no_args_map", "api_description": "d", "parameters": {}, "required": []},
    "arguments": {"name": "no_args_arguments", "description": "d", "arguments": {}},
    "query_parameters": {"name": "no_args_query", "query_parameters": {}},
    "list": {"name": "no_args_list", "description": "d", "arguments": []},
    "toolbench": {"api_name": "no_args_lists", "required_parameters": [], "optional_parameters": []},
}


def test_an_empty_parameter_map_means_no_arguments(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = _project(make_project, list(EMPTY.values()), "dialects_t_empty")
    result = toolgen.build(project.root)
    notes = [w.message for w in result.warnings if w.rule == "normalized-shape"]
    assert sum("a tool without arguments" in note for note in notes) == len(EMPTY), notes
    sdk = load_package(project)
    for tool in EMPTY.values():
        name = tool.get("name") or tool["api_name"]
        assert sdk.TOOLS[name].input_schema == {"type": "object", "properties": {}}
        assert sdk.validate_tool_arguments(name, {}) is not None
        for wrong in (5, '"x"', [1, 2]):
            with pytest.raises(sdk.ToolgenValidationError) as caught:
                sdk.validate_tool_arguments(name, wrong)
            assert [p.pointer for p in caught.value.problems] == [""], (name, wrong)
