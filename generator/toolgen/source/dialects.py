"""Opt-in reading of tool definitions whose parameters are not a JSON Schema (`normalize: [shapes]`).

Benchmark and framework files describe parameters in a handful of ways; each is turned into an
object schema, and the rewrite is reported so it never happens silently:

- a parameter map `{p: {type, description, required?, ...}}` (Seal-Tools `parameters`, NESTFUL `arguments`,
  `query_parameters`/`path_parameters`), with a sibling `required: [...]` list where the source has one;
- a parameter list `[{name, type, desc|description, optional?|required?, ...}]` (Docker MCP registry
  `arguments`, TaskWeaver `parameters`, ToolBench `required_parameters`/`optional_parameters`);
- a JSON Schema under another key (ACEBench `arguments`/`_arguments`, with `results` as the output);
- `api_name`/`api_description` for `name`/`description`; `responses`, `output_parameters`, `returns`
  and `results` as the output.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from toolgen.core.positions import Pointer

Field = tuple[str, Any, Pointer]

_SCHEMA_KEYS = frozenset(
    {"type", "properties", "required", "$ref", "$defs", "anyOf", "oneOf", "allOf", "enum", "const", "items"}
    | {"additionalProperties", "$schema", "not"}
)
# The fields of one parameter's spec and the kinds of value each holds there. A spec is told from a schema by
# these kinds, not by key names: a parameter may well be called `type`, `items` or `required`, but its spec is a
# mapping, while a schema's `type` is a name, its `required` a list.
_SPEC_FIELDS: Mapping[str, tuple[type, ...]] = MappingProxyType(
    {
        "type": (str, list),
        "description": (str,),
        "desc": (str,),
        "required": (bool,),
        "optional": (bool,),
        "enum": (list,),
        "items": (dict, str),
        "format": (str,),
    }
)
_SPEC_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "description": "description",
        "desc": "description",
        "default": "default",
        "enum": "enum",
        "items": "items",
    }
)
_INPUT_KEYS = ("parameters", "arguments", "_arguments", "query_parameters", "path_parameters")
_OUTPUT_KEYS = ("results", "responses", "output_parameters", "returns")


def empty_object_schema() -> dict[str, Any]:
    """The input schema of a tool without arguments (a new dict each time: callers may change it)."""
    return {"type": "object", "properties": {}}


def is_parameter_spec(value: Any) -> bool:
    """One parameter's spec: a type name or a description, and every spec field it has of its kind."""
    if not isinstance(value, dict):
        return False
    named = isinstance(value.get("type"), (str, list)) or isinstance(value.get("description", value.get("desc")), str)
    return named and all(isinstance(value[key], kinds) for key, kinds in _SPEC_FIELDS.items() if key in value)


def is_parameter_map(value: Any) -> bool:
    """`{name: spec, ...}`: every value a parameter's spec, whatever the names (`items`, `type`, `properties`)."""
    return isinstance(value, dict) and bool(value) and all(is_parameter_spec(spec) for spec in value.values())


def is_schema(value: Any) -> bool:
    """A JSON Schema object, as opposed to a map or list of parameter specs (an empty map is neither: no arguments).

    Keywords only say it is a schema once the shape has said it is not a parameter map.
    """
    if isinstance(value, bool):
        return True
    return isinstance(value, dict) and bool(_SCHEMA_KEYS & value.keys()) and not is_parameter_map(value)


def is_parameter_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in value)


def _property(spec: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    if isinstance(spec.get("type"), (str, list)):
        schema["type"] = spec["type"]
    for key, target in _SPEC_KEYS.items():
        if key in spec and target not in schema:
            schema[target] = spec[key]
    if isinstance(schema.get("items"), str):  # Docker writes the item type by name
        schema["items"] = {"type": schema["items"]}
    return schema


def _is_required(spec: dict[str, Any], default: bool) -> bool:
    if isinstance(spec.get("required"), bool):
        return bool(spec["required"])
    if isinstance(spec.get("optional"), bool):
        return not spec["optional"]
    return default


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def from_map(specs: dict[str, Any], required: Any = None) -> dict[str, Any]:
    listed = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    properties = {name: _property(spec) for name, spec in specs.items()}
    flagged = [name for name, spec in specs.items() if _is_required(spec, False) and name not in listed]
    return _object(properties, listed + flagged)


def from_list(specs: list[dict[str, Any]], default_required: bool | None = None) -> dict[str, Any]:
    """Lists that flag `optional` (Docker) leave required entries unmarked; lists that flag `required` do the reverse."""
    if default_required is None:
        default_required = not any("required" in spec for spec in specs)
    properties = {spec["name"]: _property(spec) for spec in specs}
    required = [spec["name"] for spec in specs if _is_required(spec, default_required)]
    return _object(properties, required)


def _as_schema(value: Any, required: Any = None) -> tuple[Any, str] | None:
    """The shape decides, never a key name: a map of specs, a list of named specs, or else a schema."""
    if value in ({}, []):
        # Dialects that list parameters by name list none: no arguments, not the schema `{}` that takes anything.
        return empty_object_schema(), "no parameters listed: a tool without arguments"
    if is_parameter_map(value):
        return from_map(value, required), "a parameter map"
    if is_parameter_list(value):
        return from_list(value), "a parameter list"
    if is_schema(value):
        return value, "a JSON Schema"
    return None


def read_dialect(obj: dict[str, Any], pointer: Pointer) -> tuple[list[Field], str] | None:
    """Canonical fields for a dialect tool and a sentence saying how it was read, or None if it is not one."""
    fields: list[Field] = []
    notes: list[str] = []
    name_key = "name" if "name" in obj else "api_name" if "api_name" in obj else None
    if name_key is None:
        return None
    fields.append(("name", obj[name_key], (*pointer, name_key)))
    for key in ("description", "api_description"):
        if key in obj:
            fields.append(("description", obj[key], (*pointer, key)))
            break
    if "required_parameters" in obj or "optional_parameters" in obj:
        needed = obj.get("required_parameters") or []
        optional = obj.get("optional_parameters") or []
        if not (is_parameter_list(needed) and is_parameter_list(optional)):
            return None
        merged = from_list(needed, True)
        merged["properties"].update(from_list(optional, False)["properties"])
        where = (*pointer, "required_parameters" if "required_parameters" in obj else "optional_parameters")
        fields.append(("inputSchema", merged, where))
        listed = "lists as the input schema" if needed or optional else "lists empty: a tool without arguments"
        notes.append(f"required_parameters/optional_parameters {listed}")
    else:
        for key in _INPUT_KEYS:
            if key in obj:
                converted = _as_schema(obj[key], obj.get("required"))
                if converted is None:
                    return None
                fields.append(("inputSchema", converted[0], (*pointer, key)))
                notes.append(f"{key!r} ({converted[1]}) as the input schema")
                break
        else:
            fields.append(("inputSchema", empty_object_schema(), pointer))
            notes.append("no parameters: a tool without arguments")
    for key in _OUTPUT_KEYS:
        if key in obj and obj[key] not in (None, {}, []):
            converted = _as_schema(obj[key])
            if converted is not None:
                fields.append(("outputSchema", converted[0], (*pointer, key)))
                notes.append(f"{key!r} ({converted[1]}) as the output schema")
            break
    return fields, "read as a dialect: " + "; ".join(notes)
