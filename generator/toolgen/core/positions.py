"""Source positions: JSON pointers to 1-based line:col in YAML or JSON text, when asked; JSON syntax errors said whole."""

from __future__ import annotations

import bisect
import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import yaml

Pointer = tuple[str, ...]
# Appended to a pointer, names the position of the mapping key rather than of its value.
KEY = "\x00key"


def pointer_text(pointer: Pointer) -> str:
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in pointer)


def yaml_positions(node: yaml.Node | None) -> dict[Pointer, tuple[int, int]]:
    """Line:col of every node of a composed YAML document, keyed by its pointer (aliases checked beforehand)."""
    positions: dict[Pointer, tuple[int, int]] = {}
    if node is None:
        return positions
    stack: list[tuple[Pointer, yaml.Node]] = [((), node)]
    while stack:
        pointer, current = stack.pop()
        positions[pointer] = (current.start_mark.line + 1, current.start_mark.column + 1)
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                positions[(*pointer, str(key.value), KEY)] = (key.start_mark.line + 1, key.start_mark.column + 1)
                stack.append(((*pointer, str(key.value)), value))
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                stack.append(((*pointer, str(index)), item))
    return positions


def yaml_duplicate_keys(node: yaml.Node | None) -> Iterator[tuple[Pointer, int, int]]:
    """Keys repeated within one mapping: YAML loaders keep the last silently, which hides mistakes."""
    stack: list[tuple[Pointer, yaml.Node | None]] = [((), node)]
    while stack:
        pointer, current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in current.value:
                name = str(key.value)
                if name in seen:
                    yield (*pointer, name), key.start_mark.line + 1, key.start_mark.column + 1
                seen.add(name)
                stack.append(((*pointer, name), value))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(((*pointer, str(i)), item) for i, item in enumerate(current.value))


# One token of JSON text (known to be valid): a string, a punctuation mark, or a bare literal (number, true, ...).
# Whitespace matches none of them, so `finditer` steps over it.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')

# The container the top-level value sits in, as if it were the one member of an outer container.
_OUTSIDE = -1


@dataclass(frozen=True)
class _JsonOffsets:
    """Where each value and key of JSON text starts, held as each container's members, never as whole pointers.

    A pointer is as long as the depth it reaches, so a table keyed by whole pointers costs the square of the depth:
    text nested 20,000 deep took 2 GB. Here each entry is one (container, member) pair, and a pointer is walked
    from the top when asked about.
    """

    values: dict[tuple[int, str], int]
    keys: dict[tuple[int, str], int]
    # The container a member opens, if it is an array or object.
    opened: dict[tuple[int, str], int]
    # Each container's own place: the container it sits in and its member name there.
    parents: list[tuple[int, str]]
    # Keys repeated within one object: container, key and offset of each occurrence after the first, in order.
    repeated: list[tuple[int, str, int]]

    def find(self, pointer: Pointer) -> int | None:
        is_key = bool(pointer) and pointer[-1] == KEY
        route = pointer[:-1] if is_key else pointer
        place = (_OUTSIDE, "")
        for member in route:
            container = self.opened.get(place)
            if container is None:
                return None
            place = (container, member)
        return (self.keys if is_key else self.values).get(place)

    def pointer(self, container: int, member: str) -> Pointer:
        route = [member]
        while container != _OUTSIDE:
            container, member = self.parents[container]
            route.append(member)
        route.pop()  # the top-level value's own (empty) member name
        return tuple(reversed(route))


def _json_offsets(text: str) -> _JsonOffsets:
    """Where each value (and each key) of JSON text starts, and the keys repeated within one object.

    One pass over the tokens with an explicit stack, so the nesting depth costs no recursion, and each token
    costs the same at any depth.
    """
    values: dict[tuple[int, str], int] = {}
    keys: dict[tuple[int, str], int] = {}
    opened: dict[tuple[int, str], int] = {}
    parents: list[tuple[int, str]] = []
    repeated: list[tuple[int, str, int]] = []
    # Open containers, innermost last: [its number, is_object, index of the next array item, key of the member].
    stack: list[list[Any]] = []
    expect_key = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first == "}" or first == "]":
            stack.pop()
            expect_key = False  # an empty object closes where a key could have started
            continue
        if first == ",":
            if stack[-1][1]:
                expect_key = True
            else:
                stack[-1][2] += 1
            continue
        if first == ":":
            continue
        if expect_key:
            frame = stack[-1]
            key = token[1:-1] if "\\" not in token else str(json.loads(token))
            at = (frame[0], key)
            if at in keys:
                repeated.append((frame[0], key, match.start()))
            keys[at] = match.start()
            frame[3] = key
            expect_key = False
            continue
        if not stack:
            place = (_OUTSIDE, "")
        else:
            frame = stack[-1]
            place = (frame[0], frame[3]) if frame[1] else (frame[0], str(frame[2]))
        values[place] = match.start()
        if first == "{" or first == "[":
            number = len(parents)
            parents.append(place)
            opened[place] = number
            stack.append([number, first == "{", 0, ""])
            expect_key = first == "{"
    return _JsonOffsets(values, keys, opened, parents, repeated)


