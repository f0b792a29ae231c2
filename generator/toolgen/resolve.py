"""Resolve stage: follow `$ref`s within and across files and bundle every target into one `$defs` namespace.

Each tool's inputSchema and outputSchema is a schema resource of its own, as when it is sent to a provider:
`#/...` points inside it; `other.yaml#/...` points into another file, relative to the referring file.
Recursive schemas are fine; a chain of `$ref`s that only points back to itself is an error.
"""

from __future__ import annotations

import posixpath
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgen.diagnostics import Diagnostic
from toolgen.load import Document, LoadError
from toolgen.names import NameRegistry, pascal
from toolgen.positions import Pointer
from toolgen.schemawalk import children, map_children

# Keywords dropped from bundled schemas: their job is done once refs point into the shared $defs.
_DROPPED = frozenset({"$defs", "definitions", "$schema", "$id", "$comment", "$anchor", "$dynamicAnchor"})

Key = tuple[str, Pointer]
Prepare = Callable[[Document, Pointer, Any], Any]


@dataclass(frozen=True)
class Resource:
    document: Document
    root: Pointer


def _node_at(data: Any, pointer: Pointer) -> tuple[bool, Any]:
    current = data
    for part in pointer:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def _fragment_pointer(fragment: str) -> Pointer | None:
    fragment = urllib.parse.unquote(fragment)
    if fragment == "":
        return ()
    if not fragment.startswith("/"):
        return None
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in fragment[1:].split("/"))


