# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The registries a connection added a server's tools to, kept in step with its tools list; which tools may go in.

A tool goes into a registry only under a name every provider takes (each wire's rule in wires/table.py, the one
`toolgen lint` checks) and with a description no longer than the connection's `max_description`: a server's
`weird name` or 200 KB description would otherwise be offered to the model as it came, and refused by the
provider on every request. `add_to` refuses such a tool (MCPToolsError naming it and the rule); a tool that comes
later, with a refresh, is left out with a note instead, since nobody asked for it.

After a refresh (`refresh()`, or the next call after the server said notifications/tools/list_changed), each
registry the connection fed gets the tools it now lists and loses those it no longer does; a tool whose
definition changed is added again. A tool the registry has under that name from elsewhere is not replaced.
What is left out is logged and said in a `note` event by every run offering the connection's tools.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..tools.entry import ToolEntry
from ..tools.guards import cut_text
from ..tools.registry import Registry
from ..wires.table import ROWS

# The longest tool description (in characters) a connection adds to a registry, unless told otherwise: past any
# real tool's, far short of a context window.
DEFAULT_MAX_DESCRIPTION = 10_000

_log = logging.getLogger(__name__)

# Adds one remote tool to a registry under a name: (registry, name there, its definition) -> its entry.
Add = Callable[[Registry, str, Mapping[str, Any]], ToolEntry[Any, Any]]


def unfit(name: str, description: Any, max_description: int) -> tuple[str, str] | None:
    """(the field, why) a tool cannot go into a registry as `name` with `description`, or None when it can."""
    refusing = [row for row in ROWS if not re.fullmatch(row.lint.name_pattern, name)]
    if refusing:
        rules = [row.lint.name_wanted for row in refusing]
        rule = max(rules, key=rules.count)  # the rule most of them have
        wires = ", ".join(row.name for row in refusing)
        return "name", (
            f"the name {cut_text(name, 80)!r} is not a tool name every provider takes: {rule} ({wires} refuse it)"
        )
    if isinstance(description, str) and len(description) > max_description:
        return "description", (
            f"its description is {len(description):,} characters, more than the {max_description:,} this"
            " connection takes (max_description)"
        )
    return None


def chosen(
    definitions: Sequence[Mapping[str, Any]], names: Sequence[str] | None
) -> list[Mapping[str, Any]]:
    """The tools add_to takes: those named, else every one the server has a handler for."""
    return [
        d
        for d in definitions
        if (d["name"] in names if names is not None else not d.get("unavailable"))
    ]


@dataclasses.dataclass
class Fed:
    """One registry a connection added tools to, with how it chose them and what it added (name there ->
    (name on the server, the entry, the definition it was added with))."""

    registry: Registry
    names: tuple[str, ...] | None
    prefix: str
    added: dict[str, tuple[str, ToolEntry[Any, Any], Mapping[str, Any]]] = (
        dataclasses.field(default_factory=dict)
    )

    def _ours(self, name: str, entry: ToolEntry[Any, Any]) -> bool:
        return name in self.registry and self.registry.entry(name) is entry

    def sync(
        self,
        definitions: Sequence[Mapping[str, Any]],
        add: Add,
        max_description: int,
        label: str,
    ) -> None:
        """The registry's tools from this connection as `definitions` list them now."""
        wanted = {d["name"]: d for d in chosen(definitions, self.names)}
        gone: list[str] = []
        changed: list[str] = []
        new: list[str] = []
        left_out: list[str] = []
        for name, (remote, entry, was) in list(self.added.items()):
            now = wanted.get(remote)
            ours = self._ours(name, entry)
            if now == was and ours:
                continue
            if ours:
                self.registry.remove(name)
            del self.added[name]
            (gone if now is None else changed).append(name)
        for remote, definition in wanted.items():
            name = self.prefix + remote
            if name in self.added:
                continue
            if name in self.registry:
                left_out.append(
                    f"the MCP server {label} lists a tool {name!r}, not added: the registry has a tool of that"
                    " name already"
                )
                continue
            problem = unfit(name, definition.get("description"), max_description)
            if problem is not None:
                left_out.append(
                    f"the MCP server {label} lists a tool {cut_text(name, 80)!r}, not added: {problem[1]}"
                )
                continue
            self.added[name] = (
                remote,
                add(self.registry, name, definition),
                definition,
            )
            if name not in changed:
                new.append(name)
        if gone or changed or new:
            _log.info(
                "the MCP server %s changed its tools: added %s, changed %s, removed %s",
                label,
                new or "none",
                changed or "none",
                gone or "none",
            )
        self.tell(left_out)

    def tell(self, notes: Sequence[str]) -> None:
        """Log `notes`, and have every run offering this connection's tools say them in a `note` event."""
        for note in notes:
            _log.warning("%s", note)
        for name, (_, entry, _) in self.added.items():
            new = tuple(n for n in notes if n not in entry.spec.notes)
            if new and self._ours(name, entry):
                entry.spec = dataclasses.replace(
                    entry.spec, notes=(*entry.spec.notes, *new)
                )
