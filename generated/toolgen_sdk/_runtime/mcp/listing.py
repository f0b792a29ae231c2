# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a server's tools list must be before its tools are used: not too long, schemas that are JSON Schemas.

A schema jsonschema cannot read (a `type: "strin"`, a `required: "name"`) would otherwise pass at connect and make
every call fail; it is refused here, naming the tool and the place. Each output schema becomes the bounded
validator (models/check.py) that answers.py checks a result's structuredContent with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..models.check import schema_validator
from ..models.problems import escape_pointer_part
from ..tools.guards import cut_text
from .convert import MCPToolsError

# How many tools a connection takes from one server, unless told otherwise: far past any real server's.
DEFAULT_MAX_TOOLS = 10_000


def check_count(count: int, limit: int) -> None:
    """MCPToolsError once a server has listed more than `limit` tools (checked page by page, so it stops early)."""
    if count > limit:
        raise MCPToolsError(
            f"it lists more than {limit:,} tools, this connection's max_tools"
        )


def _schema_error(
    schema: Mapping[str, Any],
) -> tuple[tuple[str | int, ...], str] | None:
    """Where and why `schema` is no JSON Schema of its draft (its meta-schema says so), or None."""
    try:
        validator = schema_validator(schema)
        checker = type(validator)(type(validator).META_SCHEMA)
        errors = checker.iter_errors(dict(schema))
        error = min(errors, key=lambda e: len(e.absolute_path), default=None)
    except RecursionError:
        return (), "is nested too deeply to be checked"
    except Exception as failure:  # noqa: BLE001 - what jsonschema cannot even read is no schema either
        return (
            (),
            f"cannot be read as a JSON Schema: {type(failure).__name__}: {failure}",
        )
    if error is None:
        return None
    return tuple(error.absolute_path), cut_text(str(error.message), 300)


def output_validators(
    definitions: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Each tool's input and output schema checked (MCPToolsError naming the tool and pointer for one that is no
    JSON Schema); the bounded validator of each output schema, by tool name."""
    validators: dict[str, Any] = {}
    for index, definition in enumerate(definitions):
        name = definition["name"]
        for field in ("inputSchema", "outputSchema"):
            schema = definition.get(field)
            if not isinstance(schema, Mapping):
                continue
            found = _schema_error(schema)
            if found is not None:
                path, why = found
                pointer = "".join("/" + escape_pointer_part(part) for part in path)
                raise MCPToolsError(
                    f"tools[{index}] ({name!r}): {field}{pointer or ''} is not a valid JSON Schema: {why}",
                    (index, field, *path),
                )
            if field == "outputSchema":
                validators[name] = schema_validator(schema)
    return validators
