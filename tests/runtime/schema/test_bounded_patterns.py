"""Schema patterns are matched in bounded time on every path: Rust's linear regex, else a backtracker with a deadline.

`^(a+)+$` against thirty `a`s and a `!` takes Python's re minutes (it holds the GIL, so nothing else runs
meanwhile); here every check of it answers well within a tool's timeout, and a pattern that still runs out of
time is a problem of the value, said as one. Ordinary patterns keep their meaning on either engine.
"""

from __future__ import annotations

import importlib
import json
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest
from support.projects import Project

import toolgen
from toolgen.runtime import (
    PatternMatcher,
    PatternTimeout,
    Registry,
    bounded_core_schema,
    pattern_problem,
    schema_problems,
    schema_validator,
    tool_call,
)

HOSTILE = "a" * 30 + "!"
# The tools' timeout here. Python's re takes minutes on HOSTILE; every answer below comes well within this.
TIMEOUT = 5.0
# A pattern with a backreference (Rust's regex has none): the backtracker runs it, and on this text runs out.
BACKREF = "^((a+)+)\\1$"
EXHAUSTING = "a" * 5000 + "!"


@contextmanager
def answered_in_time() -> Iterator[None]:
    start = time.monotonic()
    yield
    assert time.monotonic() - start < TIMEOUT


def test_the_linear_engine_answers_what_python_re_takes_minutes_on() -> None:
    matcher = PatternMatcher("^(a+)+$")
    assert matcher.linear
    with answered_in_time():
        assert not matcher.search(HOSTILE)
        assert matcher.search("aaa")
    # Lookaround goes to the backtracker, which remembers what it has tried: no exponential time either.
    lookahead = PatternMatcher("^(?=a)(a+)+$")
    assert not lookahead.linear
    with answered_in_time():
        assert not lookahead.search(HOSTILE * 100)
        assert lookahead.search("aaa")


@pytest.mark.parametrize(
    "pattern",
    [
        "^[A-Z]{2}$",
        "^\\d{3}-\\d{4}$",
        "\\w+@\\w+\\.com",
        "^[^\\s]+$",
        "[]a]",
        "x{2,3}y",
        "a{",
        "^\\S+\\s\\S+$",
        "(?i)^abc$",
        "^(?P<word>\\w+) (?P=word)$",
        "(?<=\\$)\\d+",
        "(?<!-)\\b\\d+",
        "^(?=.*[A-Z])(?=.*\\d).{6,}$",
        "^(\\w)\\w*\\1$",
        "\\<a",  # a literal `<` for Python; a word start for Rust, so not run there
        "[a&&b]",  # three characters for Python; an intersection for Rust
        "[[:alpha:]]",
        "^(?:(?!ab).)*$",
        "colou?r",
        "\\bcat\\b",
    ],
)
def test_ordinary_patterns_keep_their_meaning(pattern: str) -> None:
    texts = ["", "AB", "ab", "555-1234", "x@y.com", "a b", "aab", "xxy", "a{", "ABC", "hello hello", "$42", "-7", " 7"]
    texts += ["Passw0rd", "abca", "<a", "&", ":", "cat", "concat", "color", "colour", "٣٤٥-١٢٣٤", "é", "]"]
    matcher = PatternMatcher(pattern)
    with pytest.warns(FutureWarning) if "[[" in pattern or "&&" in pattern else _nothing():
        compiled = re.compile(pattern)
    for text in texts:
        assert matcher.search(text) == (compiled.search(text) is not None), (pattern, text)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def test_dollar_is_the_end_of_the_text_and_unicode_reads_as_in_python() -> None:
    # ECMA-262 (and Rust): `$` does not match before a final newline, as Python's re does.
    assert not PatternMatcher("^abc$").search("abc\n")
    assert not PatternMatcher("^(?=a)abc$").search("abc\n")
    assert PatternMatcher("^\\p{L}+$").search("πéa") and not PatternMatcher("^\\p{Lu}+$").search("πéa")
    assert PatternMatcher("^(?=.)\\p{Lu}$").search("É")
    # A lone surrogate (JSON allows "\ud800") is a character like any other, on either engine.
    assert PatternMatcher("^a.$").search("a\ud800") and PatternMatcher("^(?=a).\\W$").search("a\ud800")


