"""The flattened 2020-12 meta-schema gives the same errors as jsonschema's own, on every schema we can find."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from support.projects import shared_dir

from toolgen.source.meta import flat_2020_12_validator

HANDWRITTEN: list[Any] = [
    {"type": "dict"},
    {"type": 5},
    {"required": "x"},
    {"properties": {"a": {"type": ["string", "string"]}}},
    {"items": [{"type": "string"}]},
    {"minimum": True, "maxLength": -1},
    {"$defs": {"a": {"enum": "x"}}, "dependentRequired": {"a": [1]}},
    {"dependencies": {"a": ["b", "b"]}, "$recursiveRef": 5},
    {"allOf": [], "anyOf": [{"not": {"pattern": 3}}]},
    {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
    # The core vocabulary's own keywords, whose definitions share their names with a document's identity.
    {"$id": 5},
    {"$id": "a#b"},
    {"$schema": 5},
    {"$vocabulary": {"https://example.com/v": "yes"}},
    {"$dynamicAnchor": "1 bad"},
    {"properties": {"a": {"$anchor": "#no", "$id": []}}},
    {"$id": "https://example.com/s", "$schema": "https://json-schema.org/draft/2020-12/schema"},
    True,
]


def _errors(validator: Any, schema: Any) -> list[tuple[list[str], str]]:
    return sorted((list(map(str, e.absolute_path)), e.message) for e in validator.iter_errors(schema))


def _compare(schemas: list[Any]) -> None:
    reference = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    flat = flat_2020_12_validator()
    for schema in schemas:
        assert _errors(flat, schema) == _errors(reference, schema), schema


def test_same_errors_on_handwritten_schemas() -> None:
    _compare(HANDWRITTEN)
    assert _errors(flat_2020_12_validator(), {"type": "dict"})
    for broken in ({"$id": 5}, {"$id": "a#b"}, {"$schema": 5}):
        assert _errors(flat_2020_12_validator(), broken), broken


def test_same_errors_on_the_json_schema_test_suite() -> None:
    root = shared_dir("json-schema-test-suite")
    schemas = [
        group["schema"]
        for path in sorted(root.rglob("*.json"))
        for group in (json.loads(path.read_text(encoding="utf-8")) if path.stat().st_size < 2_000_000 else [])
        if isinstance(group, dict) and "schema" in group
    ]
    if not schemas:
        pytest.skip("no test groups found in the JSON Schema test suite")
    _compare(schemas)
