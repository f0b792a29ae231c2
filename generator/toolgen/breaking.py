"""Breaking-change rules: every change between two versions of the tools, breaking (error) or safe (warning)."""

from __future__ import annotations

import json
import posixpath
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolgen.diagnostics import Diagnostic, Severity, normalized
from toolgen.errors import InvalidInputError
from toolgen.ir import freeze, thaw
from toolgen.lint import Rule
from toolgen.load import Document
from toolgen.lower import Lowered
from toolgen.positions import Pointer, json_positions
from toolgen.shapes import RawTool

_E, _W = Severity.ERROR, Severity.WARNING
RULES: Mapping[str, Rule] = MappingProxyType(
    {
        rule.id: rule
        for rule in (
            Rule("tool-removed", _E, "a tool is gone: calls to it fail"),
            Rule("tool-renamed", _E, "a tool has a new name (same input schema): calls by the old name fail"),
            Rule("tool-added", _W, "a new tool"),
            Rule("model-renamed", _E, "the generated Args/Result class has a new name: Python imports break"),
            Rule("return-direct-changed", _E, "the result now goes to the user instead of the model, or back"),
            Rule("requires-approval-added", _E, "calls now wait for approval; a loop without an approval hook stops"),
            Rule("requires-approval-removed", _W, "calls no longer wait for approval (review the risk)"),
            Rule("strict-changed", _E, "OpenAI strict mode turned on or off: enforcement and null-for-absent change"),
            Rule("timeout-changed", _W, "the tool's timeout changed"),
            Rule("description-changed", _W, "a title, description or other annotation changed"),
            Rule("default-changed", _W, "a default changed: the generated model fills in another value"),
            Rule("result-schema-removed", _E, "the tool no longer declares a result: its Result model is gone"),
            Rule("result-schema-added", _W, "the tool now declares a result"),
            Rule("argument-removed", _E, "an argument is gone: callers that send it or read it break"),
            Rule("required-argument-added", _E, "a new required argument: existing calls lack it"),
            Rule("argument-added", _W, "a new optional argument"),
            Rule("argument-made-required", _E, "an optional argument is now required"),
            Rule("argument-made-optional", _W, "a required argument is now optional"),
            Rule("argument-type-narrowed", _E, "an argument accepts fewer types (number -> integer, null dropped)"),
            Rule("argument-type-widened", _W, "an argument accepts more types (its Python type changes)"),
            Rule("argument-enum-value-removed", _E, "an argument accepts fewer values (enum value removed or added)"),
            Rule("argument-enum-value-added", _W, "an argument accepts more values"),
            Rule("argument-const-changed", _E, "an argument's const value changed"),
            Rule("argument-constraint-tightened", _E, "a maxLength/maximum/minimum/pattern/minItems/... is stricter"),
            Rule("argument-constraint-loosened", _W, "a constraint on an argument is looser"),
            Rule("argument-object-closed", _E, "an object now refuses properties it does not list"),
            Rule("argument-object-opened", _W, "an object now accepts properties it does not list"),
            Rule("argument-schema-changed", _E, "a keyword toolgen cannot classify changed (allOf, not, if, ...)"),
            Rule("result-field-removed", _E, "a result field is gone: readers of it break"),
            Rule("result-field-added", _W, "a new result field"),
            Rule("result-field-made-optional", _E, "a result field may now be missing: readers break"),
            Rule("result-field-made-required", _W, "a result field is now always present"),
            Rule("result-type-widened", _E, "a result field may have a type readers do not expect (null added, ...)"),
            Rule("result-type-narrowed", _W, "a result field has fewer types"),
            Rule("result-enum-value-added", _E, "a result field may have a value readers do not expect"),
            Rule("result-enum-value-removed", _W, "a result field has fewer values"),
            Rule("result-const-changed", _E, "a result field's const value changed"),
            Rule("result-constraint-loosened", _E, "a constraint on a result field is looser than readers rely on"),
            Rule("result-constraint-tightened", _W, "a constraint on a result field is stricter"),
            Rule("result-object-closed", _W, "a result object now lists all its properties"),
            Rule("result-object-opened", _W, "a result object may carry extra properties (readers ignore them)"),
            Rule("result-schema-changed", _E, "a result keyword toolgen cannot classify changed (allOf, not, ...)"),
        )
    }
)
# What one schema change means, by kind: (its rule for arguments, its rule for results).
_KIND_RULES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "removed": ("argument-removed", "result-field-removed"),
        "added-required": ("required-argument-added", "result-field-added"),
        "added-optional": ("argument-added", "result-field-added"),
        "made-required": ("argument-made-required", "result-field-made-required"),
        "made-optional": ("argument-made-optional", "result-field-made-optional"),
        "narrowed": ("argument-type-narrowed", "result-type-narrowed"),
        "widened": ("argument-type-widened", "result-type-widened"),
        "values-removed": ("argument-enum-value-removed", "result-enum-value-removed"),
        "values-added": ("argument-enum-value-added", "result-enum-value-added"),
        "const-changed": ("argument-const-changed", "result-const-changed"),
        "tightened": ("argument-constraint-tightened", "result-constraint-tightened"),
        "loosened": ("argument-constraint-loosened", "result-constraint-loosened"),
        # both stricter and looser (another pattern): breaking for callers and for readers
        "reshaped": ("argument-constraint-tightened", "result-constraint-loosened"),
        "closed": ("argument-object-closed", "result-object-closed"),
        "opened": ("argument-object-opened", "result-object-opened"),
        "unclassified": ("argument-schema-changed", "result-schema-changed"),
        "annotation": ("description-changed", "description-changed"),
        "default": ("default-changed", "default-changed"),
    }
)
FAMILIES = ("null", "boolean", "object", "array", "string", "number")
_TYPE_FAMILY: Mapping[str, str] = MappingProxyType({**{f: f for f in FAMILIES}, "integer": "number"})
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    }
)
_UPPER = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
_LOWER = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
_CONSTRAINTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "string": ("minLength", "maxLength", "pattern"),
        "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
        "array": ("minItems", "maxItems", "uniqueItems"),
        "object": ("minProperties", "maxProperties"),
    }
)
# Keywords that hold or name schemas without saying anything about the value.
_CONTAINERS = frozenset({"$defs", "definitions", "$schema", "$id", "$anchor"})
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "default",
        "$ref",
        *_CONTAINERS,
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "additionalItems",
        "allOf",
        *_ANNOTATIONS,
        *(keyword for keywords in _CONSTRAINTS.values() for keyword in keywords),
    }
)
SNAPSHOT_FORMAT = "toolgen-breaking-snapshot"
# How a change is said of an argument (what it accepts) and of a result (what it can be).
_PHRASES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "lost": ("no longer accepts", "can no longer be"),
        "gained": ("now also accepts", "can now also be"),
        "only": ("now accepts only", "can now only be"),
        "any": ("now accepts any type", "can now be any type"),
        "nothing": ("no longer accepts any value", "can no longer have any value"),
        "closed": ("no longer accepts properties it does not list", "no longer carries properties it does not list"),
        "opened": ("now accepts properties it does not list", "may now carry properties it does not list"),
    }
)


