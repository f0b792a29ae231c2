"""The MCP lock on the generator's side: written by `toolgen import mcp`, checked by `toolgen import mcp --check`.

Beside the schema files an import writes, `mcp-lock.json` pins each tool as the server served it (the runtime's
mcp/lockfile.py holds the format); a re-import replaces that server's entries and keeps other servers'. `--check`
connects to the server again and reports each tool changed (a finding per field, with a short diff), added or
removed since, at its place in the lock, so CI fails (exit 1) when a server changed a reviewed tool.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.digests import text_digest
from toolgen.core.errors import EnvironmentProblem, ExitCode, InvalidInputError, ToolgenError
from toolgen.core.jsoncopy import freeze
from toolgen.project.config import Config, display_path
from toolgen.runtime import MCP_LOCK_NAME
from toolgen.source.load import Document, LoadError, load_file

RULE = "mcp-drift"


class ServerUnreachableError(ToolgenError):
    """`--check` could not start or reach the server: the environment's problem (exit 4), not a finding."""


class ServerListUnusableError(ToolgenError):
    """`--check` reached a server whose tools list toolgen cannot use (exit 3, as `import` says it)."""

    exit_code = ExitCode.INVALID_INPUT


def server_label(target: str | Sequence[str]) -> str:
    """The label a lock records a server by: its URL, or its command as a shell would read it (as
    MCPConnection.label spells it, so a connection finds its entries by label)."""
    return target if isinstance(target, str) else shlex.join(target)


def shown(root: Path, path: Path) -> str:
    return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def _lock_problem(document: Document, error: Exception, display: str) -> InvalidInputError:
    pointer = tuple(str(part) for part in getattr(error, "pointer", ()))
    message = str(error).removeprefix(f"{display}: ")
    return InvalidInputError([document.diagnostic(pointer, "mcp-lock", message)])


def read_lock_file(path: Path, display: str) -> tuple[Any, Document]:
    """The lock in the file (an MCPLock) and its document (for positions); InvalidInputError (exit 3) naming
    the file, and the line and column of the entry at fault, for one toolgen cannot read."""
    from toolgen.runtime import MCPLockError, read_mcp_lock

    try:
        document = load_file(path, display)
    except LoadError as error:
        if error.diagnostic.rule == "file-missing":
            message = "no MCP lock here: `toolgen import mcp` writes it beside the schemas it imports"
            raise InvalidInputError([Diagnostic(display, 1, 1, Severity.ERROR, "mcp-lock", message)]) from None
        raise InvalidInputError([error.diagnostic]) from None
    try:
        return read_mcp_lock(document.data, name=display), document
    except MCPLockError as error:
        raise _lock_problem(document, error, display) from None


def planned_lock(
    folder: Path, root: Path, server: str, definitions: Sequence[Mapping[str, Any]], *, force: bool = False
) -> tuple[Path, str]:
    """The lock file of an import into `folder` and its new text: the one there (if any) with `server`'s tools
    replaced by `definitions`. A lock there that cannot be read is an error, unless `force` replaces it."""
    from toolgen.runtime import MCPLock

    path = folder / MCP_LOCK_NAME
    existing = MCPLock()
    if path.exists():
        try:
            existing = read_lock_file(path, shown(root, path))[0]
        except InvalidInputError as error:
            if not force:
                raise InvalidInputError(
                    [
                        Diagnostic(d.path, d.line, d.col, d.severity, d.rule, f"{d.message}; --force replaces it")
                        for d in error.diagnostics
                    ]
                ) from None
    return path, existing.with_server(server, definitions).text()


@dataclass(frozen=True)
class DriftReport:
    """What `import mcp --check` found: a finding per drift (sorted), the tools drifted, the lock's path, the
    server's label and how many tools it lists."""

    findings: tuple[Diagnostic, ...]
    drifted: tuple[str, ...]
    lock: str
    server: str
    tools: int


def _entry_places(document: Document) -> dict[tuple[str, str], int]:
    entries = document.data.get("tools") if isinstance(document.data, Mapping) else None
    return {
        (str(entry.get("server")), str(entry.get("name"))): index
        for index, entry in enumerate(entries or [])
        if isinstance(entry, Mapping)
    }


def drift_findings(document: Document, drift: Sequence[Any]) -> list[Diagnostic]:
    """A finding for each drifted tool, and for each field of a changed one, at its place in the lock."""
    places = _entry_places(document)
    findings = []
    for item in drift:
        index = places.get((item.server, item.tool))
        at: tuple[str, ...] = ("tools", str(index)) if index is not None else ("tools",)
        if item.kind == "changed":
            for field, change in zip(item.fields, item.changes(), strict=True):
                message = f"tool {item.tool!r} changed since it was pinned: {change}"
                findings.append(document.diagnostic((*at, "definition", field), RULE, message))
        else:
            findings.append(document.diagnostic(at, RULE, item.sentence()))
    return findings


def check_server(project: Path, target: str | Sequence[str], output: Path, *, timeout: float = 60.0) -> DriftReport:
    """`toolgen import mcp --check`: the live server's tools against the lock in `project / output`.

    Raises InvalidInputError (exit 3) for a lock that is missing or unreadable, ServerListUnusableError (3) for
    a tools list toolgen cannot use, ServerUnreachableError (4) when the server cannot be started or reached."""
    from toolgen.runtime import MCPConnectionError, MCPToolsError, compare_mcp_tools, connect_mcp

    path = project / output / MCP_LOCK_NAME
    display = shown(project, path)
    lock, document = read_lock_file(path, display)
    server = server_label(target)
    env = None if isinstance(target, str) else dict(os.environ)
    try:
        # lock=False: this compares itself, with findings at their places, rather than refusing to connect.
        with connect_mcp(target, timeout=timeout, env=env, lock=False) as connection:
            definitions = list(connection.definitions)
    except ImportError as error:
        raise EnvironmentProblem(str(error)) from None
    except MCPConnectionError as error:
        raise ServerUnreachableError(str(error)) from None
    except MCPToolsError as error:
        raise ServerListUnusableError(str(error)) from None
    drift = compare_mcp_tools(lock, definitions, server)
    findings = tuple(sorted(drift_findings(document, drift)))
    return DriftReport(findings, tuple(d.tool for d in drift), display, server, len(definitions))


def build_lock(config: Config) -> tuple[str | None, dict[str, str]]:
    """toolgen.yaml's `mcp: {lock}` for the build: the lock's data as frozen JSON (None when the config names
    none) and its digest as an input read, so the manifest, `check` and the build cache see it change.
    InvalidInputError (exit 3) naming the file for a lock that is missing or cannot be read."""
    if config.mcp_lock is None:
        return None, {}
    path = config.root / config.mcp_lock
    display = display_path(config.root, path)
    lock, document = read_lock_file(path, display)
    return freeze(lock.data()), {display: text_digest(document.text)}
