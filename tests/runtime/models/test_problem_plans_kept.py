"""What the plans keep beyond a shape: a single error's plan written out for its very location, and several errors'
routes less those another's imply. Either way the problems are the ones the fold makes without a plan."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_problem_plans import _MESSAGES, _adapter, _checked, _unplanned

from toolgen.runtime import ValidationProblem
from toolgen.runtime.models.plans import MOST_LOCATIONS, PLANS_ATTRIBUTE, _checks


@settings(max_examples=300, deadline=None)
@given(st.lists(_MESSAGES, min_size=1, max_size=8))
def test_problems_met_three_times_are_those_of_the_fold(messages: list[Any]) -> None:
    adapter = _adapter()
    # The first meeting plans the shape, the second keeps its location's plan, the third reads that.
    for value in messages * 3:
        expected = _unplanned(adapter, value)
        if expected is not None:
            assert _checked(adapter, value) == expected, value


def test_a_single_error_s_location_is_kept_with_its_pointer_written() -> None:
    adapter = _adapter()
    for number in (5, 6, 7):
        value = {"role": "note", "tool_calls": [{"id": "a"}, {"id": number}]}
        assert _checked(adapter, value) == [ValidationProblem("/tool_calls/1/id", f"expected a string, got {number}")]
    _, plans = adapter.__dict__[PLANS_ATTRIBUTE]
    assert len(plans) == 1 and len(plans.exact) == 1
    (kept,) = plans.exact.values()
    assert kept is not None and kept[1][0][0] == "/tool_calls/1/id"
    # The same location under other data reads apart: folded as without plans.
    value = {"role": "note", "tool_calls": [{"id": "a"}, {"id": 5}], "toolCalls": [{"id": 1}]}
    assert _checked(adapter, value) == _unplanned(adapter, value)


def test_locations_kept_are_bounded() -> None:
    adapter = _adapter()
    for number in range(MOST_LOCATIONS + 10):
        value = {"role": "note", "tool_calls": [{"id": "a"}] * number + [{"id": 5}]}
        assert _checked(adapter, value) == [ValidationProblem(f"/tool_calls/{number}/id", "expected a string, got 5")]
    _, plans = adapter.__dict__[PLANS_ATTRIBUTE]
    assert len(plans) == 1 and len(plans.exact) == MOST_LOCATIONS


def test_routes_another_implies_are_not_checked() -> None:
    key, other = (0, 0, "content", "x"), (1, 1, None, None)
    # The second route begins with the first: checking it checks the first. Two alike: the first is kept.
    assert _checks([(key,), (key, other)], [("content",), ("content", 0)]) == (((key, other), 1),)
    assert _checks([(key,), (key,)], [("content",), ("content",)]) == (((key,), 0),)
    # The same steps at other indexes are other routes.
    assert len(_checks([(key, other), (key, other)], [("content", 0), ("content", 1)])) == 2
