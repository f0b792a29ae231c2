"""Models target: every model of the project in one datamodel-code-generator call."""

from __future__ import annotations

import ast
import io
import warnings
from collections.abc import Sequence
from typing import Any

import pydantic

from toolgen.errors import ExternalToolError, ToolgenError
from toolgen.ir import ROOT_MODEL, Project, Union, thaw
from toolgen.modelnames import NOT_NULL_KEY
from toolgen.names import NameRegistry, snake
from toolgen.schemawalk import walk
from toolgen.targets.guard import check_models_module

# Attribute names a pydantic model owns; a field may not take them.
_BASE_MODEL_ATTRIBUTES = frozenset(name for name in dir(pydantic.BaseModel) if not name.startswith("__")) | {
    "model_config"
}


def _source_lines(source: str) -> list[str]:
    """Lines as Python's tokenizer counts them (\n, \r\n and \r only), so AST line numbers index them."""
    return io.StringIO(source, newline="").readlines()


def _defer_root_models(source: str) -> str:
    """Give every RootModel the bases' defer_build, so no validator is built while the package imports."""
    tree = ast.parse(source)
    lines = _source_lines(source)
    inserts: list[int] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and _is_root_model(node):
            first = node.body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            at = first.end_lineno if docstring and first.end_lineno else first.lineno - 1
            inserts.append(at)
    for at in sorted(inserts, reverse=True):
        lines.insert(at, "    model_config = ConfigDict(defer_build=True)\n")
    return "".join(lines)


def _replace_class(source: str, name: str, replacement: str = "") -> str:
    """`source` with the class `name` replaced by `replacement` (removed, by default)."""
    tree = ast.parse(source)
    lines = _source_lines(source)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            start = node.lineno - 1 - len(node.decorator_list)
            assert node.end_lineno is not None
            lines[start : node.end_lineno] = [replacement] if replacement else []
            return "".join(lines)
    raise ToolgenError(f"the model {name} was not generated")


def _unions_as_aliases(source: str, unions: Sequence[Union]) -> str:
    """Each discriminated union as a type alias rather than a RootModel class.

    A field then holds the member model itself (`message.content[0].text`, no `.root`), and validation
    builds one object less per value. The alias takes the class's place: members are defined above it.
    """
    for union in unions:
        source = _replace_class(source, union.name, f"{union.name}: TypeAlias = {_root_type(source, union.name)}\n")
    return source


def _literal_roots(source: str, keep: frozenset[str]) -> dict[str, tuple[str, str | None]]:
    """Each RootModel (not named in `keep`) whose root is a Literal, optionally `| None`, and whose Field says
    no more than a title and a description: its name -> (the Literal's source, the description)."""
    found: dict[str, tuple[str, str | None]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef) or node.name in keep or not _is_root_model(node):
            continue
        root = next(
            (
                i
                for i in node.body
                if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name) and i.target.id == "root"
            ),
            None,
        )
        if root is None:
            continue
        annotation, field = root.annotation, None
        if (
            isinstance(annotation, ast.Subscript)
            and isinstance(annotation.value, ast.Name)
            and annotation.value.id == "Annotated"
        ):
            if not (isinstance(annotation.slice, ast.Tuple) and len(annotation.slice.elts) == 2):
                continue
            annotation, field = annotation.slice.elts
            if not (
                isinstance(field, ast.Call)
                and not field.args
                and {k.arg for k in field.keywords} <= {"title", "description"}
            ):
                continue
        if not _is_literal_type(annotation):
            continue
        described = [k.value for k in field.keywords if k.arg == "description"] if isinstance(field, ast.Call) else []
        description = described[0].value if described and isinstance(described[0], ast.Constant) else None
        text = ast.get_source_segment(source, annotation)
        assert text is not None
        found[node.name] = (text, description if isinstance(description, str) else None)
    return found


def _is_root_model(node: ast.ClassDef) -> bool:
    return any(
        isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name) and b.value.id == "RootModel" for b in node.bases
    )


