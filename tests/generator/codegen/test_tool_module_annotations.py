"""A per-tool model module writes its annotations as code where it can, so that pydantic has no strings to compile
and evaluate when the module is first imported: definitions come before their use, and `from __future__ import
annotations` stays only where a name must be read later (a recursive model, or a field named like a type the
class then reads). Every module still imports and validates in a fresh interpreter.
"""

from __future__ import annotations

import ast

import pytest
from support.projects import Project, run_sdk

import toolgen
from toolgen.codegen.targets.model_modules import FOLDER, _defined_before_use
from toolgen.codegen.targets.model_modules import parse_definitions as _parse

TOOLS = """\
tools:
  - name: book
    description: Nested objects the generator writes after the class that uses them.
    inputSchema:
      type: object
      properties:
        zone: {type: object, properties: {name: {type: string}}, required: [name]}
        stops: {type: array, items: {type: object, properties: {at: {type: string}}, required: [at]}}
      required: [zone]
  - name: tree
    description: A recursive model.
    inputSchema: {$ref: "#/$defs/Node", $defs: {Node: {type: object, title: Node, properties: {
      label: {type: string}, kids: {type: array, items: {$ref: "#/$defs/Node"}}}, required: [label]}}}
  - name: shadow
    description: Fields named like the types the class reads.
    inputSchema:
      type: object
      properties: {str: {type: string, default: x}, int: {type: integer, default: 1}, other: {type: string}}
      required: [other]
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project(tmp_path_factory.mktemp("annotations"), "ann_sdk")
    project.write("schemas/tools.yaml", TOOLS)
    toolgen.build(project.root)
    return project


def _module(built: Project, name: str) -> ast.Module:
    return ast.parse((built.package_dir / FOLDER / f"{name}.py").read_text(encoding="utf-8"))


def _future(module: ast.Module) -> bool:
    return any(isinstance(node, ast.ImportFrom) and node.module == "__future__" for node in module.body)


def _defined_before_used(module: ast.Module) -> bool:
    """Whether every class the module defines is read only below its definition."""
    classes = {node.name for node in module.body if isinstance(node, ast.ClassDef)}
    seen: set[str] = set()
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            read = {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}
            if (read & classes) - seen:
                return False
            seen.add(node.name)
    return True


def test_a_module_without_forward_references_has_real_annotations_in_the_order_of_use(built: Project) -> None:
    book = _module(built, "book")
    assert not _future(book)
    assert _defined_before_used(book)
    assert [node.name for node in book.body if isinstance(node, ast.ClassDef)][-1] == "BookArgs"


def test_a_recursive_model_keeps_string_annotations_and_fields_named_like_types_do_not_need_them(
    built: Project,
) -> None:
    assert _future(_module(built, "tree"))
    assert not _future(_module(built, "shadow")), "the generator renames them (`str_`), so no annotation reads one"


def test_a_class_that_binds_a_name_its_annotations_read_keeps_string_annotations() -> None:
    source = (
        "from typing import Annotated\n\n"
        "class Stamp(SchemaModel):\n    date: date | None = None\n    when: date\n\n\n"
        "class Plain(SchemaModel):\n    when: str\n"
    )
    _, definitions = _parse(source)
    assert [d.lazy for d in definitions] == [True, False]
    assert _defined_before_use(definitions) is None
    assert [d.name for d in _defined_before_use(definitions[1:]) or []] == ["Plain"]


def test_every_tool_module_imports_and_validates_in_a_fresh_interpreter(built: Project) -> None:
    seen = run_sdk(
        built.root,
        """
        import json
        import ann_sdk
        book = ann_sdk.validate_tool_arguments("book", {"zone": {"name": "a"}, "stops": [{"at": "b"}]})
        tree = ann_sdk.validate_tool_arguments("tree", {"label": "r", "kids": [{"label": "k"}]}).root
        shadow = ann_sdk.validate_tool_arguments("shadow", {"other": "o"})
        refused = []
        for name, value in (("book", {"zone": {}}), ("shadow", {"other": 1})):
            try:
                ann_sdk.validate_tool_arguments(name, value)
            except ann_sdk.ToolgenValidationError:
                refused.append(name)
        print(json.dumps([book.zone.name, book.stops[0].at, tree.kids[0].label, shadow.other, refused]))
        """,
    )
    assert seen == ["a", "b", "k", "o", ["book", "shadow"]]