def _line_col(text: str) -> Callable[[int], tuple[int, int]]:
    line_starts = [0]
    line_starts.extend(match.end() for match in _NEWLINE.finditer(text))

    def convert(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1] + 1

    return convert


_NEWLINE = re.compile("\n")


def json_locator(text: str) -> Callable[[Pointer], tuple[int, int] | None]:
    """Line:col of the value (or key) at a pointer in JSON text, or None; offsets are turned into line:col only
    for the pointers asked about."""
    offsets = _json_offsets(text)
    convert = _line_col(text)

    def find(pointer: Pointer) -> tuple[int, int] | None:
        offset = offsets.find(pointer)
        return None if offset is None else convert(offset)

    return find


class JsonPlaces:
    """Where values of JSON text are, by pointer: line:col of a value (or of its nearest ancestor), and inside a
    string that holds JSON text itself (tool arguments), the place of a value of that inner text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._offsets = _json_offsets(text)
        self._convert = _line_col(text)

    def exact(self, pointer: Pointer) -> int | None:
        """Offset of the value at `pointer`, or None when there is none."""
        return self._offsets.find(pointer)

    def near(self, pointer: Pointer) -> tuple[int, int] | None:
        """Line:col of the value at `pointer` or of its nearest ancestor that is there (None past the top)."""
        for length in range(len(pointer), -1, -1):
            offset = self._offsets.find(pointer[:length])
            if offset is not None:
                return self._convert(offset)
        return None

    def inside(self, string: Pointer, inner: Pointer) -> tuple[int, int] | None:
        """Line:col, in this text, of the value at `inner` (or its nearest ancestor) of the JSON text that the
        string at `string` holds; None when there is no string there or its content is no JSON."""
        offset = self._offsets.find(string)
        if offset is None:
            return None
        found = string_inner_offset(self.text, offset, inner)
        return None if found is None else self._convert(found)


# One JSON string literal, its quotes included.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_ESCAPES = MappingProxyType({'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"})


def _unescaped(literal: str) -> tuple[str, list[int]] | None:
    """The text a JSON string literal (without its quotes) holds, and where in the literal each character starts."""
    chars: list[str] = []
    starts: list[int] = []
    i, end = 0, len(literal)
    while i < end:
        char = literal[i]
        if char != "\\":
            chars.append(char)
            starts.append(i)
            i += 1
            continue
        kind = literal[i + 1] if i + 1 < end else ""
        if kind in _ESCAPES:
            chars.append(_ESCAPES[kind])
            starts.append(i)
            i += 2
            continue
        if kind != "u" or i + 6 > end:
            return None
        try:
            code = int(literal[i + 2 : i + 6], 16)
        except ValueError:
            return None
        width = 6
        if 0xD800 <= code < 0xDC00 and literal[i + 6 : i + 8] == "\\u":
            try:
                low = int(literal[i + 8 : i + 12], 16)
            except ValueError:
                low = 0
            if 0xDC00 <= low < 0xE000:  # a surrogate pair: one character, as json.loads reads it
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                width = 12
        chars.append(chr(code))
        starts.append(i)
        i += width
    return "".join(chars), starts


def string_inner_offset(text: str, quote: int, inner: Pointer) -> int | None:
    """Offset in `text` of the value at `inner` (or its nearest ancestor) within the JSON text held by the JSON
    string literal that starts at offset `quote`; None when there is no literal there or it holds no JSON."""
    match = _JSON_STRING.match(text, quote)
    if match is None:
        return None
    read = _unescaped(match.group()[1:-1])
    if read is None:
        return None
    held, starts = read
    try:
        json.loads(held)
        offsets = _json_offsets(held)
    except (ValueError, IndexError, RecursionError):
        return None  # not JSON: the string itself is the place
    for length in range(len(inner), -1, -1):
        found = offsets.find(inner[:length])
        if found is not None:
            return quote + 1 + starts[found] if found < len(starts) else None
    return None


def json_duplicate_keys(text: str) -> Iterator[tuple[Pointer, int, int]]:
    """Keys repeated within one object (the second occurrence), in document order."""
    offsets = _json_offsets(text)
    convert = _line_col(text)
    for container, key, offset in offsets.repeated:
        line, col = convert(offset)
        yield offsets.pointer(container, key), line, col


# The escapes JSON has for the control characters it has a short one for; the others are written \u00XX.
_SHORT_ESCAPES = MappingProxyType({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"})
_CHAR_NAMES = MappingProxyType({"\t": "tab", "\n": "line break", "\r": "carriage return", "\x00": "null"})
# A string literal, or a bracket: what the open containers before a syntax error are counted from.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_CLOSING = MappingProxyType({"{": "}", "[": "]"})


def _char(char: str) -> str:
    """A character as a reader can find it again: itself when plainly visible, and its code point unless ASCII."""
    code = f"U+{ord(char):04X}"
    if char.isascii() and char.isprintable() and char != " ":
        return f"`{char}`"
    if char in _CHAR_NAMES:
        return f"{code} ({_CHAR_NAMES[char]})"
    name = unicodedata.name(char, "")
    if char.isprintable() and not char.isspace():
        return f"`{char}` ({code} {name})" if name else f"`{char}` ({code})"
    return f"{code} ({name})" if name else code


# A bare word where JSON wanted something else (`tru`, `None`, an unquoted key): shown whole, up to a length.
_WORD = re.compile(r"[A-Za-z_][\w.-]{0,39}")


def _found(text: str, pos: int) -> str:
    if pos >= len(text):
        return "the end of the file"
    word = _WORD.match(text, pos)
    return f"`{word.group()}`" if word else _char(text[pos])


def _open_container(text: str, offset: int) -> tuple[str, int] | None:
    """The innermost array or object still open at `offset` of JSON text: its bracket and where it opened."""
    stack: list[tuple[str, int]] = []
    for match in _STRING_OR_BRACKET.finditer(text, 0, offset):
        token = match.group()
        if token in _CLOSING:
            stack.append((token, match.start()))
        elif token in ("}", "]") and stack:
            stack.pop()
    return stack[-1] if stack else None


def json_syntax_problem(error: json.JSONDecodeError) -> str:
    """What a JSON syntax error found and what was expected there, said whole: the parser's own message ends
    in `at` and leaves the place to a `(char N)` offset. Its line:col is the error's `lineno`:`colno`."""
    text, pos, kind = error.doc, error.pos, error.msg
    found = _found(text, pos)
    before = text[:pos].rstrip()
    open_at = _open_container(text, pos)
    if open_at is not None:
        bracket, where = open_at
        line, col = _line_col(text)(where)
        container = f"the {'object' if bracket == '{' else 'array'} opened at {line}:{col}"
        closing = _CLOSING[bracket]
    else:
        container, closing = "", ""
    if kind.startswith("Invalid control character"):
        char = text[pos]
        escape = _SHORT_ESCAPES.get(char, f"\\u{ord(char):04x}")
        missing = " (or the string's closing `\"` is missing before it)" if char in "\r\n" else ""
        return (
            f"found the control character {_char(char)} inside a string, where JSON expects it escaped: write it as "
            f"{escape}{missing}"
        )
    if kind.startswith("Unexpected UTF-8 BOM"):  # only a second one is left once the file is read as utf-8-sig
        return "found U+FEFF (a byte order mark) where a value was expected; remove it"
    if kind.startswith("Unterminated string"):
        return 'the string that starts here has no closing `"`: found the end of the file where it was expected'
    if kind.startswith("Invalid \\uXXXX"):
        start = pos - 1 if text[pos : pos + 1] == "u" and text[pos - 1 : pos] == "\\" else pos
        return f"found `{text[start : start + 6]}` inside a string, where \\u is followed by four hexadecimal digits"
    if kind.startswith("Invalid \\escape"):
        start = pos if text[pos : pos + 1] == "\\" else pos - 1
        return (
            f"found the escape `{text[start : start + 2]}` inside a string, which JSON does not have; expected one of "
            '\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hexadecimal digits (a backslash itself is \\\\)'
        )
    if kind.startswith("Extra data"):
        return (
            f"found {found} after the end of the JSON value, where the file was expected to end "
            "(a JSON file holds one value; put several in an array)"
        )
    closes = text[pos : pos + 1] in ("}", "]")
    trailing = "; remove the `,` before it: JSON has no trailing commas" if closes and before.endswith(",") else ""
    if kind.startswith("Illegal trailing comma"):  # Python 3.13 and later name it, at the comma
        end = _char(closing) if closing else "the end"
        return f"found `,` before {end}, where another item was expected; remove the `,`: JSON has no trailing commas"
    if kind.startswith("Expecting value"):
        hint = trailing or _value_hint(text, pos)
        inside = f" in {container}" if container and pos >= len(text) else ""
        return (
            f"found {found}{inside} where a value was expected (a string in double quotes, a number, an object, an "
            f"array, true, false or null){hint}"
        )
    if kind.startswith("Expecting property name"):
        unquoted = "; write the key in double quotes" if _WORD.match(text, pos) else ""
        hint = trailing or unquoted or _value_hint(text, pos)
        return f"found {found} where a key in double quotes was expected{hint}"
    if kind.startswith("Expecting ':'"):
        return f"found {found} after a key, where `:` was expected"
    if kind.startswith("Expecting ','") and closing:
        return f"found {found} where `,` or {_char(closing)} was expected, after an item of {container}"
    # A message this table does not know (another Python): the parser's words, and what was found there.
    words = kind.removesuffix(" at").removesuffix(" starting")
    return f"{words}: found {found}"


def _value_hint(text: str, pos: int) -> str:
    """Why what was found is no JSON, for the usual slips: comments, single or typographic quotes."""
    if text.startswith(("//", "/*"), pos):
        return "; JSON has no comments"
    char = text[pos : pos + 1]
    if char == "'":
        return "; JSON strings and keys take double quotes"
    if char in ("\u201c", "\u201d"):
        return '; a typographic quote is not `"`'
    return ""