def _is_literal_type(node: ast.expr) -> bool:
    """`Literal[...]` of strings, integers and booleans, or that `| None`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _is_literal_type(node.left) and isinstance(node.right, ast.Constant) and node.right.value is None
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal"):
        return False
    values = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return all(
        isinstance(v.operand if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub) else v, ast.Constant)
        and isinstance(ast.literal_eval(v), (str, int))
        for v in values
    )


def _enums_as_aliases(source: str, keep: frozenset[str]) -> str:
    """Each named enum (or const) as a Literal type alias rather than a RootModel class.

    `finish.reason == "length"` then holds, and type checkers see the values (`FinishReason` is
    `Literal["stop", ...]`, no `.root`). The description follows the alias as its docstring, a string
    literal written by repr(). A default of the enum's own needs no place: the fields using it carry it.
    """
    for name, (literal, description) in _literal_roots(source, keep).items():
        docstring = f"{description!r}\n" if description else ""
        source = _replace_class(source, name, f"{name}: TypeAlias = {literal}\n{docstring}")
    return source


def _without_needless_validate_default(source: str) -> str:
    """`validate_default=True` taken off fields whose type names no model class.

    The generator marks a field so when its default is data for a model (`{"k": 1}` for `Opts`); a default
    of a Literal alias or of plain types is the value itself, and unmarked it stays a plain default that mypy
    checks against the annotation (`unit: Unit = "celsius"`).
    """
    tree = ast.parse(source)
    # Model classes, and the aliases that hold one (a union's members); an alias comes after what it names.
    classes: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _holds_class(node.value, classes):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            classes.update(t.id for t in targets if isinstance(t, ast.Name))
    lines = _source_lines(source)
    edits: list[tuple[ast.expr, str]] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not isinstance(item, ast.AnnAssign) or not _marks_validate_default(item.annotation):
                continue
            annotation = item.annotation
            if not (isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple)):
                continue
            kind, *metadata = annotation.slice.elts
            if _holds_class(kind, classes) or len(metadata) != 1 or not isinstance(metadata[0], ast.Call):
                continue
            field = metadata[0]
            kept = [
                f"{k.arg}={ast.get_source_segment(source, k.value)}"
                for k in field.keywords
                if k.arg != "validate_default"
            ]
            text = ast.get_source_segment(source, kind)
            edits.append((annotation, f"Annotated[{text}, Field({', '.join(kept)})]" if kept else f"{text}"))
    for annotation, text in sorted(edits, key=lambda edit: (edit[0].lineno, edit[0].col_offset), reverse=True):
        assert annotation.end_lineno is not None and annotation.end_col_offset is not None
        first, last = annotation.lineno - 1, annotation.end_lineno - 1
        begin = _char_offset(lines[first], annotation.col_offset)
        joined = "".join(lines[first : last + 1])
        end = len("".join(lines[first:last])) + _char_offset(lines[last], annotation.end_col_offset)
        lines[first : last + 1] = [joined[:begin] + text + joined[end:]]
    return "".join(lines)


def _holds_class(node: ast.expr | None, classes: set[str]) -> bool:
    return node is not None and any(isinstance(sub, ast.Name) and sub.id in classes for sub in ast.walk(node))


def _with_type_alias_import(source: str) -> str:
    """The import the aliases need; the formatter's import sorting merges it with the generator's own."""
    tree = ast.parse(source)
    if not any(
        isinstance(n, ast.AnnAssign) and isinstance(n.annotation, ast.Name) and n.annotation.id == "TypeAlias"
        for n in tree.body
    ):
        return source
    future = "from __future__ import annotations\n"
    return source.replace(future, future + "\nfrom typing import TypeAlias\n", 1)


def _root_type(source: str, name: str) -> str:
    """The type of the RootModel `name`'s `root` field as an alias can carry it: the members, and of the Field
    only what describes the union (the discriminator under its Python field name, `pet_type` for `pet-type`,
    title, description); field-only arguments such as validate_default would make pydantic warn."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id == "root":
                    annotated = item.annotation
                    if isinstance(annotated, ast.Subscript) and isinstance(annotated.slice, ast.Tuple):
                        members, field = annotated.slice.elts[0], annotated.slice.elts[1]
                        if isinstance(field, ast.Call):
                            kept = [
                                f"{k.arg}={ast.get_source_segment(source, k.value)}"
                                for k in field.keywords
                                if k.arg in ("discriminator", "title", "description")
                            ]
                            return f"Annotated[{ast.get_source_segment(source, members)}, Field({', '.join(kept)})]"
    raise ToolgenError(f"the union {name} was not generated as a discriminated root model")


