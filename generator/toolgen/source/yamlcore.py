"""YAML read the way YAML 1.2's core schema (and JSON) reads it, composed once, with alias abuse refused.

PyYAML implements YAML 1.1, where `yes`, `no`, `on` and `off` are booleans, `010` is octal and
`2024-01-01` is a date; in a schema file those would silently change enum values and defaults. YAML 1.1 also
breaks lines at U+0085, U+2028 and U+2029, which YAML 1.2 (like JSON) reads as ordinary characters: PyYAML
is handed a private-use stand-in for each, one character for one so that every line:col stays right, and the
values get the characters back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import yaml

try:  # libyaml's parser is about 10x faster; the pure-Python one gives identical results
    from yaml import CSafeLoader as _Base
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Base  # type: ignore[assignment]

# A YAML file whose aliases expand past this many nodes is refused rather than expanded.
MAX_EXPANDED_NODES = 2_000_000
# Nor may aliases multiply what a file writes by more than this, past a few thousand nodes: a 400-byte file of
# nested aliases had expanded into a 35 MB package (sharing a fragment a few dozen times stays far below it).
MAX_ALIAS_GROWTH = 100
_GROWTH_FROM = 10_000

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
# More digits than any integer within the float range has (1.8e308 has 309), with room for a sign.
_MAX_INT_DIGITS = 320
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_REPLACED = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
}


def json_int(digits: str) -> int | float:
    """A decimal integer literal, for YAML and JSON alike. One with more digits than the float range holds reads
    as the infinity it is to most JSON readers (the load stage refuses it at its place) instead of reaching
    int(), which raises past 4,300 digits."""
    if len(digits) > _MAX_INT_DIGITS:
        return -math.inf if digits.startswith("-") else math.inf
    return int(digits)


class CoreLoader(_Base):
    """A safe loader with YAML 1.2 core-schema scalars."""

    yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED]
        for first, resolvers in _Base.yaml_implicit_resolvers.items()
    }

    def construct_core_int(self, node: yaml.ScalarNode) -> int | float:
        value = str(self.construct_scalar(node))
        if value.startswith("0o"):
            return int(value[2:], 8)
        if value.startswith("0x"):
            return int(value[2:], 16)
        return json_int(value)


CoreLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
CoreLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
CoreLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
CoreLoader.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""])
CoreLoader.add_constructor("tag:yaml.org,2002:int", CoreLoader.construct_core_int)


class AliasError(Exception):
    """A recursive alias, or aliases that expand to an unreasonable size."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.line = mark.line + 1 if mark else 1
        self.col = mark.column + 1 if mark else 1


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value
    elif isinstance(node, yaml.SequenceNode):
        yield from node.value


def check_aliases(root: yaml.Node | None) -> None:
    """Raise AliasError for a node that contains itself, or for too large an expansion."""
    if root is None:
        return
    expanded = 0
    on_path: set[int] = set()
    written: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            continue
        if id(node) in on_path:
            raise AliasError("a YAML alias refers to a node that contains it; JSON has no such values", node.start_mark)
        expanded += 1
        written.add(id(node))
        if expanded > MAX_EXPANDED_NODES:
            raise AliasError(f"YAML aliases expand to more than {MAX_EXPANDED_NODES:,} nodes", node.start_mark)
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    if expanded > _GROWTH_FROM and expanded > MAX_ALIAS_GROWTH * len(written):
        message = (
            f"YAML aliases expand the {len(written):,} values written here into {expanded:,}, over "
            f"{MAX_ALIAS_GROWTH} times as many; write the values out, or share a schema with $defs and $ref"
        )
        raise AliasError(message, root.start_mark)


# Line breaks to YAML 1.1 only. YAML 1.2 section 5.4: "YAML version 1.1 did support the above non-ASCII line
# break characters; however, JSON does not. Hence, to ensure JSON compatibility, YAML treats them as non-break
# characters as of version 1.2."
_YAML_1_1_BREAKS = "\x85\u2028\u2029"
# Where stand-ins are taken from: private-use characters, printable to PyYAML and in no token's syntax (the
# planes' too: a file may hold every character of the first range).
_PRIVATE_USE = (range(0xE000, 0xF900), range(0xF0000, 0xFFFFE), range(0x100000, 0x10FFFE))
# What YAML 1.2 (c-printable) allows in a file; PyYAML's reader refuses the rest, placing it by an offset.
_UNPRINTABLE = re.compile(r"[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _stand_ins(text: str) -> dict[int, str]:
    """A private-use character the text does not hold for each YAML 1.1 line break it holds (code -> stand-in)."""
    found = [char for char in _YAML_1_1_BREAKS if char in text]
    if not found:
        return {}
    free = (chr(code) for codes in _PRIVATE_USE for code in codes if chr(code) not in text)
    return {ord(char): next(free) for char in found}


def _restore(node: yaml.Node, back: dict[int, str]) -> None:
    """Every scalar of the tree (keys too) with its stand-ins turned back into the characters they stand for.

    Run after check_aliases, so the tree holds no cycle and is of bounded size; a node aliases share is done once.
    """
    done: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in done:
            continue
        done.add(id(current))
        if isinstance(current, yaml.ScalarNode):
            current.value = current.value.translate(back)
        else:
            stack.extend(_children(current))


def unprintable(text: str) -> tuple[int, int, str] | None:
    """Line, column (in characters, from 1) and the character of the first character YAML does not allow in a
    file (a control character other than tab and line ends, U+FFFE, U+FFFF), or None. Lines end at LF, CRLF or
    CR, as YAML 1.2 and editors count them."""
    found = _UNPRINTABLE.search(text)
    if found is None:
        return None
    before = text[: found.start()]
    line = before.count("\n") + before.count("\r") - before.count("\r\n") + 1
    start = max(before.rfind("\n"), before.rfind("\r")) + 1
    return line, found.start() - start + 1, found.group()


def compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    """The node tree (for positions) and the data built from it, from one parse."""
    stand_ins = _stand_ins(text)
    loader = CoreLoader(text.translate(stand_ins) if stand_ins else text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as error:
            if stand_ins:  # the sentence may quote a stand-in: it names the character written
                back = {ord(stand_in): chr(code) for code, stand_in in stand_ins.items()}
                error.problem = error.problem and error.problem.translate(back)
                error.context = error.context and error.context.translate(back)
            raise
        check_aliases(node)
        if stand_ins and node is not None:
            _restore(node, {ord(stand_in): chr(code) for code, stand_in in stand_ins.items()})
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data
