"""Arguments and results nested too deep: one limit, MAX_JSON_DEPTH (128 levels of arrays and objects), for data
and JSON text alike, refused by one problem at the pointer of the first array or object past it.

Before, text past 128 levels was refused at the root ("(129)"), data was not refused at all until pydantic's
guard on recursive models gave up near 255 levels with "Recursion error - maximum validation depth exceeded", so
a tool whose recursive schema nests an object and an array per level took 100 levels as data and refused 64 as
text; and a jsonschema check that ran out of stack said "maximum recursion depth exceeded".
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pydantic
import pytest
from support.projects import Project

from toolgen.runtime.models.check import check, schema_problems, schema_validator
from toolgen.runtime.models.jsontext import MAX_JSON_DEPTH, JSONTextError, data_problem, nesting_problem, parse_json
from toolgen.runtime.models.problems import ToolgenValidationError, ValidationProblem


def _sentence(kind: str) -> str:
    return (
        f"is {kind} nested deeper than 128 levels of arrays and objects (at level 129); at most 128 levels are accepted"
    )


def _chain(levels: int, step: Callable[[Any], Any]) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = step(value)
    return value


def _text_problem(value: Any) -> ValidationProblem | None:
    try:
        parse_json(json.dumps(value, ensure_ascii=False))
    except JSONTextError as error:
        (problem,) = error.problems
        return problem
    return None


def _tree_in_array(levels: int) -> Any:
    """`levels` levels of JSON: an array holding objects and arrays in turn, `{"kids": [...]}`."""
    value: Any = 1
    for level in range(levels, 1, -1):
        value = {"kids": value} if level % 2 == 0 else [value]
    return [value]


# (name, the value nested `levels` levels deep, the pointer of its level 129 and what is there)
SHAPES: list[tuple[str, Callable[[int], Any], str, str]] = [
    ("arrays", lambda levels: _chain(levels, lambda v: [v]), "/0" * 128, "an array"),
    ("objects", lambda levels: _chain(levels, lambda v: {"k": v}), "/k" * 128, "an object"),
    # An object and an array per level of a recursive schema, in an array: 64 levels of it are 129 of JSON.
    ("tree", lambda levels: _tree_in_array(levels), "/0" + "/kids/0" * 63 + "/kids", "an array"),
    # Siblings before the way down, keys a pointer escapes, brackets inside strings.
    (
        "siblings",
        lambda levels: {"a/b": [1, {"x": "[[{"}, [[]]], "t~": [None, _chain(levels - 2, lambda v: {"]": v})]},
        "/t~0/1" + "/]" * 126,
        "an object",
    ),
]


@pytest.mark.parametrize(("name", "make", "pointer", "kind"), SHAPES, ids=[shape[0] for shape in SHAPES])
def test_text_and_data_are_refused_past_the_same_level_at_the_same_place(
    name: str, make: Callable[[int], Any], pointer: str, kind: str
) -> None:
    assert MAX_JSON_DEPTH == 128
    at_limit, past = make(128), make(129)
    assert _text_problem(at_limit) is None and nesting_problem(at_limit) is None and data_problem(at_limit) is None
    expected = ValidationProblem(pointer, _sentence(kind))
    assert _text_problem(past) == nesting_problem(past) == data_problem(past) == expected


def test_text_far_deeper_than_the_limit_is_refused_where_it_passes_it() -> None:
    # Not even closed: the place is still the first array past the limit.
    with pytest.raises(JSONTextError) as caught:
        parse_json('{"a": [0, ' + "[" * 20_000)
    assert caught.value.problems == (ValidationProblem("/a/1" + "/0" * 126, _sentence("an array")),)


def test_data_that_shares_or_holds_itself_is_walked_once_a_level() -> None:
    # 2**200 ways down, through 200 lists: walked path by path, this never ends.
    shared: Any = 1
    for _ in range(200):
        shared = [shared, shared]
    holds_itself: list[Any] = []
    holds_itself.append(holds_itself)
    for value in (shared, holds_itself):
        expected = ValidationProblem("/0" * 128, _sentence("an array"))
        assert nesting_problem(value) == data_problem(value) == expected
    within: Any = 1
    for _ in range(100):
        within = [within, within]
    assert nesting_problem(within) is None and data_problem(within) is None


@pytest.fixture(scope="module")
def deep_sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """A package with a tool whose recursive schema nests an object and an array per level, in and out."""
    node = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
    schema = {"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": node}}
    tool = {"name": "walk", "description": "d", "inputSchema": schema, "outputSchema": schema}
    project = Project(tmp_path_factory.mktemp("deep"), "deep_sdk")
    project.write("schemas/walk.json", json.dumps(tool))
    built = project.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    folder = str(project.root / "generated")
    sys.path.insert(0, folder)
    yield importlib.import_module("deep_sdk")
    sys.path.remove(folder)
    for name in [m for m in sys.modules if m == "deep_sdk" or m.startswith(("deep_sdk.", "models_t_"))]:
        del sys.modules[name]


def _tree(levels: int) -> dict[str, Any]:
    """Arguments `{"tree": ...}` holding `levels` nodes: 2 * levels levels of JSON, and the outer object."""
    return {"tree": _chain(levels, lambda v: {"kids": [v]} if v != 1 else {"kids": []})}


def _refusal(sdk: ModuleType, call: Callable[[], Any]) -> tuple[str, str] | None:
    try:
        call()
    except sdk.ToolgenValidationError as error:
        (problem,) = error.problems
        return problem.pointer, problem.message
    return None


# 64 nodes are 129 levels with the outer object: the first past the limit is node 64's `kids`.
TOO_DEEP = ("/tree" + "/kids/0" * 63 + "/kids", _sentence("an array"))


@pytest.mark.parametrize("nodes", [63, 64, 100, 300])
def test_a_tools_arguments_and_result_meet_one_limit_as_data_and_as_text(deep_sdk: ModuleType, nodes: int) -> None:
    value = _tree(nodes)
    checks = {
        "data": lambda: deep_sdk.validate_tool_arguments("walk", value),
        "text": lambda: deep_sdk.validate_tool_arguments("walk", json.dumps(value)),
        "spec": lambda: deep_sdk.TOOLS["walk"].check_arguments(value, json_text=False),
        "result": lambda: deep_sdk.validate_tool_result("walk", value),
    }
    seen = {name: _refusal(deep_sdk, call) for name, call in checks.items()}
    assert seen == dict.fromkeys(checks, None if nodes < 64 else TOO_DEEP)


def test_dispatch_says_the_same_of_data_and_text(deep_sdk: ModuleType) -> None:
    tools = deep_sdk.Tools()
    tools.walk.handler(lambda args, ctx: {})
    value = _tree(300)
    for arguments in (value, json.dumps(value)):
        outcome = tools.dispatch({"id": "c", "type": "function", "function": {"name": "walk", "arguments": arguments}})
        assert [(p.pointer, p.message) for p in outcome.error.problems] == [TOO_DEEP]
        assert "ecursion" not in outcome.error.message


def test_a_schema_check_out_of_stack_says_so_without_pythons_words() -> None:
    schema = {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"}
    validator = schema_validator(schema)
    value = _chain(120, lambda v: [v] if v != 1 else [])

    def deep(frames: int) -> list[ValidationProblem]:
        return deep(frames - 1) if frames else schema_problems(validator, value)

    assert schema_problems(validator, value) == []
    # Called with about a hundred frames left: jsonschema takes a few per level of the value.
    (problem,) = deep(sys.getrecursionlimit() - _frames() - 100)
    assert problem.pointer == "" and "ecursion" not in problem.message
    assert problem.message.startswith("could not be checked against its schema: the check nests more calls")


def _frames() -> int:
    frame, count = sys._getframe(), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1  # type: ignore[assignment]
    return count


class _Node(pydantic.BaseModel):
    k: _Node | None = None


def test_pydantic_guard_on_recursive_models_is_said_in_toolgens_words() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["k"] = cyclic
    deep = _chain(400, lambda v: {"k": v if v != 1 else None})
    sentences = []
    for value in (cyclic, deep):
        with pytest.raises(ToolgenValidationError) as caught:
            check(_Node, value, json_text=False)
        sentences.append(caught.value.problems[0].message)
    assert sentences[0].startswith("expected a value that does not hold itself, got ")
    assert sentences[1].startswith("expected a value nested less deeply, got ")
    assert not any("ecursion" in sentence for sentence in sentences)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"a": "x\ty"}', "is not valid JSON: Invalid control character at line 1 column 9"),
        ('{"a": "x', "is not valid JSON: Unterminated string starting at line 1 column 7"),
    ],
)
def test_a_syntax_error_names_its_place_once(text: str, said: str) -> None:
    with pytest.raises(JSONTextError) as caught:
        parse_json(text)
    assert [problem.message for problem in caught.value.problems] == [said]
