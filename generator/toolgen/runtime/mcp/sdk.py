# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The official `mcp` SDK, imported by name when MCP is first used, with an error naming the extra to install."""

from __future__ import annotations

import importlib
from typing import Any

# The package this runtime is part of (toolgen, or the generated package), for the install hint.
_PACKAGE = __name__.split(".")[0]


def mcp_module(name: str = "mcp") -> Any:
    """`mcp` or one of its modules; by name, so the package imports and type-checks without the SDK."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        if not (error.name or "").startswith("mcp"):
            raise
        distribution = _PACKAGE.replace("_", "-")
        raise ImportError(
            f"MCP needs the official mcp SDK: pip install '{distribution}[mcp]' (or: pip install 'mcp>=2.3,<3')"
        ) from error


def mcp_types() -> Any:
    """The protocol's types (`mcp.types`)."""
    return mcp_module("mcp.types")


def uses_input_required(protocol_version: str | None) -> bool:
    """Whether this connection's protocol asks the client inside an InputRequiredResult (2026-07-28 on)
    rather than with a request of the server's own in the middle of the call (the handshake versions)."""
    if not protocol_version:
        return False
    version = mcp_module("mcp_types.version")
    return protocol_version in version.MODERN_PROTOCOL_VERSIONS