def test_a_pattern_neither_engine_reads_is_said_so() -> None:
    matcher = PatternMatcher("(a)?(?(1)b|c)")
    assert matcher.problem is not None and "cannot be checked" in matcher.problem


# Both engines, the backtracker alone (lookaround, a backreference), Rust's regex alone (a script), neither.
@pytest.mark.parametrize(
    "pattern", ["^[a-z]+$", "^(?=a)b", BACKREF, "\\p{Script=Greek}", "(a)?(?(1)b|c)", "[", "(" * 400 + ")" * 400]
)
def test_pattern_problem_says_what_the_matcher_says(pattern: str) -> None:
    assert pattern_problem(pattern) == PatternMatcher(pattern).problem


def test_a_runtime_tool_answers_in_time_on_every_pattern_keyword() -> None:
    tools = Registry({})
    schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^(b+)+$": {"type": "integer"}},
        "additionalProperties": False,
        "propertyNames": {"pattern": "^(\\w+\\s?)+$"},
    }
    tools.add("pick", schema, lambda args, ctx: "ok", timeout=TIMEOUT)
    with answered_in_time():
        outcome = tools.dispatch(tool_call("pick", {"word": HOSTILE}, id="c1"))
        keys = tools.dispatch(tool_call("pick", {"b" * 30 + "!": 1}, id="c2"))
        names = tools.dispatch(tool_call("pick", {"word": "aa", "x" * 30 + "!": 1}, id="c3"))
    assert outcome.error is not None and outcome.error.kind == "invalid_arguments"
    assert "/word: expected a string matching '^(a+)+$', got \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"" in outcome.content
    assert keys.error is not None and keys.error.kind == "invalid_arguments"
    assert names.error is not None and "^(\\w+\\s?)+$" in names.content
    assert tools.dispatch(tool_call("pick", {"word": "aaa", "bb": 2}, id="c4")).content == "ok"


def test_a_pattern_that_runs_out_of_time_is_a_problem_of_the_value() -> None:
    tools = Registry({})
    tools.add("twice", {"type": "object", "properties": {"w": {"pattern": BACKREF}}}, lambda a, c: "ok")
    with answered_in_time():
        outcome = tools.dispatch(tool_call("twice", {"w": EXHAUSTING}, id="c1"))
    assert outcome.error is not None and outcome.error.kind == "invalid_arguments"
    assert (
        f"/w: expected a string matching '{BACKREF}' (the pattern could not be checked within 1 s)" in outcome.content
    )
    assert tools.dispatch(tool_call("twice", {"w": "aa"}, id="c2")).content == "ok"


def test_one_check_shares_one_deadline_however_many_strings_it_reads() -> None:
    validator = schema_validator({"type": "array", "items": {"type": "string", "pattern": BACKREF}})
    with answered_in_time():  # ten strings, each alone would take the whole second
        problems = schema_problems(validator, [EXHAUSTING] * 10)
    assert [p.pointer for p in problems] == [f"/{index}" for index in range(10)]
    assert all("could not be checked within 1 s" in p.message for p in problems)


@pytest.mark.parametrize(
    "draft", ["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema"]
)
def test_unevaluated_properties_read_pattern_properties_through_refs_in_bounded_time(draft: str) -> None:
    schema = {
        "$schema": draft,
        "$defs": {"keyed": {"patternProperties": {"^(b+)+$": {"type": "integer"}}}},
        "$ref": "#/$defs/keyed",
        "unevaluatedProperties": False,
    }
    validator = schema_validator(schema)
    with answered_in_time():
        assert schema_problems(validator, {"bbb": 1}) == []
        refused = schema_problems(validator, {"b" * 30 + "!": 1})
    assert len(refused) == 1 and "b" * 30 + "!" in refused[0].message


