"""A composition at an input schema's root, which OpenAI and Anthropic refuse there: export merges it, notes, lint warns.

OpenAI (Chat and Responses): "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at
the top level". Anthropic: "input_schema does not support oneOf, allOf, or anyOf at the top level" (Bedrock hands
Claude the schema as it is).
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from support.projects import Project

import toolgen
from toolgen.runtime.wires.export import export_tools

ROOT_ANY: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
    "anyOf": [{"required": ["title"]}, {"required": ["body"]}],
}
ROOT_ONE: dict[str, Any] = {
    "oneOf": [
        {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
    ]
}
TAGGED: dict[str, Any] = {
    "type": "object",
    "oneOf": [{"$ref": "#/$defs/ById"}, {"$ref": "#/$defs/ByUrl"}],
    "$defs": {
        "ById": {
            "type": "object",
            "properties": {"kind": {"const": "id"}, "id": {"type": "integer"}},
            "required": ["kind", "id"],
        },
        "ByUrl": {
            "type": "object",
            "properties": {"kind": {"const": "url"}, "url": {"type": "string"}},
            "required": ["kind", "url"],
        },
    },
}
ALL: dict[str, Any] = {
    "allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
    ]
}
MERGED = (
    "root {key} of 2 branches merged into one object (the provider refuses {key} at the root): properties united, "
    "required only where every branch requires it; the provider and the model no longer see what else the branches "
    "say, toolgen's check of the arguments still applies it"
)
ADDED = "{name}: input schema root has no `type: object`; it was added"
REFUSING = ("anthropic", "bedrock-converse", "openai-chat", "openai-chat-camel", "openai-responses")


def _schema(provider: str, entry: dict[str, Any]) -> dict[str, Any]:
    if provider == "anthropic":
        return entry["input_schema"]
    if provider == "bedrock-converse":
        return entry["toolSpec"]["inputSchema"]["json"]
    return entry["function"]["parameters"] if "function" in entry else entry["parameters"]


@pytest.mark.parametrize("provider", REFUSING)
def test_a_root_anyof_or_oneof_is_merged_into_one_object_with_a_note(provider: str) -> None:
    tools = [{"name": "edit", "inputSchema": ROOT_ANY}, {"name": "fetch", "inputSchema": ROOT_ONE}]
    result = export_tools(tools, provider)
    edit, fetch = (_schema(provider, entry) for entry in result.tools)
    # Neither branch requires both names, so neither is required; the properties stay as the root had them.
    assert edit == {"type": "object", "properties": ROOT_ANY["properties"]}
    assert fetch == {"type": "object", "properties": {"id": {"type": "integer"}, "url": {"type": "string"}}}
    assert list(result.notes) == [
        f"edit: /: {MERGED.format(key='anyOf')}",
        ADDED.format(name="fetch"),
        f"fetch: /: {MERGED.format(key='oneOf')}",
    ]
    # The merge only loosens: whatever the source accepts, the exported schema accepts.
    for instance in ({"title": "t"}, {"body": "b"}, {"title": "t", "body": "b"}):
        jsonschema.validate(instance, edit)
    for instance in ({"id": 1}, {"url": "u"}):
        jsonschema.validate(instance, fetch)


def test_branches_naming_one_property_differently_keep_each_alternative_and_what_all_require() -> None:
    (entry,) = export_tools([{"name": "get", "inputSchema": TAGGED}], "anthropic").tools
    schema = entry["input_schema"]
    assert schema["properties"] == {
        "kind": {"anyOf": [{"const": "id"}, {"const": "url"}]},
        "id": {"type": "integer"},
        "url": {"type": "string"},
    }
    assert schema["required"] == ["kind"]
    assert "oneOf" not in schema and schema["$defs"] == TAGGED["$defs"]
    jsonschema.validate({"kind": "url", "url": "u"}, schema)


def test_a_root_allof_unites_properties_and_required() -> None:
    result = export_tools([{"name": "both", "inputSchema": ALL}], "openai")
    schema = result.tools[0]["function"]["parameters"]
    assert schema == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    assert result.notes[-1] == (
        "both: /: root allOf of 2 branches merged into one object (the provider refuses allOf at the root): "
        "properties and required united; the provider and the model no longer see what else the branches say, "
        "toolgen's check of the arguments still applies it"
    )


def test_openai_refuses_enum_and_not_at_the_root_too_anthropic_only_the_three_compositions() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "not": {"required": ["a"]}}
    tool = {"name": "nope", "inputSchema": schema}
    openai = export_tools([tool], "openai")
    assert openai.tools[0]["function"]["parameters"] == {"type": "object", "properties": {"a": {"type": "string"}}}
    assert openai.notes == (
        "nope: /: root not not sent (the provider refuses it at the root); toolgen's check of the arguments still "
        "applies it",
    )
    anthropic = export_tools([tool], "anthropic")
    assert anthropic.tools[0]["input_schema"] == schema and anthropic.notes == ()


def test_formats_with_no_documented_root_limit_send_the_schema_as_written() -> None:
    tool = {"name": "edit", "inputSchema": ROOT_ANY}
    for provider in ("mistral", "ollama", "cohere", "mcp"):
        result = export_tools([tool], provider)
        (entry,) = result.tools
        sent = entry.get("inputSchema") or entry["function"]["parameters"]
        assert sent == ROOT_ANY and result.notes == (), provider
    declaration = export_tools([tool], "gemini").tools[0]["functionDeclarations"][0]
    assert declaration["parametersJsonSchema"] == ROOT_ANY


def test_strict_mode_merges_the_root_first_then_makes_it_strict() -> None:
    result = export_tools([{"name": "fetch", "inputSchema": copy.deepcopy(ROOT_ONE), "strict": True}], "openai")
    function = result.tools[0]["function"]
    assert function["strict"] is True
    assert function["parameters"] == {
        "type": "object",
        "properties": {"id": {"type": ["integer", "null"]}, "url": {"type": ["string", "null"]}},
        "additionalProperties": False,
        "required": ["id", "url"],
    }
    assert list(result.notes) == [
        ADDED.format(name="fetch"),
        f"fetch: /: {MERGED.format(key='oneOf')}",
        "fetch: /: additionalProperties: false added",
        "fetch: /: optional id, url made required and nullable (null means absent)",
    ]


LINTED = """\
tools:
  - name: edit
    description: Edit a note; at least one field.
    inputSchema:
      type: object
      properties:
        title: {type: string}
        body: {type: string}
      anyOf:
        - required: [title]
        - required: [body]
  - name: fetch
    description: By id or by url.
    strict: true
    inputSchema:
      type: object
      oneOf:
        - {type: object, properties: {id: {type: integer}}, required: [id]}
        - {type: object, properties: {url: {type: string}}, required: [url]}
"""


def test_lint_warns_of_the_merge_for_each_provider_that_refuses_the_root(project: Project) -> None:
    project.write("schemas/root.yaml", LINTED)
    findings = toolgen.lint(project.root, providers=("anthropic", "openai", "mistral"))
    root = sorted((f.line, f.col, f.severity.value, f.message) for f in findings if f.rule == "root-composition")
    any_text = MERGED.format(key="anyOf")
    one_text = MERGED.format(key="oneOf")
    # Anthropic and OpenAI say the same of each: one finding names them both.
    assert root == [
        (9, 7, "warning", f"[anthropic, openai-chat] export rewrites this: {any_text}"),
        (17, 7, "warning", f"[anthropic, openai-chat] export rewrites this: {one_text}"),
    ]
    # The strict tool's other rewrites are strict mode's own; the merge is not said again for strict mode.
    strict = sorted((f.rule, f.severity.value) for f in findings if f.message.startswith("[openai-chat]"))
    assert strict == [("openai-strict-additional-properties", "warning"), ("openai-strict-required", "warning")]
