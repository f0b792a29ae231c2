"""The layout of generator/toolgen: no import cycle, modules of a readable size, a docstring on each, runtime by its surface.

Every module is read with `ast`, the runtime's sub-packages included, and nothing is imported. An import counts
wherever it is written, at module level or inside a function (a function-level import runs on the first call and
then closes the same cycle); imports under `if TYPE_CHECKING:` never run, and only one test, for cycles a reader
and a type checker follow, counts them. Relative
imports are resolved against the module's package; `from package import name` counts as importing the submodule
`package.name` when there is one; importing a package counts as importing its `__init__`, and importing
`a.b.c` runs `a/__init__` and `a/b/__init__` first, so those count too (except the importer's own packages,
which are being imported already). Names a module imports with `importlib` at run time are not seen.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.projects import REPO_ROOT

SOURCE = REPO_ROOT / "generator"
PACKAGE = SOURCE / "toolgen"
RUNTIME = "toolgen.runtime"
# Past SOFT_LINES a module is worth a look for a seam, which a warning says; a split made only for the count
# scatters one job over files, so only HARD_LINES fails, and a module cannot grow without limit.
SOFT_LINES = 600
HARD_LINES = 900


@dataclass(frozen=True)
class Import:
    """One module importing another, and where it says so."""

    source: str
    target: str
    line: int
    written: str  # the import as a reader finds it: `from toolgen.x import y`
    named: bool  # the statement names `target`, rather than running it as a package on the way


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    lines: int

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def where(self) -> str:
        return self.path.relative_to(REPO_ROOT).as_posix()


def _modules() -> dict[str, Module]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(SOURCE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        text = path.read_text(encoding="utf-8")
        found[name] = Module(name, path, ast.parse(text, str(path)), len(text.splitlines()))
    return found


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST, typing_too: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under `node`, in functions and classes too, but not under `if TYPE_CHECKING:`
    unless `typing_too`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif _type_checking_only(child) and not typing_too:
            assert isinstance(child, ast.If)
            for other in child.orelse:
                yield from _import_nodes(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from _import_nodes(child, typing_too)


def _base(module: Module, node: ast.ImportFrom) -> str:
    """The module a `from ... import` statement imports from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def _targets(module: Module, node: ast.Import | ast.ImportFrom, known: dict[str, Module]) -> dict[str, bool]:
    """The modules an import statement runs, each with whether the statement names it (False: a package on the way)."""
    if isinstance(node, ast.Import):
        named = [alias.name for alias in node.names]
    else:
        base = _base(module, node)
        submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
        named = [*submodules, *([base] if len(submodules) < len(node.names) else [])]
    targets = {".".join(name.split(".")[:i]): False for name in named for i in range(1, name.count(".") + 1)}
    return {**targets, **dict.fromkeys(named, True)}


def _imports(modules: dict[str, Module], typing_too: bool = False) -> list[Import]:
    edges = []
    for module in modules.values():
        parts = module.name.split(".")
        own_packages = {".".join(parts[:i]) for i in range(1, len(parts) + (1 if module.is_package else 0))}
        for node in _import_nodes(module.tree, typing_too):
            for target, named in sorted(_targets(module, node, modules).items()):
                if target in modules and target != module.name and (named or target not in own_packages):
                    edges.append(Import(module.name, target, node.lineno, ast.unparse(node), named))
    return edges


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    found = _modules()
    assert "toolgen.api" in found and f"{RUNTIME}.wires" in found, "the scan found no toolgen modules"
    return found


@pytest.fixture(scope="module")
def imports(modules: dict[str, Module]) -> list[Import]:
    return _imports(modules)


