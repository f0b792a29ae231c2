"""toolgen's rewrites of datamodel-code-generator's models module, in one pass over one parsed tree.

What changes, and why:

- the root class that only holds the project's `$defs` together is removed;
- each discriminated union not owned by a tool becomes a type alias (`Message: TypeAlias = Annotated[A | B,
  Field(discriminator=...)]`): a field then holds the member model itself (no `.root`), and validation builds
  one object less per value;
- each named enum or const (a RootModel of a Literal) becomes a Literal alias, its description the alias's
  docstring: `finish.reason == "length"` holds and type checkers see the values;
- `validate_default=True` is taken off fields whose type names no model class: their default is the value
  itself, and mypy checks it against the annotation;
- `from typing import TypeAlias` is added when an alias needs it;
- every RootModel left gets the bases' `defer_build`, so no validator is built while the package imports;
- mutable defaults, and data defaults of fields that validate their default, become `Field(default=...)`
  (the runtime freezes a list or dict default: models/base.py);
- in every type the module writes, `list`, `dict` and `Any` become the runtime's FrozenList, FrozenMap and
  FrozenAny (runtime/models/frozen.py): they validate as before, and a model holds tuples and read-only dicts;
  the length bounds of a list or dict move from its Field to the runtime's FrozenSize, which puts them on the
  list or dict it validates as (pydantic would check Field's on the tuple, with errors of its own).

The module is parsed once. Every rewrite is an edit of the original text (a span and its replacement), found
from that one tree and applied in a single join; a table of line starts turns AST positions into string
offsets, so no rewrite re-parses or re-splits the module. The guard checks the same tree, reading it as the
rewritten module will stand, and the split into per-tool modules (model_modules) reads it too: the text comes
with its top-level statements as rewritten, each cut from the one text with the edits inside it.
"""

from __future__ import annotations

import ast
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from toolgen.codegen.collector import collector_paused
from toolgen.codegen.targets.guard import AliasOf, check_models
from toolgen.core.errors import ToolgenError

_FUTURE = "from __future__ import annotations\n"
_DEFER_BUILD = "    model_config = ConfigDict(defer_build=True)\n"
ROOT_BASE = "RootModel"
DEFERRED_ROOT_BASE = "DeferredRootModel"
# The names of a type that become the runtime's frozen ones.
FROZEN_TYPES = MappingProxyType({"list": "FrozenList", "dict": "FrozenMap", "Any": "FrozenAny"})
# The runtime's names the rewrites write into types, imported where they are used.
_FROZEN_NAMES = (*sorted(FROZEN_TYPES.values()), "FrozenSize")
_SIZES = ("min_length", "max_length")


class _Positions:
    """AST positions (line, UTF-8 byte column) as offsets into the text, from one split into lines."""

    def __init__(self, source: str) -> None:
        # Lines as Python's tokenizer counts them (\n, \r\n and \r only), so AST line numbers index them.
        self._lines = io.StringIO(source, newline="").readlines()
        starts = [0]
        for line in self._lines:
            starts.append(starts[-1] + len(line))
        self._starts = starts
        self._ascii = [line.isascii() for line in self._lines]

    def line_start(self, lineno: int) -> int:
        """Offset of the first character of line `lineno` (1-based; one past the last line is the text's end)."""
        return self._starts[lineno - 1]

    def offset(self, lineno: int, col: int) -> int:
        index = lineno - 1
        if self._ascii[index]:
            return self._starts[index] + col
        # ast's columns count UTF-8 bytes; strings index characters.
        return self._starts[index] + len(self._lines[index].encode("utf-8")[:col].decode("utf-8"))

    def span(self, node: ast.expr) -> tuple[int, int]:
        assert node.end_lineno is not None and node.end_col_offset is not None
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


class _Module:
    """The parsed module and its text; hands out source segments and whole-statement spans."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self.positions = _Positions(source)
        # generate() imports `list`, `dict` or `Any` under another name (`from builtins import list as
        # list_aliased`) when a field of the module takes the name: the frozen containers replace those too.
        self.frozen = dict(FROZEN_TYPES)
        for statement in self.tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.module in ("builtins", "typing"):
                for alias in statement.names:
                    if alias.asname is not None and alias.name in FROZEN_TYPES:
                        self.frozen[alias.asname] = FROZEN_TYPES[alias.name]

    def segment(self, node: ast.expr) -> str:
        start, end = self.positions.span(node)
        return self.source[start:end]

    def mentions(self, node: ast.stmt, word: str) -> bool:
        """Whether the lines of `node` hold `word` at all: a search of the text, cheaper than walking the node."""
        assert node.end_lineno is not None
        start, end = self.positions.line_start(node.lineno), self.positions.line_start(node.end_lineno + 1)
        return self.source.find(word, start, end) >= 0

    def frozen_segment(self, node: ast.expr) -> str:
        """The text of the type `node` with its containers frozen (_type_edits)."""
        start, end = self.positions.span(node)
        return _apply(self.source, _type_edits(self, node), start, end)

    def replace_node(self, node: ast.expr, text: str) -> _Edit:
        return _Edit(*self.positions.span(node), text)

    def replace_lines(self, node: ast.ClassDef, text: str) -> _Edit:
        """The class's whole lines, decorators included, replaced by `text`."""
        assert node.end_lineno is not None
        start = self.positions.line_start(node.lineno - len(node.decorator_list))
        return _Edit(start, self.positions.line_start(node.end_lineno + 1), text)


