# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The one parse of JSON text from outside: strict JSON, bounded nesting and size, problems with their place."""

from __future__ import annotations

import json
import math
import operator
import re
from itertools import accumulate, compress, islice
from typing import Any

from .problems import ToolgenValidationError, ValidationProblem, escape_pointer_part

# Arrays and objects inside each other, at most: deep enough for any real payload (serde_json's default too),
# shallow enough that every validator walks it within Python's recursion limit; jsonschema, the deepest,
# spends about four frames a level on a recursive schema and gives up near 250. Text and data alike: the
# outermost array or object is level 1, and the first one at level MAX_JSON_DEPTH + 1 is refused, by its pointer.
MAX_JSON_DEPTH = 128
# Characters of one JSON text from a model (tool arguments); None in parse_json means no limit.
MAX_JSON_CHARS = 16_000_000
# Python's int() refuses longer digit strings (sys.get_int_max_str_digits); the sentence names the number.
_INT_DIGITS = 4300

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
# What bytes.translate deletes to leave only the brackets, then each bracket as a signed byte: 1 or -1.
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
# Each bracket marked with a 1, the rest 0.
_BRACKET_MARKS = bytes(1 if byte in b"[]{}" else 0 for byte in range(256))
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
    # Only more openings than the limit can nest past it; a string's brackets are no structure.
    if text.count("[") + text.count("{") > max_depth:
        blanked = _STRING.sub('""', text)
        if max(accumulate(_signed(blanked)), default=0) > max_depth:
            raise JSONTextError([_deepest_text(text, blanked, max_depth)])
    floats = _checked_float if _BIG_EXPONENT.search(text) else None
    try:
        return json.loads(
            text,
            parse_constant=_refuse_constant,
            object_pairs_hook=_unique_keys,
            parse_float=floats,
        )
    except json.JSONDecodeError as error:
        # The parser's message ends in "at" when it names a place (its pos): the line and column say it.
        said = error.msg.removesuffix(" at")
        sentence = (
            f"is not valid JSON: {said} at line {error.lineno} column {error.colno}"
        )
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


def _signed(text: str) -> memoryview:
    """Each bracket of `text` (whose strings hold none) as the change of depth it makes: 1 or -1, so that the
    running sum (accumulate, in C) is the depth after each."""
    return memoryview(_skeleton(text).translate(_STEPS)).cast("b")


def _skeleton(text: str) -> bytes:
    """The brackets of `text`, in order."""
    return text.encode("ascii", "replace").translate(None, _NOT_BRACKETS)


def too_deep(pointer: str, kind: str, max_depth: int) -> ValidationProblem:
    """The problem of the array or object (`kind`) at `pointer` that sits one level past `max_depth`: one
    sentence for text and data."""
    return ValidationProblem(
        pointer,
        f"is {kind} nested deeper than {max_depth} levels of arrays and objects "
        f"(at level {max_depth + 1}); at most {max_depth} levels are accepted",
    )


def _deepest_text(text: str, blanked: str, max_depth: int) -> ValidationProblem:
    """The too_deep problem of `text` (`blanked`: its strings `""`), which nests deeper than `max_depth`: at the
    first array or object past it.

    Found in C, in time that grows with the text as a parse of it does, never a Python loop over it: the place
    is the first bracket where the running depth passes the limit; the text before it, closed, nests no deeper
    than the limit, and parsed, its last entries lead to that place.
    """
    # Without a bracket inside a string, the text's own brackets are its structure, and their places are exact.
    exact = _brackets(blanked) == _brackets(text)
    source = text if exact else blanked
    skeleton = _skeleton(source)
    steps = memoryview(skeleton.translate(_STEPS)).cast("b")
    try:
        at = operator.indexOf(accumulate(steps), max_depth + 1)
        # The depth after each bracket before it: at most the limit, so each fits in a byte.
        depths = bytes(accumulate(steps[:at]))
    except ValueError:
        # More closings than openings on the way: there is no pointer to give.
        return too_deep("", "an array or object", max_depth)
    # Each level's opening bracket is just past the last bracket that leaves the depth one level up.
    opening = [depths.rfind(level, 0, at) + 1 for level in range(max_depth)]
    closers = "".join("]" if skeleton[i] == 0x5B else "}" for i in reversed(opening))
    kind = "an array" if skeleton[at] == 0x5B else "an object"
    marks = source.encode("ascii", "replace").translate(_BRACKET_MARKS)
    start = _nth_bracket(marks, at)
    strings = 0 if exact else blanked.count('""', 0, start)
    if strings:
        # Past the last string before the place in `text`, as far as past its `""` in `blanked`.
        last = next(islice(_STRING.finditer(text), strings - 1, None))
        start = last.end() + start - (blanked.rfind('""', 0, start) + 2)
    closed = text[:start] + "0" + closers
    try:
        try:
            node = json.loads(closed, object_pairs_hook=tuple)
        except ValueError:  # an integer too long for int(), or not JSON
            node = json.loads(closed, parse_int=str, object_pairs_hook=tuple)
    except (ValueError, RecursionError):
        # Not JSON before the place: said of the whole text.
        return too_deep("", kind, max_depth)
    parts: list[str] = []
    for _ in range(max_depth):
        if type(node) is list and node:
            parts.append(str(len(node) - 1))
            node = node[-1]
        elif type(node) is tuple and node:
            key, node = node[-1]
            parts.append(escape_pointer_part(key))
        else:  # pragma: no cover - the closed text nests exactly that deep
            return too_deep("", kind, max_depth)
    return too_deep("".join("/" + part for part in parts), kind, max_depth)


