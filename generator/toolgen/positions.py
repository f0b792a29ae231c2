"""Source positions: map JSON pointers to 1-based line:col in YAML or JSON text, computed only when asked."""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterator

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


class _JsonScanner:
    """Walks JSON text (already known to be valid) recording where each value starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0
        self.offsets: dict[Pointer, int] = {}
        self.duplicates: list[Pointer] = []

    def skip_ws(self) -> None:
        text, i = self.text, self.index
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        self.index = i

    def string(self) -> str:
        start = self.index
        i = start + 1
        text = self.text
        while True:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                break
            i += 1
        self.index = i + 1
        return str(json.loads(text[start : i + 1]))

    def value(self, pointer: Pointer) -> None:
        self.skip_ws()
        self.offsets[pointer] = self.index
        c = self.text[self.index]
        if c == "{":
            self.index += 1
            self.skip_ws()
            if self.text[self.index] == "}":
                self.index += 1
                return
            while True:
                self.skip_ws()
                key_offset = self.index
                key = self.string()
                if (*pointer, key, KEY) in self.offsets:
                    self.duplicates.append((*pointer, key, KEY))
                self.offsets[(*pointer, key, KEY)] = key_offset
                self.skip_ws()
                self.index += 1  # ':'
                self.value((*pointer, key))
                self.skip_ws()
                c = self.text[self.index]
                self.index += 1
                if c == "}":
                    return
        elif c == "[":
            self.index += 1
            self.skip_ws()
            if self.text[self.index] == "]":
                self.index += 1
                return
            position = 0
            while True:
                self.value((*pointer, str(position)))
                position += 1
                self.skip_ws()
                c = self.text[self.index]
                self.index += 1
                if c == "]":
                    return
        elif c == '"':
            self.string()
        else:
            i = self.index
            while i < len(self.text) and self.text[i] not in ",]} \t\r\n":
                i += 1
            self.index = i


def _line_col(text: str) -> Callable[[int], tuple[int, int]]:
    line_starts = [0]
    line_starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")

    def convert(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1] + 1

    return convert


def json_positions(text: str) -> dict[Pointer, tuple[int, int]]:
    scanner = _JsonScanner(text)
    scanner.value(())
    convert = _line_col(text)
    return {pointer: convert(offset) for pointer, offset in scanner.offsets.items()}


def json_duplicate_keys(text: str) -> Iterator[tuple[Pointer, int, int]]:
    """Keys repeated within one object (the second occurrence), in document order."""
    scanner = _JsonScanner(text)
    scanner.value(())
    convert = _line_col(text)
    for duplicate in scanner.duplicates:
        line, col = convert(scanner.offsets[duplicate])
        yield duplicate[:-1], line, col