def _apply(source: str, edits: Iterable[_Edit], start: int = 0, end: int | None = None) -> str:
    """`source[start:end]` with `edits` (which lie inside it) made."""
    pieces: list[str] = []
    at = start
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < at:
            raise ToolgenError(f"two rewrites of the models module overlap at offset {edit.start}")
        pieces += [source[at : edit.start], edit.text]
        at = edit.end
    pieces.append(source[at:end])
    return "".join(pieces)


@dataclass(frozen=True)
class Statement:
    """A top-level statement of the rewritten module after its imports: its whole lines as rewritten (a RootModel
    base already the runtime's DeferredRootModel), and the parsed statement it was.

    `mentions` are the expressions its rewritten text holds, `strings` the strings it adds (an enum alias's
    docstring); of toolgen's own names that the rewrites write (TypeAlias, Annotated, Field, ConfigDict,
    DeferredRootModel) none is listed, since no definition can take one: it would hide the import.
    """

    text: str
    node: ast.stmt
    mentions: tuple[ast.AST, ...]
    strings: tuple[str, ...] = ()
    is_class: bool = False


class RewrittenModule(str):
    """The rewritten module's text, holding also its preamble (the lines before its first definition) and its
    statements after that, as rewritten: splitting it reads the one parsed tree instead of parsing it again."""

    preamble: str
    statements: tuple[Statement, ...]

    @classmethod
    def made(cls, text: str, preamble: str, statements: tuple[Statement, ...]) -> RewrittenModule:
        module = cls(text)
        module.preamble, module.statements = preamble, statements
        return module


def _defines(node: ast.stmt) -> bool:
    return isinstance(node, ast.ClassDef) or (
        isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        or (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name))
    )


def _type_edits(module: _Module, node: ast.expr) -> Iterator[_Edit]:
    """The type `node` with its containers frozen: `list`, `dict` and `Any` as FrozenList, FrozenMap and
    FrozenAny, and in `Annotated[<list or dict>, Field(...)]` the length bounds as FrozenSize(...). Names inside a
    call (Field's, StringConstraints' arguments) are values, not types, and stay."""
    stack: list[ast.AST] = [node]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.Name):
            frozen = module.frozen.get(sub.id)
            if frozen is not None:
                yield module.replace_node(sub, frozen)
        elif not isinstance(sub, ast.Call):
            if isinstance(sub, ast.Subscript) and _is_annotated(sub) and isinstance(sub.slice, ast.Tuple):
                kind, *metadata = sub.slice.elts
                for call in metadata:
                    if isinstance(call, ast.Call) and _is_field(call) and _is_container(kind, module.frozen):
                        yield module.replace_node(call, _metadata_text(module, kind, call.keywords))
            stack.extend(ast.iter_child_nodes(sub))


