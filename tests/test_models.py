"""Generated models and validators: message extensions, formats, regexes, dialects and validation errors."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

import toolgen

from conftest import WEATHER, Project


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
    for name in [m for m in sys.modules if m.startswith("models_t_")]:
        del sys.modules[name]


def test_message_extension_adds_fields_to_every_role(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_ext")
    project.write("schemas/tools.yaml", WEATHER)
    project.write(
        "ext/message.yaml",
        """\
        properties:
          tenant_id: {type: string, description: Which customer the message belongs to.}
          trace: {type: object, properties: {span: {type: string}}, required: [span]}
        required: [tenant_id]
        """,
    )
    (project.root / "toolgen.yaml").write_text(
        (project.root / "toolgen.yaml").read_text() + "extend:\n  message: ext/message.yaml\n"
    )
    toolgen.build(project.root)
    sdk = load_package(project)
    for role, extra in [("system", {}), ("user", {}), ("assistant", {}), ("tool", {"tool_call_id": "c1"})]:
        message = sdk.validate_message({"role": role, "content": "x", "tenantId": "acme", **extra})
        assert message.tenant_id == "acme"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_message({"role": "user", "content": "x", "trace": {}})
    assert {p.pointer for p in caught.value.problems} == {"/tenant_id", "/trace/span"}


def test_message_extension_cannot_redefine_a_canonical_field(make_project: Callable[..., Project]) -> None:
    project = make_project("models_t_clash")
    project.write("ext.yaml", "properties:\n  content: {type: integer}\n")
    (project.root / "toolgen.yaml").write_text(
        (project.root / "toolgen.yaml").read_text() + "extend:\n  message: ext.yaml\n"
    )
    with pytest.raises(toolgen.InvalidInputError) as caught:
        toolgen.build(project.root)
    assert {d.rule for d in caught.value.diagnostics} == {"extend-conflict"}
    assert caught.value.diagnostics[0].format().startswith("ext.yaml:2:3: error extend-conflict")


def test_formats_stay_strings_and_quoted_regexes_compile(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_formats")
    tool = {
        "name": "contact",
        "inputSchema": {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "when": {"type": "string", "format": "date-time"},
                "quoted": {"type": "string", "pattern": "^[a-z'\"\\\\]+$"},
                "ahead": {"type": "string", "pattern": "^(?=.*\\d)\\w+$"},
            },
            "required": ["email"],
        },
    }
    project.write("schemas/tools.json", json.dumps({"tools": [tool]}))
    toolgen.build(project.root)
    sdk = load_package(project)
    args = sdk.validate_tool_arguments(
        "contact", {"email": "not an email", "when": "yesterday", "quoted": "a'b\"c\\", "ahead": "a1"}
    )
    assert args.email == "not an email"  # format is an annotation in 2020-12, not an assertion
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("contact", {"email": "x", "quoted": "A", "ahead": "abc"})
    assert [p.pointer for p in caught.value.problems] == ["/ahead", "/quoted"]


def test_strict_types_reject_what_json_schema_rejects(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_strict")
    project.write(
        "schemas/tools.yaml",
        """\
        tools:
          - name: count
            inputSchema:
              type: object
              properties:
                n: {type: integer}
                ratio: {type: number}
                flag: {type: boolean}
              required: [n]
        """,
    )
    toolgen.build(project.root)
    sdk = load_package(project)
    assert sdk.validate_tool_arguments("count", '{"n": 5, "ratio": 1}').ratio == 1
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("count", {"n": "5", "flag": 1, "ratio": "0.5"})
    assert [p.pointer for p in caught.value.problems] == ["/flag", "/n", "/ratio"]


def test_one_error_per_problem_with_pointer_through_the_role_union(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_union")
    project.write("schemas/tools.yaml", WEATHER)
    toolgen.build(project.root)
    sdk = load_package(project)
    bad = {
        "role": "assistant",
        "content": 5,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
    }
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_message(bad)
    problems = {p.pointer: p.message for p in caught.value.problems}
    assert set(problems) == {"/content", "/tool_calls/0/function/arguments"}
    assert problems["/tool_calls/0/function/arguments"] == "is required but missing"
    assert "none of the allowed forms" in problems["/content"]
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_messages([{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}])
    assert [p.pointer for p in caught.value.problems] == ["/1/role"]
    assert "'system', 'user', 'assistant', 'tool'" in caught.value.problems[0].message


def test_dialect_shapes_build_only_when_asked(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    tools = [
        {
            "api_name": "getWeather",
            "api_description": "Weather.",
            "parameters": {"city": {"type": "str", "description": "City"}, "type": {"type": "str"}},
            "required": ["city"],
            "responses": {"temp": {"type": "float"}},
        },
        {
            "name": "list_pods",
            "description": "Pods.",
            "arguments": [
                {"name": "namespace", "type": "string", "desc": "ns"},
                {"name": "limit", "type": "number", "optional": True},
            ],
        },
        {
            "name": "search",
            "arguments": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            "results": {"type": "object", "properties": {"hits": {"type": "integer"}}},
        },
        {
            "tool_name": "t",
            "api_name": "lookup",
            "api_description": "d",
            "required_parameters": [{"name": "id", "type": "STRING"}],
            "optional_parameters": [{"name": "lang", "type": "STRING", "default": "en"}],
        },
    ]
    project = make_project("models_t_dialects")
    project.write("schemas/tools.json", json.dumps(tools))
    with pytest.raises(toolgen.InvalidInputError) as caught:
        toolgen.build(project.root)
    assert [d.rule for d in caught.value.diagnostics] == ["tool-dialect"] * 4
    assert all("normalize: [shapes]" in d.message for d in caught.value.diagnostics)
    (project.root / "toolgen.yaml").write_text(
        (project.root / "toolgen.yaml").read_text() + "normalize: [shapes, types]\n"
    )
    result = toolgen.build(project.root)
    assert sorted(d.rule for d in result.warnings if d.rule == "normalized-shape") == ["normalized-shape"] * 4
    sdk = load_package(project)
    assert sorted(sdk.TOOLS) == ["getWeather", "list_pods", "lookup", "search"]
    assert sdk.TOOLS["getWeather"].input_schema["required"] == ["city"]
    assert sdk.TOOLS["list_pods"].input_schema["required"] == ["namespace"]
    assert sdk.TOOLS["lookup"].input_schema["required"] == ["id"]
    assert sdk.TOOLS["search"].result_model is not None
    with pytest.raises(sdk.ToolgenValidationError):
        sdk.validate_tool_arguments("getWeather", {"type": "x"})
    assert sdk.validate_tool_arguments("list_pods", {"namespace": "a", "limit": 2.5}).limit == 2.5
