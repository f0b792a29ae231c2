"""Every value and key of JSON text is located where it starts, whatever the layout and escapes."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolgen.core.positions import KEY, Pointer, json_duplicate_keys, json_locator

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False))
_TEXT = st.text(alphabet=st.sampled_from('ab"\\/~\n\t é{}[]:,\u2028'), max_size=4)
_JSON = st.recursive(
    st.one_of(_SCALARS, _TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=15,
)


def _pointers(value: Any, pointer: Pointer = ()) -> dict[Pointer, Any]:
    found: dict[Pointer, Any] = {pointer: value}
    if isinstance(value, dict):
        for key, item in value.items():
            found[(*pointer, key, KEY)] = key
            found.update(_pointers(item, (*pointer, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.update(_pointers(item, (*pointer, str(index))))
    return found


def _offset(text: str, line: int, col: int) -> int:
    return sum(len(part) + 1 for part in text.split("\n")[: line - 1]) + col - 1


@settings(max_examples=300, deadline=None)
@given(_JSON, st.sampled_from([None, 0, 1, 3]), st.booleans())
def test_each_position_starts_its_value(value: Any, indent: int | None, ascii_only: bool) -> None:
    text = " \n" + json.dumps(value, indent=indent, ensure_ascii=ascii_only) + "\n"
    expected = _pointers(value)
    locate = json_locator(text)
    decoder = json.JSONDecoder()
    for pointer, wanted in expected.items():
        place = locate(pointer)
        assert place is not None, pointer
        found, _ = decoder.raw_decode(text, _offset(text, *place))
        assert found == wanted, pointer
    # Nothing is located that the text does not hold: under a scalar, past an array's end, a missing key.
    for pointer in expected:
        assert locate((*pointer, "no such key")) is None or (*pointer, "no such key") in expected
        assert locate((*pointer, str(len(expected)))) is None or (*pointer, str(len(expected))) in expected


def test_repeated_keys_are_found_at_their_second_occurrence() -> None:
    text = '{"a": [{}, {"b": 1, "b": {"c": []}}], "a": 2}'
    assert list(json_duplicate_keys(text)) == [(("a", "1", "b"), 1, 21), (("a",), 1, 39)]


def test_repeated_keys_after_the_second_are_each_found_where_they_are() -> None:
    assert list(json_duplicate_keys('{"k": 1, "k": 2, "k": 3}')) == [(("k",), 1, 10), (("k",), 1, 18)]


def test_text_nested_deep_costs_memory_in_proportion_to_its_length() -> None:
    # A table keyed by whole pointers costs the square of the depth: 20,000 levels took 2 GB.
    depth = 5_000
    text = '{"a": ' * depth + "[1, 2]" + "}" * depth
    tracemalloc.start()
    try:
        locate = json_locator(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * len(text), peak
    assert locate(("a",) * depth + ("1",)) == (1, 6 * depth + 5)
    assert locate(("a",) * (depth - 1) + ("b",)) is None
    duplicated = '{"a": ' * depth + '{"b": 1, "b": 2}' + "}" * depth
    assert list(json_duplicate_keys(duplicated)) == [(("a",) * depth + ("b",), 1, 6 * depth + 10)]
