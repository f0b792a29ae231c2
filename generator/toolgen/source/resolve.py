"""Resolve stage: follow `$ref`s within and across files and bundle every target into one `$defs` namespace.

Each tool's inputSchema and outputSchema is a schema resource of its own, as when it is sent to a provider:
`#/...` points inside it; `other.yaml#/...` points into another file, relative to the referring file.
Recursive schemas are fine; a chain of `$ref`s that only points back to itself is an error. A `$ref` to a
published JSON Schema meta-schema is left as written (every JSON Schema validator knows them; the models see Any).
A file `$ref` (a path or a `file:` URL) is read only inside the project or a folder under `ref_roots:`, after
symlinks are followed; nothing is fetched from the network (remote documents come vendored, under `remotes:`).
"""

from __future__ import annotations

import functools
import os
import posixpath
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.names import NameRegistry, pascal
from toolgen.core.paths import display_path
from toolgen.core.positions import Pointer
from toolgen.core.resources import schemas_dir
from toolgen.source.load import Document, LoadError
from toolgen.source.recursive_refs import recursive_reference, with_reference
from toolgen.source.schemawalk import children, map_children, node_at

if TYPE_CHECKING:
    from referencing import Registry

# Keywords dropped from bundled schemas: their job is done once refs point into the shared $defs.
_DROPPED = frozenset(
    {"$defs", "definitions", "$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$recursiveAnchor"}
)
Key = tuple[str, Pointer]
Prepare = Callable[[Document, Pointer, Any], Any]
# Where a `$ref` leads: a schema to bundle, or the absolute URI of a meta-schema the bundle leaves as written.
Target = tuple["Resource", Pointer, Any]
# The base URI of a schema checked on its own: never fetched, only a root for its relative references.
_SELF = "urn:toolgen:self:"


@dataclass(frozen=True)
class Resource:
    document: Document
    root: Pointer


