# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Patterns read into a tree: the syntax Python's re accepts (which the build checks them with) and ECMA-262's own.

Python's `(?P<name>...)`, `(?P=name)`, `(?i)` / `(?i:...)` (flags a, i, m, s, u), `\\A`, `\\Z`, octal escapes,
`\\N{...}`, atomic groups and possessive repeats; ECMA-262's `(?<name>...)`, `\\k<name>`, `\\u{...}`, `\\cX` and
General_Category escapes (`\\p{Lu}`). Classes mean what they mean in Python's re (`\\d` any decimal digit,
`\\w` letters, digits and `_`, in any script); `$` is the end of the text, as in ECMA-262 and Rust, not also
the place before a final newline as in Python. backtrack.py runs the tree; patterns.py's `pattern_risk` reads it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .ecma_regex import _categories

CharTest = Callable[[str], bool]
Node = tuple[Any, ...]


class PatternSyntaxError(ValueError):
    """A pattern this matcher cannot read."""


# The deepest nesting of groups a pattern may have.
MAX_NESTING = 200

# Assertions: the start and end of the text, of a line (flag m), word boundaries and not, in ASCII (flag a).
BOS, EOS, BOL, EOL, WORDB, NWORDB, AWORDB, ANWORDB = range(8)

_ASCII_WORD = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
)
_ASCII_SPACE = frozenset(" \t\n\r\f\v")


def _digit(c: str) -> bool:
    return c.isdecimal()


def word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _space(c: str) -> bool:
    return c.isspace()


def _ascii_digit(c: str) -> bool:
    return "0" <= c <= "9"


def ascii_word(c: str) -> bool:
    return c in _ASCII_WORD


def _ascii_space(c: str) -> bool:
    return c in _ASCII_SPACE


def _not(test: CharTest) -> CharTest:
    return lambda c: not test(c)


def _folded(test: CharTest) -> CharTest:
    """`test`, case-insensitively (as re.IGNORECASE: the character, its lower and its upper case)."""

    def folded(c: str) -> bool:
        if test(c):
            return True
        lower, upper = c.lower(), c.upper()
        return (len(lower) == 1 and test(lower)) or (len(upper) == 1 and test(upper))

    return folded


_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", "a": "\a"}
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
_DIGITS = frozenset("0123456789")
_FLAGS = frozenset("aimsu")


