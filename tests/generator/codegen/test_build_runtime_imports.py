"""The runtime modules a build follows from one to another (targets/package.py `_relative_imports`, which picks the
modules a package carries) are exactly the relative imports Python's own parser finds, in every runtime module."""

from __future__ import annotations

import ast

from toolgen.codegen.targets.package import RUNTIME_DIR, _relative_imports


def _parsed(name: str, source: str) -> set[str]:
    """The runtime files `name` imports with relative imports, at any depth, as ast finds them."""
    package = name.split("/")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            parts = [*package[: len(package) - node.level + 1], *(node.module.split(".") if node.module else [])]
            found.add("/".join(parts) + ".py")
            found.update("/".join([*parts, alias.name]) + ".py" for alias in node.names)
    return found


def test_every_runtime_module_s_relative_imports_are_what_the_parser_finds() -> None:
    sources = {
        path.relative_to(RUNTIME_DIR).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(RUNTIME_DIR.rglob("*.py"))
        if "__pycache__" not in path.parts
    }
    assert len(sources) > 100
    differ = {name: _relative_imports(name, text) ^ _parsed(name, text) for name, text in sources.items()}
    assert {name: found for name, found in differ.items() if found} == {}


def test_imports_in_functions_in_parentheses_with_aliases_and_comments_are_found() -> None:
    source = (
        "from __future__ import annotations\n"
        "import json\n"
        "from .base import (\n    One,  # the first\n    Two as Second,\n)\n"
        "from ..wires import openai\n"
        "def late() -> None:\n    from . import streams, tools as t\n"
        "class Holder:\n    def method(self) -> None:\n        from .deep.module import Name\n"
    )
    name = "clients/http.py"
    assert _relative_imports(name, source) == _parsed(name, source)
    assert {"clients/base/One.py", "wires/openai.py", "clients/streams.py", "clients/deep/module.py"} <= (
        _relative_imports(name, source)
    )
