"""The config read without a YAML parser: as the last full read resolved it, or from a text in a plain subset.

Reading toolgen.yaml means importing a YAML parser, which costs a quick verb (`validate` of one record, an
up-to-date `check`) about as much as the rest of its start. The resolved settings are kept beside the build
cache under the digest of the config's text and toolgen's source hash; a text or a toolgen that differs in any
byte reads the file again. A checkout without that cache (a CI job) reads a text in the plain subset of YAML
that configs are written in (`read_plain`) by itself, and leaves any other text to the YAML parser. Callers
compare what they get with the manifest's record of the config (its text's digest, and a digest of every
resolved setting, positions included), so neither a cache edited by hand nor a misread text is ever believed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.digests import text_digest
from toolgen.core.errors import ToolgenError
from toolgen.project.config import CACHE_DIR, CONFIG_NAME, Config, display_path, resolve_config

_NAME = "config.json"
_FORMAT = 1


def cached_config(root: Path, path: Path | None) -> Config | None:
    """The config the last full read of this very text made, or None."""
    from toolgen.project.manifest import source_digest

    file = path or root / CONFIG_NAME
    try:
        text = file.read_bytes().decode("utf-8-sig")
        stored = json.loads((root / CACHE_DIR / _NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    digest = text_digest(text)
    if not isinstance(stored, dict) or stored.get("key") != _key(root, file, digest, source_digest()):
        return None
    settings = stored.get("settings")
    if not isinstance(settings, dict):
        return None
    try:
        config = Config(root=root, **{name: _tupled(value) for name, value in settings.items()})
    except TypeError:
        return None
    # Settings of another text under this text's key (the file saved while a verb read it, or a hand edit) would
    # pass the manifest's check as that other text's: they must be this very text's.
    return config if config.text_digest == digest and config.display == display_path(root, file) else None


def remember_config(config: Config, path: Path | None) -> None:
    """Keep `config` for the next reader of the same text; a cache that cannot be written is left alone."""
    from toolgen.project.manifest import source_digest

    file = path or config.root / CONFIG_NAME
    try:
        settings = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name != "root"}
        # Keyed by the digest of the text `config` was read from, not by the file read again: one saved since
        # must not find the settings of the text before it.
        content = json.dumps(
            {"key": _key(config.root, file, config.text_digest, source_digest()), "settings": settings}
        )
        folder = config.root / CACHE_DIR
        folder.mkdir(exist_ok=True)
        staged = folder / f".{_NAME}.{os.getpid()}"
        staged.write_text(content, encoding="utf-8")
        os.replace(staged, folder / _NAME)
    except (OSError, ValueError, TypeError):
        pass


def _key(root: Path, file: Path, digest: str, source: str) -> str:
    return f"{_FORMAT}:{display_path(root, file)}:{digest}:{source}"


def _tupled(value: Any) -> Any:
    """JSON's lists as the tuples Config holds."""
    return tuple(_tupled(item) for item in value) if isinstance(value, list) else value


def plain_config(root: Path, path: Path | None) -> Config | None:
    """The config of a text in the plain subset of YAML below, resolved without a YAML parser; None for any other
    text, or for settings that do not resolve (the full read then says what is wrong).

    Callers believe it only where the package's manifest records this very config (its text's digest and the
    digest of every resolved setting, positions included), as recorded.py does.
    """
    file = path or root / CONFIG_NAME
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    document = read_plain(text, display_path(root, file))
    if document is None:
        return None
    try:
        return resolve_config(root, document)
    except (ToolgenError, AttributeError, TypeError, ValueError):
        return None


