# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""An input schema's root composition merged into one object schema, for the providers that refuse it there."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

if TYPE_CHECKING:
    from ..schema.fit import Rewrite

# The lint rule of the merge: a warning, since export rewrites the schema by itself.
ROOT_RULE = "root-composition"
# OpenAI (Chat and Responses, strict or not): "schema must have type 'object' and not have 'oneOf'/'anyOf'/
# 'allOf'/'enum'/'not' at the top level".
_OPENAI = ("anyOf", "oneOf", "allOf", "enum", "not")
# Anthropic: "input_schema does not support oneOf, allOf, or anyOf at the top level". Bedrock's Converse hands
# the schema to the model's own provider, Claude among them, as it is.
_ANTHROPIC = ("anyOf", "oneOf", "allOf")
# Per export builder (wires/table.py's `export` column): the root keywords its provider refuses.
REFUSED_AT_ROOT: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "anthropic": _ANTHROPIC,
        "bedrock": _ANTHROPIC,
        "chat-function": _OPENAI,
        "responses-function": _OPENAI,
    }
)
STRICT_REFUSED = _OPENAI
_BRANCHES = ("anyOf", "oneOf", "allOf")


def sent_builder(builder: str, strict_mode: bool) -> str:
    """The builder a wire's entries are made by: a chat-shaped wire without OpenAI's strict mode (Cohere v2, whose
    function has no `strict`; its strictness is the request's `strict_tools`) gets the plain function shape."""
    return (
        "plain-function" if builder == "chat-function" and not strict_mode else builder
    )


def refused_at_root(builder: str) -> tuple[str, ...]:
    """The root keywords the provider of an export builder refuses (none for a builder not listed)."""
    return REFUSED_AT_ROOT.get(builder, ())


def flatten_root(
    schema: Mapping[str, Any], refused: tuple[str, ...]
) -> tuple[dict[str, Any], list[Rewrite]]:
    """`schema` without the `refused` keywords at its root, each with a Rewrite saying what became of it.

    anyOf/oneOf branches merge into the root: their properties united, required only what every branch requires.
    allOf branches merge with properties and required united. enum and not are left out. The package's check
    still reads the schema as written, so the arguments are held to all of it; the provider and the model only
    see less of it, and the notes say what.
    """
    found = [key for key in refused if key in schema]
    if not found:
        return dict(schema), []
    from ..schema.fit import Rewrite

    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    result = {key: value for key, value in schema.items() if key not in found}
    properties = dict(result.get("properties") or {})
    required = [name for name in result.get("required") or () if isinstance(name, str)]
    own = frozenset(properties)
    rewrites: list[Rewrite] = []
    for key in found:
        value = schema[key]
        if key not in _BRANCHES or not isinstance(value, list):
            text = f"root {key} not sent (the provider refuses it at the root); toolgen's check of the arguments still applies it"
            rewrites.append(Rewrite("", ROOT_RULE, text, key))
            continue
        branches = [_object_branch(branch, defs) for branch in value]
        objects = [branch for branch in branches if branch is not None]
        united = key == "allOf"
        for branch in objects:
            for name, sub in (branch.get("properties") or {}).items():
                properties[name] = _joined(
                    properties.get(name), sub, united, name in own
                )
        wanted = [_names(branch.get("required")) for branch in objects]
        if united:
            added = [name for names in wanted for name in names]
        else:
            # A branch that is no object (or cannot be read) requires nothing the merge can keep.
            added = (
                [name for name in wanted[0] if all(name in other for other in wanted)]
                if wanted and len(objects) == len(value)
                else []
            )
        required.extend(name for name in added if name not in required)
        rewrites.append(Rewrite("", ROOT_RULE, _merge_text(key, len(value)), key))
    if properties or "properties" in result:
        result["properties"] = properties
    if required:
        result["required"] = required
    return result, rewrites


def _merge_text(key: str, count: int) -> str:
    if key == "allOf":
        how = "properties and required united"
    else:
        how = "properties united, required only where every branch requires it"
    return (
        f"root {key} of {count} branches merged into one object (the provider refuses {key} at the root): {how}; "
        "the provider and the model no longer see what else the branches say, toolgen's check of the arguments "
        "still applies it"
    )


def _names(value: Any) -> list[str]:
    return (
        [name for name in value if isinstance(name, str)]
        if isinstance(value, list)
        else []
    )


def _object_branch(branch: Any, defs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A branch as the object schema it names (a local $ref followed), or None for one that describes no object."""
    seen: set[str] = set()
    while isinstance(branch, Mapping) and isinstance(branch.get("$ref"), str):
        ref = branch["$ref"]
        name = next(
            (
                unquote(ref[len(prefix) :]).replace("~1", "/").replace("~0", "~")
                for prefix in ("#/$defs/", "#/definitions/")
                if ref.startswith(prefix)
            ),
            None,
        )
        if name is None or name in seen or name not in defs:
            return None
        seen.add(name)
        branch = {**defs[name], **{k: v for k, v in branch.items() if k != "$ref"}}
    if not isinstance(branch, Mapping):
        return None
    kind = branch.get("type", "object")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        return None
    return branch


def _joined(kept: Any, sub: Any, united: bool, own: bool) -> Any:
    """A property's schema once a branch's joins the one already there."""
    if kept is None:
        return sub
    if kept == sub or (own and not united):
        # The root's own schema holds whichever branch is chosen: a branch's narrower one goes with the branch.
        return kept
    key = "allOf" if united else "anyOf"
    found = kept[key] if isinstance(kept, Mapping) and set(kept) == {key} else [kept]
    return {key: [*found, sub]}
