# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Gemini tool lists (`tools: [{"functionDeclarations": [...]}]`) to and from canonical definitions, the
OpenAPI-subset `parameters` schemas read as JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..export import export_checked
from .contents import either_case

# OpenAPI-subset schema types, by name and by enum number, as JSON Schema type names.
_SCHEMA_TYPES = MappingProxyType(
    {
        1: "string",
        2: "number",
        3: "integer",
        4: "boolean",
        5: "array",
        6: "object",
        7: "null",
    }
)
# The Schema fields proto3 JSON may spell in snake_case, by their JSON (lowerCamel) names: those are JSON
# Schema's keywords too. The int64 ones arrive as strings ("5") under proto3's JSON rules.
_SCHEMA_FIELDS = MappingProxyType(
    {
        "any_of": "anyOf",
        "max_items": "maxItems",
        "min_items": "minItems",
        "max_length": "maxLength",
        "min_length": "minLength",
        "max_properties": "maxProperties",
        "min_properties": "minProperties",
        "property_ordering": "propertyOrdering",
    }
)
_INT64_FIELDS = frozenset(
    {"maxItems", "minItems", "maxLength", "minLength", "maxProperties", "minProperties"}
)
# Fields whose proto3 default (what a serializer writing every field writes for one not set) means "not set":
# an empty enum or anyOf would refuse every value in JSON Schema, an empty string says nothing.
_UNSET = MappingProxyType(
    {
        "enum": [],
        "anyOf": [],
        "required": [],
        "propertyOrdering": [],
        "format": "",
        "title": "",
        "description": "",
        "pattern": "",
        "nullable": False,
    }
)


def json_schema(schema: Any) -> Any:
    """An OpenAPI-subset `parameters` schema as JSON Schema: type names lower case (`OBJECT` and 6 both become
    `object`, 0 or TYPE_UNSPECIFIED no type), snake_case fields in JSON Schema's spelling, int64 strings as
    numbers, `nullable: true` as "null" among the types, and proto3's defaults of unset fields left out."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        name = _SCHEMA_FIELDS.get(key, key)
        if name in _INT64_FIELDS and isinstance(value, str) and value.isdigit():
            value = int(value)
        if (
            name in _UNSET
            and value == _UNSET[name]
            and type(value) is type(_UNSET[name])
        ):
            continue
        # Where both spellings are given, the JSON name wins.
        if name not in out or key == name:
            out[name] = value
    kind = out.get("type")
    if isinstance(kind, int) and not isinstance(kind, bool):
        out["type"] = _SCHEMA_TYPES.get(kind, kind)
    elif isinstance(kind, str):
        out["type"] = kind.lower()
    if out.get("type") in (0, "type_unspecified"):
        del out["type"]
    if out.get("nullable") is True and isinstance(out.get("type"), str):
        del out["nullable"]
        if out["type"] != "null":
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]  # nullable lets null past the enum too
    if isinstance(out.get("properties"), dict):
        out["properties"] = {
            key: json_schema(value) for key, value in out["properties"].items()
        }
    if "items" in out:
        out["items"] = json_schema(out["items"])
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [json_schema(value) for value in out["anyOf"]]
    return out


def gemini_tool_definition(decl: Any) -> dict[str, Any] | None:
    if not isinstance(decl, dict) or not isinstance(decl.get("name"), str):
        return None
    tool: dict[str, Any] = {"name": decl["name"]}
    if isinstance(decl.get("description"), str):
        tool["description"] = decl["description"]
    schema = either_case(decl, "parametersJsonSchema", "parameters_json_schema")
    if schema is None and "parameters" in decl:
        schema = json_schema(decl["parameters"])
    tool["inputSchema"] = (
        schema if schema is not None else {"type": "object", "properties": {}}
    )
    output = either_case(decl, "responseJsonSchema", "response_json_schema")
    if output is None and "response" in decl:
        output = json_schema(decl["response"])
    if output is not None:
        tool["outputSchema"] = output
    return tool


def declarations(raw: list[Any]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for entry in raw:
        if isinstance(entry, dict):
            decls = either_case(entry, "functionDeclarations", "function_declarations")
            if isinstance(decls, list):
                tools.extend(
                    tool
                    for tool in map(gemini_tool_definition, decls)
                    if tool is not None
                )
    return tools


def plain_declarations(raw: list[Any]) -> list[dict[str, Any]] | None:
    """The definitions of a tool list the export writes back as it is, as `declarations` reads them, so that it
    need not be exported to find out: one entry of function declarations, each a name, a description and an
    object schema as parametersJsonSchema. None for any other list."""
    # Keys told by count and lookup, not a key view compared: this runs for every decoded request.
    if len(raw) != 1 or type(raw[0]) is not dict or len(raw[0]) != 1:
        return None
    declarations = raw[0].get("functionDeclarations")
    if type(declarations) is not list or not declarations:
        return None  # no declarations export as no entry at all
    tools: list[dict[str, Any]] = []
    for declaration in declarations:
        if type(declaration) is not dict:
            return None
        name, schema = declaration.get("name"), declaration.get("parametersJsonSchema")
        if (
            type(name) is not str
            or type(schema) is not dict
            or schema.get("type") != "object"
        ):
            return None
        count = len(declaration)
        if count == 2:
            tools.append({"name": name, "inputSchema": schema})
            continue
        description = declaration.get("description")
        if count != 3 or type(description) is not str or not description:
            return None
        tools.append({"name": name, "description": description, "inputSchema": schema})
    return tools


def decode_tools(raw: Any, kept: dict[str, Any]) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        return []
    plain = plain_declarations(raw)
    if plain is not None:
        return plain
    tools = declarations(raw)
    if not tools or encode_tools(tools, None) != raw:
        kept["tools"] = raw
    return tools


def encode_tools(
    tools: list[dict[str, Any]], kept: Mapping[str, Any] | None
) -> list[Any]:
    raw = kept.get("tools") if kept else None
    if raw is not None and declarations(raw) == tools:
        return list(raw)
    exported = export_checked(tools, "gemini")
    if raw is not None:
        exported.extend(
            entry
            for entry in raw
            if not (
                isinstance(entry, dict)
                and either_case(entry, "functionDeclarations", "function_declarations")
            )
        )
    return exported
