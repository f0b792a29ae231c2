"""Generated validators against jsonschema's Draft 2020-12 verdict, on random schemas and values near their edges.

One project of many tools is built per run (schemas from a fixed seed, see schema_cases.py); hypothesis then
draws values for them. `toolgen validate`'s check of a call, dispatch and jsonschema must agree on every value.
TOOLGEN_AGREEMENT_SEED and TOOLGEN_AGREEMENT_TOOLS explore other schemas.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.schema_cases import input_schemas, values

import toolgen
from toolgen.payloads.validation.local import _argument_problems

SEED = int(os.environ.get("TOOLGEN_AGREEMENT_SEED", "19"))
COUNT = int(os.environ.get("TOOLGEN_AGREEMENT_TOOLS", "120"))
PACKAGE = "agreement_sdk"


@dataclass(frozen=True)
class Built:
    sdk: ModuleType
    tools: Any
    schemas: tuple[Any, ...]
    checks: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"Built({len(self.schemas)} tools)"


@contextmanager
def _built(root: Path, package: str, schemas: list[Any]) -> Iterator[Built]:
    """One project holding a tool `t<i>` per schema, built and imported, every tool bound to a handler."""
    (root / "toolgen.yaml").write_text(
        f"version: v1\npackage: {package}\noutput: generated\ninputs: [tools.json]\n", encoding="utf-8"
    )
    tools = [{"name": f"t{i}", "inputSchema": schema} for i, schema in enumerate(schemas)]
    (root / "tools.json").write_text(json.dumps({"tools": tools}, ensure_ascii=False), encoding="utf-8")
    toolgen.build(root)
    sys.path.insert(0, str(root / "generated"))
    try:
        sdk = importlib.import_module(package)
        registry = sdk.Tools()
        for name in sdk.TOOLS:
            registry.entry(name).handler(lambda args, ctx: "ran")
        checks = tuple(jsonschema.Draft202012Validator(schema) for schema in schemas)
        yield Built(sdk, registry, tuple(schemas), checks)
    finally:
        sys.path.remove(str(root / "generated"))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    with _built(tmp_path_factory.mktemp("agreement"), PACKAGE, input_schemas(SEED, COUNT)) as found:
        yield found


@dataclass(frozen=True)
class Verdicts:
    expected: bool  # jsonschema's
    validated: bool  # `toolgen validate`'s: no error finding for the call
    unholdable: bool  # validate's warning: valid, but the handler's model cannot hold it, so dispatch refuses
    dispatched: bool  # the handler ran
    message: str


def verdicts(built: Built, index: int, value: Any) -> Verdicts:
    """What jsonschema, `toolgen validate` and dispatch say of `value` as tool `index`'s arguments."""
    name = f"t{index}"
    call = {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(value)}}
    rules = {rule for _, rule, _ in _argument_problems(built.sdk, "tool-call", call)}
    outcome = built.tools.dispatch(call)
    assert outcome.is_error or outcome.content == "ran"
    return Verdicts(
        built.checks[index].is_valid(value),
        "arguments-invalid" not in rules,
        "arguments-unholdable" in rules,
        not outcome.is_error,
        str(outcome.content),
    )


def assert_agree(built: Built, index: int, value: Any) -> None:
    found = verdicts(built, index, value)
    where = f"{json.dumps(value, ensure_ascii=False)} against {json.dumps(built.schemas[index], ensure_ascii=False)}"
    assert found.validated == found.expected, f"validate says {found.validated}, jsonschema {found.expected}: {where}"
    if found.unholdable:
        # A value of a type union the models have no class for (an object or a number at the root): validate
        # says so, and dispatch refuses it with the same reason rather than hand the handler something else.
        assert not found.dispatched and "cannot hold it" in found.message, where
    else:
        assert found.dispatched == found.expected, f"dispatch says {found.dispatched}: {where}: {found.message}"


@st.composite
def cases(draw: st.DrawFn, schemas: tuple[Any, ...]) -> tuple[int, Any]:
    index = draw(st.integers(0, len(schemas) - 1))
    return index, draw(values(schemas[index], schemas[index]))


@settings(
    max_examples=int(os.environ.get("TOOLGEN_AGREEMENT_EXAMPLES", "1500")),
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_validate_dispatch_and_jsonschema_agree(built: Built, data: st.DataObject) -> None:
    index, value = data.draw(cases(built.schemas))
    assert_agree(built, index, value)


def _property(schema: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"m": schema}}


