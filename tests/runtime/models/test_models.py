"""Generated models and validators: message extensions, formats, regexes, dialects and validation errors."""

from __future__ import annotations

import ast
import importlib
import json
import sys
import typing
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from support.projects import REPO_ROOT, WEATHER, Project

import toolgen


def models_source(package_dir: Path) -> str:
    """models.py and the modules of each tool's models after it, as one text: every model the package defines."""
    modules = [package_dir / "models.py", *sorted((package_dir / "_tool_models").glob("*.py"))]
    return "\n".join(path.read_text(encoding="utf-8") for path in modules)


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


CONTACT = {
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

# Tools with names of their own whose tests only validate values against the built package: built together,
# once for this module, each test reading its own tool.
SHARED_SCHEMAS = {
    "schemas/formats.json": json.dumps({"tools": [CONTACT]}),
    "schemas/strict.yaml": """\
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
    "schemas/weather.yaml": WEATHER,
    "schemas/results.yaml": """\
        tools:
          - name: say
            inputSchema: {type: object}
            outputSchema: {type: string}
          - name: counts
            inputSchema: {type: object}
            outputSchema: {type: array, items: {type: integer}}
        """,
    "schemas/tools.yaml": """\
        $defs:
          A: {type: object, properties: {kind: {const: a}}, required: [kind]}
          B: {type: object, properties: {kind: {const: b}}, required: [kind]}
        tools:
          - name: tool
            inputSchema: {type: object}
            outputSchema: {oneOf: [{$ref: "tools.yaml#/$defs/A"}, {$ref: "tools.yaml#/$defs/B"}]}
        """,
    "schemas/null.yaml": """\
        tools:
          - name: n
            inputSchema:
              type: object
              properties:
                plain: {type: string}
                nullable: {type: [string, "null"]}
                untyped: {description: anything at all}
                nested: {type: object, properties: {deep: {type: integer}}}
        """,
    "schemas/union_limits.yaml": """\
        tools:
          - name: pick
            inputSchema:
              type: object
              properties:
                a: {type: [string, integer], minLength: 3, maximum: 5}
        """,
    "schemas/untyped.yaml": """\
        tools:
          - name: lookup
            inputSchema:
              properties: {city: {type: string}}
              required: [city]
        """,
    "schemas/underscores.yaml": """\
        tools:
          - name: ids
            inputSchema:
              type: object
              properties: {_id: {type: integer}, Id: {type: integer}, type_: {type: string}, type: {type: string}}
              required: [_id, type_]
        """,
    "schemas/huge.yaml": """\
        tools:
          - name: nums
            inputSchema: {type: object, properties: {x: {type: number}}, minProperties: 1}
        """,
    "schemas/closed_draft.yaml": """\
        tools:
          - name: closed
            inputSchema:
              type: object
              properties:
                m:
                  type: object
                  patternProperties: {"^a": {type: integer}, "^b": {type: string}}
                  additionalProperties: false
          - name: old
            inputSchema:
              $schema: "http://json-schema.org/draft-07/schema#"
              type: object
              properties: {a: {type: string}, b: {type: string}}
              dependencies: {a: {properties: {b: {minLength: 3}}}}
        """,
    "schemas/false_places.yaml": """\
        tools:
          - name: strict
            inputSchema:
              type: object
              properties: {a: {type: integer}, old: false}
              patternProperties: {"^x-": {type: string}}
              additionalProperties: false
              minProperties: 1
        """,
    "schemas/unfit_default.yaml": """\
        tools:
          - name: bad
            inputSchema:
              type: object
              properties:
                m: {type: object, additionalProperties: {type: integer}, default: {a: x}}
        """,
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """One project holding every tool of SHARED_SCHEMAS, built once for this module."""
    project = Project(tmp_path_factory.mktemp("models"), "models_t_shared")
    for relative, text in SHARED_SCHEMAS.items():
        project.write(relative, text)
    toolgen.build(project.root)
    return project


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
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    args = sdk.validate_tool_arguments(
        "contact", {"email": "not an email", "when": "yesterday", "quoted": "a'b\"c\\", "ahead": "a1"}
    )
    assert args.email == "not an email"  # format is an annotation in 2020-12, not an assertion
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("contact", {"email": "x", "quoted": "A", "ahead": "abc"})
    assert [p.pointer for p in caught.value.problems] == ["/ahead", "/quoted"]


def test_strict_types_reject_what_json_schema_rejects(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    assert sdk.validate_tool_arguments("count", '{"n": 5, "ratio": 1}').ratio == 1
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("count", {"n": "5", "flag": 1, "ratio": "0.5"})
    assert [p.pointer for p in caught.value.problems] == ["/flag", "/n", "/ratio"]


def test_one_error_per_problem_with_pointer_through_the_role_union(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    bad = {
        "role": "assistant",
        "content": 5,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
    }
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_message(bad)
    problems = {p.pointer: p.message for p in caught.value.problems}
    assert set(problems) == {"/content", "/tool_calls/0/function/arguments"}
    assert problems["/tool_calls/0/function/arguments"] == "expected a value (it is required), got nothing"
    assert problems["/content"] == "expected a string or an array, got 5"
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


def test_results_are_python_data_and_root_models_are_strict(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    assert sdk.validate_tool_result("say", "plain text, not JSON").root == "plain text, not JSON"
    assert sdk.validate_tool_result("counts", [1, 2]).root == (1, 2)
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_result("counts", ["5", True])
    assert [p.pointer for p in caught.value.problems] == ["/0", "/1"]
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("say", b"\xff")
    assert "not UTF-8" in caught.value.problems[0].message


def test_a_user_union_named_like_a_validator_does_not_clash(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    assert sdk.validate_tool_result("tool", {"kind": "b"}).root.kind == "b"
    source = (shared.package_dir / "validators.py").read_text()
    assert source.count("def validate_tool_result(") == 1


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


def test_optional_fields_refuse_null_unless_the_schema_allows_it(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    assert sdk.validate_tool_arguments("n", {"nullable": None, "untyped": None}).nullable is None
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("n", {"plain": None, "nested": {"deep": None}})
    assert [p.pointer for p in caught.value.problems] == ["/nested/deep", "/plain"]
    assert all(
        p.message == "expected a value other than null (leave the field out instead), got null"
        for p in caught.value.problems
    )
    assert "x-toolgen-not-null" not in json.dumps(sdk.TOOLS["n"].args_model.model_json_schema())
    # canonical messages come from provider payloads, which write absent fields as null
    assert sdk.validate_message({"role": "assistant", "content": None, "tool_calls": None}).tool_calls is None


def test_limits_inside_a_type_union_apply_to_their_own_type(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    assert sdk.validate_tool_arguments("pick", {"a": "abcd"}).a == "abcd"
    assert sdk.validate_tool_arguments("pick", {"a": 4}).a == 4
    for bad in ("ab", 9, 4.5):
        with pytest.raises(sdk.ToolgenValidationError):
            sdk.validate_tool_arguments("pick", {"a": bad})


def test_a_value_the_schema_accepts_but_the_model_cannot_hold_is_valid_and_dispatch_refuses_it(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    # `properties` without `type`: JSON Schema accepts any non-object; the args model is an object model.
    sdk = load_package(shared)
    assert sdk.validate_tool_arguments("lookup", "12") == 12
    assert sdk.validate_tool_arguments("lookup", ["a"]) == ["a"]
    assert sdk.validate_tool_arguments("lookup", {"city": "Oslo"}).city == "Oslo"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("lookup", {"city": 5})
    assert [p.pointer for p in caught.value.problems] == ["/city"]
    tools = sdk.Tools()
    tools.lookup.handler(lambda args, ctx: args.city)
    outcome = tools.dispatch({"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "12"}})
    assert outcome.error is not None and outcome.error.kind == "invalid_arguments"
    assert "LookupArgs, which the handler takes" in outcome.content
    ok = tools.dispatch(
        {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'}}
    )
    assert not ok.is_error and "Oslo" in ok.content


def test_union_fields_hold_the_member_models_themselves() -> None:
    sys.path.insert(0, str(REPO_ROOT / "generated"))
    try:
        sdk = importlib.import_module("toolgen_sdk")
        message = sdk.validate_message({"role": "user", "content": [{"type": "text", "text": "hi"}]})
        assert isinstance(message.content[0], sdk.TextPart) and message.content[0].text == "hi"
        conversation = sdk.validate_messages([{"role": "system", "content": "be brief"}])
        assert isinstance(conversation[0], sdk.SystemMessage)
        with pytest.raises(sdk.ToolgenValidationError) as caught:
            sdk.validate_message({"role": "user", "content": [{"type": "text"}]})
        assert [(p.pointer, p.message) for p in caught.value.problems] == [
            ("/content/0/text", "expected a value (it is required), got nothing")
        ]
    finally:
        sys.path.remove(str(REPO_ROOT / "generated"))


def test_a_union_told_apart_by_a_property_that_is_not_a_python_name(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_hyphen_union")
    project.write(
        "schemas/tools.yaml",
        """\
        tools:
          - name: pick
            inputSchema:
              type: object
              properties:
                pet: {$ref: "#/$defs/Pet"}
              required: [pet]
              $defs:
                Pet: {oneOf: [{$ref: "#/$defs/Cat"}, {$ref: "#/$defs/Dog"}]}
                Cat:
                  type: object
                  properties: {pet-type: {const: cat}, lives: {type: integer}}
                  required: [pet-type]
                Dog:
                  type: object
                  properties: {pet-type: {const: dog}, bark: {type: boolean}}
                  required: [pet-type]
        """,
    )
    toolgen.build(project.root)
    sdk = load_package(project)
    args = sdk.validate_tool_arguments("pick", {"pet": {"pet-type": "dog", "bark": True}})
    assert type(args.pet).__name__ == "Dog" and args.pet.bark is True
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("pick", {"pet": {"pet-type": "cow"}})
    assert [p.pointer for p in caught.value.problems] == ["/pet/pet-type"]


def test_missing_fields_with_underscores_are_reported_under_their_own_names(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("ids", {"Id": 1, "type": "a"})
    assert sorted(p.pointer for p in caught.value.problems) == ["/_id", "/type_"]
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("ids", '{"_id": Infinity, "type_": "a"}')
    # Infinity is not JSON: the parse refuses it where it stands, before the model sees it.
    assert caught.value.problems[0].pointer == "/_id"
    assert "is Infinity, which JSON does not allow" in caught.value.problems[0].message


def test_an_object_the_schema_accepts_and_the_model_cannot_hold_names_the_place_at_dispatch(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    huge = '{"x": 1' + "0" * 400 + "}"  # a JSON number; no float holds it
    assert sdk.validate_tool_arguments("nums", huge) == {"x": 10**400}
    tools = sdk.Tools()
    tools.nums.handler(lambda args, ctx: args.x)
    outcome = tools.dispatch({"id": "c1", "type": "function", "function": {"name": "nums", "arguments": huge}})
    assert outcome.error is not None and outcome.error.kind == "invalid_arguments"
    [problem] = outcome.error.problems
    assert problem.pointer == "/x" and "NumsArgs, which the handler takes, cannot hold it" in problem.message


def test_union_aliases_carry_no_field_only_arguments_and_tags_read_as_json(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_union_extras")
    project.write(
        "schemas/tools.yaml",
        """\
        tools:
          - name: pick
            inputSchema:
              type: object
              properties:
                z: {$ref: "#/$defs/Zed"}
              $defs:
                Zed: {default: {a|b: one}, deprecated: true, oneOf: [{$ref: "#/$defs/Z1"}, {$ref: "#/$defs/Z2"}]}
                Z1: {type: object, properties: {a|b: {const: one}}, required: [a|b]}
                Z2: {type: object, properties: {a|b: {const: two}}, required: [a|b]}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.root / "generated" / "models_t_union_extras")
    alias = source[source.index("Zed: TypeAlias") :].split("\n\n")[0]
    assert "validate_default" not in alias and "deprecated" not in alias and 'discriminator="a_b"' in alias
    sdk = load_package(project)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sdk.validate_tool_arguments("pick", {"z": {"a|b": "two"}}).z is not None
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("pick", {"z": {"a|b": None}})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/z/a|b", "expected one of 'one', 'two', got null")
    ]


