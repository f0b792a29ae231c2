# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""MCP tool entries to toolgen's canonical tool definitions, toolgen's policies read back out of `_meta`.

The other direction is the MCP export (`export_tools(..., "mcp")`), which puts returnDirect, requiresApproval
and timeout in `_meta`, since MCP has no fields for them; reading them back here is what lets two toolgen
packages keep those policies across MCP.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..wires.export import canonical_definition

# What the MCP export (and serve_mcp) write into a tool's `_meta` besides its own meta: toolgen's policies,
# `strict`, an output schema MCP's field cannot hold (not an object), whether the tool has a handler, and which
# meta keys a provider's description carries (`describeMeta`).
POLICY_KEYS = (
    "returnDirect",
    "requiresApproval",
    "timeout",
    "strict",
    "outputSchema",
    "unavailable",
    "describeMeta",
)


# Where a tool's `execution.taskSupport` is kept (MCP's field, which toolgen's tool schema has no place for) when
# it is "optional" or "required": in its meta under this key, so that `toolgen import mcp` writes it into the schema
# file. Only the server's `execution` sets it: the key in a server's `_meta` (a toolgen server re-serving an imported
# tool, which it runs plainly) is dropped.
TASK_SUPPORT_KEY = "toolgen/taskSupport"
_TASK_SUPPORT = ("forbidden", "optional", "required")


# A week: far past any tool call, and far inside what a thread's wait can count (threading.TIMEOUT_MAX).
_LONGEST_TIMEOUT = 7 * 24 * 3600


