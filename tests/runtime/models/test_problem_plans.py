"""Planned problem shapes: whatever the data, the problems are the ones the fold makes without a plan."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.runtime import ToolgenValidationError, ValidationProblem, check, problems_from
from toolgen.runtime.models.base import CanonicalModel
from toolgen.runtime.models.plans import MOST_SHAPES, PLANS_ATTRIBUTE


class Text(CanonicalModel):
    type: Literal["text"]
    text: str


class Image(CanonicalModel):
    type: Literal["image"]
    image_url: str


Part = Annotated[Text | Image, pydantic.Field(discriminator="type")]


class Call(CanonicalModel):
    id: str
    call_count: int = 0


class Note(CanonicalModel):
    role: Literal["note"]
    content: str | list[Part] | None = None
    tool_calls: list[Call] | None = None
    tool_call_id: str | None = None


class Plain(pydantic.BaseModel):
    role: Literal["plain"]
    level: Literal[1, 2, 3] = 1
    tags: list[str] = []


def _adapter() -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(Annotated[Note | Plain, pydantic.Field(discriminator="role")])


_NAMES = st.sampled_from(
    ["role", "content", "text", "type", "image", "str", "note", "tool_calls", "toolCalls", "id", "callCount"]
)
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.5, -0.0]), st.sampled_from(["", "x", "text"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_NAMES, inner, max_size=3)),
    max_leaves=6,
)
_PARTS = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "video"])}, optional={"text": _VALUES}),
    st.fixed_dictionaries({"type": st.just("image")}, optional={"imageUrl": _VALUES, "image_url": _VALUES}),
    _VALUES,
)
_CALLS = st.lists(
    st.fixed_dictionaries({}, optional={"id": _VALUES, "call_count": _VALUES, "callCount": _VALUES}), max_size=2
)
_MESSAGES = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["note", "plain", "other"])},
        optional={
            "content": st.one_of(_VALUES, st.lists(_PARTS, max_size=2)),
            "tool_calls": st.one_of(_CALLS, _VALUES),
            "toolCalls": _CALLS,
            "tool_call_id": _VALUES,
            "toolCallId": _VALUES,
            "level": _VALUES,
            "tags": _VALUES,
            "text": _VALUES,
            "note": _VALUES,
            "str": _VALUES,
        },
    ),
    _VALUES,
)


def _unplanned(adapter: pydantic.TypeAdapter[Any], value: Any) -> list[ValidationProblem] | None:
    try:
        adapter.validator.validate_python(value, strict=True)
    except pydantic.ValidationError as error:
        return problems_from(error, value)
    return None


def _checked(adapter: pydantic.TypeAdapter[Any], value: Any) -> list[ValidationProblem] | None:
    try:
        check(adapter, value, json_text=False)
    except ToolgenValidationError as error:
        return list(error.problems)
    return None


@settings(max_examples=400, deadline=None)
@given(st.lists(_MESSAGES, min_size=1, max_size=12))
def test_problems_with_planned_shapes_are_those_of_the_fold_without_plans(messages: list[Any]) -> None:
    adapter = _adapter()
    # Twice over: the first meeting of each shape plans it, the second and later ones use the plan.
    for value in messages + messages:
        expected = _unplanned(adapter, value)
        if expected is None:
            continue  # valid as it is, or with its integral floats as ints: nothing folded
        assert _checked(adapter, value) == expected, value


def test_a_repeated_shape_is_planned_and_its_values_read_from_the_new_error() -> None:
    adapter = _adapter()
    for number in (1, 2, 3):
        problems = _checked(adapter, {"role": "note", "tool_calls": [{"id": number}]})
        assert problems == [ValidationProblem("/tool_calls/0/id", f"expected a string, got {number}")]
    _, plans = adapter.__dict__[PLANS_ATTRIBUTE]
    assert [plan is not None for plan in plans.values()] == [True]


@pytest.mark.parametrize(
    "value",
    [
        # A union's tag that is also a key of the data: the walk goes into it where pydantic does not.
        {"role": "note", "content": [{"type": "text", "text": "hi", "bogus": "hi"}]},
        {"role": "note", "content": [{"type": "text", "text": "hi", "bogus": 2}]},
        # Both spellings of one field: pydantic reads the camelCase one, the walk the name.
        {"role": "note", "tool_calls": [{"id": 1}], "toolCalls": [{"id": 2}]},
        {"role": "note", "toolCalls": [{"id": 2}]},
        {"role": "note", "tool_calls": [{"id": 1}]},
    ],
)
def test_data_that_reads_apart_from_pydantic_is_folded_as_without_plans(value: dict[str, Any]) -> None:
    adapter = _adapter()
    for _ in range(3):
        assert _checked(adapter, value) == _unplanned(adapter, value)


def test_integral_floats_still_count_as_integers_where_a_shape_is_planned() -> None:
    adapter = _adapter()
    assert _checked(adapter, {"role": "plain", "level": "x"}) is not None
    assert _checked(adapter, {"role": "plain", "level": 7}) is not None
    # The same shape as the last (a literal missed), but 2.0 is the integer 2.
    assert _checked(adapter, {"role": "plain", "level": 2.0}) is None


def test_one_error_at_any_index_is_one_shape_with_the_index_in_its_pointer() -> None:
    adapter = _adapter()
    for number in range(5):
        problems = _checked(adapter, {"role": "note", "tool_calls": [{"id": "a"}] * number + [{"id": 5}]})
        assert problems == [ValidationProblem(f"/tool_calls/{number}/id", "expected a string, got 5")]
    _, plans = adapter.__dict__[PLANS_ATTRIBUTE]
    assert len(plans) == 1


def test_plans_are_bounded_per_validator() -> None:
    adapter = _adapter()
    # Two errors keep their indexes in the shape (the fold compares them): a shape per length.
    for number in range(MOST_SHAPES + 20):
        value = {"role": "note", "tool_calls": [{"id": "a"}] * number + [{"id": 5}, {"id": 6}]}
        problems = _checked(adapter, value)
        assert problems is not None
        assert problems == _unplanned(adapter, value)
        assert {problem.pointer for problem in problems} == {f"/tool_calls/{number}/id", f"/tool_calls/{number + 1}/id"}
    _, plans = adapter.__dict__[PLANS_ATTRIBUTE]
    assert len(plans) == MOST_SHAPES
