"""Folding pydantic's errors into problems: raised unfolded, folded when read, the same problems either way."""

from __future__ import annotations

import pickle
from typing import Annotated, Any, Literal

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgen.runtime import ToolgenValidationError, ValidationProblem, check, problems_from
from toolgen.runtime.models.problems import _fold_pair, _folded


class Text(pydantic.BaseModel):
    type: Literal["text"]
    text: str


class Image(pydantic.BaseModel):
    type: Literal["image"]
    url: str


Part = Annotated[Text | Image, pydantic.Field(discriminator="type")]


class Note(pydantic.BaseModel):
    role: Literal["note"]
    content: str | list[Part]
    tool_call_id: str | None = None


class Call(pydantic.BaseModel):
    role: Literal["call"]
    id: str
    arguments: dict[str, int] | list[int]


ROLES = pydantic.TypeAdapter(Annotated[Note | Call, pydantic.Field(discriminator="role")])

BAD = [
    {"role": "note", "content": 42},
    {"role": "note", "content": [{"type": "text"}]},
    {"role": "note", "content": [{"type": "video"}]},
    {"role": "note", "content": [{"type": "text", "text": 1}, {"type": "image"}]},
    {"role": "call", "id": 7, "arguments": {"a": "x"}},
    {"role": "call", "id": "c", "arguments": "x"},
    {"role": "robot"},
    {"content": "x"},
    {"role": "call"},
]


def _eager(value: Any) -> list[ValidationProblem]:
    try:
        ROLES.validator.validate_python(value, strict=True)
    except pydantic.ValidationError as error:
        return problems_from(error, value)
    raise AssertionError("valid")


@pytest.mark.parametrize("value", BAD)
def test_the_raised_error_folds_when_read_into_the_problems_of_an_eager_fold(value: dict[str, Any]) -> None:
    with pytest.raises(ToolgenValidationError) as caught:
        check(ROLES, value)
    error = caught.value
    assert error._problems is None, "folded before anyone read the problems"
    assert list(error.problems) == _eager(value)
    assert error.problems and all(p.message for p in error.problems)


def test_a_union_missed_at_one_value_is_one_sentence_and_a_deeper_branch_wins() -> None:
    with pytest.raises(ToolgenValidationError) as caught:
        check(ROLES, {"role": "note", "content": 42})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/content", "expected a string or an array, got 42")
    ]
    with pytest.raises(ToolgenValidationError) as caught:
        check(ROLES, {"role": "note", "content": [{"type": "text"}]})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/content/0/text", "expected a value (it is required), got nothing")
    ]


def test_an_unfolded_error_reads_pickles_and_prints_like_an_eager_one() -> None:
    with pytest.raises(ToolgenValidationError) as caught:
        check(ROLES, {"role": "call", "id": 7, "arguments": "x"})
    error = caught.value
    eager = ToolgenValidationError(_eager({"role": "call", "id": 7, "arguments": "x"}))
    assert error.args == eager.args == (eager.problems,)
    assert repr(error) == repr(eager)
    assert str(error) == str(eager)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ToolgenValidationError
    assert copy.problems == error.problems


def _sentence(kind: str) -> dict[str, Any]:
    return {"type": "custom", "msg": kind, "sentence": kind, "input": 1}


_KEYS = st.sampled_from(["a", "b", "0"])
_LABELS = st.sampled_from(["str", "list", "x", "y"])


@st.composite
def _entry(draw: st.DrawFn) -> tuple[list[str], list[tuple[int, str]], dict[str, Any]]:
    path = draw(st.lists(_KEYS, max_size=4))
    positions = sorted(draw(st.lists(st.integers(0, len(path)), max_size=3)))
    branches = [(position, draw(_LABELS)) for position in positions]
    return path, branches, _sentence(draw(st.sampled_from(["one", "two"])))


@given(_entry(), _entry())
def test_the_two_error_shortcut_folds_as_the_general_fold_does(
    first: tuple[list[str], list[tuple[int, str]], dict[str, Any]],
    second: tuple[list[str], list[tuple[int, str]], dict[str, Any]],
) -> None:
    direct = _fold_pair(first, second)
    if direct is not None:
        assert [direct] == _folded([first, second])
