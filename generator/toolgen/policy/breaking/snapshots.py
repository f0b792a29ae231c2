"""What `breaking` compares of each tool, and the JSON snapshot file that keeps it as a baseline."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import InvalidInputError
from toolgen.core.positions import Pointer, json_locator, json_syntax_problem
from toolgen.ir.lower import Lowered
from toolgen.ir.model import freeze, thaw

SNAPSHOT_FORMAT = "toolgen-breaking-snapshot"


@dataclass(frozen=True)
class ToolSnapshot:
    """What `breaking` compares of one tool; an exported snapshot file is a list of these."""

    name: str
    source: str
    line: int
    col: int
    args_model: str
    result_model: str | None
    input_schema: str  # JSON text, as in the IR
    output_schema: str | None
    return_direct: bool = False
    requires_approval: bool = False
    strict: bool | None = None
    timeout: float | None = None
    title: str | None = None
    description: str | None = None


# Snapshot file key, attribute, accepted JSON types (None: null allowed).
_SNAPSHOT_FIELDS: tuple[tuple[str, str, tuple[type | None, ...]], ...] = (
    ("name", "name", (str,)),
    ("source", "source", (str,)),
    ("line", "line", (int,)),
    ("col", "col", (int,)),
    ("argsModel", "args_model", (str,)),
    ("resultModel", "result_model", (str, None)),
    ("inputSchema", "input_schema", (dict, bool)),
    ("outputSchema", "output_schema", (dict, bool, None)),
    ("returnDirect", "return_direct", (bool,)),
    ("requiresApproval", "requires_approval", (bool,)),
    ("strict", "strict", (bool, None)),
    ("timeout", "timeout", (int, float, None)),
    ("title", "title", (str, None)),
    ("description", "description", (str, None)),
)


def snapshot(lowered: Lowered) -> tuple[ToolSnapshot, ...]:
    """The lowered project's tools as `breaking` compares them, sorted by name."""
    raws = {str(raw.value("name")): raw for raw, _ in lowered.sources}
    tools = []
    for tool in lowered.project.tools:
        raw = raws.get(tool.name)
        line, col = raw.document.locate(raw.where("name")) if raw else (1, 1)
        tools.append(
            ToolSnapshot(
                tool.name,
                tool.source,
                line,
                col,
                tool.args_model,
                tool.result_model,
                tool.input_schema,
                tool.output_schema,
                tool.return_direct,
                tool.requires_approval,
                tool.strict,
                tool.timeout,
                tool.title,
                tool.description,
            )
        )
    return tuple(sorted(tools, key=lambda t: t.name))


def dump_snapshot(tools: Iterable[ToolSnapshot]) -> str:
    """The stable JSON export of `tools`, for `breaking --against FILE`."""
    entries = [
        {
            key: thaw(getattr(t, attr)) if key.endswith("Schema") else getattr(t, attr)
            for key, attr, _ in _SNAPSHOT_FIELDS
        }
        for t in sorted(tools, key=lambda t: t.name)
    ]
    return json.dumps({"format": SNAPSHOT_FORMAT, "version": 1, "tools": entries}, indent=2, ensure_ascii=False) + "\n"


def _snapshot_error(display: str, text: str, pointer: Pointer, message: str) -> InvalidInputError:
    line, col = (json_locator(text)(pointer) or (1, 1)) if pointer else (1, 1)
    return InvalidInputError([Diagnostic(display, line, col, Severity.ERROR, "snapshot-invalid", message)])


def _fits(value: Any, accepted: tuple[type | None, ...]) -> bool:
    if value is None or isinstance(value, bool):
        return (None if value is None else bool) in accepted
    return any(kind is not None and kind is not bool and isinstance(value, kind) for kind in accepted)


def load_snapshot(text: str, display: str) -> tuple[ToolSnapshot, ...]:
    """Read a file written by dump_snapshot; anything else raises InvalidInputError (rule snapshot-invalid)."""
    try:
        data = json.loads(text)
    except ValueError as error:
        line, col = (error.lineno, error.colno) if isinstance(error, json.JSONDecodeError) else (1, 1)
        said = json_syntax_problem(error) if isinstance(error, json.JSONDecodeError) else str(error)
        message = f"not a toolgen breaking snapshot (invalid JSON: {said}); write one with `toolgen breaking --export`"
        raise InvalidInputError([Diagnostic(display, line, col, Severity.ERROR, "snapshot-invalid", message)]) from None
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT or data.get("version") != 1:
        message = f"not a version 1 {SNAPSHOT_FORMAT} file; write one with `toolgen breaking --export`"
        raise _snapshot_error(display, text, (), message)
    if not isinstance(data.get("tools"), list):
        raise _snapshot_error(display, text, ("tools",), "'tools' must be a list")
    tools = []
    for index, entry in enumerate(data["tools"]):
        where = ("tools", str(index))
        if not isinstance(entry, dict):
            raise _snapshot_error(display, text, where, "a tool entry must be an object")
        values: dict[str, Any] = {}
        for key, attr, accepted in _SNAPSHOT_FIELDS:
            value = entry.get(key)
            if not _fits(value, accepted):
                raise _snapshot_error(
                    display, text, (*where, key), f"tool entry {index}: {key!r} is missing or invalid"
                )
            values[attr] = freeze(value) if key.endswith("Schema") and value is not None else value
        tools.append(ToolSnapshot(**values))
    return tuple(tools)
