"""NullRefusingModel's one model validator refuses null exactly as a field validator on every field did.

The field validator is kept here as the reference: the same errors (type, place, message, input, in the same
order) and the same values, for any mix of nulls, wrong types, missing and extra keys, nested and in lists.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.runtime import NullRefusingModel, SchemaModel

_REFUSAL = "a value other than null (leave the field out instead)"


class _FieldRefusing(SchemaModel):
    """The refusal as it was: an after validator on every field, looking its key up in the listed ones."""

    toolgen_not_null: ClassVar[frozenset[str]] = frozenset()

    @pydantic.field_validator("*", mode="after")
    @classmethod
    def _refuse(cls, value: Any, info: pydantic.ValidationInfo) -> Any:
        if value is None and cls.toolgen_not_null:
            name = info.field_name or ""
            field = cls.model_fields.get(name)
            key = field.alias if field is not None and field.alias else name
            if key in cls.toolgen_not_null:
                raise ValueError(_REFUSAL)
        return value


class RefInner(_FieldRefusing):
    toolgen_not_null: ClassVar[frozenset[str]] = frozenset({"zip", "n"})
    street: str
    zip: str | None = None
    n: int = 3
    z_a: Annotated[str | None, pydantic.Field(alias="zA")] = None


class RefOuter(_FieldRefusing):
    model_config = pydantic.ConfigDict(extra="forbid")
    toolgen_not_null: ClassVar[frozenset[str]] = frozenset({"zA", "w", "ws"})
    a: int
    z_a: Annotated[str | None, pydantic.Field(alias="zA", min_length=2)] = None
    w: RefInner | None = None
    ws: list[RefInner] | None = None
    note: str | None = None


class NewInner(NullRefusingModel):
    model_config = pydantic.ConfigDict(json_schema_extra={"x-toolgen-not-null": ["zip", "n"]})
    street: str
    zip: str | None = None
    n: int = 3
    z_a: Annotated[str | None, pydantic.Field(alias="zA")] = None


class NewOuter(NullRefusingModel):
    model_config = pydantic.ConfigDict(extra="forbid", json_schema_extra={"x-toolgen-not-null": ["zA", "w", "ws"]})
    a: int
    z_a: Annotated[str | None, pydantic.Field(alias="zA", min_length=2)] = None
    w: NewInner | None = None
    ws: list[NewInner] | None = None
    note: str | None = None


_SCALARS = st.sampled_from([None, "", "ab", 0, 7, 1.5, True, [], {}])
_INNER = st.dictionaries(st.sampled_from(["street", "zip", "n", "zA", "z_a", "other"]), _SCALARS, max_size=5)
_VALUES = st.one_of(_SCALARS, _INNER, st.lists(st.one_of(_INNER, _SCALARS), max_size=3))
_OUTER = st.dictionaries(st.sampled_from(["a", "zA", "z_a", "w", "ws", "note", "extra"]), _VALUES, max_size=7)


def _outcome(model: type[pydantic.BaseModel], data: Any, as_json: bool) -> Any:
    try:
        value = model.model_validate_json(json.dumps(data)) if as_json else model.model_validate(data)
    except pydantic.ValidationError as error:
        return "invalid", error.errors(include_url=False), error.error_count()
    return "valid", value.model_dump(by_alias=True)


def _same(data: Any, as_json: bool) -> None:
    # By repr: two ValueErrors with the same text are not equal, and the one in an error's ctx must match too.
    new = repr(_outcome(NewOuter, data, as_json)).replace("NewInner", "Inner")
    assert new == repr(_outcome(RefOuter, data, as_json)).replace("RefInner", "Inner")


@settings(max_examples=400, deadline=None)
@given(_OUTER, st.booleans())
def test_refusal_matches_a_field_validator_on_every_field(data: dict[str, Any], as_json: bool) -> None:
    _same(data, as_json)


def test_refusal_keeps_every_other_problem_in_field_order() -> None:
    data = {"a": "x", "zA": None, "w": {"street": None, "zip": None, "n": None}, "extra": 1}
    _, errors, _ = _outcome(NewOuter, data, False)
    assert [(e["type"], e["loc"]) for e in errors] == [
        ("int_type", ("a",)),
        ("value_error", ("zA",)),
        ("string_type", ("w", "street")),
        ("value_error", ("w", "zip")),
        ("int_type", ("w", "n")),
        ("extra_forbidden", ("extra",)),
    ]
    assert errors[1]["msg"] == f"Value error, {_REFUSAL}"
    _same(data, False)


def test_null_allowed_where_not_listed_and_schemas_unchanged() -> None:
    assert NewOuter.model_validate({"a": 1, "note": None}).note is None
    new = json.dumps(NewOuter.model_json_schema()).replace("New", "")
    assert new == json.dumps(RefOuter.model_json_schema()).replace("Ref", "")