def _is_annotated(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Annotated"


def _is_field(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Field" and not node.args


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_container(node: ast.expr, frozen: Mapping[str, str]) -> bool:
    """`list[...]` or `dict[...]` (under any name `frozen` makes FrozenList or FrozenMap), alone or `| None`: what
    FrozenSize bounds."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if _is_none(node.right):
            return _is_container(node.left, frozen)
        return _is_none(node.left) and _is_container(node.right, frozen)
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and frozen.get(node.value.id) in ("FrozenList", "FrozenMap")
    )


def _metadata_text(module: _Module, kind: ast.expr, keywords: Sequence[ast.keyword]) -> str:
    """`Field(...)` with `keywords`; for a list or dict, its length bounds as FrozenSize(...) after it (Field left
    out when they were all it held)."""
    sized = [k for k in keywords if k.arg in _SIZES] if _is_container(kind, module.frozen) else []
    rest = [k for k in keywords if k not in sized]
    parts = [] if sized and not rest else [f"Field({', '.join(f'{k.arg}={module.segment(k.value)}' for k in rest)})"]
    if sized:
        parts.append(f"FrozenSize({', '.join(f'{k.arg}={module.segment(k.value)}' for k in sized)})")
    return ", ".join(parts)


def _extras_types(node: ast.stmt) -> list[ast.expr]:
    """The types in the generator's `__annotations__ = {"__pydantic_extra__": Dict[str, <type>]}` of a class, which
    types its extra fields; none for any other statement."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == "__annotations__"
        and isinstance(node.value, ast.Dict)
    ):
        return [value for value in node.value.values if value is not None]
    return []


def _type_of(node: ast.stmt) -> ast.expr | None:
    """The type a top-level statement other than a class names: `X: TypeAlias = <type>`, or the generator's
    `X = TypeAliasType("X", <type>)`."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.annotation, ast.Name) and node.annotation.id == "TypeAlias":
        return node.value
    call = node.value if isinstance(node, ast.Assign) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "TypeAliasType":
        return call.args[1] if len(call.args) == 2 else None
    return None


def _deferred_bases(module: _Module, node: ast.ClassDef) -> Iterator[_Edit]:
    """`RootModel[...]` as a base becomes the runtime's DeferredRootModel[...]: RootModel[...] is a class of its own,
    made at import with RootModel's config, which would build its validator there and then."""
    for base in node.bases:
        if isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name) and base.value.id == ROOT_BASE:
            at = module.positions.offset(base.value.lineno, base.value.col_offset)
            yield _Edit(at, at + len(ROOT_BASE), DEFERRED_ROOT_BASE)


def _statements(
    module: _Module,
    edits: Sequence[_Edit],
    removed: ast.stmt | None = None,
    aliases: dict[int, _Alias] | None = None,
    kept: Iterable[ast.ClassDef] = (),
) -> tuple[str, tuple[Statement, ...]]:
    """The preamble and the statements of `module` with `edits` made, `removed` left out, the classes of `aliases`
    as their aliases, and the bases of the `kept` classes deferred: each statement's own lines, cut from the
    one text, with the edits inside them."""
    aliases = aliases or {}
    body = [node for node in module.tree.body if node is not removed]
    first = next((i for i, node in enumerate(body) if _defines(node)), len(body))
    spans = []
    for node in body[first:]:
        assert node.end_lineno is not None  # a parsed statement has one
        spans.append((module.positions.line_start(_first_line(node)), module.positions.line_start(node.end_lineno + 1)))
    every = sorted([*edits, *(edit for node in kept for edit in _deferred_bases(module, node))], key=lambda e: e.start)
    cut = spans[0][0] if spans else len(module.source)
    index = 0
    inside: list[_Edit] = []
    while index < len(every) and every[index].start < cut:
        inside.append(every[index])
        index += 1
    preamble = _apply(module.source, inside, 0, cut)
    statements = []
    for node, (start, end) in zip(body[first:], spans, strict=True):
        inside = []
        while index < len(every) and every[index].start < end:
            if every[index].start >= start:  # an edit between two statements (a removed class) is no one's
                inside.append(every[index])
            index += 1
        text = _apply(module.source, inside, start, end)
        alias = aliases.get(id(node))
        if alias is not None:
            statements.append(Statement(text, node, alias.parts, alias.strings))
        else:
            statements.append(Statement(text, node, (node,), is_class=isinstance(node, ast.ClassDef)))
    return preamble, tuple(statements)


def _first_line(node: ast.stmt) -> int:
    """The statement's first line, its decorators included."""
    return node.lineno - (len(node.decorator_list) if isinstance(node, ast.ClassDef) else 0)


def module_statements(source: str) -> RewrittenModule:
    """`source` as it stands, as a RewrittenModule: its statements cut from one parse, RootModel bases deferred."""
    with collector_paused():
        module = _Module(source)
        kept = [node for node in module.tree.body if isinstance(node, ast.ClassDef)]
        preamble, statements = _statements(module, (), kept=kept)
    return RewrittenModule.made(source, preamble, statements)


def _is_root_model(node: ast.ClassDef) -> bool:
    return any(
        isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name) and b.value.id == "RootModel" for b in node.bases
    )


def _root_field(node: ast.ClassDef) -> ast.AnnAssign | None:
    return next(
        (
            i
            for i in node.body
            if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name) and i.target.id == "root"
        ),
        None,
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


def _marks_validate_default(node: ast.expr) -> bool:
    return any(
        isinstance(sub, ast.keyword)
        and sub.arg == "validate_default"
        and isinstance(sub.value, ast.Constant)
        and sub.value.value is True
        for sub in ast.walk(node)
    )


