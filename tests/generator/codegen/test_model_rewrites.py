"""toolgen's rewrites of datamodel-code-generator's models module: what each one writes, that the module is parsed
once, that unsafe or unexpected output is refused, and that a wide model of long property names builds."""

from __future__ import annotations

import ast
import dataclasses
import gc
import json
import re
import sys
from collections.abc import Callable
from typing import Any

import pytest
from support.projects import Project

import toolgen
from toolgen.codegen.targets.guard import check_models_module
from toolgen.codegen.targets.model_rewrites import rewrite_models
from toolgen.core.errors import ToolgenError, UnsafeOutputError

HEAD = """\
# header
from __future__ import annotations

from typing import Annotated, Any, Literal
from pydantic import ConfigDict, Field, RootModel
from sdk._runtime import SchemaModel


"""

ROOT = """

class ToolgenRoot(RootModel[Any]):
    root: Annotated[Any, Field(title='ToolgenRoot')]
"""


def _rewrite(body: str, unions: tuple[str, ...] = (), keep: frozenset[str] = frozenset()) -> str:
    return rewrite_models(HEAD + body + ROOT, "ToolgenRoot", unions, keep, "sdk")


def _body(rewritten: str) -> str:
    """What follows the imports: the rewrites' own text, the root class gone."""
    head, body = rewritten.split("from sdk._runtime import SchemaModel\n\n\n", 1)
    # The imports the rewrites add after the __future__ one: TypeAlias, and the runtime's frozen containers.
    added = r"\nfrom typing import TypeAlias\n|\nfrom sdk\._runtime import (FrozenAny|FrozenList|FrozenMap)(, (FrozenList|FrozenMap))*\n"
    assert re.sub(added, "", head) + "from sdk._runtime import SchemaModel\n\n\n" == HEAD
    return body.rstrip("\n") + "\n"


def test_the_root_class_goes_and_plain_models_stay_as_written() -> None:
    body = "class Weather(SchemaModel):\n    city: Annotated[str, Field(description='Where.')]\n"
    rewritten = _rewrite(body)
    assert rewritten == HEAD + body + "\n\n"
    assert "TypeAlias" not in rewritten


def test_a_union_becomes_an_alias_with_only_the_arguments_that_describe_it() -> None:
    body = (
        "class Cat(SchemaModel):\n    kind: Literal['cat']\n\n\n"
        "class Dog(SchemaModel):\n    kind: Literal['dog']\n\n\n"
        "class Pet(RootModel[Cat | Dog]):\n"
        '    """\n    A pet.\n    """\n'
        "    root: Annotated[Cat | Dog, Field(description='A pet.', discriminator='kind', title='Pet',"
        " validate_default=True)]\n"
    )
    rewritten = _rewrite(body, unions=("Pet",))
    assert "\nfrom typing import TypeAlias\n" in rewritten
    assert _body(rewritten).endswith(
        "Pet: TypeAlias = Annotated[Cat | Dog, Field(description='A pet.', discriminator='kind', title='Pet')]\n"
    )
    assert "class Pet" not in rewritten
    ast.parse(rewritten)


def test_an_enum_becomes_a_literal_alias_with_its_description_as_a_docstring() -> None:
    body = (
        "class Unit(RootModel[Literal['celsius', 'fahrenheit']]):\n"
        "    root: Annotated[Literal['celsius', 'fahrenheit'], Field(description='Degrees \"of\" heat\\n', title='Unit')]\n"
    )
    rewritten = _rewrite(body)
    assert _body(rewritten) == "Unit: TypeAlias = Literal['celsius', 'fahrenheit']\n'Degrees \"of\" heat\\n'\n"


def test_a_tool_model_and_a_root_model_of_no_literal_stay_classes_and_defer_their_build() -> None:
    body = (
        "class Tags(RootModel[list[str]]):\n"
        '    """\n    Tags.\n    """\n'
        "    root: list[str]\n\n\n"
        "class ModeArgs(RootModel[Literal['a']]):\n"
        "    root: Literal['a']\n"
    )
    rewritten = _rewrite(body, keep=frozenset({"ModeArgs"}))
    assert _body(rewritten) == (
        "class Tags(RootModel[FrozenList[str]]):\n"
        '    """\n    Tags.\n    """\n'
        "    model_config = ConfigDict(defer_build=True)\n"
        "    root: FrozenList[str]\n\n\n"
        "class ModeArgs(RootModel[Literal['a']]):\n"
        "    model_config = ConfigDict(defer_build=True)\n"
        "    root: Literal['a']\n"
    )


