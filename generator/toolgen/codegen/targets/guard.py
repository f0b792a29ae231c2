"""A last gate before anything is written: the models module holds only imports, model classes and rebuilds.

Schema text reaches the models module only through another tool (datamodel-code-generator); this check makes
sure none of it became a statement, whatever that tool did with it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from toolgen.core.errors import UnsafeOutputError

_ALLOWED_MODULES = frozenset(
    {"__future__", "builtins", "typing", "typing_extensions", "pydantic", "enum", "collections.abc"}
)


def _fail(node: ast.AST, what: str) -> UnsafeOutputError:
    return UnsafeOutputError(
        f"generated models.py line {getattr(node, 'lineno', '?')}: unexpected {what}; nothing was written"
    )


_CALLABLE = frozenset({"Field", "ConfigDict", "StringConstraints"})
_EXPRESSIONS = (
    ast.Name,
    ast.Constant,
    ast.Subscript,
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.BinOp,
    ast.BitOr,
    ast.UnaryOp,
    ast.USub,
    ast.Load,
    ast.Attribute,
    ast.keyword,
    ast.Call,
    ast.Slice,
)


def _check_expression(node: ast.AST, where: str) -> None:
    """Annotations, defaults and model_config: literals, type names and calls to Field, ConfigDict, StringConstraints only."""
    for sub in ast.walk(node):
        if not isinstance(sub, _EXPRESSIONS):
            raise _fail(sub, f"{type(sub).__name__} in {where}")
        if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Name) and sub.func.id in _CALLABLE):
            raise _fail(sub, f"call in {where}")


def _check_class(node: ast.ClassDef) -> None:
    if node.decorator_list:
        raise _fail(node, "class decorator")
    for base in node.bases:
        _check_expression(base, f"bases of {node.name}")
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            _check_expression(item.annotation, f"class {node.name}")
            if item.value is not None:
                _check_expression(item.value, f"class {node.name}")
            continue
        # model_config, and members of the Enum classes datamodel-code-generator emits for some enums
        if isinstance(item, ast.Assign) and all(isinstance(t, ast.Name) for t in item.targets):
            _check_expression(item.value, f"class {node.name}")
            continue
        if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
            continue
        if isinstance(item, ast.Pass):
            continue
        raise _fail(item, f"{type(item).__name__} in class {node.name}")


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _is_rebuild(node: ast.stmt, classes: set[str]) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "model_rebuild"
        and isinstance(node.value.func.value, ast.Name)
        and node.value.func.value.id in classes
        and not node.value.args
    )


def _is_type_alias(node: ast.stmt) -> bool:
    """`Name = TypeAliasType("Name", <type>)`, which datamodel-code-generator writes for some map values."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return False
    call = node.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "TypeAliasType"):
        return False
    if call.keywords or len(call.args) != 2 or not isinstance(call.args[0], ast.Constant):
        return False
    _check_expression(call.args[1], f"type alias {node.targets[0].id}")
    return call.args[0].value == node.targets[0].id


def _is_alias(node: ast.stmt) -> bool:
    """`Name: TypeAlias = <type>`, which toolgen writes for each union (`Annotated[A | B, Field(discriminator=...)]`)
    and each named enum (`Literal["a", "b"]`)."""
    if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None):
        return False
    if not (isinstance(node.annotation, ast.Name) and node.annotation.id == "TypeAlias"):
        return False
    _check_expression(node.value, f"type alias {node.target.id}")
    return True


@dataclass(frozen=True)
class AliasOf:
    """A class the rewrite turns into `name: TypeAlias = <value>`, where the value is made of `parts` (expressions
    taken from the class) and toolgen's own fixed text."""

    name: str
    parts: tuple[ast.expr, ...]


def check_models(body: Iterable[ast.stmt | AliasOf], package: str) -> None:
    """Check the statements of the models module as written, top to bottom (classes the rewrite turns into
    aliases stand as AliasOf, so the one parsed tree is checked without parsing the rewritten text again; line
    numbers in errors are those of the parsed text)."""
    classes: set[str] = set()
    for node in body:
        if isinstance(node, AliasOf):
            for part in node.parts:
                _check_expression(part, f"type alias {node.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module not in _ALLOWED_MODULES and module != f"{package}._runtime":
                raise _fail(node, f"import from {module!r}")
        elif isinstance(node, ast.ClassDef):
            _check_class(node)
            classes.add(node.name)
        elif not (_is_docstring(node) or _is_rebuild(node, classes) or _is_type_alias(node) or _is_alias(node)):
            raise _fail(node, type(node).__name__)


def check_models_module(source: str, package: str) -> None:
    check_models(ast.parse(source).body, package)
