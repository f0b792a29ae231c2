# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The official `mcp` SDK, imported by name when MCP is first used, with an error naming the extra to install."""

from __future__ import annotations

from typing import Any

from ..extras import optional_module


def mcp_module(name: str = "mcp") -> Any:
    """`mcp` or one of its modules; by name, so the package imports and type-checks without the SDK. A missing
    SDK, or a package it imports (anyio, httpx...), is a MissingExtra naming the `mcp` extra."""
    return optional_module(name, "mcp", "MCP (the official mcp SDK)")


def mcp_types() -> Any:
    """The protocol's types (`mcp.types`)."""
    return mcp_module("mcp.types")


def uses_input_required(protocol_version: str | None) -> bool:
    """Whether this connection's protocol asks the client inside an InputRequiredResult (2026-07-28 on)
    rather than with a request of the server's own in the middle of the call (the handshake versions)."""
    return modern_protocol(protocol_version)


def modern_protocol(protocol_version: str | None) -> bool:
    """Whether a connection speaks the 2026-07-28 protocol or later (server/discover, no initialize handshake)."""
    if not protocol_version:
        return False
    version = mcp_module("mcp_types.version")
    return protocol_version in version.MODERN_PROTOCOL_VERSIONS
