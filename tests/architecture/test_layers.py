"""The layer order of generator/toolgen: each module imports its own layer and those below it, never one above.

Two orders, both read from the source with `ast` (nothing is imported). The generator's packages, bottom to
top, are GENERATOR_LAYERS: the runtime, then the stages, each above those it uses, then the API, then the CLI.
The runtime's sub-packages, bottom to top, are RUNTIME_LAYERS, the order its `__init__` states. Every import
counts, at module level, inside a function or under `if TYPE_CHECKING:`: an upward one ties the lower layer to
the upper even when it never runs, and a reader (or mypy) must read the upper layer to follow the lower one.
Cycles between single modules are test_layout.py's; here the cycles are between layers.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.projects import REPO_ROOT

PACKAGE = REPO_ROOT / "generator" / "toolgen"

# Bottom to top. The CLI is at the top; which of the layers below it the CLI may use is test_surface.py's rule.
GENERATOR_LAYERS = (
    "runtime",
    "core",
    "source",
    "project",
    "ir",
    "codegen",
    "output",
    "policy",
    "payloads",
    "importing",
    "api",
    "cli",
)
# Bottom to top: extras.py (which extra brings a missing package) is used by every layer, and the surface
# (runtime/__init__.py and the table it reads, surface.py) names every layer's public names.
RUNTIME_LAYERS = (
    "extras",
    "schema",
    "wires",
    "models",
    "streams",
    "tools",
    "clients",
    "observe",
    "loop",
    "serve",
    "mcp",
    "app",
    "demo",
    "surface",
)
# A module's runtime layer is the first folder of its path under runtime/, but for this one rule: a wire's stream
# state sits in its wire's folder, beside the codec, yet is streams-layer code (it builds on models).
WIRE_STREAM_MODULES = re.compile(r"wires/[^/]+/stream[^/]*")  # wires/<wire>/stream*.py, path under runtime/
# The lazy table of the public names, toolgen/__init__.py, may name a module of any layer. (The runtime's own
# tables, runtime/__init__.py and surface.py, are its top layer, so they may.)
NAMES_ANYTHING = "toolgen"


@dataclass(frozen=True)
class Module:
    name: str  # toolgen.core.diagnostics; a package by its own name, toolgen.core
    path: Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    written: str  # the statement as a reader finds it


@dataclass(frozen=True)
class Upward:
    """An import from a lower layer into a higher one, in one of the two orders."""

    order: str  # "generator" or "runtime"
    edge: Import
    source_layer: str
    target_layer: str
    where: str  # the importer's file, relative to the root `upward` was given

    def describe(self) -> str:
        e = self.edge
        return (
            f"    {e.source} ({self.order} layer {self.source_layer}) imports {e.target} "
            f"({self.order} layer {self.target_layer}) at {self.where}:{e.line}: {e.written}"
        )


def scan(package: Path) -> dict[str, Module]:
    """Every module under `package` (a directory named toolgen), by dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return found


