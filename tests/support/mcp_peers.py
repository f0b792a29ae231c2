"""Where the MCP reference servers (none of them toolgen's) are: installed by `.ci/mcp-peers DIR`, found by
TOOLGEN_MCP_PEERS=DIR; a test that needs one skips with the reason, except in CI (TOOLGEN_REQUIRE_MCP_PEERS)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PEERS_ENV = "TOOLGEN_MCP_PEERS"
# Each server's command, under the peers folder: npm's servers from its bin folder, PyPI's from their venv.
_COMMANDS = {
    "everything": ("npm/node_modules/.bin/mcp-server-everything",),
    "filesystem": ("npm/node_modules/.bin/mcp-server-filesystem",),
    "time": ("py/bin/mcp-server-time",),
    "git": ("py/bin/mcp-server-git",),
}


def peer_command(name: str, *args: str) -> list[str]:
    """The argv that starts the reference server `name` with `args`, or skip (fail in CI) without it."""
    folder = os.environ.get(PEERS_ENV)
    reason = f"the MCP reference server {name!r} is not installed (run .ci/mcp-peers DIR and set {PEERS_ENV}=DIR)"
    if folder:
        program = Path(folder, *_COMMANDS[name])
        if program.exists():
            return [str(program.resolve()), *args]
        reason = f"{program} does not exist (run .ci/mcp-peers {folder})"
    if os.environ.get("TOOLGEN_REQUIRE_MCP_PEERS"):
        pytest.fail(f"{reason}, and TOOLGEN_REQUIRE_MCP_PEERS is set", pytrace=False)
    pytest.skip(reason)
