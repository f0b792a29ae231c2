"""The `$defs` keys of each tool's exported schema: the author's own keys, not the bundle's shared model names.

Bundling (resolve.py) hoists every schema a `$ref` reaches into one namespace shared by all tools and the canonical
messages, because each becomes a model class and class names must not repeat: two tools' `$defs/Filter` become
`Filter` and `Filter2`. A tool's exported schema stands alone, so its keys are chosen among its own definitions only:
a definition written under `$defs` (or `definitions`) keeps its key, and one reached another way (a property, a
whole file) the name its place gives it. Adding or removing another tool then never changes this one's payload.
Only two definitions of one schema that claim the same key (`#/$defs/Filter` beside `shared.yaml#/$defs/Filter`, or
a `$dynamicRef` target copied once per dynamic scope) need another: the later one gets a number, and a warning
(`defs-renamed`) says which key became which, and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.names import pascal
from toolgen.core.positions import Pointer, pointer_text
from toolgen.source.load import Document
from toolgen.source.schemawalk import map_children

_PREFIX = "#/$defs/"
_DEFS_KEYWORDS = ("$defs", "definitions")
RULE = "defs-renamed"
# The new keys one warning lists before it counts the rest.
_SHOWN = 4


@dataclass(frozen=True)
class _Definition:
    bundled: str  # its key in the standalone schema (the bundle's name, or a dynamic-scope copy's)
    source: str  # the bundled schema it is (a copy's original)
    wanted: str
    users: bool  # the key is the author's, written under $defs or definitions
    rank: tuple[int, str, Pointer, int]


def own_keys(
    schema: Any,
    root: str,
    tool: str,
    which: str,
    origins: Mapping[str, tuple[Document, Pointer]],
    copies: Mapping[str, str] | None = None,
) -> tuple[Any, list[Diagnostic]]:
    """`schema` (standalone: its `$defs` keyed by bundled names, `root` the bundled name of the schema itself) with
    the keys its author wrote, and a warning for each of those that had to change. `which` is "input" or "output";
    `copies` maps a dynamic-scope copy's key to the bundled schema it copies (dynamic_refs.py)."""
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    if not isinstance(defs, dict) or not defs:
        return schema, []
    home = origins.get(root)
    # Copies of one schema are told apart by the order the tool's own references reach them, never by their names,
    # which depend on the names other tools took.
    found = {name: at for at, name in enumerate(copies or ())}
    definitions = sorted(
        (_definition(name, (copies or {}).get(name, name), found.get(name, 0), root, home, origins) for name in defs),
        key=lambda d: d.rank,
    )
    wanted = {d.wanted for d in definitions}
    keys: dict[str, str] = {}
    holder: dict[str, _Definition] = {}
    # The keys of the author's that changed: each with the definition holding the key it wanted.
    changed: list[tuple[_Definition, str, _Definition]] = []
    for definition in definitions:
        key, number = definition.wanted, 1
        # A numbered key never takes one that another definition wants as written.
        while key in holder or (number > 1 and key in wanted):
            number += 1
            key = f"{definition.wanted}{number}"
        keys[definition.bundled] = key
        if key != definition.wanted and definition.users:
            changed.append((definition, key, holder[definition.wanted]))
        holder[key] = definition
    warnings = _warnings(changed, tool, which, origins)
    if all(name == key for name, key in keys.items()):
        return schema, warnings  # the common case: the keys are the bundle's names, nothing to rewrite
    renamed = _with_refs({key: value for key, value in schema.items() if key != "$defs"}, keys)
    renamed["$defs"] = {keys[name]: _with_refs(defs[name], keys) for name in sorted(defs, key=keys.__getitem__)}
    return renamed, warnings


def reference(key: str) -> str:
    """The `$ref` to `#/$defs/<key>`: a JSON pointer (`~0`, `~1`) in a URI fragment (`%25`, and whitespace)."""
    escaped = key.replace("~", "~0").replace("/", "~1")
    return _PREFIX + "".join(_uri_char(char) for char in escaped)


def _uri_char(char: str) -> str:
    if char != "%" and char.isprintable() and not char.isspace():
        return char
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))


def _definition(
    name: str,
    source: str,
    order: int,
    root: str,
    home: tuple[Document, Pointer] | None,
    origins: Mapping[str, tuple[Document, Pointer]],
) -> _Definition:
    origin = origins.get(source)
    if source == root or origin is None:
        # The schema itself, reached by `$ref: "#"`, or nothing toolgen placed: its name is all it has.
        return _Definition(name, source, source, False, (0, "", (), order))
    document, pointer = origin
    if len(pointer) >= 2 and pointer[-2] in _DEFS_KEYWORDS:
        own = home is not None and document.display == home[0].display and pointer[: len(home[1])] == home[1]
        return _Definition(name, source, pointer[-1], True, (1 if own else 2, document.display, pointer, order))
    label = pointer[-1] if pointer else Path(document.display).stem
    return _Definition(name, source, pascal(label), False, (3, document.display, pointer, order))


def _warnings(
    changed: list[tuple[_Definition, str, _Definition]],
    tool: str,
    which: str,
    origins: Mapping[str, tuple[Document, Pointer]],
) -> list[Diagnostic]:
    """A warning for each key of the author's the exported schema could not keep: one per definition, naming every
    key it became (a `$dynamicRef` target copied once per dynamic scope becomes several)."""
    became: dict[tuple[str, str], list[str]] = {}
    for definition, key, first in changed:
        copied = first.source == definition.source
        other = "" if copied else first.source
        became.setdefault((definition.source, other), []).append(key)
    problems = []
    for (source, other), new_keys in became.items():
        document, pointer = origins[source]
        shown = ", ".join(repr(key) for key in new_keys[:_SHOWN])
        shown += f" and {len(new_keys) - _SHOWN} more" if len(new_keys) > _SHOWN else ""
        if other:
            elsewhere, at = origins.get(other, (document, ()))
            what = f"is exported as {shown}"
            why = f"{elsewhere.display}#{pointer_text(at)} has that key in the same exported schema; rename one of them"
        else:
            what = f"is also exported as {shown}"
            why = (
                "a $dynamicRef it reaches resolves differently in each dynamic scope, so it is exported once per scope"
            )
        message = f"tool {tool!r}: the $defs key {pointer[-1]!r} {what} in its {which} schema: {why}"
        problems.append(document.key_diagnostic(pointer, RULE, message, Severity.WARNING))
    return problems


def _with_refs(schema: Any, keys: Mapping[str, str]) -> Any:
    """A copy of `schema` whose `#/$defs/<bundled name>` references name the exported keys instead."""
    if not isinstance(schema, dict):
        return schema
    result = map_children(schema, lambda sub, _: _with_refs(sub, keys))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX) and ref[len(_PREFIX) :] in keys:
        result["$ref"] = reference(keys[ref[len(_PREFIX) :]])
    return result
