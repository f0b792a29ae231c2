"""Checks documents against toolgen's own meta-schemas and JSON Schemas against their draft's meta-schema."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import yaml
from jsonschema.exceptions import ValidationError

from toolgen.diagnostics import Diagnostic
from toolgen.load import Document
from toolgen.positions import Pointer
from toolgen.resources import schemas_dir

_MAX_MESSAGE = 240


@functools.cache
def _meta_validator(name: str) -> jsonschema.protocols.Validator:
    """`config` is meta/config.schema.yaml; `tool` is the canonical ToolDefinition, the one source of that shape."""
    if name == "tool":
        defs = yaml.safe_load((schemas_dir() / "canonical" / "tool_definition.yaml").read_text(encoding="utf-8"))
        schema = {"$defs": defs["$defs"], "$ref": "#/$defs/ToolDefinition"}
    else:
        schema = yaml.safe_load((schemas_dir() / "meta" / f"{name}.schema.yaml").read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    return validator_class(schema)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _located(document: Document, prefix: Pointer, error: ValidationError, rule: str) -> Diagnostic:
    pointer: Pointer = (*prefix, *(str(part) for part in error.absolute_path))
    if (
        error.validator == "additionalProperties"
        and isinstance(error.instance, dict)
        and isinstance(error.schema, dict)
    ):
        declared = set(error.schema.get("properties", {}))
        extra = sorted(key for key in error.instance if key not in declared)
        if extra:
            return document.key_diagnostic((*pointer, extra[0]), rule, _short(error.message))
    return document.diagnostic(pointer, rule, _short(error.message))


def check_against_meta_schema(
    document: Document, name: str, data: Any = None, prefix: Pointer = ()
) -> Iterator[Diagnostic]:
    """Shape errors in `data` (default: the whole document) against meta/<name>.schema.yaml."""
    instance = document.data if data is None else data
    for error in sorted(_meta_validator(name).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path))):
        yield _located(document, prefix, error, "shape")


def check_json_schema(document: Document, schema: Any, prefix: Pointer) -> Iterator[Diagnostic]:
    """A schema must itself be valid under the meta-schema of the draft it declares (2020-12 when silent)."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, Mapping):
        yield document.diagnostic(prefix, "schema-invalid", "a JSON Schema must be an object or a boolean")
        return
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    meta = validator_class(validator_class.META_SCHEMA)
    for error in meta.iter_errors(schema):
        yield _located(document, prefix, error, "schema-invalid")