def _cycles(imports: list[Import]) -> list[tuple[list[Import], list[str]]]:
    """Each group of modules that import each other (Tarjan), with the shortest cycle through its first module."""
    graph: dict[str, list[Import]] = {}
    for edge in imports:
        graph.setdefault(edge.source, []).append(edge)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for edge in graph.get(node, []):
            if edge.target not in index:
                visit(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for group in groups:
        start = min(group)
        # breadth-first from `start` back to itself, inside the group: the shortest cycle through it
        paths: dict[str, list[Import]] = {start: []}
        queue = [start]
        cycle: list[Import] | None = None
        while queue and cycle is None:
            node = queue.pop(0)
            for edge in graph.get(node, []):
                if edge.target == start:
                    cycle = [*paths[node], edge]
                    break
                if edge.target in group and edge.target not in paths:
                    paths[edge.target] = [*paths[node], edge]
                    queue.append(edge.target)
        assert cycle is not None
        cycles.append((cycle, sorted(group)))
    return sorted(cycles, key=lambda found: found[1])


def test_no_import_cycles(imports: list[Import], modules: dict[str, Module]) -> None:
    cycles = _cycles(imports)
    described = []
    for cycle, group in cycles:
        steps = [f"    {e.source} imports {e.target} at {modules[e.source].where}:{e.line}: {e.written}" for e in cycle]
        others = sorted(set(group) - {e.source for e in cycle})
        also = [f"    (the same knot also holds {', '.join(others)})"] if others else []
        described.append("\n".join([*steps, *also]))
    if cycles:
        pytest.fail(
            f"{len(cycles)} import cycle(s) in generator/toolgen. Moving an import into a function does not break "
            "one (function-level imports count): move what both modules need into a module below them both, "
            "or pass the lower module what it needs as a parameter.\n" + "\n\n".join(described),
            pytrace=False,
        )


def test_no_import_cycles_for_type_checkers_either(modules: dict[str, Module]) -> None:
    """Imports under `if TYPE_CHECKING:` never run, but a reader and a type checker follow them: two modules that
    need each other's names are one job split in two, or want a third module below them both."""
    cycles = _cycles(_imports(modules, typing_too=True))
    described = [" <-> ".join(group) for _, group in cycles]
    assert not cycles, "import cycles once TYPE_CHECKING imports count:\n" + "\n".join(described)


def _by_size(modules: dict[str, Module], over: int) -> list[Module]:
    return sorted((m for m in modules.values() if m.lines > over), key=lambda m: (-m.lines, m.where))


def test_no_module_over_900_lines(modules: dict[str, Module]) -> None:
    huge = _by_size(modules, HARD_LINES)
    if huge:
        pytest.fail(
            f"{len(huge)} module(s) over {HARD_LINES} lines; split each at its seams into modules with one job:\n"
            + "\n".join(f"    {m.where}: {m.lines} lines" for m in huge),
            pytrace=False,
        )


def test_a_module_over_600_lines_is_a_warning(modules: dict[str, Module]) -> None:
    large = [m for m in _by_size(modules, SOFT_LINES) if m.lines <= HARD_LINES]
    if large:
        warnings.warn(
            f"{len(large)} module(s) over {SOFT_LINES} lines (the test fails past {HARD_LINES}); look for a seam "
            "where one of them holds two jobs, and keep a module whole that has one:\n"
            + "\n".join(f"    {m.where}: {m.lines} lines" for m in large),
            stacklevel=1,
        )


def test_every_module_has_a_docstring(modules: dict[str, Module]) -> None:
    missing = [m.where for m in modules.values() if ast.get_docstring(m.tree) is None]
    if missing:
        pytest.fail(
            "module(s) without a docstring; start each with a one-line docstring saying what the module is for "
            "(a runtime module after its fixed header line):\n" + "\n".join(f"    {where}" for where in missing),
            pytrace=False,
        )


def _in_runtime(name: str, below: bool = False) -> bool:
    """True for the runtime's modules; with `below`, only for those under its surface."""
    return name.startswith(RUNTIME + ".") or (name == RUNTIME and not below)


def test_the_generator_uses_the_runtime_through_its_surface(imports: list[Import], modules: dict[str, Module]) -> None:
    deep = [e for e in imports if e.named and not _in_runtime(e.source) and _in_runtime(e.target, below=True)]
    if deep:
        pytest.fail(
            f"module(s) outside {RUNTIME} import its sub-modules; import the names from `{RUNTIME}` itself "
            "(its declared surface), and add a missing name to _HOMES, the TYPE_CHECKING imports and __all__ in "
            "generator/toolgen/runtime/__init__.py:\n"
            + "\n".join(f"    {modules[e.source].where}:{e.line}: {e.written}" for e in deep),
            pytrace=False,
        )


def test_the_scan_sees_what_it_is_meant_to_see() -> None:
    """The rules above, on a made-up package: relative imports, submodules by name, function-level imports."""
    names = {
        "toolgen": "",
        "toolgen.a": "def f():\n    from toolgen import b\n",
        "toolgen.b": "from .sub import c\nimport toolgen.sub.d\n",
        "toolgen.sub": "",
        "toolgen.sub.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toolgen import b\nfrom .. import a\n",
        "toolgen.sub.d": "from toolgen.sub import VALUE\n",
    }
    fake = {}
    for name, text in names.items():
        is_package = name in ("toolgen", "toolgen.sub")
        path = PACKAGE.parent.joinpath(*name.split("."), "__init__.py") if is_package else None
        path = path or PACKAGE.parent.joinpath(*name.split(".")).with_suffix(".py")
        fake[name] = Module(name, path, ast.parse(text), len(text.splitlines()))
    edges = {(e.source, e.target, e.named) for e in _imports(fake)}
    assert edges == {
        ("toolgen.a", "toolgen.b", True),  # inside a function
        ("toolgen.b", "toolgen.sub", False),  # run on the way to its submodules
        ("toolgen.b", "toolgen.sub.c", True),  # relative, and a submodule by name
        ("toolgen.b", "toolgen.sub.d", True),
        ("toolgen.sub.c", "toolgen.a", True),  # `from .. import a`; toolgen itself is already being imported
        ("toolgen.sub.d", "toolgen.sub", True),  # a name from its own package's __init__
    }
    ((cycle, group),) = _cycles(_imports(fake))
    assert [e.source for e in cycle] == ["toolgen.a", "toolgen.b", "toolgen.sub.c"] == group
