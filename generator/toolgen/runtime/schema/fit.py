# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Schema rewrites a provider needs before it accepts a tool: OpenAI strict mode and Gemini's OpenAPI subset.

Each rewrite returns the new schema and one sentence per change, or raises Unfit naming the place that cannot
be expressed. The inputs are never modified.

Sources: OpenAI Structured Outputs, "Supported schemas" (every object `additionalProperties: false`, every
property listed in `required`, optional fields as a union with null; `allOf`, `not`, `if`/`then`/`else`,
`dependentRequired`, `dependentSchemas` unsupported; the root must be an object). Gemini
`FunctionDeclaration.parameters` takes a `Schema`, "a select subset of an OpenAPI 3.0 schema object": type (one
value), format, title, description, nullable, enum (strings), items, min/maxItems, properties, required,
min/maxProperties, min/maxLength, pattern, example, anyOf, propertyOrdering, default, minimum, maximum; no
`$ref`. `parametersJsonSchema` takes JSON Schema as written and needs none of this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STRICT_UNSUPPORTED = (
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
)
GEMINI_KEYWORDS = frozenset(
    {
        "anyOf",
        "default",
        "description",
        "enum",
        "example",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "nullable",
        "pattern",
        "properties",
        "propertyOrdering",
        "required",
        "title",
        "type",
    }
)
GEMINI_TYPES = ("string", "number", "integer", "boolean", "array", "object")
# Annotation keywords Gemini's subset has no field for; dropping them changes no argument the model may send.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$anchor", "deprecated", "readOnly", "writeOnly"}
)


class Unfit(ValueError):
    """The schema uses something the provider's format cannot express; `pointer` says where."""

    def __init__(self, pointer: str, reason: str) -> None:
        super().__init__(f"{pointer or '/'}: {reason}")
        self.pointer = pointer
        self.reason = reason


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def allows_null(schema: Any) -> bool:
    """Whether `schema` plainly accepts null (a null type, a null in enum/const, or a branch that does)."""
    if not isinstance(schema, Mapping):
        return schema is True
    kind = schema.get("type")
    if (
        kind == "null"
        or (isinstance(kind, list) and "null" in kind)
        or schema.get("nullable") is True
    ):
        return True
    if "const" in schema and schema["const"] is None:
        return True
    enum = schema.get("enum")
    if isinstance(enum, list) and None in enum and "type" not in schema:
        return True
    return any(
        allows_null(branch)
        for key in ("anyOf", "oneOf")
        for branch in schema.get(key) or ()
    )


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "object"
        or (isinstance(kind, list) and "object" in kind)
        or isinstance(schema.get("properties"), dict)
    )


