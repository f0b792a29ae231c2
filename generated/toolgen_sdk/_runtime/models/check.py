# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Strict validation of JSON data against a model, and the JSON Schema check for what models cannot hold."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pydantic

from ..schema.keywords import map_subschemas
from ..schema.sentences import schema_error_sentences
from .jsontext import parse_json
from .plans import PLANS_ATTRIBUTE, planned_problems, plans_of
from .problems import (
    MOST_PROBLEMS,
    ToolgenValidationError,
    ValidationProblem,
    bounded_sentence,
    escape_pointer_part,
)


def parsed_json(data: str | bytes | bytearray) -> Any:
    """JSON text from outside as data: strict, bounded (see jsontext.parse_json), or ToolgenValidationError."""
    return parse_json(data)


def schema_validator(
    schema: Mapping[str, Any],
    resources: Mapping[str, Any] | None = None,
    dialect: str | None = None,
) -> Any:
    """A validator from the jsonschema package for `schema` (its declared draft, else `dialect`, else 2020-12).

    References resolve inside `schema`, to `resources` (URI -> document) and to the published meta-schemas, and
    nowhere else: a reference to anything more is a problem of the check, never a fetch over the network.
    Patterns are matched in bounded time (schema/patterns.py), each compiled once for this validator.
    """
    # Imported here: only tools whose models do not enforce every keyword need jsonschema.
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from referencing import Registry, Resource  # type: ignore[import-not-found,unused-ignore]
    from referencing.jsonschema import DRAFT202012, specification_with  # type: ignore[import-not-found,unused-ignore]

    from ..schema.pattern_keywords import bounded_keywords
    from ..schema.patterns import PatternCache

    fallback = (
        validator_for({"$schema": dialect}, default=Draft202012Validator)
        if dialect
        else Draft202012Validator
    )
    validator = validator_for(schema, default=fallback)
    documents: dict[str, Any] = dict(resources or {})
    # jsonschema reports a `false` subschema's error without its place; `{"not": {}}` refuses the same values
    # and is reported where it applies.
    schema = _false_spelled_out(schema)
    documents = {
        uri: _false_spelled_out(document) for uri, document in documents.items()
    }
    # A document that does not name its draft is read as the schema's own.
    own = specification_with(
        str(validator.META_SCHEMA.get("$schema", "")), default=DRAFT202012
    )
    loaded = [
        (uri, Resource.from_contents(document, own))
        for uri, document in documents.items()
    ]
    # An explicit registry has no retrieve function; jsonschema's default one would fetch unknown URIs.
    registry: Registry[Any] = Registry().with_resources(loaded).crawl()
    # jsonschema would match patterns with Python's re, unbounded; the cache's engines read `\p{...}` too.
    return bounded_keywords(validator, PatternCache())(schema, registry=registry)


# Where jsonschema's own message for `false` says more than "is not allowed" (it names the key or item).
_FALSE_KEPT = ("propertyNames", "unevaluatedProperties", "unevaluatedItems")


def _false_spelled_out(schema: Any) -> Any:
    if schema is False:
        return {"not": {}}
    if not isinstance(schema, dict):
        return schema
    result = map_subschemas(schema, _false_spelled_out)
    for key in _FALSE_KEPT:
        if schema.get(key) is False:
            result[key] = False
    return result


# The most jsonschema errors one check keeps: each holds its schema, value and paths (kilobytes), so the
# errors of a million bad items would take gigabytes to say what the first thousand already say.
MOST_SCHEMA_ERRORS = 1000


def schema_accepts(validator: Any, value: Any) -> bool:
    """Whether `value` meets the validator's schema: stops at the first error instead of listing them all."""
    try:
        with _one_check(validator):
            return next(iter(validator.iter_errors(value)), None) is None
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot follow accepts nothing
        return False


def _one_check(validator: Any) -> AbstractContextManager[None]:
    """One check by `validator`: the patterns it matches share one deadline (schema/patterns.py)."""
    patterns = getattr(validator, "PATTERNS", None)
    return patterns.check() if patterns is not None else nullcontext()


_OUT_OF_STACK = (
    "could not be checked against its schema: the check nests more calls than Python allows "
    "from where it was called"
)


def schema_problems(validator: Any, value: Any) -> list[ValidationProblem]:
    """The places `value` breaks the validator's schema, in document order: at most MOST_SCHEMA_ERRORS."""
    try:
        with _one_check(validator):
            first = list(
                itertools.islice(validator.iter_errors(value), MOST_SCHEMA_ERRORS + 1)
            )
    except RecursionError:
        # Data within MAX_JSON_DEPTH fits, unless the caller has used up most of the stack already.
        return [ValidationProblem("", _OUT_OF_STACK)]
    except Exception as error:  # noqa: BLE001 - a schema jsonschema cannot follow must not crash a dispatch
        return [
            ValidationProblem("", f"could not be checked against its schema: {error}")
        ]
    more = len(first) > MOST_SCHEMA_ERRORS
    errors = sorted(
        first[:MOST_SCHEMA_ERRORS],
        key=lambda e: tuple((isinstance(p, str), p) for p in e.absolute_path),
    )
    # One problem per place and sentence: `required` reports each missing name once, whichever error saw it.
    found: dict[tuple[str, str], ValidationProblem] = {}
    for found_error in errors:
        for below, sentence in schema_error_sentences(found_error):
            pointer = _pointer((*found_error.absolute_path, *below))
            found.setdefault((pointer, sentence), ValidationProblem(pointer, sentence))
    # jsonschema's own sentences quote the whole value; a huge one must not become a huge message.
    problems = [
        ValidationProblem(p.pointer, bounded_sentence(p.message))
        for p in found.values()
    ]
    if more:
        problems.append(
            ValidationProblem(
                "",
                f"has more problems than the first {MOST_SCHEMA_ERRORS} errors listed;"
                " the rest are left out",
            )
        )
    return problems


