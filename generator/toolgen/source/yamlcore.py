"""YAML read the way YAML 1.2's core schema (and JSON) reads it, composed once, with alias abuse refused.

PyYAML implements YAML 1.1, where `yes`, `no`, `on` and `off` are booleans, `010` is octal and
`2024-01-01` is a date; in a schema file those would silently change enum values and defaults.
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


def compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    """The node tree (for positions) and the data built from it, from one parse."""
    loader = CoreLoader(text)
    try:
        node = loader.get_single_node()
        check_aliases(node)
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data
