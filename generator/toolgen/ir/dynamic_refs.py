"""A tool's `$dynamicRef`s in the schema it exports: each made the `$ref` it resolves to where it is evaluated.

Bundling makes a tool's schema one resource and drops every `$dynamicAnchor` (resolve.py), so a `$dynamicRef`
kept as written would point nowhere in the schema sent to providers. Where one resolves depends on the dynamic
scope: the schema resources entered on the way to it, the outermost that declares the `$dynamicAnchor` it names
winning (JSON Schema 2020-12, 8.2.3.2). That scope is known for each way the bundled schemas lead to one another,
so each bundled schema is copied once per scope it is reached in that changes a resolution (the scope kept to the
anchors some `$dynamicRef` names), and each `$dynamicRef` becomes a `$ref` to its target in that copy's scope.

The JSON Schema check of such a tool still reads the schema as written (lower.py), and the models are left as
they are: only the exported schema (TOOLS' input_schema, tool_definitions(), `toolgen export`) changes. A scope
that would take more than MAX_COPIES copies, or a `$dynamicRef` that only leads back to itself, is refused.
"""

from __future__ import annotations

import urllib.parse
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.positions import Pointer
from toolgen.ir.export_keys import own_keys
from toolgen.ir.modelnames import standalone
from toolgen.source.resolve import Bundler, Resource
from toolgen.source.schemawalk import children, map_children, node_at, walk

# The most copies of bundled schemas one tool's scopes may take: a schema whose anchors multiply its scopes past
# this is refused rather than exported at any size.
MAX_COPIES = 512
_PREFIX = "#/$defs/"
# The outermost declaration in scope of each anchor that matters, as the place to bundle it from.
Scope = Mapping[str, tuple[Resource, Pointer]]


def exported_inputs(bundler: Bundler, tools: list[tuple[str, str, Any]]) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The exported input schema of each tool (args model, tool name, bundled input schema) that holds a
    `$dynamicRef`, by args model, and the diagnostics of those that cannot be exported. Call after `bundler.run()`;
    what it bundles on the way is left out of `bundler.defs` again (the models never see it)."""
    before = set(bundler.defs)
    exported: dict[str, Any] = {}
    problems: list[Diagnostic] = []
    for args, tool, schema in tools:
        if any(isinstance(sub, dict) and isinstance(sub.get("$dynamicRef"), str) for sub, _ in walk(schema)):
            exported[args] = _exported(bundler, args, tool, problems)
    for name in set(bundler.defs) - before:
        del bundler.defs[name]
    return exported, problems


def _exported(bundler: Bundler, args: str, tool: str, problems: list[Diagnostic]) -> Any:
    # The anchors that matter are those some dynamic `$dynamicRef` names, found by resolving: again until stable.
    relevant: frozenset[str] = frozenset()
    while True:
        copies = _Copies(bundler, args, tool, relevant)
        copies.run()
        if copies.named <= relevant or copies.problems:
            break
        relevant = relevant | copies.named
    problems.extend(copies.problems)
    looped = _pure_cycle(copies.view)
    if looped is not None and not copies.problems:
        document, origin = bundler.origins[copies.source[looped]]
        problem = f"tool {tool!r}: this $dynamicRef never reaches a schema: the references lead back to it"
        problems.append(document.diagnostic((*origin, "$dynamicRef"), "ref-cycle", problem))
    if copies.problems:  # refused: nothing is exported
        return standalone(copies.view, args)
    schema, renamed = own_keys(standalone(copies.view, args), args, tool, "input", bundler.origins, copies.source)
    problems.extend(renamed)
    return schema


@dataclass
class _Copies:
    """The copies of the bundled schemas one tool's input reaches, one per scope that matters, rewritten."""

    bundler: Bundler
    args: str
    tool: str
    relevant: frozenset[str]
    view: dict[str, Any] = field(default_factory=dict)
    # The bundled schema each copy is of.
    source: dict[str, str] = field(default_factory=dict)
    # The anchors of dynamic `$dynamicRef`s met, and what could not be exported.
    named: set[str] = field(default_factory=set)
    problems: list[Diagnostic] = field(default_factory=list)
    _copies: dict[tuple[str, tuple[tuple[str, str, Pointer, Pointer], ...]], str] = field(default_factory=dict)
    _queue: deque[tuple[str, str, Scope]] = field(default_factory=deque)

    def run(self) -> None:
        self.copy(self.args, {})
        while self._queue and not self.problems:
            name, copy, scope = self._queue.popleft()
            if name not in self.bundler.defs:
                self.bundler.run()
            self.view[copy] = self._rewritten(name, self.bundler.defs[name], (), scope)

    def copy(self, name: str, outer: Scope) -> str:
        """The copy of bundled schema `name` entered from `outer`: its own resource's declarations join the scope."""
        if name not in self.bundler.defs:
            self.bundler.run()
            if name not in self.bundler.defs:  # `Unresolved`: the bundler has reported why
                return name
        resource = self.bundler.resource_of(name)
        _, origin = self.bundler.origins[name]
        scope = self._enter(outer, resource, _resource_root(resource, origin))
        key = (name, tuple(sorted((a, r.document.display, r.root, p) for a, (r, p) in scope.items())))
        found = self._copies.get(key)
        if found is not None:
            return found
        copy, number = name, 1
        taken = set(self.bundler.defs) | set(self.source)
        while copy in self.source or (copy != name and copy in taken):
            number += 1
            copy = f"{name}{number}"
        if len(self._copies) >= MAX_COPIES:
            self._refuse(name, (), f"its dynamic scopes would take more than {MAX_COPIES} copies of its schemas")
        self._copies[key] = copy
        self.source[copy] = name
        self._queue.append((name, copy, scope))
        return copy

    def _enter(self, outer: Scope, resource: Resource, top: Pointer) -> Scope:
        """`outer` with the relevant anchors the resource at `top` declares that no outer resource does."""
        added = {
            anchor: (resource, pointer)
            for anchor, pointer in _declarations(resource, top).items()
            if anchor in self.relevant and anchor not in outer
        }
        return {**outer, **added} if added else outer

    def _rewritten(self, name: str, schema: Any, where: Pointer, scope: Scope) -> Any:
        if not isinstance(schema, dict):
            return schema
        resource = self.bundler.resource_of(name)
        document, origin = self.bundler.origins[name]
        _, written = node_at(document.data, (*origin, *where))
        if where and isinstance(written, dict) and "$id" in written:  # an embedded resource entered in place
            scope = self._enter(scope, resource, (*origin, *where))
        result = map_children(schema, lambda sub, relative: self._rewritten(name, sub, (*where, *relative), scope))
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX):
            result["$ref"] = _PREFIX + self.copy(ref[len(_PREFIX) :], scope)
        dynamic = schema.get("$dynamicRef")
        if isinstance(dynamic, str):
            resolved = self._resolved(name, where, dynamic, scope)
            if resolved is not None:
                del result["$dynamicRef"]
                if "$ref" in result:  # both apply: the resolved reference joins as an allOf branch
                    result["allOf"] = [*result.get("allOf", []), {"$ref": resolved}]
                else:
                    result["$ref"] = resolved
        return result

    def _resolved(self, name: str, where: Pointer, ref: str, scope: Scope) -> str | None:
        """The `$ref` the `$dynamicRef` at `where` in bundled schema `name` is in `scope`, or None (reported)."""
        document, origin = self.bundler.origins[name]
        resource = self.bundler.resource_of(name)
        at = (*origin, *where, "$dynamicRef")
        found, written = node_at(document.data, at)
        if not found or written != ref:  # the bundled schema no longer mirrors the written one: refuse, never guess
            self._refuse(name, where, "where it is written could not be told")
            return None
        target = self.bundler.target(resource, at, ref)
        if target is None:
            return None  # reported by the bundler
        fragment = urllib.parse.unquote(ref.partition("#")[2])
        anchor = fragment if fragment and not fragment.startswith("/") else None
        if isinstance(target, str):  # a meta-schema's place: its anchor, unless a resource in scope declares it
            if anchor is None:
                return target
            self.named.add(anchor)
        else:
            node = target[2]
            if anchor is None or not isinstance(node, dict) or node.get("$dynamicAnchor") != anchor:
                return self._bundled(target, scope)  # no dynamic anchor there: a plain `$ref` (8.2.3.2)
            self.named.add(anchor)
        declared = scope.get(anchor)
        if declared is None:
            return target if isinstance(target, str) else self._bundled(target, scope)
        outermost, pointer = declared
        return self._bundled((outermost, pointer, node_at(outermost.document.data, pointer)[1]), scope)

    def _bundled(self, target: tuple[Resource, Pointer, Any], scope: Scope) -> str:
        bundled = self.bundler.bundled(target)
        return _PREFIX + self.copy(bundled[len(_PREFIX) :], scope)

    def _refuse(self, name: str, where: Pointer, why: str) -> None:
        document, origin = self.bundler.origins[name]
        message = (
            f"tool {self.tool!r}: its $dynamicRef cannot be exported: {why}; point at the schema you mean with $ref"
        )
        self.problems.append(document.diagnostic((*origin, *where), "ref-unsupported", message))


