"""How a tool's data is checked (its input schema as written, a bundled schema, or models alone), and what each
check cannot follow, reported where it is written."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.positions import Pointer
from toolgen.source.checks import dynamic_references, property_escapes, remote_references
from toolgen.source.fidelity import RESOLUTION_KEYWORDS
from toolgen.source.resolve import Bundler
from toolgen.source.schemawalk import children, walk

# How the data a bundled schema describes is checked, weakest first: a JSON Schema check of the schema as written
# follows every reference; one of the bundled schema has lost dynamic scope; models alone follow no meta-schema.
AS_WRITTEN, BUNDLED, MODELS = 0, 1, 2
_WHY = (
    "",
    "the schema that reaches it is checked in its bundled form: an output schema, or an input schema whose "
    "references as written do not all resolve within itself, vendored documents and meta-schemas",
    "canonical messages are checked by their models alone",
)
# The base URI the check gives an input schema written without `$id` where its dynamic scope matters (see
# `_scope_root`). A `urn:` joins no relative reference (urljoin returns it as is), as the empty base does, so every
# reference and embedded `$id` names what it named before.
SCOPE_ROOT = "urn:toolgen:input-schema"


def written_check(bundler: Bundler, written: Any, bundled: Any) -> tuple[Any, dict[str, Any]] | None:
    """The input schema as written and the vendored documents it reaches (URI -> document), when its JSON Schema
    check must see them so: bundling changed what a reference means ($id, anchors, $dynamicRef) or kept one as
    written (a meta-schema). None when that check is not needed or the schema as written reaches a file."""
    resources = bundler.written_resources(written)
    if resources is None:
        return None
    resolution = any(
        isinstance(sub, dict) and RESOLUTION_KEYWORDS & sub.keys()
        for document in (written, *resources.values())
        for sub, _ in walk(document)
    )
    if not resolution and not any(remote_references(bundled)):
        return None
    return _scope_root(written, resources), resources


def _scope_root(written: Any, resources: dict[str, Any]) -> Any:
    """`written` with an `$id` (SCOPE_ROOT) when it has none, declares a `$dynamicAnchor` in its own resource, and a
    `$dynamicRef` in another resource (embedded, or a vendored document) may resolve to it by dynamic scope.

    The package's check is jsonschema's, whose resolver (referencing) leaves a root without `$id` out of the dynamic
    scope (python-jsonschema/referencing#366): the extension of a recursive schema (2020-12's strict tree) would lose
    its constraints there, though the exported schema, resolved by dynamic_refs.py, keeps them.
    """
    if not isinstance(written, dict) or "$id" in written or not _own_dynamic_anchors(written):
        return written
    elsewhere = [sub for sub, _ in walk(written) if isinstance(sub, dict) and "$id" in sub]
    if not any(_dynamic_ref_in(document) for document in (*elsewhere, *resources.values())):
        return written
    return {"$id": SCOPE_ROOT, **written}


def _own_dynamic_anchors(root: dict[str, Any]) -> bool:
    """Whether the resource `root` starts declares a `$dynamicAnchor` (not counting the resources embedded in it)."""
    pending: list[Any] = [root]
    while pending:
        current = pending.pop()
        if not isinstance(current, dict) or (current is not root and "$id" in current):
            continue
        if isinstance(current.get("$dynamicAnchor"), str):
            return True
        pending.extend(sub for sub, _ in children(current, ()))
    return False


def _dynamic_ref_in(schema: Any) -> bool:
    return any(isinstance(sub, dict) and isinstance(sub.get("$dynamicRef"), str) for sub, _ in walk(schema))


def unfollowed(schema: Any, level: int) -> Iterator[tuple[Pointer, str, str]]:
    """What the check a bundled schema gets (`level`) cannot follow: references, and patterns only a JSON
    Schema check can run; with the rule to report them under."""
    if level >= BUNDLED:
        yield from ((where, "ref-unsupported", problem) for where, problem in dynamic_references(schema, _WHY[level]))
    if level >= MODELS:
        yield from ((where, "ref-unsupported", problem) for where, problem in remote_references(schema))
        yield from ((where, "pattern-unsupported", problem) for where, problem in property_escapes(schema))


def unfollowed_in_bundle(bundler: Bundler, roots: dict[str, int], skip: frozenset[str]) -> list[Diagnostic]:
    """Every reference the check of a bundled schema cannot follow, reported where it was written.

    `skip` are toolgen's canonical schemas: their own content is known, and message extensions are checked where
    they are written (their properties are merged in here).
    """
    found = []
    for name, level in _levels(bundler.defs, roots).items():
        if name in skip or name not in bundler.origins:
            continue
        document, origin = bundler.origins[name]
        for where, rule, problem in unfollowed(bundler.defs[name], level):
            found.append(document.diagnostic((*origin, *where), rule, problem))
    return found


def _levels(defs: dict[str, Any], roots: dict[str, int]) -> dict[str, int]:
    """For each bundled schema, the weakest check it gets among the roots that reach it."""
    levels: dict[str, int] = {}
    pending = list(roots.items())
    while pending:
        name, level = pending.pop()
        if name not in defs or levels.get(name, -1) >= level:
            continue
        levels[name] = level
        pending.extend((target, level) for target in _bundled_refs(defs[name]))
    return levels


def _bundled_refs(schema: Any) -> Iterator[str]:
    prefix = "#/$defs/"
    for sub, _ in walk(schema):
        if isinstance(sub, dict) and isinstance(sub.get("$ref"), str) and sub["$ref"].startswith(prefix):
            yield sub["$ref"][len(prefix) :]