class Bundler:
    """Collects named roots, rewrites their `$ref`s to `#/$defs/<name>` and hoists every target it meets."""

    def __init__(
        self,
        names: NameRegistry,
        load: Callable[[Path, str], Document],
        prepare: Prepare,
        remotes: Mapping[str, tuple[Path, str]] | None = None,
    ) -> None:
        self._names = names
        self._remotes = dict(remotes or {})
        self._load = load
        self._prepare = prepare
        self._named: dict[Key, str] = {}
        self._queue: deque[tuple[str, Resource, Pointer, Any]] = deque()
        self.defs: dict[str, Any] = {}
        self.diagnostics: list[Diagnostic] = []
        self._indexes: dict[Key, dict[str, Pointer]] = {}

    def add_root(self, name: str, resource: Resource, pointer: Pointer, schema: Any) -> None:
        """Register `schema` (found at `pointer`) as the model `name`; it is bundled by `run()`."""
        self._named[(resource.document.display, pointer)] = name
        self._queue.append((name, resource, pointer, schema))

    def run(self) -> None:
        while self._queue:
            name, resource, pointer, schema = self._queue.popleft()
            self.defs[name] = self.rewrite(resource, pointer, schema)

    def rewrite(self, resource: Resource, pointer: Pointer, schema: Any) -> Any:
        """A copy of `schema` with every `$ref` pointing into the bundle's `$defs`."""
        if not isinstance(schema, dict):
            return schema
        rewritten = map_children(schema, lambda sub, rel: self.rewrite(resource, (*pointer, *rel), sub))
        for key in _DROPPED & rewritten.keys():
            del rewritten[key]
        ref = schema.get("$ref")
        if isinstance(ref, str):
            rewritten["$ref"] = self._reference(resource, (*pointer, "$ref"), ref)
        return rewritten

    def _reference(self, resource: Resource, at: Pointer, ref: str) -> str:
        target = self._target(resource, at, ref)
        if target is None:
            return "#/$defs/Unresolved"
        target_resource, target_pointer, node = target
        key = (target_resource.document.display, target_pointer)
        cycle = self._pure_ref_cycle(target_resource, target_pointer, node)
        if cycle:
            self.diagnostics.append(
                resource.document.diagnostic(at, "ref-cycle", f"$ref {ref!r} never reaches a schema: {cycle}")
            )
            return "#/$defs/Unresolved"
        name = self._named.get(key)
        if name is None:
            label = target_pointer[-1] if target_pointer else Path(target_resource.document.display).stem
            name = self._names.claim(pascal(label))
            self._named[key] = name
            prepared = self._prepare(target_resource.document, target_pointer, node)
            self._queue.append((name, target_resource, target_pointer, prepared))
        return f"#/$defs/{name}"

    def _target(self, resource: Resource, at: Pointer, ref: str) -> tuple[Resource, Pointer, Any] | None:
        embedded = self._embedded_target(resource, at, ref)
        if embedded is not None:
            return embedded
        document = resource.document
        file_part, _, fragment = ref.partition("#")
        base_uri = _base_at(resource, at)
        if file_part and not base_uri.startswith("urn:toolgen:"):
            # Under an `$id`, a relative reference names a URI, not a file next to this one.
            file_part, _, fragment = urllib.parse.urljoin(base_uri, ref).partition("#")
        vendored = self._vendored(file_part) if "://" in file_part or file_part.startswith("urn:") else None
        if vendored is not None:
            try:
                document = self._load(*vendored)
            except LoadError as error:
                message = f"vendored copy {vendored[1]}: {error.diagnostic.message}"
                self.diagnostics.append(resource.document.diagnostic(at, "ref-file", f"$ref {ref!r}: {message}"))
                return None
            base: Pointer = ()
        elif file_part:
            if "://" in file_part or file_part.startswith("urn:"):
                self.diagnostics.append(
                    document.diagnostic(
                        at, "ref-remote", f"remote $ref {ref!r} is not fetched; vendor the schema into a local file"
                    )
                )
                return None
            path = (document.path.parent / urllib.parse.unquote(file_part)).resolve()
            display = posixpath.normpath(
                posixpath.join(posixpath.dirname(document.display), urllib.parse.unquote(file_part))
            )
            try:
                document = self._load(path, display)
            except LoadError as error:
                message = "file not found" if error.diagnostic.rule == "file-missing" else error.diagnostic.message
                self.diagnostics.append(resource.document.diagnostic(at, "ref-file", f"$ref {ref!r}: {message}"))
                return None
            base = ()
        else:
            base = resource.root
        relative = _fragment_pointer(fragment)
        if relative is None:
            self.diagnostics.append(
                resource.document.diagnostic(
                    at, "ref-unsupported", f"$ref {ref!r}: only JSON-pointer fragments are supported"
                )
            )
            return None
        pointer = (*base, *relative)
        found, node = _node_at(document.data, pointer)
        if not found:
            self.diagnostics.append(
                resource.document.diagnostic(
                    at, "ref-unresolved", f"$ref {ref!r}: nothing at #{fragment or ''} in {document.display}"
                )
            )
            return None
        return Resource(document, base), pointer, node

    def _vendored(self, uri: str) -> tuple[Path, str] | None:
        """The local copy of a remote document, by the longest configured prefix (`remotes` in toolgen.yaml)."""
        prefix = max((p for p in self._remotes if uri.startswith(p)), key=len, default=None)
        if prefix is None:
            return None
        folder, shown = self._remotes[prefix]
        rest = urllib.parse.unquote(uri[len(prefix) :])
        path = (folder / rest).resolve()
        if folder.resolve() not in path.parents:
            return None  # `..` in a URL must not reach outside the vendored folder
        return path, posixpath.normpath(posixpath.join(shown, rest))

    def _embedded_target(self, resource: Resource, at: Pointer, ref: str) -> tuple[Resource, Pointer, Any] | None:
        """A `$ref` to a schema this resource holds under an `$id` or `$anchor` (2020-12 embedded resources)."""
        index = self._index(resource)
        if len(index) <= 1:
            return None  # no $id or $anchor anywhere: plain JSON pointers and files, as before
        base = _base_at(resource, at)
        # urljoin drops a non-hierarchical base (our urn:) for a bare fragment, so join those by hand.
        absolute = base + ref if ref.startswith("#") else urllib.parse.urljoin(base, ref)
        uri, _, fragment = absolute.partition("#")
        fragment = urllib.parse.unquote(fragment)
        if fragment and not fragment.startswith("/"):
            pointer = index.get(f"{uri}#{fragment}")
        else:
            start = index.get(uri)
            relative = _fragment_pointer(fragment)
            pointer = None if start is None or relative is None else (*start, *relative)
        if pointer is None:
            return None
        found, node = _node_at(resource.document.data, pointer)
        return (resource, pointer, node) if found else None

    def _index(self, resource: Resource) -> dict[str, Pointer]:
        """Every `$id` (as an absolute URI) and `$anchor` (`uri#name`) inside the resource, with its pointer."""
        key = (resource.document.display, resource.root)
        cached = self._indexes.get(key)
        if cached is None:
            found, node = _node_at(resource.document.data, resource.root)
            cached = self._indexes[key] = dict(_identifiers(node, resource.root, _resource_uri(resource)))
        return cached

    def _pure_ref_cycle(self, resource: Resource, pointer: Pointer, node: Any) -> str | None:
        """Follow a chain of schemas that are nothing but a `$ref`; a chain that loops names no schema."""
        seen = [(resource.document.display, pointer)]
        while (
            isinstance(node, dict)
            and set(node) <= {"$ref", "description", "title", "$comment"}
            and isinstance(node.get("$ref"), str)
        ):
            target = self._target(resource, (*pointer, "$ref"), node["$ref"])
            if target is None:
                return None
            resource, pointer, node = target
            key = (resource.document.display, pointer)
            if key in seen:
                return " -> ".join(f"{d}#{'/'.join(('',) + p) if p else ''}" for d, p in [*seen, key])
            seen.append(key)
        return None