class MCPToolsError(ValueError):
    """A tools list from an MCP server that toolgen cannot use; the message names the tool and the field.

    `pointer` is where in the list: the tool's index, then the field's keys."""

    def __init__(self, message: str, pointer: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.pointer = pointer


def _where(index: int, tool: Any) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    return f"tools[{index}] ({name!r})" if isinstance(name, str) else f"tools[{index}]"


def _object_or_none(value: Any, where: str, field: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise MCPToolsError(
            f"{where}: {field} must be a JSON object, not {type(value).__name__}",
            (field,),
        )
    return dict(value)


def _policies(meta: Mapping[str, Any], where: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in ("returnDirect", "requiresApproval", "strict", "unavailable"):
        value = meta.get(key)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise MCPToolsError(
                f"{where}: _meta.{key} must be true or false, not {value!r}",
                ("_meta", key),
            )
        if (
            value or key == "strict"
        ):  # strict: false says something; the others' false is their default
            found[key] = value
    output = meta.get("outputSchema")
    if output is not None:
        if not isinstance(output, (Mapping, bool)):
            raise MCPToolsError(
                f"{where}: _meta.outputSchema must be a JSON Schema, not {type(output).__name__}",
                ("_meta", "outputSchema"),
            )
        found["outputSchema"] = dict(output) if isinstance(output, Mapping) else output
    timeout = meta.get("timeout")
    if timeout is not None:
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout)
            or timeout <= 0
            # Past threading's limit a wait fails with OverflowError after the call was sent: refused here.
            or timeout > _LONGEST_TIMEOUT
        ):
            raise MCPToolsError(
                f"{where}: _meta.timeout must be a positive number of seconds, at most "
                f"{_LONGEST_TIMEOUT:,}, not {timeout!r}",
                ("_meta", "timeout"),
            )
        found["timeout"] = timeout
    chosen = meta.get("describeMeta")
    if chosen is not None:
        if not (
            isinstance(chosen, bool)
            or isinstance(chosen, list)
            and all(isinstance(key, str) for key in chosen)
        ):
            raise MCPToolsError(
                f"{where}: _meta.describeMeta must be true, false or a list of meta keys, not {chosen!r}",
                ("_meta", "describeMeta"),
            )
        if chosen:
            found["describeMeta"] = chosen
    return found


def _task_support(tool: Mapping[str, Any], where: str) -> str | None:
    """The tool's `execution.taskSupport` when it asks for tasks ("optional", "required"); None for "forbidden"."""
    execution = _object_or_none(tool.get("execution"), where, "execution") or {}
    support = execution.get("taskSupport")
    if support is not None and support not in _TASK_SUPPORT:
        raise MCPToolsError(
            f"{where}: execution.taskSupport must be one of {', '.join(_TASK_SUPPORT)}, not {support!r}",
            ("execution", "taskSupport"),
        )
    return None if support in (None, "forbidden") else str(support)


def definition_from_mcp(tool: Any, index: int = 0) -> dict[str, Any]:
    """One MCP `tools/list` entry (JSON data) as a canonical tool definition, its policies out of `_meta`, an
    `execution.taskSupport` of "optional" or "required" in its meta under TASK_SUPPORT_KEY.

    Raises MCPToolsError for an entry toolgen cannot call: no name, or an input schema that is not an
    object schema (MCP requires `type: object`; providers take nothing else).
    """
    try:
        return _definition(tool, index)
    except MCPToolsError as error:
        raise MCPToolsError(str(error), (index, *error.pointer)) from None


def _definition(tool: Any, index: int) -> dict[str, Any]:
    if not isinstance(tool, Mapping):
        raise MCPToolsError(
            f"tools[{index}]: a tool must be a JSON object, not {type(tool).__name__}"
        )
    where = _where(index, tool)
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise MCPToolsError(f"{where}: name must be a non-empty string", ("name",))
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        shown = (
            schema.get("type") if isinstance(schema, Mapping) else type(schema).__name__
        )
        raise MCPToolsError(
            f"{where}: inputSchema must be an object schema (type: object), not {shown!r}",
            ("inputSchema",),
        )
    for field in ("title", "description"):
        if tool.get(field) is not None and not isinstance(tool.get(field), str):
            raise MCPToolsError(f"{where}: {field} must be a string", (field,))
    meta = _object_or_none(tool.get("_meta"), where, "_meta") or {}
    policies = _policies(meta, where)
    output = _object_or_none(tool.get("outputSchema"), where, "outputSchema")
    kept = {
        k: v for k, v in meta.items() if k not in POLICY_KEYS and k != TASK_SUPPORT_KEY
    }
    support = _task_support(tool, where)
    if support is not None:
        kept[TASK_SUPPORT_KEY] = support
    return canonical_definition(
        name=name,
        title=tool.get("title"),
        description=tool.get("description"),
        inputSchema=dict(schema),
        outputSchema=output if output is not None else policies.get("outputSchema"),
        returnDirect=policies.get("returnDirect"),
        timeout=policies.get("timeout"),
        requiresApproval=policies.get("requiresApproval"),
        strict=policies.get("strict"),
        meta=kept,
        annotations=_object_or_none(tool.get("annotations"), where, "annotations"),
        describeMeta=policies.get("describeMeta"),
        # Not a tool definition's field: the server has no handler for it (serve_mcp's `_meta.unavailable`).
        unavailable=policies.get("unavailable"),
    )


def definitions_from_mcp(tools: Any) -> list[dict[str, Any]]:
    """A whole `tools/list` (the result object, or its `tools` array) as canonical definitions, in order."""
    if isinstance(tools, Mapping):
        tools = tools.get("tools")
    if not isinstance(tools, Iterable) or isinstance(tools, (str, bytes, Mapping)):
        raise MCPToolsError(
            "an MCP tools list is an array of tools, or an object with a `tools` array"
        )
    definitions = [definition_from_mcp(tool, i) for i, tool in enumerate(tools)]
    seen: set[str] = set()
    for i, definition in enumerate(definitions):
        if definition["name"] in seen:
            raise MCPToolsError(
                f"tools[{i}]: a second tool named {definition['name']!r}", (i, "name")
            )
        seen.add(definition["name"])
    return definitions
