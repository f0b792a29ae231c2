# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""JSON Schema `pattern`s matched in bounded time: Rust's linear regex first, a bounded backtracker for the rest.

Python's re backtracks without a bound: `^(a+)+$` against thirty `a`s and a `!` takes minutes, holding the GIL, so
no thread or timeout can stop it. pydantic-core ships Rust's `regex` crate, which matches in time linear in the
text: every pattern it reads as Python's re does (searching, Unicode classes; `$` is the end of the text, as in
ECMA-262) runs there. Lookaround and backreferences it refuses run on backtrack.py's matcher, which remembers the
branches it has tried and stops at a deadline: a pattern that runs out of time is a problem of the value
("could not be checked within 1 s"), never a hang. A check that reads many strings shares one deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .backtrack import PatternTimeout
from .matcher import PATTERN_SECONDS, PatternError, PatternMatcher
from .regex_tree import CharTest, Node, PatternSyntaxError, parse_pattern
from .sentences import expected

if TYPE_CHECKING:
    from pydantic_core import core_schema

__all__ = [
    "PATTERN_SECONDS",
    "PatternCache",
    "PatternError",
    "PatternMatcher",
    "PatternTimeout",
    "bound_pattern",
    "pattern_risk",
    "unchecked_pattern",
]


def unchecked_pattern(pattern: str, seconds: float, value: Any) -> str:
    """The sentence of a value whose pattern ran out of time, in the one shape."""
    return expected(
        f"a string matching '{pattern}' (the pattern could not be checked within {seconds:g} s)",
        value,
    )


class PatternCache:
    """The matchers of the patterns one validator checks, each compiled once (at most `size` kept), and the
    deadline of the check each thread is running: one check's patterns take `seconds` in all."""

    def __init__(self, size: int = 256, seconds: float = PATTERN_SECONDS) -> None:
        self.size = size
        self.seconds = seconds
        self._matchers: dict[str, PatternMatcher] = {}
        self._checks = threading.local()

    def matcher(self, pattern: str) -> PatternMatcher:
        found = self._matchers.get(pattern)
        if found is None:
            found = PatternMatcher(pattern)
            if len(self._matchers) >= self.size:
                # The oldest goes: patterns come from schemas, so the cache is full only for a huge one.
                self._matchers.pop(next(iter(self._matchers), ""), None)
            self._matchers[pattern] = found
        return found

    def search(self, pattern: str, text: str) -> bool:
        """Whether `pattern` matches somewhere in `text`; PatternTimeout or PatternError as PatternMatcher's."""
        deadline = getattr(self._checks, "deadline", None)
        return self.matcher(pattern).search(text, deadline, self.seconds)

    @contextmanager
    def check(self) -> Iterator[None]:
        """One check, on this thread: every pattern matched inside shares one deadline, `seconds` from now."""
        if getattr(self._checks, "deadline", None) is not None:
            yield  # a check inside a check (a validator that calls another) keeps the outer deadline
            return
        self._checks.deadline = time.monotonic() + self.seconds
        try:
            yield
        finally:
            self._checks.deadline = None


def _pattern_check(
    matcher: PatternMatcher, seconds: float
) -> Callable[[str, core_schema.ValidationInfo], str]:
    """pydantic's after-validator for a pattern Rust's regex cannot run: the same error as pydantic's own."""
    # Imported where a validator is built: `pattern_risk` (toolgen lint) needs no pydantic-core.
    from pydantic_core import PydanticCustomError

    pattern = matcher.pattern

    def check(value: str, info: core_schema.ValidationInfo) -> str:
        # models/check.py passes an empty list as the context of each check: its first pattern stores the
        # deadline the rest share.
        context = info.context
        deadline = None
        if type(context) is list:
            if not context:
                context.append(time.monotonic() + seconds)
            deadline = context[0]
        try:
            if matcher.search(value, deadline, seconds):
                return value
        except PatternTimeout:
            raise PydanticCustomError(
                "string_pattern_unchecked",
                "a string matching '{pattern}' (the pattern could not be checked within {seconds} s)",
                {"pattern": pattern, "seconds": f"{seconds:g}"},
            ) from None
        except PatternError as error:
            raise PydanticCustomError(
                "string_pattern_unchecked",
                "a string matching '{pattern}', but {problem}",
                {"pattern": pattern, "problem": str(error)},
            ) from None
        raise PydanticCustomError(
            "string_pattern_mismatch",
            "String should match pattern '{pattern}'",
            {"pattern": pattern},
        )

    return check