@dataclass(frozen=True)
class ToolSnapshot:
    """What `breaking` compares of one tool; an exported snapshot file is a list of these."""

    name: str
    source: str
    line: int
    col: int
    args_model: str
    result_model: str | None
    input_schema: str  # JSON text, as in the IR
    output_schema: str | None
    return_direct: bool = False
    requires_approval: bool = False
    strict: bool | None = None
    timeout: float | None = None
    title: str | None = None
    description: str | None = None


# Snapshot file key, attribute, accepted JSON types (None: null allowed).
_SNAPSHOT_FIELDS: tuple[tuple[str, str, tuple[type | None, ...]], ...] = (
    ("name", "name", (str,)),
    ("source", "source", (str,)),
    ("line", "line", (int,)),
    ("col", "col", (int,)),
    ("argsModel", "args_model", (str,)),
    ("resultModel", "result_model", (str, None)),
    ("inputSchema", "input_schema", (dict, bool)),
    ("outputSchema", "output_schema", (dict, bool, None)),
    ("returnDirect", "return_direct", (bool,)),
    ("requiresApproval", "requires_approval", (bool,)),
    ("strict", "strict", (bool, None)),
    ("timeout", "timeout", (int, float, None)),
    ("title", "title", (str, None)),
    ("description", "description", (str, None)),
)


def snapshot(lowered: Lowered) -> tuple[ToolSnapshot, ...]:
    """The lowered project's tools as `breaking` compares them, sorted by name."""
    raws = {str(raw.value("name")): raw for raw, _ in lowered.sources}
    tools = []
    for tool in lowered.project.tools:
        raw = raws.get(tool.name)
        line, col = raw.document.locate(raw.where("name")) if raw else (1, 1)
        tools.append(
            ToolSnapshot(
                tool.name,
                tool.source,
                line,
                col,
                tool.args_model,
                tool.result_model,
                tool.input_schema,
                tool.output_schema,
                tool.return_direct,
                tool.requires_approval,
                tool.strict,
                tool.timeout,
                tool.title,
                tool.description,
            )
        )
    return tuple(sorted(tools, key=lambda t: t.name))


def dump_snapshot(tools: Iterable[ToolSnapshot]) -> str:
    """The stable JSON export of `tools`, for `breaking --against FILE`."""
    entries = [
        {
            key: thaw(getattr(t, attr)) if key.endswith("Schema") else getattr(t, attr)
            for key, attr, _ in _SNAPSHOT_FIELDS
        }
        for t in sorted(tools, key=lambda t: t.name)
    ]
    return json.dumps({"format": SNAPSHOT_FORMAT, "version": 1, "tools": entries}, indent=2, ensure_ascii=False) + "\n"


