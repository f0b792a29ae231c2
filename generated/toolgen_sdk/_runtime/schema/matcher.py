# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""One `pattern` matched in bounded time: Rust's linear regex when it reads the pattern as Python would, else a
backtracker that stops at a deadline (patterns.py has why, and the checks built on it)."""

from __future__ import annotations

import time
from collections.abc import Callable

from .backtrack import Backtracker, PatternTimeout
from .regex_tree import PatternSyntaxError

# How long the patterns of one check may take in all (the backtracker's share: Rust's regex is linear).
PATTERN_SECONDS = 1.0


class PatternError(ValueError):
    """A pattern neither engine can read: every value it is asked of is reported as not checked."""


def _rust(pattern: str) -> Callable[[str], bool] | None:
    """A linear-time search for `pattern` with Rust's regex (through pydantic-core), or None if it refuses it."""
    # Imported here: `pattern_problem` (toolgen lint) needs no pydantic-core for a pattern the backtracker reads.
    from pydantic_core import SchemaValidator, core_schema

    try:
        validator = SchemaValidator(
            core_schema.str_schema(pattern=pattern, regex_engine="rust-regex")
        )
    except Exception:  # noqa: BLE001 - pydantic-core's SchemaError: lookaround, backreferences, size limits
        return None
    return validator.isinstance_python


def _reads_alike(pattern: str) -> bool:
    """Whether Rust's regex reads `pattern` as Python's re does, given both accept it and it has no lookaround.

    Rust gives meaning to what Python takes literally: `\\<` and `\\>` (word starts and ends), `\\b{...}`, and in
    a class a nested `[`, `&&`, `--` and `~~` (set operations).
    """
    in_class, index, size = False, 0, len(pattern)
    while index < size:
        char = pattern[index]
        if char == "\\":
            following = pattern[index + 1 : index + 3]
            if not in_class and (
                following[:1] in ("<", ">") or following in ("b{", "B{")
            ):
                return False
            index += 2
            continue
        if in_class:
            if char == "[" or pattern[index : index + 2] in ("&&", "--", "~~"):
                return False
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            index += 1
            # A `]` first in a class (after any `^`) is a character of it, in both.
            index += pattern[index] == "^" if index < size else 0
            index += pattern[index] == "]" if index < size else 0
            continue
        index += 1
    return True


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class PatternMatcher:
    """One pattern, compiled once: `search` says whether it matches anywhere in a string, in bounded time."""

    __slots__ = ("_backtracker", "_rust", "linear", "pattern", "problem")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        backtracker: Backtracker | None = None
        problem = ""
        try:
            backtracker = Backtracker(pattern)
        except PatternSyntaxError as error:
            problem = str(error)
        except RecursionError:
            problem = "nested too deep"
        plain = backtracker is None or backtracker.plain
        rust = _rust(pattern) if plain and _reads_alike(pattern) else None
        self._rust = rust
        self._backtracker = backtracker
        # Rust's regex runs it, in time linear in the text: no deadline needed.
        self.linear = rust is not None
        self.problem = (
            None
            if rust is not None or backtracker is not None
            else f"the pattern '{pattern}' cannot be checked: {problem}"
        )

    def search(
        self,
        text: str,
        deadline: float | None = None,
        seconds: float = PATTERN_SECONDS,
    ) -> bool:
        """Whether the pattern matches somewhere in `text`.

        Raises PatternTimeout when the backtracker passes `deadline` (time.monotonic(); `seconds` from now when
        None), PatternError for a pattern neither engine reads.
        """
        rust = self._rust
        if rust is not None:
            if rust(text):
                return True
            # Rust reads UTF-8: a lone surrogate (JSON allows "\ud800") is not one, and fails every pattern there.
            if text.isascii() or not _has_surrogates(text):
                return False
            if self._backtracker is None:
                return rust(text.encode("utf-8", "replace").decode("utf-8"))
        if self._backtracker is None:
            raise PatternError(self.problem)
        if deadline is None:
            deadline = time.monotonic() + seconds
        return self._backtracker.search(text, deadline)


def pattern_problem(pattern: str) -> str | None:
    """Why neither engine can read `pattern` (`PatternMatcher(pattern).problem`), or None; without compiling Rust's
    regex for a pattern the backtracker reads, since reading it is all this asks."""
    try:
        Backtracker(pattern)
    except (PatternSyntaxError, RecursionError):
        return PatternMatcher(pattern).problem
    return None


def search_within(
    matcher: PatternMatcher | str,
    text: str,
    deadline: float | None = None,
    seconds: float = PATTERN_SECONDS,
) -> bool | None:
    """Whether the pattern matches somewhere in `text`, or None when that cannot be told (a pattern neither engine
    reads, or one that ran past `deadline`, else `seconds`): for the places that only describe or guess, which
    must not hang on a schema's pattern either."""
    if isinstance(matcher, str):
        matcher = PatternMatcher(matcher)
    try:
        return matcher.search(text, deadline, seconds)
    except (PatternError, PatternTimeout):
        return None
