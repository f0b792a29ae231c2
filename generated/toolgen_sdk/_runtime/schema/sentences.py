# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""One sentence shape for every validation problem, whoever found it: `expected <what>, got <value>`.

pydantic's errors, jsonschema's errors and toolgen's own checks all come here, so the same bad value reads the
same whichever path reported it (`/items/0/name: expected a string, got 5`). Patterns are quoted as written,
never as Python's repr doubles their backslashes.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

# What a missing required value is said as; `got nothing` keeps the shape.
MISSING = "expected a value (it is required), got nothing"
_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}
# pydantic's error types that say only which JSON type was expected.
_PYDANTIC_TYPES = {
    "string_type": "a string",
    "string_unicode": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
    "tuple_type": "an array",
    "none_required": "null",
}
# The sentence of an error of one of those types, up to the value: `expected a string, got `.
_PYDANTIC_GOT = MappingProxyType(
    {kind: f"expected {what}, got " for kind, what in _PYDANTIC_TYPES.items()}
)
# One encoder for every sentence: json.dumps with options builds a new encoder on each call.
_SHOW = json.JSONEncoder(ensure_ascii=False, default=repr)
# Its string encoding (iterencode's closures make a garbage cycle on every call; this does not).
_quoted = json.encoder.encode_basestring
# Integers shown by their digits below this; 10**50 is not folded into a constant where it is written.
_SHOWN_DIGITS = 10**50


def shown(value: Any) -> str:
    """The value as a sentence quotes it: JSON, cut at 60 characters, never encoded past that."""
    kind = type(value)
    if kind is int:
        # Python's int() text conversion is bounded; the sentence needs only the digits' count.
        if -_SHOWN_DIGITS < value < _SHOWN_DIGITS:
            return repr(value)
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    if kind is float and math.isfinite(value):
        return repr(value)
    if value is None or kind is bool:
        return "null" if value is None else "true" if value else "false"
    if kind is str:
        # What iterencode gives for a string, as one piece; 61 characters encode to more than 60.
        text = _quoted(value if len(value) <= 60 else value[:61])
        return text if len(text) <= 60 else text[:57] + "..."
    pieces: list[str] = []
    length = 0
    try:
        for piece in _SHOW.iterencode(value):
            pieces.append(piece)
            length += len(piece)
            if length > 60:
                break
    except (ValueError, RecursionError):
        pieces.append("...")
        length = 61
    text = "".join(pieces)
    return text if length <= 60 else text[:57] + "..."


def expected(what: str, value: Any) -> str:
    """`expected <what>, got <value>`: the one shape."""
    return f"expected {what}, got {shown(value)}"


def literal(value: Any) -> str:
    """A value the schema names: strings in single quotes, as pydantic writes them, the rest as JSON."""
    return f"'{value}'" if isinstance(value, str) else shown(value)


