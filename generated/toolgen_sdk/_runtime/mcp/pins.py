# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Pinned MCP tools: a server's tools now against the lock `toolgen import mcp` wrote, and what to do on drift.

A server can change a tool after a team reviewed it (its description, the "rug pull" MCP advisories warn
about, or its schemas, annotations, policies): `compare_mcp_tools` finds each tool changed (naming the fields),
added or removed since the lock. `connect_mcp`, `mcp_tools` and `MCPConnection` take `lock=` (a path, the
loaded JSON or an MCPLock; None: the lock built into the package, if any; False: none) and `on_drift=`:

    refuse   (the default) MCPDriftError, an MCPToolsError naming each tool and field, at connect and refresh
    warn     a warning on the `<package>._runtime.mcp.pins` logger, `connection.drift`, and a `note` event in
             every run of a registry the tools were added to
    accept   silent; `connection.drift` still says what changed

Which of the lock's servers a connection is compared with: the one of the same label (command or URL); else,
with an explicit lock of one server, that one; else the one sharing the most tool names. The lock built into a
package (toolgen.yaml `mcp: {lock: ...}`) pins only servers it knows by label or by a tool name in common, so
the package's `mcp_tools` still connects to servers it was never built against.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import logging
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..tools.registry import Registry
from .convert import MCPToolsError
from .lockfile import (
    PINNED_FIELDS,
    LockSource,
    MCPLock,
    PinnedTool,
    canonical_json,
    lock_from_data,
    pinned_parts,
    read_mcp_lock,
)

ON_DRIFT = ("refuse", "warn", "accept")
# The module of the generated package that holds the lock built into it (LOCK) and the project's ON_DRIFT.
PACKAGE_LOCK_MODULE = "mcp_lock"
# The package this runtime is part of (toolgen, or the generated package).
_PACKAGE = __name__.split(".")[0]
_log = logging.getLogger(__name__)
# How much of a changed value a short diff shows (of a text: from a little before where it changed), and how
# many changed places of a schema it names.
_WIDTH = 60
_TEXT_WIDTH = 160
_PLACES = 4

DriftKind = Literal["changed", "added", "removed"]


def _shown(value: Any) -> str:
    text = canonical_json(value)
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def _excerpts(old: str, new: str) -> tuple[str, str]:
    """Both texts from a little before where they first differ, cut to the width: the change, not the start."""
    same = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    begin = max(0, same - 20)

    def cut(text: str) -> str:
        part = text[begin : begin + _TEXT_WIDTH]
        more = len(text) > begin + _TEXT_WIDTH
        return ("…" if begin else "") + part + ("…" if more else "")

    return canonical_json(cut(old)), canonical_json(cut(new))


def _places(old: Any, new: Any, at: str = "") -> Iterator[str]:
    """Each place (a JSON pointer) where two JSON values differ, with the values there, shortened."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            place = f"{at}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key not in new:
                yield f"{place} removed"
            elif key not in old:
                yield f"{place} added: {_shown(new[key])}"
            else:
                yield from _places(old[key], new[key], place)
    elif canonical_json(old) != canonical_json(new):
        if isinstance(old, str) and isinstance(new, str):
            before, after = _excerpts(old, new)
        else:
            before, after = _shown(old), _shown(new)
        yield f"{at or '/'}: {before} -> {after}"


def field_change(field: str, old: Any, new: Any) -> str:
    """One field's change in a line: `description: "old…" -> "new…"`, or the places a schema changed."""
    if old is None:
        return f"{field} added: {_shown(new)}"
    if new is None:
        return f"{field} removed (was {_shown(old)})"
    if isinstance(old, str) and isinstance(new, str):
        before, after = _excerpts(old, new)
        return f"{field}: {before} -> {after}"
    places = list(_places(old, new))
    more = f"; and {len(places) - _PLACES} more" if len(places) > _PLACES else ""
    return f"{field}: {'; '.join(places[:_PLACES])}{more}"