def test_defaults_become_fields_where_a_bare_value_would_be_wrong() -> None:
    body = (
        "class Opts(SchemaModel):\n    k: int | None = None\n\n\n"
        "class Call(SchemaModel):\n"
        "    tags: list[str] = []\n"
        "    unit: Annotated[Literal['c', 'f'], Field(description='Ünit «x»', validate_default=True)] = 'c'\n"
        "    opts: Annotated[Opts, Field(validate_default=True)] = {'k': 1}\n"
        "    size: Annotated[int, Field(validate_default=True)] = -1\n"
    )
    rewritten = _rewrite(body)
    assert _body(rewritten).split("\n\n\n")[1] == (
        "class Call(SchemaModel):\n"
        "    tags: FrozenList[str] = Field(default=[])\n"
        # validate_default goes where the type names no model; the text after a non-ASCII description stays put
        "    unit: Annotated[Literal['c', 'f'], Field(description='Ünit «x»')] = 'c'\n"
        "    opts: Annotated[Opts, Field(validate_default=True)] = Field(default={'k': 1}, validate_default=True)\n"
        "    size: int = -1\n"
    )


def test_an_alias_that_holds_a_model_counts_as_one_for_validate_default() -> None:
    body = (
        "class Cat(SchemaModel):\n    kind: Literal['cat']\n\n\n"
        "class Dog(SchemaModel):\n    kind: Literal['dog']\n\n\n"
        "class Pet(RootModel[Cat | Dog]):\n"
        "    root: Annotated[Cat | Dog, Field(discriminator='kind')]\n\n\n"
        "class Home(SchemaModel):\n"
        "    pet: Annotated[Pet, Field(validate_default=True)] = {'kind': 'cat'}\n"
    )
    rewritten = _rewrite(body, unions=("Pet",))
    assert (
        "    pet: Annotated[Pet, Field(validate_default=True)] = Field(default={'kind': 'cat'}, validate_default=True)\n"
        in (rewritten)
    )


def test_positions_hold_with_crlf_line_ends_and_multi_line_nodes() -> None:
    body = (
        "class Call(SchemaModel):\r\n"
        "    tags: Annotated[\r\n        list[str], Field(description='é')\r\n    ] = [\r\n        'a',\r\n    ]\r\n"
    )
    rewritten = rewrite_models(HEAD + body + ROOT, "ToolgenRoot", (), frozenset(), "sdk")
    assert "    ] = Field(default=[\r\n        'a',\r\n    ])\r\n" in rewritten
    assert "ToolgenRoot" not in rewritten