def _names(node: ast.expr) -> Iterator[str]:
    return (sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name))


def _holds_class(node: ast.expr | None, classes: set[str]) -> bool:
    return node is not None and any(name in classes for name in _names(node))


def _is_literal(value: ast.expr) -> bool:
    """A default written as data (a constant, possibly negative), not a call or a name."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    return isinstance(value, ast.Constant) and value.value is not None


@dataclass(frozen=True)
class _Alias:
    """A class that becomes `name: TypeAlias = <text>`: its alias line(s), and the expressions its value holds."""

    text: str
    parts: tuple[ast.expr, ...]
    names: frozenset[str]
    strings: tuple[str, ...] = ()  # what the alias's text adds to its parts: its docstring


def _union_alias(module: _Module, node: ast.ClassDef) -> _Alias:
    """The union as an alias: the members, and of the Field only what describes the union (the discriminator
    under its Python field name, `pet_type` for `pet-type`, title, description); field-only arguments such as
    validate_default would make pydantic warn."""
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id == "root"):
            continue
        annotated = item.annotation
        if isinstance(annotated, ast.Subscript) and isinstance(annotated.slice, ast.Tuple):
            members, field = annotated.slice.elts[0], annotated.slice.elts[1]
            if isinstance(field, ast.Call):
                kept = [k for k in field.keywords if k.arg in ("discriminator", "title", "description")]
                arguments = ", ".join(f"{k.arg}={module.segment(k.value)}" for k in kept)
                parts = (members, *(k.value for k in kept))
                names = frozenset({"Annotated", "Field"}).union(*(_names(p) for p in parts))
                text = f"{node.name}: TypeAlias = Annotated[{module.segment(members)}, Field({arguments})]\n"
                return _Alias(text, parts, names)
    raise ToolgenError(f"the union {node.name} was not generated as a discriminated root model")


def _enum_alias(module: _Module, node: ast.ClassDef) -> _Alias | None:
    """A RootModel whose root is a Literal (optionally `| None`) and whose Field says no more than a title and a
    description, as a Literal alias; its description follows as a docstring, a literal written by repr()."""
    root = _root_field(node)
    if root is None:
        return None
    annotation, field = root.annotation, None
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
    ):
        if not (isinstance(annotation.slice, ast.Tuple) and len(annotation.slice.elts) == 2):
            return None
        annotation, field = annotation.slice.elts
        if not (
            isinstance(field, ast.Call)
            and not field.args
            and {k.arg for k in field.keywords} <= {"title", "description"}
        ):
            return None
    if not _is_literal_type(annotation):
        return None
    described = [k.value for k in field.keywords if k.arg == "description"] if isinstance(field, ast.Call) else []
    description = described[0].value if described and isinstance(described[0], ast.Constant) else None
    docstring = f"{description!r}\n" if isinstance(description, str) and description else ""
    text = f"{node.name}: TypeAlias = {module.segment(annotation)}\n{docstring}"
    strings = (description,) if docstring and isinstance(description, str) else ()
    return _Alias(text, (annotation,), frozenset(_names(annotation)), strings)


def _field_edits(module: _Module, node: ast.ClassDef, classes: set[str]) -> Iterator[_Edit]:
    """A kept class's fields: needless validate_default taken off, defaults that need it as Field(default=...).

    Every type the class names (its bases, its fields) has its containers frozen (_type_edits).
    The generator marks a field validate_default when its default is data for a model (`{"k": 1}` for `Opts`);
    a default of a Literal alias or of plain types is the value itself, and unmarked it stays a plain default
    that mypy checks against the annotation (`unit: Unit = "celsius"`). `tags: list[str] = []` becomes
    `Field(default=[])`: the same model for pydantic (it copies defaults), but no mutable class attribute
    (RUF012). A field still marked gets `Field(default=..., validate_default=True)`, which pydantic's signature
    types as Any, so mypy does not compare the data with the model type.
    """
    for base in node.bases:
        yield from _type_edits(module, base)
    for item in node.body:
        for extras in _extras_types(item):
            yield from _type_edits(module, extras)
        if not isinstance(item, ast.AnnAssign):
            continue
        annotation = item.annotation
        validated = module.mentions(item, "validate_default") and _marks_validate_default(annotation)
        replaced = False
        if validated and isinstance(annotation, ast.Subscript) and isinstance(annotation.slice, ast.Tuple):
            kind, *metadata = annotation.slice.elts
            if not _holds_class(kind, classes) and len(metadata) == 1 and isinstance(metadata[0], ast.Call):
                kept = [k for k in metadata[0].keywords if k.arg != "validate_default"]
                text = module.frozen_segment(kind)
                yield module.replace_node(
                    annotation, f"Annotated[{text}, {_metadata_text(module, kind, kept)}]" if kept else text
                )
                replaced = True
                validated = _marks_validate_default(kind) or any(_marks_validate_default(k.value) for k in kept)
        if not replaced:
            yield from _type_edits(module, annotation)
        value = item.value
        if value is not None and (
            isinstance(value, (ast.List, ast.Dict, ast.Set)) or (validated and _is_literal(value))
        ):
            extra = ", validate_default=True" if validated else ""
            yield module.replace_node(value, f"Field(default={module.segment(value)}{extra})")


def _defer_build(module: _Module, node: ast.ClassDef) -> _Edit:
    """The bases' defer_build for a RootModel, after its docstring or before its first statement."""
    first = node.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    line = first.end_lineno + 1 if docstring and first.end_lineno else first.lineno
    at = module.positions.line_start(line)
    return _Edit(at, at, _DEFER_BUILD)


