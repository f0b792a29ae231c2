"""Source positions: map JSON pointers to 1-based line:col in YAML or JSON text, computed only when asked."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterator
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


def _json_offsets(text: str) -> tuple[dict[Pointer, int], list[Pointer]]:
    """Where each value (and each key, under KEY) of JSON text starts, and the keys repeated within one object.

    One pass over the tokens with an explicit stack, so the nesting depth costs no recursion.
    """
    offsets: dict[Pointer, int] = {}
    duplicates: list[Pointer] = []
    # Open containers, innermost last: [pointer, is_object, index of the next array item, key of the member].
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
            at = (*frame[0], key, KEY)
            if at in offsets:
                duplicates.append(at)
            offsets[at] = match.start()
            frame[3] = key
            expect_key = False
            continue
        if not stack:
            pointer: Pointer = ()
        else:
            frame = stack[-1]
            pointer = (*frame[0], frame[3]) if frame[1] else (*frame[0], str(frame[2]))
        offsets[pointer] = match.start()
        if first == "{":
            stack.append([pointer, True, 0, ""])
            expect_key = True
        elif first == "[":
            stack.append([pointer, False, 0, ""])
    return offsets, duplicates


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
    offsets, _ = _json_offsets(text)
    convert = _line_col(text)

    def find(pointer: Pointer) -> tuple[int, int] | None:
        offset = offsets.get(pointer)
        return None if offset is None else convert(offset)

    return find


def json_positions(text: str) -> dict[Pointer, tuple[int, int]]:
    offsets, _ = _json_offsets(text)
    convert = _line_col(text)
    return {pointer: convert(offset) for pointer, offset in offsets.items()}


def json_duplicate_keys(text: str) -> Iterator[tuple[Pointer, int, int]]:
    """Keys repeated within one object (the second occurrence), in document order."""
    offsets, duplicates = _json_offsets(text)
    convert = _line_col(text)
    for duplicate in duplicates:
        line, col = convert(offsets[duplicate])
        yield duplicate[:-1], line, col