def _replace_at(data: Any, pointer: Pointer, value: Any) -> None:
    """Put `value` at `pointer` (which exists) in `data`, in place."""
    _, parent = node_at(data, pointer[:-1])
    last = pointer[-1]
    if isinstance(parent, list):
        parent[int(last)] = value
    else:
        parent[last] = value


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
        normalize: Callable[[Any], Any] | None = None,
        *,
        scope: Sequence[Path],
    ) -> None:
        self._names = names
        # What `prepare` does to a schema's content (type normalization), for whole vendored documents.
        self._normalize = normalize
        self._remotes = dict(remotes or {})
        # The folders a file `$ref` may read: Config.ref_scope (the project root first), the vendored folders the
        # config names (a relative reference in a vendored document names its neighbour), toolgen's own schemas.
        vendor = [folder.resolve() for folder, written in self._remotes.values() if _named_outside(written)]
        inside = [folder.resolve() for folder, written in self._remotes.values() if not _named_outside(written)]
        # A vendored folder named inside the project counts only if it is: not when it is a link that leads out.
        vendor += [folder for folder in inside if _within(folder, scope)]
        self._scope = (*scope, *vendor, schemas_dir().resolve())
        self._load = load
        self._prepare = prepare
        self._named: dict[Key, str] = {}
        self._queue: deque[tuple[str, Resource, Pointer, Any]] = deque()
        self.defs: dict[str, Any] = {}
        self.diagnostics: list[Diagnostic] = []
        # Where each bundled schema was written, for findings about it after bundling.
        self.origins: dict[str, tuple[Document, Pointer]] = {}
        # The resource each bundled schema was read in, for references resolved after bundling (dynamic_refs.py).
        self._resources: dict[str, Resource] = {}
        self._indexes: dict[Key, dict[str, Pointer]] = {}

    def add_root(self, name: str, resource: Resource, pointer: Pointer, schema: Any) -> None:
        """Register `schema` (found at `pointer`) as the model `name`; it is bundled by `run()`."""
        self._named[(resource.document.display, pointer)] = name
        self.origins[name] = (resource.document, pointer)
        self._resources[name] = resource
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
        if "$recursiveRef" in schema:
            # Left as written, `#` would name the bundle's root, and the models would follow it there.
            del rewritten["$recursiveRef"]
            at = (*pointer, "$recursiveRef")
            recursive, problem = recursive_reference(
                resource.document.data,
                at,
                schema["$recursiveRef"],
                lambda: self._target(resource, at, "#"),
                lambda: self._reference(resource, at, "#"),
            )
            if problem is not None:
                self.diagnostics.append(resource.document.diagnostic(at, "ref-unsupported", problem))
            with_reference(rewritten, recursive)
        return rewritten

    def _reference(self, resource: Resource, at: Pointer, ref: str) -> str:
        target = self._target(resource, at, ref)
        if target is None:
            return "#/$defs/Unresolved"
        if isinstance(target, str):
            return target
        target_resource, target_pointer, node = target
        cycle = self._pure_ref_cycle(target_resource, target_pointer, node)
        if cycle:
            self.diagnostics.append(
                resource.document.diagnostic(at, "ref-cycle", f"$ref {ref!r} never reaches a schema: {cycle}")
            )
            return "#/$defs/Unresolved"
        return self.bundled(target)

    def bundled(self, target: Target) -> str:
        """`#/$defs/<name>` of the schema at `target`; one not bundled yet is bundled by the next `run()`."""
        target_resource, target_pointer, node = target
        key = (target_resource.document.display, target_pointer)
        name = self._named.get(key)
        if name is None:
            label = target_pointer[-1] if target_pointer else Path(target_resource.document.display).stem
            name = self._names.claim(pascal(label))
            self._named[key] = name
            self.origins[name] = (target_resource.document, target_pointer)
            self._resources[name] = target_resource
            prepared = self._prepare(target_resource.document, target_pointer, node)
            self._queue.append((name, target_resource, target_pointer, prepared))
        return f"#/$defs/{name}"

    def resource_of(self, name: str) -> Resource:
        """The resource the bundled schema `name` was read in (a tool's schema, a file, a vendored document)."""
        return self._resources[name]

    def target(self, resource: Resource, at: Pointer, ref: str) -> Target | str | None:
        """Where the reference `ref` (written at `at`, its keyword last) leads, statically: see `_target`."""
        return self._target(resource, at, ref)

    def _target(self, resource: Resource, at: Pointer, ref: str) -> Target | str | None:
        """Where `ref` (found at `at`) leads: a schema, a meta-schema's absolute URI, or None (reported)."""
        embedded = self._embedded_target(resource, at, ref)
        if embedded is not None:
            return embedded
        file_part, _, fragment = ref.partition("#")
        base_uri = _base_at(resource, at)
        if file_part and not base_uri.startswith("urn:toolgen:"):
            # Under an `$id`, a relative reference names a URI, not a file next to this one.
            file_part, _, fragment = urllib.parse.urljoin(base_uri, ref).partition("#")
        if _remote(file_part) and self._vendored(file_part) is None and file_part in meta_schemas():
            return self._meta_schema_reference(resource, at, ref, file_part, fragment)
        document = self._document(resource, at, ref, file_part)
        if document is None:
            return None
        return self._located(resource, at, ref, Resource(document, () if file_part else resource.root), fragment)

    def _meta_schema_reference(self, resource: Resource, at: Pointer, ref: str, uri: str, fragment: str) -> str | None:
        """A `$ref` into a meta-schema, kept as an absolute URI: bundling the meta-schema would only give Any."""
        index = _document_index(meta_schemas().contents(uri), uri)
        if _place(index, uri, urllib.parse.unquote(fragment)) is None:
            message = f"$ref {ref!r}: nothing at #{fragment} in the meta-schema {uri}"
            self.diagnostics.append(resource.document.diagnostic(at, "ref-unresolved", message))
            return None
        return f"{uri}#{fragment}" if fragment else uri

    def _document(self, resource: Resource, at: Pointer, ref: str, file_part: str) -> Document | None:
        """The document `file_part` names: this one, a vendored copy of a remote one, or a file next to this one."""
        document = resource.document
        if not file_part:
            return document
        vendored = self._vendored(file_part) if _remote(file_part) else None
        if vendored is not None and not _within(vendored[0], self._scope):
            self.diagnostics.append(document.diagnostic(at, "ref-outside", _outside(ref, vendored[0], vendored[0])))
            return None
        if vendored is not None:
            try:
                return self._load(*vendored)
            except LoadError as error:
                message = f"vendored copy {vendored[1]}: {error.diagnostic.message}"
                self.diagnostics.append(document.diagnostic(at, "ref-file", f"$ref {ref!r}: {message}"))
                return None
        if file_part.lower().startswith("file:"):
            named = _file_url_path(file_part)
            if named is None:
                message = f"$ref {ref!r}: a file: URL names a file on this machine (file:///path, no host)"
                self.diagnostics.append(document.diagnostic(at, "ref-file", message))
                return None
        elif _remote(file_part):
            message = (
                f"remote $ref {ref!r} is not fetched: vendor the document into a local folder and map its URL "
                "prefix to that folder under `remotes:` in toolgen.yaml"
            )
            self.diagnostics.append(document.diagnostic(at, "ref-remote", message))
            return None
        else:
            named = document.path.parent / urllib.parse.unquote(file_part)
        # Checked before anything is read, so that the answer does not even tell whether such a file exists.
        path = named.resolve()
        if not _within(path, self._scope):
            self.diagnostics.append(document.diagnostic(at, "ref-outside", _outside(ref, named, path)))
            return None
        display = display_path(self._scope[0], path)
        if not file_part.lower().startswith("file:") and not os.path.isabs(urllib.parse.unquote(file_part)):
            # As written, relative to the referring file: the name users know it by, whatever links it crosses.
            display = posixpath.normpath(
                posixpath.join(posixpath.dirname(document.display), urllib.parse.unquote(file_part))
            )
        try:
            return self._load(path, display)
        except LoadError as error:
            found = error.diagnostic
            if found.rule == "file-missing":
                message = "file not found"
            else:  # said at its own place too: the referenced file may be no input, named nowhere else
                message = f"{found.path}:{found.line}:{found.col}: {found.message}"
                self.diagnostics.append(found)
            self.diagnostics.append(document.diagnostic(at, "ref-file", f"$ref {ref!r}: {message}"))
            return None

    def _located(self, resource: Resource, at: Pointer, ref: str, target: Resource, fragment: str) -> Target | None:
        """The schema at `fragment` (a JSON pointer or an `$anchor` name) in `target`, or None (reported)."""
        relative = _fragment_pointer(fragment)
        pointer = (*target.root, *relative) if relative is not None else self._anchor(target, fragment)
        found, node = (False, None) if pointer is None else node_at(target.document.data, pointer)
        if pointer is None or not found:
            where = (
                f"nothing at #{fragment}" if relative is not None else f"no $anchor {urllib.parse.unquote(fragment)!r}"
            )
            message = f"{at[-1]} {ref!r}: {where} in {target.document.display}"
            self.diagnostics.append(resource.document.diagnostic(at, "ref-unresolved", message))
            return None
        return target, pointer, node

    def _anchor(self, resource: Resource, name: str) -> Pointer | None:
        """Where `$anchor: name` (or `$dynamicAnchor`) is in the resource, not counting embedded resources."""
        _, node = node_at(resource.document.data, resource.root)
        uri = _joined(_resource_uri(resource), node.get("$id") if isinstance(node, dict) else None)
        return self._index(resource).get(f"{uri}#{urllib.parse.unquote(name)}")

    def written_resources(self, schema: Any) -> dict[str, Any] | None:
        """The vendored documents a JSON Schema validator needs to check `schema` as written (URI -> document), or
        None when one of its references, or of theirs, reaches neither `schema`, a vendored copy nor a meta-schema."""
        targets: list[tuple[str, Pointer]] = []
        documents = reached_documents(schema, self._fetch, targets)
        if documents is None:
            return None
        vendored = {uri: document for uri, document in documents.items() if self._vendored(uri) is not None}
        if self._normalize is None:
            return vendored
        normalized = {uri: self._normalize(document) for uri, document in vendored.items()}
        # A target where no keyword leads (`names.json#/Name`) is a schema too, which a walk from the root misses.
        for uri, pointer in targets:
            if uri in normalized and pointer:
                _, node = node_at(normalized[uri], pointer)
                _replace_at(normalized[uri], pointer, self._normalize(node))
        return normalized

    def document(self, uri: str) -> Any:
        """The vendored copy of the document at `uri`, else the meta-schema published there, else None."""
        return self._fetch(uri.partition("#")[0])

    def _fetch(self, uri: str) -> Any:
        """The vendored copy of `uri`, else the meta-schema published there, else None; never the network."""
        vendored = self._vendored(uri) if _remote(uri) else None
        if vendored is not None:
            try:
                return self._load(*vendored).data
            except LoadError:
                return None  # reported where a `$ref` reaches it during bundling
        return meta_schemas().contents(uri) if _remote(uri) and uri in meta_schemas() else None

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
        if index.keys() == {_resource_uri(resource)}:
            return None  # no $id or $anchor anywhere: plain JSON pointers and files, as before
        absolute = _absolute(_base_at(resource, at), ref)
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
        found, node = node_at(resource.document.data, pointer)
        return (resource, pointer, node) if found else None

    def _index(self, resource: Resource) -> dict[str, Pointer]:
        """Every `$id` (as an absolute URI) and `$anchor` (`uri#name`) inside the resource, with its pointer."""
        key = (resource.document.display, resource.root)
        cached = self._indexes.get(key)
        if cached is None:
            found, node = node_at(resource.document.data, resource.root)
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
            if target is None or isinstance(target, str):
                return None
            resource, pointer, node = target
            key = (resource.document.display, pointer)
            if key in seen:
                return " -> ".join(f"{d}#{'/'.join(('',) + p) if p else ''}" for d, p in [*seen, key])
            seen.append(key)
        return None