def _nth_bracket(marks: bytes, number: int) -> int:
    """Where bracket `number` (from 0) is, in `marks` (a 1 at each bracket): halves counted in C."""
    low, high, before = 0, len(marks), 0
    while high - low > 64:
        middle = (low + high) // 2
        left = marks.count(1, low, middle)
        if before + left > number:
            high = middle
        else:
            before, low = before + left, middle
    for place in range(low, high):
        if marks[place]:
            if before == number:
                return place
            before += 1
    return low  # pragma: no cover - the skeleton has that bracket


def _brackets(text: str) -> int:
    return sum(text.count(bracket) for bracket in "[]{}")


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
    """The first array or object (in document order) of data (not text) nested deeper than `max_depth`, or None:
    the problem parse_json gives the same value as text.

    Walked a level at a time without recursion, each container's items sorted out in C, each container once a
    level however often the data holds it (shared parts cost no more than once, and a value that holds itself
    is too deep); only a value that is too deep is walked again, in document order, for the place.
    """
    if not isinstance(value, (dict, list, tuple)):
        return None
    frontier: list[Any] = [value]
    for _ in range(max_depth):
        below: list[Any] = []
        for current in frontier:
            values = current.values() if isinstance(current, dict) else current
            kinds = set(map(type, values))
            if kinds <= _SCALARS:
                continue
            if kinds <= _PLAIN:
                below += compress(
                    values, map(_CONTAINERS.__contains__, map(type, values))
                )
            else:
                below += [item for item in values if isinstance(item, _OPEN)]
        if not below:
            return None
        frontier = list(dict(zip(map(id, below), below, strict=True)).values())
    return _first_too_deep(value, max_depth)


def _first_too_deep(value: Any, max_depth: int) -> ValidationProblem | None:
    """The too_deep problem of the first array or object in document order past `max_depth`, or None."""
    # How deep each container was entered: entered again only deeper, where more of it may be too deep.
    entered: dict[int, int] = {}
    # (level, key, container, parent entry): the pointer is made only for the one place reported.
    stack: list[tuple[int, Any, Any, Any]] = [(1, None, value, None)]
    while stack:
        entry = stack.pop()
        level, _, current, _ = entry
        if level > max_depth:
            return too_deep(_entry_pointer(entry), _kind(current), max_depth)
        if entered.get(id(current), 0) >= level:
            continue
        entered[id(current)] = level
        items = current.items() if isinstance(current, dict) else enumerate(current)
        below = [
            (level + 1, key, item, entry)
            for key, item in items
            if isinstance(item, _OPEN)
        ]
        stack.extend(reversed(below))
    return None


_SCALARS = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list, tuple})
_PLAIN = _SCALARS | _CONTAINERS
# What nests: a dict (a FrozenDict too), a list or a tuple.
_OPEN = (dict, list, tuple)


def _kind(value: Any) -> str:
    return "an object" if isinstance(value, dict) else "an array"


def _entry_pointer(entry: tuple[int, Any, Any, Any]) -> str:
    parts: list[str] = []
    while entry[3] is not None:
        parts.append("/" + escape_pointer_part(entry[1]))
        entry = entry[3]
    return "".join(reversed(parts))


# The first integer too long for the parse (at _INT_DIGITS digits).
_INT_LIMIT = 10**_INT_DIGITS


def data_problem(
    value: Any, max_depth: int = MAX_JSON_DEPTH
) -> ValidationProblem | None:
    """The first place (in document order) data (not text) is not what parse_json could have given, or None;
    walked without recursion, a container again only where it is met deeper than before.

    Data handed over as arguments must be JSON data as much as text is: no deeper than `max_depth`, no NaN or
    Infinity, no integer too long, only strings as keys, and nothing but dicts, lists, strings, numbers,
    booleans and None.
    """
    entered: dict[int, int] = {}
    stack: list[tuple[int, str, Any]] = [(1, "", value)]
    while stack:
        level, pointer, current = stack.pop()
        problem = _scalar_problem(current)
        if problem is not None:
            return ValidationProblem(pointer, problem)
        if not isinstance(current, (dict, list)):
            continue
        if level > max_depth:
            return too_deep(pointer, _kind(current), max_depth)
        if entered.get(id(current), 0) >= level:
            continue
        entered[id(current)] = level
        if isinstance(current, dict):
            for key in current:
                if not isinstance(key, str):
                    return ValidationProblem(
                        pointer,
                        f"has a key that is not a string ({type(key).__name__})",
                    )
        items = current.items() if isinstance(current, dict) else enumerate(current)
        below = [
            (level + 1, f"{pointer}/{escape_pointer_part(key)}", item)
            for key, item in items
        ]
        stack.extend(reversed(below))
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