def test_the_module_is_parsed_once_and_never_split_for_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    parse, segment = ast.parse, ast.get_source_segment

    def counted_parse(*args: Any, **kwargs: Any) -> Any:
        calls.append("parse")
        return parse(*args, **kwargs)

    def counted_segment(*args: Any, **kwargs: Any) -> Any:
        calls.append("segment")
        return segment(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", counted_parse)
    monkeypatch.setattr(ast, "get_source_segment", counted_segment)
    body = "".join(
        f"class E{i}(RootModel[Literal['a', 'b']]):\n    root: Literal['a', 'b']\n\n\n"
        f"class M{i}(SchemaModel):\n    e: Annotated[E{i}, Field(validate_default=True)] = 'a'\n    t: list[str] = []\n\n\n"
        for i in range(50)
    )
    rewritten = _rewrite(body)
    assert calls == ["parse"]
    assert rewritten.count(": TypeAlias = Literal['a', 'b']") == 50


def _unmentioned(definitions: list[Any]) -> list[Any]:
    return [dataclasses.replace(definition, mentions=frozenset()) for definition in definitions]


def test_the_split_cuts_the_rewritten_statements_from_the_same_parse_as_a_parse_of_the_text_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolgen.codegen.targets.model_modules import parse_definitions as _parse

    body = (
        "class Cat(SchemaModel):\n    kind: Literal['cat']\n\n\n"
        "class Dog(SchemaModel):\n    kind: Literal['dog']\n\n\n"
        "class Pet(RootModel[Cat | Dog]):\n    root: Annotated[Cat | Dog, Field(discriminator='kind')]\n\n\n"
        "class Unit(RootModel[Literal['c', 'f']]):\n    root: Annotated[Literal['c', 'f'], Field(description='Dog')]\n\n\n"
        "class Tags(RootModel[list[Pet]]):\n    root: list[Pet]\n\n\n"
        "class Home(SchemaModel):\n    pet: Annotated[Pet, Field(validate_default=True)] = {'kind': 'cat'}\n"
        "    unit: Unit = 'c'\n    tags: list[str] = []\n\n\n"
        "class Node(SchemaModel):\n    kids: list[Node] = []\n\n\n"
        "Node.model_rebuild()\n"
    )
    calls: list[str] = []
    parse = ast.parse

    def counted_parse(*args: Any, **kwargs: Any) -> Any:
        calls.append("parse")
        return parse(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", counted_parse)
    rewritten = _rewrite(body, unions=("Pet",))
    preamble, definitions = _parse(rewritten)
    assert calls == ["parse"], "the split reads the tree the rewrites parsed"
    # `mentions` aside: of the rewrites' own names (TypeAlias, Field, ...) the rewritten statements list none.
    again = _parse(str(rewritten))
    assert (preamble, _unmentioned(definitions)) == (again[0], _unmentioned(again[1])), "what a parse of the text gives"
    by_name = {d.name: d for d in definitions}
    assert "class Tags(DeferredRootModel[FrozenList[Pet]]):" in by_name["Tags"].text
    assert by_name["Unit"].refers_to == {"Dog"}, "an alias's docstring counts as a mention"
    assert by_name["Node"].rebuild == "Node.model_rebuild()\n" and by_name["Node"].lazy


@pytest.mark.parametrize(
    ("body", "unions", "message"),
    [
        (
            "class A(SchemaModel):\n    x: int\n",
            ("Pet",),
            "the union Pet was not generated as a discriminated root model",
        ),
        (
            "class Pet(RootModel[int]):\n    root: int\n",
            ("Pet",),
            "the union Pet was not generated as a discriminated root model",
        ),
    ],
)
def test_unexpected_generator_output_is_an_error_naming_the_model(
    body: str, unions: tuple[str, ...], message: str
) -> None:
    with pytest.raises(ToolgenError, match=message):
        _rewrite(body, unions=unions)


def test_a_missing_root_class_is_an_error() -> None:
    with pytest.raises(ToolgenError, match="the model ToolgenRoot was not generated"):
        rewrite_models(HEAD + "class A(SchemaModel):\n    x: int\n", "ToolgenRoot", (), frozenset(), "sdk")


@pytest.mark.parametrize(
    ("body", "unions", "found"),
    [
        ("import os\n", (), "import from 'os'|Import"),
        ("print('hi')\n", (), "Expr"),
        ("class A(SchemaModel):\n    x: int = open('f')\n", (), "call in class A"),
        ("class A(SchemaModel):\n    def f(self): ...\n", (), "FunctionDef in class A"),
        ("class A(SchemaModel):\n    x: int = (lambda: 1)()\n", (), "Lambda in class A|call in class A"),
        # a value that moves from a class into an alias is checked where it lands
        (
            "class Cat(SchemaModel):\n    kind: Literal['cat']\n\n\n"
            "class Pet(RootModel[Cat]):\n    root: Annotated[Cat, Field(discriminator=exec('1'))]\n",
            ("Pet",),
            "call in type alias Pet",
        ),
        # a class that becomes an alias has no model_rebuild()
        (
            "class Unit(RootModel[Literal['c']]):\n    root: Literal['c']\n\n\nUnit.model_rebuild()\n",
            (),
            "Expr",
        ),
    ],
)
def test_output_that_is_not_models_is_refused_before_anything_is_written(
    body: str, unions: tuple[str, ...], found: str
) -> None:
    with pytest.raises(
        UnsafeOutputError, match=rf"generated models.py line \d+: unexpected ({found}).*nothing was written"
    ):
        _rewrite(body, unions=unions)


def test_the_guard_alone_checks_a_module_as_written() -> None:
    check_models_module(HEAD + "class A(SchemaModel):\n    x: int\n\n\nA.model_rebuild()\n", "sdk")
    with pytest.raises(UnsafeOutputError, match="line 9: unexpected import from 'os'"):
        check_models_module(HEAD + "from os import system\n", "sdk")


def _long_name(index: int) -> str:
    return f"theQuiteLongNameOfAPropertyThatAGeneratedApiGave{index:04d}" + "X" * 350


def test_a_model_of_1200_long_property_names_builds_and_validates_by_alias(
    make_project: Callable[..., Project],
) -> None:
    project = make_project("wide")
    properties = {_long_name(i): {"type": "string", "description": f"Property {i}."} for i in range(1200)}
    tool = {"type": "object", "properties": properties, "required": [_long_name(0)]}
    project.write(
        "schemas/tools/wide.json",
        json.dumps({"tools": [{"name": "wide_tool", "description": "Many long names.", "inputSchema": tool}]}),
    )
    toolgen.build(project.root)
    sys.path.insert(0, str(project.root / "generated"))
    try:
        package = __import__("wide")
        model = package.TOOLS["wide_tool"].args_model
        value = model.model_validate({_long_name(0): "a", _long_name(1199): "b"})
        assert value.model_dump(by_alias=True, exclude_none=True) == {_long_name(0): "a", _long_name(1199): "b"}
        assert len(model.model_fields) == 1200
    finally:
        sys.path.remove(str(project.root / "generated"))
        for name in [m for m in sys.modules if m == "wide" or m.startswith("wide.")]:
            del sys.modules[name]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was_also_when_a_rewrite_fails(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        _rewrite("class A(SchemaModel):\n    x: int\n")
        assert gc.isenabled() is enabled
        with pytest.raises(UnsafeOutputError):
            _rewrite("import os\n")
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
