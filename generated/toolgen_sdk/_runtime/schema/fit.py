# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Schema rewrites a provider needs before it accepts a tool: OpenAI strict mode and Gemini's OpenAPI subset.

Each rewrite returns the new schema and one Rewrite record per rewrite (where, the lint rule it answers, what was done),
or raises Unfit naming the place that cannot be expressed and its rule. Export prints the changes as notes and
`toolgen lint` reports them as warnings, so the two never disagree on what a rewrite fixes; only a dropped annotation
(`$schema`, `readOnly`...), which changes nothing the model may send, is export's note alone. The inputs are never
modified.

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
from typing import Any, NamedTuple
from urllib.parse import unquote

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
# Annotation keywords Gemini's subset has no field for: dropping them changes no argument the model may send, so
# their note has a rule of its own (gemini-annotation), one `toolgen lint` leaves to export rather than warn of.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$anchor", "deprecated", "readOnly", "writeOnly"}
)


class Unfit(ValueError):
    """The schema uses something the provider's format cannot express; `pointer` says where, `rule` which lint
    rule it breaks."""

    def __init__(self, pointer: str, reason: str, rule: str = "") -> None:
        super().__init__(f"{pointer or '/'}: {reason}")
        self.pointer = pointer
        self.reason = reason
        self.rule = rule


class Rewrite(NamedTuple):
    """One rewrite: the JSON pointer of the subschema, the lint rule it answers, what was done, and the keyword
    it is about when there is one."""

    pointer: str
    rule: str
    text: str
    keyword: str = ""

    def note(self, tool: str) -> str:
        return f"{tool}: {self.pointer or '/'}: {self.text}"


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


_STRICT_KEYWORD = "openai-strict-keyword"
_STRICT_OPEN = "openai-strict-additional-properties"


