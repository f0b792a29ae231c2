"""Model modules target: the models module split so that each tool's models are imported when first used.

The canonical models, and whatever they or no tool refer to, stay in `models.py`. Every other definition goes
to the module of the tools that reach it: one module per tool under `_tool_models/`, and one per set of tools
that share definitions. A definition reached by the tools S refers only to definitions reached by at least S,
so a module imports only `models.py` and modules of larger sets: never a cycle. `models.py` serves every
moved name through a lazy `__getattr__` (and imports them all for type checkers), so `from <pkg>.models
import X` keeps working, and importing the package creates no tool's model class.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from toolgen.codegen.collector import collector_paused
from toolgen.codegen.targets.model_rewrites import DEFERRED_ROOT_BASE, RewrittenModule, Statement, module_statements
from toolgen.core.names import NameRegistry, tool_attributes
from toolgen.ir.model import Project

FOLDER = "_tool_models"
_FUTURE = "from __future__ import annotations\n"


@dataclass(frozen=True)
class ModelModules:
    """The split: file name (relative to the package) -> text, and each moved name -> its module's name.

    `layout` holds what remaking one tool's module needs of the rest (model_remake.py), each a JSON text: the
    core module's text up to its table of moved names (`core_head`) and its own names (`core_names`), the tools
    whose module holds everything they reach and nothing else (`sole`), and the names and name-shaped strings
    each module's definitions mention (`mentions`, by module name under FOLDER; the core's under "").
    """

    files: Mapping[str, str]
    homes: Mapping[str, str]
    layout: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class _Definition:
    name: str
    text: str
    refers_to: frozenset[str]
    # `name.model_rebuild()`, if any: it runs after every definition of its module, as in the module it came from,
    # since it resolves names that a mutually recursive definition further down provides.
    rebuild: str = ""
    # Whether its annotations must stay strings: it names itself, or a field of its class takes a name the class
    # body then reads (`date: date`), which an annotation evaluated in the class body would find instead.
    lazy: bool = False
    # Every name and name-shaped string it mentions, whether or not a definition of this module takes it.
    mentions: frozenset[str] = frozenset()


def _defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _rebuilt_name(node: ast.stmt) -> str | None:
    """`X` of a top-level `X.model_rebuild()`, which belongs with X."""
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and isinstance(node.value.func.value, ast.Name)
    ):
        return node.value.func.value.id
    return None


def _is_string(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def parse_definitions(source: str, more_names: frozenset[str] = frozenset()) -> tuple[str, list[_Definition]]:
    """The module's preamble (comments and imports) and its definitions in order, each with its text.

    A string after a definition (an alias's docstring) goes with it, and so does `X.model_rebuild()` with X
    (kept apart: it runs once the module's definitions are all made). The statements come from the parse the
    rewrites made (RewrittenModule); any other text is parsed here. A definition refers to the names of the
    module's definitions and of `more_names` that it mentions.
    """
    module = source if isinstance(source, RewrittenModule) else module_statements(source)
    pieces: dict[str, list[Statement]] = {}
    rebuilds: dict[str, list[Statement]] = {}
    last = ""
    for statement in module.statements:
        node = statement.node
        name = _defined_name(node)
        if name is not None:
            pieces[name] = [statement]
            last = name
        elif _is_string(node):
            pieces[last].append(statement)
        elif _rebuilt_name(node) in pieces:
            rebuilds.setdefault(str(_rebuilt_name(node)), []).append(statement)
        else:
            raise AssertionError(f"models line {node.lineno}: a statement the models module does not hold")
    names = frozenset(pieces) | more_names
    definitions = []
    for name, statements in pieces.items():
        text = "".join(statement.text for statement in statements)
        rebuild = "".join(statement.text for statement in rebuilds.get(name, []))
        refers: set[str] = set()
        read: set[str] = set()
        for statement in [*statements, *rebuilds.get(name, [])]:
            for part in statement.mentions:
                _mentions(part, refers, read)
            refers.update(statement.strings)
        first = statements[0]
        bound = _bound_in_class(first.node) if first.is_class else set()
        lazy = name in read or not bound.isdisjoint(read)
        mentioned = frozenset(word for word in refers if word.isidentifier())
        definitions.append(_Definition(name, text, frozenset((refers & names) - {name}), rebuild, lazy, mentioned))
    return module.preamble, definitions


def _bound_in_class(node: ast.stmt) -> set[str]:
    """The names a class body binds (its fields with a value, model_config, enum members); none for an alias."""
    if not isinstance(node, ast.ClassDef):
        return set()
    bound: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            bound.add(item.target.id)
        elif isinstance(item, ast.Assign):
            bound.update(target.id for target in item.targets if isinstance(target, ast.Name))
    return bound


def _mentions(node: ast.AST, found: set[str], read: set[str]) -> None:
    """Add to `found` every name `node` holds, and every string: a forward reference written as a string counts
    too (a description equal to a name only puts two definitions in one module); to `read` the names it reads.
    What ast.walk visits, without its generators: a large module has a few hundred thousand nodes."""
    stack = [node]
    while stack:
        sub = stack.pop()
        kind = type(sub)
        if kind is ast.Name:
            found.add(sub.id)  # type: ignore[attr-defined]
            if type(sub.ctx) is ast.Load:  # type: ignore[attr-defined]
                read.add(sub.id)  # type: ignore[attr-defined]
            continue  # its only child is its context
        if kind is ast.Constant:
            value = sub.value  # type: ignore[attr-defined]
            if isinstance(value, str):
                found.add(value)
            continue
        for field in sub._fields:
            value = getattr(sub, field, None)
            if isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)


def reached_from(roots: Iterable[str], edges: Mapping[str, frozenset[str]]) -> set[str]:
    """The names of `roots` that `edges` holds, and every name those reach through it."""
    reached: set[str] = set()
    frontier = [r for r in roots if r in edges]
    while frontier:
        name = frontier.pop()
        if name not in reached:
            reached.add(name)
            frontier.extend(edges[name] - reached)
    return reached


def split_models(source: str, project: Project, header: str) -> ModelModules:
    """`models.py` as render_models made it, split into the eager core and one lazy module per tool set."""
    # The parsed module lives as long as `source` does: each pass of the collector would walk all of it.
    with collector_paused():
        return _split(source, project, header)


def _split(source: str, project: Project, header: str) -> ModelModules:
    preamble, definitions = parse_definitions(source)
    edges = {d.name: d.refers_to for d in definitions}
    owners: dict[str, set[str]] = {}
    reached: dict[str, set[str]] = {}
    for tool in project.tools:
        reached[tool.name] = reached_from([tool.args_model, *([tool.result_model] if tool.result_model else [])], edges)
        for name in reached[tool.name]:
            owners.setdefault(name, set()).add(tool.name)
    # Eager: the canonical models, definitions no tool reaches, and everything those refer to.
    core = reached_from(
        [d.name for d in definitions if d.name in project.canonical_models or d.name not in owners], edges
    )
    registry = NameRegistry(frozenset({"__init__"}))
    module_of_tools = tool_module_names(project, registry)
    module_of_set: dict[frozenset[str], str] = {}
    members: dict[str, list[_Definition]] = {}
    for definition in definitions:
        if definition.name in core:
            continue
        tools = frozenset(owners[definition.name])
        if tools not in module_of_set:
            alone = len(tools) == 1
            module_of_set[tools] = module_of_tools[next(iter(tools))] if alone else registry.claim("shared")
        members.setdefault(module_of_set[tools], []).append(definition)
    package = project.package
    homes = {d.name: f"{package}.{FOLDER}.{module}" for module, found in members.items() for d in found}
    imports = module_imports(preamble, package)
    core_found = [d for d in definitions if d.name in core]
    head = _core_head(header, imports, core_found, bool(homes))
    core_names = sorted(d.name for d in core_found)
    files = {
        "models.py": core_module(head, core_names, homes, package),
        f"{FOLDER}/__init__.py": f'{header}\n"""Each tool\'s models, imported through `{package}.models` when first used."""\n',
    }
    tools_of = {module: tools for tools, module in module_of_set.items()}
    for module, found in sorted(members.items()):
        files[f"{FOLDER}/{module}.py"] = tool_module(header, imports, found, homes, package, tools_of[module])
    sole = sorted(
        tool for tool, names in reached.items() if names and all(owners[n] == {tool} and n not in core for n in names)
    )
    # By module (the core's under ""): a shared module's definitions mention names as much as a tool's own do.
    mentions = {module: sorted(_mentioned(found)) for module, found in members.items()}
    mentions[""] = sorted(_mentioned(core_found))
    layout = {
        "core_head": head,
        "core_names": json.dumps(core_names),
        "sole": json.dumps(sole),
        "mentions": json.dumps(mentions, ensure_ascii=False),
    }
    return ModelModules(files, homes, layout)


def tool_module_names(project: Project, registry: NameRegistry | None = None) -> dict[str, str]:
    """Each tool's name -> the name of its module under FOLDER (claimed in `registry`, when given)."""
    registry = NameRegistry(frozenset({"__init__"})) if registry is None else registry
    claimed = tool_attributes([tool.name for tool in project.tools], registry=registry)
    return {tool.name: module for tool, module in zip(project.tools, claimed, strict=True)}


def _mentioned(found: Iterable[_Definition]) -> set[str]:
    return {word for definition in found for word in definition.mentions}


def module_imports(preamble: str, package: str) -> str:
    """The import lines every split module starts from; the format stage drops those a module does not use.

    One line a statement, whatever its length: generate() wraps a long one with a trailing comma, which the format
    stage would keep wrapped in every module however few of its names that module uses, so each module's imports
    would depend on what the other tools' models need.
    """
    lines = []
    for node in ast.parse(preamble).body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names = ", ".join(alias.name + (f" as {alias.asname}" if alias.asname else "") for alias in node.names)
            lines.append(f"from {'.' * node.level}{node.module or ''} import {names}\n")
        elif isinstance(node, ast.Import):
            lines.extend(f"import {ast.unparse(alias)}\n" for alias in node.names)
        elif not isinstance(node, ast.ImportFrom):
            raise AssertionError(f"models line {node.lineno}: a statement before the definitions that imports nothing")
    # The import sorting of the format stage merges the runtime's line with the others, or drops it unused.
    return "".join(lines) + f"from {package}._runtime import {DEFERRED_ROOT_BASE}\n"


def tool_module(
    header: str, imports: str, found: list[_Definition], homes: Mapping[str, str], package: str, tools: frozenset[str]
) -> str:
    own = {d.name for d in found}
    needed = sorted({name for d in found for name in d.refers_to} - own)
    eager = [name for name in needed if name not in homes]
    by_home: dict[str, list[str]] = {}
    for name in needed:
        if name in homes:
            by_home.setdefault(homes[name], []).append(name)
    named = sorted(tools)
    more = f" and {len(named) - 3} more" if len(named) > 3 else ""
    whose = f"the tool {named[0]!r}" if len(named) == 1 else f"the tools {', '.join(map(repr, named[:3]))}{more}"
    # repr() escapes whatever a tool's name holds; the docstring is a literal of its own kind, so no quote ends it.
    doc = repr(f"Models of {whose}, imported through the package's models module when first used.")
    ordered = _defined_before_use(found)
    # Annotations written as code when every name they read is defined above them: pydantic then reads the
    # evaluated types, not strings it compiles and evaluates for each field whenever the module is first imported.
    lines = [header, doc, "", *([_FUTURE] if ordered is None else []), imports]
    if eager:
        lines.append(f"from {package}.models import {', '.join(eager)}\n")
    lines.extend(f"from {home} import {', '.join(names)}\n" for home, names in sorted(by_home.items()))
    lines.extend(f"\n{d.text}" for d in (found if ordered is None else ordered))
    lines.extend(_rebuilds(found))
    return "\n".join(lines)


def _defined_before_use(found: list[_Definition]) -> list[_Definition] | None:
    """`found` reordered so that each definition comes after those of `found` it refers to (else in the order
    given), or None when some annotation must stay a string: a cycle, a rebuild, a `lazy` definition."""
    if any(d.lazy or d.rebuild for d in found):
        return None
    position = {d.name: index for index, d in enumerate(found)}
    ordered: list[_Definition] = []
    placed: set[str] = set()
    visiting: set[str] = set()

    def place(definition: _Definition) -> bool:
        if definition.name in placed:
            return True
        if definition.name in visiting:  # a cycle through other definitions
            return False
        visiting.add(definition.name)
        # in module order, so the result is the same whatever the set's order
        for index in sorted(position[name] for name in definition.refers_to if name in position):
            if not place(found[index]):
                return False
        visiting.discard(definition.name)
        placed.add(definition.name)
        ordered.append(definition)
        return True

    return ordered if all(place(d) for d in found) else None


def _rebuilds(found: list[_Definition]) -> list[str]:
    rebuilds = "".join(d.rebuild for d in found)
    return [f"\n{rebuilds}"] if rebuilds else []


def _core_head(header: str, imports: str, found: list[_Definition], has_homes: bool) -> str:
    """models.py up to the table of names moved to other modules."""
    parts = [
        header,
        '"""Every model of this package; each tool\'s own models are imported from their module on first use."""',
        "",
        _FUTURE,
        "from typing import TYPE_CHECKING\n" if has_homes else "",
        imports,
        *(f"\n{d.text}" for d in found),
        *_rebuilds(found),
    ]
    return "\n".join(parts)


def core_module(head: str, core_names: list[str], homes: Mapping[str, str], package: str) -> str:
    """models.py: its head (_core_head) and, for every name moved to another module, an import that waits for use."""
    by_home: dict[str, list[str]] = {}
    for name, home in sorted(homes.items()):
        by_home.setdefault(home, []).append(name)
    exported = sorted(set(core_names) | set(homes))
    parts = [head]
    if homes:
        typed = "".join(f"    from {home} import {', '.join(names)}\n" for home, names in sorted(by_home.items()))
        table = "".join(f"            {name!r}: {home!r},\n" for name, home in sorted(homes.items()))
        parts.append(
            "\nif TYPE_CHECKING:\n"
            f"{typed}"
            "else:\n"
            f"    from {package}._runtime import lazy_attributes\n\n"
            "    # Hidden from type checkers, which see the imports above: they would read any name as Any.\n"
            "    __getattr__, __dir__ = lazy_attributes(\n"
            "        __name__,\n"
            "        {\n"
            f"{table}"
            "        },\n"
            "    )\n"
        )
    parts.append("\n__all__ = [\n" + "".join(f"    {name!r},\n" for name in exported) + "]\n")
    return "\n".join(parts)