@dataclass(frozen=True)
class ToolDrift:
    """One tool of a server that is not as the lock pins it: `changed` (in `fields`), `added` or `removed`.

    `pinned` and `current` are the pinned parts of its definition (lockfile.PINNED_FIELDS), None where absent."""

    server: str
    tool: str
    kind: DriftKind
    fields: tuple[str, ...] = ()
    pinned: Mapping[str, Any] | None = None
    current: Mapping[str, Any] | None = None

    def changes(self) -> tuple[str, ...]:
        """Each changed field in a line with a short diff (field_change)."""
        pinned, current = self.pinned or {}, self.current or {}
        return tuple(
            field_change(f, pinned.get(f), current.get(f)) for f in self.fields
        )

    def summary(self) -> str:
        """`'add' changed (description, inputSchema)`, `'add' added`, `'add' removed`."""
        fields = f" ({', '.join(self.fields)})" if self.fields else ""
        return f"{self.tool!r} {self.kind}{fields}"

    def sentence(self) -> str:
        if self.kind == "added":
            return f"tool {self.tool!r} is not in the lock: the server added it since the import"
        if self.kind == "removed":
            return (
                f"tool {self.tool!r} is in the lock, and the server no longer lists it"
            )
        return f"tool {self.tool!r} changed since it was pinned: {'; '.join(self.changes())}"


class MCPDriftError(MCPToolsError):
    """A server's tools differ from the lock, with on_drift="refuse"; `drift` holds each ToolDrift."""

    def __init__(self, message: str, drift: tuple[ToolDrift, ...]) -> None:
        super().__init__(message)
        self.drift = drift


def _group(
    lock: MCPLock, server: str, names: Collection[str], strict: bool
) -> Mapping[str, PinnedTool] | None:
    """The pinned tools the server is compared with (see the module docstring); None when none apply."""
    groups = {s: lock.of_server(s) for s in lock.servers}
    if server in groups:
        return groups[server]
    if strict and len(groups) == 1:
        return next(iter(groups.values()))
    # The most tool names in common, then the first label: the same choice on every run.
    shared = sorted((-sum(n in group for n in names), s) for s, group in groups.items())
    if shared and shared[0][0] < 0:
        return groups[shared[0][1]]
    return {} if strict else None


def compare_mcp_tools(
    lock: MCPLock,
    definitions: Iterable[Mapping[str, Any]],
    server: str = "",
    *,
    strict: bool = True,
) -> tuple[ToolDrift, ...]:
    """Each tool of `definitions` (canonical, as a connection lists them) that is not as `lock` pins it for
    `server` (a connection's label), in name order. With `strict` False, a server the lock knows neither by
    label nor by a tool name has no pins, and nothing drifts."""
    current = {str(d["name"]): _as_pinned(d) for d in definitions}
    pinned = _group(lock, server, current.keys(), strict)
    if pinned is None:
        return ()
    drift: list[ToolDrift] = []
    for name in sorted(current.keys() | pinned.keys()):
        now, then = current.get(name), pinned.get(name)
        if then is None:
            drift.append(ToolDrift(server, name, "added", current=now))
        elif now is None:
            drift.append(ToolDrift(server, name, "removed", pinned=then.definition))
        else:
            fields = tuple(
                f
                for f in sorted(then.definition.keys() | now.keys(), key=_field_order)
                if canonical_json(then.definition.get(f)) != canonical_json(now.get(f))
            )
            if fields:
                drift.append(
                    ToolDrift(server, name, "changed", fields, then.definition, now)
                )
    return tuple(drift)