def strict_schema(
    schema: Mapping[str, Any], tool: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """`schema` rewritten for OpenAI strict mode, with what changed; raises Unfit where strict mode cannot follow."""
    result, changes = strict_rewrites(schema)
    return result, [change.note(tool) for change in changes]


def strict_rewrites(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[Rewrite]]:
    """`schema` rewritten for OpenAI strict mode and each rewrite; raises Unfit where strict mode cannot follow."""
    changes: list[Rewrite] = []
    return _strict(schema, "", changes), changes


def _strict(node: Any, pointer: str, notes: list[Rewrite]) -> Any:
    if not isinstance(node, Mapping):
        raise Unfit(
            pointer,
            "a schema of true/false cannot be expressed in strict mode",
            _STRICT_KEYWORD,
        )
    for keyword in STRICT_UNSUPPORTED:
        if keyword in node:
            raise Unfit(
                f"{pointer}/{keyword}",
                f"strict mode does not support {keyword!r}",
                _STRICT_KEYWORD,
            )
    result = dict(node)
    if "oneOf" in result:
        text = "oneOf sent as anyOf (strict mode supports only anyOf)"
        notes.append(Rewrite(pointer, _STRICT_KEYWORD, text, "oneOf"))
        result["anyOf"] = result.pop("oneOf")
    for key in ("anyOf", "prefixItems"):
        if isinstance(result.get(key), list):
            result[key] = [
                _strict(sub, f"{pointer}/{key}/{i}", notes)
                for i, sub in enumerate(result[key])
            ]
    for key in ("$defs", "definitions"):
        if isinstance(result.get(key), Mapping):
            result[key] = {
                name: _strict(sub, f"{pointer}/{key}/{_escape(name)}", notes)
                for name, sub in result[key].items()
            }
    if isinstance(result.get("items"), Mapping):
        result["items"] = _strict(result["items"], f"{pointer}/items", notes)
    if _is_object(result):
        _strict_object(result, pointer, notes)
    return result


def _strict_object(result: dict[str, Any], pointer: str, notes: list[Rewrite]) -> None:
    if "additionalProperties" in result and result["additionalProperties"] is not False:
        raise Unfit(
            pointer,
            "a free-form object (additionalProperties other than false) cannot be strict",
            _STRICT_OPEN,
        )
    if "additionalProperties" not in result:
        if pointer and "properties" not in result:
            # An object with no properties listed is a free-form map: closing it would leave the model no way
            # to send what the tool accepts.
            raise Unfit(
                pointer,
                "a free-form object (no properties listed) cannot be strict",
                _STRICT_OPEN,
            )
        notes.append(
            Rewrite(pointer, _STRICT_OPEN, "additionalProperties: false added")
        )
        result["additionalProperties"] = False
    properties = result.get("properties") or {}
    required = [key for key in result.get("required") or () if key in properties]
    optional = [key for key in properties if key not in required]
    rewritten = {
        key: _strict(sub, f"{pointer}/properties/{_escape(key)}", notes)
        for key, sub in properties.items()
    }
    for key in optional:
        rewritten[key] = _nullable(rewritten[key])
    if optional:
        listed = ", ".join(optional)
        text = f"optional {listed} made required and nullable (null means absent)"
        notes.append(Rewrite(pointer, "openai-strict-required", text))
    result["properties"] = rewritten
    result["required"] = list(properties)


_GEMINI_REF = "gemini-ref"
_GEMINI_TYPE = "gemini-type"
_GEMINI_COMPOSITION = "gemini-composition"
_GEMINI_ANNOTATION = "gemini-annotation"


def gemini_schema(
    schema: Mapping[str, Any], tool: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """`schema` rewritten into Gemini's OpenAPI `parameters` subset, with what changed; raises Unfit on recursion."""
    result, changes = gemini_rewrites(schema)
    return result, [change.note(tool) for change in changes]


def gemini_rewrites(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[Rewrite]]:
    """`schema` rewritten into Gemini's `parameters` subset and each rewrite; raises Unfit where it cannot be."""
    changes: list[Rewrite] = []
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return _gemini(schema, "", changes, defs, ()), changes


def _resolve(ref: Any, pointer: str, defs: Mapping[str, Any]) -> tuple[str, Any]:
    if isinstance(ref, str):
        for prefix in ("#/$defs/", "#/definitions/"):
            # A JSON pointer in a URI fragment: percent-decoded first (RFC 6901, 6).
            name = unquote(ref[len(prefix) :]).replace("~1", "/").replace("~0", "~")
            if ref.startswith(prefix) and name in defs:
                return name, defs[name]
    raise Unfit(
        f"{pointer}/$ref",
        f"$ref {ref!r} does not point into this schema's $defs",
        _GEMINI_REF,
    )


def _gemini(
    node: Any,
    pointer: str,
    notes: list[Rewrite],
    defs: Mapping[str, Any],
    seen: tuple[str, ...],
) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        if node is True:
            return {}
        reason = "a schema of false cannot be expressed in Gemini's subset"
        raise Unfit(pointer, reason, _GEMINI_TYPE)
    if "$ref" in node:
        name, target = _resolve(node["$ref"], pointer, defs)
        if name in seen:
            reason = f"recursive $ref {node['$ref']!r} cannot be inlined"
            raise Unfit(f"{pointer}/$ref", reason, _GEMINI_REF)
        text = f"$ref {node['$ref']} inlined"
        notes.append(Rewrite(pointer, _GEMINI_REF, text, "$ref"))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        merged = {**target, **siblings} if isinstance(target, Mapping) else target
        return _gemini(merged, pointer, notes, defs, (*seen, name))
    result: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in node.items():
        if key in ("$defs", "definitions"):
            continue  # inlined where used
        if key == "allOf" and isinstance(value, list) and len(value) == 1:
            result.update(_gemini(value[0], f"{pointer}/allOf/0", notes, defs, seen))
            text = "single-entry allOf merged into its parent"
            notes.append(Rewrite(pointer, _GEMINI_COMPOSITION, text, "allOf"))
        elif key == "allOf":
            raise Unfit(
                f"{pointer}/allOf",
                "allOf with several schemas cannot be expressed in Gemini's subset",
                _GEMINI_COMPOSITION,
            )
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            if key == "oneOf":
                text = "oneOf sent as anyOf (Gemini's subset has only anyOf)"
                notes.append(Rewrite(pointer, _GEMINI_COMPOSITION, text, "oneOf"))
            branches = [
                _gemini(sub, f"{pointer}/{key}/{i}", notes, defs, seen)
                for i, sub in enumerate(value)
            ]
            result["anyOf"] = [*result.get("anyOf", []), *branches]
        elif key == "properties" and isinstance(value, Mapping):
            result["properties"] = {
                name: _gemini(
                    sub, f"{pointer}/properties/{_escape(name)}", notes, defs, seen
                )
                for name, sub in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            result["items"] = _gemini(value, f"{pointer}/items", notes, defs, seen)
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
    _gemini_type(node, result, pointer, notes)
    checked = [key for key in dropped if key not in _ANNOTATIONS]
    if checked:
        text = f"dropped {', '.join(checked)} (not in Gemini's subset; checked on dispatch)"
        notes.append(Rewrite(pointer, "gemini-keyword", text, checked[0]))
    annotations = [key for key in dropped if key in _ANNOTATIONS]
    if annotations:
        text = f"dropped {', '.join(annotations)} (not in Gemini's subset; annotations, they constrain no argument)"
        notes.append(Rewrite(pointer, _GEMINI_ANNOTATION, text, annotations[0]))
    return result


def _gemini_type(
    node: Mapping[str, Any], result: dict[str, Any], pointer: str, notes: list[Rewrite]
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
            text = f"type {kind} sent as nullable"
            notes.append(Rewrite(pointer, _GEMINI_TYPE, text, "type"))
    if len(kinds) == 1 and kinds[0] in GEMINI_TYPES:
        result["type"] = kinds[0].upper()
    elif len(kinds) > 1:
        result["anyOf"] = [
            *result.get("anyOf", []),
            *({"type": k.upper()} for k in kinds if k in GEMINI_TYPES),
        ]
        text = f"type {kind} sent as anyOf"
        notes.append(Rewrite(pointer, _GEMINI_TYPE, text, "type"))
    values = [node["const"]] if "const" in node else node.get("enum")
    if isinstance(values, list):
        if all(isinstance(v, str) for v in values):
            result["enum"] = list(values)
            result.setdefault("type", "STRING")
            if "const" in node:
                text = "const sent as a one-value enum"
                notes.append(Rewrite(pointer, _GEMINI_TYPE, text, "const"))
        else:
            text = "non-string enum/const dropped (Gemini enums are strings; checked on dispatch)"
            keyword = "const" if "const" in node else "enum"
            notes.append(Rewrite(pointer, _GEMINI_TYPE, text, keyword))


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