def _base(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def imports(modules: dict[str, Module]) -> list[Import]:
    """Every import of one toolgen module by another, wherever it is written (functions, TYPE_CHECKING too)."""
    edges = []
    for module in modules.values():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _base(module, node)
                # `from package import name` imports the submodule when there is one, else a name of the package
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in dict.fromkeys(targets):
                if (target == "toolgen" or target.startswith("toolgen.")) and target != module.name:
                    edges.append(Import(module.name, target, node.lineno, ast.unparse(node)))
    return edges


def generator_layer(name: str) -> str:
    """The generator layer of a module, by its package under toolgen/ (the runtime is one layer here)."""
    parts = name.split(".")[1:]
    if not parts or parts == ["api"]:
        return "api"
    if parts == ["__main__"]:
        return "cli"
    return parts[0]


def runtime_layer(name: str) -> str:
    """The runtime layer of a module of toolgen.runtime: the first folder of its path under runtime/, by and large."""
    parts = name.split(".")[2:]
    if not parts:
        return "surface"
    if WIRE_STREAM_MODULES.fullmatch("/".join(parts)):
        return "streams"
    return parts[0]


def _in_runtime(name: str) -> bool:
    return name == "toolgen.runtime" or name.startswith("toolgen.runtime.")


def _orders(edge: Import) -> Iterator[tuple[str, str, str, tuple[str, ...]]]:
    """Each order the import is in, with the importer's layer and the imported module's layer in it."""
    yield "generator", generator_layer(edge.source), generator_layer(edge.target), GENERATOR_LAYERS
    if _in_runtime(edge.source) and _in_runtime(edge.target):
        yield "runtime", runtime_layer(edge.source), runtime_layer(edge.target), RUNTIME_LAYERS


def _names_anything(order: str, edge: Import) -> bool:
    return order == "generator" and edge.source == NAMES_ANYTHING


def unplaced(modules: dict[str, Module]) -> list[str]:
    """The modules that are in no layer of their order."""
    generator = [
        f"{n} (generator layer {generator_layer(n)!r})" for n in modules if generator_layer(n) not in GENERATOR_LAYERS
    ]
    runtime = [
        f"{n} (runtime layer {runtime_layer(n)!r})"
        for n in modules
        if _in_runtime(n) and runtime_layer(n) not in RUNTIME_LAYERS
    ]
    return sorted([*generator, *runtime])


def upward(modules: dict[str, Module], root: Path) -> list[Upward]:
    """The imports that run upward, in either order; `root` is what the files are named relative to."""
    found = []
    for edge in imports(modules):
        where = modules[edge.source].path.relative_to(root).as_posix()
        for order, source, target, layers in _orders(edge):
            runs_up = source in layers and target in layers and layers.index(target) > layers.index(source)
            if runs_up and not _names_anything(order, edge):
                found.append(Upward(order, edge, source, target, where))
    return found


def layer_cycles(modules: dict[str, Module]) -> list[tuple[list[tuple[str, Import]], list[str]]]:
    """Each group of layers that import each other, with a shortest cycle through it (per step, one import)."""
    graph: dict[tuple[str, str], dict[tuple[str, str], Import]] = {}
    for edge in imports(modules):
        for order, source, target, _ in _orders(edge):
            if source != target and not _names_anything(order, edge):
                graph.setdefault((order, source), {}).setdefault((order, target), edge)

    def reach(start: tuple[str, str]) -> set[tuple[str, str]]:
        seen, todo = set(), [start]
        while todo:
            for target in graph.get(todo.pop(), {}):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    reached = {node: reach(node) for node in graph}
    groups = {min(n for n in reached[node] if node in reached.get(n, set())) for node in graph if node in reached[node]}
    cycles = []
    for start in sorted(groups):
        paths: dict[tuple[str, str], list[tuple[str, Import]]] = {start: []}
        queue = [start]
        while not paths[start]:
            node = queue.pop(0)
            for target, edge in sorted(graph.get(node, {}).items()):
                if target not in paths or (target == start and not paths[start]):
                    paths[target] = [*paths[node], (f"{node[0]} layer {node[1]} -> {target[1]}", edge)]
                    queue.append(target)
        members = sorted(layer for order, layer in reached[start] if start in reached.get((order, layer), set()))
        cycles.append((paths[start], members))
    return cycles


def report(found: Iterable[Upward]) -> str:
    lines = [u.describe() for u in sorted(found, key=lambda u: (u.order, u.edge.source, u.edge.line, u.edge.target))]
    return (
        f"{len(lines)} import(s) run upward. A layer may import its own modules and the layers below it "
        f"(bottom to top, generator: {', '.join(GENERATOR_LAYERS)}; runtime: {', '.join(RUNTIME_LAYERS)}). "
        "Move what the lower module needs down into its layer (or below), or have the upper layer pass it in; "
        "an import inside a function or under TYPE_CHECKING counts too.\n" + "\n".join(lines)
    )


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    found = scan(PACKAGE)
    assert {"toolgen.api", "toolgen.core", "toolgen.cli", "toolgen.runtime.wires"} <= set(found), "found no toolgen"
    return found


def test_every_module_has_a_layer(modules: dict[str, Module]) -> None:
    assert unplaced(modules) == [], (
        "module(s) of generator/toolgen in no layer: add the package to GENERATOR_LAYERS or RUNTIME_LAYERS in "
        "tests/architecture/test_layers.py, where it sits among the others"
    )


def test_no_import_runs_upward(modules: dict[str, Module]) -> None:
    found = upward(modules, PACKAGE.parent.parent)
    if found:
        pytest.fail(report(found), pytrace=False)


def test_no_cycle_among_generator_packages_or_runtime_layers(modules: dict[str, Module]) -> None:
    described = []
    for cycle, members in layer_cycles(modules):
        steps = [f"    {step}: {e.source} imports {e.target}: {e.written}" for step, e in cycle]
        others = sorted(set(members) - {step.split(" -> ")[1] for step, _ in cycle})
        described.append(
            "\n".join([*steps, *([f"    (the same knot also holds {', '.join(others)})"] if others else [])])
        )
    if described:
        pytest.fail(
            f"{len(described)} group(s) of layers import each other, each shown by one import per step:\n"
            + "\n\n".join(described),
            pytrace=False,
        )


def _tree(root: Path, files: dict[str, str]) -> dict[str, Module]:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return scan(root / "toolgen")


SYNTHETIC = {
    "toolgen/__init__.py": "from toolgen.cli.main import main\n",  # the lazy table may name anything
    "toolgen/__main__.py": "from toolgen.cli.main import main\n",
    "toolgen/api.py": "import toolgen.codegen.render\n",
    "toolgen/cli/__init__.py": "",
    "toolgen/cli/main.py": "from toolgen import api\nfrom toolgen.core import names\n",
    "toolgen/core/__init__.py": "",
    "toolgen/core/names.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toolgen.ir import model\n",
    "toolgen/codegen/__init__.py": "",
    "toolgen/codegen/render.py": "def f():\n    from ..ir.model import IR\n    from ..policy import lint\n",
    "toolgen/ir/__init__.py": "",
    "toolgen/ir/model.py": "from toolgen.runtime import Export\n",
    "toolgen/policy/__init__.py": "",
    "toolgen/policy/lint.py": "",
    "toolgen/runtime/__init__.py": "from .surface import HOMES\nfrom .demo import handlers\n",
    "toolgen/runtime/surface.py": "",
    "toolgen/runtime/extras.py": "",
    "toolgen/runtime/models/__init__.py": "",
    "toolgen/runtime/models/base.py": "from ..extras import missing\nfrom ..streams.state import S\n",
    "toolgen/runtime/streams/__init__.py": "",
    "toolgen/runtime/streams/state.py": "from ..models.base import B\nfrom ..wires.anthropic.stream import A\n",
    "toolgen/runtime/wires/__init__.py": "",
    "toolgen/runtime/wires/anthropic/__init__.py": "from .codec import decode\n",
    "toolgen/runtime/wires/anthropic/codec.py": "from ...schema import plain\nfrom .stream import A\n",
    "toolgen/runtime/wires/anthropic/stream.py": "from ...models.base import B\nfrom .codec import decode\n",
    "toolgen/runtime/schema/__init__.py": "from toolgen.core import names\n",
    "toolgen/runtime/demo/__init__.py": "",
    "toolgen/runtime/demo/handlers.py": "from .. import models\n",
}


def test_the_checker_reports_exactly_the_upward_imports(tmp_path: Path) -> None:
    modules = _tree(tmp_path, SYNTHETIC)
    assert unplaced(modules) == []
    found = upward(modules, tmp_path)
    assert sorted((u.order, u.edge.source, u.edge.target, u.source_layer, u.target_layer) for u in found) == [
        ("generator", "toolgen.codegen.render", "toolgen.policy.lint", "codegen", "policy"),  # inside a function
        ("generator", "toolgen.core.names", "toolgen.ir.model", "core", "ir"),  # under TYPE_CHECKING
        ("generator", "toolgen.runtime.schema", "toolgen.core.names", "runtime", "core"),
        ("runtime", "toolgen.runtime.models.base", "toolgen.runtime.streams.state", "models", "streams"),
        # wires/<wire>/stream*.py is in the streams layer: the wire's codec may not import it
        (
            "runtime",
            "toolgen.runtime.wires.anthropic.codec",
            "toolgen.runtime.wires.anthropic.stream",
            "wires",
            "streams",
        ),
    ]
    assert (
        "    toolgen.core.names (generator layer core) imports toolgen.ir.model (generator layer ir) "
        "at toolgen/core/names.py:3: from toolgen.ir import model\n"
    ) in report(found) + "\n"
    assert [([step for step, _ in cycle], members) for cycle, members in layer_cycles(modules)] == [
        (
            ["generator layer core -> ir", "generator layer ir -> runtime", "generator layer runtime -> core"],
            ["core", "ir", "runtime"],
        ),
        (["runtime layer models -> streams", "runtime layer streams -> models"], ["models", "streams", "wires"]),
    ]
    more = _tree(tmp_path, {"toolgen/runtime/newlayer/x.py": "", "toolgen/tools.py": ""})
    assert unplaced(more) == [
        "toolgen.runtime.newlayer.x (runtime layer 'newlayer')",
        "toolgen.tools (generator layer 'tools')",
    ]


def test_an_upward_import_added_to_the_real_package_fails_naming_both_modules(tmp_path: Path) -> None:
    copy = tmp_path / "generator" / "toolgen"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before = upward(scan(copy), tmp_path)
    with (copy / "core" / "diagnostics.py").open("a", encoding="utf-8") as file:
        file.write("from toolgen.cli import main\n")
    after = upward(scan(copy), tmp_path)
    (added,) = set(after) - set(before)
    assert (added.edge.source, added.edge.target, added.source_layer, added.target_layer) == (
        "toolgen.core.diagnostics",
        "toolgen.cli.main",
        "core",
        "cli",
    )
    message = report(after)
    assert "toolgen.core.diagnostics (generator layer core) imports toolgen.cli.main (generator layer cli)" in message
    assert "at generator/toolgen/core/diagnostics.py:" in message