def _resource_root(resource: Resource, pointer: Pointer) -> Pointer:
    """Where the schema resource holding `pointer` starts: the innermost `$id` on the way down from the
    resource's root (which is one, `$id` or not), `pointer` itself included."""
    top = resource.root
    current = resource.document.data
    for index, part in enumerate(pointer):
        _, current = node_at(current, (part,))
        if index >= len(resource.root) and isinstance(current, dict) and "$id" in current:
            top = pointer[: index + 1]
    return top


def _declarations(resource: Resource, top: Pointer) -> dict[str, Pointer]:
    """The `$dynamicAnchor`s of the schema resource at `top`, not those of resources embedded in it."""
    found: dict[str, Pointer] = {}
    _, node = node_at(resource.document.data, top)
    pending = [(node, top)]
    while pending:
        current, pointer = pending.pop()
        if not isinstance(current, dict) or (pointer != top and "$id" in current):
            continue
        anchor = current.get("$dynamicAnchor")
        if isinstance(anchor, str):
            found.setdefault(anchor, pointer)
        pending.extend(children(current, pointer))
    return found


def _pure_cycle(view: dict[str, Any]) -> str | None:
    """A copy that holds nothing but a `$ref` leading, through others like it, back to itself (the bundler refuses
    such `$ref` chains as written; a resolved `$dynamicRef` can make one), or None."""
    for name in sorted(view):
        seen, current = {name}, view[name]
        while isinstance(current, dict) and set(current) <= {"$ref", "description", "title", "$comment"}:
            ref = current.get("$ref")
            if not isinstance(ref, str) or not ref.startswith(_PREFIX):
                break
            target = ref[len(_PREFIX) :]
            if target in seen:
                return name
            seen.add(target)
            current = view.get(target)
    return None
