"""The keyword-by-keyword proof of validity never accepts a schema the 2020-12 meta-schema rejects."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
from support.projects import shared_dir

from toolgen.source.meta import flat_2020_12_validator
from toolgen.source.meta_subset import KNOWN_KEYWORDS, proven_valid

_REFERENCE = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
_DRAFT = "https://json-schema.org/draft/2020-12/"


def _valid(schema: Any) -> bool:
    return not any(_REFERENCE.iter_errors(schema)) and not any(flat_2020_12_validator().iter_errors(schema))


def test_knows_every_keyword_the_meta_schema_names() -> None:
    root = jsonschema.Draft202012Validator.META_SCHEMA
    named = set(root["properties"])
    for entry in root["allOf"]:
        named |= set(REGISTRY.contents(_DRAFT + entry["$ref"])["properties"])
    assert named == KNOWN_KEYWORDS


PLAIN: list[Any] = [
    True,
    {},
    {"type": "object", "properties": {"x": {"type": "string", "description": "the x"}}, "required": ["x"]},
    {"type": ["string", "null"], "enum": ["a", None], "default": "a", "examples": ["a"], "x-extra": object()},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "minItems": 1, "uniqueItems": True},
    {"anyOf": [{"$ref": "#/$defs/a"}, False], "$defs": {"a": {"const": 1}}, "additionalProperties": False},
    {"pattern": "^a", "format": "date", "multipleOf": 0.5, "dependentRequired": {"a": ["b"]}},
]
NOT_PROVEN: list[Any] = [
    {"type": "dict"},
    {"type": 5},
    {"type": []},
    {"type": ["string", "string"]},
    {"required": "x"},
    {"required": ["x", "x"]},
    {"properties": {"a": {"type": ["string", "string"]}}},
    {"items": [{"type": "string"}]},
    {"minimum": True, "maxLength": -1},
    {"maxLength": 2.0},
    {"multipleOf": 0},
    {"$defs": {"a": {"enum": "x"}}, "dependentRequired": {"a": [1]}},
    {"allOf": [], "anyOf": [{"not": {"pattern": 3}}]},
    {"$id": "a#b"},
    {"$schema": 5},
    {"dependencies": {"a": ["b"]}},
    5,
    None,
]


@pytest.mark.parametrize("schema", PLAIN)
def test_plain_schemas_are_proven(schema: Any) -> None:
    assert proven_valid(schema)
    assert _valid({k: v for k, v in schema.items() if k != "x-extra"} if isinstance(schema, dict) else schema)


@pytest.mark.parametrize("schema", NOT_PROVEN)
def test_invalid_or_unusual_schemas_are_left_to_jsonschema(schema: Any) -> None:
    assert not proven_valid(schema)


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.floats(min_value=-3, max_value=3, allow_nan=False),
    st.sampled_from(["string", "object", "dict", "", "^a", "#", "a#b", "x"]),
    st.lists(st.sampled_from(["string", "null", "integer", "dict", "a"]), max_size=3),
    st.lists(st.integers(min_value=0, max_value=2), max_size=2),
)
_KEYS = st.sampled_from(sorted(KNOWN_KEYWORDS | {"x-note", "nullable"}))


def _schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    value = st.one_of(
        _VALUES,
        children,
        st.lists(children, max_size=2),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=2),
    )
    return st.one_of(st.booleans(), st.dictionaries(_KEYS, value, max_size=4))


_SCHEMAS = st.recursive(st.dictionaries(_KEYS, _VALUES, max_size=3), _schemas, max_leaves=12)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SCHEMAS)
def test_proven_schemas_are_valid_for_jsonschema(schema: Any) -> None:
    if proven_valid(schema):
        assert _valid(schema), schema


def test_proven_schemas_of_the_json_schema_test_suite_are_valid() -> None:
    root = shared_dir("json-schema-test-suite")
    schemas = [
        group["schema"]
        for path in sorted(root.rglob("*.json"))
        for group in (json.loads(path.read_text(encoding="utf-8")) if path.stat().st_size < 2_000_000 else [])
        if isinstance(group, dict) and "schema" in group
    ]
    if not schemas:
        pytest.skip("no test groups found in the JSON Schema test suite")
    proven = [schema for schema in schemas if proven_valid(schema)]
    assert proven  # the plain cases are proven, so the comparison below is not empty
    assert [schema for schema in proven if not _valid(schema)] == []


EXCUSED: list[tuple[Any, list[tuple[str, ...]]]] = [
    ({"type": "dict"}, [("type",)]),
    (
        {"type": "object", "properties": {"a": {"type": "float"}, "b": {"items": {"type": "any"}}}},
        [("properties", "a", "type"), ("properties", "b", "items", "type")],
    ),
    ({"anyOf": [{"type": "String"}, {"type": "string"}]}, [("anyOf", "0", "type")]),
]
STILL_NOT_PROVEN: list[tuple[Any, list[tuple[str, ...]]]] = [
    ({"type": "dict", "required": "x"}, [("type",)]),  # another error besides the excused one
    ({"type": ["string", "dict"]}, [("type", "1")]),  # a list's error is at the list, not at the name
    ({"type": 5}, [("type",)]),
    ({"properties": {"a": {"type": "dict"}}}, [("properties", "b", "type")]),  # excused elsewhere
]


@pytest.mark.parametrize(("schema", "excused"), EXCUSED)
def test_excused_types_are_the_only_errors_jsonschema_finds(schema: Any, excused: list[tuple[str, ...]]) -> None:
    assert not proven_valid(schema)
    assert proven_valid(schema, frozenset(excused))
    found = {tuple(str(part) for part in error.absolute_path) for error in _REFERENCE.iter_errors(schema)}
    assert found == set(excused)


@pytest.mark.parametrize(("schema", "excused"), STILL_NOT_PROVEN)
def test_excusing_a_type_proves_nothing_else(schema: Any, excused: list[tuple[str, ...]]) -> None:
    assert not proven_valid(schema, frozenset(excused))