# Keywords beside an enum or const that disagree with it: each must be checked by JSON Schema, not the models.
# The first two are real benchmark definitions (BFCL live: attitudinal metrics and sensor readings).
DISAGREEING: list[tuple[Any, list[Any]]] = [
    (
        _property({"type": "array", "items": {"type": "string"}, "enum": ["favorability", "trust", "value"]}),
        [{"m": ["zzz"]}, {"m": ["trust"]}, {"m": "trust"}, {}],
    ),
    (
        _property({"type": "array", "items": {"type": "string"}, "enum": ["temperature", "co2"], "default": []}),
        [{"m": ["co2"]}, {"m": []}, {"m": "co2"}, {}],
    ),
    (_property({"type": "integer", "enum": ["1", "2"]}), [{"m": "1"}, {"m": 1}, {}]),
    (_property({"type": "array", "items": {"type": "integer", "enum": ["1", "2"]}}), [{"m": ["1"]}, {"m": [1]}]),
    ({"type": "integer", "enum": ["1", "2"]}, ["1", 1]),
    ({"type": "boolean", "enum": ["true"]}, ["true", True]),
    (_property({"type": "null", "enum": ["a"]}), [{"m": "a"}, {"m": None}]),
    (_property({"type": ["string", "null"], "enum": ["a"]}), [{"m": "a"}, {"m": None}]),
    ({"type": "array", "items": {"type": ["string", "null"], "enum": ["a"]}}, [["a"], [None]]),
    (_property({"type": "string", "enum": ["a", "1"], "pattern": "^[a-z]$"}), [{"m": "a"}, {"m": "1"}]),
    (_property({"type": "string", "enum": ["a", "bbbb"], "maxLength": 2}), [{"m": "a"}, {"m": "bbbb"}]),
    (_property({"enum": ["a", "12"], "minLength": 2}), [{"m": "a"}, {"m": "12"}]),
    (_property({"type": "string", "const": 1}), [{"m": "1"}, {"m": 1}]),
    (_property({"const": "a", "enum": ["b"]}), [{"m": "a"}, {"m": "b"}]),
    ({"type": "object", "additionalProperties": {"type": "integer", "enum": ["1"]}}, [{"x": "1"}, {"x": 1}]),
    (
        {
            "type": "object",
            "properties": {"m": {"$ref": "#/$defs/M"}},
            "$defs": {"M": {"type": "integer", "enum": ["1"]}},
        },
        [{"m": "1"}, {"m": 1}],
    ),
    (_property({"anyOf": [{"type": "integer", "enum": ["1"]}, {"type": "boolean"}]}), [{"m": "1"}, {"m": True}]),
    (_property({"type": "array", "items": {"type": "object", "additionalProperties": False}}), [{"m": [{"a": 1}]}]),
    (_property({"type": "string", "maxItems": 1}), [{"m": "abc"}]),
    (_property({"enum": [1, 2]}), [{"m": 1.0}, {"m": 3}, {"m": True}]),
    # Keywords of a type the subschema does not declare: they limit nothing, and the models must not obey them.
    (_property({"type": "string", "items": {"type": "integer"}}), [{"m": "abc"}, {"m": [1]}]),
    (_property({"type": "integer", "properties": {"a": {"type": "string"}}}), [{"m": 3}, {"m": {"a": "x"}}]),
    (_property({"type": "string", "properties": {"a": {"type": "string"}}, "required": ["a"]}), [{"m": "x"}]),
    (_property({"type": "boolean", "additionalProperties": False}), [{"m": True}]),
    (
        _property({"anyOf": [{"type": "string", "items": {"type": "integer"}}, {"type": "integer"}]}),
        [{"m": "x"}, {"m": 1}, {"m": [1]}],
    ),
    (_property({"type": "array", "items": {"type": "string", "items": {"type": "integer"}}}), [{"m": ["x"]}]),
    ({"type": "object", "properties": {"m": {"type": ["string", "null"], "items": {}}}}, [{"m": "x"}, {"m": None}]),
    # An enum beside keywords of other types with no type declared: the enum alone decides.
    (_property({"items": {"type": "string"}, "enum": ["a"]}), [{"m": "a"}, {"m": ["a"]}]),
    (_property({"properties": {"a": {"type": "string"}}, "enum": ["a"]}), [{"m": "a"}, {"m": {"a": "a"}}]),
    (_property({"maxLength": 1, "minimum": 3, "enum": ["a"]}), [{"m": "a"}, {"m": 5}]),
]


@pytest.fixture(scope="module")
def disagreeing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    schemas = [schema for schema, _ in DISAGREEING]
    with _built(tmp_path_factory.mktemp("disagreeing"), "disagreeing_sdk", schemas) as found:
        yield found


@pytest.mark.parametrize("index", range(len(DISAGREEING)), ids=lambda i: json.dumps(DISAGREEING[i][0])[:60])
def test_keywords_that_disagree_with_an_enum_are_checked_as_json_schema_says(disagreeing: Built, index: int) -> None:
    for value in DISAGREEING[index][1]:
        assert_agree(disagreeing, index, value)
