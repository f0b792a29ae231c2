# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Export notes for every tool field a format does not carry, and meta folded into the description (describeMeta).

A provider's tool entry holds a name, a description and an input schema; the rest of a definition (title, output
schema, meta, annotations, toolgen's policies) either has a field in that format, is kept by the agent loop
(returnDirect, requiresApproval and timeout are enforced locally, never sent), or is lost: each such field of each
tool gets one note. `describeMeta` (true, or a list of meta keys) folds meta into the description every provider
reads, one `key: value` line per key after a blank line, so the model sees it; MCP keeps meta as `_meta` instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

# Per export builder (wires/table.py's `export` column): the optional definition fields its entries carry.
_CARRIED: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "anthropic": frozenset(),
        "bedrock": frozenset(),
        "chat-function": frozenset({"strict"}),
        "gemini": frozenset({"outputSchema"}),
        "interactions": frozenset(),
        "plain-function": frozenset(),
        "responses-function": frozenset({"strict"}),
    }
)
# Policies the agent loop applies on its side of the call: the provider needs none of them.
LOOP_POLICIES = ("returnDirect", "requiresApproval", "timeout")
# The fields a definition may carry beyond name, description and inputSchema, in the order notes name them.
_OPTIONAL = ("title", "outputSchema", "annotations", "strict")


def _present(tool: Mapping[str, Any], field: str) -> bool:
    value = tool.get(field)
    if field in ("returnDirect", "requiresApproval"):
        return value is True
    if field == "strict":
        # strict: false asks for what every provider does without it.
        return value is True
    if field in ("annotations", "meta"):
        return bool(value)
    return value is not None


def folded_keys(tool: Mapping[str, Any]) -> list[str]:
    """The meta keys `describeMeta` folds into the description: every key (true) in the meta's own order, or the
    keys listed, in the list's order, that the meta has."""
    chosen = tool.get("describeMeta")
    meta = tool.get("meta")
    if not chosen or not isinstance(meta, Mapping) or not meta:
        return []
    if chosen is True:
        return [str(key) for key in meta]
    if isinstance(chosen, (list, tuple)):
        return list(
            dict.fromkeys(key for key in chosen if isinstance(key, str) and key in meta)
        )
    return []


def _shown(value: Any) -> str:
    if isinstance(value, str) and "\n" not in value and "\r" not in value:
        return value
    # default=str: meta given at run time (Registry.add) may hold what JSON has no word for; it still reads.
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def described(tool: Mapping[str, Any]) -> str | None:
    """The description a provider is sent: the tool's own, then a blank line and `key: value` per folded meta key
    (a string as it is, anything else as JSON)."""
    description = tool.get("description") or None
    keys = folded_keys(tool)
    if not keys:
        return description
    meta = tool["meta"]
    lines = "\n".join(f"{key}: {_shown(meta[key])}" for key in keys)
    return f"{description}\n\n{lines}" if description else lines


def field_notes(
    tool: Mapping[str, Any],
    provider: str,
    builder: str,
    strict: bool,
    gemini: str,
    unnoted: frozenset[str] = frozenset(),
) -> list[str]:
    """One note per field of `tool` that `provider`'s entry does not carry, and what became of it; none for the
    fields in `unnoted` (a caller that names those losses itself)."""
    name = tool.get("name")
    if builder == "mcp":
        return _mcp_notes(tool, name, strict)
    if unnoted:
        tool = {key: value for key, value in tool.items() if key not in unnoted}
        strict = strict and "strict" not in unnoted
    carried = _CARRIED.get(builder, frozenset())
    if builder == "gemini" and gemini == "openapi":
        carried = frozenset()
    notes: list[str] = []
    for field in _OPTIONAL:
        if field in carried or not (
            _present(tool, field) or (field == "strict" and strict)
        ):
            continue
        if field == "strict":
            notes.append(
                f"{name}: strict is not sent to {provider} (toolgen sends strict mode to the openai formats only)"
            )
        elif field == "outputSchema" and builder == "gemini":
            notes.append(
                f"{name}: outputSchema is not sent to {provider} with its OpenAPI `parameters` subset "
                "(responseJsonSchema goes only beside parametersJsonSchema: gemini_schema json)"
            )
        else:
            notes.append(
                f"{name}: {field} is not sent to {provider} (it has no field for it)"
            )
    notes.extend(
        f"{name}: {field} is enforced by the agent loop, not sent to {provider}"
        for field in LOOP_POLICIES
        if _present(tool, field)
    )
    if _present(tool, "meta"):
        folded = folded_keys(tool)
        left = [str(key) for key in tool["meta"] if key not in folded]
        if folded:
            notes.append(
                f"{name}: {_keys(folded)} folded into the description sent to {provider} (describeMeta)"
            )
        if left:
            notes.append(
                f"{name}: {_keys(left)} not sent to {provider} (it has no field for meta; describeMeta can fold "
                "meta into the description)"
            )
    return notes


def _keys(keys: list[str]) -> str:
    return (
        f"meta key {keys[0]} is"
        if len(keys) == 1
        else f"meta keys {', '.join(keys)} are"
    )


def _mcp_notes(tool: Mapping[str, Any], name: Any, strict: bool) -> list[str]:
    fields = [field for field in LOOP_POLICIES if _present(tool, field)]
    if tool.get("strict") is not None:
        fields.append("strict")
    notes = [
        f"{name}: {field} travels in _meta.{field} (MCP has no field for it; toolgen's own MCP client reads it "
        "back, other clients ignore it)"
        for field in fields
    ]
    if strict:
        notes.append(
            f"{name}: strict mode is not an MCP setting; only the tool's own strict travels, in _meta"
        )
    if tool.get("describeMeta") and _present(tool, "meta"):
        notes.append(
            f"{name}: meta is not folded into the description for mcp: it travels as _meta, and describeMeta in "
            "_meta.describeMeta for toolgen's own MCP client"
        )
    return notes