@functools.cache
def meta_schemas() -> Registry[Any]:
    """Every published JSON Schema meta-schema and vocabulary, as jsonschema ships them.

    Imported when a `$ref` first leaves for a remote URI: the registry's packages take about as long to import
    as pydantic, and most projects never refer to a meta-schema.
    """
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    registry: Registry[Any] = REGISTRY
    return registry


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
        found, current = node_at(current, (part,))
        if not found:
            break
    return base


def _file_url_path(url: str) -> Path | None:
    """The local path a `file:` URL names (`file:///x`, `file://localhost/x`), or None for one with a host."""
    parts = urllib.parse.urlsplit(url)
    if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
        return None
    path = urllib.parse.unquote(parts.path)
    if os.name == "nt" and len(path) > 2 and path[2] == ":":  # file:///C:/x names C:/x
        path = path[1:]
    return Path(path)


def _within(path: Path, folders: Sequence[Path]) -> bool:
    return any(path.is_relative_to(folder) for folder in folders)


def _named_outside(written: str) -> bool:
    """Whether toolgen.yaml names a folder outside the project (absolute, or climbing out with `..`)."""
    normal = posixpath.normpath(written.replace("\\", "/"))
    return os.path.isabs(written) or normal == ".." or normal.startswith("../")


def _outside(ref: str, named: Path, path: Path) -> str:
    """Why a file `$ref` is refused: where it leads (through a link, if one leads out) and how to allow it."""
    written = Path(os.path.normpath(named))
    via = f" (through a symbolic link: {written} is {path})" if written != path else ""
    return (
        f"$ref {ref!r} points at {path}, outside the project{via}; toolgen reads no file outside the project "
        "unless its folder is listed under `ref_roots:` in toolgen.yaml (paths relative to the project root)"
    )