def _as_pinned(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A definition's pinned parts as a lock holds them: through JSON, so they compare as the file's do."""
    parts: dict[str, Any] = json.loads(canonical_json(pinned_parts(definition)))
    return parts


def _field_order(field: str) -> tuple[int, str]:
    return (
        PINNED_FIELDS.index(field) if field in PINNED_FIELDS else len(PINNED_FIELDS),
        field,
    )


def drift_message(label: str, source: str, drift: Iterable[ToolDrift]) -> str:
    """What refusing says: a line naming each tool and field, then each change with a short diff."""
    drift = tuple(drift)
    lines = [
        f"{label}: {len(drift)} tool(s) differ from {source}: "
        + ", ".join(d.summary() for d in drift)
        + " (on_drift='refuse'; import the server again to review and pin them, "
        "or connect with on_drift='warn')"
    ]
    lines += [f"  {d.sentence()}" for d in drift]
    return "\n".join(lines)


def drift_notes(label: str, source: str, drift: Iterable[ToolDrift]) -> list[str]:
    """A run's `note` for each drifted tool."""
    return [
        f"the MCP server {label} differs from {source}: {d.sentence()}" for d in drift
    ]


def package_pins() -> tuple[MCPLock, str] | None:
    """The lock built into this package (toolgen.yaml `mcp: {lock: ...}`) and its on_drift; None without one."""
    name = f"{_PACKAGE}.{PACKAGE_LOCK_MODULE}"
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except (ImportError, ValueError):
        return None
    module = importlib.import_module(name)
    lock = lock_from_data(
        getattr(module, "LOCK", None), f"the MCP lock built into {_PACKAGE}"
    )
    on_drift = getattr(module, "ON_DRIFT", "refuse")
    return lock, on_drift if on_drift in ON_DRIFT else "refuse"


@dataclass(frozen=True)
class Pins:
    """One connection's pins: the lock (None: nothing pinned), what to do on drift, and whether the lock was
    given for this server (strict) or is the package's, which pins only the servers it knows."""

    lock: MCPLock | None = None
    on_drift: str = "refuse"
    strict: bool = True

    @classmethod
    def of(cls, lock: LockSource | bool | None, on_drift: str | None) -> Pins:
        """The pins of `lock=` and `on_drift=` as MCPConnection takes them; MCPLockError for a lock it cannot
        read, ValueError for an on_drift it does not know."""
        if on_drift is not None and on_drift not in ON_DRIFT:
            raise ValueError(
                f"on_drift must be one of {', '.join(ON_DRIFT)}, not {on_drift!r}"
            )
        if lock is None:
            found = package_pins()
            if found is not None:
                return cls(found[0], on_drift or found[1], strict=False)
            return cls(None, on_drift or "refuse")
        if isinstance(lock, bool):
            if lock:
                raise ValueError(
                    "lock=True is not a lock: give its path, or None for the package's own"
                )
            return cls(None, on_drift or "refuse")
        return cls(read_mcp_lock(lock), on_drift or "refuse")

    def none(self) -> tuple[ToolDrift, ...]:
        return ()

    def check(
        self,
        label: str,
        definitions: Iterable[Mapping[str, Any]],
        before: tuple[ToolDrift, ...] = (),
    ) -> tuple[ToolDrift, ...]:
        """The drift of `definitions` from the lock; raises MCPDriftError with on_drift="refuse", logs a
        warning with "warn" when it is not the drift seen `before` (a refresh does not repeat itself)."""
        if self.lock is None:
            return ()
        drift = compare_mcp_tools(self.lock, definitions, label, strict=self.strict)
        if drift and self.on_drift == "refuse":
            raise MCPDriftError(drift_message(label, self.lock.source, drift), drift)
        if drift and drift != before:
            level = logging.WARNING if self.on_drift == "warn" else logging.DEBUG
            for note in drift_notes(label, self.lock.source, drift):
                _log.log(level, "%s", note)
        return drift

    def tell(
        self,
        registry: Registry,
        label: str,
        drift: Iterable[ToolDrift],
        added: Mapping[str, str],
    ) -> None:
        """With on_drift="warn", each tool `added` to `registry` (its name there -> on the server) carries the
        drift of that tool and of the tools gone (ToolSpec.notes): every run offering it says so in a `note`."""
        if self.on_drift != "warn" or self.lock is None:
            return
        drift = tuple(drift)
        gone = drift_notes(
            label, self.lock.source, (d for d in drift if d.kind == "removed")
        )
        for name, remote in added.items():
            own = (d for d in drift if d.tool == remote and d.kind != "removed")
            notes = [*drift_notes(label, self.lock.source, own), *gone]
            entry = registry.entry(name)
            new = tuple(n for n in notes if n not in entry.spec.notes)
            if new:
                entry.spec = dataclasses.replace(
                    entry.spec, notes=(*entry.spec.notes, *new)
                )
