"""Pins target: `mcp_lock.py`, the MCP lock toolgen.yaml names (`mcp: {lock}`), built into the package.

The runtime's mcp/pins.py looks for `<package>.mcp_lock` (its PACKAGE_LOCK_MODULE): its LOCK and ON_DRIFT are
then what `mcp_tools` and `connect_mcp` compare a server with, and do on drift, when no `lock=` is given.
"""

from __future__ import annotations

from toolgen.codegen.targets.package import pyrepr
from toolgen.ir.model import Project, thaw

MODULE = "mcp_lock.py"


def lock_files(project: Project, header: str) -> dict[str, str]:
    """`mcp_lock.py` for a project whose config names an MCP lock; nothing otherwise."""
    if project.mcp_lock is None:
        return {}
    text = (
        f"{header}\n"
        '"""The MCP tools this package was built against (toolgen.yaml `mcp: {lock}`), as the lock pins them.\n\n'
        "`mcp_tools` and `connect_mcp` compare a server's tools with LOCK at connect, and on drift do as\n"
        'ON_DRIFT says (refuse, warn or accept) unless given `lock=` and `on_drift=` of their own.\n"""\n\n'
        "from typing import Any, Final\n\n"
        f"ON_DRIFT: Final = {pyrepr(project.mcp_on_drift)}\n"
        f"LOCK: Final[dict[str, Any]] = {pyrepr(thaw(project.mcp_lock))}\n"
    )
    return {MODULE: text}