def test_core_schemas_are_bounded_once_and_keep_their_pattern_in_json_schema() -> None:
    import pydantic
    from pydantic_core import SchemaValidator, core_schema

    linear = core_schema.str_schema(pattern="^(a+)+$", regex_engine="python-re")
    assert bounded_core_schema(linear)["regex_engine"] == "rust-regex"
    lookaround = core_schema.str_schema(pattern="^(?=a)(a+)+$", min_length=2)
    bounded = bounded_core_schema(bounded_core_schema(lookaround))
    assert bounded["type"] == "function-after" and "pattern" not in bounded["schema"]
    validator = SchemaValidator(bounded)
    with answered_in_time(), pytest.raises(pydantic.ValidationError) as refused:
        validator.validate_python(HOSTILE * 10)
    assert refused.value.errors()[0]["type"] == "string_pattern_mismatch"
    assert validator.validate_python("aaa") == "aaa"


@pytest.fixture
def built(make_project: Callable[..., Project]) -> Iterator[Callable[[str, str], tuple[Project, ModuleType]]]:
    added: list[str] = []

    def build(package: str, tools: str) -> tuple[Project, ModuleType]:
        project = make_project(package)
        project.write("schemas/tools.yaml", tools)
        toolgen.build(project.root)
        added.append(str(project.root / "generated"))
        sys.path.insert(0, added[-1])
        return project, importlib.import_module(package)

    yield build
    for path in added:
        sys.path.remove(path)


# The backreference pattern as a YAML double-quoted string writes it.
_TWICE = BACKREF.replace("\\", "\\\\")
LOOK = "^(?=.*[A-Z])([a-zA-Z]+)+$"
TOOLS = f"""\
tools:
  - name: pick
    description: Pick.
    timeout: {TIMEOUT}
    inputSchema:
      type: object
      properties:
        word: {{type: string, pattern: "^(a+)+$"}}
        look: {{type: string, pattern: "{LOOK}"}}
        twice: {{type: string, pattern: "{_TWICE}"}}
        tags:
          type: object
          patternProperties:
            "^(b+)+$": {{type: integer}}
          additionalProperties: false
      required: [word]
    outputSchema:
      type: string
      pattern: "^(?!x)(c+)+$"
"""


def test_a_generated_package_checks_its_patterns_in_time(
    built: Callable[[str, str], tuple[Project, ModuleType]],
) -> None:
    project, sdk = built("bounded_patterns_sdk", TOOLS)
    tools = importlib.import_module("bounded_patterns_sdk.tools").Tools()
    tools.pick.handler(lambda args, ctx: "c" * 30 + "x!" if args.word == "aa" else "ccc")
    with answered_in_time():
        word = tools.dispatch(tool_call("pick", {"word": HOSTILE}, id="c1"))
        look = tools.dispatch(tool_call("pick", {"word": "a", "look": "A" + HOSTILE}, id="c2"))
        key = tools.dispatch(tool_call("pick", {"word": "a", "tags": {"b" * 30 + "!": 1}}, id="c3"))
        result = tools.dispatch(tool_call("pick", {"word": "aa"}, id="c4"))
        twice = tools.dispatch(tool_call("pick", {"word": "a", "twice": EXHAUSTING}, id="c5"))
    assert "/word: expected a string matching '^(a+)+$'" in word.content
    assert f"/look: expected a string matching '{LOOK}'" in look.content
    assert key.error is not None and key.error.kind == "invalid_arguments"
    assert result.error is not None and result.error.kind == "invalid_result"
    assert "could not be checked within 1 s" in twice.content
    assert tools.dispatch(tool_call("pick", {"word": "a", "look": "aaA"}, id="c6")).content == "ccc"
    # `toolgen validate` checks payloads with the package: the same answers, in time (Python's re would take
    # minutes on each of these two).
    longer = "a" * 32 + "!"
    calls = [{"word": longer}, {"word": "a", "look": "A" + longer}, {"word": "a"}]
    project.write(
        "calls.jsonl",
        "\n".join(
            json.dumps({"id": f"c{i}", "type": "function", "function": {"name": "pick", "arguments": json.dumps(args)}})
            for i, args in enumerate(calls)
        )
        + "\n",
    )
    start = time.monotonic()
    result_lines = project.cli("validate", "calls.jsonl", "--as", "tool-call").stdout.splitlines()
    assert time.monotonic() - start < 30  # a fresh interpreter, the package imported: still well within
    assert [line.split(" error ")[1].split(":")[0] for line in result_lines] == [
        "arguments-invalid arguments of 'pick' at /word",
        "arguments-invalid arguments of 'pick' at /look",
    ]


