"""Gemini's `parameters` (an OpenAPI subset): no shape it refuses goes out, and what changes is said.

Gemini's Schema: `items` is "Schema of the elements of Type.ARRAY" and an ARRAY without it is refused (`items:
missing field`); `enum` holds the "possible values of the element of Type.STRING" (`enum: only allowed for STRING
type`); a `required` name its properties do not define is refused (`property is not defined`); "for function with
no parameters, this can be left unset". `parametersJsonSchema` takes JSON Schema as written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.projects import Project

import toolgen
from toolgen.runtime.schema.fit import Unfit, gemini_parameters
from toolgen.runtime.wires.export import export_tools

SHAPES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "description": "free list"},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
        "maybe": {"type": ["array", "null"]},
        "either": {"type": ["array", "string"]},
        "flag": {"type": "boolean", "enum": ["True", "False", "dontcare"]},
        "mode": {"type": ["string", "integer"], "enum": ["fast", "slow"]},
        "who": {"type": "object", "required": ["first"], "description": "a person"},
        "card": {
            "type": ["object", "string"],
            "properties": {"number": {"type": "string"}},
            "required": ["number", "cvc"],
        },
        "rows": {
            "type": "array",
            "items": {"type": "object", "properties": {"id": {"type": "string"}}},
            "required": ["id"],
        },
    },
    "required": ["tags", "ghost"],
}


def _walk(node: Any, pointer: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        return
    yield pointer, node
    for name, sub in (node.get("properties") or {}).items():
        yield from _walk(sub, f"{pointer}/properties/{name}")
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], f"{pointer}/items")
    for i, sub in enumerate(node.get("anyOf") or ()):
        yield from _walk(sub, f"{pointer}/anyOf/{i}")


def _refused(parameters: dict[str, Any]) -> list[str]:
    """What Gemini's validator refuses in `parameters`, as its errors say it."""
    found = []
    for pointer, node in _walk(parameters):
        kind = node.get("type")
        if kind == "ARRAY" and "items" not in node:
            found.append(f"{pointer}: items: missing field")
        if "enum" in node and kind != "STRING":
            found.append(f"{pointer}: enum: only allowed for STRING type")
        if "properties" in node and kind != "OBJECT":
            found.append(f"{pointer}: properties: only allowed for OBJECT type")
        missing = [name for name in node.get("required") or () if name not in (node.get("properties") or {})]
        if missing:
            found.append(f"{pointer}: required {missing}: property is not defined")
    return found


def test_no_shape_gemini_refuses_goes_out_and_each_change_is_a_note_at_its_pointer() -> None:
    result = export_tools([{"name": "shapes", "inputSchema": SHAPES}], "gemini", gemini="openapi")
    parameters = result.tools[0]["functionDeclarations"][0]["parameters"]
    assert _refused(parameters) == []
    got = parameters["properties"]
    assert got["tags"] == {"description": "free list", "type": "ARRAY", "items": {}}
    assert got["pair"] == {"type": "ARRAY", "items": {}}
    assert got["maybe"] == {"nullable": True, "type": "ARRAY", "items": {}}
    assert got["either"] == {"anyOf": [{"type": "ARRAY", "items": {}}, {"type": "STRING"}]}
    assert got["flag"] == {"type": "BOOLEAN"}
    assert got["mode"] == {"enum": ["fast", "slow"], "type": "STRING"}
    assert got["who"] == {"description": "a person", "type": "OBJECT"}
    assert got["card"] == {
        "anyOf": [
            {"type": "OBJECT", "properties": {"number": {"type": "STRING"}}, "required": ["number"]},
            {"type": "STRING"},
        ]
    }
    assert got["rows"] == {"type": "ARRAY", "items": {"type": "OBJECT", "properties": {"id": {"type": "STRING"}}}}
    assert parameters["required"] == ["tags"]
    items = "items: {} added (Gemini needs items on an ARRAY; {} lets any element through, as no items did)"
    required = "dropped (Gemini refuses a required name its properties do not define; checked on dispatch)"
    assert list(result.notes) == [
        f"shapes: /properties/tags: {items}",
        f"shapes: /properties/pair: {items}",
        "shapes: /properties/pair: dropped prefixItems (not in Gemini's subset; checked on dispatch)",
        "shapes: /properties/maybe: type ['array', 'null'] sent as nullable",
        f"shapes: /properties/maybe: {items}",
        f"shapes: /properties/either: {items}",
        "shapes: /properties/either: type ['array', 'string'] sent as anyOf",
        "shapes: /properties/flag: enum of strings on type boolean dropped (Gemini takes an enum on STRING only; "
        "checked on dispatch)",
        "shapes: /properties/mode: type ['string', 'integer'] sent as STRING (its enum holds strings only)",
        f"shapes: /properties/who: required first {required}",
        f"shapes: /properties/card: required cvc {required}",
        "shapes: /properties/card: type ['object', 'string'] sent as anyOf",
        # `required` on an array constrains nothing: Gemini refuses it, and nothing is lost without it.
        "shapes: /properties/rows: required id dropped (it applies to objects only, not to array; Gemini refuses "
        "it there)",
        f"shapes: /: required ghost {required}",
    ]