def _mutable_defaults_as_fields(source: str) -> str:
    """Defaults as `Field(default=...)` where a bare value would be wrong for a linter or for mypy.

    `tags: list[str] = []` becomes `Field(default=[])`: the same model for pydantic (it copies defaults), but no
    mutable class attribute (RUF012). A field the generator marked `validate_default=True` (its default is data
    for a model or a root model, `{"a": 1}` for `Opts`) gets `Field(default=..., validate_default=True)`, which
    pydantic's signature types as Any, so mypy does not compare the data with the model type.
    """
    lines = _source_lines(source)
    edits: list[tuple[int, int, int, int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            value = item.value if isinstance(item, ast.AnnAssign) else None
            if value is None or not value.end_lineno or value.end_col_offset is None:
                continue
            assert isinstance(item, ast.AnnAssign)
            validated = _marks_validate_default(item.annotation)
            if isinstance(value, (ast.List, ast.Dict, ast.Set)) or (validated and _is_literal(value)):
                extra = ", validate_default=True" if validated else ""
                edits.append((value.lineno - 1, value.col_offset, value.end_lineno - 1, value.end_col_offset, extra))
    # Bottom up, so that earlier positions stay where the tree says they are.
    for first, start, last, end, extra in sorted(edits, reverse=True):
        text = "".join(lines[first : last + 1])
        offset = len("".join(lines[first:last])) + _char_offset(lines[last], end)
        begin = _char_offset(lines[first], start)
        replaced = f"{text[:begin]}Field(default={text[begin:offset]}{extra}){text[offset:]}"
        lines[first : last + 1] = [replaced]
    return "".join(lines)


def _marks_validate_default(annotation: ast.expr) -> bool:
    return any(
        isinstance(node, ast.keyword)
        and node.arg == "validate_default"
        and isinstance(node.value, ast.Constant)
        and node.value.value is True
        for node in ast.walk(annotation)
    )


def _is_literal(value: ast.expr) -> bool:
    """A default written as data (a constant, possibly negative), not a call or a name."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    return isinstance(value, ast.Constant) and value.value is not None


def _char_offset(line: str, utf8_offset: int) -> int:
    """ast's column offsets count UTF-8 bytes; strings index characters."""
    return len(line.encode("utf-8")[:utf8_offset].decode("utf-8"))


def _aliases(schema: Any) -> dict[str, str]:
    """ASCII attribute names for non-ASCII property names; Python would NFKC-fold them (`ﬁle` is `file`).

    The map applies to every model, so each target is unique across the schema and never one that an
    ASCII property name would become.
    """
    names: set[str] = set()
    for sub, _ in walk(schema):
        properties = sub.get("properties") if isinstance(sub, dict) else None
        if isinstance(properties, dict):
            names.update(properties)
    taken = {snake(name) for name in names if name.isascii()} | _BASE_MODEL_ATTRIBUTES
    registry = NameRegistry(frozenset(taken))
    return {name: registry.claim(snake(name, fallback="field")) for name in sorted(n for n in names if not n.isascii())}


def render_models(project: Project, header: str) -> str:
    # Imported here: datamodel-code-generator costs ~0.5 s to import and only builds need it.
    from datamodel_code_generator import InputFileType, PythonVersion, generate
    from datamodel_code_generator.enums import DataModelType
    from datamodel_code_generator.parser import LiteralType

    schema = thaw(project.models_schema)
    runtime = f"{project.package}._runtime"
    base_map: dict[str, str | list[str]] = {
        sub["title"]: f"{runtime}.NullRefusingModel"
        for sub, _ in walk(schema)
        if isinstance(sub, dict) and sub.get(NOT_NULL_KEY) and isinstance(sub.get("title"), str)
    }
    base_map.update({name: f"{runtime}.CanonicalModel" for name in project.canonical_models})
    base_map["ToolCallFunction"] = f"{runtime}.FunctionCallBase"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            output = generate(
                schema,
                input_file_type=InputFileType.JsonSchema,
                output_model_type=DataModelType.PydanticV2BaseModel,
                target_python_version=PythonVersion.PY_310,
                base_class=f"{runtime}.SchemaModel",
                base_class_map=base_map,
                snake_case_field=True,
                use_title_as_name=True,
                use_annotated=True,
                field_constraints=True,
                enum_field_as_literal=LiteralType.All,
                use_schema_description=True,
                # Field(description=...) is an escaped literal that reaches model_json_schema(); a
                # docstring would carry raw control characters and reach nothing at run time.
                use_field_description=False,
                aliases=_aliases(schema),
                model_extra_keys={NOT_NULL_KEY},
                keep_model_order=True,
                disable_timestamp=True,
                custom_file_header=header,
                formatters=[],
                capitalise_enum_members=False,
                # A field with a default is not `X | None` unless its schema allows null: absent, it takes the
                # default; null it refuses by its type (`unit: Literal["celsius", "fahrenheit"] = "celsius"`).
                strict_nullable=True,
            )
    except Exception as error:  # noqa: BLE001 - any failure inside the generator is reported as its own
        raise ExternalToolError(f"datamodel-code-generator failed: {error}") from error
    if not isinstance(output, str):
        raise ExternalToolError("datamodel-code-generator returned no single module")
    # A tool's own arguments or result stay a model class: the registry validates and checks instances of it.
    tool_models = {t.args_model for t in project.tools} | {t.result_model for t in project.tools}
    aliased = [union for union in project.unions if union.name not in tool_models]
    source = _unions_as_aliases(_replace_class(output, ROOT_MODEL), aliased)
    source = _enums_as_aliases(source, frozenset(m for m in tool_models if m))
    source = _defer_root_models(_with_type_alias_import(_without_needless_validate_default(source)))
    source = _mutable_defaults_as_fields(source)
    check_models_module(source, project.package)
    return source
