# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Schema rewrites a provider needs before it accepts a tool: OpenAI strict mode and Gemini's OpenAPI subset.

Each rewrite returns the new schema and one Rewrite record per rewrite (where, the lint rule it answers, what was done),
or raises Unfit naming the place that cannot be expressed and its rule. Export prints the changes as notes and
`toolgen lint` reports them as warnings, so the two never disagree on what a rewrite fixes; only a dropped annotation
(`$schema`, `readOnly`...), which changes nothing the model may send, is export's note alone. The inputs are never
modified.

Sources: OpenAI Structured Outputs, "Supported schemas" (every object `additionalProperties: false`, every
property listed in `required`, optional fields as a union with null; unsupported: `allOf`, `not`, `if`/`then`/
`else`, `dependentRequired`, `dependentSchemas`, and the type-specific keywords it lists as not yet supported:
`patternProperties`, `unevaluatedProperties`, `propertyNames`, `minProperties`, `maxProperties` for objects,
`unevaluatedItems`, `contains`, `minContains`, `maxContains`, `uniqueItems` for arrays; the root must be an
object). Gemini `FunctionDeclaration.parameters` takes a `Schema`, "a select subset of an OpenAPI 3.0 schema
object": type (one value), format, title, description, nullable, enum ("the element of Type.STRING"), items
("Schema of the elements of Type.ARRAY": an ARRAY without it is refused, `items: missing field`), min/maxItems,
properties, required (a name its properties do not define is refused), min/maxProperties, min/maxLength,
pattern, example, anyOf, propertyOrdering, default, minimum, maximum; no `$ref`. `parametersJsonSchema` takes
JSON Schema as written and needs none of this.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import unquote

STRICT_UNSUPPORTED = (
    *("allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"),
    # draft-07's spelling of the two dependent* keywords
    "dependencies",
    *("patternProperties", "unevaluatedProperties", "propertyNames"),
    *("minProperties", "maxProperties", "unevaluatedItems", "uniqueItems"),
    *("contains", "minContains", "maxContains"),
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
    """Whether `schema` plainly accepts null (a null type, a null in enum/const, or a branch that does).

    OpenAPI's `nullable` is not among them: JSON Schema, and so the package's check, gives it no meaning.
    """
    if not isinstance(schema, Mapping):
        return schema is True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
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
        if plain and isinstance(kind, (str, list)):
            kinds = [kind] if isinstance(kind, str) else list(kind)
            widened = {**schema, "type": [*kinds, "null"]}
            enum = schema.get("enum")
            # An enum keeps refusing null until null is one of its values.
            if isinstance(enum, list) and None not in enum:
                widened["enum"] = [*enum, None]
            return widened
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
    required = list(result.get("required") or ())
    missing = [key for key in required if key not in properties]
    if missing:
        # The closed object would refuse the very argument `required` asks for.
        raise Unfit(
            f"{pointer}/required",
            f"required names {', '.join(map(str, missing))}, which properties does not list "
            "(strict mode lists every property it may send)",
            "openai-strict-required",
        )
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
_GEMINI_REQUIRED = "gemini-required"
_GEMINI_ROOT = "gemini-root"
# `items: {}` on an ARRAY that had none: what the schema meant already, so export's note alone says it.
_GEMINI_ITEMS = "gemini-items"
# Keywords that leave a root's arguments unconstrained: a root of only these, and no properties, is a function
# without parameters, for which Gemini's `parameters` is left unset.
_UNCONSTRAINING = frozenset(
    (
        *("type", "description", "title", "nullable", "example", "default"),
        *("format", "propertyOrdering"),
    )
)
# What a root without properties may still say of the arguments. `additionalProperties: false` there says "none",
# as `parameters` left unset does; a keyword JSON Schema does not know says nothing.
_ROOT_CONSTRAINTS = frozenset(
    (
        *("required", "additionalProperties", "patternProperties", "propertyNames"),
        *("minProperties", "maxProperties", "dependentRequired", "dependentSchemas"),
        *("dependencies", "unevaluatedProperties", "anyOf", "oneOf", "allOf"),
        *("not", "if", "enum", "const"),
    )
)
# Keywords that apply to one JSON type only: a type list sent as anyOf takes each into its own branch.
_TYPED: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "array": ("items", "minItems", "maxItems"),
        "object": (
            *("properties", "required", "propertyOrdering"),
            *("minProperties", "maxProperties"),
        ),
        "string": ("pattern", "minLength", "maxLength"),
        "number": ("minimum", "maximum"),
        "integer": ("minimum", "maximum"),
    }
)