def rewrite_models(
    source: str, root_model: str, unions: Sequence[str], keep: frozenset[str], package: str
) -> RewrittenModule:
    """datamodel-code-generator's module `source` with toolgen's rewrites (see the module docstring), checked.

    `root_model` names the class to remove, `unions` the discriminated unions to make aliases, `keep` the
    classes that stay classes whatever their shape (a tool's own arguments and result). The text comes with its
    statements as rewritten (RewrittenModule), cut from the same parse.
    """
    with collector_paused():
        return _rewrite(source, root_model, unions, keep, package)


def _rewrite(
    source: str, root_model: str, unions: Sequence[str], keep: frozenset[str], package: str
) -> RewrittenModule:
    module = _Module(source)
    classes_by_name: dict[str, ast.ClassDef] = {}
    for node in module.tree.body:
        if isinstance(node, ast.ClassDef):
            classes_by_name.setdefault(node.name, node)
    if root_model not in classes_by_name:
        raise ToolgenError(f"the model {root_model} was not generated")
    removed = classes_by_name[root_model]
    aliases: dict[int, _Alias] = {}
    for name in unions:
        union = classes_by_name.get(name)
        if union is None or union is removed:
            raise ToolgenError(f"the union {name} was not generated as a discriminated root model")
        aliases[id(union)] = _union_alias(module, union)
    edits = [module.replace_lines(removed, "")]
    # The module as it will stand, top to bottom, for the guard; and the names that stay model classes, or
    # aliases holding one (a union's members): an alias comes after what it names.
    written: list[ast.stmt | AliasOf] = []
    classes: set[str] = set()
    kept: list[ast.ClassDef] = []
    type_alias = False
    for node in module.tree.body:
        if node is removed:
            continue
        if isinstance(node, ast.ClassDef):
            alias = aliases.get(id(node))
            if alias is None and node.name not in keep and _is_root_model(node):
                alias = _enum_alias(module, node)
                if alias is not None:
                    aliases[id(node)] = alias
            if alias is None:
                classes.add(node.name)
                kept.append(node)
                written.append(node)
                continue
            edits.append(module.replace_lines(node, alias.text))
            written.append(AliasOf(node.name, alias.parts))
            type_alias = True
            if not alias.names.isdisjoint(classes):
                classes.add(node.name)
            continue
        written.append(node)
        named = _type_of(node)
        if named is not None:
            edits.extend(_type_edits(module, named))
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.annotation, ast.Name)
            and node.annotation.id == "TypeAlias"
        ):
            type_alias = True
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _holds_class(node.value, classes):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            classes.update(t.id for t in targets if isinstance(t, ast.Name))
    check_models(written, package)
    for node in kept:
        edits.extend(_field_edits(module, node, classes))
        if _is_root_model(node):
            edits.append(_defer_build(module, node))
    future = source.find(_FUTURE)
    if type_alias and future >= 0:
        # The formatter's import sorting merges it with the generator's own typing import.
        at = future + len(_FUTURE)
        edits.append(_Edit(at, at, "\nfrom typing import TypeAlias\n"))
    frozen = [name for name in _FROZEN_NAMES if any(name in edit.text for edit in edits)]
    if frozen:
        # Merged with the runtime's other imports by the formatter, which drops `Any` when no type holds it now.
        at = future + len(_FUTURE) if future >= 0 else module.positions.line_start(_first_line(module.tree.body[0]))
        edits.append(_Edit(at, at, f"\nfrom {package}._runtime import {', '.join(frozen)}\n"))
    preamble, statements = _statements(module, edits, removed, aliases, kept)
    return RewrittenModule.made(_apply(source, edits), preamble, statements)