def _remote(uri: str) -> bool:
    return "://" in uri or uri.startswith("urn:")


def _absolute(base: str, ref: str) -> str:
    # urljoin drops a non-hierarchical base (a urn:) for a bare fragment, so join those by hand.
    return base + ref if ref.startswith("#") else urllib.parse.urljoin(base, ref)


# A place in a document: the document, the pointer to the place, and the URI the document was got from.
Place = tuple[Any, Pointer, str]


def _document_index(document: Any, uri: str) -> dict[str, Place]:
    """Every URI (`uri` itself, `$id`s, `uri#anchor`s) that names a place in `document`, with that place."""
    index = {identifier: (document, pointer, uri) for identifier, pointer in _identifiers(document, (), uri)}
    index.setdefault(uri, (document, (), uri))  # a document is also known by where it came from, whatever its `$id`
    return index


def _place(index: dict[str, Place], uri: str, fragment: str) -> Place | None:
    """The place `uri#fragment` (a JSON pointer or an anchor name, unquoted) names in an indexed document, if any."""
    if not fragment.startswith("/"):
        return index.get(f"{uri}#{fragment}" if fragment else uri)
    document, start, retrieved = index[uri]
    pointer = (*start, *(_fragment_pointer(fragment) or ()))
    found, _ = node_at(document, pointer)
    return (document, pointer, retrieved) if found else None