def gemini_schema(
    schema: Mapping[str, Any], tool: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """A function's input `schema` rewritten into Gemini's OpenAPI `parameters` subset, with what changed; raises
    Unfit where it cannot be (`gemini_parameters`)."""
    result, changes = gemini_parameters(schema)
    return result, [change.note(tool) for change in changes]


def gemini_rewrites(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[Rewrite]]:
    """`schema` rewritten into Gemini's `parameters` subset and each rewrite; raises Unfit where it cannot be."""
    changes: list[Rewrite] = []
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return _gemini(schema, "", changes, defs, ()), changes


def gemini_parameters(
    schema: Mapping[str, Any],
) -> tuple[dict[str, Any], list[Rewrite]]:
    """A function's input schema as `FunctionDeclaration.parameters` and each rewrite; raises Unfit where it cannot
    be, as `gemini_rewrites` does, and for a root without properties that still constrains the arguments: "for
    function with no parameters, this can be left unset", and nothing else can be said without properties."""
    result, changes = gemini_rewrites(schema)
    if result.get("properties"):
        return result, changes
    written = [k for k, v in schema.items() if k in _ROOT_CONSTRAINTS and _says(v)]
    kept = [k for k, v in result.items() if k not in _UNCONSTRAINING and _says(v)]
    found = list(dict.fromkeys([*written, *kept]))
    if found:
        reason = (
            f"a root without properties that still constrains the arguments ({', '.join(found)}); "
            "`parameters` would have to be left unset"
        )
        raise Unfit("", reason, _GEMINI_ROOT)
    return result, changes


def _says(value: Any) -> bool:
    # `true`, `false` (additionalProperties, the only boolean among them), [] and {} leave the arguments open.
    return not (value is True or value is False or value == [] or value == {})


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
    if isinstance(result.get("required"), list):
        _gemini_required(node, result, pointer, notes)
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


def _gemini_required(
    node: Mapping[str, Any], result: dict[str, Any], pointer: str, notes: list[Rewrite]
) -> None:
    """`required` less the names its properties do not define, which Gemini refuses ("property is not defined")."""
    properties = result.get("properties") or {}
    required = result["required"]
    missing = [
        name for name in required if not (isinstance(name, str) and name in properties)
    ]
    if not missing:
        return
    names = ", ".join(map(str, missing))
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    if kinds and "object" not in kinds:
        # `required` applies to objects only: on any other type it constrains nothing.
        del result["required"]
        text = f"required {names} dropped (it applies to objects only, not to {kind}; Gemini refuses it there)"
        notes.append(Rewrite(pointer, _GEMINI_REQUIRED, text, "required"))
        return
    if not properties and not kinds:
        # A branch of required names alone ("one of these must be given") constrains the properties around it.
        reason = f"required {names} with no properties of its own cannot be expressed in Gemini's subset"
        raise Unfit(f"{pointer}/required", reason, _GEMINI_REQUIRED)
    kept = [name for name in required if name not in missing]
    if kept:
        result["required"] = kept
    else:
        del result["required"]
    text = f"required {names} dropped (Gemini refuses a required name its properties do not define; checked on dispatch)"
    notes.append(Rewrite(pointer, _GEMINI_REQUIRED, text, "required"))


def _gemini_type(
    node: Mapping[str, Any], result: dict[str, Any], pointer: str, notes: list[Rewrite]
) -> None:
    """`type` as one upper-case name plus `nullable` (several as anyOf); enum and const as string enums on STRING."""
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
    kinds = _gemini_enum(node, kinds, result, pointer, notes)
    if len(kinds) == 1 and kinds[0] in GEMINI_TYPES:
        result["type"] = kinds[0].upper()
        _with_items(result, pointer, notes)
    elif len(kinds) > 1:
        branches = [
            _typed_branch(k, result, pointer, notes) for k in kinds if k in GEMINI_TYPES
        ]
        for key in {key for k in kinds for key in _TYPED.get(k, ())}:
            result.pop(key, None)
        result["anyOf"] = [*result.get("anyOf", []), *branches]
        text = f"type {kind} sent as anyOf"
        notes.append(Rewrite(pointer, _GEMINI_TYPE, text, "type"))


def _gemini_enum(
    node: Mapping[str, Any],
    kinds: list[str],
    result: dict[str, Any],
    pointer: str,
    notes: list[Rewrite],
) -> list[str]:
    """Sets the string enum Gemini takes (on STRING only) and returns the types left: strings alone can match it."""
    values = [node["const"]] if "const" in node else node.get("enum")
    if not isinstance(values, list):
        return kinds
    keyword = "const" if "const" in node else "enum"
    strings = [v for v in values if v is not None]
    if not strings or not all(isinstance(v, str) for v in strings):
        text = "non-string enum/const dropped (Gemini enums are strings; checked on dispatch)"
        notes.append(Rewrite(pointer, _GEMINI_TYPE, text, keyword))
        return kinds
    if kinds and "string" not in kinds:
        # Gemini refuses an enum on any type but STRING; no value of this type can equal a string anyway.
        text = f"enum of strings on type {node.get('type')} dropped (Gemini takes an enum on STRING only; checked on dispatch)"
        notes.append(Rewrite(pointer, _GEMINI_TYPE, text, keyword))
        return kinds
    result["enum"] = strings
    if len(strings) < len(values) and not kinds:
        # A null among the values of an untyped enum: Gemini says that with nullable.
        result["nullable"] = True
        notes.append(
            Rewrite(
                pointer, _GEMINI_TYPE, f"null in {keyword} sent as nullable", keyword
            )
        )
    if len(kinds) > 1:
        text = (
            f"type {node.get('type')} sent as STRING (its {keyword} holds strings only)"
        )
        notes.append(Rewrite(pointer, _GEMINI_TYPE, text, "type"))
    if keyword == "const":
        notes.append(
            Rewrite(pointer, _GEMINI_TYPE, "const sent as a one-value enum", "const")
        )
    return ["string"]


def _typed_branch(
    kind: str, result: Mapping[str, Any], pointer: str, notes: list[Rewrite]
) -> dict[str, Any]:
    """One type of a type list as an anyOf branch, with the keywords that apply to that type only."""
    branch = {
        "type": kind.upper(),
        **{k: result[k] for k in _TYPED.get(kind, ()) if k in result},
    }
    _with_items(branch, pointer, notes)
    return branch


def _with_items(result: dict[str, Any], pointer: str, notes: list[Rewrite]) -> None:
    """An ARRAY with `items: {}` where it had none: Gemini refuses an ARRAY without items, and {} is any element."""
    if result.get("type") == "ARRAY" and "items" not in result:
        result["items"] = {}
        text = "items: {} added (Gemini needs items on an ARRAY; {} lets any element through, as no items did)"
        notes.append(Rewrite(pointer, _GEMINI_ITEMS, text, "type"))


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