def bound_pattern(
    node: dict[str, Any], matchers: dict[str, PatternMatcher], seconds: float
) -> None:
    """A core schema's str `node` with its pattern matched by Rust's regex, or wrapped to run in bounded time
    (core_patterns.bounded_core_schema); `matchers` holds the patterns one walk compiled."""
    pattern = node["pattern"]
    matcher = matchers.get(pattern)
    if matcher is None:
        matcher = matchers[pattern] = PatternMatcher(pattern)
    if matcher.linear:
        node["regex_engine"] = "rust-regex"
        return
    from pydantic_core import core_schema

    # The string's other checks (lengths, strict) stay in Rust, first; only the pattern moves out.
    inner = {
        key: value
        for key, value in node.items()
        if key not in ("pattern", "ref", "regex_engine")
    }
    wrapped = core_schema.with_info_after_validator_function(
        _pattern_check(matcher, seconds),
        inner,  # a str schema, as it came
        ref=node.get("ref"),
        # Its JSON Schema keeps the pattern, as the string's own would have.
        metadata={"pydantic_js_updates": {"pattern": pattern}},
    )
    node.clear()
    node.update(wrapped)


def pattern_risk(pattern: str) -> str | None:
    """Why a backtracking engine (Python's re, most ECMA-262 ones) may take exponential time on `pattern`: a repeat
    inside a repeat (`(a+)+`, `(\\w+\\s?)+$`), or a repeat of a choice two of whose options can match the same
    text (`(a|a)*`). None when neither is there, or when the pattern cannot be read."""
    try:
        tree = parse_pattern(pattern).tree
    except PatternSyntaxError:
        return None
    return _risk(tree, repeated=False)


def _risk(node: Node, repeated: bool) -> str | None:
    kind = node[0]
    if kind == "rep":
        _, body, _, high, _ = node
        many = high is None or high > 1
        if many and repeated:
            return "a repeat inside a repeat"
        inner = _risk(body, repeated or many)
        if inner is not None or not many:
            return inner
        if _overlapping_choice(body):
            return "a repeated choice whose options can match the same text"
        return "a repeat of what can match nothing" if _nullable(body) else None
    if kind in ("seq", "alt"):
        return next(
            (found for item in node[1] if (found := _risk(item, repeated))), None
        )
    if kind in ("group", "look"):
        return _risk(node[1], repeated)
    return None  # a character, an assertion, a backreference; atomic groups are never backtracked into


# Characters two character tests are tried on, to tell whether they can match alike.
_PROBES = (
    "".join(chr(point) for point in range(32, 127))
    + "\t\n\r\x0b\x0c\x85\xa0\xe9\xdf\u0130\u0391\u03b1\u0416\u0436\u05d0\u0663\u0915\u4e00\u3000\U0001f600"
)


def _nullable(node: Node) -> bool:
    """Whether `node` can match the empty string."""
    kind: str = node[0]
    if kind == "char" or kind == "backref":
        return kind == "backref"
    if kind == "seq":
        return all(_nullable(item) for item in node[1])
    if kind == "alt":
        return any(_nullable(item) for item in node[1])
    if kind == "rep":
        return bool(node[2] == 0) or _nullable(node[1])
    if kind in ("group", "atomic"):
        return _nullable(node[1])
    return True  # assertions and lookaround take no characters


def _overlapping_choice(node: Node) -> bool:
    """Whether `node` is (in groups) a choice two of whose options are runs of characters, one of which can
    match the start of the other."""
    while node[0] == "group" or (node[0] == "seq" and len(node[1]) == 1):
        node = node[1] if node[0] == "group" else node[1][0]
    if node[0] != "alt":
        return False
    runs = [run for run in (_characters(option) for option in node[1]) if run]
    return any(
        all(
            any(first(c) and second(c) for c in _PROBES)
            for first, second in zip(runs[i], runs[j], strict=False)
        )
        for i in range(len(runs))
        for j in range(i + 1, len(runs))
    )


def _characters(node: Node) -> list[CharTest]:
    """The character tests of an option made of characters only (in groups); empty for any other."""
    if node[0] == "char":
        return [node[1]]
    if node[0] == "group":
        return _characters(node[1])
    if node[0] != "seq":
        return []
    tests = [_characters(item) for item in node[1]]
    return [test for run in tests for test in run] if all(tests) else []