def _snapshot_error(display: str, text: str, pointer: Pointer, message: str) -> InvalidInputError:
    line, col = json_positions(text).get(pointer, (1, 1)) if pointer else (1, 1)
    return InvalidInputError([Diagnostic(display, line, col, _E, "snapshot-invalid", message)])


def _fits(value: Any, accepted: tuple[type | None, ...]) -> bool:
    if value is None or isinstance(value, bool):
        return (None if value is None else bool) in accepted
    return any(kind is not None and kind is not bool and isinstance(value, kind) for kind in accepted)


def load_snapshot(text: str, display: str) -> tuple[ToolSnapshot, ...]:
    """Read a file written by dump_snapshot; anything else raises InvalidInputError (rule snapshot-invalid)."""
    try:
        data = json.loads(text)
    except ValueError as error:
        line, col = (error.lineno, error.colno) if isinstance(error, json.JSONDecodeError) else (1, 1)
        message = f"not a toolgen breaking snapshot (invalid JSON: {error}); write one with `toolgen breaking --export`"
        raise InvalidInputError([Diagnostic(display, line, col, _E, "snapshot-invalid", message)]) from None
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT or data.get("version") != 1:
        message = f"not a version 1 {SNAPSHOT_FORMAT} file; write one with `toolgen breaking --export`"
        raise _snapshot_error(display, text, (), message)
    if not isinstance(data.get("tools"), list):
        raise _snapshot_error(display, text, ("tools",), "'tools' must be a list")
    tools = []
    for index, entry in enumerate(data["tools"]):
        where = ("tools", str(index))
        if not isinstance(entry, dict):
            raise _snapshot_error(display, text, where, "a tool entry must be an object")
        values: dict[str, Any] = {}
        for key, attr, accepted in _SNAPSHOT_FIELDS:
            value = entry.get(key)
            if not _fits(value, accepted):
                raise _snapshot_error(
                    display, text, (*where, key), f"tool entry {index}: {key!r} is missing or invalid"
                )
            values[attr] = freeze(value) if key.endswith("Schema") and value is not None else value
        tools.append(ToolSnapshot(**values))
    return tuple(tools)


@dataclass(frozen=True)
class _Place:
    """Where a schema of the current side is written: the deepest pointer known exactly, and the node there."""

    pointer: Pointer
    node: Any
    exact: bool = True

    def step(self, *keys: str) -> _Place:
        node, pointer = self.node, self.pointer
        if not self.exact:
            return self
        for key in keys:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return _Place(pointer, None, False)
            pointer = (*pointer, key)
        return _Place(pointer, node)


_NOWHERE = _Place((), None, False)


@dataclass(frozen=True)
class _Side:
    """One schema of one side, and its identity: the bundled $def it sits in and the path inside it."""

    value: Any
    ident: Pointer


@dataclass(frozen=True)
class _Ctx:
    """One comparison of a tool's input (direction 0) or output (direction 1) schema."""

    direction: int
    tool: str
    old_defs: Mapping[str, Any]
    new_defs: Mapping[str, Any]
    document: Document
    root: Pointer
    seen: set[tuple[Pointer, Pointer]] = field(default_factory=set)

    def label(self, path: Sequence[str]) -> str:
        if not path:
            return ("the arguments", "the result")[self.direction]
        text = "".join(part if part.startswith("[") else "." + part for part in path).lstrip(".")
        return f"{('argument', 'result field')[self.direction]} {text!r}"

    def says(self, phrase: str) -> str:
        return _PHRASES[phrase][self.direction]

    def finding(self, kind: str, place: _Place, text: str) -> Diagnostic:
        rule = _KIND_RULES[kind][self.direction]
        return self.document.key_diagnostic(place.pointer, rule, f"{self.tool}: {text}", RULES[rule].severity)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _show(values: Iterable[Any]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _resolve(side: _Side, defs: Mapping[str, Any]) -> _Side:
    """Follow `$ref`s into the bundled $defs; siblings of a `$ref` are kept."""
    value, ident = side.value, side.ident
    for _ in range(64):  # the bundler has refused chains that only loop
        ref = value.get("$ref") if isinstance(value, dict) else None
        target = defs.get(ref.removeprefix("#/$defs/")) if isinstance(ref, str) else None
        if ref is None or target is None:
            break
        siblings = {k: v for k, v in value.items() if k != "$ref"}
        value = {**target, **siblings} if isinstance(target, dict) else (siblings or target)
        # the same definition with other siblings (`maxLength` next to the `$ref`) is another schema
        own = {k: v for k, v in siblings.items() if k not in _CONTAINERS}
        ident = (str(ref), _canonical(own)) if own else (str(ref),)
    return _Side(value, ident)


def _local_target(ctx: _Ctx, ref: str) -> _Place | None:
    file_part, _, fragment = ref.partition("#")
    display = ctx.document.display
    base = ctx.root
    if file_part:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(display), urllib.parse.unquote(file_part)))
        if target != display:
            return None  # another file: findings stay at the $ref
        base = ()
    fragment = urllib.parse.unquote(fragment)
    if fragment and not fragment.startswith("/"):
        return None
    parts = tuple(p.replace("~1", "/").replace("~0", "~") for p in fragment[1:].split("/")) if fragment else ()
    place = _Place((), ctx.document.data).step(*base, *parts)
    return place if place.exact else None


