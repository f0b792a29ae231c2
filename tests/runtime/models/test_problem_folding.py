"""Folding pydantic's errors into problems: raised unfolded, folded when read, the same problems either way."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgen.runtime import ToolgenValidationError, ValidationProblem, check, problems_from
from toolgen.runtime.models.problems import _data_path, _fold_pair, _folded, _one_path
from toolgen.runtime.schema.sentences import _PYDANTIC_TYPES, expected, pydantic_expected, pydantic_sentence, shown


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


_GARBAGE_PROBE = """
import gc, sys
sys.path.insert(0, sys.argv[1])
import pytest
from test_problem_folding import BAD, ROLES, check, ToolgenValidationError
quoting_scalars = [value for value in BAD if value.get("content") != [{"type": "video"}]]
for value in quoting_scalars:  # builds whatever is built on first use
    with pytest.raises(ToolgenValidationError):
        check(ROLES, value)
gc.collect()
gc.disable()
for value in quoting_scalars:
    try:
        check(ROLES, value)
    except ToolgenValidationError as error:
        assert error.problems
print(gc.collect())
"""


def test_a_caught_error_leaves_no_garbage_cycle() -> None:
    # A cycle per invalid value (the frame, pydantic's error, its traceback) waits for the collector.
    # Not the values whose sentence quotes an array or object: the json encoder's iterencode, which
    # quotes them a piece at a time, makes a cycle of closures on every call. In a process of its own:
    # threads other tests leave running make garbage of their own while the collector is off.
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-c", _GARBAGE_PROBE, here], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0", "objects freed by the collector after catching the errors"


_PARTS = st.one_of(
    st.sampled_from(["a", "b", "tool_call_id", "toolCallId", "str", "x_"]),
    st.integers(-1, 3),
)
_DATA = st.recursive(
    st.one_of(st.none(), st.integers(0, 3), st.text("ab", max_size=2)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "toolCallId", "tool_call_id", "str"]), inner, max_size=3),
    ),
    max_leaves=8,
)


@given(_DATA, st.lists(_PARTS, max_size=5), st.sampled_from(["missing", "string_type"]))
def test_the_one_error_path_is_the_path_of_the_general_split(data: Any, loc: list[int | str], kind: str) -> None:
    assert _one_path(data, tuple(loc), kind) == _data_path(data, tuple(loc), kind)[0]


@pytest.mark.parametrize("kind", sorted(_PYDANTIC_TYPES))
@pytest.mark.parametrize("value", [42, -(10**50) + 1, 10**50, "x" * 80, [1, {"a": None}], None, 1.5])
def test_a_type_error_reads_as_the_general_sentence_says_it(kind: str, value: Any) -> None:
    error = {"type": kind, "loc": (), "msg": "Input should be something", "input": value}
    assert pydantic_sentence(error) == expected(pydantic_expected(error), value)


def _shown_in_pieces(value: str) -> str:
    """shown() as it quotes any value: iterencode's pieces until past 60 characters."""
    pieces: list[str] = []
    length = 0
    for piece in json.JSONEncoder(ensure_ascii=False, default=repr).iterencode(value):
        pieces.append(piece)
        length += len(piece)
        if length > 60:
            break
    text = "".join(pieces)
    return text if length <= 60 else text[:57] + "..."


@given(st.text(max_size=90) | st.text('"\\\n\t\x00é\U0001f600\ud800', max_size=70))
def test_a_string_is_quoted_as_the_json_encoder_quotes_it(value: str) -> None:
    assert shown(value) == _shown_in_pieces(value)


class ClosedText(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    type: Literal["text"]
    text: str | dict[str, str]


class ClosedImage(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    type: Literal["image"]
    url: str


ClosedPart = Annotated[ClosedText | ClosedImage, pydantic.Field(discriminator="type")]


class Closed(pydantic.BaseModel):
    part: ClosedPart
    parts: list[ClosedPart] = []


@pytest.mark.parametrize(
    ("value", "pointers"),
    [
        # The tag `text` is also a field of the part: pydantic's location says the tag, then the field.
        ({"part": {"type": "text", "text": "hi", "bogus": 1}}, ["/part/bogus"]),
        (
            {"part": {"type": "image", "url": "u"}, "parts": [{"type": "text", "text": "hi", "bogus": 1}]},
            ["/parts/0/bogus"],
        ),
        ({"part": {"type": "text", "text": 5}}, ["/part/text"]),
        ({"part": {"type": "text", "text": {"bogus": 1}}}, ["/part/text/bogus"]),
        ({"part": {"type": "text"}}, ["/part/text"]),
        ({"part": {"type": "image", "url": "u", "bogus": 1}}, ["/part/bogus"]),
    ],
)
def test_a_tag_that_is_also_a_field_is_read_as_the_tag(value: dict[str, Any], pointers: list[str]) -> None:
    try:
        Closed.model_validate(value, strict=True)
    except pydantic.ValidationError as error:
        assert [p.pointer for p in problems_from(error, value)] == pointers
    else:
        raise AssertionError("valid")
