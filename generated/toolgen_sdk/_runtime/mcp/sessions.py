# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The conversation an MCP tool call belongs to on toolgen's server, and the version the server reports.

A handler's `ToolContext.conversation_id` scopes what a tool keeps for a conversation (`meta: {scope: conversation}`,
the demo's to-do list). On toolgen's MCP server it is, in this order:

- the string the call names under `_meta["toolgen/conversation"]` (CONVERSATION_KEY), as it is: every call that
  names it shares it, whatever its session (so a 2026-07-28 client, whose requests carry no session, keeps one),
  and so does every client of the server that names it: where clients must not see each other's, name it
  unguessably;
- else one per streamable HTTP session (its `Mcp-Session-Id`), derived with a secret of the server's so that it
  neither shows the session id nor can be guessed by another client;
- else, off HTTP (stdio: one client per process), one for the server's whole life;
- else (an HTTP call without a session: the 2026-07-28 protocol, or stateless HTTP) a fresh one per call, so that
  nothing one call keeps is seen by another.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.metadata
import secrets
import sys
from collections.abc import Mapping
from typing import Any

# The `_meta` key of a tools/call request that names the conversation the call belongs to.
CONVERSATION_KEY = "toolgen/conversation"
MAX_CONVERSATION_ID = 200
_SESSION_HEADER = "mcp-session-id"
# What serverInfo.version says of a package neither installed nor carrying a __version__.
UNKNOWN_VERSION = "0.0.0+unknown"
_PACKAGE = __name__.split(".")[0]


class ConversationError(ValueError):
    """The call names its conversation in a form the server does not take; the message says how to name it."""


def _meta(params: Any) -> Mapping[str, Any]:
    meta = getattr(params, "meta", None)
    if isinstance(meta, Mapping):
        return meta
    dumped = getattr(meta, "model_dump", None)
    found = dumped() if callable(dumped) else None
    return found if isinstance(found, Mapping) else {}


def _session_id(ctx: Any) -> tuple[bool, str | None]:
    """Whether the call came over HTTP, and the streamable HTTP session id it carries (None without one)."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is None:
        return False, None
    found = headers.get(_SESSION_HEADER)
    return True, found if isinstance(found, str) and found else None


class Conversations:
    """The conversation ids of one MCP server's calls (see the module docstring); nothing kept per session."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)
        self._connection = f"mcp-{secrets.token_hex(16)}"

    def of(self, ctx: Any, params: Any) -> str:
        """The conversation of a tools/call; ConversationError when `_meta` names one in another form."""
        named = _meta(params).get(CONVERSATION_KEY)
        if named is not None:
            if not isinstance(named, str) or not 0 < len(named) <= MAX_CONVERSATION_ID:
                raise ConversationError(
                    f"_meta[{CONVERSATION_KEY!r}], the conversation the call belongs to, must be a string of 1 "
                    f"to {MAX_CONVERSATION_ID} characters"
                )
            return named
        over_http, session = _session_id(ctx)
        if session is not None:
            digest = hmac.new(
                self._secret, session.encode("utf-8", "replace"), hashlib.sha256
            )
            return f"mcp-session-{digest.hexdigest()[:32]}"
        return f"mcp-call-{secrets.token_hex(16)}" if over_http else self._connection


def package_version(package: str = _PACKAGE) -> str:
    """The version of the package these tools come from: its installed distribution's (the installable layout's
    pyproject.toml carries toolgen.yaml's package_version), else its `__version__`, else UNKNOWN_VERSION."""
    for name in (package, package.replace("_", "-")):
        try:
            return importlib.metadata.version(name)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
    found = getattr(sys.modules.get(package), "__version__", None)
    return found if isinstance(found, str) and found else UNKNOWN_VERSION