def _follow(ctx: _Ctx, place: _Place) -> _Place:
    """The place a `$ref` written at `place` leads to within the same file."""
    for _ in range(64):
        ref = place.node.get("$ref") if place.exact and isinstance(place.node, dict) else None
        if not isinstance(ref, str):
            return place
        target = _local_target(ctx, ref)
        if target is None:
            return _Place(place.pointer, None, False)
        place = target
    return place


def _union_key(value: Any) -> str | None:
    """The keyword of a pure union (anyOf or oneOf with nothing but annotations beside it), else None."""
    if not isinstance(value, dict):
        return None
    keys = [k for k in ("anyOf", "oneOf") if isinstance(value.get(k), list)]
    rest = set(value) - {*keys, "default", *_ANNOTATIONS}
    return keys[0] if len(keys) == 1 and not any(not k.startswith("x-") for k in rest) else None


def _branches(ctx: _Ctx, side: _Side, defs: Mapping[str, Any], place: _Place) -> list[tuple[_Side, _Place]]:
    """The alternatives of a schema: the members of a pure anyOf/oneOf (nested ones flattened), else itself."""
    pending, result, seen = [(side, place)], [], set()
    while pending:
        current, where = pending.pop(0)
        current, where = _resolve(current, defs), _follow(ctx, where)
        key = _union_key(current.value)
        if key is None or current.ident in seen:
            result.append((current, where))
            continue
        seen.add(current.ident)
        members = [
            (_Side(member, (*current.ident, key, str(i))), where.step(key, str(i)))
            for i, member in enumerate(current.value[key])
        ]
        pending[0:0] = members
    return result


def _declared(schema: Any) -> list[str]:
    kinds = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kinds, str):
        return [kinds]
    return [k for k in kinds if isinstance(k, str)] if isinstance(kinds, list) else []


