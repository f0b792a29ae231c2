# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A request's tool list in a wire's spelling and back: read into canonical definitions, exported, kept as sent."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def export_checked(tools: list[dict[str, Any]], provider: str) -> list[Any]:
    """`export_tools(...).tools`, with a schema export cannot read reported as malformed input."""
    from .export import ToolSet, export_tools

    try:
        if isinstance(tools, ToolSet):
            return tools.exported(provider)
        return export_tools(tools, provider).tools
    except (TypeError, AttributeError, KeyError) as exc:
        raise ValueError(
            f"/tools: expected each tool's input schema to be a JSON Schema object ({exc})"
        ) from None


ToolReader = Callable[[Any], "dict[str, Any] | None"]


def decode_tools(
    raw: Any,
    kept: dict[str, Any],
    read: ToolReader,
    provider: str,
    plain: Callable[[Any], bool] | None = None,
) -> list[dict[str, Any]]:
    """Canonical definitions of a request's `tools` (`read` turns one entry into one, or None for a tool that is
    not a function); the raw list is kept when encoding would not give it back.

    `plain(entry)` says True only of an entry the export writes back exactly as it is (it may say False of one
    that would come back too): when it says so of every entry, nothing is exported to find out.
    """
    if not isinstance(raw, list):
        return []
    tools = [tool for tool in map(read, raw) if tool is not None]
    written_back = (plain is not None and all(map(plain, raw))) or encode_tools(
        tools, None, read, provider
    ) == raw
    if not tools or not written_back:
        kept["tools"] = raw
    return tools


def object_schema(value: Any) -> bool:
    """A schema export sends as it is: an object schema (a dict whose `type` is "object")."""
    return type(value) is dict and value.get("type") == "object"


def named_entry(entry: Any, keys: frozenset[str], described: frozenset[str]) -> bool:
    """A dict with exactly `keys` (or `described`, the same plus a non-empty `description` string), its `name` a
    string: the fields export writes for a tool and nothing else."""
    if type(entry) is not dict or type(entry.get("name")) is not str:
        return False
    found = entry.keys()
    if found == keys:
        return True
    description = entry.get("description")
    return found == described and type(description) is str and description != ""


def encode_tools(
    tools: list[dict[str, Any]],
    kept: Mapping[str, Any] | None,
    read: ToolReader,
    provider: str,
) -> list[Any]:
    """The wire's `tools`: the kept list when the tools did not change, else the export, plus kept non-functions."""
    raw = kept.get("tools") if kept else None
    if (
        raw is not None
        and [tool for tool in map(read, raw) if tool is not None] == tools
    ):
        return list(raw)
    exported = export_checked(tools, provider)
    if raw is not None:
        exported.extend(entry for entry in raw if read(entry) is None)
    return exported
