# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The one parse of JSON text from outside: strict JSON, bounded nesting and size, problems with their place."""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from types import MappingProxyType
from typing import Any

from .problems import ToolgenValidationError, ValidationProblem, escape_pointer_part

# Arrays and objects inside each other, at most: deep enough for any real payload (serde_json's default too),
# shallow enough that every validator walks it within Python's recursion limit; jsonschema, the deepest,
# spends about four frames a level on a recursive schema and gives up near 250.
MAX_JSON_DEPTH = 128
# Characters of one JSON text from a model (tool arguments); None in parse_json means no limit.
MAX_JSON_CHARS = 16_000_000
# Python's int() refuses longer digit strings (sys.get_int_max_str_digits); the sentence names the number.
_INT_DIGITS = 4300

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = MappingProxyType({"[": 1, "{": 1, "]": -1, "}": -1})
# An exponent of three digits or more may overflow a float; only then is every float looked at.
_BIG_EXPONENT = re.compile(r"[eE][+]?\d{3,}")


class JSONTextError(ToolgenValidationError):
    """Raised by parse_json; `line` and `column` (1-based) say where text stops being JSON, when it does."""

    def __init__(
        self,
        problems: list[ValidationProblem],
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(problems)
        self.line = line
        self.column = column


class _Refused(ValueError):
    """Raised inside the fast parse: something strict JSON refuses, located by the second parse."""


class _Bad:
    """What the locating parse puts where a refused value was: the key it concerns (if any) and why."""

    __slots__ = ("key", "reason")

    def __init__(self, reason: str, key: str | None = None) -> None:
        self.reason = reason
        self.key = key


def parse_json(
    data: str | bytes | bytearray,
    *,
    max_depth: int = MAX_JSON_DEPTH,
    max_chars: int | None = MAX_JSON_CHARS,
) -> Any:
    """`data` as JSON data, or JSONTextError (a ToolgenValidationError) with each problem at its JSON pointer.

    Refused: text that is not JSON or not UTF-8, more than `max_chars` characters, nesting deeper than
    `max_depth`, NaN/Infinity/-Infinity, a key repeated within one object, integers too long for Python and
    numbers too large for a float.
    """
    if max_chars is not None and len(data) > max_chars:
        raise _error(
            "", f"is {len(data)} characters long; at most {max_chars} are read"
        )
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as error:
            raise _error("", f"is not UTF-8 text (byte {error.start})") from None
    else:
        text = data
    depth = _depth(text, max_depth)
    if depth > max_depth:
        raise _error(
            "", f"nests arrays and objects deeper than {max_depth} levels ({depth})"
        )
    floats = _checked_float if _BIG_EXPONENT.search(text) else None
    try:
        return json.loads(
            text,
            parse_constant=_refuse_constant,
            object_pairs_hook=_unique_keys,
            parse_float=floats,
        )
    except json.JSONDecodeError as error:
        sentence = f"is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        raise JSONTextError(
            [ValidationProblem("", sentence)], error.lineno, error.colno
        ) from None
    except (ValueError, RecursionError):
        # A refused value or an integer too long for int(): parsed again with markers to say where.
        pass
    problems = _located(text)
    if (
        not problems
    ):  # pragma: no cover - the first parse failed, so the second finds why
        problems = [ValidationProblem("", "is not valid JSON")]
    raise JSONTextError(problems)


def _error(pointer: str, message: str) -> JSONTextError:
    return JSONTextError([ValidationProblem(pointer, message)])


def _depth(text: str, limit: int) -> int:
    """How deep arrays and objects nest (stops counting just past `limit`); strings are skipped."""
    if text.count("[") + text.count("{") <= limit:
        return 0  # cannot be deeper than the brackets it has
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    # The running sum of +1 per opening and -1 per closing bracket, its maximum taken in C, not a Python loop.
    deepest = max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
    return min(deepest, limit + 1) if deepest > limit else 0


def _refuse_constant(name: str) -> Any:
    raise _Refused(name)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Refused("repeated key")
    return result


def _checked_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(text)
    return value