def test_a_null_among_an_untyped_enum_goes_as_nullable_and_a_typed_one_as_it_is() -> None:
    untyped, changes = gemini_parameters({"type": "object", "properties": {"a": {"enum": ["x", None]}}})
    assert untyped["properties"]["a"] == {"enum": ["x"], "nullable": True, "type": "STRING"}
    assert [c.text for c in changes] == ["null in enum sent as nullable"]
    typed, changes = gemini_parameters(
        {"type": "object", "properties": {"a": {"type": ["string", "null"], "enum": ["x", None]}}}
    )
    assert typed["properties"]["a"] == {"nullable": True, "enum": ["x"], "type": "STRING"}
    assert [c.text for c in changes] == ["type ['string', 'null'] sent as nullable"]


ROOT_ONE: dict[str, Any] = {
    "oneOf": [
        {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
    ]
}


def test_a_root_without_properties_that_constrains_the_arguments_goes_as_parametersjsonschema() -> None:
    tools = [
        {"name": "fetch", "inputSchema": ROOT_ONE},
        {"name": "needs", "inputSchema": {"type": "object", "required": ["x"]}},
        {"name": "ping", "inputSchema": {"type": "object"}},
        {"name": "none", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False}},
    ]
    result = export_tools(tools, "gemini", gemini="openapi")
    fetch, needs, ping, none = result.tools[0]["functionDeclarations"]
    assert fetch == {"name": "fetch", "parametersJsonSchema": {**ROOT_ONE, "type": "object"}}
    assert needs == {"name": "needs", "parametersJsonSchema": {"type": "object", "required": ["x"]}}
    # No arguments at all: `parameters` left unset, as Gemini documents; a closed object of no properties says the same.
    assert ping == {"name": "ping"} and none == {"name": "none"}
    assert list(result.notes) == [
        "fetch: input schema root has no `type: object`; it was added",
        "fetch: sent as parametersJsonSchema; Gemini's OpenAPI subset cannot express /: a root without properties "
        "that still constrains the arguments (oneOf, anyOf); `parameters` would have to be left unset",
        "needs: sent as parametersJsonSchema; Gemini's OpenAPI subset cannot express /: a root without properties "
        "that still constrains the arguments (required); `parameters` would have to be left unset",
        "none: /: dropped additionalProperties (not in Gemini's subset; checked on dispatch)",
    ]


def test_a_branch_of_required_names_alone_cannot_be_parameters() -> None:
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
        "anyOf": [{"required": ["title"]}, {"required": ["body"]}],
    }
    with pytest.raises(Unfit) as raised:
        gemini_parameters(schema)
    assert (raised.value.pointer, raised.value.rule) == ("/anyOf/0/required", "gemini-required")
    declaration = export_tools([{"name": "edit", "inputSchema": schema}], "gemini", gemini="openapi").tools[0]
    assert declaration["functionDeclarations"][0]["parametersJsonSchema"] == schema


LINTED = """\
tools:
  - name: shapes
    description: Shapes Gemini refuses as written.
    inputSchema:
      type: object
      properties:
        tags: {type: array}
        flag: {type: boolean, enum: ["True", "False"]}
        who: {type: object, required: [first]}
  - name: fetch
    description: By id or by url.
    inputSchema:
      oneOf:
        - {type: object, properties: {id: {type: integer}}, required: [id]}
        - {type: object, properties: {url: {type: string}}, required: [url]}
"""


def test_lint_says_what_export_does_and_refuses_what_it_cannot(project: Project) -> None:
    project.write("schemas/gemini.yaml", LINTED)
    findings = toolgen.lint(project.root, providers=("gemini",), gemini="openapi")
    assert sorted((f.line, f.col, f.rule, f.severity.value, f.message) for f in findings) == [
        (
            8,
            31,
            "gemini-type",
            "warning",
            "[gemini] export rewrites this: enum of strings on type boolean dropped (Gemini takes an enum on STRING "
            "only; checked on dispatch)",
        ),
        (
            9,
            29,
            "gemini-required",
            "warning",
            "[gemini] export rewrites this: required first dropped (Gemini refuses a required name its properties "
            "do not define; checked on dispatch)",
        ),
        (
            12,
            5,
            "gemini-root",
            "error",
            "[gemini] `parameters` cannot express this (a root without properties that still constrains the "
            "arguments (oneOf, anyOf); `parameters` would have to be left unset); export sends the tool as "
            "parametersJsonSchema",
        ),
    ]
    # items: {} is what no items means: export's note alone says it, as for an annotation.
    assert not [f for f in findings if f.rule == "gemini-items"]
