"""A JSON tool file that is no JSON says it whole: where (path:line:col), what was found there (a character by its
code point when it is not plain ASCII) and what was expected; never the parser's cut `... at` or its `(char N)`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support.projects import Project

from toolgen.core.positions import json_syntax_problem
from toolgen.source.load import LoadError, parse_text

VALUE = "a value was expected (a string in double quotes, a number, an object, an array, true, false or null)"


def _refusal(text: str) -> str:
    with pytest.raises(LoadError) as caught:
        parse_text(text, Path("t.json"), "t.json")
    return caught.value.diagnostic.format()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '{"a": "x\ty"}',
            "1:9: error syntax invalid JSON: found the control character U+0009 (tab) inside a string, where JSON "
            "expects it escaped: write it as \\t",
        ),
        (
            '{"a": "x\x01"}',
            "1:9: error syntax invalid JSON: found the control character U+0001 inside a string, where JSON expects "
            "it escaped: write it as \\u0001",
        ),
        (
            '{"a": "line\nnext"}',
            "1:12: error syntax invalid JSON: found the control character U+000A (line break) inside a string, where "
            "JSON expects it escaped: write it as \\n (or the string's closing `\"` is missing before it)",
        ),
        ('{"a" 1}', "1:6: error syntax invalid JSON: found `1` after a key, where `:` was expected"),
        (
            '{"a": 1\n "b": 2}',
            '2:2: error syntax invalid JSON: found `"` where `,` or `}` was expected, after an item of the object '
            "opened at 1:1",
        ),
        (
            '{"a": [1, 2}',
            "1:12: error syntax invalid JSON: found `}` where `,` or `]` was expected, after an item of the array "
            "opened at 1:7",
        ),
        (
            '{"a": 1',
            "1:8: error syntax invalid JSON: found the end of the file where `,` or `}` was expected, after an item "
            "of the object opened at 1:1",
        ),
        (
            '{"a": "xy',
            '1:7: error syntax invalid JSON: the string that starts here has no closing `"`: found the end of the '
            "file where it was expected",
        ),
        (
            '{"a": 1}\n{"b": 2}',
            "2:1: error syntax invalid JSON: found `{` after the end of the JSON value, where the file was expected "
            "to end (a JSON file holds one value; put several in an array)",
        ),
        (
            '{"a": 1,}',
            "1:9: error syntax invalid JSON: found `}` where a key in double quotes was expected; remove the `,` "
            "before it: JSON has no trailing commas",
        ),
        (
            "[1,]",
            f"1:4: error syntax invalid JSON: found `]` where {VALUE}; remove the `,` before it: JSON has no "
            "trailing commas",
        ),
        (
            "{'a': 1}",
            "1:2: error syntax invalid JSON: found `'` where a key in double quotes was expected; JSON strings and "
            "keys take double quotes",
        ),
        (
            "{a: 1}",
            "1:2: error syntax invalid JSON: found `a` where a key in double quotes was expected; write the key in "
            "double quotes",
        ),
        ('{"a": tru}', f"1:7: error syntax invalid JSON: found `tru` where {VALUE}"),
        ("// c\n{}", f"1:1: error syntax invalid JSON: found `/` where {VALUE}; JSON has no comments"),
        (
            '{"a": \u201cx\u201d}',
            f"1:7: error syntax invalid JSON: found `\u201c` (U+201C LEFT DOUBLE QUOTATION MARK) where {VALUE}; a "
            'typographic quote is not `"`',
        ),
        ('{"a":\u00a0 1}', f"1:6: error syntax invalid JSON: found U+00A0 (NO-BREAK SPACE) where {VALUE}"),
        ("[", f"1:2: error syntax invalid JSON: found the end of the file in the array opened at 1:1 where {VALUE}"),
        (
            '{"a": "\\x"}',
            "1:8: error syntax invalid JSON: found the escape `\\x` inside a string, which JSON does not have; "
            'expected one of \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hexadecimal digits (a backslash '
            "itself is \\\\)",
        ),
        (
            '{"a": "\\u12zz"}',
            "1:9: error syntax invalid JSON: found `\\u12zz` inside a string, where \\u is followed by four "
            "hexadecimal digits",
        ),
    ],
)
def test_a_json_syntax_error_says_what_was_found_and_what_was_expected(text: str, said: str) -> None:
    assert _refusal(text) == f"t.json:{said}"


def test_no_json_message_is_cut_or_names_a_character_offset() -> None:
    texts = ['{"a": "x\ty"}', '{"a": "xy', '{"a": 1} x', '{"a" 1}', "[1 2]", "", "\ufeff{}"]
    for text in texts:
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            said = json_syntax_problem(error)
            assert not said.endswith((" at", " starting")), said
            assert "(char " not in said and "utf-8-sig" not in said, said


def test_python_3_13_trailing_comma_message_is_said_whole() -> None:
    # Python 3.13's own wording for `[1,]`, raised at the comma: what each Python says must read the same way.
    error = json.JSONDecodeError("Illegal trailing comma before end of array", "[1,]", 2)
    assert json_syntax_problem(error) == (
        "found `,` before `]`, where another item was expected; remove the `,`: JSON has no trailing commas"
    )


def test_build_prints_the_whole_message(make_project: Callable[..., Project]) -> None:
    project = make_project()
    tool = '{"tools": [{"name": "a", "description": "tab\there", "inputSchema": {"type": "object"}}]}\n'
    (project.root / "schemas").mkdir()
    (project.root / "schemas" / "t.json").write_text(tool, encoding="utf-8")
    built = project.cli("build")
    assert built.returncode == 3
    assert built.stdout == (
        "schemas/t.json:1:45: error syntax invalid JSON: found the control character U+0009 (tab) inside a "
        "string, where JSON expects it escaped: write it as \\t\n"
    )
