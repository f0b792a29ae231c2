"""OpenAI strict mode: a tool goes out strict only with what strict mode supports, and every note tells the truth.

OpenAI Structured Outputs, "Supported schemas": not supported are `allOf`, `not`, `dependentRequired`,
`dependentSchemas`, `if`/`then`/`else`, and the type-specific keywords `patternProperties`,
`unevaluatedProperties`, `propertyNames`, `minProperties`, `maxProperties` (objects), `unevaluatedItems`,
`contains`, `minContains`, `maxContains`, `uniqueItems` (arrays). Every property is required; an optional one is a
union with null. Cohere v2's function is `{name, description, parameters}`: strictness is the request's
`strict_tools`, not a field of the tool.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from support.projects import Project

import toolgen
from toolgen.runtime.schema.fit import Unfit, drop_strict_nulls, strict_rewrites
from toolgen.runtime.wires.export import export_tools

UNSUPPORTED: dict[str, dict[str, Any]] = {
    "uniqueItems": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    "contains": {"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}},
    "minContains": {"type": "array", "items": {"type": "string"}, "minContains": 1},
    "maxContains": {"type": "array", "items": {"type": "string"}, "maxContains": 2},
    "unevaluatedItems": {"type": "array", "prefixItems": [{"type": "string"}], "unevaluatedItems": False},
    "propertyNames": {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "propertyNames": {"pattern": "^[a-z]+$"},
    },
    "patternProperties": {"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^x": {}}},
    "unevaluatedProperties": {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "unevaluatedProperties": False,
    },
    "minProperties": {"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1},
    "maxProperties": {"type": "object", "properties": {"a": {"type": "string"}}, "maxProperties": 1},
    "dependencies": {"type": "object", "properties": {"a": {"type": "string"}}, "dependencies": {"a": ["b"]}},
}


@pytest.mark.parametrize("keyword", list(UNSUPPORTED))
def test_a_keyword_strict_mode_refuses_sends_the_tool_with_strict_false_and_a_note(keyword: str) -> None:
    schema = {"type": "object", "properties": {"x": UNSUPPORTED[keyword]}, "required": ["x"]}
    with pytest.raises(Unfit) as raised:
        strict_rewrites(schema)
    assert (raised.value.pointer, raised.value.rule) == (f"/properties/x/{keyword}", "openai-strict-keyword")
    result = export_tools([{"name": "t", "inputSchema": schema, "strict": True}], "openai")
    function = result.tools[0]["function"]
    assert function["strict"] is False and function["parameters"] == schema
    assert result.notes == (
        f"t: sent with strict: false; strict mode cannot express /properties/x/{keyword}: strict mode does not "
        f"support '{keyword}'",
    )


def test_a_required_name_no_property_lists_is_not_dropped_in_silence() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}
    for provider in ("openai", "openai-responses"):
        result = export_tools([{"name": "t", "inputSchema": schema, "strict": True}], provider)
        (entry,) = result.tools
        function = entry.get("function", entry)
        # Strict mode's closed object could never send b, which the tool requires: not strict, sent as written.
        assert function["strict"] is False and function["parameters"] == schema
        assert result.notes == (
            "t: sent with strict: false; strict mode cannot express /required: required names b, which properties "
            "does not list (strict mode lists every property it may send)",
        )


@pytest.mark.parametrize(
    ("optional", "exported"),
    [
        (
            {"type": ["string", "integer"], "enum": ["fast", 1]},
            {"type": ["string", "integer", "null"], "enum": ["fast", 1, None]},
        ),
        ({"type": "string", "enum": ["a", None]}, {"type": ["string", "null"], "enum": ["a", None]}),
        ({"type": "string", "nullable": True}, {"type": ["string", "null"], "nullable": True}),
        ({"enum": ["a", "b"]}, {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]}),
    ],
)
def test_made_required_and_nullable_means_the_exported_schema_takes_null(
    optional: dict[str, Any], exported: dict[str, Any]
) -> None:
    schema = {"type": "object", "properties": {"mode": optional}}
    result = export_tools([{"name": "t", "inputSchema": schema, "strict": True}], "openai")
    parameters = result.tools[0]["function"]["parameters"]
    assert parameters["properties"]["mode"] == exported
    assert "t: /: optional mode made required and nullable (null means absent)" in result.notes
    jsonschema.Draft202012Validator(parameters).validate({"mode": None})


def test_openapis_nullable_does_not_make_a_strict_null_a_value() -> None:
    # JSON Schema (and the package's check) gives `nullable` no meaning: the null strict mode sends means absent.
    schema = {"type": "object", "properties": {"note": {"type": "string", "nullable": True}}}
    assert drop_strict_nulls({"note": None}, schema) == {}
    assert drop_strict_nulls(
        {"note": None}, {"type": "object", "properties": {"note": {"type": ["string", "null"]}}}
    ) == {"note": None}


STRICT_TOOL: dict[str, Any] = {
    "name": "book",
    "description": "Book a seat.",
    "strict": True,
    "inputSchema": {"type": "object", "properties": {"seat": {"type": "string"}}},
}


def test_cohere_is_sent_its_own_function_shape_without_openais_strict_mode() -> None:
    for tools, strict in (([STRICT_TOOL], False), ([{**STRICT_TOOL, "strict": None}], True)):
        result = export_tools(tools, "cohere", strict=strict)
        assert result.tools == [
            {
                "type": "function",
                "function": {
                    "name": "book",
                    "description": "Book a seat.",
                    "parameters": STRICT_TOOL["inputSchema"],
                },
            }
        ]
        assert result.notes == (
            "book: strict is not sent to cohere (toolgen sends strict mode to the openai formats only)",
        )
    # OpenAI Chat, whose shape Cohere shares, still gets strict mode.
    openai = export_tools([STRICT_TOOL], "openai").tools[0]["function"]
    assert openai["strict"] is True and openai["parameters"]["additionalProperties"] is False


LINTED = """\
tools:
  - name: tagged
    description: Unique tags.
    strict: true
    inputSchema:
      type: object
      properties:
        tags: {type: array, items: {type: string}, uniqueItems: true}
      required: [tags]
  - name: ghost
    description: Requires what it does not list.
    strict: true
    inputSchema:
      type: object
      properties:
        a: {type: string}
      required: [a, b]