def _resource_uri(resource: Resource) -> str:
    """A base URI for a resource without its own `$id`: unique per document and place, never fetched."""
    place = "/".join(urllib.parse.quote(p, safe="") for p in resource.root)
    return f"urn:toolgen:{urllib.parse.quote(resource.document.display, safe='')}:{place}"


def _joined(base: str, identifier: Any) -> str:
    """`identifier` (an `$id`) resolved against `base`, without a fragment."""
    return urllib.parse.urljoin(base, identifier).partition("#")[0] if isinstance(identifier, str) else base


def _identifiers(node: Any, pointer: Pointer, base: str, top: bool = True) -> Iterator[tuple[str, Pointer]]:
    """(uri, pointer) for the resource root, every embedded `$id`, and every `$anchor`/`$dynamicAnchor`."""
    if not isinstance(node, dict):
        return
    here = _joined(base, node.get("$id")) if "$id" in node else base
    if "$id" in node or top:
        yield here, pointer
    for keyword in ("$anchor", "$dynamicAnchor"):
        if isinstance(node.get(keyword), str):
            yield f"{here}#{node[keyword]}", pointer
    for sub, relative in children(node, ()):
        yield from _identifiers(sub, (*pointer, *relative), here, False)


def _base_at(resource: Resource, at: Pointer) -> str:
    """The base URI in force at `at`: the resource's, changed by every `$id` on the way down."""
    base = _resource_uri(resource)
    current = resource.document.data
    for index, part in enumerate(at):
        if isinstance(current, dict) and index >= len(resource.root) and "$id" in current:
            base = _joined(base, current["$id"])
        found, current = _node_at(current, (part,))
        if not found:
            break
    return base


def self_contained(schema: Any) -> bool:
    """Whether every `$ref` and `$dynamicRef` in `schema` resolves inside it (local pointers, embedded `$id`s,
    anchors), so that a JSON Schema validator can check data against it exactly as written."""
    root = "urn:toolgen:self:"
    index = dict(_identifiers(schema, (), root))

    def resolves(node: Any, base: str) -> bool:
        if not isinstance(node, dict):
            return True
        here = _joined(base, node["$id"]) if "$id" in node else base
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if isinstance(ref, str):
                absolute = here + ref if ref.startswith("#") else urllib.parse.urljoin(here, ref)
                uri, _, fragment = absolute.partition("#")
                fragment = urllib.parse.unquote(fragment)
                if uri not in index:
                    return False
                if fragment.startswith("/"):
                    found, _ = _node_at(schema, (*index[uri], *(_fragment_pointer(fragment) or ())))
                    if not found:
                        return False
                elif fragment and f"{uri}#{fragment}" not in index:
                    return False
        return all(resolves(sub, here) for sub, _ in children(node, ()))

    return resolves(schema, root)