def _pointer(path: Iterable[Any]) -> str:
    return "".join("/" + escape_pointer_part(part) for part in path)


def check(
    model: type[pydantic.BaseModel] | pydantic.TypeAdapter[Any],
    data: Any,
    *,
    json_text: bool = True,
) -> Any:
    """Validate `data` against `model` (a model class, or an adapter of a union), strictly (no "5" for 5).

    Raises ToolgenValidationError. With `json_text`, a str or bytes is JSON text to parse first (as tool
    arguments arrive from a model); without it, a str is the value itself (a tool that returns a string).
    """
    # A dict (most data) is asked about first: every check on this path costs a share of a small message.
    value = (
        data
        if type(data) is dict or not json_text or not isinstance(data, _JSON_TEXT)
        else parsed_json(data)
    )
    # The core validator directly: model_validate's own checks cost as much as validating a small message.
    validator = (
        model.__pydantic_validator__ if isinstance(model, type) else model.validator
    )
    try:
        # The context is where the check's first bounded pattern keeps the deadline the rest share
        # (schema/patterns.py): however many strings a value holds, its patterns take PATTERN_SECONDS in all.
        return validator.validate_python(value, strict=True, context=[])
    except _PydanticError as caught:
        # Its traceback holds this frame, which would hold it: a cycle that only the garbage collector
        # frees, at a cost to every invalid value. The traceback says only that validation failed here.
        error = caught.with_traceback(None)
    except (TypeError, ArithmeticError) as failed:
        raise unchecked(failed) from None
    # Raised after the except clause, not in it: an error with no context to chain is raised and caught faster.
    verdict = rejected(model, value, error)
    if type(verdict) is not ToolgenValidationError:
        return verdict
    try:
        raise verdict
    finally:
        # The error's traceback holds this frame: without the local, no cycle is left for the collector.
        del verdict


def unchecked(failed: TypeError | ArithmeticError) -> ToolgenValidationError:
    """The error for a constraint pydantic cannot apply to a value (multipleOf on a non-number): a problem."""
    return ToolgenValidationError(
        [ValidationProblem("", f"could not be checked: {failed}")]
    )


def rejected(
    model: type[pydantic.BaseModel] | pydantic.TypeAdapter[Any],
    value: Any,
    error: pydantic.ValidationError,
) -> Any:
    """What `check` makes of pydantic's `error` on `value` (its traceback dropped): the value checked again
    with its integral floats as integers where that passes, else the ToolgenValidationError to raise.

    The error is returned, not raised: the caller raises it from its own frame, one frame fewer to unwind.
    """
    validator = (
        model.__pydantic_validator__ if isinstance(model, type) else model.validator
    )
    # Many errors are listed only when the problems are read, and then only the first MOST_PROBLEMS: the list
    # of a million costs more than the validation; whether an integral float failed is read off the data then.
    # Fewer are listed without their contexts and links: the messages say the contexts, and plans.py keys on
    # them; the fold asks for the contexts only for a shape it has no plan for.
    many = error.error_count() > MOST_PROBLEMS
    items = None if many else error.errors(include_url=False, include_context=False)
    if (
        _has_integral_float(items)
        if items is not None
        else _holds_integral_float(value)
    ):
        # JSON Schema counts 1.0 as an integer (models often write 5.0), equal to 1 in an enum too;
        # strict pydantic does not.
        try:
            return validator.validate_python(
                _integral_floats_as_ints(value), strict=True, context=[]
            )
        except _PydanticError:
            pass  # the problems of the value as given are the ones to report
    # The plans of the shapes of errors this validator has folded before (plans.py), looked up here first.
    kept = None if many else getattr(model, PLANS_ATTRIBUTE, None)
    plans = (
        kept[1]
        if kept is not None and kept[0] is validator
        else None
        if many
        else plans_of(model, validator)
    )
    # ToolgenValidationError.deferred's body, without its call: this runs for every invalid value.
    made: ToolgenValidationError = _new_exception(ToolgenValidationError)
    made._problems = None
    made._unfolded = (planned_problems, (error, value, items, plans))
    return made


_PydanticError = pydantic.ValidationError
_new_exception = BaseException.__new__


def _has_integral_float(items: list[Any]) -> bool:
    for item in items:
        if item["type"] in _INTEGER_ERRORS and _integral_float(item.get("input")):
            return True
    return False


def _holds_integral_float(value: Any) -> bool:
    """Whether JSON data holds a float with no fractional part anywhere: a walk, not a recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        if _integral_float(item):
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


_INTEGER_ERRORS = frozenset({"int_type", "literal_error"})
_JSON_TEXT = (str, bytes, bytearray)


def _integral_float(value: Any) -> bool:
    return type(value) is float and value.is_integer()


def _integral_floats_as_ints(value: Any) -> Any:
    """`value` with every float that has no fractional part written as an int (JSON Schema's integer)."""
    if _integral_float(value):
        return int(value)
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(item) for item in value]
    return value