"""


def test_lint_errors_where_export_sends_strict_false(project: Project) -> None:
    project.write("schemas/strict.yaml", LINTED)
    findings = toolgen.lint(project.root, providers=("openai", "cohere"))
    assert sorted((f.line, f.col, f.rule, f.severity.value, f.message) for f in findings) == [
        (
            8,
            52,
            "openai-strict-keyword",
            "error",
            "[openai-chat] strict mode cannot express this (strict mode does not support 'uniqueItems'); export "
            "sends the tool with strict: false",
        ),
        (
            17,
            7,
            "openai-strict-required",
            "error",
            "[openai-chat] strict mode cannot express this (required names b, which properties does not list "
            "(strict mode lists every property it may send)); export sends the tool with strict: false",
        ),
    ]


def test_a_request_to_cohere_carries_no_per_function_strict_and_reads_back_the_same() -> None:
    from toolgen.runtime.wires.canonical import Request
    from toolgen.runtime.wires.codecs import decode, encode_request

    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tool = {"name": "get_weather", "description": "weather", "inputSchema": schema, "strict": True}
    body = encode_request(Request([{"role": "user", "content": "hi"}], tools=[tool]), "cohere")
    (function,) = [entry["function"] for entry in body["tools"]]
    assert "strict" not in function and function["parameters"] == schema
    again = decode(body, "cohere", "request")
    assert encode_request(again, "cohere")["tools"] == body["tools"]