def _nullable(schema: Any) -> Any:
    """`schema` widened to accept null the way strict mode documents: a type union, else anyOf with null."""
    if allows_null(schema):
        return schema
    if isinstance(schema, Mapping):
        kind = schema.get("type")
        plain = (
            "anyOf" not in schema
            and "oneOf" not in schema
            and "$ref" not in schema
            and "const" not in schema
        )
        if plain and isinstance(kind, str):
            widened = {**schema, "type": [kind, "null"]}
            if isinstance(schema.get("enum"), list):
                widened["enum"] = [*schema["enum"], None]
            return widened
        if plain and isinstance(kind, list):
            return {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def strict_schema(
    schema: Mapping[str, Any], tool: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """`schema` rewritten for OpenAI strict mode, with what changed; raises Unfit where strict mode cannot follow."""
    notes: list[str] = []
    result = _strict(schema, "", notes, tool)
    return result, notes


def _strict(node: Any, pointer: str, notes: list[str], tool: str) -> Any:
    if not isinstance(node, Mapping):
        raise Unfit(
            pointer, "a schema of true/false cannot be expressed in strict mode"
        )
    for keyword in STRICT_UNSUPPORTED:
        if keyword in node:
            raise Unfit(
                f"{pointer}/{keyword}", f"strict mode does not support {keyword!r}"
            )
    result = dict(node)
    if "oneOf" in result:
        notes.append(
            f"{tool}: {pointer or '/'}: oneOf sent as anyOf (strict mode supports only anyOf)"
        )
        result["anyOf"] = result.pop("oneOf")
    for key in ("anyOf", "prefixItems"):
        if isinstance(result.get(key), list):
            result[key] = [
                _strict(sub, f"{pointer}/{key}/{i}", notes, tool)
                for i, sub in enumerate(result[key])
            ]
    for key in ("$defs", "definitions"):
        if isinstance(result.get(key), Mapping):
            result[key] = {
                name: _strict(sub, f"{pointer}/{key}/{_escape(name)}", notes, tool)
                for name, sub in result[key].items()
            }
    if isinstance(result.get("items"), Mapping):
        result["items"] = _strict(result["items"], f"{pointer}/items", notes, tool)
    if _is_object(result):
        _strict_object(result, pointer, notes, tool)
    return result


def _strict_object(
    result: dict[str, Any], pointer: str, notes: list[str], tool: str
) -> None:
    if "additionalProperties" in result and result["additionalProperties"] is not False:
        raise Unfit(
            pointer,
            "a free-form object (additionalProperties other than false) cannot be strict",
        )
    if "additionalProperties" not in result:
        if pointer and "properties" not in result:
            # An object with no properties listed is a free-form map: closing it would leave the model no way
            # to send what the tool accepts.
            raise Unfit(
                pointer, "a free-form object (no properties listed) cannot be strict"
            )
        notes.append(f"{tool}: {pointer or '/'}: additionalProperties: false added")
        result["additionalProperties"] = False
    properties = result.get("properties") or {}
    required = [key for key in result.get("required") or () if key in properties]
    optional = [key for key in properties if key not in required]
    rewritten = {
        key: _strict(sub, f"{pointer}/properties/{_escape(key)}", notes, tool)
        for key, sub in properties.items()
    }
    for key in optional:
        rewritten[key] = _nullable(rewritten[key])
    if optional:
        listed = ", ".join(optional)
        notes.append(
            f"{tool}: {pointer or '/'}: optional {listed} made required and nullable (null means absent)"
        )
    result["properties"] = rewritten
    result["required"] = list(properties)


def gemini_schema(
    schema: Mapping[str, Any], tool: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """`schema` rewritten into Gemini's OpenAPI `parameters` subset, with what changed; raises Unfit on recursion."""
    notes: list[str] = []
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    result = _gemini(schema, "", notes, tool, defs, ())
    return result, notes


def _resolve(ref: Any, pointer: str, defs: Mapping[str, Any]) -> tuple[str, Any]:
    if isinstance(ref, str):
        for prefix in ("#/$defs/", "#/definitions/"):
            name = ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
            if ref.startswith(prefix) and name in defs:
                return name, defs[name]
    raise Unfit(
        f"{pointer}/$ref", f"$ref {ref!r} does not point into this schema's $defs"
    )


def _gemini(
    node: Any,
    pointer: str,
    notes: list[str],
    tool: str,
    defs: Mapping[str, Any],
    seen: tuple[str, ...],
) -> dict[str, Any]:
    where = pointer or "/"
    if not isinstance(node, Mapping):
        if node is True:
            return {}
        raise Unfit(pointer, "a schema of false cannot be expressed in Gemini's subset")
    if "$ref" in node:
        name, target = _resolve(node["$ref"], pointer, defs)
        if name in seen:
            raise Unfit(
                f"{pointer}/$ref", f"recursive $ref {node['$ref']!r} cannot be inlined"
            )
        notes.append(f"{tool}: {where}: $ref {node['$ref']} inlined")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        merged = {**target, **siblings} if isinstance(target, Mapping) else target
        return _gemini(merged, pointer, notes, tool, defs, (*seen, name))
    result: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in node.items():
        if key in ("$defs", "definitions"):
            continue  # inlined where used
        if key == "allOf" and isinstance(value, list) and len(value) == 1:
            result.update(
                _gemini(value[0], f"{pointer}/allOf/0", notes, tool, defs, seen)
            )
            notes.append(f"{tool}: {where}: single-entry allOf merged into its parent")
        elif key == "allOf":
            raise Unfit(
                f"{pointer}/allOf",
                "allOf with several schemas cannot be expressed in Gemini's subset",
            )
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            if key == "oneOf":
                notes.append(
                    f"{tool}: {where}: oneOf sent as anyOf (Gemini's subset has only anyOf)"
                )
            branches = [
                _gemini(sub, f"{pointer}/{key}/{i}", notes, tool, defs, seen)
                for i, sub in enumerate(value)
            ]
            result["anyOf"] = [*result.get("anyOf", []), *branches]
        elif key == "properties" and isinstance(value, Mapping):
            result["properties"] = {
                name: _gemini(
                    sub,
                    f"{pointer}/properties/{_escape(name)}",
                    notes,
                    tool,
                    defs,
                    seen,
                )
                for name, sub in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            result["items"] = _gemini(
                value, f"{pointer}/items", notes, tool, defs, seen
            )
        elif key in GEMINI_KEYWORDS and key not in (
            "type",
            "enum",
            "anyOf",
            "properties",
            "items",
        ):
            result[key] = value
        elif key not in ("type", "enum", "const"):
            dropped.append(key)
    _gemini_type(node, result, where, notes, tool)
    dropped = [key for key in dropped if key not in _ANNOTATIONS]
    if dropped:
        notes.append(
            f"{tool}: {where}: dropped {', '.join(dropped)} (not in Gemini's subset; checked on dispatch)"
        )
    return result


def _gemini_type(
    node: Mapping[str, Any],
    result: dict[str, Any],
    where: str,
    notes: list[str],
    tool: str,
) -> None:
    """`type` as one upper-case name plus `nullable`; enum and const as string enums where Gemini allows them."""
    kind = node.get("type")
    kinds = (
        [kind]
        if isinstance(kind, str)
        else list(kind)
        if isinstance(kind, list)
        else []
    )
    if "null" in kinds:
        kinds.remove("null")
        result["nullable"] = True
        if isinstance(kind, list):
            notes.append(f"{tool}: {where}: type {kind} sent as nullable")
    if len(kinds) == 1 and kinds[0] in GEMINI_TYPES:
        result["type"] = kinds[0].upper()
    elif len(kinds) > 1:
        result["anyOf"] = [
            *result.get("anyOf", []),
            *({"type": k.upper()} for k in kinds if k in GEMINI_TYPES),
        ]
        notes.append(f"{tool}: {where}: type {kind} sent as anyOf")
    values = [node["const"]] if "const" in node else node.get("enum")
    if isinstance(values, list):
        if all(isinstance(v, str) for v in values):
            result["enum"] = list(values)
            result.setdefault("type", "STRING")
            if "const" in node:
                notes.append(f"{tool}: {where}: const sent as a one-value enum")
        else:
            notes.append(
                f"{tool}: {where}: non-string enum/const dropped (Gemini enums are strings; checked on dispatch)"
            )


def drop_strict_nulls(data: Any, schema: Any, root: Any = None) -> Any:
    """`data` without the nulls strict mode sends for optional properties whose own schema does not accept null."""
    root = schema if root is None else root
    if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        defs = (
            {**(root.get("definitions") or {}), **(root.get("$defs") or {})}
            if isinstance(root, Mapping)
            else {}
        )
        try:
            _, schema = _resolve(schema["$ref"], "", defs)
        except Unfit:
            return data
    if not isinstance(schema, Mapping):
        return data
    if isinstance(data, dict):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return data
        required = schema.get("required") or ()
        return {
            key: drop_strict_nulls(value, properties.get(key), root)
            for key, value in data.items()
            if not (
                value is None
                and key not in required
                and key in properties
                and not allows_null(properties[key])
            )
        }
    if isinstance(data, list) and isinstance(schema.get("items"), Mapping):
        return [drop_strict_nulls(item, schema["items"], root) for item in data]
    return data
