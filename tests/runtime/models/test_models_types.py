"""Generated model types: unions, defaults, null, enums and `false` schemas, in the source and at validation."""

from __future__ import annotations

import ast
import importlib
import json
import sys
import typing
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from support.projects import REPO_ROOT, Project

import toolgen


def models_source(package_dir: Path) -> str:
    """models.py and the modules of each tool's models after it, as one text: every model the package defines."""
    modules = [package_dir / "models.py", *sorted((package_dir / "_tool_models").glob("*.py"))]
    return "\n".join(path.read_text(encoding="utf-8") for path in modules)


def test_union_fields_hold_the_member_models_themselves() -> None:
    sys.path.insert(0, str(REPO_ROOT / "generated"))
    try:
        sdk = importlib.import_module("toolgen_sdk")
        message = sdk.validate_message({"role": "user", "content": [{"type": "text", "text": "hi"}]})
        assert isinstance(message.content[0], sdk.TextPart) and message.content[0].text == "hi"
        conversation = sdk.validate_messages([{"role": "system", "content": "be brief"}])
        assert isinstance(conversation[0], sdk.SystemMessage)
        with pytest.raises(sdk.ToolgenValidationError) as caught:
            sdk.validate_message({"role": "user", "content": [{"type": "text"}]})
        assert [(p.pointer, p.message) for p in caught.value.problems] == [
            ("/content/0/text", "expected a value (it is required), got nothing")
        ]
    finally:
        sys.path.remove(str(REPO_ROOT / "generated"))


