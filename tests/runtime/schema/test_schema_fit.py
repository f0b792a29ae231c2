"""Export's rewrites for OpenAI strict mode and Gemini's OpenAPI subset: what they change, say, and refuse."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pydantic
import pytest

from toolgen.runtime.schema.fit import (
    GEMINI_KEYWORDS,
    Rewrite,
    Unfit,
    drop_strict_nulls,
    gemini_rewrites,
    gemini_schema,
    strict_schema,
)
from toolgen.runtime.wires.export import export_tools

ORDER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "item": {"type": "string", "description": "What to order."},
        "size": {"type": "string", "enum": ["s", "m", "l"]},
        "note": {"type": ["string", "null"]},
        "address": {"$ref": "#/$defs/Address"},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
    },
    "required": ["item"],
    "$defs": {
        "Address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
            "required": ["street"],
        },
        "Tag": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    },
}


def _objects(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "object" or (isinstance(node.get("type"), list) and "object" in node["type"]):
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def test_strict_rewrite_closes_objects_requires_everything_and_makes_optionals_nullable() -> None:
    before = copy.deepcopy(ORDER)
    strict, notes = strict_schema(ORDER, "order")
    assert before == ORDER  # the input is never modified
    for node in _objects(strict):
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    props = strict["properties"]
    assert props["item"] == ORDER["properties"]["item"]  # required stays as it was
    assert props["size"] == {"type": ["string", "null"], "enum": ["s", "m", "l", None]}
    assert props["note"] == {"type": ["string", "null"]}  # already nullable
    assert props["address"] == {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}
    assert strict["$defs"]["Tag"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert "order: /: optional size, note, address, tags made required and nullable (null means absent)" in notes
    assert "order: /$defs/Tag: oneOf sent as anyOf (strict mode supports only anyOf)" in notes
    assert "order: /$defs/Address: additionalProperties: false added" in notes
    # What the model sends under strict mode (null for absent) is valid for the rewritten schema.
    jsonschema.validate({"item": "tea", "size": None, "note": None, "address": None, "tags": None}, strict)


@pytest.mark.parametrize(
    ("schema", "pointer", "reason"),
    [
        ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}, "/properties/a/allOf", "allOf"),
        ({"type": "object", "properties": {"meta": {"type": "object"}}}, "/properties/meta", "no properties listed"),
        (
            {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "/properties/m",
            "free-form",
        ),
        ({"type": "object", "properties": {"x": True}}, "/properties/x", "true/false"),
    ],
)
def test_strict_refuses_what_it_cannot_express(schema: dict[str, Any], pointer: str, reason: str) -> None:
    with pytest.raises(Unfit) as caught:
        strict_schema(schema)
    assert caught.value.pointer == pointer and reason in caught.value.reason


def test_export_rewrites_declared_or_forced_strict_tools_and_falls_back_with_a_note() -> None:
    tools = [
        {"name": "order", "description": "Order.", "inputSchema": ORDER, "strict": True},
        {"name": "plain", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "loose", "inputSchema": {"type": "object", "properties": {"meta": {"type": "object"}}}},
    ]
    declared = export_tools(tools, "openai")
    assert [t["function"].get("strict") for t in declared.tools] == [True, None, None]
    assert declared.tools[1]["function"]["parameters"] == tools[1]["inputSchema"]
    forced = export_tools(tools, "openai", strict=True)
    assert [t["function"].get("strict") for t in forced.tools] == [True, True, False]
    assert forced.tools[1]["function"]["parameters"]["required"] == ["q"]
    assert any(
        note.startswith("loose: sent with strict: false; strict mode cannot express /properties/meta")
        for note in forced.notes
    )
    responses = export_tools(tools, "openai-responses", strict=True)
    assert [t["strict"] for t in responses.tools] == [True, True, False]
    for provider in ("mistral", "ollama"):
        assert all("strict" not in t["function"] for t in export_tools(tools, provider, strict=True).tools)


def test_strict_exports_satisfy_the_official_sdk_types() -> None:
    openai_chat = pytest.importorskip("openai.types.chat")
    adapter = pydantic.TypeAdapter(openai_chat.ChatCompletionToolParam)
    for entry in export_tools([{"name": "order", "inputSchema": ORDER}], "openai", strict=True).tools:
        adapter.validate_python(entry, strict=True)


def _keywords(schema: Any) -> set[str]:
    keys: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            keys.add(key)
            if key == "properties":
                for sub in value.values():
                    keys |= _keywords(sub)
            elif key == "items":
                keys |= _keywords(value)
            elif key == "anyOf":
                for sub in value:
                    keys |= _keywords(sub)
    return keys


def test_gemini_rewrite_inlines_refs_and_keeps_to_the_subset() -> None:
    schema = {**ORDER, "additionalProperties": False, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    schema["properties"] = {**ORDER["properties"], "mode": {"const": "fast"}, "level": {"enum": [1, 2]}}
    rewritten, notes = gemini_schema(schema, "order")
    assert _keywords(rewritten) <= GEMINI_KEYWORDS
    props = rewritten["properties"]
    assert props["address"] == {
        "type": "OBJECT",
        "properties": {"street": {"type": "STRING"}, "zip": {"type": "INTEGER"}},
        "required": ["street"],
    }
    assert props["note"] == {"type": "STRING", "nullable": True}
    assert props["tags"]["items"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert props["mode"] == {"type": "STRING", "enum": ["fast"]}
    assert props["level"] == {}
    assert notes == [
        "order: /properties/note: type ['string', 'null'] sent as nullable",
        "order: /properties/address: $ref #/$defs/Address inlined",
        "order: /properties/tags/items: $ref #/$defs/Tag inlined",
        "order: /properties/tags/items: oneOf sent as anyOf (Gemini's subset has only anyOf)",
        "order: /properties/mode: const sent as a one-value enum",
        "order: /properties/level: non-string enum/const dropped (Gemini enums are strings; checked on dispatch)",
        "order: /: dropped additionalProperties (not in Gemini's subset; checked on dispatch)",
        "order: /: dropped $schema (not in Gemini's subset; annotations, they constrain no argument)",
    ]


# Each annotation Gemini's subset has no field for, with a value of its kind.
ANNOTATIONS: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:example:city",
    "$comment": "kept short",
    "$anchor": "city",
    "deprecated": True,
    "readOnly": True,
    "writeOnly": True,
}
CITY: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 40}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
}


@pytest.mark.parametrize("keyword", list(ANNOTATIONS))
def test_gemini_drops_an_annotation_with_a_note_naming_it_and_nothing_else_changes(keyword: str) -> None:
    value = ANNOTATIONS[keyword]
    annotated = copy.deepcopy(CITY)
    annotated[keyword] = value
    annotated["properties"]["city"][keyword] = value
    plain, plain_changes = gemini_rewrites(CITY)
    rewritten, changes = gemini_rewrites(annotated)
    assert plain_changes == []
    assert rewritten == plain
    text = f"dropped {keyword} (not in Gemini's subset; annotations, they constrain no argument)"
    assert changes == [
        Rewrite("/properties/city", "gemini-annotation", text, keyword),
        Rewrite("", "gemini-annotation", text, keyword),
    ]
    assert gemini_schema(annotated, "trip")[1] == [f"trip: /properties/city: {text}", f"trip: /: {text}"]
    # Export says so where it says every other rewrite.
    exported = export_tools([{"name": "trip", "inputSchema": annotated}], "gemini", gemini="openapi")
    assert exported.tools[0]["functionDeclarations"][0]["parameters"] == plain
    assert list(exported.notes) == [f"trip: /properties/city: {text}", f"trip: /: {text}"]


def test_gemini_annotations_and_checked_keywords_dropped_together_get_a_note_each() -> None:
    schema = {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "readOnly": True, "$comment": "c"}
    rewritten, changes = gemini_rewrites(schema)
    assert rewritten == {"type": "ARRAY", "items": {"type": "STRING"}}
    assert changes == [
        Rewrite(
            "", "gemini-keyword", "dropped uniqueItems (not in Gemini's subset; checked on dispatch)", "uniqueItems"
        ),
        Rewrite(
            "",
            "gemini-annotation",
            "dropped readOnly, $comment (not in Gemini's subset; annotations, they constrain no argument)",
            "readOnly",
        ),
    ]


def test_gemini_export_falls_back_to_json_schema_for_recursion_and_leaves_out_empty_parameters() -> None:
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}},
    }
    tree["$defs"]["Node"]["properties"]["children"]["items"] = {"$ref": "#/$defs/Node"}
    tools = [
        {"name": "tree", "inputSchema": tree},
        {"name": "ping", "inputSchema": {"type": "object"}},
        {"name": "order", "inputSchema": ORDER},
    ]
    result = export_tools(tools, "gemini", gemini="openapi")
    tree_out, ping_out, order_out = result.tools[0]["functionDeclarations"]
    assert tree_out == {"name": "tree", "parametersJsonSchema": tree}
    assert ping_out == {"name": "ping"}
    assert order_out["parameters"]["type"] == "OBJECT"
    assert result.notes[0] == (
        "tree: sent as parametersJsonSchema; Gemini's OpenAPI subset cannot express "
        "/properties/root/properties/children/items/$ref: recursive $ref '#/$defs/Node' cannot be inlined"
    )
    with pytest.raises(Unfit, match="allOf with several schemas"):
        gemini_schema({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"minLength": 1}]}}})


def test_strict_nulls_are_dropped_only_where_null_means_absent() -> None:
    data = {"item": None, "size": None, "note": None, "address": {"street": "x", "zip": None}, "tags": [None]}
    assert drop_strict_nulls(data, ORDER) == {"item": None, "note": None, "address": {"street": "x"}, "tags": [None]}