def test_a_closed_object_with_two_key_patterns_and_a_draft_07_tool(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    sdk = load_package(shared)
    assert sdk.validate_tool_arguments("closed", {"m": {"a1": 1, "b1": "x"}}).m == {"a1": 1, "b1": "x"}
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("closed", {"m": {"c": 1}})
    assert [p.pointer for p in caught.value.problems] == ["/m/c"]
    assert sdk.validate_tool_arguments("old", {"a": "q", "b": "abc"}).b == "abc"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("old", {"a": "q", "b": "ab"})
    assert [p.pointer for p in caught.value.problems] == ["/b"]


def test_properties_a_false_schema_refuses_are_reported_where_they_are(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    # minProperties puts the tool under the JSON Schema check, whose own reports of `false` name no place.
    sdk = load_package(shared)
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("strict", {"a": 1, "old": 2, "extra": 3, "x-ok": "y"})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/extra", "expected no value here (not an allowed field), got 3"),
        ("/old", "expected no value here (not an allowed field), got 2"),
    ]


def test_a_default_that_does_not_fit_its_schema_is_kept_as_written(
    shared: Project, load_package: Callable[[Project], ModuleType]
) -> None:
    # JSON Schema does not require a default to be valid; the model keeps it rather than failing without it.
    sdk = load_package(shared)
    args = sdk.validate_tool_arguments("bad", "{}")
    assert type(args).__name__ == "BadArgs" and args.m == {"a": "x"}


def test_false_keeps_the_json_schema_sentences_that_name_the_key() -> None:
    from toolgen.runtime.models.check import schema_problems, schema_validator

    def problems(schema: dict[str, object], data: object) -> list[tuple[str, str]]:
        return [(p.pointer, p.message) for p in schema_problems(schema_validator(schema), data)]

    assert problems({"propertyNames": False}, {"a": 1}) == [("", "False schema does not allow 'a'")]
    [(pointer, message)] = problems({"unevaluatedProperties": False}, {"z": 1})
    assert pointer == "" and "'z' was unexpected" in message
    assert problems({"items": False}, [1]) == [("/0", "expected no value here, got 1")]


def test_a_field_with_a_default_is_typed_without_none_unless_its_schema_allows_null(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_defaults")
    project.write(
        "schemas/tools.yaml",
        """\
        $defs:
          Color: {enum: [red, green]}
          Box: {type: object, properties: {side: {type: integer}}}
        tools:
          - name: d
            inputSchema:
              type: object
              properties:
                unit: {type: string, enum: [celsius, fahrenheit], default: celsius}
                color: {$ref: "tools.yaml#/$defs/Color", default: green}
                text: {type: string, default: hi}
                count: {type: integer, minimum: 0, default: 3}
                ratio: {type: number, default: 0.5}
                flag: {type: boolean, default: false}
                tags: {type: array, items: {type: string}, default: [a]}
                opts: {type: object, default: {}}
                box: {$ref: "tools.yaml#/$defs/Box", default: {side: 2}}
                maybe: {type: [string, "null"], default: x}
                none: {$ref: "tools.yaml#/$defs/Box", default: null}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.package_dir)
    for line in (
        'unit: Literal["celsius", "fahrenheit"] = "celsius"',
        'color: Color = "green"',
        'text: str = "hi"',
        "count: Annotated[int, Field(ge=0)] = 3",
        "ratio: float = 0.5",
        "flag: bool = False",
        'tags: FrozenList[str] = Field(default=["a"])',
        "opts: FrozenMap[str, FrozenAny] = Field(default={})",
        'maybe: str | None = "x"',
        "none: Box | None = None",
    ):
        assert f"\n    {line}\n" in source, line
    sdk = load_package(project)
    assert sdk.TOOLS["d"].check_input is False  # the models alone decide
    args = sdk.validate_tool_arguments("d", {})
    assert (args.unit, args.color, args.text, args.count, args.ratio, args.flag) == (
        "celsius",
        "green",
        "hi",
        3,
        0.5,
        False,
    )
    assert (args.tags, args.opts, args.box.side, args.maybe, args.none) == (("a",), {}, 2, "x", None)
    assert sdk.validate_tool_arguments("d", {"maybe": None}).maybe is None
    nulls = {key: None for key in ("unit", "color", "text", "count", "ratio", "flag", "tags", "opts", "box", "none")}
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("d", nulls)
    assert sorted(p.pointer for p in caught.value.problems) == sorted(f"/{key}" for key in nulls)
    assert all(p.message.endswith(", got null") for p in caught.value.problems)
    # The canonical tool definition's flags have defaults too.
    definition = sdk.validate_tool_definition({"name": "t", "inputSchema": {}})
    assert definition.return_direct is False and definition.requires_approval is False


def test_null_is_refused_where_a_reference_an_enum_or_every_branch_refuses_it(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_null_refs")
    project.write(
        "schemas/tools.yaml",
        """\
        $defs:
          Color: {enum: [red, green]}
          Box: {type: object, properties: {side: {type: integer}}}
          Alias: {$ref: "tools.yaml#/$defs/Box"}
          MaybeBox: {type: [object, "null"], properties: {side: {type: integer}}}
        tools:
          - name: n
            inputSchema:
              type: object
              properties:
                color: {$ref: "tools.yaml#/$defs/Color"}
                box: {$ref: "tools.yaml#/$defs/Box"}
                alias: {$ref: "tools.yaml#/$defs/Alias"}
                pick: {enum: [a, b]}
                either: {anyOf: [{type: string}, {type: integer}]}
                maybe_box: {$ref: "tools.yaml#/$defs/MaybeBox"}
                either_or_null: {anyOf: [{type: string}, {type: "null"}]}
                anything: {}
          - name: legacy
            inputSchema: {type: object, properties: {legacy: {type: string, nullable: true}}}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.package_dir)
    # `nullable` is OpenAPI's: JSON Schema reads it as nothing, and so do the models.
    assert "\n    legacy: str | None = None\n" in source
    sdk = load_package(project)
    assert sdk.TOOLS["n"].check_input is False  # the models alone decide
    refused = ("color", "box", "alias", "pick", "either")
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("n", dict.fromkeys(refused))
    assert sorted(p.pointer for p in caught.value.problems) == sorted(f"/{key}" for key in refused)
    assert all(
        p.message == "expected a value other than null (leave the field out instead), got null"
        for p in caught.value.problems
    )
    allowed = sdk.validate_tool_arguments("n", dict.fromkeys(("maybe_box", "either_or_null", "anything")))
    assert (allowed.maybe_box, allowed.either_or_null, allowed.anything) == (None, None, None)
    assert sdk.validate_tool_arguments("n", {"color": "red", "box": {"side": 1}}).color == "red"
    with pytest.raises(sdk.ToolgenValidationError):
        sdk.validate_tool_arguments("legacy", {"legacy": None})


def test_named_enums_are_literal_aliases_and_a_tool_result_stays_a_model(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_enum_alias")
    nasty = "Say \"hi\" \\\\ or '''bye''' \"\"\" done"
    project.write(
        "schemas/tools.yaml",
        f"""\
        $defs:
          Color: {{enum: [red, green], description: {json.dumps(nasty)}}}
          Level: {{enum: [1, 2, 3]}}
          Kind: {{const: only}}
          Colors: {{type: array, items: {{$ref: "tools.yaml#/$defs/Color"}}}}
        tools:
          - name: paint
            inputSchema:
              type: object
              properties:
                color: {{$ref: "tools.yaml#/$defs/Color"}}
                level: {{$ref: "tools.yaml#/$defs/Level", default: 2}}
                kind: {{$ref: "tools.yaml#/$defs/Kind"}}
                more: {{$ref: "tools.yaml#/$defs/Colors", default: [red]}}
              required: [color]
            outputSchema: {{$ref: "tools.yaml#/$defs/Color"}}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.package_dir)
    tree = ast.parse(source)
    aliases = {
        node.target.id: (ast.unparse(node.value), tree.body[index + 1])
        for index, node in enumerate(tree.body)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    assert aliases["Color"][0] == "Literal['red', 'green']"
    assert aliases["Level"][0] == "Literal[1, 2, 3]" and aliases["Kind"][0] == "Literal['only']"
    docstring = aliases["Color"][1]
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    assert docstring.value.value == nasty
    assert "class Colors(DeferredRootModel[FrozenList[Color]])" in source
    assert "class PaintResult(DeferredRootModel[Color])" in source
    assert "    level: Level = 2\n" in source
    sdk = load_package(project)
    models = importlib.import_module("models_t_enum_alias.models")
    assert typing.get_args(models.Color) == ("red", "green") and not isinstance(models.Color, type)
    args = sdk.validate_tool_arguments("paint", {"color": "green", "kind": "only"})
    assert (args.color, args.level, args.kind, args.more.root) == ("green", 2, "only", ("red",))
    assert args.color == "green"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("paint", {"color": "blue", "level": 5})
    assert [p.pointer for p in caught.value.problems] == ["/color", "/level"]
    result = sdk.validate_tool_result("paint", "red")
    assert type(result).__name__ == "PaintResult" and result.root == "red"