def test_the_timeout_error_is_raised_only_past_the_deadline() -> None:
    matcher = PatternMatcher(BACKREF)
    with pytest.raises(PatternTimeout), answered_in_time():
        matcher.search(EXHAUSTING, time.monotonic() + 0.2)
    assert matcher.search("aaaa", time.monotonic() + 0.2)


_ATOMS = ("a", "b", "A", ".", "\\d", "\\w", "\\s", "[ab]", "[^a]", "[a-c]", "\\b", "^", "$", "x", "(a|b)\\1")


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        return rng.choice(_ATOMS)
    if roll < 0.5:
        return _random_pattern(rng, depth + 1) + _random_pattern(rng, depth + 1)
    if roll < 0.6:
        return _random_pattern(rng, depth + 1) + "|" + _random_pattern(rng, depth + 1)
    if roll < 0.75:
        repeat = rng.choice(["*", "+", "?", "{1,2}", "*?", "+?", "", "{2}"])
        return "(" + _random_pattern(rng, depth + 1) + ")" + repeat
    if roll < 0.85:
        return "(?" + rng.choice(["=", "!", ":"]) + _random_pattern(rng, depth + 1) + ")"
    if roll < 0.92:
        return "(?<" + rng.choice(["=", "!"]) + rng.choice(["a", "ab", "[ab]", "\\d"]) + ")"
    return "(?i)" + _random_pattern(rng, depth + 1) if depth == 0 else "x"


def test_either_engine_agrees_with_python_re_on_random_patterns() -> None:
    rng = random.Random(37)
    compared = 0
    for _ in range(600):
        pattern = _random_pattern(rng)
        try:
            compiled = re.compile(pattern)
        except re.error:
            continue
        matcher = PatternMatcher(pattern)
        for _ in range(20):
            text = "".join(rng.choice("abAx1. \n") for _ in range(rng.randint(0, 7)))
            if text.endswith("\n") and "$" in pattern:
                continue  # `$` is the end of the text here, as in ECMA-262; Python's also matches before "\n"
            assert matcher.search(text) == (compiled.search(text) is not None), (pattern, text)
            compared += 1
    assert compared > 5000


def test_the_places_that_only_describe_or_guess_are_bounded_too() -> None:
    """Error sentences (patternProperties against a model's keys), example values and the build's fidelity check
    match a schema's pattern too: a backtracking one there is bounded as in a check, never Python's re."""
    from toolgen.runtime import example_value
    from toolgen.source.fidelity import _string_fits

    schema = {"type": "object", "patternProperties": {BACKREF: {}}, "additionalProperties": False}
    validator = schema_validator(schema)
    # A model's fifty keys share one deadline, in the check and in its sentences: not fifty times the time.
    instance = {EXHAUSTING + str(n): 1 for n in range(50)}
    with answered_in_time():
        problems = schema_problems(validator, instance)
    assert problems
    with answered_in_time():
        assert isinstance(example_value({"type": "string", "pattern": BACKREF, "minLength": 5000}), str)
    with answered_in_time():
        assert _string_fits(EXHAUSTING, {"type": "string", "pattern": BACKREF}) is False
        assert _string_fits("aa", {"type": "string", "pattern": BACKREF}) is True
