# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A package's tools by name, each spec made from its definition when first read: thousands import fast.

The generated `tools.py` holds every definition as constants: names and flags as Python values, and the
schemas and other JSON values as the compact JSON text the build froze them to. Importing the module reads
those texts as strings; a tool's text is parsed, and its ToolSpec made, only when that tool is first read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ..models.base import ToolSpec
from ..models.lazy import DeferredModels

# The fields a definition holds as JSON text (every other field is a Python value as it stands).
JSON_FIELDS = frozenset(
    {
        "input_schema",
        "output_schema",
        "meta",
        "annotations",
        "describe_meta",
        "check_schema",
        "check_resources",
        "dialects",
    }
)


def spec_of(module: str, name: str, definition: Mapping[str, Any]) -> ToolSpec:
    """The spec of tool `name` from its generated definition; its models come from `module` on first use."""
    fields = {
        key: json.loads(value)
        if key in JSON_FIELDS and isinstance(value, str)
        else value
        for key, value in definition.items()
        if key not in ("args_model", "result_model")
    }
    folded = fields.get("describe_meta")
    if isinstance(folded, list):
        fields["describe_meta"] = tuple(folded)
    models = DeferredModels(
        module, definition["args_model"], definition.get("result_model")
    )
    return ToolSpec.deferred(models, name=name, **fields)


class DeferredTools(Mapping[str, ToolSpec]):
    """The generated package's TOOLS: read-only, in definition order, each spec made once when first read.

    Iterating, `len` and `in` read only the names; a lookup (and `values()`, `items()`) makes the specs
    it reaches and keeps them, so every read of a tool returns the same spec.
    """

    def __init__(
        self, module: str, definitions: Mapping[str, Mapping[str, Any]]
    ) -> None:
        self._module = module
        self._definitions = definitions
        self._specs: dict[str, ToolSpec] = {}

    def __getitem__(self, name: str) -> ToolSpec:
        spec = self._specs.get(name)
        if spec is None:
            made = spec_of(self._module, name, self._definitions[name])
            # Two threads reading a tool first at once both make it; one spec is kept and both return it.
            spec = self._specs.setdefault(name, made)
        return spec

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    def __iter__(self) -> Iterator[str]:
        return iter(self._definitions)

    def __len__(self) -> int:
        return len(self._definitions)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({sorted(self._definitions)!r})"