class PlainDocument:
    """A config text read by `read_plain`: its data and the line:col of every node, as YAML's composer places them."""

    # A plain class: a dataclass costs every verb that imports this module more than reading a config does.
    __slots__ = ("data", "display", "positions", "text")

    def __init__(self, display: str, text: str, data: Any, positions: dict[tuple[str, ...], tuple[int, int]]) -> None:
        self.display, self.text, self.data, self.positions = display, text, data, positions

    def locate(self, pointer: tuple[str, ...]) -> tuple[int, int]:
        """Line:col of the node at `pointer`, or of its nearest existing ancestor (as source.load's Document)."""
        for length in range(len(pointer), -1, -1):
            found = self.positions.get(pointer[:length])
            if found is not None:
                return found
        return (1, 1)

    def diagnostic(
        self, pointer: tuple[str, ...], rule: str, message: str, severity: Severity = Severity.ERROR
    ) -> Diagnostic:
        from toolgen.core.positions import pointer_text

        line, col = self.locate(pointer)
        return Diagnostic(self.display, line, col, severity, rule, message, pointer_text(pointer))


class _NotPlain(Exception):
    """The text uses YAML beyond the plain subset: PyYAML reads it."""


# Patterns as text: re compiles (and keeps) them on first use, so that a verb that never reads a text pays nothing.
_KEY = r"([A-Za-z_][A-Za-z0-9_]*):(?: +|$)"
# A plain scalar of the subset: it starts with a letter, digit, `_`, `.` or `/`, and holds no flow indicator,
# comment sign or quote, and no `: ` (it would be a mapping).
_PLAIN = r"[A-Za-z0-9_./][^\[\]{},#'\"]*"
# The scalars YAML 1.2's core schema reads as other than strings (source/yamlcore.py): the subset takes the
# booleans and refuses the rest.
_BOOL = MappingProxyType({"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False})
_NOT_STRING = (
    r"(?:~|null|Null|NULL|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))"
)


class _Line:
    """A line with content: its number, its indentation and what follows it."""

    __slots__ = ("content", "indent", "number")

    def __init__(self, number: int, indent: int, content: str) -> None:
        self.number, self.indent, self.content = number, indent, content


def read_plain(text: str, display: str) -> PlainDocument | None:
    """The document of a config text in the plain subset of YAML, or None for any other text.

    The subset: a mapping of `key: value` lines from the first column, whose values are plain or quoted scalars
    on one line, flow lists of those on one line, block lists of those (`- item`) or mappings of the same kind
    further in; comments and blank lines anywhere. Plain scalars are strings or booleans; single-quoted ones
    may double their quote, double-quoted ones hold no backslash. Anything else (anchors, tags, block and
    multi-line scalars, numbers, nulls, tabs, flow mappings, repeated keys, document markers) is left to PyYAML.
    """
    lines = []
    for number, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        # Printable text only (a subset of what YAML reads): no tab, control character, lone CR, line or
        # paragraph separator, byte order mark, surrogate or noncharacter, where YAML breaks lines or refuses.
        if not raw.isprintable():
            return None
        content = raw.lstrip(" ")
        if content and not content.startswith("#"):
            lines.append(_Line(number, len(raw) - len(content), content.rstrip(" ")))
    if not lines or lines[0].indent or lines[0].content.startswith(("---", "...", "%")):
        return None
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    try:
        data, end = _mapping(lines, 0, 0, (), positions)
    except (_NotPlain, RecursionError):  # mappings nested past the stack: PyYAML says how deep it reads
        return None
    return PlainDocument(display, text, data, positions) if end == len(lines) else None


def _mapping(
    lines: list[_Line],
    index: int,
    indent: int,
    pointer: tuple[str, ...],
    positions: dict[tuple[str, ...], tuple[int, int]],
) -> tuple[dict[str, Any], int]:
    """The block mapping whose keys start at column `indent` + 1, from `lines[index]`; the index after it."""
    result: dict[str, Any] = {}
    positions[pointer] = (lines[index].number, indent + 1)
    while index < len(lines) and lines[index].indent == indent:
        line = lines[index]
        found = re.match(_KEY, line.content)
        key = found.group(1) if found is not None else ""
        if found is None or key in result or key in _BOOL or re.fullmatch(_NOT_STRING, key):
            raise _NotPlain  # not a key, a repeated one, or one YAML reads as a boolean or a null
        rest = line.content[found.end() :]
        index += 1
        if rest and not rest.startswith("#"):
            result[key] = _inline(rest, line.number, indent + found.end() + 1, (*pointer, key), positions)
            continue
        following = lines[index] if index < len(lines) else None
        if following is not None and _is_item(following) and following.indent >= indent:
            result[key], index = _sequence(lines, index, following.indent, (*pointer, key), positions)
        elif following is not None and following.indent > indent:
            result[key], index = _mapping(lines, index, following.indent, (*pointer, key), positions)
        else:
            raise _NotPlain  # an empty value: a null, placed where the composer places it
    if index < len(lines) and lines[index].indent > indent:
        raise _NotPlain  # a scalar going on to the next line, or an indentation YAML reads otherwise
    return result, index


def _is_item(line: _Line) -> bool:
    return line.content == "-" or line.content.startswith("- ")


def _sequence(
    lines: list[_Line],
    index: int,
    indent: int,
    pointer: tuple[str, ...],
    positions: dict[tuple[str, ...], tuple[int, int]],
) -> tuple[list[Any], int]:
    """The block list whose `-` marks are at column `indent` + 1, from `lines[index]`; the index after it."""
    items: list[Any] = []
    positions[pointer] = (lines[index].number, indent + 1)
    while index < len(lines) and lines[index].indent == indent and _is_item(lines[index]):
        line = lines[index]
        rest = line.content[1:].lstrip(" ")
        if not rest or rest.startswith(("#", "[", "- ")):
            raise _NotPlain  # a nested block, a null or a nested list
        column = indent + len(line.content) - len(rest) + 1
        items.append(_scalar_line(rest, line.number, column, (*pointer, str(len(items))), positions))
        index += 1
    return items, index


def _inline(
    text: str, number: int, column: int, pointer: tuple[str, ...], positions: dict[tuple[str, ...], tuple[int, int]]
) -> Any:
    """A value on its key's line: a flow list, or a scalar."""
    if not text.startswith("["):
        return _scalar_line(text, number, column, pointer, positions)
    positions[pointer] = (number, column)
    items: list[Any] = []
    at = 1
    while True:
        at = _spaces(text, at)
        if text.startswith("]", at) and not items:
            break
        value, after = _scalar(text, at, in_flow=True)  # from `at`, not a copy of the rest: a long list stays linear
        positions[(*pointer, str(len(items)))] = (number, column + at)
        items.append(value)
        at = _spaces(text, after)
        if text.startswith("]", at):
            break
        if not text.startswith(",", at):
            raise _NotPlain
        at += 1
    _end_of_line(text, at + 1)
    return items


def _scalar_line(
    text: str, number: int, column: int, pointer: tuple[str, ...], positions: dict[tuple[str, ...], tuple[int, int]]
) -> Any:
    """A scalar that is the rest of its line (but for a comment)."""
    value, width = _scalar(text, 0, in_flow=False)
    _end_of_line(text, width)
    positions[pointer] = (number, column)
    return value


def _scalar(text: str, at: int, *, in_flow: bool) -> tuple[Any, int]:
    """The scalar that starts at `text[at]`, and the index just after it."""
    if text.startswith("'", at):
        end = at + 1
        while True:
            end = text.find("'", end)
            if end < 0:
                raise _NotPlain  # it goes on to the next line
            if not text.startswith("''", end):
                return text[at + 1 : end].replace("''", "'"), end + 1
            end += 2
    if text.startswith('"', at):
        end = text.find('"', at + 1)
        if end < 0 or "\\" in text[at + 1 : end]:
            raise _NotPlain
        return text[at + 1 : end], end + 1
    found = re.compile(_PLAIN).match(text, at)
    if found is None:
        raise _NotPlain
    plain = found.group().rstrip(" ")
    if ": " in plain or plain.endswith(":") or (in_flow and ":" in plain) or re.fullmatch(_NOT_STRING, plain):
        raise _NotPlain
    return _BOOL.get(plain, plain), at + len(plain)


def _spaces(text: str, at: int) -> int:
    while text.startswith(" ", at):
        at += 1
    return at


def _end_of_line(text: str, at: int) -> None:
    """Only spaces, or spaces and a comment, may follow a value."""
    rest = text[at:]
    if rest.strip(" ") and not (rest.startswith(" ") and rest.lstrip(" ").startswith("#")):
        raise _NotPlain
