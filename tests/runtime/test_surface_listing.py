"""The runtime's surface is listed once, in surface.py: __all__ and the homes come from it, and the imports for type
checkers in runtime/__init__.py repeat it exactly, each name from the module the table says."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections import Counter

import toolgen.runtime as runtime
from toolgen.codegen.targets.package import RUNTIME_DIR
from toolgen.runtime.surface import HOMES, SURFACE


def _type_checking_imports() -> list[tuple[str, str, str | None]]:
    """(module, name, alias) of every import under `if TYPE_CHECKING:` in runtime/__init__.py."""
    tree = ast.parse((RUNTIME_DIR / "__init__.py").read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.level == 1, ast.unparse(statement)
                found.extend((f".{statement.module}", alias.name, alias.asname) for alias in statement.names)
    return found


def test_the_type_checking_imports_are_the_table() -> None:
    imported = _type_checking_imports()
    # `X as X`: an explicit re-export, which mypy --strict needs where __all__ is not a literal.
    assert [(module, name) for module, name, alias in imported if alias != name] == []
    assert sorted((module, name) for module, name, _ in imported) == sorted(
        (module, name) for module, names in SURFACE.items() for name in names
    )


def test_every_name_is_listed_once_and_lives_where_the_table_says() -> None:
    repeated = [name for name, count in Counter(n for names in SURFACE.values() for n in names).items() if count > 1]
    assert repeated == []
    assert tuple(runtime.__all__) == tuple(HOMES) and set(HOMES) == {n for names in SURFACE.values() for n in names}
    for module, names in SURFACE.items():
        loaded = importlib.import_module(module, "toolgen.runtime")
        for name in names:
            assert hasattr(loaded, name), f"{name} is not in {module}"
            assert getattr(runtime, name) is getattr(loaded, name), name


def test_importing_the_package_imports_only_its_table() -> None:
    probe = "import sys, toolgen.runtime\nprint(sorted(m for m in sys.modules if m.startswith('toolgen.runtime.')))\n"
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "['toolgen.runtime.surface']"