def either(choices: Sequence[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    if len(choices) <= 1:
        return "".join(choices)
    return ", ".join(choices[:-1]) + " or " + choices[-1]


def _count(number: Any, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def pydantic_expected(error: Mapping[str, Any]) -> str:
    """What a pydantic error says was expected, without the value given (`a string`, `at least 1`)."""
    kind = error["type"]
    if kind in _PYDANTIC_TYPES:
        return _PYDANTIC_TYPES[kind]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "a value (it is required)"
    if kind == "extra_forbidden":
        return "no value here (not an allowed field)"
    if kind == "recursion_depth_exceeded":
        # pydantic's guard on recursive models, past about 255 levels (toolgen's own limit refuses data sooner).
        return "a value nested less deeply"
    if kind == "recursion_loop":
        return "a value that does not hold itself"
    if kind in ("literal_error", "enum") and "expected" in ctx:
        return str(ctx["expected"])
    bounds = {
        "greater_than_equal": ("ge", "at least {}"),
        "greater_than": ("gt", "more than {}"),
        "less_than_equal": ("le", "at most {}"),
        "less_than": ("lt", "less than {}"),
        "multiple_of": ("multiple_of", "a multiple of {}"),
    }
    if kind in bounds and bounds[kind][0] in ctx:
        key, text = bounds[kind]
        return text.format(ctx[key])
    if kind in ("string_too_short", "string_too_long") and ctx:
        limit = ctx.get("min_length", ctx.get("max_length"))
        least = "at least" if kind == "string_too_short" else "at most"
        return f"a string of {least} {_count(limit, 'character')}"
    if kind in ("too_short", "too_long") and ctx:
        limit = ctx.get("min_length", ctx.get("max_length"))
        least = "at least" if kind == "too_short" else "at most"
        noun = "field" if ctx.get("field_type") == "Dictionary" else "item"
        return f"{least} {_count(limit, noun)}"
    if kind == "string_pattern_mismatch" and "pattern" in ctx:
        return f"a string matching '{ctx['pattern']}'"
    message = _bounded(str(error.get("msg", "")), 500)
    if message.startswith("Input should be "):
        return message[len("Input should be ") :]
    # A model's own check (a ValueError) says what it wants in toolgen's words already.
    return message.removeprefix("Value error, ").removeprefix("expected ")


def pydantic_sentence(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "missing":
        return MISSING
    got = _PYDANTIC_GOT.get(kind)
    if got is not None:
        return got + shown(error.get("input"))
    return expected(pydantic_expected(error), error.get("input"))


def _types(value: Any) -> str:
    names = [value] if isinstance(value, str) else list(value or ())
    return either([_TYPES.get(str(name), repr(name)) for name in names])


def schema_expected(keyword: str, value: Any, pattern: str = "") -> str | None:
    """What a JSON Schema keyword wants, in the words pydantic's errors use; None for a keyword not listed."""
    if keyword == "type":
        return _types(value)
    if keyword == "enum" and isinstance(value, list):
        return either([literal(item) for item in value])
    if keyword == "const":
        return literal(value)
    if keyword in ("minLength", "maxLength"):
        least = "at least" if keyword == "minLength" else "at most"
        return f"a string of {least} {_count(value, 'character')}"
    if keyword in ("minItems", "maxItems", "minProperties", "maxProperties"):
        least = "at least" if keyword.startswith("min") else "at most"
        noun = "item" if keyword.endswith("Items") else "field"
        return f"{least} {_count(value, noun)}"
    words = {
        "minimum": "at least {}",
        "maximum": "at most {}",
        "exclusiveMinimum": "more than {}",
        "exclusiveMaximum": "less than {}",
        "multipleOf": "a multiple of {}",
    }
    if keyword in words:
        return words[keyword].format(value)
    if keyword == "pattern":
        return f"a string matching '{pattern or value}'"
    if keyword == "uniqueItems":
        return "unique items"
    if keyword in ("anyOf", "oneOf"):
        return "a value matching one of the allowed forms"
    if keyword == "not":
        return "no value here" if value == {} else "a value the `not` schema refuses"
    if keyword == "contains":
        return "at least one item matching `contains`"
    return None


def _bounded(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def schema_error_sentences(
    error: Any, patterns: Mapping[str, str] | None = None
) -> list[tuple[tuple[Any, ...], str]]:
    """A jsonschema ValidationError as (path below the error's place, sentence) pairs, in the one shape.

    `required` and `additionalProperties` are said at the property they are about, as pydantic says them;
    `patterns` maps a pattern as Python runs it to the pattern as the schema wrote it.
    """
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if keyword in ("required", "dependentRequired") and isinstance(instance, dict):
        wanted = (
            value
            if keyword == "required"
            else [n for key, names in value.items() if key in instance for n in names]
        )
        missing = [name for name in wanted or () if name not in instance]
        return [((name,), MISSING) for name in missing]
    if keyword == "additionalProperties" and isinstance(instance, dict):
        # The matcher is imported only here: the sentences are imported wherever a problem can be said, the
        # pattern machinery costs more to import than they do, and only this sentence runs a pattern.
        from .matcher import PATTERN_SECONDS, PatternMatcher, search_within

        schema = error.schema if isinstance(error.schema, dict) else {}
        declared = schema.get("properties") or {}
        matchers = [
            PatternMatcher(p)
            for p in schema.get("patternProperties") or ()
            if isinstance(p, str)
        ]
        # One deadline for every key: a model's thousand keys cannot make a catastrophic pattern take 1,000 s.
        deadline = time.monotonic() + PATTERN_SECONDS
        extra = [
            key
            for key in instance
            if key not in declared
            and not any(search_within(m, key, deadline) for m in matchers)
        ]
        refused = "no value here (not an allowed field)"
        return [((key,), expected(refused, instance[key])) for key in extra]
    if keyword == "oneOf" and not error.context:
        several = "a value matching exactly one of the allowed forms, not several"
        return [((), expected(several, instance))]
    if (
        keyword == "not"
        and value == {}
        and error.path
        and isinstance(error.path[-1], str)
    ):
        # `additionalProperties: false`, spelled out as `not: {}` at each extra field: said as pydantic says it.
        return [((), expected("no value here (not an allowed field)", instance))]
    pattern = (patterns or {}).get(value, value) if keyword == "pattern" else ""
    what = schema_expected(keyword, value, str(pattern))
    if what is None:
        # A keyword without words of its own (if/then, dependentSchemas, ...): jsonschema's sentence, bounded.
        return [((), _bounded(str(error.message)))]
    return [((), expected(what, instance))]
