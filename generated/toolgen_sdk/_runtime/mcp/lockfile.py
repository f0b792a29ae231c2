# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The MCP lock: each imported tool's definition, by server, with a sha256 of it, as `toolgen import mcp` pins it.

The file (`mcp-lock.json`, beside the imported schemas) is deterministic JSON, sorted, so a re-import that changes
nothing changes no byte, and a review reads what changed:

    {"format": "toolgen-mcp-lock", "version": 1,
     "tools": [{"server": LABEL, "name": NAME, "sha256": HEX, "definition": {description, inputSchema, ...}}]}

`definition` holds the pinned parts of the canonical definition (PINNED_FIELDS, those the tool has); `sha256` is
the hash of their canonical JSON (sorted keys, no spaces, UTF-8), so a hand edit of one without the other is found.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeAlias

MCP_LOCK_NAME = "mcp-lock.json"
LOCK_FORMAT = "toolgen-mcp-lock"
LOCK_VERSION = 1
# What a pin covers: what the model reads (title, description, the schemas, meta a description may fold in) and
# what the loop acts on (annotations, toolgen's policies). Not `name` (the key) nor `unavailable` (a handler).
PINNED_FIELDS = (
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "meta",
    "describeMeta",
    "returnDirect",
    "requiresApproval",
    "timeout",
    "strict",
)
_HEX = frozenset("0123456789abcdef")


class MCPLockError(ValueError):
    """A lock toolgen cannot read: not JSON, another format or version, or an entry whose hash does not match.

    The message names the lock (its path when read from a file) and the entry; `pointer` is where in the file."""

    def __init__(self, message: str, pointer: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.pointer = pointer


def pinned_parts(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a canonical tool definition that a lock pins (PINNED_FIELDS), those it has."""
    return {f: definition[f] for f in PINNED_FIELDS if definition.get(f) is not None}


def canonical_json(value: Any) -> str:
    """The one JSON text of `value` its hash is taken of: sorted keys, no spaces, UTF-8 as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def parts_digest(parts: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PinnedTool:
    """One tool as the lock pins it: its server's label, its name, the hash and the pinned parts."""

    server: str
    name: str
    sha256: str
    definition: Mapping[str, Any]

    def data(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "name": self.name,
            "sha256": self.sha256,
            "definition": json.loads(canonical_json(self.definition)),
        }


def pin(definition: Mapping[str, Any], server: str) -> PinnedTool:
    """`definition` (canonical) pinned as served by `server`."""
    parts = json.loads(canonical_json(pinned_parts(definition)))
    return PinnedTool(server, str(definition["name"]), parts_digest(parts), parts)


@dataclass(frozen=True)
class MCPLock:
    """The pinned tools of one or more servers; `source` names where it was read from, for messages."""

    tools: tuple[PinnedTool, ...] = ()
    source: str = "the MCP lock"

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(sorted({tool.server for tool in self.tools}))

    def of_server(self, server: str) -> Mapping[str, PinnedTool]:
        return MappingProxyType({t.name: t for t in self.tools if t.server == server})

    def with_server(
        self, server: str, definitions: Iterable[Mapping[str, Any]]
    ) -> MCPLock:
        """This lock with `server`'s tools replaced by `definitions` (a re-import); other servers' kept."""
        kept = [tool for tool in self.tools if tool.server != server]
        pinned = [pin(definition, server) for definition in definitions]
        return MCPLock(_sorted(kept + pinned), self.source)

    def data(self) -> dict[str, Any]:
        return {
            "format": LOCK_FORMAT,
            "version": LOCK_VERSION,
            "tools": [tool.data() for tool in _sorted(self.tools)],
        }

    def text(self) -> str:
        """The lock file's text: deterministic (sorted keys and tools, two-space indents, a final newline)."""
        return (
            json.dumps(self.data(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )


def _sorted(tools: Iterable[PinnedTool]) -> tuple[PinnedTool, ...]:
    return tuple(sorted(tools, key=lambda tool: (tool.server, tool.name)))


def pin_tools(definitions: Iterable[Mapping[str, Any]], server: str) -> MCPLock:
    """A lock of `definitions` (canonical, as `connect_mcp(...).definitions` gives them) served by `server`."""
    return MCPLock().with_server(server, definitions)


# What `lock=` takes: a path, the JSON object, or a lock read already.
LockSource: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any] | MCPLock"


def read_mcp_lock(source: LockSource, *, name: str | None = None) -> MCPLock:
    """The lock at a path, or in data already loaded (the JSON object); MCPLockError naming the file (or
    `name`) and the entry for anything else."""
    if isinstance(source, MCPLock):
        return source
    if isinstance(source, Mapping):
        return lock_from_data(source, name or "the MCP lock")
    shown = name or os.fspath(source)
    try:
        with open(source, encoding="utf-8-sig") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise MCPLockError(f"cannot read the MCP lock {shown}: {reason}") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise MCPLockError(
            f"the MCP lock {shown} is not JSON: {error}; import again to write it"
        ) from None
    return lock_from_data(data, shown)


def _text(entry: Mapping[str, Any], key: str, where: str, index: int) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise MCPLockError(
            f"{where}: tools[{index}].{key} must be a non-empty string",
            ("tools", index, key),
        )
    return value


def lock_from_data(data: Any, source: str = "the MCP lock") -> MCPLock:
    """The lock in `data` (its JSON object), checked: its format and version, each entry's fields and hash."""
    if not isinstance(data, Mapping) or data.get("format") != LOCK_FORMAT:
        raise MCPLockError(
            f"{source} is not a toolgen MCP lock (no `format: {LOCK_FORMAT}`)",
            ("format",) if isinstance(data, Mapping) else (),
        )
    version = data.get("version")
    if version != LOCK_VERSION:
        raise MCPLockError(
            f"{source} is a lock of version {version!r}; this toolgen reads version {LOCK_VERSION}",
            ("version",),
        )
    entries = data.get("tools")
    if not isinstance(entries, list):
        raise MCPLockError(f"{source}: `tools` must be a list", ("tools",))
    tools: list[PinnedTool] = []
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise MCPLockError(
                f"{source}: tools[{index}] must be an object", ("tools", index)
            )
        server = _text(entry, "server", source, index)
        name = _text(entry, "name", source, index)
        definition = entry.get("definition")
        if not isinstance(definition, Mapping):
            raise MCPLockError(
                f"{source}: tools[{index}] ({name!r}): definition must be an object",
                ("tools", index, "definition"),
            )
        digest = _text(entry, "sha256", source, index)
        if not set(digest) <= _HEX or digest != parts_digest(definition):
            raise MCPLockError(
                f"{source}: tools[{index}] ({name!r}): sha256 does not match its definition "
                "(edited by hand?); import the server again to pin what it serves",
                ("tools", index, "sha256"),
            )
        if (server, name) in seen:
            raise MCPLockError(
                f"{source}: tools[{index}]: {name!r} of {server} is pinned twice",
                ("tools", index, "name"),
            )
        seen.add((server, name))
        tools.append(PinnedTool(server, name, digest, dict(definition)))
    return MCPLock(_sorted(tools), source)
