"""Building models: message extensions, dialect shapes, inputs outside the project, and the inputs a build refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from support.projects import WEATHER, Project

import toolgen


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


def test_inputs_outside_the_project_and_broad_globs(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "weather.yaml").write_text(WEATHER)
    root = tmp_path / "project"
    (root / "schemas" / "common").mkdir(parents=True)
    (root / "schemas" / "common" / "defs.yaml").write_text("$defs:\n  Unit: {enum: [c, f]}\n")
    (root / "toolgen.yaml").write_text(
        "version: v1\npackage: sdk_outside\ninputs: [../shared/*.yaml, '**/*.json', 'schemas/**/*.yaml']\n"
    )
    first = toolgen.build(root)
    second = toolgen.build(root, force=True)
    assert first.written and second.written
    manifest = json.loads((root / "generated" / "sdk_outside" / "toolgen-manifest.json").read_text())
    assert "../shared/weather.yaml" in manifest["inputs"]
    assert all(not key.startswith("/") for key in manifest["inputs"])
    assert toolgen.check(root).ok


@pytest.mark.parametrize(
    ("extension", "rule"),
    [
        ("properties:\n  toolCallId: {type: string}\n", "extend-conflict"),
        ("properties:\n  a: {type: string}\nrequired: 5\n", "schema-invalid"),
        ("properties:\n  a: {type: string}\nrequired: [b]\n", "extend-shape"),
    ],
)
def test_bad_message_extensions_are_diagnosed(make_project: Callable[..., Project], extension: str, rule: str) -> None:
    project = make_project("models_t_badext")
    project.write("ext.yaml", extension)
    (project.root / "toolgen.yaml").write_text(
        (project.root / "toolgen.yaml").read_text() + "extend:\n  message: ext.yaml\n"
    )
    with pytest.raises(toolgen.InvalidInputError) as caught:
        toolgen.build(project.root)
    assert [d.rule for d in caught.value.diagnostics] == [rule]


@pytest.mark.parametrize("package", ["json", "typing", "pydantic", "toolgen"])
def test_a_package_name_that_would_shadow_a_module_is_refused(
    make_project: Callable[..., Project], package: str
) -> None:
    project = make_project(package)
    with pytest.raises(toolgen.InvalidInputError) as caught:
        toolgen.build(project.root)
    assert "would shadow" in caught.value.diagnostics[0].message


def test_a_schema_that_is_only_a_reference_to_itself_is_a_cycle(make_project: Callable[..., Project]) -> None:
    project = make_project("models_t_selfref")
    project.write("schemas/t.yaml", 'tools:\n  - name: a\n    inputSchema: {$ref: "#"}\n')
    with pytest.raises(toolgen.InvalidInputError) as caught:
        toolgen.build(project.root)
    assert [d.rule for d in caught.value.diagnostics] == ["ref-cycle"]
