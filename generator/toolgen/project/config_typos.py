"""toolgen.yaml keys that misspell a known one (`outptu`, `lint.provders`): the meta-schema's error, with a hint.

The meta-schema refuses a key it does not know, which says what is wrong but not what was meant; the key is
compared with the keys its place allows (keyword_typos.nearest_name, as schema keywords and tool keys are).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from toolgen.core.diagnostics import Diagnostic


def _tokens(pointer: str) -> list[str]:
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:]] if pointer else []


def _allowed_keys(schema: Mapping[str, Any], path: list[str]) -> list[str] | None:
    """The keys the object at `path` may have, when the schema lists them all (additionalProperties: false)."""
    node: Any = schema
    for token in path:
        properties = node.get("properties") if isinstance(node, Mapping) else None
        if not isinstance(properties, Mapping) or token not in properties:
            return None
        node = properties[token]
    if not isinstance(node, Mapping) or node.get("additionalProperties") is not False:
        return None
    properties = node.get("properties")
    return [str(key) for key in properties] if isinstance(properties, Mapping) else None


def hinted(diagnostics: Iterable[Diagnostic], schema: Mapping[str, Any]) -> list[Diagnostic]:
    """`diagnostics` of toolgen.yaml against `schema` (its meta-schema), each unknown key's with the known key it
    most likely misspells: `...(not an allowed field), got "gen"; did you mean 'output'?`."""
    from toolgen.source.keyword_typos import nearest_name

    found = []
    for diagnostic in diagnostics:
        tokens = _tokens(diagnostic.pointer)
        allowed = _allowed_keys(schema, tokens[:-1]) if tokens else None
        meant = nearest_name(tokens[-1], allowed, closed=True) if allowed and tokens[-1] not in allowed else None
        if meant is not None:
            diagnostic = dataclasses.replace(diagnostic, message=f"{diagnostic.message}; did you mean {meant!r}?")
        found.append(diagnostic)
    return found


def config_schema() -> Any:
    """toolgen's meta-schema of toolgen.yaml, as the config check reads it."""
    import yaml

    from toolgen.core.resources import schemas_dir

    return yaml.safe_load((schemas_dir() / "meta" / "config.schema.yaml").read_text(encoding="utf-8"))