def _base_above(document: Any, pointer: Pointer, uri: str) -> str:
    """The base URI in force just above `pointer` in `document` (got from `uri`): every `$id` on the way down."""
    base, current = uri, document
    for part in pointer:
        if isinstance(current, dict) and "$id" in current:
            base = _joined(base, current["$id"])
        _, current = node_at(current, (part,))
    return base


def _references(schema: Any, base: str) -> Iterator[str]:
    """The absolute URI of every `$ref` and `$dynamicRef` in `schema`, each joined to the base URI in force there."""
    if not isinstance(schema, dict):
        return
    here = _joined(base, schema["$id"]) if "$id" in schema else base
    for key in ("$ref", "$dynamicRef"):
        if isinstance(schema.get(key), str):
            yield _absolute(here, schema[key])
    for sub, _ in children(schema, ()):
        yield from _references(sub, here)


def reached_documents(
    schema: Any, fetch: Callable[[str], Any], targets: list[tuple[str, Pointer]] | None = None
) -> dict[str, Any] | None:
    """Every document outside `schema` that its references reach, directly or through each other (URI -> data),
    each got with `fetch` (None when there is none); None when a reference resolves nowhere. `targets`, when
    given, receives where each reference leads (the URI its document was got as, and the pointer in it)."""
    documents: dict[str, Any] = {}
    index = _document_index(schema, _SELF)
    # Subschemas to read references from, with the base URI above each; a target is read too, as it may sit
    # where no keyword leads (`other.json#/Name`).
    pending: list[tuple[Any, str]] = [(schema, _SELF)]
    followed: set[str] = set()
    while pending:
        node, base = pending.pop()
        for reference in _references(node, base):
            target, _, fragment = reference.partition("#")
            if target not in index:
                fetched = fetch(target)
                if fetched is None:
                    return None
                documents[target] = fetched
                index = {**_document_index(fetched, target), **index}
                pending.append((fetched, target))
            place = _place(index, target, urllib.parse.unquote(fragment))
            if place is None:
                return None
            if reference not in followed:
                followed.add(reference)
                document, pointer, retrieved = place
                if targets is not None:
                    targets.append((retrieved, pointer))
                pending.append((node_at(document, pointer)[1], _base_above(document, pointer, retrieved)))
    return documents


def self_contained(schema: Any) -> bool:
    """Whether every `$ref` and `$dynamicRef` in `schema` resolves inside it (local pointers, embedded `$id`s,
    anchors), so that a JSON Schema validator can check data against it exactly as written."""
    return reached_documents(schema, lambda uri: None) == {}