def _located(text: str) -> list[ValidationProblem]:
    """Every refused value of `text` (already known to nest within the limit) at its pointer."""
    try:
        data = json.loads(
            text,
            parse_constant=lambda name: _Bad(
                f"is {name}, which JSON does not allow (write null or a number)"
            ),
            object_pairs_hook=_marked_keys,
            parse_float=_marked_float,
            parse_int=_marked_int,
        )
    except (ValueError, RecursionError) as error:  # pragma: no cover - defensive
        return [ValidationProblem("", f"is not valid JSON: {error}")]
    problems: list[ValidationProblem] = []
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        pointer, value = stack.pop()
        if isinstance(value, _Bad):
            place = pointer
            if value.key is not None:
                place += "/" + escape_pointer_part(value.key)
            problems.append(ValidationProblem(place, value.reason))
        elif isinstance(value, dict):
            stack.extend(
                (pointer + "/" + escape_pointer_part(key), item)
                for key, item in reversed(value.items())
            )
        elif isinstance(value, list):
            stack.extend(
                (f"{pointer}/{index}", item)
                for index, item in reversed(list(enumerate(value)))
            )
    return problems


def _marked_keys(pairs: list[tuple[str, Any]]) -> Any:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return _Bad(
                "appears more than once in one object (JSON readers disagree on which value counts)",
                key,
            )
        seen.add(key)
    return result  # pragma: no cover - a length difference means a repeat


def _marked_float(text: str) -> Any:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return _Bad(f"is a number too large to hold ({_cut(text)})")
    return value


def _marked_int(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        digits = len(text.lstrip("-"))
        return _Bad(
            f"is an integer of {digits} digits; at most {_INT_DIGITS} are accepted"
        )


def _cut(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def nesting_problem(
    value: Any, max_depth: int = MAX_JSON_DEPTH
) -> ValidationProblem | None:
    """The first place data (not text) nests deeper than `max_depth`, or None; walked without recursion."""
    stack: list[tuple[int, str, Any]] = [(0, "", value)]
    while stack:
        depth, pointer, current = stack.pop()
        if isinstance(current, (dict, list, tuple)):
            if depth >= max_depth:
                return ValidationProblem(
                    pointer,
                    f"nests arrays and objects deeper than {max_depth} levels",
                )
            items = current.items() if isinstance(current, dict) else enumerate(current)
            stack.extend(
                (depth + 1, f"{pointer}/{escape_pointer_part(key)}", item)
                for key, item in items
            )
    return None


# The first integer too long for the parse (at _INT_DIGITS digits).
_INT_LIMIT = 10**_INT_DIGITS


def data_problem(
    value: Any, max_depth: int = MAX_JSON_DEPTH
) -> ValidationProblem | None:
    """The first place data (not text) is not what parse_json could have given, or None; walked without recursion.

    Data handed over as arguments must be JSON data as much as text is: no deeper than `max_depth`, no NaN or
    Infinity, no integer too long, only strings as keys, and nothing but dicts, lists, strings, numbers,
    booleans and None.
    """
    stack: list[tuple[int, str, Any]] = [(0, "", value)]
    while stack:
        depth, pointer, current = stack.pop()
        problem = _scalar_problem(current)
        if problem is not None:
            return ValidationProblem(pointer, problem)
        if isinstance(current, (dict, list)):
            if depth >= max_depth:
                return ValidationProblem(
                    pointer, f"nests arrays and objects deeper than {max_depth} levels"
                )
            if isinstance(current, dict):
                for key in current:
                    if not isinstance(key, str):
                        return ValidationProblem(
                            pointer,
                            f"has a key that is not a string ({type(key).__name__})",
                        )
            items = current.items() if isinstance(current, dict) else enumerate(current)
            stack.extend(
                (depth + 1, f"{pointer}/{escape_pointer_part(key)}", item)
                for key, item in items
            )
    return None


def _scalar_problem(value: Any) -> str | None:
    if value is None or isinstance(value, (bool, str, dict, list)):
        return None
    if type(value) is int:
        return (
            None
            if -_INT_LIMIT < value < _INT_LIMIT
            else "is an integer too long for JSON"
        )
    if type(value) is float:
        return None if math.isfinite(value) else f"is {value!r}, which JSON cannot hold"
    return f"is a {type(value).__name__}, which is not a JSON value"