def _value_family(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "null" if value is None else "boolean"
    kinds = {dict: "object", list: "array", str: "string"}
    return next((name for kind, name in kinds.items() if isinstance(value, kind)), "number")


def _values(schema: Any) -> list[Any] | None:
    """The values `const`/`enum` allow (that fit `type`), or None when they do not restrict the schema."""
    if not isinstance(schema, dict) or ("const" not in schema and not isinstance(schema.get("enum"), list)):
        return None
    values = [schema["const"]] if "const" in schema else list(schema["enum"])
    if isinstance(schema.get("enum"), list) and "const" in schema:
        values = [v for v in values if _canonical(v) in {_canonical(e) for e in schema["enum"]}]
    declared = {_TYPE_FAMILY.get(t, t) for t in _declared(schema)}
    return [v for v in values if not declared or _value_family(v) in declared]


def _families(schema: Any) -> list[str]:
    if schema is False:
        return []
    declared = {_TYPE_FAMILY[t] for t in _declared(schema) if t in _TYPE_FAMILY}
    values = _values(schema)
    allowed = {_value_family(v) for v in values} if values is not None else set(FAMILIES)
    return [f for f in FAMILIES if f in allowed and (not declared or f in declared)]


def _value_only(schema: Any) -> bool:
    rest = set(_dict(schema)) - {"type", "enum", "const", "default", *_ANNOTATIONS}
    return _values(schema) is not None and not any(not k.startswith("x-") for k in rest)


Branch = tuple[_Side, _Place]


def _by_family(branches: Iterable[Branch]) -> dict[str, list[Branch]]:
    groups: dict[str, list[Branch]] = {}
    for branch in branches:
        for family in _families(branch[0].value):
            groups.setdefault(family, []).append(branch)
    return groups


def _node(ctx: _Ctx, old: _Side, new: _Side, place: _Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    """Every change between two schemas at the same place (followed through `$ref`s, each pair compared once)."""
    old, new, place = _resolve(old, ctx.old_defs), _resolve(new, ctx.new_defs), _follow(ctx, place)
    if (old.ident, new.ident) in ctx.seen:
        return
    ctx.seen.add((old.ident, new.ident))
    yield from _annotations(ctx, old.value, new.value, place, path)
    old_branches = _branches(ctx, old, ctx.old_defs, _NOWHERE)
    new_branches = _branches(ctx, new, ctx.new_defs, place)
    if all(_value_only(side.value) for side, _ in (*old_branches, *new_branches)):
        yield from _value_sets(ctx, old_branches, new_branches, place, path)
        return
    olds, news = _by_family(old_branches), _by_family(new_branches)
    yield from _families_changed(ctx, olds, news, place, path)
    members = _union_key(old.value) is not None and _union_key(new.value) is not None
    for family in FAMILIES:
        if family in olds and family in news:
            yield from _family(ctx, family, (olds[family], news[family]), place, path, members)


def _annotations(ctx: _Ctx, old: Any, new: Any, place: _Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    old, new = _dict(old), _dict(new)
    for key in sorted(old.keys() | new.keys()):
        if _canonical(old.get(key)) == _canonical(new.get(key)):
            continue
        if key in _ANNOTATIONS or key.startswith("x-"):
            yield ctx.finding("annotation", place.step(key), f"{ctx.label(path)}: {key} changed")
        elif key == "default":
            before = _show([old[key]]) if key in old else "none"
            after = _show([new[key]]) if key in new else "none"
            yield ctx.finding("default", place.step(key), f"{ctx.label(path)}: default {before} -> {after}")


def _type_names(groups: Mapping[str, Sequence[Branch]], families: Iterable[str]) -> str:
    """`families` as a reader says them: "integer" when every number alternative is one."""
    names = [
        "integer" if f == "number" and all(_integer(_dict(side.value)) for side, _ in groups[f]) else f
        for f in FAMILIES
        if f in families
    ]
    return " or ".join(names) or "nothing"


def _families_changed(
    ctx: _Ctx,
    olds: Mapping[str, Sequence[Branch]],
    news: Mapping[str, Sequence[Branch]],
    place: _Place,
    path: tuple[str, ...],
) -> Iterator[Diagnostic]:
    lost = [f for f in olds if f not in news]
    gained = [f for f in news if f not in olds]
    where, label = place.step("type"), ctx.label(path)
    if lost and not news:
        yield ctx.finding("narrowed", where, f"{label} {ctx.says('nothing')}")
    elif lost and len(olds) == len(FAMILIES):
        yield ctx.finding("narrowed", where, f"{label} is now {_type_names(news, news)}, was any type")
    elif lost:
        yield ctx.finding("narrowed", where, f"{label} {ctx.says('lost')} {_type_names(olds, lost)}")
    if gained and len(news) == len(FAMILIES):
        yield ctx.finding("widened", where, f"{label} {ctx.says('any')}, was {_type_names(olds, olds)}")
    elif gained:
        yield ctx.finding("widened", where, f"{label} {ctx.says('gained')} {_type_names(news, gained)}")


def _merged_values(branches: Sequence[Branch]) -> tuple[list[Any], bool]:
    """The values a set of value-only alternatives allows, and whether they are said with `const`."""
    values: dict[str, Any] = {}
    for side, _ in branches:
        values.update((_canonical(v), v) for v in _values(side.value) or [])
    return list(values.values()), any(isinstance(s.value, dict) and "const" in s.value for s, _ in branches)


def _value_sets(
    ctx: _Ctx, olds: Sequence[Branch], news: Sequence[Branch], place: _Place, path: tuple[str, ...]
) -> Iterator[Diagnostic]:
    (old, old_const), (new, new_const) = _merged_values(olds), _merged_values(news)
    where = place.step("enum") if "enum" in _dict(place.node) else place.step("const")
    if old_const and new_const and len(old) == len(new) == 1:
        if _canonical(old) != _canonical(new):
            yield ctx.finding("const-changed", where, f"{ctx.label(path)} must now be {_show(new)}, was {_show(old)}")
        return
    yield from _value_change(ctx, old, new, where, path)


def _value_change(
    ctx: _Ctx, old: list[Any] | None, new: list[Any] | None, where: _Place, path: tuple[str, ...]
) -> Iterator[Diagnostic]:
    label = ctx.label(path)
    if old is None or new is None:
        if old is None and new is not None:
            yield ctx.finding("values-removed", where, f"{label} {ctx.says('only')} {_show(new)}")
        elif old is not None:
            yield ctx.finding("values-added", where, f"{label} is no longer limited to {_show(old)}")
        return
    old_keys, new_keys = {_canonical(v) for v in old}, {_canonical(v) for v in new}
    removed = [v for v in old if _canonical(v) not in new_keys]
    added = [v for v in new if _canonical(v) not in old_keys]
    if removed:
        yield ctx.finding("values-removed", where, f"{label} {ctx.says('lost')} {_show(removed)}")
    if added:
        yield ctx.finding("values-added", where, f"{label} {ctx.says('gained')} {_show(added)}")


def _pairs(
    olds: Sequence[Branch], news: Sequence[Branch]
) -> tuple[list[tuple[Branch, Branch]], list[Branch], list[Branch]]:
    """Alternatives matched across sides: same $ref first, then equal schemas, then in order."""
    left, right, pairs = list(olds), list(news), []
    matchers = (
        lambda a, b: len(a[0].ident) == 1 and a[0].ident == b[0].ident,
        lambda a, b: _canonical(a[0].value) == _canonical(b[0].value),
        lambda a, b: True,
    )
    for matches in matchers:
        for old in list(left):
            new = next((n for n in right if matches(old, n)), None)
            if new is not None:
                pairs.append((old, new))
                left.remove(old)
                right.remove(new)
    return pairs, left, right


def _family(
    ctx: _Ctx,
    family: str,
    sides: tuple[Sequence[Branch], Sequence[Branch]],
    place: _Place,
    path: tuple[str, ...],
    members: bool,
) -> Iterator[Diagnostic]:
    """Changes among the alternatives of one JSON type; `members`: both sides are unions, compare their annotations."""
    olds, news = sides
    if all(_value_only(side.value) for side, _ in (*olds, *news)):
        yield from _value_sets(ctx, olds, news, place, path)
        return
    pairs, lost, gained = _pairs(olds, news)
    for (old, _), (new, where) in pairs:
        if members:
            yield from _annotations(ctx, old.value, new.value, where, path)
        yield from _branch(ctx, family, old, new, where, path)
    for side, where in [*lost, *gained]:
        gone = any(side is s for s, _ in lost)
        values = _values(side.value)
        kind = ("values-removed" if gone else "values-added") if values else ("narrowed" if gone else "widened")
        what = f"{ctx.says('lost' if gone else 'gained')} {_show(values)}" if values else None
        text = what or f"{'lost' if gone else 'gained'} one of its {family} alternatives"
        yield ctx.finding(kind, place if gone else where, f"{ctx.label(path)} {text}")


def _branch(
    ctx: _Ctx, family: str, old: _Side, new: _Side, place: _Place, path: tuple[str, ...]
) -> Iterator[Diagnostic]:
    """Changes between two alternatives of the same JSON type."""
    o, n = _dict(old.value), _dict(new.value)
    if family == "number":
        yield from _numeric(ctx, o, n, place, path)
    if _values(o) is not None or _values(n) is not None:
        where = place.step("enum") if "enum" in n else place.step("const")
        yield from _value_change(ctx, _values(o), _values(n), where, path)
    for keyword in _CONSTRAINTS.get(family, ()):
        change = _constraint(keyword, o.get(keyword), n.get(keyword))
        if change:
            yield ctx.finding(change[0], place.step(keyword), f"{ctx.label(path)}: {change[1]}")
    if family == "object":
        yield from _object(ctx, old, new, place, path)
    if family == "array":
        yield from _array(ctx, old, new, place, path)
    yield from _unclassified(ctx, old, new, place, path)


def _integer(schema: dict[str, Any]) -> bool:
    declared = _declared(schema)
    return "integer" in declared and "number" not in declared


def _numeric(
    ctx: _Ctx, old: dict[str, Any], new: dict[str, Any], place: _Place, path: tuple[str, ...]
) -> Iterator[Diagnostic]:
    if _integer(new) and not _integer(old):
        yield ctx.finding("narrowed", place.step("type"), f"{ctx.label(path)} is now an integer, was any number")
    elif _integer(old) and not _integer(new):
        yield ctx.finding("widened", place.step("type"), f"{ctx.label(path)} is now any number, was an integer")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _constraint(keyword: str, old: Any, new: Any) -> tuple[str, str] | None:
    """(kind of change, what changed), or None when nothing did; kinds as in _KIND_RULES."""
    if keyword == "uniqueItems":
        if bool(old) == bool(new):
            return None
        return ("tightened", "now requires unique items") if new else ("loosened", "no longer requires unique items")
    if _canonical(old) == _canonical(new):
        return None
    if new is None:
        return "loosened", f"{keyword} {_show([old])} was removed"
    if old is None:
        return "tightened", f"now has {keyword} {_show([new])}"
    change = f"{keyword} {_show([old])} -> {_show([new])}"
    if keyword == "pattern":
        return "reshaped", change  # regular expressions cannot be compared: the new one may refuse more and allow more
    if not (_number(old) and _number(new)):
        return "unclassified", change
    if keyword == "multipleOf" and old and new:
        kinds = {(True, False): "loosened", (False, True): "tightened"}
        return kinds.get(((old / new).is_integer(), (new / old).is_integer()), "reshaped"), change
    return ("tightened" if (new < old if keyword in _UPPER else new > old) else "loosened"), change


def _names(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    properties = schema.get("properties")
    required = schema.get("required")
    return (
        properties if isinstance(properties, dict) else {},
        [r for r in required if isinstance(r, str)] if isinstance(required, list) else [],
    )


def _object(ctx: _Ctx, old: _Side, new: _Side, place: _Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    (old_props, old_required), (new_props, new_required) = _names(_dict(old.value)), _names(_dict(new.value))
    names = list(dict.fromkeys([*new_props, *new_required, *old_props, *old_required]))
    for name in names:
        was, now = name in old_props or name in old_required, name in new_props or name in new_required
        where, child = place.step("properties", name), (*path, name)
        label = ctx.label(child)
        if was and not now:
            yield ctx.finding("removed", place.step("properties"), f"{label} was removed")
        elif now and not was:
            required = name in new_required
            kind = "added-required" if required else "added-optional"
            yield ctx.finding(kind, where, f"new {'required' if required else 'optional'} {label}")
        else:
            if (name in new_required) != (name in old_required):
                kind = "made-required" if name in new_required else "made-optional"
                yield ctx.finding(kind, where, f"{label} is now {'required' if name in new_required else 'optional'}")
            yield from _node(
                ctx,
                _Side(old_props.get(name, True), (*old.ident, "properties", name)),
                _Side(new_props.get(name, True), (*new.ident, "properties", name)),
                where,
                child,
            )
    yield from _additional(ctx, old, new, place, path)


def _additional(ctx: _Ctx, old: _Side, new: _Side, place: _Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    o, n = _dict(old.value), _dict(new.value)
    before, after = o.get("additionalProperties", True), n.get("additionalProperties", True)
    where = place.step("additionalProperties")
    if after is False and before is not False:
        yield ctx.finding("closed", where, f"{ctx.label(path)} {ctx.says('closed')} (additionalProperties: false)")
    elif before is False and after is not False:
        yield ctx.finding("opened", where, f"{ctx.label(path)} {ctx.says('opened')}")
    elif before is not False and ("additionalProperties" in o or "additionalProperties" in n):
        yield from _node(
            ctx,
            _Side(before, (*old.ident, "additionalProperties")),
            _Side(after, (*new.ident, "additionalProperties")),
            where,
            (*path, "*"),
        )


def _tuple_form(schema: dict[str, Any]) -> tuple[list[Any], str, Any, str]:
    """Positional item schemas and their keyword, then the schema of the rest and its keyword (both drafts)."""
    items = schema.get("items")
    if isinstance(items, list):
        return items, "items", schema.get("additionalItems", True), "additionalItems"
    prefix = schema.get("prefixItems")
    return (prefix if isinstance(prefix, list) else []), "prefixItems", (True if items is None else items), "items"


def _item(side: _Side, prefix: list[Any], key: str, index: int, rest: Any, rest_key: str) -> _Side:
    """The schema of position `index` of an array: its positional schema, else the schema of the rest."""
    if index < len(prefix):
        return _Side(prefix[index], (*side.ident, key, str(index)))
    return _Side(rest, (*side.ident, rest_key))


def _array(ctx: _Ctx, old: _Side, new: _Side, place: _Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    o, n = _dict(old.value), _dict(new.value)
    old_prefix, old_key, old_rest, old_rest_key = _tuple_form(o)
    new_prefix, new_key, new_rest, new_rest_key = _tuple_form(n)
    for i in range(max(len(old_prefix), len(new_prefix))):
        before = _item(old, old_prefix, old_key, i, old_rest, old_rest_key)
        after = _item(new, new_prefix, new_key, i, new_rest, new_rest_key)
        yield from _node(ctx, before, after, place.step(*after.ident[len(new.ident) :]), (*path, f"[{i}]"))
    if {"items", "additionalItems"} & (o.keys() | n.keys()):
        yield from _node(
            ctx,
            _Side(old_rest, (*old.ident, old_rest_key)),
            _Side(new_rest, (*new.ident, new_rest_key)),
            place.step(new_rest_key),
            (*path, "[]"),
        )


def _unclassified(ctx: _Ctx, old: _Side, new: _Side, place: _Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    o, n = _dict(old.value), _dict(new.value)
    old_all, new_all = o.get("allOf"), n.get("allOf")
    if isinstance(old_all, list) and isinstance(new_all, list) and len(old_all) == len(new_all):
        for i, (before, after) in enumerate(zip(old_all, new_all, strict=True)):
            yield from _node(
                ctx,
                _Side(before, (*old.ident, "allOf", str(i))),
                _Side(after, (*new.ident, "allOf", str(i))),
                place.step("allOf", str(i)),
                path,
            )
        unknown = (o.keys() | n.keys()) - _HANDLED
    else:
        unknown = (o.keys() | n.keys()) - (_HANDLED - {"allOf"})
    old_ref, new_ref = o.get("$ref"), n.get("$ref")
    if old_ref != new_ref and any(isinstance(r, str) and not r.startswith("#/$defs/") for r in (old_ref, new_ref)):
        # A reference left as written (a published meta-schema) is opaque here: any change to it may narrow.
        text = f"{ctx.label(path)}: '$ref' changed from {old_ref!r} to {new_ref!r}; toolgen cannot tell whether this breaks callers"
        yield ctx.finding("unclassified", place.step("$ref"), text)
    for keyword in sorted(k for k in unknown if not k.startswith("x-")):
        if _canonical(o.get(keyword)) != _canonical(n.get(keyword)):
            text = f"{ctx.label(path)}: {keyword!r} changed; toolgen cannot tell whether this breaks callers"
            yield ctx.finding("unclassified", place.step(keyword), text)


def _tool_finding(raw: RawTool, key: str, rule: str, message: str) -> Diagnostic:
    return raw.document.key_diagnostic(raw.where(key), rule, message, RULES[rule].severity)


def _flags(old: ToolSnapshot, new: ToolSnapshot, raw: RawTool, renamed: bool) -> Iterator[Diagnostic]:
    """Changes of the tool's own fields: its generated classes, returnDirect, approval, strict, timeout, texts."""
    name = new.name
    models = [(old.args_model, new.args_model, "arguments")]
    models += [(old.result_model, new.result_model, "result")] if old.result_model and new.result_model else []
    for before, after, what in models:
        if before != after and not renamed:  # a renamed tool's classes are renamed with it
            yield _tool_finding(
                raw, "name", "model-renamed", f"{name}: the generated {what} class is now {after}, was {before}"
            )
    if old.return_direct != new.return_direct:
        where = "to the user, not back to the model" if new.return_direct else "back to the model, not to the user"
        yield _tool_finding(raw, "returnDirect", "return-direct-changed", f"{name}: the result now goes {where}")
    if old.requires_approval != new.requires_approval:
        rule = "requires-approval-added" if new.requires_approval else "requires-approval-removed"
        yield _tool_finding(
            raw, "requiresApproval", rule, f"{name}: requiresApproval is now {str(new.requires_approval).lower()}"
        )
    if (old.strict is True) != (new.strict is True):
        state = "on" if new.strict is True else "off"
        yield _tool_finding(raw, "strict", "strict-changed", f"{name}: OpenAI strict mode is now {state}")
    if old.timeout != new.timeout:
        before, after = (_show([t]) if t is not None else "none" for t in (old.timeout, new.timeout))
        yield _tool_finding(raw, "timeout", "timeout-changed", f"{name}: timeout {before} -> {after}")
    for key in ("title", "description"):
        if getattr(old, key) != getattr(new, key):
            yield _tool_finding(raw, key, "description-changed", f"{name}: the tool's {key} changed")


def _schema_changes(old: ToolSnapshot, new: ToolSnapshot, raw: RawTool) -> Iterator[Diagnostic]:
    schemas = [(0, "inputSchema", old.input_schema, new.input_schema)]
    if old.output_schema is None and new.output_schema is not None:
        yield _tool_finding(raw, "outputSchema", "result-schema-added", f"{new.name}: the tool now declares its result")
    elif old.output_schema is not None and new.output_schema is None:
        yield _tool_finding(raw, "name", "result-schema-removed", f"{new.name}: the tool no longer declares its result")
    elif old.output_schema is not None and new.output_schema is not None:
        schemas.append((1, "outputSchema", old.output_schema, new.output_schema))
    for direction, key, before, after in schemas:
        old_schema, new_schema = thaw(before), thaw(after)
        root = raw.where(key)
        ctx = _Ctx(
            direction,
            new.name,
            _dict(_dict(old_schema).get("$defs")),
            _dict(_dict(new_schema).get("$defs")),
            raw.document,
            root,
        )
        yield from _node(ctx, _Side(old_schema, ("#",)), _Side(new_schema, ("#",)), _Place(root, raw.value(key)), ())


def _renames(removed: Sequence[ToolSnapshot], added: Sequence[ToolSnapshot]) -> dict[str, ToolSnapshot]:
    """New tool name -> the removed tool it renames: the only removed and the only added tool with that input schema."""

    def by_schema(tools: Sequence[ToolSnapshot]) -> dict[str, list[ToolSnapshot]]:
        groups: dict[str, list[ToolSnapshot]] = {}
        for tool in tools:
            groups.setdefault(_canonical(thaw(tool.input_schema)), []).append(tool)
        return groups

    olds, news = by_schema(removed), by_schema(added)
    return {news[k][0].name: group[0] for k, group in olds.items() if len(group) == 1 and len(news.get(k, ())) == 1}


def breaking_changes(
    old: Sequence[ToolSnapshot], new: Sequence[ToolSnapshot], sources: Iterable[RawTool], label: str
) -> tuple[Diagnostic, ...]:
    """Every change from `old` (the tools at `label`) to `new`, placed in the current files (`sources`).

    Breaking changes are errors, safe ones warnings. A removed tool is placed where it was, as `label:path`.
    """
    raws = {str(raw.value("name")): raw for raw in sources}
    before = {t.name: t for t in old}
    now = {t.name for t in new}
    renames = _renames([t for t in old if t.name not in now], [t for t in new if t.name not in before])
    findings: list[Diagnostic] = []
    for tool in new:
        raw = raws[tool.name]
        previous = before.get(tool.name) or renames.get(tool.name)
        if previous is None:
            findings.append(_tool_finding(raw, "name", "tool-added", f"new tool {tool.name!r}"))
            continue
        if previous.name != tool.name:
            where = f"{label}:{previous.source}:{previous.line}:{previous.col}"
            message = f"tool {previous.name!r} was renamed to {tool.name!r} (same input schema; was at {where})"
            findings.append(_tool_finding(raw, "name", "tool-renamed", message))
        findings.extend(_flags(previous, tool, raw, previous.name != tool.name))
        findings.extend(_schema_changes(previous, tool, raw))
    renamed = {t.name for t in renames.values()}
    for tool in old:
        if tool.name not in now and tool.name not in renamed:
            message = f"tool {tool.name!r} was removed (it was defined here, in {label})"
            findings.append(Diagnostic(f"{label}:{tool.source}", tool.line, tool.col, _E, "tool-removed", message))
    return normalized(findings)
