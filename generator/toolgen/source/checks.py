"""Build-time checks of schema content the generated models depend on: regexes, defaults, references, names.

Regular expressions must compile with Python's re, which the models use to check them. A default that
does not fit its own schema would become a field default of the wrong type; it is reported and left out.
References that only a JSON Schema check of the schema as written can follow are refused where no such check runs.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from toolgen.core.names import property_attributes
from toolgen.core.positions import Pointer
from toolgen.runtime import has_property_escapes, python_patterns, unsupported
from toolgen.source.schemawalk import walk


def _problem(pattern: str, python: str) -> str | None:
    """What is wrong with `pattern`, whose form for Python's re (General_Category escapes spelled out) is `python`."""
    unknown = unsupported(pattern)
    if unknown:
        names = ", ".join(repr(name) for name in unknown)
        return (
            f"pattern {pattern!r} uses the Unicode property {names}; only General_Category values "
            "(\\p{Letter}, \\p{Lu}, \\p{gc=Nd}, ...) can be checked"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(python)
    except re.error as error:
        return f"pattern {pattern!r} is not a regular expression Python can run: {error}"
    except (RecursionError, OverflowError) as error:
        return f"pattern {pattern!r} is too complex: {error}"
    return None


def _patterns(schema: Any) -> Iterator[tuple[Pointer, str]]:
    """Every `pattern` and `patternProperties` key in `schema`, with its pointer."""
    for sub, pointer in walk(schema):
        if not isinstance(sub, dict):
            continue
        if isinstance(sub.get("pattern"), str):
            yield (*pointer, "pattern"), sub["pattern"]
        if isinstance(sub.get("patternProperties"), dict):
            for key in sub["patternProperties"]:
                yield (*pointer, "patternProperties", key), key


def unsupported_patterns(schema: Any) -> Iterator[tuple[Pointer, str]]:
    found = list(_patterns(schema))
    supported = [p for _, p in found if has_property_escapes(p) and not unsupported(p)]
    # One pass over the Unicode tables for all of them: the validators run them with the ranges spelled out.
    python = python_patterns(supported)
    for pointer, pattern in found:
        problem = _problem(pattern, python.get(pattern, pattern))
        if problem:
            yield pointer, problem


def property_escapes(schema: Any) -> Iterator[tuple[Pointer, str]]:
    """Patterns with `\\p{...}`, which only the JSON Schema check can run (the models' re has no such escape)."""
    for pointer, pattern in _patterns(schema):
        if has_property_escapes(pattern):
            yield (
                pointer,
                f"pattern {pattern!r} uses a Unicode property escape, which the canonical models cannot run; "
                "message extensions are checked by their models alone",
            )


_JSON_TYPES: Mapping[str, tuple[type, ...]] = MappingProxyType(
    {
        "string": (str,),
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "object": (dict,),
        "array": (list,),
        "null": (type(None),),
    }
)


def _has_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(name, object))


def default_fits(schema: dict[str, Any]) -> bool:
    """Whether `schema["default"]` has one of the schema's types and is among its enum or const values."""
    value = schema["default"]
    declared = schema.get("type")
    names = declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else []
    if names and not any(_has_type(value, name) for name in names):
        return False
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return False
    return not ("const" in schema and value != schema["const"])


def unfit_defaults(schema: Any) -> Iterator[tuple[Pointer, str]]:
    for sub, pointer in walk(schema):
        if isinstance(sub, dict) and "default" in sub and not default_fits(sub):
            yield (
                (*pointer, "default"),
                f"default {sub['default']!r} does not fit its own schema; the model leaves it out",
            )


def dynamic_references(schema: Any, reason: str) -> Iterator[tuple[Pointer, str]]:
    """`$dynamicRef`s where only the bundled schema is checked: bundling loses their dynamic scope (`reason` says why)."""
    for sub, pointer in walk(schema):
        if isinstance(sub, dict) and "$dynamicRef" in sub:
            yield (
                (*pointer, "$dynamicRef"),
                f"$dynamicRef {sub['$dynamicRef']!r} is not supported here: it resolves by dynamic scope, which "
                f"bundling loses, and {reason}; use $ref",
            )


def remote_references(schema: Any) -> Iterator[tuple[Pointer, str]]:
    """`$ref`s a bundled schema keeps as written (to a meta-schema): only a JSON Schema check can follow them."""
    for sub, pointer in walk(schema):
        if isinstance(sub, dict) and isinstance(sub.get("$ref"), str) and not sub["$ref"].startswith("#"):
            yield (
                (*pointer, "$ref"),
                f"$ref {sub['$ref']!r} (a meta-schema) is not supported in canonical messages, which are checked "
                "by their models alone; describe the value with a schema of its own",
            )


def renamed_properties(schema: Any) -> Iterator[tuple[Pointer, str]]:
    """(pointer of the property, sentence) for each property whose attribute is not its own because another
    property of its object makes the same one (core/names.property_attributes): the attribute to write instead.

    Names outside ASCII are left out: their attributes are chosen over the whole schema, clear of every other's.
    So is an object beside a `$ref`, which becomes no class of its own (ir/modelnames.py) to order the names of.
    """
    for sub, where in walk(schema):
        properties = sub.get("properties") if isinstance(sub, dict) and "$ref" not in sub else None
        if not isinstance(properties, dict) or len(properties) < 2:
            continue
        found = property_attributes([name for name in properties if isinstance(name, str) and name.isascii()])
        if found is None:
            continue
        owners = {attribute: name for name, attribute in found.given.items()}
        for name, attribute in found.given.items():
            plain = found.plain[name]
            if attribute != plain:
                owner = owners[plain]
                yield (
                    (*where, "properties", name),
                    f"property {name!r} gets the attribute {attribute} because property {owner!r} has {plain}",
                )