class _Parser:
    """Pattern text to a tree of tuples: ("char", test), ("seq", items), ("alt", options), ("rep", node, low,
    high or None, greedy), ("group", node, index or None), ("assert", kind), ("look", node, behind, negate),
    ("atomic", node), ("backref", index, fold)."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0
        self.groups = 0
        self.names: dict[str, int] = {}
        self.references: list[int | str] = []
        self.depth = 0
        # Lookaround, atomic groups, possessive repeats: what Rust's regex has no form of.
        self.special = False

    def fail(self, why: str) -> PatternSyntaxError:
        return PatternSyntaxError(f"{why} at position {self.at}")

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.text[index] if index < len(self.text) else ""

    def parse(self) -> Node:
        flags = frozenset[str]()
        tree = self.alternatives(flags)
        if self.at < len(self.text):
            raise self.fail("unbalanced parenthesis")
        for reference in self.references:
            if isinstance(reference, str) and reference not in self.names:
                raise self.fail(f"unknown group name {reference!r}")
            if isinstance(reference, int) and reference > self.groups:
                raise self.fail(f"invalid group reference {reference}")
        return tree

    def alternatives(self, flags: frozenset[str]) -> Node:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.fail("groups nested too deep")
        options = []
        while True:
            items, flags = self.sequence(flags)
            options.append(("seq", items))
            if self.peek() != "|":
                break
            self.at += 1
        self.depth -= 1
        return options[0] if len(options) == 1 else ("alt", options)

    def sequence(self, flags: frozenset[str]) -> tuple[list[Node], frozenset[str]]:
        items: list[Node] = []
        while self.at < len(self.text) and self.peek() not in "|)":
            atom, flags = self.atom(flags)
            if atom is not None:
                items.append(self.quantified(atom))
        return items, flags

    def quantified(self, atom: Node) -> Node:
        char = self.peek()
        if char in ("*", "+", "?"):
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
            self.at += 1
        elif char == "{":
            bounds = self.braces()
            if bounds is None:
                return atom
            low, high = bounds
        else:
            return atom
        greedy, possessive = True, False
        if self.peek() == "?":
            greedy = False
            self.at += 1
        elif self.peek() == "+":
            possessive = True
            self.at += 1
        if self.peek() in ("*", "+", "?") or (
            self.peek() == "{" and self.braces(look=True)
        ):
            raise self.fail("multiple repeat")
        node: Node = ("rep", atom, low, high, greedy)
        self.special = self.special or possessive
        return ("atomic", node) if possessive else node

    def braces(self, look: bool = False) -> tuple[int, int | None] | None:
        """`{n}`, `{n,}`, `{n,m}` or `{,m}` at the cursor (consumed unless `look`), else None: a literal `{`."""
        end = self.text.find("}", self.at)
        if end < 0:
            return None
        body = self.text[self.at + 1 : end]
        low_text, comma, high_text = body.partition(",")
        if not (low_text.isdigit() or (comma and not low_text)) or not (
            high_text.isdigit() or not high_text
        ):
            return None
        if not low_text.isascii() or not high_text.isascii():
            return None
        low = int(low_text) if low_text else 0
        high = (int(high_text) if high_text else None) if comma else low
        if high is not None and high < low:
            raise self.fail("min repeat greater than max repeat")
        if not look:
            self.at = end + 1
        return low, high

    def atom(self, flags: frozenset[str]) -> tuple[Node | None, frozenset[str]]:
        char = self.peek()
        if char == "(":
            return self.group(flags)
        self.at += 1
        if char == ".":
            return (
                "char",
                (lambda c: True) if "s" in flags else (lambda c: c != "\n"),
            ), flags
        if char == "^":
            return ("assert", BOL if "m" in flags else BOS), flags
        if char == "$":
            return ("assert", EOL if "m" in flags else EOS), flags
        if char == "[":
            return ("char", self.charclass(flags)), flags
        if char == "\\":
            return self.escape(flags), flags
        if char in ("*", "+", "?"):
            raise self.fail("nothing to repeat")
        if char == "{" and self.braces_here():
            raise self.fail("nothing to repeat")
        return self.literal(char, flags), flags

    def braces_here(self) -> bool:
        self.at -= 1
        try:
            return self.braces(look=True) is not None
        finally:
            self.at += 1

    def literal(self, char: str, flags: frozenset[str]) -> Node:
        if "i" in flags and char.lower() != char.upper():
            return ("char", _folded(lambda c: c == char))
        return ("char", char.__eq__)

    def group(self, flags: frozenset[str]) -> tuple[Node | None, frozenset[str]]:
        self.at += 1
        index: int | None = None
        if self.peek() != "?":
            self.groups += 1
            index = self.groups
            return self.closed(("group", self.alternatives(flags), index)), flags
        self.at += 1
        kind = self.peek()
        if kind == ":":
            self.at += 1
            return self.closed(self.alternatives(flags)), flags
        self.special = (
            self.special
            or kind in ("=", "!", ">")
            or kind + self.peek(1) in ("<=", "<!")
        )
        if kind in ("=", "!"):
            self.at += 1
            return self.closed(
                ("look", self.alternatives(flags), False, kind == "!")
            ), flags
        if kind == "<" and self.peek(1) in ("=", "!"):
            negate = self.peek(1) == "!"
            self.at += 2
            return self.closed(("look", self.alternatives(flags), True, negate)), flags
        if kind == ">":
            self.at += 1
            return self.closed(("atomic", self.alternatives(flags))), flags
        if kind == "#":
            end = self.text.find(")", self.at)
            if end < 0:
                raise self.fail("missing ), unterminated comment")
            self.at = end + 1
            return None, flags
        if kind == "<" or (kind == "P" and self.peek(1) == "<"):
            self.at += 1 if kind == "<" else 2
            name = self.name(">")
            self.groups += 1
            self.names[name] = self.groups
            return self.closed(("group", self.alternatives(flags), self.groups)), flags
        if kind == "P" and self.peek(1) == "=":
            self.at += 2
            name = self.name(")")
            self.references.append(name)
            return ("backref", name, "i" in flags), flags
        return self.flagged(flags)

    def flagged(self, flags: frozenset[str]) -> tuple[Node | None, frozenset[str]]:
        """`(?ims)` (for the rest of the enclosing group) or `(?i-m:...)`."""
        on, off = set[str](), set[str]()
        target = on
        while self.peek() and self.peek() not in ":)":
            char = self.peek()
            if char == "-" and target is on:
                target = off
            elif char in _FLAGS:
                target.add(char)
            elif not on and not off:
                raise self.fail(f"unsupported group '(?{char}'")
            else:
                raise self.fail(f"unknown flag {char!r}")
            self.at += 1
        if not self.peek():
            raise self.fail("missing ), unterminated flags")
        changed = (flags | on) - off
        if self.peek() == ")":
            self.at += 1
            return None, frozenset(changed)
        self.at += 1
        return self.closed(self.alternatives(frozenset(changed))), flags

    def closed(self, node: Node) -> Node:
        if self.peek() != ")":
            raise self.fail("missing ), unterminated subpattern")
        self.at += 1
        return node

    def name(self, end: str) -> str:
        close = self.text.find(end, self.at)
        name = self.text[self.at : close] if close >= 0 else ""
        if not name.isidentifier():
            raise self.fail(f"bad group name {name!r}")
        self.at = close + 1
        return name

    def escape(self, flags: frozenset[str]) -> Node:
        """The escape at the cursor (after its backslash), outside a class."""
        char = self.peek()
        if not char:
            raise self.fail("bad escape (end of pattern)")
        if char in "AZzbB":
            self.at += 1
            ascii_only = "a" in flags
            return (
                "assert",
                {
                    "A": BOS,
                    "Z": EOS,
                    "z": EOS,
                    "b": AWORDB if ascii_only else WORDB,
                    "B": ANWORDB if ascii_only else NWORDB,
                }[char],
            )
        if char in "123456789" and not self.octal_ahead(0):
            digits = char + (self.peek(1) if self.peek(1) in _DIGITS else "")
            self.at += len(digits)
            self.references.append(int(digits))
            return ("backref", int(digits), "i" in flags)
        if char == "k" and self.peek(1) == "<":
            self.at += 2
            name = self.name(">")
            self.references.append(name)
            return ("backref", name, "i" in flags)
        test = self.escape_test(flags, in_class=False)
        return ("char", _folded(test) if "i" in flags else test)

    def octal_ahead(self, offset: int) -> bool:
        """Whether three octal digits start at the cursor + `offset` (an octal escape, not a group number)."""
        return all(self.peek(offset + i) in _OCTAL for i in range(3))

    def escape_test(self, flags: frozenset[str], in_class: bool) -> CharTest:
        """The character test of the escape at the cursor (after its backslash), consumed."""
        char = self.peek()
        ascii_only = "a" in flags
        classes = {
            "d": _ascii_digit if ascii_only else _digit,
            "w": ascii_word if ascii_only else word,
            "s": _ascii_space if ascii_only else _space,
        }
        if char and char.lower() in classes:
            self.at += 1
            test = classes[char.lower()]
            return test if char.islower() else _not(test)
        if char in ("p", "P") and char:
            self.at += 1
            return self.property(char == "P")
        return self.escape_char(in_class).__eq__

    def escape_char(self, in_class: bool) -> str:
        """The one character the escape at the cursor (after its backslash) stands for, consumed."""
        char = self.peek()
        self.at += 1
        point = self.code_point(char, in_class)
        if point is not None:
            return chr(point)
        if char.isascii() and char.isalnum():
            raise self.fail(f"bad escape \\{char}")
        return char

    def code_point(self, char: str, in_class: bool) -> int | None:
        if char in _SIMPLE:
            return ord(_SIMPLE[char])
        if char == "b" and in_class:
            return 8
        if char in _OCTAL and (char == "0" or in_class or self.octal_ahead(-1)):
            digits = char
            while len(digits) < 3 and self.peek() in _OCTAL:
                digits += self.peek()
                self.at += 1
            return int(digits, 8)
        if char in ("x", "u", "U"):
            return self.hex_point(char)
        if char == "c" and self.peek().isascii() and self.peek().isalpha():
            self.at += 1
            return ord(self.text[self.at - 1]) % 32
        if char == "N" and self.peek() == "{":
            close = self.text.find("}", self.at)
            try:
                return ord(unicodedata.lookup(self.text[self.at + 1 : close]))
            except KeyError:
                raise self.fail("undefined character name") from None
            finally:
                self.at = close + 1
        return None

    def hex_point(self, char: str) -> int:
        if self.peek() == "{" and char in ("x", "u"):
            close = self.text.find("}", self.at)
            digits = self.text[self.at + 1 : close] if close > 0 else ""
            end = close + 1
        else:
            width = {"x": 2, "u": 4, "U": 8}[char]
            digits = self.text[self.at : self.at + width]
            end = self.at + width
            if len(digits) != width:
                digits = ""
        if not digits or not _HEX.issuperset(digits) or int(digits, 16) > 0x10FFFF:
            raise self.fail(f"bad escape \\{char}")
        self.at = end
        return int(digits, 16)

    def property(self, negate: bool) -> CharTest:
        if self.peek() != "{":
            raise self.fail("bad escape \\p")
        close = self.text.find("}", self.at)
        name = self.text[self.at + 1 : close] if close > 0 else ""
        categories = _categories(name) if name else None
        if categories is None:
            raise self.fail(f"unknown Unicode property {name!r}")
        self.at = close + 1
        wanted = frozenset(categories)
        category = unicodedata.category

        def test(c: str) -> bool:
            return (category(c) in wanted) is not negate

        return test

    def charclass(self, flags: frozenset[str]) -> CharTest:
        negate = self.peek() == "^"
        if negate:
            self.at += 1
        singles: set[str] = set()
        ranges: list[tuple[str, str]] = []
        tests: list[CharTest] = []
        first = True
        while True:
            char = self.peek()
            if not char:
                raise self.fail("unterminated character set")
            if char == "]" and not first:
                self.at += 1
                break
            first = False
            low = self.class_atom(flags, tests)
            if low is None:
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.at += 1
                high = self.class_atom(flags, tests)
                if high is None or high < low:
                    raise self.fail("bad character range")
                ranges.append((low, high))
            else:
                singles.add(low)
        return self.class_test(
            frozenset(singles), tuple(ranges), tuple(tests), negate, flags
        )

    def class_atom(self, flags: frozenset[str], tests: list[CharTest]) -> str | None:
        """One character of a class, or None when it was a class escape (`\\d`, `\\p{L}`) added to `tests`."""
        char = self.peek()
        self.at += 1
        if char != "\\":
            return char
        escaped = self.peek()
        if escaped and (escaped.lower() in ("d", "w", "s") or escaped in ("p", "P")):
            tests.append(self.escape_test(flags, in_class=True))
            return None
        if not escaped:
            raise self.fail("unterminated character set")
        return self.escape_char(in_class=True)

    @staticmethod
    def class_test(
        singles: frozenset[str],
        ranges: tuple[tuple[str, str], ...],
        tests: tuple[CharTest, ...],
        negate: bool,
        flags: frozenset[str],
    ) -> CharTest:
        def test(c: str) -> bool:
            hit = (
                c in singles
                or any(low <= c <= high for low, high in ranges)
                or any(t(c) for t in tests)
            )
            return hit is not negate

        if "i" not in flags:
            return test

        def folded(c: str) -> bool:
            if negate:
                return all(test(x) for x in (c, c.lower(), c.upper()) if len(x) == 1)
            return _folded(test)(c)

        return folded


@dataclass(frozen=True)
class PatternTree:
    """A pattern read: its tree, its groups (count and names), whether it refers back to one, and whether it has
    what Rust's regex has no form of (lookaround, atomic groups, possessive repeats)."""

    tree: Node
    groups: int
    names: Mapping[str, int]
    backrefs: bool
    special: bool


def parse_pattern(pattern: str) -> PatternTree:
    """`pattern` read into a tree; PatternSyntaxError for what this reader cannot read."""
    parser = _Parser(pattern)
    try:
        tree = parser.parse()
    except RecursionError:
        raise PatternSyntaxError("groups nested too deep") from None
    return PatternTree(
        tree,
        parser.groups,
        MappingProxyType(parser.names),
        bool(parser.references),
        parser.special,
    )
