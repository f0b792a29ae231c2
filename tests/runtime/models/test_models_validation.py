"""Generated validators of one project built for the module: formats, regexes, strict types, nulls, limits, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType

import pytest
from support.projects import WEATHER, Project

import toolgen

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