def test_a_union_told_apart_by_a_property_that_is_not_a_python_name(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_hyphen_union")
    project.write(
        "schemas/tools.yaml",
        """\
        tools:
          - name: pick
            inputSchema:
              type: object
              properties:
                pet: {$ref: "#/$defs/Pet"}
              required: [pet]
              $defs:
                Pet: {oneOf: [{$ref: "#/$defs/Cat"}, {$ref: "#/$defs/Dog"}]}
                Cat:
                  type: object
                  properties: {pet-type: {const: cat}, lives: {type: integer}}
                  required: [pet-type]
                Dog:
                  type: object
                  properties: {pet-type: {const: dog}, bark: {type: boolean}}
                  required: [pet-type]
        """,
    )
    toolgen.build(project.root)
    sdk = load_package(project)
    args = sdk.validate_tool_arguments("pick", {"pet": {"pet-type": "dog", "bark": True}})
    assert type(args.pet).__name__ == "Dog" and args.pet.bark is True
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("pick", {"pet": {"pet-type": "cow"}})
    assert [p.pointer for p in caught.value.problems] == ["/pet/pet-type"]


def test_union_aliases_carry_no_field_only_arguments_and_tags_read_as_json(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_union_extras")
    project.write(
        "schemas/tools.yaml",
        """\
        tools:
          - name: pick
            inputSchema:
              type: object
              properties:
                z: {$ref: "#/$defs/Zed"}
              $defs:
                Zed: {default: {a|b: one}, deprecated: true, oneOf: [{$ref: "#/$defs/Z1"}, {$ref: "#/$defs/Z2"}]}
                Z1: {type: object, properties: {a|b: {const: one}}, required: [a|b]}
                Z2: {type: object, properties: {a|b: {const: two}}, required: [a|b]}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.root / "generated" / "models_t_union_extras")
    alias = source[source.index("Zed: TypeAlias") :].split("\n\n")[0]
    assert "validate_default" not in alias and "deprecated" not in alias and 'discriminator="a_b"' in alias
    sdk = load_package(project)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sdk.validate_tool_arguments("pick", {"z": {"a|b": "two"}}).z is not None
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("pick", {"z": {"a|b": None}})
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/z/a|b", "expected one of 'one', 'two', got null")
    ]


def test_false_keeps_the_json_schema_sentences_that_name_the_key() -> None:
    from toolgen.runtime.models.check import schema_problems, schema_validator

    def problems(schema: dict[str, object], data: object) -> list[tuple[str, str]]:
        return [(p.pointer, p.message) for p in schema_problems(schema_validator(schema), data)]

    assert problems({"propertyNames": False}, {"a": 1}) == [("", "False schema does not allow 'a'")]
    [(pointer, message)] = problems({"unevaluatedProperties": False}, {"z": 1})
    assert pointer == "" and "'z' was unexpected" in message
    assert problems({"items": False}, [1]) == [("/0", "expected no value here, got 1")]


def test_a_field_with_a_default_is_typed_without_none_unless_its_schema_allows_null(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_defaults")
    project.write(
        "schemas/tools.yaml",
        """\
        $defs:
          Color: {enum: [red, green]}
          Box: {type: object, properties: {side: {type: integer}}}
        tools:
          - name: d
            inputSchema:
              type: object
              properties:
                unit: {type: string, enum: [celsius, fahrenheit], default: celsius}
                color: {$ref: "tools.yaml#/$defs/Color", default: green}
                text: {type: string, default: hi}
                count: {type: integer, minimum: 0, default: 3}
                ratio: {type: number, default: 0.5}
                flag: {type: boolean, default: false}
                tags: {type: array, items: {type: string}, default: [a]}
                opts: {type: object, default: {}}
                box: {$ref: "tools.yaml#/$defs/Box", default: {side: 2}}
                maybe: {type: [string, "null"], default: x}
                none: {$ref: "tools.yaml#/$defs/Box", default: null}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.package_dir)
    for line in (
        'unit: Literal["celsius", "fahrenheit"] = "celsius"',
        'color: Color = "green"',
        'text: str = "hi"',
        "count: Annotated[int, Field(ge=0)] = 3",
        "ratio: float = 0.5",
        "flag: bool = False",
        'tags: FrozenList[str] = Field(default=["a"])',
        "opts: FrozenMap[str, FrozenAny] = Field(default={})",
        'maybe: str | None = "x"',
        "none: Box | None = None",
    ):
        assert f"\n    {line}\n" in source, line
    sdk = load_package(project)
    assert sdk.TOOLS["d"].check_input is False  # the models alone decide
    args = sdk.validate_tool_arguments("d", {})
    assert (args.unit, args.color, args.text, args.count, args.ratio, args.flag) == (
        "celsius",
        "green",
        "hi",
        3,
        0.5,
        False,
    )
    assert (args.tags, args.opts, args.box.side, args.maybe, args.none) == (("a",), {}, 2, "x", None)
    assert sdk.validate_tool_arguments("d", {"maybe": None}).maybe is None
    nulls = {key: None for key in ("unit", "color", "text", "count", "ratio", "flag", "tags", "opts", "box", "none")}
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("d", nulls)
    assert sorted(p.pointer for p in caught.value.problems) == sorted(f"/{key}" for key in nulls)
    assert all(p.message.endswith(", got null") for p in caught.value.problems)
    # The canonical tool definition's flags have defaults too.
    definition = sdk.validate_tool_definition({"name": "t", "inputSchema": {}})
    assert definition.return_direct is False and definition.requires_approval is False


def test_null_is_refused_where_a_reference_an_enum_or_every_branch_refuses_it(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_null_refs")
    project.write(
        "schemas/tools.yaml",
        """\
        $defs:
          Color: {enum: [red, green]}
          Box: {type: object, properties: {side: {type: integer}}}
          Alias: {$ref: "tools.yaml#/$defs/Box"}
          MaybeBox: {type: [object, "null"], properties: {side: {type: integer}}}
        tools:
          - name: n
            inputSchema:
              type: object
              properties:
                color: {$ref: "tools.yaml#/$defs/Color"}
                box: {$ref: "tools.yaml#/$defs/Box"}
                alias: {$ref: "tools.yaml#/$defs/Alias"}
                pick: {enum: [a, b]}
                either: {anyOf: [{type: string}, {type: integer}]}
                maybe_box: {$ref: "tools.yaml#/$defs/MaybeBox"}
                either_or_null: {anyOf: [{type: string}, {type: "null"}]}
                anything: {}
          - name: legacy
            inputSchema: {type: object, properties: {legacy: {type: string, nullable: true}}}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.package_dir)
    # `nullable` is OpenAPI's: JSON Schema reads it as nothing, and so do the models.
    assert "\n    legacy: str | None = None\n" in source
    sdk = load_package(project)
    assert sdk.TOOLS["n"].check_input is False  # the models alone decide
    refused = ("color", "box", "alias", "pick", "either")
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("n", dict.fromkeys(refused))
    assert sorted(p.pointer for p in caught.value.problems) == sorted(f"/{key}" for key in refused)
    assert all(
        p.message == "expected a value other than null (leave the field out instead), got null"
        for p in caught.value.problems
    )
    allowed = sdk.validate_tool_arguments("n", dict.fromkeys(("maybe_box", "either_or_null", "anything")))
    assert (allowed.maybe_box, allowed.either_or_null, allowed.anything) == (None, None, None)
    assert sdk.validate_tool_arguments("n", {"color": "red", "box": {"side": 1}}).color == "red"
    with pytest.raises(sdk.ToolgenValidationError):
        sdk.validate_tool_arguments("legacy", {"legacy": None})


def test_named_enums_are_literal_aliases_and_a_tool_result_stays_a_model(
    make_project: Callable[..., Project], load_package: Callable[[Project], ModuleType]
) -> None:
    project = make_project("models_t_enum_alias")
    nasty = "Say \"hi\" \\\\ or '''bye''' \"\"\" done"
    project.write(
        "schemas/tools.yaml",
        f"""\
        $defs:
          Color: {{enum: [red, green], description: {json.dumps(nasty)}}}
          Level: {{enum: [1, 2, 3]}}
          Kind: {{const: only}}
          Colors: {{type: array, items: {{$ref: "tools.yaml#/$defs/Color"}}}}
        tools:
          - name: paint
            inputSchema:
              type: object
              properties:
                color: {{$ref: "tools.yaml#/$defs/Color"}}
                level: {{$ref: "tools.yaml#/$defs/Level", default: 2}}
                kind: {{$ref: "tools.yaml#/$defs/Kind"}}
                more: {{$ref: "tools.yaml#/$defs/Colors", default: [red]}}
              required: [color]
            outputSchema: {{$ref: "tools.yaml#/$defs/Color"}}
        """,
    )
    toolgen.build(project.root)
    source = models_source(project.package_dir)
    tree = ast.parse(source)
    aliases = {
        node.target.id: (ast.unparse(node.value), tree.body[index + 1])
        for index, node in enumerate(tree.body)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    assert aliases["Color"][0] == "Literal['red', 'green']"
    assert aliases["Level"][0] == "Literal[1, 2, 3]" and aliases["Kind"][0] == "Literal['only']"
    docstring = aliases["Color"][1]
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    assert docstring.value.value == nasty
    assert "class Colors(DeferredRootModel[FrozenList[Color]])" in source
    assert "class PaintResult(DeferredRootModel[Color])" in source
    assert "    level: Level = 2\n" in source
    sdk = load_package(project)
    models = importlib.import_module("models_t_enum_alias.models")
    assert typing.get_args(models.Color) == ("red", "green") and not isinstance(models.Color, type)
    args = sdk.validate_tool_arguments("paint", {"color": "green", "kind": "only"})
    assert (args.color, args.level, args.kind, args.more.root) == ("green", 2, "only", ("red",))
    assert args.color == "green"
    with pytest.raises(sdk.ToolgenValidationError) as caught:
        sdk.validate_tool_arguments("paint", {"color": "blue", "level": 5})
    assert [p.pointer for p in caught.value.problems] == ["/color", "/level"]
    result = sdk.validate_tool_result("paint", "red")
    assert type(result).__name__ == "PaintResult" and result.root == "red"
