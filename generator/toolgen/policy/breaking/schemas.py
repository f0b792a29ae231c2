"""Every change between two versions of one tool's input or output schema, each a finding at its place."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.positions import Pointer
from toolgen.policy.breaking.alternatives import (
    ANNOTATIONS,
    CONTAINERS,
    FAMILIES,
    NOWHERE,
    Branch,
    Place,
    Side,
    as_dict,
    branches,
    by_family,
    canonical,
    follow,
    integer_only,
    listed_values,
    resolve,
    show,
    union_key,
    value_only,
)
from toolgen.policy.breaking.rules import KIND_RULES, PHRASES, RULES
from toolgen.source.load import Document

# Limits that are stricter when they are smaller; the others are stricter when they are larger.
_UPPER = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
# The constraint keywords of each JSON type, compared one by one.
_CONSTRAINTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "string": ("minLength", "maxLength", "pattern"),
        "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
        "array": ("minItems", "maxItems", "uniqueItems"),
        "object": ("minProperties", "maxProperties"),
    }
)
# Keywords whose changes are classified; a change of any other one is `unclassified`.
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "default",
        "$ref",
        *CONTAINERS,
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "additionalItems",
        "allOf",
        *ANNOTATIONS,
        *(keyword for keywords in _CONSTRAINTS.values() for keyword in keywords),
    }
)


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
        return PHRASES[phrase][self.direction]

    def finding(self, kind: str, place: Place, text: str) -> Diagnostic:
        rule = KIND_RULES[kind][self.direction]
        return self.document.key_diagnostic(place.pointer, rule, f"{self.tool}: {text}", RULES[rule].severity)


def schema_changes(
    direction: int, tool: str, old: Any, new: Any, document: Document, where: Place
) -> Iterator[Diagnostic]:
    """Every change from `old` to `new`, two versions of `tool`'s input (direction 0) or output (direction 1) schema.

    Both are JSON values with their `$defs` bundled; `new` is written at `where` in `document`, and each finding is
    placed at the line of the keyword that changed, or at the nearest place that is still there.
    """
    old_defs, new_defs = as_dict(as_dict(old).get("$defs")), as_dict(as_dict(new).get("$defs"))
    ctx = _Ctx(direction, tool, old_defs, new_defs, document, where.pointer)
    yield from _node(ctx, Side(old, ("#",)), Side(new, ("#",)), where, ())


def _node(ctx: _Ctx, old: Side, new: Side, place: Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    """Every change between two schemas at the same place (followed through `$ref`s, each pair compared once)."""
    old, new, place = resolve(old, ctx.old_defs), resolve(new, ctx.new_defs), follow(ctx.document, ctx.root, place)
    if (old.ident, new.ident) in ctx.seen:
        return
    ctx.seen.add((old.ident, new.ident))
    yield from _annotations(ctx, old.value, new.value, place, path)
    old_branches = branches(ctx.document, ctx.root, old, ctx.old_defs, NOWHERE)
    new_branches = branches(ctx.document, ctx.root, new, ctx.new_defs, place)
    if all(value_only(side.value) for side, _ in (*old_branches, *new_branches)):
        yield from _value_sets(ctx, old_branches, new_branches, place, path)
        return
    olds, news = by_family(old_branches), by_family(new_branches)
    yield from _families_changed(ctx, olds, news, place, path)
    members = union_key(old.value) is not None and union_key(new.value) is not None
    for family in FAMILIES:
        if family in olds and family in news:
            yield from _family(ctx, family, (olds[family], news[family]), place, path, members)


def _annotations(ctx: _Ctx, old: Any, new: Any, place: Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    old, new = as_dict(old), as_dict(new)
    for key in sorted(old.keys() | new.keys()):
        if canonical(old.get(key)) == canonical(new.get(key)):
            continue
        if key in ANNOTATIONS or key.startswith("x-"):
            yield ctx.finding("annotation", place.step(key), f"{ctx.label(path)}: {key} changed")
        elif key == "default":
            before = show([old[key]]) if key in old else "none"
            after = show([new[key]]) if key in new else "none"
            yield ctx.finding("default", place.step(key), f"{ctx.label(path)}: default {before} -> {after}")


def _type_names(groups: Mapping[str, Sequence[Branch]], families: Iterable[str]) -> str:
    """`families` as a reader says them: "integer" when every number alternative is one."""
    names = [
        "integer" if f == "number" and all(integer_only(as_dict(side.value)) for side, _ in groups[f]) else f
        for f in FAMILIES
        if f in families
    ]
    return " or ".join(names) or "nothing"


def _families_changed(
    ctx: _Ctx,
    olds: Mapping[str, Sequence[Branch]],
    news: Mapping[str, Sequence[Branch]],
    place: Place,
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
        values.update((canonical(v), v) for v in listed_values(side.value) or [])
    return list(values.values()), any(isinstance(s.value, dict) and "const" in s.value for s, _ in branches)


def _value_sets(
    ctx: _Ctx, olds: Sequence[Branch], news: Sequence[Branch], place: Place, path: tuple[str, ...]
) -> Iterator[Diagnostic]:
    (old, old_const), (new, new_const) = _merged_values(olds), _merged_values(news)
    where = place.step("enum") if "enum" in as_dict(place.node) else place.step("const")
    if old_const and new_const and len(old) == len(new) == 1:
        if canonical(old) != canonical(new):
            yield ctx.finding("const-changed", where, f"{ctx.label(path)} must now be {show(new)}, was {show(old)}")
        return
    yield from _value_change(ctx, old, new, where, path)


def _value_change(
    ctx: _Ctx, old: list[Any] | None, new: list[Any] | None, where: Place, path: tuple[str, ...]
) -> Iterator[Diagnostic]:
    label = ctx.label(path)
    if old is None or new is None:
        if old is None and new is not None:
            yield ctx.finding("values-removed", where, f"{label} {ctx.says('only')} {show(new)}")
        elif old is not None:
            yield ctx.finding("values-added", where, f"{label} is no longer limited to {show(old)}")
        return
    old_keys, new_keys = {canonical(v) for v in old}, {canonical(v) for v in new}
    removed = [v for v in old if canonical(v) not in new_keys]
    added = [v for v in new if canonical(v) not in old_keys]
    if removed:
        yield ctx.finding("values-removed", where, f"{label} {ctx.says('lost')} {show(removed)}")
    if added:
        yield ctx.finding("values-added", where, f"{label} {ctx.says('gained')} {show(added)}")


def _pairs(
    olds: Sequence[Branch], news: Sequence[Branch]
) -> tuple[list[tuple[Branch, Branch]], list[Branch], list[Branch]]:
    """Alternatives matched across sides: same $ref first, then equal schemas, then in order."""
    left, right, pairs = list(olds), list(news), []
    matchers = (
        lambda a, b: len(a[0].ident) == 1 and a[0].ident == b[0].ident,
        lambda a, b: canonical(a[0].value) == canonical(b[0].value),
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
    place: Place,
    path: tuple[str, ...],
    members: bool,
) -> Iterator[Diagnostic]:
    """Changes among the alternatives of one JSON type; `members`: both sides are unions, compare their annotations."""
    olds, news = sides
    if all(value_only(side.value) for side, _ in (*olds, *news)):
        yield from _value_sets(ctx, olds, news, place, path)
        return
    pairs, lost, gained = _pairs(olds, news)
    for (old, _), (new, where) in pairs:
        if members:
            yield from _annotations(ctx, old.value, new.value, where, path)
        yield from _branch(ctx, family, old, new, where, path)
    for side, where in [*lost, *gained]:
        gone = any(side is s for s, _ in lost)
        values = listed_values(side.value)
        kind = ("values-removed" if gone else "values-added") if values else ("narrowed" if gone else "widened")
        what = f"{ctx.says('lost' if gone else 'gained')} {show(values)}" if values else None
        text = what or f"{'lost' if gone else 'gained'} one of its {family} alternatives"
        yield ctx.finding(kind, place if gone else where, f"{ctx.label(path)} {text}")


def _branch(ctx: _Ctx, family: str, old: Side, new: Side, place: Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    """Changes between two alternatives of the same JSON type."""
    o, n = as_dict(old.value), as_dict(new.value)
    if family == "number":
        yield from _numeric(ctx, o, n, place, path)
    if listed_values(o) is not None or listed_values(n) is not None:
        where = place.step("enum") if "enum" in n else place.step("const")
        yield from _value_change(ctx, listed_values(o), listed_values(n), where, path)
    for keyword in _CONSTRAINTS.get(family, ()):
        change = _constraint(keyword, o.get(keyword), n.get(keyword))
        if change:
            yield ctx.finding(change[0], place.step(keyword), f"{ctx.label(path)}: {change[1]}")
    if family == "object":
        yield from _object(ctx, old, new, place, path)
    if family == "array":
        yield from _array(ctx, old, new, place, path)
    yield from _unclassified(ctx, old, new, place, path)


def _numeric(
    ctx: _Ctx, old: dict[str, Any], new: dict[str, Any], place: Place, path: tuple[str, ...]
) -> Iterator[Diagnostic]:
    if integer_only(new) and not integer_only(old):
        yield ctx.finding("narrowed", place.step("type"), f"{ctx.label(path)} is now an integer, was any number")
    elif integer_only(old) and not integer_only(new):
        yield ctx.finding("widened", place.step("type"), f"{ctx.label(path)} is now any number, was an integer")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _constraint(keyword: str, old: Any, new: Any) -> tuple[str, str] | None:
    """(kind of change, what changed), or None when nothing did; kinds as in KIND_RULES."""
    if keyword == "uniqueItems":
        if bool(old) == bool(new):
            return None
        return ("tightened", "now requires unique items") if new else ("loosened", "no longer requires unique items")
    if canonical(old) == canonical(new):
        return None
    if new is None:
        return "loosened", f"{keyword} {show([old])} was removed"
    if old is None:
        return "tightened", f"now has {keyword} {show([new])}"
    change = f"{keyword} {show([old])} -> {show([new])}"
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


def _object(ctx: _Ctx, old: Side, new: Side, place: Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    (old_props, old_required), (new_props, new_required) = _names(as_dict(old.value)), _names(as_dict(new.value))
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
                Side(old_props.get(name, True), (*old.ident, "properties", name)),
                Side(new_props.get(name, True), (*new.ident, "properties", name)),
                where,
                child,
            )
    yield from _additional(ctx, old, new, place, path)


def _additional(ctx: _Ctx, old: Side, new: Side, place: Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    o, n = as_dict(old.value), as_dict(new.value)
    before, after = o.get("additionalProperties", True), n.get("additionalProperties", True)
    where = place.step("additionalProperties")
    if after is False and before is not False:
        yield ctx.finding("closed", where, f"{ctx.label(path)} {ctx.says('closed')} (additionalProperties: false)")
    elif before is False and after is not False:
        yield ctx.finding("opened", where, f"{ctx.label(path)} {ctx.says('opened')}")
    elif before is not False and ("additionalProperties" in o or "additionalProperties" in n):
        yield from _node(
            ctx,
            Side(before, (*old.ident, "additionalProperties")),
            Side(after, (*new.ident, "additionalProperties")),
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


def _item(side: Side, prefix: list[Any], key: str, index: int, rest: Any, rest_key: str) -> Side:
    """The schema of position `index` of an array: its positional schema, else the schema of the rest."""
    if index < len(prefix):
        return Side(prefix[index], (*side.ident, key, str(index)))
    return Side(rest, (*side.ident, rest_key))


def _array(ctx: _Ctx, old: Side, new: Side, place: Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    o, n = as_dict(old.value), as_dict(new.value)
    old_prefix, old_key, old_rest, old_rest_key = _tuple_form(o)
    new_prefix, new_key, new_rest, new_rest_key = _tuple_form(n)
    for i in range(max(len(old_prefix), len(new_prefix))):
        before = _item(old, old_prefix, old_key, i, old_rest, old_rest_key)
        after = _item(new, new_prefix, new_key, i, new_rest, new_rest_key)
        yield from _node(ctx, before, after, place.step(*after.ident[len(new.ident) :]), (*path, f"[{i}]"))
    if {"items", "additionalItems"} & (o.keys() | n.keys()):
        yield from _node(
            ctx,
            Side(old_rest, (*old.ident, old_rest_key)),
            Side(new_rest, (*new.ident, new_rest_key)),
            place.step(new_rest_key),
            (*path, "[]"),
        )


def _unclassified(ctx: _Ctx, old: Side, new: Side, place: Place, path: tuple[str, ...]) -> Iterator[Diagnostic]:
    o, n = as_dict(old.value), as_dict(new.value)
    old_all, new_all = o.get("allOf"), n.get("allOf")
    if isinstance(old_all, list) and isinstance(new_all, list) and len(old_all) == len(new_all):
        for i, (before, after) in enumerate(zip(old_all, new_all, strict=True)):
            yield from _node(
                ctx,
                Side(before, (*old.ident, "allOf", str(i))),
                Side(after, (*new.ident, "allOf", str(i))),
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
        if canonical(o.get(keyword)) != canonical(n.get(keyword)):
            text = f"{ctx.label(path)}: {keyword!r} changed; toolgen cannot tell whether this breaks callers"
            yield ctx.finding("unclassified", place.step(keyword), text)
